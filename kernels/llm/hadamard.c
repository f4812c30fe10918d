/* llama::fast_hadamard_transform: the orthonormal Walsh-Hadamard transform
 * (natural / Sylvester order) of every row along the last dim. */
#include <inttypes.h>

#include "kernels/llm/llm_util.h"

static void fwht(float* x, int64_t n) {
  int64_t h, i, j;
  for (h = 1; h < n; h *= 2)
    for (i = 0; i < n; i += 2 * h)
      for (j = i; j < i + h; ++j) {
        float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
}

/* llama::fast_hadamard_transform.out(Tensor mat, *, Tensor(a!) out) */
pterun_status llm_fast_hadamard_transform_out(pterun_kernel_context* ctx, pterun_value** args,
                                              size_t nargs) {
  pterun_tensor *in, *out;
  int64_t n, rows, r;
  float row[1024], norm;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "mat", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(llm_check_tensor(ctx, in, "mat", -1));
  if (!llm_is_attn_float(in->dtype))
    return LLM_FAIL(ctx, "mat must be float32, float16 or bfloat16, got %s",
                    pterun_dtype_name(in->dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", in->dtype));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(llm_check_tensor(ctx, out, "out", -1));
  if (in->rank == 0 || in->numel == 0) return PTERUN_STATUS_OK;
  n = in->sizes[in->rank - 1];
  if ((n & (n - 1)) != 0)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "last dim %" PRId64
                              " is not a power of two (the 28*2^k variant "
                              "is not implemented)",
                              n);
  if (n > (int64_t)(sizeof row / sizeof row[0]))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "last dim %" PRId64 " exceeds 1024",
                              n);
  rows = in->numel / n;
  norm = (float)(1.0 / sqrt((double)n));
  for (r = 0; r < rows; ++r) {
    int64_t i;
    size_t es = pterun_dtype_size(in->dtype);
    llm_load_f32(row, (const char*)in->data + (size_t)(r * n) * es, in->dtype, (size_t)n);
    fwht(row, n);
    for (i = 0; i < n; ++i) row[i] *= norm;
    llm_store_f32((char*)out->data + (size_t)(r * n) * es, out->dtype, row, (size_t)n);
  }
  return PTERUN_STATUS_OK;
}
