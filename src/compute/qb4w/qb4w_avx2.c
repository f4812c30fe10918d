/* 4-bit blockwise linear microkernel for AVX2 (vpmaddubsw / vpmaddwd,
 * 32-byte vectors: a panel's 64-byte chunk is columns 0..7 and 8..15).
 * Built with -mavx2 by src/compute/isa.cmake; selected at run time only
 * when pterun_cpu_features() reports AVX2. Body: qb4w_tmpl.h. */
#include "src/compute/qb4w/ukernel.h"

#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

#define QB_FN pc_qb4w_tiles__avx2
#define QB_V 32
#define QB_VEC __m256i
#define QB_FVEC __m256
#define QB_LOAD(p) _mm256_loadu_si256((const __m256i*)(const void*)(p))
#define QB_ZERO() _mm256_setzero_si256()
#define QB_SET1_8(c) _mm256_set1_epi8((char)(c))
#define QB_SET1_16(c) _mm256_set1_epi16((short)(c))
#define QB_SET1_32(x) _mm256_set1_epi32(x)
#define QB_AND(a, b) _mm256_and_si256((a), (b))
#define QB_SRL4(x) _mm256_srli_epi16((x), 4)
#define QB_ADD16(a, b) _mm256_add_epi16((a), (b))
#define QB_ADD32(a, b) _mm256_add_epi32((a), (b))
#define QB_SUB32(a, b) _mm256_sub_epi32((a), (b))
#define QB_MADDUBS(u, s) _mm256_maddubs_epi16((u), (s))
#define QB_MADD(x, y) _mm256_madd_epi16((x), (y))
#define QB_CVT(v) _mm256_cvtepi32_ps(v)
#define QB_FZERO() _mm256_setzero_ps()
#define QB_FSET1(f) _mm256_set1_ps(f)
#define QB_FLOAD(p) _mm256_loadu_ps((const float*)(const void*)(p))
#define QB_FSTORE(p, v) _mm256_storeu_ps((p), (v))
#define QB_FADD(a, b) _mm256_add_ps((a), (b))
#define QB_FSUB(a, b) _mm256_sub_ps((a), (b))
#define QB_FMUL(a, b) _mm256_mul_ps((a), (b))
#define QB_BF16(p)                                                                                 \
  _mm256_castsi256_ps(_mm256_slli_epi32(                                                           \
      _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(const void*)(p))), 16))
#include "src/compute/qb4w/qb4w_tmpl.h"

#else
typedef int pc_qb4w_avx2_unavailable; /* not an empty translation unit */
#endif
