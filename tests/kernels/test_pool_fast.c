/* The float32 2x2 / stride-2 max pool over dense rows (pterun_compute_f32_maxpool2x2_row,
 * via max_pool2d_with_indices) against the generic loop on the same
 * values in float64: the same maxima (the first of equal values in (kh, kw)
 * order, -0 and +0 kept apart by which came first, NaN winning and sticking)
 * and the same int64 indices, over widths across the block size, odd input
 * sizes and a batch of planes. The channels-last loop (input and output
 * channels-last, as the layout pass makes them; indices NCHW, staged or
 * written in place; 2x2 windows and others: padded, overlapping, dilated)
 * against the NCHW one: the same bits and indices. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static int pt_failures;

static uint32_t g_rng = 77;
static uint32_t rnd_u(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}

/* Few distinct values (many ties), signed zeros, infinities and NaNs. */
static float sample(void) {
  uint32_t r = rnd_u() % 64;
  if (r == 0) return NAN;
  if (r == 1) return -NAN;
  if (r == 2) return INFINITY;
  if (r == 3) return -INFINITY;
  if (r < 8) return -0.0f;
  if (r < 12) return 0.0f;
  return (float)((int)(rnd_u() % 9) - 4);
}

/* A window: kernel, stride, padding, dilation (both dims the same). */
typedef struct win {
  int64_t k, s, pad, dil;
} win;
static const win k2x2 = {2, 2, 0, 1};

static int run_pool_cl(int dtype, void* x, const int64_t* xs, void* y, int64_t* idx,
                       const int64_t* ys, int channels_last, win g);

static int run_pool(int dtype, void* x, const int64_t* xs, void* y, int64_t* idx,
                    const int64_t* ys) {
  return run_pool_cl(dtype, x, xs, y, idx, ys, 0, k2x2);
}

static int run_pool_cl(int dtype, void* x, const int64_t* xs, void* y, int64_t* idx,
                       const int64_t* ys, int channels_last, win g) {
  pterun_kernel_fn fn =
      pt_find_kernel(pterun_kernels_portable(), "aten::max_pool2d_with_indices.out");
  PT_CHECK(fn != NULL);
  size_t es = dtype == PTERUN_DTYPE_F64 ? 8 : 4, xn = 1, yn = 1;
  for (int d = 0; d < 4; ++d) {
    xn *= (size_t)xs[d];
    yn *= (size_t)ys[d];
  }
  pterun_tensor tx = pt_tensor_make(dtype, 4, xs, x, xn * es);
  pterun_tensor ty = pt_tensor_make(dtype, 4, ys, y, yn * es);
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I64, 4, ys, idx, yn * 8);
  if (channels_last) PT_CHECK(pt_tensor_channels_last(&tx) && pt_tensor_channels_last(&ty));
  const int64_t kk[2] = {g.k, g.k}, ss[2] = {g.s, g.s}, pp[2] = {g.pad, g.pad},
                dd[2] = {g.dil, g.dil};
  pt_int_list l[4];
  pterun_value v[9] = {pt_val_tensor(&tx),
                       pt_val_int_list(&l[0], kk, 2),
                       pt_val_int_list(&l[1], ss, 2),
                       pt_val_int_list(&l[2], pp, 2),
                       pt_val_int_list(&l[3], dd, 2),
                       pt_val_bool(0),
                       pt_val_tensor(&ty),
                       pt_val_tensor(&ti),
                       pt_val_none()};
  pterun_value* args[9];
  for (int i = 0; i < 9; ++i) args[i] = &v[i];
  PT_CHECK_STATUS(
      pterun_kernel_invoke(fn, "aten::max_pool2d_with_indices.out", args, 9, NULL, NULL, 0),
      PTERUN_STATUS_OK);
  return 0;
}

static int check_shape(int64_t planes, int64_t ih, int64_t iw) {
  const int64_t oh = ih / 2, ow = iw / 2, xs[4] = {1, planes, ih, iw}, ys[4] = {1, planes, oh, ow};
  const size_t xn = (size_t)(planes * ih * iw), yn = (size_t)(planes * oh * ow);
  float *x = malloc(xn * 4), *y = malloc(yn * 4);
  double *xd = malloc(xn * 8), *yd = malloc(yn * 8);
  int64_t *i32 = malloc(yn * 8), *i64 = malloc(yn * 8);
  PT_CHECK(x && y && xd && yd && i32 && i64);
  for (size_t i = 0; i < xn; ++i) xd[i] = x[i] = sample();
  PT_CHECK(run_pool(PTERUN_DTYPE_F32, x, xs, y, i32, ys) == 0);
  PT_CHECK(run_pool(PTERUN_DTYPE_F64, xd, xs, yd, i64, ys) == 0);
  for (size_t i = 0; i < yn; ++i) {
    int same = isnan(y[i]) ? isnan(yd[i]) != 0
                           : (double)y[i] == yd[i] && !signbit(y[i]) == !signbit(yd[i]);
    if (!same || i32[i] != i64[i]) {
      fprintf(stderr, "FAILED %lldx%lldx%lld: out[%zu] = %g at %lld, generic %g at %lld\n",
              (long long)planes, (long long)ih, (long long)iw, i, (double)y[i], (long long)i32[i],
              yd[i], (long long)i64[i]);
      return 1;
    }
  }
  free(x);
  free(y);
  free(xd);
  free(yd);
  free(i32);
  free(i64);
  return 0;
}

