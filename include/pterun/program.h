/* pterun: loading a .pte program and querying it before any method is loaded.
 *
 * IMPORTANT: a program file is untrusted input. pterun verifies every
 * flatbuffer offset, vtable, length, union tag, string and index before it
 * reads anything; a buffer handed to pterun_program_load_buffer() without
 * `copy` must not be modified while the program is alive, and must be
 * aligned to 16 bytes (mmap and pterun's own copies are page aligned).
 */
#ifndef PTERUN_INCLUDE_PTERUN_PROGRAM_H_
#define PTERUN_INCLUDE_PTERUN_PROGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/data.h"
#include "pterun/export.h"
#include "pterun/status.h"
#include "pterun/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A verified program. Immutable after loading: its query functions and
 *  pterun_method_load() may be called from several threads at once. */
typedef struct pterun_program pterun_program;

/**
 * Verifies and wraps a .pte image held by the caller (zero copy unless
 * options->copy). The program keeps pointers into `data`.
 * @retval PTERUN_STATUS_INVALID_PROGRAM       malformed (the log names what)
 * @retval PTERUN_STATUS_INCOMPATIBLE_VERSION  an "ETxx" identifier other than ET12
 * @retval PTERUN_STATUS_INVALID_ARGUMENT      NULL data, or data not 16-aligned
 * @retval PTERUN_STATUS_OUT_OF_MEMORY
 */
PTERUN_API pterun_status pterun_program_load_buffer(const void* data, size_t size,
                                                    const pterun_load_options* options,
                                                    pterun_program** program_out);

/** Loads a .pte file by mmap or by reads. @retval PTERUN_STATUS_IO_ERROR */
PTERUN_API pterun_status pterun_program_load_file(const char* path, pterun_file_mode mode,
                                                  const pterun_load_options* options,
                                                  pterun_program** program_out);

/** NULL is a no-op. Every method loaded from the program must be destroyed first. */
PTERUN_API void pterun_program_destroy(pterun_program* program);

/** Facts about the container. */
typedef struct pterun_program_info {
  uint64_t file_size;
  uint64_t program_size; /* flatbuffer region */
  int has_extended_header;
  uint64_t segment_base_offset; /* 0 without extended header */
  uint64_t segment_data_size;
  size_t segment_count;
  size_t constant_count;      /* constant table entries, placeholder excluded */
  uint64_t constant_bytes;    /* bytes of constant data (segment or inline) */
  int legacy_constant_buffer; /* 1: constants inline in the flatbuffer */
  size_t mutable_data_count;  /* entries in mutable-data segment 0 */
  size_t named_data_count;
  size_t method_count;
} pterun_program_info;

PTERUN_API void pterun_program_get_info(const pterun_program* program,
                                        pterun_program_info* info_out);

PTERUN_API size_t pterun_program_method_count(const pterun_program* program);
/** Name of method i (owned by the program), or NULL if out of range. */
PTERUN_API const char* pterun_program_method_name(const pterun_program* program, size_t i);
/** @retval PTERUN_STATUS_NOT_FOUND no method has that name */
PTERUN_API pterun_status pterun_program_find_method(const pterun_program* program, const char* name,
                                                    size_t* index_out);

/** Counts of one method's parts. */
typedef struct pterun_method_info {
  const char* name;
  size_t input_count;
  size_t output_count;
  size_t value_count;
  size_t operator_count;
  size_t instruction_count; /* all chains */
  size_t delegate_count;
  size_t planned_buffer_count; /* arenas the caller may supply */
} pterun_method_info;

PTERUN_API pterun_status pterun_program_method_info(const pterun_program* program, size_t method,
                                                    pterun_method_info* info_out);

/** Size in bytes of planned buffer `buffer` of `method` (what a caller must
 *  supply, or what pterun allocates). */
PTERUN_API pterun_status pterun_program_planned_buffer_size(const pterun_program* program,
                                                            size_t method, size_t buffer,
                                                            uint64_t* size_out);

/** Describes one input or output of a method. */
typedef struct pterun_io_info {
  int32_t tag; /* pterun_value_tag */
  /* tensors: */
  int32_t dtype;
  uint8_t rank;
  uint8_t dynamism; /* pterun_dynamism */
  uint8_t dim_order[PTERUN_MAX_RANK];
  int64_t sizes[PTERUN_MAX_RANK]; /* exact, or the bound */
  uint64_t nbytes;                /* at the serialized sizes */
  int planned;                    /* 1: lives in planned memory (inputs are copied in) */
  /* scalars: the value compiled into the program */
  int64_t int_value;
  double double_value;
} pterun_io_info;

PTERUN_API pterun_status pterun_program_method_input(const pterun_program* program, size_t method,
                                                     size_t i, pterun_io_info* info_out);
PTERUN_API pterun_status pterun_program_method_output(const pterun_program* program, size_t method,
                                                      size_t i, pterun_io_info* info_out);
/** Operator i of a method's table: name ("aten::add") and overload ("out",
 *  "" when absent). Strings are owned by the program. */
PTERUN_API pterun_status pterun_program_method_operator(const pterun_program* program,
                                                        size_t method, size_t i,
                                                        const char** name_out,
                                                        const char** overload_out);
/** Backend id of delegate i ("XnnpackBackend"). */
PTERUN_API pterun_status pterun_program_method_delegate(const pterun_program* program,
                                                        size_t method, size_t i,
                                                        const char** backend_out);

/** Named data entry i stored inside the program (used by delegates): its key
 *  (owned by the program) and the size of its segment.
 *  @retval PTERUN_STATUS_NOT_FOUND i out of range */
PTERUN_API pterun_status pterun_program_named_data(const pterun_program* program, size_t i,
                                                   const char** key_out, uint64_t* size_out);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_PROGRAM_H_ */
