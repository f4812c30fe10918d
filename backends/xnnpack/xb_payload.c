/* Reading a delegate payload: the XH00 header (or a bare XN00/XN01
 * FlatBuffer), the XNNGraph tables, constants (inline buffers, the constant
 * region, or named data) and quantization parameters. Everything is read
 * with libpterun's bounds-checked FlatBuffer reader and checked before use. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backends/xnnpack/xb_internal.h"

/* Field slots (4 + 2 * field id). */
enum {
  G_XNODES = 6,
  G_XVALUES = 8,
  G_NUM_EXTERNS = 10,
  G_CONSTANT_BUFFER = 16,
  G_CONSTANT_DATA = 20,
  CD_OFFSET = 4,
  CD_SIZE = 6,
  CD_NAMED_KEY = 8,
  BUF_STORAGE = 4,
  XV_TYPE = 4,
  XV_VALUE = 6,
  TV_DATATYPE = 4,
  TV_NUM_DIMS = 6,
  TV_DIMS = 8,
  TV_CONSTANT_IDX = 10,
  TV_EXTERNAL_ID = 12,
  TV_FLAGS = 14,
  TV_ID_OUT = 16,
  TV_DQ_DATATYPE = 18,
  QTV_TENSOR = 4,
  QTV_QTYPE = 6,
  QTV_QPARAMS = 8,
  XN_TYPE = 4,
  XN_NODE = 6,
  XN_DEBUG = 8,
  XN_MINMAX = 10,
  MM_MIN = 4,
  MM_MAX = 6
};

static const char* const kNodeNames[XB_N_COUNT] = {"none",
                                                   "Add",
                                                   "FullyConnected",
                                                   "Softmax",
                                                   "Sigmoid",
                                                   "StaticTranspose",
                                                   "Clamp",
                                                   "Conv2d",
                                                   "Div",
                                                   "StaticResizeBilinear2D",
                                                   "StaticConstantPad",
                                                   "AvgPooling2d",
                                                   "Minimum",
                                                   "DepthwiseConv2d",
                                                   "MaxPooling2d",
                                                   "Multiply",
                                                   "Subtract",
                                                   "Floor",
                                                   "Convert",
                                                   "GlobalAvgPooling2d",
                                                   "StaticReshape",
                                                   "ArgMaxPooling2d",
                                                   "SquareRoot",
                                                   "Ceiling",
                                                   "Hardswish",
                                                   "LeakyReLU",
                                                   "Maximum",
                                                   "Negate",
                                                   "Square",
                                                   "ELU",
                                                   "Abs",
                                                   "PReLU",
                                                   "Concatenate2",
                                                   "Concatenate3",
                                                   "Concatenate4",
                                                   "StaticSlice",
                                                   "ScaledDotProductAttention",
                                                   "BatchMatrixMultiply",
                                                   "Concatenate5",
                                                   "ConvTranspose2d",
                                                   "ReciprocalSquareRoot",
                                                   "Log",
                                                   "Gelu",
                                                   "Tanh",
                                                   "Exp",
                                                   "Sin",
                                                   "Copy",
                                                   "Cos"};

const char* xb_node_name(unsigned tag) {
  return tag > 0 && tag < XB_N_COUNT ? kNodeNames[tag] : "unknown";
}

static const char* const kDtypeNames[XB_DT_COUNT] = {
    "invalid", "fp32",   "fp16",   "qint8",  "quint8", "qint32", "qcint8", "qcint32",
    "qcint4",  "qdint8", "qbint4", "qpint8", "int32",  "pfp32",  "bf16"};

const char* xb_dtype_name(int dt) {
  return dt >= 0 && dt < XB_DT_COUNT ? kDtypeNames[dt] : "unknown";
}

pterun_status xb_fail(const pterun_logger* lg, pterun_status st, const char* fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pterun_log(lg, PTERUN_LOG_ERROR, "XnnpackBackend: %s", msg);
  return st;
}

void* xb_alloc(xb_graph* g, size_t bytes) {
  if (g->nowned == g->owned_cap) {
    uint32_t cap = g->owned_cap ? g->owned_cap * 2 : 64;
    void** n = pterun_alloc(g->allocator, cap * sizeof *n, 16);
    if (n == NULL) return NULL;
    if (g->owned != NULL) {
      memcpy(n, g->owned, g->nowned * sizeof *n);
      pterun_free(g->allocator, g->owned);
    }
    g->owned = n;
    g->owned_cap = cap;
    g->owned_bytes += cap * sizeof *n;
  }
  void* p = pterun_alloc(g->allocator, bytes ? bytes : 1, 64);
  if (p == NULL) return NULL;
  g->owned[g->nowned++] = p;
  g->owned_bytes += bytes;
  return p;
}

void xb_graph_free(xb_graph* g) {
  for (uint32_t i = 0; i < g->nowned; ++i) pterun_free(g->allocator, g->owned[i]);
  pterun_free(g->allocator, g->owned);
  g->owned = NULL;
  g->nowned = g->owned_cap = 0;
}

