/* Argument validation of the quantized kernels: every case where ExecuTorch
 * aborts, reads out of bounds or misreads memory must return a status here. */
#include <math.h>
#include <string.h>

#include "pterun/kernels/quantized.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static pterun_kernel_fn find(const char* op) {
  const pterun_kernel_library* lib = pterun_kernels_quantized();
  size_t k;
  for (k = 0; k < lib->count; ++k)
    if (strcmp(lib->kernels[k].op, op) == 0) return lib->kernels[k].fn;
  return NULL;
}

static pterun_tensor mk(int dtype, int rank, const int64_t* sizes, void* data, size_t capacity) {
  pterun_tensor t;
  int d;
  memset(&t, 0, sizeof(t));
  t.dtype = dtype;
  t.rank = (uint8_t)rank;
  for (d = 0; d < rank; ++d) {
    t.sizes[d] = t.max_sizes[d] = sizes[d];
    t.dim_order[d] = (uint8_t)d;
  }
  t.data = data;
  t.capacity = capacity;
  t.dynamism = PTERUN_SHAPE_UNBOUNDED;
  pterun_tensor_update_layout(&t);
  return t;
}

static pterun_value vt(pterun_tensor* t) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
static pterun_value vi(int64_t i) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_INT;
  v.u.i = i;
  return v;
}
static pterun_value vd(double d) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
static pterun_value vnone(void) {
  pterun_value v;
  memset(&v, 0, sizeof(v));
  v.tag = PTERUN_VALUE_NONE;
  return v;
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
  pterun_tensor tw = mk(PTERUN_DTYPE_U8, 2, wsz, w, sizeof(w));
  pterun_tensor ts = mk(PTERUN_DTYPE_F32, 1, ssz, sc, sizeof(sc));
  pterun_tensor ti = mk(PTERUN_DTYPE_I64, 1, isz, idx64, sizeof(idx64));
  pterun_tensor ti32 = mk(PTERUN_DTYPE_I32, 1, isz, idx32, sizeof(idx32));
  pterun_tensor to = mk(PTERUN_DTYPE_F32, 2, osz, out, sizeof(out));
  pterun_value a[9] = {vt(&tw), vt(&ts), vnone(), vi(-8), vi(7), vt(&ti), vnone(), vt(&to), vt(&to)};
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), INVALID);
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_2bit.dtype_out", a, 9), INVALID);
  a[5] = vt(&ti32);
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), INVALID);
  idx32[0] = 2;
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.dtype_out", a, 9), PTERUN_STATUS_OK);
  /* row 2 = bytes 0x0b 0x7e -> codes 0-8, 11-8, 7-8, 14-8 = -8, 3, -1, 6; scale 1.5 */
  PT_CHECK(out[0] == -12.0f && out[1] == 4.5f && out[3] == 9.0f);
  idx32[1] = 1 << 30;
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_2bit.dtype_out", a, 9), INVALID);
  {
    int8_t wb[3 * 2] = {1, 2, 3, 4, 5, 6};
    pterun_tensor twb = mk(PTERUN_DTYPE_I8, 2, wsz, wb, sizeof(wb));
    pterun_value b[8] = {vt(&twb), vt(&ts), vnone(), vi(-128), vi(127), vt(&ti), vt(&to), vt(&to)};
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_byte.out", b, 8), INVALID);
    /* int8 weight is not a packed 4-bit weight */
    a[0] = vt(&twb);
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
  pterun_tensor tw = mk(PTERUN_DTYPE_U8, 2, wsz, w, sizeof(w));
  pterun_tensor ts = mk(PTERUN_DTYPE_F32, 2, s2, sc, sizeof(sc)); /* 4 groups, D = 6 */
  pterun_tensor ts0 = mk(PTERUN_DTYPE_F32, 2, s0, sc, sizeof(sc));
  pterun_tensor ti = mk(PTERUN_DTYPE_I64, 1, isz, idx, sizeof(idx));
  pterun_tensor to = mk(PTERUN_DTYPE_F32, 2, osz, out, sizeof(out));
  pterun_value a[8] = {vt(&tw), vt(&ts), vnone(), vi(-128), vi(127), vt(&ti), vt(&to), vt(&to)};
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.out", a, 8), INVALID);
  a[1] = vt(&ts0);
  PT_CHECK_STATUS(call("quantized_decomposed::embedding_4bit.out", a, 8), INVALID);
  {
    int64_t s1[1] = {2};
    pterun_tensor th = mk(PTERUN_DTYPE_F16, 1, s1, sc16, sizeof(sc16));
    a[1] = vt(&th); /* .out reads scales as the out dtype in ExecuTorch: refuse */
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_byte.out", a, 8), INVALID);
    a[3] = vi(5);
    a[4] = vi(4); /* quant_min > quant_max */
    PT_CHECK_STATUS(call("quantized_decomposed::embedding_byte.out", a, 8), INVALID);
  }
  return 0;
}

