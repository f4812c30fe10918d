/* The vectorised quantize_per_tensor and choose_qparams loops against their
 * scalar path, through the kernels: a whole tensor (SIMD blocks of 16 / 4
 * elements) must give the bytes that one-element calls (the scalar tail)
 * give, on edge values (ties, the 2^22 limit of the rounding trick, Inf, NaN,
 * -0.0, subnormals), every zero point class and narrowed ranges. Run again
 * under PTERUN_ISA_MASK=0 (both sides scalar). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/quantized.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static pterun_status call(const char* op, pterun_value* vals, size_t n) {
  pterun_value* argp[16];
  pterun_logger logger = pterun_logger_silent();
  size_t k;
  pterun_kernel_fn fn = pt_find_kernel(pterun_kernels_quantized(), op);
  if (fn == NULL) return PTERUN_STATUS_OPERATOR_MISSING;
  for (k = 0; k < n; ++k) argp[k] = &vals[k];
  return pterun_kernel_invoke(fn, op, argp, n, &logger, NULL, 0);
}

static uint32_t g_seed = 12345u;
static uint32_t rnd(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return g_seed >> 8;
}

#define N 333

/* quantize_per_tensor.out of x[0..n) into q. */
static pterun_status quantize(const float* x, int64_t n, double scale, int64_t zp, int64_t qmin,
                              int64_t qmax, int dtype, void* q) {
  int64_t sz[1] = {n};
  pterun_tensor tx =
      pt_tensor_make(PTERUN_DTYPE_F32, 1, sz, (void*)(uintptr_t)x, sizeof(float) * n);
  pterun_tensor tq = pt_tensor_make(dtype, 1, sz, q, (size_t)n);
  pterun_value a[8] = {pt_val_tensor(&tx), pt_val_double(scale), pt_val_int(zp),
                       pt_val_int(qmin),   pt_val_int(qmax),     pt_val_int(dtype),
                       pt_val_tensor(&tq), pt_val_tensor(&tq)};
  return call("quantized_decomposed::quantize_per_tensor.out", a, 8);
}

static void fill(float* x, int64_t n, double scale) {
  static const float edge[] = {
      0.5f,        1.5f,        2.5f,       -0.5f,      -1.5f,       -2.5f,      127.5f,
      128.5f,      -128.5f,     254.5f,     255.5f,     4194303.5f,  4194304.0f, 4194305.0f,
      -4194304.0f, -4194305.0f, 8388607.0f, 8388608.0f, 1e10f,       -1e10f,     3e38f,
      -3e38f,      0.0f,        -0.0f,      1e-40f,     -1e-40f,     INFINITY,   -INFINITY,
      NAN,         -NAN,        9.3e18f,    -9.3e18f,   0.49999997f, 1e30f,      -1e30f};
  const int64_t ne = (int64_t)(sizeof edge / sizeof edge[0]);
  for (int64_t i = 0; i < n; ++i) {
    if (i % 3 == 0 && i / 3 < ne)
      x[i] = edge[i / 3] * (float)scale; /* lands on p = edge after * (1 / scale) */
    else if (i % 5 == 0)
      x[i] = ((float)(int)(rnd() % 600) - 300.0f + 0.5f) * (float)scale; /* ties */
    else
      x[i] = ((float)(rnd() % 200001) - 100000.0f) * 1e-3f;
  }
}

