/* pterun: the compute engine (library libpterun_compute): the fast numeric
 * building blocks every pterun kernel library uses, so none carries a private
 * copy: matrix products (f32, int8, low-bit), vector math, convolutions, with
 * run-time selected SIMD microkernels, split over the method's thread pool.
 * docs/performance.md describes the engine. Symbols: pterun_compute_*. This
 * header has the entry points other libraries call; the microkernel
 * descriptors (opaque here) and the per-variant test entry points are
 * internal to the source tree (src/compute/internal.h). Option structs grow
 * by struct_size, as in the rest of the API (pterun/options.h). */
#ifndef PTERUN_INCLUDE_PTERUN_COMPUTE_H_
#define PTERUN_INCLUDE_PTERUN_COMPUTE_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/kernel.h"
#include "pterun/options.h"
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

/** An f32 GEMM microkernel (opaque here: its descriptor and the table of
 *  every variant are internal to libpterun_compute, src/compute/internal.h).
 *  A workspace records the ones it uses; pterun_compute_gemm_init_ex takes
 *  one, NULL being the default selection. */
typedef struct pterun_compute_f32_gemm_ukernel pterun_compute_f32_gemm_ukernel;

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

/** The scratch a pterun_compute_gemm_init'd workspace takes for an
 *  M x N x K product of `dtype` on `threads` threads at its full blocking (0:
 *  none needed; the blocking, and so every bit of the result, is then the one
 *  a default-size arena gives). pterun_compute_gemm_reserve: at load (a
 *  kernel's prepare), pterun_kernel_scratch_reserve of it for ctx's pool.
 *  With several products per call, reserve the largest (one workspace), and
 *  take other scratch before pterun_compute_gemm_init: it takes what the
 *  arena has left. */
PTERUN_COMPUTE_API size_t pterun_compute_gemm_scratch_bytes(int32_t dtype, int64_t m, int64_t n,
                                                            int64_t k, size_t threads);
PTERUN_COMPUTE_API void pterun_compute_gemm_reserve(pterun_kernel_context* ctx, int32_t dtype,
                                                    int64_t m, int64_t n, int64_t k);

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

/* ---- int8 GEMM ------------------------------------------------------------------
 * C[M,N] = epilogue( sum_k (A[m][k] - a_zp) * (W[n][k] - w_zp[n]) )
 * with A uint8 or int8 (activations), W int8 (weights, row n = output column n,
 * the layout of a Linear weight and of a conv weight viewed as [OC, IC*KH*KW]),
 * exact int32 accumulation, and an epilogue that requantises to uint8/int8 or
 * dequantises to float32 (docs/performance.md, "int8 engine"). W is packed once
 * (load time) for one microkernel; A is packed on the fly in small panels, so
 * a product needs no scratch memory. int8 A is shifted to uint8 (+128, the zero
 * point with it) while packing, so every microkernel multiplies uint8 x int8
 * and the zero-point corrections use W's column sums from the packing.
 * Limits: 1 <= K <= PTERUN_COMPUTE_QS8_MAX_K (the raw int32 sums cannot
 * overflow), N >= 1. */
#define PTERUN_COMPUTE_QS8_MAX_K 65536

/** An int8 GEMM microkernel (opaque here, as the f32 one): the packing
 *  functions take one, NULL being the selection for this CPU
 *  (pterun_cpu_features(), narrowed by PTERUN_ISA_MASK), and a packed
 *  weight records the one it was packed for. */
typedef struct pterun_compute_qs8_gemm_ukernel pterun_compute_qs8_gemm_ukernel;

/** Weights packed for one microkernel (pterun_compute_qs8_pack). The buffer
 *  holds the column sums and the strips; this header points into it. */
typedef struct pterun_compute_qs8_packed {
  const pterun_compute_qs8_gemm_ukernel* uk;
  int64_t n, k, kq;       /* kq = ceil(k / 4) */
  const int32_t* col_sum; /* sum_k W[n][k], n entries */
  const void* strips;     /* ceil(n / NR) strips of kq x NR x 4 elements, zero padded */
} pterun_compute_qs8_packed;

/** Bytes pterun_compute_qs8_pack needs for an N x K weight (64-byte aligned
 *  buffer); 0 when N or K is out of range or the size overflows. uk NULL:
 *  the microkernel for this CPU and N (as in every packing function: a
 *  narrower tile of the same ISA where N fits it). */
PTERUN_COMPUTE_API size_t pterun_compute_qs8_pack_size(const pterun_compute_qs8_gemm_ukernel* uk,
                                                       int64_t n, int64_t k);
/** Packs W (int8, element (n, k) at w[n * w_rs + k * w_cs]) into `buf`
 *  (`cap` bytes, 64-byte aligned) and fills `out`. Returns 0, or -1 when the
 *  sizes are out of range, buf is too small or misaligned. */
PTERUN_COMPUTE_API int pterun_compute_qs8_pack(const pterun_compute_qs8_gemm_ukernel* uk, int64_t n,
                                               int64_t k, const int8_t* w, int64_t w_rs,
                                               int64_t w_cs, void* buf, size_t cap,
                                               pterun_compute_qs8_packed* out);

/** Packs a convolution weight W[N][C][KH][KW] (int8, contiguous) as the N x K
 *  matrix (K = KH * KW * c_pad) whose K order is (ky, kx, c): the order of
 *  rows taken from a channels-last image, where each kernel row's KW * C
 *  values are contiguous. c_pad >= C: each tap's channels padded with zero
 *  weights to c_pad (the im2col rows then carry c_pad - C more values per
 *  tap, the zero point where weight zero points are used; see
 *  pterun_compute_qs8_conv2d_nhwc). Size: pterun_compute_qs8_pack_size(uk, N,
 *  K). */
