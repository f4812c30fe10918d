/* Body of the f32 direct NCHW convolution for one vector width. Included by
 * conv_<isa>.c after defining CV_LANES (floats per vector), CV_OCB (output
 * channels per register tile), CV_VMAX (vectors across per tile, 2 to 4),
 * CV_FMA(x, w, acc) (acc + x * w: fused or not, the variant's choice) and
 * CV_FN (the variant's name).
 *
 * A task copies the input rows of a band of output rows (all channels, zero
 * padded, each row split into its stride phases) into a buffer on the stack
 * that stays in L1, then runs register tiles of CV_OCB channels x V vectors
 * of one output row over it: per tap, V plain loads and CV_OCB broadcasts of
 * the weight feed CV_OCB * V multiply-adds. Every output is bias + its taps
 * in (ci, kh, kw) order, then the activation, whatever the tile, band or
 * thread split: the same bits for every split. */
#include <string.h>

#include "src/compute/conv/conv.h"

#define FV_LANES CV_LANES
#include "src/compute/layout/fvec_tmpl.h"

/* f in every lane, bits included. */
static inline fv_v cv_splat(float f) {
  fv_v v;
  for (int l = 0; l < CV_LANES; ++l) v[l] = f;
  return v;
}
static inline fv_v cv_sel(fv_m m, fv_v a, fv_v b) { /* m ? a : b */
  return (fv_v)(((fv_m)a & m) | ((fv_m)b & ~m));
}
/* PTERUN_COMPUTE_ACT_*: ReLU is x < 0 ? +0 : x (NaN and -0 stay); clamp is
 * x < lo ? lo : x, then hi < x ? hi : x. */
static inline fv_v cv_act(fv_v x, int act, fv_v lo, fv_v hi) {
  if (act == PTERUN_COMPUTE_ACT_RELU) return cv_sel(x < cv_splat(0.0f), cv_splat(0.0f), x);
  if (act == PTERUN_COMPUTE_ACT_CLAMP) {
    x = cv_sel(x < lo, lo, x);
    return cv_sel(hi < x, hi, x);
  }
  return x;
}

#if defined(__clang__)
#define CV_UNROLL _Pragma("unroll")
#define CV_NOUNROLL _Pragma("nounroll")
#else
#define CV_UNROLL _Pragma("GCC unroll 16")
#define CV_NOUNROLL _Pragma("GCC unroll 1")
#endif

/* One tile: output row `oh` (its band copy starting at `base`, the tile's
 * first column already added), columns [ow, ow + V * CV_LANES), the CV_OCB
 * channels whose weights are wb ([tap][CV_OCB]) and biases bb; stores the
 * rows of channels below nst and the columns below OW. */
#define CV_TILE(V)                                                                                 \
  static void cv_tile_##V(const float* base, const size_t* off, size_t taps, const float* wb,      \
                          const float* bb, int act, fv_v lo, fv_v hi, float* y, size_t plane,      \
                          size_t nst, size_t OW, size_t ow) {                                      \
    fv_v acc[CV_OCB][V];                                                                           \
    CV_UNROLL for (int o = 0; o < CV_OCB; ++o) CV_UNROLL for (int v = 0; v < V; ++v) acc[o][v] =   \
        cv_splat(bb[o]);                                                                           \
    CV_NOUNROLL for (size_t t = 0; t < taps; ++t) {                                                \
      const float* q = base + off[t];                                                              \
      fv_v x[V];                                                                                   \
      CV_UNROLL for (int v = 0; v < V; ++v) x[v] = fv_ld(q + (size_t)v * CV_LANES);                \
      CV_UNROLL for (int o = 0; o < CV_OCB; ++o) {                                                 \
        const fv_v wv = cv_splat(wb[t * CV_OCB + (size_t)o]);                                      \
        CV_UNROLL for (int v = 0; v < V; ++v) acc[o][v] = CV_FMA(x[v], wv, acc[o][v]);             \
      }                                                                                            \
    }                                                                                              \
    for (size_t o = 0; o < nst; ++o) CV_UNROLL for (int v = 0; v < V; ++v) {                       \
        const size_t c0 = ow + (size_t)v * CV_LANES;                                               \
        const fv_v r = cv_act(acc[o][v], act, lo, hi);                                             \
        float* yr = y + o * plane + c0;                                                            \
        if (c0 + CV_LANES <= OW) {                                                                 \
          fv_st(yr, r);                                                                            \
        } else if (c0 < OW) {                                                                      \
          float t[CV_LANES];                                                                       \
          fv_st(t, r);                                                                             \
          memcpy(yr, t, (OW - c0) * sizeof(float));                                                \
        }                                                                                          \
      }                                                                                            \
  }
