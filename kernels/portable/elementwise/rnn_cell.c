/* Recurrent cells: pterun::gru_cell and pterun::lstm_cell, the elementwise
 * part of one step of torch.nn.GRU / nn.LSTM (the matrix products stay
 * addmm calls). The exporter unrolls a recurrent layer into ten (GRU) or
 * nine (LSTM) float32 calls per step on [batch, hidden] tensors; the
 * load-time fusion pass (src/optimize/method_fuse_cell.c) replaces them with
 * one call of these when their intermediates are private. Each element is
 * computed with the same operations in the same order as the unfused calls
 * (sigmoid and tanh by the compute library's vector math, the same functions
 * aten::sigmoid / aten::tanh use; no contraction), so the bits are the same.
 * Elements go tile by tile: every input of a tile is read before any output
 * of it is written, so an output may share its bytes exactly with an input
 * (the memory plan reuses a dead input's bytes); the pass refuses partial
 * overlaps. */
#include "kernels/portable/util.h"
#include "pterun/compute.h"

#define CELL_TILE 256 /* floats per tile: a few KiB of stack */
#define GRU_INPUTS 7
#define LSTM_INPUTS 5

typedef struct cell_job {
  const float* x[GRU_INPUTS];
  float* y[2];
} cell_job;

/* GRU (torch.nn.GRU's equations, in the exported order):
 *   r = sigmoid(hr + ir), z = sigmoid(hz + iz), n = tanh(in + hn * r),
 *   h' = (h - n) * z + n
 * x: ir, iz, in, hr, hz, hn, h. */
static void gru_tile(void* ctx, size_t start, size_t count) {
  const cell_job* j = (const cell_job*)ctx;
  float r[CELL_TILE], z[CELL_TILE], n[CELL_TILE];
  for (size_t at = start; at < start + count; at += CELL_TILE) {
    const size_t len = start + count - at < CELL_TILE ? start + count - at : CELL_TILE;
    const float *ir = j->x[0] + at, *iz = j->x[1] + at, *in = j->x[2] + at;
    const float *hr = j->x[3] + at, *hz = j->x[4] + at, *hn = j->x[5] + at, *h = j->x[6] + at;
    for (size_t k = 0; k < len; ++k) {
      r[k] = hr[k] + ir[k];
      z[k] = hz[k] + iz[k];
    }
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_SIGMOID, r, r, len);
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_SIGMOID, z, z, len);
    for (size_t k = 0; k < len; ++k) n[k] = in[k] + hn[k] * r[k];
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_TANH, n, n, len);
    for (size_t k = 0; k < len; ++k) r[k] = (h[k] - n[k]) * z[k] + n[k];
    memcpy(j->y[0] + at, r, len * sizeof(float)); /* after every read of the tile */
  }
}

/* LSTM: i = sigmoid(gi), f = sigmoid(gf), g = tanh(gg), o = sigmoid(go),
 *   c' = f * c + i * g, h' = o * tanh(c')
 * x: gi, gf, gg, go, c; y: c', h'. */
static void lstm_tile(void* ctx, size_t start, size_t count) {
  const cell_job* j = (const cell_job*)ctx;
  float i[CELL_TILE], f[CELL_TILE], g[CELL_TILE], o[CELL_TILE];
  for (size_t at = start; at < start + count; at += CELL_TILE) {
    const size_t len = start + count - at < CELL_TILE ? start + count - at : CELL_TILE;
    const float* c = j->x[4] + at;
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_SIGMOID, j->x[0] + at, i, len);
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_SIGMOID, j->x[1] + at, f, len);
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_TANH, j->x[2] + at, g, len);
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_SIGMOID, j->x[3] + at, o, len);
    for (size_t k = 0; k < len; ++k) f[k] = f[k] * c[k] + i[k] * g[k]; /* c' */
    pterun_compute_f32_unary(NULL, 1, PTERUN_COMPUTE_TANH, f, g, len);
    for (size_t k = 0; k < len; ++k) o[k] = o[k] * g[k];
    memcpy(j->y[0] + at, f, len * sizeof(float));
    memcpy(j->y[1] + at, o, len * sizeof(float));
  }
}

