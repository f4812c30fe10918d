/* Selection, sorting and repetition: topk.values, sort.values,
 * repeat_interleave.Tensor_out. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* Total order used by topk: NaN is greater than every number (as in ATen). */
static int tk_greater(double a, double b) {
  if (isnan(a)) return !isnan(b);
  if (isnan(b)) return 0;
  return a > b;
}

/* a ranks strictly before b in the requested direction. */
static int tk_before(double a, double b, int largest) {
  return largest ? tk_greater(a, b) : tk_greater(b, a);
}

static int tk_before_i(int64_t a, int64_t b, int largest) {
  return largest ? a > b : a < b;
}

/* aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True,
 *   *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
 * The k best elements of every slice along dim are kept sorted by insertion
 * in the outputs themselves (no workspace); ties keep the lower index first.
 * The outputs are always sorted (sorted=False leaves the order unspecified). */
PTERUN_KERNEL(pk_topk_values) {
  pterun_tensor *in, *vals, *idx;
  int64_t k, dim, sizes[PTERUN_MAX_RANK], pos[PTERUN_MAX_RANK], n, ist, vst, xst;
  bool largest, sorted_;
  int rank, d, is_float;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "k", &k));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "dim", &dim));
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "largest", &largest));
  PTERUN_TRY(pk_arg_bool(ctx, args, 4, "sorted", &sorted_));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "values", &vals));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "indices", &idx));
  (void)sorted_;
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  if (in->dtype == PTERUN_DTYPE_BOOL)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': bool is not supported");
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", vals, "values"));
  if (idx->dtype != PTERUN_DTYPE_I64)
    return PTERUN_FAIL_ARG(ctx, "arg 'indices': expected int64, got %s",
                           pterun_dtype_name(idx->dtype));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  rank = in->rank;
  PTERUN_TRY(pk_wrap_dim(ctx, dim, rank, &dim));
  n = rank ? in->sizes[dim] : 1;
  if (k < 0 || k > n)
    return PTERUN_FAIL_ARG(
        ctx, "arg 'k': %" PRId64 " is out of range for a dimension of size %" PRId64, k, n);
  for (d = 0; d < rank; ++d) sizes[d] = d == dim ? k : in->sizes[d];
  PTERUN_TRY(pterun_out_resize(ctx, vals, "values", (size_t)rank, sizes));
  PTERUN_TRY(pterun_out_resize(ctx, idx, "indices", (size_t)rank, sizes));
  if (vals->numel == 0 || k == 0) return PTERUN_STATUS_OK;
  ist = rank ? in->strides[dim] : 0;
  vst = rank ? vals->strides[dim] : 0;
  xst = rank ? idx->strides[dim] : 0;
  is_float = pterun_dtype_is_float(in->dtype);
  /* Iterate over every slice: positions of all dims except dim. */
  for (d = 0; d < rank; ++d) pos[d] = 0;
  for (d = 0; d < rank; ++d) sizes[d] = d == dim ? 1 : in->sizes[d];
  do {
    int64_t ib = 0, vb = 0, xb = 0, j, cnt = 0;
    int64_t* ip = (int64_t*)idx->data;
    for (d = 0; d < rank; ++d) {
      ib += pos[d] * in->strides[d];
      vb += pos[d] * vals->strides[d];
      xb += pos[d] * idx->strides[d];
    }
    for (j = 0; j < n; ++j) {
      int64_t slot = cnt, s;
      /* Find the insertion slot among the cnt kept elements (sorted). */
      if (is_float) {
        double v = pterun_load_f64(in->data, in->dtype, ib + j * ist);
        while (
            slot > 0 &&
            tk_before(v, pterun_load_f64(vals->data, vals->dtype, vb + (slot - 1) * vst), largest))
          --slot;
      } else {
        int64_t v = pterun_load_i64(in->data, in->dtype, ib + j * ist);
        while (slot > 0 &&
               tk_before_i(v, pterun_load_i64(vals->data, vals->dtype, vb + (slot - 1) * vst),
                           largest))
          --slot;
      }
      if (slot >= k) continue;
      /* Shift the tail down by one (dropping the last when full). */
      for (s = (cnt < k ? cnt : k - 1); s > slot; --s) {
        memcpy(pk_ptr(vals, vb + s * vst), pk_ptr(vals, vb + (s - 1) * vst),
               pterun_dtype_size(vals->dtype));
        ip[xb + s * xst] = ip[xb + (s - 1) * xst];
      }
      memcpy(pk_ptr(vals, vb + slot * vst), pk_ptr(in, ib + j * ist), pterun_dtype_size(in->dtype));
      ip[xb + slot * xst] = j;
      if (cnt < k) ++cnt;
    }
  } while (pk_next_index(pos, sizes, rank));
  return PTERUN_STATUS_OK;
}

