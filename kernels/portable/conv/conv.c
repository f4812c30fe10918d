/* aten::convolution.out: 1-D/2-D/3-D, groups (incl. depthwise), stride,
 * padding, dilation, optional bias, transposed; any dim orders.
 *
 * Dense NCHW float32 2-D convolutions with at most 4 input channels (a
 * network's stem) run as the compute engine's direct convolution. Other
 * floating forward convolutions run as im2col + the blocked GEMM, one
 * (batch, group) at a time and in column chunks so the im2col buffer stays
 * small (scratch arena or a stack buffer). Transposed convolutions, integer
 * dtypes and unusual out layouts use a direct gather loop. Internally every
 * convolution is 3-D: missing leading spatial dims have size 1.
 *
 * A constant float32 weight of a GEMM-path convolution (groups == 1) is packed
 * once at method load (prepare, prepack.h); pterun::convolution_relu /
 * convolution_hardtanh (made by the load-time fusion pass) apply the
 * activation in the GEMM epilogue, or per plane/row of the depthwise loops. */
#include <inttypes.h>

#include "kernels/portable/producers.h"
#include "kernels/portable/prepack.h"
#include "kernels/portable/util.h"

typedef struct conv_geom {
  int64_t n, cin, cout, groups, icpg, ocpg;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  int64_t is[5], ws[5], os[5]; /* strides: N,C,D,H,W / O,I,kD,kH,kW / N,C,D,H,W */
} conv_geom;

/* Copies a tensor's strides into 5 slots (batch, channel, D, H, W). */
static void strides5(const pterun_tensor* t, int64_t* s) {
  int sp = t->rank - 2, d;
  s[0] = t->strides[0];
  s[1] = t->strides[1];
  for (d = 0; d < 3; ++d) s[2 + d] = d < 3 - sp ? 0 : t->strides[2 + d - (3 - sp)];
}

/* Overflow-checked a*b (a, b >= 0) and a+b; 0 on overflow. */
static int ck_mul(int64_t a, int64_t b, int64_t* r) {
  if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a)) return 0;
  *r = a * b;
  return 1;
}
static int ck_add(int64_t a, int64_t b, int64_t* r) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
  *r = a + b;
  return 1;
}

/* Reads int[] arguments (one value or one per spatial dim) into 3 slots. */
static pterun_status spatial_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                 const char* name, int sp, int64_t fill, int64_t* out) {
  int64_t v[3];
  int d;
  PTERUN_TRY(pk_arg_int_n(ctx, args, i, name, sp, NULL, v));
  for (d = 0; d < 3; ++d) out[d] = d < 3 - sp ? fill : v[d - (3 - sp)];
  return PTERUN_STATUS_OK;
}

/* base: index of the stride argument (stride, padding, dilation, transposed,
 * output_padding follow it, as in convolution and convolution_backward). */
