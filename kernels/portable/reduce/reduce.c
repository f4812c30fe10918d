/* Reductions: sum, mean, prod, amax/amin, argmax/argmin, max/min (dim and
 * unary), any/all, var/var_mean, logsumexp; and cumsum (a scan). */
#include <math.h>

#include "kernels/portable/ew.h"

#define RED_CHUNK 256

/* A reduction of `in` over a set of dims. Out element n (logical order) reads
 * the elements at kv-offset(n) + (offsets of the reduced dims). */
typedef struct pk_red {
  pterun_tensor kv; /* kept dims, shaped like out, with in's strides */
  pterun_iter rit;  /* rows over the reduced dims (coalesced) */
  int64_t rinner, rrows, rstride, rnumel;
} pk_red;

/* dims == NULL (or ndims == 0): reduce over every dim. */
static pterun_status red_init(pterun_kernel_context* ctx, pk_red* r, const pterun_tensor* in,
                              const int64_t* dims, size_t ndims, bool keepdim) {
  bool mask[PTERUN_MAX_RANK] = {false};
  pterun_tensor rv;
  size_t k;
  int d, nk = 0, nr = 0;
  if (dims == NULL || ndims == 0) {
    for (d = 0; d < in->rank; ++d) mask[d] = true;
  } else {
    for (k = 0; k < ndims; ++k) {
      int64_t w;
      PTERUN_TRY(pk_wrap_dim(ctx, dims[k], in->rank, &w));
      if (in->rank == 0) continue;
      if (mask[w]) return PTERUN_FAIL_ARG(ctx, "arg 'dim': dim %d appears multiple times", (int)w);
      mask[w] = true;
    }
  }
  memset(&r->kv, 0, sizeof(r->kv));
  memset(&rv, 0, sizeof(rv));
  r->kv.data = in->data;
  r->kv.dtype = in->dtype;
  r->rnumel = 1;
  for (d = 0; d < in->rank; ++d) {
    if (mask[d]) {
      rv.sizes[nr] = in->sizes[d];
      rv.strides[nr++] = in->strides[d];
      r->rnumel *= in->sizes[d];
      if (keepdim) {
        r->kv.sizes[nk] = 1;
        r->kv.strides[nk++] = 0;
      }
    } else {
      r->kv.sizes[nk] = in->sizes[d];
      r->kv.strides[nk++] = in->strides[d];
    }
  }
  r->kv.rank = (uint8_t)nk;
  rv.rank = (uint8_t)nr;
  r->kv.numel = 1;
  for (d = 0; d < nk; ++d) r->kv.numel *= r->kv.sizes[d];
  pterun_iter_init(&r->rit, &rv, NULL, 0);
  if (r->rnumel == 0) {
    r->rinner = r->rrows = r->rstride = 0;
  } else {
    r->rinner = pk_iter_rows(&r->rit);
    r->rstride = r->rit.strides[0][r->rit.rank];
    r->rrows = r->rnumel / r->rinner;
  }
  return PTERUN_STATUS_OK;
}

typedef enum red_kind {
  RK_SUM,
  RK_PROD,
  RK_MAX,
  RK_MIN,
  RK_ANY,
  RK_ALL,
  RK_WELFORD,
  RK_SUMEXP
} red_kind;

typedef struct red_acc {
  double s, mean, m2, shift; /* float state; shift: RK_SUMEXP subtracts it */
  int64_t i;                 /* integer state */
  int64_t idx, count;        /* arg index, elements seen */
} red_acc;

static void acc_init(red_acc* a, red_kind k) {
  memset(a, 0, sizeof(*a));
  if (k == RK_PROD) a->s = 1.0, a->i = 1;
  if (k == RK_ALL) a->i = 1;
  if (k == RK_MAX) a->s = -INFINITY, a->i = INT64_MIN;
  if (k == RK_MIN) a->s = INFINITY, a->i = INT64_MAX;
}

