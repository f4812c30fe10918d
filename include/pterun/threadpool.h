/* pterun: the thread pool (library libpterun_threadpool) and the parallel-for
 * tasks every parallel pterun library runs on.
 *
 * One pool per process is the intent: the application creates it (explicitly:
 * nothing in pterun spawns threads behind the caller's back) and hands it to
 * each method through pterun_method_options.threadpool; kernels get it back
 * with pterun_kernel_threadpool(). A host that already has a pool of its own
 * wraps it with pterun_threadpool_options.external, so pterun never adds a
 * second set of threads.
 *
 * Tasks: every index (or tile) of the range runs exactly once, on the caller's
 * thread or a worker; the call returns when all have run. Work is handed out
 * dynamically (each thread its own contiguous range first, then the others'
 * leftovers), so uneven tiles balance. A NULL pool
 * runs everything serially on the caller's thread. Results are only
 * independent of the thread count if the task itself does not depend on which
 * thread runs which tile (pterun's kernels never split a reduction across
 * tiles). */
#ifndef PTERUN_INCLUDE_PTERUN_THREADPOOL_H_
#define PTERUN_INCLUDE_PTERUN_THREADPOOL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/options.h"
#include "pterun/status.h"

#if defined(__GNUC__)
#define PTERUN_THREADPOOL_API __attribute__((visibility("default")))
#else
#define PTERUN_THREADPOOL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A pool of worker threads (opaque). The caller's thread always takes part
 *  in a task, so a pool of size N has N - 1 workers. */
typedef struct pterun_threadpool pterun_threadpool;

#define PTERUN_THREADPOOL_INTERFACE_VERSION 1u

/** A host application's own pool, adapted (the function table pterun calls).
 *  pterun asks it to run `worker(arg, w)` once for every w in [0, workers)
 *  concurrently and to return when all have returned; each worker pulls tiles
 *  from shared counters, so running some of them one after the other is
 *  still correct, merely slower. */
typedef struct pterun_threadpool_interface {
  uint32_t version; /* PTERUN_THREADPOOL_INTERFACE_VERSION */
  void* impl;       /* passed back to every function */
  /** Threads the host pool can run at once (including the calling thread). */
  size_t (*size)(void* impl);
  void (*run)(void* impl, void (*worker)(void* arg, size_t w), void* arg, size_t workers);
} pterun_threadpool_interface;

/** Options for pterun_threadpool_create. Initialise with
 *  PTERUN_THREADPOOL_OPTIONS_INIT (every field its default), then set what
 *  you need; the struct can grow at its end (pterun/options.h). */
typedef struct pterun_threadpool_options {
  /** sizeof(pterun_threadpool_options) as the caller was compiled; 0 is
   *  refused (INVALID_ARGUMENT), as is a larger size whose extra bytes are
   *  not zero. */
  size_t struct_size;
  /** Threads, including the caller's. 0: pterun_threadpool_default_threads().
   *  1: no worker is started (every task runs on the caller's thread). */
  size_t threads;
  /** Non-NULL: adapt this host pool instead of starting threads (`threads`
   *  then caps how many of its threads pterun uses; 0: all). Copied. */
  const pterun_threadpool_interface* external;
  /** Microseconds a worker spins waiting for the next task before it sleeps
   *  (spinning keeps back-to-back small operators fast; sleeping frees the
   *  core). 0: the default (100 us). */
  uint32_t spin_us;
  /** Nanoseconds of work (a call's PTERUN_PARALLEL_WORK_NS estimate) each
   *  thread must get before a call is split: a call estimated below twice
   *  this runs on the caller's thread alone, because waking a worker and
   *  moving the data between the cores' caches costs more than the split
   *  saves. 0: the environment's PTERUN_THREADPOOL_MIN_WORK_NS when set, else
   *  the default (docs/performance.md, "Thread thresholds"). 1 splits every
   *  call, as tests of thread-count independence want: no threshold, and no
   *  backoff (otherwise, after a few split calls in which no worker ran a
   *  tile, the pool runs calls serially for a while). */
  uint32_t min_work_ns;
} pterun_threadpool_options;

#define PTERUN_THREADPOOL_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_threadpool_options)

