/* Execute: data movement (transpose, slice, constant pad, concatenation). */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_nodes.h"

/* dst[c][r] = src[r][c] for a rows x cols matrix, in 8 x 8 blocks. */
static void transpose_2d(const float* src, float* dst, size_t rows, size_t cols) {
  for (size_t r0 = 0; r0 < rows; r0 += 8)
    for (size_t c0 = 0; c0 < cols; c0 += 8) {
      size_t r1 = rows - r0 < 8 ? rows : r0 + 8, c1 = cols - c0 < 8 ? cols : c0 + 8;
      for (size_t c = c0; c < c1; ++c)
        for (size_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

void xb_run_transpose(xb_exec* x, const xb_node* n) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t es = elem_size(in), r = in->rank;
  size_t istride[XB_MAX_DIMS], ostride[XB_MAX_DIMS], idx[XB_MAX_DIMS] = {0};
  size_t s = 1;
  for (int d = (int)r - 1; d >= 0; --d) {
    istride[d] = s;
    s *= in->dims[d];
  }
  for (size_t d = 0; d < r; ++d) ostride[d] = istride[n->perm[d]];
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  if (r == 0 || out->numel == 0) {
    if (out->numel != 0) memcpy(dst, src, es);
    return;
  }
  // NCHW <-> NHWC (the partitioner's layout changes): per batch, one 2-D
  // transpose in blocks.
  if (r == 4 && es == 4 && n->perm[0] == 0 &&
      ((n->perm[1] == 2 && n->perm[2] == 3 && n->perm[3] == 1) ||
       (n->perm[1] == 3 && n->perm[2] == 1 && n->perm[3] == 2))) {
    bool to_last = n->perm[3] == 1; /* [C][HW] -> [HW][C] */
    size_t rows = to_last ? in->dims[1] : in->dims[1] * in->dims[2];
    size_t cols = to_last ? in->dims[2] * in->dims[3] : in->dims[3];
    for (size_t b = 0; b < in->dims[0]; ++b)
      transpose_2d((const float*)src + b * rows * cols, (float*)dst + b * rows * cols, rows, cols);
    return;
  }
  // One run along the last output dim per step; the others count in idx.
  const size_t inner = out->dims[r - 1], is = ostride[r - 1];
  for (size_t o = 0; o < out->numel; o += inner) {
    size_t off = 0;
    for (size_t d = 0; d + 1 < r; ++d) off += idx[d] * ostride[d];
    if (es == 4) {
      const float* sp = (const float*)src + off;
      float* dp = (float*)dst + o;
      for (size_t i = 0; i < inner; ++i) dp[i] = sp[i * is];
    } else if (es == 2) {
      const uint16_t* sp = (const uint16_t*)src + off;
      uint16_t* dp = (uint16_t*)dst + o;
      for (size_t i = 0; i < inner; ++i) dp[i] = sp[i * is];
    } else {
      for (size_t i = 0; i < inner; ++i) dst[o + i] = src[off + i * is];
    }
    for (int d = (int)r - 2; d >= 0; --d) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
}

void xb_run_slice_pad(xb_exec* x, const xb_node* n, bool pad) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t es = elem_size(in), r = in->rank;
  size_t istride[XB_MAX_DIMS], idx[XB_MAX_DIMS] = {0}, s = 1;
  for (int d = (int)r - 1; d >= 0; --d) {
    istride[d] = s;
    s *= in->dims[d];
  }
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  if (out->numel == 0) return;
  if (r == 0) {
    memcpy(dst, src, es);
    return;
  }
  // One run along the last dim per step: a slice copies it, a pad fills its
  // edges with the value and copies the middle.
  const size_t inner = out->dims[r - 1];
  const size_t lo = pad ? n->pre[r - 1] : 0, mid = pad ? in->dims[r - 1] : inner;
  for (size_t o = 0; o < out->numel; o += inner) {
    size_t off = 0;
    bool inside = true;
    for (size_t d = 0; d + 1 < r; ++d) {
      if (pad) {
        if (idx[d] < n->pre[d] || idx[d] - n->pre[d] >= in->dims[d])
          inside = false;
        else
          off += (idx[d] - n->pre[d]) * istride[d];
      } else {
        off += (idx[d] + n->offsets[d]) * istride[d];
      }
    }
    uint8_t* dp = dst + o * es;
    if (!pad) {
      memcpy(dp, src + (off + n->offsets[r - 1]) * es, inner * es);
    } else {
      float* fp = (float*)dp; /* pad is fp32 only */
      size_t a = inside ? lo : inner, m = inside ? mid : 0;
      for (size_t i = 0; i < a; ++i) fp[i] = n->fparam;
      if (m) memcpy(fp + a, src + off * es, m * es);
      for (size_t i = a + m; i < inner; ++i) fp[i] = n->fparam;
    }
    for (int d = (int)r - 2; d >= 0; --d) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
}

void xb_run_concat(xb_exec* x, const xb_node* n) {
  const xb_value* out = &x->g->values[n->out];
  size_t es = elem_size(out), outer = 1, inner = es;
  for (uint32_t d = 0; d < n->axis; ++d) outer *= out->dims[d];
  for (uint32_t d = n->axis + 1; d < out->rank; ++d) inner *= out->dims[d];
  size_t orow = out->dims[n->axis] * inner, at = 0;
  uint8_t* dst = x->data[n->out];
  for (uint32_t k = 0; k < n->nin; ++k) {
    const xb_value* v = &x->g->values[n->in[k]];
    size_t row = v->dims[n->axis] * inner;
    const uint8_t* src = x->data[n->in[k]];
    for (size_t o = 0; o < outer; ++o) memcpy(dst + o * orow + at, src + o * row, row);
    at += row;
  }
}
