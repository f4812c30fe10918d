/* Hostile programs: every damaged variant of the corpus programs gives a
 * status, never a crash (run under ASan/UBSan in CI). Targeted edits check
 * the exact status for each class of damage. Fields are located with the
 * same bounds-checked reader the runtime uses (compiled into this test). */
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "src/core/fb.h"
#include "src/core/schema.h"
#include "tests/harness/pt_test.h"

/* Hostile sizes ask for absurd planned buffers; under ASan a failed
 * allocation must come back as NULL (as malloc does) rather than abort. */
const char* __asan_default_options(void);
__attribute__((visibility("default"))) const char* __asan_default_options(void) {
  return "allocator_may_return_null=1";
}

static pterun_registry* g_reg;
static pterun_logger g_silent;

typedef struct blob {
  unsigned char* data;
  size_t size;
} blob;

static blob read_corpus(const char* name) {
  char path[512];
  blob b = {NULL, 0};
  snprintf(path, sizeof path, "%s/%s", PTERUN_CORPUS_DIR, name);
  FILE* f = fopen(path, "rb");
  if (f == NULL) return b;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b.data = aligned_alloc(64, ((size_t)n + 63) & ~(size_t)63);
  b.size = fread(b.data, 1, (size_t)n, f);
  fclose(f);
  return b;
}

/* Loads, loads the method, binds zero inputs and executes; returns the first
 * failing status (or OK). */
static pterun_status try_all(const unsigned char* data, size_t size, uint64_t budget) {
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  lo.copy = 1;
  pterun_program* p = NULL;
  pterun_status st = pterun_program_load_buffer(data, size, &lo, &p);
  if (st != PTERUN_STATUS_OK) return st;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  mo.registry = g_reg;
  mo.logger = g_silent;
  mo.instruction_budget = budget;
  pterun_method* m = NULL;
  st = pterun_method_load(p, "forward", &mo, &m);
  if (st == PTERUN_STATUS_OK) {
    static float zeros[4096];
    for (size_t i = 0; i < pterun_method_input_count(m) && st == PTERUN_STATUS_OK; ++i) {
      pterun_io_info info;
      st = pterun_program_method_input(p, 0, i, &info);
      if (st != PTERUN_STATUS_OK) break;
      if (info.tag != PTERUN_VALUE_TENSOR || info.nbytes > sizeof zeros) continue;
      pterun_tensor_view v = {info.dtype,     info.rank, info.sizes,
                              info.dim_order, zeros,     (size_t)info.nbytes};
      st = pterun_method_set_input(m, i, &v);
    }
    if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
  }
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return st;
}

static const char* kCorpus[] = {"add_no_extended_header.pte", "add_constant_segment.pte",
                                "mul_add_constant_buffer.pte"};

static int malformed_truncation_every_length(void) {
  for (size_t f = 0; f < 3; ++f) {
    blob b = read_corpus(kCorpus[f]);
    PT_CHECK(b.data != NULL);
    PT_CHECK_STATUS(try_all(b.data, b.size, 0), PTERUN_STATUS_OK);
    for (size_t n = 0; n < b.size; ++n) {
      pterun_status st = try_all(b.data, n, 0);
      // The flatbuffer always reaches to within 16 bytes of the end (padding
      // aside), so every shorter prefix must be refused at load.
      if (n + 16 < b.size)
        PT_CHECK(st == PTERUN_STATUS_INVALID_PROGRAM || st == PTERUN_STATUS_INCOMPATIBLE_VERSION);
    }
    free(b.data);
  }
  return 0;
}

static int malformed_bit_flips_never_crash(void) {
  static const unsigned char masks[] = {0x01, 0x80, 0xff, 0x10};
  size_t refused = 0, ran = 0;
  for (size_t f = 0; f < 3; ++f) {
    blob b = read_corpus(kCorpus[f]);
    PT_CHECK(b.data != NULL);
    for (size_t i = 0; i < b.size; ++i)
      for (size_t k = 0; k < sizeof masks; ++k) {
        b.data[i] ^= masks[k];
        pterun_status st = try_all(b.data, b.size, 10000);
        b.data[i] ^= masks[k];
        if (st == PTERUN_STATUS_OK)
          ++ran;
        else
          ++refused;
      }
    free(b.data);
  }
  printf("  bit flips: %zu refused with a status, %zu ran\n", refused, ran);
  PT_CHECK(refused > 0);
  return 0;
}

