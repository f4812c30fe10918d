/* The float32 GEMM engine (BLIS loop nest around a run-time selected SIMD
 * microkernel; gemm.c's comment has the loop nest and the threading): the
 * microkernel tables and selection, A/B packing, tiles and their epilogue,
 * and the pool tasks. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "src/compute/gemm/gemm_internal.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"

/* ---- float32 engine ---------------------------------------------------- */

#define PC_F32_MR_MAX 16
#define PC_F32_NR_MAX 64
#define PC_F32_DIRECT_B_FLOATS (64.0 * 1024) /* 256 KiB */

static const pc_f32_gemm_ukernel g_ukernels[] = {
#define PC_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc) {(isa), fn, #fn, (mr), (nr), (kc), (mc)},
#include "src/compute/gemm/f32_ukernels.inc"
#undef PC_GEMM_UKERNEL
};

static atomic_uchar g_ukernels_ran[sizeof g_ukernels / sizeof g_ukernels[0]];
PC_USED_FAMILY(pc_used_f32_gemm, "f32_gemm", g_ukernels, g_ukernels_ran);

/* The epilogue variants, in the table's order. */
static const pc_f32_gemm_ep_fn g_ukernels_ep[] = {
#define PC_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc) fn##_ep,
#include "src/compute/gemm/f32_ukernels.inc"
#undef PC_GEMM_UKERNEL
};

/* uk's epilogue variant, or NULL for a descriptor not from the table. */
static pc_f32_gemm_ep_fn ukernel_ep(const pc_f32_gemm_ukernel* uk) {
  for (size_t i = 0; i < sizeof g_ukernels / sizeof g_ukernels[0]; ++i)
    if (uk == &g_ukernels[i]) return g_ukernels_ep[i];
  return NULL;
}

