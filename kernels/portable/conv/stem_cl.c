/* A stem convolution (one group, at most NN_CONV_STEM_CL_MAX_CIN input
 * channels) from an NCHW input into a channels-last output (the layout pass
 * gives a stem that feeds a narrow depthwise chain one): the image is copied
 * zero-padded, its pixels' windows then as rows (K = Cin x KH x KW floats
 * each, in the weight's order, plain copies), and one product per chunk of
 * output rows writes whole output rows, out[P][Cout] = windows[P][K] x W^T,
 * with W^T packed at load as the product's B. A few-channel image is small,
 * so the copies cost little next to the product. */
#include <string.h>

#include "kernels/portable/conv/conv.h"

/* Floats of window rows one chunk holds (64 KiB: the rows stay in L2 for the
 * product); a chunk is whole output rows. */
#define NN_STEM_CHUNK_FLOATS 16384

int64_t pk_conv_stem_cl_rows(int64_t k, int64_t ow, int64_t oh) {
  int64_t per = k > 0 && ow > 0 ? NN_STEM_CHUNK_FLOATS / k / ow : 1;
  if (per < 1) per = 1;
  return per < oh ? per : oh;
}

/* A run of n floats: fixed-size copies (two overlapping ones for 4..8
 * floats: a stem's window row), no library call per row. */
static inline void copy_floats(float* d, const float* s, int64_t n) {
  if (n >= 4 && n <= 8) {
    memcpy(d, s, 4 * sizeof(float));
    memcpy(d + n - 4, s + n - 4, 4 * sizeof(float));
  } else if (n > 8) {
    memcpy(d, s, (size_t)n * sizeof(float));
  } else {
    for (int64_t k = 0; k < n; ++k) d[k] = s[k];
  }
}

size_t pk_conv_stem_cl_pad_floats(int64_t cin, int64_t ih, int64_t iw, int64_t ph, int64_t pw) {
  /* At load (scratch reserve) the sizes and the padding are the program's,
   * unchecked against each other: SIZE_MAX / sizeof(float) when the padded
   * image overflows, which no arena holds. */
  int64_t hp, wp, t, n;
  if (!pk_ck_mul(2, ph, &t) || !pk_ck_add(ih, t, &hp) || !pk_ck_mul(2, pw, &t) ||
      !pk_ck_add(iw, t, &wp) || !pk_ck_mul(hp, wp, &t) || !pk_ck_mul(cin, t, &n) ||
      (uint64_t)n > SIZE_MAX / sizeof(float))
    return SIZE_MAX / sizeof(float);
  return (size_t)n;
}

/* Image n zero-padded into p: [Cin][IH + 2 ph][IW + 2 pw]. */
static void pad_image(const conv_geom* g, const float* x, int64_t n, float* p) {
  const int64_t IH = g->in[1], IW = g->in[2], ph = g->pad[1], pw = g->pad[2];
  const int64_t Hp = IH + 2 * ph, Wp = IW + 2 * pw;
  memset(p, 0, sizeof(float) * (size_t)(g->cin * Hp * Wp));
  for (int64_t c = 0; c < g->cin; ++c)
    for (int64_t y = 0; y < IH; ++y) {
      const float* src = x + n * g->is[0] + c * g->is[1] + y * g->is[3];
      float* d = p + (c * Hp + y + ph) * Wp + pw;
      if (g->is[4] == 1)
        memcpy(d, src, sizeof(float) * (size_t)IW);
      else
        for (int64_t k = 0; k < IW; ++k) d[k] = src[k * g->is[4]];
    }
}

/* Window rows (K = Cin x KH x KW floats, the weight's order) of output rows
 * [oh0, oh0 + noh) from the padded image p into a, one row per output
 * pixel: every window row is a plain copy. */
static void window_rows(const conv_geom* g, const float* p, int64_t oh0, int64_t noh, float* a) {
  const int64_t OW = g->out[2], KH = g->k[1], KW = g->k[2];
  const int64_t Hp = g->in[1] + 2 * g->pad[1], Wp = g->in[2] + 2 * g->pad[2];
  const int64_t K = g->cin * KH * KW, sw = g->stride[2], dw = g->dil[2];
  for (int64_t oh = oh0; oh < oh0 + noh; ++oh)
    for (int64_t c = 0; c < g->cin; ++c)
      for (int64_t kh = 0; kh < KH; ++kh) {
        const float* src = p + (c * Hp + oh * g->stride[1] + kh * g->dil[1]) * Wp;
        float* d = a + (oh - oh0) * OW * K + (c * KH + kh) * KW;
        if (dw == 1)
          for (int64_t ow = 0; ow < OW; ++ow) copy_floats(d + ow * K, src + ow * sw, KW);
        else
          for (int64_t ow = 0; ow < OW; ++ow)
            for (int64_t kw = 0; kw < KW; ++kw) d[ow * K + kw] = src[ow * sw + kw * dw];
      }
}

