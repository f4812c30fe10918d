/* The profiler: per-instruction totals and the kept executes' events, sized
 * when a method loads (attach) and filled by the interpreter's one hook. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/core/backend_internal.h"
#include "src/core/kernel_context.h"
#include "src/core/method_internal.h"
#include "src/core/profile_internal.h"
#include "src/core/schema.h"

/* Default recorded-output budget per kept run, in planned memory + files. */
#define PT_PROF_OUTPUT_FACTOR 4u

typedef struct pt_prof_entry {
  uint32_t chain, instr;
  const char* op_name; /* copy in names[], or NULL */
  int delegate;        /* a delegate call: op_name is the backend id */
  int32_t out_value;   /* value index of the output argument, -1 none */
  uint64_t calls, total_ns, min_ns, max_ns;
  const char* slow_path;
} pt_prof_entry;

typedef struct pt_prof_event {
  uint32_t run, entry;
  uint64_t start_ns, end_ns;
} pt_prof_event;

typedef struct pt_prof_out {
  uint64_t offset, nbytes; /* offset UINT64_MAX: not recorded */
  int32_t dtype;
  uint32_t rank;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t strides[PTERUN_MAX_RANK];
} pt_prof_out;

struct pterun_profiler {
  pterun_profiler_options opt;
  pterun_allocator allocator_copy; /* opt.allocator points here, or is NULL */
  const pterun_method* method;     /* attached method, or NULL */
  char* method_name;

  /* One allocation, made at attach: */
  void* block;
  pt_prof_entry* entries;
  uint32_t entry_count;
  uint32_t* chain_base; /* entry index of each chain's first instruction */
  uint32_t chain_count;
  uint64_t* runs; /* start, end per kept run */
  pt_prof_event* events;
  size_t event_cap;
  pt_prof_out* outs; /* parallel to events, with record_outputs */
  uint8_t* out_buf;
  size_t out_cap;

  /* State, cleared by reset: */
  uint64_t executes;
  size_t run_count, event_count, out_used;
  uint64_t dropped_events, dropped_outputs;
  int in_run; /* the current execute is kept */
};

