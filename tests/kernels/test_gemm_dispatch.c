/* Every f32 GEMM microkernel this CPU can run (libpterun_compute, src/compute/gemm/f32_ukernels.inc)
 * against a double-precision reference, through the blocked engine, over odd
 * sizes, strides, transposes, alpha and accumulate, with the packing buffers
 * in a scratch arena and on the stack. Outputs sit between sentinel guards and
 * strided outputs have sentinel gaps, so any write outside C fails the test.
 * Run twice by ctest: as is, and with PTERUN_ISA_MASK=0 (scalar only). */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/kernel.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

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
  const pterun_compute_f32_gemm_ukernel* uk; /* NULL: run-time selection */
  int64_t m, n, k;
  pterun_compute_matrix a, b, c;
  double alpha;
  int accumulate;
  const pterun_compute_gemm_opts* o; /* extras, or NULL */
} job;
static int g_rc; /* what the last product returned */
static job g_job;
static pterun_threadpool* g_pool; /* NULL: serial */
static size_t g_max_threads;

static PTERUN_KERNEL(run_job) {
  pterun_compute_gemm_ws ws;
  (void)args;
  (void)nargs;
  pterun_compute_gemm_init_ex(ctx, &ws, PTERUN_DTYPE_F32, g_job.uk, g_pool, g_max_threads);
  g_rc = pterun_compute_gemm_ex(&ws, g_job.m, g_job.n, g_job.k, &g_job.a, &g_job.b, &g_job.c,
                                g_job.alpha, g_job.accumulate, g_job.o);
  return PTERUN_STATUS_OK;
}

typedef struct layout {
  int a_t, b_t, c_t; /* transposed (column-major) storage */
  int pad;           /* extra elements per row/column of every matrix */
} layout;

