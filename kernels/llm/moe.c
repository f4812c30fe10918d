/* llama::quantized_moe_ffn: a mixture-of-experts SwiGLU feed-forward whose
 * experts are int4/int8 weights in torchao's universal packed layout, with
 * ExecuTorch's semantics (extension/llm/custom_ops/op_moe.cpp, the x86-64
 * reference path): router scores x @ gate^T, sigmoid (top-k on score + expert
 * bias, weights = unbiased scores renormalised to route_scale) or softmax
 * (over the k selected raw scores) routing, then per selected expert
 * silu(x W1^T) * (x W3^T) @ W2^T with the weights dequantised to float
 * (code * group scale) and float32 products, summed per token in expert
 * order. Tokens are processed in blocks that fit the scratch arena; an
 * expert's rows are computed together, its 8-column weight tiles split over
 * the method's thread pool. */
#include <float.h>
#include <inttypes.h>

#include "kernels/llm/llm_util.h"
#include "pterun/method.h"
#include "pterun/compute.h"
#include "pterun/threadpool.h"

#define MOE_MAGIC 6712
#define MOE_HEADER 64
#define MOE_NR 8
#define MOE_MAX_GROUP 1024 /* 8 x group floats on the stack per tile */

/* One expert's packed weight: n output columns, k inputs. */
typedef struct moe_weight {
  const uint8_t* tiles; /* after the header */
  int nbit;
  int64_t n, k, gs;
  int64_t tile_bytes;
} moe_weight;

static int64_t moe_tile_bytes(int nbit, int64_t k, int64_t gs) {
  return (k / gs) * (gs * nbit + 2 * MOE_NR * 4); /* codes, 8 scales, 8 code sums */
}

/* Checks one [E, bytes] packed tensor: uint8, every expert's header says
 * universal layout, `nbit`, no zero points, no bias, and the row holds the
 * header plus ceil(n / 8) tiles (more is allowed, as ExecuTorch). */
static pterun_status moe_check_packed(pterun_kernel_context* ctx, const pterun_tensor* t,
                                      const char* name, int64_t experts, int nbit, int64_t n,
                                      int64_t k, int64_t gs) {
  static const int32_t want[8] = {MOE_MAGIC, 1, 0, 0, 0, MOE_NR, 16, 2};
  int64_t need, e, row;
  int w;
  PTERUN_TRY(llm_check_tensor(ctx, t, name, 2));
  PTERUN_TRY(pterun_check_dtype(ctx, t, name, PTERUN_DTYPE_U8));
  if (t->sizes[0] != experts)
    return PTERUN_FAIL_ARG(ctx, "%s must be [%" PRId64 ", packed_bytes], got %" PRId64 " rows",
                           name, experts, t->sizes[0]);
  row = t->sizes[1];
  need = MOE_HEADER + (n + MOE_NR - 1) / MOE_NR * moe_tile_bytes(nbit, k, gs);
  if (row < need)
    return PTERUN_FAIL_ARG(ctx,
                           "%s: %" PRId64 " bytes per expert, need at least %" PRId64
                           " for n=%" PRId64 ", k=%" PRId64 ", group_size=%" PRId64 ", %d-bit",
                           name, row, need, n, k, gs, nbit);
  for (e = 0; e < experts; ++e) {
    const uint8_t* h = (const uint8_t*)t->data + e * row;
    for (w = 0; w < 16; ++w) {
      int32_t v, expect = w < 8 ? want[w] : 0;
      memcpy(&v, h + 4 * w, 4);
      if (w == 2) expect = nbit;
      if (v != expect)
        return PTERUN_FAIL_ARG(ctx,
                               "%s: expert %" PRId64 " header word %d is %" PRId32 ", want %" PRId32
                               " (torchao universal layout, %d-bit, no zero points, no bias)",
                               name, e, w, v, expect, nbit);
    }
  }
  return PTERUN_STATUS_OK;
}

typedef struct moe_lin {
  const moe_weight* w;
  const float* x; /* [m, k] */
  int64_t m;
  float* y; /* [m, n] */
  const pterun_compute_f32_rowops* ops;
} moe_lin;

/* Output columns [8 t, 8 t + 8) of y for tiles [first, first + count): per
 * group the 8 x gs weights are dequantised once (code * scale, one rounding,
 * as ExecuTorch's reference) and dotted with every row. */
