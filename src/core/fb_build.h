/* A small, bounded FlatBuffers builder (the writer beside fb.h's reader).
 *
 * Builds back to front, as the FlatBuffers format expects: children
 * (strings, vectors, tables) first, each returning a reference, then the
 * table that points at them; one table at a time. Every append checks the
 * caller's byte bound and the allocation; after a failure every call is a
 * no-op and pt_fbb_finish reports it. Allocates (it is a file writer), never
 * on an execute path. */
#ifndef PTERUN_SRC_CORE_FB_BUILD_H_
#define PTERUN_SRC_CORE_FB_BUILD_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/status.h"

#define PT_FBB_MAX_FIELDS 16

/* A reference to something already written: its distance from the end. */
typedef uint32_t pt_fbb_ref;

typedef struct pt_fbb {
  uint8_t* buf; /* data lives in [buf + cap - len, buf + cap) */
  size_t cap, len, max_bytes, minalign;
  int failed; /* 1: over the bound or out of memory */
  /* the table being built */
  size_t table_start;
  uint32_t field_pos[PT_FBB_MAX_FIELDS]; /* 0: absent */
  unsigned nfields;
} pt_fbb;

void pt_fbb_init(pt_fbb* b, size_t max_bytes);
void pt_fbb_free(pt_fbb* b);

pt_fbb_ref pt_fbb_string(pt_fbb* b, const char* s);
pt_fbb_ref pt_fbb_vec_i64(pt_fbb* b, const int64_t* v, size_t n);
/* A vector of references (tables or strings). */
pt_fbb_ref pt_fbb_vec_ref(pt_fbb* b, const pt_fbb_ref* v, size_t n);

/* Fields go in by vtable slot index (0 for the schema's first field). */
void pt_fbb_table_start(pt_fbb* b);
void pt_fbb_add_u8(pt_fbb* b, unsigned field, uint8_t v);
void pt_fbb_add_u32(pt_fbb* b, unsigned field, uint32_t v);
void pt_fbb_add_u64(pt_fbb* b, unsigned field, uint64_t v);
void pt_fbb_add_ref(pt_fbb* b, unsigned field, pt_fbb_ref ref);
pt_fbb_ref pt_fbb_table_end(pt_fbb* b);

/* Root offset, 4-byte file identifier and, with size_prefix, the u32 length
 * in front (as flatcc's size-prefixed buffers). *out points into the
 * builder. */
pterun_status pt_fbb_finish(pt_fbb* b, pt_fbb_ref root, const char ident[4], int size_prefix,
                            const uint8_t** out, size_t* size_out);

#endif /* PTERUN_SRC_CORE_FB_BUILD_H_ */