uint64_t pt_clock_ns(void) {
#ifdef PTERUN_BARE_METAL
  return 0; /* no clock without an OS: a firmware profiles with its own timer */
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

pterun_status pterun_profiler_create(const pterun_profiler_options* o, pterun_profiler** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  pterun_profiler_options opt;
  PTERUN_TRY(pterun_options_read(o, &opt, sizeof opt, NULL, "pterun_profiler_options"));
  pterun_profiler* p = pt_alloc(opt.allocator, sizeof *p, 16);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  p->opt = opt;
  if (opt.allocator != NULL) { /* the caller's struct may not outlive this call */
    p->allocator_copy = *opt.allocator;
    p->opt.allocator = &p->allocator_copy;
  }
  if (p->opt.max_runs == 0) p->opt.max_runs = PTERUN_PROFILER_DEFAULT_RUNS;
  *out = p;
  return PTERUN_STATUS_OK;
}

static void release(pterun_profiler* p) {
  pt_free(p->opt.allocator, p->block);
  pt_free(p->opt.allocator, p->out_buf);
  pt_free(p->opt.allocator, p->method_name);
  p->block = NULL;
  p->out_buf = NULL;
  p->method_name = NULL;
  p->entry_count = p->chain_count = 0;
  p->event_cap = p->out_cap = 0;
}

void pterun_profiler_destroy(pterun_profiler* p) {
  if (p == NULL) return;
  release(p);
  pterun_allocator a = p->allocator_copy;
  pt_free(p->opt.allocator != NULL ? &a : NULL, p);
}

void pterun_profiler_reset(pterun_profiler* p) {
  if (p == NULL) return;
  p->executes = 0;
  p->run_count = p->event_count = p->out_used = 0;
  p->dropped_events = p->dropped_outputs = 0;
  p->in_run = 0;
  for (uint32_t k = 0; k < p->entry_count; ++k) {
    pt_prof_entry* e = &p->entries[k];
    e->calls = e->total_ns = e->max_ns = 0;
    e->min_ns = UINT64_MAX;
    e->slow_path = NULL;
  }
}

/* Bytes an output copy may need: the tensor's capacity as loaded, or its
 * size at the bound shape when it has no memory yet. */
static uint64_t out_reserve(const pterun_method* m, int32_t vi) {
  if (vi < 0) return 0;
  const pterun_tensor* t = m->values_initial[vi].u.tensor;
  uint64_t n = t->capacity > t->nbytes ? t->capacity : t->nbytes;
  return pt_align_up(n, 16);
}

pterun_status pt_profiler_attach(pterun_profiler* p, const pterun_method* m, const char* name) {
  if (p->method != NULL)
    return pt_fail(&m->logger, PTERUN_STATUS_INVALID_STATE,
                   "the profiler is already attached to a method");
  release(p);
  size_t total = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) total += m->chains[c].count;
  if (total > UINT32_MAX - 1)
    return pt_fail(&m->logger, PTERUN_STATUS_NOT_SUPPORTED, "too many instructions to profile");
  // Kept events: every instruction once per kept run (loops may need more;
  // the excess is counted as dropped, never allocated on the fly).
  uint64_t cap, names = 0, sz = 0, out_bytes = 0, tmp;
  if (pt_mul_overflow_u64(total ? total : 1, p->opt.max_runs, &cap) || cap > (SIZE_MAX >> 7))
    return pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "profiler event storage too large");
  for (uint32_t k = 0; k < m->op_count; ++k) names += strlen(m->op_names[k]) + 1;
  for (uint32_t k = 0; k < m->delegate_count; ++k) names += strlen(m->delegates[k].backend->id) + 1;
  sz = pt_align_up(total * sizeof(pt_prof_entry), 16) +
       pt_align_up((m->chain_count + 1) * sizeof(uint32_t), 16) +
       pt_align_up(2 * (uint64_t)p->opt.max_runs * sizeof(uint64_t), 16) +
       pt_align_up(cap * sizeof(pt_prof_event), 16) +
       (p->opt.record_outputs ? pt_align_up(cap * sizeof(pt_prof_out), 16) : 0) + names + 1;
  p->block = pt_alloc(p->opt.allocator, (size_t)sz, 16);
  if (p->block == NULL)
    return pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate profiler storage");
  uint8_t* b = p->block;
  p->entries = (pt_prof_entry*)b;
  b += pt_align_up(total * sizeof(pt_prof_entry), 16);
  p->chain_base = (uint32_t*)b;
  b += pt_align_up((m->chain_count + 1) * sizeof(uint32_t), 16);
  p->runs = (uint64_t*)b;
  b += pt_align_up(2 * (uint64_t)p->opt.max_runs * sizeof(uint64_t), 16);
  p->events = (pt_prof_event*)b;
  b += pt_align_up(cap * sizeof(pt_prof_event), 16);
  if (p->opt.record_outputs) {
    p->outs = (pt_prof_out*)b;
    b += pt_align_up(cap * sizeof(pt_prof_out), 16);
  }
  char* name_copy = (char*)b; /* op names, so results outlive the method */
  p->event_cap = (size_t)cap;
  p->entry_count = (uint32_t)total;
  p->chain_count = m->chain_count;

  uint32_t k = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) {
    p->chain_base[c] = k;
    for (uint32_t pc = 0; pc < m->chains[c].count; ++pc, ++k) {
      const pt_instr* in = &m->chains[c].instrs[pc];
      pt_prof_entry* e = &p->entries[k];
      e->chain = c;
      e->instr = pc;
      e->out_value = -1;
      if (in->type != PT_INSTR_KERNEL_CALL && in->type != PT_INSTR_DELEGATE_CALL) continue;
      e->delegate = in->type == PT_INSTR_DELEGATE_CALL;
      /* fixed below to point at the copy */
      e->op_name = e->delegate ? m->delegates[in->a].backend->id : m->op_names[in->a];
      if (in->b > 0 && in->args[in->b - 1]->tag == PTERUN_VALUE_TENSOR) {
        const pterun_value* last = in->args[in->b - 1];
        e->out_value = (int32_t)(last - m->values);
        if (p->opt.record_outputs) {
          if (pt_add_overflow_u64(out_bytes, out_reserve(m, e->out_value), &tmp))
            return pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "profiler outputs too large");
          out_bytes = tmp;
        }
      }
    }
  }
  p->chain_base[m->chain_count] = k;
  // Copy each operator name once and point the entries at the copies.
  {
    char* w = name_copy;
    for (uint32_t o = 0; o < m->op_count; ++o) {
      size_t n = strlen(m->op_names[o]) + 1;
      memcpy(w, m->op_names[o], n);
      for (uint32_t e = 0; e < p->entry_count; ++e)
        if (!p->entries[e].delegate && p->entries[e].op_name == m->op_names[o])
          p->entries[e].op_name = w;
      w += n;
    }
    for (uint32_t d = 0; d < m->delegate_count; ++d) {
      const char* id = m->delegates[d].backend->id;
      size_t n = strlen(id) + 1;
      memcpy(w, id, n);
      for (uint32_t e = 0; e < p->entry_count; ++e)
        if (p->entries[e].delegate && p->entries[e].op_name == id) p->entries[e].op_name = w;
      w += n;
    }
  }
  if (p->opt.record_outputs && out_bytes > 0) {
    // Every call may name the same large planned tensor, so the sum over
    // calls is not bounded by anything the file holds: reserve at most the
    // budget and count the outputs past it as dropped. Default, per kept run:
    // PT_PROF_OUTPUT_FACTOR x (planned memory + files); the fixtures' calls
    // need up to 3.2x (a deep net rewrites its few planned bytes often).
    uint64_t budget = p->opt.max_output_bytes;
    if (budget == 0) {
      uint64_t per_run =
          pt_add_overflow_u64(m->planned_bytes, m->file_bytes, &tmp) ? UINT64_MAX : tmp;
      budget = pt_mul_overflow_u64(per_run, PT_PROF_OUTPUT_FACTOR * (uint64_t)p->opt.max_runs, &tmp)
                   ? UINT64_MAX
                   : tmp;
    }
    if (pt_mul_overflow_u64(out_bytes, p->opt.max_runs, &tmp)) tmp = UINT64_MAX;
    if (tmp > budget) {
      pt_log(&m->logger, PTERUN_LOG_INFO,
             "profiler: recorded outputs need up to %llu bytes; %llu reserved (max_output_bytes), "
             "outputs past it are dropped",
             (unsigned long long)tmp, (unsigned long long)budget);
      tmp = budget;
    }
    if (tmp > SIZE_MAX / 2)
      return pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "profiler outputs too large");
    p->out_buf = pt_alloc_raw(p->opt.allocator, (size_t)tmp, 64);
    if (p->out_buf == NULL)
      return pt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY,
                     "cannot allocate %llu bytes for recorded outputs", (unsigned long long)tmp);
    p->out_cap = (size_t)tmp;
  }
  size_t nl = strlen(name) + 1;
  p->method_name = pt_alloc(p->opt.allocator, nl, 1);
  if (p->method_name == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memcpy(p->method_name, name, nl);
  p->method = m;
  pterun_profiler_reset(p);
  return PTERUN_STATUS_OK;
}

