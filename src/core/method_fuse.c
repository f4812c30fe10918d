/* Load-time fusion: a chain of consecutive kernel calls (an operator and the
 * activation after it, ...) becomes one call of a fused operator, so the
 * intermediate tensor is never written and read back and one kernel dispatch
 * disappears. The chains are data (method_fuse_patterns.inc); a chain is
 * rewritten only when its fused operator is registered and every
 * intermediate is a tensor of the pattern's dtype that nothing else touches:
 * no other instruction reads, writes or moves it, it is not a method output,
 * no elided view shares its memory and no jump lands inside the chain.
 *
 * The first instruction becomes the fused call (its operator is appended to
 * the method's operator table, in slots layout() reserved); the others are
 * skipped like folded instructions. The fused calls' argument arrays are one
 * allocation, counted in pterun_method_memory(). Runs after constant folding
 * and before kernel preparation, so fused kernels are prepared too. */
#include <string.h>

#include "src/core/method_internal.h"
#include "src/core/registry_internal.h"
#include "src/core/schema.h"

#define PT_FUSE_MAX_STEPS 4
#define PT_FUSE_MAX_ARGS 24

typedef struct pt_fuse_arg {
  uint8_t step, arg;
} pt_fuse_arg;

typedef struct pt_fuse_pattern {
  const char* ops[PT_FUSE_MAX_STEPS]; /* the chain; NULL after the last step */
  uint8_t nargs[PT_FUSE_MAX_STEPS];   /* each step's argument count (return slot included) */
  uint8_t link[PT_FUSE_MAX_STEPS];    /* step s > 0: its argument that is step s-1's result */
  int32_t dtype;                      /* every intermediate's dtype (-1: any) */
  const char* fused;                  /* the replacing operator */
  uint8_t fused_nargs;
  pt_fuse_arg args[PT_FUSE_MAX_ARGS]; /* its arguments, each (step, argument index) */
} pt_fuse_pattern;

static const pt_fuse_pattern kPatterns[] = {
#include "src/core/method_fuse_patterns.inc"
};
#define PT_FUSE_PATTERNS (sizeof kPatterns / sizeof kPatterns[0])

static uint32_t steps_of(const pt_fuse_pattern* p) {
  uint32_t n = 0;
  while (n < PT_FUSE_MAX_STEPS && p->ops[n] != NULL) ++n;
  return n;
}

/* A row the code below can follow safely (the table is data others extend;
 * a malformed row is ignored rather than trusted). */
static bool pattern_ok(const pt_fuse_pattern* p) {
  uint32_t steps = steps_of(p);
  if (steps < 2 || p->fused == NULL || p->fused_nargs == 0 || p->fused_nargs > PT_FUSE_MAX_ARGS)
    return false;
  for (uint32_t s = 0; s < steps; ++s)
    if (p->nargs[s] < 2 || (s > 0 && p->link[s] + 2u >= p->nargs[s])) return false;
  for (uint32_t k = 0; k < p->fused_nargs; ++k)
    if (p->args[k].step >= steps || p->args[k].arg >= p->nargs[p->args[k].step]) return false;
  return true;
}

uint32_t pt_fuse_op_slots(void) {
  return (uint32_t)PT_FUSE_PATTERNS;
}

/* What the other instructions do with each value. */
typedef struct fuse_facts {
  uint16_t* refs;   /* per value: argument slots naming it (lists included), moves, conditions */
  uint8_t* written; /* per value: some instruction or the caller writes it */
  uint8_t* jump_in; /* per instruction (flat index): a jump lands on it */
  uint8_t* outputs; /* per value: a method output */
  uint32_t* starts; /* flat index of each chain's first instruction */
} fuse_facts;

static void bump16(uint16_t* c) {
  if (*c < UINT16_MAX) ++*c;
}

static void count_value(const pterun_method* m, fuse_facts* f, const pterun_value* v) {
  bump16(&f->refs[v - m->values]);
  if (v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t k = 0; k < v->u.tensors.len; ++k)
      if (v->u.tensors.items[k] != NULL) bump16(&f->refs[v->u.tensors.items[k] - m->values]);
}

static void mark_written(const pterun_method* m, fuse_facts* f, const pterun_value* v) {
  f->written[v - m->values] = 1;
  if (v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t k = 0; k < v->u.tensors.len; ++k)
      if (v->u.tensors.items[k] != NULL) f->written[v->u.tensors.items[k] - m->values] = 1;
}

