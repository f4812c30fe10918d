/* Resampling with arbitrary coordinates or filters: grid_sampler_2d.out and
 * _upsample_bilinear2d_aa.out, on [N, C, H, W] inputs in any dim order.
 * Coordinate arithmetic follows ATen (grid_sampler_compute_source_index,
 * the anti-aliased separable filter of upsample); double precision. */
#include <inttypes.h>

#include "kernels/portable/util.h"

/* ---- grid_sampler_2d ---------------------------------------------------------- */

enum { GS_BILINEAR = 0, GS_NEAREST = 1, GS_BICUBIC = 2 };
enum { GS_ZEROS = 0, GS_BORDER = 1, GS_REFLECTION = 2 };

/* True when c is NaN or so far outside [0, size) that no tap can touch the
 * input (also keeps later float-to-int conversions in range). */
static int gs_far(double c, int64_t size) {
  return !(c > -4.0 && c < (double)size + 3.0);
}

static double gs_unnormalize(double c, int64_t size, int align) {
  return align ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * (double)size - 1) / 2;
}

static double gs_clip(double c, int64_t size) {
  double hi = (double)(size - 1);
  return c < 0 ? 0 : c > hi ? hi : c;
}

/* Reflects c into [twice_low/2, twice_high/2]. */
static double gs_reflect(double c, int64_t twice_low, int64_t twice_high) {
  double mn, span, extra;
  int64_t flips;
  if (twice_low == twice_high) return 0;
  mn = (double)twice_low / 2;
  span = (double)(twice_high - twice_low) / 2;
  c = fabs(c - mn);
  extra = fmod(c, span);
  flips = (int64_t)floor(c / span);
  return flips % 2 == 0 ? extra + mn : span - extra + mn;
}

/* Applies the padding mode to an unnormalized coordinate. */
static double gs_pad(double c, int64_t size, int pad, int align) {
  if (pad == GS_BORDER) {
    c = gs_clip(c, size);
  } else if (pad == GS_REFLECTION) {
    c = align ? gs_reflect(c, 0, 2 * (size - 1)) : gs_reflect(c, -1, 2 * size - 1);
    c = gs_clip(c, size);
  }
  return c;
}

typedef struct gs_plane {
  const pterun_tensor* in;
  int64_t base, ih, iw, sh, sw;
} gs_plane;

/* Input value at integer (y, x), 0 outside. */
static double gs_at(const gs_plane* p, int64_t y, int64_t x) {
  if (y < 0 || y >= p->ih || x < 0 || x >= p->iw) return 0.0;
  return pterun_load_f64(p->in->data, p->in->dtype, p->base + y * p->sh + x * p->sw);
}

