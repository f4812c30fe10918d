/* AVX2 integer part of the low-bit linear (compiled with -mavx2 only where
 * the compiler supports it; chosen at run time by lb_group_dot_select). The
 * products are widened to int16 and summed with vpmaddwd, so the result is
 * exact and equal to lb_group_dot_scalar for every input (no vpmaddubsw
 * saturation) -- except 4 bits, where vpmaddubsw on the stored nibbles cannot
 * saturate (group_dot4). Other widths use the portable unpacker. */
#include "kernels/lowbit/lb.h"

#if defined(PTERUN_LOWBIT_AVX2)
#include <immintrin.h>
#include <string.h>

static int64_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  int32_t t[4];
  _mm_storeu_si128((__m128i*)t, s);
  return (int64_t)t[0] + t[1] + t[2] + t[3];
}

/* 4-bit: the stored nibbles u = code + 8 (0..15) times the signed
 * activations with vpmaddubsw (pairs at most 2 * 15 * 128: no saturation),
 * then dot = sum(u * a) - 8 * sum(a). In a 32-byte load of the first (last)
 * 64 codes, the low nibbles are columns 0, 1 | 4, 5 and the high nibbles
 * columns 2, 3 | 6, 7, each column 8 values against a[0..7] (a[8..15]). */
static void group_dot4(const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
  const __m256i mask = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
  __m256i acc_lo = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
  int64_t c, asum = 0;
  int32_t lo[8], hi[8];
  int j;
  for (c = 0; c < chunks; ++c, w += 64, qa += 16) {
    int64_t h0, h1;
    __m256i a0, a1;
    memcpy(&h0, qa, 8);
    memcpy(&h1, qa + 8, 8);
    a0 = _mm256_set1_epi64x(h0);
    a1 = _mm256_set1_epi64x(h1);
    __m256i x0 = _mm256_loadu_si256((const __m256i*)w);
    __m256i x1 = _mm256_loadu_si256((const __m256i*)(w + 32));
    __m256i p_lo = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(x0, mask), a0),
                                    _mm256_maddubs_epi16(_mm256_and_si256(x1, mask), a1));
    __m256i p_hi = _mm256_add_epi16(
        _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(x0, 4), mask), a0),
        _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(x1, 4), mask), a1));
    /* each int16 lane: at most 4 * 15 * 128 = 7680, the sum of two: no wrap */
    acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(p_lo, ones));
    acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(p_hi, ones));
    for (j = 0; j < 16; ++j) asum += qa[j];
    /* int32 lanes grow by at most 4 * 7680 per chunk: flush well before 2^31 */
    if ((c & 16383) == 16383 || c + 1 == chunks) {
      _mm256_storeu_si256((__m256i*)lo, acc_lo);
      _mm256_storeu_si256((__m256i*)hi, acc_hi);
      dot[0] += (int64_t)lo[0] + lo[1];
      dot[1] += (int64_t)lo[2] + lo[3];
      dot[4] += (int64_t)lo[4] + lo[5];
      dot[5] += (int64_t)lo[6] + lo[7];
      dot[2] += (int64_t)hi[0] + hi[1];
      dot[3] += (int64_t)hi[2] + hi[3];
      dot[6] += (int64_t)hi[4] + hi[5];
      dot[7] += (int64_t)hi[6] + hi[7];
      acc_lo = acc_hi = _mm256_setzero_si256();
    }
  }
  for (j = 0; j < 8; ++j) dot[j] -= 8 * asum;
}

/* 1..7 bits (other than 4): portable unpack, then the biased codes
 * u = code + 2^(n-1) <= 127 times the activations with vpmaddubsw (pairs at
 * most 2 * 127 * 128 < 2^15: no saturation); dot = sum(u * a) - bias * sum(a).
 * Code bytes 0..31 are columns 0..3 (first 8 k-values each), 32..63 columns
 * 4..7, 64..127 the same for the last 8 k-values. */
static void group_dot_u7(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                         int64_t dot[8]) {
  const __m256i ones = _mm256_set1_epi16(1), bias = _mm256_set1_epi8((char)(1 << (nbit - 1)));
  __m256i acc_a = _mm256_setzero_si256(), acc_b = _mm256_setzero_si256();
  int8_t codes[128];
  int64_t c, asum = 0;
  int32_t la[8], lb[8];
  int j;
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    int64_t h0, h1;
    __m256i a0, a1, u0, u1, u2, u3;
    memcpy(&h0, qa, 8);
    memcpy(&h1, qa + 8, 8);
    a0 = _mm256_set1_epi64x(h0);
    a1 = _mm256_set1_epi64x(h1);
    lb_unpack_codes(nbit, 128, w, codes);
    u0 = _mm256_add_epi8(_mm256_loadu_si256((const __m256i*)codes), bias);
    u1 = _mm256_add_epi8(_mm256_loadu_si256((const __m256i*)(codes + 32)), bias);
    u2 = _mm256_add_epi8(_mm256_loadu_si256((const __m256i*)(codes + 64)), bias);
    u3 = _mm256_add_epi8(_mm256_loadu_si256((const __m256i*)(codes + 96)), bias);
    /* widen each maddubs result on its own: two of them may exceed int16 */
    acc_a = _mm256_add_epi32(acc_a, _mm256_madd_epi16(_mm256_maddubs_epi16(u0, a0), ones));
    acc_a = _mm256_add_epi32(acc_a, _mm256_madd_epi16(_mm256_maddubs_epi16(u2, a1), ones));
    acc_b = _mm256_add_epi32(acc_b, _mm256_madd_epi16(_mm256_maddubs_epi16(u1, a0), ones));
    acc_b = _mm256_add_epi32(acc_b, _mm256_madd_epi16(_mm256_maddubs_epi16(u3, a1), ones));
    for (j = 0; j < 16; ++j) asum += qa[j];
    /* int32 lanes grow by at most 4 * 127 * 128 per chunk: flush well before 2^31 */
    if ((c & 8191) == 8191 || c + 1 == chunks) {
      _mm256_storeu_si256((__m256i*)la, acc_a);
      _mm256_storeu_si256((__m256i*)lb, acc_b);
      for (j = 0; j < 4; ++j) {
        dot[j] += (int64_t)la[2 * j] + la[2 * j + 1];
        dot[4 + j] += (int64_t)lb[2 * j] + lb[2 * j + 1];
      }
      acc_a = acc_b = _mm256_setzero_si256();
    }
  }
  for (j = 0; j < 8; ++j) dot[j] -= (int64_t)(1 << (nbit - 1)) * asum;
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
  if (nbit == 4) {
    group_dot4(w, qa, chunks, dot);
    return;
  }
  if (nbit < 8) {
    group_dot_u7(nbit, w, qa, chunks, dot);
    return;
  }
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    __m256i a16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)qa));
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
