/* The event-tracer interface (pterun/event_tracer.h): attaching a tracer to
 * a method, and what a tracer may read of the method. The interpreter's
 * hooks are in method_exec.c. */
#include <string.h>

#include "src/core/schema.h"
#include "src/core/trace_internal.h"

/* The hooks a tracer compiled with `struct_size` has; later ones stay NULL. */
static pterun_event_tracer read_hooks(const pterun_event_tracer* t) {
  pterun_event_tracer h;
  memset(&h, 0, sizeof h);
  size_t n = t->struct_size < sizeof h ? t->struct_size : sizeof h;
  memcpy(&h, t, n);
  return h;
}

bool pt_trace_program_order(const pterun_event_tracer* t) {
  return t != NULL && (read_hooks(t).flags & PTERUN_EVENT_TRACER_PROGRAM_ORDER) != 0;
}

pterun_status pt_trace_attach(pterun_method* m, pterun_event_tracer* t, const char* name) {
  if (t->struct_size < offsetof(pterun_event_tracer, flags))
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "event tracer: struct_size %zu is too small", t->struct_size);
  m->hooks = read_hooks(t);
  if (m->hooks.attach != NULL) PTERUN_TRY(m->hooks.attach(t, m, name, &m->logger));
  m->tracer = t;
  return PTERUN_STATUS_OK;
}

void pt_trace_detach(pterun_method* m) {
  if (m->tracer != NULL && m->hooks.detach != NULL) m->hooks.detach(m->tracer);
  m->tracer = NULL;
}

size_t pterun_method_chain_count(const pterun_method* m) {
  return m != NULL ? m->chain_count : 0;
}

size_t pterun_method_chain_length(const pterun_method* m, size_t chain) {
  return m != NULL && chain < m->chain_count ? m->chains[chain].count : 0;
}

pterun_status pterun_method_instruction(const pterun_method* m, size_t chain, size_t i,
                                        pterun_instruction_info* out) {
  if (m == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (chain >= m->chain_count || i >= m->chains[chain].count) return PTERUN_STATUS_NOT_FOUND;
  const pt_instr* in = &m->chains[chain].instrs[i];
  memset(out, 0, sizeof *out);
  if (in->type == PT_INSTR_KERNEL_CALL) {
    out->kind = PTERUN_INSTRUCTION_KERNEL;
    out->name = m->op_names[in->a];
  } else if (in->type == PT_INSTR_DELEGATE_CALL) {
    out->kind = PTERUN_INSTRUCTION_DELEGATE;
    out->name = m->delegates[in->a].backend->id;
  } else {
    return PTERUN_STATUS_OK;
  }
  out->args = (const pterun_value* const*)in->args;
  out->nargs = in->b;
  return PTERUN_STATUS_OK;
}

void pterun_method_file_bytes(const pterun_method* m, uint64_t* file_bytes,
                              uint64_t* planned_bytes) {
  if (file_bytes != NULL) *file_bytes = m != NULL ? m->file_bytes : 0;
  if (planned_bytes != NULL) *planned_bytes = m != NULL ? m->planned_bytes : 0;
}
