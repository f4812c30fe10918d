/* The operator registry: explicit adds, idempotence, refusals with messages
 * naming both providers, component lookups. */
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

const pterun_kernel_library* pterun_test_dup_kernels(void);
const pterun_kernel_library* pterun_test_old_abi_kernels(void);

typedef struct capture {
  char last[1024];
  int errors;
} capture;

static void capture_log(void* ctx, pterun_log_level level, const char* msg) {
  capture* c = ctx;
  if (level == PTERUN_LOG_ERROR) {
    ++c->errors;
    snprintf(c->last, sizeof c->last, "%s", msg);
  }
}

static int registry_prim_ops_present(void) {
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, NULL, &r), PTERUN_STATUS_OK);
  PT_CHECK(pterun_registry_count(r) >= 28);
  PT_CHECK(strcmp(pterun_registry_provider(r, "executorch_prim::et_view.default"), "runtime") == 0);
  PT_CHECK(strcmp(pterun_registry_provider(r, "aten::sym_size.int"), "runtime") == 0);
  PT_CHECK(pterun_registry_provider(r, "aten::add.out") == NULL);
  pterun_registry_destroy(r);
  pterun_registry_destroy(NULL);
  return 0;
}

static int registry_add_twice_is_noop(void) {
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, NULL, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  size_t n = pterun_registry_count(r);
  PT_CHECK(n > 28);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  PT_CHECK(pterun_registry_count(r) == n);
  PT_CHECK(strcmp(pterun_registry_provider(r, "aten::add.out"), "kernels_portable") == 0);
  const char *op, *comp;
  PT_CHECK_STATUS(pterun_registry_get(r, n - 1, &op, &comp), PTERUN_STATUS_OK);
  PT_CHECK(strcmp(comp, "kernels_portable") == 0);
  PT_CHECK_STATUS(pterun_registry_get(r, n, &op, &comp), PTERUN_STATUS_NOT_FOUND);
  pterun_registry_destroy(r);
  return 0;
}

static int registry_refuses_a_different_kernel(void) {
  capture cap = {{0}, 0};
  pterun_logger lg = {capture_log, &cap, PTERUN_LOG_DEBUG};
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(NULL, &lg, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  size_t n = pterun_registry_count(r);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_test_dup_kernels()),
                  PTERUN_STATUS_ALREADY_REGISTERED);
  // Nothing of the refused library was added, and the message names both
  // providers and their shared objects.
  PT_CHECK(pterun_registry_count(r) == n);
  PT_CHECK(pterun_registry_provider(r, "test::only_here.out") == NULL);
  PT_CHECK(strstr(cap.last, "aten::add.out") != NULL);
  PT_CHECK(strstr(cap.last, "test_dup") != NULL);
  PT_CHECK(strstr(cap.last, "kernels_portable") != NULL);
  PT_CHECK(strstr(cap.last, "libtest_dup_kernels") != NULL);
  PT_CHECK(strstr(cap.last, PT_PORTABLE_OBJECT) != NULL);
  // In the other order the test library wins and portable is refused.
  pterun_registry* r2;
  PT_CHECK_STATUS(pterun_registry_create(NULL, &lg, &r2), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r2, pterun_test_dup_kernels()), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r2, pterun_kernels_portable()),
                  PTERUN_STATUS_ALREADY_REGISTERED);
  PT_CHECK_STATUS(pterun_registry_add(r2, pterun_test_old_abi_kernels()),
                  PTERUN_STATUS_ABI_MISMATCH);
  PT_CHECK(strstr(cap.last, "ABI") != NULL);
  PT_CHECK_STATUS(pterun_registry_add(r2, NULL), PTERUN_STATUS_INVALID_ARGUMENT);
  pterun_registry_destroy(r2);
  pterun_registry_destroy(r);
  return 0;
}

static int registry_components_for_ops(void) {
  PT_CHECK(strcmp(pterun_component_for_op("quantized_decomposed::add.out"), "kernels_quantized") ==
           0);
  PT_CHECK(strcmp(pterun_component_for_op("aten::mm.out"), "kernels_portable") == 0);
  PT_CHECK(strcmp(pterun_component_for_op("cortex_m::quantized_add.out"), "kernels_cortex_m") == 0);
  PT_CHECK(strcmp(pterun_component_for_op("dim_order_ops::_clone_dim_order.out"),
                  "kernels_portable") == 0);
  PT_CHECK(strcmp(pterun_component_for_op("executorch_prim::add.Scalar"), "runtime") == 0);
  PT_CHECK(pterun_component_for_op("my_namespace::custom.out") == NULL);
  return 0;
}

/* Every byte of a registry comes from the allocator it was created with. */
typedef struct counting {
  size_t allocs, frees, live;
} counting;
static void* counting_alloc(void* ctx, size_t size, size_t alignment) {
  counting* c = ctx;
  void* p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) != 0)
    return NULL;
  ++c->allocs;
  ++c->live;
  return p;
}
static void counting_free(void* ctx, void* p) {
  counting* c = ctx;
  if (p == NULL) return;
  ++c->frees;
  --c->live;
  free(p);
}

static int registry_uses_its_allocator(void) {
  counting c = {0, 0, 0};
  pterun_allocator a = {&c, counting_alloc, counting_free};
  pterun_registry* r;
  PT_CHECK_STATUS(pterun_registry_create(&a, NULL, &r), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_registry_add(r, pterun_kernels_portable()), PTERUN_STATUS_OK);
  PT_CHECK(c.allocs >= 3); /* the registry, its kernel table (grown), its library list */
  PT_CHECK(pterun_registry_provider(r, "aten::add.out") != NULL);
  pterun_registry_destroy(r);
  PT_CHECK(c.live == 0 && c.frees == c.allocs);
  return 0;
}

static int registry_default_is_shared(void) {
  pterun_registry* a = pterun_registry_default();
  PT_CHECK(a != NULL && a == pterun_registry_default());
  PT_CHECK(pterun_registry_provider(a, "executorch_prim::add.Scalar") != NULL);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  PT_RUN(registry_prim_ops_present);
  PT_RUN(registry_add_twice_is_noop);
  PT_RUN(registry_refuses_a_different_kernel);
  PT_RUN(registry_components_for_ops);
  PT_RUN(registry_default_is_shared);
  PT_RUN(registry_uses_its_allocator);
  return pt_failures ? 1 : 0;
}
