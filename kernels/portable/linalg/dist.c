/* Pairwise p-norm distances: _cdist_forward.out and _pdist_forward.out.
 * Double accumulation. p = 0 counts differing coordinates, p = inf takes the
 * largest difference, as in ATen. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* Distance between row a (stride sa) and row b (stride sb) of m coordinates. */
static double pdist_pair(const pterun_tensor* ta, int64_t a, int64_t sa, const pterun_tensor* tb,
                         int64_t b, int64_t sb, int64_t m, double p) {
  double acc = 0.0;
  int64_t j;
  for (j = 0; j < m; ++j) {
    double d = fabs(pterun_load_f64(ta->data, ta->dtype, a + j * sa) -
                    pterun_load_f64(tb->data, tb->dtype, b + j * sb));
    if (p == 0.0)
      acc += d != 0.0;
    else if (p == 1.0)
      acc += d;
    else if (p == 2.0)
      acc += d * d;
    else if (isinf(p))
      acc = (d > acc || isnan(d)) ? d : acc;
    else
      acc += pow(d, p);
  }
  if (p == 0.0 || p == 1.0 || isinf(p)) return acc;
  if (p == 2.0) return sqrt(acc);
  return pow(acc, 1.0 / p);
}

static pterun_status check_p(pterun_kernel_context* ctx, double p) {
  if (!(p >= 0.0)) return PTERUN_FAIL_ARG(ctx, "arg 'p': must be a non-negative number, got %g", p);
  return PTERUN_STATUS_OK;
}

/* aten::_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *,
 *   Tensor(a!) out) -> Tensor(a!)
 * x1 [*, P, M], x2 [*, R, M] -> [*, P, R] with broadcast batch dims.
 * compute_mode: None/0 uses the matrix-product form for p = 2 when P > 25 or
 * R > 25, 1 always does, 2 never does (ATen's rule). */
pterun_status pk__cdist_forward_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *x1, *x2, *out;
  double p;
  int64_t mode, sizes[PTERUN_MAX_RANK], bpos[PTERUN_MAX_RANK], P, R, M, i, j;
  int has_mode, r1, r2, rank, nb, d, use_mm;
  pk_view v1, v2;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "x1", &x1));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "x2", &x2));
  PTERUN_TRY(pterun_arg_double(ctx, args, 2, "p", &p));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 3, "compute_mode", &mode, &has_mode));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, x1, "x1"));
  PTERUN_TRY(pk_check_same_dtype(ctx, x1, "x1", x2, "x2"));
  PTERUN_TRY(pk_check_same_dtype(ctx, x1, "x1", out, "out"));
  PTERUN_TRY(check_p(ctx, p));
  if (!has_mode) mode = 0;
  if (mode < 0 || mode > 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'compute_mode': %" PRId64 " is not 0, 1 or 2", mode);
  r1 = x1->rank, r2 = x2->rank;
  if (r1 < 2 || r2 < 2)
    return PTERUN_FAIL_ARG(ctx, "args 'x1'/'x2': expected rank >= 2, got %d and %d", r1, r2);
  M = x1->sizes[r1 - 1];
  if (x2->sizes[r2 - 1] != M)
    return PTERUN_FAIL_ARG(ctx, "args 'x1'/'x2': last dims differ (%" PRId64 " vs %" PRId64 ")", M,
                           x2->sizes[r2 - 1]);
  P = x1->sizes[r1 - 2];
  R = x2->sizes[r2 - 2];
  rank = r1 > r2 ? r1 : r2;
  nb = rank - 2;
  /* Broadcast batch dims. */
  for (d = 0; d < nb; ++d) {
    int d1 = d - (rank - r1), d2 = d - (rank - r2);
    int64_t s1 = d1 >= 0 ? x1->sizes[d1] : 1, s2 = d2 >= 0 ? x2->sizes[d2] : 1;
    if (s1 != s2 && s1 != 1 && s2 != 1)
      return PTERUN_FAIL_ARG(
          ctx, "args 'x1'/'x2': batch dims %" PRId64 " and %" PRId64 " do not broadcast", s1, s2);
    sizes[d] = s1 == 1 ? s2 : s1;
  }
  PTERUN_TRY(pterun_check_data(ctx, x1, "x1"));
  PTERUN_TRY(pterun_check_data(ctx, x2, "x2"));
  sizes[nb] = P, sizes[nb + 1] = R;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  /* Batch strides of x1 and x2 broadcast to the out batch shape. */
  for (d = 0; d < nb; ++d) {
    int d1 = d - (rank - r1), d2 = d - (rank - r2);
    v1.strides[d] = d1 >= 0 && x1->sizes[d1] != 1 ? x1->strides[d1] : 0;
    v2.strides[d] = d2 >= 0 && x2->sizes[d2] != 1 ? x2->strides[d2] : 0;
  }
  use_mm = p == 2.0 && (mode == 1 || (mode == 0 && (P > 25 || R > 25)));
  for (d = 0; d < rank; ++d) bpos[d] = 0;
  do {
    int64_t b1 = 0, b2 = 0, bo = 0;
    for (d = 0; d < nb; ++d) {
      b1 += bpos[d] * v1.strides[d];
      b2 += bpos[d] * v2.strides[d];
      bo += bpos[d] * out->strides[d];
    }
    for (i = 0; i < P; ++i)
      for (j = 0; j < R; ++j) {
        int64_t a = b1 + i * x1->strides[r1 - 2], b = b2 + j * x2->strides[r2 - 2];
        double dist;
        if (use_mm) {
          /* ||a||^2 + ||b||^2 - 2 a.b, clamped at 1e-30 before the root. */
          double na = 0, nbb = 0, dot = 0;
          int64_t k;
          for (k = 0; k < M; ++k) {
            double u = pterun_load_f64(x1->data, x1->dtype, a + k * x1->strides[r1 - 1]);
            double w = pterun_load_f64(x2->data, x2->dtype, b + k * x2->strides[r2 - 1]);
            na += u * u, nbb += w * w, dot += u * w;
          }
          dist = na + nbb - 2 * dot;
          dist = sqrt(dist > 1e-30 ? dist : 1e-30);
        } else {
          dist = pdist_pair(x1, a, x1->strides[r1 - 1], x2, b, x2->strides[r2 - 1], M, p);
        }
        pterun_store_f64(out->data, out->dtype,
                         bo + i * out->strides[nb] + j * out->strides[nb + 1], dist);
      }
  } while (pk_next_index(bpos, sizes, nb));
  return PTERUN_STATUS_OK;
}

/* aten::_pdist_forward.out(Tensor self, float p=2, *, Tensor(a!) out) -> Tensor(a!)
 * self [N, M] -> [N*(N-1)/2]: distances of rows i < j in row-major pair order. */
pterun_status pk__pdist_forward_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *out;
  double p;
  int64_t n, m, i, j, k = 0, len;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "p", &p));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", out, "out"));
  PTERUN_TRY(pterun_check_rank(ctx, in, "self", 2));
  PTERUN_TRY(check_p(ctx, p));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  n = in->sizes[0], m = in->sizes[1];
  len = n > 1 ? n * (n - 1) / 2 : 0;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 1, &len));
  for (i = 0; i < n; ++i)
    for (j = i + 1; j < n; ++j, ++k)
      pterun_store_f64(out->data, out->dtype, k * out->strides[0],
                       pdist_pair(in, i * in->strides[0], in->strides[1], in, j * in->strides[0],
                                  in->strides[1], m, p));
  return PTERUN_STATUS_OK;
}
