/* Internal helpers of libpterun_kernels_quantized: argument access, dtype
 * conversion and the exact float32 quantize/dequantize element steps.
 * See docs/quantized.md for the numerical contract. */
#ifndef PTERUN_KERNELS_QUANTIZED_QUTIL_H_
#define PTERUN_KERNELS_QUANTIZED_QUTIL_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"

#define QK_NARGS(ctx, nargs, n)                                                                    \
  do {                                                                                             \
    if ((nargs) != (size_t)(n))                                                                    \
      return pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_PROGRAM,                              \
                                "expected %d arguments, got %zu", (int)(n), (size_t)(nargs));      \
  } while (0)

#define QK_TRY(expr)                                                                               \
  do {                                                                                             \
    pterun_status qk_try_s_ = (expr);                                                              \
    if (qk_try_s_ != PTERUN_STATUS_OK) return qk_try_s_;                                           \
  } while (0)

#define QK_FAIL(ctx, ...) pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- arguments (each fails the kernel naming the argument) ---- */
/* Argument accessors are the runtime's pterun_arg_* (pterun/kernel.h). */
/* Scalar? (Int or Double or None); integral values only (is_int set). */
pterun_status qk_opt_scalar(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                            const char* name, double* out, int* has);
/* Common tensor checks. */
pterun_status qk_check_dtype(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                             int dtype);
/* Row-major contiguous (identity dim order) and data present when numel > 0. */
pterun_status qk_check_contig(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name);
pterun_status qk_resize(pterun_kernel_context* ctx, pterun_tensor* out, const char* name,
                        size_t rank, const int64_t* sizes);
pterun_status qk_resize_like(pterun_kernel_context* ctx, pterun_tensor* out, const char* name,
                             const pterun_tensor* like);
/* Integer quantized dtypes: u8, i8, i16, u16 (UInt16 and Bits16), i32.
 * Sets the dtype's value range; 0 if not one of them. */
int qk_qdtype_range(int dtype, int64_t* lo, int64_t* hi);
int qk_is_float(int dt);
const char* qk_dtype_name(int dt);

/* ---- float formats ---- */
static inline float qk_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  float f;
  if (e == 0) {
    f = (float)m * 5.9604644775390625e-08f; /* 2^-24, exact */
    memcpy(&u, &f, 4);
    u |= sign;
  } else if (e == 31) {
    u = sign | 0x7f800000u | (m << 13);
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  memcpy(&f, &u, 4);
  return f;
}
uint16_t qk_f32_to_f16(float f); /* round to nearest even */
static inline float qk_bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t qk_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u; /* NaN, as ATen */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
/* x rounded to half precision, as a float (ATen Half arithmetic). */
static inline float qk_round_f16(float x) {
  return qk_f16_to_f32(qk_f32_to_f16(x));
}
static inline float qk_round_bf16(float x) {
  return qk_bf16_to_f32(qk_f32_to_bf16(x));
}

/* Element k of a float tensor (f32/f64/f16/bf16) as double. */
static inline double qk_load_fp(const void* p, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return ((const float*)p)[k];
    case PTERUN_DTYPE_F64: return ((const double*)p)[k];
    case PTERUN_DTYPE_F16: return qk_f16_to_f32(((const uint16_t*)p)[k]);
    case PTERUN_DTYPE_BF16: return qk_bf16_to_f32(((const uint16_t*)p)[k]);
    default: return 0.0;
  }
}
/* Element k of an integer tensor as int64. */
static inline int64_t qk_load_int(const void* p, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_U8: return ((const uint8_t*)p)[k];
    case PTERUN_DTYPE_I8: return ((const int8_t*)p)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)p)[k];
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: return ((const uint16_t*)p)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)p)[k];
    case PTERUN_DTYPE_I64: return ((const int64_t*)p)[k];
    case PTERUN_DTYPE_U32: return ((const uint32_t*)p)[k];
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)p)[k] != 0;
    default: return 0;
  }
}
/* Rounds a double to the precision of float dtype dt (f64: unchanged). */
static inline double qk_round_to(int dt, double v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return (double)(float)v;
    case PTERUN_DTYPE_F16: return (double)qk_round_f16((float)v);
    case PTERUN_DTYPE_BF16: return (double)qk_round_bf16((float)v);
    default: return v;
  }
}
/* Stores v into element k of a float tensor, rounding to its dtype. */
static inline void qk_store_fp(void* p, int dt, int64_t k, double v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)p)[k] = (float)v; break;
    case PTERUN_DTYPE_F64: ((double*)p)[k] = v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)p)[k] = qk_f32_to_f16((float)v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)p)[k] = qk_f32_to_bf16((float)v); break;
    default: break;
  }
}
static inline void qk_store_int(void* p, int dt, int64_t k, int64_t v) {
  switch (dt) {
    case PTERUN_DTYPE_U8: ((uint8_t*)p)[k] = (uint8_t)v; break;
    case PTERUN_DTYPE_I8: ((int8_t*)p)[k] = (int8_t)v; break;
    case PTERUN_DTYPE_I16: ((int16_t*)p)[k] = (int16_t)v; break;
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: ((uint16_t*)p)[k] = (uint16_t)v; break;
    case PTERUN_DTYPE_I32: ((int32_t*)p)[k] = (int32_t)v; break;
    case PTERUN_DTYPE_I64: ((int64_t*)p)[k] = v; break;
    default: break;
  }
}

/* float -> int64 as x86-64 cvttss2si does it: NaN and out-of-range give INT64_MIN. */
static inline int64_t qk_f2i64(float t) {
  if (t >= -9223372036854775808.0f && t < 9223372036854775808.0f) return (int64_t)t;
  return INT64_MIN;
}

/* The ExecuTorch quantize step on an already scaled float32 product p:
 * round half to even, add the zero point in float32, truncate, clamp. */
static inline int64_t qk_quant_step(float p, float zpf, int64_t qmin, int64_t qmax) {
  int64_t q = qk_f2i64(zpf + nearbyintf(p));
  if (q < qmin) q = qmin;
  if (q > qmax) q = qmax;
  return q;
}

/*
 * Quantizes n contiguous elements of `in` (f32, f64 or f16) starting at
 * element offset `off` into `out` (u8/i8/i16/u16/i32) at the same offset:
 * q = clamp((int64)((float)zp + nearbyintf(inv * x)), qmin, qmax).
 */
void qk_quantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                     float inv, int32_t zp, int64_t qmin, int64_t qmax);
/*
 * Dequantizes n contiguous integers at offset `off`:
 * out = (out type)((float)(q - zp) * s); out f32/f64/f16 (bf16 too).
 * exact_f64: for f64 output use the double product (1-D per-channel path).
 */
void qk_dequantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                       int32_t zp, float s, int exact_1d);

/* ExecuTorch's fbgemm-style choose_qparams on a [min, max] pair.
 * Returns 0, or -1 when min or max is not finite. */
int qk_calc_qparams(float mn, float mx, int32_t qmin, int32_t qmax, double* scale, int32_t* zp);

#endif /* PTERUN_KERNELS_QUANTIZED_QUTIL_H_ */
