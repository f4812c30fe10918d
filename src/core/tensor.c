/* dtype facts and tensor shape bookkeeping. */
#include <string.h>

#include "pterun/tensor.h"
#include "pterun/value.h"
#include "src/core/internal.h"

size_t pterun_dtype_size(int dtype) {
  switch (dtype) {
#define PT_CASE_(name, value, text, size)                                                          \
  case value: return size;
    PTERUN_DTYPE_LIST(PT_CASE_)
#undef PT_CASE_
    default: return 0;
  }
}

const char* pterun_dtype_name(int dtype) {
  switch (dtype) {
#define PT_CASE_(name, value, text, size)                                                          \
  case value: return text;
    PTERUN_DTYPE_LIST(PT_CASE_)
#undef PT_CASE_
    default: return "invalid";
  }
}

const char* pterun_value_tag_name(int tag) {
  switch (tag) {
    case PTERUN_VALUE_NONE: return "None";
    case PTERUN_VALUE_TENSOR: return "Tensor";
    case PTERUN_VALUE_STRING: return "String";
    case PTERUN_VALUE_DOUBLE: return "Double";
    case PTERUN_VALUE_INT: return "Int";
    case PTERUN_VALUE_BOOL: return "Bool";
    case PTERUN_VALUE_LIST_BOOL: return "BoolList";
    case PTERUN_VALUE_LIST_DOUBLE: return "DoubleList";
    case PTERUN_VALUE_LIST_INT: return "IntList";
    case PTERUN_VALUE_LIST_TENSOR: return "TensorList";
    case PTERUN_VALUE_LIST_OPTIONAL_TENSOR: return "OptionalTensorList";
    default: return "Unknown";
  }
}

int pterun_tensor_is_contiguous(const pterun_tensor* t) {
  for (uint8_t i = 0; i < t->rank; ++i)
    if (t->dim_order[i] != i) return 0;
  return 1;
}

pterun_status pterun_tensor_update_layout(pterun_tensor* t) {
  if (t->rank > PTERUN_MAX_RANK) return PTERUN_STATUS_INVALID_ARGUMENT;
  uint64_t numel = 1;
  for (uint8_t i = 0; i < t->rank; ++i) {
    if (t->sizes[i] < 0) return PTERUN_STATUS_INVALID_ARGUMENT;
    if (pt_mul_overflow_u64(numel, (uint64_t)t->sizes[i], &numel) || numel > (uint64_t)INT64_MAX)
      return PTERUN_STATUS_INVALID_ARGUMENT;
  }
  uint64_t nbytes;
  if (pt_mul_overflow_u64(numel, pterun_dtype_size(t->dtype), &nbytes) || nbytes > SIZE_MAX)
    return PTERUN_STATUS_INVALID_ARGUMENT;
  // Strides follow dim_order; a zero-sized dim acts as 1 so strides stay
  // meaningful (matches ExecuTorch's derivation).
  if (t->rank > 0) {
    int64_t stride = 1;
    for (int i = (int)t->rank - 1; i >= 0; --i) {
      uint8_t d = t->dim_order[i];
      t->strides[d] = stride;
      int64_t s = t->sizes[d] == 0 ? 1 : t->sizes[d];
      // Bounded by the numel check above, except with a zero dim elsewhere.
      if (__builtin_mul_overflow(stride, s, &stride)) return PTERUN_STATUS_INVALID_ARGUMENT;
    }
  }
  t->numel = (int64_t)numel;
  t->nbytes = (size_t)nbytes;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_tensor_resize(pterun_tensor* t, size_t rank, const int64_t* sizes) {
  if (t == NULL || (rank > 0 && sizes == NULL)) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (rank != t->rank) return PTERUN_STATUS_NOT_SUPPORTED;
  bool same = true;
  for (size_t i = 0; i < rank; ++i) {
    if (sizes[i] < 0) return PTERUN_STATUS_INVALID_ARGUMENT;
    if (sizes[i] != t->sizes[i]) same = false;
  }
  // Same shape: still refuse a tensor without memory for its bytes (a freed
  // or unbound tensor has capacity 0), so kernels never write through NULL.
  if (same) return t->nbytes <= t->capacity ? PTERUN_STATUS_OK : PTERUN_STATUS_NOT_SUPPORTED;
  switch (t->dynamism) {
    case PTERUN_SHAPE_STATIC: return PTERUN_STATUS_NOT_SUPPORTED;
    case PTERUN_SHAPE_BOUNDED:
      for (size_t i = 0; i < rank; ++i)
        if (sizes[i] > t->max_sizes[i]) return PTERUN_STATUS_NOT_SUPPORTED;
      break;
    default: break;
  }
  int64_t old[PTERUN_MAX_RANK];
  memcpy(old, t->sizes, sizeof old);
  memcpy(t->sizes, sizes, rank * sizeof(int64_t));
  pterun_status st = pterun_tensor_update_layout(t);
  if (st == PTERUN_STATUS_OK && t->nbytes > t->capacity) st = PTERUN_STATUS_NOT_SUPPORTED;
  if (st != PTERUN_STATUS_OK) {
    memcpy(t->sizes, old, sizeof old);
    (void)pterun_tensor_update_layout(t);
  }
  return st;
}
