/* pterun: the compute engine (library libpterun_compute): the fast numeric
 * building blocks every pterun kernel library uses, so none carries a private
 * copy. Today: the blocked matrix product with run-time selected SIMD
 * microkernels (scalar, AVX2+FMA, AVX-512), split over the method's thread
 * pool. docs/performance.md describes the engine. Symbols: pterun_compute_*. */
#ifndef PTERUN_INCLUDE_PTERUN_COMPUTE_H_
#define PTERUN_INCLUDE_PTERUN_COMPUTE_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/kernel.h"
#include "pterun/threadpool.h"

#if defined(__GNUC__)
#define PTERUN_COMPUTE_API __attribute__((visibility("default")))
#else
#define PTERUN_COMPUTE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A matrix inside a tensor buffer: element (r, c) is data[r * rs + c * cs]
 *  (strides in elements, any sign allowed only where documented). */
typedef struct pterun_compute_matrix {
  void* data;
  int32_t dtype; /* pterun_dtype */
  int64_t rs, cs;
} pterun_compute_matrix;

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

typedef struct pterun_compute_f32_gemm_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pterun_compute_f32_gemm_fn fn;
  const char* name;
  int mr, nr; /* tile */
  int kc, mc; /* preferred K block (B micro-panel in L1) and M block (A block in L2) */
} pterun_compute_f32_gemm_ukernel;

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

#if defined(__cplusplus)
#define PTERUN_COMPUTE_ALIGN64 alignas(64)
#else
#define PTERUN_COMPUTE_ALIGN64 _Alignas(64)
#endif

/** Inline packing buffer used when the scratch arena has no room. */
#define PTERUN_COMPUTE_GEMM_LOCAL_BYTES (64 * 1024)

/** A product's workspace, on the caller's stack: packing buffers from the
 *  kernel's scratch arena (or the inline buffer), the microkernels and the
 *  thread pool. Fields are private; set it up with pterun_compute_gemm_init. */
typedef struct pterun_compute_gemm_ws {
  void* buf;
  size_t cap;     /* bytes at buf */
  int64_t kc, nc; /* f64 engine blocks */
  int dbl;        /* accumulate in double (F64) */
  size_t a_slots; /* A blocks at the end of buf for parallel workers */
  const pterun_compute_f32_gemm_ukernel* uk;
  const pterun_compute_f32_gemm_ukernel* uk_m1; /* for M == 1; NULL: uk */
  pterun_threadpool* pool;
  size_t max_threads;
  PTERUN_COMPUTE_ALIGN64 unsigned char local[PTERUN_COMPUTE_GEMM_LOCAL_BYTES];
} pterun_compute_gemm_ws;

/** Prepares `ws` for products whose output has `dtype` (F64 accumulates in
 *  double, f32/f16/bf16 in float, integers in int64): microkernels from
 *  pterun_cpu_features(), buffers from pterun_kernel_scratch(ctx), the pool
 *  and thread cap of ctx's method. ctx may be NULL (no scratch, serial). */
PTERUN_COMPUTE_API void pterun_compute_gemm_init(pterun_kernel_context* ctx,
                                                 pterun_compute_gemm_ws* ws, int32_t dtype);
/** As pterun_compute_gemm_init with an explicit f32 microkernel for every M
 *  (uk NULL: the default selection) and an explicit pool and thread cap
 *  instead of ctx's (tests, benchmarks, callers without a method). */
PTERUN_COMPUTE_API void pterun_compute_gemm_init_ex(pterun_kernel_context* ctx,
                                                    pterun_compute_gemm_ws* ws, int32_t dtype,
                                                    const pterun_compute_f32_gemm_ukernel* uk,
                                                    pterun_threadpool* pool, size_t max_threads);

/**
 * C[M,N] = alpha * A[M,K] @ B[K,N]    (accumulate == 0)
 * C[M,N] += alpha * A[M,K] @ B[K,N]   (accumulate != 0)
 * A and B share a dtype; C may be any real dtype of the same family. Strides
 * must be non-negative. The f32 engine splits C into tiles over the pool;
 * each element is computed by the same sequence of operations whatever the
 * thread count, so results are bit-identical for any pool.
 */
PTERUN_COMPUTE_API void pterun_compute_gemm(pterun_compute_gemm_ws* ws, int64_t m, int64_t n,
                                            int64_t k, const pterun_compute_matrix* a,
                                            const pterun_compute_matrix* b,
                                            const pterun_compute_matrix* c, double alpha,
                                            int accumulate);

/* ---- f32 vector math ----------------------------------------------------------
 * Element-wise functions on contiguous float arrays, vectorised for the widest
 * ISA the CPU has (4-lane baseline: SSE2 / NEON / scalar; AVX2; AVX-512F).
 * Every variant gives the same bits (no lane- or width-dependent step, no
 * fused multiply-add), so results do not depend on the CPU's ISA or on the
 * thread count. Max error against the correctly rounded result, in ULP
 * (measured by tests/compute/test_vmath.c over a dense sweep of [-110, 110] and
 * a strided sweep of every float; results in the subnormal range are counted
 * in subnormal ULP): */