PTERUN_COMPUTE_API int pterun_compute_qs8_pack_conv(const pterun_compute_qs8_gemm_ukernel* uk,
                                                    int64_t n, int64_t c, int64_t c_pad, int64_t kh,
                                                    int64_t kw, const int8_t* w, void* buf,
                                                    size_t cap, pterun_compute_qs8_packed* out);

/** What happens to each int32 sum v[m][n] (after the zero-point corrections):
 *    y = (float)v * scale[n or 0] + bias[n] (bias NULL: 0)
 *  F32 output: C = min(max(y, f_min), f_max) (relu / hardtanh / none: +-inf).
 *  U8 / I8 output: q = (int)(out_zp + nearbyintf(y * out_inv_scale)) clamped
 *  to [q_min, q_max] (NaN -> q_min), ExecuTorch's quantize_per_tensor step;
 *  a fused relu or hardtanh narrows [q_min, q_max] (quantisation is monotonic,
 *  so clamping after it gives the same values as clamping the float). */
typedef struct pterun_compute_qs8_epilogue {
  int32_t a_zp;        /* A's zero point, in A's own type (uint8 or int8 range) */
  const int32_t* w_zp; /* per column; NULL: all 0 (symmetric weights) */
  const float* scale;  /* per column when scale_per_column, else scale[0] */
  int scale_per_column;
  const float* bias;   /* per column; NULL: none */
  float f_min, f_max;  /* F32 output clamp */
  float out_inv_scale; /* U8 / I8 output: 1 / output scale (float32, as ExecuTorch) */
  int32_t out_zp, q_min, q_max;
} pterun_compute_qs8_epilogue;

/** Row source for A instead of a matrix (e.g. im2col of a convolution):
 *  writes A[i][k] for i0 <= i < i0 + rows, k0 <= k < k0 + kc as raw bytes of
 *  A's dtype to dst[(i - i0) * kc + (k - k0)]. Called from pool workers. */
typedef void (*pterun_compute_qs8_rows_fn)(void* ctx, int64_t i0, int64_t rows, int64_t k0,
                                           int64_t kc, uint8_t* dst);

/**
 * C = epilogue(A[M,K] x W^T) over `pool` (NULL: serially; max_threads 0: no
 * cap). A: `a` (dtype U8 or I8, non-negative strides) or, when `a_rows` is not
 * NULL, that function (a_dtype U8 or I8; `a` ignored). C: dtype U8, I8 or F32,
 * element (m, n) at data[m * rs + n * cs]. Tasks own disjoint tiles of C and
 * sum in a fixed order: results are identical for any thread count and
 * microkernel. Returns 0, or -1 for invalid arguments (nothing written).
 */
PTERUN_COMPUTE_API int pterun_compute_qs8_gemm(pterun_threadpool* pool, size_t max_threads,
                                               int64_t m, const pterun_compute_matrix* a,
                                               pterun_compute_qs8_rows_fn a_rows, void* a_ctx,
                                               int32_t a_dtype, const pterun_compute_qs8_packed* w,
                                               const pterun_compute_qs8_epilogue* ep,
                                               const pterun_compute_matrix* c);

/** An int8 convolution's input for pterun_compute_qs8_conv2d_nhwc: the image
 *  already padded (its border holds the zero point), channels-last, of
 *  `dtype` (PTERUN_DTYPE_U8 or I8; the epilogue's a_zp in its range). */
typedef struct pterun_compute_qs8_conv2d_nhwc_args {
  const uint8_t* image; /* [h][w][c], raw bytes */
  int32_t dtype;
  int64_t h, w, c;     /* the padded image's sizes */
  int64_t c0, group_c; /* the channels read: [c0, c0 + group_c) */
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t out_h, out_w; /* every window inside the image */
} pterun_compute_qs8_conv2d_nhwc_args;

/**
 * The convolution as pterun_compute_qs8_gemm over its im2col rows (K in
 * (kernel row, kernel column, channel) order, the weight packed by
 * pterun_compute_qs8_pack_conv), without building them: each microkernel
 * reads an output pixel's window where it lies in `g->image` (int8 bytes
 * shifted to uint8 as they are read). C row m is
 * output pixel (m / out_w, m % out_w). Same values and bits as the GEMM, for
 * any thread count. A weight packed with c_pad = group_c rounded up to a
 * multiple of 4 (group_c not one) is read a tap at a time, c_pad bytes each:
 * the extra bytes (the next pixel's, with zero weights) must be readable,
 * up to 3 past the image's end. Returns 0, or -1 (nothing written) when it
 * does not take the call: a microkernel without an in-place entry
 * (pterun_compute_qs8_conv2d_nhwc_in_place), ep->w_zp not NULL, w->k neither
 * kernel_h x kernel_w x group_c nor that with c_pad, with c_pad = group_c a
 * tap's channels (or, with one group and dilation_w 1, a kernel row's) not
 * whole groups of 4 bytes, more than 256 such runs, or a window outside the
 * image; the caller then runs the GEMM.
 */
/** 1 when the microkernel `uk` (NULL: the one this CPU selects) and every
 *  sibling the GEMM may pick for it read A in place (pterun_compute_qs8_conv2d_nhwc
 *  takes calls); 0 when that call always declines (e.g. AVX2: a weight is
 *  then best packed without channel padding). */
