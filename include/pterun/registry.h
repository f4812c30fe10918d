/* pterun: the operator registry. */
#ifndef PTERUN_INCLUDE_PTERUN_REGISTRY_H_
#define PTERUN_INCLUDE_PTERUN_REGISTRY_H_

#include <stddef.h>

#include "pterun/allocator.h"
#include "pterun/backend.h"
#include "pterun/export.h"
#include "pterun/kernel.h"
#include "pterun/log.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A set of kernels, looked up when a method is loaded. Thread-safe: adding
 *  and looking up may happen from several threads. */
typedef struct pterun_registry pterun_registry;

/**
 * Creates a registry that already holds the runtime's prim ops.
 * @param allocator NULL: the C library's. Copied; the registry's own memory
 *        (the registry and its tables) comes from it.
 * @param logger NULL: default logger. Copied.
 * @retval PTERUN_STATUS_OUT_OF_MEMORY
 */
PTERUN_API pterun_status pterun_registry_create(const pterun_allocator* allocator,
                                                const pterun_logger* logger,
                                                pterun_registry** registry_out);

/** Destroys a registry; NULL is a no-op. Methods loaded from it stay valid
 *  (they keep the resolved function pointers, not the registry). */
PTERUN_API void pterun_registry_destroy(pterun_registry* registry);

/**
 * The process's default registry (prim ops only until kernel libraries are
 * added to it), created on first use. Never NULL unless memory is exhausted.
 */
PTERUN_API pterun_registry* pterun_registry_default(void);

/**
 * Adds every kernel of a library, or none of them.
 * Adding the same library (same table) again is a no-op returning OK; so is
 * a kernel identical to one already present (same operator, same function).
 * @retval PTERUN_STATUS_ABI_MISMATCH       library built for another kernel ABI
 * @retval PTERUN_STATUS_ALREADY_REGISTERED a different function is already
 *         registered for one of the library's operators; the log names the
 *         operator and both providing shared objects
 * @retval PTERUN_STATUS_INVALID_ARGUMENT   NULL or malformed table
 */
PTERUN_API pterun_status pterun_registry_add(pterun_registry* registry,
                                             const pterun_kernel_library* library);

/** Number of kernels held. */
PTERUN_API size_t pterun_registry_count(const pterun_registry* registry);

/** The i-th kernel (registration order). `component_out` names the library's
 *  component ("runtime" for prim ops). Any out pointer may be NULL.
 *  @retval PTERUN_STATUS_NOT_FOUND i out of range */
PTERUN_API pterun_status pterun_registry_get(const pterun_registry* registry, size_t i,
                                             const char** op_out, const char** component_out);

/** The kernel that a method would use for `op`, e.g. to call it with
 *  pterun_kernel_invoke(). @retval PTERUN_STATUS_OPERATOR_MISSING none */
PTERUN_API pterun_status pterun_registry_lookup(const pterun_registry* registry, const char* op,
                                                pterun_kernel_fn* fn_out);

/** Component providing `op` ("aten::add.out") in this registry, or NULL. */
PTERUN_API const char* pterun_registry_provider(const pterun_registry* registry, const char* op);

/** The pterun component whose operator namespaces cover `op`
 *  ("kernels_quantized" for "quantized_decomposed::..."), from the component
 *  manifest's operator_prefixes, whether or not it is loaded; NULL if none
 *  does. A namespace guess: the component may not implement `op` (see
 *  pterun_registry_missing_component()). */
PTERUN_API const char* pterun_component_for_op(const char* op);

/** For an operator `registry` does not provide: the pterun component to add
 *  for it, or NULL when no pterun component implements it. Non-NULL only when
 *  the component whose operator namespace covers `op`
 *  (pterun_component_for_op()) has not been added: a component that is
 *  already in the registry does not implement `op`. The method loader's
 *  missing-operator message and `pterun inspect` both say this. */
PTERUN_API const char* pterun_registry_missing_component(const pterun_registry* registry,
                                                         const char* op);

/**
 * Adds a delegate backend (see pterun/backend.h), found by its id when a
 * method with a DelegateCall is loaded. Adding the same backend again is a
 * no-op returning OK.
 * @retval PTERUN_STATUS_ABI_MISMATCH       built for another backend ABI
 * @retval PTERUN_STATUS_ALREADY_REGISTERED another backend has that id; the
 *         log names both providing shared objects
 * @retval PTERUN_STATUS_INVALID_ARGUMENT   NULL, no id, init, execute or destroy
 */
PTERUN_API pterun_status pterun_registry_add_backend(pterun_registry* registry,
                                                     const pterun_backend* backend);

/** The backend registered for `id` ("XnnpackBackend"), or NULL. */
PTERUN_API const pterun_backend* pterun_registry_backend(const pterun_registry* registry,
                                                         const char* id);

/** The pterun component that ships the backend `id` whether or not it is
 *  loaded ("backend_xnnpack"), from the component manifest; NULL if none. */
PTERUN_API const char* pterun_component_for_backend(const char* id);

/** The load-time optimiser (constant folding and fusion), libpterun_optimize:
 *  pterun_optimizer_default() in pterun/optimize.h. Opaque. */
typedef struct pterun_optimizer pterun_optimizer;

/**
 * Attaches the load-time optimiser to a registry: methods loaded from it then
 * fold layout operators on constant weights and fuse operator chains into the
 * fused kernels the registry holds (docs/architecture.md, "Load-time
 * optimisation"), unless their options say no_constant_folding / no_fusion.
 * Without one every instruction runs as the program wrote it. NULL detaches.
 * @retval PTERUN_STATUS_ABI_MISMATCH     an optimiser from another pterun build
 * @retval PTERUN_STATUS_INVALID_ARGUMENT NULL registry
 */
PTERUN_API pterun_status pterun_registry_set_optimizer(pterun_registry* registry,
                                                       const pterun_optimizer* optimizer);

/** The optimiser attached to the registry, or NULL. */
PTERUN_API const pterun_optimizer* pterun_registry_optimizer(const pterun_registry* registry);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_REGISTRY_H_ */
