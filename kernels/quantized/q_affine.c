/* Operators the exporter can emit that ExecuTorch has no kernel for:
 *   quantized_decomposed::quantize_per_channel_group.out
 *   quantized_decomposed::dequantize_per_channel_group.out
 *   torchao::choose_qparams_affine.out, torchao::quantize_affine.out,
 *   torchao::dequantize_affine.out
 * Semantics: the reference Python implementations (PyTorch's _decomposed.py,
 * torchao's quant_primitives.py) evaluated with ATen's eager CPU arithmetic:
 * each tensor operation rounds to its result dtype. Schemas of the .out
 * overloads: python/pterun/torch_ops.py. */
#include "kernels/quantized/qutil.h"

#include <inttypes.h>

/* Quantized dtypes of the torchao / group ops and their value ranges. */
static int target_range(int dt, int64_t* lo, int64_t* hi) {
  if (qk_qdtype_range(dt, lo, hi)) return 1;
  return 0;
}

static pterun_status check_data(pterun_kernel_context* ctx, const pterun_tensor* t,
                                const char* name) {
  return pterun_check_contiguous(ctx, t, name);
}

/* ---- per channel group (2-D, groups along the last dim) ------------------- */

static pterun_status group_geometry(pterun_kernel_context* ctx, const pterun_tensor* x,
                                    const pterun_tensor* sc, int64_t* gs) {
  int64_t cols;
  if (x->rank != 2) return PTERUN_FAIL_ARG(ctx, "arg 'input': must be 2-D, got rank %d", x->rank);
  cols = x->sizes[1];
  if (*gs <= 1) return PTERUN_FAIL_ARG(ctx, "arg 'group_size': %" PRId64 " must be > 1", *gs);
  /* PyTorch: a group larger than the row with one scale per row means per row. */
  if (*gs > cols && sc->rank >= 1 && sc->sizes[sc->rank - 1] == 1) *gs = cols;
  if (*gs <= 0 || cols % *gs != 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'group_size': %" PRId64 " does not divide %" PRId64, *gs,
                           cols);
  if (sc->numel != x->numel / *gs)
    return PTERUN_FAIL_ARG(ctx, "arg 'scales': expected %" PRId64 " elements, got %" PRId64,
                           x->numel / *gs, sc->numel);
  return PTERUN_STATUS_OK;
}

/* quantize_per_channel_group.out(input, Tensor scales, Tensor zero_points,
 *   int quant_min, int quant_max, ScalarType dtype, int group_size, *, out):
 *   clamp(round(x * (1.0 / s) + zp), qmin, qmax)  (zero point added BEFORE rounding) */
