/* Internal helpers of libpterun_kernels_llm (prefix llm_): argument checks,
 * float32/f16/bf16 row conversion, and the SIMD row primitives the attention
 * kernels are written over (chosen once per call from pterun_cpu_features()). */
#ifndef PTERUN_KERNELS_LLM_LLM_UTIL_H_
#define PTERUN_KERNELS_LLM_LLM_UTIL_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

#define LLM_FAIL(ctx, ...) pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Rank (unless < 0), contiguous dim order, and pterun_check_data. Dtypes are
 * checked with the kit's pterun_check_dtype. */
pterun_status llm_check_tensor(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                               int rank);
/* 1 for float32, float16, bfloat16. */
int llm_is_attn_float(int dtype);

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
