/* Method loading: one block for the value table, tensors, argument arrays
 * and instructions; planned memory bound; one kernel resolved per operator. */
#include <stdio.h>
#include <string.h>

#include "src/core/data_internal.h"
#include "src/core/method_internal.h"
#include "src/core/trace_internal.h"
#include "src/core/optimizer_internal.h"
#include "src/core/registry_internal.h"
#include "src/core/schema.h"

/* A bump allocator over the method's block. With base == NULL it only
 * counts, which is how the block's size is known before allocating it. */
typedef struct bump {
  uint8_t* base;
  size_t used;
  bool overflow;
} bump;

static void* take(bump* b, size_t count, size_t elem, size_t align) {
  size_t bytes, start;
  if (pt_mul_overflow_size(count, elem, &bytes)) {
    b->overflow = true;
    return NULL;
  }
  start = pt_align_up(b->used, align);
  if (start < b->used || pt_add_overflow_size(start, bytes, &b->used)) {
    b->overflow = true;
    return NULL;
  }
  return b->base != NULL ? b->base + start : NULL;
}
#define TAKE(b, type, n) ((type*)take((b), (n), sizeof(type), _Alignof(type)))

typedef struct loader {
  pterun_method* m;
  const pterun_program* p;
  const pterun_method_options* o;
  const pterun_registry* reg;  /* where operators are looked up */
  const pterun_optimizer* opt; /* its load-time optimiser, or NULL */
  pt_fb_table plan;
  pt_fb_vec values, inputs, outputs, chains, ops, sizes, delegates;
  const char* name;
} loader;

static pterun_status lfail(loader* L, pterun_status st, const char* fmt, ...) PT_PRINTF(3, 4);
static pterun_status lfail(loader* L, pterun_status st, const char* fmt, ...) {
  char msg[PT_LOG_MAX + 1];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char name[PT_ESC_CAP];
  return pt_fail(&L->m->logger, st, "method '%s': %s", pt_esc(L->name, name, sizeof name), msg);
}

