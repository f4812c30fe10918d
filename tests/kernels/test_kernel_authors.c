/* Runs the example library of docs/kernel-authors.md (extracted from the
 * document at configure time into kernel_authors_example.c) so the
 * documentation cannot drift from the API: registered through the default
 * registry, on float16 data, a broadcast and a channels-last operand, and
 * the refusals. */
#include <string.h>

#include "pterun/registry.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

const pterun_kernel_library* demo_kernels(void);
#include "kernel_authors_example.c"

static int pt_failures;

static pterun_status call(pterun_kernel_fn fn, pterun_value** args, size_t nargs) {
  pterun_logger quiet = pterun_logger_silent();
  return pterun_kernel_invoke(fn, "demo::scale.out", args, nargs, &quiet, NULL, 0);
}

static int test_example_library(void) {
  pterun_kernel_fn fn = NULL;
  uint16_t x[3], y[3] = {0};
  int64_t s3[1] = {3}, s13[2] = {1, 3};
  pterun_tensor tx, ty;
  pterun_value vx, vy, vf, vi;
  pterun_value* args[4];
  PT_CHECK_STATUS(pterun_registry_add(pterun_registry_default(), demo_kernels()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_lookup(pterun_registry_default(), "demo::scale.out", &fn),
                  PTERUN_STATUS_OK);
  PT_CHECK(fn == demo_scale_out);
  /* the table carries the prepare (ABI 3) */
  PT_CHECK(demo_kernels()->kernels[0].prepare == demo_scale_prepare);
  x[0] = pterun_f32_to_f16(1.5f);
  x[1] = pterun_f32_to_f16(-2.0f);
  x[2] = pterun_f32_to_f16(65504.0f);
  tx = pt_tensor_make(PTERUN_DTYPE_F16, 1, s3, x, sizeof x);
  ty = pt_tensor_make(PTERUN_DTYPE_F16, 1, s3, y, sizeof y);
  vx = pt_val_tensor(&tx), vy = pt_val_tensor(&ty), vf = pt_val_double(2.0), vi = pt_val_int(3);
  args[0] = &vx, args[1] = &vf, args[2] = &vy, args[3] = &vy;
  PT_CHECK_STATUS(call(fn, args, 4), PTERUN_STATUS_OK);
  PT_CHECK(pterun_f16_to_f32(y[0]) == 3.0f && pterun_f16_to_f32(y[1]) == -4.0f);
  PT_CHECK(y[2] == 0x7c00u); /* 131008 overflows float16 */
  /* outside a method, prepare keeps nothing and the kernel reads its factor */
  PT_CHECK_STATUS(
      pterun_kernel_invoke(demo_scale_prepare, "demo::scale.out", args, 4, NULL, NULL, 0),
      PTERUN_STATUS_OK);
  /* an Int factor is accepted (whole numbers may be serialized as Int) */
  args[1] = &vi;
  PT_CHECK_STATUS(call(fn, args, 4), PTERUN_STATUS_OK);
  PT_CHECK(pterun_f16_to_f32(y[0]) == 4.5f);
  /* refusals: argument count, kind, dtype, rank change */
  PT_CHECK_STATUS(call(fn, args, 3), PTERUN_STATUS_INVALID_PROGRAM);
  args[1] = &vx;
  PT_CHECK_STATUS(call(fn, args, 4), PTERUN_STATUS_INVALID_TYPE);
  args[1] = &vf;
  ty.dtype = PTERUN_DTYPE_F32;
  PT_CHECK_STATUS(call(fn, args, 4), PTERUN_STATUS_INVALID_ARGUMENT);
  ty = pt_tensor_make(PTERUN_DTYPE_F16, 2, s13, y, sizeof y);
  PT_CHECK_STATUS(call(fn, args, 4), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

static pterun_status call_mul(pterun_value** args) {
  pterun_logger quiet = pterun_logger_silent();
  return pterun_kernel_invoke(demo_mul_out, "demo::mul.out", args, 4, &quiet, NULL, 0);
}

/* demo::mul.out: a broadcast, the linear path, a channels-last operand
 * (values checked against the logical products), and the refusals. */
static int test_example_mul(void) {
  pterun_kernel_fn fn = NULL;
  float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, o[6] = {0};
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s22[2] = {2, 2}, s1221[4] = {1, 2, 2, 1};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, a, sizeof a);
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_F32, 1, s3, b, sizeof b);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, o, sizeof o);
  pterun_value va = pt_val_tensor(&ta), vb = pt_val_tensor(&tb), vo = pt_val_tensor(&to);
  pterun_value* args[4] = {&va, &vb, &vo, &vo};
  PT_CHECK_STATUS(pterun_registry_lookup(pterun_registry_default(), "demo::mul.out", &fn),
                  PTERUN_STATUS_OK);
  PT_CHECK(fn == demo_mul_out);
  /* [2,3] * [3]: out resized from [2,2] to the broadcast shape */
  PT_CHECK_STATUS(call_mul(args), PTERUN_STATUS_OK);
  PT_CHECK(to.sizes[0] == 2 && to.sizes[1] == 3);
  for (int k = 0; k < 6; ++k) PT_CHECK(o[k] == a[k] * b[k % 3]);
  /* same shape and layout: the linear path */
  tb = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, a, sizeof a);
  PT_CHECK_STATUS(call_mul(args), PTERUN_STATUS_OK);
  for (int k = 0; k < 6; ++k) PT_CHECK(o[k] == a[k] * a[k]);
  /* [1,2,2,1] with self channels-last (dim order 0,2,3,1): memory holds
   * the elements in another order than the row-major out */
  {
    float c[4] = {1, 3, 2, 4}, d[4] = {5, 6, 7, 8}, r[4] = {0};
    pterun_tensor tc = pt_tensor_make(PTERUN_DTYPE_F32, 4, s1221, c, sizeof c);
    pterun_tensor td = pt_tensor_make(PTERUN_DTYPE_F32, 4, s1221, d, sizeof d);
    pterun_tensor tr = pt_tensor_make(PTERUN_DTYPE_F32, 4, s1221, r, sizeof r);
    pterun_value vc = pt_val_tensor(&tc), vd = pt_val_tensor(&td), vr = pt_val_tensor(&tr);
    pterun_value* cargs[4] = {&vc, &vd, &vr, &vr};
    tc.dim_order[1] = 2, tc.dim_order[2] = 3, tc.dim_order[3] = 1;
    PT_CHECK_STATUS(pterun_tensor_update_layout(&tc), PTERUN_STATUS_OK);
    PT_CHECK(!pterun_same_layout(&tc, &tr));
    PT_CHECK_STATUS(call_mul(cargs), PTERUN_STATUS_OK);
    /* logical self = [1,2,3,4] (c is stored as h,w,c with c = 2) */
    PT_CHECK(r[0] == 5 && r[1] == 12 && r[2] == 21 && r[3] == 32);
  }
  /* refusals: shapes that do not broadcast, mixed dtypes */
  tb = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, b, sizeof b);
  PT_CHECK_STATUS(call_mul(args), PTERUN_STATUS_INVALID_ARGUMENT);
  tb = pt_tensor_make(PTERUN_DTYPE_F64, 1, s3, b, sizeof b);
  PT_CHECK_STATUS(call_mul(args), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

int main(void) {
  PT_RUN(test_example_library);
  PT_RUN(test_example_mul);
  return pt_failures ? 1 : 0;
}