static pterun_status conv_setup(pterun_kernel_context* ctx, pterun_value** args, size_t base,
                                pterun_tensor* in, pterun_tensor* w, pterun_tensor* bias,
                                int transposed, int64_t groups, conv_geom* g, int64_t* out_sizes) {
  int sp = in->rank - 2, d;
  int64_t opad[3];
  if (in->rank < 3 || in->rank > 5 || w->rank != in->rank)
    return PTERUN_FAIL_ARG(ctx, "input rank %d / weight rank %d: expected 3, 4 or 5", (int)in->rank,
                           (int)w->rank);
  PTERUN_TRY(spatial_arg(ctx, args, base, "stride", sp, 1, g->stride));
  PTERUN_TRY(spatial_arg(ctx, args, base + 1, "padding", sp, 0, g->pad));
  PTERUN_TRY(spatial_arg(ctx, args, base + 2, "dilation", sp, 1, g->dil));
  if (transposed)
    PTERUN_TRY(spatial_arg(ctx, args, base + 4, "output_padding", sp, 0, opad));
  else
    opad[0] = opad[1] = opad[2] = 0;
  if (groups <= 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'groups': must be positive, got %" PRId64, groups);
  g->n = in->sizes[0];
  g->cin = in->sizes[1];
  g->groups = groups;
  if (g->cin % groups != 0)
    return PTERUN_FAIL_ARG(ctx, "input channels %" PRId64 " not divisible by groups %" PRId64,
                           g->cin, groups);
  g->icpg = g->cin / groups;
  if (transposed) {
    if (w->sizes[0] != g->cin)
      return PTERUN_FAIL_ARG(ctx, "weight dim 0 is %" PRId64 ", expected %" PRId64, w->sizes[0],
                             g->cin);
    g->ocpg = w->sizes[1];
    g->cout = g->ocpg * groups;
  } else {
    g->cout = w->sizes[0];
    if (g->cout % groups != 0 || w->sizes[1] != g->icpg)
      return PTERUN_FAIL_ARG(ctx,
                             "weight [%" PRId64 ", %" PRId64 ", ...] does not fit %" PRId64
                             " input channels in %" PRId64 " groups",
                             w->sizes[0], w->sizes[1], g->cin, groups);
    g->ocpg = g->cout / groups;
  }
  if (bias != NULL && (bias->rank != 1 || bias->sizes[0] != g->cout))
    return PTERUN_FAIL_ARG(ctx, "arg 'bias': expected shape [%" PRId64 "]", g->cout);
  out_sizes[0] = g->n;
  out_sizes[1] = g->cout;
  for (d = 0; d < 3; ++d) {
    int real = d >= 3 - sp;
    int64_t ext;
    g->in[d] = real ? in->sizes[2 + d - (3 - sp)] : 1;
    g->k[d] = real ? w->sizes[2 + d - (3 - sp)] : 1;
    if (g->stride[d] <= 0 || g->dil[d] <= 0 || g->pad[d] < 0 || opad[d] < 0 ||
        (transposed && opad[d] >= g->stride[d] && opad[d] >= g->dil[d]))
      return PTERUN_FAIL_ARG(
          ctx, "invalid stride/padding/dilation/output_padding at spatial dim %d", d - (3 - sp));
    {
      /* Checked arithmetic: hostile padding/dilation must not overflow. */
      int64_t t, tp, span;
      int ok = g->k[d] >= 1 && ck_mul(g->dil[d], g->k[d] - 1, &t) && ck_add(t, 1, &ext) &&
               ck_mul(2, g->pad[d], &tp);
      if (ok && transposed) {
        if (g->in[d] >= 1)
          ok = ck_mul(g->in[d] - 1, g->stride[d], &t);
        else
          t = -g->stride[d];
        ok = ok && ck_add(t, -tp, &t) && ck_add(t, ext, &t) && ck_add(t, opad[d], &g->out[d]);
      } else if (ok) {
        ok = ck_add(g->in[d], tp, &span);
        g->out[d] = ok && span >= ext ? (span - ext) / g->stride[d] + 1 : 0;
      }
      if (!ok)
        return PTERUN_FAIL_ARG(ctx,
                               "kernel/padding/dilation/stride at spatial dim %d: empty kernel "
                               "or the output size overflows",
                               d - (3 - sp));
    }
    if (g->out[d] < 1)
      return PTERUN_FAIL_ARG(ctx, "output size at spatial dim %d would be %" PRId64, d - (3 - sp),
                             g->out[d]);
    if (real) out_sizes[2 + d - (3 - sp)] = g->out[d];
  }
  strides5(in, g->is);
  strides5(w, g->ws);
  return PTERUN_STATUS_OK;
}

/* Direct gather loop, double accumulation: any dtype, transposed or not. */
static void conv_direct(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* w,
                        const pterun_tensor* bias, pterun_tensor* out, int transposed) {
  int64_t n, oc, o[3], ic, kk[3];
  for (n = 0; n < g->n; ++n)
    for (oc = 0; oc < g->cout; ++oc) {
      int64_t grp = oc / g->ocpg, ocl = oc % g->ocpg;
      double b = bias ? pterun_load_f64(bias->data, bias->dtype, oc * bias->strides[0]) : 0.0;
      for (o[0] = 0; o[0] < g->out[0]; ++o[0])
        for (o[1] = 0; o[1] < g->out[1]; ++o[1])
          for (o[2] = 0; o[2] < g->out[2]; ++o[2]) {
            double acc = b;
            for (ic = 0; ic < g->icpg; ++ic) {
              int64_t c = grp * g->icpg + ic;
              int64_t ibase = n * g->is[0] + c * g->is[1];
              int64_t wbase =
                  transposed ? c * g->ws[0] + ocl * g->ws[1] : oc * g->ws[0] + ic * g->ws[1];
              for (kk[0] = 0; kk[0] < g->k[0]; ++kk[0])
                for (kk[1] = 0; kk[1] < g->k[1]; ++kk[1])
                  for (kk[2] = 0; kk[2] < g->k[2]; ++kk[2]) {
                    int64_t ioff = ibase, d;
                    int ok = 1;
                    for (d = 0; d < 3 && ok; ++d) {
                      int64_t p;
                      if (transposed) {
                        /* o = i*stride - pad + k*dil  =>  i = (o + pad - k*dil) / stride */
                        int64_t t = o[d] + g->pad[d] - kk[d] * g->dil[d];
                        ok = t >= 0 && t % g->stride[d] == 0;
                        p = ok ? t / g->stride[d] : 0;
                      } else {
                        p = o[d] * g->stride[d] - g->pad[d] + kk[d] * g->dil[d];
                      }
                      ok = ok && p >= 0 && p < g->in[d];
                      ioff += p * g->is[2 + d];
                    }
                    if (!ok) continue;
                    acc += pterun_load_f64(in->data, in->dtype, ioff) *
                           pterun_load_f64(
                               w->data, w->dtype,
                               wbase + kk[0] * g->ws[2] + kk[1] * g->ws[3] + kk[2] * g->ws[4]);
                  }
            }
            pterun_store_f64(
                out->data, out->dtype,
                n * g->os[0] + oc * g->os[1] + o[0] * g->os[2] + o[1] * g->os[3] + o[2] * g->os[4],
                acc);
          }
    }
}

/* The reduction dims (ic, kd, kh, kw) of a weight group ordered by memory;
 * 0 if they do not flatten to one stride (then the direct path is used). */
typedef struct red_order {
  int dim[4]; /* dim[j]: which of ic,kd,kh,kw is j-th outermost */
  int64_t size[4];
  int64_t cs; /* stride of the flattened reduction index in the weight */
} red_order;

static int weight_flattens(const conv_geom* g, red_order* ro) {
  int64_t sz[4] = {g->icpg, g->k[0], g->k[1], g->k[2]};
  int64_t st[4] = {g->ws[1], g->ws[2], g->ws[3], g->ws[4]};
  int j, i, nontrivial = 0;
  for (j = 0; j < 4; ++j) ro->dim[j] = j;
  /* Insertion sort by decreasing stride (size-1 dims sort anywhere). */
  for (j = 1; j < 4; ++j)
    for (i = j; i > 0 && (sz[ro->dim[i - 1]] == 1 ||
                          (sz[ro->dim[i]] != 1 && st[ro->dim[i - 1]] < st[ro->dim[i]]));
         --i) {
      int t = ro->dim[i];
      ro->dim[i] = ro->dim[i - 1];
      ro->dim[i - 1] = t;
    }
  ro->cs = 1;
  for (j = 3; j >= 0; --j) {
    int d = ro->dim[j];
    ro->size[j] = sz[d];
    if (sz[d] == 1) continue;
    if (!nontrivial) {
      ro->cs = st[d];
      nontrivial = 1;
    } else {
      int64_t expect = 1;
      for (i = j + 1; i < 4; ++i) expect *= sz[ro->dim[i]];
      if (st[d] != expect * ro->cs) return 0;
    }
  }
  return 1;
}

/* Out spatial dims flatten to one stride (true for NC(D)HW and channels-last). */
static int out_flattens(const conv_geom* g, int64_t* cs) {
  int64_t st = 0, expect = 0;
  int d;
  for (d = 2; d >= 0; --d) {
    if (g->out[d] == 1) continue;
    if (st == 0) {
      st = g->os[2 + d];
      expect = st * g->out[d];
    } else {
      if (g->os[2 + d] != expect) return 0;
      expect *= g->out[d];
    }
  }
  *cs = st ? st : 1;
  return 1;
}

/* A 1x1 convolution with stride 1 and no padding whose input positions
 * flatten to one stride (*ics) and whose dtype the GEMM reads directly: the
 * input can be used as the GEMM's column matrix without im2col. */
static int pointwise_input(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* out,
                           int64_t* ics) {
  int64_t st = 0, expect = 0;
  int d;
  for (d = 0; d < 3; ++d)
    if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0) return 0;
  if (in->dtype != out->dtype) return 0;
  for (d = 2; d >= 0; --d) {
    if (g->in[d] == 1) continue;
    if (st == 0) {
      st = g->is[2 + d];
      expect = st * g->in[d];
    } else {
      if (g->is[2 + d] != expect) return 0;
      expect *= g->in[d];
    }
  }
  *ics = st ? st : 1;
  return 1;
}

/* Depthwise float32 2-D convolution (groups == in channels, one input
 * channel per group), computed directly: per output row, each kernel tap
 * adds weight * a shifted input row over the output columns it reaches.
 * Channels-innermost layouts (NHWC) loop over channels innermost instead. */
static int depthwise_ok(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* w,
                        const pterun_tensor* bias, const pterun_tensor* out) {
  return in->rank == 4 && g->icpg == 1 && g->groups == g->cin && in->dtype == PTERUN_DTYPE_F32 &&
         w->dtype == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_F32 &&
         (bias == NULL || bias->dtype == PTERUN_DTYPE_F32);
}

/* First and one-past-last output index o with 0 <= o*s - p + k*d < in. */
static void tap_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t kd, int64_t* lo,
                      int64_t* hi) {
  int64_t off = kd - p; /* i = o*s + off */
  int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t b = in - off <= 0 ? 0 : (in - off + s - 1) / s;
  *lo = a;
  *hi = b < out ? b : out;
  if (*hi < *lo) *hi = *lo;
}

#define NN_DW_LOCAL 2048 /* floats of regrouped depthwise weights on the stack */

/* One depthwise call, shared by its pool tasks: (batch, channel) planes for
 * NCHW, (batch, output row) for channels-innermost. Tasks write disjoint
 * outputs and each output sums its taps in the same order whatever the
 * thread count. */
