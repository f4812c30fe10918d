/* torchao's packed-weights header and the operators' argument checks. The
 * n-bit chunk unpackers are in libpterun_compute
 * (src/compute/lowbit/unpack.c, pterun_compute_lowbit_unpack). */
#include <inttypes.h>
#include <string.h>

#include "kernels/lowbit/lb.h"

static int32_t rd32(const uint8_t* p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

/* ---- header and argument checks ---- */

pterun_status lb_linear_header(pterun_kernel_context* ctx, const uint8_t* p, size_t size, int nbit,
                               int* has_zeros, int* has_bias) {
  int32_t w[16];
  int i;
  if (size < LB_HEADER_BYTES)
    return PTERUN_FAIL_ARG(ctx, "arg 'packed_weights': %zu bytes, shorter than the 64-byte header",
                           size);
  for (i = 0; i < 16; ++i) w[i] = rd32(p + 4 * i);
  if (w[0] != LB_MAGIC)
    return PTERUN_FAIL_ARG(ctx, "arg 'packed_weights': bad magic %" PRId32 " (want 6712)", w[0]);
  if (w[1] != LB_TYPE_LINEAR)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'packed_weights': format type %" PRId32
                           " not supported (only 1, torchao's universal linear layout)",
                           w[1]);
  if (w[2] != nbit)
    return PTERUN_FAIL_ARG(
        ctx, "arg 'packed_weights': packed for %" PRId32 "-bit weights, operator is %d-bit", w[2],
        nbit);
  if ((w[3] != 0 && w[3] != 1) || (w[4] != 0 && w[4] != 1))
    return PTERUN_FAIL_ARG(
        ctx, "arg 'packed_weights': bad has_weight_zeros/has_bias flags %" PRId32 "/%" PRId32, w[3],
        w[4]);
  if (w[5] != LB_NR || w[6] != LB_KR || w[7] != LB_SR)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'packed_weights': tiling nr=%" PRId32 " kr=%" PRId32 " sr=%" PRId32
                           " not supported (universal layout is 8/16/2)",
                           w[5], w[6], w[7]);
  for (i = 8; i < 16; ++i)
    if (w[i] != 0) return PTERUN_FAIL_ARG(ctx, "arg 'packed_weights': header word %d is not 0", i);
  *has_zeros = w[3];
  *has_bias = w[4];
  return PTERUN_STATUS_OK;
}

pterun_status lb_packed_arg(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            const uint8_t** data, size_t* size) {
  if (t->rank != 1)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': must be 1-D, got rank %d", name, t->rank);
  if (t->dtype != PTERUN_DTYPE_I8 && t->dtype != PTERUN_DTYPE_U8)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': dtype %s not supported (int8 bytes)", name,
                           pterun_dtype_name(t->dtype));
  if (t->numel > 0 && t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_STATE, "arg '%s': no data", name);
  if (t->nbytes < (size_t)t->numel)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': storage smaller than its %" PRId64 " bytes", name,
                           t->numel);
  *data = (const uint8_t*)t->data;
  *size = (size_t)t->numel;
  return PTERUN_STATUS_OK;
}

pterun_status lb_indices_arg(pterun_kernel_context* ctx, const pterun_tensor* t, int64_t n) {
  int64_t i;
  if (t->rank != 1) return PTERUN_FAIL_ARG(ctx, "arg 'indices': must be 1-D, got rank %d", t->rank);
  if (t->dtype != PTERUN_DTYPE_I32 && t->dtype != PTERUN_DTYPE_I64)
    return PTERUN_FAIL_ARG(ctx, "arg 'indices': dtype %s not supported (int32 or int64)",
                           pterun_dtype_name(t->dtype));
  if (t->numel > 0 && t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_STATE, "arg 'indices': no data");
  for (i = 0; i < t->numel; ++i) {
    int64_t r = pterun_load_i64(t->data, t->dtype, i);
    if (r < 0 || r >= n)
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'indices': index %" PRId64 " at position %" PRId64
                             " out of range [0, %" PRId64 ")",
                             r, i, n);
  }
  return PTERUN_STATUS_OK;
}

pterun_status lb_linear_check(pterun_kernel_context* ctx, const uint8_t* packed, size_t size,
                              int nbit, int64_t gs, int64_t n, int64_t k, int* has_zeros,
                              int* has_bias, uint64_t* tile_bytes) {
  uint64_t need;
  PTERUN_TRY(lb_linear_header(ctx, packed, size, nbit, has_zeros, has_bias));
  if (n < 1 || n > INT32_MAX || k < 1 || k > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx, "args 'n', 'k': %" PRId64 ", %" PRId64 " out of range [1, 2^31)", n,
                           k);
  if (gs < 16 || gs % 16 != 0 || k % gs != 0)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'group_size': %" PRId64
                           " must be a positive multiple of 16 that divides k = %" PRId64,
                           gs, k);
  *tile_bytes = pterun_compute_lowbit_tile_bytes(nbit, k, gs, *has_zeros, *has_bias);
  /* tiles < 2^28 and tile bytes < 2^36: the product fits */
  need = LB_HEADER_BYTES + (uint64_t)((n + LB_NR - 1) / LB_NR) * *tile_bytes;
  if ((uint64_t)size != need)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'packed_weights': %zu bytes, but n=%" PRId64 " k=%" PRId64
                           " group_size=%" PRId64 " at %d bits needs %" PRIu64,
                           size, n, k, gs, nbit, need);
  return PTERUN_STATUS_OK;
}

pterun_status lb_out_2d(pterun_kernel_context* ctx, pterun_tensor* out, int64_t rows,
                        int64_t cols) {
  int64_t sizes[2];
  if (out->dtype != PTERUN_DTYPE_F32)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s not supported (float32)",
                           pterun_dtype_name(out->dtype));
  sizes[0] = rows;
  sizes[1] = cols;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  if (!pterun_tensor_is_contiguous(out) || (out->numel > 0 && out->data == NULL))
    return PTERUN_FAIL_ARG(ctx, "arg 'out': must be contiguous with data");
  return PTERUN_STATUS_OK;
}
