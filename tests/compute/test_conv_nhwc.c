/* f32 channels-last convolution as an indirect GEMM of libpterun_compute
 * (pterun_compute_f32_conv2d_nhwc, and with a reused pointer table:
 * pterun_compute_f32_conv2d_nhwc_cached): over a few hundred random geometries
 * (1 to 40 input channels, filters 1x1 to 5x5 and non-square, strides 1 to
 * 3, padding 0 to 2, dilation 1 to 2, batch 1 to 2, output channels on and
 * off every tile width, bias or not, each activation, a per-channel scale or
 * not) every GEMM microkernel's _ig entry this CPU runs matches a double
 * reference within float32 rounding and the portable one within twice that;
 * the dispatched path split over a pool gives the bits of the calling
 * thread; a scaled pack gives the bits of packing the scaled weight; refused
 * geometry. ctest runs it again with PTERUN_ISA_MASK=0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_rand.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;

static pt_rand g_rand = {777u};

static size_t pick(size_t n) {
  return (size_t)(pt_rand_u24(&g_rand) % (uint32_t)n);
}

/* NHWC in and out, OIHW dense weight (already scaled), in double; *mag: the
 * sum of |terms| per output. */
static void reference(const pterun_compute_conv2d* p, const float* in, const float* w,
                      const float* bias, double* out, double* mag) {
  for (size_t b = 0; b < p->batch; ++b)
    for (size_t y = 0; y < p->out_h; ++y)
      for (size_t x = 0; x < p->out_w; ++x)
        for (size_t oc = 0; oc < p->out_c; ++oc) {
          double acc = bias != NULL ? bias[oc] : 0.0, m = fabs(acc);
          for (size_t kh = 0; kh < p->kernel_h; ++kh)
            for (size_t kw = 0; kw < p->kernel_w; ++kw) {
              long ih = (long)(y * p->stride_h + kh * p->dilation_h) - (long)p->pad_top;
              long iw = (long)(x * p->stride_w + kw * p->dilation_w) - (long)p->pad_left;
              if (ih < 0 || iw < 0 || ih >= (long)p->in_h || iw >= (long)p->in_w) continue;
              for (size_t ci = 0; ci < p->in_c; ++ci) {
                double t =
                    (double)in[((b * p->in_h + (size_t)ih) * p->in_w + (size_t)iw) * p->in_c + ci] *
                    w[((oc * p->in_c + ci) * p->kernel_h + kh) * p->kernel_w + kw];
                acc += t;
                m += fabs(t);
              }
            }
          if (p->activation == PTERUN_COMPUTE_ACT_RELU) acc = acc <= 0 ? 0.0 : acc;
          if (p->activation == PTERUN_COMPUTE_ACT_CLAMP) {
            acc = acc < p->lo ? p->lo : acc;
            acc = p->hi < acc ? p->hi : acc;
          }
          size_t i = ((b * p->out_h + y) * p->out_w + x) * p->out_c + oc;
          out[i] = acc;
          mag[i] = m;
        }
}

static size_t out_size(size_t in, size_t pad, size_t k, size_t s, size_t d) {
  size_t eff = d * (k - 1) + 1;
  return in + 2 * pad < eff ? 0 : (in + 2 * pad - eff) / s + 1;
}

/* The cached entry (pterun_compute_f32_conv2d_nhwc_cached) against the
 * uncached result `want` on `in`: built on a first call, reused on later
 * ones (serial and pooled), rebuilt for another input address (a copy with
 * other values: stale rows would read the old image), ignored when too
 * small. The same bits each time. */
