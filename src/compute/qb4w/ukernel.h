/* 4-bit blockwise linear microkernels: the interface shared by qb4w.c (the
 * packer and driver) and the per-ISA files qb4w_<isa>.c. Internal to
 * libpterun_compute. The manifest qb4w_ukernels.inc lists every variant;
 * tests and benchmarks reach them through pterun_compute_qb4w_ukernels().
 *
 * Panel layout (docs/lowbit.md): 16 output columns per panel. Per block g,
 * block / 8 chunks of 64 bytes: byte 4c + i of chunk j holds, for column c,
 * code[8j + i] + 8 in its low nibble and code[8j + 4 + i] + 8 in its high
 * one (k relative to the block), so one 4-byte activation group broadcast
 * against the low nibbles gives every column's sum of 4 products in its
 * 32-bit lane (vpdpbusd). After all blocks' codes: the block scales (16 per
 * block, bf16 or float32), then kz[16] = sum over blocks, in order, of
 * scale * (float)(sum of the block's codes), then bias[16] when present;
 * the panel is padded to 64 bytes. Missing columns have code 0 and scale,
 * kz and bias 0.
 *
 * Arithmetic, per row and column (every variant, bit for bit):
 *   t_g   = sum over block g of qa * code   (int32, exact: D - 8 * asum)
 *   acc   = acc + scale_g * (float)t_g       (from 0.0f, block order)
 *   y     = (acc - (float)a_zero * kz) * a_scale   [+ bias]
 * each operation rounded on its own (no fused multiply-add). */
#ifndef PTERUN_SRC_COMPUTE_QB4W_UKERNEL_H_
#define PTERUN_SRC_COMPUTE_QB4W_UKERNEL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "src/compute/internal.h"

enum {
  PC_QB4W_COLS = 16,        /* columns per panel */
  PC_QB4W_MAX_BLOCKS = 1024 /* blocks per row: the driver's stack sums */
};

/* Where a panel's block scales, kz and bias start. */
static inline uint64_t pc_qb4w_scales_offset(const pterun_compute_qb4w_weights* w) {
  return (uint64_t)w->k * 8u;
}
static inline uint64_t pc_qb4w_kz_offset(const pterun_compute_qb4w_weights* w) {
  return (uint64_t)w->k * 8u + (uint64_t)(w->k / w->block) * 16u * (w->scales_bf16 ? 2u : 4u);
}

#define PC_QB4W_UKERNEL(isa, fn)                                                                   \
  void fn(const pterun_compute_qb4w_weights* w, const uint8_t* tiles, size_t ntiles,               \
          const int8_t* qa, const int32_t* asum8, float a_scale, int32_t a_zero, float* out);
#include "src/compute/qb4w/qb4w_ukernels.inc"
#undef PC_QB4W_UKERNEL

#endif /* PTERUN_SRC_COMPUTE_QB4W_UKERNEL_H_ */
