/* Byte matrix transpose (pterun/compute.h): 16 x 16 blocks through four
 * rounds of SSE2 unpacks (bytes, words, dwords, qwords), the edges in plain
 * loops. Used for the int8 layout changes of convolutions (NCHW input to a
 * padded channels-last copy, the GEMM's row-major tiles to NCHW output). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"

#if defined(__SSE2__)
#include <emmintrin.h>

static void transpose_16x16(const uint8_t* s, int64_t srs, uint8_t* d, int64_t drs) {
  __m128i a[16], b[16];
  int i, g, h, c;
  for (i = 0; i < 16; ++i) a[i] = _mm_loadu_si128((const __m128i*)(const void*)(s + i * srs));
  /* b[2p], b[2p + 1]: rows 2p, 2p + 1 interleaved, columns 0-7, 8-15. */
  for (i = 0; i < 8; ++i) {
    b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  /* a[4g + q]: rows 4g..4g+3 of columns 4q..4q+3 (4 bytes per column). */
  for (g = 0; g < 4; ++g) {
    a[4 * g] = _mm_unpacklo_epi16(b[4 * g], b[4 * g + 2]);
    a[4 * g + 1] = _mm_unpackhi_epi16(b[4 * g], b[4 * g + 2]);
    a[4 * g + 2] = _mm_unpacklo_epi16(b[4 * g + 1], b[4 * g + 3]);
    a[4 * g + 3] = _mm_unpackhi_epi16(b[4 * g + 1], b[4 * g + 3]);
  }
  /* b[8h + p]: rows 8h..8h+7 of columns 2p, 2p + 1 (8 bytes per column). */
  for (h = 0; h < 2; ++h)
    for (c = 0; c < 4; ++c) {
      b[8 * h + 2 * c] = _mm_unpacklo_epi32(a[4 * (2 * h) + c], a[4 * (2 * h + 1) + c]);
      b[8 * h + 2 * c + 1] = _mm_unpackhi_epi32(a[4 * (2 * h) + c], a[4 * (2 * h + 1) + c]);
    }
  for (c = 0; c < 8; ++c) {
    _mm_storeu_si128((__m128i*)(void*)(d + (2 * c) * drs), _mm_unpacklo_epi64(b[c], b[8 + c]));
    _mm_storeu_si128((__m128i*)(void*)(d + (2 * c + 1) * drs), _mm_unpackhi_epi64(b[c], b[8 + c]));
  }
}
#endif

void pterun_compute_u8_transpose(int64_t rows, int64_t cols, const uint8_t* src, int64_t src_rs,
                                 uint8_t* dst, int64_t dst_rs) {
  int64_t i0 = 0, i, j;
  if (rows <= 0 || cols <= 0 || src == NULL || dst == NULL) return;
#if defined(__SSE2__)
  /* The SSE4.1 bit stands for "SIMD allowed": PTERUN_ISA_MASK=0 runs the
   * plain loops the blocks are tested against. */
  if ((pterun_cpu_features() & PTERUN_CPU_X86_SSE4_1) != 0) {
    /* Edge blocks (h rows or w columns under 16) go through a zero-padded
     * 16 x 16 copy: a block's price instead of a byte loop over the edge
     * (a channel count or a plane of 49 or 196 pixels leaves one in every
     * int8 layout change; the byte loops were a third of the transposes'
     * time on an int8 MobileNetV2). */
    for (i0 = 0; i0 < rows; i0 += 16)
      for (int64_t j0 = 0; j0 < cols; j0 += 16) {
        const int64_t h = rows - i0 < 16 ? rows - i0 : 16, w = cols - j0 < 16 ? cols - j0 : 16;
        const uint8_t* s = src + i0 * src_rs + j0;
        uint8_t* d = dst + j0 * dst_rs + i0;
        if (h == 16 && w == 16) {
          transpose_16x16(s, src_rs, d, dst_rs);
          continue;
        }
        uint8_t a[256] = {0}, b[256];
        for (i = 0; i < h; ++i) memcpy(a + 16 * i, s + i * src_rs, (size_t)w);
        transpose_16x16(a, 16, b, 16);
        for (j = 0; j < w; ++j) memcpy(d + j * dst_rs, b + 16 * j, (size_t)h);
      }
    return;
  }
#endif
  /* Without SIMD: column by column, so the stores run. */
  for (j = 0; j < cols; ++j)
    for (i = i0; i < rows; ++i) dst[j * dst_rs + i] = src[i * src_rs + j];
}
