/* quantized_decomposed::add_relu.out and add.scalar_out: argument validation
 * (every bad input returns a status, nothing is read or written out of
 * bounds), hand-computed values, and any dim order giving the row-major
 * result. Bit-exactness against PyTorch: tests/golden/quantized_add_ext.txt. */
#include <math.h>
#include <string.h>

#include "pterun/kernels/quantized.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

#define INVALID PTERUN_STATUS_INVALID_ARGUMENT
#define RELU "quantized_decomposed::add_relu.out"
#define SCALAR "quantized_decomposed::add.scalar_out"

static pterun_kernel_fn find(const char* op) {
  return pt_find_kernel(pterun_kernels_quantized(), op);
}

static pterun_status call(const char* op, pterun_value* vals, size_t n) {
  pterun_value* argp[32];
  pterun_logger logger = pterun_logger_silent();
  size_t k;
  pterun_kernel_fn fn = find(op);
  if (fn == NULL) return PTERUN_STATUS_OPERATOR_MISSING;
  for (k = 0; k < n; ++k) argp[k] = &vals[k];
  return pterun_kernel_invoke(fn, op, argp, n, &logger, NULL, 0);
}

/* relu args: a sa za amin amax b sb zb bmin bmax so zo omin omax out ret */
static void relu_args(pterun_value* v, pterun_tensor* a, pterun_tensor* b, pterun_tensor* o) {
  v[0] = pt_val_tensor(a), v[1] = pt_val_double(0.5), v[2] = pt_val_int(10), v[3] = pt_val_int(0),
  v[4] = pt_val_int(255);
  v[5] = pt_val_tensor(b), v[6] = pt_val_double(0.25), v[7] = pt_val_int(4), v[8] = pt_val_int(0),
  v[9] = pt_val_int(255);
  v[10] = pt_val_double(1.0), v[11] = pt_val_int(3), v[12] = pt_val_int(0), v[13] = pt_val_int(255),
  v[14] = pt_val_tensor(o), v[15] = pt_val_tensor(o);
}

static int test_add_relu_values(void) {
  /* dq(a) = (a-10)*0.5, dq(b) = (b-4)*0.25, q = clamp(rne(relu(sum)) + 3) */
  uint8_t a[4] = {10, 14, 0, 255}, b[4] = {4, 6, 4, 255}, o[4] = {0};
  int64_t s4[1] = {4};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, a, sizeof(a));
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, b, sizeof(b));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, o, sizeof(o));
  pterun_value v[16];
  relu_args(v, &ta, &tb, &to);
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_OK);
  /* 0 -> 3; 2 + 0.5 = 2.5 -> 2 (half to even) + 3 = 5; -5 -> relu 0 -> 3;
   * 122.5 + 62.75 = 185.25 -> 185 + 3 = 188 */
  PT_CHECK(o[0] == 3 && o[1] == 5 && o[2] == 3 && o[3] == 188);
  v[13] = pt_val_int(100); /* clamp */
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_OK);
  PT_CHECK(o[3] == 100);
  return 0;
}

