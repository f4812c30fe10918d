/* Body of an f32 GEMM microkernel for a SIMD ISA (interface: ukernel.h).
 * Included by f32_<isa>.c after defining:
 *   GT_FN              function name
 *   GT_MR, GT_NRV      tile rows, and vectors per tile row (NR = GT_NRV * GT_VLEN)
 *   GT_VLEN, GT_VEC    floats per vector, vector type
 *   GT_ZERO()          all-zero vector
 *   GT_LOADU(p)        load GT_VLEN floats
 *   GT_STOREU(p, v)    store GT_VLEN floats
 *   GT_BCAST(p)        *p in every lane
 *   GT_FMA(a, b, c)    a * b + c (fused)
 *   GT_MUL(a, b), GT_ADD(a, b)
 *   GT_RELU(v)         aten::relu: v < 0 ? +0 : v (NaN and -0 stay)
 *   GT_CLAMP(v, l, h)  v < l ? l : v, then h < that ? h : that (NaN stays)
 *   GT_SW              optional: B vectors per strip (default GT_NRV). A tile
 *                      of GT_NRV / GT_SW strips reads strip s at b + s * b_ss:
 *                      an M = 1 kernel reads two strips of the GEMM kernel's
 *                      packed B at once (engine_f32.c); contiguous: b_ss = GT_SW *
 *                      GT_VLEN.
 * Accumulators are GT_MR x GT_NRV vectors that must fit in the register file
 * together with GT_NRV B vectors and one broadcast. Every index is a
 * compile-time constant after unrolling, so the arrays live in registers. */
#ifndef GT_SW
#define GT_SW GT_NRV
#endif
#define GT_CAT_(x, y) x##y
#define GT_CAT(x, y) GT_CAT_(x, y)
#define GT_BODY GT_CAT(GT_FN, _body)
static inline __attribute__((always_inline)) void GT_BODY(
    size_t mr, size_t kc, const float* a, size_t a_rs, size_t a_ks, const float* b, size_t b_ks,
    size_t b_ss, const int64_t* b_rows, float* c, size_t ldc, float alpha, int add,
    const float* bias, int act, float lo, float hi) {
  const float* ar[GT_MR];
  GT_VEC acc[GT_MR][GT_NRV];
  size_t k, ko = 0;
  int i, j;
  ar[0] = a;
  PC_UNROLL
  for (i = 1; i < GT_MR; ++i) ar[i] = (size_t)i < mr ? ar[i - 1] + a_rs : ar[i - 1];
  PC_UNROLL
  for (i = 0; i < GT_MR; ++i) {
    /* Start fetching the C tile now: the K loop hides the latency. C rows
     * with a power-of-two stride share a few cache sets and often come from
     * L3; without this the final load/store stalls on them. */
    PC_PREFETCH_W(c + (size_t)i * ldc);
    PC_PREFETCH_W(c + (size_t)i * ldc + GT_NRV * GT_VLEN - 1);
    PC_UNROLL
    for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_ZERO();
  }
  /* One K step: acc += A column (row i at A_AT(i)) x B row. The two common A
   * layouts get their own loop so the addresses are one pointer (or one
   * index) plus constants: six pointer bumps per step cost front-end slots
   * the FMAs need. Same operations in the same order in every loop. */
#define GT_KSTEP(A_AT, B_ROW)                                                                      \
  do {                                                                                             \
    GT_VEC bv[GT_NRV];                                                                             \
    const float* bq = (B_ROW);                                                                     \
    PC_UNROLL                                                                                      \
    for (j = 0; j < GT_NRV; ++j)                                                                   \
      bv[j] = GT_LOADU(bq + (j / GT_SW) * b_ss + (j % GT_SW) * GT_VLEN);                           \
    PC_UNROLL                                                                                      \
    for (i = 0; i < GT_MR; ++i) {                                                                  \
      GT_VEC av = GT_BCAST(A_AT(i));                                                               \
      PC_UNROLL                                                                                    \
      for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_FMA(av, bv[j], acc[i][j]);                       \
    }                                                                                              \
  } while (0)
  /* B rows b_ks apart, or (b_rows) row k at b + b_rows[k]: a convolution's
   * image read in place, no packing. A loop per case: a test in the loop
   * would cost issue slots at every step. */
#define GT_A_PANEL(i) (a + (i))
#define GT_A_ROWS(i) (ar[i] + k)
#define GT_A_ANY(i) (ar[i] + ko)
  if (b_rows != NULL) {
    if (a_rs == 1 && mr == GT_MR)
      for (k = 0; k < kc; ++k, a += a_ks) GT_KSTEP(GT_A_PANEL, b + b_rows[k]);
    else if (a_ks == 1)
      for (k = 0; k < kc; ++k) GT_KSTEP(GT_A_ROWS, b + b_rows[k]);
    else
      for (k = 0; k < kc; ++k, ko += a_ks) GT_KSTEP(GT_A_ANY, b + b_rows[k]);
  } else if (a_rs == 1 && mr == GT_MR) {
    /* A packed in panels (of this kernel's MR rows, or more). */
    for (k = 0; k < kc; ++k, a += a_ks, b += b_ks) GT_KSTEP(GT_A_PANEL, b);
  } else if (a_ks == 1) {
    /* A rows read in place. */
    for (k = 0; k < kc; ++k, b += b_ks) GT_KSTEP(GT_A_ROWS, b);
  } else {
    for (k = 0; k < kc; ++k, ko += a_ks, b += b_ks) GT_KSTEP(GT_A_ANY, b);
  }
#undef GT_A_PANEL
#undef GT_A_ROWS
#undef GT_A_ANY
#undef GT_KSTEP
  {
    GT_VEC va = GT_BCAST(&alpha);
    PC_UNROLL
    for (i = 0; i < GT_MR; ++i) {
      float* cr = c + (size_t)i * ldc;
      GT_VEC v[GT_NRV];
      PC_UNROLL
      for (j = 0; j < GT_NRV; ++j)
        v[j] = add ? GT_FMA(acc[i][j], va, GT_LOADU(cr + j * GT_VLEN)) : GT_MUL(acc[i][j], va);
      if (bias != NULL) {
        GT_VEC vb = GT_BCAST(bias + i);
        PC_UNROLL
        for (j = 0; j < GT_NRV; ++j) v[j] = GT_ADD(v[j], vb);
      }
      if (act == PTERUN_COMPUTE_ACT_RELU) {
        PC_UNROLL
        for (j = 0; j < GT_NRV; ++j) v[j] = GT_RELU(v[j]);
      } else if (act == PTERUN_COMPUTE_ACT_CLAMP) {
        GT_VEC vlo = GT_BCAST(&lo), vhi = GT_BCAST(&hi);
        PC_UNROLL
        for (j = 0; j < GT_NRV; ++j) v[j] = GT_CLAMP(v[j], vlo, vhi);
      }
      PC_UNROLL
      for (j = 0; j < GT_NRV; ++j) GT_STOREU(cr + j * GT_VLEN, v[j]);
    }
  }
}

