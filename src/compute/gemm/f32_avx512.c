/* f32 GEMM microkernel for AVX-512F: 12 x 32 tile (24 accumulators, 2 B
 * vectors, broadcasts folded into the FMAs: 26-27 of the 32 zmm registers).
 * Built with -mavx512f by src/compute/isa.cmake; selected at run time
 * only when pterun_cpu_features() reports AVX-512F. The body is the same
 * template as the AVX2 kernel; only the intrinsics differ. */
#include "src/compute/gemm/ukernel.h"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

#define GT_FN pc_f32_gemm_ukernel__avx512f_12x32
#define GT_MR 12
#define GT_NRV 2
#define GT_VLEN 16
#define GT_VEC __m512
#define GT_ZERO() _mm512_setzero_ps()
#define GT_LOADU(p) _mm512_loadu_ps(p)
#define GT_STOREU(p, v) _mm512_storeu_ps((p), (v))
#define GT_BCAST(p) _mm512_set1_ps(*(p))
#define GT_FMA(x, y, z) _mm512_fmadd_ps((x), (y), (z))
#define GT_MUL(x, y) _mm512_mul_ps((x), (y))
#define GT_ADD(x, y) _mm512_add_ps((x), (y))
/* max_ps(0, v): v unless v < 0 (v when NaN, and -0 stays -0, as aten::relu). */
#define GT_RELU(v) _mm512_max_ps(_mm512_setzero_ps(), (v))
#define GT_CLAMP(v, l, h) _mm512_min_ps((h), _mm512_max_ps((l), (v)))
#include "src/compute/gemm/ukernel_tmpl.h"

/* 4 x 32 for the last rows of M (M = 16: 12 + 4 rows instead of 24): 8
 * accumulators, enough independent FMAs for both pipes. */
#undef GT_FN
#undef GT_MR
#define GT_FN pc_f32_gemm_ukernel__avx512f_4x32
#define GT_MR 4
#include "src/compute/gemm/ukernel_tmpl.h"

/* 12 x 16 for products of at most 16 columns (a layer of 16 channels, a
 * small head): one vector per row instead of a 32-wide tile half of which
 * is discarded (the edge path's staging copy and separate activation
 * included). The 12 x 32 kernel's K blocks and per-element operations: the
 * same bits. */
#undef GT_FN
#undef GT_MR
#undef GT_NRV
#define GT_FN pc_f32_gemm_ukernel__avx512f_12x16
#define GT_MR 12
#define GT_NRV 1
#include "src/compute/gemm/ukernel_tmpl.h"

/* 1 x 64 for M == 1: four independent accumulators hide the FMA latency. */
#undef GT_FN
#undef GT_MR
#undef GT_NRV
#define GT_FN pc_f32_gemm_ukernel__avx512f_1x64
#define GT_MR 1
#define GT_NRV 4
#define GT_SW 2 /* two strips of the GEMM kernel's packed B (ukernel.h) */
#include "src/compute/gemm/ukernel_tmpl.h"

#else
typedef int pc_gemm_avx512_unavailable; /* not an empty translation unit */
#endif