/* Lays out (or counts) every runtime structure of the method. */
static void layout(loader* L, bump* b) {
  pterun_method* m = L->m;
  uint32_t n = L->values.len, tensors = 0;
  for (uint32_t i = 0; i < n; ++i) {
    pt_fb_table ev;
    pt_fb_vec_table(&L->values, i, &ev);
    if (pt_fb_u8(&ev, PT_EVALUE_TYPE, 0) == PT_KT_TENSOR) ++tensors;
  }
  m->values = TAKE(b, pterun_value, n);
  m->values_initial = TAKE(b, pterun_value, n);
  m->tensors = TAKE(b, pterun_tensor, tensors);
  m->tensors_initial = TAKE(b, pterun_tensor, tensors);
  m->aux = TAKE(b, pt_tensor_aux, tensors);
  m->inputs = TAKE(b, uint32_t, L->inputs.len);
  m->input_set = TAKE(b, uint8_t, L->inputs.len);
  m->input_shared = TAKE(b, uint8_t, L->inputs.len);
  m->outputs = TAKE(b, uint32_t, L->outputs.len);
  m->chains = TAKE(b, pt_chain, L->chains.len);
  // Operator slots: the program's, then room for the fused operators.
  size_t op_slots = (size_t)L->ops.len + (L->opt != NULL ? L->opt->fuse_op_slots() : 0);
  m->op_names = TAKE(b, const char*, op_slots);
  m->op_fns = TAKE(b, pterun_kernel_fn, op_slots);
  m->op_prepares = TAKE(b, pterun_kernel_prepare_fn, op_slots);
  m->op_called = TAKE(b, uint8_t, op_slots);
  m->delegates = TAKE(b, pt_delegate, L->delegates.len);
  uint32_t planned = L->sizes.len > 0 ? L->sizes.len - 1 : 0;
  m->planned = TAKE(b, void*, planned);
  m->planned_sizes = TAKE(b, uint64_t, planned);
  m->owned_planned = TAKE(b, void*, planned);
  m->value_count = n;
  m->tensor_count = tensors;
  m->input_count = L->inputs.len;
  m->output_count = L->outputs.len;
  m->chain_count = L->chains.len;
  m->op_count = L->ops.len;
  m->delegate_count = L->delegates.len;
  m->planned_count = planned;
  /* list payloads */
  for (uint32_t i = 0; i < n; ++i) {
    pt_fb_table ev, pl;
    pt_fb_vec items;
    pt_fb_vec_table(&L->values, i, &ev);
    uint8_t tag = pt_fb_u8(&ev, PT_EVALUE_TYPE, 0);
    if (tag < PT_KT_INT_LIST || pt_fb_get_table(&ev, PT_EVALUE_VAL, &pl) != 1) continue;
    size_t elem = tag == PT_KT_INT_LIST || tag == PT_KT_DOUBLE_LIST ? 8
                  : tag == PT_KT_BOOL_LIST                          ? 1
                                                                    : 4;
    if (pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, elem, &items) != 1) continue;
    // In the counting pass m->values is NULL: take the space, store nothing.
    pterun_value scratch_value;
    pterun_value* v = b->base != NULL ? &m->values[i] : &scratch_value;
    switch (tag) {
      case PT_KT_INT_LIST:
        v->u.ints.items = TAKE(b, pterun_value*, items.len);
        v->u.ints.scratch = TAKE(b, int64_t, items.len);
        break;
      case PT_KT_DOUBLE_LIST: v->u.doubles.items = TAKE(b, double, items.len); break;
      case PT_KT_BOOL_LIST: v->u.bools.items = TAKE(b, uint8_t, items.len); break;
      default: v->u.tensors.items = TAKE(b, pterun_value*, items.len); break;
    }
  }
  /* instructions and kernel argument arrays */
  for (uint32_t c = 0; c < L->chains.len; ++c) {
    pt_fb_table ch;
    pt_fb_vec instrs;
    pt_fb_vec_table(&L->chains, c, &ch);
    pt_fb_get_vector(&ch, PT_CHAIN_INSTRUCTIONS, 4, &instrs);
    pt_instr* list = TAKE(b, pt_instr, instrs.len);
    if (b->base != NULL) {
      m->chains[c].instrs = list;
      m->chains[c].count = instrs.len;
    }
    for (uint32_t i = 0; i < instrs.len; ++i) {
      pt_fb_table in, a;
      pt_fb_vec args;
      pt_fb_vec_table(&instrs, i, &in);
      uint8_t type = pt_fb_u8(&in, PT_INSTR_TYPE, 0);
      if (type != PT_INSTR_KERNEL_CALL && type != PT_INSTR_DELEGATE_CALL) continue;
      pt_fb_get_table(&in, PT_INSTR_ARGS, &a);
      pt_fb_get_vector(&a, PT_CALL_ARGS, 4, &args);
      pterun_value** arr = TAKE(b, pterun_value*, args.len);
      if (b->base != NULL) list[i].args = arr;
    }
  }
  /* operator names "name.overload" */
  for (uint32_t k = 0; k < L->ops.len; ++k) {
    pt_fb_table op;
    const char *nm = "", *ov = "";
    uint32_t nl = 0, ol = 0;
    pt_fb_vec_table(&L->ops, k, &op);
    pt_fb_get_string(&op, PT_OPERATOR_NAME, &nm, &nl);
    if (pt_fb_get_string(&op, PT_OPERATOR_OVERLOAD, &ov, &ol) != 1) ol = 0;
    char* s = TAKE(b, char, (size_t)nl + ol + 2);
    if (s != NULL) {
      memcpy(s, nm, nl);
      if (ol > 0) {
        s[nl] = '.';
        memcpy(s + nl + 1, ov, ol);
        s[nl + 1 + ol] = 0;
      } else {
        s[nl] = 0;
      }
      m->op_names[k] = s;
    }
  }
}

