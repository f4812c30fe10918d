/* The low-bit kernel library's one entry point: a constant table built from
 * ops.inc, and the 24 kernel functions (one thin wrapper per bit width over
 * the generic kernels in lb_linear.c / lb_embedding.c). */
#include "kernels/lowbit/lb.h"
#include "pterun/kernels/lowbit.h"

#define LB_OP(name, fn, prepare) static PTERUN_KERNEL(fn);
#include "kernels/lowbit/ops.inc"
#undef LB_OP
#define LB_LINEAR_PREPARE(n) static PTERUN_KERNEL(lb_linear_##n##bit_prepare);
LB_LINEAR_PREPARE(1)
LB_LINEAR_PREPARE(2)
LB_LINEAR_PREPARE(3)
LB_LINEAR_PREPARE(4)
LB_LINEAR_PREPARE(5)
LB_LINEAR_PREPARE(6)
LB_LINEAR_PREPARE(7)
LB_LINEAR_PREPARE(8)
#undef LB_LINEAR_PREPARE

static const pterun_kernel kLowbitKernels[] = {
#define LB_OP(op_, fn_, prepare_) {.op = op_, .fn = fn_, .prepare = prepare_},
#include "kernels/lowbit/ops.inc"
#undef LB_OP
};

static const pterun_kernel_library kLowbitLibrary = {
    PTERUN_KERNEL_ABI_VERSION, "kernels_lowbit", sizeof(kLowbitKernels) / sizeof(kLowbitKernels[0]),
    kLowbitKernels};

const pterun_kernel_library* pterun_kernels_lowbit(void) {
  return &kLowbitLibrary;
}

#define LB_DEFINE(n)                                                                               \
  static PTERUN_KERNEL(lb_linear_##n##bit_out) {                                                   \
    return lb_linear_out(ctx, args, nargs, n);                                                     \
  }                                                                                                \
  static PTERUN_KERNEL(lb_linear_##n##bit_prepare) {                                               \
    return lb_linear_prepare(ctx, args, nargs, n);                                                 \
  }                                                                                                \
  static PTERUN_KERNEL(lb_embedding_##n##bit_out) {                                                \
    return lb_embedding_out(ctx, args, nargs, n);                                                  \
  }                                                                                                \
  static PTERUN_KERNEL(lb_shared_embedding_##n##bit_out) {                                         \
    return lb_shared_embedding_out(ctx, args, nargs, n);                                           \
  }
LB_DEFINE(1)
LB_DEFINE(2)
LB_DEFINE(3)
LB_DEFINE(4)
LB_DEFINE(5)
LB_DEFINE(6)
LB_DEFINE(7)
LB_DEFINE(8)
