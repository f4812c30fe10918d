/* Real exported models run with no pool, and with pools of 1 to 4 threads and
 * per-method thread caps: every output is bit-identical (the kernels never
 * split a reduction by thread count). Two methods sharing one pool execute
 * concurrently from two threads. Built and run under ThreadSanitizer in CI. */
#include <pthread.h>

#include "pterun/threadpool.h"
#include "tests/robustness/rb_common.h"

static const char* const g_models[] = {"mlp", "cnn",  "cnn_channels_last", "mobilenet", "resnet",
                                       "gpt", "lstm", "dynamic_seq",       "norm_rows"};
#define N_MODELS (sizeof g_models / sizeof g_models[0])

static int pt_failures;

/* Deterministic float inputs in each input's own dim order (mobilenet takes
 * channels-last), at the serialized sizes. */
static pterun_status bind_inputs(const pterun_program* p, pterun_method* m) {
  static _Thread_local _Alignas(64) float buf[1 << 16];
  size_t index;
  if (pterun_program_find_method(p, "forward", &index) != PTERUN_STATUS_OK)
    return PTERUN_STATUS_NOT_FOUND;
  for (size_t i = 0; i < pterun_method_input_count(m); ++i) {
    pterun_io_info info;
    pterun_status st = pterun_program_method_input(p, index, i, &info);
    if (st != PTERUN_STATUS_OK) return st;
    if (info.tag != PTERUN_VALUE_TENSOR || info.nbytes > sizeof buf)
      return PTERUN_STATUS_NOT_SUPPORTED;
    if (info.dtype == PTERUN_DTYPE_F32) {
      for (size_t k = 0; k < info.nbytes / 4; ++k)
        buf[k] = (float)((int)((k * 37 + i * 11) % 17) - 8) / 8.0f;
    } else if (info.dtype == PTERUN_DTYPE_I64) {
      int64_t* ids = (int64_t*)buf;
      for (size_t k = 0; k < info.nbytes / 8; ++k) ids[k] = (int64_t)((k * 7 + i) % 5);
    } else {
      return PTERUN_STATUS_NOT_SUPPORTED;
    }
    pterun_tensor_view v = {info.dtype,     info.rank, info.sizes,
                            info.dim_order, buf,       (size_t)info.nbytes};
    if ((st = pterun_method_set_input(m, i, &v)) != PTERUN_STATUS_OK) return st;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status run_model(const char* dir, pterun_threadpool* pool, size_t cap,
                               uint64_t* hash) {
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  char rel[256];
  snprintf(rel, sizeof rel, "%s/model.pte", dir);
  pterun_status st = pterun_program_load_file(rb_fixture(rel), PTERUN_FILE_MMAP, NULL, &p);
  pterun_method_options o = rb_opts();
  o.threadpool = pool;
  o.max_threads = cap;
  if (st == PTERUN_STATUS_OK) st = pterun_method_load(p, "forward", &o, &m);
  for (int round = 0; round < 2 && st == PTERUN_STATUS_OK; ++round) {
    st = bind_inputs(p, m);
    if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
    if (st == PTERUN_STATUS_OK) {
      uint64_t h = rb_output_hash(m);
      if (round == 1 && h != *hash) st = PTERUN_STATUS_INTERNAL; /* same pool, same bits */
      *hash = h;
    }
  }
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return st;
}

static int test_bit_identical(void) {
  uint64_t want[N_MODELS];
  for (size_t k = 0; k < N_MODELS; ++k)
    PT_CHECK_STATUS(run_model(g_models[k], NULL, 0, &want[k]), PTERUN_STATUS_OK);
  for (size_t threads = 1; threads <= 4; ++threads) {
    pterun_threadpool_options po = PTERUN_THREADPOOL_OPTIONS_INIT;
    po.threads = threads;
    po.min_work_ns = 1; /* split every call: these compare thread counts */
    pterun_threadpool* pool = NULL;
    PT_CHECK_STATUS(pterun_threadpool_create(&po, &pool), PTERUN_STATUS_OK);
    int bad = 0;
    for (size_t k = 0; k < N_MODELS; ++k)
      for (size_t cap = 0; cap <= threads; cap += threads > 1 ? threads - 1 : 1) {
        uint64_t h = 0;
        pterun_status st = run_model(g_models[k], pool, cap, &h);
        if (st != PTERUN_STATUS_OK || h != want[k]) {
          fprintf(stderr, "%s: %zu threads, cap %zu: %s, output %s\n", g_models[k], threads, cap,
                  pterun_status_name(st), h == want[k] ? "same" : "DIFFERS");
          bad = 1;
        }
      }
    pterun_threadpool_destroy(pool);
    PT_CHECK(!bad);
  }
  return 0;
}

/* Two application threads, one pool, different models at the same time. */
typedef struct job {
  pterun_threadpool* pool;
  const char* dir;
  uint64_t want, got;
  pterun_status st;
} job;

static void* job_main(void* arg) {
  job* j = arg;
  for (int r = 0; r < 3 && j->st == PTERUN_STATUS_OK; ++r) {
    j->st = run_model(j->dir, j->pool, 0, &j->got);
    if (j->got != j->want) j->st = PTERUN_STATUS_INTERNAL;
  }
  return NULL;
}

static int test_shared_pool_concurrent(void) {
  pterun_threadpool_options po = PTERUN_THREADPOOL_OPTIONS_INIT;
  po.threads = 3;
  po.min_work_ns = 1;
  pterun_threadpool* pool = NULL;
  PT_CHECK_STATUS(pterun_threadpool_create(&po, &pool), PTERUN_STATUS_OK);
  job jobs[2] = {{pool, "mobilenet", 0, 0, PTERUN_STATUS_OK},
                 {pool, "gpt", 0, 0, PTERUN_STATUS_OK}};
  pthread_t th[2];
  for (int k = 0; k < 2; ++k) {
    PT_CHECK_STATUS(run_model(jobs[k].dir, NULL, 0, &jobs[k].want), PTERUN_STATUS_OK);
    PT_CHECK(pthread_create(&th[k], NULL, job_main, &jobs[k]) == 0);
  }
  for (int k = 0; k < 2; ++k) pthread_join(th[k], NULL);
  pterun_threadpool_destroy(pool);
  for (int k = 0; k < 2; ++k) PT_CHECK_STATUS(jobs[k].st, PTERUN_STATUS_OK);
  return 0;
}

int main(void) {
  if (rb_init() != 0) return 1;
  PT_RUN(test_bit_identical);
  PT_RUN(test_shared_pool_concurrent);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
