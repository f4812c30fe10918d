/* The Cortex-M kernel library's one entry point: a constant table built from
 * ops.inc (rows: CM_OP("cortex_m::op.out", fn)). */
#include "pterun/kernels/cortex_m.h"

#define CM_OP(name, fn) PTERUN_KERNEL(fn);
#include "kernels/cortex_m/ops.inc"
#undef CM_OP

static const pterun_kernel kCortexMKernels[] = {
#define CM_OP(op_, fn_) {.op = op_, .fn = fn_},
#include "kernels/cortex_m/ops.inc"
#undef CM_OP
};

static const pterun_kernel_library kCortexMLibrary = {
    PTERUN_KERNEL_ABI_VERSION, "kernels_cortex_m",
    sizeof(kCortexMKernels) / sizeof(kCortexMKernels[0]), kCortexMKernels};

const pterun_kernel_library* pterun_kernels_cortex_m(void) {
  return &kCortexMLibrary;
}
