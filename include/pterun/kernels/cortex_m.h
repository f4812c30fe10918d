/* pterun: the Cortex-M kernel library, libpterun_kernels_cortex_m: the
 * cortex_m::* operators of ExecuTorch's Cortex-M backend, with CMSIS-NN's
 * integer arithmetic in portable C (docs/cortex_m.md). */
#ifndef PTERUN_INCLUDE_PTERUN_KERNELS_CORTEX_M_H_
#define PTERUN_INCLUDE_PTERUN_KERNELS_CORTEX_M_H_

#include "pterun/export.h"
#include "pterun/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The library's kernel table; add it with pterun_registry_add(). */
PTERUN_KERNEL_API const pterun_kernel_library* pterun_kernels_cortex_m(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_KERNELS_CORTEX_M_H_ */
