/* The fused int8 operators' schemas (pterun_quantized::*_q8.out, made by the
 * load-time fusion pass from the rows in src/optimize/method_fuse_patterns.inc):
 * each reads its arguments into a qk_i8_call and runs q_int8.c. A schema is
 * the arguments of the instructions it replaces, in order, minus the
 * intermediates (docs/quantized.md "int8 execution"):
 *
 *   input    dequantize_per_tensor: input, scale, zero_point, quant_min,
 *            quant_max, dtype (static: scale double, zero_point int; dynamic
 *            (.Tensor): scale f64[1], zero_point i64[1] tensors)
 *   weight   dequantize_per_channel: input, scales, zero_points, axis (or
 *            dequantize_per_tensor: input, scale, zero_point); linear: then
 *            permute_copy's dims
 *   op       convolution: bias, stride, padding, dilation, transposed,
 *            output_padding, groups; addmm: self (the bias), beta, alpha;
 *            mm (mm_*_q8: a linear without bias): nothing
 *   act      hardtanh: min_val, max_val (relu: nothing)
 *   output   static: quantize_per_tensor's scale, zero_point, quant_min,
 *            quant_max, dtype; then out and the return slot
 */
#include "kernels/quantized/qint8.h"

#include <inttypes.h>

enum { QK_ACT_NONE, QK_ACT_RELU, QK_ACT_HARDTANH };

/* Reads the input's q-params: args[i .. i + 5]. */
static pterun_status read_input_q(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                  qk_i8_call* c) {
  int64_t qmin, qmax;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i, "input", &c->x));
  if (c->dynamic) {
    PTERUN_TRY(pterun_arg_tensor(ctx, args, i + 1, "input_scale", &c->x_scale_t));
    PTERUN_TRY(pterun_arg_tensor(ctx, args, i + 2, "input_zero_point", &c->x_zp_t));
  } else {
    PTERUN_TRY(pterun_arg_double(ctx, args, i + 1, "input_scale", &c->x_scale));
    PTERUN_TRY(pterun_arg_int(ctx, args, i + 2, "input_zero_point", &c->x_zp));
  }
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 3, "input_quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 4, "input_quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 5, "input_dtype", &c->x_dtype));
  if (c->x_dtype != PTERUN_DTYPE_U8 && c->x_dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg 'input_dtype': %s is not int8 or uint8",
                           pterun_dtype_name((int)c->x_dtype));
  return PTERUN_STATUS_OK;
}

/* Weight q-params: args[i .. i + 3] (per channel) or [i .. i + 2] (per
 * tensor, a double scale); returns the next index in *next. */
static pterun_status read_weight_q(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                   size_t i, qk_i8_call* c, size_t* next) {
  pterun_tensor *w, *sc = NULL, *zp = NULL;
  int64_t axis = 0;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i, "weight", &w));
  c->wq.w = w;
  if (i + 1 < nargs && args[i + 1]->tag == PTERUN_VALUE_TENSOR) {
    PTERUN_TRY(pterun_arg_tensor(ctx, args, i + 1, "weight_scales", &sc));
    PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i + 2, "weight_zero_points", &zp));
    PTERUN_TRY(pterun_arg_int(ctx, args, i + 3, "weight_axis", &axis));
    /* NOT_SUPPORTED: in prepare that declines the fusion (method_prepare.c
     * puts the chain back), e.g. a transposed convolution's weight
     * quantized along its output channels, axis 1. */
    if (axis != 0 && axis != -(int64_t)w->rank)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                                "arg 'weight_axis': %" PRId64 " (the fused kernels take axis 0)",
                                axis);
    c->wq.scales = sc;
    c->wq.zps = zp;
    *next = i + 4;
  } else {
    PTERUN_TRY(pterun_arg_double(ctx, args, i + 1, "weight_scale", &c->wq.scale));
    PTERUN_TRY(pterun_arg_int(ctx, args, i + 2, "weight_zero_point", &c->wq.zp));
    *next = i + 3;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status read_beta_alpha(pterun_kernel_context* ctx, pterun_value** args, size_t i) {
  pterun_scalar beta, alpha;
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i, "beta", &beta));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i + 1, "alpha", &alpha));
  if ((beta.is_float ? beta.d : (double)beta.i) != 1.0 ||
      (alpha.is_float ? alpha.d : (double)alpha.i) != 1.0)
    return PTERUN_FAIL_ARG(ctx, "arg 'beta'/'alpha': the fused linear takes 1 and 1");
  return PTERUN_STATUS_OK;
}

