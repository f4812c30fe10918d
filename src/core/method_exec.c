/* Binding inputs and outputs, and the instruction interpreter. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "src/core/kernel_context.h"
#include "src/core/method_internal.h"
#include "src/core/schema.h"

/* "2,3,4" into buf, truncated if it does not fit. */
static void fmt_shape(char* buf, size_t cap, const int64_t* sizes, size_t rank) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t d = 0; d < rank; ++d) {
    int w = snprintf(buf + len, cap - len, "%s%lld", d ? "," : "", (long long)sizes[d]);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
}

size_t pterun_method_input_count(const pterun_method* m) {
  return m != NULL ? m->input_count : 0;
}
size_t pterun_method_output_count(const pterun_method* m) {
  return m != NULL ? m->output_count : 0;
}

static pt_tensor_aux* aux_of(pterun_method* m, const pterun_tensor* t) {
  return &m->aux[t - m->tensors];
}

/* The method's own tensor behind value v, when v is one of its tensors. */
static pterun_tensor* own_tensor(pterun_method* m, uint32_t vi) {
  pterun_value* v = &m->values_initial[vi];
  return v->tag == PTERUN_VALUE_TENSOR ? v->u.tensor : NULL;
}

/* After a refused set_input: no binding survives. An unplanned input drops
 * the caller's pointer (the caller may free that memory once its call was
 * refused); a planned one keeps its own memory but not the stale bytes'
 * standing. Execute refuses the input until it is set again. */
static void unbind_input(pterun_method* m, size_t i) {
  m->input_set[i] = PT_INPUT_REFUSED;
  pterun_tensor* t = own_tensor(m, m->inputs[i]);
  if (t == NULL) return;
  pterun_tensor* t0 = &m->tensors_initial[t - m->tensors];
  if (!aux_of(m, t)->planned) {
    t0->data = NULL;
    t0->capacity = 0;
  }
  *t = *t0;
}

static pterun_status bind_input(pterun_method* m, size_t i, const pterun_tensor_view* view);

pterun_status pterun_method_set_input(pterun_method* m, size_t i, const pterun_tensor_view* view) {
  if (m == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= m->input_count)
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_ARGUMENT, "input %zu out of range (%u inputs)",
                   i, m->input_count);
  pterun_status st = view == NULL ? PTERUN_STATUS_INVALID_ARGUMENT : bind_input(m, i, view);
  if (st != PTERUN_STATUS_OK) unbind_input(m, i);
  return st;
}

static pterun_status bind_input(pterun_method* m, size_t i, const pterun_tensor_view* view) {
  pterun_tensor* t = own_tensor(m, m->inputs[i]);
  if (t == NULL)
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH, "input %zu is a %s, not a tensor", i,
                   pterun_value_tag_name(m->values_initial[m->inputs[i]].tag));
  // Start from the tensor as bound (a previous execute may have freed or
  // re-pointed it); on success the new binding becomes the bound state.
  pterun_tensor* t0 = &m->tensors_initial[t - m->tensors];
  *t = *t0;
  pt_tensor_aux* aux = aux_of(m, t);
  if (!aux->planned) t->capacity = view->nbytes; /* the caller's memory bounds the shape */
  if (view->dtype != t->dtype)
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH, "input %zu: dtype %s, expected %s", i,
                   pterun_dtype_name(view->dtype), pterun_dtype_name(t->dtype));
  if (view->rank != t->rank)
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH, "input %zu: rank %u, expected %u", i,
                   view->rank, t->rank);
  if (view->rank > 0 && view->sizes == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  for (uint32_t d = 0; d < view->rank; ++d)
    if (view->sizes[d] < 0)
      return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH, "input %zu: negative size", i);
  pterun_status st = pterun_tensor_resize(t, view->rank, view->sizes);
  if (st != PTERUN_STATUS_OK) {
    char got[160], want[160];
    fmt_shape(got, sizeof got, view->sizes, view->rank);
    fmt_shape(want, sizeof want, t->max_sizes, t->rank);
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                   "input %zu: shape [%s] does not fit %s shape [%s]", i, got,
                   t->dynamism == PTERUN_SHAPE_STATIC ? "static" : "bounded", want);
  }
  // Compare layouts through strides (size-1 dims make dim orders ambiguous).
  if (view->dim_order != NULL) {
    pterun_tensor v = *t;
    unsigned seen = 0;
    for (uint32_t d = 0; d < view->rank; ++d) {
      if (view->dim_order[d] >= view->rank || (seen & (1u << view->dim_order[d])))
        return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                       "input %zu: dim order is not a permutation", i);
      seen |= 1u << view->dim_order[d];
      v.dim_order[d] = view->dim_order[d];
    }
    (void)pterun_tensor_update_layout(&v);
    for (uint32_t d = 0; d < view->rank; ++d)
      if (t->sizes[d] > 1 && v.strides[d] != t->strides[d])
        return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                       "input %zu: memory layout (dim order) differs from the method's", i);
  } else if (!pterun_tensor_is_contiguous(t)) {
    for (uint32_t d = 0; d + 1 < t->rank; ++d) {
      int64_t expect = 1;
      for (uint32_t e = d + 1; e < t->rank; ++e) expect *= t->sizes[e];
      if (t->sizes[d] > 1 && t->strides[d] != expect)
        return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                       "input %zu: the method expects a non-contiguous dim order; pass it", i);
    }
  }
  if (view->nbytes < t->nbytes || (t->nbytes > 0 && view->data == NULL))
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                   "input %zu: %zu bytes given, %zu needed", i, view->nbytes, t->nbytes);
  if (aux->planned) {
    if (t->nbytes > 0) memmove(t->data, view->data, t->nbytes);
  } else {
    // Kernels will read the caller's memory in place: it must be aligned.
    if (t->nbytes > 0 && !pt_dtype_aligned(view->data, t->dtype))
      return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                     "input %zu: %s data must be %zu-byte aligned", i, pterun_dtype_name(t->dtype),
                     pterun_dtype_size(t->dtype));
    t->data = view->data;
    t->capacity = view->nbytes;
  }
  *t0 = *t;
  m->input_set[i] = PT_INPUT_SET;
  return PTERUN_STATUS_OK;
}

