/* Dispatch of the f32 direct convolution for few input channels
 * (pterun_compute_f32_conv2d_nchw): the widest variant the CPU (narrowed by
 * PTERUN_ISA_MASK) runs, (batch, output row) bands x output-channel blocks
 * split over the pool. */
#include "src/compute/conv/conv.h"

#include "pterun/cpu.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"
#include "pterun/threadpool.h"

typedef struct pc_cv_variant {
  uint64_t isa;
  const char* name;
  pc_cv_fn fn;
  size_t lanes, ocb; /* vector width, output channels per tile */
} pc_cv_variant;

static const pc_cv_variant g_variants[] = {
    {0, "v4", pc_f32_conv2d__v4, 4, 4},
#if defined(PTERUN_GEMM_AVX2)
    {PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA, "avx2", pc_f32_conv2d__avx2, 8,
     4},
#endif
#if defined(PTERUN_GEMM_AVX512)
    {PTERUN_CPU_X86_AVX512F | PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA, "avx512f",
     pc_f32_conv2d__avx512f, 16, 8},
#endif
};
#define PC_CV_COUNT (sizeof g_variants / sizeof g_variants[0])

/* Geometry the variant's loops run: sizes that make sense, the tap list
 * within bounds, the band buffer big enough for one output row. */
static int valid(const pterun_compute_conv2d* p, const pc_cv_variant* v) {
  pc_cv_layout l = {0, 0, 0, 0};
  return p->batch != 0 && p->in_c != 0 && p->in_h != 0 && p->in_w != 0 && p->out_c != 0 &&
         p->out_h != 0 && p->out_w != 0 && p->kernel_h != 0 && p->kernel_w != 0 &&
         p->stride_h != 0 && p->stride_w != 0 && p->dilation_h != 0 && p->dilation_w != 0 &&
         p->kernel_h <= PTERUN_COMPUTE_CONV2D_MAX_TAPS &&
         p->kernel_w <= PTERUN_COMPUTE_CONV2D_MAX_TAPS &&
         p->in_c <= PTERUN_COMPUTE_CONV2D_MAX_TAPS &&
         p->in_c * p->kernel_h * p->kernel_w <= PTERUN_COMPUTE_CONV2D_MAX_TAPS &&
         pc_cv_layout_for(p, v->lanes, &l);
}

const char* pterun_compute_f32_conv2d_variant(size_t variant) {
  if (variant >= PC_CV_COUNT) return NULL;
  uint64_t isa = g_variants[variant].isa;
  return (isa & pterun_cpu_features()) == isa ? g_variants[variant].name : NULL;
}

int pterun_compute_f32_conv2d_nchw_with(size_t variant, const pterun_compute_conv2d* p,
                                        const float* in, const float* w, const float* bias,
                                        float* out) {
  if (pterun_compute_f32_conv2d_variant(variant) == NULL || !valid(p, &g_variants[variant]))
    return -1;
  g_variants[variant].fn(p, in, w, bias, out, 0, p->batch * p->out_h, 0, p->out_c);
  return 0;
}

typedef struct pc_cv_job {
  pc_cv_fn fn;
  const pterun_compute_conv2d* p;
  const float *in, *w, *bias;
  float* out;
} pc_cv_job;

static void pc_cv_task(void* ctx, size_t i, size_t j, size_t ni, size_t nj) {
  const pc_cv_job* t = ctx;
  t->fn(t->p, t->in, t->w, t->bias, t->out, i, ni, j, nj);
}

static atomic_uchar g_ran[PC_CV_COUNT];
PC_USED_FAMILY(pc_used_conv2d, "conv2d", g_variants, g_ran);

/* Multiply-adds per task below which splitting costs more than it saves. */
#define PC_CV_TASK_MIN_FMA ((size_t)1 << 15)

int pterun_compute_f32_conv2d_nchw(pterun_threadpool* pool, size_t max_threads,
                                   const pterun_compute_conv2d* p, const float* in, const float* w,
                                   const float* bias, float* out) {
  uint64_t features = pterun_cpu_features();
  size_t v = PC_CV_COUNT;
  while (v-- > 1)
    if ((g_variants[v].isa & features) == g_variants[v].isa) break;
  const pc_cv_variant* var = &g_variants[v];
  if (!valid(p, var)) return -1;
  pc_used_mark(g_ran, v);
  pc_cv_layout l = {0, 0, 0, 0};
  pc_cv_layout_for(p, var->lanes, &l);
  const size_t rows = p->batch * p->out_h;
  const size_t per_row = p->out_w * p->out_c * p->in_c * p->kernel_h * p->kernel_w;
  /* Row tiles: about 16 of them (load balance), at most one band each and
   * big enough to pay for a wake-up; channel blocks split in two only when
   * the rows alone give too few tasks. */
  size_t ti = (rows + 15) / 16;
  const size_t min_rows = PC_CV_TASK_MIN_FMA / (per_row ? per_row : 1) + 1;
  if (ti < min_rows) ti = min_rows;
  if (ti > l.band) ti = l.band;
  size_t tj = p->out_c;
  if ((rows + ti - 1) / ti < 4 && p->out_c > var->ocb)
    tj = ((p->out_c + 1) / 2 + var->ocb - 1) / var->ocb * var->ocb;
  pc_cv_job j = {var->fn, p, in, w, bias, out};
  pterun_parallelize_2d_tile(
      pool, pc_cv_task, &j, rows, p->out_c, ti, tj,
      pc_parallel_flags(max_threads, (double)rows * (double)per_row, PC_PS_F32_CONV_FMA));
  return 0;
}
