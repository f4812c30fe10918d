/* Internal helpers of libpterun_kernels_cortex_m: argument checks, the
 * CMSIS-NN requantization step, broadcasting iteration and 4-D image views.
 * The numerics follow the Python reference implementations of ExecuTorch's
 * Cortex-M backend (backends/cortex_m/ops/operators.py); docs/cortex_m.md. */
#ifndef PTERUN_KERNELS_CORTEX_M_CM_UTIL_H_
#define PTERUN_KERNELS_CORTEX_M_CM_UTIL_H_

#include <stdint.h>

#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

/* ---- integers as torch computes them ---------------------------------------- */

/* Two's complement truncation to 32 / 8 bits (torch's .to(int32) / .to(int8)). */
static inline int32_t cm_wrap32(int64_t v) {
  uint32_t u = (uint32_t)(uint64_t)v;
  return u >= 0x80000000u ? (int32_t)(u - 0x80000000u) - INT32_MAX - 1 : (int32_t)u;
}
static inline int8_t cm_wrap8(int64_t v) {
  uint8_t u = (uint8_t)(uint64_t)v;
  return u >= 0x80u ? (int8_t)((int)u - 256) : (int8_t)u;
}
/* Wrapping int64 arithmetic (torch int64 tensors wrap). */
static inline int64_t cm_wrap64(uint64_t u) {
  return u >= 0x8000000000000000ull ? (int64_t)(u - 0x8000000000000000ull) - INT64_MAX - 1
                                    : (int64_t)u;
}
/* Arithmetic shift right (floor), defined for negative values too. */
static inline int64_t cm_asr64(int64_t v, int n) {
  return v >= 0 ? v >> n : -1 - ((-1 - v) >> n);
}
static inline int64_t cm_clamp64(int64_t v, int64_t lo, int64_t hi) {
  if (v < lo) v = lo; /* torch.clamp: min first, then max (max wins if lo > hi) */
  if (v > hi) v = hi;
  return v;
}

/* CMSIS-NN's arm_nn_requantize as the reference computes it in int64:
 * (v << max(shift, 0)) * multiplier, rounded doubling high half, then a
 * rounding right shift by max(-shift, 0); truncated to int32. */
static inline int32_t cm_requantize(int64_t v, int32_t multiplier, int32_t shift) {
  int left = shift > 0 ? shift : 0, right = shift < 0 ? -shift : 0;
  uint64_t value = (uint64_t)v << left;
  int64_t product = cm_wrap64(value * (uint64_t)(int64_t)multiplier + (1ull << 30));
  int64_t result = cm_asr64(product, 31);
  if (right) {
    int64_t mask = ((int64_t)1 << right) - 1;
    int64_t rem = (int64_t)((uint64_t)result & (uint64_t)mask);
    int64_t threshold = mask >> 1;
    result = cm_asr64(result, right);
    if (result < 0) threshold += 1;
    if (rem > threshold) result += 1;
  }
  return cm_wrap32(result);
}

/* A multiplier must fit int32 and a shift lie in [-31, 31] (CMSIS-NN's range). */
pterun_status cm_check_requant(pterun_kernel_context* ctx, const char* name, int64_t multiplier,
                               int64_t shift);
/* An integer argument that must fit int32 (zero points, offsets, bounds). */
pterun_status cm_check_i32(pterun_kernel_context* ctx, const char* name, int64_t v);

/* ---- tensors ----------------------------------------------------------------- */

/* Dtype, data and layout checks are libpterun's pterun_check_dtype /
 * pterun_check_data / pterun_check_contiguous. */
/* Same sizes and same dim order: elementwise loops may run linearly. */
int cm_same_layout(const pterun_tensor* a, const pterun_tensor* b);

/* An int[] argument of 1 or 2 items as a pair (one item is repeated). */
pterun_status cm_arg_pair(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                          const char* name, int64_t out[2]);

/* ---- broadcasting ---------------------------------------------------------------
 * Walks over out with inputs broadcast against it use the kit's pterun_iter. */
/* Broadcast shape of a and b into sizes/rank; 0 if they do not broadcast. */
int cm_broadcast_shape(const pterun_tensor* a, const pterun_tensor* b, int64_t* sizes,
                       size_t* rank);

/* ---- 4-D images ----------------------------------------------------------------
 * A batch of images addressed by (n, c, h, w) whatever the tensor's dim order;
 * `nhwc`: the tensor's logical dimensions are N, H, W, C (the _nhwc operator
 * variants), otherwise N, C, H, W. */
typedef struct cm_img {
  int64_t n, c, h, w;
  int64_t sn, sc, sh, sw;
} cm_img;

void cm_img_view(const pterun_tensor* t, int nhwc, cm_img* v);
static inline int64_t cm_img_at(const cm_img* v, int64_t n, int64_t c, int64_t h, int64_t w) {
  return n * v->sn + c * v->sc + h * v->sh + w * v->sw;
}
/* Logical sizes of an image of the given layout. */
void cm_img_sizes(int nhwc, int64_t n, int64_t c, int64_t h, int64_t w, int64_t sizes[4]);

#endif /* PTERUN_KERNELS_CORTEX_M_CM_UTIL_H_ */
