/* Fuzz target: program load + verify, then every query of the program API. */
#include "tests/fuzz/fuzz_common.h"

static void query(const pterun_program* p) {
  pterun_program_info info;
  pterun_program_get_info(p, &info);
  size_t n = pterun_program_method_count(p);
  for (size_t i = 0; i < info.named_data_count + 1; ++i) {
    const char* key;
    uint64_t sz;
    if (pterun_program_named_data(p, i, &key, &sz) == PTERUN_STATUS_OK && strlen(key) > (size_t)1
                                                                                            << 30)
      abort();
  }
  for (size_t m = 0; m <= n; ++m) {
    const char* name = pterun_program_method_name(p, m);
    if (m == n && name != NULL) abort();
    if (name != NULL) {
      size_t idx;
      if (pterun_program_find_method(p, name, &idx) != PTERUN_STATUS_OK) abort();
    }
    pterun_method_info mi;
    pterun_status st = pterun_program_method_info(p, m, &mi);
    FZ_CHECK_STATUS(st);
    if (st != PTERUN_STATUS_OK) continue;
    for (size_t i = 0; i <= mi.input_count; ++i) {
      pterun_io_info io;
      FZ_CHECK_STATUS(pterun_program_method_input(p, m, i, &io));
    }
    for (size_t i = 0; i <= mi.output_count; ++i) {
      pterun_io_info io;
      FZ_CHECK_STATUS(pterun_program_method_output(p, m, i, &io));
    }
    for (size_t i = 0; i <= mi.operator_count; ++i) {
      const char *op, *ov;
      if (pterun_program_method_operator(p, m, i, &op, &ov) == PTERUN_STATUS_OK &&
          strlen(op) + strlen(ov) > (size_t)1 << 30)
        abort();
    }
    for (size_t i = 0; i <= mi.delegate_count; ++i) {
      const char* be;
      if (pterun_program_method_delegate(p, m, i, &be) == PTERUN_STATUS_OK &&
          strlen(be) > (size_t)1 << 30)
        abort();
    }
    for (size_t b = 0; b <= mi.planned_buffer_count; ++b) {
      uint64_t sz;
      FZ_CHECK_STATUS(pterun_program_planned_buffer_size(p, m, b, &sz));
    }
  }
  size_t idx;
  FZ_CHECK_STATUS(pterun_program_find_method(p, "forward", &idx));
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t* buf = fz_copy(data, size);
  if (buf == NULL) return 0;
  pterun_load_options lo = fz_load_options();
  pterun_program* p = NULL;
  pterun_status st = pterun_program_load_buffer(buf, size, &lo, &p);
  FZ_CHECK_STATUS(st);
  if (st == PTERUN_STATUS_OK) {
    query(p);
    pterun_program_destroy(p);
  } else if (p != NULL) {
    abort(); /* a failed load leaves no object behind */
  }
  free(buf);
  return 0;
}