int pt_profiler_records_outputs(const pterun_profiler* p) {
  return p != NULL && p->opt.record_outputs;
}

void pt_profiler_detach(pterun_profiler* p) {
  p->method = NULL;
}

void pt_profiler_run_begin(pterun_profiler* p) {
  p->executes++;
  p->in_run = p->run_count < p->opt.max_runs;
  if (p->in_run) {
    p->runs[2 * p->run_count] = pt_clock_ns();
    p->runs[2 * p->run_count + 1] = 0;
    p->run_count++;
  }
}

void pt_profiler_run_end(pterun_profiler* p) {
  if (p->in_run) p->runs[2 * (p->run_count - 1) + 1] = pt_clock_ns();
  p->in_run = 0;
}

/* Copies the output tensor of a kept call into the reserved bytes. */
static void record_output(pterun_profiler* p, const pt_prof_entry* e, size_t ev) {
  pt_prof_out* o = &p->outs[ev];
  o->offset = UINT64_MAX;
  const pterun_tensor* t = p->method->values[e->out_value].tag == PTERUN_VALUE_TENSOR
                               ? p->method->values[e->out_value].u.tensor
                               : NULL;
  // Any dim order is dense: the bytes are copied as laid out, with strides.
  if (t == NULL || (t->nbytes > 0 && t->data == NULL) ||
      p->out_cap - p->out_used < pt_align_up(t->nbytes, 16)) {
    p->dropped_outputs++;
    return;
  }
  o->offset = p->out_used;
  o->nbytes = t->nbytes;
  o->dtype = t->dtype;
  o->rank = t->rank;
  memcpy(o->sizes, t->sizes, sizeof o->sizes);
  memcpy(o->strides, t->strides, sizeof o->strides);
  if (t->nbytes > 0) memcpy(p->out_buf + p->out_used, t->data, t->nbytes);
  p->out_used += pt_align_up(t->nbytes, 16);
}