static int test_quantize_args(void) {
  float x[4] = {0.1f, -0.2f, 0.3f, NAN};
  int8_t q[4];
  int64_t sz[1] = {4};
  pterun_tensor tx = mk(PTERUN_DTYPE_F32, 1, sz, x, sizeof(x));
  pterun_tensor tq = mk(PTERUN_DTYPE_I8, 1, sz, q, sizeof(q));
  pterun_value a[8] = {vt(&tx), vd(0.1), vi(0), vi(-128), vi(127), vi(PTERUN_DTYPE_I8), vt(&tq), vt(&tq)};
  const char* op = "quantized_decomposed::quantize_per_tensor.out";
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_OK);
  PT_CHECK(q[0] == 1 && q[1] == -2 && q[2] == 3 && q[3] == -128);
  a[1] = vd(0.0);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = vd(-1.0);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = vd(NAN);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = vd(1e-300); /* underflows to 0 in float32 */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = vd(0.1);
  a[3] = vi(-129);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[3] = vi(-128);
  a[5] = vi(PTERUN_DTYPE_U8); /* out is int8 */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[5] = vi(PTERUN_DTYPE_I8);
  a[2] = vi((int64_t)1 << 40);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[2] = vi(0);
  a[0] = vt(&tq); /* int input */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[0] = vt(&tx);
  a[1] = vi(3); /* wrong kind for a float argument is accepted only for Int */
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_OK);
  a[1] = vnone();
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_INVALID_TYPE);
  a[1] = vd(0.1);
  PT_CHECK_STATUS(call(op, a, 7), PTERUN_STATUS_INVALID_PROGRAM);
  {
    /* static output of the wrong shape: cannot resize */
    int64_t s3[1] = {3};
    pterun_tensor small = mk(PTERUN_DTYPE_I8, 1, s3, q, 3);
    small.dynamism = PTERUN_SHAPE_STATIC;
    a[6] = a[7] = vt(&small);
    PT_CHECK(call(op, a, 8) != PTERUN_STATUS_OK);
  }
  return 0;
}

static int test_dequantize_args(void) {
  int8_t q[4] = {1, 2, 3, 4};
  float out[4];
  double scales[2] = {0.1, 0.2};
  int64_t zps[2] = {0, 200}, sz[2] = {2, 2}, s2[1] = {2};
  pterun_tensor tq = mk(PTERUN_DTYPE_I8, 2, sz, q, sizeof(q));
  pterun_tensor to = mk(PTERUN_DTYPE_F32, 2, sz, out, sizeof(out));
  pterun_tensor ts = mk(PTERUN_DTYPE_F64, 1, s2, scales, sizeof(scales));
  pterun_tensor tz = mk(PTERUN_DTYPE_I64, 1, s2, zps, sizeof(zps));
  pterun_value a[10] = {vt(&tq), vt(&ts), vt(&tz), vi(0), vi(-128), vi(127),
                        vi(PTERUN_DTYPE_I8), vnone(), vt(&to), vt(&to)};
  const char* op = "quantized_decomposed::dequantize_per_channel.out";
  /* int8 -> float with a zero point outside [qmin, qmax]: ExecuTorch aborts */
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  zps[1] = 3;
  PT_CHECK_STATUS(call(op, a, 10), PTERUN_STATUS_OK);
  a[3] = vi(2);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[3] = vi(-3);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[3] = vi(-2);
  PT_CHECK_STATUS(call(op, a, 10), PTERUN_STATUS_OK);
  a[6] = vi(PTERUN_DTYPE_U8);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[6] = vi(PTERUN_DTYPE_I8);
  a[7] = vi(PTERUN_DTYPE_F16); /* out is float32 */
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[7] = vnone();
  {
    int64_t s3[1] = {3};
    pterun_tensor ts3 = mk(PTERUN_DTYPE_F64, 1, s3, scales, sizeof(scales));
    a[1] = vt(&ts3);
    PT_CHECK_STATUS(call(op, a, 10), INVALID);
  }
  return 0;
}

