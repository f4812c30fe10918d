/* Memory sized from a file is bounded by what the file can hold (issue 21
 * defect 7b). A program, a method and a profiler recording outputs are
 * loaded with one allocator that records every request (also the ones it
 * refuses: a request above RB_REFUSE is refused without being made) and the
 * peak of live bytes plus the request. The peak must stay within
 *
 *   planned + 4 x max_runs x (planned + file bytes)
 *           + RB_FILE_FACTOR x file bytes + RB_SLACK
 *
 * planned: the planned buffers the program declares (its working memory, which
 * the caller sees before loading and caps with its allocator); the second
 * term is the default budget of the profiler's recorded outputs; the file
 * factor covers the runtime structures, folded constants (at most twice the
 * file) and packed weights. Crafted files (tools/export_fuzz_regressions.py) name
 * one large planned tensor from many instructions: before the fix,
 * profiler_output_bomb.pte (6.8 KB) asked for 1.2 GB per kept run and
 * fold_bomb.pte (13 KB) folded 60 MB. Every fixture is held to the same bound. */
#include "tests/robustness/rb_common.h"

#define RB_REFUSE ((size_t)1 << 30)
#define RB_FILE_FACTOR 64u
#define RB_SLACK ((uint64_t)256 << 10)
#define RB_MAX_LIVE 4096

typedef struct tracking {
  size_t live, peak, largest;
  size_t count;
  void* ptr[RB_MAX_LIVE];
  size_t size[RB_MAX_LIVE];
} tracking;

static void* t_alloc(void* ctx, size_t size, size_t alignment) {
  tracking* t = ctx;
  if (size > t->largest) t->largest = size;
  if (t->live + size > t->peak) t->peak = t->live + size;
  if (size > RB_REFUSE || t->count == RB_MAX_LIVE) return NULL;
  size_t r = (size + alignment - 1) & ~(alignment - 1);
  void* p = aligned_alloc(alignment, r ? r : alignment);
  if (p == NULL) return NULL;
  t->ptr[t->count] = p;
  t->size[t->count++] = size;
  t->live += size;
  return p;
}
static void t_free(void* ctx, void* p) {
  tracking* t = ctx;
  for (size_t k = 0; k < t->count; ++k)
    if (t->ptr[k] == p) {
      t->live -= t->size[k];
      t->ptr[k] = t->ptr[--t->count];
      t->size[k] = t->size[t->count];
      free(p);
      return;
    }
  abort(); /* freed what this allocator did not give */
}

/* Loads every method of `path` (planned buffers by pterun, no scratch arena,
 * a profiler keeping `runs` executes with their outputs) and checks the peak;
 * counts the methods that loaded in *checked. */
static int check_file(const char* path, uint32_t runs, int* checked) {
  static tracking t;
  memset(&t, 0, sizeof t);
  pterun_allocator a = {&t, t_alloc, t_free};
  pterun_load_options lo = rb_load_opts();
  lo.allocator = &a;
  pterun_program* p = NULL;
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_READ, &lo, &p), PTERUN_STATUS_OK);
  FILE* f = fopen(path, "rb");
  PT_CHECK(f != NULL);
  fseek(f, 0, SEEK_END);
  uint64_t file_bytes = (uint64_t)ftell(f);
  fclose(f);
  for (size_t mi = 0; mi < pterun_program_method_count(p); ++mi) {
    const char* name = pterun_program_method_name(p, mi);
    pterun_method_info info;
    PT_CHECK_STATUS(pterun_program_method_info(p, mi, &info), PTERUN_STATUS_OK);
    uint64_t planned = 0;
    for (size_t b = 0; b < info.planned_buffer_count; ++b) {
      uint64_t sz;
      PT_CHECK_STATUS(pterun_program_planned_buffer_size(p, mi, b, &sz), PTERUN_STATUS_OK);
      planned += sz;
    }
    pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
    po.max_runs = runs;
    po.record_outputs = 1;
    po.allocator = &a;
    pterun_profiler* prof;
    PT_CHECK_STATUS(pterun_profiler_create(&po, &prof), PTERUN_STATUS_OK);
    pterun_method_options o = rb_opts();
    o.allocator = &a;
    o.scratch_bytes = PTERUN_NO_SCRATCH;
    o.profiler = prof;
    pterun_method* m = NULL;
    pterun_status st = pterun_method_load(p, name, &o, &m);
    uint64_t bound = planned + 4 * (uint64_t)runs * (planned + file_bytes) +
                     RB_FILE_FACTOR * file_bytes + RB_SLACK;
    if (t.peak > bound || t.largest >= RB_REFUSE) {
      fprintf(stderr,
              "%s: %s: peak %zu bytes (largest request %zu) > bound %llu (planned %llu, file "
              "%llu, %u runs)\n",
              path, name, t.peak, t.largest, (unsigned long long)bound, (unsigned long long)planned,
              (unsigned long long)file_bytes, runs);
      return 1;
    }
    if (st == PTERUN_STATUS_OK) ++*checked;
    pterun_method_destroy(m);
    pterun_profiler_destroy(prof);
    t.peak = t.live; /* the next method starts from what is still held */
    t.largest = 0;
  }
  pterun_program_destroy(p);
  PT_CHECK(t.live == 0);
  return 0;
}

