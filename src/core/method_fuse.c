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

#include "src/core/method_internal.h"
#include "src/core/registry_internal.h"
#include "src/core/schema.h"

#define PT_FUSE_MAX_STEPS 4
#define PT_FUSE_MAX_ARGS 32
#define PT_FUSE_MAX_FEED 2
#define PT_FUSE_REDIRECT 0x80 /* flag in the match table: move the result (can_redirect) */

typedef struct pt_fuse_arg {
  uint8_t step, arg;
} pt_fuse_arg;

/* A feed: instructions anywhere before the chain (in the same instruction
 * chain) that produce one argument of a step from constants, e.g. a weight's
 * dequantize and permute_copy. ops[0] writes argument `arg` of step `step`;
 * ops[j] writes argument link[j] of ops[j - 1]. Each result must be private
 * to its reader and the last producer's inputs written by nothing (program
 * constants); the producers are removed with the chain, and the fused
 * operator's arguments may name theirs (FF(j, index): steps
 * PT_FUSE_MAX_STEPS + j). A producer may sit between two steps of the chain
 * (addmm's permute_copy does): the chain then steps over it. */
typedef struct pt_fuse_feed {
  uint8_t step, arg;
  const char* ops[PT_FUSE_MAX_FEED]; /* NULL after the last (ops[0] NULL: no feed) */
  uint8_t nargs[PT_FUSE_MAX_FEED];
  uint8_t link[PT_FUSE_MAX_FEED];
  bool live; /* the producers' inputs need not be constants: the fused call reads
                them where the chain starts, so nothing between the first
                producer and the chain may write or free them (straight-line
                methods only; producers before the chain) */
} pt_fuse_feed;

typedef struct pt_fuse_pattern {
  const char* ops[PT_FUSE_MAX_STEPS]; /* the chain; NULL after the last step */
  uint8_t nargs[PT_FUSE_MAX_STEPS];   /* each step's argument count (return slot included) */
  uint8_t link[PT_FUSE_MAX_STEPS];    /* step s > 0: its argument that is step s-1's result */
  uint8_t out[PT_FUSE_MAX_STEPS];     /* step s's result: 0 = its return slot; else the index of
                                         its first out argument, of a multi-output step whose
                                         return slot lists its outs (batch norm); its other outs
                                         must be unread, and it is skipped when they are read */
  int32_t dtype;                      /* every intermediate's dtype (-1: any) */
  pt_fuse_feed feed;                  /* optional */
  bool step0_may_alias;               /* the fused kernel copes with its result sharing memory
                                         with step 0's arguments (it reads or copies them first) */
  bool any_may_alias;                 /* ... with any argument of any step */
  bool needs_prepare;                 /* the fused kernel runs only prepared (integer weights
                                         packed at load): no fusion without kernel preparation */
  uint8_t shape_step;                 /* the step whose result's shape the fused kernel gives
                                         its result (the convolution, the addmm, ...): the
                                         chain's result must have it (shape_kept) */
  bool rows_nd;                       /* ... or, a linear's kernel, the sizes of step 0's first
                                         argument with the last one that step's (its [M, N]
                                         rows seen through a view as [B, T, N]), contiguous */
  const char* fused;                  /* the replacing operator */
  uint8_t fused_nargs;
  pt_fuse_arg args[PT_FUSE_MAX_ARGS]; /* its arguments, each (step or PT_FUSE_MAX_STEPS + feed
                                         producer, argument index) */
} pt_fuse_pattern;

static const pt_fuse_pattern kPatterns[] = {
#include "src/core/method_fuse_patterns.inc"
};
#define PT_FUSE_PATTERNS (sizeof kPatterns / sizeof kPatterns[0])
_Static_assert(PT_FUSE_PATTERNS < PT_FUSE_REDIRECT, "pattern index and redirect flag share a byte");

static uint32_t steps_of(const pt_fuse_pattern* p) {
  uint32_t n = 0;
  while (n < PT_FUSE_MAX_STEPS && p->ops[n] != NULL) ++n;
  return n;
}

static uint32_t feeds_of(const pt_fuse_pattern* p) {
  uint32_t n = 0;
  while (n < PT_FUSE_MAX_FEED && p->feed.ops[n] != NULL) ++n;
  return n;
}

