/* libpterun_optimize's side of the load-time optimiser interface
 * (src/core/optimizer_internal.h): folding (method_fold.c) and fusion
 * (method_fuse*.c) on the method's internals, with the core's public
 * allocator and logger and the services it lends. */
#ifndef PTERUN_SRC_OPTIMIZE_OPT_INTERNAL_H_
#define PTERUN_SRC_OPTIMIZE_OPT_INTERNAL_H_

#include "src/core/optimizer_internal.h"

/* Logs at ERROR level and yields status, for `return opt_fail(...)`. */
#define opt_fail(logger, status, ...)                                                              \
  (pterun_log((logger), PTERUN_LOG_ERROR, __VA_ARGS__), (status))

pterun_status pt_fold_constants(pterun_method* m, const pt_core_services* core, bool defer_views);
pterun_status pt_fold_resolve_views(pterun_method* m);
void pt_fold_claim_view(pterun_method* m, const pt_instr* in, const pterun_tensor* t,
                        bool packed_only);
void pt_fold_release_packed(pterun_method* m, const pt_core_services* core, const pt_instr* in);
pterun_status pt_fuse(pterun_method* m, const pt_core_services* core, const pterun_registry* reg,
                      bool no_prepare);
bool pt_unfuse(pterun_method* m, pt_instr* first, pt_instr** before, uint32_t cap,
               uint32_t* nbefore);
uint32_t pt_fuse_op_slots(void);
/* method_elide.c: copies of contiguous blocks read in place (after prepare). */
pterun_status pt_elide_copies(pterun_method* m);
/* The optimiser's last load-time step: views of folded constants, then copy elision. */
pterun_status pt_resolve_views(pterun_method* m);

#endif /* PTERUN_SRC_OPTIMIZE_OPT_INTERNAL_H_ */
