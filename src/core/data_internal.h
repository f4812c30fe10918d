/* Lookups into verified .ptd files. */
#ifndef PTERUN_SRC_CORE_DATA_INTERNAL_H_
#define PTERUN_SRC_CORE_DATA_INTERNAL_H_

#include "pterun/data.h"

typedef struct pt_data_entry {
  const uint8_t* bytes;
  uint64_t size;
  int has_layout;
  int32_t dtype;
  uint8_t rank;
  int64_t sizes[PTERUN_MAX_RANK];
  uint8_t dim_order[PTERUN_MAX_RANK];
} pt_data_entry;

/* The file's size in bytes (what its tensors can hold). */
uint64_t pt_data_file_size(const pterun_data* d);

/* Finds `key`; returns 1 found, 0 not found. */
int pt_data_find(const pterun_data* d, const char* key, pt_data_entry* out);

#endif
