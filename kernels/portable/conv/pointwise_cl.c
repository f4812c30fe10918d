/* A 1x1 unit-stride unpadded float32 convolution whose input and output are
 * channels-last (the layout pass's depthwise-separable chains): the pixels
 * are the rows of both, so the convolution is one product over all of them,
 * out[P][Cout] = in[P][Cin] x W^T, with W^T packed at load as the product's
 * B -- a linear layer's shape (no image packing, no strided output). */
#include <string.h>

#include "kernels/portable/conv/conv.h"

int pk_fill_bias_rows(float* y, int64_t rows, int64_t cols, const pterun_tensor* bias) {
  if (bias == NULL || rows < 1) return 0;
  const float* bf = bias->data; /* float32: the callers' dispatch checked */
  for (int64_t c = 0; c < cols; ++c) y[c] = bf[c * bias->strides[0]];
  /* the rows filled so far copied after themselves: log2(rows) copies, not
   * one call per row of a few hundred bytes */
  for (int64_t done = 1; done < rows;) {
    const int64_t n = done < rows - done ? done : rows - done;
    memcpy(y + done * cols, y, (size_t)(n * cols) * sizeof(float));
    done += n;
  }
  return 1;
}

void pk_pack_b_scaled(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                      int64_t nr) {
  const pk_scaled_b* sb = ctx;
  for (int64_t js = 0; js < nc; js += nr, dst += kc * nr) {
    const int64_t w = nc - js < nr ? nc - js : nr;
    for (int64_t kk = 0; kk < kc; ++kk) {
      float* row = dst + kk * nr;
      const float* src = sb->w + (k0 + kk) * sb->rs + (j0 + js) * sb->cs;
      for (int64_t c = 0; c < w; ++c)
        row[c] = (float)((double)src[c * sb->cs] * sb->scale[j0 + js + c]);
      for (int64_t c = w; c < nr; ++c) row[c] = 0.0f;
    }
  }
}

void pk_conv_pointwise_cl(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                          const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                          const pterun_compute_gemm_opts* act) {
  const int64_t P = g->n * g->out[1] * g->out[2], cin = g->cin, cout = g->cout;
  float* y = out->data;
  const int accumulate = pk_fill_bias_rows(y, P, cout, bias);
  pterun_compute_gemm_ws ws;
  pterun_compute_matrix a = {in->data, PTERUN_DTYPE_F32, cin, 1};
  pterun_compute_matrix b = {w->data, w->dtype, g->ws[1], g->ws[0]};
  pterun_compute_matrix c = {y, PTERUN_DTYPE_F32, cout, 1};
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  if (act != NULL) o = *act;
  o.packed_a = NULL;
  o.bias = NULL;
  o.packed_b = pk_prepacked_for(ctx, w, cin, cout);
  /* W^T held only packed and scaled (a folded batch norm, pk_prepacked
   * .packed_only): a product the packed copy does not fit repacks it from
   * the unfolded weight, scaled the same way */
  const pk_prepacked* ps = pterun_kernel_state(ctx);
  pk_scaled_b sb = {w->data, g->ws[1], g->ws[0], ps != NULL ? ps->col_scale : NULL};
  if (ps != NULL && ps->packed_only && ps->src == w->data) {
    o.pack_b = pk_pack_b_scaled;
    o.pack_b_ctx = &sb;
  }
  pterun_compute_gemm_init(ctx, &ws, PTERUN_DTYPE_F32);
  pterun_compute_gemm_ex(&ws, P, cout, cin, &a, &b, &c, 1.0, accumulate, &o);
}
