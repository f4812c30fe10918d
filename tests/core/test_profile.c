/* The profiler: attached at load, counts and times every kernel call,
 * keeps events of the first executes, records outputs on request, reports
 * kernels' slow paths; a method without one is unaffected. */
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static pterun_registry* g_reg;
static pterun_logger g_silent;

static int load(const char* rel, pterun_program** p) {
  char path[1024];
  pterun_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.logger = g_silent;
  snprintf(path, sizeof path, "%s/%s", PTERUN_FIXTURES_DIR, rel);
  return pterun_program_load_file(path, PTERUN_FILE_MMAP, &lo, p) != PTERUN_STATUS_OK;
}

/* Binds zeros of every tensor input's static shape (memory in *bufs). */
static int bind_zeros(const pterun_program* p, pterun_method* m, void** bufs) {
  for (size_t i = 0; i < pterun_method_input_count(m); ++i) {
    pterun_io_info io;
    if (pterun_program_method_input(p, 0, i, &io) != PTERUN_STATUS_OK) return 1;
    if (bufs[i] == NULL) bufs[i] = calloc(1, io.nbytes ? io.nbytes : 1);
    pterun_tensor_view v = {io.dtype, io.rank, io.sizes, io.dim_order, bufs[i], io.nbytes};
    if (pterun_method_set_input(m, i, &v) != PTERUN_STATUS_OK) return 1;
  }
  return 0;
}

static int profile_counts_and_events(void) {
  pterun_program* p = NULL;
  pterun_method *m = NULL, *m2 = NULL;
  pterun_profiler* prof = NULL;
  pterun_profiler_options po = {2, 1};
  void* bufs[8] = {0};
  PT_CHECK(load("mobilenet/model.pte", &p) == 0);
  PT_CHECK_STATUS(pterun_profiler_create(&po, &prof), PTERUN_STATUS_OK);
  pterun_method_options mo;
  memset(&mo, 0, sizeof mo);
  mo.registry = g_reg;
  mo.logger = g_silent;
  mo.profiler = prof;
  mo.scratch_bytes = PTERUN_NO_SCRATCH; /* kernels report their slow paths */
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &mo, &m), PTERUN_STATUS_OK);
  /* one profiler, one method */
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &mo, &m2), PTERUN_STATUS_INVALID_STATE);
  PT_CHECK(strcmp(pterun_profiler_method_name(prof), "forward") == 0);
  for (int r = 0; r < 3; ++r) {
    PT_CHECK(bind_zeros(p, m, bufs) == 0);
    PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  }
  PT_CHECK(pterun_profiler_execute_count(prof) == 3);
  PT_CHECK(pterun_profiler_run_count(prof) == 2);
  size_t n = pterun_profiler_instruction_count(prof), kernels = 0, slow = 0;
  PT_CHECK(n > 0);
  for (size_t i = 0; i < n; ++i) {
    pterun_profile_instruction e;
    PT_CHECK_STATUS(pterun_profiler_instruction(prof, i, &e), PTERUN_STATUS_OK);
    if (e.op_name == NULL) {
      PT_CHECK(e.calls == 0);
      continue;
    }
    kernels++;
    PT_CHECK(e.calls == 3);
    PT_CHECK(e.min_ns <= e.max_ns && e.total_ns >= 3 * e.min_ns && e.total_ns <= 3 * e.max_ns);
    if (e.slow_path != NULL) {
      PT_CHECK(strstr(e.slow_path, "no scratch") != NULL);
      slow++;
    }
  }
  PT_CHECK(slow > 0);
  /* events: every kernel call of the 2 kept runs, in time order */
  PT_CHECK(pterun_profiler_event_count(prof) == 2 * kernels);
  pterun_profile_event last;
  uint64_t prev = 0, rs, re;
  for (size_t k = 0; k < pterun_profiler_event_count(prof); ++k) {
    PT_CHECK_STATUS(pterun_profiler_event(prof, k, &last), PTERUN_STATUS_OK);
    PT_CHECK(last.start_ns >= prev && last.end_ns >= last.start_ns);
    PT_CHECK_STATUS(pterun_profiler_run(prof, last.run, &rs, &re), PTERUN_STATUS_OK);
    PT_CHECK(rs <= last.start_ns && last.end_ns <= re);
    prev = last.end_ns;
  }
  PT_CHECK_STATUS(pterun_profiler_event(prof, 1u << 30, &last), PTERUN_STATUS_NOT_FOUND);
  /* the last kernel's recorded output is the method's output */
  const pterun_value* out = NULL;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(last.has_output && last.output_nbytes == out->u.tensor->nbytes);
  PT_CHECK(memcmp(last.output_data, out->u.tensor->data, last.output_nbytes) == 0);
  char trace[] = "/tmp/pterun_trace_XXXXXX";
  int fd = mkstemp(trace);
  PT_CHECK(fd >= 0);
  PT_CHECK_STATUS(pterun_profiler_write_chrome_trace(prof, trace), PTERUN_STATUS_OK);
  FILE* f = fopen(trace, "r");
  char head[32] = {0};
  PT_CHECK(f != NULL && fread(head, 1, 16, f) == 16);
  fclose(f);
  remove(trace);
  PT_CHECK(strncmp(head, "{\"displayTimeUnit", 16) == 0);
  pterun_method_destroy(m);
  /* results outlive the method */
  PT_CHECK(pterun_profiler_execute_count(prof) == 3);
  pterun_profiler_reset(prof);
  PT_CHECK(pterun_profiler_event_count(prof) == 0 && pterun_profiler_run_count(prof) == 0);
  pterun_profiler_destroy(prof);
  pterun_program_destroy(p);
  for (int i = 0; i < 8; ++i) free(bufs[i]);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(&g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  PT_RUN(profile_counts_and_events);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
