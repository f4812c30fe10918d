/* Batch normalisation: _native_batch_norm_legit_no_training.out and the two
 * _native_batch_norm_legit overloads (training statistics included). */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* Per-channel element walk over (N, C, spatial...) in any layout. */
typedef struct bn_iter {
  int64_t n, c, inner; /* batch, channels, spatial element count */
  int64_t sp_sizes[PTERUN_MAX_RANK];
  int sp_rank;
} bn_iter;

/* Element offset of spatial position p (row-major over the spatial dims). */
static int64_t sp_offset(const bn_iter* it, const pterun_tensor* t, int64_t p) {
  int64_t off = 0;
  int d;
  for (d = it->sp_rank - 1; d >= 0; --d) {
    off += (p % it->sp_sizes[d]) * t->strides[2 + d];
    p /= it->sp_sizes[d];
  }
  return off;
}

/* Computes batch mean and biased variance of channel c (double). */
static void channel_stats(const bn_iter* it, const pterun_tensor* x, int64_t c, double* mean,
                          double* var) {
  int64_t n, p, cnt = it->n * it->inner;
  double s = 0.0, ss = 0.0, m;
  for (n = 0; n < it->n; ++n)
    for (p = 0; p < it->inner; ++p)
      s += pterun_load_f64(x->data, x->dtype,
                           n * x->strides[0] + c * x->strides[1] + sp_offset(it, x, p));
  m = cnt ? s / (double)cnt : 0.0;
  /* Second pass for the variance: numerically safer than E[x^2]-m^2. */
  for (n = 0; n < it->n; ++n)
    for (p = 0; p < it->inner; ++p) {
      double v = pterun_load_f64(x->data, x->dtype,
                                 n * x->strides[0] + c * x->strides[1] + sp_offset(it, x, p)) -
                 m;
      ss += v * v;
    }
  *mean = m;
  *var = cnt ? ss / (double)cnt : 0.0;
}

/* The spatial dims of t flatten to one stride (NCHW: 1, channels-last: C). */
static int sp_flat(const bn_iter* it, const pterun_tensor* t, int64_t* st) {
  int64_t s = 0, expect = 0;
  int d;
  for (d = it->sp_rank - 1; d >= 0; --d) {
    if (it->sp_sizes[d] == 1) continue;
    if (s == 0) {
      s = t->strides[2 + d];
      expect = s * it->sp_sizes[d];
    } else {
      if (t->strides[2 + d] != expect) return 0;
      expect *= it->sp_sizes[d];
    }
  }
  *st = s ? s : 1;
  return 1;
}

/* out = x * scale + shift for channel c. */
static void channel_apply(const bn_iter* it, const pterun_tensor* x, pterun_tensor* out, int64_t c,
                          double scale, double shift) {
  int64_t n, p;
  if (x->dtype == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_F32) {
    float fs = (float)scale, fb = (float)shift;
    for (n = 0; n < it->n; ++n) {
      const float* xp = (const float*)x->data + n * x->strides[0] + c * x->strides[1];
      float* op = (float*)out->data + n * out->strides[0] + c * out->strides[1];
      int64_t xs, os;
      if (sp_flat(it, x, &xs) && sp_flat(it, out, &os)) {
        /* The spatial dims are one strided run. */
        if (xs == 1 && os == 1)
          for (p = 0; p < it->inner; ++p) op[p] = xp[p] * fs + fb;
        else
          for (p = 0; p < it->inner; ++p) op[p * os] = xp[p * xs] * fs + fb;
      } else {
        for (p = 0; p < it->inner; ++p)
          op[sp_offset(it, out, p)] = xp[sp_offset(it, x, p)] * fs + fb;
      }
    }
    return;
  }
  for (n = 0; n < it->n; ++n)
    for (p = 0; p < it->inner; ++p) {
      double v = pterun_load_f64(x->data, x->dtype,
                                 n * x->strides[0] + c * x->strides[1] + sp_offset(it, x, p));
      pterun_store_f64(out->data, out->dtype,
                       n * out->strides[0] + c * out->strides[1] + sp_offset(it, out, p),
                       v * scale + shift);
    }
}

