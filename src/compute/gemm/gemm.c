/* The blocked matrix product of libpterun_compute (pterun/compute.h).
 *
 * float32 (and f16/bf16, converted while packing) runs the BLIS loop nest
 * around a run-time selected SIMD microkernel (ukernel.h, manifest
 * f32_ukernels.inc):
 *
 *   for jc in N step NC            B block KC x NC packed once per (jc, pc)
 *     for pc in K step KC              (L3, or L2 in the stack fallback)
 *       pack B[pc.., jc..] into NR-wide strips
 *       for ic in M step MC        A block MC x KC, packed in MR-row panels
 *         pack A[ic.., pc..]           (L2); skipped when A is f32 with unit
 *                                      column stride: the microkernel then
 *                                      reads A's rows in place
 *         for jr in NC step NR     one B strip KC x NR stays in L1 ...
 *           for ir in MC step MR   ... while A panels stream from L2
 *             microkernel MR x NR
 *
 * Full tiles of an f32 C with unit column stride are written in place; edge
 * tiles and other C layouts/dtypes go through a small tile buffer, so no
 * microkernel ever reads or writes outside the matrices.
 *
 * Threads: for each (jc, pc) step the B block is packed by strips in parallel,
 * then the C tiles (one MC block of rows x a run of B strips) are tasks on the
 * pool (with a single MC block each tile task packs its own strips instead,
 * one parallel call per step; a caller may supply B's packer,
 * pterun_compute_gemm_opts.pack_b: a convolution's implicit im2col); a task
 * packing A takes one of the spare A blocks reserved after the buffer. With B
 * packed at load there is no step per K block: one parallel call per jc runs
 * each tile over every K block in order (a strided A is first packed whole
 * into the unused B block). The blocking depends only on the single-thread
 * buffer, so results are bit-identical for any thread count, packed operands
 * or not.
 *
 * float64 keeps the portable engine (4 x 16 tile in double); integer dtypes
 * use an exact int64 triple loop.
 *
 * Files: engine_f32.c (the float32 engine), engine_f64.c (float64 and
 * integers), packed.c (operands packed at load), this file (the workspace
 * and the entry points that pick an engine); gemm_internal.h. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "src/compute/gemm/gemm_internal.h"

void pterun_compute_gemm_init_ex(pterun_kernel_context* ctx, pterun_compute_gemm_ws* ws,
                                 int32_t dtype, const pc_f32_gemm_ukernel* uk,
                                 pterun_threadpool* pool, size_t max_threads) {
  ws->dbl = dtype == PTERUN_DTYPE_F64;
  ws->pool = pool;
  ws->max_threads = max_threads;
  ws->a_slots = 0;
  if (uk != NULL) {
    ws->uk = uk; /* used for every M */
    ws->uk_m1 = NULL;
  } else {
    uint64_t features = pterun_cpu_features();
    ws->uk = pterun_compute_f32_gemm_select(features);
    ws->uk_m1 = pterun_compute_f32_gemm_select_m1(features);
  }
  ws->kc = NN_KC_BIG;
  ws->nc = NN_NC_BIG;
  ws->buf = NULL;
  if (ws->dbl) {
    ws->cap = (size_t)(NN_KC_BIG * NN_NC_BIG + NN_KC_BIG * NN_MR) * sizeof(double);
    ws->buf = pterun_kernel_scratch(ctx, ws->cap, 64);
  } else {
    /* A wide B block, then a medium one (gemm_f32 shrinks the blocks to the
     * buffer it gets); each first with one spare A block per extra thread
     * after it, then without (a packed A then runs one task at a time). The
     * blocking depends on `cap` only, never on the spare blocks. */
    const size_t kc = (size_t)ws->uk->kc, mc = (size_t)ws->uk->mc;
    size_t spare = pool != NULL ? pterun_threadpool_size(pool) - 1 : 0;
    if (max_threads != 0 && spare > max_threads - 1) spare = max_threads - 1;
    if (spare > 31) spare = 31;
    static const size_t ncs[2] = {PC_F32_NC_BIG, PC_F32_NC_MID};
    for (int t = 0; t < 4 && ws->buf == NULL; ++t) {
      size_t extra = t % 2 == 0 ? spare : 0;
      if (t % 2 == 0 && spare == 0) continue;
      ws->cap = (kc * ncs[t / 2] + mc * kc) * sizeof(float);
      ws->buf = pterun_kernel_scratch(ctx, ws->cap + extra * mc * kc * sizeof(float), 64);
      if (ws->buf != NULL) ws->a_slots = extra;
    }
  }
  if (ws->buf == NULL && !ws->dbl) {
    /* An arena sized from the method's reservations
     * (pterun_compute_gemm_reserve): what is left of it holds the blocks of
     * the products this call reserved for, so they keep their full blocking
     * (gemm_f32 shrinks blocks only when they do not fit). */
    size_t avail = pterun_kernel_scratch_available(ctx, 64);
    const size_t kc = (size_t)ws->uk->kc, mc = (size_t)ws->uk->mc;
    const size_t full = (kc * PC_F32_NC_BIG + mc * kc) * sizeof(float);
    if (avail > full) avail = full;
    if (avail > PTERUN_COMPUTE_GEMM_LOCAL_BYTES) {
      ws->cap = avail;
      ws->buf = pterun_kernel_scratch(ctx, avail, 64);
    }
  }
  if (ws->buf == NULL) {
    /* No arena: smaller blocks in the inline buffer. */
    if (pterun_dtype_is_float(dtype))
      pterun_kernel_note_slow_path(ctx, "no scratch: small GEMM blocks");
    _Static_assert(
        PTERUN_COMPUTE_GEMM_LOCAL_BYTES >= (NN_KC_SMALL * NN_NC_SMALL + NN_KC_SMALL * NN_MR) * 8,
        "local gemm buffer too small for the f64 engine");
    ws->buf = ws->local;
    ws->cap = PTERUN_COMPUTE_GEMM_LOCAL_BYTES;
    ws->kc = NN_KC_SMALL;
    ws->nc = NN_NC_SMALL;
  }
}

