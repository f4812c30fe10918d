/* The quantized adds.
 *
 * quantized_decomposed::add.out is ExecuTorch's kernel (its x86-64 numerics,
 * docs/quantized.md). The variants below it are ones the exporter's
 * QuantFusionPass can emit but that ExecuTorch has no kernel for:
 *   quantized_decomposed::add_relu.out
 *   quantized_decomposed::add.scalar_out
 * Semantics: the Python patterns they replace (ExecuTorch's
 * exir/passes/_quant_patterns_and_replacements.py), i.e. PyTorch's
 * dequantize_per_tensor -> aten add (-> relu) -> quantize_per_tensor evaluated
 * with ATen's eager float32 arithmetic, bit for bit:
 *   dq(q)  = ((float)q - (float)zp) * (float)scale          (two f32 ops)
 *   sum    = dq(a) + dq(b)   or   dq(a) + (float)b          (f32)
 *   relu   = sum < 0 ? 0 : sum                               (add_relu only)
 *   q(v)   = clamp(nearbyintf(v * (float)(1.0 / out_scale)) + (float)out_zp,
 *                  qmin, qmax)                               (clamp in f32)
 * Note the reciprocal: PyTorch computes 1.0 / scale in double and rounds it to
 * float, where ExecuTorch's add.out uses 1.0f / (float)scale; the two differ
 * in the last bit for some scales. Schemas of the .out overloads:
 * python/pterun/torch_ops.py. */
#include <inttypes.h>

#include "kernels/quantized/qutil.h"

/* The 15 arguments every two-tensor quantized add takes:
 * (a, a_scale, a_zp, a_qmin, a_qmax, b, b_scale, b_zp, b_qmin, b_qmax,
 *  out_scale, out_zp, out_qmin, out_qmax, *, out). */
typedef struct add_args {
  pterun_tensor *a, *b, *out;
  double as, bs, os;
  int64_t az, bz, oz, aqmin, aqmax, bqmin, bqmax, oqmin, oqmax;
} add_args;

static pterun_status read_add_args(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                   add_args* A) {
  memset(A, 0, sizeof(*A));
  PTERUN_CHECK_NARGS(ctx, nargs, 16);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "a", &A->a));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "a_scale", &A->as));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "a_zero_point", &A->az));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "a_quant_min", &A->aqmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "a_quant_max", &A->aqmax));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "b", &A->b));
  PTERUN_TRY(pterun_arg_double(ctx, args, 6, "b_scale", &A->bs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 7, "b_zero_point", &A->bz));
  PTERUN_TRY(pterun_arg_int(ctx, args, 8, "b_quant_min", &A->bqmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "b_quant_max", &A->bqmax));
  PTERUN_TRY(pterun_arg_double(ctx, args, 10, "out_scale", &A->os));
  PTERUN_TRY(pterun_arg_int(ctx, args, 11, "out_zero_point", &A->oz));
  PTERUN_TRY(pterun_arg_int(ctx, args, 12, "out_quant_min", &A->oqmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 13, "out_quant_max", &A->oqmax));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 14, "out", &A->out));
  return PTERUN_STATUS_OK;
}

/* Scales and zero points of a, b and out. */
static pterun_status check_add_qparams(pterun_kernel_context* ctx, const add_args* A, float* sa,
                                       float* sb, float* so) {
  PTERUN_TRY(qk_check_scale(ctx, "a_scale", A->as, sa));
  PTERUN_TRY(qk_check_scale(ctx, "b_scale", A->bs, sb));
  PTERUN_TRY(qk_check_scale(ctx, "out_scale", A->os, so));
  PTERUN_TRY(qk_check_zp(ctx, "a_zero_point", A->az));
  PTERUN_TRY(qk_check_zp(ctx, "b_zero_point", A->bz));
  return qk_check_zp(ctx, "out_zero_point", A->oz);
}

/* ---- quantized_decomposed::add.out (ExecuTorch) ------------------------------ */

static pterun_status check_u8_range(pterun_kernel_context* ctx, const char* name, int64_t lo,
                                    int64_t hi) {
  if (lo < 0 || hi > 255 || lo > hi)
    return PTERUN_FAIL_ARG(
        ctx, "arg '%s': quant range [%" PRId64 ", %" PRId64 "] must lie in [0, 255]", name, lo, hi);
  return PTERUN_STATUS_OK;
}

