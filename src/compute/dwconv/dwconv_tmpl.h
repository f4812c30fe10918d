/* Body of the f32 NHWC depthwise convolution for one vector width. Included
 * by dwconv_<isa>.c after defining DW_LANES (floats per vector) and DW_FN
 * (the variant's name). GNU C generic vectors; every output element is
 * bias + sum of in * w over the valid taps in (kh, kw) order, one rounding
 * per step (-ffp-contract=off: no contraction), so every width gives the same bits.
 *
 * Per output pixel the valid taps are listed once (pointers into the input
 * row and the filter), then each block of channels keeps its accumulators in
 * registers across all taps: the output is written once (per 64 taps). */
#include <string.h>

#define FV_LANES DW_LANES
#include "src/compute/layout/fvec_tmpl.h"
typedef fv_v dw_v;
typedef fv_m dw_m;
#define dw_ld fv_ld
#define dw_st fv_st
#define DW_MAX_TAPS 64 /* taps listed at once */
#define DW_CAT2(a, b) a##b
#define DW_CAT(a, b) DW_CAT2(a, b)

/* ATen's clamp: max(x, lo), then min(., hi), a NaN staying NaN (lo > hi
 * gives hi); two compare-and-selects (maxps/minps order). */
static inline dw_v dw_clamp(dw_v x, dw_v lo, dw_v hi) {
  dw_m below = lo > x;
  x = (dw_v)(((dw_m)x & ~below) | ((dw_m)lo & below));
  dw_m above = hi < x;
  return (dw_v)(((dw_m)x & ~above) | ((dw_m)hi & above));
}
static inline float dw_clamp1(float x, float lo, float hi) {
  x = lo > x ? lo : x;
  return hi < x ? hi : x;
}

/* Lists up to DW_MAX_TAPS valid taps of output pixel (b, oh, ow), starting at
 * tap *t (kh * KW + kw), as input rows and filter rows; advances *t. */
static size_t DW_TAPS(const pterun_compute_dwconv2d* p, const float* in, const float* w, size_t b,
                      size_t oh, size_t ow, size_t* t, const float** ip, const float** wp) {
  const size_t taps = p->kernel_h * p->kernel_w;
  size_t nt = 0;
  /* (kh, kw) stepped along with *t: one division per list, not one per tap
   * (a division a tap cost more than the 3x3 filter's arithmetic). */
  size_t kh = *t / p->kernel_w, kw = *t % p->kernel_w;
  for (; *t < taps && nt < DW_MAX_TAPS; ++*t) {
    size_t ih = oh * p->stride_h + kh * p->dilation_h, iw = ow * p->stride_w + kw * p->dilation_w;
    if (++kw == p->kernel_w) {
      kw = 0;
      ++kh;
    }
    if (ih < p->pad_top || ih - p->pad_top >= p->in_h || iw < p->pad_left ||
        iw - p->pad_left >= p->in_w)
      continue;
    ip[nt] = in + ((b * p->in_h + ih - p->pad_top) * p->in_w + iw - p->pad_left) * p->in_c;
    wp[nt++] = w + *t * p->out_c;
  }
  return nt;
}

/* 3x3 filters, one input channel per output, whole vectors of channels:
 * the interior pixels [ow0, ow1) of output row r, whose windows lie inside
 * the input. Channel blocks outside, pixels inside: a block's 9 filter
 * vectors stay in registers across the row, so a pixel costs 9 input loads
 * for 9 multiplies and 9 adds (the per-pixel loop below loads the filter
 * again at every pixel, and was bound by loads). The same operations per
 * output in the same order (bias, then taps in (kh, kw) order, then the
 * clamp): the same bits. corner0: the window corner of column ow0. */
static void DW_CAT(DW_FN, _rows3x3)(const pterun_compute_dwconv2d* p, const float* corner0,
                                    const size_t* off, const float* w, const float* bias,
                                    float* orow, size_t ow0, size_t ow1, dw_v vlo, dw_v vhi) {
  const size_t C = p->out_c, step = p->stride_w * p->in_c;
  const dw_v zero = {0};
  for (size_t c = 0; c < C; c += DW_LANES) {
    const dw_v w0 = dw_ld(w + c), w1 = dw_ld(w + C + c), w2 = dw_ld(w + 2 * C + c),
               w3 = dw_ld(w + 3 * C + c), w4 = dw_ld(w + 4 * C + c), w5 = dw_ld(w + 5 * C + c),
               w6 = dw_ld(w + 6 * C + c), w7 = dw_ld(w + 7 * C + c), w8 = dw_ld(w + 8 * C + c);
    const dw_v b = bias != NULL ? dw_ld(bias + c) : zero;
    const float* x = corner0 + c;
    float* o = orow + ow0 * C + c;
    for (size_t ow = ow0; ow < ow1; ++ow, x += step, o += C) {
      dw_v a = b;
      a = a + dw_ld(x + off[0]) * w0;
      a = a + dw_ld(x + off[1]) * w1;
      a = a + dw_ld(x + off[2]) * w2;
      a = a + dw_ld(x + off[3]) * w3;
      a = a + dw_ld(x + off[4]) * w4;
      a = a + dw_ld(x + off[5]) * w5;
      a = a + dw_ld(x + off[6]) * w6;
      a = a + dw_ld(x + off[7]) * w7;
      a = a + dw_ld(x + off[8]) * w8;
      dw_st(o, dw_clamp(a, vlo, vhi));
    }
  }
}

