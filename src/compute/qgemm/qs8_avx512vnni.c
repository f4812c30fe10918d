/* int8 GEMM microkernels for AVX-512 VNNI: 8 x 32 tile (and 16 x 16 below). vpdpbusd multiplies 4
 * uint8 A values by 4 int8 B values and adds the 4 products to an int32 lane
 * (no saturation in this form), so each lane is one column: 16 accumulators, 2
 * B vectors and a broadcast. Built with -mavx512f -mavx512bw -mavx512vnni by
 * src/compute/isa.cmake; selected at run time only when the CPU has VNNI.
 * (The build machine of the first version had AVX2 only: tested against the
 * scalar reference only where a VNNI CPU runs tests/compute/test_qgemm.) */
#include "src/compute/qgemm/requant.h"
#include "src/compute/qgemm/ukernel.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#include <string.h>

static inline __m512i bcast_a(const unsigned char* p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

static inline void store_row(int32_t* c, const __m512i* acc, int add) {
  __m512i s0 = acc[0], s1 = acc[1];
  if (add) {
    s0 = _mm512_add_epi32(s0, _mm512_loadu_si512(c));
    s1 = _mm512_add_epi32(s1, _mm512_loadu_si512(c + 16));
  }
  _mm512_storeu_si512(c, s0);
  _mm512_storeu_si512(c + 16, s1);
}

#define GT_FN pc_qs8_gemm_ukernel__avx512vnni_8x32
#define GT_MR 8
#define GT_NRV 2
#define GT_A_STEP 4
#define GT_B_STEP 128
#define GT_VEC __m512i
#define GT_ZERO() _mm512_setzero_si512()
#define GT_BCAST_A(p) bcast_a(p)
#define GT_LOAD_B(p) _mm512_loadu_si512((const void*)(p))
#define GT_DOT(acc, x, y) _mm512_dpbusd_epi32((acc), (x), (y))
#define GT_BCAST_IG(p) bcast_a(p)
#define GT_FLIP(v) _mm512_xor_si512((v), _mm512_set1_epi32((int)0x80808080u))
#define GT_STORE_ROW(cp, acc, add) store_row((cp), (acc), (add))
#include "src/compute/qgemm/ukernel_tmpl.h"

#include "src/compute/qgemm/igq_avx512_tmpl.h"

/* 16 x 16 for products of at most 16 columns (a mobile network's
 * 32 -> 16 projection): one vector per row instead of a 32-wide tile half
 * of whose dot products and requantisations are discarded. The same sums
 * and epilogue: the same bits. */
static inline void store_row1(int32_t* c, const __m512i* acc, int add) {
  __m512i s0 = acc[0];
  if (add) s0 = _mm512_add_epi32(s0, _mm512_loadu_si512(c));
  _mm512_storeu_si512(c, s0);
}

#undef GT_FN
#undef GT_MR
#undef GT_NRV
#undef GT_B_STEP
#undef GT_STORE_ROW
#define GT_FN pc_qs8_gemm_ukernel__avx512vnni_16x16
#define GT_MR 16
#define GT_NRV 1
#define GT_B_STEP 64
#define GT_STORE_ROW(cp, acc, add) store_row1((cp), (acc), (add))
#include "src/compute/qgemm/ukernel_tmpl.h"
#include "src/compute/qgemm/igq_avx512_tmpl.h"

#else
typedef int pc_qs8_avx512vnni_unavailable; /* not an empty translation unit */
#endif
