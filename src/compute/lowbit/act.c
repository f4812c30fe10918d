/* Dynamic per-row int8 activation quantization, as torchao's universal
 * kernels do it (docs/lowbit.md, "Activation quantization"):
 *   scale = (max - min) / 255, zero = -128 - roundf(min / scale),
 *   inv = (float)(1.0 / ((double)scale + 1e-16)),
 *   q = clamp(nearbyint(fma(x, inv, zero)), -128, 127).
 * Two deliberate differences, both tested (tests/lowbit):
 *  - the zero point stays an int32: torchao stores it as int8, which wraps
 *    for single-sign rows (quantized-ops.md 6.5) and corrupts the row;
 *  - a constant row (min == max, where torchao divides 0 by 0) is quantized
 *    over [min(x, 0), max(x, 0)], which represents it exactly. */
#include <math.h>

#include "src/compute/lowbit/ukernel.h"

/* float -> int32 for values that may be huge or NaN (NaN gives lo). */
static int32_t clamp_to_i32(float f, float lo, float hi) {
  if (!(f >= lo)) return (int32_t)lo;
  if (f > hi) return (int32_t)hi;
  return (int32_t)f;
}

void pc_lowbit_act_qparams(const float* x, int64_t k, float* scale, int32_t* zero) {
  float vmin = x[0], vmax = x[0];
  int64_t i;
  for (i = 1; i < k; ++i) {
    if (x[i] < vmin) vmin = x[i];
    if (x[i] > vmax) vmax = x[i];
  }
  pc_lowbit_act_qparams_range(vmin, vmax, scale, zero);
}

void pc_lowbit_act_qparams_lanes(const float* lo, const float* hi, int lanes, const float* tail,
                                 int64_t n, float* scale, int32_t* zero) {
  float vmin = lo[0], vmax = hi[0];
  int64_t i;
  for (i = 1; i < lanes; ++i) {
    if (lo[i] < vmin) vmin = lo[i];
    if (hi[i] > vmax) vmax = hi[i];
  }
  for (i = 0; i < n; ++i) {
    if (tail[i] < vmin) vmin = tail[i];
    if (tail[i] > vmax) vmax = tail[i];
  }
  pc_lowbit_act_qparams_range(vmin, vmax, scale, zero);
}

void pc_lowbit_act_qparams_range(float vmin, float vmax, float* scale, int32_t* zero) {
  float s;
  if (!(vmin < vmax)) {
    if (vmin > 0.0f) vmin = 0.0f;
    if (vmax < 0.0f) vmax = 0.0f;
  }
  if (!(vmin < vmax)) { /* all zero (or NaN): every code is 0 */
    *scale = 0.0f;
    *zero = 0;
    return;
  }
  s = (vmax - vmin) / 255.0f;
  *scale = s;
  *zero = -128 - clamp_to_i32(roundf(vmin / s), -1073741824.0f, 1073741824.0f);
}

float pc_lowbit_act_inv(float scale) {
  return (float)(1.0 / ((double)scale + 1e-16));
}

void pc_lowbit_act_quantize(const float* x, int64_t count, float inv, int32_t zero, int8_t* q) {
  float zf = (float)zero;
  int64_t i;
  for (i = 0; i < count; ++i) {
    float v = fmaf(x[i], inv, zf);
    /* clamp before rounding (same result for finite values; defined for NaN) */
    v = v > -128.0f ? v : -128.0f;
    v = v < 127.0f ? v : 127.0f;
    q[i] = (int8_t)nearbyintf(v);
  }
}

void pc_lowbit_quant__scalar(const float* x, int64_t k, int64_t gs, int8_t* qa, int64_t* asum,
                             float* scale, int32_t* zero) {
  int64_t g, j;
  pc_lowbit_act_qparams(x, k, scale, zero);
  pc_lowbit_act_quantize(x, k, pc_lowbit_act_inv(*scale), *zero, qa);
  for (g = 0; g < k / gs; ++g) {
    int64_t s = 0;
    for (j = 0; j < gs; ++j) s += qa[g * gs + j];
    asum[g] = s;
  }
}
