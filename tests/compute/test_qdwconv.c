/* int8 depthwise convolution of libpterun_compute
 * (pterun_compute_qs8_dwconv2d_nchw) against the int8 GEMM it replaces in
 * the quantized convolution kernel: per group, pterun_compute_qs8_gemm over
 * zero-point-padded im2col rows, which test_qgemm checks against an exact
 * reference. Same bits for every geometry (strides 1-3, dilation, padding
 * wider than the kernel, channel multipliers, rows wider than the kernel's
 * column tile, rows too wide for the staged loop), input and output dtype,
 * weight zero points, with and without a pool, and every staged variant
 * this CPU runs; argument checks. ctest runs it again with
 * PTERUN_ISA_MASK=0 (the GEMM's scalar microkernel as the reference, the
 * baseline variant). pterun_compute_qs8_dwconv2d_nhwc on the same cases in
 * NHWC gives the same bytes in every variant, and with an int32 bias (its
 * XNNPACK form) a scalar reference's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;
static uint64_t g_rng = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 11);
}

typedef struct geo {
  size_t batch, c, mult, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
} geo;

/* The im2col rows of one input channel, K in (ky, kx) order, padding = zp. */
typedef struct rows_ctx {
  const uint8_t* x; /* the channel's plane */
  const geo* g;
  size_t ow;
  uint8_t zp;
} rows_ctx;

static void im2col(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc, uint8_t* dst) {
  const rows_ctx* r = (const rows_ctx*)ctx;
  const geo* g = r->g;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < kc; ++k) {
      const int64_t oy = (i0 + i) / (int64_t)r->ow, ox = (i0 + i) % (int64_t)r->ow;
      const int64_t ky = (k0 + k) / (int64_t)g->kw, kx = (k0 + k) % (int64_t)g->kw;
      const int64_t iy = oy * (int64_t)g->sh + ky * (int64_t)g->dh - (int64_t)g->ph;
      const int64_t ix = ox * (int64_t)g->sw + kx * (int64_t)g->dw - (int64_t)g->pw;
      dst[i * kc + k] = iy >= 0 && iy < (int64_t)g->h && ix >= 0 && ix < (int64_t)g->w
                            ? r->x[iy * (int64_t)g->w + ix]
                            : r->zp;
    }
}

/* The requantisation pterun_compute_qs8_dwconv2d_nhwc documents (the int8
 * engine's: round half to even below 2^22, NaN to q_min), for the int32 bias
 * check below. */
static int32_t ref_requant(float y, const pterun_compute_qs8_epilogue* ep) {
  float p = y * ep->out_inv_scale;
  p = p < -4194304.0f ? -4194304.0f : p > 4194304.0f ? 4194304.0f : p;
  float t = (float)ep->out_zp + ((p + 12582912.0f) - 12582912.0f);
  t = t > (float)ep->q_min ? t : (float)ep->q_min;
  t = t < (float)ep->q_max ? t : (float)ep->q_max;
  return (int32_t)t;
}

/* The same case through pterun_compute_qs8_dwconv2d_nhwc: input and the
 * GEMM's result in NHWC, weights as int16 [tap][channel] minus their zero
 * points, dispatched (serially and on `pool`) and every variant, the bytes of
 * the NCHW reference; then with an int32 bias against a scalar sum. */
