/* f32 GEMM microkernels: the interface shared by nn_gemm.c, the per-ISA
 * files gemm_<isa>.c, the tests and the benchmarks. Internal to
 * libpterun_kernels_portable. The manifest gemm_f32.inc lists every variant.
 */
#ifndef PTERUN_KERNELS_PORTABLE_GEMM_UKERNEL_H_
#define PTERUN_KERNELS_PORTABLE_GEMM_UKERNEL_H_

/* C standard */
#include <stddef.h>
#include <stdint.h>

/* pterun public */
#include "pterun/cpu.h"

/*
 * One MR x NR tile:  C[i][j] = alpha * sum_k A(i, k) * B[k][j]  (+ C[i][j] if add)
 * for i < MR, j < NR, k < kc, where
 *   A(i, k) = a[min(i, mr - 1) * a_rs + k * a_ks]   (rows >= mr repeat row mr-1:
 *             with an unpacked A nothing past its last row is read; the extra
 *             rows of C are garbage the caller must not keep)
 *   B[k][j] = b[k * b_ks + j]: a packed strip (b_ks = NR, zero padded) or
 *             NR columns of a row-major f32 B read in place (b_ks = ldb)
 *   C[i][j] = c[i * ldc + j], all MR x NR written.
 * Packed A is a_rs = 1, a_ks = MR; a row-major A is a_rs = lda, a_ks = 1.
 * Requires 1 <= mr <= MR and kc >= 1. No alignment is required.
 * Kernels with MR == 1 serve M == 1 products (a row vector times B), where a
 * taller tile would waste most of its work.
 */
typedef void (*pt_f32_gemm_ukernel_fn)(size_t mr, size_t kc, const float* a, size_t a_rs,
                                       size_t a_ks, const float* b, size_t b_ks, float* c,
                                       size_t ldc, float alpha, int add);

typedef struct pt_f32_gemm_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pt_f32_gemm_ukernel_fn fn;
  const char* name;
  int mr, nr; /* tile */
  int kc, mc; /* preferred K block (B micro-panel in L1) and M block (A block in L2) */
} pt_f32_gemm_ukernel;

/* Prototypes from the manifest. */
#define PT_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc)                                                   \
  void fn(size_t mr_, size_t kc_, const float* a, size_t a_rs, size_t a_ks, const float* b,        \
          size_t b_ks, float* c, size_t ldc, float alpha, int add);
#include "kernels/portable/gemm_f32.inc"
#undef PT_GEMM_UKERNEL

/* Every variant compiled into this build, scalar first, in priority order. */
const pt_f32_gemm_ukernel* pt_f32_gemm_ukernels(size_t* count_out);

/* The last variant of pt_f32_gemm_ukernels() with MR > 1 whose isa bits are
 * all in `features` (pterun_cpu_features() in production); never NULL. */
const pt_f32_gemm_ukernel* pt_f32_gemm_ukernel_select(uint64_t features);
/* The same among the MR == 1 variants; NULL when none fits. */
const pt_f32_gemm_ukernel* pt_f32_gemm_ukernel_select_m1(uint64_t features);

/* Loop-unrolling hint for the fixed-trip loops of microkernels. */
#if defined(__clang__)
#define PT_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define PT_UNROLL _Pragma("GCC unroll 32")
#else
#define PT_UNROLL
#endif

/* Prefetch hint for a cache line about to be written (no fault on any
 * address, so it may point past the matrix). */
#if defined(__GNUC__)
#define PT_PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#else
#define PT_PREFETCH_W(p) ((void)(p))
#endif

#endif /* PTERUN_KERNELS_PORTABLE_GEMM_UKERNEL_H_ */
