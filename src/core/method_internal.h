/* The method object: value table, planned memory, the instruction list with
 * resolved kernels, the constants folded at load and the kernels' scratch
 * arena. Everything is allocated by pterun_method_load (method_load.c, and
 * libpterun_optimize's folding); execute (method_exec.c) allocates nothing. */
#ifndef PTERUN_SRC_CORE_METHOD_INTERNAL_H_
#define PTERUN_SRC_CORE_METHOD_INTERNAL_H_

#include "pterun/method.h"
#include "src/core/backend_internal.h"
#include "src/core/internal.h"
#include "src/core/program_internal.h"

typedef struct pt_instr {
  uint8_t type;  /* PT_INSTR_* */
  uint32_t a, b; /* kernel/delegate: op or delegate index, nargs; move: from,to;
                    jump: cond,dest; free: value */
  pterun_kernel_fn fn;
  pterun_value** args;
  void* state; /* what the kernel's prepare kept (pterun_kernel_state), or NULL */
} pt_instr;

/* How to undo one fused chain (pt_unfuse): the fused call's original first
 * instruction, the instructions it skipped and a moved result. */
#define PT_FUSE_UNDO_MAX 8

/* pterun_method.input_set: an input's binding state. A refused set_input
 * leaves the input REFUSED (unbound) until it is set again, so execute never
 * reads memory bound before the refusal (which the caller may have freed). */
enum { PT_INPUT_UNSET = 0, PT_INPUT_SET = 1, PT_INPUT_REFUSED = 2 };
typedef struct pt_fuse_undo {
  pt_instr* first; /* NULL once undone */
  pt_instr saved;
  pt_instr* skipped[PT_FUSE_UNDO_MAX];
  uint8_t skipped_type[PT_FUSE_UNDO_MAX];
  uint32_t nskipped;
  struct pterun_tensor* moved; /* the result fusion moved into an intermediate's bytes */
  void *moved_data, *moved_initial;
  uint32_t pattern; /* its row in method_fuse_patterns.inc (the debug log names it) */
} pt_fuse_undo;

/* Header of one block of prepared kernel state (pterun_kernel_state_alloc). */
typedef struct pt_state_block {
  struct pt_state_block* next;
} pt_state_block;

/* A block of prepared state shared by key (pterun_kernel_shared_state),
 * itself allocated as a state block. */
typedef struct pt_shared_block {
  struct pt_shared_block* next;
  size_t key_bytes, nbytes, align;
  int published; /* set once the prepare that filled it returned OK */
  void* data;
  unsigned char key[];
} pt_shared_block;

typedef struct pt_chain {
  pt_instr* instrs;
  uint32_t count;
} pt_chain;

/* Per-tensor facts the executor needs besides pterun_tensor itself. */
typedef struct pt_tensor_aux {
  void* initial_data; /* restored before each execute (FreeCall clears data) */
  uint8_t planned;    /* lives in planned memory or constant data: inputs are copied */
  uint8_t has_memory; /* data is fixed by the program (planned/constant/external) */
  uint8_t in_arena;   /* data lies in a planned buffer */
} pt_tensor_aux;

struct pterun_method {
  const pterun_program* program;
  pterun_logger logger;
  pterun_allocator allocator_copy;
  const pterun_allocator* allocator;
  void* block; /* the runtime structures below live in this one allocation;
                  planned buffers, folded constants and scratch are separate */
  size_t block_size;

  pterun_value* values;
  pterun_value* values_initial; /* the value table as loaded; restored per execute */
  uint32_t value_count;
  pterun_tensor* tensors;
  pterun_tensor* tensors_initial; /* as loaded/bound; restored per execute */
  pt_tensor_aux* aux;             /* indexed like tensors */
  uint32_t tensor_count;

  uint32_t* inputs;
  uint8_t* input_set;    /* PT_INPUT_UNSET / _SET / _REFUSED */
  uint8_t* input_shared; /* planned input whose memory other tensors reuse:
                            execute may overwrite it, so it must be set again */
  uint32_t input_count;
  uint32_t* outputs;
  uint32_t output_count;

