/* The f32 range scan, portable: one element at a time, the reference every
 * SIMD variant must match bit for bit and what PTERUN_ISA_MASK=0 runs. */
#include "src/compute/minmax/minmax.h"

void pc_f32_minmax__portable(const float* x, size_t n, float* min, float* max) {
  float lo = *min, hi = *max;
  for (size_t i = 0; i < n; ++i) pc_minmax_step(x[i], &lo, &hi);
  *min = pc_minmax_zero(lo);
  *max = pc_minmax_zero(hi);
}
