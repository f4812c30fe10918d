/* Max pooling over float32 rows: a 2 x 2, stride 2 window over NCHW rows
 * (pterun_compute_f32_maxpool2x2_row), and any window over channels-last
 * pixels, each tap a row of channels (pterun_compute_f32_max_rows). Four
 * outputs at a time in 4-lane generic vectors (every target's baseline
 * SIMD), the rest one by one with the same rule. No ISA variants: the loops
 * are bound by their loads and stores, and one body gives one set of bits. */
#include <string.h>

#include "pterun/compute.h"

typedef float pc_mp_v __attribute__((vector_size(16)));
typedef int32_t pc_mp_m __attribute__((vector_size(16)));

static inline pc_mp_v pc_mp_ld(const float* p) {
  pc_mp_v v;
  memcpy(&v, p, sizeof v);
  return v;
}

#if defined(__clang__)
#define PC_MP_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define PC_MP_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, (pc_mp_m){__VA_ARGS__})
#endif

/* Tap v (code t) replaces the maximum so far when greater, or when it is NaN
 * and the maximum is not (ATen's rule: NaN wins and sticks). */
#define PC_MP_TAKE(v, t)                                                                           \
  do {                                                                                             \
    pc_mp_m take = ~(v <= m) & (m == m); /* v > m, or v NaN; never once m is NaN */                \
    m = (pc_mp_v)(((pc_mp_m)v & take) | ((pc_mp_m)m & ~take));                                     \
    code = (code & ~take) | ((pc_mp_m){t, t, t, t} & take);                                        \
  } while (0)

void pterun_compute_f32_maxpool2x2_row(const float* r0, const float* r1, size_t n, float* y,
                                       int64_t* idx, int64_t i0, int64_t iw) {
  size_t o = 0;
  for (; o + 4 <= n; o += 4) {
    pc_mp_v a = pc_mp_ld(r0 + 2 * o), b = pc_mp_ld(r0 + 2 * o + 4);
    pc_mp_v c = pc_mp_ld(r1 + 2 * o), d = pc_mp_ld(r1 + 2 * o + 4);
    pc_mp_v m = PC_MP_SHUFFLE(a, b, 0, 2, 4, 6);
    pc_mp_v t01 = PC_MP_SHUFFLE(a, b, 1, 3, 5, 7);
    pc_mp_v t10 = PC_MP_SHUFFLE(c, d, 0, 2, 4, 6);
    pc_mp_v t11 = PC_MP_SHUFFLE(c, d, 1, 3, 5, 7);
    pc_mp_m code = {0, 0, 0, 0};
    PC_MP_TAKE(t01, 1);
    PC_MP_TAKE(t10, 2);
    PC_MP_TAKE(t11, 3);
    memcpy(y + o, &m, sizeof m);
    for (int l = 0; l < 4; ++l)
      idx[o + (size_t)l] = i0 + 2 * (int64_t)(o + (size_t)l) + (code[l] & 1) + (code[l] >> 1) * iw;
  }
  for (; o < n; ++o) {
    const float tap[4] = {r0[2 * o], r0[2 * o + 1], r1[2 * o], r1[2 * o + 1]};
    float m = tap[0];
    int code = 0;
    for (int t = 1; t < 4; ++t) {
      float v = tap[t];
      if ((v > m) | ((v != v) & (m == m))) {
        m = v;
        code = t;
      }
    }
    y[o] = m;
    idx[o] = i0 + 2 * (int64_t)o + (code & 1) + (code >> 1) * iw;
  }
}

void pterun_compute_f32_max_rows(const float* const* rows, size_t ntaps, size_t off, size_t n,
                                 float* y, int32_t* tap) {
  size_t c = 0;
  if (ntaps == 0) return;
  for (; c + 4 <= n; c += 4) {
    pc_mp_v m = pc_mp_ld(rows[0] + off + c);
    pc_mp_m code = {0, 0, 0, 0};
    for (size_t t = 1; t < ntaps; ++t) {
      const pc_mp_v v = pc_mp_ld(rows[t] + off + c);
      PC_MP_TAKE(v, (int32_t)t);
    }
    memcpy(y + c, &m, sizeof m);
    memcpy(tap + c, &code, sizeof code);
  }
  for (; c < n; ++c) {
    float m = rows[0][off + c];
    int32_t code = 0;
    for (size_t t = 1; t < ntaps; ++t) {
      const float v = rows[t][off + c];
      if ((v > m) | ((v != v) & (m == m))) {
        m = v;
        code = (int32_t)t;
      }
    }
    y[c] = m;
    tap[c] = code;
  }
}