/* Floats the f32 engine's blocks take for an M x N x K product with `uk`
 * (gemm_f32's starting blocks: a B block and an A block, or the whole A that
 * several threads pack once), at most what init asks for. */
static size_t f32_need(const pc_f32_gemm_ukernel* uk, int64_t m, int64_t n, int64_t k,
                       size_t threads) {
  const int64_t kc = uk->kc, mc = min64(uk->mc, round_up(m, uk->mr));
  const int64_t nc = min64(PC_F32_NC_BIG, round_up(n, uk->nr));
  const int64_t full = kc * PC_F32_NC_BIG + (int64_t)uk->mc * kc;
  int64_t need = kc * nc + mc * kc;
  if (threads > 1 && m > 2 * uk->mr && round_up(m, uk->mr) * k > need)
    need = round_up(m, uk->mr) * k;
  return (size_t)(need < full ? need : full);
}

size_t pterun_compute_gemm_scratch_bytes(int32_t dtype, int64_t m, int64_t n, int64_t k,
                                         size_t threads) {
  if (!pterun_dtype_is_float(dtype) || m <= 0 || n <= 0 || k <= 0) return 0;
  if (dtype == PTERUN_DTYPE_F64)
    return (size_t)(NN_KC_BIG * NN_NC_BIG + NN_KC_BIG * NN_MR) * sizeof(double);
  const uint64_t features = pterun_cpu_features();
  const pc_f32_gemm_ukernel* uk = pterun_compute_f32_gemm_select(features);
  const pc_f32_gemm_ukernel* uk1 = pterun_compute_f32_gemm_select_m1(features);
  size_t need = f32_need(uk, m, n, k, threads);
  /* M = 1 runs the row kernel on a buffer init sized for the main one (a
   * dynamic M may come down to 1 at execute) */
  if (uk1 != NULL && f32_need(uk1, 1, n, k, threads) > need) need = f32_need(uk1, 1, n, k, threads);
  /* more than the inline buffer, or init would take that instead */
  if (need * sizeof(float) <= PTERUN_COMPUTE_GEMM_LOCAL_BYTES)
    need = PTERUN_COMPUTE_GEMM_LOCAL_BYTES / sizeof(float) + 16;
  return need * sizeof(float);
}

void pterun_compute_gemm_reserve(pterun_kernel_context* ctx, int32_t dtype, int64_t m, int64_t n,
                                 int64_t k) {
  pterun_threadpool* pool = pterun_kernel_threadpool(ctx);
  size_t threads = pool != NULL ? pterun_threadpool_size(pool) : 1;
  size_t mt = pterun_kernel_max_threads(ctx);
  if (mt != 0 && mt < threads) threads = mt;
  pterun_kernel_scratch_reserve(ctx, pterun_compute_gemm_scratch_bytes(dtype, m, n, k, threads));
}

