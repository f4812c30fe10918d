/* Methods on real exported programs (tests/fixtures): buffer loads, dynamic
 * shapes and their bounds, input checks, external data, several methods,
 * mutable state, caller memory, logging. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/npy.h"
#include "pterun/optimize.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static pterun_registry* g_reg;
static pterun_registry* g_bare; /* g_reg's kernels, no optimiser */
static pterun_logger g_silent;

static char* fixture(const char* rel) {
  static char path[4][512];
  static int k;
  k = (k + 1) & 3;
  snprintf(path[k], sizeof path[k], "%s/%s", PTERUN_FIXTURES_DIR, rel);
  return path[k];
}

static pterun_method_options opts(void) {
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  o.logger = g_silent;
  return o;
}

static pterun_status bind_npy(pterun_method* m, size_t i, const cli_npy* a) {
  pterun_tensor_view v = {a->dtype, a->rank, a->shape, NULL, a->data, a->nbytes};
  return pterun_method_set_input(m, i, &v);
}

/* max |got - want| / (1 + |want|) over a float32 output */
static double rel_err(const pterun_tensor* t, const cli_npy* want) {
  if (t->dtype != PTERUN_DTYPE_F32 || (size_t)t->numel != want->numel) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < want->numel; ++k) {
    double g = ((const float*)t->data)[k], w = ((const float*)want->data)[k];
    double e = fabs(g - w) / (1 + fabs(w));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

static int method_buffer_loads(void) {
  char err[CLI_NPY_ERR_SIZE];
  FILE* f = fopen(fixture("elementwise/model.pte"), "rb");
  PT_CHECK(f != NULL);
  static _Alignas(64) unsigned char buf[1 << 16];
  size_t n = fread(buf + 1, 1, sizeof buf - 1, f);
  fclose(f);
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  pterun_program* p;
  // Misaligned and borrowed: refused. Copied: fine.
  PT_CHECK_STATUS(pterun_program_load_buffer(buf + 1, n, &lo, &p), PTERUN_STATUS_INVALID_ARGUMENT);
  lo.copy = 1;
  PT_CHECK_STATUS(pterun_program_load_buffer(buf + 1, n, &lo, &p), PTERUN_STATUS_OK);
  pterun_program_destroy(p);
  memmove(buf, buf + 1, n);
  lo.copy = 0;
  PT_CHECK_STATUS(pterun_program_load_buffer(buf, n, &lo, &p), PTERUN_STATUS_OK);
  pterun_method_options o = opts();
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  cli_npy x = {0}, y = {0}, want = {0};
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("elementwise/forward_input_0.npy"), &x, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("elementwise/forward_input_1.npy"), &y, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("elementwise/forward_et_0.npy"), &want, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(bind_npy(m, 1, &y), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(rel_err(out->u.tensor, &want) <= 1e-6);
  // Wrong input kinds are refused with INPUT_MISMATCH, never a crash.
  int64_t bad_shape[4] = {1, 2, 3, 4};
  pterun_tensor_view v = {PTERUN_DTYPE_F32, 4, bad_shape, NULL, x.data, x.nbytes};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_INPUT_MISMATCH);
  v = (pterun_tensor_view){PTERUN_DTYPE_I32, x.rank, x.shape, NULL, x.data, x.nbytes};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_INPUT_MISMATCH);
  v = (pterun_tensor_view){PTERUN_DTYPE_F32, x.rank, x.shape, NULL, x.data, x.nbytes - 1};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_INPUT_MISMATCH);
  PT_CHECK_STATUS(pterun_method_set_input(m, 7, &v), PTERUN_STATUS_INVALID_ARGUMENT);
  cli_npy_free(&x);
  cli_npy_free(&y);
  cli_npy_free(&want);
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return 0;
}

