/* The profiler: per-instruction totals and the kept executes' events, sized
 * when a method loads (the event tracer's attach) and filled by its hooks
 * around every call (pterun/event_tracer.h). */
#include <stdio.h>
#include <string.h>

#include "pterun/event_tracer.h"
#include "pterun/profile.h"
#include "src/devtools/dt_util.h"

/* Default recorded-output budget per kept run, in planned memory + files. */
#define DT_PROF_OUTPUT_FACTOR 4u

typedef struct dt_prof_entry {
  uint32_t chain, instr;
  const char* op_name;     /* copy in names[], or NULL */
  int delegate;            /* a delegate call: op_name is the backend id */
  const pterun_value* out; /* the output argument (a tensor at load), or NULL */
  uint64_t calls, total_ns, min_ns, max_ns;
  const char* slow_path;
} dt_prof_entry;

/* One step of a delegate call (an XNNPACK node), by (instruction, id). */
typedef struct dt_prof_node {
  uint32_t entry, id;
  const char* name; /* the backend's static text */
  uint64_t calls, total_ns, min_ns, max_ns;
} dt_prof_node;

/* Node slots per delegate call, reserved at attach (steps past them are
 * counted as dropped). */
#define DT_PROF_NODES_PER_DELEGATE 1024u

typedef struct dt_prof_event {
  uint32_t run, entry;
  uint64_t start_ns, end_ns;
} dt_prof_event;

typedef struct dt_prof_out {
  uint64_t offset, nbytes; /* offset UINT64_MAX: not recorded */
  int32_t dtype;
  uint32_t rank;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t strides[PTERUN_MAX_RANK];
} dt_prof_out;

struct pterun_profiler {
  pterun_event_tracer tracer; /* first: the method options' `profiler` is read as it */
  pterun_profiler_options opt;
  pterun_allocator allocator_copy; /* opt.allocator points here, or is NULL */
  const pterun_method* method;     /* attached method, or NULL */
  char* method_name;
  uint64_t call_t0;    /* call_begin's clock */
  uint32_t call_entry; /* call_begin's instruction */
  uint64_t node_t0;    /* delegate_event_begin's clock */
  dt_prof_node* nodes; /* own allocation at attach (delegate calls only) */
  size_t node_cap, node_count, node_hint;
  uint64_t dropped_nodes;

  /* One allocation, made at attach: */
  void* block;
  dt_prof_entry* entries;
  uint32_t entry_count;
  uint32_t* chain_base; /* entry index of each chain's first instruction */
  uint32_t chain_count;
  uint64_t* runs; /* start, end per kept run */
  dt_prof_event* events;
  size_t event_cap;
  dt_prof_out* outs; /* parallel to events, with record_outputs */
  uint8_t* out_buf;
  size_t out_cap;

  /* State, cleared by reset: */
  uint64_t executes;
  size_t run_count, event_count, out_used;
  uint64_t dropped_events, dropped_outputs;
  int in_run; /* the current execute is kept */
};

static pterun_status attach(pterun_event_tracer* self, const pterun_method* m, const char* name,
                            const pterun_logger* logger);
static void detach(pterun_event_tracer* self);
static void run_begin(pterun_event_tracer* self);
static void run_end(pterun_event_tracer* self);
static void call_begin(pterun_event_tracer* self, uint32_t chain, uint32_t pc);
static void call_end(pterun_event_tracer* self, uint32_t chain, uint32_t pc, pterun_status st,
                     const char* slow_path);
static void node_begin(pterun_event_tracer* self, uint32_t id, const char* name);
static void node_end(pterun_event_tracer* self, uint32_t id, const char* name);

pterun_status pterun_profiler_create(const pterun_profiler_options* o, pterun_profiler** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  pterun_profiler_options opt;
  PTERUN_TRY(pterun_options_read(o, &opt, sizeof opt, NULL, "pterun_profiler_options"));
  pterun_profiler* p = pterun_alloc(opt.allocator, sizeof *p, 16);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  p->tracer =
      (pterun_event_tracer){.struct_size = sizeof p->tracer,
                            .flags = opt.record_outputs ? PTERUN_EVENT_TRACER_PROGRAM_ORDER : 0,
                            .attach = attach,
                            .detach = detach,
                            .execute_begin = run_begin,
                            .execute_end = run_end,
                            .call_begin = call_begin,
                            .call_end = call_end,
                            .delegate_event_begin = node_begin,
                            .delegate_event_end = node_end};
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
  pterun_free(p->opt.allocator, p->block);
  pterun_free(p->opt.allocator, p->out_buf);
  pterun_free(p->opt.allocator, p->method_name);
  pterun_free(p->opt.allocator, p->nodes);
  p->nodes = NULL;
  p->node_cap = 0;
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
  pterun_free(p->opt.allocator != NULL ? &a : NULL, p);
}

