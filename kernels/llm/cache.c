/* KV-cache writes and the small copy operators: llama::update_cache,
 * llama::update_cache_with_indices, llama::fallback, preprocess::tile_crop. */
#include <inttypes.h>

#include "kernels/llm/llm_util.h"

/* The shape rules ExecuTorch's update_cache enforces: value [B, S, H, D] and
 * cache [B, S_max, H, D], contiguous, equal B/H/D and element size. */
static pterun_status check_value_cache(pterun_kernel_context* ctx, const pterun_tensor* value,
                                       const pterun_tensor* cache) {
  PTERUN_TRY(llm_check_tensor(ctx, value, "value", 4));
  PTERUN_TRY(llm_check_tensor(ctx, cache, "cache", 4));
  if (value->sizes[0] != cache->sizes[0] || value->sizes[2] != cache->sizes[2] ||
      value->sizes[3] != cache->sizes[3])
    return PTERUN_FAIL_ARG(ctx,
                           "value [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                           "] does not fit cache [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                           "]",
                           value->sizes[0], value->sizes[1], value->sizes[2], value->sizes[3],
                           cache->sizes[0], cache->sizes[1], cache->sizes[2], cache->sizes[3]);
  if (pterun_dtype_size(value->dtype) != pterun_dtype_size(cache->dtype))
    return PTERUN_FAIL_ARG(ctx, "value (%s) and cache (%s) element sizes differ",
                           pterun_dtype_name(value->dtype), pterun_dtype_name(cache->dtype));
  return PTERUN_STATUS_OK;
}

/* Copies value rows into cache rows: row s of batch b goes to row dst(b, s). */
pterun_status llm_cache_write(pterun_kernel_context* ctx, const pterun_tensor* value,
                              pterun_tensor* cache, int64_t start_pos) {
  int64_t b, S = value->sizes[1], Smax = cache->sizes[1];
  size_t row_bytes, vbatch, cbatch;
  PTERUN_TRY(check_value_cache(ctx, value, cache));
  if (start_pos < 0 || start_pos >= Smax || S > Smax - start_pos)
    return PTERUN_FAIL_ARG(ctx,
                           "start_pos %" PRId64 " + seq_len %" PRId64
                           " must fit the cache's %" PRId64 " positions",
                           start_pos, S, Smax);
  row_bytes = (size_t)(value->sizes[2] * value->sizes[3]) * pterun_dtype_size(value->dtype);
  vbatch = row_bytes * (size_t)S;
  cbatch = row_bytes * (size_t)Smax;
  if (vbatch == 0) return PTERUN_STATUS_OK;
  for (b = 0; b < value->sizes[0]; ++b)
    memcpy((char*)cache->data + (size_t)b * cbatch + (size_t)start_pos * row_bytes,
           (const char*)value->data + (size_t)b * vbatch, vbatch);
  return PTERUN_STATUS_OK;
}

/* llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *,
 *                          Tensor(b!) out) -- out is a placeholder, never written. */
pterun_status llm_update_cache_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *value, *cache, *out;
  int64_t start_pos;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "value", &value));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "cache", &cache));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "start_pos", &start_pos));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out", &out));
  (void)out;
  return llm_cache_write(ctx, value, cache, start_pos);
}

/* llama::update_cache_with_indices.out(Tensor value, Tensor(a!) cache,
 *   SymInt start_pos, Tensor indices, *, Tensor(b!) out): cache[b, indices[b, s]]
 *   = value[b, s]; start_pos is not used. */
