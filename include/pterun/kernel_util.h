/* pterun: the kernel-author kit. Header-only conveniences every kernel
 * library uses instead of keeping its own copy: the argument-count check,
 * the argument-failure macro, dtype classes and ATen type promotion, element
 * load/store by dtype, broadcast shapes, the same-layout test and a
 * broadcast iterator. It includes what goes with them: the kernel signature
 * PTERUN_KERNEL (pterun/kernel.h), status propagation PTERUN_TRY
 * (pterun/status.h) and the float16/bfloat16 conversions (pterun/half.h). Argument access and output resizing live in libpterun
 * (pterun_arg_*, pterun_out_resize in pterun/kernel.h). Nothing here is
 * exported: all functions are static inline, so a library built against one
 * pterun version keeps working against another. */
#ifndef PTERUN_INCLUDE_PTERUN_KERNEL_UTIL_H_
#define PTERUN_INCLUDE_PTERUN_KERNEL_UTIL_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/half.h"
#include "pterun/kernel.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fails the kernel with INVALID_ARGUMENT and a printf-style message naming
 *  the argument (logged as "<operator>: <message>"):
 *  `return PTERUN_FAIL_ARG(ctx, "arg 'dim': %d out of range", (int)dim);` */
#define PTERUN_FAIL_ARG(ctx, ...)                                                                  \
  pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/** Fails the kernel with INVALID_PROGRAM unless it got exactly `n` arguments
 *  (every schema argument plus the return slot). */
#define PTERUN_CHECK_NARGS(ctx, nargs, n)                                                          \
  do {                                                                                             \
    if ((nargs) != (size_t)(n))                                                                    \
      return pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_PROGRAM,                              \
                                "expected %d arguments, got %zu", (int)(n), (size_t)(nargs));      \
  } while (0)

/* ---- dtype classes ----------------------------------------------------------- */

/** 1 for the real floating dtypes: float16, bfloat16, float32, float64. */
static inline int pterun_dtype_is_float(int32_t dt) {
  return dt == PTERUN_DTYPE_F32 || dt == PTERUN_DTYPE_F64 || dt == PTERUN_DTYPE_F16 ||
         dt == PTERUN_DTYPE_BF16;
}

/** 1 for the integer dtypes (signed and unsigned, 8 to 64 bits; not bool). */
static inline int pterun_dtype_is_int(int32_t dt) {
  return dt == PTERUN_DTYPE_U8 || dt == PTERUN_DTYPE_I8 || dt == PTERUN_DTYPE_I16 ||
         dt == PTERUN_DTYPE_I32 || dt == PTERUN_DTYPE_I64 || dt == PTERUN_DTYPE_U16 ||
         dt == PTERUN_DTYPE_U32 || dt == PTERUN_DTYPE_U64;
}

/** ATen's type promotion of two real dtypes (bool < integers < floats):
 *  float16 with bfloat16 gives float32; integers of one signedness give the
 *  wider; uint8 with a signed integer gives at least int16; other mixes of
 *  signed and unsigned integers, and non-real dtypes, give -1. */
static inline int32_t pterun_promote_types(int32_t a, int32_t b) {
  int real_a = pterun_dtype_is_float(a) || pterun_dtype_is_int(a) || a == PTERUN_DTYPE_BOOL;
  int real_b = pterun_dtype_is_float(b) || pterun_dtype_is_int(b) || b == PTERUN_DTYPE_BOOL;
  if (a == b) return a;
  if (!real_a || !real_b) return -1;
  if (a == PTERUN_DTYPE_BOOL) return b;
  if (b == PTERUN_DTYPE_BOOL) return a;
  if (pterun_dtype_is_float(a) || pterun_dtype_is_float(b)) {
    /* rank: half types 1, float32 2, float64 3, integers 0 */
    int ra = a == PTERUN_DTYPE_F64 ? 3 : a == PTERUN_DTYPE_F32 ? 2 : pterun_dtype_is_float(a);
    int rb = b == PTERUN_DTYPE_F64 ? 3 : b == PTERUN_DTYPE_F32 ? 2 : pterun_dtype_is_float(b);
    if (ra == 1 && rb == 1) return PTERUN_DTYPE_F32; /* float16 with bfloat16 */
    return ra >= rb ? a : b;
  }
  {
    int ua = a == PTERUN_DTYPE_U8 || a == PTERUN_DTYPE_U16 || a == PTERUN_DTYPE_U32 ||
             a == PTERUN_DTYPE_U64;
    int ub = b == PTERUN_DTYPE_U8 || b == PTERUN_DTYPE_U16 || b == PTERUN_DTYPE_U32 ||
             b == PTERUN_DTYPE_U64;
    int32_t u = ua ? a : b, sgn = ua ? b : a;
    if (ua == ub) return pterun_dtype_size(a) >= pterun_dtype_size(b) ? a : b;
    /* uint8 widens into a signed type; wider unsigned types have no promotion */
    if (u != PTERUN_DTYPE_U8) return -1;
    return pterun_dtype_size(sgn) >= 2 ? sgn : PTERUN_DTYPE_I16;
  }
}

