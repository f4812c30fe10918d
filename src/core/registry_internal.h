/* Registry lookups used by method loading. */
#ifndef PTERUN_SRC_CORE_REGISTRY_INTERNAL_H_
#define PTERUN_SRC_CORE_REGISTRY_INTERNAL_H_

#include "pterun/registry.h"

/* Finds the kernel for `op` with dtype/dim-order key `key`: an exact key
 * match wins, else a kernel registered without a key. NULL if none. */
pterun_kernel_fn pt_registry_resolve(const pterun_registry* r, const char* op, const char* key);

/* 1 if a library of that component has been added. */
int pt_registry_has_component(const pterun_registry* r, const char* component);

/* The runtime's own kernels (prim ops), always present in every registry. */
const pterun_kernel_library* pt_prim_ops_library(void);

#endif