void pterun_profiler_reset(pterun_profiler* p) {
  if (p == NULL) return;
  p->executes = 0;
  p->run_count = p->event_count = p->out_used = 0;
  p->dropped_events = p->dropped_outputs = p->dropped_nodes = 0;
  p->node_count = p->node_hint = 0;
  p->in_run = 0;
  for (uint32_t k = 0; k < p->entry_count; ++k) {
    dt_prof_entry* e = &p->entries[k];
    e->calls = e->total_ns = e->max_ns = 0;
    e->min_ns = UINT64_MAX;
    e->slow_path = NULL;
  }
}

/* Bytes an output copy may need: the tensor's capacity as loaded, or its
 * size at the bound shape when it has no memory yet. */
static uint64_t out_reserve(const pterun_value* v) {
  if (v == NULL) return 0;
  const pterun_tensor* t = v->u.tensor;
  uint64_t n = t->capacity > t->nbytes ? t->capacity : t->nbytes;
  return dt_align_up(n, 16);
}

/* Index of `name` among the first n distinct names, or n. The distinct
 * names are the method's operator table and backend ids: few. */
static uint32_t name_index(const char* const* distinct, uint32_t n, const char* name) {
  uint32_t i = 0;
  while (i < n && distinct[i] != name) ++i;
  return i;
}