static int check_table(const pterun_compute_conv2d* p, const float* in, size_t ni,
                       const pterun_compute_packed* pw, const float* bp, const float* want,
                       pterun_threadpool* pool) {
  const size_t no = p->batch * p->out_c * p->out_h * p->out_w;
  const size_t tb = pterun_compute_f32_conv2d_nhwc_table_size(p, pw);
  PT_CHECK(tb > 0);
  void* tab = aligned_alloc(64, (tb + 63) / 64 * 64);
  float *y = malloc(no * sizeof(float)), *in2 = malloc(ni * sizeof(float)),
        *want2 = malloc(no * sizeof(float));
  PT_CHECK(tab && y && in2 && want2);
  memset(tab, 0, tb);
  for (int round = 0; round < 3; ++round) { /* build, reuse, reuse on the pool */
    memset(y, 0xff, no * sizeof(float));
    PT_CHECK(pterun_compute_f32_conv2d_nhwc_cached(round == 2 ? pool : NULL, 0, p, in, pw, bp, y,
                                                   tab, tb) == 0);
    PT_CHECK(memcmp(y, want, no * sizeof(float)) == 0);
  }
  for (size_t i = 0; i < ni; ++i) in2[i] = in[(i + 1) % ni] * 0.5f - 0.125f;
  PT_CHECK(pterun_compute_f32_conv2d_nhwc(NULL, 0, p, in2, pw, bp, want2) == 0);
  for (int round = 0; round < 2; ++round) { /* another address: rebuilt, then reused */
    memset(y, 0xff, no * sizeof(float));
    PT_CHECK(pterun_compute_f32_conv2d_nhwc_cached(pool, 0, p, in2, pw, bp, y, tab, tb) == 0);
    PT_CHECK(memcmp(y, want2, no * sizeof(float)) == 0);
  }
  memset(y, 0xff, no * sizeof(float)); /* too small: as without a table */
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_cached(NULL, 0, p, in, pw, bp, y, tab, tb - 1) == 0);
  PT_CHECK(memcmp(y, want, no * sizeof(float)) == 0);
  free(tab);
  free(y);
  free(in2);
  free(want2);
  return 0;
}

static int run_case(const pterun_compute_conv2d* p, int with_bias, int scaled,
                    pterun_threadpool* pool) {
  const size_t taps = p->in_c * p->kernel_h * p->kernel_w;
  const size_t ni = p->batch * p->in_c * p->in_h * p->in_w, nw = p->out_c * taps;
  const size_t no = p->batch * p->out_c * p->out_h * p->out_w;
  const int64_t ws[4] = {(int64_t)taps, (int64_t)(p->kernel_h * p->kernel_w), (int64_t)p->kernel_w,
                         1};
  float *in = pt_rand_buf(&g_rand, ni), *w = pt_rand_buf(&g_rand, nw),
        *ws_w = malloc(nw * sizeof(float));
  float *bias = pt_rand_buf(&g_rand, p->out_c), *y0 = malloc(no * sizeof(float));
  float *y = malloc(no * sizeof(float)), *y2 = malloc(no * sizeof(float));
  double *ref = malloc(no * sizeof(double)), *mag = malloc(no * sizeof(double));
  double* scale = malloc(p->out_c * sizeof(double));
  PT_CHECK(in && w && ws_w && bias && y0 && y && y2 && ref && mag && scale);
  for (size_t oc = 0; oc < p->out_c; ++oc)
    scale[oc] = 0.5 + (double)(pt_rand_u24(&g_rand) % 1000) / 700.0;
  /* the weight the scaled pack must equal: each element rounded once */
  for (size_t i = 0; i < nw; ++i) ws_w[i] = scaled ? (float)((double)w[i] * scale[i / taps]) : w[i];
  const float* bp = with_bias ? bias : NULL;
  const double* sp = scaled ? scale : NULL;
  reference(p, in, ws_w, bp, ref, mag);
  const double eps = 2.0 * (double)(taps + 1) * 0x1p-23;
  int have0 = 0;
  for (size_t v = 0; v < 16; ++v) {
    const char* name = pterun_compute_f32_conv2d_nhwc_variant(v);
    if (name == NULL) continue;
    float* dst = have0 ? y : y0;
    memset(dst, 0xff, no * sizeof(float));
    PT_CHECK(pterun_compute_f32_conv2d_nhwc_with(v, p, in, w, ws, sp, bp, dst) == 0);
    for (size_t i = 0; i < no; ++i) {
      PT_CHECK(fabs((double)dst[i] - ref[i]) <= eps * mag[i] + 1e-30);
      if (have0) PT_CHECK(fabs((double)dst[i] - (double)y0[i]) <= 2.0 * eps * mag[i] + 1e-30);
    }
    if (scaled) { /* the scaled pack = the pre-scaled weight, bit for bit */
      memset(y2, 0xff, no * sizeof(float));
      PT_CHECK(pterun_compute_f32_conv2d_nhwc_with(v, p, in, ws_w, ws, NULL, bp, y2) == 0);
      PT_CHECK(memcmp(y2, dst, no * sizeof(float)) == 0);
    }
    pt_variant_checked("f32_igemm", name, dst, no * sizeof(float));
    have0 = 1;
  }
  PT_CHECK(have0);
  /* The dispatched path: within the bound, the same bits on the pool and
   * on the calling thread. */
  const size_t bytes = pterun_compute_f32_conv2d_nhwc_pack_size(p);
  void* mem = bytes ? aligned_alloc(64, (bytes + 63) / 64 * 64) : NULL;
  PT_CHECK(mem != NULL);
  const pterun_compute_packed* pw = pterun_compute_f32_conv2d_nhwc_pack(mem, bytes, p, w, ws, sp);
  PT_CHECK(pw != NULL);
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_conv2d_nhwc(NULL, 0, p, in, pw, bp, y) == 0);
  for (size_t i = 0; i < no; ++i) PT_CHECK(fabs((double)y[i] - ref[i]) <= eps * mag[i] + 1e-30);
  memset(y2, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_conv2d_nhwc(pool, 0, p, in, pw, bp, y2) == 0);
  PT_CHECK(memcmp(y, y2, no * sizeof(float)) == 0);
  PT_CHECK(check_table(p, in, ni, pw, bp, y, pool) == 0);
  free(mem);
  free(in);
  free(w);
  free(ws_w);
  free(bias);
  free(y0);
  free(y);
  free(y2);
  free(ref);
  free(mag);
  free(scale);
  return 0;
}