static int run_nhwc(const geo* g, int in_dt, int out_dt, const uint8_t* x, const int8_t* w,
                    const int32_t* wzp, int w_zps, const pterun_compute_qs8_epilogue* ep0,
                    const pterun_compute_dwconv2d* p, const unsigned char* want_nchw,
                    pterun_threadpool* pool) {
  const size_t oc = p->out_c, taps = g->kh * g->kw, hw = g->h * g->w, ohw = p->out_h * p->out_w;
  const size_t in_n = g->batch * g->c * hw, out_n = g->batch * oc * ohw;
  const size_t esz = out_dt == PTERUN_DTYPE_F32 ? 4 : 1;
  if (taps > 64) return 0; /* beyond the NHWC loop's filter */
  uint8_t* xn = malloc(in_n + 1);
  int16_t* wn = malloc(sizeof(int16_t) * (taps * oc + 1));
  int32_t* ib = malloc(sizeof(int32_t) * (oc + 1));
  unsigned char* want = malloc(out_n * esz + 1);
  unsigned char* got = malloc(out_n * esz + 1);
  PT_CHECK(xn && wn && ib && want && got);
  for (size_t b = 0; b < g->batch; ++b)
    for (size_t c = 0; c < g->c; ++c)
      for (size_t i = 0; i < hw; ++i) xn[(b * hw + i) * g->c + c] = x[(b * g->c + c) * hw + i];
  for (size_t c = 0; c < oc; ++c)
    for (size_t t = 0; t < taps; ++t)
      wn[t * oc + c] = (int16_t)((int32_t)w[c * taps + t] - (w_zps ? wzp[c] : 0));
  for (size_t b = 0; b < g->batch; ++b)
    for (size_t c = 0; c < oc; ++c)
      for (size_t i = 0; i < ohw; ++i)
        memcpy(want + ((b * ohw + i) * oc + c) * esz, want_nchw + ((b * oc + c) * ohw + i) * esz,
               esz);
  pterun_compute_qs8_epilogue ep = *ep0;
  ep.w_zp = NULL;
  memset(got, 0xA5, out_n * esz + 1);
  PT_CHECK(pterun_compute_qs8_dwconv2d_nhwc(NULL, 0, p, xn, in_dt, wn, NULL, &ep, got, out_dt) ==
           0);
  PT_CHECK(memcmp(got, want, out_n * esz) == 0 && got[out_n * esz] == 0xA5);
  memset(got, 0xA5, out_n * esz + 1);
  PT_CHECK(pterun_compute_qs8_dwconv2d_nhwc(pool, 0, p, xn, in_dt, wn, NULL, &ep, got, out_dt) ==
           0);
  PT_CHECK(memcmp(got, want, out_n * esz) == 0 && got[out_n * esz] == 0xA5);
  for (size_t v = 0; v < 8; ++v) {
    const char* name = pterun_compute_qs8_dwconv2d_variant(v);
    if (name == NULL) continue;
    memset(got, 0xA5, out_n * esz + 1);
    PT_CHECK(pterun_compute_qs8_dwconv2d_nhwc_with(v, p, xn, in_dt, wn, NULL, &ep, got, out_dt) ==
             0);
    if (memcmp(got, want, out_n * esz) != 0) {
      fprintf(stderr, "qdwconv_nhwc %s: c=%zu m=%zu %zux%zu k=%zux%zu differs\n", name, g->c,
              g->mult, g->h, g->w, g->kh, g->kw);
      return 1;
    }
    pt_variant_checked("qdwconv_nhwc", name, NULL, 0);
  }
  /* int32 bias (XNNPACK's form), a quantized output: a scalar reference */
  if (out_dt != PTERUN_DTYPE_F32) {
    for (size_t c = 0; c < oc; ++c) ib[c] = (int32_t)(rnd() % 200001) - 100000;
    ep.bias = NULL;
    for (size_t b = 0; b < g->batch; ++b)
      for (size_t oy = 0; oy < p->out_h; ++oy)
        for (size_t ox = 0; ox < p->out_w; ++ox)
          for (size_t c = 0; c < oc; ++c) {
            int32_t acc = ib[c];
            for (size_t t = 0; t < taps; ++t) {
              const int64_t iy = (int64_t)(oy * g->sh + (t / g->kw) * g->dh) - (int64_t)g->ph;
              const int64_t ix = (int64_t)(ox * g->sw + (t % g->kw) * g->dw) - (int64_t)g->pw;
              if (iy < 0 || iy >= (int64_t)g->h || ix < 0 || ix >= (int64_t)g->w) continue;
              const uint8_t raw =
                  xn[((b * g->h + (size_t)iy) * g->w + (size_t)ix) * g->c + c / g->mult];
              const int32_t v = in_dt == PTERUN_DTYPE_I8 ? (int32_t)(int8_t)raw : (int32_t)raw;
              acc += (v - ep.a_zp) * wn[t * oc + c];
            }
            const int32_t q = ref_requant((float)acc * ep.scale[c], &ep);
            want[((b * p->out_h + oy) * p->out_w + ox) * oc + c] = (unsigned char)(q & 0xff);
          }
    for (size_t v = 0; v < 8; ++v) {
      const char* name = pterun_compute_qs8_dwconv2d_variant(v);
      if (name == NULL) continue;
      memset(got, 0xA5, out_n + 1);
      PT_CHECK(pterun_compute_qs8_dwconv2d_nhwc_with(v, p, xn, in_dt, wn, ib, &ep, got, out_dt) ==
               0);
      PT_CHECK(memcmp(got, want, out_n) == 0 && got[out_n] == 0xA5);
    }
  }
  free(xn), free(wn), free(ib), free(want), free(got);
  return 0;
}

