/* Shared helpers for the portable kernels (see util.h). */
#include "kernels/portable/util.h"

#include <inttypes.h>
#include <stdio.h>

/* ---- argument access ---------------------------------------------------- */

static const char* tag_name(const pterun_value* v) {
  return v == NULL ? "null" : pterun_value_tag_name(v->tag);
}

static pterun_status bad_kind(pterun_kernel_context* ctx, size_t i, const char* name,
                              const char* want, const pterun_value* v) {
  return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "arg %zu '%s': expected %s, got %s", i,
                            name, want, tag_name(v));
}

pterun_status pt_arg_scalar(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                            const char* name, pt_scalar* out) {
  pterun_value* v = args[i];
  if (v == NULL) return bad_kind(ctx, i, name, "Scalar", v);
  memset(out, 0, sizeof(*out));
  switch (v->tag) {
    case PTERUN_VALUE_INT:
      out->i = v->u.i;
      out->d = (double)v->u.i;
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_DOUBLE:
      out->d = v->u.d;
      /* Saturating so a huge or NaN double never makes an out-of-range cast. */
      out->i = isnan(v->u.d)                      ? 0
               : v->u.d >= 9.2233720368547758e18  ? INT64_MAX
               : v->u.d <= -9.2233720368547758e18 ? INT64_MIN
                                                  : (int64_t)v->u.d;
      out->is_float = 1;
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_BOOL:
      out->i = v->u.b ? 1 : 0;
      out->d = (double)out->i;
      out->is_bool = 1;
      return PTERUN_STATUS_OK;
    default: return bad_kind(ctx, i, name, "Scalar", v);
  }
}

pterun_status pt_wrap_dim(pterun_kernel_context* ctx, int64_t dim, int64_t rank, int64_t* out) {
  int64_t r = rank > 0 ? rank : 1; /* a rank-0 tensor behaves like rank 1 for dims */
  if (dim < -r || dim >= r)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "dim %" PRId64 " out of range for a tensor of rank %" PRId64, dim,
                              rank);
  *out = dim < 0 ? dim + r : dim;
  return PTERUN_STATUS_OK;
}

/* ---- half-precision conversion ------------------------------------------ */

float pt_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  float f;
  if (exp == 0) {
    /* zero or subnormal: mant * 2^-24 is exact in float */
    f = (float)mant * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  if (exp == 31)
    bits = sign | 0x7f800000u | (mant << 13);
  else
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t pt_f32_to_f16(float f) {
  uint32_t x;
  uint16_t sign;
  memcpy(&x, &f, 4);
  sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((x >> 13) & 0x3ffu)); /* NaN */
  if (x >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
  if (x < 0x38800000u) {
    /* Result is subnormal (or zero): scale to units of 2^-24, round to even. */
    float a;
    memcpy(&a, &x, 4);
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f));
  }
  /* Normal: rebias the exponent and round the dropped 13 bits to even. */
  return (uint16_t)(sign | ((x - 0x38000000u + 0xfffu + ((x >> 13) & 1u)) >> 13));
}

uint16_t pt_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* ---- element load / store ------------------------------------------------ */

double pt_load_f64(const void* data, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32: return ((const float*)data)[k];
    case PTERUN_DTYPE_F64: return ((const double*)data)[k];
    case PTERUN_DTYPE_F16: return pt_f16_to_f32(((const uint16_t*)data)[k]);
    case PTERUN_DTYPE_BF16: return pt_bf16_to_f32(((const uint16_t*)data)[k]);
    case PTERUN_DTYPE_U8: return ((const uint8_t*)data)[k];
    case PTERUN_DTYPE_I8: return ((const int8_t*)data)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)data)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)data)[k];
    case PTERUN_DTYPE_I64: return (double)((const int64_t*)data)[k];
    case PTERUN_DTYPE_U16: return ((const uint16_t*)data)[k];
    case PTERUN_DTYPE_U32: return ((const uint32_t*)data)[k];
    case PTERUN_DTYPE_U64: return (double)((const uint64_t*)data)[k];
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)data)[k] != 0;
    default: return 0.0;
  }
}

