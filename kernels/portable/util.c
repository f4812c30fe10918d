/* The helper layer of the portable kernels (see util.h). */
#include "kernels/portable/util.h"

#include "pterun/compute.h"

#include <inttypes.h>
#include <stdio.h>

/* ---- argument access ---------------------------------------------------- */

pterun_status pk_wrap_dim(pterun_kernel_context* ctx, int64_t dim, int64_t rank, int64_t* out) {
  int64_t r = rank > 0 ? rank : 1; /* a rank-0 tensor behaves like rank 1 for dims */
  if (dim < -r || dim >= r)
    return PTERUN_FAIL_ARG(ctx, "dim %" PRId64 " out of range for a tensor of rank %" PRId64, dim,
                           rank);
  *out = dim < 0 ? dim + r : dim;
  return PTERUN_STATUS_OK;
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

pterun_status pk_broadcast_shape(pterun_kernel_context* ctx, const pterun_tensor* a,
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
      return PTERUN_FAIL_ARG(ctx, "shapes %s and %s are not broadcastable", sa, sb);
    }
    sizes_out[r - 1 - k] = d;
  }
  *rank_out = r;
  return PTERUN_STATUS_OK;
}

int64_t pk_bcast_offset(const pterun_tensor* in, const pterun_tensor* out, int64_t n) {
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

int64_t pk_logical_offset(const pterun_tensor* t, int64_t n) {
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

bool pk_same_layout(const pterun_tensor* a, const pterun_tensor* b) {
  size_t k;
  if (a->rank != b->rank) return false;
  for (k = 0; k < a->rank; ++k) {
    if (a->sizes[k] != b->sizes[k]) return false;
    /* Size-1 dims never move the offset, so their strides don't matter. */
    if (a->sizes[k] > 1 && a->strides[k] != b->strides[k]) return false;
  }
  return true;
}

/* ---- promotion with scalars, casting ---------------------------------------- */

int pk_promote_scalar(int dt, const pterun_scalar* s) {
  if (s->is_float) return pterun_dtype_is_float(dt) ? dt : PTERUN_DTYPE_F32;
  if (!s->is_bool && dt == PTERUN_DTYPE_BOOL) return PTERUN_DTYPE_I64;
  return dt;
}

bool pk_can_cast(int from, int to) {
  if (pterun_dtype_is_float(from) && (pterun_dtype_is_int(to) || to == PTERUN_DTYPE_BOOL))
    return false;
  if (from != PTERUN_DTYPE_BOOL && to == PTERUN_DTYPE_BOOL) return false;
  return true;
}

bool pk_scalar_fits_category(const pterun_scalar* s, int dt) {
  if (s->is_float) return pterun_dtype_is_float(dt);
  if (!s->is_bool) return dt != PTERUN_DTYPE_BOOL;
  return true;
}

/* ---- strided views and copies ------------------------------------------------ */

void pk_view_of(const pterun_tensor* t, pk_view* v) {
  int d;
  v->rank = t->rank;
  for (d = 0; d < t->rank; ++d) {
    v->sizes[d] = t->sizes[d];
    v->strides[d] = t->strides[d];
  }
}

void pk_convert1(void* dst, int ddt, int64_t di, const void* src, int sdt, int64_t si) {
  if (pterun_dtype_is_float(ddt) || pterun_dtype_is_float(sdt))
    pterun_store_f64(dst, ddt, di, pterun_load_f64(src, sdt, si));
  else
    pterun_store_i64(dst, ddt, di, pterun_load_i64(src, sdt, si));
}

/* One inner run of n elements; d and s point at the first element. */
#define PK_COPY_RUN_T(T)                                                                           \
  do {                                                                                             \
    T* dp_ = (T*)d;                                                                                \
    const T* sp_ = (const T*)s;                                                                    \
    for (k = 0; k < n; ++k) dp_[k * dst_st] = sp_[k * src_st];                                     \
  } while (0)

static void copy_run(char* d, int ddt, int64_t dst_st, const char* s, int sdt, int64_t src_st,
                     int64_t n) {
  int64_t k;
  if (ddt == sdt) {
    size_t es = pterun_dtype_size(ddt);
    if (dst_st == 1 && src_st == 1) {
      if (d != s) memmove(d, s, (size_t)n * es);
      return;
    }
    switch (es) {
      case 1: PK_COPY_RUN_T(uint8_t); return;
      case 2: PK_COPY_RUN_T(uint16_t); return;
      case 4: PK_COPY_RUN_T(uint32_t); return;
      case 8: PK_COPY_RUN_T(uint64_t); return;
      default:
        for (k = 0; k < n; ++k)
          memmove(d + (size_t)(k * dst_st) * es, s + (size_t)(k * src_st) * es, es);
        return;
    }
  }
  if (ddt == PTERUN_DTYPE_F32 && sdt != PTERUN_DTYPE_F64 && pterun_dtype_is_float(sdt)) {
    for (k = 0; k < n; ++k) ((float*)d)[k * dst_st] = pterun_load_f32(s, sdt, k * src_st);
    return;
  }
  if (sdt == PTERUN_DTYPE_F32 && ddt != PTERUN_DTYPE_F64 && pterun_dtype_is_float(ddt)) {
    for (k = 0; k < n; ++k) pterun_store_f32(d, ddt, k * dst_st, ((const float*)s)[k * src_st]);
    return;
  }
  for (k = 0; k < n; ++k) pk_convert1(d, ddt, k * dst_st, s, sdt, k * src_st);
}
#undef PK_COPY_RUN_T

static int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

#define PK_TILE 32

/* Tiled copy for pk_copy_view: dims r-1 (destination-contiguous) and jc
 * (source-contiguous) are walked in PK_TILE x PK_TILE blocks; the other dims
 * are looped over outside. Same dtype on both sides (raw element moves). */
static void tile_transpose(char* dbase, const char* sbase, size_t es, int r, const int64_t* sz,
                           const int64_t* ds, const int64_t* ss, int jc) {
  int64_t idx[PTERUN_MAX_RANK], osz[PTERUN_MAX_RANK], ni = sz[r - 1], nj = sz[jc];
  int64_t sI = ss[r - 1], dJ = ds[jc], i0, j0, i, j;
  int d, k = 0, ord[PTERUN_MAX_RANK];
  for (d = 0; d + 1 < r; ++d)
    if (d != jc) {
      ord[k] = d;
      osz[k++] = sz[d];
    }
  for (d = 0; d < k; ++d) idx[d] = 0;
  for (;;) {
    int64_t dof = 0, sof = 0;
    for (d = 0; d < k; ++d) {
      dof += idx[d] * ds[ord[d]];
      sof += idx[d] * ss[ord[d]];
    }
    for (j0 = 0; j0 < nj; j0 += PK_TILE) {
      int64_t j1 = j0 + PK_TILE < nj ? j0 + PK_TILE : nj;
      for (i0 = 0; i0 < ni; i0 += PK_TILE) {
        int64_t i1 = i0 + PK_TILE < ni ? i0 + PK_TILE : ni;
#define PK_TILE_LOOP(T)                                                                            \
  {                                                                                                \
    T* dp = (T*)(void*)dbase + dof;                                                                \
    const T* sp = (const T*)(const void*)sbase + sof;                                              \
    for (j = j0; j < j1; ++j)                                                                      \
      for (i = i0; i < i1; ++i) dp[j * dJ + i] = sp[i * sI + j];                                   \
  }
        switch (es) {
          case 1: PK_TILE_LOOP(uint8_t) break;
          case 2: PK_TILE_LOOP(uint16_t) break;
          case 4: PK_TILE_LOOP(uint32_t) break;
          default: PK_TILE_LOOP(uint64_t) break;
        }
#undef PK_TILE_LOOP
      }
    }
    if (k == 0 || !pk_next_index(idx, osz, k)) break;
  }
}

void pk_copy_view(void* dst, int ddt, const pk_view* dv, int64_t doff, const void* src, int sdt,
                  const pk_view* sv, int64_t soff) {
  int64_t sz[PTERUN_MAX_RANK], ds[PTERUN_MAX_RANK], ss[PTERUN_MAX_RANK];
  int64_t idx[PTERUN_MAX_RANK];
  int r = 0, d, j;
  size_t des = pterun_dtype_size(ddt), ses = pterun_dtype_size(sdt);
  char* dbase;
  const char* sbase;

  /* Drop size-1 dims; nothing to do for an empty index space. */
  for (d = 0; d < sv->rank; ++d) {
    if (sv->sizes[d] == 0) return;
    if (sv->sizes[d] == 1) continue;
    sz[r] = sv->sizes[d];
    ds[r] = dv->strides[d];
    ss[r] = sv->strides[d];
    ++r;
  }
  /* Walk in destination memory order (largest |stride| outermost) so writes
   * are sequential; stable insertion sort keeps logical order on ties. */
  for (d = 1; d < r; ++d) {
    int64_t a = sz[d], b = ds[d], c = ss[d];
    for (j = d; j > 0 && abs64(ds[j - 1]) < abs64(b); --j) {
      sz[j] = sz[j - 1];
      ds[j] = ds[j - 1];
      ss[j] = ss[j - 1];
    }
    sz[j] = a;
    ds[j] = b;
    ss[j] = c;
  }
  /* Merge dims that are contiguous with their inner neighbour in both. */
  for (d = r - 2; d >= 0; --d) {
    if (ds[d] == ds[d + 1] * sz[d + 1] && ss[d] == ss[d + 1] * sz[d + 1]) {
      sz[d] *= sz[d + 1];
      ds[d] = ds[d + 1];
      ss[d] = ss[d + 1];
      for (j = d + 1; j + 1 < r; ++j) {
        sz[j] = sz[j + 1];
        ds[j] = ds[j + 1];
        ss[j] = ss[j + 1];
      }
      --r;
    }
  }
  dbase = (char*)dst + doff * (int64_t)des;
  sbase = (const char*)src + soff * (int64_t)ses;
  if (r == 0) {
    copy_run(dbase, ddt, 1, sbase, sdt, 1, 1);
    return;
  }
  if (r >= 2 && ddt == sdt && ds[r - 1] == 1 && ss[r - 1] != 1 &&
      (des == 1 || des == 2 || des == 4 || des == 8)) {
    /* A transpose: the source is contiguous along some other dim j. Copy in
     * square tiles so both sides stay in cache. */
    int jc = -1;
    for (d = 0; d + 1 < r; ++d)
      if (ss[d] == 1) jc = d;
    if (jc >= 0) {
      tile_transpose(dbase, sbase, des, r, sz, ds, ss, jc);
      return;
    }
  }
  for (d = 0; d < r; ++d) idx[d] = 0;
  for (;;) {
    int64_t dof = 0, sof = 0;
    for (d = 0; d + 1 < r; ++d) {
      dof += idx[d] * ds[d];
      sof += idx[d] * ss[d];
    }
    copy_run(dbase + dof * (int64_t)des, ddt, ds[r - 1], sbase + sof * (int64_t)ses, sdt, ss[r - 1],
             sz[r - 1]);
    if (r == 1 || !pk_next_index(idx, sz, r - 1)) break;
  }
}

void pk_copy_tensor(pterun_tensor* out, const pterun_tensor* in) {
  pk_view dv, sv;
  if (out->numel == 0) return;
  pk_view_of(out, &dv);
  pk_view_of(in, &sv);
  pk_copy_view(out->data, out->dtype, &dv, 0, in->data, in->dtype, &sv, 0);
}

void pk_fill(pterun_tensor* t, double dval, int64_t ival, int is_float) {
  int64_t k, n = t->numel;
  size_t es = pterun_dtype_size(t->dtype);
  if (n == 0) return;
  /* Write element 0, then replicate its bytes (layout does not matter). */
  if (is_float)
    pterun_store_f64(t->data, t->dtype, 0, dval);
  else
    pterun_store_i64(t->data, t->dtype, 0, ival);
  if (t->dtype == PTERUN_DTYPE_F32) {
    float v = ((float*)t->data)[0];
    for (k = 1; k < n; ++k) ((float*)t->data)[k] = v;
    return;
  }
  for (k = 1; k < n; ++k) memcpy((char*)t->data + (size_t)k * es, t->data, es);
}

pterun_status pk_check_real(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name) {
  if (!pk_is_real_dtype(t->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg '%s': dtype %s not supported", name,
                           pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status pk_check_float(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name) {
  if (!pterun_dtype_is_float(t->dtype))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg '%s': dtype %s not supported (floating dtypes only)", name,
                              pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status pk_check_same_dtype(pterun_kernel_context* ctx, const pterun_tensor* a,
                                  const char* an, const pterun_tensor* b, const char* bn) {
  if (a->dtype != b->dtype)
    return PTERUN_FAIL_ARG(ctx, "arg '%s' has dtype %s but '%s' has %s", an,
                           pterun_dtype_name(a->dtype), bn, pterun_dtype_name(b->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status pk_arg_int_n(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                           const char* name, int n, const int64_t* dflt, int64_t* out) {
  const int64_t* v;
  size_t len;
  int k;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i, name, &v, &len, 0));
  if (len == 0 && dflt != NULL) {
    for (k = 0; k < n; ++k) out[k] = dflt[k];
  } else if (len == 1) {
    for (k = 0; k < n; ++k) out[k] = v[0];
  } else if (len == (size_t)n) {
    for (k = 0; k < n; ++k) out[k] = v[k];
  } else {
    return PTERUN_FAIL_ARG(ctx, "arg '%s': expected %d values, got %zu", name, n, len);
  }
  return PTERUN_STATUS_OK;
}

pterun_status pk_arg_tensors(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, pterun_value** list, size_t* len) {
  size_t k;
  PTERUN_TRY(pterun_arg_tensor_list(ctx, args, i, name, list));
  for (k = 0; k < (*list)->u.tensors.len; ++k) {
    const pterun_tensor* t = pterun_value_list_tensor(*list, k);
    if (t == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                                "arg '%s': element %zu is not a tensor", name, k);
    PTERUN_TRY(pterun_check_data(ctx, t, name));
  }
  *len = (*list)->u.tensors.len;
  return PTERUN_STATUS_OK;
}

int pk_is_channels_last(const pterun_tensor* t) {
  int d;
  if (t->rank < 3) return 0;
  if (t->dim_order[0] != 0 || t->dim_order[t->rank - 1] != 1) return 0;
  for (d = 1; d + 1 < t->rank; ++d)
    if (t->dim_order[d] != d + 1) return 0;
  return 1;
}

pterun_status pk_bcast_view(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            int rank, const int64_t* sizes, pk_view* v) {
  int d;
  if (t->rank > rank)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': rank %d cannot broadcast to rank %d", name, (int)t->rank,
                           rank);
  v->rank = rank;
  for (d = 0; d < rank; ++d) {
    int td = d - (rank - t->rank);
    v->sizes[d] = sizes[d];
    if (td < 0) {
      v->strides[d] = 0;
    } else if (t->sizes[td] == sizes[d]) {
      v->strides[d] = t->sizes[td] == 1 ? 0 : t->strides[td];
    } else if (t->sizes[td] == 1) {
      v->strides[d] = 0;
    } else {
      return PTERUN_FAIL_ARG(ctx,
                             "arg '%s': size %" PRId64 " of dim %d cannot broadcast to %" PRId64,
                             name, t->sizes[td], td, sizes[d]);
    }
  }
  return PTERUN_STATUS_OK;
}

void pk_view_contiguous(pk_view* v, int rank, const int64_t* sizes) {
  int64_t st = 1;
  int d;
  v->rank = rank;
  for (d = rank - 1; d >= 0; --d) {
    v->sizes[d] = sizes[d];
    v->strides[d] = st;
    st *= sizes[d] ? sizes[d] : 1;
  }
}

void pk_copy_reshape(pterun_tensor* out, const pterun_tensor* in) {
  pk_view dv, sv;
  if (out->numel == 0 || in->numel != out->numel) return;
  /* A contiguous tensor's memory order is its logical order, so it can be
   * re-described with the other tensor's sizes. */
  if (pterun_tensor_is_contiguous(in)) {
    pk_view_of(out, &dv);
    pk_view_contiguous(&sv, out->rank, out->sizes);
  } else if (pterun_tensor_is_contiguous(out)) {
    pk_view_contiguous(&dv, in->rank, in->sizes);
    pk_view_of(in, &sv);
  } else {
    /* Neither is row-major: walk both logical indices together. */
    int64_t ii[PTERUN_MAX_RANK] = {0}, oi[PTERUN_MAX_RANK] = {0}, n;
    for (n = 0; n < out->numel; ++n) {
      pk_convert1(out->data, out->dtype, pk_offset(out, oi), in->data, in->dtype,
                  pk_offset(in, ii));
      pk_next_index(oi, out->sizes, out->rank);
      pk_next_index(ii, in->sizes, in->rank);
    }
    return;
  }
  pk_copy_view(out->data, out->dtype, &dv, 0, in->data, in->dtype, &sv, 0);
}

/* ATen MemoryFormat values accepted by the layout-changing copies. The
 * layout itself is whatever out's dim order says. */
pterun_status pk_check_memory_format_arg(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t i) {
  int64_t mf;
  int has;
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, i, "memory_format", &mf, &has));
  if (has && (mf < 0 || mf > 3))
    return PTERUN_FAIL_ARG(ctx, "arg 'memory_format': unknown value %" PRId64, mf);
  return PTERUN_STATUS_OK;
}

/* A `int[]? dim_order` argument: when given it must be a permutation that
 * equals out's dim order (out was planned with it). */
pterun_status pk_check_dim_order_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                     const pterun_tensor* out) {
  const int64_t* order;
  size_t len, k;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i, "dim_order", &order, &len, 1));
  if (order == NULL) return PTERUN_STATUS_OK;
  if (len != out->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'dim_order': %zu entries for a rank-%d out", len,
                           (int)out->rank);
  for (k = 0; k < len; ++k)
    if (order[k] != out->dim_order[k])
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'dim_order': entry %zu is %" PRId64 " but out's dim order has %d",
                             k, order[k], (int)out->dim_order[k]);
  return PTERUN_STATUS_OK;
}

pterun_status pk_resize_to_size_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    pterun_tensor* out) {
  const int64_t* size;
  size_t len, k;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i, "size", &size, &len, 0));
  if (len > PTERUN_MAX_RANK) return PTERUN_FAIL_ARG(ctx, "arg 'size': too many dims");
  for (k = 0; k < len; ++k)
    if (size[k] < 0) return PTERUN_FAIL_ARG(ctx, "arg 'size': negative size %" PRId64, size[k]);
  return pterun_out_resize(ctx, out, "out", len, size);
}

int pk_try_vmath(pterun_kernel_context* ctx, int vop, const pterun_tensor* in, pterun_tensor* out) {
  if (in->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || !pk_same_layout(in, out) ||
      in->nbytes != out->nbytes)
    return 0;
  return pterun_compute_f32_unary(pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx),
                                  vop, (const float*)in->data, (float*)out->data,
                                  in->nbytes / sizeof(float)) == 0;
}