static void acc_f64(red_acc* a, red_kind k, const double* v, int64_t n) {
  int64_t j;
  switch (k) {
    case RK_SUM: {
      double s = 0;
      for (j = 0; j < n; ++j) s += v[j];
      a->s += s;
      break;
    }
    case RK_PROD:
      for (j = 0; j < n; ++j) a->s *= v[j];
      break;
    case RK_MAX:
    case RK_MIN:
      /* First NaN wins and sticks (ATen propagates NaN; argmax points at it). */
      if (a->s != a->s) break;
      for (j = 0; j < n; ++j) {
        if (v[j] != v[j] || (k == RK_MAX ? v[j] > a->s : v[j] < a->s)) {
          a->s = v[j];
          a->idx = a->count + j;
          if (v[j] != v[j]) break;
        }
      }
      break;
    case RK_ANY:
      for (j = 0; j < n; ++j) a->i |= v[j] != 0;
      break;
    case RK_ALL:
      for (j = 0; j < n; ++j) a->i &= v[j] != 0;
      break;
    case RK_WELFORD:
      for (j = 0; j < n; ++j) {
        double delta = v[j] - a->mean;
        a->mean += delta / (double)(a->count + j + 1);
        a->m2 += delta * (v[j] - a->mean);
      }
      break;
    case RK_SUMEXP:
      for (j = 0; j < n; ++j) a->s += exp(v[j] - a->shift);
      break;
  }
  a->count += n;
}

static void acc_i64(red_acc* a, red_kind k, const int64_t* v, int64_t n) {
  int64_t j;
  switch (k) {
    case RK_SUM:
      for (j = 0; j < n; ++j) a->i = pk_wadd(a->i, v[j]);
      break;
    case RK_PROD:
      for (j = 0; j < n; ++j) a->i = pk_wmul(a->i, v[j]);
      break;
    case RK_MAX:
    case RK_MIN:
      for (j = 0; j < n; ++j) {
        if (a->count + j == 0 || (k == RK_MAX ? v[j] > a->i : v[j] < a->i)) {
          a->i = v[j];
          a->idx = a->count + j;
        }
      }
      break;
    case RK_ANY:
      for (j = 0; j < n; ++j) a->i |= v[j] != 0;
      break;
    case RK_ALL:
      for (j = 0; j < n; ++j) a->i &= v[j] != 0;
      break;
    default: break; /* float-only kinds never take this path */
  }
  a->count += n;
}

/* Folds every element reduced into out element whose kept offset is base. */
static void red_visit(pk_red* r, const pterun_tensor* in, int64_t base, red_kind k, red_acc* a,
                      int as_float, int cdt) {
  int64_t row, c;
  /* any/all over contiguous bytes (bool masks in attention): test the bytes
   * in place instead of widening each one to int64. */
  const int bytes = (k == RK_ANY || k == RK_ALL) && r->rstride == 1 &&
                    (in->dtype == PTERUN_DTYPE_BOOL || in->dtype == PTERUN_DTYPE_U8 ||
                     in->dtype == PTERUN_DTYPE_I8);
  for (row = 0; row < r->rrows; ++row, pterun_iter_next(&r->rit)) {
    int64_t off = base + r->rit.off[0];
    if (bytes) {
      const unsigned char* p = (const unsigned char*)in->data + off;
      unsigned char any = 0, all = 1;
      for (c = 0; c < r->rinner; ++c) {
        any |= p[c];
        all &= p[c] != 0;
      }
      if (k == RK_ANY)
        a->i |= any != 0;
      else
        a->i &= all;
      a->count += r->rinner;
      continue;
    }
    for (c = 0; c < r->rinner; c += RED_CHUNK) {
      int64_t m = r->rinner - c < RED_CHUNK ? r->rinner - c : RED_CHUNK;
      if (as_float) {
        double buf[RED_CHUNK];
        pk_load_row_f64(buf, in, off + c * r->rstride, r->rstride, m, cdt);
        acc_f64(a, k, buf, m);
      } else {
        int64_t buf[RED_CHUNK];
        pk_load_row_i64(buf, in, off + c * r->rstride, r->rstride, m);
        acc_i64(a, k, buf, m);
      }
    }
  }
}

/* ---- argument helpers ---- */

/* `int[1]? dim` (None or [] reduce all). */
static pterun_status arg_dims(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                              const int64_t** dims, size_t* ndims) {
  return pterun_arg_int_list(ctx, args, i, "dim", dims, ndims, 1);
}