pterun_status pk_channel_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, int64_t c, int opt, pterun_tensor** t) {
  if (opt)
    PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, i, name, t));
  else
    PTERUN_TRY(pterun_arg_tensor(ctx, args, i, name, t));
  if (*t == NULL) return PTERUN_STATUS_OK;
  PTERUN_TRY(pk_check_float(ctx, *t, name));
  PTERUN_TRY(pterun_check_data(ctx, *t, name));
  if ((*t)->rank != 1 || (*t)->sizes[0] != c)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': expected shape [%" PRId64 "]", name, c);
  return PTERUN_STATUS_OK;
}

static double chan(const pterun_tensor* t, int64_t c, double dflt) {
  return t ? pterun_load_f64(t->data, t->dtype, c * t->strides[0]) : dflt;
}

/*
 * The shared body. in_ix: index of input; w/b follow it. rm_ix/rv_ix: running
 * stats (-1 if absent). training: use batch statistics (and update the
 * running ones when present). outs_ix: first of the three outs.
 */
/* Channels at most for the channels-last path's per-channel factors. */
#define BN_CL_MAX_C 1024

/* x and out: float32, 4-D, dense channels-last, of one shape. */
static int bn_channels_last(const pterun_tensor* x, const pterun_tensor* out, int64_t c) {
  if (x->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || x->rank != 4 ||
      out->rank != 4 || c < 1 || c > BN_CL_MAX_C || !pterun_is_channels_last4(x) ||
      !pterun_is_channels_last4(out))
    return 0;
  for (int d = 0; d < 4; ++d)
    if (x->sizes[d] != out->sizes[d]) return 0;
  return 1;
}

