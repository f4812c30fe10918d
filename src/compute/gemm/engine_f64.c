/* The portable float64 GEMM engine (a 4 x 16 tile in double) and the exact
 * int64 loop of integer products. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "src/compute/gemm/gemm_internal.h"

/* ---- float64 engine (portable) ------------------------------------------ */

/* Element loaders used by packing: a fast case for the native type. */
static inline double ld_f64(const void* p, int dt, int64_t k) {
  return dt == PTERUN_DTYPE_F64 ? ((const double*)p)[k] : pterun_load_f64(p, dt, k);
}
static inline void st_f64(void* p, int dt, int64_t k, double v) {
  if (dt == PTERUN_DTYPE_F64)
    ((double*)p)[k] = v;
  else
    pterun_store_f64(p, dt, k, v);
}

/* Defines pc_gemm_<SUF>(): the blocked engine for accumulator type T. */
#define NN_DEFINE_GEMM(SUF, T, LD, ST, NATIVE_DT)                                                  \
  static void pack_b_##SUF(T* bp, const pterun_compute_matrix* b, int64_t k0, int64_t kc,          \
                           int64_t j0, int64_t nc) {                                               \
    /* Strips of NR columns; each strip is kc rows of NR values, zero padded. */                   \
    int64_t js, kk, c;                                                                             \
    for (js = 0; js < nc; js += NN_NR) {                                                           \
      int64_t w = min64(NN_NR, nc - js);                                                           \
      for (kk = 0; kk < kc; ++kk) {                                                                \
        T* dst = bp + kk * NN_NR;                                                                  \
        int64_t base = (k0 + kk) * b->rs + (j0 + js) * b->cs;                                      \
        if (b->dtype == NATIVE_DT && b->cs == 1 && w == NN_NR) {                                   \
          memcpy(dst, (const T*)b->data + base, sizeof(T) * NN_NR);                                \
          continue;                                                                                \
        }                                                                                          \
        for (c = 0; c < w; ++c) dst[c] = LD(b->data, b->dtype, base + c * b->cs);                  \
        for (; c < NN_NR; ++c) dst[c] = 0;                                                         \
      }                                                                                            \
      bp += kc * NN_NR;                                                                            \
    }                                                                                              \
  }                                                                                                \
  static void pack_a_##SUF(T* ap, const pterun_compute_matrix* a, int64_t i0, int64_t mr,          \
                           int64_t k0, int64_t kc) {                                               \
    int64_t kk, r;                                                                                 \
    for (kk = 0; kk < kc; ++kk) {                                                                  \
      for (r = 0; r < mr; ++r)                                                                     \
        ap[kk * NN_MR + r] = LD(a->data, a->dtype, (i0 + r) * a->rs + (k0 + kk) * a->cs);          \
      for (; r < NN_MR; ++r) ap[kk * NN_MR + r] = 0;                                               \
    }                                                                                              \
  }                                                                                                \
  static void micro_##SUF(int64_t kc, const T* ap, const T* bp, T acc[NN_MR][NN_NR]) {             \
    /* One accumulator row per A row and a fixed-length inner loop: the   */                       \
    /* shape gcc's -O2 vectoriser accepts.                                */                       \
    T c0[NN_NR] = {0}, c1[NN_NR] = {0}, c2[NN_NR] = {0}, c3[NN_NR] = {0};                          \
    int64_t kk;                                                                                    \
    int c;                                                                                         \
    for (kk = 0; kk < kc; ++kk) {                                                                  \
      const T* brow = bp + kk * NN_NR;                                                             \
      T a0 = ap[kk * NN_MR], a1 = ap[kk * NN_MR + 1], a2 = ap[kk * NN_MR + 2],                     \
        a3 = ap[kk * NN_MR + 3];                                                                   \
      for (c = 0; c < NN_NR; ++c) {                                                                \
        c0[c] += a0 * brow[c];                                                                     \
        c1[c] += a1 * brow[c];                                                                     \
        c2[c] += a2 * brow[c];                                                                     \
        c3[c] += a3 * brow[c];                                                                     \
      }                                                                                            \
    }                                                                                              \
    memcpy(acc[0], c0, sizeof c0);                                                                 \
    memcpy(acc[1], c1, sizeof c1);                                                                 \
    memcpy(acc[2], c2, sizeof c2);                                                                 \
    memcpy(acc[3], c3, sizeof c3);                                                                 \
  }                                                                                                \
  void pc_gemm_##SUF(int64_t m, int64_t n, int64_t k, const pterun_compute_matrix* a,              \
                     const pterun_compute_matrix* b, const pterun_compute_matrix* c, T alpha,      \
                     int accumulate, T* bp, T* ap, int64_t kcmax, int64_t ncmax) {                 \
    int64_t j0, k0, i0, js;                                                                        \
    T acc[NN_MR][NN_NR];                                                                           \
    for (j0 = 0; j0 < n; j0 += ncmax) {                                                            \
      int64_t nc = min64(ncmax, n - j0);                                                           \
      for (k0 = 0; k0 < k; k0 += kcmax) {                                                          \
        int64_t kc = min64(kcmax, k - k0);                                                         \
        int add = accumulate || k0 > 0;                                                            \
        pack_b_##SUF(bp, b, k0, kc, j0, nc);                                                       \
        for (i0 = 0; i0 < m; i0 += NN_MR) {                                                        \
          int64_t mr = min64(NN_MR, m - i0);                                                       \
          pack_a_##SUF(ap, a, i0, mr, k0, kc);                                                     \
          for (js = 0; js < nc; js += NN_NR) {                                                     \
            int64_t w = min64(NN_NR, nc - js), r, cc;                                              \
            micro_##SUF(kc, ap, bp + (js / NN_NR) * kc * NN_NR, acc);                              \
            for (r = 0; r < mr; ++r) {                                                             \
              int64_t row = (i0 + r) * c->rs + (j0 + js) * c->cs;                                  \
              if (c->dtype == NATIVE_DT && c->cs == 1) {                                           \
                T* cp = (T*)c->data + row;                                                         \
                if (add)                                                                           \
                  for (cc = 0; cc < w; ++cc) cp[cc] += alpha * acc[r][cc];                         \
                else                                                                               \
                  for (cc = 0; cc < w; ++cc) cp[cc] = alpha * acc[r][cc];                          \
                continue;                                                                          \
              }                                                                                    \
              for (cc = 0; cc < w; ++cc) {                                                         \
                int64_t off = row + cc * c->cs;                                                    \
                T v = alpha * acc[r][cc];                                                          \
                ST(c->data, c->dtype, off, add ? LD(c->data, c->dtype, off) + v : v);              \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

NN_DEFINE_GEMM(f64, double, ld_f64, st_f64, PTERUN_DTYPE_F64)
#undef NN_DEFINE_GEMM

/* Integer matmul: exact int64 accumulation, wrapped to the output dtype. */
void pc_gemm_int(int64_t m, int64_t n, int64_t k, const pterun_compute_matrix* a,
                 const pterun_compute_matrix* b, const pterun_compute_matrix* c, int64_t alpha,
                 int accumulate) {
  int64_t i, j, kk;
  for (i = 0; i < m; ++i)
    for (j = 0; j < n; ++j) {
      uint64_t acc = 0; /* unsigned: wrap-around is defined */
      int64_t off = i * c->rs + j * c->cs;
      for (kk = 0; kk < k; ++kk)
        acc += (uint64_t)pterun_load_i64(a->data, a->dtype, i * a->rs + kk * a->cs) *
               (uint64_t)pterun_load_i64(b->data, b->dtype, kk * b->rs + j * b->cs);
      acc *= (uint64_t)alpha;
      if (accumulate) acc += (uint64_t)pterun_load_i64(c->data, c->dtype, off);
      pterun_store_i64(c->data, c->dtype, off, (int64_t)acc);
    }
}
