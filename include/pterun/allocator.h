/* pterun: caller-supplied allocator. */
#ifndef PTERUN_INCLUDE_PTERUN_ALLOCATOR_H_
#define PTERUN_INCLUDE_PTERUN_ALLOCATOR_H_

#include <stddef.h>

#include "pterun/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Passed per object at creation; NULL means the C library's allocator.
 *  `alloc` returns NULL on failure (pterun then fails with OUT_OF_MEMORY);
 *  `alignment` is a power of two; `free` accepts NULL. */
typedef struct pterun_allocator {
  void* ctx;
  void* (*alloc)(void* ctx, size_t size, size_t alignment);
  void (*free)(void* ctx, void* ptr);
} pterun_allocator;

/** Allocates `size` zeroed bytes aligned to `alignment` (a power of two)
 *  through `a` (NULL: the C library), as pterun does for its own objects;
 *  for backends that allocate with the method's allocator. NULL on failure. */
PTERUN_API void* pterun_alloc(const pterun_allocator* a, size_t size, size_t alignment);
/** Frees memory from pterun_alloc with the same allocator; NULL is a no-op. */
PTERUN_API void pterun_free(const pterun_allocator* a, void* p);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_ALLOCATOR_H_ */
