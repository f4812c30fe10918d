/* Options structs that can grow: every public options struct starts with
 * `size_t struct_size` (docs/architecture.md, "ABI"). */
#include <string.h>

#include "pterun/options.h"
#include "src/core/internal.h"

pterun_status pterun_options_read(const void* in, void* out, size_t size,
                                  const pterun_logger* logger, const char* what) {
  int why = pterun_options_copy(in, out, size);
  if (why == 0) return PTERUN_STATUS_OK;
  size_t given;
  memcpy(&given, in, sizeof given);
  if (why == 1) {
    char init[64]; /* pterun_x_options -> PTERUN_X_OPTIONS_INIT */
    size_t k = 0;
    for (; what[k] != 0 && k + 6 < sizeof init; ++k) /* ASCII: not the locale's toupper */
      init[k] = (char)(what[k] >= 'a' && what[k] <= 'z' ? what[k] - 'a' + 'A' : what[k]);
    memcpy(init + k, "_INIT", 6);
    return pt_fail(logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "%s.struct_size is %zu: initialise the options with %s", what, given, init);
  }
  return pt_fail(logger, PTERUN_STATUS_INVALID_ARGUMENT,
                 "%s.struct_size is %zu, this pterun knows %zu bytes, and a field it does not "
                 "know is set",
                 what, given, size);
}
