/* Concurrency: many methods of one program, and many programs, executing at
 * once from several threads give exactly the serial results; the registry
 * (default and explicit) and data files are shared. Built and run under
 * ThreadSanitizer in CI (tools/run_tests.sh). */
#include <pthread.h>

#include "tests/robustness/rb_common.h"

#define THREADS 4
#define ROUNDS 3

typedef struct rcase {
  const char* dir;
  const char* method;
  pterun_program* program; /* shared by every thread */
  uint64_t want[ROUNDS];   /* serial output hashes per execute */
} rcase;

static rcase g_cases[] = {
    {"elementwise", "forward", NULL, {0}},
    {"mlp", "forward", NULL, {0}},
    {"cnn", "forward", NULL, {0}},
    {"two_methods", "forward", NULL, {0}},
    {"two_methods", "encode", NULL, {0}},
    {"mutable_buffer", "forward", NULL, {0}},
    {"dynamic_dim", "forward", NULL, {0}},
    {"sym_ops", "forward", NULL, {0}},
    {"external_data", "forward", NULL, {0}},
    {"control_flow", "forward", NULL, {0}},
    {"control_flow_false", "forward", NULL, {0}},
};
#define N_CASES (sizeof g_cases / sizeof g_cases[0])

static pterun_data* g_data;
static const pterun_registry* g_use_reg;

static const char* model_path(const rcase* c) {
  static _Thread_local char path[512];
  snprintf(path, sizeof path, "%s/%s/model.pte", PTERUN_FIXTURES_DIR, c->dir);
  return path;
}

/* Loads c's method from p, runs ROUNDS executes, stores the hashes. */
static pterun_status run_case(const rcase* c, const pterun_program* p, uint64_t* hashes) {
  pterun_method_options o = rb_opts();
  o.registry = g_use_reg;
  const pterun_data* files[1] = {g_data};
  o.data = files;
  o.data_count = 1;
  pterun_method* m = NULL;
  pterun_status st = pterun_method_load(p, c->method, &o, &m);
  for (int r = 0; r < ROUNDS && st == PTERUN_STATUS_OK; ++r) {
    st = rb_bind_inputs(m, c->dir, c->method);
    if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
    if (st == PTERUN_STATUS_OK) hashes[r] = rb_output_hash(m);
  }
  pterun_method_destroy(m);
  return st;
}

typedef struct job {
  int id;
  int own_programs; /* 1: load private programs; 0: share g_cases[].program */
  int failures;
} job;

static void* worker(void* arg) {
  job* j = arg;
  for (size_t step = 0; step < N_CASES; ++step) {
    const rcase* c = &g_cases[(step + (size_t)j->id * 5) % N_CASES]; /* threads start apart */
    pterun_program* p = c->program;
    if (j->own_programs) {
      pterun_load_options lo = rb_load_opts();
      if (pterun_program_load_file(model_path(c), j->id & 1 ? PTERUN_FILE_READ : PTERUN_FILE_MMAP,
                                   &lo, &p) != PTERUN_STATUS_OK) {
        ++j->failures;
        continue;
      }
    }
    uint64_t got[ROUNDS] = {0};
    pterun_status st = run_case(c, p, got);
    if (st != PTERUN_STATUS_OK || memcmp(got, c->want, sizeof got) != 0) {
      fprintf(stderr, "thread %d: %s.%s differs from the serial run (%s)\n", j->id, c->dir,
              c->method, pterun_status_name(st));
      ++j->failures;
    }
    if (j->own_programs) pterun_program_destroy(p);
  }
  return NULL;
}

static int run_threads(int own_programs) {
  pthread_t th[THREADS];
  job jobs[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    jobs[t].id = t;
    jobs[t].own_programs = own_programs;
    jobs[t].failures = 0;
    PT_CHECK(pthread_create(&th[t], NULL, worker, &jobs[t]) == 0);
  }
  int failures = 0;
  for (int t = 0; t < THREADS; ++t) {
    PT_CHECK(pthread_join(th[t], NULL) == 0);
    failures += jobs[t].failures;
  }
  PT_CHECK(failures == 0);
  return 0;
}

static int threads_serial_reference(void) {
  for (size_t k = 0; k < N_CASES; ++k) {
    pterun_load_options lo = rb_load_opts();
    PT_CHECK_STATUS(pterun_program_load_file(model_path(&g_cases[k]), PTERUN_FILE_MMAP, &lo,
                                             &g_cases[k].program),
                    PTERUN_STATUS_OK);
    PT_CHECK_STATUS(run_case(&g_cases[k], g_cases[k].program, g_cases[k].want), PTERUN_STATUS_OK);
  }
  return 0;
}

static int threads_methods_of_shared_programs(void) {
  return run_threads(0);
}
static int threads_private_programs(void) {
  return run_threads(1);
}

/* The default registry is created on first use; several threads race to
 * create it, to attach the optimiser and to add the same library
 * (idempotent), then load methods. */
static void* default_registry_worker(void* arg) {
  int* failures = arg;
  pterun_registry* r = pterun_registry_default();
  if (r == NULL ||
      pterun_registry_set_optimizer(r, pterun_optimizer_default()) != PTERUN_STATUS_OK ||
      pterun_registry_add(r, pterun_kernels_portable()) != PTERUN_STATUS_OK)
    ++*failures;
  else if (pterun_registry_provider(r, "aten::add.out") == NULL || pterun_registry_count(r) == 0)
    ++*failures;
  return NULL;
}

static int threads_default_registry(void) {
  pthread_t th[THREADS];
  int failures[THREADS] = {0};
  for (int t = 0; t < THREADS; ++t)
    PT_CHECK(pthread_create(&th[t], NULL, default_registry_worker, &failures[t]) == 0);
  for (int t = 0; t < THREADS; ++t) {
    PT_CHECK(pthread_join(th[t], NULL) == 0);
    PT_CHECK(failures[t] == 0);
  }
  g_use_reg = NULL; /* method loads now resolve through the default registry */
  PT_CHECK(run_threads(0) == 0);
  g_use_reg = g_reg;
  return 0;
}

int main(void) {
  int pt_failures = 0;
  if (rb_init()) return 1;
  g_use_reg = g_reg;
  if (pterun_data_load_file(rb_fixture("external_data/_default_external_constant.ptd"),
                            PTERUN_FILE_MMAP, NULL, &g_data) != PTERUN_STATUS_OK)
    return 1;
  PT_RUN(threads_serial_reference);
  PT_RUN(threads_methods_of_shared_programs);
  PT_RUN(threads_private_programs);
  PT_RUN(threads_default_registry);
  for (size_t k = 0; k < N_CASES; ++k) pterun_program_destroy(g_cases[k].program);
  pterun_data_destroy(g_data);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
