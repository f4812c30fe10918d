/* The portable kernel library's one entry point: a constant table built from
 * the operator lists, one per family folder (<family>/ops.inc, all included
 * by ops.inc). Each list row is
 * PK_OP("ns::op.overload", fn), or PK_OP_PREPARED("ns::op.overload", fn,
 * prepare) for a kernel with a load-time prepare (kernel ABI 3), under a
 * comment naming the source file. */
#include "pterun/kernels/portable.h"

#define PK_OP(name, fn)                                                                            \
  pterun_status fn(pterun_kernel_context* ctx, pterun_value** args, size_t nargs);
#define PK_OP_PREPARED(name, fn, prep)                                                             \
  PK_OP(name, fn)                                                                                  \
  pterun_status prep(pterun_kernel_context* ctx, pterun_value** args, size_t nargs);
#include "kernels/portable/ops.inc"
#undef PK_OP
#undef PK_OP_PREPARED

static const pterun_kernel kPortableKernels[] = {
#define PK_OP(op_, fn_) {.op = op_, .fn = fn_},
#define PK_OP_PREPARED(op_, fn_, prep_) {.op = op_, .fn = fn_, .prepare = prep_},
#include "kernels/portable/ops.inc"
#undef PK_OP
#undef PK_OP_PREPARED
};

static const pterun_kernel_library kPortableLibrary = {
    PTERUN_KERNEL_ABI_VERSION, "kernels_portable",
    sizeof(kPortableKernels) / sizeof(kPortableKernels[0]), kPortableKernels};

const pterun_kernel_library* pterun_kernels_portable(void) {
  return &kPortableLibrary;
}
