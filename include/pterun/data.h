/* pterun: external named data (.ptd FlatTensor files). */
#ifndef PTERUN_INCLUDE_PTERUN_DATA_H_
#define PTERUN_INCLUDE_PTERUN_DATA_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/allocator.h"
#include "pterun/export.h"
#include "pterun/options.h"
#include "pterun/log.h"
#include "pterun/status.h"
#include "pterun/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a file's bytes are brought into memory. */
typedef enum pterun_file_mode {
  PTERUN_FILE_MMAP = 0, /* default: files up to 64 MiB are read into memory (immune to the
                           file changing on disk); larger ones are mapped privately */
  PTERUN_FILE_READ = 1  /* read() into pterun-owned memory */
} pterun_file_mode;

/** A verified .ptd file: key -> bytes (+ tensor layout). Immutable once
 *  loaded; safe to share between threads and methods. */
typedef struct pterun_data pterun_data;

/** Options for loading programs and data files. Initialise with
 *  PTERUN_LOAD_OPTIONS_INIT (every field its default), then set what you
 *  need. Like pterun_method_options it can grow at its end: pterun reads
 *  `struct_size` bytes and takes the default for fields beyond; 0 is refused
 *  with INVALID_ARGUMENT. `options` NULL: every default. */
typedef struct pterun_load_options {
  size_t struct_size; /* sizeof(pterun_load_options) as the caller was compiled */
  pterun_logger logger;
  const pterun_allocator* allocator; /* NULL: malloc */
  int copy;                          /* buffer loads: 1 copies the bytes */
} pterun_load_options;

#define PTERUN_LOAD_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_load_options)

/**
 * Verifies and wraps a .ptd image. Without `copy` the buffer is borrowed: it
 * must stay unchanged and alive until pterun_data_destroy().
 * @retval PTERUN_STATUS_INVALID_DATA  malformed file (the log says what)
 */
PTERUN_API pterun_status pterun_data_load_buffer(const void* data, size_t size,
                                                 const pterun_load_options* options,
                                                 pterun_data** data_out);
/** Loads a .ptd file. @retval PTERUN_STATUS_IO_ERROR cannot open/read/map */
PTERUN_API pterun_status pterun_data_load_file(const char* path, pterun_file_mode mode,
                                               const pterun_load_options* options,
                                               pterun_data** data_out);
/** NULL is a no-op. */
PTERUN_API void pterun_data_destroy(pterun_data* data);

/** Number of named entries. */
PTERUN_API size_t pterun_data_count(const pterun_data* data);
/** Key of entry i, NUL-terminated, owned by `data`; NULL if out of range. */
PTERUN_API const char* pterun_data_key(const pterun_data* data, size_t i);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_DATA_H_ */
