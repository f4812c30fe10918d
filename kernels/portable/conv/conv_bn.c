/* A convolution or addmm, then an inference batch norm
 * (_native_batch_norm_legit_no_training) of its result, then the activation,
 * as one call; made by the load-time fusion pass
 * (src/optimize/method_fuse_patterns.inc):
 *   pterun::convolution_bn(_relu|_hardtanh).out(<convolution's 9 arguments>,
 *     weight?, bias?, running_mean, running_var, eps, (min_val, max_val,) out)
 *   pterun::addmm_bn(_relu|_hardtanh).out(<addmm's 5 arguments>, <the same>)
 *
 * prepare folds the batch norm into the producer when its weight and bias
 * and the batch norm's tensors are float32 constants (addmm: a [N] bias,
 * beta = alpha = 1): per output channel c (a convolution weight's dim 0, an
 * addmm mat2's dim 1), with s = weight[c] * (1 / sqrt(var[c] + eps)) (double,
 * as the batch-norm kernel),
 *   w'[c] = w[c] * s,  b'[c] = (b[c] - mean[c]) * s + bias[c],
 * each rounded once to float32, kept in the instruction's state (and the
 * weight packed like the producer's). Execute then runs one producer call
 * with the activation in its epilogue. Folding rounds differently from the
 * two kernels (float32 outputs differ in the last bits); without prepared
 * state (no_kernel_prepare, tensors that are not constants) execute runs the
 * producer, then the batch norm and the activation in place with the
 * arithmetic of the unfused kernels (the same bytes). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/producers.h"
#include "kernels/portable/util.h"

#define FB_MAX_NARGS 18 /* the largest fused call: convolution_bn_hardtanh */

/* What a producer folds: where its weight, bias and the batch norm's
 * arguments are, the weight's output-channel dim, and its kernel. */
typedef struct fold_op {
  size_t w, b, bn;
  int wdim;
  size_t nargs; /* without activation bounds; out and return slot included */
  pterun_status (*run)(pterun_kernel_context*, pterun_value**, size_t,
                       const pterun_compute_gemm_opts*);
  pterun_status (*pack)(pterun_kernel_context*, pterun_value**, size_t, size_t, size_t,
                        pk_prepacked*);
  void (*reserve)(pterun_kernel_context*, pterun_value**, size_t, size_t, size_t);
} fold_op;

static const fold_op kConv = {
    1, 2, 9, 0, 16, pk_convolution_run, pk_convolution_pack, pk_convolution_reserve};
static const fold_op kAddmm = {2, 0, 5, 1, 12, pk_addmm_run, pk_addmm_pack, pk_addmm_reserve};

typedef struct fb_state {
  pk_prepacked pack;  /* first: pk_prepacked_for() reads the state as one */
  const void* src[6]; /* data folded from: weight, bias, bn weight, bn bias, mean, var */
  pterun_tensor w, b; /* the folded weight (the weight's layout) and bias [C] */
} fb_state;

static const pterun_tensor* opt_tensor(const pterun_value* v) {
  return v != NULL && v->tag == PTERUN_VALUE_TENSOR ? v->u.tensor : NULL;
}

/* Argument k of the six folded tensors (weight, bias, bn weight, bn bias,
 * mean, var). */
