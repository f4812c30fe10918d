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

/* ---- f32 depthwise convolution ------------------------------------------------
 * NHWC input [batch][in_h][in_w][in_c], filter [kernel_h][kernel_w][out_c],
 * output [batch][out_h][out_w][out_c] with out_c a multiple of in_c (output
 * channel c reads input channel c / (out_c / in_c)):
 *   out[b][y][x][c] = clamp(bias[c] + sum over kh, kw of
 *                     in[b][y*stride_h + kh*dilation_h - pad_top]
 *                       [x*stride_w + kw*dilation_w - pad_left][c / m] * w[kh][kw][c])
 * taps outside the input count as zero. Same bits for every ISA variant and
 * thread count (no fused multiply-add, fixed tap order). */
typedef struct pterun_compute_dwconv2d {
  size_t batch, in_h, in_w, in_c, out_h, out_w, out_c;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  float out_min, out_max; /* clamp of every output (-INFINITY, INFINITY: none) */
} pterun_compute_dwconv2d;

/** Runs the convolution above (bias may be NULL), output rows split over
 *  `pool` (NULL: the calling thread; max_threads 0: no cap). The caller sizes
 *  the tensors from `p`. Returns 0, or -1 when in_c is 0, out_c is not a
 *  multiple of it, or a stride or dilation is 0. */
PTERUN_COMPUTE_API int pterun_compute_f32_dwconv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
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

/* ---- f32 row primitives ---------------------------------------------------------
 * The inner loops of attention-like kernels (a dot product per key, a scaled
 * accumulation per value row, the softmax's exponentials), as a table of
 * functions chosen once per call. Like the vector math above, every variant
 * gives the same bits: sums keep 16 partial sums (element i in sum i % 16)
 * added in one fixed tree, and nothing is fused. Serial: callers split rows
 * over the pool themselves. */
typedef struct pterun_compute_f32_rowops {
  /** sum_i a[i] * b[i] */
  float (*dot)(const float* a, const float* b, size_t n);
  /** y[i] = y[i] * beta + alpha * x[i] */
  void (*axpby)(float* y, float beta, float alpha, const float* x, size_t n);
  /** y[i] *= s */
  void (*scale)(float* y, float s, size_t n);
  /** y[i] = e^(x[i] - m) (PTERUN_COMPUTE_EXP's accuracy), returns sum_i y[i];
   *  x == y allowed. */
  float (*exp_sum)(float* y, const float* x, float m, size_t n);
  const char* name;
} pterun_compute_f32_rowops;

/** The widest variant pterun_cpu_features() (PTERUN_ISA_MASK) allows; never NULL. */
PTERUN_COMPUTE_API const pterun_compute_f32_rowops* pterun_compute_f32_rowops_select(void);
/** Variant `variant` (0: the 4-lane baseline; numbering as
 *  pterun_compute_f32_unary_variant) if built and runnable here, else NULL. */
PTERUN_COMPUTE_API const pterun_compute_f32_rowops* pterun_compute_f32_rowops_variant(
    size_t variant);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_COMPUTE_H_ */
