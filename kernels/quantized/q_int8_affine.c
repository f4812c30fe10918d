/* Fused dynamic-activation linears on torchao's affine forms (8da4w / 8da8w),
 * made by the load-time fusion pass (src/optimize/method_fuse_patterns.inc):
 *
 *   pterun_quantized::linear_dynamic_affine.out  replaces
 *     dequantize_affine(activation codes) -> mm, with the weight's
 *     dequantize_affine -> permute_copy as a feed. Arguments: the
 *     activation's dequantize_affine (input, block_size, scale, zero_point,
 *     input_dtype, quant_min, quant_max, output_dtype), the weight's (same
 *     eight), permute_copy's dims, out, the return slot (19).
 *   pterun_quantized::linear_dequantize_dynamic.out  replaces
 *     dequantize_affine(activation codes) -> pterun_quantized::linear_dequantize
 *     (the export-time fused weight). Arguments: the activation's eight, then
 *     linear_dequantize's weight, block_size, weight_scale,
 *     weight_zero_point, bias, out, the return slot (15).
 *
 * choose_qparams_affine and quantize_affine stay (the reference kernels), so
 * the activation codes are the reference's bit for bit. The weight (int4 or
 * int8 codes, per-group scales and zero points) is packed once at load into
 * libpterun_compute's low-bit layout; each output is then
 * sum over groups of (w_scale * a_scale) * exact_int(sum (qa - za)(qw - zw))
 * (pterun_compute_lowbit_linear_qa_ex), which differs from the reference's
 * float dequantize-then-matmul only by float rounding (tests/quantized
 * measure how many outputs differ). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/quantized/qutil.h"
#include "pterun/compute.h"
#include "pterun/cpu.h"

typedef struct qk_aff_state {
  pterun_compute_lowbit_weights w;
  int64_t m_cap;   /* activation rows the planned input holds */
  float* a_scale;  /* m_cap */
  int32_t* a_zero; /* m_cap */
  void* alias_buf; /* a copy of the codes when the output shares their bytes */
  size_t alias_cap;
} qk_aff_state;

/* The dequantize_affine arguments of one operand (args[i .. i + 7]). */
typedef struct qk_aff_q {
  pterun_tensor *x, *scale, *zp;
  const int64_t* bs; /* NULL: per row (dequantize_per_token) */
  size_t nbs;
  int64_t bs_group[2]; /* dequantize_per_channel_group's [1, group_size] */
  int64_t in_dtype, out_dtype;
  int has_range;
  int64_t qmin, qmax;
} qk_aff_q;

typedef struct qk_aff_call {
  qk_aff_q a, w;
  int w_has_range; /* the weight's quant range is known (dequantize_affine) */
  pterun_tensor* bias;
  pterun_tensor* out;
} qk_aff_call;

static pterun_status read_q(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                            const char* what, qk_aff_q* q) {
  pterun_scalar lo, hi;
  int has_lo, has_hi;
  (void)what;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i, "input", &q->x));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i + 1, "block_size", &q->bs, &q->nbs, 0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i + 2, "scale", &q->scale));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i + 3, "zero_point", &q->zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 4, "input_dtype", &q->in_dtype));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, i + 5, "quant_min", &lo, &has_lo));
  PTERUN_TRY(pterun_arg_opt_scalar(ctx, args, i + 6, "quant_max", &hi, &has_hi));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 7, "output_dtype", &q->out_dtype));
  q->qmin = !has_lo ? -128 : lo.is_float ? (int64_t)lo.d : lo.i;
  q->qmax = !has_hi ? 127 : hi.is_float ? (int64_t)hi.d : hi.i;
  q->has_range = 1;
  if (q->zp != NULL && q->zp->numel == 0) q->zp = NULL; /* torchao: empty = None */
  if (q->in_dtype != PTERUN_DTYPE_I8 || q->x->dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg 'input_dtype': the fused dynamic linear takes int8 codes");
  if (q->out_dtype != PTERUN_DTYPE_F32)
    return PTERUN_FAIL_ARG(ctx, "arg 'output_dtype': the fused dynamic linear computes float32");
  return PTERUN_STATUS_OK;
}

/* Zero point p of `zp` (NULL: 0) as an int32, refusing a non-integral or
 * huge one (the integer sums would no longer be the reference's). */
