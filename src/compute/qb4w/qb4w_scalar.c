/* 4-bit blockwise linear microkernel in portable C: the reference every SIMD
 * variant is tested against bit for bit, and the fallback on every CPU. */
#include <string.h>

#include "src/compute/qb4w/ukernel.h"

static float scale_at(const pterun_compute_qb4w_weights* w, const uint8_t* s, int64_t i) {
  float f;
  if (w->scales_bf16) {
    uint16_t h;
    uint32_t b;
    memcpy(&h, s + 2 * i, 2);
    b = (uint32_t)h << 16;
    memcpy(&f, &b, 4);
  } else {
    memcpy(&f, s + 4 * i, 4);
  }
  return f;
}

void pc_qb4w_tiles__scalar(const pterun_compute_qb4w_weights* w, const uint8_t* tiles,
                           size_t ntiles, const int8_t* qa, const int32_t* asum8, float a_scale,
                           int32_t a_zero, float* out) {
  const int64_t blocks = w->k / w->block, chunks = w->block / 8;
  const float zf = (float)a_zero;
  size_t t;
  (void)asum8; /* the signed codes' products need no correction here */
  for (t = 0; t < ntiles; ++t) {
    const uint8_t* p = tiles + t * w->tile_bytes;
    const uint8_t* sc = p + pc_qb4w_scales_offset(w);
    const uint8_t* kz = p + pc_qb4w_kz_offset(w);
    int c;
    for (c = 0; c < PC_QB4W_COLS; ++c) {
      float acc = 0.0f, kzc, y;
      int64_t g, j;
      for (g = 0; g < blocks; ++g) {
        const uint8_t* cw = p + (uint64_t)g * (uint64_t)w->block * 8u + 4u * (unsigned)c;
        const int8_t* a = qa + g * w->block;
        int32_t s = 0; /* |s| <= 65536 * 8 * 128: no overflow */
        int i;
        for (j = 0; j < chunks; ++j, cw += 64, a += 8)
          for (i = 0; i < 4; ++i) {
            s += (int32_t)a[i] * ((int32_t)(cw[i] & 15) - 8);
            s += (int32_t)a[4 + i] * ((int32_t)(cw[i] >> 4) - 8);
          }
        acc = acc + scale_at(w, sc + (uint64_t)g * 16u * (w->scales_bf16 ? 2u : 4u), c) * (float)s;
      }
      memcpy(&kzc, kz + 4 * c, 4);
      y = (acc - zf * kzc) * a_scale;
      if (w->has_bias) {
        float b;
        memcpy(&b, kz + 64 + 4 * c, 4);
        y = y + b;
      }
      out[t * PC_QB4W_COLS + (size_t)c] = y;
    }
  }
}