typedef struct dw_job {
  const conv_geom* g;
  const float* x;
  const float* wt;
  const pterun_tensor* bias;
  float* y;
  int64_t wo, wh, wwd;
  int act; /* fused activation (PTERUN_COMPUTE_ACT_*), applied while the output is in cache */
  float lo, hi;
} dw_job;

static float dw_bias(const dw_job* j, int64_t c) {
  return j->bias ? ((const float*)j->bias->data)[c * j->bias->strides[0]] : 0.0f;
}

/* Planes [start, start + count) of n * cout, NCHW-like strides. */
static void dw_planes(void* ctx, size_t start, size_t count) {
  const dw_job* j = ctx;
  const conv_geom* g = j->g;
  int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
  int64_t KH = g->k[1], KW = g->k[2], sh = g->stride[1], sw = g->stride[2];
  int64_t ph = g->pad[1], pw = g->pad[2], dh = g->dil[1], dw = g->dil[2];
  int64_t xc = g->is[1], xh = g->is[3], xw = g->is[4];
  int64_t yc = g->os[1], yh = g->os[3], yw = g->os[4];
  for (size_t plane = start; plane < start + count; ++plane) {
    int64_t n = (int64_t)plane / g->cout, oc = (int64_t)plane % g->cout, oh, ow, kh, kw;
    int64_t c = oc / g->ocpg;
    const float* xp = j->x + n * g->is[0] + c * xc;
    float* yp = j->y + n * g->os[0] + oc * yc;
    float b = dw_bias(j, oc);
    for (oh = 0; oh < OH; ++oh)
      for (ow = 0; ow < OW; ++ow) yp[oh * yh + ow * yw] = b;
    for (kh = 0; kh < KH; ++kh) {
      int64_t oh0, oh1;
      tap_range(IH, OH, sh, ph, kh * dh, &oh0, &oh1);
      for (kw = 0; kw < KW; ++kw) {
        int64_t ow0, ow1;
        float wv = j->wt[oc * j->wo + kh * j->wh + kw * j->wwd];
        tap_range(IW, OW, sw, pw, kw * dw, &ow0, &ow1);
        for (oh = oh0; oh < oh1; ++oh) {
          const float* xr = xp + (oh * sh - ph + kh * dh) * xh + (kw * dw - pw) * xw;
          float* yr = yp + oh * yh;
          if (yw == 1 && xw == 1 && sw == 1)
            for (ow = ow0; ow < ow1; ++ow) yr[ow] += wv * xr[ow];
          else
            for (ow = ow0; ow < ow1; ++ow) yr[ow * yw] += wv * xr[ow * sw * xw];
        }
      }
    }
    if (j->act)
      for (oh = 0; oh < OH; ++oh) {
        if (yw == 1)
          pterun_compute_f32_activate(yp + oh * yh, (size_t)OW, j->act, j->lo, j->hi);
        else
          for (ow = 0; ow < OW; ++ow)
            pterun_compute_f32_activate(yp + oh * yh + ow * yw, 1, j->act, j->lo, j->hi);
      }
  }
}

/* Output rows [start, start + count) of n * OH, channels innermost (NHWC):
 * a vector over channels per tap. */
static void dw_rows(void* ctx, size_t start, size_t count) {
  const dw_job* j = ctx;
  const conv_geom* g = j->g;
  int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
  int64_t KH = g->k[1], KW = g->k[2], sh = g->stride[1], sw = g->stride[2];
  int64_t ph = g->pad[1], pw = g->pad[2], dh = g->dil[1], dw = g->dil[2];
  int64_t xh = g->is[3], xw = g->is[4], yh = g->os[3], yw = g->os[4], C = g->cout;
  for (size_t row = start; row < start + count; ++row) {
    int64_t n = (int64_t)row / OH, oh = (int64_t)row % OH, ow, kh, kw, c;
    for (ow = 0; ow < OW; ++ow) {
      float* yp = j->y + n * g->os[0] + oh * yh + ow * yw;
      for (c = 0; c < C; ++c) yp[c] = dw_bias(j, c);
      for (kh = 0; kh < KH; ++kh) {
        int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= IH) continue;
        for (kw = 0; kw < KW; ++kw) {
          int64_t iw = ow * sw - pw + kw * dw;
          if (iw < 0 || iw >= IW) continue;
          const float* xp = j->x + n * g->is[0] + ih * xh + iw * xw;
          const float* wp = j->wt + kh * j->wh + kw * j->wwd;
          if (j->wo == 1)
            for (c = 0; c < C; ++c) yp[c] += wp[c] * xp[c];
          else
            for (c = 0; c < C; ++c) yp[c] += wp[c * j->wo] * xp[c];
        }
      }
      if (j->act) pterun_compute_f32_activate(yp, (size_t)C, j->act, j->lo, j->hi);
    }
  }
}

/* Dense NCHW input and output, a dense [Cout][Cin / groups][KH][KW] weight
 * and a unit-stride bias: the layout pterun_compute_f32_dwconv2d_nchw and
 * pterun_compute_f32_conv2d_nchw read. */
static int nchw_dense(const conv_geom* g, const pterun_tensor* w, const pterun_tensor* bias) {
  int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2], KH = g->k[1], KW = g->k[2];
  /* A stride matters only where the dim has more than one element. */
  return w->rank == 4 && g->k[0] == 1 && g->in[0] == 1 && (IW == 1 || g->is[4] == 1) &&
         (IH == 1 || g->is[3] == IW) && (g->cin == 1 || g->is[1] == IH * IW) &&
         (g->n == 1 || g->is[0] == g->cin * IH * IW) && (OW == 1 || g->os[4] == 1) &&
         (OH == 1 || g->os[3] == OW) && (g->cout == 1 || g->os[1] == OH * OW) &&
         (g->n == 1 || g->os[0] == g->cout * OH * OW) && (KW == 1 || g->ws[4] == 1) &&
         (KH == 1 || g->ws[3] == KW) && (g->icpg == 1 || g->ws[1] == KH * KW) &&
         (g->cout == 1 || g->ws[0] == g->icpg * KH * KW) &&
         (bias == NULL || bias->strides[0] == 1 || g->cout == 1);
}

