/* The convolution and matrix kernels' entry points for the fused operators
 * built on them in other files (conv/conv_bn.c: batch norm folded into the
 * producer). Each `run` takes the producer's arguments with the out at
 * args[iout] and `act`, the activation applied in the epilogue (NULL: none);
 * each `pack` is its load-time weight packing into `into` (NULL: a new state)
 * for a call of `want` arguments with the out at iout. */
#ifndef PTERUN_KERNELS_PORTABLE_PRODUCERS_H_
#define PTERUN_KERNELS_PORTABLE_PRODUCERS_H_

#include "kernels/portable/prepack.h"

/* aten::convolution: arguments 0..8; packs args[1], a constant float32
 * weight of a one-group GEMM-path convolution. */
pterun_status pk_convolution_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                 const pterun_compute_gemm_opts* act);
pterun_status pk_convolution_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                  size_t want, size_t iout, pk_prepacked* into);
/* Packs args[1] with output channel c scaled by row_scale[c] into `into`
 * (packed_only set), only when every execute of the call reads the packed
 * copy and never the weight; else into->packed stays NULL. */
pterun_status pk_convolution_pack_scaled(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t nargs, size_t want, size_t iout, pk_prepacked* into,
                                         const double* row_scale);
/* At load: the scratch its execute asks for (pterun_kernel_scratch_reserve). */
void pk_convolution_reserve(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            size_t want, size_t iout);

/* aten::addmm: arguments 0..4; packs args[2], a constant float32 mat2. */
pterun_status pk_addmm_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                           const pterun_compute_gemm_opts* act);
pterun_status pk_addmm_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            size_t want, size_t iout, pk_prepacked* into);
void pk_addmm_reserve(pterun_kernel_context* ctx, pterun_value** args, size_t nargs, size_t want,
                      size_t iout);

#endif
