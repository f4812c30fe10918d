/* Channels-last float32 convolution as an indirect GEMM
 * (pterun_compute_f32_conv2d_nhwc): out[P][Cout] = A[P][K] x W[K][Cout] with
 * K = kernel_h x kernel_w x in_c in (tap, channel) order, where A's row for
 * an output pixel is never built: the GEMM microkernels' _ig entry reads
 * each tap's in_c channels straight from the input pixel they come from
 * (or from a zero row for a tap in the padding), through a small table of
 * row pointers built per tile of MR pixels. No image copy, no padding pass,
 * the output written in place; the filter is packed once, at load, as the
 * GEMM's B strips (the whole K per strip: one pass, no K blocks). */
#include <stdlib.h>
#include <string.h>

#include "pterun/cpu.h"
#include "src/compute/gemm/gemm_internal.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"

#define PC_IG_MAGIC 0x70636967u /* "pcig" */
#define PC_IG_OPERAND 2         /* pterun_compute_packed.operand of a packed filter */
/* Limits keeping the per-tile pointer table on the stack and every index
 * product in range; larger convolutions take other paths (-1). */
#define PC_IG_MAX_TAPS 64
#define PC_IG_MAX_CIN 4096
#define PC_IG_MAX_DIM ((size_t)1 << 24)
#define PC_IG_MR_MAX 16 /* the manifest's widest tile (engine_f32.c asserts it) */
#define PC_IG_NR_MAX 64

typedef struct pc_ig_row {
  uint64_t isa;
  const char* name;
  pc_f32_igemm_fn fn;
  int mr, nr;
} pc_ig_row;

/* The _ig entries in the GEMM manifest's order (pterun_compute_f32_gemm_ukernels).
 * The dispatch packs the filter for the selected kernel's strips and runs
 * that kernel, or its tail sibling (same ISA and NR, fewer rows) on a last
 * tile that fits it; it never picks an M = 1 row, so those carry an ISA mask
 * no CPU has (the variants report lists them unavailable; the kernel test
 * runs every row through pterun_compute_f32_conv2d_nhwc_with). */
#define PC_IG_NEVER UINT64_MAX
static const pc_ig_row g_ig[] = {
#define PC_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc)                                                   \
  {(mr) > 1 ? (uint64_t)(isa) : PC_IG_NEVER, #fn, fn##_ig, (mr), (nr)},
#include "src/compute/gemm/f32_ukernels.inc"
#undef PC_GEMM_UKERNEL
};
#define PC_IG_COUNT (sizeof g_ig / sizeof g_ig[0])

static atomic_uchar g_ig_ran[PC_IG_COUNT];
PC_USED_FAMILY(pc_used_f32_igemm, "f32_igemm", g_ig, g_ig_ran);

/* Read for the padding taps, never written (.bss: no file size). */
static float g_zero_row[PC_IG_MAX_CIN];

static size_t taps_of(const pterun_compute_conv2d* p) {
  return p->kernel_h * p->kernel_w;
}

/* Geometry this path runs: sizes that make sense and stay in range. */
static int valid(const pterun_compute_conv2d* p) {
  const size_t dims[] = {p->batch,    p->in_c,       p->in_h,      p->in_w,     p->out_c,
                         p->out_h,    p->out_w,      p->kernel_h,  p->kernel_w, p->stride_h,
                         p->stride_w, p->dilation_h, p->dilation_w};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; ++i)
    if (dims[i] == 0 || dims[i] > PC_IG_MAX_DIM) return 0;
  if (p->pad_top > PC_IG_MAX_DIM || p->pad_left > PC_IG_MAX_DIM) return 0;
  return p->kernel_h <= PC_IG_MAX_TAPS && p->kernel_w <= PC_IG_MAX_TAPS &&
         taps_of(p) <= PC_IG_MAX_TAPS && p->in_c <= PC_IG_MAX_CIN &&
         (p->activation == PTERUN_COMPUTE_ACT_NONE || p->activation == PTERUN_COMPUTE_ACT_RELU ||
          p->activation == PTERUN_COMPUTE_ACT_CLAMP);
}

/* The table row of a GEMM microkernel descriptor, or PC_IG_COUNT. */
static size_t row_of(const pc_f32_gemm_ukernel* uk) {
  size_t n = 0;
  const pc_f32_gemm_ukernel* all = pterun_compute_f32_gemm_ukernels(&n);
  for (size_t i = 0; i < n && i < PC_IG_COUNT; ++i)
    if (uk == &all[i]) return i;
  return PC_IG_COUNT;
}

