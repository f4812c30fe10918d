/* fp16 graphs (the partitioner's output for `.half()` models). Values are
 * stored as f32 holding fp16-representable numbers and every node computes in
 * f32, as XNNPACK's fp16 operators do on CPUs without fp16 arithmetic; each
 * node's fp16 result is rounded to fp16 right after the node, so every value
 * another node reads is the one XNNPACK would have stored. */
#include <string.h>

#include "backends/xnnpack/xb_internal.h"

static bool is_quantized(const xb_value* v) {
  return v->qkind != XB_Q_NONE || (v->dtype != XB_DT_FP32 && v->dtype != XB_DT_FP16);
}

void xb_f16_load(float* dst, const uint8_t* src, size_t n) {
  for (size_t e = 0; e < n; ++e) {
    uint16_t h;
    memcpy(&h, src + 2 * e, 2);
    dst[e] = pterun_f16_to_f32(h);
  }
}

void xb_f16_store(uint8_t* dst, const float* src, size_t n) {
  for (size_t e = 0; e < n; ++e) {
    uint16_t h = pterun_f32_to_f16(src[e]);
    memcpy(dst + 2 * e, &h, 2);
  }
}

pterun_status xb_widen_fp16(const pterun_backend_init_args* a, xb_graph* g) {
  for (uint32_t ni = 0; ni < g->nnodes; ++ni) {
    const xb_node* n = &g->nodes[ni];
    uint32_t ids[7];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->nin; ++i) ids[k++] = n->in[i];
    if (n->out != XB_INVALID_ID) ids[k++] = n->out;
    if (n->out2 != XB_INVALID_ID) ids[k++] = n->out2;
    bool half = false, quant = false;
    for (uint32_t i = 0; i < k; ++i) {
      const xb_value* v = &g->values[ids[i]];
      half |= v->dtype == XB_DT_FP16 && v->qkind == XB_Q_NONE;
      quant |= is_quantized(v);
    }
    if (half && quant)
      return xb_fail(a->logger, PTERUN_STATUS_NOT_SUPPORTED,
                     "node %u (%s): fp16 with quantized operands is not implemented", ni,
                     xb_node_name(n->tag));
  }
  for (uint32_t i = 0; i < g->nvalues; ++i) {
    xb_value* v = &g->values[i];
    if (v->dtype != XB_DT_FP16 || v->qkind != XB_Q_NONE) continue;
    size_t bytes;
    if (__builtin_mul_overflow(v->max_numel, sizeof(float), &bytes))
      return xb_fail(a->logger, PTERUN_STATUS_OUT_OF_MEMORY, "value %u too large", i);
    if (v->loc == XB_LOC_CONST) {
      // Packed fp16 weights: converted once here; packing then sees f32.
      float* c = xb_alloc(g, bytes ? bytes : 1);
      if (c == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      xb_f16_load(c, v->constant, v->max_numel);
      v->constant = (const uint8_t*)c;
    } else if (v->loc == XB_LOC_EXTERNAL) {
      v->stage = xb_alloc(g, bytes ? bytes : 1);
      if (v->stage == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    }
    v->half = 1;
    v->dtype = XB_DT_FP32;
    v->nbytes = bytes;
  }
  return PTERUN_STATUS_OK;
}

void xb_round_fp16_outputs(xb_exec* x, const xb_node* n) {
  uint32_t outs[2] = {n->out, n->out2};
  for (int o = 0; o < 2; ++o) {
    if (outs[o] == XB_INVALID_ID) continue;
    const xb_value* v = &x->g->values[outs[o]];
    if (!v->half) continue;
    float* d = x->data[outs[o]];
    for (size_t e = 0; e < v->numel; ++e) d[e] = pterun_f16_to_f32(pterun_f32_to_f16(d[e]));
  }
}
