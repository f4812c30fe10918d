/* GB/s of packed weights read by the low-bit linear engine
 * (pterun_compute_lowbit_linear, behind torchao::_linear_8bit_act_{n}bit)
 * for the decode GEMV (M = 1), every width, every microkernel this CPU runs,
 * and the layout a loaded method runs (1-3 / 5-7 bits repacked at load; GB/s
 * still counts the program's packed bytes), 1 and 2 threads of
 * libpterun_threadpool, next to this machine's measured read bandwidth.
 * Usage: bench_lowbit [n k iters]   (default 4096 4096 30) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Read bandwidth: sum 64-bit words of a 256 MiB buffer, split over `threads`
 * (the pool's tiles), best of 5. */
typedef struct {
  const uint64_t* buf;
  uint64_t sums[64];
} bw_ctx;
static void bw_task(void* c, size_t start, size_t count) {
  bw_ctx* b = (bw_ctx*)c;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i, end = (start + count) * 4096;
  for (i = start * 4096; i < end; i += 4) {
    s0 += b->buf[i];
    s1 += b->buf[i + 1];
    s2 += b->buf[i + 2];
    s3 += b->buf[i + 3];
  }
  b->sums[start % 64] += s0 + s1 + s2 + s3;
}
static double read_bandwidth(pterun_threadpool* pool) {
  size_t n = (size_t)256 << 20;
  uint64_t* buf = malloc(n);
  bw_ctx b;
  double best = 0.0;
  int r;
  if (buf == NULL) return 0.0;
  memset(buf, 1, n);
  memset(&b, 0, sizeof b);
  b.buf = buf;
  for (r = 0; r < 5; ++r) {
    double t0 = now(), gbs;
    pterun_parallelize_1d_tile(pool, bw_task, &b, n / 8 / 4096, 256, 0);
    gbs = (double)n / (now() - t0) / 1e9;
    if (gbs > best) best = gbs;
  }
  free(buf);
  return best;
}

static uint32_t g_rng = 1;
static uint32_t rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}

/* Random codes, scales 0.01, sums and zero points 0, no bias. */
static uint8_t* make(pterun_compute_lowbit_weights* w, int nbit, int64_t n, int64_t k,
                     size_t* bytes) {
  const int64_t gs = 32, tiles = (n + 7) / 8, groups = k / gs;
  const size_t per_group = (size_t)(gs * nbit) + 64;
  uint8_t* buf;
  int64_t t, g;
  int j;
  *bytes = 64 + (size_t)(tiles * groups) * per_group;
  if ((buf = malloc(*bytes)) == NULL) return NULL;
  for (t = 0; t < tiles; ++t)
    for (g = 0; g < groups; ++g) {
      uint8_t* p = buf + 64 + (size_t)(t * groups + g) * per_group;
      float sc = 0.01f;
      for (j = 0; j < gs * nbit; ++j) p[j] = (uint8_t)rnd();
      for (j = 0; j < 8; ++j) memcpy(p + gs * nbit + 4 * j, &sc, 4);
      memset(p + gs * nbit + 32, 0, 32);
    }
  w->nbit = nbit;
  w->has_zeros = 0;
  w->has_bias = 0;
  w->n = n;
  w->k = k;
  w->group_size = gs;
  w->tile_bytes = (uint64_t)(groups * (int64_t)per_group);
  w->tiles = buf + 64;
  return buf;
}

int main(int argc, char** argv) {
  int64_t n = argc > 2 ? atoll(argv[1]) : 4096, k = argc > 2 ? atoll(argv[2]) : 4096;
  int iters = argc > 3 ? atoi(argv[3]) : 30, nbit, it, th;
  size_t nuk, v, bytes;
  const pterun_compute_lowbit_ukernel* uk = pterun_compute_lowbit_ukernels(&nuk);
  pterun_threadpool* pools[3] = {NULL, NULL, NULL};
  float *x = malloc((size_t)k * 4), *y = malloc((size_t)n * 4);
  int64_t i;
  if (x == NULL || y == NULL || k % 32 != 0 || n < 1) return 1;
  for (th = 1; th <= 2; ++th) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = (size_t)th;
    if (pterun_threadpool_create(&o, &pools[th]) != PTERUN_STATUS_OK) return 1;
  }
  for (i = 0; i < k; ++i) x[i] = (float)(rnd() % 2001) * 1e-3f - 1.0f;
  printf("read bandwidth (256 MiB sum): 1 thread %.2f GB/s, 2 threads %.2f GB/s\n",
         read_bandwidth(pools[1]), read_bandwidth(pools[2]));
  printf("low-bit GEMV M=1 n=%lld k=%lld group 32 (best of %d)\n", (long long)n, (long long)k,
         iters);
  printf("| bits | MB of weights | microkernel | 1 thread ms | GB/s | 2 threads ms | GB/s |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (nbit = 1; nbit <= 8; ++nbit) {
    pterun_compute_lowbit_weights w;
    uint8_t* buf = make(&w, nbit, n, k, &bytes);
    if (buf == NULL) return 1;
    size_t rb = pterun_compute_lowbit_repack_bytes(&w);
    pterun_compute_lowbit_weights rw;
    uint8_t* rbuf = rb != 0 ? malloc(rb) : NULL;
    if (rbuf != NULL) pterun_compute_lowbit_repack(&w, rbuf, &rw);
    /* rows v < nuk: the program's layout per microkernel; v == nuk: what a
     * loaded method runs after repacking 1-3 / 5-7 bits at load */
    for (v = 0; v <= nuk; ++v) {
      double best[3] = {1e30, 1e30, 1e30};
      const pterun_compute_lowbit_weights* ww = v < nuk ? &w : &rw;
      const pterun_compute_lowbit_ukernel* u =
          v < nuk ? &uk[v] : pterun_compute_lowbit_select(pterun_cpu_features());
      if (v == nuk && rbuf == NULL) break;
      if (v < nuk && (uk[v].isa & pterun_cpu_features()) != uk[v].isa) continue;
      if (uk[v].isa == 0 && nuk > 1 && n * k > (1 << 22)) iters = iters > 3 ? 3 : iters;
      for (th = 1; th <= 2; ++th)
        for (it = 0; it < iters; ++it) {
          double t0 = now();
          if (pterun_compute_lowbit_linear_ex(NULL, ww, x, 1, y, u, pools[th], 0) !=
              PTERUN_STATUS_OK)
            return 1;
          t0 = now() - t0;
          if (t0 < best[th]) best[th] = t0;
        }
      printf("| %d | %.2f | %s%s | %.3f | %.2f | %.3f | %.2f |\n", nbit, (double)bytes / 1e6,
             u->name, v < nuk ? "" : " (repacked at load)", best[1] * 1e3,
             (double)bytes / best[1] / 1e9, best[2] * 1e3, (double)bytes / best[2] / 1e9);
      fflush(stdout);
    }
    free(buf);
    free(rbuf);
  }
  pterun_threadpool_destroy(pools[1]);
  pterun_threadpool_destroy(pools[2]);
  free(x);
  free(y);
  return 0;
}
