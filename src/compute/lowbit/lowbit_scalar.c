/* Low-bit linear microkernel in portable C: the reference every SIMD
 * variant is tested against, and the fallback on every CPU. */
#include "src/compute/lowbit/ukernel.h"

void pc_lowbit_dot__scalar(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                           int64_t dot[8]) {
  int8_t codes[128];
  int64_t c;
  int col, j;
  for (col = 0; col < 8; ++col) dot[col] = 0;
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    pterun_compute_lowbit_unpack(nbit, 128, w, codes);
    for (col = 0; col < 8; ++col) {
      int32_t acc = 0; /* 16 products: |acc| <= 2^18 */
      for (j = 0; j < 8; ++j) acc += (int32_t)qa[j] * codes[col * 8 + j];
      for (j = 0; j < 8; ++j) acc += (int32_t)qa[8 + j] * codes[64 + col * 8 + j];
      dot[col] += acc;
    }
  }
}

void pc_lowbit_tile__scalar(const pterun_compute_lowbit_weights* w, const uint8_t* t,
                            const pterun_compute_lowbit_qrow* row, float out[8]) {
  pc_lowbit_tile_generic(pc_lowbit_dot__scalar, w, t, row, out);
}

void pc_lowbit_tile__scalar_many(const pterun_compute_lowbit_weights* w, const uint8_t* t,
                                 const pterun_compute_lowbit_qrow* row, float* out, size_t n) {
  pc_lowbit_tiles_each(pc_lowbit_tile__scalar, w, t, row, out, n);
}
