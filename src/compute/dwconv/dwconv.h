/* f32 NHWC depthwise convolution of libpterun_compute: the per-width
 * variants (internal). Each computes output rows [row0, row0 + nrows) of
 * pterun_compute_f32_dwconv2d_nhwc (a row is one (batch, out_h) pair). */
#ifndef PTERUN_SRC_COMPUTE_DWCONV_DWCONV_H_
#define PTERUN_SRC_COMPUTE_DWCONV_DWCONV_H_

#include <stddef.h>

#include "src/compute/internal.h"

typedef void (*pc_dw_fn)(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                         const float* bias, float* out, size_t row0, size_t nrows);

/* Variant `isa` of both layouts: pc_f32_dwconv__<isa> (NHWC output rows) and
 * pc_f32_dwconv_nchw__<isa> (NCHW: planes [row0, row0 + nrows) of
 * batch * out_c, pterun_compute_f32_dwconv2d_nchw). */
#define PC_DW_DECLARE(isa)                                                                         \
  void pc_f32_dwconv__##isa(const pterun_compute_dwconv2d* p, const float* in, const float* w,     \
                            const float* bias, float* out, size_t row0, size_t nrows);             \
  void pc_f32_dwconv_nchw__##isa(const pterun_compute_dwconv2d* p, const float* in,                \
                                 const float* w, const float* bias, float* out, size_t row0,       \
                                 size_t nrows);
PC_DW_DECLARE(v4)
PC_DW_DECLARE(avx2)
PC_DW_DECLARE(avx512f)
#undef PC_DW_DECLARE

#endif
