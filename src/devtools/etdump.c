/* ETDump writer: the profiler's kept executes in ExecuTorch's ETDump schema
 * (devtools/etdump/etdump_schema_flatcc.fbs), built with the bounded
 * FlatBuffers builder. Field numbers below are the schema's field order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/etdump.h"
#include "src/devtools/fb_build.h"
#include "src/devtools/dt_util.h"

enum { ED_VERSION = 0 };  /* ETDump.version as ExecuTorch writes it */
#define ED_DEBUG_ALIGN 64 /* debug buffer blobs, as ExecuTorch's data sinks */
#define ED_DEFAULT_MAX ((size_t)1 << 30)

/* Table fields (index in the schema's table). */
enum { ETDUMP_VERSION_F = 0, ETDUMP_RUN_DATA = 1 };
enum { RUN_NAME = 0, RUN_BUNDLED_INPUT = 1, RUN_ALLOCATORS = 2, RUN_EVENTS = 3 };
enum { EVENT_PROFILE = 0, EVENT_ALLOCATION = 1, EVENT_DEBUG = 2 };
enum { PE_NAME = 0, PE_CHAIN = 1, PE_INSTR = 2, PE_DELEGATE_INT = 3, PE_START = 6, PE_END = 7 };
enum { DE_CHAIN = 0, DE_INSTR = 1, DE_ENTRY = 2, DE_DELEGATE_INT = 3 };
enum { VAL_TYPE = 0, VAL_TENSOR = 1 };
enum { TS_SCALAR_TYPE = 0, TS_SIZES = 1, TS_STRIDES = 2, TS_OFFSET = 3 };
enum { VALUE_TYPE_TENSOR = 5 };

/* "aten::convolution.out" -> "native_call_convolution.out", the name
 * ExecuTorch's generated kernel wrappers give their profiling scope. */
static void event_name(const char* op, char* buf, size_t cap) {
  const char* p = op ? strstr(op, "::") : NULL;
  snprintf(buf, cap, "native_call_%s", p ? p + 2 : (op ? op : "unknown"));
}

static dt_fbb_ref profile_event(dt_fbb* b, dt_fbb_ref name, int32_t chain, int32_t instr,
                                uint64_t start, uint64_t end) {
  dt_fbb_table_start(b);
  dt_fbb_add_u64(b, PE_START, start);
  dt_fbb_add_u64(b, PE_END, end);
  dt_fbb_add_ref(b, PE_NAME, name);
  dt_fbb_add_u32(b, PE_CHAIN, (uint32_t)chain);
  dt_fbb_add_u32(b, PE_INSTR, (uint32_t)instr);
  dt_fbb_add_u32(b, PE_DELEGATE_INT, (uint32_t)-1);
  dt_fbb_ref pe = dt_fbb_table_end(b);
  dt_fbb_table_start(b);
  dt_fbb_add_ref(b, EVENT_PROFILE, pe);
  return dt_fbb_table_end(b);
}

static dt_fbb_ref debug_event(dt_fbb* b, const pterun_profile_event* ev, uint32_t chain,
                              uint32_t instr, uint64_t offset) {
  dt_fbb_ref sizes = dt_fbb_vec_i64(b, ev->output_sizes, ev->output_rank);
  dt_fbb_ref st = dt_fbb_vec_i64(b, ev->output_strides, ev->output_rank);
  dt_fbb_table_start(b);
  dt_fbb_add_u64(b, TS_OFFSET, offset);
  dt_fbb_add_ref(b, TS_SIZES, sizes);
  dt_fbb_add_ref(b, TS_STRIDES, st);
  dt_fbb_add_u8(b, TS_SCALAR_TYPE, (uint8_t)ev->output_dtype);
  dt_fbb_ref tensor = dt_fbb_table_end(b);
  dt_fbb_table_start(b);
  dt_fbb_add_ref(b, VAL_TENSOR, tensor);
  dt_fbb_add_u8(b, VAL_TYPE, VALUE_TYPE_TENSOR);
  dt_fbb_ref value = dt_fbb_table_end(b);
  dt_fbb_table_start(b);
  dt_fbb_add_u64(b, DE_CHAIN, chain);
  dt_fbb_add_ref(b, DE_ENTRY, value);
  dt_fbb_add_u32(b, DE_INSTR, instr);
  dt_fbb_add_u32(b, DE_DELEGATE_INT, (uint32_t)-1);
  dt_fbb_ref de = dt_fbb_table_end(b);
  dt_fbb_table_start(b);
  dt_fbb_add_ref(b, EVENT_DEBUG, de);
  return dt_fbb_table_end(b);
}

/* Appends one output's bytes at the next aligned offset of the debug file. */
static int write_blob(FILE* f, uint64_t* pos, const void* data, size_t n, uint64_t* offset) {
  static const uint8_t zeros[ED_DEBUG_ALIGN] = {0};
  size_t padn = (size_t)((ED_DEBUG_ALIGN - (*pos % ED_DEBUG_ALIGN)) % ED_DEBUG_ALIGN);
  if (padn > 0 && fwrite(zeros, 1, padn, f) != padn) return -1;
  *pos += padn;
  *offset = *pos;
  if (n > 0 && fwrite(data, 1, n, f) != n) return -1;
  *pos += n;
  return 0;
}

