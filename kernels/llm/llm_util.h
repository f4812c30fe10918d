/* Internal helpers of libpterun_kernels_llm (prefix llm_): argument checks,
 * reduced-precision conversion, and the SIMD row primitives the attention
 * kernels are written over (chosen once per call from pterun_cpu_features()). */
#ifndef PTERUN_KERNELS_LLM_LLM_UTIL_H_
#define PTERUN_KERNELS_LLM_LLM_UTIL_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"

#define LLM_TRY(expr)                                                                              \
  do {                                                                                             \
    pterun_status llm_try_s_ = (expr);                                                             \
    if (llm_try_s_ != PTERUN_STATUS_OK) return llm_try_s_;                                         \
  } while (0)

#define LLM_NARGS(ctx, nargs, n)                                                                   \
  do {                                                                                             \
    if ((nargs) != (size_t)(n))                                                                    \
      return pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_PROGRAM,                              \
                                "expected %d arguments, got %zu", (int)(n), (size_t)(nargs));      \
  } while (0)

#define LLM_FAIL(ctx, ...) pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Rank, contiguous dim order, and data present when the tensor has elements. */
pterun_status llm_check_tensor(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                               int rank);
pterun_status llm_check_dtype(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                              int dtype);
pterun_status llm_resize_like(pterun_kernel_context* ctx, pterun_tensor* out,
                              const pterun_tensor* like);
/* 1 for float32, float16, bfloat16. */
int llm_is_attn_float(int dtype);

static inline float llm_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  float f;
  if (e == 0) {
    f = (float)m * 5.9604644775390625e-08f;
    memcpy(&u, &f, 4);
    u |= sign;
  } else if (e == 31) {
    u = sign | 0x7f800000u | (m << 13);
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  memcpy(&f, &u, 4);
  return f;
}
uint16_t llm_f32_to_f16(float f);
static inline float llm_bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t llm_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
/* n elements of a float32/float16/bfloat16 array to float32 and back. */
void llm_load_f32(float* dst, const void* src, int dtype, size_t n);
void llm_store_f32(void* dst, int dtype, const float* src, size_t n);

/* Row primitives of the attention kernels (portable C and AVX2+FMA). */
typedef struct llm_vec_ops {
  float (*dot)(const float* a, const float* b, size_t n);
  /* y[i] = y[i] * s + p * x[i] */
  void (*scale_axpy)(float* y, float s, float p, const float* x, size_t n);
  void (*scale)(float* y, float s, size_t n);
  const char* name;
} llm_vec_ops;
/* The widest variant pterun_cpu_features() allows (PTERUN_ISA_MASK=0: C). */
const llm_vec_ops* llm_vec_ops_select(void);
const llm_vec_ops* llm_vec_ops_portable(void);
#if defined(PTERUN_LLM_AVX2)
const llm_vec_ops* llm_vec_ops_avx2(void);
#endif

#endif /* PTERUN_KERNELS_LLM_LLM_UTIL_H_ */
