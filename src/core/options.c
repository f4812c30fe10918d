/* Options structs that can grow: every public options struct starts with
 * `size_t struct_size` (docs/architecture.md, "ABI"). */
#include <ctype.h>
#include <string.h>

#include "pterun/options.h"
#include "src/core/internal.h"

pterun_status pterun_options_read(const void* in, void* out, size_t size,
                                  const pterun_logger* logger, const char* what) {
  memset(out, 0, size);
  memcpy(out, &size, sizeof size);
  if (in == NULL) return PTERUN_STATUS_OK;
  size_t given;
  memcpy(&given, in, sizeof given);
  if (given < sizeof given) {
    char init[64]; /* pterun_x_options -> PTERUN_X_OPTIONS_INIT */
    size_t k = 0;
    for (; what[k] != 0 && k + 6 < sizeof init; ++k)
      init[k] = (char)toupper((unsigned char)what[k]);
    memcpy(init + k, "_INIT", 6);
    return pt_fail(logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "%s.struct_size is %zu: initialise the options with %s", what, given, init);
  }
  // A caller built against a newer pterun: fine as long as it leaves every
  // field this pterun does not know at its default (zero).
  for (size_t k = size; k < given; ++k)
    if (((const unsigned char*)in)[k] != 0)
      return pt_fail(logger, PTERUN_STATUS_INVALID_ARGUMENT,
                     "%s.struct_size is %zu, this pterun knows %zu bytes, and a field it does not "
                     "know is set",
                     what, given, size);
  memcpy((unsigned char*)out + sizeof given, (const unsigned char*)in + sizeof given,
         (given < size ? given : size) - sizeof given);
  return PTERUN_STATUS_OK;
}
