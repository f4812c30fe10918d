/* quantized_decomposed embedding_{byte,4bit,2bit} (.out / .dtype_out) and
 * mixed_mm / mixed_linear: ExecuTorch's x86-64 numerics (docs/quantized.md). */
#include "kernels/quantized/qutil.h"

#include <inttypes.h>

/* ---- embeddings ----------------------------------------------------------- */

/* Signed code of logical element j of a packed row (ExecuTorch layouts:
 * 4-bit even j in the high nibble, bias 8; 2-bit element j%4 in bits
 * 2*(j%4)+1..2*(j%4), bias 2). */
static inline int32_t code_at(const uint8_t* row, int nbit, int64_t j, int is_signed) {
  if (nbit == 8) return is_signed ? (int32_t)(int8_t)row[j] : (int32_t)row[j];
  if (nbit == 4) {
    uint8_t b = row[j >> 1];
    return (int32_t)((j & 1) ? (b & 0x0f) : (b >> 4)) - 8;
  }
  return (int32_t)((row[j >> 2] >> (2 * (j & 3))) & 3) - 2;
}

/* Writes elements [j0, j1) of one embedding row: ((float)code - z) * s. */
static inline void embed_group(const uint8_t* row, int nbit, int sgn, int64_t j0, int64_t j1,
                               float z, float s, void* out, int out_dt, int64_t obase) {
  int64_t j;
  switch (out_dt) {
    case PTERUN_DTYPE_F32: {
      float* o = (float*)out + obase;
      for (j = j0; j < j1; ++j) o[j] = ((float)code_at(row, nbit, j, sgn) - z) * s;
      break;
    }
    case PTERUN_DTYPE_F16: {
      uint16_t* o = (uint16_t*)out + obase;
      for (j = j0; j < j1; ++j)
        o[j] = pterun_f32_to_f16(((float)code_at(row, nbit, j, sgn) - z) * s);
      break;
    }
    default: {
      uint16_t* o = (uint16_t*)out + obase;
      for (j = j0; j < j1; ++j)
        o[j] = pterun_f32_to_bf16(((float)code_at(row, nbit, j, sgn) - z) * s);
      break;
    }
  }
}

static int is_embed_float(int dt) {
  return dt == PTERUN_DTYPE_F32 || dt == PTERUN_DTYPE_F16 || dt == PTERUN_DTYPE_BF16;
}

