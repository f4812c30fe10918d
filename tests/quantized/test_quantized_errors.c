/* Argument validation of the quantized kernels: every case where ExecuTorch
 * aborts, reads out of bounds or misreads memory must return a status here. */
#include <math.h>
#include <string.h>

#include "pterun/kernels/quantized.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

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

#define INVALID PTERUN_STATUS_INVALID_ARGUMENT

/* 2/4-bit and byte embeddings: out-of-range indices fail, nothing is read. */
static int test_embedding_index_bounds(void) {
  uint8_t w[3 * 2] = {0x89, 0xef, 0xa3, 0x48, 0x0b, 0x7e};
  float sc[3] = {0.5f, 1.0f, 1.5f}, out[16];
  int64_t wsz[2] = {3, 2}, ssz[1] = {3}, isz[1] = {2}, osz[2] = {2, 4};
  int64_t idx64[2] = {0, 3};
  int32_t idx32[2] = {-1, 0};
  pterun_tensor tw = pt_tensor_make(PTERUN_DTYPE_U8, 2, wsz, w, sizeof(w));
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F32, 1, ssz, sc, sizeof(sc));
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I64, 1, isz, idx64, sizeof(idx64));
  pterun_tensor ti32 = pt_tensor_make(PTERUN_DTYPE_I32, 1, isz, idx32, sizeof(idx32));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, osz, out, sizeof(out));
  pterun_value a[9] = {pt_val_tensor(&tw), pt_val_tensor(&ts), pt_val_none(),
                       pt_val_int(-8),     pt_val_int(7),      pt_val_tensor(&ti),
                       pt_val_none(),      pt_val_tensor(&to), pt_val_tensor(&to)};
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), INVALID);
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_2bit.dtype_out", a, 9), INVALID);
  a[5] = pt_val_tensor(&ti32);
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), INVALID);
  idx32[0] = 2;
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), PTERUN_STATUS_OK);
  /* row 2 = bytes 0x0b 0x7e -> codes 0-8, 11-8, 7-8, 14-8 = -8, 3, -1, 6; scale 1.5 */
  PT_CHECK(out[0] == -12.0f && out[1] == 4.5f && out[3] == 9.0f);
  idx32[1] = 1 << 30;
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_2bit.dtype_out", a, 9), INVALID);
  {
    int8_t wb[3 * 2] = {1, 2, 3, 4, 5, 6};
    pterun_tensor twb = pt_tensor_make(PTERUN_DTYPE_I8, 2, wsz, wb, sizeof(wb));
    pterun_value b[8] = {pt_val_tensor(&twb), pt_val_tensor(&ts), pt_val_none(),
                         pt_val_int(-128),    pt_val_int(127),    pt_val_tensor(&ti),
                         pt_val_tensor(&to),  pt_val_tensor(&to)};
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_byte.out", b, 8), INVALID);
    /* int8 weight is not a packed 4-bit weight */
    a[0] = pt_val_tensor(&twb);
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), INVALID);
  }
  return 0;
}

/* Groups that do not divide the row, zero groups, scale/out dtype clashes. */
static int test_embedding_shapes(void) {
  uint8_t w[2 * 3] = {0};
  uint16_t sc16[4] = {0x3c00, 0x3c00, 0x3c00, 0x3c00};
  float sc[4] = {1, 1, 1, 1}, out[64];
  int64_t wsz[2] = {2, 3}, s2[2] = {2, 4}, s0[2] = {2, 0}, isz[1] = {1}, osz[2] = {1, 6};
  int64_t idx[1] = {0};
  pterun_tensor tw = pt_tensor_make(PTERUN_DTYPE_U8, 2, wsz, w, sizeof(w));
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F32, 2, s2, sc, sizeof(sc)); /* 4 groups, D = 6 */
  pterun_tensor ts0 = pt_tensor_make(PTERUN_DTYPE_F32, 2, s0, sc, sizeof(sc));
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I64, 1, isz, idx, sizeof(idx));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, osz, out, sizeof(out));
  pterun_value a[8] = {pt_val_tensor(&tw), pt_val_tensor(&ts), pt_val_none(),
                       pt_val_int(-128),   pt_val_int(127),    pt_val_tensor(&ti),
                       pt_val_tensor(&to), pt_val_tensor(&to)};
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.out", a, 8), INVALID);
  a[1] = pt_val_tensor(&ts0);
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.out", a, 8), INVALID);
  {
    int64_t s1[1] = {2};
    pterun_tensor th = pt_tensor_make(PTERUN_DTYPE_F16, 1, s1, sc16, sizeof(sc16));
    a[1] = pt_val_tensor(&th); /* .out reads scales as the out dtype in ExecuTorch: refuse */
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_byte.out", a, 8), INVALID);
    a[3] = pt_val_int(5);
    a[4] = pt_val_int(4); /* quant_min > quant_max */
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_byte.out", a, 8), INVALID);
  }
  return 0;
}

