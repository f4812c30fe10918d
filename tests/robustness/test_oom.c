/* Out of memory: an allocator that fails on its Nth call, for every N, during
 * program loads (buffer copy, file read, file map), data loads and method
 * loads of every fixture. Each failure must be OUT_OF_MEMORY exactly, leave
 * nothing allocated, and a later attempt with memory must succeed. */
#include "tests/robustness/rb_common.h"

typedef struct counting {
  long calls;   /* allocations attempted */
  long fail_at; /* 1-based call that fails; 0: none */
  long live;    /* allocations not yet freed */
} counting;

static void* c_alloc(void* ctx, size_t size, size_t alignment) {
  counting* c = ctx;
  if (++c->calls == c->fail_at) return NULL;
  size_t r = (size + alignment - 1) & ~(alignment - 1);
  void* p = aligned_alloc(alignment, r ? r : alignment);
  if (p != NULL) ++c->live;
  return p;
}
static void c_free(void* ctx, void* p) {
  counting* c = ctx;
  if (p == NULL) return;
  --c->live;
  free(p);
}

static const char* kModels[] = {"elementwise",    "mlp",         "cnn",     "two_methods",
                                "mutable_buffer", "dynamic_dim", "sym_ops", "control_flow",
                                "external_data"};
#define N_MODELS (sizeof kModels / sizeof kModels[0])

static size_t g_cases;

typedef pterun_status (*load_fn)(const pterun_allocator* a, void** obj, void (**destroy)(void*));

static unsigned char* g_buf;
static size_t g_size;
static const char* g_path;

static void prog_destroy(void* p) {
  pterun_program_destroy(p);
}
static void data_destroy(void* d) {
  pterun_data_destroy(d);
}

static pterun_status load_prog_copy(const pterun_allocator* a, void** obj, void (**d)(void*)) {
  pterun_load_options lo = rb_load_opts();
  lo.allocator = a;
  lo.copy = 1;
  *d = prog_destroy;
  return pterun_program_load_buffer(g_buf, g_size, &lo, (pterun_program**)obj);
}
static pterun_status load_prog_borrow(const pterun_allocator* a, void** obj, void (**d)(void*)) {
  pterun_load_options lo = rb_load_opts();
  lo.allocator = a;
  *d = prog_destroy;
  return pterun_program_load_buffer(g_buf, g_size, &lo, (pterun_program**)obj);
}
static pterun_status load_prog_read(const pterun_allocator* a, void** obj, void (**d)(void*)) {
  pterun_load_options lo = rb_load_opts();
  lo.allocator = a;
  *d = prog_destroy;
  return pterun_program_load_file(g_path, PTERUN_FILE_READ, &lo, (pterun_program**)obj);
}
static pterun_status load_prog_mmap(const pterun_allocator* a, void** obj, void (**d)(void*)) {
  pterun_load_options lo = rb_load_opts();
  lo.allocator = a;
  *d = prog_destroy;
  return pterun_program_load_file(g_path, PTERUN_FILE_MMAP, &lo, (pterun_program**)obj);
}
static pterun_status load_data_copy(const pterun_allocator* a, void** obj, void (**d)(void*)) {
  pterun_load_options lo = rb_load_opts();
  lo.allocator = a;
  lo.copy = 1;
  *d = data_destroy;
  return pterun_data_load_buffer(g_buf, g_size, &lo, (pterun_data**)obj);
}
static pterun_status load_data_file(const pterun_allocator* a, void** obj, void (**d)(void*)) {
  pterun_load_options lo = rb_load_opts();
  lo.allocator = a;
  *d = data_destroy;
  return pterun_data_load_file(g_path, PTERUN_FILE_MMAP, &lo, (pterun_data**)obj);
}

