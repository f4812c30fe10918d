/* Minimal embedding example: load a .pte, run its "forward" method on zeros
 * and print the first output. Every call's status is checked; the details of
 * a failure go to the default logger (stderr). Build: see
 * examples/CMakeLists.txt. The test suite runs it under ASan and valgrind. */
#include <stdio.h>
#include <stdlib.h>

#include "pterun/optimize.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.pte\n", argv[0]);
    return 2;
  }
  pterun_registry* reg = NULL;
  pterun_program* prog = NULL;
  pterun_method* m = NULL;
  void** inputs = NULL; /* one buffer per input: the method may point at them */
  size_t n_inputs = 0, index = 0;

  /* A registry of our own (pterun_registry_default() is the process-wide
   * one), holding the portable kernels and the load-time optimiser (constant
   * folding and fusion). */
  pterun_status st = pterun_registry_create(NULL, NULL, &reg);
  if (st == PTERUN_STATUS_OK) st = pterun_registry_set_optimizer(reg, pterun_optimizer_default());
  if (st == PTERUN_STATUS_OK) st = pterun_registry_add(reg, pterun_kernels_portable());
  if (st == PTERUN_STATUS_OK) st = pterun_program_load_file(argv[1], PTERUN_FILE_MMAP, NULL, &prog);
  /* The method's index, for the program's description of its inputs. */
  if (st == PTERUN_STATUS_OK) st = pterun_program_find_method(prog, "forward", &index);
  if (st == PTERUN_STATUS_OK) {
    pterun_method_options opts = PTERUN_METHOD_OPTIONS_INIT;
    opts.registry = reg;
    st = pterun_method_load(prog, "forward", &opts, &m);
  }
  if (st == PTERUN_STATUS_OK) {
    n_inputs = pterun_method_input_count(m);
    inputs = calloc(n_inputs ? n_inputs : 1, sizeof *inputs);
    if (inputs == NULL) st = PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (size_t i = 0; st == PTERUN_STATUS_OK && i < n_inputs; ++i) {
    pterun_io_info info;
    st = pterun_program_method_input(prog, index, i, &info);
    if (st != PTERUN_STATUS_OK) break;
    if (info.tag != PTERUN_VALUE_TENSOR) {
      fprintf(stderr, "input %zu is not a tensor: this example feeds tensors only\n", i);
      st = PTERUN_STATUS_NOT_SUPPORTED;
      break;
    }
    /* Zeros at the serialized sizes (the bound of a dynamic input). */
    inputs[i] = calloc(1, info.nbytes ? (size_t)info.nbytes : 1);
    if (inputs[i] == NULL) {
      st = PTERUN_STATUS_OUT_OF_MEMORY;
      break;
    }
    pterun_tensor_view v = {info.dtype,     info.rank, info.sizes,
                            info.dim_order, inputs[i], (size_t)info.nbytes};
    st = pterun_method_set_input(m, i, &v);
  }
  if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
  if (st == PTERUN_STATUS_OK) {
    const pterun_value* out;
    st = pterun_method_output(m, 0, &out);
    if (st == PTERUN_STATUS_OK && out->tag == PTERUN_VALUE_TENSOR &&
        out->u.tensor->dtype == PTERUN_DTYPE_F32) {
      const pterun_tensor* t = out->u.tensor;
      printf("output 0: %lld float32 values:", (long long)t->numel);
      for (int64_t k = 0; k < t->numel && k < 8; ++k)
        printf(" %g", (double)((const float*)t->data)[k]);
      printf("\n");
    } else if (st == PTERUN_STATUS_OK) {
      printf("output 0: a %s\n", pterun_value_tag_name(out->tag));
    }
  }
  if (st != PTERUN_STATUS_OK) fprintf(stderr, "error: %s\n", pterun_status_str(st));
  /* The method first: it may point at the input buffers and the program. */
  pterun_method_destroy(m);
  for (size_t i = 0; inputs != NULL && i < n_inputs; ++i) free(inputs[i]);
  free(inputs);
  pterun_program_destroy(prog);
  pterun_registry_destroy(reg);
  return st == PTERUN_STATUS_OK ? 0 : 1;
}
