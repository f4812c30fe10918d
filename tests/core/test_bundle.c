/* Bundled programs: load, the embedded program in place, test-case inputs,
 * ExecuTorch's comparison rule, a deliberately wrong bundle, damaged files. */
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static pterun_registry* g_reg;
static pterun_logger g_silent;

static void fixture(const char* name, char* path, size_t cap) {
  snprintf(path, cap, "%s/devtools/%s", PTERUN_FIXTURES_DIR, name);
}

static int load_bundle(const char* name, pterun_bundle** b) {
  char path[1024];
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  fixture(name, path, sizeof path);
  return pterun_bundle_load_file(path, PTERUN_FILE_MMAP, &lo, b) != PTERUN_STATUS_OK;
}

/* Runs every case; returns the number that failed, -1 on an error. Records
 * the first failure's suite and case. */
static int verify_all(const pterun_bundle* b, size_t* bad_suite, size_t* bad_case) {
  pterun_program* p = NULL;
  int failed = 0;
  if (pterun_bundle_program(b, NULL, &p) != PTERUN_STATUS_OK) return -1;
  for (size_t s = 0; s < pterun_bundle_suite_count(b); ++s) {
    const char* name;
    size_t cases;
    pterun_method* m = NULL;
    pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
    mo.registry = g_reg;
    mo.logger = g_silent;
    if (pterun_bundle_suite(b, s, &name, &cases) != PTERUN_STATUS_OK ||
        pterun_method_load(p, name, &mo, &m) != PTERUN_STATUS_OK)
      return -1;
    for (size_t c = 0; c < cases; ++c) {
      pterun_bundle_check chk;
      if (pterun_bundle_set_inputs(b, s, c, m) != PTERUN_STATUS_OK ||
          pterun_method_execute(m) != PTERUN_STATUS_OK ||
          pterun_bundle_verify_outputs(b, s, c, m, PTERUN_BUNDLE_DEFAULT_RTOL,
                                       PTERUN_BUNDLE_DEFAULT_ATOL, &chk) != PTERUN_STATUS_OK)
        return -1;
      if (!chk.passed && failed++ == 0) {
        *bad_suite = s;
        *bad_case = c;
      }
      if (chk.passed && (chk.message[0] != 0 || chk.outputs_compared != 1)) return -1;
    }
    pterun_method_destroy(m);
  }
  pterun_program_destroy(p);
  return failed;
}

static int bundle_verifies(void) {
  pterun_bundle* b = NULL;
  size_t s = 99, c = 99, cases, nin, nout, idx;
  const char* name;
  const void* bytes;
  size_t nbytes;
  PT_CHECK(load_bundle("multi.bpte", &b) == 0);
  PT_CHECK(pterun_bundle_version(b) == 2);
  PT_CHECK(pterun_bundle_suite_count(b) == 3);
  PT_CHECK_STATUS(pterun_bundle_find_suite(b, "int_ops", &idx), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_bundle_suite(b, idx, &name, &cases), PTERUN_STATUS_OK);
  PT_CHECK(strcmp(name, "int_ops") == 0 && cases == 2);
  PT_CHECK_STATUS(pterun_bundle_find_suite(b, "nope", &idx), PTERUN_STATUS_NOT_FOUND);
  PT_CHECK_STATUS(pterun_bundle_case(b, idx, 0, &nin, &nout), PTERUN_STATUS_OK);
  PT_CHECK(nin == 2 && nout == 1);
  pterun_bundle_value v;
  PT_CHECK_STATUS(pterun_bundle_value_get(b, idx, 1, 0, 1, &v), PTERUN_STATUS_OK);
  PT_CHECK(v.tag == PTERUN_VALUE_TENSOR && v.dtype == PTERUN_DTYPE_I64 && v.rank == 2 &&
           v.sizes[0] == 3 && v.sizes[1] == 4 && v.nbytes == 96);
  PT_CHECK_STATUS(pterun_bundle_value_get(b, idx, 1, 0, 2, &v), PTERUN_STATUS_NOT_FOUND);
  PT_CHECK_STATUS(pterun_bundle_case(b, idx, 2, &nin, &nout), PTERUN_STATUS_NOT_FOUND);
  /* the embedded program is used in place, aligned as the format promises */
  pterun_bundle_program_bytes(b, &bytes, &nbytes);
  PT_CHECK(bytes != NULL && nbytes > 8 && ((uintptr_t)bytes % 32) == 0);
  PT_CHECK(memcmp((const char*)bytes + 4, "ET12", 4) == 0);
  PT_CHECK(verify_all(b, &s, &c) == 0);
  pterun_bundle_destroy(b);

  PT_CHECK(load_bundle("executorch_sample.bpte", &b) == 0);
  PT_CHECK(verify_all(b, &s, &c) == 0);
  pterun_bundle_destroy(b);

  PT_CHECK(load_bundle("multi_wrong.bpte", &b) == 0);
  PT_CHECK(verify_all(b, &s, &c) == 1);
  PT_CHECK_STATUS(pterun_bundle_suite(b, s, &name, NULL), PTERUN_STATUS_OK);
  PT_CHECK(strcmp(name, "forward") == 0 && c == 1);
  pterun_bundle_destroy(b);
  return 0;
}

