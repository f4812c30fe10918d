/* Gather/scatter style indexing: embedding, index_select, gather, scatter*,
 * select_scatter, slice_scatter, nonzero, masked_select, masked_scatter. */
#include <inttypes.h>

#include "kernels/portable/util.h"

static pterun_status check_index_dtype(pterun_kernel_context* ctx, const pterun_tensor* t,
                                       const char* name) {
  if (t->dtype != PTERUN_DTYPE_I64 && t->dtype != PTERUN_DTYPE_I32)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': expected int64 or int32 indices, got %s", name,
                           pterun_dtype_name(t->dtype));
  return pterun_check_data(ctx, t, name);
}

/* Reads the index at element offset off; -1 unless in [0, size) (ATen's
 * index_select/gather/scatter take no negative indices). */
static int64_t load_index(const pterun_tensor* t, int64_t off, int64_t size) {
  int64_t i = pterun_load_i64(t->data, t->dtype, off);
  return i >= 0 && i < size ? i : -1;
}

static pterun_status bad_index(pterun_kernel_context* ctx, const pterun_tensor* t, int64_t off,
                               int64_t size) {
  return PTERUN_FAIL_ARG(ctx, "index %" PRId64 " out of range for size %" PRId64,
                         pterun_load_i64(t->data, t->dtype, off), size);
}

/* aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1,
 *   bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out) */
pterun_status pk_embedding_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *w, *ix, *out;
  int64_t sizes[PTERUN_MAX_RANK], idx[PTERUN_MAX_RANK] = {0};
  int d;
  pk_view rowv, outv;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "weight", &w));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "indices", &ix));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(pterun_check_data(ctx, w, "weight"));
  PTERUN_TRY(check_index_dtype(ctx, ix, "indices"));
  PTERUN_TRY(pk_check_same_dtype(ctx, w, "weight", out, "out"));
  if (w->rank != 2 || ix->rank + 1 > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': expected rank 2, got %d", (int)w->rank);
  for (d = 0; d < ix->rank; ++d) sizes[d] = ix->sizes[d];
  sizes[ix->rank] = w->sizes[1];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", ix->rank + 1, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  /* One row copy per index. */
  rowv.rank = outv.rank = 1;
  rowv.sizes[0] = outv.sizes[0] = w->sizes[1];
  rowv.strides[0] = w->strides[1];
  outv.strides[0] = out->strides[ix->rank];
  do {
    int64_t ioff = pk_offset(ix, idx), row = pterun_load_i64(ix->data, ix->dtype, ioff), ooff = 0;
    /* Unlike the other index ops, embedding takes no negative indices. */
    if (row < 0 || row >= w->sizes[0]) return bad_index(ctx, ix, ioff, w->sizes[0]);
    for (d = 0; d < ix->rank; ++d) ooff += idx[d] * out->strides[d];
    pk_copy_view(out->data, out->dtype, &outv, ooff, w->data, w->dtype, &rowv, row * w->strides[0]);
  } while (pk_next_index(idx, ix->sizes, ix->rank));
  return PTERUN_STATUS_OK;
}

