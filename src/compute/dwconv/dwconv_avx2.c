/* f32 depthwise convolution, 8 lanes (AVX2; built with -mavx2 by
 * src/compute/isa.cmake, selected at run time only when the CPU has it). */
#include "src/compute/dwconv/dwconv.h"

#if defined(__AVX2__)
#define DW_LANES 8
#define DW_FN pc_f32_dwconv__avx2
#define DW_TAPS pc_dw_taps__avx2
#include "src/compute/dwconv/dwconv_tmpl.h"
#define DWN_FN pc_f32_dwconv_nchw__avx2
#include "src/compute/dwconv/dwconv_nchw_tmpl.h"
#else
typedef int pc_dwconv_avx2_unavailable; /* not an empty translation unit */
#endif