/* One slice of sort.values: `n` elements of `in` from element offset `ib`,
 * stride `ist`. so_before(a, b): element a sorts strictly before element b
 * (ATen's order: NaN above every number, so last ascending, first
 * descending; equal elements keep their order: stable). */
typedef struct so_slice {
  const pterun_tensor* in;
  int64_t ib, ist;
  int is_float, desc;
} so_slice;

static int so_before(const so_slice* s, int64_t a, int64_t b) {
  if (s->is_float) {
    double x = pterun_load_f64(s->in->data, s->in->dtype, s->ib + a * s->ist);
    double y = pterun_load_f64(s->in->data, s->in->dtype, s->ib + b * s->ist);
    return s->desc ? tk_greater(x, y) : tk_greater(y, x);
  }
  int64_t x = pterun_load_i64(s->in->data, s->in->dtype, s->ib + a * s->ist);
  int64_t y = pterun_load_i64(s->in->data, s->in->dtype, s->ib + b * s->ist);
  return s->desc ? x > y : x < y;
}

/* Stable bottom-up merge sort of the positions a[0..n) using tmp[0..n). */
static void so_merge_sort(const so_slice* s, int64_t* a, int64_t* tmp, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = so_before(s, a[j], a[i]) ? a[j++] : a[i++];
      while (i < mid) tmp[o++] = a[i++];
      while (j < hi) tmp[o++] = a[j++];
    }
    memcpy(a, tmp, (size_t)n * sizeof *a);
  }
}

/* aten::sort.values(Tensor self, int dim=-1, bool descending=False, *,
 *   Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
 * What torch.sort(x, dim, descending) exports as. Every slice along dim is
 * sorted stably (ATen leaves the order of equal elements unspecified unless
 * stable=True; pterun always keeps it), NaN after every number ascending and
 * before every number descending, as ATen orders them. The positions are
 * merge-sorted in the kernel's scratch (2 n int64); without that much
 * scratch they are insertion-sorted in the indices output (the same result,
 * O(n^2), noted as a slow path). */
