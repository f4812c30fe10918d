/* The staged int8 depthwise loop, compiled once per ISA (qdwconv_<isa>.c
 * defines QDW_FN). Per output plane, bands of output rows: the band's padded
 * input rows are copied once as int16 (input - zero point, 0 in the
 * padding), grouped by row modulo stride_h and each row split into its
 * stride_w column phases. Then for every output row of the band and every
 * tap the input it reads sits at one fixed offset from the output's index in
 * a band-wide accumulator whose rows are as long as the staged ones, so the
 * taps are long contiguous multiply-adds over the whole band, nine at a time
 * in registers (the columns past out_w are computed and dropped). Exact
 * int32 sums and requant.h's scalar epilogue: every ISA gives the same bits (the
 * compiler vectorises the loops; with AVX2 the tap sum pairs taps by hand, the
 * staging widens 16 or 8 columns per step and the tap loop's last partial
 * block runs whole into dropped lanes). */
#include <stdint.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "src/compute/qgemm/qdwconv.h"
#include "src/compute/qgemm/requant.h"

#ifndef QDW_FN
#error "define QDW_FN before including qdwconv_tmpl.h"
#endif

#define QDW_CAT2(a, b) a##b
#define QDW_CAT(a, b) QDW_CAT2(a, b)
#define QDW_TAP QDW_CAT(QDW_FN, _tap)
#define QDW_STAGE_ROWS QDW_CAT(QDW_FN, _stage)
#define QDW_GROUP_BASE QDW_CAT(QDW_FN, _group_base)
#define QDW_REQ QDW_CAT(QDW_FN, _req)
#define QDW_ZERO QDW_CAT(QDW_FN, _zero)
#define QDW_WIDEN QDW_CAT(QDW_FN, _widen)
/* Past the staged rows (and past a band's accumulator), zeros the AVX2 tap
 * loop's last, partial block of 16 reads (into lanes it then drops). */
#define QDW_SLACK 16

/* acc[i] (= or +=) sum over t < 9 of w[t] * s[t][i], i < n: up to nine taps
 * summed in registers, so the accumulator is written once per group instead
 * of read and written once per tap (unused slots have weight 0). */
#if defined(__AVX2__)
/* Staged inputs and weights both lie in [-255, 255] (int8 minus an int8 zero
 * point, or uint8 minus a uint8 one), so a pair of taps is one vpmaddwd of
 * interleaved int16 lanes: w[t] * s[t][i] + w[t+1] * s[t+1][i], exact in
 * int32. Half the multiplies of widening each tap to int32, and no widening. */