/* Adds one timed call of instruction `pc` of `chain` to the totals and,
 * within the reserve, to the kept events. */
static void record(pterun_profiler* p, uint32_t chain, uint32_t pc, uint64_t t0, uint64_t t1,
                   pterun_status st, const pterun_kernel_context* ctx) {
  uint32_t idx = p->chain_base[chain] + pc;
  pt_prof_entry* e = &p->entries[idx];
  uint64_t dt = t1 - t0;
  e->calls++;
  e->total_ns += dt;
  if (dt < e->min_ns) e->min_ns = dt;
  if (dt > e->max_ns) e->max_ns = dt;
  if (ctx->slow_path != NULL) e->slow_path = ctx->slow_path;
  if (p->in_run) {
    if (p->event_count < p->event_cap) {
      pt_prof_event* ev = &p->events[p->event_count];
      ev->run = (uint32_t)(p->run_count - 1);
      ev->entry = idx;
      ev->start_ns = t0;
      ev->end_ns = t1;
      if (p->outs != NULL) {
        p->outs[p->event_count].offset = UINT64_MAX;
        if (st == PTERUN_STATUS_OK && e->out_value >= 0) record_output(p, e, p->event_count);
      }
      p->event_count++;
    } else {
      p->dropped_events++;
    }
  }
}

pterun_status pt_profiler_call(pterun_profiler* p, const pt_instr* in, pterun_kernel_context* ctx,
                               uint32_t chain, uint32_t pc) {
  ctx->slow_path = NULL;
  uint64_t t0 = pt_clock_ns();
  pterun_status st = in->fn(ctx, in->args, in->b);
  record(p, chain, pc, t0, pt_clock_ns(), st, ctx);
  return st;
}

pterun_status pt_profiler_delegate(pterun_profiler* p, const pt_delegate* d, const pt_instr* in,
                                   pterun_kernel_context* ctx, uint32_t chain, uint32_t pc) {
  ctx->slow_path = NULL;
  uint64_t t0 = pt_clock_ns();
  pterun_status st = d->backend->execute(d->handle, ctx, in->args, in->b);
  record(p, chain, pc, t0, pt_clock_ns(), st, ctx);
  return st;
}

/* ---- queries ------------------------------------------------------------------ */

const char* pterun_profiler_method_name(const pterun_profiler* p) {
  return p != NULL && p->method_name != NULL ? p->method_name : "";
}
uint64_t pterun_profiler_execute_count(const pterun_profiler* p) {
  return p != NULL ? p->executes : 0;
}
size_t pterun_profiler_instruction_count(const pterun_profiler* p) {
  return p != NULL ? p->entry_count : 0;
}

pterun_status pterun_profiler_instruction(const pterun_profiler* p, size_t i,
                                          pterun_profile_instruction* out) {
  if (p == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= p->entry_count) return PTERUN_STATUS_NOT_FOUND;
  const pt_prof_entry* e = &p->entries[i];
  out->chain = e->chain;
  out->instruction = e->instr;
  out->op_name = e->op_name;
  out->delegate = e->delegate;
  out->calls = e->calls;
  out->total_ns = e->total_ns;
  out->min_ns = e->calls ? e->min_ns : 0;
  out->max_ns = e->max_ns;
  out->slow_path = e->slow_path;
  return PTERUN_STATUS_OK;
}

