/* Load-time fusion: a chain of consecutive kernel calls (an operator and the
 * activation after it, ...) becomes one call of a fused operator, so the
 * intermediate tensor is never written and read back and one kernel dispatch
 * disappears. The chains are data (method_fuse_patterns.inc); a chain is
 * rewritten only when its fused operator is registered and every
 * intermediate is a tensor of the pattern's dtype that nothing else touches:
 * no other instruction reads, writes or moves it, it is not a method output,
 * no elided view shares its memory and no jump lands inside the chain; the
 * chain's result has the shape the fused kernel gives it (shape_kept) and
 * shares no byte with what the fused call reads (result_disjoint), or is
 * moved into an intermediate's bytes where it can live (redirect_host).
 * Chains are chosen in order and a move is made when its chain is chosen,
 * so the later ones are judged with it (docs/architecture.md lists the
 * conditions).
 * A row may add a feed: the constant-only producers of one step argument
 * (a quantized weight's dequantize, ...), removed with the chain.
 *
 * The first instruction becomes the fused call (its operator is appended to
 * the method's operator table, in slots layout() reserved); the others are
 * skipped like folded instructions. The fused calls' argument arrays are one
 * allocation, counted in pterun_method_memory(). Runs after constant folding
 * and before kernel preparation, so fused kernels are prepared too. */
#include <stdio.h>
#include <string.h>

#include "src/optimize/method_fuse_internal.h"
#include "src/optimize/opt_internal.h"
#include "src/core/schema.h"

const pt_fuse_names pt_fuse_name_text = {
    0,
#define PT_FUSE_NAME(ns, op, ovl) #ns "::" #op "." #ovl,
#include "src/optimize/method_fuse_names.inc"
#undef PT_FUSE_NAME
};

#define N PT_FUSE_N
static const pt_fuse_pattern kPatterns[] = {
#include "src/optimize/method_fuse_patterns.inc"
};
#undef N
#define PT_FUSE_PATTERNS (sizeof kPatterns / sizeof kPatterns[0])
_Static_assert(PT_FUSE_PATTERNS + PT_FUSE_CELLS < PT_FUSE_REDIRECT,
               "pattern index and redirect flag share a byte");

/* A row the code below can follow safely (the table is data others extend;
 * a malformed row is ignored rather than trusted). */
static bool pattern_ok(const pt_fuse_pattern* p) {
  uint32_t steps = steps_of(p);
  if (steps < 2 || p->fused == 0 || p->fused_nargs == 0 || p->fused_nargs > PT_FUSE_MAX_ARGS ||
      p->shape_step >= steps)
    return false;
  for (uint32_t s = 0; s < steps; ++s)
    if (p->nargs[s] < 2 || (s > 0 && p->link[s] >= inputs_of(p, s)) ||
        (p->out[s] != 0 && p->out[s] + 1u >= p->nargs[s]))
      return false;
  uint32_t feeds = feeds_of(p);
  if (feeds > 0 && (p->feed.step >= steps || p->feed.arg >= inputs_of(p, p->feed.step)))
    return false;
  for (uint32_t j = 0; j < feeds; ++j)
    if (p->feed.nargs[j] < 2 || (j > 0 && p->feed.link[j] + 2u >= p->feed.nargs[j - 1]))
      return false;
  for (uint32_t k = 0; k < p->fused_nargs; ++k) {
    uint32_t st = p->args[k].step, a = p->args[k].arg;
    if (st < PT_FUSE_MAX_STEPS
            ? st >= steps || a >= p->nargs[st]
            : st - PT_FUSE_MAX_STEPS >= feeds || a >= p->feed.nargs[st - PT_FUSE_MAX_STEPS])
      return false;
  }
  return true;
}

uint32_t pt_fuse_op_slots(void) {
  return (uint32_t)(PT_FUSE_PATTERNS + PT_FUSE_CELLS);
}

