/* kernels/quantized/q_lut_clamp.h: an 8-bit table found to be a clamp runs
 * as one and gives the table's bytes exactly, for every code, uint8 and
 * int8, every lo/hi pair (also the identity and a constant), in place and
 * out of place; tables that are not a clamp (a scaled relu, one code off, a
 * dtype change) are not taken for one; a clamp after a clamp narrows to one
 * range that gives the same codes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/quantized/q_lut_clamp.h"
#include "tests/harness/pt_test.h"

static int pt_failures;

/* The table of "clamp to [lo, hi]" in the code's order. */
static void clamp_table(int is_signed, int32_t lo, int32_t hi, uint8_t table[256]) {
  for (int b = 0; b < 256; ++b) {
    const int32_t v = is_signed && b >= 128 ? b - 256 : b;
    const int32_t q = v < lo ? lo : v > hi ? hi : v;
    table[b] = (uint8_t)(q & 0xff);
  }
}

/* Runs the clamp on every code (out of place, then in place) and compares
 * with the table. */
static int check_run(const qk_lut_clamp* c, const uint8_t table[256]) {
  uint8_t in[256 + 7], out[256 + 7], buf[256 + 7];
  for (int b = 0; b < 256 + 7; ++b) in[b] = (uint8_t)((b * 37) & 0xff); /* every code, shuffled */
  memcpy(buf, in, sizeof buf);
  qk_lut_run_clamp(c, out, in, (int64_t)sizeof in);
  qk_lut_run_clamp(c, buf, buf, (int64_t)sizeof buf);
  for (size_t k = 0; k < sizeof in; ++k) {
    if (out[k] != table[in[k]] || buf[k] != table[in[k]]) {
      fprintf(stderr, "code %u: clamp %u / in place %u, table %u (lo %d hi %d signed %d)\n", in[k],
              out[k], buf[k], table[in[k]], c->lo, c->hi, c->is_signed);
      return 1;
    }
  }
  return 0;
}

static int test_every_clamp(void) {
  uint8_t table[256];
  for (int s = 0; s < 2; ++s) {
    const int32_t first = s ? -128 : 0, last = s ? 127 : 255;
    for (int32_t lo = first; lo <= last; lo += 5)
      for (int32_t hi = lo; hi <= last; hi += 7) {
        clamp_table(s, lo, hi, table);
        qk_lut_clamp c = qk_lut_find_clamp(table, s, 1);
        PT_CHECK(c.is_clamp && c.lo == lo && c.hi == hi && c.is_signed == s);
        if (check_run(&c, table)) return 1;
      }
    clamp_table(s, first, last, table); /* the identity */
    qk_lut_clamp c = qk_lut_find_clamp(table, s, 1);
    PT_CHECK(c.is_clamp && check_run(&c, table) == 0);
    clamp_table(s, last, last, table); /* a constant */
    c = qk_lut_find_clamp(table, s, 1);
    PT_CHECK(c.is_clamp && check_run(&c, table) == 0);
  }
  return 0;
}

static int test_not_a_clamp(void) {
  uint8_t table[256];
  for (int s = 0; s < 2; ++s) {
    clamp_table(s, s ? -10 : 20, s ? 100 : 200, table);
    PT_CHECK(!qk_lut_find_clamp(table, s, 0).is_clamp); /* dtype changes */
    table[77] ^= 1;                                     /* one code off */
    PT_CHECK(!qk_lut_find_clamp(table, s, 1).is_clamp);
    for (int b = 0; b < 256; ++b) table[b] = (uint8_t)(b / 2); /* requantized: a scale */
    PT_CHECK(!qk_lut_find_clamp(table, s, 1).is_clamp);
    for (int b = 0; b < 256; ++b) table[b] = (uint8_t)(255 - b); /* decreasing */
    PT_CHECK(!qk_lut_find_clamp(table, s, 1).is_clamp);
  }
  return 0;
}

/* qk_lut_clamp_after (conv2d_q8_hardtanh_q8's epilogue range): clamping to
 * the narrowed range equals the two clamps, for every value, over a grid of
 * both ranges (overlapping, nested, disjoint on either side, single codes). */
static int test_clamp_after(void) {
  for (int32_t a = -8; a <= 8; a += 2)
    for (int32_t b = a; b <= 8; b += 3)
      for (int32_t c = -9; c <= 9; c += 3)
        for (int32_t d = c; d <= 9; d += 2) {
          const qk_lut_clamp k = {1, 1, c, d};
          int32_t lo = a, hi = b;
          qk_lut_clamp_after(&lo, &hi, &k);
          PT_CHECK(lo <= hi);
          for (int32_t v = -12; v <= 12; ++v) {
            const int32_t x = v < a ? a : v > b ? b : v, two = x < c ? c : x > d ? d : x;
            const int32_t one = v < lo ? lo : v > hi ? hi : v;
            if (one != two) {
              fprintf(stderr, "v %d: [%d, %d] then [%d, %d] gives %d, [%d, %d] gives %d\n", v, a, b,
                      c, d, two, lo, hi, one);
              return 1;
            }
          }
        }
  return 0;
}

int main(void) {
  PT_RUN(test_every_clamp);
  PT_RUN(test_not_a_clamp);
  PT_RUN(test_clamp_after);
  return pt_failures ? 1 : 0;
}
