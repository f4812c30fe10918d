/* Activations: relu, gelu, hardtanh, clamp (Scalar and Tensor bounds),
 * leaky_relu, elu, glu, hardswish, hardsigmoid, silu. */
#include <tgmath.h>

#include "kernels/portable/ew.h"
#include "pterun/compute.h"

/* min(max(x, lo), hi) with std::min/std::max argument order, so a NaN x stays
 * NaN and lo > hi gives hi (ATen clamp). */
#define CLAMP_LO_HI(x, lo, hi) ((hi) < ((x) < (lo) ? (lo) : (x)) ? (hi) : ((x) < (lo) ? (lo) : (x)))

/* ---- shared runners ---- */

/* Float-only activation: self float, out same dtype category. */
static pterun_status run_float_act(pterun_kernel_context* ctx, pterun_value** args, size_t out_idx,
                                   const pk_unary_op* op, pk_ew_params* p) {
  pterun_tensor *in, *out;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, out_idx, "out", &out));
  if (!pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "self", in->dtype, "is not a floating point dtype");
  PTERUN_TRY(pk_check_out_float(ctx, out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  return pk_ew_unary(ctx, op, in, out, in->dtype, p);
}

/* Activation on any real non-bool dtype, computed in self's dtype. */
static pterun_status run_real_act(pterun_kernel_context* ctx, pterun_value** args, size_t out_idx,
                                  const pk_unary_op* op, pk_ew_params* p, int cdt_override) {
  pterun_tensor *in, *out;
  int cdt;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, out_idx, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  cdt = cdt_override >= 0 ? cdt_override : in->dtype;
  if (cdt == PTERUN_DTYPE_BOOL)
    return pk_fail_dtype(ctx, "self", in->dtype, "is not supported by this operator");
  PTERUN_TRY(pk_check_out_cast(ctx, cdt, out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  return pk_ew_unary(ctx, op, in, out, cdt, p);
}

/* ---- relu ---- */
/* x < 0 ? 0 : x: NaN and -0 stay, as aten::relu and ExecuTorch's relu (and
 * as the compute engine's fused ReLU, so fusing keeps the bits). */
PK_DEF_UNOP(op_relu, x < 0 ? (pk_T)0 : x, x < 0 ? 0 : x)
PTERUN_KERNEL(pk_relu_out) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  return run_real_act(ctx, args, 1, &op_relu, &p, -1);
}

/* ---- hardtanh / clamp with Scalar bounds ---- */
PK_DEF_UNOP(op_clamp, CLAMP_LO_HI(x, (pk_T)p->a, (pk_T)p->b), CLAMP_LO_HI(x, p->ia, p->ib))

PTERUN_KERNEL(pk_hardtanh_out) {
  pk_ew_params p = {0};
  pterun_scalar lo, hi;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "min_val", &lo));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 2, "max_val", &hi));
  p.a = lo.d;
  p.b = hi.d;
  p.ia = lo.i;
  p.ib = hi.i;
  return run_real_act(ctx, args, 3, &op_clamp, &p, -1);
}

PTERUN_KERNEL(pk_clamp_out) {
  pk_ew_params p = {0};
  pterun_scalar lo, hi;
  pterun_tensor* in;
  int has_lo, has_hi, cdt;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 1, "min", &lo, &has_lo));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 2, "max", &hi, &has_hi));
  if (!has_lo && !has_hi)
    return PTERUN_FAIL_ARG(ctx, "at least one of 'min' or 'max' must not be None");
  cdt = in->dtype;
  if (has_lo) cdt = pk_promote_scalar(cdt, &lo);
  if (has_hi) cdt = pk_promote_scalar(cdt, &hi);
  p.a = has_lo ? lo.d : -INFINITY;
  p.b = has_hi ? hi.d : INFINITY;
  p.ia = has_lo ? lo.i : INT64_MIN;
  p.ib = has_hi ? hi.i : INT64_MAX;
  return run_real_act(ctx, args, 3, &op_clamp, &p, cdt);
}

/* clamp.Tensor_out(self, Tensor? min, Tensor? max, *, out): three-way
 * broadcast; a rare op, so one generic strided loop. */
