/* Weights packed at method load for the f32 GEMM (kernel ABI 3 prepare):
 * the matrix kernels' prepare packs a constant operand once through
 * libpterun_compute (pterun_compute_gemm_pack) into the instruction's state;
 * execute hands it to pterun_compute_gemm_ex, which falls back to the
 * unpacked matrix whenever the packed one does not fit the product. Also the
 * argument helper of the fused matrix/convolution + activation operators. */
#ifndef PTERUN_KERNELS_PORTABLE_PREPACK_H_
#define PTERUN_KERNELS_PORTABLE_PREPACK_H_

#include "pterun/compute.h"
#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

/* The state of an instruction whose prepare packed a weight. */
typedef struct pk_prepacked {
  const void* src; /* the constant tensor's data it was packed from */
  int64_t rows, cols;
  const pterun_compute_packed* packed;
  /* 1: src is only the weight's identity -- execute must read the packed
   * copy, no path may read src (pterun::convolution_bn packed the folded
   * weight straight from the unfolded one, conv_bn.c) */
  int packed_only;
  /* with packed_only, a packed B (a channels-last 1x1 convolution's W^T):
   * its column scales, for a product the packed copy does not fit
   * (pk_pack_b_scaled repacks from src) */
  const double* col_scale;
  /* a channels-last k x k convolution's pointer table (kxk_cl.c: zeroed at
   * load, filled by its first execute), or NULL */
  void* table;
  size_t table_bytes;
} pk_prepacked;

/* In a prepare: whether `t` is a constant float32 tensor (planned and caller
 * tensors have no data at prepare). */
int pk_prepack_constant_f32(const pterun_tensor* t);

/* In a prepare: packs `src` (rows x cols of constant tensor t) as `operand`
 * into the instruction's state. OK when it packs nothing (outside a method,
 * no memory: execute then packs per call as before). */
pterun_status pk_prepack(pterun_kernel_context* ctx, const pterun_tensor* t, int operand,
                         int64_t rows, int64_t cols, const pterun_compute_matrix* src);

/* pk_prepack into `st`: the first member of a state the kernel allocated
 * itself (its first block); NULL: allocate the pk_prepacked as the state. */
pterun_status pk_prepack_to(pterun_kernel_context* ctx, pk_prepacked* st, const pterun_tensor* t,
                            int operand, int64_t rows, int64_t cols,
                            const pterun_compute_matrix* src);

/* At execute: the operand this instruction packed from tensor t's current
 * data (rows x cols), or NULL. */
const pterun_compute_packed* pk_prepacked_for(const pterun_kernel_context* ctx,
                                              const pterun_tensor* t, int64_t rows, int64_t cols);

/* Fused operators (pterun::*_hardtanh): the hardtanh bounds (min_val,
 * max_val) at args[i], args[i + 1], as the float32 bounds hardtanh applies. */
pterun_status pk_arg_clamp_bounds(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                  float* lo, float* hi);

/* The fused-activation variants of a kernel with n arguments (out at
 * n - 2): defines <base>_relu_out / _relu_prepare (the same arguments) and
 * <base>_hardtanh_out / _hardtanh_prepare (min_val, max_val before out), over
 *   impl(ctx, args, iout, const pterun_compute_gemm_opts* act) and
 *   prep(ctx, args, nargs, want, iout). */
#define PK_DEFINE_FUSED_ACTIVATIONS(base, impl, prep, n)                                           \
  PTERUN_KERNEL(base##_relu_out) {                                                                 \
    pterun_compute_gemm_opts act = PTERUN_COMPUTE_GEMM_OPTS_INIT;                                  \
    act.activation = PTERUN_COMPUTE_ACT_RELU;                                                      \
    PTERUN_CHECK_NARGS(ctx, nargs, (n));                                                           \
    return impl(ctx, args, (n) - 2, &act);                                                         \
  }                                                                                                \
  pterun_status base##_relu_prepare(pterun_kernel_context* ctx, pterun_value** args,               \
                                    size_t nargs) {                                                \
    return prep(ctx, args, nargs, (n), (n) - 2);                                                   \
  }                                                                                                \
  pterun_status base##_hardtanh_out(pterun_kernel_context* ctx, pterun_value** args,               \
                                    size_t nargs) {                                                \
    pterun_compute_gemm_opts act = PTERUN_COMPUTE_GEMM_OPTS_INIT;                                  \
    act.activation = PTERUN_COMPUTE_ACT_CLAMP;                                                     \
    PTERUN_CHECK_NARGS(ctx, nargs, (n) + 2);                                                       \
    PTERUN_TRY(pk_arg_clamp_bounds(ctx, args, (n) - 2, &act.lo, &act.hi));                         \
    return impl(ctx, args, (n), &act);                                                             \
  }                                                                                                \
  pterun_status base##_hardtanh_prepare(pterun_kernel_context* ctx, pterun_value** args,           \
                                        size_t nargs) {                                            \
    return prep(ctx, args, nargs, (n) + 2, (n));                                                   \
  }

#endif