static int test_choose_qparams(void) {
  float x[3] = {NAN, 1.0f, 2.0f};
  double s;
  int64_t z, sz[1] = {3}, one[1] = {1}, zero[1] = {0};
  pterun_tensor tx = mk(PTERUN_DTYPE_F32, 1, sz, x, sizeof(x));
  pterun_tensor ts = mk(PTERUN_DTYPE_F64, 1, one, &s, sizeof(s));
  pterun_tensor tz = mk(PTERUN_DTYPE_I64, 1, one, &z, sizeof(z));
  pterun_tensor tempty = mk(PTERUN_DTYPE_F32, 1, zero, x, 0);
  pterun_value lst;
  pterun_value a[8];
  pterun_value* items[2];
  a[0] = vt(&tx);
  a[1] = vi(-128);
  a[2] = vi(127);
  a[3] = vd(1e-7);
  a[4] = vi(PTERUN_DTYPE_I8);
  a[5] = vt(&ts);
  a[6] = vt(&tz);
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
  a[0] = vt(&tempty);
  PT_CHECK_STATUS(call("quantized_decomposed::choose_qparams.Tensor_out", a, 8), INVALID);
  a[0] = vt(&tx);
  a[1] = vi(127);
  PT_CHECK_STATUS(call("quantized_decomposed::choose_qparams.Tensor_out", a, 8), INVALID);
  return 0;
}

static int test_mixed_and_add(void) {
  float x[4] = {1, 2, 3, 4}, s[2] = {1, 1}, out[4];
  int8_t w[4] = {1, 2, 3, 4};
  uint8_t qa[4] = {0}, qo[4];
  int64_t sz[2] = {2, 2}, s1[1] = {2}, s4[1] = {4}, s3[1] = {3};
  pterun_tensor tx = mk(PTERUN_DTYPE_F32, 2, sz, x, sizeof(x));
  pterun_tensor tw = mk(PTERUN_DTYPE_I8, 2, sz, w, sizeof(w));
  pterun_tensor ts = mk(PTERUN_DTYPE_F32, 1, s1, s, sizeof(s));
  pterun_tensor to = mk(PTERUN_DTYPE_F32, 2, sz, out, sizeof(out));
  pterun_value a[6] = {vt(&tx), vt(&tw), vt(&ts), vt(&ts), vt(&to), vt(&to)};
  PT_CHECK_STATUS(call("quantized_decomposed::mixed_mm.out", a, 6), PTERUN_STATUS_NOT_SUPPORTED);
  a[3] = vnone();
  PT_CHECK_STATUS(call("quantized_decomposed::mixed_mm.out", a, 6), PTERUN_STATUS_OK);
  a[1] = vt(&tx);
  PT_CHECK_STATUS(call("quantized_decomposed::mixed_mm.out", a, 6), INVALID);
  {
    pterun_tensor ta = mk(PTERUN_DTYPE_U8, 1, s4, qa, sizeof(qa));
    pterun_tensor tb = mk(PTERUN_DTYPE_U8, 1, s3, qa, sizeof(qa));
    pterun_tensor tq = mk(PTERUN_DTYPE_U8, 1, s4, qo, sizeof(qo));
    pterun_value b[16] = {vt(&ta), vd(0.1), vi(0), vi(0),   vi(255), vt(&ta), vd(0.1), vi(0),
                          vi(0),   vi(255), vd(0.2), vi(0), vi(0),   vi(255), vt(&tq), vt(&tq)};
    PT_CHECK_STATUS(call("quantized_decomposed::add.out", b, 16), PTERUN_STATUS_OK);
    b[13] = vi(256);
    PT_CHECK_STATUS(call("quantized_decomposed::add.out", b, 16), INVALID);
    b[13] = vi(255);
    b[5] = vt(&tb);
    PT_CHECK_STATUS(call("quantized_decomposed::add.out", b, 16), INVALID);
  }
  return 0;
}

