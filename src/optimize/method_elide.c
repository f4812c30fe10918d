/* Load-time copy elision: a call that only copies a contiguous block of its
 * input's bytes (squeeze/unsqueeze/view/clone of a contiguous tensor: all of
 * them; slice, select or split along a dim with only 1s before it: one
 * block) becomes a view: its result's data pointer is set into the input's
 * bytes at load and the call is skipped. An unrolled recurrent layer makes
 * a slice, a squeeze and two splits of a few hundred floats per step (~0.2 us
 * a call, nearly all of it the call, not the copy).
 *
 * Each result Y (in place of input X's bytes R) must be
 *  - a planned (arena) tensor of static shape, contiguous, X's dtype, no
 *    method input or output, written by this call alone, named by no
 *    delegate call and by no call of an operator that may write any of its
 *    arguments (outside ATen's and pterun's namespaces: llama's
 *    update_cache writes its cache argument), with no elided view reading
 *    its own planned bytes (they would no longer receive it);
 *  - and R must keep its bytes while Y lives: no call between this one and
 *    Y's last reader writes memory overlapping R (results, out lists, a
 *    recurrent cell's results, every argument of a delegate or of such an
 *    operator, a move's target).
 * X is a planned tensor of static shape, contiguous; the arguments that
 * place the block (dims, starts, indices, split sizes) are values nothing
 * writes. Straight-line methods only (no jumps, one chain); runs after
 * kernel preparation, when fusion is final (a fused chain a kernel
 * declined has its calls back), and only where fusion ran (a method run as
 * the program wrote it keeps its copies: --no-fusion, ETDump debug events). */
#include <string.h>

#include "src/optimize/method_fuse_internal.h"
#include "src/optimize/opt_internal.h"

#define ELIDE_MAX_OUTS 16 /* split pieces considered */

/* A byte range [lo, hi). */
typedef struct span {
  uintptr_t lo, hi;
} span;

static bool span_meets(span s, const pterun_tensor* t) {
  uintptr_t t0 = (uintptr_t)t->data, t1 = t0 + (t->capacity > t->nbytes ? t->capacity : t->nbytes);
  return t->data != NULL && t0 < s.hi && s.lo < t1;
}

static bool value_meets(span s, const pterun_value* v) {
  if (v->tag == PTERUN_VALUE_TENSOR) return span_meets(s, v->u.tensor);
  if (v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR)
    for (size_t k = 0; k < v->u.tensors.len; ++k) {
      const pterun_value* e = v->u.tensors.items[k];
      if (e != NULL && e->tag == PTERUN_VALUE_TENSOR && span_meets(s, e->u.tensor)) return true;
    }
  return false;
}

/* Operators whose schema returns every tensor they mutate (ATen's out
 * variants, Tensor(a!) in-place forms, the fused and quantized operators):
 * outside these namespaces a call may write any argument (llama's
 * update_cache writes its cache argument and returns another). */
static bool writes_outs_only(const char* op) {
  static const char* const kNs[] = {
      "aten::",   "dim_order_ops::", "pterun::", "pterun_quantized::", "quantized_decomposed::",
      "torchao::"};
  for (size_t k = 0; k < sizeof kNs / sizeof kNs[0]; ++k)
    if (strncmp(op, kNs[k], strlen(kNs[k])) == 0) return true;
  return false;
}

/* May instruction `in` write memory in s? A kernel call writes its return
 * slot and the out before it (a tensor or a list; multi-output calls list
 * their outs in the return slot), a recurrent cell its results, a call of
 * another namespace any argument; a delegate any argument; a move its
 * target. */
static bool writes_span(const pterun_method* m, const pt_instr* in, span s) {
  switch (in->type) {
    case PT_INSTR_KERNEL_CALL: {
      if (in->b == 0) return false;
      uint32_t first = in->b >= 2 ? in->b - 2 : 0, cell = pt_fuse_cell_results(m, in);
      if (cell > 0 && in->b > cell) first = in->b - 1 - cell;
      if (!writes_outs_only(m->op_names[in->a])) first = 0;
      for (uint32_t k = first; k < in->b; ++k)
        if (value_meets(s, in->args[k])) return true;
      return false;
    }
    case PT_INSTR_DELEGATE_CALL:
      for (uint32_t k = 0; k < in->b; ++k)
        if (value_meets(s, in->args[k])) return true;
      return false;
    case PT_INSTR_MOVE_CALL: return value_meets(s, &m->values[in->b]);
    default: return false;
  }
}

static bool plain(const pterun_tensor* t) {
  if (t->dynamism != PTERUN_SHAPE_STATIC || t->data == NULL) return false;
  for (uint32_t d = 0; d < t->rank; ++d)
    if (t->dim_order[d] != d) return false;
  return true;
}

/* An int argument nothing writes (a program constant, not a computed size). */
static bool const_int(const fuse_facts* f, const pterun_method* m, const pterun_value* v,
                      int64_t* out) {
  if (v->tag != PTERUN_VALUE_INT || f->written[v - m->values]) return false;
  *out = v->u.i;
  return true;
}

