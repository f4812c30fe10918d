/* A second kernel library, built as its own shared object, that claims an
 * operator the portable library already provides: used to check that the
 * registry refuses it and names both objects. */
#include "pterun/kernel.h"

static PTERUN_KERNEL(fake_add) {
  (void)args;
  (void)nargs;
  return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "test kernel");
}

static const pterun_kernel kKernels[] = {{.op = "test::only_here.out", .fn = fake_add},
                                         {.op = "aten::add.out", .fn = fake_add}};
static const pterun_kernel_library kLib = {PTERUN_KERNEL_ABI_VERSION, "test_dup", 2, kKernels};
static const pterun_kernel_library kOldAbi = {PTERUN_KERNEL_ABI_VERSION + 7, "test_old_abi", 1,
                                              kKernels};

PTERUN_KERNEL_API const pterun_kernel_library* pterun_test_dup_kernels(void) {
  return &kLib;
}
PTERUN_KERNEL_API const pterun_kernel_library* pterun_test_old_abi_kernels(void) {
  return &kOldAbi;
}

/* A backend claiming the XNNPACK id, from this second shared object. */
#include "pterun/backend.h"

static pterun_status dup_init(const pterun_backend_init_args* a, void** h, size_t* mem) {
  (void)a;
  *h = NULL;
  *mem = 0;
  return PTERUN_STATUS_NOT_SUPPORTED;
}
static pterun_status dup_exec(void* h, pterun_kernel_context* ctx, pterun_value** args,
                              size_t nargs) {
  (void)h;
  (void)args;
  (void)nargs;
  return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "test backend");
}
static void dup_destroy(void* h, const pterun_allocator* a) {
  (void)h;
  (void)a;
}
static const pterun_backend kDupBackend = {PTERUN_BACKEND_ABI_VERSION,
                                           "XnnpackBackend",
                                           "test_dup",
                                           NULL,
                                           dup_init,
                                           dup_exec,
                                           dup_destroy};

PTERUN_KERNEL_API const pterun_backend* pterun_test_dup_backend(void) {
  return &kDupBackend;
}
