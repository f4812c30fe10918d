/* Helpers shared by the robustness tests: fixtures, a registry with the
 * portable kernels, and running a fixture method on its recorded inputs. */
#ifndef PTERUN_TESTS_ROBUSTNESS_RB_COMMON_H_
#define PTERUN_TESTS_ROBUSTNESS_RB_COMMON_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/npy.h"
#include "pterun/optimize.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static pterun_registry* g_reg;
static pterun_logger g_silent;

static inline int rb_init(void) {
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_set_optimizer(g_reg, pterun_optimizer_default()) != PTERUN_STATUS_OK)
    return 1;
  return pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK;
}

static inline const char* rb_fixture(const char* rel) {
  static _Thread_local char path[8][512];
  static _Thread_local int k;
  k = (k + 1) & 7;
  snprintf(path[k], sizeof path[k], "%s/%s", PTERUN_FIXTURES_DIR, rel);
  return path[k];
}

/* Whole file into 64-aligned memory; NULL on failure. */
static inline unsigned char* rb_read(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* b = aligned_alloc(64, ((size_t)n + 64) & ~(size_t)63);
  if (b != NULL) *size = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

static inline pterun_method_options rb_opts(void) {
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  o.logger = g_silent;
  return o;
}

static inline pterun_load_options rb_load_opts(void) {
  pterun_load_options o = PTERUN_LOAD_OPTIONS_INIT;
  o.logger = g_silent;
  return o;
}

/* Binds <dir>/<method>_input_<k>.npy to every input. */
static inline pterun_status rb_bind_inputs(pterun_method* m, const char* dir, const char* method) {
  char rel[256], err[CLI_NPY_ERR_SIZE];
  for (size_t k = 0; k < pterun_method_input_count(m); ++k) {
    cli_npy a;
    snprintf(rel, sizeof rel, "%s/%s_input_%zu.npy", dir, method, k);
    pterun_status st = cli_npy_read_file(rb_fixture(rel), &a, err, sizeof err);
    if (st != PTERUN_STATUS_OK) return st;
    pterun_tensor_view v = {a.dtype, a.rank, a.shape, NULL, a.data, a.nbytes};
    st = pterun_method_set_input(m, k, &v);
    cli_npy_free(&a);
    if (st != PTERUN_STATUS_OK) return st;
  }
  return PTERUN_STATUS_OK;
}

/* FNV-1a over output 0's bytes (and shape): a compact fingerprint. */
static inline uint64_t rb_output_hash(const pterun_method* m) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < pterun_method_output_count(m); ++i) {
    const pterun_value* v;
    if (pterun_method_output(m, i, &v) != PTERUN_STATUS_OK) return 0;
    if (v->tag != PTERUN_VALUE_TENSOR) {
      h = (h ^ (uint64_t)v->u.i) * 1099511628211ull;
      continue;
    }
    const pterun_tensor* t = v->u.tensor;
    for (uint8_t d = 0; d < t->rank; ++d) h = (h ^ (uint64_t)t->sizes[d]) * 1099511628211ull;
    for (size_t b = 0; b < t->nbytes; ++b)
      h = (h ^ ((const uint8_t*)t->data)[b]) * 1099511628211ull;
  }
  return h;
}

#endif
