/* The matrix kernels' entry points for the fused operators built on them in
 * other files (nn_conv_bn.c). */
#ifndef PTERUN_KERNELS_PORTABLE_NN_MATMUL_H_
#define PTERUN_KERNELS_PORTABLE_NN_MATMUL_H_

#include "kernels/portable/prepack.h"

/* aten::addmm's arguments 0..4 in args, out at args[iout]; `act`: the
 * activation applied in the epilogue (NULL: none). */
pterun_status pk_addmm_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                           const pterun_compute_gemm_opts* act);

/* Load time: packs args[2], a constant float32 mat2, into `into` (NULL: a
 * new state); the call has `want` arguments with the out at iout. */
pterun_status pk_addmm_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            size_t want, size_t iout, pk_prepacked* into);

#endif
