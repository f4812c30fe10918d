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

typedef float xb_v8 __attribute__((vector_size(32)));

/* Unaligned vector load/store (memcpy: no aliasing or alignment
 * assumptions; macros, so that no function passes a vector by value). */
#define LD8(v, p) memcpy(&(v), (p), sizeof(xb_v8))
#define ST8(p, v) memcpy((p), &(v), sizeof(xb_v8))

/* Rows m..m+R-1 (R <= 4) by columns n0..n0+15: 2R accumulators stay in
 * registers over the whole K loop. */
XB_INLINE void tile_4x16(size_t R, size_t K, const float* A, size_t lda, const float* B, size_t ldb,
                         const float* bias, float* C, size_t ldc) {
  xb_v8 b0 = {0}, b1 = {0};
  if (bias != NULL) {
    LD8(b0, bias);
    LD8(b1, bias + 8);
  }
  xb_v8 c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1, c30 = b0, c31 = b1;
  const float* a0 = A;
  const float* a1 = R > 1 ? A + lda : A;
  const float* a2 = R > 2 ? A + 2 * lda : A;
  const float* a3 = R > 3 ? A + 3 * lda : A;
  for (size_t k = 0; k < K; ++k) {
    xb_v8 w0, w1;
    LD8(w0, B + k * ldb);
    LD8(w1, B + k * ldb + 8);
    float x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
    c00 += x0 * w0;
    c01 += x0 * w1;
    c10 += x1 * w0;
    c11 += x1 * w1;
    c20 += x2 * w0;
    c21 += x2 * w1;
    c30 += x3 * w0;
    c31 += x3 * w1;
  }
  ST8(C, c00);
  ST8(C + 8, c01);
  if (R > 1) {
    ST8(C + ldc, c10);
    ST8(C + ldc + 8, c11);
  }
  if (R > 2) {
    ST8(C + 2 * ldc, c20);
    ST8(C + 2 * ldc + 8, c21);
  }
  if (R > 3) {
    ST8(C + 3 * ldc, c30);
    ST8(C + 3 * ldc + 8, c31);
  }
}

/* Rows m..m+R-1 (R <= 4) by 8 columns. */
XB_INLINE void tile_4x8(size_t R, size_t K, const float* A, size_t lda, const float* B, size_t ldb,
                        const float* bias, float* C, size_t ldc) {
  xb_v8 b0 = {0};
  if (bias != NULL) LD8(b0, bias);
  xb_v8 c0 = b0, c1 = b0, c2 = b0, c3 = b0;
  const float* a0 = A;
  const float* a1 = R > 1 ? A + lda : A;
  const float* a2 = R > 2 ? A + 2 * lda : A;
  const float* a3 = R > 3 ? A + 3 * lda : A;
  for (size_t k = 0; k < K; ++k) {
    xb_v8 w;
    LD8(w, B + k * ldb);
    c0 += a0[k] * w;
    c1 += a1[k] * w;
    c2 += a2[k] * w;
    c3 += a3[k] * w;
  }
  ST8(C, c0);
  if (R > 1) ST8(C + ldc, c1);
  if (R > 2) ST8(C + 2 * ldc, c2);
  if (R > 3) ST8(C + 3 * ldc, c3);
}