static pterun_status bind_planned(loader* L) {
  pterun_method* m = L->m;
  const pterun_method_options* o = L->o;
  for (uint32_t k = 0; k < m->planned_count; ++k) {
    m->planned_sizes[k] = (uint64_t)pt_fb_vec_i64(&L->sizes, k + 1);
    if (pt_add_overflow_u64(m->planned_bytes, m->planned_sizes[k], &m->planned_bytes))
      m->planned_bytes = UINT64_MAX;
  }
  m->file_bytes = m->program->image.size;
  for (size_t k = 0; o != NULL && o->data != NULL && k < o->data_count; ++k)
    if (pt_add_overflow_u64(m->file_bytes, pt_data_file_size(o->data[k]), &m->file_bytes))
      m->file_bytes = UINT64_MAX;
  if (o != NULL && o->planned_buffers != NULL) {
    if (o->planned_buffer_count != m->planned_count)
      return lfail(L, PTERUN_STATUS_MEMORY_PLAN,
                   "caller supplied %zu planned buffers; the method needs %u",
                   o->planned_buffer_count, m->planned_count);
    for (uint32_t k = 0; k < m->planned_count; ++k) {
      void* buf = o->planned_buffers[k];
      if ((buf == NULL && m->planned_sizes[k] > 0) || ((uintptr_t)buf & 15) != 0)
        return lfail(L, PTERUN_STATUS_MEMORY_PLAN,
                     "planned buffer %u is NULL or not 16-byte aligned", k);
      if (o->planned_buffer_sizes != NULL && o->planned_buffer_sizes[k] < m->planned_sizes[k])
        return lfail(L, PTERUN_STATUS_MEMORY_PLAN,
                     "planned buffer %u has %zu bytes; the method needs %llu", k,
                     o->planned_buffer_sizes[k], (unsigned long long)m->planned_sizes[k]);
      m->planned[k] = buf;
    }
    return PTERUN_STATUS_OK;
  }
  for (uint32_t k = 0; k < m->planned_count; ++k) {
    uint64_t sz = m->planned_sizes[k];
    if (sz > SIZE_MAX / 2)
      return lfail(L, PTERUN_STATUS_OUT_OF_MEMORY, "planned buffer %u of %llu bytes is too large",
                   k, (unsigned long long)sz);
    m->owned_planned[k] = pt_alloc_raw(m->allocator, (size_t)sz, 64);
    if (m->owned_planned[k] == NULL)
      return lfail(L, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate planned buffer %u (%llu bytes)",
                   k, (unsigned long long)sz);
    m->planned[k] = m->owned_planned[k];
    m->owned_planned_bytes += (size_t)sz;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status find_external(loader* L, const pt_tensor_meta* tm, uint32_t vi,
                                   pt_data_entry* e) {
  const pterun_method_options* o = L->o;
  size_t n = o != NULL && o->data != NULL ? o->data_count : 0;
  if (n == 0)
    return lfail(L, PTERUN_STATUS_INVALID_EXTERNAL_DATA,
                 "value %u needs external data '%s' but no data file was given", vi, tm->fqn);
  for (size_t k = 0; k < n; ++k)
    if (o->data[k] != NULL && pt_data_find(o->data[k], tm->fqn, e)) {
      if (e->has_layout) {
        bool ok = e->dtype == tm->dtype && e->rank == tm->rank;
        for (uint8_t d = 0; ok && d < tm->rank; ++d)
          ok = e->sizes[d] == tm->sizes[d] && e->dim_order[d] == tm->dim_order[d];
        if (!ok)
          return lfail(
              L, PTERUN_STATUS_INVALID_EXTERNAL_DATA,
              "external tensor '%s' has a different dtype, shape or dim order in the data file",
              tm->fqn);
      }
      if (e->size < tm->nbytes)
        return lfail(L, PTERUN_STATUS_INVALID_EXTERNAL_DATA,
                     "external tensor '%s' has %llu bytes; %llu needed", tm->fqn,
                     (unsigned long long)e->size, (unsigned long long)tm->nbytes);
      return PTERUN_STATUS_OK;
    }
  return lfail(L, PTERUN_STATUS_INVALID_EXTERNAL_DATA,
               "external tensor '%s' is in none of the data files", tm->fqn);
}

static pterun_status parse_tensor(loader* L, const pt_fb_table* pl, uint32_t vi, pterun_tensor* t,
                                  pt_tensor_aux* aux) {
  pterun_method* m = L->m;
  pt_tensor_meta tm;
  char where[96];
  snprintf(where, sizeof where, "method '%s' value %u", L->name, vi);
  PTERUN_TRY(pt_tensor_meta_read(L->p, pl, &tm, where));
  t->dtype = tm.dtype;
  t->rank = tm.rank;
  t->dynamism = tm.dynamism;
  memcpy(t->dim_order, tm.dim_order, sizeof t->dim_order);
  memcpy(t->sizes, tm.sizes, sizeof t->sizes);
  memcpy(t->max_sizes, tm.sizes, sizeof t->max_sizes);
  if (pterun_tensor_update_layout(t) != PTERUN_STATUS_OK)
    return lfail(L, PTERUN_STATUS_INVALID_PROGRAM, "value %u: tensor size overflows", vi);
  t->capacity = t->nbytes;
  pt_data_entry ext;
  if (tm.external) PTERUN_TRY(find_external(L, &tm, vi, &ext));
  if (tm.planned) {
    if (tm.memory_id == 0 || tm.memory_id > m->planned_count)
      return lfail(L, PTERUN_STATUS_MEMORY_PLAN,
                   "value %u: memory id %u out of range (%u planned buffers)", vi, tm.memory_id,
                   m->planned_count);
    uint64_t end;
    if (pt_add_overflow_u64(tm.memory_offset, tm.nbytes, &end) ||
        end > m->planned_sizes[tm.memory_id - 1])
      return lfail(L, PTERUN_STATUS_MEMORY_PLAN,
                   "value %u: planned range [%llu, +%llu) exceeds buffer %u (%llu bytes)", vi,
                   (unsigned long long)tm.memory_offset, (unsigned long long)tm.nbytes,
                   tm.memory_id - 1, (unsigned long long)m->planned_sizes[tm.memory_id - 1]);
    t->data = (uint8_t*)m->planned[tm.memory_id - 1] + tm.memory_offset;
    if (tm.external) {
      memcpy(t->data, ext.bytes, (size_t)tm.nbytes);
    } else if (tm.data_buffer_idx > 0) {
      const uint8_t* init;
      PTERUN_TRY(pt_program_mutable(L->p, tm.data_buffer_idx, tm.nbytes, &init));
      if (tm.nbytes > 0) memcpy(t->data, init, (size_t)tm.nbytes);
    }
    aux->planned = 1;
    aux->has_memory = 1;
    aux->in_arena = 1;
  } else if (tm.external) {
    t->data = (void*)ext.bytes; /* constant: kernels never write their inputs */
    aux->planned = 1;
    aux->has_memory = 1;
  } else if (tm.data_buffer_idx > 0) {
    const uint8_t* c;
    PTERUN_TRY(pt_program_constant(L->p, tm.data_buffer_idx, tm.nbytes, &c));
    t->data = (void*)c;
    aux->planned = 1;
    aux->has_memory = 1;
  } else {
    t->data = NULL;
    t->capacity = 0; /* unplanned: memory comes from the caller */
  }
  // Kernels load elements directly, so every element must be naturally
  // aligned (the exporter aligns planned and constant data to 16 bytes).
  if (t->data != NULL && !pt_dtype_aligned(t->data, t->dtype))
    return lfail(L, tm.planned ? PTERUN_STATUS_MEMORY_PLAN : PTERUN_STATUS_INVALID_PROGRAM,
                 "value %u: %s data at a misaligned address", vi, pterun_dtype_name(t->dtype));
  aux->initial_data = t->data;
  return PTERUN_STATUS_OK;
}

static pterun_status parse_values(loader* L) {
  pterun_method* m = L->m;
  uint32_t ti = 0;
  // Pass 1: scalars, strings and tensors. Pass 2: lists, which may name any
  // value and must see its final tag.
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < m->value_count; ++i) {
      pt_fb_table ev, pl;
      pt_fb_vec_table(&L->values, i, &ev);
      uint8_t tag = pt_fb_u8(&ev, PT_EVALUE_TYPE, 0);
      int has = pt_fb_get_table(&ev, PT_EVALUE_VAL, &pl) == 1;
      bool is_list = tag >= PT_KT_INT_LIST;
      if ((pass == 0) == is_list) continue;
      pterun_value* v = &m->values[i];
      pt_fb_vec items;
      switch (tag) {
        case PT_KT_NULL: v->tag = PTERUN_VALUE_NONE; break;
        case PT_KT_INT:
          v->tag = PTERUN_VALUE_INT;
          v->u.i = pt_fb_i64(&pl, PT_PAYLOAD_VAL, 0);
          break;
        case PT_KT_BOOL:
          v->tag = PTERUN_VALUE_BOOL;
          v->u.b = pt_fb_u8(&pl, PT_PAYLOAD_VAL, 0) != 0;
          break;
        case PT_KT_DOUBLE:
          v->tag = PTERUN_VALUE_DOUBLE;
          v->u.d = pt_fb_f64(&pl, PT_PAYLOAD_VAL, 0.0);
          break;
        case PT_KT_STRING: {
          const char* s = "";
          uint32_t n = 0;
          pt_fb_get_string(&pl, PT_PAYLOAD_VAL, &s, &n);
          v->tag = PTERUN_VALUE_STRING;
          v->u.str.data = s;
          v->u.str.len = n;
          break;
        }
        case PT_KT_TENSOR:
          if (!has)
            return lfail(L, PTERUN_STATUS_INVALID_PROGRAM, "value %u: tensor payload missing", i);
          v->tag = PTERUN_VALUE_TENSOR;
          v->u.tensor = &m->tensors[ti];
          PTERUN_TRY(parse_tensor(L, &pl, i, &m->tensors[ti], &m->aux[ti]));
          ++ti;
          break;
        case PT_KT_INT_LIST:
          pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 8, &items);
          v->tag = PTERUN_VALUE_LIST_INT;
          v->u.ints.len = items.len;
          for (uint32_t k = 0; k < items.len; ++k) {
            int64_t idx = pt_fb_vec_i64(&items, k);
            if (m->values[idx].tag != PTERUN_VALUE_INT)
              return lfail(L, PTERUN_STATUS_INVALID_PROGRAM,
                           "value %u: int list item %u names a %s value", i, k,
                           pterun_value_tag_name(m->values[idx].tag));
            ((pterun_value**)v->u.ints.items)[k] = &m->values[idx];
          }
          break;
        case PT_KT_DOUBLE_LIST:
          pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 8, &items);
          v->tag = PTERUN_VALUE_LIST_DOUBLE;
          v->u.doubles.len = items.len;
          for (uint32_t k = 0; k < items.len; ++k)
            ((double*)v->u.doubles.items)[k] = pt_rd_f64(pt_fb_vec_ptr(&items, k));
          break;
        case PT_KT_BOOL_LIST:
          pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 1, &items);
          v->tag = PTERUN_VALUE_LIST_BOOL;
          v->u.bools.len = items.len;
          for (uint32_t k = 0; k < items.len; ++k)
            ((uint8_t*)v->u.bools.items)[k] = pt_fb_vec_u8(&items, k) != 0;
          break;
        default: { /* tensor lists */
          bool optional = tag == PT_KT_OPTIONAL_TENSOR_LIST;
          pt_fb_get_vector(&pl, PT_PAYLOAD_VAL, 4, &items);
          v->tag = optional ? PTERUN_VALUE_LIST_OPTIONAL_TENSOR : PTERUN_VALUE_LIST_TENSOR;
          v->u.tensors.len = items.len;
          for (uint32_t k = 0; k < items.len; ++k) {
            int32_t idx = pt_fb_vec_i32(&items, k);
            pterun_value* e = idx >= 0 ? &m->values[idx] : NULL;
            int etag = e != NULL ? e->tag : PTERUN_VALUE_NONE;
            if (etag != PTERUN_VALUE_TENSOR && !(optional && etag == PTERUN_VALUE_NONE))
              return lfail(L, PTERUN_STATUS_INVALID_PROGRAM,
                           "value %u: tensor list item %u names a %s value", i, k,
                           pterun_value_tag_name(etag));
            ((pterun_value**)v->u.tensors.items)[k] = e;
          }
          break;
        }
      }
    }
  }
  return PTERUN_STATUS_OK;
}

