/* Kernels' channels-last loops (the layouts the load-time layout pass gives
 * convolution chains, src/optimize/method_layout.c) against their NCHW
 * loops on the same values: the inference batch norm
 * (_native_batch_norm_legit_no_training) gives the same bits in either
 * layout, for channel counts on and off the vector widths and a batch of 2.
 * (The channels-last max pool: test_pool_fast; convolutions: the
 * differential set's layout specs.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static int pt_failures;

static uint32_t g_rng = 99;
static float rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (float)(g_rng >> 8) / 8388608.0f - 1.0f;
}

static int run_bn(float* x, float* y, const int64_t* sizes, int channels_last, float* gamma,
                  float* beta, float* mean, float* var) {
  pterun_kernel_fn fn =
      pt_find_kernel(pterun_kernels_portable(), "aten::_native_batch_norm_legit_no_training.out");
  PT_CHECK(fn != NULL);
  const size_t n = (size_t)(sizes[0] * sizes[1] * sizes[2] * sizes[3]);
  const int64_t c[1] = {sizes[1]}, zero[1] = {0};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 4, sizes, x, n * 4);
  pterun_tensor ty = pt_tensor_make(PTERUN_DTYPE_F32, 4, sizes, y, n * 4);
  if (channels_last) PT_CHECK(pt_tensor_channels_last(&tx) && pt_tensor_channels_last(&ty));
  float empty[1];
  pterun_tensor tw = pt_tensor_make(PTERUN_DTYPE_F32, 1, c, gamma, (size_t)c[0] * 4);
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_F32, 1, c, beta, (size_t)c[0] * 4);
  pterun_tensor tm = pt_tensor_make(PTERUN_DTYPE_F32, 1, c, mean, (size_t)c[0] * 4);
  pterun_tensor tv = pt_tensor_make(PTERUN_DTYPE_F32, 1, c, var, (size_t)c[0] * 4);
  pterun_tensor t1 = pt_tensor_make(PTERUN_DTYPE_F32, 1, zero, empty, 4);
  pterun_tensor t2 = pt_tensor_make(PTERUN_DTYPE_F32, 1, zero, empty, 4);
  pterun_value v[11] = {pt_val_tensor(&tx),  pt_val_tensor(&tw), pt_val_tensor(&tb),
                        pt_val_tensor(&tm),  pt_val_tensor(&tv), pt_val_double(0.1),
                        pt_val_double(1e-5), pt_val_tensor(&ty), pt_val_tensor(&t1),
                        pt_val_tensor(&t2),  pt_val_none()};
  pterun_value* args[11];
  for (int i = 0; i < 11; ++i) args[i] = &v[i];
  PT_CHECK_STATUS(pterun_kernel_invoke(fn, "aten::_native_batch_norm_legit_no_training.out", args,
                                       11, NULL, NULL, 0),
                  PTERUN_STATUS_OK);
  return 0;
}

static int check_bn(int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t sizes[4] = {n, c, h, w};
  const size_t e = (size_t)(n * c * h * w);
  float *x = malloc(e * 4), *xc = malloc(e * 4), *y = malloc(e * 4), *yc = malloc(e * 4);
  float *g = malloc((size_t)c * 4), *b = malloc((size_t)c * 4), *m = malloc((size_t)c * 4),
        *v = malloc((size_t)c * 4);
  PT_CHECK(x && xc && y && yc && g && b && m && v);
  for (int64_t k = 0; k < c; ++k) {
    g[k] = rnd();
    b[k] = rnd();
    m[k] = rnd();
    v[k] = 0.5f + fabsf(rnd());
  }
  for (size_t i = 0; i < e; ++i) x[i] = 4.0f * rnd();
  for (int64_t bb = 0; bb < n; ++bb)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t p = 0; p < h * w; ++p)
        xc[(bb * h * w + p) * c + k] = x[(bb * c + k) * h * w + p];
  PT_CHECK(run_bn(x, y, sizes, 0, g, b, m, v) == 0);
  PT_CHECK(run_bn(xc, yc, sizes, 1, g, b, m, v) == 0);
  for (int64_t bb = 0; bb < n; ++bb)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t p = 0; p < h * w; ++p)
        PT_CHECK(memcmp(&y[(bb * c + k) * h * w + p], &yc[(bb * h * w + p) * c + k], 4) == 0);
  free(x);
  free(xc);
  free(y);
  free(yc);
  free(g);
  free(b);
  free(m);
  free(v);
  return 0;
}

static int test_batch_norm(void) {
  static const int64_t chans[] = {1, 3, 16, 70};
  for (size_t k = 0; k < sizeof chans / sizeof chans[0]; ++k) {
    PT_CHECK(check_bn(2, chans[k], 5, 7) == 0);
    PT_CHECK(check_bn(1, chans[k], 1, 1) == 0);
  }
  return 0;
}

int main(void) {
  PT_RUN(test_batch_norm);
  return pt_failures != 0;
}
