/* Bad-argument handling of the portable math kernels: every failure is a
 * status, never a crash. Also checks the table has no duplicate names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static int pt_failures = 0;
static pterun_logger g_silent;

static pterun_kernel_fn find(const char* op) {
  return pt_find_kernel(pterun_kernels_portable(), op);
}

static void make_f32(pterun_tensor* t, float* data, size_t rank, const int64_t* sizes) {
  size_t k;
  memset(t, 0, sizeof(*t));
  t->data = data;
  t->dtype = PTERUN_DTYPE_F32;
  t->rank = (uint8_t)rank;
  for (k = 0; k < rank; ++k) {
    t->sizes[k] = t->max_sizes[k] = sizes[k];
    t->dim_order[k] = (uint8_t)k;
  }
  (void)pterun_tensor_update_layout(t);
  t->capacity = t->nbytes;
}

static pterun_value tv(pterun_tensor* t) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
static pterun_value iv(int64_t i) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_INT;
  v.u.i = i;
  return v;
}
static pterun_value strv(const char* s) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_STRING;
  v.u.str.data = s;
  v.u.str.len = strlen(s);
  return v;
}

static pterun_status call(const char* op, pterun_value** args, size_t n) {
  pterun_kernel_fn fn = find(op);
  if (fn == NULL) return PTERUN_STATUS_OPERATOR_MISSING;
  return pterun_kernel_invoke(fn, op, args, n, &g_silent, NULL, 0);
}

static int test_table_unique(void) {
  const pterun_kernel_library* lib = pterun_kernels_portable();
  size_t i, j;
  PT_CHECK(lib->abi_version == PTERUN_KERNEL_ABI_VERSION);
  for (i = 0; i < lib->count; ++i)
    for (j = i + 1; j < lib->count; ++j)
      PT_CHECK(strcmp(lib->kernels[i].op, lib->kernels[j].op) != 0);
  PT_CHECK(find("aten::add.out") != NULL);
  PT_CHECK(find("aten::native_layer_norm.out") != NULL);
  return 0;
}

static int test_wrong_nargs(void) {
  float a[3] = {1, 2, 3}, o[3];
  int64_t s[1] = {3};
  pterun_tensor ta, to;
  pterun_value va, vo, alpha = iv(1);
  pterun_value* args[5];
  make_f32(&ta, a, 1, s);
  make_f32(&to, o, 1, s);
  va = tv(&ta);
  vo = tv(&to);
  args[0] = &va;
  args[1] = &va;
  args[2] = &alpha;
  args[3] = &vo;
  args[4] = &vo;
  PT_CHECK_STATUS(call("aten::add.out", args, 4), PTERUN_STATUS_INVALID_PROGRAM);
  PT_CHECK_STATUS(call("aten::add.out", args, 5), PTERUN_STATUS_OK);
  PT_CHECK(o[2] == 6.0f);
  return 0;
}

static int test_wrong_kinds(void) {
  float a[3] = {1, 2, 3}, o[3];
  int64_t s[1] = {3};
  pterun_tensor ta, to;
  pterun_value va, vo, i1 = iv(1), none;
  pterun_value* args[5];
  memset(&none, 0, sizeof(none));
  make_f32(&ta, a, 1, s);
  make_f32(&to, o, 1, s);
  va = tv(&ta);
  vo = tv(&to);
  /* Int where a Tensor is expected */
  args[0] = &i1;
  args[1] = &va;
  args[2] = &i1;
  args[3] = &vo;
  args[4] = &vo;
  PT_CHECK_STATUS(call("aten::add.out", args, 5), PTERUN_STATUS_INVALID_TYPE);
  /* None alpha */
  args[0] = &va;
  args[2] = &none;
  PT_CHECK_STATUS(call("aten::add.out", args, 5), PTERUN_STATUS_INVALID_TYPE);
  /* NULL value pointer (the invoke wrapper may reject it before the kernel) */
  args[1] = NULL;
  args[2] = &i1;
  PT_CHECK(call("aten::add.out", args, 5) != PTERUN_STATUS_OK);
  return 0;
}

