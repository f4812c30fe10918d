/* Body of the f32 NHWC depthwise convolution for one vector width. Included
 * by dwconv_<isa>.c after defining DW_LANES (floats per vector) and DW_FN
 * (the variant's name). GNU C generic vectors; every output element is
 * bias + sum of in * w over the valid taps in (kh, kw) order, one rounding
 * per step (ISO C mode: no contraction), so every width gives the same bits.
 *
 * Per output pixel the valid taps are listed once (pointers into the input
 * row and the filter), then each block of channels keeps its accumulators in
 * registers across all taps: the output is written once. */
#include <string.h>

typedef float dw_v __attribute__((vector_size(DW_LANES * 4)));
typedef int dw_m __attribute__((vector_size(DW_LANES * 4)));

#define DW_MAX_TAPS 64 /* taps listed at once; larger filters take the generic loop */

static inline dw_v dw_ld(const float* p) {
  dw_v v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void dw_st(float* p, dw_v v) {
  memcpy(p, &v, sizeof v);
}
static inline dw_v dw_clamp(dw_v x, dw_v lo, dw_v hi) {
  dw_m below = x<lo, above = x> hi;
  dw_m keep = ~(below | above);
  return (dw_v)(((dw_m)x & keep) | ((dw_m)lo & below) | ((dw_m)hi & above));
}
static inline float dw_clamp1(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

void DW_FN(const pterun_compute_dwconv2d* p, const float* in, const float* w, const float* bias,
           float* out, size_t row0, size_t nrows) {
  const size_t C = p->out_c, IC = p->in_c, dm = C / IC, KW = p->kernel_w;
  const size_t taps = p->kernel_h * KW;
  const float lo = p->out_min, hi = p->out_max;
  const dw_v vlo = (dw_v){0} + lo, vhi = (dw_v){0} + hi;
  const float* ip[DW_MAX_TAPS];
  const float* wp[DW_MAX_TAPS];
  for (size_t r = row0; r < row0 + nrows; ++r) {
    const size_t b = r / p->out_h, oh = r % p->out_h;
    for (size_t ow = 0; ow < p->out_w; ++ow) {
      float* o = out + (r * p->out_w + ow) * C;
      size_t nt = 0;
      if (dm == 1 && taps <= DW_MAX_TAPS) {
        for (size_t kh = 0; kh < p->kernel_h; ++kh) {
          size_t ih = oh * p->stride_h + kh * p->dilation_h;
          if (ih < p->pad_top || ih - p->pad_top >= p->in_h) continue;
          ih -= p->pad_top;
          for (size_t kw = 0; kw < KW; ++kw) {
            size_t iw = ow * p->stride_w + kw * p->dilation_w;
            if (iw < p->pad_left || iw - p->pad_left >= p->in_w) continue;
            iw -= p->pad_left;
            ip[nt] = in + ((b * p->in_h + ih) * p->in_w + iw) * IC;
            wp[nt++] = w + (kh * KW + kw) * C;
          }
        }
        size_t c = 0;
        for (; c + 2 * DW_LANES <= C; c += 2 * DW_LANES) {
          dw_v a0 = {0}, a1 = {0};
          if (bias != NULL) {
            a0 = dw_ld(bias + c);
            a1 = dw_ld(bias + c + DW_LANES);
          }
          for (size_t t = 0; t < nt; ++t) {
            a0 = a0 + dw_ld(ip[t] + c) * dw_ld(wp[t] + c);
            a1 = a1 + dw_ld(ip[t] + c + DW_LANES) * dw_ld(wp[t] + c + DW_LANES);
          }
          dw_st(o + c, dw_clamp(a0, vlo, vhi));
          dw_st(o + c + DW_LANES, dw_clamp(a1, vlo, vhi));
        }
        for (; c + DW_LANES <= C; c += DW_LANES) {
          dw_v a0 = {0};
          if (bias != NULL) a0 = dw_ld(bias + c);
          for (size_t t = 0; t < nt; ++t) a0 = a0 + dw_ld(ip[t] + c) * dw_ld(wp[t] + c);
          dw_st(o + c, dw_clamp(a0, vlo, vhi));
        }
        for (; c < C; ++c) {
          float a = bias != NULL ? bias[c] : 0.0f;
          for (size_t t = 0; t < nt; ++t) a = a + ip[t][c] * wp[t][c];
          o[c] = dw_clamp1(a, lo, hi);
        }
        continue;
      }
      /* Channel multiplier > 1 or a very large filter: accumulate in the
       * output row, same order of operations. */
      for (size_t c = 0; c < C; ++c) o[c] = bias != NULL ? bias[c] : 0.0f;
      for (size_t kh = 0; kh < p->kernel_h; ++kh) {
        size_t ih = oh * p->stride_h + kh * p->dilation_h;
        if (ih < p->pad_top || ih - p->pad_top >= p->in_h) continue;
        ih -= p->pad_top;
        for (size_t kw = 0; kw < KW; ++kw) {
          size_t iw = ow * p->stride_w + kw * p->dilation_w;
          if (iw < p->pad_left || iw - p->pad_left >= p->in_w) continue;
          iw -= p->pad_left;
          const float* x = in + ((b * p->in_h + ih) * p->in_w + iw) * IC;
          const float* f = w + (kh * KW + kw) * C;
          for (size_t c = 0; c < C; ++c) o[c] = o[c] + x[c / dm] * f[c];
        }
      }
      for (size_t c = 0; c < C; ++c) o[c] = dw_clamp1(o[c], lo, hi);
    }
  }
}
