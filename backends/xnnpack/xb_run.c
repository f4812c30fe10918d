/* Execute: one node (xb_run_node), dispatched to its family's loop
 * (xb_run_*.c); copies, reshapes and the quantized clamp inline. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_nodes.h"

/* A quantized clamp (input and output share their quantization): the
 * codes clamped to the range's codes, a loop per type that the compiler
 * vectorises (a per-element type switch ran a MobileNet's 18 ReLU6 nodes at
 * ~1 ns an element). */
static void clamp_q8(xb_exec* x, const xb_node* n, const xb_value* in, const xb_value* out) {
  int32_t lo, hi;
  q_range(n, out, &lo, &hi);
  const size_t count = in->numel;
  if (in->dtype == XB_DT_QUINT8) {
    const uint8_t* s = x->data[n->in[0]];
    uint8_t* d = x->data[n->out];
    const uint8_t l = (uint8_t)(lo < 0 ? 0 : lo > 255 ? 255 : lo);
    const uint8_t h = (uint8_t)(hi < 0 ? 0 : hi > 255 ? 255 : hi);
    for (size_t i = 0; i < count; ++i) {
      const uint8_t v = s[i] < l ? l : s[i];
      d[i] = v > h ? h : v;
    }
  } else {
    const int8_t* s = x->data[n->in[0]];
    int8_t* d = x->data[n->out];
    const int8_t l = (int8_t)(lo < -128 ? -128 : lo > 127 ? 127 : lo);
    const int8_t h = (int8_t)(hi < -128 ? -128 : hi > 127 ? 127 : hi);
    for (size_t i = 0; i < count; ++i) {
      const int8_t v = s[i] < l ? l : s[i];
      d[i] = v > h ? h : v;
    }
  }
}

pterun_status xb_run_node(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  if (is_binary(n->tag)) {
    xb_run_binary(x, n);
    return PTERUN_STATUS_OK;
  }
  switch (n->tag) {
    case XB_N_FULLY_CONNECTED: xb_run_fc(x, n); return PTERUN_STATUS_OK;
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D: xb_run_conv(x, n); return PTERUN_STATUS_OK;
    case XB_N_CONV_TRANSPOSE2D: xb_run_deconv(x, n); return PTERUN_STATUS_OK;
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D:
    case XB_N_GLOBAL_AVG_POOLING2D: xb_run_pool(x, n); return PTERUN_STATUS_OK;
    case XB_N_STATIC_TRANSPOSE: xb_run_transpose(x, n); return PTERUN_STATUS_OK;
    case XB_N_STATIC_RESHAPE:
    case XB_N_COPY:
      if (in->dtype != out->dtype) { /* a reshape between fp32 and int8 (xb_prepare.c) */
        xb_run_convert(x, n);
        return PTERUN_STATUS_OK;
      }
      if (x->data[n->out] != x->data[n->in[0]])
        memmove(x->data[n->out], x->data[n->in[0]], in->numel * elem_size(in));
      return PTERUN_STATUS_OK;
    case XB_N_STATIC_SLICE: xb_run_slice_pad(x, n, false); return PTERUN_STATUS_OK;
    case XB_N_CONSTANT_PAD: xb_run_slice_pad(x, n, true); return PTERUN_STATUS_OK;
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: xb_run_concat(x, n); return PTERUN_STATUS_OK;
    case XB_N_SOFTMAX: xb_run_softmax(x, n); return PTERUN_STATUS_OK;
    case XB_N_CONVERT: xb_run_convert(x, n); return PTERUN_STATUS_OK;
    case XB_N_BATCH_MATRIX_MULTIPLY: xb_run_bmm(x, n); return PTERUN_STATUS_OK;
    case XB_N_RESIZE_BILINEAR2D: xb_run_resize(x, n); return PTERUN_STATUS_OK;
    default:
      if (n->tag == XB_N_CLAMP && is_q8(in)) {
        clamp_q8(x, n, in, out);
        return PTERUN_STATUS_OK;
      }
      if (is_unary(n->tag)) {
        xb_run_unary(x, n);
        return PTERUN_STATUS_OK;
      }
      return PTERUN_STATUS_NOT_SUPPORTED;
  }
}
