/* Low-bit linear microkernels: the interface shared by linear.c (the
 * driver) and the per-ISA files lowbit_<isa>.c. Internal to
 * libpterun_compute. The manifest lowbit_ukernels.inc lists every variant;
 * tests and benchmarks reach them through pterun_compute_lowbit_ukernels(). */
#ifndef PTERUN_SRC_COMPUTE_LOWBIT_UKERNEL_H_
#define PTERUN_SRC_COMPUTE_LOWBIT_UKERNEL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/cpu.h"
#include "src/compute/internal.h"

/* Prototypes from the manifest. */
#define PC_LOWBIT_UKERNEL(isa, fn, tile, quant)                                                    \
  void fn(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]);           \
  void tile(const pterun_compute_lowbit_weights* w, const uint8_t* t,                              \
            const pterun_compute_lowbit_qrow* row, float out[8]);                                  \
  void quant(const float* x, int64_t k, int64_t gs, int8_t* qa, int64_t* asum, float* scale,       \
             int32_t* zero);                                                                       \
  void tile##_many(const pterun_compute_lowbit_weights* w, const uint8_t* t,                       \
                   const pterun_compute_lowbit_qrow* row, float* out, size_t n);
#include "src/compute/lowbit/lowbit_ukernels.inc"
#undef PC_LOWBIT_UKERNEL

/* A whole tile from `dot`'s group products and the portable float epilogue
 * (linear.c): the reference every tile function matches bit for bit, and
 * their fallback for what their fast path does not cover. */
void pc_lowbit_tile_generic(pterun_compute_lowbit_dot_fn dot,
                            const pterun_compute_lowbit_weights* w, const uint8_t* t,
                            const pterun_compute_lowbit_qrow* row, float out[8]);

/* `n` tiles through `tile` one after another: the multi-tile entry point
 * (manifest name: the tile function's, suffixed _many) of the variants
 * without a shared-load form. */
void pc_lowbit_tiles_each(pterun_compute_lowbit_tile_fn tile,
                          const pterun_compute_lowbit_weights* w, const uint8_t* t,
                          const pterun_compute_lowbit_qrow* row, float* out, size_t n);

/* The stored (biased, unsigned) values of `count` (32, 64 or 128) nbit
 * values in torchao's chunk layout; for nbit 8 the bytes as they are. */
void pc_lowbit_unpack_u(int nbit, int count, const uint8_t* src, uint8_t* u);

/* Dynamic per-row int8 activation quantization (act.c, docs/lowbit.md):
 * scale and int32 zero point of a row of k floats; the reciprocal torchao
 * uses; q = clamp(nearbyint(fma(x, inv, zero)), -128, 127). */
void pc_lowbit_act_qparams(const float* x, int64_t k, float* scale, int32_t* zero);
/* The same from the row's minimum and maximum (as its loop finds them: a
 * NaN counts only as the first value). */
void pc_lowbit_act_qparams_range(float vmin, float vmax, float* scale, int32_t* zero);
/* The same from a SIMD scan: per-lane minima lo[] and maxima hi[] (every
 * lane started at x[0]), then the n values at tail the vectors left. */
void pc_lowbit_act_qparams_lanes(const float* lo, const float* hi, int lanes, const float* tail,
                                 int64_t n, float* scale, int32_t* zero);
float pc_lowbit_act_inv(float scale);
void pc_lowbit_act_quantize(const float* x, int64_t count, float inv, int32_t zero, int8_t* q);

#endif /* PTERUN_SRC_COMPUTE_LOWBIT_UKERNEL_H_ */