/* `ScalarType? dtype`: -1 for None. */
static pterun_status arg_opt_dtype(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                   int* dt) {
  int64_t v;
  int has;
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, i, "dtype", &v, &has));
  *dt = has ? (int)v : -1;
  if (has && (v < 0 || v >= PTERUN_DTYPE_COUNT_ || !pk_is_real_dtype((int)v)))
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': %lld is not a supported dtype", (long long)v);
  return PTERUN_STATUS_OK;
}

static pterun_status check_data2(pterun_kernel_context* ctx, const pterun_tensor* in,
                                 const pterun_tensor* out) {
  if ((in->numel > 0 && in->data == NULL) || (out->numel > 0 && out->data == NULL))
    return PTERUN_FAIL_ARG(ctx, "a tensor has no data");
  return PTERUN_STATUS_OK;
}

static pterun_status need_nonempty(pterun_kernel_context* ctx, const pk_red* r,
                                   const pterun_tensor* out) {
  if (r->rnumel == 0 && out->numel > 0)
    return PTERUN_FAIL_ARG(ctx, "cannot reduce over a zero-size dimension without an identity");
  return PTERUN_STATUS_OK;
}

/* Writes result of an accumulator into out[off]. */
static void put_f(pterun_tensor* out, int64_t off, double v) {
  pterun_store_f64(out->data, out->dtype, off, v);
}

/* Sums (means) of float32 inputs whose reduced elements are one strided run
 * per output (a mean over H x W): PK_SUM_LANES outputs at a time, each with
 * acc_f64's arithmetic in its order (double partial sums per chunk of
 * RED_CHUNK, added to the total), so the chains overlap instead of waiting
 * on each other's additions. Returns the outputs done; `it` follows. */
#define PK_SUM_LANES 8
static int64_t sum_f32_runs(const pk_red* r, const pterun_tensor* in, pterun_tensor* out,
                            pterun_iter* it, int divide) {
  const float* x = (const float*)in->data;
  const int64_t len = r->rinner, st = r->rstride;
  int64_t n = 0;
  for (; n + PK_SUM_LANES <= out->numel; n += PK_SUM_LANES) {
    int64_t base[PK_SUM_LANES], at[PK_SUM_LANES];
    double total[PK_SUM_LANES] = {0};
    for (int l = 0; l < PK_SUM_LANES; ++l, pterun_iter_next(it)) {
      base[l] = it->off[1] + r->rit.off[0];
      at[l] = it->off[0];
    }
    for (int64_t c = 0; c < len; c += RED_CHUNK) {
      const int64_t m = len - c < RED_CHUNK ? len - c : RED_CHUNK;
      /* Spelled out: the partial sums must stay in registers. */
      double p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0;
      /* Counted by element, not by offset: a reduced run of one element
       * may have stride 0 (a size-1 dim's stride means nothing). */
      for (int64_t i = c, j = c * st; i < c + m; ++i, j += st) {
        p0 += (double)x[base[0] + j];
        p1 += (double)x[base[1] + j];
        p2 += (double)x[base[2] + j];
        p3 += (double)x[base[3] + j];
        p4 += (double)x[base[4] + j];
        p5 += (double)x[base[5] + j];
        p6 += (double)x[base[6] + j];
        p7 += (double)x[base[7] + j];
      }
      const double part[PK_SUM_LANES] = {p0, p1, p2, p3, p4, p5, p6, p7};
      for (int l = 0; l < PK_SUM_LANES; ++l) total[l] += part[l];
    }
    for (int l = 0; l < PK_SUM_LANES; ++l)
      put_f(out, at[l], divide ? total[l] / (double)r->rnumel : total[l]);
  }
  return n;
}

/* Sums (means) over H and W of a channels-last float32 image (the layout
 * pass's chains end in a global mean): per image, a block of channels at a
 * time, every channel's partial sums run along the pixels in order, so each
 * output has acc_f64's arithmetic (double partial sums per chunk of
 * RED_CHUNK pixels, added to the total) while the loads stay contiguous.
 * 0: not this case (nothing written), else 1. */
