/* The low-bit fixtures (tests/fixtures/lowbit: every width, the wide layers,
 * the quantized transformers) on their recorded inputs through the three
 * paths that must give the same bytes: unprepared (no_kernel_prepare:
 * weights checked and read per call), prepared (checked once at load; 1-3
 * and 5-7 bits repacked into the 4- or 8-bit layout, which shows in the
 * method's memory), and prepared on pools of 1 to 3 threads. */
#include "pterun/kernels/lowbit.h"
#include "pterun/threadpool.h"
#include "tests/robustness/rb_common.h"

static int pt_failures;

static pterun_status run(const char* dir, int prepare, pterun_threadpool* pool, uint64_t* hash,
                         size_t* mem) {
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  char rel[256];
  size_t planned = 0;
  pterun_load_options lo = rb_load_opts();
  pterun_method_options o = rb_opts();
  pterun_status st;
  snprintf(rel, sizeof rel, "%s/model.pte", dir);
  st = pterun_program_load_file(rb_fixture(rel), PTERUN_FILE_MMAP, &lo, &p);
  o.no_kernel_prepare = !prepare;
  o.threadpool = pool;
  if (st == PTERUN_STATUS_OK) st = pterun_method_load(p, "forward", &o, &m);
  if (st == PTERUN_STATUS_OK) st = rb_bind_inputs(m, dir, "forward");
  if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
  if (st == PTERUN_STATUS_OK) {
    *hash = rb_output_hash(m);
    pterun_method_memory(m, mem, &planned);
    /* the prepared state only: the scratch arena is the reservations' with
     * prepares, the default without */
    pterun_method_memory_info mi = PTERUN_METHOD_MEMORY_INFO_INIT;
    if (pterun_method_memory_parts(m, &mi) == PTERUN_STATUS_OK) *mem -= mi.scratch_bytes;
  }
  pterun_method_destroy(m);
  pterun_program_destroy(p);
  return st;
}

static int test_paths(void) {
  static const char* const names[] = {"ops_1bit",  "ops_2bit", "ops_3bit", "ops_4bit",  "ops_5bit",
                                      "ops_6bit",  "ops_7bit", "ops_8bit", "wide_3bit", "wide_4bit",
                                      "wide_8bit", "tfm_2bit", "tfm_3bit", "tfm_4bit",  "tfm_8bit"};
  pterun_threadpool* pools[4] = {NULL, NULL, NULL, NULL};
  size_t i, t;
  int bad = 0;
  for (t = 1; t <= 3; ++t) {
    pterun_threadpool_options po = PTERUN_THREADPOOL_OPTIONS_INIT;
    po.threads = t;
    po.min_work_ns = 1; /* split every call: these compare thread counts */
    PT_CHECK_STATUS(pterun_threadpool_create(&po, &pools[t]), PTERUN_STATUS_OK);
  }
  for (i = 0; i < sizeof names / sizeof names[0]; ++i) {
    char dir[64];
    uint64_t want = 0, got = 0;
    size_t mem0 = 0, mem1 = 0, mem = 0;
    /* widths the microkernels read as they are: 4 and 8 */
    int repacked = strstr(names[i], "4bit") == NULL && strstr(names[i], "8bit") == NULL;
    snprintf(dir, sizeof dir, "lowbit/%s", names[i]);
    PT_CHECK_STATUS(run(dir, 0, NULL, &want, &mem0), PTERUN_STATUS_OK);
    PT_CHECK_STATUS(run(dir, 1, NULL, &got, &mem1), PTERUN_STATUS_OK);
    if (got != want || (repacked ? mem1 <= mem0 : mem1 < mem0)) {
      fprintf(stderr, "%s: prepared output %s, memory %zu (unprepared %zu)\n", names[i],
              got == want ? "same" : "DIFFERS", mem1, mem0);
      bad = 1;
    }
    for (t = 1; t <= 3; ++t) {
      PT_CHECK_STATUS(run(dir, 1, pools[t], &got, &mem), PTERUN_STATUS_OK);
      if (got != want) {
        fprintf(stderr, "%s: %zu threads: output differs\n", names[i], t);
        bad = 1;
      }
    }
  }
  for (t = 1; t <= 3; ++t) pterun_threadpool_destroy(pools[t]);
  return bad;
}

int main(void) {
  if (rb_init() != 0 || pterun_registry_add(g_reg, pterun_kernels_lowbit()) != PTERUN_STATUS_OK)
    return 1;
  PT_RUN(test_paths);
  pterun_registry_destroy(g_reg);
  return pt_failures != 0;
}