static pterun_status embedding(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               int nbit, int has_dtype_arg) {
  pterun_tensor *w, *sc, *zp, *idx, *out;
  int64_t qmin, qmax, dtype = 0, V, packed, D, G, gs, N, i, sizes[PTERUN_MAX_RANK];
  int has_dtype = 0, d;
  size_t oi = has_dtype_arg ? 7 : 6;
  PTERUN_CHECK_NARGS(ctx, nargs, oi + 2);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "weight", &w));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight_scales", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "weight_zero_points", &zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "weight_quant_min", &qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "weight_quant_max", &qmax));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "indices", &idx));
  if (has_dtype_arg) PTERUN_TRY(pterun_arg_opt_int(ctx, args, 6, "dtype", &dtype, &has_dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, oi, "out", &out));

  if (w->rank != 2) return PTERUN_FAIL_ARG(ctx, "arg 'weight': must be 2-D, got rank %d", w->rank);
  if (nbit == 8 ? (w->dtype != PTERUN_DTYPE_U8 && w->dtype != PTERUN_DTYPE_I8)
                : w->dtype != PTERUN_DTYPE_U8)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': dtype %s not supported (%s)",
                           pterun_dtype_name(w->dtype),
                           nbit == 8 ? "uint8 or int8" : "packed uint8");
  if (sc->rank != 1 && sc->rank != 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': must be 1-D or 2-D, got rank %d", sc->rank);
  V = w->sizes[0];
  packed = w->sizes[1];
  D = packed * (8 / nbit);
  if (sc->sizes[0] != V)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': %" PRId64 " rows, weight has %" PRId64,
                           sc->sizes[0], V);
  G = sc->rank == 2 ? sc->sizes[1] : 1;
  if (G <= 0 || D % G != 0)
    return PTERUN_FAIL_ARG(
        ctx, "arg 'weight_scales': %" PRId64 " groups do not divide embedding dim %" PRId64, G, D);
  gs = D / G;
  if (!is_embed_float(out->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s not supported (float32, float16, bfloat16)",
                           pterun_dtype_name(out->dtype));
  if (!is_embed_float(sc->dtype))
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': dtype %s not supported",
                           pterun_dtype_name(sc->dtype));
  if (!has_dtype_arg && sc->dtype != out->dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': dtype %s must equal the out dtype %s",
                           pterun_dtype_name(sc->dtype), pterun_dtype_name(out->dtype));
  if (zp != NULL) {
    if (zp->rank != sc->rank)
      return PTERUN_FAIL_ARG(ctx, "arg 'weight_zero_points': rank must match weight_scales");
    for (d = 0; d < zp->rank; ++d)
      if (zp->sizes[d] != sc->sizes[d])
        return PTERUN_FAIL_ARG(ctx, "arg 'weight_zero_points': shape must match weight_scales");
    if (zp->dtype != out->dtype || zp->dtype != sc->dtype)
      return PTERUN_FAIL_ARG(
          ctx, "arg 'weight_zero_points': dtype %s must equal the scales and out dtype",
          pterun_dtype_name(zp->dtype));
    PTERUN_TRY(pterun_check_contiguous(ctx, zp, "weight_zero_points"));
  }
  if (nbit == 8 ? idx->dtype != PTERUN_DTYPE_I64
                : (idx->dtype != PTERUN_DTYPE_I64 && idx->dtype != PTERUN_DTYPE_I32))
    return PTERUN_FAIL_ARG(ctx, "arg 'indices': dtype %s not supported (%s)",
                           pterun_dtype_name(idx->dtype), nbit == 8 ? "int64" : "int64 or int32");
  if (qmin > qmax)
    return PTERUN_FAIL_ARG(
        ctx, "arg 'weight_quant_min': %" PRId64 " is greater than weight_quant_max %" PRId64, qmin,
        qmax);
  if (has_dtype && out->dtype != dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s does not match dtype argument %s",
                           pterun_dtype_name(out->dtype), pterun_dtype_name((int)dtype));
  if (idx->rank + 1 > PTERUN_MAX_RANK) return PTERUN_FAIL_ARG(ctx, "arg 'indices': rank too large");
  PTERUN_TRY(pterun_check_contiguous(ctx, w, "weight"));
  PTERUN_TRY(pterun_check_contiguous(ctx, sc, "weight_scales"));
  PTERUN_TRY(pterun_check_contiguous(ctx, idx, "indices"));
  for (d = 0; d < idx->rank; ++d) sizes[d] = idx->sizes[d];
  sizes[idx->rank] = D;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)idx->rank + 1, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  N = idx->numel;
  for (i = 0; i < N; ++i) {
    int64_t r = pterun_load_i64(idx->data, idx->dtype, i);
    if (r < 0 || r >= V)
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'indices': index %" PRId64 " at position %" PRId64
                             " out of range [0, %" PRId64 ")",
                             r, i, V);
  }
  for (i = 0; i < N; ++i) {
    int64_t r = pterun_load_i64(idx->data, idx->dtype, i), g;
    const uint8_t* row = (const uint8_t*)w->data + r * packed;
    int64_t obase = i * D;
    int sgn = w->dtype == PTERUN_DTYPE_I8;
    for (g = 0; g < G; ++g) {
      float s = (float)pterun_load_f64(sc->data, sc->dtype, r * G + g);
      float z = zp ? (float)pterun_load_f64(zp->data, zp->dtype, r * G + g) : 0.0f;
      int64_t j0 = g * gs, j1 = j0 + gs;
      /* nbit is a constant in each call, so the decoder is specialised */
      switch (nbit) {
        case 8: embed_group(row, 8, sgn, j0, j1, z, s, out->data, out->dtype, obase); break;
        case 4: embed_group(row, 4, 0, j0, j1, z, s, out->data, out->dtype, obase); break;
        default: embed_group(row, 2, 0, j0, j1, z, s, out->data, out->dtype, obase); break;
      }
    }
  }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(qk_embedding_byte_out) {
  return embedding(ctx, args, nargs, 8, 0);
}
PTERUN_KERNEL(qk_embedding_byte_dtype_out) {
  return embedding(ctx, args, nargs, 8, 1);
}
PTERUN_KERNEL(qk_embedding_4bit_out) {
  return embedding(ctx, args, nargs, 4, 0);
}
PTERUN_KERNEL(qk_embedding_4bit_dtype_out) {
  return embedding(ctx, args, nargs, 4, 1);
}
PTERUN_KERNEL(qk_embedding_2bit_out) {
  return embedding(ctx, args, nargs, 2, 0);
}
PTERUN_KERNEL(qk_embedding_2bit_dtype_out) {
  return embedding(ctx, args, nargs, 2, 1);
}

