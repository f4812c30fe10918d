/* pterun: options structs that can grow. Every public options struct starts
 * with `size_t struct_size`; pterun reads that many bytes and takes the
 * default for fields a caller's older header did not have (docs/architecture.md). */
#ifndef PTERUN_INCLUDE_PTERUN_OPTIONS_H_
#define PTERUN_INCLUDE_PTERUN_OPTIONS_H_

#include <stddef.h>

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