static pterun_status attach(pterun_event_tracer* self, const pterun_method* m, const char* name,
                            const pterun_logger* lg) {
  pterun_profiler* p = (pterun_profiler*)self;
  if (p->method != NULL)
    return dt_fail(lg, PTERUN_STATUS_INVALID_STATE, "the profiler is already attached to a method");
  release(p);
  size_t nchains = pterun_method_chain_count(m), total = 0;
  for (size_t c = 0; c < nchains; ++c) total += pterun_method_chain_length(m, c);
  if (total > UINT32_MAX - 1 || nchains > UINT32_MAX - 1)
    return dt_fail(lg, PTERUN_STATUS_NOT_SUPPORTED, "too many instructions to profile");
  // Kept events: every instruction once per kept run (loops may need more;
  // the excess is counted as dropped, never allocated on the fly).
  uint64_t cap, names = 0, sz = 0, out_bytes = 0, tmp;
  if (__builtin_mul_overflow((uint64_t)(total ? total : 1), p->opt.max_runs, &cap) ||
      cap > (SIZE_MAX >> 7))
    return dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "profiler event storage too large");
  // Each distinct name once (copied: results outlive the method); which[k]:
  // instruction k's name, UINT32_MAX none. Temporary.
  const char** distinct = pterun_alloc(p->opt.allocator, total * sizeof *distinct + 1, 16);
  uint32_t* which = pterun_alloc(p->opt.allocator, total * sizeof *which + 1, 16);
  pterun_status st = PTERUN_STATUS_OK;
  uint32_t ndistinct = 0;
  if (distinct == NULL || which == NULL) {
    st = dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate profiler storage");
    goto done;
  }
  for (size_t c = 0, k = 0; c < nchains; ++c)
    for (size_t pc = 0; pc < pterun_method_chain_length(m, c); ++pc, ++k) {
      pterun_instruction_info in;
      which[k] = UINT32_MAX;
      if (pterun_method_instruction(m, c, pc, &in) != PTERUN_STATUS_OK || in.name == NULL) continue;
      uint32_t i = name_index(distinct, ndistinct, in.name);
      if (i == ndistinct) {
        distinct[ndistinct++] = in.name;
        names += strlen(in.name) + 1;
      }
      which[k] = i;
    }
  sz = dt_align_up(total * sizeof(dt_prof_entry), 16) +
       dt_align_up((nchains + 1) * sizeof(uint32_t), 16) +
       dt_align_up(2 * (uint64_t)p->opt.max_runs * sizeof(uint64_t), 16) +
       dt_align_up(cap * sizeof(dt_prof_event), 16) +
       (p->opt.record_outputs ? dt_align_up(cap * sizeof(dt_prof_out), 16) : 0) + names + 1;
  p->block = pterun_alloc(p->opt.allocator, (size_t)sz, 16);
  if (p->block == NULL) {
    st = dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate profiler storage");
    goto done;
  }
  uint8_t* b = p->block;
  p->entries = (dt_prof_entry*)b;
  b += dt_align_up(total * sizeof(dt_prof_entry), 16);
  p->chain_base = (uint32_t*)b;
  b += dt_align_up((nchains + 1) * sizeof(uint32_t), 16);
  p->runs = (uint64_t*)b;
  b += dt_align_up(2 * (uint64_t)p->opt.max_runs * sizeof(uint64_t), 16);
  p->events = (dt_prof_event*)b;
  b += dt_align_up(cap * sizeof(dt_prof_event), 16);
  if (p->opt.record_outputs) {
    p->outs = (dt_prof_out*)b;
    b += dt_align_up(cap * sizeof(dt_prof_out), 16);
  }
  // The names, then each distinct pointer replaced by its copy.
  char* w = (char*)b;
  for (uint32_t i = 0; i < ndistinct; ++i) {
    size_t n = strlen(distinct[i]) + 1;
    memcpy(w, distinct[i], n);
    distinct[i] = w;
    w += n;
  }
  p->event_cap = (size_t)cap;
  p->entry_count = (uint32_t)total;
  p->chain_count = (uint32_t)nchains;

  uint32_t k = 0;
  for (uint32_t c = 0; c < nchains; ++c) {
    p->chain_base[c] = k;
    for (uint32_t pc = 0; pc < pterun_method_chain_length(m, c); ++pc, ++k) {
      pterun_instruction_info in;
      dt_prof_entry* e = &p->entries[k];
      e->chain = c;
      e->instr = pc;
      e->out = NULL;
      if (pterun_method_instruction(m, c, pc, &in) != PTERUN_STATUS_OK ||
          in.kind == PTERUN_INSTRUCTION_OTHER)
        continue;
      e->delegate = in.kind == PTERUN_INSTRUCTION_DELEGATE;
      e->op_name = which[k] != UINT32_MAX ? distinct[which[k]] : NULL;
      if (in.nargs > 0 && in.args[in.nargs - 1]->tag == PTERUN_VALUE_TENSOR) {
        e->out = in.args[in.nargs - 1];
        if (p->opt.record_outputs &&
            __builtin_add_overflow(out_bytes, out_reserve(e->out), &out_bytes)) {
          st = dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "profiler outputs too large");
          goto done;
        }
      }
    }
  }
  p->chain_base[nchains] = k;
  {
    /* the delegate calls' own steps (pterun_kernel_event_begin) */
    size_t ndelegate = 0;
    for (uint32_t e = 0; e < p->entry_count; ++e) ndelegate += p->entries[e].delegate;
    if (ndelegate > 0 && ndelegate < SIZE_MAX / DT_PROF_NODES_PER_DELEGATE / sizeof(dt_prof_node)) {
      p->node_cap = ndelegate * DT_PROF_NODES_PER_DELEGATE;
      p->nodes = pterun_alloc(p->opt.allocator, p->node_cap * sizeof *p->nodes, 16);
      if (p->nodes == NULL) {
        st = dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate profiler storage");
        goto done;
      }
    }
  }
  if (p->opt.record_outputs && out_bytes > 0) {
    // Every call may name the same large planned tensor, so the sum over
    // calls is not bounded by anything the file holds: reserve at most the
    // budget and count the outputs past it as dropped. Default, per kept run:
    // DT_PROF_OUTPUT_FACTOR x (planned memory + files); the fixtures' calls
    // need up to 3.2x (a deep net rewrites its few planned bytes often).
    uint64_t budget = p->opt.max_output_bytes;
    if (budget == 0) {
      uint64_t file_bytes, planned_bytes, per_run;
      pterun_method_file_bytes(m, &file_bytes, &planned_bytes);
      if (__builtin_add_overflow(file_bytes, planned_bytes, &per_run) ||
          __builtin_mul_overflow(per_run, DT_PROF_OUTPUT_FACTOR * (uint64_t)p->opt.max_runs,
                                 &budget))
        budget = UINT64_MAX;
    }
    if (__builtin_mul_overflow(out_bytes, (uint64_t)p->opt.max_runs, &tmp)) tmp = UINT64_MAX;
    if (tmp > budget) {
      pterun_log(lg, PTERUN_LOG_INFO,
                 "profiler: recorded outputs need up to %llu bytes; %llu reserved "
                 "(max_output_bytes), outputs past it are dropped",
                 (unsigned long long)tmp, (unsigned long long)budget);
      tmp = budget;
    }
    if (tmp > SIZE_MAX / 2) {
      st = dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "profiler outputs too large");
      goto done;
    }
    p->out_buf = pterun_alloc(p->opt.allocator, (size_t)tmp, 64);
    if (p->out_buf == NULL) {
      st = dt_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY,
                   "cannot allocate %llu bytes for recorded outputs", (unsigned long long)tmp);
      goto done;
    }
    p->out_cap = (size_t)tmp;
  }
  size_t nl = strlen(name) + 1;
  p->method_name = pterun_alloc(p->opt.allocator, nl, 1);
  if (p->method_name == NULL) {
    st = PTERUN_STATUS_OUT_OF_MEMORY;
    goto done;
  }
  memcpy(p->method_name, name, nl);
  p->method = m;
  pterun_profiler_reset(p);