static int test_quantize_matches_scalar(void) {
  static const int64_t zps[] = {0, -128, 127, 255, 3, 100000, -4194304, 4194304, 4194305, -70000};
  static const double scales[] = {1.0, 0.1, 0.0078125, 3.7e-3, 250.0};
  float x[N];
  uint8_t whole[N], one[N];
  int dt, z, s, r, checked = 0;
  for (dt = 0; dt < 2; ++dt) {
    const int dtype = dt ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8;
    for (s = 0; s < (int)(sizeof scales / sizeof scales[0]); ++s)
      for (z = 0; z < (int)(sizeof zps / sizeof zps[0]); ++z)
        for (r = 0; r < 2; ++r) {
          /* full range, or narrowed (a fused relu) */
          const int64_t qmin = dt ? (r ? 20 : 0) : (r ? -3 : -128);
          const int64_t qmax = dt ? (r ? 200 : 255) : (r ? 100 : 127);
          int64_t i, n = 1 + (int64_t)(rnd() % N);
          if (r == 0) n = N;
          fill(x, n, scales[s]);
          PT_CHECK_STATUS(quantize(x, n, scales[s], zps[z], qmin, qmax, dtype, whole),
                          PTERUN_STATUS_OK);
          for (i = 0; i < n; ++i)
            PT_CHECK_STATUS(quantize(x + i, 1, scales[s], zps[z], qmin, qmax, dtype, one + i),
                            PTERUN_STATUS_OK);
          for (i = 0; i < n; ++i)
            if (whole[i] != one[i]) {
              fprintf(stderr, "dtype %d scale %g zp %lld: x[%lld] = %.9g: %u vs %u\n", dtype,
                      scales[s], (long long)zps[z], (long long)i, (double)x[i], whole[i], one[i]);
              return 1;
            }
          ++checked;
        }
  }
  PT_CHECK(checked == 2 * 5 * 10 * 2);
  /* The reference values of a few: ties to even, NaN -> quant_min. */
  {
    const float y[16] = {0.5f,  1.5f,  2.5f, -0.5f, -1.5f, NAN, 126.5f, 1e9f,
                         -1e9f, 3.49f, 0,    0,     0,     0,   0,      INFINITY};
    int8_t q[16];
    static const int8_t want[16] = {0, 2, 2, 0, -2, -128, 126, 127, -128, 3, 0, 0, 0, 0, 0, -128};
    PT_CHECK_STATUS(quantize(y, 16, 1.0, 0, -128, 127, PTERUN_DTYPE_I8, q), PTERUN_STATUS_OK);
    PT_CHECK(memcmp(q, want, sizeof q) == 0);
  }
  return 0;
}

/* choose_qparams.Tensor_out of x[0..n). */
static pterun_status choose(const float* x, int64_t n, double* s, int64_t* z) {
  int64_t sz[1] = {n}, one[1] = {1};
  pterun_tensor tx =
      pt_tensor_make(PTERUN_DTYPE_F32, 1, sz, (void*)(uintptr_t)x, sizeof(float) * n);
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F64, 1, one, s, sizeof *s);
  pterun_tensor tz = pt_tensor_make(PTERUN_DTYPE_I64, 1, one, z, sizeof *z);
  pterun_value lst, a[8];
  pterun_value* items[2];
  a[0] = pt_val_tensor(&tx);
  a[1] = pt_val_int(-128);
  a[2] = pt_val_int(127);
  a[3] = pt_val_double(1e-7);
  a[4] = pt_val_int(PTERUN_DTYPE_I8);
  a[5] = pt_val_tensor(&ts);
  a[6] = pt_val_tensor(&tz);
  items[0] = &a[5];
  items[1] = &a[6];
  memset(&lst, 0, sizeof lst);
  lst.tag = PTERUN_VALUE_LIST_TENSOR;
  lst.u.tensors.items = items;
  lst.u.tensors.len = 2;
  a[7] = lst;
  return call("quantized_decomposed::choose_qparams.Tensor_out", a, 8);
}

/* The range of a whole tensor (SIMD scan) equals the one of [min, max]
 * found by a plain loop here (two elements: the scalar scan). */
static int test_choose_qparams_matches_scalar(void) {
  float x[N];
  int t;
  for (t = 0; t < 40; ++t) {
    const int64_t n = 9 + (int64_t)(rnd() % (N - 9));
    int64_t i, z1, z2;
    double s1, s2;
    float mm[2];
    for (i = 0; i < n; ++i) x[i] = ((float)(rnd() % 20001) - 10000.0f) * (t % 2 ? 1e-3f : 0.37f);
    if (t % 4 == 1) x[1 + rnd() % (n - 1)] = NAN; /* an interior NaN is skipped */
    if (t % 4 == 3) x[n - 1] = -77777.0f;         /* the extreme in the scalar tail */
    if (t % 8 == 2)
      for (i = 0; i < n; ++i) x[i] = fabsf(x[i]) + 1.0f; /* no zero crossing */
    mm[0] = mm[1] = x[0];
    for (i = 1; i < n; ++i) {
      if (x[i] < mm[0]) mm[0] = x[i];
      if (mm[1] < x[i]) mm[1] = x[i];
    }
    PT_CHECK_STATUS(choose(x, n, &s1, &z1), PTERUN_STATUS_OK);
    PT_CHECK_STATUS(choose(mm, 2, &s2, &z2), PTERUN_STATUS_OK);
    PT_CHECK(s1 == s2 && z1 == z2);
  }
  x[0] = NAN; /* a leading NaN stays and is refused */
  PT_CHECK_STATUS(choose(x, 100, &(double){0}, &(int64_t){0}), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_quantize_matches_scalar);
  PT_RUN(test_choose_qparams_matches_scalar);
  return pt_failures ? 1 : 0;
}
