/* Load-time constant folding of layout operators.
 *
 * The exporter leaves e.g. `permute_copy(weight)` in front of every Linear:
 * run as written, each execute transposes every weight again (a third of a
 * small transformer's time). When such an instruction reads only constants
 * and its result is a planned tensor nothing else writes or aliases, pterun
 * runs it once at load into its own memory and skips it afterwards. Folds
 * that would compute the same bytes (an unrolled RNN transposes the same
 * weight at every step) share the first one's result.
 *
 * A transpose of a float32 matrix constant (the Linear weight in front of
 * addmm / mm) is not copied at first: its result becomes a strided view of
 * the constant's own bytes (dim order [1, 0], a valid layout), the readers'
 * prepares see that view, and a reader that packs it says so
 * (pterun_kernel_packed_constant). After prepare, a view every reader
 * packed stays a view -- the weight is then held twice (file, packed), not
 * three times; any other is copied into a dense result as before
 * (pt_fold_resolve_views). */
#include <string.h>

#include "src/core/kernel_context.h"
#include "src/optimize/opt_internal.h"
#include "src/core/schema.h"

/* Operators that only move or convert bytes: safe to run early. */
static const char* const kFoldable[] = {
    "aten::permute_copy.out",
    "aten::transpose_copy.int_out",
    "aten::t_copy.out",
    "aten::view_copy.out",
    "aten::unsqueeze_copy.out",
    "aten::squeeze_copy.dim_out",
    "aten::squeeze_copy.dims_out",
    "aten::expand_copy.out",
    "aten::clone.out",
    "aten::_to_copy.out",
    "dim_order_ops::_to_dim_order_copy.out",
    "dim_order_ops::_clone_dim_order.out",
};

static bool foldable_op(const char* op) {
  for (size_t i = 0; i < sizeof kFoldable / sizeof kFoldable[0]; ++i)
    if (strcmp(op, kFoldable[i]) == 0) return true;
  return false;
}

static uint32_t index_of(const pterun_method* m, const pterun_value* v) {
  return (uint32_t)(v - m->values);
}

/* writes[v]: how many instructions may write value v (results, list items of
 * results, move targets); method inputs count as written by the caller. */
static void count_writes(const pterun_method* m, uint16_t* writes) {
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count; ++i) {
      const pt_instr* in = &m->chains[c].instrs[i];
      if (in->type == PT_INSTR_MOVE_CALL) {
        if (writes[in->b] < UINT16_MAX) ++writes[in->b];
      } else if (in->type == PT_INSTR_DELEGATE_CALL) {
        for (uint32_t k = 0; k < in->b; ++k) /* any argument may be an output */
          if (writes[index_of(m, in->args[k])] < UINT16_MAX) ++writes[index_of(m, in->args[k])];
      } else if (in->type == PT_INSTR_KERNEL_CALL && in->b > 0) {
        const pterun_value* r = in->args[in->b - 1];
        uint32_t ri = index_of(m, r);
        if (writes[ri] < UINT16_MAX) ++writes[ri];
        if (r->tag == PTERUN_VALUE_LIST_TENSOR || r->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
          for (size_t k = 0; k < r->u.tensors.len; ++k)
            if (r->u.tensors.items[k] != NULL &&
                writes[index_of(m, r->u.tensors.items[k])] < UINT16_MAX)
              ++writes[index_of(m, r->u.tensors.items[k])];
      }
    }
  for (uint32_t k = 0; k < m->input_count; ++k) writes[m->inputs[k]] = UINT16_MAX;
}

static bool is_constant(const pterun_method* m, const pterun_tensor* t) {
  const pt_tensor_aux* a = &m->aux[t - m->tensors];
  return a->has_memory && !a->in_arena;
}

/* Instructions in execution order (chains one after another). */
typedef struct flat {
  const pt_instr** list;
  uint32_t count;
  bool has_jumps;
} flat;

static bool overlaps(const pterun_tensor* a, const pterun_tensor* b) {
  uintptr_t a0 = (uintptr_t)a->data, a1 = a0 + a->capacity;
  uintptr_t b0 = (uintptr_t)b->data, b1 = b0 + b->capacity;
  return a0 < b1 && b0 < a1;
}