/* ---- element load / store by dtype -------------------------------------------
 * Element k of `data` (an index into memory, not a logical index) of dtype
 * dt. Loads of bool give 0/1; bits16 reads as uint16; other dtypes give 0
 * and stores to them do nothing. Stores convert as C++/ATen casts do:
 * integers wrap (two's complement), float to integer goes through int64
 * (truncating; NaN and out-of-range give INT64_MIN, as x86 does, without
 * undefined behaviour), bool stores v != 0 (NaN is true). */

/** float -> int64 as x86's cvttsd2si: NaN and out of range give INT64_MIN. */
static inline int64_t pterun_f64_to_i64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)v;
}

static inline double pterun_load_f64(const void* data, int32_t dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return ((const float*)data)[k];
    case PTERUN_DTYPE_F64: return ((const double*)data)[k];
    case PTERUN_DTYPE_F16: return pterun_f16_to_f32(((const uint16_t*)data)[k]);
    case PTERUN_DTYPE_BF16: return pterun_bf16_to_f32(((const uint16_t*)data)[k]);
    case PTERUN_DTYPE_U8: return ((const uint8_t*)data)[k];
    case PTERUN_DTYPE_I8: return ((const int8_t*)data)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)data)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)data)[k];
    case PTERUN_DTYPE_I64: return (double)((const int64_t*)data)[k];
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: return ((const uint16_t*)data)[k];
    case PTERUN_DTYPE_U32: return ((const uint32_t*)data)[k];
    case PTERUN_DTYPE_U64: return (double)((const uint64_t*)data)[k];
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)data)[k] != 0;
    default: return 0.0;
  }
}

static inline int64_t pterun_load_i64(const void* data, int32_t dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32:
    case PTERUN_DTYPE_F64:
    case PTERUN_DTYPE_F16:
    case PTERUN_DTYPE_BF16: return pterun_f64_to_i64(pterun_load_f64(data, dt, k));
    case PTERUN_DTYPE_U8: return ((const uint8_t*)data)[k];
    case PTERUN_DTYPE_I8: return ((const int8_t*)data)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)data)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)data)[k];
    case PTERUN_DTYPE_I64: return ((const int64_t*)data)[k];
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: return ((const uint16_t*)data)[k];
    case PTERUN_DTYPE_U32: return ((const uint32_t*)data)[k];
    case PTERUN_DTYPE_U64: return (int64_t)((const uint64_t*)data)[k];
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)data)[k] != 0;
    default: return 0;
  }
}

static inline void pterun_store_i64(void* data, int32_t dt, int64_t k, int64_t v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)data)[k] = (float)v; break;
    case PTERUN_DTYPE_F64: ((double*)data)[k] = (double)v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)data)[k] = pterun_f32_to_f16((float)v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)data)[k] = pterun_f32_to_bf16((float)v); break;
    case PTERUN_DTYPE_U8: ((uint8_t*)data)[k] = (uint8_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I8: ((int8_t*)data)[k] = (int8_t)(uint8_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I16: ((int16_t*)data)[k] = (int16_t)(uint16_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I32: ((int32_t*)data)[k] = (int32_t)(uint32_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I64: ((int64_t*)data)[k] = v; break;
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: ((uint16_t*)data)[k] = (uint16_t)(uint64_t)v; break;
    case PTERUN_DTYPE_U32: ((uint32_t*)data)[k] = (uint32_t)(uint64_t)v; break;
    case PTERUN_DTYPE_U64: ((uint64_t*)data)[k] = (uint64_t)v; break;
    case PTERUN_DTYPE_BOOL: ((uint8_t*)data)[k] = v != 0; break;
    default: break;
  }
}

static inline void pterun_store_f64(void* data, int32_t dt, int64_t k, double v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)data)[k] = (float)v; break;
    case PTERUN_DTYPE_F64: ((double*)data)[k] = v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)data)[k] = pterun_f32_to_f16((float)v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)data)[k] = pterun_f32_to_bf16((float)v); break;
    case PTERUN_DTYPE_BOOL: ((uint8_t*)data)[k] = v != 0; break;
    default: pterun_store_i64(data, dt, k, pterun_f64_to_i64(v)); break;
  }
}