static int method_dynamic_bounds(void) {
  char err[CLI_NPY_ERR_SIZE];
  pterun_program* p;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  PT_CHECK_STATUS(
      pterun_program_load_file(fixture("dynamic_dim/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
      PTERUN_STATUS_OK);
  pterun_io_info info;
  PT_CHECK_STATUS(pterun_program_method_input(p, 0, 0, &info), PTERUN_STATUS_OK);
  PT_CHECK(info.dynamism == PTERUN_SHAPE_BOUNDED && info.rank == 2);
  int64_t bound = info.sizes[0];
  pterun_method_options o = opts();
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  cli_npy x = {0}, want = {0};
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("dynamic_dim/forward_input_0.npy"), &x, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("dynamic_dim/forward_et_0.npy"), &want, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK(x.shape[0] < bound);
  PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(out->u.tensor->sizes[0] == x.shape[0]);
  PT_CHECK(rel_err(out->u.tensor, &want) <= 1e-5);
  // One row past the bound: refused per dimension.
  float* big = calloc((size_t)(bound + 1) * (size_t)x.shape[1], sizeof(float));
  int64_t shape[2] = {bound + 1, x.shape[1]};
  pterun_tensor_view v = {
      PTERUN_DTYPE_F32, 2, shape, NULL, big, (size_t)(bound + 1) * (size_t)x.shape[1] * 4};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_INPUT_MISMATCH);
  // Exactly the bound, and an empty batch, are fine.
  shape[0] = bound;
  v.nbytes -= (size_t)x.shape[1] * 4;
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(out->u.tensor->sizes[0] == bound);
  // The second dim is not dynamic: changing it is refused.
  shape[0] = 2;
  shape[1] = x.shape[1] + 1;
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &v), PTERUN_STATUS_INPUT_MISMATCH);
  free(big);
  cli_npy_free(&x);
  cli_npy_free(&want);
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return 0;
}

static int method_external_data(void) {
  char err[CLI_NPY_ERR_SIZE];
  pterun_program* p;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  PT_CHECK_STATUS(
      pterun_program_load_file(fixture("external_data/model.pte"), PTERUN_FILE_READ, &lo, &p),
      PTERUN_STATUS_OK);
  pterun_method_options o = opts();
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_INVALID_EXTERNAL_DATA);
  pterun_data* d;
  PT_CHECK_STATUS(pterun_data_load_file(fixture("external_data/_default_external_constant.ptd"),
                                        PTERUN_FILE_MMAP, &lo, &d),
                  PTERUN_STATUS_OK);
  PT_CHECK(pterun_data_count(d) > 0 && pterun_data_key(d, 0) != NULL);
  PT_CHECK(pterun_data_key(d, pterun_data_count(d)) == NULL);
  const pterun_data* maps[1] = {d};
  o.data = maps;
  o.data_count = 1;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  cli_npy x = {0}, want = {0};
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("external_data/forward_input_0.npy"), &x, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("external_data/forward_et_0.npy"), &want, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(rel_err(out->u.tensor, &want) <= 1e-5);
  // A .pte is not a .ptd.
  pterun_data* bad;
  PT_CHECK_STATUS(
      pterun_data_load_file(fixture("external_data/model.pte"), PTERUN_FILE_READ, &lo, &bad),
      PTERUN_STATUS_INVALID_DATA);
  PT_CHECK(bad == NULL);
  cli_npy_free(&x);
  cli_npy_free(&want);
  pterun_method_destroy(m);
  pterun_data_destroy(d);
  pterun_data_destroy(NULL);
  pterun_program_destroy(p);
  return 0;
}

