/* The f32 range scan of libpterun_compute (pterun_compute_f32_minmax): the
 * per-ISA variants (internal). */
#ifndef PTERUN_SRC_COMPUTE_MINMAX_MINMAX_H_
#define PTERUN_SRC_COMPUTE_MINMAX_MINMAX_H_

#include <stddef.h>

#include "src/compute/internal.h"

/* pterun_compute_f32_minmax's contract, one variant. */
typedef void (*pc_minmax_fn)(const float* x, size_t n, float* min, float* max);

void pc_f32_minmax__portable(const float* x, size_t n, float* min, float* max);
void pc_f32_minmax__avx2(const float* x, size_t n, float* min, float* max);
void pc_f32_minmax__avx512f(const float* x, size_t n, float* min, float* max);

/* The scalar step every variant ends with (its tail) and the portable
 * variant is made of: an element replaces a bound only when strictly
 * beyond it, so a NaN element never enters and a NaN bound stays. */
static inline void pc_minmax_step(float v, float* lo, float* hi) {
  *lo = v < *lo ? v : *lo;
  *hi = v > *hi ? v : *hi;
}

/* Which of two equal zeros a scan keeps depends on the order it meets them
 * in (lanes, unrolling): every variant returns +0 for a zero bound. NaN and
 * every other value keep their bits. */
static inline float pc_minmax_zero(float v) {
  return v == 0.0f ? 0.0f : v;
}

#endif