static bool same_double(double a, double b) {
  if (isnan(a) && isnan(b)) return true;
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= 1e-4 + 1e-5 * fabs(b);
}

static pterun_status check_input_value(pterun_method* m, size_t i, const pterun_value* value);

pterun_status pterun_method_set_input_value(pterun_method* m, size_t i, const pterun_value* value) {
  if (m == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= m->input_count)
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_ARGUMENT, "input %zu out of range (%u inputs)",
                   i, m->input_count);
  pterun_status st =
      value == NULL ? PTERUN_STATUS_INVALID_ARGUMENT : check_input_value(m, i, value);
  if (st != PTERUN_STATUS_OK) {
    unbind_input(m, i); /* like a refused set_input */
    return st;
  }
  m->input_set[i] = PT_INPUT_SET;
  return st;
}

static pterun_status check_input_value(pterun_method* m, size_t i, const pterun_value* value) {
  const pterun_value* want = &m->values_initial[m->inputs[i]];
  if (want->tag == PTERUN_VALUE_TENSOR || value->tag != want->tag)
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                   "input %zu: a %s was given, the method takes a %s", i,
                   pterun_value_tag_name(value->tag), pterun_value_tag_name(want->tag));
  bool ok = true;
  switch (want->tag) {
    case PTERUN_VALUE_INT: ok = value->u.i == want->u.i; break;
    case PTERUN_VALUE_BOOL: ok = (value->u.b != 0) == (want->u.b != 0); break;
    case PTERUN_VALUE_DOUBLE: ok = same_double(value->u.d, want->u.d); break;
    case PTERUN_VALUE_STRING:
      ok = value->u.str.len == want->u.str.len &&
           memcmp(value->u.str.data, want->u.str.data, want->u.str.len) == 0;
      break;
    default: break;
  }
  if (!ok)
    return pt_fail(&m->logger, PTERUN_STATUS_INPUT_MISMATCH,
                   "input %zu: the program was compiled for a different value of this %s", i,
                   pterun_value_tag_name(want->tag));
  return PTERUN_STATUS_OK;
}

pterun_status pterun_method_set_output_buffer(pterun_method* m, size_t i, void* data,
                                              size_t nbytes) {
  if (m == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= m->output_count)
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "output %zu out of range (%u outputs)", i, m->output_count);
  pterun_tensor* t = own_tensor(m, m->outputs[i]);
  if (t == NULL)
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_STATE, "output %zu is not a tensor", i);
  pterun_tensor* t0 = &m->tensors_initial[t - m->tensors];
  *t = *t0; /* sizes as bound, not as the last execute left them */
  pt_tensor_aux* aux = aux_of(m, t);
  if (aux->has_memory)
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_STATE,
                   "output %zu already has planned or constant memory", i);
  if (nbytes < t->nbytes || (t->nbytes > 0 && data == NULL))
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "output %zu: %zu bytes given, %zu needed", i, nbytes, t->nbytes);
  if (!pt_dtype_aligned(data, t->dtype))
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "output %zu: buffer is misaligned for %s", i, pterun_dtype_name(t->dtype));
  t->data = data;
  t->capacity = nbytes;
  aux->initial_data = data;
  *t0 = *t;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_method_output(const pterun_method* m, size_t i,
                                   const pterun_value** value_out) {
  if (m == NULL || value_out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= m->output_count) return PTERUN_STATUS_NOT_FOUND;
  *value_out = &m->values[m->outputs[i]];
  return PTERUN_STATUS_OK;
}

