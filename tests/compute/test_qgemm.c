/* int8 GEMM of libpterun_compute (pterun_compute_qs8_*): every microkernel
 * this CPU can run against a direct int64 reference on random and edge shapes
 * (K not a multiple of 4 or of the K block, M = 1, N past a task's columns,
 * zero points at the ends of their ranges, per-column weight zero points,
 * strided A, a row function for A, every output type); results identical over
 * a thread pool; packing's argument checks. ctest runs it again with
 * PTERUN_ISA_MASK=0 (the scalar microkernel only). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 11);
}

/* The epilogue of pterun/compute.h written out directly, on exact int64 sums. */
static float ref_round(float p) {
  return nearbyintf(p);
}

typedef struct shape {
  int64_t m, n, k;
  int a_dtype, c_dtype;
  int32_t a_zp;
  int w_zp, per_col, bias, acs; /* A column stride (1: contiguous) */
  int c_cm;                     /* C column-major (a convolution's NCHW output) */
} shape;

static void* aligned_buf(size_t n) {
  void* p = NULL;
  if (posix_memalign(&p, 64, n < 64 ? 64 : n) != 0) return NULL;
  return p;
}

typedef struct rows_ctx {
  const uint8_t* a;
  int64_t k;
} rows_ctx;

static void a_rows(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc, uint8_t* dst) {
  const rows_ctx* rc = (const rows_ctx*)ctx;
  int64_t r;
  for (r = 0; r < rows; ++r) memcpy(dst + r * kc, rc->a + (i0 + r) * rc->k + k0, (size_t)kc);
}

