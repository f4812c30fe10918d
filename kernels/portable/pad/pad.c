/* Padding: constant_pad_nd and reflection/replication pad 1-D/2-D/3-D. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* aten::constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out) */
pterun_status pk_constant_pad_nd_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  pterun_tensor *self, *out;
  const int64_t* pad;
  size_t len;
  pterun_scalar value;
  int64_t sizes[PTERUN_MAX_RANK], lo[PTERUN_MAX_RANK] = {0}, hi[PTERUN_MAX_RANK] = {0};
  pk_view sv, dv;
  int64_t soff = 0, doff = 0;
  int d;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 1, "pad", &pad, &len, 0));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 2, "value", &value));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, self, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  if (len % 2 != 0 || len / 2 > self->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'pad': %zu values for a rank-%d tensor", len, (int)self->rank);
  /* pad pairs start from the last dim; negative values crop. */
  for (d = 0; d < self->rank; ++d) {
    int k = self->rank - 1 - d;
    if ((size_t)(2 * k + 1) < len) {
      lo[d] = pad[2 * k];
      hi[d] = pad[2 * k + 1];
    }
    sizes[d] = self->sizes[d] + lo[d] + hi[d];
    if (sizes[d] < 0) return PTERUN_FAIL_ARG(ctx, "padding makes dim %d negative", d);
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", self->rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  pk_fill(out, value.d, value.i, value.is_float);
  /* Copy the part of self that survives cropping into its padded place. */
  pk_view_of(self, &sv);
  pk_view_of(out, &dv);
  for (d = 0; d < self->rank; ++d) {
    int64_t s0 = lo[d] < 0 ? -lo[d] : 0;
    int64_t s1 = self->sizes[d] - (hi[d] < 0 ? -hi[d] : 0);
    int64_t n = s1 - s0;
    if (n <= 0) return PTERUN_STATUS_OK;
    sv.sizes[d] = dv.sizes[d] = n;
    soff += s0 * self->strides[d];
    doff += (lo[d] > 0 ? lo[d] : 0) * out->strides[d];
  }
  pk_copy_view(out->data, out->dtype, &dv, doff, self->data, self->dtype, &sv, soff);
  return PTERUN_STATUS_OK;
}

/* Padding by index mapping over the last `sp` dims: reflect or replicate. */
static pterun_status pad_map(pterun_kernel_context* ctx, pterun_value** args, size_t nargs, int sp,
                             int reflect) {
  pterun_tensor *self, *out;
  int64_t pad[6], sizes[PTERUN_MAX_RANK], lo[PTERUN_MAX_RANK] = {0}, idx[PTERUN_MAX_RANK] = {0};
  int d, first;
  size_t es;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, self, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(pk_arg_int_n(ctx, args, 1, "padding", 2 * sp, NULL, pad));
  if (self->rank != sp + 1 && self->rank != sp + 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': expected rank %d or %d, got %d", sp + 1, sp + 2,
                           (int)self->rank);
  first = self->rank - sp;
  for (d = 0; d < self->rank; ++d) {
    int64_t l = 0, h = 0;
    if (d >= first) {
      int k = self->rank - 1 - d;
      l = pad[2 * k];
      h = pad[2 * k + 1];
      if (reflect ? (l < 0 || h < 0 || l >= self->sizes[d] || h >= self->sizes[d])
                  : (l < 0 || h < 0 || self->sizes[d] == 0))
        return PTERUN_FAIL_ARG(ctx, "padding (%" PRId64 ", %" PRId64 ") invalid for size %" PRId64,
                               l, h, self->sizes[d]);
    }
    lo[d] = l;
    sizes[d] = self->sizes[d] + l + h;
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", self->rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  es = pterun_dtype_size(out->dtype);
  do {
    int64_t soff = 0;
    for (d = 0; d < self->rank; ++d) {
      int64_t i = idx[d] - lo[d], n = self->sizes[d];
      if (i < 0) i = reflect ? -i : 0;
      if (i >= n) i = reflect ? 2 * (n - 1) - i : n - 1;
      soff += i * self->strides[d];
    }
    memcpy(pk_ptr(out, pk_offset(out, idx)), pk_ptr(self, soff), es);
  } while (pk_next_index(idx, out->sizes, out->rank));
  return PTERUN_STATUS_OK;
}

/* aten::reflection_pad{1,2,3}d.out / replication_pad{1,2,3}d.out
 *   (Tensor self, SymInt[2*S] padding, *, Tensor(a!) out) */
pterun_status pk_reflection_pad1d_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  return pad_map(ctx, args, nargs, 1, 1);
}
pterun_status pk_reflection_pad2d_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  return pad_map(ctx, args, nargs, 2, 1);
}
pterun_status pk_reflection_pad3d_out(pterun_kernel_context* ctx, pterun_value** args,
                                      size_t nargs) {
  return pad_map(ctx, args, nargs, 3, 1);
}
pterun_status pk_replication_pad1d_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  return pad_map(ctx, args, nargs, 1, 0);
}
pterun_status pk_replication_pad2d_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  return pad_map(ctx, args, nargs, 2, 0);
}
pterun_status pk_replication_pad3d_out(pterun_kernel_context* ctx, pterun_value** args,
                                       size_t nargs) {
  return pad_map(ctx, args, nargs, 3, 0);
}
