/* pterun: version numbers (CMake and the Python package read them from here). */
#ifndef PTERUN_INCLUDE_PTERUN_VERSION_H_
#define PTERUN_INCLUDE_PTERUN_VERSION_H_

#include "pterun/export.h"

#define PTERUN_VERSION_MAJOR 0
#define PTERUN_VERSION_MINOR 1
#define PTERUN_VERSION_PATCH 0
#define PTERUN_VERSION_NUMBER                                                                      \
  (PTERUN_VERSION_MAJOR * 10000 + PTERUN_VERSION_MINOR * 100 + PTERUN_VERSION_PATCH)
#define PTERUN_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the linked library, as PTERUN_VERSION_NUMBER; compare with the
 *  header's macro to detect a header/library mismatch. */
PTERUN_API unsigned pterun_version_number(void);
/** The linked library's version string, e.g. "0.1.0". Static storage. */
PTERUN_API const char* pterun_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_VERSION_H_ */
