/* f32 GEMM microkernels: the interface shared by engine_f32.c (the driver) and the
 * per-ISA files f32_<isa>.c. Internal to libpterun_compute. The manifest
 * f32_ukernels.inc lists every variant; the tests and the benchmarks reach
 * them through pterun_compute_f32_gemm_ukernels(). */
#ifndef PTERUN_SRC_COMPUTE_GEMM_UKERNEL_H_
#define PTERUN_SRC_COMPUTE_GEMM_UKERNEL_H_

/* C standard */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* pterun public */
#include "pterun/cpu.h"
/* libpterun_compute internal */
#include "src/compute/internal.h"

/* The microkernel contract and descriptor are libpterun_compute's internal
 * interface (src/compute/internal.h: pterun_compute_f32_gemm_fn,
 * pterun_compute_f32_gemm_ukernel; opaque in pterun/compute.h); the variants
 * themselves are pc_-prefixed, reached through the table. */
typedef pterun_compute_f32_gemm_ukernel pc_f32_gemm_ukernel;

/* Each microkernel also comes as fn##_ep with an epilogue applied while the
 * tile is in registers, after alpha and the add: + bias[i] on row i (bias
 * NULL: none), then the activation (PTERUN_COMPUTE_ACT_*, the exact
 * semantics of engine_f32.c's act_f32). Same operations, same bits as storing the
 * tile and running the epilogue over C. An M = 1 kernel (MR == 1) reads its
 * NR columns as two strips of NR / 2, the second at b + b_ss (NR / 2 when B
 * is contiguous; kc x NR / 2 in the GEMM kernel's packed B, so a product with
 * one row streams the weight packed at load); other kernels ignore b_ss.
 * b_rows NULL: B row k at b + k * b_ks; else at b + b_rows[k] (b_ks unused):
 * rows read in place wherever they are (a convolution's image). */
typedef void (*pc_f32_gemm_ep_fn)(size_t mr, size_t kc, const float* a, size_t a_rs, size_t a_ks,
                                  const float* b, size_t b_ks, size_t b_ss, const int64_t* b_rows,
                                  float* c, size_t ldc, float alpha, int add, const float* bias,
                                  int act, float lo, float hi);

/* Each microkernel also comes as fn##_ig, the indirect-GEMM entry of a
 * channels-last convolution (igemm_f32.c; the template's comment has the
 * contract): ind holds ntaps x MR row pointers, b one filter strip packed
 * at load (ntaps x cin rows of NR floats), bias NR floats or NULL; stores
 * rows < mr and columns < nc only. */
typedef void (*pc_f32_igemm_fn)(size_t mr, size_t nc, size_t ntaps, size_t cin,
                                const float* const* ind, const float* b, float* c, size_t ldc,
                                const float* bias, int act, float lo, float hi);

/* Prototypes from the manifest. */
#define PC_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc)                                                   \
  void fn(size_t mr_, size_t kc_, const float* a, size_t a_rs, size_t a_ks, const float* b,        \
          size_t b_ks, float* c, size_t ldc, float alpha, int add);                                \
  void fn##_ep(size_t mr_, size_t kc_, const float* a, size_t a_rs, size_t a_ks, const float* b,   \
               size_t b_ks, size_t b_ss, const int64_t* b_rows, float* c, size_t ldc, float alpha, \
               int add, const float* bias, int act, float lo, float hi);                           \
  void fn##_ig(size_t mr_, size_t nc, size_t ntaps, size_t cin, const float* const* ind,           \
               const float* b, float* c, size_t ldc, const float* bias, int act, float lo,         \
               float hi);
#include "src/compute/gemm/f32_ukernels.inc"
#undef PC_GEMM_UKERNEL

/* Loop-unrolling hint for the fixed-trip loops of microkernels. */
#if defined(__clang__)
#define PC_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define PC_UNROLL _Pragma("GCC unroll 32")
#else
#define PC_UNROLL
#endif

/* Prefetch hints for a cache line about to be written / read (no fault on
 * any address, so they may point past the matrix). */
#if defined(__GNUC__)
#define PC_PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#define PC_PREFETCH_R(p) __builtin_prefetch((p), 0, 3)
#else
#define PC_PREFETCH_W(p) ((void)(p))
#define PC_PREFETCH_R(p) ((void)(p))
#endif

#endif /* PTERUN_SRC_COMPUTE_GEMM_UKERNEL_H_ */
