/* Execute: element-wise nodes (binary with broadcasting, unary, quantized
 * clamp), softmax and conversions between f32, f16 and the quantized types.
 * Float results are clamped to the node's output range; quantized results
 * to its quantized image. */
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "backends/xnnpack/xb_nodes.h"
#include "pterun/cpu.h"

typedef float (*f2_fn)(float, float);
static float f_add(float x, float y) {
  return x + y;
}
static float f_sub(float x, float y) {
  return x - y;
}
static float f_mul(float x, float y) {
  return x * y;
}
static float f_div(float x, float y) {
  return x / y;
}
static float f_min(float x, float y) {
  return x < y ? x : (y < x ? y : (isnan(x) ? x : y));
}
static float f_max(float x, float y) {
  return x > y ? x : (y > x ? y : (isnan(x) ? x : y));
}
static float f_prelu(float x, float s) {
  return x < 0.0f ? x * s : x;
}

static f2_fn binary_fn(unsigned tag) {
  switch (tag) {
    case XB_N_ADD: return f_add;
    case XB_N_SUBTRACT: return f_sub;
    case XB_N_MULTIPLY: return f_mul;
    case XB_N_DIV: return f_div;
    case XB_N_MINIMUM: return f_min;
    case XB_N_MAXIMUM: return f_max;
    default: return f_prelu;
  }
}

/* Walks rows [k0, k1) of the broadcast output (a row: one run along the
 * last dim); fn(ctx, out index, a index, b index, count, a stride, b stride)
 * handles a run. */
typedef void (*run_fn)(void* ctx, size_t o, size_t ia, size_t ib, size_t n, size_t sa, size_t sb);
static void walk_rows(const bcast* b, run_fn fn, void* ctx, size_t k0, size_t k1) {
  uint32_t r = b->rank;
  if (r == 0) {
    if (k0 < k1) fn(ctx, 0, 0, 0, 1, 0, 0);
    return;
  }
  if (k0 >= k1) return;
  size_t idx[XB_MAX_DIMS] = {0};
  size_t inner = b->out[r - 1], rem = k0;
  for (int d = (int)r - 2; d >= 0; --d) { /* k0 < rows: no dim is 0 */
    idx[d] = rem % b->out[d];
    rem /= b->out[d];
  }
  for (size_t k = k0; k < k1; ++k) {
    size_t ia = 0, ib = 0;
    for (uint32_t d = 0; d + 1 < r; ++d) {
      ia += idx[d] * b->sa[d];
      ib += idx[d] * b->sb[d];
    }
    fn(ctx, k * inner, ia, ib, inner, b->sa[r - 1], b->sb[r - 1]);
    for (int d = (int)r - 2; d >= 0; --d) {
      if (++idx[d] < b->out[d]) break;
      idx[d] = 0;
    }
  }
}

/* An operand that is the whole output (contiguous) or one element is read
 * as a flat run: when both are, the walk is one row of every element. */
static void flatten_bcast(bcast* b) {
  if (b->rank <= 1) return;
  bool fa = true, fb = true, za = true, zb = true;
  size_t st = 1;
  for (int d = (int)b->rank - 1; d >= 0; --d) {
    if (b->out[d] != 1) {
      fa &= b->sa[d] == st;
      fb &= b->sb[d] == st;
      za &= b->sa[d] == 0;
      zb &= b->sb[d] == 0;
    }
    st *= b->out[d];
  }
  if (!((fa || za) && (fb || zb))) return;
  b->rank = 1;
  b->out[0] = st;
  b->sa[0] = fa ? 1 : 0;
  b->sb[0] = fb ? 1 : 0;
}

typedef struct walk_job {
  const bcast* b;
  run_fn fn;
  void* ctx;
  size_t chunk; /* rank 1: elements per tile unit */
} walk_job;

static void walk_task(void* c_, size_t start, size_t count) {
  const walk_job* j = c_;
  const bcast* b = j->b;
  if (b->rank == 1) {
    size_t lo = start * j->chunk, hi = (start + count) * j->chunk;
    if (hi > b->out[0]) hi = b->out[0];
    if (lo < hi) j->fn(j->ctx, lo, lo * b->sa[0], lo * b->sb[0], hi - lo, b->sa[0], b->sb[0]);
    return;
  }
  walk_rows(b, j->fn, j->ctx, start, start + count);
}