static inline __m256i QDW_CAT(QDW_FN, _pair)(uint32_t lo, uint32_t hi) {
  return _mm256_set1_epi32((int32_t)((lo & 0xffffu) | (hi << 16)));
}
static void QDW_TAP(int32_t* restrict acc, const int16_t* const* s, const int32_t* w, size_t n,
                    int add) {
  const __m256i w01 = QDW_CAT(QDW_FN, _pair)((uint32_t)w[0], (uint32_t)w[1]);
  const __m256i w23 = QDW_CAT(QDW_FN, _pair)((uint32_t)w[2], (uint32_t)w[3]);
  const __m256i w45 = QDW_CAT(QDW_FN, _pair)((uint32_t)w[4], (uint32_t)w[5]);
  const __m256i w67 = QDW_CAT(QDW_FN, _pair)((uint32_t)w[6], (uint32_t)w[7]);
  const __m256i w8 = QDW_CAT(QDW_FN, _pair)((uint32_t)w[8], 0);
  const __m256i zero = _mm256_setzero_si256();
  size_t i = 0;
#define QDW_LD(k) _mm256_loadu_si256((const __m256i*)(const void*)(s[k] + i))
  /* lanes 0-3 and 8-11 in lo, 4-7 and 12-15 in hi (vpunpck works per 128-bit half) */
#define QDW_BLOCK16(i)                                                                             \
  do {                                                                                             \
    __m256i a = QDW_LD(0), b = QDW_LD(1);                                                          \
    __m256i lo = _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w01);                              \
    __m256i hi = _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w01);                              \
    a = QDW_LD(2), b = QDW_LD(3);                                                                  \
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w23));                \
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w23));                \
    a = QDW_LD(4), b = QDW_LD(5);                                                                  \
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w45));                \
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w45));                \
    a = QDW_LD(6), b = QDW_LD(7);                                                                  \
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w67));                \
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w67));                \
    a = QDW_LD(8);                                                                                 \
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, zero), w8));              \
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, zero), w8));              \
    __m256i r0 = _mm256_permute2x128_si256(lo, hi, 0x20); /* lanes 0-7 */                          \
    __m256i r1 = _mm256_permute2x128_si256(lo, hi, 0x31); /* lanes 8-15 */                         \
    if (add) {                                                                                     \
      r0 = _mm256_add_epi32(r0, _mm256_loadu_si256((const __m256i*)(const void*)(acc + (i))));     \
      r1 = _mm256_add_epi32(r1, _mm256_loadu_si256((const __m256i*)(const void*)(acc + (i) + 8))); \
    }                                                                                              \
    _mm256_storeu_si256((__m256i*)(void*)(acc + (i)), r0);                                         \
    _mm256_storeu_si256((__m256i*)(void*)(acc + (i) + 8), r1);                                     \
  } while (0)
  for (; i + 16 <= n; i += 16) QDW_BLOCK16(i);
  /* The last partial block runs whole: its extra lanes read staged values or
   * the zeroed QDW_SLACK past them, and land in accumulator lanes no output
   * reads (the buffers have the slack). */
  if (i < n) QDW_BLOCK16(i);
#undef QDW_BLOCK16
#undef QDW_LD
}
#else
static void QDW_TAP(int32_t* restrict acc, const int16_t* const* s, const int32_t* w, size_t n,
                    int add) {
  const int16_t* restrict s0 = s[0], * restrict s1 = s[1], * restrict s2 = s[2];
  const int16_t* restrict s3 = s[3], * restrict s4 = s[4], * restrict s5 = s[5];
  const int16_t* restrict s6 = s[6], * restrict s7 = s[7], * restrict s8 = s[8];
  const int32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6],
                w7 = w[7], w8 = w[8];
  if (add) {
    for (size_t i = 0; i < n; ++i)
      acc[i] += w0 * s0[i] + w1 * s1[i] + w2 * s2[i] + w3 * s3[i] + w4 * s4[i] + w5 * s5[i] +
                w6 * s6[i] + w7 * s7[i] + w8 * s8[i];
  } else {
    for (size_t i = 0; i < n; ++i)
      acc[i] = w0 * s0[i] + w1 * s1[i] + w2 * s2[i] + w3 * s3[i] + w4 * s4[i] + w5 * s5[i] +
               w6 * s6[i] + w7 * s7[i] + w8 * s8[i];
  }
}
#endif

/* n int16 zeros: a row's padding columns, usually 0-2, stored without the
 * library call a memset (or a loop GCC turns into one) costs. */
static inline void QDW_ZERO(int16_t* d, size_t n) {
  if (n > 4) {
    memset(d, 0, sizeof(int16_t) * n);
    return;
  }
  if (n > 0) d[0] = 0;
  if (n > 1) d[1] = 0;
  if (n > 2) d[2] = 0;
  if (n > 3) d[3] = 0;
}

/* w[c] = s[c] - za, c < n (s int8 when in_signed, else uint8): the same
 * int16 values as the plain loop; with AVX2, 16 (or 8) columns per step and
 * the last step overlapping the one before (rows are short: 8 to 64 columns
 * in a MobileNet, where the compiler's loop ran mostly its scalar tail). */
