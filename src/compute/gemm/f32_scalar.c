/* f32 GEMM microkernel in portable C: the reference every SIMD variant is
 * tested against, and the fallback on every CPU. 4 x 8 tile.
 *
 * The accumulators are GNU C generic vectors of 4 floats, which the compiler
 * lowers to the target's baseline SIMD (SSE2 on x86-64, NEON on AArch64) or
 * to scalar code. Plain loops gave erratic code here: GCC -O3 vectorised the
 * K loop instead of the tile and spilled every accumulator (5x slower). */
#include <string.h>

#include "src/compute/gemm/ukernel.h"

#define MR 4
#define NR 8

typedef float v4f __attribute__((vector_size(16)));

static v4f load4(const float* p) {
  v4f v;
  memcpy(&v, p, sizeof v);
  return v;
}
static void store4(float* p, v4f v) {
  memcpy(p, &v, sizeof v);
}

typedef int v4i __attribute__((vector_size(16)));

/* The epilogue on one vector, act_f32's semantics lane by lane. */
static v4f epilogue4(v4f v, int act, float lo, float hi) {
  if (act == PTERUN_COMPUTE_ACT_RELU) {
    v4i neg = v < (v4f){0}; /* negatives become +0; -0 and NaN stay */
    return (v4f)((v4i)v & ~neg);
  }
  if (act == PTERUN_COMPUTE_ACT_CLAMP) {
    v4f vl = {lo, lo, lo, lo}, vh = {hi, hi, hi, hi};
    v4i below = v < vl;
    v4f t = (v4f)(((v4i)vl & below) | ((v4i)v & ~below));
    v4i above = vh < t;
    return (v4f)(((v4i)vh & above) | ((v4i)t & ~above));
  }
  return v;
}

static inline __attribute__((always_inline)) void scalar_4x8(
    size_t mr, size_t kc, const float* a, size_t a_rs, size_t a_ks, const float* b, size_t b_ks,
    const int64_t* b_rows, float* c, size_t ldc, float alpha, int add, const float* bias, int act,
    float lo, float hi) {
  v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};
  const float* a0 = a;
  const float* a1 = mr > 1 ? a0 + a_rs : a0;
  const float* a2 = mr > 2 ? a1 + a_rs : a1;
  const float* a3 = mr > 3 ? a2 + a_rs : a2;
  v4f acc[MR][2], va;
  size_t k, ko = 0;
  int i;
  for (k = 0; k < kc; ++k, ko += a_ks, b += b_ks) {
    const float* bq = b_rows != NULL ? b + b_rows[k] : b; /* b_ks is 0 then */
    v4f b0 = load4(bq), b1 = load4(bq + 4);
    v4f x0 = {a0[ko], a0[ko], a0[ko], a0[ko]};
    v4f x1 = {a1[ko], a1[ko], a1[ko], a1[ko]};
    v4f x2 = {a2[ko], a2[ko], a2[ko], a2[ko]};
    v4f x3 = {a3[ko], a3[ko], a3[ko], a3[ko]};
    c00 += x0 * b0, c01 += x0 * b1;
    c10 += x1 * b0, c11 += x1 * b1;
    c20 += x2 * b0, c21 += x2 * b1;
    c30 += x3 * b0, c31 += x3 * b1;
  }
  acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
  acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
  va = (v4f){alpha, alpha, alpha, alpha};
  for (i = 0; i < MR; ++i) {
    float* cr = c + (size_t)i * ldc;
    v4f v0 = va * acc[i][0], v1 = va * acc[i][1];
    if (add) {
      v0 = load4(cr) + v0;
      v1 = load4(cr + 4) + v1;
    }
    if (bias != NULL) {
      v4f vb = {bias[i], bias[i], bias[i], bias[i]};
      v0 = v0 + vb;
      v1 = v1 + vb;
    }
    store4(cr, epilogue4(v0, act, lo, hi));
    store4(cr + 4, epilogue4(v1, act, lo, hi));
  }
}

void pc_f32_gemm_ukernel__scalar_4x8(size_t mr, size_t kc, const float* a, size_t a_rs, size_t a_ks,
                                     const float* b, size_t b_ks, float* c, size_t ldc, float alpha,
                                     int add) {
  scalar_4x8(mr, kc, a, a_rs, a_ks, b, b_ks, NULL, c, ldc, alpha, add, NULL,
             PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f);
}

void pc_f32_gemm_ukernel__scalar_4x8_ep(size_t mr, size_t kc, const float* a, size_t a_rs,
                                        size_t a_ks, const float* b, size_t b_ks, size_t b_ss,
                                        const int64_t* b_rows, float* c, size_t ldc, float alpha,
                                        int add, const float* bias, int act, float lo, float hi) {
  (void)b_ss; /* one strip per tile */
  scalar_4x8(mr, kc, a, a_rs, a_ks, b, b_rows != NULL ? 0 : b_ks, b_rows, c, ldc, alpha, add, bias,
             act, lo, hi);
}

/* The indirect-GEMM entry (ukernel.h): the same 4 x 8 tile, its rows' K
 * elements at ind[t * MR + i] + channel. */
void pc_f32_gemm_ukernel__scalar_4x8_ig(size_t mr, size_t nc, size_t ntaps, size_t cin,
                                        const float* const* ind, const float* b, float* c,
                                        size_t ldc, const float* bias, int act, float lo,
                                        float hi) {
  v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};
  for (size_t t = 0; t < ntaps; ++t, ind += MR) {
    const float *a0 = ind[0], *a1 = ind[1], *a2 = ind[2], *a3 = ind[3];
    for (size_t k = 0; k < cin; ++k, b += NR) {
      v4f b0 = load4(b), b1 = load4(b + 4);
      v4f x0 = {a0[k], a0[k], a0[k], a0[k]};
      v4f x1 = {a1[k], a1[k], a1[k], a1[k]};
      v4f x2 = {a2[k], a2[k], a2[k], a2[k]};
      v4f x3 = {a3[k], a3[k], a3[k], a3[k]};
      c00 += x0 * b0, c01 += x0 * b1;
      c10 += x1 * b0, c11 += x1 * b1;
      c20 += x2 * b0, c21 += x2 * b1;
      c30 += x3 * b0, c31 += x3 * b1;
    }
  }
  v4f acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  for (size_t i = 0; i < mr && i < MR; ++i) {
    float edge[NR];
    float* cr = c + i * ldc;
    float* d = nc == NR ? cr : edge;
    v4f v0 = acc[i][0], v1 = acc[i][1];
    if (bias != NULL) {
      v0 = v0 + load4(bias);
      v1 = v1 + load4(bias + 4);
    }
    store4(d, epilogue4(v0, act, lo, hi));
    store4(d + 4, epilogue4(v1, act, lo, hi));
    if (d == edge) memcpy(cr, edge, nc * sizeof(float));
  }
}