static pterun_status read_activation(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                     int act, qk_i8_out* o, size_t* next) {
  *next = i;
  if (act == QK_ACT_RELU) {
    o->has_min = 1;
    o->min = 0.0;
  } else if (act == QK_ACT_HARDTANH) {
    pterun_scalar lo, hi;
    PTERUN_TRY(pterun_arg_scalar(ctx, args, i, "min_val", &lo));
    PTERUN_TRY(pterun_arg_scalar(ctx, args, i + 1, "max_val", &hi));
    o->has_min = o->has_max = 1;
    o->min = lo.is_float ? lo.d : (double)lo.i;
    o->max = hi.is_float ? hi.d : (double)hi.i;
    *next = i + 2;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status read_output_q(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                   qk_i8_call* c) {
  PTERUN_TRY(pterun_arg_double(ctx, args, i, "output_scale", &c->out.scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 1, "output_zero_point", &c->out.zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 2, "output_quant_min", &c->out.qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 3, "output_quant_max", &c->out.qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 4, "output_dtype", &c->out.dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i + 5, "out", &c->outt));
  return PTERUN_STATUS_OK;
}

/* permute_copy's dims of a linear weight: [1, 0] (the weight is [N, K]) or
 * [0, 1] ([K, N]). */
static pterun_status read_dims(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                               qk_i8_call* c) {
  const int64_t* d;
  size_t len;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i, "dims", &d, &len, 0));
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'dims': want a permutation of 2 dimensions");
  const int transpose = (d[0] == 1 || d[0] == -1) && (d[1] == 0 || d[1] == -2);
  const int identity = (d[0] == 0 || d[0] == -2) && (d[1] == 1 || d[1] == -1);
  if (!transpose && !identity)
    return PTERUN_FAIL_ARG(ctx, "arg 'dims': want a permutation of 2 dimensions");
  c->w_kn = identity;
  return PTERUN_STATUS_OK;
}

/* conv2d: 6 input + 4 (or 3) weight + 7 conv (+ 2 hardtanh) + 6 output. */
static pterun_status read_conv(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               int act, qk_i8_call* c) {
  size_t i, len;
  const int64_t* l;
  int transposed;
  memset(c, 0, sizeof *c);
  c->conv = 1;
  if (nargs < 23) return PTERUN_FAIL_ARG(ctx, "expected at least 23 arguments, got %zu", nargs);
  PTERUN_TRY(read_input_q(ctx, args, 0, c));
  PTERUN_TRY(read_weight_q(ctx, args, nargs, 6, c, &i));
  PTERUN_CHECK_NARGS(ctx, nargs, i + 7 + (act == QK_ACT_HARDTANH ? 2 : 0) + 7);
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i, "bias", &c->bias));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i + 1, "stride", &c->stride, &len, 0));
  if (len == 1) /* a 1-D convolution: declines the fusion in prepare (the chain runs unfused) */
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'stride': the fused conv2d is 2-D, this convolution 1-D");
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'stride': want 2 values (conv2d)");
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i + 2, "padding", &c->padding, &len, 0));
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'padding': want 2 values (conv2d)");
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i + 3, "dilation", &c->dilation, &len, 0));
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'dilation': want 2 values (conv2d)");
  PTERUN_TRY(pterun_arg_bool(ctx, args, i + 4, "transposed", &transposed));
  if (transposed) /* declines the fusion in prepare, as above */
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'transposed': the fused conv2d is not transposed");
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i + 5, "output_padding", &l, &len, 0));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 6, "groups", &c->groups));
  PTERUN_TRY(read_activation(ctx, args, i + 7, act, &c->out, &i));
  return read_output_q(ctx, args, i, c);
}

/* conv2d_q8_hardtanh_q8 (32 arguments): 6 input + 4 weight + bias, stride,
 * padding, dilation, transposed, groups + the first quantize's scale,
 * zero_point, quant_min, quant_max, dtype + the dequantize's scale,
 * zero_point + hardtanh's min_val, max_val + 7 output. */
