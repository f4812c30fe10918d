/* pterun: options structs that can grow. Every public options struct starts
 * with `size_t struct_size`; pterun reads that many bytes and takes the
 * default for fields a caller's older header did not have (docs/architecture.md). */
#ifndef PTERUN_INCLUDE_PTERUN_OPTIONS_H_
#define PTERUN_INCLUDE_PTERUN_OPTIONS_H_

#include <stddef.h>
#include <string.h>

#include "pterun/export.h"
#include "pterun/log.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * For libraries that take a growing options struct (pterun's own calls use
 * it too): copies the caller's options `in` (NULL: every default) into
 * `out`, which is `size` bytes — sizeof the struct the library was built
 * with. Fields beyond the caller's struct_size are zero (their defaults); a
 * larger struct_size is accepted when the fields this build does not know
 * are zero. `what` names the type in the message ("pterun_method_options").
 * @retval PTERUN_STATUS_INVALID_ARGUMENT struct_size 0, or an unknown field set
 */
PTERUN_API pterun_status pterun_options_read(const void* in, void* out, size_t size,
                                             const pterun_logger* logger, const char* what);

/**
 * The copy pterun_options_read() makes, without its log message, for
 * libraries that do not link libpterun (libpterun_threadpool): 0 copied,
 * 1 struct_size below sizeof(size_t), 2 a field beyond `size` is set.
 */
static inline int pterun_options_copy(const void* in, void* out, size_t size) {
  size_t given;
  memset(out, 0, size);
  memcpy(out, &size, sizeof size);
  if (in == NULL) return 0;
  memcpy(&given, in, sizeof given);
  if (given < sizeof given) return 1;
  /* A caller built against a newer pterun: fine as long as it leaves every
   * field this build does not know at its default (zero). */
  for (size_t k = size; k < given; ++k)
    if (((const unsigned char*)in)[k] != 0) return 2;
  memcpy((unsigned char*)out + sizeof given, (const unsigned char*)in + sizeof given,
         (given < size ? given : size) - sizeof given);
  return 0;
}

#ifdef __cplusplus
}
#endif

/** `type` with every field at its default and struct_size set:
 *    pterun_method_options o = PTERUN_OPTIONS_INIT(pterun_method_options);
 *  (each options type also has its own PTERUN_<TYPE>_INIT). Designated in C
 *  and value-initialised in C++, so -Wmissing-field-initializers stays quiet. */
#ifdef __cplusplus
#define PTERUN_OPTIONS_INIT(type)                                                                  \
  ([] {                                                                                            \
    type pterun_o_ = {};                                                                           \
    pterun_o_.struct_size = sizeof pterun_o_;                                                      \
    return pterun_o_;                                                                              \
  }())
#else
#define PTERUN_OPTIONS_INIT(type) {.struct_size = sizeof(type)}
#endif

#endif /* PTERUN_INCLUDE_PTERUN_OPTIONS_H_ */
