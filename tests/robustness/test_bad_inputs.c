/* Bad inputs through every C API: NULLs, out-of-range indices, wrong count,
 * dtype, rank, shape and dim order, short and NULL buffers, misaligned and
 * non-contiguous data, caller arenas that are missing, misaligned or too
 * small, wrong calling order. Every call returns its documented status. */
#include "src/core/fb.h"
#include "src/core/schema.h"
#include "tests/robustness/rb_common.h"

static size_t g_cases;
#define CASE(expr, want)                                                                           \
  do {                                                                                             \
    ++g_cases;                                                                                     \
    PT_CHECK_STATUS((expr), (want));                                                               \
  } while (0)

static pterun_program* load(const char* dir) {
  char rel[128];
  snprintf(rel, sizeof rel, "%s/model.pte", dir);
  pterun_load_options lo = rb_load_opts();
  pterun_program* p = NULL;
  if (pterun_program_load_file(rb_fixture(rel), PTERUN_FILE_MMAP, &lo, &p) != PTERUN_STATUS_OK)
    return NULL;
  return p;
}

static int bad_null_and_range_arguments(void) {
  pterun_load_options lo = rb_load_opts();
  pterun_program* p = NULL;
  pterun_data* d = NULL;
  pterun_method* m = NULL;
  static _Alignas(64) unsigned char junk[64];
  CASE(pterun_program_load_buffer(junk, sizeof junk, &lo, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_load_buffer(NULL, 10, &lo, &p), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_load_buffer(junk + 1, 8, &lo, &p), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_load_buffer(junk, 0, &lo, &p), PTERUN_STATUS_INVALID_PROGRAM);
  CASE(pterun_program_load_file("x", PTERUN_FILE_READ, &lo, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_data_load_buffer(junk, sizeof junk, &lo, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_data_load_buffer(NULL, 10, &lo, &d), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_data_load_buffer(junk, 0, &lo, &d), PTERUN_STATUS_INVALID_DATA);
  CASE(pterun_data_load_buffer(junk, sizeof junk, &lo, &d), PTERUN_STATUS_INVALID_DATA);
  CASE(pterun_data_load_file("x", PTERUN_FILE_READ, &lo, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(p == NULL && d == NULL);

  p = load("two_methods");
  PT_CHECK(p != NULL);
  pterun_method_options o = rb_opts();
  CASE(pterun_method_load(NULL, "forward", &o, &m), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_load(p, NULL, &o, &m), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_load(p, "forward", &o, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_load(p, "nope", &o, &m), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_method_load(p, "", &o, &m), PTERUN_STATUS_NOT_FOUND);
  PT_CHECK(m == NULL);
  size_t idx;
  CASE(pterun_program_find_method(p, "nope", &idx), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_find_method(NULL, "forward", &idx), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_find_method(p, NULL, &idx), PTERUN_STATUS_INVALID_ARGUMENT);
  pterun_method_info mi;
  pterun_io_info io;
  uint64_t sz;
  const char *s1, *s2;
  CASE(pterun_program_method_info(p, 2, &mi), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_method_info(NULL, 0, &mi), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_method_info(p, 0, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_method_input(p, 0, 99, &io), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_method_input(p, 7, 0, &io), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_method_input(p, 0, 0, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_method_output(p, 0, 99, &io), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_method_output(NULL, 0, 0, &io), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_program_method_operator(p, 0, 999, &s1, &s2), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_method_delegate(p, 0, 0, &s1), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_planned_buffer_size(p, 0, 99, &sz), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_planned_buffer_size(p, 9, 0, &sz), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_named_data(p, 0, &s1, &sz), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_program_named_data(NULL, 0, &s1, &sz), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(pterun_program_method_name(p, 2) == NULL && pterun_program_method_name(NULL, 0) == NULL);
  PT_CHECK(pterun_program_method_count(NULL) == 0);
  pterun_program_info info;
  pterun_program_get_info(NULL, &info);
  PT_CHECK(info.method_count == 0);
  pterun_program_get_info(p, NULL);

  // The method API on NULL and out-of-range indices.
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  pterun_tensor_view v = {PTERUN_DTYPE_F32, 0, NULL, NULL, junk, sizeof junk};
  pterun_value val;
  memset(&val, 0, sizeof val);
  const pterun_value* out;
  CASE(pterun_method_set_input(NULL, 0, &v), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_input(m, 0, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_input(m, 5, &v), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_input_value(NULL, 0, &val), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_input_value(m, 0, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_input_value(m, 5, &val), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_input_value(m, 0, &val),
       PTERUN_STATUS_INPUT_MISMATCH); /* None for a tensor */
  CASE(pterun_method_set_output_buffer(NULL, 0, junk, sizeof junk), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_output_buffer(m, 9, junk, sizeof junk), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_set_output_buffer(m, 0, junk, sizeof junk),
       PTERUN_STATUS_INVALID_STATE); /* planned */
  CASE(pterun_method_output(m, 9, &out), PTERUN_STATUS_NOT_FOUND);
  CASE(pterun_method_output(NULL, 0, &out), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_output(m, 0, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_execute(NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE); /* input not set */
  PT_CHECK(pterun_method_input_count(NULL) == 0 && pterun_method_output_count(NULL) == 0);
  size_t rt = 1, pl = 1;
  pterun_method_memory(NULL, &rt, &pl);
  PT_CHECK(rt == 0 && pl == 0);
  pterun_method_set_instruction_budget(NULL, 5);
  pterun_method_destroy(m);

  // Registry and data queries.
  pterun_registry* r = NULL;
  CASE(pterun_registry_create(NULL, &g_silent, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  CASE(pterun_registry_create(NULL, &g_silent, &r), PTERUN_STATUS_OK);
  CASE(pterun_registry_add(r, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  pterun_kernel_library bad = *pterun_kernels_portable();
  bad.abi_version = 999;
  CASE(pterun_registry_add(r, &bad), PTERUN_STATUS_ABI_MISMATCH);
  CASE(pterun_registry_get(r, 100000, &s1, &s2), PTERUN_STATUS_NOT_FOUND);
  PT_CHECK(pterun_registry_provider(r, "aten::add.out") == NULL);
  PT_CHECK(pterun_data_count(NULL) == 0 && pterun_data_key(NULL, 0) == NULL);

  // Every destroy accepts NULL.
  pterun_program_destroy(NULL);
  pterun_method_destroy(NULL);
  pterun_data_destroy(NULL);
  pterun_registry_destroy(NULL);
  pterun_registry_destroy(r);
  pterun_program_destroy(p);
  return 0;
}

static int bad_tensor_inputs(void) {
  pterun_program* p = load("elementwise");
  PT_CHECK(p != NULL);
  pterun_method_options o = rb_opts();
  pterun_method* m = NULL;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  static _Alignas(64) float x[2 * 3 * 4 + 1];
  for (int k = 0; k < 25; ++k) x[k] = (float)k;
  int64_t good[3] = {2, 3, 4}, wrong[3] = {2, 4, 3}, neg[3] = {2, -3, 4}, big[3] = {2, 3, 5};
  uint8_t ord_ok[3] = {0, 1, 2}, ord_perm[3] = {0, 2, 1}, ord_dup[3] = {0, 0, 1},
          ord_range[3] = {0, 1, 7};
  pterun_tensor_view v = {PTERUN_DTYPE_F32, 3, good, NULL, x, 96};
  pterun_tensor_view b = v;
  b.dtype = PTERUN_DTYPE_F64;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b = v;
  b.dtype = 200;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b = v;
  b.rank = 2;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b = v;
  b.rank = 200;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b = v;
  b.sizes = wrong;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b.sizes = neg;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b.sizes = big;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b.sizes = NULL;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INVALID_ARGUMENT);
  b = v;
  b.nbytes = 95;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b = v;
  b.data = NULL;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b = v;
  b.dim_order = ord_perm;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b.dim_order = ord_dup;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  b.dim_order = ord_range;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  // Only input 1 set: execute refuses.
  CASE(pterun_method_set_input(m, 1, &v), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
  // Misaligned caller memory for a planned input is copied: fine, same result.
  b = v;
  b.dim_order = ord_ok;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_OK);
  const pterun_value* out;
  CASE(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  float want[24];
  memcpy(want, out->u.tensor->data, sizeof want);
  static _Alignas(64) unsigned char raw[100];
  memcpy(raw + 1, x, 96);
  b = v;
  b.data = raw + 1;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_OK);
  CASE(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(memcmp(want, out->u.tensor->data, sizeof want) == 0);
  // A failed set_input unbinds the input (the caller may free the memory of
  // the earlier binding): execute refuses until it is set again.
  b.sizes = wrong;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_INPUT_MISMATCH);
  CASE(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
  b.sizes = good;
  CASE(pterun_method_set_input(m, 0, &b), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_OK);
  pterun_method_destroy(m);
  pterun_program_destroy(p);

  // Layout: a channels-last input given as contiguous, or with another order.
  p = load("cnn_channels_last");
  PT_CHECK(p != NULL);
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  static float img[3 * 16 * 16];
  int64_t isz[4] = {1, 3, 16, 16};
  uint8_t cl[4] = {0, 2, 3, 1}, cf[4] = {0, 1, 2, 3}, odd[4] = {0, 3, 1, 2};
  pterun_tensor_view iv = {PTERUN_DTYPE_F32, 4, isz, NULL, img, sizeof img};
  CASE(pterun_method_set_input(m, 0, &iv), PTERUN_STATUS_INPUT_MISMATCH);
  iv.dim_order = cf;
  CASE(pterun_method_set_input(m, 0, &iv), PTERUN_STATUS_INPUT_MISMATCH);
  iv.dim_order = odd;
  CASE(pterun_method_set_input(m, 0, &iv), PTERUN_STATUS_INPUT_MISMATCH);
  iv.dim_order = cl;
  CASE(pterun_method_set_input(m, 0, &iv), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_OK);
  pterun_method_destroy(m);
  pterun_program_destroy(p);

  // Bounded dynamic shapes: within the bound fine, past it refused.
  p = load("dynamic_dim");
  PT_CHECK(p != NULL);
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  static float dx[17 * 8];
  int64_t small[2] = {3, 8}, past[2] = {17, 8}, wide[2] = {16, 9}, zero[2] = {0, 8};
  pterun_tensor_view dv = {PTERUN_DTYPE_F32, 2, small, NULL, dx, sizeof dx};
  CASE(pterun_method_set_input(m, 0, &dv), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_OK);
  CASE(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(out->u.tensor->sizes[0] == 3);
  dv.sizes = past;
  CASE(pterun_method_set_input(m, 0, &dv), PTERUN_STATUS_INPUT_MISMATCH);
  dv.sizes = wide;
  CASE(pterun_method_set_input(m, 0, &dv), PTERUN_STATUS_INPUT_MISMATCH);
  dv.sizes = zero;
  CASE(pterun_method_set_input(m, 0, &dv), PTERUN_STATUS_OK);
  PT_CHECK(pterun_method_execute(m) == PTERUN_STATUS_OK ||
           1); /* an empty batch: any status, no crash */
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return 0;
}

/* Caller planned arenas: wrong count, NULL, misaligned, too small. */
static int bad_caller_arenas(void) {
  pterun_program* p = load("mlp");
  PT_CHECK(p != NULL);
  uint64_t need;
  CASE(pterun_program_planned_buffer_size(p, 0, 0, &need), PTERUN_STATUS_OK);
  PT_CHECK(need > 16);
  unsigned char* mem = aligned_alloc(64, ((size_t)need + 128) & ~(size_t)63);
  PT_CHECK(mem != NULL);
  void* bufs[2] = {mem, mem};
  size_t sizes[2] = {(size_t)need, (size_t)need};
  pterun_method_options o = rb_opts();
  pterun_method* m = NULL;
  o.planned_buffers = bufs;
  o.planned_buffer_count = 2;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  o.planned_buffer_count = 0;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  o.planned_buffer_count = 1;
  bufs[0] = NULL;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  bufs[0] = mem + 8;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  bufs[0] = mem;
  o.planned_buffer_sizes = sizes;
  sizes[0] = (size_t)need - 1;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  sizes[0] = 0;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  PT_CHECK(m == NULL);
  sizes[0] = (size_t)need;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  CASE(rb_bind_inputs(m, "mlp", "forward"), PTERUN_STATUS_OK);
  CASE(pterun_method_execute(m), PTERUN_STATUS_OK);
  size_t rt, pl;
  pterun_method_memory(m, &rt, &pl);
  PT_CHECK(pl == 0); /* the caller's arena, none of pterun's */
  pterun_method_destroy(m);
  free(mem);
  pterun_program_destroy(p);
  return 0;
}

/* Edits of a corpus program located with the runtime's own reader. */
static unsigned char* corpus(const char* name, size_t* n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", PTERUN_CORPUS_DIR, name);
  return rb_read(path, n);
}

static int plan_of(unsigned char* b, size_t n, pt_fb_buf* fb, pt_fb_table* plan) {
  pt_fb_table root;
  pt_fb_vec plans;
  fb->base = b;
  fb->size = n;
  PT_CHECK(pt_fb_root(fb, &root));
  PT_CHECK(pt_fb_get_vector(&root, PT_PROGRAM_EXECUTION_PLAN, 4, &plans) == 1);
  PT_CHECK(pt_fb_vec_table(&plans, 0, plan));
  return 0;
}

static void put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

/* Regression (fuzz): a program whose input is a constant tensor would have
 * set_input write into the program image. Refused at method load. */
static int bad_constant_input(void) {
  size_t n;
  unsigned char* b = corpus("mul_add_constant_buffer.pte", &n);
  PT_CHECK(b != NULL);
  pt_fb_buf fb;
  pt_fb_table plan;
  pt_fb_vec inputs;
  PT_CHECK(plan_of(b, n, &fb, &plan) == 0);
  PT_CHECK(pt_fb_get_vector(&plan, PT_PLAN_INPUTS, 4, &inputs) == 1 && inputs.len >= 1);
  put32((unsigned char*)pt_fb_vec_ptr(&inputs, 0), 0); /* v0 is a constant */
  pterun_load_options lo = rb_load_opts();
  pterun_program* p = NULL;
  CASE(pterun_program_load_buffer(b, n, &lo, &p), PTERUN_STATUS_OK);
  pterun_method_options o = rb_opts();
  pterun_method* m = NULL;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_INVALID_PROGRAM);
  pterun_program_destroy(p);
  free(b);
  return 0;
}

/* An input without planned memory (allocation_info removed from its
 * tensor's vtable) points at the caller's buffer: that must be aligned. */
static int bad_unplanned_input_alignment(void) {
  size_t n;
  unsigned char* b = corpus("add_no_extended_header.pte", &n);
  PT_CHECK(b != NULL);
  pt_fb_buf fb;
  pt_fb_table plan, ev, t;
  pt_fb_vec values, inputs;
  PT_CHECK(plan_of(b, n, &fb, &plan) == 0);
  PT_CHECK(pt_fb_get_vector(&plan, PT_PLAN_VALUES, 4, &values) == 1);
  PT_CHECK(pt_fb_get_vector(&plan, PT_PLAN_INPUTS, 4, &inputs) == 1);
  PT_CHECK(pt_fb_vec_table(&values, (uint32_t)pt_fb_vec_i32(&inputs, 0), &ev));
  PT_CHECK(pt_fb_get_table(&ev, PT_EVALUE_VAL, &t) == 1);
  PT_CHECK(t.vtlen > PT_TENSOR_ALLOCATION_INFO + 1);
  b[t.vt + PT_TENSOR_ALLOCATION_INFO] = 0;
  b[t.vt + PT_TENSOR_ALLOCATION_INFO + 1] = 0;
  pterun_load_options lo = rb_load_opts();
  pterun_program* p = NULL;
  CASE(pterun_program_load_buffer(b, n, &lo, &p), PTERUN_STATUS_OK);
  pterun_io_info io;
  CASE(pterun_program_method_input(p, 0, 0, &io), PTERUN_STATUS_OK);
  PT_CHECK(!io.planned && io.dtype == PTERUN_DTYPE_F32);
  pterun_method_options o = rb_opts();
  pterun_method* m = NULL;
  CASE(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  static _Alignas(16) unsigned char mem[64];
  pterun_tensor_view v = {io.dtype, io.rank, io.sizes, NULL, mem + 1, (size_t)io.nbytes};
  CASE(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_INPUT_MISMATCH);
  v.data = mem;
  CASE(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_OK);
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  free(b);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  if (rb_init()) return 1;
  PT_RUN(bad_null_and_range_arguments);
  PT_RUN(bad_tensor_inputs);
  PT_RUN(bad_caller_arenas);
  PT_RUN(bad_constant_input);
  PT_RUN(bad_unplanned_input_alignment);
  printf("  %zu bad-input cases\n", g_cases);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
