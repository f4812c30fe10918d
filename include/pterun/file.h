/* pterun: a file's bytes in memory, brought in the way programs and data
 * files are (pterun_file_mode: small files read, large ones mapped
 * privately; docs/robustness.md, "Files that change on disk"). For
 * libraries built on the runtime that read files of their own
 * (libpterun_devtools' bundled programs). */
#ifndef PTERUN_INCLUDE_PTERUN_FILE_H_
#define PTERUN_INCLUDE_PTERUN_FILE_H_

#include <stddef.h>

#include "pterun/allocator.h"
#include "pterun/data.h"
#include "pterun/export.h"
#include "pterun/log.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pterun_file_image pterun_file_image;

/** The whole file at `path` (64-byte aligned). `allocator` NULL: malloc;
 *  failures are logged through `logger` (NULL: stderr).
 *  @retval PTERUN_STATUS_IO_ERROR  cannot open, read or map it */
PTERUN_API pterun_status pterun_file_image_open(const char* path, pterun_file_mode mode,
                                                const pterun_allocator* allocator,
                                                const pterun_logger* logger,
                                                pterun_file_image** out);
/** A 64-byte aligned copy of `size` bytes at `data`. */
PTERUN_API pterun_status pterun_file_image_copy(const void* data, size_t size,
                                                const pterun_allocator* allocator,
                                                const pterun_logger* logger,
                                                pterun_file_image** out);
PTERUN_API const void* pterun_file_image_data(const pterun_file_image* image);
PTERUN_API size_t pterun_file_image_size(const pterun_file_image* image);
/** NULL is a no-op. */
PTERUN_API void pterun_file_image_close(pterun_file_image* image);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_FILE_H_ */
