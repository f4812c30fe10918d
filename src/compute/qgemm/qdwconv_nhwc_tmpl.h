/* The int8 NHWC depthwise loop, compiled once per ISA (qdwconv_<isa>.c
 * defines QDWN_FN). Output rows [row0, row0 + nrows) of batch * out_h; per
 * output pixel and run of channels, an exact int32 sum starting from the
 * int32 bias, then requant.h's epilogue per channel. Channels innermost:
 * with AVX2 sixteen channels a step, two taps per vpmaddwd (input minus its
 * zero point and the weight both fit int16, so a pair of products is exact
 * in int32); without, the compiler vectorises the plain loop. Integer sums
 * are order-free and the epilogue runs the same float operations per
 * channel in every variant: the same bits everywhere. */
#include <stdint.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "src/compute/qgemm/qdwconv.h"
#include "src/compute/qgemm/requant.h"

#ifndef QDWN_FN
#error "define QDWN_FN before including qdwconv_nhwc_tmpl.h"
#endif

#define QDWN_CAT2(a, b) a##b
#define QDWN_CAT(a, b) QDWN_CAT2(a, b)
#define QDWN_REQ QDWN_CAT(QDWN_FN, _req)
#define QDWN_SUMS QDWN_CAT(QDWN_FN, _sums)

#if defined(__AVX2__)
#define QDWN_SUM16 QDWN_CAT(QDWN_FN, _sum16)
/* Channels [c, c + 16) of one pixel: bias + sum over the nt taps of
 * (x[k][c] - za) * w[k][c] in int32, channels c..c+7 in *r0, c+8..c+15 in
 * *r1. Two taps per vpmaddwd: the input minus its zero point and the weight
 * both fit int16, so a pair of products is exact in int32. */
static inline __attribute__((always_inline)) void QDWN_SUM16(const uint8_t* const* x,
                                                             const int16_t* const* w, size_t nt,
                                                             const int32_t* bias, size_t c,
                                                             int32_t za, int in_signed, __m256i* r0,
                                                             __m256i* r1) {
  const __m256i z16 = _mm256_set1_epi16((int16_t)za), zero = _mm256_setzero_si256();
#define QDWN_X(k)                                                                                  \
  _mm256_sub_epi16(                                                                                \
      in_signed ? _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(const void*)(x[k] + c)))   \
                : _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i*)(const void*)(x[k] + c))),  \
      z16)
#define QDWN_W(k) _mm256_loadu_si256((const __m256i*)(const void*)(w[k] + c))
  /* lo: channels 0-3 and 8-11, hi: 4-7 and 12-15 (vpunpck works per
   * 128-bit half); put back in order below */
  __m256i lo = zero, hi = zero;
  size_t k = 0;
  for (; k + 2 <= nt; k += 2) {
    const __m256i a = QDWN_X(k), b = QDWN_X(k + 1), wa = QDWN_W(k), wb = QDWN_W(k + 1);
    lo = _mm256_add_epi32(
        lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), _mm256_unpacklo_epi16(wa, wb)));
    hi = _mm256_add_epi32(
        hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), _mm256_unpackhi_epi16(wa, wb)));
  }
  if (k < nt) {
    const __m256i a = QDWN_X(k), wa = QDWN_W(k);
    lo = _mm256_add_epi32(
        lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, zero), _mm256_unpacklo_epi16(wa, zero)));
    hi = _mm256_add_epi32(
        hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, zero), _mm256_unpackhi_epi16(wa, zero)));
  }
#undef QDWN_X
#undef QDWN_W
  *r0 = _mm256_permute2x128_si256(lo, hi, 0x20); /* channels 0-7 */
  *r1 = _mm256_permute2x128_si256(lo, hi, 0x31); /* channels 8-15 */
  if (bias != NULL) {
    *r0 = _mm256_add_epi32(*r0, _mm256_loadu_si256((const __m256i*)(const void*)(bias + c)));
    *r1 = _mm256_add_epi32(*r1, _mm256_loadu_si256((const __m256i*)(const void*)(bias + c + 8)));
  }
}
#endif