/* aten::index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) */
pterun_status pk_index_select_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *ix, *out;
  int64_t dim, sizes[PTERUN_MAX_RANK], k, n, dsz;
  pk_view sv, dv;
  int d;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "index", &ix));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(check_index_dtype(ctx, ix, "index"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (ix->rank > 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'index': expected rank <= 1, got %d", (int)ix->rank);
  n = ix->numel;
  dsz = self->rank ? self->sizes[dim] : 1;
  for (d = 0; d < self->rank; ++d) sizes[d] = d == dim ? n : self->sizes[d];
  if (self->rank == 0 && n != 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'index': a 0-dim self takes exactly one index");
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", self->rank, sizes));
  /* Each index copies one slab (self with dim removed). */
  pk_view_of(self, &sv);
  pk_view_of(out, &dv);
  if (self->rank) sv.sizes[dim] = dv.sizes[dim] = 1;
  for (k = 0; k < n; ++k) {
    int64_t ioff = ix->rank ? k * ix->strides[0] : 0, i = load_index(ix, ioff, dsz);
    if (i < 0) return bad_index(ctx, ix, ioff, dsz);
    if (out->numel == 0) continue;
    pk_copy_view(out->data, out->dtype, &dv, self->rank ? k * out->strides[dim] : 0, self->data,
                 self->dtype, &sv, self->rank ? i * self->strides[dim] : 0);
  }
  return PTERUN_STATUS_OK;
}

/* Shape rules shared by gather and scatter: index has self's rank and is no
 * larger than `other` (self for gather, src for scatter) off dim. */
static pterun_status check_gather_shape(pterun_kernel_context* ctx, const pterun_tensor* self,
                                        const pterun_tensor* ix, int64_t dim,
                                        const pterun_tensor* other, int off_dim_only) {
  int d;
  int r = self->rank ? self->rank : 1;
  if ((ix->rank ? ix->rank : 1) != r && ix->numel != 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'index': rank %d differs from self's %d", (int)ix->rank,
                           (int)self->rank);
  for (d = 0; d < ix->rank && d < other->rank; ++d) {
    if (off_dim_only && d == dim) continue;
    if (ix->sizes[d] > other->sizes[d])
      return PTERUN_FAIL_ARG(ctx, "arg 'index': size %" PRId64 " at dim %d exceeds %" PRId64,
                             ix->sizes[d], d, other->sizes[d]);
  }
  return PTERUN_STATUS_OK;
}

/* aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False,
 *   Tensor(a!) out) */
pterun_status pk_gather_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *ix, *out;
  int64_t dim, idx[PTERUN_MAX_RANK] = {0}, dsz;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "index", &ix));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(check_index_dtype(ctx, ix, "index"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  PTERUN_TRY(check_gather_shape(ctx, self, ix, dim, self, 1));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", ix->rank, ix->sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  dsz = self->rank ? self->sizes[dim] : 1;
  do {
    int64_t ioff = pk_offset(ix, idx), i = load_index(ix, ioff, dsz), soff = 0;
    int d;
    if (i < 0) return bad_index(ctx, ix, ioff, dsz);
    for (d = 0; d < self->rank; ++d) soff += (d == dim ? i : idx[d]) * self->strides[d];
    memcpy(pk_ptr(out, pk_offset(out, idx)), pk_ptr(self, soff), pterun_dtype_size(out->dtype));
  } while (pk_next_index(idx, ix->sizes, ix->rank));
  return PTERUN_STATUS_OK;
}

enum { SCATTER_SRC, SCATTER_VALUE, SCATTER_ADD };

/* out = self, then out[index along dim] = src / value (or += src). */
static pterun_status scatter(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                             int mode) {
  pterun_tensor *self, *ix, *src = NULL, *out;
  pterun_scalar value;
  int64_t dim, idx[PTERUN_MAX_RANK] = {0}, dsz;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "index", &ix));
  if (mode == SCATTER_VALUE)
    PTERUN_TRY(pterun_arg_scalar(ctx, args, 3, "value", &value));
  else
    PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "src", &src));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(pk_check_real(ctx, self, "self"));
  PTERUN_TRY(check_index_dtype(ctx, ix, "index"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  PTERUN_TRY(check_gather_shape(ctx, self, ix, dim, self, 1));
  if (src != NULL) {
    PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", src, "src"));
    PTERUN_TRY(pterun_check_data(ctx, src, "src"));
    PTERUN_TRY(check_gather_shape(ctx, self, ix, dim, src, 0));
  }
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  pk_copy_tensor(out, self);
  if (ix->numel == 0) return PTERUN_STATUS_OK;
  dsz = self->rank ? self->sizes[dim] : 1;
  do {
    int64_t ioff = pk_offset(ix, idx), i = load_index(ix, ioff, dsz), doff = 0;
    int d;
    if (i < 0) return bad_index(ctx, ix, ioff, dsz);
    for (d = 0; d < out->rank; ++d) doff += (d == dim ? i : idx[d]) * out->strides[d];
    if (mode == SCATTER_VALUE) {
      if (pterun_dtype_is_float(out->dtype))
        pterun_store_f64(out->data, out->dtype, doff, value.d);
      else
        pterun_store_i64(out->data, out->dtype, doff, value.i);
    } else {
      int64_t soff = pk_offset(src, idx);
      if (mode == SCATTER_SRC) {
        memcpy(pk_ptr(out, doff), pk_ptr(src, soff), pterun_dtype_size(out->dtype));
      } else if (pterun_dtype_is_float(out->dtype)) {
        pterun_store_f64(out->data, out->dtype, doff,
                         pterun_load_f64(out->data, out->dtype, doff) +
                             pterun_load_f64(src->data, src->dtype, soff));
      } else {
        pterun_store_i64(out->data, out->dtype, doff,
                         (int64_t)((uint64_t)pterun_load_i64(out->data, out->dtype, doff) +
                                   (uint64_t)pterun_load_i64(src->data, src->dtype, soff)));
      }
    }
  } while (pk_next_index(idx, ix->sizes, ix->rank));
  return PTERUN_STATUS_OK;
}

/* aten::scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) */
pterun_status pk_scatter_src_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return scatter(ctx, args, nargs, SCATTER_SRC);
}
/* aten::scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) */
pterun_status pk_scatter_value_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return scatter(ctx, args, nargs, SCATTER_VALUE);
}
/* aten::scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) */
pterun_status pk_scatter_add_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return scatter(ctx, args, nargs, SCATTER_ADD);
}

