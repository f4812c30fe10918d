/* Elementwise Cortex-M operators: quantize / dequantize, quantized add, mul,
 * div, the activation look-up table, minimum / maximum, transpose and pad. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/cortex_m/cm_util.h"

/* ---- quantize / dequantize (quantized_decomposed's float32 formulas) ---------- */

static int qdtype_range(int dtype, int64_t* lo, int64_t* hi) {
  switch (dtype) {
    case PTERUN_DTYPE_I8: *lo = -128, *hi = 127; return 1;
    case PTERUN_DTYPE_U8: *lo = 0, *hi = 255; return 1;
    case PTERUN_DTYPE_I16: *lo = INT16_MIN, *hi = INT16_MAX; return 1;
    case PTERUN_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; return 1;
    default: return 0;
  }
}

static int64_t load_int(const void* p, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_I8: return ((const int8_t*)p)[k];
    case PTERUN_DTYPE_U8: return ((const uint8_t*)p)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)p)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)p)[k];
    default: return ((const int64_t*)p)[k];
  }
}

static void store_int(void* p, int dt, int64_t k, int64_t v) {
  switch (dt) {
    case PTERUN_DTYPE_I8: ((int8_t*)p)[k] = cm_wrap8(v); break;
    case PTERUN_DTYPE_U8: ((uint8_t*)p)[k] = (uint8_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I16: ((int16_t*)p)[k] = (int16_t)cm_wrap32(v); break;
    case PTERUN_DTYPE_I32: ((int32_t*)p)[k] = cm_wrap32(v); break;
    default: ((int64_t*)p)[k] = v; break;
  }
}

/* Reads the shared (input, scale, zero_point, quant_min, quant_max, dtype, out)
 * arguments and checks them. */
static pterun_status qdq_args(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                              pterun_tensor** in, double* scale, int64_t* zp, int64_t* qmin,
                              int64_t* qmax, int64_t* dtype, pterun_tensor** out) {
  int64_t lo, hi;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", in));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "scale", scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "zero_point", zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", out));
  if (!qdtype_range((int)*dtype, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'dtype': %s is not a quantized dtype (int8, uint8, int16, int32)",
                           pterun_dtype_name((int)*dtype));
  if (*qmin < lo || *qmax > hi || *qmin > *qmax)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'quant_min'/'quant_max': [%" PRId64 ", %" PRId64
                           "] must be ordered and inside the range of %s",
                           *qmin, *qmax, pterun_dtype_name((int)*dtype));
  if (!(*scale > 0.0) || !isfinite(*scale) || !((float)*scale > 0.0f) || isinf((float)*scale))
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': %g must be finite and > 0 in float32", *scale);
  PTERUN_TRY(cm_check_i32(ctx, "zero_point", *zp));
  PTERUN_TRY(pterun_check_data(ctx, *in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, *out, "out", *in));
  if (!cm_same_layout(*in, *out))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'out': dim order differs from the input's");
  return PTERUN_STATUS_OK;
}

/* quantize_per_tensor.out: clamp(round(x * (float)(1 / scale)) + zp), in float32. */
PTERUN_KERNEL(cm_quantize_per_tensor_out) {
  pterun_tensor *in, *out;
  double scale;
  int64_t zp, qmin, qmax, dtype, k;
  float inv, zpf;
  PTERUN_TRY(qdq_args(ctx, args, nargs, &in, &scale, &zp, &qmin, &qmax, &dtype, &out));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_F32));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", (int)dtype));
  inv = (float)(1.0 / scale);
  zpf = (float)zp;
  for (k = 0; k < in->numel; ++k) {
    float t = nearbyintf(((const float*)in->data)[k] * inv) + zpf;
    int64_t q;
    if (t != t) /* NaN: torch's clamp keeps it; the int conversion is undefined */
      q = qmin;
    else
      q = t <= (float)qmin ? qmin : t >= (float)qmax ? qmax : (int64_t)t;
    store_int(out->data, out->dtype, k, q);
  }
  return PTERUN_STATUS_OK;
}

