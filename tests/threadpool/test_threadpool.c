/* libpterun_threadpool: every index/tile of every task shape runs exactly
 * once for many ranges, tiles, pool sizes and thread caps; NULL pool and cap 1
 * run on the caller's thread; a task started inside a task runs serially;
 * callers from several threads share one pool; a host pool adapted through
 * the function table runs the same tasks; the default size respects the
 * affinity mask and the cgroup quota (fake cgroup trees); the split rule
 * (work estimate against min_work_ns, its environment variable) and the
 * oversubscription backoff, observed without timing. Built and run under
 * ThreadSanitizer in CI (ctest label "threads"). */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pterun/threadpool.h"
#include "src/threadpool/tp_internal.h"
#include "tests/harness/pt_test.h"

#define MAX_RANGE 5000

static int pt_failures;

/* ---- counting tasks ------------------------------------------------------------ */

typedef struct counts {
  atomic_int hits[MAX_RANGE];
  atomic_int bad; /* a tile outside the range or with the wrong size */
  size_t range_i, range_j, tile_i, tile_j;
  pthread_t caller;
  atomic_int on_caller, off_caller;
  pthread_t seen[64];
  atomic_int nseen;
  pthread_mutex_t mu;
} counts;

static void note_thread(counts* c) {
  if (pthread_equal(pthread_self(), c->caller))
    atomic_fetch_add(&c->on_caller, 1);
  else
    atomic_fetch_add(&c->off_caller, 1);
  pthread_mutex_lock(&c->mu);
  int n = atomic_load(&c->nseen), found = 0;
  for (int k = 0; k < n; ++k) found |= pthread_equal(c->seen[k], pthread_self());
  if (!found && n < 64) {
    c->seen[n] = pthread_self();
    atomic_store(&c->nseen, n + 1);
  }
  pthread_mutex_unlock(&c->mu);
}

static void reset(counts* c, size_t ri, size_t rj, size_t ti, size_t tj) {
  for (size_t k = 0; k < MAX_RANGE; ++k) atomic_store(&c->hits[k], 0);
  atomic_store(&c->bad, 0);
  atomic_store(&c->on_caller, 0);
  atomic_store(&c->off_caller, 0);
  atomic_store(&c->nseen, 0);
  c->range_i = ri;
  c->range_j = rj;
  c->tile_i = ti ? ti : 1;
  c->tile_j = tj ? tj : 1;
  c->caller = pthread_self();
}

static void task_1d(void* ctx, size_t i) {
  counts* c = ctx;
  if (i >= c->range_i) {
    atomic_fetch_add(&c->bad, 1);
    return;
  }
  atomic_fetch_add(&c->hits[i], 1);
  note_thread(c);
}

static void task_1d_tile(void* ctx, size_t start, size_t count) {
  counts* c = ctx;
  size_t want = c->range_i - start < c->tile_i ? c->range_i - start : c->tile_i;
  if (start >= c->range_i || start % c->tile_i != 0 || count != want) {
    atomic_fetch_add(&c->bad, 1);
    return;
  }
  for (size_t i = start; i < start + count; ++i) atomic_fetch_add(&c->hits[i], 1);
  note_thread(c);
}

static void task_2d_tile(void* ctx, size_t i, size_t j, size_t ni, size_t nj) {
  counts* c = ctx;
  size_t wi = c->range_i - i < c->tile_i ? c->range_i - i : c->tile_i;
  size_t wj = c->range_j - j < c->tile_j ? c->range_j - j : c->tile_j;
  if (i >= c->range_i || j >= c->range_j || i % c->tile_i || j % c->tile_j || ni != wi ||
      nj != wj) {
    atomic_fetch_add(&c->bad, 1);
    return;
  }
  for (size_t a = i; a < i + ni; ++a)
    for (size_t b = j; b < j + nj; ++b) atomic_fetch_add(&c->hits[a * c->range_j + b], 1);
  note_thread(c);
}

static int all_once(counts* c, size_t n) {
  if (atomic_load(&c->bad) != 0) return 0;
  for (size_t k = 0; k < MAX_RANGE; ++k)
    if (atomic_load(&c->hits[k]) != (k < n ? 1 : 0)) {
      fprintf(stderr, "index %zu ran %d times (range %zu)\n", k, atomic_load(&c->hits[k]), n);
      return 0;
    }
  return 1;
}

static counts g_c;

