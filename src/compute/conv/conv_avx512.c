/* f32 direct convolution, 16 lanes with fused multiply-add (AVX-512F; built
 * with -mavx512f by src/compute/isa.cmake, selected at run time only when
 * the CPU has it). 8 channels x 3 vectors: 24 of the 32 registers. */
#include "src/compute/conv/conv.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#define CV_LANES 16
#define CV_OCB 8
#define CV_VMAX 3
#define CV_FMA(x, w, acc) ((fv_v)_mm512_fmadd_ps((__m512)(x), (__m512)(w), (__m512)(acc)))
#define CV_FN pc_f32_conv2d__avx512f
#include "src/compute/conv/conv_tmpl.h"
#else
typedef int pc_conv_avx512_unavailable; /* not an empty translation unit */
#endif
