/* Comparisons (eq/ne/lt/le/gt/ge), logical_and/or/xor, bitwise and/or/xor and
 * shifts, where.self_out, masked_fill.Scalar_out. */
#include "kernels/portable/ew.h"

/* Comparison descriptors: float32 -> bool fast path, then f64/i64 rows that
 * produce 0/1 in the compute type. */
#define DEF_CMP(name, OP)                                                                          \
  PK_BIN_ROW(name##_f32b, float, uint8_t, x OP y)                                                  \
  PK_BIN_ROW(name##_f64, double, double, x OP y)                                                   \
  PK_BIN_ROW(name##_i64, int64_t, int64_t, x OP y)                                                 \
  static const pk_binary_op name = {NULL, name##_f32b, name##_f64, name##_i64};
DEF_CMP(op_eq, ==)
DEF_CMP(op_ne, !=)
DEF_CMP(op_lt, <)
DEF_CMP(op_le, <=)
DEF_CMP(op_gt, >)
DEF_CMP(op_ge, >=)

/* Comparison and logical ops: computed in the common dtype, result is bool
 * (cast to out, which may have any real dtype). */
static pterun_status run_bool_binary(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                     int is_scalar, const pk_binary_op* op) {
  pterun_tensor *a, *b, *out;
  pterun_scalar s;
  pk_scalar_tensor st;
  pk_ew_params p = {0};
  int common;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  if (is_scalar) {
    PTERUN_TRY(pk_bin_args_ts(ctx, args, 2, &a, &s, &out, &common));
    pk_make_scalar_tensor(&st, &s, common);
    b = &st.t;
  } else {
    PTERUN_TRY(pk_bin_args_tt(ctx, args, 2, &a, &b, &out, &common));
  }
  return pk_ew_binary(ctx, op, a, b, out, common, &p);
}

#define DEF_CMP_KERNELS(fn_t, fn_s, op)                                                            \
  PTERUN_KERNEL(fn_t) {                                                                            \
    return run_bool_binary(ctx, args, nargs, 0, &op);                                              \
  }                                                                                                \
  PTERUN_KERNEL(fn_s) {                                                                            \
    return run_bool_binary(ctx, args, nargs, 1, &op);                                              \
  }
DEF_CMP_KERNELS(pk_eq_tensor_out, pk_eq_scalar_out, op_eq)
DEF_CMP_KERNELS(pk_ne_tensor_out, pk_ne_scalar_out, op_ne)
DEF_CMP_KERNELS(pk_lt_tensor_out, pk_lt_scalar_out, op_lt)
DEF_CMP_KERNELS(pk_le_tensor_out, pk_le_scalar_out, op_le)
DEF_CMP_KERNELS(pk_gt_tensor_out, pk_gt_scalar_out, op_gt)
DEF_CMP_KERNELS(pk_ge_tensor_out, pk_ge_scalar_out, op_ge)

/* logical_*: truthiness of each operand (NaN is true). */
PK_DEF_BINOP(op_land, (x != 0) && (y != 0), (x != 0) && (y != 0))
PK_DEF_BINOP(op_lor, (x != 0) || (y != 0), (x != 0) || (y != 0))
PK_DEF_BINOP(op_lxor, (x != 0) != (y != 0), (x != 0) != (y != 0))
PTERUN_KERNEL(pk_logical_and_out) {
  return run_bool_binary(ctx, args, nargs, 0, &op_land);
}
PTERUN_KERNEL(pk_logical_or_out) {
  return run_bool_binary(ctx, args, nargs, 0, &op_lor);
}
PTERUN_KERNEL(pk_logical_xor_out) {
  return run_bool_binary(ctx, args, nargs, 0, &op_lxor);
}

/* ---- bitwise ops: integral and bool only ---- */
static inline int64_t shl_i64(int64_t a, int64_t b, int bits) {
  /* ATen: shifting by >= the width (or a negative amount) gives 0. */
  if (b < 0 || b >= bits) return 0;
  return (int64_t)((uint64_t)a << b);
}
static inline int64_t shr_i64(int64_t a, int64_t b, int bits) {
  /* Arithmetic shift; out-of-range amounts give the sign fill. */
  if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
  return a >> b; /* arithmetic on gcc/clang (implementation-defined in C) */
}
PK_BIN_ROW(band_i64, int64_t, int64_t, x& y)
PK_BIN_ROW(bor_i64, int64_t, int64_t, x | y)
PK_BIN_ROW(bxor_i64, int64_t, int64_t, x ^ y)
PK_BIN_ROW(shl_row, int64_t, int64_t, shl_i64(x, y, (int)p->ia))
PK_BIN_ROW(shr_row, int64_t, int64_t, shr_i64(x, y, (int)p->ia))
static const pk_binary_op op_band = {NULL, NULL, NULL, band_i64};
static const pk_binary_op op_bor = {NULL, NULL, NULL, bor_i64};
static const pk_binary_op op_bxor = {NULL, NULL, NULL, bxor_i64};
static const pk_binary_op op_shl = {NULL, NULL, NULL, shl_row};
static const pk_binary_op op_shr = {NULL, NULL, NULL, shr_row};

static pterun_status run_bitwise(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                 int is_scalar, const pk_binary_op* op, int is_shift) {
  pterun_tensor *a, *b, *out;
  pterun_scalar s;
  pk_scalar_tensor st;
  pk_ew_params p = {0};
  int common;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  if (is_scalar)
    PTERUN_TRY(pk_bin_args_ts(ctx, args, 2, &a, &s, &out, &common));
  else
    PTERUN_TRY(pk_bin_args_tt(ctx, args, 2, &a, &b, &out, &common));
  if (pterun_dtype_is_float(common))
    return pk_fail_dtype(ctx, "self", common, "is not supported by bitwise operators");
  PTERUN_TRY(pk_check_out_cast(ctx, common, out));
  if (is_scalar) {
    pk_make_scalar_tensor(&st, &s, common);
    b = &st.t;
  }
  if (is_shift) {
    /* shift width of the compute dtype; bool shifts as uint8 */
    size_t w = common == PTERUN_DTYPE_BOOL ? 1 : pterun_dtype_size(common);
    p.ia = (int64_t)w * 8;
  }
  return pk_ew_binary(ctx, op, a, b, out, common, &p);
}

#define DEF_BITWISE(fn_t, fn_s, op, is_shift)                                                      \
  PTERUN_KERNEL(fn_t) {                                                                            \
    return run_bitwise(ctx, args, nargs, 0, &op, is_shift);                                        \
  }                                                                                                \
  PTERUN_KERNEL(fn_s) {                                                                            \
    return run_bitwise(ctx, args, nargs, 1, &op, is_shift);                                        \
  }
DEF_BITWISE(pk_bitwise_and_tensor_out, pk_bitwise_and_scalar_out, op_band, 0)
DEF_BITWISE(pk_bitwise_or_tensor_out, pk_bitwise_or_scalar_out, op_bor, 0)
DEF_BITWISE(pk_bitwise_xor_tensor_out, pk_bitwise_xor_scalar_out, op_bxor, 0)
DEF_BITWISE(pk_bitwise_left_shift_tensor_out, pk_bitwise_left_shift_tensor_scalar_out, op_shl, 1)
DEF_BITWISE(pk_bitwise_right_shift_tensor_out, pk_bitwise_right_shift_tensor_scalar_out, op_shr, 1)

/* ---- where.self_out(condition, self, other, *, out) ---- */

static pterun_status where_shape(pterun_kernel_context* ctx, const pterun_tensor* c,
                                 const pterun_tensor* a, const pterun_tensor* b,
                                 pterun_tensor* shape) {
  int64_t sizes[PTERUN_MAX_RANK];
  size_t rank;
  *shape = *c;
  PTERUN_TRY(pterun_broadcast_shape(ctx, shape, "condition", a, "self", sizes, &rank));
  shape->rank = (uint8_t)rank;
  memcpy(shape->sizes, sizes, rank * sizeof(int64_t));
  PTERUN_TRY(pterun_broadcast_shape(ctx, shape, "condition/self", b, "other", sizes, &rank));
  shape->rank = (uint8_t)rank;
  memcpy(shape->sizes, sizes, rank * sizeof(int64_t));
  return PTERUN_STATUS_OK;
}

/* Copies the chosen element; the same-dtype case moves raw bytes. */
static void select_elem(pterun_tensor* out, int64_t oo, const pterun_tensor* src, int64_t so) {
  if (src->dtype == out->dtype) {
    size_t es = pterun_dtype_size(out->dtype);
    memcpy((char*)out->data + oo * (int64_t)es, (const char*)src->data + so * (int64_t)es, es);
  } else if (pterun_dtype_is_float(src->dtype)) {
    pterun_store_f64(out->data, out->dtype, oo, pterun_load_f64(src->data, src->dtype, so));
  } else {
    pterun_store_i64(out->data, out->dtype, oo, pterun_load_i64(src->data, src->dtype, so));
  }
}

PTERUN_KERNEL(pk_where_self_out) {
  pterun_tensor *c, *a, *b, *out, shape;
  const pterun_tensor* ins[3];
  pterun_iter it;
  int64_t n;
  int common;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "condition", &c));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "self", &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "other", &b));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  if (c->dtype != PTERUN_DTYPE_BOOL && c->dtype != PTERUN_DTYPE_U8)
    return pk_fail_dtype(ctx, "condition", c->dtype, "must be bool or uint8");
  PTERUN_TRY(pk_check_real(ctx, a, "self"));
  PTERUN_TRY(pk_check_real(ctx, b, "other"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  common = pterun_promote_types(a->dtype, b->dtype);
  if (common < 0) return pk_fail_dtype(ctx, "other", b->dtype, "has no common type with self");
  PTERUN_TRY(pk_check_out_cast(ctx, common, out));
  PTERUN_TRY(where_shape(ctx, c, a, b, &shape));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", shape.rank, shape.sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  if (!c->data || !a->data || !b->data || !out->data)
    return PTERUN_FAIL_ARG(ctx, "a tensor has no data");
  ins[0] = c;
  ins[1] = a;
  ins[2] = b;
  pterun_iter_init(&it, out, ins, 3);
  if (a->dtype == out->dtype && b->dtype == out->dtype && pterun_dtype_size(out->dtype) == 4) {
    /* One dtype of 4 bytes (float32, int32): a select of bit patterns, row by
     * coalesced row. */
    int64_t inner = pk_iter_rows(&it), rows = out->numel / inner, row, k;
    int64_t so = it.strides[0][it.rank], sc = it.strides[1][it.rank];
    int64_t sa = it.strides[2][it.rank], sb = it.strides[3][it.rank];
    const uint8_t* C = (const uint8_t*)c->data;
    const uint32_t* A = (const uint32_t*)a->data;
    const uint32_t* B = (const uint32_t*)b->data;
    uint32_t* O = (uint32_t*)out->data;
    for (row = 0; row < rows; ++row, pterun_iter_next(&it)) {
      const uint8_t* cr = C + it.off[1];
      const uint32_t *ar = A + it.off[2], *br = B + it.off[3];
      uint32_t* orow = O + it.off[0];
      if (so == 1 && sc == 1 && sa == 1 && sb == 1)
        for (k = 0; k < inner; ++k) orow[k] = cr[k] ? ar[k] : br[k];
      else if (so == 1 && sc == 0 && (cr[0] ? sa : sb) == 1)
        /* one condition for the row (an attention mask's per-row flag,
         * broadcast over the keys): a copy of the chosen row */
        memmove(orow, cr[0] ? ar : br, (size_t)inner * sizeof *orow);
      else
        for (k = 0; k < inner; ++k) orow[k * so] = cr[k * sc] ? ar[k * sa] : br[k * sb];
    }
    return PTERUN_STATUS_OK;
  }
  for (n = 0; n < out->numel; ++n, pterun_iter_next(&it)) {
    const pterun_tensor* src = ((const uint8_t*)c->data)[it.off[1]] ? a : b;
    int64_t so = src == a ? it.off[2] : it.off[3];
    /* Go through the common dtype first so e.g. int -> half rounding matches. */
    if (common != out->dtype && pterun_dtype_is_float(common))
      pterun_store_f64(out->data, out->dtype, it.off[0],
                       pterun_round_to_dtype(pterun_load_f64(src->data, src->dtype, so), common));
    else
      select_elem(out, it.off[0], src, so);
  }
  return PTERUN_STATUS_OK;
}

/* ---- masked_fill.Scalar_out(self, mask, Scalar value, *, out) ---- */
PTERUN_KERNEL(pk_masked_fill_scalar_out) {
  pterun_tensor *in, *mask, *out;
  pterun_scalar v;
  const pterun_tensor* ins[2];
  int64_t sizes[PTERUN_MAX_RANK], n;
  size_t rank;
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "mask", &mask));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 2, "value", &v));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  if (mask->dtype != PTERUN_DTYPE_BOOL)
    return pk_fail_dtype(ctx, "mask", mask->dtype, "must be bool");
  if (out->dtype != in->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "must match self's dtype");
  /* The result has self's shape; mask must broadcast to it. */
  PTERUN_TRY(pterun_broadcast_shape(ctx, in, "self", mask, "mask", sizes, &rank));
  if (rank != in->rank || memcmp(sizes, in->sizes, rank * sizeof(int64_t)) != 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'mask': shape does not broadcast to self's shape");
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  if (!in->data || !mask->data || !out->data) return PTERUN_FAIL_ARG(ctx, "a tensor has no data");
  ins[0] = in;
  ins[1] = mask;
  pterun_iter_init(&it, out, ins, 2);
  if (out->dtype == PTERUN_DTYPE_F32) {
    const float* X = (const float*)in->data;
    const uint8_t* M = (const uint8_t*)mask->data;
    float* O = (float*)out->data;
    const float fv = (float)v.d;
    for (n = 0; n < out->numel; ++n, pterun_iter_next(&it))
      O[it.off[0]] = M[it.off[2]] ? fv : X[it.off[1]];
    return PTERUN_STATUS_OK;
  }
  for (n = 0; n < out->numel; ++n, pterun_iter_next(&it)) {
    if (((const uint8_t*)mask->data)[it.off[2]]) {
      if (pterun_dtype_is_float(out->dtype))
        pterun_store_f64(out->data, out->dtype, it.off[0], v.d);
      else
        pterun_store_i64(out->data, out->dtype, it.off[0], v.i);
    } else {
      select_elem(out, it.off[0], in, it.off[1]);
    }
  }
  return PTERUN_STATUS_OK;
}