/* The whole walk, split over the pool when it is long enough. */
static void walk(const xb_exec* x, bcast* b, run_fn fn, void* ctx) {
  flatten_bcast(b);
  walk_job j = {b, fn, ctx, XB_PAR_MIN};
  if (b->rank == 0) {
    walk_rows(b, fn, ctx, 0, 1);
    return;
  }
  size_t inner = b->out[b->rank - 1], rows = 1, units, tile = 1;
  for (uint32_t d = 0; d + 1 < b->rank; ++d) rows *= b->out[d];
  if (b->rank == 1) {
    units = (inner + XB_PAR_MIN - 1) / XB_PAR_MIN;
  } else {
    units = rows;
    tile = inner >= XB_PAR_MIN ? 1 : XB_PAR_MIN / (inner ? inner : 1);
  }
  pterun_parallelize_1d_tile(units > tile ? x->pool : NULL, walk_task, &j, units, tile,
                             xb_par_flags(x->max_threads, (double)rows * (double)inner, 250.0));
}

typedef struct bin_ctx {
  const float* x;
  const float* y;
  float* o;
  f2_fn fn;
  float lo, hi;
  /* quantized */
  const void *qx, *qy;
  void* qo;
  const xb_value *vx, *vy, *vo;
  unsigned tag;
  int32_t qlo, qhi;
} bin_ctx;

static void run_bin_f32(void* c_, size_t o, size_t ia, size_t ib, size_t n, size_t sa, size_t sb) {
  bin_ctx* c = c_;
  const float* x = c->x + ia;
  const float* y = c->y + ib;
  float* out = c->o + o;
  const float lo = c->lo, hi = c->hi;
  // The operation outside the loops; unit and zero strides get their own
  // loops so that they vectorise.
#define XB_BIN_LOOP(expr)                                                                          \
  do {                                                                                             \
    if (sa == 1 && sb == 1)                                                                        \
      for (size_t i = 0; i < n; ++i) {                                                             \
        float a = x[i], b = y[i];                                                                  \
        out[i] = clampf((expr), lo, hi);                                                           \
      }                                                                                            \
    else if (sa == 1 && sb == 0)                                                                   \
      for (size_t i = 0; i < n; ++i) {                                                             \
        float a = x[i], b = y[0];                                                                  \
        out[i] = clampf((expr), lo, hi);                                                           \
      }                                                                                            \
    else                                                                                           \
      for (size_t i = 0; i < n; ++i) {                                                             \
        float a = x[i * sa], b = y[i * sb];                                                        \
        out[i] = clampf((expr), lo, hi);                                                           \
      }                                                                                            \
  } while (0)
  if (c->fn == f_add)
    XB_BIN_LOOP(a + b);
  else if (c->fn == f_sub)
    XB_BIN_LOOP(a - b);
  else if (c->fn == f_mul)
    XB_BIN_LOOP(a * b);
  else if (c->fn == f_div)
    XB_BIN_LOOP(a / b);
  else
    XB_BIN_LOOP(c->fn(a, b));
#undef XB_BIN_LOOP
}

/* Contiguous operands of one quantized type (a residual add's usual form):
 * the loop below with the types and the operation fixed, which the compiler
 * vectorises (the general loop tests the types and the operation per
 * element). Same operations, same codes. */
#define XB_Q8_RUN(T, OP)                                                                           \
  do {                                                                                             \
    const T* px = (const T*)c->qx + ia;                                                            \
    const T* py = (const T*)c->qy + ib;                                                            \
    T* po = (T*)c->qo + o;                                                                         \
    for (size_t i = 0; i < n; ++i) {                                                               \
      const float fx = (float)((int32_t)px[i] - zx) * sx;                                          \
      const float fy = (float)((int32_t)py[i] - zy) * sy;                                          \
      po[i] = (T)requant((OP) * inv, zo, c->qlo, c->qhi);                                          \
    }                                                                                              \
  } while (0)
#define XB_Q8_OPS(T)                                                                               \
  do {                                                                                             \
    if (c->tag == XB_N_ADD)                                                                        \
      XB_Q8_RUN(T, fx + fy);                                                                       \
    else if (c->tag == XB_N_SUBTRACT)                                                              \
      XB_Q8_RUN(T, fx - fy);                                                                       \
    else                                                                                           \
      XB_Q8_RUN(T, fx* fy);                                                                        \
  } while (0)

