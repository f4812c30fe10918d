/* End-to-end generation on a program exported by ExecuTorch's LLM flow
 * (tests/fixtures/llm_<name>/, tools/export_llama.py): prefill the prompt,
 * then greedy decoding; the token sequence must equal ExecuTorch's runtime's
 * (et_tokens.txt) and every step's logits must be within
 * |got - want| <= ATOL + RTOL * |want| of ExecuTorch's (et_logits.npy).
 * Also: the program is refused, naming pterun::kernels_llm, by a registry
 * without the LLM library; sampling is deterministic for a seed.
 * With --threads N the method runs on a pool of N threads (the attention
 * splits its tiles over it) and must give the same results.
 * Usage: test_llm_generate FIXTURE_DIR [--atol A] [--rtol R] [--threads N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/npy.h"
#include "pterun/kernels/llm.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/quantized.h"
#include "pterun/llm.h"
#include "pterun/pterun.h"
#include "pterun/threadpool.h"
#include "tests/harness/pt_test.h"

#define MAX_TOKENS 512

static char g_dir[1024];
static double g_atol = 1e-4, g_rtol = 1e-5;
static pterun_threadpool* g_pool; /* --threads: the method's pool */

static const char* path_in(const char* name) {
  static char buf[1200];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

/* Integers separated by commas or newlines. */
static size_t read_ints(const char* path, int64_t* out, size_t cap) {
  FILE* f = fopen(path, "r");
  size_t n = 0;
  long long v;
  int c;
  if (f == NULL) return 0;
  while (n < cap && fscanf(f, "%lld", &v) == 1) {
    out[n++] = (int64_t)v;
    while ((c = fgetc(f)) == ',' || c == '\n' || c == ' ') {
    }
    if (c == EOF) break;
    ungetc(c, f);
  }
  fclose(f);
  return n;
}

typedef struct capture {
  float* logits;
  size_t vocab, cap, n;
} capture;

static int keep_logits(void* user, const pterun_llm_token* t) {
  capture* c = (capture*)user;
  if (t->index < c->cap) {
    memcpy(c->logits + t->index * c->vocab, t->logits, c->vocab * sizeof(float));
    c->n = t->index + 1;
  }
  return 0;
}

typedef struct last_log {
  char last[4096];
} last_log;

static void log_cb(void* user, pterun_log_level level, const char* msg) {
  (void)level;
  snprintf(((last_log*)user)->last, sizeof((last_log*)user)->last, "%s", msg);
}

static pterun_registry* make_registry(int with_llm) {
  pterun_registry* r = NULL;
  if (pterun_registry_create(NULL, NULL, &r) != PTERUN_STATUS_OK) return NULL;
  pterun_registry_add(r, pterun_kernels_portable());
  pterun_registry_add(r, pterun_kernels_quantized());
  if (with_llm) pterun_registry_add(r, pterun_kernels_llm());
  return r;
}

static int greedy_matches_executorch(void) {
  int64_t prompt[MAX_TOKENS], want[MAX_TOKENS], got[MAX_TOKENS];
  size_t np = read_ints(path_in("prompt.txt"), prompt, MAX_TOKENS);
  size_t nw = read_ints(path_in("et_tokens.txt"), want, MAX_TOKENS), i, j;
  pterun_registry* reg = make_registry(1);
  pterun_program* p = NULL;
  pterun_llm* llm = NULL;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_llm_options o = PTERUN_LLM_OPTIONS_INIT;
  pterun_llm_stats stats;
  cli_npy ref;
  char err[256];
  capture cap;
  double worst = 0.0, worst_ratio = 0.0;
  PT_CHECK(np > 0 && nw >= 32);
  PT_CHECK(reg != NULL);
  memset(&ref, 0, sizeof ref);
  PT_CHECK_STATUS(cli_npy_read_file(path_in("et_logits.npy"), &ref, err, sizeof err),
                  PTERUN_STATUS_OK);
  PT_CHECK(ref.dtype == PTERUN_DTYPE_F32 && ref.rank == 2);
  PT_CHECK(ref.shape[0] == (int64_t)nw);
  PT_CHECK_STATUS(pterun_program_load_file(path_in("model.pte"), PTERUN_FILE_MMAP, NULL, &p),
                  PTERUN_STATUS_OK);
  mo.registry = reg;
  mo.threadpool = g_pool;
  PT_CHECK_STATUS(pterun_llm_open(p, &mo, &llm), PTERUN_STATUS_OK);
  PT_CHECK(pterun_llm_get_metadata(llm)->vocab_size == ref.shape[1]);
  PT_CHECK(pterun_llm_get_metadata(llm)->bos_id == 1);
  PT_CHECK(pterun_llm_get_metadata(llm)->eos_count == 1 &&
           pterun_llm_get_metadata(llm)->eos_ids[0] == 2);
  PT_CHECK(pterun_llm_get_metadata(llm)->use_kv_cache == 1);
  cap.vocab = (size_t)ref.shape[1];
  cap.cap = nw;
  cap.n = 0;
  cap.logits = (float*)malloc(nw * cap.vocab * sizeof(float));
  PT_CHECK(cap.logits != NULL);
  o.max_new_tokens = nw;
  o.ignore_eos = 1;
  o.callback = keep_logits;
  o.user = &cap;
  PT_CHECK_STATUS(pterun_llm_generate(llm, prompt, np, &o, got, MAX_TOKENS, &stats),
                  PTERUN_STATUS_OK);
  PT_CHECK(stats.generated == nw && cap.n == nw);
  for (i = 0; i < nw; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "step %zu: token %lld, ExecuTorch %lld\n", i, (long long)got[i],
              (long long)want[i]);
      return 1;
    }
    for (j = 0; j < cap.vocab; ++j) {
      double g = cap.logits[i * cap.vocab + j], w = ((const float*)ref.data)[i * cap.vocab + j];
      double d = fabs(g - w), lim = g_atol + g_rtol * fabs(w);
      if (d > worst) worst = d;
      if (d / lim > worst_ratio) worst_ratio = d / lim;
    }
  }
  printf("%s: %zu tokens identical; max |logit diff| %.3g (%.2f of the tolerance)\n", g_dir, nw,
         worst, worst_ratio);
  PT_CHECK(worst_ratio <= 1.0);

  /* Same tokens again after a reset (the cache is overwritten in place). */
  pterun_llm_reset(llm);
  o.callback = NULL;
  PT_CHECK_STATUS(pterun_llm_generate(llm, prompt, np, &o, got, MAX_TOKENS, &stats),
                  PTERUN_STATUS_OK);
  for (i = 0; i < nw; ++i) PT_CHECK(got[i] == want[i]);

  /* Sampling: a seed gives the same tokens twice; a valid token each step. */
  {
    int64_t a[16], b[16];
    o.max_new_tokens = 16;
    o.sampling.temperature = 0.8f;
    o.sampling.top_k = 20;
    o.sampling.top_p = 0.9f;
    o.sampling.seed = 1234;
    pterun_llm_reset(llm);
    PT_CHECK_STATUS(pterun_llm_generate(llm, prompt, np, &o, a, 16, &stats), PTERUN_STATUS_OK);
    pterun_llm_reset(llm);
    PT_CHECK_STATUS(pterun_llm_generate(llm, prompt, np, &o, b, 16, &stats), PTERUN_STATUS_OK);
    for (i = 0; i < 16; ++i) PT_CHECK(a[i] == b[i] && a[i] >= 0 && a[i] < (int64_t)cap.vocab);
  }
  free(cap.logits);
  cli_npy_free(&ref);
  pterun_llm_close(llm);
  pterun_program_destroy(p);
  pterun_registry_destroy(reg);
  return 0;
}

