/* The delegate-backend interface: registration (idempotent, duplicates
 * refused naming both objects), a missing backend naming its component, and a
 * test backend that sees the payload, the named data and the call's values. */
#include <stdlib.h>
#include <string.h>

#include "pterun/backends/xnnpack.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

const pterun_backend* pterun_test_dup_backend(void);

typedef struct capture {
  char last[1024];
} capture;

static void capture_log(void* ctx, pterun_log_level level, const char* msg) {
  if (level == PTERUN_LOG_ERROR)
    snprintf(((capture*)ctx)->last, sizeof((capture*)ctx)->last, "%s", msg);
}

static const char* fixture(void) {
  return PTERUN_FIXTURES_DIR "/../core/data/delegated_xnnpack.pte";
}

/* A backend that checks what it is given and writes 7.0 into its outputs. */
typedef struct seen {
  int inits, destroys, executes;
  size_t payload_size, nargs;
  char magic[5];
  int named_found;
} seen;
static seen g_seen;

static pterun_status t_query(const pterun_backend_init_args* a, size_t* bytes) {
  *bytes = 1000 + a->payload_size;
  return PTERUN_STATUS_OK;
}
static pterun_status t_init(const pterun_backend_init_args* a, void** h, size_t* mem) {
  ++g_seen.inits;
  g_seen.payload_size = a->payload_size;
  if (a->payload_size >= 8) memcpy(g_seen.magic, (const char*)a->payload + 4, 4);
  const void* d;
  size_t n;
  // The exporter stores weights under their SHA-256 (64 hex digits).
  g_seen.named_found =
      pterun_named_data_get(a->named_data, "nope", 4, &d, &n) == PTERUN_STATUS_NOT_FOUND;
  *h = malloc(16);
  *mem = 1000 + a->payload_size;
  return *h != NULL ? PTERUN_STATUS_OK : PTERUN_STATUS_OUT_OF_MEMORY;
}
static pterun_status t_exec(void* h, pterun_kernel_context* ctx, pterun_value** args,
                            size_t nargs) {
  (void)h;
  ++g_seen.executes;
  g_seen.nargs = nargs;
  if (pterun_kernel_scratch(ctx, 64, 16) == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "no scratch");
  pterun_tensor* out;
  if (pterun_arg_tensor(ctx, args, nargs - 1, "out", &out) != PTERUN_STATUS_OK)
    return PTERUN_STATUS_INVALID_TYPE;
  for (int64_t i = 0; i < out->numel; ++i) ((float*)out->data)[i] = 7.0f;
  return PTERUN_STATUS_OK;
}
static void t_destroy(void* h, const pterun_allocator* a) {
  (void)a;
  ++g_seen.destroys;
  free(h);
}
static const pterun_backend kTest = {
    PTERUN_BACKEND_ABI_VERSION, "XnnpackBackend", "test", t_query, t_init, t_exec, t_destroy};
static const pterun_backend kOld = {
    PTERUN_BACKEND_ABI_VERSION + 1, "Old", "test", NULL, t_init, t_exec, t_destroy};

static int backend_registration(void) {
  capture cap = {{0}};
  pterun_logger lg = {capture_log, &cap, PTERUN_LOG_DEBUG};
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, &lg, &r), PTERUN_STATUS_OK);
  PT_CHECK(pterun_registry_backend(r, "XnnpackBackend") == NULL);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, &kTest), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, &kTest), PTERUN_STATUS_OK);
  PT_CHECK(pterun_registry_backend(r, "XnnpackBackend") == &kTest);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, pterun_test_dup_backend()),
                  PTERUN_STATUS_ALREADY_REGISTERED);
  PT_CHECK(strstr(cap.last, "XnnpackBackend") != NULL);
  PT_CHECK(strstr(cap.last, "libtest_dup_kernels") != NULL);
  PT_CHECK(strstr(cap.last, "test_backend") != NULL); /* this executable */
  PT_CHECK_STATUS(pterun_registry_add_backend(r, &kOld), PTERUN_STATUS_ABI_MISMATCH);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strcmp(pterun_component_for_backend("XnnpackBackend"), "backend_xnnpack") == 0);
  PT_CHECK(pterun_component_for_backend("VulkanBackend") == NULL);
  pterun_registry_destroy(r);
  return 0;
}

static int backend_missing_names_component(void) {
  capture cap = {{0}};
  pterun_logger lg = {capture_log, &cap, PTERUN_LOG_DEBUG};
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = lg;
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture(), PTERUN_FILE_MMAP, &lo, &p), PTERUN_STATUS_OK);
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, &lg, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = r;
  pterun_method* m = NULL;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_BACKEND_UNAVAILABLE);
  PT_CHECK(m == NULL);
  PT_CHECK(strstr(cap.last, "XnnpackBackend") != NULL);
  PT_CHECK(strstr(cap.last, "pterun::backend_xnnpack") != NULL);
  size_t bytes = 1;
  PT_CHECK_STATUS(pterun_method_backend_memory(p, "forward", &o, &bytes),
                  PTERUN_STATUS_BACKEND_UNAVAILABLE);
  pterun_registry_destroy(r);
  pterun_program_destroy(p);
  return 0;
}

