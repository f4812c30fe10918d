/* bench_qgemm: GOP/s (2 ops per multiply-add) of the int8 GEMM engine
 * (libpterun_compute, src/compute/qgemm/) for every microkernel this CPU can
 * run, at linear and im2col-convolution shapes, with the requantising (u8 out)
 * epilogue. (A vpmaddwd throughput loop gave figures below the microkernel's
 * own on this shared machine, so no "peak" is printed: see
 * docs/performance.md.)
 *
 *   bench_qgemm [--min-ms N] [--threads N] [--shape MxNxK]...
 *
 * Each figure is the best of repeated runs lasting at least --min-ms
 * (default 300) in total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"

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
    {1024, 1024, 1024, "square"},
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

  pterun_cpu_features_string(features, feat, sizeof feat);
  printf("usable (PTERUN_ISA_MASK applied): %s\n", feat);
  printf("default int8 microkernel: %s\n", pterun_compute_qs8_gemm_select(features)->name);
  printf("threads: %zu\n\n", pterun_threadpool_size(pool));
  printf("%-40s %6s %6s %6s %9s  %s\n", "microkernel", "M", "N", "K", "GOP/s", "shape");
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
      printf("%-40s %6lld %6lld %6lld %9.1f  %s\n", uk->name, (long long)s->m, (long long)s->n,
             (long long)s->k, 2.0 * (double)s->m * (double)s->n * (double)s->k / best * 1e-9,
             s->what);
      fflush(stdout);
      free(buf);
    }
    free(a), free(w), free(c), free(scale);
  }
  pterun_threadpool_destroy(pool);
  return 0;
}
