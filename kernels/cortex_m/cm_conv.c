/* Quantized convolutions: conv2d (OHWI weights, any groups), depthwise conv2d
 * (IHWO weights) and transposed conv2d, each in the NCHW-logical (any dim
 * order) and the _nhwc variants. int32 accumulation of (x + input_offset) * w
 * plus bias; padding contributes nothing; per-channel requantization, output
 * offset, activation clamp. */
#include <inttypes.h>

#include "kernels/cortex_m/cm_util.h"

typedef enum { CM_CONV, CM_DEPTHWISE, CM_TRANSPOSE } cm_conv_kind;

typedef struct cm_conv_args {
  pterun_tensor *in, *w, *bias, *mult, *shift, *out;
  int64_t stride[2], pad[2], out_pad[2], dil[2], depth_mult, in_off, out_off, act_min, act_max;
} cm_conv_args;

/* Reads the arguments; the schemas differ only in depth_multiplier (depthwise)
 * and output_padding + output_scratch (transposed). */
static pterun_status conv_read(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               cm_conv_kind kind, cm_conv_args* a) {
  size_t i = 0, want = kind == CM_CONV ? 15 : 16;
  if (kind == CM_TRANSPOSE) want = 17;
  PTERUN_CHECK_NARGS(ctx, nargs, want);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i++, "input", &a->in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i++, "weight", &a->w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i++, "bias", &a->bias));
  PTERUN_TRY(cm_arg_pair(ctx, args, i++, "stride", a->stride));
  PTERUN_TRY(cm_arg_pair(ctx, args, i++, "padding", a->pad));
  a->out_pad[0] = a->out_pad[1] = 0;
  if (kind == CM_TRANSPOSE) PTERUN_TRY(cm_arg_pair(ctx, args, i++, "output_padding", a->out_pad));
  PTERUN_TRY(cm_arg_pair(ctx, args, i++, "dilation", a->dil));
  a->depth_mult = 1;
  if (kind == CM_DEPTHWISE)
    PTERUN_TRY(pterun_arg_int(ctx, args, i++, "depth_multiplier", &a->depth_mult));
  PTERUN_TRY(pterun_arg_int(ctx, args, i++, "input_offset", &a->in_off));
  PTERUN_TRY(pterun_arg_int(ctx, args, i++, "output_offset", &a->out_off));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i++, "requantize_multipliers", &a->mult));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i++, "requantize_shifts", &a->shift));
  PTERUN_TRY(pterun_arg_int(ctx, args, i++, "activation_min", &a->act_min));
  PTERUN_TRY(pterun_arg_int(ctx, args, i++, "activation_max", &a->act_max));
  i += kind == CM_TRANSPOSE ? 2 : 1; /* scratch buffers: not needed here */
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i, "out", &a->out));
  PTERUN_TRY(cm_check_i32(ctx, "input_offset", a->in_off));
  PTERUN_TRY(cm_check_i32(ctx, "output_offset", a->out_off));
  for (i = 0; i < 2; ++i)
    if (a->stride[i] < 1 || a->dil[i] < 1 || a->pad[i] < 0 || a->out_pad[i] < 0 ||
        a->stride[i] > INT32_MAX || a->dil[i] > INT32_MAX || a->pad[i] > INT32_MAX ||
        a->out_pad[i] > INT32_MAX)
      return PTERUN_FAIL_ARG(ctx, "stride/dilation must be >= 1 and padding >= 0 (and fit int32)");
  PTERUN_TRY(pterun_check_dtype(ctx, a->in, "input", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, a->w, "weight", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, a->out, "out", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, a->mult, "requantize_multipliers", PTERUN_DTYPE_I32));
  PTERUN_TRY(pterun_check_dtype(ctx, a->shift, "requantize_shifts", PTERUN_DTYPE_I32));
  if (a->in->rank != 4 || a->w->rank != 4)
    return PTERUN_FAIL_ARG(ctx, "args 'input'/'weight': 4-D tensors required");
  PTERUN_TRY(pterun_check_data(ctx, a->in, "input"));
  PTERUN_TRY(pterun_check_contiguous(ctx, a->w, "weight"));
  PTERUN_TRY(pterun_check_data(ctx, a->mult, "requantize_multipliers"));
  PTERUN_TRY(pterun_check_data(ctx, a->shift, "requantize_shifts"));
  if (a->bias != NULL) {
    PTERUN_TRY(pterun_check_dtype(ctx, a->bias, "bias", PTERUN_DTYPE_I32));
    PTERUN_TRY(pterun_check_data(ctx, a->bias, "bias"));
  }
  return PTERUN_STATUS_OK;
}

/* Output extent of a (non-transposed) convolution, torch's floor formula. */
static int64_t conv_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t num = in + 2 * p - d * (k - 1) - 1;
  return num < 0 ? 0 : num / s + 1;
}