static int backend_runs_a_delegate(void) {
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture(), PTERUN_FILE_MMAP, NULL, &p),
                  PTERUN_STATUS_OK);
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, NULL, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, &kTest), PTERUN_STATUS_OK);
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = r;
  size_t before = 0;
  PT_CHECK_STATUS(pterun_method_backend_memory(p, "forward", &o, &before), PTERUN_STATUS_OK);
  memset(&g_seen, 0, sizeof g_seen);
  pterun_method* m;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  PT_CHECK(g_seen.inits == 1 && strcmp(g_seen.magic, "XH00") == 0 && g_seen.named_found);
  PT_CHECK(before == 1000 + g_seen.payload_size);
  size_t runtime = 0;
  pterun_method_memory(m, &runtime, NULL);
  PT_CHECK(runtime > before);
  float x[8] = {0};
  int64_t sizes[2] = {2, 4};
  pterun_tensor_view in = {PTERUN_DTYPE_F32, 2, sizes, NULL, x, sizeof x};
  PT_CHECK_STATUS(pterun_method_set_input(m, 0, &in), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  PT_CHECK(g_seen.executes == 1 && g_seen.nargs == 2);
  const pterun_value* out;
  PT_CHECK_STATUS(pterun_method_output(m, 0, &out), PTERUN_STATUS_OK);
  PT_CHECK(out->tag == PTERUN_VALUE_TENSOR && out->u.tensor->numel == 6);
  PT_CHECK(((const float*)out->u.tensor->data)[5] == 7.0f);
  pterun_method_destroy(m);
  PT_CHECK(g_seen.destroys == 1);
  pterun_registry_destroy(r);
  pterun_program_destroy(p);
  return 0;
}

/* Reads a whole file into 64-aligned memory. */
static uint8_t* read_file(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* b = aligned_alloc(64, ((size_t)len + 63) & ~(size_t)63);
  if (b != NULL && fread(b, 1, (size_t)len, f) != (size_t)len) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return b;
}

/* Loads (and, if that works, runs) a damaged copy; any status is fine, a
 * crash or sanitizer report is not. Returns the load status. */
static pterun_status load_damaged(const uint8_t* img, size_t n, pterun_registry* r) {
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  lo.logger = pterun_logger_silent();
  lo.copy = 1;
  pterun_program* p;
  pterun_status st = pterun_program_load_buffer(img, n, &lo, &p);
  if (st != PTERUN_STATUS_OK) return st;
  pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
  o.registry = r;
  o.logger = pterun_logger_silent();
  pterun_method* m = NULL;
  st = pterun_method_load(p, "forward", &o, &m);
  if (st == PTERUN_STATUS_OK) {
    float x[3 * 16] = {0};
    int64_t sizes[2] = {3, 16};
    pterun_tensor_view in = {PTERUN_DTYPE_F32, 2, sizes, NULL, x, sizeof x};
    if (pterun_method_set_input(m, 0, &in) == PTERUN_STATUS_OK) (void)pterun_method_execute(m);
    pterun_method_destroy(m);
  }
  pterun_program_destroy(p);
  return st;
}

static int backend_xnnpack_refuses_damaged_payloads(void) {
  size_t n;
  uint8_t* img = read_file(PTERUN_FIXTURES_DIR "/xnnpack/mlp/model.pte", &n);
  PT_CHECK(img != NULL);
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, NULL, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, pterun_backend_xnnpack()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(load_damaged(img, n, r), PTERUN_STATUS_OK); /* intact: loads */
  size_t at = 0;
  for (size_t i = 4; i + 4 <= n && at == 0; ++i)
    if (memcmp(img + i, "XH00", 4) == 0) at = i - 4;
  PT_CHECK(at > 0);
  uint8_t* copy = malloc(n);
  PT_CHECK(copy != NULL);
  // Header fields: FlatBuffer offset/size and constant region out of range,
  // a wrong identifier.
  static const struct {
    size_t off;
    uint8_t byte;
  } kHits[] = {{10, 0xff}, {13, 0x7f}, {14, 0xff}, {17, 0x7f}, {18, 0xff}, {29, 0x01}, {36, 'Q'}};
  for (size_t h = 0; h < sizeof kHits / sizeof kHits[0]; ++h) {
    memcpy(copy, img, n);
    copy[at + kHits[h].off] = kHits[h].byte;
    pterun_status st = load_damaged(copy, n, r);
    PT_CHECK(st != PTERUN_STATUS_OK);
  }
  // Byte flips all over the payload: never a crash.
  uint64_t s = 88172645463325252ull;
  for (int round = 0; round < 3000; ++round) {
    memcpy(copy, img, n);
    for (int k = 0; k < 1 + round % 4; ++k) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      size_t pos = at + (size_t)(s % 1400);
      if (pos < n) copy[pos] ^= (uint8_t)(s >> 32);
    }
    (void)load_damaged(copy, n, r);
  }
  free(copy);
  free(img);
  pterun_registry_destroy(r);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(backend_registration);
  PT_RUN(backend_missing_names_component);
  PT_RUN(backend_runs_a_delegate);
  PT_RUN(backend_xnnpack_refuses_damaged_payloads);
  return pt_failures ? 1 : 0;
}
