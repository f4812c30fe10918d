/* A bounds-checked little reader for the binary golden files the generators
 * write: any short read sets `bad` and yields zeros. */
#ifndef PTERUN_TESTS_HARNESS_PT_READER_H_
#define PTERUN_TESTS_HARNESS_PT_READER_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
  const uint8_t* p;
  const uint8_t* end;
  int bad;
} reader;

static inline void rd(reader* r, void* dst, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = 1;
    memset(dst, 0, n);
    return;
  }
  memcpy(dst, r->p, n);
  r->p += n;
}
static inline uint8_t rd_u8(reader* r) {
  uint8_t v;
  rd(r, &v, 1);
  return v;
}
static inline uint16_t rd_u16(reader* r) {
  uint16_t v;
  rd(r, &v, 2);
  return v;
}
static inline uint32_t rd_u32(reader* r) {
  uint32_t v;
  rd(r, &v, 4);
  return v;
}
static inline int64_t rd_i64(reader* r) {
  int64_t v;
  rd(r, &v, 8);
  return v;
}
static inline double rd_f64(reader* r) {
  double v;
  rd(r, &v, 8);
  return v;
}
/* A u16-length-prefixed string as a NUL-terminated copy (caller frees). */
static inline char* rd_str(reader* r, size_t* len) {
  uint16_t n = rd_u16(r);
  char* s = calloc((size_t)n + 1, 1);
  if (len) *len = 0;
  if (s == NULL) {
    r->bad = 1;
    return NULL;
  }
  rd(r, s, n);
  if (len) *len = n;
  return s;
}

#endif /* PTERUN_TESTS_HARNESS_PT_READER_H_ */