static inline void QDW_WIDEN(int16_t* restrict w, const uint8_t* s, size_t n, int32_t za,
                             int in_signed) {
  size_t c = 0;
#if defined(__AVX2__)
  if (n >= 8) {
    const __m256i z16 = _mm256_set1_epi16((int16_t)za);
    const __m128i z8 = _mm_set1_epi16((int16_t)za);
#define QDW_W16(at)                                                                                \
  do {                                                                                             \
    const __m128i x = _mm_loadu_si128((const __m128i*)(const void*)(s + (at)));                    \
    const __m256i v = in_signed ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x);               \
    _mm256_storeu_si256((__m256i*)(void*)(w + (at)), _mm256_sub_epi16(v, z16));                    \
  } while (0)
#define QDW_W8(at)                                                                                 \
  do {                                                                                             \
    const __m128i x = _mm_loadl_epi64((const __m128i*)(const void*)(s + (at)));                    \
    const __m128i v = in_signed ? _mm_cvtepi8_epi16(x) : _mm_cvtepu8_epi16(x);                     \
    _mm_storeu_si128((__m128i*)(void*)(w + (at)), _mm_sub_epi16(v, z8));                           \
  } while (0)
    if (n >= 16) {
      for (; c + 16 <= n; c += 16) QDW_W16(c);
      if (c < n) QDW_W16(n - 16);
    } else {
      QDW_W8(0);
      if (n > 8) QDW_W8(n - 8);
    }
#undef QDW_W16
#undef QDW_W8
    return;
  }
#endif
  if (in_signed) {
    const int8_t* si = (const int8_t*)(const void*)s;
    for (; c < n; ++c) w[c] = (int16_t)((int32_t)si[c] - za);
  } else {
    for (; c < n; ++c) w[c] = (int16_t)((int32_t)s[c] - za);
  }
}

/* The first staged row of group g (rows staged: `rows`). */
static size_t QDW_GROUP_BASE(size_t rows, size_t sh, size_t g) {
  size_t base = 0;
  for (size_t k = 0; k < g; ++k) base += k < rows ? (rows - k + sh - 1) / sh : 0;
  return base;
}

/* Padded rows [r0, r0 + rows) of the plane (padded row r is input row
 * r - pad_top) into buf: staged row k (= r - r0) goes to group k % stride_h
 * at index k / stride_h (groups one after another), as its stride phases of
 * row / stride_w columns (phase f holds padded columns f, f + stride_w, ...).
 * Each row is widened in one contiguous pass (into `tmp` when it is then
 * split into phases). */
static void QDW_STAGE_ROWS(const pc_qdw_args* a, const uint8_t* plane, size_t r0, size_t rows,
                           size_t row, int16_t* restrict buf, int16_t* restrict tmp) {
  const pterun_compute_dwconv2d* p = a->p;
  const size_t sw = p->stride_w, sh = p->stride_h, phase = row / sw, pl = p->pad_left;
  const size_t in_w = p->in_w;
  const int32_t za = a->ep->a_zp;
  /* padded columns [lo, hi) hold input columns [lo - pl, hi - pl) */
  const size_t lo = pl < row ? pl : row;
  const size_t hi = in_w + pl < row ? in_w + pl : row;
  for (size_t k = 0; k < rows; ++k) {
    int16_t* d = buf + (QDW_GROUP_BASE(rows, sh, k % sh) + k / sh) * row;
    int16_t* w = sw == 1 ? d : tmp;
    const int64_t y = (int64_t)(r0 + k) - (int64_t)p->pad_top;
    if (y < 0 || y >= (int64_t)p->in_h || hi <= lo) {
      memset(d, 0, sizeof(int16_t) * row);
      continue;
    }
    QDW_ZERO(w, lo);
    QDW_ZERO(w + hi, row - hi);
    QDW_WIDEN(w + lo, plane + (size_t)y * in_w + (lo - pl), hi - lo, za, a->in_signed);
    if (sw == 2) {
      size_t i = 0;
#if defined(__AVX2__)
      /* 32 columns a step: as int32 lanes, a column pair's low half is the
       * even column and its high half the odd one (sign-extended by the
       * shifts; staged values lie in [-255, 255], so the packs saturate
       * nothing); packs works per 128-bit half, the permute restores order. */
      for (; i + 16 <= phase; i += 16) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i*)(const void*)(tmp + 2 * i));
        const __m256i x1 = _mm256_loadu_si256((const __m256i*)(const void*)(tmp + 2 * i + 16));
        const __m256i e = _mm256_packs_epi32(_mm256_srai_epi32(_mm256_slli_epi32(x0, 16), 16),
                                             _mm256_srai_epi32(_mm256_slli_epi32(x1, 16), 16));
        const __m256i o = _mm256_packs_epi32(_mm256_srai_epi32(x0, 16), _mm256_srai_epi32(x1, 16));
        _mm256_storeu_si256((__m256i*)(void*)(d + i), _mm256_permute4x64_epi64(e, 0xD8));
        _mm256_storeu_si256((__m256i*)(void*)(d + phase + i), _mm256_permute4x64_epi64(o, 0xD8));
      }