static void moe_lin_tiles(void* ctx, size_t first, size_t count) {
  const moe_lin* j = (const moe_lin*)ctx;
  const moe_weight* w = j->w;
  float wbuf[MOE_NR * MOE_MAX_GROUP];
  int8_t q[128];
  size_t t;
  for (t = first; t < first + count; ++t) {
    const uint8_t* p = w->tiles + (int64_t)t * w->tile_bytes;
    int64_t n0 = (int64_t)t * MOE_NR, cols = w->n - n0 < MOE_NR ? w->n - n0 : MOE_NR, g, r, c;
    for (r = 0; r < j->m; ++r)
      for (c = 0; c < cols; ++c) j->y[r * w->n + n0 + c] = 0.f;
    for (g = 0; g < w->k / w->gs; ++g) {
      const uint8_t* codes = p;
      float scale[MOE_NR];
      int64_t ch, i;
      memcpy(scale, p + w->gs * w->nbit, sizeof scale);
      p += w->gs * w->nbit + 2 * MOE_NR * 4;
      /* each 16-value k-chunk: 128 codes, the first 8 k of columns 0..7,
       * then the last 8 */
      for (ch = 0; ch < w->gs / 16; ++ch) {
        pterun_compute_lowbit_unpack(w->nbit, 128, codes + ch * 16 * w->nbit, q);
        for (i = 0; i < 128; ++i) {
          int64_t col = (i & 63) >> 3, kk = ch * 16 + (i >> 6) * 8 + (i & 7);
          wbuf[col * w->gs + kk] = (float)q[i] * scale[col];
        }
      }
      for (r = 0; r < j->m; ++r) {
        const float* xr = j->x + r * w->k + g * w->gs;
        for (c = 0; c < cols; ++c)
          j->y[r * w->n + n0 + c] += j->ops->dot(xr, wbuf + c * w->gs, (size_t)w->gs);
      }
    }
  }
}

static void moe_linear(pterun_kernel_context* ctx, const moe_weight* w, const float* x, int64_t m,
                       float* y) {
  moe_lin j = {w, x, m, y, pterun_compute_f32_rowops_select()};
  pterun_parallelize_1d_tile(pterun_kernel_threadpool(ctx), moe_lin_tiles, &j,
                             (size_t)((w->n + MOE_NR - 1) / MOE_NR), 1,
                             PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)));
}

static float moe_sigmoid(float v) {
  if (v >= 0.f) return 1.f / (1.f + expf(-v));
  {
    float e = expf(v);
    return e / (1.f + e);
  }
}

/* The k best of s[0, e): highest first, ties to the lower index; when NaN
 * leaves fewer than k candidates, the lowest unselected indices. */
static int moe_taken(const int32_t* idx, int64_t a, int64_t i) {
  int64_t j;
  for (j = 0; j < a; ++j)
    if (idx[j] == (int32_t)i) return 1;
  return 0;
}

static void moe_topk(const float* s, int64_t e, int64_t k, int32_t* idx) {
  int64_t a, i;
  for (a = 0; a < k; ++a) {
    int32_t best = -1;
    float bs = -INFINITY;
    for (i = 0; i < e; ++i)
      if (!moe_taken(idx, a, i) && (s[i] > bs || (s[i] == bs && best < 0))) {
        bs = s[i];
        best = (int32_t)i;
      }
    for (i = 0; i < e && best < 0; ++i)
      if (!moe_taken(idx, a, i)) best = (int32_t)i;
    idx[a] = best;
  }
}

typedef struct moe_args {
  const pterun_tensor *x, *gate, *bias;
  moe_weight w13[1], w2[1];
  const uint8_t *p13, *p2;
  int64_t row13, row2;
  int64_t T, D, F, E, K;
  int sigmoid;
  float route_scale;
} moe_args;

/* Scratch floats for a block of tb tokens (int32 arrays counted as floats). */
static size_t moe_block_floats(const moe_args* a, int64_t tb) {
  int64_t pairs = tb * a->K;
  return (size_t)(tb * a->E          /* scores (+ biased copy) */
                  + tb * a->E        /**/
                  + 2 * pairs        /* indices, weights */
                  + 2 * pairs        /* permuted token, gate */
                  + 2 * (a->E + 1)   /* offsets (int64) */
                  + 2 * pairs * a->D /* x_perm, y_perm */
                  + tb * 3 * a->F);  /* h13, mid of one expert's rows */
}

