/* Integer kernels for the quantized patterns the load-time fusion pass
 * replaces (src/optimize/method_fuse.c, docs/quantized.md "int8 execution"):
 * one call runs dequantize -> conv2d / linear (-> relu / hardtanh) ->
 * quantize on the original int8 data with libpterun_compute's int8 GEMM
 * (pterun_compute_qs8_gemm), weights packed once by `prepare`; the dynamic
 * form (dequantize with q-params choose_qparams computed at run time ->
 * linear) multiplies the int8 activations quantize made and dequantizes in
 * the GEMM's epilogue (choose_qparams and quantize stay ExecuTorch's
 * kernels, so the activations are bit-exact). Numerics: the int32 sums are exact; the scale, bias and
 * requantisation are the reference formula in float32, so an output may
 * differ from the unfused float path by one quantization step where the
 * float sums round differently (measured in tests/quantized). */
#include <inttypes.h>
#include <string.h>

#include "kernels/quantized/q_lut_clamp.h"
#include "kernels/quantized/qint8.h"
#include "pterun/compute.h"

/* ---- prepared state ------------------------------------------------------- */

/* Bytes after a padded channels-last copy (pad_nhwc) that the indirect GEMM
 * may read with zero weights: a tap padded from 1 to 4 channels. */
#define QK_PAD_SLACK 4

/* Everything execute needs that depends only on constants. */
typedef struct qk_i8_state {
  int64_t oc, k, groups, npg; /* output channels, K per group, groups, OC / groups */
  int64_t kh, kw;             /* conv kernel (0 for linear) */
  int64_t cpad;               /* conv: channels per tap in the packed K (>= k / (kh * kw)) */
  int w_kn;                   /* linear weight stored [K, N] */
  int x_dtype;                /* U8 / I8 */
  int32_t x_zp;               /* static: input zero point */
  int32_t* w_zp;              /* oc, NULL when all zero */
  float* w_scale;             /* oc: (float) weight scale */
  float* scale; /* oc: static: (float)x_scale * w_scale; dynamic: filled per execute */
  pterun_compute_qs8_packed* packed; /* groups */
  int8_t* dw_w; /* a depthwise convolution's weight [oc][kh][kw] (then no packed) */
  /* ... and as weight - zero point, [kh * kw][oc], for the channels-last
   * loop (dw_nhwc_pays); NULL when that loop cannot run it */
  int16_t* dw_w16;
  /* static output */
  int out_dtype;
  float out_inv;
  int32_t out_zp, q_lo, q_hi;
  /* conv2d_q8_hardtanh_q8 whose hardtanh chain is no clamp of the code: its
   * table, applied to the output in place (a clamp narrows q_lo / q_hi) */
  uint8_t* lut;
  /* Room for a copy of the input when the memory plan gave the output the
   * input's bytes and the scratch arena cannot hold one (it may be absent). */
  void* alias_buf;
  size_t alias_cap;
} qk_i8_state;

static int64_t qk_i8_numel(const pterun_tensor* t) {
  return t->numel;
}

/* The weight's per-channel (or per-tensor) scale and zero point, read at
 * prepare from constants. */
