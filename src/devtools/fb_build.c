/* The bounded FlatBuffers builder (see fb_build.h). */
#include "src/devtools/fb_build.h"

#include <string.h>

#include "src/devtools/dt_util.h"

void dt_fbb_init(dt_fbb* b, size_t max_bytes) {
  memset(b, 0, sizeof *b);
  b->max_bytes = max_bytes;
  b->minalign = 4;
}

void dt_fbb_free(dt_fbb* b) {
  pterun_free(NULL, b->buf);
  memset(b, 0, sizeof *b);
}

/* Room for `n` more bytes in front of the data (grows by doubling). */
static int reserve(dt_fbb* b, size_t n) {
  if (b->failed) return 0;
  if (n > b->max_bytes || b->len > b->max_bytes - n) {
    b->failed = 1;
    return 0;
  }
  if (b->cap - b->len >= n) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) {
    if (cap > SIZE_MAX / 2) {
      b->failed = 1;
      return 0;
    }
    cap *= 2;
  }
  uint8_t* nb = pterun_alloc(NULL, cap, 16);
  if (nb == NULL) {
    b->failed = 1;
    return 0;
  }
  if (b->len > 0) memcpy(nb + cap - b->len, b->buf + b->cap - b->len, b->len);
  pterun_free(NULL, b->buf);
  b->buf = nb;
  b->cap = cap;
  return 1;
}

static void push(dt_fbb* b, const void* p, size_t n) {
  if (!reserve(b, n)) return;
  b->len += n;
  memcpy(b->buf + b->cap - b->len, p, n);
}

static void pad(dt_fbb* b, size_t n) {
  static const uint8_t zeros[16] = {0};
  while (n > 0 && !b->failed) {
    size_t k = n < sizeof zeros ? n : sizeof zeros;
    push(b, zeros, k);
    n -= k;
  }
}

/* Aligns so that after `extra` more bytes the data is `align`-aligned. */
static void prep(dt_fbb* b, size_t align, size_t extra) {
  if (align > b->minalign) b->minalign = align;
  pad(b, (size_t)(0 - (b->len + extra)) & (align - 1));
}

static void push_u16(dt_fbb* b, uint16_t v) {
  uint8_t le[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  push(b, le, 2);
}
static void push_u32(dt_fbb* b, uint32_t v) {
  uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  push(b, le, 4);
}
static void push_u64(dt_fbb* b, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i) le[i] = (uint8_t)(v >> (8 * i));
  push(b, le, 8);
}

/* Current position as a reference (sizes stay far below 4 GiB: bounded). */
static dt_fbb_ref here(const dt_fbb* b) {
  return b->failed || b->len > UINT32_MAX ? 0 : (dt_fbb_ref)b->len;
}

/* A uoffset to `ref`, written at the current position. */
static void push_offset(dt_fbb* b, dt_fbb_ref ref) {
  prep(b, 4, 0);
  push_u32(b, (uint32_t)(b->len + 4 - ref));
}

dt_fbb_ref dt_fbb_string(dt_fbb* b, const char* s) {
  size_t n = s != NULL ? strlen(s) : 0;
  if (n > UINT32_MAX) b->failed = 1;
  prep(b, 4, n + 1);
  pad(b, 1); /* NUL terminator */
  if (n > 0) push(b, s, n);
  push_u32(b, (uint32_t)n);
  return here(b);
}

dt_fbb_ref dt_fbb_vec_i64(dt_fbb* b, const int64_t* v, size_t n) {
  if (n > (UINT32_MAX >> 3)) b->failed = 1;
  prep(b, 4, n * 8);
  prep(b, 8, n * 8);
  for (size_t i = n; i-- > 0 && !b->failed;) push_u64(b, (uint64_t)v[i]);
  push_u32(b, (uint32_t)n);
  return here(b);
}

dt_fbb_ref dt_fbb_vec_ref(dt_fbb* b, const dt_fbb_ref* v, size_t n) {
  if (n > (UINT32_MAX >> 2)) b->failed = 1;
  prep(b, 4, n * 4);
  for (size_t i = n; i-- > 0 && !b->failed;) push_offset(b, v[i]);
  push_u32(b, (uint32_t)n);
  return here(b);
}

void dt_fbb_table_start(dt_fbb* b) {
  memset(b->field_pos, 0, sizeof b->field_pos);
  b->nfields = 0;
  b->table_start = b->len;
}

static void field(dt_fbb* b, unsigned f) {
  if (f >= DT_FBB_MAX_FIELDS) {
    b->failed = 1;
    return;
  }
  b->field_pos[f] = here(b);
  if (f + 1 > b->nfields) b->nfields = f + 1;
}

void dt_fbb_add_u8(dt_fbb* b, unsigned f, uint8_t v) {
  push(b, &v, 1);
  field(b, f);
}
void dt_fbb_add_u32(dt_fbb* b, unsigned f, uint32_t v) {
  prep(b, 4, 0);
  push_u32(b, v);
  field(b, f);
}
void dt_fbb_add_u64(dt_fbb* b, unsigned f, uint64_t v) {
  prep(b, 8, 0);
  push_u64(b, v);
  field(b, f);
}
void dt_fbb_add_ref(dt_fbb* b, unsigned f, dt_fbb_ref ref) {
  push_offset(b, ref);
  field(b, f);
}

dt_fbb_ref dt_fbb_table_end(dt_fbb* b) {
  prep(b, 4, 0);
  push_u32(b, 0); /* soffset to the vtable, patched below */
  size_t table = b->len;
  size_t object = table - b->table_start;
  for (unsigned f = b->nfields; f-- > 0;)
    push_u16(b, b->field_pos[f] ? (uint16_t)(table - b->field_pos[f]) : 0);
  if (object > UINT16_MAX) b->failed = 1;
  push_u16(b, (uint16_t)object);
  push_u16(b, (uint16_t)(4 + 2 * b->nfields));
  if (b->failed) return 0;
  // The vtable sits just before the table: soffset = table - vtable > 0.
  uint32_t so = (uint32_t)(b->len - table);
  uint8_t* p = b->buf + b->cap - table;
  p[0] = (uint8_t)so;
  p[1] = (uint8_t)(so >> 8);
  p[2] = (uint8_t)(so >> 16);
  p[3] = (uint8_t)(so >> 24);
  return (dt_fbb_ref)table;
}

pterun_status dt_fbb_finish(dt_fbb* b, dt_fbb_ref root, const char ident[4], int size_prefix,
                            const uint8_t** out, size_t* size_out) {
  prep(b, b->minalign, 8 + (size_prefix ? 4 : 0));
  push(b, ident, 4);
  push_offset(b, root);
  if (size_prefix) push_u32(b, (uint32_t)b->len);
  if (b->failed) return PTERUN_STATUS_OUT_OF_MEMORY;
  *out = b->buf + b->cap - b->len;
  *size_out = b->len;
  return PTERUN_STATUS_OK;
}