static int rule_and_tolerances(void) {
  pterun_bundle* b = NULL;
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  pterun_bundle_check chk;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  size_t fw;
  PT_CHECK(load_bundle("multi_wrong.bpte", &b) == 0);
  PT_CHECK_STATUS(pterun_bundle_program(b, NULL, &p), PTERUN_STATUS_OK);
  mo.registry = g_reg;
  mo.logger = g_silent;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &mo, &m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_bundle_find_suite(b, "forward", &fw), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_bundle_set_inputs(b, fw, 1, m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_bundle_verify_outputs(b, fw, 1, m, 1e-5, 1e-8, &chk), PTERUN_STATUS_OK);
  /* every element was moved by 0.5 */
  PT_CHECK(!chk.passed && chk.failed_output == 0 && chk.mismatched == 8);
  PT_CHECK(chk.max_abs_error > 0.49 && chk.max_abs_error < 0.51);
  PT_CHECK(strstr(chk.message, "8 of 8 elements") != NULL);
  PT_CHECK_STATUS(pterun_bundle_verify_outputs(b, fw, 1, m, 0, 0.51, &chk), PTERUN_STATUS_OK);
  PT_CHECK(chk.passed);
  /* another case's expectation does not match this execute */
  PT_CHECK_STATUS(pterun_bundle_verify_outputs(b, fw, 0, m, 1e-5, 1e-8, &chk), PTERUN_STATUS_OK);
  PT_CHECK(!chk.passed);
  /* a case for another method does not fit this one */
  size_t io;
  PT_CHECK_STATUS(pterun_bundle_find_suite(b, "int_ops", &io), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_bundle_set_inputs(b, io, 0, m), PTERUN_STATUS_INPUT_MISMATCH);
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  pterun_bundle_destroy(b);
  return 0;
}

static int damaged_bundles(void) {
  char path[1024];
  fixture("multi.bpte", path, sizeof path);
  FILE* f = fopen(path, "rb");
  PT_CHECK(f != NULL);
  static uint8_t buf[1 << 16] __attribute__((aligned(64)));
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  PT_CHECK(n > 1000 && n < sizeof buf);
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  pterun_bundle* b = NULL;
  pterun_program* p = NULL;
  /* a .bpte is not a .pte: the program loader says what it is */
  PT_CHECK_STATUS(pterun_program_load_buffer(buf, n, &lo, &p), PTERUN_STATUS_INVALID_PROGRAM);
  PT_CHECK(pterun_is_bundled_program(buf, n) && !pterun_is_bundled_program(buf, 7));
  PT_CHECK_STATUS(pterun_bundle_load_buffer(buf + 16, n - 16, &lo, &b),
                  PTERUN_STATUS_INVALID_ARGUMENT); /* borrowed: 32-aligned */
  lo.copy = 1;
  PT_CHECK_STATUS(pterun_bundle_load_buffer(buf, n, &lo, &b), PTERUN_STATUS_OK);
  pterun_bundle_destroy(b);
  lo.copy = 0;
  /* every truncation is refused (the program vector ends near the file's end) */
  for (size_t cut = 0; cut < n; cut += 7) {
    pterun_status st = pterun_bundle_load_buffer(buf, cut, &lo, &b);
    PT_CHECK(st != PTERUN_STATUS_OK);
  }
  /* bit flips: anything but a crash; a loaded bundle still answers queries */
  uint64_t seed = 12345;
  for (int k = 0; k < 2000; ++k) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    size_t pos = (size_t)(seed >> 33) % n;
    uint8_t bit = (uint8_t)(1u << ((seed >> 20) & 7));
    buf[pos] ^= bit;
    if (pterun_bundle_load_buffer(buf, n, &lo, &b) == PTERUN_STATUS_OK) {
      for (size_t s = 0; s < pterun_bundle_suite_count(b); ++s) {
        size_t cases = 0, nin = 0, nout = 0;
        PT_CHECK_STATUS(pterun_bundle_suite(b, s, NULL, &cases), PTERUN_STATUS_OK);
        for (size_t c = 0; c < cases; ++c)
          PT_CHECK_STATUS(pterun_bundle_case(b, s, c, &nin, &nout), PTERUN_STATUS_OK);
      }
      pterun_bundle_destroy(b);
    }
    buf[pos] ^= bit;
  }
  return 0;
}

int main(void) {
  int pt_failures = 0;
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  PT_RUN(bundle_verifies);
  PT_RUN(rule_and_tolerances);
  PT_RUN(damaged_bundles);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