/* acc[c] = bias[c] + sum over the nt taps of (x[k][c] - za) * w[k][c], for
 * c < n (channels of one pixel, input channel = output channel). */
static inline __attribute__((always_inline)) void QDWN_SUMS(int32_t* restrict acc,
                                                            const uint8_t* const* x,
                                                            const int16_t* const* w, size_t nt,
                                                            const int32_t* bias, size_t n,
                                                            int32_t za, int in_signed) {
  size_t c = 0;
#if defined(__AVX2__)
  for (; c + 16 <= n; c += 16) {
    __m256i r0, r1;
    QDWN_SUM16(x, w, nt, bias, c, za, in_signed, &r0, &r1);
    _mm256_storeu_si256((__m256i*)(void*)(acc + c), r0);
    _mm256_storeu_si256((__m256i*)(void*)(acc + c + 8), r1);
  }
#endif
  /* (unsigned arithmetic: the int32 sums wrap, as the vector adds do) */
  /* (no load under a condition in a loop the compiler vectorises: a masked
   * load of an absent bias faults under emulators such as qemu) */
  if (bias != NULL)
    for (size_t i = c; i < n; ++i) acc[i] = bias[i];
  else
    for (size_t i = c; i < n; ++i) acc[i] = 0;
  for (size_t k = 0; k < nt; ++k) {
    const int16_t* wk = w[k];
    if (in_signed) {
      const int8_t* xk = (const int8_t*)(const void*)x[k];
      for (size_t i = c; i < n; ++i)
        acc[i] = (int32_t)((uint32_t)acc[i] + (uint32_t)(((int32_t)xk[i] - za) * (int32_t)wk[i]));
    } else {
      const uint8_t* xk = x[k];
      for (size_t i = c; i < n; ++i)
        acc[i] = (int32_t)((uint32_t)acc[i] + (uint32_t)(((int32_t)xk[i] - za) * (int32_t)wk[i]));
    }
  }
}

/* o[c] = requantized (float)acc[c] * scale[c] + bias[c] (requant.h), or the
 * clamped float for an F32 output, c < n. y is computed first by one of four
 * loops, so no load depends on a condition inside a loop (see QDWN_SUMS). */
static inline __attribute__((always_inline)) void QDWN_REQ(const int32_t* acc, size_t n,
                                                           const pterun_compute_qs8_epilogue* ep,
                                                           size_t c0, void* out,
                                                           int32_t out_dtype) {
  const int per_col = ep->scale_per_column;
  const float* sc = ep->scale + (per_col ? c0 : 0);
  const float* bi = ep->bias != NULL ? ep->bias + c0 : NULL;
  float y[PC_QDWN_CHUNK];
  size_t i = 0;
  if (per_col && bi != NULL)
    for (i = 0; i < n; ++i) y[i] = (float)acc[i] * sc[i] + bi[i];
  else if (per_col)
    for (i = 0; i < n; ++i) y[i] = (float)acc[i] * sc[i] + 0.0f;
  else if (bi != NULL)
    for (i = 0; i < n; ++i) y[i] = (float)acc[i] * sc[0] + bi[i];
  else
    for (i = 0; i < n; ++i) y[i] = (float)acc[i] * sc[0] + 0.0f;
  i = 0;
  if (out_dtype == PTERUN_DTYPE_F32) {
    float* o = (float*)out;
    for (; i < n; ++i) {
      const float v = y[i] < ep->f_min ? ep->f_min : y[i];
      o[i] = v > ep->f_max ? ep->f_max : v;
    }
    return;
  }
  const float inv = ep->out_inv_scale, zpo = (float)ep->out_zp;
  const float qlo = (float)ep->q_min, qhi = (float)ep->q_max;
  const int u8 = out_dtype == PTERUN_DTYPE_U8;
#if defined(__AVX512F__)
  {
    const __m512 vinv = _mm512_set1_ps(inv), vzp = _mm512_set1_ps(zpo);
    const __m512 vlo = _mm512_set1_ps(qlo), vhi = _mm512_set1_ps(qhi);
    for (; i + 16 <= n; i += 16)
      _mm_storeu_si128((__m128i*)(void*)((uint8_t*)out + i),
                       pc_qs8_requant16(_mm512_loadu_ps(y + i), vinv, vzp, vlo, vhi));
  }
#endif
#if defined(__AVX2__)
  {
    const __m256 vinv = _mm256_set1_ps(inv), vzp = _mm256_set1_ps(zpo);
    const __m256 vlo = _mm256_set1_ps(qlo), vhi = _mm256_set1_ps(qhi);
    for (; i + 8 <= n; i += 8) {
      const __m256i q = pc_qs8_requant8(_mm256_loadu_ps(y + i), vinv, vzp, vlo, vhi);
      const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      _mm_storel_epi64((__m128i*)(void*)((uint8_t*)out + i),
                       u8 ? _mm_packus_epi16(h, h) : _mm_packs_epi16(h, h));
    }
  }
#endif
  for (; i < n; ++i) {
    const int32_t q = pc_qs8_requant(y[i], inv, zpo, qlo, qhi);
    if (u8)
      ((uint8_t*)out)[i] = (uint8_t)q;
    else
      ((int8_t*)out)[i] = (int8_t)q;
  }
}