static size_t pack_size_for(const pterun_compute_conv2d* p, const pc_f32_gemm_ukernel* uk) {
  const size_t k = taps_of(p) * p->in_c, nr = (size_t)uk->nr;
  const size_t pad = (p->out_c + nr - 1) / nr * nr;
  return PC_PACKED_HEAD + k * pad * sizeof(float);
}

size_t pterun_compute_f32_conv2d_nhwc_pack_size(const pterun_compute_conv2d* p) {
  if (p == NULL || !valid(p)) return 0;
  return pack_size_for(p, pc_f32_pack_ukernel(PTERUN_COMPUTE_OPERAND_B, (int64_t)p->out_c));
}

/* The filter as uk's B strips: strip s holds K rows of NR floats, row
 * (tap, ci) = W[s * NR + j][ci][kh][kw] (times oc_scale), zeros past out_c. */
static const pterun_compute_packed* pack_with(void* mem, const pc_f32_gemm_ukernel* uk,
                                              const pterun_compute_conv2d* p, const float* w,
                                              const int64_t ws[4], const double* oc_scale) {
  const size_t nr = (size_t)uk->nr, cin = p->in_c, kw = p->kernel_w;
  const size_t k = taps_of(p) * cin, pad = (p->out_c + nr - 1) / nr * nr;
  pterun_compute_packed* h = mem;
  memset(h, 0, sizeof *h);
  h->magic = PC_IG_MAGIC;
  h->operand = PC_IG_OPERAND;
  h->uk = uk;
  h->rows = (int64_t)k;
  h->cols = (int64_t)p->out_c;
  h->kc = (int64_t)k;
  h->pad = (int64_t)pad;
  h->data = (float*)((unsigned char*)mem + PC_PACKED_HEAD);
  for (size_t s = 0; s < pad / nr; ++s)
    for (size_t r = 0; r < k; ++r) {
      const size_t t = r / cin, ci = r % cin;
      float* d = h->data + (s * k + r) * nr;
      for (size_t j = 0; j < nr; ++j) {
        const size_t oc = s * nr + j;
        if (oc >= p->out_c) {
          d[j] = 0.0f;
          continue;
        }
        const float v = w[(int64_t)oc * ws[0] + (int64_t)ci * ws[1] + (int64_t)(t / kw) * ws[2] +
                          (int64_t)(t % kw) * ws[3]];
        d[j] = oc_scale != NULL ? (float)((double)v * oc_scale[oc]) : v;
      }
    }
  return h;
}

const pterun_compute_packed* pterun_compute_f32_conv2d_nhwc_pack(void* mem, size_t bytes,
                                                                 const pterun_compute_conv2d* p,
                                                                 const float* w,
                                                                 const int64_t w_strides[4],
                                                                 const double* oc_scale) {
  const size_t need = pterun_compute_f32_conv2d_nhwc_pack_size(p);
  if (need == 0 || mem == NULL || bytes < need || w == NULL || w_strides == NULL ||
      ((uintptr_t)mem & 63) != 0)
    return NULL;
  return pack_with(mem, pc_f32_pack_ukernel(PTERUN_COMPUTE_OPERAND_B, (int64_t)p->out_c), p, w,
                   w_strides, oc_scale);
}

typedef struct pc_ig_job {
  const pterun_compute_conv2d* p;
  pc_f32_igemm_fn fn, tail_fn; /* tail_fn: for a last tile of at most tail_mr rows, or NULL */
  size_t mr, nr, tail_mr;
  const float* in;
  const pterun_compute_packed* w;
  const float* bias;
  float* out;
  /* The caller's table (pterun_compute_f32_conv2d_nhwc_cached): every tile's
   * pointer block, MR x T at tile index x MR x T; NULL: built per tile on
   * the stack. fill: built (into the table) by this call. */
  const float** tab;
  int fill;
} pc_ig_job;

/* A table's header (pterun_compute_f32_conv2d_nhwc_cached): what its
 * pointers were built for. They are absolute (input pixels and the zero
 * row), so they hold while the input's address, the geometry and the
 * kernel's tile stay. */
