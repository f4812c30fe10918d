/* A small, bounds-checked FlatBuffers reader.
 *
 * Every accessor validates what it touches against the buffer: table and
 * vtable positions, vtable length, field positions inside the table, vector
 * and string extents (with overflow checks), alignment of offsets and
 * vectors, and string NUL terminators. A failed check returns false and the
 * caller reports *which* field was bad. Scalars are read byte-wise (little
 * endian), so nothing assumes host alignment or byte order. */
#ifndef PTERUN_SRC_CORE_FB_H_
#define PTERUN_SRC_CORE_FB_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pterun/flatbuffer.h"

/* The exported reader's types (pterun/flatbuffer.h) under the core's names. */
typedef pterun_fb_buf pt_fb_buf;
typedef pterun_fb_table pt_fb_table;
typedef pterun_fb_vec pt_fb_vec;

static inline uint16_t pt_rd_u16(const uint8_t* p) {
  return pterun_fb_read_u16(p);
}
static inline uint32_t pt_rd_u32(const uint8_t* p) {
  return pterun_fb_read_u32(p);
}
static inline uint64_t pt_rd_u64(const uint8_t* p) {
  return pterun_fb_read_u64(p);
}
static inline double pt_rd_f64(const uint8_t* p) {
  uint64_t u = pt_rd_u64(p);
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* Opens the table at absolute position pos. */
bool pt_fb_table_at(const pt_fb_buf* b, size_t pos, pt_fb_table* out);
/* Opens the root table (u32 offset at byte 0). */
bool pt_fb_root(const pt_fb_buf* b, pt_fb_table* out);

/* Position of field `slot` (vtable byte offset 4,6,8..) if present and of
 * `size` bytes inside the table: returns 1 present, 0 absent, -1 malformed. */
int pt_fb_field(const pt_fb_table* t, unsigned slot, size_t size, size_t* pos_out);

/* Scalars: absent gives the default; a malformed field gives the default too,
 * but pt_fb_check_scalar() (used by the verifier) reports it. */
bool pt_fb_check_scalar(const pt_fb_table* t, unsigned slot, size_t size);
uint8_t pt_fb_u8(const pt_fb_table* t, unsigned slot, uint8_t def);
int8_t pt_fb_i8(const pt_fb_table* t, unsigned slot, int8_t def);
int32_t pt_fb_i32(const pt_fb_table* t, unsigned slot, int32_t def);
uint32_t pt_fb_u32(const pt_fb_table* t, unsigned slot, uint32_t def);
int64_t pt_fb_i64(const pt_fb_table* t, unsigned slot, int64_t def);
uint64_t pt_fb_u64(const pt_fb_table* t, unsigned slot, uint64_t def);
double pt_fb_f64(const pt_fb_table* t, unsigned slot, double def);

/* Reference fields: return 1 present (out filled), 0 absent, -1 malformed. */
int pt_fb_get_table(const pt_fb_table* t, unsigned slot, pt_fb_table* out);
int pt_fb_get_vector(const pt_fb_table* t, unsigned slot, size_t elem_size, pt_fb_vec* out);
int pt_fb_get_string(const pt_fb_table* t, unsigned slot, const char** s, uint32_t* len);

/* Elements of vectors of tables / strings / scalars (i < v->len assumed
 * checked by the caller; still bounds-safe). */
bool pt_fb_vec_table(const pt_fb_vec* v, uint32_t i, pt_fb_table* out);
bool pt_fb_vec_string(const pt_fb_vec* v, uint32_t i, const char** s, uint32_t* len);
static inline const uint8_t* pt_fb_vec_ptr(const pt_fb_vec* v, uint32_t i) {
  return v->b->base + v->pos + (size_t)i * v->elem;
}
static inline int32_t pt_fb_vec_i32(const pt_fb_vec* v, uint32_t i) {
  return (int32_t)pt_rd_u32(pt_fb_vec_ptr(v, i));
}
static inline int64_t pt_fb_vec_i64(const pt_fb_vec* v, uint32_t i) {
  return (int64_t)pt_rd_u64(pt_fb_vec_ptr(v, i));
}
static inline uint64_t pt_fb_vec_u64(const pt_fb_vec* v, uint32_t i) {
  return pt_rd_u64(pt_fb_vec_ptr(v, i));
}
static inline uint8_t pt_fb_vec_u8(const pt_fb_vec* v, uint32_t i) {
  return *pt_fb_vec_ptr(v, i);
}

#endif /* PTERUN_SRC_CORE_FB_H_ */