static size_t folded_arg(const fold_op* op, int k) {
  return k == 0 ? op->w : k == 1 ? op->b : op->bn + (size_t)k - 2;
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

static int scalar_one(const pterun_value* v) {
  return (v->tag == PTERUN_VALUE_INT && v->u.i == 1) ||
         (v->tag == PTERUN_VALUE_DOUBLE && v->u.d == 1.0);
}

static double channel(const pterun_tensor* t, int64_t c, double dflt) {
  return t != NULL ? (double)((const float*)t->data)[c] : dflt;
}

/* Whether op's call in args can fold (the producer's own conditions). */
static int producer_folds(const fold_op* op, pterun_value** args, const pterun_tensor* w) {
  if (op == &kConv) /* not transposed: the output channels are the weight's dim 0 */
    return w->rank >= 3 && args[6]->tag == PTERUN_VALUE_BOOL && !args[6]->u.b;
  return w->rank == 2 && scalar_one(args[3]) && scalar_one(args[4]);
}

static pterun_status fold_prepare(const fold_op* op, pterun_kernel_context* ctx,
                                  pterun_value** args, size_t nargs, size_t want, size_t iout) {
  if (nargs != want || want > FB_MAX_NARGS || !pterun_kernel_preparing(ctx))
    return PTERUN_STATUS_OK;
  /* the producer's scratch, folded or not (the arguments it reads come first,
   * in its order) */
  op->reserve(ctx, args, want, want, iout);
  const pterun_tensor* w = opt_tensor(args[op->w]);
  if (w == NULL || !pk_prepack_constant_f32(w) || !producer_folds(op, args, w) ||
      args[op->bn + 4]->tag != PTERUN_VALUE_DOUBLE)
    return PTERUN_STATUS_OK;
  const int64_t C = w->sizes[op->wdim];
  if (C <= 0 || !const_channels(args[op->b], C, op == &kConv) ||
      !const_channels(args[op->bn], C, 1) || !const_channels(args[op->bn + 1], C, 1) ||
      !const_channels(args[op->bn + 2], C, 0) || !const_channels(args[op->bn + 3], C, 0))
    return PTERUN_STATUS_OK;
  fb_state* st = pterun_kernel_state_alloc(ctx, sizeof *st, _Alignof(fb_state));
  float* fb = st != NULL ? pterun_kernel_state_alloc(ctx, (size_t)C * sizeof(float), 64) : NULL;
  if (fb == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the folded bias",
                              (size_t)C * sizeof(float));
  memset(st, 0, sizeof *st);
  const pterun_tensor *bias = opt_tensor(args[op->b]), *gamma = opt_tensor(args[op->bn]),
                      *beta = opt_tensor(args[op->bn + 1]), *mean = opt_tensor(args[op->bn + 2]),
                      *var = opt_tensor(args[op->bn + 3]);
  const double eps = args[op->bn + 4]->u.d;
  for (int64_t c = 0; c < C; ++c)
    fb[c] = (float)((channel(bias, c, 0.0) - channel(mean, c, 0.0)) *
                        (channel(gamma, c, 1.0) * (1.0 / sqrt(channel(var, c, 1.0) + eps))) +
                    channel(beta, c, 0.0));
  st->b.data = fb;
  st->b.dtype = PTERUN_DTYPE_F32;
  st->b.rank = 1;
  st->b.sizes[0] = st->b.max_sizes[0] = C;
  st->b.strides[0] = 1;
  st->b.numel = C;
  st->b.nbytes = st->b.capacity = (size_t)C * sizeof(float);
  /* A convolution whose every execute reads the packed weight: pack it
   * straight from the file's weight, scaling each output channel on the way
   * (the same floats as packing the folded copy), and keep no folded copy --
   * the weight is held once (st->w keeps the file weight's pointer as the
   * packed copy's identity only, pk_prepacked.packed_only). */
  if (op == &kConv) {
    double* scale = pterun_kernel_state_alloc(ctx, (size_t)C * sizeof(double), 64);
    if (scale == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes for the folded scale",
                                (size_t)C * sizeof(double));
    for (int64_t c = 0; c < C; ++c)
      scale[c] = channel(gamma, c, 1.0) * (1.0 / sqrt(channel(var, c, 1.0) + eps));
    PTERUN_TRY(pk_convolution_pack_scaled(ctx, args, want, want, iout, &st->pack, scale));
    if (st->pack.packed != NULL) {
      st->w = *w;
      for (int k = 0; k < 6; ++k) st->src[k] = arg_data(args, folded_arg(op, k));
      return PTERUN_STATUS_OK;
    }
  }
  float* fw = pterun_kernel_state_alloc(ctx, w->nbytes, 64);
  if (fw == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the folded weight", w->nbytes);
  const float* src = w->data;
  const int64_t per = w->numel / C; /* elements of one output channel */
  for (int64_t c = 0; c < C; ++c) {
    double s = channel(gamma, c, 1.0) * (1.0 / sqrt(channel(var, c, 1.0) + eps));
    for (int64_t e = 0; e < per; ++e) { /* the other dims row-major, at the weight's strides */
      int64_t off = c * w->strides[op->wdim], rem = e;
      for (int d = w->rank - 1; d >= 0; --d) {
        if (d == op->wdim) continue;
        off += (rem % w->sizes[d]) * w->strides[d];
        rem /= w->sizes[d];
      }
      fw[off] = (float)((double)src[off] * s);
    }
  }
  st->w = *w;
  st->w.data = fw;
  st->w.capacity = w->nbytes;
  // The folded weight is this producer's weight from now on: pack it.
  pterun_value vw = {.tag = PTERUN_VALUE_TENSOR, .u.tensor = &st->w};
  pterun_value* local[FB_MAX_NARGS];
  memcpy(local, args, want * sizeof *local);
  local[op->w] = &vw;
  PTERUN_TRY(op->pack(ctx, local, want, want, iout, &st->pack));
  for (int k = 0; k < 6; ++k) st->src[k] = arg_data(args, folded_arg(op, k));
  /* Execute reads the folded copy, or else runs addmm (mat2 through its
   * strides): a transposed weight may stay a view of the file. */
  if (op == &kAddmm) pterun_kernel_packed_constant(ctx, w, 0);
  return PTERUN_STATUS_OK;
}

static double chan_f64(const pterun_tensor* t, int64_t c, double dflt) {
  return t != NULL ? pterun_load_f64(t->data, t->dtype, c * t->strides[0]) : dflt;
}

/* Unprepared: out = act(producer(x) * s + (bias - mean * s)) per channel
 * (dim 1), in float32 as the batch-norm kernel computes it. */
static pterun_status run_then_bn(const fold_op* op, pterun_kernel_context* ctx, pterun_value** args,
                                 size_t iout, const pterun_compute_gemm_opts* act) {
  pterun_tensor *gamma, *beta, *mean, *var, *out;
  double eps;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, iout, "out", &out));
  if (out->dtype != PTERUN_DTYPE_F32 || out->rank < 2)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the fused batch norm needs a float32 output of rank >= 2");
  PTERUN_TRY(op->run(ctx, args, iout, NULL));
  const int64_t C = out->sizes[1];
  PTERUN_TRY(pk_channel_arg(ctx, args, op->bn, "weight", C, 1, &gamma));
  PTERUN_TRY(pk_channel_arg(ctx, args, op->bn + 1, "bias", C, 1, &beta));
  PTERUN_TRY(pk_channel_arg(ctx, args, op->bn + 2, "running_mean", C, 0, &mean));
  PTERUN_TRY(pk_channel_arg(ctx, args, op->bn + 3, "running_var", C, 0, &var));
  PTERUN_TRY(pterun_arg_double(ctx, args, op->bn + 4, "eps", &eps));
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

static pterun_status fold_run(const fold_op* op, pterun_kernel_context* ctx, pterun_value** args,
                              size_t iout, const pterun_compute_gemm_opts* act) {
  const fb_state* st = pterun_kernel_state(ctx);
  int folded = st != NULL && st->w.data != NULL && iout < FB_MAX_NARGS;
  for (int k = 0; k < 6 && folded; ++k) folded = arg_data(args, folded_arg(op, k)) == st->src[k];
  if (!folded && st != NULL && st->pack.packed_only) /* the producer would read the packed copy */
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL,
                              "the folded tensors changed since prepare");
  if (!folded) return run_then_bn(op, ctx, args, iout, act);
  pterun_value vw = {.tag = PTERUN_VALUE_TENSOR, .u.tensor = (pterun_tensor*)&st->w};
  pterun_value vb = {.tag = PTERUN_VALUE_TENSOR, .u.tensor = (pterun_tensor*)&st->b};
  pterun_value* local[FB_MAX_NARGS];
  memcpy(local, args, (iout + 1) * sizeof *local);
  local[op->w] = &vw;
  local[op->b] = &vb;
  return op->run(ctx, local, iout, act);
}

