/* pterun: the quantized kernel library, libpterun_kernels_quantized
 * (quantized_decomposed::* and the torchao affine quantization operators). */
#ifndef PTERUN_INCLUDE_PTERUN_KERNELS_QUANTIZED_H_
#define PTERUN_INCLUDE_PTERUN_KERNELS_QUANTIZED_H_

#include "pterun/export.h"
#include "pterun/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The library's kernel table; add it with pterun_registry_add(). */
PTERUN_KERNEL_API const pterun_kernel_library* pterun_kernels_quantized(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_KERNELS_QUANTIZED_H_ */
