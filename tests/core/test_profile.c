/* The profiler: attached at load, counts and times every kernel call,
 * keeps events of the first executes, records outputs on request, reports
 * kernels' slow paths; a method without one is unaffected. */
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "src/core/fb.h"
#include "tests/harness/pt_test.h"

static pterun_registry* g_reg;
static pterun_logger g_silent;

static int load(const char* rel, pterun_program** p) {
  char path[1024];
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
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
  pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
  po.max_runs = 2;
  po.record_outputs = 1;
  void* bufs[8] = {0};
  PT_CHECK(load("mobilenet/model.pte", &p) == 0);
  PT_CHECK_STATUS(pterun_profiler_create(&po, &prof), PTERUN_STATUS_OK);
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
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

/* Reads a whole file into malloc'd memory. */
static uint8_t* slurp(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* d = len > 0 ? malloc((size_t)len) : NULL;
  if (d != NULL && fread(d, 1, (size_t)len, f) != (size_t)len) {
    free(d);
    d = NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return d;
}

/* The ETDump is a size-prefixed ED00 FlatBuffer whose runs hold one
 * profile event per kernel call plus Method::execute, and (with outputs)
 * debug events whose tensors point into the debug buffer. Structure checked
 * with pterun's own reader; the Python tests load it with ExecuTorch's
 * Inspector. */
static int etdump_structure(void) {
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  pterun_profiler* prof = NULL;
  pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
  po.max_runs = 4;
  po.record_outputs = 1;
  void* bufs[8] = {0};
  PT_CHECK(load("mobilenet/model.pte", &p) == 0);
  PT_CHECK_STATUS(pterun_profiler_create(&po, &prof), PTERUN_STATUS_OK);
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  mo.registry = g_reg;
  mo.logger = g_silent;
  mo.profiler = prof;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &mo, &m), PTERUN_STATUS_OK);
  PT_CHECK(pterun_method_profiler(m) == prof);
  char etd[] = "/tmp/pterun_etdump_XXXXXX", dbg[] = "/tmp/pterun_debug_XXXXXX";
  int fd1 = mkstemp(etd), fd2 = mkstemp(dbg);
  PT_CHECK(fd1 >= 0 && fd2 >= 0);
  pterun_etdump_options eo = PTERUN_ETDUMP_OPTIONS_INIT;
  eo.debug_buffer_path = dbg;
  PT_CHECK_STATUS(pterun_etdump_write(prof, etd, &eo), PTERUN_STATUS_INVALID_STATE); /* no run */
  for (int r = 0; r < 2; ++r) {
    PT_CHECK(bind_zeros(p, m, bufs) == 0);
    PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  }
  eo.max_bytes = 512; /* the builder's bound holds */
  PT_CHECK_STATUS(pterun_etdump_write(prof, etd, &eo), PTERUN_STATUS_OUT_OF_MEMORY);
  eo.max_bytes = 0;
  PT_CHECK_STATUS(pterun_etdump_write(prof, etd, &eo), PTERUN_STATUS_OK);
  size_t n = 0, nd = 0, kernels = pterun_profiler_event_count(prof) / 2;
  uint8_t* d = slurp(etd, &n);
  uint8_t* db = slurp(dbg, &nd);
  PT_CHECK(d != NULL && db != NULL && n > 16);
  PT_CHECK(pt_rd_u32(d) == n - 4 && memcmp(d + 8, "ED00", 4) == 0);
  /* Size-prefixed: the whole file is aligned (8-byte vectors sit at file
   * offsets that are multiples of 8), the root offset is at byte 4. */
  pt_fb_buf fb = {d, n};
  pt_fb_table root, run, ev, pe, de, val, ten;
  pt_fb_vec runs, events, sizes;
  PT_CHECK(pt_fb_table_at(&fb, 4 + pt_rd_u32(d + 4), &root));
  PT_CHECK(pt_fb_get_vector(&root, 6, 4, &runs) == 1 && runs.len == 2);
  PT_CHECK(pt_fb_vec_table(&runs, 1, &run));
  const char* s;
  uint32_t sl;
  PT_CHECK(pt_fb_get_string(&run, 4, &s, &sl) == 1 && strcmp(s, "Execute") == 0);
  PT_CHECK(pt_fb_get_vector(&run, 10, 4, &events) == 1);
  PT_CHECK(events.len == 2 * kernels + 1); /* profile + debug per call, Method::execute */
  size_t debug_seen = 0;
  for (uint32_t k = 0; k < events.len; ++k) {
    PT_CHECK(pt_fb_vec_table(&events, k, &ev));
    if (pt_fb_get_table(&ev, 4, &pe) == 1) {
      PT_CHECK(pt_fb_get_string(&pe, 4, &s, &sl) == 1);
      PT_CHECK(strncmp(s, "native_call_", 12) == 0 || strcmp(s, "Method::execute") == 0);
      PT_CHECK(pt_fb_u64(&pe, 16, 0) <= pt_fb_u64(&pe, 18, 0));
      continue;
    }
    PT_CHECK(pt_fb_get_table(&ev, 8, &de) == 1 && pt_fb_get_table(&de, 8, &val) == 1);
    PT_CHECK(pt_fb_u8(&val, 4, 0) == 5 && pt_fb_get_table(&val, 6, &ten) == 1);
    PT_CHECK(pt_fb_get_vector(&ten, 6, 8, &sizes) == 1);
    uint64_t numel = 1, off = pt_fb_u64(&ten, 10, UINT64_MAX);
    for (uint32_t k2 = 0; k2 < sizes.len; ++k2) numel *= (uint64_t)pt_fb_vec_i64(&sizes, k2);
    PT_CHECK(pt_fb_i8(&ten, 4, 0) == PTERUN_DTYPE_F32 && off % 64 == 0 && off + 4 * numel <= nd);
    debug_seen++;
  }
  PT_CHECK(debug_seen == kernels);
  free(d);
  free(db);
  remove(etd);
  remove(dbg);
  pterun_method_destroy(m);
  pterun_profiler_destroy(prof);
  pterun_program_destroy(p);
  for (int i = 0; i < 8; ++i) free(bufs[i]);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  PT_RUN(profile_counts_and_events);
  PT_RUN(etdump_structure);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