/* Does instruction `in` write memory overlapping t? */
static bool writes_over(const pt_instr* in, const pterun_tensor* t) {
  if (in->type != PT_INSTR_KERNEL_CALL || in->b == 0) return false;
  const pterun_value* r = in->args[in->b - 1];
  if (r->tag == PTERUN_VALUE_TENSOR) return r->u.tensor->data != NULL && overlaps(r->u.tensor, t);
  if (r->tag == PTERUN_VALUE_LIST_TENSOR || r->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t k = 0; k < r->u.tensors.len; ++k) {
      const pterun_value* e = r->u.tensors.items[k];
      if (e != NULL && e->tag == PTERUN_VALUE_TENSOR && overlaps(e->u.tensor, t)) return true;
    }
  return false;
}

/* Does instruction `in` read value v (as an argument other than its result)? */
static bool reads(const pt_instr* in, const pterun_value* v) {
  if (in->type != PT_INSTR_KERNEL_CALL) return false;
  for (uint32_t k = 0; k + 1 < in->b; ++k)
    if (in->args[k] == v && in->args[k] != in->args[in->b - 1]) return true;
  return false;
}

/* An elided view is a tensor value nothing writes that shares memory with a
 * written one; it sees whatever the last writer of that memory produced.
 * Is `alias` such a view of what instruction `at` (position `pos`) writes? */
static bool views_result(const pterun_method* m, const flat* f, uint32_t pos,
                         const pterun_value* alias) {
  const pterun_tensor* t = alias->u.tensor;
  bool is_output = false;
  for (uint32_t k = 0; k < m->output_count; ++k) is_output |= &m->values[m->outputs[k]] == alias;
  for (uint32_t j = 0; j <= f->count; ++j) {
    bool read_here = j < f->count ? reads(f->list[j], alias) : is_output;
    if (!read_here) continue;
    for (uint32_t w = j; w-- > 0;)
      if (writes_over(f->list[w], t)) {
        if (w == pos) return true;
        break;
      }
  }
  return false;
}

/* Every argument but the result is a constant tensor or a value no
 * instruction writes; the result is a static planned tensor written only here
 * and no elided view reads it. */