/* The operator-table slot of a fused operator (appended once per method). */
static uint32_t op_slot(pterun_method* m, uint16_t fused, pterun_kernel_fn fn,
                        pterun_kernel_prepare_fn prepare) {
  for (uint32_t k = m->fuse_op_base; k < m->op_count; ++k)
    if (strcmp(m->op_names[k], pt_fuse_name(fused)) == 0) return k;
  uint32_t k = m->op_count++;
  m->op_names[k] = pt_fuse_name(fused);
  m->op_fns[k] = fn;
  m->op_prepares[k] = prepare;
  m->op_called[k] = 1;
  return k;
}

/* Marks an instruction of a fused chain skipped, remembering it for
 * pt_unfuse (an instruction already skipped, e.g. a feed between two steps
 * named twice, is recorded once). */
static void skip(pt_fuse_undo* u, pt_instr* in) {
  if (in->type == PT_INSTR_FOLDED) return;
  if (u->nskipped < PT_FUSE_UNDO_MAX) {
    u->skipped[u->nskipped] = in;
    u->skipped_type[u->nskipped++] = (uint8_t)in->type;
  }
  in->type = PT_INSTR_FOLDED;
}

/* One DEBUG line per fused chain, naming the pattern by its row and its
 * chain, e.g. "fusion: pattern 9 of 52 (aten::addmm.out > aten::relu.out =>
 * pterun::addmm_relu.out) at 0:3": the differential test's coverage of the
 * patterns (tools/difftest, `pterun run --verbose`). Load time only. */
static void log_fused(pterun_method* m, const pt_fuse_pattern* p, size_t row, uint32_t c,
                      uint32_t i) {
  char chain[512];
  size_t n = 0;
  chain[0] = '\0';
  for (uint32_t s = 0; s < steps_of(p) && n < sizeof chain; ++s)
    n += (size_t)snprintf(chain + n, sizeof chain - n, "%s%s", s ? " > " : "",
                          pt_fuse_name(p->ops[s]));
  pterun_log(&m->logger, PTERUN_LOG_DEBUG, "fusion: pattern %zu of %zu (%s => %s) at %u:%u", row,
             (size_t)PT_FUSE_PATTERNS, chain, pt_fuse_name(p->fused), c, i);
}

bool pt_unfuse(pterun_method* m, pt_instr* first, pt_instr** before, uint32_t cap,
               uint32_t* nbefore) {
  uint32_t n = 0;
  *nbefore = 0;
  for (uint32_t k = 0; k < m->fuse_undo_count; ++k) {
    pt_fuse_undo* u = &m->fuse_undo[k];
    if (u->first != first) continue;
    *first = u->saved;
    for (uint32_t j = 0; j < u->nskipped; ++j) {
      u->skipped[j]->type = u->skipped_type[j];
      if (u->skipped[j] < first && n < cap) before[n++] = u->skipped[j]; /* same chain */
    }
    if (u->moved != NULL) {
      m->tensors_initial[u->moved - m->tensors].data = u->moved_data;
      m->aux[u->moved - m->tensors].initial_data = u->moved_initial;
    }
    u->first = NULL;
    pterun_log(&m->logger, PTERUN_LOG_DEBUG, "fusion: pattern %u undone (its kernel declined)",
               (unsigned)u->pattern);
    *nbefore = n;
    return true;
  }
  return false;
}

_Static_assert(PT_CELL_MAX_ARGS <= 2 * (PT_FUSE_MAX_STEPS + PT_FUSE_MAX_FEED),
               "a cell's values fit two rows of where[]");

/* Rewrites the cell matched at chain c, index i (its values in w): the
 * first instruction becomes the fused call (inputs, results, the last
 * result again as the return slot), the others are skipped for good. A
 * result before the last (the LSTM's c') is not the call's last argument,
 * where facts look for what a call writes: the layout pass after this takes
 * it for a tensor nobody writes (a possible elided view), the cautious
 * reading. */