static int method_two_methods_and_state(void) {
  pterun_program* p;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  PT_CHECK_STATUS(
      pterun_program_load_file(fixture("two_methods/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
      PTERUN_STATUS_OK);
  PT_CHECK(pterun_program_method_count(p) == 2);
  size_t ie, ifw;
  PT_CHECK_STATUS(pterun_program_find_method(p, "encode", &ie), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_program_find_method(p, "forward", &ifw), PTERUN_STATUS_OK);
  PT_CHECK(ie != ifw);
  PT_CHECK_STATUS(pterun_program_find_method(p, "decode", &ie), PTERUN_STATUS_NOT_FOUND);
  pterun_method_options o = opts();
  pterun_method *a, *b;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &a), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_load(p, "encode", &o, &b), PTERUN_STATUS_OK);
  pterun_method_destroy(a);
  pterun_method_destroy(b);
  pterun_program_destroy(p);

  // Mutable buffer: state carries over between runs.
  char err[CLI_NPY_ERR_SIZE];
  PT_CHECK_STATUS(
      pterun_program_load_file(fixture("mutable_buffer/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
      PTERUN_STATUS_OK);
  pterun_program_info info;
  pterun_program_get_info(p, &info);
  PT_CHECK(info.mutable_data_count >= 1);
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &a), PTERUN_STATUS_OK);
  cli_npy x = {0}, want = {0};
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("mutable_buffer/forward_input_0.npy"), &x, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("mutable_buffer/forward_et_0.npy"), &want, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(bind_npy(a, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(a), PTERUN_STATUS_OK);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(a, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(rel_err(out->u.tensor, &want) <= 1e-5);
  PT_CHECK_STATUS(bind_npy(a, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(a), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_output(a, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(rel_err(out->u.tensor, &want) > 1e-3); /* the buffer moved on */
  cli_npy_free(&x);
  cli_npy_free(&want);
  pterun_method_destroy(a);
  pterun_program_destroy(p);
  return 0;
}

typedef struct counter {
  int lines;
  char last[512];
} counter;
static void count_log(void* ctx, pterun_log_level level, const char* msg) {
  counter* c = ctx;
  (void)level;
  ++c->lines;
  snprintf(c->last, sizeof c->last, "%s", msg);
}

static int method_caller_buffers_and_logging(void) {
  counter c = {0, {0}};
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = (pterun_logger){count_log, &c, PTERUN_LOG_DEBUG};
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture("mlp/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_OK);
  pterun_method_info mi;
  PT_CHECK_STATUS(pterun_program_method_info(p, 0, &mi), PTERUN_STATUS_OK);
  PT_CHECK(mi.planned_buffer_count == 1);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  void* none[2] = {NULL, NULL};
  o.planned_buffers = none;
  o.planned_buffer_count = 2;
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  PT_CHECK(c.lines > 0 &&
           strstr(c.last, "planned buffers") != NULL); /* inherited from the program */
  o.planned_buffer_count = 1;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_MEMORY_PLAN);
  uint64_t need;
  PT_CHECK_STATUS(pterun_program_planned_buffer_size(p, 0, 0, &need), PTERUN_STATUS_OK);
  void* arena = aligned_alloc(64, (size_t)(need + 63) & ~(size_t)63);
  void* bufs[1] = {arena};
  o.planned_buffers = bufs;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  size_t rt, planned;
  pterun_method_memory(m, &rt, &planned);
  PT_CHECK(planned == 0 && rt > 0);
  pterun_method_destroy(m);
  free(arena);
  pterun_program_destroy(p);
  return 0;
}

/* A refused set_input unbinds the input (issue 21 defect 7a): execute must not
 * run on the memory of an earlier successful call, which the caller may have
 * freed after the refusal; it refuses, naming the input, until the input is
 * set again. A planned input (elementwise, every kind of refusal), then an
 * unplanned one (tools/export_fuzz_regressions.py). */
static int method_refused_input_is_unbound(void) {
  char err[CLI_NPY_ERR_SIZE];
  counter c = {0, {0}};
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = g_silent;
  pterun_program* p;
  PT_CHECK_STATUS(
      pterun_program_load_file(fixture("elementwise/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
      PTERUN_STATUS_OK);
  pterun_method_options o = opts();
  o.logger = (pterun_logger){count_log, &c, PTERUN_LOG_DEBUG};
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  cli_npy x = {0}, y = {0};
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("elementwise/forward_input_0.npy"), &x, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(
      cli_npy_read_file(fixture("elementwise/forward_input_1.npy"), &y, err, sizeof err),
      PTERUN_STATUS_OK);
  PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(bind_npy(m, 1, &y), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  // Each kind of refusal leaves input 1 unbound until it is set again.
  pterun_tensor_view bad[3] = {
      {PTERUN_DTYPE_I32, y.rank, y.shape, NULL, y.data, y.nbytes},     /* dtype */
      {PTERUN_DTYPE_F32, y.rank, y.shape, NULL, y.data, y.nbytes - 1}, /* too small */
      {PTERUN_DTYPE_F32, y.rank, y.shape, NULL, NULL, y.nbytes},       /* no data */
  };
  for (int k = 0; k < 3; ++k) {
    PT_CHECK_STATUS(pterun_method_set_input(m, 1, &bad[k]), PTERUN_STATUS_INPUT_MISMATCH);
    c.lines = 0;
    PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
    PT_CHECK(c.lines > 0 && strstr(c.last, "input 1") != NULL && strstr(c.last, "refused"));
    PT_CHECK_STATUS(bind_npy(m, 1, &y), PTERUN_STATUS_OK);
    PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  }
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
  pterun_value scalar = {.tag = PTERUN_VALUE_INT};
  PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_set_input_value(m, 0, &scalar), PTERUN_STATUS_INPUT_MISMATCH);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
  PT_CHECK(strstr(c.last, "input 0") != NULL);
  PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  cli_npy_free(&x);
  cli_npy_free(&y);
  pterun_method_destroy(m);
  pterun_program_destroy(p);

  // An unplanned input (the method reads the caller's memory), fused into
  // addmm_relu: the fuzz harness's sequence. The buffer of the accepted call
  // is freed after the refusal; execute must not read it (ASan would see it).
  PT_CHECK_STATUS(pterun_program_load_file(
                      fixture("../fuzz/regressions/execute/refused_input_unplanned_addmm_relu.pte"),
                      PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  int64_t shape[2] = {4, 16};
  float* first = aligned_alloc(64, 4 * 16 * sizeof(float));
  static _Alignas(64) float second[4 * 16];
  PT_CHECK(first != NULL);
  for (int k = 0; k < 64; ++k) first[k] = second[k] = (float)k / 64;
  pterun_tensor_view in = {PTERUN_DTYPE_F32, 2, shape, NULL, first, sizeof second};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &in), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  float want[4 * 32];
  memcpy(want, out->u.tensor->data, sizeof want);
  in.data = second;
  in.nbytes = sizeof second - 4; /* refused: too small */
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &in), PTERUN_STATUS_INPUT_MISMATCH);
  free(first);
  c.lines = 0;
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_INVALID_STATE);
  PT_CHECK(c.lines > 0 && strstr(c.last, "input 0") != NULL && strstr(c.last, "refused"));
  in.nbytes = sizeof second;
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &in), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(memcmp(want, out->u.tensor->data, sizeof want) == 0);
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return 0;
}

static int method_delegate_is_refused(void) {
  counter c = {0, {0}};
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = (pterun_logger){count_log, &c, PTERUN_LOG_DEBUG};
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture("../core/data/delegated_xnnpack.pte"),
                                           PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_OK);
  pterun_method_info mi;
  PT_CHECK_STATUS(pterun_program_method_info(p, 0, &mi), PTERUN_STATUS_OK);
  PT_CHECK(mi.delegate_count == 1);
  const char* backend;
  PT_CHECK_STATUS(pterun_program_method_delegate(p, 0, 0, &backend), PTERUN_STATUS_OK);
  PT_CHECK(strcmp(backend, "XnnpackBackend") == 0);
  pterun_program_info info;
  pterun_program_get_info(p, &info);
  PT_CHECK(info.named_data_count == 2);
  const char* key;
  uint64_t size;
  PT_CHECK_STATUS(pterun_program_named_data(p, 0, &key, &size), PTERUN_STATUS_OK);
  PT_CHECK(key != NULL && size > 0);
  PT_CHECK_STATUS(pterun_program_named_data(p, 2, &key, &size), PTERUN_STATUS_NOT_FOUND);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_BACKEND_UNAVAILABLE);
  PT_CHECK(strstr(c.last, "XnnpackBackend") != NULL);
  pterun_program_destroy(p);
  return 0;
}

/* A program on a runtime with the portable kernels only: one
 * OPERATOR_MISSING naming `op` and the component to link; every aten:: op
 * resolved. */
static int missing_component(const char* pte, const char* op, const char* link) {
  counter c = {0, {0}};
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = (pterun_logger){count_log, &c, PTERUN_LOG_DEBUG};
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture(pte), PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_OK);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg; /* portable only */
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OPERATOR_MISSING);
  PT_CHECK(strstr(c.last, op) != NULL);
  PT_CHECK(strstr(c.last, link) != NULL);
  PT_CHECK(strstr(c.last, "aten::") == NULL);
  pterun_program_destroy(p);
  return 0;
}