#define PK_CL_BLOCK 64
static int sum_f32_channels_last(const pk_red* r, const pterun_tensor* in, pterun_tensor* out,
                                 int divide) {
  const int64_t N = in->sizes[0], C = in->sizes[1], HW = in->sizes[2] * in->sizes[3];
  if (in->rank != 4 || in->dtype != PTERUN_DTYPE_F32 || in->dim_order[1] != 2 ||
      in->dim_order[2] != 3 || in->dim_order[3] != 1 || r->rrows != 1 || HW < 2 ||
      r->rinner != HW || r->rstride != C || out->numel != N * C || C < 1 ||
      (out->rank != 2 && out->rank != 4) || out->sizes[0] != N || out->sizes[1] != C)
    return 0;
  const float* x = (const float*)in->data;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c0 = 0; c0 < C; c0 += PK_CL_BLOCK) {
      const int64_t nc = C - c0 < PK_CL_BLOCK ? C - c0 : PK_CL_BLOCK;
      double total[PK_CL_BLOCK] = {0}, part[PK_CL_BLOCK];
      for (int64_t p0 = 0; p0 < HW; p0 += RED_CHUNK) {
        const int64_t m = HW - p0 < RED_CHUNK ? HW - p0 : RED_CHUNK;
        for (int64_t c = 0; c < nc; ++c) part[c] = 0;
        for (int64_t p = p0; p < p0 + m; ++p) {
          const float* row = x + (n * HW + p) * C + c0;
          for (int64_t c = 0; c < nc; ++c) part[c] += (double)row[c];
        }
        for (int64_t c = 0; c < nc; ++c) total[c] += part[c];
      }
      for (int64_t c = 0; c < nc; ++c)
        put_f(out, n * out->strides[0] + (c0 + c) * out->strides[1],
              divide ? total[c] / (double)r->rnumel : total[c]);
    }
  return 1;
}

/*
 * Generic "reduce self over dims into out" runner for the value reductions.
 * mode: RK_SUM (sum), RK_PROD, RK_MAX/RK_MIN (amax/amin), RK_ANY/RK_ALL;
 * divide: mean.
 */
static pterun_status run_reduce(pterun_kernel_context* ctx, pterun_tensor* in, const int64_t* dims,
                                size_t ndims, bool keepdim, pterun_tensor* out, red_kind kind,
                                int divide) {
  pk_red r;
  pterun_iter it;
  const pterun_tensor* kvp;
  int64_t n;
  int as_float;
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  PTERUN_TRY(red_init(ctx, &r, in, dims, ndims, keepdim));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", r.kv.rank, r.kv.sizes));
  PTERUN_TRY(check_data2(ctx, in, out));
  if (kind == RK_MAX || kind == RK_MIN) PTERUN_TRY(need_nonempty(ctx, &r, out));
  /* Accumulate in float when either side is float (mean, sum into float). */
  as_float = pterun_dtype_is_float(out->dtype) ||
             (pterun_dtype_is_float(in->dtype) && kind != RK_ANY && kind != RK_ALL);
  if (kind == RK_ANY || kind == RK_ALL) as_float = pterun_dtype_is_float(in->dtype);
  kvp = &r.kv;
  pterun_iter_init(&it, out, &kvp, 1);
  n = 0;
  if (kind == RK_SUM && as_float && sum_f32_channels_last(&r, in, out, divide))
    return PTERUN_STATUS_OK;
  if (kind == RK_SUM && as_float && in->dtype == PTERUN_DTYPE_F32 && r.rrows == 1)
    n = sum_f32_runs(&r, in, out, &it, divide);
  for (; n < out->numel; ++n, pterun_iter_next(&it)) {
    red_acc a;
    acc_init(&a, kind);
    red_visit(&r, in, it.off[1], kind, &a, as_float, out->dtype);
    if (kind == RK_ANY || kind == RK_ALL)
      pterun_store_i64(out->data, out->dtype, it.off[0], a.i);
    else if (as_float)
      put_f(out, it.off[0], divide ? a.s / (double)r.rnumel : a.s);
    else
      pterun_store_i64(out->data, out->dtype, it.off[0], a.i);
  }
  return PTERUN_STATUS_OK;
}