XB_INLINE void gemm_f32_body(size_t M, size_t K, size_t N, const float* A, size_t lda,
                             const float* B, size_t ldb, const float* bias, float* C, size_t ldc,
                             float lo, float hi) {
  size_t n16 = N & ~(size_t)15, n8 = N & ~(size_t)7;
  for (size_t m = 0; m < M; m += 4) {
    size_t R = M - m < 4 ? M - m : 4;
    for (size_t n0 = 0; n0 < n16; n0 += 16)
      tile_4x16(R, K, A + m * lda, lda, B + n0, ldb, bias != NULL ? bias + n0 : NULL,
                C + m * ldc + n0, ldc);
    if (n8 > n16)
      tile_4x8(R, K, A + m * lda, lda, B + n16, ldb, bias != NULL ? bias + n16 : NULL,
               C + m * ldc + n16, ldc);
    for (size_t r = 0; r < R; ++r) {
      float* c = C + (m + r) * ldc;
      const float* a = A + (m + r) * lda;
      for (size_t n = n8; n < N; ++n) { /* the last < 8 columns */
        float acc = bias != NULL ? bias[n] : 0.0f;
        for (size_t k = 0; k < K; ++k) acc += a[k] * B[k * ldb + n];
        c[n] = acc;
      }
      for (size_t n = 0; n < N; ++n) c[n] = c[n] < lo ? lo : (c[n] > hi ? hi : c[n]);
    }
  }
}

typedef int32_t xb_v8i __attribute__((vector_size(32)));
typedef int8_t xb_v8b __attribute__((vector_size(8)));

/* Rows m..m+R-1 (R <= 4) by 8 columns, int32 accumulators in registers. */
XB_INLINE void itile_4x8(size_t R, size_t K, const int16_t* A, size_t lda, const int8_t* B,
                         size_t ldb, int32_t* C, size_t ldc) {
  xb_v8i c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
  const int16_t* a0 = A;
  const int16_t* a1 = R > 1 ? A + lda : A;
  const int16_t* a2 = R > 2 ? A + 2 * lda : A;
  const int16_t* a3 = R > 3 ? A + 3 * lda : A;
  for (size_t k = 0; k < K; ++k) {
    xb_v8b wb;
    memcpy(&wb, B + k * ldb, sizeof wb);
    xb_v8i w = __builtin_convertvector(wb, xb_v8i);
    c0 += (int32_t)a0[k] * w;
    c1 += (int32_t)a1[k] * w;
    c2 += (int32_t)a2[k] * w;
    c3 += (int32_t)a3[k] * w;
  }
  memcpy(C, &c0, sizeof c0);
  if (R > 1) memcpy(C + ldc, &c1, sizeof c1);
  if (R > 2) memcpy(C + 2 * ldc, &c2, sizeof c2);
  if (R > 3) memcpy(C + 3 * ldc, &c3, sizeof c3);
}

XB_INLINE void igemm_body(size_t M, size_t K, size_t N, const int16_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  size_t n8 = N & ~(size_t)7;
  for (size_t m = 0; m < M; m += 4) {
    size_t R = M - m < 4 ? M - m : 4;
    for (size_t n0 = 0; n0 < n8; n0 += 8)
      itile_4x8(R, K, A + m * lda, lda, B + n0, ldb, C + m * ldc + n0, ldc);
    for (size_t r = 0; r < R; ++r) {
      const int16_t* a = A + (m + r) * lda;
      for (size_t n = n8; n < N; ++n) {
        int32_t acc = 0;
        for (size_t k = 0; k < K; ++k)
          acc = xb_wrap_add(acc, (int32_t)a[k] * (int32_t)B[k * ldb + n]);
        C[(m + r) * ldc + n] = acc;
      }
    }
  }
}

XB_INLINE void madd_q8_body(int32_t* acc, const void* x, int is_u8, int32_t zp, const int8_t* w,
                            size_t n) {
  if (is_u8) {
    const uint8_t* xu = x;
    for (size_t i = 0; i < n; ++i)
      acc[i] = xb_wrap_add(acc[i], ((int32_t)xu[i] - zp) * (int32_t)w[i]);
  } else {
    const int8_t* xs = x;
    for (size_t i = 0; i < n; ++i)
      acc[i] = xb_wrap_add(acc[i], ((int32_t)xs[i] - zp) * (int32_t)w[i]);
  }
}

