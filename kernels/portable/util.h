/* Shared helpers for the portable kernels: argument access, dtype conversion,
 * broadcasting. Internal to libpterun_kernels_portable. */
#ifndef PTERUN_KERNELS_PORTABLE_UTIL_H_
#define PTERUN_KERNELS_PORTABLE_UTIL_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"

/* Fails the kernel unless it got exactly n arguments (schema args + return). */
#define PT_CHECK_NARGS(ctx, nargs, n)                                                              \
  do {                                                                                             \
    if ((nargs) != (size_t)(n))                                                                    \
      return pterun_kernel_fail((ctx), PTERUN_STATUS_INVALID_PROGRAM,                              \
                                "expected %d arguments, got %zu", (int)(n), (size_t)(nargs));      \
  } while (0)

#define PT_TRY(expr)                                                                               \
  do {                                                                                             \
    pterun_status pt_try_s_ = (expr);                                                              \
    if (pt_try_s_ != PTERUN_STATUS_OK) return pt_try_s_;                                           \
  } while (0)

/* Argument accessors are the runtime's pterun_arg_* (pterun/kernel.h); Bool
 * arguments are read into a C bool here. */
static inline pterun_status pt_arg_bool(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                        const char* name, bool* out) {
  int b = 0;
  pterun_status st = pterun_arg_bool(ctx, args, i, name, &b);
  *out = b != 0;
  return st;
}
/* A Scalar argument: Int, Double or Bool. is_float tells which kind it was,
 * is_bool likewise (for type promotion). */
typedef struct pt_scalar {
  double d;
  int64_t i;
  int is_float;
  int is_bool;
} pt_scalar;
pterun_status pt_arg_scalar(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                            const char* name, pt_scalar* out);
/* Normalises a dim in [-rank, rank) (rank 0 accepts -1 and 0). */
pterun_status pt_wrap_dim(pterun_kernel_context* ctx, int64_t dim, int64_t rank, int64_t* out);

/* ---- dtypes ---- */
static inline bool pt_is_float_dtype(int dt) {
  return dt == PTERUN_DTYPE_F32 || dt == PTERUN_DTYPE_F64 || dt == PTERUN_DTYPE_F16 ||
         dt == PTERUN_DTYPE_BF16;
}
static inline bool pt_is_int_dtype(int dt) {
  return dt == PTERUN_DTYPE_U8 || dt == PTERUN_DTYPE_I8 || dt == PTERUN_DTYPE_I16 ||
         dt == PTERUN_DTYPE_I32 || dt == PTERUN_DTYPE_I64 || dt == PTERUN_DTYPE_U16 ||
         dt == PTERUN_DTYPE_U32 || dt == PTERUN_DTYPE_U64;
}
/* Real numeric dtypes the portable kernels compute on (ints, floats, bool). */
static inline bool pt_is_real_dtype(int dt) {
  return pt_is_float_dtype(dt) || pt_is_int_dtype(dt) || dt == PTERUN_DTYPE_BOOL;
}

float pt_f16_to_f32(uint16_t h);
uint16_t pt_f32_to_f16(float f); /* round to nearest even */
static inline float pt_bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
uint16_t pt_f32_to_bf16(float f); /* round to nearest even, NaN kept */

/* Reads element k (linear index into `data` of dtype dt) as double / int64. */
double pt_load_f64(const void* data, int dt, int64_t k);
int64_t pt_load_i64(const void* data, int dt, int64_t k);
/* Writes element k, converting from double / int64 with C cast semantics
 * (float->int truncates; bool is v != 0). */
void pt_store_f64(void* data, int dt, int64_t k, double v);
void pt_store_i64(void* data, int dt, int64_t k, int64_t v);

/* ATen type promotion of two tensor dtypes (bool < ints < floats). */
int pt_promote_types(int a, int b);

/* ---- shapes ---- */
/* Broadcast shape of a and b (ATen rules). */
pterun_status pt_broadcast_shape(pterun_kernel_context* ctx, const pterun_tensor* a,
                                 const pterun_tensor* b, int64_t* sizes_out, size_t* rank_out);
