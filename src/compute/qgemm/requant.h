/* The int8 engine's requantisation of one value, shared by the GEMM's
 * epilogue (qgemm.c, whose vector paths do the same) and the depthwise
 * convolution (qdwconv.c), so both give the same bits (internal). */
#ifndef PTERUN_SRC_COMPUTE_QGEMM_REQUANT_H_
#define PTERUN_SRC_COMPUTE_QGEMM_REQUANT_H_

#include <stdint.h>

/* 1.5 * 2^23: adding and subtracting it rounds a float of magnitude below
 * 2^22 to an integer, half to even (the current rounding mode), as
 * nearbyintf does, without a libm call on baseline x86-64. */
#define PC_QS8_RNE_MAGIC 12582912.0f
#define PC_QS8_RNE_LIMIT 4194304.0f

static inline float pc_qs8_round_half_even(float p) {
  /* Beyond 2^22 every q range here saturates anyway; NaN passes through. */
  p = p < -PC_QS8_RNE_LIMIT ? -PC_QS8_RNE_LIMIT : p;
  p = p > PC_QS8_RNE_LIMIT ? PC_QS8_RNE_LIMIT : p;
  return (p + PC_QS8_RNE_MAGIC) - PC_QS8_RNE_MAGIC;
}

/* The requantisation of one value (qgemm.c's vector paths do the same). */
static inline int32_t pc_qs8_requant(float y, float inv, float zpo, float qlo, float qhi) {
  float t = zpo + pc_qs8_round_half_even(y * inv);
  t = t > qlo ? t : qlo; /* NaN -> q_min */
  t = t < qhi ? t : qhi;
  return (int32_t)t;
}

#if defined(__AVX2__)
#include <immintrin.h>
/* The vector paths round with the rounding instruction (half to even, no
 * bound first): the same codes as pc_qs8_requant. Below 2^22 both round to
 * the same integer, and zpo + it is exact; beyond, both sums lie outside
 * [q_min, q_max] and clamp to the same bound; a NaN stays NaN up to the
 * clamp, whose max(t, q_min) returns q_min (its second operand). Three
 * operations fewer per vector than the bound-and-magic form (a fifth of a
 * requantising epilogue). */
#define PC_QS8_RNE_ROUND (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* pc_qs8_requant on 8 lanes of y (same codes, above); the codes as int32. */
static inline __m256i pc_qs8_requant8(__m256 y, __m256 inv, __m256 zpo, __m256 qlo, __m256 qhi) {
  __m256 t = _mm256_add_ps(zpo, _mm256_round_ps(_mm256_mul_ps(y, inv), PC_QS8_RNE_ROUND));
  t = _mm256_min_ps(_mm256_max_ps(t, qlo), qhi);
  return _mm256_cvttps_epi32(t);
}
#endif

#if defined(__AVX512F__)
/* pc_qs8_requant on 16 lanes of y (same codes, above); narrowed to 16 codes
 * by truncation, which keeps every code: each lies in [q_min, q_max], inside
 * int8 or uint8. */
static inline __m128i pc_qs8_requant16(__m512 y, __m512 inv, __m512 zpo, __m512 qlo, __m512 qhi) {
  __m512 t = _mm512_add_ps(zpo, _mm512_roundscale_ps(_mm512_mul_ps(y, inv), PC_QS8_RNE_ROUND));
  t = _mm512_min_ps(_mm512_max_ps(t, qlo), qhi);
  return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t));
}
#endif

#endif
