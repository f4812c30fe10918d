/* Load time: every node's checks and the preparation of its weights (packed
 * for the compute engine, quantization parameters folded), called by
 * xb_compile.c for each node (xb_prepare_node). Tensors around convolutions
 * and pooling are NHWC, as the exporter writes them. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_nodes.h"

#define BADN(...) xb_fail(a->logger, PTERUN_STATUS_INVALID_PROGRAM, __VA_ARGS__)
#define UNSUP(...) xb_fail(a->logger, PTERUN_STATUS_NOT_SUPPORTED, __VA_ARGS__)

/* Weight element (oc, k) of a [OC, K] filter stored as its datatype. */
static int32_t w_q(const xb_value* w, size_t oc, size_t k, size_t K) {
  if (w->dtype == XB_DT_QCINT4 || w->dtype == XB_DT_QBINT4) {
    size_t rowb = (K + 1) / 2;
    uint8_t byte = w->constant[oc * rowb + k / 2];
    return (int32_t)((k & 1) ? (byte >> 4) : (byte & 15)) - 8;
  }
  if (w->dtype == XB_DT_QUINT8) return (int32_t)w->constant[oc * K + k] - w->zero_point;
  return (int32_t)((const int8_t*)w->constant)[oc * K + k] -
         (w->qkind == XB_Q_PER_TENSOR ? w->zero_point : 0);
}

static float w_scale(const xb_value* w, size_t oc) {
  if (w->qkind == XB_Q_PER_CHANNEL) return w->scales[oc];
  return w->scale;
}

/* Bias (float) of output channel oc, or 0. A one-element bias holds for
 * every channel: the exporter's batch-norm fold writes one when a
 * BatchNorm over a single channel follows a Linear on the last dimension
 * (its shift broadcasts over the Linear's outputs, as in eager PyTorch). */