#define QK_ADD_LOOP(T)                                                                             \
  do {                                                                                             \
    const T* pa = (const T*)a->data;                                                               \
    const T* pb = (const T*)b->data;                                                               \
    T* po = (T*)out->data;                                                                         \
    for (k = 0; k < n; ++k) {                                                                      \
      float da = (float)((double)(int64_t)((uint64_t)(int64_t)pa[k] - (uint64_t)za) * (double)sa); \
      float db = (float)((double)(int64_t)((uint64_t)(int64_t)pb[k] - (uint64_t)zb) * (double)sb); \
      po[k] = (T)qk_quant_step(inv * (da + db), (float)zo, oqmin, oqmax);                          \
    }                                                                                              \
  } while (0)

/* add.out(a, a_scale, a_zp, a_qmin, a_qmax, b, b_scale, b_zp, b_qmin, b_qmax,
 *   out_scale, out_zp, out_qmin, out_qmax, *, out) */
PTERUN_KERNEL(qk_add_out) {
  add_args A;
  pterun_tensor *a, *b, *out;
  int64_t za, zb, zo, oqmin, oqmax, k, n;
  float sa, sb, so, inv;
  int d;
  PTERUN_TRY(read_add_args(ctx, args, nargs, &A));
  a = A.a, b = A.b, out = A.out;
  if (a->dtype != b->dtype || a->dtype != out->dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'b': a, b and out must have the same dtype");
  if (a->dtype != PTERUN_DTYPE_U8 && a->dtype != PTERUN_DTYPE_I8 && a->dtype != PTERUN_DTYPE_I16 &&
      a->dtype != PTERUN_DTYPE_I32 && a->dtype != PTERUN_DTYPE_I64)
    return PTERUN_FAIL_ARG(ctx, "arg 'a': dtype %s is not an integer type",
                           pterun_dtype_name(a->dtype));
  if (a->rank != b->rank || a->rank != out->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'b': a, b and out must have the same shape");
  for (d = 0; d < a->rank; ++d)
    if (a->sizes[d] != b->sizes[d] || a->sizes[d] != out->sizes[d])
      return PTERUN_FAIL_ARG(ctx, "arg 'b': a, b and out must have the same shape (dim %d)", d);
  if (!qk_same_dim_order(a, b) || !qk_same_dim_order(a, out))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'b': a, b and out must share one dim order");
  PTERUN_TRY(check_u8_range(ctx, "a_quant_min", A.aqmin, A.aqmax));
  PTERUN_TRY(check_u8_range(ctx, "b_quant_min", A.bqmin, A.bqmax));
  PTERUN_TRY(check_u8_range(ctx, "out_quant_min", A.oqmin, A.oqmax));
  PTERUN_TRY(check_add_qparams(ctx, &A, &sa, &sb, &so));
  PTERUN_TRY(pterun_check_data(ctx, a, "a"));
  PTERUN_TRY(pterun_check_data(ctx, b, "b"));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  inv = 1.0f / so;
  n = a->numel;
  za = (int32_t)A.az;
  zb = (int32_t)A.bz;
  zo = A.oz;
  oqmin = A.oqmin;
  oqmax = A.oqmax;
  switch (a->dtype) {
    case PTERUN_DTYPE_U8: QK_ADD_LOOP(uint8_t); break;
    case PTERUN_DTYPE_I8: QK_ADD_LOOP(int8_t); break;
    case PTERUN_DTYPE_I16: QK_ADD_LOOP(int16_t); break;
    case PTERUN_DTYPE_I32: QK_ADD_LOOP(int32_t); break;
    default: QK_ADD_LOOP(int64_t); break;
  }
  return PTERUN_STATUS_OK;
}

/* ---- add_relu.out and add.scalar_out (no ExecuTorch kernel) ----------------- */

/* Integer dtypes whose whole quant range is exact in float32 (so the float
 * clamp and the cast of the reference give the same integer). */
static int addx_dtype_ok(int dt) {
  return dt == PTERUN_DTYPE_U8 || dt == PTERUN_DTYPE_I8 || dt == PTERUN_DTYPE_I16 ||
         dt == PTERUN_DTYPE_U16;
}

static pterun_status addx_check_dtype(pterun_kernel_context* ctx, const char* name, int dt) {
  if (!addx_dtype_ok(dt))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg '%s': dtype %s not supported (uint8, int8, int16, uint16)", name,
                              pterun_dtype_name(dt));
  return PTERUN_STATUS_OK;
}

static pterun_status addx_check_range(pterun_kernel_context* ctx, const char* name, int dt,
                                      int64_t qmin, int64_t qmax) {
  int64_t lo = 0, hi = 0;
  if (!qk_qdtype_range(dt, &lo, &hi) || qmin < lo || qmax > hi || qmin > qmax)
    return PTERUN_FAIL_ARG(ctx,
                           "arg '%s': quant range [%" PRId64 ", %" PRId64
                           "] must be ordered and lie in "
                           "the %s range",
                           name, qmin, qmax, pterun_dtype_name(dt));
  return PTERUN_STATUS_OK;
}

/* A Scalar as ATen converts it for a float32 tensor operand: an Int is cast
 * from int64 to float directly (not through double), a Double is rounded to
 * float, a Bool is 0 or 1. */
static float addx_scalar_f32(const pterun_scalar* v) {
  return v->is_float ? (float)v->d : (float)v->i;
}

/* Python's quantize_per_tensor step: round half to even, zero point added in
 * float32, float clamp, then the cast (exact: the range fits float32). */
static inline int64_t addx_quant(float v, float inv, float zpf, float lo, float hi) {
  float r = nearbyintf(v * inv) + zpf;
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return (int64_t)r;
}

typedef struct addx_params {
  float sa, za, sb, zb; /* dequant of a and b (b unused for the scalar form) */
  float bval;           /* the scalar b */
  float inv, zo, lo, hi;
  int relu, scalar;
} addx_params;

/* Walks out's logical index space; a (and b) are read through broadcast
 * strides, so any dim order works. */
static void addx_run(const pterun_tensor* a, const pterun_tensor* b, pterun_tensor* out,
                     const addx_params* p) {
  const pterun_tensor* ins[2] = {a, b};
  pterun_iter it;
  pterun_iter_init(&it, out, ins, 2);
  for (int64_t k = 0; k < out->numel; ++k, pterun_iter_next(&it)) {
    float x = ((float)pterun_load_i64(a->data, a->dtype, it.off[1]) - p->za) * p->sa;
    float v;
    if (p->scalar) {
      v = x + p->bval;
    } else {
      float y = ((float)pterun_load_i64(b->data, b->dtype, it.off[2]) - p->zb) * p->sb;
      v = x + y;
    }
    if (p->relu && v < 0.0f) v = 0.0f;
    pterun_store_i64(out->data, out->dtype, it.off[0], addx_quant(v, p->inv, p->zo, p->lo, p->hi));
  }
}

/* add_relu.out(a, a_scale, a_zp, a_qmin, a_qmax, b, b_scale, b_zp, b_qmin,
 *   b_qmax, out_scale, out_zp, out_qmin, out_qmax, *, out) */
PTERUN_KERNEL(qk_add_relu_out) {
  add_args A;
  pterun_tensor *a, *b, *out;
  int64_t osz[PTERUN_MAX_RANK];
  float so = 0.0f;
  addx_params p;
  int rank, d;
  memset(&p, 0, sizeof(p));
  PTERUN_TRY(read_add_args(ctx, args, nargs, &A));
  a = A.a, b = A.b, out = A.out;
  PTERUN_TRY(addx_check_dtype(ctx, "a", a->dtype));
  if (b->dtype != a->dtype || out->dtype != a->dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'b': a, b and out must have the same dtype (%s, %s, %s)",
                           pterun_dtype_name(a->dtype), pterun_dtype_name(b->dtype),
                           pterun_dtype_name(out->dtype));
  PTERUN_TRY(addx_check_range(ctx, "a_quant_min", a->dtype, A.aqmin, A.aqmax));
  PTERUN_TRY(addx_check_range(ctx, "b_quant_min", b->dtype, A.bqmin, A.bqmax));
  PTERUN_TRY(addx_check_range(ctx, "out_quant_min", out->dtype, A.oqmin, A.oqmax));
  PTERUN_TRY(check_add_qparams(ctx, &A, &p.sa, &p.sb, &so));
  /* broadcast shape (ATen rules) */
  rank = a->rank > b->rank ? (int)a->rank : (int)b->rank;
  for (d = 0; d < rank; ++d) {
    int da = d - (rank - (int)a->rank), db = d - (rank - (int)b->rank);
    int64_t sa = da < 0 ? 1 : a->sizes[da], sb = db < 0 ? 1 : b->sizes[db];
    if (sa != sb && sa != 1 && sb != 1)
      return PTERUN_FAIL_ARG(
          ctx, "arg 'b': shapes of a and b do not broadcast (dim %d: %" PRId64 " vs %" PRId64 ")",
          d, sa, sb);
    osz[d] = sa == 1 ? sb : sa;
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)rank, osz));
  PTERUN_TRY(pterun_check_data(ctx, a, "a"));
  PTERUN_TRY(pterun_check_data(ctx, b, "b"));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  p.inv = (float)(1.0 / A.os);
  p.za = (float)(int32_t)A.az;
  p.zb = (float)(int32_t)A.bz;
  p.zo = (float)(int32_t)A.oz;
  p.lo = (float)A.oqmin;
  p.hi = (float)A.oqmax;
  p.relu = 1;
  addx_run(a, b, out, &p);
  return PTERUN_STATUS_OK;
}

