/* The int8 GEMM epilogue's int32 path for AVX-512F: the AVX2 row loop
 * (qs8_avx2.c) 16 columns at a time, the same float operations in the same
 * order and requant.h's rounding instruction (the same bits), then 8 at a
 * time with the AVX2 loop's operations.
 * The narrowing is a truncating vpmovdb of values already clamped to the
 * output range. Built with -mavx512f by src/compute/isa.cmake (and against
 * SIMDe in the emulated test build); selected at run time only when the CPU
 * has AVX-512F. */
#include "src/compute/qgemm/requant.h"
#include "src/compute/qgemm/ukernel.h"

#if defined(__AVX512F__) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

int64_t pc_qs8_epilogue_rows_avx512(const int32_t* acc, int64_t acc_rs, int64_t rows,
                                    const pc_qs8_epi_row* e, int64_t cols, void* dst,
                                    int64_t dst_rs) {
  /* Locals, not e->: the stores through dst may alias anything. */
  const int32_t* zsum = e->zsum;
  const float *sc = e->sc, *bi = e->bi;
  const int64_t wide = cols / 16 * 16;
  const int64_t done = cols / 8 * 8;
  int64_t r, j;
  if (e->f32) {
    const __m512 fmin = _mm512_set1_ps(e->f_min), fmax = _mm512_set1_ps(e->f_max);
    for (r = 0; r < rows; ++r) {
      const int32_t* ar = acc + r * acc_rs;
      float* out = (float*)(void*)((uint8_t*)dst + r * dst_rs);
      for (j = 0; j < wide; j += 16) {
        const __m512i v = _mm512_sub_epi32(_mm512_loadu_si512((const void*)(ar + j)),
                                           _mm512_loadu_si512((const void*)(zsum + j)));
        const __m512 y = _mm512_add_ps(
            _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_loadu_ps(sc + j)), _mm512_loadu_ps(bi + j));
        _mm512_storeu_ps(out + j, _mm512_min_ps(fmax, _mm512_max_ps(fmin, y)));
      }
      for (; j < done; j += 8) {
        const __m256i v =
            _mm256_sub_epi32(_mm256_loadu_si256((const __m256i*)(const void*)(ar + j)),
                             _mm256_loadu_si256((const __m256i*)(const void*)(zsum + j)));
        const __m256 y = _mm256_add_ps(
            _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(sc + j)), _mm256_loadu_ps(bi + j));
        _mm256_storeu_ps(out + j, _mm256_min_ps(_mm256_set1_ps(e->f_max),
                                                _mm256_max_ps(_mm256_set1_ps(e->f_min), y)));
      }
    }
    return done;
  }
  const __m512 vinv = _mm512_set1_ps(e->inv), vzp = _mm512_set1_ps(e->zpo);
  const __m512 vlo = _mm512_set1_ps(e->qlo), vhi = _mm512_set1_ps(e->qhi);
  const int u8 = e->u8;
  for (r = 0; r < rows; ++r) {
    const int32_t* ar = acc + r * acc_rs;
    uint8_t* out = (uint8_t*)dst + r * dst_rs;
    for (j = 0; j < wide; j += 16) {
      const __m512i v = _mm512_sub_epi32(_mm512_loadu_si512((const void*)(ar + j)),
                                         _mm512_loadu_si512((const void*)(zsum + j)));
      const __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_loadu_ps(sc + j)),
                                     _mm512_loadu_ps(bi + j));
      __m512 t = _mm512_add_ps(vzp, _mm512_roundscale_ps(_mm512_mul_ps(y, vinv), PC_QS8_RNE_ROUND));
      t = _mm512_min_ps(_mm512_max_ps(t, vlo), vhi);
      /* t lies in [q_min, q_max], inside the output type: truncation is exact */
      _mm_storeu_si128((__m128i*)(void*)(out + j), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)));
    }
    for (; j < done; j += 8) {
      const __m256i v =
          _mm256_sub_epi32(_mm256_loadu_si256((const __m256i*)(const void*)(ar + j)),
                           _mm256_loadu_si256((const __m256i*)(const void*)(zsum + j)));
      const __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(sc + j)),
                                     _mm256_loadu_ps(bi + j));
      __m256 t = _mm256_add_ps(
          _mm512_castps512_ps256(vzp),
          _mm256_round_ps(_mm256_mul_ps(y, _mm512_castps512_ps256(vinv)), PC_QS8_RNE_ROUND));
      t = _mm256_min_ps(_mm256_max_ps(t, _mm512_castps512_ps256(vlo)), _mm512_castps512_ps256(vhi));
      const __m256i q = _mm256_cvttps_epi32(t);
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      _mm_storel_epi64((__m128i*)(void*)(out + j),
                       u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
    }
  }
  return done;
}

#else
typedef int pc_qs8_epi_avx512_unavailable; /* not an empty translation unit */
#endif
