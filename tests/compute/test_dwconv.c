/* f32 NHWC depthwise convolution of libpterun_compute
 * (pterun_compute_f32_dwconv2d_nhwc): over geometries with padding, strides,
 * dilation, channel multipliers, channel counts off every vector width and a
 * filter past the tap list, every variant this CPU runs matches a double
 * reference and gives the 4-lane baseline's bits (the fast path tested
 * against the portable one); split over a pool the bits do not change; bad
 * geometry is refused. The NCHW variant must give the bits of a plain float
 * loop. ctest runs it again with PTERUN_ISA_MASK=0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;

static uint32_t g_seed = 12345u;
static float rnd(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return (float)(g_seed >> 8) / 8388608.0f - 1.0f;
}

static size_t out_size(size_t in, size_t pad, size_t k, size_t s, size_t d) {
  size_t eff = d * (k - 1) + 1;
  return (in + 2 * pad - eff) / s + 1;
}

/* In double, with the same clamp. */
static void reference(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                      const float* bias, double* out) {
  size_t dm = p->out_c / p->in_c;
  for (size_t b = 0; b < p->batch; ++b)
    for (size_t y = 0; y < p->out_h; ++y)
      for (size_t x = 0; x < p->out_w; ++x)
        for (size_t c = 0; c < p->out_c; ++c) {
          double acc = bias != NULL ? bias[c] : 0.0;
          for (size_t kh = 0; kh < p->kernel_h; ++kh)
            for (size_t kw = 0; kw < p->kernel_w; ++kw) {
              long ih = (long)(y * p->stride_h + kh * p->dilation_h) - (long)p->pad_top;
              long iw = (long)(x * p->stride_w + kw * p->dilation_w) - (long)p->pad_left;
              if (ih < 0 || iw < 0 || ih >= (long)p->in_h || iw >= (long)p->in_w) continue;
              acc +=
                  (double)
                      in[((b * p->in_h + (size_t)ih) * p->in_w + (size_t)iw) * p->in_c + c / dm] *
                  w[(kh * p->kernel_w + kw) * p->out_c + c];
            }
          /* ATen's clamp: max with out_min, then min with out_max. */
          acc = p->out_min > acc ? p->out_min : acc;
          acc = p->out_max < acc ? p->out_max : acc;
          out[((b * p->out_h + y) * p->out_w + x) * p->out_c + c] = acc;
        }
}

typedef struct geo {
  size_t batch, h, w, ic, dm, k_h, k_w, s, d, pad;
  int bias, clamp;
  size_t s_h; /* stride down when not 0 (else s) */
} geo;

/* n random floats in exactly n floats of heap (ASan sees a read past them),
 * NULL when out of memory. */
static float* rnd_buf(size_t n) {
  float* b = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; b != NULL && i < n; ++i) b[i] = rnd();
  return b;
}

/* The convolution a case describes. */
static pterun_compute_dwconv2d params(const geo* c) {
  const size_t s_h = c->s_h ? c->s_h : c->s;
  pterun_compute_dwconv2d p = {c->batch,      c->h,   c->w,   c->ic,     0,       0,
                               c->ic * c->dm, c->k_h, c->k_w, s_h,       c->s,    c->d,
                               c->d,          c->pad, c->pad, -INFINITY, INFINITY};
  p.out_h = out_size(c->h, c->pad, c->k_h, s_h, c->d);
  p.out_w = out_size(c->w, c->pad, c->k_w, c->s, c->d);
  if (c->clamp) { /* 2: bounds crossed, every output out_max */
    p.out_min = c->clamp == 2 ? 0.75f : -0.5f;
    p.out_max = c->clamp == 2 ? -0.5f : 0.75f;
  }
  return p;
}

