/* The optimiser object libpterun_optimize hands out (pterun/optimize.h). */
#include "pterun/optimize.h"
#include "src/optimize/opt_internal.h"

static const pterun_optimizer kOptimizer = {
    .abi = PT_OPTIMIZER_ABI,
    .fuse_op_slots = pt_fuse_op_slots,
    .fold = pt_fold_constants,
    .fuse = pt_fuse,
    .unfuse = pt_unfuse,
    .claim_view = pt_fold_claim_view,
    .release_packed = pt_fold_release_packed,
    .resolve_views = pt_resolve_views,
};

pterun_status pt_resolve_views(pterun_method* m) {
  pterun_status st = pt_fold_resolve_views(m);
  return st == PTERUN_STATUS_OK ? pt_elide_copies(m) : st;
}

const pterun_optimizer* pterun_optimizer_default(void) {
  return &kOptimizer;
}
