/* Argument validation and hand-checked arithmetic of the Cortex-M kernels:
 * hostile arguments get a status, never an out-of-bounds access. The
 * bit-exactness against ExecuTorch's Python reference is checked by the
 * fixture tests (tests/fixtures/cortex_m_*). */
#include <math.h>
#include <string.h>

#include "pterun/kernels/cortex_m.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static pterun_status call(const char* op, pterun_value* vals, size_t n) {
  pterun_value* argp[32];
  pterun_logger logger = pterun_logger_silent();
  size_t k;
  pterun_kernel_fn fn = pt_find_kernel(pterun_kernels_cortex_m(), op);
  if (fn == NULL) return PTERUN_STATUS_OPERATOR_MISSING;
  for (k = 0; k < n; ++k) argp[k] = &vals[k];
  return pterun_kernel_invoke(fn, op, argp, n, &logger, NULL, 0);
}

#define INVALID PTERUN_STATUS_INVALID_ARGUMENT

/* Every operator of operators.yaml is in the table, once. */
static int test_table(void) {
  const pterun_kernel_library* lib = pterun_kernels_cortex_m();
  size_t i, j;
  PT_CHECK(lib != NULL && lib->count == 23);
  PT_CHECK(strcmp(lib->component, "kernels_cortex_m") == 0);
  for (i = 0; i < lib->count; ++i) {
    PT_CHECK(strncmp(lib->kernels[i].op, "cortex_m::", 10) == 0);
    for (j = i + 1; j < lib->count; ++j) PT_CHECK(strcmp(lib->kernels[i].op, lib->kernels[j].op));
  }
  return 0;
}

/* quantized_mul: (x - zp_x)(y - zp_y) requantized as arm_nn_requantize:
 * multiplier 2^30 (0.5), shift -1: 5 -> doubling high half 3 -> rounding
 * shift 2; -5 -> -2 -> -1; 200 -> 50 (ExecuTorch's requantize_cmsis agrees). */
static int test_mul_requantize(void) {
  int8_t x[3] = {5, -5, 20}, y[3] = {1, 1, 10}, out[3];
  int64_t sz[1] = {3};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_I8, 1, sz, x, sizeof x);
  pterun_tensor ty = pt_tensor_make(PTERUN_DTYPE_I8, 1, sz, y, sizeof y);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_I8, 1, sz, out, sizeof out);
  pterun_value a[9] = {pt_val_tensor(&tx), pt_val_int(0),      pt_val_tensor(&ty),
                       pt_val_int(0),      pt_val_int(0),      pt_val_int(1 << 30),
                       pt_val_int(-1),     pt_val_tensor(&to), pt_val_tensor(&to)};
  PT_CHECK_STATUS(call("cortex_m::quantized_mul.out", a, 9), PTERUN_STATUS_OK);
  PT_CHECK(out[0] == 2 && out[1] == -1 && out[2] == 50);
  a[6] = pt_val_int(32); /* shift outside [-31, 31] */
  PT_CHECK_STATUS(call("cortex_m::quantized_mul.out", a, 9), INVALID);
  a[6] = pt_val_int(-1);
  a[5] = pt_val_int((int64_t)1 << 40); /* multiplier does not fit int32 */
  PT_CHECK_STATUS(call("cortex_m::quantized_mul.out", a, 9), INVALID);
  a[5] = pt_val_int(1 << 30);
  PT_CHECK_STATUS(call("cortex_m::quantized_mul.out", a, 8), PTERUN_STATUS_INVALID_PROGRAM);
  {
    int64_t s2[1] = {2};
    pterun_tensor t2 = pt_tensor_make(PTERUN_DTYPE_I8, 1, s2, y, 2);
    a[2] = pt_val_tensor(&t2); /* [3] and [2] do not broadcast */
    PT_CHECK_STATUS(call("cortex_m::quantized_mul.out", a, 9), INVALID);
  }
  return 0;
}

