/* libpterun_kernels_lowbit: the 24 operators are registered; torchao's bit
 * layouts decode the vectors of quantized-ops.md 8.2; the activation zero
 * point is not wrapped to int8 (docs/lowbit.md); malformed packed buffers,
 * sizes and indices return INVALID_ARGUMENT and never read out of bounds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pterun/kernels/lowbit.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

#define INVALID PTERUN_STATUS_INVALID_ARGUMENT

static pterun_status call(const char* op, pterun_value* vals, size_t n) {
  static uint8_t scratch[1 << 16];
  pterun_value* argp[16];
  pterun_logger logger = pterun_logger_silent();
  size_t k;
  pterun_kernel_fn fn = pt_find_kernel(pterun_kernels_lowbit(), op);
  if (fn == NULL) return PTERUN_STATUS_OPERATOR_MISSING;
  for (k = 0; k < n; ++k) argp[k] = &vals[k];
  return pterun_kernel_invoke(fn, op, argp, n, &logger, scratch, sizeof scratch);
}

static void put32(uint8_t* p, int32_t v) {
  memcpy(p, &v, 4);
}

static void header(uint8_t* p, const int32_t* words, int n) {
  int i;
  memset(p, 0, 64);
  for (i = 0; i < n; ++i) put32(p + 4 * i, words[i]);
}

static int test_registered(void) {
  const pterun_kernel_library* lib = pterun_kernels_lowbit();
  char name[96];
  int n;
  PT_CHECK(lib->count == 24);
  for (n = 1; n <= 8; ++n) {
    snprintf(name, sizeof name, "torchao::_linear_8bit_act_%dbit_weight.out", n);
    PT_CHECK(pt_find_kernel(lib, name) != NULL);
    snprintf(name, sizeof name, "torchao::_embedding_%dbit.out", n);
    PT_CHECK(pt_find_kernel(lib, name) != NULL);
    snprintf(name, sizeof name, "torchao::_shared_embedding_%dbit.out", n);
    PT_CHECK(pt_find_kernel(lib, name) != NULL);
  }
  return 0;
}

/* One embedding row of D values at nbit, scale 1 and zero 0: out = codes. */
static pterun_status embed_row(int nbit, const uint8_t* row, int64_t D, float* out) {
  static uint8_t buf[64 + 128];
  const int32_t hw[6] = {6712, 2, 1, nbit, 32, 128};
  float sc[1] = {1.0f};
  int8_t zp[1] = {0};
  int64_t idx[1] = {0};
  int64_t bsz[1] = {64 + D * nbit / 8}, ssz[2] = {1, 1}, isz[1] = {1}, osz[2] = {1, D};
  char op[64];
  header(buf, hw, 6);
  memcpy(buf + 64, row, (size_t)(D * nbit / 8));
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_I8, 1, bsz, buf, sizeof buf);
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F32, 2, ssz, sc, sizeof sc);
  pterun_tensor tz = pt_tensor_make(PTERUN_DTYPE_I8, 2, ssz, zp, sizeof zp);
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I64, 1, isz, idx, sizeof idx);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, osz, out, (size_t)D * 4);
  pterun_value a[8] = {pt_val_tensor(&tb), pt_val_int(1),      pt_val_int(D),
                       pt_val_tensor(&ts), pt_val_tensor(&tz), pt_val_tensor(&ti),
                       pt_val_tensor(&to), pt_val_tensor(&to)};
  snprintf(op, sizeof op, "torchao::_embedding_%dbit.out", nbit);
  return call(op, a, 8);
}

/* quantized-ops.md 8.2, "TorchAO packing". */
static int test_layout_vectors(void) {
  uint8_t row[16];
  float out[128];
  int i;
  for (i = 0; i < 16; ++i) row[i] = (uint8_t)(i * 0x11);
  PT_CHECK_STATUS(embed_row(4, row, 32, out), PTERUN_STATUS_OK);
  for (i = 0; i < 32; ++i) PT_CHECK(out[i] == (float)(i % 16 - 8));
  {
    const uint8_t r2[8] = {0x00, 0x55, 0xaa, 0xff, 0x00, 0x55, 0xaa, 0xff};
    PT_CHECK_STATUS(embed_row(2, r2, 32, out), PTERUN_STATUS_OK);
    for (i = 0; i < 32; ++i) PT_CHECK(out[i] == (float)(i % 4 - 2));
  }
  memset(row, 0x55, sizeof row);
  PT_CHECK_STATUS(embed_row(1, row, 128, out), PTERUN_STATUS_OK);
  for (i = 0; i < 128; ++i) PT_CHECK(out[i] == ((i / 16) % 2 == 0 ? -1.0f : 0.0f));
  return 0;
}