static void conv_depthwise_f32(pterun_kernel_context* ctx, const conv_geom* g,
                               const pterun_tensor* in, const pterun_tensor* w,
                               const pterun_tensor* bias, pterun_tensor* out,
                               const pterun_compute_gemm_opts* act) {
  dw_job j = {g,
              (const float*)in->data,
              (const float*)w->data,
              bias,
              (float*)out->data,
              g->ws[0],
              g->ws[3],
              g->ws[4],
              act != NULL ? act->activation : PTERUN_COMPUTE_ACT_NONE,
              act != NULL ? act->lo : 0.0f,
              act != NULL ? act->hi : 0.0f};
  int64_t KH = g->k[1], KW = g->k[2], kh, kw;
  int chan_inner = g->is[1] == 1 && g->os[1] == 1 && g->ocpg == 1;
  if (nchw_dense(g, w, bias)) {
    /* Contiguous NCHW: the compute engine's vectorised loops (same bits as
     * dw_planes below; a clamp in registers, a ReLU after). */
    pterun_compute_dwconv2d p = {
        (size_t)g->n,      (size_t)g->in[1],     (size_t)g->in[2],     (size_t)g->cin,
        (size_t)g->out[1], (size_t)g->out[2],    (size_t)g->cout,      (size_t)KH,
        (size_t)KW,        (size_t)g->stride[1], (size_t)g->stride[2], (size_t)g->dil[1],
        (size_t)g->dil[2], (size_t)g->pad[1],    (size_t)g->pad[2],    -INFINITY,
        INFINITY};
    if (j.act == PTERUN_COMPUTE_ACT_CLAMP) {
      p.out_min = j.lo;
      p.out_max = j.hi;
    }
    if (pterun_compute_f32_dwconv2d_nchw(pterun_kernel_threadpool(ctx),
                                         pterun_kernel_max_threads(ctx), &p, j.x, j.wt,
                                         bias ? (const float*)bias->data : NULL, j.y) == 0) {
      if (j.act == PTERUN_COMPUTE_ACT_RELU)
        pterun_compute_f32_activate(j.y, (size_t)out->numel, j.act, 0.0f, 0.0f);
      return;
    }
  }
  float wl[NN_DW_LOCAL];
  if (chan_inner && j.wo != 1 && KH * KW * g->cout <= NN_DW_LOCAL) {
    /* Regroup the weights as [kH][kW][C] so the channel loop reads them
     * contiguously. */
    int64_t c;
    for (kh = 0; kh < KH; ++kh)
      for (kw = 0; kw < KW; ++kw)
        for (c = 0; c < g->cout; ++c)
          wl[(kh * KW + kw) * g->cout + c] = j.wt[c * j.wo + kh * j.wh + kw * j.wwd];
    j.wt = wl;
    j.wo = 1;
    j.wh = KW * g->cout;
    j.wwd = g->cout;
  }
  /* Small convolutions stay on the calling thread (waking the pool costs
   * microseconds). */
  int64_t work = g->n * g->cout * g->out[1] * g->out[2] * KH * KW;
  pterun_threadpool* pool = work >= (1 << 15) ? pterun_kernel_threadpool(ctx) : NULL;
  uint32_t flags = PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx));
  if (!chan_inner)
    pterun_parallelize_1d_tile(pool, dw_planes, &j, (size_t)(g->n * g->cout), 1, flags);
  else
    pterun_parallelize_1d_tile(pool, dw_rows, &j, (size_t)(g->n * g->out[1]), 1, flags);
}

/* Input channels up to which a dense 2-D convolution runs direct. A network's
 * stem (3 channels, 3x3: K = 27) gains 1.5x over the GEMM, whose K loop is
 * too short to pay for loading and storing its C tiles; a 1x1 stride-2
 * downsample with 32 or 64 channels (K = 32, 64) on a small image lost
 * 1.3-2.6x (ResNet). */
#define NN_CONV_DIRECT_MAX_CIN 4

/* A dense float32 2-D convolution with few input channels and a short
 * reduction (Cin * KH * KW <= 64) runs as the compute engine's direct
 * convolution. Returns 0 when it ran. */
static int conv_small_cin_f32(pterun_kernel_context* ctx, const conv_geom* g,
                              const pterun_tensor* in, const pterun_tensor* w,
                              const pterun_tensor* bias, pterun_tensor* out,
                              const pterun_compute_gemm_opts* act) {
  int64_t KH = g->k[1], KW = g->k[2];
  if (g->groups != 1 || g->icpg > NN_CONV_DIRECT_MAX_CIN || out->dtype != PTERUN_DTYPE_F32 ||
      in->rank != 4 || g->icpg * KH * KW > PTERUN_COMPUTE_CONV2D_MAX_TAPS ||
      !nchw_dense(g, w, bias))
    return -1;
  pterun_compute_conv2d p = {(size_t)g->n,
                             (size_t)g->cin,
                             (size_t)g->in[1],
                             (size_t)g->in[2],
                             (size_t)g->cout,
                             (size_t)g->out[1],
                             (size_t)g->out[2],
                             (size_t)KH,
                             (size_t)KW,
                             (size_t)g->stride[1],
                             (size_t)g->stride[2],
                             (size_t)g->dil[1],
                             (size_t)g->dil[2],
                             (size_t)g->pad[1],
                             (size_t)g->pad[2],
                             act != NULL ? act->activation : PTERUN_COMPUTE_ACT_NONE,
                             act != NULL ? act->lo : 0.0f,
                             act != NULL ? act->hi : 0.0f};
  return pterun_compute_f32_conv2d_nchw(
      pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx), &p, (const float*)in->data,
      (const float*)w->data, bias != NULL ? (const float*)bias->data : NULL, (float*)out->data);
}

/* The reduction index r (in the weight's memory order) as (ic, kd, kh, kw). */
static void red_decode(const red_order* ro, int64_t r, int64_t idx[4]) {
  for (int j = 3; j >= 0; --j) {
    idx[ro->dim[j]] = r % ro->size[j];
    r /= ro->size[j];
  }
}

/* One im2col step: rows [r0, r0 + nr) of the reduction (in the weight's
 * memory order) x output positions [p0, p0 + np) of batch n, group grp,
 * shared by the pool tasks that fill its rows. */
typedef struct im2col_job {
  const conv_geom* g;
  const red_order* ro;
  const pterun_tensor* in;
  void* col;
  int64_t n, grp, p0, np, r0;
  int dbl;
} im2col_job;

/* Fills col rows [start, start + count) of the step (pure copies: any
 * split gives the same matrix). */
static void im2col_rows(void* ctx, size_t start, size_t count) {
  const im2col_job* job = ctx;
  const conv_geom* g = job->g;
  const red_order* ro = job->ro;
  const pterun_tensor* in = job->in;
  void* col = job->col;
  const int64_t n = job->n, grp = job->grp, p0 = job->p0, np = job->np, r0 = job->r0;
  const int dbl = job->dbl;
  for (int64_t r = (int64_t)start; r < (int64_t)(start + count); ++r) {
    int64_t p, idx[4], kd, kh, kw, ic;
    red_decode(ro, r0 + r, idx);
    ic = idx[0], kd = idx[1], kh = idx[2], kw = idx[3];
    {
      /* Walk positions p0.. with incremental (od, oh, ow). */
      int64_t ow = p0 % g->out[2], oh = (p0 / g->out[2]) % g->out[1],
              od = p0 / (g->out[2] * g->out[1]);
      int64_t base = n * g->is[0] + (grp * g->icpg + ic) * g->is[1];
      for (p = 0; p < np; ++p) {
        int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
        int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
        int64_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dil[2];
        int64_t k = r * np + p;
        int inside =
            id >= 0 && id < g->in[0] && ih >= 0 && ih < g->in[1] && iw >= 0 && iw < g->in[2];
        int64_t off = base + id * g->is[2] + ih * g->is[3] + iw * g->is[4];
        if (dbl)
          ((double*)col)[k] = inside ? pterun_load_f64(in->data, in->dtype, off) : 0.0;
        else
          ((float*)col)[k] = inside ? pterun_load_f32(in->data, in->dtype, off) : 0.0f;
        if (++ow == g->out[2]) {
          ow = 0;
          if (++oh == g->out[1]) {
            oh = 0;
            ++od;
          }
        }
      }
    }
  }
}

/* The float32 B packer of one (batch, group) product: the engine's strips
 * of the column matrix, read straight from the image (the column matrix's
 * row r is reduction index r in the weight's memory order, column p output
 * position p; padding reads as zero). */