static int test_geometries(pterun_threadpool* pool) {
  static const size_t kernels[][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 3}, {3, 1}, {5, 5}, {3, 2}};
  static const size_t cins[] = {1, 2, 3, 4, 8, 16, 17, 33, 40};
  static const size_t couts[] = {1, 3, 7, 8, 15, 16, 17, 24, 32, 33, 40, 64, 70};
  size_t cases = 0;
  while (cases < 300) {
    pterun_compute_conv2d p;
    memset(&p, 0, sizeof p);
    const size_t* k = kernels[pick(sizeof kernels / sizeof kernels[0])];
    p.batch = 1 + pick(2);
    p.in_c = cins[pick(sizeof cins / sizeof cins[0])];
    p.out_c = couts[pick(sizeof couts / sizeof couts[0])];
    p.in_h = 1 + pick(12);
    p.in_w = 1 + pick(14);
    p.kernel_h = k[0];
    p.kernel_w = k[1];
    p.stride_h = 1 + pick(3);
    p.stride_w = pick(3) == 0 ? p.stride_h : 1 + pick(3);
    p.dilation_h = 1 + pick(4) / 3;
    p.dilation_w = 1 + pick(4) / 3;
    p.pad_top = pick(3);
    p.pad_left = pick(3);
    p.out_h = out_size(p.in_h, p.pad_top, p.kernel_h, p.stride_h, p.dilation_h);
    p.out_w = out_size(p.in_w, p.pad_left, p.kernel_w, p.stride_w, p.dilation_w);
    if (p.out_h == 0 || p.out_w == 0) continue;
    p.activation = (int)pick(3); /* NONE, RELU, CLAMP */
    p.lo = -0.25f;
    p.hi = 0.5f;
    if (run_case(&p, (int)pick(2), (int)pick(2), pool) != 0) return 1;
    ++cases;
  }
  /* one bigger layer: many tiles per thread, the batch crossing a tile */
  pterun_compute_conv2d big = {
      2, 16, 17, 19, 40, 17, 19, 3, 3, 1, 1, 1, 1, 1, 1, PTERUN_COMPUTE_ACT_RELU, 0.0f, 0.0f};
  return run_case(&big, 1, 1, pool);
}

