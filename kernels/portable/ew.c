/* Elementwise engine: see ew.h. */
#include "kernels/portable/ew.h"

/* Elements converted per step on the generic path (stack buffers). */
#define PK_CHUNK 256

pterun_status pk_fail_dtype(pterun_kernel_context* ctx, const char* arg, int dt, const char* why) {
  return PTERUN_FAIL_ARG(ctx, "arg '%s': dtype %s %s", arg, pterun_dtype_name(dt), why);
}

pterun_status pk_resize_broadcast(pterun_kernel_context* ctx, const pterun_tensor* a,
                                  const pterun_tensor* b, pterun_tensor* out) {
  int64_t sizes[PTERUN_MAX_RANK];
  size_t rank;
  PTERUN_TRY(pk_broadcast_shape(ctx, a, b, sizes, &rank));
  return pterun_out_resize(ctx, out, "out", rank, sizes);
}

static int64_t wrap_i64(int64_t v, int dt) {
  switch (dt) {
    case PTERUN_DTYPE_U8: return (uint8_t)(uint64_t)v;
    case PTERUN_DTYPE_I8: return (int8_t)(uint8_t)(uint64_t)v;
    case PTERUN_DTYPE_I16: return (int16_t)(uint16_t)(uint64_t)v;
    case PTERUN_DTYPE_I32: return (int32_t)(uint32_t)(uint64_t)v;
    case PTERUN_DTYPE_U16: return (uint16_t)(uint64_t)v;
    case PTERUN_DTYPE_U32: return (uint32_t)(uint64_t)v;
    case PTERUN_DTYPE_BOOL: return v != 0;
    default: return v;
  }
}

void pk_make_scalar_tensor(pk_scalar_tensor* st, const pterun_scalar* s, int dt) {
  memset(st, 0, sizeof(*st));
  st->t.data = &st->v;
  st->t.rank = 0;
  st->t.numel = 1;
  if (dt == PTERUN_DTYPE_F64) {
    st->t.dtype = PTERUN_DTYPE_F64;
    st->v.d = s->d;
  } else if (pterun_dtype_is_float(dt)) {
    st->t.dtype = PTERUN_DTYPE_F32;
    st->v.f = (float)s->d;
  } else {
    st->t.dtype = PTERUN_DTYPE_I64;
    st->v.i = wrap_i64(s->i, dt);
  }
  st->t.nbytes = st->t.capacity = pterun_dtype_size(st->t.dtype);
}

int64_t pk_iter_rows(pterun_iter* it) {
  int d, o, r = 0;
  /* Drop size-1 dims, then merge a dim into the previous kept one when every
   * operand steps through both as one run. */
  for (d = 0; d < it->rank; ++d) {
    int merge = r > 0;
    if (it->sizes[d] == 1) continue;
    for (o = 0; o < it->nops && merge; ++o)
      merge = it->strides[o][r - 1] == it->strides[o][d] * it->sizes[d];
    if (merge) {
      it->sizes[r - 1] *= it->sizes[d];
      for (o = 0; o < it->nops; ++o) it->strides[o][r - 1] = it->strides[o][d];
    } else {
      it->sizes[r] = it->sizes[d];
      for (o = 0; o < it->nops; ++o) it->strides[o][r] = it->strides[o][d];
      ++r;
    }
  }
  for (d = 0; d < PTERUN_MAX_RANK; ++d) it->idx[d] = 0;
  for (o = 0; o < it->nops; ++o) it->off[o] = 0;
  if (r == 0) {
    for (o = 0; o < it->nops; ++o) it->strides[o][0] = 0;
    it->rank = 0;
    return 1;
  }
  it->rank = r - 1; /* the row strides stay at index it->rank */
  return it->sizes[r - 1];
}

/* ---- row loads and stores (dtype switch once per row) ---- */

#define PK_LOAD_CASES(dst, t, off, stride, n, CONV)                                                \
  switch ((t)->dtype) {                                                                            \
    case PTERUN_DTYPE_F32: PK_LOAD_LOOP(dst, float, t, off, stride, n, CONV); break;               \
    case PTERUN_DTYPE_F64: PK_LOAD_LOOP(dst, double, t, off, stride, n, CONV); break;              \
    case PTERUN_DTYPE_U8:                                                                          \
    case PTERUN_DTYPE_BOOL: PK_LOAD_LOOP(dst, uint8_t, t, off, stride, n, CONV); break;            \
    case PTERUN_DTYPE_I8: PK_LOAD_LOOP(dst, int8_t, t, off, stride, n, CONV); break;               \
    case PTERUN_DTYPE_I16: PK_LOAD_LOOP(dst, int16_t, t, off, stride, n, CONV); break;             \
    case PTERUN_DTYPE_I32: PK_LOAD_LOOP(dst, int32_t, t, off, stride, n, CONV); break;             \
    case PTERUN_DTYPE_I64: PK_LOAD_LOOP(dst, int64_t, t, off, stride, n, CONV); break;             \
    default: {                                                                                     \
      int64_t k_;                                                                                  \
      for (k_ = 0; k_ < (n); ++k_) (dst)[k_] = CONV##_generic((t), (off) + k_ * (stride));         \
    }                                                                                              \
  }