done:
  pterun_free(p->opt.allocator, distinct);
  pterun_free(p->opt.allocator, which);
  return st;
}

static void detach(pterun_event_tracer* self) {
  ((pterun_profiler*)self)->method = NULL;
}

static void run_begin(pterun_event_tracer* self) {
  pterun_profiler* p = (pterun_profiler*)self;
  p->executes++;
  p->in_run = p->run_count < p->opt.max_runs;
  if (p->in_run) {
    p->runs[2 * p->run_count] = dt_clock_ns();
    p->runs[2 * p->run_count + 1] = 0;
    p->run_count++;
  }
}

static void run_end(pterun_event_tracer* self) {
  pterun_profiler* p = (pterun_profiler*)self;
  if (p->in_run) p->runs[2 * (p->run_count - 1) + 1] = dt_clock_ns();
  p->in_run = 0;
}

/* Copies the output tensor of a kept call into the reserved bytes. */
static void record_output(pterun_profiler* p, const dt_prof_entry* e, size_t ev) {
  dt_prof_out* o = &p->outs[ev];
  o->offset = UINT64_MAX;
  const pterun_tensor* t = e->out->tag == PTERUN_VALUE_TENSOR ? e->out->u.tensor : NULL;
  // Any dim order is dense: the bytes are copied as laid out, with strides.
  if (t == NULL || (t->nbytes > 0 && t->data == NULL) ||
      p->out_cap - p->out_used < dt_align_up(t->nbytes, 16)) {
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
  p->out_used += dt_align_up(t->nbytes, 16);
}

/* Adds one timed call of instruction `pc` of `chain` to the totals and,
 * within the reserve, to the kept events. */
static void record(pterun_profiler* p, uint32_t chain, uint32_t pc, uint64_t t0, uint64_t t1,
                   pterun_status st, const char* slow_path) {
  uint32_t idx = p->chain_base[chain] + pc;
  dt_prof_entry* e = &p->entries[idx];
  uint64_t dt = t1 - t0;
  e->calls++;
  e->total_ns += dt;
  if (dt < e->min_ns) e->min_ns = dt;
  if (dt > e->max_ns) e->max_ns = dt;
  if (slow_path != NULL) e->slow_path = slow_path;
  if (p->in_run) {
    if (p->event_count < p->event_cap) {
      dt_prof_event* ev = &p->events[p->event_count];
      ev->run = (uint32_t)(p->run_count - 1);
      ev->entry = idx;
      ev->start_ns = t0;
      ev->end_ns = t1;
      if (p->outs != NULL) {
        p->outs[p->event_count].offset = UINT64_MAX;
        if (st == PTERUN_STATUS_OK && e->out != NULL) record_output(p, e, p->event_count);
      }
      p->event_count++;
    } else {
      p->dropped_events++;
    }
  }
}

static void call_begin(pterun_event_tracer* self, uint32_t chain, uint32_t pc) {
  pterun_profiler* p = (pterun_profiler*)self;
  p->call_entry = p->chain_base[chain] + pc;
  p->call_t0 = dt_clock_ns();
}

static void node_begin(pterun_event_tracer* self, uint32_t id, const char* name) {
  (void)id;
  (void)name;
  ((pterun_profiler*)self)->node_t0 = dt_clock_ns();
}

/* The slot of (the current delegate call, id): steps come in the same order
 * every call, so the one after the last found is tried first. */
static dt_prof_node* node_slot(pterun_profiler* p, uint32_t id, const char* name) {
  size_t h = p->node_hint;
  if (h < p->node_count && p->nodes[h].entry == p->call_entry && p->nodes[h].id == id)
    return &p->nodes[h];
  for (size_t k = 0; k < p->node_count; ++k)
    if (p->nodes[k].entry == p->call_entry && p->nodes[k].id == id) {
      p->node_hint = k;
      return &p->nodes[k];
    }
  if (p->node_count == p->node_cap) return NULL;
  dt_prof_node* n = &p->nodes[p->node_count];
  p->node_hint = p->node_count++;
  n->entry = p->call_entry;
  n->id = id;
  n->name = name;
  n->calls = n->total_ns = n->max_ns = 0;
  n->min_ns = UINT64_MAX;
  return n;
}

static void node_end(pterun_event_tracer* self, uint32_t id, const char* name) {
  pterun_profiler* p = (pterun_profiler*)self;
  uint64_t dt = dt_clock_ns() - p->node_t0;
  dt_prof_node* n = node_slot(p, id, name);
  if (n == NULL) {
    p->dropped_nodes++;
    return;
  }
  p->node_hint++; /* the next step, next */
  n->calls++;
  n->total_ns += dt;
  if (dt < n->min_ns) n->min_ns = dt;
  if (dt > n->max_ns) n->max_ns = dt;
}

static void call_end(pterun_event_tracer* self, uint32_t chain, uint32_t pc, pterun_status st,
                     const char* slow_path) {
  pterun_profiler* p = (pterun_profiler*)self;
  record(p, chain, pc, p->call_t0, dt_clock_ns(), st, slow_path);
}

/* ---- queries ------------------------------------------------------------------ */

const char* pterun_profiler_method_name(const pterun_profiler* p) {
  return p != NULL && p->method_name != NULL ? p->method_name : "";
}
uint64_t pterun_profiler_execute_count(const pterun_profiler* p) {
  return p != NULL ? p->executes : 0;
}
size_t pterun_profiler_delegate_event_count(const pterun_profiler* p) {
  return p != NULL ? p->node_count : 0;
}

pterun_status pterun_profiler_delegate_event(const pterun_profiler* p, size_t i,
                                             pterun_profile_delegate_event* out) {
  if (p == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= p->node_count) return PTERUN_STATUS_NOT_FOUND;
  const dt_prof_node* n = &p->nodes[i];
  const dt_prof_entry* e = &p->entries[n->entry];
  out->chain = e->chain;
  out->instruction = e->instr;
  out->backend = e->op_name;
  out->id = n->id;
  out->name = n->name;
  out->calls = n->calls;
  out->total_ns = n->total_ns;
  out->min_ns = n->calls ? n->min_ns : 0;
  out->max_ns = n->max_ns;
  return PTERUN_STATUS_OK;
}

size_t pterun_profiler_instruction_count(const pterun_profiler* p) {
  return p != NULL ? p->entry_count : 0;
}

pterun_status pterun_profiler_instruction(const pterun_profiler* p, size_t i,
                                          pterun_profile_instruction* out) {
  if (p == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (i >= p->entry_count) return PTERUN_STATUS_NOT_FOUND;
  const dt_prof_entry* e = &p->entries[i];
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
  const dt_prof_event* ev = &p->events[k];
  out->run = ev->run;
  out->instruction = ev->entry;
  out->start_ns = ev->start_ns;
  out->end_ns = ev->end_ns;
  if (p->outs != NULL && p->outs[k].offset != UINT64_MAX) {
    const dt_prof_out* o = &p->outs[k];
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
    const dt_prof_event* ev = &p->events[k];
    const dt_prof_entry* e = &p->entries[ev->entry];
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
