/* The kernel libraries this build of the CLI registers. Adding a component is
 * one row in kLibraries (plus its header), under the component's
 * PTERUN_HAVE_* define set by CMake when the component is built. */
#include "cli/cli.h"
#include "pterun/kernels/portable.h"
#include "pterun/optimize.h"
#ifdef PTERUN_HAVE_KERNELS_QUANTIZED
#include "pterun/kernels/quantized.h"
#endif
#ifdef PTERUN_HAVE_KERNELS_CORTEX_M
#include "pterun/kernels/cortex_m.h"
#endif
#ifdef PTERUN_HAVE_KERNELS_LOWBIT
#include "pterun/kernels/lowbit.h"
#endif
#ifdef PTERUN_HAVE_BACKEND_XNNPACK
#include "pterun/backends/xnnpack.h"
#endif
#ifdef PTERUN_HAVE_KERNELS_LLM
#include "pterun/kernels/llm.h"
#endif

typedef const pterun_kernel_library* (*cli_library_fn)(void);

static const cli_library_fn kLibraries[] = {
    pterun_kernels_portable,
#ifdef PTERUN_HAVE_KERNELS_QUANTIZED
    pterun_kernels_quantized,
#endif
#ifdef PTERUN_HAVE_KERNELS_CORTEX_M
    pterun_kernels_cortex_m,
#endif
#ifdef PTERUN_HAVE_KERNELS_LOWBIT
    pterun_kernels_lowbit,
#endif
#ifdef PTERUN_HAVE_KERNELS_LLM
    pterun_kernels_llm,
#endif
};
#define N_LIBRARIES (sizeof kLibraries / sizeof kLibraries[0])

typedef const pterun_backend* (*cli_backend_fn)(void);

/* Delegate backends (pterun/backend.h), one row per backend component. */
static const cli_backend_fn kBackends[] = {
#ifdef PTERUN_HAVE_BACKEND_XNNPACK
    pterun_backend_xnnpack,
#endif
    NULL};

pterun_status cli_registry_create(cli_log* log, pterun_registry** out) {
  pterun_logger logger = cli_logger(log);
  pterun_status st;
  size_t k;

  *out = NULL;
  /* A private registry (not the default one) so its log goes through `log`. */
  if ((st = pterun_registry_create(NULL, &logger, out)) != PTERUN_STATUS_OK) return st;
  /* Folding and fusion (--no-fusion and the options turn them off per method). */
  if ((st = pterun_registry_set_optimizer(*out, pterun_optimizer_default())) != PTERUN_STATUS_OK) {
    pterun_registry_destroy(*out);
    *out = NULL;
    return st;
  }
  for (k = 0; k < N_LIBRARIES; ++k) {
    if ((st = pterun_registry_add(*out, kLibraries[k]())) != PTERUN_STATUS_OK) {
      pterun_registry_destroy(*out);
      *out = NULL;
      return st;
    }
  }
  for (k = 0; kBackends[k] != NULL; ++k) {
    if ((st = pterun_registry_add_backend(*out, kBackends[k]())) != PTERUN_STATUS_OK) {
      pterun_registry_destroy(*out);
      *out = NULL;
      return st;
    }
  }
  return PTERUN_STATUS_OK;
}

void cli_print_libraries(FILE* f) {
  size_t k;
  fprintf(f, "kernel libraries:");
  for (k = 0; k < N_LIBRARIES; ++k) {
    const pterun_kernel_library* lib = kLibraries[k]();
    fprintf(f, " %s (%zu kernels)", lib && lib->component ? lib->component : "?",
            lib ? lib->count : (size_t)0);
  }
  for (k = 0; kBackends[k] != NULL; ++k) fprintf(f, " %s (backend)", kBackends[k]()->component);
  fprintf(f, "\n");
}
