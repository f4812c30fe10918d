/* Element access by dtype (half/bfloat16 through the kernel kit's converters)
 * and layout copies. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pterun/kernel_util.h"

int cli_elem_supported(int32_t dtype) {
  switch (dtype) {
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8:
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_QINT8:
    case PTERUN_DTYPE_I16:
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_QINT32:
    case PTERUN_DTYPE_I64:
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16:
    case PTERUN_DTYPE_U32:
    case PTERUN_DTYPE_U64:
    case PTERUN_DTYPE_F32:
    case PTERUN_DTYPE_F64:
    case PTERUN_DTYPE_BOOL:
    case PTERUN_DTYPE_F16:
    case PTERUN_DTYPE_BF16: return 1;
    default: return 0;
  }
}

/* Element i read through memcpy: data may be unaligned. */
#define LOAD(T)                                                                                    \
  do {                                                                                             \
    T v_;                                                                                          \
    memcpy(&v_, (const char*)data + i * sizeof(T), sizeof(T));                                     \
    return (double)v_;                                                                             \
  } while (0)

double cli_elem_get(int32_t dtype, const void* data, size_t i) {
  switch (dtype) {
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8: LOAD(uint8_t);
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_QINT8: LOAD(int8_t);
    case PTERUN_DTYPE_I16: LOAD(int16_t);
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_QINT32: LOAD(int32_t);
    case PTERUN_DTYPE_I64: LOAD(int64_t);
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: LOAD(uint16_t);
    case PTERUN_DTYPE_U32: LOAD(uint32_t);
    case PTERUN_DTYPE_U64: LOAD(uint64_t);
    case PTERUN_DTYPE_F32: LOAD(float);
    case PTERUN_DTYPE_F64: LOAD(double);
    case PTERUN_DTYPE_BOOL: {
      uint8_t b;
      memcpy(&b, (const char*)data + i, 1);
      return b ? 1.0 : 0.0;
    }
    case PTERUN_DTYPE_F16: {
      uint16_t h;
      memcpy(&h, (const char*)data + 2 * i, 2);
      return (double)pterun_f16_to_f32(h);
    }
    case PTERUN_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, (const char*)data + 2 * i, 2);
      return (double)pterun_bf16_to_f32(h);
    }
    default: return NAN;
  }
}
#undef LOAD

/* Integer stores saturate (a plain cast of an out-of-range double is UB). */
static double clampd(double v, double lo, double hi) {
  if (v != v) return 0.0;
  return v < lo ? lo : v > hi ? hi : v;
}

int64_t cli_double_to_i64(double v) {
  return (int64_t)clampd(v, -9223372036854775808.0, 9223372036854774784.0);
}

#define STORE(T, lo, hi)                                                                           \
  do {                                                                                             \
    T v_ = (T)clampd(v, lo, hi);                                                                   \
    memcpy((char*)data + i * sizeof(T), &v_, sizeof(T));                                           \
    return;                                                                                        \
  } while (0)

void cli_elem_set(int32_t dtype, void* data, size_t i, double v) {
  switch (dtype) {
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8: STORE(uint8_t, 0, 255);
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_QINT8: STORE(int8_t, -128, 127);
    case PTERUN_DTYPE_I16: STORE(int16_t, -32768, 32767);
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_QINT32: STORE(int32_t, -2147483648.0, 2147483647.0);
    case PTERUN_DTYPE_I64: STORE(int64_t, -9223372036854775808.0, 9223372036854774784.0);
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: STORE(uint16_t, 0, 65535);
    case PTERUN_DTYPE_U32: STORE(uint32_t, 0, 4294967295.0);
    case PTERUN_DTYPE_U64: STORE(uint64_t, 0, 18446744073709549568.0);
    case PTERUN_DTYPE_F32: {
      float f = (float)v;
      memcpy((char*)data + 4 * i, &f, 4);
      return;
    }
    case PTERUN_DTYPE_F64: memcpy((char*)data + 8 * i, &v, 8); return;
    case PTERUN_DTYPE_BOOL: ((uint8_t*)data)[i] = v != 0.0; return;
    case PTERUN_DTYPE_F16: {
      uint16_t h = pterun_f32_to_f16((float)v);
      memcpy((char*)data + 2 * i, &h, 2);
      return;
    }
    case PTERUN_DTYPE_BF16: {
      uint16_t h = pterun_f32_to_bf16((float)v);
      memcpy((char*)data + 2 * i, &h, 2);
      return;
    }
    default: return;
  }
}
#undef STORE

void cli_elem_format(int32_t dtype, const void* data, size_t i, char* buf, size_t cap) {
  if (dtype == PTERUN_DTYPE_BOOL) {
    snprintf(buf, cap, "%s", ((const uint8_t*)data)[i] ? "true" : "false");
  } else if (dtype == PTERUN_DTYPE_I64) {
    int64_t v;
    memcpy(&v, (const char*)data + 8 * i, 8);
    snprintf(buf, cap, "%lld", (long long)v);
  } else if (dtype == PTERUN_DTYPE_U64) {
    uint64_t v;
    memcpy(&v, (const char*)data + 8 * i, 8);
    snprintf(buf, cap, "%llu", (unsigned long long)v);
  } else if (pterun_dtype_is_float(dtype)) {
    snprintf(buf, cap, "%.6g", cli_elem_get(dtype, data, i));
  } else {
    double v = cli_elem_get(dtype, data, i);
    if (v != v)
      snprintf(buf, cap, "?");
    else
      snprintf(buf, cap, "%.0f", v);
  }
}

int cli_dim_order_is_identity(uint32_t rank, const uint8_t* dim_order) {
  uint32_t k;
  if (dim_order == NULL) return 1;
  for (k = 0; k < rank; ++k)
    if (dim_order[k] != k) return 0;
  return 1;
}

void cli_strided_copy(void* dst, const int64_t* dst_strides, const void* src,
                      const int64_t* src_strides, uint32_t rank, const int64_t* sizes,
                      size_t itemsize) {
  int64_t idx[PTERUN_MAX_RANK] = {0};
  size_t numel = 1, i;
  int64_t doff = 0, soff = 0;
  int k;
  for (k = 0; k < (int)rank; ++k) numel *= (size_t)(sizes[k] > 0 ? sizes[k] : 0);
  for (i = 0; i < numel; ++i) {
    memcpy((char*)dst + (size_t)doff * itemsize, (const char*)src + (size_t)soff * itemsize,
           itemsize);
    /* odometer step, last dim fastest */
    for (k = (int)rank - 1; k >= 0; --k) {
      if (++idx[k] < sizes[k]) {
        doff += dst_strides[k];
        soff += src_strides[k];
        break;
      }
      doff -= (idx[k] - 1) * dst_strides[k];
      soff -= (idx[k] - 1) * src_strides[k];
      idx[k] = 0;
    }
  }
}
