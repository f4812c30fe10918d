/* bench_kernels: GFLOP/s of the f32 GEMM engine (libpterun_compute, src/compute/gemm/engine_f32.c)
 * for every microkernel this CPU can run, at several shapes, with the
 * packing buffers from a scratch arena ("arena") and from the kernel's stack
 * ("stack", what a method without scratch_bytes gets).
 *
 *   bench_kernels [--quick] [--min-ms N] [--shape MxNxK]... [--ukernel NAME] [--threads N]
 *                 [--no-stack] (arena only) [--cpu-time] (thread CPU time)
 *                 [--packed] (B packed before timing, as a weight at load)
 *                 [--cold] (caches flushed by a 64 MiB write before each timed run)
 *
 * Each figure is the best of repeated runs lasting at least --min-ms
 * (default 300) in total: 2*M*N*K / seconds. Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/kernel.h"
#include "src/compute/internal.h"

typedef struct shape {
  int64_t m, n, k;
  const char* what;
} shape;

static const shape k_default_shapes[] = {
    {64, 64, 64, "square"},
    {128, 128, 128, "square"},
    {256, 256, 256, "square"},
    {512, 512, 512, "square"},
    {1024, 1024, 1024, "square"},
    {2048, 2048, 2048, "square"},
    {1, 4096, 4096, "gemv-like (batch 1 linear)"},
    {8, 1024, 1024, "small batch linear"},
    {64, 3136, 576, "conv 3x3, 64->64 ch, 56x56 (im2col)"},
    {128, 784, 1152, "conv 3x3, 128->128 ch, 28x28"},
    {255, 257, 253, "odd sizes"},
};

/* --cpu-time: time the calling thread's CPU time instead of the wall clock
 * (single-threaded runs on a shared machine: preemption then costs nothing,
 * though other processes still share the caches). */
static clockid_t g_clock = CLOCK_MONOTONIC;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(g_clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Passed through pterun_kernel_invoke so the engine sees a real kernel
 * context (and its scratch arena) built by the public API. */
typedef struct job {
  const pterun_compute_f32_gemm_ukernel* uk;
  int64_t m, n, k;
  pterun_compute_matrix a, b, c;
} job;
static job g_job;
/* --packed: B packed once before timing (pterun_compute_gemm_pack), as a
 * linear's weight is at load; only for the microkernel the packing selects. */
static int g_packed;
/* --cold: 64 MiB written before every timed run, so the operands come from
 * memory (a model's weights evicted from L3 between executes). */
static unsigned char* g_evict;
static size_t g_evict_bytes;
static const pterun_compute_packed* g_pb;
static pterun_threadpool* g_pool; /* --threads N > 1 */

/* The measured FMA peak of one core: 12 independent chains of 8-wide FMAs
 * (more than latency x throughput on current x86), in GFLOP/s. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2,fma"))) static double fma_peak_avx2(double min_s) {
  __m256 acc[12], x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-7f);
  double best = 0;
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps((float)i);
  for (double total = 0; total < min_s;) {
    double t0 = now_s();
    for (int it = 0; it < 1000000; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    }
    double dt = now_s() - t0, gf = 1e6 * 12 * 8 * 2 / dt * 1e-9;
    total += dt;
    if (gf > best) best = gf;
  }
  float sink[8];
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_ps(sum, acc[i]);
  _mm256_storeu_ps(sink, sum);
  if (sink[0] == 12345.0f) printf(" ");
  return best;
}
#endif

static PTERUN_KERNEL(run_job) {
  pterun_compute_gemm_ws ws;
  (void)args;
  (void)nargs;
  pterun_compute_gemm_init_ex(ctx, &ws, PTERUN_DTYPE_F32, g_job.uk, g_pool, 0);
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  o.packed_b = g_pb;
  pterun_compute_gemm_ex(&ws, g_job.m, g_job.n, g_job.k, &g_job.a, &g_job.b, &g_job.c, 1.0, 0, &o);
  return PTERUN_STATUS_OK;
}

static double bench_one(const pterun_compute_f32_gemm_ukernel* uk, const shape* s, void* scratch,
                        size_t scratch_bytes, double min_s, float* a, float* b, float* c) {
  double best = 1e30, total = 0, flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
  int reps = 0;
  g_job.uk = uk;
  g_job.m = s->m, g_job.n = s->n, g_job.k = s->k;
  g_job.a = (pterun_compute_matrix){a, PTERUN_DTYPE_F32, s->k, 1};
  g_job.b = (pterun_compute_matrix){b, PTERUN_DTYPE_F32, s->n, 1};
  g_job.c = (pterun_compute_matrix){c, PTERUN_DTYPE_F32, s->n, 1};
  void* packed = NULL;
  g_pb = NULL;
  if (g_packed) {
    size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, s->k, s->n);
    packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (packed != NULL)
      g_pb =
          pterun_compute_gemm_pack(packed, bytes, PTERUN_COMPUTE_OPERAND_B, s->k, s->n, &g_job.b);
  }
  pterun_kernel_invoke(run_job, "bench", NULL, 0, NULL, scratch, scratch_bytes); /* warm-up */
  /* With --cold the 64 MiB write between runs takes far longer than a small
   * product: stop after 200 runs even if the timed total is short. */
  while ((total < min_s && (g_evict == NULL || reps < 200)) || reps < 3) {
    if (g_evict != NULL) memset(g_evict, reps & 0xff, g_evict_bytes);
    double t0 = now_s(), dt;
    pterun_kernel_invoke(run_job, "bench", NULL, 0, NULL, scratch, scratch_bytes);
    dt = now_s() - t0;
    total += dt;
    if (dt < best) best = dt;
    ++reps;
  }
  free(packed);
  g_pb = NULL;
  return flops / best * 1e-9;
}

