/* Every f32 GEMM microkernel this CPU can run (kernels/portable/gemm_f32.inc)
 * against a double-precision reference, through the blocked engine, over odd
 * sizes, strides, transposes, alpha and accumulate, with the packing buffers
 * in a scratch arena and on the stack. Outputs sit between sentinel guards and
 * strided outputs have sentinel gaps, so any write outside C fails the test.
 * Run twice by ctest: as is, and with PTERUN_ISA_MASK=0 (scalar only). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/portable/nn_gemm.h"
#include "pterun/cpu.h"
#include "pterun/kernel.h"
#include "tests/harness/pt_test.h"

static int pt_failures;

#define GUARD 64
static const uint32_t k_sentinel = 0x7fc0de5au; /* a NaN no kernel produces */

static float sentinel(void) {
  float f;
  memcpy(&f, &k_sentinel, sizeof f);
  return f;
}
static int is_sentinel(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u == k_sentinel;
}

static uint32_t g_rng = 12345;
static float rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (float)((g_rng >> 9) & 0xffff) / 32768.0f - 1.0f;
}

/* Engine call through pterun_kernel_invoke, so the arena is a real one. */
typedef struct job {
  const pt_f32_gemm_ukernel* uk; /* NULL: run-time selection */
  int64_t m, n, k;
  nn_mat a, b, c;
  double alpha;
  int accumulate;
} job;
static job g_job;

static pterun_status run_job(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  nn_gemm_ws ws;
  (void)args;
  (void)nargs;
  if (g_job.uk != NULL)
    nn_gemm_ws_init_ukernel(ctx, &ws, PTERUN_DTYPE_F32, g_job.uk);
  else
    nn_gemm_ws_init(ctx, &ws, PTERUN_DTYPE_F32);
  nn_gemm(&ws, g_job.m, g_job.n, g_job.k, &g_job.a, &g_job.b, &g_job.c, g_job.alpha,
          g_job.accumulate);
  return PTERUN_STATUS_OK;
}

typedef struct layout {
  int a_t, b_t, c_t; /* transposed (column-major) storage */
  int pad;           /* extra elements per row/column of every matrix */
} layout;