/* ---- mixed_mm / mixed_linear ---------------------------------------------- */

/* mixed_mm.out(input [m,n], weight i8 [n,p], weight_scales [n], Tensor?
 *   weight_zero_points, *, out [m,p]):
 *   out[i][j] = sum_k (x[i][k] * w[k][j]) * s[k], every op in the input type. */
PTERUN_KERNEL(qk_mixed_mm_out) {
  pterun_tensor *x, *w, *sc, *zp, *out;
  int64_t m, n, p, i, j, k, sizes[2];
  int T;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "weight_scales", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 3, "weight_zero_points", &zp));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  PTERUN_TRY(pterun_check_rank(ctx, x, "input", 2));
  PTERUN_TRY(pterun_check_rank(ctx, w, "weight", 2));
  PTERUN_TRY(pterun_check_rank(ctx, sc, "weight_scales", 1));
  PTERUN_TRY(pterun_check_rank(ctx, out, "out", 2));
  if (x->sizes[1] != w->sizes[0])
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': rows %" PRId64 " != input columns %" PRId64,
                           w->sizes[0], x->sizes[1]);
  if (sc->sizes[0] != w->sizes[0])
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'weight_scales': %" PRId64 " scales, weight has %" PRId64 " rows",
                           sc->sizes[0], w->sizes[0]);
  if (x->dtype != sc->dtype || x->dtype != out->dtype)
    return PTERUN_FAIL_ARG(
        ctx, "arg 'weight_scales': input, weight_scales and out must share one dtype");
  PTERUN_TRY(pterun_check_dtype(ctx, w, "weight", PTERUN_DTYPE_I8));
  if (x->dtype != PTERUN_DTYPE_F32 && x->dtype != PTERUN_DTYPE_F16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported (float32, float16)",
                           pterun_dtype_name(x->dtype));
  if (zp != NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'weight_zero_points': zero points are not supported");
  PTERUN_TRY(pterun_check_contiguous(ctx, x, "input"));
  PTERUN_TRY(pterun_check_contiguous(ctx, w, "weight"));
  PTERUN_TRY(pterun_check_contiguous(ctx, sc, "weight_scales"));
  m = x->sizes[0];
  n = x->sizes[1];
  p = w->sizes[1];
  sizes[0] = m;
  sizes[1] = p;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  T = x->dtype;
  for (i = 0; i < m; ++i)
    for (j = 0; j < p; ++j) {
      double sum = 0.0;
      for (k = 0; k < n; ++k) {
        double xv = pterun_load_f64(x->data, T, i * n + k);
        double wv = (double)((const int8_t*)w->data)[k * p + j];
        double sv = pterun_load_f64(sc->data, T, k);
        double prod = pterun_round_to_dtype(pterun_round_to_dtype(xv * wv, T) * sv, T);
        sum = pterun_round_to_dtype(sum + prod, T);
      }
      pterun_store_f64(out->data, T, i * p + j, sum);
    }
  return PTERUN_STATUS_OK;
}

/* mixed_linear.out(input [m,n], weight i8 [p,n], weight_scales [p] or [p,G],
 *   Tensor? weight_zero_points, ScalarType? dtype, *, out [m,p]) */