pterun_status pk_sort_values(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *vals, *idx;
  int64_t dim, sizes[PTERUN_MAX_RANK], pos[PTERUN_MAX_RANK], n, vst, xst;
  bool desc;
  int rank, d;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "descending", &desc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "values", &vals));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "indices", &idx));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", vals, "values"));
  if (idx->dtype != PTERUN_DTYPE_I64)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg 'indices': expected int64, got %s",
                              pterun_dtype_name(idx->dtype));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  rank = in->rank;
  PTERUN_TRY(pk_wrap_dim(ctx, dim, rank ? rank : 1, &dim));
  PTERUN_TRY(pterun_out_resize(ctx, vals, "values", (size_t)rank, in->sizes));
  PTERUN_TRY(pterun_out_resize(ctx, idx, "indices", (size_t)rank, in->sizes));
  if (in->numel == 0) return PTERUN_STATUS_OK;
  PTERUN_TRY(pterun_check_data(ctx, vals, "values"));
  PTERUN_TRY(pterun_check_data(ctx, idx, "indices"));
  if (vals->data == in->data)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg 'values': must not share memory with 'self'");
  n = rank ? in->sizes[dim] : 1;
  so_slice sl = {in, 0, rank ? in->strides[dim] : 0, pterun_dtype_is_float(in->dtype), desc};
  vst = rank ? vals->strides[dim] : 0;
  xst = rank ? idx->strides[dim] : 0;
  int64_t* work = NULL;
  if ((uint64_t)n <= SIZE_MAX / (2 * sizeof(int64_t)))
    work = pterun_kernel_scratch(ctx, (size_t)n * 2 * sizeof(int64_t), 64);
  if (work == NULL && n > 1) pterun_kernel_note_slow_path(ctx, "no scratch: insertion sort");
  int64_t* ip = (int64_t*)idx->data;
  for (d = 0; d < rank; ++d) pos[d] = 0;
  for (d = 0; d < rank; ++d) sizes[d] = d == dim ? 1 : in->sizes[d];
  do {
    int64_t vb = 0, xb = 0, j;
    sl.ib = 0;
    for (d = 0; d < rank; ++d) {
      sl.ib += pos[d] * in->strides[d];
      vb += pos[d] * vals->strides[d];
      xb += pos[d] * idx->strides[d];
    }
    if (work != NULL) {
      for (j = 0; j < n; ++j) work[j] = j;
      so_merge_sort(&sl, work, work + n, n);
      for (j = 0; j < n; ++j) ip[xb + j * xst] = work[j];
    } else {
      for (j = 0; j < n; ++j) { /* stable: an element moves past strictly later-sorting ones */
        int64_t s = j;
        while (s > 0 && so_before(&sl, j, ip[xb + (s - 1) * xst])) {
          ip[xb + s * xst] = ip[xb + (s - 1) * xst];
          --s;
        }
        ip[xb + s * xst] = j;
      }
    }
    for (j = 0; j < n; ++j)
      memcpy(pk_ptr(vals, vb + j * vst), pk_ptr(in, sl.ib + ip[xb + j * xst] * sl.ist),
             pterun_dtype_size(in->dtype));
  } while (rank > 0 && pk_next_index(pos, sizes, rank));
  return PTERUN_STATUS_OK;
}

/* aten::repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size=None,
 *   Tensor(a!) out) -> Tensor(a!)
 * out = [0]*repeats[0] ++ [1]*repeats[1] ++ ... (dtype of repeats). */
PTERUN_KERNEL(pk_repeat_interleave_tensor_out) {
  pterun_tensor *rep, *out;
  int64_t osz, total = 0, i, j, o = 0, len;
  int has_osz;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "repeats", &rep));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 1, "output_size", &osz, &has_osz));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  if (rep->dtype != PTERUN_DTYPE_I32 && rep->dtype != PTERUN_DTYPE_I64)
    return PTERUN_FAIL_ARG(ctx, "arg 'repeats': expected int32 or int64, got %s",
                           pterun_dtype_name(rep->dtype));
  PTERUN_TRY(pk_check_same_dtype(ctx, rep, "repeats", out, "out"));
  if (rep->rank != 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'repeats': expected a 1-D tensor, got rank %d",
                           (int)rep->rank);
  PTERUN_TRY(pterun_check_data(ctx, rep, "repeats"));
  len = rep->numel;
  for (i = 0; i < len; ++i) {
    int64_t r = pterun_load_i64(rep->data, rep->dtype, i * rep->strides[0]);
    if (r < 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'repeats': repeats[%" PRId64 "] = %" PRId64 " is negative",
                             i, r);
    if (r > INT64_MAX - total) return PTERUN_FAIL_ARG(ctx, "arg 'repeats': the total overflows");
    total += r;
  }
  if (has_osz && osz != total)
    return PTERUN_FAIL_ARG(ctx, "arg 'output_size': %" PRId64 " but the repeats sum to %" PRId64,
                           osz, total);
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 1, &total));
  for (i = 0; i < len; ++i) {
    int64_t r = pterun_load_i64(rep->data, rep->dtype, i * rep->strides[0]);
    for (j = 0; j < r; ++j, ++o) pterun_store_i64(out->data, out->dtype, o * out->strides[0], i);
  }
  return PTERUN_STATUS_OK;
}
