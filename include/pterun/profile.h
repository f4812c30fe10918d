/* pterun: the profiler, one collector of per-instruction events.
 *
 * A profiler is attached to ONE method when it loads
 * (pterun_method_options.profiler); its event storage is sized and allocated
 * then. A method loaded without a profiler pays nothing: execute neither
 * reads the clock nor allocates. With a profiler, every execute times each
 * kernel call (CLOCK_MONOTONIC, nanoseconds) and adds it to per-instruction
 * totals; the first `max_runs` executes are also kept event by event, which
 * is what a Chrome trace and an ETDump (pterun/etdump.h) are written from.
 *
 * The CLI's `--profile` table, `--trace` and `--etdump` all read this object.
 * Not thread-safe: used by the thread that executes the method.
 */
#ifndef PTERUN_INCLUDE_PTERUN_PROFILE_H_
#define PTERUN_INCLUDE_PTERUN_PROFILE_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/allocator.h"
#include "pterun/export.h"
#include "pterun/options.h"
#include "pterun/status.h"
#include "pterun/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pterun_profiler pterun_profiler;

#define PTERUN_PROFILER_DEFAULT_RUNS 16u

/** Options for pterun_profiler_create (zero-initialise for defaults). */
typedef struct pterun_profiler_options {
  /** sizeof(pterun_profiler_options) as the caller was compiled: initialise
   *  with PTERUN_PROFILER_OPTIONS_INIT (the struct can grow, as
   *  pterun_method_options does). */
  size_t struct_size;
  /** Executes kept event by event; later ones only add to the totals.
   *  0: PTERUN_PROFILER_DEFAULT_RUNS. */
  uint32_t max_runs;
  /** 1: also copy each kernel call's output tensor (its last argument) of the
   *  kept executes, for ETDump debug events ("intermediate outputs"). The
   *  bytes (outputs at their load-time capacity, times max_runs, at most
   *  max_output_bytes) are allocated at method load. */
  int record_outputs;
  /** With record_outputs: the most bytes reserved for the copies, over all
   *  kept executes; an output that does not fit is not copied (counted by
   *  pterun_profiler_dropped). 0: max_runs x 4 x (the method's planned
   *  memory + the sizes of the files it reads: program, .ptd): what real
   *  programs need (up to 3.2x on the test fixtures), while a small hostile
   *  file whose instructions all name one large planned tensor cannot make
   *  the profiler ask for more. Set it to record more of a deep program. */
  uint64_t max_output_bytes;
  /** Allocator for the profiler's storage; NULL: the C allocator. */
  const pterun_allocator* allocator;
} pterun_profiler_options;

#define PTERUN_PROFILER_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_profiler_options)

/** Creates an unattached profiler (allocates only its own header). */
PTERUN_API pterun_status pterun_profiler_create(const pterun_profiler_options* options,
                                                pterun_profiler** out);
/** NULL is a no-op. Destroy the method it is attached to first. */
PTERUN_API void pterun_profiler_destroy(pterun_profiler* profiler);
/** Forgets every recorded execute (storage is kept). */
PTERUN_API void pterun_profiler_reset(pterun_profiler* profiler);

/** Name of the method the profiler is attached to ("" before). */
PTERUN_API const char* pterun_profiler_method_name(const pterun_profiler* profiler);
/** Executes recorded since attach/reset (all of them, kept or not). */
PTERUN_API uint64_t pterun_profiler_execute_count(const pterun_profiler* profiler);

/** Totals for one instruction of the method (instructions that are not
 *  kernel or delegate calls have calls == 0). */
typedef struct pterun_profile_instruction {
  uint32_t chain;
  uint32_t instruction; /* index in its chain */
  const char* op_name;  /* "aten::add.out", a delegate's backend id, or NULL */
  int delegate;         /* 1: a delegate call (op_name is the backend, "XnnpackBackend") */
  uint64_t calls;
  uint64_t total_ns, min_ns, max_ns;
  /** NULL, or the kernel's reason for taking a slower path
   *  (pterun_kernel_note_slow_path) the last time it reported one. */
  const char* slow_path;
} pterun_profile_instruction;

/** Instructions of the method, all chains in order. */
PTERUN_API size_t pterun_profiler_instruction_count(const pterun_profiler* profiler);
PTERUN_API pterun_status pterun_profiler_instruction(const pterun_profiler* profiler, size_t i,
                                                     pterun_profile_instruction* out);

/** Totals for one step of a delegate call, as the backend reported it (an
 *  XNNPACK node: pterun_kernel_event_begin/_end around each), in the order
 *  first seen. Up to 1024 steps per delegate call are kept. */
typedef struct pterun_profile_delegate_event {
  uint32_t chain;
  uint32_t instruction; /* the delegate call */
  const char* backend;  /* its backend id, "XnnpackBackend" */
  uint32_t id;          /* the step's index in the delegate (an XNNPACK node index) */
  const char* name;     /* what the step is ("FullyConnected"): the backend's static text */
  uint64_t calls;
  uint64_t total_ns, min_ns, max_ns;
} pterun_profile_delegate_event;

PTERUN_API size_t pterun_profiler_delegate_event_count(const pterun_profiler* profiler);
PTERUN_API pterun_status pterun_profiler_delegate_event(const pterun_profiler* profiler, size_t i,
                                                        pterun_profile_delegate_event* out);

/** One kept execute: its wall time. */
PTERUN_API size_t pterun_profiler_run_count(const pterun_profiler* profiler);
PTERUN_API pterun_status pterun_profiler_run(const pterun_profiler* profiler, size_t run,
                                             uint64_t* start_ns, uint64_t* end_ns);

/** One kept kernel call. `output` is set when outputs are recorded. */
typedef struct pterun_profile_event {
  uint32_t run;
  uint32_t instruction; /* index for pterun_profiler_instruction */
  uint64_t start_ns, end_ns;
  int has_output;
  int32_t output_dtype;
  uint32_t output_rank;
  int64_t output_sizes[PTERUN_MAX_RANK];
  int64_t output_strides[PTERUN_MAX_RANK]; /* elements; the tensor's dim order */
  const void* output_data;                 /* owned by the profiler, dense */
  size_t output_nbytes;
} pterun_profile_event;

PTERUN_API size_t pterun_profiler_event_count(const pterun_profiler* profiler);
PTERUN_API pterun_status pterun_profiler_event(const pterun_profiler* profiler, size_t k,
                                               pterun_profile_event* out);
/** Kernel calls that were timed but not kept (beyond the reserved events),
 *  and outputs not copied for lack of reserved bytes. */
PTERUN_API void pterun_profiler_dropped(const pterun_profiler* profiler, uint64_t* events_out,
                                        uint64_t* outputs_out);

/** Writes the kept executes as Chrome trace JSON (chrome://tracing,
 *  Perfetto): one complete event per kernel call, microseconds.
 *  @retval PTERUN_STATUS_IO_ERROR */
PTERUN_API pterun_status pterun_profiler_write_chrome_trace(const pterun_profiler* profiler,
                                                            const char* path);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_PROFILE_H_ */