pterun_status pterun_etdump_write(const pterun_profiler* p, const char* path,
                                  const pterun_etdump_options* o) {
  if (p == NULL || path == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_etdump_options opt;
  PTERUN_TRY(pterun_options_read(o, &opt, sizeof opt, NULL, "pterun_etdump_options"));
  size_t runs = pterun_profiler_run_count(p), nev = pterun_profiler_event_count(p);
  if (runs == 0) return PTERUN_STATUS_INVALID_STATE;
  FILE* dbg = NULL;
  uint64_t dbg_pos = 0;
  if (opt.debug_buffer_path != NULL) {
    dbg = fopen(opt.debug_buffer_path, "wb");
    if (dbg == NULL) return PTERUN_STATUS_IO_ERROR;
  }
  pterun_status st = PTERUN_STATUS_OK;
  dt_fbb b;
  dt_fbb_init(&b, opt.max_bytes ? opt.max_bytes : ED_DEFAULT_MAX);
  // Per run at most 2 events per kernel call (profile + debug) + Method::execute.
  dt_fbb_ref* refs = pterun_alloc(NULL, (2 * nev + 1) * sizeof *refs, 16);
  dt_fbb_ref* run_refs = pterun_alloc(NULL, runs * sizeof *run_refs, 16);
  size_t ninstr = pterun_profiler_instruction_count(p);
  dt_fbb_ref* names = pterun_alloc(NULL, (ninstr + 1) * sizeof *names, 16);
  if (refs == NULL || run_refs == NULL || names == NULL) {
    st = PTERUN_STATUS_OUT_OF_MEMORY;
    goto out;
  }
  // One name string per instruction (shared by its events).
  for (size_t i = 0; i < ninstr; ++i) {
    pterun_profile_instruction e;
    char nm[256];
    if (pterun_profiler_instruction(p, i, &e) != PTERUN_STATUS_OK || e.op_name == NULL) continue;
    if (e.delegate) /* ExecuTorch's name for the instruction-level event */
      snprintf(nm, sizeof nm, "DELEGATE_CALL");
    else
      event_name(e.op_name, nm, sizeof nm);
    names[i] = dt_fbb_string(&b, nm);
  }
  dt_fbb_ref exec_name = dt_fbb_string(&b, "Method::execute");
  dt_fbb_ref run_name = dt_fbb_string(&b, "Execute");
  size_t k = 0;
  for (size_t r = 0; r < runs; ++r) {
    size_t n = 0;
    uint64_t rs = 0, re = 0;
    (void)pterun_profiler_run(p, r, &rs, &re);
    for (; k < nev; ++k) {
      pterun_profile_event ev;
      pterun_profile_instruction e;
      if (pterun_profiler_event(p, k, &ev) != PTERUN_STATUS_OK || ev.run != r) break;
      if (pterun_profiler_instruction(p, ev.instruction, &e) != PTERUN_STATUS_OK) continue;
      refs[n++] = profile_event(&b, names[ev.instruction], (int32_t)e.chain, (int32_t)e.instruction,
                                ev.start_ns, ev.end_ns);
      if (dbg != NULL && ev.has_output) {
        uint64_t off;
        if (write_blob(dbg, &dbg_pos, ev.output_data, ev.output_nbytes, &off) != 0) {
          st = PTERUN_STATUS_IO_ERROR;
          goto out;
        }
        refs[n++] = debug_event(&b, &ev, e.chain, e.instruction, off);
      }
    }
    // ExecuTorch's Method::execute event: chain -1, instruction 0.
    refs[n++] = profile_event(&b, exec_name, -1, 0, rs, re > rs ? re : rs);
    dt_fbb_ref events = dt_fbb_vec_ref(&b, refs, n);
    dt_fbb_table_start(&b);
    dt_fbb_add_ref(&b, RUN_NAME, run_name);
    dt_fbb_add_u32(&b, RUN_BUNDLED_INPUT,
                   (uint32_t)(opt.has_bundled_input_index ? opt.bundled_input_index : -1));
    dt_fbb_add_ref(&b, RUN_EVENTS, events);
    run_refs[r] = dt_fbb_table_end(&b);
  }
  dt_fbb_ref run_vec = dt_fbb_vec_ref(&b, run_refs, runs);
  dt_fbb_table_start(&b);
  dt_fbb_add_ref(&b, ETDUMP_RUN_DATA, run_vec);
  dt_fbb_add_u32(&b, ETDUMP_VERSION_F, ED_VERSION);
  dt_fbb_ref root = dt_fbb_table_end(&b);
  const uint8_t* bytes;
  size_t size;
  st = dt_fbb_finish(&b, root, "ED00", 1, &bytes, &size);
  if (st == PTERUN_STATUS_OK) {
    FILE* f = fopen(path, "wb");
    if (f == NULL || fwrite(bytes, 1, size, f) != size) st = PTERUN_STATUS_IO_ERROR;
    if (f != NULL && fclose(f) != 0) st = PTERUN_STATUS_IO_ERROR;
  }
out:
  if (dbg != NULL && fclose(dbg) != 0 && st == PTERUN_STATUS_OK) st = PTERUN_STATUS_IO_ERROR;
  pterun_free(NULL, refs);
  pterun_free(NULL, run_refs);
  pterun_free(NULL, names);
  dt_fbb_free(&b);
  return st;
}
