/* pterun: values (the entries of a method's value table; kernel arguments). */
#ifndef PTERUN_INCLUDE_PTERUN_VALUE_H_
#define PTERUN_INCLUDE_PTERUN_VALUE_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tags match ExecuTorch's runtime EValue numbering. */
typedef enum pterun_value_tag {
  PTERUN_VALUE_NONE = 0,
  PTERUN_VALUE_TENSOR = 1,
  PTERUN_VALUE_STRING = 2,
  PTERUN_VALUE_DOUBLE = 3,
  PTERUN_VALUE_INT = 4,
  PTERUN_VALUE_BOOL = 5,
  PTERUN_VALUE_LIST_BOOL = 6,
  PTERUN_VALUE_LIST_DOUBLE = 7,
  PTERUN_VALUE_LIST_INT = 8,
  PTERUN_VALUE_LIST_TENSOR = 9,
  PTERUN_VALUE_LIST_OPTIONAL_TENSOR = 11
} pterun_value_tag;

/**
 * One value. Lists of ints and tensors are *boxed*: `items` point at other
 * values of the same table, so a symbolic int or a moved tensor is seen by
 * every list that names it. Read them with the helpers below.
 */
typedef struct pterun_value {
  int32_t tag; /* pterun_value_tag */
  union {
    int64_t i;
    double d;
    int b; /* 0 or 1 */
    pterun_tensor* tensor;
    struct {
      const char* data;
      size_t len;
    } str;
    struct {
      const double* items;
      size_t len;
    } doubles;
    struct {
      const uint8_t* items;
      size_t len;
    } bools;
    /* LIST_INT: items[k] is an INT value; scratch has room for len ints. */
    struct {
      struct pterun_value* const* items;
      int64_t* scratch;
      size_t len;
    } ints;
    /* LIST_TENSOR / LIST_OPTIONAL_TENSOR: items[k] is a TENSOR value, or
     * (optional lists only) NULL or a NONE value for "None". */
    struct {
      struct pterun_value* const* items;
      size_t len;
    } tensors;
  } u;
} pterun_value;

/** Name of a tag ("Tensor"). Static storage. */
PTERUN_API const char* pterun_value_tag_name(int tag);

/** Current contents of a LIST_INT value (refreshed from the boxed items into
 *  the list's own scratch; no allocation). NULL if `v` is not a LIST_INT. */
static inline const int64_t* pterun_value_int_list(pterun_value* v, size_t* len_out) {
  size_t k;
  if (v == NULL || v->tag != PTERUN_VALUE_LIST_INT) return NULL;
  for (k = 0; k < v->u.ints.len; ++k) v->u.ints.scratch[k] = v->u.ints.items[k]->u.i;
  if (len_out) *len_out = v->u.ints.len;
  return v->u.ints.scratch;
}

/** The k-th tensor of a tensor list (NULL for a None entry or a bad k). */
static inline pterun_tensor* pterun_value_list_tensor(const pterun_value* v, size_t k) {
  const pterun_value* e;
  if (v == NULL ||
      (v->tag != PTERUN_VALUE_LIST_TENSOR && v->tag != PTERUN_VALUE_LIST_OPTIONAL_TENSOR) ||
      k >= v->u.tensors.len)
    return NULL;
  e = v->u.tensors.items[k];
  return (e != NULL && e->tag == PTERUN_VALUE_TENSOR) ? e->u.tensor : NULL;
}

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_VALUE_H_ */