/* A universal 8-bit linear buffer, n = 1 (one tile), k = 16, group 16, no
 * zeros/bias, every weight code 1 and scale 1: out = dequantized row sum. */
static uint8_t g_lin[64 + 16 * 8 + 64];

static void make_linear8(void) {
  const int32_t hw[8] = {6712, 1, 8, 0, 0, 8, 16, 2};
  uint8_t* p = g_lin + 64;
  header(g_lin, hw, 8);
  memset(p, 0, 128);    /* columns 1..7: tile padding, code 0 */
  memset(p, 1, 8);      /* column 0, first 8 values */
  memset(p + 64, 1, 8); /* column 0, last 8 values */
  p += 128;
  memset(p, 0, 64);
  {
    float one = 1.0f;
    memcpy(p, &one, 4);
    put32(p + 32, 16); /* code sum of column 0 */
  }
}

static pterun_status linear8(const float* x, float* out, size_t bytes, int64_t gs, int64_t n) {
  int64_t xsz[2] = {1, 16}, bsz[1] = {(int64_t)bytes}, osz[2] = {1, 1};
  pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 2, xsz, (void*)x, 64);
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_I8, 1, bsz, g_lin, bytes);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, osz, out, 64);
  pterun_value a[7] = {pt_val_tensor(&tx), pt_val_tensor(&tb), pt_val_int(gs),    pt_val_int(n),
                       pt_val_int(16),     pt_val_tensor(&to), pt_val_tensor(&to)};
  return call("torchao::_linear_8bit_act_8bit_weight.out", a, 7);
}

/* docs/lowbit.md: an all-positive row has a zero point below -128; torchao
 * wraps it to int8 (row [1..4] style: -213 -> 43) and the result is garbage.
 * pterun keeps it: the result is the row sum within quantization error. */
static int test_activation_zero_point(void) {
  float x[16], out[8], sum = 0.0f;
  int i;
  make_linear8();
  for (i = 0; i < 16; ++i) {
    x[i] = 1.0f + (float)i * 0.2f; /* all positive: zero = -128 - 255 * 1/3 */
    sum += x[i];
  }
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 1), PTERUN_STATUS_OK);
  PT_CHECK(fabsf(out[0] - sum) < 0.02f * sum);
  for (i = 0; i < 16; ++i) x[i] = -x[i]; /* all negative */
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 1), PTERUN_STATUS_OK);
  PT_CHECK(fabsf(out[0] + sum) < 0.02f * sum);
  for (i = 0; i < 16; ++i) x[i] = 0.75f; /* constant: quantized over [0, 0.75] */
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 1), PTERUN_STATUS_OK);
  PT_CHECK(fabsf(out[0] - 12.0f) < 1e-5f);
  for (i = 0; i < 16; ++i) x[i] = 0.0f; /* all zero */
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 1), PTERUN_STATUS_OK);
  PT_CHECK(out[0] == 0.0f);
  return 0;
}

static int test_malformed_linear(void) {
  float x[16] = {1, -2, 3}, out[8];
  size_t i;
  int v;
  make_linear8();
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 1), PTERUN_STATUS_OK);
  /* sizes: truncated, header only, shorter than a header, wrong n/k/group */
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin - 1, 16, 1), INVALID);
  PT_CHECK_STATUS(linear8(x, out, 64, 16, 1), INVALID);
  PT_CHECK_STATUS(linear8(x, out, 63, 16, 1), INVALID);
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 9), INVALID);
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 8, 1), INVALID);
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 32, 1), INVALID);
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 0, 1), INVALID);
  PT_CHECK_STATUS(linear8(x, out, sizeof g_lin, 16, 0), INVALID);
  /* every header byte set to a few hostile values: each change breaks the
   * header or (flags) the size check, so each must be refused */
  for (i = 0; i < 64; ++i) {
    for (v = 0; v < 4; ++v) {
      static const uint8_t kv[4] = {0x00, 0x01, 0x7f, 0xff};
      uint8_t saved = g_lin[i];
      pterun_status st;
      if (kv[v] == saved) continue;
      g_lin[i] = kv[v];
      st = linear8(x, out, sizeof g_lin, 16, 1);
      g_lin[i] = saved;
      if (st != INVALID) {
        fprintf(stderr, "header byte %zu = 0x%02x accepted\n", i, kv[v]);
        return 1;
      }
    }
  }
  return 0;
}