static int check_pool(pterun_threadpool* pool) {
  static const size_t ranges[] = {0, 1, 2, 3, 5, 7, 16, 63, 64, 65, 1000, 4099};
  static const size_t tiles[] = {0, 1, 2, 3, 7, 16, 100, 5000};
  static const uint32_t caps[] = {0, 1, 2, 3, 64};
  size_t size = pterun_threadpool_size(pool);
  for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ++ci) {
    uint32_t flags = PTERUN_PARALLEL_MAX_THREADS(caps[ci]);
    size_t limit = caps[ci] && caps[ci] < size ? caps[ci] : size;
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; ++r) {
      size_t n = ranges[r];
      reset(&g_c, n, 1, 1, 1);
      pterun_parallelize_1d(pool, task_1d, &g_c, n, flags);
      PT_CHECK(all_once(&g_c, n));
      PT_CHECK((size_t)atomic_load(&g_c.nseen) <= limit);
      for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; ++t) {
        reset(&g_c, n, 1, tiles[t], 1);
        pterun_parallelize_1d_tile(pool, task_1d_tile, &g_c, n, tiles[t], flags);
        PT_CHECK(all_once(&g_c, n));
        PT_CHECK((size_t)atomic_load(&g_c.nseen) <= limit);
      }
    }
    static const size_t r2[][2] = {{1, 1}, {3, 5}, {17, 33}, {64, 64}, {1, 4000}, {70, 1}};
    static const size_t t2[][2] = {{1, 1}, {2, 3}, {4, 16}, {8, 8}, {100, 100}, {0, 5}};
    for (size_t r = 0; r < sizeof r2 / sizeof r2[0]; ++r)
      for (size_t t = 0; t < sizeof t2 / sizeof t2[0]; ++t) {
        reset(&g_c, r2[r][0], r2[r][1], t2[t][0], t2[t][1]);
        pterun_parallelize_2d_tile(pool, task_2d_tile, &g_c, r2[r][0], r2[r][1], t2[t][0], t2[t][1],
                                   flags);
        PT_CHECK(all_once(&g_c, r2[r][0] * r2[r][1]));
        PT_CHECK((size_t)atomic_load(&g_c.nseen) <= limit);
      }
    /* One thread allowed: everything on the caller's thread. */
    if (limit == 1) {
      reset(&g_c, 1000, 1, 3, 1);
      pterun_parallelize_1d_tile(pool, task_1d_tile, &g_c, 1000, 3, flags);
      PT_CHECK(all_once(&g_c, 1000) && atomic_load(&g_c.off_caller) == 0);
    }
    /* Empty ranges never call the task. */
    reset(&g_c, 0, 0, 1, 1);
    pterun_parallelize_2d_tile(pool, task_2d_tile, &g_c, 0, 7, 1, 1, flags);
    pterun_parallelize_2d_tile(pool, task_2d_tile, &g_c, 7, 0, 1, 1, flags);
    PT_CHECK(all_once(&g_c, 0) && atomic_load(&g_c.on_caller) == 0);
  }
  return 0;
}

static int test_null_pool_is_serial(void) {
  PT_CHECK(pterun_threadpool_size(NULL) == 1);
  PT_CHECK(check_pool(NULL) == 0);
  reset(&g_c, 777, 1, 5, 1);
  pterun_parallelize_1d_tile(NULL, task_1d_tile, &g_c, 777, 5, 0);
  PT_CHECK(all_once(&g_c, 777) && atomic_load(&g_c.off_caller) == 0);
  return 0;
}

static int test_every_index_once(void) {
  for (size_t threads = 1; threads <= 5; ++threads) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = threads;
    o.spin_us = threads % 2 ? 1 : 0; /* sleeping workers and spinning ones */
    pterun_threadpool* pool = NULL;
    PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
    PT_CHECK(pterun_threadpool_size(pool) == threads);
    int r = check_pool(pool);
    pterun_threadpool_destroy(pool);
    PT_CHECK(r == 0);
  }
  /* More threads than the pool splits a task into ranges (64): threads share
   * ranges. */
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 70;
  o.spin_us = 1;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  int r = check_pool(pool);
  pterun_threadpool_destroy(pool);
  PT_CHECK(r == 0);
  return 0;
}

/* Slow tiles: with two threads and enough work, a worker takes some tiles
 * and the caller takes some (the caller's thread participates). */
static void slow_tile(void* ctx, size_t start, size_t count) {
  counts* c = ctx;
  usleep(2000);
  task_1d_tile(ctx, start, count);
  (void)c;
}

