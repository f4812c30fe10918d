/* The f32 range scan of libpterun_compute (pterun_compute_f32_minmax): the
 * portable variant against a plain loop of the contract (an element replaces
 * a bound only when strictly beyond it; a zero bound comes out +0), and every
 * variant this CPU runs bit for bit against the portable one: lengths 0 to
 * past every unrolled width, every start (0 and 0, x[0] and x[0] as
 * choose_qparams uses it, a NaN start, -0, infinities), NaN, infinities,
 * signed zeros, subnormals and FLT_MAX at every position, pointers off
 * every alignment; the dispatch picks the widest variant (portable under
 * PTERUN_ISA_MASK=0, which ctest runs again). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;

#define MAXN 300 /* past 4 x 16 lanes several times, plus odd tails */
#define PAD 16   /* floats before the data, for every misalignment */

static uint32_t g_seed = 2463534242u;
static float rnd(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 17;
  g_seed ^= g_seed << 5;
  return (float)(g_seed >> 8) / 4194304.0f - 2.0f; /* [-2, 2) */
}

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The contract, written out (not the library's code). */
static void reference(const float* x, size_t n, float* mn, float* mx) {
  float lo = *mn, hi = *mx;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  *mn = lo == 0.0f ? 0.0f : lo;
  *mx = hi == 0.0f ? 0.0f : hi;
}

static size_t g_checked; /* variant comparisons made */

/* Every variant from the start (s_lo, s_hi) on x[0..n): the portable one
 * equals the reference, the others the portable one (bits). */
static int check_all(const float* x, size_t n, float s_lo, float s_hi) {
  float r_lo = s_lo, r_hi = s_hi, p_lo = s_lo, p_hi = s_hi;
  reference(x, n, &r_lo, &r_hi);
  PT_CHECK(pterun_compute_f32_minmax_with(0, x, n, &p_lo, &p_hi) == 0);
  if (bits(p_lo) != bits(r_lo) || bits(p_hi) != bits(r_hi)) {
    fprintf(stderr, "portable n=%zu: [%a, %a], reference [%a, %a]\n", n, (double)p_lo, (double)p_hi,
            (double)r_lo, (double)r_hi);
    return 1;
  }
  for (size_t v = 1; v < 8; ++v) {
    float lo = s_lo, hi = s_hi;
    if (pterun_compute_f32_minmax_with(v, x, n, &lo, &hi) != 0) continue; /* not here */
    if (bits(lo) != bits(p_lo) || bits(hi) != bits(p_hi)) {
      fprintf(stderr, "%s n=%zu: [%a, %a] (%08x %08x), portable [%a, %a] (%08x %08x)\n",
              pterun_compute_f32_minmax_variant(v), n, (double)lo, (double)hi, bits(lo), bits(hi),
              (double)p_lo, (double)p_hi, bits(p_lo), bits(p_hi));
      return 1;
    }
    ++g_checked;
  }
  {
    float lo = s_lo, hi = s_hi;
    pterun_compute_f32_minmax(x, n, &lo, &hi); /* the dispatch */
    PT_CHECK(bits(lo) == bits(p_lo) && bits(hi) == bits(p_hi));
  }
  return 0;
}

/* The starts both callers use and the edge cases of the contract. */
static int check_starts(const float* x, size_t n) {
  const float nan_start = from_bits(0x7fc12345u);                /* a payload that must survive */
  PT_CHECK(check_all(x, n, 0.0f, 0.0f) == 0);                    /* the XNNPACK Convert */
  if (n > 0) PT_CHECK(check_all(x + 1, n - 1, x[0], x[0]) == 0); /* choose_qparams */
  PT_CHECK(check_all(x, n, INFINITY, -INFINITY) == 0);
  PT_CHECK(check_all(x, n, -0.0f, -0.0f) == 0);
  PT_CHECK(check_all(x, n, nan_start, nan_start) == 0);
  PT_CHECK(check_all(x, n, nan_start, 1.0f) == 0);
  return 0;
}

static int test_random_lengths_alignments(void) {
  static float buf[PAD + MAXN];
  for (size_t n = 0; n <= MAXN; n += n < 80 ? 1 : 7)
    for (size_t off = 0; off < PAD; off += n < 80 ? 1 : 5) {
      for (size_t i = 0; i < PAD + MAXN; ++i) buf[i] = rnd();
      PT_CHECK(check_starts(buf + off, n) == 0);
    }
  return 0;
}

/* One special value at every position of a random array (and all of the
 * array made of it), at a few lengths around the widths. */
static int test_specials_everywhere(void) {
  static const uint32_t specials[] = {
      0x7fc00000u, /* NaN */
      0xffc00001u, /* -NaN, payload */
      0x7fa00000u, /* signalling NaN */
      0x7f800000u, /* +inf */
      0xff800000u, /* -inf */
      0x80000000u, /* -0 */
      0x00000000u, /* +0 */
      0x00000001u, /* smallest subnormal */
      0x807fffffu, /* largest negative subnormal */
      0x7f7fffffu, /* FLT_MAX */
      0xff7fffffu, /* -FLT_MAX */
  };
  static const size_t lens[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 200};
  static float buf[PAD + MAXN];
  for (size_t s = 0; s < sizeof specials / sizeof specials[0]; ++s)
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; ++l) {
      const size_t n = lens[l], off = (s + l) % 4;
      float* x = buf + off;
      for (size_t i = 0; i < n; ++i) x[i] = from_bits(specials[s]);
      PT_CHECK(check_starts(x, n) == 0);
      for (size_t at = 0; at < n; ++at) {
        for (size_t i = 0; i < n; ++i) x[i] = rnd();
        x[at] = from_bits(specials[s]);
        PT_CHECK(check_starts(x, n) == 0);
        /* and a second special after it (NaN then inf, -0 then +0, ...) */
        if (at + 5 < n) {
          x[at + 5] = from_bits(specials[(s + 3) % (sizeof specials / sizeof specials[0])]);
          PT_CHECK(check_starts(x, n) == 0);
        }
      }
    }
  return 0;
}

