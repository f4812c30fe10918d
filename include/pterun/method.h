/* pterun: loading and executing one method of a program. */
#ifndef PTERUN_INCLUDE_PTERUN_METHOD_H_
#define PTERUN_INCLUDE_PTERUN_METHOD_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/allocator.h"
#include "pterun/data.h"
#include "pterun/event_tracer.h"
#include "pterun/export.h"
#include "pterun/options.h"
#include "pterun/log.h"
#include "pterun/program.h"
#include "pterun/registry.h"
#include "pterun/status.h"
#include "pterun/tensor.h"
#include "pterun/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded method: its value table, planned memory and resolved kernels.
 *  Not thread-safe: one thread at a time may set inputs and execute. Many
 *  methods (of one or several programs) may run concurrently. */
typedef struct pterun_method pterun_method;

/** The thread pool (include/pterun/threadpool.h, library libpterun_threadpool).
 *  libpterun only stores the pointer and hands it to kernels. */
typedef struct pterun_threadpool pterun_threadpool;

#define PTERUN_DEFAULT_INSTRUCTION_BUDGET 10000000u
#define PTERUN_DEFAULT_SCRATCH_BYTES ((size_t)4 << 20)
#define PTERUN_NO_SCRATCH ((size_t)-1)

/** Options for pterun_method_load. Initialise with PTERUN_METHOD_OPTIONS_INIT
 *  (every field its default), then set what you need:
 *    pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
 *    o.registry = reg;
 *  The struct can grow at its end in later releases without breaking callers:
 *  pterun reads `struct_size` bytes and takes the default for fields beyond. */
typedef struct pterun_method_options {
  /** sizeof(pterun_method_options) as the caller was compiled; 0 is refused
   *  (INVALID_ARGUMENT), as is a larger size whose extra bytes are not zero. */
  size_t struct_size;
  /** Where operators are looked up. NULL: pterun_registry_default(). */
  const pterun_registry* registry;
  /** Caller-owned planned buffers, one per planned buffer of the method, each
   *  at least pterun_program_planned_buffer_size() bytes and 16-aligned; they
   *  must outlive the method. NULL: pterun allocates them. */
  void* const* planned_buffers;
  size_t planned_buffer_count;
  /** External data files (.ptd) for EXTERNAL tensors; searched in order. */
  const pterun_data* const* data;
  size_t data_count;
  /** Instructions one execute may run; 0: PTERUN_DEFAULT_INSTRUCTION_BUDGET. */
  uint64_t instruction_budget;
  /** Bytes of per-instruction scratch for kernels (packing buffers for
   *  matrix products, ...), allocated once at load. 0: what the method's
   *  kernels reserved at prepare and its delegates at init
   *  (pterun_kernel_scratch_reserve; the largest instruction's need, none when
   *  nothing reserved any; PTERUN_DEFAULT_SCRATCH_BYTES with no_kernel_prepare);
   *  PTERUN_NO_SCRATCH: none (kernels then use slower paths that need no
   *  scratch). */
  size_t scratch_bytes;
  /** NULL: the program's allocator. */
  const pterun_allocator* allocator;
  /** fn == NULL: the program's logger. */
  pterun_logger logger;
  /** Optional, with planned_buffers: the size in bytes of each caller buffer.
   *  A buffer smaller than the method's plan is refused with MEMORY_PLAN
   *  (without sizes pterun cannot tell, and trusts the caller). */
  const size_t* planned_buffer_sizes;
  /** 1: keep layout operators on constant weights (permute_copy of a Linear
   *  weight, ...) in the instruction stream. By default, when the registry has
   *  the load-time optimiser (pterun/optimize.h), they run once at load into
   *  pterun-owned memory (reported by pterun_method_memory) and are skipped by
   *  execute. */
  int no_constant_folding;
  /** Optional collector of per-instruction timings and events
   *  (pterun/profile.h, libpterun_devtools), attached to this method and
   *  sized here; one profiler per method. It is the method's event tracer
   *  (pterun/event_tracer.h) unless event_tracer is set. NULL: execute reads
   *  no clock. */
  pterun_profiler* profiler;
  /** The pool kernels may run their work on (pterun_threadpool_create; one per
   *  process is the intent, shared by every method). NULL: every kernel runs on
   *  the calling thread. The method never creates threads itself. The pool
   *  must outlive the method; methods sharing a pool may execute concurrently
   *  (their tasks take turns). */
  pterun_threadpool* threadpool;
  /** At most this many threads (the caller's included) per kernel of this
   *  method; 0: the whole pool. */
  size_t max_threads;
  /** 1: skip the kernels' load-time preparation (pterun_kernel.prepare:
   *  packed weights, ...): every kernel runs its unprepared path. For tests
   *  comparing the prepared path with the reference one. */
  int no_kernel_prepare;
  /** 1: keep every instruction as the program has it. By default, when the
   *  registry has the load-time optimiser (pterun/optimize.h), chains such as
   *  convolution -> relu run as one fused operator when a registered library
   *  provides it (docs/architecture.md, "Load-time fusion"; recurrent
   *  cells too), and copies of a contiguous block of their input read it in
   *  place ("Copy elision"), except
   *  in a method whose event tracer asks for the program's order (a profiler
   *  recording outputs: ETDump debug events map onto the program's
   *  instructions). For tests comparing fused and unfused
   *  results. */
  int no_fusion;
  /** Optional event tracer (pterun/event_tracer.h), attached to this method
   *  at load; it takes the place of `profiler`. NULL: none. */
  pterun_event_tracer* event_tracer;
  /** 1: once every reader of a constant has packed it for good (the
   *  transposed weight of an addmm / mm whose row count is fixed), give its
   *  bytes in the program's image back to the operating system, so the
   *  weight is resident once (docs/architecture.md, "Weights"). Only for a
   *  program pterun read into its own memory with the default allocator
   *  (mmapped pages cost nothing once packing stops touching them). A later
   *  method load from the same program that needs such a constant fails
   *  with INVALID_STATE: for a caller that loads each method once (the CLI). */
  int release_packed_constants;
} pterun_method_options;