/* dequantize_per_tensor.out: ((float)q - (float)zp) * (float)scale. */
PTERUN_KERNEL(cm_dequantize_per_tensor_out) {
  pterun_tensor *in, *out;
  double scale;
  int64_t zp, qmin, qmax, dtype, k;
  float s, zpf;
  PTERUN_TRY(qdq_args(ctx, args, nargs, &in, &scale, &zp, &qmin, &qmax, &dtype, &out));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", (int)dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_F32));
  s = (float)scale;
  zpf = (float)zp;
  for (k = 0; k < in->numel; ++k)
    ((float*)out->data)[k] = ((float)load_int(in->data, in->dtype, k) - zpf) * s;
  return PTERUN_STATUS_OK;
}

/* ---- binary quantized operators ------------------------------------------------ */

/* Output shape of a binary op: the broadcast of self and other. */
static pterun_status binary_out(pterun_kernel_context* ctx, const pterun_tensor* a,
                                const pterun_tensor* b, pterun_tensor* out, pterun_iter* it) {
  int64_t sizes[PTERUN_MAX_RANK];
  size_t rank;
  PTERUN_TRY(pterun_check_data(ctx, a, "self"));
  PTERUN_TRY(pterun_check_data(ctx, b, "other"));
  if (!cm_broadcast_shape(a, b, sizes, &rank))
    return PTERUN_FAIL_ARG(ctx, "args 'self' and 'other': shapes do not broadcast");
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", rank, sizes));
  {
    /* out now has the broadcast shape, so both inputs broadcast to it */
    const pterun_tensor* ins[2] = {a, b};
    pterun_iter_init(it, out, ins, 2);
  }
  return PTERUN_STATUS_OK;
}

static pterun_status check_i8_binary(pterun_kernel_context* ctx, const pterun_tensor* a,
                                     const pterun_tensor* b, const pterun_tensor* out) {
  PTERUN_TRY(pterun_check_dtype(ctx, a, "self", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, b, "other", PTERUN_DTYPE_I8));
  return pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8);
}

/* quantized_add.out(self, self_zero_point, self_multiplier, self_shift, other,
 *   other_zero_point, other_multiplier, other_shift, output_zero_point,
 *   output_multiplier, output_shift, activation_min, activation_max, *, out) */
PTERUN_KERNEL(cm_quantized_add_out) {
  pterun_tensor *a, *b, *out;
  int64_t v[11], k;
  static const char* const kNames[11] = {"self_zero_point",   "self_multiplier",   "self_shift",
                                         "other_zero_point",  "other_multiplier",  "other_shift",
                                         "output_zero_point", "output_multiplier", "output_shift",
                                         "activation_min",    "activation_max"};
  static const size_t kSlots[11] = {1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12};
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 15);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "other", &b));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 13, "out", &out));
  for (k = 0; k < 11; ++k) {
    PTERUN_TRY(pterun_arg_int(ctx, args, kSlots[k], kNames[k], &v[k]));
    PTERUN_TRY(cm_check_i32(ctx, kNames[k], v[k]));
  }
  PTERUN_TRY(cm_check_requant(ctx, "self_multiplier", v[1], v[2]));
  PTERUN_TRY(cm_check_requant(ctx, "other_multiplier", v[4], v[5]));
  PTERUN_TRY(cm_check_requant(ctx, "output_multiplier", v[7], v[8]));
  PTERUN_TRY(check_i8_binary(ctx, a, b, out));
  PTERUN_TRY(binary_out(ctx, a, b, out, &it));
  for (k = 0; k < out->numel; ++k, pterun_iter_next(&it)) {
    int64_t x = ((const int8_t*)a->data)[it.off[1]], y = ((const int8_t*)b->data)[it.off[2]];
    /* (q - zp) << 20 in int32, as the reference (and CMSIS-NN) does */
    int32_t xs = cm_wrap32((int64_t)((uint64_t)(int64_t)cm_wrap32(x - v[0]) << 20));
    int32_t ys = cm_wrap32((int64_t)((uint64_t)(int64_t)cm_wrap32(y - v[3]) << 20));
    int32_t xf = cm_requantize(xs, (int32_t)v[1], (int32_t)v[2]);
    int32_t yf = cm_requantize(ys, (int32_t)v[4], (int32_t)v[5]);
    int32_t r = cm_requantize(cm_wrap32((int64_t)xf + yf), (int32_t)v[7], (int32_t)v[8]);
    ((int8_t*)out->data)[it.off[0]] =
        cm_wrap8(cm_clamp64(cm_wrap32((int64_t)r + v[6]), v[9], v[10]));
  }
  return PTERUN_STATUS_OK;
}

