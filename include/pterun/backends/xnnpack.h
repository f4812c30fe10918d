/* pterun: runs programs lowered with ExecuTorch's XnnpackPartitioner (the
 * "XnnpackBackend" delegate payloads) on pterun's own kernels; XNNPACK itself
 * is not linked. Register it with
 * `pterun_registry_add_backend(registry, pterun_backend_xnnpack())`.
 * docs/xnnpack.md lists the node types and datatypes it implements. */
#ifndef PTERUN_INCLUDE_PTERUN_BACKENDS_XNNPACK_H_
#define PTERUN_INCLUDE_PTERUN_BACKENDS_XNNPACK_H_

#include "pterun/backend.h"
#include "pterun/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The backend for delegate id "XnnpackBackend" (component backend_xnnpack). */
PTERUN_KERNEL_API const pterun_backend* pterun_backend_xnnpack(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_BACKENDS_XNNPACK_H_ */