/* One case for one microkernel (uk NULL: the default selection). */
static int check_case(const pterun_compute_f32_gemm_ukernel* uk, int64_t m, int64_t n, int64_t k,
                      layout L, double alpha, int accumulate, void* scratch, size_t scratch_bytes) {
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
  g_job.a = (pterun_compute_matrix){a, PTERUN_DTYPE_F32, L.a_t ? 1 : lda, L.a_t ? lda : 1};
  g_job.b = (pterun_compute_matrix){b, PTERUN_DTYPE_F32, L.b_t ? 1 : ldb, L.b_t ? ldb : 1};
  g_job.c = (pterun_compute_matrix){c, PTERUN_DTYPE_F32, L.c_t ? 1 : ldc, L.c_t ? ldc : 1};
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
  /* Checked within a tolerance: the emulated run must reproduce these bits. */
  if (!bad && uk != NULL) pt_variant_checked("f32_gemm", uk->name, c, sizeof(float) * (size_t)csz);
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

static int run_variant(const pterun_compute_f32_gemm_ukernel* uk, void* arena, size_t arena_bytes) {
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
   * row stride that is a multiple of 2 KiB (packed A; read in place when N is
   * one strip) and M == 1, 2*MR. */
  {
    static const int64_t big[][3] = {{300, 140, 600}, {1, 700, 530},  {13, 300, 257},
                                     {257, 129, 512}, {40, 2100, 64}, {24, 33, 1030},
                                     {32, 10, 1024}};
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
  const pterun_compute_f32_gemm_ukernel* uks = pterun_compute_f32_gemm_ukernels(&n);
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
  /* The run-time selection itself (NULL: pterun_compute_gemm_init). */
  PT_CHECK(run_variant(NULL, g_arena, g_arena_bytes) == 0);
  return 0;
}

static int test_selection(void) {
  uint64_t f = pterun_cpu_features(), d = pterun_cpu_detected_features();
  const pterun_compute_f32_gemm_ukernel* uk = pterun_compute_f32_gemm_select(f);
  const pterun_compute_f32_gemm_ukernel* m1 = pterun_compute_f32_gemm_select_m1(f);
  const char* env = getenv("PTERUN_ISA_MASK");
  char s[256];
  PT_CHECK((f & ~d) == 0);
  PT_CHECK(pterun_cpu_features() == f); /* stable */
  PT_CHECK(uk != NULL && (uk->isa & f) == uk->isa && uk->mr > 1);
  PT_CHECK(m1 == NULL || ((m1->isa & f) == m1->isa && m1->mr == 1));
  PT_CHECK(pterun_compute_f32_gemm_select(0)->isa == 0);
  PT_CHECK(pterun_compute_f32_gemm_select_m1(0) == NULL);
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

/* The same products on pools of 2 to 4 threads (and capped) give C bit for
 * bit as on the calling thread alone, for every usable microkernel, in place
 * and packed A/B, with and without spare A blocks (arena, stack). */
static int same_bits_threaded(const pterun_compute_f32_gemm_ukernel* uk, int64_t m, int64_t n,
                              int64_t k, int a_t, void* arena, size_t arena_bytes) {
  int64_t lda = a_t ? m : k;
  size_t asz = (size_t)(m * k), bsz = (size_t)(k * n), csz = (size_t)(m * n);
  float* a = malloc(sizeof(float) * asz);
  float* b = malloc(sizeof(float) * bsz);
  float* c0 = malloc(sizeof(float) * csz);
  float* c1 = malloc(sizeof(float) * csz);
  int bad = 0;
  PT_CHECK(a && b && c0 && c1);
  for (size_t i = 0; i < asz; ++i) a[i] = rnd();
  for (size_t i = 0; i < bsz; ++i) b[i] = rnd();
  g_job.uk = uk;
  g_job.m = m, g_job.n = n, g_job.k = k;
  g_job.a = (pterun_compute_matrix){a, PTERUN_DTYPE_F32, a_t ? 1 : lda, a_t ? lda : 1};
  g_job.b = (pterun_compute_matrix){b, PTERUN_DTYPE_F32, n, 1};
  g_job.alpha = 1.0;
  g_job.accumulate = 0;
  g_job.c = (pterun_compute_matrix){c0, PTERUN_DTYPE_F32, n, 1};
  g_pool = NULL;
  PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, arena, arena_bytes) ==
           PTERUN_STATUS_OK);
  for (size_t threads = 2; threads <= 4 && !bad; ++threads) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = threads;
    o.min_work_ns = 1; /* split every call: these compare thread counts */
    PT_CHECK(pterun_threadpool_create(&o, &g_pool) == PTERUN_STATUS_OK);
    for (size_t cap = 0; cap <= 2 && !bad; cap += 2) {
      g_max_threads = cap;
      memset(c1, 0xff, sizeof(float) * csz);
      g_job.c = (pterun_compute_matrix){c1, PTERUN_DTYPE_F32, n, 1};
      if (pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, arena, arena_bytes) !=
              PTERUN_STATUS_OK ||
          memcmp(c0, c1, sizeof(float) * csz) != 0) {
        fprintf(stderr, "FAILED %s m=%lld n=%lld k=%lld a_t=%d %s: %zu threads, cap %zu differ\n",
                uk ? uk->name : "(default)", (long long)m, (long long)n, (long long)k, a_t,
                arena ? "arena" : "stack", threads, cap);
        bad = 1;
      }
    }
    pterun_threadpool_destroy(g_pool);
    g_pool = NULL;
    g_max_threads = 0;
  }
  free(a);
  free(b);
  free(c0);
  free(c1);
  return bad;
}

static int test_threads_bit_identical(void) {
  static const int64_t shapes[][3] = {{1, 700, 530},   {5, 300, 64},    {64, 256, 128},
                                      {300, 140, 600}, {257, 129, 512}, {40, 2100, 64},
                                      {512, 512, 300}};
  size_t n;
  const pterun_compute_f32_gemm_ukernel* uks = pterun_compute_f32_gemm_ukernels(&n);
  uint64_t features = pterun_cpu_features();
  for (size_t u = 0; u <= n; ++u) {
    const pterun_compute_f32_gemm_ukernel* uk = u < n ? &uks[u] : NULL; /* NULL: selection */
    if (uk != NULL && (uk->isa & features) != uk->isa) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
      for (int a_t = 0; a_t < 2; ++a_t) {
        PT_CHECK(same_bits_threaded(uk, shapes[s][0], shapes[s][1], shapes[s][2], a_t, g_arena,
                                    g_arena_bytes) == 0);
        if (s % 3 == 0)
          PT_CHECK(same_bits_threaded(uk, shapes[s][0], shapes[s][1], shapes[s][2], a_t, NULL, 0) ==
                   0);
      }
  }
  return 0;
}