PTERUN_KERNEL(qk_quantize_per_channel_group_out) {
  pterun_tensor *x, *sc, *zp, *out;
  int64_t qmin, qmax, dtype, gs, lo, hi, n, k;
  int I, S, P, Z, CT;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &sc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "group_size", &gs));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  I = x->dtype;
  S = sc->dtype;
  Z = zp->dtype;
  if (!pterun_dtype_is_float(I))
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s is not floating", pterun_dtype_name(I));
  if (!pterun_dtype_is_float(S))
    return PTERUN_FAIL_ARG(ctx, "arg 'scales': dtype %s is not floating", pterun_dtype_name(S));
  if (!pterun_dtype_is_float(Z) && !pterun_dtype_is_int(Z))
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_points': dtype %s not supported", pterun_dtype_name(Z));
  if (out->dtype != dtype || !target_range(out->dtype, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'out': dtype %s must equal dtype and be a quantized integer type",
                           pterun_dtype_name(out->dtype));
  if (qmin < lo || qmax > hi || qmin > qmax)
    return PTERUN_FAIL_ARG(ctx, "arg 'quant_min': [%" PRId64 ", %" PRId64 "] invalid for %s", qmin,
                           qmax, pterun_dtype_name(out->dtype));
  PTERUN_TRY(group_geometry(ctx, x, sc, &gs));
  if (zp->numel != sc->numel)
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_points': expected %" PRId64 " elements, got %" PRId64,
                           sc->numel, zp->numel);
  PTERUN_TRY(check_data(ctx, x, "input"));
  PTERUN_TRY(check_data(ctx, sc, "scales"));
  PTERUN_TRY(check_data(ctx, zp, "zero_points"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", x));
  PTERUN_TRY(check_data(ctx, out, "out"));
  P = pterun_promote_types(I, S);
  CT = pterun_dtype_is_float(Z) ? pterun_promote_types(P, Z) : P;
  n = x->numel;
  for (k = 0; k < n; ++k) {
    double xv = pterun_load_f64(x->data, I, k);
    if (xv != xv) return PTERUN_FAIL_ARG(ctx, "arg 'input': NaN at element %" PRId64, k);
  }
  for (k = 0; k < n; ++k) {
    int64_t g = k / gs;
    double s = pterun_load_f64(sc->data, S, g);
    double inv = pterun_round_to_dtype(1.0 / s, S);
    double z = pterun_dtype_is_float(Z) ? pterun_load_f64(zp->data, Z, g)
                                        : (double)pterun_load_i64(zp->data, Z, g);
    double p = pterun_round_to_dtype(pterun_load_f64(x->data, I, k) * inv, P);
    double a = nearbyint(pterun_round_to_dtype(p + z, CT));
    if (a < (double)qmin) a = (double)qmin;
    if (a > (double)qmax) a = (double)qmax;
    if (a != a) a = (double)qmin;
    pterun_store_i64(out->data, out->dtype, k, (int64_t)a);
  }
  return PTERUN_STATUS_OK;
}

/* dequantize_per_channel_group.out(input, Tensor scales, Tensor? zero_points,
 *   int quant_min, int quant_max, ScalarType dtype, int group_size,
 *   ScalarType output_dtype, *, out):  ((q - zp) * s).to(output_dtype) */
PTERUN_KERNEL(qk_dequantize_per_channel_group_out) {
  pterun_tensor *x, *sc, *zp, *out;
  int64_t qmin, qmax, dtype, gs, od, lo, hi, n, k;
  int S, Z;
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "group_size", &gs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 7, "output_dtype", &od));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "out", &out));
  if (!target_range(x->dtype, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s is not a quantized integer type",
                           pterun_dtype_name(x->dtype));
  S = sc->dtype;
  if (!pterun_dtype_is_float(S))
    return PTERUN_FAIL_ARG(ctx, "arg 'scales': dtype %s is not floating", pterun_dtype_name(S));
  Z = zp ? zp->dtype : PTERUN_DTYPE_I32;
  if (zp && !pterun_dtype_is_float(Z) && !pterun_dtype_is_int(Z))
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_points': dtype %s not supported", pterun_dtype_name(Z));
  if (!pterun_dtype_is_float(out->dtype) || out->dtype != od)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s must equal output_dtype and be floating",
                           pterun_dtype_name(out->dtype));
  PTERUN_TRY(group_geometry(ctx, x, sc, &gs));
  if (zp && zp->numel != sc->numel)
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_points': expected %" PRId64 " elements, got %" PRId64,
                           sc->numel, zp->numel);
  PTERUN_TRY(check_data(ctx, x, "input"));
  PTERUN_TRY(check_data(ctx, sc, "scales"));
  if (zp) PTERUN_TRY(check_data(ctx, zp, "zero_points"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", x));
  PTERUN_TRY(check_data(ctx, out, "out"));
  n = x->numel;
  for (k = 0; k < n; ++k) {
    int64_t g = k / gs;
    double q = (double)pterun_load_i64(x->data, x->dtype, k), d, r;
    int DT; /* dtype of q - zp */
    if (zp && pterun_dtype_is_float(Z)) {
      d = pterun_round_to_dtype(q - pterun_load_f64(zp->data, Z, g), Z);
      DT = Z;
    } else {
      d = q - (zp ? (double)pterun_load_i64(zp->data, Z, g) : 0.0); /* exact integer */
      DT = -1;
    }
    if (DT < 0) /* int * float tensor: the int converts to the scales' dtype */
      r = pterun_round_to_dtype(pterun_round_to_dtype(d, S) * pterun_load_f64(sc->data, S, g), S);
    else {
      int P = pterun_promote_types(DT, S);
      r = pterun_round_to_dtype(d * pterun_load_f64(sc->data, S, g), P);
    }
    pterun_store_f64(out->data, out->dtype, k, r);
  }
  return PTERUN_STATUS_OK;
}

/* ---- torchao affine ops --------------------------------------------------- */

typedef struct block_map {
  int rank;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t block[PTERUN_MAX_RANK];
  int64_t grid_stride[PTERUN_MAX_RANK];
  int64_t nparams;
} block_map;

static pterun_status make_block_map(pterun_kernel_context* ctx, const pterun_tensor* x,
                                    const int64_t* bs, size_t nbs, block_map* m) {
  int d;
  int64_t stride = 1;
  if (nbs != (size_t)x->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'block_size': %zu entries for an input of rank %d", nbs,
                           x->rank);
  m->rank = x->rank;
  for (d = 0; d < x->rank; ++d) {
    m->sizes[d] = x->sizes[d];
    m->block[d] = bs[d];
    if (bs[d] < 1 || (x->sizes[d] > 0 && x->sizes[d] % bs[d] != 0))
      return PTERUN_FAIL_ARG(
          ctx, "arg 'block_size': %" PRId64 " does not divide dim %d of size %" PRId64, bs[d], d,
          x->sizes[d]);
  }
  for (d = x->rank - 1; d >= 0; --d) {
    m->grid_stride[d] = stride;
    stride *= x->sizes[d] / bs[d];
  }
  m->nparams = stride;
  return PTERUN_STATUS_OK;
}

/* Parameter index of every element, in row-major element order (kept
 * incrementally: O(1) amortised per element). */
#define BLOCK_FOR_EACH(m, k, pidx, BODY)                                                           \
  do {                                                                                             \
    int64_t coord_[PTERUN_MAX_RANK] = {0};                                                         \
    int64_t total_ = 1;                                                                            \
    int dd_;                                                                                       \
    for (dd_ = 0; dd_ < (m)->rank; ++dd_) total_ *= (m)->sizes[dd_];                               \
    pidx = 0;                                                                                      \
    for (k = 0; k < total_; ++k) {                                                                 \
      BODY;                                                                                        \
      for (dd_ = (m)->rank - 1; dd_ >= 0; --dd_) {                                                 \
        if (++coord_[dd_] < (m)->sizes[dd_]) {                                                     \
          if (coord_[dd_] % (m)->block[dd_] == 0) pidx += (m)->grid_stride[dd_];                   \
          break;                                                                                   \
        }                                                                                          \
        pidx -= ((m)->sizes[dd_] - 1) / (m)->block[dd_] * (m)->grid_stride[dd_];                   \
        coord_[dd_] = 0;                                                                           \
      }                                                                                            \
    }                                                                                              \
  } while (0)

/* Blocks that split only the last dim (per token, per group along K): the
 * parameter index is then k / block[last], so a block's parameters can be
 * read once (the same arithmetic as BLOCK_FOR_EACH, hoisted). */
static int64_t row_blocks(const block_map* m) {
  int d;
  if (m->rank < 1) return 0;
  for (d = 0; d < m->rank - 1; ++d)
    if (m->block[d] != 1) return 0;
  return m->block[m->rank - 1];
}

/* quant_min / quant_max default to the dtype's range; both must lie inside it. */
static pterun_status affine_range(pterun_kernel_context* ctx, int dt, int has_min, double dmin,
                                  int has_max, double dmax, int64_t* qmin, int64_t* qmax) {
  int64_t lo, hi;
  if (!target_range(dt, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': %s is not a supported quantized dtype",
                           pterun_dtype_name(dt));
  *qmin = has_min ? (int64_t)dmin : lo;
  *qmax = has_max ? (int64_t)dmax : hi;
  if ((has_min && (double)*qmin != dmin) || (has_max && (double)*qmax != dmax))
    return PTERUN_FAIL_ARG(ctx, "arg 'quant_min': quant range must be integral");
  if (*qmin < lo || *qmax > hi || *qmin > *qmax)
    return PTERUN_FAIL_ARG(ctx, "arg 'quant_min': [%" PRId64 ", %" PRId64 "] invalid for %s", *qmin,
                           *qmax, pterun_dtype_name(dt));
  return PTERUN_STATUS_OK;
}

/* torchao::quantize_affine.out(input, SymInt[] block_size, Tensor scale,
 *   Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min,
 *   Scalar? quant_max, *, out):
 *   clamp(round(x * (1.0 / scale)) + zero_point, qmin, qmax) */
PTERUN_KERNEL(qk_torchao_quantize_affine_out) {
  pterun_tensor *x, *sc, *zp, *out;
  const int64_t* bs;
  size_t nbs;
  int64_t od, qmin, qmax, k, p;
  pterun_scalar qmin_arg, qmax_arg;
  int has_min, has_max, I, S, P, Z = 0;
  block_map m;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "block_size", &bs, &nbs, 0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "scale", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 3, "zero_point", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "output_dtype", &od));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 5, "quant_min", &qmin_arg, &has_min));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 6, "quant_max", &qmax_arg, &has_max));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  I = x->dtype;
  S = sc->dtype;
  if (I != PTERUN_DTYPE_F32 && I != PTERUN_DTYPE_F16 && I != PTERUN_DTYPE_BF16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported", pterun_dtype_name(I));
  if (!pterun_dtype_is_float(S))
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': dtype %s is not floating", pterun_dtype_name(S));
  if (out->dtype != od) return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype must equal output_dtype");
  PTERUN_TRY(affine_range(ctx, (int)od, has_min, qmin_arg.d, has_max, qmax_arg.d, &qmin, &qmax));
  PTERUN_TRY(make_block_map(ctx, x, bs, nbs, &m));
  if (sc->numel != m.nparams)
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': expected %" PRId64 " elements, got %" PRId64,
                           m.nparams, sc->numel);
  if (zp && zp->numel == 0) zp = NULL; /* torchao treats an empty zero point as None */
  if (zp) {
    Z = zp->dtype;
    if (zp->numel != m.nparams)
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': expected %" PRId64 " elements, got %" PRId64,
                             m.nparams, zp->numel);
    if (!pterun_dtype_is_float(Z) && !pterun_dtype_is_int(Z))
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': dtype %s not supported", pterun_dtype_name(Z));
    PTERUN_TRY(check_data(ctx, zp, "zero_point"));
  }
  PTERUN_TRY(check_data(ctx, x, "input"));
  PTERUN_TRY(check_data(ctx, sc, "scale"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", x));
  PTERUN_TRY(check_data(ctx, out, "out"));
  P = pterun_promote_types(I, S);
  const int64_t kb = row_blocks(&m);
  if (kb > 0 && I == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_I8 &&
      (zp == NULL || !pterun_dtype_is_float(Z))) {
    /* per token / per group, float32 in, int8 out: the loop below with each
     * block's reciprocal and zero point read once */
    const float* xf = (const float*)x->data;
    int8_t* q = (int8_t*)out->data;
    for (p = 0, k = 0; k < x->numel; ++p) {
      const double inv = pterun_round_to_dtype(1.0 / pterun_load_f64(sc->data, S, p), S);
      const double z = zp ? (double)pterun_load_i64(zp->data, Z, p) : 0.0;
      for (int64_t j = 0; j < kb; ++j, ++k) {
        double v = nearbyint(pterun_round_to_dtype((double)xf[k] * inv, P));
        if (zp) v = pterun_round_to_dtype(v + z, P);
        if (v < (double)qmin) v = (double)qmin;
        if (v > (double)qmax) v = (double)qmax;
        if (v != v) v = (double)qmin;
        q[k] = (int8_t)(int64_t)v;
      }
    }
    return PTERUN_STATUS_OK;
  }
  BLOCK_FOR_EACH(&m, k, p, {
    double inv = pterun_round_to_dtype(1.0 / pterun_load_f64(sc->data, S, p), S);
    double v = nearbyint(pterun_round_to_dtype(pterun_load_f64(x->data, I, k) * inv, P));
    if (zp) {
      if (pterun_dtype_is_float(Z))
        v = pterun_round_to_dtype(v + pterun_load_f64(zp->data, Z, p), pterun_promote_types(P, Z));
      else
        v = pterun_round_to_dtype(v + (double)pterun_load_i64(zp->data, Z, p), P);
    }
    if (v < (double)qmin) v = (double)qmin;
    if (v > (double)qmax) v = (double)qmax;
    if (v != v) v = (double)qmin;
    pterun_store_i64(out->data, out->dtype, k, (int64_t)v);
  });
  return PTERUN_STATUS_OK;
}

/* torchao::dequantize_affine.out(input, SymInt[] block_size, Tensor scale,
 *   Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min,
 *   Scalar? quant_max, ScalarType output_dtype, *, out):
 *   ((q.to(O) - zp.to(O)) * scale).to(O) */
PTERUN_KERNEL(qk_torchao_dequantize_affine_out) {
  pterun_tensor *x, *sc, *zp, *out;
  const int64_t* bs;
  size_t nbs;
  int64_t idt, od, qmin, qmax, k, p;
  pterun_scalar qmin_arg, qmax_arg;
  int has_min, has_max, O, S, P, Z = 0;
  block_map m;
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "block_size", &bs, &nbs, 0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "scale", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 3, "zero_point", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "input_dtype", &idt));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 5, "quant_min", &qmin_arg, &has_min));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 6, "quant_max", &qmax_arg, &has_max));
  PTERUN_TRY(pterun_arg_int(ctx, args, 7, "output_dtype", &od));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "out", &out));
  if (x->dtype != idt)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s does not match input_dtype %s",
                           pterun_dtype_name(x->dtype), pterun_dtype_name((int)idt));
  PTERUN_TRY(affine_range(ctx, (int)idt, has_min, qmin_arg.d, has_max, qmax_arg.d, &qmin, &qmax));
  O = out->dtype;
  if (O != od || (O != PTERUN_DTYPE_F32 && O != PTERUN_DTYPE_F16 && O != PTERUN_DTYPE_BF16))
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'out': dtype %s must equal output_dtype (float32/16, bfloat16)",
                           pterun_dtype_name(O));
  S = sc->dtype;
  if (!pterun_dtype_is_float(S))
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': dtype %s is not floating", pterun_dtype_name(S));
  PTERUN_TRY(make_block_map(ctx, x, bs, nbs, &m));
  if (sc->numel != m.nparams)
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': expected %" PRId64 " elements, got %" PRId64,
                           m.nparams, sc->numel);
  if (zp) {
    Z = zp->dtype;
    if (zp->numel != m.nparams)
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': expected %" PRId64 " elements, got %" PRId64,
                             m.nparams, zp->numel);
    if (!pterun_dtype_is_float(Z) && !pterun_dtype_is_int(Z))
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': dtype %s not supported", pterun_dtype_name(Z));
    PTERUN_TRY(check_data(ctx, zp, "zero_point"));
  }
  PTERUN_TRY(check_data(ctx, x, "input"));
  PTERUN_TRY(check_data(ctx, sc, "scale"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", x));
  PTERUN_TRY(check_data(ctx, out, "out"));
  P = pterun_promote_types(O, S);
  const int64_t kb = row_blocks(&m);
  if (kb > 0 && x->dtype == PTERUN_DTYPE_I8 && O == PTERUN_DTYPE_F32) {
    /* per token / per group, int8 in, float32 out: the loop below with each
     * block's scale and zero point read once */
    const int8_t* q = (const int8_t*)x->data;
    for (p = 0, k = 0; k < x->numel; ++p) {
      const double sc_p = pterun_load_f64(sc->data, S, p);
      double z = 0.0;
      if (zp)
        z = pterun_round_to_dtype(pterun_dtype_is_float(Z)
                                      ? pterun_load_f64(zp->data, Z, p)
                                      : (double)pterun_load_i64(zp->data, Z, p),
                                  O);
      for (int64_t j = 0; j < kb; ++j, ++k) {
        double d = (double)q[k]; /* exact in float32 */
        if (zp) d = pterun_round_to_dtype(d - z, O);
        ((float*)out->data)[k] = (float)pterun_round_to_dtype(d * sc_p, P);
      }
    }
    return PTERUN_STATUS_OK;
  }
  BLOCK_FOR_EACH(&m, k, p, {
    double d = pterun_round_to_dtype((double)pterun_load_i64(x->data, x->dtype, k), O);
    if (zp) {
      double z = pterun_dtype_is_float(Z) ? pterun_load_f64(zp->data, Z, p)
                                          : (double)pterun_load_i64(zp->data, Z, p);
      d = pterun_round_to_dtype(d - pterun_round_to_dtype(z, O), O);
    }
    pterun_store_f64(out->data, O, k,
                     pterun_round_to_dtype(d * pterun_load_f64(sc->data, S, p), P));
  });
  return PTERUN_STATUS_OK;
}

/* min / max over block p (NaN propagates, as torch.amin / amax). */
static void block_minmax(const block_map* m, const pterun_tensor* x, int64_t p, double* lo,
                         double* hi) {
  int64_t g[PTERUN_MAX_RANK], c[PTERUN_MAX_RANK] = {0}, cstride[PTERUN_MAX_RANK], rem = p, st = 1;
  double mn = INFINITY, mx = -INFINITY;
  int d;
  const int64_t kb = row_blocks(m);
  if (kb > 0 && x->dtype == PTERUN_DTYPE_F32) { /* block p: elements [p * kb, p * kb + kb) */
    const float* xf = (const float*)x->data + p * kb;
    for (int64_t j = 0; j < kb; ++j) {
      const double v = (double)xf[j];
      if (v != v || mn != mn)
        mn = mx = NAN;
      else {
        if (v < mn) mn = v;
        if (v > mx) mx = v;
      }
    }
    *lo = mn;
    *hi = mx;
    return;
  }
  for (d = m->rank - 1; d >= 0; --d) {
    int64_t gs = m->sizes[d] / m->block[d];
    g[d] = rem % gs;
    rem /= gs;
    cstride[d] = st;
    st *= m->sizes[d];
  }
  for (;;) {
    int64_t off = 0;
    double v;
    for (d = 0; d < m->rank; ++d) off += (g[d] * m->block[d] + c[d]) * cstride[d];
    v = pterun_load_f64(x->data, x->dtype, off);
    if (v != v || mn != mn)
      mn = NAN;
    else if (v < mn)
      mn = v;
    if (v != v || mx != mx)
      mx = NAN;
    else if (v > mx)
      mx = v;
    for (d = m->rank - 1; d >= 0; --d) {
      if (++c[d] < m->block[d]) break;
      c[d] = 0;
    }
    if (d < 0) break;
  }
  *lo = mn;
  *hi = mx;
}

/* Compares a string argument. */
static int str_is(const char* s, size_t n, const char* lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* torchao::choose_qparams_affine.out(input, str mapping_type, SymInt[] block_size,
 *   ScalarType target_dtype, Scalar? quant_min, Scalar? quant_max, float? eps,
 *   ScalarType? scale_dtype, ScalarType? zero_point_dtype, bool keepdim, *,
 *   scale_out, zero_point_out) */
PTERUN_KERNEL(qk_torchao_choose_qparams_affine_out) {
  pterun_tensor *x, *so, *zo;
  const char* mt;
  size_t mtlen, nbs;
  const int64_t* bs;
  int64_t tdt, sdt, zdt, qmin, qmax, p, osz[PTERUN_MAX_RANK];
  pterun_scalar qmin_arg, qmax_arg;
  double eps;
  int has_min, has_max, has_eps, has_sdt, has_zdt, keepdim, I, mode, d, orank = 0;
  block_map m;
  PTERUN_CHECK_NARGS(ctx, nargs, 13);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_string(ctx, args, 1, "mapping_type", &mt, &mtlen));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 2, "block_size", &bs, &nbs, 0));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "target_dtype", &tdt));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 4, "quant_min", &qmin_arg, &has_min));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, 5, "quant_max", &qmax_arg, &has_max));
  PTERUN_TRY(pterun_arg_opt_double(ctx, args, 6, "eps", &eps, &has_eps));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 7, "scale_dtype", &sdt, &has_sdt));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 8, "zero_point_dtype", &zdt, &has_zdt));
  PTERUN_TRY(pterun_arg_bool(ctx, args, 9, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 10, "scale_out", &so));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 11, "zero_point_out", &zo));
  I = x->dtype;
  if (I != PTERUN_DTYPE_F32 && I != PTERUN_DTYPE_F16 && I != PTERUN_DTYPE_BF16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported", pterun_dtype_name(I));
  if (str_is(mt, mtlen, "SYMMETRIC"))
    mode = 0;
  else if (str_is(mt, mtlen, "SYMMETRIC_NO_CLIPPING_ERR"))
    mode = 1;
  else if (str_is(mt, mtlen, "ASYMMETRIC"))
    mode = 2;
  else
    return PTERUN_FAIL_ARG(ctx, "arg 'mapping_type': '%.*s' not supported", (int)mtlen, mt);
  PTERUN_TRY(affine_range(ctx, (int)tdt, has_min, qmin_arg.d, has_max, qmax_arg.d, &qmin, &qmax));
  if (!has_eps) eps = I == PTERUN_DTYPE_F16 ? 6.103515625e-05 : 1.1754943508222875e-38;
  if (!pterun_dtype_is_float(so->dtype) || (has_sdt ? so->dtype != sdt : so->dtype != I))
    return PTERUN_FAIL_ARG(ctx, "arg 'scale_out': dtype %s does not match scale_dtype",
                           pterun_dtype_name(so->dtype));
  if (has_zdt && zo->dtype != zdt)
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_point_out': dtype %s does not match zero_point_dtype",
                           pterun_dtype_name(zo->dtype));
  if (!pterun_dtype_is_float(zo->dtype) && !pterun_dtype_is_int(zo->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_point_out': dtype %s not supported",
                           pterun_dtype_name(zo->dtype));
  PTERUN_TRY(make_block_map(ctx, x, bs, nbs, &m));
  PTERUN_TRY(check_data(ctx, x, "input"));
  if (x->numel == 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': empty input has no range");
  for (d = 0; d < x->rank && bs[d] <= 1; ++d) {
  }
  if (d == x->rank && x->numel > 1)
    /* torchao reduces over an empty dim list, i.e. over the whole tensor */
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'block_size': blocks of one element are not supported");
  /* output shape (torchao _get_reduction_params + amin(keepdim)) */
  for (d = 0; d < x->rank; ++d) {
    if (keepdim)
      osz[orank++] = x->sizes[d] / bs[d];
    else if (bs[d] != x->sizes[d] && bs[d] > 1)
      osz[orank++] = x->sizes[d] / bs[d];
    else if (bs[d] == 1)
      osz[orank++] = x->sizes[d];
    /* block == size > 1: the dim is reduced away */
  }
  PTERUN_TRY(pterun_out_resize(ctx, so, "scale_out", (size_t)orank, osz));
  PTERUN_TRY(pterun_out_resize(ctx, zo, "zero_point_out", (size_t)orank, osz));
  PTERUN_TRY(check_data(ctx, so, "scale_out"));
  PTERUN_TRY(check_data(ctx, zo, "zero_point_out"));
  if (so->numel != m.nparams || zo->numel != m.nparams)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL, "parameter count mismatch");
  for (p = 0; p < m.nparams; ++p) {
    double lo, hi, s, z, mneg, mpos;
    block_minmax(&m, x, p, &lo, &hi);
    mneg = (lo != lo) ? lo : (lo < 0 ? lo : 0.0); /* torch.min(min, 0) */
    mpos = (hi != hi) ? hi : (hi > 0 ? hi : 0.0);
    if (mode == 0 || mode == 1) {
      if (mode == 0) {
        double a = -mneg;
        double mm = (a != a || mpos != mpos) ? NAN : (a > mpos ? a : mpos);
        s = pterun_round_to_dtype(mm / (double)(float)((double)(qmax - qmin) / 2.0), I);
      } else {
        double smin = pterun_round_to_dtype(mneg / (double)(float)(double)qmin, I);
        double smax = pterun_round_to_dtype(mpos / (double)(float)(double)qmax, I);
        s = smin > smax ? smin : smax;
      }
      z = (double)(int64_t)((double)(qmax + qmin + 1) / 2.0);
      if (s < (double)(float)eps) s = pterun_round_to_dtype(eps, I);
    } else {
      s = pterun_round_to_dtype(
          pterun_round_to_dtype(mpos - mneg, I) / (double)(float)(double)(qmax - qmin), I);
      if (s < (double)(float)eps) s = pterun_round_to_dtype(eps, I);
      z = pterun_round_to_dtype((double)qmin - nearbyint(pterun_round_to_dtype(mneg / s, I)), I);
      if (z < (double)qmin) z = (double)qmin;
      if (z > (double)qmax) z = (double)qmax;
    }
    if (s != s) return PTERUN_FAIL_ARG(ctx, "arg 'input': NaN in block %" PRId64, p);
    pterun_store_f64(so->data, so->dtype, p, pterun_round_to_dtype(s, I));
    if (pterun_dtype_is_float(zo->dtype))
      pterun_store_f64(zo->data, zo->dtype, p, z);
    else
      pterun_store_i64(zo->data, zo->dtype, p, (int64_t)z);
  }
  return PTERUN_STATUS_OK;
}

