/* Which SIMD variants a test executed and checked (docs/robustness.md,
 * "Every SIMD variant executed"). A test calls pt_variant_checked(family,
 * variant, out, bytes) right after that variant's results matched the
 * reference, and ends with pt_variants_record(pt_failures): when every test of
 * the program passed and PTERUN_VARIANT_LOG names a file, one line per
 * checked variant is appended to it:
 *   <family> <variant> exact           its bits are pinned by the test (equal
 *                                      to an exact reference or the baseline's)
 *   <family> <variant> bits=<16 hex>   checked within a tolerance: FNV-1a of
 *                                      every output it was checked on, in order
 * A line therefore means "executed and compared, and the program passed",
 * never merely "selected". tools/variant_table.py reads the lines of the
 * native, emulated and aarch64 runs, fails the variant stage on a variant no
 * run recorded, and on an emulated variant whose bits differ from the native
 * run's. */
#ifndef PTERUN_TESTS_HARNESS_PT_VARIANTS_H_
#define PTERUN_TESTS_HARNESS_PT_VARIANTS_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_VARIANTS_MAX 64

/* family and variant: static strings (the library's tables, literals). */
static struct {
  const char* family;
  const char* variant;
  uint64_t bits; /* FNV-1a over the outputs, when has_bits */
  int has_bits;
} pt_variants_[PT_VARIANTS_MAX];
static size_t pt_variants_n_;
static int pt_variants_overflow_;

/* out/bytes: the output just checked within a tolerance (folded into the
 * variant's digest), or NULL when the test pinned its bits exactly. */
static inline void pt_variant_checked(const char* family, const char* variant, const void* out,
                                      size_t bytes) {
  const unsigned char* p = out;
  size_t i;
  for (i = 0; i < pt_variants_n_; ++i)
    if (strcmp(pt_variants_[i].family, family) == 0 &&
        strcmp(pt_variants_[i].variant, variant) == 0)
      break;
  if (i == pt_variants_n_) {
    if (pt_variants_n_ == PT_VARIANTS_MAX) {
      pt_variants_overflow_ = 1;
      return;
    }
    pt_variants_[i].family = family;
    pt_variants_[i].variant = variant;
    pt_variants_[i].bits = 0xcbf29ce484222325u;
    pt_variants_[i].has_bits = 0;
    ++pt_variants_n_;
  }
  if (out == NULL) return;
  pt_variants_[i].has_bits = 1;
  while (bytes--) pt_variants_[i].bits = (pt_variants_[i].bits ^ *p++) * 0x100000001b3u;
}

/* Appends the record when failures is 0; returns 1 when it cannot (a test
 * failure: a variant that ran but went unrecorded would show as "not run"). */
static inline int pt_variants_record(int failures) {
  const char* path = getenv("PTERUN_VARIANT_LOG");
  FILE* f;
  size_t i;
  int bad = 0;
  if (pt_variants_overflow_) {
    fprintf(stderr, "pt_variants: more than %d variants\n", PT_VARIANTS_MAX);
    return 1;
  }
  if (failures != 0 || path == NULL || *path == '\0') return 0;
  f = fopen(path, "a");
  if (f == NULL) {
    fprintf(stderr, "PTERUN_VARIANT_LOG=%s: cannot open for appending\n", path);
    return 1;
  }
  /* One short line per fprintf (line buffered): appends from tests that run
   * in parallel stay whole lines. */
  setvbuf(f, NULL, _IOLBF, 0);
  for (i = 0; i < pt_variants_n_; ++i) {
    if (pt_variants_[i].has_bits)
      bad |= fprintf(f, "%s %s bits=%016llx\n", pt_variants_[i].family, pt_variants_[i].variant,
                     (unsigned long long)pt_variants_[i].bits) < 0;
    else
      bad |= fprintf(f, "%s %s exact\n", pt_variants_[i].family, pt_variants_[i].variant) < 0;
  }
  bad |= fclose(f) != 0;
  if (bad) fprintf(stderr, "PTERUN_VARIANT_LOG=%s: write failed\n", path);
  return bad;
}

#endif