static void run_bin_q8(void* c_, size_t o, size_t ia, size_t ib, size_t n, size_t sa, size_t sb) {
  bin_ctx* c = c_;
  int ux = c->vx->dtype == XB_DT_QUINT8, uy = c->vy->dtype == XB_DT_QUINT8,
      uo = c->vo->dtype == XB_DT_QUINT8;
  float sx = c->vx->scale, sy = c->vy->scale, inv = 1.0f / c->vo->scale;
  int32_t zx = c->vx->zero_point, zy = c->vy->zero_point, zo = c->vo->zero_point;
  if (sa == 1 && sb == 1 && ux == uy && uy == uo) {
    if (uo)
      XB_Q8_OPS(uint8_t);
    else
      XB_Q8_OPS(int8_t);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    float fx = (float)(q_ld(c->qx, ia + i * sa, ux) - zx) * sx;
    float fy = (float)(q_ld(c->qy, ib + i * sb, uy) - zy) * sy;
    float r = c->tag == XB_N_ADD ? fx + fy : c->tag == XB_N_SUBTRACT ? fx - fy : fx * fy;
    q_st(c->qo, o + i, requant(r * inv, c->vo->zero_point, c->qlo, c->qhi), uo);
  }
}

/* ---- unary ---- */
static float u_apply(unsigned tag, float x, float p) {
  switch (tag) {
    case XB_N_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case XB_N_TANH: return tanhf(x);
    case XB_N_HARDSWISH: return x * clampf(x + 3.0f, 0.0f, 6.0f) / 6.0f;
    case XB_N_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case XB_N_EXP: return expf(x);
    case XB_N_LOG: return logf(x);
    case XB_N_SQUARE_ROOT: return sqrtf(x);
    case XB_N_RECIPROCAL_SQUARE_ROOT: return 1.0f / sqrtf(x);
    case XB_N_SQUARE: return x * x;
    case XB_N_ABS: return fabsf(x);
    case XB_N_NEGATE: return -x;
    case XB_N_FLOOR: return floorf(x);
    case XB_N_CEILING: return ceilf(x);
    case XB_N_SIN: return sinf(x);
    case XB_N_COS: return cosf(x);
    case XB_N_LEAKY_RELU: return x < 0.0f ? x * p : x;
    case XB_N_ELU: return x < 0.0f ? p * expm1f(x) : x;
    default: return x; /* Clamp, Copy */
  }
}

/* Softmax over the last dimension on compute's row operations (vectorised
 * max, e^(x - max) with its sum, scaling; the same bits on every ISA), as
 * XNNPACK computes it: one float sum and a multiply by its reciprocal. */
void xb_run_softmax(xb_exec* x, const xb_node* n) {
  const xb_value* in = &x->g->values[n->in[0]];
  size_t C = in->dims[in->rank - 1], rows = C ? in->numel / C : 0;
  const float* src = x->data[n->in[0]];
  float* dst = x->data[n->out];
  const pterun_compute_f32_rowops* ops = pterun_compute_f32_rowops_select();
  const int clamp = n->out_min > -INFINITY || n->out_max < INFINITY;
  for (size_t r = 0; r < rows; ++r) {
    const float* s = src + r * C;
    float* d = dst + r * C;
    float inv = 1.0f / ops->exp_sum(d, s, ops->max(s, C), C);
    ops->scale(d, inv, C);
    if (clamp)
      for (size_t c = 0; c < C; ++c) d[c] = clampf(d[c], n->out_min, n->out_max);
  }
}