static pterun_status read_w_qparams(pterun_kernel_context* ctx, const qk_i8_wq* wq, int64_t oc,
                                    qk_i8_state* st) {
  int64_t c;
  int any_zp = 0;
  st->w_scale = pterun_kernel_state_alloc(ctx, sizeof(float) * (size_t)oc, 64);
  st->w_zp = pterun_kernel_state_alloc(ctx, sizeof(int32_t) * (size_t)oc, 64);
  st->scale = pterun_kernel_state_alloc(ctx, sizeof(float) * (size_t)oc, 64);
  if (st->w_scale == NULL || st->w_zp == NULL || st->scale == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate the int8 weight parameters");
  if (wq->scales != NULL) {
    const pterun_tensor* s = wq->scales;
    if (qk_i8_numel(s) != oc || (s->dtype != PTERUN_DTYPE_F32 && s->dtype != PTERUN_DTYPE_F64) ||
        s->data == NULL)
      return PTERUN_FAIL_ARG(ctx, "arg 'scales': want %" PRId64 " float constants", oc);
    if (wq->zps != NULL &&
        (qk_i8_numel(wq->zps) != oc || wq->zps->dtype != PTERUN_DTYPE_I64 || wq->zps->data == NULL))
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_points': want %" PRId64 " int64 constants", oc);
    for (c = 0; c < oc; ++c) {
      const double sc = s->dtype == PTERUN_DTYPE_F64 ? ((const double*)s->data)[c]
                                                     : (double)((const float*)s->data)[c];
      const int64_t zp = wq->zps != NULL ? ((const int64_t*)wq->zps->data)[c] : 0;
      if (!((float)sc > 0.0f) || isinf((float)sc))
        return PTERUN_FAIL_ARG(
            ctx, "arg 'scales': channel %" PRId64 " scale %g is not finite and > 0", c, sc);
      if (zp < -128 || zp > 127)
        return PTERUN_FAIL_ARG(
            ctx, "arg 'zero_points': channel %" PRId64 " zero point %" PRId64 " is outside int8", c,
            zp);
      st->w_scale[c] = (float)sc;
      st->w_zp[c] = (int32_t)zp;
      any_zp |= zp != 0;
    }
  } else {
    if (!((float)wq->scale > 0.0f) || isinf((float)wq->scale))
      return PTERUN_FAIL_ARG(ctx, "arg 'scale': weight scale %g is not finite and > 0", wq->scale);
    if (wq->zp < -128 || wq->zp > 127)
      return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': %" PRId64 " is outside int8", wq->zp);
    for (c = 0; c < oc; ++c) {
      st->w_scale[c] = (float)wq->scale;
      st->w_zp[c] = (int32_t)wq->zp;
    }
    any_zp = wq->zp != 0;
  }
  if (!any_zp) st->w_zp = NULL;
  return PTERUN_STATUS_OK;
}

/* Packs the constant int8 weight [OC, K] (K = IC/groups * KH * KW) per group. */
static pterun_status pack_weights(pterun_kernel_context* ctx, const pterun_tensor* w,
                                  qk_i8_state* st) {
  int64_t g;
  st->packed =
      pterun_kernel_state_alloc(ctx, sizeof(pterun_compute_qs8_packed) * (size_t)st->groups, 64);
  if (st->packed == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate packed weights");
  const int64_t kp = st->kh > 0 ? st->kh * st->kw * st->cpad : st->k; /* the packed K */
  for (g = 0; g < st->groups; ++g) {
    const size_t cap = pterun_compute_qs8_pack_size(NULL, st->npg, kp);
    void* buf = cap != 0 ? pterun_kernel_state_alloc(ctx, cap, 64) : NULL;
    if (cap == 0) return PTERUN_STATUS_NOT_SUPPORTED; /* K past the int8 engine: decline */
    if (buf == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes of packed weights", cap);
    const int8_t* wg = (const int8_t*)w->data + g * st->npg * st->k;
    /* A convolution's K runs (ky, kx, c): rows come from a channels-last copy. */
    if ((st->kh > 0
             ? pterun_compute_qs8_pack_conv(NULL, st->npg, st->k / (st->kh * st->kw), st->cpad,
                                            st->kh, st->kw, wg, buf, cap, &st->packed[g])
             : pterun_compute_qs8_pack(NULL, st->npg, st->k, wg, st->w_kn ? 1 : st->k,
                                       st->w_kn ? st->npg : 1, buf, cap, &st->packed[g])) != 0)
      return PTERUN_FAIL_ARG(ctx, "arg 'weight': packing failed");
  }
  return PTERUN_STATUS_OK;
}

/* Output quantization of a static pattern: range narrowed by the fused
 * activation (quantization is monotonic, so clamping the integer equals
 * clamping the float first). */
static pterun_status static_output(pterun_kernel_context* ctx, const qk_i8_out* o,
                                   qk_i8_state* st) {
  float s;
  int64_t lo, hi;
  PTERUN_TRY(qk_check_scale(ctx, "out_scale", o->scale, &s));
  PTERUN_TRY(qk_check_zp(ctx, "out_zero_point", o->zp));
  if (o->dtype != PTERUN_DTYPE_U8 && o->dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg 'dtype': %s output is not int8 or uint8",
                           pterun_dtype_name((int)o->dtype));
  qk_qdtype_range((int)o->dtype, &lo, &hi);
  if (o->qmin < lo || o->qmax > hi || o->qmin > o->qmax)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'quant_min'/'quant_max': [%" PRId64 ", %" PRId64 "] outside %s",
                           o->qmin, o->qmax, pterun_dtype_name((int)o->dtype));
  st->out_dtype = (int)o->dtype;
  st->out_inv = 1.0f / s;
  st->out_zp = (int32_t)o->zp;
  lo = o->qmin;
  hi = o->qmax;
  if (o->has_min) {
    const int64_t q = qk_quant_step(st->out_inv * o->min, (float)st->out_zp, o->qmin, o->qmax);
    if (q > lo) lo = q;
  }
  if (o->has_max) {
    const int64_t q = qk_quant_step(st->out_inv * o->max, (float)st->out_zp, o->qmin, o->qmax);
    if (q < hi) hi = q;
  }
  st->q_lo = (int32_t)lo;
  st->q_hi = (int32_t)(hi < lo ? lo : hi);
  return PTERUN_STATUS_OK;
}

/* The hardtanh_q8 chain after the output quantization: a clamp of the code
 * narrows the requantised range (qk_lut_clamp_after); any other table is
 * kept for execute. */
static pterun_status chain_lut(pterun_kernel_context* ctx, const qk_i8_call* call,
                               qk_i8_state* st) {
  uint8_t table[256];
  if (call->lut_out.dtype != call->out.dtype) /* in place needs one dtype: run unfused */
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the hardtanh changes the dtype: not fused with the convolution");
  PTERUN_TRY(
      qk_lut_hardtanh_table(ctx, &call->lut_in, call->lut_lo, call->lut_hi, &call->lut_out, table));
  const qk_lut_clamp c = qk_lut_find_clamp(table, call->out.dtype == PTERUN_DTYPE_I8, 1);
  if (c.is_clamp) {
    qk_lut_clamp_after(&st->q_lo, &st->q_hi, &c);
    return PTERUN_STATUS_OK;
  }
  st->lut = pterun_kernel_state_alloc(ctx, 256, 64);
  if (st->lut == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate the table");
  memcpy(st->lut, table, 256);
  return PTERUN_STATUS_OK;
}

/* Whether a depthwise geometry runs faster channels-last, counting the two
 * transposes (measured, int8 MobileNetV2 layers on AVX-512 and AVX2): with a
 * stride, whose NCHW staging splits every row into phases, and on planes of
 * 256 outputs and fewer, where the NCHW loop's per-plane costs dominate; the
 * NCHW loop keeps large unit-stride planes, its long contiguous runs. */
static int dw_nhwc_pays(int64_t sh, int64_t sw, int64_t oh, int64_t ow) {
  return sh * sw > 1 || oh * ow <= 256;
}

/* A depthwise convolution's weights for pterun_compute_qs8_dwconv2d_nhwc,
 * and the scratch for its channels-last input and output, when the output
 * is int8 (the transposes move bytes), the filter fits that loop and the
 * load-time geometry takes it. Declining leaves dw_w16 NULL: the NCHW loop. */
static pterun_status dw_prepare_nhwc(pterun_kernel_context* ctx, const qk_i8_call* call,
                                     qk_i8_state* st) {
  const pterun_tensor* x = call->x;
  const int64_t taps = st->kh * st->kw;
  if (call->out.dtype != PTERUN_DTYPE_U8 && call->out.dtype != PTERUN_DTYPE_I8)
    return PTERUN_STATUS_OK;
  if (taps < 1 || taps > 64 || call->stride == NULL || call->padding == NULL ||
      call->dilation == NULL || call->stride[0] < 1 || call->stride[1] < 1 ||
      call->dilation[0] < 1 || call->dilation[1] < 1 || call->padding[0] < 0 ||
      call->padding[1] < 0 || call->padding[0] > INT32_MAX || call->padding[1] > INT32_MAX ||
      call->dilation[0] > INT32_MAX || call->dilation[1] > INT32_MAX || x->sizes[2] > INT32_MAX ||
      x->sizes[3] > INT32_MAX)
    return PTERUN_STATUS_OK;
  const int64_t eh = call->dilation[0] * (st->kh - 1) + 1,
                ew = call->dilation[1] * (st->kw - 1) + 1;
  const int64_t hp = x->sizes[2] + 2 * call->padding[0], wp = x->sizes[3] + 2 * call->padding[1];
  if (hp < eh || wp < ew) return PTERUN_STATUS_OK;
  const int64_t oh = (hp - eh) / call->stride[0] + 1, ow = (wp - ew) / call->stride[1] + 1;
  const int cl = pterun_is_channels_last4(x) || pterun_is_channels_last4(call->outt);
  if (!cl && !dw_nhwc_pays(call->stride[0], call->stride[1], oh, ow)) return PTERUN_STATUS_OK;
  const double in_b = (double)x->sizes[1] * (double)x->sizes[2] * (double)x->sizes[3];
  const double out_b = (double)st->oc * (double)oh * (double)ow;
  if (in_b + out_b > (double)(SIZE_MAX / 4)) return PTERUN_STATUS_OK;
  st->dw_w16 = pterun_kernel_state_alloc(ctx, sizeof(int16_t) * (size_t)(taps * st->oc), 64);
  if (st->dw_w16 == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate the depthwise weight");
  for (int64_t c = 0; c < st->oc; ++c) {
    const int32_t z = st->w_zp != NULL ? st->w_zp[c] : 0; /* within int8: |w - z| <= 255 */
    for (int64_t t = 0; t < taps; ++t)
      st->dw_w16[t * st->oc + c] = (int16_t)((int32_t)st->dw_w[c * taps + t] - z);
  }
  pterun_kernel_scratch_reserve(ctx, (size_t)in_b);
  pterun_kernel_scratch_reserve(ctx, (size_t)out_b);
  return PTERUN_STATUS_OK;
}

/* The depthwise convolution channels-last: per batch item, the NCHW input
 * transposed into scratch, pterun_compute_qs8_dwconv2d_nhwc (the same sums
 * and epilogue, so the NCHW loop's bits), the output transposed back. 0 when
 * it does not run (no weights for it, another geometry than load time's, or
 * no scratch): then the NCHW loop does. */
static int dw_run_nhwc(pterun_kernel_context* ctx, const qk_i8_state* st,
                       const pterun_compute_dwconv2d* dp, const uint8_t* x, int x_cl,
                       pterun_compute_qs8_epilogue* ep, pterun_tensor* out) {
  const int out_cl = pterun_is_channels_last4(out);
  if (st->dw_w16 == NULL || (out->dtype != PTERUN_DTYPE_U8 && out->dtype != PTERUN_DTYPE_I8) ||
      (!x_cl && !out_cl &&
       !dw_nhwc_pays((int64_t)dp->stride_h, (int64_t)dp->stride_w, (int64_t)dp->out_h,
                     (int64_t)dp->out_w)))
    return 0;
  /* A channels-last side is read or written in place; an NCHW one goes
   * through scratch. */
  const size_t hw = dp->in_h * dp->in_w, ohw = dp->out_h * dp->out_w;
  uint8_t* xs = x_cl ? NULL : pterun_kernel_scratch(ctx, dp->in_c * hw, 64);
  uint8_t* ys = out_cl ? NULL : pterun_kernel_scratch(ctx, dp->out_c * ohw, 64);
  if ((!x_cl && xs == NULL) || (!out_cl && ys == NULL)) return 0;
  pterun_compute_dwconv2d one = *dp;
  one.batch = 1;
  const int32_t* w_zp = ep->w_zp;
  ep->w_zp = NULL; /* folded into dw_w16 */
  for (size_t b = 0; b < dp->batch; ++b) {
    uint8_t* o = (uint8_t*)out->data + b * dp->out_c * ohw;
    const uint8_t* xb = x + b * dp->in_c * hw;
    if (!x_cl)
      pterun_compute_u8_transpose((int64_t)dp->in_c, (int64_t)hw, xb, (int64_t)hw, xs,
                                  (int64_t)dp->in_c);
    if (pterun_compute_qs8_dwconv2d_nhwc(
            pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx), &one, x_cl ? xb : xs,
            st->x_dtype, st->dw_w16, NULL, ep, out_cl ? o : ys, out->dtype) != 0) {
      ep->w_zp = w_zp;
      /* refused before any output: the NCHW loop decides (it reads and
       * writes NCHW only) */
      return b == 0 && !x_cl && !out_cl ? 0 : -1;
    }
    if (!out_cl)
      pterun_compute_u8_transpose((int64_t)ohw, (int64_t)dp->out_c, ys, (int64_t)dp->out_c, o,
                                  (int64_t)ohw);
  }
  ep->w_zp = w_zp;
  return 1;
}

/* Whether a convolution's weight is packed with each tap's channels padded
 * to a multiple of 4 (zero weights): where the indirect GEMM reads A in place
 * on this CPU and its taps are not whole groups of 4 bytes otherwise (a
 * 3-channel stem; a kernel row of one group with unit column dilation is one
 * run). Elsewhere the padding would only lengthen the packed GEMM's K. */
static int pads_channels(const qk_i8_call* call, const qk_i8_state* st) {
  const int64_t cpg = st->k / (st->kh * st->kw);
  if (cpg % 4 == 0 || st->w_zp != NULL || call->dilation == NULL ||
      !pterun_compute_qs8_conv2d_nhwc_in_place(NULL))
    return 0;
  return !(st->groups == 1 && call->dilation[1] == 1 && st->kw * cpg % 4 == 0);
}

pterun_status qk_i8_prepare(pterun_kernel_context* ctx, const qk_i8_call* call) {
  const pterun_tensor* w = call->wq.w;
  qk_i8_state* st;
  if (w->data == NULL || w->dtype != PTERUN_DTYPE_I8)
    return PTERUN_STATUS_NOT_SUPPORTED; /* not a constant int8 weight: decline, the chain
                                           runs unfused */
  st = pterun_kernel_state_alloc(ctx, sizeof *st, 64);
  if (st == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate kernel state");
  memset(st, 0, sizeof *st);
  st->oc = w->sizes[0];
  st->groups = call->conv ? call->groups : 1;
  st->w_kn = !call->conv && call->w_kn;
  if (call->conv) {
    if (w->rank != 4 || st->groups < 1 || st->oc % st->groups != 0)
      return PTERUN_FAIL_ARG(
          ctx, "arg 'weight': want [OC, IC/groups, KH, KW] with OC a multiple of groups");
    st->kh = w->sizes[2];
    st->kw = w->sizes[3];
    st->k = w->sizes[1] * st->kh * st->kw;
    st->cpad = w->sizes[1];
    /* A depthwise convolution (one input channel per group) runs on
     * pterun_compute_qs8_dwconv2d_nchw, from the input as it is; the others
     * on the GEMM from execute's padded channels-last images (pad_nhwc). */
    const pterun_tensor* x = call->x;
    if (x->rank == 4 && st->groups > 1 && w->sizes[1] == 1 && x->sizes[1] == st->groups &&
        pterun_tensor_is_contiguous(w)) {
      st->dw_w = pterun_kernel_state_alloc(ctx, (size_t)w->numel, 64);
      if (st->dw_w == NULL)
        return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                  "cannot allocate the depthwise weight");
      memcpy(st->dw_w, w->data, (size_t)w->numel);
    } else if (x->rank == 4 && call->padding != NULL && call->padding[0] >= 0 &&
               call->padding[1] >= 0 && call->padding[0] < INT32_MAX &&
               call->padding[1] < INT32_MAX) {
      const double bytes = (double)(x->sizes[2] + 2 * call->padding[0]) *
                           (double)(x->sizes[3] + 2 * call->padding[1]) * (double)x->sizes[1];
      /* one image per batch item (each stays until the call ends), and the
       * bytes a padded tap reads past its end (pad_nhwc) */
      if (bytes > 0 && bytes * (double)x->sizes[0] < (double)(SIZE_MAX / 4))
        for (int64_t b = 0; b < x->sizes[0]; ++b)
          pterun_kernel_scratch_reserve(ctx, (size_t)bytes + QK_PAD_SLACK);
    }
  } else {
    if (w->rank != 2) return PTERUN_FAIL_ARG(ctx, "arg 'weight': want a [N, K] matrix");
    st->kh = st->kw = 0; /* not a convolution */
    st->oc = w->sizes[st->w_kn ? 1 : 0];
    st->k = w->sizes[st->w_kn ? 0 : 1];
    if (st->w_kn && call->wq.scales != NULL)
      return PTERUN_FAIL_ARG(ctx, "arg 'weight': per-channel scales on axis 0 of a [K, N] weight");
  }
  if (st->oc < 1 || st->k < 1) return PTERUN_FAIL_ARG(ctx, "arg 'weight': empty");
  st->npg = st->oc / st->groups;
  if (!pterun_tensor_is_contiguous(w)) return PTERUN_FAIL_ARG(ctx, "arg 'weight': not contiguous");
  PTERUN_TRY(read_w_qparams(ctx, &call->wq, st->oc, st));
  if (call->conv && st->dw_w == NULL && pads_channels(call, st)) st->cpad = (st->cpad + 3) / 4 * 4;
  if (call->x->nbytes > 0) {
    st->alias_buf = pterun_kernel_state_alloc(ctx, call->x->nbytes, 64);
    if (st->alias_buf == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes for the fused kernel's input copy",
                                call->x->nbytes);
    st->alias_cap = call->x->nbytes;
  }
  if (st->dw_w == NULL)
    PTERUN_TRY(pack_weights(ctx, w, st));
  else
    PTERUN_TRY(dw_prepare_nhwc(ctx, call, st));
  st->x_dtype = (int)call->x_dtype;
  if (!call->dynamic) {
    int64_t c;
    float xs;
    PTERUN_TRY(qk_check_scale(ctx, "input_scale", call->x_scale, &xs));
    PTERUN_TRY(qk_check_zp(ctx, "input_zero_point", call->x_zp));
    if (call->x_zp < (call->x_dtype == PTERUN_DTYPE_U8 ? 0 : -128) ||
        call->x_zp > (call->x_dtype == PTERUN_DTYPE_U8 ? 255 : 127))
      return PTERUN_FAIL_ARG(ctx, "arg 'input_zero_point': %" PRId64 " is outside %s", call->x_zp,
                             pterun_dtype_name((int)call->x_dtype));
    st->x_zp = (int32_t)call->x_zp;
    for (c = 0; c < st->oc; ++c) st->scale[c] = xs * st->w_scale[c];
    PTERUN_TRY(static_output(ctx, &call->out, st));
    if (call->lut) PTERUN_TRY(chain_lut(ctx, call, st));
  }
  return PTERUN_STATUS_OK;
}

/* ---- convolution rows (im2col into the GEMM's panels) ---------------------- */

/* Rows of a convolution's GEMM, K in (ky, kx, c) order (as the weight was
 * packed). From a padded channels-last copy of the input when scratch holds
 * one (each kernel row is then one copy of kw * channels bytes, or kw copies
 * with dilation or groups); else straight from the NCHW input with bounds
 * checks. */
typedef struct qk_im2col {
  const uint8_t* x;       /* input of this batch: NCHW, or NHWC with x_cl */
  int x_cl;               /* the input is channels-last (the layout pass) */
  const uint8_t* pad;     /* or NULL: padded NHWC copy, [h + 2 ph][w + 2 pw][c_all] */
  int64_t c_all, c0, cpg; /* all channels, the group's first, channels per group */
  int64_t h, w, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t cpad;   /* channels per tap in K (>= cpg: the padding ones read the zero point) */
  int64_t k;      /* K of the GEMM: kh * kw * cpad */
  uint8_t zp;     /* the input zero point: a padded float 0 */
  uint8_t flip;   /* pad_nhwc's copy: 0x80 for an int8 image (stored as uint8), else 0 */
  uint8_t pad_zp; /* the zero point as the padded copy holds it (zp ^ flip) */
} qk_im2col;

/* One element of the row of output pixel (oh, ow): k = tap * cpad + c. */
static uint8_t im2col_at(const qk_im2col* g, int64_t oh, int64_t ow, int64_t k) {
  const int64_t tap = k / g->cpad, c = g->c0 + k % g->cpad;
  if (c >= g->c0 + g->cpg) return g->zp;
  const int64_t iy = oh * g->sh + (tap / g->kw) * g->dh, ix = ow * g->sw + (tap % g->kw) * g->dw;
  const int64_t y = iy - g->ph, x = ix - g->pw;
  if (y < 0 || y >= g->h || x < 0 || x >= g->w) return g->zp;
  return g->x_cl ? g->x[(y * g->w + x) * g->c_all + c] : g->x[(c * g->h + y) * g->w + x];
}

/* memcpy for the short runs of small convolutions (3 channels x 3 taps: 9
 * bytes), without a library call: two overlapping fixed-size copies. */
static inline void copy_run(uint8_t* d, const uint8_t* s, int64_t n) {
  if (n >= 16) {
    memcpy(d, s, (size_t)n);
  } else if (n >= 8) {
    memcpy(d, s, 8);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

static void im2col_rows(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc, uint8_t* dst) {
  const qk_im2col* g = (const qk_im2col*)ctx;
  const int64_t wp = g->w + 2 * g->pw;
  int64_t oh = i0 / g->ow, ow = i0 % g->ow - 1; /* one division per call */
  for (int64_t r = 0; r < rows; ++r) {
    if (++ow == g->ow) ow = 0, ++oh;
    uint8_t* d = dst + r * kc;
    if (g->pad != NULL && k0 == 0 && kc == g->k) {
      for (int64_t ky = 0; ky < g->kh; ++ky) {
        const uint8_t* src =
            g->pad + ((oh * g->sh + ky * g->dh) * wp + ow * g->sw) * g->c_all + g->c0;
        if (g->dw == 1 && g->cpg == g->c_all && g->cpad == g->cpg) {
          copy_run(d, src, g->kw * g->cpg);
          d += g->kw * g->cpg;
        } else {
          for (int64_t kx = 0; kx < g->kw; ++kx, d += g->cpad) {
            copy_run(d, src + kx * g->dw * g->c_all, g->cpg);
            if (g->cpad != g->cpg) memset(d + g->cpg, g->pad_zp, (size_t)(g->cpad - g->cpg));
          }
        }
      }
      continue;
    }
    if (g->pad != NULL) { /* a K block: runs of one tap's channels */
      for (int64_t k = k0; k < k0 + kc;) {
        const int64_t tap = k / g->cpad, c = k % g->cpad;
        const int64_t n = g->cpad - c < k0 + kc - k ? g->cpad - c : k0 + kc - k;
        const int64_t iy = oh * g->sh + (tap / g->kw) * g->dh;
        const int64_t ix = ow * g->sw + (tap % g->kw) * g->dw;
        const int64_t real = c < g->cpg ? (g->cpg - c < n ? g->cpg - c : n) : 0;
        memcpy(d, g->pad + (iy * wp + ix) * g->c_all + g->c0 + c, (size_t)real);
        if (real < n) memset(d + real, g->pad_zp, (size_t)(n - real));
        d += n;
        k += n;
      }
      continue;
    }
    for (int64_t t = 0; t < kc; ++t) d[t] = im2col_at(g, oh, ow, k0 + t);
  }
}

/* XORs n bytes with 0x80: int8 values to the uint8 domain (x + 128). */
static void flip_bytes(uint8_t* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    v ^= UINT64_C(0x8080808080808080);
    memcpy(p + i, &v, 8);
  }
  for (; i < n; ++i) p[i] ^= 0x80;
}

/* The padded channels-last copy of the batch image at g->x (NULL when the
 * scratch arena is short: the rows then come from the NCHW input). An int8
 * image is stored shifted to uint8 (g->flip 0x80: the GEMM then reads it as
 * uint8 with the zero point + 128, and the indirect GEMM can read it in
 * place). */
static const uint8_t* pad_nhwc(pterun_kernel_context* ctx, const qk_im2col* g) {
  const int64_t hp = g->h + 2 * g->ph, wp = g->w + 2 * g->pw;
  if ((double)hp * (double)wp * (double)g->c_all > (double)(SIZE_MAX / 2)) return NULL;
  uint8_t* p = pterun_kernel_scratch(ctx, (size_t)(hp * wp * g->c_all) + QK_PAD_SLACK, 64);
  if (p == NULL) return NULL;
  /* read (times zero weights) by the last pixel's padded taps: defined bytes */
  memset(p + hp * wp * g->c_all, 0, QK_PAD_SLACK);
  const size_t row = (size_t)(wp * g->c_all), side = (size_t)(g->pw * g->c_all);
  const uint8_t zp = (uint8_t)(g->zp ^ g->flip);
  /* The zero-point border: top and bottom rows, then each row's ends. */
  memset(p, zp, row * (size_t)g->ph);
  memset(p + row * (size_t)(g->ph + g->h), zp, row * (size_t)g->ph);
  for (int64_t y = 0; y < g->h; ++y) {
    uint8_t* dst = p + (size_t)(y + g->ph) * row;
    memset(dst, zp, side);
    memset(dst + row - side, zp, side);
    if (g->x_cl) /* already [x][c] */
      memcpy(dst + side, g->x + y * g->w * g->c_all, (size_t)(g->w * g->c_all));
    else /* [c][x] of input row y -> [x][c] */
      pterun_compute_u8_transpose(g->c_all, g->w, g->x + y * g->w, g->h * g->w, dst + side,
                                  g->c_all);
    if (g->flip != 0) flip_bytes(dst + side, (size_t)(g->w * g->c_all));
  }
  return p;
}

/* ---- execute ----------------------------------------------------------------- */

static pterun_status check_state(pterun_kernel_context* ctx, const qk_i8_state* st,
                                 const qk_i8_call* call) {
  if (st == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL,
                              "the fused int8 %s was not prepared at load",
                              call->conv ? "convolution" : "linear");
  return PTERUN_STATUS_OK;
}

static pterun_status check_bias(pterun_kernel_context* ctx, const pterun_tensor* b, int64_t oc) {
  if (b == NULL) return PTERUN_STATUS_OK;
  PTERUN_TRY(pterun_check_dtype(ctx, b, "bias", PTERUN_DTYPE_F32));
  PTERUN_TRY(pterun_check_data(ctx, b, "bias"));
  if (b->numel != oc || !pterun_tensor_is_contiguous(b))
    return PTERUN_FAIL_ARG(ctx, "arg 'bias': want %" PRId64 " contiguous floats", oc);
  return PTERUN_STATUS_OK;
}

/* The fusion pass lets the memory plan give the result the input's bytes
 * (the input is dead once the original dequantize ran): read such an input
 * from a scratch copy. */
static pterun_status unalias_input(pterun_kernel_context* ctx, const qk_i8_state* st,
                                   const pterun_tensor* x, const pterun_tensor* out,
                                   const void** data) {
  return qk_unalias(ctx, x->data, x->nbytes, out->data, out->nbytes, st->alias_buf, st->alias_cap,
                    data);
}

static pterun_status run_gemm(pterun_kernel_context* ctx, int64_t m, const pterun_compute_matrix* a,
                              pterun_compute_qs8_rows_fn rows, void* rctx, int a_dtype,
                              const pterun_compute_qs8_packed* w,
                              const pterun_compute_qs8_epilogue* ep,
                              const pterun_compute_matrix* c) {
  if (pterun_compute_qs8_gemm(pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx), m, a,
                              rows, rctx, a_dtype, w, ep, c) != 0)
    return PTERUN_FAIL_ARG(ctx, "int8 GEMM refused its arguments");
  return PTERUN_STATUS_OK;
}

static pterun_status exec_conv(pterun_kernel_context* ctx, const qk_i8_state* st,
                               const qk_i8_call* call) {
  pterun_tensor *x = call->x, *out = call->outt;
  int64_t sizes[4], b, g;
  qk_im2col ic;
  if (x->rank != 4 || x->sizes[1] != st->groups * (st->k / (st->kh * st->kw)))
    return PTERUN_FAIL_ARG(
        ctx, "arg 'input': want [N, %" PRId64 ", H, W]",
        st->groups *
            (st->k /
             (st->kh * st->kw))); /* Bounded so that every index below stays far inside int64. */
  if (call->stride[0] < 1 || call->stride[1] < 1 || call->dilation[0] < 1 ||
      call->dilation[1] < 1 || call->padding[0] < 0 || call->padding[1] < 0 ||
      call->stride[0] > INT32_MAX || call->stride[1] > INT32_MAX || call->dilation[0] > INT32_MAX ||
      call->dilation[1] > INT32_MAX || call->padding[0] > INT32_MAX ||
      call->padding[1] > INT32_MAX || x->sizes[2] > INT32_MAX || x->sizes[3] > INT32_MAX ||
      st->kh > INT32_MAX || st->kw > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx, "arg 'stride'/'padding'/'dilation': out of range");
  /* NCHW, or channels-last where the layout pass chose it */
  const int x_cl = pterun_is_channels_last4(x);
  if (!x_cl) PTERUN_TRY(pterun_check_contiguous(ctx, x, "input"));
  PTERUN_TRY(pterun_check_data(ctx, x, "input"));
  memset(&ic, 0, sizeof ic);
  ic.x_cl = x_cl;
  ic.h = x->sizes[2], ic.w = x->sizes[3];
  ic.c_all = x->sizes[1];
  ic.cpg = x->sizes[1] / st->groups;
  ic.kh = st->kh, ic.kw = st->kw;
  ic.sh = call->stride[0], ic.sw = call->stride[1];
  ic.ph = call->padding[0], ic.pw = call->padding[1];
  ic.dh = call->dilation[0], ic.dw = call->dilation[1];
  {
    const int64_t eh = ic.dh * (ic.kh - 1) + 1, ew = ic.dw * (ic.kw - 1) + 1;
    const int64_t oh = ic.h + 2 * ic.ph >= eh ? (ic.h + 2 * ic.ph - eh) / ic.sh + 1 : 0;
    const int64_t ow = ic.w + 2 * ic.pw >= ew ? (ic.w + 2 * ic.pw - ew) / ic.sw + 1 : 0;
    sizes[0] = x->sizes[0], sizes[1] = st->oc, sizes[2] = oh, sizes[3] = ow;
    ic.ow = ow;
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, sizes));
  const int out_cl = pterun_is_channels_last4(out);
  if (!out_cl) PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  ic.zp = (uint8_t)st->x_zp;
  ic.flip = st->x_dtype == PTERUN_DTYPE_I8 ? 0x80 : 0;
  ic.pad_zp = (uint8_t)(ic.zp ^ ic.flip);
  ic.cpad = st->cpad;
  ic.k = st->kh * st->kw * st->cpad;
  const void* xdata = x->data;
  {
    const int64_t ohw = sizes[2] * sizes[3], chw = x->sizes[1] * ic.h * ic.w;
    const size_t esz = pterun_dtype_size(out->dtype);
    pterun_compute_qs8_epilogue ep;
    memset(&ep, 0, sizeof ep);
    ep.a_zp = st->x_zp;
    ep.scale_per_column = 1;
    ep.out_inv_scale = st->out_inv;
    ep.out_zp = st->out_zp;
    ep.q_min = st->q_lo;
    ep.q_max = st->q_hi;
    if (ohw == 0) return PTERUN_STATUS_OK;
    /* One image through the GEMM: its padded channels-last copy is made
     * before any output is written and the rows come from it alone, so an
     * input sharing the output's bytes needs no copy of its own. */
    const uint8_t* pad0 = NULL;
    /* 1x1, stride 1, no padding on a channels-last input: the input is the
     * GEMM's A itself ([H*W][C] rows), no copy */
    const int direct_a = x_cl && st->dw_w == NULL && st->groups == 1 && ic.kh == 1 && ic.kw == 1 &&
                         ic.sh == 1 && ic.sw == 1 && ic.ph == 0 && ic.pw == 0 && ic.k == st->k;
    if (st->dw_w == NULL && sizes[0] == 1 && !direct_a) {
      ic.x = (const uint8_t*)xdata;
      pad0 = pad_nhwc(ctx, &ic);
    }
    if (pad0 == NULL) PTERUN_TRY(unalias_input(ctx, st, x, out, &xdata));
    if (st->dw_w != NULL) {
      pterun_compute_dwconv2d dp;
      memset(&dp, 0, sizeof dp);
      dp.batch = (size_t)sizes[0], dp.in_c = (size_t)x->sizes[1];
      dp.in_h = (size_t)ic.h, dp.in_w = (size_t)ic.w;
      dp.out_c = (size_t)st->oc, dp.out_h = (size_t)sizes[2], dp.out_w = (size_t)sizes[3];
      dp.kernel_h = (size_t)st->kh, dp.kernel_w = (size_t)st->kw;
      dp.stride_h = (size_t)ic.sh, dp.stride_w = (size_t)ic.sw;
      dp.dilation_h = (size_t)ic.dh, dp.dilation_w = (size_t)ic.dw;
      dp.pad_top = (size_t)ic.ph, dp.pad_left = (size_t)ic.pw;
      ep.scale = st->scale;
      ep.bias = call->bias != NULL ? (const float*)call->bias->data : NULL;
      ep.w_zp = st->w_zp;
      const int nhwc = dw_run_nhwc(ctx, st, &dp, (const uint8_t*)xdata, x_cl, &ep, out);
      if (nhwc < 0) return PTERUN_FAIL_ARG(ctx, "int8 depthwise convolution refused its arguments");
      if (nhwc > 0) return PTERUN_STATUS_OK;
      if (x_cl || out_cl) /* the NCHW loop reads and writes NCHW only */
        return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                  "int8 depthwise convolution: no scratch or weights for its "
                                  "channels-last route");
      if (pterun_compute_qs8_dwconv2d_nchw(pterun_kernel_threadpool(ctx),
                                           pterun_kernel_max_threads(ctx), &dp, xdata, st->x_dtype,
                                           st->dw_w, &ep, out->data, out->dtype) != 0)
        return PTERUN_FAIL_ARG(ctx, "int8 depthwise convolution refused its arguments");
      return PTERUN_STATUS_OK;
    }
    for (b = 0; b < sizes[0]; ++b)
      for (g = 0; g < st->groups; ++g) {
        const int64_t c0 = g * st->npg;
        pterun_compute_matrix cm;
        if (g == 0 && !direct_a) {
          ic.x = (const uint8_t*)xdata + b * chw;
          ic.pad = pad0 != NULL ? pad0 : pad_nhwc(ctx, &ic); /* scratch: released after the call */
          if (ic.pad == NULL) pterun_kernel_note_slow_path(ctx, "no scratch for the padded image");
        }
        ic.c0 = g * ic.cpg;
        ep.scale = st->scale + c0;
        ep.bias = call->bias != NULL ? (const float*)call->bias->data + c0 : NULL;
        ep.w_zp = st->w_zp != NULL ? st->w_zp + c0 : NULL;
        cm.dtype = out->dtype;
        if (out_cl) { /* pixel rows of all channels: [ohw][oc] */
          cm.data = (unsigned char*)out->data + (size_t)(b * st->oc * ohw + c0) * esz;
          cm.rs = st->oc;
          cm.cs = 1;
        } else { /* the GEMM's rows are pixels: NCHW takes them as columns */
          cm.data = (unsigned char*)out->data + (size_t)((b * st->oc + c0) * ohw) * esz;
          cm.rs = 1;
          cm.cs = ohw;
        }
        /* the padded copy holds an int8 image shifted to uint8 (pad_nhwc) */
        const int a_dt = ic.pad != NULL && ic.flip != 0 ? PTERUN_DTYPE_U8 : st->x_dtype;
        const int pad_is_a = !direct_a && ic.pad != NULL && st->groups == 1 && ic.kh == 1 &&
                             ic.kw == 1 && ic.sh == 1 && ic.sw == 1 && ic.ph == 0 && ic.pw == 0 &&
                             ic.k == st->k;
        if (!direct_a) ep.a_zp = ic.pad != NULL && ic.flip != 0 ? st->x_zp + 128 : st->x_zp;
        /* The indirect GEMM reads each window where it lies: in the padded
         * copy (uint8), or a 1x1's pixels in the channels-last input itself
         * (an int8 one shifted as it is broadcast): no packed A panels. It
         * declines weight zero points and taps that are not whole 4-byte
         * groups; the packed GEMM below takes those. */
        const uint8_t* in_place = direct_a ? (const uint8_t*)xdata + b * chw : ic.pad;
        if (in_place != NULL && ep.w_zp == NULL) {
          pterun_compute_qs8_conv2d_nhwc_args ia;
          memset(&ia, 0, sizeof ia);
          ia.image = in_place, ia.dtype = direct_a ? st->x_dtype : a_dt;
          ia.h = ic.h + 2 * ic.ph, ia.w = ic.w + 2 * ic.pw, ia.c = ic.c_all;
          ia.c0 = ic.c0, ia.group_c = ic.cpg, ia.kernel_h = ic.kh, ia.kernel_w = ic.kw;
          ia.stride_h = ic.sh, ia.stride_w = ic.sw, ia.dilation_h = ic.dh, ia.dilation_w = ic.dw;
          ia.out_h = sizes[2], ia.out_w = sizes[3];
          if (pterun_compute_qs8_conv2d_nhwc(pterun_kernel_threadpool(ctx),
                                             pterun_kernel_max_threads(ctx), &ia, &st->packed[g],
                                             &ep, &cm) == 0)
            continue;
        }
        if (direct_a) {
          pterun_compute_matrix am = {(void*)((const uint8_t*)xdata + b * chw), st->x_dtype,
                                      ic.c_all, 1};
          PTERUN_TRY(run_gemm(ctx, ohw, &am, NULL, NULL, st->x_dtype, &st->packed[g], &ep, &cm));
          continue;
        }
        if (pad_is_a) {
          /* 1x1, stride 1, no padding: the channels-last copy is the GEMM's A
           * itself ([H*W][C] rows, what im2col would copy), read in place. */
          pterun_compute_matrix am = {(void*)(uintptr_t)ic.pad, a_dt, ic.c_all, 1};
          PTERUN_TRY(run_gemm(ctx, ohw, &am, NULL, NULL, a_dt, &st->packed[g], &ep, &cm));
          continue;
        }
        PTERUN_TRY(run_gemm(ctx, ohw, NULL, im2col_rows, &ic, a_dt, &st->packed[g], &ep, &cm));
      }
  }
  return PTERUN_STATUS_OK;
}

/* Output sizes of a linear: input's sizes with the last one replaced by N. */
static pterun_status linear_out(pterun_kernel_context* ctx, const pterun_tensor* x,
                                const qk_i8_state* st, pterun_tensor* out, int64_t* m) {
  int64_t sizes[PTERUN_MAX_RANK];
  if (x->rank < 1 || x->sizes[x->rank - 1] != st->k)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': last dimension must be %" PRId64, st->k);
  memcpy(sizes, x->sizes, sizeof(int64_t) * x->rank);
  sizes[x->rank - 1] = st->oc;
  PTERUN_TRY(pterun_check_contiguous(ctx, x, "input"));
  PTERUN_TRY(pterun_check_data(ctx, x, "input"));
  if (out->rank == 2 && x->rank != 2) { /* mm on an elided [M, K] view of the input */
    sizes[0] = x->numel / st->k;
    sizes[1] = st->oc;
  }
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", out->rank == 2 ? 2 : x->rank, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, out, "out"));
  *m = x->numel / st->k;
  return PTERUN_STATUS_OK;
}

static pterun_status exec_linear_static(pterun_kernel_context* ctx, const qk_i8_state* st,
                                        const qk_i8_call* call) {
  int64_t m;
  pterun_compute_qs8_epilogue ep;
  const void* xdata;
  PTERUN_TRY(linear_out(ctx, call->x, st, call->outt, &m));
  if (m == 0) return PTERUN_STATUS_OK;
  PTERUN_TRY(unalias_input(ctx, st, call->x, call->outt, &xdata));
  memset(&ep, 0, sizeof ep);
  ep.a_zp = st->x_zp;
  ep.w_zp = st->w_zp;
  ep.scale = st->scale;
  ep.scale_per_column = 1;
  ep.bias = call->bias != NULL ? (const float*)call->bias->data : NULL;
  ep.out_inv_scale = st->out_inv;
  ep.out_zp = st->out_zp;
  ep.q_min = st->q_lo;
  ep.q_max = st->q_hi;
  pterun_compute_matrix am = {(void*)(uintptr_t)xdata, st->x_dtype, st->k, 1};
  pterun_compute_matrix cm = {call->outt->data, call->outt->dtype, st->oc, 1};
  return run_gemm(ctx, m, &am, NULL, NULL, st->x_dtype, &st->packed[0], &ep, &cm);
}

/* Dynamic: the input's scale and zero point are tensors choose_qparams wrote
 * this run; the GEMM dequantizes (+ bias, + relu / hardtanh) to float32. */
static pterun_status exec_linear_dynamic(pterun_kernel_context* ctx, const qk_i8_state* st,
                                         const qk_i8_call* call) {
  int64_t m, c, zp;
  float s;
  pterun_compute_qs8_epilogue ep;
  PTERUN_TRY(pterun_check_dtype(ctx, call->x_scale_t, "scale", PTERUN_DTYPE_F64));
  PTERUN_TRY(pterun_check_dtype(ctx, call->x_zp_t, "zero_point", PTERUN_DTYPE_I64));
  PTERUN_TRY(pterun_check_data(ctx, call->x_scale_t, "scale"));
  PTERUN_TRY(pterun_check_data(ctx, call->x_zp_t, "zero_point"));
  if (call->x_scale_t->numel != 1 || call->x_zp_t->numel != 1)
    return PTERUN_FAIL_ARG(ctx, "arg 'scale'/'zero_point': want one element each");
  PTERUN_TRY(qk_check_scale(ctx, "scale", ((const double*)call->x_scale_t->data)[0], &s));
  zp = ((const int64_t*)call->x_zp_t->data)[0];
  if (zp < (st->x_dtype == PTERUN_DTYPE_U8 ? 0 : -128) ||
      zp > (st->x_dtype == PTERUN_DTYPE_U8 ? 255 : 127))
    return PTERUN_FAIL_ARG(ctx, "arg 'zero_point': %" PRId64 " is outside %s", zp,
                           pterun_dtype_name(st->x_dtype));
  PTERUN_TRY(pterun_check_dtype(ctx, call->outt, "out", PTERUN_DTYPE_F32));
  PTERUN_TRY(linear_out(ctx, call->x, st, call->outt, &m));
  if (m == 0) return PTERUN_STATUS_OK;
  const void* xdata;
  PTERUN_TRY(unalias_input(ctx, st, call->x, call->outt, &xdata));
  float* sc = st->scale; /* this instruction's own: the method runs one execute at a time */
  for (c = 0; c < st->oc; ++c) sc[c] = s * st->w_scale[c];
  memset(&ep, 0, sizeof ep);
  ep.a_zp = (int32_t)zp;
  ep.w_zp = st->w_zp;
  ep.scale = sc;
  ep.scale_per_column = 1;
  ep.bias = call->bias != NULL ? (const float*)call->bias->data : NULL;
  ep.f_min = call->out.has_min ? (float)call->out.min : -INFINITY;
  ep.f_max = call->out.has_max ? (float)call->out.max : INFINITY;
  pterun_compute_matrix am = {(void*)(uintptr_t)xdata, st->x_dtype, st->k, 1};
  pterun_compute_matrix cm = {call->outt->data, PTERUN_DTYPE_F32, st->oc, 1};
  return run_gemm(ctx, m, &am, NULL, NULL, st->x_dtype, &st->packed[0], &ep, &cm);
}

pterun_status qk_i8_execute(pterun_kernel_context* ctx, const qk_i8_call* call) {
  const qk_i8_state* st = (const qk_i8_state*)pterun_kernel_state(ctx);
  PTERUN_TRY(check_state(ctx, st, call));
  PTERUN_TRY(check_bias(ctx, call->bias, st->oc));
  if (call->x->dtype != st->x_dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s, the program says %s",
                           pterun_dtype_name(call->x->dtype), pterun_dtype_name(st->x_dtype));
  if (call->dynamic) return exec_linear_dynamic(ctx, st, call);
  if (call->outt->dtype != st->out_dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s, the program says %s",
                           pterun_dtype_name(call->outt->dtype), pterun_dtype_name(st->out_dtype));
  if (!call->conv) return exec_linear_static(ctx, st, call);
  PTERUN_TRY(exec_conv(ctx, st, call));
  if (st->lut != NULL) { /* byte for byte, in place */
    uint8_t* o = (uint8_t*)call->outt->data;
    for (int64_t k = 0; k < call->outt->numel; ++k) o[k] = st->lut[o[k]];
  }
  return PTERUN_STATUS_OK;
}