/* quantized_mul.out(self, self_zero_point, other, other_zero_point,
 *   output_zero_point, output_multiplier, output_shift, *, out) */
PTERUN_KERNEL(cm_quantized_mul_out) {
  pterun_tensor *a, *b, *out;
  int64_t zpa, zpb, zpo, mult, shift, k;
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &a));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "self_zero_point", &zpa));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "other", &b));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "other_zero_point", &zpb));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "output_zero_point", &zpo));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "output_multiplier", &mult));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "output_shift", &shift));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  PTERUN_TRY(cm_check_i32(ctx, "self_zero_point", zpa));
  PTERUN_TRY(cm_check_i32(ctx, "other_zero_point", zpb));
  PTERUN_TRY(cm_check_i32(ctx, "output_zero_point", zpo));
  PTERUN_TRY(cm_check_requant(ctx, "output_multiplier", mult, shift));
  PTERUN_TRY(check_i8_binary(ctx, a, b, out));
  PTERUN_TRY(binary_out(ctx, a, b, out, &it));
  for (k = 0; k < out->numel; ++k, pterun_iter_next(&it)) {
    int32_t x = cm_wrap32(((const int8_t*)a->data)[it.off[1]] - zpa);
    int32_t y = cm_wrap32(((const int8_t*)b->data)[it.off[2]] - zpb);
    int32_t r = cm_requantize(cm_wrap32((int64_t)x * y), (int32_t)mult, (int32_t)shift);
    ((int8_t*)out->data)[it.off[0]] = cm_wrap8(cm_clamp64(cm_wrap32((int64_t)r + zpo), -128, 127));
  }
  return PTERUN_STATUS_OK;
}

/* quantized_div.out(self, self_zero_point, other, other_zero_point,
 *   output_zero_point, float output_scale, *, out): the float32 quotient of the
 * zero-point-corrected operands (0 where the divisor is 0), scaled, rounded
 * half to even, offset and clamped to the dtype (int8 or int16). */
