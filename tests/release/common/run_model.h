/* Shared by the release-check programs (tests/release): runs one method of a
 * program with deterministic inputs and prints every output as text, so that
 * builds of the same program against the same libraries print byte-identical
 * output. Header-only; PT_FN(f) names the API function (the dlopen test maps
 * it to a pointer it looked up with dlsym).
 *
 * Input element k of input i: floating  ((k * 37 + i * 11) % 17 - 8) / 8.0
 *                             integer   (k * 7 + i) % 5
 *                             bool      (k + i) % 2
 * Output: "output <i> <dtype> [<sizes>]" then the values, 8 per line, floats
 * printed with %.9g (float32) or %.17g (float64). */
#ifndef PTERUN_TESTS_RELEASE_RUN_MODEL_H_
#define PTERUN_TESTS_RELEASE_RUN_MODEL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/pterun.h"

#ifndef PT_FN
#define PT_FN(f) f
#endif

static void pt_fill(int32_t dtype, void* data, int64_t n, size_t i) {
  for (int64_t k = 0; k < n; ++k) {
    double f = (double)((k * 37 + (int64_t)i * 11) % 17 - 8) / 8.0;
    int64_t v = (k * 7 + (int64_t)i) % 5;
    switch (dtype) {
      case PTERUN_DTYPE_F32: ((float*)data)[k] = (float)f; break;
      case PTERUN_DTYPE_F64: ((double*)data)[k] = f; break;
      case PTERUN_DTYPE_I64: ((int64_t*)data)[k] = v; break;
      case PTERUN_DTYPE_I32: ((int32_t*)data)[k] = (int32_t)v; break;
      case PTERUN_DTYPE_I16: ((int16_t*)data)[k] = (int16_t)v; break;
      case PTERUN_DTYPE_I8: ((int8_t*)data)[k] = (int8_t)v; break;
      case PTERUN_DTYPE_U8: ((uint8_t*)data)[k] = (uint8_t)v; break;
      case PTERUN_DTYPE_BOOL: ((uint8_t*)data)[k] = (uint8_t)((k + (int64_t)i) % 2); break;
      default: break; /* other dtypes stay zero */
    }
  }
}

static void pt_print_tensor(FILE* out, size_t i, const pterun_tensor* t) {
  fprintf(out, "output %zu %s [", i, PT_FN(pterun_dtype_name)(t->dtype));
  for (unsigned d = 0; d < t->rank; ++d)
    fprintf(out, "%s%lld", d ? ", " : "", (long long)t->sizes[d]);
  fprintf(out, "]\n");
  for (int64_t k = 0; k < t->numel; ++k) {
    const void* p = t->data;
    switch (t->dtype) {
      case PTERUN_DTYPE_F32: fprintf(out, " %.9g", (double)((const float*)p)[k]); break;
      case PTERUN_DTYPE_F64: fprintf(out, " %.17g", ((const double*)p)[k]); break;
      case PTERUN_DTYPE_I64: fprintf(out, " %lld", (long long)((const int64_t*)p)[k]); break;
      case PTERUN_DTYPE_I32: fprintf(out, " %ld", (long)((const int32_t*)p)[k]); break;
      case PTERUN_DTYPE_I16: fprintf(out, " %d", (int)((const int16_t*)p)[k]); break;
      case PTERUN_DTYPE_I8: fprintf(out, " %d", (int)((const int8_t*)p)[k]); break;
      case PTERUN_DTYPE_U8:
      case PTERUN_DTYPE_BOOL: fprintf(out, " %u", (unsigned)((const uint8_t*)p)[k]); break;
      default: fprintf(out, " ?"); break;
    }
    if (k % 8 == 7 || k + 1 == t->numel) fprintf(out, "\n");
  }
}

/* Runs `method` of the program at `path` with operators from `registry` and
 * prints its outputs to `out`. Returns the first failing status. */
static pterun_status pt_run_model(const pterun_registry* registry, const char* path,
                                  const char* method, FILE* out) {
  pterun_program* prog = NULL;
  pterun_method* m = NULL;
  void** inputs = NULL;
  size_t n_in = 0;
  pterun_status st = PT_FN(pterun_program_load_file)(path, PTERUN_FILE_READ, NULL, &prog);
  size_t mi = 0;
  if (st == PTERUN_STATUS_OK) st = PT_FN(pterun_program_find_method)(prog, method, &mi);
  pterun_method_options opts = PTERUN_METHOD_OPTIONS_INIT;
  opts.registry = registry;
  if (st == PTERUN_STATUS_OK) st = PT_FN(pterun_method_load)(prog, method, &opts, &m);
  if (st == PTERUN_STATUS_OK) {
    n_in = PT_FN(pterun_method_input_count)(m);
    inputs = (void**)calloc(n_in + 1, sizeof *inputs);
    if (inputs == NULL) st = PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (size_t i = 0; st == PTERUN_STATUS_OK && i < n_in; ++i) {
    pterun_io_info info;
    st = PT_FN(pterun_program_method_input)(prog, mi, i, &info);
    if (st != PTERUN_STATUS_OK || info.tag != PTERUN_VALUE_TENSOR) continue;
    int64_t numel = 1;
    for (unsigned d = 0; d < info.rank; ++d) numel *= info.sizes[d];
    inputs[i] = calloc(1, info.nbytes ? (size_t)info.nbytes : 1);
    if (inputs[i] == NULL) {
      st = PTERUN_STATUS_OUT_OF_MEMORY;
      break;
    }
    pt_fill(info.dtype, inputs[i], numel, i);
    pterun_tensor_view v = {info.dtype,     info.rank, info.sizes,
                            info.dim_order, inputs[i], (size_t)info.nbytes};
    st = PT_FN(pterun_method_set_input)(m, i, &v);
  }
  if (st == PTERUN_STATUS_OK) st = PT_FN(pterun_method_execute)(m);
  for (size_t i = 0; st == PTERUN_STATUS_OK && i < PT_FN(pterun_method_output_count)(m); ++i) {
    const pterun_value* v = NULL;
    st = PT_FN(pterun_method_output)(m, i, &v);
    if (st != PTERUN_STATUS_OK) break;
    if (v->tag == PTERUN_VALUE_TENSOR)
      pt_print_tensor(out, i, v->u.tensor);
    else if (v->tag == PTERUN_VALUE_INT)
      fprintf(out, "output %zu int %lld\n", i, (long long)v->u.i);
    else if (v->tag == PTERUN_VALUE_DOUBLE)
      fprintf(out, "output %zu double %.17g\n", i, v->u.d);
    else if (v->tag == PTERUN_VALUE_BOOL)
      fprintf(out, "output %zu bool %d\n", i, v->u.b);
    else
      fprintf(out, "output %zu %s\n", i, PT_FN(pterun_value_tag_name)(v->tag));
  }
  for (size_t i = 0; i < n_in && inputs != NULL; ++i) free(inputs[i]);
  free(inputs);
  PT_FN(pterun_method_destroy)(m);
  PT_FN(pterun_program_destroy)(prog);
  return st;
}

#endif /* PTERUN_TESTS_RELEASE_RUN_MODEL_H_ */
