/* View-like copies: each op describes its result as a strided view of the
 * input (pk_view) or as a reshape, then copies into out's own layout. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* Common checks for ops whose out has self's dtype. */
static pterun_status check_same(pterun_kernel_context* ctx, const pterun_tensor* self,
                                const pterun_tensor* out) {
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  return pterun_check_data(ctx, self, "self");
}

/* Resizes out to v's sizes and copies the view of self starting at base. */
static pterun_status emit_view(pterun_kernel_context* ctx, const pterun_tensor* self,
                               pterun_tensor* out, const pk_view* v, int64_t base) {
  pk_view dv;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)v->rank, v->sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  pk_view_of(out, &dv);
  pk_copy_view(out->data, out->dtype, &dv, 0, self->data, self->dtype, v, base);
  return PTERUN_STATUS_OK;
}

/* Resizes out to sizes and copies self in logical order. */
static pterun_status emit_reshape(pterun_kernel_context* ctx, const pterun_tensor* self,
                                  pterun_tensor* out, int rank, const int64_t* sizes) {
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)rank, sizes));
  pk_copy_reshape(out, self);
  return PTERUN_STATUS_OK;
}

/* Reads self (arg 0) and out (arg `oi`) and checks dtypes. */
static pterun_status self_out(pterun_kernel_context* ctx, pterun_value** args, size_t oi,
                              pterun_tensor** self, pterun_tensor** out) {
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, oi, "out", out));
  return check_same(ctx, *self, *out);
}

/* aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) */
pterun_status pk_view_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* size;
  size_t len, k;
  int64_t sizes[PTERUN_MAX_RANK], known = 1;
  int infer = -1;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "size", &size, &len, 0));
  if (len > PTERUN_MAX_RANK) return PTERUN_FAIL_ARG(ctx, "arg 'size': too many dims");
  for (k = 0; k < len; ++k) {
    if (size[k] == -1 && infer < 0) {
      infer = (int)k;
      continue;
    }
    if (size[k] < 0) return PTERUN_FAIL_ARG(ctx, "arg 'size': invalid size %" PRId64, size[k]);
    sizes[k] = size[k];
    if (size[k] != 0 && known > INT64_MAX / size[k])
      return PTERUN_FAIL_ARG(ctx, "arg 'size': the element count overflows");
    known *= size[k];
  }
  if (infer >= 0) {
    if (known == 0 || self->numel % known != 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'size': cannot infer -1 for %" PRId64 " elements",
                             self->numel);
    sizes[infer] = self->numel / known;
    known *= sizes[infer];
  }
  if (known != self->numel)
    return PTERUN_FAIL_ARG(ctx, "arg 'size': %" PRId64 " elements cannot view %" PRId64, known,
                           self->numel);
  return emit_reshape(ctx, self, out, (int)len, sizes);
}

/* aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out) */
pterun_status pk_permute_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* dims;
  size_t len, k;
  int seen[PTERUN_MAX_RANK] = {0};
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "dims", &dims, &len, 0));
  if (len != self->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'dims': %zu dims for a rank-%d tensor", len, (int)self->rank);
  v.rank = (int)len;
  for (k = 0; k < len; ++k) {
    int64_t d;
    PTERUN_TRY(pk_wrap_dim(ctx, dims[k], self->rank, &d));
    if (seen[d]++) return PTERUN_FAIL_ARG(ctx, "arg 'dims': dim %" PRId64 " repeats", d);
    v.sizes[k] = self->sizes[d];
    v.strides[k] = self->strides[d];
  }
  return emit_view(ctx, self, out, &v, 0);
}

static pterun_status transpose(pterun_kernel_context* ctx, pterun_tensor* self, pterun_tensor* out,
                               int64_t d0, int64_t d1) {
  pk_view v;
  int64_t t;
  pk_view_of(self, &v);
  PTERUN_TRY(pk_wrap_dim(ctx, d0, self->rank, &d0));
  PTERUN_TRY(pk_wrap_dim(ctx, d1, self->rank, &d1));
  if (self->rank > 0) {
    t = v.sizes[d0], v.sizes[d0] = v.sizes[d1], v.sizes[d1] = t;
    t = v.strides[d0], v.strides[d0] = v.strides[d1], v.strides[d1] = t;
  }
  return emit_view(ctx, self, out, &v, 0);
}

/* aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) */
pterun_status pk_transpose_copy_int_out(pterun_kernel_context* ctx, pterun_value** args,
                                        size_t nargs) {
  pterun_tensor *self, *out;
  int64_t d0, d1;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(self_out(ctx, args, 3, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim0", &d0));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "dim1", &d1));
  return transpose(ctx, self, out, d0, d1);
}

/* aten::t_copy.out(Tensor self, *, Tensor(a!) out) */
pterun_status pk_t_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(self_out(ctx, args, 1, &self, &out));
  if (self->rank > 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': t() expects rank <= 2, got %d", (int)self->rank);
  return transpose(ctx, self, out, 0, self->rank == 2 ? 1 : 0);
}

/* aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out) */
pterun_status pk_unsqueeze_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t dim, sizes[PTERUN_MAX_RANK];
  int d, r;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  if (self->rank + 1 > PTERUN_MAX_RANK) return PTERUN_FAIL_ARG(ctx, "rank too large");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank + 1, &dim));
  for (d = 0, r = 0; d <= self->rank; ++d) sizes[d] = d == dim ? 1 : self->sizes[r++];
  return emit_reshape(ctx, self, out, self->rank + 1, sizes);
}

/* Squeezes the size-1 dims flagged in `mask`. */
static pterun_status squeeze(pterun_kernel_context* ctx, pterun_tensor* self, pterun_tensor* out,
                             const int* mask) {
  int64_t sizes[PTERUN_MAX_RANK];
  int d, r = 0;
  for (d = 0; d < self->rank; ++d)
    if (!(mask[d] && self->sizes[d] == 1)) sizes[r++] = self->sizes[d];
  return emit_reshape(ctx, self, out, r, sizes);
}

/* aten::squeeze_copy.dim_out(Tensor self, int dim, *, Tensor(a!) out) */
pterun_status pk_squeeze_copy_dim_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  pterun_tensor *self, *out;
  int64_t dim;
  int mask[PTERUN_MAX_RANK] = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (self->rank > 0) mask[dim] = 1;
  return squeeze(ctx, self, out, mask);
}

/* aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out) */
pterun_status pk_squeeze_copy_dims_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* dims;
  size_t len, k;
  int mask[PTERUN_MAX_RANK] = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "dim", &dims, &len, 0));
  for (k = 0; k < len; ++k) {
    int64_t d;
    PTERUN_TRY(pk_wrap_dim(ctx, dims[k], self->rank, &d));
    if (self->rank > 0) mask[d] = 1;
  }
  return squeeze(ctx, self, out, mask);
}

/* aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out) */
pterun_status pk_expand_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* size;
  size_t len, k;
  int64_t sizes[PTERUN_MAX_RANK];
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(self_out(ctx, args, 3, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "size", &size, &len, 0));
  if (len < self->rank || len > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "arg 'size': %zu dims cannot expand a rank-%d tensor", len,
                           (int)self->rank);
  for (k = 0; k < len; ++k) {
    size_t lead = len - self->rank;
    if (size[k] == -1 && k >= lead)
      sizes[k] = self->sizes[k - lead];
    else if (size[k] < 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'size': invalid size %" PRId64 " at dim %zu", size[k], k);
    else
      sizes[k] = size[k];
  }
  PTERUN_TRY(pk_bcast_view(ctx, self, "self", (int)len, sizes, &v));
  return emit_view(ctx, self, out, &v, 0);
}

/* Clamps a slice bound the way Python does. */
static int64_t clamp_bound(int64_t b, int64_t size) {
  if (b < 0) b += size;
  if (b < 0) b = 0;
  if (b > size) b = size;
  return b;
}

/* aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None,
 *                             SymInt step=1, *, Tensor(a!) out) */
pterun_status pk_slice_copy_tensor_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pterun_tensor *self, *out;
  int64_t dim, start, end, step, len;
  int has_start, has_end;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(self_out(ctx, args, 5, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 2, "start", &start, &has_start));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 3, "end", &end, &has_end));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "step", &step));
  if (self->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'self': cannot slice a rank-0 tensor");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (step <= 0) return PTERUN_FAIL_ARG(ctx, "arg 'step': must be positive, got %" PRId64, step);
  start = has_start ? clamp_bound(start, self->sizes[dim]) : 0;
  end = has_end ? clamp_bound(end, self->sizes[dim]) : self->sizes[dim];
  len = end > start ? (end - start + step - 1) / step : 0;
  pk_view_of(self, &v);
  v.sizes[dim] = len;
  v.strides[dim] *= step;
  return emit_view(ctx, self, out, &v, len ? start * self->strides[dim] : 0);
}