pterun_profiler* pterun_method_profiler(const pterun_method* m) {
  return m != NULL ? m->profiler : NULL;
}

void pterun_method_set_instruction_budget(pterun_method* m, uint64_t budget) {
  if (m != NULL) m->budget = budget ? budget : PTERUN_DEFAULT_INSTRUCTION_BUDGET;
}

/* JumpFalse condition: a Bool, or a Bool tensor that is true iff all are. */
static pterun_status condition(pterun_method* m, const pterun_value* v, bool* out) {
  *out = false; /* defined on every path (GCC -Os cannot see through pt_fail) */
  if (v->tag == PTERUN_VALUE_BOOL) {
    *out = v->u.b != 0;
    return PTERUN_STATUS_OK;
  }
  if (v->tag == PTERUN_VALUE_TENSOR && v->u.tensor->dtype == PTERUN_DTYPE_BOOL) {
    const pterun_tensor* t = v->u.tensor;
    if (t->numel > 0 && t->data == NULL)
      return pt_fail(&m->logger, PTERUN_STATUS_INVALID_STATE, "jump condition tensor has no data");
    bool all = true;
    for (int64_t k = 0; k < t->numel && all; ++k) all = ((const uint8_t*)t->data)[k] != 0;
    *out = all;
    return PTERUN_STATUS_OK;
  }
  return pt_fail(&m->logger, PTERUN_STATUS_INVALID_PROGRAM, "jump condition is a %s, not a Bool",
                 pterun_value_tag_name(v->tag));
}

/* MoveCall. When the destination is a tensor with planned memory of its own,
 * the bytes are copied into it: the memory plan gave that value its own
 * lifetime, while the source's memory may be reused by later instructions.
 * (ExecuTorch aliases the source instead, which returns overwritten data when
 * two conditionals follow each other.) Anything else is moved by reference. */
static void move_value(pterun_method* m, const pterun_value* from, pterun_value* to) {
  if (from->tag == PTERUN_VALUE_TENSOR && to->tag == PTERUN_VALUE_TENSOR &&
      from->u.tensor != to->u.tensor) {
    pterun_tensor *src = from->u.tensor, *dst = to->u.tensor;
    if (m->aux[dst - m->tensors].in_arena && dst->dtype == src->dtype && dst->rank == src->rank &&
        (src->nbytes == 0 || src->data != NULL) && dst->data != NULL &&
        pterun_tensor_resize(dst, src->rank, src->sizes) == PTERUN_STATUS_OK) {
      if (src->nbytes > 0 && dst->data != src->data) memmove(dst->data, src->data, src->nbytes);
      return;
    }
  }
  *to = *from;
}

/* A kernel call (d NULL) or delegate call between the tracer's hooks. */
static pterun_status traced_call(pterun_method* m, const pt_instr* in, const pt_delegate* d,
                                 pterun_kernel_context* ctx, uint32_t c, uint32_t pc) {
  ctx->slow_path = NULL;
  if (m->hooks.call_begin != NULL) m->hooks.call_begin(m->tracer, c, pc);
  pterun_status st = d == NULL ? in->fn(ctx, in->args, in->b)
                               : d->backend->execute(d->handle, ctx, in->args, in->b);
  if (m->hooks.call_end != NULL) m->hooks.call_end(m->tracer, c, pc, st, ctx->slow_path);
  return st;
}

