/* libpterun_compute's internal interface: the microkernel descriptors, the
 * tables of every variant compiled in and the entry points that run one
 * named variant. Not installed and part of no ABI: the installed header
 * pterun/compute.h has the entry points kernel libraries and applications
 * call, and declares these descriptors opaque. Used by libpterun_compute's
 * own files and, through the source tree, by the tests and benchmarks that
 * run each variant (tests/compute, tests/kernels, bench/). The functions are
 * exported (pterun_compute_*, so a test linked against the shared library
 * reaches them) but no installed header declares them. */
#ifndef PTERUN_SRC_COMPUTE_INTERNAL_H_
#define PTERUN_SRC_COMPUTE_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/compute.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- f32 GEMM microkernels ------------------------------------------------ */
/**
 * An f32 GEMM microkernel: one MR x NR tile,
 *   C[i][j] = alpha * sum_k A(i, k) * B[k][j]  (+ C[i][j] if add)
 * for i < MR, j < NR, k < kc, where A(i, k) = a[min(i, mr - 1) * a_rs + k * a_ks]
 * (rows past mr repeat row mr - 1, so nothing past A's last row is read; the
 * caller discards those rows of C), B[k][j] = b[k * b_ks + j] (a packed strip
 * with b_ks = NR, or NR columns of a row-major B in place), C[i][j] =
 * c[i * ldc + j], all MR x NR written. 1 <= mr <= MR, kc >= 1, no alignment.
 */
typedef void (*pterun_compute_f32_gemm_fn)(size_t mr, size_t kc, const float* a, size_t a_rs,
                                           size_t a_ks, const float* b, size_t b_ks, float* c,
                                           size_t ldc, float alpha, int add);

struct pterun_compute_f32_gemm_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pterun_compute_f32_gemm_fn fn;
  const char* name;
  int mr, nr; /* tile */
  int kc, mc; /* preferred K block (B micro-panel in L1) and M block (A block in L2) */
};

/** Every microkernel compiled into this build, scalar first, in priority
 *  order (tests and benchmarks run each). */
PTERUN_COMPUTE_API const pterun_compute_f32_gemm_ukernel* pterun_compute_f32_gemm_ukernels(
    size_t* count_out);
/** The last variant with MR > 1 whose ISA bits are all in `features`
 *  (pterun_cpu_features() in production, which PTERUN_ISA_MASK narrows);
 *  never NULL (the scalar one fits every CPU). */
PTERUN_COMPUTE_API const pterun_compute_f32_gemm_ukernel* pterun_compute_f32_gemm_select(
    uint64_t features);
/** The same among the MR == 1 (row vector) variants; NULL when none fits. */
PTERUN_COMPUTE_API const pterun_compute_f32_gemm_ukernel* pterun_compute_f32_gemm_select_m1(
    uint64_t features);

/* ---- int8 GEMM microkernels ----------------------------------------------- */
/**
 * An int8 GEMM microkernel: one MR x NR tile of int32 sums over kq groups of 4:
 *   C[i][j] (+)= sum_{q < kq, t < 4} A[q][i][t] * B[q][j][t]
 * A: a packed panel, kq x MR x 4 elements of uint8 (a_bytes 1) or of int16
 * holding the uint8 value (a_bytes 2); B: a packed strip, kq x NR x 4 int8
 * (b_bytes 1) or int16 (b_bytes 2); C[i][j] = c[i * ldc + j], all MR x NR
 * written (added to when `add`). kq >= 1; no alignment required.
 */
typedef void (*pterun_compute_qs8_gemm_fn)(size_t kq, const void* a, const void* b, int32_t* c,
                                           size_t ldc, int add);

/** One run of an indirect int8 GEMM's K (pterun_compute_qs8_conv2d_nhwc):
 *  kq groups of 4 bytes that lie `off` bytes after each output pixel's base
 *  pointer (a kernel row's or a tap's channels). */
typedef struct pterun_compute_qs8_seg {
  ptrdiff_t off;
  size_t kq;
} pterun_compute_qs8_seg;

/** The indirect entry of every microkernel:
 *   C[i][j] = sum_{s < nseg, q < seg[s].kq, t < 4} A(rows[i][seg[s].off + 4q + t]) * B[..][j][t]
 * A read where it lies (MR valid row pointers: a short tile repeats one) as
 * uint8, or with a_signed as int8 shifted to uint8 (byte ^ 0x80), B the strip
 * packed over the whole K (the segments in K order), C as the packed entry's
 * with add = 0. */