static int test_caller_and_workers_share(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 2;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  reset(&g_c, 40, 1, 1, 1);
  pterun_parallelize_1d_tile(pool, slow_tile, &g_c, 40, 1, 0);
  int ok =
      all_once(&g_c, 40) && atomic_load(&g_c.on_caller) > 0 && atomic_load(&g_c.off_caller) > 0;
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  return 0;
}

/* The work rule: a call whose estimate gives a thread less than min_work_ns
 * runs on the caller alone; one with enough work is shared; no estimate
 * splits as before. The environment sets the threshold only when the option
 * does not. */
static int test_work_threshold(void) {
  PT_CHECK(PTERUN_PARALLEL_WORK_NS(0) == (1u << 16));
  PT_CHECK(PTERUN_PARALLEL_WORK_NS(640) == (11u << 16));
  PT_CHECK(PTERUN_PARALLEL_WORK_NS(UINT64_MAX) == PTERUN_PARALLEL_WORK_MASK);
  PT_CHECK((PTERUN_PARALLEL_WORK_NS(1000000) & PTERUN_PARALLEL_THREADS_MASK) == 0);
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 10000;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  int ok = pterun_threadpool_threads_for(pool, 0) == 3 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(19000)) == 1 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(20100)) == 2 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(UINT64_MAX)) == 3 &&
           pterun_threadpool_threads_for(
               pool, PTERUN_PARALLEL_WORK_NS(UINT64_MAX) | PTERUN_PARALLEL_MAX_THREADS(2)) == 2 &&
           pterun_threadpool_threads_for(NULL, PTERUN_PARALLEL_WORK_NS(UINT64_MAX)) == 1;
  reset(&g_c, 40, 1, 1, 1);
  pterun_parallelize_1d_tile(pool, slow_tile, &g_c, 40, 1, PTERUN_PARALLEL_WORK_NS(15000));
  ok = ok && all_once(&g_c, 40) && atomic_load(&g_c.off_caller) == 0;
  reset(&g_c, 40, 1, 1, 1);
  pterun_parallelize_1d_tile(pool, slow_tile, &g_c, 40, 1, PTERUN_PARALLEL_WORK_NS(80000000));
  ok = ok && all_once(&g_c, 40) && atomic_load(&g_c.off_caller) > 0;
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  /* option 0: the environment's value (1 splits everything) */
  PT_CHECK(setenv("PTERUN_THREADPOOL_MIN_WORK_NS", "1", 1) == 0);
  o.min_work_ns = 0;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  ok = pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(200)) == 3;
  pterun_threadpool_destroy(pool);
  /* the option wins over the environment */
  o.min_work_ns = 1000000;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  ok = ok && pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(1500000)) == 1;
  pterun_threadpool_destroy(pool);
  PT_CHECK(unsetenv("PTERUN_THREADPOOL_MIN_WORK_NS") == 0);
  PT_CHECK(ok);
  return 0;
}

/* A task that starts a task on the same pool: the inner one runs serially on
 * the thread that started it (no deadlock), every index once. */
typedef struct nested {
  pterun_threadpool* pool;
  atomic_int inner[64][64];
} nested;

static nested g_n;

static void inner_task(void* ctx, size_t i) {
  size_t* outer = ctx;
  atomic_fetch_add(&g_n.inner[*outer][i], 1);
}

static void outer_task(void* ctx, size_t i) {
  (void)ctx;
  size_t outer = i;
  pterun_parallelize_1d(g_n.pool, inner_task, &outer, 64, 0);
}

static int test_nested(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &g_n.pool), PTERUN_STATUS_OK);
  pterun_parallelize_1d(g_n.pool, outer_task, NULL, 64, 0);
  pterun_threadpool_destroy(g_n.pool);
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b) PT_CHECK(atomic_load(&g_n.inner[a][b]) == 1);
  return 0;
}

/* Several application threads submitting to one pool at once. */
#define SUBMITTERS 3
typedef struct submitter {
  pterun_threadpool* pool;
  atomic_int hits[3000];
  int ok;
} submitter;

static void sub_task(void* ctx, size_t start, size_t count) {
  submitter* s = ctx;
  for (size_t i = start; i < start + count; ++i) atomic_fetch_add(&s->hits[i], 1);
}

static void* submit_main(void* arg) {
  submitter* s = arg;
  s->ok = 1;
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < 3000; ++k) atomic_store(&s->hits[k], 0);
    pterun_parallelize_1d_tile(s->pool, sub_task, s, 3000, 7 + round, 0);
    for (int k = 0; k < 3000; ++k)
      if (atomic_load(&s->hits[k]) != 1) s->ok = 0;
  }
  return NULL;
}

