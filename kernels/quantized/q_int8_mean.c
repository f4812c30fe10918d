/* Fused dequantize -> mean -> quantize on 8-bit data (a quantized global
 * average pool: the exporter writes adaptive_avg_pool2d(1) as mean over
 * H, W), made by the load-time fusion pass (src/optimize/method_fuse_patterns.inc):
 *
 *   pterun_quantized::mean_q8.out: dequantize_per_tensor's input, scale,
 *   zero_point, quant_min, quant_max, dtype; mean's dim, keepdim, dtype; the
 *   output quantize's scale, zero_point, quant_min, quant_max, dtype; out
 *   and the return slot (16).
 *
 * Each code is dequantized through a 256-entry table made by the reference
 * step (qk_dequantize_run) and the values summed in double, as the portable
 * mean does: for any realistic block the double sums are exact, so their
 * order does not matter and the mean (sum / count, rounded to float32) and
 * the reference quantize step after it give the unfused result bit for
 * bit, without writing the float tensor. */
#include <inttypes.h>

#include "kernels/quantized/qutil.h"

typedef struct qk_mean_call {
  pterun_tensor *x, *out;
  qk_q8 in, outq;
  const int64_t* dims;
  size_t ndims;
  int keepdim;
} qk_mean_call;

static pterun_status read_call(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               qk_mean_call* c) {
  int64_t dt;
  int has_dt;
  memset(c, 0, sizeof *c);
  PTERUN_CHECK_NARGS(ctx, nargs, 16);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &c->x));
  PTERUN_TRY(qk_arg_q8(ctx, args, 1, 0, &c->in));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 6, "dim", &c->dims, &c->ndims, 1));
  PTERUN_TRY(pterun_arg_bool(ctx, args, 7, "keepdim", &c->keepdim));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 8, "dtype", &dt, &has_dt));
  PTERUN_TRY(qk_arg_q8(ctx, args, 9, 1, &c->outq));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 14, "out", &c->out));
  if (has_dt && dt != PTERUN_DTYPE_F32)
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': the fused mean computes float32");
  return PTERUN_STATUS_OK;
}

/* Which dims are reduced (a bit per dim); the output sizes. */
static pterun_status reduced_dims(pterun_kernel_context* ctx, const qk_mean_call* c, uint32_t* mask,
                                  int64_t* osz, size_t* orank) {
  const int rank = c->x->rank;
  *mask = 0;
  if (c->ndims == 0) {
    *mask = rank >= 32 ? 0xffffffffu : (1u << rank) - 1u;
  } else {
    for (size_t k = 0; k < c->ndims; ++k) {
      int64_t d = c->dims[k] < 0 ? c->dims[k] + rank : c->dims[k];
      if (d < 0 || d >= rank)
        return PTERUN_FAIL_ARG(ctx, "arg 'dim': %" PRId64 " out of range", c->dims[k]);
      *mask |= 1u << d;
    }
  }
  *orank = 0;
  for (int d = 0; d < rank; ++d) {
    if (!(*mask & (1u << d)))
      osz[(*orank)++] = c->x->sizes[d];
    else if (c->keepdim)
      osz[(*orank)++] = 1;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status execute(pterun_kernel_context* ctx, const qk_mean_call* c, double* spare,
                             size_t spare_n) {
  uint32_t mask = 0;
  int64_t osz[PTERUN_MAX_RANK], ostride[PTERUN_MAX_RANK], idx[PTERUN_MAX_RANK] = {0}, count = 1;
  size_t orank = 0;
  float s_in, s_out, buf[256], table[256];
  const int rank = c->x->rank;
  PTERUN_TRY(qk_check_q8(ctx, &c->in, &s_in));
  PTERUN_TRY(qk_check_q8(ctx, &c->outq, &s_out));
  if (c->x->dtype != c->in.dtype || c->out->dtype != c->outq.dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'input'/'out': dtypes %s/%s, the program says %s/%s",
                           pterun_dtype_name(c->x->dtype), pterun_dtype_name(c->out->dtype),
                           pterun_dtype_name((int)c->in.dtype),
                           pterun_dtype_name((int)c->outq.dtype));
  /* any dim order: strides follow sizes and dim order, so the codes are
   * walked in memory order below (channels-last after the layout pass) */
  PTERUN_TRY(reduced_dims(ctx, c, &mask, osz, &orank));
  PTERUN_TRY(pterun_out_resize(ctx, c->out, "out", orank, osz));
  PTERUN_TRY(pterun_check_contiguous(ctx, c->out, "out"));
  const int64_t n_out = c->out->numel, n_in = c->x->numel;
  if (n_out == 0) return PTERUN_STATUS_OK;
  /* per input dim: its step in the output (0 when reduced) */
  int64_t step = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (mask & (1u << d)) {
      ostride[d] = 0;
      count *= c->x->sizes[d];
    } else {
      ostride[d] = step;
      step *= c->x->sizes[d];
    }
  }
  /* the prepared room first (the arena is sized from reservations) */
  double* sum = spare != NULL && (size_t)n_out <= spare_n
                    ? spare
                    : pterun_kernel_scratch(ctx, sizeof(double) * (size_t)n_out, 64);
  if (sum == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "fused mean: no room for %" PRId64 " sums", n_out);
  qk_dequant_table(&c->in, s_in, table);
  for (int64_t k = 0; k < n_out; ++k) sum[k] = 0.0;
  {
    const uint8_t* q = (const uint8_t*)c->x->data;
    int64_t o = 0;
    for (int64_t k = 0; k < n_in; ++k) {
      sum[o] += (double)table[q[k]];
      for (int j = rank - 1; j >= 0; --j) { /* next input index, in memory order */
        const int d = c->x->dim_order[j];
        o += ostride[d];
        if (++idx[d] < c->x->sizes[d]) break;
        o -= ostride[d] * c->x->sizes[d];
        idx[d] = 0;
      }
    }
  }
  /* sums first, then the output: the output may share the input's bytes */
  for (int64_t k0 = 0; k0 < n_out; k0 += 256) {
    const int64_t cnt = n_out - k0 < 256 ? n_out - k0 : 256;
    for (int64_t k = 0; k < cnt; ++k) buf[k] = (float)(sum[k0 + k] / (double)count);
    qk_quantize_run(buf, PTERUN_DTYPE_F32, (uint8_t*)c->out->data + k0, (int)c->outq.dtype, 0, cnt,
                    1.0f / s_out, (int32_t)c->outq.zp, c->outq.qmin, c->outq.qmax);
  }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(qk_mean_q8_out) {
  qk_mean_call c;
  PTERUN_TRY(read_call(ctx, args, nargs, &c));
  if (pterun_kernel_preparing(ctx)) {
    /* room for the sums when the scratch arena is short */
    const size_t n = (size_t)(c.out->numel > 0 ? c.out->numel : 1);
    size_t* st = pterun_kernel_state_alloc(ctx, 64 + sizeof(double) * n, 64);
    if (st == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate the sums");
    st[0] = n;
    return PTERUN_STATUS_OK;
  }
  size_t* st = (size_t*)pterun_kernel_state(ctx);
  return execute(ctx, &c, st != NULL ? (double*)(void*)((uint8_t*)st + 64) : NULL,
                 st != NULL ? st[0] : 0);
}
