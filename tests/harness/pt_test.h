/* Minimal test harness: PT_CHECK returns 1 from the enclosing test function. */
#ifndef PTERUN_TESTS_HARNESS_PT_TEST_H_
#define PTERUN_TESTS_HARNESS_PT_TEST_H_

#include <stdio.h>

#define PT_CHECK(c)                                                                                \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);                        \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

#define PT_CHECK_STATUS(expr, want)                                                                \
  do {                                                                                             \
    int pt_got_ = (int)(expr);                                                                     \
    if (pt_got_ != (int)(want)) {                                                                  \
      fprintf(stderr, "%s:%d: %s returned %s, want %s\n", __FILE__, __LINE__, #expr,               \
              pterun_status_name((pterun_status)pt_got_),                                          \
              pterun_status_name((pterun_status)(want)));                                          \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

/* Runs one test function and counts failures. */
#define PT_RUN(fn)                                                                                 \
  do {                                                                                             \
    int pt_r_ = fn();                                                                              \
    printf("%s %s\n", pt_r_ ? "FAIL" : "ok  ", #fn);                                               \
    pt_failures += pt_r_ ? 1 : 0;                                                                  \
  } while (0)

#endif