PTERUN_COMPUTE_API int pterun_compute_qs8_conv2d_nhwc_in_place(
    const pterun_compute_qs8_gemm_ukernel* uk);

PTERUN_COMPUTE_API int pterun_compute_qs8_conv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                                      const pterun_compute_qs8_conv2d_nhwc_args* g,
                                                      const pterun_compute_qs8_packed* w,
                                                      const pterun_compute_qs8_epilogue* ep,
                                                      const pterun_compute_matrix* c);

/** Byte matrix transpose: dst[j * dst_rs + i] = src[i * src_rs + j] for
 *  i < rows, j < cols (layout changes of int8 tensors, e.g. NCHW <-> NHWC).
 *  16 x 16 blocks in SSE2 on x86-64 (scalar under PTERUN_ISA_MASK=0). The
 *  regions must not overlap. */
PTERUN_COMPUTE_API void pterun_compute_u8_transpose(int64_t rows, int64_t cols, const uint8_t* src,
                                                    int64_t src_rs, uint8_t* dst, int64_t dst_rs);
/** The same for float32 (layout changes of float32 tensors): 4 x 4 blocks in
 *  SSE on x86-64 (scalar under PTERUN_ISA_MASK=0). */
PTERUN_COMPUTE_API void pterun_compute_f32_transpose(int64_t rows, int64_t cols, const float* src,
                                                     int64_t src_rs, float* dst, int64_t dst_rs);

/* ---- operands packed at load, fused activation -------------------------------
 * A constant operand (a Linear/addmm weight, a convolution's weight) can be
 * packed once, in a kernel's prepare (pterun/kernel.h), into the layout the
 * f32 engine's microkernel reads; products then skip packing it. The packed
 * operand lives in the caller's memory (pterun_kernel_state_alloc) and
 * records the microkernel and K blocking it was made for: a product that
 * cannot use it (another microkernel, e.g. M == 1, or a non-f32 output)
 * silently reads the unpacked matrix instead, so callers always pass both.
 * A packed product performs exactly the operations of the unpacked one with
 * the default buffers, so results are bit-identical. */
typedef struct pterun_compute_packed pterun_compute_packed;
#define PTERUN_COMPUTE_OPERAND_A 0 /* the M x K left operand */
#define PTERUN_COMPUTE_OPERAND_B 1 /* the K x N right operand */

/** Bytes of 64-byte-aligned memory pterun_compute_gemm_pack needs for a
 *  rows x cols operand (A: M x K, B: K x N) on this CPU (PTERUN_ISA_MASK
 *  applies); 0 for a bad operand, empty or absurd sizes. */
PTERUN_COMPUTE_API size_t pterun_compute_gemm_pack_size(int operand, int64_t rows, int64_t cols);
/** Packs the f32/f16/bf16 matrix `src` (rows x cols, any strides) into
 *  `mem` (64-aligned, `bytes` >= pterun_compute_gemm_pack_size). Returns the
 *  packed operand (inside mem) or NULL when the arguments do not fit. */
PTERUN_COMPUTE_API const pterun_compute_packed* pterun_compute_gemm_pack(
    void* mem, size_t bytes, int operand, int64_t rows, int64_t cols,
    const pterun_compute_matrix* src);
/** pterun_compute_gemm_pack of an f32 A operand (rows x cols) whose row i is
 *  scaled on the way: element (i, j) packs as (float)((double)src(i, j) *
 *  row_scale[i]), the bytes packing a dense copy scaled so would give (a
 *  batch norm folded into a convolution's weight, with no folded copy). */
PTERUN_COMPUTE_API const pterun_compute_packed* pterun_compute_gemm_pack_a_scaled(
    void* mem, size_t bytes, int64_t rows, int64_t cols, const pterun_compute_matrix* src,
    const double* row_scale);
/** pterun_compute_gemm_pack of an f32 B operand (rows x cols) whose column j
 *  is scaled on the way: element (i, j) packs as (float)((double)src(i, j) *
 *  col_scale[j]) (a batch norm folded into a channels-last convolution's
 *  W^T, with no folded copy). */
PTERUN_COMPUTE_API const pterun_compute_packed* pterun_compute_gemm_pack_b_scaled(
    void* mem, size_t bytes, int64_t rows, int64_t cols, const pterun_compute_matrix* src,
    const double* col_scale);
/** The K block the f32 engine uses for a product of depth k with M = m and
 *  the default buffers; products over a packed operand's K range must start
 *  at a multiple of it (a convolution chunks its reduction by it). */
PTERUN_COMPUTE_API int64_t pterun_compute_gemm_k_block(const pterun_compute_gemm_ws* ws, int64_t m,
                                                       int64_t k);

/** Activations fused into a product's epilogue, with the portable kernels'
 *  exact semantics: RELU is aten::relu, x < 0 ? +0 : x (NaN and -0 stay: the
 *  same bits as CLAMP to [0, inf]), CLAMP is aten::hardtanh / clamp with
 *  float bounds (x < lo ? lo : x, then > hi). */
#define PTERUN_COMPUTE_ACT_NONE 0
#define PTERUN_COMPUTE_ACT_RELU 1
#define PTERUN_COMPUTE_ACT_CLAMP 2

