/* Fused quantized add (+ relu): the chains the PT2E quantizers leave around
 * a residual add, made by the load-time fusion pass
 * (src/core/method_fuse_patterns.inc):
 *
 *   pterun_quantized::add_q8.out / add_relu_q8.out: both operands' dequantize
 *   (input, scale, zero_point, quant_min, quant_max, dtype: self's, then
 *   other's), add's alpha, the output quantize's scale, zero_point,
 *   quant_min, quant_max, dtype, out, the return slot (20).
 *
 * ExecuTorch's formula for a quantized add, which is the unfused chain:
 * dequantize each operand ((q - zp) * scale in float32), add in float32,
 * relu, quantize. Each 8-bit operand is dequantized through a 256-entry
 * table built by the reference step (qk_dequantize_run) and the result
 * quantized by the reference step (qk_quantize_run), so the fused result is
 * the reference's bit for bit; no float tensor is written in between.
 * Shapes broadcast as aten::add's do. */
#include <inttypes.h>

#include "kernels/quantized/qutil.h"

typedef struct qk_add_opnd {
  pterun_tensor* t;
  const void* copy; /* the data when read from a copy, else NULL */
  double scale;
  int64_t zp, dtype;
} qk_add_opnd;

typedef struct qk_add_call {
  qk_add_opnd a, b;
  pterun_scalar alpha;
  double out_scale;
  int64_t out_zp, qmin, qmax, out_dtype;
  pterun_tensor* out;
  int relu;
  void* alias_buf; /* prepared: room for one operand copy */
  size_t alias_cap;
} qk_add_call;

static pterun_status read_q(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                            qk_add_opnd* o) {
  int64_t qmin, qmax;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i, "input", &o->t));
  PTERUN_TRY(pterun_arg_double(ctx, args, i + 1, "input_scale", &o->scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 2, "input_zero_point", &o->zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 3, "input_quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 4, "input_quant_max", &qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 5, "input_dtype", &o->dtype));
  if (o->dtype != PTERUN_DTYPE_U8 && o->dtype != PTERUN_DTYPE_I8)
    return QK_FAIL(ctx, "arg 'input_dtype': the fused add takes int8 or uint8, not %s",
                   pterun_dtype_name((int)o->dtype));
  if (o->t->dtype != o->dtype)
    return QK_FAIL(ctx, "arg 'input': dtype %s, the program says %s",
                   pterun_dtype_name(o->t->dtype), pterun_dtype_name((int)o->dtype));
  return PTERUN_STATUS_OK;
}

static pterun_status read_tail(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                               qk_add_call* c) {
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i, "alpha", &c->alpha));
  PTERUN_TRY(pterun_arg_double(ctx, args, i + 1, "output_scale", &c->out_scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 2, "output_zero_point", &c->out_zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 3, "output_quant_min", &c->qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 4, "output_quant_max", &c->qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 5, "output_dtype", &c->out_dtype));
  return pterun_arg_tensor(ctx, args, i + 6, "out", &c->out);
}

/* 256 float32 values of an 8-bit operand, by the reference dequantize. */
static pterun_status table_of(pterun_kernel_context* ctx, const qk_add_opnd* o, float* t) {
  uint8_t codes[256];
  float s;
  PTERUN_TRY(qk_check_scale(ctx, "input_scale", o->scale, &s));
  PTERUN_TRY(qk_check_zp(ctx, "input_zero_point", o->zp));
  for (int b = 0; b < 256; ++b) codes[b] = (uint8_t)b;
  qk_dequantize_run(codes, (int)o->dtype, t, PTERUN_DTYPE_F32, 0, 256, (int32_t)o->zp, s, 0);
  return PTERUN_STATUS_OK;
}

static float value_at(const qk_add_opnd* o, const float* table, int64_t k) {
  return table[((const uint8_t*)(o->copy != NULL ? o->copy : o->t->data))[k]];
}

