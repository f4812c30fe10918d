/* f32 direct NCHW convolution for few input channels
 * (pterun_compute_f32_conv2d_nchw), internal: the per-ISA variants and the
 * row-buffer layout they share with the dispatch. */
#ifndef PTERUN_SRC_COMPUTE_CONV_CONV_H_
#define PTERUN_SRC_COMPUTE_CONV_CONV_H_

#include <stddef.h>

#include "src/compute/internal.h"

/* Floats of a variant's input-band buffer (on its stack), and the size a band
 * aims for (so it stays in a 32 KiB L1 next to the weights). */
#define PC_CV_BUF 8192
#define PC_CV_BAND 4096
/* Floats of a variant's packed weights (on its stack): the blocks of all its
 * output channels when they fit. */
#define PC_CV_WPACK 4096

/* The band buffer: per input channel, bh padded input rows, each stored as
 * stride_w phases of pw floats (phase f holds padded columns f, f + sw, ..),
 * so the taps of an output row read plain vectors at any stride. */
typedef struct pc_cv_layout {
  size_t pw;   /* floats per phase */
  size_t rs;   /* floats per row: stride_w * pw */
  size_t band; /* output rows per band */
  size_t bh;   /* input rows per band and channel */
} pc_cv_layout;

/* Layout for `lanes`-float vectors; 0 when even one output row does not fit
 * the buffer (or a size is absurd). */
static inline int pc_cv_layout_for(const pterun_compute_conv2d* p, size_t lanes, pc_cv_layout* l) {
  const size_t lim = 4096; /* keeps every product below in range */
  if (p->out_w > lim || p->kernel_w > lim || p->kernel_h > lim || p->stride_w > lim ||
      p->stride_h > lim || p->dilation_w > lim || p->dilation_h > lim || p->in_c > lim)
    return 0;
  const size_t nvec = (p->out_w + lanes - 1) / lanes;
  l->pw = nvec * lanes + (p->kernel_w - 1) * p->dilation_w / p->stride_w;
  l->rs = p->stride_w * l->pw;
  const size_t kspan = (p->kernel_h - 1) * p->dilation_h + 1;
  if (kspan > PC_CV_BUF || p->in_c * kspan * l->rs > PC_CV_BUF) return 0;
  size_t band = 1;
  while (band < p->out_h && p->in_c * (band * p->stride_h + kspan) * l->rs <= PC_CV_BAND) ++band;
  l->band = band;
  l->bh = (band - 1) * p->stride_h + kspan;
  return 1;
}

/* Output rows [row0, row0 + nrows) of batch * out_h (a row is one (batch,
 * out_h) pair) for output channels [oc0, oc0 + noc). */
typedef void (*pc_cv_fn)(const pterun_compute_conv2d* p, const float* in, const float* w,
                         const float* bias, float* out, size_t row0, size_t nrows, size_t oc0,
                         size_t noc);

#define PC_CV_DECLARE(isa)                                                                         \
  void pc_f32_conv2d__##isa(const pterun_compute_conv2d* p, const float* in, const float* w,       \
                            const float* bias, float* out, size_t row0, size_t nrows, size_t oc0,  \
                            size_t noc);
PC_CV_DECLARE(v4)
PC_CV_DECLARE(avx2)
PC_CV_DECLARE(avx512f)
#undef PC_CV_DECLARE

#endif