static void moe_block(pterun_kernel_context* ctx, const moe_args* a, int64_t t0, int64_t tb,
                      float* buf, float* out) {
  const pterun_compute_f32_rowops* ops = pterun_compute_f32_rowops_select();
  const float* x = (const float*)a->x->data + t0 * a->D;
  const float* gw = (const float*)a->gate->data;
  const float* eb = a->bias != NULL ? (const float*)a->bias->data : NULL;
  int64_t E = a->E, K = a->K, D = a->D, F = a->F, pairs = tb * K, t, e, k, i, r;
  int64_t* off = (int64_t*)buf; /* first: 8-byte aligned */
  float* scores = (float*)(off + E + 1);
  float* biased = scores + tb * E;
  int32_t* idx = (int32_t*)(biased + tb * E);
  float* wts = (float*)(idx + pairs);
  int32_t* ptok = (int32_t*)(wts + pairs);
  float* pgate = (float*)(ptok + pairs);
  float* xp = pgate + pairs;
  float* yp = xp + pairs * D;
  float* h13 = yp + pairs * D;
  float* mid = h13 + tb * 2 * F;

  /* 1-3: router scores, gating, top-k */
  for (t = 0; t < tb; ++t)
    for (e = 0; e < E; ++e) scores[t * E + e] = ops->dot(x + t * D, gw + e * D, (size_t)D);
  for (t = 0; t < tb; ++t) {
    float* s = scores + t * E;
    const float* sel = s;
    int32_t* ir = idx + t * K;
    float* wr = wts + t * K;
    if (a->sigmoid) {
      float sum = 0.f, sc;
      for (e = 0; e < E; ++e) s[e] = moe_sigmoid(s[e]);
      if (eb != NULL) {
        for (e = 0; e < E; ++e) biased[t * E + e] = s[e] + eb[e];
        sel = biased + t * E;
      }
      moe_topk(sel, E, K, ir);
      for (k = 0; k < K; ++k) sum += (wr[k] = s[ir[k]]);
      sc = a->route_scale / (sum < FLT_MIN ? FLT_MIN : sum);
      for (k = 0; k < K; ++k) wr[k] *= sc;
    } else {
      float mx, sum = 0.f, inv;
      moe_topk(s, E, K, ir);
      for (k = 0; k < K; ++k) wr[k] = s[ir[k]];
      mx = wr[0];
      for (k = 1; k < K; ++k)
        if (wr[k] > mx) mx = wr[k];
      for (k = 0; k < K; ++k) sum += (wr[k] = expf(wr[k] - mx));
      inv = sum > 0.f ? 1.f / sum : 0.f;
      for (k = 0; k < K; ++k) wr[k] *= inv;
    }
  }
  /* 4-5: rows grouped by expert (counting sort, token order within one) */
  for (e = 0; e <= E; ++e) off[e] = 0;
  for (i = 0; i < pairs; ++i) ++off[idx[i] + 1];
  for (e = 0; e < E; ++e) off[e + 1] += off[e];
  for (t = 0; t < tb; ++t)
    for (k = 0; k < K; ++k) {
      int32_t ex = idx[t * K + k];
      int64_t pos = off[ex]++;
      ptok[pos] = (int32_t)t;
      pgate[pos] = wts[t * K + k];
      memcpy(xp + pos * D, x + t * D, (size_t)D * sizeof(float));
    }
  for (e = E; e > 0; --e) off[e] = off[e - 1]; /* back to starts */
  off[0] = 0;
  /* 6: each expert on its rows */
  for (e = 0; e < E; ++e) {
    int64_t m = off[e + 1] - off[e];
    moe_weight w13 = a->w13[0], w2 = a->w2[0];
    if (m == 0) continue;
    w13.tiles = a->p13 + e * a->row13 + MOE_HEADER;
    w2.tiles = a->p2 + e * a->row2 + MOE_HEADER;
    moe_linear(ctx, &w13, xp + off[e] * D, m, h13);
    for (r = 0; r < m; ++r)
      for (i = 0; i < F; ++i) {
        float v = h13[r * 2 * F + i];
        mid[r * F + i] = v * moe_sigmoid(v) * h13[r * 2 * F + F + i];
      }
    moe_linear(ctx, &w2, mid, m, yp + off[e] * D);
  }
  /* 7: out[token] += gate * row, in expert order */
  for (r = 0; r < pairs; ++r) {
    float* dst = out + (t0 + ptok[r]) * D;
    const float* src = yp + r * D;
    ops->axpby(dst, 1.f, pgate[r], src, (size_t)D);
  }
}

