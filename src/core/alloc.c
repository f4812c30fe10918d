/* The one place that talks to the C allocator. */
#include <stdlib.h>
#include <string.h>

#include "src/core/internal.h"

void* pt_alloc_raw(const pterun_allocator* a, size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (size == 0) size = 1;
  if (a != NULL && a->alloc != NULL) return a->alloc(a->ctx, size, alignment);
  size_t rounded = pt_align_up(size, alignment);
  if (rounded < size) return NULL;
  return aligned_alloc(alignment, rounded);
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
    p = aligned_alloc(alignment, rounded);
  }
  if (p != NULL) memset(p, 0, size);
  return p;
}

void pt_free(const pterun_allocator* a, void* p) {
  if (p == NULL) return;
  if (a != NULL && a->alloc != NULL) {
    if (a->free != NULL) a->free(a->ctx, p);
  } else {
    free(p);
  }
}

void* pterun_alloc(const pterun_allocator* a, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
  return pt_alloc(a, size, alignment);
}

void pterun_free(const pterun_allocator* a, void* p) {
  pt_free(a, p);
}
