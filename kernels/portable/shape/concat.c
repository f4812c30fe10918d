/* Joining and splitting along a dim: cat, stack, split(_with_sizes)_copy,
 * unbind_copy. Each piece is a narrowed (or selected) view of the big tensor. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* Copies src into the slab [start, start+len) of `big` along dim (when
 * `into_big`), or that slab of big into src's tensor otherwise. With
 * `selected`, the slab is the single index `start` and src lacks dim. */
static void slab_copy(pterun_tensor* big, int dim, int64_t start, int64_t len, int selected,
                      pterun_tensor* piece, int into_big) {
  pk_view bv, pv;
  int d;
  if (piece->numel == 0) return;
  pk_view_of(big, &bv);
  if (selected) {
    for (d = dim; d + 1 < bv.rank; ++d) {
      bv.sizes[d] = bv.sizes[d + 1];
      bv.strides[d] = bv.strides[d + 1];
    }
    --bv.rank;
  } else {
    bv.sizes[dim] = len;
  }
  pk_view_of(piece, &pv);
  if (into_big)
    pk_copy_view(big->data, big->dtype, &bv, start * big->strides[dim], piece->data, piece->dtype,
                 &pv, 0);
  else
    pk_copy_view(piece->data, piece->dtype, &pv, 0, big->data, big->dtype, &bv,
                 start * big->strides[dim]);
}

/* ATen's legacy rule: a 1-D tensor of size 0 takes no part in cat. */
static int cat_skips(const pterun_tensor* t) {
  return t->rank == 1 && t->sizes[0] == 0;
}

/* aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) */
pterun_status pk_cat_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_value* list;
  pterun_tensor *out, *ref = NULL;
  size_t n, k;
  int64_t dim, sizes[PTERUN_MAX_RANK], pos = 0;
  int d;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pk_arg_tensors(ctx, args, 0, "tensors", &list, &n));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (n == 0) return PTERUN_FAIL_ARG(ctx, "arg 'tensors': empty list");
  for (k = 0; k < n; ++k) {
    pterun_tensor* t = pterun_value_list_tensor(list, k);
    PTERUN_TRY(pk_check_real(ctx, t, "tensors"));
    if (!cat_skips(t) && ref == NULL) ref = t;
  }
  if (ref == NULL) { /* all skipped: the result is the empty 1-D tensor */
    int64_t zero = 0;
    return pterun_out_resize(ctx, out, "out", 1, &zero);
  }
  if (ref->rank == 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'tensors': zero-dim tensors cannot be concatenated");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, ref->rank, &dim));
  for (d = 0; d < ref->rank; ++d) sizes[d] = d == dim ? 0 : ref->sizes[d];
  for (k = 0; k < n; ++k) {
    pterun_tensor* t = pterun_value_list_tensor(list, k);
    if (cat_skips(t)) continue;
    if (t->rank != ref->rank)
      return PTERUN_FAIL_ARG(ctx, "arg 'tensors': tensor %zu has rank %d, expected %d", k,
                             (int)t->rank, (int)ref->rank);
    for (d = 0; d < ref->rank; ++d)
      if (d != dim && t->sizes[d] != ref->sizes[d])
        return PTERUN_FAIL_ARG(
            ctx, "arg 'tensors': tensor %zu has size %" PRId64 " at dim %d, expected %" PRId64, k,
            t->sizes[d], d, ref->sizes[d]);
    sizes[dim] += t->sizes[dim];
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", ref->rank, sizes));
  for (k = 0; k < n; ++k) {
    pterun_tensor* t = pterun_value_list_tensor(list, k);
    if (cat_skips(t)) continue;
    slab_copy(out, (int)dim, pos, t->sizes[dim], 0, t, 1);
    pos += t->sizes[dim];
  }
  return PTERUN_STATUS_OK;
}

/* aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) */
pterun_status pk_stack_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_value* list;
  pterun_tensor *out, *ref;
  size_t n, k;
  int64_t dim, sizes[PTERUN_MAX_RANK];
  int d;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pk_arg_tensors(ctx, args, 0, "tensors", &list, &n));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (n == 0) return PTERUN_FAIL_ARG(ctx, "arg 'tensors': empty list");
  ref = pterun_value_list_tensor(list, 0);
  if (ref->rank + 1 > PTERUN_MAX_RANK) return PTERUN_FAIL_ARG(ctx, "rank too large");
  PTERUN_TRY(pk_wrap_dim(ctx, dim, ref->rank + 1, &dim));
  for (k = 0; k < n; ++k) {
    pterun_tensor* t = pterun_value_list_tensor(list, k);
    PTERUN_TRY(pk_check_real(ctx, t, "tensors"));
    if (t->rank != ref->rank)
      return PTERUN_FAIL_ARG(ctx, "arg 'tensors': tensor %zu has rank %d, expected %d", k,
                             (int)t->rank, (int)ref->rank);
    for (d = 0; d < ref->rank; ++d)
      if (t->sizes[d] != ref->sizes[d])
        return PTERUN_FAIL_ARG(ctx, "arg 'tensors': tensor %zu differs in shape at dim %d", k, d);
  }
  for (d = 0; d <= ref->rank; ++d)
    sizes[d] = d < dim ? ref->sizes[d] : d == dim ? (int64_t)n : ref->sizes[d - 1];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", ref->rank + 1, sizes));
  for (k = 0; k < n; ++k)
    slab_copy(out, (int)dim, (int64_t)k, 1, 1, pterun_value_list_tensor(list, k), 1);
  return PTERUN_STATUS_OK;
}