/* The last kernel argument is the result (the out tensor, or a list of
 * them). Results must go to planned or caller memory, never into constant
 * data, which may be the caller's borrowed program buffer. */
static bool is_constant_tensor(const pterun_method* m, const pterun_value* v) {
  if (v == NULL || v->tag != PTERUN_VALUE_TENSOR) return false;
  const pt_tensor_aux* aux = &m->aux[v->u.tensor - m->tensors];
  return aux->has_memory && !aux->in_arena;
}

static bool writes_constant(const pterun_method* m, const pterun_value* result) {
  if (result->tag == PTERUN_VALUE_LIST_TENSOR || result->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR) {
    for (size_t k = 0; k < result->u.tensors.len; ++k)
      if (is_constant_tensor(m, result->u.tensors.items[k])) return true;
    return false;
  }
  return is_constant_tensor(m, result);
}

/* The missing-operator error: every operator the method calls that `reg`
 * lacks, one per line with what to do about it, as many as fit in one log
 * message (whole lines only), then how many more there are. */
static pterun_status report_missing(loader* L, const pterun_registry* reg, uint32_t n_missing) {
  pterun_method* m = L->m;
  char list[PT_LOG_MAX + 1], ename[PT_ESC_CAP];
  size_t used = 0;
  // Room for the header and the "... and N more" line.
  const size_t budget = PT_LOG_MAX - 160 - strlen(pt_esc(L->name, ename, sizeof ename));
  uint32_t shown = 0;
  list[0] = 0;
  for (uint32_t k = 0; k < m->op_count; ++k) {
    if (m->op_fns[k] != NULL || !m->op_called[k]) continue;
    char eop[PT_ESC_CAP], line[PT_ESC_CAP + 96];
    const char* comp = pterun_registry_missing_component(reg, m->op_names[k]);
    int w = comp != NULL
                ? snprintf(line, sizeof line, "\n  %s — link pterun::%s (not in the registry)",
                           pt_esc(m->op_names[k], eop, sizeof eop), comp)
                : snprintf(line, sizeof line, "\n  %s — not implemented by any pterun component",
                           pt_esc(m->op_names[k], eop, sizeof eop));
    if (w < 0 || used + (size_t)w > budget) break;
    memcpy(list + used, line, (size_t)w + 1);
    used += (size_t)w;
    ++shown;
  }
  if (shown < n_missing)
    snprintf(list + used, sizeof list - used, "\n  ... and %u more", n_missing - shown);
  return lfail(L, PTERUN_STATUS_OPERATOR_MISSING, "%u operator%s not registered:%s", n_missing,
               n_missing == 1 ? " is" : "s are", list);
}