/* Runs one shape with microkernel uk (and pool) against the reference. */
static int run_shape(const shape* s, const pterun_compute_qs8_gemm_ukernel* uk,
                     pterun_threadpool* pool, int use_rows) {
  const int64_t m = s->m, n = s->n, k = s->k;
  const int64_t acs = s->acs;
  uint8_t* a = malloc((size_t)(m * k * acs + 1));
  int8_t* w = malloc((size_t)(n * k));
  int32_t* wzp = malloc(sizeof(int32_t) * (size_t)n);
  float* scale = malloc(sizeof(float) * (size_t)n);
  float* bias = malloc(sizeof(float) * (size_t)n);
  void* out = malloc(sizeof(float) * (size_t)(m * n));
  void* want = malloc(sizeof(float) * (size_t)(m * n));
  size_t cap = pterun_compute_qs8_pack_size(uk, n, k);
  void* buf = aligned_buf(cap);
  int64_t i, j, kk;
  int rc = 1;
  if (!a || !w || !wzp || !scale || !bias || !out || !want || !buf || cap == 0) goto done;
  for (i = 0; i < m * k * acs; ++i) a[i] = (uint8_t)rnd();
  for (i = 0; i < n * k; ++i) w[i] = (int8_t)(rnd() & 0xff);
  /* Some rows at the extremes of the weight range. */
  for (kk = 0; kk < k && n > 2; ++kk) w[0 * k + kk] = -128, w[1 * k + kk] = 127;
  for (j = 0; j < n; ++j) {
    wzp[j] = s->w_zp ? (int32_t)(rnd() % 256) - 128 : 0;
    scale[j] = s->per_col ? 1e-4f * (float)(1 + rnd() % 100) : 3e-4f;
    bias[j] = (float)((int)(rnd() % 2001) - 1000) * 1e-3f;
  }
  pterun_compute_qs8_packed pk;
  PT_CHECK(pterun_compute_qs8_pack(uk, n, k, w, k, 1, buf, cap, &pk) == 0);
  pterun_compute_qs8_epilogue ep;
  memset(&ep, 0, sizeof ep);
  ep.a_zp = s->a_zp;
  ep.w_zp = s->w_zp ? wzp : NULL;
  ep.scale = scale;
  ep.scale_per_column = s->per_col;
  ep.bias = s->bias ? bias : NULL;
  ep.f_min = s->bias ? 0.0f : -INFINITY; /* a fused relu in half the cases */
  ep.f_max = INFINITY;
  ep.out_inv_scale = 1.0f / 0.05f;
  ep.out_zp = s->c_dtype == PTERUN_DTYPE_U8 ? 100 : -3;
  ep.q_min = s->c_dtype == PTERUN_DTYPE_U8 ? 0 : -128;
  ep.q_max = s->c_dtype == PTERUN_DTYPE_U8 ? 255 : (s->bias ? 100 : 127);

  /* Reference: exact int64 sums over the true zero-point-shifted values. */
  for (i = 0; i < m; ++i)
    for (j = 0; j < n; ++j) {
      const int64_t at = s->c_cm ? j * m + i : i * n + j;
      int64_t v = 0;
      for (kk = 0; kk < k; ++kk) {
        const uint8_t raw = a[(i * k + kk) * acs];
        const int64_t av = s->a_dtype == PTERUN_DTYPE_I8 ? (int64_t)(int8_t)raw : (int64_t)raw;
        v += (av - s->a_zp) * ((int64_t)w[j * k + kk] - (s->w_zp ? wzp[j] : 0));
      }
      float y = (float)v * scale[s->per_col ? j : 0];
      if (s->bias) y += bias[j];
      if (s->c_dtype == PTERUN_DTYPE_F32) {
        y = y < ep.f_min ? ep.f_min : y;
        ((float*)want)[at] = y;
      } else {
        int64_t q = (int64_t)((float)ep.out_zp + ref_round(y * ep.out_inv_scale));
        q = q < ep.q_min ? ep.q_min : q > ep.q_max ? ep.q_max : q;
        if (s->c_dtype == PTERUN_DTYPE_U8)
          ((uint8_t*)want)[at] = (uint8_t)q;
        else
          ((int8_t*)want)[at] = (int8_t)q;
      }
    }
  pterun_compute_matrix am = {a, s->a_dtype, k * acs, acs};
  pterun_compute_matrix cm = {out, s->c_dtype, s->c_cm ? 1 : n, s->c_cm ? m : 1};
  rows_ctx rcx = {a, k};
  if (use_rows && acs != 1) goto ok; /* the row function reads contiguous rows */
  PT_CHECK(pterun_compute_qs8_gemm(pool, 0, m, &am, use_rows ? a_rows : NULL, &rcx, s->a_dtype, &pk,
                                   &ep, &cm) == 0);
  {
    const size_t esz = s->c_dtype == PTERUN_DTYPE_F32 ? 4 : 1;
    if (memcmp(out, want, esz * (size_t)(m * n)) != 0) {
      for (i = 0; i < m * n; ++i)
        if (memcmp((char*)out + i * (int64_t)esz, (char*)want + i * (int64_t)esz, esz) != 0) break;
      fprintf(stderr, "%s: m=%lld n=%lld k=%lld a=%d c=%d azp=%d: first difference at %lld\n",
              uk->name, (long long)m, (long long)n, (long long)k, s->a_dtype, s->c_dtype, s->a_zp,
              (long long)i);
      goto done;
    }
  }
ok:
  rc = 0;
done:
  free(a), free(w), free(wzp), free(scale), free(bias), free(out), free(want), free(buf);
  return rc;
}