/* One reduction row of the column matrix: where its taps read. */
typedef struct col_tap {
  int64_t off;        /* input offset of output position 0 (may be outside) */
  int64_t dd, dh;     /* input depth/row = output depth/row * stride + these */
  int64_t lo_w, hi_w; /* output columns whose tap is inside the input */
} col_tap;

typedef struct col_packer {
  const conv_geom* g;
  const red_order* ro;
  const float* x;      /* batch n, first channel of the group */
  const col_tap* taps; /* every reduction row's taps (col_taps), or NULL: per call */
} col_packer;

/* taps[0, count) = reduction rows r0.. */
static void col_taps(const conv_geom* g, const red_order* ro, int64_t r0, int64_t count,
                     col_tap* taps) {
  int64_t idx[4], lo[16], hi[16];
  /* The column range of each kernel column, once (it divides). */
  const int64_t nkw = g->k[2] <= 16 && count > g->k[2] ? g->k[2] : 0;
  for (int64_t kw = 0; kw < nkw; ++kw)
    tap_range(g->in[2], g->out[2], g->stride[2], g->pad[2], kw * g->dil[2], &lo[kw], &hi[kw]);
  red_decode(ro, r0, idx);
  for (int64_t kk = 0; kk < count; ++kk) {
    col_tap* t = &taps[kk];
    if (kk > 0) /* the next reduction index, in the weight's memory order */
      for (int j = 3; j >= 0 && ++idx[ro->dim[j]] == ro->size[j]; --j) idx[ro->dim[j]] = 0;
    t->dd = idx[1] * g->dil[0] - g->pad[0];
    t->dh = idx[2] * g->dil[1] - g->pad[1];
    t->off = idx[0] * g->is[1] + t->dd * g->is[2] + t->dh * g->is[3] +
             (idx[3] * g->dil[2] - g->pad[2]) * g->is[4];
    if (idx[3] < nkw) {
      t->lo_w = lo[idx[3]];
      t->hi_w = hi[idx[3]];
    } else {
      tap_range(g->in[2], g->out[2], g->stride[2], g->pad[2], idx[3] * g->dil[2], &t->lo_w,
                &t->hi_w);
    }
  }
}

/* A run of one strip's columns inside one output row. */
typedef struct col_piece {
  int64_t d0, h0;     /* output depth/row * stride */
  int64_t base;       /* their input offset */
  int64_t ow, len, c; /* output columns [ow, ow + len) -> strip columns c.. */
} col_piece;

#define NN_PACK_ROWS 64 /* reduction rows decoded at once */

