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

/* Eight source rows by 16 columns to the first (or second) 8 bytes of 16
 * destination rows: three rounds of unpacks (bytes, words, dwords) on 8
 * registers. Halves, not a whole 16 x 16 block at once: 16 rows plus their
 * temporaries overflow SSE2's 16 registers and the compiler spilled every
 * round to the stack (23 % of an int8 MobileNetV2's time was this block). */
static void transpose_8x16(const uint8_t* s, int64_t srs, uint8_t* d, int64_t drs) {
  /* Written out: with arrays and loops the compiler kept the rounds in
   * memory. */
#define T8_ROW(i) _mm_loadu_si128((const __m128i*)(const void*)(s + (i) * srs))
  const __m128i r0 = T8_ROW(0), r1 = T8_ROW(1), r2 = T8_ROW(2), r3 = T8_ROW(3);
  const __m128i r4 = T8_ROW(4), r5 = T8_ROW(5), r6 = T8_ROW(6), r7 = T8_ROW(7);
#undef T8_ROW
  /* Rows 2p, 2p + 1 interleaved: columns 0-7 (a), 8-15 (b). */
  const __m128i a01 = _mm_unpacklo_epi8(r0, r1), b01 = _mm_unpackhi_epi8(r0, r1);
  const __m128i a23 = _mm_unpacklo_epi8(r2, r3), b23 = _mm_unpackhi_epi8(r2, r3);
  const __m128i a45 = _mm_unpacklo_epi8(r4, r5), b45 = _mm_unpackhi_epi8(r4, r5);
  const __m128i a67 = _mm_unpacklo_epi8(r6, r7), b67 = _mm_unpackhi_epi8(r6, r7);
  /* cH_Q: rows 4H..4H+3 of columns 4Q..4Q+3 (4 bytes per column). */
  const __m128i c0_0 = _mm_unpacklo_epi16(a01, a23), c0_1 = _mm_unpackhi_epi16(a01, a23);
  const __m128i c0_2 = _mm_unpacklo_epi16(b01, b23), c0_3 = _mm_unpackhi_epi16(b01, b23);
  const __m128i c1_0 = _mm_unpacklo_epi16(a45, a67), c1_1 = _mm_unpackhi_epi16(a45, a67);
  const __m128i c1_2 = _mm_unpacklo_epi16(b45, b67), c1_3 = _mm_unpackhi_epi16(b45, b67);
  /* Columns 4Q..4Q+3, rows 0-7 (8 bytes per column), two per register. */
#define T8_COLS(q, c0, c1)                                                                         \
  do {                                                                                             \
    const __m128i lo = _mm_unpacklo_epi32(c0, c1), hi = _mm_unpackhi_epi32(c0, c1);                \
    _mm_storel_epi64((__m128i*)(void*)(d + (4 * (q)) * drs), lo);                                  \
    _mm_storeh_pi((__m64*)(void*)(d + (4 * (q) + 1) * drs), _mm_castsi128_ps(lo));                 \
    _mm_storel_epi64((__m128i*)(void*)(d + (4 * (q) + 2) * drs), hi);                              \
    _mm_storeh_pi((__m64*)(void*)(d + (4 * (q) + 3) * drs), _mm_castsi128_ps(hi));                 \
  } while (0)
  T8_COLS(0, c0_0, c1_0);
  T8_COLS(1, c0_1, c1_1);
  T8_COLS(2, c0_2, c1_2);
  T8_COLS(3, c0_3, c1_3);
#undef T8_COLS
}

/* Sixteen source rows by 8 columns to 8 destination rows of 16 bytes: four
 * rounds of unpacks (bytes, words, dwords, qwords). */
static void transpose_16x8(const uint8_t* s, int64_t srs, uint8_t* d, int64_t drs) {
#define T16_ROWS(i)                                                                                \
  _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i*)(const void*)(s + (i) * srs)),                 \
                    _mm_loadl_epi64((const __m128i*)(const void*)(s + ((i) + 1) * srs)))
  /* Rows 2p, 2p + 1 interleaved, columns 0-7. */
  const __m128i a0 = T16_ROWS(0), a1 = T16_ROWS(2), a2 = T16_ROWS(4), a3 = T16_ROWS(6);
  const __m128i a4 = T16_ROWS(8), a5 = T16_ROWS(10), a6 = T16_ROWS(12), a7 = T16_ROWS(14);
