/* The pool: N - 1 worker threads plus the caller's thread, one task at a time.
 *
 * A task is published through one atomic word (generation << 16 | number of
 * workers taking part), so a worker reads a consistent pair with one load.
 * Workers spin for a short while on that word (back-to-back operators take
 * microseconds), then sleep on a condition variable; the publisher only takes
 * the mutex when someone sleeps. Tiles are split into one contiguous range per
 * thread, each with its own counter on its own cache line; a thread runs its
 * range, then takes what is left of the others' (work stealing). Consecutive
 * operators of one shape then give each thread the same part of the data (it
 * stays in that core's cache, where a shared counter spread every operator's
 * output over both cores), and threads touch a shared counter only at the
 * end. The caller drains tiles too, then closes the task and waits only for
 * the workers that joined it. A worker joins by one compare-and-swap on
 * `join` (generation, closed bit, active count): one that wakes after the
 * caller closed the task skips it, so a descheduled worker never holds up a
 * task the others have finished. */
#if !defined(PTERUN_BARE_METAL) /* bare metal: pool_serial.c */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_* macros */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/threadpool.h"
#include "src/threadpool/tp_internal.h"

#define TP_DEFAULT_SPIN_US 100u
/* Work each thread of a split call must get (PTERUN_PARALLEL_WORK_NS):
 * below it the wake-up and the cache lines moved between cores cost more
 * than the split saves (measured: docs/performance.md, "Thread
 * thresholds"). */
#define TP_DEFAULT_MIN_WORK_NS 3000u
/* Split calls in a row without a worker's tile before the pool runs calls
 * serially for a while: first 64 calls, doubling up to 4096 each time it
 * happens again before a worker has run a tile (an oversubscribed machine,
 * docs/performance.md "Thread thresholds"). */
#define TP_MISSES 4u
#define TP_BACKOFF_MIN 64u
#define TP_BACKOFF_MAX 4096u
#define TP_GEN_SHIFT 16
#define TP_JOIN_GEN_SHIFT 32
#define TP_CLOSED ((uint64_t)1 << 31)
#define TP_ACTIVE_MASK (TP_CLOSED - 1)
/* Ranges a task is split into at most; threads beyond share them. */
#define TP_MAX_PARTS 64u
#define TP_CACHE_LINE 64

/* One thread's range of tiles: `next` is taken by fetch-add, by its owner
 * first and by the others once theirs are done. */
typedef struct tp_part {
  _Alignas(TP_CACHE_LINE) atomic_size_t next;
  size_t end;
} tp_part;

typedef struct tp_job tp_job;
struct tp_job {
  void (*run)(const tp_job* job, size_t tile);
  size_t tiles;
  tp_part* parts;
  size_t nparts;
  union {
    pterun_task_1d_fn f1;
    pterun_task_1d_tile_fn ft;
    pterun_task_2d_tile_fn f2;
  } fn;
  void* ctx;
  size_t range_i, range_j, tile_i, tile_j, tiles_j;
};

struct pterun_threadpool {
  size_t size; /* threads a task can use, the caller's included */
  int external;
  pterun_threadpool_interface ext;
  size_t nworkers;
  pthread_t* threads;
  uint32_t spin_us;
  uint32_t min_work_ns;
  pthread_mutex_t call_mu; /* one task at a time (callers from several threads queue) */
  pthread_mutex_t mu;      /* sleeping and waking */
  pthread_cond_t cv;
  atomic_uint_fast64_t word; /* generation << 16 | participating workers */
  atomic_uint_fast64_t join; /* generation << 32 | TP_CLOSED | workers running tiles */
  atomic_int sleepers;
  atomic_int stop;
  /* Split calls in a row in which no worker ran a tile, and how many calls
   * to run serially before trying again (see tp_run). Written by the caller
   * holding call_mu, read by callers before it (relaxed: a stale value only
   * makes one call split or not). */
  atomic_uint misses;
  atomic_uint backoff_left;
  unsigned backoff;
  tp_job job;
  tp_part parts[TP_MAX_PARTS]; /* the internal pool's task's ranges (under call_mu) */
};

typedef struct tp_worker_arg {
  pterun_threadpool* pool;
  size_t index; /* 1..nworkers (0 is the caller) */
} tp_worker_arg;

/* Set while a thread runs tiles: a task started from inside a task runs
 * serially instead of deadlocking on the busy pool. */
static _Thread_local int tp_inside;

static inline void tp_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static uint64_t tp_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Splits the job's tiles into `threads` contiguous ranges (at most
 * TP_MAX_PARTS; `parts` has room for them). */
