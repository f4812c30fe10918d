/* pterun: the bounds-checked FlatBuffers reader libpterun uses for .pte and
 * .ptd files, exported for backends that read FlatBuffer payloads (the
 * XNNPACK backend's graphs), so that every untrusted FlatBuffer in pterun is
 * read by one verified implementation.
 *
 * Every accessor checks what it touches against the buffer (table and vtable
 * positions, vtable length, field extents, vector and string extents with
 * overflow checks, alignment, string terminators) and never reads outside
 * it. Scalars are little-endian and read byte-wise. Field "slots" are vtable
 * byte offsets: field id k is slot 4 + 2k. */
#ifndef PTERUN_INCLUDE_PTERUN_FLATBUFFER_H_
#define PTERUN_INCLUDE_PTERUN_FLATBUFFER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The bytes being read (borrowed). */
typedef struct pterun_fb_buf {
  const uint8_t* base;
  size_t size;
} pterun_fb_buf;

/** An opened table (position, vtable, sizes: all checked). */
typedef struct pterun_fb_table {
  const pterun_fb_buf* b;
  size_t pos;   /* table start */
  size_t vt;    /* vtable start */
  size_t vtlen; /* vtable bytes */
  size_t tlen;  /* table inline bytes (from the vtable) */
} pterun_fb_table;

/** A vector whose extent lies inside the buffer. */
typedef struct pterun_fb_vec {
  const pterun_fb_buf* b;
  size_t pos; /* first element */
  uint32_t len;
  size_t elem;
} pterun_fb_vec;

static inline uint16_t pterun_fb_read_u16(const uint8_t* p) {
  return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t pterun_fb_read_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t pterun_fb_read_u64(const uint8_t* p) {
  return (uint64_t)pterun_fb_read_u32(p) | ((uint64_t)pterun_fb_read_u32(p + 4) << 32);
}
static inline float pterun_fb_read_f32(const uint8_t* p) {
  uint32_t u = pterun_fb_read_u32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/** Opens the root table (u32 offset at byte 0). False: malformed. */
PTERUN_API bool pterun_fb_root(const pterun_fb_buf* b, pterun_fb_table* out);

/** Position of field `slot` of `size` inline bytes: 1 present, 0 absent
 *  (also when the vtable is shorter than the schema), -1 malformed. */
PTERUN_API int pterun_fb_field(const pterun_fb_table* t, unsigned slot, size_t size,
                               size_t* pos_out);

/** Reference fields: 1 present (out filled), 0 absent, -1 malformed. Vector
 *  elements are `elem_size` bytes (4 for tables and strings). */
PTERUN_API int pterun_fb_get_table(const pterun_fb_table* t, unsigned slot, pterun_fb_table* out);
PTERUN_API int pterun_fb_get_vector(const pterun_fb_table* t, unsigned slot, size_t elem_size,
                                    pterun_fb_vec* out);
PTERUN_API int pterun_fb_get_string(const pterun_fb_table* t, unsigned slot, const char** s,
                                    uint32_t* len);

/** Element i (< v->len) of a vector of tables. False: malformed. */
PTERUN_API bool pterun_fb_vec_table(const pterun_fb_vec* v, uint32_t i, pterun_fb_table* out);

/** Scalar fields (defined here, once, for the core and every library that
 *  reads a FlatBuffer): check_scalar is false when the field is malformed
 *  (absent is fine); a getter returns `def` when it is absent or malformed. */
static inline bool pterun_fb_check_scalar(const pterun_fb_table* t, unsigned slot, size_t size) {
  size_t pos;
  return pterun_fb_field(t, slot, size, &pos) >= 0;
}
static inline uint64_t pterun_fb_scalar_bits_(const pterun_fb_table* t, unsigned slot, size_t size,
                                              uint64_t def) {
  size_t pos;
  if (pterun_fb_field(t, slot, size, &pos) != 1) return def;
  const uint8_t* p = t->b->base + pos;
  return size == 1 ? p[0] : size == 4 ? pterun_fb_read_u32(p) : pterun_fb_read_u64(p);
}
static inline uint8_t pterun_fb_u8(const pterun_fb_table* t, unsigned slot, uint8_t def) {
  return (uint8_t)pterun_fb_scalar_bits_(t, slot, 1, def);
}
static inline int8_t pterun_fb_i8(const pterun_fb_table* t, unsigned slot, int8_t def) {
  return (int8_t)pterun_fb_scalar_bits_(t, slot, 1, (uint8_t)def);
}
static inline uint32_t pterun_fb_u32(const pterun_fb_table* t, unsigned slot, uint32_t def) {
  return (uint32_t)pterun_fb_scalar_bits_(t, slot, 4, def);
}
static inline int32_t pterun_fb_i32(const pterun_fb_table* t, unsigned slot, int32_t def) {
  return (int32_t)pterun_fb_scalar_bits_(t, slot, 4, (uint32_t)def);
}
static inline uint64_t pterun_fb_u64(const pterun_fb_table* t, unsigned slot, uint64_t def) {
  return pterun_fb_scalar_bits_(t, slot, 8, def);
}
static inline int64_t pterun_fb_i64(const pterun_fb_table* t, unsigned slot, int64_t def) {
  return (int64_t)pterun_fb_scalar_bits_(t, slot, 8, (uint64_t)def);
}
static inline double pterun_fb_f64(const pterun_fb_table* t, unsigned slot, double def) {
  uint64_t d, u;
  memcpy(&d, &def, sizeof d);
  u = pterun_fb_scalar_bits_(t, slot, 8, d);
  memcpy(&def, &u, sizeof def);
  return def;
}

/** Pointer to element i of a scalar vector (i < v->len). */
static inline const uint8_t* pterun_fb_vec_at(const pterun_fb_vec* v, uint32_t i) {
  return v->b->base + v->pos + (size_t)i * v->elem;
}

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_FLATBUFFER_H_ */