static submitter g_subs[SUBMITTERS];

static int test_concurrent_callers(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  pthread_t th[SUBMITTERS];
  for (int k = 0; k < SUBMITTERS; ++k) {
    g_subs[k].pool = pool;
    PT_CHECK(pthread_create(&th[k], NULL, submit_main, &g_subs[k]) == 0);
  }
  for (int k = 0; k < SUBMITTERS; ++k) pthread_join(th[k], NULL);
  pterun_threadpool_destroy(pool);
  for (int k = 0; k < SUBMITTERS; ++k) PT_CHECK(g_subs[k].ok);
  return 0;
}

/* A host pool behind the function table: here it runs the workers one after
 * the other on the calling thread, counting what pterun asked for. */
typedef struct host_pool {
  size_t size;
  int runs;
  size_t max_workers;
} host_pool;

static size_t host_size(void* impl) {
  return ((host_pool*)impl)->size;
}

static void host_run(void* impl, void (*worker)(void* arg, size_t w), void* arg, size_t workers) {
  host_pool* h = impl;
  h->runs++;
  if (workers > h->max_workers) h->max_workers = workers;
  for (size_t w = 0; w < workers; ++w) worker(arg, w);
}

static int test_external_pool(void) {
  host_pool h = {4, 0, 0};
  pterun_threadpool_interface iface = {PTERUN_THREADPOOL_INTERFACE_VERSION, &h, host_size,
                                       host_run};
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.external = &iface;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  PT_CHECK(pterun_threadpool_size(pool) == 4);
  int r = check_pool(pool);
  PT_CHECK(r == 0 && h.runs > 0 && h.max_workers == 4);
  pterun_threadpool_destroy(pool);
  /* More workers than ranges (64). */
  host_pool big = {70, 0, 0};
  iface.impl = &big;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  r = check_pool(pool);
  PT_CHECK(r == 0 && big.runs > 0 && big.max_workers == 70);
  pterun_threadpool_destroy(pool);
  iface.impl = &h;
  /* threads caps how much of the host pool pterun asks for. */
  o.threads = 2;
  h.max_workers = 0;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  PT_CHECK(pterun_threadpool_size(pool) == 2);
  reset(&g_c, 100, 1, 1, 1);
  pterun_parallelize_1d_tile(pool, task_1d_tile, &g_c, 100, 1, 0);
  PT_CHECK(all_once(&g_c, 100) && h.max_workers == 2);
  pterun_threadpool_destroy(pool);
  /* A bad table is refused. */
  iface.version = 99;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(pool == NULL);
  iface.version = PTERUN_THREADPOOL_INTERFACE_VERSION;
  iface.run = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(pterun_threadpool_create(NULL, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  return 0;
}

static int test_create_destroy_loop(void) {
  for (int k = 0; k < 20; ++k) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = (size_t)(k % 4) + 1;
    pterun_threadpool* pool = NULL;
    PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
    if (k % 2) {
      reset(&g_c, 100, 1, 1, 1);
      pterun_parallelize_1d(pool, task_1d, &g_c, 100, 0);
      PT_CHECK(all_once(&g_c, 100));
    }
    pterun_threadpool_destroy(pool);
  }
  pterun_threadpool_destroy(NULL);
  return 0;
}

/* ---- the default size ------------------------------------------------------------ */

static int test_default_threads(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  PT_CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
  size_t n = pterun_threadpool_default_threads();
  PT_CHECK(n >= 1 && n <= (size_t)CPU_COUNT(&set));
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(NULL, &pool), PTERUN_STATUS_OK);
  PT_CHECK(pterun_threadpool_size(pool) == n);
  pterun_threadpool_destroy(pool);
  /* A narrower affinity mask lowers the default. */
  if (CPU_COUNT(&set) > 1) {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) {
        CPU_SET(c, &one);
        break;
      }
    PT_CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    size_t narrowed = pterun_threadpool_default_threads();
    PT_CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
    PT_CHECK(narrowed == 1);
  }
  return 0;
}

static char g_root[256];

static int write_file(const char* rel, const char* text) {
  char path[512], dir[512];
  snprintf(path, sizeof path, "%s/%s", g_root, rel);
  snprintf(dir, sizeof dir, "%s", path);
  for (char* p = dir + strlen(g_root) + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      mkdir(dir, 0755);
      *p = '/';
    }
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  fclose(f);
  return 0;
}

