/* The fusion pass's buffer and alias judgements: what the other
 * instructions do with each value (gather_facts), and whether a chain's
 * intermediates are private, its result disjoint from what the fused call
 * reads, or movable into an intermediate's bytes (method_fuse.c says why). */
#include <string.h>

#include "src/optimize/method_fuse_internal.h"

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

bool pt_fuse_facts_alloc(const pterun_method* m, fuse_facts* f, uint32_t total) {
  const size_t nv = m->value_count;
  memset(f, 0, sizeof *f);
  f->refs = pterun_alloc(m->allocator, nv * sizeof *f->refs + 1, 16);
  f->written = pterun_alloc(m->allocator, nv + 1, 16);
  f->outputs = pterun_alloc(m->allocator, nv + 1, 16);
  f->jump_in = pterun_alloc(m->allocator, total + 1, 16);
  f->starts = pterun_alloc(m->allocator, (m->chain_count + 1) * sizeof *f->starts, 16);
  f->writer = pterun_alloc(m->allocator, (nv + 1) * sizeof *f->writer, 16);
  f->instr = pterun_alloc(m->allocator, (total + 1) * sizeof *f->instr, 16);
  f->tensors = m->tensors;
  return f->refs != NULL && f->written != NULL && f->outputs != NULL && f->jump_in != NULL &&
         f->starts != NULL && f->writer != NULL && f->instr != NULL;
}

void pt_fuse_facts_free(const pterun_method* m, fuse_facts* f) {
  pterun_free(m->allocator, f->refs);
  pterun_free(m->allocator, f->written);
  pterun_free(m->allocator, f->outputs);
  pterun_free(m->allocator, f->jump_in);
  pterun_free(m->allocator, f->starts);
  pterun_free(m->allocator, f->writer);
  pterun_free(m->allocator, f->instr);
}

