/* bench_qdwconv: microseconds per call of the int8 depthwise convolution
 * (libpterun_compute, src/compute/qgemm/qdwconv*), NCHW and channels-last, on
 * the depthwise layers of the benchmark's int8 MobileNetV2 (bench/models,
 * qmbv2: 3x3 filters, padding 1, int8 in and out), single-threaded. The NHWC
 * figure leaves out the two transposes the fused int8 convolution adds
 * around it (kernels/quantized/q_int8.c, dw_run_nhwc).
 *
 *   bench_qdwconv [--calls N] (default 2000 per layer and layout)
 *
 * Each figure is the mean of N calls after one untimed call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/compute.h"
#include "pterun/tensor.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct layer {
  size_t c, h, w, stride;
} layer;

static const layer k_layers[] = {
    {32, 64, 64, 1},  {96, 64, 64, 2},  {144, 32, 32, 1}, {144, 32, 32, 2},
    {192, 16, 16, 1}, {192, 16, 16, 2}, {384, 8, 8, 1},
};

/* Mean microseconds of one call of the layout (nhwc or not); -1 when refused. */
static double time_layer(const layer* l, int nhwc, int calls) {
  pterun_compute_dwconv2d p;
  memset(&p, 0, sizeof p);
  p.batch = 1, p.in_h = l->h, p.in_w = l->w, p.in_c = l->c, p.out_c = l->c;
  p.kernel_h = p.kernel_w = 3, p.stride_h = p.stride_w = l->stride;
  p.dilation_h = p.dilation_w = 1, p.pad_top = p.pad_left = 1;
  p.out_h = (l->h + 2 - 3) / l->stride + 1, p.out_w = (l->w + 2 - 3) / l->stride + 1;
  const size_t in_n = l->c * l->h * l->w, out_n = l->c * p.out_h * p.out_w;
  int8_t* x = malloc(in_n);
  int8_t* w = malloc(l->c * 9);
  int16_t* w16 = malloc(sizeof(int16_t) * l->c * 9);
  float* scale = malloc(sizeof(float) * l->c);
  int8_t* y = malloc(out_n);
  double us = -1.0;
  if (x == NULL || w == NULL || w16 == NULL || scale == NULL || y == NULL) goto done;
  for (size_t i = 0; i < in_n; ++i) x[i] = (int8_t)(i * 7);
  for (size_t i = 0; i < l->c * 9; ++i) w[i] = (int8_t)(i * 3), w16[i] = (int16_t)(i % 100);
  for (size_t i = 0; i < l->c; ++i) scale[i] = 0.001f;
  pterun_compute_qs8_epilogue ep;
  memset(&ep, 0, sizeof ep);
  ep.a_zp = 3, ep.scale = scale, ep.scale_per_column = 1;
  ep.out_inv_scale = 20.0f, ep.out_zp = 5, ep.q_min = -128, ep.q_max = 127;
  double t0 = 0.0;
  for (int it = -1; it < calls; ++it) {
    if (it == 0) t0 = now_s();
    const int r = nhwc ? pterun_compute_qs8_dwconv2d_nhwc(NULL, 1, &p, x, PTERUN_DTYPE_I8, w16,
                                                          NULL, &ep, y, PTERUN_DTYPE_I8)
                       : pterun_compute_qs8_dwconv2d_nchw(NULL, 1, &p, x, PTERUN_DTYPE_I8, w, &ep,
                                                          y, PTERUN_DTYPE_I8);
    if (r != 0) goto done;
  }
  us = (now_s() - t0) / calls * 1e6;
done:
  free(x), free(w), free(w16), free(scale), free(y);
  return us;
}

int main(int argc, char** argv) {
  int calls = 2000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_qdwconv [--calls N]\n");
      return 2;
    }
  }
  if (calls < 1) {
    fprintf(stderr, "bench_qdwconv: --calls wants a positive count\n");
    return 2;
  }
  printf("| layer (int8, 3x3, pad 1) | NCHW us | NHWC us | MMAC |\n|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof k_layers / sizeof k_layers[0]; ++i) {
    const layer* l = &k_layers[i];
    const size_t o = (l->h - 1) / l->stride + 1;
    const double a = time_layer(l, 0, calls), b = time_layer(l, 1, calls);
    if (a < 0 || b < 0) {
      fprintf(stderr, "bench_qdwconv: layer %zu refused or out of memory\n", i);
      return 1;
    }
    printf("| %zu ch, %zux%zu -> %zux%zu | %.1f | %.1f | %.2f |\n", l->c, l->h, l->w, o, o, a, b,
           (double)(l->c * o * o * 9) / 1e6);
  }
  return 0;
}
