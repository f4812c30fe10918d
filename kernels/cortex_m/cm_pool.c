/* Quantized 2-D pooling, NCHW-logical (any dim order) and _nhwc variants.
 * avg: the reference dequantizes with the fixed-point scale, averages in
 * float32 (count_include_pad=False, window summed row-major from 0, as ATen's
 * CPU kernel does) and quantizes back with a float32 division. max: int8
 * maximum over the window, then the activation clamp. */
#include <inttypes.h>
#include <math.h>

#include "kernels/cortex_m/cm_util.h"

/* ATen's pooling_output_shape (dilation d, ceil_mode). */
static int64_t pool_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0), out;
  if (num < 0) return 0;
  out = num / s + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

static pterun_status check_window(pterun_kernel_context* ctx, const int64_t k[2],
                                  const int64_t s[2], const int64_t p[2]) {
  int i;
  for (i = 0; i < 2; ++i)
    if (k[i] < 1 || s[i] < 1 || p[i] < 0 || k[i] > INT32_MAX || s[i] > INT32_MAX || p[i] > k[i] / 2)
      return PTERUN_FAIL_ARG(ctx,
                             "kernel_size/stride must be >= 1 and padding in [0, kernel_size / 2] "
                             "(got kernel %" PRId64 ", stride %" PRId64 ", padding %" PRId64 ")",
                             k[i], s[i], p[i]);
  return PTERUN_STATUS_OK;
}

/* quantized_avg_pool2d.out(input, kernel_size, stride, padding, ceil_mode,
 *   zero_point, multiplier, shift, scratch, *, out) */
static pterun_status avg_pool(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                              int nhwc) {
  pterun_tensor *in, *out;
  int64_t k[2], s[2], p[2], zp, mult, shift, oh, ow, sizes[4], n, c, y, x;
  int ceil;
  float scale, zpf;
  cm_img vi, vo;
  const int8_t* xd;
  PTERUN_CHECK_NARGS(ctx, nargs, 11);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(cm_arg_pair(ctx, args, 1, "kernel_size", k));
  PTERUN_TRY(cm_arg_pair(ctx, args, 2, "stride", s));
  PTERUN_TRY(cm_arg_pair(ctx, args, 3, "padding", p));
  PTERUN_TRY(pterun_arg_bool(ctx, args, 4, "ceil_mode", &ceil));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "zero_point", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "multiplier", &mult));
  PTERUN_TRY(pterun_arg_int(ctx, args, 7, "shift", &shift));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 9, "out", &out));
  PTERUN_TRY(cm_check_i32(ctx, "zero_point", zp));
  PTERUN_TRY(cm_check_requant(ctx, "multiplier", mult, shift));
  PTERUN_TRY(check_window(ctx, k, s, p));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8));
  if (in->rank != 4) return PTERUN_FAIL_ARG(ctx, "arg 'input': 4-D tensor required");
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  /* multiplier * 2^shift / 2^31, exact in double, then float32 as torch uses it */
  scale = (float)ldexp((double)mult, (int)shift - 31);
  if (!(scale > 0.0f) || isinf(scale))
    return PTERUN_FAIL_ARG(ctx, "arg 'multiplier': the scale must be > 0 in float32");
  zpf = (float)zp;
  cm_img_view(in, nhwc, &vi);
  oh = pool_extent(vi.h, k[0], s[0], p[0], 1, ceil);
  ow = pool_extent(vi.w, k[1], s[1], p[1], 1, ceil);
  if (oh < 1 || ow < 1) return PTERUN_FAIL_ARG(ctx, "arg 'input': the output would be empty");
  cm_img_sizes(nhwc, vi.n, vi.c, oh, ow, sizes);
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, sizes));
  cm_img_view(out, nhwc, &vo);
  xd = (const int8_t*)in->data;
  for (n = 0; n < vi.n; ++n)
    for (c = 0; c < vi.c; ++c)
      for (y = 0; y < oh; ++y)
        for (x = 0; x < ow; ++x) {
          int64_t h0 = y * s[0] - p[0], w0 = x * s[1] - p[1], h1, w1, i, j;
          float sum = 0.0f, avg = 0.0f, q;
          h1 = h0 + k[0] < vi.h + p[0] ? h0 + k[0] : vi.h + p[0];
          w1 = w0 + k[1] < vi.w + p[1] ? w0 + k[1] : vi.w + p[1];
          if (h0 < 0) h0 = 0;
          if (w0 < 0) w0 = 0;
          if (h1 > vi.h) h1 = vi.h;
          if (w1 > vi.w) w1 = vi.w;
          if (h0 < h1 && w0 < w1) {
            for (i = h0; i < h1; ++i)
              for (j = w0; j < w1; ++j)
                sum += ((float)xd[cm_img_at(&vi, n, c, i, j)] - zpf) * scale;
            avg = sum / (float)((h1 - h0) * (w1 - w0));
          }
          q = nearbyintf(avg / scale) + zpf;
          ((int8_t*)out->data)[cm_img_at(&vo, n, c, y, x)] = (int8_t)(q <= -128.0f  ? -128
                                                                      : q >= 127.0f ? 127
                                                                                    : (int)q);
        }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(cm_quantized_avg_pool2d_out) {
  return avg_pool(ctx, args, nargs, 0);
}
PTERUN_KERNEL(cm_quantized_avg_pool2d_nhwc_out) {
  return avg_pool(ctx, args, nargs, 1);
}