#define PK_LOAD_LOOP(dst, T, t, off, stride, n, CONV)                                              \
  do {                                                                                             \
    const T* s_ = (const T*)(t)->data + (off);                                                     \
    int64_t k_;                                                                                    \
    for (k_ = 0; k_ < (n); ++k_) (dst)[k_] = CONV(s_[k_ * (stride)]);                              \
  } while (0)

#define PK_TO_F64(v) ((double)(v))
static double PK_TO_F64_generic(const pterun_tensor* t, int64_t k) {
  return pterun_load_f64(t->data, t->dtype, k);
}
#define PK_TO_I64(v) ((int64_t)(v))
static int64_t PK_TO_I64_generic(const pterun_tensor* t, int64_t k) {
  return pterun_load_i64(t->data, t->dtype, k);
}

static bool is_narrow_float(int dt) {
  return dt == PTERUN_DTYPE_F32 || dt == PTERUN_DTYPE_F16 || dt == PTERUN_DTYPE_BF16;
}

void pk_load_row_f64(double* dst, const pterun_tensor* t, int64_t off, int64_t stride, int64_t n,
                     int cdt) {
  PK_LOAD_CASES(dst, t, off, stride, n, PK_TO_F64)
  /* Integers entering a float computation are first converted to its dtype. */
  if (is_narrow_float(cdt) && !pterun_dtype_is_float(t->dtype)) {
    int64_t k;
    for (k = 0; k < n; ++k) dst[k] = pterun_round_to_dtype(dst[k], cdt);
  }
  /* A bool stored as a byte other than 0/1 still reads as 1. */
  if (t->dtype == PTERUN_DTYPE_BOOL) {
    int64_t k;
    for (k = 0; k < n; ++k) dst[k] = dst[k] != 0.0;
  }
}

void pk_load_row_i64(int64_t* dst, const pterun_tensor* t, int64_t off, int64_t stride, int64_t n) {
  PK_LOAD_CASES(dst, t, off, stride, n, PK_TO_I64)
  if (t->dtype == PTERUN_DTYPE_BOOL) {
    int64_t k;
    for (k = 0; k < n; ++k) dst[k] = dst[k] != 0;
  }
}

static void store_f64(pterun_tensor* t, int64_t off, int64_t stride, double* src, int64_t n,
                      int cdt) {
  int64_t k;
  if (t->dtype != cdt && is_narrow_float(cdt))
    for (k = 0; k < n; ++k) src[k] = pterun_round_to_dtype(src[k], cdt);
  if (t->dtype == PTERUN_DTYPE_F32) {
    float* d = (float*)t->data + off;
    for (k = 0; k < n; ++k) d[k * stride] = (float)src[k];
  } else if (t->dtype == PTERUN_DTYPE_F64) {
    double* d = (double*)t->data + off;
    for (k = 0; k < n; ++k) d[k * stride] = src[k];
  } else {
    for (k = 0; k < n; ++k) pterun_store_f64(t->data, t->dtype, off + k * stride, src[k]);
  }
}

static void store_i64(pterun_tensor* t, int64_t off, int64_t stride, int64_t* src, int64_t n,
                      int cdt) {
  int64_t k;
  if (t->dtype != cdt)
    for (k = 0; k < n; ++k) src[k] = wrap_i64(src[k], cdt);
  for (k = 0; k < n; ++k) pterun_store_i64(t->data, t->dtype, off + k * stride, src[k]);
}

static pterun_status check_data(pterun_kernel_context* ctx, const pterun_tensor* t,
                                const char* name) {
  if (t->numel > 0 && t->data == NULL)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': tensor has no data", name);
  return PTERUN_STATUS_OK;
}

static pterun_status finish(pterun_kernel_context* ctx, const pk_ew_params* p) {
  if (p->err) return PTERUN_FAIL_ARG(ctx, "division by zero");
  return PTERUN_STATUS_OK;
}

