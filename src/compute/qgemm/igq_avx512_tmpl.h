/* The requantising indirect entry GT_FN##_igq (ukernel.h) of an AVX-512
 * VNNI int8 microkernel, included by qs8_avx512vnni.c after
 * ukernel_tmpl.h with the same GT_FN, GT_MR and GT_NRV (one or two
 * 16-column vectors). The sums start at -zsum (int32 addition wraps the same in
 * any order, so the finished sums are GT_FN##_ig's minus zsum bit for bit),
 * then each valid row's columns are requantised in registers, the separate
 * epilogue's float operations in its order (qs8_epi_avx512.c: the same
 * codes), and stored under a byte mask. No int32 tile is written: for the
 * short K of a mobile network's 1x1 convolutions (16-96 channels) that
 * store, its reload and the zsum subtraction were a third of the layer. */
#if GT_NRV < 1 || GT_NRV > 2
#error "igq_avx512_tmpl.h: GT_NRV must be 1 or 2"
#endif
#define GQ_CAT_(a, b) a##b
#define GQ_CAT(a, b) GQ_CAT_(a, b)

#ifndef PC_QS8_IGQ_ROW16
#define PC_QS8_IGQ_ROW16
/* One row's 16 sums requantised, narrowed to 16 bytes. */
static inline __m128i pc_qs8_igq_row16(__m512i v, __m512 sc, __m512 bi, __m512 inv, __m512 zpo,
                                       __m512 qlo, __m512 qhi) {
  const __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), sc), bi);
  return pc_qs8_requant16(y, inv, zpo, qlo, qhi);
}
#endif

static inline __attribute__((always_inline)) void GQ_CAT(GT_FN, _igq_body)(
    size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows, const void* b,
    const pterun_compute_qs8_rq* rq, uint8_t* c, size_t ldc, size_t mrows, size_t ncols,
    const int flip) {
  __m512i acc[GT_MR][GT_NRV], z[GT_NRV];
  __m512 sc[GT_NRV], bi[GT_NRV];
  int i, j;
  PC_QS8_UNROLL
  for (j = 0; j < GT_NRV; ++j)
    z[j] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(rq->zsum + 16 * j));
  PC_QS8_UNROLL
  for (i = 0; i < GT_MR; ++i) {
    PC_QS8_UNROLL
    for (j = 0; j < GT_NRV; ++j) acc[i][j] = z[j];
  }
  GQ_CAT(GT_FN, _ig_sums)(nseg, seg, rows, b, acc, flip);
  PC_QS8_UNROLL
  for (j = 0; j < GT_NRV; ++j) {
    sc[j] = _mm512_loadu_ps(rq->sc + 16 * j);
    bi[j] = _mm512_loadu_ps(rq->bi + 16 * j);
  }
  const __m512 inv = _mm512_set1_ps(rq->inv), zpo = _mm512_set1_ps(rq->zpo);
  const __m512 qlo = _mm512_set1_ps(rq->qlo), qhi = _mm512_set1_ps(rq->qhi);
  const __mmask64 keep =
      ncols >= 16 * GT_NRV ? (((__mmask64)1 << (16 * GT_NRV)) - 1) : (((__mmask64)1 << ncols) - 1);
  PC_QS8_UNROLL
  for (i = 0; i < GT_MR; ++i) {
    if ((size_t)i >= mrows) break;
    __m512i q =
        _mm512_castsi128_si512(pc_qs8_igq_row16(acc[i][0], sc[0], bi[0], inv, zpo, qlo, qhi));
#if GT_NRV > 1
    q = _mm512_inserti32x4(q, pc_qs8_igq_row16(acc[i][1], sc[1], bi[1], inv, zpo, qlo, qhi), 1);
#endif
    _mm512_mask_storeu_epi8(c + (size_t)i * ldc, keep, q);
  }
}

void GQ_CAT(GT_FN, _igq)(size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows,
                         const void* b, const pterun_compute_qs8_rq* rq, uint8_t* c, size_t ldc,
                         size_t mrows, size_t ncols, int a_signed) {
  if (a_signed)
    GQ_CAT(GT_FN, _igq_body)(nseg, seg, rows, b, rq, c, ldc, mrows, ncols, 1);
  else
    GQ_CAT(GT_FN, _igq_body)(nseg, seg, rows, b, rq, c, ldc, mrows, ncols, 0);
}

#undef GQ_CAT
#undef GQ_CAT_
