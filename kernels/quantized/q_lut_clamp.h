/* An 8-bit lookup table that is a clamp of the code itself (a relu or
 * relu6 between the same quantization in and out): found once at load,
 * then run as a clamp, a loop the compiler vectorises, instead of a byte
 * gather. Exactly the table's bytes: the table is checked code by code. */
#ifndef PTERUN_KERNELS_QUANTIZED_Q_LUT_CLAMP_H_
#define PTERUN_KERNELS_QUANTIZED_Q_LUT_CLAMP_H_

#include <stdint.h>

typedef struct qk_lut_clamp {
  int is_clamp; /* table[b] == b clamped to [lo, hi], in the code's order */
  int is_signed;
  int32_t lo, hi;
} qk_lut_clamp;

/* is_signed: codes are int8 (else uint8); same_dtype: the output's dtype is
 * the input's (otherwise never a clamp). */
static inline qk_lut_clamp qk_lut_find_clamp(const uint8_t table[256], int is_signed,
                                             int same_dtype) {
  qk_lut_clamp c = {0, is_signed, 0, 0};
  const int32_t first = is_signed ? -128 : 0, last = is_signed ? 127 : 255;
  int32_t at[256];
  for (int32_t v = first; v <= last; ++v) {
    const uint8_t byte = table[(uint8_t)(v & 0xff)];
    at[v - first] = is_signed && byte >= 128 ? (int32_t)byte - 256 : (int32_t)byte;
  }
  c.lo = at[0];
  c.hi = at[255];
  c.is_clamp = same_dtype && c.lo <= c.hi;
  for (int32_t v = first; c.is_clamp && v <= last; ++v)
    c.is_clamp = at[v - first] == (v < c.lo ? c.lo : v > c.hi ? c.hi : v);
  return c;
}

/* [*lo, *hi] (lo <= hi) narrowed to clamp to [lo, hi] and then to the clamp
 * c: clamp(clamp(v, a, b), c.lo, c.hi) is one clamp, to the intersection,
 * or to the nearer end of c's range when the two do not meet. */
static inline void qk_lut_clamp_after(int32_t* lo, int32_t* hi, const qk_lut_clamp* c) {
  const int32_t a = *lo, b = *hi;
  *lo = b < c->lo ? c->lo : a > c->hi ? c->hi : a > c->lo ? a : c->lo;
  *hi = b < c->lo ? c->lo : a > c->hi ? c->hi : b < c->hi ? b : c->hi;
}

/* out[k] = the table's byte for in[k], k < n, for a table found a clamp
 * (out == in, or not overlapping). */
static inline void qk_lut_run_clamp(const qk_lut_clamp* c, uint8_t* out, const uint8_t* in,
                                    int64_t n) {
  if (c->is_signed) {
    const int8_t lo = (int8_t)c->lo, hi = (int8_t)c->hi;
    const int8_t* x = (const int8_t*)(const void*)in;
    int8_t* y = (int8_t*)(void*)out;
    for (int64_t k = 0; k < n; ++k) {
      const int8_t v = x[k] < lo ? lo : x[k];
      y[k] = v > hi ? hi : v;
    }
  } else {
    const uint8_t lo = (uint8_t)c->lo, hi = (uint8_t)c->hi;
    for (int64_t k = 0; k < n; ++k) {
      const uint8_t v = in[k] < lo ? lo : in[k];
      out[k] = v > hi ? hi : v;
    }
  }
}

#endif