/** A caller's packer for B (pterun_compute_gemm_opts.pack_b): writes
 *  B[k0, k0 + kc) x [j0, j0 + nc) (K and N indices of this product) into
 *  `dst` exactly as the f32 engine packs B: ceil(nc / nr) strips of nr
 *  columns, strip s at dst + s * kc * nr, its row kk at + kk * nr holding
 *  B[k0 + kk][j0 + s * nr + c] for c < nr, zero past column nc. Lets a
 *  caller whose B is implicit (a convolution's im2col matrix) feed the
 *  engine without materialising B. nr is the microkernel's width (at most
 *  64); the engine calls it from pool threads, concurrently for disjoint
 *  column ranges (a range may be a single strip); it cannot fail. */
typedef void (*pterun_compute_pack_b_fn)(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0,
                                         int64_t nc, int64_t nr);

/** Extras of one product (every field at its default, PTERUN_COMPUTE_GEMM_OPTS_INIT:
 *  a plain pterun_compute_gemm). The struct only grows at its end: a caller
 *  sets struct_size to the sizeof it was compiled with (pterun/options.h). */
typedef struct pterun_compute_gemm_opts {
  size_t struct_size;                    /* sizeof(pterun_compute_gemm_opts) as compiled */
  const pterun_compute_packed* packed_a; /* A packed at load, or NULL */
  const pterun_compute_packed* packed_b; /* B packed at load, or NULL */
  int64_t k0;                            /* this product is K [k0, k0 + k) of the packed operands */
  int activation;                        /* PTERUN_COMPUTE_ACT_*, applied to the final C */
  float lo, hi;                          /* CLAMP bounds */
  /* One float per row of C (M values, contiguous), or NULL: added to the
   * product as each tile receives its first K block, before the activation.
   * With accumulate = 0 this is C = A*B + bias without a pass that fills C
   * first (a convolution's bias), with the same bits as filling C with the
   * bias and accumulating (for a float32 C; other dtypes round C between). */
  const float* bias;
  /* B's packer, or NULL. Used by the f32 engine (a float C other than float64)
   * when B is not packed at load (packed_b wins): it then never reads `b`
   * (which may be NULL), packs every B block with pack_b(pack_b_ctx, ...)
   * and blocks K as it would for a B matrix, so a product of depth k uses
   * pterun_compute_gemm_k_block's K blocks whenever the buffers allow. The
   * other engines (integer, float64) read `b` and ignore the packer. */
  pterun_compute_pack_b_fn pack_b;
  void* pack_b_ctx;
  /* B's rows where they are, or NULL: row r of this product's B (r < k) is
   * the n contiguous floats at b_row_base + b_row_offsets[r] (a convolution's
   * image: each reduction row is one run of it). The f32 engine then reads
   * B in place, copying only a last partial strip, with the K blocks and the
   * bits of the packer path; packed_b wins over it, and it over pack_b. The
   * other engines ignore it (they read `b`). */
  const float* b_row_base;
  const int64_t* b_row_offsets;
} pterun_compute_gemm_opts;

/** pterun_compute_gemm_opts with every field at its default and struct_size set:
 *    pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
 *    o.activation = PTERUN_COMPUTE_ACT_RELU; */
#define PTERUN_COMPUTE_GEMM_OPTS_INIT PTERUN_OPTIONS_INIT(pterun_compute_gemm_opts)

/** x[i] = activation(x[i]) for i < n, the epilogue's semantics, for fused
 *  operators whose fast path is not a product (depthwise convolution, ...). */
PTERUN_COMPUTE_API void pterun_compute_f32_activate(float* x, size_t n, int activation, float lo,
                                                    float hi);

/** pterun_compute_gemm with packed operands and a fused activation (o NULL:
 *  none). The activation is applied as each tile of C receives its last K
 *  block, so it costs no extra pass over C. With accumulate, C's previous
 *  contents (a bias) are part of what is activated.
 *
 *  `o` is read by its struct_size (pterun/options.h): fields past a smaller
 *  size take their defaults, and a larger one is accepted when every field
 *  this build does not know is zero. Returns 0, or -1 (C left untouched)
 *  for a struct_size below sizeof(size_t) (opts not initialised with
 *  PTERUN_COMPUTE_GEMM_OPTS_INIT) or a nonzero unknown field. */
PTERUN_COMPUTE_API int pterun_compute_gemm_ex(pterun_compute_gemm_ws* ws, int64_t m, int64_t n,
                                              int64_t k, const pterun_compute_matrix* a,
                                              const pterun_compute_matrix* b,
                                              const pterun_compute_matrix* c, double alpha,
                                              int accumulate, const pterun_compute_gemm_opts* o);

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
  PTERUN_COMPUTE_EXP = 0,   /* e^x */
  PTERUN_COMPUTE_SIGMOID,   /* 1 / (1 + e^-x) */
  PTERUN_COMPUTE_SILU,      /* x / (1 + e^-x) */
  PTERUN_COMPUTE_TANH,      /* tanh x */
  PTERUN_COMPUTE_ERF,       /* erf x */
  PTERUN_COMPUTE_GELU,      /* x/2 (1 + erf(x / sqrt 2)) */
  PTERUN_COMPUTE_GELU_TANH, /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
  PTERUN_COMPUTE_UNARY_COUNT
} pterun_compute_unary;
#define PTERUN_COMPUTE_EXP_MAX_ULP 2
#define PTERUN_COMPUTE_SIGMOID_MAX_ULP 3
#define PTERUN_COMPUTE_SILU_MAX_ULP 4
#define PTERUN_COMPUTE_TANH_MAX_ULP 2
#define PTERUN_COMPUTE_ERF_MAX_ULP 2
/* Both GELU forms are evaluated in PyTorch's order, (x/2) (1 + erf or tanh),
 * so they round as the reference does; 1 + erf/tanh cancels for negative x, so
 * their error is stated in ULP of x/2 (absolute), not of the result. */