#if defined(__AVX2__)
/* Channels [0, C & ~15) of one pixel, multiplier 1, a quantized output:
 * QDWN_SUMS's sums and QDWN_REQ's requantisation (per-channel scales) in
 * registers, sixteen output bytes a step. Returns the channels done. */
static inline __attribute__((always_inline)) size_t QDWN_CAT(QDWN_FN, _fast16)(
    const uint8_t* const* x, const int16_t* const* w, size_t nt, const int32_t* bias, size_t C,
    int32_t za, int in_signed, const pterun_compute_qs8_epilogue* ep, int has_fbias, int u8,
    uint8_t* o) {
  const __m256 vinv = _mm256_set1_ps(ep->out_inv_scale), vzp = _mm256_set1_ps((float)ep->out_zp);
  const __m256 vlo = _mm256_set1_ps((float)ep->q_min), vhi = _mm256_set1_ps((float)ep->q_max);
  size_t c = 0;
  /* requant.h's operations on 8 channels' sums, as QDWN_REQ */
#define QDWN_Q8(r, at)                                                                             \
  pc_qs8_requant8(                                                                                 \
      _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(r), _mm256_loadu_ps(ep->scale + (at))),       \
                    has_fbias ? _mm256_loadu_ps(ep->bias + (at)) : _mm256_setzero_ps()),           \
      vinv, vzp, vlo, vhi)
  for (; c + 16 <= C; c += 16) {
    __m256i r0, r1;
    QDWN_SUM16(x, w, nt, bias, c, za, in_signed, &r0, &r1);
    /* codes within [q_min, q_max], inside the type: the packs saturate nothing */
    const __m256i h =
        _mm256_permute4x64_epi64(_mm256_packs_epi32(QDWN_Q8(r0, c), QDWN_Q8(r1, c + 8)), 0xD8);
    const __m128i l16 = _mm256_castsi256_si128(h), h16 = _mm256_extracti128_si256(h, 1);
    _mm_storeu_si128((__m128i*)(void*)(o + c),
                     u8 ? _mm_packus_epi16(l16, h16) : _mm_packs_epi16(l16, h16));
  }
#undef QDWN_Q8
  return c;
}
#endif

#if defined(__AVX2__)
#define QDWN_BLOCK QDWN_CAT(QDWN_FN, _block)
/* Channels [0, C & ~15) of npix consecutive output pixels whose windows lie
 * inside the input (multiplier 1, quantized output, per-channel scales):
 * per block of 16 channels the filter's tap pairs are interleaved once
 * (vpmaddwd operands) and the block's scales and biases loaded once, then
 * every pixel of the run takes them from there. The same sums (order-free
 * int32) and QDWN_REQ's float operations per channel: the same bits as the
 * pixel loop. Pixel i's window starts at corner + i * step. */