typedef void (*pterun_compute_qs8_igemm_fn)(size_t nseg, const pterun_compute_qs8_seg* seg,
                                            const uint8_t* const* rows, const void* b, int32_t* c,
                                            size_t ldc, int a_signed);

/** The requantising epilogue's constants for one strip of NR columns
 *  (pterun_compute_qs8_igemmq_fn): all NR entries readable (zero past the
 *  product's columns). */
typedef struct pterun_compute_qs8_rq {
  const int32_t* zsum; /* A's zero point x the column's weight sum */
  const float *sc, *bi;
  float inv, zpo, qlo, qhi; /* the output's 1/scale, zero point and code range */
} pterun_compute_qs8_rq;

/** An indirect entry that also finishes its tile (where a microkernel has
 *  one): the sums of fn_ig, then the int8 engine's requantisation (requant.h:
 *  y = (float)(sum - zsum) * sc + bi, its rounding and clamp), the same
 *  float operations as the separate epilogue (the same bits), stored as
 *  codes: rows [0, mrows) and columns [0, ncols) of the tile at
 *  c[i * ldc + j], one byte each (int8 or uint8: every code lies in
 *  [qlo, qhi]). */
typedef void (*pterun_compute_qs8_igemmq_fn)(size_t nseg, const pterun_compute_qs8_seg* seg,
                                             const uint8_t* const* rows, const void* b,
                                             const pterun_compute_qs8_rq* rq, uint8_t* c,
                                             size_t ldc, size_t mrows, size_t ncols, int a_signed);

struct pterun_compute_qs8_gemm_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pterun_compute_qs8_gemm_fn fn;
  pterun_compute_qs8_igemm_fn fn_ig;
  pterun_compute_qs8_igemmq_fn fn_igq; /* NULL: the driver's epilogue finishes fn_ig's tiles */
  const char* name;
  int mr, nr;           /* tile */
  int a_bytes, b_bytes; /* packed element sizes (1: u8 / s8, 2: int16) */
};

/** Every int8 microkernel compiled into this build, scalar (the reference)
 *  first, in priority order (tests and benchmarks run each). */
PTERUN_COMPUTE_API const pterun_compute_qs8_gemm_ukernel* pterun_compute_qs8_gemm_ukernels(
    size_t* count_out);
/** The last variant whose ISA bits are all in `features` (pterun_cpu_features()
 *  in production, narrowed by PTERUN_ISA_MASK); never NULL. */
PTERUN_COMPUTE_API const pterun_compute_qs8_gemm_ukernel* pterun_compute_qs8_gemm_select(
    uint64_t features);

/* ---- f32 vector math variants --------------------------------------------- */
/** Name of vector math variant `variant` (0: the 4-lane baseline) if it is
 *  built and this CPU (with PTERUN_ISA_MASK) can run it, else NULL. */
PTERUN_COMPUTE_API const char* pterun_compute_f32_unary_variant(size_t variant);
/** As pterun_compute_f32_unary on one variant, serially (tests, benchmarks);
 *  -1 when the op or the variant is unavailable. */
PTERUN_COMPUTE_API int pterun_compute_f32_unary_with(size_t variant, int op, const float* x,
                                                     float* y, size_t n);

/* ---- f32 depthwise convolution variants ----------------------------------- */
/** As pterun_compute_f32_dwconv2d_nchw on one variant, serially. */
PTERUN_COMPUTE_API int pterun_compute_f32_dwconv2d_nchw_with(size_t variant,
                                                             const pterun_compute_dwconv2d* p,
                                                             const float* in, const float* w,
                                                             const float* bias, float* out);
/** Name of depthwise variant `variant` (0: the 4-lane baseline) if it is built
 *  and this CPU (with PTERUN_ISA_MASK) can run it, else NULL. */
PTERUN_COMPUTE_API const char* pterun_compute_f32_dwconv2d_variant(size_t variant);
/** As pterun_compute_f32_dwconv2d_nhwc on one variant, serially (tests,
 *  benchmarks); -1 when the geometry or the variant is unusable. */
