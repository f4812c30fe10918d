/* Helpers shared by the Cortex-M kernels (see cm_util.h). */
#include "kernels/cortex_m/cm_util.h"

#include <inttypes.h>
#include <string.h>

pterun_status cm_check_requant(pterun_kernel_context* ctx, const char* name, int64_t multiplier,
                               int64_t shift) {
  if (multiplier < INT32_MIN || multiplier > INT32_MAX)
    return CM_FAIL(ctx, "arg '%s': multiplier %" PRId64 " does not fit int32", name, multiplier);
  if (shift < -31 || shift > 31)
    return CM_FAIL(ctx, "arg '%s': shift %" PRId64 " outside [-31, 31]", name, shift);
  return PTERUN_STATUS_OK;
}

pterun_status cm_check_i32(pterun_kernel_context* ctx, const char* name, int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX)
    return CM_FAIL(ctx, "arg '%s': %" PRId64 " does not fit int32", name, v);
  return PTERUN_STATUS_OK;
}

pterun_status cm_check_dtype(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name,
                             int dtype) {
  if (t->dtype != dtype)
    return CM_FAIL(ctx, "arg '%s': expected dtype %s, got %s", name, pterun_dtype_name(dtype),
                   pterun_dtype_name(t->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status cm_check_data(pterun_kernel_context* ctx, const pterun_tensor* t, const char* name) {
  if (t->numel > 0 && t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_STATE, "arg '%s': tensor has no data",
                              name);
  if (t->numel > 0 && t->nbytes < (size_t)t->numel * pterun_dtype_size(t->dtype))
    return CM_FAIL(ctx, "arg '%s': tensor storage smaller than its shape", name);
  return PTERUN_STATUS_OK;
}

pterun_status cm_check_contig(pterun_kernel_context* ctx, const pterun_tensor* t,
                              const char* name) {
  if (!pterun_tensor_is_contiguous(t))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg '%s': only the default (row-major) dim order is supported",
                              name);
  return cm_check_data(ctx, t, name);
}

int cm_same_layout(const pterun_tensor* a, const pterun_tensor* b) {
  int k;
  if (a->rank != b->rank) return 0;
  for (k = 0; k < a->rank; ++k)
    if (a->sizes[k] != b->sizes[k] || a->dim_order[k] != b->dim_order[k]) return 0;
  return 1;
}

pterun_status cm_arg_pair(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                          const char* name, int64_t out[2]) {
  const int64_t* v;
  size_t n;
  PTERUN_TRY(pterun_arg_int_list(ctx, args, i, name, &v, &n, 0));
  if (n != 1 && n != 2) return CM_FAIL(ctx, "arg '%s': expected 1 or 2 values, got %zu", name, n);
  out[0] = v[0];
  out[1] = v[n - 1];
  return PTERUN_STATUS_OK;
}

int cm_broadcast_shape(const pterun_tensor* a, const pterun_tensor* b, int64_t* sizes,
                       size_t* rank) {
  int r = a->rank > b->rank ? a->rank : b->rank, d;
  for (d = 0; d < r; ++d) {
    int ja = d - (r - a->rank), jb = d - (r - b->rank);
    int64_t sa = ja >= 0 ? a->sizes[ja] : 1, sb = jb >= 0 ? b->sizes[jb] : 1;
    if (sa != sb && sa != 1 && sb != 1) return 0;
    sizes[d] = sa == 1 ? sb : sa;
  }
  *rank = (size_t)r;
  return 1;
}

static int bcast_strides(const pterun_tensor* out, const pterun_tensor* in, int64_t* st) {
  int d;
  if (in->rank > out->rank) return 0;
  for (d = 0; d < out->rank; ++d) {
    int j = d - (out->rank - in->rank);
    if (j < 0 || (in->sizes[j] == 1 && out->sizes[d] != 1)) {
      st[d] = 0;
    } else {
      if (in->sizes[j] != out->sizes[d]) return 0;
      st[d] = in->strides[j];
    }
  }
  return 1;
}

int cm_iter_init(cm_iter* it, const pterun_tensor* out, const pterun_tensor* a,
                 const pterun_tensor* b) {
  int d;
  memset(it, 0, sizeof(*it));
  it->rank = out->rank;
  it->nin = b != NULL ? 2 : 1;
  for (d = 0; d < out->rank; ++d) {
    it->sizes[d] = out->sizes[d];
    it->st[0][d] = out->strides[d];
  }
  if (!bcast_strides(out, a, it->st[1])) return 0;
  if (b != NULL && !bcast_strides(out, b, it->st[2])) return 0;
  return 1;
}

void cm_iter_next(cm_iter* it) {
  int d, k;
  for (d = it->rank - 1; d >= 0; --d) {
    for (k = 0; k <= it->nin; ++k) it->off[k] += it->st[k][d];
    if (++it->idx[d] < it->sizes[d]) return;
    for (k = 0; k <= it->nin; ++k) it->off[k] -= it->st[k][d] * it->sizes[d];
    it->idx[d] = 0;
  }
}

void cm_img_view(const pterun_tensor* t, int nhwc, cm_img* v) {
  int ic = nhwc ? 3 : 1, ih = nhwc ? 1 : 2, iw = nhwc ? 2 : 3;
  v->n = t->sizes[0];
  v->c = t->sizes[ic];
  v->h = t->sizes[ih];
  v->w = t->sizes[iw];
  v->sn = t->strides[0];
  v->sc = t->strides[ic];
  v->sh = t->strides[ih];
  v->sw = t->strides[iw];
}

void cm_img_sizes(int nhwc, int64_t n, int64_t c, int64_t h, int64_t w, int64_t sizes[4]) {
  sizes[0] = n;
  sizes[1] = nhwc ? h : c;
  sizes[2] = nhwc ? w : h;
  sizes[3] = nhwc ? c : w;
}
