/* Status names and descriptions, generated from PTERUN_STATUS_LIST. */
#include "pterun/status.h"
#include "pterun/version.h"
#include "src/core/internal.h"

/* Entry i of the packed lists is status i: every value is its position. */
enum {
#define PT_POS_(name, value, text) PT_STATUS_POS_##name,
  PTERUN_STATUS_LIST(PT_POS_)
#undef PT_POS_
};
#define PT_DENSE_(name, value, text) _Static_assert(PT_STATUS_POS_##name == (value), #name);
PTERUN_STATUS_LIST(PT_DENSE_)
#undef PT_DENSE_
#define PT_TEXT_(name, value, text) text "\0"
#define PT_NAME_(name, value, text) #name "\0"

const char* pterun_status_str(pterun_status status) {
  const char* s = pt_name_in(PTERUN_STATUS_LIST(PT_TEXT_), (unsigned)status);
  return s != NULL ? s : "unknown status";
}

const char* pterun_status_name(pterun_status status) {
  const char* s = pt_name_in(PTERUN_STATUS_LIST(PT_NAME_), (unsigned)status);
  return s != NULL ? s : "UNKNOWN";
}

unsigned pterun_version_number(void) {
  return PTERUN_VERSION_NUMBER;
}
const char* pterun_version_string(void) {
  return PTERUN_VERSION_STRING;
}
