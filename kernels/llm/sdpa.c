/* llama::custom_sdpa, llama::sdpa_with_kv_cache, llama::custom_quantized_sdpa:
 * argument checks in ExecuTorch's order, then the attention engine. */
#include <inttypes.h>

#include "kernels/llm/attention.h"
#include "pterun/threadpool.h"

pterun_status llm_cache_write(pterun_kernel_context* ctx, const pterun_tensor* value,
                              pterun_tensor* cache, int64_t start_pos);

static void src_of(llm_attn_src* s, const pterun_tensor* t, int seq_dim) {
  s->data = t->data;
  s->dtype = t->dtype;
  s->sB = t->strides[0];
  s->sS = t->strides[seq_dim];
  s->sH = t->strides[seq_dim == 1 ? 2 : 1];
  s->scales = NULL;
  s->zps = NULL;
  s->pB = s->pS = s->pH = 0;
}

/* Per-token parameters of an int8 tensor: scales f32 and zero points i8 with
 * the tensor's shape except a last dim of 1. */
static pterun_status quant_params(pterun_kernel_context* ctx, llm_attn_src* s,
                                  const pterun_tensor* t, const pterun_tensor* zp,
                                  const pterun_tensor* sc, int seq_dim, const char* name) {
  int d;
  PTERUN_TRY(pterun_check_dtype(ctx, t, name, PTERUN_DTYPE_I8));
  PTERUN_TRY(llm_check_tensor(ctx, sc, "scales", 4));
  PTERUN_TRY(llm_check_tensor(ctx, zp, "zero_points", 4));
  PTERUN_TRY(pterun_check_dtype(ctx, sc, "scales", PTERUN_DTYPE_F32));
  PTERUN_TRY(pterun_check_dtype(ctx, zp, "zero_points", PTERUN_DTYPE_I8));
  for (d = 0; d < 3; ++d)
    if (sc->sizes[d] != t->sizes[d] || zp->sizes[d] != t->sizes[d])
      return PTERUN_FAIL_ARG(ctx, "%s: quantization parameters differ in shape at dim %d", name, d);
  s->scales = (const float*)sc->data;
  s->zps = (const int8_t*)zp->data;
  s->pB = sc->strides[0];
  s->pS = sc->strides[seq_dim];
  s->pH = sc->strides[seq_dim == 1 ? 2 : 1];
  if (zp->strides[0] != s->pB || zp->strides[seq_dim] != s->pS)
    return PTERUN_FAIL_ARG(ctx, "%s: scales and zero points must share a layout", name);
  return PTERUN_STATUS_OK;
}

typedef struct sdpa_args {
  pterun_tensor *q, *k, *v, *mask, *out;
  int64_t start_pos;
  int causal, has_scale;
  double scale;
  /* int8 inputs only */
  pterun_tensor *qzp, *qs, *kzp, *ks, *vzp, *vs;
  int seq_at_dim_2;
} sdpa_args;

