/* Internal helpers of libpterun_kernels_llm (prefix llm_): argument checks,
 * float32/f16/bf16 row conversion. (The SIMD row primitives the attention
 * kernels are written over are libpterun_compute's pterun_compute_f32_rowops.) */
#ifndef PTERUN_KERNELS_LLM_LLM_UTIL_H_
#define PTERUN_KERNELS_LLM_LLM_UTIL_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

/* Rank (unless < 0), contiguous dim order, and pterun_check_data. Dtypes are
 * checked with the kit's pterun_check_dtype. */
pterun_status llm_check_tensor(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                               int rank);
/* 1 for float32, float16, bfloat16. */
int llm_is_attn_float(int dtype);

/* n elements of a float32/float16/bfloat16 array to float32 and back. */
void llm_load_f32(float* dst, const void* src, int dtype, size_t n);
void llm_store_f32(void* dst, int dtype, const float* src, size_t n);

#endif /* PTERUN_KERNELS_LLM_LLM_UTIL_H_ */