static const shape k_shapes[] = {
    /* m, n, k, a, c, a_zp, w_zp, per_col, bias, acs, c_cm */
    {1, 1, 1, PTERUN_DTYPE_U8, PTERUN_DTYPE_U8, 0, 0, 0, 0, 1, 0},
    {1, 37, 27, PTERUN_DTYPE_I8, PTERUN_DTYPE_F32, -128, 0, 1, 1, 1, 0},
    {7, 8, 16, PTERUN_DTYPE_U8, PTERUN_DTYPE_U8, 255, 0, 1, 1, 1, 0},
    {13, 33, 5, PTERUN_DTYPE_I8, PTERUN_DTYPE_I8, 127, 1, 1, 0, 1, 0},
    {64, 64, 64, PTERUN_DTYPE_I8, PTERUN_DTYPE_I8, 3, 0, 1, 1, 1, 0},
    {50, 300, 99, PTERUN_DTYPE_U8, PTERUN_DTYPE_F32, 128, 1, 0, 1, 3, 0},
    {9, 17, 1500, PTERUN_DTYPE_I8, PTERUN_DTYPE_U8, -7, 0, 1, 1, 1, 0},
    {3, 70, 2051, PTERUN_DTYPE_U8, PTERUN_DTYPE_I8, 200, 1, 1, 1, 2, 0},
    {100, 24, 144, PTERUN_DTYPE_U8, PTERUN_DTYPE_U8, 0, 0, 1, 1, 1, 0},
    {257, 40, 36, PTERUN_DTYPE_I8, PTERUN_DTYPE_F32, 0, 0, 1, 0, 1, 0},
    /* column-major C: staged runs (several, a short last one), rows past a
     * task, a strided float C */
    {257, 40, 36, PTERUN_DTYPE_I8, PTERUN_DTYPE_I8, -5, 0, 1, 1, 1, 1},
    {131, 300, 27, PTERUN_DTYPE_U8, PTERUN_DTYPE_U8, 3, 1, 1, 1, 1, 1},
    {5, 9, 70, PTERUN_DTYPE_I8, PTERUN_DTYPE_U8, 0, 0, 0, 1, 1, 1},
    {70, 33, 40, PTERUN_DTYPE_I8, PTERUN_DTYPE_F32, 1, 0, 1, 1, 1, 1},
    /* a small A read by several runs of columns: packed once (prepack),
     * signed, with weight zero points (its row sums), a staged C */
    {32, 600, 200, PTERUN_DTYPE_I8, PTERUN_DTYPE_I8, -3, 0, 1, 1, 1, 0},
    {40, 520, 130, PTERUN_DTYPE_I8, PTERUN_DTYPE_F32, 5, 1, 1, 1, 1, 0},
    {24, 300, 64, PTERUN_DTYPE_I8, PTERUN_DTYPE_U8, 2, 0, 1, 1, 1, 1},
};

static int test_every_ukernel(void) {
  size_t nuk, u, i;
  const pterun_compute_qs8_gemm_ukernel* uks = pterun_compute_qs8_gemm_ukernels(&nuk);
  const uint64_t have = pterun_cpu_features();
  size_t ran = 0;
  PT_CHECK(nuk >= 1 && uks[0].isa == 0);
  for (u = 0; u < nuk; ++u) {
    if ((uks[u].isa & have) != uks[u].isa) {
      printf("     %s: not run (this CPU lacks its ISA)\n", uks[u].name);
      continue;
    }
    ++ran;
    for (i = 0; i < sizeof k_shapes / sizeof k_shapes[0]; ++i) {
      PT_CHECK(run_shape(&k_shapes[i], &uks[u], NULL, 0) == 0);
      PT_CHECK(run_shape(&k_shapes[i], &uks[u], NULL, 1) == 0);
    }
    pt_variant_checked("qs8_gemm", uks[u].name, NULL, 0); /* exact reference */
    printf("     %s: %zu shapes match\n", uks[u].name, sizeof k_shapes / sizeof k_shapes[0]);
  }
  PT_CHECK(ran >= 1);
  /* The default selection honours PTERUN_ISA_MASK through pterun_cpu_features. */
  PT_CHECK((pterun_compute_qs8_gemm_select(have)->isa & have) ==
           pterun_compute_qs8_gemm_select(have)->isa);
  PT_CHECK(pterun_compute_qs8_gemm_select(0) == &uks[0]);
  return 0;
}

static int test_threads(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  pterun_threadpool* pool = NULL;
  size_t i;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  PT_CHECK(pterun_threadpool_create(&o, &pool) == PTERUN_STATUS_OK);
  for (i = 0; i < sizeof k_shapes / sizeof k_shapes[0]; ++i)
    if (run_shape(&k_shapes[i], pterun_compute_qs8_gemm_select(pterun_cpu_features()), pool, 0)) {
      pterun_threadpool_destroy(pool);
      return 1;
    }
  pterun_threadpool_destroy(pool);
  return 0;
}

