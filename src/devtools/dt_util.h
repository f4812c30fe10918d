/* libpterun_devtools' helpers. The library is built on the runtime's public
 * API only (pterun/event_tracer.h, pterun/flatbuffer.h, pterun/file.h,
 * pterun_alloc, pterun_log): what it needs beyond that is here. Internal
 * names carry the prefix dt_. */
#ifndef PTERUN_SRC_DEVTOOLS_DT_UTIL_H_
#define PTERUN_SRC_DEVTOOLS_DT_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pterun/allocator.h"
#include "pterun/kernel_util.h" /* PTERUN_TRY */
#include "pterun/log.h"
#include "pterun/status.h"

#if defined(__GNUC__)
#define DT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DT_PRINTF(a, b)
#endif

/* Logs at ERROR level through `logger` and returns `status`. */
pterun_status dt_fail(const pterun_logger* logger, pterun_status status, const char* fmt, ...)
    DT_PRINTF(3, 4);

static inline size_t dt_align_up(size_t v, size_t a) {
  return (v + (a - 1)) & ~(a - 1);
}

/* Monotonic clock in nanoseconds (0 without an OS). */
uint64_t dt_clock_ns(void);

#endif /* PTERUN_SRC_DEVTOOLS_DT_UTIL_H_ */
