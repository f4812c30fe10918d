/* int8 GEMM microkernel in portable C: the reference every SIMD variant is
 * tested against, and the fallback on every CPU. 4 x 8 tile, uint8 A x int8 B
 * (interface: ukernel.h). Plain int32 loops; the compiler may vectorise them
 * for the target's baseline SIMD. */
#include "src/compute/qgemm/ukernel.h"

#define MR 4
#define NR 8

void pc_qs8_gemm_ukernel__scalar_4x8(size_t kq, const void* a, const void* b, int32_t* c,
                                     size_t ldc, int add) {
  const uint8_t* ap = (const uint8_t*)a;
  const int8_t* bp = (const int8_t*)b;
  int32_t acc[MR][NR] = {{0}};
  size_t q;
  int i, j, t;
  for (q = 0; q < kq; ++q, ap += MR * PC_QS8_KR, bp += NR * PC_QS8_KR)
    for (i = 0; i < MR; ++i)
      for (j = 0; j < NR; ++j) {
        int32_t s = 0;
        for (t = 0; t < PC_QS8_KR; ++t)
          s += (int32_t)ap[i * PC_QS8_KR + t] * (int32_t)bp[j * PC_QS8_KR + t];
        acc[i][j] += s;
      }
  for (i = 0; i < MR; ++i)
    for (j = 0; j < NR; ++j)
      c[(size_t)i * ldc + j] = (add ? c[(size_t)i * ldc + j] : 0) + acc[i][j];
}
