/* Tensor creation: full, full_like, zeros, ones, scalar_tensor, arange, fill,
 * empty and _empty_dim_order. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* Fills out with a Scalar, refusing a float scalar for an integer out
 * (ATen: "value cannot be converted to type int without overflow"). */
static pterun_status fill_scalar(pterun_kernel_context* ctx, pterun_tensor* out,
                                 const pterun_scalar* s) {
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (s->is_float && !pterun_dtype_is_float(out->dtype) && out->dtype != PTERUN_DTYPE_BOOL &&
      (s->d != (double)s->i || isnan(s->d)))
    return PTERUN_FAIL_ARG(ctx, "value %g cannot be stored in %s", s->d,
                           pterun_dtype_name(out->dtype));
  if (out->numel > 0 && out->data == NULL) return PTERUN_FAIL_ARG(ctx, "arg 'out': no data");
  pk_fill(out, s->d, s->i, s->is_float);
  return PTERUN_STATUS_OK;
}

/* aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) */
pterun_status pk_full_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  pterun_scalar v;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "fill_value", &v));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_resize_to_size_arg(ctx, args, 0, out));
  return fill_scalar(ctx, out, &v);
}

/* aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None,
 *                     Tensor(a!) out) */
pterun_status pk_full_like_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  pterun_scalar v;
  int64_t mf;
  int has;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "fill_value", &v));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 2, "memory_format", &mf, &has));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  return fill_scalar(ctx, out, &v);
}

static pterun_status fill_const(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                int64_t value) {
  pterun_tensor* out;
  pterun_scalar v;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pk_resize_to_size_arg(ctx, args, 0, out));
  memset(&v, 0, sizeof v);
  v.i = value;
  v.d = (double)value;
  return fill_scalar(ctx, out, &v);
}

/* aten::zeros.out(SymInt[] size, *, Tensor(a!) out) */
pterun_status pk_zeros_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return fill_const(ctx, args, nargs, 0);
}

/* aten::ones.out(SymInt[] size, *, Tensor(a!) out) */
pterun_status pk_ones_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return fill_const(ctx, args, nargs, 1);
}

/* aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out) */
pterun_status pk_scalar_tensor_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  pterun_scalar v;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 0, "s", &v));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 0, NULL));
  /* A float scalar into an int out truncates here (ATen casts). */
  if (out->data == NULL) return PTERUN_FAIL_ARG(ctx, "arg 'out': no data");
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  pk_fill(out, v.d, v.i, v.is_float);
  return PTERUN_STATUS_OK;
}

/* arange shared by both overloads: start + k*step for k < ceil((end-start)/step). */
static pterun_status arange(pterun_kernel_context* ctx, const pterun_scalar* start,
                            const pterun_scalar* end, const pterun_scalar* step,
                            pterun_tensor* out) {
  double n;
  int64_t len, k;
  int ints;
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (out->dtype == PTERUN_DTYPE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "arg 'out': bool not supported");
  if (step->d == 0.0) return PTERUN_FAIL_ARG(ctx, "arg 'step': must be nonzero");
  if ((step->d > 0 && end->d < start->d) || (step->d < 0 && end->d > start->d))
    return PTERUN_FAIL_ARG(ctx, "upper bound and step sign are inconsistent");
  n = ceil((end->d - start->d) / step->d);
  if (!(n >= 0 && n < 9.0e18)) return PTERUN_FAIL_ARG(ctx, "invalid arange length");
  len = (int64_t)n;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 1, &len));
  if (len > 0 && out->data == NULL) return PTERUN_FAIL_ARG(ctx, "arg 'out': no data");
  ints = !start->is_float && !step->is_float && !pterun_dtype_is_float(out->dtype);
  for (k = 0; k < len; ++k) {
    int64_t off = k * out->strides[0];
    if (ints)
      pterun_store_i64(out->data, out->dtype, off, start->i + k * step->i);
    else
      pterun_store_f64(out->data, out->dtype, off, start->d + (double)k * step->d);
  }
  return PTERUN_STATUS_OK;
}

/* aten::arange.out(Scalar end, *, Tensor(a!) out) */
pterun_status pk_arange_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  pterun_scalar start, end, step;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 0, "end", &end));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  memset(&start, 0, sizeof start);
  memset(&step, 0, sizeof step);
  step.i = 1;
  step.d = 1.0;
  return arange(ctx, &start, &end, &step, out);
}

/* aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) */
pterun_status pk_arange_start_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  pterun_scalar start, end, step;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 0, "start", &start));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "end", &end));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 2, "step", &step));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  return arange(ctx, &start, &end, &step, out);
}

/* aten::fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) */
pterun_status pk_fill_scalar_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  pterun_scalar v;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "value", &v));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  return fill_scalar(ctx, out, &v);
}

/* aten::fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out) */
pterun_status pk_fill_tensor_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *value, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "value", &value));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pk_check_real(ctx, value, "value"));
  PTERUN_TRY(pk_check_real(ctx, out, "out"));
  if (value->rank != 0 || value->data == NULL)
    return PTERUN_FAIL_ARG(ctx, "arg 'value': expected a 0-dim tensor, got rank %d",
                           (int)value->rank);
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  pk_convert1(out->data, out->dtype, 0, value->data, value->dtype, 0);
  {
    /* Replicate element 0 (its bytes) over the dense buffer. */
    size_t es = pterun_dtype_size(out->dtype);
    int64_t k;
    for (k = 1; k < out->numel; ++k) memcpy((char*)out->data + (size_t)k * es, out->data, es);
  }
  return PTERUN_STATUS_OK;
}

/* aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
pterun_status pk_empty_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor* out;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pk_check_memory_format_arg(ctx, args, 1));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  return pk_resize_to_size_arg(ctx, args, 0, out);
}

/* dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None, Tensor(a!) out) */
pterun_status pk__empty_dim_order_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  pterun_tensor* out;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_dim_order_arg(ctx, args, 1, out));
  return pk_resize_to_size_arg(ctx, args, 0, out);
}
