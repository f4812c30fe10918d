/* Argument accessors and output resizing for kernel libraries (declared in
 * pterun/kernel.h): one implementation of "is this argument what the schema
 * says" for every library, with messages that name the argument. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pterun/kernel.h"

static const char* tag_name(const pterun_value* v) {
  return v == NULL ? "null" : pterun_value_tag_name(v->tag);
}

static pterun_status bad_kind(pterun_kernel_context* ctx, size_t i, const char* name,
                              const char* want, const pterun_value* v) {
  return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "arg %zu '%s': expected %s, got %s", i,
                            name, want, tag_name(v));
}

static int is_none(const pterun_value* v) {
  return v == NULL || v->tag == PTERUN_VALUE_NONE;
}

pterun_status pterun_arg_tensor(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                const char* name, pterun_tensor** out) {
  pterun_value* v = args[i];
  if (v == NULL || v->tag != PTERUN_VALUE_TENSOR || v->u.tensor == NULL)
    return bad_kind(ctx, i, name, "Tensor", v);
  *out = v->u.tensor;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_arg_opt_tensor(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    const char* name, pterun_tensor** out) {
  if (is_none(args[i])) {
    *out = NULL;
    return PTERUN_STATUS_OK;
  }
  return pterun_arg_tensor(ctx, args, i, name, out);
}

pterun_status pterun_arg_int(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, int64_t* out) {
  pterun_value* v = args[i];
  if (v == NULL || v->tag != PTERUN_VALUE_INT) return bad_kind(ctx, i, name, "Int", v);
  *out = v->u.i;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_arg_opt_int(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                 const char* name, int64_t* out, int* has) {
  *has = 0;
  *out = 0;
  if (is_none(args[i])) return PTERUN_STATUS_OK;
  *has = 1;
  return pterun_arg_int(ctx, args, i, name, out);
}

pterun_status pterun_arg_bool(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                              const char* name, int* out) {
  pterun_value* v = args[i];
  if (v == NULL || v->tag != PTERUN_VALUE_BOOL) return bad_kind(ctx, i, name, "Bool", v);
  *out = v->u.b != 0;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_arg_double(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                const char* name, double* out) {
  pterun_value* v = args[i];
  if (v != NULL && v->tag == PTERUN_VALUE_DOUBLE) {
    *out = v->u.d;
    return PTERUN_STATUS_OK;
  }
  if (v != NULL && v->tag == PTERUN_VALUE_INT) {
    *out = (double)v->u.i;
    return PTERUN_STATUS_OK;
  }
  return bad_kind(ctx, i, name, "Double", v);
}

pterun_status pterun_arg_opt_double(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    const char* name, double* out, int* has) {
  *has = 0;
  *out = 0.0;
  if (is_none(args[i])) return PTERUN_STATUS_OK;
  *has = 1;
  return pterun_arg_double(ctx, args, i, name, out);
}

pterun_status pterun_arg_scalar(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                const char* name, pterun_scalar* out) {
  pterun_value* v = args[i];
  memset(out, 0, sizeof(*out));
  if (v == NULL) return bad_kind(ctx, i, name, "Scalar", v);
  switch (v->tag) {
    case PTERUN_VALUE_INT:
      out->i = v->u.i;
      out->d = (double)v->u.i;
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_DOUBLE:
      out->d = v->u.d;
      /* Saturating so a huge or NaN double never makes an out-of-range cast. */
      out->i = isnan(v->u.d)                      ? 0
               : v->u.d >= 9.2233720368547758e18  ? INT64_MAX
               : v->u.d <= -9.2233720368547758e18 ? INT64_MIN
                                                  : (int64_t)v->u.d;
      out->is_float = 1;
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_BOOL:
      out->i = v->u.b ? 1 : 0;
      out->d = (double)out->i;
      out->is_bool = 1;
      return PTERUN_STATUS_OK;
    default: return bad_kind(ctx, i, name, "Scalar", v);
  }
}

pterun_status pterun_arg_opt_scalar(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    const char* name, pterun_scalar* out, int* has) {
  *has = 0;
  memset(out, 0, sizeof(*out));
  if (is_none(args[i])) return PTERUN_STATUS_OK;
  *has = 1;
  return pterun_arg_scalar(ctx, args, i, name, out);
}