/* Removes dim d from a view. */
static void view_drop(pk_view* v, int d) {
  int k;
  for (k = d; k + 1 < v->rank; ++k) {
    v->sizes[k] = v->sizes[k + 1];
    v->strides[k] = v->strides[k + 1];
  }
  --v->rank;
}

/* aten::select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out) */
pterun_status pk_select_copy_int_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  pterun_tensor *self, *out;
  int64_t dim, index;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(self_out(ctx, args, 3, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "index", &index));
  if (self->rank == 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': cannot select from a rank-0 tensor");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (index < -self->sizes[dim] || index >= self->sizes[dim])
    return PTERUN_FAIL_ARG(ctx, "arg 'index': %" PRId64 " out of range for size %" PRId64, index,
                           self->sizes[dim]);
  if (index < 0) index += self->sizes[dim];
  pk_view_of(self, &v);
  view_drop(&v, (int)dim);
  return emit_view(ctx, self, out, &v, index * self->strides[dim]);
}

/* aten::narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *, Tensor(a!) out) */
pterun_status pk_narrow_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t dim, start, length;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(self_out(ctx, args, 4, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "start", &start));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "length", &length));
  if (self->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'self': cannot narrow a rank-0 tensor");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (start < 0) start += self->sizes[dim];
  if (start < 0 || length < 0 || start > self->sizes[dim] || length > self->sizes[dim] - start)
    return PTERUN_FAIL_ARG(ctx, "start %" PRId64 " + length %" PRId64 " exceeds size %" PRId64,
                           start, length, self->sizes[dim]);
  pk_view_of(self, &v);
  v.sizes[dim] = length;
  return emit_view(ctx, self, out, &v, length ? start * self->strides[dim] : 0);
}

/* Plain copies: alias_copy, detach_copy, lift_fresh_copy (self, *, out). */
static pterun_status plain_copy(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(self_out(ctx, args, 1, &self, &out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  pk_copy_tensor(out, self);
  return PTERUN_STATUS_OK;
}

pterun_status pk_alias_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return plain_copy(ctx, args, nargs);
}
pterun_status pk_detach_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return plain_copy(ctx, args, nargs);
}
pterun_status pk_lift_fresh_copy_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  return plain_copy(ctx, args, nargs);
}

/* aten::as_strided_copy.out(Tensor self, SymInt[] size, SymInt[] stride,
 *                           SymInt? storage_offset=None, *, Tensor(a!) out) */
pterun_status pk_as_strided_copy_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t *size, *stride;
  size_t ns, nst, k;
  int64_t off, maxoff;
  int has_off;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(self_out(ctx, args, 4, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "size", &size, &ns, 0));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 2, "stride", &stride, &nst, 0));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 3, "storage_offset", &off, &has_off));
  if (ns != nst || ns > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "args 'size'/'stride': lengths %zu and %zu differ", ns, nst);
  if (!has_off) off = 0;
  maxoff = off;
  v.rank = (int)ns;
  for (k = 0; k < ns; ++k) {
    if (size[k] < 0 || stride[k] < 0)
      return PTERUN_FAIL_ARG(ctx, "negative size or stride at dim %zu", k);
    v.sizes[k] = size[k];
    v.strides[k] = stride[k];
    if (size[k] == 0) maxoff = -1;
    if (maxoff >= 0) {
      /* (size-1)*stride and the running sum must not overflow (all >= 0). */
      if (stride[k] != 0 && size[k] - 1 > (INT64_MAX - maxoff) / stride[k])
        return PTERUN_FAIL_ARG(ctx, "args 'size'/'stride': the view's extent overflows at dim %zu",
                               k);
      maxoff += (size[k] - 1) * stride[k];
    }
  }
  /* The view must stay inside self's elements. */
  if (off < 0 || (maxoff >= 0 && maxoff >= self->numel))
    return PTERUN_FAIL_ARG(ctx, "view reaches element %" PRId64 " of a %" PRId64 "-element tensor",
                           maxoff, self->numel);
  return emit_view(ctx, self, out, &v, off);
}