static bool can_fold(const pterun_method* m, const flat* f, uint32_t pos, const uint16_t* writes) {
  const pt_instr* in = f->list[pos];
  if (in->b < 2) return false;
  const pterun_value* res = in->args[in->b - 1];
  if (res->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor* out = res->u.tensor;
  const pt_tensor_aux* oa = &m->aux[out - m->tensors];
  if (!oa->in_arena || out->dynamism != PTERUN_SHAPE_STATIC || out->nbytes == 0 ||
      writes[index_of(m, res)] != 1)
    return false;
  for (uint32_t k = 0; k + 1 < in->b; ++k) {
    const pterun_value* v = in->args[k];
    if (v == res) continue; /* the out argument itself */
    if (writes[index_of(m, v)] != 0) return false;
    if (v->tag == PTERUN_VALUE_TENSOR && !is_constant(m, v->u.tensor)) return false;
    if (v->tag == PTERUN_VALUE_LIST_INT)
      for (size_t j = 0; j < v->u.ints.len; ++j)
        if (writes[index_of(m, v->u.ints.items[j])] != 0) return false;
    if (v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
      return false;
  }
  // Moving the result would leave an elided view of it reading memory nobody
  // writes any more. With jumps the order is not linear: be strict then.
  for (uint32_t v = 0; v < m->value_count; ++v) {
    const pterun_value* x = &m->values[v];
    if (x->tag != PTERUN_VALUE_TENSOR || x->u.tensor == out || writes[v] != 0) continue;
    const pterun_tensor* t = x->u.tensor;
    if (!m->aux[t - m->tensors].in_arena || !overlaps(t, out)) continue;
    if (f->has_jumps || views_result(m, f, pos, x)) return false;
  }
  return true;
}

/* One deferred transpose: the instruction, its result and the result as the
 * program laid it out (restored when the view has to become a copy). */
typedef struct pt_view_fold {
  pt_instr* in;
  pterun_value* res;
  pterun_tensor dense;
  bool released; /* its bytes were given back: it must stay a view */
  void* copy;    /* the dense copy it became (pt_fold_resolve_views), else NULL */
} pt_view_fold;

typedef struct pt_view_claim {
  const pt_instr* in;
  const pterun_tensor* t;
  bool packed_only; /* execute never reads t (PTERUN_KERNEL_PACKED_ONLY) */
} pt_view_claim;

static bool int_arg(const pterun_value* v, int64_t* out) {
  if (v->tag != PTERUN_VALUE_INT) return false;
  *out = v->u.i;
  return true;
}

/* Is `in` a transpose of a dense float32 rank-2 constant into a static
 * float32 [cols, rows] result (permute_copy [1, 0], transpose_copy 0 <-> 1,
 * t_copy)? */
static bool is_matrix_transpose(const pterun_method* m, const pt_instr* in) {
  const char* op = m->op_names[in->a];
  if (in->b < 3 || in->args[0]->tag != PTERUN_VALUE_TENSOR) return false;
  if (strcmp(op, "aten::permute_copy.out") == 0) {
    const pterun_value* d = in->args[1];
    if (in->b != 4 || d->tag != PTERUN_VALUE_LIST_INT || d->u.ints.len != 2) return false;
    int64_t d0, d1;
    if (!int_arg(d->u.ints.items[0], &d0) || !int_arg(d->u.ints.items[1], &d1)) return false;
    if ((d0 + 2) % 2 != 1 || (d1 + 2) % 2 != 0) return false;
  } else if (strcmp(op, "aten::transpose_copy.int_out") == 0) {
    int64_t d0, d1;
    if (in->b != 5 || !int_arg(in->args[1], &d0) || !int_arg(in->args[2], &d1) || d0 < -2 ||
        d0 > 1 || d1 < -2 || d1 > 1 || (d0 + 2) % 2 == (d1 + 2) % 2)
      return false;
  } else if (strcmp(op, "aten::t_copy.out") != 0 || in->b != 3) {
    return false;
  }
  const pterun_tensor* src = in->args[0]->u.tensor;
  const pterun_tensor* out = in->args[in->b - 1]->u.tensor;
  return is_constant(m, src) && src->dtype == PTERUN_DTYPE_F32 && src->rank == 2 &&
         pterun_tensor_is_contiguous(src) && src->strides[1] == 1 &&
         src->strides[0] == src->sizes[1] && src->sizes[0] > 0 && src->sizes[1] > 0 &&
         src->nbytes == (size_t)src->numel * sizeof(float) && out->dtype == PTERUN_DTYPE_F32 &&
         out->rank == 2 && out->sizes[0] == src->sizes[1] && out->sizes[1] == src->sizes[0] &&
         out->nbytes == src->nbytes;
}

static bool refers_to_item(const pterun_value* x, const pterun_value* v) {
  if (x->tag != PTERUN_VALUE_LIST_TENSOR && x->tag != PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    return false;
  for (size_t j = 0; j < x->u.tensors.len; ++j)
    if (x->u.tensors.items[j] == v) return true;
  return false;
}

/* Does instruction `in` name value v anywhere (arguments, list items,
 * moves, jumps)? Kernel calls' own result aside. */
static bool refers_to(const pterun_method* m, const pt_instr* in, const pterun_value* v) {
  uint32_t vi = index_of(m, v);
  if (in->type == PT_INSTR_MOVE_CALL || in->type == PT_INSTR_JUMP_FALSE_CALL) return in->a == vi;
  if (in->type != PT_INSTR_KERNEL_CALL && in->type != PT_INSTR_DELEGATE_CALL) return false;
  for (uint32_t k = 0; k < in->b; ++k) {
    const pterun_value* x = in->args[k];
    if (in->type == PT_INSTR_KERNEL_CALL && k + 1 == in->b) break; /* the result */
    if (x == v || refers_to_item(x, v)) return true;
  }
  return false;
}

/* Readers a view may be shown to: matrix products whose mat2 any layout
 * suits (ATen's semantics; the portable kernels read it through its strides
 * or packed). Anything else reads the folded result dense, as before. */
static bool view_reader(const pterun_method* m, const pt_instr* r, const pterun_value* res) {
  const char* op = m->op_names[r->a];
  uint32_t at = strcmp(op, "aten::mm.out") == 0 && r->b == 4      ? 1
                : strcmp(op, "aten::addmm.out") == 0 && r->b == 7 ? 2
                                                                  : UINT32_MAX;
  if (at == UINT32_MAX || m->op_prepares[r->a] == NULL) return false;
  for (uint32_t k = 0; k + 1 < r->b; ++k)
    if ((r->args[k] == res) != (k == at) || refers_to_item(r->args[k], res)) return false;
  return true;
}

/* Can fold `pos` (a transpose of a matrix constant) stay a view until
 * prepare? Its result is no method output, and every instruction naming it
 * is a matrix product reading it as mat2 (view_reader), not itself folded. */
static bool can_defer(const pterun_method* m, const flat* f, uint32_t pos, const uint8_t* fold) {
  const pt_instr* in = f->list[pos];
  if (!is_matrix_transpose(m, in)) return false;
  const pterun_value* res = in->args[in->b - 1];
  for (uint32_t k = 0; k < m->output_count; ++k)
    if (&m->values[m->outputs[k]] == res) return false;
  for (uint32_t j = 0; j < f->count; ++j) {
    const pt_instr* r = f->list[j];
    if (j == pos || !refers_to(m, r, res)) continue;
    if (r->type != PT_INSTR_KERNEL_CALL || fold[j] || !view_reader(m, r, res)) return false;
  }
  return true;
}

/* Makes fold `in`'s result a strided view of its input's bytes. */
static void make_view(pterun_method* m, pt_view_fold* vf, pt_instr* in) {
  pterun_value* res = in->args[in->b - 1];
  pterun_tensor* out = res->u.tensor;
  const pterun_tensor* src = in->args[0]->u.tensor;
  vf->in = in;
  vf->res = res;
  vf->dense = *out;
  out->data = src->data;
  out->capacity = src->nbytes;
  out->dim_order[0] = 1;
  out->dim_order[1] = 0;
  out->strides[0] = 1;
  out->strides[1] = src->sizes[1];
  pt_tensor_aux* a = &m->aux[out - m->tensors];
  a->in_arena = 0;
  a->has_memory = 1;
  a->initial_data = src->data;
  in->type = PT_INSTR_FOLDED;
}

static bool same_tensor(const pterun_tensor* a, const pterun_tensor* b) {
  return a->dtype == b->dtype && a->rank == b->rank && a->nbytes == b->nbytes &&
         memcmp(a->sizes, b->sizes, a->rank * sizeof a->sizes[0]) == 0 &&
         memcmp(a->dim_order, b->dim_order, a->rank) == 0;
}

/* Arguments that make two folds produce the same bytes: the same value, or
 * equal scalars / int lists, or tensors over the same constant bytes. */
static bool same_arg(const pterun_value* x, const pterun_value* y) {
  if (x == y) return true;
  if (x->tag != y->tag) return false;
  switch (x->tag) {
    case PTERUN_VALUE_NONE: return true;
    case PTERUN_VALUE_INT: return x->u.i == y->u.i;
    case PTERUN_VALUE_BOOL: return x->u.b == y->u.b;
    case PTERUN_VALUE_DOUBLE: return memcmp(&x->u.d, &y->u.d, sizeof x->u.d) == 0;
    case PTERUN_VALUE_TENSOR:
      return x->u.tensor->data != NULL && x->u.tensor->data == y->u.tensor->data &&
             same_tensor(x->u.tensor, y->u.tensor);
    case PTERUN_VALUE_LIST_INT:
      if (x->u.ints.len != y->u.ints.len) return false;
      for (size_t j = 0; j < x->u.ints.len; ++j)
        if (x->u.ints.items[j]->u.i != y->u.ints.items[j]->u.i) return false;
      return true;
    default: return false;
  }
}

/* Do folds p and in compute the same bytes? */
static bool same_instr(const pt_instr* p, const pt_instr* in) {
  if (p->a != in->a || p->b != in->b ||
      !same_tensor(p->args[p->b - 1]->u.tensor, in->args[in->b - 1]->u.tensor))
    return false;
  for (uint32_t k = 0; k + 1 < in->b; ++k) /* the out argument aside */
    if (!(in->args[k] == in->args[in->b - 1] ? p->args[k] == p->args[p->b - 1]
                                             : same_arg(p->args[k], in->args[k])))
      return false;
  return true;
}

/* An earlier fold that computed what `in` would (an unrolled RNN transposes
 * the same weight at every step): its result memory, else NULL. */
static void* same_fold(pt_instr* const* done, uint32_t ndone, const pt_instr* in) {
  for (uint32_t d = 0; d < ndone; ++d)
    if (same_instr(done[d], in)) return done[d]->args[done[d]->b - 1]->u.tensor->data;
  return NULL;
}

/* Is an earlier fold of f (before pos) deferred as a view of what fold pos
 * computes? Then pos costs the budget nothing more: if the views have to
 * become copies they share one (pt_fold_resolve_views). */
static bool same_view(const flat* f, uint32_t pos, const uint8_t* fold) {
  for (uint32_t j = 0; j < pos; ++j)
    if (fold[j] == 2 && same_instr(f->list[j], f->list[pos])) return true;
  return false;
}

pterun_status pt_fold_constants(pterun_method* m, const pt_core_services* core, bool defer_views) {
  uint32_t total = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) total += m->chains[c].count;
  if (total == 0) return PTERUN_STATUS_OK;
  uint16_t* writes = pterun_alloc(m->allocator, (size_t)m->value_count * sizeof *writes + 1, 16);
  flat f = {pterun_alloc(m->allocator, total * sizeof(pt_instr*), 16), 0, false};
  pterun_status st = PTERUN_STATUS_OK;
  if (writes == NULL || f.list == NULL) {
    st = PTERUN_STATUS_OUT_OF_MEMORY;
    goto done;
  }
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count; ++i) {
      f.list[f.count++] = &m->chains[c].instrs[i];
      f.has_jumps |= m->chains[c].instrs[i].type == PT_INSTR_JUMP_FALSE_CALL;
    }
  count_writes(m, writes);
  // Decide first (folding moves results, which would change the analysis).
  uint8_t* fold = pterun_alloc(m->allocator, f.count, 16);
  if (fold == NULL) {
    st = PTERUN_STATUS_OUT_OF_MEMORY;
    goto done;
  }
  uint32_t candidates = 0;
  for (uint32_t i = 0; i < f.count; ++i) {
    const pt_instr* in = f.list[i];
    fold[i] = in->type == PT_INSTR_KERNEL_CALL && foldable_op(m->op_names[in->a]) &&
              can_fold(m, &f, i, writes);
    candidates += fold[i];
  }
  pt_instr** done = NULL; /* the folds made so far, for same_fold */
  uint32_t ndone = 0, shared = 0, over_budget = 0;
  uint64_t deferred_bytes = 0; /* views that may still become copies */
  // Folds copy or convert constants (every byte from the files), an
  // expand_copy aside: twice the files' bytes leaves room for a widening
  // dtype conversion of all of them.
  uint64_t budget = m->file_bytes > UINT64_MAX / 2 ? UINT64_MAX : 2 * m->file_bytes;
  if (candidates > 0) {
    m->folded = pterun_alloc(m->allocator, candidates * sizeof(void*), 16);
    done = pterun_alloc(m->allocator, candidates * sizeof(pt_instr*), 16);
    if (m->folded == NULL || done == NULL) st = PTERUN_STATUS_OUT_OF_MEMORY;
    if (defer_views && st == PTERUN_STATUS_OK) {
      m->view_folds = pterun_alloc(m->allocator, candidates * sizeof *m->view_folds, 16);
      if (m->view_folds == NULL) st = PTERUN_STATUS_OUT_OF_MEMORY;
    }
  }
  // Decide the views before any fold moves a result (can_defer reads fold[]).
  for (uint32_t i = 0; i < f.count && st == PTERUN_STATUS_OK && defer_views; ++i) {
    if (!fold[i] || !can_defer(m, &f, i, fold)) continue;
    pt_instr* in = (pt_instr*)f.list[i];
    const size_t nb = in->args[in->b - 1]->u.tensor->nbytes;
    if (!same_view(&f, i, fold)) {
      if (nb > budget - deferred_bytes) continue; /* it may have to become a copy */
      deferred_bytes += nb;
    }
    fold[i] = 2;
  }
  for (uint32_t i = 0; i < f.count && st == PTERUN_STATUS_OK; ++i) {
    if (fold[i] == 2) make_view(m, &m->view_folds[m->view_fold_count++], (pt_instr*)f.list[i]);
  }
  for (uint32_t i = 0; i < f.count && st == PTERUN_STATUS_OK; ++i) {
    if (fold[i] != 1) continue;
    pt_instr* in = (pt_instr*)f.list[i];
    pterun_tensor* out = in->args[in->b - 1]->u.tensor;
    void* prev = same_fold(done, ndone, in);
    if (prev != NULL) {
      /* Folded results are read-only from here on (nothing else writes
       * them), so equal ones can share bytes. */
      out->data = prev;
      out->capacity = out->nbytes;
      pt_tensor_aux* a = &m->aux[out - m->tensors];
      a->in_arena = 0;
      a->has_memory = 1;
      a->initial_data = prev;
      in->type = PT_INSTR_FOLDED;
      ++shared;
      continue;
    }
    // Many folds may name one planned range (each a distinct, unshared
    // result), so their total is not bounded by the file: past the budget,
    // leave the rest to run at execute.
    if (out->nbytes > budget - deferred_bytes - m->folded_bytes) {
      ++over_budget;
      continue;
    }
    void* mem = pterun_alloc(m->allocator, out->nbytes, 64);
    if (mem == NULL) {
      st = PTERUN_STATUS_OUT_OF_MEMORY;
      break;
    }
    pterun_tensor saved = *out;
    out->data = mem;
    out->capacity = out->nbytes;
    struct pterun_kernel_context ctx = {.logger = &m->logger,
                                        .op_name = m->op_names[in->a],
                                        .scratch = m->scratch,
                                        .scratch_size = m->scratch_size,
                                        .threadpool = m->threadpool,
                                        .max_threads = m->max_threads};
    if (in->fn(&ctx, in->args, in->b) != PTERUN_STATUS_OK) {
      // Leave it to run (and fail, with its message) at execute time.
      *out = saved;
      pterun_free(m->allocator, mem);
      continue;
    }
    pt_tensor_aux* a = &m->aux[out - m->tensors];
    a->in_arena = 0;
    a->has_memory = 1;
    a->initial_data = mem;
    m->folded[m->folded_count++] = mem; /* room: view folds take slots only when copied */
    m->folded_bytes += out->nbytes;
    in->type = PT_INSTR_FOLDED;
    done[ndone++] = in;
  }
  pterun_free(m->allocator, done);
  pterun_free(m->allocator, fold);
done:
  pterun_free(m->allocator, writes);
  pterun_free(m->allocator, f.list);
  if (st != PTERUN_STATUS_OK)
    return opt_fail(&m->logger, st, "method: cannot allocate memory for folded constants");
  if (over_budget > 0)
    pterun_log(&m->logger, PTERUN_LOG_INFO,
               "%u constant layout instructions not folded: their results would exceed "
               "%llu bytes (twice the method's files)",
               over_budget, (unsigned long long)budget);
  if (m->folded_count > 0)
    pterun_log(&m->logger, PTERUN_LOG_DEBUG,
               "folded %u constant layout instructions (%zu bytes; %u more reuse an equal result)",
               m->folded_count, m->folded_bytes, shared);
  return PTERUN_STATUS_OK;
}

void pt_fold_claim_view(pterun_method* m, const pt_instr* in, const pterun_tensor* t,
                        bool packed_only) {
  bool deferred = false;
  for (uint32_t v = 0; v < m->view_fold_count && !deferred; ++v)
    deferred = m->view_folds[v].res->u.tensor == t;
  if (!deferred || in == NULL) return;
  for (uint32_t c = 0; c < m->view_claim_count; ++c)
    if (m->view_claims[c].in == in && m->view_claims[c].t == t) {
      m->view_claims[c].packed_only &= packed_only;
      return;
    }
  if (m->view_claim_count == m->view_claim_cap) {
    /* Grows at load time only; no memory fails the load (prepare_one). */
    uint32_t cap = m->view_claim_cap > 0 ? 2 * m->view_claim_cap : 16;
    pt_view_claim* more = pterun_alloc(m->allocator, cap * sizeof *more, 16);
    if (more == NULL) {
      m->view_claim_oom = true;
      return;
    }
    if (m->view_claim_count > 0) memcpy(more, m->view_claims, m->view_claim_count * sizeof *more);
    pterun_free(m->allocator, m->view_claims);
    m->view_claims = more;
    m->view_claim_cap = cap;
  }
  m->view_claims[m->view_claim_count++] = (pt_view_claim){in, t, packed_only};
}

static bool claimed(const pterun_method* m, const pt_instr* in, const pterun_tensor* t,
                    bool packed_only) {
  for (uint32_t c = 0; c < m->view_claim_count; ++c)
    if (m->view_claims[c].in == in && m->view_claims[c].t == t)
      return !packed_only || m->view_claims[c].packed_only;
  return false;
}

/* Does every instruction that names the view read it as an argument of a
 * kernel call whose prepare packed it (for good: `packed_only`)? Skipped
 * steps of fused chains count too (an unfused chain brings them back). */
static bool all_readers_pack(const pterun_method* m, const pt_view_fold* vf, bool packed_only) {
  const pterun_tensor* t = vf->res->u.tensor;
  for (uint32_t c = 0; c < m->chain_count; ++c)
    for (uint32_t i = 0; i < m->chains[c].count; ++i) {
      const pt_instr* in = &m->chains[c].instrs[i];
      if (in == vf->in) continue;
      if (in->type == PT_INSTR_FOLDED) {
        if (packed_only && in->args != NULL &&
            refers_to(m, &(pt_instr){.type = PT_INSTR_KERNEL_CALL, .b = in->b, .args = in->args},
                      vf->res))
          return false;
        continue;
      }
      if (!refers_to(m, in, vf->res)) continue;
      if (in->type != PT_INSTR_KERNEL_CALL || !claimed(m, in, t, packed_only)) return false;
      for (uint32_t k = 0; k + 1 < in->b; ++k)
        if (in->args[k] != vf->res && refers_to_item(in->args[k], vf->res)) return false;
    }
  return true;
}

pterun_status pt_fold_resolve_views(pterun_method* m) {
  pterun_status st = PTERUN_STATUS_OK;
  for (uint32_t v = 0; v < m->view_fold_count && st == PTERUN_STATUS_OK; ++v) {
    pt_view_fold* vf = &m->view_folds[v];
    if (vf->released || all_readers_pack(m, vf, false)) {
      ++m->views_kept;
      continue;
    }
    // Some reader reads the dense result: run the transpose into a copy, or
    // share an equal view's copy.
    pterun_tensor* out = vf->res->u.tensor;
    void* mem = NULL;
    for (uint32_t w = 0; w < v && mem == NULL; ++w)
      if (m->view_folds[w].copy != NULL && same_instr(m->view_folds[w].in, vf->in))
        mem = m->view_folds[w].copy;
    if (mem != NULL) {
      *out = vf->dense;
      out->data = mem;
      out->capacity = out->nbytes;
      m->aux[out - m->tensors].initial_data = mem;
      m->tensors_initial[out - m->tensors] = *out;
      vf->copy = mem;
      continue;
    }
    mem = pterun_alloc(m->allocator, vf->dense.nbytes, 64);
    if (mem == NULL) {
      st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY,
                    "method: cannot allocate memory for folded constants");
      break;
    }
    *out = vf->dense;
    out->data = mem;
    out->capacity = out->nbytes;
    struct pterun_kernel_context ctx = {.logger = &m->logger,
                                        .op_name = m->op_names[vf->in->a],
                                        .scratch = m->scratch,
                                        .scratch_size = m->scratch_size,
                                        .threadpool = m->threadpool,
                                        .max_threads = m->max_threads};
    st = vf->in->fn(&ctx, vf->in->args, vf->in->b);
    if (st != PTERUN_STATUS_OK) { /* a checked transpose of a constant: not expected */
      pterun_free(m->allocator, mem);
      st = opt_fail(&m->logger, st, "method: folding a constant transpose failed");
      break;
    }
    m->aux[out - m->tensors].initial_data = mem;
    m->tensors_initial[out - m->tensors] = *out;
    vf->copy = mem;
    m->folded[m->folded_count++] = mem;
    m->folded_bytes += out->nbytes;
  }
  if (m->views_kept > 0)
    pterun_log(&m->logger, PTERUN_LOG_DEBUG,
               "%u constant transposes read in place (every reader packed them)", m->views_kept);
  if (m->released_bytes > 0)
    pterun_log(&m->logger, PTERUN_LOG_DEBUG, "gave back %zu bytes of packed constants",
               m->released_bytes);
  pterun_free(m->allocator, m->view_folds);
  pterun_free(m->allocator, m->view_claims);
  m->view_folds = NULL;
  m->view_claims = NULL;
  m->view_fold_count = m->view_claim_count = m->view_claim_cap = 0;
  return st;
}

