/* pterun: the low-bit kernel library, libpterun_kernels_lowbit: torchao's
 * 1..8-bit weight operators (torchao::_linear_8bit_act_{n}bit_weight.out,
 * torchao::_embedding_{n}bit.out, torchao::_shared_embedding_{n}bit.out)
 * reading torchao's packed-weights format, on any CPU. See docs/lowbit.md. */
#ifndef PTERUN_INCLUDE_PTERUN_KERNELS_LOWBIT_H_
#define PTERUN_INCLUDE_PTERUN_KERNELS_LOWBIT_H_

#include "pterun/export.h"
#include "pterun/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The library's kernel table; add it with pterun_registry_add(). */
PTERUN_KERNEL_API const pterun_kernel_library* pterun_kernels_lowbit(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_KERNELS_LOWBIT_H_ */