#undef T16_ROWS
  /* bG_lo / bG_hi: rows 4G..4G+3 of columns 0-3 / 4-7 (4 bytes per column). */
  const __m128i b0_lo = _mm_unpacklo_epi16(a0, a1), b0_hi = _mm_unpackhi_epi16(a0, a1);
  const __m128i b1_lo = _mm_unpacklo_epi16(a2, a3), b1_hi = _mm_unpackhi_epi16(a2, a3);
  const __m128i b2_lo = _mm_unpacklo_epi16(a4, a5), b2_hi = _mm_unpackhi_epi16(a4, a5);
  const __m128i b3_lo = _mm_unpacklo_epi16(a6, a7), b3_hi = _mm_unpackhi_epi16(a6, a7);
  /* Rows 0-7 and 8-15 of columns 2q, 2q + 1 (8 bytes per column), then the
   * two halves of each column joined into one destination row. */
#define T16_COLS(q, lo_or_hi, top_a, top_b, bot_a, bot_b)                                          \
  do {                                                                                             \
    const __m128i top = _mm_unpack##lo_or_hi##_epi32(top_a, top_b);                                \
    const __m128i bot = _mm_unpack##lo_or_hi##_epi32(bot_a, bot_b);                                \
    _mm_storeu_si128((__m128i*)(void*)(d + (2 * (q)) * drs), _mm_unpacklo_epi64(top, bot));        \
    _mm_storeu_si128((__m128i*)(void*)(d + (2 * (q) + 1) * drs), _mm_unpackhi_epi64(top, bot));    \
  } while (0)
  T16_COLS(0, lo, b0_lo, b1_lo, b2_lo, b3_lo);
  T16_COLS(1, hi, b0_lo, b1_lo, b2_lo, b3_lo);
  T16_COLS(2, lo, b0_hi, b1_hi, b2_hi, b3_hi);
  T16_COLS(3, hi, b0_hi, b1_hi, b2_hi, b3_hi);
#undef T16_COLS
}

typedef void (*pc_u8_block_fn)(const uint8_t* s, int64_t srs, uint8_t* d, int64_t drs);

/* An edge block: h x w (under bh x bw) through fn on a zero-padded copy, a
 * block's price instead of a byte loop over the edge (a channel count or a
 * plane of 49 or 196 pixels leaves one in every int8 layout change; the byte
 * loops were a third of the transposes' time on an int8 MobileNetV2). */
static void transpose_edge(const uint8_t* s, int64_t srs, uint8_t* d, int64_t drs, int64_t h,
                           int64_t w, int64_t bh, int64_t bw, pc_u8_block_fn fn) {
  uint8_t a[128] = {0}, b[128];
  int64_t i;
  for (i = 0; i < h; ++i) memcpy(a + bw * i, s + i * srs, (size_t)w);
  fn(a, bw, b, bh);
  for (i = 0; i < w; ++i) memcpy(d + i * drs, b + bh * i, (size_t)h);
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
    if (dst_rs > src_rs) {
      /* Destination rows far apart (an NCHW plane of 4096 bytes puts every
       * one in the same L1 set): 8 of them at a time, each written a whole
       * cache line (4 blocks) before the next 8. Sixteen at a time thrashed
       * a 12-way L1: 64 x 32 bytes into a 4096-byte stride took 994 ns,
       * 113 ns at a 4160-byte one. */
      for (int64_t j0 = 0; j0 < cols; j0 += 8)
        for (i0 = 0; i0 < rows; i0 += 16)
          if (rows - i0 >= 16 && cols - j0 >= 8)
            transpose_16x8(src + i0 * src_rs + j0, src_rs, dst + j0 * dst_rs + i0, dst_rs);
          else
            transpose_edge(src + i0 * src_rs + j0, src_rs, dst + j0 * dst_rs + i0, dst_rs,
                           rows - i0 < 16 ? rows - i0 : 16, cols - j0 < 8 ? cols - j0 : 8, 16, 8,
                           transpose_16x8);
    } else {
      /* Source rows far apart: 8 at a time, each read a whole line. */
      for (i0 = 0; i0 < rows; i0 += 8)
        for (int64_t j0 = 0; j0 < cols; j0 += 16)
          if (rows - i0 >= 8 && cols - j0 >= 16)
            transpose_8x16(src + i0 * src_rs + j0, src_rs, dst + j0 * dst_rs + i0, dst_rs);
          else
            transpose_edge(src + i0 * src_rs + j0, src_rs, dst + j0 * dst_rs + i0, dst_rs,
                           rows - i0 < 8 ? rows - i0 : 8, cols - j0 < 16 ? cols - j0 : 16, 8, 16,
                           transpose_8x16);
    }
    return;
  }
#endif
  /* Without SIMD: column by column, so the stores run. */
  for (j = 0; j < cols; ++j)
    for (i = i0; i < rows; ++i) dst[j * dst_rs + i] = src[i * src_rs + j];
}