/* The view fold whose result is x, else NULL. */
static const pt_view_fold* view_fold_of(const pterun_method* m, const pterun_value* x) {
  for (uint32_t v = 0; v < m->view_fold_count; ++v)
    if (m->view_folds[v].res == x) return &m->view_folds[v];
  return NULL;
}

/* A skipped step of a fused chain that declining the fused call at prepare
 * would bring back (pt_unfuse)? */
static bool may_come_back(const pterun_method* m, const pt_instr* in) {
  for (uint32_t k = 0; k < m->fuse_undo_count; ++k) {
    const pt_fuse_undo* u = &m->fuse_undo[k];
    for (uint32_t j = 0; u->first != NULL && j < u->nskipped; ++j)
      if (u->skipped[j] == in) return true;
  }
  return false;
}

/* Is a view (vf) settled: given back already, or packed for good by every reader? */
static bool view_settled(const pterun_method* m, const pt_view_fold* vf) {
  return vf->released || all_readers_pack(m, vf, true);
}

/* May the file bytes [b0, b1) go back? Only if nothing reads them again. Not
 * just the one view's readers: the exporter stores equal constants once, so
 * the blocks of a cloned layer stack (nn.TransformerEncoder) or a tied
 * embedding name the same bytes through other values -- another view not yet
 * settled, a transpose left to run at execute (over the fold budget), a
 * kernel reading the constant itself (embedding), a method output. */
