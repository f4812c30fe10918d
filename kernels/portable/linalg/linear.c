/* aten::linear.out: out[..., n] = sum_k input[..., k] * weight[n, k] + bias[n].
 * ExecuTorch runs it from its optimized library; the LLM flow keeps it. Few
 * rows (decoding: one token) stream the weight once as row dot products;
 * more rows go through the blocked GEMM (pterun_compute_gemm), with the weight
 * packed once at method load when it is constant (prepare, prepack.h). The
 * pterun::linear_relu / linear_hardtanh operators (made by the load-time
 * fusion pass) apply the activation in the same call. */
#include <inttypes.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/portable/prepack.h"
#include "kernels/portable/util.h"

#define LINEAR_DOT_MAX_ROWS 16

/* x . w over k elements, four partial sums. */
static float dot1(const float* x, const float* w, int64_t k) {
  int64_t i = 0;
  float s;
#if defined(__SSE2__)
  __m128 a0 = _mm_setzero_ps(), a1 = _mm_setzero_ps(), a2 = _mm_setzero_ps(), a3 = _mm_setzero_ps();
  float t[4];
  for (; i + 16 <= k; i += 16) {
    a0 = _mm_add_ps(a0, _mm_mul_ps(_mm_loadu_ps(x + i), _mm_loadu_ps(w + i)));
    a1 = _mm_add_ps(a1, _mm_mul_ps(_mm_loadu_ps(x + i + 4), _mm_loadu_ps(w + i + 4)));
    a2 = _mm_add_ps(a2, _mm_mul_ps(_mm_loadu_ps(x + i + 8), _mm_loadu_ps(w + i + 8)));
    a3 = _mm_add_ps(a3, _mm_mul_ps(_mm_loadu_ps(x + i + 12), _mm_loadu_ps(w + i + 12)));
  }
  _mm_storeu_ps(t, _mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3)));
  s = (t[0] + t[1]) + (t[2] + t[3]);
#else
  s = 0.f;
#endif
  for (; i < k; ++i) s += x[i] * w[i];
  return s;
}

/* s[r] = x_r . w for the four rows x_r = x + r * k: each load of w serves
 * the four rows (register blocking). */
static void dot4(const float* x, const float* w, int64_t k, float* s) {
  int64_t i = 0, r;
#if defined(__SSE2__)
  __m128 a0 = _mm_setzero_ps(), a1 = _mm_setzero_ps(), a2 = _mm_setzero_ps(), a3 = _mm_setzero_ps();
  float t[4][4];
  for (; i + 4 <= k; i += 4) {
    __m128 wv = _mm_loadu_ps(w + i);
    a0 = _mm_add_ps(a0, _mm_mul_ps(_mm_loadu_ps(x + i), wv));
    a1 = _mm_add_ps(a1, _mm_mul_ps(_mm_loadu_ps(x + k + i), wv));
    a2 = _mm_add_ps(a2, _mm_mul_ps(_mm_loadu_ps(x + 2 * k + i), wv));
    a3 = _mm_add_ps(a3, _mm_mul_ps(_mm_loadu_ps(x + 3 * k + i), wv));
  }
  _mm_storeu_ps(t[0], a0);
  _mm_storeu_ps(t[1], a1);
  _mm_storeu_ps(t[2], a2);
  _mm_storeu_ps(t[3], a3);
  for (r = 0; r < 4; ++r) s[r] = (t[r][0] + t[r][1]) + (t[r][2] + t[r][3]);
#else
  for (r = 0; r < 4; ++r) s[r] = 0.f;
#endif
  for (; i < k; ++i)
    for (r = 0; r < 4; ++r) s[r] += x[r * k + i] * w[i];
}

/* y[m, j] = x[m, :] . w[j, :] for m < rows, j0 <= j < j1 (y's rows n
 * long): each weight row is read from memory once and used for every input
 * row while it is in L1. */
static void linear_rows_f32(const float* x, int64_t rows, const float* w, int64_t n, int64_t k,
                            int64_t j0, int64_t j1, float* y) {
  int64_t j, m;
  for (j = j0; j < j1; ++j) {
    const float* wr = w + j * k;
    for (m = 0; m + 4 <= rows; m += 4) {
      float s[4];
      dot4(x + m * k, wr, k, s);
      y[m * n + j] = s[0];
      y[(m + 1) * n + j] = s[1];
      y[(m + 2) * n + j] = s[2];
      y[(m + 3) * n + j] = s[3];
    }
    for (; m < rows; ++m) y[m * n + j] = dot1(x + m * k, wr, k);
  }
}

