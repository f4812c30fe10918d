/* 4-bit blockwise linear microkernel in portable C: the reference every SIMD
 * variant is tested against bit for bit, and the fallback on every CPU. */
#include <string.h>

#include "pterun/half.h"
#include "src/compute/qb4w/ukernel.h"

/* Scale i of a block's 16, as stored (bf16 or float32). */
static float scale_at(const pterun_compute_qb4w_weights* w, const uint8_t* s, int64_t i) {
  float f;
  if (w->scales_bf16) {
    uint16_t h;
    memcpy(&h, s + 2 * i, 2);
    return pterun_bf16_to_f32(h);
  }
  memcpy(&f, s + 4 * i, 4);
  return f;
}

void pc_qb4w_tiles__scalar(const pterun_compute_qb4w_weights* w, const uint8_t* tiles,
                           size_t ntiles, const int8_t* qa, const int32_t* asum8, float a_scale,
                           int32_t a_zero, float* out) {
  const int64_t blocks = w->k / w->block, chunks = w->block / 8;
  const float zf = (float)a_zero;
  const uint64_t sb = w->scales_bf16 ? 2u : 4u;
  size_t t;
  (void)asum8; /* the signed codes' products need no correction here */
  for (t = 0; t < ntiles; ++t) {
    const uint8_t* p = tiles + t * w->tile_bytes;
    const uint8_t* sc = p + pc_qb4w_scales_offset(w);
    const uint8_t* kz = p + pc_qb4w_kz_offset(w);
    float acc[PC_QB4W_COLS];
    int64_t g, j;
    int c;
    for (c = 0; c < PC_QB4W_COLS; ++c) acc[c] = 0.0f;
    for (g = 0; g < blocks; ++g) {
      /* a chunk's 64 bytes in order, every column's sum in s[] (|s| <=
       * 65536 * 8 * 128: no overflow) */
      int32_t s[PC_QB4W_COLS] = {0};
      const uint8_t* cw = p + (uint64_t)g * (uint64_t)chunks * 64u;
      const int8_t* a = qa + g * w->block;
      for (j = 0; j < chunks; ++j, cw += 64, a += 8)
        for (c = 0; c < PC_QB4W_COLS; ++c) {
          int i;
          for (i = 0; i < 4; ++i)
            s[c] += (int32_t)a[i] * ((int32_t)(cw[4 * c + i] & 15) - 8) +
                    (int32_t)a[4 + i] * ((int32_t)(cw[4 * c + i] >> 4) - 8);
        }
      for (c = 0; c < PC_QB4W_COLS; ++c)
        acc[c] = acc[c] + scale_at(w, sc + (uint64_t)g * 16u * sb, c) * (float)s[c];
    }
    for (c = 0; c < PC_QB4W_COLS; ++c) {
      float kzc, y;
      memcpy(&kzc, kz + 4 * c, 4);
      y = (acc[c] - zf * kzc) * a_scale;
      if (w->has_bias) {
        float b;
        memcpy(&b, kz + 64 + 4 * c, 4);
        y = y + b;
      }
      out[t * PC_QB4W_COLS + (size_t)c] = y;
    }
  }
}
