/* Body of the f32 NCHW depthwise convolution for one vector width. Included
 * by dwconv_<isa>.c right after dwconv_tmpl.h (its vector type and helpers)
 * with DWN_FN (the variant's name) defined.
 *
 * One task is a run of (batch, channel) planes. Strides 1 and 2 across: a
 * band of output rows at a time, its input rows copied with zero padding
 * around them into a buffer that stays in L1 (stride 2: each row as its even
 * columns, then its odd ones), then register tiles of eight vectors (1 row x
 * 8 vectors, 2 x 4, 4 x 2 or 8 x 1 for narrow planes) with no edge cases
 * and plain loads. Other strides: a plane that fits the stack buffer is
 * copied once, then tiles of four with gathering loads; bigger planes run in
 * place, a vector of columns where all taps are inside the row and single
 * columns at the edges. Every
 * output is bias + the sum of in * w over all taps in (kh, kw) order, taps in
 * the padding reading zero, one rounding per step (no fused multiply-add):
 * the same bits in every loop, width and thread count. */

#if DW_LANES == 4
#define DWN_EVEN 0, 2, 4, 6
#define DWN_ODD 1, 3, 5, 7
#elif DW_LANES == 8
#define DWN_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define DWN_ODD 1, 3, 5, 7, 9, 11, 13, 15
#else
#define DWN_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define DWN_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#endif
#if defined(__clang__)
#define DWN_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define DWN_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, (dw_m){__VA_ARGS__})
#endif

/* Elements 0, 2, .. of the 2 * DW_LANES floats at p (stride-2 columns). */
static inline dw_v dwn_even(const float* p) {
  dw_v a = dw_ld(p), b = dw_ld(p + DW_LANES);
  return DWN_SHUFFLE(a, b, DWN_EVEN);
}

/* f in every lane, bits included (0 + f would turn -0 into +0). */
static inline dw_v dwn_splat(float f) {
  dw_v v;
  for (int l = 0; l < DW_LANES; ++l) v[l] = f;
  return v;
}

/* DW_LANES columns starting at p, `s` floats apart. */
static inline dw_v dwn_load(const float* p, size_t s) {
  if (s == 1) return dw_ld(p);
  if (s == 2) return dwn_even(p);
  float t[DW_LANES];
  for (int l = 0; l < DW_LANES; ++l) t[l] = p[(size_t)l * s];
  return dw_ld(t);
}

/* Floats of the zero-padded plane copy on the stack: planes up to this size
 * run as register tiles with no edge cases. */
#define DWN_BUF 8192
/* Floats of a band's copy (the tiles of eight): a quarter of a 32 KiB L1. */
#define DWN_BAND 2048

/* One register tile: R output rows x V vectors of output columns starting at
 * (oh, ow) of a zero-padded plane (row stride bw, input pixel (0, 0) at
 * (pt, pl)), all KH x KW taps in (kh, kw) order. Rows past oh_end and
 * columns past ow_end are computed (the copy has room) but not stored. */
#define SPLIT2_LANES DW_LANES
#define SPLIT2_FN dwn_split_row
#include "src/compute/layout/split2_tmpl.h"

/* n floats from xs to dst (a row of the copy), inline: the empty asm keeps
 * GCC from turning the loop into a memcpy call per row. */
static inline void dwn_copy_row(float* dst, const float* xs, size_t n) {
  size_t j = 0;
  for (; j + DW_LANES <= n; j += DW_LANES) {
    dw_st(dst + j, dw_ld(xs + j));
    __asm__("" : : "r"(dst) : "memory");
  }
  for (; j < n; ++j) dst[j] = xs[j];
}

#if defined(__clang__)
#define DWN_UNROLL _Pragma("unroll")
#define DWN_UNROLL8 _Pragma("unroll")
#else
#define DWN_UNROLL _Pragma("GCC unroll 4")
#define DWN_UNROLL8 _Pragma("GCC unroll 8")
#endif

