/* --profile / --trace / --etdump: the profiler attached to a run or bench,
 * the per-operator and per-instruction tables, and the files. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

typedef struct op_row {
  const char* name;
  int delegate;
  uint64_t calls, total_ns;
  const char* slow_path;
} op_row;

/* "aten::add.out", or "delegate XnnpackBackend", made printable. */
static void label(const char* op, int delegate, char* buf, size_t cap) {
  size_t n = 0;
  if (delegate && cap > 9) {
    memcpy(buf, "delegate ", 9);
    n = 9;
  }
  cli_esc(op, buf + n, cap - n);
}

static int by_total_desc(const void* a, const void* b) {
  uint64_t x = ((const op_row*)a)->total_ns, y = ((const op_row*)b)->total_ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

static int instr_by_total_desc(const void* a, const void* b) {
  uint64_t x = ((const pterun_profile_instruction*)a)->total_ns;
  uint64_t y = ((const pterun_profile_instruction*)b)->total_ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The delegate calls' own steps (XNNPACK nodes), by kind: an opaque
 * "delegate XnnpackBackend" row broken into what it ran. */
typedef struct node_row {
  const char* name;
  uint64_t calls, total_ns;
} node_row;

static int node_by_total_desc(const void* a, const void* b) {
  uint64_t x = ((const node_row*)a)->total_ns, y = ((const node_row*)b)->total_ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

static int print_delegate_events(FILE* f, const pterun_profiler* p, uint64_t execs,
                                 uint64_t delegate_ns, size_t top) {
  size_t n = pterun_profiler_delegate_event_count(p), k, j, nrows = 0;
  node_row* rows;
  pterun_profile_delegate_event* ev;
  uint64_t total = 0;
  char name[96], where[48];
  if (n == 0) return CLI_EXIT_OK;
  rows = (node_row*)calloc(n, sizeof *rows);
  ev = (pterun_profile_delegate_event*)calloc(n, sizeof *ev);
  if (rows == NULL || ev == NULL) {
    free(rows);
    free(ev);
    return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (k = 0; k < n; ++k) {
    const pterun_profile_delegate_event* e = &ev[k];
    if (pterun_profiler_delegate_event(p, k, &ev[k]) != PTERUN_STATUS_OK || ev[k].name == NULL)
      ev[k].name = "";
    for (j = 0; j < nrows && strcmp(rows[j].name, e->name) != 0; ++j) {
    }
    if (j == nrows) rows[nrows++].name = e->name;
    rows[j].calls += e->calls;
    rows[j].total_ns += e->total_ns;
    total += e->total_ns;
  }
  qsort(rows, nrows, sizeof *rows, node_by_total_desc);
  fprintf(f, "\ndelegate nodes: %zu, %.4f ms per execute (%.1f%% of the delegate calls)\n", n,
          (double)total / 1e6 / (double)execs,
          delegate_ns ? 100.0 * (double)total / (double)delegate_ns : 0.0);
  fprintf(f, "%-40s %8s %12s %12s %7s\n", "node", "calls", "ms/execute", "us/call", "share");
  for (j = 0; j < nrows; ++j) {
    cli_esc(rows[j].name, name, sizeof name);
    fprintf(f, "%-40s %8llu %12.4f %12.3f %6.1f%%\n", name,
            (unsigned long long)(rows[j].calls / execs),
            (double)rows[j].total_ns / 1e6 / (double)execs,
            rows[j].calls ? (double)rows[j].total_ns / 1e3 / (double)rows[j].calls : 0.0,
            total ? 100.0 * (double)rows[j].total_ns / (double)total : 0.0);
  }
  /* the most expensive single nodes (a partial selection: top is small) */
  if (top > n) top = n;
  for (k = 0; k < top; ++k) {
    size_t best = k;
    pterun_profile_delegate_event t;
    for (j = k + 1; j < n; ++j)
      if (ev[j].total_ns > ev[best].total_ns) best = j;
    t = ev[k];
    ev[k] = ev[best];
    ev[best] = t;
  }
  fprintf(f, "\ntop %zu delegate nodes:\n%-16s %-32s %12s %10s %10s %10s\n", top,
          "chain:instr#node", "node", "ms/execute", "min us", "mean us", "max us");
  for (k = 0; k < top; ++k) {
    snprintf(where, sizeof where, "%u:%u#%u", ev[k].chain, ev[k].instruction, ev[k].id);
    cli_esc(ev[k].name, name, sizeof name);
    fprintf(f, "%-16s %-32s %12.4f %10.3f %10.3f %10.3f\n", where, name,
            (double)ev[k].total_ns / 1e6 / (double)execs, (double)ev[k].min_ns / 1e3,
            ev[k].calls ? (double)ev[k].total_ns / 1e3 / (double)ev[k].calls : 0.0,
            (double)ev[k].max_ns / 1e3);
  }
  free(rows);
  free(ev);
  return CLI_EXIT_OK;
}

int cli_profile_print(FILE* f, const pterun_profiler* p, size_t top) {
  size_t n = pterun_profiler_instruction_count(p), k, j, nops = 0, nk = 0;
  uint64_t execs = pterun_profiler_execute_count(p), total = 0, dropped_ev = 0, dropped_out = 0;
  pterun_profile_instruction* ins = (pterun_profile_instruction*)calloc(n ? n : 1, sizeof *ins);
  op_row* ops = (op_row*)calloc(n ? n : 1, sizeof *ops);
  char name[96], slow[96];
  if (ins == NULL || ops == NULL) {
    free(ins);
    free(ops);
    return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  for (k = 0; k < n; ++k) {
    pterun_profile_instruction e;
    if (pterun_profiler_instruction(p, k, &e) != PTERUN_STATUS_OK || e.calls == 0) continue;
    ins[nk++] = e;
    total += e.total_ns;
    for (j = 0; j < nops && (ops[j].delegate != e.delegate || strcmp(ops[j].name, e.op_name) != 0);
         ++j) {
    }
    if (j == nops) {
      ops[nops].name = e.op_name;
      ops[nops].delegate = e.delegate;
      nops++;
    }
    ops[j].calls += e.calls;
    ops[j].total_ns += e.total_ns;
    if (e.slow_path != NULL) ops[j].slow_path = e.slow_path;
  }
  qsort(ops, nops, sizeof *ops, by_total_desc);
  qsort(ins, nk, sizeof *ins, instr_by_total_desc);
  if (execs == 0) execs = 1;
  fprintf(f, "\nprofile: %llu execute%s, %zu timed instructions, %.4f ms in kernels per execute\n",
          (unsigned long long)pterun_profiler_execute_count(p), execs == 1 ? "" : "s", nk,
          (double)total / 1e6 / (double)execs);
  fprintf(f, "%-40s %8s %12s %12s %7s  %s\n", "operator", "calls", "ms/execute", "us/call", "share",
          "slow path");
  for (j = 0; j < nops; ++j) {
    label(ops[j].name, ops[j].delegate, name, sizeof name);
    cli_esc(ops[j].slow_path ? ops[j].slow_path : "", slow, sizeof slow);
    fprintf(f, "%-40s %8llu %12.4f %12.3f %6.1f%%  %s\n", name,
            (unsigned long long)(ops[j].calls / execs),
            (double)ops[j].total_ns / 1e6 / (double)execs,
            (double)ops[j].total_ns / 1e3 / (double)ops[j].calls,
            total ? 100.0 * (double)ops[j].total_ns / (double)total : 0.0, slow);
  }
  const size_t top_nodes = top;
  if (top > nk) top = nk;
  fprintf(f, "\ntop %zu instructions:\n%-12s %-40s %12s %10s %10s %10s  %s\n", top, "chain:instr",
          "operator", "ms/execute", "min us", "mean us", "max us", "slow path");
  for (k = 0; k < top; ++k) {
    char where[32];
    snprintf(where, sizeof where, "%u:%u", ins[k].chain, ins[k].instruction);
    label(ins[k].op_name, ins[k].delegate, name, sizeof name);
    cli_esc(ins[k].slow_path ? ins[k].slow_path : "", slow, sizeof slow);
    fprintf(f, "%-12s %-40s %12.4f %10.3f %10.3f %10.3f  %s\n", where, name,
            (double)ins[k].total_ns / 1e6 / (double)execs, (double)ins[k].min_ns / 1e3,
            (double)ins[k].total_ns / 1e3 / (double)ins[k].calls, (double)ins[k].max_ns / 1e3,
            slow);
  }
  {
    uint64_t delegate_ns = 0;
    for (k = 0; k < nk; ++k)
      if (ins[k].delegate) delegate_ns += ins[k].total_ns;
    if (print_delegate_events(f, p, execs, delegate_ns, top_nodes) != CLI_EXIT_OK) {
      free(ins);
      free(ops);
      return CLI_EXIT_FAIL;
    }
  }
  pterun_profiler_dropped(p, &dropped_ev, &dropped_out);
  if (dropped_ev > 0)
    fprintf(f, "(%llu kernel calls beyond the kept executes' reserve were timed but not kept)\n",
            (unsigned long long)dropped_ev);
  free(ins);
  free(ops);
  return CLI_EXIT_OK;
}

int cli_profile_begin(const cli_profile_opts* o, uint64_t runs, pterun_profiler** out) {
  pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
  pterun_status st;
  *out = NULL;
  if (o->debug_buffer != NULL && o->etdump == NULL)
    return cli_usage_error(NULL, "--debug-buffer needs --etdump");
  if (!o->table && o->trace == NULL && o->etdump == NULL) return CLI_EXIT_OK;
  /* Kept executes (the trace and the ETDump); copies of every output are
   * big, so with --debug-buffer only the first few executes are kept. */
  uint64_t cap = o->debug_buffer != NULL ? 8 : 1000;
  po.max_runs = runs > cap ? (uint32_t)cap : (uint32_t)(runs ? runs : 1);
  po.record_outputs = o->debug_buffer != NULL;
  if ((st = pterun_profiler_create(&po, out)) != PTERUN_STATUS_OK)
    return cli_fail(NULL, st, "cannot create the profiler");
  return CLI_EXIT_OK;
}

int cli_profile_end(const cli_profile_opts* o, cli_session* s, const pterun_profiler* p) {
  pterun_status st;
  if (p == NULL) return CLI_EXIT_OK;
  if (o->table && cli_profile_print(o->out ? o->out : stdout, p, 20) != CLI_EXIT_OK)
    return CLI_EXIT_FAIL;
  if (o->trace != NULL) {
    if ((st = pterun_profiler_write_chrome_trace(p, o->trace)) != PTERUN_STATUS_OK)
      return cli_fail(NULL, st, "cannot write the trace %s", o->trace);
    if (!o->quiet) printf("trace: %s\n", o->trace);
  }
  if (o->etdump != NULL) {
    pterun_etdump_options eo = PTERUN_ETDUMP_OPTIONS_INIT;
    eo.debug_buffer_path = o->debug_buffer;
    if (s->bundle_case >= 0) {
      eo.has_bundled_input_index = 1;
      eo.bundled_input_index = s->bundle_case;
    }
    if ((st = pterun_etdump_write(p, o->etdump, &eo)) != PTERUN_STATUS_OK)
      return cli_fail(NULL, st, "cannot write the ETDump %s", o->etdump);
    if (!o->quiet)
      printf("etdump: %s (%zu execute%s)%s%s\n", o->etdump, pterun_profiler_run_count(p),
             pterun_profiler_run_count(p) == 1 ? "" : "s",
             o->debug_buffer ? ", debug buffer: " : "", o->debug_buffer ? o->debug_buffer : "");
  }
  return CLI_EXIT_OK;
}