/* ---- targeted edits ---- */

typedef struct where {
  pt_fb_buf fb;
  pt_fb_table root, plan;
  pt_fb_vec values, chains, instrs;
} where;

static int locate(blob* b, where* w) {
  w->fb.base = b->data;
  w->fb.size = b->size;
  PT_CHECK(pt_fb_root(&w->fb, &w->root));
  pt_fb_vec plans;
  PT_CHECK(pt_fb_get_vector(&w->root, PT_PROGRAM_EXECUTION_PLAN, 4, &plans) == 1);
  PT_CHECK(pt_fb_vec_table(&plans, 0, &w->plan));
  PT_CHECK(pt_fb_get_vector(&w->plan, PT_PLAN_VALUES, 4, &w->values) == 1);
  PT_CHECK(pt_fb_get_vector(&w->plan, PT_PLAN_CHAINS, 4, &w->chains) == 1);
  pt_fb_table ch;
  PT_CHECK(pt_fb_vec_table(&w->chains, 0, &ch));
  PT_CHECK(pt_fb_get_vector(&ch, PT_CHAIN_INSTRUCTIONS, 4, &w->instrs) == 1);
  return 0;
}

static unsigned char* field(const pt_fb_table* t, unsigned slot, size_t size) {
  size_t pos;
  return pt_fb_field(t, slot, size, &pos) == 1 ? (unsigned char*)t->b->base + pos : NULL;
}

static void put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static int value_payload(where* w, uint32_t i, pt_fb_table* out, unsigned char** tag) {
  pt_fb_table ev;
  PT_CHECK(pt_fb_vec_table(&w->values, i, &ev));
  *tag = field(&ev, PT_EVALUE_TYPE, 1);
  PT_CHECK(pt_fb_get_table(&ev, PT_EVALUE_VAL, out) == 1);
  return 0;
}

/* Applies one edit to a fresh copy of a corpus file and checks the status. */
typedef int (*edit_fn)(blob* b, where* w);

static int expect(const char* file, edit_fn edit, pterun_status want, uint64_t budget) {
  blob b = read_corpus(file);
  where w;
  PT_CHECK(b.data != NULL);
  PT_CHECK(locate(&b, &w) == 0);
  PT_CHECK(edit(&b, &w) == 0);
  PT_CHECK_STATUS(try_all(b.data, b.size, budget), want);
  free(b.data);
  return 0;
}