/* Fails call 1, 2, ... until the load succeeds. */
static int every_n(load_fn load, const char* what) {
  for (long n = 1;; ++n) {
    counting c = {0, n, 0};
    pterun_allocator a = {&c, c_alloc, c_free};
    void* obj = NULL;
    void (*destroy)(void*) = NULL;
    pterun_status st = load(&a, &obj, &destroy);
    ++g_cases;
    if (c.calls < n) { /* the load needed fewer than n allocations: done */
      PT_CHECK_STATUS(st, PTERUN_STATUS_OK);
      destroy(obj);
      PT_CHECK(c.live == 0);
      return 0;
    }
    if (st != PTERUN_STATUS_OUT_OF_MEMORY) fprintf(stderr, "%s: failing call %ld\n", what, n);
    PT_CHECK_STATUS(st, PTERUN_STATUS_OUT_OF_MEMORY);
    PT_CHECK(obj == NULL);
    PT_CHECK(c.live == 0);
    PT_CHECK(n < 1000);
  }
}

static int oom_program_and_data_loads(void) {
  for (size_t k = 0; k < N_MODELS; ++k) {
    char rel[128];
    snprintf(rel, sizeof rel, "%s/model.pte", kModels[k]);
    g_path = rb_fixture(rel);
    g_buf = rb_read(g_path, &g_size);
    PT_CHECK(g_buf != NULL);
    PT_CHECK(every_n(load_prog_copy, g_path) == 0);
    PT_CHECK(every_n(load_prog_borrow, g_path) == 0);
    PT_CHECK(every_n(load_prog_read, g_path) == 0);
    PT_CHECK(every_n(load_prog_mmap, g_path) == 0);
    free(g_buf);
  }
  g_path = rb_fixture("external_data/_default_external_constant.ptd");
  g_buf = rb_read(g_path, &g_size);
  PT_CHECK(g_buf != NULL);
  PT_CHECK(every_n(load_data_copy, g_path) == 0);
  PT_CHECK(every_n(load_data_file, g_path) == 0);
  free(g_buf);
  return 0;
}

/* Method loads: the method's own allocator fails on call N; then the same
 * with the allocator inherited from the program (options->allocator NULL). */
static int oom_method_loads(void) {
  pterun_data* data = NULL;
  PT_CHECK_STATUS(pterun_data_load_file(rb_fixture("external_data/_default_external_constant.ptd"),
                                        PTERUN_FILE_MMAP, NULL, &data),
                  PTERUN_STATUS_OK);
  for (size_t k = 0; k < N_MODELS; ++k) {
    char rel[128];
    snprintf(rel, sizeof rel, "%s/model.pte", kModels[k]);
    for (int inherit = 0; inherit < 2; ++inherit) {
      for (long n = 1;; ++n) {
        counting c = {0, 0, 0};
        pterun_allocator a = {&c, c_alloc, c_free};
        pterun_load_options lo = rb_load_opts();
        if (inherit) lo.allocator = &a;
        pterun_program* p = NULL;
        PT_CHECK_STATUS(pterun_program_load_file(rb_fixture(rel), PTERUN_FILE_READ, &lo, &p),
                        PTERUN_STATUS_OK);
        c.fail_at = c.calls + n;
        long before = c.live;
        pterun_method_options o = rb_opts();
        if (!inherit) o.allocator = &a;
        const pterun_data* files[1] = {data};
        o.data = files;
        o.data_count = 1;
        o.scratch_bytes = 64;
        pterun_method* m = NULL;
        pterun_status st = pterun_method_load(p, "forward", &o, &m);
        ++g_cases;
        int done = c.calls < c.fail_at;
        if (done) {
          PT_CHECK_STATUS(st, PTERUN_STATUS_OK);
          // A method that loaded under pressure still runs correctly.
          PT_CHECK_STATUS(rb_bind_inputs(m, kModels[k], "forward"), PTERUN_STATUS_OK);
          PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
          pterun_method_destroy(m);
        } else {
          PT_CHECK_STATUS(st, PTERUN_STATUS_OUT_OF_MEMORY);
          PT_CHECK(m == NULL);
        }
        PT_CHECK(c.live == before);
        pterun_program_destroy(p);
        PT_CHECK(c.live == 0);
        if (done) break;
        PT_CHECK(n < 1000);
      }
    }
  }
  pterun_data_destroy(data);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  if (rb_init()) return 1;
  PT_RUN(oom_program_and_data_loads);
  PT_RUN(oom_method_loads);
  printf("  %zu out-of-memory cases\n", g_cases);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
