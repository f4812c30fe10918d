/* The direct convolution paths: the gather loop (transposed convolutions,
 * integer dtypes, layouts the GEMM path does not take) and the compute
 * engine's direct kernel for dense NCHW float32 2-D convolutions with few
 * input channels. */
#include <inttypes.h>

#include "kernels/portable/conv/conv.h"

/* Direct gather loop, double accumulation: any dtype, transposed or not. */
void pk_conv_direct(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* w,
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

/* Input channels up to which a dense 2-D convolution runs direct. A network's
 * stem (3 channels, 3x3: K = 27) gains 1.5x over the GEMM, whose K loop is
 * too short to pay for loading and storing its C tiles; a 1x1 stride-2
 * downsample with 32 or 64 channels (K = 32, 64) on a small image lost
 * 1.3-2.6x (ResNet). */
#define NN_CONV_DIRECT_MAX_CIN 4
_Static_assert(NN_CONV_PACKED_ONLY_MIN_CIN == NN_CONV_DIRECT_MAX_CIN + 1,
               "conv.h: the packed-only convolutions must never run direct");
/* Output columns below which it does not: its vectors run along an output
 * row, so a narrow one leaves lanes idle and little to overlap. A keyword-
 * spotting stem (1 channel, 10x4, 5 output columns) took 47 us direct and
 * 18 us on the GEMM over all its pixels; 3-channel stems with 32-64 columns
 * keep gaining 1.1-3x direct (bench resnet8, mobilenet, mobilenetv1_025). */
#define NN_CONV_DIRECT_MIN_OUT_W 16

/* A dense float32 2-D convolution with few input channels and a short
 * reduction (Cin * KH * KW <= 64) runs as the compute engine's direct
 * convolution. Returns 0 when it ran. */
int pk_conv_small_cin_f32(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                          const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                          const pterun_compute_gemm_opts* act) {
  int64_t KH = g->k[1], KW = g->k[2];
  if (g->groups != 1 || g->icpg > NN_CONV_DIRECT_MAX_CIN || g->out[2] < NN_CONV_DIRECT_MIN_OUT_W ||
      out->dtype != PTERUN_DTYPE_F32 || in->rank != 4 ||
      g->icpg * KH * KW > PTERUN_COMPUTE_CONV2D_MAX_TAPS || !nchw_dense(g, w, bias))
    return -1;
  pterun_compute_conv2d p;
  pk_conv2d_desc(g, act, &p);
  return pterun_compute_f32_conv2d_nchw(
      pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx), &p, (const float*)in->data,
      (const float*)w->data, bias != NULL ? (const float*)bias->data : NULL, (float*)out->data);
}
