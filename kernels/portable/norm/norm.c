/* Softmax, log-softmax, layer norm and group norm. */
#include <math.h>

#include "kernels/portable/ew.h"
#include "pterun/compute.h"

/* Row loops below go over the method's pool only when the tensor is big
 * enough to pay for waking it (microseconds); rows are independent, so the
 * result does not depend on the thread count. */
#define PK_NORM_PARALLEL_MIN ((int64_t)1 << 14)
#define PK_NORM_TILE_ELEMS ((int64_t)4096)

/* One thread's cost per element, in picoseconds, for the pool's split rule
 * (docs/performance.md, "Thread thresholds"). */
#define PK_SOFTMAX_PS 600
#define PK_LAYER_NORM_PS 400

static pterun_threadpool* norm_pool(pterun_kernel_context* ctx, int64_t numel) {
  return numel >= PK_NORM_PARALLEL_MIN ? pterun_kernel_threadpool(ctx) : NULL;
}

static uint32_t norm_flags(pterun_kernel_context* ctx, int64_t numel, int ps) {
  return PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
         PTERUN_PARALLEL_WORK_NS((double)numel * ps / 1000.0);
}

static size_t norm_tile(int64_t row_len) {
  return row_len >= PK_NORM_TILE_ELEMS ? 1
                                       : (size_t)(PK_NORM_TILE_ELEMS / (row_len > 0 ? row_len : 1));
}

/* ---- _softmax.out / _log_softmax.out(self, int dim, bool half_to_float, *, out) ---- */

/* One softmax line of n elements at stride si (in) / so (out), float32. */
static void softmax_line_f32(const float* x, int64_t si, float* o, int64_t so, int64_t n,
                             int log_mode) {
  float mx = -INFINITY;
  double sum = 0;
  int64_t k;
  for (k = 0; k < n; ++k) {
    float v = x[k * si];
    mx = (v > mx || v != v) ? v : mx; /* NaN propagates into every output */
  }
  if (isinf(mx) && mx < 0) mx = 0; /* all -inf: avoid -inf - -inf */
  if (log_mode) {
    float lse;
    for (k = 0; k < n; ++k) sum += expf(x[k * si] - mx);
    lse = (float)log(sum);
    for (k = 0; k < n; ++k) o[k * so] = x[k * si] - mx - lse;
  } else {
    float inv;
    for (k = 0; k < n; ++k) {
      float e = expf(x[k * si] - mx);
      o[k * so] = e;
      sum += e;
    }
    inv = (float)(1.0 / sum);
    for (k = 0; k < n; ++k) o[k * so] *= inv;
  }
}

/* Generic dtype line: computed in double, stored in out's dtype. */
static void softmax_line_any(const pterun_tensor* in, int64_t oi, int64_t si, pterun_tensor* out,
                             int64_t oo, int64_t so, int64_t n, int log_mode) {
  double mx = -INFINITY, sum = 0;
  int64_t k;
  for (k = 0; k < n; ++k) {
    double v = pterun_load_f64(in->data, in->dtype, oi + k * si);
    mx = (v > mx || v != v) ? v : mx;
  }
  if (isinf(mx) && mx < 0) mx = 0;
  for (k = 0; k < n; ++k) sum += exp(pterun_load_f64(in->data, in->dtype, oi + k * si) - mx);
  for (k = 0; k < n; ++k) {
    double v = pterun_load_f64(in->data, in->dtype, oi + k * si) - mx;
    pterun_store_f64(out->data, out->dtype, oo + k * so, log_mode ? v - log(sum) : exp(v) / sum);
  }
}

/* Contiguous float32 rows along the last dim: the row primitives of
 * libpterun_compute (vectorised exponentials and scaling), rows over the pool. */
typedef struct pk_softmax_job {
  const float* x;
  float* o;
  size_t len;
  int log_mode;
  const pterun_compute_f32_rowops* ro;
} pk_softmax_job;