static int test_add_relu_errors(void) {
  uint8_t a[6] = {0}, o[8] = {0};
  int8_t i8[6] = {0};
  int32_t i32[6] = {0};
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s3[1] = {3}, s4[1] = {4};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, a, sizeof(a));
  pterun_tensor tb3 = pt_tensor_make(PTERUN_DTYPE_U8, 1, s3, a, sizeof(a));
  pterun_tensor tb4 = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, a, sizeof(a));
  pterun_tensor tb32 = pt_tensor_make(PTERUN_DTYPE_U8, 2, s32, a, sizeof(a));
  pterun_tensor ti8 = pt_tensor_make(PTERUN_DTYPE_I8, 2, s23, i8, sizeof(i8));
  pterun_tensor ti32 = pt_tensor_make(PTERUN_DTYPE_I32, 2, s23, i32, sizeof(i32));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, o, sizeof(o));
  pterun_tensor tsmall = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, o, 4); /* capacity < 6 bytes */
  pterun_tensor tnull = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, NULL, 0);
  pterun_value v[16];
  relu_args(v, &ta, &tb3, &to);
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_OK); /* [2,3] + [3] */
  PT_CHECK_STATUS(call(RELU, v, 15), PTERUN_STATUS_INVALID_PROGRAM);
  v[5] = pt_val_tensor(&tb4); /* [2,3] + [4] */
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[5] = pt_val_tensor(&tb32); /* [2,3] + [3,2] */
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[5] = pt_val_tensor(&ti8); /* dtype clash */
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  relu_args(v, &ti32, &ti32, &ti32);
  v[3] = pt_val_int(-100), v[8] = pt_val_int(-100), v[12] = pt_val_int(-100);
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_NOT_SUPPORTED);
  relu_args(v, &ta, &ta, &to);
  v[13] = pt_val_int(256);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[13] = pt_val_int(255), v[12] = pt_val_int(-1);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[12] = pt_val_int(200), v[13] = pt_val_int(100); /* unordered */
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  relu_args(v, &ta, &ta, &to);
  v[4] = pt_val_int(300);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  relu_args(v, &ta, &ta, &to);
  v[1] = pt_val_double(0.0);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[1] = pt_val_double(NAN);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[1] = pt_val_double(-0.5);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[1] = pt_val_double(0.5), v[10] = pt_val_double(1e-50); /* 0 in float32 */
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[10] = pt_val_double(1e-39); /* float32 denormal: 1/s overflows float */
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[10] = pt_val_double(INFINITY);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[10] = pt_val_double(1.0), v[11] = pt_val_int((int64_t)1 << 40);
  PT_CHECK_STATUS(call(RELU, v, 16), INVALID);
  v[11] = pt_val_int(3), v[6] = pt_val_none();
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_INVALID_TYPE);
  v[6] = pt_val_double(0.25), v[5] = pt_val_none();
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_INVALID_TYPE);
  relu_args(v, &ta, &ta, &tsmall); /* an output without room: pterun_out_resize refuses it */
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_INVALID_ARGUMENT);
  relu_args(v, &tnull, &ta, &to);
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_INVALID_ARGUMENT); /* input without data */
  return 0;
}

/* a [2,3] row-major, b [3] broadcast, out stored column-major (dim order 1,0):
 * same logical values as a row-major out. */
static int test_add_relu_dim_order(void) {
  uint8_t a[6] = {1, 50, 100, 150, 200, 255}, b[3] = {0, 128, 255};
  uint8_t o1[6] = {0}, o2[6] = {0};
  int64_t s23[2] = {2, 3}, s3[1] = {3};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, a, sizeof(a));
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_U8, 1, s3, b, sizeof(b));
  pterun_tensor t1 = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, o1, sizeof(o1));
  pterun_tensor t2 = pt_tensor_make(PTERUN_DTYPE_U8, 2, s23, o2, sizeof(o2));
  pterun_value v[16];
  int i, j;
  t2.dim_order[0] = 1, t2.dim_order[1] = 0;
  PT_CHECK_STATUS(pterun_tensor_update_layout(&t2), PTERUN_STATUS_OK);
  relu_args(v, &ta, &tb, &t1);
  v[2] = pt_val_int(128), v[7] = pt_val_int(128), v[10] = pt_val_double(0.75),
  v[11] = pt_val_int(20);
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_OK);
  v[14] = pt_val_tensor(&t2), v[15] = pt_val_tensor(&t2);
  PT_CHECK_STATUS(call(RELU, v, 16), PTERUN_STATUS_OK);
  for (i = 0; i < 2; ++i)
    for (j = 0; j < 3; ++j) PT_CHECK(o1[i * 3 + j] == o2[j * 2 + i]);
  return 0;
}

/* scalar args: qa sa za amin amax adt b so zo omin omax odt out ret */
static void scalar_args(pterun_value* v, pterun_tensor* a, pterun_value b, pterun_tensor* o) {
  v[0] = pt_val_tensor(a), v[1] = pt_val_double(0.5), v[2] = pt_val_int(10), v[3] = pt_val_int(0),
  v[4] = pt_val_int(255);
  v[5] = pt_val_int(a->dtype), v[6] = b, v[7] = pt_val_double(0.25), v[8] = pt_val_int(1),
  v[9] = pt_val_int(0);
  v[10] = pt_val_int(255), v[11] = pt_val_int(o->dtype), v[12] = pt_val_tensor(o),
  v[13] = pt_val_tensor(o);
}

