/* pterun: the delegate-backend ABI. A backend runs the DelegateCall
 * instructions of programs lowered for it (e.g. "XnnpackBackend"). A backend
 * library exports one function returning a constant pterun_backend; a caller
 * adds it to a registry with pterun_registry_add_backend(). */
#ifndef PTERUN_INCLUDE_PTERUN_BACKEND_H_
#define PTERUN_INCLUDE_PTERUN_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/allocator.h"
#include "pterun/export.h"
#include "pterun/kernel.h"
#include "pterun/log.h"
#include "pterun/status.h"
#include "pterun/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever pterun_backend or the calling convention changes. */
#define PTERUN_BACKEND_ABI_VERSION 1u

/** Key -> bytes map a delegate reads its weights from: the external data
 *  files given to the method (searched first, in order), then the program's
 *  own named data. Valid during init only; the bytes it returns live as long
 *  as the program and the data files (which outlive every method). */
typedef struct pterun_named_data pterun_named_data;

/** Looks `key` (key_len bytes, no NUL needed) up.
 *  @retval PTERUN_STATUS_NOT_FOUND no such key */
PTERUN_API pterun_status pterun_named_data_get(const pterun_named_data* map, const char* key,
                                               size_t key_len, const void** data_out,
                                               size_t* size_out);

/** One compile spec of a delegate (key and opaque value bytes). */
typedef struct pterun_compile_spec {
  const char* key; /* NUL-terminated */
  const void* value;
  size_t value_size;
} pterun_compile_spec;

/** What a backend gets to prepare one delegate of a method. */
typedef struct pterun_backend_init_args {
  const void* payload; /* processed bytes: lives as long as the program */
  size_t payload_size;
  const pterun_compile_spec* specs; /* valid during the call only */
  size_t spec_count;
  const pterun_named_data* named_data; /* valid during the call only */
  const pterun_logger* logger;         /* the method's; valid during the call only */
  const pterun_allocator* allocator;   /* the method's (NULL: malloc); outlives the handle */
  const char* method_name;
  uint32_t delegate_index;
  /** init only (NULL for memory_query): where init stores the kernel scratch
   *  bytes its execute will ask pterun_kernel_scratch() for, at most (as a
   *  kernel's pterun_kernel_scratch_reserve); it holds
   *  PTERUN_DEFAULT_SCRATCH_BYTES when init leaves it. Sizes the method's arena. */
  size_t* scratch_out;
} pterun_backend_init_args;

/**
 * A backend. Every callback reports problems through the logger it is given
 * and returns a status; none may abort.
 *  - memory_query (optional): bytes init would allocate for this delegate
 *    (compiled graph, packed weights, intermediate arena), without allocating
 *    them; used by pterun_program_backend_memory() before a method is loaded.
 *  - init: compiles the payload (once per method load). All allocation
 *    happens here; *memory_out receives the bytes held by the handle.
 *  - execute: runs the delegate. `args` are the DelegateCall's values (inputs
 *    then outputs); `ctx` is the method's kernel context (logger through
 *    pterun_kernel_fail, scratch, thread pool). Must not allocate.
 *  - destroy: frees the handle (NULL never passed).
 */
typedef struct pterun_backend {
  uint32_t abi_version;  /* PTERUN_BACKEND_ABI_VERSION */
  const char* id;        /* BackendDelegate.id it runs, e.g. "XnnpackBackend" */
  const char* component; /* pterun component, e.g. "backend_xnnpack" */
  pterun_status (*memory_query)(const pterun_backend_init_args* args, size_t* bytes_out);
  pterun_status (*init)(const pterun_backend_init_args* args, void** handle_out,
                        size_t* memory_out);
  pterun_status (*execute)(void* handle, pterun_kernel_context* ctx, pterun_value** args,
                           size_t nargs);
  void (*destroy)(void* handle, const pterun_allocator* allocator);
} pterun_backend;

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_BACKEND_H_ */
