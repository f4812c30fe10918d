/* Decode speed of an LLM-flow program (ExecuTorch's export_llama: tokens and
 * input_pos in, logits out, KV cache in mutable buffers) through
 * pterun_llm_forward, on a libpterun_threadpool pool of T threads: the
 * prompt is prefilled, then `steps` greedy tokens one at a time.
 * bench/bench_lowbit_decode.py drives it next to ExecuTorch.
 * Usage: bench_decode MODEL.pte THREADS STEPS
 * Prints one JSON line: prefill and decode tokens/s, CPU time over wall
 * time while decoding, the fastest decode step (robust to a busy machine),
 * the tokens, memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/optimize.h"
#include "pterun/backends/xnnpack.h"
#include "pterun/kernels/llm.h"
#include "pterun/kernels/lowbit.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/quantized.h"
#include "pterun/llm.h"
#include "pterun/pterun.h"
#include "pterun/threadpool.h"

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) {
  return clock_s(CLOCK_MONOTONIC);
}

static int64_t argmax(const float* x, int64_t n) {
  int64_t i, best = 0;
  for (i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

int main(int argc, char** argv) {
  static const int64_t prompt0[] = {1, 17, 42, 99, 5, 200, 63};
  const size_t np = sizeof prompt0 / sizeof prompt0[0];
  int64_t prompt[sizeof prompt0 / sizeof prompt0[0]];
  pterun_registry* reg = NULL;
  pterun_program* prog = NULL;
  pterun_threadpool* pool = NULL;
  pterun_threadpool_options po = PTERUN_THREADPOOL_OPTIONS_INIT;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_llm* llm = NULL;
  const float* logits = NULL;
  pterun_status st;
  int64_t vocab, tok, toks[1024];
  size_t rt = 0, planned = 0;
  double t0, t1, t2, c1, c2, step_min = 0.0;
  int steps, i;
  if (argc != 4 || (steps = atoi(argv[3])) < 2 || steps > 1024) {
    fprintf(stderr, "usage: bench_decode MODEL.pte THREADS STEPS(2..1024)\n");
    return 2;
  }
  po.threads = (size_t)atoi(argv[2]);
  if (pterun_registry_create(NULL, NULL, &reg) != PTERUN_STATUS_OK ||
      pterun_registry_set_optimizer(reg, pterun_optimizer_default()) != PTERUN_STATUS_OK ||
      pterun_registry_add(reg, pterun_kernels_portable()) != PTERUN_STATUS_OK ||
      pterun_registry_add(reg, pterun_kernels_quantized()) != PTERUN_STATUS_OK ||
      pterun_registry_add(reg, pterun_kernels_lowbit()) != PTERUN_STATUS_OK ||
      pterun_registry_add(reg, pterun_kernels_llm()) != PTERUN_STATUS_OK ||
      pterun_registry_add_backend(reg, pterun_backend_xnnpack()) != PTERUN_STATUS_OK ||
      pterun_threadpool_create(&po, &pool) != PTERUN_STATUS_OK)
    return 1;
  mo.registry = reg;
  mo.threadpool = pool;
  st = pterun_program_load_file(argv[1], PTERUN_FILE_MMAP, NULL, &prog);
  if (st == PTERUN_STATUS_OK) st = pterun_llm_open(prog, &mo, &llm);
  if (st != PTERUN_STATUS_OK) {
    fprintf(stderr, "bench_decode: %s: %s\n", argv[1], pterun_status_name(st));
    return 1;
  }
  vocab = pterun_llm_get_metadata(llm)->vocab_size;
  for (i = 0; i < (int)np; ++i) prompt[i] = prompt0[i] % vocab; /* bench_lowbit_decode.py's too */
  t0 = now();
  st = pterun_llm_forward(llm, prompt, np, &logits);
  t1 = now();
  c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  for (i = 0; i < steps && st == PTERUN_STATUS_OK; ++i) {
    toks[i] = tok = argmax(logits, vocab);
    if (i + 1 < steps) {
      double s0 = now(), dt;
      st = pterun_llm_forward(llm, &tok, 1, &logits);
      dt = now() - s0;
      if (i == 0 || dt < step_min) step_min = dt;
    }
  }
  t2 = now();
  c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  if (st != PTERUN_STATUS_OK) {
    fprintf(stderr, "bench_decode: step %d: %s\n", i, pterun_status_name(st));
    return 1;
  }
  pterun_method_memory(pterun_llm_method(llm), &rt, &planned);
  printf(
      "{\"prefill_tokens_per_second\": %.3f, \"decode_tokens_per_second\": %.3f, "
      "\"decode_cpu_per_wall\": %.3f, \"decode_step_min_ms\": %.4f, \"threads\": %zu, "
      "\"runtime_bytes\": %zu, \"tokens\": [",
      (double)np / (t1 - t0), (double)(steps - 1) / (t2 - t1), (c2 - c1) / (t2 - t1),
      1e3 * step_min, pterun_threadpool_size(pool), rt);
  for (i = 0; i < steps; ++i) printf("%s%lld", i ? ", " : "", (long long)toks[i]);
  printf("]}\n");
  pterun_llm_close(llm);
  pterun_program_destroy(prog);
  pterun_threadpool_destroy(pool);
  pterun_registry_destroy(reg);
  return 0;
}