static void gather_facts(const pterun_method* m, fuse_facts* f) {
  uint32_t flat = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) {
    f->starts[c] = flat;
    for (uint32_t i = 0; i < m->chains[c].count; ++i, ++flat) {
      const pt_instr* in = &m->chains[c].instrs[i];
      switch (in->type) {
        case PT_INSTR_KERNEL_CALL:
          for (uint32_t k = 0; k < in->b; ++k) count_value(m, f, in->args[k]);
          if (in->b > 0) mark_written(m, f, in->args[in->b - 1]);
          break;
        case PT_INSTR_DELEGATE_CALL: /* any argument may be read or written */
          for (uint32_t k = 0; k < in->b; ++k) {
            count_value(m, f, in->args[k]);
            mark_written(m, f, in->args[k]);
          }
          break;
        case PT_INSTR_MOVE_CALL:
          bump16(&f->refs[in->a]);
          bump16(&f->refs[in->b]);
          f->written[in->b] = 1;
          break;
        case PT_INSTR_JUMP_FALSE_CALL:
          bump16(&f->refs[in->a]);
          if (in->b < m->chains[c].count) f->jump_in[f->starts[c] + in->b] = 1;
          break;
        default: break; /* FREE: harmless to a value nobody writes any more */
      }
    }
  }
  for (uint32_t k = 0; k < m->input_count; ++k) f->written[m->inputs[k]] = 1;
  for (uint32_t k = 0; k < m->output_count; ++k) f->outputs[m->outputs[k]] = 1;
}

static bool overlaps(const pterun_tensor* a, const pterun_tensor* b) {
  uintptr_t a0 = (uintptr_t)a->data, a1 = a0 + a->capacity;
  uintptr_t b0 = (uintptr_t)b->data, b1 = b0 + b->capacity;
  return a->data != NULL && b->data != NULL && a0 < b1 && b0 < a1;
}

/* Is `r`, the result of `prev` and read by `next` at `link`, private to
 * the two? */
static bool private_link(const pterun_method* m, const fuse_facts* f, const pt_instr* prev,
                         const pt_instr* next, uint32_t link, int32_t dtype) {
  const pterun_value* r = prev->args[prev->b - 1];
  uint32_t ri = (uint32_t)(r - m->values), in_prev = 0, in_next = 0;
  if (r->tag != PTERUN_VALUE_TENSOR || next->args[link] != r || f->outputs[ri]) return false;
  if (dtype >= 0 && r->u.tensor->dtype != dtype) return false;
  for (uint32_t k = 0; k < prev->b; ++k) {
    if (prev->args[k] != r) continue;
    if (k + 2 < prev->b) return false; /* prev reads it too */
    ++in_prev;
  }
  for (uint32_t k = 0; k < next->b; ++k) in_next += next->args[k] == r;
  if (in_next != 1 || f->refs[ri] != in_prev + in_next) return false;
  // An elided view (a planned tensor nobody writes) over r's memory would
  // read what r no longer receives.
  const pterun_tensor* t = r->u.tensor;
  const pt_tensor_aux* ta = &m->aux[t - m->tensors];
  if (!ta->in_arena) return true;
  for (uint32_t v = 0; v < m->value_count; ++v) {
    const pterun_value* x = &m->values[v];
    if (x == r || x->tag != PTERUN_VALUE_TENSOR || f->written[v]) continue;
    if (m->aux[x->u.tensor - m->tensors].in_arena && overlaps(x->u.tensor, t)) return false;
  }
  return true;
}

/* Does tensor value v (or a tensor of list v) share memory with `t`? */
static bool value_overlaps(const pterun_value* v, const pterun_tensor* t) {
  if (v->tag == PTERUN_VALUE_TENSOR) return v->u.tensor != t && overlaps(v->u.tensor, t);
  if (v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t k = 0; k < v->u.tensors.len; ++k) {
      const pterun_value* e = v->u.tensors.items[k];
      if (e != NULL && e->tag == PTERUN_VALUE_TENSOR && e->u.tensor != t &&
          overlaps(e->u.tensor, t))
        return true;
    }
  return false;
}

/* The fused call writes the chain's final result while it reads every
 * step's inputs, so the memory plan must not have given that result the
 * bytes of any input (it may, unfused: e.g. a convolution's input is dead
 * once the convolution ran, so the relu after it may write there). */
static bool result_disjoint(const pt_fuse_pattern* p, const pt_instr* first, uint32_t steps) {
  const pt_instr* last = &first[steps - 1];
  const pterun_value* r = last->args[last->b - 1];
  if (r->tag != PTERUN_VALUE_TENSOR) return false;
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t k = 0; k + 2 < first[s].b; ++k)
      if ((s == 0 || k != p->link[s]) /* an intermediate is never materialised */ &&
          value_overlaps(first[s].args[k], r->u.tensor))
        return false;
  return true;
}

/* Does pattern p match the instructions at chain c from index i? */
static bool matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                    uint32_t c, uint32_t i) {
  const pt_chain* ch = &m->chains[c];
  uint32_t steps = steps_of(p);
  if (steps < 2 || i + steps > ch->count) return false;
  for (uint32_t s = 0; s < steps; ++s) {
    const pt_instr* in = &ch->instrs[i + s];
    if (in->type != PT_INSTR_KERNEL_CALL || in->fn == NULL || in->b != p->nargs[s] ||
        strcmp(m->op_names[in->a], p->ops[s]) != 0)
      return false;
    if (s > 0 && (f->jump_in[f->starts[c] + i + s] ||
                  !private_link(m, f, &ch->instrs[i + s - 1], in, p->link[s], p->dtype)))
      return false;
  }
  return result_disjoint(p, &ch->instrs[i], steps);
}

