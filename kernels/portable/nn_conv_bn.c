/* pterun::convolution_bn.out, convolution_bn_relu.out and
 * convolution_bn_hardtanh.out: a convolution, then an inference batch norm
 * (_native_batch_norm_legit_no_training) of its result, then the activation;
 * made by the load-time fusion pass (src/core/method_fuse_patterns.inc).
 * Arguments: the convolution's 0..8, then the batch norm's weight?, bias?,
 * running_mean, running_var, eps (9..13), (min_val, max_val,) out.
 *
 * prepare folds the batch norm into the convolution when the weight, bias and
 * the batch norm's tensors are float32 constants: per output channel c, with
 * s = weight[c] * (1 / sqrt(var[c] + eps)) (double, as the batch-norm kernel),
 *   w'[c] = w[c] * s,  b'[c] = (b[c] - mean[c]) * s + bias[c],
 * each rounded once to float32, kept in the instruction's state (and the
 * weight packed like any convolution's). Execute then runs one convolution
 * with the activation in its epilogue. Folding rounds differently from the
 * two kernels (float32 outputs differ in the last bits); without prepared
 * state (no_kernel_prepare, tensors that are not constants) execute runs the
 * convolution, then the batch norm and the activation in place with the
 * arithmetic of the unfused kernels (the same bytes). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/nn_conv.h"
#include "kernels/portable/util.h"

#define CB_BN 9     /* first batch-norm argument */
#define CB_NARGS 16 /* convolution_bn(_relu): 14 arguments, out, return slot */

typedef struct cb_state {
  pk_prepacked pack;  /* first: pk_prepacked_for() reads the state as one */
  const void* src[6]; /* data folded from: weight, bias, bn weight, bn bias, mean, var */
  pterun_tensor w, b; /* the folded weight (the weight's layout) and bias [cout] */
} cb_state;

static const pterun_tensor* opt_tensor(const pterun_value* v) {
  return v != NULL && v->tag == PTERUN_VALUE_TENSOR ? v->u.tensor : NULL;
}

/* The data of argument i, NULL for None (prepare checked the kinds). */
static const void* arg_data(pterun_value** args, size_t i) {
  const pterun_tensor* t = opt_tensor(args[i]);
  return t != NULL ? t->data : NULL;
}

/* A constant float32 [c] tensor, or None when `optional`. */
static int const_channels(const pterun_value* v, int64_t c, int optional) {
  if (v != NULL && v->tag == PTERUN_VALUE_NONE) return optional;
  const pterun_tensor* t = opt_tensor(v);
  return t != NULL && t->rank == 1 && t->sizes[0] == c && t->strides[0] == 1 &&
         pk_prepack_constant_f32(t);
}

static double channel(const pterun_tensor* t, int64_t c, double dflt) {
  return t != NULL ? (double)((const float*)t->data)[c] : dflt;
}

static pterun_status conv_bn_prepare(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                     size_t want, size_t iout) {
  if (nargs != want || !pterun_kernel_preparing(ctx)) return PTERUN_STATUS_OK;
  const pterun_tensor* w = opt_tensor(args[1]);
  if (w == NULL || w->rank < 3 || !pk_prepack_constant_f32(w) ||
      args[6]->tag != PTERUN_VALUE_BOOL ||
      args[6]->u.b /* transposed: the output channels are dim 1 */ ||
      args[CB_BN + 4]->tag != PTERUN_VALUE_DOUBLE)
    return PTERUN_STATUS_OK;
  const int64_t cout = w->sizes[0];
  if (cout <= 0 || !const_channels(args[2], cout, 1) || !const_channels(args[CB_BN], cout, 1) ||
      !const_channels(args[CB_BN + 1], cout, 1) || !const_channels(args[CB_BN + 2], cout, 0) ||
      !const_channels(args[CB_BN + 3], cout, 0))
    return PTERUN_STATUS_OK;
  cb_state* st = pterun_kernel_state_alloc(ctx, sizeof *st, _Alignof(cb_state));
  float* fw = st != NULL ? pterun_kernel_state_alloc(ctx, w->nbytes, 64) : NULL;
  float* fb = fw != NULL ? pterun_kernel_state_alloc(ctx, (size_t)cout * sizeof(float), 64) : NULL;
  if (fb == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the folded weight",
                              w->nbytes + (size_t)cout * sizeof(float));
  memset(st, 0, sizeof *st);
  const pterun_tensor *bias = opt_tensor(args[2]), *gamma = opt_tensor(args[CB_BN]),
                      *beta = opt_tensor(args[CB_BN + 1]), *mean = opt_tensor(args[CB_BN + 2]),
                      *var = opt_tensor(args[CB_BN + 3]);
  const double eps = args[CB_BN + 4]->u.d;
  const float* src = w->data;
  const int64_t per = w->numel / cout; /* elements of one output channel */
  for (int64_t c = 0; c < cout; ++c) {
    double s = channel(gamma, c, 1.0) * (1.0 / sqrt(channel(var, c, 1.0) + eps));
    for (int64_t e = 0; e < per; ++e) { /* dims 1.. row-major, at the weight's strides */
      int64_t off = c * w->strides[0], rem = e;
      for (int d = w->rank - 1; d >= 1; --d) {
        off += (rem % w->sizes[d]) * w->strides[d];
        rem /= w->sizes[d];
      }
      fw[off] = (float)((double)src[off] * s);
    }
    fb[c] = (float)((channel(bias, c, 0.0) - channel(mean, c, 0.0)) * s + channel(beta, c, 0.0));
  }
  st->w = *w;
  st->w.data = fw;
  st->w.capacity = w->nbytes;
  st->b.data = fb;
  st->b.dtype = PTERUN_DTYPE_F32;
  st->b.rank = 1;
  st->b.sizes[0] = st->b.max_sizes[0] = cout;
  st->b.strides[0] = 1;
  st->b.numel = cout;
  st->b.nbytes = st->b.capacity = (size_t)cout * sizeof(float);
  // The folded weight is this convolution's weight from now on: pack it.
  pterun_value vw = {.tag = PTERUN_VALUE_TENSOR, .u.tensor = &st->w};
  pterun_value* local[CB_NARGS + 2];
  memcpy(local, args, want * sizeof *local);
  local[1] = &vw;
  PTERUN_TRY(pk_convolution_pack(ctx, local, want, want, iout, &st->pack));
  st->src[0] = w->data;
  for (int k = 1; k < 6; ++k) st->src[k] = arg_data(args, k == 1 ? 2 : CB_BN + (size_t)k - 2);
  return PTERUN_STATUS_OK;
}