static bool bytes_unread(const pterun_method* m, const uint8_t* b0, const uint8_t* b1) {
  for (uint32_t v = 0; v < m->value_count; ++v) {
    const pterun_value* x = &m->values[v];
    if (x->tag != PTERUN_VALUE_TENSOR || x->u.tensor == NULL) continue;
    const uint8_t* t0 = x->u.tensor->data;
    if (t0 == NULL || !(t0 < b1 && b0 < t0 + x->u.tensor->nbytes)) continue;
    const pt_view_fold* xf = view_fold_of(m, x);
    if (xf != NULL) { /* its readers: all_readers_pack */
      if (!view_settled(m, xf)) return false;
      continue;
    }
    for (uint32_t k = 0; k < m->output_count; ++k)
      if (m->outputs[k] == v) return false;
    for (uint32_t c = 0; c < m->chain_count; ++c)
      for (uint32_t i = 0; i < m->chains[c].count; ++i) {
        const pt_instr* r = &m->chains[c].instrs[i];
        if (r->type != PT_INSTR_FOLDED) {
          if (refers_to(m, r, x)) return false;
          continue;
        }
        // Folded at load (a view's transpose, a copy that already ran) or a
        // fused chain's skipped step, which reads x again if it comes back.
        if (r->args == NULL ||
            !refers_to(m, &(pt_instr){.type = PT_INSTR_KERNEL_CALL, .b = r->b, .args = r->args}, x))
          continue;
        if (may_come_back(m, r)) return false;
        for (uint32_t w = 0; w < m->view_fold_count; ++w)
          if (m->view_folds[w].in == r && !view_settled(m, &m->view_folds[w])) return false;
      }
  }
  return true;
}

void pt_fold_release_packed(pterun_method* m, const pt_core_services* core, const pt_instr* in) {
  if (!m->release_packed) return;
  for (uint32_t c = 0; c < m->view_claim_count; ++c) {
    if (m->view_claims[c].in != in || !m->view_claims[c].packed_only) continue;
    for (uint32_t v = 0; v < m->view_fold_count; ++v) {
      pt_view_fold* vf = &m->view_folds[v];
      if (vf->released || vf->res->u.tensor != m->view_claims[c].t ||
          !all_readers_pack(m, vf, true))
        continue;
      // Packed for good by every reader, and no other value reads the bytes.
      const pterun_tensor* src = vf->in->args[0]->u.tensor;
      const uint8_t* b0 = src->data;
      if (!bytes_unread(m, b0, b0 + src->nbytes)) continue;
      size_t n = core->program_release((pterun_program*)m->program, src->data, src->nbytes);
      vf->released = n > 0;
      m->released_bytes += n;
    }
  }
}
