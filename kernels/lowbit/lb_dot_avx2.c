/* AVX2 integer part of the low-bit linear (compiled with -mavx2 only where
 * the compiler supports it; chosen at run time by lb_group_dot_select). The
 * products are widened to int16 and summed with vpmaddwd, so the result is
 * exact and equal to lb_group_dot_scalar for every input (no vpmaddubsw
 * saturation). 4-bit codes are unpacked with SIMD, other widths with the
 * portable unpacker. */
#include "kernels/lowbit/lb.h"

#if defined(PTERUN_LOWBIT_AVX2)
#include <immintrin.h>

/* 128 4-bit codes (four 16-byte blocks: value i in the low nibble of byte i,
 * value i + 16 in the high nibble), minus the bias 8. */
static void unpack4(const uint8_t* s, int8_t* d) {
  const __m128i mask = _mm_set1_epi8(0x0f), bias = _mm_set1_epi8(8);
  int b;
  for (b = 0; b < 4; ++b) {
    __m128i x = _mm_loadu_si128((const __m128i*)(s + 16 * b));
    __m128i lo = _mm_sub_epi8(_mm_and_si128(x, mask), bias);
    __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), mask), bias);
    _mm_storeu_si128((__m128i*)(d + 32 * b), lo);
    _mm_storeu_si128((__m128i*)(d + 32 * b + 16), hi);
  }
}

static int64_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  int32_t t[4];
  _mm_storeu_si128((__m128i*)t, s);
  return (int64_t)t[0] + t[1] + t[2] + t[3];
}

void lb_group_dot_avx2(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                       int64_t dot[8]) {
  __m256i acc[8];
  int8_t codes[128];
  int64_t c;
  int col;
  for (col = 0; col < 8; ++col) acc[col] = _mm256_setzero_si256();
  /* int32 lanes: each chunk adds at most 2 * 128 * 128 per lane; flush
   * before 2^31 could be reached (4096 chunks = 2^27 per lane) */
  for (col = 0; col < 8; ++col) dot[col] = 0;
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    __m256i a16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)qa));
    if (nbit == 4)
      unpack4(w, codes);
    else
      lb_unpack_codes(nbit, 128, w, codes);
    for (col = 0; col < 8; ++col) {
      __m128i wl = _mm_loadl_epi64((const __m128i*)(codes + col * 8));
      __m128i wh = _mm_loadl_epi64((const __m128i*)(codes + 64 + col * 8));
      __m256i w16 = _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(wl, wh));
      acc[col] = _mm256_add_epi32(acc[col], _mm256_madd_epi16(w16, a16));
    }
    if ((c & 4095) == 4095)
      for (col = 0; col < 8; ++col) {
        dot[col] += hsum_epi32(acc[col]);
        acc[col] = _mm256_setzero_si256();
      }
  }
  for (col = 0; col < 8; ++col) dot[col] += hsum_epi32(acc[col]);
}
#else
typedef int lb_dot_avx2_unused; /* ISO C: no empty translation unit */
#endif