static pterun_status zp_at(pterun_kernel_context* ctx, const pterun_tensor* zp, int64_t p,
                           int32_t* out) {
  double z;
  if (zp == NULL) {
    *out = 0;
    return PTERUN_STATUS_OK;
  }
  z = pterun_dtype_is_float(zp->dtype) ? pterun_load_f64(zp->data, zp->dtype, p)
                                       : (double)pterun_load_i64(zp->data, zp->dtype, p);
  if (!(z >= -32768.0 && z <= 32767.0) || z != floor(z))
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': %g is not an integer in [-32768, 32767]", z);
  *out = (int32_t)z;
  return PTERUN_STATUS_OK;
}

static pterun_status check_params(pterun_kernel_context* ctx, const pterun_tensor* scale,
                                  const pterun_tensor* zp, int64_t count, int allow_f64) {
  if (!(allow_f64 && scale->dtype == PTERUN_DTYPE_F64))
    PTERUN_TRY(pterun_check_dtype(ctx, scale, "scale", PTERUN_DTYPE_F32));
  PTERUN_TRY(pterun_check_data(ctx, scale, "scale"));
  if (scale->numel != count || !pterun_tensor_is_contiguous(scale))
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': want %" PRId64 " contiguous values, got %" PRId64,
                           count, scale->numel);
  if (zp != NULL) {
    PTERUN_TRY(pterun_check_data(ctx, zp, "zero_point"));
    if (zp->numel != count || !pterun_tensor_is_contiguous(zp) ||
        !(pterun_dtype_is_int(zp->dtype) || pterun_dtype_is_float(zp->dtype)))
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': want %" PRId64 " contiguous numbers", count);
  }
  return PTERUN_STATUS_OK;
}

/* Load time: the weight (a constant [N, K] of codes, per-group q-params)
 * packed into the low-bit layout; room for the per-row activation
 * q-params. */
