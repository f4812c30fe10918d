/* Registry lookups used by method loading. */
#ifndef PTERUN_SRC_CORE_REGISTRY_INTERNAL_H_
#define PTERUN_SRC_CORE_REGISTRY_INTERNAL_H_

#include "pterun/registry.h"

/* The kernel registered for `op` ("aten::add.out"), or NULL; with
 * prepare_out, also its prepare (NULL: none). */
pterun_kernel_fn pt_registry_resolve(const pterun_registry* r, const char* op,
                                     pterun_kernel_prepare_fn* prepare_out);

/* 1 if a library of that component has been added. */
int pt_registry_has_component(const pterun_registry* r, const char* component);

/* The runtime's own kernels (prim ops), always present in every registry. */
const pterun_kernel_library* pt_prim_ops_library(void);

#endif
