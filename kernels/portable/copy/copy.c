/* Copies that may change dtype or layout: clone, _to_copy, copy, copy_ and
 * the dim-order variants the default ExecuTorch export emits; _conj_physical
 * (a copy for real dtypes). */
#include <inttypes.h>

#include "kernels/portable/util.h"

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
  PTERUN_TRY(pk_check_memory_format_arg(ctx, args, 1));
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
  PTERUN_TRY(pk_check_memory_format_arg(ctx, args, 2));
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
  PTERUN_TRY(pk_check_dim_order_arg(ctx, args, 2, out));
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
  PTERUN_TRY(pk_check_dim_order_arg(ctx, args, 2, out));
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

/* aten::_conj_physical.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
 * Complex dtypes: the imaginary parts change sign (a sign-bit flip, so -0.0
 * and NaN behave as negation does). Real dtypes: a copy, as in ATen. */
pterun_status pk__conj_physical_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *out;
  int64_t n;
  size_t es, half;
  int cplx;
  pterun_iter it;
  const pterun_tensor* ins[1];
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  cplx = in->dtype == PTERUN_DTYPE_COMPLEX32 || in->dtype == PTERUN_DTYPE_COMPLEX64 ||
         in->dtype == PTERUN_DTYPE_COMPLEX128;
  if (!cplx) PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  es = pterun_dtype_size(in->dtype);
  half = es / 2;
  ins[0] = in;
  pterun_iter_init(&it, out, ins, 1);
  for (n = 0; n < out->numel; ++n) {
    unsigned char* d = (unsigned char*)pk_ptr(out, it.off[0]);
    memmove(d, pk_ptr(in, it.off[1]), es);
    /* Little-endian: the sign bit is the top bit of the last byte of the
     * imaginary half. */
    if (cplx) d[half + half - 1] ^= 0x80;
    pterun_iter_next(&it);
  }
  return PTERUN_STATUS_OK;
}
