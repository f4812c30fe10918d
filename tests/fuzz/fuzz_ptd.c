/* Fuzz target: .ptd (FlatTensor) parsing, then use of the parsed file as the
 * external data of a program that needs it (tests/fixtures/external_data),
 * which exercises the layout checks of method load and an execute. */
#include <stdio.h>

#include "tests/fuzz/fuzz_common.h"

static uint8_t* g_pte;
static size_t g_pte_size;

static void load_model(void) {
  static int done;
  if (done) return;
  done = 1;
  FILE* f = fopen(PTERUN_FIXTURES_DIR "/external_data/model.pte", "rb");
  if (f == NULL) return;
  static uint8_t tmp[1 << 16];
  size_t n = fread(tmp, 1, sizeof tmp, f);
  fclose(f);
  g_pte = fz_copy(tmp, n);
  g_pte_size = n;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  load_model();
  uint8_t* buf = fz_copy(data, size);
  if (buf == NULL) return 0;
  pterun_load_options lo = fz_load_options();
  pterun_data* d = NULL;
  pterun_status st = pterun_data_load_buffer(buf, size, &lo, &d);
  FZ_CHECK_STATUS(st);
  if (st == PTERUN_STATUS_OK) {
    size_t n = pterun_data_count(d);
    for (size_t i = 0; i <= n; ++i) {
      const char* k = pterun_data_key(d, i);
      if (k != NULL && strlen(k) > (size_t)1 << 30) abort();
    }
    pterun_program* p = NULL;
    if (g_pte != NULL &&
        pterun_program_load_buffer(g_pte, g_pte_size, &lo, &p) == PTERUN_STATUS_OK) {
      const pterun_data* files[1] = {d};
      pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
      mo.registry = fz_registry();
      mo.logger = pterun_logger_silent();
      mo.data = files;
      mo.data_count = 1;
      mo.instruction_budget = 1000;
      mo.scratch_bytes = 1024;
      pterun_method* m = NULL;
      st = pterun_method_load(p, "forward", &mo, &m);
      FZ_CHECK_STATUS(st);
      if (st == PTERUN_STATUS_OK) {
        pterun_io_info io;
        static float x[4096];
        if (pterun_program_method_input(p, 0, 0, &io) == PTERUN_STATUS_OK &&
            io.tag == PTERUN_VALUE_TENSOR && io.nbytes <= sizeof x) {
          pterun_tensor_view v = {io.dtype, io.rank, io.sizes, io.dim_order, x, (size_t)io.nbytes};
          if (pterun_method_set_input(m, 0, &v) == PTERUN_STATUS_OK)
            FZ_CHECK_STATUS(pterun_method_execute(m));
        }
      }
      pterun_method_destroy(m);
      pterun_program_destroy(p);
    }
    pterun_data_destroy(d);
  }
  free(buf);
  return 0;
}