/* Weight bytes per task of the row-dot path: a decode step's linears split
 * their output columns over the pool only when each thread streams at least
 * this much (waking a worker costs microseconds; a 64 KiB slice takes about
 * as long to read). Columns are independent: same bits for any split. */
#define LINEAR_DOT_TASK_BYTES ((int64_t)64 * 1024)
/* One thread's cost, for the pool's split rule (docs/performance.md, "Thread
 * thresholds"): picoseconds per weight (streamed once) and per multiply-add. */
#define LINEAR_DOT_PS_WEIGHT 100
#define LINEAR_DOT_PS_FMA 30

typedef struct linear_rows_job {
  const float *x, *w;
  int64_t rows, n, k;
  float* y;
} linear_rows_job;

static void linear_rows_task(void* c, size_t start, size_t count) {
  const linear_rows_job* j = (const linear_rows_job*)c;
  linear_rows_f32(j->x, j->rows, j->w, j->n, j->k, (int64_t)start, (int64_t)(start + count), j->y);
}

static void linear_rows_split(pterun_kernel_context* ctx, const float* x, int64_t rows,
                              const float* w, int64_t n, int64_t k, float* y) {
  pterun_threadpool* pool = pterun_kernel_threadpool(ctx);
  const int64_t row_bytes = k * (int64_t)sizeof(float);
  const int64_t tile = row_bytes >= LINEAR_DOT_TASK_BYTES ? 1 : LINEAR_DOT_TASK_BYTES / row_bytes;
  if (pool == NULL || pterun_threadpool_size(pool) < 2 || n < 2 * tile) {
    linear_rows_f32(x, rows, w, n, k, 0, n, y);
    return;
  }
  linear_rows_job job = {x, w, rows, n, k, y};
  const double ps =
      (double)n * (double)k * (LINEAR_DOT_PS_WEIGHT + LINEAR_DOT_PS_FMA * (double)rows);
  pterun_parallelize_1d_tile(pool, linear_rows_task, &job, (size_t)n, (size_t)tile,
                             PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                                 PTERUN_PARALLEL_WORK_NS(ps / 1000.0));
}

/* The weight [N, K] read as the GEMM's B = weight^T: (k, n) at w[n * K + k]. */
static pterun_compute_matrix weight_t(const pterun_tensor* w, int64_t k) {
  pterun_compute_matrix mb;
  mb.data = w->data;
  mb.dtype = w->dtype;
  mb.rs = 1;
  mb.cs = k;
  return mb;
}

/* aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *,
 *                  Tensor(a!) out), out at args[iout]; `act`: the fused
 * activation (NULL: none). */