/* Float to int64 the way x86 converts (out of range and NaN give INT64_MIN),
 * without undefined behaviour. */
static int64_t f64_to_i64(double v) {
  if (!(v > -9.2233720368547758e18 && v < 9.2233720368547758e18)) return INT64_MIN;
  return (int64_t)v;
}

int64_t pt_load_i64(const void* data, int dt, int64_t k) {
  switch (dt) {
    case PTERUN_DTYPE_F32:
    case PTERUN_DTYPE_F64:
    case PTERUN_DTYPE_F16:
    case PTERUN_DTYPE_BF16: return f64_to_i64(pt_load_f64(data, dt, k));
    case PTERUN_DTYPE_U8: return ((const uint8_t*)data)[k];
    case PTERUN_DTYPE_I8: return ((const int8_t*)data)[k];
    case PTERUN_DTYPE_I16: return ((const int16_t*)data)[k];
    case PTERUN_DTYPE_I32: return ((const int32_t*)data)[k];
    case PTERUN_DTYPE_I64: return ((const int64_t*)data)[k];
    case PTERUN_DTYPE_U16: return ((const uint16_t*)data)[k];
    case PTERUN_DTYPE_U32: return ((const uint32_t*)data)[k];
    case PTERUN_DTYPE_U64: return (int64_t)((const uint64_t*)data)[k];
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)data)[k] != 0;
    default: return 0;
  }
}

