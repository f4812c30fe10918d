/* Fused dequantize -> relu / hardtanh -> quantize on 8-bit data (the
 * chains the PT2E quantizers leave around an activation they do not fuse
 * into the op before it, e.g. a relu6 after a convolution), made by the
 * load-time fusion pass (src/optimize/method_fuse_patterns.inc):
 *
 *   pterun_quantized::relu_q8.out / hardtanh_q8.out: dequantize_per_tensor's
 *   input, scale, zero_point, quant_min, quant_max, dtype; hardtanh's
 *   min_val, max_val; quantize_per_tensor's scale, zero_point, quant_min,
 *   quant_max, dtype; out and the return slot (13 / 15).
 *
 * An 8-bit input has 256 values: the chain is a table, built once at load
 * by running every code through the reference steps themselves
 * (qk_dequantize_run, the float activation, qk_quantize_run), so the fused
 * result is the reference's bit for bit. When the table is a clamp of the
 * code itself (same dtype and quantization in and out, as PT2E gives a relu6
 * after a convolution), execute clamps instead of looking up: the same bytes
 * (checked against the table at load), in a loop the compiler vectorises. */
#include <inttypes.h>

#include "kernels/quantized/q_lut_clamp.h"
#include "kernels/quantized/qint8.h"
#include "kernels/quantized/qutil.h"

enum { QK_LUT_RELU, QK_LUT_HARDTANH };

typedef struct qk_lut_call {
  pterun_tensor *x, *out;
  qk_q8 in, outq;
  int act;
  float lo, hi; /* hardtanh bounds, as the float kernel uses them */
} qk_lut_call;

typedef struct qk_lut_state {
  int32_t in_dtype, out_dtype;
  uint8_t table[256]; /* output byte for input byte b */
  qk_lut_clamp clamp; /* the table as a clamp, when it is one */
} qk_lut_state;

static pterun_status read_call(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               int act, qk_lut_call* c) {
  size_t i = 6;
  memset(c, 0, sizeof *c);
  c->act = act;
  PTERUN_CHECK_NARGS(ctx, nargs, act == QK_LUT_HARDTANH ? 15 : 13);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &c->x));
  PTERUN_TRY(qk_arg_q8(ctx, args, 1, 0, &c->in));
  if (act == QK_LUT_HARDTANH) {
    pterun_scalar lo, hi;
    PTERUN_TRY(pterun_arg_scalar(ctx, args, 6, "min_val", &lo));
    PTERUN_TRY(pterun_arg_scalar(ctx, args, 7, "max_val", &hi));
    c->lo = (float)lo.d;
    c->hi = (float)hi.d;
    i = 8;
  }
  PTERUN_TRY(qk_arg_q8(ctx, args, i, 1, &c->outq));
  return pterun_arg_tensor(ctx, args, i + 5, "out", &c->out);
}

/* The reference chain on every 8-bit code (relu: act, else hardtanh). */
static pterun_status chain_table(pterun_kernel_context* ctx, const qk_q8* in, int act, float lo,
                                 float hi, const qk_q8* outq, uint8_t table[256]) {
  float s_in, s_out, x[256];
  PTERUN_TRY(qk_check_q8(ctx, in, &s_in));
  PTERUN_TRY(qk_check_q8(ctx, outq, &s_out));
  qk_dequant_table(in, s_in, x);
  for (int b = 0; b < 256; ++b) {
    float v = x[b];
    if (act == QK_LUT_RELU) {
      v = v > 0 ? v : 0.0f; /* finite: (q - zp) * s */
    } else {
      const float m = v < lo ? lo : v;
      v = hi < m ? hi : m;
    }
    x[b] = v;
  }
  qk_quantize_run(x, PTERUN_DTYPE_F32, table, (int)outq->dtype, 0, 256, 1.0f / s_out,
                  (int32_t)outq->zp, outq->qmin, outq->qmax);
  return PTERUN_STATUS_OK;
}

pterun_status qk_lut_hardtanh_table(pterun_kernel_context* ctx, const qk_q8* in, float lo, float hi,
                                    const qk_q8* out, uint8_t table[256]) {
  return chain_table(ctx, in, QK_LUT_HARDTANH, lo, hi, out, table);
}

static pterun_status build_table(pterun_kernel_context* ctx, const qk_lut_call* c,
                                 qk_lut_state* st) {
  PTERUN_TRY(chain_table(ctx, &c->in, c->act, c->lo, c->hi, &c->outq, st->table));
  st->in_dtype = (int32_t)c->in.dtype;
  st->out_dtype = (int32_t)c->outq.dtype;
  st->clamp =
      qk_lut_find_clamp(st->table, st->in_dtype == PTERUN_DTYPE_I8, st->in_dtype == st->out_dtype);
  return PTERUN_STATUS_OK;
}

static pterun_status run(pterun_kernel_context* ctx, pterun_value** args, size_t nargs, int act) {
  qk_lut_call c;
  const qk_lut_state* st;
  PTERUN_TRY(read_call(ctx, args, nargs, act, &c));
  if (pterun_kernel_preparing(ctx)) {
    qk_lut_state* ns = pterun_kernel_state_alloc(ctx, sizeof *ns, 64);
    if (ns == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate the table");
    return build_table(ctx, &c, ns);
  }
  st = (const qk_lut_state*)pterun_kernel_state(ctx);
  if (st == NULL) return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL, "not prepared");
  if (c.x->dtype != st->in_dtype || c.out->dtype != st->out_dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'input'/'out': dtypes %s/%s, the program says %s/%s",
                           pterun_dtype_name(c.x->dtype), pterun_dtype_name(c.out->dtype),
                           pterun_dtype_name(st->in_dtype), pterun_dtype_name(st->out_dtype));
  PTERUN_TRY(pterun_check_data(ctx, c.x, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, c.out, "out", c.x));
  if (!pterun_same_layout(c.x, c.out))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'out': dim order differs from the input's");
  PTERUN_TRY(pterun_check_data(ctx, c.out, "out"));
  {
    /* One byte in, one out: an output sharing the input's bytes is read
     * ahead of the writes in the direction that never overtakes them. */
    const uint8_t* in = (const uint8_t*)c.x->data;
    uint8_t* out = (uint8_t*)c.out->data;
    const int64_t n = c.x->numel;
    if (st->clamp.is_clamp && (out == in || (uintptr_t)out >= (uintptr_t)(in + n) ||
                               (uintptr_t)in >= (uintptr_t)(out + n))) {
      qk_lut_run_clamp(&st->clamp, out, in, n);
    } else if ((uintptr_t)out > (uintptr_t)in)
      for (int64_t k = c.x->numel - 1; k >= 0; --k) out[k] = st->table[in[k]];
    else
      for (int64_t k = 0; k < c.x->numel; ++k) out[k] = st->table[in[k]];
  }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(qk_relu_q8_out) {
  return run(ctx, args, nargs, QK_LUT_RELU);
}

PTERUN_KERNEL(qk_hardtanh_q8_out) {
  return run(ctx, args, nargs, QK_LUT_HARDTANH);
}