/* The epilogue (row bias, then ReLU or clamp), in the microkernel's
 * registers on full tiles and over C on edge tiles, gives the bits of a C
 * filled with the bias, the product accumulated into it and
 * pterun_compute_f32_activate: on
 * NaN, -0, values past the bounds, several K blocks, every microkernel. */
static int epilogue_case(const pterun_compute_f32_gemm_ukernel* uk, int64_t m, int64_t n, int64_t k,
                         int act) {
  float* a = malloc((size_t)(m * k) * sizeof(float));
  float* b = malloc((size_t)(k * n) * sizeof(float));
  float* bias = malloc((size_t)m * sizeof(float));
  float* c1 = malloc((size_t)(m * n) * sizeof(float));
  float* c2 = malloc((size_t)(m * n) * sizeof(float));
  PT_CHECK(a && b && bias && c1 && c2);
  for (int64_t i = 0; i < m * k; ++i) a[i] = rnd();
  for (int64_t i = 0; i < k * n; ++i) b[i] = rnd();
  for (int64_t i = 0; i < m; ++i) bias[i] = 0.25f * rnd();
  for (int64_t kk = 0; kk < k; ++kk) a[kk] = 0.0f; /* row 0: -0 products where b < 0 ... */
  bias[0] = -0.0f;                                 /* ... and a -0 bias: -0 sums */
  if (m > 2) a[2 * k] = NAN;                       /* row 2: NaN */
  const float lo = -0.25f, hi = 0.3f;
  pterun_compute_gemm_opts o = {
      .struct_size = sizeof o, .activation = act, .lo = lo, .hi = hi, .bias = bias};
  pterun_compute_matrix ma = {a, PTERUN_DTYPE_F32, k, 1}, mb = {b, PTERUN_DTYPE_F32, n, 1};
  pterun_compute_matrix mc = {c1, PTERUN_DTYPE_F32, n, 1};
  job j = {uk, m, n, k, ma, mb, mc, 1.0, 0, &o};
  g_job = j;
  PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
           PTERUN_STATUS_OK);
  /* The reference: C filled with the bias, the product accumulated, then
   * the activation. */
  for (int64_t i = 0; i < m; ++i)
    for (int64_t jj = 0; jj < n; ++jj) c2[i * n + jj] = bias[i];
  g_job.c.data = c2;
  g_job.o = NULL;
  g_job.accumulate = 1;
  PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
           PTERUN_STATUS_OK);
  g_job.accumulate = 0;
  pterun_compute_f32_activate(c2, (size_t)(m * n), act, lo, hi);
  for (int64_t i = 0; i < m * n; ++i)
    if (memcmp(&c1[i], &c2[i], 4) != 0) {
      fprintf(stderr, "%s m%d n%d k%d act%d: C[%d] %a vs %a\n", uk ? uk->name : "default", (int)m,
              (int)n, (int)k, act, (int)i, c1[i], c2[i]);
      break;
    }
  PT_CHECK(memcmp(c1, c2, (size_t)(m * n) * sizeof(float)) == 0);
  free(a);
  free(b);
  free(bias);
  free(c1);
  free(c2);
  return 0;
}