static int method_missing_quantized_component(void) {
  return missing_component("quantized_cnn/model.pte",
                           "quantized_decomposed::quantize_per_tensor.out",
                           "link pterun::kernels_quantized");
}

/* A Cortex-M program (ExecuTorch's Cortex-M quantizer and passes) without
 * libpterun_kernels_cortex_m. */
static int method_missing_cortex_m_component(void) {
  return missing_component("cortex_m_kws/model.pte", "cortex_m::quantized_conv2d.out",
                           "link pterun::kernels_cortex_m");
}

/* The options structs can grow: struct_size 0 is refused, a caller from an
 * older header (smaller struct) gets defaults for the rest, a newer one is
 * accepted only while the fields this pterun does not know are zero. */
static int method_options_struct_size(void) {
  counter c = {0, {0}};
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = (pterun_logger){count_log, &c, PTERUN_LOG_DEBUG};
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture("mlp/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_OK);
  pterun_load_options bad_lo = lo;
  bad_lo.struct_size = 0;
  pterun_program* q = NULL;
  PT_CHECK_STATUS(pterun_program_load_file(fixture("mlp/model.pte"), PTERUN_FILE_MMAP, &bad_lo, &q),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(q == NULL);

  pterun_method* m = NULL;
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = g_reg;
  o.struct_size = 0;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(c.last, "PTERUN_METHOD_OPTIONS_INIT") != NULL);
  /* An older caller: only up to (and including) `registry`. */
  o.struct_size = offsetof(pterun_method_options, registry) + sizeof o.registry;
  o.no_constant_folding = 1; /* beyond its struct: must be ignored */
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  size_t rt_default, planned;
  pterun_method_memory(m, &rt_default, &planned);
  pterun_method_destroy(m);
  o.struct_size = sizeof o;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  size_t rt_unfolded;
  pterun_method_memory(m, &rt_unfolded, &planned);
  pterun_method_destroy(m);
  PT_CHECK(rt_default > rt_unfolded); /* the old caller got folding, the default */
  /* A newer caller: extra bytes zero is fine, set is refused. */
  struct {
    pterun_method_options o;
    uint64_t newer_field;
  } big;
  memset(&big, 0, sizeof big);
  big.o = o;
  big.o.struct_size = sizeof big;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &big.o, &m), PTERUN_STATUS_OK);
  pterun_method_destroy(m);
  big.newer_field = 1;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &big.o, &m), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(m == NULL);
  pterun_program_destroy(p);
  return 0;
}