static size_t limit(void) {
  char proc[512];
  snprintf(proc, sizeof proc, "%s/proc_cgroup", g_root);
  return tp_cgroup_cpu_limit(proc, g_root);
}

static void rm_tree(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
}

static int test_cgroup_quota(void) {
  snprintf(g_root, sizeof g_root, "/tmp/pterun-cgroup-XXXXXX");
  PT_CHECK(mkdtemp(g_root) != NULL);
  int fail = 0;
#define EXPECT(want)                                                                               \
  do {                                                                                             \
    size_t got_ = limit();                                                                         \
    if (got_ != (size_t)(want)) {                                                                  \
      fprintf(stderr, "%s:%d: cgroup limit %zu, want %zu\n", __FILE__, __LINE__, got_,             \
              (size_t)(want));                                                                     \
      fail = 1;                                                                                    \
    }                                                                                              \
  } while (0)
  /* v2, unlimited and limited; ancestors' limits count. */
  write_file("proc_cgroup", "0::/app/job\n");
  write_file("app/job/cpu.max", "max 100000\n");
  EXPECT(0);
  write_file("app/job/cpu.max", "250000 100000\n");
  EXPECT(3);
  write_file("app/cpu.max", "100000 100000\n");
  EXPECT(1);
  write_file("app/cpu.max", "max 100000\n");
  write_file("app/job/cpu.max", "50000 100000\n");
  EXPECT(1); /* half a CPU still gets one thread */
  write_file("app/job/cpu.max", "garbage\n");
  EXPECT(0);
  /* v1 (hybrid hosts): cpu controller, -1 means none. */
  write_file("proc_cgroup", "4:memory:/x\n2:cpu,cpuacct:/grp\n0::/\n");
  write_file("cpu,cpuacct/grp/cpu.cfs_quota_us", "-1\n");
  write_file("cpu,cpuacct/grp/cpu.cfs_period_us", "100000\n");
  EXPECT(0);
  write_file("cpu,cpuacct/grp/cpu.cfs_quota_us", "400000\n");
  EXPECT(4);
  write_file("cpu,cpuacct/grp/cpu.cfs_period_us", "0\n");
  EXPECT(0);
  /* Both present: the smaller wins. */
  write_file("cpu,cpuacct/grp/cpu.cfs_period_us", "100000\n");
  write_file("cpu.max", "200000 100000\n");
  EXPECT(2);
  /* Hostile paths are ignored; a missing file means no limit. */
  write_file("proc_cgroup", "0::/../../etc\n1:cpu:relative\n");
  EXPECT(0);
  char proc[512];
  snprintf(proc, sizeof proc, "%s/none", g_root);
  PT_CHECK(tp_cgroup_cpu_limit(proc, g_root) == 0);
  rm_tree();
  PT_CHECK(!fail);
  return 0;
}

/* The options grow like every options struct (pterun/options.h): 0 is
 * refused, an older caller's smaller struct takes the defaults beyond it, a
 * newer caller's larger one is fine while the fields this build does not
 * know stay zero. */