static int test_epilogue(void) {
  size_t n;
  const pterun_compute_f32_gemm_ukernel* uks = pterun_compute_f32_gemm_ukernels(&n);
  uint64_t features = pterun_cpu_features();
  static const int64_t shapes[][3] = {{24, 64, 16}, {13, 37, 5}, {30, 70, 600}, {1, 40, 9}};
  static const int acts[] = {PTERUN_COMPUTE_ACT_NONE, PTERUN_COMPUTE_ACT_RELU,
                             PTERUN_COMPUTE_ACT_CLAMP};
  for (size_t i = 0; i <= n; ++i) {
    const pterun_compute_f32_gemm_ukernel* uk = i < n ? &uks[i] : NULL; /* NULL: selection */
    if (uk != NULL && (uk->isa & features) != uk->isa) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
      for (size_t t = 0; t < 3; ++t)
        PT_CHECK(epilogue_case(uk, shapes[s][0], shapes[s][1], shapes[s][2], acts[t]) == 0);
  }
  return 0;
}

/* The last rows of M may run on a shorter kernel (avx2_4x16 after
 * avx2_6x16: M = 32 is 6+6+6+6+4+4 rows; avx512f_4x32 after avx512f_12x32:
 * M = 32 is 12+12+4+4, M = 31 12+12+4+3, from a packed A panel's middle
 * rows when A is packed); each C element still gets the
 * same FMAs in the same order, so rows of an M that ends in short tiles are
 * bit for bit those of a larger M that ends in full tiles, with A read in
 * place or packed (row stride 512), with and without bias and ReLU. */
static int test_short_tiles(void) {
  static const int64_t ms[] = {2, 3, 4, 7, 8, 10, 26, 28, 31, 32, 130};
  const int64_t n = 40, k = 300, lda_packed = 512;
  const pterun_compute_f32_gemm_ukernel* sel =
      pterun_compute_f32_gemm_select(pterun_cpu_features());
  const int64_t mr = sel->mr;
  for (size_t t = 0; t < sizeof ms / sizeof ms[0] * 4; ++t) {
    const int64_t m = ms[t / 4], m_full = (m + mr - 1) / mr * mr;
    const int64_t lda = t % 2 ? lda_packed : k;
    const int ep = (int)(t / 2 % 2);
    float* a = malloc(sizeof(float) * (size_t)(m_full * lda));
    float* b = malloc(sizeof(float) * (size_t)(k * n));
    float* bias = malloc(sizeof(float) * (size_t)m_full);
    float* c1 = malloc(sizeof(float) * (size_t)(m_full * n));
    float* c2 = malloc(sizeof(float) * (size_t)(m_full * n));
    PT_CHECK(a && b && bias && c1 && c2);
    for (int64_t i = 0; i < m_full * lda; ++i) a[i] = rnd();
    for (int64_t i = 0; i < k * n; ++i) b[i] = rnd();
    for (int64_t i = 0; i < m_full; ++i) bias[i] = rnd();
    pterun_compute_gemm_opts o = {.struct_size = sizeof o,
                                  .activation = ep ? PTERUN_COMPUTE_ACT_RELU : 0,
                                  .bias = ep ? bias : NULL};
    job j = {NULL,
             m,
             n,
             k,
             {a, PTERUN_DTYPE_F32, lda, 1},
             {b, PTERUN_DTYPE_F32, n, 1},
             {c1, PTERUN_DTYPE_F32, n, 1},
             1.0,
             0,
             &o};
    g_job = j;
    PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
             PTERUN_STATUS_OK);
    g_job.m = m_full;
    g_job.c.data = c2;
    PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
             PTERUN_STATUS_OK);
    g_job.o = NULL;
    if (memcmp(c1, c2, sizeof(float) * (size_t)(m * n)) != 0)
      fprintf(stderr, "%s m=%lld lda=%lld epilogue=%d: rows differ from m=%lld\n", sel->name,
              (long long)m, (long long)lda, ep, (long long)m_full);
    PT_CHECK(memcmp(c1, c2, sizeof(float) * (size_t)(m * n)) == 0);
    free(a);
    free(b);
    free(bias);
    free(c1);
    free(c2);
  }
  return 0;
}

/* A caller's B packer (pterun_compute_gemm_opts.pack_b) that writes the
 * documented strip layout from a row-major K x N matrix: products through it
 * give the bits of the same product reading B, on any pool, with and without
 * a bias/activation, in the arena and on the stack. */
typedef struct plain_b {
  const float* b;
  int64_t n;
  atomic_int calls;
} plain_b;

