/* Bounds-checked FlatBuffers primitives (see fb.h). */
#include "src/core/fb.h"

static bool in_range(const pt_fb_buf* b, size_t pos, size_t len) {
  return pos <= b->size && len <= b->size - pos;
}

bool pt_fb_table_at(const pt_fb_buf* b, size_t pos, pt_fb_table* out) {
  if ((pos & 3) != 0 || !in_range(b, pos, 4)) return false;
  // The vtable lives at pos - soffset (signed); compute in 64-bit signed.
  int64_t vt = (int64_t)pos - (int64_t)(int32_t)pt_rd_u32(b->base + pos);
  if (vt < 0 || (vt & 1) != 0 || !in_range(b, (size_t)vt, 4)) return false;
  size_t vtlen = pt_rd_u16(b->base + vt);
  size_t tlen = pt_rd_u16(b->base + vt + 2);
  if (vtlen < 4 || (vtlen & 1) != 0 || !in_range(b, (size_t)vt, vtlen)) return false;
  if (tlen < 4 || !in_range(b, pos, tlen)) return false;
  out->b = b;
  out->pos = pos;
  out->vt = (size_t)vt;
  out->vtlen = vtlen;
  out->tlen = tlen;
  return true;
}

bool pt_fb_root(const pt_fb_buf* b, pt_fb_table* out) {
  if (b->size < 8) return false;
  return pt_fb_table_at(b, pt_rd_u32(b->base), out);
}

int pt_fb_field(const pt_fb_table* t, unsigned slot, size_t size, size_t* pos_out) {
  if (slot + 2 > t->vtlen) return 0; /* older writer: vtable shorter than schema */
  size_t off = pt_rd_u16(t->b->base + t->vt + slot);
  if (off == 0) return 0;
  // Fields are checked against the buffer, not the vtable's inline size:
  // ExecuTorch's Python writer records an inline size that can stop short of
  // a trailing 8-byte field (the official verifiers do the same).
  if (off < 4 || !in_range(t->b, t->pos + off, size)) return -1;
  *pos_out = t->pos + off;
  return 1;
}

bool pt_fb_check_scalar(const pt_fb_table* t, unsigned slot, size_t size) {
  return pterun_fb_check_scalar(t, slot, size);
}

/* Out of line in the core (one copy of the code, many readers); the
 * definitions are pterun/flatbuffer.h's. */
#define PT_FB_SCALAR(name, type)                                                                   \
  type pt_fb_##name(const pt_fb_table* t, unsigned slot, type def) {                               \
    return pterun_fb_##name(t, slot, def);                                                         \
  }
PT_FB_SCALAR(u8, uint8_t)
PT_FB_SCALAR(i8, int8_t)
PT_FB_SCALAR(i32, int32_t)
PT_FB_SCALAR(u32, uint32_t)
PT_FB_SCALAR(i64, int64_t)
PT_FB_SCALAR(u64, uint64_t)
PT_FB_SCALAR(f64, double)
#undef PT_FB_SCALAR

/* Follows the u32 offset stored at `pos` (relative to pos). */
static bool follow(const pt_fb_buf* b, size_t pos, size_t* target) {
  if (!in_range(b, pos, 4)) return false;
  uint64_t t = (uint64_t)pos + pt_rd_u32(b->base + pos);
  if (t >= b->size) return false;
  *target = (size_t)t;
  return true;
}

static bool vector_at(const pt_fb_buf* b, size_t pos, size_t elem, pt_fb_vec* out) {
  if ((pos & 3) != 0 || !in_range(b, pos, 4)) return false;
  uint32_t len = pt_rd_u32(b->base + pos);
  size_t bytes;
  if (__builtin_mul_overflow((size_t)len, elem, &bytes) || !in_range(b, pos + 4, bytes))
    return false;
  // Elements wider than 4 bytes are aligned to their size by the writer.
  if (elem == 8 && ((pos + 4) & 7) != 0) return false;
  out->b = b;
  out->pos = pos + 4;
  out->len = len;
  out->elem = elem;
  return true;
}

static bool string_at(const pt_fb_buf* b, size_t pos, const char** s, uint32_t* len) {
  if ((pos & 3) != 0 || !in_range(b, pos, 4)) return false;
  uint32_t n = pt_rd_u32(b->base + pos);
  // n bytes plus the NUL terminator the format requires.
  if (!in_range(b, pos + 4, (size_t)n + 1) || b->base[pos + 4 + n] != 0) return false;
  *s = (const char*)(b->base + pos + 4);
  *len = n;
  return true;
}

int pt_fb_get_table(const pt_fb_table* t, unsigned slot, pt_fb_table* out) {
  size_t pos, target;
  int r = pt_fb_field(t, slot, 4, &pos);
  if (r != 1) return r;
  if (!follow(t->b, pos, &target) || !pt_fb_table_at(t->b, target, out)) return -1;
  return 1;
}

int pt_fb_get_vector(const pt_fb_table* t, unsigned slot, size_t elem_size, pt_fb_vec* out) {
  size_t pos, target;
  int r = pt_fb_field(t, slot, 4, &pos);
  if (r != 1) return r;
  if (!follow(t->b, pos, &target) || !vector_at(t->b, target, elem_size, out)) return -1;
  return 1;
}

int pt_fb_get_string(const pt_fb_table* t, unsigned slot, const char** s, uint32_t* len) {
  size_t pos, target;
  int r = pt_fb_field(t, slot, 4, &pos);
  if (r != 1) return r;
  if (!follow(t->b, pos, &target) || !string_at(t->b, target, s, len)) return -1;
  return 1;
}

bool pt_fb_vec_table(const pt_fb_vec* v, uint32_t i, pt_fb_table* out) {
  size_t target;
  if (i >= v->len || v->elem != 4) return false;
  return follow(v->b, v->pos + (size_t)i * 4, &target) && pt_fb_table_at(v->b, target, out);
}

bool pt_fb_vec_string(const pt_fb_vec* v, uint32_t i, const char** s, uint32_t* len) {
  size_t target;
  if (i >= v->len || v->elem != 4) return false;
  return follow(v->b, v->pos + (size_t)i * 4, &target) && string_at(v->b, target, s, len);
}

/* ---- the exported reader (pterun/flatbuffer.h) ---- */
bool pterun_fb_root(const pterun_fb_buf* b, pterun_fb_table* out) {
  return b != NULL && out != NULL && pt_fb_root(b, out);
}
int pterun_fb_field(const pterun_fb_table* t, unsigned slot, size_t size, size_t* pos_out) {
  return pt_fb_field(t, slot, size, pos_out);
}
int pterun_fb_get_table(const pterun_fb_table* t, unsigned slot, pterun_fb_table* out) {
  return pt_fb_get_table(t, slot, out);
}
int pterun_fb_get_vector(const pterun_fb_table* t, unsigned slot, size_t elem_size,
                         pterun_fb_vec* out) {
  return pt_fb_get_vector(t, slot, elem_size, out);
}
int pterun_fb_get_string(const pterun_fb_table* t, unsigned slot, const char** s, uint32_t* len) {
  return pt_fb_get_string(t, slot, s, len);
}
bool pterun_fb_vec_table(const pterun_fb_vec* v, uint32_t i, pterun_fb_table* out) {
  return pt_fb_vec_table(v, i, out);
}