typedef struct pc_ig_tab_head {
  uint64_t magic;
  const float* in;
  size_t row;      /* the kernel row (its MR) */
  size_t geom[13]; /* the pixels, taps and merged rows follow from it */
} pc_ig_tab_head;
#define PC_IG_TAB_MAGIC 0x7063696774616231ull /* "pcigtab1" */
#define PC_IG_TAB_HEAD ((sizeof(pc_ig_tab_head) + 63) / 64 * 64)

/* Output pixels [start, start + count) of batch x out_h x out_w, in tiles of
 * MR: the tile's row pointers per tap, then every strip of NR channels. */
/* Whether every window lies inside the input horizontally with unit
 * dilation across: a window row's kernel_w taps are then kernel_w x in_c
 * contiguous floats, read as one tap (the same K elements in the same
 * order: the same bits, a third of the row pointers for a 3-wide filter). */
static int rows_merge(const pterun_compute_conv2d* p) {
  return p->dilation_w == 1 && p->pad_left == 0 &&
         (p->out_w - 1) * p->stride_w + p->kernel_w <= p->in_w &&
         p->kernel_w * p->in_c <= PC_IG_MAX_CIN;
}

/* One tile's pointer block: for each of its mr pixels (from (n, oy, ox),
 * stepped along) and each of the T taps (KH x KW, or KH merged window rows)
 * the input row the microkernel reads at blk[tap * MR + pixel]. */
static void pc_ig_rows(const pc_ig_job* j, const float** blk, size_t mr, size_t KH, size_t KW,
                       size_t T, size_t* pn, size_t* poy, size_t* pox) {
  const pterun_compute_conv2d* p = j->p;
  const size_t MR = j->mr, cin = p->in_c;
  size_t n = *pn, oy = *poy, ox = *pox;
  for (size_t i = 0; i < mr; ++i) {
    const float* img = j->in + n * p->in_h * p->in_w * cin;
    /* unsigned wrap makes a row or column above / left of the image huge,
     * so one comparison per side rejects both edges */
    size_t y = oy * p->stride_h - p->pad_top;
    const float** slot = blk + i;
    const size_t x0 = ox * p->stride_w - p->pad_left;
    if (y < p->in_h && y + (KH - 1) * p->dilation_h < p->in_h && x0 < p->in_w &&
        x0 + (KW - 1) * p->dilation_w < p->in_w) {
      /* the whole window inside the image (most pixels): no checks */
      const size_t dx = p->dilation_w * cin;
      for (size_t kh = 0; kh < KH; ++kh, y += p->dilation_h) {
        const float* q = img + (y * p->in_w + x0) * cin;
        for (size_t kw = 0; kw < KW; ++kw, q += dx, slot += MR) *slot = q;
      }
    } else {
      for (size_t kh = 0; kh < KH; ++kh, y += p->dilation_h) {
        size_t x = ox * p->stride_w - p->pad_left;
        const int row_in = y < p->in_h;
        const float* row = row_in ? img + y * p->in_w * cin : img;
        for (size_t kw = 0; kw < KW; ++kw, x += p->dilation_w, slot += MR)
          *slot = row_in && x < p->in_w ? row + x * cin : g_zero_row;
      }
    }
    if (++ox == p->out_w) {
      ox = 0;
      if (++oy == p->out_h) {
        oy = 0;
        ++n;
      }
    }
  }
  *pn = n;
  *poy = oy;
  *pox = ox;
  /* rows past mr repeat the last pixel's pointers: read, never stored */
  for (size_t i = mr; i < MR; ++i)
    for (size_t t = 0; t < T; ++t) blk[t * MR + i] = blk[t * MR + mr - 1];
}