/* The operator-table slot of a fused operator (appended once per method). */
static uint32_t op_slot(pterun_method* m, const pt_fuse_pattern* p, pterun_kernel_fn fn,
                        pterun_kernel_prepare_fn prepare) {
  for (uint32_t k = m->fuse_op_base; k < m->op_count; ++k)
    if (strcmp(m->op_names[k], p->fused) == 0) return k;
  uint32_t k = m->op_count++;
  m->op_names[k] = p->fused;
  m->op_fns[k] = fn;
  m->op_prepares[k] = prepare;
  m->op_called[k] = 1;
  return k;
}

pterun_status pt_fuse(pterun_method* m, const pterun_registry* reg) {
  // Which fused operators this registry has (a pattern without one is off).
  pterun_kernel_fn fns[PT_FUSE_PATTERNS];
  pterun_kernel_prepare_fn preps[PT_FUSE_PATTERNS];
  bool any = false;
  m->fuse_op_base = m->op_count;
  for (size_t p = 0; p < PT_FUSE_PATTERNS; ++p) {
    fns[p] = NULL;
    preps[p] = NULL;
    if (pattern_ok(&kPatterns[p])) fns[p] = pt_registry_resolve(reg, kPatterns[p].fused, &preps[p]);
    any |= fns[p] != NULL;
  }
  uint32_t total = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) total += m->chains[c].count;
  if (!any || total < 2) return PTERUN_STATUS_OK;

  fuse_facts f;
  size_t nv = m->value_count;
  f.refs = pt_alloc(m->allocator, nv * sizeof *f.refs + 1, 16);
  f.written = pt_alloc(m->allocator, nv + 1, 16);
  f.outputs = pt_alloc(m->allocator, nv + 1, 16);
  f.jump_in = pt_alloc(m->allocator, total, 16);
  f.starts = pt_alloc(m->allocator, (m->chain_count + 1) * sizeof *f.starts, 16);
  uint8_t* match = pt_alloc(m->allocator, total, 16); /* pattern + 1 at a chain's first step */
  pterun_status st = PTERUN_STATUS_OK;
  if (f.refs == NULL || f.written == NULL || f.outputs == NULL || f.jump_in == NULL ||
      f.starts == NULL || match == NULL) {
    st = pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for the fusion pass");
    goto done;
  }
  gather_facts(m, &f);
  // Decide every rewrite first (rewriting changes what the analysis sees),
  // greedily from the start of each chain.
  size_t nargs = 0;
  uint32_t fused = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count;) {
      uint32_t adv = 1;
      for (size_t p = 0; p < PT_FUSE_PATTERNS; ++p)
        if (fns[p] != NULL && matches(m, &f, &kPatterns[p], c, i)) {
          match[f.starts[c] + i] = (uint8_t)(p + 1);
          nargs += kPatterns[p].fused_nargs;
          adv = steps_of(&kPatterns[p]);
          ++fused;
          break;
        }
      i += adv;
    }
  if (fused == 0) goto done;
  m->fused_args = pt_alloc(m->allocator, nargs * sizeof(pterun_value*), 16);
  if (m->fused_args == NULL) {
    st = pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for fused calls");
    goto done;
  }
  m->fused_bytes = nargs * sizeof(pterun_value*);
  pterun_value** next = m->fused_args;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count; ++i) {
      uint8_t which = match[f.starts[c] + i];
      if (which == 0) continue;
      const pt_fuse_pattern* p = &kPatterns[which - 1];
      pt_instr* chain = &m->chains[c].instrs[i];
      uint32_t steps = steps_of(p);
      for (uint32_t k = 0; k < p->fused_nargs; ++k)
        next[k] = chain[p->args[k].step].args[p->args[k].arg];
      chain[0].a = op_slot(m, p, fns[which - 1], preps[which - 1]);
      chain[0].b = p->fused_nargs;
      chain[0].args = next;
      chain[0].fn = fns[which - 1];
      for (uint32_t s = 1; s < steps; ++s) chain[s].type = PT_INSTR_FOLDED;
      next += p->fused_nargs;
    }
  pt_log(&m->logger, PTERUN_LOG_DEBUG, "fused %u instruction chains", fused);
done:
  pt_free(m->allocator, f.refs);
  pt_free(m->allocator, f.written);
  pt_free(m->allocator, f.outputs);
  pt_free(m->allocator, f.jump_in);
  pt_free(m->allocator, f.starts);
  pt_free(m->allocator, match);
  return st;
}
