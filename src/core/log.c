/* Logging through the caller's callback (or stderr by default). */
#include <stdio.h>
#include <string.h>

#include "src/core/internal.h"

static void silent_log(void* ctx, pterun_log_level level, const char* message) {
  (void)ctx;
  (void)level;
  (void)message;
}

pterun_logger pterun_logger_silent(void) {
  pterun_logger l = {silent_log, NULL, PTERUN_LOG_SILENT};
  return l;
}

_Static_assert(PTERUN_LOG_DEBUG == 0 && PTERUN_LOG_INFO == 1 && PTERUN_LOG_WARNING == 2 &&
                   PTERUN_LOG_ERROR == 3,
               "pterun_log_level_str's list follows pterun_log_level");
const char* pterun_log_level_str(pterun_log_level level) {
  const char* s = pt_name_in("debug\0info\0warning\0error\0", (unsigned)level);
  return s != NULL ? s : "silent";
}

pterun_logger pt_logger_or(const pterun_logger* logger, const pterun_logger* fallback) {
  if (logger != NULL && logger->fn != NULL) return *logger;
  if (fallback != NULL) return *fallback;
  pterun_logger def = {NULL, NULL, PTERUN_LOG_WARNING};
  return def;
}

void pt_vlog(const pterun_logger* logger, pterun_log_level level, const char* fmt, va_list ap) {
  pterun_log_level min = PTERUN_LOG_WARNING;
  if (logger != NULL && (logger->fn != NULL || logger->min_level != 0)) min = logger->min_level;
  if (level < min || min >= PTERUN_LOG_SILENT) return;
  // Fixed buffers: logging must never allocate (it runs on the execute path).
  char raw[PT_LOG_MAX + 1], buf[PT_LOG_MAX + 1];
  int n = vsnprintf(raw, sizeof raw, fmt, ap);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
  // A safety net under the quoting sites (which escape names themselves):
  // no control byte or invalid UTF-8 reaches the callback or stderr.
  pt_escape(raw, len, buf, sizeof buf, true);
  if (logger != NULL && logger->fn != NULL) {
    logger->fn(logger->ctx, level, buf);
  } else {
    fprintf(stderr, "pterun %s: %s\n", pterun_log_level_str(level), buf);
  }
}

pterun_status pt_fail(const pterun_logger* logger, pterun_status status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pt_vlog(logger, PTERUN_LOG_ERROR, fmt, ap);
  va_end(ap);
  return status;
}

void pterun_log(const pterun_logger* logger, pterun_log_level level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pt_vlog(logger, level, fmt, ap);
  va_end(ap);
}