/* sum.IntList_out(self, int[1]? dim, bool keepdim, *, ScalarType? dtype, out) */
PTERUN_KERNEL(pk_sum_intlist_out) {
  pterun_tensor *in, *out;
  const int64_t* dims;
  size_t nd;
  bool keepdim;
  int dt;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(arg_opt_dtype(ctx, args, 3, &dt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  if (dt >= 0 && dt != out->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "does not match the requested dtype");
  if (out->dtype == PTERUN_DTYPE_BOOL)
    return pk_fail_dtype(ctx, "out", out->dtype, "is not supported by sum");
  /* The sum is computed in out's dtype (ATen infers it from out). */
  return run_reduce(ctx, in, dims, nd, keepdim, out, RK_SUM, 0);
}

static pterun_status run_mean(pterun_kernel_context* ctx, pterun_tensor* in, const int64_t* dims,
                              size_t nd, bool keepdim, int dt, pterun_tensor* out) {
  if (dt >= 0 && dt != out->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "does not match the requested dtype");
  if (!pterun_dtype_is_float(out->dtype) || (dt < 0 && !pterun_dtype_is_float(in->dtype)))
    return PTERUN_FAIL_ARG(ctx,
                           "mean: could not infer output dtype; input must be floating point "
                           "or dtype given (self %s, out %s)",
                           pterun_dtype_name(in->dtype), pterun_dtype_name(out->dtype));
  return run_reduce(ctx, in, dims, nd, keepdim, out, RK_SUM, 1);
}

/* mean.out(self, int[1]? dim, bool keepdim, *, ScalarType? dtype, out) */
PTERUN_KERNEL(pk_mean_out) {
  pterun_tensor *in, *out;
  const int64_t* dims;
  size_t nd;
  bool keepdim;
  int dt;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(arg_opt_dtype(ctx, args, 3, &dt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  return run_mean(ctx, in, dims, nd, keepdim, dt, out);
}

/* mean.dtype_out(self, *, ScalarType? dtype, out) */
PTERUN_KERNEL(pk_mean_dtype_out) {
  pterun_tensor *in, *out;
  int dt;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_opt_dtype(ctx, args, 1, &dt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return run_mean(ctx, in, NULL, 0, false, dt, out);
}

/* prod.int_out(self, int dim, bool keepdim, *, dtype?, out) / prod.out(self, *, dtype?, out) */
static pterun_status run_prod(pterun_kernel_context* ctx, pterun_tensor* in, const int64_t* dims,
                              size_t nd, bool keepdim, int dt, pterun_tensor* out) {
  if (dt >= 0 && dt != out->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "does not match the requested dtype");
  if (out->dtype == PTERUN_DTYPE_BOOL)
    return pk_fail_dtype(ctx, "out", out->dtype, "is not supported by prod");
  return run_reduce(ctx, in, dims, nd, keepdim, out, RK_PROD, 0);
}
PTERUN_KERNEL(pk_prod_int_out) {
  pterun_tensor *in, *out;
  int64_t dim;
  bool keepdim;
  int dt;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(arg_opt_dtype(ctx, args, 3, &dt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  return run_prod(ctx, in, &dim, 1, keepdim, dt, out);
}
PTERUN_KERNEL(pk_prod_out) {
  pterun_tensor *in, *out;
  int dt;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_opt_dtype(ctx, args, 1, &dt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return run_prod(ctx, in, NULL, 0, false, dt, out);
}

/* amax/amin.out(self, int[1] dim=[], bool keepdim, *, out) */
static pterun_status run_amax(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                              red_kind kind) {
  pterun_tensor *in, *out;
  const int64_t* dims;
  size_t nd;
  bool keepdim;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  if (out->dtype != in->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "must match self's dtype");
  return run_reduce(ctx, in, dims, nd, keepdim, out, kind, 0);
}
PTERUN_KERNEL(pk_amax_out) {
  return run_amax(ctx, args, nargs, RK_MAX);
}
PTERUN_KERNEL(pk_amin_out) {
  return run_amax(ctx, args, nargs, RK_MIN);
}

/* max.unary_out / min.unary_out(self, *, out): full reduction to rank 0. */
static pterun_status run_unary_max(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                   red_kind kind) {
  pterun_tensor *in, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  if (!pk_can_cast(in->dtype, out->dtype))
    return pk_fail_dtype(ctx, "out", out->dtype, "cannot hold self's dtype");
  return run_reduce(ctx, in, NULL, 0, false, out, kind, 0);
}
PTERUN_KERNEL(pk_max_unary_out) {
  return run_unary_max(ctx, args, nargs, RK_MAX);
}
PTERUN_KERNEL(pk_min_unary_out) {
  return run_unary_max(ctx, args, nargs, RK_MIN);
}

/* any/all: all_out(self, out), dims_out(self, int[]? dim, keepdim, out),
 * out(self, int dim, keepdim, out). */
static pterun_status run_anyall(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                red_kind kind, int form) {
  pterun_tensor *in, *out;
  const int64_t* dims = NULL;
  size_t nd = 0;
  int64_t dim;
  bool keepdim = false;
  PTERUN_CHECK_NARGS(ctx, nargs, form == 0 ? 3 : 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  if (form == 1) PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  if (form == 2) {
    PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
    dims = &dim;
    nd = 1;
  }
  if (form != 0) PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, form == 0 ? 1 : 3, "out", &out));
  return run_reduce(ctx, in, dims, nd, keepdim, out, kind, 0);
}
PTERUN_KERNEL(pk_any_all_out) {
  return run_anyall(ctx, args, nargs, RK_ANY, 0);
}
PTERUN_KERNEL(pk_any_dims_out) {
  return run_anyall(ctx, args, nargs, RK_ANY, 1);
}
PTERUN_KERNEL(pk_any_out) {
  return run_anyall(ctx, args, nargs, RK_ANY, 2);
}
PTERUN_KERNEL(pk_all_all_out) {
  return run_anyall(ctx, args, nargs, RK_ALL, 0);
}
PTERUN_KERNEL(pk_all_dims_out) {
  return run_anyall(ctx, args, nargs, RK_ALL, 1);
}
PTERUN_KERNEL(pk_all_out) {
  return run_anyall(ctx, args, nargs, RK_ALL, 2);
}

/* ---- value + index reductions ---- */

/* Reduces into optional values (self's dtype) and optional indices (int64). */
static pterun_status run_arg(pterun_kernel_context* ctx, pterun_tensor* in, const int64_t* dims,
                             size_t nd, bool keepdim, pterun_tensor* vals, pterun_tensor* idx,
                             red_kind kind) {
  pk_red r;
  pterun_iter it;
  const pterun_tensor* kvp[2];
  pterun_tensor* shape_of = vals ? vals : idx;
  int64_t n;
  int as_float = pterun_dtype_is_float(in->dtype);
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  if (idx && idx->dtype != PTERUN_DTYPE_I64)
    return pk_fail_dtype(ctx, "indices", idx->dtype, "must be int64");
  if (vals && vals->dtype != in->dtype)
    return pk_fail_dtype(ctx, "values", vals->dtype, "must match self's dtype");
  PTERUN_TRY(red_init(ctx, &r, in, dims, nd, keepdim));
  if (vals) PTERUN_TRY(pterun_out_resize(ctx, vals, "values", r.kv.rank, r.kv.sizes));
  if (idx) PTERUN_TRY(pterun_out_resize(ctx, idx, "indices", r.kv.rank, r.kv.sizes));
  PTERUN_TRY(check_data2(ctx, in, shape_of));
  if (vals && idx) PTERUN_TRY(check_data2(ctx, in, idx));
  PTERUN_TRY(need_nonempty(ctx, &r, shape_of));
  /* Walk vals' layout; idx may have a different dim order, so track it too. */
  kvp[0] = &r.kv;
  kvp[1] = (vals && idx) ? idx : NULL;
  pterun_iter_init(&it, shape_of, kvp, 2);
  for (n = 0; n < shape_of->numel; ++n, pterun_iter_next(&it)) {
    red_acc a;
    acc_init(&a, kind);
    red_visit(&r, in, it.off[1], kind, &a, as_float, in->dtype);
    if (vals) {
      if (as_float)
        put_f(vals, it.off[0], a.s);
      else
        pterun_store_i64(vals->data, vals->dtype, it.off[0], a.i);
    }
    if (idx) ((int64_t*)idx->data)[vals ? it.off[2] : it.off[0]] = a.idx;
  }
  return PTERUN_STATUS_OK;
}

/* argmax/argmin.out(self, int? dim, bool keepdim, *, out) */
static pterun_status run_argmax(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                red_kind kind) {
  pterun_tensor *in, *out;
  int64_t dim;
  int has;
  bool keepdim;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 1, "dim", &dim, &has));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  /* dim None: over the flattened tensor, i.e. every dim. */
  return run_arg(ctx, in, has ? &dim : NULL, has ? 1 : 0, keepdim, NULL, out, kind);
}
PTERUN_KERNEL(pk_argmax_out) {
  return run_argmax(ctx, args, nargs, RK_MAX);
}
PTERUN_KERNEL(pk_argmin_out) {
  return run_argmax(ctx, args, nargs, RK_MIN);
}

/* max.dim_max / min.dim_min(self, int dim, bool keepdim, *, values, indices) */
static pterun_status run_dim_max(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                 red_kind kind) {
  pterun_tensor *in, *vals, *idx;
  int64_t dim;
  bool keepdim;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "values", &vals));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "indices", &idx));
  return run_arg(ctx, in, &dim, 1, keepdim, vals, idx, kind);
}
PTERUN_KERNEL(pk_max_dim_max) {
  return run_dim_max(ctx, args, nargs, RK_MAX);
}
PTERUN_KERNEL(pk_min_dim_min) {
  return run_dim_max(ctx, args, nargs, RK_MIN);
}

/* ---- variance ---- */

/* var into `var` and optionally the mean into `mean`; correction is the
 * divisor offset (N - correction, clamped at 0 as ATen does). */
static pterun_status run_var(pterun_kernel_context* ctx, pterun_tensor* in, const int64_t* dims,
                             size_t nd, double correction, bool keepdim, pterun_tensor* var,
                             pterun_tensor* mean) {
  pk_red r;
  pterun_iter it;
  const pterun_tensor* kvp[2];
  int64_t n;
  if (!pterun_dtype_is_float(in->dtype))
    return pk_fail_dtype(ctx, "self", in->dtype, "is not a floating point dtype");
  PTERUN_TRY(pk_check_out_float(ctx, var));
  if (mean) PTERUN_TRY(pk_check_out_float(ctx, mean));
  PTERUN_TRY(red_init(ctx, &r, in, dims, nd, keepdim));
  PTERUN_TRY(pterun_out_resize(ctx, var, "var", r.kv.rank, r.kv.sizes));
  if (mean) PTERUN_TRY(pterun_out_resize(ctx, mean, "mean", r.kv.rank, r.kv.sizes));
  PTERUN_TRY(check_data2(ctx, in, var));
  if (mean) PTERUN_TRY(check_data2(ctx, in, mean));
  kvp[0] = &r.kv;
  kvp[1] = mean;
  pterun_iter_init(&it, var, kvp, 2);
  for (n = 0; n < var->numel; ++n, pterun_iter_next(&it)) {
    red_acc a;
    double denom = (double)r.rnumel - correction;
    acc_init(&a, RK_WELFORD);
    red_visit(&r, in, it.off[1], RK_WELFORD, &a, 1, in->dtype);
    if (denom < 0) denom = 0;
    put_f(var, it.off[0], r.rnumel == 0 ? NAN : a.m2 / denom);
    if (mean) put_f(mean, it.off[2], r.rnumel == 0 ? NAN : a.mean);
  }
  return PTERUN_STATUS_OK;
}

/* Scalar? correction: None means 1. */
static pterun_status arg_correction(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    double* corr) {
  pterun_scalar s;
  *corr = 1.0;
  if (args[i] == NULL || args[i]->tag == PTERUN_VALUE_NONE) return PTERUN_STATUS_OK;
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i, "correction", &s));
  *corr = s.d;
  return PTERUN_STATUS_OK;
}