pterun_status pk_ew_binary(pterun_kernel_context* ctx, const pk_binary_op* op,
                           const pterun_tensor* a, const pterun_tensor* b, pterun_tensor* out,
                           int compute_dt, pk_ew_params* p) {
  const pterun_tensor* ins[2];
  pterun_iter it;
  int64_t inner, rows, row, so, sa, sb;
  bool all_f32;
  if (out->numel == 0) return PTERUN_STATUS_OK;
  PTERUN_TRY(check_data(ctx, a, "self"));
  PTERUN_TRY(check_data(ctx, b, "other"));
  PTERUN_TRY(check_data(ctx, out, "out"));
  /* Same shape and dense layout (e.g. all channels-last): one flat row. */
  if (compute_dt == PTERUN_DTYPE_F32 && a->dtype == PTERUN_DTYPE_F32 &&
      b->dtype == PTERUN_DTYPE_F32 && pk_same_layout(a, out) && pk_same_layout(b, out)) {
    if (op->f32 && out->dtype == PTERUN_DTYPE_F32) {
      op->f32((const float*)a->data, (const float*)b->data, (float*)out->data, out->numel, 1, 1, p);
      return finish(ctx, p);
    }
    if (op->f32b && out->dtype == PTERUN_DTYPE_BOOL) {
      op->f32b((const float*)a->data, (const float*)b->data, (uint8_t*)out->data, out->numel, 1, 1,
               p);
      return finish(ctx, p);
    }
  }
  ins[0] = a;
  ins[1] = b;
  pterun_iter_init(&it, out, ins, 2);
  inner = pk_iter_rows(&it);
  rows = out->numel / inner;
  so = it.strides[0][it.rank];
  sa = it.strides[1][it.rank];
  sb = it.strides[2][it.rank];
  all_f32 = compute_dt == PTERUN_DTYPE_F32 && a->dtype == PTERUN_DTYPE_F32 &&
            b->dtype == PTERUN_DTYPE_F32 && so == 1 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1);
  if (all_f32 && op->f32 && out->dtype == PTERUN_DTYPE_F32) {
    const float* A = (const float*)a->data;
    const float* B = (const float*)b->data;
    float* O = (float*)out->data;
    for (row = 0; row < rows; ++row, pterun_iter_next(&it))
      op->f32(A + it.off[1], B + it.off[2], O + it.off[0], inner, (int)sa, (int)sb, p);
    return finish(ctx, p);
  }
  if (all_f32 && op->f32b && out->dtype == PTERUN_DTYPE_BOOL) {
    const float* A = (const float*)a->data;
    const float* B = (const float*)b->data;
    uint8_t* O = (uint8_t*)out->data;
    for (row = 0; row < rows; ++row, pterun_iter_next(&it))
      op->f32b(A + it.off[1], B + it.off[2], O + it.off[0], inner, (int)sa, (int)sb, p);
    return finish(ctx, p);
  }
  if (pterun_dtype_is_float(compute_dt)) {
    double ba[PK_CHUNK], bb[PK_CHUNK], bo[PK_CHUNK];
    if (op->f64 == NULL) return pk_fail_dtype(ctx, "self", compute_dt, "is not supported");
    for (row = 0; row < rows; ++row, pterun_iter_next(&it)) {
      int64_t c;
      for (c = 0; c < inner; c += PK_CHUNK) {
        int64_t m = inner - c < PK_CHUNK ? inner - c : PK_CHUNK;
        pk_load_row_f64(ba, a, it.off[1] + c * sa, sa, sa ? m : 1, compute_dt);
        pk_load_row_f64(bb, b, it.off[2] + c * sb, sb, sb ? m : 1, compute_dt);
        op->f64(ba, bb, bo, m, sa != 0, sb != 0, p);
        store_f64(out, it.off[0] + c * so, so, bo, m, compute_dt);
      }
    }
  } else {
    int64_t ba[PK_CHUNK], bb[PK_CHUNK], bo[PK_CHUNK];
    if (op->i64 == NULL) return pk_fail_dtype(ctx, "self", compute_dt, "is not supported");
    for (row = 0; row < rows; ++row, pterun_iter_next(&it)) {
      int64_t c;
      for (c = 0; c < inner; c += PK_CHUNK) {
        int64_t m = inner - c < PK_CHUNK ? inner - c : PK_CHUNK;
        pk_load_row_i64(ba, a, it.off[1] + c * sa, sa, sa ? m : 1);
        pk_load_row_i64(bb, b, it.off[2] + c * sb, sb, sb ? m : 1);
        op->i64(ba, bb, bo, m, sa != 0, sb != 0, p);
        store_i64(out, it.off[0] + c * so, so, bo, m, compute_dt);
      }
    }
  }
  return finish(ctx, p);
}

