/* Matrix products used by the XNNPACK backend's nodes (xb_gemm.c). */
#ifndef PTERUN_BACKENDS_XNNPACK_XB_GEMM_H_
#define PTERUN_BACKENDS_XNNPACK_XB_GEMM_H_

#include <stddef.h>
#include <stdint.h>

/* C[M,N] = clamp(A[M,K] · B[K,N] + bias[N], lo, hi); bias may be NULL.
 * Rows of A, B and C are lda, ldb and ldc elements apart. */
void xb_gemm_f32(size_t M, size_t K, size_t N, const float* A, size_t lda, const float* B,
                 size_t ldb, const float* bias, float* C, size_t ldc, float lo, float hi);

/* C[M,N] = A[M,K] · B[K,N] in int32, A holding zero-point-centred
 * activations (int16), B int8 weights. */
void xb_igemm(size_t M, size_t K, size_t N, const int16_t* A, size_t lda, const int8_t* B,
              size_t ldb, int32_t* C, size_t ldc);

/* acc[i] += x[i] * w[i] (depthwise convolution taps). */
void xb_madd_f32(float* acc, const float* x, const float* w, size_t n);
/* acc[i] += (x[i] - zp) * w[i], x int8 or (is_u8) uint8. */
void xb_madd_q8(int32_t* acc, const void* x, int is_u8, int32_t zp, const int8_t* w, size_t n);
/* dst[i] = x[i] - zp as int16 (activations centred for xb_igemm). */
void xb_widen_q8(int16_t* dst, const void* x, int is_u8, int32_t zp, size_t n);

#endif
