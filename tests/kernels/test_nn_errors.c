/* Error paths of the nn/shape kernels that golden files cannot express:
 * wrong argument counts and kinds, unbound data. Every call must return a
 * status, never crash. */
#include <stdio.h>
#include <string.h>

#include "pterun/kernel.h"
#include "pterun/kernels/portable.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static pterun_kernel_fn find(const char* op) {
  return pt_find_kernel(pterun_kernels_portable(), op);
}

static void make_tensor(pterun_tensor* t, pterun_value* v, int dtype, int rank,
                        const int64_t* sizes, void* data) {
  int d;
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->rank = (uint8_t)rank;
  for (d = 0; d < rank; ++d) {
    t->sizes[d] = t->max_sizes[d] = sizes[d];
    t->dim_order[d] = (uint8_t)d;
  }
  pterun_tensor_update_layout(t);
  t->data = data;
  t->capacity = t->nbytes;
  v->tag = PTERUN_VALUE_TENSOR;
  v->u.tensor = t;
}

static int test_every_kernel_rejects_zero_args(void) {
  /* Every portable kernel checks nargs before touching args. */
  const pterun_kernel_library* lib = pterun_kernels_portable();
  pterun_logger quiet = pterun_logger_silent();
  size_t k;
  for (k = 0; k < lib->count; ++k) {
    const char* op = lib->kernels[k].op;
    int got = (int)pterun_kernel_invoke(lib->kernels[k].fn, op, NULL, 0, &quiet, NULL, 0);
    if (got != PTERUN_STATUS_INVALID_PROGRAM) fprintf(stderr, "  %s\n", op);
    PT_CHECK_STATUS(got, PTERUN_STATUS_INVALID_PROGRAM);
  }
  PT_CHECK(lib->count >= 214); /* every row of the ops_*.inc lists */
  return 0;
}

static int test_wrong_kinds(void) {
  pterun_logger quiet = pterun_logger_silent();
  float a[6] = {0}, o[4] = {0};
  int64_t s23[2] = {2, 3}, s22[2] = {2, 2};
  pterun_tensor ta, to;
  pterun_value va, vo, vint, vnone;
  pterun_value* args[4];
  pterun_kernel_fn mm = find("aten::mm.out");
  pterun_kernel_fn view = find("aten::view_copy.out");
  PT_CHECK(mm != NULL && view != NULL);
  make_tensor(&ta, &va, PTERUN_DTYPE_F32, 2, s23, a);
  make_tensor(&to, &vo, PTERUN_DTYPE_F32, 2, s22, o);
  vint.tag = PTERUN_VALUE_INT;
  vint.u.i = 3;
  vnone.tag = PTERUN_VALUE_NONE;
  /* mm with an Int where mat2 should be */
  args[0] = &va, args[1] = &vint, args[2] = &vo, args[3] = &vo;
  PT_CHECK_STATUS(pterun_kernel_invoke(mm, "aten::mm.out", args, 4, &quiet, NULL, 0),
                  PTERUN_STATUS_INVALID_TYPE);
  /* view_copy with None for the size list */
  args[0] = &va, args[1] = &vnone, args[2] = &vo, args[3] = &vo;
  PT_CHECK_STATUS(pterun_kernel_invoke(view, "aten::view_copy.out", args, 4, &quiet, NULL, 0),
                  PTERUN_STATUS_INVALID_TYPE);
  /* mm on an input without data */
  ta.data = NULL;
  args[0] = &va, args[1] = &va, args[2] = &vo, args[3] = &vo;
  PT_CHECK(pterun_kernel_invoke(mm, "aten::mm.out", args, 4, &quiet, NULL, 0) != PTERUN_STATUS_OK);
  return 0;
}

static int test_static_out_cannot_grow(void) {
  pterun_logger quiet = pterun_logger_silent();
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, o[4] = {0};
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s21[2] = {2, 1};
  pterun_tensor ta, tb, to;
  pterun_value va, vb, vo;
  pterun_value* args[4] = {&va, &vb, &vo, &vo};
  make_tensor(&ta, &va, PTERUN_DTYPE_F32, 2, s23, a);
  make_tensor(&tb, &vb, PTERUN_DTYPE_F32, 2, s32, b);
  make_tensor(&to, &vo, PTERUN_DTYPE_F32, 2, s21, o); /* static [2,1], needs [2,2] */
  PT_CHECK(pterun_kernel_invoke(find("aten::mm.out"), "aten::mm.out", args, 4, &quiet, NULL, 0) !=
           PTERUN_STATUS_OK);
  PT_CHECK(o[0] == 0 && o[1] == 0);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_every_kernel_rejects_zero_args);
  PT_RUN(test_wrong_kinds);
  PT_RUN(test_static_out_cannot_grow);
  return pt_failures != 0;
}