void GT_FN(size_t mr, size_t kc, const float* a, size_t a_rs, size_t a_ks, const float* b,
           size_t b_ks, float* c, size_t ldc, float alpha, int add) {
  GT_BODY(mr, kc, a, a_rs, a_ks, b, b_ks, GT_SW * GT_VLEN, NULL, c, ldc, alpha, add, NULL,
          PTERUN_COMPUTE_ACT_NONE, 0.0f, 0.0f);
}

void GT_CAT(GT_FN, _ep)(size_t mr, size_t kc, const float* a, size_t a_rs, size_t a_ks,
                        const float* b, size_t b_ks, size_t b_ss, const int64_t* b_rows, float* c,
                        size_t ldc, float alpha, int add, const float* bias, int act, float lo,
                        float hi) {
  GT_BODY(mr, kc, a, a_rs, a_ks, b, b_ks, b_ss, b_rows, c, ldc, alpha, add, bias, act, lo, hi);
}

/* The indirect-GEMM entry (ukernel.h, pc_f32_igemm_fn): a channels-last
 * convolution's tile of mr output pixels x nc output channels, K = ntaps x
 * cin in (tap, channel) order. Row i's channels of tap t start at
 * ind[t * GT_MR + i] (an input pixel, or a zero row for a tap in the
 * padding); b is the filter strip packed at load, K rows of NR floats. Each
 * output: the K products fused in order from zero, then + bias[j], then the
 * activation; only rows < mr and columns < nc are stored. */
void GT_CAT(GT_FN, _ig)(size_t mr, size_t nc, size_t ntaps, size_t cin, const float* const* ind,
                        const float* b, float* c, size_t ldc, const float* bias, int act, float lo,
                        float hi) {
  GT_VEC acc[GT_MR][GT_NRV];
  const float* ar[GT_MR];
  size_t t, k;
  int i, j;
  PC_UNROLL
  for (i = 0; i < GT_MR; ++i) {
    PC_UNROLL
    for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_ZERO();
  }
  for (t = 0; t < ntaps; ++t, ind += GT_MR) {
    PC_UNROLL
    for (i = 0; i < GT_MR; ++i) ar[i] = ind[i];
    for (k = 0; k < cin; ++k, b += GT_NRV * GT_VLEN) {
      GT_VEC bv[GT_NRV];
      PC_UNROLL
      for (j = 0; j < GT_NRV; ++j) bv[j] = GT_LOADU(b + j * GT_VLEN);
      PC_UNROLL
      for (i = 0; i < GT_MR; ++i) {
        GT_VEC av = GT_BCAST(ar[i] + k);
        PC_UNROLL
        for (j = 0; j < GT_NRV; ++j) acc[i][j] = GT_FMA(av, bv[j], acc[i][j]);
      }
    }
  }
  {
    const size_t NR = (size_t)GT_NRV * GT_VLEN;
    float edge[GT_NRV * GT_VLEN];
    GT_VEC vlo = GT_BCAST(&lo), vhi = GT_BCAST(&hi);
    PC_UNROLL
    for (i = 0; i < GT_MR; ++i) {
      if ((size_t)i >= mr) break;
      float* cr = c + (size_t)i * ldc;
      float* dst = nc == NR ? cr : edge;
      PC_UNROLL
      for (j = 0; j < GT_NRV; ++j) {
        GT_VEC v = acc[i][j];
        if (bias != NULL) v = GT_ADD(v, GT_LOADU(bias + j * GT_VLEN));
        if (act == PTERUN_COMPUTE_ACT_RELU)
          v = GT_RELU(v);
        else if (act == PTERUN_COMPUTE_ACT_CLAMP)
          v = GT_CLAMP(v, vlo, vhi);
        GT_STOREU(dst + j * GT_VLEN, v);
      }
      if (dst == edge) memcpy(cr, edge, nc * sizeof(float));
    }
  }
}
#undef GT_BODY
#undef GT_SW
#undef GT_CAT
#undef GT_CAT_