PTERUN_KERNEL(cm_quantized_div_out) {
  pterun_tensor *a, *b, *out;
  int64_t zpa, zpb, zpo, k, lo = 0, hi = 0;
  double scale;
  float s, zpf;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &a));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "self_zero_point", &zpa));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "other", &b));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "other_zero_point", &zpb));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "output_zero_point", &zpo));
  PTERUN_TRY(pterun_arg_double(ctx, args, 5, "output_scale", &scale));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  PTERUN_TRY(cm_check_i32(ctx, "self_zero_point", zpa));
  PTERUN_TRY(cm_check_i32(ctx, "other_zero_point", zpb));
  PTERUN_TRY(cm_check_i32(ctx, "output_zero_point", zpo));
  if (a->dtype != PTERUN_DTYPE_I8 && a->dtype != PTERUN_DTYPE_I16)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': expected int8 or int16, got %s",
                           pterun_dtype_name(a->dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, b, "other", a->dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", a->dtype));
  if (!cm_same_layout(a, b) || !isfinite((float)scale))
    return PTERUN_FAIL_ARG(ctx,
                           "args 'self'/'other': identical shapes and a finite scale are required");
  PTERUN_TRY(pterun_check_data(ctx, a, "self"));
  PTERUN_TRY(pterun_check_data(ctx, b, "other"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", a));
  if (!cm_same_layout(a, out))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'out': dim order differs from the input's");
  qdtype_range(a->dtype, &lo, &hi);
  s = (float)scale;
  zpf = (float)zpo;
  for (k = 0; k < a->numel; ++k) {
    float x = (float)cm_wrap32(load_int(a->data, a->dtype, k) - zpa);
    float y = (float)cm_wrap32(load_int(b->data, b->dtype, k) - zpb);
    float r = nearbyintf((y != 0.0f ? x / y : 0.0f) * s) + zpf;
    int64_t q = r <= (float)lo ? lo : r >= (float)hi ? hi : (int64_t)r;
    store_int(out->data, out->dtype, k, q);
  }
  return PTERUN_STATUS_OK;
}

/* quantized_activation.out(input, lut, *, out): out = lut[input + 128]. */
PTERUN_KERNEL(cm_quantized_activation_out) {
  pterun_tensor *in, *lut, *out;
  int64_t k;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "lut", &lut));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, lut, "lut", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8));
  if (lut->numel != 256)
    return PTERUN_FAIL_ARG(ctx, "arg 'lut': expected 256 entries, got %" PRId64, lut->numel);
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_check_data(ctx, lut, "lut"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  if (!cm_same_layout(in, out))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'out': dim order differs from the input's");
  for (k = 0; k < in->numel; ++k)
    ((int8_t*)out->data)[k] = ((const int8_t*)lut->data)[((const int8_t*)in->data)[k] + 128];
  return PTERUN_STATUS_OK;
}

/* ---- minimum / maximum (any real dtype, torch's NaN propagation) ------------------ */

static pterun_status minmax(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            int want_max) {
  pterun_tensor *a, *b, *out, scalar;
  pterun_iter it;
  int64_t k;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "other", &b));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pterun_check_dtype(ctx, b, "other", a->dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", a->dtype));
  if (b->numel == 1) { /* a one-element other keeps self's shape (the reference's meta) */
    scalar = *b;
    scalar.rank = 0;
    b = &scalar;
  }
  PTERUN_TRY(binary_out(ctx, a, b, out, &it));
#define CM_MINMAX(T)                                                                               \
  for (k = 0; k < out->numel; ++k, pterun_iter_next(&it)) {                                        \
    T x = ((const T*)a->data)[it.off[1]], y = ((const T*)b->data)[it.off[2]];                      \
    T r = x != x ? x : y != y ? y : want_max ? (x > y ? x : y) : (x < y ? x : y);                  \
    ((T*)out->data)[it.off[0]] = r;                                                                \
  }
  switch (a->dtype) {
    case PTERUN_DTYPE_I8: CM_MINMAX(int8_t) break;
    case PTERUN_DTYPE_U8: CM_MINMAX(uint8_t) break;
    case PTERUN_DTYPE_I16: CM_MINMAX(int16_t) break;
    case PTERUN_DTYPE_I32: CM_MINMAX(int32_t) break;
    case PTERUN_DTYPE_I64: CM_MINMAX(int64_t) break;
    case PTERUN_DTYPE_F32: CM_MINMAX(float) break;
    default:
      return PTERUN_FAIL_ARG(ctx, "arg 'self': dtype %s not supported",
                             pterun_dtype_name(a->dtype));
  }
#undef CM_MINMAX
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(cm_minimum_out) {
  return minmax(ctx, args, nargs, 0);
}

PTERUN_KERNEL(cm_maximum_out) {
  return minmax(ctx, args, nargs, 1);
}

/* ---- transpose / pad: strided copies ------------------------------------------------ */

static void copy_strided(pterun_iter* it, int64_t n, const void* src, void* dst, size_t es) {
  int64_t k;
  for (k = 0; k < n; ++k, pterun_iter_next(it))
    memcpy((char*)dst + (size_t)it->off[0] * es, (const char*)src + (size_t)it->off[1] * es, es);
}

/* transpose.out(input, int[] perm, *, out): out = input.permute(perm). */
PTERUN_KERNEL(cm_transpose_out) {
  pterun_tensor *in, *out, view;
  const int64_t* perm;
  size_t n, d;
  int seen = 0;
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "perm", &perm, &n, 0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  if (n != in->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'perm': %zu entries for rank %d", n, in->rank);
  view = *in;
  for (d = 0; d < n; ++d) {
    if (perm[d] < 0 || perm[d] >= (int64_t)n || (seen & (1 << perm[d])))
      return PTERUN_FAIL_ARG(ctx, "arg 'perm': not a permutation of the input's dimensions");
    seen |= 1 << perm[d];
    view.sizes[d] = in->sizes[perm[d]];
    view.strides[d] = in->strides[perm[d]];
  }
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", in->dtype));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", n, view.sizes));
  {
    const pterun_tensor* ins[1] = {&view};
    pterun_iter_init(&it, out, ins, 1);
  }
  copy_strided(&it, out->numel, in->data, out->data, pterun_dtype_size(in->dtype));
  return PTERUN_STATUS_OK;
}

