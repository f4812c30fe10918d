/* The program object: a verified .pte image and the indexes derived from it. */
#ifndef PTERUN_SRC_CORE_PROGRAM_INTERNAL_H_
#define PTERUN_SRC_CORE_PROGRAM_INTERNAL_H_

#include "pterun/program.h"
#include "src/core/fb.h"
#include "src/core/internal.h"

struct pterun_program {
  pt_file_image image; /* the bytes (borrowed, copied or mapped) */
  pt_fb_buf fb;        /* flatbuffer region [0, program_size) */
  pt_fb_table root;
  pterun_logger logger;
  pterun_allocator allocator_copy;
  const pterun_allocator* allocator; /* &allocator_copy or NULL */

  int has_extended_header;
  uint64_t program_size;
  uint64_t segment_base; /* 0: no segment can be loaded */
  uint64_t segment_data_size;

  pt_fb_vec plans;    /* [ExecutionPlan] */
  pt_fb_vec segments; /* [DataSegment], len 0 when absent */

  /* Constants: the segment path or the legacy inline buffers. */
  int legacy_constants;
  pt_fb_vec constant_offsets; /* [u64]; segment path */
  const uint8_t* constant_data;
  uint64_t constant_size;
  pt_fb_vec constant_buffers; /* [Buffer]; legacy path */

  /* Mutable data (initial values of planned tensors), segment 0 only. */
  int has_mutable;
  pt_fb_vec mutable_offsets;
  const uint8_t* mutable_data;
  uint64_t mutable_size;

  pt_fb_vec named_data; /* [NamedData], len 0 when absent */

  /* Image bytes given back after packing (release_packed_constants): a
   * later load that needs them fails instead of reading zeros. */
  struct pt_range {
    const uint8_t *begin, *end;
  }* released;
  size_t released_count, released_cap;
};

/* Gives the pages inside [data, data + n) of p's image back to the OS when
 * the image is pterun's own read() copy with the default allocator, and
 * records the range; returns the bytes given back (0: nothing done). */
size_t pt_program_release(pterun_program* p, const void* data, size_t n);

/* Bytes of segment i, bounds-checked against the file. */
pterun_status pt_program_segment(const pterun_program* p, uint64_t i, const uint8_t** data,
                                 uint64_t* size);
/* ExecutionPlan table of method i. */
bool pt_program_plan(const pterun_program* p, size_t i, pt_fb_table* out);
/* Verifies every table reachable from the root (structure and indices). */
pterun_status pt_verify_program(pterun_program* p);

/* Tensor metadata read from a verified Tensor table. */
typedef struct pt_tensor_meta {
  int32_t dtype;
  uint8_t rank;
  uint8_t dynamism;
  uint8_t dim_order[PTERUN_MAX_RANK];
  int64_t sizes[PTERUN_MAX_RANK];
  uint64_t nbytes;
  uint32_t data_buffer_idx;
  int planned; /* allocation_info present */
  uint32_t memory_id;
  uint64_t memory_offset;
  int external;    /* extra_tensor_info.location == EXTERNAL */
  const char* fqn; /* NULL when absent */
} pt_tensor_meta;

/* Reads and checks a Tensor table (sizes, dim order, dtype, overflow). */
pterun_status pt_tensor_meta_read(const pterun_program* p, const pt_fb_table* t, pt_tensor_meta* m,
                                  const char* where);
/* Constant bytes for data_buffer_idx (non-planned, non-external tensor). */
pterun_status pt_program_constant(const pterun_program* p, uint32_t idx, uint64_t nbytes,
                                  const uint8_t** data);
/* Initial bytes for a planned tensor from mutable segment 0. */
pterun_status pt_program_mutable(const pterun_program* p, uint32_t idx, uint64_t nbytes,
                                 const uint8_t** data);

#endif /* PTERUN_SRC_CORE_PROGRAM_INTERNAL_H_ */
