/* Fuzz target: bundled program (.bpte) load + verify, every query, then each
 * test suite run as `pterun verify` does, with a profiler attached (outputs
 * recorded) so the profiling path sees hostile programs too; the profiler's
 * requests must stay within what the file and its planned memory bound. */
#include "tests/fuzz/fuzz_common.h"

static void touch(const pterun_bundle_value* v) {
  volatile uint8_t sink = 0;
  for (size_t k = 0; v->data != NULL && k < v->nbytes; ++k) sink ^= ((const uint8_t*)v->data)[k];
  (void)sink;
}

/* The profiler's allocator: fz_alloc's cap, and the bytes it was asked for. */
static uint64_t g_prof_requested;
static void* prof_alloc(void* ctx, size_t size, size_t alignment) {
  g_prof_requested += size;
  return fz_alloc(ctx, size, alignment);
}
static const pterun_allocator prof_allocator = {NULL, prof_alloc, fz_free};

static void run_suite(const pterun_bundle* b, const pterun_program* p, size_t s, size_t cases,
                      size_t file_size) {
  const char* name = NULL;
  size_t mi;
  if (pterun_bundle_suite(b, s, &name, NULL) != PTERUN_STATUS_OK) abort();
  if (pterun_program_find_method(p, name, &mi) != PTERUN_STATUS_OK) return;
  pterun_profiler* prof = NULL;
  pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
  po.max_runs = 2;
  po.record_outputs = 1;
  po.allocator = &prof_allocator;
  g_prof_requested = 0;
  if (pterun_profiler_create(&po, &prof) != PTERUN_STATUS_OK) abort();
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  mo.registry = fz_registry();
  mo.logger = pterun_logger_silent();
  mo.instruction_budget = 2000;
  mo.scratch_bytes = PTERUN_NO_SCRATCH;
  mo.allocator = &fz_allocator;
  mo.profiler = prof;
  pterun_method* m = NULL;
  pterun_status st = pterun_method_load(p, name, &mo, &m);
  FZ_CHECK_STATUS(st);
  // What a profiler may ask for (issue 21 defect 7b: a 7.8 KB bundle made it
  // ask for 3.2 GB): its events, a few hundred bytes per instruction and kept
  // run (an instruction takes >= 4 bytes of the file), and the recorded
  // outputs' default budget, per kept run 4 x (planned memory + file).
  uint64_t planned = 0, sz;
  pterun_method_info info;
  if (pterun_program_method_info(p, mi, &info) != PTERUN_STATUS_OK) abort();
  for (size_t k = 0; k < info.planned_buffer_count; ++k)
    if (pterun_program_planned_buffer_size(p, mi, k, &sz) == PTERUN_STATUS_OK) planned += sz;
  if (g_prof_requested >
      po.max_runs * (4 * (planned + file_size) + 4096 + 128 * (uint64_t)file_size))
    FZ_FAIL("the profiler asked for more than its storage and output budget");
  for (size_t c = 0; st == PTERUN_STATUS_OK && c < cases && c < 4; ++c) {
    pterun_status r = pterun_bundle_set_inputs(b, s, c, m);
    FZ_CHECK_STATUS(r);
    if (r != PTERUN_STATUS_OK) continue;
    r = pterun_method_execute(m);
    FZ_CHECK_STATUS(r);
    if (r != PTERUN_STATUS_OK) continue;
    pterun_bundle_check chk;
    r = pterun_bundle_verify_outputs(b, s, c, m, PTERUN_BUNDLE_DEFAULT_RTOL,
                                     PTERUN_BUNDLE_DEFAULT_ATOL, &chk);
    FZ_CHECK_STATUS(r);
    if (r == PTERUN_STATUS_OK && strlen(chk.message) >= sizeof chk.message) abort();
  }
  for (size_t k = 0; k < pterun_profiler_event_count(prof); ++k) {
    pterun_profile_event ev;
    if (pterun_profiler_event(prof, k, &ev) != PTERUN_STATUS_OK) abort();
    volatile uint8_t sink = 0;
    for (size_t i = 0; ev.has_output && i < ev.output_nbytes; ++i)
      sink ^= ((const uint8_t*)ev.output_data)[i];
    (void)sink;
  }
  pterun_method_destroy(m);
  pterun_profiler_destroy(prof);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t* copy = fz_copy(data, size);
  if (copy == NULL) return 0;
  pterun_load_options o = fz_load_options();
  pterun_bundle* b = NULL;
  pterun_status st = pterun_bundle_load_buffer(copy, size, &o, &b);
  FZ_CHECK_STATUS(st);
  if (st == PTERUN_STATUS_OK) {
    pterun_program* p = NULL;
    size_t n = pterun_bundle_suite_count(b);
    for (size_t s = 0; s <= n; ++s) {
      const char* name = NULL;
      size_t cases = 0, nin = 0, nout = 0;
      st = pterun_bundle_suite(b, s, &name, &cases);
      FZ_CHECK_STATUS(st);
      if (st != PTERUN_STATUS_OK) continue;
      if (strlen(name) > size) abort();
      for (size_t c = 0; c < cases && c < 8; ++c) {
        if (pterun_bundle_case(b, s, c, &nin, &nout) != PTERUN_STATUS_OK) abort();
        for (int io = 0; io < 2; ++io)
          for (size_t k = 0; k <= (io ? nout : nin); ++k) {
            pterun_bundle_value v;
            st = pterun_bundle_value_get(b, s, c, io, k, &v);
            FZ_CHECK_STATUS(st);
            if (st == PTERUN_STATUS_OK) touch(&v);
          }
      }
    }
    st = pterun_bundle_program(b, &o, &p);
    FZ_CHECK_STATUS(st);
    for (size_t s = 0; st == PTERUN_STATUS_OK && s < n && s < 4; ++s) {
      size_t cases = 0;
      if (pterun_bundle_suite(b, s, NULL, &cases) != PTERUN_STATUS_OK) abort();
      run_suite(b, p, s, cases, size);
    }
    pterun_program_destroy(p);
    pterun_bundle_destroy(b);
  }
  free(copy);
  return 0;
}
