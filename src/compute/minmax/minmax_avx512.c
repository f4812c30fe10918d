/* The f32 range scan, 16 lanes (AVX-512F; built with -mavx512f by
 * src/compute/isa.cmake, selected at run time only when
 * pterun_cpu_features() reports AVX-512F). */
#include "src/compute/minmax/minmax.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#define MX_FN pc_f32_minmax__avx512f
#define MX_LANES 16
#define MX_V __m512
#define MX_LOADU _mm512_loadu_ps
#define MX_SET1 _mm512_set1_ps
#define MX_STOREU _mm512_storeu_ps
#define MX_MIN _mm512_min_ps
#define MX_MAX _mm512_max_ps
#include "src/compute/minmax/minmax_tmpl.h"
#else
typedef int pc_minmax_avx512_unavailable; /* not an empty translation unit */
#endif
