/* The low-bit linear driver (pterun_compute_lowbit_linear): activations
 * quantized per row to int8 (act.c), then for every (row, 8-column tile) the
 * per-group exact integer dot products of a microkernel (manifest
 * lowbit_ukernels.inc) corrected by the zero-point terms, scaled by
 * (weight_scale * activation_scale) and accumulated in float32 in k order,
 * bias added last -- torchao's arithmetic (docs/lowbit.md). Compiled with
 * -ffp-contract=off: no fused multiply-add in the accumulation, as torchao's
 * NEON kernel (vmlaq_f32). Rows and tiles are split over the pool; each
 * output element is computed by the same operations whatever the split. */
#include <inttypes.h>
#include <string.h>

#include "src/compute/lowbit/ukernel.h"
#include "src/compute/used.h"

static const pterun_compute_lowbit_ukernel g_ukernels[] = {
#define PC_LOWBIT_UKERNEL(isa, fn, tile, quant) {(isa), fn, #fn, tile, quant, tile##_many},
#include "src/compute/lowbit/lowbit_ukernels.inc"
#undef PC_LOWBIT_UKERNEL
};
enum { PC_NUK = sizeof g_ukernels / sizeof g_ukernels[0] };

static atomic_uchar g_ran[PC_NUK];
PC_USED_FAMILY(pc_used_lowbit, "lowbit", g_ukernels, g_ran);

const pterun_compute_lowbit_ukernel* pterun_compute_lowbit_ukernels(size_t* count_out) {
  if (count_out != NULL) *count_out = PC_NUK;
  return g_ukernels;
}

const pterun_compute_lowbit_ukernel* pterun_compute_lowbit_select(uint64_t features) {
  const pterun_compute_lowbit_ukernel* best = &g_ukernels[0];
  size_t i;
  for (i = 1; i < PC_NUK; ++i)
    if ((g_ukernels[i].isa & features) == g_ukernels[i].isa) best = &g_ukernels[i];
  return best;
}

static float rdf(const uint8_t* p) {
  float f;
  memcpy(&f, p, 4);
  return f;
}
static int32_t rdi(const uint8_t* p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Quantized activations of a block of rows (row r: qa + r * kpad, sums of
 * each group at asum + r * groups, scale[r], zero[r]). */
typedef struct pc_lowbit_block {
  const pterun_compute_lowbit_weights* w;
  pterun_compute_lowbit_tile_fn tile;
  pterun_compute_lowbit_tiles_fn tiles;
  pterun_compute_lowbit_quant_fn quant;
  const float* x; /* first row of the block */
  /* or, already quantized (pterun_compute_lowbit_linear_qa_ex): codes, scales, zero points */
  const int8_t* xq;
  const float* xs;
  const int32_t* xz;
  int8_t* qa;
  int64_t* asum;
  float* scale;
  int32_t* zero;
  size_t kpad;
  float* y; /* first row of the block */
} pc_lowbit_block;

enum { PC_STACK_K = 4096 };
/* Weight bytes (times rows) below which one thread does the whole product. */
#define PC_LOWBIT_PARALLEL_MIN_BYTES ((uint64_t)64 * 1024)

static size_t round64(size_t v) {
  return (v + 63) & ~(size_t)63;
}

/* Per-row scratch bytes; k < 2^31, so no overflow for any row count the
 * arena could hold (the caller checks the product). */
static size_t row_bytes(const pterun_compute_lowbit_weights* w) {
  return round64((size_t)w->k) + (size_t)(w->k / w->group_size) * sizeof(int64_t) + 8;
}

size_t pterun_compute_lowbit_scratch_bytes(const pterun_compute_lowbit_weights* w, int64_t rows) {
  size_t rb = row_bytes(w);
  if (rows < 1) rows = 1;
  if ((uint64_t)rows > (SIZE_MAX - 64) / rb) return SIZE_MAX;
  return (size_t)rows * rb + 64;
}

static void quantize_rows(void* c, size_t start, size_t count) {
  const pc_lowbit_block* b = (const pc_lowbit_block*)c;
  const int64_t k = b->w->k, gs = b->w->group_size, groups = k / gs;
  size_t r;
  for (r = start; r < start + count; ++r) {
    int8_t* qa = b->qa + r * b->kpad;
    int64_t* asum = b->asum + r * (size_t)groups;
    int64_t g, j;
    if (b->xq == NULL) {
      b->quant(b->x + r * (size_t)k, k, gs, qa, asum, &b->scale[r], &b->zero[r]);
      continue;
    }
    memcpy(qa, b->xq + r * (size_t)k, (size_t)k);
    b->scale[r] = b->xs[r];
    b->zero[r] = b->xz[r];
    for (g = 0; g < groups; ++g) {
      int64_t s = 0;
      for (j = 0; j < gs; ++j) s += qa[g * gs + j];
      asum[g] = s;
    }
  }
}

void pc_lowbit_tile_generic(pterun_compute_lowbit_dot_fn dot,
                            const pterun_compute_lowbit_weights* p, const uint8_t* w,
                            const pterun_compute_lowbit_qrow* row, float out[8]) {
  const int64_t groups = p->k / p->group_size, chunks = p->group_size / 16;
  const float a_scale = row->scale;
  const uint64_t za = (uint64_t)(int64_t)row->zero;
  float res[8] = {0};
  int64_t g;
  int col;
  for (g = 0; g < groups; ++g) {
    int64_t d[8];
    dot(p->nbit, w, row->qa + g * p->group_size, chunks, d);
    w += chunks * 16 * p->nbit;
    for (col = 0; col < 8; ++col) {
      float ws = rdf(w + 4 * col);
      /* exact for real weights; a hostile sum or zero point may wrap
       * (unsigned arithmetic: defined), never trap */
      uint64_t wsum = (uint64_t)(int64_t)rdi(w + 32 + 4 * col);
      uint64_t t = (uint64_t)d[col] - za * wsum;
      if (p->has_zeros) {
        uint64_t wz = (uint64_t)(int64_t)rdi(w + 64 + 4 * col);
        t = t - wz * (uint64_t)row->asum[g] + (uint64_t)p->group_size * wz * za;
      }
      res[col] = res[col] + (ws * a_scale) * (float)(int64_t)t;
    }
    w += 64 + (p->has_zeros ? 32 : 0);
  }
  if (p->has_bias)
    for (col = 0; col < 8; ++col) res[col] = res[col] + rdf(w + 4 * col);
  memcpy(out, res, sizeof res);
}

void pc_lowbit_tiles_each(pterun_compute_lowbit_tile_fn tile,
                          const pterun_compute_lowbit_weights* w, const uint8_t* t,
                          const pterun_compute_lowbit_qrow* row, float* out, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) tile(w, t + i * w->tile_bytes, row, out + 8 * i);
}

