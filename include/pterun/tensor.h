/* pterun: tensors and element types. */
#ifndef PTERUN_INCLUDE_PTERUN_TENSOR_H_
#define PTERUN_INCLUDE_PTERUN_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PTERUN_MAX_RANK 16

/* Element types. Values equal ExecuTorch's ScalarType numbers, so a dtype read
 * from a program or a `dtype` kernel argument converts directly. */
#define PTERUN_DTYPE_LIST(X)                                                                       \
  X(U8, 0, "uint8", 1)                                                                             \
  X(I8, 1, "int8", 1)                                                                              \
  X(I16, 2, "int16", 2)                                                                            \
  X(I32, 3, "int32", 4)                                                                            \
  X(I64, 4, "int64", 8)                                                                            \
  X(F16, 5, "float16", 2)                                                                          \
  X(F32, 6, "float32", 4)                                                                          \
  X(F64, 7, "float64", 8)                                                                          \
  X(COMPLEX32, 8, "complex32", 4)                                                                  \
  X(COMPLEX64, 9, "complex64", 8)                                                                  \
  X(COMPLEX128, 10, "complex128", 16)                                                              \
  X(BOOL, 11, "bool", 1)                                                                           \
  X(QINT8, 12, "qint8", 1)                                                                         \
  X(QUINT8, 13, "quint8", 1)                                                                       \
  X(QINT32, 14, "qint32", 4)                                                                       \
  X(BF16, 15, "bfloat16", 2)                                                                       \
  X(QUINT4X2, 16, "quint4x2", 1)                                                                   \
  X(QUINT2X4, 17, "quint2x4", 1)                                                                   \
  X(BITS1X8, 18, "bits1x8", 1)                                                                     \
  X(BITS2X4, 19, "bits2x4", 1)                                                                     \
  X(BITS4X2, 20, "bits4x2", 1)                                                                     \
  X(BITS8, 21, "bits8", 1)                                                                         \
  X(BITS16, 22, "bits16", 2)                                                                       \
  X(F8E5M2, 23, "float8_e5m2", 1)                                                                  \
  X(F8E4M3FN, 24, "float8_e4m3fn", 1)                                                              \
  X(F8E5M2FNUZ, 25, "float8_e5m2fnuz", 1)                                                          \
  X(F8E4M3FNUZ, 26, "float8_e4m3fnuz", 1)                                                          \
  X(U16, 27, "uint16", 2)                                                                          \
  X(U32, 28, "uint32", 4)                                                                          \
  X(U64, 29, "uint64", 8)

typedef enum pterun_dtype {
#define PTERUN_DTYPE_ENUM_(name, value, text, size) PTERUN_DTYPE_##name = value,
  PTERUN_DTYPE_LIST(PTERUN_DTYPE_ENUM_)
#undef PTERUN_DTYPE_ENUM_
      PTERUN_DTYPE_COUNT_ /* not a dtype */
} pterun_dtype;

/** Size in bytes of one element, or 0 for a value that is not a dtype. */
PTERUN_API size_t pterun_dtype_size(int dtype);
/** 1 if `p` has the natural alignment of the dtype's elements (at most 8
 *  bytes), as kernels read them in place. */
static inline int pterun_dtype_aligned(const void* p, int dtype) {
  size_t a = pterun_dtype_size(dtype);
  if (a > 8) a = 8;
  return a == 0 || ((uintptr_t)p & (a - 1)) == 0;
}

/** Name of a dtype ("float32"), or "invalid". Static storage. */
PTERUN_API const char* pterun_dtype_name(int dtype);

/** How a tensor's shape may change at run time. */
typedef enum pterun_dynamism {
  PTERUN_SHAPE_STATIC = 0,   /* sizes are exact */
  PTERUN_SHAPE_BOUNDED = 1,  /* each size <= its serialized bound */
  PTERUN_SHAPE_UNBOUNDED = 2 /* any sizes whose bytes fit the tensor's memory */
} pterun_dynamism;

/**
 * A tensor as the runtime and kernels see it. Shapes live inline (no
 * allocation on resize). `strides` are in elements and always derived from
 * `sizes` and `dim_order` (a size of 0 acts as 1).
 *
 * Invariants (kept by pterun_tensor_resize): numel == prod(sizes);
 * nbytes == numel * element size <= capacity.
 */
typedef struct pterun_tensor {
  void* data;       /* NULL until bound, for unplanned tensors */
  int32_t dtype;    /* pterun_dtype */
  uint8_t rank;     /* 0 .. PTERUN_MAX_RANK */
  uint8_t dynamism; /* pterun_dynamism */
  uint8_t dim_order[PTERUN_MAX_RANK];
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t strides[PTERUN_MAX_RANK];
  int64_t max_sizes[PTERUN_MAX_RANK]; /* serialized sizes: the bound */
  int64_t numel;
  size_t nbytes;
  size_t capacity; /* bytes usable at `data` (the planned size) */
} pterun_tensor;

/**
 * Changes a tensor's shape in place (rank must stay the same).
 * STATIC: only identical sizes. BOUNDED: each size <= its bound.
 * UNBOUNDED: bytes <= capacity. Strides, numel and nbytes are recomputed.
 * @retval PTERUN_STATUS_OK            shape changed
 * @retval PTERUN_STATUS_NOT_SUPPORTED rank differs, or a bound/capacity is exceeded
 * @retval PTERUN_STATUS_INVALID_ARGUMENT a negative size or numel overflow
 */
PTERUN_API pterun_status pterun_tensor_resize(pterun_tensor* t, size_t rank, const int64_t* sizes);

/** 1 if `dim_order` is 0,1,..,rank-1 (row-major contiguous), else 0. */
PTERUN_API int pterun_tensor_is_contiguous(const pterun_tensor* t);

/** Recomputes strides, numel and nbytes from sizes and dim_order.
 *  @retval PTERUN_STATUS_INVALID_ARGUMENT negative size or overflow */
PTERUN_API pterun_status pterun_tensor_update_layout(pterun_tensor* t);

/** Element strides of a dense tensor of `sizes` laid out in `dim_order`
 *  (NULL: row-major), as pterun_tensor_update_layout derives them (a zero-sized
 *  dim counts as 1). For bindings and tools that copy between layouts. */
static inline void pterun_dim_order_strides(uint32_t rank, const int64_t* sizes,
                                            const uint8_t* dim_order, int64_t* out) {
  int64_t st = 1;
  for (uint32_t k = rank; k-- > 0;) {
    uint32_t d = dim_order ? dim_order[k] : k;
    out[d] = st;
    st *= sizes[d] > 0 ? sizes[d] : 1;
  }
}

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_TENSOR_H_ */