#define PC_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc)                                                   \
  _Static_assert((mr) <= PC_F32_MR_MAX && (nr) <= PC_F32_NR_MAX, #fn " tile");                     \
  _Static_assert((mc) % (mr) == 0 && (kc) >= 16, #fn " blocks");
#include "src/compute/gemm/f32_ukernels.inc"
#undef PC_GEMM_UKERNEL

/* The kernel for uk's last rows of M: the table row with uk's ISA bits and NR
 * and the most rows below uk's (at least 2), or NULL. */
const pc_f32_gemm_ukernel* pc_f32_tail_ukernel(const pc_f32_gemm_ukernel* uk) {
  const pc_f32_gemm_ukernel* best = NULL;
  if (ukernel_ep(uk) == NULL) return NULL;
  for (size_t i = 0; i < sizeof g_ukernels / sizeof g_ukernels[0]; ++i) {
    const pc_f32_gemm_ukernel* t = &g_ukernels[i];
    if (t->isa == uk->isa && t->nr == uk->nr && t->mr >= 2 && t->mr < uk->mr &&
        (best == NULL || t->mr > best->mr))
      best = t;
  }
  return best;
}

const pc_f32_gemm_ukernel* pterun_compute_f32_gemm_ukernels(size_t* count_out) {
  if (count_out != NULL) *count_out = sizeof g_ukernels / sizeof g_ukernels[0];
  return g_ukernels;
}

static const pc_f32_gemm_ukernel* select_ukernel(uint64_t features, int single_row) {
  size_t i = sizeof g_ukernels / sizeof g_ukernels[0];
  while (i-- > 0)
    if ((g_ukernels[i].isa & features) == g_ukernels[i].isa &&
        (g_ukernels[i].mr == 1) == single_row)
      return &g_ukernels[i];
  return NULL;
}

const pc_f32_gemm_ukernel* pterun_compute_f32_gemm_select(uint64_t features) {
  const pc_f32_gemm_ukernel* uk = select_ukernel(features, 0);
  return uk != NULL ? uk : &g_ukernels[0];
}

const pc_f32_gemm_ukernel* pterun_compute_f32_gemm_select_m1(uint64_t features) {
  return select_ukernel(features, 1);
}

static int64_t round_down_min(int64_t x, int64_t q) {
  return x < q ? q : x / q * q;
}

/* dst[0, w) = src[0, w), dst[w, nr) = 0: one row of a partial strip. */
static inline void copy_pad_row(float* dst, const float* src, int64_t w, int64_t nr) {
  memcpy(dst, src, sizeof(float) * (size_t)w);
  memset(dst + w, 0, sizeof(float) * (size_t)(nr - w));
}

/* Packs B[k0.., j0..] (kc x nc) into strips of nr columns: strip s holds kc
 * rows of exactly nr floats, zero padded past column nc. */
void pc_pack_b_f32(float* bp, const pterun_compute_matrix* b, int64_t k0, int64_t kc, int64_t j0,
                   int64_t nc, int64_t nr) {
  int64_t js, kk, cc;
  for (js = 0; js < nc; js += nr, bp += kc * nr) {
    int64_t w = min64(nr, nc - js);
    int64_t base = k0 * b->rs + (j0 + js) * b->cs;
    if (b->dtype == PTERUN_DTYPE_F32 && b->cs == 1 && w == nr) {
      const float* src = (const float*)b->data + base;
      /* One line per row, rows KiBs apart: fetch a few rows ahead. */
      for (kk = 0; kk < kc; ++kk) {
        PC_PREFETCH_R(src + (kk + 8) * b->rs);
        memcpy(bp + kk * nr, src + kk * b->rs, sizeof(float) * (size_t)nr);
      }
      continue;
    }
    if (b->dtype == PTERUN_DTYPE_F32 && b->cs == 1) { /* the partial last strip of rows */
      const float* src = (const float*)b->data + base;
      for (kk = 0; kk < kc; ++kk) copy_pad_row(bp + kk * nr, src + kk * b->rs, w, nr);
      continue;
    }
    if (b->dtype == PTERUN_DTYPE_F32 && b->rs == 1) {
      const float* src = (const float*)b->data + base;
      for (cc = 0; cc < w; ++cc)
        for (kk = 0; kk < kc; ++kk) bp[kk * nr + cc] = src[cc * b->cs + kk];
    } else {
      for (kk = 0; kk < kc; ++kk)
        for (cc = 0; cc < w; ++cc)
          bp[kk * nr + cc] = pterun_load_f32(b->data, b->dtype, base + kk * b->rs + cc * b->cs);
    }
    if (w < nr)
      for (kk = 0; kk < kc; ++kk)
        for (cc = w; cc < nr; ++cc) bp[kk * nr + cc] = 0.0f;
  }
}

/* Packs A[i0.., k0..] (mc x kc) into panels of mr rows: panel p holds kc
 * columns of exactly mr floats, zero padded past row mc. */
void pc_pack_a_f32(float* ap, const pterun_compute_matrix* a, int64_t i0, int64_t mc, int64_t k0,
                   int64_t kc, int64_t mr) {
  int64_t ip, kk, r;
  for (ip = 0; ip < mc; ip += mr, ap += kc * mr) {
    int64_t h = min64(mr, mc - ip);
    int64_t base = (i0 + ip) * a->rs + k0 * a->cs;
    if (a->dtype == PTERUN_DTYPE_F32 && a->rs == 1 && h == mr) {
      const float* src = (const float*)a->data + base;
      for (kk = 0; kk < kc; ++kk)
        memcpy(ap + kk * mr, src + kk * a->cs, sizeof(float) * (size_t)mr);
      continue;
    }
    if (a->dtype == PTERUN_DTYPE_F32 && a->cs == 1) {
      const float* src = (const float*)a->data + base;
      /* Rows far apart (a row stride of KiBs) come from L3 or memory one
       * short stream each: fetch the next panel's rows while this one is
       * transposed (the copy stalled on every line otherwise). */
      for (r = 0; ip + mr < mc && r < min64(mr, mc - ip - mr); ++r)
        for (kk = 0; kk < kc; kk += 16) PC_PREFETCH_R(src + (mr + r) * a->rs + kk);
      for (r = 0; r < h; ++r)
        for (kk = 0; kk < kc; ++kk) ap[kk * mr + r] = src[r * a->rs + kk];
    } else {
      for (kk = 0; kk < kc; ++kk)
        for (r = 0; r < h; ++r)
          ap[kk * mr + r] = pterun_load_f32(a->data, a->dtype, base + r * a->rs + kk * a->cs);
    }
    if (h < mr)
      for (kk = 0; kk < kc; ++kk)
        for (r = h; r < mr; ++r) ap[kk * mr + r] = 0.0f;
  }
}

/* C[i0.., j0..] (h x w) = tile (+ C when add), any C dtype and strides. */
static void store_tile_f32(const pterun_compute_matrix* c, int64_t i0, int64_t j0, int64_t h,
                           int64_t w, const float* tile, int64_t ld, int add) {
  int64_t r, cc;
  for (r = 0; r < h; ++r) {
    int64_t row = (i0 + r) * c->rs + j0 * c->cs;
    const float* t = tile + r * ld;
    if (c->dtype == PTERUN_DTYPE_F32) {
      float* cp = (float*)c->data + row;
      if (add && c->cs == 1) /* unit stride apart: the loops vectorise */
        for (cc = 0; cc < w; ++cc) cp[cc] += t[cc];
      else if (c->cs == 1)
        memcpy(cp, t, sizeof(float) * (size_t)w);
      else if (add)
        for (cc = 0; cc < w; ++cc) cp[cc * c->cs] += t[cc];
      else
        for (cc = 0; cc < w; ++cc) cp[cc * c->cs] = t[cc];
      continue;
    }
    for (cc = 0; cc < w; ++cc) {
      int64_t off = row + cc * c->cs;
      pterun_store_f32(c->data, c->dtype, off,
                       add ? pterun_load_f32(c->data, c->dtype, off) + t[cc] : t[cc]);
    }
  }
}

/* The fused activation on C[i0.., j0..] (h x w), with the elementwise
 * kernels' exact semantics (so fused and unfused results are identical):
 * relu is v < 0 ? +0 : v (NaN and -0 stay, as aten::relu and ExecuTorch's
 * relu: so it is also the clamp to [0, inf], which fused kernels use); clamp
 * is min(max(x, lo), hi) written as comparisons, NaN stays NaN. */
static inline float act_f32(int act, float v, float lo, float hi) {
  if (act == PTERUN_COMPUTE_ACT_RELU) return v < 0 ? 0.0f : v;
  float t = v < lo ? lo : v;
  return hi < t ? hi : t;
}

void pterun_compute_f32_activate(float* x, size_t n, int activation, float lo, float hi) {
  if (x == NULL ||
      (activation != PTERUN_COMPUTE_ACT_RELU && activation != PTERUN_COMPUTE_ACT_CLAMP))
    return;
  /* One loop per activation: with it fixed the loops vectorise (a run-time
   * choice inside the loop kept it scalar, ~11 instructions an element). */
  if (activation == PTERUN_COMPUTE_ACT_RELU)
    for (size_t i = 0; i < n; ++i) x[i] = act_f32(PTERUN_COMPUTE_ACT_RELU, x[i], lo, hi);
  else
    for (size_t i = 0; i < n; ++i) x[i] = act_f32(PTERUN_COMPUTE_ACT_CLAMP, x[i], lo, hi);
}

void pc_act_tile(const pterun_compute_matrix* c, int64_t i0, int64_t j0, int64_t h, int64_t w,
                 int act, float lo, float hi) {
  for (int64_t r = 0; r < h; ++r) {
    int64_t row = (i0 + r) * c->rs + j0 * c->cs;
    if (c->dtype == PTERUN_DTYPE_F32) {
      float* cp = (float*)c->data + row;
      /* Unit stride with the activation fixed per loop: the loops vectorise. */
      if (c->cs == 1 && act == PTERUN_COMPUTE_ACT_CLAMP)
        for (int64_t cc = 0; cc < w; ++cc)
          cp[cc] = act_f32(PTERUN_COMPUTE_ACT_CLAMP, cp[cc], lo, hi);
      else if (c->cs == 1)
        for (int64_t cc = 0; cc < w; ++cc)
          cp[cc] = act_f32(PTERUN_COMPUTE_ACT_RELU, cp[cc], lo, hi);
      else
        for (int64_t cc = 0; cc < w; ++cc) cp[cc * c->cs] = act_f32(act, cp[cc * c->cs], lo, hi);
      continue;
    }
    for (int64_t cc = 0; cc < w; ++cc) {
      int64_t off = row + cc * c->cs;
      double v = pterun_load_f64(c->data, c->dtype, off);
      double t = act == PTERUN_COMPUTE_ACT_RELU ? (v < 0 ? 0.0 : v) : v < lo ? lo : v;
      if (act != PTERUN_COMPUTE_ACT_RELU && hi < t) t = hi;
      pterun_store_f64(c->data, c->dtype, off, t);
    }
  }
}

/* C[i0 + r][j0..] += bias[i0 + r] on an h x w tile: the product's first K
 * block stored without accumulating, so each element rounds once, as adding
 * the product to a C filled with the bias does. */
void pc_bias_tile(const pterun_compute_matrix* c, int64_t i0, int64_t j0, int64_t h, int64_t w,
                  const float* bias) {
  for (int64_t r = 0; r < h; ++r) {
    int64_t row = (i0 + r) * c->rs + j0 * c->cs;
    const float b = bias[i0 + r];
    if (c->dtype == PTERUN_DTYPE_F32 && c->cs == 1) {
      float* cp = (float*)c->data + row;
      for (int64_t cc = 0; cc < w; ++cc) cp[cc] += b;
      continue;
    }
    for (int64_t cc = 0; cc < w; ++cc) {
      int64_t off = row + cc * c->cs;
      pterun_store_f64(c->data, c->dtype, off, pterun_load_f64(c->data, c->dtype, off) + b);
    }
  }
}

/* One K block of a step: where its operands are and what its tiles do. */
typedef struct pc_f32_kblock {
  int64_t pc, kcb;
  int add;           /* accumulate into C (the caller's C, or earlier K blocks) */
  int act;           /* the activation, on the last K block only */
  const float* bias; /* the first K block only */
  const float* pa;   /* pre-packed A panels of this K block (NULL: none) */
  const float* bp;   /* the packed B block of this K block */
} pc_f32_kblock;

/* One (jc, pc) step of the f32 engine, shared by its tasks. Each task owns a
 * tile of C: one M block (MC rows) times a run of NR-wide B strips, so tasks
 * write disjoint C and every element sees the same operations in the same
 * order whatever the thread count (bit-identical results). */
typedef struct pc_f32_step {
  const pc_f32_gemm_ukernel* uk;
  pc_f32_gemm_ep_fn uk_ep;         /* uk with the epilogue in registers, or NULL */
  const pc_f32_gemm_ukernel* tail; /* for the last rows of M (tail_ukernel), or NULL */
  pc_f32_gemm_ep_fn tail_ep;
  const pterun_compute_matrix *a, *b, *c;
  float alpha;
  int accumulate; /* into the caller's C */
  int direct_a, direct_b, direct_c;
  int pack_b_in_task; /* one M block: each tile task packs the B strips it alone uses */
  int64_t m, mc, jc, ncb, k, kc;
  int act; /* fused activation on the final C (PTERUN_COMPUTE_ACT_*) */
  float lo, hi;
  const float* bias; /* per-row bias, added with the first K block, or NULL */
  /* Packed operands (NULL: none), K x pad floats from K index pa_k0 / k0:
   * B packed at load, A packed at load or by whole_a (pc_gemm_f32). */
  const float *pa_data, *pb_data;
  int64_t pa_pad, pb_pad, pa_k0, k0;
  int64_t pb_sw;                   /* strip width of the packed B (< uk's NR for M = 1), or 0 */
  int bp_all_k;                    /* bp holds the partial strip of every K block, [K][NR] */
  pc_f32_kblock kb;                /* the current K block (one step per K block) */
  pterun_compute_pack_b_fn pack_b; /* the caller's B packer, or NULL */
  void* pack_b_ctx;
  const float* b_row_base; /* with direct_b: B's rows in place (pc_gemm_x), or NULL */
  const int64_t* b_rows;
  float* bp;    /* packed B block; with direct_b, the packed partial strip */
  float* slot0; /* A block of the first slot */
  float* slots; /* further A blocks, slot_floats apart */
  size_t slot_floats;
  size_t nslots;              /* A blocks, >= the tasks running at once */
  atomic_uint_least32_t busy; /* slot k taken: bit k (32-bit: lock-free on every target) */
} pc_f32_step;

/* The partial last strip (columns [j0, j0 + w), w < nr) of B rows [k0, k0 +
 * kc), zero padded, for a product that reads the full strips of B in place:
 * from B's rows by offset (st->b_rows) or from the matrix st->b. */
static void pack_last_strip(float* bp, const pc_f32_step* st, int64_t k0, int64_t kc, int64_t j0,
                            int64_t w, int64_t nr) {
  if (st->b_rows == NULL) {
    pc_pack_b_f32(bp, st->b, k0, kc, j0, w, nr);
    return;
  }
  for (int64_t kk = 0; kk < kc; ++kk)
    copy_pad_row(bp + kk * nr, st->b_row_base + st->b_rows[k0 + kk] + j0, w, nr);
}

static float* slot_acquire(pc_f32_step* st, size_t* k_out) {
  for (;;) {
    uint_least32_t busy = atomic_load_explicit(&st->busy, memory_order_relaxed);
    size_t k = 0;
    while (k < st->nslots && (busy >> k & 1u)) ++k;
    if (k == st->nslots) continue; /* transient: a finishing task frees one */
    if (atomic_compare_exchange_weak_explicit(&st->busy, &busy, busy | ((uint_least32_t)1 << k),
                                              memory_order_acquire, memory_order_relaxed)) {
      *k_out = k;
      return k == 0 ? st->slot0 : st->slots + (k - 1) * st->slot_floats;
    }
  }
}

static void slot_release(pc_f32_step* st, size_t k) {
  atomic_fetch_and_explicit(&st->busy, ~((uint_least32_t)1 << k), memory_order_release);
}

/* Rows per strip in the B block buffer: the K block's, or with strips packed
 * by their tile tasks the largest K block's (tasks then run different K
 * blocks at once: every strip keeps its own bytes). */
static int64_t strip_rows(const pc_f32_step* st, const pc_f32_kblock* kb) {
  return st->pack_b_in_task ? st->kc : kb->kcb;
}

/* Packs strips [s0, s0 + count) of K block kb's B block. */
static void pack_b_strips(const pc_f32_step* st, const pc_f32_kblock* kb, size_t s0, size_t count) {
  const int64_t NR = st->uk->nr;
  int64_t j0 = (int64_t)s0 * NR, w = min64((int64_t)count * NR, st->ncb - j0), kcb = kb->kcb;
  float* dst = st->bp + j0 * strip_rows(st, kb);
  if (st->pack_b != NULL)
    st->pack_b(st->pack_b_ctx, dst, kb->pc, kcb, st->jc + j0, w, NR);
  else
    pc_pack_b_f32(dst, st->b, kb->pc, kcb, st->jc + j0, w, NR);
}

static void f32_pack_b_task(void* ctx, size_t s0, size_t count) {
  pc_f32_step* st = ctx;
  pack_b_strips(st, &st->kb, s0, count);
}

/* Packs panels [p0, p0 + count) of the whole A (MR rows each), every K
 * block, into st->pa_data (whole_a in pc_gemm_f32). */
static void f32_pack_a_task(void* ctx, size_t p0, size_t count) {
  pc_f32_step* st = ctx;
  const int64_t MR = st->uk->mr, i0 = (int64_t)p0 * MR,
                rows = min64((int64_t)count * MR, st->m - i0);
  for (int64_t pc = 0; pc < st->k; pc += st->kc) {
    const int64_t kcb = min64(st->kc, st->k - pc);
    pc_pack_a_f32((float*)st->pa_data + pc * st->pa_pad + i0 * kcb, st->a, i0, rows, pc, kcb, MR);
  }
}

static void tile_run(pc_f32_step* st, const pc_f32_kblock* kb, size_t bi, size_t s0, size_t ni,
                     size_t ns) {
  const pc_f32_gemm_ukernel* uk = st->uk;
  const int64_t MR = uk->mr, NR = uk->nr, kcb = kb->kcb, pc = kb->pc, jc = st->jc;
  const pterun_compute_matrix *a = st->a, *b = st->b, *c = st->c;
  _Alignas(64) float tile[PC_F32_MR_MAX * PC_F32_NR_MAX];
  for (size_t blk = bi; blk < bi + ni; ++blk) {
    const int64_t ic = (int64_t)blk * st->mc, mcb = min64(st->mc, st->m - ic);
    float* ap = NULL;
    size_t slot = 0;
    if (kb->pa != NULL) {
      ap = (float*)kb->pa + ic * kcb; /* panels of this block, packed at load */
    } else if (!st->direct_a) {
      ap = slot_acquire(st, &slot);
      pc_pack_a_f32(ap, a, ic, mcb, pc, kcb, MR);
    }
    for (size_t s = s0; s < s0 + ns; ++s) {
      const int64_t jr = (int64_t)s * NR, w = min64(NR, st->ncb - jr);
      const float* bs = kb->bp + jr * strip_rows(st, kb);
      size_t b_ks = (size_t)NR;
      /* An M = 1 kernel reads its tile as two strips of NR / 2 (ukernel.h):
       * side by side, or two strips of the GEMM kernel's B packed at load
       * (the last one absent past the padded N: its columns are discarded,
       * so the first is read twice). */
      size_t b_ss = (size_t)NR / 2;
      if (st->pb_sw != 0 && st->pb_sw < NR) {
        b_ks = (size_t)st->pb_sw;
        b_ss = jc + jr + st->pb_sw < st->pb_pad ? (size_t)(kcb * st->pb_sw) : 0;
      }
      if (st->pack_b_in_task) pack_b_strips(st, kb, s, 1); /* used right away, from cache */
      const int64_t* rows = NULL;
      if (st->direct_b && w == NR && st->b_rows != NULL) {
        bs = st->b_row_base + jc + jr;
        rows = st->b_rows + pc;
      } else if (st->direct_b && w == NR) {
        bs = (const float*)b->data + pc * b->rs + jc + jr;
        b_ks = (size_t)b->rs;
      } else if (st->direct_b) {
        bs = kb->bp; /* the partial last strip, packed (zero padded) once per step */
      }
      for (int64_t ir = 0, h; ir < mcb; ir += h) {
        /* The last rows may take the shorter tail kernel: rows left <= TR
         * (one short tile instead of a padded MR one), and with A read in
         * place also MR < left <= 2 TR (two short tiles; M = 32 runs 32
         * rows, not 36). Every element still sees the same FMAs in the same
         * order, so the bits do not depend on which kernel computed it. */
        const int64_t left = mcb - ir, TR = st->tail != NULL ? st->tail->mr : 0;
        /* ... and the last rows of a block below MR in as many short tiles
         * as take fewer rows than one MR tile (AVX-512's 12-row kernel:
         * M = 16 runs 12 + 4 rows, not 24; M = 8 runs 4 + 4, not 12). */
        const int short_tile = left <= TR ||
                               (st->direct_a && left > MR && left <= 2 * TR && ir % MR == 0) ||
                               (TR > 0 && left < MR && (left + TR - 1) / TR * TR < MR);
        const pc_f32_gemm_ukernel* kern = short_tile ? st->tail : uk;
        if (short_tile) pc_used_mark(g_ukernels_ran, (size_t)(st->tail - g_ukernels));
        const pc_f32_gemm_ep_fn kern_ep = short_tile ? st->tail_ep : st->uk_ep;
        h = min64(kern->mr, left);
        const float* as;
        size_t a_rs, a_ks;
        if (st->direct_a) {
          as = (const float*)a->data + (ic + ir) * a->rs + pc;
          a_rs = (size_t)a->rs;
          a_ks = 1;
        } else {
          /* a short tile here reads the last panel's rows from row ir % MR */
          as = ap + (ir / MR) * kcb * MR + ir % MR;
          a_rs = 1;
          a_ks = (size_t)MR;
        }
        if (st->direct_c && h == kern->mr && w == NR && kern_ep != NULL) {
          kern_ep((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks, b_ss, rows,
                  (float*)c->data + (ic + ir) * c->rs + jc + jr, (size_t)c->rs, st->alpha, kb->add,
                  kb->bias != NULL ? kb->bias + ic + ir : NULL, kb->act, st->lo, st->hi);
          continue;
        }
        if (kern_ep != NULL && !kb->add && c->dtype == PTERUN_DTYPE_F32) {
          /* A partial tile that overwrites float C: the bias and activation
           * in the kernel's epilogue, on the tile (the same float operations
           * as the passes below, without two more passes over C). Its rows
           * past h read bias rows too: those repeat the last valid one. */
          const float* tb = kb->bias != NULL ? kb->bias + ic + ir : NULL;
          float bpad[PC_F32_MR_MAX];
          if (tb != NULL && h < kern->mr) {
            for (int64_t r = 0; r < kern->mr; ++r) bpad[r] = tb[r < h ? r : h - 1];
            tb = bpad;
          }
          kern_ep((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks, b_ss, rows, tile, (size_t)NR,
                  st->alpha, 0, tb, kb->act, st->lo, st->hi);
          store_tile_f32(c, ic + ir, jc + jr, h, w, tile, NR, 0);
          continue;
        }
        if (kern_ep != NULL) {
          kern_ep((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks, b_ss, rows, tile, (size_t)NR,
                  st->alpha, 0, NULL, PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f);
          store_tile_f32(c, ic + ir, jc + jr, h, w, tile, NR, kb->add);
        } else if (st->direct_c && h == kern->mr && w == NR) {
          kern->fn((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks,
                   (float*)c->data + (ic + ir) * c->rs + jc + jr, (size_t)c->rs, st->alpha,
                   kb->add);
        } else {
          kern->fn((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks, tile, (size_t)NR, st->alpha,
                   0);
          store_tile_f32(c, ic + ir, jc + jr, h, w, tile, NR, kb->add);
        }
        if (kb->bias != NULL) pc_bias_tile(c, ic + ir, jc + jr, h, w, kb->bias);
        if (kb->act) pc_act_tile(c, ic + ir, jc + jr, h, w, kb->act, st->lo, st->hi);
      }
    }
    if (kb->pa == NULL && !st->direct_a) slot_release(st, slot);
  }
}

/* The K block at pc of the current step. */
static void kblock_at(const pc_f32_step* st, int64_t pc, pc_f32_kblock* kb) {
  kb->pc = pc;
  kb->kcb = min64(st->kc, st->k - pc);
  kb->add = st->accumulate || pc > 0;
  kb->act = pc + kb->kcb == st->k ? st->act : 0; /* the last K block writes final values */
  kb->bias = pc == 0 ? st->bias : NULL;
  kb->pa = st->pa_data != NULL ? st->pa_data + (st->pa_k0 + pc) * st->pa_pad : NULL;
  kb->bp = st->pb_data != NULL ? st->pb_data + (st->k0 + pc) * st->pb_pad + st->jc * kb->kcb
           : st->bp_all_k      ? st->bp + pc * st->uk->nr
                               : st->bp;
}

/* C tile: M block `bi`, strips [s0, s0 + ns), of the current K block. */
static void f32_tile_task(void* ctx, size_t bi, size_t s0, size_t ni, size_t ns) {
  pc_f32_step* st = ctx;
  tile_run(st, &st->kb, bi, s0, ni, ns);
}

/* The same tile over every K block in turn: B packed at load needs no packing
 * step between K blocks, so one parallel call covers the product (a quarter
 * of the synchronisation for K = 1024), and the tile's C stays in cache
 * between its K blocks. Each element sees the same K blocks in the same
 * order as with a step per K block. */
static void f32_tile_task_all_k(void* ctx, size_t bi, size_t s0, size_t ni, size_t ns) {
  pc_f32_step* st = ctx;
  for (int64_t pc = 0; pc < st->k; pc += st->kc) {
    pc_f32_kblock kb;
    kblock_at(st, pc, &kb);
    tile_run(st, &kb, bi, s0, ni, ns);
  }
}

/* uk's sibling for narrow products: the same ISA bits, MR and K block and
 * half the NR (avx512f_12x16 for avx512f_12x32), or NULL. */
static const pc_f32_gemm_ukernel* narrow_ukernel(const pc_f32_gemm_ukernel* uk) {
  for (size_t i = 0; i < sizeof g_ukernels / sizeof g_ukernels[0]; ++i) {
    const pc_f32_gemm_ukernel* t = &g_ukernels[i];
    if (t->isa == uk->isa && t->mr == uk->mr && t->kc == uk->kc && 2 * t->nr == uk->nr) return t;
  }
  return NULL;
}

const pc_f32_gemm_ukernel* pc_f32_ukernel_for(const pterun_compute_gemm_ws* ws, int64_t m,
                                              int64_t n) {
  if (m == 1 && ws->uk_m1 != NULL) return ws->uk_m1;
  /* A workspace on the selected kernels (uk_m1 set; a caller's own kernel
   * runs as given): products of at most half its NR columns take the
   * narrow sibling, which does none of the discarded columns' work. */
  if (ws->uk_m1 != NULL && n <= ws->uk->nr / 2) {
    const pc_f32_gemm_ukernel* t = narrow_ukernel(ws->uk);
    if (t != NULL) return t;
  }
  return ws->uk;
}

const pc_f32_gemm_ukernel* pc_f32_pack_ukernel(int operand, int64_t cols) {
  const pc_f32_gemm_ukernel* uk = pterun_compute_f32_gemm_select(pterun_cpu_features());
  if (operand == PTERUN_COMPUTE_OPERAND_B && cols <= uk->nr / 2) {
    const pc_f32_gemm_ukernel* t = narrow_ukernel(uk);
    if (t != NULL) return t;
  }
  return uk;
}

void pc_gemm_f32(const pterun_compute_gemm_ws* ws, int64_t m, int64_t n, int64_t k,
                 const pterun_compute_matrix* a, const pterun_compute_matrix* b,
                 const pterun_compute_matrix* c, float alpha, int accumulate, const pc_gemm_x* x) {
  const pc_f32_gemm_ukernel* uk = pc_f32_ukernel_for(ws, m, n);
  const int64_t MR = uk->mr, NR = uk->nr;
  if (uk >= g_ukernels && uk < g_ukernels + sizeof g_ukernels / sizeof g_ukernels[0])
    pc_used_mark(g_ukernels_ran, (size_t)(uk - g_ukernels));
  const pterun_compute_packed *pa = x->pa, *pb = x->pb;
  /* A is read in place when its rows are contiguous f32, unless M is large
   * and the row stride is a multiple of 2 KiB: then the rows of an A block
   * fall into a few cache sets and evict each other, and packing wins --
   * but not when N is one or two strips (each A element is used once or
   * twice: packing costs more than the product, e.g. a 10-wide linear). */
  const int direct_a = pa == NULL && a->dtype == PTERUN_DTYPE_F32 && a->cs == 1 && a->rs >= 0 &&
                       (m <= 2 * MR || n <= 2 * NR || (a->rs * 4) % 2048 != 0);
  /* B is read in place when each of its elements is used by at most two
   * tiles (small M): packing would cost more than it saves; or when all of
   * B fits in L2 (a small layer's image, e.g. a 1x1 convolution over a few
   * hundred pixels): its strips stay cached across the M tiles, and packing
   * them (a copy per execute) costs more than the unaligned loads. */
  /* B's rows given in place (a convolution's image) are read there by
   * every tile: the kernels with an epilogue variant take row pointers. */
  const pc_f32_gemm_ukernel* tail = pc_f32_tail_ukernel(uk);
  const int rows_b = pb == NULL && x->b_rows != NULL && ukernel_ep(uk) != NULL &&
                     (tail == NULL || ukernel_ep(tail) != NULL);
  const int direct_b =
      rows_b ||
      (pb == NULL && x->pack_b == NULL && b->dtype == PTERUN_DTYPE_F32 && b->cs == 1 &&
       b->rs >= 0 && (m <= 2 * MR || (double)k * (double)b->rs <= PC_F32_DIRECT_B_FLOATS));
  const int direct_c = c->dtype == PTERUN_DTYPE_F32 && c->cs == 1 && c->rs >= 0;
  const int own_a = pa == NULL && !direct_a; /* A blocks packed here, per product */
  const int64_t cap = (int64_t)(ws->cap / sizeof(float));
  /* A packed operand fixes the K blocking (it was equalised over the whole K
   * at pack time, as the lines below do for an unpacked product). */
  const int64_t fixed_kc = pa != NULL ? pa->kc : pb != NULL ? pb->kc : 0;
  int64_t kc = fixed_kc ? fixed_kc : uk->kc, mc = min64(uk->mc, round_up(m, MR)),
          nc = min64(PC_F32_NC_BIG, round_up(n, NR));
  int64_t jc, pc, nblk;
  float* bp = (float*)ws->buf;

  /* Shrink the blocks until B block + A block fit the buffer: first NC (down
   * to a few strips), then KC (down to 128), then MC, then the rest. Only the
   * single-thread capacity counts, so the blocking (and with it every
   * rounding) is the same for any thread count. */
  for (;;) {
    int64_t need = (pb != NULL ? 0 : kc * nc) + (own_a ? mc * kc : 0);
    if (need <= cap) break;
    if (pb == NULL && nc > 4 * NR && nc > 128)
      nc = round_down_min(nc / 2, NR);
    else if (!fixed_kc && kc > 128)
      kc /= 2;
    else if (own_a && mc > 4 * MR)
      mc = round_down_min(mc / 2, MR);
    else if (pb == NULL && nc > NR)
      nc = round_down_min(nc / 2, NR);
    else if (!fixed_kc && kc > 16)
      kc /= 2;
    else if (own_a && mc > MR)
      mc = round_down_min(mc / 2, MR);
    else
      break; /* unreachable: the stack buffer always fits the minimum */
  }
  /* Equal K blocks (e.g. 300 = 150 + 150, not 256 + 44). */
  if (!fixed_kc) {
    nblk = (k + kc - 1) / kc;
    kc = (k + nblk - 1) / nblk;
  }

  /* Threads: the pool's (capped), as many as the work pays for; without
   * spare A blocks a packed A limits the tasks running at once to one. The
   * pool's split rule is per parallel call, and a product makes one per N
   * block and, B unpacked, per K block (each a wake-up and a barrier), so
   * the estimate is one such call's share of the multiply-adds. */
  /* B read in place needs no packing between K blocks either: one call per N
   * block runs every K block of a tile (f32_tile_task_all_k), the partial
   * last strip of every K block packed first, [K][NR] at the buffer's start
   * (it must fit before the A slots). */
  const int direct_all_k = pb == NULL && direct_b && k * NR <= kc * nc;
  /* With one M block every B strip belongs to one tile task: it packs the
   * strip just before using it, which saves the pool a barrier per step and
   * the B block a trip through memory (the same packed values); and so on
   * several threads all K blocks run in one call too (a fifth of the
   * barriers at K = 576, and work per call enough to split a small layer).
   * One thread keeps a step per K block: A's block stays in cache across
   * the strips. */
  const size_t mblocks = (size_t)((m + mc - 1) / mc);
  const int pack_in_task = pb == NULL && !direct_b && mblocks == 1;
  const int64_t calls =
      ((n + nc - 1) / nc) * (pb != NULL || direct_all_k || pack_in_task ? 1 : (k + kc - 1) / kc);
  const uint32_t work_flags = pc_parallel_flags(
      ws->max_threads, (double)m * (double)n * (double)k / (double)calls, PC_PS_F32_GEMM_FMA);
  size_t threads = pterun_threadpool_threads_for(ws->pool, work_flags);
  /* One tile (e.g. a 10-wide linear): nothing to share, the pool only adds
   * its wake-up. */
  if ((m + mc - 1) / mc * ((n + NR - 1) / NR) < 2) threads = 1;
  const int all_k = direct_all_k || (pack_in_task && threads > 1);
  pc_f32_step st;
  memset(&st, 0, sizeof st);
  st.uk = uk;
  st.uk_ep = ukernel_ep(uk);
  st.tail = tail;
  st.tail_ep = st.tail != NULL ? ukernel_ep(st.tail) : NULL;
  st.a = a;
  st.b = b;
  st.c = c;
  st.alpha = alpha;
  st.accumulate = accumulate;
  st.direct_a = direct_a;
  st.direct_b = direct_b;
  st.direct_c = direct_c;
  st.m = m;
  st.mc = mc;
  st.bp = bp;
  st.slot0 = pb != NULL ? bp : bp + kc * nc;
  st.act = x->act;
  st.bias = x->bias;
  st.k = k;
  st.kc = kc;
  st.k0 = x->k0;
  if (pa != NULL) st.pa_data = pa->data, st.pa_pad = pa->pad, st.pa_k0 = x->k0;
  if (pb != NULL) st.pb_data = pb->data, st.pb_pad = pb->pad, st.pb_sw = pb->uk->nr;
  st.lo = x->lo;
  st.hi = x->hi;
  st.pack_b = pb == NULL ? x->pack_b : NULL;
  st.pack_b_ctx = x->pack_b_ctx;
  if (rows_b) st.b_row_base = x->b_row_base, st.b_rows = x->b_rows;
  st.slots = (float*)((unsigned char*)ws->buf + ws->cap);
  st.slot_floats = (size_t)uk->mc * (size_t)uk->kc;
  /* B packed at load leaves the buffer's B block free: with several threads
   * the whole A is packed there once, in parallel (every K block, the layout
   * of an A packed at load), instead of once per task and K block. One
   * thread packs each A block just before its K block (from L2, not L3). */
  const int whole_a = own_a && pb != NULL && threads > 1 && round_up(m, MR) * k <= cap;
  if (whole_a) {
    st.pa_data = bp;
    st.pa_pad = round_up(m, MR);
    st.pa_k0 = 0;
  }
  const int slot_a = own_a && !whole_a; /* tasks pack A blocks into slots */
  st.nslots = !slot_a ? threads : 1 + (ws->a_slots < threads - 1 ? ws->a_slots : threads - 1);
  if (slot_a && (size_t)(mc * kc) > st.slot_floats) st.nslots = 1; /* cannot happen */
  if (st.nslots > 32) st.nslots = 32;
  if (st.nslots < threads) threads = st.nslots;
  pterun_threadpool* pool = threads > 1 ? ws->pool : NULL;
  const uint32_t flags =
      PTERUN_PARALLEL_MAX_THREADS(threads) | (work_flags & PTERUN_PARALLEL_WORK_MASK);
  st.pack_b_in_task = pack_in_task;
  st.bp_all_k = direct_all_k;

  for (jc = 0; jc < n; jc += nc) {
    const int64_t ncb = min64(nc, n - jc);
    const size_t strips = (size_t)((ncb + NR - 1) / NR);
    /* Strips per task: about four tasks per thread, whole rows of strips when
     * the M blocks alone give enough tasks (no A block is packed twice). */
    size_t per = strips;
    if (threads > 1 && mblocks < 4 * threads) {
      size_t want = (4 * threads + mblocks - 1) / mblocks;
      per = (strips + want - 1) / want;
      if (per == 0) per = 1;
    }
    st.jc = jc;
    st.ncb = ncb;
    if (all_k) {
      for (pc = 0; direct_all_k && ncb % NR != 0 && pc < k; pc += kc)
        pack_last_strip(bp + pc * NR, &st, pc, min64(kc, k - pc), jc + (int64_t)(strips - 1) * NR,
                        ncb % NR, NR);
      atomic_store_explicit(&st.busy, 0, memory_order_relaxed);
      pterun_parallelize_2d_tile(pool, f32_tile_task_all_k, &st, mblocks, strips, 1, per, flags);
      continue;
    }
    if (pb != NULL) {
      if (whole_a && jc == 0) {
        const size_t panels = (size_t)((m + MR - 1) / MR);
        size_t ptile = threads > 1 ? (panels + 2 * threads - 1) / (2 * threads) : panels;
        pterun_parallelize_1d_tile(pool, f32_pack_a_task, &st, panels, ptile, flags);
      }
      atomic_store_explicit(&st.busy, 0, memory_order_relaxed);
      pterun_parallelize_2d_tile(pool, f32_tile_task_all_k, &st, mblocks, strips, 1, per, flags);
      continue;
    }
    for (pc = 0; pc < k; pc += kc) {
      kblock_at(&st, pc, &st.kb);
      atomic_store_explicit(&st.busy, 0, memory_order_relaxed);
      if (st.pack_b_in_task) {
        /* packed by the tile tasks */
      } else if (!direct_b) {
        size_t ptile = threads > 1 ? (strips + 2 * threads - 1) / (2 * threads) : strips;
        pterun_parallelize_1d_tile(pool, f32_pack_b_task, &st, strips, ptile, flags);
      } else if (ncb % NR != 0) {
        pack_last_strip(bp, &st, pc, st.kb.kcb, jc + (int64_t)(strips - 1) * NR, ncb % NR, NR);
      }
      pterun_parallelize_2d_tile(pool, f32_tile_task, &st, mblocks, strips, 1, per, flags);
    }
  }
}