/* One 8-column tile for one quantized activation row. */
static void tile_row(const pc_lowbit_block* b, size_t r, int64_t tile) {
  const pterun_compute_lowbit_weights* p = b->w;
  pterun_compute_lowbit_qrow row;
  float res[8];
  int64_t ncols = p->n - tile * 8;
  row.qa = b->qa + r * b->kpad;
  row.asum = b->asum + r * (size_t)(p->k / p->group_size);
  row.scale = b->scale[r];
  row.zero = b->zero[r];
  b->tile(p, p->tiles + (uint64_t)tile * p->tile_bytes, &row, res);
  if (ncols > 8) ncols = 8;
  memcpy(b->y + r * (size_t)p->n + tile * 8, res, (size_t)ncols * sizeof(float));
}

/* Tiles outer, rows inner: a tile's weights are read once per block of rows.
 * One row (decode): the row's description is made once and whole tiles are
 * written straight into y (no staging copy per tile); the same tile calls
 * either way, so the same bits. */
static void tiles_task(void* c, size_t i, size_t j, size_t ni, size_t nj) {
  const pc_lowbit_block* b = (const pc_lowbit_block*)c;
  size_t t, r;
  if (ni == 1) {
    const pterun_compute_lowbit_weights* p = b->w;
    const size_t full = (size_t)(p->n / 8), end = j + nj < full ? j + nj : full;
    pterun_compute_lowbit_qrow row;
    row.qa = b->qa + i * b->kpad;
    row.asum = b->asum + i * (size_t)(p->k / p->group_size);
    row.scale = b->scale[i];
    row.zero = b->zero[i];
    if (end > j)
      b->tiles(p, p->tiles + (uint64_t)j * p->tile_bytes, &row, b->y + i * (size_t)p->n + j * 8,
               end - j);
    for (t = end > j ? end : j; t < j + nj; ++t) tile_row(b, i, (int64_t)t); /* partial tile */
    return;
  }
  for (t = j; t < j + nj; ++t)
    for (r = i; r < i + ni; ++r) tile_row(b, r, (int64_t)t);
}