/* One geometry, dtypes and zero points: the depthwise call (serially and on
 * `pool`) against the per-group GEMM. */
static int run_case(const geo* g, int in_dt, int out_dt, int w_zps, int bias,
                    pterun_threadpool* pool) {
  const size_t oc = g->c * g->mult, taps = g->kh * g->kw;
  const size_t eh = g->dh * (g->kh - 1) + 1, ew = g->dw * (g->kw - 1) + 1;
  const size_t oh = g->h + 2 * g->ph >= eh ? (g->h + 2 * g->ph - eh) / g->sh + 1 : 0;
  const size_t ow = g->w + 2 * g->pw >= ew ? (g->w + 2 * g->pw - ew) / g->sw + 1 : 0;
  const size_t in_n = g->batch * g->c * g->h * g->w, out_n = g->batch * oc * oh * ow;
  const size_t esz = out_dt == PTERUN_DTYPE_F32 ? 4 : 1;
  const pterun_compute_qs8_gemm_ukernel* uk = pterun_compute_qs8_gemm_select(pterun_cpu_features());
  uint8_t* x = malloc(in_n + 1);
  int8_t* w = malloc(oc * taps);
  int32_t* wzp = malloc(sizeof(int32_t) * oc);
  float* scale = malloc(sizeof(float) * oc);
  float* bi = malloc(sizeof(float) * oc);
  unsigned char* want = malloc(out_n * esz + 1);
  unsigned char* got = malloc(out_n * esz + 1);
  unsigned char* got_pool = malloc(out_n * esz + 1);
  size_t cap = pterun_compute_qs8_pack_size(uk, (int64_t)g->mult, (int64_t)taps);
  void* pk_buf = NULL;
  PT_CHECK(x && w && wzp && scale && bi && want && got && got_pool && cap > 0);
  PT_CHECK(posix_memalign(&pk_buf, 64, cap) == 0);
  for (size_t i = 0; i < in_n; ++i) x[i] = (uint8_t)rnd();
  for (size_t i = 0; i < oc * taps; ++i) w[i] = (int8_t)(rnd() & 0xff);
  if (oc * taps > 0) w[0] = -128; /* the ends of the range */
  for (size_t c = 0; c < oc; ++c) {
    wzp[c] = w_zps ? (int32_t)(rnd() % 256) - 128 : 0;
    scale[c] = (float)(rnd() % 1000 + 1) * 1e-5f;
    bi[c] = ((float)(rnd() % 2001) - 1000.0f) * 0.01f;
  }
  pterun_compute_qs8_epilogue ep;
  memset(&ep, 0, sizeof ep);
  ep.a_zp = in_dt == PTERUN_DTYPE_U8 ? (int32_t)(rnd() % 256) : (int32_t)(rnd() % 256) - 128;
  ep.w_zp = w_zps ? wzp : NULL;
  ep.scale = scale;
  ep.scale_per_column = 1;
  ep.bias = bias ? bi : NULL;
  ep.f_min = -INFINITY, ep.f_max = INFINITY;
  ep.out_inv_scale = 1.0f / 0.05f;
  ep.out_zp = out_dt == PTERUN_DTYPE_U8 ? 100 : -3;
  ep.q_min = out_dt == PTERUN_DTYPE_U8 ? 0 : -128;
  ep.q_max = out_dt == PTERUN_DTYPE_U8 ? 255 : 127;
  if (out_dt == PTERUN_DTYPE_I8) ep.q_min = -20; /* a fused clamp */
  /* the reference: one GEMM per (batch, group), its output columns the
   * group's channels in NCHW (row stride 1, column stride one plane) */
  for (size_t b = 0; b < g->batch; ++b)
    for (size_t c = 0; c < g->c; ++c) {
      pterun_compute_qs8_packed pk;
      pterun_compute_qs8_epilogue eg = ep;
      const size_t c0 = c * g->mult;
      rows_ctx rc = {x + (b * g->c + c) * g->h * g->w, g, ow,
                     (uint8_t)(in_dt == PTERUN_DTYPE_U8 ? ep.a_zp : (ep.a_zp & 0xff))};
      PT_CHECK(pterun_compute_qs8_pack(uk, (int64_t)g->mult, (int64_t)taps, w + c0 * taps,
                                       (int64_t)taps, 1, pk_buf, cap, &pk) == 0);
      eg.scale = scale + c0;
      eg.bias = bias ? bi + c0 : NULL;
      eg.w_zp = w_zps ? wzp + c0 : NULL;
      pterun_compute_matrix cm = {want + (b * oc + c0) * oh * ow * esz, out_dt, 1,
                                  (int64_t)(oh * ow)};
      PT_CHECK(pterun_compute_qs8_gemm(NULL, 0, (int64_t)(oh * ow), NULL, im2col, &rc, in_dt, &pk,
                                       &eg, &cm) == 0);
    }
  pterun_compute_dwconv2d p;
  memset(&p, 0, sizeof p);
  p.batch = g->batch, p.in_c = g->c, p.in_h = g->h, p.in_w = g->w;
  p.out_c = oc, p.out_h = oh, p.out_w = ow;
  p.kernel_h = g->kh, p.kernel_w = g->kw, p.stride_h = g->sh, p.stride_w = g->sw;
  p.dilation_h = g->dh, p.dilation_w = g->dw, p.pad_top = g->ph, p.pad_left = g->pw;
  memset(got, 0xA5, out_n * esz + 1);
  memset(got_pool, 0x5A, out_n * esz + 1);
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, in_dt, w, &ep, got, out_dt) == 0);
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(pool, 0, &p, x, in_dt, w, &ep, got_pool, out_dt) == 0);
  for (size_t i = 0; i < out_n * esz; ++i)
    if (got[i] != want[i] || got_pool[i] != want[i]) {
      fprintf(stderr, "(dispatched) ");
      fprintf(stderr,
              "qdwconv c=%zu m=%zu %zux%zu k=%zux%zu s=%zu,%zu p=%zu,%zu d=%zu,%zu in=%d out=%d "
              "wzp=%d: byte %zu: %u (pool %u), GEMM %u\n",
              g->c, g->mult, g->h, g->w, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw,
              in_dt, out_dt, w_zps, i, got[i], got_pool[i], want[i]);
      return 1;
    }
  PT_CHECK(got[out_n * esz] == 0xA5 && got_pool[out_n * esz] == 0x5A); /* nothing past the end */
  for (size_t v = 0; v < 8; ++v) { /* every built variant (NULL past the last) */
    const char* name = pterun_compute_qs8_dwconv2d_variant(v);
    if (name == NULL) continue;
    memset(got, 0xA5, out_n * esz + 1);
    const int r = pterun_compute_qs8_dwconv2d_nchw_with(v, &p, x, in_dt, w, &ep, got, out_dt);
    if (r != 0) { /* rows too wide for the staging buffer: the direct loop only */
      PT_CHECK(g->w > 1000);
      continue;
    }
    PT_CHECK(memcmp(got, want, out_n * esz) == 0 && got[out_n * esz] == 0xA5);
    pt_variant_checked("qdwconv", name, NULL, 0);
  }
  PT_CHECK(run_nhwc(g, in_dt, out_dt, x, w, wzp, w_zps, &ep, &p, want, pool) == 0);
  free(x), free(w), free(wzp), free(scale), free(bi), free(want), free(got), free(got_pool);
  free(pk_buf);
  return 0;
}

