/* f32 vector math of libpterun_compute (pterun_compute_f32_unary): every
 * variant this CPU can run (4-lane baseline, AVX2, AVX-512) against a double
 * reference: the max error in ULP over a dense sweep and special values stays
 * within the bounds pterun/compute.h states, and every variant gives the
 * baseline's bits (so the fast path is tested against the portable one);
 * split over a pool the results do not change. The row primitives
 * (pterun_compute_f32_rowops, sum and dev_sq_sum included): every variant against a double reference and
 * bit for bit against the baseline, at every length around the vector widths.
 * The 2 x 2 max pool row (pterun_compute_f32_maxpool2x2_row) against a plain
 * loop of ATen's rule: values (bits) and indices, NaNs, ties, infinities, -0.
 * ctest runs it again with PTERUN_ISA_MASK=0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;

static const char* const k_names[PTERUN_COMPUTE_UNARY_COUNT] = {
    "exp", "sigmoid", "silu", "tanh", "erf", "gelu", "gelu_tanh"};
static const double k_bounds[PTERUN_COMPUTE_UNARY_COUNT] = {
    PTERUN_COMPUTE_EXP_MAX_ULP,      PTERUN_COMPUTE_SIGMOID_MAX_ULP, PTERUN_COMPUTE_SILU_MAX_ULP,
    PTERUN_COMPUTE_TANH_MAX_ULP,     PTERUN_COMPUTE_ERF_MAX_ULP,     PTERUN_COMPUTE_GELU_MAX_ULP,
    PTERUN_COMPUTE_GELU_TANH_MAX_ULP};

static double ref(int op, double x) {
  switch (op) {
    case PTERUN_COMPUTE_EXP: return exp(x);
    case PTERUN_COMPUTE_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case PTERUN_COMPUTE_SILU: return x / (1.0 + exp(-x));
    case PTERUN_COMPUTE_ERF: return erf(x);
    case PTERUN_COMPUTE_GELU: return 0.5 * x * erfc(-x * 0.70710678118654752440);
    /* x/2 (1 + tanh a) written as x / (1 + e^-2a), exact in double */
    case PTERUN_COMPUTE_GELU_TANH:
      return x / (1.0 + exp(-1.5957691216057307 * (x + 0.044715 * x * x * x)));
    default: return tanh(x);
  }
}

/* Position of f on the number line of floats (monotonic, -0 == +0). */
static int64_t ordinal(float f) {
  int32_t i;
  memcpy(&i, &f, sizeof i);
  return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

static double ulp_error(float got, double want) {
  float w = (float)want;
  if (isnan(w)) return isnan(got) ? 0 : 1e30;
  if (isinf(w) || isinf(got)) return got == w ? 0 : 1e30;
  return (double)llabs(ordinal(got) - ordinal(w));
}

/* GELU is evaluated as PyTorch does, (x/2) (1 + erf(x/sqrt 2)) or (x/2) (1 +
 * tanh(...)), whose 1 + erf (tanh)
 * cancels for negative x: its error is counted in ULP of x/2 (absolute), the
 * scale of that sum, rather than of the (tiny) result. */
static double gelu_error(int op, float got, float x) {
  double want = ref(op, (double)x);
  float h = fabsf(x) * 0.5f;
  if (isnan(want) || isinf(want) || isnan(got) || isinf(got) || h == 0.0f || isinf(h))
    return ulp_error(got, want);
  return fabs((double)got - want) / (double)(nextafterf(h, INFINITY) - h);
}

#define N_SWEEP (1 << 21)

static float* g_x;
static float* g_y0;
static float* g_y;
static size_t g_n;

static void fill_inputs(void) {
  size_t n = 0;
  static const float specials[] = {0.0f,   -0.0f,   1e-45f,   -1e-45f,   1e-38f,     -1e-38f,
                                   1e-10f, -1e-10f, 0.625f,   -0.625f,   0.6249999f, 88.72f,
                                   88.73f, -87.3f,  -103.0f,  -104.5f,   200.0f,     -200.0f,
                                   3e38f,  -3e38f,  INFINITY, -INFINITY, NAN};
  for (size_t k = 0; k < sizeof specials / sizeof specials[0]; ++k) g_x[n++] = specials[k];
  /* Dense in [-110, 110], then every 4099th bit pattern of the whole line. */
  for (size_t k = 0; k < N_SWEEP; ++k) g_x[n++] = -110.0f + 220.0f * (float)k / (float)N_SWEEP;
  for (uint64_t b = 0; b < ((uint64_t)1 << 32); b += 4099) {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, sizeof f);
    g_x[n++] = f;
  }
  g_n = n;
}

