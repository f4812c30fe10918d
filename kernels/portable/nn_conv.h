/* The convolution kernel's entry points for the fused operators built on
 * it in other files (nn_conv_bn.c). */
#ifndef PTERUN_KERNELS_PORTABLE_NN_CONV_H_
#define PTERUN_KERNELS_PORTABLE_NN_CONV_H_

#include "kernels/portable/prepack.h"

/* aten::convolution's arguments 0..8 in args, out at args[iout]; `act`: the
 * activation applied in the epilogue (NULL: none). */
pterun_status pk_convolution_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                 const pterun_compute_gemm_opts* act);

/* Load time: packs args[1], a constant float32 weight of a one-group
 * GEMM-path convolution (else nothing), into `into` (NULL: a new state); the
 * call has `want` arguments with the out at iout. */
pterun_status pk_convolution_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                  size_t want, size_t iout, pk_prepacked* into);

#endif