/* out = self, then the view v of out (at base) = src (same shape as v). */
static pterun_status scatter_view(pterun_kernel_context* ctx, pterun_tensor* self,
                                  pterun_tensor* src, pterun_tensor* out, const pk_view* v,
                                  int64_t base) {
  pk_view sv;
  int d;
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(pterun_check_data(ctx, src, "src"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", src, "src"));
  if (src->rank != v->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'src': rank %d, expected %d", (int)src->rank, v->rank);
  for (d = 0; d < v->rank; ++d)
    if (src->sizes[d] != v->sizes[d])
      return PTERUN_FAIL_ARG(ctx, "arg 'src': size %" PRId64 " at dim %d, expected %" PRId64,
                             src->sizes[d], d, v->sizes[d]);
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  pk_copy_tensor(out, self);
  if (src->numel == 0) return PTERUN_STATUS_OK;
  pk_view_of(src, &sv);
  pk_copy_view(out->data, out->dtype, v, base, src->data, src->dtype, &sv, 0);
  return PTERUN_STATUS_OK;
}

/* aten::select_scatter.out(Tensor self, Tensor src, int dim, SymInt index, *, Tensor(a!) out) */
pterun_status pk_select_scatter_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *src, *out;
  int64_t dim, index;
  pk_view v;
  int d;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "src", &src));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "dim", &dim));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "index", &index));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  if (self->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'self': rank 0");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (index < -self->sizes[dim] || index >= self->sizes[dim])
    return PTERUN_FAIL_ARG(ctx, "arg 'index': %" PRId64 " out of range", index);
  if (index < 0) index += self->sizes[dim];
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  /* The selected slab of out, as a view of out's memory. */
  v.rank = 0;
  for (d = 0; d < out->rank; ++d) {
    if (d == dim) continue;
    v.sizes[v.rank] = out->sizes[d];
    v.strides[v.rank++] = out->strides[d];
  }
  return scatter_view(ctx, self, src, out, &v, index * out->strides[dim]);
}

/* aten::slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None,
 *   SymInt? end=None, SymInt step=1, *, Tensor(a!) out) */
pterun_status pk_slice_scatter_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *src, *out;
  int64_t dim, start, end, step, len, size;
  int hs, he;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "src", &src));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "dim", &dim));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 3, "start", &start, &hs));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 4, "end", &end, &he));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "step", &step));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  if (self->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'self': rank 0");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (step <= 0) return PTERUN_FAIL_ARG(ctx, "arg 'step': must be > 0");
  size = self->sizes[dim];
  start = hs ? (start < 0 ? start + size : start) : 0;
  end = he ? (end < 0 ? end + size : end) : size;
  start = start < 0 ? 0 : start > size ? size : start;
  end = end < start ? start : end > size ? size : end;
  len = (end - start + step - 1) / step;
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  pk_view_of(out, &v);
  v.sizes[dim] = len;
  v.strides[dim] *= step;
  return scatter_view(ctx, self, src, out, &v, len ? start * out->strides[dim] : 0);
}

