/* f32 depthwise convolution, 16 lanes (AVX-512F; built with -mavx512f by
 * src/compute/isa.cmake, selected at run time only when the CPU has it). */
#include "src/compute/dwconv/dwconv.h"

#if defined(__AVX512F__)
#define DW_LANES 16
#define DW_FN pc_f32_dwconv__avx512f
#define DW_TAPS pc_dw_taps__avx512f
#include "src/compute/dwconv/dwconv_tmpl.h"
#define DWN_FN pc_f32_dwconv_nchw__avx512f
#include "src/compute/dwconv/dwconv_nchw_tmpl.h"
#else
typedef int pc_dwconv_avx512_unavailable; /* not an empty translation unit */
#endif
