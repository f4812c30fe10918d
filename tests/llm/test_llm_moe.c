/* llama::quantized_moe_ffn on its exported fixture (tests/fixtures/llm_op_moe,
 * tools/export_llm_ops.py) beyond the fixture test's tolerance check: the
 * outputs do not depend on the token block the scratch arena allows (bit for
 * bit, down to one token at a time) nor on the thread pool; no scratch at
 * all is a clear OUT_OF_MEMORY; a packed-weight header that lies about its
 * bit width is refused with a message, never read.
 * Usage: test_llm_moe FIXTURE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/npy.h"
#include "pterun/kernels/llm.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "pterun/threadpool.h"
#include "tests/harness/pt_test.h"

static char g_dir[1024];
static unsigned char* g_pte;
static size_t g_pte_size;
static cli_npy g_x;

typedef struct last_log {
  char last[512];
} last_log;

/* Keeps the kernel's own message (later ones say where execution stopped). */
static void log_cb(void* user, pterun_log_level level, const char* msg) {
  (void)level;
  if (strncmp(msg, "llama::quantized_moe_ffn.out: ", 30) == 0)
    snprintf(((last_log*)user)->last, sizeof((last_log*)user)->last, "%s", msg);
}

/* Runs forward on `pte` with the given scratch and pool; copies the two
 * [5, 64] outputs to out (640 floats) on success. */
static pterun_status run(const unsigned char* pte, size_t scratch, pterun_threadpool* pool,
                         float* out, last_log* lg) {
  pterun_registry* reg = NULL;
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_tensor_view v;
  pterun_status st;
  size_t k;
  memset(lg, 0, sizeof *lg);
  lo.logger = (pterun_logger){log_cb, lg, PTERUN_LOG_DEBUG};
  if ((st = pterun_registry_create(NULL, NULL, &reg)) != PTERUN_STATUS_OK) return st;
  pterun_registry_add(reg, pterun_kernels_portable());
  pterun_registry_add(reg, pterun_kernels_llm());
  st = pterun_program_load_buffer(pte, g_pte_size, &lo, &p);
  mo.registry = reg;
  mo.scratch_bytes = scratch;
  mo.threadpool = pool;
  if (st == PTERUN_STATUS_OK) st = pterun_method_load(p, "forward", &mo, &m);
  memset(&v, 0, sizeof v);
  v.dtype = PTERUN_DTYPE_F32;
  v.rank = 2;
  v.sizes = g_x.shape;
  v.data = g_x.data;
  v.nbytes = g_x.nbytes;
  if (st == PTERUN_STATUS_OK) st = pterun_method_set_input(m, 0, &v);
  if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
  for (k = 0; st == PTERUN_STATUS_OK && k < 2; ++k) {
    const pterun_value* o = NULL;
    st = pterun_method_output(m, k, &o);
    if (st == PTERUN_STATUS_OK && (o->tag != PTERUN_VALUE_TENSOR || o->u.tensor->numel != 320))
      st = PTERUN_STATUS_INTERNAL;
    if (st == PTERUN_STATUS_OK) memcpy(out + k * 320, o->u.tensor->data, 320 * sizeof(float));
  }
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  pterun_registry_destroy(reg);
  return st;
}

static int test_blocks_and_threads_same_bits(void) {
  static float ref[640], got[640];
  /* room for 1, 2, 3 and all 5 tokens of the second call (2000 bytes each) */
  static const size_t scratch[] = {2100, 4100, 6100, 20000};
  pterun_threadpool* pool = NULL;
  pterun_threadpool_options to = PTERUN_THREADPOOL_OPTIONS_INIT;
  last_log lg;
  size_t i;
  PT_CHECK_STATUS(run(g_pte, 0, NULL, ref, &lg), PTERUN_STATUS_OK);
  for (i = 0; i < sizeof scratch / sizeof scratch[0]; ++i) {
    PT_CHECK_STATUS(run(g_pte, scratch[i], NULL, got, &lg), PTERUN_STATUS_OK);
    PT_CHECK(memcmp(ref, got, sizeof ref) == 0);
  }
  to.threads = 3;
  to.min_work_ns = 1; /* split every call: these compare thread counts */
  PT_CHECK_STATUS(pterun_threadpool_create(&to, &pool), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(run(g_pte, 0, pool, got, &lg), PTERUN_STATUS_OK);
  pterun_threadpool_destroy(pool);
  PT_CHECK(memcmp(ref, got, sizeof ref) == 0);
  return 0;
}

static int test_no_scratch(void) {
  static float got[640];
  last_log lg;
  PT_CHECK_STATUS(run(g_pte, PTERUN_NO_SCRATCH, NULL, got, &lg), PTERUN_STATUS_OUT_OF_MEMORY);
  PT_CHECK(strstr(lg.last, "scratch") != NULL);
  return 0;
}

static int test_lying_header(void) {
  /* The first expert's w13 header: magic 6712, universal layout, 4-bit. */
  static const int32_t hdr[8] = {6712, 1, 4, 0, 0, 8, 16, 2};
  static float got[640];
  unsigned char* bad = NULL;
  last_log lg;
  size_t off;
  for (off = 0; off + sizeof hdr <= g_pte_size; off += 4)
    if (memcmp(g_pte + off, hdr, sizeof hdr) == 0) break;
  PT_CHECK(off + sizeof hdr <= g_pte_size);
  PT_CHECK(posix_memalign((void**)&bad, 64, g_pte_size) == 0);
  memcpy(bad, g_pte, g_pte_size);
  bad[off + 8] = 5; /* says 5-bit */
  PT_CHECK_STATUS(run(bad, 0, NULL, got, &lg), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(lg.last, "header word 2") != NULL);
  memcpy(bad, g_pte, g_pte_size);
  bad[off] ^= 1; /* wrong magic */
  PT_CHECK_STATUS(run(bad, 0, NULL, got, &lg), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(lg.last, "header word 0") != NULL);
  free(bad);
  return 0;
}

int main(int argc, char** argv) {
  int pt_failures = 0;
  char path[1200], err[256];
  FILE* f;
  long n;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
    return 2;
  }
  snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
  snprintf(path, sizeof path, "%s/model.pte", g_dir);
  f = fopen(path, "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  g_pte_size = (size_t)n;
  if (posix_memalign((void**)&g_pte, 64, g_pte_size) != 0 ||
      fread(g_pte, 1, g_pte_size, f) != g_pte_size)
    return 1;
  fclose(f);
  snprintf(path, sizeof path, "%s/forward_input_0.npy", g_dir);
  if (cli_npy_read_file(path, &g_x, err, sizeof err) != PTERUN_STATUS_OK || g_x.rank != 2 ||
      g_x.shape[0] != 5 || g_x.shape[1] != 64) {
    fprintf(stderr, "%s: %s\n", path, err);
    return 1;
  }
  PT_RUN(test_blocks_and_threads_same_bits);
  PT_RUN(test_no_scratch);
  PT_RUN(test_lying_header);
  cli_npy_free(&g_x);
  free(g_pte);
  return pt_failures ? 1 : 0;
}
