/* f32 NHWC depthwise convolution of libpterun_compute: the per-width
 * variants (internal). Each computes output rows [row0, row0 + nrows) of
 * pterun_compute_f32_dwconv2d_nhwc (a row is one (batch, out_h) pair). */
#ifndef PTERUN_SRC_COMPUTE_DWCONV_DWCONV_H_
#define PTERUN_SRC_COMPUTE_DWCONV_DWCONV_H_

#include <stddef.h>

#include "pterun/compute.h"

typedef void (*pc_dw_fn)(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                         const float* bias, float* out, size_t row0, size_t nrows);

void pc_f32_dwconv__v4(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                       const float* bias, float* out, size_t row0, size_t nrows);
void pc_f32_dwconv__avx2(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                         const float* bias, float* out, size_t row0, size_t nrows);
void pc_f32_dwconv__avx512f(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                            const float* bias, float* out, size_t row0, size_t nrows);

/* NCHW: planes [row0, row0 + nrows) of batch * out_c
 * (pterun_compute_f32_dwconv2d_nchw). */
void pc_f32_dwconv_nchw__v4(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                            const float* bias, float* out, size_t row0, size_t nrows);
void pc_f32_dwconv_nchw__avx2(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                              const float* bias, float* out, size_t row0, size_t nrows);
void pc_f32_dwconv_nchw__avx512f(const pterun_compute_dwconv2d* p, const float* in, const float* w,
                                 const float* bias, float* out, size_t row0, size_t nrows);

#endif
