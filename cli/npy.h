/* NumPy .npy files (format versions 1.0, 2.0 and 3.0) for the pterun CLI.
 *
 * A .npy file is untrusted input: every field is checked before it is used and
 * every failure returns a status plus a one-line message that starts with the
 * file's name and says what was wrong.
 *
 * Reading
 *   - descr: '<f2' '<f4' '<f8' '|i1' '<i2' '<i4' '<i8' '|u1' '<u2' '<u4' '<u8'
 *     '|b1' (and the same with '>' or '=' byte order). Big-endian data is
 *     byte-swapped to the host's order. Anything else (complex, strings,
 *     structured dtypes, 'V2' "bfloat16") is NOT_SUPPORTED.
 *   - fortran_order True is accepted and the data is transposed into C
 *     (row-major) order, so callers always see C-order arrays.
 *   - bool elements must be 0 or 1.
 *   - the data length must equal prod(shape) * itemsize exactly.
 * Writing
 *   - version 1.0, or 2.0 when the header does not fit in 65535 bytes; the
 *     header is padded with spaces so the data starts at a multiple of 64.
 */
#ifndef PTERUN_CLI_NPY_H_
#define PTERUN_CLI_NPY_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/status.h"
#include "pterun/tensor.h"

/* Bytes for a message buffer: enough for a path and the offending token. */
#define CLI_NPY_ERR_SIZE 768

/** What a valid header says (filled by cli_npy_parse_header). */
typedef struct cli_npy_header {
  int major, minor; /* format version */
  int32_t dtype;    /* pterun_dtype */
  size_t itemsize;
  uint32_t rank;
  int64_t shape[PTERUN_MAX_RANK];
  int fortran_order;
  int swap_bytes; /* file byte order is not the host's */
  size_t numel;
  size_t data_offset; /* where the array data starts in the file */
  size_t data_nbytes; /* numel * itemsize, equal to the bytes present */
} cli_npy_header;

/** An array in C order and host byte order. `data` is never NULL (a 1-byte
 *  allocation backs empty arrays) and is at least 16-byte aligned. */
typedef struct cli_npy {
  int32_t dtype;
  uint32_t rank;
  int64_t shape[PTERUN_MAX_RANK];
  size_t numel;
  size_t nbytes;
  void* data;
  void* alloc_; /* what to free (data may point inside it) */
} cli_npy;

/** Validates magic, version, header and data length of a whole file image.
 *  `name` prefixes error messages. Returns INVALID_DATA (malformed) or
 *  NOT_SUPPORTED (valid .npy the CLI cannot use). */
pterun_status cli_npy_parse_header(const void* buf, size_t size, const char* name,
                                   cli_npy_header* out, char* err, size_t err_size);

/** Parses and copies a whole .npy image into `out` (free with cli_npy_free). */
pterun_status cli_npy_read_buffer(const void* buf, size_t size, const char* name, cli_npy* out,
                                  char* err, size_t err_size);

/** Reads a .npy file. IO_ERROR when it cannot be opened or read. */
pterun_status cli_npy_read_file(const char* path, cli_npy* out, char* err, size_t err_size);

/** Frees an array from a read; safe on a zeroed struct; leaves it zeroed. */
void cli_npy_free(cli_npy* a);

/** numpy descr of a pterun dtype in host byte order ("<f4"), or NULL when
 *  numpy has no equivalent (bfloat16, quantized, sub-byte types). */
const char* cli_npy_descr(int32_t dtype);

/** Builds the full preamble (magic, version, length, padded header) for an
 *  array; *len_out is its length, a multiple of 64. `buf` needs at most
 *  CLI_NPY_MAX_PREAMBLE bytes. NOT_SUPPORTED for a dtype without a descr. */
#define CLI_NPY_MAX_PREAMBLE 1024
pterun_status cli_npy_format_header(int32_t dtype, uint32_t rank, const int64_t* shape, char* buf,
                                    size_t cap, size_t* len_out, char* err, size_t err_size);

/** Writes a C-order array. `nbytes` must equal prod(shape) * itemsize. */
pterun_status cli_npy_write_file(const char* path, int32_t dtype, uint32_t rank,
                                 const int64_t* shape, const void* data, size_t nbytes, char* err,
                                 size_t err_size);

/** "(2, 3)", "(3,)" or "()" into buf (always NUL-terminated). */
void cli_npy_shape_str(uint32_t rank, const int64_t* shape, char* buf, size_t cap);

#endif /* PTERUN_CLI_NPY_H_ */