static void tp_split(tp_job* job, tp_part* parts, size_t threads) {
  size_t n = threads < TP_MAX_PARTS ? threads : TP_MAX_PARTS;
  if (n > job->tiles) n = job->tiles;
  size_t per = job->tiles / n, extra = job->tiles % n, start = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t len = per + (i < extra);
    atomic_store_explicit(&parts[i].next, start, memory_order_relaxed);
    parts[i].end = start + len;
    start += len;
  }
  job->parts = parts;
  job->nparts = n;
}

/* Runs tiles until none is left, thread `self`'s range first, then the
 * others' leftovers; returns how many this thread ran. */
static size_t tp_drain(tp_job* job, size_t self) {
  int was_inside = tp_inside;
  size_t ran = 0;
  tp_inside = 1;
  size_t n = job->nparts, first = self % n;
  for (size_t k = 0; k < n; ++k) {
    tp_part* part = &job->parts[(first + k) % n];
    for (;;) {
      size_t t = atomic_fetch_add_explicit(&part->next, 1, memory_order_relaxed);
      if (t >= part->end) break;
      job->run(job, t);
      ++ran;
    }
  }
  tp_inside = was_inside;
  return ran;
}

/* Waits until the published word differs from `seen`; returns it. */
static uint64_t tp_wait_word(pterun_threadpool* p, uint64_t seen) {
  uint64_t w;
  uint64_t start = 0;
  for (unsigned spins = 0;; ++spins) {
    w = atomic_load_explicit(&p->word, memory_order_acquire);
    if (w != seen || atomic_load_explicit(&p->stop, memory_order_acquire)) return w;
    tp_relax();
    if ((spins & 63u) == 63u) {
      uint64_t now = tp_now_us();
      if (start == 0) start = now;
      if (now - start >= p->spin_us) break;
      /* A worker that shares its CPU with the caller (an oversubscribed
       * machine) would spin away the caller's time slice: let it run. With
       * the CPU to itself this returns at once. */
      sched_yield();
    }
  }
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->sleepers, 1);
  while ((w = atomic_load(&p->word)) == seen && !atomic_load(&p->stop))
    pthread_cond_wait(&p->cv, &p->mu);
  atomic_fetch_sub(&p->sleepers, 1);
  pthread_mutex_unlock(&p->mu);
  return w;
}

static void* tp_worker_main(void* arg) {
  tp_worker_arg* a = arg;
  pterun_threadpool* p = a->pool;
  size_t index = a->index;
  free(a);
  /* The word was 0 when the pool was created; a task may have been published
   * before this thread got here, so start from 0 rather than reading it. */
  uint64_t seen = 0;
  for (;;) {
    seen = tp_wait_word(p, seen);
    if (atomic_load_explicit(&p->stop, memory_order_acquire)) break;
    size_t participants = (size_t)(seen & PTERUN_PARALLEL_THREADS_MASK);
    if (index > participants) continue; /* not needed for this task */
    /* Join the task the word announced, unless it is closed or already
     * replaced by a later one (the generation no longer matches). */
    uint64_t gen = (uint64_t)(uint32_t)(seen >> TP_GEN_SHIFT);
    uint64_t j = atomic_load_explicit(&p->join, memory_order_acquire);
    int joined = 0;
    while ((j >> TP_JOIN_GEN_SHIFT) == gen && !(j & TP_CLOSED)) {
      if (atomic_compare_exchange_weak_explicit(&p->join, &j, j + 1, memory_order_acq_rel,
                                                memory_order_acquire)) {
        joined = 1;
        break;
      }
    }
    if (!joined) continue;
    tp_drain(&p->job, index);
    atomic_fetch_sub_explicit(&p->join, 1, memory_order_acq_rel);
  }
  return NULL;
}

size_t pterun_threadpool_default_threads(void) {
  size_t n = 0;
  for (int cpus = 1024; cpus <= (1 << 16) && n == 0; cpus *= 4) {
    cpu_set_t* set = CPU_ALLOC((size_t)cpus);
    if (!set) break;
    size_t bytes = CPU_ALLOC_SIZE((size_t)cpus);
    CPU_ZERO_S(bytes, set);
    if (sched_getaffinity(0, bytes, set) == 0) n = (size_t)CPU_COUNT_S(bytes, set);
    CPU_FREE(set);
  }
  if (n == 0) n = 1;
  size_t quota = tp_cgroup_cpu_limit("/proc/self/cgroup", "/sys/fs/cgroup");
  if (quota != 0 && quota < n) n = quota;
  return n;
}

