/* f32 direct NCHW convolution for few input channels of libpterun_compute
 * (pterun_compute_f32_conv2d_nchw): over a few hundred geometries (1 to 4
 * input channels, filters 1x1 to 7x7 and non-square, strides 1 to 3 apart
 * down and across, padding 0 to 3, dilation, odd sizes, batch 2, output
 * channels off every tile width, bias or not, each activation) every variant
 * this CPU runs matches a double reference within float32 rounding and the
 * portable variant within the same bound (the wide variants fuse their
 * multiply-adds); split over a pool the bits do not change; ReLU's -0 and
 * NaN (kept), and refused geometry. ctest runs it again with PTERUN_ISA_MASK=0. */
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

static pt_rand g_rand = {4242u};

/* In double, the same activation; *mag: sum of |terms| per output (the
 * rounding bound's scale). */
static void reference(const pterun_compute_conv2d* p, const float* in, const float* w,
                      const float* bias, double* out, double* mag) {
  for (size_t b = 0; b < p->batch; ++b)
    for (size_t oc = 0; oc < p->out_c; ++oc)
      for (size_t y = 0; y < p->out_h; ++y)
        for (size_t x = 0; x < p->out_w; ++x) {
          double acc = bias != NULL ? bias[oc] : 0.0, m = fabs(acc);
          for (size_t ci = 0; ci < p->in_c; ++ci)
            for (size_t kh = 0; kh < p->kernel_h; ++kh)
              for (size_t kw = 0; kw < p->kernel_w; ++kw) {
                long ih = (long)(y * p->stride_h + kh * p->dilation_h) - (long)p->pad_top;
                long iw = (long)(x * p->stride_w + kw * p->dilation_w) - (long)p->pad_left;
                if (ih < 0 || iw < 0 || ih >= (long)p->in_h || iw >= (long)p->in_w) continue;
                double t =
                    (double)in[((b * p->in_c + ci) * p->in_h + (size_t)ih) * p->in_w + (size_t)iw] *
                    w[((oc * p->in_c + ci) * p->kernel_h + kh) * p->kernel_w + kw];
                acc += t;
                m += fabs(t);
              }
          if (p->activation == PTERUN_COMPUTE_ACT_RELU) acc = acc <= 0 ? 0.0 : acc;
          if (p->activation == PTERUN_COMPUTE_ACT_CLAMP) {
            acc = acc < p->lo ? p->lo : acc;
            acc = p->hi < acc ? p->hi : acc;
          }
          size_t i = ((b * p->out_c + oc) * p->out_h + y) * p->out_w + x;
          out[i] = acc;
          mag[i] = m;
        }
}

static size_t out_size(size_t in, size_t pad, size_t k, size_t s, size_t d) {
  size_t eff = d * (k - 1) + 1;
  return in + 2 * pad < eff ? 0 : (in + 2 * pad - eff) / s + 1;
}

/* The last variant this CPU runs (what the pool path uses). */
static size_t best_variant(void) {
  size_t best = 0;
  for (size_t v = 1; v < 8; ++v)
    if (pterun_compute_f32_conv2d_variant(v) != NULL) best = v;
  return best;
}

