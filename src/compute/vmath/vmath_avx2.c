/* f32 vector math, 8 lanes (AVX2; built with -mavx2 -mfma by src/compute/isa.cmake,
 * selected at run time only when pterun_cpu_features() reports AVX2). */
#include "src/compute/vmath/vmath.h"

#if defined(__AVX2__)
#define VM_LANES 8
#define VM_FN(op) pc_f32_##op##__avx2
#include "src/compute/vmath/vmath_tmpl.h"
#else
typedef int pc_vmath_avx2_unavailable; /* not an empty translation unit */
#endif
