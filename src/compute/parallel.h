/* libpterun_compute (internal): what a parallel call is estimated to cost on
 * one thread, for the pool's split rule (PTERUN_PARALLEL_WORK_NS: every
 * thread of a split call gets at least the pool's min_work_ns of it).
 *
 * Each family counts its work in its own unit and converts it with a rate
 * measured at one thread on calls near the split threshold, where the
 * estimate matters (docs/performance.md, "Thread thresholds"). An estimate
 * decides only how many threads a call may use, never how its work is cut,
 * so results stay bit-identical whatever it says. */
#ifndef PTERUN_SRC_COMPUTE_PARALLEL_H_
#define PTERUN_SRC_COMPUTE_PARALLEL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/threadpool.h"

/* Picoseconds per unit of work, one thread (Zen 4, AVX-512 variants). */
#define PC_PS_F32_GEMM_FMA 30u     /* f32 GEMM: multiply-adds, packing included */
#define PC_PS_F32_CONV_FMA 35u     /* direct small-channel convolution: multiply-adds */
#define PC_PS_F32_DW_NCHW_TAP 120u /* f32 depthwise convolution, NCHW: taps */
#define PC_PS_F32_DW_NHWC_TAP 70u  /* f32 depthwise convolution, NHWC: taps */
#define PC_PS_QS8_GEMM_MAC 10u     /* int8 GEMM: multiply-adds */
#define PC_PS_QS8_DW_MAC 200u      /* int8 depthwise convolution: taps */
#define PC_PS_F32_VMATH_ELEM 1000u /* vector math: elements (exp, tanh, ...) */
#define PC_PS_QB4W_BYTE 30u        /* 4-bit blockwise linear: bytes of panels read */

/* The flags of a call of `units` work at `ps` picoseconds a unit, capped at
 * max_threads (0: no cap). */
static inline uint32_t pc_parallel_flags(size_t max_threads, double units, uint32_t ps) {
  double ns = units * (double)ps / 1000.0;
  uint64_t n = ns >= 1e12 ? (uint64_t)1e12 : (uint64_t)ns;
  return PTERUN_PARALLEL_MAX_THREADS(max_threads) | PTERUN_PARALLEL_WORK_NS(n);
}

#endif /* PTERUN_SRC_COMPUTE_PARALLEL_H_ */
