/* The fusion pass's matcher: does a pattern row (its steps and feed) match
 * the instructions at a place, judged by method_fuse_alias.c. */
#include "src/optimize/method_fuse_internal.h"

/* Pattern p's feed, walking back from the step that reads it; `skipped`
 * lists the instructions (flat) the chain stepped over, which must all be
 * producers. Sets where[PT_FUSE_MAX_STEPS + j] to producer j's flat index. */
static bool feed_matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                         uint32_t base, uint32_t* where, const uint32_t* skipped, uint32_t nskipped,
                         uint32_t steps) {
  const uint32_t feeds = feeds_of(p);
  const pt_instr* reader = f->instr[where[p->feed.step]];
  uint32_t arg = p->feed.arg, rpos = where[p->feed.step], inside = 0;
  for (uint32_t j = 0; j < feeds; ++j) {
    uint32_t w = f->writer[reader->args[arg] - m->values];
    if (w == 0 || w == UINT32_MAX) return false;
    uint32_t at = w - 1;
    if (at < base || at >= where[steps - 1] || f->covered[at]) return false;
    if (at > where[0]) { /* inside the chain's span: one it stepped over */
      bool ok = false;
      for (uint32_t k = 0; k < nskipped; ++k) ok |= skipped[k] == at;
      if (!ok) return false;
      ++inside;
    }
    const pt_instr* prod = f->instr[at];
    if (!pt_fuse_is_call(m, prod, pt_fuse_name(p->feed.ops[j]), p->feed.nargs[j]) ||
        !pt_fuse_private_link(m, f, prod, 0, reader, arg, p->dtype, at, rpos))
      return false;
    where[PT_FUSE_MAX_STEPS + j] = at;
    reader = prod;
    rpos = at;
    arg = j + 1 < feeds ? p->feed.link[j + 1] : 0;
  }
  if (inside != nskipped) return false; /* stepped over something else */
  if (feeds == 0) return true;
  if (p->feed.live) {
    const uint32_t from = where[PT_FUSE_MAX_STEPS + feeds - 1];
    if (m->chain_count != 1 || f->has_jumps || nskipped != 0) return false;
    for (uint32_t k = 0; k + 2 < reader->b; ++k) {
      const pterun_value* x = reader->args[k];
      if (x->tag != PTERUN_VALUE_TENSOR) continue;
      for (uint32_t j = from + 1; j < where[0]; ++j) {
        const pt_instr* in = f->instr[j];
        if (pt_fuse_writes(m, f, in, x, x->u.tensor) ||
            (in->type == PT_INSTR_FREE_CALL && &m->values[in->a] == x))
          return false;
      }
    }
    return true;
  }
  // The first producer computes from constants: nothing writes its inputs.
  for (uint32_t k = 0; k + 2 < reader->b; ++k)
    if (reader->args[k]->tag == PTERUN_VALUE_TENSOR && f->written[reader->args[k] - m->values])
      return false;
  return true;
}

/* Does pattern p match the instructions at chain c from index i? 0: no,
 * 1: yes, 2 + h: yes, with the result moved into the bytes of step h's
 * result (redirect_host), PT_FUSE_PRIVATE: yes, with the result in bytes of
 * its own (pt_fuse_private_ok), where it would otherwise share bytes with
 * what the fused call reads: a result no intermediate can host, or one a
 * kernel would cope with by copying an input on every run. On a
 * match, where[s] is step s's flat index and where[PT_FUSE_MAX_STEPS + j]
 * feed producer j's. */
int pt_fuse_matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                    uint32_t c, uint32_t i, uint32_t* where, uint64_t room) {
  const pt_chain* ch = &m->chains[c];
  const uint32_t steps = steps_of(p), feeds = feeds_of(p), base = f->starts[c];
  const pt_instr* step[PT_FUSE_MAX_STEPS];
  uint32_t skipped[PT_FUSE_MAX_FEED], nskipped = 0;
  if (steps < 2 || i + steps > ch->count) return 0;
  for (uint32_t s = 0, at = i; s < steps; ++s, ++at) {
    // A feed producer between two steps is stepped over (feed_matches checks it).
    while (s > 0 && at < ch->count && nskipped < feeds &&
           !pt_fuse_is_call(m, &ch->instrs[at], pt_fuse_name(p->ops[s]), p->nargs[s])) {
      if (f->jump_in[base + at] || f->covered[base + at]) return 0;
      skipped[nskipped++] = base + at++;
    }
    if (at >= ch->count || f->covered[base + at] ||
        !pt_fuse_is_call(m, &ch->instrs[at], pt_fuse_name(p->ops[s]), p->nargs[s]))
      return 0;
    if (s > 0 && (f->jump_in[base + at] ||
                  !pt_fuse_private_link(m, f, step[s - 1], p->out[s - 1], &ch->instrs[at],
                                        p->link[s], p->dtype, where[s - 1], base + at)))
      return 0;
    step[s] = &ch->instrs[at];
    where[s] = base + at;
  }
  // A multi-output last step: its other outs go unwritten.
  if (p->out[steps - 1] != 0 &&
      !pt_fuse_other_outs_unread(m, f, step[steps - 1], p->out[steps - 1], where[steps - 1]))
    return 0;
  if (!feed_matches(m, f, p, base, where, skipped, nskipped, steps)) return 0;
  if (!pt_fuse_shape_kept(p, step, steps)) return 0;
  if (pt_fuse_result_disjoint(f, p, step, steps)) {
    if ((p->step0_may_alias || p->any_may_alias) &&
        pt_fuse_result_overlaps_reads(f, p, step, steps) &&
        pt_fuse_private_ok(m, f, p, where, steps, room))
      return PT_FUSE_PRIVATE;
    return 1;
  }
  const int host = feeds == 0 ? pt_fuse_redirect_host(m, f, p, i, steps) : -1;
  if (host >= 0) return 2 + host;
  return pt_fuse_private_ok(m, f, p, where, steps, room) ? PT_FUSE_PRIVATE : 0;
}