static int test_accuracy_and_variants(void) {
  for (int op = 0; op < PTERUN_COMPUTE_UNARY_COUNT; ++op) {
    PT_CHECK(pterun_compute_f32_unary_with(0, op, g_x, g_y0, g_n) == 0);
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < g_n; ++i) {
      double e = op >= PTERUN_COMPUTE_GELU ? gelu_error(op, g_y0[i], g_x[i])
                                           : ulp_error(g_y0[i], ref(op, (double)g_x[i]));
      if (e > worst) worst = e, worst_x = g_x[i];
    }
    printf("%-8s max %.2f ULP (bound %.0f) at x = %.9g\n", k_names[op], worst, k_bounds[op],
           (double)worst_x);
    PT_CHECK(worst <= k_bounds[op]);
    pt_variant_checked("vmath", pterun_compute_f32_unary_variant(0), g_y0, g_n * sizeof(float));
    for (size_t v = 1; pterun_compute_f32_unary_variant(v) != NULL || v < 3; ++v) {
      const char* name = pterun_compute_f32_unary_variant(v);
      if (name == NULL) {
        PT_CHECK(pterun_compute_f32_unary_with(v, op, g_x, g_y, g_n) == -1);
        continue;
      }
      PT_CHECK(pterun_compute_f32_unary_with(v, op, g_x, g_y, g_n) == 0);
      PT_CHECK(memcmp(g_y, g_y0, g_n * sizeof(float)) == 0);
      pt_variant_checked("vmath", name, NULL, 0); /* the baseline's bits */
      printf("  %s: same bits as the baseline\n", name);
    }
    /* The dispatched entry, odd lengths and in place. */
    for (size_t n = 0; n < 40; ++n) {
      float buf[40];
      memcpy(buf, g_x + 1000, n * sizeof(float));
      PT_CHECK(pterun_compute_f32_unary(NULL, 0, op, buf, buf, n) == 0);
      PT_CHECK(n == 0 || memcmp(buf, g_y0 + 1000, n * sizeof(float)) == 0);
    }
  }
  PT_CHECK(pterun_compute_f32_unary(NULL, 0, -1, g_x, g_y, 1) == -1);
  PT_CHECK(pterun_compute_f32_unary(NULL, 0, PTERUN_COMPUTE_UNARY_COUNT, g_x, g_y, 1) == -1);
  PT_CHECK(pterun_compute_f32_unary_variant(0) != NULL);
  PT_CHECK(pterun_compute_f32_unary_variant(99) == NULL);
  return 0;
}

static int test_specials(void) {
  float x[6] = {INFINITY, -INFINITY, NAN, -0.0f, 1000.0f, -1000.0f}, y[6];
  PT_CHECK(pterun_compute_f32_unary(NULL, 0, PTERUN_COMPUTE_EXP, x, y, 6) == 0);
  PT_CHECK(isinf(y[0]) && y[1] == 0.0f && isnan(y[2]) && y[3] == 1.0f && isinf(y[4]) &&
           y[5] == 0.0f);
  PT_CHECK(pterun_compute_f32_unary(NULL, 0, PTERUN_COMPUTE_SIGMOID, x, y, 6) == 0);
  PT_CHECK(y[0] == 1.0f && y[1] == 0.0f && isnan(y[2]) && y[3] == 0.5f && y[4] == 1.0f &&
           y[5] == 0.0f);
  PT_CHECK(pterun_compute_f32_unary(NULL, 0, PTERUN_COMPUTE_TANH, x, y, 6) == 0);
  PT_CHECK(y[0] == 1.0f && y[1] == -1.0f && isnan(y[2]) && y[3] == 0.0f && signbit(y[3]) &&
           y[4] == 1.0f && y[5] == -1.0f);
  return 0;
}