static bool norm_dim(int64_t d, uint32_t rank, uint32_t* out) {
  if (d < 0) d += rank;
  if (d < 0 || d >= (int64_t)rank) return false;
  *out = (uint32_t)d;
  return true;
}

/* Elements before dim d (their product) and after it (per index of d). */
static void around(const pterun_tensor* x, uint32_t d, int64_t* before, int64_t* after) {
  *before = *after = 1;
  for (uint32_t k = 0; k < d; ++k) *before *= x->sizes[k];
  for (uint32_t k = d + 1; k < x->rank; ++k) *after *= x->sizes[k];
}

/* y has x's sizes with dim d of size n (drop: without dim d). */
static bool sizes_but(const pterun_tensor* y, const pterun_tensor* x, uint32_t d, int64_t n,
                      bool drop) {
  if (y->rank != x->rank - (drop ? 1u : 0u)) return false;
  for (uint32_t k = 0, j = 0; k < x->rank; ++k) {
    if (k == d && drop) continue;
    if (y->sizes[j++] != (k == d ? n : x->sizes[k])) return false;
  }
  return true;
}

typedef struct piece {
  const pterun_value* y;
  size_t offset; /* bytes into x */
} piece;

/* The pieces of x that call `in` copies, if it copies contiguous blocks. */
static uint32_t copy_pieces(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
                            const pterun_value** xv, piece* out) {
  static const struct {
    const char* op;
    uint8_t nargs;
  } kWhole[] = {{"aten::squeeze_copy.dims_out", 4},
                {"aten::squeeze_copy.dim_out", 4},
                {"aten::squeeze_copy.out", 3},
                {"aten::unsqueeze_copy.out", 4},
                {"aten::view_copy.out", 4},
                {"aten::alias_copy.out", 3},
                {"aten::clone.out", 4},
                {"dim_order_ops::_clone_dim_order.out", 5}};
  if (in->type != PT_INSTR_KERNEL_CALL || in->b < 3 || in->args[0]->tag != PTERUN_VALUE_TENSOR)
    return 0;
  const pterun_tensor* x = in->args[0]->u.tensor;
  const size_t es = pterun_dtype_size(x->dtype);
  *xv = in->args[0];
  for (size_t k = 0; k < sizeof kWhole / sizeof kWhole[0]; ++k)
    if (pt_fuse_is_call(m, in, kWhole[k].op, kWhole[k].nargs)) {
      /* same elements in row-major order: the same bytes */
      const pterun_value* y = in->args[in->b - 1];
      if (y->tag != PTERUN_VALUE_TENSOR || in->args[in->b - 2] != y ||
          y->u.tensor->numel != x->numel)
        return 0;
      out[0] = (piece){y, 0};
      return 1;
    }
  uint32_t d;
  int64_t v, before, after;
  if (pt_fuse_is_call(m, in, "aten::slice_copy.Tensor_out", 7)) {
    int64_t start = 0, end = 0, step;
    const pterun_value* y = in->args[6];
    if (in->args[5] != y || y->tag != PTERUN_VALUE_TENSOR || !const_int(f, m, in->args[1], &v) ||
        !norm_dim(v, x->rank, &d) || !const_int(f, m, in->args[4], &step) || step != 1)
      return 0;
    const int64_t size = x->sizes[d];
    for (int k = 0; k < 2; ++k) { /* start, end: None, negative from the end, clamped */
      const pterun_value* a = in->args[2 + k];
      int64_t* s = k == 0 ? &start : &end;
      if (a->tag == PTERUN_VALUE_NONE)
        *s = k == 0 ? 0 : size;
      else if (!const_int(f, m, a, s))
        return 0;
      if (*s < 0) *s += size;
      *s = *s < 0 ? 0 : *s > size ? size : *s;
    }
    if (end < start) end = start;
    around(x, d, &before, &after);
    if ((before != 1 && end - start != size) || !sizes_but(y->u.tensor, x, d, end - start, false))
      return 0;
    out[0] = (piece){y, (size_t)(start * after) * es};
    return 1;
  }
  if (pt_fuse_is_call(m, in, "aten::select_copy.int_out", 5)) {
    const pterun_value* y = in->args[4];
    if (in->args[3] != y || y->tag != PTERUN_VALUE_TENSOR || !const_int(f, m, in->args[1], &v) ||
        !norm_dim(v, x->rank, &d) || !const_int(f, m, in->args[2], &v))
      return 0;
    if (v < 0) v += x->sizes[d];
    around(x, d, &before, &after);
    if (v < 0 || v >= x->sizes[d] || before != 1 || !sizes_but(y->u.tensor, x, d, 1, true))
      return 0;
    out[0] = (piece){y, (size_t)(v * after) * es};
    return 1;
  }
  if (pt_fuse_is_call(m, in, "aten::split_with_sizes_copy.out", 5)) {
    const pterun_value *sz = in->args[1], *list = in->args[3];
    if (sz->tag != PTERUN_VALUE_LIST_INT || list->tag != PTERUN_VALUE_LIST_TENSOR ||
        sz->u.ints.len != list->u.tensors.len || sz->u.ints.len == 0 ||
        sz->u.ints.len > ELIDE_MAX_OUTS || !const_int(f, m, in->args[2], &v) ||
        !norm_dim(v, x->rank, &d))
      return 0;
    around(x, d, &before, &after);
    if (before != 1 && sz->u.ints.len != 1) return 0;
    int64_t start = 0;
    for (size_t k = 0; k < sz->u.ints.len; ++k) {
      const pterun_value* y = list->u.tensors.items[k];
      int64_t n;
      if (y == NULL || y->tag != PTERUN_VALUE_TENSOR || sz->u.ints.items[k] == NULL ||
          !const_int(f, m, sz->u.ints.items[k], &n) || n < 0 || start + n > x->sizes[d] ||
          !sizes_but(y->u.tensor, x, d, n, false))
        return 0;
      out[k] = (piece){y, (size_t)(start * after) * es};
      start += n;
    }
    return (uint32_t)sz->u.ints.len;
  }
  return 0;
}

