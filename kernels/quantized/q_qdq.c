/* quantized_decomposed quantize / dequantize (per tensor, per channel, per
 * token) and choose_qparams*: ExecuTorch's x86-64 numerics
 * (docs/quantized.md). */
#include "kernels/quantized/qutil.h"
#include "pterun/threadpool.h"

#include <inttypes.h>

/* ---- shared validation ---------------------------------------------------- */

/* quantize: input f32/f64/f16; out dtype == dtype, an integer quantized type;
 * quant range inside the dtype's range. */
static pterun_status check_quant_args(pterun_kernel_context* ctx, const pterun_tensor* in,
                                      int64_t qmin, int64_t qmax, int64_t dtype,
                                      const pterun_tensor* out) {
  int64_t lo, hi;
  if (in->dtype != PTERUN_DTYPE_F32 && in->dtype != PTERUN_DTYPE_F64 &&
      in->dtype != PTERUN_DTYPE_F16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported (float32, float64, float16)",
                           pterun_dtype_name(in->dtype));
  if (out->dtype != dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s does not match dtype argument %s",
                           pterun_dtype_name(out->dtype), pterun_dtype_name((int)dtype));
  if (!qk_qdtype_range(out->dtype, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': %s is not a supported quantized dtype",
                           pterun_dtype_name(out->dtype));
  if (qmin < lo || qmax > hi || qmin > qmax)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'quant_min'/'quant_max': [%" PRId64 ", %" PRId64
                           "] must be ordered and inside [%" PRId64 ", %" PRId64 "] of %s",
                           qmin, qmax, lo, hi, pterun_dtype_name(out->dtype));
  return PTERUN_STATUS_OK;
}

/* dequantize: input dtype == dtype (u8/i8/i16/u16/i32); out f32/f64/f16/bf16
 * and == out_dtype when given; qmin <= qmax. */
static pterun_status check_dequant_args(pterun_kernel_context* ctx, const pterun_tensor* in,
                                        int64_t qmin, int64_t qmax, int64_t dtype,
                                        int has_out_dtype, int64_t out_dtype,
                                        const pterun_tensor* out) {
  int64_t lo, hi;
  if (!qk_qdtype_range(in->dtype, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s is not a quantized integer dtype",
                           pterun_dtype_name(in->dtype));
  if (in->dtype != dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s does not match dtype argument %s",
                           pterun_dtype_name(in->dtype), pterun_dtype_name((int)dtype));
  if (has_out_dtype && out->dtype != out_dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s does not match out_dtype %s",
                           pterun_dtype_name(out->dtype), pterun_dtype_name((int)out_dtype));
  if (!pterun_dtype_is_float(out->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s is not a floating type",
                           pterun_dtype_name(out->dtype));
  if (qmin > qmax)
    return PTERUN_FAIL_ARG(ctx, "arg 'quant_min': %" PRId64 " is greater than quant_max %" PRId64,
                           qmin, qmax);
  return PTERUN_STATUS_OK;
}

/* ---- per tensor ----------------------------------------------------------- */

/* One per-tensor step: quantize (x / s rounded, + zp, clamped) or dequantize
 * ((q - zp) * s), qk_quantize_run's and qk_dequantize_run's arithmetic. */
typedef struct qdq_step {
  int quant;
  float s; /* quantize: 1 / scale; dequantize: scale */
  int32_t zp;
  int64_t qmin, qmax;
} qdq_step;

static void qdq_run(const qdq_step* st, const void* in, int in_dt, void* out, int out_dt,
                    int64_t n) {
  if (st->quant)
    qk_quantize_run(in, in_dt, out, out_dt, 0, n, st->s, st->zp, st->qmin, st->qmax);
  else
    qk_dequantize_run(in, in_dt, out, out_dt, 0, n, st->zp, st->s, 0);
}

/* Elements from which one run is split over the pool, its tiles, and one
 * thread's cost per element in picoseconds for the pool's split rule
 * (docs/performance.md, "Thread thresholds"; the SSE2 quantize loop). */
#define QK_QDQ_PARALLEL_MIN ((int64_t)1 << 14)
#define QK_QDQ_TILE 8192
#define QK_QDQ_PS 350

typedef struct qdq_job {
  const qdq_step* st;
  const pterun_tensor *in, *out;
} qdq_job;

/* Elements [start, start + count): each element's result depends on it
 * alone, so any split gives the same bytes. */
static void qdq_tile(void* ctx, size_t start, size_t count) {
  const qdq_job* j = (const qdq_job*)ctx;
  const size_t isz = pterun_dtype_size(j->in->dtype), osz = pterun_dtype_size(j->out->dtype);
  qdq_run(j->st, (const char*)j->in->data + start * isz, j->in->dtype,
          (char*)j->out->data + start * osz, j->out->dtype, (int64_t)count);
}

/* The step over every element: one run when in and out share a layout
 * (split over the pool when large: a dynamic linear's activations), else
 * element by element in out's logical order (a channels-last code tensor of
 * a fused int8 chain whose kernel declined: the load-time layout pass,
 * src/optimize/method_layout.c). */
static void qdq_any_layout(pterun_kernel_context* ctx, const qdq_step* st, const pterun_tensor* in,
                           pterun_tensor* out) {
  if (in->numel == 0) return;
  if (pterun_same_layout(in, out)) {
    const qdq_job j = {st, in, out};
    pterun_threadpool* pool =
        in->numel >= QK_QDQ_PARALLEL_MIN ? pterun_kernel_threadpool(ctx) : NULL;
    pterun_parallelize_1d_tile(pool, qdq_tile, (void*)&j, (size_t)in->numel, QK_QDQ_TILE,
                               PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                                   PTERUN_PARALLEL_WORK_NS((double)in->numel * QK_QDQ_PS / 1000.0));
    return;
  }
  const pterun_tensor* ins[1] = {in};
  pterun_iter it;
  const size_t isz = pterun_dtype_size(in->dtype), osz = pterun_dtype_size(out->dtype);
  pterun_iter_init(&it, out, ins, 1);
  for (int64_t n = 0; n < out->numel; ++n, pterun_iter_next(&it))
    qdq_run(st, (const char*)in->data + (size_t)it.off[1] * isz, in->dtype,
            (char*)out->data + (size_t)it.off[0] * osz, out->dtype, 1);
}

static pterun_status quant_tensor(pterun_kernel_context* ctx, pterun_tensor* in, double scale,
                                  int64_t zp, int64_t qmin, int64_t qmax, int64_t dtype,
                                  pterun_tensor* out) {
  float s = 1.0f;
  PTERUN_TRY(check_quant_args(ctx, in, qmin, qmax, dtype, out));
  PTERUN_TRY(qk_check_scale(ctx, "scale", scale, &s));
  PTERUN_TRY(qk_check_zp(ctx, "zero_point", zp));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  const qdq_step st = {1, 1.0f / s, (int32_t)zp, qmin, qmax};
  qdq_any_layout(ctx, &st, in, out);
  return PTERUN_STATUS_OK;
}

static pterun_status dequant_tensor(pterun_kernel_context* ctx, pterun_tensor* in, double scale,
                                    int64_t zp, int64_t qmin, int64_t qmax, int64_t dtype,
                                    int has_od, int64_t od, pterun_tensor* out) {
  float s = 1.0f;
  PTERUN_TRY(check_dequant_args(ctx, in, qmin, qmax, dtype, has_od, od, out));
  PTERUN_TRY(qk_check_scale(ctx, "scale", scale, &s));
  PTERUN_TRY(qk_check_zp(ctx, "zero_point", zp));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  const qdq_step st = {0, s, (int32_t)zp, qmin, qmax};
  qdq_any_layout(ctx, &st, in, out);
  return PTERUN_STATUS_OK;
}

/* Scale / zero point of the .Tensor_out variants: f64[1] and i64[1]. */
static pterun_status read_qparam_tensors(pterun_kernel_context* ctx, const pterun_tensor* st,
                                         const pterun_tensor* zt, double* scale, int64_t* zp) {
  PTERUN_TRY(pterun_check_dtype(ctx, st, "scale", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, zt, "zero_point", PTERUN_DTYPE_I64));
  if (st->numel != 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'scale': expected one element, got %" PRId64, st->numel);
  if (zt->numel != 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': expected one element, got %" PRId64, zt->numel);
  PTERUN_TRY(pterun_check_data(ctx, st, "scale"));
  PTERUN_TRY(pterun_check_data(ctx, zt, "zero_point"));
  *scale = ((const double*)st->data)[0];
  *zp = ((const int64_t*)zt->data)[0];
  return PTERUN_STATUS_OK;
}

/* quantize_per_tensor.out(input, float scale, int zero_point, int quant_min,
 *   int quant_max, ScalarType dtype, *, out) */
PTERUN_KERNEL(qk_quantize_per_tensor_out) {
  pterun_tensor *in, *out;
  double scale;
  int64_t zp, qmin, qmax, dtype;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "scale", &scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "zero_point", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  return quant_tensor(ctx, in, scale, zp, qmin, qmax, dtype, out);
}

/* quantize_per_tensor.Tensor_out(input, Tensor scale, Tensor zero_point, ...) */
PTERUN_KERNEL(qk_quantize_per_tensor_tensor_out) {
  pterun_tensor *in, *st, *zt, *out;
  double scale;
  int64_t zp, qmin, qmax, dtype;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scale", &st));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "zero_point", &zt));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  PTERUN_TRY(read_qparam_tensors(ctx, st, zt, &scale, &zp));
  return quant_tensor(ctx, in, scale, zp, qmin, qmax, dtype, out);
}

/* dequantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max,
 *   dtype, *, ScalarType? out_dtype, out) */
PTERUN_KERNEL(qk_dequantize_per_tensor_out) {
  pterun_tensor *in, *out;
  double scale;
  int64_t zp, qmin, qmax, dtype, od;
  int has_od;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "scale", &scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "zero_point", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 6, "out_dtype", &od, &has_od));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  return dequant_tensor(ctx, in, scale, zp, qmin, qmax, dtype, has_od, od, out);
}

PTERUN_KERNEL(qk_dequantize_per_tensor_tensor_out) {
  pterun_tensor *in, *st, *zt, *out;
  double scale;
  int64_t zp, qmin, qmax, dtype, od;
  int has_od;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scale", &st));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "zero_point", &zt));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 6, "out_dtype", &od, &has_od));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  PTERUN_TRY(read_qparam_tensors(ctx, st, zt, &scale, &zp));
  return dequant_tensor(ctx, in, scale, zp, qmin, qmax, dtype, has_od, od, out);
}

/* ---- per channel / per token ---------------------------------------------- */

/* Validates a per-channel parameter tensor with `count` elements. */
static pterun_status check_param(pterun_kernel_context* ctx, const pterun_tensor* t,
                                 const char* name, int64_t count) {
  if (t->numel != count)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': expected %" PRId64 " elements, got %" PRId64, name,
                           count, t->numel);
  return pterun_check_data(ctx, t, name);
}

/* Per-channel quantize of a contiguous tensor viewed as [outer, C, inner]. */
static pterun_status quant_channels(pterun_kernel_context* ctx, const pterun_tensor* in,
                                    const pterun_tensor* scales, const pterun_tensor* zps,
                                    int64_t outer, int64_t C, int64_t inner, int64_t qmin,
                                    int64_t qmax, pterun_tensor* out) {
  int64_t o, c;
  const double* sd = (const double*)scales->data;
  const int64_t* zd = (const int64_t*)zps->data;
  for (c = 0; c < C; ++c) {
    float s;
    PTERUN_TRY(qk_check_scale(ctx, "scales", sd[c], &s));
    PTERUN_TRY(qk_check_zp(ctx, "zero_points", zd[c]));
  }
  for (o = 0; o < outer; ++o)
    for (c = 0; c < C; ++c) {
      float s = (float)sd[c];
      qk_quantize_run(in->data, in->dtype, out->data, out->dtype, (o * C + c) * inner, inner,
                      1.0f / s, (int32_t)zd[c], qmin, qmax);
    }
  return PTERUN_STATUS_OK;
}

/* quantize_per_channel.out(input, Tensor scales, Tensor zero_points, int axis,
 *   qmin, qmax, dtype, *, out) */
PTERUN_KERNEL(qk_quantize_per_channel_out) {
  pterun_tensor *in, *sc, *zp, *out;
  int64_t axis, qmin, qmax, dtype, outer = 1, inner = 1, C;
  int d;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &sc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "axis", &axis));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  PTERUN_TRY(check_quant_args(ctx, in, qmin, qmax, dtype, out));
  if (in->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': must have at least one dimension");
  if (axis < -(int64_t)in->rank || axis >= (int64_t)in->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'axis': %" PRId64 " out of range for rank %d", axis, in->rank);
  if (axis < 0) axis += in->rank;
  PTERUN_TRY(pterun_check_dtype(ctx, sc, "scales", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, zp, "zero_points", PTERUN_DTYPE_I64));
  C = in->sizes[axis];
  PTERUN_TRY(check_param(ctx, sc, "scales", C));
  PTERUN_TRY(check_param(ctx, zp, "zero_points", C));
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  for (d = 0; d < axis; ++d) outer *= in->sizes[d];
  for (d = (int)axis + 1; d < in->rank; ++d) inner *= in->sizes[d];
  if (in->numel == 0) return PTERUN_STATUS_OK;
  return quant_channels(ctx, in, sc, zp, outer, C, inner, qmin, qmax, out);
}

/* Per-channel dequantize of a contiguous tensor viewed as [outer, C, inner].
 * zps: NULL, i32 or i64. exact_1d: ExecuTorch's 1-D expression. */
static pterun_status dequant_channels(pterun_kernel_context* ctx, const pterun_tensor* in,
                                      const pterun_tensor* scales, const pterun_tensor* zps,
                                      int64_t outer, int64_t C, int64_t inner, int64_t qmin,
                                      int64_t qmax, int fast_path_checks, int exact_1d,
                                      pterun_tensor* out) {
  int64_t o, c;
  for (c = 0; c < C; ++c) {
    float s;
    int64_t z = zps ? pterun_load_i64(zps->data, zps->dtype, c) : 0;
    PTERUN_TRY(qk_check_scale(ctx, "scales", pterun_load_f64(scales->data, scales->dtype, c), &s));
    PTERUN_TRY(qk_check_zp(ctx, "zero_points", z));
    if (fast_path_checks && (z < qmin || z > qmax))
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'zero_points': %" PRId64
                             " outside [quant_min, quant_max] = [%" PRId64 ", %" PRId64 "]",
                             z, qmin, qmax);
  }
  for (o = 0; o < outer; ++o)
    for (c = 0; c < C; ++c) {
      float s = (float)pterun_load_f64(scales->data, scales->dtype, c);
      int64_t z = zps ? pterun_load_i64(zps->data, zps->dtype, c) : 0;
      qk_dequantize_run(in->data, in->dtype, out->data, out->dtype, (o * C + c) * inner, inner,
                        (int32_t)z, s, exact_1d);
    }
  return PTERUN_STATUS_OK;
}

static pterun_status check_scales_zps(pterun_kernel_context* ctx, const pterun_tensor* sc,
                                      const pterun_tensor* zp, int64_t count) {
  if (sc->dtype != PTERUN_DTYPE_F64 && sc->dtype != PTERUN_DTYPE_F32)
    return PTERUN_FAIL_ARG(ctx, "arg 'scales': dtype %s is not float64 or float32",
                           pterun_dtype_name(sc->dtype));
  PTERUN_TRY(check_param(ctx, sc, "scales", count));
  if (zp != NULL) {
    if (zp->dtype != PTERUN_DTYPE_I64 && zp->dtype != PTERUN_DTYPE_I32)
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_points': dtype %s is not int64 or int32",
                             pterun_dtype_name(zp->dtype));
    PTERUN_TRY(check_param(ctx, zp, "zero_points", count));
  }
  return PTERUN_STATUS_OK;
}