/* PTERUN_THREADPOOL_MIN_WORK_NS (read at creation, never on the execute
 * path): a decimal number of nanoseconds, else the default. */
static uint32_t tp_env_min_work_ns(void) {
  const char* e = getenv("PTERUN_THREADPOOL_MIN_WORK_NS");
  if (e == NULL || *e == '\0') return TP_DEFAULT_MIN_WORK_NS;
  char* end = NULL;
  unsigned long v = strtoul(e, &end, 10);
  if (*end != '\0' || v == 0 || v > UINT32_MAX) return TP_DEFAULT_MIN_WORK_NS;
  return (uint32_t)v;
}

static void tp_stop_workers(pterun_threadpool* p, size_t started) {
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < started; ++i) pthread_join(p->threads[i], NULL);
}

pterun_status pterun_threadpool_create(const pterun_threadpool_options* options,
                                       pterun_threadpool** pool_out) {
  if (!pool_out) return PTERUN_STATUS_INVALID_ARGUMENT;
  *pool_out = NULL;
  pterun_threadpool_options o;
  if (pterun_options_copy(options, &o, sizeof o) != 0) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (o.external && (o.external->version != PTERUN_THREADPOOL_INTERFACE_VERSION ||
                     !o.external->size || !o.external->run))
    return PTERUN_STATUS_INVALID_ARGUMENT;
  /* Aligned for the ranges' cache lines (tp_part). */
  size_t bytes = (sizeof(pterun_threadpool) + TP_CACHE_LINE - 1) / TP_CACHE_LINE * TP_CACHE_LINE;
  pterun_threadpool* p = aligned_alloc(TP_CACHE_LINE, bytes);
  if (!p) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, bytes);
  p->spin_us = o.spin_us ? o.spin_us : TP_DEFAULT_SPIN_US;
  p->min_work_ns = o.min_work_ns ? o.min_work_ns : tp_env_min_work_ns();
  if (o.external) {
    p->external = 1;
    p->ext = *o.external;
    size_t n = p->ext.size(p->ext.impl);
    if (n == 0) n = 1;
    if (o.threads != 0 && o.threads < n) n = o.threads;
    p->size = n;
  } else {
    p->size = o.threads ? o.threads : pterun_threadpool_default_threads();
  }
  if (p->size > PTERUN_PARALLEL_THREADS_MASK) p->size = PTERUN_PARALLEL_THREADS_MASK;
  if (pthread_mutex_init(&p->call_mu, NULL) != 0) goto fail_free;
  if (pthread_mutex_init(&p->mu, NULL) != 0) goto fail_call_mu;
  if (pthread_cond_init(&p->cv, NULL) != 0) goto fail_mu;
  if (p->external || p->size == 1) {
    *pool_out = p;
    return PTERUN_STATUS_OK;
  }
  p->nworkers = p->size - 1;
  p->threads = calloc(p->nworkers, sizeof *p->threads);
  if (!p->threads) goto fail_cv;
  for (size_t i = 0; i < p->nworkers; ++i) {
    tp_worker_arg* a = malloc(sizeof *a);
    if (a) {
      a->pool = p;
      a->index = i + 1;
    }
    if (!a || pthread_create(&p->threads[i], NULL, tp_worker_main, a) != 0) {
      free(a);
      tp_stop_workers(p, i);
      free(p->threads);
      goto fail_cv;
    }
  }
  *pool_out = p;
  return PTERUN_STATUS_OK;
fail_cv:
  pthread_cond_destroy(&p->cv);
fail_mu:
  pthread_mutex_destroy(&p->mu);
fail_call_mu:
  pthread_mutex_destroy(&p->call_mu);
fail_free:
  free(p);
  return PTERUN_STATUS_OUT_OF_MEMORY;
}

void pterun_threadpool_destroy(pterun_threadpool* pool) {
  if (!pool) return;
  tp_stop_workers(pool, pool->nworkers);
  free(pool->threads);
  pthread_cond_destroy(&pool->cv);
  pthread_mutex_destroy(&pool->mu);
  pthread_mutex_destroy(&pool->call_mu);
  free(pool);
}

size_t pterun_threadpool_size(const pterun_threadpool* pool) {
  return pool ? pool->size : 1;
}

