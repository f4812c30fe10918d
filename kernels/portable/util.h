/* The helper layer of libpterun_kernels_portable (prefix pk_, internal):
 * arguments, dtype classes and promotion, shapes and broadcasting, strided
 * iteration and copies, common argument checks. Everything a kernel author
 * of any library needs (status macros, half/bfloat16, element load/store,
 * output resizing, argument accessors) is the public kit instead:
 * pterun/kernel_util.h and pterun/kernel.h. */
#ifndef PTERUN_KERNELS_PORTABLE_UTIL_H_
#define PTERUN_KERNELS_PORTABLE_UTIL_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

/* ---- arguments ----
 * Argument accessors are the runtime's pterun_arg_* (pterun/kernel.h); Bool
 * arguments are read into a C bool here. */
static inline pterun_status pk_arg_bool(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                        const char* name, bool* out) {
  int b = 0;
  pterun_status st = pterun_arg_bool(ctx, args, i, name, &b);
  *out = b != 0;
  return st;
}
/* Normalises a dim in [-rank, rank) (rank 0 accepts -1 and 0). */
pterun_status pk_wrap_dim(pterun_kernel_context* ctx, int64_t dim, int64_t rank, int64_t* out);

/* ---- dtypes ---- */
/* Real numeric dtypes the portable kernels compute on (ints, floats, bool). */
static inline bool pk_is_real_dtype(int dt) {
  return pterun_dtype_is_float(dt) || pterun_dtype_is_int(dt) || dt == PTERUN_DTYPE_BOOL;
}

/* ---- shapes ---- */
/* Broadcast shape of a and b (ATen rules). */
pterun_status pk_broadcast_shape(pterun_kernel_context* ctx, const pterun_tensor* a,
                                 const pterun_tensor* b, int64_t* sizes_out, size_t* rank_out);
/*
 * Element offsets for iterating `out` in logical (row-major) order while
 * reading `in`, which is broadcast to out's shape: for linear logical index
 * n of out, pk_bcast_offset gives the element offset into in's memory
 * (respecting in's strides and dim order). out_offset gives the element
 * offset into out's memory (out may be channels-last).
 */
int64_t pk_bcast_offset(const pterun_tensor* in, const pterun_tensor* out, int64_t n);
int64_t pk_logical_offset(const pterun_tensor* t, int64_t n);

/* Same shape and both contiguous (dim orders may differ from identity only
 * if they are equal): elementwise loops can use linear indices. */
bool pk_same_layout(const pterun_tensor* a, const pterun_tensor* b);

/* out = f(in) through the compute engine's f32 vector math (`vop`, a
 * pterun_compute_unary) when both are float32 with one layout, on the
 * method's pool; returns 1 if it did, 0 if the caller must take its own path. */
int pk_try_vmath(pterun_kernel_context* ctx, int vop, const pterun_tensor* in, pterun_tensor* out);

/* ---- promotion with scalars, casting ---- */
/* ATen result type of (tensor of dtype dt) op (Scalar s): a scalar only
 * changes the dtype when it is of a higher category (bool < int < float);
 * int scalar with a bool tensor gives int64, a float scalar with an integral
 * tensor gives float32 (the default dtype). */
int pk_promote_scalar(int dt, const pterun_scalar* s);
/* ATen canCast(from, to): no float -> integral, no non-bool -> bool. */
bool pk_can_cast(int from, int to);
/* True if s can be represented in dtype dt's category (float scalar not into
 * an integral dtype, non-bool scalar not into bool), as ATen checks alpha. */
bool pk_scalar_fits_category(const pterun_scalar* s, int dt);

/* ---- strided views and copies ---- */
/* A strided description of elements inside some buffer: logical sizes and
 * element strides (which may be 0 for broadcast or negative for flips). */
typedef struct pk_view {
  int rank;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t strides[PTERUN_MAX_RANK];
} pk_view;

/* The view a tensor's own sizes and strides describe. */
void pk_view_of(const pterun_tensor* t, pk_view* v);

/*
 * Copies every element of the logical index space `sv->sizes` from src (at
 * element offset soff, laid out by sv) to dst (offset doff, laid out by dv),
 * converting between dtypes. dv and sv must have the same rank and sizes.
 * Overlapping src and dst are only safe when both are identical.
 */
