/* pterun: caller-supplied allocator. */
#ifndef PTERUN_INCLUDE_PTERUN_ALLOCATOR_H_
#define PTERUN_INCLUDE_PTERUN_ALLOCATOR_H_

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_ALLOCATOR_H_ */
