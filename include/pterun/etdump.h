/* pterun: ETDump, ExecuTorch's profiling/debug file, written from a profiler.
 *
 * The file is what ExecuTorch's ETDumpGen writes (a size-prefixed FlatBuffer,
 * identifier ED00, schema devtools/etdump/etdump_schema_flatcc.fbs) and is
 * read by executorch.devtools.Inspector(etdump_path=..., etrecord=...): one
 * RunData "Execute" per kept execute, a ProfileEvent "native_call_<op>" per
 * kernel call (chain index, instruction id, start/end in ns) and one
 * "Method::execute". With outputs recorded (pterun_profiler_options
 * .record_outputs) and a debug buffer path, each kernel's output tensor is
 * also a DebugEvent whose bytes are in the debug buffer file
 * (Inspector(..., debug_buffer_path=...)).
 */
#ifndef PTERUN_INCLUDE_PTERUN_ETDUMP_H_
#define PTERUN_INCLUDE_PTERUN_ETDUMP_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/options.h"
#include "pterun/profile.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Options for pterun_etdump_write (zero-initialise for defaults). */
typedef struct pterun_etdump_options {
  /** sizeof(pterun_etdump_options) as the caller was compiled: initialise
   *  with PTERUN_ETDUMP_OPTIONS_INIT (the struct can grow, as
   *  pterun_method_options does). */
  size_t struct_size;
  /** Where intermediate outputs go (NULL: no debug events). Needs a
   *  profiler created with record_outputs. */
  const char* debug_buffer_path;
  /** RunData.bundled_input_index: the bundled test case the executes ran
   *  (ETRecord reference outputs are matched by it); -1 or 0 with
   *  `has_bundled_input_index` 0: none. */
  int has_bundled_input_index;
  int32_t bundled_input_index;
  /** Largest file pterun will build; 0: 1 GiB. */
  size_t max_bytes;
} pterun_etdump_options;

#define PTERUN_ETDUMP_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_etdump_options)

/**
 * Writes the profiler's kept executes as an ETDump file.
 * @retval PTERUN_STATUS_INVALID_STATE  no execute was kept (a debug buffer
 *         of a profiler without recorded outputs is written empty)
 * @retval PTERUN_STATUS_OUT_OF_MEMORY  over max_bytes
 * @retval PTERUN_STATUS_IO_ERROR
 */
PTERUN_API pterun_status pterun_etdump_write(const pterun_profiler* profiler, const char* path,
                                             const pterun_etdump_options* options);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_ETDUMP_H_ */