static pterun_status build_instructions(loader* L) {
  pterun_method* m = L->m;
  const pterun_registry* reg = L->reg;
  if (reg == NULL) return lfail(L, PTERUN_STATUS_OUT_OF_MEMORY, "no registry");
  // One lookup per operator of the table, not per instruction: a kernel
  // depends on the operator only (it checks dtypes itself).
  for (uint32_t k = 0; k < m->op_count; ++k)
    m->op_fns[k] = pt_registry_resolve(reg, m->op_names[k], &m->op_prepares[k]);
  uint32_t n_missing = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) {
    pt_fb_table ch;
    pt_fb_vec instrs;
    pt_fb_vec_table(&L->chains, c, &ch);
    pt_fb_get_vector(&ch, PT_CHAIN_INSTRUCTIONS, 4, &instrs);
    for (uint32_t i = 0; i < instrs.len; ++i) {
      pt_fb_table in, a;
      pt_fb_vec_table(&instrs, i, &in);
      pt_fb_get_table(&in, PT_INSTR_ARGS, &a);
      pt_instr* ins = &m->chains[c].instrs[i];
      ins->type = pt_fb_u8(&in, PT_INSTR_TYPE, 0);
      ins->a = (uint32_t)pt_fb_i32(&a, 4, 0);
      ins->b = (uint32_t)pt_fb_i32(&a, 6, 0);
      if (ins->type == PT_INSTR_DELEGATE_CALL) {
        pt_fb_vec args;
        pt_fb_get_vector(&a, PT_CALL_ARGS, 4, &args);
        ins->b = args.len;
        for (uint32_t k = 0; k < args.len; ++k) ins->args[k] = &m->values[pt_fb_vec_i32(&args, k)];
        continue;
      }
      if (ins->type != PT_INSTR_KERNEL_CALL) continue;
      pt_fb_vec args;
      pt_fb_get_vector(&a, PT_CALL_ARGS, 4, &args);
      ins->b = args.len;
      for (uint32_t k = 0; k < args.len; ++k) ins->args[k] = &m->values[pt_fb_vec_i32(&args, k)];
      const char* op = m->op_names[ins->a];
      char eop[PT_ESC_CAP];
      if (args.len > 0 && writes_constant(m, ins->args[args.len - 1]))
        return lfail(L, PTERUN_STATUS_INVALID_PROGRAM,
                     "instruction %u:%u (%s) writes its result into constant data", c, i,
                     pt_esc(op, eop, sizeof eop));
      ins->fn = m->op_fns[ins->a];
      if (ins->fn == NULL && !m->op_called[ins->a]) ++n_missing;
      m->op_called[ins->a] = 1;
    }
  }
  if (n_missing > 0) return report_missing(L, reg, n_missing);
  if (L->delegates.len == 0) return PTERUN_STATUS_OK;
  // Delegates are prepared last: the values they are called with exist now.
  pt_delegate_env env = {L->o != NULL ? L->o->data : NULL, L->o != NULL ? L->o->data_count : 0,
                         &m->logger, m->allocator, L->name};
  PTERUN_TRY(pt_delegates_init(L->p, reg, &L->delegates, &env, m->delegates));
  for (uint32_t d = 0; d < m->delegate_count; ++d) {
    m->delegate_bytes += m->delegates[d].memory;
    if (m->delegates[d].scratch > m->scratch_need) m->scratch_need = m->delegates[d].scratch;
  }
  return PTERUN_STATUS_OK;
}

