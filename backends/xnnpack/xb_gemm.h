/* Matrix products used by the XNNPACK backend's nodes (xb_gemm.c). */
#ifndef PTERUN_BACKENDS_XNNPACK_XB_GEMM_H_
#define PTERUN_BACKENDS_XNNPACK_XB_GEMM_H_

#include <stddef.h>
#include <stdint.h>

/* int32 accumulation wraps, as the SIMD paths (vpaddd) do: a hostile bias or
 * an extreme K must not be undefined behaviour in the scalar paths. */
static inline int32_t xb_wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* C[M,N] = clamp(A[M,K] · B[K,N] + bias[N], lo, hi); bias may be NULL.
 * Rows of A, B and C are lda, ldb and ldc elements apart. */
void xb_gemm_f32(size_t M, size_t K, size_t N, const float* A, size_t lda, const float* B,
                 size_t ldb, const float* bias, float* C, size_t ldc, float lo, float hi);

/* C[M,N] = A[M,K] · B[K,N] in int32, A holding zero-point-centred
 * activations (int16), B int8 weights. */
void xb_igemm(size_t M, size_t K, size_t N, const int16_t* A, size_t lda, const int8_t* B,
              size_t ldb, int32_t* C, size_t ldc);

/* Geometry of an NHWC depthwise convolution (channel c reads input channel
 * c / dm). */
typedef struct xb_dw_geom {
  size_t B, H, W, IC, OH, OW, OC, KH, KW, sh, sw, dh, dw, pad_top, pad_left, dm;
  float lo, hi;
} xb_dw_geom;

/* out = clamp(depthwise(in, w[KH][KW][OC]) + bias). */
void xb_dwconv_f32(const xb_dw_geom* g, const float* in, const float* w, const float* bias,
                   float* out);

/* acc[i] += (x[i] - zp) * w[i], x int8 or (is_u8) uint8. */
void xb_madd_q8(int32_t* acc, const void* x, int is_u8, int32_t zp, const int8_t* w, size_t n);
/* dst[i] = x[i] - zp as int16 (activations centred for xb_igemm). */
void xb_widen_q8(int16_t* dst, const void* x, int is_u8, int32_t zp, size_t n);

#endif