int pk_conv_stem_cl(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                    const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                    const pterun_compute_gemm_opts* act) {
  const int64_t P = g->out[1] * g->out[2], cout = g->cout;
  const int64_t K = g->cin * g->k[1] * g->k[2];
  const int64_t rows = pk_conv_stem_cl_rows(K, g->out[2], g->out[1]) * g->out[2];
  /* the padded image and the window rows first: the product's workspace
   * takes what is left */
  float* pad = pterun_kernel_scratch(
      ctx,
      sizeof(float) * pk_conv_stem_cl_pad_floats(g->cin, g->in[1], g->in[2], g->pad[1], g->pad[2]),
      64);
  float* a =
      pad != NULL ? pterun_kernel_scratch(ctx, (size_t)(rows * K) * sizeof(float), 64) : NULL;
  if (a == NULL) return -1;
  const float* x = in->data;
  float* y = out->data;
  /* The filter packed for the indirect GEMM (kxk_cl.c): each image copied
   * as channels-last rows with its left and right padding as zero columns
   * (a few channels: a small copy into the padded image's buffer), which
   * the GEMM then reads in place, a window row's taps as one run. */
  const pterun_compute_packed* ig = pk_prepacked_for(ctx, w, K, cout);
  if (ig != NULL && (bias == NULL || bias->strides[0] == 1)) {
    pterun_compute_conv2d p;
    pk_conv2d_desc(g, act, &p);
    const int64_t IH = g->in[1], IW = g->in[2], pw = g->pad[2], Wp = IW + 2 * pw;
    p.batch = 1;
    p.in_w = (size_t)Wp;
    p.pad_left = 0;
    int ran = 1;
    for (int64_t n = 0; n < g->n && ran; ++n) {
      memset(pad, 0, sizeof(float) * (size_t)(IH * Wp * g->cin));
      for (int64_t c = 0; c < g->cin; ++c)
        for (int64_t yy = 0; yy < IH; ++yy)
          for (int64_t xx = 0; xx < IW; ++xx)
            pad[(yy * Wp + xx + pw) * g->cin + c] =
                x[n * g->is[0] + c * g->is[1] + yy * g->is[3] + xx * g->is[4]];
      /* the copy's rows found once (pk_conv_kxk_cl_pack): the same scratch
       * bytes every image and every execute */
      const pk_prepacked* st = pterun_kernel_state(ctx);
      ran =
          pterun_compute_f32_conv2d_nhwc_cached(
              pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx), &p, pad, ig,
              bias != NULL ? bias->data : NULL, y + n * P * cout, st->table, st->table_bytes) == 0;
    }
    if (ran) return 0; /* else a filter packed for the GEMM below: nothing written yet */
  }
  pterun_compute_gemm_ws ws;
  pterun_compute_gemm_init(ctx, &ws, PTERUN_DTYPE_F32);
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  if (act != NULL) o = *act;
  o.packed_a = NULL;
  o.bias = NULL;
  o.packed_b = pk_prepacked_for(ctx, w, K, cout);
  /* W^T: K x Cout, the weight's [Cout][Cin][KH][KW] read with rows of unit step */
  const pterun_compute_matrix b = {w->data, w->dtype, 1, g->ws[0]};
  for (int64_t n = 0; n < g->n; ++n) {
    pad_image(g, x, n, pad);
    for (int64_t p0 = 0; p0 < P; p0 += rows) {
      const int64_t np = P - p0 < rows ? P - p0 : rows;
      float* c0 = y + (n * P + p0) * cout;
      /* the bias fills the rows, the product accumulates onto it */
      const int accumulate = pk_fill_bias_rows(c0, np, cout, bias);
      window_rows(g, pad, p0 / g->out[2], np / g->out[2], a);
      const pterun_compute_matrix am = {a, PTERUN_DTYPE_F32, K, 1};
      const pterun_compute_matrix cm = {c0, PTERUN_DTYPE_F32, cout, 1};
      pterun_compute_gemm_ex(&ws, np, cout, K, &am, &b, &cm, 1.0, accumulate, &o);
    }
  }
  return 0;
}
