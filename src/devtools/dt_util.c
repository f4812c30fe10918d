/* libpterun_devtools' helpers (dt_util.h). */
#include "src/devtools/dt_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

pterun_status dt_fail(const pterun_logger* logger, pterun_status status, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pterun_log(logger, PTERUN_LOG_ERROR, "%s", msg);
  return status;
}

uint64_t dt_clock_ns(void) {
#ifdef PTERUN_BARE_METAL
  return 0; /* no clock without an OS: a firmware profiles with its own timer */
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}