/* One case for one microkernel (uk NULL: the default selection). */
static int check_case(const pt_f32_gemm_ukernel* uk, int64_t m, int64_t n, int64_t k, layout L,
                      double alpha, int accumulate, void* scratch, size_t scratch_bytes) {
  int64_t lda = (L.a_t ? m : k) + L.pad, ldb = (L.b_t ? k : n) + L.pad,
          ldc = (L.c_t ? m : n) + L.pad;
  int64_t asz = (L.a_t ? k : m) * lda, bsz = (L.b_t ? n : k) * ldb, csz = (L.c_t ? n : m) * ldc;
  float* a = (float*)malloc(sizeof(float) * (size_t)asz);
  float* b = (float*)malloc(sizeof(float) * (size_t)bsz);
  float* cbuf = (float*)malloc(sizeof(float) * (size_t)(csz + 2 * GUARD));
  float* c0 = (float*)malloc(sizeof(float) * (size_t)(csz));
  float* c = cbuf + GUARD;
  int64_t i, j, kk, bad = 0;
  PT_CHECK(a != NULL && b != NULL && cbuf != NULL && c0 != NULL);
  for (i = 0; i < asz; ++i) a[i] = rnd();
  for (i = 0; i < bsz; ++i) b[i] = rnd();
  for (i = 0; i < csz + 2 * GUARD; ++i) cbuf[i] = sentinel();
  /* C elements get start values (used when accumulating); gaps keep the sentinel. */
  for (i = 0; i < m; ++i)
    for (j = 0; j < n; ++j) c[L.c_t ? j * ldc + i : i * ldc + j] = rnd();
  memcpy(c0, c, sizeof(float) * (size_t)csz);

  g_job.uk = uk;
  g_job.m = m, g_job.n = n, g_job.k = k;
  g_job.a = (nn_mat){a, PTERUN_DTYPE_F32, L.a_t ? 1 : lda, L.a_t ? lda : 1};
  g_job.b = (nn_mat){b, PTERUN_DTYPE_F32, L.b_t ? 1 : ldb, L.b_t ? ldb : 1};
  g_job.c = (nn_mat){c, PTERUN_DTYPE_F32, L.c_t ? 1 : ldc, L.c_t ? ldc : 1};
  g_job.alpha = alpha;
  g_job.accumulate = accumulate;
  PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, scratch, scratch_bytes) ==
           PTERUN_STATUS_OK);

  for (i = 0; i < GUARD; ++i) {
    if (!is_sentinel(cbuf[i]) || !is_sentinel(cbuf[GUARD + csz + i])) {
      fprintf(stderr, "  write outside C (guard %lld)\n", (long long)i);
      bad++;
      break;
    }
  }
  for (i = 0; i < m && bad < 5; ++i)
    for (j = 0; j < n && bad < 5; ++j) {
      int64_t off = L.c_t ? j * ldc + i : i * ldc + j;
      double ref = 0, mag = 0, got = c[off], tol;
      for (kk = 0; kk < k; ++kk) {
        double x = a[L.a_t ? kk * lda + i : i * lda + kk],
               y = b[L.b_t ? j * ldb + kk : kk * ldb + j];
        ref += x * y;
        mag += fabs(x * y);
      }
      ref *= alpha;
      if (accumulate) ref += c0[off];
      tol = 1e-5 * (fabs(alpha) * mag + (accumulate ? fabs(c0[off]) : 0)) + 1e-6;
      if (!(fabs(got - ref) <= tol)) {
        fprintf(stderr, "  C[%lld][%lld] = %.9g, want %.9g (tol %.3g)\n", (long long)i,
                (long long)j, got, ref, tol);
        bad++;
      }
    }
  /* Gaps between strided rows/columns must be untouched. */
  for (i = 0; i < (L.c_t ? n : m) && bad < 5; ++i)
    for (j = (L.c_t ? m : n); j < ldc; ++j)
      if (!is_sentinel(c[i * ldc + j])) {
        fprintf(stderr, "  write into the gap after row %lld\n", (long long)i);
        bad++;
        break;
      }
  if (bad)
    fprintf(stderr,
            "FAILED %s m=%lld n=%lld k=%lld a_t=%d b_t=%d c_t=%d pad=%d alpha=%g acc=%d %s\n",
            uk ? uk->name : "(default)", (long long)m, (long long)n, (long long)k, L.a_t, L.b_t,
            L.c_t, L.pad, alpha, accumulate, scratch ? "arena" : "stack");
  free(a);
  free(b);
  free(cbuf);
  free(c0);
  return bad != 0;
}

static const int64_t k_sizes[] = {1, 2, 3, 5, 6, 7, 11, 12, 13, 16, 17, 31, 32, 33, 63, 65, 97};

static int run_variant(const pt_f32_gemm_ukernel* uk, void* arena, size_t arena_bytes) {
  size_t ns = sizeof k_sizes / sizeof k_sizes[0];
  int fails = 0, t;
  /* Many small shapes, all layouts, both buffer sources. */
  for (t = 0; t < 300; ++t) {
    int64_t m = k_sizes[(size_t)t % ns], n = k_sizes[(size_t)(t * 7 + 3) % ns],
            k = k_sizes[(size_t)(t * 5 + 1) % ns];
    layout L = {t & 1, (t >> 1) & 1, (t >> 2) & 1, (t >> 3) % 3 == 0 ? 0 : (t % 5) + 1};
    double alpha = t % 3 == 0 ? 1.0 : t % 3 == 1 ? 0.5 : -2.0;
    int acc = (t >> 4) & 1;
    fails += check_case(uk, m, n, k, L, alpha, acc, t % 2 ? arena : NULL, t % 2 ? arena_bytes : 0);
    if (fails > 3) return 1;
  }
  /* Shapes crossing the K, M and N blocks of both buffer sources, including a
   * row stride that is a multiple of 2 KiB (packed A) and M == 1, 2*MR. */
  {
    static const int64_t big[][3] = {{300, 140, 600}, {1, 700, 530},  {13, 300, 257},
                                     {257, 129, 512}, {40, 2100, 64}, {24, 33, 1030}};
    size_t i;
    for (i = 0; i < sizeof big / sizeof big[0]; ++i) {
      layout L0 = {0, 0, 0, 0}, L1 = {1, 1, 1, 3};
      fails += check_case(uk, big[i][0], big[i][1], big[i][2], L0, 1.0, (int)(i & 1), arena,
                          arena_bytes);
      fails += check_case(uk, big[i][0], big[i][1], big[i][2], L0, -1.5, 1, NULL, 0);
      fails += check_case(uk, big[i][0], big[i][1], big[i][2], L1, 0.25, 0, NULL, 0);
    }
  }
  return fails != 0;
}

