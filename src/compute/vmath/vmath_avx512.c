/* f32 vector math, 16 lanes (AVX-512F; built with -mavx512f by src/compute/isa.cmake,
 * selected at run time only when pterun_cpu_features() reports AVX-512F). */
#include "src/compute/vmath/vmath.h"

#if defined(__AVX512F__)
#define VM_LANES 16
#define VM_FN(op) pc_f32_##op##__avx512f
#include "src/compute/vmath/vmath_tmpl.h"
#else
typedef int pc_vmath_avx512_unavailable; /* not an empty translation unit */
#endif