pterun_status pterun_arg_string(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                const char* name, const char** data, size_t* len) {
  pterun_value* v = args[i];
  if (v == NULL || v->tag != PTERUN_VALUE_STRING || (v->u.str.data == NULL && v->u.str.len))
    return bad_kind(ctx, i, name, "String", v);
  *data = v->u.str.data;
  *len = v->u.str.len;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_arg_int_list(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                  const char* name, const int64_t** out, size_t* len,
                                  int allow_none) {
  pterun_value* v = args[i];
  if (allow_none && is_none(v)) {
    *out = NULL;
    *len = 0;
    return PTERUN_STATUS_OK;
  }
  if (v == NULL || v->tag != PTERUN_VALUE_LIST_INT) return bad_kind(ctx, i, name, "int[]", v);
  for (size_t k = 0; k < v->u.ints.len; ++k) {
    const pterun_value* e = v->u.ints.items != NULL ? v->u.ints.items[k] : NULL;
    if (e == NULL || e->tag != PTERUN_VALUE_INT)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                                "arg %zu '%s': element %zu is %s, not Int", i, name, k,
                                tag_name(e));
  }
  *out = pterun_value_int_list(v, len);
  return PTERUN_STATUS_OK;
}

pterun_status pterun_arg_tensor_list(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                     const char* name, pterun_value** out) {
  pterun_value* v = args[i];
  if (v == NULL || v->tag != PTERUN_VALUE_LIST_TENSOR) return bad_kind(ctx, i, name, "Tensor[]", v);
  *out = v;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_check_dtype(pterun_kernel_context* ctx, const pterun_tensor* t,
                                 const char* name, int32_t dtype) {
  if (t->dtype != dtype)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': expected dtype %s, got %s", name, pterun_dtype_name(dtype),
                              pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status pterun_check_rank(pterun_kernel_context* ctx, const pterun_tensor* t,
                                const char* name, int rank) {
  if (t->rank != rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': expected rank %d, got %d", name, rank, (int)t->rank);
  return PTERUN_STATUS_OK;
}

pterun_status pterun_check_data(pterun_kernel_context* ctx, const pterun_tensor* t,
                                const char* name) {
  if (t->numel <= 0) return PTERUN_STATUS_OK;
  if (t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "arg '%s': tensor has no data",
                              name);
  if (t->nbytes < (size_t)t->numel * pterun_dtype_size(t->dtype))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': tensor storage smaller than its shape", name);
  return PTERUN_STATUS_OK;
}

pterun_status pterun_check_contiguous(pterun_kernel_context* ctx, const pterun_tensor* t,
                                      const char* name) {
  if (!pterun_tensor_is_contiguous(t))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg '%s': only the default (row-major) dim order is supported",
                              name);
  return pterun_check_data(ctx, t, name);
}

/* "[2, 3]" into buf (cut at cap, always terminated). */
static void format_shape(char* buf, size_t cap, size_t rank, const int64_t* sizes) {
  size_t used;
  int n = snprintf(buf, cap, "[");
  used = n > 0 ? (size_t)n : 0;
  for (size_t k = 0; k < rank && used < cap; ++k) {
    n = snprintf(buf + used, cap - used, k ? ", %" PRId64 : "%" PRId64, sizes[k]);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

pterun_status pterun_out_resize(pterun_kernel_context* ctx, pterun_tensor* out, const char* name,
                                size_t rank, const int64_t* sizes) {
  char want[256], have[256];
  pterun_status s;
  size_t k = 0;
  if (rank > PTERUN_MAX_RANK)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': result rank %zu exceeds the maximum %d", name, rank,
                              PTERUN_MAX_RANK);
  /* The shapes are formatted on the failure paths only: this runs for every
   * kernel call. */
  /* ExecuTorch never changes an output's rank: the memory plan is per rank. */
  if (out->rank != rank) {
    format_shape(want, sizeof want, rank, sizes);
    format_shape(have, sizeof have, out->rank, out->sizes);
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': cannot resize from %s to %s (rank %d to %zu)", name, have,
                              want, (int)out->rank, rank);
  }
  while (k < rank && out->sizes[k] == sizes[k]) ++k;
  /* Also for the same shape: the resize checks the bytes fit the memory. */
  s = pterun_tensor_resize(out, rank, sizes);
  if (s != PTERUN_STATUS_OK) {
    format_shape(want, sizeof want, rank, sizes);
    format_shape(have, sizeof have, out->rank, out->sizes);
  }
  if (s != PTERUN_STATUS_OK && k == rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': output of shape %s needs %zu bytes, has %zu", name, have,
                              out->nbytes, out->capacity);
  if (s != PTERUN_STATUS_OK)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': cannot resize from %s to %s (%s)", name, have, want,
                              pterun_status_str(s));
  /* Every kernel writes its outputs after resizing them: an output without
   * memory (an unplanned or freed tensor) is an error, never a NULL write. */
  if (out->numel > 0 && out->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': output tensor has no memory", name);
  return PTERUN_STATUS_OK;
}

pterun_status pterun_out_resize_like(pterun_kernel_context* ctx, pterun_tensor* out,
                                     const char* name, const pterun_tensor* like) {
  return pterun_out_resize(ctx, out, name, like->rank, like->sizes);
}