/** Float32 fast paths: float16/bfloat16/float32 directly, other dtypes
 *  through pterun_load_f64 / pterun_store_f64. */
static inline float pterun_load_f32(const void* data, int32_t dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return ((const float*)data)[k];
    case PTERUN_DTYPE_F16: return pterun_f16_to_f32(((const uint16_t*)data)[k]);
    case PTERUN_DTYPE_BF16: return pterun_bf16_to_f32(((const uint16_t*)data)[k]);
    default: return (float)pterun_load_f64(data, dt, k);
  }
}

static inline void pterun_store_f32(void* data, int32_t dt, int64_t k, float v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)data)[k] = v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)data)[k] = pterun_f32_to_f16(v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)data)[k] = pterun_f32_to_bf16(v); break;
    default: pterun_store_f64(data, dt, k, v); break;
  }
}

/* ---- shapes ------------------------------------------------------------------- */

/** The broadcast shape of sizes a[0..ra) and b[0..rb) (ATen rules: the dims
 *  align at the last one; two sizes broadcast when they are equal or one is
 *  1, and the result is the other one, so 1 with 0 gives 0). Writes
 *  max(ra, rb) sizes to `out` (it may be a or b) and returns that rank; -1
 *  when the shapes do not broadcast or the rank exceeds PTERUN_MAX_RANK,
 *  with *bad_dim (when not NULL) set to the first failing dim counted from
 *  the last (0 = the last dim of both). */
static inline int pterun_broadcast_sizes(const int64_t* a, size_t ra, const int64_t* b, size_t rb,
                                         int64_t* out, int* bad_dim) {
  size_t r = ra > rb ? ra : rb;
  int64_t res[PTERUN_MAX_RANK];
  if (r > PTERUN_MAX_RANK) {
    if (bad_dim != NULL) *bad_dim = (int)r - 1;
    return -1;
  }
  for (size_t k = 0; k < r; ++k) { /* k counts from the last dim */
    int64_t da = k < ra ? a[ra - 1 - k] : 1, db = k < rb ? b[rb - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) {
      if (bad_dim != NULL) *bad_dim = (int)k;
      return -1;
    }
    res[r - 1 - k] = da == 1 ? db : da;
  }
  memcpy(out, res, r * sizeof(int64_t));
  return (int)r;
}

/** The broadcast shape of tensors a and b (named a_name and b_name in the
 *  message) into sizes[PTERUN_MAX_RANK] and *rank; fails INVALID_ARGUMENT
 *  naming both arguments and the sizes that clash. */
static inline pterun_status pterun_broadcast_shape(pterun_kernel_context* ctx,
                                                   const pterun_tensor* a, const char* a_name,
                                                   const pterun_tensor* b, const char* b_name,
                                                   int64_t* sizes, size_t* rank) {
  int bad = 0, r = pterun_broadcast_sizes(a->sizes, a->rank, b->sizes, b->rank, sizes, &bad);
  *rank = r < 0 ? 0 : (size_t)r;
  if (r < 0)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "args '%s' and '%s' do not broadcast: size %lld (dim %d of rank %d) "
                              "against %lld (dim %d of rank %d)",
                              a_name, b_name, (long long)a->sizes[(int)a->rank - 1 - bad],
                              (int)a->rank - 1 - bad, (int)a->rank,
                              (long long)b->sizes[(int)b->rank - 1 - bad], (int)b->rank - 1 - bad,
                              (int)b->rank);
  return PTERUN_STATUS_OK;
}

/** 1 when t is 4-D in dim order 0,2,3,1 (NHWC, "channels-last": the load-time
 *  layout pass gives convolution chains this), else 0. Strides follow sizes
 *  and dim order, so such a tensor is dense in that layout. */