pterun_status pterun_method_execute(pterun_method* m) {
  if (m == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  for (uint32_t k = 0; k < m->input_count; ++k)
    if (m->input_set[k] != PT_INPUT_SET)
      return pt_fail(&m->logger, PTERUN_STATUS_INVALID_STATE,
                     m->input_set[k] == PT_INPUT_REFUSED
                         ? "input %u is not bound: its last set_input was refused; set it again"
                     : m->input_shared[k]
                         ? "input %u must be set again: its memory is reused by the method"
                         : "input %u has not been set",
                     k);
  // Each run starts from the loaded value table (moves and scalar results of
  // the previous run are undone) and from every tensor's bound memory.
  memcpy(m->values, m->values_initial, m->value_count * sizeof *m->values);
  // Every tensor's memory (a freed tensor gets its memory back, a view's
  // borrowed capacity does not outlive the run), and the shape where a
  // kernel may have changed it: a static shape only ever resizes to itself,
  // so its 400-odd bytes of sizes and strides are not copied back (on a
  // recurrent model's thousand tensors, 400 KB a run through the cache).
  for (uint32_t k = 0; k < m->tensor_count; ++k) {
    const pterun_tensor* t0 = &m->tensors_initial[k];
    pterun_tensor* t = &m->tensors[k];
    if (t0->dynamism == PTERUN_SHAPE_STATIC) {
      t->data = t0->data;
      t->capacity = t0->capacity;
    } else {
      *t = *t0;
    }
  }

  struct pterun_kernel_context ctx = {.logger = &m->logger,
                                      .scratch = m->scratch,
                                      .scratch_size = m->scratch_size,
                                      .threadpool = m->threadpool,
                                      .max_threads = m->max_threads};
  pterun_event_tracer* tr = m->tracer; /* the one tracing branch per call */
  if (tr != NULL &&
      (m->hooks.delegate_event_begin != NULL || m->hooks.delegate_event_end != NULL)) {
    ctx.tracer = tr; /* backends' own steps (pterun_kernel_event_begin) */
    ctx.hooks = &m->hooks;
  }
  if (tr != NULL && m->hooks.execute_begin != NULL) m->hooks.execute_begin(tr);
  uint64_t executed = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) {
    const pt_chain* ch = &m->chains[c];
    uint32_t pc = 0;
    while (pc < ch->count) {
      if (++executed > m->budget)
        return pt_fail(&m->logger, PTERUN_STATUS_INSTRUCTION_BUDGET,
                       "instruction budget of %llu exhausted at instruction %u:%u",
                       (unsigned long long)m->budget, c, pc);
      const pt_instr* in = &ch->instrs[pc];
      uint32_t next = pc + 1;
      switch (in->type) {
        case PT_INSTR_KERNEL_CALL: {
          ctx.op_name = m->op_names[in->a];
          ctx.scratch_used = 0;
          ctx.state = in->state;
          pterun_status st =
              tr == NULL ? in->fn(&ctx, in->args, in->b) : traced_call(m, in, NULL, &ctx, c, pc);
          if (st != PTERUN_STATUS_OK) {
            char op[PT_ESC_CAP];
            return pt_fail(&m->logger, st, "instruction %u:%u (%s) failed: %s", c, pc,
                           pt_esc(ctx.op_name, op, sizeof op), pterun_status_str(st));
          }
          break;
        }
        case PT_INSTR_DELEGATE_CALL: {
          const pt_delegate* d = &m->delegates[in->a];
          ctx.op_name = d->backend->id;
          ctx.scratch_used = 0;
          ctx.state = NULL;
          pterun_status st = tr == NULL ? d->backend->execute(d->handle, &ctx, in->args, in->b)
                                        : traced_call(m, in, d, &ctx, c, pc);
          if (st != PTERUN_STATUS_OK)
            return pt_fail(&m->logger, st, "instruction %u:%u (delegate %u, %s) failed: %s", c, pc,
                           in->a, d->backend->id, pterun_status_str(st));
          break;
        }
        case PT_INSTR_FOLDED: /* ran once at load (method_fold.c) */ break;
        case PT_INSTR_MOVE_CALL: move_value(m, &m->values[in->a], &m->values[in->b]); break;
        case PT_INSTR_JUMP_FALSE_CALL: {
          bool cond;
          PTERUN_TRY(condition(m, &m->values[in->a], &cond));
          if (!cond) next = in->b;
          break;
        }
        case PT_INSTR_FREE_CALL:
          if (m->values[in->a].tag != PTERUN_VALUE_TENSOR)
            return pt_fail(&m->logger, PTERUN_STATUS_INVALID_TYPE, "instruction %u:%u frees a %s",
                           c, pc, pterun_value_tag_name(m->values[in->a].tag));
          m->values[in->a].u.tensor->data = NULL;
          m->values[in->a].u.tensor->capacity = 0; /* resizes refuse it from now on */
          break;
        default:
          return pt_fail(&m->logger, PTERUN_STATUS_BACKEND_UNAVAILABLE,
                         "instruction %u:%u is a delegate call", c, pc);
      }
      pc = next;
    }
  }
  for (uint32_t k = 0; k < m->input_count; ++k)
    if (m->input_shared[k]) m->input_set[k] = PT_INPUT_UNSET;
  if (tr != NULL && m->hooks.execute_end != NULL) m->hooks.execute_end(tr);
  return PTERUN_STATUS_OK;
}