#endif
      for (; i < phase; ++i) {
        d[i] = tmp[2 * i];
        d[phase + i] = tmp[2 * i + 1];
      }
    } else if (sw > 2) {
      for (size_t f = 0; f < sw; ++f)
        for (size_t i = 0; i < phase; ++i) d[f * phase + i] = tmp[i * sw + f];
    }
  }
}

/* o[i] = requantized (float)v[i] * sc + bi, i < n (requant.h), narrowed to
 * uint8 or int8: requant.h's operations in its order, 16 lanes at a time with
 * AVX-512F, 8 with AVX2 (as the GEMM's AVX2 epilogue does them), so every
 * variant gives the same bits. */
static void QDW_REQ(const int32_t* v, size_t n, float sc, float bi, float inv, float zpo, float qlo,
                    float qhi, int u8, void* out) {
  size_t i = 0;
#if defined(__AVX512F__)
  {
    const __m512 vsc = _mm512_set1_ps(sc), vbi = _mm512_set1_ps(bi), vinv = _mm512_set1_ps(inv);
    const __m512 vzp = _mm512_set1_ps(zpo), vlo = _mm512_set1_ps(qlo), vhi = _mm512_set1_ps(qhi);
    for (; i + 16 <= n; i += 16) {
      const __m512 y = _mm512_add_ps(
          _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512((const void*)(v + i))), vsc), vbi);
      _mm_storeu_si128((__m128i*)(void*)((uint8_t*)out + i),
                       pc_qs8_requant16(y, vinv, vzp, vlo, vhi));
    }
  }
#endif
#if defined(__AVX2__)
  const __m256 vsc = _mm256_set1_ps(sc), vbi = _mm256_set1_ps(bi), vinv = _mm256_set1_ps(inv);
  const __m256 vzp = _mm256_set1_ps(zpo), vlo = _mm256_set1_ps(qlo), vhi = _mm256_set1_ps(qhi);
  for (; i + 8 <= n; i += 8) {
    const __m256 y = _mm256_add_ps(
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i*)(const void*)(v + i))),
                      vsc),
        vbi);
    const __m256i q = pc_qs8_requant8(y, vinv, vzp, vlo, vhi);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64((__m128i*)(void*)((uint8_t*)out + i),
                     u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
  }
#endif
  for (; i < n; ++i) {
    const int32_t q = pc_qs8_requant((float)v[i] * sc + bi, inv, zpo, qlo, qhi);
    if (u8)
      ((uint8_t*)out)[i] = (uint8_t)q;
    else
      ((int8_t*)out)[i] = (int8_t)q;
  }
}