static void pc_ig_task(void* ctx, size_t start, size_t count) {
  const pc_ig_job* j = ctx;
  const pterun_compute_conv2d* p = j->p;
  const int merge = rows_merge(p);
  /* taps and channels per tap as the microkernel sees them */
  const size_t MR = j->mr, NR = j->nr, cout = p->out_c, cin = p->in_c;
  const size_t T = merge ? p->kernel_h : taps_of(p), tc = merge ? p->kernel_w * cin : cin;
  const size_t per_img = p->out_h * p->out_w, k = taps_of(p) * cin;
  const float* ind[PC_IG_MAX_TAPS * PC_IG_MR_MAX];
  float bias_tail[PC_IG_NR_MAX];
  const size_t strips = (cout + NR - 1) / NR, tail = cout - (strips - 1) * NR;
  if (j->bias != NULL && tail < NR) {
    memcpy(bias_tail, j->bias + (strips - 1) * NR, tail * sizeof(float));
    memset(bias_tail + tail, 0, (NR - tail) * sizeof(float));
  }
  /* the first pixel's coordinates, then stepped along without divisions */
  size_t n = start / per_img, oy = (start % per_img) / p->out_w, ox = start % p->out_w;
  const size_t KH = p->kernel_h, KW = merge ? 1 : p->kernel_w;
  for (size_t p0 = start; p0 < start + count; p0 += MR) {
    const size_t mr = start + count - p0 < MR ? start + count - p0 : MR;
    /* this tile's pointer block: the caller's table (built by this call, or
     * reused as it is), or the stack */
    const float** blk = j->tab != NULL ? j->tab + p0 * T : ind;
    if (j->tab == NULL || j->fill) {
      pc_ig_rows(j, blk, mr, KH, KW, T, &n, &oy, &ox);
    }
    float* c = j->out + p0 * cout;
    /* a short last tile on the tail sibling: its MR-row pointer table is the
     * first rows of each tap's block, so the table is rebuilt at its stride
     * (on the stack: a cached block stays as it is) */
    pc_f32_igemm_fn fn = j->fn;
    if (mr < MR && j->tail_fn != NULL && mr <= j->tail_mr) {
      for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < j->tail_mr; ++i)
          ind[t * j->tail_mr + i] = blk[t * MR + (i < mr ? i : mr - 1)];
      blk = ind;
      fn = j->tail_fn;
    }
    for (size_t s = 0; s < strips; ++s) {
      const size_t nc = s + 1 < strips ? NR : tail;
      const float* b = j->bias == NULL ? NULL : nc < NR ? bias_tail : j->bias + s * NR;
      fn(mr, nc, T, tc, blk, j->w->data + s * k * NR, c + s * NR, cout, b, p->activation, p->lo,
         p->hi);
    }
  }
}

/* The geometry a table's pointers depend on (every field but out_c and the
 * activation). */
static void geom_of(const pterun_compute_conv2d* p, size_t g[13]) {
  const size_t v[13] = {p->batch,      p->in_c,       p->in_h,     p->in_w,     p->out_h,
                        p->out_w,      p->kernel_h,   p->kernel_w, p->stride_h, p->stride_w,
                        p->dilation_h, p->dilation_w, p->pad_top};
  memcpy(g, v, sizeof v);
}

size_t pterun_compute_f32_conv2d_nhwc_table_size(const pterun_compute_conv2d* p,
                                                 const pterun_compute_packed* w) {
  if (p == NULL || w == NULL || !valid(p) || w->magic != PC_IG_MAGIC) return 0;
  const size_t row = row_of(w->uk);
  if (row >= PC_IG_COUNT) return 0;
  const size_t MR = (size_t)g_ig[row].mr, pixels = p->batch * p->out_h * p->out_w;
  const size_t tiles = (pixels + MR - 1) / MR;
  /* a whole number of MR-pixel tiles of T <= taps pointers each */
  if (tiles > (SIZE_MAX - PC_IG_TAB_HEAD) / sizeof(float*) / MR / taps_of(p)) return 0;
  return PC_IG_TAB_HEAD + tiles * MR * taps_of(p) * sizeof(float*);
}

int pterun_compute_f32_conv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                   const pterun_compute_conv2d* p, const float* in,
                                   const pterun_compute_packed* w, const float* bias, float* out) {
  return pterun_compute_f32_conv2d_nhwc_cached(pool, max_threads, p, in, w, bias, out, NULL, 0);
}

