/* int8 depthwise convolution, AVX-512F (built with -mavx512f by
 * src/compute/isa.cmake, selected at run time only when the CPU has it). */
#include "src/compute/qgemm/qdwconv.h"

#if defined(__AVX512F__)
#define QDW_FN pc_qs8_dwconv__avx512f
#include "src/compute/qgemm/qdwconv_tmpl.h"
#define QDWN_FN pc_qs8_dwconv_nhwc__avx512f
#include "src/compute/qgemm/qdwconv_nhwc_tmpl.h"
#else
typedef int pc_qdwconv_avx512_unavailable; /* not an empty translation unit */
#endif