/* aten::flip.out(Tensor self, int[] dims, *, Tensor(a!) out) */
pterun_status pk_flip_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* dims;
  size_t len, k;
  int flip[PTERUN_MAX_RANK] = {0};
  int64_t base = 0;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "dims", &dims, &len, 0));
  pk_view_of(self, &v);
  for (k = 0; k < len; ++k) {
    int64_t d;
    PTERUN_TRY(pk_wrap_dim(ctx, dims[k], self->rank, &d));
    if (self->rank == 0) continue;
    if (flip[d]++) return PTERUN_FAIL_ARG(ctx, "arg 'dims': dim %" PRId64 " repeats", d);
    /* Walk the dim backwards: start at its last element, negative stride. */
    if (v.sizes[d] > 0) base += (v.sizes[d] - 1) * v.strides[d];
    v.strides[d] = -v.strides[d];
  }
  return emit_view(ctx, self, out, &v, self->numel ? base : 0);
}

/* aten::roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out) */
pterun_status pk_roll_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t *shifts, *dims;
  size_t ns, nd, k;
  int64_t shift[PTERUN_MAX_RANK] = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(self_out(ctx, args, 3, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "shifts", &shifts, &ns, 0));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 2, "dims", &dims, &nd, 0));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  if (nd == 0) {
    /* Roll the flattened tensor, keeping the shape. */
    int64_t n, s, pos;
    int64_t ii[PTERUN_MAX_RANK] = {0}, oi[PTERUN_MAX_RANK] = {0};
    if (ns != 1)
      return PTERUN_FAIL_ARG(ctx, "arg 'shifts': one shift needed without dims, got %zu", ns);
    if (self->numel == 0) return PTERUN_STATUS_OK;
    s = ((shifts[0] % self->numel) + self->numel) % self->numel;
    /* out[(n + s) % numel] = self[n]: start reading at numel - s. */
    pos = (self->numel - s) % self->numel;
    for (n = 0; n < pos; ++n) pk_next_index(ii, self->sizes, self->rank);
    for (n = 0; n < self->numel; ++n) {
      pk_convert1(out->data, out->dtype, pk_offset(out, oi), self->data, self->dtype,
                  pk_offset(self, ii));
      pk_next_index(oi, out->sizes, out->rank);
      pk_next_index(ii, self->sizes, self->rank);
    }
    return PTERUN_STATUS_OK;
  }
  if (ns != nd)
    return PTERUN_FAIL_ARG(ctx, "args 'shifts'/'dims': lengths %zu and %zu differ", ns, nd);
  for (k = 0; k < nd; ++k) {
    int64_t d, sz;
    PTERUN_TRY(pk_wrap_dim(ctx, dims[k], self->rank, &d));
    if (self->rank == 0) continue;
    sz = self->sizes[d];
    if (sz > 0) shift[d] = (((shift[d] + shifts[k]) % sz) + sz) % sz;
  }
  if (self->numel == 0) return PTERUN_STATUS_OK;
  {
    /* Each output coordinate reads (i - shift) mod size along rolled dims. */
    int64_t oi[PTERUN_MAX_RANK] = {0};
    do {
      int64_t soff = 0;
      int d;
      for (d = 0; d < self->rank; ++d) {
        int64_t i = oi[d] - shift[d];
        if (i < 0) i += self->sizes[d];
        soff += i * self->strides[d];
      }
      pk_convert1(out->data, out->dtype, pk_offset(out, oi), self->data, self->dtype, soff);
    } while (pk_next_index(oi, out->sizes, out->rank));
  }
  return PTERUN_STATUS_OK;
}

/* aten::repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) */
pterun_status pk_repeat_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* reps;
  size_t len, k;
  int64_t sizes[PTERUN_MAX_RANK], ssz[PTERUN_MAX_RANK], sst[PTERUN_MAX_RANK];
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "repeats", &reps, &len, 0));
  if (len < self->rank || len > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "arg 'repeats': %zu values for a rank-%d tensor", len,
                           (int)self->rank);
  for (k = 0; k < len; ++k) {
    size_t lead = len - self->rank;
    if (reps[k] < 0) return PTERUN_FAIL_ARG(ctx, "arg 'repeats': negative value %" PRId64, reps[k]);
    ssz[k] = k < lead ? 1 : self->sizes[k - lead];
    sst[k] = k < lead ? 0 : self->strides[k - lead];
    sizes[k] = ssz[k] * reps[k];
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", len, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  {
    /* Copy rows of the innermost dim; each output coordinate reads i % size. */
    int64_t oi[PTERUN_MAX_RANK] = {0};
    int r = (int)len;
    do {
      int64_t soff = 0, doff = 0;
      int d;
      for (d = 0; d < r; ++d) {
        soff += (oi[d] % ssz[d]) * sst[d];
        doff += oi[d] * out->strides[d];
      }
      pk_convert1(out->data, out->dtype, doff, self->data, self->dtype, soff);
    } while (pk_next_index(oi, sizes, r));
  }
  return PTERUN_STATUS_OK;
}

