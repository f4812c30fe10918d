/* pterun_llm_sample's greedy choice (temperature 0): the first index of the
 * largest non-NaN logit, 0 when every logit is NaN, against a one-pass
 * reference scan, over vocabularies that do and do not fill the scan's lanes,
 * the maximum in the first, a middle and the tail block, ties, NaNs before and
 * among the values, signed zeros and infinities. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/llm.h"
#include "tests/harness/pt_test.h"

static int pt_failures;

/* The definition: keep the first strict maximum, skip NaNs. */
static int64_t ref_argmax(const float* x, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (x[i] > x[best] || (x[best] != x[best] && x[i] == x[i])) best = i;
  return (int64_t)best;
}

static uint32_t g_rng = 7;
static float rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (float)((g_rng >> 9) & 0xffff) / 4096.0f - 8.0f;
}

static int greedy_is(const float* x, size_t n, int64_t want) {
  pterun_llm_sampling s;
  memset(&s, 0, sizeof s); /* temperature 0: greedy */
  uint64_t state = 0;
  const int64_t got = pterun_llm_sample(x, n, &s, &state, NULL);
  if (got != want) {
    fprintf(stderr, "vocab %zu: greedy %lld, expected %lld\n", n, (long long)got, (long long)want);
    return 1;
  }
  return 0;
}

static int test_greedy(void) {
  static const size_t sizes[] = {1, 2, 15, 16, 17, 31, 33, 100, 257, 32000};
  float* x = malloc(32000 * sizeof(float));
  PT_CHECK(x != NULL);
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
    const size_t n = sizes[si];
    for (int pattern = 0; pattern < 9; ++pattern) {
      for (size_t i = 0; i < n; ++i) x[i] = rnd();
      switch (pattern) {
        case 1: x[0] = 100.0f; break;                /* first */
        case 2: x[n - 1] = 100.0f; break;            /* last (the tail) */
        case 3: x[n / 2] = x[n - 1] = 100.0f; break; /* a tie: the first */
        case 4: x[0] = NAN; break;                   /* NaN first */
        case 5:                                      /* NaNs everywhere but one */
          for (size_t i = 0; i < n; ++i) x[i] = NAN;
          x[n - 1] = -INFINITY;
          break;
        case 6:
          for (size_t i = 0; i < n; ++i) x[i] = NAN; /* all NaN: 0 */
          break;
        case 7:
          for (size_t i = 0; i < n; ++i) x[i] = i % 2 ? 0.0f : -0.0f; /* signed zeros */
          break;
        case 8:
          x[n / 3] = INFINITY;
          if (n > 2) x[n - 2] = NAN;
          break;
        default: break; /* random */
      }
      PT_CHECK(greedy_is(x, n, ref_argmax(x, n)) == 0);
    }
  }
  free(x);
  return 0;
}

int main(void) {
  PT_RUN(test_greedy);
  return pt_failures != 0;
}