/* How many leading arguments of step s are inputs (the rest are outs and the
 * return slot). */
static uint32_t inputs_of(const pt_fuse_pattern* p, uint32_t s) {
  return p->out[s] != 0 ? p->out[s] : p->nargs[s] - 2u;
}

/* Step s's result: its return slot, or its first out (p->out[s]). */
static const pterun_value* result_of(const pt_fuse_pattern* p, uint32_t s, const pt_instr* in) {
  return in->args[p->out[s] != 0 ? p->out[s] : in->b - 1];
}

/* A row the code below can follow safely (the table is data others extend;
 * a malformed row is ignored rather than trusted). */
static bool pattern_ok(const pt_fuse_pattern* p) {
  uint32_t steps = steps_of(p);
  if (steps < 2 || p->fused == NULL || p->fused_nargs == 0 || p->fused_nargs > PT_FUSE_MAX_ARGS ||
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
  return (uint32_t)PT_FUSE_PATTERNS;
}

/* What the other instructions do with each value. */
typedef struct fuse_facts {
  uint16_t* refs;   /* per value: argument slots naming it (lists included), moves, conditions */
  uint8_t* written; /* per value: some instruction or the caller writes it */
  uint8_t* jump_in; /* per instruction (flat index): a jump lands on it */
  uint8_t* outputs; /* per value: a method output */
  uint32_t* starts; /* flat index of each chain's first instruction */
  uint32_t* writer; /* per value: 1 + flat index of the kernel call whose result it is
                       (0: none, UINT32_MAX: several) */
  pt_instr** instr; /* per flat index */
  uint8_t* covered; /* per flat index: part of a chosen rewrite */
  const pterun_tensor* tensors; /* m->tensors: the base of the per-tensor arrays */
  void** home; /* per tensor: where a chosen rewrite moved it from (its result moved into
                       an intermediate's bytes, redirect_host), else NULL */
  bool has_jumps;
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
      f->instr[flat] = &m->chains[c].instrs[i];
      switch (in->type) {
        case PT_INSTR_KERNEL_CALL:
          for (uint32_t k = 0; k < in->b; ++k) count_value(m, f, in->args[k]);
          if (in->b > 0) {
            uint32_t* w = &f->writer[in->args[in->b - 1] - m->values];
            *w = *w == 0 ? flat + 1 : UINT32_MAX;
            mark_written(m, f, in->args[in->b - 1]);
          }
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
          f->has_jumps = true;
          if (in->b < m->chains[c].count) f->jump_in[f->starts[c] + in->b] = 1;
          break;
        default: break; /* FREE: harmless to a value nobody writes any more */
      }
    }
  }
  for (uint32_t k = 0; k < m->input_count; ++k) f->written[m->inputs[k]] = 1;
  for (uint32_t k = 0; k < m->output_count; ++k) f->outputs[m->outputs[k]] = 1;
}

/* Do tensors a and b share bytes? A tensor a chosen rewrite moved
 * (f->home) counts at both places: the decisions taken after the move see
 * where it is now, and they must also hold if the move is undone (its fused
 * kernel declines at preparation: pt_unfuse). */
static bool overlaps(const fuse_facts* f, const pterun_tensor* a, const pterun_tensor* b) {
  const void* at[2] = {a->data, f->home[a - f->tensors]};
  const void* bt[2] = {b->data, f->home[b - f->tensors]};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      uintptr_t a0 = (uintptr_t)at[i], a1 = a0 + a->capacity;
      uintptr_t b0 = (uintptr_t)bt[j], b1 = b0 + b->capacity;
      if (at[i] != NULL && bt[j] != NULL && a0 < b1 && b0 < a1) return true;
    }
  return false;
}

static bool names_value(const pterun_method* m, const pt_instr* in, const pterun_value* v);
static bool value_overlaps(const fuse_facts* f, const pterun_value* v, const pterun_tensor* t);

/* Does instruction `in` write a tensor whose bytes include all of t's (a
 * moved result is not trusted to: it has two places)? */
