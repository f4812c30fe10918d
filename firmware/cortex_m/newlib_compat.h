/* Force-included in the bare-metal build. Debian's arm-none-eabi GCC finds its
 * own <stdint.h> first, which leaves newlib's <inttypes.h> without PRId64 &
 * co.: newlib's integer definitions come first. (include/tgmath.h stands in
 * for newlib's <tgmath.h>.) */
#ifndef PTERUN_FIRMWARE_NEWLIB_COMPAT_H_
#define PTERUN_FIRMWARE_NEWLIB_COMPAT_H_
#include <sys/_stdint.h>
#include <stdint.h>
#endif