static int run_case(const geo* c, pterun_threadpool* pool) {
  pterun_compute_dwconv2d p = params(c);
  size_t ni = p.batch * p.in_h * p.in_w * p.in_c, nw = p.kernel_h * p.kernel_w * p.out_c;
  size_t no = p.batch * p.out_h * p.out_w * p.out_c;
  float *in = rnd_buf(ni), *w = rnd_buf(nw), *bias = rnd_buf(p.out_c);
  float* y0 = malloc(no * sizeof(float));
  float* y = malloc(no * sizeof(float));
  double* ref = malloc(no * sizeof(double));
  PT_CHECK(in && w && bias && y0 && y && ref);
  const float* bp = c->bias ? bias : NULL;
  reference(&p, in, w, bp, ref);
  PT_CHECK(pterun_compute_f32_dwconv2d_with(0, &p, in, w, bp, y0) == 0);
  double tol = 1e-5 * (double)(p.kernel_h * p.kernel_w + 1);
  for (size_t i = 0; i < no; ++i) PT_CHECK(fabs((double)y0[i] - ref[i]) <= tol);
  pt_variant_checked("dwconv_nhwc", pterun_compute_f32_dwconv2d_variant(0), y0, no * sizeof(float));
  int variants = 0;
  for (size_t v = 1; v < 8; ++v) {
    memset(y, 0xff, no * sizeof(float));
    if (pterun_compute_f32_dwconv2d_with(v, &p, in, w, bp, y) != 0) continue;
    ++variants;
    PT_CHECK(memcmp(y, y0, no * sizeof(float)) == 0);
    pt_variant_checked("dwconv_nhwc", pterun_compute_f32_dwconv2d_variant(v), NULL, 0);
  }
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_dwconv2d_nhwc(pool, 0, &p, in, w, bp, y) == 0);
  PT_CHECK(memcmp(y, y0, no * sizeof(float)) == 0);
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_dwconv2d_nhwc(NULL, 0, &p, in, w, bp, y) == 0);
  PT_CHECK(memcmp(y, y0, no * sizeof(float)) == 0);
  free(in);
  free(w);
  free(bias);
  free(y0);
  free(y);
  free(ref);
  (void)variants;
  return 0;
}

/* Runs `fn` on every case with a 3-thread pool; the failing case's index on
 * stderr. */
static int run_cases(const geo* cases, size_t n, int (*fn)(const geo*, pterun_threadpool*),
                     const char* what) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  pterun_threadpool* pool = NULL;
  PT_CHECK(pterun_threadpool_create(&o, &pool) == PTERUN_STATUS_OK);
  int bad = 0;
  for (size_t i = 0; i < n && !bad; ++i) {
    bad = fn(&cases[i], pool);
    if (bad) fprintf(stderr, "%s case %zu failed\n", what, i);
  }
  pterun_threadpool_destroy(pool);
  return bad;
}

static int test_geometries(void) {
  static const geo cases[] = {
      {1, 12, 12, 32, 1, 3, 3, 1, 1, 1, 1, 0, 0}, /* MobileNet 3x3, stride 1 */
      {2, 13, 11, 35, 1, 3, 3, 2, 1, 1, 1, 1, 0}, /* stride 2, channels off every width */
      {1, 9, 9, 8, 1, 5, 5, 1, 2, 4, 0, 0, 0},    /* dilation, wide padding, no bias */
      {1, 7, 7, 3, 4, 3, 3, 1, 1, 1, 1, 1, 0},    /* channel multiplier 4 */
      {1, 10, 10, 17, 1, 9, 9, 1, 1, 4, 1, 0, 0}, /* 81 taps: past the tap list */
      {1, 10, 10, 70, 1, 9, 9, 1, 1, 4, 1, 1, 0}, /* the same through 4-vector blocks, clamped */
      {1, 25, 5, 64, 1, 3, 3, 1, 1, 1, 0, 0, 0},  /* a keyword-spotting block, no bias */
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0},    /* one element */
      {1, 40, 40, 96, 1, 3, 3, 1, 1, 1, 1, 1, 0}, /* big enough to split over the pool */
      {1, 6, 6, 19, 1, 3, 3, 1, 1, 1, 1, 2, 0},   /* clamp bounds crossed */
      /* 3x3, whole vectors, up to 128 channels: the interior of each row
       * channel block by channel block (strides 2 and 3, dilation, no
       * padding, a 1x1 output, rows with no interior column) */
      {2, 9, 14, 48, 1, 3, 3, 2, 1, 1, 1, 1, 0},
      {1, 6, 20, 16, 1, 3, 3, 1, 2, 2, 1, 0, 0},
      {1, 5, 11, 128, 1, 3, 3, 3, 1, 0, 0, 2, 0},
      {1, 3, 3, 32, 1, 3, 3, 1, 1, 0, 1, 0, 0},
      {1, 4, 2, 64, 1, 3, 3, 1, 1, 1, 1, 0, 0},
      {1, 7, 9, 144, 1, 3, 3, 1, 1, 1, 1, 1, 0}, /* past 128: the per-pixel loop */
      /* Multipliers of a vector or more (broadcast input, vectors over the
       * outputs): a 1-channel stem as XNNPACK lowers it (dm 64, 10 x 4,
       * stride 2; the window leaves the input), 81 taps (past the tap list),
       * a multiplier off every width, clamped. */
      {1, 49, 10, 1, 64, 4, 4, 2, 1, 1, 1, 0, 0},
      {1, 12, 11, 2, 32, 9, 9, 1, 1, 4, 1, 1, 0},
      {2, 9, 8, 3, 21, 3, 3, 1, 1, 1, 0, 2, 0},
      {1, 8, 7, 2, 16, 3, 3, 2, 1, 1, 1, 1, 0},
  };
  PT_CHECK(run_cases(cases, sizeof cases / sizeof cases[0], run_case, "nhwc") == 0);
  return 0;
}

