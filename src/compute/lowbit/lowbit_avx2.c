/* Low-bit linear microkernel for AVX2 (vpmaddubsw / vpmaddwd, 32-byte
 * vectors). Built with -mavx2 by src/compute/isa.cmake; selected at run time
 * only when pterun_cpu_features() reports AVX2. Body: dot_tmpl.h. */
#include "src/compute/lowbit/ukernel.h"

#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

#define LT_FN pc_lowbit_dot__avx2
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
#include "src/compute/lowbit/dot_tmpl.h"

#else
typedef int pc_lowbit_avx2_unavailable; /* not an empty translation unit */
#endif
