/* Execute: pooling (average, max, global average; f32 and quantized) and
 * bilinear resizing, NHWC. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_nodes.h"

/* Max/average pooling with the channels innermost, in blocks of 256: for
 * each output pixel the valid taps are visited in (kh, kw) order (each
 * element sees the operations of a one-at-a-time loop); fp32 accumulates in
 * the output row, int8 in int64 (no window can overflow it). */
static void pool_window(const xb_exec* x, const xb_node* n, bool maxp) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  const size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], C = in->dims[3];
  const size_t OH = out->dims[1], OW = out->dims[2];
  const bool q = is_q8(in);
  const int u = in->dtype == XB_DT_QUINT8;
  const void* src = x->data[n->in[0]];
  void* dst = x->data[n->out];
  int32_t lo = 0, hi = 0;
  if (q) q_range(n, out, &lo, &hi);
  const float rescale = q ? in->scale / out->scale : 1.0f;
  int64_t acc[256];
  for (size_t pix = 0; pix < B * OH * OW; ++pix) {
    const size_t b = pix / (OH * OW), oh = pix / OW % OH, ow = pix % OW;
    for (size_t c0 = 0; c0 < C; c0 += 256) {
      const size_t cn = C - c0 < 256 ? C - c0 : 256;
      float* of = q ? NULL : (float*)dst + pix * C + c0;
      for (size_t c = 0; c < cn; ++c) {
        if (q)
          acc[c] = maxp ? INT64_MIN : 0;
        else
          of[c] = maxp ? -INFINITY : 0.0f;
      }
      size_t cnt = 0;
      for (size_t kh = 0; kh < n->kh; ++kh) {
        ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
        if (ih < 0 || ih >= (ptrdiff_t)H) continue;
        for (size_t kw = 0; kw < n->kw; ++kw) {
          ptrdiff_t iw = (ptrdiff_t)(ow * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
          if (iw < 0 || iw >= (ptrdiff_t)W) continue;
          const size_t base = ((b * H + (size_t)ih) * W + (size_t)iw) * C + c0;
          ++cnt;
          if (q) {
            for (size_t c = 0; c < cn; ++c) {
              int64_t v = q_ld(src, base + c, u);
              acc[c] = maxp ? (v > acc[c] ? v : acc[c]) : acc[c] + v - in->zero_point;
            }
            continue;
          }
          const float* vf = (const float*)src + base;
          if (maxp)
            for (size_t c = 0; c < cn; ++c) of[c] = vf[c] > of[c] || isnan(vf[c]) ? vf[c] : of[c];
          else
            for (size_t c = 0; c < cn; ++c) of[c] = of[c] + vf[c];
        }
      }
      for (size_t c = 0; c < cn; ++c) {
        if (q) {
          float r = maxp ? (cnt ? (float)(acc[c] - in->zero_point) * rescale : 0.0f)
                         : (cnt ? (float)acc[c] * rescale / (float)cnt : 0.0f);
          q_st(dst, pix * C + c0 + c, requant(r, out->zero_point, lo, hi), u);
        } else {
          float r = maxp ? of[c] : (cnt ? of[c] / (float)cnt : 0.0f);
          of[c] = clampf(r, n->out_min, n->out_max);
        }
      }
    }
  }
}

void xb_run_pool(xb_exec* x, const xb_node* n) {
  if (n->tag != XB_N_GLOBAL_AVG_POOLING2D) {
    pool_window(x, n, n->tag == XB_N_MAX_POOLING2D);
    return;
  }
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t B = in->dims[0], HW = in->dims[1] * in->dims[2], C = in->dims[3];
  bool q = is_q8(in);
  int u = in->dtype == XB_DT_QUINT8;
  int32_t lo = 0, hi = 0;
  if (q) q_range(n, out, &lo, &hi);
  const void* src = x->data[n->in[0]];
  void* dst = x->data[n->out];
  float rescale = q ? in->scale / out->scale : 1.0f;
  // Global average: sums over the pixels with the channels innermost.
  for (size_t b = 0; b < B; ++b) {
    if (!q) {
      float* o = (float*)dst + b * C;
      for (size_t c = 0; c < C; ++c) o[c] = 0.0f;
      for (size_t i = 0; i < HW; ++i) {
        const float* v = (const float*)src + (b * HW + i) * C;
        for (size_t c = 0; c < C; ++c) o[c] = o[c] + v[c];
      }
      for (size_t c = 0; c < C; ++c) o[c] = clampf(o[c] / (float)HW, n->out_min, n->out_max);
      continue;
    }
    for (size_t c = 0; c < C; ++c) {
      int64_t si = 0;
      for (size_t i = 0; i < HW; ++i) si += q_ld(src, (b * HW + i) * C + c, u) - in->zero_point;
      q_st(dst, b * C + c, requant((float)si * rescale / (float)HW, out->zero_point, lo, hi), u);
    }
  }
}

void xb_run_resize(xb_exec* x, const xb_node* n) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], C = in->dims[3];
  size_t OH = out->dims[1], OW = out->dims[2];
  bool align = (n->flags & 8) != 0;
  const float* src = x->data[n->in[0]];
  float* dst = x->data[n->out];
  float sh = align && OH > 1 ? (float)(H - 1) / (float)(OH - 1) : (float)H / (float)OH;
  float sw = align && OW > 1 ? (float)(W - 1) / (float)(OW - 1) : (float)W / (float)OW;
  for (size_t b = 0; b < B; ++b)
    for (size_t oh = 0; oh < OH; ++oh) {
      float fy = align ? (float)oh * sh : ((float)oh + 0.5f) * sh - 0.5f;
      if (fy < 0.0f) fy = 0.0f;
      size_t y0 = (size_t)fy;
      if (y0 > H - 1) y0 = H - 1;
      size_t y1 = y0 + 1 < H ? y0 + 1 : H - 1;
      float ly = fy - (float)y0;
      for (size_t ow = 0; ow < OW; ++ow) {
        float fx = align ? (float)ow * sw : ((float)ow + 0.5f) * sw - 0.5f;
        if (fx < 0.0f) fx = 0.0f;
        size_t x0 = (size_t)fx;
        if (x0 > W - 1) x0 = W - 1;
        size_t x1 = x0 + 1 < W ? x0 + 1 : W - 1;
        float lx = fx - (float)x0;
        const float* p00 = src + ((b * H + y0) * W + x0) * C;
        const float* p01 = src + ((b * H + y0) * W + x1) * C;
        const float* p10 = src + ((b * H + y1) * W + x0) * C;
        const float* p11 = src + ((b * H + y1) * W + x1) * C;
        float* o = dst + ((b * OH + oh) * OW + ow) * C;
        for (size_t c = 0; c < C; ++c) {
          float top = p00[c] + (p01[c] - p00[c]) * lx;
          float bot = p10[c] + (p11[c] - p10[c]) * lx;
          o[c] = clampf(top + (bot - top) * ly, n->out_min, n->out_max);
        }
      }
    }
}
