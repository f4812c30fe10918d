/* Fused quantized add (+ relu): the chains the PT2E quantizers leave around
 * a residual add, made by the load-time fusion pass
 * (src/optimize/method_fuse_patterns.inc):
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
  qk_q8 q;
} qk_add_opnd;

typedef struct qk_add_call {
  qk_add_opnd a, b;
  pterun_scalar alpha;
  qk_q8 outq;
  pterun_tensor* out;
  int relu;
  void* alias_buf; /* prepared: room for one operand copy */
  size_t alias_cap;
} qk_add_call;

static pterun_status read_q(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                            qk_add_opnd* o) {
  PTERUN_TRY(pterun_arg_tensor(ctx, args, i, "input", &o->t));
  PTERUN_TRY(qk_arg_q8(ctx, args, i + 1, 0, &o->q));
  if (o->t->dtype != o->q.dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s, the program says %s",
                           pterun_dtype_name(o->t->dtype), pterun_dtype_name((int)o->q.dtype));
  return PTERUN_STATUS_OK;
}

static pterun_status read_tail(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                               qk_add_call* c) {
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i, "alpha", &c->alpha));
  PTERUN_TRY(qk_arg_q8(ctx, args, i + 1, 1, &c->outq));
  return pterun_arg_tensor(ctx, args, i + 6, "out", &c->out);
}

static float value_at(const qk_add_opnd* o, const float* table, int64_t k) {
  return table[((const uint8_t*)(o->copy != NULL ? o->copy : o->t->data))[k]];
}

static pterun_status execute(pterun_kernel_context* ctx, qk_add_call* c) {
  float ta[256], tb[256], buf[256], s_a, s_b, s_out;
  int64_t lo, hi, osz[PTERUN_MAX_RANK], sa[PTERUN_MAX_RANK], sb[PTERUN_MAX_RANK];
  const pterun_tensor *a = c->a.t, *b = c->b.t;
  size_t orank;
  int rank, d, same;
  if ((c->alpha.is_float ? c->alpha.d : (double)c->alpha.i) != 1.0)
    return PTERUN_FAIL_ARG(ctx, "arg 'alpha': the fused add takes 1");
  PTERUN_TRY(qk_check_q8(ctx, &c->a.q, &s_a));
  PTERUN_TRY(qk_check_q8(ctx, &c->b.q, &s_b));
  PTERUN_TRY(qk_check_q8(ctx, &c->outq, &s_out));
  if (c->out->dtype != c->outq.dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s, the program says %s",
                           pterun_dtype_name(c->out->dtype), pterun_dtype_name((int)c->outq.dtype));
  qk_dequant_table(&c->a.q, s_a, ta);
  qk_dequant_table(&c->b.q, s_b, tb);
  PTERUN_TRY(pterun_check_data(ctx, a, "self"));
  PTERUN_TRY(pterun_check_data(ctx, b, "other"));
  /* broadcast shape; element strides of each operand (0 where broadcast) */
  same = a->rank == b->rank && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->rank) == 0;
  PTERUN_TRY(pterun_broadcast_shape(ctx, a, "self", b, "other", osz, &orank));
  rank = (int)orank;
  PTERUN_TRY(pterun_out_resize(ctx, c->out, "out", orank, osz));
  PTERUN_TRY(pterun_check_data(ctx, c->out, "out"));
  if (same) {
    if (!pterun_same_layout(a, b) || !pterun_same_layout(a, c->out))
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
    PTERUN_TRY(qk_unalias(ctx, t->data, t->nbytes, c->out->data, c->out->nbytes, spare,
                          c->alias_cap, &op->copy));
    if (op->copy == spare) spare = NULL; /* room for one operand */
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
        buf[k] = c->relu && v < 0 ? 0.0f : v;
      }
      /* (the offset applies to both sides: the 8-bit output's bytes at k0) */
      qk_quantize_run(buf, PTERUN_DTYPE_F32, (uint8_t*)c->out->data + k0, (int)c->outq.dtype, 0,
                      cnt, inv, (int32_t)c->outq.zp, c->outq.qmin, c->outq.qmax);
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
