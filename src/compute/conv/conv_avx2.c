/* f32 direct convolution, 8 lanes with fused multiply-add (AVX2 + FMA;
 * built with -mavx2 -mfma by src/compute/isa.cmake, selected at run time
 * only when the CPU has both). 4 channels x 3 vectors: 12 accumulators. */
#include "src/compute/conv/conv.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define CV_LANES 8
#define CV_OCB 4
#define CV_VMAX 3
#define CV_FMA(x, w, acc) ((fv_v)_mm256_fmadd_ps((__m256)(x), (__m256)(w), (__m256)(acc)))
#define CV_FN pc_f32_conv2d__avx2
#include "src/compute/conv/conv_tmpl.h"
#else
typedef int pc_conv_avx2_unavailable; /* not an empty translation unit */
#endif