static inline __attribute__((always_inline)) void QDWN_BLOCK(const pc_qdwn_args* a,
                                                             const uint8_t* corner, size_t step,
                                                             size_t npix, const size_t* off,
                                                             size_t taps, uint8_t* o,
                                                             int in_signed) {
  const pterun_compute_qs8_epilogue* ep = a->ep;
  const size_t C = a->p->out_c;
  const int u8 = a->out_dtype == PTERUN_DTYPE_U8;
  const __m256i z16 = _mm256_set1_epi16((int16_t)ep->a_zp), zero = _mm256_setzero_si256();
  const __m256 vinv = _mm256_set1_ps(ep->out_inv_scale), vzp = _mm256_set1_ps((float)ep->out_zp);
  const __m256 vlo = _mm256_set1_ps((float)ep->q_min), vhi = _mm256_set1_ps((float)ep->q_max);
  const size_t pairs = taps / 2, odd = taps % 2;
  __m256i wl[PC_QDWN_MAX_TAPS / 2 + 1], wh[PC_QDWN_MAX_TAPS / 2 + 1];
#define QDWN_X(ptr)                                                                                \
  _mm256_sub_epi16(in_signed ? _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(ptr)))        \
                             : _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i*)(ptr))),       \
                   z16)
  /* requant.h's operations on 8 channels' sums, as QDWN_REQ */
#define QDWN_Q8(r, sc, bi)                                                                         \
  pc_qs8_requant8(_mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(r), sc), bi), vinv, vzp, vlo, vhi)
  size_t c = 0;
#if defined(__AVX512BW__)
  /* 32 channels a step: the same pairs of taps per vpmaddwd, four 128-bit
   * lanes (lo: channels 0-3, 8-11, 16-19, 24-27; hi: the others), put back
   * in order by qword permutes, then 16 channels per requantisation. */
  {
    const __m512i z32 = _mm512_set1_epi16((int16_t)ep->a_zp), zero32 = _mm512_setzero_si512();
    const __m512i ord0 = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    const __m512i ord1 = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    const __m512 zinv = _mm512_set1_ps(ep->out_inv_scale), zzp = _mm512_set1_ps((float)ep->out_zp);
    const __m512 zlo = _mm512_set1_ps((float)ep->q_min), zhi = _mm512_set1_ps((float)ep->q_max);
    __m512i zl[PC_QDWN_MAX_TAPS / 2 + 1], zh[PC_QDWN_MAX_TAPS / 2 + 1];
#define QDWN_X32(ptr)                                                                              \
  _mm512_sub_epi16(                                                                                \
      in_signed ? _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)(const void*)(ptr)))     \
                : _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i*)(const void*)(ptr))),    \
      z32)
    for (; c + 32 <= C; c += 32) {
      for (size_t q = 0; q < pairs; ++q) {
        const __m512i wa = _mm512_loadu_si512((const void*)(a->w + 2 * q * C + c));
        const __m512i wb = _mm512_loadu_si512((const void*)(a->w + (2 * q + 1) * C + c));
        zl[q] = _mm512_unpacklo_epi16(wa, wb);
        zh[q] = _mm512_unpackhi_epi16(wa, wb);
      }
      if (odd) {
        const __m512i wa = _mm512_loadu_si512((const void*)(a->w + (taps - 1) * C + c));
        zl[pairs] = _mm512_unpacklo_epi16(wa, zero32);
        zh[pairs] = _mm512_unpackhi_epi16(wa, zero32);
      }
      const __m512 s0 = _mm512_loadu_ps(ep->scale + c), s1 = _mm512_loadu_ps(ep->scale + c + 16);
      __m512 b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
      if (ep->bias != NULL)
        b0 = _mm512_loadu_ps(ep->bias + c), b1 = _mm512_loadu_ps(ep->bias + c + 16);
      __m512i i0 = zero32, i1 = zero32;
      if (a->bias != NULL)
        i0 = _mm512_loadu_si512((const void*)(a->bias + c)),
        i1 = _mm512_loadu_si512((const void*)(a->bias + c + 16));
      for (size_t i = 0; i < npix; ++i) {
        const uint8_t* xc = corner + i * step + c;
        __m512i lo = zero32, hi = zero32;
        for (size_t q = 0; q < pairs; ++q) {
          const __m512i xa = QDWN_X32(xc + off[2 * q]), xb = QDWN_X32(xc + off[2 * q + 1]);
          lo = _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(xa, xb), zl[q]));
          hi = _mm512_add_epi32(hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(xa, xb), zh[q]));
        }
        if (odd) {
          const __m512i xa = QDWN_X32(xc + off[taps - 1]);
          lo =
              _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(xa, zero32), zl[pairs]));
          hi =
              _mm512_add_epi32(hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(xa, zero32), zh[pairs]));
        }
        const __m512i r0 = _mm512_add_epi32(_mm512_permutex2var_epi64(lo, ord0, hi), i0);
        const __m512i r1 = _mm512_add_epi32(_mm512_permutex2var_epi64(lo, ord1, hi), i1);
        /* requant.h's operations per channel, as QDWN_Q8 */
        const __m512 y0 = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(r0), s0), b0);
        const __m512 y1 = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(r1), s1), b1);
        _mm_storeu_si128((__m128i*)(void*)(o + i * C + c),
                         pc_qs8_requant16(y0, zinv, zzp, zlo, zhi));
        _mm_storeu_si128((__m128i*)(void*)(o + i * C + c + 16),
                         pc_qs8_requant16(y1, zinv, zzp, zlo, zhi));
      }
    }