static bool covers(const fuse_facts* f, const pt_instr* in, const pterun_tensor* t) {
  if (in->type != PT_INSTR_KERNEL_CALL || in->b == 0) return false;
  const pterun_value* r = in->args[in->b - 1];
  if (r->tag != PTERUN_VALUE_TENSOR || r->u.tensor->data == NULL || t->data == NULL ||
      f->home[r->u.tensor - f->tensors] != NULL)
    return false;
  uintptr_t r0 = (uintptr_t)r->u.tensor->data, r1 = r0 + r->u.tensor->capacity;
  uintptr_t t0 = (uintptr_t)t->data, t1 = t0 + t->capacity;
  return r0 <= t0 && t1 <= r1;
}

/* An elided view x (a planned tensor no instruction writes: it shows the
 * bytes of whatever wrote them last) is unaffected by a rewrite of the
 * instructions [start, end] when each instruction reading x comes before
 * start, or after a later instruction that rewrote all of x's bytes.
 * Straight-line methods only. */
static bool view_unaffected(const pterun_method* m, const fuse_facts* f, const pterun_value* x,
                            uint32_t start, uint32_t end) {
  if (m->chain_count != 1 || f->has_jumps) return false;
  const pt_chain* ch = &m->chains[0];
  bool covered = false;
  for (uint32_t j = end + 1; j < ch->count; ++j) {
    if (!covered && names_value(m, &ch->instrs[j], x)) return false;
    covered = covered || covers(f, &ch->instrs[j], x->u.tensor);
  }
  for (uint32_t j = start; j <= end; ++j)
    if (names_value(m, &ch->instrs[j], x)) return false;
  for (uint32_t k = 0; k < m->output_count; ++k)
    if (&m->values[m->outputs[k]] == x && !covered) return false;
  return true;
}

/* Is v an elided view of r, read only there: a planned tensor nothing
 * writes, not a method input or output, over exactly r's bytes (the
 * exporter removed a view_copy, e.g. a linear's [M, K] view of [B, T, K])? */