static int test_refused(void) {
  pterun_compute_conv2d p = {
      1, 4, 9, 9, 8, 1, 1, 9, 9, 1, 1, 1, 1, 0, 0, PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f};
  /* 81 taps: more than the pointer table holds */
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_pack_size(&p) == 0);
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_variant(0) != NULL);
  float buf[64] = {0};
  const int64_t ws[4] = {1, 1, 1, 1};
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_with(0, &p, buf, buf, ws, NULL, NULL, buf) == -1);
  p.kernel_h = p.kernel_w = 1;
  p.stride_h = 0; /* a zero stride */
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_pack_size(&p) == 0);
  p.stride_h = 1;
  p.activation = 99;
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_pack_size(&p) == 0);
  p.activation = PTERUN_COMPUTE_ACT_NONE;
  p.out_h = p.out_w = 9;
  const size_t bytes = pterun_compute_f32_conv2d_nhwc_pack_size(&p);
  PT_CHECK(bytes != 0);
  void* mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
  PT_CHECK(mem != NULL);
  const pterun_compute_packed* pw =
      pterun_compute_f32_conv2d_nhwc_pack(mem, bytes, &p, buf, ws, NULL);
  PT_CHECK(pw != NULL);
  /* a filter packed for another geometry, and a buffer too small */
  p.in_c = 5;
  float* in = calloc(2000, sizeof(float));
  PT_CHECK(in != NULL);
  PT_CHECK(pterun_compute_f32_conv2d_nhwc(NULL, 0, &p, in, pw, NULL, in) == -1);
  p.in_c = 4;
  PT_CHECK(pterun_compute_f32_conv2d_nhwc_pack(mem, bytes - 1, &p, buf, ws, NULL) == NULL);
  free(in);
  free(mem);
  return 0;
}

/* A table built for one geometry, then given a call on another with the
 * same input address and room enough (a dynamic shape's smaller size; other
 * padding): rebuilt, the same bits as without a table. */
static int test_table_geometry(void) {
  pterun_compute_conv2d p = {
      1, 16, 10, 10, 24, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f};
  const size_t nw = 24 * 16 * 9, ni = 10 * 10 * 16, no = 10 * 10 * 24;
  const int64_t ws[4] = {16 * 9, 9, 3, 1};
  float *w = pt_rand_buf(&g_rand, nw), *in = pt_rand_buf(&g_rand, ni);
  float *y = malloc(no * sizeof(float)), *want = malloc(no * sizeof(float));
  const size_t bytes = pterun_compute_f32_conv2d_nhwc_pack_size(&p);
  void* mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
  PT_CHECK(w && in && y && want && mem);
  const pterun_compute_packed* pw =
      pterun_compute_f32_conv2d_nhwc_pack(mem, bytes, &p, w, ws, NULL);
  PT_CHECK(pw != NULL);
  const size_t tb = pterun_compute_f32_conv2d_nhwc_table_size(&p, pw);
  void* tab = tb ? aligned_alloc(64, (tb + 63) / 64 * 64) : NULL;
  PT_CHECK(tab != NULL);
  memset(tab, 0, tb);
  static const size_t shapes[][3] = {{10, 10, 1}, {8, 10, 1}, {10, 8, 1},
                                     {8, 10, 0},  {10, 7, 1}, {10, 10, 1}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    p.in_h = shapes[s][0];
    p.in_w = shapes[s][1];
    p.pad_top = p.pad_left = shapes[s][2];
    p.out_h = out_size(p.in_h, p.pad_top, 3, 1, 1);
    p.out_w = out_size(p.in_w, p.pad_left, 3, 1, 1);
    PT_CHECK(pterun_compute_f32_conv2d_nhwc_table_size(&p, pw) <= tb);
    const size_t n = p.out_h * p.out_w * 24;
    PT_CHECK(pterun_compute_f32_conv2d_nhwc(NULL, 0, &p, in, pw, NULL, want) == 0);
    memset(y, 0xff, n * sizeof(float));
    PT_CHECK(pterun_compute_f32_conv2d_nhwc_cached(NULL, 0, &p, in, pw, NULL, y, tab, tb) == 0);
    PT_CHECK(memcmp(y, want, n * sizeof(float)) == 0);
  }
  free(tab);
  free(mem);
  free(w);
  free(in);
  free(y);
  free(want);
  return 0;
}

static pterun_threadpool* g_pool;

static int test_all_geometries(void) {
  return test_geometries(g_pool);
}

int main(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  if (pterun_threadpool_create(&o, &g_pool) != PTERUN_STATUS_OK) return 1;
  PT_RUN(test_all_geometries);
  PT_RUN(test_refused);
  PT_RUN(test_table_geometry);
  pterun_threadpool_destroy(g_pool);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