/* Flags planned inputs whose bytes overlap another planned tensor: the memory
 * plan reuses that space once the input is dead, so after an execute the
 * input no longer holds what the caller set. */
static void mark_shared_inputs(pterun_method* m) {
  for (uint32_t k = 0; k < m->input_count; ++k) {
    const pterun_value* v = &m->values[m->inputs[k]];
    if (v->tag != PTERUN_VALUE_TENSOR) continue;
    const pterun_tensor* in = v->u.tensor;
    if (!m->aux[in - m->tensors].in_arena || in->capacity == 0) continue;
    uintptr_t a0 = (uintptr_t)in->data, a1 = a0 + in->capacity;
    for (uint32_t t = 0; t < m->tensor_count && !m->input_shared[k]; ++t) {
      const pterun_tensor* o = &m->tensors[t];
      if (o == in || !m->aux[t].in_arena || o->capacity == 0) continue;
      uintptr_t b0 = (uintptr_t)o->data, b1 = b0 + o->capacity;
      if (a0 < b1 && b0 < a1) m->input_shared[k] = 1;
    }
  }
}

/* Kernel scratch, once the prepares and the delegates have said what their
 * executes ask for (pterun_kernel_scratch_reserve): the largest instruction's
 * need, or the caller's scratch_bytes. Without the prepares no kernel says:
 * the default size then. Its own allocation, not zeroed (kernels write
 * before reading); none when nothing reserved any. */
static pterun_status alloc_scratch(loader* L) {
  pterun_method* m = L->m;
  size_t scratch = L->o != NULL ? L->o->scratch_bytes : 0;
  if (L->o != NULL && L->o->no_kernel_prepare && m->scratch_need < PTERUN_DEFAULT_SCRATCH_BYTES)
    m->scratch_need = PTERUN_DEFAULT_SCRATCH_BYTES;
  if (scratch == 0) scratch = m->scratch_need;
  if (scratch == 0 || scratch == PTERUN_NO_SCRATCH) return PTERUN_STATUS_OK;
  m->scratch = pt_alloc_raw(m->allocator, scratch, 64);
  if (m->scratch == NULL)
    return lfail(L, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes of kernel scratch",
                 scratch);
  m->scratch_size = scratch;
  if (L->o == NULL || L->o->scratch_bytes == 0)
    pt_log(&m->logger, PTERUN_LOG_DEBUG, "kernel scratch: %zu bytes (the largest reservation)",
           scratch);
  return PTERUN_STATUS_OK;
}

const pt_core_services pt_core = {pt_registry_resolve, pt_program_release};