/* Pixel (un)shuffle as a view: dims (lead.., C, H, i, W, j) of the small
 * spatial tensor against the large one. */
static pterun_status pixel_shuffle(pterun_kernel_context* ctx, pterun_tensor* self,
                                   pterun_tensor* out, int64_t r, int up) {
  int64_t sizes[PTERUN_MAX_RANK];
  pk_view sv, dv;
  int lead, d;
  int64_t c, h, w;
  pterun_tensor *big, *small;
  if (self->rank < 3 || self->rank + 2 > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': expected rank >= 3, got %d", (int)self->rank);
  if (r <= 0) return PTERUN_FAIL_ARG(ctx, "factor must be positive");
  lead = self->rank - 3;
  for (d = 0; d < lead; ++d) sizes[d] = self->sizes[d];
  if (up) {
    if (self->sizes[lead] % (r * r) != 0)
      return PTERUN_FAIL_ARG(ctx, "channels %" PRId64 " not divisible by %" PRId64,
                             self->sizes[lead], r * r);
    c = self->sizes[lead] / (r * r);
    h = self->sizes[lead + 1];
    w = self->sizes[lead + 2];
    sizes[lead] = c, sizes[lead + 1] = h * r, sizes[lead + 2] = w * r;
  } else {
    if (self->sizes[lead + 1] % r != 0 || self->sizes[lead + 2] % r != 0)
      return PTERUN_FAIL_ARG(ctx, "height/width not divisible by %" PRId64, r);
    c = self->sizes[lead];
    h = self->sizes[lead + 1] / r;
    w = self->sizes[lead + 2] / r;
    sizes[lead] = c * r * r, sizes[lead + 1] = h, sizes[lead + 2] = w;
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", self->rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  /* small: [.., C*r*r, H, W]; big: [.., C, H*r, W*r]. */
  small = up ? self : out;
  big = up ? out : self;
  {
    const int64_t* ss = small->strides;
    const int64_t* bs = big->strides;
    pk_view* vs = up ? &sv : &dv;
    pk_view* vb = up ? &dv : &sv;
    int64_t dimsz[5] = {c, h, r, w, r};
    int64_t sst[5] = {r * r * ss[lead], ss[lead + 1], r * ss[lead], ss[lead + 2], ss[lead]};
    int64_t bst[5] = {bs[lead], r * bs[lead + 1], bs[lead + 1], r * bs[lead + 2], bs[lead + 2]};
    vs->rank = vb->rank = lead + 5;
    for (d = 0; d < lead; ++d) {
      vs->sizes[d] = vb->sizes[d] = self->sizes[d];
      vs->strides[d] = ss[d];
      vb->strides[d] = bs[d];
    }
    for (d = 0; d < 5; ++d) {
      vs->sizes[lead + d] = vb->sizes[lead + d] = dimsz[d];
      vs->strides[lead + d] = sst[d];
      vb->strides[lead + d] = bst[d];
    }
  }
  pk_copy_view(out->data, out->dtype, &dv, 0, self->data, self->dtype, &sv, 0);
  return PTERUN_STATUS_OK;
}

/* aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out) */
pterun_status pk_pixel_shuffle_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t r;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "upscale_factor", &r));
  return pixel_shuffle(ctx, self, out, r, 1);
}

/* aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) */
pterun_status pk_pixel_unshuffle_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  pterun_tensor *self, *out;
  int64_t r;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "downscale_factor", &r));
  return pixel_shuffle(ctx, self, out, r, 0);
}