#define PTERUN_METHOD_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_method_options)

/**
 * Loads a method: builds the value table, binds planned memory, resolves
 * every operator, with the registry's optimiser runs the layout operators on
 * constant weights once (unless no_constant_folding) and fuses operator
 * chains (unless no_fusion),
 * runs the kernels' load-time preparation (unless no_kernel_prepare) and sets
 * up the kernels' scratch arena. All of
 * the method's memory is allocated here — its runtime structures in one
 * block, the scratch arena, folded constants, and the planned buffers the
 * caller did not supply — and none later; pterun_method_memory() reports
 * how much. `options` NULL: every default.
 * @retval PTERUN_STATUS_NOT_FOUND         no such method
 * @retval PTERUN_STATUS_OPERATOR_MISSING  kernels missing: the log lists every
 *         missing operator and the pterun component that provides each
 * @retval PTERUN_STATUS_BACKEND_UNAVAILABLE a delegate's backend is not in the
 *         registry (the log names the pterun component that ships it)
 * @retval other                           a backend refused its payload (the log
 *         says why, e.g. which node type it does not implement)
 * @retval PTERUN_STATUS_INVALID_PROGRAM   values/instructions malformed
 * @retval PTERUN_STATUS_MEMORY_PLAN       planned tensor outside its buffer,
 *         or caller buffers missing/too small/misaligned
 * @retval PTERUN_STATUS_INVALID_EXTERNAL_DATA  external tensor missing or mismatched
 * @retval PTERUN_STATUS_INVALID_ARGUMENT  options->struct_size is 0, or larger than this
 *         pterun knows with fields it does not know set
 */
PTERUN_API pterun_status pterun_method_load(const pterun_program* program, const char* name,
                                            const pterun_method_options* options,
                                            pterun_method** method_out);
/** NULL is a no-op. */
PTERUN_API void pterun_method_destroy(pterun_method* method);

/** Bytes pterun allocated for this method, all of it at load: runtime
 *  structures (including kernel scratch, folded constants, the kernels'
 *  prepared state such as packed weights, and what delegate backends hold)
 *  and planned buffers it owns. */
PTERUN_API void pterun_method_memory(const pterun_method* method, size_t* runtime_bytes_out,
                                     size_t* planned_bytes_out);

/**
 * Before loading: the bytes the delegate backends of method `name` would
 * allocate (compiled graphs, packed weights, intermediate arenas), from each
 * backend's memory_query. Uses the options' registry and data files.
 * @retval PTERUN_STATUS_BACKEND_UNAVAILABLE a backend is not registered
 */
PTERUN_API pterun_status pterun_method_backend_memory(const pterun_program* program,
                                                      const char* name,
                                                      const pterun_method_options* options,
                                                      size_t* bytes_out);

/** A method's memory by part (pterun_method_memory_parts after load,
 *  pterun_program_method_memory before). Initialise with
 *  PTERUN_METHOD_MEMORY_INFO_INIT; pterun fills the fields that fit the
 *  caller's struct_size. runtime_bytes and planned_bytes are
 *  pterun_method_memory()'s figures; the next four are parts of runtime_bytes. */
typedef struct pterun_method_memory_info {
  size_t struct_size;    /* sizeof(pterun_method_memory_info) as the caller was compiled */
  size_t runtime_bytes;  /* everything but planned buffers */
  size_t planned_bytes;  /* planned buffers pterun allocates (not the caller's) */
  size_t prepared_bytes; /* kernels' prepared state: packed and folded weights */
  size_t delegate_bytes; /* held by delegate backends */
  size_t folded_bytes;   /* constants computed at load (permuted weights, ...) */
  size_t scratch_bytes;  /* the kernels' scratch arena */
  /** pterun_program_method_memory only (else 0): the most bytes the load held
   *  at once through the allocator, its temporaries included. */
  size_t load_peak_bytes;
  /** Part of runtime_bytes: fused results the optimiser gave bytes of their
   *  own because the memory plan put them over what their fused call reads
   *  (each would otherwise cost a copy per run, or stay unfused). */
  size_t fused_result_bytes;
} pterun_method_memory_info;