static pterun_status linear(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                            const pterun_compute_gemm_opts* act) {
  pterun_tensor *x, *w, *bias, *out;
  int64_t sizes[PTERUN_MAX_RANK], k, n, m, i;
  size_t r;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "bias", &bias));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, iout, "out", &out));
  if (act != NULL && out->dtype != PTERUN_DTYPE_F32)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the fused activation needs float32, got %s",
                              pterun_dtype_name(out->dtype));
  if (x->rank < 1) return PTERUN_FAIL_ARG(ctx, "input is 0-d");
  PTERUN_TRY(pterun_check_rank(ctx, w, "weight", 2));
  PTERUN_TRY(pk_check_float(ctx, x, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, x, "input", w, "weight"));
  PTERUN_TRY(pk_check_same_dtype(ctx, x, "input", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, x, "input"));
  PTERUN_TRY(pterun_check_data(ctx, w, "weight"));
  k = x->sizes[x->rank - 1];
  n = w->sizes[0];
  if (w->sizes[1] != k)
    return PTERUN_FAIL_ARG(ctx, "input has %" PRId64 " features, weight [%" PRId64 ", %" PRId64 "]",
                           k, w->sizes[0], w->sizes[1]);
  if (bias != NULL) {
    PTERUN_TRY(pk_check_same_dtype(ctx, x, "input", bias, "bias"));
    PTERUN_TRY(pterun_check_data(ctx, bias, "bias"));
    if (bias->rank != 1 || bias->sizes[0] != n)
      return PTERUN_FAIL_ARG(ctx, "bias must be [%" PRId64 "]", n);
  }
  if (!pterun_tensor_is_contiguous(x) || !pterun_tensor_is_contiguous(w) ||
      (bias != NULL && !pterun_tensor_is_contiguous(bias)))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "linear needs contiguous input, weight and bias");
  for (r = 0; r + 1 < x->rank; ++r) sizes[r] = x->sizes[r];
  sizes[x->rank - 1] = n;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", x->rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  m = out->numel / n;
  if (x->dtype == PTERUN_DTYPE_F32 && m <= LINEAR_DOT_MAX_ROWS) {
    float* y = (float*)out->data;
    linear_rows_split(ctx, (const float*)x->data, m, (const float*)w->data, n, k, y);
    if (bias != NULL)
      for (i = 0; i < m * n; ++i) y[i] += ((const float*)bias->data)[i % n];
    if (act != NULL)
      pterun_compute_f32_activate(y, (size_t)(m * n), act->activation, act->lo, act->hi);
    return PTERUN_STATUS_OK;
  }
  {
    pterun_compute_gemm_ws ws;
    pterun_compute_matrix ma, mb = weight_t(w, k), mc;
    pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
    int accumulate = 0;
    if (act != NULL) o = *act;
    o.packed_b = pk_prepacked_for(ctx, w, k, n);
    ma.data = x->data;
    ma.dtype = x->dtype;
    ma.rs = k;
    ma.cs = 1;
    mc.data = out->data;
    mc.dtype = out->dtype;
    mc.rs = n;
    mc.cs = 1;
    if (bias != NULL) {
      size_t es = pterun_dtype_size(out->dtype);
      for (i = 0; i < m; ++i)
        memcpy((char*)out->data + (size_t)(i * n) * es, bias->data, (size_t)n * es);
      accumulate = 1;
    }
    pterun_compute_gemm_init(ctx, &ws, out->dtype);
    pterun_compute_gemm_ex(&ws, m, n, k, &ma, &mb, &mc, 1.0, accumulate, &o);
  }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(pk_linear_out) {
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  return linear(ctx, args, 3, NULL);
}

/* Load time: packs a constant float32 weight as the GEMM's B, unless the
 * input has a static row count small enough for the row-dot path. */
static pterun_status linear_prepare(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                    size_t want, size_t iout) {
  if (nargs != want || args[0]->tag != PTERUN_VALUE_TENSOR || args[1]->tag != PTERUN_VALUE_TENSOR ||
      args[iout]->tag != PTERUN_VALUE_TENSOR)
    return PTERUN_STATUS_OK;
  const pterun_tensor *x = args[0]->u.tensor, *w = args[1]->u.tensor, *out = args[iout]->u.tensor;
  if (x->rank >= 1 && w->rank == 2 && w->sizes[1] > 0) {
    /* the GEMM's blocks, unless every call (at most the load-time rows) takes
     * the row-dot path */
    const int64_t rows = x->numel / w->sizes[1];
    if (x->dtype != PTERUN_DTYPE_F32 || rows > LINEAR_DOT_MAX_ROWS)
      pterun_compute_gemm_reserve(ctx, out->dtype, rows, w->sizes[0], w->sizes[1]);
  }
  if (x->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || x->rank < 1 ||
      w->rank != 2 || w->sizes[1] != x->sizes[x->rank - 1] || w->sizes[1] <= 0 ||
      !pk_prepack_constant_f32(w) || !pterun_tensor_is_contiguous(w))
    return PTERUN_STATUS_OK;
  if (x->dynamism == PTERUN_SHAPE_STATIC && x->numel / w->sizes[1] <= LINEAR_DOT_MAX_ROWS)
    return PTERUN_STATUS_OK;
  pterun_compute_matrix mb = weight_t(w, w->sizes[1]);
  return pk_prepack(ctx, w, PTERUN_COMPUTE_OPERAND_B, w->sizes[1], w->sizes[0], &mb);
}

PTERUN_KERNEL(pk_linear_prepare) {
  return linear_prepare(ctx, args, nargs, 5, 3);
}

/* pterun::linear_relu.out(input, weight, bias, *, out) and
 * pterun::linear_hardtanh.out(input, weight, bias, min_val, max_val, *, out) */
PK_DEFINE_FUSED_ACTIVATIONS(pk_linear, linear, linear_prepare, 5)
