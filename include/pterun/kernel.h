/* pterun: the kernel-author ABI. A kernel library exports one function that
 * returns a constant table of kernels; a caller adds it to a registry with
 * pterun_registry_add(). Nothing runs before main. */
#ifndef PTERUN_INCLUDE_PTERUN_KERNEL_H_
#define PTERUN_INCLUDE_PTERUN_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/log.h"
#include "pterun/status.h"
#include "pterun/tensor.h"
#include "pterun/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever pterun_kernel, pterun_kernel_library or the kernel calling
 * convention changes incompatibly. */
#define PTERUN_KERNEL_ABI_VERSION 3u

/** Per-call context handed to a kernel (opaque). */
typedef struct pterun_kernel_context pterun_kernel_context;

/**
 * A kernel. `args` follow ExecuTorch's convention: every schema argument in
 * declared order, then one extra slot for the return value (for out-variants
 * the out tensor again; for several outs a tensor list). Kernels check counts
 * and kinds themselves and report problems through pterun_kernel_fail().
 * A kernel never allocates; it resizes its outputs with pterun_out_resize().
 * PTERUN_KERNEL (below) spells the signature; pterun/kernel_util.h has the
 * kit that goes with this ABI: PTERUN_CHECK_NARGS, PTERUN_FAIL_ARG, the
 * half/bfloat16 conversions, broadcasting and layout helpers.
 */
typedef pterun_status (*pterun_kernel_fn)(pterun_kernel_context* ctx, pterun_value** args,
                                          size_t nargs);

/** The one spelling of a kernel's (and a prepare's) definition or
 *  declaration: the pterun_kernel_fn signature with the parameters named ctx,
 *  args and nargs:
 *  `static PTERUN_KERNEL(my_relu_out) { PTERUN_CHECK_NARGS(ctx, nargs, 2); ... }` */
#define PTERUN_KERNEL(name)                                                                        \
  pterun_status name(pterun_kernel_context* ctx, pterun_value** args, size_t nargs)

/**
 * Optional load-time preparation (ABI 3). When a method loads, every kernel
 * call whose kernel has `prepare` gets one prepare call with the
 * instruction's arguments: constant tensors (program constants, external
 * data, constants folded at load) have their data; every other tensor has
 * its dtype and sizes but `data` NULL and capacity 0 (planned memory is not
 * valid yet and must not be read). A prepare may keep per-instruction state
 * with pterun_kernel_state_alloc(); execute finds it with
 * pterun_kernel_state(). It returns OK when it has nothing to prepare (the
 * arguments do not suit it): execute then takes its ordinary path and
 * reports bad arguments itself. Any other status fails the method load.
 */
typedef pterun_status (*pterun_kernel_prepare_fn)(pterun_kernel_context* ctx, pterun_value** args,
                                                  size_t nargs);

/** One kernel per operator: the kernel handles every dtype and layout it
 *  supports and refuses the others with a message (ABI 2 dropped ABI 1's
 *  unused dtype/dim-order key; ABI 3 added `prepare`; docs/architecture.md).
 *  Write tables with designated initialisers so `prepare` defaults to NULL:
 *  `{.op = "aten::add.out", .fn = my_add}`. */
typedef struct pterun_kernel {
  const char* op; /* "aten::add.out": name, then "." and overload if any */
  pterun_kernel_fn fn;
  pterun_kernel_prepare_fn prepare; /* NULL: nothing to do at load */
} pterun_kernel;

typedef struct pterun_kernel_library {
  uint32_t abi_version;  /* PTERUN_KERNEL_ABI_VERSION */
  const char* component; /* pterun component name, e.g. "kernels_portable" */
  size_t count;
  const pterun_kernel* kernels;
} pterun_kernel_library;

/**
 * Records a failure: logs "<operator>: <message>" at ERROR level through the
 * method's logger and returns `status` so a kernel can write
 * `return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "...", ...);`
 */
