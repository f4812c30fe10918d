/* Internal interface of libpterun_kernels_lowbit (prefix lb_): torchao's
 * packed-weights header and argument checks, and the generic kernels the 24
 * operator entry points wrap. The arithmetic (bit unpacking, activation
 * quantization, the linear microkernels and their thread split) is
 * libpterun_compute's (pterun/compute.h, src/compute/lowbit/).
 * docs/lowbit.md has the format. */
#ifndef PTERUN_KERNELS_LOWBIT_LB_H_
#define PTERUN_KERNELS_LOWBIT_LB_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/compute.h"
#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

/* The packed-weights header: 16 little-endian int32 words. */
enum { LB_HEADER_BYTES = 64, LB_MAGIC = 6712, LB_TYPE_LINEAR = 1, LB_TYPE_EMBEDDING = 2 };
/* Universal linear layout: 8-column tiles, 16-value k-chunks, sr 2. */
enum { LB_NR = 8, LB_KR = 16, LB_SR = 2 };

/* Reads a universal linear header from `packed` (bytes available: `size`)
 * and checks it against the operator's bit width; sets the flags. */
pterun_status lb_linear_header(pterun_kernel_context* ctx, const uint8_t* packed, size_t size,
                               int nbit, int* has_zeros, int* has_bias);

/* Checks the packed-weights tensor argument (1-D int8/uint8, contiguous,
 * data present) and returns its bytes. */
pterun_status lb_packed_arg(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            const uint8_t** data, size_t* size);
/* Checks an indices argument (1-D int32/int64, contiguous) against [0, n). */
pterun_status lb_indices_arg(pterun_kernel_context* ctx, const pterun_tensor* t, int64_t n);

/* Checks a universal linear buffer against the operator arguments: header,
 * n and k in [1, 2^31), group_size a multiple of 16 dividing k, and the
 * exact byte size. Sets the flags and the bytes of one 8-column tile. */
pterun_status lb_linear_check(pterun_kernel_context* ctx, const uint8_t* packed, size_t size,
                              int nbit, int64_t group_size, int64_t n, int64_t k, int* has_zeros,
                              int* has_bias, uint64_t* tile_bytes);
/* Resizes a float32 output to [rows, cols] and checks it is contiguous with data. */
pterun_status lb_out_2d(pterun_kernel_context* ctx, pterun_tensor* out, int64_t rows, int64_t cols);

pterun_status lb_linear_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            int nbit);
/* Load time (kernel ABI 3): checks constant weights once and repacks the
 * widths that would be unpacked per call (lb_linear.c). */
pterun_status lb_linear_prepare(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                int nbit);
pterun_status lb_embedding_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               int nbit);
pterun_status lb_shared_embedding_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                      int nbit);

#endif /* PTERUN_KERNELS_LOWBIT_LB_H_ */