static void plain_pack_b(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                         int64_t nr) {
  plain_b* pb = ctx;
  for (int64_t s = 0; s * nr < nc; ++s)
    for (int64_t kk = 0; kk < kc; ++kk)
      for (int64_t c = 0; c < nr; ++c)
        dst[(s * kc + kk) * nr + c] =
            s * nr + c < nc ? pb->b[(k0 + kk) * pb->n + j0 + s * nr + c] : 0.0f;
  atomic_fetch_add_explicit(&pb->calls, 1, memory_order_relaxed);
}

static int pack_b_case(int64_t m, int64_t n, int64_t k, int act, void* arena, size_t arena_bytes) {
  size_t asz = (size_t)(m * k), bsz = (size_t)(k * n), csz = (size_t)(m * n);
  float* a = malloc(sizeof(float) * asz);
  float* b = malloc(sizeof(float) * bsz);
  float* bias = malloc(sizeof(float) * (size_t)m);
  float* c0 = malloc(sizeof(float) * csz);
  float* c1 = malloc(sizeof(float) * csz);
  PT_CHECK(a && b && bias && c0 && c1);
  for (size_t i = 0; i < asz; ++i) a[i] = rnd();
  for (size_t i = 0; i < bsz; ++i) b[i] = rnd();
  for (int64_t i = 0; i < m; ++i) bias[i] = rnd();
  plain_b pb;
  pb.b = b;
  pb.n = n;
  atomic_init(&pb.calls, 0);
  pterun_compute_gemm_opts plain = {
      .struct_size = sizeof plain, .activation = act, .lo = -0.5f, .hi = 0.5f, .bias = bias};
  pterun_compute_gemm_opts packer = plain;
  packer.pack_b = plain_pack_b;
  packer.pack_b_ctx = &pb;
  /* B's rows in place (b_row_offsets): the rows scattered over a larger
   * buffer in reverse order, 3 floats apart, each followed by NaN guards the
   * engine must never read into C. */
  const int64_t ld = n + 3;
  float* scattered = malloc(sizeof(float) * (size_t)(k * ld));
  int64_t* offs = malloc(sizeof(int64_t) * (size_t)k);
  PT_CHECK(scattered && offs);
  for (int64_t i = 0; i < k * ld; ++i) scattered[i] = NAN;
  for (int64_t r = 0; r < k; ++r) {
    offs[r] = (k - 1 - r) * ld;
    memcpy(scattered + offs[r], b + r * n, sizeof(float) * (size_t)n);
  }
  pterun_compute_gemm_opts in_place = plain;
  in_place.b_row_base = scattered;
  in_place.b_row_offsets = offs;
  job j = {NULL,
           m,
           n,
           k,
           {a, PTERUN_DTYPE_F32, k, 1},
           {b, PTERUN_DTYPE_F32, n, 1},
           {c0, PTERUN_DTYPE_F32, n, 1},
           1.0,
           0,
           &plain};
  g_job = j;
  g_pool = NULL;
  g_max_threads = 0;
  PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, arena, arena_bytes) ==
           PTERUN_STATUS_OK);
  for (size_t threads = 1; threads <= 3; ++threads) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = threads;
    o.min_work_ns = 1;
    PT_CHECK(pterun_threadpool_create(&o, &g_pool) == PTERUN_STATUS_OK);
    memset(c1, 0xff, sizeof(float) * csz);
    g_job.b.data = NULL; /* never read with a packer */
    g_job.c.data = c1;
    g_job.o = &packer;
    atomic_store(&pb.calls, 0);
    PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, arena, arena_bytes) ==
             PTERUN_STATUS_OK);
    if (atomic_load(&pb.calls) == 0 || memcmp(c0, c1, sizeof(float) * csz) != 0) {
      fprintf(stderr, "FAILED pack_b m=%lld n=%lld k=%lld act=%d %s threads=%zu calls=%d\n",
              (long long)m, (long long)n, (long long)k, act, arena ? "arena" : "stack", threads,
              atomic_load(&pb.calls));
      return 1;
    }
    memset(c1, 0xff, sizeof(float) * csz);
    g_job.o = &in_place;
    PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, arena, arena_bytes) ==
             PTERUN_STATUS_OK);
    pterun_threadpool_destroy(g_pool);
    g_pool = NULL;
    if (memcmp(c0, c1, sizeof(float) * csz) != 0) {
      fprintf(stderr, "FAILED b_row_offsets m=%lld n=%lld k=%lld act=%d %s threads=%zu\n",
              (long long)m, (long long)n, (long long)k, act, arena ? "arena" : "stack", threads);
      return 1;
    }
  }
  free(scattered);
  free(offs);
  free(a);
  free(b);
  free(bias);
  free(c0);
  free(c1);
  return 0;
}

