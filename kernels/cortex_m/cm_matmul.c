/* quantized_linear, quantized_batch_matmul and the int8 softmax. */
#include <inttypes.h>
#include <math.h>

#include "kernels/cortex_m/cm_util.h"

/* quantized_linear.out(input, weights, bias?, kernel_sum?, input_offset,
 *   filter_offset, output_offset, int[] requantize_multipliers,
 *   int[] requantize_shifts, activation_max, activation_min, *, out).
 * Like CMSIS-NN's arm_fully_connected_s8: with kernel_sum (the MVE layout) the
 * accumulator is x.w + sum(x) * filter_offset + kernel_sum (int64 in the
 * reference); otherwise (x + input_offset).(w + filter_offset) + bias in int32.
 * One multiplier/shift pair (the first) for every output. */
PTERUN_KERNEL(cm_quantized_linear_out) {
  pterun_tensor *in, *w, *bias, *ksum, *out;
  int64_t in_off, f_off, out_off, amax, amin, rows, kdim, ncol, r, j, i;
  int64_t sizes[PTERUN_MAX_RANK];
  const int64_t *mults, *shifts;
  size_t nm, ns;
  const int8_t *xd, *wd;
  PTERUN_CHECK_NARGS(ctx, nargs, 13);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weights", &w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "bias", &bias));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 3, "kernel_sum", &ksum));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "input_offset", &in_off));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "filter_offset", &f_off));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "output_offset", &out_off));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 7, "requantize_multipliers", &mults, &nm, 0));
  PTERUN_TRY(pterun_arg_int_list(ctx, args, 8, "requantize_shifts", &shifts, &ns, 0));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "activation_max", &amax));
  PTERUN_TRY(pterun_arg_int(ctx, args, 10, "activation_min", &amin));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 11, "out", &out));
  PTERUN_TRY(cm_check_i32(ctx, "input_offset", in_off));
  PTERUN_TRY(cm_check_i32(ctx, "filter_offset", f_off));
  PTERUN_TRY(cm_check_i32(ctx, "output_offset", out_off));
  if (nm < 1 || ns < 1)
    return PTERUN_FAIL_ARG(ctx, "requantize_multipliers/shifts: one entry required");
  PTERUN_TRY(cm_check_requant(ctx, "requantize_multipliers", mults[0], shifts[0]));
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, w, "weights", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8));
  if (in->rank < 1 || w->rank != 2 || w->sizes[1] != in->sizes[in->rank - 1])
    return PTERUN_FAIL_ARG(ctx, "args 'input'/'weights': [..., K] and [N, K] required");
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  PTERUN_TRY(pterun_check_contiguous(ctx, w, "weights"));
  kdim = w->sizes[1];
  ncol = w->sizes[0];
  if (bias) {
    PTERUN_TRY(pterun_check_dtype(ctx, bias, "bias", PTERUN_DTYPE_I32));
    PTERUN_TRY(pterun_check_data(ctx, bias, "bias"));
    if (bias->numel != ncol)
      return PTERUN_FAIL_ARG(ctx, "arg 'bias': %" PRId64 " entries needed", ncol);
  }
  if (ksum) {
    PTERUN_TRY(pterun_check_dtype(ctx, ksum, "kernel_sum", PTERUN_DTYPE_I32));
    PTERUN_TRY(pterun_check_data(ctx, ksum, "kernel_sum"));
    if (ksum->numel != ncol)
      return PTERUN_FAIL_ARG(ctx, "arg 'kernel_sum': %" PRId64 " entries needed", ncol);
  }
  for (i = 0; i + 1 < in->rank; ++i) sizes[i] = in->sizes[i];
  sizes[in->rank - 1] = ncol;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", in->rank, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  rows = kdim > 0 ? in->numel / kdim : 0;
  if (kdim == 0) rows = out->numel / (ncol > 0 ? ncol : 1);
  xd = (const int8_t*)in->data;
  wd = (const int8_t*)w->data;
  for (r = 0; r < rows; ++r)
    for (j = 0; j < ncol; ++j) {
      const int8_t* xr = xd + r * kdim;
      const int8_t* wr = wd + j * kdim;
      int64_t acc = 0, xsum = 0;
      int32_t q;
      if (ksum) {
        for (i = 0; i < kdim; ++i) {
          acc += (int64_t)xr[i] * wr[i];
          xsum += xr[i];
        }
        acc = (int64_t)cm_wrap32(acc) + xsum * f_off + ((const int32_t*)ksum->data)[j];
      } else {
        for (i = 0; i < kdim; ++i) acc += (xr[i] + in_off) * (wr[i] + f_off);
        if (bias) acc += ((const int32_t*)bias->data)[j];
        acc = cm_wrap32(acc);
      }
      q = cm_requantize(acc, (int32_t)mults[0], (int32_t)shifts[0]);
      ((int8_t*)out->data)[r * ncol + j] =
          cm_wrap8(cm_clamp64(cm_wrap32((int64_t)q + out_off), amin, amax));
    }
  return PTERUN_STATUS_OK;
}

/* quantized_batch_matmul.out(lhs, lhs_zero_point, rhs_transposed,
 *   rhs_zero_point, output_zero_point, output_multiplier, output_shift,
 *   scratch, *, out): [B, M, K] x [B, N, K]^T; the zero points are offsets
 *   (negated zero points, CMSIS-NN's convention) added to each operand. */