void pt_fuse_gather_facts(const pterun_method* m, fuse_facts* f) {
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
    if (!covered && pt_fuse_names_value(m, &ch->instrs[j], x)) return false;
    covered = covered || covers(f, &ch->instrs[j], x->u.tensor);
  }
  for (uint32_t j = start; j <= end; ++j)
    if (pt_fuse_names_value(m, &ch->instrs[j], x)) return false;
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
bool pt_fuse_other_outs_unread(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
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
bool pt_fuse_private_link(const pterun_method* m, const fuse_facts* f, const pt_instr* prev,
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
  if (dtype == PT_FUSE_DTYPE_F32_OR_Q8 && r->u.tensor->dtype != PTERUN_DTYPE_F32 &&
      r->u.tensor->dtype != PTERUN_DTYPE_I8 && r->u.tensor->dtype != PTERUN_DTYPE_U8)
    return false;
  for (uint32_t k = 0; k < prev->b; ++k) {
    if (prev->args[k] != r) continue;
    if (k < first_out) return false; /* prev reads it too */
    ++in_prev;
  }
  if (out != 0) { /* also named as the return list's first item */
    if (!pt_fuse_other_outs_unread(m, f, prev, out, pos)) return false;
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
bool pt_fuse_result_disjoint(const fuse_facts* f, const pt_fuse_pattern* p,
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

/* Does the chain's result share bytes with anything the fused call reads,
 * whatever the pattern allows (a kernel that copes by copying an input each
 * run still pays for the copy)? */
bool pt_fuse_result_overlaps_reads(const fuse_facts* f, const pt_fuse_pattern* p,
                                   const pt_instr* const* step, uint32_t steps) {
  const pterun_value* r = result_of(p, steps - 1, step[steps - 1]);
  if (r->tag != PTERUN_VALUE_TENSOR) return false;
  const bool fed = feeds_of(p) > 0;
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t k = 0; k < inputs_of(p, s); ++k)
      if ((s == 0 || k != p->link[s]) && !(fed && s == p->feed.step && k == p->feed.arg) &&
          value_overlaps(f, step[s]->args[k], r->u.tensor))
        return true;
  return false;
}

/* Can the chain's result Z (its steps at flat where[0..steps)) take bytes of
 * its own, allocated at load (pt_fuse_private_home)? Z a planned tensor the
 * chain's last step alone writes, no method output, its capacity within
 * `room`, and no elided view over its planned bytes (it would no longer see
 * Z there). Nothing else ever names the new bytes, so this holds with jumps
 * and several chains too. */
bool pt_fuse_private_ok(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                        const uint32_t* where, uint32_t steps, uint64_t room) {
  const pt_instr* last = f->instr[where[steps - 1]];
  const pterun_value* zv = result_of(p, steps - 1, last);
  if (zv->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor* z = zv->u.tensor;
  const uint32_t zi = (uint32_t)(zv - m->values);
  /* the facts record a call's last argument as what it writes: Z is then
   * the last step's, or (a multi-output step's first out, p->out) no call's */
  const uint32_t zw = p->out[steps - 1] != 0 ? 0 : where[steps - 1] + 1;
  if (f->outputs[zi] || !m->aux[z - m->tensors].in_arena || z->data == NULL || z->capacity == 0 ||
      z->capacity > room || f->home[z - m->tensors] != NULL || f->writer[zi] != zw)
    return false;
  for (uint32_t k = 0; k < m->input_count; ++k)
    if (m->inputs[k] == zi) return false;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t j = 0; j < m->chains[c].count; ++j) {
      const pt_instr* in = &m->chains[c].instrs[j];
      if (in != last && pt_fuse_writes(m, f, in, zv, NULL)) return false;
    }
  return unviewed(m, f, zv, NULL, where[0], where[steps - 1]);
}

/* The fused kernel gives its result the shape step p->shape_step computes
 * (the convolution's, the addmm's, ...), while the unfused chain's result
 * has the shape its last step gives it. They are the same when every later
 * step reads the previous result itself, not an elided view of it (a
 * linear on [B, T, K] is an addmm on [B * T, K] whose [B * T, N] result a
 * view turns into [B, T, N] before the relu), and the result has that
 * step's sizes and dim order; else the chain is left as it is. */
bool pt_fuse_shape_kept(const pt_fuse_pattern* p, const pt_instr* const* step, uint32_t steps) {
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
bool pt_fuse_names_value(const pterun_method* m, const pt_instr* in, const pterun_value* v) {
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
bool pt_fuse_writes(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
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

bool pt_fuse_is_call(const pterun_method* m, const pt_instr* in, const char* op, uint8_t nargs) {
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
    known |= pt_fuse_is_call(m, in, kElementwise[k].op, kElementwise[k].nargs);
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
    if (pt_fuse_writes(m, f, &ch->instrs[j], zv, NULL)) return false;
    if (j > end && pt_fuse_names_value(m, &ch->instrs[j], zv)) lastuse = j;
  }
  // Y's bytes untouched while Z lives there.
  for (uint32_t j = end + 1; j <= lastuse; ++j)
    if (pt_fuse_writes(m, f, &ch->instrs[j], NULL, y) &&
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
int pt_fuse_redirect_host(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                          uint32_t i, uint32_t steps) {
  for (uint32_t h = steps - 1; h-- > 0;)
    if (can_redirect(m, f, p, i, steps, h)) return (int)h;
  return -1;
}

/* For the recurrent-cell matcher (method_fuse_cell.c) and copy elision
 * (method_elide.c). */
bool pt_fuse_overlap(const fuse_facts* f, const pterun_tensor* a, const pterun_tensor* b) {
  return overlaps(f, a, b);
}

bool pt_fuse_unviewed(const pterun_method* m, const fuse_facts* f, const pterun_value* r,
                      uint32_t pos, uint32_t end) {
  return unviewed(m, f, r, NULL, pos, end);
}