static bool elided_view_of(const pterun_method* m, const fuse_facts* f, const pterun_value* v,
                           const pterun_value* r) {
  if (v == r || v->tag != PTERUN_VALUE_TENSOR || r->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor *a = v->u.tensor, *b = r->u.tensor;
  const uint32_t vi = (uint32_t)(v - m->values);
  return !f->written[vi] && !f->outputs[vi] && f->refs[vi] == 1 &&
         m->aux[a - m->tensors].in_arena && m->aux[b - m->tensors].in_arena && a->data != NULL &&
         f->home[b - m->tensors] == NULL && a->data == b->data && a->dtype == b->dtype &&
         a->nbytes == b->nbytes;
}

/* Would rewriting the instructions at flat [pos, end] leave tensor value r's
 * memory unobserved? An elided view (a planned tensor nobody writes) over it
 * would read what r no longer receives; `view` (NULL: none) is one the
 * rewrite takes care of. */
static bool unviewed(const pterun_method* m, const fuse_facts* f, const pterun_value* r,
                     const pterun_value* view, uint32_t pos, uint32_t end) {
  const pterun_tensor* t = r->u.tensor;
  if (!m->aux[t - m->tensors].in_arena) return true;
  for (uint32_t v = 0; v < m->value_count; ++v) {
    const pterun_value* x = &m->values[v];
    if (x == r || x == view || x->tag != PTERUN_VALUE_TENSOR || f->written[v]) continue;
    if (m->aux[x->u.tensor - m->tensors].in_arena && overlaps(f, x->u.tensor, t) &&
        !view_unaffected(m, f, x, pos, end))
      return false;
  }
  return true;
}

/* A multi-output step `in` (result at argument `out`, its return slot the
 * list of its outs, the result first): the list and the other outs are
 * named by `in` alone and are no method outputs, so the fused call may leave
 * them unwritten. */
static bool other_outs_unread(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
                              uint32_t out, uint32_t pos) {
  const pterun_value* l = in->args[in->b - 1];
  if (l->tag != PTERUN_VALUE_LIST_TENSOR || l->u.tensors.len == 0 ||
      l->u.tensors.items[0] != in->args[out] || f->refs[l - m->values] != 1 ||
      f->outputs[l - m->values])
    return false;
  for (size_t j = 1; j < l->u.tensors.len; ++j) {
    const pterun_value* e = l->u.tensors.items[j];
    uint32_t named = 1; /* the list item */
    if (e == NULL || e == in->args[out] || e->tag != PTERUN_VALUE_TENSOR) return false;
    for (uint32_t k = 0; k < in->b; ++k) {
      if (in->args[k] != e) continue;
      if (k < out) return false; /* read by the step itself */
      ++named;
    }
    if (f->refs[e - m->values] != named || f->outputs[e - m->values] ||
        !unviewed(m, f, e, NULL, pos, pos))
      return false;
  }
  return true;
}

/* Is `r`, the result of `prev` (its return slot, or its first out `out`)
 * and read by `next` at `link` (itself or an elided view of it), private to
 * the two? (prev and next are at flat positions pos and end.) */
static bool private_link(const pterun_method* m, const fuse_facts* f, const pt_instr* prev,
                         uint32_t out, const pt_instr* next, uint32_t link, int32_t dtype,
                         uint32_t pos, uint32_t end) {
  const pterun_value* r = prev->args[out != 0 ? out : prev->b - 1];
  const pterun_value* view = next->args[link] != r ? next->args[link] : NULL;
  uint32_t ri = (uint32_t)(r - m->values), in_prev = 0, in_next = 0;
  uint32_t first_out = out != 0 ? out : prev->b - 2;
  if (r->tag != PTERUN_VALUE_TENSOR || (view != NULL && !elided_view_of(m, f, view, r)) ||
      f->outputs[ri])
    return false;
  if (dtype >= 0 && r->u.tensor->dtype != dtype) return false;
  for (uint32_t k = 0; k < prev->b; ++k) {
    if (prev->args[k] != r) continue;
    if (k < first_out) return false; /* prev reads it too */
    ++in_prev;
  }
  if (out != 0) { /* also named as the return list's first item */
    if (!other_outs_unread(m, f, prev, out, pos)) return false;
    ++in_prev;
  }
  for (uint32_t k = 0; k < next->b; ++k) in_next += next->args[k] == r;
  if (in_next != (view != NULL ? 0u : 1u) || f->refs[ri] != in_prev + in_next) return false;
  return unviewed(m, f, r, view, pos, end);
}

/* Does tensor value v (or a tensor of list v) share memory with `t`? */
static bool value_overlaps(const fuse_facts* f, const pterun_value* v, const pterun_tensor* t) {
  if (v->tag == PTERUN_VALUE_TENSOR) return v->u.tensor != t && overlaps(f, v->u.tensor, t);
  if (v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t k = 0; k < v->u.tensors.len; ++k) {
      const pterun_value* e = v->u.tensors.items[k];
      if (e != NULL && e->tag == PTERUN_VALUE_TENSOR && e->u.tensor != t &&
          overlaps(f, e->u.tensor, t))
        return true;
    }
  return false;
}

/* The fused call writes the chain's final result while it reads every
 * step's inputs, so the memory plan must not have given that result the
 * bytes of any input (it may, unfused: e.g. a convolution's input is dead
 * once the convolution ran, so the relu after it may write there). */
static bool result_disjoint(const fuse_facts* f, const pt_fuse_pattern* p,
                            const pt_instr* const* step, uint32_t steps) {
  const pterun_value* r = result_of(p, steps - 1, step[steps - 1]);
  if (r->tag != PTERUN_VALUE_TENSOR) return false;
  if (p->any_may_alias) return true;
  const bool fed = feeds_of(p) > 0;
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t k = 0; k < inputs_of(p, s); ++k)
      if ((s == 0 ? !p->step0_may_alias
                  : k != p->link[s]) /* an intermediate is never materialised */
          && !(fed && s == p->feed.step && k == p->feed.arg) /* nor a feed's result */
          && value_overlaps(f, step[s]->args[k], r->u.tensor))
        return false;
  return true;
}

/* The fused kernel gives its result the shape step p->shape_step computes
 * (the convolution's, the addmm's, ...), while the unfused chain's result
 * has the shape its last step gives it. They are the same when every later
 * step reads the previous result itself, not an elided view of it (a
 * linear on [B, T, K] is an addmm on [B * T, K] whose [B * T, N] result a
 * view turns into [B, T, N] before the relu), and the result has that
 * step's sizes and dim order; else the chain is left as it is. */