static pterun_status read_conv_lut(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                   int act, qk_i8_call* c) {
  size_t i = 0, len; /* set by read_weight_q */
  int transposed;
  pterun_scalar lo, hi;
  (void)act;
  memset(c, 0, sizeof *c);
  c->conv = 1;
  c->lut = 1;
  PTERUN_CHECK_NARGS(ctx, nargs, 32);
  PTERUN_TRY(read_input_q(ctx, args, 0, c));
  PTERUN_TRY(read_weight_q(ctx, args, nargs, 6, c, &i));
  if (i != 10) return PTERUN_FAIL_ARG(ctx, "arg 'weight': want per-channel q-params");
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 10, "bias", &c->bias));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 11, "stride", &c->stride, &len, 0));
  if (len == 1)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'stride': the fused conv2d is 2-D, this convolution 1-D");
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'stride': want 2 values (conv2d)");
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 12, "padding", &c->padding, &len, 0));
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'padding': want 2 values (conv2d)");
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 13, "dilation", &c->dilation, &len, 0));
  if (len != 2) return PTERUN_FAIL_ARG(ctx, "arg 'dilation': want 2 values (conv2d)");
  PTERUN_TRY(pterun_arg_bool(ctx, args, 14, "transposed", &transposed));
  if (transposed)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'transposed': the fused conv2d is not transposed");
  PTERUN_TRY(pterun_arg_int(ctx, args, 15, "groups", &c->groups));
  PTERUN_TRY(pterun_arg_double(ctx, args, 16, "output_scale", &c->out.scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, 17, "output_zero_point", &c->out.zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 18, "output_quant_min", &c->out.qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 19, "output_quant_max", &c->out.qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 20, "output_dtype", &c->out.dtype));
  /* the dequantize reads the first quantize's codes: their dtype and range */
  PTERUN_TRY(pterun_arg_double(ctx, args, 21, "input_scale", &c->lut_in.scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, 22, "input_zero_point", &c->lut_in.zp));
  c->lut_in.qmin = c->out.qmin;
  c->lut_in.qmax = c->out.qmax;
  c->lut_in.dtype = c->out.dtype;
  /* as hardtanh_q8 reads them (q_int8_lut.c) */
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 23, "min_val", &lo));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 24, "max_val", &hi));
  c->lut_lo = (float)lo.d;
  c->lut_hi = (float)hi.d;
  PTERUN_TRY(qk_arg_q8(ctx, args, 25, 1, &c->lut_out));
  return pterun_arg_tensor(ctx, args, 30, "out", &c->outt);
}

/* linear: 6 input + 4 (or 3) weight + dims + bias, beta, alpha (+ 2 hardtanh)
 * + static: 7 output / dynamic: out and the return slot. */
static pterun_status read_linear_common(pterun_kernel_context* ctx, pterun_value** args,
                                        size_t nargs, int act, qk_i8_call* c, size_t* next) {
  size_t i = 0; /* set by read_weight_q (aarch64 GCC -O3 cannot tell) */
  /* the fewest: dynamic, per-tensor weight (3 slots), no activation */
  if (nargs < 15) return PTERUN_FAIL_ARG(ctx, "expected at least 15 arguments, got %zu", nargs);
  PTERUN_TRY(read_input_q(ctx, args, 0, c));
  PTERUN_TRY(read_weight_q(ctx, args, nargs, 6, c, &i));
  PTERUN_CHECK_NARGS(ctx, nargs, i + 4 + (act == QK_ACT_HARDTANH ? 2 : 0) + (c->dynamic ? 2 : 7));
  PTERUN_TRY(read_dims(ctx, args, i, c));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i + 1, "bias", &c->bias));
  PTERUN_TRY(read_beta_alpha(ctx, args, i + 2));
  return read_activation(ctx, args, i + 4, act, &c->out, next);
}

/* mm (a linear without bias): 6 input + 4 (or 3) weight + dims (+ 2
 * hardtanh) + static: 7 output / dynamic: out and the return slot. */
