/* Memory before load (pterun_program_method_memory, a trial load through a
 * counting allocator) equals what the load then reports
 * (pterun_method_memory_parts / pterun_method_memory), part by part, on
 * fixtures whose kernels prepare state at load: fp32 packed weights (mlp),
 * batch norm folded into convolutions (mobilenet_bn), int8 (quantized_cnn),
 * low-bit (lowbit/tfm_4bit) and an XNNPACK delegate (xnnpack/dyn_mlp); with
 * fusion and preparation off too, with caller planned buffers (left
 * untouched), and with an older caller's smaller struct. */
#include <stdlib.h>
#include <string.h>

#include "pterun/optimize.h"
#include "pterun/backends/xnnpack.h"
#include "pterun/kernels/lowbit.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/quantized.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static int pt_failures;
static pterun_logger g_silent;
static pterun_registry* g_reg;

static const char* fixture(const char* rel) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", PTERUN_FIXTURES_DIR, rel);
  return path;
}

static pterun_program* open_fixture(const char* rel) {
  pterun_program* p = NULL;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  return pterun_program_load_file(fixture(rel), PTERUN_FILE_MMAP, &lo, &p) == PTERUN_STATUS_OK
             ? p
             : NULL;
}

static pterun_method_options method_options(void) {
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  o.logger = g_silent;
  return o;
}

/* The trial's figures equal the real load's; returns the prepared bytes. */
static int same_as_load(pterun_program* p, const pterun_method_options* o, const char* what,
                        size_t* prepared, size_t* delegate) {
  pterun_method_memory_info before = PTERUN_METHOD_MEMORY_INFO_INIT;
  pterun_method_memory_info after = PTERUN_METHOD_MEMORY_INFO_INIT;
  PT_CHECK_STATUS(pterun_program_method_memory(p, "forward", o, &before), PTERUN_STATUS_OK);
  pterun_method* m = NULL;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", o, &m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_memory_parts(m, &after), PTERUN_STATUS_OK);
  size_t rt = 0, pl = 0;
  pterun_method_memory(m, &rt, &pl);
  pterun_method_destroy(m);
  if (before.runtime_bytes != after.runtime_bytes || before.planned_bytes != after.planned_bytes ||
      before.prepared_bytes != after.prepared_bytes ||
      before.delegate_bytes != after.delegate_bytes || before.folded_bytes != after.folded_bytes ||
      before.scratch_bytes != after.scratch_bytes) {
    fprintf(stderr, "%s: before load %zu/%zu/%zu/%zu, after %zu/%zu/%zu/%zu\n", what,
            before.runtime_bytes, before.planned_bytes, before.prepared_bytes,
            before.delegate_bytes, after.runtime_bytes, after.planned_bytes, after.prepared_bytes,
            after.delegate_bytes);
    return 1;
  }
  PT_CHECK(after.runtime_bytes == rt && after.planned_bytes == pl);
  // The parts are parts of runtime_bytes; the trial's peak covers what stays.
  PT_CHECK(before.prepared_bytes + before.delegate_bytes + before.folded_bytes +
               before.scratch_bytes <=
           before.runtime_bytes);
  PT_CHECK(before.load_peak_bytes >= before.runtime_bytes + before.planned_bytes);
  PT_CHECK(after.load_peak_bytes == 0);
  fprintf(stderr,
          "%s: %zu runtime (%zu prepared, %zu delegate, %zu folded, %zu scratch), %zu planned, "
          "load peak %zu\n",
          what, before.runtime_bytes, before.prepared_bytes, before.delegate_bytes,
          before.folded_bytes, before.scratch_bytes, before.planned_bytes, before.load_peak_bytes);
  if (prepared) *prepared = before.prepared_bytes;
  if (delegate) *delegate = before.delegate_bytes;
  return 0;
}