typedef struct reader {
  const pterun_backend_init_args* a;
  const pterun_logger* lg;
  pterun_fb_buf fb;
  pterun_fb_table root;
  int wrapped;
  const uint8_t* cdata; /* constant region (wrapped payloads) */
  uint64_t csize;
  pterun_fb_vec constant_data, constant_buffer;
  int has_constant_data, has_constant_buffer;
} reader;

#define BAD(...) xb_fail(R->lg, PTERUN_STATUS_INVALID_PROGRAM, __VA_ARGS__)

static int scalar_u32(const pterun_fb_table* t, unsigned slot, uint32_t def, uint32_t* out) {
  size_t pos;
  int r = pterun_fb_field(t, slot, 4, &pos);
  *out = r == 1 ? pterun_fb_read_u32(t->b->base + pos) : def;
  return r >= 0;
}
static int scalar_i16(const pterun_fb_table* t, unsigned slot, int16_t def, int16_t* out) {
  size_t pos;
  int r = pterun_fb_field(t, slot, 2, &pos);
  *out = r == 1 ? (int16_t)pterun_fb_read_u16(t->b->base + pos) : def;
  return r >= 0;
}
static int scalar_f32(const pterun_fb_table* t, unsigned slot, float def, float* out) {
  size_t pos;
  int r = pterun_fb_field(t, slot, 4, &pos);
  *out = r == 1 ? pterun_fb_read_f32(t->b->base + pos) : def;
  return r >= 0;
}
static int scalar_u64(const pterun_fb_table* t, unsigned slot, uint64_t def, uint64_t* out) {
  size_t pos;
  int r = pterun_fb_field(t, slot, 8, &pos);
  *out = r == 1 ? pterun_fb_read_u64(t->b->base + pos) : def;
  return r >= 0;
}
static int scalar_u8(const pterun_fb_table* t, unsigned slot, uint8_t* out) {
  size_t pos;
  int r = pterun_fb_field(t, slot, 1, &pos);
  *out = r == 1 ? t->b->base[pos] : 0;
  return r >= 0;
}