/* var.correction_out(self, int[1]? dim, *, Scalar? correction, bool keepdim, out) */
PTERUN_KERNEL(pk_var_correction_out) {
  pterun_tensor *in, *out;
  const int64_t* dims;
  size_t nd;
  double corr;
  bool keepdim;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(arg_correction(ctx, args, 2, &corr));
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  return run_var(ctx, in, dims, nd, corr, keepdim, out, NULL);
}

/* var.out(self, int[1]? dim, bool unbiased, bool keepdim, *, out) */
PTERUN_KERNEL(pk_var_out) {
  pterun_tensor *in, *out;
  const int64_t* dims;
  size_t nd;
  bool unbiased, keepdim;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "unbiased", &unbiased));
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  return run_var(ctx, in, dims, nd, unbiased ? 1.0 : 0.0, keepdim, out, NULL);
}

/* var_mean.correction_out(self, int[1]? dim, *, Scalar? correction, bool
 * keepdim, out0 (var), out1 (mean)) */
PTERUN_KERNEL(pk_var_mean_correction_out) {
  pterun_tensor *in, *var, *mean;
  const int64_t* dims;
  size_t nd;
  double corr;
  bool keepdim;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(arg_correction(ctx, args, 2, &corr));
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out0", &var));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out1", &mean));
  return run_var(ctx, in, dims, nd, corr, keepdim, var, mean);
}

