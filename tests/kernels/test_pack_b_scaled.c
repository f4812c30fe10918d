/* A channels-last 1x1 convolution's W^T held only packed and scaled (a
 * folded batch norm): the product reads the copy packed at load
 * (pterun_compute_gemm_pack_b_scaled), and one the packed copy does not fit
 * repacks it from the unfolded weight (kernels/portable/conv/pointwise_cl.c
 * pk_pack_b_scaled). Both must give the bytes of a product over the folded
 * weight, (float)((double)w * scale) per output channel, as a dense B.
 * Run twice by ctest: as is, and with PTERUN_ISA_MASK=0 (scalar engine). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/portable/conv/pointwise_cl.c"
#include "kernels/portable/prepack.c" /* pk_prepacked_for, which pointwise_cl.c calls */
#include "pterun/compute.h"
#include "tests/harness/pt_test.h"

static int pt_failures;

static uint32_t g_rng = 77;
static float rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (float)((g_rng >> 9) & 0xffff) / 32768.0f - 1.0f;
}

/* C = A (m x cin) x W^T three ways; W is [cout][cin] (a 1x1 weight). */
static int one(int64_t m, int64_t cin, int64_t cout) {
  float* a = malloc(sizeof(float) * (size_t)(m * cin));
  float* w = malloc(sizeof(float) * (size_t)(cout * cin));
  float* wf = malloc(sizeof(float) * (size_t)(cout * cin));
  double* scale = malloc(sizeof(double) * (size_t)cout);
  float* c[3];
  for (int k = 0; k < 3; ++k) c[k] = calloc((size_t)(m * cout), sizeof(float));
  for (int64_t i = 0; i < m * cin; ++i) a[i] = rnd();
  for (int64_t j = 0; j < cout; ++j) scale[j] = 0.25 + 2.0 * (rnd() + 1.0);
  for (int64_t j = 0; j < cout; ++j)
    for (int64_t i = 0; i < cin; ++i) {
      w[j * cin + i] = rnd();
      wf[j * cin + i] = (float)((double)w[j * cin + i] * scale[j]);
    }
  pterun_compute_matrix am = {a, PTERUN_DTYPE_F32, cin, 1};
  pterun_compute_matrix bw = {w, PTERUN_DTYPE_F32, 1, cin};  /* W^T, unfolded */
  pterun_compute_matrix bf = {wf, PTERUN_DTYPE_F32, 1, cin}; /* W^T, folded */
  pterun_compute_gemm_ws ws;
  size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, cin, cout);
  void* mem = NULL;
  PT_CHECK(bytes > 0 && posix_memalign(&mem, 64, bytes) == 0);
  const pterun_compute_packed* pb =
      pterun_compute_gemm_pack_b_scaled(mem, bytes, cin, cout, &bw, scale);
  PT_CHECK(pb != NULL);
  pk_scaled_b sb = {w, 1, cin, scale};
  for (int k = 0; k < 3; ++k) {
    pterun_compute_gemm_init(NULL, &ws, PTERUN_DTYPE_F32);
    pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
    if (k == 1) o.packed_b = pb;
    if (k == 2) {
      o.pack_b = pk_pack_b_scaled;
      o.pack_b_ctx = &sb;
    }
    pterun_compute_matrix cm = {c[k], PTERUN_DTYPE_F32, cout, 1};
    PT_CHECK(pterun_compute_gemm_ex(&ws, m, cout, cin, &am, k == 0 ? &bf : &bw, &cm, 1.0, 0, &o) ==
             0);
  }
  int ok = memcmp(c[0], c[1], sizeof(float) * (size_t)(m * cout)) == 0 &&
           memcmp(c[0], c[2], sizeof(float) * (size_t)(m * cout)) == 0;
  if (!ok)
    fprintf(stderr, "m %lld cin %lld cout %lld: scaled packs differ from the folded weight\n",
            (long long)m, (long long)cin, (long long)cout);
  free(mem);
  free(a);
  free(w);
  free(wf);
  free(scale);
  for (int k = 0; k < 3; ++k) free(c[k]);
  return ok ? 0 : 1;
}

static int scaled_packs_match_the_folded_weight(void) {
  static const int64_t shapes[][3] = {{1, 8, 24},   {4, 16, 16},  {125, 64, 64}, {49, 96, 130},
                                      {7, 300, 17}, {33, 5, 100}, {2, 513, 40}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
    if (one(shapes[s][0], shapes[s][1], shapes[s][2]) != 0) return 1;
  return 0;
}

int main(void) {
  PT_RUN(scaled_packs_match_the_folded_weight);
  return pt_failures != 0;
}