void pt_store_i64(void* data, int dt, int64_t k, int64_t v) {
  /* Narrowing integer stores wrap (two's complement), as in C++/ATen. */
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)data)[k] = (float)v; break;
    case PTERUN_DTYPE_F64: ((double*)data)[k] = (double)v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)data)[k] = pt_f32_to_f16((float)v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)data)[k] = pt_f32_to_bf16((float)v); break;
    case PTERUN_DTYPE_U8: ((uint8_t*)data)[k] = (uint8_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I8: ((int8_t*)data)[k] = (int8_t)(uint8_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I16: ((int16_t*)data)[k] = (int16_t)(uint16_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I32: ((int32_t*)data)[k] = (int32_t)(uint32_t)(uint64_t)v; break;
    case PTERUN_DTYPE_I64: ((int64_t*)data)[k] = v; break;
    case PTERUN_DTYPE_U16: ((uint16_t*)data)[k] = (uint16_t)(uint64_t)v; break;
    case PTERUN_DTYPE_U32: ((uint32_t*)data)[k] = (uint32_t)(uint64_t)v; break;
    case PTERUN_DTYPE_U64: ((uint64_t*)data)[k] = (uint64_t)v; break;
    case PTERUN_DTYPE_BOOL: ((uint8_t*)data)[k] = v != 0; break;
    default: break;
  }
}

void pt_store_f64(void* data, int dt, int64_t k, double v) {
  switch (dt) {
    case PTERUN_DTYPE_F32: ((float*)data)[k] = (float)v; break;
    case PTERUN_DTYPE_F64: ((double*)data)[k] = v; break;
    case PTERUN_DTYPE_F16: ((uint16_t*)data)[k] = pt_f32_to_f16((float)v); break;
    case PTERUN_DTYPE_BF16: ((uint16_t*)data)[k] = pt_f32_to_bf16((float)v); break;
    case PTERUN_DTYPE_BOOL: ((uint8_t*)data)[k] = v != 0; break; /* NaN is true */
    default: pt_store_i64(data, dt, k, f64_to_i64(v)); break;
  }
}

/* ---- type promotion ------------------------------------------------------- */

static int float_rank(int dt) {
  switch (dt) {
    case PTERUN_DTYPE_F16:
    case PTERUN_DTYPE_BF16: return 1;
    case PTERUN_DTYPE_F32: return 2;
    case PTERUN_DTYPE_F64: return 3;
    default: return 0;
  }
}

static bool is_unsigned_int(int dt) {
  return dt == PTERUN_DTYPE_U8 || dt == PTERUN_DTYPE_U16 || dt == PTERUN_DTYPE_U32 ||
         dt == PTERUN_DTYPE_U64;
}

int pt_promote_types(int a, int b) {
  if (a == b) return a;
  if (!pt_is_real_dtype(a) || !pt_is_real_dtype(b)) return -1;
  if (a == PTERUN_DTYPE_BOOL) return b;
  if (b == PTERUN_DTYPE_BOOL) return a;
  if (pt_is_float_dtype(a) || pt_is_float_dtype(b)) {
    int ra = float_rank(a), rb = float_rank(b);
    if (ra == 1 && rb == 1) return PTERUN_DTYPE_F32; /* half + bfloat16 */
    return ra >= rb ? a : b;
  }
  /* Both integers. */
  {
    size_t sa = pterun_dtype_size(a), sb = pterun_dtype_size(b);
    bool ua = is_unsigned_int(a), ub = is_unsigned_int(b);
    if (ua == ub) return sa >= sb ? a : b;
    /* Mixed signedness: uint8 widens into a signed type (ATen's table);
     * wider unsigned types have no promotion with signed ones. */
    {
      int u = ua ? a : b, s = ua ? b : a;
      size_t ss = pterun_dtype_size(s);
      if (u != PTERUN_DTYPE_U8) return -1;
      return ss >= 2 ? s : PTERUN_DTYPE_I16;
    }
  }
}

/* ---- shapes ---------------------------------------------------------------- */

static void format_shape(char* buf, size_t cap, size_t rank, const int64_t* sizes) {
  size_t used = 0, k;
  int n = snprintf(buf, cap, "[");
  used = n > 0 ? (size_t)n : 0;
  for (k = 0; k < rank && used < cap; ++k) {
    n = snprintf(buf + used, cap - used, k ? ", %" PRId64 : "%" PRId64, sizes[k]);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

pterun_status pt_broadcast_shape(pterun_kernel_context* ctx, const pterun_tensor* a,
                                 const pterun_tensor* b, int64_t* sizes_out, size_t* rank_out) {
  size_t ra = a->rank, rb = b->rank, r = ra > rb ? ra : rb, k;
  for (k = 0; k < r; ++k) {
    /* k counts from the last dim */
    int64_t da = k < ra ? a->sizes[ra - 1 - k] : 1;
    int64_t db = k < rb ? b->sizes[rb - 1 - k] : 1;
    int64_t d;
    if (da == db || db == 1)
      d = da;
    else if (da == 1)
      d = db;
    else {
      char sa[128], sb[128];
      format_shape(sa, sizeof sa, ra, a->sizes);
      format_shape(sb, sizeof sb, rb, b->sizes);
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                                "shapes %s and %s are not broadcastable", sa, sb);
    }
    sizes_out[r - 1 - k] = d;
  }
  *rank_out = r;
  return PTERUN_STATUS_OK;
}

pterun_status pt_resize(pterun_kernel_context* ctx, pterun_tensor* out, size_t rank,
                        const int64_t* sizes) {
  pterun_status s;
  size_t k;
  if (out->rank == rank) {
    for (k = 0; k < rank && out->sizes[k] == sizes[k]; ++k) {
    }
    if (k == rank) goto check_memory; /* already the right shape */
  }
  s = pterun_tensor_resize(out, rank, sizes);
  if (s != PTERUN_STATUS_OK) {
    char want[256], have[256];
    format_shape(want, sizeof want, rank, sizes);
    format_shape(have, sizeof have, out->rank, out->sizes);
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg 'out': cannot resize from %s to %s (%s)", have, want,
                              pterun_status_str(s));
  }
check_memory:
  /* Every kernel writes its outputs after resizing them: an output without
   * memory (an unplanned or freed tensor) is an error, never a NULL write. */
  if (out->numel > 0 && out->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg 'out': output tensor has no memory");
  return PTERUN_STATUS_OK;
}

pterun_status pt_resize_like(pterun_kernel_context* ctx, pterun_tensor* out,
                             const pterun_tensor* like) {
  return pt_resize(ctx, out, like->rank, like->sizes);
}

int64_t pt_bcast_offset(const pterun_tensor* in, const pterun_tensor* out, int64_t n) {
  int64_t off = 0;
  int k, ko;
  /* Walk out's dims from the last; in's dims align to the right. */
  for (ko = (int)out->rank - 1, k = (int)in->rank - 1; ko >= 0; --ko, --k) {
    int64_t sz = out->sizes[ko];
    int64_t idx = sz > 0 ? n % sz : 0;
    n = sz > 0 ? n / sz : 0;
    if (k >= 0 && in->sizes[k] != 1) off += idx * in->strides[k];
  }
  return off;
}

int64_t pt_logical_offset(const pterun_tensor* t, int64_t n) {
  int64_t off = 0;
  int k;
  for (k = (int)t->rank - 1; k >= 0; --k) {
    int64_t sz = t->sizes[k];
    int64_t idx = sz > 0 ? n % sz : 0;
    n = sz > 0 ? n / sz : 0;
    off += idx * t->strides[k];
  }
  return off;
}

bool pt_same_layout(const pterun_tensor* a, const pterun_tensor* b) {
  size_t k;
  if (a->rank != b->rank) return false;
  for (k = 0; k < a->rank; ++k) {
    if (a->sizes[k] != b->sizes[k]) return false;
    /* Size-1 dims never move the offset, so their strides don't matter. */
    if (a->sizes[k] > 1 && a->strides[k] != b->strides[k]) return false;
  }
  return true;
}

/* ---- appended helpers (see the end of util.h) ------------------------------ */

int pt_promote_scalar(int dt, const pt_scalar* s) {
  if (s->is_float) return pt_is_float_dtype(dt) ? dt : PTERUN_DTYPE_F32;
  if (!s->is_bool && dt == PTERUN_DTYPE_BOOL) return PTERUN_DTYPE_I64;
  return dt;
}

bool pt_can_cast(int from, int to) {
  if (pt_is_float_dtype(from) && (pt_is_int_dtype(to) || to == PTERUN_DTYPE_BOOL)) return false;
  if (from != PTERUN_DTYPE_BOOL && to == PTERUN_DTYPE_BOOL) return false;
  return true;
}

bool pt_scalar_fits_category(const pt_scalar* s, int dt) {
  if (s->is_float) return pt_is_float_dtype(dt);
  if (!s->is_bool) return dt != PTERUN_DTYPE_BOOL;
  return true;
}

double pt_round_to_dtype(double v, int dt) {
  switch (dt) {
    case PTERUN_DTYPE_F64: return v;
    case PTERUN_DTYPE_F32: return (double)(float)v;
    case PTERUN_DTYPE_F16: return pt_f16_to_f32(pt_f32_to_f16((float)v));
    case PTERUN_DTYPE_BF16: return pt_bf16_to_f32(pt_f32_to_bf16((float)v));
    default: {
      union {
        int64_t i;
        uint64_t u;
        double d;
      } buf; /* aligned for any dtype */
      pt_store_f64(&buf, dt, 0, v);
      return pt_load_f64(&buf, dt, 0);
    }
  }
}

void pt_iter_init(pt_iter* it, const pterun_tensor* out, const pterun_tensor* const* ins,
                  int n_ins) {
  int d, o;
  memset(it, 0, sizeof(*it));
  it->rank = out->rank;
  it->nops = n_ins + 1;
  for (d = 0; d < it->rank; ++d) {
    it->sizes[d] = out->sizes[d];
    it->strides[0][d] = out->strides[d];
  }
  for (o = 0; o < n_ins; ++o) {
    const pterun_tensor* t = ins[o];
    int k;
    if (t == NULL) continue;
    /* in's dims align to the right of out's */
    for (d = it->rank - 1, k = (int)t->rank - 1; d >= 0 && k >= 0; --d, --k)
      it->strides[o + 1][d] = t->sizes[k] == 1 ? 0 : t->strides[k];
  }
}

pterun_status pt_check_real_dtype(pterun_kernel_context* ctx, const pterun_tensor* t,
                                  const char* name) {
  if (!pt_is_real_dtype(t->dtype))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': dtype %s is not supported", name,
                              pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}
