/* Builders for kernel tests: find a kernel in a library, make tensors and
 * values by hand. */
#ifndef PTERUN_TESTS_HARNESS_PT_VALUES_H_
#define PTERUN_TESTS_HARNESS_PT_VALUES_H_

#include <string.h>

#include "pterun/kernel.h"

/* The kernel registered for `op` in `lib` (NULL if none). */
static inline pterun_kernel_fn pt_find_kernel(const pterun_kernel_library* lib, const char* op) {
  for (size_t k = 0; k < lib->count; ++k)
    if (strcmp(lib->kernels[k].op, op) == 0) return lib->kernels[k].fn;
  return NULL;
}

/* A contiguous tensor over caller memory; UNBOUNDED, so kernels may resize it
 * within `capacity` bytes. */
static inline pterun_tensor pt_tensor_make(int dtype, int rank, const int64_t* sizes, void* data,
                                           size_t capacity) {
  pterun_tensor t;
  memset(&t, 0, sizeof(t));
  t.dtype = dtype;
  t.rank = (uint8_t)rank;
  for (int d = 0; d < rank; ++d) {
    t.sizes[d] = t.max_sizes[d] = sizes[d];
    t.dim_order[d] = (uint8_t)d;
  }
  t.data = data;
  t.capacity = capacity;
  t.dynamism = PTERUN_SHAPE_UNBOUNDED;
  pterun_tensor_update_layout(&t);
  return t;
}

/* t (rank 4) channels-last: dim order 0,2,3,1 and the strides that follow. */
static inline int pt_tensor_channels_last(pterun_tensor* t) {
  static const uint8_t nhwc[4] = {0, 2, 3, 1};
  memcpy(t->dim_order, nhwc, sizeof nhwc);
  return pterun_tensor_update_layout(t) == PTERUN_STATUS_OK;
}

static inline pterun_value pt_val_tensor(pterun_tensor* t) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
static inline pterun_value pt_val_int(int64_t i) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_INT;
  v.u.i = i;
  return v;
}
static inline pterun_value pt_val_double(double d) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
static inline pterun_value pt_val_bool(int b) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_BOOL;
  v.u.b = b != 0;
  return v;
}
static inline pterun_value pt_val_none(void) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_NONE;
  return v;
}

/* Storage of an int[] value of up to 5 items (pt_val_int_list). */
typedef struct pt_int_list {
  pterun_value items[5];
  pterun_value* ptrs[5];
  int64_t scratch[5];
} pt_int_list;

/* An int[] value of v[0, n) (n <= 5) over the caller's `l`. */
static inline pterun_value pt_val_int_list(pt_int_list* l, const int64_t* v, size_t n) {
  pterun_value out;
  memset(&out, 0, sizeof(out));
  for (size_t i = 0; i < n && i < 5; ++i) {
    l->items[i] = pt_val_int(v[i]);
    l->ptrs[i] = &l->items[i];
  }
  out.tag = PTERUN_VALUE_LIST_INT;
  out.u.ints.items = l->ptrs;
  out.u.ints.scratch = l->scratch;
  out.u.ints.len = n < 5 ? n : 5;
  return out;
}

#endif /* PTERUN_TESTS_HARNESS_PT_VALUES_H_ */