static int e_identifier_version(blob* b, where* w) {
  (void)w;
  b->data[7] = '3';
  return 0;
}
static int e_identifier_other(blob* b, where* w) {
  (void)w;
  memcpy(b->data + 4, "XXXX", 4);
  return 0;
}
static int e_root_offset(blob* b, where* w) {
  (void)w;
  put32(b->data, 0x7ffffff0u);
  return 0;
}
static int e_eh_length(blob* b, where* w) {
  (void)w;
  put32(b->data + 12, 16);
  return 0;
}
static int e_segment_base(blob* b, where* w) {
  (void)w;
  put32(b->data + 24, 0xfffff000u);
  return 0;
}
static int e_arg_index(blob* b, where* w) {
  pt_fb_table in, a;
  pt_fb_vec args;
  PT_CHECK(pt_fb_vec_table(&w->instrs, 0, &in) && pt_fb_get_table(&in, PT_INSTR_ARGS, &a) == 1);
  PT_CHECK(pt_fb_get_vector(&a, PT_CALL_ARGS, 4, &args) == 1);
  put32((unsigned char*)pt_fb_vec_ptr(&args, 1), 100000);
  (void)b;
  return 0;
}
static int e_instr_tag(blob* b, where* w) {
  pt_fb_table in;
  PT_CHECK(pt_fb_vec_table(&w->instrs, 0, &in));
  *field(&in, PT_INSTR_TYPE, 1) = 9;
  (void)b;
  return 0;
}
static int e_value_tag(blob* b, where* w) {
  pt_fb_table pl;
  unsigned char* tag;
  PT_CHECK(value_payload(w, 0, &pl, &tag) == 0);
  *tag = 77;
  (void)b;
  return 0;
}
/* v0 of add_no_extended_header is planned Float[1] at (1, 0). */
static int e_planned_offset(blob* b, where* w) {
  pt_fb_table pl, alloc;
  unsigned char* tag;
  PT_CHECK(value_payload(w, 1, &pl, &tag) == 0);
  PT_CHECK(pt_fb_get_table(&pl, PT_TENSOR_ALLOCATION_INFO, &alloc) == 1);
  unsigned char* low = field(&alloc, PT_ALLOC_OFFSET_LOW, 4);
  PT_CHECK(low != NULL);
  put32(low, 0xfffffff0u);
  (void)b;
  return 0;
}
static int e_planned_memory_id(blob* b, where* w) {
  pt_fb_table pl, alloc;
  unsigned char* tag;
  PT_CHECK(value_payload(w, 0, &pl, &tag) == 0);
  PT_CHECK(pt_fb_get_table(&pl, PT_TENSOR_ALLOCATION_INFO, &alloc) == 1);
  put32(field(&alloc, PT_ALLOC_MEMORY_ID, 4), 7);
  (void)b;
  return 0;
}
static int set_size(where* w, uint32_t value, uint32_t size) {
  pt_fb_table pl;
  pt_fb_vec sizes;
  unsigned char* tag;
  PT_CHECK(value_payload(w, value, &pl, &tag) == 0);
  PT_CHECK(pt_fb_get_vector(&pl, PT_TENSOR_SIZES, 4, &sizes) == 1 && sizes.len > 0);
  for (uint32_t i = 0; i < sizes.len; ++i) put32((unsigned char*)pt_fb_vec_ptr(&sizes, i), size);
  return 0;
}
static int e_negative_size(blob* b, where* w) {
  (void)b;
  return set_size(w, 0, 0xffffffffu);
}
static int e_huge_size(blob* b, where* w) {
  (void)b;
  return set_size(w, 0, 0x7fffffffu);
}
/* mul_add: v2 is [2,2] planned; make it larger than its arena. */
static int e_planned_overflow(blob* b, where* w) {
  (void)b;
  return set_size(w, 2, 3);
}
static int e_dim_order(blob* b, where* w) {
  pt_fb_table pl;
  pt_fb_vec order;
  unsigned char* tag;
  PT_CHECK(value_payload(w, 0, &pl, &tag) == 0);
  PT_CHECK(pt_fb_get_vector(&pl, PT_TENSOR_DIM_ORDER, 1, &order) == 1 && order.len == 2);
  ((unsigned char*)pt_fb_vec_ptr(&order, 1))[0] = 0;
  (void)b;
  return 0;
}
/* mul_add: v0 is a constant (dbi 1); point it past the constant table. */
static int e_constant_index(blob* b, where* w) {
  pt_fb_table pl;
  unsigned char* tag;
  PT_CHECK(value_payload(w, 0, &pl, &tag) == 0);
  unsigned char* dbi = field(&pl, PT_TENSOR_DATA_BUFFER_IDX, 4);
  PT_CHECK(dbi != NULL);
  put32(dbi, 99);
  (void)b;
  return 0;
}
/* mul_add instruction 1 becomes JumpFalse(cond = v5, dest = raw args offset),
 * a destination far outside the chain. */
static int e_jump_out_of_range(blob* b, where* w) {
  pt_fb_table in;
  PT_CHECK(pt_fb_vec_table(&w->instrs, 1, &in));
  *field(&in, PT_INSTR_TYPE, 1) = PT_INSTR_JUMP_FALSE_CALL;
  pt_fb_table a;
  PT_CHECK(pt_fb_get_table(&in, PT_INSTR_ARGS, &a) == 1);
  put32(field(&a, PT_JUMP_DEST, 4), 1000);
  (void)b;
  return 0;
}
/* ... and a jump to itself on a constant false: an endless loop that the
 * instruction budget must stop. v5 (Int 1) becomes Bool false. */