/* The taps of one tile with a given column load (the stride's). */
#define DWN_TAPS(R, V, LOAD)                                                                       \
  for (size_t kh = 0; kh < KH; ++kh)                                                               \
    for (size_t kw = 0; kw < KW; ++kw) {                                                           \
      const dw_v wv = dwn_splat(wc[kh * KW + kw]);                                                 \
      const float* q = pp + (oh * sh + kh * dh) * bw + ow * sw + kw * dwd;                         \
      DWN_UNROLL for (int r = 0; r < R; ++r) DWN_UNROLL for (int v = 0; v < V; ++v) acc[r][v] =    \
          acc[r][v] + LOAD(q + (size_t)r * sh * bw + (size_t)v * DW_LANES * sw) * wv;              \
    }
/* Stride 2: the copy holds each row as its even columns, then its odd
 * columns (bw / 2 floats each), so the taps read plain vectors. */
#define DWN_TAPS2(R, V)                                                                            \
  for (size_t kh = 0; kh < KH; ++kh)                                                               \
    for (size_t kw = 0; kw < KW; ++kw) {                                                           \
      const dw_v wv = dwn_splat(wc[kh * KW + kw]);                                                 \
      const size_t col = ow * 2 + kw * dwd;                                                        \
      const float* q = pp + (oh * 2 + kh * dh) * bw + (col & 1 ? bw / 2 : 0) + col / 2;            \
      (void)sh;                                                                                    \
      DWN_UNROLL for (int r = 0; r < R; ++r) DWN_UNROLL for (int v = 0; v < V; ++v) acc[r][v] =    \
          acc[r][v] + dw_ld(q + (size_t)r * 2 * bw + (size_t)v * DW_LANES) * wv;                   \
    }
#define DWN_LD1(q) dw_ld(q)
#define DWN_LDS(q) dwn_load((q), sw)

