/* Copies that may change dtype or layout: clone, _to_copy, copy, copy_ and
 * the dim-order variants the default ExecuTorch export emits. */
#include <inttypes.h>

#include "kernels/portable/nn_util.h"

/* ATen MemoryFormat values accepted by the layout-changing copies. The
 * layout itself is whatever out's dim order says. */
static pterun_status check_memory_format(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t i) {
  int64_t mf;
  int has;
  PT_TRY(pterun_arg_opt_int(ctx, args, i, "memory_format", &mf, &has));
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
  PT_TRY(pterun_arg_int_list(ctx, args, i, "dim_order", &order, &len, 1));
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
  PT_TRY(nn_check_data(ctx, self, "self"));
  if (same_dtype) PT_TRY(nn_check_same_dtype(ctx, self, "self", out, "out"));
  if (self->dtype != out->dtype) {
    PT_TRY(nn_check_real(ctx, self, "self"));
    PT_TRY(nn_check_real(ctx, out, "out"));
  }
  PT_TRY(pt_resize_like(ctx, out, self));
  nn_copy_tensor(out, self);
  return PTERUN_STATUS_OK;
}

/* aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pt_clone_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  PT_CHECK_NARGS(ctx, nargs, 4);
  PT_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PT_TRY(check_memory_format(ctx, args, 1));
  PT_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return convert_copy(ctx, self, out, 1);
}

/* aten::_to_copy.out(Tensor self, *, bool non_blocking=False,
 *                    MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pt__to_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  bool nb;
  PT_CHECK_NARGS(ctx, nargs, 5);
  PT_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PT_TRY(pt_arg_bool(ctx, args, 1, "non_blocking", &nb));
  PT_TRY(check_memory_format(ctx, args, 2));
  PT_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  return convert_copy(ctx, self, out, 0);
}

/* dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
 *                                       int[]? dim_order=None, Tensor(a!) out) */
pterun_status pt__to_dim_order_copy_out(pterun_kernel_context* ctx, pterun_value** args,
                                        size_t nargs) {
  pterun_tensor *self, *out;
  bool nb;
  PT_CHECK_NARGS(ctx, nargs, 5);
  PT_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PT_TRY(pt_arg_bool(ctx, args, 1, "non_blocking", &nb));
  PT_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PT_TRY(check_dim_order(ctx, args, 2, out));
  return convert_copy(ctx, self, out, 0);
}

/* dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
 *                                     int[]? dim_order=None, Tensor(a!) out) */
pterun_status pt__clone_dim_order_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  pterun_tensor *self, *out;
  bool nb;
  PT_CHECK_NARGS(ctx, nargs, 5);
  PT_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PT_TRY(pt_arg_bool(ctx, args, 1, "non_blocking", &nb));
  PT_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PT_TRY(check_dim_order(ctx, args, 2, out));
  return convert_copy(ctx, self, out, 1);
}

/* out (shaped like self, self's dtype) = src broadcast to self's shape. */
static pterun_status copy_into(pterun_kernel_context* ctx, const pterun_tensor* self,
                               const pterun_tensor* src, pterun_tensor* out) {
  nn_view sv, dv;
  PT_TRY(nn_check_data(ctx, src, "src"));
  PT_TRY(nn_check_real(ctx, src, "src"));
  PT_TRY(nn_check_real(ctx, out, "out"));
  PT_TRY(nn_bcast_view(ctx, src, "src", self->rank, self->sizes, &sv));
  PT_TRY(pt_resize_like(ctx, out, self));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  nn_view_of(out, &dv);
  nn_copy_view(out->data, out->dtype, &dv, 0, src->data, src->dtype, &sv, 0);
  return PTERUN_STATUS_OK;
}

/* aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) */
pterun_status pt_copy_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *src, *out;
  bool nb;
  PT_CHECK_NARGS(ctx, nargs, 5);
  PT_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PT_TRY(pterun_arg_tensor(ctx, args, 1, "src", &src));
  PT_TRY(pt_arg_bool(ctx, args, 2, "non_blocking", &nb));
  PT_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PT_TRY(nn_check_same_dtype(ctx, self, "self", out, "out"));
  return copy_into(ctx, self, src, out);
}

/* aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) */
pterun_status pt_copy_(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *src;
  bool nb;
  PT_CHECK_NARGS(ctx, nargs, 4);
  PT_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PT_TRY(pterun_arg_tensor(ctx, args, 1, "src", &src));
  PT_TRY(pt_arg_bool(ctx, args, 2, "non_blocking", &nb));
  PT_TRY(nn_check_data(ctx, self, "self"));
  return copy_into(ctx, self, src, self);
}

/* aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pt_empty_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  PT_CHECK_NARGS(ctx, nargs, 4);
  PT_TRY(check_memory_format(ctx, args, 1));
  PT_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return nn_resize_to_size_arg(ctx, args, 0, out);
}

/* dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None, Tensor(a!) out) */
pterun_status pt__empty_dim_order_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  pterun_tensor* out;
  PT_CHECK_NARGS(ctx, nargs, 4);
  PT_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PT_TRY(check_dim_order(ctx, args, 1, out));
  return nn_resize_to_size_arg(ctx, args, 0, out);
}
