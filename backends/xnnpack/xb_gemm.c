/* The matrix-product loops behind FullyConnected, Conv2d and
 * BatchMatrixMultiply. Portable C written so that the compiler vectorises
 * the inner loop over N, over row tiles so that a thread pool can split M. */
#include "backends/xnnpack/xb_gemm.h"

#include <string.h>

#include "pterun/cpu.h"

#if defined(__GNUC__)
#define XB_INLINE static inline __attribute__((always_inline))
#else
#define XB_INLINE static inline
#endif

XB_INLINE void gemm_f32_body(size_t M, size_t K, size_t N, const float* A, size_t lda,
                             const float* B, size_t ldb, const float* bias, float* C, size_t ldc,
                             float lo, float hi) {
  size_t m = 0;
  // Four rows at a time: each B row is loaded once for four outputs.
  for (; m + 4 <= M; m += 4) {
    float* restrict c0 = C + m * ldc;
    float* restrict c1 = c0 + ldc;
    float* restrict c2 = c1 + ldc;
    float* restrict c3 = c2 + ldc;
    for (size_t n = 0; n < N; ++n) {
      float b = bias != NULL ? bias[n] : 0.0f;
      c0[n] = b;
      c1[n] = b;
      c2[n] = b;
      c3[n] = b;
    }
    const float* a0 = A + m * lda;
    for (size_t k = 0; k < K; ++k) {
      const float* restrict b = B + k * ldb;
      float x0 = a0[k], x1 = a0[lda + k], x2 = a0[2 * lda + k], x3 = a0[3 * lda + k];
      for (size_t n = 0; n < N; ++n) {
        float w = b[n];
        c0[n] += x0 * w;
        c1[n] += x1 * w;
        c2[n] += x2 * w;
        c3[n] += x3 * w;
      }
    }
    for (size_t r = 0; r < 4; ++r) {
      float* c = C + (m + r) * ldc;
      for (size_t n = 0; n < N; ++n) c[n] = c[n] < lo ? lo : (c[n] > hi ? hi : c[n]);
    }
  }
  for (; m < M; ++m) {
    float* restrict c = C + m * ldc;
    for (size_t n = 0; n < N; ++n) c[n] = bias != NULL ? bias[n] : 0.0f;
    const float* a = A + m * lda;
    for (size_t k = 0; k < K; ++k) {
      const float* restrict b = B + k * ldb;
      float x = a[k];
      for (size_t n = 0; n < N; ++n) c[n] += x * b[n];
    }
    for (size_t n = 0; n < N; ++n) c[n] = c[n] < lo ? lo : (c[n] > hi ? hi : c[n]);
  }
}

XB_INLINE void igemm_body(size_t M, size_t K, size_t N, const int16_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  for (size_t m = 0; m < M; ++m) {
    int32_t* restrict c = C + m * ldc;
    memset(c, 0, N * sizeof *c);
    const int16_t* a = A + m * lda;
    for (size_t k = 0; k < K; ++k) {
      int32_t x = a[k];
      if (x == 0) continue;
      const int8_t* restrict b = B + k * ldb;
      for (size_t n = 0; n < N; ++n) c[n] += x * (int32_t)b[n];
    }
  }
}

/* The same loops compiled twice: for the baseline ISA and, on x86-64, for
 * AVX2+FMA, chosen per call from pterun_cpu_features() so that
 * PTERUN_ISA_MASK=0 forces the portable build. */
static void gemm_f32_generic(size_t M, size_t K, size_t N, const float* A, size_t lda,
                             const float* B, size_t ldb, const float* bias, float* C, size_t ldc,
                             float lo, float hi) {
  gemm_f32_body(M, K, N, A, lda, B, ldb, bias, C, ldc, lo, hi);
}
static void igemm_generic(size_t M, size_t K, size_t N, const int16_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  igemm_body(M, K, N, A, lda, B, ldb, C, ldc);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define XB_HAVE_AVX2 1
__attribute__((target("avx2,fma"))) static void gemm_f32_avx2(size_t M, size_t K, size_t N,
                                                              const float* A, size_t lda,
                                                              const float* B, size_t ldb,
                                                              const float* bias, float* C,
                                                              size_t ldc, float lo, float hi) {
  gemm_f32_body(M, K, N, A, lda, B, ldb, bias, C, ldc, lo, hi);
}
__attribute__((target("avx2"))) static void igemm_avx2(size_t M, size_t K, size_t N,
                                                       const int16_t* A, size_t lda,
                                                       const int8_t* B, size_t ldb, int32_t* C,
                                                       size_t ldc) {
  igemm_body(M, K, N, A, lda, B, ldb, C, ldc);
}
static int use_avx2(void) {
  const uint64_t need = PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA;
  return (pterun_cpu_features() & need) == need;
}
#endif

void xb_gemm_f32(size_t M, size_t K, size_t N, const float* A, size_t lda, const float* B,
                 size_t ldb, const float* bias, float* C, size_t ldc, float lo, float hi) {
#ifdef XB_HAVE_AVX2
  if (use_avx2()) {
    gemm_f32_avx2(M, K, N, A, lda, B, ldb, bias, C, ldc, lo, hi);
    return;
  }
#endif
  gemm_f32_generic(M, K, N, A, lda, B, ldb, bias, C, ldc, lo, hi);
}

void xb_igemm(size_t M, size_t K, size_t N, const int16_t* A, size_t lda, const int8_t* B,
              size_t ldb, int32_t* C, size_t ldc) {
#ifdef XB_HAVE_AVX2
  if (use_avx2()) {
    igemm_avx2(M, K, N, A, lda, B, ldb, C, ldc);
    return;
  }
#endif
  igemm_generic(M, K, N, A, lda, B, ldb, C, ldc);
}