/* Writes consecutive slabs of self along dim into the tensors of `outs`;
 * lens[k] is the length of piece k (or, with `selected`, each piece is one
 * index without the dim). */
static pterun_status split_into(pterun_kernel_context* ctx, pterun_tensor* self, int64_t dim,
                                pterun_value* outs, const int64_t* lens, int64_t fixed,
                                int selected) {
  size_t k, n = outs->u.tensors.len;
  int64_t pos = 0, sizes[PTERUN_MAX_RANK];
  int d;
  for (k = 0; k < n; ++k) {
    pterun_tensor* o = pterun_value_list_tensor(outs, k);
    int64_t len = lens ? lens[k] : fixed;
    int r = 0;
    if (!selected && len > self->sizes[dim] - pos) len = self->sizes[dim] - pos;
    PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", o, "out"));
    for (d = 0; d < self->rank; ++d) {
      if (d == dim && selected) continue;
      sizes[r++] = d == dim ? len : self->sizes[d];
    }
    PTERUN_TRY(pterun_out_resize(ctx, o, "out", (size_t)r, sizes));
    slab_copy(self, (int)dim, pos, len, selected, o, 0);
    pos += selected ? 1 : len;
  }
  return PTERUN_STATUS_OK;
}

/* Common argument checks: self at 0, dim at di, the out list at oi. */
static pterun_status split_args(pterun_kernel_context* ctx, pterun_value** args, size_t di,
                                size_t oi, pterun_tensor** self, int64_t* dim,
                                pterun_value** outs) {
  size_t n;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", self));
  PTERUN_TRY(pterun_check_data(ctx, *self, "self"));
  PTERUN_TRY(pterun_arg_int(ctx, args, di, "dim", dim));
  PTERUN_TRY(pterun_arg_tensor_list(ctx, args, oi, "out", outs));
  for (n = 0; n < (*outs)->u.tensors.len; ++n)
    if (pterun_value_list_tensor(*outs, n) == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                                "arg 'out': element %zu is not a tensor", n);
  if ((*self)->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'self': cannot split a rank-0 tensor");
  return pk_wrap_dim(ctx, *dim, (*self)->rank, dim);
}

/* aten::split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *,
 *                                 Tensor(a!)[] out) -> () */
pterun_status pk_split_with_sizes_copy_out(pterun_kernel_context* ctx, pterun_value** args,
                                           size_t nargs) {
  pterun_tensor* self;
  pterun_value* outs;
  const int64_t* lens;
  size_t n, k;
  int64_t dim, total = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(split_args(ctx, args, 2, 3, &self, &dim, &outs));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "split_sizes", &lens, &n, 0));
  if (n != outs->u.tensors.len)
    return PTERUN_FAIL_ARG(ctx, "%zu split sizes but %zu outputs", n, outs->u.tensors.len);
  for (k = 0; k < n; ++k) {
    if (lens[k] < 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'split_sizes': negative size %" PRId64, lens[k]);
    total += lens[k];
  }
  if (total != self->sizes[dim])
    return PTERUN_FAIL_ARG(ctx, "split sizes sum to %" PRId64 ", dim has %" PRId64, total,
                           self->sizes[dim]);
  return split_into(ctx, self, dim, outs, lens, 0, 0);
}

/* aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *,
 *                             Tensor(a!)[] out) -> () */
pterun_status pk_split_copy_tensor_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  pterun_tensor* self;
  pterun_value* outs;
  int64_t dim, split, size, want;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(split_args(ctx, args, 2, 3, &self, &dim, &outs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "split_size", &split));
  size = self->sizes[dim];
  if (split < 0 || (split == 0 && size != 0))
    return PTERUN_FAIL_ARG(ctx, "arg 'split_size': invalid value %" PRId64, split);
  want = split == 0 ? 1 : (size + split - 1) / split;
  if (want == 0) want = 1;
  if ((int64_t)outs->u.tensors.len != want)
    return PTERUN_FAIL_ARG(ctx, "expected %" PRId64 " outputs, got %zu", want, outs->u.tensors.len);
  return split_into(ctx, self, dim, outs, NULL, split, 0);
}

/* aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> () */
pterun_status pk_unbind_copy_int_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  pterun_tensor* self;
  pterun_value* outs;
  int64_t dim;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(split_args(ctx, args, 1, 2, &self, &dim, &outs));
  if ((int64_t)outs->u.tensors.len != self->sizes[dim])
    return PTERUN_FAIL_ARG(ctx, "expected %" PRId64 " outputs, got %zu", self->sizes[dim],
                           outs->u.tensors.len);
  return split_into(ctx, self, dim, outs, NULL, 1, 1);
}
