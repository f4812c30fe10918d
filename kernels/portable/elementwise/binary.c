/* Arithmetic binary operators: add, sub, rsub, mul, div (+ rounding modes),
 * floor_divide, remainder, fmod, pow, maximum, minimum, atan2. */
#include <tgmath.h>

#include "kernels/portable/ew.h"

/* ---- scalar helpers (ATen semantics) ---- */

/* Integer division and modulo; a zero divisor flags an error. Divisor -1 is
 * special-cased because INT64_MIN / -1 overflows. */
static inline int64_t idiv_trunc(int64_t a, int64_t b, pk_ew_params* p) {
  if (b == 0) {
    p->err = 1;
    return 0;
  }
  return b == -1 ? pk_wsub(0, a) : a / b;
}
static inline int64_t idiv_floor(int64_t a, int64_t b, pk_ew_params* p) {
  int64_t q;
  if (b == 0 || b == -1) return idiv_trunc(a, b, p);
  q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
static inline int64_t imod_c(int64_t a, int64_t b, pk_ew_params* p) {
  if (b == 0) {
    p->err = 1;
    return 0;
  }
  return b == -1 ? 0 : a % b;
}
static inline int64_t imod_py(int64_t a, int64_t b, pk_ew_params* p) {
  int64_t r = imod_c(a, b, p);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
/* Integer power by squaring; negative exponents give 1, +-1 or 0 as ATen. */
static inline int64_t ipow(int64_t base, int64_t e) {
  int64_t r = 1;
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  while (e) {
    if (e & 1) r = pk_wmul(r, base);
    e >>= 1;
    base = pk_wmul(base, base);
  }
  return r;
}

/* Python-style floor division and modulo for floats, computed in T so the
 * float32 result matches ATen's float computation. */
#define DEF_FLOAT_HELPERS(T, sfx)                                                                  \
  static inline T floordiv_##sfx(T a, T b) {                                                       \
    T mod, div, fl;                                                                                \
    if (b == 0) return a / b;                                                                      \
    mod = fmod(a, b);                                                                              \
    div = (a - mod) / b;                                                                           \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                                              \
    if (div == 0) return copysign((T)0, a / b);                                                    \
    fl = floor(div);                                                                               \
    if (div - fl > (T)0.5) fl += 1;                                                                \
    return fl;                                                                                     \
  }                                                                                                \
  static inline T pymod_##sfx(T a, T b) {                                                          \
    T r = fmod(a, b);                                                                              \
    if (r != 0 && ((b < 0) != (r < 0))) r += b;                                                    \
    return r;                                                                                      \
  }                                                                                                \
  static inline T max_##sfx(T a, T b) {                                                            \
    if (a != a || b != b) return (T)NAN;                                                           \
    return a < b ? b : a;                                                                          \
  }                                                                                                \
  static inline T min_##sfx(T a, T b) {                                                            \
    if (a != a || b != b) return (T)NAN;                                                           \
    return b < a ? b : a;                                                                          \
  }
DEF_FLOAT_HELPERS(float, f)
DEF_FLOAT_HELPERS(double, d)
#define FLOORDIV(x, y) _Generic((x), float: floordiv_f, default: floordiv_d)(x, y)
#define PYMOD(x, y) _Generic((x), float: pymod_f, default: pymod_d)(x, y)
#define FMAX(x, y) _Generic((x), float: max_f, default: max_d)(x, y)
#define FMIN(x, y) _Generic((x), float: min_f, default: min_d)(x, y)

/* ---- op descriptors ---- */
PK_DEF_BINOP(op_add, x + y, pk_wadd(x, y))
PK_DEF_BINOP(op_add_alpha, x + (pk_T)p->a * y, pk_wadd(x, pk_wmul(p->ia, y)))
PK_DEF_BINOP(op_sub, x - y, pk_wsub(x, y))
PK_DEF_BINOP(op_sub_alpha, x - (pk_T)p->a * y, pk_wsub(x, pk_wmul(p->ia, y)))
PK_DEF_BINOP(op_rsub_alpha, y - (pk_T)p->a * x, pk_wsub(y, pk_wmul(p->ia, x)))
PK_DEF_BINOP(op_mul, x* y, pk_wmul(x, y))
PK_DEF_BINOP_F(op_div, x / y)
PK_DEF_BINOP(op_div_trunc, trunc(x / y), idiv_trunc(x, y, p))
PK_DEF_BINOP(op_div_floor, FLOORDIV(x, y), idiv_floor(x, y, p))
PK_DEF_BINOP(op_remainder, PYMOD(x, y), imod_py(x, y, p))
PK_DEF_BINOP(op_fmod, fmod(x, y), imod_c(x, y, p))
PK_DEF_BINOP(op_pow, pow(x, y), ipow(x, y))
PK_DEF_BINOP(op_pow2, ((void)y, x* x),
             ((void)y, pk_wmul(x, x))) /* exponent 2, as ATen special-cases */