void pk_copy_view(void* dst, int ddt, const pk_view* dv, int64_t doff, const void* src, int sdt,
                  const pk_view* sv, int64_t soff);

/* Copies `in` into `out` element by logical element (same sizes; any dim
 * orders; dtype converted). */
void pk_copy_tensor(pterun_tensor* out, const pterun_tensor* in);

/* Copies `in` into `out` in logical (row-major) order when only their numel
 * agree (reshape semantics; dtype converted). */
void pk_copy_reshape(pterun_tensor* out, const pterun_tensor* in);

/* Fills v with contiguous (row-major) strides for sizes[0..rank). */
void pk_view_contiguous(pk_view* v, int rank, const int64_t* sizes);

/* Copies one element with dtype conversion (ints stay exact, bool is != 0). */
void pk_convert1(void* dst, int ddt, int64_t di, const void* src, int sdt, int64_t si);

/* Fills every element of t with one value (given both as double and int64 so
 * integer fills stay exact). */
void pk_fill(pterun_tensor* t, double d, int64_t i, int is_float);

/* ---- argument checks (each fails the kernel naming the argument) ---- */
/* Fails unless t's dtype is one the portable kernels compute on. */
pterun_status pk_check_real(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name);
/* Fails unless a and b have the same dtype. */
pterun_status pk_check_same_dtype(pterun_kernel_context* ctx, const pterun_tensor* a,
                                  const char* an, const pterun_tensor* b, const char* bn);
/* Fails unless t is a floating dtype (f16, bf16, f32, f64). */
pterun_status pk_check_float(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name);
/* A per-channel [c] floating tensor argument with data (optional when opt:
 * *t NULL for None): batch norm's weight, bias and statistics. */
pterun_status pk_channel_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, int64_t c, int opt, pterun_tensor** t);

/*
 * An int[N] argument as ATen accepts it: exactly n values, or one value that
 * is repeated n times, or (when dflt != NULL) an empty list meaning dflt.
 * Writes n values to out.
 */
pterun_status pk_arg_int_n(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                           const char* name, int n, const int64_t* dflt, int64_t* out);

/* The `MemoryFormat? memory_format` argument at args[i] of the layout-changing
 * copies and empty: absent or an ATen MemoryFormat value (0..3); the layout
 * itself is whatever out's dim order says. */
pterun_status pk_check_memory_format_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i);

/* The `int[]? dim_order` argument at args[i]: absent, or a permutation equal
 * to out's dim order (out was planned with it). */
pterun_status pk_check_dim_order_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                     const pterun_tensor* out);

/* Resizes out to the int[] size argument at args[i] (sizes must be >= 0). */
pterun_status pk_resize_to_size_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    pterun_tensor* out);

/* A TensorList at args[i] whose members are all tensors; returns its length. */
pterun_status pk_arg_tensors(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, pterun_value** list, size_t* len);

/* Pointer to element k of t's buffer. */
static inline void* pk_ptr(const pterun_tensor* t, int64_t k) {
  return (char*)t->data + (size_t)k * pterun_dtype_size(t->dtype);
}

/* Element offset of a logical index (per-dim coordinates) in t's memory. */
static inline int64_t pk_offset(const pterun_tensor* t, const int64_t* idx) {
  int64_t off = 0;
  int d;
  for (d = 0; d < t->rank; ++d) off += idx[d] * t->strides[d];
  return off;
}

/* Advances a row-major coordinate counter over sizes[0..rank); returns 0
 * once it wraps around. */
static inline int pk_next_index(int64_t* idx, const int64_t* sizes, int rank) {
  int d;
  for (d = rank - 1; d >= 0; --d) {
    if (++idx[d] < sizes[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* Product of sizes[lo..hi). */
static inline int64_t pk_prod(const int64_t* sizes, int lo, int hi) {
  int64_t p = 1;
  int d;
  for (d = lo; d < hi; ++d) p *= sizes[d];
  return p;
}

/* A view of t broadcast to sizes[0..rank) (ATen rules: t's dims align to
 * the right; size-1 dims get stride 0). Fails if not broadcastable. */
pterun_status pk_bcast_view(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            int rank, const int64_t* sizes, pk_view* v);

/* Channels-last (dim order 0,2,3,1 or 0,2,3,4,1) check. */
int pk_is_channels_last(const pterun_tensor* t);

#endif /* PTERUN_KERNELS_PORTABLE_UTIL_H_ */
