/* int8 GEMM microkernel in portable C: the reference every SIMD variant is
 * tested against, and the fallback on every CPU. 4 x 8 tile, uint8 A x int8 B
 * (interface: ukernel.h). Plain int32 loops; the compiler may vectorise them
 * for the target's baseline SIMD. */
#include <string.h>

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

/* The indirect entry (ukernel.h): each run's groups of 4 A values gathered
 * into a panel on the stack, in chunks, for the kernel above (the loops the
 * compiler vectorises best; reading the rows in place measured slower). */
#define PC_QS8_SCALAR_IG_CHUNK 64
void pc_qs8_gemm_ukernel__scalar_4x8_ig(size_t nseg, const pterun_compute_qs8_seg* seg,
                                        const uint8_t* const* rows, const void* b, int32_t* c,
                                        size_t ldc, int a_signed) {
  const uint32_t flip = a_signed ? 0x80808080u : 0u; /* int8 A to uint8 */
  const int8_t* bp = (const int8_t*)b;
  uint8_t panel[PC_QS8_SCALAR_IG_CHUNK * MR * PC_QS8_KR];
  int add = 0;
  for (size_t s = 0; s < nseg; ++s)
    for (size_t q0 = 0; q0 < seg[s].kq; q0 += PC_QS8_SCALAR_IG_CHUNK) {
      const size_t n =
          seg[s].kq - q0 < PC_QS8_SCALAR_IG_CHUNK ? seg[s].kq - q0 : PC_QS8_SCALAR_IG_CHUNK;
      for (size_t q = 0; q < n; ++q)
        for (int i = 0; i < MR; ++i) {
          uint32_t v;
          memcpy(&v, rows[i] + seg[s].off + (q0 + q) * PC_QS8_KR, PC_QS8_KR);
          v ^= flip;
          memcpy(panel + (q * MR + (size_t)i) * PC_QS8_KR, &v, PC_QS8_KR);
        }
      pc_qs8_gemm_ukernel__scalar_4x8(n, panel, bp, c, ldc, add);
      bp += n * NR * PC_QS8_KR;
      add = 1;
    }
  if (!add) /* no K: the sums are 0 */
    for (int i = 0; i < MR; ++i) memset(c + (size_t)i * ldc, 0, NR * sizeof(int32_t));
}