void xb_run_convert(xb_exec* x, const xb_node* n) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  const void* src = x->data[n->in[0]];
  void* dst = x->data[n->out];
  if (is_f32(in) && is_f32(out)) {
    // fp32 <-> fp16: a copy; the fp16 side is rounded after the node.
    if (dst != src) memmove(dst, src, in->numel * sizeof(float));
  } else if (is_f32(in) && is_q8(out)) {
    /* one loop per type (they vectorise; the element type tested per value
     * did not) */
    const float inv = 1.0f / out->scale, *s = src;
    const int32_t zo = out->zero_point, lo = q_min(out), hi = q_max(out);
    if (out->dtype == XB_DT_QUINT8)
      for (size_t i = 0; i < in->numel; ++i)
        ((uint8_t*)dst)[i] = (uint8_t)requant(s[i] * inv, zo, lo, hi);
    else
      for (size_t i = 0; i < in->numel; ++i)
        ((int8_t*)dst)[i] = (int8_t)requant(s[i] * inv, zo, lo, hi);
  } else if (is_q8(in)) {
    const int32_t zi = in->zero_point;
    const float sc = in->scale;
    float* d = dst;
    if (in->dtype == XB_DT_QUINT8)
      for (size_t i = 0; i < in->numel; ++i)
        d[i] = (float)((int32_t)((const uint8_t*)src)[i] - zi) * sc;
    else
      for (size_t i = 0; i < in->numel; ++i)
        d[i] = (float)((int32_t)((const int8_t*)src)[i] - zi) * sc;
  } else {
    // f32 -> qdint8: one (scale, zero point) per row, XNNPACK's rule: the
    // range widened to include 0, zero point from the end with the smaller
    // error, rounded to nearest even.
    size_t rows = dq_rows(out), C = rows ? in->numel / rows : 0;
    uint8_t* params = (uint8_t*)dst + dq_params_offset(out);
    for (size_t r = 0; r < rows; ++r) {
      const float* s = (const float*)src + r * C;
      // The range from 0 (XNNPACK widens it to include 0); NaN never enters.
      float mn = 0.0f, mx = 0.0f;
      pterun_compute_f32_minmax(s, C, &mn, &mx);
      const float qmin = -128.0f, qmax = 127.0f;
      float scale = mn == mx ? 1.0f : (qmax - qmin) / (mx - mn);
      float min_s = mn * scale, max_s = mx * scale;
      float zp = (qmin + min_s) + (qmax + max_s) > 0.0f ? qmin - min_s : qmax - max_s;
      // Written so NaN (from NaN or infinite inputs) lands on qmin: a float
      // to integer conversion of NaN is undefined behaviour in C.
      zp = zp > qmin ? (zp < qmax ? zp : qmax) : qmin;
      int32_t z = (int32_t)lrintf(zp);
      float inv_scale = 1.0f / scale;
      float mult = 1.0f / inv_scale;
      // Round half to even by adding and subtracting 1.5 * 2^23 after a
      // clamp just past the int8 range (no libm call per element; NaN goes
      // through the comparisons to qmin as before).
      const float zf = (float)z, tlo = qmin - zf - 1.0f, thi = qmax - zf + 1.0f;
      size_t c1 = 0;
#if defined(__SSE2__)
      // The same operations 16 at a time: max(tlo, min(thi, t)) is the
      // clamp below (NaN stays NaN), max(q, qmin) then min(., qmax) the
      // final one (NaN -> qmin); the packs saturate nothing (|q| <= 128).
      // The SSE4.1 bit stands for "SIMD allowed": PTERUN_ISA_MASK=0 runs
      // the scalar loop alone.
      if ((pterun_cpu_features() & PTERUN_CPU_X86_SSE4_1) != 0) {
        const __m128 vm = _mm_set1_ps(mult), vlo = _mm_set1_ps(tlo), vhi = _mm_set1_ps(thi);
        const __m128 magic = _mm_set1_ps(12582912.0f), vz = _mm_set1_ps(zf);
        const __m128 vqmin = _mm_set1_ps(qmin), vqmax = _mm_set1_ps(qmax);
        int8_t* d = (int8_t*)dst + r * C;
        for (; c1 + 16 <= C; c1 += 16) {
          __m128i q[4];
          for (int j = 0; j < 4; ++j) {
            __m128 t = _mm_mul_ps(_mm_loadu_ps(s + c1 + 4 * j), vm);
            t = _mm_max_ps(vlo, _mm_min_ps(vhi, t));
            t = _mm_add_ps(_mm_sub_ps(_mm_add_ps(t, magic), magic), vz);
            t = _mm_min_ps(_mm_max_ps(t, vqmin), vqmax);
            q[j] = _mm_cvttps_epi32(t);
          }
          _mm_storeu_si128((__m128i*)(void*)(d + c1), _mm_packs_epi16(_mm_packs_epi32(q[0], q[1]),
                                                                      _mm_packs_epi32(q[2], q[3])));
        }
      }
#endif
      for (size_t c = c1; c < C; ++c) {
        float t = s[c] * mult;
        t = t < tlo ? tlo : (t > thi ? thi : t);
        float q = ((t + 12582912.0f) - 12582912.0f) + zf;
        q = q > qmin ? (q < qmax ? q : qmax) : qmin;
        ((int8_t*)dst)[r * C + c] = (int8_t)q;
      }
      memcpy(params + r * 8, &inv_scale, 4);
      memcpy(params + r * 8 + 4, &z, 4);
    }
  }
}