PTERUN_KERNEL(qk_mixed_linear_out) {
  pterun_tensor *x, *w, *sc, *zp, *out;
  int64_t dtype, m, n, p, g, n_over_g, i, j, k, k2, sizes[2];
  int has_dtype, U, T, PT;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &x));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "weight_scales", &sc));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 3, "weight_zero_points", &zp));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 4, "dtype", &dtype, &has_dtype));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(pterun_check_rank(ctx, x, "input", 2));
  PTERUN_TRY(pterun_check_rank(ctx, w, "weight", 2));
  if (sc->rank != 1 && sc->rank != 2)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': must be 1-D or 2-D, got rank %d", sc->rank);
  PTERUN_TRY(pterun_check_rank(ctx, out, "out", 2));
  if (x->sizes[1] != w->sizes[1])
    return PTERUN_FAIL_ARG(ctx, "arg 'weight': columns %" PRId64 " != input columns %" PRId64,
                           w->sizes[1], x->sizes[1]);
  if (sc->sizes[0] != w->sizes[0])
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': %" PRId64 " rows, weight has %" PRId64,
                           sc->sizes[0], w->sizes[0]);
  if (x->dtype != sc->dtype)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': dtype must equal the input dtype");
  if (has_dtype) {
    if (out->dtype != dtype)
      return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s does not match dtype argument",
                             pterun_dtype_name(out->dtype));
    if (dtype != PTERUN_DTYPE_F32 && dtype != PTERUN_DTYPE_F16)
      return PTERUN_FAIL_ARG(ctx, "arg 'dtype': must be float32 or float16");
  }
  PTERUN_TRY(pterun_check_dtype(ctx, w, "weight", PTERUN_DTYPE_I8));
  if (x->dtype != PTERUN_DTYPE_F32 && x->dtype != PTERUN_DTYPE_F16)
    return PTERUN_FAIL_ARG(ctx, "arg 'input': dtype %s not supported (float32, float16)",
                           pterun_dtype_name(x->dtype));
  if (zp != NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'weight_zero_points': zero points are not supported");
  if (out->dtype != PTERUN_DTYPE_F32 && out->dtype != PTERUN_DTYPE_F16 &&
      out->dtype != PTERUN_DTYPE_F64)
    return PTERUN_FAIL_ARG(ctx, "arg 'out': dtype %s not supported", pterun_dtype_name(out->dtype));
  PTERUN_TRY(pterun_check_contiguous(ctx, x, "input"));
  PTERUN_TRY(pterun_check_contiguous(ctx, w, "weight"));
  PTERUN_TRY(pterun_check_contiguous(ctx, sc, "weight_scales"));
  m = x->sizes[0];
  n = x->sizes[1];
  p = w->sizes[0];
  sizes[0] = m;
  sizes[1] = p;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  PTERUN_TRY(pterun_check_contiguous(ctx, out, "out"));
  g = n;
  if (sc->rank == 2) {
    if (sc->sizes[1] <= 0) return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': zero groups");
    g = (n + sc->sizes[1] - 1) / sc->sizes[1];
  }
  /* ExecuTorch indexes the scales with a row stride of ceil(n / g) groups
   * (equal to G whenever G divides n). */
  n_over_g = g > 0 ? (n + g - 1) / g : 0;
  U = x->dtype;
  T = out->dtype;
  PT = pterun_promote_types(T, U);
  for (i = 0; i < m; ++i)
    for (j = 0; j < p; ++j) {
      double sum = 0.0;
      for (k = 0; k < n; k += g) {
        double psum = 0.0;
        int64_t kend = k + g < n ? k + g : n;
        for (k2 = k; k2 < kend; ++k2) {
          double xv = pterun_load_f64(x->data, U, i * n + k2);
          double wv = (double)((const int8_t*)w->data)[j * n + k2];
          psum = pterun_round_to_dtype(
              psum + pterun_round_to_dtype(pterun_round_to_dtype(xv * wv, U), T), T);
        }
        /* a Half accumulator rounds the added term to half first (c10::Half +=) */
        sum = pterun_round_to_dtype(
            sum + pterun_round_to_dtype(
                      pterun_round_to_dtype(
                          psum * pterun_load_f64(sc->data, U, j * n_over_g + k / g), PT),
                      T),
            T);
      }
      pterun_store_f64(out->data, T, i * p + j, sum);
    }
  return PTERUN_STATUS_OK;
}
