/* torchao's packed-weights header and bit layouts (read side). Each n-bit
 * chunk layout is the one torchao's packers write (uint{1..7}.h in torchao's
 * fallback bitpacking); values are stored with the bias 2^(n-1). */
#include <inttypes.h>
#include <string.h>

#include "kernels/lowbit/lb.h"

static int32_t rd32(const uint8_t* p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

/* ---- per-width unpackers into unsigned values ---- */

static void u1(int count, const uint8_t* s, uint8_t* d) {
  int i, t;
  if (count == 128) {
    for (i = 0; i < 16; ++i)
      for (t = 0; t < 8; ++t) d[i + 16 * t] = (uint8_t)((s[i] >> (7 - t)) & 1);
  } else if (count == 64) {
    for (i = 0; i < 16; ++i) {
      uint8_t c = i < 8 ? (uint8_t)(s[i] & 15) : (uint8_t)(s[i - 8] >> 4);
      for (t = 0; t < 4; ++t) d[i + 16 * t] = (uint8_t)((c >> (3 - t)) & 1);
    }
  } else { /* 32: bytes 0,1 hold values 0..15, bytes 2,3 values 16..31, MSB first */
    for (i = 0; i < 32; ++i) d[i] = (uint8_t)((s[i >> 3] >> (7 - (i & 7))) & 1);
  }
}

static void u2(int count, const uint8_t* s, uint8_t* d) {
  int i, t, blk, stride = count == 32 ? 8 : 16;
  for (blk = 0; blk < (count == 128 ? 2 : 1); ++blk, s += 16, d += 64)
    for (i = 0; i < stride; ++i)
      for (t = 0; t < 4; ++t) d[i + stride * t] = (uint8_t)((s[i] >> (6 - 2 * t)) & 3);
}

static void u3_8(const uint8_t* s, uint8_t* d, int st) {
  /* three bytes (stride st apart) hold 8 values (stride st apart) */
  uint8_t b0 = s[0], b1 = s[st], b2 = s[2 * st];
  d[0] = (b0 >> 3) & 7;
  d[st] = b0 & 7;
  d[2 * st] = (b1 >> 3) & 7;
  d[3 * st] = b1 & 7;
  d[4 * st] = (b2 >> 3) & 7;
  d[5 * st] = b2 & 7;
  d[6 * st] = (uint8_t)((b0 >> 6) | ((b2 >> 5) & 4));
  d[7 * st] = (uint8_t)((b1 >> 6) | ((b2 >> 4) & 4));
}

static void u3(int count, const uint8_t* s, uint8_t* d) {
  int i;
  if (count == 32) {
    for (i = 0; i < 4; ++i) u3_8(s + 3 * i, d + 8 * i, 1);
  } else {
    int st = count / 8;
    for (i = 0; i < st; ++i) u3_8(s + i, d + i, st);
  }
}

static void u4(int count, const uint8_t* s, uint8_t* d) {
  int i, blk;
  for (blk = 0; blk < count / 32; ++blk, s += 16, d += 32)
    for (i = 0; i < 16; ++i) {
      d[i] = s[i] & 15;
      d[i + 16] = s[i] >> 4;
    }
}

static void u5_8(const uint8_t* s, uint8_t* d) {
  uint8_t p4 = s[4];
  d[0] = s[0] & 31;
  d[1] = (uint8_t)((s[0] >> 5) | ((p4 & 3) << 3));
  d[2] = s[1] & 31;
  d[3] = (uint8_t)((s[1] >> 5) | ((p4 & 12) << 1));
  d[4] = s[2] & 31;
  d[5] = (uint8_t)((s[2] >> 5) | ((p4 & 48) >> 1));
  d[6] = s[3] & 31;
  d[7] = (uint8_t)((s[3] >> 5) | ((p4 & 192) >> 3));
}

static void u5(int count, const uint8_t* s, uint8_t* d) {
  int i;
  if (count == 32) {
    for (i = 0; i < 4; ++i) u5_8(s + 5 * i, d + 8 * i);
  } else if (count == 64) {
    for (i = 0; i < 16; ++i) {
      uint8_t p0 = s[i], p1 = s[i + 16], p2 = s[32 + (i & 7)];
      d[i] = p0 & 31;
      d[i + 32] = p1 & 31;
      if (i < 8) {
        d[i + 16] = (uint8_t)((p0 >> 5) | ((p2 & 3) << 3));
        d[i + 48] = (uint8_t)((p1 >> 5) | ((p2 & 48) >> 1));
      } else {
        d[i + 16] = (uint8_t)((p0 >> 5) | ((p2 & 12) << 1));
        d[i + 48] = (uint8_t)((p1 >> 5) | ((p2 & 192) >> 3));
      }
    }
  } else {
    for (i = 0; i < 16; ++i) {
      uint8_t p4 = s[i + 64];
      d[i] = s[i] & 31;
      d[i + 16] = (uint8_t)((s[i] >> 5) | ((p4 & 3) << 3));
      d[i + 32] = s[i + 16] & 31;
      d[i + 48] = (uint8_t)((s[i + 16] >> 5) | ((p4 & 12) << 1));
      d[i + 64] = s[i + 32] & 31;
      d[i + 80] = (uint8_t)((s[i + 32] >> 5) | ((p4 & 48) >> 1));
      d[i + 96] = s[i + 48] & 31;
      d[i + 112] = (uint8_t)((s[i + 48] >> 5) | ((p4 & 192) >> 3));
    }
  }
}

static void u6(int count, const uint8_t* s, uint8_t* d) {
  int i, blk, st = count == 32 ? 8 : 16;
  for (blk = 0; blk < (count == 128 ? 2 : 1); ++blk, s += 48, d += 64)
    for (i = 0; i < st; ++i) {
      uint8_t p0 = s[i], p1 = s[i + st], p2 = s[i + 2 * st];
      d[i] = p0 & 63;
      d[i + st] = p1 & 63;
      d[i + 2 * st] = p2 & 63;
      d[i + 3 * st] = (uint8_t)(((p0 & 192) >> 6) | ((p1 & 192) >> 4) | ((p2 & 192) >> 2));
    }
}

static void u7(int count, const uint8_t* s, uint8_t* d) {
  /* groups of 8 rows: row r (r < 7) in the low bits, row 7 spread over the
   * MSBs; rows are `st` values apart (1 for the 8-value blocks of count 32) */
  int blocks = count == 32 ? 4 : 1, st = count == 32 ? 1 : count / 8, b, j, r;
  for (b = 0; b < blocks; ++b, s += 7 * st, d += 8 * st)
    for (j = 0; j < st; ++j) {
      uint8_t top = 0;
      for (r = 0; r < 7; ++r) {
        d[r * st + j] = s[r * st + j] & 127;
        top = (uint8_t)(top | ((s[r * st + j] >> 7) << r));
      }
      d[7 * st + j] = top;
    }
}

void lb_unpack_codes(int nbit, int count, const uint8_t* src, int8_t* dst) {
  uint8_t u[128];
  int i, bias = nbit == 8 ? 0 : 1 << (nbit - 1);
  switch (nbit) {
    case 1: u1(count, src, u); break;
    case 2: u2(count, src, u); break;
    case 3: u3(count, src, u); break;
    case 4: u4(count, src, u); break;
    case 5: u5(count, src, u); break;
    case 6: u6(count, src, u); break;
    case 7: u7(count, src, u); break;
    default: memcpy(u, src, (size_t)count); break;
  }
  for (i = 0; i < count; ++i) dst[i] = (int8_t)(nbit == 8 ? (int8_t)u[i] : (int)u[i] - bias);
}

/* ---- header and argument checks ---- */

pterun_status lb_linear_header(pterun_kernel_context* ctx, const uint8_t* p, size_t size, int nbit,
                               int* has_zeros, int* has_bias) {
  int32_t w[16];
  int i;
  if (size < LB_HEADER_BYTES)
    return LB_FAIL(ctx, "arg 'packed_weights': %zu bytes, shorter than the 64-byte header", size);
  for (i = 0; i < 16; ++i) w[i] = rd32(p + 4 * i);
  if (w[0] != LB_MAGIC)
    return LB_FAIL(ctx, "arg 'packed_weights': bad magic %" PRId32 " (want 6712)", w[0]);
  if (w[1] != LB_TYPE_LINEAR)
    return LB_FAIL(ctx,
                   "arg 'packed_weights': format type %" PRId32
                   " not supported (only 1, torchao's universal linear layout)",
                   w[1]);
  if (w[2] != nbit)
    return LB_FAIL(ctx,
                   "arg 'packed_weights': packed for %" PRId32 "-bit weights, operator is %d-bit",
                   w[2], nbit);
  if ((w[3] != 0 && w[3] != 1) || (w[4] != 0 && w[4] != 1))
    return LB_FAIL(ctx,
                   "arg 'packed_weights': bad has_weight_zeros/has_bias flags %" PRId32 "/%" PRId32,
                   w[3], w[4]);
  if (w[5] != LB_NR || w[6] != LB_KR || w[7] != LB_SR)
    return LB_FAIL(ctx,
                   "arg 'packed_weights': tiling nr=%" PRId32 " kr=%" PRId32 " sr=%" PRId32
                   " not supported (universal layout is 8/16/2)",
                   w[5], w[6], w[7]);
  for (i = 8; i < 16; ++i)
    if (w[i] != 0) return LB_FAIL(ctx, "arg 'packed_weights': header word %d is not 0", i);
  *has_zeros = w[3];
  *has_bias = w[4];
  return PTERUN_STATUS_OK;
}

uint64_t lb_linear_tile_bytes(int nbit, int64_t k, int64_t group_size, int has_zeros,
                              int has_bias) {
  /* per group: group_size * nbit code bytes, 8 scales, 8 sums, [8 zeros] */
  uint64_t groups = (uint64_t)(k / group_size);
  uint64_t per_group = (uint64_t)group_size * (uint64_t)nbit + 64u + (has_zeros ? 32u : 0u);
  return groups * per_group + (has_bias ? 32u : 0u); /* k < 2^31: no overflow */
}

pterun_status lb_packed_arg(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            const uint8_t** data, size_t* size) {
  if (t->rank != 1) return LB_FAIL(ctx, "arg '%s': must be 1-D, got rank %d", name, t->rank);
  if (t->dtype != PTERUN_DTYPE_I8 && t->dtype != PTERUN_DTYPE_U8)
    return LB_FAIL(ctx, "arg '%s': dtype %s not supported (int8 bytes)", name,
                   pterun_dtype_name(t->dtype));
  if (t->numel > 0 && t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_STATE, "arg '%s': no data", name);
  if (t->nbytes < (size_t)t->numel)
    return LB_FAIL(ctx, "arg '%s': storage smaller than its %" PRId64 " bytes", name, t->numel);
  *data = (const uint8_t*)t->data;
  *size = (size_t)t->numel;
  return PTERUN_STATUS_OK;
}

pterun_status lb_indices_arg(pterun_kernel_context* ctx, const pterun_tensor* t, int64_t n) {
  int64_t i;
  if (t->rank != 1) return LB_FAIL(ctx, "arg 'indices': must be 1-D, got rank %d", t->rank);
  if (t->dtype != PTERUN_DTYPE_I32 && t->dtype != PTERUN_DTYPE_I64)
    return LB_FAIL(ctx, "arg 'indices': dtype %s not supported (int32 or int64)",
                   pterun_dtype_name(t->dtype));
  if (t->numel > 0 && t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_STATE, "arg 'indices': no data");
  for (i = 0; i < t->numel; ++i) {
    int64_t r = pterun_load_i64(t->data, t->dtype, i);
    if (r < 0 || r >= n)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
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
    return LB_FAIL(ctx, "args 'n', 'k': %" PRId64 ", %" PRId64 " out of range [1, 2^31)", n, k);
  if (gs < 16 || gs % 16 != 0 || k % gs != 0)
    return LB_FAIL(ctx,
                   "arg 'group_size': %" PRId64
                   " must be a positive multiple of 16 that divides k = %" PRId64,
                   gs, k);
  *tile_bytes = lb_linear_tile_bytes(nbit, k, gs, *has_zeros, *has_bias);
  /* tiles < 2^28 and tile bytes < 2^36: the product fits */
  need = LB_HEADER_BYTES + (uint64_t)((n + LB_NR - 1) / LB_NR) * *tile_bytes;
  if ((uint64_t)size != need)
    return LB_FAIL(ctx,
                   "arg 'packed_weights': %zu bytes, but n=%" PRId64 " k=%" PRId64
                   " group_size=%" PRId64 " at %d bits needs %" PRIu64,
                   size, n, k, gs, nbit, need);
  return PTERUN_STATUS_OK;
}

pterun_status lb_out_2d(pterun_kernel_context* ctx, pterun_tensor* out, int64_t rows,
                        int64_t cols) {
  int64_t sizes[2];
  if (out->dtype != PTERUN_DTYPE_F32)
    return LB_FAIL(ctx, "arg 'out': dtype %s not supported (float32)",
                   pterun_dtype_name(out->dtype));
  sizes[0] = rows;
  sizes[1] = cols;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  if (!pterun_tensor_is_contiguous(out) || (out->numel > 0 && out->data == NULL))
    return LB_FAIL(ctx, "arg 'out': must be contiguous with data");
  return PTERUN_STATUS_OK;
}
