/* Dispatch of the f32 depthwise convolutions
 * (pterun_compute_f32_dwconv2d_nhwc / _nchw): the widest variant the CPU
 * (narrowed by PTERUN_ISA_MASK) runs -- NHWC: the one whose vectors cover
 * the channels best -- output rows (NHWC) or planes (NCHW) split over the
 * pool. Every variant gives the same bits, so the choice is speed alone. */
#include "src/compute/dwconv/dwconv.h"

#include "pterun/cpu.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"

typedef struct pc_dw_variant {
  uint64_t isa;
  const char* name;
  pc_dw_fn fn;      /* NHWC */
  pc_dw_fn fn_nchw; /* NCHW */
  size_t lanes;     /* floats per vector */
} pc_dw_variant;

static const pc_dw_variant g_variants[] = {
    {0, "v4", pc_f32_dwconv__v4, pc_f32_dwconv_nchw__v4, 4},
#if defined(PTERUN_GEMM_AVX2)
    {PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2, "avx2", pc_f32_dwconv__avx2,
     pc_f32_dwconv_nchw__avx2, 8},
#endif
#if defined(PTERUN_GEMM_AVX512)
    {PTERUN_CPU_X86_AVX512F, "avx512f", pc_f32_dwconv__avx512f, pc_f32_dwconv_nchw__avx512f, 16},
#endif
};
#define PC_DW_COUNT (sizeof g_variants / sizeof g_variants[0])

/* Geometry the loops can run: every index they form stays inside the
 * tensors the caller sized from these numbers. */
static int valid(const pterun_compute_dwconv2d* p) {
  return p->in_c != 0 && p->out_c % p->in_c == 0 && p->stride_h != 0 && p->stride_w != 0 &&
         p->dilation_h != 0 && p->dilation_w != 0;
}

/* The NCHW loops list the filter rows of an output row on the stack. */
#define PC_DW_NCHW_MAX_KH 64
static int valid_nchw(const pterun_compute_dwconv2d* p) {
  return valid(p) && p->kernel_h <= PC_DW_NCHW_MAX_KH;
}

const char* pterun_compute_f32_dwconv2d_variant(size_t variant) {
  if (variant >= PC_DW_COUNT) return NULL;
  uint64_t isa = g_variants[variant].isa;
  return (isa & pterun_cpu_features()) == isa ? g_variants[variant].name : NULL;
}

int pterun_compute_f32_dwconv2d_with(size_t variant, const pterun_compute_dwconv2d* p,
                                     const float* in, const float* w, const float* bias,
                                     float* out) {
  if (!valid(p) || pterun_compute_f32_dwconv2d_variant(variant) == NULL) return -1;
  g_variants[variant].fn(p, in, w, bias, out, 0, p->batch * p->out_h);
  return 0;
}

int pterun_compute_f32_dwconv2d_nchw_with(size_t variant, const pterun_compute_dwconv2d* p,
                                          const float* in, const float* w, const float* bias,
                                          float* out) {
  if (!valid_nchw(p) || pterun_compute_f32_dwconv2d_variant(variant) == NULL) return -1;
  g_variants[variant].fn_nchw(p, in, w, bias, out, 0, p->batch * p->out_c);
  return 0;
}

typedef struct pc_dw_job {
  pc_dw_fn fn;
  const pterun_compute_dwconv2d* p;
  const float *in, *w, *bias;
  float* out;
} pc_dw_job;

static void pc_dw_task(void* ctx, size_t start, size_t count) {
  const pc_dw_job* j = ctx;
  j->fn(j->p, j->in, j->w, j->bias, j->out, start, count);
}

/* Multiply-adds per tile: tiles are fewer and larger where that still leaves
 * every thread several (whether to split at all is the pool's rule). */
#define PC_DW_TASK_MIN_FMA ((size_t)1 << 15)

static atomic_uchar g_ran[PC_DW_COUNT];
PC_USED_FAMILY(pc_used_dwconv2d, "dwconv2d", g_variants, g_ran);

/* The widest variant this CPU runs. */
static const pc_dw_variant* best_variant(void) {
  uint64_t features = pterun_cpu_features();
  size_t v = PC_DW_COUNT;
  while (v-- > 1)
    if ((g_variants[v].isa & features) == g_variants[v].isa) break;
  pc_used_mark(g_ran, v);
  return &g_variants[v];
}

/* Runs `rows` tasks of `per_row` multiply-adds each, in tiles big enough to
 * amortise the atomic counter, on as many threads as the work pays for. */
static void run_split(pterun_threadpool* pool, size_t max_threads, pc_dw_job* j, size_t rows,
                      size_t per_row, uint32_t ps) {
  const uint32_t flags = pc_parallel_flags(max_threads, (double)rows * (double)per_row, ps);
  const size_t threads = pterun_threadpool_threads_for(pool, flags);
  size_t tile = per_row >= PC_DW_TASK_MIN_FMA ? 1 : PC_DW_TASK_MIN_FMA / (per_row ? per_row : 1);
  /* At least two tiles per thread, so a thread is not left idle by a tile
   * count that does not divide (3 tiles on 2 threads: 2/3 of the time). */
  if (threads > 1 && tile > 1 && rows / tile < 2 * threads) {
    tile = rows / (2 * threads);
    if (tile == 0) tile = 1;
  }
  if (threads <= 1 || tile >= rows) pool = NULL;
  pterun_parallelize_1d_tile(pool, pc_dw_task, j, rows, tile, flags);
}

int pterun_compute_f32_dwconv2d_nchw(pterun_threadpool* pool, size_t max_threads,
                                     const pterun_compute_dwconv2d* p, const float* in,
                                     const float* w, const float* bias, float* out) {
  if (!valid_nchw(p)) return -1;
  pc_dw_job j = {best_variant()->fn_nchw, p, in, w, bias, out};
  run_split(pool, max_threads, &j, p->batch * p->out_c,
            p->out_h * p->out_w * p->kernel_h * p->kernel_w, PC_PS_F32_DW_NCHW_TAP);
  return 0;
}

/* NHWC vectorises over channels (over a channel's outputs with a
 * multiplier): the runnable variant with the fewest vector steps plus
 * scalar leftovers for that count, the wider on a tie (8 channels: AVX2's
 * one vector, not AVX-512's eight scalar ones). */
static const pc_dw_variant* nhwc_variant(const pterun_compute_dwconv2d* p) {
  const uint64_t features = pterun_cpu_features();
  const size_t dm = p->out_c / p->in_c, n = dm == 1 ? p->out_c : dm;
  size_t best = 0, cost = SIZE_MAX;
  for (size_t v = 0; v < PC_DW_COUNT; ++v) {
    if ((g_variants[v].isa & features) != g_variants[v].isa) continue;
    const size_t c = n / g_variants[v].lanes + n % g_variants[v].lanes;
    if (c <= cost) best = v, cost = c;
  }
  pc_used_mark(g_ran, best);
  return &g_variants[best];
}

int pterun_compute_f32_dwconv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                     const pterun_compute_dwconv2d* p, const float* in,
                                     const float* w, const float* bias, float* out) {
  if (!valid(p)) return -1;
  pc_dw_job j = {nhwc_variant(p)->fn, p, in, w, bias, out};
  run_split(pool, max_threads, &j, p->batch * p->out_h,
            p->out_w * p->out_c * p->kernel_h * p->kernel_w, PC_PS_F32_DW_NHWC_TAP);
  return 0;
}