/* Signed zeros only: the range is zero and must come out +0 from every
 * variant, whichever zero each lane met first; also all-positive and
 * all-negative arrays (one bound stays at the start). */
static int test_zeros_and_one_sided(void) {
  static float buf[MAXN];
  for (size_t n = 1; n <= 100; ++n) {
    for (size_t i = 0; i < n; ++i) buf[i] = (rnd() < 0.0f) ? -0.0f : 0.0f;
    PT_CHECK(check_starts(buf, n) == 0);
    {
      float lo = 1.0f, hi = -1.0f;
      pterun_compute_f32_minmax(buf, n, &lo, &hi);
      PT_CHECK(bits(lo) == 0 && bits(hi) == 0);
    }
    for (size_t i = 0; i < n; ++i) buf[i] = fabsf(rnd()) + FLT_MIN;
    PT_CHECK(check_starts(buf, n) == 0);
    for (size_t i = 0; i < n; ++i) buf[i] = -fabsf(rnd()) - FLT_MIN;
    PT_CHECK(check_starts(buf, n) == 0);
  }
  return 0;
}

/* The contract's consequences both callers rely on, spelled out. */
static int test_contract(void) {
  const float x[5] = {NAN, -3.0f, 2.0f, NAN, 0.5f};
  float lo = 0.0f, hi = 0.0f;
  pterun_compute_f32_minmax(x, 5, &lo, &hi); /* a NaN element never enters */
  PT_CHECK(lo == -3.0f && hi == 2.0f);
  lo = hi = x[0]; /* a NaN first element wins (choose_qparams) */
  pterun_compute_f32_minmax(x + 1, 4, &lo, &hi);
  PT_CHECK(isnan(lo) && isnan(hi));
  lo = hi = 0.0f; /* the range includes the start: 0 */
  pterun_compute_f32_minmax(x + 2, 1, &lo, &hi);
  PT_CHECK(bits(lo) == 0 && hi == 2.0f);
  lo = 5.0f, hi = -5.0f; /* n == 0 leaves the start */
  pterun_compute_f32_minmax(x, 0, &lo, &hi);
  PT_CHECK(lo == 5.0f && hi == -5.0f);
  lo = hi = 7.0f; /* an unavailable variant touches nothing */
  PT_CHECK(pterun_compute_f32_minmax_with(99, x, 5, &lo, &hi) == -1);
  PT_CHECK(lo == 7.0f && hi == 7.0f);
  PT_CHECK(pterun_compute_f32_minmax_variant(0) != NULL);
  PT_CHECK(pterun_compute_f32_minmax_variant(99) == NULL);
  return 0;
}

/* The dispatch ran the widest variant this CPU (and PTERUN_ISA_MASK) allows,
 * and no other (pterun_compute_variants_report: the _with calls mark
 * nothing). */
static int test_dispatch(void) {
  char report[8192], want[64];
  size_t best = 0;
  for (size_t v = 1; v < 8; ++v)
    if (pterun_compute_f32_minmax_variant(v) != NULL) best = v;
  PT_CHECK(pterun_compute_variants_report(report, sizeof report) < sizeof report);
  snprintf(want, sizeof want, "minmax/%s:ran", pterun_compute_f32_minmax_variant(best));
  PT_CHECK(strstr(report, want) != NULL);
  for (const char* p = report; (p = strstr(p, "minmax/")) != NULL; ++p) {
    const char* colon = strchr(p, ':');
    PT_CHECK(colon != NULL);
    if (strncmp(colon + 1, "ran", 3) == 0) PT_CHECK(strncmp(p, want, strlen(want)) == 0);
  }
  if (getenv("PTERUN_ISA_MASK") != NULL && strcmp(getenv("PTERUN_ISA_MASK"), "0") == 0)
    PT_CHECK(best == 0);
  printf("minmax: dispatch runs %s\n", pterun_compute_f32_minmax_variant(best));
  return 0;
}

int main(void) {
  PT_RUN(test_random_lengths_alignments);
  PT_RUN(test_specials_everywhere);
  PT_RUN(test_zeros_and_one_sided);
  PT_RUN(test_contract);
  PT_RUN(test_dispatch);
  printf("minmax: %zu variant comparisons\n", g_checked);
  if (pt_failures == 0)
    for (size_t v = 0; v < 8; ++v)
      if (pterun_compute_f32_minmax_variant(v) != NULL)
        pt_variant_checked("minmax", pterun_compute_f32_minmax_variant(v), NULL, 0);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures ? 1 : 0;
}
