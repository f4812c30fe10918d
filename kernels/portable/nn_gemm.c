/* Blocked GEMM (see nn_gemm.h).
 *
 * float32 (and f16/bf16, converted while packing) runs the BLIS loop nest
 * around a run-time selected SIMD microkernel (gemm_ukernel.h, manifest
 * gemm_f32.inc):
 *
 *   for jc in N step NC            B block KC x NC packed once per (jc, pc)
 *     for pc in K step KC              (L3, or L2 in the stack fallback)
 *       pack B[pc.., jc..] into NR-wide strips
 *       for ic in M step MC        A block MC x KC, packed in MR-row panels
 *         pack A[ic.., pc..]           (L2); skipped when A is f32 with unit
 *                                      column stride: the microkernel then
 *                                      reads A's rows in place
 *         for jr in NC step NR     one B strip KC x NR stays in L1 ...
 *           for ir in MC step MR   ... while A panels stream from L2
 *             microkernel MR x NR
 *
 * Full tiles of an f32 C with unit column stride are written in place; edge
 * tiles and other C layouts/dtypes go through a small tile buffer, so no
 * microkernel ever reads or writes outside the matrices. The jc (or ic) loop
 * is where a thread pool would split the work: each worker then needs its own
 * A block.
 *
 * float64 keeps the portable engine below (4 x 16 tile in double); integer
 * dtypes use an exact int64 triple loop. */
#include "kernels/portable/nn_gemm.h"

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* ---- float32 engine ---------------------------------------------------- */

/* B block width with a big arena, then with a medium one. */
#define NN_F32_NC_BIG 2048
#define NN_F32_NC_MID 512
#define NN_F32_MR_MAX 16
#define NN_F32_NR_MAX 64

static const pt_f32_gemm_ukernel g_ukernels[] = {
#define PT_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc) {(isa), fn, #fn, (mr), (nr), (kc), (mc)},
#include "kernels/portable/gemm_f32.inc"
#undef PT_GEMM_UKERNEL
};