void xb_run_binary(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  const xb_value* in2 = &g->values[n->in[1]];
  bcast b = {0};
  /* Checked at compile and at every reshape; a mismatch cannot reach here. */
  if (!make_bcast(in, in2, out, &b)) return;
  bin_ctx c;
  memset(&c, 0, sizeof c);
  if (is_f32(in)) {
    c.x = x->data[n->in[0]];
    c.y = x->data[n->in[1]];
    c.o = x->data[n->out];
    c.fn = binary_fn(n->tag);
    c.lo = n->out_min;
    c.hi = n->out_max;
    walk(x, &b, run_bin_f32, &c);
  } else {
    c.qx = x->data[n->in[0]];
    c.qy = x->data[n->in[1]];
    c.qo = x->data[n->out];
    c.vx = in;
    c.vy = in2;
    c.vo = out;
    c.tag = n->tag;
    q_range(n, out, &c.qlo, &c.qhi);
    walk(x, &b, run_bin_q8, &c);
  }
}

typedef struct un_job {
  const xb_node* n;
  const float* s;
  float* d;
  int vec; /* the result is already in d (compute's vector math): clamp only */
} un_job;

/* d[i] = clamp(op(s[i])) for i in [lo, hi): the switch outside the loops. */
static void un_range(const un_job* j, size_t lo, size_t hi) {
  const xb_node* n = j->n;
  const float *s = j->s, mn = n->out_min, mx = n->out_max, p = n->fparam;
  float* d = j->d;
#define XB_UN_LOOP(expr)                                                                           \
  for (size_t i = lo; i < hi; ++i) {                                                               \
    float x = s[i];                                                                                \
    d[i] = clampf((expr), mn, mx);                                                                 \
  }                                                                                                \
  return
  if (j->vec) {
    s = d;
    XB_UN_LOOP(x);
  }
  switch (n->tag) {
    case XB_N_HARDSWISH: XB_UN_LOOP(x * clampf(x + 3.0f, 0.0f, 6.0f) / 6.0f);
    case XB_N_SQUARE: XB_UN_LOOP(x * x);
    case XB_N_ABS: XB_UN_LOOP(fabsf(x));
    case XB_N_NEGATE: XB_UN_LOOP(-x);
    case XB_N_SQUARE_ROOT: XB_UN_LOOP(sqrtf(x));
    case XB_N_RECIPROCAL_SQUARE_ROOT: XB_UN_LOOP(1.0f / sqrtf(x));
    case XB_N_FLOOR: XB_UN_LOOP(floorf(x));
    case XB_N_CEILING: XB_UN_LOOP(ceilf(x));
    case XB_N_LEAKY_RELU: XB_UN_LOOP(x < 0.0f ? x * p : x);
    case XB_N_CLAMP: XB_UN_LOOP(x);
    default: XB_UN_LOOP(u_apply(n->tag, x, p));
  }
#undef XB_UN_LOOP
}

static void un_task(void* c_, size_t start, size_t count) {
  un_range(c_, start * XB_PAR_MIN, (start + count) * XB_PAR_MIN);
}

static void un_task_tail(const un_job* j, size_t numel) {
  un_range(j, numel / XB_PAR_MIN * XB_PAR_MIN, numel);
}

/* Element-wise fp32 nodes: exp, sigmoid and tanh on compute's vector math,
 * the rest here; both split over the pool. */
void xb_run_unary(xb_exec* x, const xb_node* n) {
  size_t numel = x->g->values[n->in[0]].numel;
  un_job j = {n, x->data[n->in[0]], x->data[n->out], 0};
  int op = n->tag == XB_N_EXP       ? PTERUN_COMPUTE_EXP
           : n->tag == XB_N_SIGMOID ? PTERUN_COMPUTE_SIGMOID
           : n->tag == XB_N_TANH    ? PTERUN_COMPUTE_TANH
                                    : -1;
  if (op >= 0) {
    pterun_compute_f32_unary(x->pool, x->max_threads, op, j.s, j.d, numel);
    if (!(n->out_min > -INFINITY) && !(n->out_max < INFINITY)) return;
    j.vec = 1;
  }
  size_t units = numel / XB_PAR_MIN;
  pterun_parallelize_1d_tile(units > 1 ? x->pool : NULL, un_task, &j, units, 1,
                             xb_par_flags(x->max_threads, (double)numel, j.vec ? 100.0 : 250.0));
  un_task_tail(&j, numel);
}