/**
 * The CPUs this process may use: the sched_getaffinity() mask, lowered to
 * the cgroup CPU quota (cgroup v2 cpu.max, v1 cpu.cfs_quota_us /
 * cpu.cfs_period_us, rounded up) when one is set. At least 1.
 */
PTERUN_THREADPOOL_API size_t pterun_threadpool_default_threads(void);

/**
 * Creates a pool; the only function in pterun that starts threads.
 * `options` NULL: every default.
 * @retval PTERUN_STATUS_INVALID_ARGUMENT pool_out NULL, a bad external interface,
 *         or options->struct_size 0 or larger with fields this build does not know set
 * @retval PTERUN_STATUS_OUT_OF_MEMORY    allocation or thread creation failed
 */
PTERUN_THREADPOOL_API pterun_status
pterun_threadpool_create(const pterun_threadpool_options* options, pterun_threadpool** pool_out);
/** Stops and joins the workers. NULL is a no-op. No task may be running. */
PTERUN_THREADPOOL_API void pterun_threadpool_destroy(pterun_threadpool* pool);
/** Threads a task can use, including the caller's. NULL: 1. */
PTERUN_THREADPOOL_API size_t pterun_threadpool_size(const pterun_threadpool* pool);
/** Threads a parallel call with these flags runs on at most (the caller's
 *  included): the pool's size, lowered to the flags' cap and to what their
 *  work estimate pays for; 1 for a NULL pool or inside a task. For kernels
 *  that size their tiles or buffers for the threads that will run. */
PTERUN_THREADPOOL_API size_t pterun_threadpool_threads_for(const pterun_threadpool* pool,
                                                           uint32_t flags);

/* ---- flags of a parallel call ---------------------------------------------- */
/** At most n threads (including the caller's) for this call; 0: no cap. */
#define PTERUN_PARALLEL_MAX_THREADS(n) ((uint32_t)((n) > 0xffffu ? 0xffffu : (n)) & 0xffffu)
/** Mask of the thread cap in `flags`. */
#define PTERUN_PARALLEL_THREADS_MASK 0xffffu
/** The call's work, estimated in nanoseconds on one thread (0: no estimate,
 *  split as far as the tiles and the cap allow). The pool gives every thread
 *  it uses at least pterun_threadpool_options.min_work_ns of it. Stored in
 *  64 ns steps in the upper 16 bits; 4 ms and more saturate. */
#define PTERUN_PARALLEL_WORK_NS(ns)                                                                \
  ((uint32_t)((uint64_t)(ns) >= (uint64_t)0xfffeu * 64u ? 0xffffu : (uint64_t)(ns) / 64u + 1u)     \
   << 16)
/** Mask of the work estimate in `flags`. */
#define PTERUN_PARALLEL_WORK_MASK 0xffff0000u

typedef void (*pterun_task_1d_fn)(void* ctx, size_t i);
typedef void (*pterun_task_1d_tile_fn)(void* ctx, size_t start, size_t count);
/** A tile [i, i + ni) x [j, j + nj) of a 2-D range. */
typedef void (*pterun_task_2d_tile_fn)(void* ctx, size_t i, size_t j, size_t ni, size_t nj);

/** fn(ctx, i) for every i in [0, range). */
PTERUN_THREADPOOL_API void pterun_parallelize_1d(pterun_threadpool* pool, pterun_task_1d_fn fn,
                                                 void* ctx, size_t range, uint32_t flags);
/** fn(ctx, start, count) over [0, range) in tiles of `tile` (the last may be
 *  shorter); tile 0 is taken as 1. */
PTERUN_THREADPOOL_API void pterun_parallelize_1d_tile(pterun_threadpool* pool,
                                                      pterun_task_1d_tile_fn fn, void* ctx,
                                                      size_t range, size_t tile, uint32_t flags);
/** fn(ctx, i, j, ni, nj) over [0, range_i) x [0, range_j) in tiles of
 *  tile_i x tile_j (edge tiles shorter); tiles are numbered i-major. */
PTERUN_THREADPOOL_API void pterun_parallelize_2d_tile(pterun_threadpool* pool,
                                                      pterun_task_2d_tile_fn fn, void* ctx,
                                                      size_t range_i, size_t range_j, size_t tile_i,
                                                      size_t tile_j, uint32_t flags);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_THREADPOOL_H_ */
