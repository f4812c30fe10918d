/* Reproducible pseudo-random values for the C tests: a linear congruential
 * generator with an explicit state (Numerical Recipes' constants), so each
 * test fixes its own sequence by its seed and no test depends on libc's
 * rand(). */
#ifndef PTERUN_TESTS_HARNESS_PT_RAND_H_
#define PTERUN_TESTS_HARNESS_PT_RAND_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct pt_rand {
  uint32_t s;
} pt_rand;

/* The next 24 random bits. */
static inline uint32_t pt_rand_u24(pt_rand* r) {
  r->s = r->s * 1664525u + 1013904223u;
  return r->s >> 8;
}

/* A float in [-1, 1): every 24-bit value equally likely. */
static inline float pt_rand_pm1(pt_rand* r) {
  return (float)pt_rand_u24(r) / 8388608.0f - 1.0f;
}

/* n floats of pt_rand_pm1 on the heap (free()), NULL without memory. */
static inline float* pt_rand_buf(pt_rand* r, size_t n) {
  float* b = (float*)malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; b != NULL && i < n; ++i) b[i] = pt_rand_pm1(r);
  return b;
}

#endif /* PTERUN_TESTS_HARNESS_PT_RAND_H_ */
