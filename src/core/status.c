/* Status names and descriptions, generated from PTERUN_STATUS_LIST. */
#include "pterun/status.h"
#include "pterun/version.h"

const char* pterun_status_str(pterun_status status) {
  switch (status) {
#define PT_CASE_(name, value, text)                                                                \
  case PTERUN_STATUS_##name: return text;
    PTERUN_STATUS_LIST(PT_CASE_)
#undef PT_CASE_
    default: return "unknown status";
  }
}

const char* pterun_status_name(pterun_status status) {
  switch (status) {
#define PT_CASE_(name, value, text)                                                                \
  case PTERUN_STATUS_##name: return #name;
    PTERUN_STATUS_LIST(PT_CASE_)
#undef PT_CASE_
    default: return "UNKNOWN";
  }
}

unsigned pterun_version_number(void) {
  return PTERUN_VERSION_NUMBER;
}
const char* pterun_version_string(void) {
  return PTERUN_VERSION_STRING;
}