static const char* robustness_file(const char* name) {
  static char path[512];
  snprintf(path, sizeof path, "%s/../robustness/data/%s", PTERUN_FIXTURES_DIR, name);
  return path;
}

static int crafted_files_are_bounded(void) {
  int checked = 0;
  for (uint32_t runs = 1; runs <= 2; ++runs) {
    PT_CHECK(check_file(robustness_file("profiler_output_bomb.pte"), runs, &checked) == 0);
    PT_CHECK(check_file(robustness_file("fold_bomb.pte"), runs, &checked) == 0);
  }
  PT_CHECK(checked == 4); /* every load succeeded, within the bound */
  return 0;
}

/* The bombs still run right: the profiler drops the outputs past its budget
 * (counted), the folds past theirs run at execute. */
static int crafted_files_run(void) {
  pterun_load_options lo = rb_load_opts();
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(robustness_file("profiler_output_bomb.pte"),
                                           PTERUN_FILE_READ, &lo, &p),
                  PTERUN_STATUS_OK);
  pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
  po.max_runs = 1;
  po.record_outputs = 1;
  pterun_profiler* prof;
  PT_CHECK_STATUS(pterun_profiler_create(&po, &prof), PTERUN_STATUS_OK);
  pterun_method_options o = rb_opts();
  o.profiler = prof;
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  static float x[1024 * 2048];
  for (size_t k = 0; k < 1024 * 2048; ++k) x[k] = (float)((int)(k % 7) - 3);
  int64_t sizes[2] = {1024, 2048};
  pterun_tensor_view v = {PTERUN_DTYPE_F32, 2, sizes, NULL, x, sizeof x};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  const float* y = out->u.tensor->data;
  for (size_t k = 0; k < 1024 * 2048; ++k) PT_CHECK(y[k] == (x[k] > 0 ? x[k] : 0));
  uint64_t dropped_events, dropped_outputs;
  pterun_profiler_dropped(prof, &dropped_events, &dropped_outputs);
  // Budget: 4 x (planned 16 MiB + file) for the one kept run = eight of the
  // 150 outputs of 8 MiB.
  PT_CHECK(dropped_events == 0 && dropped_outputs == 142);
  pterun_method_destroy(m);
  pterun_profiler_destroy(prof);
  pterun_program_destroy(p);

  PT_CHECK_STATUS(
      pterun_program_load_file(robustness_file("fold_bomb.pte"), PTERUN_FILE_READ, &lo, &p),
      PTERUN_STATUS_OK);
  o = rb_opts();
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  static float x2[1024 * 256];
  for (size_t k = 0; k < 1024 * 256; ++k) x2[k] = (float)k;
  int64_t s2[2] = {1024, 256};
  v = (pterun_tensor_view){PTERUN_DTYPE_F32, 2, s2, NULL, x2, sizeof x2};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  y = out->u.tensor->data;
  for (size_t k = 0; k < 1024 * 256; ++k) PT_CHECK(y[k] == x2[k] + (float)(k % 256));
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return 0;
}

static int fixtures_are_bounded(void) {
  static const char* kModels[] = {"elementwise",    "mlp",         "cnn",       "two_methods",
                                  "mutable_buffer", "dynamic_dim", "sym_ops",   "control_flow",
                                  "lstm",           "resnet",      "mobilenet", "linear_bn",
                                  "conv_bn_edges",  "gpt",         "norm_rows"};
  int checked = 0;
  for (size_t k = 0; k < sizeof kModels / sizeof kModels[0]; ++k) {
    char rel[128];
    snprintf(rel, sizeof rel, "%s/model.pte", kModels[k]);
    PT_CHECK(check_file(rb_fixture(rel), 2, &checked) == 0);
  }
  PT_CHECK(checked >= 15);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  if (rb_init()) return 1;
  PT_RUN(crafted_files_are_bounded);
  PT_RUN(crafted_files_run);
  PT_RUN(fixtures_are_bounded);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
