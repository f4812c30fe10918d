/* int8 depthwise convolution, AVX-512BW: the NHWC loop's inside-the-input
 * blocks take 32 channels a step in zmm registers (vpmaddwd on int16 pairs
 * needs BW), then the AVX2 16-channel steps; the NCHW loop as the AVX-512F
 * variant. Built with -mavx512f -mavx512bw by src/compute/isa.cmake (riding
 * on PTERUN_GEMM_AVX512VNNI, whose probe covers BW), selected at run time
 * only when the CPU has AVX-512BW. */
#include "src/compute/qgemm/qdwconv.h"

#if defined(__AVX512F__) && defined(__AVX512BW__)
#define QDW_FN pc_qs8_dwconv__avx512bw
#include "src/compute/qgemm/qdwconv_tmpl.h"
#define QDWN_FN pc_qs8_dwconv_nhwc__avx512bw
#include "src/compute/qgemm/qdwconv_nhwc_tmpl.h"
#else
typedef int pc_qdwconv_avx512bw_unavailable; /* not an empty translation unit */
#endif