/* llama::quantized_moe_ffn.out(Tensor x, Tensor gate_weight, Tensor expert_bias,
 *   Tensor packed_w13, Tensor packed_w2, int num_activated_experts,
 *   int num_experts, int hidden_dim, int dim, int group_size, int weight_nbit,
 *   str score_func, float route_scale, *, Tensor(a!) out) */
PTERUN_KERNEL(llm_quantized_moe_ffn_out) {
  pterun_tensor *x, *gate, *bias, *p13, *p2, *out;
  int64_t K, E, F, D, gs, nbit, tb, t0, sizes[2];
  const char* sf;
  size_t sflen;
  double rs;
  moe_args a;
  float* buf = NULL;
  PTERUN_CHECK_NARGS(ctx, nargs, 15);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "x", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "gate_weight", &gate));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "expert_bias", &bias));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "packed_w13", &p13));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "packed_w2", &p2));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "num_activated_experts", &K));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "num_experts", &E));
  PTERUN_TRY(pterun_arg_int(ctx, args, 7, "hidden_dim", &F));
  PTERUN_TRY(pterun_arg_int(ctx, args, 8, "dim", &D));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "group_size", &gs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 10, "weight_nbit", &nbit));
  PTERUN_TRY(pterun_arg_string(ctx, args, 11, "score_func", &sf, &sflen));
  PTERUN_TRY(pterun_arg_double(ctx, args, 12, "route_scale", &rs));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 13, "out", &out));

  PTERUN_TRY(llm_check_tensor(ctx, x, "x", 2));
  PTERUN_TRY(pterun_check_dtype(ctx, x, "x", PTERUN_DTYPE_F32));
  if (D <= 0 || F <= 0 || E <= 0 || E > (1 << 20) || D > (1 << 24) || F > (1 << 24))
    return PTERUN_FAIL_ARG(ctx, "dim, hidden_dim and num_experts must be positive (and sane)");
  if (x->sizes[1] != D)
    return PTERUN_FAIL_ARG(ctx, "x last dim (%" PRId64 ") must equal dim (%" PRId64 ")",
                           x->sizes[1], D);
  PTERUN_TRY(llm_check_tensor(ctx, gate, "gate_weight", 2));
  PTERUN_TRY(pterun_check_dtype(ctx, gate, "gate_weight", PTERUN_DTYPE_F32));
  if (gate->sizes[0] != E || gate->sizes[1] != D)
    return PTERUN_FAIL_ARG(ctx, "gate_weight must be [%" PRId64 ", %" PRId64 "]", E, D);
  PTERUN_TRY(llm_check_tensor(ctx, bias, "expert_bias", -1));
  if (bias->numel > 0) {
    PTERUN_TRY(pterun_check_dtype(ctx, bias, "expert_bias", PTERUN_DTYPE_F32));
    if (bias->rank != 1 || bias->sizes[0] != E)
      return PTERUN_FAIL_ARG(ctx, "expert_bias must be [%" PRId64 "] when not empty", E);
  }
  if (K <= 0 || K > E)
    return PTERUN_FAIL_ARG(ctx, "num_activated_experts %" PRId64 " out of range [1, %" PRId64 "]",
                           K, E);
  a.sigmoid = sflen == 7 && memcmp(sf, "sigmoid", 7) == 0;
  if (!a.sigmoid && !(sflen == 7 && memcmp(sf, "softmax", 7) == 0))
    return PTERUN_FAIL_ARG(ctx, "score_func must be \"sigmoid\" or \"softmax\"");
  if (bias->numel > 0 && !a.sigmoid)
    return PTERUN_FAIL_ARG(ctx, "expert_bias is only supported with score_func=\"sigmoid\"");
  if (nbit != 4 && nbit != 8)
    return PTERUN_FAIL_ARG(ctx, "weight_nbit must be 4 or 8, got %" PRId64, nbit);
  if (gs <= 0 || gs % 16 != 0 || gs > MOE_MAX_GROUP || D % gs != 0 || F % gs != 0)
    return PTERUN_FAIL_ARG(ctx,
                           "group_size %" PRId64
                           " must be a multiple of 16 up to %d dividing dim (%" PRId64
                           ") and hidden_dim (%" PRId64 ")",
                           gs, MOE_MAX_GROUP, D, F);
  PTERUN_TRY(moe_check_packed(ctx, p13, "packed_w13", E, (int)nbit, 2 * F, D, gs));
  PTERUN_TRY(moe_check_packed(ctx, p2, "packed_w2", E, (int)nbit, D, F, gs));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_F32));
  sizes[0] = x->sizes[0];
  sizes[1] = D;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  PTERUN_TRY(llm_check_tensor(ctx, out, "out", 2));

  a.x = x;
  a.gate = gate;
  a.bias = bias->numel > 0 ? bias : NULL;
  a.T = x->sizes[0];
  a.D = D;
  a.F = F;
  a.E = E;
  a.K = K;
  a.route_scale = (float)rs;
  a.p13 = (const uint8_t*)p13->data;
  a.p2 = (const uint8_t*)p2->data;
  a.row13 = p13->sizes[1];
  a.row2 = p2->sizes[1];
  a.w13[0] = (moe_weight){NULL, (int)nbit, 2 * F, D, gs, moe_tile_bytes((int)nbit, D, gs)};
  a.w2[0] = (moe_weight){NULL, (int)nbit, D, F, gs, moe_tile_bytes((int)nbit, F, gs)};
  memset(out->data, 0, (size_t)out->numel * sizeof(float));
  if (a.T == 0) return PTERUN_STATUS_OK;
  /* The largest token block whose buffers the scratch arena holds. */
  /* (at most 4096 tokens at a time keeps every size below 2^57) */
  for (tb = a.T < 4096 ? a.T : 4096; tb >= 1; tb = tb > 1 ? (tb + 1) / 2 : 0) {
    buf = (float*)pterun_kernel_scratch(ctx, moe_block_floats(&a, tb) * sizeof(float), 64);
    if (buf != NULL || tb == 1) break;
  }
  if (buf == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "one token needs %zu bytes of scratch memory (dim %" PRId64
                              ", hidden %" PRId64 ", %" PRId64 " experts)",
                              moe_block_floats(&a, 1) * sizeof(float), D, F, E);
  for (t0 = 0; t0 < a.T; t0 += tb)
    moe_block(ctx, &a, t0, a.T - t0 < tb ? a.T - t0 : tb, buf, (float*)out->data);
  return PTERUN_STATUS_OK;
}