PTERUN_KERNEL(pk_clamp_tensor_out) {
  pterun_tensor *in, *lo, *hi, *out;
  const pterun_tensor* ins[3];
  int64_t sizes[PTERUN_MAX_RANK], n;
  size_t rank;
  pterun_tensor shape;
  pterun_iter it;
  int cdt;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 1, "min", &lo));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "max", &hi));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  if (lo == NULL && hi == NULL)
    return PTERUN_FAIL_ARG(ctx, "at least one of 'min' or 'max' must not be None");
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  cdt = in->dtype;
  shape = *in;
  if (lo) {
    PTERUN_TRY(pk_check_real(ctx, lo, "min"));
    cdt = pterun_promote_types(cdt, lo->dtype);
    PTERUN_TRY(pterun_broadcast_shape(ctx, &shape, "self", lo, "min", sizes, &rank));
    shape.rank = (uint8_t)rank;
    memcpy(shape.sizes, sizes, rank * sizeof(int64_t));
  }
  if (hi) {
    PTERUN_TRY(pk_check_real(ctx, hi, "max"));
    cdt = cdt < 0 ? cdt : pterun_promote_types(cdt, hi->dtype);
    PTERUN_TRY(pterun_broadcast_shape(ctx, &shape, "self", hi, "max", sizes, &rank));
    shape.rank = (uint8_t)rank;
    memcpy(shape.sizes, sizes, rank * sizeof(int64_t));
  }
  if (cdt < 0 || cdt == PTERUN_DTYPE_BOOL)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': unsupported dtype combination for clamp");
  PTERUN_TRY(pk_check_out_cast(ctx, cdt, out));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", shape.rank, shape.sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  ins[0] = in;
  ins[1] = lo;
  ins[2] = hi;
  pterun_iter_init(&it, out, ins, 3);
  for (n = 0; n < out->numel; ++n, pterun_iter_next(&it)) {
    if (pterun_dtype_is_float(cdt)) {
      double x = pterun_round_to_dtype(pterun_load_f64(in->data, in->dtype, it.off[1]), cdt);
      double l = lo ? pterun_round_to_dtype(pterun_load_f64(lo->data, lo->dtype, it.off[2]), cdt)
                    : -INFINITY;
      double h = hi ? pterun_round_to_dtype(pterun_load_f64(hi->data, hi->dtype, it.off[3]), cdt)
                    : INFINITY;
      double r = (l != l || h != h) ? NAN : CLAMP_LO_HI(x, l, h);
      pterun_store_f64(out->data, out->dtype, it.off[0], pterun_round_to_dtype(r, cdt));
    } else {
      int64_t x = pterun_load_i64(in->data, in->dtype, it.off[1]);
      int64_t l = lo ? pterun_load_i64(lo->data, lo->dtype, it.off[2]) : INT64_MIN;
      int64_t h = hi ? pterun_load_i64(hi->data, hi->dtype, it.off[3]) : INT64_MAX;
      pterun_store_i64(out->data, out->dtype, it.off[0], CLAMP_LO_HI(x, l, h));
    }
  }
  return PTERUN_STATUS_OK;
}

/* ---- float-only activations ---- */
PK_DEF_UNOP_F(op_leaky_relu, x > 0 ? x : x * (pk_T)p->a)
PTERUN_KERNEL(pk_leaky_relu_out) {
  pk_ew_params p = {0};
  pterun_scalar slope;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "negative_slope", &slope));
  p.a = slope.d;
  return run_float_act(ctx, args, 2, &op_leaky_relu, &p);
}

/* p->a = alpha * scale, p->b = scale, p->c = input_scale */
PK_DEF_UNOP_F(op_elu, x <= 0 ? expm1(x * (pk_T)p->c) * (pk_T)p->a : x * (pk_T)p->b)
PTERUN_KERNEL(pk_elu_out) {
  pk_ew_params p = {0};
  pterun_scalar alpha, scale, iscale;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "alpha", &alpha));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 2, "scale", &scale));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 3, "input_scale", &iscale));
  p.a = alpha.d * scale.d;
  p.b = scale.d;
  p.c = iscale.d;
  return run_float_act(ctx, args, 4, &op_elu, &p);
}