static int run_case(const pterun_compute_conv2d* p, int with_bias, pterun_threadpool* pool) {
  const size_t taps = p->in_c * p->kernel_h * p->kernel_w;
  const size_t ni = p->batch * p->in_c * p->in_h * p->in_w, nw = p->out_c * taps;
  const size_t no = p->batch * p->out_c * p->out_h * p->out_w;
  float *in = pt_rand_buf(&g_rand, ni), *w = pt_rand_buf(&g_rand, nw),
        *bias = pt_rand_buf(&g_rand, p->out_c);
  float *y0 = malloc(no * sizeof(float)), *y = malloc(no * sizeof(float));
  double *ref = malloc(no * sizeof(double)), *mag = malloc(no * sizeof(double));
  PT_CHECK(in && w && bias && y0 && y && ref && mag);
  const float* bp = with_bias ? bias : NULL;
  reference(p, in, w, bp, ref, mag);
  /* Each step rounds once (two without fusion): (taps + 1) * 2^-23 of the
   * terms' magnitude, doubled for slack. */
  const double eps = 2.0 * (double)(taps + 1) * 0x1p-23;
  memset(y0, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_conv2d_nchw_with(0, p, in, w, bp, y0) == 0);
  for (size_t i = 0; i < no; ++i) PT_CHECK(fabs((double)y0[i] - ref[i]) <= eps * mag[i] + 1e-30);
  pt_variant_checked("conv2d", pterun_compute_f32_conv2d_variant(0), y0, no * sizeof(float));
  for (size_t v = 1; v < 8; ++v) {
    if (pterun_compute_f32_conv2d_variant(v) == NULL) continue;
    memset(y, 0xff, no * sizeof(float));
    PT_CHECK(pterun_compute_f32_conv2d_nchw_with(v, p, in, w, bp, y) == 0);
    for (size_t i = 0; i < no; ++i) {
      PT_CHECK(fabs((double)y[i] - ref[i]) <= eps * mag[i] + 1e-30);
      PT_CHECK(fabs((double)y[i] - (double)y0[i]) <= 2.0 * eps * mag[i] + 1e-30);
    }
    pt_variant_checked("conv2d", pterun_compute_f32_conv2d_variant(v), y, no * sizeof(float));
  }
  /* The pool and the calling thread: the best variant's bits. */
  PT_CHECK(pterun_compute_f32_conv2d_nchw_with(best_variant(), p, in, w, bp, y0) == 0);
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_conv2d_nchw(pool, 0, p, in, w, bp, y) == 0);
  PT_CHECK(memcmp(y, y0, no * sizeof(float)) == 0);
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_conv2d_nchw(NULL, 0, p, in, w, bp, y) == 0);
  PT_CHECK(memcmp(y, y0, no * sizeof(float)) == 0);
  free(in);
  free(w);
  free(bias);
  free(y0);
  free(y);
  free(ref);
  free(mag);
  return 0;
}

static int test_geometries(void) {
  static const size_t kernels[][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 3}, {3, 1}, {5, 5}, {7, 7}};
  static const size_t couts[] = {1, 3, 5, 8, 13, 32};
  static const size_t sizes[] = {1, 2, 5, 9, 17, 31, 40, 67};
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  pterun_threadpool* pool = NULL;
  PT_CHECK(pterun_threadpool_create(&o, &pool) == PTERUN_STATUS_OK);
  size_t ran = 0;
  for (size_t ic = 1; ic <= 4; ++ic)
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
      if (ic * kernels[k][0] * kernels[k][1] > PTERUN_COMPUTE_CONV2D_MAX_TAPS) continue;
      for (size_t rep = 0; rep < 12; ++rep) {
        pterun_compute_conv2d p;
        memset(&p, 0, sizeof p);
        p.batch = 1 + pt_rand_u24(&g_rand) % 2;
        p.in_c = ic;
        p.kernel_h = kernels[k][0];
        p.kernel_w = kernels[k][1];
        p.in_h = sizes[pt_rand_u24(&g_rand) % 8];
        p.in_w = sizes[pt_rand_u24(&g_rand) % 8];
        p.out_c = couts[pt_rand_u24(&g_rand) % 6];
        p.stride_h = 1 + pt_rand_u24(&g_rand) % 3;
        p.stride_w = 1 + (rep % 3); /* every stride across for every filter */
        p.dilation_h = 1 + (pt_rand_u24(&g_rand) % 4 == 0);
        p.dilation_w = 1 + (pt_rand_u24(&g_rand) % 4 == 0);
        p.pad_top = pt_rand_u24(&g_rand) % 4;
        p.pad_left = rep % 4;
        p.activation = (int)(rep % 3);
        p.lo = -0.5f;
        p.hi = rep % 6 == 5 ? -0.75f : 0.75f; /* crossed bounds now and then */
        p.out_h = out_size(p.in_h, p.pad_top, p.kernel_h, p.stride_h, p.dilation_h);
        p.out_w = out_size(p.in_w, p.pad_left, p.kernel_w, p.stride_w, p.dilation_w);
        if (p.out_h == 0 || p.out_w == 0) continue;
        if (run_case(&p, (int)(pt_rand_u24(&g_rand) % 4 != 0), pool) != 0) {
          fprintf(stderr,
                  "case: b%zu ic%zu %zux%zu oc%zu k%zux%zu s%zu,%zu d%zu,%zu p%zu,%zu act%d\n",
                  p.batch, p.in_c, p.in_h, p.in_w, p.out_c, p.kernel_h, p.kernel_w, p.stride_h,
                  p.stride_w, p.dilation_h, p.dilation_w, p.pad_top, p.pad_left, p.activation);
          pterun_threadpool_destroy(pool);
          return 1;
        }
        ++ran;
      }
    }
  /* The network stems the family is for: MobileNet (stride 2) and ResNet. */
  pterun_compute_conv2d stems[] = {
      {1, 3, 128, 128, 32, 64, 64, 3, 3, 2, 2, 1, 1, 1, 1, PTERUN_COMPUTE_ACT_CLAMP, 0.0f, 6.0f},
      {1, 3, 64, 64, 32, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, PTERUN_COMPUTE_ACT_RELU, 0.0f, 0.0f},
      {2, 3, 33, 35, 24, 17, 18, 3, 3, 2, 2, 1, 1, 1, 1, PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f},
      /* Channels whose weights do not fit the task's stack at once. */
      {1, 3, 20, 21, 203, 20, 21, 3, 3, 1, 1, 1, 1, 1, 1, PTERUN_COMPUTE_ACT_RELU, 0.0f, 0.0f},
  };
  for (size_t i = 0; i < sizeof stems / sizeof stems[0]; ++i, ++ran)
    PT_CHECK(run_case(&stems[i], 1, pool) == 0);
  pterun_threadpool_destroy(pool);
  PT_CHECK(ran > 200);
  return 0;
}

