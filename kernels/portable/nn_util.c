/* Private helpers for the nn/shape kernels (see nn_util.h). */
#include "kernels/portable/nn_util.h"

#include <inttypes.h>

void nn_view_of(const pterun_tensor* t, nn_view* v) {
  int d;
  v->rank = t->rank;
  for (d = 0; d < t->rank; ++d) {
    v->sizes[d] = t->sizes[d];
    v->strides[d] = t->strides[d];
  }
}

void nn_convert1(void* dst, int ddt, int64_t di, const void* src, int sdt, int64_t si) {
  if (pt_is_float_dtype(ddt) || pt_is_float_dtype(sdt))
    pt_store_f64(dst, ddt, di, pt_load_f64(src, sdt, si));
  else
    pt_store_i64(dst, ddt, di, pt_load_i64(src, sdt, si));
}

/* One inner run of n elements; d and s point at the first element. */
#define NN_COPY_RUN_T(T)                                                                           \
  do {                                                                                             \
    T* dp_ = (T*)d;                                                                                \
    const T* sp_ = (const T*)s;                                                                    \
    for (k = 0; k < n; ++k) dp_[k * dst_st] = sp_[k * src_st];                                     \
  } while (0)

static void copy_run(char* d, int ddt, int64_t dst_st, const char* s, int sdt, int64_t src_st,
                     int64_t n) {
  int64_t k;
  if (ddt == sdt) {
    size_t es = nn_esize(ddt);
    if (dst_st == 1 && src_st == 1) {
      if (d != s) memmove(d, s, (size_t)n * es);
      return;
    }
    switch (es) {
      case 1: NN_COPY_RUN_T(uint8_t); return;
      case 2: NN_COPY_RUN_T(uint16_t); return;
      case 4: NN_COPY_RUN_T(uint32_t); return;
      case 8: NN_COPY_RUN_T(uint64_t); return;
      default:
        for (k = 0; k < n; ++k)
          memmove(d + (size_t)(k * dst_st) * es, s + (size_t)(k * src_st) * es, es);
        return;
    }
  }
  if (ddt == PTERUN_DTYPE_F32 && sdt != PTERUN_DTYPE_F64 && pt_is_float_dtype(sdt)) {
    for (k = 0; k < n; ++k) ((float*)d)[k * dst_st] = nn_load_f32(s, sdt, k * src_st);
    return;
  }
  if (sdt == PTERUN_DTYPE_F32 && ddt != PTERUN_DTYPE_F64 && pt_is_float_dtype(ddt)) {
    for (k = 0; k < n; ++k) nn_store_f32(d, ddt, k * dst_st, ((const float*)s)[k * src_st]);
    return;
  }
  for (k = 0; k < n; ++k) nn_convert1(d, ddt, k * dst_st, s, sdt, k * src_st);
}
#undef NN_COPY_RUN_T

static int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

#define NN_TILE 32

/* Tiled copy for nn_copy_view: dims r-1 (destination-contiguous) and jc
 * (source-contiguous) are walked in NN_TILE x NN_TILE blocks; the other dims
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
    for (j0 = 0; j0 < nj; j0 += NN_TILE) {
      int64_t j1 = j0 + NN_TILE < nj ? j0 + NN_TILE : nj;
      for (i0 = 0; i0 < ni; i0 += NN_TILE) {
        int64_t i1 = i0 + NN_TILE < ni ? i0 + NN_TILE : ni;
#define NN_TILE_LOOP(T)                                                                            \
  {                                                                                                \
    T* dp = (T*)(void*)dbase + dof;                                                                \
    const T* sp = (const T*)(const void*)sbase + sof;                                              \
    for (j = j0; j < j1; ++j)                                                                      \
      for (i = i0; i < i1; ++i) dp[j * dJ + i] = sp[i * sI + j];                                   \
  }
        switch (es) {
          case 1: NN_TILE_LOOP(uint8_t) break;
          case 2: NN_TILE_LOOP(uint16_t) break;
          case 4: NN_TILE_LOOP(uint32_t) break;
          default: NN_TILE_LOOP(uint64_t) break;
        }
#undef NN_TILE_LOOP
      }
    }
    if (k == 0 || !nn_next_index(idx, osz, k)) break;
  }
}

void nn_copy_view(void* dst, int ddt, const nn_view* dv, int64_t doff, const void* src, int sdt,
                  const nn_view* sv, int64_t soff) {
  int64_t sz[PTERUN_MAX_RANK], ds[PTERUN_MAX_RANK], ss[PTERUN_MAX_RANK];
  int64_t idx[PTERUN_MAX_RANK];
  int r = 0, d, j;
  size_t des = nn_esize(ddt), ses = nn_esize(sdt);
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
    if (r == 1 || !nn_next_index(idx, sz, r - 1)) break;
  }
}

void nn_copy_tensor(pterun_tensor* out, const pterun_tensor* in) {
  nn_view dv, sv;
  if (out->numel == 0) return;
  nn_view_of(out, &dv);
  nn_view_of(in, &sv);
  nn_copy_view(out->data, out->dtype, &dv, 0, in->data, in->dtype, &sv, 0);
}

void nn_fill(pterun_tensor* t, double dval, int64_t ival, int is_float) {
  int64_t k, n = t->numel;
  size_t es = nn_esize(t->dtype);
  if (n == 0) return;
  /* Write element 0, then replicate its bytes (layout does not matter). */
  if (is_float)
    pt_store_f64(t->data, t->dtype, 0, dval);
  else
    pt_store_i64(t->data, t->dtype, 0, ival);
  if (t->dtype == PTERUN_DTYPE_F32) {
    float v = ((float*)t->data)[0];
    for (k = 1; k < n; ++k) ((float*)t->data)[k] = v;
    return;
  }
  for (k = 1; k < n; ++k) memcpy((char*)t->data + (size_t)k * es, t->data, es);
}