static int test_threads_same_bits(void) {
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  o.threads = 3;
  o.min_work_ns = 1; /* split every call: these compare thread counts */
  pterun_threadpool* pool = NULL;
  PT_CHECK(pterun_threadpool_create(&o, &pool) == PTERUN_STATUS_OK);
  int bad = 0;
  for (int op = 0; op < PTERUN_COMPUTE_UNARY_COUNT && !bad; ++op) {
    pterun_compute_f32_unary(NULL, 0, op, g_x, g_y0, g_n);
    pterun_compute_f32_unary(pool, 0, op, g_x, g_y, g_n);
    bad |= memcmp(g_y, g_y0, g_n * sizeof(float)) != 0;
    pterun_compute_f32_unary(pool, 2, op, g_x, g_y, g_n);
    bad |= memcmp(g_y, g_y0, g_n * sizeof(float)) != 0;
  }
  pterun_threadpool_destroy(pool);
  PT_CHECK(!bad);
  return 0;
}

/* Deterministic values in [-2, 2) with a few exact zeros. */
static float rnd(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) % 4096) / 1024.0f - 2.0f;
}

static int same_bits(const float* a, const float* b, size_t n) {
  return memcmp(a, b, n * sizeof(float)) == 0;
}

static int test_rowops(void) {
  enum { N = 300 };
  float a[N], b[N], y0[N], y[N];
  uint32_t seed = 7;
  const pterun_compute_f32_rowops* base = pterun_compute_f32_rowops_variant(0);
  const pterun_compute_f32_rowops* sel = pterun_compute_f32_rowops_select();
  size_t n, i, v, ran = 0;
  PT_CHECK(base != NULL && sel != NULL);
  PT_CHECK(pterun_compute_f32_rowops_variant(99) == NULL);
  for (i = 0; i < N; ++i) a[i] = rnd(&seed), b[i] = rnd(&seed);
  for (v = 0; v < 8; ++v) {
    const pterun_compute_f32_rowops* ops = pterun_compute_f32_rowops_variant(v);
    if (ops == NULL) continue;
    ++ran;
    for (n = 0; n < N; n = n < 40 ? n + 1 : n * 2 + 3) {
      double want = 0, mag = 0, want_sum = 0, m = 0.5;
      float d = ops->dot(a, b, n), s;
      for (i = 0; i < n; ++i) want += (double)a[i] * b[i], mag += fabs((double)a[i] * b[i]);
      PT_CHECK(fabs(d - want) <= 1e-6 * mag + 1e-30);
      PT_CHECK(d == base->dot(a, b, n)); /* the baseline's bits */
      memcpy(y, b, sizeof y);
      memcpy(y0, b, sizeof y0);
      ops->axpby(y, 0.75f, -1.5f, a, n);
      base->axpby(y0, 0.75f, -1.5f, a, n);
      for (i = 0; i < n; ++i) PT_CHECK(y[i] == b[i] * 0.75f + -1.5f * a[i]);
      PT_CHECK(same_bits(y, y0, N));
      ops->scale(y, 3.0f, n);
      base->scale(y0, 3.0f, n);
      PT_CHECK(same_bits(y, y0, N));
      s = ops->exp_sum(y, a, (float)m, n);
      PT_CHECK(s == base->exp_sum(y0, a, (float)m, n));
      PT_CHECK(same_bits(y, y0, N));
      for (i = 0; i < n; ++i) {
        double e = exp((double)a[i] - m);
        want_sum += e;
        PT_CHECK(ulp_error(y[i], e) <= PTERUN_COMPUTE_EXP_MAX_ULP);
      }
      PT_CHECK(fabs(s - want_sum) <= 1e-6 * want_sum + 1e-30);
      /* sum, and the centring with its squared deviations */
      want = 0, mag = 0;
      for (i = 0; i < n; ++i) want += a[i], mag += fabs((double)a[i]);
      s = ops->sum(a, n);
      PT_CHECK(fabs(s - want) <= 1e-6 * mag + 1e-30);
      PT_CHECK(s == base->sum(a, n));
      s = ops->dev_sq_sum(y, a, (float)m, n);
      PT_CHECK(s == base->dev_sq_sum(y0, a, (float)m, n));
      PT_CHECK(same_bits(y, y0, N));
      want = 0;
      for (i = 0; i < n; ++i) {
        PT_CHECK(y[i] == a[i] - (float)m);
        want += (double)y[i] * y[i];
      }
      PT_CHECK(fabs(s - want) <= 1e-6 * want + 1e-30);
      /* max, and a NaN at each position giving that NaN */
      want = -INFINITY;
      for (i = 0; i < n; ++i) want = a[i] > want ? a[i] : want;
      PT_CHECK(ops->max(a, n) == (float)want);
      if (n > 0) {
        memcpy(y, a, sizeof y);
        y[n / 2] = NAN;
        PT_CHECK(isnan(ops->max(y, n)));
      }
    }
    pt_variant_checked("vmath_rowops", ops->name, v == 0 ? y : NULL, sizeof y);
  }
  PT_CHECK(ran >= 1);
  /* exp_sum in place, with -inf (a masked score) giving 0 */
  {
    float x[3] = {0.0f, -INFINITY, 1.0f};
    float s = sel->exp_sum(x, x, 1.0f, 3);
    PT_CHECK(x[1] == 0.0f && x[2] == 1.0f && fabsf(s - (1.0f + expf(-1.0f))) < 1e-6f);
  }
  printf("row primitives: %zu variant(s), selected %s\n", ran, sel->name);
  return 0;
}

