/* bench_qgemm: GOP/s (2 ops per multiply-add) of the int8 GEMM engine
 * (libpterun_compute, src/compute/qgemm/) for every microkernel this CPU can
 * run, at linear, im2col-convolution and cube (256^3..1024^3) shapes, with the
 * requantising (u8 out) epilogue, beside the machine's measured int8 peak of
 * one core:
 *
 *   vpmaddwd peak   independent register-only vpmaddwd (16 int16 pairs -> 8
 *                   int32 sums = 32 ops per instruction), the rate the AVX2
 *                   kernels are built on;
 *   exact-sum peak  vpmaddwd + vpaddd into int32 accumulators, the loop every
 *                   exact AVX2 int8 kernel runs (without VNNI there is no fused
 *                   multiply-accumulate for int8; vpmaddubsw would be twice as
 *                   wide but saturates at int16).
 *
 *   bench_qgemm [--min-ms N] [--threads N] [--shape MxNxK]...
 *
 * Each figure is the best of repeated runs lasting at least --min-ms
 * (default 300) in total. With one thread the time is the calling thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID): on a shared machine wall time of a long
 * product mostly measures the other processes; with a pool it is wall time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"

typedef struct shape {
  int64_t m, n, k;
  const char* what;
} shape;

static const shape k_default_shapes[] = {
    {1, 4096, 4096, "batch 1 linear"},
    {8, 1024, 1024, "small batch linear"},
    {128, 512, 512, "linear"},
    {3136, 64, 576, "conv 3x3, 64->64 ch, 56x56 (im2col)"},
    {784, 128, 1152, "conv 3x3, 128->128 ch, 28x28"},
    {3136, 64, 64, "conv 1x1, 64->64 ch, 56x56"},
    {256, 256, 256, "cube"},
    {512, 512, 512, "cube"},
    {1024, 1024, 1024, "cube"},
};

static clockid_t g_clock = CLOCK_MONOTONIC;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(g_clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* One core's int8 peaks in GOP/s (see the top): 12 independent vpmaddwd per
 * round on register operands, in assembly (compiled from intrinsics, GCC kept
 * the accumulators in memory and measured store forwarding instead). with_add:
 * each product is added to its own int32 accumulator. */
#define PB_R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define PB_MADD(i) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #i "\n\t"
#define PB_MADD_ADD(i)                                                                             \
  "vpmaddwd %%ymm14, %%ymm15, %%ymm12\n\t"                                                         \
  "vpaddd %%ymm12, %%ymm" #i ", %%ymm" #i "\n\t"
#define PB_CLOBBERS                                                                                \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",         \
      "xmm11", "xmm12", "xmm14", "xmm15"
static double madd_peak_avx2(double min_s, int with_add) {
  double best = 0;
  __asm__ volatile("vpxor %%xmm14, %%xmm14, %%xmm14\n\tvpxor %%xmm15, %%xmm15, %%xmm15\n\t" ::
                       : "xmm14", "xmm15");
  for (double total = 0; total < min_s;) {
    double t0 = now_s();
    for (int it = 0; it < 200000; ++it) {
      if (with_add)
        __asm__ volatile(PB_R12(PB_MADD_ADD)::: PB_CLOBBERS);
      else
        __asm__ volatile(PB_R12(PB_MADD)::: PB_CLOBBERS);
    }
    double dt = now_s() - t0, g = 200000.0 * 12 * 32 / dt * 1e-9;
    total += dt;
    if (g > best) best = g;
  }
  return best;
}
#endif