/* A method missing more operators than one message holds: whole lines, then
 * how many more; every line says what to do. */
static char g_full[4096];
static void full_log(void* ctx, pterun_log_level level, const char* msg) {
  (void)ctx;
  (void)level;
  snprintf(g_full, sizeof g_full, "%s", msg);
}

static int method_missing_list_is_cut_at_whole_lines(void) {
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  pterun_program* p;
  PT_CHECK_STATUS(
      pterun_program_load_file(fixture("quantized_llm/model.pte"), PTERUN_FILE_MMAP, &lo, &p),
      PTERUN_STATUS_OK);
  pterun_registry* bare; /* prim ops only: every ATen and quantized operator is missing */
  PT_CHECK_STATUS(pterun_registry_create(NULL, NULL, &bare), PTERUN_STATUS_OK);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = bare;
  o.logger = (pterun_logger){full_log, NULL, PTERUN_LOG_DEBUG};
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OPERATOR_MISSING);
  pterun_registry_destroy(bare);
  pterun_program_destroy(p);
  unsigned total = 0, listed = 0, more = 0;
  PT_CHECK(strlen(g_full) < 1024);
  const char* hdr = strstr(g_full, "operators are not registered:");
  PT_CHECK(hdr != NULL && sscanf(strstr(g_full, "': ") + 3, "%u", &total) == 1);
  for (const char* line = strchr(g_full, '\n'); line != NULL; line = strchr(line + 1, '\n')) {
    const char* end = strchr(line + 1, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (sscanf(line, "\n  ... and %u more", &more) == 1) continue;
    ++listed;
    PT_CHECK(len > 30 && (memcmp(line + len - 21, "(not in the registry)", 21) == 0));
  }
  PT_CHECK(total > 15 && listed > 3 && listed < total && listed + more == total);
  return 0;
}