static int before_load_equals_after(void) {
  static const struct {
    const char* rel;
    int delegate; /* 1: its memory is held by a delegate backend */
  } cases[] = {{"mlp/model.pte", 0},
               {"mobilenet_bn/model.pte", 0},
               {"quantized_cnn/model.pte", 0},
               {"lowbit/tfm_4bit/model.pte", 0},
               {"xnnpack/dyn_mlp/model.pte", 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    pterun_program* p = open_fixture(cases[c].rel);
    PT_CHECK(p != NULL);
    pterun_method_options o = method_options();
    size_t prepared = 0, delegate = 0, unprepared = 0;
    if (same_as_load(p, &o, cases[c].rel, &prepared, &delegate)) return 1;
    PT_CHECK(cases[c].delegate ? delegate > 0 : prepared > 0);
    o.no_fusion = 1;
    o.no_kernel_prepare = 1;
    if (same_as_load(p, &o, cases[c].rel, &unprepared, NULL)) return 1;
    PT_CHECK(unprepared == 0);
    pterun_program_destroy(p);
  }
  return 0;
}

/* Caller planned buffers: the trial loads into its own, so the caller's
 * bytes stay as they were; pterun owns no planned bytes either way. */
static int caller_buffers_untouched(void) {
  pterun_program* p = open_fixture("mlp/model.pte");
  PT_CHECK(p != NULL);
  size_t index = 0;
  pterun_method_info mi;
  PT_CHECK_STATUS(pterun_program_find_method(p, "forward", &index), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_program_method_info(p, index, &mi), PTERUN_STATUS_OK);
  PT_CHECK(mi.planned_buffer_count >= 1 && mi.planned_buffer_count <= 4);
  void* bufs[4] = {NULL, NULL, NULL, NULL};
  size_t sizes[4] = {0, 0, 0, 0};
  for (size_t k = 0; k < mi.planned_buffer_count; ++k) {
    uint64_t size = 0;
    PT_CHECK_STATUS(pterun_program_planned_buffer_size(p, index, k, &size), PTERUN_STATUS_OK);
    sizes[k] = (size_t)size;
    bufs[k] = aligned_alloc(64, ((size_t)size + 64) / 64 * 64);
    PT_CHECK(bufs[k] != NULL);
    memset(bufs[k], 0xA5, (size_t)size);
  }
  pterun_method_options o = method_options();
  o.planned_buffers = bufs;
  o.planned_buffer_count = mi.planned_buffer_count;
  o.planned_buffer_sizes = sizes;
  if (same_as_load(p, &o, "mlp, caller planned buffers", NULL, NULL)) return 1;
  // same_as_load's real load may write them; the trial alone must not.
  for (size_t k = 0; k < mi.planned_buffer_count; ++k) memset(bufs[k], 0xA5, sizes[k]);
  pterun_method_memory_info info = PTERUN_METHOD_MEMORY_INFO_INIT;
  PT_CHECK_STATUS(pterun_program_method_memory(p, "forward", &o, &info), PTERUN_STATUS_OK);
  PT_CHECK(info.planned_bytes == 0);
  for (size_t k = 0; k < mi.planned_buffer_count; ++k) {
    for (size_t b = 0; b < sizes[k]; ++b) PT_CHECK(((unsigned char*)bufs[k])[b] == 0xA5);
    free(bufs[k]);
  }
  pterun_program_destroy(p);
  return 0;
}

/* An older caller's struct (up to runtime_bytes) gets only what fits; bad
 * arguments and a missing method are refused. */
static int struct_size_and_refusals(void) {
  pterun_program* p = open_fixture("mlp/model.pte");
  PT_CHECK(p != NULL);
  pterun_method_options o = method_options();
  pterun_method_memory_info info;
  memset(&info, 0x5A, sizeof info);
  info.struct_size = offsetof(pterun_method_memory_info, planned_bytes);
  PT_CHECK_STATUS(pterun_program_method_memory(p, "forward", &o, &info), PTERUN_STATUS_OK);
  PT_CHECK(info.runtime_bytes > 0 && info.runtime_bytes != (size_t)0x5A5A5A5A5A5A5A5Aull);
  PT_CHECK(info.planned_bytes == (size_t)0x5A5A5A5A5A5A5A5Aull); /* beyond its struct */
  info.struct_size = 0;
  PT_CHECK_STATUS(pterun_program_method_memory(p, "forward", &o, &info),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  pterun_method_memory_info ok = PTERUN_METHOD_MEMORY_INFO_INIT;
  PT_CHECK_STATUS(pterun_program_method_memory(p, "nope", &o, &ok), PTERUN_STATUS_NOT_FOUND);
  PT_CHECK_STATUS(pterun_program_method_memory(NULL, "forward", &o, &ok),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(pterun_method_memory_parts(NULL, &ok), PTERUN_STATUS_INVALID_ARGUMENT);
  pterun_program_destroy(p);
  return 0;
}

int main(void) {
  g_silent = pterun_logger_silent();
  PT_CHECK_STATUS(pterun_registry_create(NULL, &g_silent, &g_reg), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_set_optimizer(g_reg, pterun_optimizer_default()),
                  PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(g_reg, pterun_kernels_portable()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(g_reg, pterun_kernels_quantized()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(g_reg, pterun_kernels_lowbit()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add_backend(g_reg, pterun_backend_xnnpack()), PTERUN_STATUS_OK);
  PT_RUN(before_load_equals_after);
  PT_RUN(caller_buffers_untouched);
  PT_RUN(struct_size_and_refusals);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
