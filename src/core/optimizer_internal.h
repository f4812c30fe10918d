/* The load-time optimiser interface between libpterun and libpterun_optimize
 * (src/optimize/): constant folding and fusion rewrite a method's
 * instruction list after it is built and before its kernels prepare. The
 * core holds only these hooks, so a program runs without the optimiser
 * linked (every instruction as the program wrote it); an application
 * attaches it to a registry (pterun_registry_set_optimizer, pterun/optimize.h).
 *
 * The optimiser reads and rewrites the method's internals (method_internal.h),
 * so both libraries must come from one build: the core refuses an optimiser
 * whose abi differs. The core lends it what is not public API (kernel
 * lookup with its prepare, giving file pages back) through pt_core_services. */
#ifndef PTERUN_SRC_CORE_OPTIMIZER_INTERNAL_H_
#define PTERUN_SRC_CORE_OPTIMIZER_INTERNAL_H_

#include "pterun/version.h"
#include "src/core/method_internal.h"

/* Changes whenever the method's layout or these hooks change. */
#define PT_OPTIMIZER_ABI                                                                           \
  ((uint32_t)(PTERUN_VERSION_MAJOR * 1000000u + PTERUN_VERSION_MINOR * 1000u +                     \
              PTERUN_VERSION_PATCH) ^                                                              \
   ((uint32_t)sizeof(struct pterun_method) << 20))

typedef struct pt_core_services {
  /* The kernel registered for `op`, or NULL; with prepare_out, its prepare. */
  pterun_kernel_fn (*resolve)(const pterun_registry* r, const char* op,
                              pterun_kernel_prepare_fn* prepare_out);
  /* Gives the file pages of [data, data + n) back (pterun_method_options.
   * release_packed_constants); bytes given back. */
  size_t (*program_release)(pterun_program* p, const void* data, size_t n);
} pt_core_services;

/* The core's (method_load.c). */
extern const pt_core_services pt_core;

struct pterun_optimizer {
  uint32_t abi; /* PT_OPTIMIZER_ABI of the build that made it */
  /* Operator-table slots to reserve for fused operators. */
  uint32_t (*fuse_op_slots)(void);
  /* Runs layout operators whose inputs are all constant once, into owned
   * memory, and turns those instructions into no-ops. */
  pterun_status (*fold)(pterun_method* m, const pt_core_services* core, bool defer_views);
  /* Rewrites chains of kernel calls into fused operators registered in `reg`;
   * without kernel preparation (`no_prepare`) only chains whose fused kernel
   * also runs unprepared. */
  pterun_status (*fuse)(pterun_method* m, const pt_core_services* core, const pterun_registry* reg,
                        bool no_prepare);
  /* Puts the chain whose fused call is `first` back as the program wrote it
   * (its fused kernel declined in prepare); the restored producers that sit
   * before `first` go to `before` (up to `cap`, count in *nbefore). False:
   * `first` is not a fused call. */
  bool (*unfuse)(pterun_method* m, pt_instr* first, pt_instr** before, uint32_t cap,
                 uint32_t* nbefore);
  /* During prepare: instruction `in` packed tensor t. */
  void (*claim_view)(pterun_method* m, const pt_instr* in, const pterun_tensor* t,
                     bool packed_only);
  /* During prepare, after `in`'s prepare returned: with
   * release_packed_constants, gives back the file bytes of the views every
   * reader now packed for good. */
  void (*release_packed)(pterun_method* m, const pt_core_services* core, const pt_instr* in);
  /* After prepare: materialises every deferred view fold that some reader
   * did not claim, and frees the bookkeeping. */
  pterun_status (*resolve_views)(pterun_method* m);
};

#endif /* PTERUN_SRC_CORE_OPTIMIZER_INTERNAL_H_ */