static pterun_status run_conv(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                              cm_conv_kind kind, int nhwc) {
  cm_conv_args a;
  cm_img x, y;
  int64_t kh, kw, cin_g, cout, groups, oh, ow, sizes[4], n, oc, oy, ox, ky, kx, ic, ocg;
  const int8_t *xd, *wd;
  const int32_t *md, *sd, *bd;
  PTERUN_TRY(conv_read(ctx, args, nargs, kind, &a));
  cm_img_view(a.in, nhwc, &x);
  kh = a.w->sizes[1];
  kw = a.w->sizes[2];
  if (kind == CM_DEPTHWISE) {
    cout = a.w->sizes[3];
    cin_g = 1;
    groups = x.c;
    if (a.w->sizes[0] != 1 || x.c < 1 || cout % x.c != 0 || cout / x.c != a.depth_mult)
      return PTERUN_FAIL_ARG(
          ctx, "arg 'weight': expected [1, kh, kw, %" PRId64 " * depth_multiplier]", x.c);
  } else {
    cout = a.w->sizes[0];
    cin_g = a.w->sizes[3];
    groups = cin_g > 0 ? x.c / cin_g : 0;
    if (kind == CM_TRANSPOSE && cin_g != x.c)
      return PTERUN_FAIL_ARG(ctx, "arg 'weight': expected %" PRId64 " input channels (groups 1)",
                             x.c);
    if (groups < 1 || x.c % cin_g != 0 || cout % groups != 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'weight': channels do not divide into groups");
  }
  if (a.mult->numel < cout || a.shift->numel < cout || (a.bias && a.bias->numel < cout))
    return PTERUN_FAIL_ARG(ctx, "requantize_multipliers/shifts/bias need %" PRId64 " entries",
                           cout);
  if (kh < 1 || kw < 1 || kh > INT32_MAX || kw > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': empty kernel");
  if (kind == CM_TRANSPOSE) {
    oh = (x.h - 1) * a.stride[0] - 2 * a.pad[0] + a.dil[0] * (kh - 1) + a.out_pad[0] + 1;
    ow = (x.w - 1) * a.stride[1] - 2 * a.pad[1] + a.dil[1] * (kw - 1) + a.out_pad[1] + 1;
  } else {
    oh = conv_extent(x.h, kh, a.stride[0], a.pad[0], a.dil[0]);
    ow = conv_extent(x.w, kw, a.stride[1], a.pad[1], a.dil[1]);
  }
  if (oh < 1 || ow < 1 || x.h < 1 || x.w < 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': the output would be empty");
  for (oc = 0; oc < cout; ++oc)
    PTERUN_TRY(cm_check_requant(ctx, "requantize_multipliers", ((const int32_t*)a.mult->data)[oc],
                                ((const int32_t*)a.shift->data)[oc]));
  cm_img_sizes(nhwc, x.n, cout, oh, ow, sizes);
  PTERUN_TRY(pterun_out_resize(ctx, a.out, "out", 4, sizes));
  cm_img_view(a.out, nhwc, &y);
  xd = (const int8_t*)a.in->data;
  wd = (const int8_t*)a.w->data;
  md = (const int32_t*)a.mult->data;
  sd = (const int32_t*)a.shift->data;
  bd = a.bias ? (const int32_t*)a.bias->data : NULL;
  ocg = cout / groups; /* output channels per group */
  for (n = 0; n < x.n; ++n)
    for (oc = 0; oc < cout; ++oc) {
      int64_t g = oc / ocg;
      for (oy = 0; oy < oh; ++oy)
        for (ox = 0; ox < ow; ++ox) {
          int64_t acc = bd ? bd[oc] : 0;
          for (ky = 0; ky < kh; ++ky) {
            int64_t iy;
            if (kind == CM_TRANSPOSE) {
              int64_t t = oy + a.pad[0] - ky * a.dil[0];
              if (t < 0 || t % a.stride[0] != 0) continue;
              iy = t / a.stride[0];
            } else {
              iy = oy * a.stride[0] - a.pad[0] + ky * a.dil[0];
            }
            if (iy < 0 || iy >= x.h) continue;
            for (kx = 0; kx < kw; ++kx) {
              int64_t ix;
              if (kind == CM_TRANSPOSE) {
                int64_t t = ox + a.pad[1] - kx * a.dil[1];
                if (t < 0 || t % a.stride[1] != 0) continue;
                ix = t / a.stride[1];
              } else {
                ix = ox * a.stride[1] - a.pad[1] + kx * a.dil[1];
              }
              if (ix < 0 || ix >= x.w) continue;
              if (kind == CM_DEPTHWISE) {
                int64_t v = xd[cm_img_at(&x, n, g, iy, ix)] + a.in_off;
                acc += v * wd[(ky * kw + kx) * cout + oc];
              } else {
                const int8_t* wr = wd + ((oc * kh + ky) * kw + kx) * cin_g;
                int64_t c0 = kind == CM_TRANSPOSE ? 0 : g * cin_g;
                for (ic = 0; ic < cin_g; ++ic)
                  acc += (xd[cm_img_at(&x, n, c0 + ic, iy, ix)] + a.in_off) * (int64_t)wr[ic];
              }
            }
          }
          {
            int32_t r = cm_requantize(cm_wrap32(acc), md[oc], sd[oc]);
            ((int8_t*)a.out->data)[cm_img_at(&y, n, oc, oy, ox)] =
                cm_wrap8(cm_clamp64((int64_t)r + a.out_off, a.act_min, a.act_max));
          }
        }
    }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(cm_quantized_conv2d_out) {
  return run_conv(ctx, args, nargs, CM_CONV, 0);
}
PTERUN_KERNEL(cm_quantized_conv2d_nhwc_out) {
  return run_conv(ctx, args, nargs, CM_CONV, 1);
}
PTERUN_KERNEL(cm_quantized_depthwise_conv2d_out) {
  return run_conv(ctx, args, nargs, CM_DEPTHWISE, 0);
}
PTERUN_KERNEL(cm_quantized_depthwise_conv2d_nhwc_out) {
  return run_conv(ctx, args, nargs, CM_DEPTHWISE, 1);
}
PTERUN_KERNEL(cm_quantized_transpose_conv2d_out) {
  return run_conv(ctx, args, nargs, CM_TRANSPOSE, 0);
}
PTERUN_KERNEL(cm_quantized_transpose_conv2d_nhwc_out) {
  return run_conv(ctx, args, nargs, CM_TRANSPOSE, 1);
}