CV_TILE(1)
CV_TILE(2)
#if CV_VMAX >= 3
CV_TILE(3)
#endif
#if CV_VMAX >= 4
CV_TILE(4)
#endif
#undef CV_TILE

#define SPLIT2_LANES CV_LANES
#define SPLIT2_FN cv_split_row
#include "src/compute/layout/split2_tmpl.h"

/* Padded input row `prow` of channel plane x into its band row: phase f
 * gets padded columns f, f + sw, .. (zero outside the input). */
static void cv_fill_row(float* row, const float* x, size_t IH, size_t IW, size_t prow, size_t pt,
                        size_t pl, size_t sw, size_t pw) {
  if (prow < pt || prow - pt >= IH) {
    memset(row, 0, sw * pw * sizeof(float));
    return;
  }
  const float* xs = x + (prow - pt) * IW;
  if (sw == 2) {
    /* Vectorised: zeros, then the input columns that land in the row. */
    const size_t rs = 2 * pw, n = pl + IW <= rs ? IW : rs > pl ? rs - pl : 0;
    memset(row, 0, rs * sizeof(float));
    cv_split_row(row, rs, xs, n, pl);
    return;
  }
  for (size_t f = 0; f < sw; ++f) {
    float* d = row + f * pw;
    /* Phase index i holds padded column i * sw + f = input column
     * i * sw + f - pl: inside for i in [lo, hi). */
    size_t lo = pl > f ? (pl - f + sw - 1) / sw : 0;
    size_t hi = (pl + IW > f) ? (pl + IW - f + sw - 1) / sw : 0;
    if (hi > pw) hi = pw;
    if (lo > hi) lo = hi;
    memset(d, 0, lo * sizeof(float));
    if (hi > lo) {
      const float* s = xs + (lo * sw + f - pl);
      if (sw == 1)
        memcpy(d + lo, s, (hi - lo) * sizeof(float));
      else
        for (size_t i = lo; i < hi; ++i) d[i] = s[(i - lo) * sw];
    }
    memset(d + hi, 0, (pw - hi) * sizeof(float));
  }
}

/* Weights of channels [oc, oc + CV_OCB) as [tap][CV_OCB] into wb and their
 * biases into bb, zeros for channels at or past oc_end. */
static void cv_pack_block(float* wb, float* bb, const float* w, const float* bias, size_t oc,
                          size_t oc_end, size_t taps) {
  for (size_t o = 0; o < CV_OCB; ++o) {
    const int in = oc + o < oc_end;
    bb[o] = in && bias != NULL ? bias[oc + o] : 0.0f;
    for (size_t t = 0; t < taps; ++t) wb[t * CV_OCB + o] = in ? w[(oc + o) * taps + t] : 0.0f;
  }
}

