/* int8 convolution as an indirect GEMM of libpterun_compute
 * (pterun_compute_qs8_conv2d_nhwc): over a few hundred random geometries
 * (1 to 64 channels, one or two groups, filters 1x1 to 5x5 and non-square,
 * strides 1 to 3, dilation 1 to 2, output channels on and off every tile
 * width, every output type) each microkernel this CPU runs either takes the
 * call and gives the bits of pterun_compute_qs8_gemm over the same im2col
 * rows (and, with a float output of scale 1, the exact integer sums of a
 * direct reference), or declines it (-1) exactly where the contract says:
 * no indirect entry, a tap's channels not whole groups of 4; the same bits
 * into a C whose rows have room between them and into a column-major C
 * (NCHW); weights packed
 * with each tap's channels padded to 4 (zero weights, the image read past
 * them) run a tap at a time. The pool gives
 * the calling thread's bits; refused arguments. ctest runs it again with
 * PTERUN_ISA_MASK=0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_rand.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;
static pt_rand g_rand = {4242u};
static pterun_threadpool* g_pool;

static int64_t pick(int64_t lo, int64_t hi) { /* lo..hi inclusive */
  return lo + (int64_t)(pt_rand_u24(&g_rand) % (uint32_t)(hi - lo + 1));
}

static void* aligned_buf(size_t n) {
  void* p = NULL;
  if (posix_memalign(&p, 64, n < 64 ? 64 : n) != 0) return NULL;
  return p;
}

/* The im2col rows of a geometry, read from its padded image (the reference
 * GEMM's A): c_pad values per tap, the zero point past group_c. */
typedef struct rows_src {
  const pterun_compute_qs8_conv2d_nhwc_args* g;
  int64_t c_pad;
  uint8_t zp;
} rows_src;

static void im2col(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc, uint8_t* dst) {
  const rows_src* rs = (const rows_src*)ctx;
  const pterun_compute_qs8_conv2d_nhwc_args* g = rs->g;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t y = (i0 + r) / g->out_w, x = (i0 + r) % g->out_w;
    for (int64_t k = k0; k < k0 + kc; ++k) {
      const int64_t tap = k / rs->c_pad, c = k % rs->c_pad;
      if (c >= g->group_c) {
        dst[r * kc + (k - k0)] = rs->zp;
        continue;
      }
      const int64_t iy = y * g->stride_h + (tap / g->kernel_w) * g->dilation_h;
      const int64_t ix = x * g->stride_w + (tap % g->kernel_w) * g->dilation_w;
      dst[r * kc + (k - k0)] = g->image[(iy * g->w + ix) * g->c + g->c0 + c];
    }
  }
}

typedef struct case_ {
  pterun_compute_qs8_conv2d_nhwc_args g;
  int64_t n, c_pad; /* c_pad: channels per tap the weight is packed with */
  int32_t a_zp;
  int out_dtype, exact; /* exact: F32 output of the raw sums */
  uint8_t* image;
  int8_t* w; /* [n][group_c][kh][kw] */
  float *scale, *bias;
} case_;

