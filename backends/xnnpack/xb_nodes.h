/* Internal to libpterun_backend_xnnpack: what the node files share (the
 * load-time checks and weight preparation of xb_prepare.c, the execute loops
 * of xb_run_*.c, the execute-time shapes of xb_reshape.c): value and
 * quantization helpers, broadcasting, convolution geometry, the prepared data
 * of a GEMM node, and the node families' execute entry points. */
#ifndef PTERUN_BACKENDS_XNNPACK_XB_NODES_H_
#define PTERUN_BACKENDS_XNNPACK_XB_NODES_H_

#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_internal.h"

static inline bool is_f32(const xb_value* v) {
  return v->dtype == XB_DT_FP32 && v->qkind == XB_Q_NONE;
}
static inline bool is_q8(const xb_value* v) {
  return (v->dtype == XB_DT_QINT8 || v->dtype == XB_DT_QUINT8) && v->qkind == XB_Q_PER_TENSOR;
}
static inline size_t elem_size(const xb_value* v) {
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
static inline bool same_dims(const xb_value* x, const xb_value* y) {
  if (x->rank != y->rank) return false;
  for (uint32_t d = 0; d < x->rank; ++d)
    if (x->dims[d] != y->dims[d]) return false;
  return true;
}
static inline bool same_quant(const xb_value* x, const xb_value* y) {
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
static inline void q_range(const xb_node* n, const xb_value* o, int32_t* lo, int32_t* hi) {
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
  // NaN is mapped to lo. One select after another: GCC if-converts these
  // and vectorises loops over requant (not a nested ?: in one expression).
  x = x == x ? x : lo_f;
  x = x < lo_f ? lo_f : x;
  x = x > hi_f ? hi_f : x;
  // Round half to even without a libm call: |x| <= 510 here, far below
  // 2^22, where adding and subtracting 1.5 * 2^23 rounds in the current
  // (nearest-even) mode.
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
static inline bool make_bcast(const xb_value* x, const xb_value* y, const xb_value* o, bcast* b) {
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

/* Elements per task of a parallel element-wise loop. */
#define XB_PAR_MIN ((size_t)16384)
/* The flags of a parallel loop over `elems` elements at `ps` picoseconds an
 * element on one thread: the pool splits it only when that pays
 * (docs/performance.md, "Thread thresholds"). */
static inline uint32_t xb_par_flags(size_t max_threads, double elems, double ps) {
  return PTERUN_PARALLEL_MAX_THREADS(max_threads) | PTERUN_PARALLEL_WORK_NS(elems * ps / 1000.0);
}

static inline bool is_unary(unsigned tag) {
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
static inline bool conv_out(size_t in, uint32_t pa, uint32_t pb, uint32_t k, uint32_t s, uint32_t d,
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
  size_t pad_floats; /* f32 convolution: its padded NHWC image in scratch after the im2col
                      * block (im2col then copies rows with no bounds), or 0 */
  bool dense_dw;     /* f32 depthwise over one input channel (a stem: multiplier = OC):
                      * run as the dense convolution it is (im2col + GEMM) */
  /* int8 products on compute's int8 GEMM: weights packed at load, one per
   * group (convolution groups; dynamic: K groups) */
  pterun_compute_qs8_packed* qw;
  int32_t* wzp; /* static: per-column weight zero point, or NULL */
  int16_t* wdq; /* static depthwise: [KH][KW][OC], zero point removed */
  float* qbias; /* static: int32 bias * multiplier, per column */
  float* csum;  /* dynamic: the packed weights' column sums, [K groups][N] */
  /* dynamic 4-bit weights (qc4w / qb4w) on compute's 4-bit blockwise engine
   * instead: 16-column panels with the bias, or NULL */
  pterun_compute_qb4w_weights* qb;
} gemm_prep;

/* Rows of a dynamically quantized value and the bytes of its parameters
 * (inverse scale f32 + zero point i32 per row, stored after the data). */
static inline size_t dq_rows(const xb_value* v) {
  size_t inner = 1;
  for (uint32_t d = v->rank - (uint32_t)v->nonbatch_dims; d < v->rank; ++d) inner *= v->dims[d];
  return inner ? v->numel / inner : 0;
}
static inline size_t dq_params_offset(const xb_value* v) {
  return (v->numel + 15) & ~(size_t)15;
}

enum { KIND_F32 = 0, KIND_QS8 = 1, KIND_QD8 = 2 };
enum { XB_DQ_ROWS = 16 }; /* rows per block of a dynamically quantized GEMM */

static inline bool is_binary(unsigned tag) {
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

/* ---- execute entry points, one per node family (xb_run.c dispatches) ---- */
/* GEMM nodes (xb_run_gemm.c) */
void xb_run_fc(xb_exec* x, const xb_node* n);
void xb_run_conv(xb_exec* x, const xb_node* n);
void xb_run_deconv(xb_exec* x, const xb_node* n);
void xb_run_bmm(xb_exec* x, const xb_node* n);
/* pooling and resizing (xb_run_pool.c) */
void xb_run_pool(xb_exec* x, const xb_node* n);
void xb_run_resize(xb_exec* x, const xb_node* n);
/* data movement (xb_run_layout.c) */
void xb_run_transpose(xb_exec* x, const xb_node* n);
void xb_run_slice_pad(xb_exec* x, const xb_node* n, bool pad);
void xb_run_concat(xb_exec* x, const xb_node* n);
/* element-wise, softmax and conversions (xb_run_elementwise.c) */
void xb_run_binary(xb_exec* x, const xb_node* n);
void xb_run_unary(xb_exec* x, const xb_node* n);
void xb_run_softmax(xb_exec* x, const xb_node* n);
void xb_run_convert(xb_exec* x, const xb_node* n);

#endif /* PTERUN_BACKENDS_XNNPACK_XB_NODES_H_ */
