/* llama::fast_hadamard_transform: along the last dim, for n = 2^k the
 * Walsh-Hadamard transform (natural / Sylvester order) scaled by 1/sqrt(n);
 * for n = 28 * 2^k (SpinQuant's rotation of llama's 14336-wide FFN) the row
 * is a [28, 2^k] matrix: each of its 28 rows gets the scaled 2^k transform,
 * then each column is multiplied by a Hadamard matrix of order 28, unscaled,
 * as ExecuTorch does. Each row is independent: float32 rows are transformed
 * in place in `out`, split over the method's thread pool. */
#include <inttypes.h>

#include "kernels/llm/llm_util.h"
#include "pterun/threadpool.h"

/* The order-28 Hadamard matrix (Williamson type, from Sloane's library of
 * Hadamard matrices, the one SpinQuant and QuaRot use), one row per word:
 * bit j set = entry (i, j) is -1. */
static const uint32_t kHad28[28] = {
    0xcd69e7eu, 0x9ad7c7du, 0x37ab8fbu, 0x6d571f7u, 0xd8ae3efu, 0xb3587dfu, 0x66b4f3fu,
    0xb467f43u, 0x6acbe87u, 0xd593d8eu, 0xab27b9cu, 0x564f7b8u, 0xac9aff0u, 0x5b31fe1u,
    0x87fb325u, 0x0ff66cau, 0x1decd95u, 0x39ddb2au, 0x71bf654u, 0xe17eca9u, 0xc2fd9d2u,
    0xfcf1299u, 0xfbe2532u, 0xf7c4ae4u, 0xef8d549u, 0xdf1ea13u, 0xbe3d4a6u, 0x7e7a94cu};

#define LLM_HAD_STACK 1024 /* floats: half-precision rows up to this run without scratch */

/* Scaled transform of x[0, 2^k): butterflies by increasing stride, then
 * x * (1 / (2^floor(k/2) * sqrt(2)^(k mod 2))) with that factor rounded as
 * ExecuTorch rounds it. */
static void fwht_scaled(float* x, int k) {
  int64_t n = (int64_t)1 << k, h, i, j;
  float inv = 1.0f / ((float)(1 << (k / 2)) * ((k % 2) ? (float)sqrt(2.0) : 1.0f));
  for (h = 1; h < n; h *= 2)
    for (i = 0; i < n; i += 2 * h)
      for (j = i; j < i + h; ++j) {
        float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
  for (i = 0; i < n; ++i) x[i] *= inv;
}

/* One row of length (had28 ? 28 : 1) << k, in place. The order-28 product
 * sums each output's terms left to right, in float. */
static void transform_row(float* x, int k, int had28) {
  int64_t m = (int64_t)1 << k, c;
  int i, j;
  if (!had28) {
    fwht_scaled(x, k);
    return;
  }
  for (i = 0; i < 28; ++i) fwht_scaled(x + i * m, k);
  for (c = 0; c < m; ++c) {
    float in[28];
    for (j = 0; j < 28; ++j) in[j] = x[j * m + c];
    for (i = 0; i < 28; ++i) {
      float acc = (kHad28[i] & 1u) ? -in[0] : in[0];
      for (j = 1; j < 28; ++j) acc = (kHad28[i] >> j & 1u) ? acc - in[j] : acc + in[j];
      x[i * m + c] = acc;
    }
  }
}

typedef struct had_job {
  float* data;
  int64_t n;
  int k, had28;
} had_job;

static void had_rows(void* ctx, size_t first, size_t count) {
  const had_job* j = (const had_job*)ctx;
  size_t r;
  for (r = first; r < first + count; ++r)
    transform_row(j->data + (int64_t)r * j->n, j->k, j->had28);
}

/* llama::fast_hadamard_transform.out(Tensor mat, *, Tensor(a!) out) */
PTERUN_KERNEL(llm_fast_hadamard_transform_out) {
  pterun_tensor *in, *out;
  int64_t n, p2, rows, r;
  int k = 0, had28;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "mat", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(llm_check_tensor(ctx, in, "mat", -1));
  if (!llm_is_attn_float(in->dtype))
    return PTERUN_FAIL_ARG(ctx, "mat must be float32, float16 or bfloat16, got %s",
                           pterun_dtype_name(in->dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", in->dtype));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(llm_check_tensor(ctx, out, "out", -1));
  if (in->rank == 0 || in->numel == 0) return PTERUN_STATUS_OK;
  n = in->sizes[in->rank - 1];
  had28 = n % 28 == 0;
  p2 = had28 ? n / 28 : n;
  if ((p2 & (p2 - 1)) != 0 || p2 > ((int64_t)1 << 30))
    return PTERUN_FAIL_ARG(ctx, "last dim %" PRId64 " must be a power of two or 28 times one", n);
  while (((int64_t)1 << k) < p2) ++k;
  rows = in->numel / n;
  if (in->dtype == PTERUN_DTYPE_F32) {
    had_job job = {(float*)out->data, n, k, had28};
    if (out->data != in->data) memmove(out->data, in->data, (size_t)in->numel * sizeof(float));
    pterun_parallelize_1d_tile(pterun_kernel_threadpool(ctx), had_rows, &job, (size_t)rows, 1,
                               PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)));
    return PTERUN_STATUS_OK;
  }
  {
    /* float16 / bfloat16: each row through a float buffer, rounded once. */
    float stack[LLM_HAD_STACK];
    float* row = stack;
    if (n > LLM_HAD_STACK) {
      row = (float*)pterun_kernel_scratch(ctx, (size_t)n * sizeof(float), 64);
      if (row == NULL)
        return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                  "a %s row of %" PRId64 " values needs %" PRId64
                                  " bytes of scratch memory",
                                  pterun_dtype_name(in->dtype), n, n * 4);
    }
    for (r = 0; r < rows; ++r) {
      llm_load_f32(row, (const uint16_t*)in->data + r * n, in->dtype, (size_t)n);
      transform_row(row, k, had28);
      llm_store_f32((uint16_t*)out->data + r * n, out->dtype, row, (size_t)n);
    }
  }
  return PTERUN_STATUS_OK;
}

/* Load time: a half-precision row longer than the stack buffer goes through
 * scratch at execute. */
pterun_status llm_fast_hadamard_transform_prepare(pterun_kernel_context* ctx, pterun_value** args,
                                                  size_t nargs) {
  if (nargs < 1 || args[0]->tag != PTERUN_VALUE_TENSOR) return PTERUN_STATUS_OK;
  const pterun_tensor* in = args[0]->u.tensor;
  if (in->rank >= 1 && in->dtype != PTERUN_DTYPE_F32 && in->sizes[in->rank - 1] > LLM_HAD_STACK &&
      in->sizes[in->rank - 1] < ((int64_t)1 << 40))
    pterun_kernel_scratch_reserve(ctx, (size_t)in->sizes[in->rank - 1] * sizeof(float));
  return PTERUN_STATUS_OK;
}