static pterun_status run_sdpa(pterun_kernel_context* ctx, const sdpa_args* a) {
  llm_attn_job job;
  int sd = a->seq_at_dim_2 ? 2 : 1, hd = a->seq_at_dim_2 ? 1 : 2;
  int64_t tiles, kv_size;
  const int quant = a->q->dtype == PTERUN_DTYPE_I8;
  if (a->mask != NULL && a->causal)
    return PTERUN_FAIL_ARG(ctx, "attn_mask and is_causal cannot be set at the same time");
  PTERUN_TRY(llm_check_tensor(ctx, a->q, "query", 4));
  PTERUN_TRY(llm_check_tensor(ctx, a->k, "key", 4));
  PTERUN_TRY(llm_check_tensor(ctx, a->v, "value", 4));
  if (a->q->sizes[3] != a->v->sizes[3] || a->k->sizes[3] != a->v->sizes[3])
    return PTERUN_FAIL_ARG(ctx, "query, key and value must have the same head size");
  if (!(llm_is_attn_float(a->q->dtype) || quant))
    return PTERUN_FAIL_ARG(ctx, "query must be float32, float16, bfloat16 or int8, got %s",
                           pterun_dtype_name(a->q->dtype));
  if (a->k->dtype != a->q->dtype || a->v->dtype != a->q->dtype)
    return PTERUN_FAIL_ARG(ctx, "key and value must have the query's dtype");
  if (a->mask != NULL) {
    PTERUN_TRY(llm_check_tensor(ctx, a->mask, "attn_mask", 2));
    PTERUN_TRY(pterun_check_dtype(ctx, a->mask, "attn_mask", PTERUN_DTYPE_F32));
  }
  if (a->k->sizes[0] != a->q->sizes[0] || a->v->sizes[0] != a->q->sizes[0] ||
      a->k->sizes[sd] != a->v->sizes[sd] || a->k->sizes[hd] != a->v->sizes[hd])
    return PTERUN_FAIL_ARG(ctx,
                           "key and value shapes do not match the query's batch or each other");
  PTERUN_TRY(llm_check_tensor(ctx, a->out, "out", 4));
  PTERUN_TRY(pterun_out_resize_like(ctx, a->out, "out", a->q));
  if (a->out->dtype != (quant ? PTERUN_DTYPE_F32 : a->q->dtype))
    return PTERUN_FAIL_ARG(ctx, "out must be %s, got %s",
                           pterun_dtype_name(quant ? PTERUN_DTYPE_F32 : a->q->dtype),
                           pterun_dtype_name(a->out->dtype));

  memset(&job, 0, sizeof job);
  src_of(&job.q, a->q, sd);
  src_of(&job.k, a->k, sd);
  src_of(&job.v, a->v, sd);
  if (quant) {
    if (!a->qzp || !a->qs || !a->kzp || !a->ks || !a->vzp || !a->vs)
      return PTERUN_FAIL_ARG(ctx, "int8 query, key and value need all six scales and zero points");
    PTERUN_TRY(quant_params(ctx, &job.q, a->q, a->qzp, a->qs, sd, "query"));
    PTERUN_TRY(quant_params(ctx, &job.k, a->k, a->kzp, a->ks, sd, "key"));
    PTERUN_TRY(quant_params(ctx, &job.v, a->v, a->vzp, a->vs, sd, "value"));
  }
  job.out = a->out->data;
  job.out_dtype = a->out->dtype;
  job.oB = a->out->strides[0];
  job.oS = a->out->strides[sd];
  job.oH = a->out->strides[hd];
  job.B = a->q->sizes[0];
  job.Sq = a->q->sizes[sd];
  job.Hq = a->q->sizes[hd];
  job.Hkv = a->k->sizes[hd];
  job.D = a->q->sizes[3];
  kv_size = a->v->sizes[sd];
  if (job.Hkv <= 0 || job.Hkv > job.Hq || job.Hq % job.Hkv != 0)
    return PTERUN_FAIL_ARG(ctx,
                           "query heads (%" PRId64 ") must be a multiple of kv heads (%" PRId64 ")",
                           job.Hq, job.Hkv);
  if (a->start_pos < 0)
    return PTERUN_FAIL_ARG(ctx, "start_pos %" PRId64 " is negative", a->start_pos);
  job.start_pos = a->start_pos;
  job.causal = a->causal;
  if (a->mask != NULL) {
    /* Mask mode: every key of the cache, the mask added after scaling. */
    job.nkeys = kv_size;
    if (a->mask->sizes[0] != job.Sq || a->mask->sizes[1] != kv_size)
      return PTERUN_FAIL_ARG(ctx, "attn_mask must be [%" PRId64 ", %" PRId64 "]", job.Sq, kv_size);
    job.mask = (const float*)a->mask->data;
    job.mask_ld = a->mask->sizes[1];
  } else {
    /* Without a mask only the keys written so far take part (causal or not). */
    if (a->start_pos > kv_size - job.Sq)
      return PTERUN_FAIL_ARG(
          ctx, "start_pos %" PRId64 " + seq_len %" PRId64 " exceeds the %" PRId64 " cached keys",
          a->start_pos, job.Sq, kv_size);
    job.nkeys = a->start_pos + job.Sq;
  }
  job.scale = (float)(a->has_scale ? a->scale : 1.0 / sqrt((double)job.D));
  job.ops = pterun_compute_f32_rowops_select();
  if (a->out->numel == 0) return PTERUN_STATUS_OK;
  PTERUN_TRY(llm_attn_plan(ctx, &job, &tiles));
  /* Tiles write disjoint output rows: the method's pool splits them, when
   * the products (scores and values: 2 multiply-adds per query, key and
   * lane, ~1.1 ns each on one thread, measured) pay for it; decode at a short
   * position does not. */
  const double fma =
      2.0 * (double)job.B * (double)job.Hq * (double)job.Sq * (double)job.nkeys * (double)job.D;
  pterun_parallelize_1d_tile(pterun_kernel_threadpool(ctx), llm_attn_tiles, &job, (size_t)tiles, 1,
                             PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                                 PTERUN_PARALLEL_WORK_NS(fma * 1.1));
  return PTERUN_STATUS_OK;
}

