/* Body of the f32 vector math of libpterun_compute for one vector width.
 * Included by vmath_<isa>.c after defining VM_LANES (floats per vector) and
 * VM_FN(name) (the name of each exported-by-table function). Written with GNU C
 * generic vectors, so the same text compiles to SSE2/AVX2/AVX-512 on x86-64
 * and NEON on AArch64; only -m flags differ. No operation depends on the lane
 * or on the width, and -ffp-contract=off (every target) keeps a*b+c unfused, so
 * every width gives the same bits for the same input. */
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Always inlined: a call per vector would reload every constant. */
#define VM_INLINE static inline __attribute__((always_inline))

typedef float vm_f __attribute__((vector_size(VM_LANES * 4)));
typedef int32_t vm_i __attribute__((vector_size(VM_LANES * 4)));

/* A broadcast: lane by lane rather than (vm_f){0} + v, which compilers must
 * keep as a scalar add (0 + -0 is +0) before every use of a constant. */
VM_INLINE vm_f vm_splat(float v) {
  vm_f r;
  for (int k = 0; k < VM_LANES; ++k) r[k] = v;
  return r;
}
VM_INLINE vm_i vm_spliti(int32_t v) {
  return (vm_i){0} + v;
}
VM_INLINE vm_f vm_sel(vm_i m, vm_f a, vm_f b) {
  return (vm_f)((m & (vm_i)a) | (~m & (vm_i)b));
}
VM_INLINE vm_f vm_abs(vm_f x) {
  return (vm_f)((vm_i)x & vm_spliti(0x7fffffff));
}

/* e^x * 2^sh (0 <= sh <= 24; sh > 0 keeps tiny results normal until the
 * caller scales them back): Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2,
 * a degree-6 polynomial for e^r (Cephes expf coefficients), then 2^(n + sh) as
 * two exact power-of-two factors so results down to the smallest subnormal
 * come out with one rounding. */
VM_INLINE vm_f vm_exp_scaled(vm_f x, int32_t sh) {
  vm_f xc = vm_sel(x > vm_splat(88.8f), vm_splat(88.8f), x);
  xc = vm_sel(xc < vm_splat(-130.0f), vm_splat(-130.0f), xc);
  vm_f t = xc * vm_splat(1.44269504088896341f) + vm_splat(12582912.0f); /* 1.5 * 2^23 */
  vm_i n = (vm_i)t - vm_spliti(0x4B400000);
  vm_f nf = t - vm_splat(12582912.0f);
  vm_f r = xc - nf * vm_splat(0.693359375f);
  r = r - nf * vm_splat(-2.12194440e-4f);
  vm_f p = vm_splat(1.9875691500e-4f);
  p = p * r + vm_splat(1.3981999507e-3f);
  p = p * r + vm_splat(8.3334519073e-3f);
  p = p * r + vm_splat(4.1665795894e-2f);
  p = p * r + vm_splat(1.6666665459e-1f);
  p = p * r + vm_splat(5.0000001201e-1f);
  p = p * (r * r) + r + vm_splat(1.0f);
  n = n + vm_spliti(sh);
  vm_i n1 = n >> 1, n2 = n - n1;
  vm_f s1 = (vm_f)((n1 + vm_spliti(127)) << 23), s2 = (vm_f)((n2 + vm_spliti(127)) << 23);
  vm_f y = p * s1 * s2;
  y = vm_sel(x < vm_splat(-130.0f), vm_splat(0.0f), y); /* e^-inf = 0, even scaled */
  return vm_sel(x != x, x, y);                          /* NaN stays NaN */
}

