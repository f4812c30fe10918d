/* Internal helpers of libpterun_kernels_quantized: argument access, dtype
 * conversion and the exact float32 quantize/dequantize element steps.
 * See docs/quantized.md for the numerical contract. */
#ifndef PTERUN_KERNELS_QUANTIZED_QUTIL_H_
#define PTERUN_KERNELS_QUANTIZED_QUTIL_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pterun/kernel.h"
#include "pterun/kernel_util.h"

/* ---- arguments (each fails the kernel naming the argument) ----
 * Argument accessors, output resizing and the kernel macros are the kit's
 * (pterun/kernel.h, pterun/kernel_util.h). */
/* Tensor checks beyond the kit's pterun_check_dtype / pterun_check_data /
 * pterun_check_contiguous. */
/* A quantization scale: finite and > 0 in float32, with a finite reciprocal
 * both in float32 and as the double reciprocal rounded to float (the two
 * ways the kernels compute it). *out = (float)scale. */
pterun_status qk_check_scale(pterun_kernel_context* ctx, const char* name, double scale,
                             float* out);
/* A zero point that fits int32. */
pterun_status qk_check_zp(pterun_kernel_context* ctx, const char* name, int64_t zp);
/* Integer quantized dtypes: u8, i8, i16, u16 (UInt16 and Bits16), i32.
 * Sets the dtype's value range; 0 if not one of them. */
int qk_qdtype_range(int dtype, int64_t* lo, int64_t* hi);

/* ---- float formats (the kit's converters; element load/store is the kit's
 * pterun_load_* / pterun_store_*) ---- */
/* x rounded to half / bfloat16 precision, as a float (ATen Half arithmetic). */
static inline float qk_round_f16(float x) {
  return pterun_f16_to_f32(pterun_f32_to_f16(x));
}
static inline float qk_round_bf16(float x) {
  return pterun_bf16_to_f32(pterun_f32_to_bf16(x));
}

/* The ExecuTorch quantize step on an already scaled float32 product p:
 * round half to even, add the zero point in float32, truncate, clamp. */
static inline int64_t qk_quant_step(float p, float zpf, int64_t qmin, int64_t qmax) {
  int64_t q = pterun_f64_to_i64(zpf + nearbyintf(p)); /* as cvttss2si */
  if (q < qmin) q = qmin;
  if (q > qmax) q = qmax;
  return q;
}

/*
 * Quantizes n contiguous elements of `in` (f32, f64 or f16) starting at
 * element offset `off` into `out` (u8/i8/i16/u16/i32) at the same offset:
 * q = clamp((int64)((float)zp + nearbyintf(inv * x)), qmin, qmax).
 */
void qk_quantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                     float inv, int32_t zp, int64_t qmin, int64_t qmax);
/*
 * Dequantizes n contiguous integers at offset `off`:
 * out = (out type)((float)(q - zp) * s); out f32/f64/f16 (bf16 too).
 * exact_f64: for f64 output use the double product (1-D per-channel path).
 */
void qk_dequantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                       int32_t zp, float s, int exact_1d);

/* ExecuTorch's fbgemm-style choose_qparams on a [min, max] pair.
 * Returns 0, or -1 when min or max is not finite. */
int qk_calc_qparams(float mn, float mx, int32_t qmin, int32_t qmax, double* scale, int32_t* zp);

/* min and max of n >= 1 floats, ExecuTorch's scan (the first element wins
 * when it is NaN; a later NaN is skipped; a zero bound is +0, which
 * qk_calc_qparams treats as -0): pterun_compute_f32_minmax from x[0]. */
void qk_scan_minmax(const float* x, int64_t n, float* mn, float* mx);

/* ---- the fused 8-bit operators (q_int8_*.c) ---- */
/* Per-tensor 8-bit q-params as dequantize/quantize_per_tensor.out list them. */
typedef struct qk_q8 {
  double scale;
  int64_t zp, qmin, qmax, dtype;
} qk_q8;
/* args[i .. i + 4]: scale, zero_point, quant_min, quant_max, dtype of the
 * input (output 0) or output (messages name e.g. 'output_scale'); dtype must
 * be int8 or uint8. */
pterun_status qk_arg_q8(pterun_kernel_context* ctx, pterun_value** args, size_t i, int output,
                        qk_q8* q);
/* Scale, zero point and [quant_min, quant_max] checked as the reference
 * kernels check them; *scale = (float)q->scale. */
pterun_status qk_check_q8(pterun_kernel_context* ctx, const qk_q8* q, float* scale);
/* The reference dequantize (qk_dequantize_run) of every code of q's dtype:
 * table[b] is the float32 value of the code whose byte is b. */
void qk_dequant_table(const qk_q8* q, float scale, float table[256]);
/* An input the memory plan let share the output's bytes: *data is `in`
 * when [in, in + nbytes) and [out, out + out_nbytes) are disjoint, else a
 * copy in scratch or, when the arena is short, in `spare` (spare_cap bytes
 * prepared at load); OUT_OF_MEMORY with a message when neither holds it. */
pterun_status qk_unalias(pterun_kernel_context* ctx, const void* in, size_t nbytes, const void* out,
                         size_t out_nbytes, void* spare, size_t spare_cap, const void** data);

#endif /* PTERUN_KERNELS_QUANTIZED_QUTIL_H_ */
