/* Low-bit linear microkernel for AVX2 (vpmaddubsw / vpmaddwd, 32-byte
 * vectors). Built with -mavx2 by src/compute/isa.cmake; selected at run time
 * only when pterun_cpu_features() reports AVX2. Body: dot_tmpl.h. */
#include "src/compute/lowbit/ukernel.h"

#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

#define LT_FN pc_lowbit_dot__avx2
#define LT_TILE pc_lowbit_tile__avx2
#define LT_QUANT pc_lowbit_quant__avx2
#define LT_V 32
#define LT_VEC __m256i
#define LT_LOAD(p) _mm256_loadu_si256((const __m256i*)(const void*)(p))
#define LT_STORE(p, v) _mm256_storeu_si256((__m256i*)(void*)(p), (v))
#define LT_ZERO() _mm256_setzero_si256()
#define LT_SET1_8(c) _mm256_set1_epi8((char)(c))
#define LT_SET1_16(c) _mm256_set1_epi16((short)(c))
#define LT_AND(a, b) _mm256_and_si256((a), (b))
#define LT_XOR(a, b) _mm256_xor_si256((a), (b))
#define LT_SRL4(x) _mm256_srli_epi16((x), 4)
#define LT_ADD8(a, b) _mm256_add_epi8((a), (b))
#define LT_ADD16(a, b) _mm256_add_epi16((a), (b))
#define LT_ADD32(a, b) _mm256_add_epi32((a), (b))
#define LT_ACT4(h0, h1, off) _mm256_set1_epi64x((off) == 0 ? (h0) : (h1))
#define LT_ACT(h) _mm256_set1_epi64x(h)
#define LT_CVT16(p) _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(const void*)(p)))
#define LT_ACT16(h) _mm256_cvtepi8_epi16(_mm_set1_epi64x(h))
#define LT_MADDUBS(u, s) _mm256_maddubs_epi16((u), (s))
#define LT_MADD(x, y) _mm256_madd_epi16((x), (y))
/* 4-bit flush: lanes 2c, 2c + 1 of acc_lo hold columns 0, 1 | 4, 5 and of
 * acc_hi columns 2, 3 | 6, 7, so one vphaddd gives columns 0..3 | 4..7 in
 * order; widened to int64 and added to dot. */
#define LT_HADD_COLS(lo, hi, dot)                                                                  \
  do {                                                                                             \
    const __m256i h_ = _mm256_hadd_epi32((lo), (hi));                                              \
    __m256i* d_ = (__m256i*)(void*)(dot);                                                          \
    _mm256_storeu_si256(d_, _mm256_add_epi64(_mm256_loadu_si256(d_),                               \
                                             _mm256_cvtepi32_epi64(_mm256_castsi256_si128(h_))));  \
    _mm256_storeu_si256(d_ + 1,                                                                    \
                        _mm256_add_epi64(_mm256_loadu_si256(d_ + 1),                               \
                                         _mm256_cvtepi32_epi64(_mm256_extracti128_si256(h_, 1)))); \
  } while (0)
#define LT_COLS32(lo, hi) _mm256_hadd_epi32((lo), (hi))
/* 8 bits: acc[s] holds columns 2s (lanes 0..3) and 2s + 1 (4..7); two rounds
 * of vphaddd leave columns 0, 2, 4, 6 | 1, 3, 5, 7, put in order */
#define LT_COLS8(acc)                                                                              \
  _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(_mm256_hadd_epi32((acc)[0], (acc)[1]),             \
                                                _mm256_hadd_epi32((acc)[2], (acc)[3])),            \
                              _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
#include "src/compute/lowbit/dot_tmpl.h"

#else
typedef int pc_lowbit_avx2_unavailable; /* not an empty translation unit */
#endif