/* logsumexp.out(self, int[1] dim, bool keepdim, *, out): max-shifted. */
PTERUN_KERNEL(pk_logsumexp_out) {
  pterun_tensor *in, *out;
  const int64_t* dims;
  size_t nd;
  bool keepdim;
  pk_red r;
  pterun_iter it;
  const pterun_tensor* kvp;
  int64_t n;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(arg_dims(ctx, args, 1, &dims, &nd));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "keepdim", &keepdim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_out_float(ctx, out));
  PTERUN_TRY(red_init(ctx, &r, in, dims, nd, keepdim));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", r.kv.rank, r.kv.sizes));
  PTERUN_TRY(check_data2(ctx, in, out));
  kvp = &r.kv;
  pterun_iter_init(&it, out, &kvp, 1);
  for (n = 0; n < out->numel; ++n, pterun_iter_next(&it)) {
    red_acc mx, se;
    acc_init(&mx, RK_MAX);
    red_visit(&r, in, it.off[1], RK_MAX, &mx, 1, out->dtype);
    acc_init(&se, RK_SUMEXP);
    /* An infinite max is not subtracted (it would make inf - inf = NaN). */
    se.shift = isinf(mx.s) ? 0.0 : mx.s;
    red_visit(&r, in, it.off[1], RK_SUMEXP, &se, 1, out->dtype);
    put_f(out, it.off[0], log(se.s) + se.shift);
  }
  return PTERUN_STATUS_OK;
}

