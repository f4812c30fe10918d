/* f32 vector math, 4-lane generic vectors: the baseline every CPU runs (SSE2
 * on x86-64, NEON on AArch64, scalar elsewhere) and the reference the wider
 * variants must match bit for bit. */
#include "src/compute/vmath/vmath.h"

#define VM_LANES 4
#define VM_FN(op) pc_f32_##op##__v4
#include "src/compute/vmath/vmath_tmpl.h"