static int test_quantize_args(void) {
  float x[4] = {0.1f, -0.2f, 0.3f, NAN};
  int8_t q[4];
  int64_t sz[1] = {4};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 1, sz, x, sizeof(x));
  pterun_tensor tq = pt_tensor_make(PTERUN_DTYPE_I8, 1, sz, q, sizeof(q));
  pterun_value a[8] = {pt_val_tensor(&tx), pt_val_double(0.1), pt_val_int(0),
                       pt_val_int(-128),   pt_val_int(127),    pt_val_int(PTERUN_DTYPE_I8),
                       pt_val_tensor(&tq), pt_val_tensor(&tq)};
  const char* op = "quantized_decomposed::quantize_per_tensor.out";
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_OK);
  PT_CHECK(q[0] == 1 && q[1] == -2 && q[2] == 3 && q[3] == -128);
  a[1] = pt_val_double(0.0);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = pt_val_double(-1.0);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = pt_val_double(NAN);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = pt_val_double(1e-300); /* underflows to 0 in float32 */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = pt_val_double(0.1);
  a[3] = pt_val_int(-129);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[3] = pt_val_int(-128);
  a[5] = pt_val_int(PTERUN_DTYPE_U8); /* out is int8 */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[5] = pt_val_int(PTERUN_DTYPE_I8);
  a[2] = pt_val_int((int64_t)1 << 40);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[2] = pt_val_int(0);
  a[0] = pt_val_tensor(&tq); /* int input */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[0] = pt_val_tensor(&tx);
  a[1] = pt_val_int(3); /* wrong kind for a float argument is accepted only for Int */
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_OK);
  a[1] = pt_val_none();
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_INVALID_TYPE);
  a[1] = pt_val_double(0.1);
  PT_CHECK_STATUS(call(op, a, 7), PTERUN_STATUS_INVALID_PROGRAM);
  {
    /* static output of the wrong shape: cannot resize */
    int64_t s3[1] = {3};
    pterun_tensor small = pt_tensor_make(PTERUN_DTYPE_I8, 1, s3, q, 3);
    small.dynamism = PTERUN_SHAPE_STATIC;
    a[6] = a[7] = pt_val_tensor(&small);
    PT_CHECK(call(op, a, 8) != PTERUN_STATUS_OK);
  }
  return 0;
}

static int test_dequantize_args(void) {
  int8_t q[4] = {1, 2, 3, 4};
  float out[4];
  double scales[2] = {0.1, 0.2};
  int64_t zps[2] = {0, 200}, sz[2] = {2, 2}, s2[1] = {2};
  pterun_tensor tq = pt_tensor_make(PTERUN_DTYPE_I8, 2, sz, q, sizeof(q));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, sz, out, sizeof(out));
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F64, 1, s2, scales, sizeof(scales));
  pterun_tensor tz = pt_tensor_make(PTERUN_DTYPE_I64, 1, s2, zps, sizeof(zps));
  pterun_value a[10] = {
      pt_val_tensor(&tq), pt_val_tensor(&ts), pt_val_tensor(&tz),          pt_val_int(0),
      pt_val_int(-128),   pt_val_int(127),    pt_val_int(PTERUN_DTYPE_I8), pt_val_none(),
      pt_val_tensor(&to), pt_val_tensor(&to)};
  const char* op = "quantized_decomposed::dequantize_per_channel.out";
  /* int8 -> float with a zero point outside [qmin, qmax]: ExecuTorch aborts */
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  zps[1] = 3;
  PT_CHECK_STATUS(call(op, a, 10), PTERUN_STATUS_OK);
  a[3] = pt_val_int(2);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[3] = pt_val_int(-3);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[3] = pt_val_int(-2);
  PT_CHECK_STATUS(call(op, a, 10), PTERUN_STATUS_OK);
  a[6] = pt_val_int(PTERUN_DTYPE_U8);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[6] = pt_val_int(PTERUN_DTYPE_I8);
  a[7] = pt_val_int(PTERUN_DTYPE_F16); /* out is float32 */
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[7] = pt_val_none();
  {
    int64_t s3[1] = {3};
    pterun_tensor ts3 = pt_tensor_make(PTERUN_DTYPE_F64, 1, s3, scales, sizeof(scales));
    a[1] = pt_val_tensor(&ts3);
    PT_CHECK_STATUS(call(op, a, 10), INVALID);
  }
  return 0;
}