/* pterun_compute_gemm_opts grows at its end and is read by its struct_size
 * (pterun/options.h): an older (smaller) caller's missing fields take their
 * defaults and bytes past its struct_size are never read; a newer caller is
 * accepted only when the fields this build does not know are zero; a
 * struct_size of 0 (opts not initialised) is refused. */
static atomic_int g_stray_packs;
static void stray_pack_b(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                         int64_t nr) {
  (void)ctx, (void)dst, (void)k0, (void)kc, (void)j0, (void)nc, (void)nr;
  atomic_fetch_add_explicit(&g_stray_packs, 1, memory_order_relaxed);
}

static int test_opts_struct_size(void) {
  enum { M = 13, N = 40, K = 70 };
  static float a[M * K], b[K * N], bias[M], c0[M * N], c1[M * N];
  struct newer {
    pterun_compute_gemm_opts o;
    uint64_t later; /* a field a future header might add */
  } nw;
  /* A caller built before pack_b was added. */
  const size_t older = offsetof(pterun_compute_gemm_opts, pack_b);
  for (size_t i = 0; i < M * K; ++i) a[i] = rnd();
  for (size_t i = 0; i < K * N; ++i) b[i] = rnd();
  for (size_t i = 0; i < M; ++i) bias[i] = rnd();
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  o.activation = PTERUN_COMPUTE_ACT_RELU;
  o.bias = bias;
  job j = {NULL,
           M,
           N,
           K,
           {a, PTERUN_DTYPE_F32, K, 1},
           {b, PTERUN_DTYPE_F32, N, 1},
           {c0, PTERUN_DTYPE_F32, N, 1},
           1.0,
           0,
           &o};
  g_pool = NULL;
  g_max_threads = 0;
  g_job = j;
  PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
           PTERUN_STATUS_OK);
  PT_CHECK(g_rc == 0);
  /* (struct_size, later field, pack_b set, expected return): what each caller gets. */
  const struct {
    size_t size;
    uint64_t later;
    int stray, rc;
  } cases[] = {
      {older, 0, 1, 0},      /* an older caller: pack_b is past its struct_size, unread */
      {sizeof o, 0, 0, 0},   /* this header */
      {sizeof nw, 0, 0, 0},  /* a newer caller leaving its new field at zero */
      {sizeof nw, 1, 0, -1}, /* ... or setting it: refused */
      {0, 0, 0, -1},         /* not initialised (no PTERUN_COMPUTE_GEMM_OPTS_INIT) */
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; ++t) {
    memset(&nw, 0, sizeof nw);
    nw.o = o;
    nw.o.struct_size = cases[t].size;
    nw.later = cases[t].later;
    if (cases[t].stray) nw.o.pack_b = stray_pack_b;
    memset(c1, 0xff, sizeof c1);
    atomic_store(&g_stray_packs, 0);
    g_job = j;
    g_job.c.data = c1;
    g_job.o = &nw.o;
    PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
             PTERUN_STATUS_OK);
    int ok = g_rc == cases[t].rc && atomic_load(&g_stray_packs) == 0;
    if (cases[t].rc == 0) {
      ok = ok && memcmp(c0, c1, sizeof c0) == 0;
    } else {
      for (size_t i = 0; i < M * N && ok; ++i) {
        uint32_t bits;
        memcpy(&bits, &c1[i], sizeof bits);
        ok = bits == 0xffffffffu; /* C untouched */
      }
    }
    if (!ok) {
      fprintf(stderr, "FAILED opts struct_size case %zu (rc %d)\n", t, g_rc);
      return 1;
    }
  }
  return 0;
}