size_t pterun_threadpool_threads_for(const pterun_threadpool* pool, uint32_t flags) {
  if (pool == NULL || tp_inside) return 1;
  size_t threads = pool->size;
  size_t cap = flags & PTERUN_PARALLEL_THREADS_MASK;
  if (cap != 0 && cap < threads) threads = cap;
  uint32_t work = (flags & PTERUN_PARALLEL_WORK_MASK) >> 16;
  if (work != 0 && threads > 1) {
    /* Each thread gets at least min_work_ns of the estimate (its lower
     * bound: the 64 ns step below it). */
    uint64_t pays = (uint64_t)(work - 1u) * 64u / pool->min_work_ns;
    if (pays < threads) threads = pays > 1 ? (size_t)pays : 1;
  }
  return threads;
}

static void tp_external_worker(void* arg, size_t w) {
  tp_drain(arg, w);
}

/* Runs every tile of `job` (fields other than the ranges filled in). */
static void tp_run(pterun_threadpool* p, tp_job* job, uint32_t flags) {
  if (job->tiles == 0) return;
  size_t threads = pterun_threadpool_threads_for(p, flags);
  if (threads > job->tiles) threads = job->tiles;
  if (threads <= 1) {
    for (size_t t = 0; t < job->tiles; ++t) job->run(job, t);
    return;
  }
  /* The workers ran no tile in the last few split calls: they are not getting
   * a CPU (another process holds it, or they share the caller's), so a split
   * only adds a wake-up and a spinning thread. Run serially for a while, then
   * try a split again. Calls of 64 min_work_ns and more (a decode's logits
   * layer) split anyway and leave the count alone: one wake-up is nothing
   * beside them. */
  uint32_t work = (flags & PTERUN_PARALLEL_WORK_MASK) >> 16;
  const int huge = work != 0 && (uint64_t)(work - 1u) * 64u >= (uint64_t)p->min_work_ns * 64u;
  if (p->min_work_ns > 1 && !huge &&
      atomic_load_explicit(&p->backoff_left, memory_order_relaxed) != 0) {
    unsigned left = atomic_load_explicit(&p->backoff_left, memory_order_relaxed);
    if (left != 0) atomic_store_explicit(&p->backoff_left, left - 1, memory_order_relaxed);
    for (size_t t = 0; t < job->tiles; ++t) job->run(job, t);
    return;
  }
  if (p->external) {
    /* Callers may share a host pool concurrently: the ranges live on this
     * call's stack. */
    tp_part parts[TP_MAX_PARTS];
    tp_split(job, parts, threads);
    p->ext.run(p->ext.impl, tp_external_worker, job, threads);
    return;
  }
  pthread_mutex_lock(&p->call_mu);
  /* Every worker that joined the previous task has left it, and no worker
   * can join it any more (closed), so nobody reads p->job while it is
   * rewritten. */
  p->job.run = job->run;
  p->job.tiles = job->tiles;
  p->job.fn = job->fn;
  p->job.ctx = job->ctx;
  p->job.range_i = job->range_i;
  p->job.range_j = job->range_j;
  p->job.tile_i = job->tile_i;
  p->job.tile_j = job->tile_j;
  p->job.tiles_j = job->tiles_j;
  tp_split(&p->job, p->parts, threads);
  size_t workers = threads - 1;
  uint64_t w = atomic_load_explicit(&p->word, memory_order_relaxed);
  uint64_t gen = (w >> TP_GEN_SHIFT) + 1;
  uint64_t next = (gen << TP_GEN_SHIFT) | (uint64_t)workers;
  atomic_store_explicit(&p->join, (uint64_t)(uint32_t)gen << TP_JOIN_GEN_SHIFT,
                        memory_order_relaxed); /* published by the word's store */
  atomic_store(&p->word, next);                /* seq_cst: ordered before the sleepers load */
  const int woke = atomic_load(&p->sleepers) > 0;
  if (woke) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  size_t mine = tp_drain(&p->job, 0);
  if (p->min_work_ns <= 1 || huge) {
    /* "split every call" (tests of thread-count independence): no backoff */
  } else if (woke && mine == job->tiles) {
    /* A sleeping worker takes tens of microseconds to wake: this call says
     * nothing about whether workers get a CPU. Counting it would keep the
     * pool serial for good, since workers fall asleep during every backoff. */
  } else if (mine < job->tiles) {
    atomic_store_explicit(&p->misses, 0, memory_order_relaxed);
    p->backoff = 0;
  } else if (atomic_fetch_add_explicit(&p->misses, 1, memory_order_relaxed) + 1 >= TP_MISSES) {
    p->backoff =
        p->backoff ? (p->backoff < TP_BACKOFF_MAX ? 2 * p->backoff : p->backoff) : TP_BACKOFF_MIN;
    atomic_store_explicit(&p->misses, 0, memory_order_relaxed);
    atomic_store_explicit(&p->backoff_left, p->backoff, memory_order_relaxed);
  }
  /* Every tile is taken; wait only for those being run by joined workers. */
  atomic_fetch_or_explicit(&p->join, TP_CLOSED, memory_order_acq_rel);
  for (unsigned spins = 0;
       (atomic_load_explicit(&p->join, memory_order_acquire) & TP_ACTIVE_MASK) != 0; ++spins) {
    /* A worker may be descheduled on a busy machine, possibly on this CPU:
     * after a few microseconds of spinning (256 pauses), yield to it. */
    if (spins < 256)
      tp_relax();
    else
      sched_yield();
  }
  pthread_mutex_unlock(&p->call_mu);
}