#define PTERUN_METHOD_MEMORY_INFO_INIT PTERUN_OPTIONS_INIT(pterun_method_memory_info)

/** After load: pterun_method_memory() by part.
 *  @retval PTERUN_STATUS_INVALID_ARGUMENT NULL, or info->struct_size too small */
PTERUN_API pterun_status pterun_method_memory_parts(const pterun_method* method,
                                                    pterun_method_memory_info* info);

/**
 * Before loading: what pterun_method_load(program, name, options) would
 * allocate, by part — the same figures pterun_method_memory_parts() gives
 * after that load. Measured by a trial load: the method is loaded with the
 * same options through an allocator that counts every block (over
 * options->allocator) and destroyed again, so the query costs one load's
 * time and, briefly, its memory (load_peak_bytes); nothing stays allocated.
 * Caller planned buffers are not touched (the trial loads into temporary
 * ones of the same sizes); a profiler in the options is not attached (a
 * profiler that records outputs turns fusion off at the real load, which
 * the figure then does not reflect).
 * @retval any status pterun_method_load would return
 */
PTERUN_API pterun_status pterun_program_method_memory(const pterun_program* program,
                                                      const char* name,
                                                      const pterun_method_options* options,
                                                      pterun_method_memory_info* info);

PTERUN_API size_t pterun_method_input_count(const pterun_method* method);
PTERUN_API size_t pterun_method_output_count(const pterun_method* method);

/** A caller's tensor: `dim_order` NULL means contiguous; `nbytes` is the size
 *  of the memory at `data`. */
typedef struct pterun_tensor_view {
  int32_t dtype;
  uint32_t rank;
  const int64_t* sizes;
  const uint8_t* dim_order;
  void* data;
  size_t nbytes;
} pterun_tensor_view;

/**
 * Binds input i. The method's tensor is resized to the view's sizes (within
 * its bounds), then a planned input is copied in; an unplanned one points at
 * the caller's memory, which must then stay valid through execute.
 *
 * A planned input whose memory the program's plan reuses for other tensors
 * (common: the plan recycles an input's bytes once it is dead) is consumed by
 * execute and must be set again before the next execute; otherwise execute
 * returns INVALID_STATE instead of computing on overwritten bytes.
 *
 * A refused call (any status but OK, for an index in range) unbinds input i:
 * the memory of an earlier successful call is no longer referenced (the
 * caller may free it), and execute returns INVALID_STATE naming the input
 * until a later call binds it again. The same holds for
 * pterun_method_set_input_value.
 * @retval PTERUN_STATUS_INPUT_MISMATCH dtype, rank, dim order, shape or size wrong
 */
PTERUN_API pterun_status pterun_method_set_input(pterun_method* method, size_t i,
                                                 const pterun_tensor_view* view);
/** Binds a scalar or None input (must equal the value compiled in). */
PTERUN_API pterun_status pterun_method_set_input_value(pterun_method* method, size_t i,
                                                       const pterun_value* value);
/** Gives an unplanned output tensor its memory (>= its nbytes).
 *  @retval PTERUN_STATUS_INVALID_STATE the output is planned or constant */
PTERUN_API pterun_status pterun_method_set_output_buffer(pterun_method* method, size_t i,
                                                         void* data, size_t nbytes);

/**
 * Runs every instruction once. Never allocates, never spawns threads.
 * @retval PTERUN_STATUS_INVALID_STATE     an input is not set, was consumed by the
 *         previous execute, or its last set_input was refused (see
 *         pterun_method_set_input); the log names the input
 * @retval PTERUN_STATUS_INSTRUCTION_BUDGET the budget ran out (e.g. a loop)
 * @retval other                            the failing kernel's status; the log
 *         names the instruction and the operator
 */
PTERUN_API pterun_status pterun_method_execute(pterun_method* method);

/** Output i after execute. The value (and a tensor's data) belongs to the
 *  method and is valid until the next execute or destroy. */
PTERUN_API pterun_status pterun_method_output(const pterun_method* method, size_t i,
                                              const pterun_value** value_out);

/** The profiler given at load (pterun_method_options.profiler), or NULL. */
PTERUN_API pterun_profiler* pterun_method_profiler(const pterun_method* method);

/** Changes the instruction budget for later executes (0: the default). */
PTERUN_API void pterun_method_set_instruction_budget(pterun_method* method, uint64_t budget);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_METHOD_H_ */
