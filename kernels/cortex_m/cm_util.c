/* Helpers shared by the Cortex-M kernels (see cm_util.h). */
#include "kernels/cortex_m/cm_util.h"

#include <inttypes.h>
#include <string.h>

pterun_status cm_check_requant(pterun_kernel_context* ctx, const char* name, int64_t multiplier,
                               int64_t shift) {
  if (multiplier < INT32_MIN || multiplier > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': multiplier %" PRId64 " does not fit int32", name,
                           multiplier);
  if (shift < -31 || shift > 31)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': shift %" PRId64 " outside [-31, 31]", name, shift);
  return PTERUN_STATUS_OK;
}

pterun_status cm_check_i32(pterun_kernel_context* ctx, const char* name, int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': %" PRId64 " does not fit int32", name, v);
  return PTERUN_STATUS_OK;
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
  if (n != 1 && n != 2)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': expected 1 or 2 values, got %zu", name, n);
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