void DW_FN(const pterun_compute_dwconv2d* p, const float* in, const float* w, const float* bias,
           float* out, size_t row0, size_t nrows) {
  const size_t C = p->out_c, dm = C / p->in_c, taps = p->kernel_h * p->kernel_w;
  const float lo = p->out_min, hi = p->out_max;
  const dw_v vlo = (dw_v){0} + lo, vhi = (dw_v){0} + hi;
  const dw_v zero = {0};
  const float* ip[DW_MAX_TAPS];
  const float* wp[DW_MAX_TAPS];
  /* Pixels whose whole window lies inside the input (most of them) take
   * every tap in order at fixed offsets from the window's corner, with the
   * filter rows listed once per call: no per-tap bounds checks. */
  const float* wall[DW_MAX_TAPS];
  size_t off[DW_MAX_TAPS];
  const int fast = taps <= DW_MAX_TAPS;
  const size_t span_h = (p->kernel_h - 1) * p->dilation_h,
               span_w = (p->kernel_w - 1) * p->dilation_w;
  for (size_t t = 0; fast && t < taps; ++t) {
    off[t] =
        ((t / p->kernel_w) * p->dilation_h * p->in_w + (t % p->kernel_w) * p->dilation_w) * p->in_c;
    wall[t] = w + t * C;
  }
  /* the channel-block-outside loop for the interior of a row (3x3, one
   * input channel per output, whole vectors). Up to 128 channels: a row
   * sweep per block then reads pixels at most 512 bytes apart; with 256 and
   * 512 channels (1-2 KB apart, a few L1 sets) it measured slower than the
   * per-pixel loop (Zen 4: 14x14x512 50 -> 73 us, 56x56x128 203 -> 170,
   * 56x56x32 94 -> 45, 14x14x64 8.0 -> 4.9). */
  const int rows3x3 =
      fast && taps == 9 && p->kernel_w == 3 && dm == 1 && C % DW_LANES == 0 && C <= 128;
  size_t in_lo = 0, in_hi = 0; /* interior output columns [in_lo, in_hi) */
  if (rows3x3) {
    in_lo = (p->pad_left + p->stride_w - 1) / p->stride_w;
    in_hi = p->in_w + p->pad_left >= span_w + 1
                ? (p->in_w + p->pad_left - span_w - 1) / p->stride_w + 1
                : 0;
    if (in_hi > p->out_w) in_hi = p->out_w;
    if (in_lo > in_hi) in_lo = in_hi;
  }
  for (size_t r = row0; r < row0 + nrows; ++r) {
    const size_t b = r / p->out_h, oh = r % p->out_h;
    const size_t ih = oh * p->stride_h; /* the window's first row, padded coordinates */
    const int rows_in = ih >= p->pad_top && ih - p->pad_top + span_h < p->in_h;
    const int row_fast = rows3x3 && rows_in && in_hi > in_lo;
    if (row_fast)
      DW_CAT(DW_FN, _rows3x3)(
          p,
          in + ((b * p->in_h + ih - p->pad_top) * p->in_w + in_lo * p->stride_w - p->pad_left) *
                   p->in_c,
          off, w, bias, out + r * p->out_w * C, in_lo, in_hi, vlo, vhi);
    for (size_t ow = 0; ow < p->out_w; ++ow) {
      if (row_fast && ow == in_lo) ow = in_hi; /* done above */
      if (ow >= p->out_w) break;
      float* o = out + (r * p->out_w + ow) * C;
      const size_t iw = ow * p->stride_w;
      const int inside =
          fast && rows_in && iw >= p->pad_left && iw - p->pad_left + span_w < p->in_w;
      /* Taps in lists of DW_MAX_TAPS (one list for every usual filter): the
       * first starts from the bias, later ones from the partial sums in o,
       * the last clamps. */
      size_t t = 0;
      int first = 1;
      do {
        size_t nt;
        const float* const* wq = wp;
        if (inside) {
          const float* corner =
              in + ((b * p->in_h + ih - p->pad_top) * p->in_w + iw - p->pad_left) * p->in_c;
          for (size_t k = 0; k < taps; ++k) ip[k] = corner + off[k];
          nt = t = taps;
          wq = wall;
        } else {
          nt = DW_TAPS(p, in, w, b, oh, ow, &t, ip, wp);
        }
        const int last = t >= taps;
        size_t c = 0;
        if (dm == 1) {
          /* Four independent sums in flight: one sum's adds wait on each
           * other (no contraction), so fewer would leave the adder idle. */
          for (; c + 4 * DW_LANES <= C; c += 4 * DW_LANES) {
            const float* bc = first ? bias : o; /* NULL: start from zero */
            dw_v a0 = bc != NULL ? dw_ld(bc + c) : zero;
            dw_v a1 = bc != NULL ? dw_ld(bc + c + DW_LANES) : zero;
            dw_v a2 = bc != NULL ? dw_ld(bc + c + 2 * DW_LANES) : zero;
            dw_v a3 = bc != NULL ? dw_ld(bc + c + 3 * DW_LANES) : zero;
            for (size_t k = 0; k < nt; ++k) {
              const float *x = ip[k] + c, *f = wq[k] + c;
              a0 = a0 + dw_ld(x) * dw_ld(f);
              a1 = a1 + dw_ld(x + DW_LANES) * dw_ld(f + DW_LANES);
              a2 = a2 + dw_ld(x + 2 * DW_LANES) * dw_ld(f + 2 * DW_LANES);
              a3 = a3 + dw_ld(x + 3 * DW_LANES) * dw_ld(f + 3 * DW_LANES);
            }
            dw_st(o + c, last ? dw_clamp(a0, vlo, vhi) : a0);
            dw_st(o + c + DW_LANES, last ? dw_clamp(a1, vlo, vhi) : a1);
            dw_st(o + c + 2 * DW_LANES, last ? dw_clamp(a2, vlo, vhi) : a2);
            dw_st(o + c + 3 * DW_LANES, last ? dw_clamp(a3, vlo, vhi) : a3);
          }
          for (; c + 2 * DW_LANES <= C; c += 2 * DW_LANES) {
            dw_v a0 = first ? (bias != NULL ? dw_ld(bias + c) : zero) : dw_ld(o + c);
            dw_v a1 = first ? (bias != NULL ? dw_ld(bias + c + DW_LANES) : zero)
                            : dw_ld(o + c + DW_LANES);
            for (size_t k = 0; k < nt; ++k) {
              a0 = a0 + dw_ld(ip[k] + c) * dw_ld(wq[k] + c);
              a1 = a1 + dw_ld(ip[k] + c + DW_LANES) * dw_ld(wq[k] + c + DW_LANES);
            }
            dw_st(o + c, last ? dw_clamp(a0, vlo, vhi) : a0);
            dw_st(o + c + DW_LANES, last ? dw_clamp(a1, vlo, vhi) : a1);
          }
          for (; c + DW_LANES <= C; c += DW_LANES) {
            dw_v a0 = first ? (bias != NULL ? dw_ld(bias + c) : zero) : dw_ld(o + c);
            for (size_t k = 0; k < nt; ++k) a0 = a0 + dw_ld(ip[k] + c) * dw_ld(wq[k] + c);
            dw_st(o + c, last ? dw_clamp(a0, vlo, vhi) : a0);
          }
        }
        if (dm >= DW_LANES) {
          /* A multiplier: the dm outputs of input channel ci read its one
           * value per tap (a broadcast) against dm filter columns, vectors
           * over the outputs (a 1-channel stem that XNNPACK lowers as a
           * depthwise convolution: dm = 64). Each output's operations are
           * the scalar loop's below: the same bits. */
          for (size_t ci = 0; ci < p->in_c; ++ci) {
            const size_t end = (ci + 1) * dm;
            for (c = ci * dm; c + 2 * DW_LANES <= end; c += 2 * DW_LANES) {
              dw_v a0 = first ? (bias != NULL ? dw_ld(bias + c) : zero) : dw_ld(o + c);
              dw_v a1 = first ? (bias != NULL ? dw_ld(bias + c + DW_LANES) : zero)
                              : dw_ld(o + c + DW_LANES);
              for (size_t k = 0; k < nt; ++k) {
                const dw_v xv = zero + ip[k][ci];
                a0 = a0 + xv * dw_ld(wq[k] + c);
                a1 = a1 + xv * dw_ld(wq[k] + c + DW_LANES);
              }
              dw_st(o + c, last ? dw_clamp(a0, vlo, vhi) : a0);
              dw_st(o + c + DW_LANES, last ? dw_clamp(a1, vlo, vhi) : a1);
            }
            for (; c < end; ++c) {
              float a = first ? (bias != NULL ? bias[c] : 0.0f) : o[c];
              for (size_t k = 0; k < nt; ++k) a = a + ip[k][ci] * wq[k][c];
              o[c] = last ? dw_clamp1(a, lo, hi) : a;
            }
          }
        }
        /* The last channels, and every channel when a multiplier > 1 makes
         * channel c read input channel c / dm. */
        for (; c < C; ++c) {
          float a = first ? (bias != NULL ? bias[c] : 0.0f) : o[c];
          for (size_t k = 0; k < nt; ++k) a = a + ip[k][c / dm] * wq[k][c];
          o[c] = last ? dw_clamp1(a, lo, hi) : a;
        }
        first = 0;
      } while (t < taps);
    }
  }
}
