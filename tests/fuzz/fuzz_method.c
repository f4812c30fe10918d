/* Fuzz target: method load (memory planning, value table, operator
 * resolution against the prim ops and the portable kernels) for every
 * method, once with pterun's planned memory and once with caller arenas of
 * exactly the advertised sizes. */
#include "tests/fuzz/fuzz_common.h"

static void load_with_arenas(const pterun_program* p, const char* name, size_t mi_index) {
  pterun_method_info mi;
  if (pterun_program_method_info(p, mi_index, &mi) != PTERUN_STATUS_OK ||
      mi.planned_buffer_count > 64)
    return;
  void* bufs[64] = {0};
  size_t total = 0;
  for (size_t b = 0; b < mi.planned_buffer_count; ++b) {
    uint64_t sz;
    if (pterun_program_planned_buffer_size(p, mi_index, b, &sz) != PTERUN_STATUS_OK) abort();
    if (sz > FZ_ALLOC_CAP || (total += (size_t)sz) > FZ_ALLOC_CAP) goto out;
    bufs[b] =
        aligned_alloc(64, ((size_t)sz + 63) & ~(size_t)63 ? ((size_t)sz + 63) & ~(size_t)63 : 64);
    if (bufs[b] == NULL) goto out;
  }
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  mo.registry = fz_registry();
  mo.logger = pterun_logger_silent();
  mo.scratch_bytes = PTERUN_NO_SCRATCH;
  mo.planned_buffers = bufs;
  mo.planned_buffer_count = mi.planned_buffer_count;
  pterun_method* m = NULL;
  pterun_status st = pterun_method_load(p, name, &mo, &m);
  FZ_CHECK_STATUS(st);
  pterun_method_destroy(m);
out:
  for (size_t b = 0; b < mi.planned_buffer_count; ++b) free(bufs[b]);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t* buf = fz_copy(data, size);
  if (buf == NULL) return 0;
  pterun_load_options lo = fz_load_options();
  pterun_program* p = NULL;
  if (pterun_program_load_buffer(buf, size, &lo, &p) == PTERUN_STATUS_OK) {
    size_t n = pterun_program_method_count(p);
    for (size_t i = 0; i < n && i < 8; ++i) {
      const char* name = pterun_program_method_name(p, i);
      pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
      mo.registry = fz_registry();
      mo.logger = pterun_logger_silent();
      mo.scratch_bytes = 256;
      pterun_method* m = NULL;
      pterun_status st = pterun_method_load(p, name, &mo, &m);
      FZ_CHECK_STATUS(st);
      if (st == PTERUN_STATUS_OK) {
        size_t rt, pl;
        pterun_method_memory(m, &rt, &pl);
        if (pterun_method_input_count(m) != 0 || pterun_method_output_count(m) != 0) {
          const pterun_value* v;
          for (size_t k = 0; k < pterun_method_output_count(m); ++k)
            if (pterun_method_output(m, k, &v) != PTERUN_STATUS_OK) abort();
        }
      } else if (m != NULL) {
        abort();
      }
      pterun_method_destroy(m);
      load_with_arenas(p, name, i);
    }
    pterun_program_destroy(p);
  }
  free(buf);
  return 0;
}