static pterun_status batch_norm(pterun_kernel_context* ctx, pterun_value** args, int rm_ix,
                                int training, double momentum, double eps, size_t outs_ix) {
  pterun_tensor *x, *w, *b, *rm = NULL, *rv = NULL, *out, *smean, *sinv;
  bn_iter it;
  int64_t c, zero = 0;
  int d;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pk_check_float(ctx, x, "input"));
  PTERUN_TRY(pterun_check_data(ctx, x, "input"));
  if (x->rank < 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': expected rank >= 2, got %d", (int)x->rank);
  it.n = x->sizes[0];
  it.c = x->sizes[1];
  it.sp_rank = x->rank - 2;
  it.inner = 1;
  for (d = 0; d < it.sp_rank; ++d) it.inner *= (it.sp_sizes[d] = x->sizes[2 + d]);
  PTERUN_TRY(pk_channel_arg(ctx, args, 1, "weight", it.c, 1, &w));
  PTERUN_TRY(pk_channel_arg(ctx, args, 2, "bias", it.c, 1, &b));
  if (rm_ix >= 0) {
    PTERUN_TRY(pk_channel_arg(ctx, args, (size_t)rm_ix, "running_mean", it.c, 1, &rm));
    PTERUN_TRY(pk_channel_arg(ctx, args, (size_t)rm_ix + 1, "running_var", it.c, 1, &rv));
  }
  if (!training && (rm == NULL || rv == NULL))
    return PTERUN_FAIL_ARG(ctx, "running_mean and running_var are required when not training");
  PTERUN_TRY(pterun_arg_tensor(ctx, args, outs_ix, "out", &out));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, outs_ix + 1, "save_mean", &smean));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, outs_ix + 2, "save_invstd", &sinv));
  PTERUN_TRY(pk_check_same_dtype(ctx, x, "input", out, "out"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", x));
  if (training) {
    PTERUN_TRY(pk_check_float(ctx, smean, "save_mean"));
    PTERUN_TRY(pk_check_float(ctx, sinv, "save_invstd"));
    PTERUN_TRY(pterun_out_resize(ctx, smean, "save_mean", 1, &it.c));
    PTERUN_TRY(pterun_out_resize(ctx, sinv, "save_invstd", 1, &it.c));
  } else {
    /* ATen returns empty statistics in inference mode. */
    PTERUN_TRY(pterun_out_resize(ctx, smean, "save_mean", 1, &zero));
    PTERUN_TRY(pterun_out_resize(ctx, sinv, "save_invstd", 1, &zero));
  }
  if (!training && x->numel > 0 && bn_channels_last(x, out, it.c)) {
    /* Channels-last float32 (the layout pass's chains): pixel rows of C
     * channels, each element the same float multiply-add as below. */
    float fs[BN_CL_MAX_C], fb[BN_CL_MAX_C];
    for (c = 0; c < it.c; ++c) {
      const double scale = chan(w, c, 1.0) * (1.0 / sqrt(chan(rv, c, 1.0) + eps));
      fs[c] = (float)scale;
      fb[c] = (float)(chan(b, c, 0.0) - chan(rm, c, 0.0) * scale);
    }
    const float* xp = x->data;
    float* op = out->data;
    for (int64_t e = 0; e < x->numel; e += it.c)
      for (c = 0; c < it.c; ++c) op[e + c] = xp[e + c] * fs[c] + fb[c];
    return PTERUN_STATUS_OK;
  }
  for (c = 0; c < it.c; ++c) {
    double mean, var, invstd, scale;
    if (training) {
      channel_stats(&it, x, c, &mean, &var);
    } else {
      mean = chan(rm, c, 0.0);
      var = chan(rv, c, 1.0);
    }
    invstd = 1.0 / sqrt(var + eps);
    scale = chan(w, c, 1.0) * invstd;
    if (x->numel > 0) channel_apply(&it, x, out, c, scale, chan(b, c, 0.0) - mean * scale);
    if (training) {
      int64_t cnt = it.n * it.inner;
      pterun_store_f64(smean->data, smean->dtype, c * smean->strides[0], mean);
      pterun_store_f64(sinv->data, sinv->dtype, c * sinv->strides[0], invstd);
      if (rm != NULL && rv != NULL) {
        /* Running variance uses the unbiased estimate. */
        double unbiased = cnt > 1 ? var * (double)cnt / (double)(cnt - 1) : var;
        pterun_store_f64(rm->data, rm->dtype, c * rm->strides[0],
                         (1.0 - momentum) * chan(rm, c, 0.0) + momentum * mean);
        pterun_store_f64(rv->data, rv->dtype, c * rv->strides[0],
                         (1.0 - momentum) * chan(rv, c, 0.0) + momentum * unbiased);
      }
    }
  }
  return PTERUN_STATUS_OK;
}

/* aten::_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias,
 *   Tensor running_mean, Tensor running_var, float momentum, float eps, *,
 *   Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) */
PTERUN_KERNEL(pk__native_batch_norm_legit_no_training_out) {
  double momentum, eps;
  PTERUN_CHECK_NARGS(ctx, nargs, 11);
  PTERUN_TRY(pterun_arg_double(ctx, args, 5, "momentum", &momentum));
  PTERUN_TRY(pterun_arg_double(ctx, args, 6, "eps", &eps));
  return batch_norm(ctx, args, 3, 0, momentum, eps, 7);
}

/* aten::_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias,
 *   Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum,
 *   float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) */
PTERUN_KERNEL(pk__native_batch_norm_legit_out) {
  double momentum, eps;
  bool training;
  PTERUN_CHECK_NARGS(ctx, nargs, 12);
  PTERUN_TRY(pk_arg_bool(ctx, args, 5, "training", &training));
  PTERUN_TRY(pterun_arg_double(ctx, args, 6, "momentum", &momentum));
  PTERUN_TRY(pterun_arg_double(ctx, args, 7, "eps", &eps));
  return batch_norm(ctx, args, 3, training, momentum, eps, 8);
}

/* aten::_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight, Tensor? bias,
 *   bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean,
 *   Tensor(c!) save_invstd) */
PTERUN_KERNEL(pk__native_batch_norm_legit_no_stats_out) {
  double momentum, eps;
  bool training;
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "training", &training));
  PTERUN_TRY(pterun_arg_double(ctx, args, 4, "momentum", &momentum));
  PTERUN_TRY(pterun_arg_double(ctx, args, 5, "eps", &eps));
  /* Without running statistics the batch statistics are always used. */
  return batch_norm(ctx, args, -1, 1, momentum, eps, 6);
}
