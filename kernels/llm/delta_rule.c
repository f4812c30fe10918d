/* llama::gated_delta_rule (and its deprecated alias
 * channelwise_gated_delta_rule): the recurrent gated delta rule of
 * Qwen3.5-style linear attention, token by token. */
#include <inttypes.h>

#include "kernels/llm/llm_util.h"

/* gated_delta_rule.out(Tensor query, Tensor key, Tensor value, Tensor decay,
 *   Tensor beta, Tensor initial_state, *, Tensor(a!) out,
 *   Tensor(b!) final_state_out) -> (Tensor(a!), Tensor(b!))
 * q [B,Hq,T,K], k [B,H,T,K], v [B,H,T,V], decay [B,H,T,K] or [B,H,T],
 * beta [B,H,T], initial_state [B,H,K,V]; out [B,Hq,T,V], final [B,H,K,V].
 * Per (b, h), with S = initial_state: for each t, S = diag(decay_t) S;
 * delta = beta_t (v_t - S^T k_t); S += k_t delta^T; out_t = S^T q_t for
 * every query head of the group. The state is kept in final_state_out. */
pterun_status llm_gated_delta_rule_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pterun_tensor *q, *k, *v, *decay, *beta, *s0, *out, *fin;
  int64_t B, Hq, H, T, K, V, b, h, t, i, j, rep, osz[4], fsz[4];
  int per_row;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "query", &q));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "key", &k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "value", &v));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "decay", &decay));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "beta", &beta));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "initial_state", &s0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "final_state_out", &fin));
  PTERUN_TRY(llm_check_tensor(ctx, q, "query", 4));
  PTERUN_TRY(llm_check_tensor(ctx, k, "key", 4));
  PTERUN_TRY(llm_check_tensor(ctx, v, "value", 4));
  PTERUN_TRY(llm_check_tensor(ctx, beta, "beta", 3));
  PTERUN_TRY(llm_check_tensor(ctx, s0, "initial_state", 4));
  PTERUN_TRY(llm_check_tensor(ctx, decay, "decay", -1));
  {
    const pterun_tensor* all[] = {q, k, v, decay, beta, s0, out, fin};
    const char* names[] = {"query", "key",           "value", "decay",
                           "beta",  "initial_state", "out",   "final_state_out"};
    for (i = 0; i < 8; ++i) PTERUN_TRY(pterun_check_dtype(ctx, all[i], names[i], PTERUN_DTYPE_F32));
  }
  B = q->sizes[0];
  Hq = q->sizes[1];
  T = q->sizes[2];
  K = q->sizes[3];
  H = k->sizes[1];
  V = v->sizes[3];
  if (k->sizes[0] != B || k->sizes[2] != T || k->sizes[3] != K || v->sizes[0] != B ||
      v->sizes[1] != H || v->sizes[2] != T || beta->sizes[0] != B || beta->sizes[1] != H ||
      beta->sizes[2] != T || s0->sizes[0] != B || s0->sizes[1] != H || s0->sizes[2] != K ||
      s0->sizes[3] != V)
    return PTERUN_FAIL_ARG(ctx, "query, key, value, beta and initial_state shapes do not agree");
  if (H <= 0 || Hq % H != 0)
    return PTERUN_FAIL_ARG(ctx, "query heads must be a multiple of kv heads");
  per_row = decay->rank == 4;
  if (!(decay->rank == 3 || decay->rank == 4) || decay->sizes[0] != B || decay->sizes[1] != H ||
      decay->sizes[2] != T || (per_row && decay->sizes[3] != K))
    return PTERUN_FAIL_ARG(ctx, "decay must be [B, H, T, K] or [B, H, T]");
  osz[0] = B;
  osz[1] = Hq;
  osz[2] = T;
  osz[3] = V;
  for (i = 0; i < 4; ++i) fsz[i] = s0->sizes[i];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, osz));
  PTERUN_TRY(pterun_out_resize(ctx, fin, "final_state_out", 4, fsz));
  PTERUN_TRY(llm_check_tensor(ctx, out, "out", 4));
  PTERUN_TRY(llm_check_tensor(ctx, fin, "final_state_out", 4));
  rep = Hq / H;
  if (fin->data != s0->data && fin->nbytes > 0) memmove(fin->data, s0->data, fin->nbytes);
  for (b = 0; b < B; ++b)
    for (h = 0; h < H; ++h) {
      float* S = (float*)fin->data + (b * H + h) * K * V;
      for (t = 0; t < T; ++t) {
        const float* kt = (const float*)k->data + ((b * H + h) * T + t) * K;
        const float* vt = (const float*)v->data + ((b * H + h) * T + t) * V;
        const float* dt = (const float*)decay->data + ((b * H + h) * T + t) * (per_row ? K : 1);
        float bt = ((const float*)beta->data)[(b * H + h) * T + t];
        int64_t g;
        /* Decay the state's rows, then the prediction v^ = S^T k. The
         * delta goes into o's row temporarily (V floats of out are free). */
        float* delta = (float*)out->data + ((b * Hq + h * rep) * T + t) * V;
        for (j = 0; j < V; ++j) delta[j] = 0.f;
        for (i = 0; i < K; ++i) {
          float d = dt[per_row ? i : 0], ki = kt[i];
          float* row = S + i * V;
          for (j = 0; j < V; ++j) {
            row[j] *= d;
            delta[j] += row[j] * ki;
          }
        }
        for (j = 0; j < V; ++j) delta[j] = bt * (vt[j] - delta[j]);
        for (i = 0; i < K; ++i) {
          float ki = kt[i];
          float* row = S + i * V;
          for (j = 0; j < V; ++j) row[j] += ki * delta[j];
        }
        /* out_t = S^T q_t for the group's query heads (the first last: its
         * row held delta). */
        for (g = rep - 1; g >= 0; --g) {
          int64_t hq = h * rep + g;
          const float* qt = (const float*)q->data + ((b * Hq + hq) * T + t) * K;
          float* o = (float*)out->data + ((b * Hq + hq) * T + t) * V;
          for (j = 0; j < V; ++j) o[j] = 0.f;
          for (i = 0; i < K; ++i) {
            float qi = qt[i];
            const float* row = S + i * V;
            for (j = 0; j < V; ++j) o[j] += qi * row[j];
          }
        }
      }
    }
  return PTERUN_STATUS_OK;
}
