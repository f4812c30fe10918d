/* 4-bit blockwise linear microkernel for AVX-512 VNNI (vpdpbusd, 64-byte
 * vectors: one per panel chunk, lane c column c). Built with -mavx512f
 * -mavx512bw -mavx512vnni by src/compute/isa.cmake; selected at run time
 * only when pterun_cpu_features() reports them. Body: qb4w_tmpl.h. */
#include "src/compute/qb4w/ukernel.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#include <string.h>

#define QB_FN pc_qb4w_tiles__avx512vnni
#define QB_V 64
#define QB_VEC __m512i
#define QB_FVEC __m512
#define QB_LOAD(p) _mm512_loadu_si512((const void*)(p))
#define QB_ZERO() _mm512_setzero_si512()
#define QB_SET1_8(c) _mm512_set1_epi8((char)(c))
#define QB_SET1_32(x) _mm512_set1_epi32(x)
#define QB_AND(a, b) _mm512_and_si512((a), (b))
#define QB_SRL4(x) _mm512_srli_epi16((x), 4)
#define QB_ADD32(a, b) _mm512_add_epi32((a), (b))
#define QB_SUB32(a, b) _mm512_sub_epi32((a), (b))
#define QB_DPBUSD(acc, u, s) _mm512_dpbusd_epi32((acc), (u), (s))
#define QB_CVT(v) _mm512_cvtepi32_ps(v)
#define QB_FZERO() _mm512_setzero_ps()
#define QB_FSET1(f) _mm512_set1_ps(f)
#define QB_FLOAD(p) _mm512_loadu_ps((const void*)(p))
#define QB_FSTORE(p, v) _mm512_storeu_ps((void*)(p), (v))
#define QB_FADD(a, b) _mm512_add_ps((a), (b))
#define QB_FSUB(a, b) _mm512_sub_ps((a), (b))
#define QB_FMUL(a, b) _mm512_mul_ps((a), (b))
#define QB_BF16(p)                                                                                 \
  _mm512_castsi512_ps(_mm512_slli_epi32(                                                           \
      _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)(const void*)(p))), 16))
#include "src/compute/qb4w/qb4w_tmpl.h"

#else
typedef int pc_qb4w_avx512vnni_unavailable; /* not an empty translation unit */
#endif