static int test_malformed_embedding(void) {
  static uint8_t buf[64 + 2 * 16];
  const int32_t hw[6] = {6712, 2, 1, 4, 32, 128};
  float sc[2] = {1, 1}, out[64];
  int8_t zp[2] = {0, 0};
  int64_t idx[2] = {1, 0};
  int64_t bsz[1] = {sizeof buf}, ssz[2] = {2, 1}, isz[1] = {2}, osz[2] = {2, 32};
  header(buf, hw, 6);
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_I8, 1, bsz, buf, sizeof buf);
  pterun_tensor ts = pt_tensor_make(PTERUN_DTYPE_F32, 2, ssz, sc, sizeof sc);
  pterun_tensor tz = pt_tensor_make(PTERUN_DTYPE_I8, 2, ssz, zp, sizeof zp);
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I64, 1, isz, idx, sizeof idx);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, osz, out, sizeof out);
  pterun_value a[8] = {pt_val_tensor(&tb), pt_val_int(2),      pt_val_int(32),
                       pt_val_tensor(&ts), pt_val_tensor(&tz), pt_val_tensor(&ti),
                       pt_val_tensor(&to), pt_val_tensor(&to)};
  const char* op = "torchao::_embedding_4bit.out";
  PT_CHECK_STATUS(call(op, a, 8), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(call("torchao::_embedding_2bit.out", a, 8), INVALID); /* header says 4 */
  a[1] = pt_val_int(3); /* more rows than the buffer holds */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[1] = pt_val_int(2);
  a[2] = pt_val_int(64);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  a[2] = pt_val_int(32);
  idx[0] = 2;
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  idx[0] = -1;
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  idx[0] = 1;
  put32(buf + 16, 16); /* min chunk size */
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  put32(buf + 16, 32);
  bsz[0] = sizeof buf - 1;
  tb = pt_tensor_make(PTERUN_DTYPE_I8, 1, bsz, buf, sizeof buf);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  bsz[0] = sizeof buf;
  tb = pt_tensor_make(PTERUN_DTYPE_I8, 1, bsz, buf, sizeof buf);
  ssz[1] = 2; /* 2 groups of 16: not a multiple of 32 */
  ts = pt_tensor_make(PTERUN_DTYPE_F32, 2, ssz, sc, sizeof sc);
  PT_CHECK_STATUS(call(op, a, 8), INVALID);
  return 0;
}

static int test_malformed_shared_embedding(void) {
  int64_t idx[1] = {0}, isz[1] = {1}, bsz[1] = {sizeof g_lin}, osz[2] = {1, 16};
  float out[16];
  make_linear8();
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_I8, 1, bsz, g_lin, sizeof g_lin);
  pterun_tensor ti = pt_tensor_make(PTERUN_DTYPE_I64, 1, isz, idx, sizeof idx);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, osz, out, sizeof out);
  pterun_value a[7] = {pt_val_tensor(&tb), pt_val_int(16),     pt_val_int(1),     pt_val_int(16),
                       pt_val_tensor(&ti), pt_val_tensor(&to), pt_val_tensor(&to)};
  const char* op = "torchao::_shared_embedding_8bit.out";
  int i;
  PT_CHECK_STATUS(call(op, a, 7), PTERUN_STATUS_OK);
  for (i = 0; i < 16; ++i) PT_CHECK(out[i] == 1.0f);
  idx[0] = 1; /* n = 1: row 1 is tile padding, not a row */
  PT_CHECK_STATUS(call(op, a, 7), INVALID);
  idx[0] = 0;
  a[2] = pt_val_int(9); /* a second tile that is not there */
  PT_CHECK_STATUS(call(op, a, 7), INVALID);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_registered);
  PT_RUN(test_layout_vectors);
  PT_RUN(test_activation_zero_point);
  PT_RUN(test_malformed_linear);
  PT_RUN(test_malformed_embedding);
  PT_RUN(test_malformed_shared_embedding);
  return pt_failures ? 1 : 0;
}
