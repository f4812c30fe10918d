/* Minimal embedding example: load a .pte, run "forward" on zeros, print the
 * first output. Build: see examples/CMakeLists.txt. */
#include <stdio.h>
#include <stdlib.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.pte\n", argv[0]);
    return 2;
  }
  pterun_registry* reg = pterun_registry_default();
  pterun_status st = pterun_registry_add(reg, pterun_kernels_portable());
  pterun_program* prog = NULL;
  pterun_method* m = NULL;
  void* input = NULL;
  if (st == PTERUN_STATUS_OK) st = pterun_program_load_file(argv[1], PTERUN_FILE_MMAP, NULL, &prog);
  if (st == PTERUN_STATUS_OK) st = pterun_method_load(prog, "forward", NULL, &m);
  for (size_t i = 0; st == PTERUN_STATUS_OK && i < pterun_method_input_count(m); ++i) {
    pterun_io_info info;
    st = pterun_program_method_input(prog, 0, i, &info);
    if (st != PTERUN_STATUS_OK || info.tag != PTERUN_VALUE_TENSOR) continue;
    free(input);
    input = calloc(1, info.nbytes ? info.nbytes : 1);
    pterun_tensor_view v = {info.dtype, info.rank, info.sizes, info.dim_order, input, info.nbytes};
    st = pterun_method_set_input(m, i, &v);
  }
  if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
  if (st == PTERUN_STATUS_OK) {
    const pterun_value* out;
    pterun_method_output(m, 0, &out);
    if (out->tag == PTERUN_VALUE_TENSOR && out->u.tensor->dtype == PTERUN_DTYPE_F32) {
      const pterun_tensor* t = out->u.tensor;
      printf("output 0: %lld float32 values:", (long long)t->numel);
      for (int64_t k = 0; k < t->numel && k < 8; ++k)
        printf(" %g", (double)((const float*)t->data)[k]);
      printf("\n");
    }
  }
  if (st != PTERUN_STATUS_OK) fprintf(stderr, "error: %s\n", pterun_status_str(st));
  free(input);
  pterun_method_destroy(m);
  pterun_program_destroy(prog);
  return st == PTERUN_STATUS_OK ? 0 : 1;
}