#define PTERUN_COMPUTE_GELU_MAX_ULP 4
#define PTERUN_COMPUTE_GELU_TANH_MAX_ULP 4

/** y[i] = op(x[i]) for i < n (x == y allowed); long arrays are split over
 *  `pool` (NULL: the calling thread; max_threads 0: no cap). Returns 0, or -1
 *  for an unknown op. */
PTERUN_COMPUTE_API int pterun_compute_f32_unary(pterun_threadpool* pool, size_t max_threads, int op,
                                                const float* x, float* y, size_t n);

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
/** The same convolution in NCHW: input [batch][in_c][in_h][in_w], filter
 *  [out_c][kernel_h][kernel_w] (PyTorch's [out_c][1][kh][kw]), output
 *  [batch][out_c][out_h][out_w]; same sum order, clamp and bits for every
 *  variant and thread count; (batch, channel) planes split over `pool`.
 *  Vectorised along the output columns for strides 1 and 2. Returns 0, or -1
 *  for the geometry pterun_compute_f32_dwconv2d_nhwc refuses or kernel_h > 64. */
PTERUN_COMPUTE_API int pterun_compute_f32_dwconv2d_nchw(pterun_threadpool* pool, size_t max_threads,
                                                        const pterun_compute_dwconv2d* p,
                                                        const float* in, const float* w,
                                                        const float* bias, float* out);

/**
 * int8 depthwise convolution, NCHW: input [batch][in_c][in_h][in_w] of
 * `in_dtype` (U8 or I8), filter int8 [out_c][kernel_h][kernel_w] (PyTorch's
 * [out_c][1][kh][kw]; output channel c reads input channel c / (out_c /
 * in_c)), output [batch][out_c][out_h][out_w] of `out_dtype` (U8, I8 or
 * F32); geometry from `p` (its out_min / out_max are not used). Output
 * (b, c, y, x) is the epilogue `ep` (columns = output channels; w_zp within
 * int8) of the exact sum over taps inside the input of
 * (in - a_zp) * (w - w_zp[c]): the value and the bits pterun_compute_qs8_gemm
 * gives the same convolution over zero-point-padded im2col rows, for any
 * thread count. (batch, channel) planes split over `pool`. Returns 0, or -1
 * for a geometry pterun_compute_f32_dwconv2d_nhwc refuses, kernel_h *
 * kernel_w > 32768, other dtypes or a zero point out of range. The widest
 * variant the CPU runs takes every geometry whose rows fit its staging
 * buffer, a direct loop the others.
 */
PTERUN_COMPUTE_API int pterun_compute_qs8_dwconv2d_nchw(pterun_threadpool* pool, size_t max_threads,
                                                        const pterun_compute_dwconv2d* p,
                                                        const void* in, int32_t in_dtype,
                                                        const int8_t* w,
                                                        const pterun_compute_qs8_epilogue* ep,
                                                        void* out, int32_t out_dtype);

/**
 * int8 depthwise convolution, NHWC (XNNPACK's layout and arithmetic): input
 * [batch][in_h][in_w][in_c] of `in_dtype` (U8 or I8), filter int16
 * [kernel_h * kernel_w][out_c] holding weight - weight zero point (|w| <= 255;
 * ep->w_zp must be NULL), optional int32 bias [out_c] (NULL: 0), output
 * [batch][out_h][out_w][out_c] of `out_dtype` (U8, I8 or F32); output channel
 * c reads input channel c / (out_c / in_c). Output (b, y, x, c) is the
 * epilogue `ep` (columns = output channels) of bias[c] + the sum over the taps
 * inside the input of (in - a_zp) * w, in int32 (wrapping): the same value
 * and bits for every variant and thread count. Output rows split over `pool`.
 * Returns 0, or -1 for a geometry pterun_compute_f32_dwconv2d_nhwc refuses,
 * kernel_h * kernel_w > 64, other dtypes or a zero point out of range.
 */
PTERUN_COMPUTE_API int pterun_compute_qs8_dwconv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                                        const pterun_compute_dwconv2d* p,
                                                        const void* in, int32_t in_dtype,
                                                        const int16_t* w, const int32_t* bias,
                                                        const pterun_compute_qs8_epilogue* ep,
                                                        void* out, int32_t out_dtype);

/* ---- f32 direct convolution, few input channels -----------------------------
 * A dense (groups = 1) NCHW convolution whose reduction is short (in_c *
 * kernel_h * kernel_w <= PTERUN_COMPUTE_CONV2D_MAX_TAPS, e.g. a network's
 * 3-channel stem), where a GEMM over K = in_c * kh * kw runs too few steps per
 * tile. Input [batch][in_c][in_h][in_w], weight [out_c][in_c][kernel_h]
 * [kernel_w], output [batch][out_c][out_h][out_w], all dense; bias [out_c] or
 * NULL. Every output is bias + the taps in (ci, kh, kw) order, taps in the
 * padding reading zero, then the activation (PTERUN_COMPUTE_ACT_*
 * semantics). The AVX2 / AVX-512 variants fuse each multiply-add (one
 * rounding), the portable one does not: variants differ in the last bits,
 * a variant gives the same bits for every thread count. */