static int test_quad(void) {
  static const int64_t widths[] = {2, 3, 4, 9, 16, 31, 64, 65, 127, 128, 129, 131, 200, 261};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    PT_CHECK(check_shape(3, 6, widths[w]) == 0);
    PT_CHECK(check_shape(2, 5, widths[w]) == 0); /* odd height: last row unused */
  }
  return 0;
}

/* Channels-last input and output against NCHW: the same maxima (bits) and
 * indices; channels across the loop's block of 64, a batch of 2; windows
 * with padding, overlap and dilation. */
static int check_cl_win(int64_t n, int64_t c, int64_t ih, int64_t iw, win g) {
  const int64_t eff = g.dil * (g.k - 1) + 1;
  const int64_t oh = (ih + 2 * g.pad - eff) / g.s + 1, ow = (iw + 2 * g.pad - eff) / g.s + 1;
  const int64_t xs[4] = {n, c, ih, iw}, ys[4] = {n, c, oh, ow};
  const size_t xn = (size_t)(n * c * ih * iw), yn = (size_t)(n * c * oh * ow);
  float *x = malloc(xn * 4), *xc = malloc(xn * 4), *y = malloc(yn * 4), *yc = malloc(yn * 4);
  int64_t *i0 = malloc(yn * 8), *i1 = malloc(yn * 8);
  PT_CHECK(x && xc && y && yc && i0 && i1);
  for (size_t i = 0; i < xn; ++i) x[i] = sample();
  /* the same values channels-last: xc[b][h][w][ch] = x[b][ch][h][w] */
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t h = 0; h < ih; ++h)
        for (int64_t w = 0; w < iw; ++w)
          xc[((b * ih + h) * iw + w) * c + ch] = x[((b * c + ch) * ih + h) * iw + w];
  PT_CHECK(run_pool_cl(PTERUN_DTYPE_F32, x, xs, y, i0, ys, 0, g) == 0);
  PT_CHECK(run_pool_cl(PTERUN_DTYPE_F32, xc, xs, yc, i1, ys, 1, g) == 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t h = 0; h < oh; ++h)
        for (int64_t w = 0; w < ow; ++w) {
          const size_t a = (size_t)(((b * c + ch) * oh + h) * ow + w);
          const size_t l = (size_t)(((b * oh + h) * ow + w) * c + ch);
          PT_CHECK(memcmp(&y[a], &yc[l], 4) == 0);
          PT_CHECK(i0[a] == i1[a]);
        }
  free(x);
  free(xc);
  free(y);
  free(yc);
  free(i0);
  free(i1);
  return 0;
}

static int check_cl(int64_t n, int64_t c, int64_t ih, int64_t iw) {
  return check_cl_win(n, c, ih, iw, k2x2);
}

static int test_channels_last(void) {
  static const int64_t chans[] = {1, 3, 16, 64, 70, 130};
  for (size_t k = 0; k < sizeof chans / sizeof chans[0]; ++k) {
    PT_CHECK(check_cl(2, chans[k], 6, 8) == 0);
    PT_CHECK(check_cl(1, chans[k], 5, 9) == 0); /* odd sizes: the last row and column unused */
  }
  PT_CHECK(check_cl(1, 130, 4, 40) == 0); /* 130 x 20 indices: more than one row's stage */
  return 0;
}

/* Other windows channels-last: a ResNet stem's 3x3 / stride 2 / padding 1
 * (windows cut by the padding), 3x3 at stride 1, a dilated 2x2, 3x3 at
 * stride 3 without padding, 1x1. */
static int test_channels_last_windows(void) {
  static const win wins[] = {{3, 2, 1, 1}, {3, 1, 1, 1}, {2, 1, 0, 2}, {3, 3, 0, 1}, {1, 1, 0, 1}};
  static const int64_t chans[] = {1, 16, 64, 70};
  for (size_t w = 0; w < sizeof wins / sizeof wins[0]; ++w)
    for (size_t k = 0; k < sizeof chans / sizeof chans[0]; ++k) {
      PT_CHECK(check_cl_win(2, chans[k], 7, 9, wins[w]) == 0);
      PT_CHECK(check_cl_win(1, chans[k], 8, 6, wins[w]) == 0);
    }
  PT_CHECK(check_cl_win(1, 130, 9, 40, wins[0]) == 0); /* more than one row's stage */
  return 0;
}

int main(void) {
  PT_RUN(test_quad);
  PT_RUN(test_channels_last);
  PT_RUN(test_channels_last_windows);
  return pt_failures != 0;
}