/* Load time: the scratch of the token blocks (all the load-time tokens at
 * once, the upper bound of a dynamic count, up to the 4 MiB the blocks used
 * to be limited to; execute halves the block until it fits). */
pterun_status llm_quantized_moe_ffn_prepare(pterun_kernel_context* ctx, pterun_value** args,
                                            size_t nargs) {
  if (nargs != 15 || args[0]->tag != PTERUN_VALUE_TENSOR || args[0]->u.tensor->rank != 2)
    return PTERUN_STATUS_OK;
  for (int i = 5; i <= 8; ++i)
    if (args[i]->tag != PTERUN_VALUE_INT || args[i]->u.i <= 0 || args[i]->u.i > (1 << 24))
      return PTERUN_STATUS_OK; /* execute reports it */
  moe_args a;
  memset(&a, 0, sizeof a);
  a.K = args[5]->u.i;
  a.E = args[6]->u.i;
  a.F = args[7]->u.i;
  a.D = args[8]->u.i;
  const int64_t t = args[0]->u.tensor->sizes[0];
  const int64_t tb = t < 1 ? 1 : t < 4096 ? t : 4096;
  size_t bytes = moe_block_floats(&a, tb) * sizeof(float);
  const size_t one = moe_block_floats(&a, 1) * sizeof(float);
  if (bytes > PTERUN_DEFAULT_SCRATCH_BYTES) bytes = PTERUN_DEFAULT_SCRATCH_BYTES;
  pterun_kernel_scratch_reserve(ctx, bytes > one ? bytes : one);
  return PTERUN_STATUS_OK;
}