static int test_choose_qparams(void) {
  float x[3] = {NAN, 1.0f, 2.0f};
  double s;
  int64_t z, sz[1] = {3}, one[1] = {1}, zero[1] = {0};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 1, sz, x, sizeof(x));
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F64, 1, one, &s, sizeof(s));
  pterun_tensor tz = pt_tensor_make(PTERUN_DTYPE_I64, 1, one, &z, sizeof(z));
  pterun_tensor tempty = pt_tensor_make(PTERUN_DTYPE_F32, 1, zero, x, 0);
  pterun_value lst;
  pterun_value a[8];
  pterun_value* items[2];
  a[0] = pt_val_tensor(&tx);
  a[1] = pt_val_int(-128);
  a[2] = pt_val_int(127);
  a[3] = pt_val_double(1e-7);
  a[4] = pt_val_int(PTERUN_DTYPE_I8);
  a[5] = pt_val_tensor(&ts);
  a[6] = pt_val_tensor(&tz);
  items[0] = &a[5];
  items[1] = &a[6];
  memset(&lst, 0, sizeof(lst));
  lst.tag = PTERUN_VALUE_LIST_TENSOR;
  lst.u.tensors.items = items;
  lst.u.tensors.len = 2;
  a[7] = lst;
  /* a leading NaN makes ExecuTorch's scale NaN and abort */
  PT_CHECK_STATUS(call("quantized_decomposed::choose_qparams.Tensor_out", a, 8), INVALID);
  x[0] = 0.5f;
  PT_CHECK_STATUS(call("quantized_decomposed::choose_qparams.Tensor_out", a, 8), PTERUN_STATUS_OK);
  a[0] = pt_val_tensor(&tempty);
  PT_CHECK_STATUS(call("quantized_decomposed::choose_qparams.Tensor_out", a, 8), INVALID);
  a[0] = pt_val_tensor(&tx);
  a[1] = pt_val_int(127);
  PT_CHECK_STATUS(call("quantized_decomposed::choose_qparams.Tensor_out", a, 8), INVALID);
  return 0;
}

