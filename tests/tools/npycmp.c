/* npycmp ACTUAL.npy EXPECTED.npy [--rtol R] [--atol A]
 *
 * Exit 0 when both files have the same dtype and shape and every element
 * satisfies |a - e| <= atol + rtol * |e| (NaN equals NaN, infinities must
 * match exactly); otherwise print the worst element and exit 1. Bad usage or
 * unreadable files exit 2. Defaults are numpy.allclose's: rtol 1e-5, atol 1e-8. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/npy.h"

static int usage(void) {
  fprintf(stderr, "usage: npycmp ACTUAL.npy EXPECTED.npy [--rtol R] [--atol A]\n");
  return 2;
}

static int parse_tol(const char* s, double* out) {
  char* end;
  double v;
  if (s == NULL || *s == '\0') return -1;
  v = strtod(s, &end);
  if (*end != '\0' || !(v >= 0.0) || isinf(v)) return -1;
  *out = v;
  return 0;
}

static int is_int_dtype(int32_t dt) {
  return dt == PTERUN_DTYPE_I8 || dt == PTERUN_DTYPE_I16 || dt == PTERUN_DTYPE_I32 ||
         dt == PTERUN_DTYPE_I64 || dt == PTERUN_DTYPE_U8 || dt == PTERUN_DTYPE_U16 ||
         dt == PTERUN_DTYPE_U32 || dt == PTERUN_DTYPE_U64 || dt == PTERUN_DTYPE_BOOL;
}

/* Row-major multi-index of flat element i, as "[1, 2]". */
static void index_str(const cli_npy* a, size_t i, char* buf, size_t cap) {
  int64_t idx[PTERUN_MAX_RANK];
  size_t used = 1;
  int k;
  for (k = (int)a->rank - 1; k >= 0; --k) {
    size_t d = (size_t)a->shape[k];
    idx[k] = d ? (int64_t)(i % d) : 0;
    i = d ? i / d : 0;
  }
  snprintf(buf, cap, "[");
  for (k = 0; k < (int)a->rank && used < cap; ++k) {
    int n = snprintf(buf + used, cap - used, "%s%lld", k ? ", " : "", (long long)idx[k]);
    if (n < 0) return;
    used += (size_t)n;
  }
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

int main(int argc, char** argv) {
  const char *actual_path = NULL, *expected_path = NULL;
  double rtol = 1e-5, atol = 1e-8, worst_excess = -1.0;
  size_t worst = 0, bad = 0, i;
  char err[CLI_NPY_ERR_SIZE], s1[256], s2[256];
  cli_npy a, e;
  int k, rc = 0;

  for (k = 1; k < argc; ++k) {
    const char* arg = argv[k];
    if ((strcmp(arg, "--rtol") == 0 || strcmp(arg, "--atol") == 0) && k + 1 < argc) {
      if (parse_tol(argv[k + 1], arg[2] == 'r' ? &rtol : &atol) != 0) return usage();
      ++k;
    } else if (strncmp(arg, "--rtol=", 7) == 0) {
      if (parse_tol(arg + 7, &rtol) != 0) return usage();
    } else if (strncmp(arg, "--atol=", 7) == 0) {
      if (parse_tol(arg + 7, &atol) != 0) return usage();
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return usage();
    } else if (actual_path == NULL) {
      actual_path = arg;
    } else if (expected_path == NULL) {
      expected_path = arg;
    } else {
      return usage();
    }
  }
  if (expected_path == NULL) return usage();

  if (cli_npy_read_file(actual_path, &a, err, sizeof err) != PTERUN_STATUS_OK) {
    fprintf(stderr, "npycmp: %s\n", err);
    return 2;
  }
  if (cli_npy_read_file(expected_path, &e, err, sizeof err) != PTERUN_STATUS_OK) {
    fprintf(stderr, "npycmp: %s\n", err);
    cli_npy_free(&a);
    return 2;
  }
  if (a.dtype != e.dtype) {
    printf("npycmp: dtype differs: actual %s, expected %s\n", cli_npy_descr(a.dtype),
           cli_npy_descr(e.dtype));
    rc = 1;
    goto done;
  }
  if (a.rank != e.rank || memcmp(a.shape, e.shape, sizeof(int64_t) * a.rank) != 0) {
    cli_npy_shape_str(a.rank, a.shape, s1, sizeof s1);
    cli_npy_shape_str(e.rank, e.shape, s2, sizeof s2);
    printf("npycmp: shape differs: actual %s, expected %s\n", s1, s2);
    rc = 1;
    goto done;
  }
  for (i = 0; i < a.numel; ++i) {
    double x, y, excess;
    /* integers: exact equality first (doubles lose bits past 2^53) */
    if (is_int_dtype(a.dtype)) {
      size_t sz = a.nbytes / (a.numel ? a.numel : 1);
      if (memcmp((const char*)a.data + i * sz, (const char*)e.data + i * sz, sz) == 0) continue;
    }
    x = cli_elem_get(a.dtype, a.data, i);
    y = cli_elem_get(e.dtype, e.data, i);
    if (isnan(x) && isnan(y)) continue;
    if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) {
      if (x == y) continue;
      excess = INFINITY;
    } else {
      excess = fabs(x - y) - (atol + rtol * fabs(y));
      if (excess <= 0) continue;
    }
    ++bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (bad > 0) {
    char idx[512];
    double x = cli_elem_get(a.dtype, a.data, worst), y = cli_elem_get(e.dtype, e.data, worst);
    cli_elem_format(a.dtype, a.data, worst, s1, sizeof s1);
    cli_elem_format(e.dtype, e.data, worst, s2, sizeof s2);
    index_str(&a, worst, idx, sizeof idx);
    if (isinf(worst_excess))
      printf(
          "npycmp: %zu of %zu elements differ (rtol %g, atol %g); worst at %s: actual %s, "
          "expected %s (NaN or infinity mismatch)\n",
          bad, a.numel, rtol, atol, idx, s1, s2);
    else
      printf(
          "npycmp: %zu of %zu elements differ (rtol %g, atol %g); worst at %s: actual %s, "
          "expected %s, |diff| %g > tolerance %g\n",
          bad, a.numel, rtol, atol, idx, s1, s2, fabs(x - y), atol + rtol * fabs(y));
    rc = 1;
  }
done:
  cli_npy_free(&a);
  cli_npy_free(&e);
  return rc;
}