  pt_chain* chains;
  uint32_t chain_count;
  const char** op_names;                 /* "ns::op.overload", per operator table entry */
  pterun_kernel_fn* op_fns;              /* its kernel (NULL: not registered), per entry */
  pterun_kernel_prepare_fn* op_prepares; /* its load-time prepare, or NULL */
  uint8_t* op_called;                    /* 1: a kernel call names it (load-time bookkeeping) */
  uint32_t op_count;         /* the program's operators, then fused ones (method_fuse.c) */
  uint32_t fuse_op_base;     /* index of the first fused operator */
  bool fusion_ran;           /* the fusion pass ran (copy elision follows it) */
  pterun_value** fused_args; /* argument arrays of fused calls (one allocation) */
  pt_fuse_undo* fuse_undo;   /* load time only: one per fused chain, freed after prepare */
  uint32_t fuse_undo_count;
  void** fuse_homes; /* fused results given bytes of their own (PT_FUSE_PRIVATE) */
  uint32_t fuse_home_count;
  size_t fuse_home_bytes;
  size_t fused_bytes; /* the argument arrays and fuse_home_bytes */

  void** planned;
  uint64_t* planned_sizes;
  uint32_t planned_count;
  void** owned_planned; /* allocated by pterun, or NULL entries */
  size_t owned_planned_bytes;

  /* Bytes of the files the method reads (program image + bound .ptd files)
   * and of its planned buffers: the bounds of load-time memory sized from
   * counts in the file (folded constants: 2 x file_bytes; event tracers
   * read them through pterun_method_file_bytes). */
  uint64_t file_bytes;
  uint64_t planned_bytes;

  void** folded; /* pterun-owned results of instructions run once at load */
  uint32_t folded_count;
  size_t folded_bytes;
  /* Load time only (method_fold.c): transposes of constants left as strided
   * views of the file's bytes until prepare shows whether every reader packs
   * them, and the (instruction, tensor) pairs whose prepare said so. */
  struct pt_view_fold* view_folds;
  uint32_t view_fold_count;
  struct pt_view_claim* view_claims;
  uint32_t view_claim_count, view_claim_cap;
  uint32_t views_kept;   /* folds that stayed views (no copy) */
  bool view_claim_oom;   /* a claim found no memory: the load fails */
  bool release_packed;   /* pterun_method_options.release_packed_constants */
  size_t released_bytes; /* file bytes given back (release_packed) */

  pt_state_block* states;  /* prepared kernel state, freed at destroy */
  pt_shared_block* shared; /* the keyed blocks among them */
  size_t state_bytes;

  pt_delegate* delegates; /* one per BackendDelegate of the plan */
  uint32_t delegate_count;
  size_t delegate_bytes; /* held by the backends */

  uint8_t* scratch;
  size_t scratch_size;
  size_t scratch_need;                  /* load time: the largest instruction's reservation */
  struct pterun_threadpool* threadpool; /* pterun_method_options.threadpool (not owned) */
  size_t max_threads;
  uint64_t budget;
  pterun_profiler* profiler;   /* as given in the options (pterun_method_profiler) */
  pterun_event_tracer* tracer; /* NULL: the interpreter calls no hooks */
  pterun_event_tracer hooks;   /* the tracer's hooks, read by its struct_size */
  /* The registry's load-time optimiser (optimizer_internal.h), or NULL. */
  const struct pterun_optimizer* opt;
};

/* Calls every prepare of the method's kernel calls once (method_prepare.c);
 * each instruction's scratch reservations raise m->scratch_need. */
pterun_status pt_prepare_kernels(pterun_method* m);

/* Instruction type of a folded (skipped) instruction; the verifier never
 * lets 0 (NONE) into a chain, so it is free. */
#define PT_INSTR_FOLDED 0

#endif