/* add.scalar_out(qa, a_scale, a_zp, a_qmin, a_qmax, a_dtype, b (Scalar),
 *   out_scale, out_zp, out_qmin, out_qmax, out_dtype, *, out) */
PTERUN_KERNEL(qk_add_scalar_out) {
  pterun_tensor *a = NULL, *out = NULL;
  double das = 0.0, dos = 0.0;
  pterun_scalar bv;
  int64_t za = 0, zo = 0, aqmin = 0, aqmax = 0, oqmin = 0, oqmax = 0, adt = 0, odt = 0;
  float so = 0.0f;
  addx_params p;
  memset(&p, 0, sizeof(p));
  PTERUN_CHECK_NARGS(ctx, nargs, 14);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "qa", &a));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "a_scale", &das));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "a_zero_point", &za));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "a_quant_min", &aqmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "a_quant_max", &aqmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "a_dtype", &adt));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 6, "b", &bv));
  PTERUN_TRY(pterun_arg_double(ctx, args, 7, "out_scale", &dos));
  PTERUN_TRY(pterun_arg_int(ctx, args, 8, "out_zero_point", &zo));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "out_quant_min", &oqmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 10, "out_quant_max", &oqmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 11, "out_dtype", &odt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 12, "out", &out));
  if (isnan(bv.d)) return PTERUN_FAIL_ARG(ctx, "arg 'b': NaN");
  if (a->dtype != adt)
    return PTERUN_FAIL_ARG(ctx, "arg 'qa': dtype %s does not match a_dtype %s",
                           pterun_dtype_name(a->dtype), pterun_dtype_name((int)adt));
  if (out->dtype != odt)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s does not match out_dtype %s",
                           pterun_dtype_name(out->dtype), pterun_dtype_name((int)odt));
  PTERUN_TRY(addx_check_dtype(ctx, "qa", a->dtype));
  PTERUN_TRY(addx_check_dtype(ctx, "out", out->dtype));
  PTERUN_TRY(addx_check_range(ctx, "a_quant_min", a->dtype, aqmin, aqmax));
  PTERUN_TRY(addx_check_range(ctx, "out_quant_min", out->dtype, oqmin, oqmax));
  PTERUN_TRY(qk_check_scale(ctx, "a_scale", das, &p.sa));
  PTERUN_TRY(qk_check_scale(ctx, "out_scale", dos, &so));
  PTERUN_TRY(qk_check_zp(ctx, "a_zero_point", za));
  PTERUN_TRY(qk_check_zp(ctx, "out_zero_point", zo));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", a));
  PTERUN_TRY(pterun_check_data(ctx, a, "qa"));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  p.inv = (float)(1.0 / dos);
  p.za = (float)(int32_t)za;
  p.zo = (float)(int32_t)zo;
  p.lo = (float)oqmin;
  p.hi = (float)oqmax;
  p.bval = addx_scalar_f32(&bv);
  p.scalar = 1;
  addx_run(a, NULL, out, &p);
  return PTERUN_STATUS_OK;
}