PTERUN_KERNEL(cm_quantized_batch_matmul_out) {
  pterun_tensor *lhs, *rhs, *out;
  int64_t lzp, rzp, ozp, mult, shift, sizes[3], b, m, n, k;
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "lhs", &lhs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "lhs_zero_point", &lzp));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "rhs_transposed", &rhs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "rhs_zero_point", &rzp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "output_zero_point", &ozp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "output_multiplier", &mult));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "output_shift", &shift));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "out", &out));
  PTERUN_TRY(cm_check_i32(ctx, "lhs_zero_point", lzp));
  PTERUN_TRY(cm_check_i32(ctx, "rhs_zero_point", rzp));
  PTERUN_TRY(cm_check_i32(ctx, "output_zero_point", ozp));
  PTERUN_TRY(cm_check_requant(ctx, "output_multiplier", mult, shift));
  PTERUN_TRY(pterun_check_dtype(ctx, lhs, "lhs", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, rhs, "rhs_transposed", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8));
  if (lhs->rank != 3 || rhs->rank != 3 || lhs->sizes[0] != rhs->sizes[0] ||
      lhs->sizes[2] != rhs->sizes[2])
    return PTERUN_FAIL_ARG(ctx, "args 'lhs'/'rhs_transposed': [B, M, K] and [B, N, K] required");
  PTERUN_TRY(pterun_check_contiguous(ctx, lhs, "lhs"));
  PTERUN_TRY(pterun_check_contiguous(ctx, rhs, "rhs_transposed"));
  sizes[0] = lhs->sizes[0];
  sizes[1] = lhs->sizes[1];
  sizes[2] = rhs->sizes[1];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 3, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  for (b = 0; b < sizes[0]; ++b)
    for (m = 0; m < sizes[1]; ++m)
      for (n = 0; n < sizes[2]; ++n) {
        const int8_t* lr = (const int8_t*)lhs->data + (b * sizes[1] + m) * lhs->sizes[2];
        const int8_t* rr = (const int8_t*)rhs->data + (b * sizes[2] + n) * lhs->sizes[2];
        int64_t acc = 0;
        int32_t q;
        for (k = 0; k < lhs->sizes[2]; ++k) acc += (lr[k] + lzp) * (rr[k] + rzp);
        q = cm_requantize(cm_wrap32(acc), (int32_t)mult, (int32_t)shift);
        ((int8_t*)out->data)[(b * sizes[1] + m) * sizes[2] + n] =
            cm_wrap8(cm_clamp64(cm_wrap32((int64_t)q + ozp), -128, 127));
      }
  return PTERUN_STATUS_OK;
}

/* softmax.out(input, dim, input_zero_point, output_zero_point,
 *   input_multiplier, input_shift, diff_min, *, out): int8 in, int8 out with
 *   scale 1/256 and zero point -128; the reference evaluates the softmax in
 *   float32 on (q - zp) * input_scale, input_scale = multiplier * 2^shift /
 *   2^31 / 2^26. */
PTERUN_KERNEL(cm_softmax_out) {
  pterun_tensor *in, *out;
  int64_t dim, izp, ozp, mult, shift, diff_min, outer, inner, len, o, i, j, st;
  float scale;
  const int8_t* xd;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "dim", &dim));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "input_zero_point", &izp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "output_zero_point", &ozp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "input_multiplier", &mult));
  PTERUN_TRY(pterun_arg_int(ctx, args, 5, "input_shift", &shift));
  PTERUN_TRY(pterun_arg_int(ctx, args, 6, "diff_min", &diff_min));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  PTERUN_TRY(cm_check_i32(ctx, "input_zero_point", izp));
  PTERUN_TRY(cm_check_requant(ctx, "input_multiplier", mult, shift));
  if (ozp != -128)
    return PTERUN_FAIL_ARG(ctx, "arg 'output_zero_point': expected -128, got %" PRId64, ozp);
  PTERUN_TRY(pterun_check_dtype(ctx, in, "input", PTERUN_DTYPE_I8));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", PTERUN_DTYPE_I8));
  if (in->rank < 1) return PTERUN_FAIL_ARG(ctx, "arg 'input': rank >= 1 required");
  if (dim < 0) dim += in->rank;
  if (dim < 0 || dim >= in->rank) return PTERUN_FAIL_ARG(ctx, "arg 'dim': out of range");
  PTERUN_TRY(pterun_check_contiguous(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  scale = (float)ldexp((double)mult, (int)shift - 31 - 26);
  if (!(scale > 0.0f))
    return PTERUN_FAIL_ARG(ctx, "arg 'input_multiplier': non-positive input scale");
  len = in->sizes[dim];
  st = in->strides[dim];
  inner = st;
  outer = len > 0 && inner > 0 ? in->numel / (len * inner) : 0;
  xd = (const int8_t*)in->data;
  for (o = 0; o < outer; ++o)
    for (i = 0; i < inner; ++i) {
      const int8_t* xr = xd + o * len * inner + i;
      int8_t* yr = (int8_t*)out->data + o * len * inner + i;
      float mx = -INFINITY, sum = 0.0f, inv;
      for (j = 0; j < len; ++j) {
        float v = (float)cm_wrap32(xr[j * st] - izp) * scale;
        if (v > mx) mx = v;
      }
      for (j = 0; j < len; ++j) sum += expf((float)cm_wrap32(xr[j * st] - izp) * scale - mx);
      inv = 1.0f / sum;
      for (j = 0; j < len; ++j) {
        float p = expf((float)cm_wrap32(xr[j * st] - izp) * scale - mx) * inv;
        float q = nearbyintf(p * 256.0f) - 128.0f;
        yr[j * st] = (int8_t)(q <= -128.0f ? -128 : q >= 127.0f ? 127 : (int)q);
      }
    }
  return PTERUN_STATUS_OK;
}
