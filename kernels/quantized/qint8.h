/* The fused int8 operators of libpterun_kernels_quantized (q_int8.c): what a
 * call carries once its arguments are read (q_int8_ops.c reads them from the
 * fused operator's schema), and the prepare / execute entry points. */
#ifndef PTERUN_KERNELS_QUANTIZED_QINT8_H_
#define PTERUN_KERNELS_QUANTIZED_QINT8_H_

#include "kernels/quantized/qutil.h"

/* A weight quantized per channel (scales tensor) or per tensor (scale). */
typedef struct qk_i8_wq {
  const pterun_tensor* w;      /* int8 constant */
  const pterun_tensor* scales; /* per channel (axis 0); NULL: per tensor */
  const pterun_tensor* zps;    /* per channel; NULL: zero */
  double scale;                /* per tensor */
  int64_t zp;
} qk_i8_wq;

/* Output quantization (static) and the fused activation's range. */
typedef struct qk_i8_out {
  double scale;
  int64_t zp, qmin, qmax, dtype;
  int has_min, has_max; /* relu: min 0; hardtanh: both */
  double min, max;
} qk_i8_out;

typedef struct qk_i8_call {
  int conv;    /* conv2d (else linear) */
  int dynamic; /* input q-params are tensors computed at run time (linear, float output) */
  pterun_tensor* x;
  int64_t x_dtype;                   /* int8 / uint8 */
  double x_scale;                    /* static */
  int64_t x_zp;                      /* static */
  pterun_tensor *x_scale_t, *x_zp_t; /* dynamic: f64[1], i64[1] */
  qk_i8_wq wq;
  int w_kn; /* linear: the weight is [K, N] (permute_copy was the identity), else [N, K] */
  pterun_tensor* bias;                        /* f32, NULL: none */
  const int64_t *stride, *padding, *dilation; /* conv: 2 each */
  int64_t groups;
  qk_i8_out out; /* static: output quantization; both: activation range */
  pterun_tensor* outt;
  /* conv2d_q8_hardtanh_q8: the hardtanh_q8 chain (dequantize, hardtanh,
   * quantize) after the output quantization `out` */
  int lut;
  qk_q8 lut_in, lut_out;
  float lut_lo, lut_hi;
} qk_i8_call;

/* The dequantize -> hardtanh(lo, hi) -> quantize chain on every 8-bit code
 * (q_int8_lut.c: what hardtanh_q8 runs, so the same bytes). */
pterun_status qk_lut_hardtanh_table(pterun_kernel_context* ctx, const qk_q8* in, float lo, float hi,
                                    const qk_q8* out, uint8_t table[256]);

/* Load time: packs the weight and precomputes scales into the kernel state.
 * OK without state when the weight is not a constant int8 tensor. */
pterun_status qk_i8_prepare(pterun_kernel_context* ctx, const qk_i8_call* call);
/* Run time. */
pterun_status qk_i8_execute(pterun_kernel_context* ctx, const qk_i8_call* call);

#endif /* PTERUN_KERNELS_QUANTIZED_QINT8_H_ */
