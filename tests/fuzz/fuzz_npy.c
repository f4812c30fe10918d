/* Fuzz target: the CLI's .npy reader (header dict, dtypes, Fortran order,
 * byte order, bool checks). */
#include "cli/npy.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char err[CLI_NPY_ERR_SIZE];
  cli_npy a;
  // An exact-size heap copy so ASan sees any read past the end.
  uint8_t* buf = malloc(size ? size : 1);
  if (buf == NULL) return 0;
  if (size) memcpy(buf, data, size);
  err[0] = 0;
  pterun_status st = cli_npy_read_buffer(buf, size, "fuzz.npy", &a, err, sizeof err);
  FZ_CHECK_STATUS(st);
  if (st == PTERUN_STATUS_OK) {
    if (a.data == NULL || a.rank > PTERUN_MAX_RANK) abort();
    if (a.nbytes != a.numel * pterun_dtype_size(a.dtype)) abort();
    volatile uint8_t sink = 0;
    for (size_t k = 0; k < a.nbytes; k += 61) sink ^= ((const uint8_t*)a.data)[k];
    if (a.nbytes > 0) sink ^= ((const uint8_t*)a.data)[a.nbytes - 1];
    (void)sink;
    char shp[256];
    cli_npy_shape_str(a.rank, a.shape, shp, sizeof shp);
  } else if (memchr(err, 0, sizeof err) == NULL || err[0] == 0) {
    abort(); /* every failure explains itself */
  }
  cli_npy_free(&a);
  free(buf);
  return 0;
}