#define PT_GEMM_UKERNEL(isa, fn, mr, nr, kc, mc)                                                   \
  _Static_assert((mr) <= NN_F32_MR_MAX && (nr) <= NN_F32_NR_MAX, #fn " tile");                     \
  _Static_assert((mc) % (mr) == 0 && (kc) >= 16, #fn " blocks");
#include "kernels/portable/gemm_f32.inc"
#undef PT_GEMM_UKERNEL

const pt_f32_gemm_ukernel* pt_f32_gemm_ukernels(size_t* count_out) {
  if (count_out != NULL) *count_out = sizeof g_ukernels / sizeof g_ukernels[0];
  return g_ukernels;
}

static const pt_f32_gemm_ukernel* select_ukernel(uint64_t features, int single_row) {
  size_t i = sizeof g_ukernels / sizeof g_ukernels[0];
  while (i-- > 0)
    if ((g_ukernels[i].isa & features) == g_ukernels[i].isa &&
        (g_ukernels[i].mr == 1) == single_row)
      return &g_ukernels[i];
  return NULL;
}

const pt_f32_gemm_ukernel* pt_f32_gemm_ukernel_select(uint64_t features) {
  const pt_f32_gemm_ukernel* uk = select_ukernel(features, 0);
  return uk != NULL ? uk : &g_ukernels[0];
}

const pt_f32_gemm_ukernel* pt_f32_gemm_ukernel_select_m1(uint64_t features) {
  return select_ukernel(features, 1);
}

static int64_t round_up(int64_t x, int64_t q) {
  return (x + q - 1) / q * q;
}
static int64_t round_down_min(int64_t x, int64_t q) {
  return x < q ? q : x / q * q;
}

/* Packs B[k0.., j0..] (kc x nc) into strips of nr columns: strip s holds kc
 * rows of exactly nr floats, zero padded past column nc. */
static void pack_b_f32(float* bp, const nn_mat* b, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                       int64_t nr) {
  int64_t js, kk, cc;
  for (js = 0; js < nc; js += nr, bp += kc * nr) {
    int64_t w = min64(nr, nc - js);
    int64_t base = k0 * b->rs + (j0 + js) * b->cs;
    if (b->dtype == PTERUN_DTYPE_F32 && b->cs == 1 && w == nr) {
      const float* src = (const float*)b->data + base;
      for (kk = 0; kk < kc; ++kk)
        memcpy(bp + kk * nr, src + kk * b->rs, sizeof(float) * (size_t)nr);
      continue;
    }
    if (b->dtype == PTERUN_DTYPE_F32 && b->rs == 1) {
      const float* src = (const float*)b->data + base;
      for (cc = 0; cc < w; ++cc)
        for (kk = 0; kk < kc; ++kk) bp[kk * nr + cc] = src[cc * b->cs + kk];
    } else {
      for (kk = 0; kk < kc; ++kk)
        for (cc = 0; cc < w; ++cc)
          bp[kk * nr + cc] = pterun_load_f32(b->data, b->dtype, base + kk * b->rs + cc * b->cs);
    }
    if (w < nr)
      for (kk = 0; kk < kc; ++kk)
        for (cc = w; cc < nr; ++cc) bp[kk * nr + cc] = 0.0f;
  }
}

/* Packs A[i0.., k0..] (mc x kc) into panels of mr rows: panel p holds kc
 * columns of exactly mr floats, zero padded past row mc. */
static void pack_a_f32(float* ap, const nn_mat* a, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
                       int64_t mr) {
  int64_t ip, kk, r;
  for (ip = 0; ip < mc; ip += mr, ap += kc * mr) {
    int64_t h = min64(mr, mc - ip);
    int64_t base = (i0 + ip) * a->rs + k0 * a->cs;
    if (a->dtype == PTERUN_DTYPE_F32 && a->rs == 1 && h == mr) {
      const float* src = (const float*)a->data + base;
      for (kk = 0; kk < kc; ++kk)
        memcpy(ap + kk * mr, src + kk * a->cs, sizeof(float) * (size_t)mr);
      continue;
    }
    if (a->dtype == PTERUN_DTYPE_F32 && a->cs == 1) {
      const float* src = (const float*)a->data + base;
      for (r = 0; r < h; ++r)
        for (kk = 0; kk < kc; ++kk) ap[kk * mr + r] = src[r * a->rs + kk];
    } else {
      for (kk = 0; kk < kc; ++kk)
        for (r = 0; r < h; ++r)
          ap[kk * mr + r] = pterun_load_f32(a->data, a->dtype, base + r * a->rs + kk * a->cs);
    }
    if (h < mr)
      for (kk = 0; kk < kc; ++kk)
        for (r = h; r < mr; ++r) ap[kk * mr + r] = 0.0f;
  }
}

/* C[i0.., j0..] (h x w) = tile (+ C when add), any C dtype and strides. */
static void store_tile_f32(const nn_mat* c, int64_t i0, int64_t j0, int64_t h, int64_t w,
                           const float* tile, int64_t ld, int add) {
  int64_t r, cc;
  for (r = 0; r < h; ++r) {
    int64_t row = (i0 + r) * c->rs + j0 * c->cs;
    const float* t = tile + r * ld;
    if (c->dtype == PTERUN_DTYPE_F32) {
      float* cp = (float*)c->data + row;
      if (add)
        for (cc = 0; cc < w; ++cc) cp[cc * c->cs] += t[cc];
      else
        for (cc = 0; cc < w; ++cc) cp[cc * c->cs] = t[cc];
      continue;
    }
    for (cc = 0; cc < w; ++cc) {
      int64_t off = row + cc * c->cs;
      pterun_store_f32(c->data, c->dtype, off,
                       add ? pterun_load_f32(c->data, c->dtype, off) + t[cc] : t[cc]);
    }
  }
}

static void gemm_f32(const nn_gemm_ws* ws, int64_t m, int64_t n, int64_t k, const nn_mat* a,
                     const nn_mat* b, const nn_mat* c, float alpha, int accumulate) {
  const pt_f32_gemm_ukernel* uk = m == 1 && ws->uk_m1 != NULL ? ws->uk_m1 : ws->uk;
  const int64_t MR = uk->mr, NR = uk->nr;
  /* A is read in place when its rows are contiguous f32, unless M is large
   * and the row stride is a multiple of 2 KiB: then the rows of an A block
   * fall into a few cache sets and evict each other, and packing wins. */
  const int direct_a = a->dtype == PTERUN_DTYPE_F32 && a->cs == 1 && a->rs >= 0 &&
                       (m <= 2 * MR || (a->rs * 4) % 2048 != 0);
  /* B is read in place when each of its elements is used by at most two
   * tiles (small M): packing would cost more than it saves. */
  const int direct_b = b->dtype == PTERUN_DTYPE_F32 && b->cs == 1 && b->rs >= 0 && m <= 2 * MR;
  const int direct_c = c->dtype == PTERUN_DTYPE_F32 && c->cs == 1 && c->rs >= 0;
  const int64_t cap = (int64_t)(ws->cap / sizeof(float));
  int64_t kc = uk->kc, mc = min64(uk->mc, round_up(m, MR)),
          nc = min64(NN_F32_NC_BIG, round_up(n, NR));
  int64_t jc, pc, ic, jr, ir, nblk;
  float* bp = (float*)ws->buf;
  float* ap;
  _Alignas(64) float tile[NN_F32_MR_MAX * NN_F32_NR_MAX];

  /* Shrink the blocks until B block + A block fit the buffer: first NC (down
   * to a few strips), then KC (down to 128), then MC, then the rest. */
  for (;;) {
    int64_t need = kc * nc + (direct_a ? 0 : mc * kc);
    if (need <= cap) break;
    if (nc > 4 * NR && nc > 128)
      nc = round_down_min(nc / 2, NR);
    else if (kc > 128)
      kc /= 2;
    else if (!direct_a && mc > 4 * MR)
      mc = round_down_min(mc / 2, MR);
    else if (nc > NR)
      nc = round_down_min(nc / 2, NR);
    else if (kc > 16)
      kc /= 2;
    else if (!direct_a && mc > MR)
      mc = round_down_min(mc / 2, MR);
    else
      break; /* unreachable: the stack buffer always fits the minimum */
  }
  /* Equal K blocks (e.g. 300 = 150 + 150, not 256 + 44). */
  nblk = (k + kc - 1) / kc;
  kc = (k + nblk - 1) / nblk;
  ap = bp + kc * nc;

  for (jc = 0; jc < n; jc += nc) {
    int64_t ncb = min64(nc, n - jc);
    for (pc = 0; pc < k; pc += kc) {
      int64_t kcb = min64(kc, k - pc);
      int add = accumulate || pc > 0;
      if (!direct_b) pack_b_f32(bp, b, pc, kcb, jc, ncb, NR);
      for (ic = 0; ic < m; ic += mc) {
        int64_t mcb = min64(mc, m - ic);
        if (!direct_a) pack_a_f32(ap, a, ic, mcb, pc, kcb, MR);
        for (jr = 0; jr < ncb; jr += NR) {
          int64_t w = min64(NR, ncb - jr);
          const float* bs = bp + (jr / NR) * kcb * NR;
          size_t b_ks = (size_t)NR;
          if (direct_b && w == NR) {
            bs = (const float*)b->data + pc * b->rs + jc + jr;
            b_ks = (size_t)b->rs;
          } else if (direct_b) {
            /* The last, partial strip: packed (zero padded) into the buffer. */
            pack_b_f32(bp, b, pc, kcb, jc + jr, w, NR);
            bs = bp;
          }
          for (ir = 0; ir < mcb; ir += MR) {
            int64_t h = min64(MR, mcb - ir);
            const float* as;
            size_t a_rs, a_ks;
            if (direct_a) {
              as = (const float*)a->data + (ic + ir) * a->rs + pc;
              a_rs = (size_t)a->rs;
              a_ks = 1;
            } else {
              as = ap + (ir / MR) * kcb * MR;
              a_rs = 1;
              a_ks = (size_t)MR;
            }
            if (direct_c && h == MR && w == NR) {
              uk->fn((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks,
                     (float*)c->data + (ic + ir) * c->rs + jc + jr, (size_t)c->rs, alpha, add);
            } else {
              uk->fn((size_t)h, (size_t)kcb, as, a_rs, a_ks, bs, b_ks, tile, (size_t)NR, alpha, 0);
              store_tile_f32(c, ic + ir, jc + jr, h, w, tile, NR, add);
            }
          }
        }
      }
    }
  }
}

/* ---- float64 engine (portable) ------------------------------------------ */

#define NN_MR 4 /* micro_*() is written for exactly 4 rows */
#define NN_NR 16
/* Blocks of the f64 engine with a scratch arena (B block 256 KiB) ... */
#define NN_KC_BIG 256
#define NN_NC_BIG 128
/* ... and in the stack buffer (32 KiB). */
#define NN_KC_SMALL 64
#define NN_NC_SMALL 64

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

/* Defines gemm_<SUF>(): the blocked engine for accumulator type T. */
#define NN_DEFINE_GEMM(SUF, T, LD, ST, NATIVE_DT)                                                  \
  static void pack_b_##SUF(T* bp, const nn_mat* b, int64_t k0, int64_t kc, int64_t j0,             \
                           int64_t nc) {                                                           \
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
  static void pack_a_##SUF(T* ap, const nn_mat* a, int64_t i0, int64_t mr, int64_t k0,             \
                           int64_t kc) {                                                           \
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
  static void gemm_##SUF(int64_t m, int64_t n, int64_t k, const nn_mat* a, const nn_mat* b,        \
                         const nn_mat* c, T alpha, int accumulate, T* bp, T* ap, int64_t kcmax,    \
                         int64_t ncmax) {                                                          \
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
static void gemm_int(int64_t m, int64_t n, int64_t k, const nn_mat* a, const nn_mat* b,
                     const nn_mat* c, int64_t alpha, int accumulate) {
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

void nn_gemm_ws_init_ukernel(pterun_kernel_context* ctx, nn_gemm_ws* ws, int dtype,
                             const pt_f32_gemm_ukernel* uk) {
  ws->dbl = dtype == PTERUN_DTYPE_F64;
  if (uk != NULL) {
    ws->uk = uk; /* used for every M */
    ws->uk_m1 = NULL;
  } else {
    uint64_t features = pterun_cpu_features();
    ws->uk = pt_f32_gemm_ukernel_select(features);
    ws->uk_m1 = pt_f32_gemm_ukernel_select_m1(features);
  }
  ws->kc = NN_KC_BIG;
  ws->nc = NN_NC_BIG;
  ws->buf = NULL;
  if (ws->dbl) {
    ws->cap = (size_t)(NN_KC_BIG * NN_NC_BIG + NN_KC_BIG * NN_MR) * sizeof(double);
    ws->buf = pterun_kernel_scratch(ctx, ws->cap, 64);
  } else {
    /* Try a wide B block, then a medium one; gemm_f32 shrinks the blocks to
     * whatever buffer it gets. */
    const size_t kc = (size_t)ws->uk->kc, mc = (size_t)ws->uk->mc;
    ws->cap = (kc * NN_F32_NC_BIG + mc * kc) * sizeof(float);
    ws->buf = pterun_kernel_scratch(ctx, ws->cap, 64);
    if (ws->buf == NULL) {
      ws->cap = (kc * NN_F32_NC_MID + mc * kc) * sizeof(float);
      ws->buf = pterun_kernel_scratch(ctx, ws->cap, 64);
    }
  }
  if (ws->buf == NULL) {
    /* No arena: smaller blocks in the inline buffer. */
    pterun_kernel_note_slow_path(ctx, "no scratch: small GEMM blocks");
    _Static_assert(NN_GEMM_LOCAL_BYTES >= (NN_KC_SMALL * NN_NC_SMALL + NN_KC_SMALL * NN_MR) * 8,
                   "local gemm buffer too small for the f64 engine");
    ws->buf = ws->local;
    ws->cap = NN_GEMM_LOCAL_BYTES;
    ws->kc = NN_KC_SMALL;
    ws->nc = NN_NC_SMALL;
  }
}

void nn_gemm_ws_init(pterun_kernel_context* ctx, nn_gemm_ws* ws, int dtype) {
  nn_gemm_ws_init_ukernel(ctx, ws, dtype, NULL);
}

void nn_gemm(nn_gemm_ws* ws, int64_t m, int64_t n, int64_t k, const nn_mat* a, const nn_mat* b,
             const nn_mat* c, double alpha, int accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    /* Empty sum: C = 0 (or unchanged when accumulating). */
    int64_t i, j;
    if (!accumulate)
      for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j) pterun_store_i64(c->data, c->dtype, i * c->rs + j * c->cs, 0);
    return;
  }
  if (!pterun_dtype_is_float(c->dtype)) {
    gemm_int(m, n, k, a, b, c, (int64_t)alpha, accumulate);
  } else if (ws->dbl) {
    double* bp = (double*)ws->buf;
    gemm_f64(m, n, k, a, b, c, alpha, accumulate, bp, bp + ws->kc * ws->nc, ws->kc, ws->nc);
  } else {
    gemm_f32(ws, m, n, k, a, b, c, (float)alpha, accumulate);
  }
}
