/* f32 GEMM microkernel in portable C: the reference every SIMD variant is
 * tested against, and the fallback on every CPU. 4 x 16 tile with one
 * accumulator row per A row and a fixed-length inner loop, the shape the
 * compiler's baseline vectoriser (SSE2 on x86-64) accepts. */
#include <string.h>

#include "kernels/portable/gemm_ukernel.h"

#define MR 4
#define NR 16

void pt_f32_gemm_ukernel__scalar_4x16(size_t mr, size_t kc, const float* a, size_t a_rs,
                                      size_t a_ks, const float* b, size_t b_ks, float* c,
                                      size_t ldc, float alpha, int add) {
  float c0[NR] = {0}, c1[NR] = {0}, c2[NR] = {0}, c3[NR] = {0};
  const float* a0 = a;
  const float* a1 = mr > 1 ? a0 + a_rs : a0;
  const float* a2 = mr > 2 ? a1 + a_rs : a1;
  const float* a3 = mr > 3 ? a2 + a_rs : a2;
  float* rows[MR];
  const float* accs[MR];
  size_t k, ko = 0;
  int i, j;
  for (k = 0; k < kc; ++k, ko += a_ks, b += b_ks) {
    float x0 = a0[ko], x1 = a1[ko], x2 = a2[ko], x3 = a3[ko];
    for (j = 0; j < NR; ++j) {
      c0[j] += x0 * b[j];
      c1[j] += x1 * b[j];
      c2[j] += x2 * b[j];
      c3[j] += x3 * b[j];
    }
  }
  accs[0] = c0, accs[1] = c1, accs[2] = c2, accs[3] = c3;
  for (i = 0; i < MR; ++i) rows[i] = c + (size_t)i * ldc;
  for (i = 0; i < MR; ++i) {
    if (add)
      for (j = 0; j < NR; ++j) rows[i][j] += alpha * accs[i][j];
    else
      for (j = 0; j < NR; ++j) rows[i][j] = alpha * accs[i][j];
  }
}