int main(int argc, char** argv) {
  shape shapes[64];
  size_t nshapes = 0, nuk, i, u;
  const pterun_compute_f32_gemm_ukernel* uks = pterun_compute_f32_gemm_ukernels(&nuk);
  const char* only = NULL;
  double min_s = 0.3;
  int quick = 0, no_stack = 0;
  size_t scratch_bytes = (size_t)16 << 20;
  void* scratch;
  char feat[256];
  uint64_t features = pterun_cpu_features();

  for (i = 1; i < (size_t)argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--cold") == 0) {
      g_evict_bytes = (size_t)64 << 20;
      g_evict = malloc(g_evict_bytes);
      if (g_evict == NULL) return 1;
    } else if (strcmp(argv[i], "--packed") == 0) {
      g_packed = 1;
    } else if (strcmp(argv[i], "--cpu-time") == 0) {
      g_clock = CLOCK_THREAD_CPUTIME_ID;
    } else if (strcmp(argv[i], "--no-stack") == 0) {
      no_stack = 1;
    } else if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < (size_t)argc) {
      min_s = atof(argv[++i]) / 1000.0;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < (size_t)argc) {
      pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
      o.threads = (size_t)atoi(argv[++i]);
      if (o.threads > 1 && pterun_threadpool_create(&o, &g_pool) != PTERUN_STATUS_OK) return 1;
    } else if (strcmp(argv[i], "--ukernel") == 0 && i + 1 < (size_t)argc) {
      only = argv[++i];
    } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < (size_t)argc && nshapes < 64) {
      long long m, n, k;
      if (sscanf(argv[++i], "%lldx%lldx%lld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
        fprintf(stderr, "bad --shape '%s' (want MxNxK)\n", argv[i]);
        return 2;
      }
      shapes[nshapes++] = (shape){m, n, k, "custom"};
    } else {
      fprintf(stderr,
              "usage: bench_kernels [--quick] [--min-ms N] [--shape MxNxK]... [--ukernel NAME]"
              " [--threads N] [--no-stack] [--cpu-time] [--packed] [--cold]\n");
      return 2;
    }
  }
  if (nshapes == 0)
    for (i = 0; i < sizeof k_default_shapes / sizeof k_default_shapes[0]; ++i)
      if (!quick || k_default_shapes[i].m * k_default_shapes[i].n * k_default_shapes[i].k <=
                        (int64_t)512 * 512 * 512)
        shapes[nshapes++] = k_default_shapes[i];
  if (quick) min_s = min_s < 0.05 ? min_s : 0.05;

  pterun_cpu_features_string(pterun_cpu_detected_features(), feat, sizeof feat);
  printf("cpu features: %s\n", feat);
  pterun_cpu_features_string(features, feat, sizeof feat);
  printf("usable (PTERUN_ISA_MASK applied): %s\n", feat);
  printf("default microkernel: %s\n", pterun_compute_f32_gemm_select(features)->name);
#if defined(__x86_64__) && defined(__GNUC__)
  if ((features & (PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA)) ==
      (PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA))
    printf("measured FMA peak (AVX2, one core): %.1f GFLOP/s\n", fma_peak_avx2(min_s));
#endif
  printf("threads: %zu\n\n", pterun_threadpool_size(g_pool));
  printf("%-36s %6s %6s %6s %9s %9s  %s\n", "microkernel", "M", "N", "K", "arena", "stack",
         "shape (GFLOP/s)");

  scratch = aligned_alloc(64, scratch_bytes);
  if (scratch == NULL) return 1;
  for (i = 0; i < nshapes; ++i) {
    const shape* s = &shapes[i];
    float* a = (float*)malloc(sizeof(float) * (size_t)(s->m * s->k));
    float* b = (float*)malloc(sizeof(float) * (size_t)(s->k * s->n));
    float* c = (float*)malloc(sizeof(float) * (size_t)(s->m * s->n));
    int64_t j;
    if (a == NULL || b == NULL || c == NULL) return 1;
    for (j = 0; j < s->m * s->k; ++j) a[j] = (float)((j * 7 + 3) % 17) * 0.125f - 1.0f;
    for (j = 0; j < s->k * s->n; ++j) b[j] = (float)((j * 5 + 1) % 13) * 0.25f - 1.5f;
    /* Every usable microkernel, then "default": the engine's own selection
     * (the M = 1 kernel for one row, reading B packed for the GEMM kernel). */
    for (u = 0; u <= nuk; ++u) {
      const pterun_compute_f32_gemm_ukernel* uk = u < nuk ? &uks[u] : NULL;
      const char* name = uk != NULL ? uk->name : "default";
      double ga, gs;
      if (uk != NULL && (uk->isa & features) != uk->isa) continue;
      if (only != NULL && strstr(name, only) == NULL) continue;
      ga = bench_one(uk, s, scratch, scratch_bytes, min_s, a, b, c);
      gs = no_stack ? 0.0 : bench_one(uk, s, NULL, 0, min_s, a, b, c);
      printf("%-36s %6lld %6lld %6lld %9.1f %9.1f  %s\n", name, (long long)s->m, (long long)s->n,
             (long long)s->k, ga, gs, s->what);
      fflush(stdout);
    }
    free(a);
    free(b);
    free(c);
  }
  free(scratch);
  free(g_evict);
  return 0;
}