PK_DEF_BINOP(op_maximum, FMAX(x, y), x < y ? y : x)
PK_DEF_BINOP(op_minimum, FMIN(x, y), y < x ? y : x)
PK_DEF_BINOP_F(op_atan2, atan2(x, y))

/* ---- shared kernel bodies ---- */

/* Runs op on (self, other) where other is a Tensor (is_scalar 0) or a
 * Scalar; compute dtype is the common dtype, or float32 for integral inputs
 * when float_only. */
static pterun_status run_binary(pterun_kernel_context* ctx, pterun_value** args, size_t out_idx,
                                int is_scalar, const pk_binary_op* op, int float_only,
                                pk_ew_params* p, int* common_out) {
  pterun_tensor *a, *b = NULL, *out;
  pterun_scalar s;
  pk_scalar_tensor st;
  int common, cdt;
  if (is_scalar)
    PTERUN_TRY(pk_bin_args_ts(ctx, args, out_idx, &a, &s, &out, &common));
  else
    PTERUN_TRY(pk_bin_args_tt(ctx, args, out_idx, &a, &b, &out, &common));
  if (common_out) *common_out = common;
  cdt = (float_only && !pterun_dtype_is_float(common)) ? PTERUN_DTYPE_F32 : common;
  if (float_only)
    PTERUN_TRY(pk_check_out_float(ctx, out));
  else
    PTERUN_TRY(pk_check_out_cast(ctx, cdt, out));
  if (is_scalar) {
    pk_make_scalar_tensor(&st, &s, cdt);
    b = &st.t;
  }
  return pk_ew_binary(ctx, op, a, b, out, cdt, p);
}

/* add / sub / rsub with alpha: args self, other, alpha, out, out. */
static pterun_status run_alpha(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               int is_scalar, const pk_binary_op* plain,
                               const pk_binary_op* with_alpha, int is_sub) {
  pterun_tensor *a, *b, *out;
  pterun_scalar alpha, s;
  pk_scalar_tensor st;
  pk_ew_params p = {0};
  int common;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 2, "alpha", &alpha));
  if (is_scalar)
    PTERUN_TRY(pk_bin_args_ts(ctx, args, 3, &a, &s, &out, &common));
  else
    PTERUN_TRY(pk_bin_args_tt(ctx, args, 3, &a, &b, &out, &common));
  if (is_sub && common == PTERUN_DTYPE_BOOL)
    return PTERUN_FAIL_ARG(ctx,
                           "subtraction with bool tensors is not supported; use "
                           "logical_xor");
  if (!pk_scalar_fits_category(&alpha, common))
    return PTERUN_FAIL_ARG(ctx, "arg 'alpha': a %s alpha does not fit the %s computation",
                           alpha.is_float ? "float" : "integer", pterun_dtype_name(common));
  PTERUN_TRY(pk_check_out_cast(ctx, common, out));
  if (is_scalar) {
    pk_make_scalar_tensor(&st, &s, common);
    b = &st.t;
  }
  p.a = alpha.d;
  p.ia = alpha.i;
  return pk_ew_binary(ctx, (alpha.d == 1.0 && plain) ? plain : with_alpha, a, b, out, common, &p);
}

pterun_status pk_add_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_alpha(ctx, args, nargs, 0, &op_add, &op_add_alpha, 0);
}
pterun_status pk_add_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_alpha(ctx, args, nargs, 1, &op_add, &op_add_alpha, 0);
}
pterun_status pk_sub_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_alpha(ctx, args, nargs, 0, &op_sub, &op_sub_alpha, 1);
}
pterun_status pk_sub_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_alpha(ctx, args, nargs, 1, &op_sub, &op_sub_alpha, 1);
}
pterun_status pk_rsub_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_alpha(ctx, args, nargs, 1, NULL, &op_rsub_alpha, 1);
}

pterun_status pk_mul_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 0, &op_mul, 0, &p, NULL);
}
pterun_status pk_mul_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 1, &op_mul, 0, &p, NULL);
}