static pterun_status execute(pterun_kernel_context* ctx, qk_add_call* c) {
  float ta[256], tb[256], buf[256], s_out;
  int64_t lo, hi, osz[PTERUN_MAX_RANK], sa[PTERUN_MAX_RANK], sb[PTERUN_MAX_RANK];
  const pterun_tensor *a = c->a.t, *b = c->b.t;
  int rank = a->rank > b->rank ? a->rank : b->rank, d, same;
  if ((c->alpha.is_float ? c->alpha.d : (double)c->alpha.i) != 1.0)
    return QK_FAIL(ctx, "arg 'alpha': the fused add takes 1");
  PTERUN_TRY(table_of(ctx, &c->a, ta));
  PTERUN_TRY(table_of(ctx, &c->b, tb));
  PTERUN_TRY(qk_check_scale(ctx, "output_scale", c->out_scale, &s_out));
  PTERUN_TRY(qk_check_zp(ctx, "output_zero_point", c->out_zp));
  if ((c->out_dtype != PTERUN_DTYPE_U8 && c->out_dtype != PTERUN_DTYPE_I8) ||
      c->out->dtype != c->out_dtype || !qk_qdtype_range((int)c->out_dtype, &lo, &hi) ||
      c->qmin < lo || c->qmax > hi || c->qmin > c->qmax)
    return QK_FAIL(ctx, "arg 'out': want %s in [%" PRId64 ", %" PRId64 "]",
                   pterun_dtype_name((int)c->out_dtype), c->qmin, c->qmax);
  PTERUN_TRY(pterun_check_data(ctx, a, "self"));
  PTERUN_TRY(pterun_check_data(ctx, b, "other"));
  /* broadcast shape; element strides of each operand (0 where broadcast) */
  same = a->rank == b->rank && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->rank) == 0;
  for (d = rank - 1; d >= 0; --d) {
    const int da = d - (rank - a->rank), db = d - (rank - b->rank);
    const int64_t na = da >= 0 ? a->sizes[da] : 1, nb = db >= 0 ? b->sizes[db] : 1;
    if (na != nb && na != 1 && nb != 1)
      return QK_FAIL(ctx, "arg 'other': size %" PRId64 " does not broadcast with %" PRId64, nb, na);
    osz[d] = na == 1 ? nb : na;
  }
  PTERUN_TRY(pterun_out_resize(ctx, c->out, "out", (size_t)rank, osz));
  PTERUN_TRY(pterun_check_data(ctx, c->out, "out"));
  if (same) {
    if (!qk_same_dim_order(a, b) || !qk_same_dim_order(a, c->out))
      return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                                "fused add: operands and output in different dim orders");
  } else {
    PTERUN_TRY(pterun_check_contiguous(ctx, a, "self"));
    PTERUN_TRY(pterun_check_contiguous(ctx, b, "other"));
    PTERUN_TRY(pterun_check_contiguous(ctx, c->out, "out"));
    for (d = rank - 1, lo = 1, hi = 1; d >= 0; --d) {
      const int da = d - (rank - a->rank), db = d - (rank - b->rank);
      const int64_t na = da >= 0 ? a->sizes[da] : 1, nb = db >= 0 ? b->sizes[db] : 1;
      sa[d] = na == 1 ? 0 : lo;
      sb[d] = nb == 1 ? 0 : hi;
      lo *= na;
      hi *= nb;
    }
  }
  /* The memory plan may give the output an operand's bytes (each is dead
   * after the add). Chunks are read whole before they are written, so an
   * operand of the output's shape that starts at or after the output, with
   * elements at least as wide, is safe; otherwise it is read from a copy. */
  const int64_t n = c->out->numel;
  const uintptr_t o0 = (uintptr_t)c->out->data, o1 = o0 + c->out->nbytes;
  uint8_t* spare = (uint8_t*)c->alias_buf;
  for (int k = 0; k < 2; ++k) {
    qk_add_opnd* op = k == 0 ? &c->a : &c->b;
    const pterun_tensor* t = op->t;
    const uintptr_t t0 = (uintptr_t)t->data, t1 = t0 + t->nbytes;
    if (t->nbytes == 0 || n == 0 || t1 <= o0 || o1 <= t0) continue;
    if (same && o0 <= t0 && pterun_dtype_size(t->dtype) >= pterun_dtype_size(c->out->dtype))
      continue;
    void* copy = pterun_kernel_scratch(ctx, t->nbytes, 64);
    if (copy == NULL && spare != NULL && t->nbytes <= c->alias_cap) {
      copy = spare;
      spare = NULL; /* one operand per half */
    }
    if (copy == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "fused add: no room to copy an operand of %zu bytes that shares "
                                "memory with the output",
                                t->nbytes);
    memcpy(copy, t->data, t->nbytes);
    op->copy = copy;
  }
  {
    const float inv = 1.0f / s_out;
    int64_t idx[PTERUN_MAX_RANK] = {0}, ia = 0, ib = 0, k0, k;
    for (k0 = 0; k0 < n; k0 += 256) {
      const int64_t cnt = n - k0 < 256 ? n - k0 : 256;
      for (k = 0; k < cnt; ++k) {
        float v;
        if (same) {
          v = value_at(&c->a, ta, k0 + k) + value_at(&c->b, tb, k0 + k);
        } else {
          v = value_at(&c->a, ta, ia) + value_at(&c->b, tb, ib);
          for (d = rank - 1; d >= 0; --d) { /* next output index */
            ia += sa[d];
            ib += sb[d];
            if (++idx[d] < osz[d]) break;
            ia -= sa[d] * osz[d];
            ib -= sb[d] * osz[d];
            idx[d] = 0;
          }
        }
        buf[k] = c->relu ? (v > 0 || v != v ? v : 0.0f) : v;
      }
      /* (the offset applies to both sides: the 8-bit output's bytes at k0) */
      qk_quantize_run(buf, PTERUN_DTYPE_F32, (uint8_t*)c->out->data + k0, (int)c->out_dtype, 0, cnt,
                      inv, (int32_t)c->out_zp, c->qmin, c->qmax);
    }
  }
  return PTERUN_STATUS_OK;
}