/* dst[0, n) = src[0, n): a loop the compiler vectorises (no call per run). */
static inline void copy_f32(float* restrict dst, const float* restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

/* dst[0, nr) = src[0, nr), fixed sizes for the microkernels' widths (the
 * compiler turns each into a few vector moves). */
static inline void copy_strip(float* dst, const float* src, int64_t nr) {
  switch (nr) {
    case 8: memcpy(dst, src, 8 * sizeof(float)); break;
    case 16: memcpy(dst, src, 16 * sizeof(float)); break;
    case 32: memcpy(dst, src, 32 * sizeof(float)); break;
    case 64: memcpy(dst, src, 64 * sizeof(float)); break;
    default: copy_f32(dst, src, nr);
  }
}

/* dst[0, nr) = 0 (fixed sizes, as copy_strip). */
static inline void zero_strip(float* dst, int64_t nr) {
  switch (nr) {
    case 8: memset(dst, 0, 8 * sizeof(float)); break;
    case 16: memset(dst, 0, 16 * sizeof(float)); break;
    case 32: memset(dst, 0, 32 * sizeof(float)); break;
    case 64: memset(dst, 0, 64 * sizeof(float)); break;
    default:
      for (int64_t i = 0; i < nr; ++i) dst[i] = 0.0f;
  }
}

/* dv[o - va] = output column o of a tap row for va <= o < vb, all inside
 * the input: input offset src + o * sw (sw: the input column step). */
static inline void col_cols(float* dv, const float* x, int64_t src, int64_t va, int64_t vb,
                            int64_t sw) {
  if (sw == 1)
    copy_f32(dv, x + src + va, vb - va);
  else if (sw == 2) /* a constant stride: the loop vectorises */
    for (int64_t o = va; o < vb; ++o) dv[o - va] = x[src + 2 * o];
  else
    for (int64_t o = va; o < vb; ++o) dv[o - va] = x[src + o * sw];
}

static void col_pack_b(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                       int64_t nr) {
  const col_packer* cp = ctx;
  const conv_geom* g = cp->g;
  const float* x = cp->x;
  const int64_t OW = g->out[2], OH = g->out[1], ID = g->in[0], IH = g->in[1];
  const int64_t sw = g->stride[2] * g->is[4];
  col_tap local[NN_PACK_ROWS];
  col_piece pieces[64]; /* nr <= 64 (PC_F32_NR_MAX) */
  if (nr > 64) return;  /* unreachable: no microkernel is wider */
  for (int64_t r0 = 0; r0 < kc; r0 += NN_PACK_ROWS) {
    const int64_t nrows = kc - r0 < NN_PACK_ROWS ? kc - r0 : NN_PACK_ROWS;
    const col_tap* taps = local;
    if (cp->taps != NULL)
      taps = cp->taps + k0 + r0;
    else
      col_taps(g, cp->ro, k0 + r0, nrows, local);
    for (int64_t js = 0; js < nc; js += nr) {
      /* The strip's columns as runs within output rows, then each row of
       * the strip written contiguously. */
      const int64_t w = nc - js < nr ? nc - js : nr, pos = j0 + js;
      int64_t ow = pos % OW, oh = (pos / OW) % OH, od = pos / (OW * OH), q = 0, np = 0;
      while (q < w) {
        const int64_t len = OW - ow < w - q ? OW - ow : w - q;
        const int64_t d0 = od * g->stride[0], h0 = oh * g->stride[1];
        pieces[np++] = (col_piece){d0, h0, d0 * g->is[2] + h0 * g->is[3], ow, len, q};
        q += len;
        ow = 0;
        if (++oh == OH) {
          oh = 0;
          ++od;
        }
      }
      float* strip = dst + js * kc + r0 * nr;
      const col_piece* p0 = &pieces[0];
      const int64_t e0 = p0->ow + p0->len;
      for (int64_t kk = 0; kk < nrows; ++kk) {
        const col_tap* t = &taps[kk];
        float* d = strip + kk * nr;
        if (np == 1) {
          /* The common case: the strip is one run of an output row. A tap
           * row outside the input is zeros; a run inside is one copy;
           * otherwise zeros, then the valid columns. */
          const int64_t id = p0->d0 + t->dd, ih = p0->h0 + t->dh, src = t->off + p0->base;
          const int64_t va = t->lo_w > p0->ow ? t->lo_w : p0->ow, vb = t->hi_w < e0 ? t->hi_w : e0;
          if (id < 0 || id >= ID || ih < 0 || ih >= IH || vb <= va) {
            zero_strip(d, nr);
            continue;
          }
          if (sw == 1 && va == p0->ow && vb == e0 && w == nr) {
            copy_strip(d, x + src + va, nr);
            continue;
          }
          zero_strip(d, nr);
          col_cols(d + (va - p0->ow), x, src, va, vb, sw);
          continue;
        }
        for (int64_t i = 0; i < np; ++i) {
          const col_piece* pc = &pieces[i];
          const int64_t id = pc->d0 + t->dd, ih = pc->h0 + t->dh, e = pc->ow + pc->len;
          float* dc = d + pc->c; /* dc[o - ow]: output column o */
          int64_t va = t->lo_w > pc->ow ? t->lo_w : pc->ow, vb = t->hi_w < e ? t->hi_w : e, o;
          if (id < 0 || id >= ID || ih < 0 || ih >= IH || vb < va) va = vb = e;
          for (o = pc->ow; o < va; ++o) dc[o - pc->ow] = 0.0f;
          if (va < vb) col_cols(dc + (va - pc->ow), x, t->off + pc->base, va, vb, sw);
          for (o = vb; o < e; ++o) dc[o - pc->ow] = 0.0f;
        }
        for (int64_t c = w; c < nr; ++c) d[c] = 0.0f;
      }
    }
  }
}

#define NN_COL_LOCAL 4096 /* elements of the stack im2col buffer */
#define NN_COL_SCRATCH (256 * 1024)

/* GEMM for one forward floating convolution: float32 packs the GEMM's B
 * strips from the image (col_pack_b), one product per (batch, group); other
 * dtypes fill an im2col buffer in chunks. */
static void conv_gemm(pterun_kernel_context* ctx, const conv_geom* g, const red_order* ro,
                      int64_t ocs, const pterun_tensor* in, const pterun_tensor* w,
                      const pterun_tensor* bias, pterun_tensor* out,
                      const pterun_compute_gemm_opts* act) {
  _Alignas(64) float local[NN_COL_LOCAL];
  pterun_compute_gemm_ws ws;
  int dbl = out->dtype == PTERUN_DTYPE_F64;
  size_t es = dbl ? sizeof(double) : sizeof(float);
  int64_t cap = NN_COL_SCRATCH, rows = g->icpg * g->k[0] * g->k[1] * g->k[2];
  int64_t npos = g->out[0] * g->out[1] * g->out[2], rc, pc, n, grp, r0, p0, ics;
  /* float32 needs no column buffer: the products pack B themselves. */
  const int packer = out->dtype == PTERUN_DTYPE_F32 && !pointwise_input(g, in, out, &ics);
  void* col = packer ? local : pterun_kernel_scratch(ctx, (size_t)cap * es, 64);
  if (col == NULL) {
    pterun_kernel_note_slow_path(ctx, "no scratch: im2col in 16 KiB chunks");
    col = local;
    cap = NN_COL_LOCAL * (int64_t)sizeof(float) / (int64_t)es;
  }
  pterun_compute_gemm_init(ctx, &ws, out->dtype);
  /* The weight packed at load (groups == 1), and what every product gets:
   * the activation goes with the last chunk of the reduction only. */
  pterun_compute_gemm_opts mid = {0}, last = {0};
  if (g->groups == 1) mid.packed_a = pk_prepacked_for(ctx, w, g->ocpg, rows);
  if (act != NULL) last = *act;
  last.packed_a = mid.packed_a;
  /* Chunk: the GEMM's own K block (so a packed weight's blocks line up and
   * packed and unpacked products add in the same order; at most 256 rows),
   * then as many positions as fit. */
  rc = dbl ? (rows < 256 ? rows : 256) : pterun_compute_gemm_k_block(&ws, g->ocpg, rows);
  pc = cap / rc;
  if (pc > npos) pc = npos;
  /* float32: the first product of each output block stores (no
   * accumulate) and adds the bias in its epilogue, so no pass fills the
   * output first; other dtypes start from the bias (or zero) and every
   * product accumulates. */
  const int fill =
      out->dtype != PTERUN_DTYPE_F32 ||
      (bias != NULL && (bias->dtype != PTERUN_DTYPE_F32 || (bias->strides[0] != 1 && g->cout > 1)));
  const float* bias_f = !fill && bias != NULL ? (const float*)bias->data : NULL;
  for (n = 0; n < g->n && fill; ++n) {
    int64_t oc, p;
    for (oc = 0; oc < g->cout; ++oc) {
      double b = bias ? pterun_load_f64(bias->data, bias->dtype, oc * bias->strides[0]) : 0.0;
      int64_t base = n * g->os[0] + oc * g->os[1];
      if (out->dtype == PTERUN_DTYPE_F32) {
        float* o = (float*)out->data + base;
        for (p = 0; p < npos; ++p) o[p * ocs] = (float)b;
      } else {
        for (p = 0; p < npos; ++p) pterun_store_f64(out->data, out->dtype, base + p * ocs, b);
      }
    }
  }
  if (pointwise_input(g, in, out, &ics)) {
    /* 1x1, stride 1, no padding: the input is already the column matrix. */
    for (n = 0; n < g->n; ++n)
      for (grp = 0; grp < g->groups; ++grp) {
        pterun_compute_matrix a, b, c;
        a.data = (char*)w->data + (size_t)(grp * g->ocpg * g->ws[0]) * pterun_dtype_size(w->dtype);
        a.dtype = w->dtype;
        a.rs = g->ws[0];
        a.cs = ro->cs;
        b.data = (char*)in->data +
                 (size_t)(n * g->is[0] + grp * g->icpg * g->is[1]) * pterun_dtype_size(in->dtype);
        b.dtype = in->dtype;
        b.rs = g->is[1];
        b.cs = ics;
        c.data = (char*)out->data +
                 (size_t)(n * g->os[0] + grp * g->ocpg * g->os[1]) * pterun_dtype_size(out->dtype);
        c.dtype = out->dtype;
        c.rs = g->os[1];
        c.cs = ocs;
        last.bias = bias_f != NULL ? bias_f + grp * g->ocpg : NULL;
        pterun_compute_gemm_ex(&ws, g->ocpg, npos, rows, &a, &b, &c, 1.0, fill, &last);
      }
    return;
  }
  if (packer) {
    /* The same K blocks (rc, fixed by a packed weight or equal to what the
     * chunks below use) and per-element sums as the im2col path. The rows'
     * taps are decoded once (the engine packs a strip at a time), in the
     * scratch the products left. */
    col_tap* taps = pterun_kernel_scratch(ctx, sizeof(col_tap) * (size_t)rows, 64);
    if (taps != NULL) col_taps(g, ro, 0, rows, taps);
    for (n = 0; n < g->n; ++n)
      for (grp = 0; grp < g->groups; ++grp) {
        col_packer cp = {g, ro, (const float*)in->data + n * g->is[0] + grp * g->icpg * g->is[1],
                         taps};
        pterun_compute_matrix a = {(float*)w->data + grp * g->ocpg * g->ws[0], w->dtype, g->ws[0],
                                   ro->cs};
        pterun_compute_matrix c = {(float*)out->data + n * g->os[0] + grp * g->ocpg * g->os[1],
                                   out->dtype, g->os[1], ocs};
        last.k0 = 0;
        last.bias = bias_f != NULL ? bias_f + grp * g->ocpg : NULL;
        last.pack_b = col_pack_b;
        last.pack_b_ctx = &cp;
        pterun_compute_gemm_ex(&ws, g->ocpg, npos, rows, &a, NULL, &c, 1.0, fill, &last);
      }
    return;
  }
  for (n = 0; n < g->n; ++n)
    for (grp = 0; grp < g->groups; ++grp)
      for (p0 = 0; p0 < npos; p0 += pc) {
        int64_t np = npos - p0 < pc ? npos - p0 : pc;
        for (r0 = 0; r0 < rows; r0 += rc) {
          int64_t nr = rows - r0 < rc ? rows - r0 : rc;
          pterun_compute_matrix a, b, c;
          im2col_job ij = {g, ro, in, col, n, grp, p0, np, r0, dbl};
          /* Rows over the pool when the copy is big enough to pay for it. */
          size_t rtile = np >= 8192 ? 1 : (size_t)(8192 / np);
          pterun_parallelize_1d_tile(nr * np >= 32768 ? pterun_kernel_threadpool(ctx) : NULL,
                                     im2col_rows, &ij, (size_t)nr, rtile,
                                     PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)));
          a.data = (char*)w->data +
                   (size_t)(grp * g->ocpg * g->ws[0] + r0 * ro->cs) * pterun_dtype_size(w->dtype);
          a.dtype = w->dtype;
          a.rs = g->ws[0];
          a.cs = ro->cs;
          b.data = col;
          b.dtype = dbl ? PTERUN_DTYPE_F64 : PTERUN_DTYPE_F32;
          b.rs = np;
          b.cs = 1;
          c.data = (char*)out->data + (size_t)(n * g->os[0] + grp * g->ocpg * g->os[1] + p0 * ocs) *
                                          pterun_dtype_size(out->dtype);
          c.dtype = out->dtype;
          c.rs = g->os[1];
          c.cs = ocs;
          pterun_compute_gemm_opts* x = r0 + nr == rows ? &last : &mid;
          x->k0 = r0;
          x->bias = bias_f != NULL && r0 == 0 ? bias_f + grp * g->ocpg : NULL;
          pterun_compute_gemm_ex(&ws, g->ocpg, np, nr, &a, &b, &c, 1.0, fill || r0 > 0, x);
        }
      }
}

/* aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
 *   SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
 *   SymInt groups, *, Tensor(a!) out), out at args[iout]; `act`: the fused
 *   activation (NULL: none). */
static pterun_status convolution(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                 const pterun_compute_gemm_opts* act) {
  pterun_tensor *in, *w, *bias, *out;
  bool transposed;
  int64_t groups, sizes[5], ocs, ics;
  conv_geom g;
  red_order ro;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "bias", &bias));
  PTERUN_TRY(pk_arg_bool(ctx, args, 6, "transposed", &transposed));
  PTERUN_TRY(pterun_arg_int(ctx, args, 8, "groups", &groups));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, iout, "out", &out));
  if (act != NULL && out->dtype != PTERUN_DTYPE_F32)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the fused activation needs float32, got %s",
                              pterun_dtype_name(out->dtype));
  PTERUN_TRY(pk_check_real(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", w, "weight"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", out, "out"));
  if (bias) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", bias, "bias"));
  if (in->dtype == PTERUN_DTYPE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "arg 'input': bool");
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_check_data(ctx, w, "weight"));
  if (bias) PTERUN_TRY(pterun_check_data(ctx, bias, "bias"));
  PTERUN_TRY(conv_setup(ctx, args, 3, in, w, bias, transposed, groups, &g, sizes));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", in->rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  strides5(out, g.os);
  if (!transposed && depthwise_ok(&g, in, w, bias, out)) {
    conv_depthwise_f32(ctx, &g, in, w, bias, out, act);
  } else if (!transposed && !pointwise_input(&g, in, out, &ics) &&
             conv_small_cin_f32(ctx, &g, in, w, bias, out, act) == 0) {
    /* done */
  } else if (!transposed && pterun_dtype_is_float(out->dtype) && weight_flattens(&g, &ro) &&
             out_flattens(&g, &ocs)) {
    conv_gemm(ctx, &g, &ro, ocs, in, w, bias, out, act);
  } else {
    conv_direct(&g, in, w, bias, out, transposed);
    /* out is dense: its elements are [0, numel) */
    if (act != NULL)
      pterun_compute_f32_activate((float*)out->data, (size_t)out->numel, act->activation, act->lo,
                                  act->hi);
  }
  return PTERUN_STATUS_OK;
}

pterun_status pk_convolution_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  PTERUN_CHECK_NARGS(ctx, nargs, 11);
  return convolution(ctx, args, 9, NULL);
}

pterun_status pk_convolution_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                 const pterun_compute_gemm_opts* act) {
  return convolution(ctx, args, iout, act);
}

/* Load time: packs a constant float32 weight of a convolution that takes the
 * GEMM path with one group (the weight is the product's A, cout x
 * icpg*kD*kH*kW in the weight's own reduction order). Geometry errors are
 * left for execute to report. */
pterun_status pk_convolution_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                  size_t want, size_t iout, pk_prepacked* into) {
  if (nargs != want || args[0]->tag != PTERUN_VALUE_TENSOR || args[1]->tag != PTERUN_VALUE_TENSOR ||
      args[iout]->tag != PTERUN_VALUE_TENSOR || args[6]->tag != PTERUN_VALUE_BOOL || args[6]->u.b ||
      args[8]->tag != PTERUN_VALUE_INT || args[8]->u.i != 1)
    return PTERUN_STATUS_OK;
  const pterun_tensor *in = args[0]->u.tensor, *w = args[1]->u.tensor, *out = args[iout]->u.tensor;
  int sp = w->rank - 2, d;
  if (in->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || in->rank != w->rank ||
      sp < 1 || sp > 3 || !pk_prepack_constant_f32(w) || w->sizes[1] != in->sizes[1] ||
      in->sizes[1] == 1 /* depthwise path */)
    return PTERUN_STATUS_OK;
  conv_geom g;
  red_order ro;
  memset(&g, 0, sizeof g);
  g.icpg = w->sizes[1];
  for (d = 0; d < 3; ++d) g.k[d] = d < 3 - sp ? 1 : w->sizes[2 + d - (3 - sp)];
  strides5(w, g.ws);
  if (!weight_flattens(&g, &ro)) return PTERUN_STATUS_OK;
  int64_t rows = g.icpg * g.k[0] * g.k[1] * g.k[2];
  pterun_compute_matrix a = {w->data, w->dtype, g.ws[0], ro.cs};
  return pk_prepack_to(ctx, into, w, PTERUN_COMPUTE_OPERAND_A, w->sizes[0], rows, &a);
}

static pterun_status convolution_prepare(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t nargs, size_t want, size_t iout) {
  return pk_convolution_pack(ctx, args, nargs, want, iout, NULL);
}

pterun_status pk_convolution_prepare(pterun_kernel_context* ctx, pterun_value** args,
                                     size_t nargs) {
  return convolution_prepare(ctx, args, nargs, 11, 9);
}

/* pterun::convolution_relu.out(<convolution's arguments>, *, out) and
 * pterun::convolution_hardtanh.out(<convolution's arguments>, min_val,
 * max_val, *, out) */
PK_DEFINE_FUSED_ACTIVATIONS(pk_convolution, convolution, convolution_prepare, 11)

/* aten::convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight,
 *   SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation,
 *   bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask, *,
 *   Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
 * Gradients of a forward (not transposed) convolution; each is a gather with
 * double accumulation: out0 = d input, out1 = d weight, out2 = d bias, each
 * only when its output_mask entry is set (the others are left untouched). */