static inline int pterun_is_channels_last4(const pterun_tensor* t) {
  return t->rank == 4 && t->dim_order[0] == 0 && t->dim_order[1] == 2 && t->dim_order[2] == 3 &&
         t->dim_order[3] == 1;
}

/** 1 when a and b have the same sizes and every element sits at the same
 *  memory index in both (equal strides on every dim of size > 1: dims of
 *  size 1 never move an index, so their order does not matter), so one
 *  linear loop over memory pairs corresponding elements; else 0. Dtypes are
 *  not compared. */
static inline int pterun_same_layout(const pterun_tensor* a, const pterun_tensor* b) {
  if (a->rank != b->rank) return 0;
  for (size_t k = 0; k < a->rank; ++k) {
    if (a->sizes[k] != b->sizes[k]) return 0;
    if (a->sizes[k] > 1 && a->strides[k] != b->strides[k]) return 0;
  }
  return 1;
}

/* ---- broadcast iteration ------------------------------------------------------
 * A strided walk over `out`'s logical (row-major) order that keeps the
 * element offset of out (operand 0, in its own dim order) and of up to
 * PTERUN_ITER_MAX - 1 inputs broadcast to out's shape (ATen rules: dims
 * align right, size-1 dims repeat). Typical use:
 *   pterun_iter it;
 *   pterun_iter_init(&it, out, ins, 2);
 *   for (int64_t n = 0; n < out->numel; ++n, pterun_iter_next(&it))
 *     ... element it.off[0] of out, it.off[1] of ins[0], it.off[2] of ins[1] ... */
#define PTERUN_ITER_MAX 4
typedef struct pterun_iter {
  int rank;
  int nops;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t idx[PTERUN_MAX_RANK];
  int64_t strides[PTERUN_ITER_MAX][PTERUN_MAX_RANK]; /* 0 on broadcast dims */
  int64_t off[PTERUN_ITER_MAX];
} pterun_iter;

/** ins may hold NULL entries (their offsets stay 0); n_ins <= PTERUN_ITER_MAX - 1;
 *  each input's rank is at most out's. */
static inline void pterun_iter_init(pterun_iter* it, const pterun_tensor* out,
                                    const pterun_tensor* const* ins, int n_ins) {
  memset(it, 0, sizeof(*it));
  it->rank = out->rank;
  it->nops = n_ins + 1;
  for (int d = 0; d < it->rank; ++d) {
    it->sizes[d] = out->sizes[d];
    it->strides[0][d] = out->strides[d];
  }
  for (int o = 0; o < n_ins; ++o) {
    const pterun_tensor* t = ins[o];
    if (t == NULL) continue;
    for (int d = it->rank - 1, k = (int)t->rank - 1; d >= 0 && k >= 0; --d, --k)
      it->strides[o + 1][d] = t->sizes[k] == 1 ? 0 : t->strides[k];
  }
}

static inline void pterun_iter_next(pterun_iter* it) {
  for (int d = it->rank - 1; d >= 0; --d) {
    if (++it->idx[d] < it->sizes[d]) {
      for (int o = 0; o < it->nops; ++o) it->off[o] += it->strides[o][d];
      return;
    }
    it->idx[d] = 0;
    for (int o = 0; o < it->nops; ++o) it->off[o] -= it->strides[o][d] * (it->sizes[d] - 1);
  }
}

/** v rounded to what dtype dt can hold, as a double: float dtypes round (to
 *  float first for half/bfloat16, as ATen's float arithmetic does), integer
 *  dtypes truncate and wrap as a store and load would. */
static inline double pterun_round_to_dtype(double v, int32_t dt) {
  switch (dt) {
    case PTERUN_DTYPE_F64: return v;
    case PTERUN_DTYPE_F32: return (double)(float)v;
    case PTERUN_DTYPE_F16: return pterun_f16_to_f32(pterun_f32_to_f16((float)v));
    case PTERUN_DTYPE_BF16: return pterun_bf16_to_f32(pterun_f32_to_bf16((float)v));
    default: {
      union {
        int64_t i;
        uint64_t u;
        double d;
      } buf = {0}; /* aligned for any dtype; zero for dtypes the store skips */
      pterun_store_f64(&buf, dt, 0, v);
      return pterun_load_f64(&buf, dt, 0);
    }
  }
}

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_KERNEL_UTIL_H_ */
