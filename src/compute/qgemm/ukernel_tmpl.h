/* Body of an int8 GEMM microkernel for a SIMD ISA (interface: ukernel.h).
 * Included by qs8_<isa>.c after defining:
 *   GT_FN                 function name
 *   GT_MR, GT_NRV         tile rows, and B vectors per group of 4 K values
 *   GT_A_STEP, GT_B_STEP  bytes of one row's group in A, of one group of B
 *   GT_VEC                vector type
 *   GT_ZERO()             all-zero vector
 *   GT_BCAST_A(p)         one row's group of 4 A values (at p) in every lane
 *   GT_LOAD_B(p)          one B vector (unaligned)
 *   GT_DOT(acc, a, b)     acc + the lane-wise int32 dot products of a and b
 *   GT_STORE_ROW(c, acc, add)  reduce acc[0..GT_NRV) to NR int32 sums and
 *                         store them to (add: add them to) c[0..NR)
 *   GT_BCAST_IG(p)        4 uint8 A values at p, in GT_BCAST_A's form (the
 *                         indirect entry GT_FN##_ig reads A where it lies)
 *   GT_FLIP(v)            v with every byte XORed with 0x80 (int8 A to uint8)
 * Accumulators (GT_MR x GT_NRV vectors) stay in registers: every index is a
 * compile-time constant after unrolling. */
#define GT_CAT_(a, b) a##b
#define GT_CAT(a, b) GT_CAT_(a, b)

void GT_FN(size_t kq, const void* a, const void* b, int32_t* c, size_t ldc, int add) {
  const unsigned char* ap = (const unsigned char*)a;
  const unsigned char* bp = (const unsigned char*)b;
  GT_VEC acc[GT_MR][GT_NRV];
  size_t q;
  int i, j;
  PC_QS8_UNROLL
  for (i = 0; i < GT_MR; ++i) {
    PC_QS8_UNROLL
    for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_ZERO();
  }
  for (q = 0; q < kq; ++q) {
    GT_VEC bv[GT_NRV];
    PC_QS8_UNROLL
    for (j = 0; j < GT_NRV; ++j) bv[j] = GT_LOAD_B(bp + (size_t)j * (GT_B_STEP / GT_NRV));
    bp += GT_B_STEP;
    PC_QS8_UNROLL
    for (i = 0; i < GT_MR; ++i) {
      GT_VEC av = GT_BCAST_A(ap + (size_t)i * GT_A_STEP);
      PC_QS8_UNROLL
      for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_DOT(acc[i][j], av, bv[j]);
    }
    ap += (size_t)GT_MR * GT_A_STEP;
  }
  PC_QS8_UNROLL
  for (i = 0; i < GT_MR; ++i) GT_STORE_ROW(c + (size_t)i * ldc, acc[i], add);
}

/* The indirect entry's sums (ukernel.h), added to acc: segments of A that
 * lie where the caller's rows point (a channels-last image), no packed panel;
 * an int8 A is shifted to uint8 as it is broadcast (one XOR per row and
 * group: `flip` is a constant once inlined). Shared by fn##_ig and, where an
 * ISA file defines one, its requantising entry fn##_igq. */
static inline __attribute__((always_inline)) void GT_CAT(GT_FN, _ig_sums)(
    size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows, const void* b,
    GT_VEC acc[GT_MR][GT_NRV], const int flip) {
  const unsigned char* bp = (const unsigned char*)b;
  size_t s, q;
  int i, j;
  for (s = 0; s < nseg; ++s) {
    const uint8_t* ar[GT_MR];
    PC_QS8_UNROLL
    for (i = 0; i < GT_MR; ++i) ar[i] = rows[i] + seg[s].off;
    for (q = 0; q < seg[s].kq; ++q) {
      GT_VEC bv[GT_NRV];
      PC_QS8_UNROLL
      for (j = 0; j < GT_NRV; ++j) bv[j] = GT_LOAD_B(bp + (size_t)j * (GT_B_STEP / GT_NRV));
      bp += GT_B_STEP;
      PC_QS8_UNROLL
      for (i = 0; i < GT_MR; ++i) {
        GT_VEC av = GT_BCAST_IG(ar[i] + q * 4);
        if (flip) av = GT_FLIP(av);
        PC_QS8_UNROLL
        for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_DOT(acc[i][j], av, bv[j]);
      }
    }
  }
}

static inline __attribute__((always_inline)) void GT_CAT(GT_FN, _ig_body)(
    size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows, const void* b,
    int32_t* c, size_t ldc, const int flip) {
  GT_VEC acc[GT_MR][GT_NRV];
  int i, j;
  PC_QS8_UNROLL
  for (i = 0; i < GT_MR; ++i) {
    PC_QS8_UNROLL
    for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_ZERO();
  }
  GT_CAT(GT_FN, _ig_sums)(nseg, seg, rows, b, acc, flip);
  PC_QS8_UNROLL
  for (i = 0; i < GT_MR; ++i) GT_STORE_ROW(c + (size_t)i * ldc, acc[i], 0);
}

void GT_CAT(GT_FN, _ig)(size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows,
                        const void* b, int32_t* c, size_t ldc, int a_signed) {
  if (a_signed)
    GT_CAT(GT_FN, _ig_body)(nseg, seg, rows, b, c, ldc, 1);
  else
    GT_CAT(GT_FN, _ig_body)(nseg, seg, rows, b, c, ldc, 0);
}
#undef GT_CAT
#undef GT_CAT_