PTERUN_COMPUTE_API int pterun_compute_f32_dwconv2d_with(size_t variant,
                                                        const pterun_compute_dwconv2d* p,
                                                        const float* in, const float* w,
                                                        const float* bias, float* out);

/* ---- int8 depthwise convolution variants ---------------------------------- */
/** As pterun_compute_qs8_dwconv2d_nchw on staged variant `variant`, serially
 *  (tests, benchmarks); -1 also when the variant is unusable here or the
 *  geometry's rows do not fit its staging buffer. */
PTERUN_COMPUTE_API int pterun_compute_qs8_dwconv2d_nchw_with(
    size_t variant, const pterun_compute_dwconv2d* p, const void* in, int32_t in_dtype,
    const int8_t* w, const pterun_compute_qs8_epilogue* ep, void* out, int32_t out_dtype);
/** As pterun_compute_qs8_dwconv2d_nhwc on variant `variant`, serially
 *  (tests, benchmarks); -1 also when the variant is unusable here. */
PTERUN_COMPUTE_API int pterun_compute_qs8_dwconv2d_nhwc_with(size_t variant,
                                                             const pterun_compute_dwconv2d* p,
                                                             const void* in, int32_t in_dtype,
                                                             const int16_t* w, const int32_t* bias,
                                                             const pterun_compute_qs8_epilogue* ep,
                                                             void* out, int32_t out_dtype);
/** Name of int8 depthwise variant `variant` (0: the baseline) if it is built
 *  and this CPU (with PTERUN_ISA_MASK) can run it, else NULL. */
PTERUN_COMPUTE_API const char* pterun_compute_qs8_dwconv2d_variant(size_t variant);

/* ---- f32 direct convolution variants -------------------------------------- */
/** As pterun_compute_f32_conv2d_nchw on one variant, serially (tests,
 *  benchmarks); -1 also when the variant is unusable. */
PTERUN_COMPUTE_API int pterun_compute_f32_conv2d_nchw_with(size_t variant,
                                                           const pterun_compute_conv2d* p,
                                                           const float* in, const float* w,
                                                           const float* bias, float* out);
/** Name of conv2d variant `variant` (0: the portable 4-lane one, no fused
 *  multiply-add) if it is built and this CPU (with PTERUN_ISA_MASK) can run
 *  it, else NULL. */
PTERUN_COMPUTE_API const char* pterun_compute_f32_conv2d_variant(size_t variant);
/** pterun_compute_f32_conv2d_nhwc on the GEMM microkernel of row `variant`
 *  of pterun_compute_f32_gemm_ukernels() (its _ig entry), the filter packed
 *  for it on the heap, on the calling thread; -1 when this CPU cannot run
 *  it or the geometry is refused (tests). */
PTERUN_COMPUTE_API int pterun_compute_f32_conv2d_nhwc_with(
    size_t variant, const pterun_compute_conv2d* p, const float* in, const float* w,
    const int64_t w_strides[4], const double* oc_scale, const float* bias, float* out);
/** The name of that variant (the GEMM microkernel's), or NULL when this CPU
 *  cannot run it or there is no such row. */
PTERUN_COMPUTE_API const char* pterun_compute_f32_conv2d_nhwc_variant(size_t variant);

/* ---- f32 row primitive variants ------------------------------------------- */
/** Variant `variant` (0: the 4-lane baseline; numbering as
 *  pterun_compute_f32_unary_variant) if built and runnable here, else NULL. */
PTERUN_COMPUTE_API const pterun_compute_f32_rowops* pterun_compute_f32_rowops_variant(
    size_t variant);

/* ---- f32 range scan variants ---------------------------------------------- */
/** Name of range scan variant `variant` (0: portable) if it is built and this
 *  CPU (with PTERUN_ISA_MASK) can run it, else NULL. */
PTERUN_COMPUTE_API const char* pterun_compute_f32_minmax_variant(size_t variant);
/** As pterun_compute_f32_minmax on one variant (tests, benchmarks); -1 (and
 *  *min, *max untouched) when the variant is unavailable. */
PTERUN_COMPUTE_API int pterun_compute_f32_minmax_with(size_t variant, const float* x, size_t n,
                                                      float* min, float* max);

/* ---- low-bit linear microkernels ------------------------------------------ */
/** The integer part of one group of one 8-column tile: dot[c] = sum over
 *  `chunks` 16-value k-chunks (packed at w, 16 * nbit bytes each) of
 *  qa[j] * code[c][j]. Exact: every variant gives the same numbers. */
