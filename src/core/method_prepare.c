/* Load-time kernel preparation (kernel ABI 3): every kernel call whose kernel
 * has a `prepare` gets one call with its arguments, so work that depends only
 * on constants (packing weights, ...) happens here and never on execute.
 *
 * Planned memory is bound but holds nothing meaningful yet, and caller
 * memory is not there at all: during the pass every tensor that is not
 * constant is shown with data NULL and capacity 0, so a prepare cannot read
 * (or keep a pointer to) it. The value table and tensors are restored from
 * their loaded copies afterwards, whatever a prepare changed. */
#include <string.h>

#include "src/core/kernel_context.h"
#include "src/core/method_internal.h"
#include "src/core/optimizer_internal.h"
#include "src/core/schema.h"

/* One instruction's prepare. A fused kernel that cannot take its chain (a
 * weight that is not constant, a group size it has no kernel for, ...)
 * declines with NOT_SUPPORTED: the chain is put back as the program wrote it
 * (*unfused set) and the producers it had absorbed before this position are
 * prepared here; the caller prepares the restored first step again. */
static pterun_status prepare_one(pterun_method* m, uint32_t c, uint32_t i, pt_instr* in,
                                 bool* unfused) {
  if (in->type != PT_INSTR_KERNEL_CALL) return PTERUN_STATUS_OK;
  pterun_kernel_prepare_fn prepare = m->op_prepares[in->a];
  if (prepare == NULL) return PTERUN_STATUS_OK;
  size_t reserved = 0;
  struct pterun_kernel_context ctx = {.logger = &m->logger,
                                      .op_name = m->op_names[in->a],
                                      .scratch = m->scratch,
                                      .scratch_size = m->scratch_size,
                                      .threadpool = m->threadpool,
                                      .max_threads = m->max_threads,
                                      .prep = m,
                                      .prep_state = &in->state,
                                      .reserved = &reserved,
                                      .prep_instr = in};
  const uint32_t claims = m->view_claim_count;
  pterun_status st = prepare(&ctx, in->args, in->b);
  if (reserved > m->scratch_need) m->scratch_need = reserved;
  if (m->view_claim_oom && st == PTERUN_STATUS_OK)
    st = pterun_kernel_fail(&ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                            "no memory to record a packed weight");
  pt_instr* before[PT_FUSE_UNDO_MAX];
  uint32_t n = 0;
  const bool decline = st == PTERUN_STATUS_NOT_SUPPORTED && m->fuse_undo_count > 0 &&
                       in->a >= m->fuse_op_base &&
                       m->opt->unfuse(m, in, before, PT_FUSE_UNDO_MAX, &n);
  /* Shared blocks this prepare made become visible only if it succeeded; a
   * declined one's are never found (an empty key matches nothing). */
  for (pt_shared_block* s = m->shared; s != NULL && !s->published; s = s->next) {
    s->published = st == PTERUN_STATUS_OK || decline;
    if (decline) s->key_bytes = 0;
  }
  char op[PT_ESC_CAP];
  if (decline) m->view_claim_count = claims; /* the declined call's claims go with it */
  if (decline) {
    pt_log(&m->logger, PTERUN_LOG_DEBUG, "method: instruction %u:%u (%s) left unfused", c, i,
           pt_esc(ctx.op_name, op, sizeof op));
    *unfused = true;
    st = PTERUN_STATUS_OK;
    for (uint32_t k = 0; k < n && st == PTERUN_STATUS_OK; ++k) {
      bool again = false; /* producers are not fused calls: they never decline */
      st = prepare_one(m, c, (uint32_t)(before[k] - m->chains[c].instrs), before[k], &again);
    }
    return st;
  }
  if (st != PTERUN_STATUS_OK)
    st = pt_fail(&m->logger, st, "method: preparing instruction %u:%u (%s) failed: %s", c, i,
                 pt_esc(ctx.op_name, op, sizeof op), pterun_status_str(st));
  else if (m->view_claim_count > claims) /* right away: the next weight packs in the room */
    m->opt->release_packed(m, &pt_core, in);
  return st;
}

pterun_status pt_prepare_kernels(pterun_method* m) {
  bool any = false;
  for (uint32_t k = 0; k < m->op_count && !any; ++k) any = m->op_prepares[k] != NULL;
  if (!any) return PTERUN_STATUS_OK;
  for (uint32_t t = 0; t < m->tensor_count; ++t) {
    const pt_tensor_aux* a = &m->aux[t];
    if (a->has_memory && !a->in_arena) continue; /* constant: visible */
    m->tensors[t].data = NULL;
    m->tensors[t].capacity = 0;
  }
  pterun_status st = PTERUN_STATUS_OK;
  for (uint32_t c = 0; c < m->chain_count && st == PTERUN_STATUS_OK; ++c)
    for (uint32_t i = 0; i < m->chains[c].count && st == PTERUN_STATUS_OK;) {
      bool unfused = false;
      st = prepare_one(m, c, i, &m->chains[c].instrs[i], &unfused);
      if (!unfused) ++i; /* else prepare the restored first step */
    }
  memcpy(m->values, m->values_initial, m->value_count * sizeof *m->values);
  memcpy(m->tensors, m->tensors_initial, m->tensor_count * sizeof *m->tensors);
  if (st == PTERUN_STATUS_OK && m->state_bytes > 0)
    pt_log(&m->logger, PTERUN_LOG_DEBUG, "kernels prepared %zu bytes of state", m->state_bytes);
  return st;
}