/* The same sizes once leading 1s are dropped: the same elements in the
 * same order (the exporter broadcasts [B, H] against [1, B, H]). */
static int same_elements(const pterun_tensor* a, const pterun_tensor* b) {
  size_t i = 0, j = 0;
  while (i < a->rank && a->sizes[i] == 1) ++i;
  while (j < b->rank && b->sizes[j] == 1) ++j;
  if (a->rank - i != b->rank - j) return 0;
  for (; i < a->rank; ++i, ++j)
    if (a->sizes[i] != b->sizes[j]) return 0;
  return 1;
}

/* Reads the cell's float32 contiguous tensors: inputs, then outputs, every
 * one with the first one's elements (outputs keep their static shapes). */
static pterun_status cell_args(pterun_kernel_context* ctx, pterun_value** args, size_t inputs,
                               size_t outputs, cell_job* j, size_t* n) {
  static const char* const kName[GRU_INPUTS + 2] = {"x0", "x1", "x2",   "x3",  "x4",
                                                    "x5", "x6", "out0", "out1"};
  pterun_tensor* t0 = NULL;
  for (size_t k = 0; k < inputs + outputs; ++k) {
    const char* name = kName[k < inputs ? k : GRU_INPUTS + k - inputs];
    pterun_tensor* t;
    PTERUN_TRY(pterun_arg_tensor(ctx, args, k, name, &t));
    PTERUN_TRY(pterun_check_dtype(ctx, t, name, PTERUN_DTYPE_F32));
    PTERUN_TRY(pterun_check_contiguous(ctx, t, name));
    if (k == 0)
      t0 = t;
    else if (!same_elements(t, t0))
      return PTERUN_FAIL_ARG(ctx, "arg '%s': its elements are not arg 'x0''s", name);
    if (k < inputs)
      j->x[k] = (const float*)t->data;
    else
      j->y[k - inputs] = (float*)t->data;
  }
  *n = (size_t)t0->numel;
  return PTERUN_STATUS_OK;
}

static void cell_run(pterun_kernel_context* ctx, pterun_task_1d_tile_fn fn, cell_job* j, size_t n) {
  /* a step of a usual layer (a few hundred elements) stays on this thread:
   * waking the pool costs more than the cell */
  pterun_threadpool* pool = n >= 16384 ? pterun_kernel_threadpool(ctx) : NULL;
  uint32_t flags = PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                   PTERUN_PARALLEL_WORK_NS((uint64_t)n * 2);
  pterun_parallelize_1d_tile(pool, fn, j, n, CELL_TILE, flags);
}

/* pterun::gru_cell.out(Tensor ir, Tensor iz, Tensor in, Tensor hr, Tensor hz,
 *   Tensor hn, Tensor h, *, Tensor(a!) out) -> Tensor(a!) */
PTERUN_KERNEL(pk_gru_cell_out) {
  cell_job j = {{0}, {0}};
  size_t n = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, GRU_INPUTS + 2);
  PTERUN_TRY(cell_args(ctx, args, GRU_INPUTS, 1, &j, &n));
  cell_run(ctx, gru_tile, &j, n);
  return PTERUN_STATUS_OK;
}

/* pterun::lstm_cell.out(Tensor gi, Tensor gf, Tensor gg, Tensor go, Tensor c,
 *   *, Tensor(a!) c_out, Tensor(b!) out) -> Tensor(b!) */
PTERUN_KERNEL(pk_lstm_cell_out) {
  cell_job j = {{0}, {0}};
  size_t n = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, LSTM_INPUTS + 3);
  PTERUN_TRY(cell_args(ctx, args, LSTM_INPUTS, 2, &j, &n));
  if (j.y[0] != j.y[1] && (const char*)j.y[0] < (const char*)(j.y[1] + n) &&
      (const char*)j.y[1] < (const char*)(j.y[0] + n))
    return PTERUN_FAIL_ARG(ctx, "args 'out0' and 'out1' share bytes");
  cell_run(ctx, lstm_tile, &j, n);
  return PTERUN_STATUS_OK;
}