#define PTERUN_COMPUTE_CONV2D_MAX_TAPS 64
typedef struct pterun_compute_conv2d {
  size_t batch, in_c, in_h, in_w, out_c, out_h, out_w;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  int activation; /* PTERUN_COMPUTE_ACT_* */
  float lo, hi;   /* PTERUN_COMPUTE_ACT_CLAMP bounds */
} pterun_compute_conv2d;

/** Runs the convolution above on the widest variant this CPU (with
 *  PTERUN_ISA_MASK) runs, (batch, row band) x output-channel tiles split
 *  over `pool` (NULL: the calling thread; max_threads 0: no cap). The caller
 *  sizes the tensors from `p`. Returns 0, or -1 (nothing written) when the
 *  geometry does not suit it: a zero size, stride or dilation, more than
 *  PTERUN_COMPUTE_CONV2D_MAX_TAPS taps, or a row too wide for its buffer. */
PTERUN_COMPUTE_API int pterun_compute_f32_conv2d_nchw(pterun_threadpool* pool, size_t max_threads,
                                                      const pterun_compute_conv2d* p,
                                                      const float* in, const float* w,
                                                      const float* bias, float* out);

/* ---- f32 convolution, channels-last, as an indirect GEMM ---------------------
 * A dense (groups = 1) convolution with NHWC input [batch][in_h][in_w][in_c]
 * and output [batch][out_h][out_w][out_c], both dense; the filter
 * ([out_c][in_c][kernel_h][kernel_w] at any strides) packed once by
 * pterun_compute_f32_conv2d_nhwc_pack, optionally with a per-output-channel
 * scale (a folded batch norm: each weight rounded once from double). Every
 * output is the f32 GEMM's: the products over (kh, kw, ci) in that order from
 * zero (fused on AVX2 / AVX-512, an FMA family), + bias, then the activation
 * (PTERUN_COMPUTE_ACT_* semantics); taps in the padding read zeros. The input
 * is read in place (no image copy), the output written in place. */

/** Bytes pterun_compute_f32_conv2d_nhwc_pack needs for `p` (0: a geometry
 *  this path does not run: a zero or huge size, more than 64 taps or
 *  4096 input channels, another activation). */
PTERUN_COMPUTE_API size_t pterun_compute_f32_conv2d_nhwc_pack_size(const pterun_compute_conv2d* p);
/** Packs the filter `w` (strides in elements) into `mem` (64-byte aligned,
 *  `bytes` from pterun_compute_f32_conv2d_nhwc_pack_size) for the
 *  microkernel this CPU runs; oc_scale: NULL or out_c factors. Returns the
 *  packed filter (inside mem), or NULL. */
PTERUN_COMPUTE_API const pterun_compute_packed* pterun_compute_f32_conv2d_nhwc_pack(
    void* mem, size_t bytes, const pterun_compute_conv2d* p, const float* w,
    const int64_t w_strides[4], const double* oc_scale);
/** Runs the convolution with a filter packed for the same geometry (bias
 *  [out_c] or NULL), tiles of output pixels split over `pool` (NULL: the
 *  calling thread; max_threads 0: no cap); same bits for any thread count.
 *  Returns 0, or -1 (nothing written) for a geometry it does not run or a
 *  filter packed for another geometry or microkernel. */
PTERUN_COMPUTE_API int pterun_compute_f32_conv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                                      const pterun_compute_conv2d* p,
                                                      const float* in,
                                                      const pterun_compute_packed* w,
                                                      const float* bias, float* out);
/** Bytes of a pointer table pterun_compute_f32_conv2d_nhwc_cached keeps for
 *  `p` with the packed filter `w`: every output tile's input rows, one
 *  pointer per pixel and tap (0: a geometry or filter this path refuses). */
PTERUN_COMPUTE_API size_t pterun_compute_f32_conv2d_nhwc_table_size(const pterun_compute_conv2d* p,
                                                                    const pterun_compute_packed* w);
/** pterun_compute_f32_conv2d_nhwc with a caller-owned table (64-byte aligned,
 *  zeroed before its first use, `table_bytes` from
 *  pterun_compute_f32_conv2d_nhwc_table_size): the rows every tile reads are
 *  found once and reused by later calls with the same input address and
 *  geometry, instead of per tile on each call (a fifth of the time of a
 *  16-channel 3x3 layer). A call with another input address or geometry
 *  rebuilds it; a NULL or too small table: as without one. Same bits either
 *  way. Not for concurrent calls sharing one table. */
PTERUN_COMPUTE_API int pterun_compute_f32_conv2d_nhwc_cached(
    pterun_threadpool* pool, size_t max_threads, const pterun_compute_conv2d* p, const float* in,
    const pterun_compute_packed* w, const float* bias, float* out, void* table, size_t table_bytes);

/** Every microkernel variant of the dispatching families (f32_gemm,
 *  qs8_gemm, vmath, conv2d, dwconv2d, lowbit, qdwconv, minmax, f32_igemm) with what it did in this
 *  process, space separated, as "family/name:state": `ran` (some call ran
 *  it), `idle` (this CPU can run it; nothing did yet) or `unavailable` (the
 *  CPU lacks its ISA; PTERUN_ISA_MASK does not matter here). Writes like
 *  snprintf (NUL-terminated when size > 0, truncated when too small) and
 *  returns the length the whole report needs. For tests (the differential
 *  test's coverage, `pterun run --verbose`); the kernels record a variant
 *  with one relaxed load per call, a store the first time. */
