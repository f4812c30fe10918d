/* float32 matrix transpose (pterun/compute.h): 4 x 4 blocks through SSE
 * unpacks, the edges in plain loops. Used for the layout changes of float32
 * convolutions (a narrow NCHW depthwise convolution run in NHWC). */
#include <stddef.h>
#include <stdint.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"

#if defined(__SSE2__)
#include <xmmintrin.h>

static void transpose_4x4(const float* s, int64_t srs, float* d, int64_t drs) {
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + srs);
  __m128 r2 = _mm_loadu_ps(s + 2 * srs), r3 = _mm_loadu_ps(s + 3 * srs);
  __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpackhi_ps(r0, r1);
  __m128 t2 = _mm_unpacklo_ps(r2, r3), t3 = _mm_unpackhi_ps(r2, r3);
  _mm_storeu_ps(d, _mm_movelh_ps(t0, t2));
  _mm_storeu_ps(d + drs, _mm_movehl_ps(t2, t0));
  _mm_storeu_ps(d + 2 * drs, _mm_movelh_ps(t1, t3));
  _mm_storeu_ps(d + 3 * drs, _mm_movehl_ps(t3, t1));
}
#endif

void pterun_compute_f32_transpose(int64_t rows, int64_t cols, const float* src, int64_t src_rs,
                                  float* dst, int64_t dst_rs) {
  int64_t i0 = 0, i, j;
  if (rows <= 0 || cols <= 0 || src == NULL || dst == NULL) return;
#if defined(__SSE2__)
  /* As the byte transpose: the SSE4.1 bit stands for "SIMD allowed". */
  if ((pterun_cpu_features() & PTERUN_CPU_X86_SSE4_1) != 0) {
    /* Bands of 16 source columns (16 destination rows) over every source
     * row: the destination rows a band writes stay in L1 (a 64 x 125
     * transpose: 1.73 -> 1.46 us). With a destination stride of a multiple
     * of 4 KiB those 16 part-written rows share one L1 set (8 ways) and
     * evict each other: a 4096 x 32 transpose (an NHWC 64x64x32 image back
     * to NCHW) ran at 11 GB/s against 52 the other way. There, whole
     * 16 x 16 tiles go through a buffer in L1 and each destination line is
     * written in one go (91 -> 38 us); other strides keep the direct
     * blocks, which the extra copy slowed by a third. */
    const int aliased = dst_rs % 1024 == 0;
    const int64_t r4 = rows / 4 * 4, c4 = cols / 4 * 4;
    _Alignas(64) float tile[16 * 16];
    for (int64_t jb = 0; jb < c4; jb += 16) {
      const int64_t je = jb + 16 < c4 ? jb + 16 : c4;
      for (i0 = 0; i0 < r4; i0 += 4) {
        if (aliased && je - jb == 16 && i0 % 16 == 0 && i0 + 16 <= r4) {
          for (int64_t a = 0; a < 16; a += 4)
            for (int64_t b = 0; b < 16; b += 4)
              transpose_4x4(src + (i0 + a) * src_rs + jb + b, src_rs, tile + b * 16 + a, 16);
          for (int64_t b = 0; b < 16; ++b) {
            float* d = dst + (jb + b) * dst_rs + i0;
            const float* t = tile + b * 16;
            _mm_storeu_ps(d, _mm_load_ps(t));
            _mm_storeu_ps(d + 4, _mm_load_ps(t + 4));
            _mm_storeu_ps(d + 8, _mm_load_ps(t + 8));
            _mm_storeu_ps(d + 12, _mm_load_ps(t + 12));
          }
          i0 += 12; /* the tile's 16 rows */
          continue;
        }
        for (int64_t j0 = jb; j0 < je; j0 += 4)
          transpose_4x4(src + i0 * src_rs + j0, src_rs, dst + j0 * dst_rs + i0, dst_rs);
      }
    }
    i0 = r4;
    for (i = 0; i < i0; ++i)
      for (j = cols / 4 * 4; j < cols; ++j) dst[j * dst_rs + i] = src[i * src_rs + j];
  }
#endif
  for (j = 0; j < cols; ++j)
    for (i = i0; i < rows; ++i) dst[j * dst_rs + i] = src[i * src_rs + j];
}