static int test_refused(void) {
  pterun_compute_dwconv2d p = {1, 4, 4, 3, 4, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, -INFINITY, INFINITY};
  float buf[64] = {0};
  PT_CHECK(pterun_compute_f32_dwconv2d_nhwc(NULL, 0, &p, buf, buf, NULL, buf) == -1); /* 4 % 3 */
  p.out_c = 3;
  p.stride_h = 0;
  PT_CHECK(pterun_compute_f32_dwconv2d_nhwc(NULL, 0, &p, buf, buf, NULL, buf) == -1);
  p.stride_h = 1;
  p.in_c = 0;
  PT_CHECK(pterun_compute_f32_dwconv2d_with(0, &p, buf, buf, NULL, buf) == -1);
  PT_CHECK(pterun_compute_f32_dwconv2d_variant(0) != NULL);
  PT_CHECK(pterun_compute_f32_dwconv2d_variant(99) == NULL);
  return 0;
}

/* NCHW (pterun_compute_f32_dwconv2d_nchw) in float: bias, then every tap in
 * (kh, kw) order, one rounding per step, taps in the padding reading zeros
 * (as PyTorch's padded convolution does): every variant, tile shape and
 * thread count must give exactly these bits. */
static void reference_nchw(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                           const float* bias, float* out) {
  size_t dm = p->out_c / p->in_c;
  for (size_t b = 0; b < p->batch; ++b)
    for (size_t c = 0; c < p->out_c; ++c)
      for (size_t y = 0; y < p->out_h; ++y)
        for (size_t x = 0; x < p->out_w; ++x) {
          volatile float acc = bias != NULL ? bias[c] : 0.0f;
          for (size_t kh = 0; kh < p->kernel_h; ++kh)
            for (size_t kw = 0; kw < p->kernel_w; ++kw) {
              long ih = (long)(y * p->stride_h + kh * p->dilation_h) - (long)p->pad_top;
              long iw = (long)(x * p->stride_w + kw * p->dilation_w) - (long)p->pad_left;
              int inside = ih >= 0 && iw >= 0 && ih < (long)p->in_h && iw < (long)p->in_w;
              float xv =
                  inside
                      ? in[((b * p->in_c + c / dm) * p->in_h + (size_t)ih) * p->in_w + (size_t)iw]
                      : 0.0f;
              volatile float prod = xv * w[(c * p->kernel_h + kh) * p->kernel_w + kw];
              acc = acc + prod;
            }
          float a = acc;
          a = p->out_min > a ? p->out_min : a;
          out[((b * p->out_c + c) * p->out_h + y) * p->out_w + x] = p->out_max < a ? p->out_max : a;
        }
}