XB_INLINE void widen_q8_body(int16_t* dst, const void* x, int is_u8, int32_t zp, size_t n) {
  if (is_u8) {
    const uint8_t* xu = x;
    for (size_t i = 0; i < n; ++i) dst[i] = (int16_t)((int32_t)xu[i] - zp);
  } else {
    const int8_t* xs = x;
    for (size_t i = 0; i < n; ++i) dst[i] = (int16_t)((int32_t)xs[i] - zp);
  }
}

XB_INLINE void dwconv_f32_body(const xb_dw_geom* g, const float* in, const float* w,
                               const float* bias, float* out) {
  for (size_t b = 0; b < g->B; ++b)
    for (size_t oh = 0; oh < g->OH; ++oh)
      for (size_t ow = 0; ow < g->OW; ++ow) {
        float* restrict acc = out + ((b * g->OH + oh) * g->OW + ow) * g->OC;
        memcpy(acc, bias, g->OC * sizeof(float));
        for (size_t kh = 0; kh < g->KH; ++kh) {
          ptrdiff_t ih = (ptrdiff_t)(oh * g->sh + kh * g->dh) - (ptrdiff_t)g->pad_top;
          if (ih < 0 || ih >= (ptrdiff_t)g->H) continue;
          for (size_t kw = 0; kw < g->KW; ++kw) {
            ptrdiff_t iw = (ptrdiff_t)(ow * g->sw + kw * g->dw) - (ptrdiff_t)g->pad_left;
            if (iw < 0 || iw >= (ptrdiff_t)g->W) continue;
            const float* restrict ip = in + ((b * g->H + (size_t)ih) * g->W + (size_t)iw) * g->IC;
            const float* restrict wp = w + (kh * g->KW + kw) * g->OC;
            if (g->dm == 1)
              for (size_t c = 0; c < g->OC; ++c) acc[c] += ip[c] * wp[c];
            else
              for (size_t c = 0; c < g->OC; ++c) acc[c] += ip[c / g->dm] * wp[c];
          }
        }
        for (size_t c = 0; c < g->OC; ++c)
          acc[c] = acc[c] < g->lo ? g->lo : (acc[c] > g->hi ? g->hi : acc[c]);
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
__attribute__((target("avx2"))) static void madd_q8_avx2(int32_t* acc, const void* x, int is_u8,
                                                         int32_t zp, const int8_t* w, size_t n) {
  madd_q8_body(acc, x, is_u8, zp, w, n);
}
__attribute__((target("avx2"))) static void widen_q8_avx2(int16_t* dst, const void* x, int is_u8,
                                                          int32_t zp, size_t n) {
  widen_q8_body(dst, x, is_u8, zp, n);
}
__attribute__((target("avx2,fma"))) static void dwconv_f32_avx2(const xb_dw_geom* g,
                                                                const float* in, const float* w,
                                                                const float* bias, float* out) {
  dwconv_f32_body(g, in, w, bias, out);
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

void xb_madd_q8(int32_t* acc, const void* x, int is_u8, int32_t zp, const int8_t* w, size_t n) {
#ifdef XB_HAVE_AVX2
  if (use_avx2()) {
    madd_q8_avx2(acc, x, is_u8, zp, w, n);
    return;
  }
#endif
  madd_q8_body(acc, x, is_u8, zp, w, n);
}

void xb_widen_q8(int16_t* dst, const void* x, int is_u8, int32_t zp, size_t n) {
#ifdef XB_HAVE_AVX2
  if (use_avx2()) {
    widen_q8_avx2(dst, x, is_u8, zp, n);
    return;
  }
#endif
  widen_q8_body(dst, x, is_u8, zp, n);
}

void xb_dwconv_f32(const xb_dw_geom* g, const float* in, const float* w, const float* bias,
                   float* out) {
#ifdef XB_HAVE_AVX2
  if (use_avx2()) {
    dwconv_f32_avx2(g, in, w, bias, out);
    return;
  }
#endif
  dwconv_f32_body(g, in, w, bias, out);
}
