/* Node types: load-time checks and preparation (xb_prepare_node) and the
 * execute-time loops (xb_run_node). Tensors around convolutions and pooling
 * are NHWC, as the exporter writes them. Float results are clamped to the
 * node's output range (fused ReLU/ReLU6/hardtanh); quantized results to its
 * quantized image. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_internal.h"

#define BADN(...) xb_fail(a->logger, PTERUN_STATUS_INVALID_PROGRAM, __VA_ARGS__)
#define UNSUP(...) xb_fail(a->logger, PTERUN_STATUS_NOT_SUPPORTED, __VA_ARGS__)

static bool is_f32(const xb_value* v) {
  return v->dtype == XB_DT_FP32 && v->qkind == XB_Q_NONE;
}
static bool is_q8(const xb_value* v) {
  return (v->dtype == XB_DT_QINT8 || v->dtype == XB_DT_QUINT8) && v->qkind == XB_Q_PER_TENSOR;
}
static size_t elem_size(const xb_value* v) {
  switch (v->dtype) {
    case XB_DT_FP32:
    case XB_DT_INT32:
    case XB_DT_QINT32:
    case XB_DT_QCINT32: return 4;
    case XB_DT_FP16:
    case XB_DT_BF16: return 2;
    case XB_DT_QINT8:
    case XB_DT_QUINT8:
    case XB_DT_QCINT8:
    case XB_DT_QDINT8: return 1;
    default: return 0;
  }
}
static bool same_dims(const xb_value* x, const xb_value* y) {
  if (x->rank != y->rank) return false;
  for (uint32_t d = 0; d < x->rank; ++d)
    if (x->dims[d] != y->dims[d]) return false;
  return true;
}
static bool same_quant(const xb_value* x, const xb_value* y) {
  return x->dtype == y->dtype && x->qkind == y->qkind &&
         (x->qkind != XB_Q_PER_TENSOR || (x->scale == y->scale && x->zero_point == y->zero_point));
}

/* ---- quantized helpers ---- */
static inline int32_t q_min(const xb_value* v) {
  return v->dtype == XB_DT_QUINT8 ? 0 : -128;
}
static inline int32_t q_max(const xb_value* v) {
  return v->dtype == XB_DT_QUINT8 ? 255 : 127;
}
static inline int32_t q_ld(const void* p, size_t i, int u) {
  return u ? (int32_t)((const uint8_t*)p)[i] : (int32_t)((const int8_t*)p)[i];
}
static inline void q_st(void* p, size_t i, int32_t q, int u) {
  if (u)
    ((uint8_t*)p)[i] = (uint8_t)q;
  else
    ((int8_t*)p)[i] = (int8_t)q;
}
/* The quantized image of the node's float output range, within the type. */
static void q_range(const xb_node* n, const xb_value* o, int32_t* lo, int32_t* hi) {
  *lo = q_min(o);
  *hi = q_max(o);
  if (isfinite(n->out_min)) {
    float q = nearbyintf(n->out_min / o->scale) + (float)o->zero_point;
    if (q > (float)*lo) *lo = q > (float)*hi ? *hi : (int32_t)q;
  }
  if (isfinite(n->out_max)) {
    float q = nearbyintf(n->out_max / o->scale) + (float)o->zero_point;
    if (q < (float)*hi) *hi = q < (float)*lo ? *lo : (int32_t)q;
  }
}
static inline int32_t requant(float x, int32_t zp, int32_t lo, int32_t hi) {
  float lo_f = (float)(lo - zp), hi_f = (float)(hi - zp);
  x = x < lo_f ? lo_f : (x > hi_f ? hi_f : x);
  // Round half to even without a libm call: |x| <= 510 here, far below
  // 2^22, where adding and subtracting 1.5 * 2^23 rounds in the current
  // (nearest-even) mode. NaN compares false and is mapped to lo (a select,
  // not a branch: loops over requant vectorise).
  x = x == x ? x : lo_f;
  return (int32_t)((x + 12582912.0f) - 12582912.0f) + zp;
}
static inline float clampf(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* ---- broadcasting (binary nodes) ---- */
typedef struct bcast {
  uint32_t rank;
  size_t out[XB_MAX_DIMS];
  size_t sa[XB_MAX_DIMS], sb[XB_MAX_DIMS]; /* element strides, 0 when broadcast */
} bcast;

/* The output must have the operands' broadcast shape (the kit's rules). */
static bool make_bcast(const xb_value* x, const xb_value* y, const xb_value* o, bcast* b) {
  int64_t sx[XB_MAX_DIMS], sy[XB_MAX_DIMS], so[XB_MAX_DIMS];
  if (x->rank > XB_MAX_DIMS || y->rank > XB_MAX_DIMS) return false;
  for (uint32_t k = 0; k < x->rank; ++k) sx[k] = (int64_t)x->dims[k];
  for (uint32_t k = 0; k < y->rank; ++k) sy[k] = (int64_t)y->dims[k];
  int rb = pterun_broadcast_sizes(sx, x->rank, sy, y->rank, so, NULL);
  if (rb < 0 || o->rank != (uint32_t)rb) return false;
  uint32_t r = (uint32_t)rb;
  b->rank = r;
  size_t stx = 1, sty = 1;
  for (int d = (int)r - 1; d >= 0; --d) {
    int dx = d - (int)(r - x->rank), dy = d - (int)(r - y->rank);
    size_t nx = dx >= 0 ? x->dims[dx] : 1, ny = dy >= 0 ? y->dims[dy] : 1;
    if (o->dims[d] != (size_t)so[d]) return false;
    b->out[d] = o->dims[d];
    b->sa[d] = nx == 1 ? 0 : stx;
    b->sb[d] = ny == 1 ? 0 : sty;
    stx *= nx;
    sty *= ny;
  }
  return true;
}

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

/* Elements per task of a parallel element-wise loop. */
#define XB_PAR_MIN ((size_t)16384)

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
                             PTERUN_PARALLEL_MAX_THREADS(x->max_threads));
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

