/* Delegate backends of a method (backend.c). */
#ifndef PTERUN_SRC_CORE_BACKEND_INTERNAL_H_
#define PTERUN_SRC_CORE_BACKEND_INTERNAL_H_

#include "pterun/backend.h"
#include "pterun/registry.h"
#include "src/core/program_internal.h"

/* One prepared delegate of a loaded method. */
typedef struct pt_delegate {
  const pterun_backend* backend;
  void* handle;
  size_t memory;  /* bytes the backend holds for it */
  size_t scratch; /* kernel scratch its execute asks for (init's reservation) */
} pt_delegate;

/* What init needs besides the program: the method's data files, logger,
 * allocator and name. */
typedef struct pt_delegate_env {
  const pterun_data* const* data;
  size_t data_count;
  const pterun_logger* logger;
  const pterun_allocator* allocator;
  const char* method_name;
} pt_delegate_env;

/* Resolves and initialises every delegate of a plan (`delegates` is the
 * plan's [BackendDelegate]); a missing backend is BACKEND_UNAVAILABLE naming
 * the component that ships it. On failure, out[] entries already prepared
 * must be released with pt_delegates_destroy. */
pterun_status pt_delegates_init(const pterun_program* p, const pterun_registry* reg,
                                const pt_fb_vec* delegates, const pt_delegate_env* env,
                                pt_delegate* out);
void pt_delegates_destroy(pt_delegate* d, uint32_t n, const pterun_allocator* a);
/* Sum of the backends' memory_query answers for a plan's delegates. */
pterun_status pt_delegates_memory(const pterun_program* p, const pterun_registry* reg,
                                  const pt_fb_vec* delegates, const pt_delegate_env* env,
                                  size_t* bytes);

#endif