/* The first maximum of each window in (kh, kw) order, NaN winning and
 * sticking; values compared as bits (a NaN's payload, -0 against +0). */
static int test_maxpool2x2_row(void) {
  static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN, 2.0f};
  enum { MAXN = 37 };
  float r0[2 * MAXN], r1[2 * MAXN], y[MAXN];
  int64_t idx[MAXN];
  uint32_t seed = 7u;
  for (int round = 0; round < 400; ++round)
    for (size_t n = 0; n <= MAXN; n += (round % 3) + 1) {
      for (size_t i = 0; i < 2 * n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        /* Few distinct values: ties and specials in every window. */
        r0[i] = specials[(seed >> 9) % 9];
        seed = seed * 1664525u + 1013904223u;
        r1[i] = round & 1 ? specials[(seed >> 9) % 9] : (float)((seed >> 9) % 5);
      }
      const int64_t i0 = 1000, iw = 2 * (int64_t)n + 3;
      pterun_compute_f32_maxpool2x2_row(r0, r1, n, y, idx, i0, iw);
      for (size_t o = 0; o < n; ++o) {
        const float tap[4] = {r0[2 * o], r0[2 * o + 1], r1[2 * o], r1[2 * o + 1]};
        float m = tap[0];
        int t = 0;
        for (int k = 1; k < 4; ++k)
          if (tap[k] > m || (isnan(tap[k]) && !isnan(m))) {
            m = tap[k];
            t = k;
          }
        PT_CHECK(memcmp(&y[o], &m, sizeof m) == 0);
        PT_CHECK(idx[o] == i0 + 2 * (int64_t)o + (t & 1) + (t >> 1) * iw);
      }
    }
  return 0;
}

int main(void) {
  size_t cap = N_SWEEP + ((size_t)1 << 32) / 4099 + 64;
  g_x = malloc(cap * sizeof(float));
  g_y0 = malloc(cap * sizeof(float));
  g_y = malloc(cap * sizeof(float));
  if (!g_x || !g_y0 || !g_y) return 1;
  fill_inputs();
  PT_RUN(test_accuracy_and_variants);
  PT_RUN(test_specials);
  PT_RUN(test_threads_same_bits);
  PT_RUN(test_rowops);
  PT_RUN(test_maxpool2x2_row);
  free(g_x);
  free(g_y0);
  free(g_y);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