static const geo k_geos[] = {
    /* batch, c, mult, h, w, kh, kw, sh, sw, ph, pw, dh, dw */
    {1, 8, 1, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1},  /* MobileNet's 3x3, stride 1 */
    {1, 5, 1, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1},  /* stride 2, odd sizes */
    {2, 3, 2, 9, 7, 5, 5, 1, 1, 2, 2, 1, 1},    /* batch, channel multiplier */
    {1, 4, 1, 10, 10, 3, 3, 1, 1, 2, 2, 2, 2},  /* dilation */
    {1, 2, 3, 6, 9, 1, 4, 3, 2, 0, 5, 1, 1},    /* padding wider than the kernel */
    {1, 3, 1, 4, 4, 5, 5, 1, 1, 1, 1, 1, 1},    /* kernel larger than the input */
    {1, 2, 1, 3, 300, 3, 3, 1, 1, 1, 1, 1, 1},  /* rows past the column tile */
    {1, 16, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1},   /* 1x1 image */
    {1, 6, 1, 49, 10, 10, 4, 2, 2, 4, 1, 1, 1}, /* keyword-spotting-like */
    {1, 32, 1, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1}, /* enough work to split */
    /* channels in runs of 16 and a tail (the NHWC loop's vectors), a run
     * past its 256-channel chunk, a multiplier of 16, 25 taps */
    {1, 37, 1, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1},
    {1, 300, 1, 3, 4, 3, 3, 1, 1, 1, 1, 1, 1},
    {1, 2, 16, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1},
    {2, 48, 1, 9, 9, 5, 5, 2, 2, 2, 2, 1, 1},
    /* stride-2 rows of 16 phase columns and more (the staging's vector
     * deinterleave, with a tail), padded and not; rows of 16 outputs and
     * more (the 16-lane requantisation, with a tail) */
    {1, 4, 1, 9, 70, 3, 3, 2, 2, 1, 1, 1, 1},
    {1, 3, 2, 7, 97, 3, 3, 2, 2, 0, 0, 1, 1},
    {1, 5, 1, 6, 64, 5, 5, 2, 2, 2, 2, 1, 1},
};