/* The look-up table must have 256 int8 entries; every int8 input indexes it. */
static int test_activation_lut(void) {
  int8_t lut[256], in[4] = {-128, -1, 0, 127}, out[4];
  int64_t s4[1] = {4}, s256[1] = {256}, s255[1] = {255};
  int k;
  for (k = 0; k < 256; ++k) lut[k] = (int8_t)(255 - k - 128);
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I8, 1, s4, in, sizeof in);
  pterun_tensor tl = pt_tensor_make(PTERUN_DTYPE_I8, 1, s256, lut, sizeof lut);
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_I8, 1, s255, lut, 255);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_I8, 1, s4, out, sizeof out);
  pterun_value a[4] = {pt_val_tensor(&ti), pt_val_tensor(&tl), pt_val_tensor(&to),
                       pt_val_tensor(&to)};
  PT_CHECK_STATUS(call("cortex_m::quantized_activation.out", a, 4), PTERUN_STATUS_OK);
  PT_CHECK(out[0] == 127 && out[1] == 0 && out[2] == -1 && out[3] == -128);
  a[1] = pt_val_tensor(&ts);
  PT_CHECK_STATUS(call("cortex_m::quantized_activation.out", a, 4), INVALID);
  return 0;
}

/* quantize/dequantize: bad scales, ranges and dtypes are refused. */
static int test_qdq_args(void) {
  float x[2] = {0.5f, -1.25f};
  int8_t q[2];
  int64_t s2[1] = {2};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 1, s2, x, sizeof x);
  pterun_tensor tq = pt_tensor_make(PTERUN_DTYPE_I8, 1, s2, q, sizeof q);
  pterun_value a[8] = {pt_val_tensor(&tx), pt_val_double(0.25), pt_val_int(1),
                       pt_val_int(-128),   pt_val_int(127),     pt_val_int(PTERUN_DTYPE_I8),
                       pt_val_tensor(&tq), pt_val_tensor(&tq)};
  PT_CHECK_STATUS(call("cortex_m::quantize_per_tensor.out", a, 8), PTERUN_STATUS_OK);
  PT_CHECK(q[0] == 3 && q[1] == -4); /* round(2) + 1, round(-5) + 1 */
  a[1] = pt_val_double(0.0);
  PT_CHECK_STATUS(call("cortex_m::quantize_per_tensor.out", a, 8), INVALID);
  a[1] = pt_val_double(NAN);
  PT_CHECK_STATUS(call("cortex_m::quantize_per_tensor.out", a, 8), INVALID);
  a[1] = pt_val_double(0.25);
  a[3] = pt_val_int(-129); /* outside int8 */
  PT_CHECK_STATUS(call("cortex_m::quantize_per_tensor.out", a, 8), INVALID);
  a[3] = pt_val_int(10);
  a[4] = pt_val_int(5); /* min > max */
  PT_CHECK_STATUS(call("cortex_m::quantize_per_tensor.out", a, 8), INVALID);
  return 0;
}

/* quantized_div: int8/int16 only; x / 0 gives the zero point. */
static int test_div(void) {
  int8_t x[2] = {9, 9}, y[2] = {2, 0}, out[2];
  int32_t w[2] = {1, 1};
  int64_t s2[1] = {2};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_I8, 1, s2, x, sizeof x);
  pterun_tensor ty = pt_tensor_make(PTERUN_DTYPE_I8, 1, s2, y, sizeof y);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_I8, 1, s2, out, sizeof out);
  pterun_tensor tw = pt_tensor_make(PTERUN_DTYPE_I32, 1, s2, w, sizeof w);
  pterun_value a[8] = {pt_val_tensor(&tx), pt_val_int(0),     pt_val_tensor(&ty),
                       pt_val_int(0),      pt_val_int(3),     pt_val_double(2.0),
                       pt_val_tensor(&to), pt_val_tensor(&to)};
  PT_CHECK_STATUS(call("cortex_m::quantized_div.out", a, 8), PTERUN_STATUS_OK);
  PT_CHECK(out[0] == 12 && out[1] == 3); /* round(4.5 * 2) + 3; 0 + 3 */
  a[0] = pt_val_tensor(&tw);
  PT_CHECK_STATUS(call("cortex_m::quantized_div.out", a, 8), INVALID);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_table);
  PT_RUN(test_mul_requantize);
  PT_RUN(test_activation_lut);
  PT_RUN(test_qdq_args);
  PT_RUN(test_div);
  return pt_failures ? 1 : 0;
}