static double chan_f64(const pterun_tensor* t, int64_t c, double dflt) {
  return t != NULL ? pterun_load_f64(t->data, t->dtype, c * t->strides[0]) : dflt;
}

/* Unprepared: out = act(conv(x) * s + (bias - mean * s)) per channel, in
 * float32 as the batch-norm kernel computes it. */
static pterun_status conv_then_bn(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                  const pterun_compute_gemm_opts* act) {
  pterun_tensor *gamma, *beta, *mean, *var, *out;
  double eps;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, iout, "out", &out));
  if (out->dtype != PTERUN_DTYPE_F32 || out->rank < 2)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the fused batch norm needs a float32 output of rank >= 2");
  PTERUN_TRY(pk_convolution_run(ctx, args, iout, NULL));
  const int64_t C = out->sizes[1];
  PTERUN_TRY(pk_channel_arg(ctx, args, CB_BN, "weight", C, 1, &gamma));
  PTERUN_TRY(pk_channel_arg(ctx, args, CB_BN + 1, "bias", C, 1, &beta));
  PTERUN_TRY(pk_channel_arg(ctx, args, CB_BN + 2, "running_mean", C, 0, &mean));
  PTERUN_TRY(pk_channel_arg(ctx, args, CB_BN + 3, "running_var", C, 0, &var));
  PTERUN_TRY(pterun_arg_double(ctx, args, CB_BN + 4, "eps", &eps));
  int64_t inner = 1, cs = out->strides[1];
  for (int d = 2; d < out->rank; ++d) inner *= out->sizes[d];
  float* y = out->data;
  for (int64_t n = 0; n < out->sizes[0]; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double s = chan_f64(gamma, c, 1.0) * (1.0 / sqrt(chan_f64(var, c, 1.0) + eps));
      float fs = (float)s, fb = (float)(chan_f64(beta, c, 0.0) - chan_f64(mean, c, 0.0) * s);
      float* yc = y + n * out->strides[0] + c * cs;
      for (int64_t p = 0; p < inner; ++p) {
        int64_t off = 0, rem = p;
        for (int d = out->rank - 1; d >= 2; --d) {
          off += (rem % out->sizes[d]) * out->strides[d];
          rem /= out->sizes[d];
        }
        yc[off] = yc[off] * fs + fb;
        if (act != NULL)
          pterun_compute_f32_activate(yc + off, 1, act->activation, act->lo, act->hi);
      }
    }
  return PTERUN_STATUS_OK;
}

static pterun_status conv_bn(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                             const pterun_compute_gemm_opts* act) {
  const cb_state* st = pterun_kernel_state(ctx);
  int folded = st != NULL && st->w.data != NULL && opt_tensor(args[1]) != NULL &&
               args[1]->u.tensor->data == st->src[0];
  for (int k = 1; k < 6 && folded; ++k)
    folded = arg_data(args, k == 1 ? 2 : CB_BN + (size_t)k - 2) == st->src[k];
  if (!folded) return conv_then_bn(ctx, args, iout, act);
  pterun_value vw = {.tag = PTERUN_VALUE_TENSOR, .u.tensor = (pterun_tensor*)&st->w};
  pterun_value vb = {.tag = PTERUN_VALUE_TENSOR, .u.tensor = (pterun_tensor*)&st->b};
  pterun_value* local[CB_NARGS + 2];
  memcpy(local, args, (iout + 1) * sizeof *local);
  local[1] = &vw;
  local[2] = &vb;
  return pk_convolution_run(ctx, local, iout, act);
}

/* pterun::convolution_bn.out(<convolution's arguments>, Tensor? weight,
 *   Tensor? bias, Tensor running_mean, Tensor running_var, float eps, *, out) */
pterun_status pk_convolution_bn_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  PTERUN_CHECK_NARGS(ctx, nargs, CB_NARGS);
  return conv_bn(ctx, args, CB_NARGS - 2, NULL);
}

pterun_status pk_convolution_bn_prepare(pterun_kernel_context* ctx, pterun_value** args,
                                        size_t nargs) {
  return conv_bn_prepare(ctx, args, nargs, CB_NARGS, CB_NARGS - 2);
}

/* pterun::convolution_bn_relu.out(<convolution_bn's arguments>, *, out) and
 * pterun::convolution_bn_hardtanh.out(<convolution_bn's arguments>, min_val,
 * max_val, *, out) */
PK_DEFINE_FUSED_ACTIVATIONS(pk_convolution_bn, conv_bn, conv_bn_prepare, CB_NARGS)