#define DWN_TILE(R, V)                                                                             \
  static inline void dwn_tile_##R##x##V(const float* pp, size_t bw, const float* wc, size_t KH,    \
                                        size_t KW, size_t sh, size_t sw, size_t dh, size_t dwd,    \
                                        float bv, dw_v vlo, dw_v vhi, float* y, size_t OW,         \
                                        size_t oh, size_t oh_end, size_t ow) {                     \
    dw_v acc[R][V];                                                                                \
    DWN_UNROLL for (int r = 0; r < R; ++r) DWN_UNROLL for (int v = 0; v < V; ++v) acc[r][v] =      \
        dwn_splat(bv);                                                                             \
    if (sw == 1) {                                                                                 \
      DWN_TAPS(R, V, DWN_LD1)                                                                      \
    } else if (sw == 2 && sh == 2) {                                                               \
      DWN_TAPS2(R, V)                                                                              \
    } else {                                                                                       \
      DWN_TAPS(R, V, DWN_LDS)                                                                      \
    }                                                                                              \
    DWN_UNROLL for (int r = 0; r < R; ++r) {                                                       \
      if (oh + (size_t)r >= oh_end) break;                                                         \
      DWN_UNROLL for (int v = 0; v < V; ++v) {                                                     \
        size_t c0 = ow + (size_t)v * DW_LANES;                                                     \
        dw_v o = dw_clamp(acc[r][v], vlo, vhi);                                                    \
        float* yr = y + (oh + (size_t)r) * OW + c0;                                                \
        if (c0 + DW_LANES <= OW) {                                                                 \
          dw_st(yr, o);                                                                            \
        } else if (c0 < OW) {                                                                      \
          float t[DW_LANES];                                                                       \
          dw_st(t, o);                                                                             \
          memcpy(yr, t, (OW - c0) * sizeof(float));                                                \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
DWN_TILE(1, 4)
DWN_TILE(2, 2)
DWN_TILE(4, 1)
#undef DWN_TILE

/* Stores the rows and columns of an R x V tile (row-major vectors at t)
 * that fall inside the output (rows before oh_end, columns before OW). When
 * the tile spans whole rows (one tile across), a row's last vector is
 * stored whole if that stays inside the plane: what it writes past the row
 * lands on later rows, which are stored after it (tiles run in row order,
 * one plane per task), so narrow planes (a few columns) store whole vectors
 * but at their very end. */
static void dwn_store_part(const dw_v* t, size_t R, size_t V, float* y, size_t OW, size_t oh,
                           size_t oh_end, size_t ow) {
  const size_t end = ow == 0 && V * DW_LANES >= OW ? oh_end * OW : 0;
  for (size_t r = 0; r < R && oh + r < oh_end; ++r)
    for (size_t v = 0; v < V; ++v) {
      size_t c0 = ow + v * DW_LANES, at = (oh + r) * OW + c0;
      if (c0 >= OW) break;
      if (at + DW_LANES <= end) {
        dw_st(y + at, t[r * V + v]);
        continue;
      }
      float part[DW_LANES];
      dw_st(part, t[r * V + v]);
      for (size_t l = 0; l < DW_LANES && c0 + l < OW; ++l) y[at + l] = part[l];
    }
}

/* Strides 1 and 2 across (any filter, stride down, dilation): eight
 * accumulators (R rows x V vectors, R * V = 8), enough independent sums to
 * keep the adders busy, over a list of the taps' offsets in the copy (the
 * same for every tile). The taps stay a loop: unrolled, GCC computes one sum
 * at a time and spills the loads. Same operations in the same order as the
 * tiles above: the same bits. Tile row r starts rs floats after row r - 1. */
#if defined(__clang__)
#define DWN_NOUNROLL _Pragma("nounroll")
#else
#define DWN_NOUNROLL _Pragma("GCC unroll 1")
#endif
#define DWN8_TILE(R, V)                                                                            \
  static void dwn8_tile_##R##x##V(const float* base, size_t rs, const size_t* off,                 \
                                  const float* wc, size_t taps, float bv, dw_v vlo, dw_v vhi,      \
                                  float* y, size_t OW, size_t oh, size_t oh_end, size_t ow) {      \
    dw_v acc[R][V];                                                                                \
    DWN_UNROLL8 for (int r = 0; r < R; ++r) DWN_UNROLL8 for (int v = 0; v < V; ++v) acc[r][v] =    \
        dwn_splat(bv);                                                                             \
    DWN_NOUNROLL for (size_t t = 0; t < taps; ++t) {                                               \
      const dw_v wv = dwn_splat(wc[t]);                                                            \
      const float* q = base + off[t];                                                              \
      DWN_UNROLL8 for (int r = 0; r < R; ++r) DWN_UNROLL8 for (int v = 0; v < V; ++v) acc[r][v] =  \
          acc[r][v] + dw_ld(q + (size_t)r * rs + (size_t)v * DW_LANES) * wv;                       \
    }                                                                                              \
    DWN_UNROLL8 for (int r = 0; r < R; ++r) DWN_UNROLL8 for (int v = 0; v < V; ++v) acc[r][v] =    \
        dw_clamp(acc[r][v], vlo, vhi);                                                             \
    if (oh + R <= oh_end && ow + V * DW_LANES <= OW) {                                             \
      DWN_UNROLL8 for (int r = 0; r < R; ++r) DWN_UNROLL8 for (int v = 0; v < V; ++v)              \
          dw_st(y + (oh + (size_t)r) * OW + ow + (size_t)v * DW_LANES, acc[r][v]);                 \
      return;                                                                                      \
    }                                                                                              \
    dw_v part[R * V];                                                                              \
    DWN_UNROLL8 for (int r = 0; r < R; ++r) DWN_UNROLL8 for (int v = 0; v < V; ++v)                \
        part[r * V + v] = acc[r][v];                                                               \
    dwn_store_part(part, R, V, y, OW, oh, oh_end, ow);                                             \
  }
DWN8_TILE(1, 8)
DWN8_TILE(2, 4)
DWN8_TILE(4, 2)
DWN8_TILE(8, 1)
#undef DWN8_TILE
#undef DWN_NOUNROLL
#undef DWN_TAPS
#undef DWN_LD1
#undef DWN_TAPS2
#undef DWN_LDS
#undef DWN_UNROLL
#undef DWN_UNROLL8
#undef DWN_SHUFFLE
#undef DWN_EVEN
#undef DWN_ODD

void DWN_FN(const pterun_compute_dwconv2d* p, const float* in, const float* w, const float* bias,
            float* out, size_t plane0, size_t nplanes) {
  const size_t C = p->out_c, dm = C / p->in_c, KH = p->kernel_h, KW = p->kernel_w;
  const size_t IH = p->in_h, IW = p->in_w, OH = p->out_h, OW = p->out_w;
  const size_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dwd = p->dilation_w;
  const size_t pt = p->pad_top, pl = p->pad_left;
  const float lo = p->out_min, hi = p->out_max;
  const dw_v vlo = dwn_splat(lo), vhi = dwn_splat(hi);
  const size_t span = (KW - 1) * dwd; /* first to last tap of a row */
  /* Tile shape: V vectors across (as the row allows), R rows; strides 1
   * and 2 across run the tiles of eight over a tap list (V up to 8,
   * R = 8 / V), the others four sums (V up to 4, R = 4 / V). */
  const size_t nvec = (OW + DW_LANES - 1) / DW_LANES;
  const int k8 = (sw == 1 || sw == 2) && KH * KW <= DW_MAX_TAPS;
  const size_t V = k8 ? (nvec >= 6 ? 8 : nvec >= 3 ? 4 : nvec) : nvec >= 3 ? 4 : nvec;
  const size_t R = (k8 ? 8 : 4) / V;
  /* Stride 2 across reads rows split in even and odd columns. */
  const int split = sw == 2 && (k8 || sh == 2);
  /* The zero-padded copy: columns up to the last float a tile's loads reach
   * (the deinterleaving load reads one past its last even column), rows up to
   * the last row of the last tile. */
  size_t bw = 0, bh = 0, RB = 0;
  int padded = OW <= DWN_BUF && OH <= DWN_BUF && sw <= 64 && sh <= 64 && span <= DWN_BUF &&
               (KH - 1) * dh <= DWN_BUF && IW <= DWN_BUF && IH <= DWN_BUF && pl <= DWN_BUF &&
               pt <= DWN_BUF;
  if (padded) {
    size_t owt = (nvec + V - 1) / V * V * DW_LANES, oht = (OH + R - 1) / R * R;
    bw = (owt - 1) * sw + span + 1 + (sw == 2);
    if (bw < pl + IW) bw = pl + IW;
    bw += bw & 1; /* even: stride 2 splits rows in halves */
    if (k8) {
      /* The tiles of eight run a band of RB output rows at a time over a
       * copy of the band's input rows small enough to stay in L1 while the
       * outputs stream out (a whole plane's copy was evicted by them and
       * every row copied in missed). */
      RB = R;
      while (RB < oht && ((RB + R - 1) * sh + (KH - 1) * dh + 1) * bw <= DWN_BAND) RB += R;
      bh = (RB - 1) * sh + (KH - 1) * dh + 1;
    } else {
      bh = (oht - 1) * sh + (KH - 1) * dh + 1;
      if (bh < pt + IH) bh = pt + IH;
    }
    padded = bh <= DWN_BUF / bw;
  }
  float buf[DWN_BUF];
  size_t off[DW_MAX_TAPS]; /* the tiles of eight: each tap's offset in the copy */
  if (padded) {
    memset(buf, 0, bh * bw * sizeof(float));
    for (size_t kh = 0; k8 && kh < KH; ++kh)
      for (size_t kw = 0; kw < KW; ++kw) {
        size_t col = kw * dwd;
        off[kh * KW + kw] = kh * dh * bw + (sw == 1 ? col : (col & 1 ? bw / 2 : 0) + col / 2);
      }
  }
  const float* xr[DW_MAX_TAPS];
  const float* wr[DW_MAX_TAPS];
  for (size_t plane = plane0; plane < plane0 + nplanes; ++plane) {
    const size_t b = plane / C, c = plane % C;
    const float* x = in + (b * p->in_c + c / dm) * IH * IW;
    const float* wc = w + c * KH * KW;
    float* y = out + plane * OH * OW;
    const float bv = bias != NULL ? bias[c] : 0.0f;
    if (padded && k8) {
      for (size_t ob = 0; ob < OH; ob += RB) {
        /* Copy row r is row ob * sh + r of the padded plane: input rows go
         * to their columns (the padding columns stay zero), rows in the
         * padding become zeros. */
        for (size_t r = 0; r < bh; ++r) {
          const size_t prow = ob * sh + r;
          float* row = buf + r * bw;
          if (prow < pt || prow - pt >= IH)
            memset(row, 0, bw * sizeof(float));
          else if (split)
            dwn_split_row(row, bw, x + (prow - pt) * IW, IW, pl);
          else
            dwn_copy_row(row + pl, x + (prow - pt) * IW, IW);
        }
        for (size_t oh = ob; oh < OH && oh < ob + RB; oh += R)
          for (size_t ow = 0; ow < OW; ow += V * DW_LANES) {
            const float* base = buf + (oh - ob) * sh * bw + ow;
            if (V == 8)
              dwn8_tile_1x8(base, sh * bw, off, wc, KH * KW, bv, vlo, vhi, y, OW, oh, OH, ow);
            else if (V == 4)
              dwn8_tile_2x4(base, sh * bw, off, wc, KH * KW, bv, vlo, vhi, y, OW, oh, OH, ow);
            else if (V == 2)
              dwn8_tile_4x2(base, sh * bw, off, wc, KH * KW, bv, vlo, vhi, y, OW, oh, OH, ow);
            else
              dwn8_tile_8x1(base, sh * bw, off, wc, KH * KW, bv, vlo, vhi, y, OW, oh, OH, ow);
          }
      }
      continue;
    }
    if (padded) {
      /* Only the input's window changes from plane to plane; the zeros stay. */
      if (split) {
        for (size_t r = 0; r < IH; ++r) dwn_split_row(buf + (pt + r) * bw, bw, x + r * IW, IW, pl);
      } else {
        for (size_t r = 0; r < IH; ++r) dwn_copy_row(buf + (pt + r) * bw + pl, x + r * IW, IW);
      }
      for (size_t oh = 0; oh < OH; oh += R)
        for (size_t ow = 0; ow < OW; ow += V * DW_LANES) {
          if (V == 4)
            dwn_tile_1x4(buf, bw, wc, KH, KW, sh, sw, dh, dwd, bv, vlo, vhi, y, OW, oh, OH, ow);
          else if (V == 2)
            dwn_tile_2x2(buf, bw, wc, KH, KW, sh, sw, dh, dwd, bv, vlo, vhi, y, OW, oh, OH, ow);
          else
            dwn_tile_4x1(buf, bw, wc, KH, KW, sh, sw, dh, dwd, bv, vlo, vhi, y, OW, oh, OH, ow);
        }
      continue;
    }
    /* A big plane: in place, whole vectors where every tap lies inside the
     * input row, single columns elsewhere. Taps in the padding add 0 * w,
     * as in the padded copy. */
    const size_t reach = sw == 2 ? 2 * DW_LANES : (DW_LANES - 1) * sw + 1;
    const size_t v0 = pl == 0 ? 0 : (pl + sw - 1) / sw;
    size_t v1 = v0;
    if (IW + pl >= span + reach) {
      size_t last = (IW + pl - span - reach) / sw; /* the last column a vector may start at */
      v1 = last + DW_LANES < OW ? last + DW_LANES : OW;
      if (v1 < v0) v1 = v0;
    }
    for (size_t oh = 0; oh < OH; ++oh) {
      /* Filter rows: the input row each reads, or NULL in the padding. */
      for (size_t kh = 0; kh < KH; ++kh) {
        size_t ih = oh * sh + kh * dh;
        xr[kh] = ih < pt || ih - pt >= IH ? NULL : x + (ih - pt) * IW;
        wr[kh] = wc + kh * KW;
      }
      float* yr = y + oh * OW;
      size_t ow = 0;
      while (ow < OW) {
        if (ow >= v0 && ow + DW_LANES <= v1) {
          dw_v a0 = dwn_splat(bv);
          for (size_t k = 0; k < KH; ++k)
            for (size_t kw = 0; kw < KW; ++kw) {
              dw_v xv =
                  xr[k] != NULL ? dwn_load(xr[k] + (ow * sw + kw * dwd - pl), sw) : dwn_splat(0.0f);
              a0 = a0 + xv * dwn_splat(wr[k][kw]);
            }
          dw_st(yr + ow, dw_clamp(a0, vlo, vhi));
          ow += DW_LANES;
        } else {
          float a = bv;
          for (size_t k = 0; k < KH; ++k)
            for (size_t kw = 0; kw < KW; ++kw) {
              size_t iw = ow * sw + kw * dwd;
              float xv = xr[k] != NULL && iw >= pl && iw - pl < IW ? xr[k][iw - pl] : 0.0f;
              a = a + xv * wr[k][kw];
            }
          yr[ow] = dw_clamp1(a, lo, hi);
          ++ow;
        }
      }
    }
  }
}