/* Reads a `str? rounding_mode` argument: 0 true division, 1 trunc, 2 floor. */
static pterun_status arg_rounding_mode(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                       int* mode) {
  const pterun_value* v = args[i];
  *mode = 0;
  if (v == NULL || v->tag == PTERUN_VALUE_NONE) return PTERUN_STATUS_OK;
  if (v->tag != PTERUN_VALUE_STRING)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arg %zu 'rounding_mode': expected str or None, got %s", i,
                              pterun_value_tag_name(v->tag));
  if (v->u.str.len == 5 && memcmp(v->u.str.data, "trunc", 5) == 0)
    *mode = 1;
  else if (v->u.str.len == 5 && memcmp(v->u.str.data, "floor", 5) == 0)
    *mode = 2;
  else
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'rounding_mode': expected 'trunc', 'floor' or None, got '%.*s'",
                           (int)v->u.str.len, v->u.str.data);
  return PTERUN_STATUS_OK;
}

static pterun_status run_div(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                             int is_scalar, int has_mode) {
  pk_ew_params p = {0};
  int mode = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, has_mode ? 5 : 4);
  if (has_mode) PTERUN_TRY(arg_rounding_mode(ctx, args, 2, &mode));
  if (mode == 0) return run_binary(ctx, args, has_mode ? 3 : 2, is_scalar, &op_div, 1, &p, NULL);
  return run_binary(ctx, args, 3, is_scalar, mode == 1 ? &op_div_trunc : &op_div_floor, 0, &p,
                    NULL);
}

pterun_status pk_div_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_div(ctx, args, nargs, 0, 0);
}
pterun_status pk_div_out_mode(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_div(ctx, args, nargs, 0, 1);
}
pterun_status pk_div_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return run_div(ctx, args, nargs, 1, 0);
}
pterun_status pk_div_scalar_mode_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  return run_div(ctx, args, nargs, 1, 1);
}

/* Kernels of the form op(self, other, out) with other a Tensor or a Scalar. */
#define DEF_SIMPLE_BINARY(fn_t, fn_s, op, float_only)                                              \
  pterun_status fn_t(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {              \
    pk_ew_params p = {0};                                                                          \
    PTERUN_CHECK_NARGS(ctx, nargs, 4);                                                             \
    return run_binary(ctx, args, 2, 0, &op, float_only, &p, NULL);                                 \
  }                                                                                                \
  pterun_status fn_s(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {              \
    pk_ew_params p = {0};                                                                          \
    PTERUN_CHECK_NARGS(ctx, nargs, 4);                                                             \
    return run_binary(ctx, args, 2, 1, &op, float_only, &p, NULL);                                 \
  }

DEF_SIMPLE_BINARY(pk_remainder_tensor_out, pk_remainder_scalar_out, op_remainder, 0)
DEF_SIMPLE_BINARY(pk_fmod_tensor_out, pk_fmod_scalar_out, op_fmod, 0)

pterun_status pk_floor_divide_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 0, &op_div_floor, 0, &p, NULL);
}
pterun_status pk_maximum_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 0, &op_maximum, 0, &p, NULL);
}
pterun_status pk_minimum_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 0, &op_minimum, 0, &p, NULL);
}
pterun_status pk_atan2_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 0, &op_atan2, 1, &p, NULL);
}

pterun_status pk_pow_tensor_tensor_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pk_ew_params p = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  return run_binary(ctx, args, 2, 0, &op_pow, 0, &p, NULL);
}

pterun_status pk_pow_tensor_scalar_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pk_ew_params p = {0};
  pterun_scalar e;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "exponent", &e));
  if (!e.is_float && !e.is_bool && e.i < 0 && args[0] && args[0]->tag == PTERUN_VALUE_TENSOR &&
      args[0]->u.tensor && !pterun_dtype_is_float(args[0]->u.tensor->dtype))
    return PTERUN_FAIL_ARG(ctx, "integers to negative integer powers are not allowed");
  return run_binary(ctx, args, 2, 1, e.d == 2.0 ? &op_pow2 : &op_pow, 0, &p, NULL);
}

/* pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor out) */
pterun_status pk_pow_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *e, *out;
  pterun_scalar s;
  pk_scalar_tensor st;
  pk_ew_params p = {0};
  int common;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 0, "self", &s));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "exponent", &e));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, e, "exponent"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  common = pk_promote_scalar(e->dtype, &s);
  PTERUN_TRY(pk_check_out_cast(ctx, common, out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", e));
  pk_make_scalar_tensor(&st, &s, common);
  return pk_ew_binary(ctx, &op_pow, &st.t, e, out, common, &p);
}