/* gelu: exact x/2 (1 + erf(x/sqrt 2)) or the tanh approximation. */
#define GELU_KBETA 0.7978845608028654 /* sqrt(2/pi) */
PK_DEF_UNOP_F(op_gelu, (pk_T)0.5 * x * (1 + erf(x * (pk_T)0.70710678118654752440)))
PK_DEF_UNOP_F(op_gelu_tanh,
              (pk_T)0.5 * x * (1 + tanh((pk_T)GELU_KBETA * (x + (pk_T)0.044715 * x * x * x))))
PTERUN_KERNEL(pk_gelu_out) {
  pk_ew_params p = {0};
  const pterun_value* v;
  int use_tanh = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  v = args[1];
  if (v == NULL || v->tag != PTERUN_VALUE_STRING)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arg 1 'approximate': expected str, got %s",
                              v ? pterun_value_tag_name(v->tag) : "null");
  if (v->u.str.len == 4 && memcmp(v->u.str.data, "tanh", 4) == 0)
    use_tanh = 1;
  else if (!(v->u.str.len == 4 && memcmp(v->u.str.data, "none", 4) == 0))
    return PTERUN_FAIL_ARG(ctx, "arg 'approximate': expected 'none' or 'tanh', got '%.*s'",
                           (int)v->u.str.len, v->u.str.data);
  {
    pterun_tensor *in, *out;
    PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
    PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
    if (in->dtype == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_F32 &&
        pterun_out_resize_like(ctx, out, "out", in) == PTERUN_STATUS_OK &&
        pk_try_vmath(ctx, use_tanh ? PTERUN_COMPUTE_GELU_TANH : PTERUN_COMPUTE_GELU, in, out))
      return PTERUN_STATUS_OK;
  }
  return run_float_act(ctx, args, 2, use_tanh ? &op_gelu_tanh : &op_gelu, &p);
}

PK_DEF_UNOP_F(op_hardswish, x* CLAMP_LO_HI(x + 3, (pk_T)0, (pk_T)6) / 6)
PK_DEF_UNOP_F(op_hardsigmoid, CLAMP_LO_HI(x + 3, (pk_T)0, (pk_T)6) / 6)
PK_DEF_UNOP_F(op_silu, x / (1 + exp(-x)))
PTERUN_KERNEL(pk_hardswish_out) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  return run_float_act(ctx, args, 1, &op_hardswish, &p);
}
PTERUN_KERNEL(pk_hardsigmoid_out) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  return run_float_act(ctx, args, 1, &op_hardsigmoid, &p);
}
PTERUN_KERNEL(pk_silu_out) {
  pk_ew_params p = {0};
  pterun_tensor *in, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  if (in->dtype == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_F32 &&
      pterun_out_resize_like(ctx, out, "out", in) == PTERUN_STATUS_OK &&
      pk_try_vmath(ctx, PTERUN_COMPUTE_SILU, in, out))
    return PTERUN_STATUS_OK;
  return run_float_act(ctx, args, 1, &op_silu, &p);
}

/* ---- glu(self, int dim=-1, *, out): a * sigmoid(b) of the two halves ---- */
PK_DEF_BINOP_F(op_glu, x / (1 + exp(-y)))
PTERUN_KERNEL(pk_glu_out) {
  pterun_tensor *in, *out, va, vb;
  pk_ew_params p = {0};
  int64_t dim, half;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  if (!pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "self", in->dtype, "is not a floating point dtype");
  PTERUN_TRY(pk_check_out_float(ctx, out));
  if (in->rank == 0) return PTERUN_FAIL_ARG(ctx, "glu does not support 0-dimensional tensors");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, in->rank, &dim));
  if (in->sizes[dim] % 2 != 0)
    return PTERUN_FAIL_ARG(ctx, "halving dimension must be even, but dimension %d is size %lld",
                           (int)dim, (long long)in->sizes[dim]);
  half = in->sizes[dim] / 2;
  /* Two views of the halves sharing self's strides. */
  va = *in;
  va.sizes[dim] = half;
  va.numel = half == 0 ? 0 : in->numel / 2;
  vb = va;
  if (va.numel > 0)
    vb.data = (char*)in->data + half * in->strides[dim] * (int64_t)pterun_dtype_size(in->dtype);
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", va.rank, va.sizes));
  return pk_ew_binary(ctx, &op_glu, &va, &vb, out, in->dtype, &p);
}
