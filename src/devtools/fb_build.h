/* A small, bounded FlatBuffers builder (the writer beside fb.h's reader).
 *
 * Builds back to front, as the FlatBuffers format expects: children
 * (strings, vectors, tables) first, each returning a reference, then the
 * table that points at them; one table at a time. Every append checks the
 * caller's byte bound and the allocation; after a failure every call is a
 * no-op and dt_fbb_finish reports it. Allocates (it is a file writer), never
 * on an execute path. */
#ifndef PTERUN_SRC_DEVTOOLS_FB_BUILD_H_
#define PTERUN_SRC_DEVTOOLS_FB_BUILD_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/status.h"

#define DT_FBB_MAX_FIELDS 16

/* A reference to something already written: its distance from the end. */
typedef uint32_t dt_fbb_ref;

typedef struct dt_fbb {
  uint8_t* buf; /* data lives in [buf + cap - len, buf + cap) */
  size_t cap, len, max_bytes, minalign;
  int failed; /* 1: over the bound or out of memory */
  /* the table being built */
  size_t table_start;
  uint32_t field_pos[DT_FBB_MAX_FIELDS]; /* 0: absent */
  unsigned nfields;
} dt_fbb;

void dt_fbb_init(dt_fbb* b, size_t max_bytes);
void dt_fbb_free(dt_fbb* b);

dt_fbb_ref dt_fbb_string(dt_fbb* b, const char* s);
dt_fbb_ref dt_fbb_vec_i64(dt_fbb* b, const int64_t* v, size_t n);
/* A vector of references (tables or strings). */
dt_fbb_ref dt_fbb_vec_ref(dt_fbb* b, const dt_fbb_ref* v, size_t n);

/* Fields go in by vtable slot index (0 for the schema's first field). */
void dt_fbb_table_start(dt_fbb* b);
void dt_fbb_add_u8(dt_fbb* b, unsigned field, uint8_t v);
void dt_fbb_add_u32(dt_fbb* b, unsigned field, uint32_t v);
void dt_fbb_add_u64(dt_fbb* b, unsigned field, uint64_t v);
void dt_fbb_add_ref(dt_fbb* b, unsigned field, dt_fbb_ref ref);
dt_fbb_ref dt_fbb_table_end(dt_fbb* b);

/* Root offset, 4-byte file identifier and, with size_prefix, the u32 length
 * in front (as flatcc's size-prefixed buffers). *out points into the
 * builder. */
pterun_status dt_fbb_finish(dt_fbb* b, dt_fbb_ref root, const char ident[4], int size_prefix,
                            const uint8_t** out, size_t* size_out);

#endif /* PTERUN_SRC_DEVTOOLS_FB_BUILD_H_ */