/* quantized_max_pool2d.out(input, kernel_size, stride, padding, dilation,
 *   ceil_mode, input_zero_point, output_zero_point, activation_min,
 *   activation_max, *, out); like the reference: dilation 1, no ceil_mode,
 *   equal zero points. */
static pterun_status max_pool(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                              int nhwc) {
  pterun_tensor *in, *out;
  int64_t k[2], s[2], p[2], d[2], zpi, zpo, amin, amax, oh, ow, sizes[4], n, c, y, x;
  int ceil;
  cm_img vi, vo;
  const int8_t* xd;
  PTERUN_CHECK_NARGS(ctx, nargs, 12);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(cm_arg_pair(ctx, args, 1, "kernel_size", k));
  PTERUN_TRY(cm_arg_pair(ctx, args, 2, "stride", s));
  PTERUN_TRY(cm_arg_pair(ctx, args, 3, "padding", p));
  PTERUN_TRY(cm_arg_pair(ctx, args, 4, "dilation", d));
  PTERUN_TRY(pterun_arg_bool(ctx, args, 5, "ceil_mode", &ceil));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "input_zero_point", &zpi));
  PTERUN_TRY(pterun_arg_int(ctx, args, 7, "output_zero_point", &zpo));
  PTERUN_TRY(pterun_arg_int(ctx, args, 8, "activation_min", &amin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "activation_max", &amax));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 10, "out", &out));
  if (zpi != zpo) return PTERUN_FAIL_ARG(ctx, "input and output zero points must match");
  if (d[0] != 1 || d[1] != 1 || ceil)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "only dilation 1 without ceil_mode is supported");
  PTERUN_TRY(check_window(ctx, k, s, p));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8));
  if (in->rank != 4) return PTERUN_FAIL_ARG(ctx, "arg 'input': 4-D tensor required");
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  cm_img_view(in, nhwc, &vi);
  oh = pool_extent(vi.h, k[0], s[0], p[0], 1, 0);
  ow = pool_extent(vi.w, k[1], s[1], p[1], 1, 0);
  if (oh < 1 || ow < 1) return PTERUN_FAIL_ARG(ctx, "arg 'input': the output would be empty");
  cm_img_sizes(nhwc, vi.n, vi.c, oh, ow, sizes);
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, sizes));
  cm_img_view(out, nhwc, &vo);
  xd = (const int8_t*)in->data;
  for (n = 0; n < vi.n; ++n)
    for (c = 0; c < vi.c; ++c)
      for (y = 0; y < oh; ++y)
        for (x = 0; x < ow; ++x) {
          int64_t i, j, m = -129;
          for (i = y * s[0] - p[0]; i < y * s[0] - p[0] + k[0]; ++i)
            for (j = x * s[1] - p[1]; j < x * s[1] - p[1] + k[1]; ++j)
              if (i >= 0 && i < vi.h && j >= 0 && j < vi.w && xd[cm_img_at(&vi, n, c, i, j)] > m)
                m = xd[cm_img_at(&vi, n, c, i, j)];
          ((int8_t*)out->data)[cm_img_at(&vo, n, c, y, x)] = cm_wrap8(cm_clamp64(m, amin, amax));
        }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(cm_quantized_max_pool2d_out) {
  return max_pool(ctx, args, nargs, 0);
}
PTERUN_KERNEL(cm_quantized_max_pool2d_nhwc_out) {
  return max_pool(ctx, args, nargs, 1);
}