/* ---- fused dequantize + linear ---------------------------------------------- */

/* pterun_quantized::linear_dequantize.out(input [..., K], weight [N, K] (int codes),
 *   SymInt[] block_size [1, g], weight_scale (N*K/g), Tensor? weight_zero_point,
 *   Tensor? bias [N], *, out [..., N]):
 *   linear(input, dequantize_affine(weight, block_size, scale, zp, output_dtype =
 *   input dtype), bias). Each weight element is dequantized exactly as
 *   torchao::dequantize_affine.out does, on the fly; the products are summed in
 *   float32 in k order (the unfused path's result within float rounding). */
PTERUN_KERNEL(qk_linear_dequantize_out) {
  pterun_tensor *x, *w, *sc, *zp, *bias, *out;
  const int64_t* bs;
  size_t nbs;
  int64_t N, K, M, g, G, r, n, k, osz[PTERUN_MAX_RANK];
  int O, S, P, Z = 0, d;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 2, "block_size", &bs, &nbs, 0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "weight_scale", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 4, "weight_zero_point", &zp));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 5, "bias", &bias));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  O = x->dtype;
  if (O != PTERUN_DTYPE_F32 && O != PTERUN_DTYPE_F16 && O != PTERUN_DTYPE_BF16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported", pterun_dtype_name(O));
  if (x->rank < 1) return PTERUN_FAIL_ARG(ctx, "arg 'input': must have at least one dimension");
  if (w->rank != 2) return PTERUN_FAIL_ARG(ctx, "arg 'weight': must be 2-D, got rank %d", w->rank);
  if (!pterun_dtype_is_int(w->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': dtype %s is not an integer type",
                           pterun_dtype_name(w->dtype));
  N = w->sizes[0];
  K = w->sizes[1];
  if (x->sizes[x->rank - 1] != K)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': last dim %" PRId64 " != weight columns %" PRId64,
                           x->sizes[x->rank - 1], K);
  if (nbs != 2 || bs[0] != 1 || bs[1] < 1 || (K > 0 && K % bs[1] != 0))
    return PTERUN_FAIL_ARG(ctx, "arg 'block_size': must be [1, g] with g dividing %" PRId64, K);
  g = bs[1];
  G = K > 0 ? K / g : 0;
  S = sc->dtype;
  if (!pterun_dtype_is_float(S))
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scale': dtype %s is not floating",
                           pterun_dtype_name(S));
  if (sc->numel != N * G)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scale': expected %" PRId64 " elements, got %" PRId64,
                           N * G, sc->numel);
  if (zp) {
    Z = zp->dtype;
    if (!pterun_dtype_is_float(Z) && !pterun_dtype_is_int(Z))
      return PTERUN_FAIL_ARG(ctx, "arg 'weight_zero_point': dtype %s not supported",
                             pterun_dtype_name(Z));
    if (zp->numel != N * G)
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'weight_zero_point': expected %" PRId64 " elements, got %" PRId64,
                             N * G, zp->numel);
    PTERUN_TRY(check_data(ctx, zp, "weight_zero_point"));
  }
  if (bias) {
    if (bias->rank != 1 || bias->sizes[0] != N || bias->dtype != O)
      return PTERUN_FAIL_ARG(ctx, "arg 'bias': must be 1-D [%" PRId64 "] of the input dtype", N);
    PTERUN_TRY(check_data(ctx, bias, "bias"));
  }
  if (out->dtype != O) return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype must equal the input dtype");
  PTERUN_TRY(check_data(ctx, x, "input"));
  PTERUN_TRY(check_data(ctx, w, "weight"));
  PTERUN_TRY(check_data(ctx, sc, "weight_scale"));
  for (d = 0; d + 1 < x->rank; ++d) osz[d] = x->sizes[d];
  osz[x->rank - 1] = N;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", x->rank, osz));
  PTERUN_TRY(check_data(ctx, out, "out"));
  M = K > 0 ? x->numel / K : x->numel / (x->sizes[x->rank - 1] ? x->sizes[x->rank - 1] : 1);
  if (K == 0) { /* empty reduction: bias or zeros */
    for (r = 0; r < M; ++r)
      for (n = 0; n < N; ++n)
        pterun_store_f64(out->data, O, r * N + n, bias ? pterun_load_f64(bias->data, O, n) : 0.0);
    return PTERUN_STATUS_OK;
  }
  P = pterun_promote_types(O, S);
  if (O == PTERUN_DTYPE_F32 && w->dtype == PTERUN_DTYPE_I8 && S == PTERUN_DTYPE_F32 &&
      (zp == NULL || zp->dtype == PTERUN_DTYPE_I8)) {
    /* the common case (torchao int8-stored int4/int8 codes, f32 scales, int8
     * zero points): weight-stationary loop, the out rows are the accumulators */
    const float* xp = (const float*)x->data;
    const int8_t* wp = (const int8_t*)w->data;
    const float* sp = (const float*)sc->data;
    const int8_t* zpp = zp ? (const int8_t*)zp->data : NULL;
    float* op = (float*)out->data;
    for (n = 0; n < N; ++n) {
      for (r = 0; r < M; ++r) op[r * N + n] = 0.0f;
      for (k = 0; k < K; ++k) {
        int64_t gi = n * G + k / g;
        float dq = (float)wp[n * K + k];
        float wv;
        if (zpp) dq = dq - (float)zpp[gi];
        wv = dq * sp[gi];
        for (r = 0; r < M; ++r) op[r * N + n] += xp[r * K + k] * wv;
      }
      if (bias)
        for (r = 0; r < M; ++r) op[r * N + n] += ((const float*)bias->data)[n];
    }
    return PTERUN_STATUS_OK;
  }
  for (r = 0; r < M; ++r)
    for (n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (k = 0; k < K; ++k) {
        int64_t gi = n * G + k / g;
        double dq = pterun_round_to_dtype((double)pterun_load_i64(w->data, w->dtype, n * K + k), O),
               wv;
        if (zp) {
          double z = pterun_dtype_is_float(Z) ? pterun_load_f64(zp->data, Z, gi)
                                              : (double)pterun_load_i64(zp->data, Z, gi);
          dq = pterun_round_to_dtype(dq - pterun_round_to_dtype(z, O), O);
        }
        wv = pterun_round_to_dtype(pterun_round_to_dtype(dq * pterun_load_f64(sc->data, S, gi), P),
                                   O);
        acc += (float)pterun_load_f64(x->data, O, r * K + k) * (float)wv;
      }
      if (bias) acc += (float)pterun_load_f64(bias->data, O, n);
      pterun_store_f64(out->data, O, r * N + n, (double)acc);
    }
  return PTERUN_STATUS_OK;
}
