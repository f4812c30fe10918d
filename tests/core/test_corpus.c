/* The three ExecuTorch sample programs of the shared corpus: load (buffer,
 * mmap, read), inspect and run with known results (pte-format.md §7). */
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static pterun_registry* g_reg;

static int run_one(const char* file, pterun_file_mode mode, const float* x, const float* y,
                   const float* want, size_t n, int two_inputs) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", PTERUN_CORPUS_DIR, file);
  pterun_program* p = NULL;
  PT_CHECK_STATUS(pterun_program_load_file(path, mode, NULL, &p), PTERUN_STATUS_OK);
  PT_CHECK(pterun_program_method_count(p) == 1);
  PT_CHECK(strcmp(pterun_program_method_name(p, 0), "forward") == 0);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  pterun_method* m = NULL;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  PT_CHECK(pterun_method_input_count(m) == (two_inputs ? 2u : 1u));
  int64_t sizes[2] = {(int64_t)n, 0};
  pterun_io_info info;
  PT_CHECK_STATUS(pterun_program_method_input(p, 0, 0, &info), PTERUN_STATUS_OK);
  int64_t shp[2] = {info.sizes[0], info.sizes[1]};
  const int64_t* use = info.rank == 2 ? shp : sizes;
  pterun_tensor_view vx = {PTERUN_DTYPE_F32, info.rank, use, NULL, (void*)x, n * sizeof(float)};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &vx), PTERUN_STATUS_OK);
  if (two_inputs) {
    pterun_tensor_view vy = {PTERUN_DTYPE_F32, 1, sizes, NULL, (void*)y, n * sizeof(float)};
    PT_CHECK_STATUS(pterun_method_set_input(m, 1, &vy), PTERUN_STATUS_OK);
  }
  for (int rep = 0; rep < 2; ++rep) {
    // Planned inputs whose memory the plan reuses must be set before every run.
    PT_CHECK_STATUS(pterun_method_set_input(m, 0, &vx), PTERUN_STATUS_OK);
    PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
    const pterun_value* out;
    PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
    PT_CHECK(out->tag == PTERUN_VALUE_TENSOR);
    PT_CHECK((size_t)out->u.tensor->numel == n);
    for (size_t i = 0; i < n; ++i) PT_CHECK(((const float*)out->u.tensor->data)[i] == want[i]);
  }
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return 0;
}

static int corpus_add_no_extended_header(void) {
  float x[1] = {1.5f}, y[1] = {2.25f}, want[1] = {3.75f};
  PT_CHECK(run_one("add_no_extended_header.pte", PTERUN_FILE_MMAP, x, y, want, 1, 1) == 0);
  return run_one("add_no_extended_header.pte", PTERUN_FILE_READ, x, y, want, 1, 1);
}

static int corpus_add_constant_segment(void) {
  float x[3] = {1, -2, 0.5f}, want[3] = {2, -1, 1.5f};
  return run_one("add_constant_segment.pte", PTERUN_FILE_MMAP, x, NULL, want, 3, 0);
}

static int corpus_mul_add_constant_buffer(void) {
  float x[4] = {1, 2, 3, -1}, want[4] = {5, 8, 11, -1};
  return run_one("mul_add_constant_buffer.pte", PTERUN_FILE_READ, x, NULL, want, 4, 0);
}

static int corpus_info(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", PTERUN_CORPUS_DIR, "add_constant_segment.pte");
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_MMAP, NULL, &p), PTERUN_STATUS_OK);
  pterun_program_info info;
  pterun_program_get_info(p, &info);
  PT_CHECK(info.has_extended_header);
  PT_CHECK(info.program_size == 1040);
  PT_CHECK(info.segment_base_offset == 1152);
  PT_CHECK(info.segment_data_size == 4);
  PT_CHECK(info.constant_count == 1);
  PT_CHECK(!info.legacy_constant_buffer);
  pterun_method_info mi;
  PT_CHECK_STATUS(pterun_program_method_info(p, 0, &mi), PTERUN_STATUS_OK);
  PT_CHECK(mi.input_count == 1 && mi.output_count == 1 && mi.operator_count == 1 &&
           mi.instruction_count == 1);
  PT_CHECK(mi.planned_buffer_count == 1);
  uint64_t sz;
  PT_CHECK_STATUS(pterun_program_planned_buffer_size(p, 0, 0, &sz), PTERUN_STATUS_OK);
  PT_CHECK(sz == 32);
  const char *name, *ov;
  PT_CHECK_STATUS(pterun_program_method_operator(p, 0, 0, &name, &ov), PTERUN_STATUS_OK);
  PT_CHECK(strcmp(name, "aten::add") == 0 && strcmp(ov, "out") == 0);
  pterun_program_destroy(p);
  snprintf(path, sizeof path, "%s/%s", PTERUN_CORPUS_DIR, "mul_add_constant_buffer.pte");
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_MMAP, NULL, &p), PTERUN_STATUS_OK);
  pterun_program_get_info(p, &info);
  PT_CHECK(!info.has_extended_header && info.legacy_constant_buffer && info.constant_count == 2);
  pterun_program_destroy(p);
  return 0;
}

/* A caller-supplied planned buffer and the missing-operator report. */
static int corpus_caller_memory_and_missing_ops(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", PTERUN_CORPUS_DIR, "mul_add_constant_buffer.pte");
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_READ, NULL, &p), PTERUN_STATUS_OK);
  _Alignas(64) static unsigned char arena[32];
  void* bufs[1] = {arena};
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  o.planned_buffers = bufs;
  o.planned_buffer_count = 1;
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  size_t rt, planned;
  pterun_method_memory(m, &rt, &planned);
  PT_CHECK(planned == 0 && rt > 0);
  int64_t s[2] = {2, 2};
  float x[4] = {1, 1, 1, 1};
  pterun_tensor_view v = {PTERUN_DTYPE_F32, 2, s, NULL, x, sizeof x};
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE); /* input not set */
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  PT_CHECK(((float*)arena)[0] == 5.0f);
  // The output reused the input's memory: a second run without setting the
  // input again is refused instead of computing on stale bytes.
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
  pterun_method_destroy(m);
  // A registry with only prim ops: both operators are missing, named at once.
  pterun_registry* bare;
  PT_CHECK_STATUS(pterun_registry_create(NULL, NULL, &bare), PTERUN_STATUS_OK);
  pterun_logger silent = pterun_logger_silent();
  o.registry = bare;
  o.planned_buffers = NULL;
  o.planned_buffer_count = 0;
  o.logger = silent;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OPERATOR_MISSING);
  PT_CHECK(m == NULL);
  PT_CHECK_STATUS(pterun_method_load(p, "nope", &o, &m), PTERUN_STATUS_NOT_FOUND);
  pterun_registry_destroy(bare);
  pterun_program_destroy(p);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  if (pterun_registry_create(NULL, NULL, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  PT_RUN(corpus_info);
  PT_RUN(corpus_add_no_extended_header);
  PT_RUN(corpus_add_constant_segment);
  PT_RUN(corpus_mul_add_constant_buffer);
  PT_RUN(corpus_caller_memory_and_missing_ops);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
