/* pterun: the LLM kernel library, libpterun_kernels_llm (the operators of
 * ExecuTorch's LLM custom-ops library: llama::update_cache, custom_sdpa,
 * custom_quantized_sdpa, ... and preprocess::tile_crop). */
#ifndef PTERUN_INCLUDE_PTERUN_KERNELS_LLM_H_
#define PTERUN_INCLUDE_PTERUN_KERNELS_LLM_H_

#include "pterun/export.h"
#include "pterun/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The library's kernel table; add it with pterun_registry_add(). */
PTERUN_KERNEL_API const pterun_kernel_library* pterun_kernels_llm(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_KERNELS_LLM_H_ */