static int test_mixed_and_add(void) {
  float x[4] = {1, 2, 3, 4}, s[2] = {1, 1}, out[4];
  int8_t w[4] = {1, 2, 3, 4};
  uint8_t qa[4] = {0}, qo[4];
  int64_t sz[2] = {2, 2}, s1[1] = {2}, s4[1] = {4}, s3[1] = {3};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 2, sz, x, sizeof(x));
  pterun_tensor tw = pt_tensor_make(PTERUN_DTYPE_I8, 2, sz, w, sizeof(w));
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F32, 1, s1, s, sizeof(s));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, sz, out, sizeof(out));
  pterun_value a[6] = {pt_val_tensor(&tx), pt_val_tensor(&tw), pt_val_tensor(&ts),
                       pt_val_tensor(&ts), pt_val_tensor(&to), pt_val_tensor(&to)};
  PT_CHECK_STATUS(call("quantized_decomposed::mixed_mm.out", a, 6), PTERUN_STATUS_NOT_SUPPORTED);
  a[3] = pt_val_none();
  PT_CHECK_STATUS(call("quantized_decomposed::mixed_mm.out", a, 6), PTERUN_STATUS_OK);
  a[1] = pt_val_tensor(&tx);
  PT_CHECK_STATUS(call("quantized_decomposed::mixed_mm.out", a, 6), INVALID);
  {
    pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, qa, sizeof(qa));
    pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_U8, 1, s3, qa, sizeof(qa));
    pterun_tensor tq = pt_tensor_make(PTERUN_DTYPE_U8, 1, s4, qo, sizeof(qo));
    pterun_value b[16] = {
        pt_val_tensor(&ta), pt_val_double(0.1), pt_val_int(0),      pt_val_int(0),
        pt_val_int(255),    pt_val_tensor(&ta), pt_val_double(0.1), pt_val_int(0),
        pt_val_int(0),      pt_val_int(255),    pt_val_double(0.2), pt_val_int(0),
        pt_val_int(0),      pt_val_int(255),    pt_val_tensor(&tq), pt_val_tensor(&tq)};
    PT_CHECK_STATUS(call("quantized_decomposed::add.out", b, 16), PTERUN_STATUS_OK);
    b[13] = pt_val_int(256);
    PT_CHECK_STATUS(call("quantized_decomposed::add.out", b, 16), INVALID);
    b[13] = pt_val_int(255);
    b[5] = pt_val_tensor(&tb);
    PT_CHECK_STATUS(call("quantized_decomposed::add.out", b, 16), INVALID);
  }
  return 0;
}

static int test_group_and_affine(void) {
  int8_t q[8] = {1, 2, 3, 4, 5, 6, 7, -8};
  float s[4] = {0.5f, 0.5f, 0.5f, 0.5f}, out[8];
  int64_t sz[2] = {2, 4}, s4[1] = {4};
  pterun_tensor tq = pt_tensor_make(PTERUN_DTYPE_I8, 2, sz, q, sizeof(q));
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F32, 1, s4, s, sizeof(s));
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, sz, out, sizeof(out));
  pterun_value a[10] = {
      pt_val_tensor(&tq), pt_val_tensor(&ts),          pt_val_none(), pt_val_int(-8),
      pt_val_int(7),      pt_val_int(PTERUN_DTYPE_I8), pt_val_int(2), pt_val_int(PTERUN_DTYPE_F32),
      pt_val_tensor(&to), pt_val_tensor(&to)};
  const char* op = "quantized_decomposed::dequantize_per_channel_group.out";
  PT_CHECK_STATUS(call(op, a, 10), PTERUN_STATUS_OK);
  PT_CHECK(out[7] == -4.0f && out[0] == 0.5f);
  a[6] = pt_val_int(1);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[6] = pt_val_int(3);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  {
    /* torchao::dequantize_affine with a block_size of the wrong length */
    pterun_value bs_items[1];
    pterun_value* bs_ptrs[1];
    int64_t scratch[1];
    pterun_value bs;
    pterun_value b[10];
    bs_items[0] = pt_val_int(2);
    bs_ptrs[0] = &bs_items[0];
    memset(&bs, 0, sizeof(bs));
    bs.tag = PTERUN_VALUE_LIST_INT;
    bs.u.ints.items = bs_ptrs;
    bs.u.ints.scratch = scratch;
    bs.u.ints.len = 1;
    b[0] = pt_val_tensor(&tq);
    b[1] = bs;
    b[2] = pt_val_tensor(&ts);
    b[3] = pt_val_none();
    b[4] = pt_val_int(PTERUN_DTYPE_I8);
    b[5] = pt_val_int(-8);
    b[6] = pt_val_int(7);
    b[7] = pt_val_int(PTERUN_DTYPE_F32);
    b[8] = pt_val_tensor(&to);
    b[9] = pt_val_tensor(&to);
    PT_CHECK_STATUS(call("torchao::dequantize_affine.out", b, 10), INVALID);
  }
  return 0;
}

/* pterun_quantized::linear_dequantize: equals dequantize_affine followed by a
 * k-ordered float32 dot product, bit for bit (both the int8 fast path and the
 * generic path), and rejects bad geometry. */