/* dequantize_per_channel.out(input, Tensor scales, Tensor? zero_points, int axis,
 *   qmin, qmax, dtype, *, ScalarType? out_dtype, out) */
PTERUN_KERNEL(qk_dequantize_per_channel_out) {
  pterun_tensor *in, *sc, *zp, *out;
  int64_t axis, qmin, qmax, dtype, od, outer = 1, inner = 1, C;
  int has_od, d, fast;
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "axis", &axis));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 7, "out_dtype", &od, &has_od));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "out", &out));
  PTERUN_TRY(check_dequant_args(ctx, in, qmin, qmax, dtype, has_od, od, out));
  if (in->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': must have at least one dimension");
  if (axis < -(int64_t)in->rank || axis >= (int64_t)in->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'axis': %" PRId64 " out of range for rank %d", axis, in->rank);
  if (axis < 0) axis += in->rank;
  C = in->sizes[axis];
  PTERUN_TRY(check_scales_zps(ctx, sc, zp, C));
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  for (d = 0; d < axis; ++d) outer *= in->sizes[d];
  for (d = (int)axis + 1; d < in->rank; ++d) inner *= in->sizes[d];
  /* ExecuTorch's int8 -> float fast path also requires qmin <= zp <= qmax. */
  fast = in->dtype == PTERUN_DTYPE_I8 && (!has_od || od == PTERUN_DTYPE_F32);
  if (in->numel == 0) return PTERUN_STATUS_OK;
  return dequant_channels(ctx, in, sc, zp, outer, C, inner, qmin, qmax, fast, in->rank == 1, out);
}

/* [T, L] view: T = product of all dims but the last. */
static pterun_status token_view(pterun_kernel_context* ctx, const pterun_tensor* in, int64_t* T,
                                int64_t* L) {
  int d;
  if (in->rank == 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': must have at least one dimension");
  *T = 1;
  for (d = 0; d + 1 < in->rank; ++d) *T *= in->sizes[d];
  *L = in->sizes[in->rank - 1];
  return PTERUN_STATUS_OK;
}

/* quantize_per_token.out(input, Tensor scales, Tensor zero_points, qmin, qmax,
 *   dtype, *, out) */
PTERUN_KERNEL(qk_quantize_per_token_out) {
  pterun_tensor *in, *sc, *zp, *out;
  int64_t qmin, qmax, dtype, T = 0, L = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &sc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  PTERUN_TRY(check_quant_args(ctx, in, qmin, qmax, dtype, out));
  PTERUN_TRY(token_view(ctx, in, &T, &L));
  PTERUN_TRY(pterun_check_dtype(ctx, sc, "scales", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, zp, "zero_points", PTERUN_DTYPE_I64));
  PTERUN_TRY(check_param(ctx, sc, "scales", T));
  PTERUN_TRY(check_param(ctx, zp, "zero_points", T));
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  if (in->numel == 0) return PTERUN_STATUS_OK;
  return quant_channels(ctx, in, sc, zp, 1, T, L, qmin, qmax, out);
}

/* dequantize_per_token.out(input, Tensor scales, Tensor zero_points, qmin, qmax,
 *   dtype, ScalarType output_dtype, *, out) */
PTERUN_KERNEL(qk_dequantize_per_token_out) {
  pterun_tensor *in, *sc, *zp, *out;
  int64_t qmin, qmax, dtype, od, T = 0, L = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "scales", &sc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "output_dtype", &od));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  PTERUN_TRY(check_dequant_args(ctx, in, qmin, qmax, dtype, 1, od, out));
  PTERUN_TRY(token_view(ctx, in, &T, &L));
  PTERUN_TRY(check_scales_zps(ctx, sc, zp, T));
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  if (in->numel == 0) return PTERUN_STATUS_OK;
  return dequant_channels(ctx, in, sc, zp, 1, T, L, qmin, qmax,
                          in->dtype == PTERUN_DTYPE_I8 && od == PTERUN_DTYPE_F32, 0, out);
}

