/* The f32 range scan, 8 lanes (AVX; built with -mavx2 by
 * src/compute/isa.cmake, selected at run time only when
 * pterun_cpu_features() reports AVX2). */
#include "src/compute/minmax/minmax.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define MX_FN pc_f32_minmax__avx2
#define MX_LANES 8
#define MX_V __m256
#define MX_LOADU _mm256_loadu_ps
#define MX_SET1 _mm256_set1_ps
#define MX_STOREU _mm256_storeu_ps
#define MX_MIN _mm256_min_ps
#define MX_MAX _mm256_max_ps
#include "src/compute/minmax/minmax_tmpl.h"
#else
typedef int pc_minmax_avx2_unavailable; /* not an empty translation unit */
#endif
