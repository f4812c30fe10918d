/* pterun: the event-tracer interface, the core's hooks for developer tools.
 *
 * The runtime knows no profiler, ETDump writer or bundled program: those are
 * libpterun_devtools (pterun/profile.h, pterun/etdump.h, pterun/bundled.h),
 * built on this interface, as ExecuTorch's etdump and bundled_program are on
 * its EventTracer. A tracer is attached to one method when it loads
 * (pterun_method_options.event_tracer, or .profiler, a pterun_profiler, which
 * begins with one); it may allocate then. Execute calls its hooks around
 * every kernel and delegate call; a method without a tracer pays one NULL
 * check per call and reads no clock. Hooks run on the executing thread and
 * must not fail; call_begin/call_end bracket the call, so a tracer that
 * times calls reads its clock there.
 */
#ifndef PTERUN_INCLUDE_PTERUN_EVENT_TRACER_H_
#define PTERUN_INCLUDE_PTERUN_EVENT_TRACER_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/log.h"
#include "pterun/status.h"
#include "pterun/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pterun_method pterun_method;
typedef struct pterun_event_tracer pterun_event_tracer;
/** libpterun_devtools' profiler (pterun/profile.h): a pterun_event_tracer is
 *  its first member, so pterun_method_options.profiler is read as one. */
typedef struct pterun_profiler pterun_profiler;

/** pterun_event_tracer.flags: run the instructions as the program wrote
 *  them (no load-time fusion), so that every event maps onto one of them
 *  (ETDump debug events carry the program's debug handles). */
#define PTERUN_EVENT_TRACER_PROGRAM_ORDER 1u

/** The hooks. Every pointer may be NULL (that hook is not called). */
struct pterun_event_tracer {
  /** sizeof(pterun_event_tracer) as the tracer was compiled: the runtime
   *  reads the hooks that many bytes cover (the struct only grows). */
  size_t struct_size;
  uint32_t flags; /* PTERUN_EVENT_TRACER_* */
  /** At the end of pterun_method_load, the method complete (its instructions
   *  are readable with pterun_method_instruction). A status other than OK
   *  fails the load. `logger` is the method's. */
  pterun_status (*attach)(pterun_event_tracer* self, const pterun_method* method,
                          const char* method_name, const pterun_logger* logger);
  /** At pterun_method_destroy; what the tracer recorded stays its own. */
  void (*detach)(pterun_event_tracer* self);
  /** Around a successful execute (a failed one has no end). */
  void (*execute_begin)(pterun_event_tracer* self);
  void (*execute_end)(pterun_event_tracer* self);
  /** Around instruction `instruction` of chain `chain`, a kernel or delegate
   *  call; `slow_path` is the reason the kernel noted for a slower path
   *  (pterun_kernel_note_slow_path), or NULL. */
  void (*call_begin)(pterun_event_tracer* self, uint32_t chain, uint32_t instruction);
  void (*call_end)(pterun_event_tracer* self, uint32_t chain, uint32_t instruction,
                   pterun_status status, const char* slow_path);
  /** Inside a delegate call (between its call_begin and call_end): one step
   *  of the backend's own, e.g. an XNNPACK node; `id` is its index in the
   *  delegate, `name` static text saying what it is ("FullyConnected").
   *  Backends raise them with pterun_kernel_event_begin/_end (pterun/kernel.h),
   *  as ExecuTorch's delegates do with EVENT_TRACER_START/END_PROFILING_DELEGATE. */
  void (*delegate_event_begin)(pterun_event_tracer* self, uint32_t id, const char* name);
  void (*delegate_event_end)(pterun_event_tracer* self, uint32_t id, const char* name);
};

/* ---- what a tracer may read of a loaded method ---------------------------------- */

typedef enum pterun_instruction_kind {
  PTERUN_INSTRUCTION_OTHER = 0, /* move, jump, free, or folded at load */
  PTERUN_INSTRUCTION_KERNEL = 1,
  PTERUN_INSTRUCTION_DELEGATE = 2
} pterun_instruction_kind;

typedef struct pterun_instruction_info {
  int kind;         /* pterun_instruction_kind */
  const char* name; /* "aten::add.out", a delegate's backend id; NULL otherwise.
                       Valid while the method lives. */
  /** A call's arguments (outputs last), entries of the method's value table:
   *  read during execute (e.g. in call_end) they hold the current values. */
  const pterun_value* const* args;
  size_t nargs;
} pterun_instruction_info;

/** Chains of the method (0 for NULL), and the instructions of one. */
PTERUN_API size_t pterun_method_chain_count(const pterun_method* method);
PTERUN_API size_t pterun_method_chain_length(const pterun_method* method, size_t chain);
/** Instruction i of `chain`, as the method runs it (after fusion and folding).
 *  @retval PTERUN_STATUS_NOT_FOUND chain or index out of range */
PTERUN_API pterun_status pterun_method_instruction(const pterun_method* method, size_t chain,
                                                   size_t i, pterun_instruction_info* out);
/** Bytes of the files the method reads (program + bound .ptd files) and of its
 *  planned buffers: the bounds for what a tracer sizes from counts in the
 *  file (docs/robustness.md, "Memory bounded by the file"). */
PTERUN_API void pterun_method_file_bytes(const pterun_method* method, uint64_t* file_bytes,
                                         uint64_t* planned_bytes);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_EVENT_TRACER_H_ */
