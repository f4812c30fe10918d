/* GB/s of packed weights read by torchao::_linear_8bit_act_4bit_weight.out
 * (M = 1, the decode GEMV) next to this machine's measured read bandwidth.
 * Usage: bench_lowbit [n k iters]. Force the portable path with
 * PTERUN_ISA_MASK=0. One thread (libpterun_threadpool is not wired in yet). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/kernels/lowbit.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_values.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Read bandwidth: sum 64-bit words of a 256 MiB buffer (best of 5). */
static double read_bandwidth(void) {
  size_t n = (size_t)256 << 20, words = n / 8, i;
  uint64_t* buf = malloc(n);
  volatile uint64_t sink = 0;
  double best = 0.0;
  int r;
  if (buf == NULL) return 0.0;
  memset(buf, 1, n);
  for (r = 0; r < 5; ++r) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    double t0 = now(), gbs;
    for (i = 0; i + 4 <= words; i += 4) {
      s0 += buf[i];
      s1 += buf[i + 1];
      s2 += buf[i + 2];
      s3 += buf[i + 3];
    }
    gbs = (double)n / (now() - t0) / 1e9;
    sink += s0 + s1 + s2 + s3;
    if (gbs > best) best = gbs;
  }
  free(buf);
  (void)sink;
  return best;
}

int main(int argc, char** argv) {
  int64_t n = argc > 2 ? atoll(argv[1]) : 4096, k = argc > 2 ? atoll(argv[2]) : 4096;
  int iters = argc > 3 ? atoi(argv[3]) : 20, it;
  const int64_t gs = 32, tiles = (n + 7) / 8, groups = k / gs;
  size_t tile = (size_t)(groups * (gs * 4 + 64)), bytes = 64 + (size_t)tiles * tile;
  int32_t hw[8] = {6712, 1, 4, 0, 0, 8, 16, 2};
  uint8_t* w = malloc(bytes);
  float *x = malloc((size_t)k * 4), *y = malloc((size_t)n * 4);
  static uint8_t scratch[1 << 20];
  pterun_logger logger = pterun_logger_silent();
  pterun_kernel_fn fn =
      pt_find_kernel(pterun_kernels_lowbit(), "torchao::_linear_8bit_act_4bit_weight.out");
  double t0, best = 1e30;
  size_t i;
  if (w == NULL || x == NULL || y == NULL || fn == NULL) return 1;
  srand(1);
  for (i = 0; i < bytes; ++i) w[i] = (uint8_t)rand();
  memset(w, 0, 64);
  memcpy(w, hw, sizeof hw);
  for (i = 0; i < (size_t)(tiles * groups); ++i) { /* scales 0.01, sums 0 */
    uint8_t* g = w + 64 + (i / (size_t)groups) * tile + (i % (size_t)groups) * (gs * 4 + 64);
    float sc[8] = {0.01f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f};
    memcpy(g + gs * 4, sc, sizeof sc);
    memset(g + gs * 4 + 32, 0, 32);
  }
  for (i = 0; i < (size_t)k; ++i) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  {
    int64_t xs[2] = {1, k}, bs[1] = {(int64_t)bytes}, os[2] = {1, n};
    pterun_tensor tx = pt_tensor_make(PTERUN_DTYPE_F32, 2, xs, x, (size_t)k * 4);
    pterun_tensor tw = pt_tensor_make(PTERUN_DTYPE_I8, 1, bs, w, bytes);
    pterun_tensor ty = pt_tensor_make(PTERUN_DTYPE_F32, 2, os, y, (size_t)n * 4);
    pterun_value v[7] = {pt_val_tensor(&tx), pt_val_tensor(&tw), pt_val_int(gs),    pt_val_int(n),
                         pt_val_int(k),      pt_val_tensor(&ty), pt_val_tensor(&ty)};
    pterun_value* a[7] = {&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]};
    for (it = 0; it < iters; ++it) {
      pterun_status st;
      t0 = now();
      st = pterun_kernel_invoke(fn, "lowbit", a, 7, &logger, scratch, sizeof scratch);
      t0 = now() - t0;
      if (st != PTERUN_STATUS_OK) return 1;
      if (t0 < best) best = t0;
    }
  }
  printf(
      "4-bit GEMV n=%lld k=%lld group 32: %.3f ms, %.2f GB/s of weights (%zu bytes), "
      "1 thread; measured read bandwidth %.2f GB/s\n",
      (long long)n, (long long)k, best * 1e3, (double)bytes / best / 1e9, bytes, read_bandwidth());
  free(w);
  free(x);
  free(y);
  return 0;
}
