/* The backend object: init compiles a payload into a graph, execute runs it,
 * destroy frees it (pterun/backends/xnnpack.h). */
#include <string.h>

#include "backends/xnnpack/xb_internal.h"
#include "pterun/backends/xnnpack.h"

typedef struct xb_handle {
  xb_graph g;
} xb_handle;

static pterun_status compile(const pterun_backend_init_args* a, xb_handle* h) {
  h->g.allocator = a->allocator;
  PTERUN_TRY(xb_parse(a, &h->g));
  return xb_compile(a, &h->g);
}

static pterun_status xb_init(const pterun_backend_init_args* a, void** out, size_t* memory) {
  *out = NULL;
  *memory = 0;
  xb_handle* h = pterun_alloc(a->allocator, sizeof *h, 16);
  if (h == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  pterun_status st = compile(a, h);
  if (st != PTERUN_STATUS_OK) {
    xb_graph_free(&h->g);
    pterun_free(a->allocator, h);
    return st;
  }
  *out = h;
  *memory = sizeof *h + h->g.owned_bytes;
  /* one GEMM workspace per call (xb_run): its largest product's blocks */
  h->g.gemm_scratch = xb_scratch_bytes(&h->g);
  if (a->scratch_out != NULL) *a->scratch_out = h->g.gemm_scratch;
  return PTERUN_STATUS_OK;
}

/* Memory needs: compiling is the only exact answer (packing and the arena
 * plan depend on every node), so compile and free. */
static pterun_status xb_memory_query(const pterun_backend_init_args* a, size_t* bytes) {
  void* h;
  PTERUN_TRY(xb_init(a, &h, bytes));
  xb_graph_free(&((xb_handle*)h)->g);
  pterun_free(a->allocator, h);
  return PTERUN_STATUS_OK;
}

static pterun_status xb_execute(void* handle, pterun_kernel_context* ctx, pterun_value** args,
                                size_t nargs) {
  xb_handle* h = handle;
  if (nargs < h->g.num_externs)
    return PTERUN_FAIL_ARG(ctx, "delegate called with %zu values; the graph has %u", nargs,
                           h->g.num_externs);
  return xb_run(&h->g, ctx, args, nargs);
}

static void xb_destroy(void* handle, const pterun_allocator* a) {
  xb_handle* h = handle;
  xb_graph_free(&h->g);
  pterun_free(a, h);
}

static const pterun_backend kBackend = {PTERUN_BACKEND_ABI_VERSION,
                                        "XnnpackBackend",
                                        "backend_xnnpack",
                                        xb_memory_query,
                                        xb_init,
                                        xb_execute,
                                        xb_destroy};

const pterun_backend* pterun_backend_xnnpack(void) {
  return &kBackend;
}