static int test_add_scalar(void) {
  uint8_t a[4] = {10, 11, 0, 255}, o[4] = {0};
  int8_t o8[4] = {0};
  int64_t s4[1] = {4};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, a, sizeof(a));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, o, sizeof(o));
  pterun_tensor to8 = pt_tensor_make(PTERUN_DTYPE_I8, 1, s4, o8, sizeof(o8));
  pterun_value v[14];
  /* (a-10)*0.5 + 1.125 -> *4 -> rne -> +1: 0+1.125 = 4.5 -> 4 -> 5;
   * 0.5+1.125 = 6.5 -> 6 -> 7; -5+1.125 = -15.5 -> -16 -> 0 (clamp);
   * 122.5+1.125 = 494.5 -> 255 */
  scalar_args(v, &ta, pt_val_double(1.125), &to);
  PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_OK);
  PT_CHECK(o[0] == 5 && o[1] == 7 && o[2] == 0 && o[3] == 255);
  scalar_args(v, &ta, pt_val_int(2), &to8);
  v[9] = pt_val_int(-128), v[10] = pt_val_int(127);
  PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_OK);
  PT_CHECK(o8[0] == 9 && o8[1] == 11 && o8[2] == -11 && o8[3] == 127);
  scalar_args(v, &ta, pt_val_bool(1), &to);
  PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_OK);
  PT_CHECK(o[0] == 5 && o[1] == 7);
  scalar_args(v, &ta, pt_val_double(-INFINITY), &to);
  PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_OK);
  PT_CHECK(o[0] == 0 && o[3] == 0);
  /* errors */
  scalar_args(v, &ta, pt_val_double(NAN), &to);
  PT_CHECK_STATUS(call(SCALAR, v, 14), INVALID);
  scalar_args(v, &ta, pt_val_none(), &to);
  PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_INVALID_TYPE);
  scalar_args(v, &ta, pt_val_double(1.0), &to);
  PT_CHECK_STATUS(call(SCALAR, v, 13), PTERUN_STATUS_INVALID_PROGRAM);
  v[5] = pt_val_int(PTERUN_DTYPE_I8); /* a_dtype != qa's */
  PT_CHECK_STATUS(call(SCALAR, v, 14), INVALID);
  scalar_args(v, &ta, pt_val_double(1.0), &to);
  v[11] = pt_val_int(PTERUN_DTYPE_I8); /* out_dtype != out's */
  PT_CHECK_STATUS(call(SCALAR, v, 14), INVALID);
  scalar_args(v, &ta, pt_val_double(1.0), &to8); /* [0,255] outside int8 */
  PT_CHECK_STATUS(call(SCALAR, v, 14), INVALID);
  scalar_args(v, &ta, pt_val_double(1.0), &to);
  v[7] = pt_val_double(0.0);
  PT_CHECK_STATUS(call(SCALAR, v, 14), INVALID);
  v[7] = pt_val_double(0.25), v[2] = pt_val_int(-((int64_t)1 << 33));
  PT_CHECK_STATUS(call(SCALAR, v, 14), INVALID);
  {
    float f[4] = {0};
    pterun_tensor tf = pt_tensor_make(PTERUN_DTYPE_F32, 1, s4, f, sizeof(f));
    scalar_args(v, &tf, pt_val_double(1.0), &to);
    PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_NOT_SUPPORTED);
    scalar_args(v, &ta, pt_val_double(1.0), &to);
    pterun_tensor tsmall = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, o, 2);
    v[12] = pt_val_tensor(&tsmall), v[13] = pt_val_tensor(&tsmall);
    PT_CHECK_STATUS(call(SCALAR, v, 14), PTERUN_STATUS_INVALID_ARGUMENT);
  }
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_add_relu_values);
  PT_RUN(test_add_relu_errors);
  PT_RUN(test_add_relu_dim_order);
  PT_RUN(test_add_scalar);
  return pt_failures ? 1 : 0;
}
