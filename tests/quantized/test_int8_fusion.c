/* The int8 fusion (src/optimize/method_fuse_patterns.inc, kernels/quantized/q_int8*.c)
 * on exporter-made programs: each fixture runs with fusion off (the
 * reference path, ExecuTorch's kernels) and on; the fused run must use the
 * fused operators it is expected to (seen by the profiler) and its outputs
 * must match the reference within the fixture's stated bound. Prints the
 * fraction of outputs that differ at all. Also over a 3-thread pool (same
 * bits as serial) and with the scalar microkernel forced (ctest runs it again
 * with PTERUN_ISA_MASK=0: same bits as the SIMD one, the GEMM sums exactly). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/npy.h"
#include "pterun/optimize.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/quantized.h"
#include "pterun/profile.h"
#include "pterun/pterun.h"
#include "pterun/threadpool.h"
#include "tests/harness/pt_test.h"

static int pt_failures;
static pterun_registry* g_reg;
static pterun_logger g_silent;

/* max_diff: largest |fused - reference| allowed. Static programs end in a
 * dequantize, so outputs move in output quantization steps: a sum that lands
 * on the other side of a rounding boundary in one layer (integer vs float
 * summation order) moves that activation one step, which the next layers may
 * carry on; the bound is 3 steps of the output scale (quantized_cnn
 * 0.00166, quantized_convnet: see its ops). The dynamic linear's output is
 * float: the int32 sums are exact, the float reference sums in another
 * order. */
typedef struct fixture {
  const char* dir;
  const char* fused_ops[8]; /* operators the fused run must call */
  double max_diff;
} fixture;

static const fixture k_fixtures[] = {
    {"quantized_cnn",
     {"pterun_quantized::conv2d_relu_q8.out", "pterun_quantized::linear_q8.out"},
     3 * 0.00166248},
    {"quantized_convnet",
     {"pterun_quantized::conv2d_q8.out", "pterun_quantized::conv2d_relu_q8.out",
      "pterun_quantized::linear_relu_q8.out", "pterun_quantized::linear_q8.out",
      "pterun_quantized::conv2d_q8_hardtanh_q8.out"},
     0.05},
    {"quantized_dynlinear", {"pterun_quantized::linear_dynamic_q8.out"}, 1e-4},
    {"quantized_8da4w", {"pterun_quantized::linear_dynamic_affine.out"}, 1e-5},
    {"quantized_8da4w_fused", {"pterun_quantized::linear_dequantize_dynamic.out"}, 1e-5},
    {"quantized_8da8w", {"pterun_quantized::linear_dynamic_affine.out"}, 1e-5},
    /* outputs up to ~100: a few float32 ulps */
    {"quantized_8da4w_pt", {"pterun_quantized::linear_dynamic_per_token.out"}, 1e-4},
    {"quantized_dynmm",
     {"pterun_quantized::mm_dynamic_relu_q8.out", "pterun_quantized::mm_dynamic_q8.out"},
     1e-5},
    {"quantized_staticmm",
     {"pterun_quantized::mm_relu_q8.out", "pterun_quantized::linear_q8.out",
      "pterun_quantized::mm_q8.out"},
     0.05},
    {"quantized_staticops",
     {"pterun_quantized::conv2d_q8.out", "pterun_quantized::conv2d_q8_hardtanh_q8.out",
      "pterun_quantized::add_relu_q8.out", "pterun_quantized::add_q8.out",
      "pterun_quantized::relu_q8.out", "pterun_quantized::linear_q8.out",
      "pterun_quantized::mean_q8.out"},
     0.05},
};

static const char* fixture_path(const char* dir, const char* file) {
  static char path[4][512];
  static int k;
  k = (k + 1) & 3;
  snprintf(path[k], sizeof path[k], "%s/%s/%s", PTERUN_FIXTURES_DIR, dir, file);
  return path[k];
}

typedef struct run_result {
  float* out; /* output 0 */
  size_t n;
  int used[8]; /* fused_ops[k] was called */
} run_result;

