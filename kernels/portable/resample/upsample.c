/* 2-D resampling: upsample_nearest2d.vec_out and upsample_bilinear2d.vec_out
 * on [N, C, H, W] inputs in any dim order. Index arithmetic follows ATen
 * (float scales for nearest, area_pixel_compute_source_index for bilinear). */
#include <inttypes.h>

#include "kernels/portable/util.h"

typedef struct up_geom {
  int64_t n, c, ih, iw, oh, ow;
  int has_scale;
  double sh, sw; /* user scale factors when has_scale */
} up_geom;

/* Output size from output_size (int[]?) or scale_factors (float[]?). */
static pterun_status up_setup(pterun_kernel_context* ctx, pterun_value** args, size_t osz_ix,
                              size_t scale_ix, const pterun_tensor* in, pterun_tensor* out,
                              up_geom* g) {
  const int64_t* osz;
  size_t len;
  const pterun_value* sv = args[scale_ix];
  int64_t sizes[4];
  if (in->rank != 4)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': expected rank 4, got %d", (int)in->rank);
  g->n = in->sizes[0], g->c = in->sizes[1], g->ih = in->sizes[2], g->iw = in->sizes[3];
  PTERUN_TRY(pterun_arg_int_list(ctx, args, osz_ix, "output_size", &osz, &len, 1));
  g->has_scale = sv != NULL && sv->tag == PTERUN_VALUE_LIST_DOUBLE;
  if (sv != NULL && sv->tag != PTERUN_VALUE_NONE && !g->has_scale)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arg 'scale_factors': expected float[] or None");
  if ((osz != NULL) == g->has_scale)
    return PTERUN_FAIL_ARG(ctx, "exactly one of output_size and scale_factors must be given");
  if (osz != NULL) {
    if (len != 2 || osz[0] < 0 || osz[1] < 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'output_size': expected 2 non-negative sizes");
    g->oh = osz[0], g->ow = osz[1];
  } else {
    if (sv->u.doubles.len != 2 || !(sv->u.doubles.items[0] > 0) || !(sv->u.doubles.items[1] > 0))
      return PTERUN_FAIL_ARG(ctx, "arg 'scale_factors': expected 2 positive values");
    g->sh = sv->u.doubles.items[0], g->sw = sv->u.doubles.items[1];
    g->oh = (int64_t)floor((double)g->ih * g->sh);
    g->ow = (int64_t)floor((double)g->iw * g->sw);
  }
  if (g->oh <= 0 || g->ow <= 0 || g->ih <= 0 || g->iw <= 0)
    return PTERUN_FAIL_ARG(
        ctx, "input %" PRId64 "x%" PRId64 " / output %" PRId64 "x%" PRId64 " must be non-empty",
        g->ih, g->iw, g->oh, g->ow);
  sizes[0] = g->n, sizes[1] = g->c, sizes[2] = g->oh, sizes[3] = g->ow;
  return pterun_out_resize(ctx, out, "out", 4, sizes);
}

/* in/out ratio used to map output to input coordinates. */
static double up_scale(int64_t in, int64_t out, int has_scale, double user, int align_corners) {
  if (align_corners) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
  return has_scale ? 1.0 / user : (double)in / (double)out;
}

static int64_t nearest_index(int64_t o, int64_t in, int64_t out, float scale) {
  int64_t i;
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  i = (int64_t)floorf((float)o * scale);
  return i < in - 1 ? i : in - 1;
}

/* aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size,
 *   float[]? scale_factors, *, Tensor(a!) out) */
pterun_status pk_upsample_nearest2d_vec_out(pterun_kernel_context* ctx, pterun_value** args,
                                            size_t nargs) {
  pterun_tensor *in, *out;
  up_geom g;
  int64_t n, c, oh, ow;
  float sh, sw;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(up_setup(ctx, args, 1, 2, in, out, &g));
  sh = (float)up_scale(g.ih, g.oh, g.has_scale, g.sh, 0);
  sw = (float)up_scale(g.iw, g.ow, g.has_scale, g.sw, 0);
  for (n = 0; n < g.n; ++n)
    for (c = 0; c < g.c; ++c)
      for (oh = 0; oh < g.oh; ++oh) {
        int64_t ih = nearest_index(oh, g.ih, g.oh, sh);
        for (ow = 0; ow < g.ow; ++ow) {
          int64_t iw = nearest_index(ow, g.iw, g.ow, sw);
          int64_t so =
              n * in->strides[0] + c * in->strides[1] + ih * in->strides[2] + iw * in->strides[3];
          int64_t doff = n * out->strides[0] + c * out->strides[1] + oh * out->strides[2] +
                         ow * out->strides[3];
          memcpy(pk_ptr(out, doff), pk_ptr(in, so), pterun_dtype_size(in->dtype));
        }
      }
  return PTERUN_STATUS_OK;
}

/* Source coordinate of output index o (ATen's area_pixel_compute_source_index). */
static void linear_coeffs(int64_t o, int64_t in, double scale, int align_corners, int64_t* i0,
                          int64_t* i1, double* l1) {
  double src = align_corners ? scale * (double)o : scale * ((double)o + 0.5) - 0.5;
  if (src < 0) src = 0;
  *i0 = (int64_t)src;
  if (*i0 > in - 1) *i0 = in - 1;
  *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
  *l1 = src - (double)*i0;
  if (*l1 > 1.0) *l1 = 1.0;
}

/* aten::upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size, bool align_corners,
 *   float[]? scale_factors, *, Tensor(a!) out) */
pterun_status pk_upsample_bilinear2d_vec_out(pterun_kernel_context* ctx, pterun_value** args,
                                             size_t nargs) {
  pterun_tensor *in, *out;
  up_geom g;
  bool align;
  int64_t n, c, oh, ow;
  double sh, sw;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "align_corners", &align));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(up_setup(ctx, args, 1, 3, in, out, &g));
  sh = up_scale(g.ih, g.oh, g.has_scale, g.sh, align);
  sw = up_scale(g.iw, g.ow, g.has_scale, g.sw, align);
  for (oh = 0; oh < g.oh; ++oh) {
    int64_t h0, h1;
    double lh;
    linear_coeffs(oh, g.ih, sh, align, &h0, &h1, &lh);
    for (ow = 0; ow < g.ow; ++ow) {
      int64_t w0, w1;
      double lw;
      linear_coeffs(ow, g.iw, sw, align, &w0, &w1, &lw);
      for (n = 0; n < g.n; ++n)
        for (c = 0; c < g.c; ++c) {
          int64_t b = n * in->strides[0] + c * in->strides[1];
          const int64_t* st = in->strides;
          double v00 = pterun_load_f64(in->data, in->dtype, b + h0 * st[2] + w0 * st[3]);
          double v01 = pterun_load_f64(in->data, in->dtype, b + h0 * st[2] + w1 * st[3]);
          double v10 = pterun_load_f64(in->data, in->dtype, b + h1 * st[2] + w0 * st[3]);
          double v11 = pterun_load_f64(in->data, in->dtype, b + h1 * st[2] + w1 * st[3]);
          double v = (1 - lh) * ((1 - lw) * v00 + lw * v01) + lh * ((1 - lw) * v10 + lw * v11);
          pterun_store_f64(out->data, out->dtype,
                           n * out->strides[0] + c * out->strides[1] + oh * out->strides[2] +
                               ow * out->strides[3],
                           v);
        }
    }
  }
  return PTERUN_STATUS_OK;
}