#undef QDWN_X32
  }
#endif
  for (; c + 16 <= C; c += 16) {
    for (size_t q = 0; q < pairs; ++q) {
      const __m256i wa = _mm256_loadu_si256((const __m256i*)(const void*)(a->w + 2 * q * C + c));
      const __m256i wb =
          _mm256_loadu_si256((const __m256i*)(const void*)(a->w + (2 * q + 1) * C + c));
      wl[q] = _mm256_unpacklo_epi16(wa, wb);
      wh[q] = _mm256_unpackhi_epi16(wa, wb);
    }
    if (odd) {
      const __m256i wa =
          _mm256_loadu_si256((const __m256i*)(const void*)(a->w + (taps - 1) * C + c));
      wl[pairs] = _mm256_unpacklo_epi16(wa, zero);
      wh[pairs] = _mm256_unpackhi_epi16(wa, zero);
    }
    const __m256 s0 = _mm256_loadu_ps(ep->scale + c), s1 = _mm256_loadu_ps(ep->scale + c + 8);
    __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
    if (ep->bias != NULL)
      b0 = _mm256_loadu_ps(ep->bias + c), b1 = _mm256_loadu_ps(ep->bias + c + 8);
    __m256i i0 = zero, i1 = zero;
    if (a->bias != NULL)
      i0 = _mm256_loadu_si256((const __m256i*)(const void*)(a->bias + c)),
      i1 = _mm256_loadu_si256((const __m256i*)(const void*)(a->bias + c + 8));
    for (size_t i = 0; i < npix; ++i) {
      const uint8_t* xc = corner + i * step + c;
      /* lo: channels 0-3 and 8-11, hi: 4-7 and 12-15 (as QDWN_SUM16) */
      __m256i lo = zero, hi = zero;
      for (size_t q = 0; q < pairs; ++q) {
        const __m256i xa = QDWN_X(xc + off[2 * q]), xb = QDWN_X(xc + off[2 * q + 1]);
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, xb), wl[q]));
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, xb), wh[q]));
      }
      if (odd) {
        const __m256i xa = QDWN_X(xc + off[taps - 1]);
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, zero), wl[pairs]));
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, zero), wh[pairs]));
      }
      const __m256i r0 = _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), i0);
      const __m256i r1 = _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x31), i1);
      /* codes within [q_min, q_max], inside the type: the packs saturate nothing */
      const __m256i h = _mm256_permute4x64_epi64(
          _mm256_packs_epi32(QDWN_Q8(r0, s0, b0), QDWN_Q8(r1, s1, b1)), 0xD8);
      const __m128i l16 = _mm256_castsi256_si128(h), h16 = _mm256_extracti128_si256(h, 1);
      _mm_storeu_si128((__m128i*)(void*)(o + i * C + c),
                       u8 ? _mm_packus_epi16(l16, h16) : _mm_packs_epi16(l16, h16));
    }
  }
