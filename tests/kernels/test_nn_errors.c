/* Error paths of the nn/shape kernels that golden files cannot express:
 * wrong argument counts and kinds, unbound data. Every call must return a
 * status, never crash. Also the recurrent cells the fusion pass makes
 * (pterun::gru_cell, pterun::lstm_cell), which no program names: against a
 * double-precision reference, in place over an input, and refused inputs. */
#include <math.h>
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

/* The cells over n = 2 x 300 elements (two tiles and a tail). */
#define CELL_N 600
static float g_x[7][CELL_N], g_y[3][CELL_N];

static double sig(double v) {
  return 1.0 / (1.0 + exp(-v));
}

static int close_to(double got, double want) {
  return fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
}

static int test_rnn_cells(void) {
  pterun_logger quiet = pterun_logger_silent();
  pterun_kernel_fn gru = find("pterun::gru_cell.out"), lstm = find("pterun::lstm_cell.out");
  int64_t s[2] = {2, 300}, s1[3] = {1, 2, 300}, bad[2] = {2, 299};
  pterun_tensor tx[7], ty[3];
  pterun_value vx[7], vy[3];
  pterun_value* args[10];
  PT_CHECK(gru != NULL && lstm != NULL);
  for (int k = 0; k < 7; ++k)
    for (int i = 0; i < CELL_N; ++i) g_x[k][i] = (float)sin(0.37 * i + k) * (1.5f + (float)k);
  for (int k = 0; k < 7; ++k) make_tensor(&tx[k], &vx[k], PTERUN_DTYPE_F32, 2, s, g_x[k]);
  make_tensor(&ty[0], &vy[0], PTERUN_DTYPE_F32, 3, s1, g_y[0]); /* a leading 1: the same elements */
  make_tensor(&ty[1], &vy[1], PTERUN_DTYPE_F32, 2, s, g_y[1]);
  // GRU: h' = (h - n) z + n, r = s(hr + ir), z = s(hz + iz), n = tanh(in + hn r).
  for (int k = 0; k < 7; ++k) args[k] = &vx[k];
  args[7] = args[8] = &vy[0];
  PT_CHECK_STATUS(pterun_kernel_invoke(gru, "pterun::gru_cell.out", args, 9, &quiet, NULL, 0),
                  PTERUN_STATUS_OK);
  for (int i = 0; i < CELL_N; ++i) {
    double r = sig((double)g_x[3][i] + g_x[0][i]), z = sig((double)g_x[4][i] + g_x[1][i]);
    double n = tanh((double)g_x[2][i] + (double)g_x[5][i] * r);
    PT_CHECK(close_to(g_y[0][i], ((double)g_x[6][i] - n) * z + n));
  }
  // In place over an input (the plan's reuse of a dead input): the same bits.
  memcpy(g_y[2], g_x[0], sizeof g_y[2]);
  pterun_tensor tin = tx[0];
  pterun_value vin = vx[0];
  tin.data = g_y[2];
  vin.u.tensor = &tin;
  args[0] = &vin;
  args[7] = args[8] = &vin;
  PT_CHECK_STATUS(pterun_kernel_invoke(gru, "pterun::gru_cell.out", args, 9, &quiet, NULL, 0),
                  PTERUN_STATUS_OK);
  PT_CHECK(memcmp(g_y[2], g_y[0], sizeof g_y[2]) == 0);
  args[0] = &vx[0];
  // Refused: another element count, another dtype, too few arguments.
  pterun_tensor tb;
  pterun_value vb;
  make_tensor(&tb, &vb, PTERUN_DTYPE_F32, 2, bad, g_x[2]);
  args[2] = &vb;
  args[7] = args[8] = &vy[1];
  PT_CHECK_STATUS(pterun_kernel_invoke(gru, "pterun::gru_cell.out", args, 9, &quiet, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  args[2] = &vx[2];
  tx[5].dtype = PTERUN_DTYPE_I32;
  PT_CHECK(pterun_kernel_invoke(gru, "pterun::gru_cell.out", args, 9, &quiet, NULL, 0) !=
           PTERUN_STATUS_OK);
  tx[5].dtype = PTERUN_DTYPE_F32;
  PT_CHECK_STATUS(pterun_kernel_invoke(gru, "pterun::gru_cell.out", args, 8, &quiet, NULL, 0),
                  PTERUN_STATUS_INVALID_PROGRAM);
  // LSTM: c' = s(f) c + s(i) tanh(g), h' = s(o) tanh(c').
  args[5] = &vy[0];
  args[6] = args[7] = &vy[1];
  PT_CHECK_STATUS(pterun_kernel_invoke(lstm, "pterun::lstm_cell.out", args, 8, &quiet, NULL, 0),
                  PTERUN_STATUS_OK);
  for (int i = 0; i < CELL_N; ++i) {
    double c = sig(g_x[1][i]) * g_x[4][i] + sig(g_x[0][i]) * tanh((double)g_x[2][i]);
    PT_CHECK(close_to(g_y[0][i], c));
    PT_CHECK(close_to(g_y[1][i], sig(g_x[3][i]) * tanh((double)g_y[0][i])));
  }
  // Its two results sharing part of their bytes: refused, nothing written.
  pterun_tensor th;
  pterun_value vh;
  make_tensor(&th, &vh, PTERUN_DTYPE_F32, 2, s, g_y[0] + 1);
  memcpy(g_y[2], g_y[0], sizeof g_y[2]);
  args[6] = args[7] = &vh;
  PT_CHECK_STATUS(pterun_kernel_invoke(lstm, "pterun::lstm_cell.out", args, 8, &quiet, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(memcmp(g_y[2], g_y[0], sizeof g_y[2]) == 0);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(test_rnn_cells);
  PT_RUN(test_every_kernel_rejects_zero_args);
  PT_RUN(test_wrong_kinds);
  PT_RUN(test_static_out_cannot_grow);
  return pt_failures != 0;
}