static pterun_status prepare(pterun_kernel_context* ctx, const qk_aff_call* c) {
  const pterun_tensor* w = c->w.x;
  qk_aff_state* st;
  int64_t n, k, g, groups, p;
  int nbit;
  int32_t* zeros = NULL;
  /* Declines (the chain then runs unfused): a weight that is not a constant
   * [N, K] matrix, a group size the low-bit layout has no kernel for. */
  if (w->data == NULL || w->rank != 2) return PTERUN_STATUS_NOT_SUPPORTED;
  PTERUN_TRY(pterun_check_contiguous(ctx, w, "weight"));
  n = w->sizes[0];
  k = w->sizes[1];
  if (c->w.nbs != 2 || c->w.bs[0] != 1 || c->w.bs[1] < 1 || k % c->w.bs[1] != 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'block_size': want [1, group] with group dividing %" PRId64,
                           k);
  g = c->w.bs[1];
  groups = k / g;
  PTERUN_TRY(check_params(ctx, c->w.scale, c->w.zp, n * groups, 0));
  if (c->w_has_range) {
    nbit = c->w.qmin >= -8 && c->w.qmax <= 7 ? 4 : 8;
  } else { /* the codes' own range */
    const int8_t* q = (const int8_t*)w->data;
    nbit = 4;
    for (p = 0; p < n * k && nbit == 4; ++p)
      if (q[p] < -8 || q[p] > 7) nbit = 8;
  }
  const size_t bytes = pterun_compute_lowbit_pack_bytes(nbit, n, k, g, c->w.zp != NULL, 0);
  if (bytes == 0) return PTERUN_STATUS_NOT_SUPPORTED; /* groups not a multiple of 16 */
  st = pterun_kernel_state_alloc(ctx, sizeof *st, 64);
  uint8_t* buf = pterun_kernel_state_alloc(ctx, bytes, 64);
  if (c->w.zp != NULL)
    zeros = pterun_kernel_state_alloc(ctx, sizeof(int32_t) * (size_t)(n * groups), 64);
  if (st == NULL || buf == NULL || (c->w.zp != NULL && zeros == NULL))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate the packed dynamic-linear weight (%zu bytes)",
                              bytes);
  memset(st, 0, sizeof *st);
  for (p = 0; zeros != NULL && p < n * groups; ++p) PTERUN_TRY(zp_at(ctx, c->w.zp, p, &zeros[p]));
  if (pterun_compute_lowbit_pack(nbit, n, k, g, (const int8_t*)w->data,
                                 (const float*)c->w.scale->data, zeros, NULL, buf, bytes,
                                 &st->w) != 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': a code lies outside [%" PRId64 ", %" PRId64 "]",
                           c->w.qmin, c->w.qmax);
  /* activation rows: the planned codes' (data and capacity are hidden at
   * prepare: the sizes are the plan's bound) */
  st->m_cap = c->a.x->numel / k;
  /* the driver's quantized rows in scratch, for every row at once */
  pterun_kernel_scratch_reserve(ctx, pterun_compute_lowbit_scratch_bytes(&st->w, st->m_cap));
  st->a_scale = pterun_kernel_state_alloc(ctx, sizeof(float) * (size_t)(st->m_cap + 1), 64);
  st->a_zero = pterun_kernel_state_alloc(ctx, sizeof(int32_t) * (size_t)(st->m_cap + 1), 64);
  if (st->a_scale == NULL || st->a_zero == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate the activation parameters");
  /* The memory plan may give the output the codes' bytes (they are dead
   * after the original dequantize): room for a copy when scratch is short. */
  st->alias_cap = c->a.x->nbytes;
  st->alias_buf = st->alias_cap > 0 ? pterun_kernel_state_alloc(ctx, st->alias_cap, 64) : NULL;
  if (st->alias_cap > 0 && st->alias_buf == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the input copy", st->alias_cap);
  return PTERUN_STATUS_OK;
}

static pterun_status execute(pterun_kernel_context* ctx, const qk_aff_call* c) {
  const qk_aff_state* st = (const qk_aff_state*)pterun_kernel_state(ctx);
  const pterun_tensor* x = c->a.x;
  int64_t m, r, osz[PTERUN_MAX_RANK];
  size_t d;
  const int8_t* qa;
  if (st == NULL) return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL, "not prepared");
  const int64_t n = st->w.n, k = st->w.k;
  if (x->rank < 1 || x->sizes[x->rank - 1] != k)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': last dimension is not the weight's K %" PRId64, k);
  PTERUN_TRY(pterun_check_contiguous(ctx, x, "input"));
  m = x->numel / k;
  if (m > st->m_cap)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': %" PRId64 " rows, more than the %" PRId64 " planned",
                           m, st->m_cap);
  if (c->a.bs != NULL) {
    if (c->a.nbs != (size_t)x->rank)
      return PTERUN_FAIL_ARG(ctx, "arg 'block_size': %zu entries for rank %d", c->a.nbs, x->rank);
    for (d = 0; d < c->a.nbs; ++d)
      if (c->a.bs[d] != (d + 1 == c->a.nbs ? k : 1))
        return PTERUN_FAIL_ARG(
            ctx, "arg 'block_size': the fused dynamic linear takes per-row parameters");
  }
  /* per token: float64 scales (choose_qparams_per_token_asymmetric's),
   * used in float32 like the torchao forms' */
  PTERUN_TRY(check_params(ctx, c->a.scale, c->a.zp, m, c->a.bs == NULL));
  for (r = 0; r < m; ++r) {
    st->a_scale[r] = (float)pterun_load_f64(c->a.scale->data, c->a.scale->dtype, r);
    PTERUN_TRY(zp_at(ctx, c->a.zp, r, &st->a_zero[r]));
  }
  if (c->bias != NULL) {
    PTERUN_TRY(pterun_check_dtype(ctx, c->bias, "bias", PTERUN_DTYPE_F32));
    PTERUN_TRY(pterun_check_contiguous(ctx, c->bias, "bias"));
    if (c->bias->numel != n) return PTERUN_FAIL_ARG(ctx, "arg 'bias': want %" PRId64 " values", n);
  }
  /* out: [M, N] (mm) or the input's leading dims and N */
  PTERUN_TRY(pterun_check_dtype(ctx, c->out, "out", PTERUN_DTYPE_F32));
  if (c->out->rank == 2) {
    osz[0] = m;
    osz[1] = n;
  } else if (c->out->rank == x->rank) {
    memcpy(osz, x->sizes, sizeof(int64_t) * (size_t)x->rank);
    osz[x->rank - 1] = n;
  } else {
    return PTERUN_FAIL_ARG(ctx, "arg 'out': rank %d for an input of rank %d", c->out->rank,
                           x->rank);
  }
  PTERUN_TRY(pterun_out_resize(ctx, c->out, "out", (size_t)c->out->rank, osz));
  PTERUN_TRY(pterun_check_contiguous(ctx, c->out, "out"));
  if (m == 0) return PTERUN_STATUS_OK;
  {
    const void* codes;
    PTERUN_TRY(qk_unalias(ctx, x->data, x->nbytes, c->out->data, c->out->nbytes, st->alias_buf,
                          st->alias_cap, &codes));
    qa = (const int8_t*)codes;
  }
  PTERUN_TRY(pterun_compute_lowbit_linear_qa_ex(
      ctx, &st->w, qa, st->a_scale, st->a_zero, m, (float*)c->out->data, NULL,
      pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx)));
  if (c->bias != NULL) {
    float* y = (float*)c->out->data;
    const float* b = (const float*)c->bias->data;
    for (r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) y[r * n + j] = y[r * n + j] + b[j];
  }
  return PTERUN_STATUS_OK;
}

