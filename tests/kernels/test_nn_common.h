/* Element access for the nn kernel tests (the library's own helpers are
 * internal, so tests carry their own). */
#ifndef PTERUN_TESTS_KERNELS_TEST_NN_COMMON_H_
#define PTERUN_TESTS_KERNELS_TEST_NN_COMMON_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pterun/tensor.h"

static inline int pt_is_float(int dt) {
  return dt == PTERUN_DTYPE_F32 || dt == PTERUN_DTYPE_F64 || dt == PTERUN_DTYPE_F16 ||
         dt == PTERUN_DTYPE_BF16;
}

static inline float pt_test_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  float f;
  if (e == 0) {
    f = ldexpf((float)m, -24);
    return sign ? -f : f;
  }
  bits = sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13));
  memcpy(&f, &bits, 4);
  return f;
}

/* float -> float16, round to nearest even. */
static inline uint16_t pt_test_f2h(float f) {
  uint32_t x, sign;
  int e;
  long m;
  float a;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  a = fabsf(f);
  if (isnan(f)) return (uint16_t)(sign | 0x7e00u);
  if (a < 6.103515625e-05f) /* subnormal; rounding up to 0x400 gives the smallest normal */
    return (uint16_t)(sign | (uint32_t)lrintf(a * 16777216.0f));
  m = lrintf(frexpf(a, &e) * 2048.0f); /* a = m/2048 * 2^e, m in [1024, 2048] */
  if (m == 2048) {
    m = 1024;
    ++e;
  }
  if (e - 1 + 15 >= 31) return (uint16_t)(sign | 0x7c00u);
  return (uint16_t)(sign | (uint32_t)(e - 1 + 15) << 10 | (uint32_t)(m - 1024));
}

static inline double pt_test_load_f64(const void* p, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return ((const float*)p)[k];
    case PTERUN_DTYPE_F64: return ((const double*)p)[k];
    case PTERUN_DTYPE_F16: return pt_test_h2f(((const uint16_t*)p)[k]);
    case PTERUN_DTYPE_BF16: {
      uint32_t u = (uint32_t)((const uint16_t*)p)[k] << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    default: return 0;
  }
}

static inline void pt_test_store_f64(void* p, int dt, int64_t k, double v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)p)[k] = (float)v; break;
    case PTERUN_DTYPE_F64: ((double*)p)[k] = v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)p)[k] = pt_test_f2h((float)v); break;
    case PTERUN_DTYPE_BF16: {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      if (isnan(f))
        ((uint16_t*)p)[k] = (uint16_t)((u >> 16) | 0x40u);
      else /* round to nearest even */
        ((uint16_t*)p)[k] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
      break;
    }
    default: break;
  }
}

static inline int64_t pt_test_load_i64(const void* p, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_U8: return ((const uint8_t*)p)[k];
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)p)[k];
    case PTERUN_DTYPE_I8: return ((const int8_t*)p)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)p)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)p)[k];
    case PTERUN_DTYPE_I64: return ((const int64_t*)p)[k];
    default: return (int64_t)pt_test_load_f64(p, dt, k);
  }
}

static inline void pt_test_store_i64(void* p, int dt, int64_t k, int64_t v) {
  switch (dt) {
    case PTERUN_DTYPE_U8: ((uint8_t*)p)[k] = (uint8_t)v; break;
    case PTERUN_DTYPE_BOOL: ((uint8_t*)p)[k] = (uint8_t)(v != 0); break;
    case PTERUN_DTYPE_I8: ((int8_t*)p)[k] = (int8_t)v; break;
    case PTERUN_DTYPE_I16: ((int16_t*)p)[k] = (int16_t)v; break;
    case PTERUN_DTYPE_I32: ((int32_t*)p)[k] = (int32_t)v; break;
    case PTERUN_DTYPE_I64: ((int64_t*)p)[k] = v; break;
    default: pt_test_store_f64(p, dt, k, (double)v); break;
  }
}

#endif /* PTERUN_TESTS_KERNELS_TEST_NN_COMMON_H_ */