/* Resizes out to sizes, failing the kernel with a clear message. */
pterun_status pt_resize(pterun_kernel_context* ctx, pterun_tensor* out, size_t rank,
                        const int64_t* sizes);
/* Resizes out to the shape of like. */
pterun_status pt_resize_like(pterun_kernel_context* ctx, pterun_tensor* out,
                             const pterun_tensor* like);

/*
 * Element offsets for iterating `out` in logical (row-major) order while
 * reading `in`, which is broadcast to out's shape: for linear logical index
 * n of out, pt_bcast_offset gives the element offset into in's memory
 * (respecting in's strides and dim order). out_offset gives the element
 * offset into out's memory (out may be channels-last).
 */
int64_t pt_bcast_offset(const pterun_tensor* in, const pterun_tensor* out, int64_t n);
int64_t pt_logical_offset(const pterun_tensor* t, int64_t n);

/* Same shape and both contiguous (dim orders may differ from identity only
 * if they are equal): elementwise loops can use linear indices. */
bool pt_same_layout(const pterun_tensor* a, const pterun_tensor* b);

#endif /* PTERUN_KERNELS_PORTABLE_UTIL_H_ */

/* ---- appended (math): promotion with scalars, casting, iteration ---- */
#ifndef PTERUN_KERNELS_PORTABLE_UTIL_H_MATH_
#define PTERUN_KERNELS_PORTABLE_UTIL_H_MATH_

/* ATen result type of (tensor of dtype dt) op (Scalar s): a scalar only
 * changes the dtype when it is of a higher category (bool < int < float);
 * int scalar with a bool tensor gives int64, a float scalar with an integral
 * tensor gives float32 (the default dtype). */
int pt_promote_scalar(int dt, const pt_scalar* s);
/* ATen canCast(from, to): no float -> integral, no non-bool -> bool. */
bool pt_can_cast(int from, int to);
/* True if s can be represented in dtype dt's category (float scalar not into
 * an integral dtype, non-bool scalar not into bool), as ATen checks alpha. */
bool pt_scalar_fits_category(const pt_scalar* s, int dt);
/* Rounds v to the precision of float dtype dt (identity for F64; int dtypes
 * truncate with wrap-around as a store/load would). */
double pt_round_to_dtype(double v, int dt);

/*
 * Strided walk over `out`'s logical (row-major) order, keeping the element
 * offset of out (operand 0) and of up to PT_ITER_MAX_IN-1 inputs broadcast to
 * out's shape. Typical use:
 *   pt_iter it; pt_iter_init(&it, out, ins, n);
 *   for (n = 0; n < out->numel; ++n) { ... it.off[0], it.off[1] ...; pt_iter_next(&it); }
 */
#define PT_ITER_MAX 4
typedef struct pt_iter {
  int rank;
  int nops;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t idx[PTERUN_MAX_RANK];
  int64_t strides[PT_ITER_MAX][PTERUN_MAX_RANK]; /* 0 on broadcast dims */
  int64_t off[PT_ITER_MAX];
} pt_iter;
/* ins may contain NULL entries (their offsets stay 0). n_ins <= PT_ITER_MAX-1. */
void pt_iter_init(pt_iter* it, const pterun_tensor* out, const pterun_tensor* const* ins,
                  int n_ins);
static inline void pt_iter_next(pt_iter* it) {
  int d, o;
  for (d = it->rank - 1; d >= 0; --d) {
    if (++it->idx[d] < it->sizes[d]) {
      for (o = 0; o < it->nops; ++o) it->off[o] += it->strides[o][d];
      return;
    }
    it->idx[d] = 0;
    for (o = 0; o < it->nops; ++o) it->off[o] -= it->strides[o][d] * (it->sizes[d] - 1);
  }
}

/* Fails the kernel unless t's dtype is one the portable kernels compute on. */
pterun_status pt_check_real_dtype(pterun_kernel_context* ctx, const pterun_tensor* t,
                                  const char* name);
#endif