/* ---- choose_qparams ------------------------------------------------------- */

/* First-element-wins min/max scan (std::min_element / max_element). */
/* choose_qparams.Tensor_out(input, int quant_min, int quant_max, float eps,
 *   ScalarType dtype, *, scale_out, zero_point_out) */
PTERUN_KERNEL(qk_choose_qparams_tensor_out) {
  pterun_tensor *in, *so, *zo;
  int64_t qmin, qmax, dtype;
  double eps, scale;
  float mn, mx;
  int32_t zp;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_double(ctx, args, 3, "eps", &eps));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "scale_out", &so));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "zero_point_out", &zo));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_F32));
  PTERUN_TRY(pterun_check_dtype(ctx, so, "scale_out", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, zo, "zero_point_out", PTERUN_DTYPE_I64));
  if (!(qmin < qmax) || qmin < INT32_MIN || qmax > INT32_MAX)
    return PTERUN_FAIL_ARG(
        ctx, "arg 'quant_min': [%" PRId64 ", %" PRId64 "] must satisfy min < max", qmin, qmax);
  if (so->numel != 1 || zo->numel != 1)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'scale_out': scale_out and zero_point_out must have one element");
  PTERUN_TRY(pterun_check_data(ctx, so, "scale_out"));
  PTERUN_TRY(pterun_check_data(ctx, zo, "zero_point_out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  if (in->numel == 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': empty tensor has no range");
  qk_scan_minmax((const float*)in->data, in->numel, &mn, &mx);
  if (qk_calc_qparams(mn, mx, (int32_t)qmin, (int32_t)qmax, &scale, &zp) != 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': min/max not finite (NaN or Inf in the input)");
  ((double*)so->data)[0] = scale;
  ((int64_t*)zo->data)[0] = zp;
  return PTERUN_STATUS_OK;
}

/* Resizes the per-token outputs to input.shape[:-1] + [1]. */
static pterun_status resize_token_outs(pterun_kernel_context* ctx, const pterun_tensor* in,
                                       pterun_tensor* so, pterun_tensor* zo) {
  int64_t sizes[PTERUN_MAX_RANK];
  int d;
  for (d = 0; d + 1 < in->rank; ++d) sizes[d] = in->sizes[d];
  sizes[in->rank - 1] = 1;
  PTERUN_TRY(pterun_out_resize(ctx, so, "scale_out", in->rank, sizes));
  PTERUN_TRY(pterun_out_resize(ctx, zo, "zero_point_out", in->rank, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, so, "scale_out"));
  PTERUN_TRY(pterun_check_contiguous(ctx, zo, "zero_point_out"));
  return PTERUN_STATUS_OK;
}

/* choose_qparams_per_token_asymmetric.out(input, ScalarType dtype, *,
 *   scale_out, zero_point_out) */
PTERUN_KERNEL(qk_choose_qparams_per_token_asymmetric_out) {
  pterun_tensor *in, *so, *zo;
  int64_t dtype, T = 0, L = 0, t;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "scale_out", &so));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "zero_point_out", &zo));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_F32));
  PTERUN_TRY(pterun_check_dtype(ctx, so, "scale_out", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, zo, "zero_point_out", PTERUN_DTYPE_I64));
  PTERUN_TRY(token_view(ctx, in, &T, &L));
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  if (L == 0 && T > 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': empty rows have no range");
  PTERUN_TRY(resize_token_outs(ctx, in, so, zo));
  for (t = 0; t < T; ++t) {
    float mn, mx;
    double scale;
    int32_t zp;
    qk_scan_minmax((const float*)in->data + t * L, L, &mn, &mx);
    if (qk_calc_qparams(mn, mx, -128, 127, &scale, &zp) != 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'input': row %" PRId64 " has a NaN or Inf", t);
    ((double*)so->data)[t] = scale;
    ((int64_t*)zo->data)[t] = zp;
  }
  return PTERUN_STATUS_OK;
}

/* ---- extensions: ops the exporter can emit that ExecuTorch cannot run ----- */

/* choose_qparams_per_token.out(input, ScalarType dtype, *, scale_out,
 *   zero_point_out): PyTorch's symmetric per-token reference:
 *   scale = max(amax|x|, 1e-5) / 127 in float32, zero point 0. */
PTERUN_KERNEL(qk_choose_qparams_per_token_out) {
  pterun_tensor *in, *so, *zo;
  int64_t dtype, T = 0, L = 0, t, k;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "scale_out", &so));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "zero_point_out", &zo));
  if (in->dtype != PTERUN_DTYPE_F32 && in->dtype != PTERUN_DTYPE_F16 &&
      in->dtype != PTERUN_DTYPE_BF16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported",
                           pterun_dtype_name(in->dtype));
  if (dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': only int8 is supported, got %s",
                           pterun_dtype_name((int)dtype));
  if (!pterun_dtype_is_float(so->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'scale_out': dtype %s is not floating",
                           pterun_dtype_name(so->dtype));
  if (zo->dtype != PTERUN_DTYPE_I64 && zo->dtype != PTERUN_DTYPE_I32 &&
      !pterun_dtype_is_float(zo->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_point_out': dtype %s not supported",
                           pterun_dtype_name(zo->dtype));
  PTERUN_TRY(token_view(ctx, in, &T, &L));
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  if (L == 0 && T > 0) return PTERUN_FAIL_ARG(ctx, "arg 'input': empty rows have no range");
  PTERUN_TRY(resize_token_outs(ctx, in, so, zo));
  for (t = 0; t < T; ++t) {
    float amax = fabsf((float)pterun_load_f64(in->data, in->dtype, t * L)), s;
    int nan = amax != amax;
    for (k = 1; k < L; ++k) {
      float a = fabsf((float)pterun_load_f64(in->data, in->dtype, t * L + k));
      if (a != a) nan = 1;
      if (a > amax) amax = a;
    }
    if (nan) amax = NAN; /* amax propagates NaN */
    /* bf16 input: the reduction and clamp happen in bf16 */
    if (in->dtype == PTERUN_DTYPE_BF16) {
      s = amax < qk_round_bf16(1e-5f) ? qk_round_bf16(1e-5f) : amax;
      s = qk_round_bf16(s / 127.0f);
    } else {
      s = amax < 1e-5f ? 1e-5f : amax;
      s = s / 127.0f;
    }
    pterun_store_f64(so->data, so->dtype, t, (double)s);
    if (pterun_dtype_is_float(zo->dtype))
      pterun_store_f64(zo->data, zo->dtype, t, 0.0);
    else
      pterun_store_i64(zo->data, zo->dtype, t, 0);
  }
  return PTERUN_STATUS_OK;
}

/* choose_qparams_symmetric.Tensor_out(input, qmin, qmax, float eps, dtype, *,
 *   scale_out, zero_point_out): PyTorch's determine_qparams with
 *   per_tensor_symmetric: scale = max(-min⁻, max⁺) / ((qmax - qmin) / 2),
 *   clamped below by eps (float32); zero point 0, or 128 for uint8. */
PTERUN_KERNEL(qk_choose_qparams_symmetric_tensor_out) {
  pterun_tensor *in, *so, *zo;
  int64_t qmin, qmax, dtype, k, lo, hi;
  double eps;
  float mn, mx, s, m;
  int64_t zp = 0;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "quant_max", &qmax));
  PTERUN_TRY(pterun_arg_double(ctx, args, 3, "eps", &eps));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "dtype", &dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "scale_out", &so));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "zero_point_out", &zo));
  if (in->dtype != PTERUN_DTYPE_F32 && in->dtype != PTERUN_DTYPE_F16 &&
      in->dtype != PTERUN_DTYPE_BF16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported",
                           pterun_dtype_name(in->dtype));
  if (!qk_qdtype_range((int)dtype, &lo, &hi))
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': %s is not a quantized dtype",
                           pterun_dtype_name((int)dtype));
  if (!(qmin <= 0 && 0 <= qmax && qmin < qmax))
    return PTERUN_FAIL_ARG(ctx, "arg 'quant_min': [%" PRId64 ", %" PRId64 "] must contain 0", qmin,
                           qmax);
  PTERUN_TRY(pterun_check_dtype(ctx, so, "scale_out", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, zo, "zero_point_out", PTERUN_DTYPE_I64));
  if (so->numel != 1 || zo->numel != 1)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'scale_out': scale_out and zero_point_out must have one element");
  PTERUN_TRY(pterun_check_data(ctx, so, "scale_out"));
  PTERUN_TRY(pterun_check_data(ctx, zo, "zero_point_out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  if (in->numel == 0) {
    ((double*)so->data)[0] = 1.0;
    ((int64_t*)zo->data)[0] = 0;
    return PTERUN_STATUS_OK;
  }
  mn = mx = (float)pterun_load_f64(in->data, in->dtype, 0);
  for (k = 1; k < in->numel; ++k) {
    float v = (float)pterun_load_f64(in->data, in->dtype, k);
    if (v != v || v < mn) mn = (mn != mn) ? mn : v;
    if (v != v || v > mx) mx = (mx != mx) ? mx : v;
  }
  if (isinf(mn) && mn > 0 && isinf(mx) && mx < 0) { /* unreachable for non-empty */
    ((double*)so->data)[0] = 1.0;
    ((int64_t*)zo->data)[0] = 0;
    return PTERUN_STATUS_OK;
  }
  mn = mn < 0.f ? mn : (mn != mn ? mn : 0.f);
  mx = mx > 0.f ? mx : (mx != mx ? mx : 0.f);
  m = -mn > mx ? -mn : (mx != mx ? mx : (-mn != -mn ? -mn : mx));
  s = m / (float)((double)(qmax - qmin) / 2.0);
  if (in->dtype == PTERUN_DTYPE_F16) s = qk_round_f16(s);
  if (in->dtype == PTERUN_DTYPE_BF16) s = qk_round_bf16(s);
  if (s != s) return PTERUN_FAIL_ARG(ctx, "arg 'input': NaN in the input");
  if (s < (float)eps) s = (float)eps;
  if (dtype == PTERUN_DTYPE_U8) zp = 128;
  ((double*)so->data)[0] = (double)s;
  ((int64_t*)zo->data)[0] = zp;
  return PTERUN_STATUS_OK;
}
