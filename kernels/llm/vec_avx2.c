/* AVX2+FMA row primitives of the attention kernels. Built with -mavx2 -mfma
 * (kernels/llm/CMakeLists fragment in the top-level CMakeLists.txt) and only
 * called after pterun_cpu_features() reported both. */
#include "kernels/llm/llm_util.h"

#if defined(PTERUN_LLM_AVX2)
#include <immintrin.h>

static float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

static float dot_avx2(const float* a, const float* b, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  size_t i = 0;
  float r;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  r = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) r += a[i] * b[i];
  return r;
}

static void scale_axpy_avx2(float* y, float s, float p, const float* x, size_t n) {
  __m256 vs = _mm256_set1_ps(s), vp = _mm256_set1_ps(p);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 t = _mm256_mul_ps(_mm256_loadu_ps(y + i), vs);
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(vp, _mm256_loadu_ps(x + i), t));
  }
  for (; i < n; ++i) y[i] = y[i] * s + p * x[i];
}

static void scale_avx2(float* y, float s, size_t n) {
  __m256 vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vs));
  for (; i < n; ++i) y[i] *= s;
}

static const llm_vec_ops kAvx2 = {dot_avx2, scale_axpy_avx2, scale_avx2, "avx2"};

const llm_vec_ops* llm_vec_ops_avx2(void) {
  return &kAvx2;
}
#else
typedef int llm_vec_avx2_unused; /* ISO C: a translation unit is not empty */
#endif