size_t pterun_profiler_run_count(const pterun_profiler* p) {
  return p != NULL ? p->run_count : 0;
}

pterun_status pterun_profiler_run(const pterun_profiler* p, size_t run, uint64_t* start_ns,
                                  uint64_t* end_ns) {
  if (p == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (run >= p->run_count) return PTERUN_STATUS_NOT_FOUND;
  if (start_ns) *start_ns = p->runs[2 * run];
  if (end_ns) *end_ns = p->runs[2 * run + 1];
  return PTERUN_STATUS_OK;
}

size_t pterun_profiler_event_count(const pterun_profiler* p) {
  return p != NULL ? p->event_count : 0;
}

pterun_status pterun_profiler_event(const pterun_profiler* p, size_t k, pterun_profile_event* out) {
  if (p == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (k >= p->event_count) return PTERUN_STATUS_NOT_FOUND;
  memset(out, 0, sizeof *out);
  const pt_prof_event* ev = &p->events[k];
  out->run = ev->run;
  out->instruction = ev->entry;
  out->start_ns = ev->start_ns;
  out->end_ns = ev->end_ns;
  if (p->outs != NULL && p->outs[k].offset != UINT64_MAX) {
    const pt_prof_out* o = &p->outs[k];
    out->has_output = 1;
    out->output_dtype = o->dtype;
    out->output_rank = o->rank;
    memcpy(out->output_sizes, o->sizes, sizeof o->sizes);
    memcpy(out->output_strides, o->strides, sizeof o->strides);
    out->output_data = p->out_buf + o->offset;
    out->output_nbytes = (size_t)o->nbytes;
  }
  return PTERUN_STATUS_OK;
}

void pterun_profiler_dropped(const pterun_profiler* p, uint64_t* events_out,
                             uint64_t* outputs_out) {
  if (events_out) *events_out = p != NULL ? p->dropped_events : 0;
  if (outputs_out) *outputs_out = p != NULL ? p->dropped_outputs : 0;
}

/* ---- Chrome trace --------------------------------------------------------------- */

/* A JSON string of untrusted bytes: quotes, backslashes and control bytes
 * escaped, bytes >= 0x80 as \u00XX (valid JSON whatever the encoding). */
static void json_str(FILE* f, const char* s) {
  fputc('"', f);
  for (; s != NULL && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

pterun_status pterun_profiler_write_chrome_trace(const pterun_profiler* p, const char* path) {
  if (p == NULL || path == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  FILE* f = fopen(path, "w");
  if (f == NULL) return PTERUN_STATUS_IO_ERROR;
  uint64_t t0 = p->run_count ? p->runs[0] : 0;
  fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", f);
  int first = 1;
  for (size_t r = 0; r < p->run_count; ++r) {
    uint64_t s = p->runs[2 * r], e = p->runs[2 * r + 1];
    if (e < s) e = s;
    fprintf(f, "%s{\"name\": \"execute ", first ? "" : ",\n");
    first = 0;
    fprintf(f, "%zu\", \"cat\": \"method\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, ", r);
    fprintf(f, "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"method\": ", (double)(s - t0) / 1e3,
            (double)(e - s) / 1e3);
    json_str(f, p->method_name);
    fputs("}}", f);
  }
  for (size_t k = 0; k < p->event_count; ++k) {
    const pt_prof_event* ev = &p->events[k];
    const pt_prof_entry* e = &p->entries[ev->entry];
    fputs(first ? "{\"name\": " : ",\n{\"name\": ", f);
    first = 0;
    json_str(f, e->op_name);
    fprintf(f,
            ", \"cat\": \"operator\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, "
            "\"dur\": %.3f, \"args\": {\"run\": %u, \"chain\": %u, \"instruction\": %u",
            (double)(ev->start_ns - t0) / 1e3, (double)(ev->end_ns - ev->start_ns) / 1e3, ev->run,
            e->chain, e->instr);
    if (e->slow_path != NULL) {
      fputs(", \"slow_path\": ", f);
      json_str(f, e->slow_path);
    }
    fputs("}}", f);
  }
  fputs("\n]}\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return PTERUN_STATUS_IO_ERROR;
  return PTERUN_STATUS_OK;
}