static int test_options_struct_size(void) {
  struct newer {
    pterun_threadpool_options o;
    uint64_t later_field;
  } n;
  pterun_threadpool* pool = NULL;
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  PT_CHECK(o.struct_size == sizeof o && o.threads == 0 && o.external == NULL);
  o.struct_size = 0;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(pool == NULL);
  o.struct_size = offsetof(pterun_threadpool_options, external); /* threads only */
  o.threads = 2;
  o.spin_us = 7; /* beyond the older struct: ignored */
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  PT_CHECK(pterun_threadpool_size(pool) == 2);
  pterun_threadpool_destroy(pool);
  pool = NULL;
  memset(&n, 0, sizeof n);
  n.o.struct_size = sizeof n;
  n.o.threads = 2;
  PT_CHECK_STATUS(pterun_threadpool_create(&n.o, &pool), PTERUN_STATUS_OK);
  pterun_threadpool_destroy(pool);
  pool = NULL;
  n.later_field = 1;
  PT_CHECK_STATUS(pterun_threadpool_create(&n.o, &pool), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(pool == NULL);
  return 0;
}

/* ---- the split decision and the backoff (docs/performance.md, "Thread
 * thresholds") -------------------------------------------------------------------
 *
 * Deterministic, no timing: whether the pool split a call is read inside the
 * task on the caller's thread, where pterun_threadpool_threads_for says 1 when
 * the call was split (the caller runs its tiles inside the pool, which a nested
 * call could not use) and the pool's size when it ran the call serially. A
 * worker is kept from running tiles by parking it in a signal handler; its
 * pool spins without ever sleeping (spin_us at its maximum), so the parked
 * worker never holds the pool's mutex. */

#define SPLIT_MISSES 4u   /* split calls without a worker's tile before a backoff */
#define BACKOFF_MIN 64u   /* serial calls of the first backoff */
#define BACKOFF_MAX 4096u /* and of the longest */

typedef struct probe {
  pterun_threadpool* pool;
  pthread_t caller;
  atomic_int on_caller, off_caller;
  atomic_size_t seen_inside; /* threads_for(pool, 0) on the caller's thread */
  pthread_t worker;          /* the last thread other than the caller that ran a tile */
  pthread_mutex_t mu;
  int wait_for_worker; /* the caller's first tile waits until a worker ran one */
  int timed_out;
} probe;

static probe g_p = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void probe_tile(void* ctx, size_t start, size_t count) {
  probe* p = ctx;
  (void)start;
  (void)count;
  if (!pthread_equal(pthread_self(), p->caller)) {
    pthread_mutex_lock(&p->mu);
    p->worker = pthread_self();
    pthread_mutex_unlock(&p->mu);
    atomic_fetch_add(&p->off_caller, 1);
    return;
  }
  atomic_store(&p->seen_inside, pterun_threadpool_threads_for(p->pool, 0));
  if (p->wait_for_worker && atomic_fetch_add(&p->on_caller, 1) == 0) {
    /* Liveness guard only (a pool that did not split would never let a worker
     * in): 20 s of 1 ms naps, then the test fails instead of hanging. */
    for (int k = 0; k < 20000 && atomic_load(&p->off_caller) == 0; ++k) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    if (atomic_load(&p->off_caller) == 0) p->timed_out = 1;
    return;
  }
  if (!p->wait_for_worker) atomic_fetch_add(&p->on_caller, 1);
}

enum { RAN_SERIAL = 0, RAN_SPLIT = 1, RAN_BAD = 2 };

/* One call of 8 tiles; how the pool ran it. */
static int probe_call(pterun_threadpool* pool, uint32_t flags, int wait_for_worker) {
  g_p.pool = pool;
  g_p.caller = pthread_self();
  atomic_store(&g_p.on_caller, 0);
  atomic_store(&g_p.off_caller, 0);
  atomic_store(&g_p.seen_inside, 0);
  g_p.wait_for_worker = wait_for_worker;
  g_p.timed_out = 0;
  pterun_parallelize_1d_tile(pool, probe_tile, &g_p, 8, 1, flags);
  if (g_p.timed_out || atomic_load(&g_p.on_caller) + atomic_load(&g_p.off_caller) != 8)
    return RAN_BAD;
  /* A tile off the caller's thread, or the caller inside the pool: split (the
   * worker may have taken every tile before the caller took one). */
  size_t inside = atomic_load(&g_p.seen_inside);
  if (atomic_load(&g_p.off_caller) > 0 || inside == 1) return RAN_SPLIT;
  if (inside == pterun_threadpool_size(pool) && atomic_load(&g_p.off_caller) == 0)
    return RAN_SERIAL;
  return RAN_BAD;
}

/* Parking: the handler holds its thread until released. */
static atomic_int g_parked, g_release;

static void park_handler(int sig) {
  (void)sig;
  int saved = errno;
  atomic_store(&g_parked, 1);
  while (!atomic_load(&g_release)) {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  atomic_store(&g_parked, 0);
  errno = saved;
}

static int park(pthread_t t) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = park_handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return -1;
  atomic_store(&g_release, 0);
  if (pthread_kill(t, SIGUSR1) != 0) return -1;
  while (!atomic_load(&g_parked)) sched_yield();
  return 0;
}

static void unpark(void) {
  atomic_store(&g_release, 1);
  while (atomic_load(&g_parked)) sched_yield();
}

/* A 2-thread pool whose worker never sleeps, and that worker's thread (it ran
 * a tile of a first, split call). */
static pterun_threadpool* spinning_pool(uint32_t min_work_ns, pthread_t* worker) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 2;
  o.spin_us = UINT32_MAX;
  o.min_work_ns = min_work_ns;
  pterun_threadpool* pool = NULL;
  if (pterun_threadpool_create(&o, &pool) != PTERUN_STATUS_OK) return NULL;
  if (probe_call(pool, PTERUN_PARALLEL_WORK_NS(100000), 1) != RAN_SPLIT) {
    pterun_threadpool_destroy(pool);
    return NULL;
  }
  *worker = g_p.worker;
  return pool;
}