/* Per producer: the kernel and prepare over fold_run / fold_prepare, in the
 * shapes PK_DEFINE_FUSED_ACTIVATIONS expects. */
#define FB_DEFINE(name, op)                                                                        \
  static pterun_status name##_impl(pterun_kernel_context* ctx, pterun_value** args, size_t iout,   \
                                   const pterun_compute_gemm_opts* act) {                          \
    return fold_run(&(op), ctx, args, iout, act);                                                  \
  }                                                                                                \
  static pterun_status name##_prep(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,  \
                                   size_t want, size_t iout) {                                     \
    return fold_prepare(&(op), ctx, args, nargs, want, iout);                                      \
  }                                                                                                \
  PTERUN_KERNEL(name##_out) {                                                                      \
    PTERUN_CHECK_NARGS(ctx, nargs, (op).nargs);                                                    \
    return fold_run(&(op), ctx, args, (op).nargs - 2, NULL);                                       \
  }                                                                                                \
  PTERUN_KERNEL(name##_prepare) {                                                                  \
    return fold_prepare(&(op), ctx, args, nargs, (op).nargs, (op).nargs - 2);                      \
  }

/* pterun::convolution_bn.out and pterun::addmm_bn.out, with the _relu
 * (the same arguments) and _hardtanh (min_val, max_val before out) variants. */
FB_DEFINE(pk_convolution_bn, kConv)
PK_DEFINE_FUSED_ACTIVATIONS(pk_convolution_bn, pk_convolution_bn_impl, pk_convolution_bn_prep, 16)
FB_DEFINE(pk_addmm_bn, kAddmm)
PK_DEFINE_FUSED_ACTIVATIONS(pk_addmm_bn, pk_addmm_bn_impl, pk_addmm_bn_prep, 12)