int pterun_compute_f32_conv2d_nhwc_cached(pterun_threadpool* pool, size_t max_threads,
                                          const pterun_compute_conv2d* p, const float* in,
                                          const pterun_compute_packed* w, const float* bias,
                                          float* out, void* table, size_t table_bytes) {
  if (p == NULL || in == NULL || w == NULL || out == NULL || !valid(p) || w->magic != PC_IG_MAGIC ||
      w->operand != PC_IG_OPERAND || w->rows != (int64_t)(taps_of(p) * p->in_c) ||
      w->cols != (int64_t)p->out_c)
    return -1;
  const size_t row = row_of(w->uk);
  if (row >= PC_IG_COUNT || (g_ig[row].isa & pterun_cpu_features()) != g_ig[row].isa ||
      g_ig[row].mr > PC_IG_MR_MAX || g_ig[row].nr > PC_IG_NR_MAX || w->pad % g_ig[row].nr != 0)
    return -1;
  pc_used_mark(g_ig_ran, row);
  const size_t MR = (size_t)g_ig[row].mr;
  /* the tail sibling (the GEMM engine's rule: same ISA and NR, fewer rows) */
  const pc_f32_gemm_ukernel* tk = pc_f32_tail_ukernel(w->uk);
  const size_t tail = tk != NULL ? row_of(tk) : PC_IG_COUNT;
  const size_t pixels = p->batch * p->out_h * p->out_w;
  const size_t last = pixels % MR;
  const int use_tail = tail < PC_IG_COUNT && last != 0 && last <= (size_t)g_ig[tail].mr;
  if (use_tail) pc_used_mark(g_ig_ran, tail);
  pc_ig_job j = {p,
                 g_ig[row].fn,
                 use_tail ? g_ig[tail].fn : NULL,
                 MR,
                 (size_t)g_ig[row].nr,
                 use_tail ? (size_t)g_ig[tail].mr : 0,
                 in,
                 w,
                 bias,
                 out,
                 NULL,
                 0};
  /* The caller's table: reused when built for this input address, geometry
   * and tile; else rebuilt by this call's tasks (each tile its own block)
   * and marked valid once they are done. */
  pc_ig_tab_head* th = table;
  const size_t need = th != NULL ? pterun_compute_f32_conv2d_nhwc_table_size(p, w) : 0;
  if (need != 0 && table_bytes >= need && ((uintptr_t)table & 63) == 0) {
    size_t g[13];
    geom_of(p, g);
    j.tab = (const float**)((unsigned char*)table + PC_IG_TAB_HEAD);
    j.fill = th->magic != PC_IG_TAB_MAGIC || th->in != in || th->row != row ||
             memcmp(th->geom, g, sizeof g) != 0;
    if (j.fill) {
      th->magic = 0; /* invalid until every block is written */
      th->in = in;
      th->row = row;
      memcpy(th->geom, g, sizeof g);
    }
  }
  /* Tiles of a few MR-pixel blocks (load balance over the pool); the split
   * never changes an output's operations, so any thread count gives the
   * same bits. */
  size_t tile = MR * 4;
  if (pixels / tile < 8) tile = MR;
  const double fma = (double)pixels * (double)p->out_c * (double)(taps_of(p) * p->in_c);
  pterun_parallelize_1d_tile(pool, pc_ig_task, &j, pixels, tile,
                             pc_parallel_flags(max_threads, fma, PC_PS_F32_GEMM_FMA));
  if (j.fill) th->magic = PC_IG_TAB_MAGIC;
  return 0;
}

int pterun_compute_f32_conv2d_nhwc_with(size_t variant, const pterun_compute_conv2d* p,
                                        const float* in, const float* w, const int64_t w_strides[4],
                                        const double* oc_scale, const float* bias, float* out) {
  size_t n = 0;
  const pc_f32_gemm_ukernel* all = pterun_compute_f32_gemm_ukernels(&n);
  if (variant >= n || variant >= PC_IG_COUNT || p == NULL || !valid(p) ||
      (all[variant].isa & pterun_cpu_features()) != all[variant].isa)
    return -1;
  /* a test entry: the packed filter on the heap, the calling thread */
  void* mem = aligned_alloc(64, (pack_size_for(p, &all[variant]) + 63) / 64 * 64);
  if (mem == NULL) return -1;
  const pterun_compute_packed* pw = pack_with(mem, &all[variant], p, w, w_strides, oc_scale);
  pc_used_mark(g_ig_ran, variant);
  pc_ig_job j = {p,
                 g_ig[variant].fn,
                 NULL,
                 (size_t)g_ig[variant].mr,
                 (size_t)g_ig[variant].nr,
                 0,
                 in,
                 pw,
                 bias,
                 out,
                 NULL,
                 0};
  pc_ig_task(&j, 0, p->batch * p->out_h * p->out_w);
  free(mem);
  return 0;
}

const char* pterun_compute_f32_conv2d_nhwc_variant(size_t variant) {
  size_t n = 0;
  const pc_f32_gemm_ukernel* all = pterun_compute_f32_gemm_ukernels(&n);
  if (variant >= n || variant >= PC_IG_COUNT) return NULL;
  return (all[variant].isa & pterun_cpu_features()) == all[variant].isa ? g_ig[variant].name : NULL;
}