/* The estimate's rule at and around the thresholds (64 ns steps: an estimate
 * counts as the lower end of its step), and min_work_ns 1. */
static int test_threads_for_thresholds(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 10000;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  int ok = pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(0)) == 1 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(10000)) == 1 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(19968)) == 1 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(20031)) == 1 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(20032)) == 2 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(29952)) == 2 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(30016)) == 3 &&
           pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(1000000)) == 3 &&
           pterun_threadpool_threads_for(
               pool, PTERUN_PARALLEL_WORK_NS(30016) | PTERUN_PARALLEL_MAX_THREADS(1)) == 1;
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  o.min_work_ns = 1; /* every estimate of a step and more splits all the way */
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  ok = pterun_threadpool_threads_for(pool, 0) == 3 &&
       pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(64)) == 3 &&
       pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(20000)) == 3 &&
       pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(UINT64_MAX)) == 3 &&
       pterun_threadpool_threads_for(
           pool, PTERUN_PARALLEL_WORK_NS(64) | PTERUN_PARALLEL_MAX_THREADS(2)) == 2;
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  return 0;
}

/* PTERUN_THREADPOOL_MIN_WORK_NS, read when a pool is created with option 0:
 * a decimal number of nanoseconds; anything else (0, malformed, too large,
 * empty) is the default 3 us. */
static int min_work_of_env(const char* value, uint32_t want) {
  if (value)
    setenv("PTERUN_THREADPOOL_MIN_WORK_NS", value, 1);
  else
    unsetenv("PTERUN_THREADPOOL_MIN_WORK_NS");
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 2;
  pterun_threadpool* pool = NULL;
  if (pterun_threadpool_create(&o, &pool) != PTERUN_STATUS_OK) return 0;
  /* 2 threads exactly when the estimate's step starts at 2 * min_work_ns or above */
  uint64_t two = 2u * (uint64_t)want;
  uint64_t at = (two + 63u) / 64u * 64u; /* first step at or above */
  int ok =
      pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(at)) == 2 &&
      (at < 64u || pterun_threadpool_threads_for(pool, PTERUN_PARALLEL_WORK_NS(at - 64u)) == 1);
  pterun_threadpool_destroy(pool);
  unsetenv("PTERUN_THREADPOOL_MIN_WORK_NS");
  if (!ok) fprintf(stderr, "PTERUN_THREADPOOL_MIN_WORK_NS=%s: not %u ns\n", value, (unsigned)want);
  return ok;
}

static int test_min_work_env(void) {
  PT_CHECK(min_work_of_env(NULL, 3000));
  PT_CHECK(min_work_of_env("25000", 25000));
  PT_CHECK(min_work_of_env("1", 1));
  PT_CHECK(min_work_of_env("0", 3000));
  PT_CHECK(min_work_of_env("", 3000));
  PT_CHECK(min_work_of_env("12abc", 3000));
  PT_CHECK(min_work_of_env(" 5x", 3000));
  PT_CHECK(min_work_of_env("-5", 3000));
  PT_CHECK(min_work_of_env("99999999999", 3000));
  return 0;
}

/* Tiny work runs on the caller's thread without a split; large work on a
 * fresh pool is split, and a worker runs some of it (the caller's first tile
 * waits for that). */
static int test_tiny_serial_large_split(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 2;
  o.min_work_ns = 10000;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  int ok = 1;
  for (int k = 0; k < 50; ++k)
    ok = ok && probe_call(pool, PTERUN_PARALLEL_WORK_NS(5000), 0) == RAN_SERIAL;
  ok = ok && probe_call(pool, PTERUN_PARALLEL_WORK_NS(100000), 1) == RAN_SPLIT &&
       atomic_load(&g_p.off_caller) > 0;
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  return 0;
}

/* The backoff. With the worker parked, split calls get no worker's tile: after
 * SPLIT_MISSES of them the pool runs BACKOFF_MIN calls serially, then tries
 * splits again, doubling the serial stretch each time up to BACKOFF_MAX (so a
 * split is always tried again after at most BACKOFF_MAX calls); a split in
 * which a worker ran a tile resets it. Huge calls (64 min_work_ns and more)
 * always split and neither count nor use up a backoff. */