void CV_FN(const pterun_compute_conv2d* p, const float* in, const float* w, const float* bias,
           float* out, size_t row0, size_t nrows, size_t oc0, size_t noc) {
  pc_cv_layout l;
  if (!pc_cv_layout_for(p, CV_LANES, &l)) return; /* the dispatch checked */
  const size_t IC = p->in_c, IH = p->in_h, IW = p->in_w, OC = p->out_c, OH = p->out_h,
               OW = p->out_w, KH = p->kernel_h, KW = p->kernel_w, sh = p->stride_h,
               sw = p->stride_w, dh = p->dilation_h, dwd = p->dilation_w;
  const size_t taps = IC * KH * KW, cs = l.bh * l.rs, plane = OH * OW;
  const int act = p->activation;
  const fv_v lo = cv_splat(p->lo), hi = cv_splat(p->hi);
  /* Vectors across, in tiles of at most CV_VMAX, as even as they come. */
  const size_t nvec = (OW + CV_LANES - 1) / CV_LANES;
  const size_t ntile = (nvec + CV_VMAX - 1) / CV_VMAX;
  _Alignas(64) float buf[PC_CV_BUF];
  /* The task's weights as blocks of [tap][CV_OCB] (zeros past the last
   * channel) and their biases: all blocks once when they fit (bands are
   * short at stride 2), else one block at a time per band. */
  _Alignas(64) float wall[PC_CV_WPACK];
  float ball[PC_CV_WPACK / CV_OCB];
  const size_t nblk = (noc + CV_OCB - 1) / CV_OCB;
  const int once = nblk * CV_OCB * taps <= PC_CV_WPACK;
  for (size_t k = 0; once && k < nblk; ++k)
    cv_pack_block(wall + k * CV_OCB * taps, ball + k * CV_OCB, w, bias, oc0 + k * CV_OCB, oc0 + noc,
                  taps);
  size_t off[PTERUN_COMPUTE_CONV2D_MAX_TAPS];
  for (size_t ci = 0, t = 0; ci < IC; ++ci)
    for (size_t kh = 0; kh < KH; ++kh)
      for (size_t kw = 0; kw < KW; ++kw, ++t) {
        const size_t col = kw * dwd;
        off[t] = ci * cs + kh * dh * l.rs + (col % sw) * l.pw + col / sw;
      }
  size_t r = row0;
  while (r < row0 + nrows) {
    /* A band: rows of one batch, at most l.band of them. */
    const size_t b = r / OH, oh0 = r % OH;
    size_t n = row0 + nrows - r;
    if (n > OH - oh0) n = OH - oh0;
    if (n > l.band) n = l.band;
    const size_t bh = (n - 1) * sh + (KH - 1) * dh + 1;
    for (size_t ci = 0; ci < IC; ++ci) {
      const float* x = in + (b * IC + ci) * IH * IW;
      for (size_t i = 0; i < bh; ++i)
        cv_fill_row(buf + ci * cs + i * l.rs, x, IH, IW, oh0 * sh + i, p->pad_top, p->pad_left, sw,
                    l.pw);
    }
    for (size_t oc = oc0; oc < oc0 + noc; oc += CV_OCB) {
      const size_t nst = oc0 + noc - oc < CV_OCB ? oc0 + noc - oc : CV_OCB;
      const float* wb = wall + (oc - oc0) * taps;
      const float* bb = ball + (oc - oc0);
      if (!once) {
        cv_pack_block(wall, ball, w, bias, oc, oc0 + noc, taps);
        wb = wall;
        bb = ball;
      }
      float* yb = out + (b * OC + oc) * plane;
      for (size_t oh = oh0; oh < oh0 + n; ++oh) {
        const float* rowb = buf + (oh - oh0) * sh * l.rs;
        float* y = yb + oh * OW;
        size_t v0 = 0;
        for (size_t tI = 0; tI < ntile; ++tI) {
          /* Tile tI covers vectors [v0, v0 + V): the first nvec % ntile
           * tiles take one more. */
          const size_t V = nvec / ntile + (tI < nvec % ntile);
          const size_t ow = v0 * CV_LANES;
          const float* base = rowb + ow;
#if CV_VMAX >= 4
          if (V == 4)
            cv_tile_4(base, off, taps, wb, bb, act, lo, hi, y, plane, nst, OW, ow);
          else
#endif
#if CV_VMAX >= 3
              if (V == 3)
            cv_tile_3(base, off, taps, wb, bb, act, lo, hi, y, plane, nst, OW, ow);
          else
#endif
              if (V == 2)
            cv_tile_2(base, off, taps, wb, bb, act, lo, hi, y, plane, nst, OW, ow);
          else
            cv_tile_1(base, off, taps, wb, bb, act, lo, hi, y, plane, nst, OW, ow);
          v0 += V;
        }
      }
    }
    r += n;
  }
}

#undef CV_UNROLL
#undef CV_NOUNROLL