static void* g_arena;
static size_t g_arena_bytes;

static int test_variants(void) {
  size_t n, i;
  const pt_f32_gemm_ukernel* uks = pt_f32_gemm_ukernels(&n);
  uint64_t features = pterun_cpu_features();
  int ran = 0;
  PT_CHECK(n >= 1 && uks[0].isa == 0); /* the scalar reference comes first */
  for (i = 0; i < n; ++i) {
    if ((uks[i].isa & features) != uks[i].isa) {
      char need[256];
      pterun_cpu_features_string(uks[i].isa & ~features, need, sizeof need);
      printf("skip %s (not usable here: %s)\n", uks[i].name, need);
      continue;
    }
    printf("check %s\n", uks[i].name);
    PT_CHECK(run_variant(&uks[i], g_arena, g_arena_bytes) == 0);
    ++ran;
  }
  PT_CHECK(ran >= 1);
  /* The run-time selection itself (NULL: nn_gemm_ws_init). */
  PT_CHECK(run_variant(NULL, g_arena, g_arena_bytes) == 0);
  return 0;
}

static int test_selection(void) {
  uint64_t f = pterun_cpu_features(), d = pterun_cpu_detected_features();
  const pt_f32_gemm_ukernel* uk = pt_f32_gemm_ukernel_select(f);
  const pt_f32_gemm_ukernel* m1 = pt_f32_gemm_ukernel_select_m1(f);
  const char* env = getenv("PTERUN_ISA_MASK");
  char s[256];
  PT_CHECK((f & ~d) == 0);
  PT_CHECK(pterun_cpu_features() == f); /* stable */
  PT_CHECK(uk != NULL && (uk->isa & f) == uk->isa && uk->mr > 1);
  PT_CHECK(m1 == NULL || ((m1->isa & f) == m1->isa && m1->mr == 1));
  PT_CHECK(pt_f32_gemm_ukernel_select(0)->isa == 0);
  PT_CHECK(pt_f32_gemm_ukernel_select_m1(0) == NULL);
  if (env != NULL && strcmp(env, "0") == 0) PT_CHECK(f == 0);
  pterun_cpu_features_string(d, s, sizeof s);
  printf("detected: %s\nusable: ", s);
  pterun_cpu_features_string(f, s, sizeof s);
  printf("%s\nselected: %s, M == 1: %s\n", s, uk->name, m1 ? m1->name : "(same)");
  return 0;
}

static int test_feature_names(void) {
  char s[16], t[8];
  PT_CHECK(strcmp(pterun_cpu_feature_name(PTERUN_CPU_X86_AVX2), "avx2") == 0);
  PT_CHECK(strcmp(pterun_cpu_feature_name(PTERUN_CPU_ARM_DOTPROD), "dotprod") == 0);
  PT_CHECK(pterun_cpu_feature_name(0) == NULL);
  PT_CHECK(pterun_cpu_feature_name(PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2) == NULL);
  PT_CHECK(pterun_cpu_features_string(0, s, sizeof s) == 4 && strcmp(s, "none") == 0);
  PT_CHECK(pterun_cpu_features_string(PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2, NULL, 0) == 8);
  PT_CHECK(pterun_cpu_features_string(PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2, s, sizeof s) == 8);
  PT_CHECK(strcmp(s, "avx avx2") == 0);
  PT_CHECK(pterun_cpu_features_string(PTERUN_CPU_X86_SSE4_1 | PTERUN_CPU_X86_AVX2, t, sizeof t) ==
           11);
  PT_CHECK(strcmp(t, "sse4.1 ") == 0); /* truncated, NUL-terminated */
  return 0;
}

int main(void) {
  g_arena_bytes = (size_t)8 << 20;
  g_arena = aligned_alloc(64, g_arena_bytes);
  if (g_arena == NULL) return 1;
  PT_RUN(test_feature_names);
  PT_RUN(test_selection);
  PT_RUN(test_variants);
  free(g_arena);
  return pt_failures != 0;
}