static int e_jump_loop(blob* b, where* w) {
  pt_fb_table in, a, pl;
  unsigned char* tag;
  PT_CHECK(pt_fb_vec_table(&w->instrs, 1, &in));
  *field(&in, PT_INSTR_TYPE, 1) = PT_INSTR_JUMP_FALSE_CALL;
  PT_CHECK(pt_fb_get_table(&in, PT_INSTR_ARGS, &a) == 1);
  put32(field(&a, PT_JUMP_COND, 4), 5);
  put32(field(&a, PT_JUMP_DEST, 4), 1);
  PT_CHECK(value_payload(w, 5, &pl, &tag) == 0);
  *tag = PT_KT_BOOL;
  memset(field(&pl, PT_PAYLOAD_VAL, 8), 0, 8);
  (void)b;
  return 0;
}
/* An int-list style mistake: a kernel gets a value of the wrong kind (alpha
 * replaced by a tensor). */
static int e_wrong_kind_arg(blob* b, where* w) {
  pt_fb_table in, a;
  pt_fb_vec args;
  PT_CHECK(pt_fb_vec_table(&w->instrs, 0, &in) && pt_fb_get_table(&in, PT_INSTR_ARGS, &a) == 1);
  PT_CHECK(pt_fb_get_vector(&a, PT_CALL_ARGS, 4, &args) == 1 && args.len == 5);
  put32((unsigned char*)pt_fb_vec_ptr(&args, 2), 0); /* alpha := v0, a tensor */
  (void)b;
  return 0;
}

/* mul_add instruction 0 is mul.out [v0, v2, v3, v3]: make it write into the
 * constant v0 (with a borrowed buffer that would modify the caller's bytes). */
static int e_writes_constant(blob* b, where* w) {
  pt_fb_table in, a;
  pt_fb_vec args;
  PT_CHECK(pt_fb_vec_table(&w->instrs, 0, &in) && pt_fb_get_table(&in, PT_INSTR_ARGS, &a) == 1);
  PT_CHECK(pt_fb_get_vector(&a, PT_CALL_ARGS, 4, &args) == 1 && args.len == 4);
  put32((unsigned char*)pt_fb_vec_ptr(&args, 3), 0);
  (void)b;
  return 0;
}

static int malformed_targeted(void) {
  const char* A = "add_no_extended_header.pte";
  const char* S = "add_constant_segment.pte";
  const char* M = "mul_add_constant_buffer.pte";
  PT_CHECK(expect(A, e_identifier_version, PTERUN_STATUS_INCOMPATIBLE_VERSION, 0) == 0);
  PT_CHECK(expect(A, e_identifier_other, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(A, e_root_offset, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(S, e_eh_length, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(S, e_segment_base, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(A, e_arg_index, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(A, e_instr_tag, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(A, e_value_tag, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(A, e_planned_offset, PTERUN_STATUS_MEMORY_PLAN, 0) == 0);
  PT_CHECK(expect(A, e_planned_memory_id, PTERUN_STATUS_MEMORY_PLAN, 0) == 0);
  PT_CHECK(expect(A, e_negative_size, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(A, e_huge_size, PTERUN_STATUS_MEMORY_PLAN, 0) == 0);
  PT_CHECK(expect(M, e_planned_overflow, PTERUN_STATUS_MEMORY_PLAN, 0) == 0);
  PT_CHECK(expect(M, e_dim_order, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(M, e_constant_index, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(M, e_jump_out_of_range, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  PT_CHECK(expect(M, e_jump_loop, PTERUN_STATUS_INSTRUCTION_BUDGET, 1000) == 0);
  PT_CHECK(expect(A, e_wrong_kind_arg, PTERUN_STATUS_INVALID_TYPE, 0) == 0);
  PT_CHECK(expect(M, e_writes_constant, PTERUN_STATUS_INVALID_PROGRAM, 0) == 0);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  PT_RUN(malformed_targeted);
  PT_RUN(malformed_truncation_every_length);
  PT_RUN(malformed_bit_flips_never_crash);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
