/* bench_transpose: nanoseconds per call of the byte and float32 transposes
 * (libpterun_compute, src/compute/layout/), single-threaded, on the shapes
 * the int8 MobileNetV2 of the benchmark (bench/models, qmbv2) and the
 * keyword-spotting CNN (kws) transpose, at their real strides and at a
 * stride padded by 64 bytes: a stride that is a multiple of 4096 bytes puts
 * every destination row in one L1 set (docs/performance.md, session 15).
 *
 *   bench_transpose [--calls N] [--shape ROWSxCOLSxSRC_RSxDST_RS]...
 *
 * Each figure is the fastest of 20 rounds of N calls (default 2000), the
 * data staying in cache, as it does between the layers that transpose it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/compute.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct shape {
  long long rows, cols, srs, drs;
  int f32; /* element: 0 byte, 1 float32 */
} shape;

static const shape k_shapes[] = {
    /* qmbv2: the int8 GEMM's staged NCHW output (64x64 planes) and the
     * NCHW -> rows input copy */
    {64, 32, 256, 4096, 0},
    {64, 96, 256, 4096, 0},
    {32, 64, 4096, 32, 0},
    {96, 32, 1024, 96, 0},
    {3, 128, 16384, 3, 0},
    /* kws: a 64-channel 25x5 plane to NHWC and back around the depthwise */
    {64, 125, 125, 64, 1},
    {125, 64, 64, 125, 1},
};

/* Fastest nanoseconds of one call. */
static double time_shape(const shape* s, int calls) {
  const size_t esz = s->f32 ? sizeof(float) : 1;
  unsigned char* src = calloc((size_t)(s->rows * s->srs) + 64, esz);
  unsigned char* dst = calloc((size_t)(s->cols * s->drs) + 64, esz);
  double best = 1e30;
  if (src == NULL || dst == NULL) {
    free(src), free(dst);
    return -1;
  }
  for (size_t i = 0; i < (size_t)(s->rows * s->srs) * esz; ++i) src[i] = (unsigned char)(i * 7u);
  for (int round = 0; round < 20; ++round) {
    const double t0 = now_s();
    for (int c = 0; c < calls; ++c) {
      if (s->f32)
        pterun_compute_f32_transpose(s->rows, s->cols, (const float*)(void*)src, s->srs,
                                     (float*)(void*)dst, s->drs);
      else
        pterun_compute_u8_transpose(s->rows, s->cols, src, s->srs, dst, s->drs);
    }
    const double t = (now_s() - t0) / calls;
    if (t < best) best = t;
  }
  free(src), free(dst);
  return best * 1e9;
}

static void report(const shape* s, int calls) {
  const double bytes = (double)(s->rows * s->cols) * (s->f32 ? 4.0 : 1.0);
  const double ns = time_shape(s, calls);
  printf("| %s | %lld x %lld | %lld | %lld | %.1f | %.2f |\n", s->f32 ? "f32" : "u8", s->rows,
         s->cols, s->srs, s->drs, ns, bytes / ns);
}

int main(int argc, char** argv) {
  int calls = 2000, nuser = 0;
  shape user[32];
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc && nuser < 32) {
      shape s = {0, 0, 0, 0, 0};
      if (sscanf(argv[++i], "%lldx%lldx%lldx%lld", &s.rows, &s.cols, &s.srs, &s.drs) != 4 ||
          s.rows < 1 || s.cols < 1 || s.srs < s.cols || s.drs < s.rows) {
        fprintf(stderr, "bad --shape '%s' (want ROWSxCOLSxSRC_RSxDST_RS, strides >= widths)\n",
                argv[i]);
        return 2;
      }
      user[nuser++] = s;
    } else {
      fprintf(stderr, "usage: bench_transpose [--calls N] [--shape ROWSxCOLSxSRC_RSxDST_RS]...\n");
      return 2;
    }
  }
  if (calls < 1) calls = 1;
  printf("| type | rows x cols | src stride | dst stride | ns | bytes/ns |\n");
  printf("|---|---|---|---|---|---|\n");
  if (nuser > 0) {
    for (int i = 0; i < nuser; ++i) report(&user[i], calls);
    return 0;
  }
  for (size_t i = 0; i < sizeof k_shapes / sizeof k_shapes[0]; ++i) {
    shape s = k_shapes[i];
    report(&s, calls);
    /* the same with the wider stride padded by 64 bytes */
    if (s.drs >= s.srs)
      s.drs += s.f32 ? 16 : 64;
    else
      s.srs += s.f32 ? 16 : 64;
    report(&s, calls);
  }
  return 0;
}