/* ---- cumsum.out(self, int dim, *, ScalarType? dtype, out) ---- */
PTERUN_KERNEL(pk_cumsum_out) {
  pterun_tensor *in, *out;
  int64_t dim, n, len, k;
  int dt;
  pterun_tensor outer_in, outer_out;
  const pterun_tensor* op;
  pterun_iter it;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(arg_opt_dtype(ctx, args, 2, &dt));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (dt >= 0 && dt != out->dtype)
    return pk_fail_dtype(ctx, "out", out->dtype, "does not match the requested dtype");
  if (out->dtype == PTERUN_DTYPE_BOOL)
    return pk_fail_dtype(ctx, "out", out->dtype, "is not supported by cumsum");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, in->rank, &dim));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(check_data2(ctx, in, out));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  if (in->rank == 0) {
    if (pterun_dtype_is_float(out->dtype))
      pterun_store_f64(out->data, out->dtype, 0, pterun_load_f64(in->data, in->dtype, 0));
    else
      pterun_store_i64(out->data, out->dtype, 0, pterun_load_i64(in->data, in->dtype, 0));
    return PTERUN_STATUS_OK;
  }
  /* Iterate every line along dim: views with that dim collapsed to 1. */
  len = in->sizes[dim];
  outer_in = *in;
  outer_out = *out;
  outer_in.sizes[dim] = outer_out.sizes[dim] = 1;
  outer_out.numel = out->numel / len;
  op = &outer_in;
  pterun_iter_init(&it, &outer_out, &op, 1);
  for (n = 0; n < outer_out.numel; ++n, pterun_iter_next(&it)) {
    int64_t si = in->strides[dim], so = out->strides[dim];
    if (pterun_dtype_is_float(out->dtype)) {
      double acc = 0;
      for (k = 0; k < len; ++k) {
        /* double accumulator, like ATen's CPU acc_type for float */
        acc += pterun_load_f64(in->data, in->dtype, it.off[1] + k * si);
        pterun_store_f64(out->data, out->dtype, it.off[0] + k * so, acc);
      }
    } else {
      int64_t acc = 0;
      for (k = 0; k < len; ++k) {
        acc = pk_wadd(acc, pterun_load_i64(in->data, in->dtype, it.off[1] + k * si));
        pterun_store_i64(out->data, out->dtype, it.off[0] + k * so, acc);
      }
    }
  }
  return PTERUN_STATUS_OK;
}