static int test_pack_b(void) {
  static const int64_t shapes[][3] = {{1, 70, 30},   {5, 300, 64},   {32, 4096, 288},
                                      {13, 37, 700}, {64, 129, 577}, {130, 2500, 96}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
    for (int act = 0; act <= PTERUN_COMPUTE_ACT_CLAMP; ++act) {
      PT_CHECK(pack_b_case(shapes[s][0], shapes[s][1], shapes[s][2], act, g_arena, g_arena_bytes) ==
               0);
      if (act == 0)
        PT_CHECK(pack_b_case(shapes[s][0], shapes[s][1], shapes[s][2], act, NULL, 0) == 0);
    }
  return 0;
}

/* pterun_compute_gemm_pack_a_scaled gives the bytes of packing a copy of A
 * whose row i was scaled as (float)((double)a * scale[i]) (a batch norm
 * folded into a convolution weight, kernels/portable/conv/conv_bn.c): rows
 * not a multiple of MR, several K blocks, a strided A. */
static int test_pack_a_scaled(void) {
  static const int64_t shapes[][2] = {{32, 27}, {33, 300}, {7, 1030}, {130, 576}, {1, 40}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    for (int strided = 0; strided < 2; ++strided) {
      const int64_t m = shapes[s][0], k = shapes[s][1];
      float* a = malloc(sizeof(float) * (size_t)(m * k));
      float* folded = malloc(sizeof(float) * (size_t)(m * k));
      double* scale = malloc(sizeof(double) * (size_t)m);
      size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_A, m, k);
      size_t round = (bytes + 63) / 64 * 64;
      void* m0 = aligned_alloc(64, round);
      void* m1 = aligned_alloc(64, round);
      PT_CHECK(a && folded && scale && bytes > 0 && m0 && m1);
      memset(m0, 0, round);
      memset(m1, 0, round);
      for (int64_t i = 0; i < m * k; ++i) a[i] = rnd();
      for (int64_t i = 0; i < m; ++i) scale[i] = (double)rnd() * 3.0 + 1.0 / 3.0;
      /* row-major, or column-major (rs 1, cs m) */
      const int64_t rs = strided ? 1 : k, cs = strided ? m : 1;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j)
          folded[i * rs + j * cs] = (float)((double)a[i * rs + j * cs] * scale[i]);
      pterun_compute_matrix ma = {a, PTERUN_DTYPE_F32, rs, cs};
      pterun_compute_matrix mf = {folded, PTERUN_DTYPE_F32, rs, cs};
      const pterun_compute_packed* p0 =
          pterun_compute_gemm_pack(m0, bytes, PTERUN_COMPUTE_OPERAND_A, m, k, &mf);
      const pterun_compute_packed* p1 =
          pterun_compute_gemm_pack_a_scaled(m1, bytes, m, k, &ma, scale);
      PT_CHECK(p0 != NULL && p1 != NULL);
      /* the floats after the 64-byte header (which holds a data pointer) */
      PT_CHECK(memcmp((const char*)m0 + 64, (const char*)m1 + 64, bytes - 64) == 0);
      PT_CHECK(pterun_compute_gemm_pack_a_scaled(m1, bytes, m, k, &ma, NULL) == NULL);
      free(a);
      free(folded);
      free(scale);
      free(m0);
      free(m1);
    }
  }
  return 0;
}

/* B packed at load (pterun_compute_gemm_pack; the product then runs every K
 * block of a tile in one task, and packs a strided A whole, once; M = 1 reads
 * it with the 1-row kernel) gives the bits of the same product reading B,
 * on 1 and 2 threads, with and without bias/ReLU, over several K blocks. */