/* Reads the shared tail: attn_mask, dropout_p, is_causal, scale at i.. i+3. */
static pterun_status read_common(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                 sdpa_args* a) {
  double dropout;
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i, "attn_mask", &a->mask));
  PTERUN_TRY(pterun_arg_double(ctx, args, i + 1, "drpout_p", &dropout));
  PTERUN_TRY(pterun_arg_bool(ctx, args, i + 2, "is_causal", &a->causal));
  PTERUN_TRY(pterun_arg_opt_double(ctx, args, i + 3, "scale", &a->scale, &a->has_scale));
  (void)dropout; /* ExecuTorch ignores it too: inference only */
  return PTERUN_STATUS_OK;
}

/* llama::custom_sdpa.out(q, k, v, SymInt start_pos, Tensor? attn_mask=None,
 *   float drpout_p=0.0, bool is_causal=False, float? scale=None, *, out) */
PTERUN_KERNEL(llm_custom_sdpa_out) {
  sdpa_args a;
  memset(&a, 0, sizeof a);
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "query", &a.q));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "key", &a.k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "value", &a.v));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "start_pos", &a.start_pos));
  PTERUN_TRY(read_common(ctx, args, 4, &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "out", &a.out));
  if (a.q->dtype == PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "int8 attention needs custom_quantized_sdpa's scales");
  return run_sdpa(ctx, &a);
}

/* llama::sdpa_with_kv_cache.out(q, k, v, Tensor(a!) key_cache,
 *   Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len, Tensor? attn_mask,
 *   float drpout_p, bool is_causal, float? scale, *, out) */
PTERUN_KERNEL(llm_sdpa_with_kv_cache_out) {
  sdpa_args a;
  pterun_tensor *k, *v;
  int64_t seq_len;
  memset(&a, 0, sizeof a);
  PTERUN_CHECK_NARGS(ctx, nargs, 13);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "query", &a.q));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "key", &k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "value", &v));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "key_cache", &a.k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "value_cache", &a.v));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "start_pos", &a.start_pos));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "seq_len", &seq_len));
  PTERUN_TRY(read_common(ctx, args, 7, &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 11, "out", &a.out));
  PTERUN_TRY(llm_check_tensor(ctx, a.k, "key_cache", 4));
  PTERUN_TRY(llm_check_tensor(ctx, a.v, "value_cache", 4));
  if (a.start_pos < 0 || a.start_pos >= a.k->sizes[1] || a.start_pos >= a.v->sizes[1] ||
      seq_len < 0 || seq_len > a.k->sizes[1] - a.start_pos || seq_len > a.v->sizes[1] - a.start_pos)
    return PTERUN_FAIL_ARG(ctx, "start_pos %" PRId64 " + seq_len %" PRId64 " must fit the caches",
                           a.start_pos, seq_len);
  if (a.q->dtype == PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "int8 attention needs custom_quantized_sdpa's scales");
  PTERUN_TRY(llm_cache_write(ctx, k, a.k, a.start_pos));
  PTERUN_TRY(llm_cache_write(ctx, v, a.v, a.start_pos));
  return run_sdpa(ctx, &a);
}

/* llama::custom_quantized_sdpa.out(q, k, v, SymInt start_pos, Tensor? attn_mask,
 *   float drpout_p, bool is_causal, float? scale, Tensor? q_zero_points,
 *   Tensor? q_scales, Tensor? k_zero_points, Tensor? k_scales,
 *   Tensor? v_zero_points, Tensor? v_scales, bool is_seq_at_dim_2, *, out) */
PTERUN_KERNEL(llm_custom_quantized_sdpa_out) {
  sdpa_args a;
  memset(&a, 0, sizeof a);
  PTERUN_CHECK_NARGS(ctx, nargs, 17);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "query", &a.q));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "key", &a.k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "value", &a.v));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "start_pos", &a.start_pos));
  PTERUN_TRY(read_common(ctx, args, 4, &a));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 8, "q_zero_points", &a.qzp));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 9, "q_scales", &a.qs));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 10, "k_zero_points", &a.kzp));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 11, "k_scales", &a.ks));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 12, "v_zero_points", &a.vzp));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 13, "v_scales", &a.vs));
  PTERUN_TRY(pterun_arg_bool(ctx, args, 14, "is_seq_at_dim_2", &a.seq_at_dim_2));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 15, "out", &a.out));
  return run_sdpa(ctx, &a);
}
