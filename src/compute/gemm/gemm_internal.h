/* Internal to libpterun_compute's GEMM: what its files share. engine_f32.c
 * (the float32 BLIS engine and microkernel selection), engine_f64.c (the
 * portable float64 engine and the integer loop), packed.c (operands packed
 * once, pterun_compute_gemm_pack) and gemm.c (workspace and entry points). */
#ifndef PTERUN_SRC_COMPUTE_GEMM_GEMM_INTERNAL_H_
#define PTERUN_SRC_COMPUTE_GEMM_GEMM_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "src/compute/internal.h"
#include "src/compute/gemm/ukernel.h"

static inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* B block width with a big arena, then with a medium one. */
#define PC_F32_NC_BIG 2048
#define PC_F32_NC_MID 512

static inline int64_t round_up(int64_t x, int64_t q) {
  return (x + q - 1) / q * q;
}

/* A constant operand packed once (pterun_compute_gemm_pack): per K block of
 * kc (equal blocks, the last one shorter), the whole M (A) or N (B) in MR-row
 * panels / NR-column strips, laid out exactly as the products below pack
 * them, so a packed product does the same operations as an unpacked one. */
#define PC_PACKED_MAGIC 0x7063706bu
struct pterun_compute_packed {
  uint32_t magic;
  int32_t operand; /* PTERUN_COMPUTE_OPERAND_A / _B */
  const pc_f32_gemm_ukernel* uk;
  int64_t rows, cols; /* A: M x K; B: K x N */
  int64_t kc;         /* K block */
  int64_t pad;        /* A: M rounded up to MR; B: N rounded up to NR */
  float* data;        /* K x pad floats */
};
#define PC_PACKED_HEAD ((sizeof(pterun_compute_packed) + 63) / 64 * 64)

/* The K block of an unpacked product of depth k with microkernel uk (before
 * any shrinking to a small buffer): equal blocks of at most uk->kc. */
static inline int64_t k_block(const pc_f32_gemm_ukernel* uk, int64_t k) {
  int64_t nblk = (k + uk->kc - 1) / uk->kc;
  return nblk > 0 ? (k + nblk - 1) / nblk : uk->kc;
}

/* Operands packed at load (pterun_compute_gemm_pack) and the fused
 * activation of one product, checked by pterun_compute_gemm_ex. */
typedef struct pc_gemm_x {
  const pterun_compute_packed *pa, *pb; /* NULL: not packed */
  int64_t k0;                           /* first K index inside the packed operands */
  int act;
  float lo, hi;
  const float* bias;               /* per row, or NULL */
  pterun_compute_pack_b_fn pack_b; /* the caller's B packer (B not packed at load), or NULL */
  void* pack_b_ctx;
  const float* b_row_base; /* B's rows in place (pterun_compute_gemm_opts), or NULL */
  const int64_t* b_rows;
} pc_gemm_x;

#define NN_MR 4 /* micro_*() is written for exactly 4 rows */
#define NN_NR 16
/* Blocks of the f64 engine with a scratch arena (B block 256 KiB) ... */
#define NN_KC_BIG 256
#define NN_NC_BIG 128
/* ... and in the stack buffer (32 KiB). */
#define NN_KC_SMALL 64
#define NN_NC_SMALL 64

/* engine_f32.c */
void pc_pack_b_f32(float* bp, const pterun_compute_matrix* b, int64_t k0, int64_t kc, int64_t j0,
                   int64_t nc, int64_t nr);
void pc_pack_a_f32(float* ap, const pterun_compute_matrix* a, int64_t i0, int64_t mc, int64_t k0,
                   int64_t kc, int64_t mr);
void pc_act_tile(const pterun_compute_matrix* c, int64_t i0, int64_t j0, int64_t h, int64_t w,
                 int act, float lo, float hi);
void pc_bias_tile(const pterun_compute_matrix* c, int64_t i0, int64_t j0, int64_t h, int64_t w,
                  const float* bias);
void pc_gemm_f32(const pterun_compute_gemm_ws* ws, int64_t m, int64_t n, int64_t k,
                 const pterun_compute_matrix* a, const pterun_compute_matrix* b,
                 const pterun_compute_matrix* c, float alpha, int accumulate, const pc_gemm_x* x);
/* engine_f64.c: the engine NN_DEFINE_GEMM(f64, ...) makes, and integers */
void pc_gemm_f64(int64_t m, int64_t n, int64_t k, const pterun_compute_matrix* a,
                 const pterun_compute_matrix* b, const pterun_compute_matrix* c, double alpha,
                 int accumulate, double* bp, double* ap, int64_t kcmax, int64_t ncmax);
void pc_gemm_int(int64_t m, int64_t n, int64_t k, const pterun_compute_matrix* a,
                 const pterun_compute_matrix* b, const pterun_compute_matrix* c, int64_t alpha,
                 int accumulate);
/* packed.c */
/* The kernel a product of m x n runs on this workspace (the M = 1 kernel,
 * the narrow sibling for n up to half the NR, else ws->uk), and the one an
 * operand packed at load is laid out for (B of at most half the NR columns:
 * the narrow sibling's strips). */
const pc_f32_gemm_ukernel* pc_f32_ukernel_for(const pterun_compute_gemm_ws* ws, int64_t m,
                                              int64_t n);
const pc_f32_gemm_ukernel* pc_f32_pack_ukernel(int operand, int64_t cols);
/* The kernel for uk's last rows of M: the table row with uk's ISA bits and
 * NR and the most rows below uk's (at least 2), or NULL (engine_f32.c; the
 * indirect GEMM's short last tile too). */
const pc_f32_gemm_ukernel* pc_f32_tail_ukernel(const pc_f32_gemm_ukernel* uk);
const pterun_compute_packed* pc_packed_fits(const pterun_compute_packed* p, int operand,
                                            const pc_f32_gemm_ukernel* uk, int64_t mn, int64_t k,
                                            int64_t k0);

#endif /* PTERUN_SRC_COMPUTE_GEMM_GEMM_INTERNAL_H_ */
