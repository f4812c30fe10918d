/* int8 GEMM microkernel for AVX2: 6 x 8 tile. Exact without saturation: A
 * (uint8) is packed as int16, B stays int8 in memory (half the weight traffic)
 * and is sign-extended to int16 as it is loaded (vpmovsxbw), and vpmaddwd
 * multiplies int16 pairs into int32 sums (|a*b + a*b| <= 2 * 255 * 128; the
 * faster vpmaddubsw would saturate). Each B vector holds 4
 * columns x 4 K values, so a row's two accumulators hold two partial sums per
 * column, added pairwise at the end (hadd + a lane permute). 12 accumulators,
 * 2 B vectors and a broadcast: 15 of the 16 ymm registers. Built with -mavx2
 * by src/compute/isa.cmake; selected at run time only when the CPU has AVX2. */
#include "src/compute/qgemm/ukernel.h"

#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

static inline __m256i bcast_a(const unsigned char* p) {
  int64_t v;
  memcpy(&v, p, sizeof v);
  return _mm256_set1_epi64x(v);
}

static inline void store_row(int32_t* c, const __m256i* acc, int add) {
  /* hadd: [c0 c1 c4 c5 | c2 c3 c6 c7]; the permute puts columns in order. */
  __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[0], acc[1]), 0xD8);
  if (add) s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i*)c));
  _mm256_storeu_si256((__m256i*)c, s);
}

#define GT_FN pc_qs8_gemm_ukernel__avx2_6x8
#define GT_MR 6
#define GT_NRV 2
#define GT_A_STEP 8
#define GT_B_STEP 32
#define GT_VEC __m256i
#define GT_ZERO() _mm256_setzero_si256()
#define GT_BCAST_A(p) bcast_a(p)
#define GT_LOAD_B(p) _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(const void*)(p)))
#define GT_DOT(acc, x, y) _mm256_add_epi32((acc), _mm256_madd_epi16((x), (y)))
#define GT_STORE_ROW(cp, acc, add) store_row((cp), (acc), (add))
#include "src/compute/qgemm/ukernel_tmpl.h"

#else
typedef int pc_qs8_avx2_unavailable; /* not an empty translation unit */
#endif