/* Load-time folding of layout ops on constants changes nothing but speed and
 * memory: same output bytes, more runtime memory reported. */
static int method_constant_folding(void) {
  char err[CLI_NPY_ERR_SIZE];
  const char* cases[] = {"mlp", "gpt", "cnn", "resnet"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    char rel[128];
    snprintf(rel, sizeof rel, "%s/model.pte", cases[c]);
    pterun_program* p;
    pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
    lo.logger = g_silent;
    PT_CHECK_STATUS(pterun_program_load_file(fixture(rel), PTERUN_FILE_MMAP, &lo, &p),
                    PTERUN_STATUS_OK);
    snprintf(rel, sizeof rel, "%s/forward_input_0.npy", cases[c]);
    cli_npy x = {0};
    PT_CHECK_STATUS(cli_npy_read_file(fixture(rel), &x, err, sizeof err), PTERUN_STATUS_OK);
    /* 0: no folding, 1: folding (the default), 2: nothing folded or fused,
     * 3: a registry without the optimiser, which must run exactly as 2. */
    void* out_bytes[4] = {NULL, NULL, NULL, NULL};
    size_t out_n[4] = {0, 0, 0, 0}, rt[4] = {0, 0, 0, 0};
    for (int fold = 0; fold < 4; ++fold) {
      pterun_method_options o = opts();
      o.no_constant_folding = fold != 1;
      o.no_fusion = fold == 2;
      if (fold == 3) o.registry = g_bare;
      pterun_method* m;
      PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
      PT_CHECK_STATUS(bind_npy(m, 0, &x), PTERUN_STATUS_OK);
      PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
      const pterun_value* out;
      PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
      out_n[fold] = out->u.tensor->nbytes;
      out_bytes[fold] = malloc(out_n[fold]);
      memcpy(out_bytes[fold], out->u.tensor->data, out_n[fold]);
      pterun_method_memory(m, &rt[fold], NULL);
      pterun_method_destroy(m);
    }
    PT_CHECK(out_n[0] == out_n[1] && memcmp(out_bytes[0], out_bytes[1], out_n[0]) == 0);
    PT_CHECK(out_n[2] == out_n[3] && memcmp(out_bytes[2], out_bytes[3], out_n[2]) == 0);
    PT_CHECK(rt[3] <= rt[2]); /* no folded bytes, no room for fused operators */
    if (c < 2 && !(rt[1] > rt[0])) fprintf(stderr, "%s: %zu vs %zu\n", cases[c], rt[0], rt[1]);
    if (c < 2) PT_CHECK(rt[1] > rt[0]); /* mlp and gpt transpose Linear weights */
    for (int k = 0; k < 4; ++k) free(out_bytes[k]);
    cli_npy_free(&x);
    pterun_program_destroy(p);
  }
  return 0;
}

int main(void) {
  int pt_failures = 0;
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_set_optimizer(g_reg, pterun_optimizer_default()) != PTERUN_STATUS_OK)
    return 1;
  if (pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  /* The same kernels without the optimiser: methods run as written. */
  if (pterun_registry_create(NULL, &g_silent, &g_bare) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_add(g_bare, pterun_kernels_portable()) != PTERUN_STATUS_OK) return 1;
  if (pterun_registry_optimizer(g_bare) != NULL ||
      pterun_registry_optimizer(g_reg) != pterun_optimizer_default() ||
      pterun_registry_set_optimizer(NULL, pterun_optimizer_default()) !=
          PTERUN_STATUS_INVALID_ARGUMENT)
    return 1;
  PT_RUN(method_buffer_loads);
  PT_RUN(method_dynamic_bounds);
  PT_RUN(method_external_data);
  PT_RUN(method_two_methods_and_state);
  PT_RUN(method_caller_buffers_and_logging);
  PT_RUN(method_refused_input_is_unbound);
  PT_RUN(method_delegate_is_refused);
  PT_RUN(method_missing_quantized_component);
  PT_RUN(method_missing_cortex_m_component);
  PT_RUN(method_constant_folding);
  PT_RUN(method_options_struct_size);
  PT_RUN(method_missing_list_is_cut_at_whole_lines);
  pterun_registry_destroy(g_bare);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