void QDW_FN(const pc_qdw_args* a, size_t pl0, size_t npl) {
  const pterun_compute_dwconv2d* p = a->p;
  const pterun_compute_qs8_epilogue* ep = a->ep;
  const size_t row = pc_qdw_row(p), sw = p->stride_w, sh = p->stride_h, phase = row / sw;
  const size_t taps = p->kernel_h * p->kernel_w, mult = p->out_c / p->in_c;
  const size_t eff_kh = p->dilation_h * (p->kernel_h - 1) + 1, ow = p->out_w;
  /* output rows per band: its staged rows fit the buffer */
  const size_t band = (PC_QDW_STAGE / row - eff_kh) / sh + 1;
  const float inv = ep->out_inv_scale, zpo = (float)ep->out_zp;
  const float qlo = (float)ep->q_min, qhi = (float)ep->q_max;
  int16_t buf[PC_QDW_STAGE + QDW_SLACK], tmp[PC_QDW_STAGE];
  int32_t acc[PC_QDW_STAGE + QDW_SLACK];
  for (size_t pl = pl0; pl < pl0 + npl; ++pl) {
    const size_t c = pl % p->out_c, b = pl / p->out_c;
    const uint8_t* plane = a->in + (b * p->in_c + c / mult) * p->in_h * p->in_w;
    const int8_t* wc = a->w + c * taps;
    const int32_t wz = ep->w_zp != NULL ? ep->w_zp[c] : 0;
    const float sc = ep->scale[ep->scale_per_column ? c : 0];
    const float bi = ep->bias != NULL ? ep->bias[c] : 0.0f;
    for (size_t oy0 = 0; oy0 < p->out_h; oy0 += band) {
      const size_t n_rows = p->out_h - oy0 < band ? p->out_h - oy0 : band;
      const size_t staged = (n_rows - 1) * sh + eff_kh;
      /* output (oy0 + j, x) accumulates at acc[j * row + x] */
      const size_t span = (n_rows - 1) * row + ow;
      QDW_STAGE_ROWS(a, plane, oy0 * sh, staged, row, buf, tmp);
      memset(buf + staged * row, 0, sizeof(int16_t) * QDW_SLACK);
      {
        const int16_t* src[9];
        int32_t wt[9];
        size_t n = 0;
        int add = 0;
        for (size_t ky = 0; ky < p->kernel_h; ++ky) {
          const size_t rr = ky * p->dilation_h;
          const int16_t* g = buf + (QDW_GROUP_BASE(staged, sh, rr % sh) + rr / sh) * row;
          for (size_t kx = 0; kx < p->kernel_w; ++kx) {
            const size_t t = kx * p->dilation_w;
            src[n] = g + (t % sw) * phase + t / sw;
            wt[n++] = (int32_t)wc[ky * p->kernel_w + kx] - wz;
            if (n == 9 || ky * p->kernel_w + kx + 1 == taps) {
              for (size_t e = n; e < 9; ++e) src[e] = src[0], wt[e] = 0;
              QDW_TAP(acc, src, wt, span, add);
              n = 0, add = 1;
            }
          }
        }
      }
      for (size_t j = 0; j < n_rows; ++j) {
        const int32_t* ar = acc + j * row;
        const size_t at = pl * p->out_h * ow + (oy0 + j) * ow;
        if (a->out_dtype == PTERUN_DTYPE_F32) {
          float* o = (float*)a->out + at;
          for (size_t i = 0; i < ow; ++i) {
            float y = (float)ar[i] * sc + bi;
            y = y < ep->f_min ? ep->f_min : y;
            y = y > ep->f_max ? ep->f_max : y;
            o[i] = y;
          }
        } else {
          QDW_REQ(ar, ow, sc, bi, inv, zpo, qlo, qhi, a->out_dtype == PTERUN_DTYPE_U8,
                  (uint8_t*)a->out + at);
        }
      }
    }
  }
}

#undef QDW_TAP
#undef QDW_STAGE_ROWS
#undef QDW_GROUP_BASE
#undef QDW_REQ
#undef QDW_ZERO
#undef QDW_WIDEN
#undef QDW_SLACK
#undef QDW_CAT
#undef QDW_CAT2