pterun_status nn_check_real(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name) {
  if (!pt_is_real_dtype(t->dtype))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "arg '%s': dtype %s not supported",
                              name, pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status nn_check_float(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name) {
  if (!pt_is_float_dtype(t->dtype))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg '%s': dtype %s not supported (floating dtypes only)", name,
                              pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status nn_check_same_dtype(pterun_kernel_context* ctx, const pterun_tensor* a,
                                  const char* an, const pterun_tensor* b, const char* bn) {
  if (a->dtype != b->dtype)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s' has dtype %s but '%s' has %s", an,
                              pterun_dtype_name(a->dtype), bn, pterun_dtype_name(b->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status nn_check_rank(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            int rank) {
  if (t->rank != rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': expected rank %d, got %d", name, rank, (int)t->rank);
  return PTERUN_STATUS_OK;
}

pterun_status nn_check_data(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name) {
  if (t->numel > 0 && t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "arg '%s': tensor has no data",
                              name);
  return PTERUN_STATUS_OK;
}

pterun_status nn_arg_int_n(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                           const char* name, int n, const int64_t* dflt, int64_t* out) {
  const int64_t* v;
  size_t len;
  int k;
  PT_TRY(pterun_arg_int_list(ctx, args, i, name, &v, &len, 0));
  if (len == 0 && dflt != NULL) {
    for (k = 0; k < n; ++k) out[k] = dflt[k];
  } else if (len == 1) {
    for (k = 0; k < n; ++k) out[k] = v[0];
  } else if (len == (size_t)n) {
    for (k = 0; k < n; ++k) out[k] = v[k];
  } else {
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': expected %d values, got %zu", name, n, len);
  }
  return PTERUN_STATUS_OK;
}

pterun_status nn_arg_tensors(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                             const char* name, pterun_value** list, size_t* len) {
  size_t k;
  PT_TRY(pterun_arg_tensor_list(ctx, args, i, name, list));
  for (k = 0; k < (*list)->u.tensors.len; ++k) {
    const pterun_tensor* t = pterun_value_list_tensor(*list, k);
    if (t == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                                "arg '%s': element %zu is not a tensor", name, k);
    PT_TRY(nn_check_data(ctx, t, name));
  }
  *len = (*list)->u.tensors.len;
  return PTERUN_STATUS_OK;
}

int nn_is_channels_last(const pterun_tensor* t) {
  int d;
  if (t->rank < 3) return 0;
  if (t->dim_order[0] != 0 || t->dim_order[t->rank - 1] != 1) return 0;
  for (d = 1; d + 1 < t->rank; ++d)
    if (t->dim_order[d] != d + 1) return 0;
  return 1;
}

pterun_status nn_bcast_view(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                            int rank, const int64_t* sizes, nn_view* v) {
  int d;
  if (t->rank > rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "arg '%s': rank %d cannot broadcast to rank %d", name, (int)t->rank,
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
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                                "arg '%s': size %" PRId64 " of dim %d cannot broadcast to %" PRId64,
                                name, t->sizes[td], td, sizes[d]);
    }
  }
  return PTERUN_STATUS_OK;
}

void nn_view_contiguous(nn_view* v, int rank, const int64_t* sizes) {
  int64_t st = 1;
  int d;
  v->rank = rank;
  for (d = rank - 1; d >= 0; --d) {
    v->sizes[d] = sizes[d];
    v->strides[d] = st;
    st *= sizes[d] ? sizes[d] : 1;
  }
}

void nn_copy_reshape(pterun_tensor* out, const pterun_tensor* in) {
  nn_view dv, sv;
  if (out->numel == 0 || in->numel != out->numel) return;
  /* A contiguous tensor's memory order is its logical order, so it can be
   * re-described with the other tensor's sizes. */
  if (pterun_tensor_is_contiguous(in)) {
    nn_view_of(out, &dv);
    nn_view_contiguous(&sv, out->rank, out->sizes);
  } else if (pterun_tensor_is_contiguous(out)) {
    nn_view_contiguous(&dv, in->rank, in->sizes);
    nn_view_of(in, &sv);
  } else {
    /* Neither is row-major: walk both logical indices together. */
    int64_t ii[PTERUN_MAX_RANK] = {0}, oi[PTERUN_MAX_RANK] = {0}, n;
    for (n = 0; n < out->numel; ++n) {
      nn_convert1(out->data, out->dtype, nn_offset(out, oi), in->data, in->dtype,
                  nn_offset(in, ii));
      nn_next_index(oi, out->sizes, out->rank);
      nn_next_index(ii, in->sizes, in->rank);
    }
    return;
  }
  nn_copy_view(out->data, out->dtype, &dv, 0, in->data, in->dtype, &sv, 0);
}

pterun_status nn_resize_to_size_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                    pterun_tensor* out) {
  const int64_t* size;
  size_t len, k;
  PT_TRY(pterun_arg_int_list(ctx, args, i, "size", &size, &len, 0));
  if (len > PTERUN_MAX_RANK)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "arg 'size': too many dims");
  for (k = 0; k < len; ++k)
    if (size[k] < 0)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                                "arg 'size': negative size %" PRId64, size[k]);
  return pt_resize(ctx, out, len, size);
}
