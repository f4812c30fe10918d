/* Internal helpers shared by the core modules of libpterun. */
#ifndef PTERUN_SRC_CORE_INTERNAL_H_
#define PTERUN_SRC_CORE_INTERNAL_H_

/* C standard */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* pterun public */
#include "pterun/allocator.h"
#include "pterun/log.h"
#include "pterun/options.h"
#include "pterun/status.h"
#include "pterun/tensor.h"

#if defined(__GNUC__)
#define PT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PT_PRINTF(a, b)
#endif

/* ---- logging (log.c) ---- */
/* pterun_log itself (one varargs entry, not two): calls from inside the
 * library bind to it directly (-Bsymbolic-functions). */
#define pt_log pterun_log
void pt_vlog(const pterun_logger* logger, pterun_log_level level, const char* fmt, va_list ap);
/* Logs at ERROR level and returns status, for `return pt_fail(...)`. */
pterun_status pt_fail(const pterun_logger* logger, pterun_status status, const char* fmt, ...)
    PT_PRINTF(3, 4);
/* The logger to use: `logger` when given (fn != NULL), else the fallback. */
pterun_logger pt_logger_or(const pterun_logger* logger, const pterun_logger* fallback);

/* Longest message a logger receives (bytes, without the NUL). */
#define PT_LOG_MAX 1023

/* ---- text for humans (text.c) ---- */
/* `len` bytes of `text` escaped as pterun_escape_text() does; keep_newlines
 * lets '\n' through (multi-line log messages). Returns the full length. */
size_t pt_escape(const char* text, size_t len, char* out, size_t cap, bool keep_newlines);
/* `text` escaped into buf (cut at cap, never inside an escape or a
 * character); returns buf, for "%s" arguments quoting names from a file. */
const char* pt_esc(const char* text, char* buf, size_t cap);
#define PT_ESC_CAP 256
/* Entry `index` of a list of names packed into one literal, each ended by
 * "\0" ("ok\0" "internal error\0"; the literal's own NUL ends the list), or
 * NULL past its end. For the dense enums' names (statuses, dtypes, value
 * tags): a walk over a few dozen bytes instead of a switch of loads and
 * jumps. Names must not be empty. */
const char* pt_name_in(const char* names, unsigned index);

/* Status propagation is PTERUN_TRY (pterun/status.h): one macro for the
 * core and every kernel library. */

/* Options structs: pterun_options_read() (pterun/options.h, options.c). */

/* ---- memory (alloc.c) ---- */
/* Allocation through an optional caller allocator; NULL means malloc. All
 * memory is zeroed by pt_alloc. */
void* pt_alloc(const pterun_allocator* a, size_t size, size_t alignment);
/* Like pt_alloc without zeroing: for large buffers that are written before
 * being read (planned arenas, file images), so untouched pages stay free. */
void* pt_alloc_raw(const pterun_allocator* a, size_t size, size_t alignment);
void pt_free(const pterun_allocator* a, void* p);

/* ---- overflow-checked arithmetic ---- */
static inline bool pt_add_overflow_u64(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_add_overflow(a, b, out);
}
static inline bool pt_mul_overflow_u64(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline bool pt_add_overflow_size(size_t a, size_t b, size_t* out) {
  return __builtin_add_overflow(a, b, out);
}
static inline bool pt_mul_overflow_size(size_t a, size_t b, size_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline size_t pt_align_up(size_t v, size_t a) {
  return (v + (a - 1)) & ~(a - 1);
}

/* Natural alignment of a dtype's elements (at most 8). */
static inline bool pt_dtype_aligned(const void* p, int dtype) {
  return pterun_dtype_aligned(p, dtype) != 0;
}

/* ---- files (file.c) ---- */
typedef struct pt_file_image {
  const uint8_t* data;
  size_t size;
  void* owned;   /* pt_alloc'd copy, or NULL */
  void* mapping; /* mmap base, or NULL */
  size_t map_size;
  const pterun_allocator* allocator;
} pt_file_image;

/* Loads a whole file (mmap or read into 64-byte aligned memory). */
pterun_status pt_file_image_open(const char* path, int mode, const pterun_allocator* a,
                                 const pterun_logger* logger, pt_file_image* out);
/* Gives the whole pages inside [data, data + n) of an owned image (not a
 * mapping) back to the OS (they read as zeros afterwards); returns the bytes
 * given back, 0 where the platform cannot. */
size_t pt_file_image_drop_pages(pt_file_image* img, const uint8_t* data, size_t n);
/* Copies a caller buffer into owned aligned memory. */
pterun_status pt_file_image_copy(const void* data, size_t size, const pterun_allocator* a,
                                 const pterun_logger* logger, pt_file_image* out);
void pt_file_image_close(pt_file_image* img);

#endif /* PTERUN_SRC_CORE_INTERNAL_H_ */
