/* torchao::_embedding_{n}bit.out (rows packed in torchao's embedding layout,
 * type 2) and torchao::_shared_embedding_{n}bit.out (a row = one output
 * column of a universal linear buffer, for tied embedding/unembedding).
 * Both compute out[j] = ((float)q_j - (float)zero) * scale in float32. */
#include <inttypes.h>
#include <string.h>

#include "kernels/lowbit/lb.h"

static int32_t rd32(const uint8_t* p) {
  int32_t v;
  memcpy(&v, p, 4); /* little-endian targets only (as torchao's format) */
  return v;
}

pterun_status lb_embedding_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                               int nbit) {
  pterun_tensor *pw, *sc, *zp, *idx, *out;
  const uint8_t* packed;
  size_t size;
  int64_t V, D, G, gs, N, i;
  uint64_t need;
  int w;
  PTERUN_CHECK_NARGS(ctx, nargs, 8);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "packed_weight_qvals", &pw));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "num_embeddings", &V));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "embedding_dim", &D));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "weight_scales", &sc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "weight_zeros", &zp));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "indices", &idx));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  PTERUN_TRY(lb_packed_arg(ctx, pw, "packed_weight_qvals", &packed, &size));
  if (V < 1 || V > INT32_MAX || D < 1 || D > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx,
                           "args 'num_embeddings', 'embedding_dim': %" PRId64 ", %" PRId64
                           " out of range [1, 2^31)",
                           V, D);
  if (size < LB_HEADER_BYTES)
    return PTERUN_FAIL_ARG(ctx, "arg 'packed_weight_qvals': %zu bytes, shorter than the header",
                           size);
  {
    const int32_t want[6] = {LB_MAGIC, LB_TYPE_EMBEDDING, 1, nbit, 32, 128};
    for (w = 0; w < 16; ++w)
      if (rd32(packed + 4 * w) != (w < 6 ? want[w] : 0))
        return PTERUN_FAIL_ARG(ctx,
                               "arg 'packed_weight_qvals': header word %d is %" PRId32
                               ", not torchao's %d-bit embedding header",
                               w, rd32(packed + 4 * w), nbit);
  }
  if (sc->rank != 2 || sc->dtype != PTERUN_DTYPE_F32 || sc->sizes[0] != V)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_scales': must be float32 [%" PRId64 ", groups]", V);
  G = sc->sizes[1];
  if (G < 1 || D % G != 0 || (D / G) % 32 != 0)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'weight_scales': %" PRId64
                           " groups must divide embedding_dim %" PRId64
                           " into groups of a multiple of 32",
                           G, D);
  gs = D / G;
  if (zp->rank != 2 || zp->dtype != PTERUN_DTYPE_I8 || zp->sizes[0] != V || zp->sizes[1] != G)
    return PTERUN_FAIL_ARG(ctx, "arg 'weight_zeros': must be int8 with the shape of weight_scales");
  if (!pterun_tensor_is_contiguous(sc) || !pterun_tensor_is_contiguous(zp) || sc->data == NULL ||
      zp->data == NULL)
    return PTERUN_FAIL_ARG(ctx,
                           "args 'weight_scales', 'weight_zeros': must be contiguous with data");
  need = LB_HEADER_BYTES + (uint64_t)V * (uint64_t)D * (uint64_t)nbit / 8u;
  if ((uint64_t)size != need)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'packed_weight_qvals': %zu bytes, but %" PRId64 " rows of %" PRId64
                           " values at %d bits need %" PRIu64,
                           size, V, D, nbit, need);
  PTERUN_TRY(lb_indices_arg(ctx, idx, V));
  N = idx->numel;
  PTERUN_TRY(lb_out_2d(ctx, out, N, D));
  for (i = 0; i < N; ++i) {
    int64_t r = pterun_load_i64(idx->data, idx->dtype, i), j0, j;
    const uint8_t* row = packed + LB_HEADER_BYTES + (uint64_t)r * (uint64_t)D * nbit / 8u;
    const float* s = (const float*)sc->data + r * G;
    const int8_t* z = (const int8_t*)zp->data + r * G;
    float* o = (float*)out->data + i * D;
    int8_t codes[128];
    /* one 32-multiple chunk at a time, so no row-sized buffer is needed */
    for (j0 = 0; j0 < D;) {
      int64_t cnt = D - j0 >= 128 ? 128 : (D - j0 >= 64 ? 64 : 32);
      pterun_compute_lowbit_unpack(nbit, (int)cnt, row + j0 * nbit / 8, codes);
      for (j = 0; j < cnt; ++j) {
        int64_t g = (j0 + j) / gs;
        o[j0 + j] = ((float)codes[j] - (float)z[g]) * s[g];
      }
      j0 += cnt;
    }
  }
  return PTERUN_STATUS_OK;
}

pterun_status lb_shared_embedding_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                      int nbit) {
  pterun_tensor *pw, *idx, *out;
  const uint8_t* packed;
  size_t size;
  int64_t gs, n, k, N, i;
  uint64_t tile_bytes, group_bytes;
  int has_zeros, has_bias;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "packed_weights", &pw));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "group_size", &gs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "n", &n));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "k", &k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "indices", &idx));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(lb_packed_arg(ctx, pw, "packed_weights", &packed, &size));
  PTERUN_TRY(
      lb_linear_check(ctx, packed, size, nbit, gs, n, k, &has_zeros, &has_bias, &tile_bytes));
  PTERUN_TRY(lb_indices_arg(ctx, idx, n));
  N = idx->numel;
  PTERUN_TRY(lb_out_2d(ctx, out, N, k));
  group_bytes = (uint64_t)gs * nbit + 64u + (has_zeros ? 32u : 0u);
  for (i = 0; i < N; ++i) {
    int64_t r = pterun_load_i64(idx->data, idx->dtype, i), g, c, j;
    int col = (int)(r % LB_NR);
    const uint8_t* tile = packed + LB_HEADER_BYTES + (uint64_t)(r / LB_NR) * tile_bytes;
    float* o = (float*)out->data + i * k;
    int8_t codes[128];
    for (g = 0; g < k / gs; ++g) {
      const uint8_t* grp = tile + (uint64_t)g * group_bytes;
      const uint8_t* qp = grp + (uint64_t)gs * nbit;
      float s;
      int32_t z = has_zeros ? rd32(qp + 64 + 4 * col) : 0;
      memcpy(&s, qp + 4 * col, 4);
      for (c = 0; c < gs / 16; ++c) {
        float* oc = o + g * gs + c * 16;
        pterun_compute_lowbit_unpack(nbit, 128, grp + c * 16 * nbit, codes);
        for (j = 0; j < 8; ++j) {
          oc[j] = ((float)codes[col * 8 + j] - (float)z) * s;
          oc[8 + j] = ((float)codes[64 + col * 8 + j] - (float)z) * s;
        }
      }
    }
  }
  return PTERUN_STATUS_OK;
}