static void random_case(case_* t) {
  pterun_compute_qs8_conv2d_nhwc_args* g = &t->g;
  memset(t, 0, sizeof *t);
  const int64_t groups = pick(1, 4) == 1 ? 2 : 1;
  static const int64_t kC[] = {1, 2, 3, 4, 8, 12, 16, 20, 32, 36, 64};
  g->group_c = kC[pick(0, (int64_t)(sizeof kC / sizeof kC[0]) - 1)];
  g->c = g->group_c * groups;
  g->c0 = groups > 1 ? g->group_c * pick(0, groups - 1) : 0;
  g->kernel_h = pick(1, 5), g->kernel_w = pick(1, 5);
  g->stride_h = pick(1, 3), g->stride_w = pick(1, 3);
  g->dilation_h = pick(1, 2), g->dilation_w = pick(1, 4) == 1 ? 2 : 1;
  const int64_t eh = (g->kernel_h - 1) * g->dilation_h + 1,
                ew = (g->kernel_w - 1) * g->dilation_w + 1;
  g->h = eh + pick(0, 10), g->w = ew + pick(0, 10); /* padded sizes: at least one window */
  g->out_h = (g->h - eh) / g->stride_h + 1, g->out_w = (g->w - ew) / g->stride_w + 1;
  t->n = pick(1, 80);
  g->dtype = pick(0, 1) ? PTERUN_DTYPE_I8 : PTERUN_DTYPE_U8;
  t->a_zp = (int32_t)(g->dtype == PTERUN_DTYPE_I8 ? pick(-128, 127) : pick(0, 255));
  t->exact = pick(0, 2) == 0;
  t->out_dtype = t->exact ? PTERUN_DTYPE_F32
                          : (int[]){PTERUN_DTYPE_U8, PTERUN_DTYPE_I8, PTERUN_DTYPE_F32}[pick(0, 2)];
  const int64_t k = g->kernel_h * g->kernel_w * g->group_c;
  t->c_pad = pick(0, 1) ? (g->group_c + 3) / 4 * 4 : g->group_c;
  /* + 3: what a tap padded to 4 channels reads past the end */
  t->image = aligned_buf((size_t)(g->h * g->w * g->c) + 3);
  t->w = aligned_buf((size_t)(t->n * k));
  t->scale = aligned_buf(sizeof(float) * (size_t)t->n);
  t->bias = aligned_buf(sizeof(float) * (size_t)t->n);
  for (int64_t i = 0; i < g->h * g->w * g->c + 3; ++i) t->image[i] = (uint8_t)pick(0, 255);
  for (int64_t i = 0; i < t->n * k; ++i) t->w[i] = (int8_t)pick(-128, 127);
  for (int64_t i = 0; i < t->n; ++i) {
    t->scale[i] = t->exact ? 1.0f : (float)pick(1, 1000) * 1e-5f;
    t->bias[i] = t->exact ? 0.0f : (float)pick(-1000, 1000) * 1e-3f;
  }
  g->image = t->image;
}

static void free_case(case_* t) {
  free(t->image);
  free(t->w);
  free(t->scale);
  free(t->bias);
}

static pterun_compute_qs8_epilogue epilogue_of(const case_* t) {
  pterun_compute_qs8_epilogue ep;
  memset(&ep, 0, sizeof ep);
  ep.a_zp = t->a_zp;
  ep.scale = t->scale;
  ep.scale_per_column = 1;
  ep.bias = t->exact ? NULL : t->bias;
  ep.f_min = -INFINITY, ep.f_max = INFINITY;
  ep.out_inv_scale = 0.37f;
  ep.out_zp = 3;
  ep.q_min = t->out_dtype == PTERUN_DTYPE_U8 ? 0 : -128;
  ep.q_max = t->out_dtype == PTERUN_DTYPE_U8 ? 255 : 127;
  return ep;
}

/* Does the contract make the call decline for this kernel? */
static int declines(const case_* t, const pterun_compute_qs8_gemm_ukernel* uk) {
  const pterun_compute_qs8_conv2d_nhwc_args* g = &t->g;
  if (t->c_pad != g->group_c) return uk->fn_ig == NULL; /* padded: a tap at a time */
  const int rows_whole = g->dilation_w == 1 && g->group_c == g->c;
  const int64_t run = rows_whole ? g->kernel_w * g->group_c : g->group_c;
  return uk->fn_ig == NULL || run % 4 != 0;
}