PTERUN_API pterun_status pterun_kernel_fail(pterun_kernel_context* ctx, pterun_status status,
                                            const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Name of the operator being run ("aten::add.out"). */
PTERUN_API const char* pterun_kernel_op_name(const pterun_kernel_context* ctx);

/**
 * Tells a profiler (pterun/profile.h) that this call took a slower path
 * than the operator has (e.g. no scratch for packing, an unsupported
 * layout). `reason` must be a string literal or otherwise outlive the
 * method. Costs one store; without a profiler nothing reads it.
 */
PTERUN_API void pterun_kernel_note_slow_path(pterun_kernel_context* ctx, const char* reason);

/**
 * Scratch memory for the duration of this call, from the method's scratch
 * arena (sized by the caller at method load; reset after every instruction).
 * Returns NULL when the arena cannot satisfy the request: kernels must then
 * use a path that needs no scratch or fail with OUT_OF_MEMORY.
 */
PTERUN_API void* pterun_kernel_scratch(pterun_kernel_context* ctx, size_t nbytes, size_t align);

/**
 * During prepare: this instruction's execute will ask pterun_kernel_scratch()
 * for `nbytes` (64-aligned). Call once per request an execute makes; they add
 * up. The method's arena, allocated once after the prepares, is the largest
 * instruction's total (pterun_method_options.scratch_bytes overrides it; with
 * no_kernel_prepare it is PTERUN_DEFAULT_SCRATCH_BYTES), so a method holds no
 * more scratch than its biggest kernel call needs. A kernel that asks for
 * scratch without reserving it finds what the arena happens to hold,
 * possibly nothing. A no-op outside prepare.
 */
PTERUN_API void pterun_kernel_scratch_reserve(pterun_kernel_context* ctx, size_t nbytes);

/** Bytes pterun_kernel_scratch(ctx, n, align) could still return during
 *  this call (0 without an arena). */
PTERUN_API size_t pterun_kernel_scratch_available(const pterun_kernel_context* ctx, size_t align);

/**
 * During prepare only: `nbytes` of memory (aligned to `align`, a power of
 * two up to 4096) that lives as long as the method, allocated at load from
 * the method's allocator and counted in pterun_method_memory(). The first
 * block a prepare allocates is the instruction's state
 * (pterun_kernel_state()); later ones are the kernel's to link from it.
 * Contents are uninitialised. Returns NULL outside prepare, for a bad
 * alignment or size, or when the allocator refuses (then return
 * OUT_OF_MEMORY, or OK to run unprepared).
 */
PTERUN_API void* pterun_kernel_state_alloc(pterun_kernel_context* ctx, size_t nbytes, size_t align);

/**
 * During prepare only: prepared state shared by every instruction of the
 * method that asks with the same key — e.g. one packed copy of a constant
 * weight that an unrolled RNN reads at every step. The key is `key_bytes`
 * bytes compared exactly (put in it what the block's contents depend on:
 * the source tensor's data pointer, sizes, the packing's parameters; clear
 * padding). Returns the block published earlier under the same key, size and
 * alignment with *fresh = 0, or a new uninitialised block with *fresh = 1,
 * which this prepare must fill before it returns OK (it becomes visible to
 * later instructions only then). Never the instruction's own state: keep a
 * pointer to it there. NULL when not preparing, for bad arguments, or when
 * the allocator refuses. Counted once in pterun_method_memory().
 */
PTERUN_API void* pterun_kernel_shared_state(pterun_kernel_context* ctx, const void* key,
                                            size_t key_bytes, size_t nbytes, size_t align,
                                            int* fresh);

/**
 * During prepare only: tells the method that this instruction packed the
 * constant tensor `t` (one of its arguments, as given) and reads `t` itself,
 * if ever, only through its sizes and strides -- or, with `flags`
 * PTERUN_KERNEL_PACKED_ONLY, never at all (every execute reads the packed
 * copy). The load-time fold leaves a transposed constant (the weight in front
 * of addmm / mm) as a strided view of the file's bytes instead of a dense
 * copy when every instruction reading it says so; when all say
 * PACKED_ONLY, pterun_method_options.release_packed_constants may give the
 * bytes back (docs/architecture.md, "Weights"). Anything else: no effect.
 */
#define PTERUN_KERNEL_PACKED_ONLY 1u
PTERUN_API void pterun_kernel_packed_constant(pterun_kernel_context* ctx, const pterun_tensor* t,
                                              unsigned flags);

/** The state this instruction's prepare allocated (its first block), or
 *  NULL: none (no prepare, it kept nothing, or a direct pterun_kernel_invoke). */
PTERUN_API void* pterun_kernel_state(const pterun_kernel_context* ctx);

/** 1 when the method's event tracer (pterun/event_tracer.h) listens for a
 *  backend's own steps: only then are pterun_kernel_event_begin/_end worth
 *  calling (they do nothing otherwise). */
PTERUN_API int pterun_kernel_tracing(const pterun_kernel_context* ctx);
/** Brackets one step of a delegate call (an XNNPACK node: `id` its index,
 *  `name` static text), for the tracer's delegate_event_begin/_end. */
PTERUN_API void pterun_kernel_event_begin(pterun_kernel_context* ctx, uint32_t id,
                                          const char* name);
PTERUN_API void pterun_kernel_event_end(pterun_kernel_context* ctx, uint32_t id, const char* name);

/** 1 while the context is a prepare call (load time), else 0. */
PTERUN_API int pterun_kernel_preparing(const pterun_kernel_context* ctx);

/** The method's thread pool (pterun_method_options.threadpool), for
 *  pterun_parallelize_* (include/pterun/threadpool.h); NULL: run serially. */
PTERUN_API struct pterun_threadpool* pterun_kernel_threadpool(const pterun_kernel_context* ctx);
/** The method's per-kernel thread cap (0: none), for the flags of a parallel
 *  call: PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)). */
PTERUN_API size_t pterun_kernel_max_threads(const pterun_kernel_context* ctx);

/* ---- argument access -------------------------------------------------------
 * Each reads args[i] (the caller checked i < nargs), and on a value of the
 * wrong kind fails the kernel with INVALID_TYPE and a message naming the
 * argument (PTERUN_TRY is in pterun/kernel_util.h):
 * `PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));`
 * The opt_ variants accept None (NULL / *has = 0). */
PTERUN_API pterun_status pterun_arg_tensor(pterun_kernel_context* ctx, pterun_value** args,
                                           size_t i, const char* name, pterun_tensor** out);
PTERUN_API pterun_status pterun_arg_opt_tensor(pterun_kernel_context* ctx, pterun_value** args,
                                               size_t i, const char* name, pterun_tensor** out);
PTERUN_API pterun_status pterun_arg_int(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                        const char* name, int64_t* out);
PTERUN_API pterun_status pterun_arg_opt_int(pterun_kernel_context* ctx, pterun_value** args,
                                            size_t i, const char* name, int64_t* out, int* has);
PTERUN_API pterun_status pterun_arg_bool(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                         const char* name, int* out);
/** A float argument; an Int value is accepted (whole numbers may be
 *  serialized as Int). */
PTERUN_API pterun_status pterun_arg_double(pterun_kernel_context* ctx, pterun_value** args,
                                           size_t i, const char* name, double* out);
PTERUN_API pterun_status pterun_arg_opt_double(pterun_kernel_context* ctx, pterun_value** args,
                                               size_t i, const char* name, double* out, int* has);
PTERUN_API pterun_status pterun_arg_string(pterun_kernel_context* ctx, pterun_value** args,
                                           size_t i, const char* name, const char** data,
                                           size_t* len);
/** A Scalar argument (Int, Double or Bool): `d` holds its value as a double,
 *  `i` as an int64 (a Double saturates, NaN gives 0), and is_float / is_bool
 *  say which kind it was (ATen's type promotion depends on it). */
typedef struct pterun_scalar {
  double d;
  int64_t i;
  int is_float;
  int is_bool;
} pterun_scalar;
PTERUN_API pterun_status pterun_arg_scalar(pterun_kernel_context* ctx, pterun_value** args,
                                           size_t i, const char* name, pterun_scalar* out);
PTERUN_API pterun_status pterun_arg_opt_scalar(pterun_kernel_context* ctx, pterun_value** args,
                                               size_t i, const char* name, pterun_scalar* out,
                                               int* has);
/** An int[] argument, materialised into the list's own scratch (no
 *  allocation). With allow_none, None gives *out = NULL and *len = 0. */
PTERUN_API pterun_status pterun_arg_int_list(pterun_kernel_context* ctx, pterun_value** args,
                                             size_t i, const char* name, const int64_t** out,
                                             size_t* len, int allow_none);
/** A Tensor[] argument (read its items with pterun_value_list_tensor()). */
PTERUN_API pterun_status pterun_arg_tensor_list(pterun_kernel_context* ctx, pterun_value** args,
                                                size_t i, const char* name, pterun_value** out);

/* ---- tensor checks ----------------------------------------------------------
 * Each fails the kernel with INVALID_ARGUMENT and a message naming the
 * argument: `PTERUN_TRY(pterun_check_rank(ctx, mat1, "mat1", 2));` */
/** t has dtype `dtype`. */
PTERUN_API pterun_status pterun_check_dtype(pterun_kernel_context* ctx, const pterun_tensor* t,
                                            const char* name, int32_t dtype);
/** t has exactly `rank` dims. */
PTERUN_API pterun_status pterun_check_rank(pterun_kernel_context* ctx, const pterun_tensor* t,
                                           const char* name, int rank);
/** t has memory for its elements when it has any (data set, nbytes covering
 *  numel elements): an unbound or freed input is refused, never read. */
PTERUN_API pterun_status pterun_check_data(pterun_kernel_context* ctx, const pterun_tensor* t,
                                           const char* name);

/** t is row-major (identity dim order; else NOT_SUPPORTED) and passes
 *  pterun_check_data: for kernels that only handle the default layout. */
PTERUN_API pterun_status pterun_check_contiguous(pterun_kernel_context* ctx, const pterun_tensor* t,
                                                 const char* name);

/* ---- outputs --------------------------------------------------------------- */
/**
 * Resizes output argument `out` (called `name` in messages) to `sizes`, then
 * checks it has memory for them. Like ExecuTorch, the rank never changes: a
 * different rank, a size above the planned bound, or an output without
 * memory fails the kernel with INVALID_ARGUMENT and a message naming the
 * argument and both shapes. A no-op when the shape already matches.
 */
PTERUN_API pterun_status pterun_out_resize(pterun_kernel_context* ctx, pterun_tensor* out,
                                           const char* name, size_t rank, const int64_t* sizes);
/** pterun_out_resize() to the shape of `like`. */
PTERUN_API pterun_status pterun_out_resize_like(pterun_kernel_context* ctx, pterun_tensor* out,
                                                const char* name, const pterun_tensor* like);

/**
 * Runs one kernel outside a method (tests, benchmarks, bindings): builds a
 * context with the given logger (NULL: default) and optional scratch arena.
 * Returns the kernel's status.
 */
PTERUN_API pterun_status pterun_kernel_invoke(pterun_kernel_fn fn, const char* op_name,
                                              pterun_value** args, size_t nargs,
                                              const pterun_logger* logger, void* scratch,
                                              size_t scratch_bytes);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_KERNEL_H_ */