static void softmax_rows(void* vctx, size_t start, size_t count) {
  const pk_softmax_job* j = vctx;
  size_t r, k;
  for (r = start; r < start + count; ++r) {
    const float* x = j->x + r * j->len;
    float* o = j->o + r * j->len;
    float mx = j->ro->max(x, j->len), sum; /* a NaN propagates into every output */
    if (isinf(mx) && mx < 0) mx = 0;       /* all -inf: avoid -inf - -inf */
    sum = j->ro->exp_sum(o, x, mx, j->len);
    if (j->log_mode) {
      const float lse = logf(sum);
      for (k = 0; k < j->len; ++k) o[k] = x[k] - mx - lse;
    } else {
      j->ro->scale(o, 1.0f / sum, j->len);
    }
  }
}

static pterun_status run_softmax(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                 int log_mode) {
  pterun_tensor *in, *out, outer_in, outer_out;
  const pterun_tensor* op;
  int64_t dim, n, len, si, so;
  bool h2f;
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "half_to_float", &h2f));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  if (!pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "self", in->dtype, "is not a floating point dtype");
  if (h2f && !(out->dtype == PTERUN_DTYPE_F32 &&
               (in->dtype == PTERUN_DTYPE_F16 || in->dtype == PTERUN_DTYPE_BF16)))
    return PTERUN_FAIL_ARG(ctx, "half_to_float needs a half/bfloat16 self and a float32 out");
  if (!h2f && out->dtype != in->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "must match self's dtype");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, in->rank, &dim));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  if (in->data == NULL || out->data == NULL) return PTERUN_FAIL_ARG(ctx, "a tensor has no data");
  if (in->dtype == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_F32 && in->rank > 0 &&
      dim == in->rank - 1 && pterun_tensor_is_contiguous(in) && pterun_tensor_is_contiguous(out) &&
      (!log_mode || in->data != out->data)) {
    pk_softmax_job j = {(const float*)in->data, (float*)out->data, (size_t)in->sizes[dim], log_mode,
                        pterun_compute_f32_rowops_select()};
    pterun_parallelize_1d_tile(norm_pool(ctx, out->numel), softmax_rows, &j,
                               (size_t)(out->numel / in->sizes[dim]), norm_tile(in->sizes[dim]),
                               norm_flags(ctx, out->numel, PK_SOFTMAX_PS));
    return PTERUN_STATUS_OK;
  }
  outer_in = *in;
  outer_out = *out;
  if (in->rank > 0) {
    len = in->sizes[dim];
    si = in->strides[dim];
    so = out->strides[dim];
    outer_in.sizes[dim] = outer_out.sizes[dim] = 1;
    outer_out.numel = out->numel / len;
  } else {
    len = 1;
    si = so = 0;
  }
  op = &outer_in;
  pterun_iter_init(&it, &outer_out, &op, 1);
  for (n = 0; n < outer_out.numel; ++n, pterun_iter_next(&it)) {
    if (in->dtype == PTERUN_DTYPE_F32)
      softmax_line_f32((const float*)in->data + it.off[1], si, (float*)out->data + it.off[0], so,
                       len, log_mode);
    else
      softmax_line_any(in, it.off[1], si, out, it.off[0], so, len, log_mode);
  }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(pk_softmax_out) {
  return run_softmax(ctx, args, nargs, 0);
}
PTERUN_KERNEL(pk_log_softmax_out) {
  return run_softmax(ctx, args, nargs, 1);
}

/* ---- shared helpers for the norms ---- */

/* Reads element with logical index k of t (any dim order). */
static double at_logical(const pterun_tensor* t, int64_t k) {
  return pterun_load_f64(t->data, t->dtype, pk_logical_offset(t, k));
}

static pterun_status get_outs3(pterun_kernel_context* ctx, pterun_value** args, size_t first,
                               pterun_tensor** o0, pterun_tensor** o1, pterun_tensor** o2) {
  PTERUN_TRY(pterun_arg_tensor(ctx, args, first, "out0", o0));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, first + 1, "out1", o1));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, first + 2, "out2", o2));
  return PTERUN_STATUS_OK;
}