/* aten::nonzero.out(Tensor self, *, Tensor(a!) out) */
pterun_status pk_nonzero_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t idx[PTERUN_MAX_RANK] = {0}, count = 0, sizes[2], row = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, self, "self"));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  if (out->dtype != PTERUN_DTYPE_I64) return PTERUN_FAIL_ARG(ctx, "arg 'out': expected int64");
  if (self->numel > 0) do {
      if (pterun_load_f64(self->data, self->dtype, pk_offset(self, idx)) != 0.0) ++count;
    } while (pk_next_index(idx, self->sizes, self->rank));
  sizes[0] = count;
  sizes[1] = self->rank;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  if (count == 0) return PTERUN_STATUS_OK;
  do {
    if (pterun_load_f64(self->data, self->dtype, pk_offset(self, idx)) != 0.0) {
      int d;
      for (d = 0; d < self->rank; ++d)
        ((int64_t*)out->data)[row * out->strides[0] + d * out->strides[1]] = idx[d];
      ++row;
    }
  } while (pk_next_index(idx, self->sizes, self->rank));
  return PTERUN_STATUS_OK;
}

/* Broadcast shape of self and mask with both views; fails on bad dtypes. */
static pterun_status mask_views(pterun_kernel_context* ctx, const pterun_tensor* self,
                                const pterun_tensor* mask, int64_t* sizes, size_t* rank,
                                pk_view* sv, pk_view* mv) {
  if (mask->dtype != PTERUN_DTYPE_BOOL && mask->dtype != PTERUN_DTYPE_U8)
    return PTERUN_FAIL_ARG(ctx, "arg 'mask': expected bool, got %s",
                           pterun_dtype_name(mask->dtype));
  PTERUN_TRY(pterun_check_data(ctx, mask, "mask"));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(pk_broadcast_shape(ctx, self, mask, sizes, rank));
  PTERUN_TRY(pk_bcast_view(ctx, self, "self", (int)*rank, sizes, sv));
  return pk_bcast_view(ctx, mask, "mask", (int)*rank, sizes, mv);
}

static int64_t view_off(const pk_view* v, const int64_t* idx) {
  int64_t off = 0;
  int d;
  for (d = 0; d < v->rank; ++d) off += idx[d] * v->strides[d];
  return off;
}

/* aten::masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) */
pterun_status pk_masked_select_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *mask, *out;
  int64_t sizes[PTERUN_MAX_RANK], idx[PTERUN_MAX_RANK] = {0}, count = 0, k = 0, numel;
  size_t rank;
  pk_view sv, mv;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "mask", &mask));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(mask_views(ctx, self, mask, sizes, &rank, &sv, &mv));
  numel = pk_prod(sizes, 0, (int)rank);
  if (numel > 0) do {
      count += ((const uint8_t*)mask->data)[view_off(&mv, idx)] != 0;
    } while (pk_next_index(idx, sizes, (int)rank));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 1, &count));
  if (count == 0) return PTERUN_STATUS_OK;
  do {
    if (((const uint8_t*)mask->data)[view_off(&mv, idx)] != 0)
      memcpy(pk_ptr(out, (k++) * out->strides[0]), pk_ptr(self, view_off(&sv, idx)),
             pterun_dtype_size(out->dtype));
  } while (pk_next_index(idx, sizes, (int)rank));
  return PTERUN_STATUS_OK;
}

/* aten::masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out) */
pterun_status pk_masked_scatter_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *mask, *src, *out;
  int64_t sizes[PTERUN_MAX_RANK], idx[PTERUN_MAX_RANK] = {0}, sidx[PTERUN_MAX_RANK] = {0};
  int64_t k = 0;
  size_t rank;
  pk_view sv, mv;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "mask", &mask));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "source", &src));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", src, "source"));
  PTERUN_TRY(pterun_check_data(ctx, src, "source"));
  PTERUN_TRY(mask_views(ctx, self, mask, sizes, &rank, &sv, &mv));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  /* out = broadcast self; masked positions take source elements in order. */
  {
    pk_view dv;
    pk_view_of(out, &dv);
    pk_copy_view(out->data, out->dtype, &dv, 0, self->data, self->dtype, &sv, 0);
  }
  do {
    if (((const uint8_t*)mask->data)[view_off(&mv, idx)] == 0) continue;
    if (k >= src->numel)
      return PTERUN_FAIL_ARG(ctx, "arg 'source': fewer elements than true mask entries");
    memcpy(pk_ptr(out, pk_offset(out, idx)), pk_ptr(src, pk_offset(src, sidx)),
           pterun_dtype_size(out->dtype));
    pk_next_index(sidx, src->sizes, src->rank);
    ++k;
  } while (pk_next_index(idx, out->sizes, out->rank));
  return PTERUN_STATUS_OK;
}
