/* f32 GEMM microkernel for AVX2 + FMA: 6 x 16 tile (12 accumulators, 2 B
 * vectors and a broadcast: 15 of the 16 ymm registers). Built with
 * -mavx2 -mfma by src/compute/isa.cmake; selected at run time only when
 * pterun_cpu_features() reports AVX2 and FMA. */
#include "src/compute/gemm/ukernel.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#define GT_FN pc_f32_gemm_ukernel__avx2_6x16
#define GT_MR 6
#define GT_NRV 2
#define GT_VLEN 8
#define GT_VEC __m256
#define GT_ZERO() _mm256_setzero_ps()
#define GT_LOADU(p) _mm256_loadu_ps(p)
#define GT_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define GT_BCAST(p) _mm256_broadcast_ss(p)
#define GT_FMA(x, y, z) _mm256_fmadd_ps((x), (y), (z))
#define GT_MUL(x, y) _mm256_mul_ps((x), (y))
#define GT_ADD(x, y) _mm256_add_ps((x), (y))
/* NLE_UQ: v > 0 or unordered (NaN); -0 fails and the and gives +0. */
/* max_ps(0, v): v unless v < 0 (v when NaN, and -0 stays -0, as aten::relu). */
#define GT_RELU(v) _mm256_max_ps(_mm256_setzero_ps(), (v))
/* max_ps(l, v) is l > v ? l : v (v when either is NaN), min_ps(h, t) is h < t ? h : t. */
#define GT_CLAMP(v, l, h) _mm256_min_ps((h), _mm256_max_ps((l), (v)))
#include "src/compute/gemm/ukernel_tmpl.h"

/* 4 x 16 for the last rows of M (M = 32: 6+6+6+6+4+4 instead of 36 rows):
 * 8 accumulators, still enough independent FMAs for both pipes. */
#undef GT_FN
#undef GT_MR
#define GT_FN pc_f32_gemm_ukernel__avx2_4x16
#define GT_MR 4
#include "src/compute/gemm/ukernel_tmpl.h"

/* 1 x 32 for M == 1: four independent accumulators hide the FMA latency. */
#undef GT_FN
#undef GT_MR
#undef GT_NRV
#define GT_FN pc_f32_gemm_ukernel__avx2_1x32
#define GT_MR 1
#define GT_NRV 4
#define GT_SW 2 /* two strips of the GEMM kernel's packed B (ukernel.h) */
#include "src/compute/gemm/ukernel_tmpl.h"

#else
typedef int pc_gemm_avx2_unavailable; /* not an empty translation unit */
#endif