static pterun_status check_affine(pterun_kernel_context* ctx, const pterun_tensor* t,
                                  const char* name, int64_t numel) {
  if (t == NULL) return PTERUN_STATUS_OK;
  if (!pterun_dtype_is_float(t->dtype))
    return pk_fail_dtype(ctx, name, t->dtype, "is not a floating point dtype");
  if (t->numel != numel)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': expected %lld elements, got %lld", name,
                           (long long)numel, (long long)t->numel);
  if (numel > 0 && t->data == NULL) return PTERUN_FAIL_ARG(ctx, "arg '%s': no data", name);
  return PTERUN_STATUS_OK;
}

/* Mean and 1/sqrt(biased var + eps) of count elements read by logical index
 * (start + k) of t; contiguous float32 rows take a direct loop. */
static void moments(const pterun_tensor* t, int64_t start, int64_t count, double eps, double* mean,
                    double* rstd) {
  double m = 0, m2 = 0;
  int64_t k;
  bool direct = t->dtype == PTERUN_DTYPE_F32 && pterun_tensor_is_contiguous(t);
  if (direct) {
    /* Two passes in double: the mean, then the squared deviations. */
    const float* x = (const float*)t->data + start;
    double s = 0;
    for (k = 0; k < count; ++k) s += x[k];
    m = count > 0 ? s / (double)count : 0.0;
    for (k = 0; k < count; ++k) {
      double dv = x[k] - m;
      m2 += dv * dv;
    }
    *mean = m;
    *rstd = 1.0 / sqrt((count > 0 ? m2 / (double)count : 0.0) + eps);
    return;
  }
  for (k = 0; k < count; ++k) {
    double v = direct ? ((const float*)t->data)[start + k] : at_logical(t, start + k);
    double delta = v - m;
    m += delta / (double)(k + 1);
    m2 += delta * (v - m);
  }
  *mean = m;
  *rstd = 1.0 / sqrt((count > 0 ? m2 / (double)count : 0.0) + eps);
}

/* Rows [start, start + count) of native_layer_norm; each row writes only its
 * own outputs, so rows run on any thread. */
typedef struct pk_layer_norm_job {
  const pterun_tensor *in, *w, *b;
  pterun_tensor *out, *mean, *rstd;
  int64_t N;
  double eps;
  bool fast;
  const pterun_compute_f32_rowops* ro;
} pk_layer_norm_job;

static void layer_norm_rows(void* vctx, size_t start, size_t count) {
  const pk_layer_norm_job* jb = vctx;
  const pterun_tensor *in = jb->in, *w = jb->w, *b = jb->b;
  pterun_tensor *out = jb->out, *mean = jb->mean, *rstd = jb->rstd;
  const int64_t N = jb->N;
  const double eps = jb->eps;
  const bool fast = jb->fast;
  int64_t row, j;
  for (row = (int64_t)start; row < (int64_t)(start + count); ++row) {
    double mu, rs;
    if (fast) {
      /* float32 rows: the row primitives' fixed-order sums (mean, then the
       * squared deviations, centred into out), then scale and shift. The
       * mean of the deviations (c) corrects the rounded mean (the corrected
       * two-pass algorithm): a constant row then centres to exactly 0, as
       * ATen's Welford moments do, where sum / N alone left an ulp that
       * 1 / sqrt(eps) turned into ~1e-3 (difftest seed 1643). */
      const float* x = (const float*)in->data + row * N;
      float* o = (float*)out->data + row * N;
      const float* W = w ? (const float*)w->data : NULL;
      const float* B = b ? (const float*)b->data : NULL;
      const float fm = jb->ro->sum(x, (size_t)N) / (float)N;
      const float ss = jb->ro->dev_sq_sum(o, x, fm, (size_t)N) / (float)N;
      const float c = jb->ro->sum(o, (size_t)N) / (float)N;
      const float var = ss - c * c > 0.0f ? ss - c * c : 0.0f;
      float fr;
      mu = (double)fm + (double)c;
      rs = 1.0 / sqrt((double)var + eps);
      fr = (float)rs;
      if (W && B)
        for (j = 0; j < N; ++j) o[j] = (o[j] - c) * fr * W[j] + B[j];
      else
        for (j = 0; j < N; ++j) {
          float v = (o[j] - c) * fr;
          if (W) v *= W[j];
          if (B) v += B[j];
          o[j] = v;
        }
    } else {
      moments(in, row * N, N, eps, &mu, &rs);
      for (j = 0; j < N; ++j) {
        double v = (at_logical(in, row * N + j) - mu) * rs;
        if (w) v *= at_logical(w, j);
        if (b) v += at_logical(b, j);
        pterun_store_f64(out->data, out->dtype, pk_logical_offset(out, row * N + j), v);
      }
    }
    /* stats are [M] values in logical order of mean/rstd */
    pterun_store_f64(mean->data, mean->dtype, pk_logical_offset(mean, row), mu);
    pterun_store_f64(rstd->data, rstd->dtype, pk_logical_offset(rstd, row), rs);
  }
}