static void run_bin_q8(void* c_, size_t o, size_t ia, size_t ib, size_t n, size_t sa, size_t sb) {
  bin_ctx* c = c_;
  int ux = c->vx->dtype == XB_DT_QUINT8, uy = c->vy->dtype == XB_DT_QUINT8,
      uo = c->vo->dtype == XB_DT_QUINT8;
  float sx = c->vx->scale, sy = c->vy->scale, inv = 1.0f / c->vo->scale;
  int32_t zx = c->vx->zero_point, zy = c->vy->zero_point;
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

static bool is_unary(unsigned tag) {
  switch (tag) {
    case XB_N_SIGMOID:
    case XB_N_TANH:
    case XB_N_HARDSWISH:
    case XB_N_GELU:
    case XB_N_EXP:
    case XB_N_LOG:
    case XB_N_SQUARE_ROOT:
    case XB_N_RECIPROCAL_SQUARE_ROOT:
    case XB_N_SQUARE:
    case XB_N_ABS:
    case XB_N_NEGATE:
    case XB_N_FLOOR:
    case XB_N_CEILING:
    case XB_N_SIN:
    case XB_N_COS:
    case XB_N_LEAKY_RELU:
    case XB_N_ELU:
    case XB_N_CLAMP: return true;
    default: return false;
  }
}

/* ---- convolution geometry ---- */
static bool conv_out(size_t in, uint32_t pa, uint32_t pb, uint32_t k, uint32_t s, uint32_t d,
                     size_t* out) {
  if (k == 0 || s == 0 || d == 0) return false;
  size_t eff = (size_t)d * (k - 1) + 1, padded = in + pa + pb;
  if (padded < eff) return false;
  *out = (padded - eff) / s + 1;
  return true;
}

/* Prepared data of a GEMM node (FullyConnected / Conv2d). */
typedef struct gemm_prep {
  size_t K, N;                       /* per group for convolutions */
  float* w;                          /* f32: [groups][K][N] */
  const pterun_compute_packed** fpk; /* f32: w per group packed for the GEMM engine, or NULL */
  float* bias;                       /* f32 bias [OC] (float and dynamic paths) */
  int32_t* ibias;                    /* int32 bias [OC] (static quantized) */
  float* mult;                       /* static: s_in*s_w[c]/s_out; dynamic: scales [K groups][OC] */
  size_t groups_k;                   /* dynamic group-wise: number of K groups */
  size_t gsize;                      /* dynamic group size (K when per channel) */
  size_t tile;                       /* output pixels per im2col block of a convolution */
  /* int8 products on compute's int8 GEMM: weights packed at load, one per
   * group (convolution groups; dynamic: K groups) */
  pterun_compute_qs8_packed* qw;
  int32_t* wzp; /* static: per-column weight zero point, or NULL */
  int16_t* wdq; /* static depthwise: [KH][KW][OC], zero point removed */
  float* qbias; /* static: int32 bias * multiplier, per column */
  float* csum;  /* dynamic: the packed weights' column sums, [K groups][N] */
} gemm_prep;

/* Weight element (oc, k) of a [OC, K] filter stored as its datatype. */
static int32_t w_q(const xb_value* w, size_t oc, size_t k, size_t K) {
  if (w->dtype == XB_DT_QCINT4 || w->dtype == XB_DT_QBINT4) {
    size_t rowb = (K + 1) / 2;
    uint8_t byte = w->constant[oc * rowb + k / 2];
    return (int32_t)((k & 1) ? (byte >> 4) : (byte & 15)) - 8;
  }
  if (w->dtype == XB_DT_QUINT8) return (int32_t)w->constant[oc * K + k] - w->zero_point;
  return (int32_t)((const int8_t*)w->constant)[oc * K + k] -
         (w->qkind == XB_Q_PER_TENSOR ? w->zero_point : 0);
}

static float w_scale(const xb_value* w, size_t oc) {
  if (w->qkind == XB_Q_PER_CHANNEL) return w->scales[oc];
  return w->scale;
}

/* Bias (float) of output channel oc, or 0. */
static pterun_status prep_bias_f32(const pterun_backend_init_args* a, xb_graph* g, const xb_node* n,
                                   size_t OC, gemm_prep* p) {
  p->bias = xb_alloc(g, OC * sizeof(float));
  if (p->bias == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (n->nin < 3) return PTERUN_STATUS_OK;
  const xb_value* b = &g->values[n->in[2]];
  if (b->loc != XB_LOC_CONST || !is_f32(b) || b->numel != OC)
    return BADN("bias must be a constant fp32 vector of %zu", OC);
  memcpy(p->bias, b->constant, OC * sizeof(float));
  return PTERUN_STATUS_OK;
}

/* Packs `parts` int8 weight blocks for compute's int8 GEMM: block i is rows
 * [i * rs_n .. + n) x columns [i * k ..+ k) of W (row stride w_rs) when
 * by_k, else rows [i * n ..+ n) x all k columns. */
static pterun_status pack_q(const pterun_backend_init_args* a, xb_graph* g, const int8_t* W,
                            size_t w_rs, size_t n, size_t k, size_t parts, int by_k, gemm_prep* p) {
  size_t bytes = pterun_compute_qs8_pack_size(NULL, (int64_t)n, (int64_t)k);
  if (bytes == 0) return UNSUP("int8 product of %zu x %zu is outside the engine's limits", n, k);
  p->qw = xb_alloc(g, parts * sizeof *p->qw);
  if (p->qw == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t i = 0; i < parts; ++i) {
    void* buf = xb_alloc(g, bytes);
    if (buf == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    const int8_t* w0 = by_k ? W + i * k : W + i * n * w_rs;
    if (pterun_compute_qs8_pack(NULL, (int64_t)n, (int64_t)k, w0, (int64_t)w_rs, 1, buf, bytes,
                                &p->qw[i]) != 0)
      return BADN("cannot pack a %zu x %zu int8 weight", n, k);
  }
  return PTERUN_STATUS_OK;
}

/* f32 weights [G][K][N] packed once for the GEMM engine's microkernel (the
 * products of more than a couple of rows read them instead of packing B on
 * every call). No packing when the engine has no layout for the sizes. */
static pterun_status pack_f32(xb_graph* g, size_t G, size_t K, size_t N, gemm_prep* p) {
  size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, (int64_t)K, (int64_t)N);
  if (bytes == 0) return PTERUN_STATUS_OK;
  p->fpk = xb_alloc(g, G * sizeof *p->fpk);
  if (p->fpk == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t gi = 0; gi < G; ++gi) {
    void* mem = xb_alloc(g, bytes);
    if (mem == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    pterun_compute_matrix b = {p->w + gi * K * N, PTERUN_DTYPE_F32, (int64_t)N, 1};
    p->fpk[gi] =
        pterun_compute_gemm_pack(mem, bytes, PTERUN_COMPUTE_OPERAND_B, (int64_t)K, (int64_t)N, &b);
  }
  return PTERUN_STATUS_OK;
}

/* Static int8 weights (QINT8 per tensor or QCINT8 per channel, [OC][K] as
 * stored) packed per group, with their zero points. */
static pterun_status prep_q_weights(const pterun_backend_init_args* a, xb_graph* g,
                                    const xb_value* w, size_t G, size_t OCg, size_t K,
                                    gemm_prep* p) {
  PTERUN_TRY(pack_q(a, g, (const int8_t*)w->constant, K, OCg, K, G, 0, p));
  if (w->qkind == XB_Q_PER_TENSOR && w->zero_point != 0) {
    p->wzp = xb_alloc(g, G * OCg * sizeof(int32_t));
    if (p->wzp == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    for (size_t c = 0; c < G * OCg; ++c) p->wzp[c] = w->zero_point;
  }
  return PTERUN_STATUS_OK;
}

/* Static int8: int32 bias and per-channel requantization multipliers. */
static pterun_status prep_q_static(const pterun_backend_init_args* a, xb_graph* g, const xb_node* n,
                                   size_t OC, const xb_value* in, const xb_value* w,
                                   const xb_value* out, gemm_prep* p) {
  p->ibias = xb_alloc(g, OC * sizeof(int32_t));
  p->mult = xb_alloc(g, OC * sizeof(float));
  if (p->ibias == NULL || p->mult == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (w->qkind == XB_Q_PER_CHANNEL && w->num_scales != OC)
    return BADN("weight has %u scales for %zu channels", w->num_scales, OC);
  for (size_t c = 0; c < OC; ++c) p->mult[c] = in->scale * w_scale(w, c) / out->scale;
  if (n->nin < 3) return PTERUN_STATUS_OK;
  const xb_value* b = &g->values[n->in[2]];
  if (b->loc != XB_LOC_CONST || (b->dtype != XB_DT_QINT32 && b->dtype != XB_DT_QCINT32) ||
      b->numel != OC)
    return BADN("bias must be a constant qint32/qcint32 vector of %zu", OC);
  for (size_t c = 0; c < OC; ++c) p->ibias[c] = (int32_t)pterun_fb_read_u32(b->constant + 4 * c);
  return PTERUN_STATUS_OK;
}

/* The int8 GEMM's epilogue adds a float bias after scaling: bias * mult. */
static pterun_status prep_qbias(xb_graph* g, size_t OC, gemm_prep* p) {
  p->qbias = xb_alloc(g, OC * sizeof(float));
  if (p->qbias == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t c = 0; c < OC; ++c) p->qbias[c] = (float)p->ibias[c] * p->mult[c];
  return PTERUN_STATUS_OK;
}

/* Dynamic int8 activations: int8 weights [K][N] (zero points removed) and
 * per-channel or group scales as f32 [OC][groups]. */
static pterun_status prep_q_dynamic(const pterun_backend_init_args* a, xb_graph* g,
                                    const xb_node* n, size_t OC, size_t K, const xb_value* w,
                                    gemm_prep* p) {
  (void)n;
  if (w->qkind == XB_Q_GROUP) {
    p->gsize = (size_t)w->group_size;
    p->groups_k = K / p->gsize;
  } else if (w->qkind == XB_Q_PER_CHANNEL && w->num_scales == OC) {
    p->gsize = K;
    p->groups_k = 1;
  } else {
    return BADN("dynamic weights need per-channel or group-wise scales");
  }
  p->mult = xb_alloc(g, OC * p->groups_k * sizeof(float));
  // Weights as int8 [OC][K] (int4 unpacked), packed per K group; the copy
  // lives during load only.
  int8_t* wt = OC && K ? pterun_alloc(g->allocator, OC * K, 64) : NULL;
  if (p->mult == NULL || (OC && K && wt == NULL)) {
    pterun_free(g->allocator, wt);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (size_t oc = 0; oc < OC; ++oc)
    for (size_t k = 0; k < K; ++k) wt[oc * K + k] = (int8_t)w_q(w, oc, k, K);
  pterun_status st = pack_q(a, g, wt, K, OC, p->gsize, p->groups_k, 1, p);
  pterun_free(g->allocator, wt);
  PTERUN_TRY(st);
  p->csum = xb_alloc(g, p->groups_k * OC * sizeof(float));
  if (p->csum == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t gk = 0; gk < p->groups_k; ++gk)
    for (size_t oc = 0; oc < OC; ++oc) p->csum[gk * OC + oc] = (float)p->qw[gk].col_sum[oc];
  for (size_t oc = 0; oc < OC; ++oc)
    for (size_t gk = 0; gk < p->groups_k; ++gk)
      p->mult[gk * OC + oc] = w->qkind == XB_Q_GROUP
                                  ? pterun_bf16_to_f32(w->scales_bf16[oc * p->groups_k + gk])
                                  : w->scales[oc];
  return PTERUN_STATUS_OK;
}

/* Rows of a dynamically quantized value and the bytes of its parameters
 * (inverse scale f32 + zero point i32 per row, stored after the data). */
static size_t dq_rows(const xb_value* v) {
  size_t inner = 1;
  for (uint32_t d = v->rank - (uint32_t)v->nonbatch_dims; d < v->rank; ++d) inner *= v->dims[d];
  return inner ? v->numel / inner : 0;
}
static size_t dq_params_offset(const xb_value* v) {
  return (v->numel + 15) & ~(size_t)15;
}

enum { KIND_F32 = 0, KIND_QS8 = 1, KIND_QD8 = 2 };
enum { XB_DQ_ROWS = 16 }; /* rows per block of a dynamically quantized GEMM */

static pterun_status prep_fc(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  if (w->loc != XB_LOC_CONST || w->rank != 2) return BADN("filter must be a constant 2-D tensor");
  bool tw = (n->flags & 1) != 0;
  size_t N = tw ? w->dims[1] : w->dims[0], K = tw ? w->dims[0] : w->dims[1];
  if (in->rank < 1 || in->dims[in->rank - 1] != K || out->rank < 1 ||
      out->dims[out->rank - 1] != N || (K ? in->numel / K : 0) * N != out->numel)
    return BADN("shapes do not match a [%zu, %zu] filter", N, K);
  gemm_prep* p = xb_alloc(g, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  p->K = K;
  p->N = N;
  n->packed = p;
  size_t M = K ? in->numel / K : 0;
  if (is_f32(in) && is_f32(w) && is_f32(out)) {
    n->kind = KIND_F32;
    p->w = xb_alloc(g, K * N * sizeof(float));
    if (p->w == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    const float* src = (const float*)w->constant;
    for (size_t nn = 0; nn < N; ++nn)
      for (size_t k = 0; k < K; ++k) p->w[k * N + nn] = tw ? src[k * N + nn] : src[nn * K + k];
    if (M > 16) PTERUN_TRY(pack_f32(g, 1, K, N, p)); /* fewer rows read B in place */
    return prep_bias_f32(a, g, n, N, p);
  }
  if (tw) return UNSUP("transposed quantized filters are not implemented");
  if (is_q8(in) && is_q8(out) &&
      ((w->dtype == XB_DT_QCINT8 && w->qkind == XB_Q_PER_CHANNEL) ||
       (w->dtype == XB_DT_QINT8 && w->qkind == XB_Q_PER_TENSOR))) {
    n->kind = KIND_QS8;
    (void)M;
    PTERUN_TRY(prep_q_weights(a, g, w, 1, N, K, p));
    PTERUN_TRY(prep_q_static(a, g, n, N, in, w, out, p));
    return prep_qbias(g, N, p);
  }
  if (in->dtype == XB_DT_QDINT8 && in->qkind == XB_Q_DYNAMIC && is_f32(out) &&
      (w->dtype == XB_DT_QCINT8 || w->dtype == XB_DT_QCINT4 || w->dtype == XB_DT_QBINT4)) {
    // The per-row parameters exist only behind values a Convert produced.
    if (in->loc != XB_LOC_ARENA || in->nbytes < dq_params_offset(in) + dq_rows(in) * 8)
      return UNSUP("dynamically quantized input not produced by a Convert in this graph");
    n->kind = KIND_QD8;
    PTERUN_TRY(prep_q_dynamic(a, g, n, N, K, w, p));
    n->scratch_bytes = XB_DQ_ROWS * N * sizeof(float) + 64;
    return prep_bias_f32(a, g, n, N, p);
  }
  return UNSUP("FullyConnected on %s x %s -> %s is not implemented", xb_dtype_name(in->dtype),
               xb_dtype_name(w->dtype), xb_dtype_name(out->dtype));
}

static pterun_status prep_conv(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  bool dw = n->tag == XB_N_DEPTHWISE_CONV2D;
  if (in->dtype == XB_DT_QDINT8)
    return UNSUP("%s on qdint8 (dynamically quantized convolution) is not implemented",
                 xb_node_name(n->tag));
  if (in->rank != 4 || out->rank != 4 || w->rank != 4 || w->loc != XB_LOC_CONST)
    return BADN("convolution needs 4-D NHWC tensors and a constant filter");
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out, IC = in->dims[3], OC = out->dims[3];
  size_t OH, OW;
  if (G == 0 || ICg == 0 || OCg == 0 || IC != G * ICg || OC != G * OCg ||
      in->dims[0] != out->dims[0] ||
      !conv_out(in->dims[1], n->pad[0], n->pad[2], n->kh, n->sh, n->dh, &OH) ||
      !conv_out(in->dims[2], n->pad[3], n->pad[1], n->kw, n->sw, n->dw, &OW) ||
      OH != out->dims[1] || OW != out->dims[2])
    return BADN("convolution geometry does not match its tensors");
  if (dw ? (ICg != 1 || w->dims[0] != 1 || w->dims[1] != n->kh || w->dims[2] != n->kw ||
            w->dims[3] != OC)
         : (w->dims[0] != OC || w->dims[1] != n->kh || w->dims[2] != n->kw || w->dims[3] != ICg))
    return BADN("filter shape does not match the convolution");
  gemm_prep* p = xb_alloc(g, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  n->packed = p;
  size_t KK = (size_t)n->kh * n->kw, K = KK * ICg;
  p->K = K;
  p->N = OCg;
  enum { TILE = 64 };
  if (is_f32(in) && is_f32(w) && is_f32(out)) {
    n->kind = KIND_F32;
    p->w = xb_alloc(g, (dw ? KK * OC : G * K * OCg) * sizeof(float));
    if (p->w == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    const float* src = (const float*)w->constant;
    if (dw) {
      memcpy(p->w, src, KK * OC * sizeof(float)); /* [KH][KW][OC] as stored */
    } else {
      // [OC][KH][KW][ICg] -> per group [KH*KW*ICg][OCg]
      for (size_t gi = 0; gi < G; ++gi)
        for (size_t o = 0; o < OCg; ++o)
          for (size_t k = 0; k < K; ++k)
            p->w[gi * K * OCg + k * OCg + o] = src[(gi * OCg + o) * K + k];
      // im2col blocks of about 256 KiB: products big enough for the pool
      // and to amortise packing the filter.
      size_t npix = OH * OW, tile = K ? ((size_t)64 << 10) / K : TILE;
      tile = tile < TILE ? TILE : tile;
      p->tile = tile < npix ? tile : (npix ? npix : 1);
      n->scratch_bytes = p->tile * K * sizeof(float) + 64;
      PTERUN_TRY(pack_f32(g, G, K, OCg, p));
    }
    return prep_bias_f32(a, g, n, OC, p);
  }
  if (is_q8(in) && is_q8(out) &&
      ((w->dtype == XB_DT_QCINT8 && w->qkind == XB_Q_PER_CHANNEL) ||
       (w->dtype == XB_DT_QINT8 && w->qkind == XB_Q_PER_TENSOR))) {
    n->kind = KIND_QS8;
    if (w->qkind == XB_Q_PER_CHANNEL && w->channel_dim != (dw ? 3 : 0))
      return BADN("per-channel filter scales on dim %d", w->channel_dim);
    if (dw) {
      // Depthwise: filter [KH][KW][OC] with the zero point taken out (int16:
      // int8 minus a zero point does not fit int8).
      p->wdq = xb_alloc(g, KK * OC * sizeof(int16_t));
      if (p->wdq == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      int wz = w->qkind == XB_Q_PER_TENSOR ? w->zero_point : 0;
      const int8_t* src = (const int8_t*)w->constant;
      for (size_t i = 0; i < KK * OC; ++i) p->wdq[i] = (int16_t)(src[i] - wz);
      return prep_q_static(a, g, n, OC, in, w, out, p);
    }
    PTERUN_TRY(prep_q_weights(a, g, w, G, OCg, K, p));
    PTERUN_TRY(prep_q_static(a, g, n, OC, in, w, out, p));
    return prep_qbias(g, OC, p);
  }
  return UNSUP("%s on %s x %s -> %s is not implemented", xb_node_name(n->tag),
               xb_dtype_name(in->dtype), xb_dtype_name(w->dtype), xb_dtype_name(out->dtype));
}

/* Transposed convolution (fp32): filter [OC, KH, KW, ICg] packed to
 * [G][KH][KW][ICg][OCg]; the output is accumulated by scattering each input
 * pixel. */
static pterun_status prep_deconv(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *w = &g->values[n->in[1]], *out = &g->values[n->out];
  if (!is_f32(in) || !is_f32(w) || !is_f32(out))
    return UNSUP("ConvTranspose2d is implemented for fp32 only");
  if (in->rank != 4 || out->rank != 4 || w->rank != 4 || w->loc != XB_LOC_CONST)
    return BADN("transposed convolution needs 4-D NHWC tensors and a constant filter");
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out;
  if (G == 0 || ICg == 0 || OCg == 0 || n->sh == 0 || n->sw == 0 || n->kh == 0 || n->kw == 0 ||
      in->dims[3] != G * ICg || out->dims[3] != G * OCg || in->dims[0] != out->dims[0] ||
      w->dims[0] != G * OCg || w->dims[1] != n->kh || w->dims[2] != n->kw || w->dims[3] != ICg)
    return BADN("transposed convolution shapes do not match");
  if (n->dh == 0) n->dh = 1;
  if (n->dw == 0) n->dw = 1;
  for (int d = 0; d < 2; ++d) {
    size_t ins = in->dims[1 + d], s = d ? n->sw : n->sh, k = d ? n->kw : n->kh,
           dil = d ? n->dw : n->dh, adj = d ? n->adj_w : n->adj_h;
    size_t pads = d ? (size_t)n->pad[1] + n->pad[3] : (size_t)n->pad[0] + n->pad[2];
    size_t full = (ins ? (ins - 1) * s : 0) + dil * (k - 1) + 1 + adj;
    if (ins == 0 || full < pads || full - pads != out->dims[1 + d])
      return BADN("transposed convolution output size does not match");
  }
  gemm_prep* p = xb_alloc(g, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  n->packed = p;
  size_t KK = (size_t)n->kh * n->kw;
  p->w = xb_alloc(g, G * KK * ICg * OCg * sizeof(float));
  if (p->w == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  const float* src = (const float*)w->constant;
  for (size_t gi = 0; gi < G; ++gi)
    for (size_t o = 0; o < OCg; ++o)
      for (size_t k = 0; k < KK; ++k)
        for (size_t c = 0; c < ICg; ++c)
          p->w[((gi * KK + k) * ICg + c) * OCg + o] = src[((gi * OCg + o) * KK + k) * ICg + c];
  n->kind = KIND_F32;
  return prep_bias_f32(a, g, n, G * OCg, p);
}

static pterun_status prep_pool(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  if (!((is_f32(in) && is_f32(out)) || (is_q8(in) && is_q8(out) && in->dtype == out->dtype)))
    return UNSUP("%s on %s -> %s is not implemented", xb_node_name(n->tag),
                 xb_dtype_name(in->dtype), xb_dtype_name(out->dtype));
  if (in->rank != 4 || out->rank != 4 || in->dims[0] != out->dims[0] || in->dims[3] != out->dims[3])
    return BADN("pooling needs 4-D NHWC tensors with equal N and C");
  if (n->tag == XB_N_GLOBAL_AVG_POOLING2D) {
    if (out->dims[1] != 1 || out->dims[2] != 1) return BADN("global pooling output must be 1x1");
    return PTERUN_STATUS_OK;
  }
  if (n->tag == XB_N_AVG_POOLING2D) n->dh = n->dw = 1;
  if (n->dh == 0) n->dh = 1;
  if (n->dw == 0) n->dw = 1;
  size_t OH, OW;
  if (!conv_out(in->dims[1], n->pad[0], n->pad[2], n->kh, n->sh, n->dh, &OH) ||
      !conv_out(in->dims[2], n->pad[3], n->pad[1], n->kw, n->sw, n->dw, &OW) ||
      OH != out->dims[1] || OW != out->dims[2])
    return BADN("pooling geometry does not match its tensors");
  return PTERUN_STATUS_OK;
}

static bool is_binary(unsigned tag) {
  switch (tag) {
    case XB_N_ADD:
    case XB_N_SUBTRACT:
    case XB_N_MULTIPLY:
    case XB_N_DIV:
    case XB_N_MINIMUM:
    case XB_N_MAXIMUM:
    case XB_N_PRELU: return true;
    default: return false;
  }
}

static pterun_status prep_binary(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value *in = &g->values[n->in[0]], *in2 = &g->values[n->in[1]], *out = &g->values[n->out];
  bcast b;
  if (!make_bcast(in, in2, out, &b)) return BADN("operand shapes do not broadcast to the output");
  if (is_f32(in) && is_f32(in2) && is_f32(out)) return PTERUN_STATUS_OK;
  if (is_q8(in) && is_q8(in2) && is_q8(out) &&
      (n->tag == XB_N_ADD || n->tag == XB_N_SUBTRACT || n->tag == XB_N_MULTIPLY))
    return PTERUN_STATUS_OK;
  return UNSUP("%s on %s, %s -> %s is not implemented", xb_node_name(n->tag),
               xb_dtype_name(in->dtype), xb_dtype_name(in2->dtype), xb_dtype_name(out->dtype));
}

pterun_status xb_prepare_node(const pterun_backend_init_args* a, xb_graph* g, xb_node* n) {
  const xb_value* out = &g->values[n->out];
  const xb_value* in = &g->values[n->in[0]];
  if (is_binary(n->tag)) return prep_binary(a, g, n);
  switch (n->tag) {
    case XB_N_SOFTMAX:
      if (!is_f32(in) || !is_f32(out) || !same_dims(in, out) || in->rank == 0)
        return UNSUP("Softmax is implemented for fp32 only");
      return PTERUN_STATUS_OK;
    case XB_N_COPY:
      if (!same_quant(in, out) || in->numel != out->numel || elem_size(in) == 0)
        return BADN("Copy changes the type or the size");
      return PTERUN_STATUS_OK;
    case XB_N_CONVERT: {
      if (in->numel != out->numel || in->rank != out->rank) return BADN("Convert changes the size");
      if (is_f32(in) && is_q8(out)) return PTERUN_STATUS_OK;
      if (is_q8(in) && is_f32(out)) return PTERUN_STATUS_OK;
      if (is_f32(in) && is_f32(out) && (in->half || out->half)) return PTERUN_STATUS_OK;
      if (is_f32(in) && out->dtype == XB_DT_QDINT8 && out->qkind == XB_Q_DYNAMIC) {
        // Per-row parameters live after the int8 data (see dq_params_offset).
        xb_value* o = &g->values[n->out];
        if (o->loc != XB_LOC_ARENA) return UNSUP("dynamically quantized graph outputs");
        o->nbytes = dq_params_offset(o) + dq_rows(o) * 8;
        return PTERUN_STATUS_OK;
      }
      return UNSUP("Convert %s -> %s is not implemented", xb_dtype_name(in->dtype),
                   xb_dtype_name(out->dtype));
    }
    case XB_N_FULLY_CONNECTED: return prep_fc(a, g, n);
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D: return prep_conv(a, g, n);
    case XB_N_CONV_TRANSPOSE2D: return prep_deconv(a, g, n);
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D:
    case XB_N_GLOBAL_AVG_POOLING2D: return prep_pool(a, g, n);
    case XB_N_STATIC_TRANSPOSE: {
      if (!same_quant(in, out) || elem_size(in) == 0 || n->num_dims != in->rank ||
          in->rank != out->rank)
        return BADN("transpose changes the type or the rank");
      uint32_t seen = 0;
      for (uint32_t d = 0; d < in->rank; ++d) {
        if (n->perm[d] >= in->rank || (seen & (1u << n->perm[d])) ||
            out->dims[d] != in->dims[n->perm[d]])
          return BADN("transpose permutation is invalid for its tensors");
        seen |= 1u << n->perm[d];
      }
      return PTERUN_STATUS_OK;
    }
    case XB_N_STATIC_RESHAPE:
      if (!same_quant(in, out) || elem_size(in) == 0 || in->numel != out->numel)
        return BADN("reshape changes the type or the element count");
      return PTERUN_STATUS_OK;
    case XB_N_STATIC_SLICE:
      if (!same_quant(in, out) || elem_size(in) == 0 || n->num_dims != in->rank ||
          in->rank != out->rank)
        return BADN("slice changes the type or the rank");
      for (uint32_t d = 0; d < in->rank; ++d)
        if (n->offsets[d] > in->dims[d] || out->dims[d] > in->dims[d] - n->offsets[d])
          return BADN("slice is outside its input");
      return PTERUN_STATUS_OK;
    case XB_N_CONSTANT_PAD:
      if (!same_quant(in, out) || elem_size(in) == 0 || n->num_dims != in->rank ||
          in->rank != out->rank)
        return BADN("pad changes the type or the rank");
      if (!is_f32(in)) return UNSUP("StaticConstantPad is implemented for fp32 only");
      for (uint32_t d = 0; d < in->rank; ++d)
        if (out->dims[d] != in->dims[d] + n->pre[d] + n->post[d])
          return BADN("padded shape does not match the output");
      return PTERUN_STATUS_OK;
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: {
      if (n->axis >= out->rank || elem_size(out) == 0)
        return BADN("concatenation axis out of range");
      size_t total = 0;
      for (uint32_t k = 0; k < n->nin; ++k) {
        const xb_value* x = &g->values[n->in[k]];
        if (!same_quant(x, out) || x->rank != out->rank)
          return UNSUP("concatenation of differently typed or quantized inputs");
        for (uint32_t d = 0; d < out->rank; ++d)
          if (d != n->axis && x->dims[d] != out->dims[d])
            return BADN("concatenated shapes differ off the axis");
        total += x->dims[n->axis];
      }
      if (total != out->dims[n->axis]) return BADN("concatenated sizes do not add up");
      return PTERUN_STATUS_OK;
    }
    case XB_N_BATCH_MATRIX_MULTIPLY: {
      const xb_value* in2 = &g->values[n->in[1]];
      if (!is_f32(in) || !is_f32(in2) || !is_f32(out))
        return UNSUP("BatchMatrixMultiply is implemented for fp32 only");
      if (in->rank < 2 || in2->rank != in->rank || out->rank != in->rank)
        return BADN("batch matrix multiply needs equal ranks >= 2");
      uint32_t r = in->rank;
      size_t M = in->dims[r - 2], K = in->dims[r - 1], N = in2->dims[r - 1];
      if (in2->dims[r - 2] != K || out->dims[r - 2] != M || out->dims[r - 1] != N)
        return BADN("matrix shapes do not match");
      for (uint32_t d = 0; d + 2 < r; ++d)
        if (in->dims[d] != out->dims[d] || in2->dims[d] != out->dims[d])
          return UNSUP("broadcast batch dimensions are not implemented");
      return PTERUN_STATUS_OK;
    }
    case XB_N_RESIZE_BILINEAR2D:
      if (!is_f32(in) || !is_f32(out) || in->rank != 4 || out->rank != 4 ||
          out->dims[0] != in->dims[0] || out->dims[3] != in->dims[3] || out->dims[1] != n->new_h ||
          out->dims[2] != n->new_w || n->new_h == 0 || n->new_w == 0)
        return UNSUP("StaticResizeBilinear2D: fp32 NHWC only, and shapes must match");
      return PTERUN_STATUS_OK;
    default:
      if (is_unary(n->tag)) {
        if (!same_dims(in, out)) return BADN("element-wise node changes the shape");
        if (is_f32(in) && is_f32(out)) return PTERUN_STATUS_OK;
        if (n->tag == XB_N_CLAMP && is_q8(in) && is_q8(out) && same_quant(in, out))
          return PTERUN_STATUS_OK;
        return UNSUP("%s on %s is not implemented", xb_node_name(n->tag), xb_dtype_name(in->dtype));
      }
      return UNSUP("node type %s is not implemented by pterun's XNNPACK backend",
                   xb_node_name(n->tag));
  }
}

/* C[M,N] = clamp(A[M,K] . B[K,N] + bias[N], lo, hi) (bias may be NULL) on the
 * compute engine, split over the pool: C starts as the bias rows and the
 * product is added to it, as XNNPACK's microkernels do; B packed at load when
 * `pk` is not NULL; the clamp (fused ReLU/ReLU6/hardtanh) in the engine's
 * epilogue. */
static void fgemm(const xb_exec* x, size_t M, size_t K, size_t N, const float* A, size_t lda,
                  const float* B, size_t ldb, const pterun_compute_packed* pk, const float* bias,
                  float* C, size_t ldc, float lo, float hi) {
  if (M == 0 || N == 0) return;
  if (bias != NULL)
    for (size_t m = 0; m < M; ++m) memcpy(C + m * ldc, bias, N * sizeof(float));
  pterun_compute_matrix a = {(void*)A, PTERUN_DTYPE_F32, (int64_t)lda, 1};
  pterun_compute_matrix b = {(void*)B, PTERUN_DTYPE_F32, (int64_t)ldb, 1};
  pterun_compute_matrix c = {C, PTERUN_DTYPE_F32, (int64_t)ldc, 1};
  pterun_compute_gemm_opts o = {
      .packed_b = pk, .activation = PTERUN_COMPUTE_ACT_NONE, .lo = lo, .hi = hi};
  if (lo > -INFINITY || hi < INFINITY) o.activation = PTERUN_COMPUTE_ACT_CLAMP;
  pterun_compute_gemm_ex(x->ws, (int64_t)M, (int64_t)N, (int64_t)K, &a, &b, &c, 1.0, bias != NULL,
                         &o);
}

/* int32 accumulation wraps, as SIMD adds do: a hostile bias or an extreme K
 * must not be undefined behaviour. */
static inline int32_t xb_wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* acc[i] += (x[i] - zp) * w[i] (wrapping). */
static void madd_q8(int32_t* restrict acc, const void* restrict x, int is_u8, int32_t zp,
                    const int16_t* restrict w, size_t n) {
  // Both factors fit int16 (|x - zp| <= 255, |w| <= 255): a 16 x 16 -> 32-bit
  // product, which the baseline ISA (SSE2) vectorises.
  if (is_u8)
    for (size_t i = 0; i < n; ++i) {
      int16_t v = (int16_t)((int32_t)((const uint8_t*)x)[i] - zp);
      acc[i] = xb_wrap_add(acc[i], (int32_t)v * (int32_t)w[i]);
    }
  else
    for (size_t i = 0; i < n; ++i) {
      int16_t v = (int16_t)((int32_t)((const int8_t*)x)[i] - zp);
      acc[i] = xb_wrap_add(acc[i], (int32_t)v * (int32_t)w[i]);
    }
}

/* ======================================================================== */
/* execute                                                                  */

/* The int8 GEMM epilogue of a static int8 node: sums scaled by the
 * requantization multiplier, plus bias * multiplier, rounded to the output
 * type within the node's output range (columns from `c0`, a group's). */
static void qs8_static_epilogue(const xb_node* n, const xb_value* in, const xb_value* out,
                                const gemm_prep* p, size_t c0, pterun_compute_qs8_epilogue* ep) {
  int32_t lo, hi;
  q_range(n, out, &lo, &hi);
  pterun_compute_qs8_epilogue e = {in->zero_point,
                                   p->wzp != NULL ? p->wzp + c0 : NULL,
                                   p->mult + c0,
                                   1,
                                   p->qbias + c0,
                                   -INFINITY,
                                   INFINITY,
                                   1.0f,
                                   out->zero_point,
                                   lo,
                                   hi};
  *ep = e;
}

/* im2col rows of a static int8 convolution for compute's int8 GEMM: row i
 * is output pixel i of image b, column k tap k / ICg, channel k % ICg of
 * group gi; taps outside the input read the input zero point (a zero). */
typedef struct q_im2col {
  const xb_node* n;
  const uint8_t* src; /* image b */
  size_t H, W, IC, OW, ICg, gi;
  uint8_t zp; /* the zero point's byte */
} q_im2col;

/* Copies the pending run (if any) to d; returns the position after it. */
static uint8_t* flush_run(uint8_t* d, const uint8_t* src, size_t* len) {
  if (*len) memcpy(d, src, *len);
  d += *len;
  *len = 0;
  return d;
}

static void q_im2col_rows(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
                          uint8_t* dst) {
  const q_im2col* c = ctx;
  const xb_node* n = c->n;
  const size_t end = (size_t)(k0 + kc);
  for (int64_t r = 0; r < rows; ++r) {
    size_t pix = (size_t)(i0 + r), oh = pix / c->OW, ow = pix % c->OW;
    size_t k = (size_t)k0, tap = k / c->ICg, ch = k % c->ICg;
    size_t kh = tap / n->kw, kw = tap % n->kw;
    uint8_t* d = dst + r * kc;
    // Runs of the input that follow each other in memory (a filter row
    // inside the image, all channels) are copied at once.
    const uint8_t* run_src = NULL;
    size_t run_len = 0;
    while (k < end) {
      size_t len = c->ICg - ch;
      if (len > end - k) len = end - k;
      ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
      ptrdiff_t iw = (ptrdiff_t)(ow * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
      if (ih < 0 || ih >= (ptrdiff_t)c->H || iw < 0 || iw >= (ptrdiff_t)c->W) {
        d = flush_run(d, run_src, &run_len);
        memset(d, c->zp, len);
        d += len;
      } else {
        const uint8_t* sp = c->src + ((size_t)ih * c->W + (size_t)iw) * c->IC + c->gi * c->ICg + ch;
        if (run_len && sp != run_src + run_len) d = flush_run(d, run_src, &run_len);
        if (!run_len) run_src = sp;
        run_len += len;
      }
      k += len;
      ch = 0;
      if (++kw == n->kw) {
        kw = 0;
        ++kh;
      }
    }
    flush_run(d, run_src, &run_len);
  }
}

static void run_fc(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  size_t K = p->K, N = p->N, M = K ? in->numel / K : 0;
  if (n->kind == KIND_F32) {
    fgemm(x, M, K, N, x->data[n->in[0]], K, p->w, N, p->fpk ? p->fpk[0] : NULL, p->bias,
          x->data[n->out], N, n->out_min, n->out_max);
    return;
  }
  if (n->kind == KIND_QS8) {
    int ui = in->dtype == XB_DT_QUINT8, uo = out->dtype == XB_DT_QUINT8;
    pterun_compute_qs8_epilogue ep;
    qs8_static_epilogue(n, in, out, p, 0, &ep);
    pterun_compute_matrix A = {x->data[n->in[0]], ui ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8,
                               (int64_t)K, 1};
    pterun_compute_matrix C = {x->data[n->out], uo ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8, (int64_t)N,
                               1};
    (void)pterun_compute_qs8_gemm(x->pool, x->max_threads, (int64_t)M, &A, NULL, NULL, A.dtype,
                                  &p->qw[0], &ep, &C);
    return;
  }
  // Dynamic: per-row activation parameters (inverse scale, zero point)
  // follow the int8 data. Per K group, compute's int8 GEMM gives the raw sums
  // sum_k a * w for a block of rows (exact in float below 2^24); the zero
  // point's share is zp * (the group's column sum of w).
  const int8_t* qa = x->data[n->in[0]];
  const uint8_t* params = (const uint8_t*)qa + dq_params_offset(in);
  size_t rows = dq_rows(in), per_row = rows ? in->numel / rows : 0;
  float* T = (float*)g->scratch; /* [XB_DQ_ROWS][N] */
  float* o = x->data[n->out];
  float inv[XB_DQ_ROWS];
  int32_t zp[XB_DQ_ROWS];
  const float one = 1.0f;
  pterun_compute_qs8_epilogue ep = {0, NULL, &one, 0, NULL, -INFINITY, INFINITY, 1.0f, 0, 0, 0};
  for (size_t m0 = 0; m0 < M; m0 += XB_DQ_ROWS) {
    size_t mb = M - m0 < XB_DQ_ROWS ? M - m0 : XB_DQ_ROWS;
    for (size_t i = 0; i < mb; ++i) {
      size_t m = m0 + i, r = per_row ? (m * K) / per_row : 0;
      memcpy(&inv[i], params + r * 8, 4);
      memcpy(&zp[i], params + r * 8 + 4, 4);
      memset(o + m * N, 0, N * sizeof(float));
    }
    for (size_t gk = 0; gk < p->groups_k; ++gk) {
      pterun_compute_matrix A = {(void*)(qa + m0 * K + gk * p->gsize), PTERUN_DTYPE_I8, (int64_t)K,
                                 1};
      pterun_compute_matrix C = {T, PTERUN_DTYPE_F32, (int64_t)N, 1};
      const pterun_compute_qs8_packed* w = &p->qw[gk];
      (void)pterun_compute_qs8_gemm(x->pool, x->max_threads, (int64_t)mb, &A, NULL, NULL,
                                    PTERUN_DTYPE_I8, w, &ep, &C);
      // Integers in float: exact while the sums stay below 2^24.
      const float* sc = p->mult + gk * N; /* [groups][N] */
      const float* cs = p->csum + gk * N;
      for (size_t i = 0; i < mb; ++i) {
        float* orow = o + (m0 + i) * N;
        const float* trow = T + i * N;
        const float z = (float)zp[i];
        for (size_t c = 0; c < N; ++c) orow[c] += (trow[c] - z * cs[c]) * sc[c];
      }
    }
    for (size_t i = 0; i < mb; ++i) {
      float* orow = o + (m0 + i) * N;
      for (size_t c = 0; c < N; ++c)
        orow[c] = clampf(orow[c] * inv[i] + p->bias[c], n->out_min, n->out_max);
    }
  }
}

/* im2col of output pixels [p0, p0 + T) of image b, group gi, into A[T][K]
 * (K = KH * KW * ICg). A filter row that lies inside the input is one
 * contiguous run when the group is the whole input and dilation_w is 1. */
static void im2col_f32(const xb_node* n, const float* src, size_t b, size_t H, size_t W, size_t IC,
                       size_t OW, size_t gi, size_t ICg, size_t p0, size_t T, size_t K, float* A) {
  const size_t KH = n->kh, KW = n->kw;
  const bool runs = ICg == IC && n->dw == 1;
  size_t oh = p0 / OW, ow = p0 % OW;
  for (size_t t = 0; t < T; ++t) {
    float* arow = A + t * K;
    for (size_t kh = 0; kh < KH; ++kh) {
      float* d = arow + kh * KW * ICg;
      ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
      if (ih < 0 || ih >= (ptrdiff_t)H) {
        memset(d, 0, KW * ICg * sizeof(float));
        continue;
      }
      const float* row = src + (b * H + (size_t)ih) * W * IC + gi * ICg;
      ptrdiff_t iw0 = (ptrdiff_t)(ow * n->sw) - (ptrdiff_t)n->pad[3];
      if (runs && iw0 >= 0 && (size_t)iw0 + KW <= W) {
        memcpy(d, row + (size_t)iw0 * IC, KW * IC * sizeof(float));
        continue;
      }
      for (size_t kw = 0; kw < KW; ++kw, d += ICg) {
        ptrdiff_t iw = iw0 + (ptrdiff_t)(kw * n->dw);
        if (iw < 0 || iw >= (ptrdiff_t)W) {
          for (size_t c = 0; c < ICg; ++c) d[c] = 0.0f;
        } else {
          const float* sp = row + (size_t)iw * IC;
          for (size_t c = 0; c < ICg; ++c) d[c] = sp[c];
        }
      }
    }
    if (++ow == OW) {
      ow = 0;
      ++oh;
    }
  }
}

/* Static int8 depthwise convolution: int32 accumulators per output pixel,
 * then requantization (pixels split over the pool). */
typedef struct dwq_job {
  const xb_exec* x;
  const xb_node* n;
  size_t H, W, IC, OH, OW, OC;
  int32_t lo, hi;
} dwq_job;

static void dwq_task(void* c_, size_t start, size_t count) {
  const dwq_job* j = c_;
  const xb_node* n = j->n;
  const xb_graph* g = j->x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  const uint8_t* src = j->x->data[n->in[0]];
  uint8_t* dst = j->x->data[n->out];
  int ui = in->dtype == XB_DT_QUINT8, uo = out->dtype == XB_DT_QUINT8;
  size_t OC = j->OC, dm = OC / j->IC, npix = j->OH * j->OW;
  int32_t acc[256];
  for (size_t pix = start; pix < start + count; ++pix) {
    size_t b = pix / npix, oh = pix % npix / j->OW, ow = pix % j->OW;
    for (size_t c0 = 0; c0 < OC; c0 += 256) {
      size_t cn = OC - c0 < 256 ? OC - c0 : 256;
      for (size_t c = 0; c < cn; ++c) acc[c] = p->ibias[c0 + c];
      for (size_t kh = 0; kh < n->kh; ++kh) {
        ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
        if (ih < 0 || ih >= (ptrdiff_t)j->H) continue;
        for (size_t kw = 0; kw < n->kw; ++kw) {
          ptrdiff_t iw = (ptrdiff_t)(ow * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
          if (iw < 0 || iw >= (ptrdiff_t)j->W) continue;
          size_t base = ((b * j->H + (size_t)ih) * j->W + (size_t)iw) * j->IC;
          const int16_t* wp = p->wdq + (kh * n->kw + kw) * OC + c0;
          if (dm == 1)
            madd_q8(acc, src + base + c0, ui, in->zero_point, wp, cn);
          else
            for (size_t c = 0; c < cn; ++c)
              acc[c] = xb_wrap_add(
                  acc[c], (q_ld(src, base + (c0 + c) / dm, ui) - in->zero_point) * (int32_t)wp[c]);
        }
      }
      // The output type outside the loops (they vectorise).
      const size_t ob = pix * OC + c0;
      const float* mult = p->mult + c0;
      const int32_t zo = out->zero_point;
      if (uo)
        for (size_t c = 0; c < cn; ++c)
          ((uint8_t*)dst)[ob + c] = (uint8_t)requant((float)acc[c] * mult[c], zo, j->lo, j->hi);
      else
        for (size_t c = 0; c < cn; ++c)
          ((int8_t*)dst)[ob + c] = (int8_t)requant((float)acc[c] * mult[c], zo, j->lo, j->hi);
    }
  }
}

static void run_dwconv_q8(const xb_exec* x, const xb_node* n, size_t B, size_t H, size_t W,
                          size_t IC, size_t OH, size_t OW, size_t OC) {
  dwq_job j = {x, n, H, W, IC, OH, OW, OC, 0, 0};
  q_range(n, &x->g->values[n->out], &j.lo, &j.hi);
  size_t pixels = B * OH * OW, per = OC * n->kh * n->kw;
  size_t tile = per >= XB_PAR_MIN ? 1 : XB_PAR_MIN / (per ? per : 1);
  pterun_parallelize_1d_tile(pixels > tile ? x->pool : NULL, dwq_task, &j, pixels, tile,
                             PTERUN_PARALLEL_MAX_THREADS(x->max_threads));
}

static void run_conv(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], IC = in->dims[3];
  size_t OH = out->dims[1], OW = out->dims[2], OC = out->dims[3];
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out, KH = n->kh, KW = n->kw;
  size_t K = p->K, npix = OH * OW;
  bool dw = n->tag == XB_N_DEPTHWISE_CONV2D;
  bool q = n->kind == KIND_QS8;
  int ui = in->dtype == XB_DT_QUINT8, uo = out->dtype == XB_DT_QUINT8;
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  if (dw && !q) {
    pterun_compute_dwconv2d geo = {B,     H,         W,         IC,         OH,        OW,
                                   OC,    KH,        KW,        n->sh,      n->sw,     n->dh,
                                   n->dw, n->pad[0], n->pad[3], n->out_min, n->out_max};
    // prep_conv checked the geometry, so the call cannot refuse it.
    (void)pterun_compute_f32_dwconv2d_nhwc(x->pool, x->max_threads, &geo, (const float*)src, p->w,
                                           p->bias, (float*)dst);
    return;
  }
  if (dw) {
    run_dwconv_q8(x, n, B, H, W, IC, OH, OW, OC);
    return;
  }
  bool pointwise = G == 1 && KH == 1 && KW == 1 && n->sh == 1 && n->sw == 1 && n->pad[0] == 0 &&
                   n->pad[1] == 0 && n->pad[2] == 0 && n->pad[3] == 0 && OH == H && OW == W;
  for (size_t b = 0; b < B; ++b) {
    if (q) {
      // Static int8 on compute's int8 GEMM; it reads im2col rows on demand
      // (or, for a 1x1 convolution, the input itself).
      pterun_compute_matrix A = {(void*)(src + b * H * W * IC),
                                 ui ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8, (int64_t)IC, 1};
      for (size_t gi = 0; gi < G; ++gi) {
        q_im2col ic = {n, src + b * H * W * IC, H, W, IC, OW, ICg, gi, (uint8_t)in->zero_point};
        pterun_compute_qs8_epilogue ep;
        qs8_static_epilogue(n, in, out, p, gi * OCg, &ep);
        pterun_compute_matrix C = {dst + (b * npix * OC + gi * OCg),
                                   uo ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8, (int64_t)OC, 1};
        (void)pterun_compute_qs8_gemm(x->pool, x->max_threads, (int64_t)npix, &A,
                                      pointwise ? NULL : q_im2col_rows, &ic, A.dtype, &p->qw[gi],
                                      &ep, &C);
      }
      continue;
    }
    if (pointwise) {
      // 1x1 convolution: the NHWC input already is the [pixels][IC] matrix.
      fgemm(x, npix, IC, OC, (const float*)src + b * npix * IC, IC, p->w, OC,
            p->fpk ? p->fpk[0] : NULL, p->bias, (float*)dst + b * npix * OC, OC, n->out_min,
            n->out_max);
      continue;
    }
    for (size_t p0 = 0; p0 < npix; p0 += p->tile) {
      size_t T = npix - p0 < p->tile ? npix - p0 : p->tile;
      for (size_t gi = 0; gi < G; ++gi) {
        // im2col of T output pixels for group gi: [T][KH*KW*ICg]
        float* Af = (float*)g->scratch;
        im2col_f32(n, (const float*)src, b, H, W, IC, OW, gi, ICg, p0, T, K, Af);
        size_t ob = (b * npix + p0) * OC + gi * OCg;
        fgemm(x, T, K, OCg, Af, K, p->w + gi * K * OCg, OCg, p->fpk ? p->fpk[gi] : NULL,
              p->bias + gi * OCg, (float*)dst + ob, OC, n->out_min, n->out_max);
      }
    }
  }
}

static void run_deconv(xb_exec* x, const xb_node* n) {
  const gemm_prep* p = n->packed;
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], IC = in->dims[3];
  size_t OH = out->dims[1], OW = out->dims[2], OC = out->dims[3];
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out, KH = n->kh, KW = n->kw;
  const float* src = x->data[n->in[0]];
  float* dst = x->data[n->out];
  for (size_t i = 0; i < B * OH * OW; ++i) memcpy(dst + i * OC, p->bias, OC * sizeof(float));
  for (size_t b = 0; b < B; ++b)
    for (size_t ih = 0; ih < H; ++ih)
      for (size_t iw = 0; iw < W; ++iw) {
        const float* ip = src + ((b * H + ih) * W + iw) * IC;
        for (size_t kh = 0; kh < KH; ++kh) {
          ptrdiff_t oh = (ptrdiff_t)(ih * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
          if (oh < 0 || oh >= (ptrdiff_t)OH) continue;
          for (size_t kw = 0; kw < KW; ++kw) {
            ptrdiff_t ow = (ptrdiff_t)(iw * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
            if (ow < 0 || ow >= (ptrdiff_t)OW) continue;
            float* op = dst + ((b * OH + (size_t)oh) * OW + (size_t)ow) * OC;
            for (size_t gi = 0; gi < G; ++gi)
              for (size_t c = 0; c < ICg; ++c) {
                float v = ip[gi * ICg + c];
                const float* wp = p->w + ((gi * KH * KW + kh * KW + kw) * ICg + c) * OCg;
                float* og = op + gi * OCg;
                for (size_t o = 0; o < OCg; ++o) og[o] += v * wp[o];
              }
          }
        }
      }
  for (size_t i = 0; i < B * OH * OW * OC; ++i) dst[i] = clampf(dst[i], n->out_min, n->out_max);
}

/* Max/average pooling with the channels innermost, in blocks of 256: for
 * each output pixel the valid taps are visited in (kh, kw) order (each
 * element sees the operations of a one-at-a-time loop); fp32 accumulates in
 * the output row, int8 in int64 (no window can overflow it). */
static void pool_window(const xb_exec* x, const xb_node* n, bool maxp) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  const size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], C = in->dims[3];
  const size_t OH = out->dims[1], OW = out->dims[2];
  const bool q = is_q8(in);
  const int u = in->dtype == XB_DT_QUINT8;
  const void* src = x->data[n->in[0]];
  void* dst = x->data[n->out];
  int32_t lo = 0, hi = 0;
  if (q) q_range(n, out, &lo, &hi);
  const float rescale = q ? in->scale / out->scale : 1.0f;
  int64_t acc[256];
  for (size_t pix = 0; pix < B * OH * OW; ++pix) {
    const size_t b = pix / (OH * OW), oh = pix / OW % OH, ow = pix % OW;
    for (size_t c0 = 0; c0 < C; c0 += 256) {
      const size_t cn = C - c0 < 256 ? C - c0 : 256;
      float* of = q ? NULL : (float*)dst + pix * C + c0;
      for (size_t c = 0; c < cn; ++c) {
        if (q)
          acc[c] = maxp ? INT64_MIN : 0;
        else
          of[c] = maxp ? -INFINITY : 0.0f;
      }
      size_t cnt = 0;
      for (size_t kh = 0; kh < n->kh; ++kh) {
        ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
        if (ih < 0 || ih >= (ptrdiff_t)H) continue;
        for (size_t kw = 0; kw < n->kw; ++kw) {
          ptrdiff_t iw = (ptrdiff_t)(ow * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
          if (iw < 0 || iw >= (ptrdiff_t)W) continue;
          const size_t base = ((b * H + (size_t)ih) * W + (size_t)iw) * C + c0;
          ++cnt;
          if (q) {
            for (size_t c = 0; c < cn; ++c) {
              int64_t v = q_ld(src, base + c, u);
              acc[c] = maxp ? (v > acc[c] ? v : acc[c]) : acc[c] + v - in->zero_point;
            }
            continue;
          }
          const float* vf = (const float*)src + base;
          if (maxp)
            for (size_t c = 0; c < cn; ++c) of[c] = vf[c] > of[c] || isnan(vf[c]) ? vf[c] : of[c];
          else
            for (size_t c = 0; c < cn; ++c) of[c] = of[c] + vf[c];
        }
      }
      for (size_t c = 0; c < cn; ++c) {
        if (q) {
          float r = maxp ? (cnt ? (float)(acc[c] - in->zero_point) * rescale : 0.0f)
                         : (cnt ? (float)acc[c] * rescale / (float)cnt : 0.0f);
          q_st(dst, pix * C + c0 + c, requant(r, out->zero_point, lo, hi), u);
        } else {
          float r = maxp ? of[c] : (cnt ? of[c] / (float)cnt : 0.0f);
          of[c] = clampf(r, n->out_min, n->out_max);
        }
      }
    }
  }
}

static void run_pool(xb_exec* x, const xb_node* n) {
  if (n->tag != XB_N_GLOBAL_AVG_POOLING2D) {
    pool_window(x, n, n->tag == XB_N_MAX_POOLING2D);
    return;
  }
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t B = in->dims[0], HW = in->dims[1] * in->dims[2], C = in->dims[3];
  bool q = is_q8(in);
  int u = in->dtype == XB_DT_QUINT8;
  int32_t lo = 0, hi = 0;
  if (q) q_range(n, out, &lo, &hi);
  const void* src = x->data[n->in[0]];
  void* dst = x->data[n->out];
  float rescale = q ? in->scale / out->scale : 1.0f;
  // Global average: sums over the pixels with the channels innermost.
  for (size_t b = 0; b < B; ++b) {
    if (!q) {
      float* o = (float*)dst + b * C;
      for (size_t c = 0; c < C; ++c) o[c] = 0.0f;
      for (size_t i = 0; i < HW; ++i) {
        const float* v = (const float*)src + (b * HW + i) * C;
        for (size_t c = 0; c < C; ++c) o[c] = o[c] + v[c];
      }
      for (size_t c = 0; c < C; ++c) o[c] = clampf(o[c] / (float)HW, n->out_min, n->out_max);
      continue;
    }
    for (size_t c = 0; c < C; ++c) {
      int64_t si = 0;
      for (size_t i = 0; i < HW; ++i) si += q_ld(src, (b * HW + i) * C + c, u) - in->zero_point;
      q_st(dst, b * C + c, requant((float)si * rescale / (float)HW, out->zero_point, lo, hi), u);
    }
  }
}

/* dst[c][r] = src[r][c] for a rows x cols matrix, in 8 x 8 blocks. */
static void transpose_2d(const float* src, float* dst, size_t rows, size_t cols) {
  for (size_t r0 = 0; r0 < rows; r0 += 8)
    for (size_t c0 = 0; c0 < cols; c0 += 8) {
      size_t r1 = rows - r0 < 8 ? rows : r0 + 8, c1 = cols - c0 < 8 ? cols : c0 + 8;
      for (size_t c = c0; c < c1; ++c)
        for (size_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

static void run_transpose(xb_exec* x, const xb_node* n) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t es = elem_size(in), r = in->rank;
  size_t istride[XB_MAX_DIMS], ostride[XB_MAX_DIMS], idx[XB_MAX_DIMS] = {0};
  size_t s = 1;
  for (int d = (int)r - 1; d >= 0; --d) {
    istride[d] = s;
    s *= in->dims[d];
  }
  for (size_t d = 0; d < r; ++d) ostride[d] = istride[n->perm[d]];
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  if (r == 0 || out->numel == 0) {
    if (out->numel != 0) memcpy(dst, src, es);
    return;
  }
  // NCHW <-> NHWC (the partitioner's layout changes): per batch, one 2-D
  // transpose in blocks.
  if (r == 4 && es == 4 && n->perm[0] == 0 &&
      ((n->perm[1] == 2 && n->perm[2] == 3 && n->perm[3] == 1) ||
       (n->perm[1] == 3 && n->perm[2] == 1 && n->perm[3] == 2))) {
    bool to_last = n->perm[3] == 1; /* [C][HW] -> [HW][C] */
    size_t rows = to_last ? in->dims[1] : in->dims[1] * in->dims[2];
    size_t cols = to_last ? in->dims[2] * in->dims[3] : in->dims[3];
    for (size_t b = 0; b < in->dims[0]; ++b)
      transpose_2d((const float*)src + b * rows * cols, (float*)dst + b * rows * cols, rows, cols);
    return;
  }
  // One run along the last output dim per step; the others count in idx.
  const size_t inner = out->dims[r - 1], is = ostride[r - 1];
  for (size_t o = 0; o < out->numel; o += inner) {
    size_t off = 0;
    for (size_t d = 0; d + 1 < r; ++d) off += idx[d] * ostride[d];
    if (es == 4) {
      const float* sp = (const float*)src + off;
      float* dp = (float*)dst + o;
      for (size_t i = 0; i < inner; ++i) dp[i] = sp[i * is];
    } else if (es == 2) {
      const uint16_t* sp = (const uint16_t*)src + off;
      uint16_t* dp = (uint16_t*)dst + o;
      for (size_t i = 0; i < inner; ++i) dp[i] = sp[i * is];
    } else {
      for (size_t i = 0; i < inner; ++i) dst[o + i] = src[off + i * is];
    }
    for (int d = (int)r - 2; d >= 0; --d) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
}

static void run_slice_pad(xb_exec* x, const xb_node* n, bool pad) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t es = elem_size(in), r = in->rank;
  size_t istride[XB_MAX_DIMS], idx[XB_MAX_DIMS] = {0}, s = 1;
  for (int d = (int)r - 1; d >= 0; --d) {
    istride[d] = s;
    s *= in->dims[d];
  }
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  if (out->numel == 0) return;
  if (r == 0) {
    memcpy(dst, src, es);
    return;
  }
  // One run along the last dim per step: a slice copies it, a pad fills its
  // edges with the value and copies the middle.
  const size_t inner = out->dims[r - 1];
  const size_t lo = pad ? n->pre[r - 1] : 0, mid = pad ? in->dims[r - 1] : inner;
  for (size_t o = 0; o < out->numel; o += inner) {
    size_t off = 0;
    bool inside = true;
    for (size_t d = 0; d + 1 < r; ++d) {
      if (pad) {
        if (idx[d] < n->pre[d] || idx[d] - n->pre[d] >= in->dims[d])
          inside = false;
        else
          off += (idx[d] - n->pre[d]) * istride[d];
      } else {
        off += (idx[d] + n->offsets[d]) * istride[d];
      }
    }
    uint8_t* dp = dst + o * es;
    if (!pad) {
      memcpy(dp, src + (off + n->offsets[r - 1]) * es, inner * es);
    } else {
      float* fp = (float*)dp; /* pad is fp32 only */
      size_t a = inside ? lo : inner, m = inside ? mid : 0;
      for (size_t i = 0; i < a; ++i) fp[i] = n->fparam;
      if (m) memcpy(fp + a, src + off * es, m * es);
      for (size_t i = a + m; i < inner; ++i) fp[i] = n->fparam;
    }
    for (int d = (int)r - 2; d >= 0; --d) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
}

static void run_concat(xb_exec* x, const xb_node* n) {
  const xb_value* out = &x->g->values[n->out];
  size_t es = elem_size(out), outer = 1, inner = es;
  for (uint32_t d = 0; d < n->axis; ++d) outer *= out->dims[d];
  for (uint32_t d = n->axis + 1; d < out->rank; ++d) inner *= out->dims[d];
  size_t orow = out->dims[n->axis] * inner, at = 0;
  uint8_t* dst = x->data[n->out];
  for (uint32_t k = 0; k < n->nin; ++k) {
    const xb_value* v = &x->g->values[n->in[k]];
    size_t row = v->dims[n->axis] * inner;
    const uint8_t* src = x->data[n->in[k]];
    for (size_t o = 0; o < outer; ++o) memcpy(dst + o * orow + at, src + o * row, row);
    at += row;
  }
}

static void run_softmax(xb_exec* x, const xb_node* n) {
  const xb_value* in = &x->g->values[n->in[0]];
  size_t C = in->dims[in->rank - 1], rows = C ? in->numel / C : 0;
  const float* src = x->data[n->in[0]];
  float* dst = x->data[n->out];
  for (size_t r = 0; r < rows; ++r) {
    const float* s = src + r * C;
    float* d = dst + r * C;
    float mx = -INFINITY;
    for (size_t c = 0; c < C; ++c) mx = s[c] > mx ? s[c] : mx;
    float sum = 0.0f;
    for (size_t c = 0; c < C; ++c) {
      d[c] = expf(s[c] - mx);
      sum += d[c];
    }
    float inv = 1.0f / sum;
    for (size_t c = 0; c < C; ++c) d[c] = clampf(d[c] * inv, n->out_min, n->out_max);
  }
}

static void run_convert(xb_exec* x, const xb_node* n) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  const void* src = x->data[n->in[0]];
  void* dst = x->data[n->out];
  if (is_f32(in) && is_f32(out)) {
    // fp32 <-> fp16: a copy; the fp16 side is rounded after the node.
    if (dst != src) memmove(dst, src, in->numel * sizeof(float));
  } else if (is_f32(in) && is_q8(out)) {
    int u = out->dtype == XB_DT_QUINT8;
    float inv = 1.0f / out->scale;
    for (size_t i = 0; i < in->numel; ++i)
      q_st(dst, i, requant(((const float*)src)[i] * inv, out->zero_point, q_min(out), q_max(out)),
           u);
  } else if (is_q8(in)) {
    int u = in->dtype == XB_DT_QUINT8;
    for (size_t i = 0; i < in->numel; ++i)
      ((float*)dst)[i] = (float)(q_ld(src, i, u) - in->zero_point) * in->scale;
  } else {
    // f32 -> qdint8: one (scale, zero point) per row, XNNPACK's rule: the
    // range widened to include 0, zero point from the end with the smaller
    // error, rounded to nearest even.
    size_t rows = dq_rows(out), C = rows ? in->numel / rows : 0;
    uint8_t* params = (uint8_t*)dst + dq_params_offset(out);
    for (size_t r = 0; r < rows; ++r) {
      const float* s = (const float*)src + r * C;
      float mn = 0.0f, mx = 0.0f;
      for (size_t c = 0; c < C; ++c) {
        mn = s[c] < mn ? s[c] : mn;
        mx = s[c] > mx ? s[c] : mx;
      }
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
      for (size_t c = 0; c < C; ++c) {
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

static void run_bmm(xb_exec* x, const xb_node* n) {
  const xb_value *a = &x->g->values[n->in[0]], *b = &x->g->values[n->in[1]];
  uint32_t r = a->rank;
  size_t M = a->dims[r - 2], K = a->dims[r - 1], N = b->dims[r - 1], batch = 1;
  for (uint32_t d = 0; d + 2 < r; ++d) batch *= a->dims[d];
  const float* A = x->data[n->in[0]];
  const float* B = x->data[n->in[1]];
  float* C = x->data[n->out];
  for (size_t i = 0; i < batch; ++i)
    fgemm(x, M, K, N, A + i * M * K, K, B + i * K * N, N, NULL, NULL, C + i * M * N, N, n->out_min,
          n->out_max);
}

static void run_resize(xb_exec* x, const xb_node* n) {
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], C = in->dims[3];
  size_t OH = out->dims[1], OW = out->dims[2];
  bool align = (n->flags & 8) != 0;
  const float* src = x->data[n->in[0]];
  float* dst = x->data[n->out];
  float sh = align && OH > 1 ? (float)(H - 1) / (float)(OH - 1) : (float)H / (float)OH;
  float sw = align && OW > 1 ? (float)(W - 1) / (float)(OW - 1) : (float)W / (float)OW;
  for (size_t b = 0; b < B; ++b)
    for (size_t oh = 0; oh < OH; ++oh) {
      float fy = align ? (float)oh * sh : ((float)oh + 0.5f) * sh - 0.5f;
      if (fy < 0.0f) fy = 0.0f;
      size_t y0 = (size_t)fy;
      if (y0 > H - 1) y0 = H - 1;
      size_t y1 = y0 + 1 < H ? y0 + 1 : H - 1;
      float ly = fy - (float)y0;
      for (size_t ow = 0; ow < OW; ++ow) {
        float fx = align ? (float)ow * sw : ((float)ow + 0.5f) * sw - 0.5f;
        if (fx < 0.0f) fx = 0.0f;
        size_t x0 = (size_t)fx;
        if (x0 > W - 1) x0 = W - 1;
        size_t x1 = x0 + 1 < W ? x0 + 1 : W - 1;
        float lx = fx - (float)x0;
        const float* p00 = src + ((b * H + y0) * W + x0) * C;
        const float* p01 = src + ((b * H + y0) * W + x1) * C;
        const float* p10 = src + ((b * H + y1) * W + x0) * C;
        const float* p11 = src + ((b * H + y1) * W + x1) * C;
        float* o = dst + ((b * OH + oh) * OW + ow) * C;
        for (size_t c = 0; c < C; ++c) {
          float top = p00[c] + (p01[c] - p00[c]) * lx;
          float bot = p10[c] + (p11[c] - p10[c]) * lx;
          o[c] = clampf(top + (bot - top) * ly, n->out_min, n->out_max);
        }
      }
    }
}

static void run_binary(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  const xb_value* in2 = &g->values[n->in[1]];
  bcast b;
  make_bcast(in, in2, out, &b);
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
static void run_unary(xb_exec* x, const xb_node* n) {
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
                             PTERUN_PARALLEL_MAX_THREADS(x->max_threads));
  un_task_tail(&j, numel);
}

pterun_status xb_run_node(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  if (is_binary(n->tag)) {
    run_binary(x, n);
    return PTERUN_STATUS_OK;
  }
  switch (n->tag) {
    case XB_N_FULLY_CONNECTED: run_fc(x, n); return PTERUN_STATUS_OK;
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D: run_conv(x, n); return PTERUN_STATUS_OK;
    case XB_N_CONV_TRANSPOSE2D: run_deconv(x, n); return PTERUN_STATUS_OK;
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D:
    case XB_N_GLOBAL_AVG_POOLING2D: run_pool(x, n); return PTERUN_STATUS_OK;
    case XB_N_STATIC_TRANSPOSE: run_transpose(x, n); return PTERUN_STATUS_OK;
    case XB_N_STATIC_RESHAPE:
    case XB_N_COPY:
      if (x->data[n->out] != x->data[n->in[0]])
        memmove(x->data[n->out], x->data[n->in[0]], in->numel * elem_size(in));
      return PTERUN_STATUS_OK;
    case XB_N_STATIC_SLICE: run_slice_pad(x, n, false); return PTERUN_STATUS_OK;
    case XB_N_CONSTANT_PAD: run_slice_pad(x, n, true); return PTERUN_STATUS_OK;
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: run_concat(x, n); return PTERUN_STATUS_OK;
    case XB_N_SOFTMAX: run_softmax(x, n); return PTERUN_STATUS_OK;
    case XB_N_CONVERT: run_convert(x, n); return PTERUN_STATUS_OK;
    case XB_N_BATCH_MATRIX_MULTIPLY: run_bmm(x, n); return PTERUN_STATUS_OK;
    case XB_N_RESIZE_BILINEAR2D: run_resize(x, n); return PTERUN_STATUS_OK;
    default:
      if (n->tag == XB_N_CLAMP && is_q8(in)) {
        int32_t lo, hi;
        int u = in->dtype == XB_DT_QUINT8;
        q_range(n, out, &lo, &hi);
        for (size_t i = 0; i < in->numel; ++i) {
          int32_t v = q_ld(x->data[n->in[0]], i, u);
          q_st(x->data[n->out], i, v < lo ? lo : (v > hi ? hi : v), u);
        }
        return PTERUN_STATUS_OK;
      }
      if (is_unary(n->tag)) {
        run_unary(x, n);
        return PTERUN_STATUS_OK;
      }
      return PTERUN_STATUS_NOT_SUPPORTED;
  }
}

/* ======================================================================== */
/* shapes at execute (inputs whose shape differs from the exported one)     */

static pterun_status set_shape(xb_value* o, uint32_t rank, const size_t* dims) {
  if (rank != o->rank) return PTERUN_STATUS_NOT_SUPPORTED;
  size_t numel = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    if (dims[d] > o->max_dims[d]) return PTERUN_STATUS_INVALID_ARGUMENT;
    numel *= dims[d];
  }
  memcpy(o->dims, dims, rank * sizeof *dims);
  o->numel = numel;
  return PTERUN_STATUS_OK;
}

static bool at_bounds(const xb_value* v) {
  return memcmp(v->dims, v->max_dims, v->rank * sizeof *v->dims) == 0;
}

pterun_status xb_reshape_node(xb_graph* g, const xb_node* n) {
  xb_value* out = &g->values[n->out];
  const xb_value* in = &g->values[n->in[0]];
  size_t d[XB_MAX_DIMS];
  if (is_binary(n->tag)) {
    const xb_value* in2 = &g->values[n->in[1]];
    int64_t s1[XB_MAX_DIMS], s2[XB_MAX_DIMS], so[XB_MAX_DIMS];
    for (uint32_t k = 0; k < in->rank; ++k) s1[k] = (int64_t)in->dims[k];
    for (uint32_t k = 0; k < in2->rank; ++k) s2[k] = (int64_t)in2->dims[k];
    int r = pterun_broadcast_sizes(s1, in->rank, s2, in2->rank, so, NULL);
    if (r < 0) return PTERUN_STATUS_INVALID_ARGUMENT;
    for (int k = 0; k < r; ++k) d[k] = (size_t)so[k];
    return set_shape(out, (uint32_t)r, d);
  }
  if (is_unary(n->tag) || n->tag == XB_N_SOFTMAX || n->tag == XB_N_CONVERT || n->tag == XB_N_COPY)
    return set_shape(out, in->rank, in->dims);
  switch (n->tag) {
    case XB_N_FULLY_CONNECTED: {
      const gemm_prep* p = n->packed;
      size_t M = p->K ? in->numel / p->K : 0;
      if (out->rank == in->rank) {
        memcpy(d, in->dims, in->rank * sizeof *d);
      } else if (out->rank == 2) {
        d[0] = M;
      } else {
        return PTERUN_STATUS_NOT_SUPPORTED;
      }
      d[out->rank - 1] = p->N;
      return set_shape(out, out->rank, d);
    }
    case XB_N_BATCH_MATRIX_MULTIPLY: {
      const xb_value* in2 = &g->values[n->in[1]];
      uint32_t r = in->rank;
      for (uint32_t k = 0; k + 2 < r; ++k)
        if (in->dims[k] != in2->dims[k]) return PTERUN_STATUS_INVALID_ARGUMENT;
      if (in->dims[r - 1] != in2->dims[r - 2]) return PTERUN_STATUS_INVALID_ARGUMENT;
      memcpy(d, in->dims, r * sizeof *d);
      d[r - 1] = in2->dims[r - 1];
      return set_shape(out, r, d);
    }
    case XB_N_STATIC_TRANSPOSE:
      for (uint32_t k = 0; k < in->rank; ++k) d[k] = in->dims[n->perm[k]];
      return set_shape(out, in->rank, d);
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D:
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D: {
      // NHWC: batch and spatial size follow the input, channels are fixed.
      if (in->rank != 4 || out->rank != 4 || in->dims[3] != in->max_dims[3])
        return PTERUN_STATUS_INVALID_ARGUMENT;
      if (!conv_out(in->dims[1], n->pad[0], n->pad[2], n->kh, n->sh, n->dh, &d[1]) ||
          !conv_out(in->dims[2], n->pad[3], n->pad[1], n->kw, n->sw, n->dw, &d[2]))
        return PTERUN_STATUS_INVALID_ARGUMENT;
      d[0] = in->dims[0];
      d[3] = out->max_dims[3];
      return set_shape(out, 4, d);
    }
    case XB_N_GLOBAL_AVG_POOLING2D:
      if (in->rank != 4 || out->rank != 4) return PTERUN_STATUS_INVALID_ARGUMENT;
      d[0] = in->dims[0];
      d[1] = d[2] = 1;
      d[3] = in->dims[3];
      return set_shape(out, 4, d);
    case XB_N_CONSTANT_PAD:
      for (uint32_t k = 0; k < in->rank; ++k) {
        d[k] = in->dims[k] + n->pre[k] + n->post[k];
        if (d[k] < in->dims[k]) return PTERUN_STATUS_INVALID_ARGUMENT; /* wrapped */
      }
      return set_shape(out, in->rank, d);
    case XB_N_STATIC_RESHAPE: {
      // new_shape: a 0 entry is inferred (PyTorch's -1).
      size_t known = 1, zeros = 0, at = 0;
      if (n->num_dims != out->rank) return PTERUN_STATUS_NOT_SUPPORTED;
      for (uint32_t k = 0; k < n->num_dims; ++k) {
        d[k] = n->shape[k];
        if (d[k] == 0)
          ++zeros, at = k;
        else
          known *= d[k];
      }
      if (zeros > 1 || known == 0) return PTERUN_STATUS_NOT_SUPPORTED;
      if (zeros == 1) d[at] = in->numel / known;
      size_t numel = 1;
      for (uint32_t k = 0; k < n->num_dims; ++k) numel *= d[k];
      if (numel != in->numel) return PTERUN_STATUS_NOT_SUPPORTED;
      return set_shape(out, n->num_dims, d);
    }
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: {
      memcpy(d, in->dims, in->rank * sizeof *d);
      d[n->axis] = 0;
      for (uint32_t k = 0; k < n->nin; ++k) {
        const xb_value* x = &g->values[n->in[k]];
        for (uint32_t j = 0; j < x->rank; ++j)
          if (j != n->axis && x->dims[j] != in->dims[j]) return PTERUN_STATUS_INVALID_ARGUMENT;
        d[n->axis] += x->dims[n->axis];
      }
      return set_shape(out, in->rank, d);
    }
    default:
      // No rule: only the exported shapes.
      for (uint32_t k = 0; k < n->nin; ++k)
        if (!at_bounds(&g->values[n->in[k]])) return PTERUN_STATUS_NOT_SUPPORTED;
      return set_shape(out, out->rank, out->max_dims);
  }
}