/* ReLU keeps -0 and NaN (aten::relu: x < 0 ? +0 : x); clamp keeps NaN. */
static int test_activation_edges(void) {
  pterun_compute_conv2d p = {
      1, 1, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, PTERUN_COMPUTE_ACT_RELU, 0.0f, 0.0f};
  float in[9] = {0}, w[2] = {-1.0f, 1.0f}, bias[2] = {-0.0f, -0.0f}, y[18];
  in[4] = NAN;
  for (size_t v = 0; v < 8; ++v) {
    if (pterun_compute_f32_conv2d_variant(v) == NULL) continue;
    for (int act = PTERUN_COMPUTE_ACT_RELU; act <= PTERUN_COMPUTE_ACT_CLAMP; ++act) {
      p.activation = act;
      p.lo = -1.0f;
      p.hi = 1.0f;
      PT_CHECK(pterun_compute_f32_conv2d_nchw_with(v, &p, in, w, bias, y) == 0);
      for (size_t i = 0; i < 18; ++i) {
        if (i % 9 == 4) {
          PT_CHECK(isnan(y[i]));
        } else if (act == PTERUN_COMPUTE_ACT_RELU) {
          uint32_t bits;
          memcpy(&bits, &y[i], 4);
          /* channel 0: bias -0 + (-1 * 0 = -0) = -0, kept; channel 1: -0 + 0 = +0 */
          PT_CHECK(bits == (i < 9 ? 0x80000000u : 0u));
        }
      }
    }
  }
  return 0;
}

static int test_refused(void) {
  pterun_compute_conv2d p = {
      1, 3, 8, 8, 4, 8, 8, 5, 5, 1, 1, 1, 1, 2, 2, PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f};
  float buf[1024] = {0};
  PT_CHECK(pterun_compute_f32_conv2d_nchw(NULL, 0, &p, buf, buf, NULL, buf) == -1); /* 75 taps */
  p.in_c = 2;
  PT_CHECK(pterun_compute_f32_conv2d_nchw(NULL, 0, &p, buf, buf, NULL, buf) == 0); /* 50 */
  p.stride_w = 0;
  PT_CHECK(pterun_compute_f32_conv2d_nchw(NULL, 0, &p, buf, buf, NULL, buf) == -1);
  p.stride_w = 1;
  p.out_w = 100000; /* a row past the buffer */
  PT_CHECK(pterun_compute_f32_conv2d_nchw_with(0, &p, buf, buf, NULL, buf) == -1);
  PT_CHECK(pterun_compute_f32_conv2d_variant(0) != NULL);
  PT_CHECK(pterun_compute_f32_conv2d_variant(99) == NULL);
  return 0;
}

int main(void) {
  PT_RUN(test_geometries);
  PT_RUN(test_activation_edges);
  PT_RUN(test_refused);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