void pterun_compute_gemm_init(pterun_kernel_context* ctx, pterun_compute_gemm_ws* ws,
                              int32_t dtype) {
  pterun_compute_gemm_init_ex(ctx, ws, dtype, NULL, pterun_kernel_threadpool(ctx),
                              pterun_kernel_max_threads(ctx));
}

/* The fused activation on the whole of C (engines without a tile epilogue). */
static void act_all(const pterun_compute_matrix* c, int64_t m, int64_t n, const pc_gemm_x* x) {
  if (x->bias != NULL) pc_bias_tile(c, 0, 0, m, n, x->bias);
  if (x->act && pterun_dtype_is_float(c->dtype)) pc_act_tile(c, 0, 0, m, n, x->act, x->lo, x->hi);
}

int pterun_compute_gemm_ex(pterun_compute_gemm_ws* ws, int64_t m, int64_t n, int64_t k,
                           const pterun_compute_matrix* a, const pterun_compute_matrix* b,
                           const pterun_compute_matrix* c, double alpha, int accumulate,
                           const pterun_compute_gemm_opts* opts) {
  pterun_compute_gemm_opts own;
  const pterun_compute_gemm_opts* o = NULL;
  pc_gemm_x x;
  memset(&x, 0, sizeof x);
  if (opts != NULL) {
    /* The caller's opts as this build's struct, read by struct_size: missing
     * fields zero, unknown ones (a newer caller) must be zero. */
    if (pterun_options_copy(opts, &own, sizeof own) != 0) return -1;
    o = &own;
  }
  if (o != NULL) {
    x.act = o->activation == PTERUN_COMPUTE_ACT_RELU || o->activation == PTERUN_COMPUTE_ACT_CLAMP
                ? o->activation
                : PTERUN_COMPUTE_ACT_NONE;
    x.lo = o->lo;
    x.hi = o->hi;
    x.bias = o->bias;
    x.k0 = o->k0;
    x.pack_b = o->pack_b;
    x.pack_b_ctx = o->pack_b_ctx;
    if (o->b_row_base != NULL && o->b_row_offsets != NULL) {
      x.b_row_base = o->b_row_base;
      x.b_rows = o->b_row_offsets;
    }
  }
  if (m == 0 || n == 0) return 0;
  if (k == 0) {
    /* Empty sum: C = 0 (or unchanged when accumulating). */
    int64_t i, j;
    if (!accumulate)
      for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j) pterun_store_i64(c->data, c->dtype, i * c->rs + j * c->cs, 0);
    act_all(c, m, n, &x);
    return 0;
  }
  if (!pterun_dtype_is_float(c->dtype)) {
    pc_gemm_int(m, n, k, a, b, c, (int64_t)alpha, accumulate);
    act_all(c, m, n, &x); /* the bias */
  } else if (ws->dbl) {
    double* bp = (double*)ws->buf;
    pc_gemm_f64(m, n, k, a, b, c, alpha, accumulate, bp, bp + ws->kc * ws->nc, ws->kc, ws->nc);
    act_all(c, m, n, &x);
  } else {
    if (o != NULL) {
      const pc_f32_gemm_ukernel* uk = pc_f32_ukernel_for(ws, m, n);
      x.pa = pc_packed_fits(o->packed_a, PTERUN_COMPUTE_OPERAND_A, uk, m, k, x.k0);
      /* M = 1 streams the GEMM kernel's packed B two strips at a time
       * (ukernel.h), with the same K blocks as its unpacked products. */
      const pc_f32_gemm_ukernel* pb_uk =
          uk != ws->uk && uk->nr == 2 * ws->uk->nr && uk->kc == ws->uk->kc ? ws->uk : uk;
      x.pb = pc_packed_fits(o->packed_b, PTERUN_COMPUTE_OPERAND_B, pb_uk, n, k, x.k0);
      if (x.pa != NULL && x.pb != NULL && x.pa->kc != x.pb->kc) x.pa = NULL;
    }
    pc_gemm_f32(ws, m, n, k, a, b, c, (float)alpha, accumulate, &x);
  }
  return 0;
}

void pterun_compute_gemm(pterun_compute_gemm_ws* ws, int64_t m, int64_t n, int64_t k,
                         const pterun_compute_matrix* a, const pterun_compute_matrix* b,
                         const pterun_compute_matrix* c, double alpha, int accumulate) {
  (void)pterun_compute_gemm_ex(ws, m, n, k, a, b, c, alpha, accumulate, NULL);
}