/* Header or bare FlatBuffer. */
static pterun_status open_payload(reader* R) {
  const uint8_t* p = R->a->payload;
  size_t n = R->a->payload_size;
  if (p == NULL || n < 8) return BAD("payload of %zu bytes is too small", n);
  if (memcmp(p + 4, "XH00", 4) == 0) {
    if (n < 30) return BAD("payload header truncated (%zu bytes)", n);
    uint32_t fb_off = pterun_fb_read_u32(p + 10), fb_size = pterun_fb_read_u32(p + 14);
    uint32_t c_off = pterun_fb_read_u32(p + 18);
    uint64_t c_size = pterun_fb_read_u64(p + 22);
    if (fb_size < 8 || fb_off > n || fb_size > n - fb_off)
      return BAD("payload header: FlatBuffer [%u, +%u) is outside the %zu-byte payload", fb_off,
                 fb_size, n);
    if (c_off > n || c_size > (uint64_t)(n - c_off) || c_off < (uint64_t)fb_off + fb_size)
      return BAD("payload header: constant region [%u, +%llu) is invalid", c_off,
                 (unsigned long long)c_size);
    R->fb.base = p + fb_off;
    R->fb.size = fb_size;
    R->cdata = p + c_off;
    R->csize = c_size;
    R->wrapped = 1;
  } else {
    R->fb.base = p;
    R->fb.size = n;
  }
  if (memcmp(R->fb.base + 4, "XN00", 4) != 0 && memcmp(R->fb.base + 4, "XN01", 4) != 0) {
    char id[5];
    for (int i = 0; i < 4; ++i) {
      uint8_t c = R->fb.base[4 + i];
      id[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    id[4] = 0;
    return xb_fail(R->lg, PTERUN_STATUS_NOT_SUPPORTED,
                   "payload identifier '%s' is not an XNNPACK graph (XN00/XN01)", id);
  }
  // The FlatBuffer must be 4-aligned in memory for the reader's alignment
  // rules to mean anything; the exporter aligns it to 16 in the payload.
  if (((uintptr_t)R->fb.base & 3) != 0) return BAD("payload FlatBuffer is misaligned");
  if (!pterun_fb_root(&R->fb, &R->root)) return BAD("payload FlatBuffer root is malformed");
  if (pterun_fb_get_vector(&R->root, G_CONSTANT_DATA, 4, &R->constant_data) < 0)
    return BAD("constant_data malformed");
  R->has_constant_data = pterun_fb_get_vector(&R->root, G_CONSTANT_DATA, 4, &R->constant_data) == 1;
  R->has_constant_buffer =
      pterun_fb_get_vector(&R->root, G_CONSTANT_BUFFER, 4, &R->constant_buffer) == 1;
  if (!R->has_constant_buffer &&
      pterun_fb_get_vector(&R->root, G_CONSTANT_BUFFER, 4, &R->constant_buffer) < 0)
    return BAD("constant_buffer malformed");
  return PTERUN_STATUS_OK;
}

/* Bytes of constant entry idx (> 0): named data, constant region or inline. */
static pterun_status constant_bytes(reader* R, uint32_t idx, const uint8_t** data, uint64_t* size) {
  if (R->has_constant_data && R->wrapped) {
    pterun_fb_table e;
    if (idx >= R->constant_data.len || !pterun_fb_vec_table(&R->constant_data, idx, &e))
      return BAD("constant index %u out of range (%u entries)", idx, R->constant_data.len);
    const char* key;
    uint32_t kl;
    int hk = pterun_fb_get_string(&e, CD_NAMED_KEY, &key, &kl);
    if (hk < 0) return BAD("constant %u: named key malformed", idx);
    if (hk == 1) {
      const void* d;
      size_t n;
      pterun_status st = pterun_named_data_get(R->a->named_data, key, kl, &d, &n);
      if (st != PTERUN_STATUS_OK)
        return xb_fail(R->lg, PTERUN_STATUS_INVALID_EXTERNAL_DATA,
                       "constant %u: its named data (a %u-byte key) is in neither the program nor "
                       "the data files",
                       idx, kl);
      *data = d;
      *size = n;
      return PTERUN_STATUS_OK;
    }
    uint64_t off, sz;
    if (!scalar_u64(&e, CD_OFFSET, 0, &off) || !scalar_u64(&e, CD_SIZE, 0, &sz))
      return BAD("constant %u: offset/size malformed", idx);
    if (off > R->csize || sz > R->csize - off)
      return BAD("constant %u [%llu, +%llu) is outside the %llu-byte constant region", idx,
                 (unsigned long long)off, (unsigned long long)sz, (unsigned long long)R->csize);
    *data = R->cdata + off;
    *size = sz;
    return PTERUN_STATUS_OK;
  }
  if (R->has_constant_buffer) {
    pterun_fb_table b;
    pterun_fb_vec st = {0};
    if (idx >= R->constant_buffer.len || !pterun_fb_vec_table(&R->constant_buffer, idx, &b))
      return BAD("constant buffer %u out of range (%u buffers)", idx, R->constant_buffer.len);
    int r = pterun_fb_get_vector(&b, BUF_STORAGE, 1, &st);
    if (r < 0) return BAD("constant buffer %u malformed", idx);
    *data = r == 1 ? pterun_fb_vec_at(&st, 0) : NULL;
    *size = r == 1 ? st.len : 0;
    return PTERUN_STATUS_OK;
  }
  return BAD("value refers to constant %u but the payload has no constants", idx);
}

static size_t dtype_bits(int dt) {
  switch (dt) {
    case XB_DT_FP32:
    case XB_DT_QINT32:
    case XB_DT_QCINT32:
    case XB_DT_INT32: return 32;
    case XB_DT_FP16:
    case XB_DT_BF16: return 16;
    case XB_DT_QINT8:
    case XB_DT_QUINT8:
    case XB_DT_QCINT8:
    case XB_DT_QDINT8: return 8;
    case XB_DT_QCINT4:
    case XB_DT_QBINT4: return 4;
    default: return 0;
  }
}

/* f32 scale vector: inline [float] or a constant entry of num_scales f32. */
static pterun_status read_scales(reader* R, xb_graph* g, const pterun_fb_table* q, unsigned s_vec,
                                 unsigned s_idx, unsigned s_num, int bf16, uint32_t vi,
                                 xb_value* v) {
  pterun_fb_vec sv = {0};
  uint32_t bidx, num;
  int r = pterun_fb_get_vector(q, s_vec, 4, &sv);
  if (r < 0 || !scalar_u32(q, s_idx, 0, &bidx) || !scalar_u32(q, s_num, 0, &num))
    return BAD("value %u: quantization scales malformed", vi);
  if (bidx != 0) {
    const uint8_t* d;
    uint64_t n;
    PTERUN_TRY(constant_bytes(R, bidx, &d, &n));
    size_t es = bf16 ? 2 : 4;
    if (num == 0 || n / es < num)
      return BAD("value %u: %u scales need more than %llu bytes", vi, num, (unsigned long long)n);
    if (bf16) {
      uint16_t* s = xb_alloc(g, (size_t)num * 2);
      if (s == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      for (uint32_t i = 0; i < num; ++i) s[i] = pterun_fb_read_u16(d + 2 * (size_t)i);
      v->scales_bf16 = s;
    } else {
      float* s = xb_alloc(g, (size_t)num * 4);
      if (s == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      for (uint32_t i = 0; i < num; ++i) s[i] = pterun_fb_read_f32(d + 4 * (size_t)i);
      v->scales = s;
    }
    v->num_scales = num;
    return PTERUN_STATUS_OK;
  }
  if (r != 1 || sv.len == 0) return BAD("value %u: no quantization scales", vi);
  float* s = xb_alloc(g, (size_t)sv.len * 4);
  if (s == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < sv.len; ++i) s[i] = pterun_fb_read_f32(pterun_fb_vec_at(&sv, i));
  if (bf16) {
    // Legacy f32 group scales: the runtime rounds them to bf16 (by scaling
    // up by 1 + 2^-8 and truncating), so the GEMM sees the same values.
    uint16_t* b = xb_alloc(g, (size_t)sv.len * 2);
    if (b == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < sv.len; ++i) {
      float f = s[i] * 1.00390625f;
      uint32_t u;
      memcpy(&u, &f, 4);
      b[i] = (uint16_t)(u >> 16);
    }
    v->scales_bf16 = b;
  } else {
    v->scales = s;
  }
  v->num_scales = sv.len;
  return PTERUN_STATUS_OK;
}

static pterun_status read_value(reader* R, xb_graph* g, uint32_t vi, uint32_t* id_out) {
  pterun_fb_vec values = {0};
  pterun_fb_table xv, tv, q, qt;
  pterun_fb_get_vector(&R->root, G_XVALUES, 4, &values);
  if (!pterun_fb_vec_table(&values, vi, &xv)) return BAD("value %u malformed", vi);
  uint8_t type;
  if (!scalar_u8(&xv, XV_TYPE, &type) || pterun_fb_get_table(&xv, XV_VALUE, &tv) != 1)
    return BAD("value %u: union malformed or missing", vi);
  xb_value* v = &g->values[vi];
  memset(v, 0, sizeof *v);
  v->first_def = -1;
  v->last_use = -1;
  uint8_t qtype = 0;
  if (type == 2) { /* XNNQuantizedTensorValue */
    if (!scalar_u8(&tv, QTV_QTYPE, &qtype) || pterun_fb_get_table(&tv, QTV_QPARAMS, &q) != 1)
      return BAD("value %u: quantization parameters malformed or missing", vi);
    qt = tv;
    if (pterun_fb_get_table(&qt, QTV_TENSOR, &tv) != 1)
      return BAD("value %u: quantized tensor malformed", vi);
  } else if (type != 1) {
    return BAD("value %u: unknown value type %u", vi, type);
  }
  int16_t dt, dqdt;
  uint32_t nd, cidx, ext, flags, id;
  pterun_fb_vec dims = {0};
  if (!scalar_i16(&tv, TV_DATATYPE, 0, &dt) || !scalar_u32(&tv, TV_NUM_DIMS, 0, &nd) ||
      !scalar_u32(&tv, TV_CONSTANT_IDX, 0, &cidx) || !scalar_u32(&tv, TV_EXTERNAL_ID, 0, &ext) ||
      !scalar_u32(&tv, TV_FLAGS, 0, &flags) || !scalar_u32(&tv, TV_ID_OUT, 0, &id) ||
      !scalar_i16(&tv, TV_DQ_DATATYPE, 0, &dqdt) ||
      pterun_fb_get_vector(&tv, TV_DIMS, 4, &dims) < 0)
    return BAD("value %u: tensor fields malformed", vi);
  if (dqdt != 0)
    return xb_fail(R->lg, PTERUN_STATUS_NOT_SUPPORTED,
                   "value %u uses the 2023 dynamic-quantization encoding (dq_datatype), which is "
                   "not implemented",
                   vi);
  if (dtype_bits(dt) == 0)
    return xb_fail(R->lg, PTERUN_STATUS_NOT_SUPPORTED,
                   "value %u has datatype %s (%d), which is "
                   "not implemented",
                   vi, xb_dtype_name(dt), dt);
  if (dims.len > XB_MAX_DIMS || (pterun_fb_get_vector(&tv, TV_DIMS, 4, &dims) == 1 &&
                                 nd != dims.len && !(nd == 0 && dims.len <= 1)))
    return BAD("value %u: rank %u with %u dims (max %d)", vi, nd, dims.len, XB_MAX_DIMS);
  if ((flags & ~3u) != 0) return BAD("value %u: unknown flags 0x%x", vi, flags);
  v->dtype = dt;
  v->rank = pterun_fb_get_vector(&tv, TV_DIMS, 4, &dims) == 1 ? dims.len : 0;
  v->numel = 1;
  for (uint32_t d = 0; d < v->rank; ++d) {
    v->dims[d] = pterun_fb_read_u32(pterun_fb_vec_at(&dims, d));
    if (__builtin_mul_overflow(v->numel, v->dims[d], &v->numel) || v->numel > ((size_t)1 << 40))
      return BAD("value %u: too many elements", vi);
  }
  memcpy(v->max_dims, v->dims, sizeof v->dims);
  v->max_numel = v->numel;
  size_t bits = dtype_bits(dt);
  if (bits == 4) {
    // 4-bit weights: rows of the last dim, each padded to whole bytes.
    size_t inner = v->rank > 0 ? v->dims[v->rank - 1] : 1;
    size_t rows = inner ? v->numel / inner : 0;
    v->nbytes = rows * ((inner + 1) / 2);
  } else {
    v->nbytes = v->numel * (bits / 8);
  }
  *id_out = id;
  v->is_input = (flags & 1) != 0;
  v->is_output = (flags & 2) != 0;
  if (v->is_input || v->is_output) {
    /* ext is checked against num_externs by the caller */
    v->loc = XB_LOC_EXTERNAL;
    v->external_id = ext;
    if (cidx != 0) return BAD("value %u is both external and constant", vi);
  } else if (cidx != 0) {
    const uint8_t* d;
    uint64_t n;
    PTERUN_TRY(constant_bytes(R, cidx, &d, &n));
    if (n < v->nbytes)
      return BAD("value %u: constant has %llu bytes, %zu needed", vi, (unsigned long long)n,
                 v->nbytes);
    if (v->nbytes > 0 && ((uintptr_t)d & 3) != 0 && bits >= 16) {
      // Inline/region data keep 16-byte alignment in every exporter; copy
      // defensively when a payload does not.
      uint8_t* c = xb_alloc(g, v->nbytes);
      if (c == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      memcpy(c, d, v->nbytes);
      d = c;
    }
    v->constant = d;
    v->loc = XB_LOC_CONST;
  }
  if (type != 2) return PTERUN_STATUS_OK;
  switch (qtype) {
    case 2: { /* PerTensorQuant */
      uint32_t zp;
      v->qkind = XB_Q_PER_TENSOR;
      if (!scalar_f32(&q, 4, 0.0f, &v->scale) || !scalar_u32(&q, 6, 0, &zp))
        return BAD("value %u: per-tensor parameters malformed", vi);
      v->zero_point = (int32_t)zp;
      if (!(v->scale > 0.0f) || !isfinite(v->scale))
        return BAD("value %u: scale %g is not positive", vi, (double)v->scale);
      // As XNNPACK requires: the zero point is a value of the stored type
      // (kernels subtract it from stored values in int32).
      int32_t zlo = v->dtype == XB_DT_QUINT8 ? 0 : v->dtype == XB_DT_QINT8 ? -128 : 0;
      int32_t zhi = v->dtype == XB_DT_QUINT8 ? 255 : v->dtype == XB_DT_QINT8 ? 127 : 0;
      if (v->zero_point < zlo || v->zero_point > zhi)
        return BAD("value %u: zero point %d outside [%d, %d] for %s", vi, (int)v->zero_point,
                   (int)zlo, (int)zhi, xb_dtype_name(v->dtype));
      break;
    }
    case 1: { /* PerChannelQuant: scale(0) channel_dim(1) scale_buffer_idx(2) num_scales(3) */
      uint32_t cd;
      v->qkind = XB_Q_PER_CHANNEL;
      if (!scalar_u32(&q, 6, 0, &cd)) return BAD("value %u: channel_dim malformed", vi);
      v->channel_dim = (int32_t)cd;
      PTERUN_TRY(read_scales(R, g, &q, 4, 8, 10, 0, vi, v));
      if (v->channel_dim < 0 || (uint32_t)v->channel_dim >= v->rank ||
          v->num_scales != v->dims[v->channel_dim])
        return BAD("value %u: %u per-channel scales for dim %d", vi, v->num_scales, v->channel_dim);
      break;
    }
    case 3: { /* PerTokenDynamicQuant */
      uint32_t nb;
      v->qkind = XB_Q_DYNAMIC;
      if (!scalar_u32(&q, 4, 0, &nb)) return BAD("value %u: dynamic parameters malformed", vi);
      v->nonbatch_dims = (int32_t)nb;
      if (v->nonbatch_dims < 1 || (uint32_t)v->nonbatch_dims > v->rank)
        return BAD("value %u: %d non-batch dims of %u", vi, v->nonbatch_dims, v->rank);
      break;
    }
    case 4: { /* PerChannelGroupQuant: scale(0) channel_dim(1) group_size(2) bf16(3) idx(4) num(5) */
      uint32_t cd, gs;
      v->qkind = XB_Q_GROUP;
      if (!scalar_u32(&q, 6, 0, &cd) || !scalar_u32(&q, 8, 0, &gs))
        return BAD("value %u: group parameters malformed", vi);
      v->channel_dim = (int32_t)cd;
      v->group_size = (int32_t)gs;
      PTERUN_TRY(read_scales(R, g, &q, 4, 12, 14, 1, vi, v));
      if (v->rank != 2 || v->channel_dim != 0 || v->group_size <= 0 ||
          v->dims[1] % (size_t)v->group_size != 0 ||
          v->num_scales != v->dims[0] * (v->dims[1] / (size_t)v->group_size))
        return BAD("value %u: group quantization of a [%zu, %zu] weight is inconsistent", vi,
                   v->rank > 0 ? v->dims[0] : 0, v->rank > 1 ? v->dims[1] : 0);
      break;
    }
    default: return BAD("value %u: unknown quantization type %u", vi, qtype);
  }
  return PTERUN_STATUS_OK;
}

/* Node operands of each parameter table, by slot. */
static pterun_status read_ids(reader* R, const pterun_fb_table* t, const unsigned* slots,
                              unsigned n, uint32_t* out, uint32_t ni) {
  for (unsigned k = 0; k < n; ++k)
    if (!scalar_u32(t, slots[k], 0, &out[k])) return BAD("node %u: operand field malformed", ni);
  return PTERUN_STATUS_OK;
}

static pterun_status read_u32_vec(reader* R, const pterun_fb_table* t, unsigned slot, size_t* out,
                                  uint32_t* n, uint32_t ni) {
  pterun_fb_vec v = {0};
  int r = pterun_fb_get_vector(t, slot, 4, &v);
  if (r < 0 || v.len > XB_MAX_DIMS) return BAD("node %u: shape vector malformed", ni);
  *n = r == 1 ? v.len : 0;
  for (uint32_t i = 0; i < *n; ++i) out[i] = pterun_fb_read_u32(pterun_fb_vec_at(&v, i));
  return PTERUN_STATUS_OK;
}

/* input, output, flags of the single-input node tables. */
static void one_in_one_out(xb_node* n, const uint32_t* ids) {
  n->in[0] = ids[0];
  n->nin = 1;
  n->out = ids[1];
  n->flags = ids[2];
}

static pterun_status read_node(reader* R, xb_graph* g, uint32_t ni) {
  pterun_fb_vec nodes = {0};
  pterun_fb_table xn, p, mm;
  pterun_fb_get_vector(&R->root, G_XNODES, 4, &nodes);
  if (!pterun_fb_vec_table(&nodes, ni, &xn)) return BAD("node %u malformed", ni);
  uint8_t tag;
  if (!scalar_u8(&xn, XN_TYPE, &tag) || pterun_fb_get_table(&xn, XN_NODE, &p) != 1)
    return BAD("node %u: union malformed or missing", ni);
  xb_node* n = &g->nodes[ni];
  memset(n, 0, sizeof *n);
  n->tag = tag;
  n->out2 = XB_INVALID_ID;
  n->out_min = -INFINITY;
  n->out_max = INFINITY;
  if (!scalar_u32(&xn, XN_DEBUG, 0, &n->debug_handle)) return BAD("node %u malformed", ni);
  int r = pterun_fb_get_table(&xn, XN_MINMAX, &mm);
  if (r < 0) return BAD("node %u: output_min_max malformed", ni);
  if (r == 1 &&
      (!scalar_f32(&mm, MM_MIN, 0.0f, &n->out_min) || !scalar_f32(&mm, MM_MAX, 0.0f, &n->out_max) ||
       isnan(n->out_min) || isnan(n->out_max) || n->out_min > n->out_max))
    return BAD("node %u: output range malformed", ni);
  uint32_t ids[5];
  switch (tag) {
    case XB_N_ADD:
    case XB_N_DIV:
    case XB_N_MINIMUM:
    case XB_N_MULTIPLY:
    case XB_N_SUBTRACT:
    case XB_N_MAXIMUM:
    case XB_N_PRELU:
    case XB_N_BATCH_MATRIX_MULTIPLY: {
      static const unsigned s[] = {4, 6, 8, 10};
      PTERUN_TRY(read_ids(R, &p, s, 4, ids, ni));
      n->in[0] = ids[0];
      n->in[1] = ids[1];
      n->nin = 2;
      n->out = ids[2];
      n->flags = ids[3];
      break;
    }
    case XB_N_SOFTMAX:
    case XB_N_SIGMOID:
    case XB_N_CLAMP:
    case XB_N_FLOOR:
    case XB_N_CONVERT:
    case XB_N_GLOBAL_AVG_POOLING2D:
    case XB_N_SQUARE_ROOT:
    case XB_N_CEILING:
    case XB_N_HARDSWISH:
    case XB_N_NEGATE:
    case XB_N_SQUARE:
    case XB_N_ABS:
    case XB_N_RECIPROCAL_SQUARE_ROOT:
    case XB_N_LOG:
    case XB_N_GELU:
    case XB_N_TANH:
    case XB_N_EXP:
    case XB_N_SIN:
    case XB_N_COPY:
    case XB_N_COS: {
      static const unsigned s[] = {4, 6, 8};
      PTERUN_TRY(read_ids(R, &p, s, 3, ids, ni));
      one_in_one_out(n, ids);
      break;
    }
    case XB_N_LEAKY_RELU:
    case XB_N_ELU: {
      static const unsigned s[] = {6, 8, 10};
      PTERUN_TRY(read_ids(R, &p, s, 3, ids, ni));
      if (!scalar_f32(&p, 4, 0.0f, &n->fparam)) return BAD("node %u malformed", ni);
      one_in_one_out(n, ids);
      break;
    }
    case XB_N_FULLY_CONNECTED: {
      static const unsigned s[] = {4, 6, 8, 10, 12};
      PTERUN_TRY(read_ids(R, &p, s, 5, ids, ni));
      n->in[0] = ids[0];
      n->in[1] = ids[1];
      n->in[2] = ids[2];
      n->nin = ids[2] == XB_INVALID_ID ? 2 : 3;
      n->out = ids[3];
      n->flags = ids[4];
      break;
    }
    case XB_N_CONV2D:
    case XB_N_DEPTHWISE_CONV2D:
    case XB_N_CONV_TRANSPOSE2D: {
      uint32_t f[20];
      static const unsigned s[] = {4,  6,  8,  10, 12, 14, 16, 18, 20, 22,
                                   24, 26, 28, 30, 32, 34, 36, 38, 40, 42};
      PTERUN_TRY(read_ids(R, &p, s, 20, f, ni));
      for (int k = 0; k < 4; ++k) n->pad[k] = f[k] == XB_INVALID_ID ? 0 : f[k];
      n->kh = f[4], n->kw = f[5], n->sh = f[6], n->sw = f[7], n->dh = f[8], n->dw = f[9];
      n->group_in = f[10], n->group_out = f[11], n->groups = f[12];
      n->adj_h = f[13] == XB_INVALID_ID ? 0 : f[13];
      n->adj_w = f[14] == XB_INVALID_ID ? 0 : f[14];
      n->in[0] = f[15];
      n->in[1] = f[16];
      n->in[2] = f[17];
      n->nin = f[17] == XB_INVALID_ID ? 2 : 3;
      n->out = f[18];
      n->flags = f[19] == XB_INVALID_ID ? 0 : f[19];
      break;
    }
    case XB_N_AVG_POOLING2D:
    case XB_N_MAX_POOLING2D: {
      uint32_t f[13];
      static const unsigned s[] = {4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28};
      PTERUN_TRY(read_ids(R, &p, s, 13, f, ni));
      for (int k = 0; k < 4; ++k) n->pad[k] = f[k] == XB_INVALID_ID ? 0 : f[k];
      n->kh = f[4], n->kw = f[5], n->sh = f[6], n->sw = f[7], n->dh = f[8], n->dw = f[9];
      n->in[0] = f[10];
      n->nin = 1;
      n->out = f[11];
      n->flags = f[12] == XB_INVALID_ID ? 0 : f[12];
      break;
    }
    case XB_N_STATIC_TRANSPOSE:
    case XB_N_STATIC_RESHAPE: {
      static const unsigned s[] = {8, 10, 12};
      PTERUN_TRY(read_ids(R, &p, s, 3, ids, ni));
      uint32_t cnt;
      size_t vals[XB_MAX_DIMS];
      PTERUN_TRY(read_u32_vec(R, &p, 6, vals, &cnt, ni));
      n->num_dims = cnt;
      for (uint32_t k = 0; k < cnt; ++k) {
        if (tag == XB_N_STATIC_TRANSPOSE)
          n->perm[k] = (uint32_t)vals[k];
        else
          n->shape[k] = vals[k];
      }
      one_in_one_out(n, ids);
      break;
    }
    case XB_N_STATIC_SLICE: {
      static const unsigned s[] = {10, 12, 14};
      PTERUN_TRY(read_ids(R, &p, s, 3, ids, ni));
      uint32_t c1, c2;
      PTERUN_TRY(read_u32_vec(R, &p, 6, n->offsets, &c1, ni));
      PTERUN_TRY(read_u32_vec(R, &p, 8, n->sizes, &c2, ni));
      if (c1 != c2) return BAD("node %u: slice offsets and sizes differ in length", ni);
      n->num_dims = c1;
      one_in_one_out(n, ids);
      break;
    }
    case XB_N_CONSTANT_PAD: {
      static const unsigned s[] = {10, 12, 14};
      PTERUN_TRY(read_ids(R, &p, s, 3, ids, ni));
      uint32_t c1, c2;
      PTERUN_TRY(read_u32_vec(R, &p, 4, n->pre, &c1, ni));
      PTERUN_TRY(read_u32_vec(R, &p, 6, n->post, &c2, ni));
      if (c1 != c2 || !scalar_f32(&p, 8, 0.0f, &n->fparam))
        return BAD("node %u: padding malformed", ni);
      n->num_dims = c1;
      one_in_one_out(n, ids);
      break;
    }
    case XB_N_CONCATENATE2:
    case XB_N_CONCATENATE3:
    case XB_N_CONCATENATE4:
    case XB_N_CONCATENATE5: {
      static const unsigned s[] = {4, 6, 8, 10, 12, 14, 16, 18};
      uint32_t f[8];
      PTERUN_TRY(read_ids(R, &p, s, 8, f, ni));
      n->axis = f[0];
      n->nin = tag == XB_N_CONCATENATE5 ? 5 : tag - XB_N_CONCATENATE2 + 2;
      for (uint32_t k = 0; k < 4; ++k) n->in[k] = f[1 + k];
      n->in[4] = f[7];
      n->out = f[5];
      n->flags = f[6];
      break;
    }
    case XB_N_RESIZE_BILINEAR2D: {
      static const unsigned s[] = {4, 6, 8, 10, 12};
      PTERUN_TRY(read_ids(R, &p, s, 5, ids, ni));
      n->new_h = ids[0];
      n->new_w = ids[1];
      n->in[0] = ids[2];
      n->nin = 1;
      n->out = ids[3];
      n->flags = ids[4];
      break;
    }
    case XB_N_ARGMAX_POOLING2D: {
      uint32_t f[10];
      static const unsigned s[] = {4, 6, 8, 10, 12, 14, 16, 18, 20, 22};
      PTERUN_TRY(read_ids(R, &p, s, 10, f, ni));
      for (int k = 0; k < 4; ++k) n->pad[k] = f[k];
      n->kh = f[4], n->kw = f[5];
      n->in[0] = f[6];
      n->nin = 1;
      n->out = f[7];
      n->out2 = f[8];
      n->flags = f[9];
      break;
    }
    default:
      return xb_fail(R->lg, PTERUN_STATUS_NOT_SUPPORTED, "node %u has unknown node type %u", ni,
                     tag);
  }
  return PTERUN_STATUS_OK;
}

pterun_status xb_parse(const pterun_backend_init_args* a, xb_graph* g) {
  reader rd;
  memset(&rd, 0, sizeof rd);
  reader* R = &rd;
  R->a = a;
  R->lg = a->logger;
  PTERUN_TRY(open_payload(R));
  pterun_fb_vec nodes, values;
  uint32_t num_externs;
  if (pterun_fb_get_vector(&R->root, G_XNODES, 4, &nodes) != 1 ||
      pterun_fb_get_vector(&R->root, G_XVALUES, 4, &values) != 1)
    return BAD("graph has no xnodes or xvalues");
  if (!scalar_u32(&R->root, G_NUM_EXTERNS, 0, &num_externs) || num_externs > 4096)
    return BAD("num_externs malformed or above 4096");
  if (values.len > XB_MAX_VALUES || nodes.len > XB_MAX_NODES)
    return BAD("graph too large (%u values, %u nodes)", values.len, nodes.len);
  g->nvalues = values.len;
  g->nnodes = nodes.len;
  g->num_externs = num_externs;
  g->values = xb_alloc(g, (size_t)values.len * sizeof *g->values);
  g->nodes = xb_alloc(g, (size_t)nodes.len * sizeof *g->nodes);
  g->ext_value = xb_alloc(g, (size_t)num_externs * sizeof *g->ext_value);
  uint32_t* ids = xb_alloc(g, (size_t)values.len * sizeof *ids);
  if (g->values == NULL || g->nodes == NULL || g->ext_value == NULL || ids == NULL)
    return PTERUN_STATUS_OUT_OF_MEMORY;
  for (uint32_t e = 0; e < num_externs; ++e) g->ext_value[e] = XB_INVALID_ID;
  for (uint32_t i = 0; i < values.len; ++i) {
    PTERUN_TRY(read_value(R, g, i, &ids[i]));
    const xb_value* v = &g->values[i];
    if (v->loc == XB_LOC_EXTERNAL) {
      if (v->external_id >= num_externs || g->ext_value[v->external_id] != XB_INVALID_ID)
        return BAD("value %u: external id %u out of range or used twice", i, v->external_id);
      g->ext_value[v->external_id] = i;
    }
  }
  // Nodes name values by id_out: map them to positions. The exporter writes
  // id_out = position; other dense numberings are accepted too.
  uint32_t* pos = xb_alloc(g, (size_t)values.len * sizeof *pos);
  if (pos == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < values.len; ++i) pos[i] = XB_INVALID_ID;
  for (uint32_t i = 0; i < values.len; ++i) {
    if (ids[i] >= values.len || pos[ids[i]] != XB_INVALID_ID)
      return BAD("value %u: id %u is out of range or not unique", i, ids[i]);
    pos[ids[i]] = i;
  }
  for (uint32_t ni = 0; ni < nodes.len; ++ni) {
    PTERUN_TRY(read_node(R, g, ni));
    xb_node* n = &g->nodes[ni];
    for (uint32_t k = 0; k < n->nin; ++k) {
      if (n->in[k] >= values.len) return BAD("node %u: operand %u names no value", ni, k);
      n->in[k] = pos[n->in[k]];
    }
    if (n->out >= values.len) return BAD("node %u: output names no value", ni);
    n->out = pos[n->out];
    if (n->out2 != XB_INVALID_ID) {
      if (n->out2 >= values.len) return BAD("node %u: output names no value", ni);
      n->out2 = pos[n->out2];
    }
  }
  return PTERUN_STATUS_OK;
}
