/* Private helpers for the nn/shape half of the portable kernels: strided
 * copies with dtype conversion, output checks, small list utilities.
 * Internal to libpterun_kernels_portable. */
#ifndef PTERUN_KERNELS_PORTABLE_NN_UTIL_H_
#define PTERUN_KERNELS_PORTABLE_NN_UTIL_H_

#include "kernels/portable/util.h"

/* A strided description of elements inside some buffer: logical sizes and
 * element strides (which may be 0 for broadcast or negative for flips). */
typedef struct nn_view {
  int rank;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t strides[PTERUN_MAX_RANK];
} nn_view;

/* The view a tensor's own sizes and strides describe. */
void nn_view_of(const pterun_tensor* t, nn_view* v);

/*
 * Copies every element of the logical index space `sv->sizes` from src (at
 * element offset soff, laid out by sv) to dst (offset doff, laid out by dv),
 * converting between dtypes. dv and sv must have the same rank and sizes.
 * Overlapping src and dst are only safe when both are identical.
 */
void nn_copy_view(void* dst, int ddt, const nn_view* dv, int64_t doff, const void* src, int sdt,
                  const nn_view* sv, int64_t soff);

/* Copies `in` into `out` element by logical element (same sizes; any dim
 * orders; dtype converted). */
void nn_copy_tensor(pterun_tensor* out, const pterun_tensor* in);

/* Copies `in` into `out` in logical (row-major) order when only their numel
 * agree (reshape semantics; dtype converted). */
void nn_copy_reshape(pterun_tensor* out, const pterun_tensor* in);

/* Fills v with contiguous (row-major) strides for sizes[0..rank). */
void nn_view_contiguous(nn_view* v, int rank, const int64_t* sizes);

/* Copies one element with dtype conversion (ints stay exact, bool is != 0). */
void nn_convert1(void* dst, int ddt, int64_t di, const void* src, int sdt, int64_t si);

/* Fills every element of t with one value (given both as double and int64 so
 * integer fills stay exact). */
void nn_fill(pterun_tensor* t, double d, int64_t i, int is_float);

/* Fails unless t's dtype is one the portable kernels compute on. */
pterun_status nn_check_real(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name);
/* Fails unless a and b have the same dtype. */
pterun_status nn_check_same_dtype(pterun_kernel_context* ctx, const pterun_tensor* a,
                                  const char* an, const pterun_tensor* b, const char* bn);
/* Fails unless t is a floating dtype (f16, bf16, f32, f64). */
pterun_status nn_check_float(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name);
/* Fails unless t has exactly `rank` dims. */
pterun_status nn_check_rank(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            int rank);
/* Fails unless t has data when it has elements (an unbound tensor). */
pterun_status nn_check_data(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name);

/*
 * An int[N] argument as ATen accepts it: exactly n values, or one value that
 * is repeated n times, or (when dflt != NULL) an empty list meaning dflt.
 * Writes n values to out.
 */
pterun_status nn_arg_int_n(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                           const char* name, int n, const int64_t* dflt, int64_t* out);

/* Resizes out to the int[] size argument at args[i] (sizes must be >= 0). */
pterun_status nn_resize_to_size_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    pterun_tensor* out);

/* A TensorList at args[i] whose members are all tensors; returns its length. */
pterun_status nn_arg_tensors(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, pterun_value** list, size_t* len);

/* Element size of a dtype (0 if not a dtype). */
static inline size_t nn_esize(int dt) {
  return pterun_dtype_size(dt);
}

/* Pointer to element k of t's buffer. */
static inline void* nn_ptr(const pterun_tensor* t, int64_t k) {
  return (char*)t->data + (size_t)k * nn_esize(t->dtype);
}

/* Element offset of a logical index (per-dim coordinates) in t's memory. */
static inline int64_t nn_offset(const pterun_tensor* t, const int64_t* idx) {
  int64_t off = 0;
  int d;
  for (d = 0; d < t->rank; ++d) off += idx[d] * t->strides[d];
  return off;
}

/* Advances a row-major coordinate counter over sizes[0..rank); returns 0
 * once it wraps around. */
static inline int nn_next_index(int64_t* idx, const int64_t* sizes, int rank) {
  int d;
  for (d = rank - 1; d >= 0; --d) {
    if (++idx[d] < sizes[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* float32 view of an element of a float dtype (f32/f16/bf16). */
static inline float nn_load_f32(const void* p, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return ((const float*)p)[k];
    case PTERUN_DTYPE_F16: return pt_f16_to_f32(((const uint16_t*)p)[k]);
    case PTERUN_DTYPE_BF16: return pt_bf16_to_f32(((const uint16_t*)p)[k]);
    default: return (float)pt_load_f64(p, dt, k);
  }
}
static inline void nn_store_f32(void* p, int dt, int64_t k, float v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)p)[k] = v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)p)[k] = pt_f32_to_f16(v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)p)[k] = pt_f32_to_bf16(v); break;
    default: pt_store_f64(p, dt, k, v); break;
  }
}

/* Product of sizes[lo..hi). */
static inline int64_t nn_prod(const int64_t* sizes, int lo, int hi) {
  int64_t p = 1;
  int d;
  for (d = lo; d < hi; ++d) p *= sizes[d];
  return p;
}

/* A view of t broadcast to sizes[0..rank) (ATen rules: t's dims align to
 * the right; size-1 dims get stride 0). Fails if not broadcastable. */
pterun_status nn_bcast_view(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            int rank, const int64_t* sizes, nn_view* v);

/* Channels-last (dim order 0,2,3,1 or 0,2,3,4,1) check. */
int nn_is_channels_last(const pterun_tensor* t);

#endif /* PTERUN_KERNELS_PORTABLE_NN_UTIL_H_ */