pterun_status llm_update_cache_with_indices_out(pterun_kernel_context* ctx, pterun_value** args,
                                                size_t nargs) {
  pterun_tensor *value, *cache, *indices, *out;
  int64_t start_pos, b, s, S, Smax;
  size_t row_bytes;
  const int64_t* idx;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "value", &value));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "cache", &cache));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "start_pos", &start_pos));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "indices", &indices));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  (void)out;
  (void)start_pos;
  PTERUN_TRY(check_value_cache(ctx, value, cache));
  PTERUN_TRY(llm_check_tensor(ctx, indices, "indices", 2));
  PTERUN_TRY(pterun_check_dtype(ctx, indices, "indices", PTERUN_DTYPE_I64));
  S = value->sizes[1];
  Smax = cache->sizes[1];
  if (indices->sizes[0] != value->sizes[0] || indices->sizes[1] != S)
    return PTERUN_FAIL_ARG(ctx, "indices must be [batch, seq_len] = [%" PRId64 ", %" PRId64 "]",
                           value->sizes[0], S);
  row_bytes = (size_t)(value->sizes[2] * value->sizes[3]) * pterun_dtype_size(value->dtype);
  idx = (const int64_t*)indices->data;
  /* Validate every index before writing anything: a bad index leaves the
   * cache untouched. */
  for (b = 0; b < indices->numel; ++b)
    if (idx[b] < 0 || idx[b] >= Smax)
      return PTERUN_FAIL_ARG(
          ctx, "indices[%" PRId64 "] = %" PRId64 " is outside the cache [0, %" PRId64 ")", b,
          idx[b], Smax);
  if (row_bytes == 0) return PTERUN_STATUS_OK;
  for (b = 0; b < value->sizes[0]; ++b)
    for (s = 0; s < S; ++s)
      memcpy((char*)cache->data + ((size_t)b * (size_t)Smax + (size_t)idx[b * S + s]) * row_bytes,
             (const char*)value->data + ((size_t)b * (size_t)S + (size_t)s) * row_bytes, row_bytes);
  return PTERUN_STATUS_OK;
}

/* llama::fallback.out(Tensor input, *, Tensor(a!) out): a copy. */
pterun_status llm_fallback_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(llm_check_tensor(ctx, in, "input", -1));
  PTERUN_TRY(llm_check_tensor(ctx, out, "out", -1));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", in->dtype));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  if (in->nbytes > 0 && out->data != in->data) memmove(out->data, in->data, in->nbytes);
  return PTERUN_STATUS_OK;
}

/* preprocess::tile_crop.out(Tensor input, int tile_size, *, Tensor(a!) out):
 * [C, H, W] -> [(H/t)(W/t), C, t, t], tiles in row-major tile order. */
pterun_status llm_tile_crop_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *out;
  int64_t t, C, H, W, th, tw, sizes[4], c, y, tile;
  size_t es;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_int(ctx, args, 1, "tile_size", &t));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(llm_check_tensor(ctx, in, "input", 3));
  PTERUN_TRY(pterun_check_dtype(ctx, out, "out", in->dtype));
  C = in->sizes[0];
  H = in->sizes[1];
  W = in->sizes[2];
  if (t <= 0 || H % t != 0 || W % t != 0)
    return PTERUN_FAIL_ARG(ctx, "tile_size %" PRId64 " must divide H %" PRId64 " and W %" PRId64, t,
                           H, W);
  th = H / t;
  tw = W / t;
  sizes[0] = th * tw;
  sizes[1] = C;
  sizes[2] = t;
  sizes[3] = t;
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 4, sizes));
  PTERUN_TRY(llm_check_tensor(ctx, out, "out", 4));
  es = pterun_dtype_size(in->dtype);
  for (tile = 0; tile < th * tw; ++tile) {
    int64_t ty = tile / tw, tx = tile % tw;
    for (c = 0; c < C; ++c)
      for (y = 0; y < t; ++y) {
        const char* src = (const char*)in->data + (size_t)((c * H + ty * t + y) * W + tx * t) * es;
        char* dst = (char*)out->data + (size_t)(((tile * C + c) * t + y) * t) * es;
        memcpy(dst, src, (size_t)t * es);
      }
  }
  return PTERUN_STATUS_OK;
}
