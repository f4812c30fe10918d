/* The quantized kernel library's one entry point: a constant table built from
 * ops.inc (rows: QK_OP("quantized_decomposed::op.overload", fn), and
 * QK_OP_PREP for a kernel whose function also serves as its load-time
 * prepare, telling the two apart with pterun_kernel_preparing()). */
#include "pterun/kernels/quantized.h"

#define QK_OP(name, fn) PTERUN_KERNEL(fn);
#define QK_OP_PREP QK_OP
#include "kernels/quantized/ops.inc"
#undef QK_OP
#undef QK_OP_PREP

static const pterun_kernel kQuantizedKernels[] = {
#define QK_OP(op_, fn_) {.op = op_, .fn = fn_},
#define QK_OP_PREP(op_, fn_) {.op = op_, .fn = fn_, .prepare = fn_},
#include "kernels/quantized/ops.inc"
#undef QK_OP
#undef QK_OP_PREP
};

static const pterun_kernel_library kQuantizedLibrary = {
    PTERUN_KERNEL_ABI_VERSION, "kernels_quantized",
    sizeof(kQuantizedKernels) / sizeof(kQuantizedKernels[0]), kQuantizedKernels};

const pterun_kernel_library* pterun_kernels_quantized(void) {
  return &kQuantizedLibrary;
}