static int test_bad_strings(void) {
  float a[3] = {1, 2, 3}, o[3];
  int64_t s[1] = {3};
  pterun_tensor ta, to;
  pterun_value va, vo, bad = strv("exact"), i1 = iv(1);
  pterun_value* args[5];
  make_f32(&ta, a, 1, s);
  make_f32(&to, o, 1, s);
  va = tv(&ta);
  vo = tv(&to);
  args[0] = &va;
  args[1] = &bad;
  args[2] = &vo;
  args[3] = &vo;
  PT_CHECK_STATUS(call("aten::gelu.out", args, 4), PTERUN_STATUS_INVALID_ARGUMENT);
  args[1] = &i1;
  PT_CHECK_STATUS(call("aten::gelu.out", args, 4), PTERUN_STATUS_INVALID_TYPE);
  args[1] = &va;
  args[2] = &bad;
  args[3] = &vo;
  args[4] = &vo;
  PT_CHECK_STATUS(call("aten::div.out_mode", args, 5), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

static int test_out_cannot_resize(void) {
  float a[6] = {1, 2, 3, 4, 5, 6}, o[6];
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s6[1] = {6};
  pterun_tensor ta, to;
  pterun_value va, vo, i1 = iv(1);
  pterun_value* args[5];
  make_f32(&ta, a, 2, s23);
  make_f32(&to, o, 2, s32); /* static out with the wrong shape */
  va = tv(&ta);
  vo = tv(&to);
  args[0] = &va;
  args[1] = &va;
  args[2] = &i1;
  args[3] = &vo;
  args[4] = &vo;
  PT_CHECK_STATUS(call("aten::add.out", args, 5), PTERUN_STATUS_INVALID_ARGUMENT);
  make_f32(&to, o, 1, s6); /* rank differs */
  PT_CHECK_STATUS(call("aten::add.out", args, 5), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

static int test_null_data_and_bad_dtype(void) {
  float o[3];
  int64_t s[1] = {3};
  pterun_tensor ta, to;
  pterun_value va, vo, i1 = iv(1);
  pterun_value* args[5];
  make_f32(&ta, NULL, 1, s);
  make_f32(&to, o, 1, s);
  va = tv(&ta);
  vo = tv(&to);
  args[0] = &va;
  args[1] = &va;
  args[2] = &i1;
  args[3] = &vo;
  args[4] = &vo;
  PT_CHECK_STATUS(call("aten::add.out", args, 5), PTERUN_STATUS_INVALID_ARGUMENT);
  args[2] = &vo;
  args[3] = &vo;
  PT_CHECK_STATUS(call("aten::relu.out", args + 1, 2), PTERUN_STATUS_INVALID_PROGRAM);
  ta.data = o;
  ta.dtype = PTERUN_DTYPE_COMPLEX64;
  args[0] = &va;
  args[1] = &vo;
  args[2] = &vo;
  PT_CHECK_STATUS(call("aten::relu.out", args, 3), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(call("aten::exp.out", args, 3), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

static int test_bad_dims(void) {
  float a[6] = {1, 2, 3, 4, 5, 6}, o[6];
  int64_t s23[2] = {2, 3};
  pterun_tensor ta, to;
  pterun_value va, vo, dim = iv(5), f = iv(0);
  pterun_value* args[5];
  make_f32(&ta, a, 2, s23);
  make_f32(&to, o, 2, s23);
  va = tv(&ta);
  vo = tv(&to);
  f.tag = PTERUN_VALUE_BOOL;
  f.u.b = 0;
  args[0] = &va;
  args[1] = &dim;
  args[2] = &f;
  args[3] = &vo;
  args[4] = &vo;
  PT_CHECK_STATUS(call("aten::_softmax.out", args, 5), PTERUN_STATUS_INVALID_ARGUMENT);
  {
    pterun_value none;
    memset(&none, 0, sizeof(none)); /* dtype=None */
    args[2] = &none;
    PT_CHECK_STATUS(call("aten::cumsum.out", args, 5), PTERUN_STATUS_INVALID_ARGUMENT);
    args[2] = &f;
  }
  dim.u.i = -1;
  PT_CHECK_STATUS(call("aten::_softmax.out", args, 5), PTERUN_STATUS_OK);
  PT_CHECK(fabsf(o[0] + o[1] + o[2] - 1.0f) < 1e-6f);
  return 0;
}

int main(void) {
  g_silent = pterun_logger_silent();
  PT_RUN(test_table_unique);
  PT_RUN(test_wrong_nargs);
  PT_RUN(test_wrong_kinds);
  PT_RUN(test_bad_strings);
  PT_RUN(test_out_cannot_resize);
  PT_RUN(test_null_data_and_bad_dtype);
  PT_RUN(test_bad_dims);
  return pt_failures ? 1 : 0;
}