static pterun_status load(loader* L) {
  pterun_method* m = L->m;
  const pterun_program* p = L->p;
  // A pterun_profiler (libpterun_devtools) begins with its event tracer.
  pterun_event_tracer* tracer = L->o == NULL ? NULL
                                : L->o->event_tracer != NULL
                                    ? L->o->event_tracer
                                    : (pterun_event_tracer*)(void*)L->o->profiler;
  size_t index;
  L->reg = L->o != NULL && L->o->registry != NULL ? L->o->registry : pterun_registry_default();
  L->opt = pterun_registry_optimizer(L->reg);
  // find_method logs through the program's logger; say it through the
  // method's too when the caller gave the method its own.
  if (pterun_program_find_method(p, L->name, &index) != PTERUN_STATUS_OK) {
    char want[PT_ESC_CAP];
    if (m->logger.fn == p->logger.fn && m->logger.ctx == p->logger.ctx)
      return PTERUN_STATUS_NOT_FOUND;
    return pt_fail(&m->logger, PTERUN_STATUS_NOT_FOUND, "program has no method '%s'",
                   pt_esc(L->name, want, sizeof want));
  }
  pt_program_plan(p, index, &L->plan);
  pt_fb_get_vector(&L->plan, PT_PLAN_VALUES, 4, &L->values);
  pt_fb_get_vector(&L->plan, PT_PLAN_INPUTS, 4, &L->inputs);
  pt_fb_get_vector(&L->plan, PT_PLAN_OUTPUTS, 4, &L->outputs);
  pt_fb_get_vector(&L->plan, PT_PLAN_CHAINS, 4, &L->chains);
  if (pt_fb_get_vector(&L->plan, PT_PLAN_OPERATORS, 4, &L->ops) != 1)
    memset(&L->ops, 0, sizeof L->ops);
  pt_fb_get_vector(&L->plan, PT_PLAN_DELEGATES, 4, &L->delegates);
  pt_fb_get_vector(&L->plan, PT_PLAN_NON_CONST_BUFFER_SIZES, 8, &L->sizes);

  bump count = {NULL, 0, false};
  layout(L, &count);
  if (count.overflow)
    return lfail(L, PTERUN_STATUS_OUT_OF_MEMORY, "runtime structures overflow size_t");
  m->block = pt_alloc(m->allocator, count.used, 64);
  if (m->block == NULL)
    return lfail(L, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes of runtime structures",
                 count.used);
  m->block_size = count.used;
  bump real = {m->block, 0, false};
  layout(L, &real);
  if (L->o != NULL) {
    m->threadpool = L->o->threadpool;
    m->max_threads = L->o->max_threads;
  }

  for (uint32_t k = 0; k < m->input_count; ++k)
    m->inputs[k] = (uint32_t)pt_fb_vec_i32(&L->inputs, k);
  for (uint32_t k = 0; k < m->output_count; ++k)
    m->outputs[k] = (uint32_t)pt_fb_vec_i32(&L->outputs, k);
  PTERUN_TRY(bind_planned(L));
  PTERUN_TRY(parse_values(L));
  PTERUN_TRY(build_instructions(L));
  // Transposed weights stay views of the file until prepare shows whether
  // their readers pack them (method_fold.c); without prepare they are copied.
  const bool prepare = L->o == NULL || !L->o->no_kernel_prepare;
  m->release_packed = L->o != NULL && L->o->release_packed_constants;
  m->opt = L->opt;
  if (m->opt != NULL && (L->o == NULL || !L->o->no_constant_folding))
    PTERUN_TRY(m->opt->fold(m, &pt_core, prepare));
  // A method whose profiler keeps every kernel call's output (ETDump debug
  // events) runs the program's instructions as written, so each output and
  // debug handle maps onto one of them.
  if (m->opt != NULL && (L->o == NULL || (!L->o->no_fusion && !pt_trace_program_order(tracer))))
    PTERUN_TRY(m->opt->fuse(m, &pt_core, L->reg, L->o != NULL && L->o->no_kernel_prepare));
  memcpy(m->values_initial, m->values, m->value_count * sizeof *m->values);
  memcpy(m->tensors_initial, m->tensors, m->tensor_count * sizeof *m->tensors);
  if (prepare) PTERUN_TRY(pt_prepare_kernels(m));
  if (m->opt != NULL) PTERUN_TRY(m->opt->resolve_views(m));
  PTERUN_TRY(alloc_scratch(L));
  pt_free(m->allocator, m->fuse_undo);
  m->fuse_undo = NULL;
  m->fuse_undo_count = 0;
  // An input is written by set_input: it must not be constant data (that
  // lives in the program image or a data file).
  for (uint32_t k = 0; k < m->input_count; ++k) {
    const pterun_value* v = &m->values[m->inputs[k]];
    if (v->tag == PTERUN_VALUE_TENSOR && m->aux[v->u.tensor - m->tensors].has_memory &&
        !m->aux[v->u.tensor - m->tensors].in_arena)
      return lfail(L, PTERUN_STATUS_INVALID_PROGRAM, "input %u is a constant tensor", k);
  }
  // A tensor input with no memory of its own must be given some before execute;
  // a non-tensor input already holds its compiled value.
  for (uint32_t k = 0; k < m->input_count; ++k)
    m->input_set[k] = m->values[m->inputs[k]].tag != PTERUN_VALUE_TENSOR;
  mark_shared_inputs(m);
  if (tracer != NULL) PTERUN_TRY(pt_trace_attach(m, tracer, L->name));
  m->profiler = L->o != NULL ? L->o->profiler : NULL;
  m->budget = L->o != NULL && L->o->instruction_budget ? L->o->instruction_budget
                                                       : PTERUN_DEFAULT_INSTRUCTION_BUDGET;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_method_load(const pterun_program* program, const char* name,
                                 const pterun_method_options* options, pterun_method** method_out) {
  if (method_out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *method_out = NULL;
  if (program == NULL || name == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_method_options o;
  PTERUN_TRY(pterun_options_read(options, &o, sizeof o, &program->logger, "pterun_method_options"));
  const pterun_allocator* a = o.allocator != NULL ? o.allocator : program->allocator;
  pterun_method* m = pt_alloc(a, sizeof *m, 16);
  if (m == NULL)
    return pt_fail(&program->logger, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate a method");
  if (a != NULL) {
    m->allocator_copy = *a;
    m->allocator = &m->allocator_copy;
  }
  m->program = program;
  m->logger = pt_logger_or(&o.logger, &program->logger);
  loader L = {0};
  L.m = m;
  L.p = program;
  L.o = &o;
  L.name = name;
  pterun_status st = load(&L);
  if (st != PTERUN_STATUS_OK) {
    pterun_method_destroy(m);
    return st;
  }
  *method_out = m;
  return PTERUN_STATUS_OK;
}

void pterun_method_destroy(pterun_method* m) {
  if (m == NULL) return;
  pt_trace_detach(m);
  pterun_allocator copy = m->allocator_copy;
  const pterun_allocator* a = m->allocator != NULL ? &copy : NULL;
  if (m->block != NULL && m->owned_planned != NULL)
    for (uint32_t k = 0; k < m->planned_count; ++k) pt_free(a, m->owned_planned[k]);
  if (m->block != NULL) pt_delegates_destroy(m->delegates, m->delegate_count, a);
  for (uint32_t k = 0; k < m->folded_count; ++k) pt_free(a, m->folded[k]);
  for (uint32_t k = 0; k < m->fuse_home_count; ++k) pt_free(a, m->fuse_homes[k]);
  pt_free(a, m->fuse_homes);
  pt_free(a, m->fused_args);
  pt_free(a, m->fuse_undo);
  pt_free(a, m->view_folds);
  pt_free(a, m->view_claims);
  for (pt_state_block* b = m->states; b != NULL;) {
    pt_state_block* next = b->next;
    pt_free(a, b);
    b = next;
  }
  pt_free(a, m->folded);
  pt_free(a, m->scratch);
  pt_free(a, m->block);
  pt_free(a, m);
}

void pterun_method_memory(const pterun_method* m, size_t* runtime_bytes, size_t* planned_bytes) {
  if (runtime_bytes)
    *runtime_bytes = m != NULL ? m->block_size + sizeof *m + m->scratch_size + m->folded_bytes +
                                     m->state_bytes + m->fused_bytes + m->delegate_bytes
                               : 0;
  if (planned_bytes) *planned_bytes = m != NULL ? m->owned_planned_bytes : 0;
}

pterun_status pterun_method_backend_memory(const pterun_program* program, const char* name,
                                           const pterun_method_options* options,
                                           size_t* bytes_out) {
  if (bytes_out != NULL) *bytes_out = 0;
  if (program == NULL || name == NULL || bytes_out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  size_t index;
  if (pterun_program_find_method(program, name, &index) != PTERUN_STATUS_OK)
    return pt_fail(&program->logger, PTERUN_STATUS_NOT_FOUND, "program has no method '%s'", name);
  pt_fb_table plan;
  pt_fb_vec delegates;
  pt_program_plan(program, index, &plan);
  if (pt_fb_get_vector(&plan, PT_PLAN_DELEGATES, 4, &delegates) != 1) return PTERUN_STATUS_OK;
  const pterun_registry* reg =
      options != NULL && options->registry != NULL ? options->registry : pterun_registry_default();
  pterun_logger lg = pt_logger_or(options != NULL ? &options->logger : NULL, &program->logger);
  pt_delegate_env env = {options != NULL ? options->data : NULL,
                         options != NULL ? options->data_count : 0, &lg,
                         options != NULL ? options->allocator : NULL, name};
  return pt_delegates_memory(program, reg, &delegates, &env, bytes_out);
}