static pterun_status run(const fixture* fx, int no_fusion, pterun_threadpool* pool, size_t scratch,
                         run_result* r) {
  pterun_program* p = NULL;
  pterun_method* m = NULL;
  pterun_profiler* prof = NULL;
  pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
  char err[CLI_NPY_ERR_SIZE];
  cli_npy a;
  pterun_status st =
      pterun_program_load_file(fixture_path(fx->dir, "model.pte"), PTERUN_FILE_MMAP, NULL, &p);
  memset(r, 0, sizeof *r);
  if (st == PTERUN_STATUS_OK) st = pterun_profiler_create(&po, &prof);
  if (st == PTERUN_STATUS_OK) {
    pterun_method_options o = PTERUN_METHOD_OPTIONS_INIT;
    o.registry = g_reg;
    o.logger = g_silent;
    o.no_fusion = no_fusion;
    o.threadpool = pool;
    o.profiler = prof;
    o.scratch_bytes = scratch;
    st = pterun_method_load(p, "forward", &o, &m);
  }
  if (st == PTERUN_STATUS_OK)
    st = cli_npy_read_file(fixture_path(fx->dir, "forward_input_0.npy"), &a, err, sizeof err);
  if (st == PTERUN_STATUS_OK) {
    pterun_tensor_view v = {a.dtype, a.rank, a.shape, NULL, a.data, a.nbytes};
    st = pterun_method_set_input(m, 0, &v);
    if (st == PTERUN_STATUS_OK) st = pterun_method_execute(m);
    cli_npy_free(&a);
  }
  if (st == PTERUN_STATUS_OK) {
    const pterun_value* v;
    st = pterun_method_output(m, 0, &v);
    if (st == PTERUN_STATUS_OK &&
        (v->tag != PTERUN_VALUE_TENSOR || v->u.tensor->dtype != PTERUN_DTYPE_F32))
      st = PTERUN_STATUS_INVALID_TYPE;
    if (st == PTERUN_STATUS_OK) {
      r->n = (size_t)v->u.tensor->numel;
      r->out = malloc(sizeof(float) * (r->n ? r->n : 1));
      if (r->out == NULL)
        st = PTERUN_STATUS_OUT_OF_MEMORY;
      else
        memcpy(r->out, v->u.tensor->data, sizeof(float) * r->n);
    }
  }
  for (size_t i = 0; st == PTERUN_STATUS_OK && i < pterun_profiler_instruction_count(prof); ++i) {
    pterun_profile_instruction pi;
    if (pterun_profiler_instruction(prof, i, &pi) != PTERUN_STATUS_OK || pi.calls == 0 ||
        pi.op_name == NULL)
      continue;
    for (int k = 0; k < 8; ++k)
      if (fx->fused_ops[k] != NULL && strcmp(fx->fused_ops[k], pi.op_name) == 0) r->used[k] = 1;
  }
  pterun_method_destroy(m);
  pterun_profiler_destroy(prof);
  pterun_program_destroy(p);
  return st;
}

static int compare(const fixture* fx, const run_result* ref, const run_result* got,
                   const char* what) {
  size_t differ = 0;
  double worst = 0;
  PT_CHECK(ref->n == got->n && ref->n > 0);
  for (size_t i = 0; i < ref->n; ++i) {
    const double d = fabs((double)got->out[i] - (double)ref->out[i]);
    differ += got->out[i] != ref->out[i];
    if (!(d <= worst)) worst = d; /* NaN propagates into the check below */
  }
  printf(
      "     %-20s %-12s %zu of %zu outputs differ from the reference (%.1f %%), max %.3g"
      " (bound %.3g)\n",
      fx->dir, what, differ, ref->n, 100.0 * (double)differ / (double)ref->n, worst, fx->max_diff);
  PT_CHECK(worst <= fx->max_diff);
  return 0;
}

static int test_fixtures(void) {
  pterun_threadpool_options tpo = PTERUN_THREADPOOL_OPTIONS_INIT;
  pterun_threadpool* pool = NULL;
  tpo.threads = 3;
  tpo.min_work_ns = 1; /* split every call: these compare thread counts */
  PT_CHECK_STATUS(pterun_threadpool_create(&tpo, &pool), PTERUN_STATUS_OK);
  for (size_t f = 0; f < sizeof k_fixtures / sizeof k_fixtures[0]; ++f) {
    const fixture* fx = &k_fixtures[f];
    run_result ref, fused, threaded;
    PT_CHECK_STATUS(run(fx, 1, NULL, 0, &ref), PTERUN_STATUS_OK);
    PT_CHECK_STATUS(run(fx, 0, NULL, 0, &fused), PTERUN_STATUS_OK);
    PT_CHECK_STATUS(run(fx, 0, pool, 0, &threaded), PTERUN_STATUS_OK);
    for (int k = 0; k < 8; ++k) {
      if (fx->fused_ops[k] == NULL) continue;
      if (!fused.used[k] || ref.used[k])
        fprintf(stderr, "%s: %s %s\n", fx->dir, fx->fused_ops[k],
                ref.used[k] ? "called with fusion off" : "not called with fusion on");
      PT_CHECK(fused.used[k] && !ref.used[k]);
    }
    PT_CHECK(compare(fx, &ref, &fused, "fused") == 0);
    PT_CHECK(threaded.n == fused.n &&
             memcmp(threaded.out, fused.out, sizeof(float) * fused.n) == 0);
    {
      /* No scratch arena: convolution rows straight from the NCHW input
       * (bounds checked per element), an aliased input copied into the
       * kernel's own state; same bits. */
      run_result bare;
      PT_CHECK_STATUS(run(fx, 0, NULL, PTERUN_NO_SCRATCH, &bare), PTERUN_STATUS_OK);
      PT_CHECK(bare.n == fused.n && memcmp(bare.out, fused.out, sizeof(float) * fused.n) == 0);
      free(bare.out);
    }
    free(ref.out), free(fused.out), free(threaded.out);
  }
  pterun_threadpool_destroy(pool);
  return 0;
}

int main(void) {
  g_silent = pterun_logger_silent();
  if (getenv("PTERUN_TEST_LOG") != NULL) memset(&g_silent, 0, sizeof g_silent); /* stderr */
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK ||
      pterun_registry_set_optimizer(g_reg, pterun_optimizer_default()) != PTERUN_STATUS_OK ||
      pterun_registry_add(g_reg, pterun_kernels_portable()) != PTERUN_STATUS_OK ||
      pterun_registry_add(g_reg, pterun_kernels_quantized()) != PTERUN_STATUS_OK)
    return 1;
  PT_RUN(test_fixtures);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
