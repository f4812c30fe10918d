/* Internal helpers of libpterun_kernels_llm. */
#include "kernels/llm/llm_util.h"

#include <inttypes.h>

#include "pterun/cpu.h"

pterun_status llm_check_tensor(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                               int rank) {
  if (rank >= 0) PTERUN_TRY(pterun_check_rank(ctx, t, name, rank));
  if (!pterun_tensor_is_contiguous(t))
    return LLM_FAIL(ctx, "arg '%s': must be in contiguous dim order", name);
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

/* ---- portable row primitives: four partial sums so the compiler can keep
 * several lanes busy without reassociating behind our back. ---- */
static float dot_c(const float* a, const float* b, size_t n) {
  float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

static void scale_axpy_c(float* y, float s, float p, const float* x, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) y[i] = y[i] * s + p * x[i];
}

static void scale_c(float* y, float s, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) y[i] *= s;
}

static const llm_vec_ops kPortable = {dot_c, scale_axpy_c, scale_c, "c"};

const llm_vec_ops* llm_vec_ops_portable(void) {
  return &kPortable;
}

const llm_vec_ops* llm_vec_ops_select(void) {
#if defined(PTERUN_LLM_AVX2)
  uint64_t need = PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA;
  if ((pterun_cpu_features() & need) == need) return llm_vec_ops_avx2();
#endif
  return &kPortable;
}