static pterun_value** fuse_cell(pterun_method* m, pt_instr* first, uint32_t q,
                                const pterun_kernel_fn* fns, const uint32_t* w, pterun_value** next,
                                uint32_t c, uint32_t i) {
  const pt_fuse_cell* cell = &pt_fuse_cells[q];
  const uint32_t nvals = (uint32_t)cell->inputs + cell->results;
  for (uint32_t k = 0; k < nvals; ++k) next[k] = &m->values[w[k]];
  next[nvals] = next[nvals - 1];
  pterun_log(&m->logger, PTERUN_LOG_DEBUG, "fusion: cell %u of %u (%u instructions => %s) at %u:%u",
             (unsigned)q, (unsigned)PT_FUSE_CELLS, (unsigned)cell->nodes, pt_fuse_name(cell->fused),
             c, i);
  first->a = op_slot(m, cell->fused, fns[q], NULL);
  first->b = nvals + 1;
  first->args = next;
  first->fn = fns[q];
  for (uint32_t k = 1; k < cell->nodes; ++k) first[k].type = PT_INSTR_FOLDED;
  return next + nvals + 1;
}

static pterun_status fuse_chains(pterun_method* m, const pt_core_services* core,
                                 const pterun_registry* reg, bool no_prepare) {
  // Which fused operators this registry has (a pattern without one is off).
  pterun_kernel_fn fns[PT_FUSE_PATTERNS];
  pterun_kernel_prepare_fn preps[PT_FUSE_PATTERNS];
  bool any = false;
  m->fuse_op_base = m->op_count;
  for (size_t p = 0; p < PT_FUSE_PATTERNS; ++p) {
    fns[p] = NULL;
    preps[p] = NULL;
    if (pattern_ok(&kPatterns[p]) && !(no_prepare && kPatterns[p].needs_prepare))
      fns[p] = core->resolve(reg, pt_fuse_name(kPatterns[p].fused), &preps[p]);
    any |= fns[p] != NULL;
  }
  /* A cell's kernel has no preparation (one that declined would need its
   * nine skipped instructions back, pt_unfuse's undo keeps fewer). */
  pterun_kernel_fn cell_fns[PT_FUSE_CELLS];
  for (size_t q = 0; q < PT_FUSE_CELLS; ++q) {
    pterun_kernel_prepare_fn prep = NULL;
    cell_fns[q] = core->resolve(reg, pt_fuse_name(pt_fuse_cells[q].fused), &prep);
    if (prep != NULL) cell_fns[q] = NULL;
    any |= cell_fns[q] != NULL;
  }
  uint32_t total = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) total += m->chains[c].count;
  if (!any || total < 2) return PTERUN_STATUS_OK;

  fuse_facts f;
  const bool facts = pt_fuse_facts_alloc(m, &f, total);
  f.covered = pterun_alloc(m->allocator, total, 16);
  uint8_t* match = pterun_alloc(m->allocator, total, 16); /* pattern + 1 at a chain's first step */
  f.tensors = m->tensors;
  f.home = pterun_alloc(m->allocator, (m->tensor_count + 1) * sizeof *f.home, 16);
  void** home_initial =
      pterun_alloc(m->allocator, (m->tensor_count + 1) * sizeof *home_initial, 16);
  /* per chain start: where its steps and feed producers are (flat indices) */
  const size_t wn = PT_FUSE_MAX_STEPS + PT_FUSE_MAX_FEED;
  uint32_t* where = pterun_alloc(m->allocator, (size_t)total * wn * sizeof *where, 16);
  pterun_status st = PTERUN_STATUS_OK;
  if (!facts || match == NULL || f.home == NULL || home_initial == NULL || f.covered == NULL ||
      where == NULL) {
    st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for the fusion pass");
    goto done;
  }
  pt_fuse_gather_facts(m, &f);
  // Decide every rewrite first (rewriting changes what the analysis sees),
  // greedily from the start of each chain.
  size_t nargs = 0, home_bytes = 0;
  uint32_t fused = 0;
  /* Fused results given bytes of their own take at most the method's
   * planned bytes in all (a file's counts bound them). */
  uint64_t room = m->planned_bytes;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count;) {
      uint32_t adv = 1, flat = f.starts[c] + i;
      uint32_t* w = &where[(size_t)flat * wn];
      for (size_t p = 0; p < PT_FUSE_PATTERNS; ++p) {
        int how = fns[p] != NULL ? pt_fuse_matches(m, &f, &kPatterns[p], c, i, w, room) : 0;
        if (how != 0) {
          const uint32_t steps = steps_of(&kPatterns[p]), feeds = feeds_of(&kPatterns[p]);
          match[flat] = (uint8_t)((p + 1) | (how >= 2 ? PT_FUSE_REDIRECT : 0));
          if (how == PT_FUSE_PRIVATE) {
            /* The result in bytes of its own from now on (a move as below,
             * to memory nothing else names). */
            pterun_tensor* z = result_of(&kPatterns[p], steps - 1, f.instr[w[steps - 1]])->u.tensor;
            if (m->fuse_homes == NULL) /* one per fused chain at most */
              m->fuse_homes = pterun_alloc(m->allocator, (size_t)total * sizeof(void*), 16);
            void* mem = m->fuse_homes != NULL ? pterun_alloc(m->allocator, z->capacity, 64) : NULL;
            if (mem == NULL) {
              st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY,
                            "method: no memory for a fused result's %zu bytes", z->capacity);
              goto done;
            }
            m->fuse_homes[m->fuse_home_count++] = mem;
            home_bytes += z->capacity;
            room -= z->capacity;
            f.home[z - m->tensors] = z->data;
            home_initial[z - m->tensors] = m->aux[z - m->tensors].initial_data;
            z->data = mem;
            m->aux[z - m->tensors].initial_data = mem;
          } else if (how >= 2) {
            /* The result lives in an intermediate's bytes from now on, and the
             * chains after this one are judged with it there (and where it
             * was: overlaps): a later fused call that reads it must not write
             * over its new bytes. */
            const pt_fuse_pattern* q = &kPatterns[p];
            const uint32_t h = (uint32_t)how - 2;
            pterun_tensor* z = result_of(q, steps - 1, f.instr[w[steps - 1]])->u.tensor;
            const pterun_tensor* y = f.instr[w[h + 1]]->args[q->link[h + 1]]->u.tensor;
            f.home[z - m->tensors] = z->data;
            home_initial[z - m->tensors] = m->aux[z - m->tensors].initial_data;
            z->data = y->data;
            m->aux[z - m->tensors].initial_data = y->data;
          }
          nargs += kPatterns[p].fused_nargs;
          adv = w[steps - 1] - flat + 1;
          for (uint32_t k = w[0]; k <= w[steps - 1]; ++k) f.covered[k] = 1;
          for (uint32_t j = 0; j < feeds; ++j) f.covered[w[PT_FUSE_MAX_STEPS + j]] = 1;
          ++fused;
          break;
        }
      }
      /* A cell keeps its inputs' and results' value indices in w (this
       * row and the next: its instructions after the first start nothing). */
      for (size_t q = 0; q < PT_FUSE_CELLS && match[flat] == 0; ++q)
        if (cell_fns[q] != NULL && pt_fuse_cell_matches(m, &f, &pt_fuse_cells[q], c, i, w)) {
          match[flat] = (uint8_t)(PT_FUSE_PATTERNS + 1 + q);
          nargs += (size_t)pt_fuse_cells[q].inputs + pt_fuse_cells[q].results + 1;
          adv = pt_fuse_cells[q].nodes;
          for (uint32_t k = 0; k < adv; ++k) f.covered[flat + k] = 1;
          ++fused;
        }
      i += adv;
    }
  if (fused == 0) goto done;
  m->fused_args = pterun_alloc(m->allocator, nargs * sizeof(pterun_value*), 16);
  if (m->fused_args == NULL) {
    st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for fused calls");
    goto done;
  }
  m->fuse_home_bytes = home_bytes;
  m->fused_bytes = nargs * sizeof(pterun_value*) + home_bytes;
  m->fuse_undo = pterun_alloc(m->allocator, fused * sizeof *m->fuse_undo, 16);
  if (m->fuse_undo == NULL) {
    st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for fused calls");
    goto done;
  }
  m->fuse_undo_count = 0;
  pterun_value** next = m->fused_args;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count; ++i) {
      uint8_t which = match[f.starts[c] + i] & (uint8_t)~PT_FUSE_REDIRECT;
      if (which == 0) continue;
      pt_instr* chain = &m->chains[c].instrs[i];
      const uint32_t* w = &where[(size_t)(f.starts[c] + i) * wn];
      if (which > PT_FUSE_PATTERNS) {
        next = fuse_cell(m, chain, which - 1 - PT_FUSE_PATTERNS, cell_fns, w, next, c, i);
        continue;
      }
      const pt_fuse_pattern* p = &kPatterns[which - 1];
      const uint32_t steps = steps_of(p), feeds = feeds_of(p);
      pt_fuse_undo* u = &m->fuse_undo[m->fuse_undo_count++];
      memset(u, 0, sizeof *u);
      u->first = chain;
      u->saved = *chain;
      u->pattern = (uint32_t)(which - 1);
      log_fused(m, p, which - 1, c, i);
      if (match[f.starts[c] + i] & PT_FUSE_REDIRECT) { /* moved when chosen */
        pterun_tensor* z = result_of(p, steps - 1, f.instr[w[steps - 1]])->u.tensor;
        u->moved = z;
        u->moved_data = f.home[z - m->tensors];
        u->moved_initial = home_initial[z - m->tensors];
      }
      for (uint32_t k = 0; k < p->fused_nargs; ++k)
        next[k] = f.instr[w[p->args[k].step]]->args[p->args[k].arg];
      chain[0].a = op_slot(m, p->fused, fns[which - 1], preps[which - 1]);
      chain[0].b = p->fused_nargs;
      chain[0].args = next;
      chain[0].fn = fns[which - 1];
      // The later steps, producers the chain stepped over, the other producers.
      for (uint32_t k = w[0] + 1; k <= w[steps - 1]; ++k) skip(u, f.instr[k]);
      for (uint32_t j = 0; j < feeds; ++j) skip(u, f.instr[w[PT_FUSE_MAX_STEPS + j]]);
      next += p->fused_nargs;
    }
  pterun_log(&m->logger, PTERUN_LOG_DEBUG, "fused %u instruction chains", fused);
done:
  pt_fuse_facts_free(m, &f);
  pterun_free(m->allocator, match);
  if (st != PTERUN_STATUS_OK && f.home != NULL && home_initial != NULL) /* undo the moves */
    for (uint32_t t = 0; t < m->tensor_count; ++t)
      if (f.home[t] != NULL) {
        m->tensors[t].data = f.home[t];
        m->aux[t].initial_data = home_initial[t];
      }
  pterun_free(m->allocator, f.home);
  pterun_free(m->allocator, home_initial);
  pterun_free(m->allocator, f.covered);
  pterun_free(m->allocator, where);
  return st;
}

/* Fusion, then the layout choice on the fused method (method_layout.c). */
pterun_status pt_fuse(pterun_method* m, const pt_core_services* core, const pterun_registry* reg,
                      bool no_prepare) {
  m->fusion_ran = true;
  pterun_status st = fuse_chains(m, core, reg, no_prepare);
  return st == PTERUN_STATUS_OK ? pt_layout_channels_last(m) : st;
}