/* ---- the task shapes ---------------------------------------------------------- */

static void tp_run_1d(const tp_job* j, size_t t) {
  size_t start = t * j->tile_i;
  size_t end = j->range_i - start < j->tile_i ? j->range_i : start + j->tile_i;
  for (size_t i = start; i < end; ++i) j->fn.f1(j->ctx, i);
}

static void tp_run_1d_tile(const tp_job* j, size_t t) {
  size_t start = t * j->tile_i;
  size_t count = j->range_i - start < j->tile_i ? j->range_i - start : j->tile_i;
  j->fn.ft(j->ctx, start, count);
}

static void tp_run_2d_tile(const tp_job* j, size_t t) {
  size_t ti = t / j->tiles_j, tj = t % j->tiles_j;
  size_t i = ti * j->tile_i, jj = tj * j->tile_j;
  size_t ni = j->range_i - i < j->tile_i ? j->range_i - i : j->tile_i;
  size_t nj = j->range_j - jj < j->tile_j ? j->range_j - jj : j->tile_j;
  j->fn.f2(j->ctx, i, jj, ni, nj);
}

static size_t tp_ceil_div(size_t a, size_t b) {
  return a / b + (a % b != 0);
}

void pterun_parallelize_1d(pterun_threadpool* pool, pterun_task_1d_fn fn, void* ctx, size_t range,
                           uint32_t flags) {
  if (!fn || range == 0) return;
  tp_job job;
  memset(&job, 0, sizeof job);
  job.run = tp_run_1d;
  job.fn.f1 = fn;
  job.ctx = ctx;
  job.range_i = range;
  /* Indices are grouped so one atomic increment covers several calls, with
   * enough groups left (8 per thread) to balance uneven work. */
  size_t threads = pterun_threadpool_size(pool);
  size_t per = range / (threads * 8);
  job.tile_i = per ? per : 1;
  job.tiles = tp_ceil_div(range, job.tile_i);
  tp_run(pool, &job, flags);
}

void pterun_parallelize_1d_tile(pterun_threadpool* pool, pterun_task_1d_tile_fn fn, void* ctx,
                                size_t range, size_t tile, uint32_t flags) {
  if (!fn || range == 0) return;
  tp_job job;
  memset(&job, 0, sizeof job);
  job.run = tp_run_1d_tile;
  job.fn.ft = fn;
  job.ctx = ctx;
  job.range_i = range;
  job.tile_i = tile ? tile : 1;
  job.tiles = tp_ceil_div(range, job.tile_i);
  tp_run(pool, &job, flags);
}

void pterun_parallelize_2d_tile(pterun_threadpool* pool, pterun_task_2d_tile_fn fn, void* ctx,
                                size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                uint32_t flags) {
  if (!fn || range_i == 0 || range_j == 0) return;
  tp_job job;
  memset(&job, 0, sizeof job);
  job.run = tp_run_2d_tile;
  job.fn.f2 = fn;
  job.ctx = ctx;
  job.range_i = range_i;
  job.range_j = range_j;
  job.tile_i = tile_i ? tile_i : 1;
  job.tile_j = tile_j ? tile_j : 1;
  size_t ti = tp_ceil_div(range_i, job.tile_i);
  job.tiles_j = tp_ceil_div(range_j, job.tile_j);
  if (job.tiles_j != 0 && ti > SIZE_MAX / job.tiles_j) { /* cannot happen for real ranges */
    for (size_t i = 0; i < range_i; i += job.tile_i)
      for (size_t j = 0; j < range_j; j += job.tile_j)
        fn(ctx, i, j, range_i - i < job.tile_i ? range_i - i : job.tile_i,
           range_j - j < job.tile_j ? range_j - j : job.tile_j);
    return;
  }
  job.tiles = ti * job.tiles_j;
  tp_run(pool, &job, flags);
}
#endif /* !PTERUN_BARE_METAL */
