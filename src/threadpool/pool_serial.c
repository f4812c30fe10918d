/* The pool on bare-metal targets (PTERUN_BARE_METAL, no threads): the same API,
 * every task runs on the calling thread, tiles in order. Kernels call the same
 * functions on every target. */
#if defined(PTERUN_BARE_METAL)
#include <stdlib.h>
#include <string.h>

#include "pterun/threadpool.h"

struct pterun_threadpool {
  int unused;
};

size_t pterun_threadpool_default_threads(void) {
  return 1;
}

pterun_status pterun_threadpool_create(const pterun_threadpool_options* options,
                                       pterun_threadpool** pool_out) {
  pterun_threadpool_options o;
  if (!pool_out) return PTERUN_STATUS_INVALID_ARGUMENT;
  *pool_out = NULL;
  if (pterun_options_copy(options, &o, sizeof o) != 0) return PTERUN_STATUS_INVALID_ARGUMENT;
  *pool_out = calloc(1, sizeof **pool_out);
  return *pool_out ? PTERUN_STATUS_OK : PTERUN_STATUS_OUT_OF_MEMORY;
}

void pterun_threadpool_destroy(pterun_threadpool* pool) {
  free(pool);
}

size_t pterun_threadpool_size(const pterun_threadpool* pool) {
  (void)pool;
  return 1;
}

size_t pterun_threadpool_threads_for(const pterun_threadpool* pool, uint32_t flags) {
  (void)pool;
  (void)flags;
  return 1;
}

void pterun_parallelize_1d(pterun_threadpool* pool, pterun_task_1d_fn fn, void* ctx, size_t range,
                           uint32_t flags) {
  (void)pool;
  (void)flags;
  for (size_t i = 0; fn && i < range; ++i) fn(ctx, i);
}

void pterun_parallelize_1d_tile(pterun_threadpool* pool, pterun_task_1d_tile_fn fn, void* ctx,
                                size_t range, size_t tile, uint32_t flags) {
  (void)pool;
  (void)flags;
  if (tile == 0) tile = 1;
  for (size_t i = 0; fn && i < range; i += tile) fn(ctx, i, range - i < tile ? range - i : tile);
}

void pterun_parallelize_2d_tile(pterun_threadpool* pool, pterun_task_2d_tile_fn fn, void* ctx,
                                size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                uint32_t flags) {
  (void)pool;
  (void)flags;
  if (tile_i == 0) tile_i = 1;
  if (tile_j == 0) tile_j = 1;
  for (size_t i = 0; fn && i < range_i; i += tile_i)
    for (size_t j = 0; j < range_j; j += tile_j)
      fn(ctx, i, j, range_i - i < tile_i ? range_i - i : tile_i,
         range_j - j < tile_j ? range_j - j : tile_j);
}
#else
typedef int tp_pool_serial_unused; /* hosted builds: pool.c */
#endif