static int refused_without_llm_library(void) {
  last_log lg;
  pterun_registry* reg = make_registry(0);
  pterun_load_options lo = PTERUN_LOAD_OPTIONS_INIT;
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  memset(&lg, 0, sizeof lg);
  lo.logger = (pterun_logger){log_cb, &lg, PTERUN_LOG_DEBUG};
  PT_CHECK(reg != NULL);
  PT_CHECK_STATUS(pterun_program_load_file(path_in("model.pte"), PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_OK);
  mo.registry = reg;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &mo, &m), PTERUN_STATUS_OPERATOR_MISSING);
  PT_CHECK(strstr(lg.last, "llama::") != NULL);
  PT_CHECK(strstr(lg.last, "link pterun::kernels_llm") != NULL);
  PT_CHECK(strstr(lg.last, "aten::") == NULL);
  pterun_program_destroy(p);
  pterun_registry_destroy(reg);
  return 0;
}

int main(int argc, char** argv) {
  int pt_failures = 0, a;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FIXTURE_DIR [--atol A] [--rtol R]\n", argv[0]);
    return 2;
  }
  snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
  for (a = 2; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--atol") == 0) g_atol = strtod(argv[a + 1], NULL);
    if (strcmp(argv[a], "--rtol") == 0) g_rtol = strtod(argv[a + 1], NULL);
    if (strcmp(argv[a], "--threads") == 0) {
      pterun_threadpool_options to = PTERUN_THREADPOOL_OPTIONS_INIT;
      to.threads = (size_t)strtoul(argv[a + 1], NULL, 10);
      to.min_work_ns = 1; /* split every call: these compare thread counts */
      if (to.threads < 2 || pterun_threadpool_create(&to, &g_pool) != PTERUN_STATUS_OK) {
        fprintf(stderr, "--threads: cannot make a pool of %s threads\n", argv[a + 1]);
        return 2;
      }
    }
  }
  PT_RUN(greedy_matches_executorch);
  PT_RUN(refused_without_llm_library);
  pterun_threadpool_destroy(g_pool);
  return pt_failures ? 1 : 0;
}