PTERUN_COMPUTE_API size_t pterun_compute_variants_report(char* buf, size_t size);

/** One output row of a 2 x 2, stride 2 max pool over float32 input rows r0
 *  and r1 (2 * n floats each): y[o] is the first maximum of r0[2o], r0[2o + 1],
 *  r1[2o], r1[2o + 1] in that order, a NaN winning and sticking (ATen's rule),
 *  and idx[o] = i0 + 2o + kw + kh * iw for its tap (kh, kw). */
PTERUN_COMPUTE_API void pterun_compute_f32_maxpool2x2_row(const float* r0, const float* r1,
                                                          size_t n, float* y, int64_t* idx,
                                                          int64_t i0, int64_t iw);
/** Per channel c < n, the first maximum of rows[0][off + c], ...,
 *  rows[ntaps - 1][off + c] in that order, a NaN winning and sticking
 *  (ATen's rule): y[c] the maximum, tap[c] the index of the row holding it
 *  (a channels-last max pool's window, one row per tap). Nothing for
 *  ntaps == 0. */
PTERUN_COMPUTE_API void pterun_compute_f32_max_rows(const float* const* rows, size_t ntaps,
                                                    size_t off, size_t n, float* y, int32_t* tap);

/** The range of n float32 values (no alignment; n may be 0), widening the
 *  range the caller starts from: for each x[i] in turn, *min = x[i] when
 *  x[i] < *min and *max = x[i] when x[i] > *max. So a NaN element never
 *  enters, a NaN start stays, and the caller chooses the start: 0 and 0 for a
 *  range that includes zero (int8 dynamic quantization), or x[0] and x[0]
 *  with the scan on x + 1 (ExecuTorch's choose_qparams: a NaN first element
 *  wins). A zero result is +0 (which of two equal zeros a scan meets first
 *  depends on its order). The widest variant the CPU has (AVX-512F, AVX2,
 *  portable: PTERUN_ISA_MASK=0), every one with the portable one's bits;
 *  serial. */
PTERUN_COMPUTE_API void pterun_compute_f32_minmax(const float* x, size_t n, float* min, float* max);

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
  /* Added after name (the table's first fields keep their places). */
  /** sum_i x[i] */
  float (*sum)(const float* x, size_t n);
  /** y[i] = x[i] - m (a norm's centring), returns sum_i y[i]^2; x == y allowed. */
  float (*dev_sq_sum)(float* y, const float* x, float m, size_t n);
  /** max_i x[i] (-inf when n is 0; a zero maximum is +0); any NaN gives the first NaN. */
  float (*max)(const float* x, size_t n);
} pterun_compute_f32_rowops;

/** The widest variant pterun_cpu_features() (PTERUN_ISA_MASK) allows; never NULL. */
PTERUN_COMPUTE_API const pterun_compute_f32_rowops* pterun_compute_f32_rowops_select(void);

/* ---- low-bit linear (torchao's universal packed-weights layout) -------------
 * The engine behind libpterun_kernels_lowbit's torchao::_linear_8bit_act_{n}bit
 * operators (docs/lowbit.md has the layout and the arithmetic): activations
 * quantized per row to int8, exact integer dot products per weight group,
 * float32 accumulation in k order, columns split over the thread pool.
 * Results do not depend on the microkernel or on the thread count. */

/** A low-bit microkernel (opaque here, as the f32 one): the _ex entry
 *  points take one, NULL being the default selection. */
typedef struct pterun_compute_lowbit_ukernel pterun_compute_lowbit_ukernel;

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

/** Bytes pterun_compute_lowbit_repack writes for `w`: 0 when the
 *  microkernels read its width without unpacking (4 and 8 bits). */
PTERUN_COMPUTE_API size_t
pterun_compute_lowbit_repack_bytes(const pterun_compute_lowbit_weights* w);
/** Load-time repacking (a kernel's prepare): 1-3-bit codes rewritten in the
 *  4-bit layout, 5-7-bit codes in the 8-bit layout, per-group data and bias
 *  copied, at dst (pterun_compute_lowbit_repack_bytes(w) bytes, 64-byte
 *  aligned preferred); `out` describes the copy. Same codes, so the linear
 *  gives the same bits from either; the widths that need no repacking are
 *  described as they are. */
PTERUN_COMPUTE_API void pterun_compute_lowbit_repack(const pterun_compute_lowbit_weights* w,
                                                     uint8_t* dst,
                                                     pterun_compute_lowbit_weights* out);

/** Bytes pterun_compute_lowbit_pack writes: 0 when nbit is not 4 or 8, or
 *  group_size is not a multiple of 16 dividing k, or sizes are out of range. */
PTERUN_COMPUTE_API size_t pterun_compute_lowbit_pack_bytes(int nbit, int64_t n, int64_t k,
                                                           int64_t group_size, int has_zeros,
                                                           int has_bias);
/** Load-time packing of plain signed codes (int8 W[n][k], row-major, each in
 *  the nbit range: [-8, 7] for 4 bits) with per-group scales s[n][k /
 *  group_size] (w ~ (code - zero) * s), optional int32 zero points of the
 *  same shape and optional bias[n] into the universal layout at dst (`cap`
 *  bytes, pterun_compute_lowbit_pack_bytes; 64-byte aligned preferred).
 *  Returns 0 and describes the buffer in `out`, or -1 (geometry, size or a
 *  code outside the width). */