static int test_packed_b_same_bits(void) {
  /* K = 1024 and 512 with M > 2 MR: A rows 2 KiB multiples apart, packed
   * whole into the free B block. */
  static const int64_t shapes[][3] = {{32, 1024, 784},
                                      {130, 200, 300},
                                      {7, 48, 513},
                                      {300, 70, 1030},
                                      {32, 96, 1024},
                                      {301, 40, 512},
                                      /* M = 1: the 1-row kernel reads the GEMM kernel's
                                       * strips two at a time; N past the last strip. */
                                      {1, 1024, 256},
                                      {1, 1000, 300},
                                      {1, 40, 1030},
                                      {1, 48, 513},
                                      {1, 8, 70}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    float* a = malloc(sizeof(float) * (size_t)(m * k));
    float* b = malloc(sizeof(float) * (size_t)(k * n));
    float* bias = malloc(sizeof(float) * (size_t)m);
    float* c0 = malloc(sizeof(float) * (size_t)(m * n));
    float* c1 = malloc(sizeof(float) * (size_t)(m * n));
    size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, k, n);
    void* mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
    PT_CHECK(a && b && bias && c0 && c1 && bytes > 0 && mem);
    for (int64_t i = 0; i < m * k; ++i) a[i] = rnd();
    for (int64_t i = 0; i < k * n; ++i) b[i] = rnd();
    for (int64_t i = 0; i < m; ++i) bias[i] = rnd();
    pterun_compute_matrix mb = {b, PTERUN_DTYPE_F32, n, 1};
    const pterun_compute_packed* pb =
        pterun_compute_gemm_pack(mem, bytes, PTERUN_COMPUTE_OPERAND_B, k, n, &mb);
    PT_CHECK(pb != NULL);
    for (int ep = 0; ep < 2; ++ep)
      for (size_t threads = 1; threads <= 2; ++threads) {
        pterun_compute_gemm_opts plain = {.struct_size = sizeof plain,
                                          .activation = ep ? PTERUN_COMPUTE_ACT_RELU : 0,
                                          .bias = ep ? bias : NULL};
        pterun_compute_gemm_opts packed = plain;
        packed.packed_b = pb;
        job j = {NULL, m, n,     k, {a, PTERUN_DTYPE_F32, k, 1}, mb, {c0, PTERUN_DTYPE_F32, n, 1},
                 1.0,  0, &plain};
        g_pool = NULL;
        g_job = j;
        PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
                 PTERUN_STATUS_OK);
        if (threads > 1) {
          pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
          o.threads = threads;
          o.min_work_ns = 1;
          PT_CHECK(pterun_threadpool_create(&o, &g_pool) == PTERUN_STATUS_OK);
        }
        g_job.c.data = c1;
        g_job.o = &packed;
        memset(c1, 0xff, sizeof(float) * (size_t)(m * n));
        PT_CHECK(pterun_kernel_invoke(run_job, "gemm", NULL, 0, NULL, g_arena, g_arena_bytes) ==
                 PTERUN_STATUS_OK);
        if (g_pool != NULL) pterun_threadpool_destroy(g_pool);
        g_pool = NULL;
        g_job.o = NULL;
        if (memcmp(c0, c1, sizeof(float) * (size_t)(m * n)) != 0)
          fprintf(stderr, "packed B m=%lld n=%lld k=%lld ep=%d threads=%zu: bits differ\n",
                  (long long)m, (long long)n, (long long)k, ep, threads);
        PT_CHECK(memcmp(c0, c1, sizeof(float) * (size_t)(m * n)) == 0);
      }
    free(a);
    free(b);
    free(bias);
    free(c0);
    free(c1);
    free(mem);
  }
  return 0;
}

int main(void) {
  g_arena_bytes = (size_t)8 << 20;
  g_arena = aligned_alloc(64, g_arena_bytes);
  if (g_arena == NULL) return 1;
  PT_RUN(test_feature_names);
  PT_RUN(test_selection);
  PT_RUN(test_variants);
  PT_RUN(test_epilogue);
  PT_RUN(test_short_tiles);
  PT_RUN(test_packed_b_same_bits);
  PT_RUN(test_pack_a_scaled);
  PT_RUN(test_threads_bit_identical);
  PT_RUN(test_pack_b);
  PT_RUN(test_opts_struct_size);
  free(g_arena);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures != 0;
}