static int test_pack_checks(void) {
  const pterun_compute_qs8_gemm_ukernel* uk = pterun_compute_qs8_gemm_select(0);
  int8_t w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  pterun_compute_qs8_packed pk;
  size_t cap = pterun_compute_qs8_pack_size(uk, 2, 4);
  void* buf = aligned_buf(cap + 64);
  PT_CHECK(buf != NULL && cap > 0);
  PT_CHECK(pterun_compute_qs8_pack_size(uk, 0, 4) == 0);
  PT_CHECK(pterun_compute_qs8_pack_size(uk, 2, 0) == 0);
  PT_CHECK(pterun_compute_qs8_pack_size(uk, 2, PTERUN_COMPUTE_QS8_MAX_K + 1) == 0);
  PT_CHECK(pterun_compute_qs8_pack_size(uk, INT64_MAX, 4) == 0);
  PT_CHECK(pterun_compute_qs8_pack(uk, 2, 4, w, 4, 1, buf, cap - 1, &pk) == -1);
  PT_CHECK(pterun_compute_qs8_pack(uk, 2, 4, w, 4, 1, (char*)buf + 1, cap, &pk) == -1);
  PT_CHECK(pterun_compute_qs8_pack(uk, 2, 4, w, 4, 1, buf, cap, &pk) == 0);
  PT_CHECK(pk.col_sum[0] == 10 && pk.col_sum[1] == 26 && pk.kq == 1);
  {
    pterun_compute_qs8_epilogue ep;
    float sc = 1.0f, out[2];
    uint8_t a[4] = {1, 1, 1, 1};
    pterun_compute_matrix am = {a, PTERUN_DTYPE_U8, 4, 1}, cm = {out, PTERUN_DTYPE_F32, 2, 1};
    memset(&ep, 0, sizeof ep);
    ep.scale = &sc;
    ep.f_min = -INFINITY, ep.f_max = INFINITY;
    PT_CHECK(pterun_compute_qs8_gemm(NULL, 0, 1, &am, NULL, NULL, PTERUN_DTYPE_I16, &pk, &ep,
                                     &cm) == -1);
    am.dtype = PTERUN_DTYPE_I8;
    PT_CHECK(pterun_compute_qs8_gemm(NULL, 0, 1, &am, NULL, NULL, PTERUN_DTYPE_U8, &pk, &ep, &cm) ==
             -1); /* dtype mismatch */
    am.dtype = PTERUN_DTYPE_U8;
    PT_CHECK(pterun_compute_qs8_gemm(NULL, 0, 1, &am, NULL, NULL, PTERUN_DTYPE_U8, &pk, &ep, &cm) ==
             0);
    PT_CHECK(out[0] == 10.0f && out[1] == 26.0f);
  }
  free(buf);
  return 0;
}

/* The requantisation's edges through every epilogue path (AVX-512 16
 * columns, AVX2 8, SSE2 4, scalar: N = 16 + 8 + 4 + 3): all sums 0, so each
 * output is the quantization of its bias, chosen at ties (k + 0.5, both
 * parities), around the 2^22 bound of the scalar path's rounding, beyond
 * every code (1e30, infinities), NaN and -0, each code against nearbyintf
 * (NaN: q_min) on every microkernel this CPU runs. */