#undef QDWN_X
#undef QDWN_Q8
}
#endif

/* One output pixel's channels from its taps, from channel c0 on (0, or where
 * QDWN_BLOCK left off). */
static inline __attribute__((always_inline)) void QDWN_CAT(QDWN_FN, _pixel)(
    const pc_qdwn_args* a, const uint8_t* const* x, const int16_t* const* w, size_t nt, uint8_t* o,
    int in_signed, size_t c0) {
  const size_t C = a->p->out_c, dm = C / a->p->in_c;
  const size_t es = a->out_dtype == PTERUN_DTYPE_F32 ? sizeof(float) : 1;
  const int32_t za = a->ep->a_zp;
  int32_t acc[PC_QDWN_CHUNK];
#if defined(__AVX2__)
  if (c0 == 0 && dm == 1 && a->out_dtype != PTERUN_DTYPE_F32 && a->ep->scale_per_column)
    c0 = a->ep->bias != NULL
             ? QDWN_CAT(QDWN_FN, _fast16)(x, w, nt, a->bias, C, za, in_signed, a->ep, 1,
                                          a->out_dtype == PTERUN_DTYPE_U8, o)
             : QDWN_CAT(QDWN_FN, _fast16)(x, w, nt, a->bias, C, za, in_signed, a->ep, 0,
                                          a->out_dtype == PTERUN_DTYPE_U8, o);
#endif
  for (; c0 < C; c0 += PC_QDWN_CHUNK) {
    const size_t n = C - c0 < PC_QDWN_CHUNK ? C - c0 : PC_QDWN_CHUNK;
    if (dm == 1) {
      const uint8_t* xs[PC_QDWN_MAX_TAPS];
      const int16_t* ws[PC_QDWN_MAX_TAPS];
      for (size_t k = 0; k < nt; ++k) xs[k] = x[k] + c0, ws[k] = w[k] + c0;
      QDWN_SUMS(acc, xs, ws, nt, a->bias != NULL ? a->bias + c0 : NULL, n, za, in_signed);
    } else {
      /* a multiplier: output channel c reads input channel c / dm */
      for (size_t i = 0; i < n; ++i) {
        const size_t c = c0 + i;
        uint32_t s = 0u;
        if (a->bias != NULL) s = (uint32_t)a->bias[c];
        for (size_t k = 0; k < nt; ++k) {
          const int32_t v = in_signed ? (int32_t)((const int8_t*)(const void*)x[k])[c / dm]
                                      : (int32_t)x[k][c / dm];
          s += (uint32_t)((v - za) * (int32_t)w[k][c]);
        }
        acc[i] = (int32_t)s;
      }
    }
    QDWN_REQ(acc, n, a->ep, c0, o + c0 * es, a->out_dtype);
  }
}

