/* int8 GEMM microkernel for AVX-512 VNNI: 8 x 32 tile. vpdpbusd multiplies 4
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

/* One row's 16 sums (zsum already taken off) requantised: the separate
 * epilogue's float operations in its order (qs8_epi_avx512.c), the same
 * codes, narrowed to 16 bytes. */
static inline __m128i requant_row16(__m512i v, __m512 sc, __m512 bi, __m512 inv, __m512 zpo,
                                    __m512 qlo, __m512 qhi) {
  const __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), sc), bi);
  return pc_qs8_requant16(y, inv, zpo, qlo, qhi);
}

/* The indirect entry with the epilogue in registers (ukernel.h): the sums
 * start at -zsum (int32 addition wraps the same in any order, so the
 * finished sums are fn##_ig's minus zsum bit for bit), then each valid row's
 * 32 columns are requantised and stored under a byte mask. No int32 tile
 * is written: for the short K of a mobile network's 1x1 convolutions
 * (16-96 channels) that store, its reload and the zsum subtraction were a
 * third of the layer. */
static inline __attribute__((always_inline)) void igq_body(
    size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows, const void* b,
    const pterun_compute_qs8_rq* rq, uint8_t* c, size_t ldc, size_t mrows, size_t ncols,
    const int flip) {
  __m512i acc[8][2];
  const __m512i z0 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(rq->zsum));
  const __m512i z1 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(rq->zsum + 16));
  int i;
  PC_QS8_UNROLL
  for (i = 0; i < 8; ++i) acc[i][0] = z0, acc[i][1] = z1;
  pc_qs8_gemm_ukernel__avx512vnni_8x32_ig_sums(nseg, seg, rows, b, acc, flip);
  const __m512 sc0 = _mm512_loadu_ps(rq->sc), sc1 = _mm512_loadu_ps(rq->sc + 16);
  const __m512 bi0 = _mm512_loadu_ps(rq->bi), bi1 = _mm512_loadu_ps(rq->bi + 16);
  const __m512 inv = _mm512_set1_ps(rq->inv), zpo = _mm512_set1_ps(rq->zpo);
  const __m512 qlo = _mm512_set1_ps(rq->qlo), qhi = _mm512_set1_ps(rq->qhi);
  const __mmask64 keep = ncols >= 32 ? (__mmask64)0xffffffffu : (((__mmask64)1 << ncols) - 1);
  PC_QS8_UNROLL
  for (i = 0; i < 8; ++i) {
    if ((size_t)i >= mrows) break;
    const __m128i q0 = requant_row16(acc[i][0], sc0, bi0, inv, zpo, qlo, qhi);
    const __m128i q1 = requant_row16(acc[i][1], sc1, bi1, inv, zpo, qlo, qhi);
    const __m512i q = _mm512_inserti32x4(_mm512_castsi128_si512(q0), q1, 1);
    _mm512_mask_storeu_epi8(c + (size_t)i * ldc, keep, q);
  }
}

void pc_qs8_gemm_ukernel__avx512vnni_8x32_igq(size_t nseg, const pterun_compute_qs8_seg* seg,
                                              const uint8_t* const* rows, const void* b,
                                              const pterun_compute_qs8_rq* rq, uint8_t* c,
                                              size_t ldc, size_t mrows, size_t ncols,
                                              int a_signed) {
  if (a_signed)
    igq_body(nseg, seg, rows, b, rq, c, ldc, mrows, ncols, 1);
  else
    igq_body(nseg, seg, rows, b, rq, c, ldc, mrows, ncols, 0);
}

#else
typedef int pc_qs8_avx512vnni_unavailable; /* not an empty translation unit */
#endif