/* ---- native_layer_norm.out(input, int[] normalized_shape, Tensor? weight,
 *      Tensor? bias, float eps, *, out0, out1 (mean), out2 (rstd)) ---- */
PTERUN_KERNEL(pk_native_layer_norm_out) {
  pterun_tensor *in, *w, *b, *out, *mean, *rstd;
  const int64_t* ns;
  size_t nn, k;
  double eps;
  int64_t axis, M = 1, N = 1, j, stat_sizes[PTERUN_MAX_RANK];
  bool fast;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "normalized_shape", &ns, &nn, 0));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "weight", &w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 3, "bias", &b));
  PTERUN_TRY(pterun_arg_double(ctx, args, 4, "eps", &eps));
  PTERUN_TRY(get_outs3(ctx, args, 5, &out, &mean, &rstd));
  if (!pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "input", in->dtype, "is not a floating point dtype");
  if (nn == 0 || nn > in->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'normalized_shape': %zu dims for an input of rank %d", nn,
                           (int)in->rank);
  axis = (int64_t)in->rank - (int64_t)nn;
  for (k = 0; k < nn; ++k) {
    if (in->sizes[axis + (int64_t)k] != ns[k])
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'normalized_shape': does not match the input's trailing "
                             "dims (dim %zu: %lld vs %lld)",
                             k, (long long)ns[k], (long long)in->sizes[axis + (int64_t)k]);
    N *= ns[k];
  }
  for (j = 0; j < axis; ++j) M *= in->sizes[j];
  PTERUN_TRY(check_affine(ctx, w, "weight", N));
  PTERUN_TRY(check_affine(ctx, b, "bias", N));
  if (out->dtype != in->dtype || !pterun_dtype_is_float(mean->dtype) ||
      !pterun_dtype_is_float(rstd->dtype))
    return pk_fail_dtype(ctx, "out", out->dtype,
                         "(and mean/rstd) must be floating point, "
                         "out matching input");
  /* mean/rstd keep the leading dims and have size 1 in the normalized ones. */
  for (j = 0; j < in->rank; ++j) stat_sizes[j] = j < axis ? in->sizes[j] : 1;
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_out_resize(ctx, mean, "mean", in->rank, stat_sizes));
  PTERUN_TRY(pterun_out_resize(ctx, rstd, "rstd", in->rank, stat_sizes));
  if (in->numel == 0) return PTERUN_STATUS_OK;
  if (!in->data || !out->data || !mean->data || !rstd->data)
    return PTERUN_FAIL_ARG(ctx, "a tensor has no data");
  fast = in->dtype == PTERUN_DTYPE_F32 && pterun_tensor_is_contiguous(in) &&
         pterun_tensor_is_contiguous(out) && (!w || w->dtype == PTERUN_DTYPE_F32) &&
         (!b || b->dtype == PTERUN_DTYPE_F32) && (!w || pterun_tensor_is_contiguous(w)) &&
         (!b || pterun_tensor_is_contiguous(b));
  {
    pk_layer_norm_job job = {in,   w, b,   out,  mean,
                             rstd, N, eps, fast, pterun_compute_f32_rowops_select()};
    pterun_parallelize_1d_tile(norm_pool(ctx, in->numel), layer_norm_rows, &job, (size_t)M,
                               norm_tile(N), norm_flags(ctx, in->numel, PK_LAYER_NORM_PS));
  }
  return PTERUN_STATUS_OK;
}

