/* Pointwise unary operators: float functions (sqrt, exp, sin, ...), rounding,
 * abs/neg/sign, isnan/isinf, bitwise_not, logical_not, logit. */
#include <tgmath.h>

#include "kernels/portable/ew.h"
#include "pterun/compute.h"

/* Kernels of the form op(self, *, out): args self, out, out. */

/* Result is float: integral/bool inputs compute in float32, out must be float. */
static pterun_status run_float_unary(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                     const pk_unary_op* op, pk_ew_params* p, size_t out_idx,
                                     int vop) {
  pterun_tensor *in, *out;
  int cdt;
  PTERUN_CHECK_NARGS(ctx, nargs, out_idx + 2);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, out_idx, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_out_float(ctx, out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  if (vop >= 0 && pk_try_vmath(ctx, vop, in, out)) return PTERUN_STATUS_OK;
  cdt = pterun_dtype_is_float(in->dtype) ? in->dtype : PTERUN_DTYPE_F32;
  return pk_ew_unary(ctx, op, in, out, cdt, p);
}

/* Result has self's dtype (cast to out). */
static pterun_status run_same_unary(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                    const pk_unary_op* op, int allow_bool) {
  pterun_tensor *in, *out;
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (!allow_bool && in->dtype == PTERUN_DTYPE_BOOL)
    return pk_fail_dtype(ctx, "self", in->dtype, "is not supported by this operator");
  PTERUN_TRY(pk_check_out_cast(ctx, in->dtype, out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  return pk_ew_unary(ctx, op, in, out, in->dtype, &p);
}

/* Result is bool (cast to out): any real input. */
static pterun_status run_bool_unary(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                    const pk_unary_op* op) {
  pterun_tensor *in, *out;
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  /* Computed in self's dtype; the 0/1 results convert to any out dtype. */
  return pk_ew_unary(ctx, op, in, out, in->dtype, &p);
}

/* VOP: the compute engine's vector function for float32 (-1: none). */
#define DEF_FLOAT_UNARY_V(fn, name, FEXPR, VOP)                                                    \
  PK_DEF_UNOP_F(op_##name, FEXPR)                                                                  \
  pterun_status fn(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {                \
    pk_ew_params p = {0};                                                                          \
    return run_float_unary(ctx, args, nargs, &op_##name, &p, 1, VOP);                              \
  }
#define DEF_FLOAT_UNARY(fn, name, FEXPR) DEF_FLOAT_UNARY_V(fn, name, FEXPR, -1)
#define DEF_SAME_UNARY(fn, name, FEXPR, IEXPR, allow_bool)                                         \
  PK_DEF_UNOP(op_##name, FEXPR, IEXPR)                                                             \
  pterun_status fn(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {                \
    return run_same_unary(ctx, args, nargs, &op_##name, allow_bool);                               \
  }

DEF_FLOAT_UNARY(pk_sqrt_out, sqrt, sqrt(x))
DEF_FLOAT_UNARY(pk_rsqrt_out, rsqrt, (pk_T)1 / sqrt(x))
DEF_FLOAT_UNARY(pk_reciprocal_out, reciprocal, (pk_T)1 / x)
DEF_FLOAT_UNARY_V(pk_exp_out, exp, exp(x), PTERUN_COMPUTE_EXP)
DEF_FLOAT_UNARY(pk_expm1_out, expm1, expm1(x))
DEF_FLOAT_UNARY(pk_log_out, log, log(x))
DEF_FLOAT_UNARY(pk_log1p_out, log1p, log1p(x))
DEF_FLOAT_UNARY(pk_log2_out, log2, log2(x))
DEF_FLOAT_UNARY(pk_log10_out, log10, log10(x))
DEF_FLOAT_UNARY(pk_sin_out, sin, sin(x))
DEF_FLOAT_UNARY(pk_cos_out, cos, cos(x))
DEF_FLOAT_UNARY(pk_tan_out, tan, tan(x))
DEF_FLOAT_UNARY(pk_asin_out, asin, asin(x))
DEF_FLOAT_UNARY(pk_acos_out, acos, acos(x))
DEF_FLOAT_UNARY(pk_atan_out, atan, atan(x))
DEF_FLOAT_UNARY(pk_sinh_out, sinh, sinh(x))
DEF_FLOAT_UNARY(pk_cosh_out, cosh, cosh(x))
DEF_FLOAT_UNARY_V(pk_tanh_out, tanh, tanh(x), PTERUN_COMPUTE_TANH)
DEF_FLOAT_UNARY(pk_asinh_out, asinh, asinh(x))
DEF_FLOAT_UNARY(pk_acosh_out, acosh, acosh(x))
DEF_FLOAT_UNARY(pk_atanh_out, atanh, atanh(x))
DEF_FLOAT_UNARY_V(pk_erf_out, erf, erf(x), PTERUN_COMPUTE_ERF)
DEF_FLOAT_UNARY_V(pk_sigmoid_out, sigmoid, (pk_T)1 / ((pk_T)1 + exp(-x)), PTERUN_COMPUTE_SIGMOID)

DEF_SAME_UNARY(pk_abs_out, abs, fabs(x), x < 0 ? pk_wsub(0, x) : x, 1)
DEF_SAME_UNARY(pk_neg_out, neg, -x, pk_wsub(0, x), 0)
DEF_SAME_UNARY(pk_floor_out, floor, floor(x), x, 1)
DEF_SAME_UNARY(pk_ceil_out, ceil, ceil(x), x, 1)
DEF_SAME_UNARY(pk_trunc_out, trunc, trunc(x), x, 1)
/* round half to even, like std::nearbyint in the default rounding mode */
DEF_SAME_UNARY(pk_round_out, round, nearbyint(x), x, 1)
/* sign(NaN) is 0 here as in ATen's (0 < x) - (x < 0) */
DEF_SAME_UNARY(pk_sign_out, sign, (pk_T)((x > 0) - (x < 0)), (x > 0) - (x < 0), 1)

PK_DEF_UNOP(op_isnan, x != x, ((void)x, 0))
PK_DEF_UNOP(op_isinf, isinf(x) ? 1 : 0, ((void)x, 0))
PK_DEF_UNOP(op_logical_not, x == 0, x == 0)

pterun_status pk_isnan_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_bool_unary(ctx, args, nargs, &op_isnan);
}
pterun_status pk_isinf_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_bool_unary(ctx, args, nargs, &op_isinf);
}
pterun_status pk_logical_not_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  /* bool -> bool in one layout (attention masks): a byte loop. */
  if (in->dtype == PTERUN_DTYPE_BOOL && out->dtype == PTERUN_DTYPE_BOOL &&
      pterun_out_resize_like(ctx, out, "out", in) == PTERUN_STATUS_OK && pk_same_layout(in, out) &&
      in->data != NULL && out->data != NULL && out->nbytes >= (size_t)in->numel) {
    const uint8_t* x = (const uint8_t*)in->data;
    uint8_t* y = (uint8_t*)out->data;
    for (int64_t k = 0; k < in->numel; ++k) y[k] = x[k] == 0;
    return PTERUN_STATUS_OK;
  }
  return run_bool_unary(ctx, args, nargs, &op_logical_not);
}

/* bitwise_not: ~x for integers, logical not for bool, no floats. */
PK_UN_ROW(bnot_i64, int64_t, ~x)
PK_UN_ROW(lnot_i64, int64_t, x == 0)
static const pk_unary_op op_bnot = {NULL, NULL, bnot_i64};
static const pk_unary_op op_bnot_bool = {NULL, NULL, lnot_i64};
pterun_status pk_bitwise_not_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* in;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  if (pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "self", in->dtype, "is not supported by bitwise_not");
  return run_same_unary(ctx, args, nargs, in->dtype == PTERUN_DTYPE_BOOL ? &op_bnot_bool : &op_bnot,
                        1);
}

/* logit(self, float? eps, *, out): log(x / (1 - x)), x clamped to [eps, 1-eps]
 * when eps is given. */
#define LOGIT_CLAMP(x)                                                                             \
  (p->mode ? ((x) < (pk_T)p->a ? (pk_T)p->a : (x) > 1 - (pk_T)p->a ? 1 - (pk_T)p->a : (x)) : (x))
PK_DEF_UNOP_F(op_logit, log(LOGIT_CLAMP(x) / (1 - LOGIT_CLAMP(x))))
pterun_status pk_logit_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  double eps;
  int has;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_opt_double(ctx, args, 1, "eps", &eps, &has));
  if (has && eps >= 0) { /* ATen ignores a negative eps */
    p.mode = 1;
    p.a = eps;
  }
  return run_float_unary(ctx, args, nargs, &op_logit, &p, 2, -1);
}
