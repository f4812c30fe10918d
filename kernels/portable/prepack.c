/* Load-time weight packing for the matrix kernels (prepack.h). */
#include "kernels/portable/prepack.h"

#include <string.h>

#include "pterun/kernel_util.h"

int pk_prepack_constant_f32(const pterun_tensor* t) {
  return t != NULL && t->dtype == PTERUN_DTYPE_F32 && t->data != NULL && t->numel > 0 &&
         t->nbytes >= (size_t)t->numel * sizeof(float);
}

/* What a packed operand depends on: instructions that read the same constant
 * the same way (an unrolled RNN's steps) share one packed copy. */
typedef struct pk_pack_key {
  const void* data;
  int64_t rows, cols, rs, cs;
  int32_t operand, dtype;
} pk_pack_key;

pterun_status pk_prepack(pterun_kernel_context* ctx, const pterun_tensor* t, int operand,
                         int64_t rows, int64_t cols, const pterun_compute_matrix* src) {
  return pk_prepack_to(ctx, NULL, t, operand, rows, cols, src);
}

pterun_status pk_prepack_to(pterun_kernel_context* ctx, pk_prepacked* st, const pterun_tensor* t,
                            int operand, int64_t rows, int64_t cols,
                            const pterun_compute_matrix* src) {
  size_t bytes = pterun_compute_gemm_pack_size(operand, rows, cols);
  if (bytes == 0 || !pterun_kernel_preparing(ctx)) return PTERUN_STATUS_OK;
  pk_pack_key key;
  memset(&key, 0, sizeof key); /* padding is part of the key's bytes */
  key.data = src->data;
  key.rows = rows;
  key.cols = cols;
  key.rs = src->rs;
  key.cs = src->cs;
  key.operand = operand;
  key.dtype = src->dtype;
  int fresh = 0;
  if (st == NULL) st = pterun_kernel_state_alloc(ctx, sizeof *st, _Alignof(pk_prepacked));
  void* mem =
      st != NULL ? pterun_kernel_shared_state(ctx, &key, sizeof key, bytes, 64, &fresh) : NULL;
  if (mem == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the packed weight", bytes);
  /* A shared block holds what the first pack with these inputs made; a pack
   * that refused left it zeroed, which no product accepts as packed. */
  if (fresh && pterun_compute_gemm_pack(mem, bytes, operand, rows, cols, src) == NULL)
    memset(mem, 0, bytes);
  st->packed = (const pterun_compute_packed*)mem;
  st->src = st->packed != NULL ? t->data : NULL;
  st->rows = rows;
  st->cols = cols;
  st->packed_only = 0;
  st->col_scale = NULL;
  st->table = NULL;
  st->table_bytes = 0;
  return PTERUN_STATUS_OK;
}

const pterun_compute_packed* pk_prepacked_for(const pterun_kernel_context* ctx,
                                              const pterun_tensor* t, int64_t rows, int64_t cols) {
  const pk_prepacked* st = pterun_kernel_state(ctx);
  if (st == NULL || st->src == NULL || st->src != t->data || st->rows != rows || st->cols != cols)
    return NULL;
  return st->packed;
}

pterun_status pk_arg_clamp_bounds(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                  float* lo, float* hi) {
  pterun_scalar a, b;
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i, "min_val", &a));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, i + 1, "max_val", &b));
  *lo = (float)a.d;
  *hi = (float)b.d;
  return PTERUN_STATUS_OK;
}
