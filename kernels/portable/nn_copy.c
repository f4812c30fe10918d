/* Copies that may change dtype or layout: clone, _to_copy, copy, copy_ and
 * the dim-order variants the default ExecuTorch export emits. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* ATen MemoryFormat values accepted by the layout-changing copies. The
 * layout itself is whatever out's dim order says. */
static pterun_status check_memory_format(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t i) {
  int64_t mf;
  int has;
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, i, "memory_format", &mf, &has));
  if (has && (mf < 0 || mf > 3))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg 'memory_format': unknown value %" PRId64, mf);
  return PTERUN_STATUS_OK;
}

/* A `int[]? dim_order` argument: when given it must be a permutation that
 * equals out's dim order (out was planned with it). */
static pterun_status check_dim_order(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                     const pterun_tensor* out) {
  const int64_t* order;
  size_t len, k;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i, "dim_order", &order, &len, 1));
  if (order == NULL) return PTERUN_STATUS_OK;
  if (len != out->rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg 'dim_order': %zu entries for a rank-%d out", len,
                              (int)out->rank);
  for (k = 0; k < len; ++k)
    if (order[k] != out->dim_order[k])
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                                "arg 'dim_order': entry %zu is %" PRId64
                                " but out's dim order has %d",
                                k, order[k], (int)out->dim_order[k]);
  return PTERUN_STATUS_OK;
}

/* out = self converted to out's dtype and layout. */
static pterun_status convert_copy(pterun_kernel_context* ctx, pterun_tensor* self,
                                  pterun_tensor* out, int same_dtype) {
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  if (same_dtype) PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  if (self->dtype != out->dtype) {
    PTERUN_TRY(pk_check_real(ctx, self, "self"));
    PTERUN_TRY(pk_check_real(ctx, out, "out"));
  }
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  pk_copy_tensor(out, self);
  return PTERUN_STATUS_OK;
}

/* aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pk_clone_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(check_memory_format(ctx, args, 1));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return convert_copy(ctx, self, out, 1);
}

/* aten::_to_copy.out(Tensor self, *, bool non_blocking=False,
 *                    MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pk__to_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  bool nb;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pk_arg_bool(ctx, args, 1, "non_blocking", &nb));
  PTERUN_TRY(check_memory_format(ctx, args, 2));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  return convert_copy(ctx, self, out, 0);
}

/* dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
 *                                       int[]? dim_order=None, Tensor(a!) out) */
pterun_status pk__to_dim_order_copy_out(pterun_kernel_context* ctx, pterun_value** args,
                                        size_t nargs) {
  pterun_tensor *self, *out;
  bool nb;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pk_arg_bool(ctx, args, 1, "non_blocking", &nb));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(check_dim_order(ctx, args, 2, out));
  return convert_copy(ctx, self, out, 0);
}

/* dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
 *                                     int[]? dim_order=None, Tensor(a!) out) */
pterun_status pk__clone_dim_order_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  pterun_tensor *self, *out;
  bool nb;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pk_arg_bool(ctx, args, 1, "non_blocking", &nb));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(check_dim_order(ctx, args, 2, out));
  return convert_copy(ctx, self, out, 1);
}

/* out (shaped like self, self's dtype) = src broadcast to self's shape. */
static pterun_status copy_into(pterun_kernel_context* ctx, const pterun_tensor* self,
                               const pterun_tensor* src, pterun_tensor* out) {
  pk_view sv, dv;
  PTERUN_TRY(pterun_check_data(ctx, src, "src"));
  PTERUN_TRY(pk_check_real(ctx, src, "src"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  PTERUN_TRY(pk_bcast_view(ctx, src, "src", self->rank, self->sizes, &sv));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  pk_view_of(out, &dv);
  pk_copy_view(out->data, out->dtype, &dv, 0, src->data, src->dtype, &sv, 0);
  return PTERUN_STATUS_OK;
}

/* aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) */
pterun_status pk_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *src, *out;
  bool nb;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "src", &src));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "non_blocking", &nb));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  return copy_into(ctx, self, src, out);
}

/* aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) */
pterun_status pk_copy_(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *src;
  bool nb;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "src", &src));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "non_blocking", &nb));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  return copy_into(ctx, self, src, self);
}

/* aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pk_empty_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(check_memory_format(ctx, args, 1));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return pk_resize_to_size_arg(ctx, args, 0, out);
}

/* dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None, Tensor(a!) out) */
pterun_status pk__empty_dim_order_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  pterun_tensor* out;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(check_dim_order(ctx, args, 1, out));
  return pk_resize_to_size_arg(ctx, args, 0, out);
}