static void cubic_coeffs(double t, double* w) {
  const double A = -0.75;
  double x1 = t + 1, x2 = 1 - t, x3 = 2 - t;
  w[0] = ((A * x1 - 5 * A) * x1 + 8 * A) * x1 - 4 * A;
  w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  w[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
  w[3] = ((A * x3 - 5 * A) * x3 + 8 * A) * x3 - 4 * A;
}

/* aten::grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode,
 *   int padding_mode, bool align_corners, *, Tensor(a!) out) -> Tensor(a!) */
pterun_status pk_grid_sampler_2d_out(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  pterun_tensor *in, *grid, *out;
  int64_t mode, pad, sizes[4], n, c, oh, ow;
  bool align;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "grid", &grid));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "interpolation_mode", &mode));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "padding_mode", &pad));
  PTERUN_TRY(pk_arg_bool(ctx, args, 4, "align_corners", &align));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", grid, "grid"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", out, "out"));
  PTERUN_TRY(pterun_check_rank(ctx, in, "input", 4));
  PTERUN_TRY(pterun_check_rank(ctx, grid, "grid", 4));
  if (mode < 0 || mode > 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'interpolation_mode': %" PRId64 " is not 0, 1 or 2", mode);
  if (pad < 0 || pad > 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'padding_mode': %" PRId64 " is not 0, 1 or 2", pad);
  if (grid->sizes[0] != in->sizes[0] || grid->sizes[3] != 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'grid': expected [%" PRId64 ", H, W, 2]", in->sizes[0]);
  if (in->sizes[2] <= 0 || in->sizes[3] <= 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': empty spatial dims");
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_check_data(ctx, grid, "grid"));
  sizes[0] = in->sizes[0], sizes[1] = in->sizes[1];
  sizes[2] = grid->sizes[1], sizes[3] = grid->sizes[2];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, sizes));
  for (n = 0; n < sizes[0]; ++n)
    for (oh = 0; oh < sizes[2]; ++oh)
      for (ow = 0; ow < sizes[3]; ++ow) {
        int64_t go = n * grid->strides[0] + oh * grid->strides[1] + ow * grid->strides[2];
        double gx = pterun_load_f64(grid->data, grid->dtype, go);
        double gy = pterun_load_f64(grid->data, grid->dtype, go + grid->strides[3]);
        double x = gs_unnormalize(gx, in->sizes[3], align);
        double y = gs_unnormalize(gy, in->sizes[2], align);
        if (mode != GS_BICUBIC) {
          x = gs_pad(x, in->sizes[3], (int)pad, align);
          y = gs_pad(y, in->sizes[2], (int)pad, align);
        }
        for (c = 0; c < sizes[1]; ++c) {
          gs_plane p;
          double v;
          p.in = in;
          p.base = n * in->strides[0] + c * in->strides[1];
          p.ih = in->sizes[2], p.iw = in->sizes[3];
          p.sh = in->strides[2], p.sw = in->strides[3];
          if (mode == GS_BILINEAR) {
            double x0 = floor(x), y0 = floor(y), tx = x - x0, ty = y - y0;
            int64_t xi = (int64_t)x0, yi = (int64_t)y0;
            if (gs_far(x, p.iw) || gs_far(y, p.ih)) {
              v = 0.0;
            } else {
              v = gs_at(&p, yi, xi) * (1 - tx) * (1 - ty) + gs_at(&p, yi, xi + 1) * tx * (1 - ty) +
                  gs_at(&p, yi + 1, xi) * (1 - tx) * ty + gs_at(&p, yi + 1, xi + 1) * tx * ty;
            }
          } else if (mode == GS_NEAREST) {
            if (gs_far(x, p.iw) || gs_far(y, p.ih))
              v = 0.0;
            else
              v = gs_at(&p, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
          } else {
            double x0 = floor(x), y0 = floor(y), wx[4], wy[4], acc = 0.0;
            int i, j;
            cubic_coeffs(x - x0, wx);
            cubic_coeffs(y - y0, wy);
            int skip =
                isnan(x) || isnan(y) || (pad == GS_ZEROS && (gs_far(x, p.iw) || gs_far(y, p.ih)));
            for (j = 0; j < 4 && !skip; ++j)
              for (i = 0; i < 4; ++i) {
                /* Each tap gets the padding mode on its own coordinate. */
                double tx = gs_pad(x0 - 1 + i, in->sizes[3], (int)pad, align);
                double ty = gs_pad(y0 - 1 + j, in->sizes[2], (int)pad, align);
                acc += gs_at(&p, (int64_t)ty, (int64_t)tx) * wx[i] * wy[j];
              }
            v = acc;
          }
          pterun_store_f64(out->data, out->dtype,
                           n * out->strides[0] + c * out->strides[1] + oh * out->strides[2] +
                               ow * out->strides[3],
                           v);
        }
      }
  return PTERUN_STATUS_OK;
}

/* ---- _upsample_bilinear2d_aa ------------------------------------------------------ */

/* ATen's area_pixel_compute_scale. */
static double aa_scale(int64_t in, int64_t out, int align, int has, double user) {
  if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
  return has && user > 0 ? 1.0 / user : (double)in / (double)out;
}

static double aa_filter(double x) {
  x = fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

/* Input range [*lo, *lo + *len) and the normalisation of output index o. */
static void aa_range(int64_t o, int64_t in, double scale, int64_t* lo, int64_t* len, double* center,
                     double* invscale, double* total) {
  double support = scale >= 1.0 ? scale : 1.0;
  int64_t j, hi;
  *center = scale * ((double)o + 0.5);
  *invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  *lo = (int64_t)(*center - support + 0.5);
  if (*lo < 0) *lo = 0;
  hi = (int64_t)(*center + support + 0.5);
  if (hi > in) hi = in;
  *len = hi > *lo ? hi - *lo : 0;
  *total = 0.0;
  for (j = 0; j < *len; ++j) *total += aa_filter(((double)(j + *lo) - *center + 0.5) * *invscale);
}

/* aten::_upsample_bilinear2d_aa.out(Tensor self, SymInt[2] output_size, bool align_corners,
 *   float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!) */
pterun_status pk__upsample_bilinear2d_aa_out(pterun_kernel_context* ctx, pterun_value** args,
                                             size_t nargs) {
  pterun_tensor *in, *out;
  int64_t osz[2], sizes[4], n, c, oh, ow;
  double sh_user, sw_user, sh, sw;
  int has_h, has_w;
  bool align;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pk_arg_int_n(ctx, args, 1, "output_size", 2, NULL, osz));
  PTERUN_TRY(pk_arg_bool(ctx, args, 2, "align_corners", &align));
  PTERUN_TRY(pterun_arg_opt_double(ctx, args, 3, "scales_h", &sh_user, &has_h));
  PTERUN_TRY(pterun_arg_opt_double(ctx, args, 4, "scales_w", &sw_user, &has_w));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", out, "out"));
  PTERUN_TRY(pterun_check_rank(ctx, in, "self", 4));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  if (osz[0] <= 0 || osz[1] <= 0 || in->sizes[2] <= 0 || in->sizes[3] <= 0)
    return PTERUN_FAIL_ARG(ctx,
                           "input %" PRId64 "x%" PRId64 " / output_size %" PRId64 "x%" PRId64
                           " must be non-empty",
                           in->sizes[2], in->sizes[3], osz[0], osz[1]);
  sizes[0] = in->sizes[0], sizes[1] = in->sizes[1], sizes[2] = osz[0], sizes[3] = osz[1];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, sizes));
  sh = aa_scale(in->sizes[2], osz[0], align, has_h, sh_user);
  sw = aa_scale(in->sizes[3], osz[1], align, has_w, sw_user);
  for (oh = 0; oh < osz[0]; ++oh) {
    int64_t hlo, hlen;
    double hc, hinv, htot;
    aa_range(oh, in->sizes[2], sh, &hlo, &hlen, &hc, &hinv, &htot);
    for (ow = 0; ow < osz[1]; ++ow) {
      int64_t wlo, wlen;
      double wc, winv, wtot;
      aa_range(ow, in->sizes[3], sw, &wlo, &wlen, &wc, &winv, &wtot);
      for (n = 0; n < sizes[0]; ++n)
        for (c = 0; c < sizes[1]; ++c) {
          int64_t b = n * in->strides[0] + c * in->strides[1], i, j;
          double acc = 0.0;
          for (i = 0; i < hlen; ++i) {
            double wh = aa_filter(((double)(i + hlo) - hc + 0.5) * hinv), row = 0.0;
            if (htot != 0.0) wh /= htot;
            for (j = 0; j < wlen; ++j) {
              double ww = aa_filter(((double)(j + wlo) - wc + 0.5) * winv);
              if (wtot != 0.0) ww /= wtot;
              row +=
                  ww * pterun_load_f64(in->data, in->dtype,
                                       b + (i + hlo) * in->strides[2] + (j + wlo) * in->strides[3]);
            }
            acc += wh * row;
          }
          pterun_store_f64(out->data, out->dtype,
                           n * out->strides[0] + c * out->strides[1] + oh * out->strides[2] +
                               ow * out->strides[3],
                           acc);
        }
    }
  }
  return PTERUN_STATUS_OK;
}