/* The reference's is_channels_last(): rank 4 and C == 1, or H == W == 1, or a
 * dim order starting 0, 2. */
static int is_channels_last(const pterun_tensor* t) {
  if (t->rank != 4) return 0;
  if (t->sizes[1] == 1 || (t->sizes[2] == 1 && t->sizes[3] == 1)) return 1;
  return t->dim_order[0] == 0 && t->dim_order[1] == 2;
}

/* pad.out(input, int[] pre_pad, int[] post_pad, int pad_value, *, out): the
 * pads are 4 entries in physical (NHWC for a channels-last input) order, the
 * last `rank` of them for a lower-rank input. */
PTERUN_KERNEL(cm_pad_out) {
  static const int kNhwcInv[4] = {0, 3, 1, 2};
  pterun_tensor *in, *out, view;
  const int64_t *pre_p, *post_p;
  int64_t value, pre[4], post[4], sizes[PTERUN_MAX_RANK], base = 0, k;
  size_t npre, npost, es;
  int rank, off, d, cl;
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "pre_pad", &pre_p, &npre, 0));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 2, "post_pad", &post_p, &npost, 0));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "pad_value", &value));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  rank = in->rank;
  if (npre != 4 || npost != 4 || rank < 1 || rank > 4)
    return PTERUN_FAIL_ARG(ctx, "args 'pre_pad'/'post_pad': 4 entries each and rank 1..4 required");
  cl = is_channels_last(in);
  for (d = 0; d < 4; ++d) {
    pre[d] = cl ? pre_p[kNhwcInv[d]] : pre_p[d];
    post[d] = cl ? post_p[kNhwcInv[d]] : post_p[d];
    if (pre[d] < 0 || post[d] < 0 || pre[d] > INT32_MAX || post[d] > INT32_MAX)
      return PTERUN_FAIL_ARG(ctx, "args 'pre_pad'/'post_pad': pads must be in [0, 2^31)");
  }
  off = 4 - rank;
  for (d = 0; d < rank; ++d) sizes[d] = in->sizes[d] + pre[off + d] + post[off + d];
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", in->dtype));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)rank, sizes));
  es = pterun_dtype_size(in->dtype);
  switch (in->dtype) {
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_I16:
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_I64:
      for (k = 0; k < out->numel; ++k) store_int(out->data, out->dtype, k, value);
      break;
    case PTERUN_DTYPE_F32:
      for (k = 0; k < out->numel; ++k) ((float*)out->data)[k] = (float)value;
      break;
    default:
      return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported",
                             pterun_dtype_name(in->dtype));
  }
  /* the input's box inside out: out's strides, in's sizes, offset by pre */
  view = *out;
  for (d = 0; d < rank; ++d) {
    view.sizes[d] = in->sizes[d];
    base += pre[off + d] * out->strides[d];
  }
  {
    const pterun_tensor* ins[1] = {in};
    pterun_iter_init(&it, &view, ins, 1);
  }
  copy_strided(&it, in->numel, in->data, (char*)out->data + (size_t)base * es, es);
  return PTERUN_STATUS_OK;
}