static int run_fused(int zp_dtype, float* out, float* ref) {
  enum { M = 3, N = 5, K = 8, G = 2 };
  static float x[M * K];
  static int8_t w[N * K];
  static float sc[N * G], bias[N];
  static int8_t zp8[N * G];
  static int32_t zp32[N * G];
  int64_t xs[2] = {M, K}, ws[2] = {N, K}, ss[2] = {N, G}, bsz[1] = {N}, os[2] = {M, N};
  int i, r, n, k;
  pterun_value bs_items[2], *bs_ptrs[2], bs, a[8];
  int64_t scratch[2];
  pterun_tensor tx, tw, ts, tz, tb, to;
  for (i = 0; i < M * K; ++i) x[i] = (float)((i * 37) % 19 - 9) * 0.173f;
  for (i = 0; i < N * K; ++i) w[i] = (int8_t)((i * 11) % 16 - 8);
  for (i = 0; i < N * G; ++i) {
    sc[i] = 0.01f + 0.0137f * (float)i;
    zp8[i] = (int8_t)(i % 3 - 1);
    zp32[i] = zp8[i];
  }
  for (i = 0; i < N; ++i) bias[i] = 0.5f - 0.25f * (float)i;
  tx = pt_tensor_make(PTERUN_DTYPE_F32, 2, xs, x, sizeof(x));
  tw = pt_tensor_make(PTERUN_DTYPE_I8, 2, ws, w, sizeof(w));
  ts = pt_tensor_make(PTERUN_DTYPE_F32, 2, ss, sc, sizeof(sc));
  tz = zp_dtype == PTERUN_DTYPE_I8 ? pt_tensor_make(PTERUN_DTYPE_I8, 2, ss, zp8, sizeof(zp8))
                                   : pt_tensor_make(PTERUN_DTYPE_I32, 2, ss, zp32, sizeof(zp32));
  tb = pt_tensor_make(PTERUN_DTYPE_F32, 1, bsz, bias, sizeof(bias));
  to = pt_tensor_make(PTERUN_DTYPE_F32, 2, os, out, sizeof(float) * M * N);
  bs_items[0] = pt_val_int(1);
  bs_items[1] = pt_val_int(K / G);
  bs_ptrs[0] = &bs_items[0];
  bs_ptrs[1] = &bs_items[1];
  memset(&bs, 0, sizeof(bs));
  bs.tag = PTERUN_VALUE_LIST_INT;
  bs.u.ints.items = bs_ptrs;
  bs.u.ints.scratch = scratch;
  bs.u.ints.len = 2;
  a[0] = pt_val_tensor(&tx);
  a[1] = pt_val_tensor(&tw);
  a[2] = bs;
  a[3] = pt_val_tensor(&ts);
  a[4] = pt_val_tensor(&tz);
  a[5] = pt_val_tensor(&tb);
  a[6] = pt_val_tensor(&to);
  a[7] = pt_val_tensor(&to);
  PT_CHECK_STATUS(call("pterun_quantized::linear_dequantize.out", a, 8), PTERUN_STATUS_OK);
  for (r = 0; r < M; ++r)
    for (n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (k = 0; k < K; ++k) {
        int gi = n * G + k / (K / G);
        float wv = ((float)w[n * K + k] - (float)zp8[gi]) * sc[gi];
        acc += x[r * K + k] * wv;
      }
      ref[r * N + n] = acc + bias[n];
    }
  /* a block size that does not divide K */
  bs_items[1] = pt_val_int(3);
  PT_CHECK_STATUS(call("pterun_quantized::linear_dequantize.out", a, 8), INVALID);
  return 0;
}

static int test_fused_linear(void) {
  float out[15], ref[15];
  PT_CHECK(run_fused(PTERUN_DTYPE_I8, out, ref) == 0);
  PT_CHECK(memcmp(out, ref, sizeof(out)) == 0);
  PT_CHECK(run_fused(PTERUN_DTYPE_I32, out, ref) == 0); /* generic path */
  PT_CHECK(memcmp(out, ref, sizeof(out)) == 0);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_embedding_index_bounds);
  PT_RUN(test_embedding_shapes);
  PT_RUN(test_quantize_args);
  PT_RUN(test_dequantize_args);
  PT_RUN(test_choose_qparams);
  PT_RUN(test_mixed_and_add);
  PT_RUN(test_group_and_affine);
  PT_RUN(test_fused_linear);
  return pt_failures ? 1 : 0;
}
