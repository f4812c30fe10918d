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

/* Entry i of the packed list is dtype i: every value is its position. */
enum {
#define PT_POS_(name, value, text, size) PT_DTYPE_POS_##name,
  PTERUN_DTYPE_LIST(PT_POS_)
#undef PT_POS_
};
#define PT_DENSE_(name, value, text, size) _Static_assert(PT_DTYPE_POS_##name == (value), #name);
PTERUN_DTYPE_LIST(PT_DENSE_)
#undef PT_DENSE_

const char* pterun_dtype_name(int dtype) {
#define PT_TEXT_(name, value, text, size) text "\0"
  const char* s = pt_name_in(PTERUN_DTYPE_LIST(PT_TEXT_), (unsigned)dtype);
#undef PT_TEXT_
  return s != NULL ? s : "invalid";
}

/* Entry i is tag i (value.h); 10 is no tag. */
_Static_assert(PTERUN_VALUE_NONE == 0 && PTERUN_VALUE_LIST_TENSOR == 9 &&
                   PTERUN_VALUE_LIST_OPTIONAL_TENSOR == 11,
               "pterun_value_tag_name's list follows pterun_value_tag");
const char* pterun_value_tag_name(int tag) {
  const char* s = pt_name_in(
      "None\0Tensor\0String\0Double\0Int\0Bool\0BoolList\0DoubleList\0"
      "IntList\0TensorList\0Unknown\0OptionalTensorList\0",
      (unsigned)tag);
  return s != NULL ? s : "Unknown";
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