static int run_case(const case_* t, const pterun_compute_qs8_gemm_ukernel* uk, int* took) {
  const pterun_compute_qs8_conv2d_nhwc_args* g = &t->g;
  const int64_t m = g->out_h * g->out_w, k = g->kernel_h * g->kernel_w * t->c_pad;
  const size_t esz = t->out_dtype == PTERUN_DTYPE_F32 ? 4 : 1, bytes = (size_t)(m * t->n) * esz;
  const size_t cap = pterun_compute_qs8_pack_size(uk, t->n, k);
  void* pk = aligned_buf(cap);
  uint8_t *c0 = aligned_buf(bytes), *c1 = aligned_buf(bytes), *c2 = aligned_buf(bytes);
  pterun_compute_qs8_packed w;
  PT_CHECK(pterun_compute_qs8_pack_conv(uk, t->n, g->group_c, t->c_pad, g->kernel_h, g->kernel_w,
                                        t->w, pk, cap, &w) == 0);
  const rows_src rs = {g, t->c_pad, (uint8_t)t->a_zp};
  const pterun_compute_qs8_epilogue ep = epilogue_of(t);
  const pterun_compute_matrix cm0 = {c0, t->out_dtype, t->n, 1}, cm1 = {c1, t->out_dtype, t->n, 1};
  const pterun_compute_matrix cm2 = {c2, t->out_dtype, t->n, 1};
  memset(c0, 0x5a, bytes);
  memset(c1, 0xa5, bytes);
  memset(c2, 0x33, bytes);
  PT_CHECK(pterun_compute_qs8_gemm(NULL, 0, m, NULL, im2col, (void*)&rs, g->dtype, &w, &ep, &cm0) ==
           0);
  const int r = pterun_compute_qs8_conv2d_nhwc(NULL, 0, g, &w, &ep, &cm1);
  *took = r == 0;
  PT_CHECK(r == (declines(t, uk) ? -1 : 0));
  if (r == 0) {
    PT_CHECK(memcmp(c0, c1, bytes) == 0);
    PT_CHECK(pterun_compute_qs8_conv2d_nhwc(g_pool, 0, g, &w, &ep, &cm2) == 0);
    PT_CHECK(memcmp(c1, c2, bytes) == 0);
    /* The other layouts a convolution writes: rows with room between them
     * (a group's channels of a wider output; the bytes between untouched)
     * and column-major (NCHW: the staged path), serial and on the pool. */
    const int64_t rs_wide = t->n + 5;
    const size_t wide = (size_t)(m * rs_wide) * esz;
    uint8_t *cw = aligned_buf(wide), *ct = aligned_buf(bytes);
    const pterun_compute_matrix cmw = {cw, t->out_dtype, rs_wide, 1};
    const pterun_compute_matrix cmt = {ct, t->out_dtype, 1, m};
    for (int pooled = 0; pooled < 2; ++pooled) {
      pterun_threadpool* pool = pooled ? g_pool : NULL;
      memset(cw, 0x77, wide);
      memset(ct, 0x11, bytes);
      PT_CHECK(pterun_compute_qs8_conv2d_nhwc(pool, 0, g, &w, &ep, &cmw) == 0);
      PT_CHECK(pterun_compute_qs8_conv2d_nhwc(pool, 0, g, &w, &ep, &cmt) == 0);
      for (int64_t i = 0; i < m; ++i) {
        PT_CHECK(memcmp(cw + (size_t)(i * rs_wide) * esz, c0 + (size_t)(i * t->n) * esz,
                        (size_t)t->n * esz) == 0);
        for (size_t b = (size_t)t->n * esz; b < (size_t)rs_wide * esz; ++b)
          PT_CHECK(cw[(size_t)(i * rs_wide) * esz + b] == 0x77);
        for (int64_t n = 0; n < t->n; ++n)
          PT_CHECK(memcmp(ct + (size_t)(n * m + i) * esz, c0 + (size_t)(i * t->n + n) * esz, esz) ==
                   0);
      }
    }
    free(cw);
    free(ct);
  } else {
    PT_CHECK(c1[0] == 0xa5 && c1[bytes - 1] == 0xa5); /* nothing written */
  }
  if (t->exact) /* F32 of the exact sums: a direct reference */
    for (int64_t i = 0; i < m; ++i)
      for (int64_t n = 0; n < t->n; ++n) {
        const int64_t y = i / g->out_w, x = i % g->out_w;
        int64_t s = 0;
        for (int64_t ky = 0; ky < g->kernel_h; ++ky)
          for (int64_t kx = 0; kx < g->kernel_w; ++kx)
            for (int64_t c = 0; c < g->group_c; ++c) {
              const int64_t iy = y * g->stride_h + ky * g->dilation_h;
              const int64_t ix = x * g->stride_w + kx * g->dilation_w;
              const uint8_t byte = g->image[(iy * g->w + ix) * g->c + g->c0 + c];
              const int64_t a = g->dtype == PTERUN_DTYPE_I8 ? (int64_t)(int8_t)byte : byte;
              const int64_t wv = t->w[((n * g->group_c + c) * g->kernel_h + ky) * g->kernel_w + kx];
              s += (a - t->a_zp) * wv;
            }
        float got;
        memcpy(&got, c0 + (size_t)(i * t->n + n) * 4, 4);
        PT_CHECK(got == (float)s);
      }
  free(pk);
  free(c0);
  free(c1);
  free(c2);
  return 0;
}

