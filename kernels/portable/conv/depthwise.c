/* Depthwise float32 convolution: direct loops, no im2col/GEMM (NCHW: per
 * tap, a weight times a shifted input row; NHWC: a vector over channels per
 * tap), with the fused activation per plane or row. */
#include <inttypes.h>

#include "kernels/portable/conv/conv.h"

/* Depthwise float32 2-D convolution (groups == in channels, one input
 * channel per group), computed directly: per output row, each kernel tap
 * adds weight * a shifted input row over the output columns it reaches.
 * Channels-innermost layouts (NHWC) loop over channels innermost instead. */
int pk_conv_depthwise_ok(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* w,
                         const pterun_tensor* bias, const pterun_tensor* out) {
  /* One input channel and one group is a dense convolution (a stem over a
   * spectrogram): depthwise planes would re-read that channel per output
   * channel, the dense paths read it once. */
  if (g->groups == 1 && g->cout > 1) return 0;
  return in->rank == 4 && g->icpg == 1 && g->groups == g->cin && in->dtype == PTERUN_DTYPE_F32 &&
         w->dtype == PTERUN_DTYPE_F32 && out->dtype == PTERUN_DTYPE_F32 &&
         (bias == NULL || bias->dtype == PTERUN_DTYPE_F32);
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

/* A dense NCHW depthwise convolution (multiplier 1) with fewer output
 * columns than this and at least NN_DW_NHWC_MIN_C channels runs in NHWC
 * through scratch: the NCHW loops vectorise along an output row, so narrow
 * planes (a MobileNet's late layers: 3-12 columns) leave lanes idle and pay
 * a plane's set-up for a few outputs, where NHWC vectorises over channels.
 * Both sum bias, then the taps in (kh, kw) order, one rounding per step. */
#define NN_DW_NHWC_MAX_OUT_W 16
#define NN_DW_NHWC_MIN_C 8

/* Floats of scratch the NHWC route needs (input, output, filter), 0 when it
 * is not taken. */
size_t pk_conv_depthwise_nhwc_floats(int64_t n, int64_t c, int64_t ih, int64_t iw, int64_t oh,
                                     int64_t ow, int64_t kh, int64_t kw) {
  if (ow >= NN_DW_NHWC_MAX_OUT_W || c < NN_DW_NHWC_MIN_C || n < 1 || ih < 1 || iw < 1 || oh < 1 ||
      ow < 1 || kh < 1 || kw < 1)
    return 0;
  return pk_conv_depthwise_cl_floats(0, 0, n, c, ih, iw, oh, ow, kh, kw);
}

size_t pk_conv_depthwise_cl_floats(int in_cl, int out_cl, int64_t n, int64_t c, int64_t ih,
                                   int64_t iw, int64_t oh, int64_t ow, int64_t kh, int64_t kw) {
  if (n < 1 || c < 1 || ih < 1 || iw < 1 || oh < 1 || ow < 1 || kh < 1 || kw < 1) return 0;
  /* The tensors exist, so these products are in range. */
  return (size_t)((in_cl ? 0 : n * c * ih * iw) + (out_cl ? 0 : n * c * oh * ow) + kh * kw * c);
}

/* A depthwise convolution (multiplier 1) with a channels-last input or
 * output (the layout pass's chains): the NHWC loop reads and writes those
 * in place; an NCHW side goes through a copy in scratch. 0: done, else not
 * taken (no scratch, or a geometry the NHWC loop refuses). */
static int dw_channels_last(pterun_kernel_context* ctx, const conv_geom* g,
                            const pterun_compute_dwconv2d* p, int in_cl, int out_cl, const float* x,
                            const float* wt, const float* bias, float* y) {
  size_t nf = pk_conv_depthwise_cl_floats(in_cl, out_cl, g->n, g->cout, g->in[1], g->in[2],
                                          g->out[1], g->out[2], g->k[1], g->k[2]);
  float* ws = nf != 0 ? pterun_kernel_scratch(ctx, nf * sizeof(float), 64) : NULL;
  if (ws == NULL) return -1;
  const size_t N = p->batch, C = p->out_c, HWi = p->in_h * p->in_w, HWo = p->out_h * p->out_w;
  const size_t T = p->kernel_h * p->kernel_w;
  float* xs = ws + T * C;
  float* ys = xs + (in_cl ? 0 : N * C * HWi);
  pterun_compute_f32_transpose((int64_t)C, (int64_t)T, wt, (int64_t)T, ws, (int64_t)C);
  if (!in_cl)
    for (size_t b = 0; b < N; ++b)
      pterun_compute_f32_transpose((int64_t)C, (int64_t)HWi, x + b * C * HWi, (int64_t)HWi,
                                   xs + b * C * HWi, (int64_t)C);
  if (pterun_compute_f32_dwconv2d_nhwc(pterun_kernel_threadpool(ctx),
                                       pterun_kernel_max_threads(ctx), p, in_cl ? x : xs, ws, bias,
                                       out_cl ? y : ys) != 0)
    return -1;
  if (!out_cl)
    for (size_t b = 0; b < N; ++b)
      pterun_compute_f32_transpose((int64_t)HWo, (int64_t)C, ys + b * C * HWo, (int64_t)C,
                                   y + b * C * HWo, (int64_t)HWo);
  return 0;
}

/* The NHWC route of a dense NCHW depthwise convolution on narrow planes
 * (pk_conv_depthwise_nhwc_floats): both sides through scratch (0: done, else
 * not taken). Planes are transposed on the calling thread; the convolution's
 * rows run over the pool. */
static int dw_via_nhwc(pterun_kernel_context* ctx, const conv_geom* g,
                       const pterun_compute_dwconv2d* p, const float* x, const float* wt,
                       const float* bias, float* y) {
  if (g->ocpg != 1 || pk_conv_depthwise_nhwc_floats(g->n, g->cout, g->in[1], g->in[2], g->out[1],
                                                    g->out[2], g->k[1], g->k[2]) == 0)
    return -1;
  return dw_channels_last(ctx, g, p, 0, 0, x, wt, bias, y);
}

void pk_conv_depthwise_f32(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                           const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
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
  const int in_cl = pterun_is_channels_last4(in), out_cl = pterun_is_channels_last4(out);
  /* Strides follow sizes and dim order: a contiguous or channels-last
   * tensor is dense in that layout. */
  const int layouts_ok = (in_cl || pterun_tensor_is_contiguous(in)) &&
                         (out_cl || pterun_tensor_is_contiguous(out)) &&
                         pterun_tensor_is_contiguous(w) && w->rank == 4 && g->ocpg == 1 &&
                         (bias == NULL || bias->strides[0] == 1 || g->cout == 1);
  if ((in_cl || out_cl || nchw_dense(g, w, bias)) && (!(in_cl || out_cl) || layouts_ok)) {
    /* Contiguous NCHW: the compute engine's vectorised loops (same bits as
     * dw_planes below), the activation as their clamp in registers: ReLU is
     * the clamp to [0, inf] bit for bit (NaN and -0 stay, compute.h). */
    pterun_compute_dwconv2d p = {
        (size_t)g->n,      (size_t)g->in[1],     (size_t)g->in[2],     (size_t)g->cin,
        (size_t)g->out[1], (size_t)g->out[2],    (size_t)g->cout,      (size_t)KH,
        (size_t)KW,        (size_t)g->stride[1], (size_t)g->stride[2], (size_t)g->dil[1],
        (size_t)g->dil[2], (size_t)g->pad[1],    (size_t)g->pad[2],    -INFINITY,
        INFINITY};
    if (j.act == PTERUN_COMPUTE_ACT_CLAMP) {
      p.out_min = j.lo;
      p.out_max = j.hi;
    } else if (j.act == PTERUN_COMPUTE_ACT_RELU) {
      p.out_min = 0.0f;
    }
    const float* bf = bias ? (const float*)bias->data : NULL;
    if (in_cl || out_cl) {
      if (dw_channels_last(ctx, g, &p, in_cl, out_cl, j.x, j.wt, bf, j.y) == 0) return;
    } else if (dw_via_nhwc(ctx, g, &p, j.x, j.wt, bf, j.y) == 0 ||
               pterun_compute_f32_dwconv2d_nchw(pterun_kernel_threadpool(ctx),
                                                pterun_kernel_max_threads(ctx), &p, j.x, j.wt, bf,
                                                j.y) == 0)
      return;
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
  /* ~0.7 ns a tap on one thread (scalar loops; the pool's split rule) */
  uint32_t flags = PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                   PTERUN_PARALLEL_WORK_NS(work * 7 / 10);
  if (!chan_inner)
    pterun_parallelize_1d_tile(pool, dw_planes, &j, (size_t)(g->n * g->cout), 1, flags);
  else
    pterun_parallelize_1d_tile(pool, dw_rows, &j, (size_t)(g->n * g->out[1]), 1, flags);
}