static bool shape_kept(const pt_fuse_pattern* p, const pt_instr* const* step, uint32_t steps) {
  const pterun_value* a = result_of(p, p->shape_step, step[p->shape_step]);
  const pterun_value* z = result_of(p, steps - 1, step[steps - 1]);
  if (a->tag != PTERUN_VALUE_TENSOR || z->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor *t = a->u.tensor, *r = z->u.tensor;
  bool same = t->rank == r->rank;
  for (uint32_t s = p->shape_step + 1u; s < steps; ++s)
    same = same && step[s]->args[p->link[s]] == result_of(p, s - 1, step[s - 1]);
  for (uint32_t d = 0; same && d < t->rank; ++d)
    same = t->sizes[d] == r->sizes[d] && t->dim_order[d] == r->dim_order[d];
  if (same || !p->rows_nd) return same;
  // A linear's kernel: [M, N], or the input's leading sizes and N, contiguous.
  const pterun_value* xv = step[0]->args[0];
  if (xv->tag != PTERUN_VALUE_TENSOR || t->rank != 2 || r->rank < 1) return false;
  const pterun_tensor* x = xv->u.tensor;
  for (uint32_t d = 0; d < r->rank; ++d)
    if (r->dim_order[d] != d) return false;
  if (r->sizes[r->rank - 1] != t->sizes[1]) return false;
  if (r->rank == 2) return r->sizes[0] == t->sizes[0];
  if (r->rank != x->rank) return false;
  for (uint32_t d = 0; d + 1 < r->rank; ++d)
    if (r->sizes[d] != x->sizes[d]) return false;
  return true;
}

/* Does instruction `in` name value v (any argument, list items, moves)? */
static bool names_value(const pterun_method* m, const pt_instr* in, const pterun_value* v) {
  if (in->type == PT_INSTR_MOVE_CALL) return &m->values[in->a] == v || &m->values[in->b] == v;
  if (in->type != PT_INSTR_KERNEL_CALL && in->type != PT_INSTR_DELEGATE_CALL) return false;
  for (uint32_t k = 0; k < in->b; ++k) {
    const pterun_value* a = in->args[k];
    if (a == v) return true;
    if (a->tag == PTERUN_VALUE_LIST_TENSOR || a->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
      for (size_t j = 0; j < a->u.tensors.len; ++j)
        if (a->u.tensors.items[j] == v) return true;
  }
  return false;
}

/* Does instruction `in` write value v, or memory overlapping tensor t? */
static bool writes(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
                   const pterun_value* v, const pterun_tensor* t) {
  if (in->type == PT_INSTR_MOVE_CALL) {
    const pterun_value* to = &m->values[in->b];
    return to == v || (to->tag == PTERUN_VALUE_TENSOR && t != NULL && overlaps(f, to->u.tensor, t));
  }
  if (in->type == PT_INSTR_DELEGATE_CALL) { /* any argument may be an output */
    for (uint32_t k = 0; k < in->b; ++k)
      if (in->args[k] == v || (t != NULL && value_overlaps(f, in->args[k], t))) return true;
    return false;
  }
  if (in->type != PT_INSTR_KERNEL_CALL || in->b == 0) return false;
  const pterun_value* r = in->args[in->b - 1];
  if (r == v || (t != NULL && value_overlaps(f, r, t))) return true;
  if (r->tag == PTERUN_VALUE_LIST_TENSOR || r->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t j = 0; j < r->u.tensors.len; ++j)
      if (r->u.tensors.items[j] == v) return true;
  return false;
}

static bool is_call(const pterun_method* m, const pt_instr* in, const char* op, uint8_t nargs) {
  return in->type == PT_INSTR_KERNEL_CALL && in->fn != NULL && in->b == nargs &&
         strcmp(m->op_names[in->a], op) == 0;
}

/* Does instruction `in` (the last reader of Z, at Z's new bytes y) write its
 * result exactly over Z while it reads it: an elementwise operator whose
 * result has Z's bytes, dtype and layout, Z one of its inputs, nothing else
 * it names in those bytes? Each output element then reads its own input
 * element first (the residual add after a folded batch norm). */
static bool overwrites_in_place(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
                                const pterun_value* zv, const pterun_tensor* y) {
  static const struct {
    const char* op;
    uint8_t nargs;
  } kElementwise[] = {{"aten::add.out", 5}, {"aten::sub.out", 5}, {"aten::mul.out", 4}};
  bool known = false;
  for (size_t k = 0; k < sizeof kElementwise / sizeof kElementwise[0]; ++k)
    known |= is_call(m, in, kElementwise[k].op, kElementwise[k].nargs);
  if (!known) return false;
  const pterun_value* rv = in->args[in->b - 1];
  const pterun_tensor* z = zv->u.tensor;
  if (rv->tag != PTERUN_VALUE_TENSOR || rv == zv || in->args[in->b - 2] != rv) return false;
  const pterun_tensor* r = rv->u.tensor;
  if (r->data != y->data || r->dtype != z->dtype || r->nbytes != z->nbytes || r->rank != z->rank)
    return false;
  for (int d = 0; d < r->rank; ++d)
    if (r->sizes[d] != z->sizes[d] || r->strides[d] != z->strides[d]) return false;
  bool reads_z = false;
  for (uint32_t k = 0; k + 2 < in->b; ++k) {
    const pterun_value* a = in->args[k];
    if (a == zv) {
      reads_z = true;
      continue;
    }
    if (value_overlaps(f, a, y)) return false;
  }
  return reads_z;
}

/* Can Z move into the bytes Y of step `host`'s result (redirect_host)? */
static bool can_redirect(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                         uint32_t i, uint32_t steps, uint32_t host) {
  if (m->chain_count != 1 || f->has_jumps) return false;
  const pt_chain* ch = &m->chains[0];
  const pt_instr *first = &ch->instrs[i], *last = &ch->instrs[i + steps - 1];
  const pterun_value* zv = result_of(p, steps - 1, last);
  const pterun_value* yv = first[host + 1].args[p->link[host + 1]]; /* step host's result */
  if (zv->tag != PTERUN_VALUE_TENSOR || yv->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor *z = zv->u.tensor, *y = yv->u.tensor;
  if (f->outputs[zv - m->values] || !m->aux[z - m->tensors].in_arena ||
      !m->aux[y - m->tensors].in_arena || y->data == NULL || z->dtype != y->dtype ||
      z->capacity > y->capacity)
    return false;
  // Y must not share memory with any input of the chain.
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t k = 0; k < inputs_of(p, s); ++k)
      if ((s == 0 || k != p->link[s]) && value_overlaps(f, first[s].args[k], y)) return false;
  // No elided view over Z's old bytes or Y's reads what the chain wrote.
  for (uint32_t v = 0; v < m->value_count; ++v) {
    const pterun_value* x = &m->values[v];
    if (x == zv || x == yv || x->tag != PTERUN_VALUE_TENSOR || f->written[v]) continue;
    if (m->aux[x->u.tensor - m->tensors].in_arena &&
        (overlaps(f, x->u.tensor, z) || overlaps(f, x->u.tensor, y)) &&
        !view_unaffected(m, f, x, i, i + steps - 1))
      return false;
  }
  // Z's last reader, and nobody else writes Z anywhere.
  uint32_t end = i + steps - 1, lastuse = end;
  for (uint32_t j = 0; j < ch->count; ++j) {
    if (j == end) continue;
    if (writes(m, f, &ch->instrs[j], zv, NULL)) return false;
    if (j > end && names_value(m, &ch->instrs[j], zv)) lastuse = j;
  }
  // Y's bytes untouched while Z lives there.
  for (uint32_t j = end + 1; j <= lastuse; ++j)
    if (writes(m, f, &ch->instrs[j], NULL, y) &&
        !(j == lastuse && overwrites_in_place(m, f, &ch->instrs[j], zv, y)))
      return false;
  return true;
}

/* When the chain's final result Z shares memory with one of its inputs, the
 * fused call can still write Z into an intermediate's bytes Y (which the
 * original chain wrote while reading those same inputs) if Y's bytes stay
 * untouched for Z's whole lifetime, but for Z's last reader writing its
 * result exactly over Z (overwrites_in_place): Z then lives there (its data
 * pointer is moved at load). Straight-line methods only; Z written by the
 * chain alone, not a method output, not viewed by an elided view. Tries the
 * intermediates from the last; returns the step whose result hosts Z, or -1. */
static int redirect_host(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                         uint32_t i, uint32_t steps) {
  for (uint32_t h = steps - 1; h-- > 0;)
    if (can_redirect(m, f, p, i, steps, h)) return (int)h;
  return -1;
}

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
    if (!is_call(m, prod, p->feed.ops[j], p->feed.nargs[j]) ||
        !private_link(m, f, prod, 0, reader, arg, p->dtype, at, rpos))
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
        if (writes(m, f, in, x, x->u.tensor) ||
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
 * result (redirect_host). On a
 * match, where[s] is step s's flat index and where[PT_FUSE_MAX_STEPS + j]
 * feed producer j's. */
static int matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                   uint32_t c, uint32_t i, uint32_t* where) {
  const pt_chain* ch = &m->chains[c];
  const uint32_t steps = steps_of(p), feeds = feeds_of(p), base = f->starts[c];
  const pt_instr* step[PT_FUSE_MAX_STEPS];
  uint32_t skipped[PT_FUSE_MAX_FEED], nskipped = 0;
  if (steps < 2 || i + steps > ch->count) return 0;
  for (uint32_t s = 0, at = i; s < steps; ++s, ++at) {
    // A feed producer between two steps is stepped over (feed_matches checks it).
    while (s > 0 && at < ch->count && nskipped < feeds &&
           !is_call(m, &ch->instrs[at], p->ops[s], p->nargs[s])) {
      if (f->jump_in[base + at] || f->covered[base + at]) return 0;
      skipped[nskipped++] = base + at++;
    }
    if (at >= ch->count || f->covered[base + at] ||
        !is_call(m, &ch->instrs[at], p->ops[s], p->nargs[s]))
      return 0;
    if (s > 0 &&
        (f->jump_in[base + at] || !private_link(m, f, step[s - 1], p->out[s - 1], &ch->instrs[at],
                                                p->link[s], p->dtype, where[s - 1], base + at)))
      return 0;
    step[s] = &ch->instrs[at];
    where[s] = base + at;
  }
  // A multi-output last step: its other outs go unwritten.
  if (p->out[steps - 1] != 0 &&
      !other_outs_unread(m, f, step[steps - 1], p->out[steps - 1], where[steps - 1]))
    return 0;
  if (!feed_matches(m, f, p, base, where, skipped, nskipped, steps)) return 0;
  if (!shape_kept(p, step, steps)) return 0;
  if (result_disjoint(f, p, step, steps)) return 1;
  const int host = feeds == 0 ? redirect_host(m, f, p, i, steps) : -1;
  return host >= 0 ? 2 + host : 0;
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
    n += (size_t)snprintf(chain + n, sizeof chain - n, "%s%s", s ? " > " : "", p->ops[s]);
  pt_log(&m->logger, PTERUN_LOG_DEBUG, "fusion: pattern %zu of %zu (%s => %s) at %u:%u", row,
         (size_t)PT_FUSE_PATTERNS, chain, p->fused, c, i);
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
    pt_log(&m->logger, PTERUN_LOG_DEBUG, "fusion: pattern %u undone (its kernel declined)",
           (unsigned)u->pattern);
    *nbefore = n;
    return true;
  }
  return false;
}

pterun_status pt_fuse(pterun_method* m, const pterun_registry* reg, bool no_prepare) {
  // Which fused operators this registry has (a pattern without one is off).
  pterun_kernel_fn fns[PT_FUSE_PATTERNS];
  pterun_kernel_prepare_fn preps[PT_FUSE_PATTERNS];
  bool any = false;
  m->fuse_op_base = m->op_count;
  for (size_t p = 0; p < PT_FUSE_PATTERNS; ++p) {
    fns[p] = NULL;
    preps[p] = NULL;
    if (pattern_ok(&kPatterns[p]) && !(no_prepare && kPatterns[p].needs_prepare))
      fns[p] = pt_registry_resolve(reg, kPatterns[p].fused, &preps[p]);
    any |= fns[p] != NULL;
  }
  uint32_t total = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) total += m->chains[c].count;
  if (!any || total < 2) return PTERUN_STATUS_OK;

  fuse_facts f;
  f.has_jumps = false;
  size_t nv = m->value_count;
  f.refs = pt_alloc(m->allocator, nv * sizeof *f.refs + 1, 16);
  f.written = pt_alloc(m->allocator, nv + 1, 16);
  f.outputs = pt_alloc(m->allocator, nv + 1, 16);
  f.jump_in = pt_alloc(m->allocator, total, 16);
  f.starts = pt_alloc(m->allocator, (m->chain_count + 1) * sizeof *f.starts, 16);
  f.writer = pt_alloc(m->allocator, (nv + 1) * sizeof *f.writer, 16);
  f.instr = pt_alloc(m->allocator, total * sizeof *f.instr, 16);
  f.covered = pt_alloc(m->allocator, total, 16);
  uint8_t* match = pt_alloc(m->allocator, total, 16); /* pattern + 1 at a chain's first step */
  f.tensors = m->tensors;
  f.home = pt_alloc(m->allocator, (m->tensor_count + 1) * sizeof *f.home, 16);
  void** home_initial = pt_alloc(m->allocator, (m->tensor_count + 1) * sizeof *home_initial, 16);
  /* per chain start: where its steps and feed producers are (flat indices) */
  const size_t wn = PT_FUSE_MAX_STEPS + PT_FUSE_MAX_FEED;
  uint32_t* where = pt_alloc(m->allocator, (size_t)total * wn * sizeof *where, 16);
  pterun_status st = PTERUN_STATUS_OK;
  if (f.refs == NULL || f.written == NULL || f.outputs == NULL || f.jump_in == NULL ||
      f.starts == NULL || match == NULL || f.home == NULL || home_initial == NULL ||
      f.writer == NULL || f.instr == NULL || f.covered == NULL || where == NULL) {
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
      uint32_t adv = 1, flat = f.starts[c] + i;
      uint32_t* w = &where[(size_t)flat * wn];
      for (size_t p = 0; p < PT_FUSE_PATTERNS; ++p) {
        int how = fns[p] != NULL ? matches(m, &f, &kPatterns[p], c, i, w) : 0;
        if (how != 0) {
          const uint32_t steps = steps_of(&kPatterns[p]), feeds = feeds_of(&kPatterns[p]);
          match[flat] = (uint8_t)((p + 1) | (how >= 2 ? PT_FUSE_REDIRECT : 0));
          if (how >= 2) {
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
      i += adv;
    }
  if (fused == 0) goto done;
  m->fused_args = pt_alloc(m->allocator, nargs * sizeof(pterun_value*), 16);
  if (m->fused_args == NULL) {
    st = pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for fused calls");
    goto done;
  }
  m->fused_bytes = nargs * sizeof(pterun_value*);
  m->fuse_undo = pt_alloc(m->allocator, fused * sizeof *m->fuse_undo, 16);
  if (m->fuse_undo == NULL) {
    st = pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for fused calls");
    goto done;
  }
  m->fuse_undo_count = 0;
  pterun_value** next = m->fused_args;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count; ++i) {
      uint8_t which = match[f.starts[c] + i] & (uint8_t)~PT_FUSE_REDIRECT;
      if (which == 0) continue;
      const pt_fuse_pattern* p = &kPatterns[which - 1];
      pt_instr* chain = &m->chains[c].instrs[i];
      const uint32_t* w = &where[(size_t)(f.starts[c] + i) * wn];
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
      chain[0].a = op_slot(m, p, fns[which - 1], preps[which - 1]);
      chain[0].b = p->fused_nargs;
      chain[0].args = next;
      chain[0].fn = fns[which - 1];
      // The later steps, producers the chain stepped over, the other producers.
      for (uint32_t k = w[0] + 1; k <= w[steps - 1]; ++k) skip(u, f.instr[k]);
      for (uint32_t j = 0; j < feeds; ++j) skip(u, f.instr[w[PT_FUSE_MAX_STEPS + j]]);
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
  if (st != PTERUN_STATUS_OK && f.home != NULL && home_initial != NULL) /* undo the moves */
    for (uint32_t t = 0; t < m->tensor_count; ++t)
      if (f.home[t] != NULL) {
        m->tensors[t].data = f.home[t];
        m->aux[t].initial_data = home_initial[t];
      }
  pt_free(m->allocator, f.home);
  pt_free(m->allocator, home_initial);
  pt_free(m->allocator, f.writer);
  pt_free(m->allocator, f.instr);
  pt_free(m->allocator, f.covered);
  pt_free(m->allocator, where);
  return st;
}