pterun_status pk_convolution_backward_out(pterun_kernel_context* ctx, pterun_value** args,
                                          size_t nargs) {
  pterun_tensor *go, *in, *w, *gi, *gw, *gb;
  bool transposed;
  int64_t groups, sizes[5], gos[5], d;
  const pterun_value* mv;
  int mask[3];
  conv_geom g;
  PTERUN_CHECK_NARGS(ctx, nargs, 15);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "grad_output", &go));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "weight", &w));
  PTERUN_TRY(pk_arg_bool(ctx, args, 7, "transposed", &transposed));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "groups", &groups));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 11, "out0", &gi));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 12, "out1", &gw));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 13, "out2", &gb));
  mv = args[10];
  if (mv == NULL || mv->tag != PTERUN_VALUE_LIST_BOOL || mv->u.bools.len != 3)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arg 'output_mask': expected bool[3]");
  for (d = 0; d < 3; ++d) mask[d] = mv->u.bools.items[d] != 0;
  if (transposed)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'transposed': transposed convolution backward is not supported");
  PTERUN_TRY(pk_check_float(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", go, "grad_output"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", w, "weight"));
  if (mask[0]) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", gi, "out0"));
  if (mask[1]) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", gw, "out1"));
  if (mask[2]) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", gb, "out2"));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_check_data(ctx, w, "weight"));
  PTERUN_TRY(pterun_check_data(ctx, go, "grad_output"));
  PTERUN_TRY(conv_setup(ctx, args, 4, in, w, NULL, 0, groups, &g, sizes));
  if (go->rank != in->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'grad_output': expected rank %d, got %d", (int)in->rank,
                           (int)go->rank);
  for (d = 0; d < in->rank; ++d)
    if (go->sizes[d] != sizes[d])
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'grad_output': size %" PRId64 " at dim %d, expected %" PRId64,
                             go->sizes[d], (int)d, sizes[d]);
  if (args[3] != NULL && args[3]->tag != PTERUN_VALUE_NONE) {
    const int64_t* bs;
    size_t blen;
    PTERUN_TRY(pterun_arg_int_list(ctx, args, 3, "bias_sizes", &bs, &blen, 1));
    if (blen != 1 || bs[0] != g.cout)
      return PTERUN_FAIL_ARG(ctx, "arg 'bias_sizes': expected [%" PRId64 "]", g.cout);
  }
  strides5(go, gos);
  if (mask[0]) {
    int64_t n, c, i[3], oc, k[3];
    PTERUN_TRY(pterun_out_resize(ctx, gi, "grad_input", in->rank, in->sizes));
    strides5(gi, g.os);
    for (n = 0; n < g.n; ++n)
      for (c = 0; c < g.cin; ++c) {
        int64_t grp = c / g.icpg, ic = c % g.icpg;
        for (i[0] = 0; i[0] < g.in[0]; ++i[0])
          for (i[1] = 0; i[1] < g.in[1]; ++i[1])
            for (i[2] = 0; i[2] < g.in[2]; ++i[2]) {
              double acc = 0.0;
              for (oc = grp * g.ocpg; oc < (grp + 1) * g.ocpg; ++oc)
                for (k[0] = 0; k[0] < g.k[0]; ++k[0])
                  for (k[1] = 0; k[1] < g.k[1]; ++k[1])
                    for (k[2] = 0; k[2] < g.k[2]; ++k[2]) {
                      /* i = o*stride - pad + k*dil  =>  o = (i + pad - k*dil) / stride */
                      int64_t goff = n * gos[0] + oc * gos[1], dd;
                      int ok = 1;
                      for (dd = 0; dd < 3 && ok; ++dd) {
                        int64_t t = i[dd] + g.pad[dd] - k[dd] * g.dil[dd];
                        ok = t >= 0 && t % g.stride[dd] == 0 && t / g.stride[dd] < g.out[dd];
                        if (ok) goff += (t / g.stride[dd]) * gos[2 + dd];
                      }
                      if (!ok) continue;
                      acc += pterun_load_f64(go->data, go->dtype, goff) *
                             pterun_load_f64(w->data, w->dtype,
                                             oc * g.ws[0] + ic * g.ws[1] + k[0] * g.ws[2] +
                                                 k[1] * g.ws[3] + k[2] * g.ws[4]);
                    }
              pterun_store_f64(
                  gi->data, gi->dtype,
                  n * g.os[0] + c * g.os[1] + i[0] * g.os[2] + i[1] * g.os[3] + i[2] * g.os[4],
                  acc);
            }
      }
  }
  if (mask[1]) {
    int64_t oc, ic, k[3], n, o[3], wo[5];
    PTERUN_TRY(pterun_out_resize(ctx, gw, "grad_weight", w->rank, w->sizes));
    strides5(gw, wo);
    for (oc = 0; oc < g.cout; ++oc)
      for (ic = 0; ic < g.icpg; ++ic) {
        int64_t c = (oc / g.ocpg) * g.icpg + ic;
        for (k[0] = 0; k[0] < g.k[0]; ++k[0])
          for (k[1] = 0; k[1] < g.k[1]; ++k[1])
            for (k[2] = 0; k[2] < g.k[2]; ++k[2]) {
              double acc = 0.0;
              for (n = 0; n < g.n; ++n)
                for (o[0] = 0; o[0] < g.out[0]; ++o[0])
                  for (o[1] = 0; o[1] < g.out[1]; ++o[1])
                    for (o[2] = 0; o[2] < g.out[2]; ++o[2]) {
                      int64_t ioff = n * g.is[0] + c * g.is[1], dd;
                      int ok = 1;
                      for (dd = 0; dd < 3 && ok; ++dd) {
                        int64_t p = o[dd] * g.stride[dd] - g.pad[dd] + k[dd] * g.dil[dd];
                        ok = p >= 0 && p < g.in[dd];
                        ioff += p * g.is[2 + dd];
                      }
                      if (!ok) continue;
                      acc += pterun_load_f64(in->data, in->dtype, ioff) *
                             pterun_load_f64(go->data, go->dtype,
                                             n * gos[0] + oc * gos[1] + o[0] * gos[2] +
                                                 o[1] * gos[3] + o[2] * gos[4]);
                    }
              /* wo[2..4] are 0 for missing leading spatial dims. */
              pterun_store_f64(gw->data, gw->dtype,
                               oc * wo[0] + ic * wo[1] + k[0] * wo[2] + k[1] * wo[3] + k[2] * wo[4],
                               acc);
            }
      }
  }
  if (mask[2]) {
    int64_t oc, n, p, np = g.out[0] * g.out[1] * g.out[2];
    PTERUN_TRY(pterun_out_resize(ctx, gb, "grad_bias", 1, &g.cout));
    for (oc = 0; oc < g.cout; ++oc) {
      double acc = 0.0;
      for (n = 0; n < g.n; ++n)
        for (p = 0; p < np; ++p) {
          int64_t o2 = p % g.out[2], o1 = (p / g.out[2]) % g.out[1], o0 = p / (g.out[2] * g.out[1]);
          acc +=
              pterun_load_f64(go->data, go->dtype,
                              n * gos[0] + oc * gos[1] + o0 * gos[2] + o1 * gos[3] + o2 * gos[4]);
        }
      pterun_store_f64(gb->data, gb->dtype, oc * gb->strides[0], acc);
    }
  }
  return PTERUN_STATUS_OK;
}