static int run_case_nchw(const geo* c, pterun_threadpool* pool) {
  pterun_compute_dwconv2d p = params(c);
  size_t ni = p.batch * p.in_h * p.in_w * p.in_c, nw = p.kernel_h * p.kernel_w * p.out_c;
  size_t no = p.batch * p.out_h * p.out_w * p.out_c;
  /* Exactly sized buffers: ASan catches a vector load past the input. */
  float *in = rnd_buf(ni), *w = rnd_buf(nw), *bias = rnd_buf(p.out_c);
  float* ref = malloc(no * sizeof(float));
  float* y = malloc(no * sizeof(float));
  PT_CHECK(in && w && bias && ref && y);
  const float* bp = c->bias ? bias : NULL;
  reference_nchw(&p, in, w, bp, ref);
  int variants = 0;
  for (size_t v = 0; v < 8; ++v) {
    memset(y, 0xff, no * sizeof(float));
    if (pterun_compute_f32_dwconv2d_nchw_with(v, &p, in, w, bp, y) != 0) continue;
    ++variants;
    PT_CHECK(memcmp(y, ref, no * sizeof(float)) == 0);
    pt_variant_checked("dwconv_nchw", pterun_compute_f32_dwconv2d_variant(v), NULL, 0);
  }
  PT_CHECK(variants >= 1);
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_dwconv2d_nchw(pool, 0, &p, in, w, bp, y) == 0);
  PT_CHECK(memcmp(y, ref, no * sizeof(float)) == 0);
  memset(y, 0xff, no * sizeof(float));
  PT_CHECK(pterun_compute_f32_dwconv2d_nchw(NULL, 0, &p, in, w, bp, y) == 0);
  PT_CHECK(memcmp(y, ref, no * sizeof(float)) == 0);
  free(in);
  free(w);
  free(bias);
  free(ref);
  free(y);
  return 0;
}

static int test_nchw(void) {
  static const geo cases[] = {
      {1, 64, 64, 32, 1, 3, 3, 1, 1, 1, 1, 0, 0},  /* MobileNet 3x3, stride 1 */
      {1, 64, 64, 16, 1, 3, 3, 2, 1, 1, 0, 1, 0},  /* stride 2, even size */
      {2, 13, 11, 5, 1, 3, 3, 2, 1, 1, 1, 1, 0},   /* stride 2, odd sizes */
      {1, 37, 70, 3, 1, 5, 5, 1, 1, 2, 1, 0, 0},   /* 5x5 stride 1 */
      {1, 41, 67, 3, 1, 5, 5, 2, 1, 2, 1, 1, 0},   /* 5x5 stride 2 */
      {1, 33, 50, 2, 1, 3, 3, 3, 1, 1, 1, 0, 0},   /* stride 3: strided gather */
      {1, 9, 40, 8, 1, 5, 5, 1, 2, 4, 0, 0, 0},    /* dilation, wide padding */
      {1, 7, 7, 3, 4, 3, 3, 1, 1, 1, 1, 1, 0},     /* channel multiplier 4 */
      {1, 10, 10, 3, 1, 9, 9, 1, 1, 4, 1, 0, 0},   /* kernel wider than a row's vectors */
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0},     /* one element */
      {1, 8, 8, 384, 1, 3, 3, 1, 1, 1, 1, 1, 0},   /* small planes, many channels */
      {1, 35, 131, 4, 1, 3, 3, 2, 1, 0, 1, 0, 0},  /* no padding, stride 2 */
      {1, 100, 101, 2, 1, 3, 3, 1, 1, 1, 1, 1, 0}, /* plane too big to copy: scalar edges */
      {1, 130, 98, 2, 1, 3, 3, 2, 1, 1, 0, 0, 0},  /* the same, stride 2 */
      {1, 90, 90, 2, 1, 5, 5, 1, 1, 2, 1, 0, 0},   /* the same, 5x5 */
      /* The tiles of eight (strides 1 and 2 across): every tile shape, rows
       * and columns past the plane, padding of either parity, dilation with
       * stride 2, a stride down unlike the stride across, 1 x 1. */
      {1, 40, 47, 3, 1, 3, 3, 1, 1, 1, 1, 1, 0},   /* 6 vectors of 8: 1 x 8, partial */
      {1, 21, 19, 3, 1, 3, 3, 1, 1, 1, 0, 1, 0},   /* 3 vectors: 2 x 4 */
      {1, 30, 36, 2, 1, 3, 3, 2, 1, 1, 1, 0, 0},   /* stride 2, 18 columns */
      {1, 29, 77, 2, 1, 3, 3, 2, 1, 2, 1, 1, 0},   /* stride 2, even padding */
      {1, 31, 60, 2, 1, 3, 5, 2, 2, 3, 1, 0, 0},   /* stride 2, dilation 2, 3 x 5 */
      {1, 27, 45, 2, 2, 3, 3, 2, 1, 1, 1, 1, 1},   /* stride 1 down, 2 across */
      {1, 27, 45, 2, 1, 3, 3, 1, 1, 1, 0, 0, 3},   /* stride 3 down, 1 across */
      {1, 12, 33, 3, 1, 1, 1, 1, 1, 0, 1, 1, 0},   /* 1 x 1 */
      {1, 11, 5, 4, 1, 3, 3, 1, 1, 1, 1, 0, 0},    /* one partial vector: 8 x 1 */
      {1, 25, 5, 64, 1, 3, 3, 1, 1, 1, 1, 1, 0},   /* keyword spotting: rows stored whole */
      {1, 9, 2, 3, 1, 3, 3, 1, 1, 1, 0, 0, 0},     /* a whole row's store spans later rows */
      {1, 9, 21, 2, 1, 3, 3, 2, 1, 1, 1, 2, 0},    /* clamp bounds crossed */
      {1, 121, 100, 2, 1, 3, 3, 3, 1, 1, 1, 0, 0}, /* stride 3, too big to copy: in place */
      {1, 115, 113, 3, 1, 3, 3, 1, 1, 1, 0, 1, 0}, /* 112-ish planes: bands of rows */
      {1, 117, 119, 3, 1, 3, 3, 2, 1, 1, 1, 1, 0}, /* the same, stride 2 */
  };
  PT_CHECK(run_cases(cases, sizeof cases / sizeof cases[0], run_case_nchw, "nchw") == 0);
  pterun_compute_dwconv2d p = {1, 4, 4, 1, 4, 4, 1, 65, 1, 1, 1, 1, 1, 0, 0, -INFINITY, INFINITY};
  float buf[16] = {0};
  PT_CHECK(pterun_compute_f32_dwconv2d_nchw(NULL, 0, &p, buf, buf, NULL, buf) == -1); /* kh 65 */
  return 0;
}

