/* Operands packed once for the float32 engine (pterun_compute_gemm_pack),
 * laid out exactly as a product packs them, and the check that a product can
 * read one. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "src/compute/gemm/gemm_internal.h"

/* ---- packed operands ---------------------------------------------------- */

static int64_t packed_pad(const pc_f32_gemm_ukernel* uk, int operand, int64_t rows, int64_t cols) {
  return operand == PTERUN_COMPUTE_OPERAND_A ? round_up(rows, uk->mr) : round_up(cols, uk->nr);
}

size_t pterun_compute_gemm_pack_size(int operand, int64_t rows, int64_t cols) {
  if ((operand != PTERUN_COMPUTE_OPERAND_A && operand != PTERUN_COMPUTE_OPERAND_B) || rows <= 0 ||
      cols <= 0 || rows > ((int64_t)1 << 40) || cols > ((int64_t)1 << 40))
    return 0;
  const pc_f32_gemm_ukernel* uk = pc_f32_pack_ukernel(operand, cols);
  int64_t kdim = operand == PTERUN_COMPUTE_OPERAND_A ? cols : rows;
  uint64_t floats = (uint64_t)kdim * (uint64_t)packed_pad(uk, operand, rows, cols);
  if (floats / (uint64_t)kdim != (uint64_t)packed_pad(uk, operand, rows, cols) ||
      floats > (SIZE_MAX - PC_PACKED_HEAD) / sizeof(float))
    return 0;
  return PC_PACKED_HEAD + (size_t)floats * sizeof(float);
}

const pterun_compute_packed* pterun_compute_gemm_pack(void* mem, size_t bytes, int operand,
                                                      int64_t rows, int64_t cols,
                                                      const pterun_compute_matrix* src) {
  size_t need = pterun_compute_gemm_pack_size(operand, rows, cols);
  if (need == 0 || mem == NULL || bytes < need || ((uintptr_t)mem & 63) != 0 || src == NULL ||
      src->data == NULL ||
      (src->dtype != PTERUN_DTYPE_F32 && src->dtype != PTERUN_DTYPE_F16 &&
       src->dtype != PTERUN_DTYPE_BF16))
    return NULL;
  pterun_compute_packed* p = mem;
  p->magic = PC_PACKED_MAGIC;
  p->operand = operand;
  p->uk = pc_f32_pack_ukernel(operand, cols);
  p->rows = rows;
  p->cols = cols;
  p->pad = packed_pad(p->uk, operand, rows, cols);
  p->data = (float*)((unsigned char*)mem + PC_PACKED_HEAD);
  const int64_t kdim = operand == PTERUN_COMPUTE_OPERAND_A ? cols : rows;
  p->kc = k_block(p->uk, kdim);
  for (int64_t p0 = 0; p0 < kdim; p0 += p->kc) {
    int64_t kcb = min64(p->kc, kdim - p0);
    if (operand == PTERUN_COMPUTE_OPERAND_A)
      pc_pack_a_f32(p->data + p0 * p->pad, src, 0, rows, p0, kcb, p->uk->mr);
    else
      pc_pack_b_f32(p->data + p0 * p->pad, src, p0, kcb, 0, cols, p->uk->nr);
  }
  return p;
}

/* Packs src as `operand` and scales each of its M rows (A) or N columns (B)
 * on the way: element packs as (float)((double)src * scale[that index]).
 * Both layouts are, per K block, panels of w = mr rows (A) or strips of
 * w = nr columns (B), each kcb lines of w floats (padding stays zero), so
 * one walk serves both. */
static const pterun_compute_packed* pack_scaled(void* mem, size_t bytes, int operand, int64_t rows,
                                                int64_t cols, const pterun_compute_matrix* src,
                                                const double* scale) {
  if (scale == NULL || src == NULL || src->dtype != PTERUN_DTYPE_F32) return NULL;
  const pterun_compute_packed* p = pterun_compute_gemm_pack(mem, bytes, operand, rows, cols, src);
  if (p == NULL) return NULL;
  const int a = operand == PTERUN_COMPUTE_OPERAND_A;
  const int64_t w = a ? p->uk->mr : p->uk->nr, kdim = a ? cols : rows, span = a ? rows : cols;
  for (int64_t p0 = 0; p0 < kdim; p0 += p->kc) {
    const int64_t kcb = min64(p->kc, kdim - p0);
    float* blk = p->data + p0 * p->pad;
    for (int64_t i = 0; i < span; i += w) {
      float* panel = blk + i * kcb;
      const int64_t h = min64(w, span - i);
      for (int64_t kk = 0; kk < kcb; ++kk)
        for (int64_t r = 0; r < h; ++r)
          panel[kk * w + r] = (float)((double)panel[kk * w + r] * scale[i + r]);
    }
  }
  return p;
}

const pterun_compute_packed* pterun_compute_gemm_pack_a_scaled(void* mem, size_t bytes,
                                                               int64_t rows, int64_t cols,
                                                               const pterun_compute_matrix* src,
                                                               const double* row_scale) {
  return pack_scaled(mem, bytes, PTERUN_COMPUTE_OPERAND_A, rows, cols, src, row_scale);
}

const pterun_compute_packed* pterun_compute_gemm_pack_b_scaled(void* mem, size_t bytes,
                                                               int64_t rows, int64_t cols,
                                                               const pterun_compute_matrix* src,
                                                               const double* col_scale) {
  return pack_scaled(mem, bytes, PTERUN_COMPUTE_OPERAND_B, rows, cols, src, col_scale);
}

int64_t pterun_compute_gemm_k_block(const pterun_compute_gemm_ws* ws, int64_t m, int64_t k) {
  if (ws == NULL || ws->dbl || k <= 0) return k > 0 ? k : 1;
  return k_block(m == 1 && ws->uk_m1 != NULL ? ws->uk_m1 : ws->uk, k);
}

/* p, when this product (K range [k0, k0 + k) of an operand with `mn` rows
 * (A) or columns (B)) can read it; else NULL (the product packs itself). */
const pterun_compute_packed* pc_packed_fits(const pterun_compute_packed* p, int operand,
                                            const pc_f32_gemm_ukernel* uk, int64_t mn, int64_t k,
                                            int64_t k0) {
  /* The layout depends on the panel height (A) or strip width (B) and the K
   * block alone, so any kernel with those reads it (12x16 and 12x32 share
   * their A panels). */
  if (p == NULL || p->magic != PC_PACKED_MAGIC || p->operand != operand || p->uk->kc != uk->kc ||
      (operand == PTERUN_COMPUTE_OPERAND_A ? p->uk->mr != uk->mr : p->uk->nr != uk->nr))
    return NULL;
  int64_t kdim = operand == PTERUN_COMPUTE_OPERAND_A ? p->cols : p->rows;
  int64_t other = operand == PTERUN_COMPUTE_OPERAND_A ? p->rows : p->cols;
  if (other != mn || k0 < 0 || k0 % p->kc != 0 || k > kdim - k0) return NULL;
  return k % p->kc == 0 || k0 + k == kdim ? p : NULL;
}
