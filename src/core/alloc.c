/* The one place that talks to the C allocator. A bare-metal build
 * (PTERUN_BARE_METAL) has none: every object then needs a caller allocator. */
#include <stdlib.h>
#include <string.h>

#include "src/core/internal.h"

static void* c_aligned_alloc(size_t alignment, size_t size) {
#ifdef PTERUN_BARE_METAL
  (void)alignment;
  (void)size;
  return NULL; /* reported as OUT_OF_MEMORY */
#else
  return aligned_alloc(alignment, size);
#endif
}

void* pt_alloc_raw(const pterun_allocator* a, size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (size == 0) size = 1;
  if (a != NULL && a->alloc != NULL) return a->alloc(a->ctx, size, alignment);
  size_t rounded = pt_align_up(size, alignment);
  if (rounded < size) return NULL;
  return c_aligned_alloc(alignment, rounded);
}

void* pt_alloc(const pterun_allocator* a, size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (size == 0) size = 1;
  void* p = NULL;
  if (a != NULL && a->alloc != NULL) {
    p = a->alloc(a->ctx, size, alignment);
  } else {
    size_t rounded = pt_align_up(size, alignment);
    if (rounded < size) return NULL;
    p = c_aligned_alloc(alignment, rounded);
  }
  if (p != NULL) memset(p, 0, size);
  return p;
}

void pt_free(const pterun_allocator* a, void* p) {
  if (p == NULL) return;
  if (a != NULL && a->alloc != NULL) {
    if (a->free != NULL) a->free(a->ctx, p);
  } else {
#ifndef PTERUN_BARE_METAL
    free(p);
#endif
  }
}

void* pterun_alloc(const pterun_allocator* a, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
  return pt_alloc(a, size, alignment);
}

void pterun_free(const pterun_allocator* a, void* p) {
  pt_free(a, p);
}