typedef enum pterun_compute_unary {
  PTERUN_COMPUTE_EXP = 0, /* e^x */
  PTERUN_COMPUTE_SIGMOID, /* 1 / (1 + e^-x) */
  PTERUN_COMPUTE_SILU,    /* x / (1 + e^-x) */
  PTERUN_COMPUTE_TANH,    /* tanh x */
  PTERUN_COMPUTE_UNARY_COUNT
} pterun_compute_unary;
#define PTERUN_COMPUTE_EXP_MAX_ULP 2
#define PTERUN_COMPUTE_SIGMOID_MAX_ULP 3
#define PTERUN_COMPUTE_SILU_MAX_ULP 4
#define PTERUN_COMPUTE_TANH_MAX_ULP 2

/** y[i] = op(x[i]) for i < n (x == y allowed); long arrays are split over
 *  `pool` (NULL: the calling thread; max_threads 0: no cap). Returns 0, or -1
 *  for an unknown op. */
PTERUN_COMPUTE_API int pterun_compute_f32_unary(pterun_threadpool* pool, size_t max_threads, int op,
                                                const float* x, float* y, size_t n);
/** Name of vector math variant `variant` (0: the 4-lane baseline) if it is
 *  built and this CPU (with PTERUN_ISA_MASK) can run it, else NULL. */
PTERUN_COMPUTE_API const char* pterun_compute_f32_unary_variant(size_t variant);
/** As pterun_compute_f32_unary on one variant, serially (tests, benchmarks);
 *  -1 when the op or the variant is unavailable. */
PTERUN_COMPUTE_API int pterun_compute_f32_unary_with(size_t variant, int op, const float* x,
                                                     float* y, size_t n);

/* ---- low-bit linear (torchao's universal packed-weights layout) -------------
 * The engine behind libpterun_kernels_lowbit's torchao::_linear_8bit_act_{n}bit
 * operators (docs/lowbit.md has the layout and the arithmetic): activations
 * quantized per row to int8, exact integer dot products per weight group,
 * float32 accumulation in k order, columns split over the thread pool.
 * Results do not depend on the microkernel or on the thread count. */

/** The integer part of one group of one 8-column tile: dot[c] = sum over
 *  `chunks` 16-value k-chunks (packed at w, 16 * nbit bytes each) of
 *  qa[j] * code[c][j]. Exact: every variant gives the same numbers. */
typedef void (*pterun_compute_lowbit_dot_fn)(int nbit, const uint8_t* w, const int8_t* qa,
                                             int64_t chunks, int64_t dot[8]);

typedef struct pterun_compute_lowbit_ukernel {
  uint64_t isa; /* PTERUN_CPU_* bits the CPU must have */
  pterun_compute_lowbit_dot_fn fn;
  const char* name;
} pterun_compute_lowbit_ukernel;

/** Every low-bit microkernel compiled into this build, portable first, in
 *  priority order (tests and benchmarks run each). */
PTERUN_COMPUTE_API const pterun_compute_lowbit_ukernel* pterun_compute_lowbit_ukernels(
    size_t* count_out);
/** The last variant whose ISA bits are all in `features` (never NULL). */
PTERUN_COMPUTE_API const pterun_compute_lowbit_ukernel* pterun_compute_lowbit_select(
    uint64_t features);

/** Unpacks `count` (32, 64 or 128) nbit values (1 <= nbit <= 8) from torchao's
 *  chunk layout at `src` (count * nbit / 8 bytes) into signed codes
 *  (value - 2^(nbit-1); for nbit 8 the byte as int8). */
PTERUN_COMPUTE_API void pterun_compute_lowbit_unpack(int nbit, int count, const uint8_t* src,
                                                     int8_t* dst);

/** A validated universal-layout weight buffer (the caller checked the header
 *  and that n / 8 rounded up tiles of tile_bytes each follow it). */
typedef struct pterun_compute_lowbit_weights {
  int nbit;      /* 1..8 */
  int has_zeros; /* per-group weight zero points */
  int has_bias;
  int64_t n, k, group_size; /* group_size: a multiple of 16 dividing k */
  uint64_t tile_bytes;      /* bytes of one 8-column tile */
  const uint8_t* tiles;     /* the first tile (after the 64-byte header) */
} pterun_compute_lowbit_weights;

/** Scratch bytes pterun_compute_lowbit_linear uses for a block of `rows`
 *  activation rows (it takes fewer rows at a time when the arena is short). */
PTERUN_COMPUTE_API size_t
pterun_compute_lowbit_scratch_bytes(const pterun_compute_lowbit_weights* w, int64_t rows);

/** y[m, n] = quantize(x[m, k]) @ w, float32, row-major, contiguous.
 *  Quantized activations live in ctx's scratch arena (a stack row when it is
 *  too small and k <= 4096; else OUT_OF_MEMORY with a message); the method's
 *  pool splits the rows and 8-column tiles. ctx may be NULL (serial, stack). */
PTERUN_COMPUTE_API pterun_status
pterun_compute_lowbit_linear(pterun_kernel_context* ctx, const pterun_compute_lowbit_weights* w,
                             const float* x, int64_t m, float* y);
/** As pterun_compute_lowbit_linear with an explicit microkernel (NULL: the
 *  default selection), pool and thread cap (tests, benchmarks). */
PTERUN_COMPUTE_API pterun_status pterun_compute_lowbit_linear_ex(
    pterun_kernel_context* ctx, const pterun_compute_lowbit_weights* w, const float* x, int64_t m,
    float* y, const pterun_compute_lowbit_ukernel* uk, pterun_threadpool* pool, size_t max_threads);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_COMPUTE_H_ */