/* Can piece p of call `pos` (flat) become a view? */
static bool piece_ok(const pterun_method* m, const fuse_facts* f, uint32_t pos,
                     const pterun_tensor* x, piece p) {
  const pt_chain* ch = &m->chains[0];
  const pterun_value* yv = p.y;
  const pterun_tensor* y = yv->u.tensor;
  const uint32_t yi = (uint32_t)(yv - m->values);
  if (!plain(y) || y->dtype != x->dtype || !m->aux[y - m->tensors].in_arena ||
      p.offset > x->nbytes || y->nbytes > x->nbytes - p.offset || f->outputs[yi])
    return false;
  for (uint32_t k = 0; k < m->input_count; ++k)
    if (m->inputs[k] == yi) return false;
  const span r = {(uintptr_t)x->data + p.offset, (uintptr_t)x->data + p.offset + y->nbytes};
  uint32_t last = pos;
  for (uint32_t j = 0; j < ch->count; ++j) {
    const pt_instr* in = &ch->instrs[j];
    if (j == pos || !pt_fuse_names_value(m, in, yv)) continue;
    if (in->type == PT_INSTR_DELEGATE_CALL || pt_fuse_writes(m, f, in, yv, NULL) || j < pos ||
        (in->type == PT_INSTR_KERNEL_CALL && !writes_outs_only(m->op_names[in->a])))
      return false; /* another writer (maybe), a delegate, or named before it exists */
    last = j;
  }
  for (uint32_t j = pos + 1; j <= last; ++j)
    if (writes_span(m, &ch->instrs[j], r)) return false;
  return pt_fuse_unviewed(m, f, yv, pos, pos);
}

static pterun_status elide(pterun_method* m) {
  const pt_chain* ch = &m->chains[0];
  fuse_facts f;
  pterun_status st = PTERUN_STATUS_OK;
  const bool facts = pt_fuse_facts_alloc(m, &f, ch->count);
  f.home = pterun_alloc(m->allocator, (m->tensor_count + 1) * sizeof *f.home, 16);
  if (!facts || f.home == NULL) {
    st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for copy elision");
    goto done;
  }
  memset(f.home, 0, (m->tensor_count + 1) * sizeof *f.home);
  pt_fuse_gather_facts(m, &f);
  if (f.has_jumps) goto done;
  uint32_t calls = 0;
  size_t bytes = 0;
  for (uint32_t pos = 0; pos < ch->count; ++pos) {
    piece pieces[ELIDE_MAX_OUTS];
    const pterun_value* xv = NULL;
    const uint32_t n = copy_pieces(m, &f, &ch->instrs[pos], &xv, pieces);
    if (n == 0) continue;
    const pterun_tensor* x = xv->u.tensor;
    if (!plain(x) || !m->aux[x - m->tensors].in_arena) continue;
    bool ok = true;
    for (uint32_t k = 0; k < n && ok; ++k) ok = piece_ok(m, &f, pos, x, pieces[k]);
    if (!ok) continue;
    for (uint32_t k = 0; k < n; ++k) {
      pterun_tensor* y = pieces[k].y->u.tensor;
      void* at = (char*)x->data + pieces[k].offset;
      const size_t t = (size_t)(y - m->tensors);
      y->data = at;
      y->capacity = y->nbytes;
      m->tensors_initial[t].data = at;
      m->tensors_initial[t].capacity = y->nbytes;
      m->aux[t].initial_data = at;
      bytes += y->nbytes;
    }
    m->chains[0].instrs[pos].type = PT_INSTR_FOLDED;
    ++calls;
  }
  if (calls > 0)
    pterun_log(&m->logger, PTERUN_LOG_DEBUG,
               "copies elided: %u calls read their input's bytes in place (%zu bytes a run)", calls,
               bytes);
done:
  pt_fuse_facts_free(m, &f);
  pterun_free(m->allocator, f.home);
  return st;
}

pterun_status pt_elide_copies(pterun_method* m) {
  if (!m->fusion_ran || m->chain_count != 1 || m->chains[0].count < 2) return PTERUN_STATUS_OK;
  return elide(m);
}
