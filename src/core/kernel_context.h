/* The per-call context handed to kernels. */
#ifndef PTERUN_SRC_CORE_KERNEL_CONTEXT_H_
#define PTERUN_SRC_CORE_KERNEL_CONTEXT_H_

#include "pterun/kernel.h"
#include "src/core/internal.h"

struct pterun_method;

struct pterun_kernel_context {
  const pterun_logger* logger;
  const char* op_name;
  uint8_t* scratch; /* arena; reset before every call */
  size_t scratch_size;
  size_t scratch_used;
  const char* slow_path;                /* set by pterun_kernel_note_slow_path */
  struct pterun_threadpool* threadpool; /* opaque here: libpterun never calls the pool */
  size_t max_threads;
  void* state;                        /* the instruction's prepared state, or NULL */
  struct pterun_method* prep;         /* the method being loaded: set only during prepare */
  void** prep_state;                  /* where the first state block goes (prepare only) */
  size_t* reserved;                   /* prepare only: this instruction's scratch reservations */
  const struct pt_instr* prep_instr;  /* the instruction being prepared (prepare only) */
  struct pterun_event_tracer* tracer; /* the method's, when it has delegate events */
  const struct pterun_event_tracer* hooks; /* its hooks (the method's copy) */
};

#endif