/* Load time: room for a copy of the larger operand (used when the scratch
 * arena cannot hold one). */
static pterun_status run(pterun_kernel_context* ctx, qk_add_call* c) {
  if (pterun_kernel_preparing(ctx)) {
    const size_t cap = c->a.t->nbytes > c->b.t->nbytes ? c->a.t->nbytes : c->b.t->nbytes;
    size_t* st = pterun_kernel_state_alloc(ctx, 64 + cap, 64);
    if (st == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes for the fused add", cap);
    st[0] = cap;
    return PTERUN_STATUS_OK;
  }
  size_t* st = (size_t*)pterun_kernel_state(ctx);
  if (st != NULL) {
    c->alias_cap = st[0];
    c->alias_buf = (uint8_t*)st + 64;
  }
  return execute(ctx, c);
}

static pterun_status add_q8(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            int relu) {
  qk_add_call c;
  memset(&c, 0, sizeof c);
  c.relu = relu;
  PTERUN_CHECK_NARGS(ctx, nargs, 20);
  PTERUN_TRY(read_q(ctx, args, 0, &c.a));
  PTERUN_TRY(read_q(ctx, args, 6, &c.b));
  PTERUN_TRY(read_tail(ctx, args, 12, &c));
  return run(ctx, &c);
}

PTERUN_KERNEL(qk_add_q8_out) {
  return add_q8(ctx, args, nargs, 0);
}
PTERUN_KERNEL(qk_add_relu_q8_out) {
  return add_q8(ctx, args, nargs, 1);
}