/* The rows with a given input signedness (a constant once inlined). */
static inline __attribute__((always_inline)) void QDWN_CAT(QDWN_FN, _rows)(const pc_qdwn_args* a,
                                                                           size_t row0,
                                                                           size_t nrows,
                                                                           int in_signed) {
  const pterun_compute_dwconv2d* p = a->p;
  const size_t C = p->out_c, IC = p->in_c, taps = p->kernel_h * p->kernel_w;
  const size_t es = a->out_dtype == PTERUN_DTYPE_F32 ? sizeof(float) : 1;
  const size_t span_h = (p->kernel_h - 1) * p->dilation_h,
               span_w = (p->kernel_w - 1) * p->dilation_w;
  const uint8_t* x[PC_QDWN_MAX_TAPS];
  const int16_t* w[PC_QDWN_MAX_TAPS];
  /* A window inside the input (most pixels): every tap at a fixed offset
   * from the window's corner, the filter rows listed once. */
  size_t off[PC_QDWN_MAX_TAPS];
  const int16_t* wall[PC_QDWN_MAX_TAPS];
  for (size_t t = 0; t < taps; ++t) {
    off[t] = ((t / p->kernel_w) * p->dilation_h * p->in_w + (t % p->kernel_w) * p->dilation_w) * IC;
    wall[t] = a->w + t * C;
  }
  /* The output columns whose windows lie inside the input's width: [ow_in0, ow_in1). */
  size_t ow_in0 = p->out_w, ow_in1 = p->out_w;
  for (size_t ow = 0; ow < p->out_w; ++ow) {
    const size_t iw0 = ow * p->stride_w;
    const int in = iw0 >= p->pad_left && iw0 - p->pad_left + span_w < p->in_w;
    if (in && ow_in0 == p->out_w) ow_in0 = ow;
    if (!in && ow_in0 != p->out_w) {
      ow_in1 = ow;
      break;
    }
  }
  size_t cb = 0; /* channels QDWN_BLOCK does on an inside run */
#if defined(__AVX2__)
  if (C == IC && a->out_dtype != PTERUN_DTYPE_F32 && a->ep->scale_per_column) cb = C & ~(size_t)15;
#endif
  for (size_t r = row0; r < row0 + nrows; ++r) {
    const size_t b = r / p->out_h, oh = r % p->out_h, ih0 = oh * p->stride_h;
    const int rows_in = ih0 >= p->pad_top && ih0 - p->pad_top + span_h < p->in_h;
    uint8_t* orow = (uint8_t*)a->out + (b * p->out_h + oh) * p->out_w * C * es;
#if defined(__AVX2__)
    if (rows_in && cb > 0 && ow_in1 > ow_in0)
      QDWN_BLOCK(a,
                 a->in + ((b * p->in_h + ih0 - p->pad_top) * p->in_w + ow_in0 * p->stride_w -
                          p->pad_left) *
                             IC,
                 p->stride_w * IC, ow_in1 - ow_in0, off, taps, orow + ow_in0 * C, in_signed);
#endif
    for (size_t ow = 0; ow < p->out_w; ++ow) {
      const size_t iw0 = ow * p->stride_w;
      uint8_t* o = orow + ow * C * es;
      if (rows_in && ow >= ow_in0 && ow < ow_in1) {
        const size_t c0 = cb; /* the block's channels are done */
        if (c0 == C) continue;
        const uint8_t* corner =
            a->in + ((b * p->in_h + ih0 - p->pad_top) * p->in_w + iw0 - p->pad_left) * IC;
        for (size_t t = 0; t < taps; ++t) x[t] = corner + off[t];
        QDWN_CAT(QDWN_FN, _pixel)(a, x, wall, taps, o, in_signed, c0);
        continue;
      }
      /* the taps inside the input: the padding adds nothing (a zero-point
       * tap contributes (za - za) * w = 0) */
      size_t nt = 0;
      for (size_t kh = 0; kh < p->kernel_h; ++kh) {
        const size_t ih = ih0 + kh * p->dilation_h;
        if (ih < p->pad_top || ih - p->pad_top >= p->in_h) continue;
        for (size_t kw = 0; kw < p->kernel_w; ++kw) {
          const size_t iw = iw0 + kw * p->dilation_w;
          if (iw < p->pad_left || iw - p->pad_left >= p->in_w) continue;
          x[nt] = a->in + ((b * p->in_h + ih - p->pad_top) * p->in_w + iw - p->pad_left) * IC;
          w[nt++] = a->w + (kh * p->kernel_w + kw) * C;
        }
      }
      QDWN_CAT(QDWN_FN, _pixel)(a, x, w, nt, o, in_signed, 0);
    }
  }
}

void QDWN_FN(const pc_qdwn_args* a, size_t row0, size_t nrows) {
  if (a->in_signed)
    QDWN_CAT(QDWN_FN, _rows)(a, row0, nrows, 1);
  else
    QDWN_CAT(QDWN_FN, _rows)(a, row0, nrows, 0);
}

#undef QDWN_REQ
#undef QDWN_SUMS
#undef QDWN_SUM16
#undef QDWN_BLOCK
#undef QDWN_CAT
#undef QDWN_CAT2