/* x (float rows to quantize) or xq / xs / xz (quantized rows). */
static pterun_status linear_rows(pterun_kernel_context* ctx, const pterun_compute_lowbit_weights* w,
                                 const float* x, const int8_t* xq, const float* xs,
                                 const int32_t* xz, int64_t m, float* y,
                                 const pterun_compute_lowbit_ukernel* uk, pterun_threadpool* pool,
                                 size_t max_threads) {
  const size_t tiles = (size_t)((w->n + 7) / 8), rb = row_bytes(w);
  const uint32_t flags = PTERUN_PARALLEL_MAX_THREADS(max_threads);
  size_t threads = pterun_threadpool_size(pool), rows = (size_t)m, tile_j, done;
  unsigned char* buf = NULL;
  PTERUN_COMPUTE_ALIGN64 int8_t qa_stack[PC_STACK_K];
  int64_t asum_stack[PC_STACK_K / 16];
  float scale_stack[1];
  int32_t zero_stack[1];
  pc_lowbit_block b;
  if (m <= 0) return PTERUN_STATUS_OK;
  if (max_threads != 0 && threads > max_threads) threads = max_threads;
  /* Too little work to pay for waking the pool: the calling thread alone
   * (the same bits either way). */
  if ((uint64_t)m * tiles * w->tile_bytes < PC_LOWBIT_PARALLEL_MIN_BYTES) {
    pool = NULL;
    threads = 1;
  }
  /* The largest block of rows the scratch arena holds (halving from m). */
  if (ctx != NULL)
    for (; rows >= 1; rows /= 2) {
      if (rows <= (SIZE_MAX - 64) / rb &&
          (buf = (unsigned char*)pterun_kernel_scratch(ctx, rows * rb, 64)) != NULL)
        break;
    }
  b.w = w;
  b.x = x;
  b.xq = xq;
  b.xs = xs;
  b.xz = xz;
  if (uk == NULL) uk = pterun_compute_lowbit_select(pterun_cpu_features());
  if (uk >= g_ukernels && uk < g_ukernels + PC_NUK) pc_used_mark(g_ran, (size_t)(uk - g_ukernels));
  b.tile = uk->tile;
  b.tiles = uk->tiles;
  b.quant = uk->quant;
  b.kpad = round64((size_t)w->k);
  if (buf != NULL) {
    b.qa = (int8_t*)buf;
    b.asum = (int64_t*)(buf + rows * b.kpad);
    b.scale = (float*)(b.asum + rows * (size_t)(w->k / w->group_size));
    b.zero = (int32_t*)(b.scale + rows);
  } else {
    /* no (or too little) scratch: a stack row serves up to PC_STACK_K */
    if (w->k > PC_STACK_K) {
      if (ctx != NULL)
        return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                  "no kernel scratch for %" PRId64 " quantized activations", w->k);
      return PTERUN_STATUS_OUT_OF_MEMORY;
    }
    if (ctx != NULL) pterun_kernel_note_slow_path(ctx, "lowbit linear: no scratch, stack row");
    rows = 1;
    b.qa = qa_stack;
    b.asum = asum_stack;
    b.scale = scale_stack;
    b.zero = zero_stack;
  }
  /* Enough column tasks for every thread to take several (dynamic
   * distribution evens out a shared machine); at least 4 tiles each. */
  tile_j = tiles / (threads * 4);
  if (tile_j < 4) tile_j = 4;
  for (done = 0; done < (size_t)m; done += rows) {
    size_t nr = (size_t)m - done < rows ? (size_t)m - done : rows;
    if (xq != NULL) {
      b.xq = xq + done * (size_t)w->k;
      b.xs = xs + done;
      b.xz = xz + done;
    } else {
      b.x = x + done * (size_t)w->k;
    }
    b.y = y + done * (size_t)w->n;
    pterun_parallelize_1d_tile(pool, quantize_rows, &b, nr, 1, flags);
    pterun_parallelize_2d_tile(pool, tiles_task, &b, nr, tiles, 8, tile_j, flags);
  }
  return PTERUN_STATUS_OK;
}

pterun_status pterun_compute_lowbit_linear_ex(pterun_kernel_context* ctx,
                                              const pterun_compute_lowbit_weights* w,
                                              const float* x, int64_t m, float* y,
                                              const pterun_compute_lowbit_ukernel* uk,
                                              pterun_threadpool* pool, size_t max_threads) {
  return linear_rows(ctx, w, x, NULL, NULL, NULL, m, y, uk, pool, max_threads);
}

pterun_status pterun_compute_lowbit_linear_qa_ex(pterun_kernel_context* ctx,
                                                 const pterun_compute_lowbit_weights* w,
                                                 const int8_t* qa, const float* a_scale,
                                                 const int32_t* a_zero, int64_t m, float* y,
                                                 const pterun_compute_lowbit_ukernel* uk,
                                                 pterun_threadpool* pool, size_t max_threads) {
  return linear_rows(ctx, w, NULL, qa, a_scale, a_zero, m, y, uk, pool, max_threads);
}

pterun_status pterun_compute_lowbit_linear(pterun_kernel_context* ctx,
                                           const pterun_compute_lowbit_weights* w, const float* x,
                                           int64_t m, float* y) {
  return pterun_compute_lowbit_linear_ex(ctx, w, x, m, y, NULL,
                                         ctx != NULL ? pterun_kernel_threadpool(ctx) : NULL,
                                         ctx != NULL ? pterun_kernel_max_threads(ctx) : 0);
}