static int test_group_and_affine(void) {
  int8_t q[8] = {1, 2, 3, 4, 5, 6, 7, -8};
  float s[4] = {0.5f, 0.5f, 0.5f, 0.5f}, out[8];
  int64_t sz[2] = {2, 4}, s4[1] = {4};
  pterun_tensor tq = mk(PTERUN_DTYPE_I8, 2, sz, q, sizeof(q));
  pterun_tensor ts = mk(PTERUN_DTYPE_F32, 1, s4, s, sizeof(s));
  pterun_tensor to = mk(PTERUN_DTYPE_F32, 2, sz, out, sizeof(out));
  pterun_value a[10] = {vt(&tq), vt(&ts), vnone(), vi(-8), vi(7), vi(PTERUN_DTYPE_I8),
                        vi(2), vi(PTERUN_DTYPE_F32), vt(&to), vt(&to)};
  const char* op = "quantized_decomposed::dequantize_per_channel_group.out";
  PT_CHECK_STATUS(call(op, a, 10), PTERUN_STATUS_OK);
  PT_CHECK(out[7] == -4.0f && out[0] == 0.5f);
  a[6] = vi(1);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  a[6] = vi(3);
  PT_CHECK_STATUS(call(op, a, 10), INVALID);
  {
    /* torchao::dequantize_affine with a block_size of the wrong length */
    pterun_value bs_items[1];
    pterun_value* bs_ptrs[1];
    int64_t scratch[1];
    pterun_value bs;
    pterun_value b[10];
    bs_items[0] = vi(2);
    bs_ptrs[0] = &bs_items[0];
    memset(&bs, 0, sizeof(bs));
    bs.tag = PTERUN_VALUE_LIST_INT;
    bs.u.ints.items = bs_ptrs;
    bs.u.ints.scratch = scratch;
    bs.u.ints.len = 1;
    b[0] = vt(&tq);
    b[1] = bs;
    b[2] = vt(&ts);
    b[3] = vnone();
    b[4] = vi(PTERUN_DTYPE_I8);
    b[5] = vi(-8);
    b[6] = vi(7);
    b[7] = vi(PTERUN_DTYPE_F32);
    b[8] = vt(&to);
    b[9] = vt(&to);
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
  tx = mk(PTERUN_DTYPE_F32, 2, xs, x, sizeof(x));
  tw = mk(PTERUN_DTYPE_I8, 2, ws, w, sizeof(w));
  ts = mk(PTERUN_DTYPE_F32, 2, ss, sc, sizeof(sc));
  tz = zp_dtype == PTERUN_DTYPE_I8 ? mk(PTERUN_DTYPE_I8, 2, ss, zp8, sizeof(zp8))
                                   : mk(PTERUN_DTYPE_I32, 2, ss, zp32, sizeof(zp32));
  tb = mk(PTERUN_DTYPE_F32, 1, bsz, bias, sizeof(bias));
  to = mk(PTERUN_DTYPE_F32, 2, os, out, sizeof(float) * M * N);
  bs_items[0] = vi(1);
  bs_items[1] = vi(K / G);
  bs_ptrs[0] = &bs_items[0];
  bs_ptrs[1] = &bs_items[1];
  memset(&bs, 0, sizeof(bs));
  bs.tag = PTERUN_VALUE_LIST_INT;
  bs.u.ints.items = bs_ptrs;
  bs.u.ints.scratch = scratch;
  bs.u.ints.len = 2;
  a[0] = vt(&tx);
  a[1] = vt(&tw);
  a[2] = bs;
  a[3] = vt(&ts);
  a[4] = vt(&tz);
  a[5] = vt(&tb);
  a[6] = vt(&to);
  a[7] = vt(&to);
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
  bs_items[1] = vi(3);
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
