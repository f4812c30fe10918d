/* Execute-time shapes: the output shape of a node whose inputs have other
 * sizes than the exported ones (xb_reshape_node), within the bounds. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_nodes.h"

/* ======================================================================== */
/* shapes at execute (inputs whose shape differs from the exported one)     */

static pterun_status set_shape(xb_value* o, uint32_t rank, const size_t* dims) {
  if (rank != o->rank) return PTERUN_STATUS_NOT_SUPPORTED;
  size_t numel = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    if (dims[d] > o->max_dims[d]) return PTERUN_STATUS_INVALID_ARGUMENT;
    numel *= dims[d];
  }
  memcpy(o->dims, dims, rank * sizeof *dims);
  o->numel = numel;
  return PTERUN_STATUS_OK;
}

static bool at_bounds(const xb_value* v) {
  return memcmp(v->dims, v->max_dims, v->rank * sizeof *v->dims) == 0;
}

pterun_status xb_reshape_node(xb_graph* g, const xb_node* n) {
  xb_value* out = &g->values[n->out];
  const xb_value* in = &g->values[n->in[0]];
  size_t d[XB_MAX_DIMS];
  if (is_binary(n->tag)) {
    const xb_value* in2 = &g->values[n->in[1]];
    int64_t s1[XB_MAX_DIMS], s2[XB_MAX_DIMS], so[XB_MAX_DIMS];
    for (uint32_t k = 0; k < in->rank; ++k) s1[k] = (int64_t)in->dims[k];
    for (uint32_t k = 0; k < in2->rank; ++k) s2[k] = (int64_t)in2->dims[k];
    int r = pterun_broadcast_sizes(s1, in->rank, s2, in2->rank, so, NULL);
    if (r < 0) return PTERUN_STATUS_INVALID_ARGUMENT;
    for (int k = 0; k < r; ++k) d[k] = (size_t)so[k];
    return set_shape(out, (uint32_t)r, d);
  }
  if (is_unary(n->tag) || n->tag == XB_N_SOFTMAX || n->tag == XB_N_CONVERT || n->tag == XB_N_COPY)
    return set_shape(out, in->rank, in->dims);
  switch (n->tag) {
    case XB_N_FULLY_CONNECTED: {
      const gemm_prep* p = n->packed;
      size_t M = p->K ? in->numel / p->K : 0;
      if (out->rank == in->rank) {
        memcpy(d, in->dims, in->rank * sizeof *d);
      } else if (out->rank == 2) {
        d[0] = M;
      } else {
        return PTERUN_STATUS_NOT_SUPPORTED;
      }
      d[out->rank - 1] = p->N;
      return set_shape(out, out->rank, d);
    }
    case XB_N_BATCH_MATRIX_MULTIPLY: {
      const xb_value* in2 = &g->values[n->in[1]];
      uint32_t r = in->rank;
      for (uint32_t k = 0; k + 2 < r; ++k)
        if (in->dims[k] != in2->dims[k]) return PTERUN_STATUS_INVALID_ARGUMENT;
      if (in->dims[r - 1] != in2->dims[r - 2]) return PTERUN_STATUS_INVALID_ARGUMENT;
      memcpy(d, in->dims, r * sizeof *d);
      d[r - 1] = in2->dims[r - 1];
      return set_shape(out, r, d);
    }
    case XB_N_STATIC_TRANSPOSE:
      for (uint32_t k = 0; k < in->rank; ++k) d[k] = in->dims[n->perm[k]];
      return set_shape(out, in->rank, d);
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D:
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D: {
      // NHWC: batch and spatial size follow the input, channels are fixed.
      if (in->rank != 4 || out->rank != 4 || in->dims[3] != in->max_dims[3])
        return PTERUN_STATUS_INVALID_ARGUMENT;
      if (!conv_out(in->dims[1], n->pad[0], n->pad[2], n->kh, n->sh, n->dh, &d[1]) ||
          !conv_out(in->dims[2], n->pad[3], n->pad[1], n->kw, n->sw, n->dw, &d[2]))
        return PTERUN_STATUS_INVALID_ARGUMENT;
      d[0] = in->dims[0];
      d[3] = out->max_dims[3];
      return set_shape(out, 4, d);
    }
    case XB_N_GLOBAL_AVG_POOLING2D:
      if (in->rank != 4 || out->rank != 4) return PTERUN_STATUS_INVALID_ARGUMENT;
      d[0] = in->dims[0];
      d[1] = d[2] = 1;
      d[3] = in->dims[3];
      return set_shape(out, 4, d);
    case XB_N_CONSTANT_PAD:
      for (uint32_t k = 0; k < in->rank; ++k) {
        d[k] = in->dims[k] + n->pre[k] + n->post[k];
        if (d[k] < in->dims[k]) return PTERUN_STATUS_INVALID_ARGUMENT; /* wrapped */
      }
      return set_shape(out, in->rank, d);
    case XB_N_STATIC_RESHAPE: {
      // new_shape: a 0 entry is inferred (PyTorch's -1).
      size_t known = 1, zeros = 0, at = 0;
      if (n->num_dims != out->rank) return PTERUN_STATUS_NOT_SUPPORTED;
      for (uint32_t k = 0; k < n->num_dims; ++k) {
        d[k] = n->shape[k];
        if (d[k] == 0)
          ++zeros, at = k;
        else
          known *= d[k];
      }
      if (zeros > 1 || known == 0) return PTERUN_STATUS_NOT_SUPPORTED;
      if (zeros == 1) d[at] = in->numel / known;
      size_t numel = 1;
      for (uint32_t k = 0; k < n->num_dims; ++k) numel *= d[k];
      if (numel != in->numel) return PTERUN_STATUS_NOT_SUPPORTED;
      return set_shape(out, n->num_dims, d);
    }
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: {
      memcpy(d, in->dims, in->rank * sizeof *d);
      d[n->axis] = 0;
      for (uint32_t k = 0; k < n->nin; ++k) {
        const xb_value* x = &g->values[n->in[k]];
        for (uint32_t j = 0; j < x->rank; ++j)
          if (j != n->axis && x->dims[j] != in->dims[j]) return PTERUN_STATUS_INVALID_ARGUMENT;
        d[n->axis] += x->dims[n->axis];
      }
      return set_shape(out, in->rank, d);
    }
    default:
      // No rule: only the exported shapes.
      for (uint32_t k = 0; k < n->nin; ++k)
        if (!at_bounds(&g->values[n->in[k]])) return PTERUN_STATUS_NOT_SUPPORTED;
      return set_shape(out, out->rank, out->max_dims);
  }
}