static int expect_run(pterun_threadpool* pool, uint32_t flags, int how, unsigned n) {
  for (unsigned k = 0; k < n; ++k) {
    int got = probe_call(pool, flags, 0);
    if (got != how) {
      fprintf(stderr, "call %u of %u %s: ran %s\n", k + 1, n,
              how == RAN_SPLIT ? "to split" : "serial",
              got == RAN_SPLIT    ? "split"
              : got == RAN_SERIAL ? "serially"
                                  : "wrongly");
      return 0;
    }
  }
  return 1;
}

static int test_backoff(void) {
  const uint32_t mid = PTERUN_PARALLEL_WORK_NS(100000);   /* 2 threads, not huge */
  const uint32_t huge = PTERUN_PARALLEL_WORK_NS(640064);  /* 64 min_work_ns */
  const uint32_t below = PTERUN_PARALLEL_WORK_NS(639936); /* just under: not huge */
  pthread_t worker;
  pterun_threadpool* pool = spinning_pool(10000, &worker);
  PT_CHECK(pool != NULL);
  PT_CHECK(park(worker) == 0);
  int ok = 1;
  /* Huge calls with no worker's tile: all split, none counted. */
  ok = ok && expect_run(pool, huge, RAN_SPLIT, 3 * SPLIT_MISSES);
  ok = ok && expect_run(pool, mid, RAN_SPLIT, SPLIT_MISSES - 1);
  ok = ok && expect_run(pool, below, RAN_SPLIT, 1);
  /* Backed off: huge calls still split and leave the stretch as it was. */
  ok = ok && expect_run(pool, mid, RAN_SERIAL, BACKOFF_MIN / 2);
  ok = ok && expect_run(pool, huge, RAN_SPLIT, 10);
  ok = ok && expect_run(pool, mid, RAN_SERIAL, BACKOFF_MIN / 2);
  /* Then splits again; each failed round doubles the stretch, up to the cap. */
  unsigned stretch = BACKOFF_MIN;
  for (int round = 0; ok && round < 8; ++round) {
    ok = ok && expect_run(pool, mid, RAN_SPLIT, SPLIT_MISSES);
    stretch = stretch < BACKOFF_MAX ? 2 * stretch : BACKOFF_MAX;
    ok = ok && expect_run(pool, mid, RAN_SERIAL, stretch);
  }
  PT_CHECK(ok && stretch == BACKOFF_MAX);
  /* A split a worker takes part in resets the backoff to its start. */
  unpark();
  ok = probe_call(pool, mid, 1) == RAN_SPLIT && atomic_load(&g_p.off_caller) > 0;
  ok = ok && park(worker) == 0;
  ok = ok && expect_run(pool, mid, RAN_SPLIT, SPLIT_MISSES) &&
       expect_run(pool, mid, RAN_SERIAL, BACKOFF_MIN) && expect_run(pool, mid, RAN_SPLIT, 1);
  unpark();
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  return 0;
}

/* min_work_ns 1: every call splits, however many find no worker. */
static int test_min_work_1_never_backs_off(void) {
  pthread_t worker;
  pterun_threadpool* pool = spinning_pool(1, &worker);
  PT_CHECK(pool != NULL);
  PT_CHECK(park(worker) == 0);
  int ok = expect_run(pool, PTERUN_PARALLEL_WORK_NS(100000), RAN_SPLIT, 2 * BACKOFF_MIN) &&
           expect_run(pool, PTERUN_PARALLEL_WORK_NS(64), RAN_SPLIT, 2 * BACKOFF_MIN) &&
           expect_run(pool, 0, RAN_SPLIT, 2 * BACKOFF_MIN);
  unpark();
  pterun_threadpool_destroy(pool);
  PT_CHECK(ok);
  return 0;
}

int main(void) {
  PT_RUN(test_options_struct_size);
  PT_RUN(test_null_pool_is_serial);
  PT_RUN(test_every_index_once);
  PT_RUN(test_caller_and_workers_share);
  PT_RUN(test_work_threshold);
  PT_RUN(test_threads_for_thresholds);
  PT_RUN(test_min_work_env);
  PT_RUN(test_tiny_serial_large_split);
  PT_RUN(test_backoff);
  PT_RUN(test_min_work_1_never_backs_off);
  PT_RUN(test_nested);
  PT_RUN(test_concurrent_callers);
  PT_RUN(test_external_pool);
  PT_RUN(test_create_destroy_loop);
  PT_RUN(test_default_threads);
  PT_RUN(test_cgroup_quota);
  return pt_failures ? 1 : 0;
}