static int test_geometries(void) {
  size_t nuk;
  const pterun_compute_qs8_gemm_ukernel* uks = pterun_compute_qs8_gemm_ukernels(&nuk);
  const uint64_t have = pterun_cpu_features();
  for (size_t u = 0; u < nuk; ++u) {
    if ((uks[u].isa & have) != uks[u].isa) {
      printf("     %s: not run (this CPU lacks its ISA)\n", uks[u].name);
      continue;
    }
    size_t took = 0, declined = 0;
    for (int i = 0; i < 300; ++i) {
      case_ t;
      int tk = 0;
      random_case(&t);
      const int bad = run_case(&t, &uks[u], &tk);
      free_case(&t);
      if (bad) {
        printf("     %s: case %d failed\n", uks[u].name, i);
        return 1;
      }
      took += (size_t)tk;
      declined += (size_t)!tk;
    }
    printf("     %s: %zu geometries run in place, %zu declined\n", uks[u].name, took, declined);
    if (uks[u].fn_ig != NULL) {
      PT_CHECK(took >= 100);
      pt_variant_checked("qs8_igemm", uks[u].name, NULL, 0); /* the GEMM's bits */
    } else {
      PT_CHECK(took == 0);
    }
  }
  return 0;
}

static int test_refused(void) {
  case_ t;
  random_case(&t); /* its buffers replaced by a fixed 3x3 geometry below */
  t.g.group_c = 8, t.g.c = 8, t.g.c0 = 0;
  t.g.kernel_h = t.g.kernel_w = 3, t.g.stride_h = t.g.stride_w = 1;
  t.g.dilation_h = t.g.dilation_w = 1;
  t.g.h = t.g.w = 6, t.g.out_h = t.g.out_w = 4;
  free(t.image);
  free(t.w);
  t.image = aligned_buf(6 * 6 * 8), t.w = aligned_buf((size_t)t.n * 72);
  memset(t.image, 1, 6 * 6 * 8);
  memset(t.w, 1, (size_t)t.n * 72);
  t.g.image = t.image;
  t.g.dtype = PTERUN_DTYPE_U8;
  t.a_zp = 9;
  const pterun_compute_qs8_gemm_ukernel* uk = pterun_compute_qs8_gemm_select(pterun_cpu_features());
  const size_t cap = pterun_compute_qs8_pack_size(uk, t.n, 72);
  void* pk = aligned_buf(cap);
  float out[16 * 80];
  const pterun_compute_matrix cm = {out, PTERUN_DTYPE_F32, t.n, 1};
  pterun_compute_qs8_packed w;
  PT_CHECK(pterun_compute_qs8_pack_conv(uk, t.n, 8, 8, 3, 3, t.w, pk, cap, &w) == 0);
  PT_CHECK(pterun_compute_qs8_pack_conv(uk, t.n, 8, 7, 3, 3, t.w, pk, cap, &w) ==
           -1); /* c_pad < c */
  PT_CHECK(pterun_compute_qs8_pack_conv(uk, t.n, 8, 8, 3, 3, t.w, pk, cap, &w) == 0);
  t.exact = 1, t.out_dtype = PTERUN_DTYPE_F32;
  pterun_compute_qs8_epilogue ep = epilogue_of(&t);
  const int ok = uk->fn_ig != NULL ? 0 : -1;
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &t.g, &w, &ep, &cm) == ok);
  pterun_compute_qs8_conv2d_nhwc_args g = t.g;
  g.out_h = 5; /* the last window leaves the image */
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  g = t.g, g.kernel_w = 2; /* K no longer the packed weight's */
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  g = t.g, g.group_c = 6; /* K = 9 x 8 read as 6 channels padded to 8: taken */
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == ok);
  g = t.g, g.group_c = 3; /* 9 x 8 is neither 9 x 3 nor 9 x 4 */
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  g = t.g, g.c0 = 4; /* channels past the image */
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  g = t.g, g.stride_w = 0;
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  g = t.g, g.image = NULL;
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  g = t.g, g.dtype = PTERUN_DTYPE_I16;
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &g, &w, &ep, &cm) == -1);
  const int32_t zp[80] = {1};
  pterun_compute_qs8_epilogue ez = ep;
  ez.w_zp = zp; /* weight zero points need the A row sums: the GEMM's job */
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &t.g, &w, &ez, &cm) == -1);
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, NULL, &w, &ep, &cm) == -1);
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &t.g, NULL, &ep, &cm) == -1);
  PT_CHECK(pterun_compute_qs8_conv2d_nhwc(NULL, 0, &t.g, &w, &ep, NULL) == -1);
  free(pk);
  free_case(&t);
  return 0;
}

int main(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  if (pterun_threadpool_create(&o, &g_pool) != PTERUN_STATUS_OK) return 1;
  PT_RUN(test_geometries);
  PT_RUN(test_refused);
  pterun_threadpool_destroy(g_pool);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