PTERUN_COMPUTE_API int pterun_compute_lowbit_pack(int nbit, int64_t n, int64_t k,
                                                  int64_t group_size, const int8_t* codes,
                                                  const float* scales, const int32_t* zeros,
                                                  const float* bias, uint8_t* dst, size_t cap,
                                                  pterun_compute_lowbit_weights* out);

/** Bytes of one 8-column tile of the universal layout (k < 2^31, group_size
 *  a multiple of 16 dividing k): per group, group_size * nbit code bytes,
 *  8 scales, 8 sums [, 8 zero points]; then [8 biases]. */
PTERUN_COMPUTE_API uint64_t pterun_compute_lowbit_tile_bytes(int nbit, int64_t k,
                                                             int64_t group_size, int has_zeros,
                                                             int has_bias);
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

/** As pterun_compute_lowbit_linear_ex with the activations already quantized
 *  per row: qa[m, k] int8 codes, a_scale[m], a_zero[m] (x ~ (qa - a_zero) *
 *  a_scale), e.g. by the program's own quantize operators. The same
 *  integer dot products and float accumulation. */
PTERUN_COMPUTE_API pterun_status pterun_compute_lowbit_linear_qa_ex(
    pterun_kernel_context* ctx, const pterun_compute_lowbit_weights* w, const int8_t* qa,
    const float* a_scale, const int32_t* a_zero, int64_t m, float* y,
    const pterun_compute_lowbit_ukernel* uk, pterun_threadpool* pool, size_t max_threads);

/* ---- 4-bit blockwise linear (XNNPACK's qd8 x qb4w / qc4w) --------------------
 * The engine behind the XNNPACK backend's dynamically quantized
 * fully-connected nodes with 4-bit weights (what `export_llama -qmode 8da4w
 * -X` emits; docs/lowbit.md, "16-column 4-bit panels"): int8 activation rows
 * with a scale and zero point each, symmetric 4-bit weights with one scale
 * per block of k (bf16, as XNNPACK stores them, or float32), an optional
 * bias. Per 16-column panel the codes are stored two per byte, the block
 * scales once and the zero-point term folded into one float per column, so
 * a decode step reads little more than the 4-bit codes. Exact int32 block
 * sums, float32 accumulation in block order: the same bits from every
 * microkernel and thread count. */

/** A microkernel of this family (opaque; NULL: the default selection). */
typedef struct pterun_compute_qb4w_ukernel pterun_compute_qb4w_ukernel;

/** Packed weights (pterun_compute_qb4w_pack). */
typedef struct pterun_compute_qb4w_weights {
  int64_t n, k, block; /* block: a multiple of 8 dividing k */
  int scales_bf16;     /* block scales stored as bf16 (else float32) */
  int has_bias;
  uint64_t tile_bytes; /* bytes of one 16-column panel */
  const uint8_t* tiles;
} pterun_compute_qb4w_weights;

/** Bytes pterun_compute_qb4w_pack writes, or 0 when it does not take the
 *  geometry: n >= 1, k < 2^31, block a multiple of 8 dividing k, at most
 *  65536, and at most 1024 blocks per row. */
PTERUN_COMPUTE_API size_t pterun_compute_qb4w_pack_bytes(int64_t n, int64_t k, int64_t block,
                                                         int scales_bf16, int has_bias);
/** Load-time packing of signed codes W[n][k] in [-8, 7] (row-major) with
 *  block scales s[n][k / block] given as float32 (`scales`) or as bf16 bit
 *  patterns (`scales_bf16`; exactly one of the two non-NULL) and an
 *  optional bias[n], at dst (`cap` bytes, pterun_compute_qb4w_pack_bytes;
 *  64-byte aligned preferred). Returns 0 and describes the buffer in `out`,
 *  or -1 (geometry, size or a code out of range). */
PTERUN_COMPUTE_API int pterun_compute_qb4w_pack(int64_t n, int64_t k, int64_t block,
                                                const int8_t* codes, const float* scales,
                                                const uint16_t* scales_bf16, const float* bias,
                                                uint8_t* dst, size_t cap,
                                                pterun_compute_qb4w_weights* out);
/** pterun_compute_qb4w_pack from unsigned 4-bit values, two per byte (rows
 *  of k / 2 bytes; k even in the low nibble, code = value - 8): XNNPACK's
 *  qc4w / qb4w storage, packed without an int8 copy. */
PTERUN_COMPUTE_API int pterun_compute_qb4w_pack_u4(int64_t n, int64_t k, int64_t block,
                                                   const uint8_t* nibbles, const float* scales,
                                                   const uint16_t* scales_bf16, const float* bias,
                                                   uint8_t* dst, size_t cap,
                                                   pterun_compute_qb4w_weights* out);
/** y[m, n] = (qa[m, k] - a_zero[m]) * a_scale[m] times the weights (plus the
 *  bias), float32 row-major. No scratch: the per-row block sums live on the
 *  stack. Rows and panels are split over `pool` (up to max_threads, 0: all)
 *  when the product is large enough to pay for it; uk NULL selects the
 *  widest microkernel pterun_cpu_features() allows. */
PTERUN_COMPUTE_API pterun_status pterun_compute_qb4w_linear_qa(
    const pterun_compute_qb4w_weights* w, const int8_t* qa, const float* a_scale,
    const int32_t* a_zero, int64_t m, float* y, const pterun_compute_qb4w_ukernel* uk,
    pterun_threadpool* pool, size_t max_threads);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_COMPUTE_H_ */
