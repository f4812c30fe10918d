/* 4-bit blockwise linear microkernel for AArch64 NEON with the dot-product
 * extension (sdot: int8 quads into int32 lanes). A panel's 64-byte chunk is
 * four 16-byte vectors of 4 columns; the nibbles u = code + 8 (0..15, so
 * non-negative as int8) times a broadcast 4-byte activation group, then
 * t = sum(u * a) - 8 * sum(a) as on x86. Built with the dotprod flag by
 * src/compute/isa.cmake on aarch64; selected at run time only when
 * pterun_cpu_features() reports it. The float operations are the scalar
 * reference's, lane by lane (no fused multiply-add: -ffp-contract=off). */
#include "src/compute/qb4w/ukernel.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>
#include <string.h>

static inline int8x16_t act4(const int8_t* a) {
  int32_t v;
  memcpy(&v, a, 4);
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

static inline __attribute__((always_inline)) void body(const pterun_compute_qb4w_weights* w,
                                                       const uint8_t* tiles, size_t ntiles,
                                                       const int8_t* qa, const int32_t* asum8,
                                                       float a_scale, int32_t a_zero, float* out,
                                                       int64_t chunks, int bf16) {
  const int64_t blocks = w->k / w->block;
  const uint64_t soff = pc_qb4w_scales_offset(w), kzoff = pc_qb4w_kz_offset(w);
  const uint8x16_t mask = vdupq_n_u8(0x0f);
  const float32x4_t sa = vdupq_n_f32(a_scale), zf = vdupq_n_f32((float)a_zero);
  size_t t;
  for (t = 0; t < ntiles; ++t) {
    const uint8_t* p = tiles + t * w->tile_bytes;
    const uint8_t* sc = p + soff;
    const uint8_t* kz = p + kzoff;
    float32x4_t acc[4];
    int64_t g, j;
    int h;
    for (h = 0; h < 4; ++h) acc[h] = vdupq_n_f32(0.0f);
    for (g = 0; g < blocks; ++g) {
      const uint8_t* cw = p + (uint64_t)g * (uint64_t)chunks * 64u;
      const int8_t* a = qa + g * chunks * 8;
      const int32x4_t a8 = vdupq_n_s32(asum8[g]);
      int32x4_t d[4], e[4];
      for (h = 0; h < 4; ++h) d[h] = e[h] = vdupq_n_s32(0);
      for (j = 0; j < chunks; ++j, cw += 64, a += 8) {
        const int8x16_t a0 = act4(a), a1 = act4(a + 4);
        for (h = 0; h < 4; ++h) {
          const uint8x16_t x = vld1q_u8(cw + 16 * h);
          d[h] = vdotq_s32(d[h], vreinterpretq_s8_u8(vandq_u8(x, mask)), a0);
          e[h] = vdotq_s32(e[h], vreinterpretq_s8_u8(vshrq_n_u8(x, 4)), a1);
        }
      }
      for (h = 0; h < 4; ++h) {
        const float32x4_t s =
            bf16 ? vreinterpretq_f32_u32(
                       vshll_n_u16(vld1_u16((const uint16_t*)(const void*)(sc + (uint64_t)g * 32u +
                                                                           8u * (unsigned)h)),
                                   16))
                 : vld1q_f32(
                       (const float*)(const void*)(sc + (uint64_t)g * 64u + 16u * (unsigned)h));
        const int32x4_t tt = vsubq_s32(vaddq_s32(d[h], e[h]), a8);
        acc[h] = vaddq_f32(acc[h], vmulq_f32(s, vcvtq_f32_s32(tt)));
      }
    }
    for (h = 0; h < 4; ++h) {
      float32x4_t y = vmulq_f32(
          vsubq_f32(acc[h], vmulq_f32(zf, vld1q_f32((const float*)(const void*)(kz + 16 * h)))),
          sa);
      if (w->has_bias) y = vaddq_f32(y, vld1q_f32((const float*)(const void*)(kz + 64 + 16 * h)));
      vst1q_f32(out + t * PC_QB4W_COLS + 4u * (unsigned)h, y);
    }
  }
}

void pc_qb4w_tiles__neondot(const pterun_compute_qb4w_weights* w, const uint8_t* tiles,
                            size_t ntiles, const int8_t* qa, const int32_t* asum8, float a_scale,
                            int32_t a_zero, float* out) {
  const int64_t chunks = w->block / 8;
  if (chunks == 4 && w->scales_bf16)
    body(w, tiles, ntiles, qa, asum8, a_scale, a_zero, out, 4, 1);
  else if (w->scales_bf16)
    body(w, tiles, ntiles, qa, asum8, a_scale, a_zero, out, chunks, 1);
  else
    body(w, tiles, ntiles, qa, asum8, a_scale, a_zero, out, chunks, 0);
}

#else
typedef int pc_qb4w_neondot_unavailable; /* not an empty translation unit */
#endif