static pterun_status read_mm_common(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                    int act, qk_i8_call* c, size_t* next) {
  size_t i = 0; /* set by read_weight_q */
  if (nargs < 12) return PTERUN_FAIL_ARG(ctx, "expected at least 12 arguments, got %zu", nargs);
  PTERUN_TRY(read_input_q(ctx, args, 0, c));
  PTERUN_TRY(read_weight_q(ctx, args, nargs, 6, c, &i));
  PTERUN_CHECK_NARGS(ctx, nargs, i + 1 + (act == QK_ACT_HARDTANH ? 2 : 0) + (c->dynamic ? 2 : 7));
  PTERUN_TRY(read_dims(ctx, args, i, c));
  c->bias = NULL;
  return read_activation(ctx, args, i + 1, act, &c->out, next);
}

/* linear or mm (`mm`), static (quantized output) or dynamic (float out). */
static pterun_status read_matrix(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                 int act, qk_i8_call* c, int mm, int dynamic) {
  size_t i = 0; /* set by read_*_common; aarch64 GCC 12 -O3 cannot tell */
  memset(c, 0, sizeof *c);
  c->dynamic = dynamic;
  PTERUN_TRY(mm ? read_mm_common(ctx, args, nargs, act, c, &i)
                : read_linear_common(ctx, args, nargs, act, c, &i));
  return dynamic ? pterun_arg_tensor(ctx, args, i, "out", &c->outt)
                 : read_output_q(ctx, args, i, c);
}

#define QK_READ_MATRIX(name, mm, dynamic)                                                          \
  static pterun_status name(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,         \
                            int act, qk_i8_call* c) {                                              \
    return read_matrix(ctx, args, nargs, act, c, mm, dynamic);                                     \
  }
QK_READ_MATRIX(read_linear, 0, 0)
QK_READ_MATRIX(read_dynamic, 0, 1)
QK_READ_MATRIX(read_mm, 1, 0)
QK_READ_MATRIX(read_mm_dynamic, 1, 1)

typedef pterun_status (*qk_reader)(pterun_kernel_context*, pterun_value**, size_t, int,
                                   qk_i8_call*);

static pterun_status run(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                         qk_reader read, int act) {
  qk_i8_call c;
  PTERUN_TRY(read(ctx, args, nargs, act, &c));
  return pterun_kernel_preparing(ctx) ? qk_i8_prepare(ctx, &c) : qk_i8_execute(ctx, &c);
}

/* One function per operator serves as both `prepare` and `fn`: the context
 * says which (pterun_kernel_preparing). */
#define QK_I8_OP(fn, read, act)                                                                    \
  PTERUN_KERNEL(fn) {                                                                              \
    return run(ctx, args, nargs, read, act);                                                       \
  }
QK_I8_OP(qk_conv2d_q8_out, read_conv, QK_ACT_NONE)
QK_I8_OP(qk_conv2d_relu_q8_out, read_conv, QK_ACT_RELU)
QK_I8_OP(qk_conv2d_hardtanh_q8_out, read_conv, QK_ACT_HARDTANH)
QK_I8_OP(qk_conv2d_q8_hardtanh_q8_out, read_conv_lut, QK_ACT_NONE)
QK_I8_OP(qk_linear_q8_out, read_linear, QK_ACT_NONE)
QK_I8_OP(qk_linear_relu_q8_out, read_linear, QK_ACT_RELU)
QK_I8_OP(qk_linear_hardtanh_q8_out, read_linear, QK_ACT_HARDTANH)
QK_I8_OP(qk_linear_dynamic_q8_out, read_dynamic, QK_ACT_NONE)
QK_I8_OP(qk_linear_dynamic_relu_q8_out, read_dynamic, QK_ACT_RELU)
QK_I8_OP(qk_linear_dynamic_hardtanh_q8_out, read_dynamic, QK_ACT_HARDTANH)
QK_I8_OP(qk_mm_q8_out, read_mm, QK_ACT_NONE)
QK_I8_OP(qk_mm_relu_q8_out, read_mm, QK_ACT_RELU)
QK_I8_OP(qk_mm_hardtanh_q8_out, read_mm, QK_ACT_HARDTANH)
QK_I8_OP(qk_mm_dynamic_q8_out, read_mm_dynamic, QK_ACT_NONE)
QK_I8_OP(qk_mm_dynamic_relu_q8_out, read_mm_dynamic, QK_ACT_RELU)
QK_I8_OP(qk_mm_dynamic_hardtanh_q8_out, read_mm_dynamic, QK_ACT_HARDTANH)
