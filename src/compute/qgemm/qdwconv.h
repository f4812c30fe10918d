/* int8 depthwise convolution of libpterun_compute: the per-ISA variants of
 * the NCHW band loop (qdwconv_tmpl.h) and the NHWC pixel loop
 * (qdwconv_nhwc_tmpl.h) (internal; qdwconv.c dispatches). */
#ifndef PTERUN_SRC_COMPUTE_QGEMM_QDWCONV_H_
#define PTERUN_SRC_COMPUTE_QGEMM_QDWCONV_H_

#include <stddef.h>
#include <stdint.h>

#include "src/compute/internal.h"

/* int16 elements of a variant's staging buffer (on its stack: 8 KiB): a
 * band of padded input rows, each split into its stride phases. */
#define PC_QDW_STAGE 4096
/* Output columns summed at a time (int32 on the stack). */
#define PC_QDW_TILE 512

typedef struct pc_qdw_args {
  const pterun_compute_dwconv2d* p;
  const uint8_t* in; /* raw bytes of in_signed ? int8 : uint8 */
  int in_signed;
  const int8_t* w;
  const pterun_compute_qs8_epilogue* ep;
  void* out;
  int32_t out_dtype;
} pc_qdw_args;

/* The staged loop's padded row: the columns the outputs read
 * ((out_w - 1) * stride_w + (kernel_w - 1) * dilation_w + 1), rounded up to
 * whole stride phases; 0 when that or a band of one output row does not fit
 * the staging buffer (qdwconv.c's direct loop then runs the geometry). */
static inline size_t pc_qdw_row(const pterun_compute_dwconv2d* p) {
  const uint64_t lim = PC_QDW_STAGE, sw = p->stride_w;
  if (p->out_w > lim || sw > lim || p->kernel_w > lim || p->dilation_w > lim || p->kernel_h > lim ||
      p->dilation_h > lim)
    return 0;
  const uint64_t cols =
      ((uint64_t)p->out_w - 1) * sw + ((uint64_t)p->kernel_w - 1) * p->dilation_w + 1;
  const uint64_t row = (cols + sw - 1) / sw * sw;
  const uint64_t eff_kh = (uint64_t)p->dilation_h * (p->kernel_h - 1) + 1;
  return row <= lim && eff_kh * row <= lim ? (size_t)row : 0;
}

/* Output planes [pl0, pl0 + npl) (plane = batch * out_c + channel) of a
 * stageable geometry. */
typedef void (*pc_qdw_fn)(const pc_qdw_args* a, size_t pl0, size_t npl);

/* NHWC (qdwconv_nhwc_tmpl.h): taps summed at once per pixel (a filter up to
 * this many taps; pterun_compute_qs8_dwconv2d_nhwc refuses larger ones), a
 * pixel's channels in runs of PC_QDWN_CHUNK. */
#define PC_QDWN_MAX_TAPS 64
#define PC_QDWN_CHUNK 256
typedef struct pc_qdwn_args {
  const pterun_compute_dwconv2d* p;
  const uint8_t* in; /* raw bytes of in_signed ? int8 : uint8 */
  int in_signed;
  const int16_t* w;    /* [kernel_h * kernel_w][out_c] */
  const int32_t* bias; /* [out_c] or NULL */
  const pterun_compute_qs8_epilogue* ep;
  void* out;
  int32_t out_dtype;
} pc_qdwn_args;
/* Output rows [row0, row0 + nrows) of batch * out_h. */
typedef void (*pc_qdwn_fn)(const pc_qdwn_args* a, size_t row0, size_t nrows);
void pc_qs8_dwconv__base(const pc_qdw_args* a, size_t pl0, size_t npl);
void pc_qs8_dwconv__avx2(const pc_qdw_args* a, size_t pl0, size_t npl);
void pc_qs8_dwconv__avx512f(const pc_qdw_args* a, size_t pl0, size_t npl);
void pc_qs8_dwconv__avx512bw(const pc_qdw_args* a, size_t pl0, size_t npl);
void pc_qs8_dwconv_nhwc__base(const pc_qdwn_args* a, size_t row0, size_t nrows);
void pc_qs8_dwconv_nhwc__avx2(const pc_qdwn_args* a, size_t row0, size_t nrows);
void pc_qs8_dwconv_nhwc__avx512f(const pc_qdwn_args* a, size_t row0, size_t nrows);
void pc_qs8_dwconv_nhwc__avx512bw(const pc_qdwn_args* a, size_t row0, size_t nrows);

#endif
