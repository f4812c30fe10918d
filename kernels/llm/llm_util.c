/* Internal helpers of libpterun_kernels_llm. */
#include "kernels/llm/llm_util.h"

#include <inttypes.h>

pterun_status llm_check_tensor(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                               int rank) {
  if (rank >= 0) PTERUN_TRY(pterun_check_rank(ctx, t, name, rank));
  if (!pterun_tensor_is_contiguous(t))
    return PTERUN_FAIL_ARG(ctx, "arg '%s': must be in contiguous dim order", name);
  return pterun_check_data(ctx, t, name);
}

int llm_is_attn_float(int dtype) {
  return dtype == PTERUN_DTYPE_F32 || dtype == PTERUN_DTYPE_F16 || dtype == PTERUN_DTYPE_BF16;
}

void llm_load_f32(float* dst, const void* src, int dtype, size_t n) {
  size_t i;
  if (dtype == PTERUN_DTYPE_F32) {
    memcpy(dst, src, n * sizeof(float));
  } else if (dtype == PTERUN_DTYPE_F16) {
    for (i = 0; i < n; ++i) dst[i] = pterun_f16_to_f32(((const uint16_t*)src)[i]);
  } else {
    for (i = 0; i < n; ++i) dst[i] = pterun_bf16_to_f32(((const uint16_t*)src)[i]);
  }
}

void llm_store_f32(void* dst, int dtype, const float* src, size_t n) {
  size_t i;
  if (dtype == PTERUN_DTYPE_F32) {
    memcpy(dst, src, n * sizeof(float));
  } else if (dtype == PTERUN_DTYPE_F16) {
    for (i = 0; i < n; ++i) ((uint16_t*)dst)[i] = pterun_f32_to_f16(src[i]);
  } else {
    for (i = 0; i < n; ++i) ((uint16_t*)dst)[i] = pterun_f32_to_bf16(src[i]);
  }
}