int main(int argc, char** argv) {
  shape shapes[64];
  size_t nshapes = 0, nuk, i, u;
  const pterun_compute_qs8_gemm_ukernel* uks = pterun_compute_qs8_gemm_ukernels(&nuk);
  double min_s = 0.3;
  pterun_threadpool* pool = NULL;
  uint64_t features = pterun_cpu_features();
  char feat[256];

  for (i = 1; i < (size_t)argc; ++i) {
    if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < (size_t)argc) {
      min_s = atof(argv[++i]) / 1000.0;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < (size_t)argc) {
      pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
      o.threads = (size_t)atoi(argv[++i]);
      if (o.threads > 1 && pterun_threadpool_create(&o, &pool) != PTERUN_STATUS_OK) return 1;
    } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < (size_t)argc && nshapes < 64) {
      long long m, n, k;
      if (sscanf(argv[++i], "%lldx%lldx%lld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1 ||
          k > PTERUN_COMPUTE_QS8_MAX_K) {
        fprintf(stderr, "bad --shape '%s' (want MxNxK)\n", argv[i]);
        return 2;
      }
      shapes[nshapes++] = (shape){m, n, k, "custom"};
    } else {
      fprintf(stderr, "usage: bench_qgemm [--min-ms N] [--threads N] [--shape MxNxK]...\n");
      return 2;
    }
  }
  if (nshapes == 0)
    for (i = 0; i < sizeof k_default_shapes / sizeof k_default_shapes[0]; ++i)
      shapes[nshapes++] = k_default_shapes[i];

  if (pool == NULL) g_clock = CLOCK_THREAD_CPUTIME_ID;
  pterun_cpu_features_string(features, feat, sizeof feat);
  printf("usable (PTERUN_ISA_MASK applied): %s\n", feat);
  printf("default int8 microkernel: %s\n", pterun_compute_qs8_gemm_select(features)->name);
  printf("threads: %zu (%s time)\n", pterun_threadpool_size(pool),
         pool == NULL ? "thread CPU" : "wall");
  double peak = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if ((features & PTERUN_CPU_X86_AVX2) != 0) {
    peak = madd_peak_avx2(min_s, 0);
    printf(
        "measured int8 peak (one core): vpmaddwd %.1f GOP/s, exact-sum (vpmaddwd + vpaddd) "
        "%.1f GOP/s\n",
        peak, madd_peak_avx2(min_s, 1));
  }
#endif
  printf("\n%-40s %6s %6s %6s %9s %7s  %s\n", "microkernel", "M", "N", "K", "GOP/s", "%peak",
         "shape");
  for (i = 0; i < nshapes; ++i) {
    const shape* s = &shapes[i];
    uint8_t* a = malloc((size_t)(s->m * s->k));
    int8_t* w = malloc((size_t)(s->n * s->k));
    uint8_t* c = malloc((size_t)(s->m * s->n));
    float* scale = malloc(sizeof(float) * (size_t)s->n);
    int64_t j;
    if (!a || !w || !c || !scale) return 1;
    for (j = 0; j < s->m * s->k; ++j) a[j] = (uint8_t)(j * 7 + 3);
    for (j = 0; j < s->n * s->k; ++j) w[j] = (int8_t)(j * 5 + 1);
    for (j = 0; j < s->n; ++j) scale[j] = 1e-4f;
    for (u = 0; u < nuk; ++u) {
      const pterun_compute_qs8_gemm_ukernel* uk = &uks[u];
      if ((uk->isa & features) != uk->isa) continue;
      size_t cap = pterun_compute_qs8_pack_size(uk, s->n, s->k);
      void* buf = aligned_alloc(64, (cap + 63) / 64 * 64);
      pterun_compute_qs8_packed pk;
      pterun_compute_qs8_epilogue ep;
      pterun_compute_matrix am = {a, PTERUN_DTYPE_U8, s->k, 1};
      pterun_compute_matrix cm = {c, PTERUN_DTYPE_U8, s->n, 1};
      double best = 1e30, total = 0;
      int reps = 0;
      if (buf == NULL || pterun_compute_qs8_pack(uk, s->n, s->k, w, s->k, 1, buf, cap, &pk) != 0)
        return 1;
      memset(&ep, 0, sizeof ep);
      ep.a_zp = 128, ep.scale = scale, ep.scale_per_column = 1, ep.out_inv_scale = 20.0f;
      ep.out_zp = 128, ep.q_min = 0, ep.q_max = 255;
      while (total < min_s || reps < 3) {
        double t0 = now_s(), dt;
        pterun_compute_qs8_gemm(pool, 0, s->m, &am, NULL, NULL, PTERUN_DTYPE_U8, &pk, &ep, &cm);
        dt = now_s() - t0;
        total += dt;
        if (dt < best) best = dt;
        ++reps;
      }
      const double gops = 2.0 * (double)s->m * (double)s->n * (double)s->k / best * 1e-9;
      const double threads = (double)pterun_threadpool_size(pool);
      printf("%-40s %6lld %6lld %6lld %9.1f %6.0f%%  %s\n", uk->name, (long long)s->m,
             (long long)s->n, (long long)s->k, gops,
             peak > 0 ? 100.0 * gops / (peak * threads) : 0.0, s->what);
      fflush(stdout);
      free(buf);
    }
    free(a), free(w), free(c), free(scale);
  }
  pterun_threadpool_destroy(pool);
  return 0;
}