typedef void (*pterun_compute_lowbit_dot_fn)(int nbit, const uint8_t* w, const int8_t* qa,
                                             int64_t chunks, int64_t dot[8]);

/** One activation row quantized to int8 (k values; per weight group, the
 *  sum of its values), with its scale and zero point. */
typedef struct pterun_compute_lowbit_qrow {
  const int8_t* qa;
  const int64_t* asum;
  float scale;
  int32_t zero;
} pterun_compute_lowbit_qrow;

/** One 8-column tile (at `tile`) against one quantized row: out[c] = the
 *  float32 sum, in k order, of (weight scale * row scale) * (the group's
 *  exact integer dot corrected by both zero points), plus the bias last
 *  (docs/lowbit.md). The same bits from every variant. */
typedef void (*pterun_compute_lowbit_tile_fn)(const struct pterun_compute_lowbit_weights* w,
                                              const uint8_t* tile,
                                              const pterun_compute_lowbit_qrow* row, float out[8]);

/** `n` whole consecutive tiles (at `tiles`, w->tile_bytes apart) against one
 *  row, out[8 * i + c] for tile i: each exactly the tile function's result
 *  (decode's one-row product; SIMD variants share the activation loads
 *  between neighbouring tiles). */
typedef void (*pterun_compute_lowbit_tiles_fn)(const struct pterun_compute_lowbit_weights* w,
                                               const uint8_t* tiles,
                                               const pterun_compute_lowbit_qrow* row, float* out,
                                               size_t n);

/** Dynamic activation quantization of one row of k floats (docs/lowbit.md):
 *  its scale and zero point, the int8 codes at qa, and at asum the sum of
 *  each group of gs codes (gs a multiple of 16 dividing k). The same bits
 *  from every variant. */
typedef void (*pterun_compute_lowbit_quant_fn)(const float* x, int64_t k, int64_t gs, int8_t* qa,
                                               int64_t* asum, float* scale, int32_t* zero);

struct pterun_compute_lowbit_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pterun_compute_lowbit_dot_fn fn;
  const char* name;
  pterun_compute_lowbit_tile_fn tile;   /* the whole tile: fn plus the epilogue */
  pterun_compute_lowbit_quant_fn quant; /* the activation rows */
  pterun_compute_lowbit_tiles_fn tiles; /* whole tiles for one row (`tile`'s bits) */
};

/** Every low-bit microkernel compiled into this build, portable first, in
 *  priority order (tests and benchmarks run each). */
PTERUN_COMPUTE_API const pterun_compute_lowbit_ukernel* pterun_compute_lowbit_ukernels(
    size_t* count_out);
/** The last variant whose ISA bits are all in `features` (never NULL). */
PTERUN_COMPUTE_API const pterun_compute_lowbit_ukernel* pterun_compute_lowbit_select(
    uint64_t features);

/* ---- 4-bit blockwise linear microkernels (src/compute/qb4w/) ---------------- */
/** `ntiles` whole 16-column panels (at `tiles`, w->tile_bytes apart)
 *  against one activation row: out[16 * i + c] for panel i, column c. qa:
 *  the row's k int8 codes; asum8[g]: 8 times the sum of block g's codes;
 *  a_scale, a_zero: the row's quantization. docs/lowbit.md has the
 *  arithmetic; every variant gives the same bits. */
typedef void (*pterun_compute_qb4w_tiles_fn)(const pterun_compute_qb4w_weights* w,
                                             const uint8_t* tiles, size_t ntiles, const int8_t* qa,
                                             const int32_t* asum8, float a_scale, int32_t a_zero,
                                             float* out);

struct pterun_compute_qb4w_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pterun_compute_qb4w_tiles_fn tiles;
  const char* name;
};

/** Every 4-bit blockwise microkernel compiled into this build, portable
 *  first, in priority order (tests and benchmarks run each). */
PTERUN_COMPUTE_API const pterun_compute_qb4w_ukernel* pterun_compute_qb4w_ukernels(
    size_t* count_out);
/** The last variant whose ISA bits are all in `features` (never NULL). */
PTERUN_COMPUTE_API const pterun_compute_qb4w_ukernel* pterun_compute_qb4w_select(uint64_t features);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_SRC_COMPUTE_INTERNAL_H_ */
