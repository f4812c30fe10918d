/* pterun: log callback. Details of every failure go here; the status code is
 * returned from the call itself. */
#ifndef PTERUN_INCLUDE_PTERUN_LOG_H_
#define PTERUN_INCLUDE_PTERUN_LOG_H_

#include <stddef.h>

#include "pterun/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pterun_log_level {
  PTERUN_LOG_DEBUG = 0,
  PTERUN_LOG_INFO = 1,
  PTERUN_LOG_WARNING = 2,
  PTERUN_LOG_ERROR = 3,
  PTERUN_LOG_SILENT = 4 /* as min_level: deliver nothing */
} pterun_log_level;

/** Receives one complete message (no trailing newline). `message` is valid only
 *  during the call. May be called from any thread that calls into pterun. */
typedef void (*pterun_log_fn)(void* ctx, pterun_log_level level, const char* message);

/** A logger is passed by value in the options of each object that can fail
 *  (program, method, registry); objects created from another inherit it.
 *  A zero-initialised logger (fn == NULL) writes WARNING and ERROR lines to
 *  stderr. There is no process-wide logger. */
typedef struct pterun_logger {
  pterun_log_fn fn;
  void* ctx;
  pterun_log_level min_level; /* messages below this level are dropped */
} pterun_logger;

/** A logger that drops everything (for tests and quiet callers). */
PTERUN_API pterun_logger pterun_logger_silent(void);

/**
 * Copies `text` for a human reader: printable ASCII and well-formed UTF-8 are
 * kept; every other byte (C0/C1 control characters, DEL, invalid UTF-8)
 * becomes the four characters "\xHH". Strings from a program file pass
 * through this before pterun prints or logs them, so a crafted file cannot
 * put escape sequences on a terminal. Writes at most `cap` bytes including
 * the terminating NUL and never cuts an escape or a character in half.
 * Returns the length of the whole escaped text (like snprintf: a result
 * >= cap means `out` holds a prefix). `text` NULL is "".
 */
PTERUN_API size_t pterun_escape_text(const char* text, char* out, size_t cap);

/** Formats and delivers one message through `logger` (NULL or fn == NULL:
 *  the default stderr logger), as the runtime does; for backends and other
 *  libraries that report through the logger they were given. Never
 *  allocates (messages are cut at 1 KiB). */
PTERUN_API void pterun_log(const pterun_logger* logger, pterun_log_level level, const char* fmt,
                           ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Name of a level ("error"). Static storage. */
PTERUN_API const char* pterun_log_level_str(pterun_log_level level);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_LOG_H_ */