VM_INLINE vm_f vm_exp(vm_f x) {
  return vm_exp_scaled(x, 0);
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| never overflows,
 * so tiny results (x < -88) stay accurate. */
VM_INLINE vm_f vm_sigmoid(vm_f x) {
  vm_f e = vm_exp(-vm_abs(x)), d = vm_splat(1.0f) + e;
  return vm_sel(x >= vm_splat(0.0f), vm_splat(1.0f), e) / d;
}

/* x * sigmoid(x): x / (1 + e^-x) for x >= 0, x e^x / (1 + e^x) below, where
 * x e^x is formed from e^x * 2^24 and scaled back last, so that results in
 * the subnormal range are rounded once. */
VM_INLINE vm_f vm_silu(vm_f x) {
  vm_f es = vm_exp_scaled(-vm_abs(x), 24);
  vm_f e = es * vm_splat(5.9604644775390625e-8f), d = vm_splat(1.0f) + e; /* 2^-24 */
  vm_f num = (x * es) * vm_splat(5.9604644775390625e-8f);
  return vm_sel(x >= vm_splat(0.0f), x, num) / d;
}

/* tanh |x|: an odd polynomial below 0.625 (Cephes tanhf), 1 - 2 / (e^2|x| + 1)
 * above; then x's sign (so tanh(-0) = -0). */
VM_INLINE vm_f vm_tanh(vm_f x) {
  vm_f ax = vm_abs(x), z = x * x;
  vm_f p = vm_splat(-5.70498872745e-3f);
  p = p * z + vm_splat(2.06390887954e-2f);
  p = p * z + vm_splat(-5.37397155531e-2f);
  p = p * z + vm_splat(1.33314422036e-1f);
  p = p * z + vm_splat(-3.33332819422e-1f);
  vm_f small = ax + ax * z * p;
  vm_f big = vm_splat(1.0f) - vm_splat(2.0f) / (vm_exp(ax + ax) + vm_splat(1.0f));
  vm_f t = vm_sel(ax < vm_splat(0.625f), small, big);
  return (vm_f)((vm_i)t | ((vm_i)x & vm_spliti((int32_t)0x80000000)));
}

/* c[0] z^(n-1) + ... + c[n-1] by Horner's rule (the same steps at every width). */
VM_INLINE vm_f vm_horner(vm_f z, const float* c, size_t n) {
  vm_f p = vm_splat(c[0]);
  size_t k;
  /* Unrolled: a loop would keep each coefficient's load in the dependency chain. */
#pragma GCC unroll 16
  for (k = 1; k < n; ++k) p = p * z + vm_splat(c[k]);
  return p;
}

/* erf x = x P(x^2) / Q(x^2) for |x| <= 3.92 (erf rounds to +-1 in float
 * beyond), evaluated in double and rounded to float once: a minimax fit of
 * erf(x)/x (relative error 1.8e-9, tools/fit_erf.py), so the result is
 * within 1 ULP (98.6 % correctly rounded) with no exp, no second branch and
 * no float cancellation; double keeps the 13 operations' rounding far below
 * a float ULP without FMA (-ffp-contract=off, every width the same bits).
 * Coefficients highest power first. */
static const double vm_erf_p[7] = {
    -1.2799899033118617e-08, 4.609253121852657e-06, 0.0003767596788623369, 0.0038386253242603465,
    0.054244003038895643,    0.18513530738569869,   1.1283791691460441};
static const double vm_erf_q[6] = {6.2399356344287855e-05, 0.0013015263850212682,
                                   0.015430056190723762,   0.11387378302681515,
                                   0.49740530054247312,    1.0};
#define VM_ERF_XMAX 3.92f

typedef double vm_d __attribute__((vector_size(VM_LANES * 8)));

/* A macro, not a function: a function returning a vector wider than the
 * baseline ISA's registers draws -Wpsabi even when inlined. */
#define VM_HORNER_D(out, z, c, n)                                                                  \
  do {                                                                                             \
    (out) = (vm_d){0} + (c)[0];                                                                    \
    _Pragma("GCC unroll 16") for (size_t k_ = 1; k_ < (n); ++k_)(out) = (out) * (z) + (c)[k_];     \
  } while (0)

/* erf x; NaN is the caller's (VM_APPLY). */
VM_INLINE vm_f vm_erf(vm_f x) {
  vm_f ax = vm_abs(x);
  vm_f ac = vm_sel(ax > vm_splat(VM_ERF_XMAX), vm_splat(VM_ERF_XMAX), ax);
  ac = (vm_f)((vm_i)ac | ((vm_i)x & vm_spliti((int32_t)0x80000000))); /* x's sign, -0 too */
  vm_d d = __builtin_convertvector(ac, vm_d), z = d * d, p, q;
  VM_HORNER_D(p, z, vm_erf_p, 7);
  VM_HORNER_D(q, z, vm_erf_q, 6);
  return __builtin_convertvector(d * p / q, vm_f);
}

/* GELU, (x/2) (1 + erf(x / sqrt 2)), evaluated in the order PyTorch's CPU
 * kernel uses, so it rounds as the reference does (including the negative
 * tail's cancellation in 1 + erf, which PyTorch has too). */
VM_INLINE vm_f vm_gelu(vm_f x) {
  return (x * vm_splat(0.5f)) * (vm_splat(1.0f) + vm_erf(x * vm_splat(0.70710678118654752f)));
}

/* GELU's tanh form, (x/2) (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi),
 * in PyTorch's order too. */
VM_INLINE vm_f vm_gelu_tanh(vm_f x) {
  vm_f a = vm_splat(0.7978845608028654f) * (x + vm_splat(0.044715f) * (x * x * x));
  return (vm_splat(0.5f) * x) * (vm_splat(1.0f) + vm_tanh(a));
}

/* NaN in, the input's quieted NaN out, whatever the function: left to the
 * arithmetic, which of two NaN operands propagates (sign, payload) depends on
 * the operand order the compiler picks, and variants must give the same bits. */
#define VM_APPLY(op, v) vm_sel((v) != (v), (v) + (v), vm_##op(v))

#define VM_DEFINE(op)                                                                              \
  void VM_FN(op)(const float* x, float* y, size_t n) {                                             \
    size_t i = 0;                                                                                  \
    /* Four vectors a step, then two: independent chains to overlap (one    \
     * vector's polynomial alone is latency-bound). */                      \
    for (; i + 4 * VM_LANES <= n; i += 4 * VM_LANES) {                                             \
      vm_f v0, v1, v2, v3;                                                                         \
      memcpy(&v0, x + i, sizeof v0);                                                               \
      memcpy(&v1, x + i + VM_LANES, sizeof v1);                                                    \
      memcpy(&v2, x + i + 2 * VM_LANES, sizeof v2);                                                \
      memcpy(&v3, x + i + 3 * VM_LANES, sizeof v3);                                                \
      v0 = VM_APPLY(op, v0);                                                                       \
      v1 = VM_APPLY(op, v1);                                                                       \
      v2 = VM_APPLY(op, v2);                                                                       \
      v3 = VM_APPLY(op, v3);                                                                       \
      memcpy(y + i, &v0, sizeof v0);                                                               \
      memcpy(y + i + VM_LANES, &v1, sizeof v1);                                                    \
      memcpy(y + i + 2 * VM_LANES, &v2, sizeof v2);                                                \
      memcpy(y + i + 3 * VM_LANES, &v3, sizeof v3);                                                \
    }                                                                                              \
    for (; i + 2 * VM_LANES <= n; i += 2 * VM_LANES) {                                             \
      vm_f v0, v1;                                                                                 \
      memcpy(&v0, x + i, sizeof v0);                                                               \
      memcpy(&v1, x + i + VM_LANES, sizeof v1);                                                    \
      v0 = VM_APPLY(op, v0);                                                                       \
      v1 = VM_APPLY(op, v1);                                                                       \
      memcpy(y + i, &v0, sizeof v0);                                                               \
      memcpy(y + i + VM_LANES, &v1, sizeof v1);                                                    \
    }                                                                                              \
    for (; i + VM_LANES <= n; i += VM_LANES) {                                                     \
      vm_f v;                                                                                      \
      memcpy(&v, x + i, sizeof v);                                                                 \
      v = VM_APPLY(op, v);                                                                         \
      memcpy(y + i, &v, sizeof v);                                                                 \
    }                                                                                              \
    if (i < n) { /* the tail through one padded vector: the same lane math */                      \
      vm_f v = vm_splat(0.0f);                                                                     \
      memcpy(&v, x + i, (n - i) * sizeof(float));                                                  \
      v = VM_APPLY(op, v);                                                                         \
      memcpy(y + i, &v, (n - i) * sizeof(float));                                                  \
    }                                                                                              \
  }

VM_DEFINE(exp)
VM_DEFINE(sigmoid)
VM_DEFINE(silu)
VM_DEFINE(tanh)
VM_DEFINE(erf)
VM_DEFINE(gelu)
VM_DEFINE(gelu_tanh)

/* ---- row primitives (pterun_compute_f32_rowops) ----
 * The dot product keeps 16 partial sums, element i going to sum i % 16, as
 * 16 / VM_LANES vectors, and adds them in one fixed tree: every width does the
 * same additions in the same order, so it gives the same bits. The tail goes
 * through one zero-padded group of 16. */
#define VM_ACC (16 / VM_LANES)

/* One group of 16: s[k] += a[k-th vector] * b[k-th vector]. */
VM_INLINE void vm_dot16(vm_f* s, const float* a, const float* b) {
  vm_f va, vb;
  size_t k;
  for (k = 0; k < VM_ACC; ++k) {
    memcpy(&va, a + k * VM_LANES, sizeof va);
    memcpy(&vb, b + k * VM_LANES, sizeof vb);
    s[k] = s[k] + va * vb;
  }
}

/* One group of 16: y = e^(x - m), s[k] += y's k-th vector. */
VM_INLINE void vm_exp16(vm_f* s, float* y, const float* x, vm_f m) {
  vm_f v;
  size_t k;
  for (k = 0; k < VM_ACC; ++k) {
    memcpy(&v, x + k * VM_LANES, sizeof v);
    v = vm_exp(v - m);
    memcpy(y + k * VM_LANES, &v, sizeof v);
    s[k] = s[k] + v;
  }
}

/* The 16 partial sums, added in one fixed tree: t[k] + t[k + w] for w = 8,
 * 4, 2, 1. In vector halves where the width allows (the same additions,
 * lane k of each half holding t[k] and t[k + w]: the same bits without the
 * round trip through memory, which dominated short dot products such as
 * attention's 48-float rows). */
typedef float vm_f8 __attribute__((vector_size(32)));
typedef float vm_f4 __attribute__((vector_size(16)));
typedef float vm_f2 __attribute__((vector_size(8)));
VM_INLINE float vm_sum16(const vm_f* s) {
#if VM_LANES == 16 && defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 12)
  const vm_f8 h8 = __builtin_shufflevector(s[0], s[0], 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(s[0], s[0], 8, 9, 10, 11, 12, 13, 14, 15);
#elif VM_LANES == 8
  const vm_f8 h8 = s[0] + s[1];
#endif
#if (VM_LANES == 16 && defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 12)) || VM_LANES == 8
  const vm_f4 h4 =
      __builtin_shufflevector(h8, h8, 0, 1, 2, 3) + __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  const vm_f2 h2 = __builtin_shufflevector(h4, h4, 0, 1) + __builtin_shufflevector(h4, h4, 2, 3);
  return h2[0] + h2[1];
#else
  float t[16];
  size_t k, w;
  memcpy(t, s, sizeof t);
  for (w = 8; w >= 1; w /= 2)
    for (k = 0; k < w; ++k) t[k] = t[k] + t[k + w];
  return t[0];
#endif
}

float VM_FN(dot)(const float* a, const float* b, size_t n) {
  vm_f s[VM_ACC];
  size_t i = 0, k;
  for (k = 0; k < VM_ACC; ++k) s[k] = vm_splat(0.0f);
  for (; i + 16 <= n; i += 16) vm_dot16(s, a + i, b + i);
  if (i < n) {
    float ta[16] = {0}, tb[16] = {0};
    memcpy(ta, a + i, (n - i) * sizeof(float));
    memcpy(tb, b + i, (n - i) * sizeof(float));
    vm_dot16(s, ta, tb);
  }
  return vm_sum16(s);
}

void VM_FN(axpby)(float* y, float beta, float alpha, const float* x, size_t n) {
  vm_f vb = vm_splat(beta), va = vm_splat(alpha), vx, vy;
  size_t i = 0;
  for (; i + VM_LANES <= n; i += VM_LANES) {
    memcpy(&vx, x + i, sizeof vx);
    memcpy(&vy, y + i, sizeof vy);
    vy = vy * vb + va * vx;
    memcpy(y + i, &vy, sizeof vy);
  }
  for (; i < n; ++i) y[i] = y[i] * beta + alpha * x[i];
}

void VM_FN(scale)(float* y, float s, size_t n) {
  vm_f vs = vm_splat(s), vy;
  size_t i = 0;
  for (; i + VM_LANES <= n; i += VM_LANES) {
    memcpy(&vy, y + i, sizeof vy);
    vy = vy * vs;
    memcpy(y + i, &vy, sizeof vy);
  }
  for (; i < n; ++i) y[i] *= s;
}

/* One group of 16: y = x - m, s[k] += y's k-th vector squared. */
VM_INLINE void vm_dev16(vm_f* s, float* y, const float* x, vm_f m) {
  vm_f v;
  size_t k;
  for (k = 0; k < VM_ACC; ++k) {
    memcpy(&v, x + k * VM_LANES, sizeof v);
    v = v - m;
    memcpy(y + k * VM_LANES, &v, sizeof v);
    s[k] = s[k] + v * v;
  }
}

/* Groups of 16 through g (y = f(x, m), s += a per-element term), the tail
 * through one group padded with `pad`, whose term must be 0; returns the sum
 * in the dot's fixed order. g is a constant at every call, so it inlines. */
VM_INLINE float vm_map_sum(float* y, const float* x, float m, size_t n, float pad,
                           void (*g)(vm_f*, float*, const float*, vm_f)) {
  vm_f s[VM_ACC];
  size_t i = 0, k;
  for (k = 0; k < VM_ACC; ++k) s[k] = vm_splat(0.0f);
  for (; i + 16 <= n; i += 16) g(s, y + i, x + i, vm_splat(m));
  if (i < n) {
    float t[16];
    for (k = 0; k < 16; ++k) t[k] = i + k < n ? x[i + k] : pad;
    g(s, t, t, vm_splat(m));
    memcpy(y + i, t, (n - i) * sizeof(float));
  }
  return vm_sum16(s);
}

/* y[i] = e^(x[i] - m) (the softmax step), returning sum y[i]; the padded tail
 * holds -inf, whose e^ is 0. */
float VM_FN(exp_sum)(float* y, const float* x, float m, size_t n) {
  return vm_map_sum(y, x, m, n, -INFINITY, vm_exp16);
}

/* sum x[i] in the dot's fixed order (the tail padded with zeros). */
float VM_FN(sum)(const float* x, size_t n) {
  vm_f s[VM_ACC], v;
  size_t i = 0, k;
  for (k = 0; k < VM_ACC; ++k) s[k] = vm_splat(0.0f);
  for (; i + 16 <= n; i += 16)
    for (k = 0; k < VM_ACC; ++k) {
      memcpy(&v, x + i + k * VM_LANES, sizeof v);
      s[k] = s[k] + v;
    }
  if (i < n) {
    float t[16] = {0};
    memcpy(t, x + i, (n - i) * sizeof(float));
    for (k = 0; k < VM_ACC; ++k) {
      memcpy(&v, t + k * VM_LANES, sizeof v);
      s[k] = s[k] + v;
    }
  }
  return vm_sum16(s);
}

/* y[i] = x[i] - m (a norm's centring), returning sum y[i]^2; the padded
 * tail holds m, whose deviation is 0. */
float VM_FN(dev_sq_sum)(float* y, const float* x, float m, size_t n) {
  return vm_map_sum(y, x, m, n, m, vm_dev16);
}
/* max_i x[i] (-inf for n == 0); a NaN anywhere returns the first NaN and a
 * zero maximum is +0, so the result is the same at every width. */
float VM_FN(max)(const float* x, size_t n) {
  vm_f m = vm_splat(-INFINITY), v;
  vm_i nan = vm_spliti(0);
  size_t i = 0;
  float r;
  for (; i + VM_LANES <= n; i += VM_LANES) {
    memcpy(&v, x + i, sizeof v);
    nan = nan | (v != v);
    m = vm_sel(v > m, v, m);
  }
  {
    float t[VM_LANES];
    int32_t f[VM_LANES];
    size_t k;
    memcpy(t, &m, sizeof t);
    memcpy(f, &nan, sizeof f);
    r = t[0];
    for (k = 0; k < VM_LANES; ++k) {
      r = t[k] > r ? t[k] : r;
      if (f[k]) r = NAN;
    }
  }
  for (; i < n; ++i) r = (x[i] > r || x[i] != x[i]) ? x[i] : r;
  if (r != r)
    for (i = 0; i < n; ++i)
      if (x[i] != x[i]) return x[i];
  return r == 0.0f ? 0.0f : r; /* which zero won depends on the order: +0 */
}
#undef VM_ACC