/* The float32 transpose (the narrow depthwise route's layout change) against
 * a plain loop: whole 4 x 4 blocks, edges, strides wider than the matrix;
 * destination strides of a multiple of 4 KiB (the tiles staged in L1, with
 * rows and columns that end mid-tile); floats outside the destination
 * untouched. The third number: the destination stride (0: rows + 3). */
static int test_transpose_f32(void) {
  static const int64_t dims[][3] = {
      {1, 1, 0}, {3, 64, 0},   {4, 4, 0},      {17, 33, 0},      {64, 25, 0},    {125, 64, 0},
      {9, 2, 0}, {64, 125, 0}, {50, 37, 1024}, {1024, 32, 1024}, {33, 48, 2048}, {7, 16, 1024}};
  for (size_t t = 0; t < sizeof dims / sizeof dims[0]; ++t) {
    const int64_t rows = dims[t][0], cols = dims[t][1], srs = cols + 5;
    const int64_t drs = dims[t][2] != 0 ? dims[t][2] : rows + 3;
    float* src = rnd_buf((size_t)(rows * srs));
    float* dst = malloc((size_t)(cols * drs) * sizeof(float));
    PT_CHECK(src != NULL && dst != NULL);
    for (int64_t i = 0; i < cols * drs; ++i) dst[i] = -7.0f;
    pterun_compute_f32_transpose(rows, cols, src, srs, dst, drs);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < drs; ++i)
        PT_CHECK(dst[j * drs + i] == (i < rows ? src[i * srs + j] : -7.0f));
    free(src), free(dst);
  }
  return 0;
}

int main(void) {
  PT_RUN(test_geometries);
  PT_RUN(test_transpose_f32);
  PT_RUN(test_refused);
  PT_RUN(test_nchw);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
