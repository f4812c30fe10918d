/* The delegate-backend interface: registration (idempotent, duplicates
 * refused naming both objects), a missing backend naming its component, and a
 * test backend that sees the payload, the named data and the call's values. */
#include <stdlib.h>
#include <string.h>

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
  PT_CHECK_STATUS(pterun_registry_create(&lg, &r), PTERUN_STATUS_OK);
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
  pterun_load_options lo = {0};
  lo.logger = lg;
  pterun_program* p;
  PT_CHECK_STATUS(pterun_program_load_file(fixture(), PTERUN_FILE_MMAP, &lo, &p), PTERUN_STATUS_OK);
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(&lg, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  pterun_method_options o;
  memset(&o, 0, sizeof o);
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
  PT_CHECK_STATUS(pterun_registry_create(NULL, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add_backend(r, &kTest), PTERUN_STATUS_OK);
  pterun_method_options o;
  memset(&o, 0, sizeof o);
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

int main(void) {
  int pt_failures = 0;
  PT_RUN(backend_registration);
  PT_RUN(backend_missing_names_component);
  PT_RUN(backend_runs_a_delegate);
  return pt_failures ? 1 : 0;
}