/* aten::diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out) */
pterun_status pk_diagonal_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t offset, d1, d2, len, base = 0, s1, s2;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(self_out(ctx, args, 4, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "offset", &offset));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "dim1", &d1));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "dim2", &d2));
  if (self->rank < 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': expected rank >= 2, got %d", (int)self->rank);
  PTERUN_TRY(pk_wrap_dim(ctx, d1, self->rank, &d1));
  PTERUN_TRY(pk_wrap_dim(ctx, d2, self->rank, &d2));
  if (d1 == d2) return PTERUN_FAIL_ARG(ctx, "dim1 and dim2 are equal");
  s1 = self->sizes[d1];
  s2 = self->sizes[d2];
  if (offset >= 0) {
    len = s1 < s2 - offset ? s1 : s2 - offset;
    base = offset * self->strides[d2];
  } else {
    len = s1 + offset < s2 ? s1 + offset : s2;
    base = -offset * self->strides[d1];
  }
  if (len <= 0) len = 0, base = 0;
  pk_view_of(self, &v);
  v.sizes[v.rank] = len;
  v.strides[v.rank] = self->strides[d1] + self->strides[d2];
  ++v.rank;
  view_drop(&v, (int)(d1 > d2 ? d1 : d2));
  view_drop(&v, (int)(d1 > d2 ? d2 : d1));
  return emit_view(ctx, self, out, &v, base);
}

/* aten::unfold_copy.out(Tensor self, int dimension, int size, int step, *, Tensor(a!) out) */
pterun_status pk_unfold_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t dim, size, step, dsz, dst;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(self_out(ctx, args, 4, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dimension", &dim));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "size", &size));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "step", &step));
  PTERUN_TRY(pk_wrap_dim(ctx, dim, self->rank, &dim));
  if (self->rank + 1 > PTERUN_MAX_RANK) return PTERUN_FAIL_ARG(ctx, "rank too large");
  dsz = self->rank ? self->sizes[dim] : 1;
  dst = self->rank ? self->strides[dim] : 1;
  if (size < 0 || size > dsz || step <= 0)
    return PTERUN_FAIL_ARG(ctx, "size %" PRId64 " / step %" PRId64 " invalid for dim size %" PRId64,
                           size, step, dsz);
  pk_view_of(self, &v);
  if (self->rank) {
    v.sizes[dim] = (dsz - size) / step + 1;
    v.strides[dim] = dst * step;
  }
  v.sizes[v.rank] = size;
  v.strides[v.rank] = dst;
  ++v.rank;
  return emit_view(ctx, self, out, &v, 0);
}

/* aten::tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) */
pterun_status pk_tril_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  int64_t diag, idx[PTERUN_MAX_RANK] = {0};
  int r;
  size_t es;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(self_out(ctx, args, 2, &self, &out));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "diagonal", &diag));
  if (self->rank < 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': expected rank >= 2, got %d", (int)self->rank);
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  pk_copy_tensor(out, self);
  /* Zero everything above the chosen diagonal (col - row > diag). */
  r = out->rank;
  es = pterun_dtype_size(out->dtype);
  do {
    if (idx[r - 1] - idx[r - 2] > diag) memset(pk_ptr(out, pk_offset(out, idx)), 0, es);
  } while (pk_next_index(idx, out->sizes, r));
  return PTERUN_STATUS_OK;
}

/* aten::view_as_real_copy.out(Tensor self, *, Tensor(a!) out) */
pterun_status pk_view_as_real_copy_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pterun_tensor *self, *out;
  int64_t sizes[PTERUN_MAX_RANK];
  int part, d;
  pk_view v;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  part = self->dtype == PTERUN_DTYPE_COMPLEX64    ? PTERUN_DTYPE_F32
         : self->dtype == PTERUN_DTYPE_COMPLEX128 ? PTERUN_DTYPE_F64
         : self->dtype == PTERUN_DTYPE_COMPLEX32  ? PTERUN_DTYPE_F16
                                                  : -1;
  if (part < 0 || out->dtype != part || self->rank + 1 > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': need a complex tensor and a matching real out");
  /* Each complex element is two consecutive real ones. */
  v.rank = self->rank + 1;
  for (d = 0; d < self->rank; ++d) {
    sizes[d] = v.sizes[d] = self->sizes[d];
    v.strides[d] = 2 * self->strides[d];
  }
  sizes[d] = v.sizes[d] = 2;
  v.strides[d] = 1;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)v.rank, sizes));
  if (out->numel) {
    pk_view dv;
    pk_view_of(out, &dv);
    pk_copy_view(out->data, out->dtype, &dv, 0, self->data, part, &v, 0);
  }
  return PTERUN_STATUS_OK;
}