static pterun_status run(pterun_kernel_context* ctx, const qk_aff_call* c) {
  return pterun_kernel_preparing(ctx) ? prepare(ctx, c) : execute(ctx, c);
}

/* dequantize_affine x 2, permute_copy dims, out (19 slots with the return). */
PTERUN_KERNEL(qk_linear_dynamic_affine_out) {
  qk_aff_call c;
  const int64_t* dims;
  size_t nd;
  memset(&c, 0, sizeof c);
  PTERUN_CHECK_NARGS(ctx, nargs, 19);
  PTERUN_TRY(read_q(ctx, args, 0, "input", &c.a));
  PTERUN_TRY(read_q(ctx, args, 8, "weight", &c.w));
  c.w_has_range = 1;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 16, "dims", &dims, &nd, 0));
  if (nd != 2 || !((dims[0] == 1 || dims[0] == -1) && (dims[1] == 0 || dims[1] == -2)))
    return PTERUN_FAIL_ARG(
        ctx, "arg 'dims': the fused dynamic linear takes an [N, K] weight transposed");
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 17, "out", &c.out));
  return run(ctx, &c);
}

/* dequantize_affine, then linear_dequantize's weight, block_size,
 * weight_scale, weight_zero_point, bias, out (15 slots with the return). */
PTERUN_KERNEL(qk_linear_dequantize_dynamic_out) {
  qk_aff_call c;
  memset(&c, 0, sizeof c);
  PTERUN_CHECK_NARGS(ctx, nargs, 15);
  PTERUN_TRY(read_q(ctx, args, 0, "input", &c.a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "weight", &c.w.x));
  if (c.w.x->dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': the fused dynamic linear takes int8 codes");
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 9, "block_size", &c.w.bs, &c.w.nbs, 0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 10, "weight_scale", &c.w.scale));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 11, "weight_zero_point", &c.w.zp));
  if (c.w.zp != NULL && c.w.zp->numel == 0) c.w.zp = NULL;
  c.w.qmin = -128;
  c.w.qmax = 127;
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 12, "bias", &c.bias));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 13, "out", &c.out));
  return run(ctx, &c);
}

/* quantized_decomposed's per-token form (torchao's earlier 8da4w): the
 * activation's dequantize_per_token (input, scales, zero_points, quant_min,
 * quant_max, dtype, output_dtype), the weight's dequantize_per_channel_group
 * (input, scales, zero_points, quant_min, quant_max, dtype, group_size,
 * output_dtype), permute_copy's dims, out (18 slots with the return). */
PTERUN_KERNEL(qk_linear_dynamic_per_token_out) {
  qk_aff_call c;
  const int64_t* dims;
  size_t nd;
  int64_t group;
  memset(&c, 0, sizeof c);
  PTERUN_CHECK_NARGS(ctx, nargs, 18);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &c.a.x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &c.a.scale));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "zero_points", &c.a.zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "output_dtype", &c.a.out_dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "weight", &c.w.x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "weight_scales", &c.w.scale));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 9, "weight_zero_points", &c.w.zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 10, "weight_quant_min", &c.w.qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 11, "weight_quant_max", &c.w.qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 13, "group_size", &group));
  PTERUN_TRY(pterun_arg_int(ctx, args, 14, "weight_output_dtype", &c.w.out_dtype));
  if (c.a.x->dtype != PTERUN_DTYPE_I8 || c.w.x->dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg 'input'/'weight': the fused dynamic linear takes int8 codes");
  if (c.a.out_dtype != PTERUN_DTYPE_F32 || c.w.out_dtype != PTERUN_DTYPE_F32)
    return PTERUN_FAIL_ARG(ctx, "arg 'output_dtype': the fused dynamic linear computes float32");
  c.w.bs_group[0] = 1;
  c.w.bs_group[1] = group;
  c.w.bs = c.w.bs_group;
  c.w.nbs = 2;
  c.w_has_range = 1;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 15, "dims", &dims, &nd, 0));
  if (nd != 2 || !((dims[0] == 1 || dims[0] == -1) && (dims[1] == 0 || dims[1] == -2)))
    return PTERUN_FAIL_ARG(
        ctx, "arg 'dims': the fused dynamic linear takes an [N, K] weight transposed");
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 16, "out", &c.out));
  return run(ctx, &c);
}