static int test_against_gemm(pterun_threadpool* pool) {
  static const int in_dts[] = {PTERUN_DTYPE_U8, PTERUN_DTYPE_I8};
  static const int out_dts[] = {PTERUN_DTYPE_U8, PTERUN_DTYPE_I8, PTERUN_DTYPE_F32};
  for (size_t i = 0; i < sizeof k_geos / sizeof k_geos[0]; ++i)
    for (size_t a = 0; a < 2; ++a)
      for (size_t o = 0; o < 3; ++o)
        for (int z = 0; z < 2; ++z)
          if (run_case(&k_geos[i], in_dts[a], out_dts[o], z, (int)((i + o) % 2), pool)) return 1;
  return 0;
}

static int test_checks(void) {
  pterun_compute_dwconv2d p;
  pterun_compute_qs8_epilogue ep;
  float sc = 1.0f;
  uint8_t x[4] = {0};
  int8_t w[4] = {0};
  uint8_t out[4];
  int32_t bad_zp[2] = {0, 300};
  memset(&p, 0, sizeof p);
  memset(&ep, 0, sizeof ep);
  ep.scale = &sc;
  p.batch = 1, p.in_c = 2, p.in_h = p.in_w = 1, p.out_c = 2, p.out_h = p.out_w = 1;
  p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_U8) == 0);
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_I16, w, &ep, out,
                                            PTERUN_DTYPE_U8) == -1);
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_I32) == -1);
  ep.a_zp = 256;
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_U8) == -1);
  ep.a_zp = 0;
  ep.w_zp = bad_zp;
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_U8) == -1);
  ep.w_zp = NULL;
  p.out_c = 3; /* not a multiple of in_c */
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_U8) == -1);
  p.out_c = 2, p.stride_w = 0;
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_U8) == -1);
  p.stride_w = 1, p.kernel_h = 200, p.kernel_w = 200; /* taps past the exact int32 range */
  PT_CHECK(pterun_compute_qs8_dwconv2d_nchw(NULL, 0, &p, x, PTERUN_DTYPE_U8, w, &ep, out,
                                            PTERUN_DTYPE_U8) == -1);
  return 0;
}

static int test_serial(void) {
  return test_against_gemm(NULL);
}

static int test_threads(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  pterun_threadpool* pool = NULL;
  int r;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  PT_CHECK(pterun_threadpool_create(&o, &pool) == PTERUN_STATUS_OK);
  r = test_against_gemm(pool);
  pterun_threadpool_destroy(pool);
  return r;
}

int main(void) {
  PT_RUN(test_serial);
  PT_RUN(test_threads);
  PT_RUN(test_checks);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