static int test_requant_edges(void) {
  enum { N = 31 };
  const float edge[] = {
      0.5f,    1.5f,     2.5f,       -0.5f,      -1.5f,      -2.5f,       126.5f,       127.5f,
      -127.5f, -128.5f,  4194303.5f, 4194304.0f, 4194305.0f, -4194305.f,  8388609.0f,   1e30f,
      -1e30f,  INFINITY, -INFINITY,  NAN,        -0.0f,      0.49999997f, -0.49999997f, 254.5f,
      255.5f,  -3.5f,    3.5f,       99.5f,      -99.5f,     1e-30f,      -1e-30f};
  _Static_assert(sizeof edge / sizeof edge[0] == N, "one bias per column");
  size_t nuk;
  const pterun_compute_qs8_gemm_ukernel* uks = pterun_compute_qs8_gemm_ukernels(&nuk);
  const uint64_t have = pterun_cpu_features();
  int8_t w[N * 4];
  for (int i = 0; i < N * 4; ++i) w[i] = (int8_t)(i % 7 - 3);
  for (size_t u = 0; u < nuk; ++u) {
    if ((uks[u].isa & have) != uks[u].isa) continue;
    const size_t cap = pterun_compute_qs8_pack_size(&uks[u], N, 4);
    void* buf = aligned_buf(cap);
    pterun_compute_qs8_packed pk;
    PT_CHECK(pterun_compute_qs8_pack(&uks[u], N, 4, w, 4, 1, buf, cap, &pk) == 0);
    for (int dt = 0; dt < 2; ++dt)
      for (int zp_i = 0; zp_i < 2; ++zp_i) {
        const int u8 = dt == 0;
        const float sc = 1.0f;
        uint8_t a[3 * 4], out[3 * N];
        memset(a, 7, sizeof a); /* A = its zero point: every sum is 0 */
        pterun_compute_qs8_epilogue ep;
        memset(&ep, 0, sizeof ep);
        ep.a_zp = 7;
        ep.scale = &sc;
        ep.bias = edge;
        ep.out_inv_scale = 1.0f;
        ep.out_zp = u8 ? (zp_i ? 128 : 0) : (zp_i ? -5 : 0);
        ep.q_min = u8 ? 0 : -128;
        ep.q_max = u8 ? 255 : 127;
        pterun_compute_matrix am = {a, PTERUN_DTYPE_U8, 4, 1};
        pterun_compute_matrix cm = {out, u8 ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8, N, 1};
        PT_CHECK(pterun_compute_qs8_gemm(NULL, 0, 3, &am, NULL, NULL, PTERUN_DTYPE_U8, &pk, &ep,
                                         &cm) == 0);
        for (int r = 0; r < 3; ++r)
          for (int j = 0; j < N; ++j) {
            const float y = edge[j];
            int32_t q;
            if (isnan(y)) {
              q = ep.q_min;
            } else {
              const double t = (double)ep.out_zp + (double)nearbyintf(y);
              q = t < ep.q_min ? ep.q_min : t > ep.q_max ? ep.q_max : (int32_t)t;
            }
            const int32_t got = u8 ? (int32_t)out[r * N + j] : (int32_t)(int8_t)out[r * N + j];
            if (got != q) {
              printf("     %s: bias %g, zp %d: code %d, want %d\n", uks[u].name, (double)y,
                     (int)ep.out_zp, (int)got, (int)q);
              free(buf);
              return 1;
            }
          }
      }
    free(buf);
  }
  return 0;
}

/* The byte transpose against a plain loop: whole blocks, edge blocks
 * (through a padded copy), strides wider than the matrix, both loop orders
 * (the destination's stride wider than the source's, and not); bytes
 * outside the destination untouched. */
static int test_transpose(void) {
  static const int64_t dims[][2] = {{1, 1},  {3, 64},  {16, 16},  {17, 33},  {48, 40},
                                    {64, 3}, {5, 100}, {144, 49}, {49, 144}, {15, 15},
                                    {16, 8}, {8, 16},  {33, 9},   {9, 33},   {64, 32}};
  size_t t;
  for (t = 0; t < sizeof dims / sizeof dims[0]; ++t) {
    const int64_t rows = dims[t][0], cols = dims[t][1], srs = cols + 5, drs = rows + 3;
    uint8_t* src = malloc((size_t)(rows * srs));
    uint8_t* dst = malloc((size_t)(cols * drs));
    int64_t i, j;
    PT_CHECK(src != NULL && dst != NULL);
    for (i = 0; i < rows * srs; ++i) src[i] = (uint8_t)rnd();
    memset(dst, 0xA5, (size_t)(cols * drs));
    pterun_compute_u8_transpose(rows, cols, src, srs, dst, drs);
    for (j = 0; j < cols; ++j)
      for (i = 0; i < drs; ++i) PT_CHECK(dst[j * drs + i] == (i < rows ? src[i * srs + j] : 0xA5));
    free(src), free(dst);
  }
  return 0;
}

int main(void) {
  PT_RUN(test_every_ukernel);
  PT_RUN(test_requant_edges);
  PT_RUN(test_transpose);
  PT_RUN(test_threads);
  PT_RUN(test_pack_checks);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
