/* pterun: the load-time optimiser, libpterun_optimize (component "optimize").
 *
 * Attached to a registry (pterun_registry_set_optimizer, pterun/registry.h),
 * it rewrites each method loaded from that registry once, at load:
 *  - constant folding: layout operators on constant weights (the
 *    permute_copy in front of every Linear, ...) run once into pterun-owned
 *    memory, reported by pterun_method_memory, and execute skips them;
 *  - fusion: chains such as convolution -> batch norm -> relu, or an int8
 *    dequantize -> conv -> quantize, run as one fused operator when a library
 *    in the registry provides it (docs/architecture.md, "Load-time
 *    optimisation").
 * pterun_method_options.no_constant_folding and .no_fusion turn either off
 * per method. Without an optimiser every instruction runs as the program
 * wrote it: the runtime core (libpterun) carries only the hooks.
 *
 *   pterun_registry_set_optimizer(pterun_registry_default(), pterun_optimizer_default());
 */
#ifndef PTERUN_INCLUDE_PTERUN_OPTIMIZE_H_
#define PTERUN_INCLUDE_PTERUN_OPTIMIZE_H_

#include "pterun/export.h"
#include "pterun/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The optimiser of this libpterun_optimize (static; never NULL). It must
 *  come from the same pterun build as libpterun: pterun_registry_set_optimizer
 *  refuses another with PTERUN_STATUS_ABI_MISMATCH. */
PTERUN_API const pterun_optimizer* pterun_optimizer_default(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_OPTIMIZE_H_ */