static pterun_status prep_bias_f32(const pterun_backend_init_args* a, xb_graph* g, const xb_node* n,
                                   size_t OC, gemm_prep* p) {
  p->bias = xb_alloc(g, OC * sizeof(float));
  if (p->bias == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (n->nin < 3) return PTERUN_STATUS_OK;
  const xb_value* b = &g->values[n->in[2]];
  if (b->loc != XB_LOC_CONST || !is_f32(b) || (b->numel != OC && b->numel != 1))
    return BADN("bias must be a constant fp32 vector of %zu (or of 1)", OC);
  if (b->numel == OC) {
    memcpy(p->bias, b->constant, OC * sizeof(float));
  } else {
    float v;
    memcpy(&v, b->constant, sizeof v);
    for (size_t c = 0; c < OC; ++c) p->bias[c] = v;
  }
  return PTERUN_STATUS_OK;
}

/* Packs `parts` int8 weight blocks for compute's int8 GEMM: block i is rows
 * [i * rs_n .. + n) x columns [i * k ..+ k) of W (row stride w_rs) when
 * by_k, else rows [i * n ..+ n) x all k columns. */
static pterun_status pack_q(const pterun_backend_init_args* a, xb_graph* g, const int8_t* W,
                            size_t w_rs, size_t n, size_t k, size_t parts, int by_k, gemm_prep* p) {
  size_t bytes = pterun_compute_qs8_pack_size(NULL, (int64_t)n, (int64_t)k);
  if (bytes == 0) return UNSUP("int8 product of %zu x %zu is outside the engine's limits", n, k);
  p->qw = xb_alloc(g, parts * sizeof *p->qw);
  if (p->qw == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t i = 0; i < parts; ++i) {
    void* buf = xb_alloc(g, bytes);
    if (buf == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    const int8_t* w0 = by_k ? W + i * k : W + i * n * w_rs;
    if (pterun_compute_qs8_pack(NULL, (int64_t)n, (int64_t)k, w0, (int64_t)w_rs, 1, buf, bytes,
                                &p->qw[i]) != 0)
      return BADN("cannot pack a %zu x %zu int8 weight", n, k);
  }
  return PTERUN_STATUS_OK;
}

/* f32 weights [G][K][N] packed once for the GEMM engine's microkernel (the
 * products of more than a couple of rows read them instead of packing B on
 * every call). No packing when the engine has no layout for the sizes. */
static pterun_status pack_f32(xb_graph* g, size_t G, size_t K, size_t N, gemm_prep* p) {
  size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, (int64_t)K, (int64_t)N);
  if (bytes == 0) return PTERUN_STATUS_OK;
  p->fpk = xb_alloc(g, G * sizeof *p->fpk);
  if (p->fpk == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t gi = 0; gi < G; ++gi) {
    void* mem = xb_alloc(g, bytes);
    if (mem == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    pterun_compute_matrix b = {p->w + gi * K * N, PTERUN_DTYPE_F32, (int64_t)N, 1};
    p->fpk[gi] =
        pterun_compute_gemm_pack(mem, bytes, PTERUN_COMPUTE_OPERAND_B, (int64_t)K, (int64_t)N, &b);
  }
  return PTERUN_STATUS_OK;
}

/* Static int8 weights (QINT8 per tensor or QCINT8 per channel, [OC][K] as
 * stored) packed per group, with their zero points. */
static pterun_status prep_q_weights(const pterun_backend_init_args* a, xb_graph* g,
                                    const xb_value* w, size_t G, size_t OCg, size_t K,
                                    gemm_prep* p) {
  PTERUN_TRY(pack_q(a, g, (const int8_t*)w->constant, K, OCg, K, G, 0, p));
  if (w->qkind == XB_Q_PER_TENSOR && w->zero_point != 0) {
    p->wzp = xb_alloc(g, G * OCg * sizeof(int32_t));
    if (p->wzp == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    for (size_t c = 0; c < G * OCg; ++c) p->wzp[c] = w->zero_point;
  }
  return PTERUN_STATUS_OK;
}

/* Static int8: int32 bias and per-channel requantization multipliers. */
static pterun_status prep_q_static(const pterun_backend_init_args* a, xb_graph* g, const xb_node* n,
                                   size_t OC, const xb_value* in, const xb_value* w,
                                   const xb_value* out, gemm_prep* p) {
  p->ibias = xb_alloc(g, OC * sizeof(int32_t));
  p->mult = xb_alloc(g, OC * sizeof(float));
  if (p->ibias == NULL || p->mult == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (w->qkind == XB_Q_PER_CHANNEL && w->num_scales != OC)
    return BADN("weight has %u scales for %zu channels", w->num_scales, OC);
  for (size_t c = 0; c < OC; ++c) p->mult[c] = in->scale * w_scale(w, c) / out->scale;
  if (n->nin < 3) return PTERUN_STATUS_OK;
  const xb_value* b = &g->values[n->in[2]];
  if (b->loc != XB_LOC_CONST || (b->dtype != XB_DT_QINT32 && b->dtype != XB_DT_QCINT32) ||
      b->numel != OC)
    return BADN("bias must be a constant qint32/qcint32 vector of %zu", OC);
  for (size_t c = 0; c < OC; ++c) p->ibias[c] = (int32_t)pterun_fb_read_u32(b->constant + 4 * c);
  return PTERUN_STATUS_OK;
}

/* The int8 GEMM's epilogue adds a float bias after scaling: bias * mult. */
static pterun_status prep_qbias(xb_graph* g, size_t OC, gemm_prep* p) {
  p->qbias = xb_alloc(g, OC * sizeof(float));
  if (p->qbias == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t c = 0; c < OC; ++c) p->qbias[c] = (float)p->ibias[c] * p->mult[c];
  return PTERUN_STATUS_OK;
}

/* 4-bit weights of a dynamically quantized FullyConnected (what `8da4w -X`
 * emits) on compute's 4-bit blockwise engine: the file's nibbles (two a
 * byte, value - 8), the block scales as the file has them (bf16 for qb4w,
 * the channel's float32 for qc4w: one block of K) and the bias packed once
 * in 16-column panels, which its microkernels read 4 bits at a time with the
 * scales beside them (the int8 GEMM would read the codes unpacked, one
 * product per K group). No int8 copy of the weights. NOT_SUPPORTED (the
 * int8 GEMM path then runs) for a geometry it does not take (blocks not a
 * multiple of 8, more than 1024 per row). */
static pterun_status prep_q4(xb_graph* g, size_t OC, size_t K, const xb_value* w, const float* bias,
                             gemm_prep* p) {
  const int bf = w->qkind == XB_Q_GROUP;
  const size_t bytes =
      pterun_compute_qb4w_pack_bytes((int64_t)OC, (int64_t)K, (int64_t)p->gsize, bf, bias != NULL);
  if (bytes == 0 || (bf ? w->scales_bf16 == NULL : w->scales == NULL))
    return PTERUN_STATUS_NOT_SUPPORTED;
  uint8_t* buf = xb_alloc(g, bytes);
  p->qb = xb_alloc(g, sizeof *p->qb);
  if (buf == NULL || p->qb == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (pterun_compute_qb4w_pack_u4((int64_t)OC, (int64_t)K, (int64_t)p->gsize, w->constant,
                                  bf ? NULL : w->scales, bf ? w->scales_bf16 : NULL, bias, buf,
                                  bytes, p->qb) != 0) {
    p->qb = NULL;
    return PTERUN_STATUS_NOT_SUPPORTED;
  }
  return PTERUN_STATUS_OK;
}

/* Dynamic int8 activations: int8 weights [K][N] (zero points removed) and
 * per-channel or group scales as f32 [OC][groups]. */
static pterun_status prep_q_dynamic(const pterun_backend_init_args* a, xb_graph* g,
                                    const xb_node* n, size_t OC, size_t K, const xb_value* w,
                                    gemm_prep* p) {
  if (w->qkind == XB_Q_GROUP) {
    p->gsize = (size_t)w->group_size;
    p->groups_k = K / p->gsize;
  } else if (w->qkind == XB_Q_PER_CHANNEL && w->num_scales == OC) {
    p->gsize = K;
    p->groups_k = 1;
  } else {
    return BADN("dynamic weights need per-channel or group-wise scales");
  }
  if (w->dtype == XB_DT_QCINT4 || w->dtype == XB_DT_QBINT4) {
    /* no bias input: none in the panels (nothing to add per output) */
    pterun_status lst = prep_q4(g, OC, K, w, n->nin >= 3 ? p->bias : NULL, p);
    if (lst != PTERUN_STATUS_NOT_SUPPORTED) return lst;
  }
  p->mult = xb_alloc(g, OC * p->groups_k * sizeof(float));
  // Weights as int8 [OC][K] (int4 unpacked), packed per K group; the copy
  // lives during load only.
  int8_t* wt = OC && K ? pterun_alloc(g->allocator, OC * K, 64) : NULL;
  if (p->mult == NULL || (OC && K && wt == NULL)) {
    pterun_free(g->allocator, wt);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (size_t oc = 0; oc < OC; ++oc)
    for (size_t k = 0; k < K; ++k) wt[oc * K + k] = (int8_t)w_q(w, oc, k, K);
  pterun_status st = pack_q(a, g, wt, K, OC, p->gsize, p->groups_k, 1, p);
  pterun_free(g->allocator, wt);
  PTERUN_TRY(st);
  p->csum = xb_alloc(g, p->groups_k * OC * sizeof(float));
  if (p->csum == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t gk = 0; gk < p->groups_k; ++gk)
    for (size_t oc = 0; oc < OC; ++oc) p->csum[gk * OC + oc] = (float)p->qw[gk].col_sum[oc];
  for (size_t oc = 0; oc < OC; ++oc)
    for (size_t gk = 0; gk < p->groups_k; ++gk)
      p->mult[gk * OC + oc] = w->qkind == XB_Q_GROUP
                                  ? pterun_bf16_to_f32(w->scales_bf16[oc * p->groups_k + gk])
                                  : w->scales[oc];
  return PTERUN_STATUS_OK;
}

static pterun_status prep_fc(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  if (w->loc != XB_LOC_CONST || w->rank != 2) return BADN("filter must be a constant 2-D tensor");
  bool tw = (n->flags & 1) != 0;
  size_t N = tw ? w->dims[1] : w->dims[0], K = tw ? w->dims[0] : w->dims[1];
  if (in->rank < 1 || in->dims[in->rank - 1] != K || out->rank < 1 ||
      out->dims[out->rank - 1] != N || (K ? in->numel / K : 0) * N != out->numel)
    return BADN("shapes do not match a [%zu, %zu] filter", N, K);
  gemm_prep* p = xb_alloc(g, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  p->K = K;
  p->N = N;
  n->packed = p;
  size_t M = K ? in->numel / K : 0;
  if (is_f32(in) && is_f32(w) && is_f32(out)) {
    n->kind = KIND_F32;
    p->w = xb_alloc(g, K * N * sizeof(float));
    if (p->w == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    const float* src = (const float*)w->constant;
    for (size_t nn = 0; nn < N; ++nn)
      for (size_t k = 0; k < K; ++k) p->w[k * N + nn] = tw ? src[k * N + nn] : src[nn * K + k];
    if (M > 16) PTERUN_TRY(pack_f32(g, 1, K, N, p)); /* fewer rows read B in place */
    return prep_bias_f32(a, g, n, N, p);
  }
  if (tw) return UNSUP("transposed quantized filters are not implemented");
  if (is_q8(in) && is_q8(out) &&
      ((w->dtype == XB_DT_QCINT8 && w->qkind == XB_Q_PER_CHANNEL) ||
       (w->dtype == XB_DT_QINT8 && w->qkind == XB_Q_PER_TENSOR))) {
    n->kind = KIND_QS8;
    (void)M;
    PTERUN_TRY(prep_q_weights(a, g, w, 1, N, K, p));
    PTERUN_TRY(prep_q_static(a, g, n, N, in, w, out, p));
    return prep_qbias(g, N, p);
  }
  if (in->dtype == XB_DT_QDINT8 && in->qkind == XB_Q_DYNAMIC && is_f32(out) &&
      (w->dtype == XB_DT_QCINT8 || w->dtype == XB_DT_QCINT4 || w->dtype == XB_DT_QBINT4)) {
    // The per-row parameters exist only behind values a Convert produced.
    if (in->loc != XB_LOC_ARENA || in->nbytes < dq_params_offset(in) + dq_rows(in) * 8)
      return UNSUP("dynamically quantized input not produced by a Convert in this graph");
    n->kind = KIND_QD8;
    PTERUN_TRY(prep_bias_f32(a, g, n, N, p)); /* the 4-bit panels hold it */
    PTERUN_TRY(prep_q_dynamic(a, g, n, N, K, w, p));
    /* int8 GEMM: a block of float rows; 4-bit: every row's scale and zero point */
    n->scratch_bytes = p->qb != NULL ? in->max_numel / K * (sizeof(float) + sizeof(int32_t)) + 64
                                     : XB_DQ_ROWS * N * sizeof(float) + 64;
    return PTERUN_STATUS_OK;
  }
  return UNSUP("FullyConnected on %s x %s -> %s is not implemented", xb_dtype_name(in->dtype),
               xb_dtype_name(w->dtype), xb_dtype_name(out->dtype));
}

/* An int8 filter the int8 GEMM takes: QCINT8 per channel or QINT8 per
 * tensor. */
static bool is_q8_filter(const xb_value* w) {
  return (w->dtype == XB_DT_QCINT8 && w->qkind == XB_Q_PER_CHANNEL) ||
         (w->dtype == XB_DT_QINT8 && w->qkind == XB_Q_PER_TENSOR);
}

/* The int8 forms of a (non-depthwise) Conv2d or a ConvTranspose2d, whose
 * filters are both [G * OCg][KH][KW][ICg]: the int8 GEMM over K = KH * KW *
 * ICg (im2col rows of the input), weights packed per group. Static (qint8 or
 * quint8 in and out) or dynamic (qdint8 in, fp32 out). Per-channel scales
 * are on dim 0, one per output channel. */
static pterun_status prep_conv_q8(const pterun_backend_init_args* a, xb_graph* g, xb_node* n,
                                  size_t G, size_t OCg, size_t K, gemm_prep* p) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  const size_t OC = G * OCg;
  const bool qs = is_q8(in) && is_q8(out) && is_q8_filter(w);
  const bool qd =
      in->dtype == XB_DT_QDINT8 && in->qkind == XB_Q_DYNAMIC && is_f32(out) && is_q8_filter(w);
  if (!qs && !qd)
    return UNSUP("%s on %s x %s -> %s is not implemented", xb_node_name(n->tag),
                 xb_dtype_name(in->dtype), xb_dtype_name(w->dtype), xb_dtype_name(out->dtype));
  if (w->qkind == XB_Q_PER_CHANNEL && (w->channel_dim != 0 || w->num_scales != OC))
    return BADN("%s: per-channel filter scales: %u on dim %d for %zu channels",
                xb_node_name(n->tag), w->num_scales, w->channel_dim, OC);
  if (qs) {
    n->kind = KIND_QS8;
    PTERUN_TRY(prep_q_weights(a, g, w, G, OCg, K, p));
    PTERUN_TRY(prep_q_static(a, g, n, OC, in, w, out, p));
    // A Conv2d's padded uint8 image (at the largest input, 4 bytes after
    // it), from which the indirect GEMM reads every window in place
    // (xb_run_gemm.c, run_conv_q8); none past 16 MiB, nor where it declines.
    if (n->tag == XB_N_CONV2D && pterun_compute_qs8_conv2d_nhwc_in_place(NULL)) {
      const size_t hp = in->max_dims[1] + n->pad[0] + n->pad[2];
      const size_t wp = in->max_dims[2] + n->pad[3] + n->pad[1], IC = in->dims[3];
      const size_t lim = (size_t)1 << 24;
      if (hp <= lim && wp <= lim && IC <= lim && hp * wp <= lim / (IC ? IC : 1))
        n->scratch_bytes = hp * wp * IC + 4 + 64;
    }
    return prep_qbias(g, OC, p);
  }
  {
    // Dynamic int8 (what XnnpackDynamicallyQuantizedPartitioner makes of a
    // convolution): the Convert's int8 image with one scale and zero point
    // per image, int8 filter packed as for the static form, float output.
    if (in->loc != XB_LOC_ARENA || in->nbytes < dq_params_offset(in) + dq_rows(in) * 8)
      return UNSUP("dynamically quantized input not produced by a Convert in this graph");
    if (dq_rows(in) != in->dims[0])
      return UNSUP("%s on qdint8 with %zu quantization rows for %zu images is not implemented",
                   xb_node_name(n->tag), dq_rows(in), in->dims[0]);
    n->kind = KIND_QD8;
    PTERUN_TRY(prep_q_weights(a, g, w, G, OCg, K, p));
    p->mult = xb_alloc(g, OC * sizeof(float)); /* the filter's scales */
    if (p->mult == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    for (size_t c = 0; c < OC; ++c) p->mult[c] = w_scale(w, c);
    n->scratch_bytes = OC * sizeof(float) + 64; /* per image: input scale * filter scales */
    return prep_bias_f32(a, g, n, OC, p);
  }
}

static pterun_status prep_conv(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  bool dw = n->tag == XB_N_DEPTHWISE_CONV2D;
  if (in->dtype == XB_DT_QDINT8 && dw)
    return UNSUP("%s on qdint8 (dynamically quantized depthwise convolution) is not implemented",
                 xb_node_name(n->tag));
  if (in->rank != 4 || out->rank != 4 || w->rank != 4 || w->loc != XB_LOC_CONST)
    return BADN("convolution needs 4-D NHWC tensors and a constant filter");
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out, IC = in->dims[3], OC = out->dims[3];
  size_t OH = 0, OW = 0;
  if (G == 0 || ICg == 0 || OCg == 0 || IC != G * ICg || OC != G * OCg ||
      in->dims[0] != out->dims[0] ||
      !conv_out(in->dims[1], n->pad[0], n->pad[2], n->kh, n->sh, n->dh, &OH) ||
      !conv_out(in->dims[2], n->pad[3], n->pad[1], n->kw, n->sw, n->dw, &OW) ||
      OH != out->dims[1] || OW != out->dims[2])
    // The dims say which tensor disagrees: ExecuTorch 1.5.1 writes a
    // dynamically quantized convolution fed by a FullyConnected with its
    // input in NCHW dims (docs/difftest.md, seed 7243).
    return BADN(
        "convolution geometry does not match its tensors: input NHWC %zux%zux%zux%zu, "
        "%ux%u filter, stride %ux%u, dilation %ux%u, padding %u,%u,%u,%u (top, right, "
        "bottom, left), %u groups of %zu -> %zu channels; output NHWC %zux%zux%zux%zu",
        in->dims[0], in->dims[1], in->dims[2], in->dims[3], n->kh, n->kw, n->sh, n->sw, n->dh,
        n->dw, n->pad[0], n->pad[1], n->pad[2], n->pad[3], n->groups, ICg, OCg, out->dims[0],
        out->dims[1], out->dims[2], out->dims[3]);
  if (dw ? (ICg != 1 || w->dims[0] != 1 || w->dims[1] != n->kh || w->dims[2] != n->kw ||
            w->dims[3] != OC)
         : (w->dims[0] != OC || w->dims[1] != n->kh || w->dims[2] != n->kw || w->dims[3] != ICg))
    return BADN("filter shape does not match the convolution");
  gemm_prep* p = xb_alloc(g, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  n->packed = p;
  size_t KK = (size_t)n->kh * n->kw, K = KK * ICg;
  p->K = K;
  p->N = OCg;
  enum { TILE = 64 };
  // A depthwise convolution on fp32 with a quantized output: what the 1.5.1
  // partitioner makes of a BatchNorm whose result PT2E quantizes (the
  // quantize folded into the output value). XNNPACK refuses it; here it is
  // the fp32 convolution (into scratch) followed by that quantize.
  const bool q_out = dw && is_f32(in) && is_f32(w) && is_q8(out);
  if (is_f32(in) && is_f32(w) && (is_f32(out) || q_out)) {
    n->kind = KIND_F32;
    if (q_out) n->scratch_bytes = out->max_numel * sizeof(float) + 64;
    p->w = xb_alloc(g, (dw ? KK * OC : G * K * OCg) * sizeof(float));
    if (p->w == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    const float* src = (const float*)w->constant;
    // A depthwise convolution over one input channel (XNNPACK's form of a
    // 1-channel stem: multiplier OC) is a dense one with K = KH*KW, whose
    // [K][OC] filter is the depthwise [KH][KW][OC] as stored: the im2col GEMM
    // (the per-tap broadcast loop of the depthwise kernel does a fraction of
    // the GEMM's rate there).
    p->dense_dw = dw && !q_out && IC == 1 && G == 1;
    if (dw) memcpy(p->w, src, KK * OC * sizeof(float)); /* [KH][KW][OC] as stored */
    if (!dw || p->dense_dw) {
      // [OC][KH][KW][ICg] -> per group [KH*KW*ICg][OCg]
      for (size_t gi = 0; gi < G && !dw; ++gi)
        for (size_t o = 0; o < OCg; ++o)
          for (size_t k = 0; k < K; ++k)
            p->w[gi * K * OCg + k * OCg + o] = src[(gi * OCg + o) * K + k];
      // im2col blocks of about 256 KiB: products big enough for the pool
      // and to amortise packing the filter.
      size_t npix = OH * OW, tile = K ? ((size_t)64 << 10) / K : TILE;
      tile = tile < TILE ? TILE : tile;
      p->tile = tile < npix ? tile : (npix ? npix : 1);
      n->scratch_bytes = p->tile * K * sizeof(float) + 64;
      // The zero-padded image (at the largest input), so that im2col copies
      // every tap's row with no bounds checks; none past 16 Mi floats.
      const size_t hp = in->max_dims[1] + n->pad[0] + n->pad[2];
      const size_t wp = in->max_dims[2] + n->pad[3] + n->pad[1];
      const size_t lim = (size_t)1 << 24;
      if (hp <= lim && wp <= lim && IC <= lim && hp * wp <= lim / (IC ? IC : 1)) {
        p->pad_floats = hp * wp * IC;
        n->scratch_bytes += p->pad_floats * sizeof(float) + 64;
      }
      PTERUN_TRY(pack_f32(g, G, K, OCg, p));
    }
    return prep_bias_f32(a, g, n, OC, p);
  }
  if (dw && is_q8(in) && is_q8(out) && is_q8_filter(w)) {
    n->kind = KIND_QS8;
    if (w->qkind == XB_Q_PER_CHANNEL && w->channel_dim != 3)
      return BADN("per-channel filter scales on dim %d", w->channel_dim);
    // Depthwise: filter [KH][KW][OC] with the zero point taken out (int16:
    // int8 minus a zero point does not fit int8).
    p->wdq = xb_alloc(g, KK * OC * sizeof(int16_t));
    if (p->wdq == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    int wz = w->qkind == XB_Q_PER_TENSOR ? w->zero_point : 0;
    const int8_t* src = (const int8_t*)w->constant;
    for (size_t i = 0; i < KK * OC; ++i) p->wdq[i] = (int16_t)(src[i] - wz);
    return prep_q_static(a, g, n, OC, in, w, out, p);
  }
  return prep_conv_q8(a, g, n, G, OCg, K, p);
}

/* Transposed convolution. fp32: filter [OC, KH, KW, ICg] packed to
 * [G][KH][KW][ICg][OCg]; the output is accumulated by scattering each input
 * pixel. int8 (static qs8 and dynamic qd8): the filter packed as a Conv2d's
 * for the int8 GEMM, which reads for each output pixel the input pixels its
 * taps reach (xb_run_deconv's rows; the others read the zero point). */
static pterun_status prep_deconv(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  if (in->rank != 4 || out->rank != 4 || w->rank != 4 || w->loc != XB_LOC_CONST)
    return BADN("transposed convolution needs 4-D NHWC tensors and a constant filter");
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out;
  if (G == 0 || ICg == 0 || OCg == 0 || n->sh == 0 || n->sw == 0 || n->kh == 0 || n->kw == 0 ||
      in->dims[3] != G * ICg || out->dims[3] != G * OCg || in->dims[0] != out->dims[0] ||
      w->dims[0] != G * OCg || w->dims[1] != n->kh || w->dims[2] != n->kw || w->dims[3] != ICg)
    return BADN("transposed convolution shapes do not match");
  if (n->dh == 0) n->dh = 1;
  if (n->dw == 0) n->dw = 1;
  for (int d = 0; d < 2; ++d) {
    size_t ins = in->dims[1 + d], s = d ? n->sw : n->sh, k = d ? n->kw : n->kh,
           dil = d ? n->dw : n->dh, adj = d ? n->adj_w : n->adj_h;
    size_t pads = d ? (size_t)n->pad[1] + n->pad[3] : (size_t)n->pad[0] + n->pad[2];
    size_t full = (ins ? (ins - 1) * s : 0) + dil * (k - 1) + 1 + adj;
    if (ins == 0 || full < pads || full - pads != out->dims[1 + d])
      return BADN("transposed convolution output size does not match");
  }
  gemm_prep* p = xb_alloc(g, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  n->packed = p;
  size_t KK = (size_t)n->kh * n->kw;
  p->K = KK * ICg;
  p->N = OCg;
  if (!is_f32(in) || !is_f32(w) || !is_f32(out)) return prep_conv_q8(a, g, n, G, OCg, p->K, p);
  p->w = xb_alloc(g, G * KK * ICg * OCg * sizeof(float));
  if (p->w == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  const float* src = (const float*)w->constant;
  for (size_t gi = 0; gi < G; ++gi)
    for (size_t o = 0; o < OCg; ++o)
      for (size_t k = 0; k < KK; ++k)
        for (size_t c = 0; c < ICg; ++c)
          p->w[((gi * KK + k) * ICg + c) * OCg + o] = src[((gi * OCg + o) * KK + k) * ICg + c];
  n->kind = KIND_F32;
  return prep_bias_f32(a, g, n, G * OCg, p);
}

static pterun_status prep_pool(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  if (!((is_f32(in) && is_f32(out)) || (is_q8(in) && is_q8(out) && in->dtype == out->dtype)))
    return UNSUP("%s on %s -> %s is not implemented", xb_node_name(n->tag),
                 xb_dtype_name(in->dtype), xb_dtype_name(out->dtype));
  if (in->rank != 4 || out->rank != 4 || in->dims[0] != out->dims[0] || in->dims[3] != out->dims[3])
    return BADN("pooling needs 4-D NHWC tensors with equal N and C");
  if (n->tag == XB_N_GLOBAL_AVG_POOLING2D) {
    if (out->dims[1] != 1 || out->dims[2] != 1) return BADN("global pooling output must be 1x1");
    return PTERUN_STATUS_OK;
  }
  if (n->tag == XB_N_AVG_POOLING2D) n->dh = n->dw = 1;
  if (n->dh == 0) n->dh = 1;
  if (n->dw == 0) n->dw = 1;
  size_t OH, OW;
  if (!conv_out(in->dims[1], n->pad[0], n->pad[2], n->kh, n->sh, n->dh, &OH) ||
      !conv_out(in->dims[2], n->pad[3], n->pad[1], n->kw, n->sw, n->dw, &OW) ||
      OH != out->dims[1] || OW != out->dims[2])
    return BADN("pooling geometry does not match its tensors");
  return PTERUN_STATUS_OK;
}

static pterun_status prep_binary(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *in2 = &g->values[n->in[1]], *out = &g->values[n->out];
  bcast b;
  if (!make_bcast(in, in2, out, &b)) return BADN("operand shapes do not broadcast to the output");
  if (is_f32(in) && is_f32(in2) && is_f32(out)) return PTERUN_STATUS_OK;
  if (is_q8(in) && is_q8(in2) && is_q8(out) &&
      (n->tag == XB_N_ADD || n->tag == XB_N_SUBTRACT || n->tag == XB_N_MULTIPLY))
    return PTERUN_STATUS_OK;
  return UNSUP("%s on %s, %s -> %s is not implemented", xb_node_name(n->tag),
               xb_dtype_name(in->dtype), xb_dtype_name(in2->dtype), xb_dtype_name(out->dtype));
}

pterun_status xb_prepare_node(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value* out = &g->values[n->out];
  const xb_value* in = &g->values[n->in[0]];
  if (is_binary(n->tag)) return prep_binary(a, g, n);
  switch (n->tag) {
    case XB_N_SOFTMAX:
      if (!is_f32(in) || !is_f32(out) || !same_dims(in, out) || in->rank == 0)
        return UNSUP("Softmax is implemented for fp32 only");
      return PTERUN_STATUS_OK;
    case XB_N_COPY:
      if (!same_quant(in, out) || in->numel != out->numel || elem_size(in) == 0)
        return BADN("Copy changes the type or the size");
      return PTERUN_STATUS_OK;
    case XB_N_CONVERT: {
      if (in->numel != out->numel || in->rank != out->rank) return BADN("Convert changes the size");
      if (is_f32(in) && is_q8(out)) return PTERUN_STATUS_OK;
      if (is_q8(in) && is_f32(out)) return PTERUN_STATUS_OK;
      if (is_f32(in) && is_f32(out) && (in->half || out->half)) return PTERUN_STATUS_OK;
      if (is_f32(in) && out->dtype == XB_DT_QDINT8 && out->qkind == XB_Q_DYNAMIC) {
        // Per-row parameters live after the int8 data (see dq_params_offset).
        xb_value* o = &g->values[n->out];
        if (o->loc != XB_LOC_ARENA) return UNSUP("dynamically quantized graph outputs");
        // The output has the input's shape (as the reshape pass sets it at
        // run time): the exporter may declare a dynamically quantized value
        // in the layout before a transpose (NCHW dims for an NHWC image).
        memcpy(o->dims, in->dims, sizeof o->dims);
        memcpy(o->max_dims, in->max_dims, sizeof o->max_dims);
        o->nbytes = dq_params_offset(o) + dq_rows(o) * 8;
        return PTERUN_STATUS_OK;
      }
      return UNSUP("Convert %s -> %s is not implemented", xb_dtype_name(in->dtype),
                   xb_dtype_name(out->dtype));
    }
    case XB_N_FULLY_CONNECTED: return prep_fc(a, g, n);
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D: return prep_conv(a, g, n);
    case XB_N_CONV_TRANSPOSE2D: return prep_deconv(a, g, n);
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D:
    case XB_N_GLOBAL_AVG_POOLING2D: return prep_pool(a, g, n);
    case XB_N_STATIC_TRANSPOSE: {
      if (!same_quant(in, out) || elem_size(in) == 0 || n->num_dims != in->rank ||
          in->rank != out->rank)
        return BADN("transpose changes the type or the rank");
      uint32_t seen = 0;
      for (uint32_t d = 0; d < in->rank; ++d) {
        if (n->perm[d] >= in->rank || (seen & (1u << n->perm[d])) ||
            out->dims[d] != in->dims[n->perm[d]])
          return BADN("transpose permutation is invalid for its tensors");
        seen |= 1u << n->perm[d];
      }
      return PTERUN_STATUS_OK;
    }
    case XB_N_STATIC_RESHAPE:
      if (in->numel != out->numel || elem_size(in) == 0)
        return BADN("reshape changes the element count");
      // The same partitioner output reshapes that quantized value into an
      // fp32 one (the layout change after the batch norm's convolution):
      // the reshape then also converts, as a Convert would.
      if (!same_quant(in, out) && !(is_q8(in) && is_f32(out)) && !(is_f32(in) && is_q8(out)))
        return BADN("reshape changes the type");
      return PTERUN_STATUS_OK;
    case XB_N_STATIC_SLICE:
      if (!same_quant(in, out) || elem_size(in) == 0 || n->num_dims != in->rank ||
          in->rank != out->rank)
        return BADN("slice changes the type or the rank");
      for (uint32_t d = 0; d < in->rank; ++d)
        if (n->offsets[d] > in->dims[d] || out->dims[d] > in->dims[d] - n->offsets[d])
          return BADN("slice is outside its input");
      return PTERUN_STATUS_OK;
    case XB_N_CONSTANT_PAD:
      if (!same_quant(in, out) || elem_size(in) == 0 || n->num_dims != in->rank ||
          in->rank != out->rank)
        return BADN("pad changes the type or the rank");
      if (!is_f32(in)) return UNSUP("StaticConstantPad is implemented for fp32 only");
      for (uint32_t d = 0; d < in->rank; ++d)
        if (out->dims[d] != in->dims[d] + n->pre[d] + n->post[d])
          return BADN("padded shape does not match the output");
      return PTERUN_STATUS_OK;
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: {
      if (n->axis >= out->rank || elem_size(out) == 0)
        return BADN("concatenation axis out of range");
      size_t total = 0;
      for (uint32_t k = 0; k < n->nin; ++k) {
        const xb_value* x = &g->values[n->in[k]];
        if (!same_quant(x, out) || x->rank != out->rank)
          return UNSUP("concatenation of differently typed or quantized inputs");
        for (uint32_t d = 0; d < out->rank; ++d)
          if (d != n->axis && x->dims[d] != out->dims[d])
            return BADN("concatenated shapes differ off the axis");
        total += x->dims[n->axis];
      }
      if (total != out->dims[n->axis]) return BADN("concatenated sizes do not add up");
      return PTERUN_STATUS_OK;
    }
    case XB_N_BATCH_MATRIX_MULTIPLY: {
      const xb_value* in2 = &g->values[n->in[1]];
      if (!is_f32(in) || !is_f32(in2) || !is_f32(out))
        return UNSUP("BatchMatrixMultiply is implemented for fp32 only");
      if (in->rank < 2 || in2->rank != in->rank || out->rank != in->rank)
        return BADN("batch matrix multiply needs equal ranks >= 2");
      uint32_t r = in->rank;
      size_t M = in->dims[r - 2], K = in->dims[r - 1], N = in2->dims[r - 1];
      if (in2->dims[r - 2] != K || out->dims[r - 2] != M || out->dims[r - 1] != N)
        return BADN("matrix shapes do not match");
      for (uint32_t d = 0; d + 2 < r; ++d)
        if (in->dims[d] != out->dims[d] || in2->dims[d] != out->dims[d])
          return UNSUP("broadcast batch dimensions are not implemented");
      return PTERUN_STATUS_OK;
    }
    case XB_N_RESIZE_BILINEAR2D:
      if (!is_f32(in) || !is_f32(out) || in->rank != 4 || out->rank != 4 ||
          out->dims[0] != in->dims[0] || out->dims[3] != in->dims[3] || out->dims[1] != n->new_h ||
          out->dims[2] != n->new_w || n->new_h == 0 || n->new_w == 0)
        return UNSUP("StaticResizeBilinear2D: fp32 NHWC only, and shapes must match");
      return PTERUN_STATUS_OK;
    default:
      if (is_unary(n->tag)) {
        if (!same_dims(in, out)) return BADN("element-wise node changes the shape");
        if (is_f32(in) && is_f32(out)) return PTERUN_STATUS_OK;
        if (n->tag == XB_N_CLAMP && is_q8(in) && is_q8(out) && same_quant(in, out))
          return PTERUN_STATUS_OK;
        return UNSUP("%s on %s is not implemented", xb_node_name(n->tag), xb_dtype_name(in->dtype));
      }
      return UNSUP("node type %s is not implemented by pterun's XNNPACK backend",
                   xb_node_name(n->tag));
  }
}

size_t xb_scratch_bytes(const xb_graph* g) {
  /* the method's pool is not known at init: the default one is the largest */
  const size_t threads = pterun_threadpool_default_threads();
  size_t best = 0;
  for (uint32_t i = 0; i < g->nnodes; ++i) {
    const xb_node* n = &g->nodes[i];
    const gemm_prep* p = n->packed;
    int64_t m = 0, k = 0, nn = 0;
    if (n->tag == XB_N_FULLY_CONNECTED && n->kind == KIND_F32 && p != NULL && p->K > 0) {
      k = (int64_t)p->K;
      nn = (int64_t)p->N;
      m = (int64_t)(g->values[n->in[0]].max_numel / p->K);
    } else if (n->tag == XB_N_CONV2D && n->kind == KIND_F32 && p != NULL) {
      /* a 1x1 convolution over all pixels, or im2col blocks per group */
      const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
      m = (int64_t)(out->max_dims[1] * out->max_dims[2]);
      k = (int64_t)(in->max_dims[3] > p->K ? in->max_dims[3] : p->K);
      nn = (int64_t)out->max_dims[3];
    } else if (n->tag == XB_N_BATCH_MATRIX_MULTIPLY) {
      const xb_value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
      if (a->rank < 2 || b->rank < 1) continue;
      m = (int64_t)a->max_dims[a->rank - 2];
      k = (int64_t)a->max_dims[a->rank - 1];
      nn = (int64_t)b->max_dims[b->rank - 1];
    }
    size_t s = pterun_compute_gemm_scratch_bytes(PTERUN_DTYPE_F32, m, nn, k, threads);
    if (s > best) best = s;
  }
  return best;
}