pterun_status pk_ew_unary(pterun_kernel_context* ctx, const pk_unary_op* op,
                          const pterun_tensor* in, pterun_tensor* out, int compute_dt,
                          pk_ew_params* p) {
  pterun_iter it;
  int64_t inner, rows, row, so, si;
  if (out->numel == 0) return PTERUN_STATUS_OK;
  PTERUN_TRY(check_data(ctx, in, "self"));
  PTERUN_TRY(check_data(ctx, out, "out"));
  if (op->f32 && compute_dt == PTERUN_DTYPE_F32 && in->dtype == PTERUN_DTYPE_F32 &&
      out->dtype == PTERUN_DTYPE_F32 && pk_same_layout(in, out)) {
    /* Same shape and dense layout (e.g. both channels-last): one flat row. */
    op->f32((const float*)in->data, (float*)out->data, out->numel, p);
    return finish(ctx, p);
  }
  pterun_iter_init(&it, out, &in, 1);
  inner = pk_iter_rows(&it);
  rows = out->numel / inner;
  so = it.strides[0][it.rank];
  si = it.strides[1][it.rank];
  if (op->f32 && compute_dt == PTERUN_DTYPE_F32 && in->dtype == PTERUN_DTYPE_F32 &&
      out->dtype == PTERUN_DTYPE_F32 && so == 1 && si == 1) {
    const float* X = (const float*)in->data;
    float* O = (float*)out->data;
    for (row = 0; row < rows; ++row, pterun_iter_next(&it))
      op->f32(X + it.off[1], O + it.off[0], inner, p);
    return finish(ctx, p);
  }
  if (pterun_dtype_is_float(compute_dt)) {
    double bx[PK_CHUNK], bo[PK_CHUNK];
    if (op->f64 == NULL) return pk_fail_dtype(ctx, "self", compute_dt, "is not supported");
    for (row = 0; row < rows; ++row, pterun_iter_next(&it)) {
      int64_t c;
      for (c = 0; c < inner; c += PK_CHUNK) {
        int64_t m = inner - c < PK_CHUNK ? inner - c : PK_CHUNK;
        pk_load_row_f64(bx, in, it.off[1] + c * si, si, m, compute_dt);
        op->f64(bx, bo, m, p);
        store_f64(out, it.off[0] + c * so, so, bo, m, compute_dt);
      }
    }
  } else {
    int64_t bx[PK_CHUNK], bo[PK_CHUNK];
    if (op->i64 == NULL) return pk_fail_dtype(ctx, "self", compute_dt, "is not supported");
    for (row = 0; row < rows; ++row, pterun_iter_next(&it)) {
      int64_t c;
      for (c = 0; c < inner; c += PK_CHUNK) {
        int64_t m = inner - c < PK_CHUNK ? inner - c : PK_CHUNK;
        pk_load_row_i64(bx, in, it.off[1] + c * si, si, m);
        op->i64(bx, bo, m, p);
        store_i64(out, it.off[0] + c * so, so, bo, m, compute_dt);
      }
    }
  }
  return finish(ctx, p);
}

/* ---- argument setup ---- */

pterun_status pk_check_out_cast(pterun_kernel_context* ctx, int from, const pterun_tensor* out) {
  if (!pk_is_real_dtype(out->dtype) || !pk_can_cast(from, out->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'out': result type %s can't be cast to the output dtype %s",
                           pterun_dtype_name(from), pterun_dtype_name(out->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status pk_check_out_float(pterun_kernel_context* ctx, const pterun_tensor* out) {
  if (!pterun_dtype_is_float(out->dtype))
    return pk_fail_dtype(ctx, "out", out->dtype, "is not a floating point dtype");
  return PTERUN_STATUS_OK;
}

pterun_status pk_bin_args_tt(pterun_kernel_context* ctx, pterun_value** args, size_t out_idx,
                             pterun_tensor** a, pterun_tensor** b, pterun_tensor** out,
                             int* common) {
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "other", b));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, out_idx, "out", out));
  PTERUN_TRY(pk_check_real(ctx, *a, "self"));
  PTERUN_TRY(pk_check_real(ctx, *b, "other"));
  PTERUN_TRY(pk_check_real(ctx, *out, "out"));
  *common = pterun_promote_types((*a)->dtype, (*b)->dtype);
  if (*common < 0)
    return PTERUN_FAIL_ARG(ctx, "dtypes %s and %s have no common type",
                           pterun_dtype_name((*a)->dtype), pterun_dtype_name((*b)->dtype));
  return pk_resize_broadcast(ctx, *a, *b, *out);
}

pterun_status pk_bin_args_ts(pterun_kernel_context* ctx, pterun_value** args, size_t out_idx,
                             pterun_tensor** a, pterun_scalar* s, pterun_tensor** out,
                             int* common) {
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", a));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 1, "other", s));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, out_idx, "out", out));
  PTERUN_TRY(pk_check_real(ctx, *a, "self"));
  PTERUN_TRY(pk_check_real(ctx, *out, "out"));
  *common = pk_promote_scalar((*a)->dtype, s);
  return pterun_out_resize_like(ctx, *out, "out", *a);
}
