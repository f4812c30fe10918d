/* Low-bit linear microkernel for AArch64 NEON with the dot-product
 * extension (sdot: int8 x int8 quads into int32 lanes, signed on both sides,
 * so codes need no bias except the 4-bit nibbles). Built with
 * -march=armv8.2-a+dotprod by src/compute/isa.cmake on aarch64; selected at
 * run time only when pterun_cpu_features() reports ASIMDDP. The column
 * layout is dot_tmpl.h's (16-byte vectors): lane i of a vector loaded at
 * byte b covers bytes b + 4i .. b + 4i + 3. */
#include "src/compute/lowbit/ukernel.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>
#include <string.h>

static int8x16_t act(const int8_t* qa8) {
  int64_t h;
  memcpy(&h, qa8, 8);
  return vreinterpretq_s8_s64(vdupq_n_s64(h));
}

/* 4 bits: nibbles u = code + 8 (0..15, non-negative as int8), then
 * dot = sum(u * a) - 8 * sum(a). */
static void dot4(const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
  static const int col_lo[4] = {0, 1, 4, 5}, col_hi[4] = {2, 3, 6, 7};
  const uint8x16_t mask = vdupq_n_u8(0x0f);
  int32x4_t lo[2], hi[2];
  int32_t l[4], h[4];
  int64_t c, asum = 0;
  int i, s, off;
  for (s = 0; s < 2; ++s) lo[s] = hi[s] = vdupq_n_s32(0);
  for (c = 0; c < chunks; ++c, w += 64, qa += 16) {
    const int8x16_t a0 = act(qa), a1 = act(qa + 8);
    for (off = 0; off < 64; off += 16) {
      const uint8x16_t x = vld1q_u8(w + off);
      const int8x16_t a = off < 32 ? a0 : a1;
      s = (off % 32) / 16;
      lo[s] = vdotq_s32(lo[s], vreinterpretq_s8_u8(vandq_u8(x, mask)), a);
      hi[s] = vdotq_s32(hi[s], vreinterpretq_s8_u8(vshrq_n_u8(x, 4)), a);
    }
    for (i = 0; i < 16; ++i) asum += qa[i];
    /* int32 lanes grow by at most 2 * 4 * 15 * 128 per chunk */
    if ((c & 16383) == 16383 || c + 1 == chunks)
      for (s = 0; s < 2; ++s) {
        vst1q_s32(l, lo[s]);
        vst1q_s32(h, hi[s]);
        for (i = 0; i < 4; ++i) {
          dot[col_lo[(s * 16 + 4 * i) / 8]] += l[i];
          dot[col_hi[(s * 16 + 4 * i) / 8]] += h[i];
        }
        lo[s] = hi[s] = vdupq_n_s32(0);
      }
  }
  for (i = 0; i < 8; ++i) dot[i] -= 8 * asum;
}

/* Other widths: signed codes (8 bits: the bytes as they are; else unpacked)
 * times the activations; code g is column (g % 64) / 8. */
static void dot_codes(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                      int64_t dot[8]) {
  int32x4_t acc[4];
  int8_t codes[128];
  int32_t l[4];
  int64_t c;
  int i, s, g;
  for (s = 0; s < 4; ++s) acc[s] = vdupq_n_s32(0);
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    const int8x16_t a0 = act(qa), a1 = act(qa + 8);
    const int8_t* src = (const int8_t*)w;
    if (nbit != 8) {
      pterun_compute_lowbit_unpack(nbit, 128, w, codes);
      src = codes;
    }
    for (g = 0; g < 128; g += 16)
      acc[(g % 64) / 16] = vdotq_s32(acc[(g % 64) / 16], vld1q_s8(src + g), g < 64 ? a0 : a1);
    /* int32 lanes grow by at most 2 * 4 * 128 * 128 per chunk */
    if ((c & 4095) == 4095 || c + 1 == chunks)
      for (s = 0; s < 4; ++s) {
        vst1q_s32(l, acc[s]);
        for (i = 0; i < 4; ++i) dot[(s * 16 + 4 * i) / 8] += l[i];
        acc[s] = vdupq_n_s32(0);
      }
  }
}

void pc_lowbit_dot__neondot(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                            int64_t dot[8]) {
  int i;
  for (i = 0; i < 8; ++i) dot[i] = 0;
  if (nbit == 4)
    dot4(w, qa, chunks, dot);
  else
    dot_codes(nbit, w, qa, chunks, dot);
}

void pc_lowbit_tile__neondot(const pterun_compute_lowbit_weights* w, const uint8_t* t,
                             const pterun_compute_lowbit_qrow* row, float out[8]) {
  pc_lowbit_tile_generic(pc_lowbit_dot__neondot, w, t, row, out);
}

#else
typedef int pc_lowbit_neondot_unavailable; /* not an empty translation unit */
#endif