/* ---- native_group_norm.out(input, Tensor? weight, Tensor? bias, N, C, HxW,
 *      int group, float eps, *, out0, out1 (mean [N,G]), out2 (rstd [N,G])) ---- */
PTERUN_KERNEL(pk_native_group_norm_out) {
  pterun_tensor *in, *w, *b, *out, *mean, *rstd;
  int64_t N, C, HxW, G, n, g, c, k, cpg, stat_sizes[2];
  double eps;
  PTERUN_CHECK_NARGS(ctx, nargs, 12);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "bias", &b));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "N", &N));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "C", &C));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "HxW", &HxW));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "group", &G));
  PTERUN_TRY(pterun_arg_double(ctx, args, 7, "eps", &eps));
  PTERUN_TRY(get_outs3(ctx, args, 8, &out, &mean, &rstd));
  if (!pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "input", in->dtype, "is not a floating point dtype");
  if (N < 0 || C < 0 || HxW < 0 || G <= 0 || C % G != 0 || in->numel != N * C * HxW ||
      in->rank < 2 || in->sizes[0] != N || in->sizes[1] != C)
    return PTERUN_FAIL_ARG(ctx,
                           "bad group norm sizes: N=%lld C=%lld HxW=%lld group=%lld for an "
                           "input of %lld elements",
                           (long long)N, (long long)C, (long long)HxW, (long long)G,
                           (long long)in->numel);
  PTERUN_TRY(check_affine(ctx, w, "weight", C));
  PTERUN_TRY(check_affine(ctx, b, "bias", C));
  if (out->dtype != in->dtype || !pterun_dtype_is_float(mean->dtype) ||
      !pterun_dtype_is_float(rstd->dtype))
    return pk_fail_dtype(ctx, "out", out->dtype,
                         "(and mean/rstd) must be floating point, "
                         "out matching input");
  if (mean->rank != 2 || rstd->rank != 2)
    return PTERUN_FAIL_ARG(ctx, "mean and rstd must have rank 2 ([N, group])");
  stat_sizes[0] = N;
  stat_sizes[1] = G;
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_out_resize(ctx, mean, "mean", 2, stat_sizes));
  PTERUN_TRY(pterun_out_resize(ctx, rstd, "rstd", 2, stat_sizes));
  if (N * G == 0) return PTERUN_STATUS_OK;
  if (!mean->data || !rstd->data || (in->numel > 0 && (!in->data || !out->data)))
    return PTERUN_FAIL_ARG(ctx, "a tensor has no data");
  cpg = C / G;
  for (n = 0; n < N; ++n) {
    for (g = 0; g < G; ++g) {
      /* The group's elements are contiguous in logical order. */
      int64_t start = (n * C + g * cpg) * HxW;
      double mu, rs;
      moments(in, start, cpg * HxW, eps, &mu, &rs);
      for (c = g * cpg; c < (g + 1) * cpg; ++c) {
        double sc = rs * (w ? at_logical(w, c) : 1.0);
        double sh = (b ? at_logical(b, c) : 0.0) - mu * sc;
        int64_t base = (n * C + c) * HxW;
        for (k = 0; k < HxW; ++k) {
          double v = at_logical(in, base + k) * sc + sh;
          pterun_store_f64(out->data, out->dtype, pk_logical_offset(out, base + k), v);
        }
      }
      pterun_store_f64(mean->data, mean->dtype, pk_logical_offset(mean, n * G + g), mu);
      pterun_store_f64(rstd->data, rstd->dtype, pk_logical_offset(rstd, n * G + g), rs);
    }
  }
  return PTERUN_STATUS_OK;
}
