/* Body of a low-bit linear microkernel for an x86 SIMD ISA (interface:
 * ukernel.h, pterun_compute_lowbit_dot_fn). Included by lowbit_<isa>.c after
 * defining:
 *   LT_FN, LT_TILE, LT_QUANT function names (the group dot, the whole tile,
 *                      the activation row quantizer)
 *   LT_V, LT_VEC       bytes per vector (32 or 64), integer vector type
 *   LT_LOAD(p)         load LT_V bytes;  LT_STORE(p, v): store them
 *   LT_ZERO(), LT_SET1_8(c), LT_SET1_16(c)
 *   LT_AND, LT_XOR, LT_SRL4 (each 16-bit lane >> 4), LT_ADD8, LT_ADD16, LT_ADD32
 *   LT_ACT4(h0, h1, off) activations for bytes [off, off + LT_V) of a 4-bit
 *                      chunk: in each 32-byte half, the 8 bytes h0 (first
 *                      half) or h1 (second half) repeated
 *   LT_ACT(h)          the 8 bytes h repeated
 *   LT_CVT16(p)        LT_V / 2 bytes at p sign-extended to int16 lanes
 *   LT_ACT16(h)        the 8 bytes h sign-extended to int16, repeated
 *   LT_MADDUBS(u, s)   u8 x s8 pairs to saturating int16 (vpmaddubsw)
 *   LT_MADD(x, y)      int16 pairs to int32 (vpmaddwd)
 *   LT_DPBUSD(acc, u, s) optional: acc + u8 x s8 quads in int32 (VNNI)
 *   LT_HADD_COLS(lo, hi, dot) optional: the 4-bit flush (dot[c] += the
 *                      lanes of column c) in vector registers
 *   LT_COLS32(lo, hi)  the 4-bit accumulators' column sums, columns 0..7 in
 *                      the int32 lanes of a __m256i
 *   LT_COLS8(acc)      optional: the same for the 8-bit (vpmaddwd) ones
 * The tile's epilogue and the quantizer work in 256-bit AVX2 / FMA vectors
 * (every x86 variant has them).
 *
 * Column layout (docs/lowbit.md): a 16-value k-chunk of an 8-column tile
 * holds, per column, 8 values against qa[0..7] and 8 against qa[8..15].
 * 4 bits: in each 32-byte half of the 64-byte chunk, byte b holds in its low
 * nibble column {0,1,4,5}[b / 8] and in its high nibble {2,3,6,7}[b / 8];
 * the first half pairs with qa[0..7], the second with qa[8..15]. Unpacked
 * codes (any width): code g is column (g % 64) / 8, against qa[0..7] for
 * g < 64, qa[8..15] after. Every product is exact: unsigned codes <= 127
 * times int8 never saturate vpmaddubsw (2 * 127 * 128 < 2^15), and 8 bits
 * widen to int16 (or, with VNNI, add 128 and take 128 * sum(qa) back). The
 * int32 lanes are flushed into the int64 sums well before they could wrap. */

#define LT_CAT2(a, b) a##b
#define LT_CAT(a, b) LT_CAT2(a, b)
#define LT_NAME(s) LT_CAT(LT_FN, s)
#define LT_LANES (LT_V / 4)

/* sum of 16 int8: psadbw of the bytes + 128 against zero, minus 16 * 128 */
static int64_t LT_NAME(_asum16)(const int8_t* qa) {
  const __m128i s = _mm_sad_epu8(
      _mm_xor_si128(_mm_loadu_si128((const __m128i*)(const void*)qa), _mm_set1_epi8((char)0x80)),
      _mm_setzero_si128());
  return (int64_t)_mm_cvtsi128_si32(s) + _mm_extract_epi16(s, 4) - 16 * 128;
}

/* 4 bits: the stored nibbles u = code + 8 times the activations, then
 * dot = sum(u * a) - 8 * sum(a). */
static void LT_NAME(_4)(const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
#if !defined(LT_HADD_COLS)
  static const int col_lo[4] = {0, 1, 4, 5}, col_hi[4] = {2, 3, 6, 7};
  int32_t lo[LT_LANES], hi[LT_LANES];
#endif
  const LT_VEC mask = LT_SET1_8(0x0f);
#if !defined(LT_DPBUSD)
  const LT_VEC ones = LT_SET1_16(1);
#endif
  LT_VEC acc_lo = LT_ZERO(), acc_hi = LT_ZERO();
  int64_t c, asum = 0;
  int i, off;
  for (c = 0; c < chunks; ++c, w += 64, qa += 16) {
    int64_t h0, h1;
    memcpy(&h0, qa, 8);
    memcpy(&h1, qa + 8, 8);
#if defined(LT_DPBUSD)
    for (off = 0; off < 64; off += LT_V) {
      LT_VEC x = LT_LOAD(w + off), a = LT_ACT4(h0, h1, off);
      acc_lo = LT_DPBUSD(acc_lo, LT_AND(x, mask), a);
      acc_hi = LT_DPBUSD(acc_hi, LT_AND(LT_SRL4(x), mask), a);
    }
#else
    {
      /* int16 lanes: at most 2 * 15 * 128 per step, two steps: no wrap */
      LT_VEC p_lo = LT_ZERO(), p_hi = LT_ZERO();
      for (off = 0; off < 64; off += LT_V) {
        LT_VEC x = LT_LOAD(w + off), a = LT_ACT4(h0, h1, off);
        p_lo = LT_ADD16(p_lo, LT_MADDUBS(LT_AND(x, mask), a));
        p_hi = LT_ADD16(p_hi, LT_MADDUBS(LT_AND(LT_SRL4(x), mask), a));
      }
      acc_lo = LT_ADD32(acc_lo, LT_MADD(p_lo, ones));
      acc_hi = LT_ADD32(acc_hi, LT_MADD(p_hi, ones));
    }
#endif
    asum += LT_NAME(_asum16)(qa);
    /* int32 lanes grow by at most 4 * 15 * 128 * 2 per chunk */
    if ((c & 16383) == 16383 || c + 1 == chunks) {
#if defined(LT_HADD_COLS)
      LT_HADD_COLS(acc_lo, acc_hi, dot);
#else
      LT_STORE(lo, acc_lo);
      LT_STORE(hi, acc_hi);
      for (i = 0; i < LT_LANES; ++i) {
        int b = ((4 * i) % 32) / 8;
        dot[col_lo[b]] += lo[i];
        dot[col_hi[b]] += hi[i];
      }
#endif
      acc_lo = acc_hi = LT_ZERO();
    }
  }
  for (i = 0; i < 8; ++i) dot[i] -= 8 * asum;
}

/* Unsigned codes u (the stored values, <= 127 for 1..7 bits; for 8 bits the
 * code + 128, VNNI only) times the activations; dot = sum(u * a) - bias *
 * sum(a). */
static void LT_NAME(_u)(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                        int64_t dot[8]) {
  enum { NACC = 64 / LT_V };
#if !defined(LT_DPBUSD)
  const LT_VEC ones = LT_SET1_16(1);
#endif
  const LT_VEC flip = LT_SET1_8((char)(nbit == 8 ? 0x80 : 0));
  const int64_t bias = nbit == 8 ? 128 : (int64_t)1 << (nbit - 1);
  LT_VEC acc[NACC];
  uint8_t codes[128];
  int32_t lanes[LT_LANES];
  int64_t c, asum = 0;
  int i, s, off;
  for (s = 0; s < NACC; ++s) acc[s] = LT_ZERO();
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    int64_t h0, h1;
    const uint8_t* src = codes;
    memcpy(&h0, qa, 8);
    memcpy(&h1, qa + 8, 8);
    if (nbit == 8)
      src = w;
    else
      pc_lowbit_unpack_u(nbit, 128, w, codes);
    for (off = 0; off < 128; off += LT_V) {
      LT_VEC u = LT_XOR(LT_LOAD(src + off), flip), a = LT_ACT(off < 64 ? h0 : h1);
#if defined(LT_DPBUSD)
      acc[(off % 64) / LT_V] = LT_DPBUSD(acc[(off % 64) / LT_V], u, a);
#else
      /* each vpmaddubsw widened on its own: two of them may exceed int16 */
      acc[(off % 64) / LT_V] = LT_ADD32(acc[(off % 64) / LT_V], LT_MADD(LT_MADDUBS(u, a), ones));
#endif
    }
    asum += LT_NAME(_asum16)(qa);
    /* int32 lanes grow by at most 2 * 4 * 255 * 128 per chunk */
    if ((c & 1023) == 1023 || c + 1 == chunks) {
      for (s = 0; s < NACC; ++s) {
        LT_STORE(lanes, acc[s]);
        for (i = 0; i < LT_LANES; ++i) dot[((s * LT_V + 4 * i) % 64) / 8] += lanes[i];
        acc[s] = LT_ZERO();
      }
    }
  }
  for (i = 0; i < 8; ++i) dot[i] -= bias * asum;
}

#if !defined(LT_DPBUSD)
/* One 8-bit chunk: codes and activations widened to int16, vpmaddwd into
 * acc[64 / (LT_V / 2)]; code j of a widened load is column (j % 64) / 8. */
static inline __attribute__((always_inline)) void LT_NAME(_chunk8)(const uint8_t* w,
                                                                   const int8_t* qa, LT_VEC* acc) {
  enum { HV = LT_V / 2 };
  int64_t h0, h1;
  LT_VEC a0, a1;
  int off;
  memcpy(&h0, qa, 8);
  memcpy(&h1, qa + 8, 8);
  a0 = LT_ACT16(h0);
  a1 = LT_ACT16(h1);
  for (off = 0; off < 128; off += HV)
    acc[(off % 64) / HV] =
        LT_ADD32(acc[(off % 64) / HV], LT_MADD(LT_CVT16(w + off), off < 64 ? a0 : a1));
}

/* 8 bits without VNNI: codes and activations widened to int16, vpmaddwd. */
static void LT_NAME(_8)(const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
  enum { HV = LT_V / 2, NACC = 64 / HV };
  LT_VEC acc[NACC];
  int32_t lanes[LT_LANES];
  int64_t c;
  int i, s;
  for (s = 0; s < NACC; ++s) acc[s] = LT_ZERO();
  for (c = 0; c < chunks; ++c, w += 128, qa += 16) {
    LT_NAME(_chunk8)(w, qa, acc);
    /* int32 lanes grow by at most 2 * 2 * 128 * 128 per chunk */
    if ((c & 4095) == 4095 || c + 1 == chunks) {
      for (s = 0; s < NACC; ++s) {
        LT_STORE(lanes, acc[s]);
        for (i = 0; i < LT_LANES; ++i) dot[(s * HV + 2 * i) / 8] += lanes[i];
        acc[s] = LT_ZERO();
      }
    }
  }
}
#endif

void LT_FN(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
  int i;
  for (i = 0; i < 8; ++i) dot[i] = 0;
  if (nbit == 4) {
    LT_NAME(_4)(w, qa, chunks, dot);
    return;
  }
#if !defined(LT_DPBUSD)
  if (nbit == 8) {
    LT_NAME(_8)(w, qa, chunks, dot);
    return;
  }
#endif
  LT_NAME(_u)(nbit, w, qa, chunks, dot);
}

/* The activation row quantizer: act.c's operations lane by lane. vminps /
 * vmaxps (a < b ? a : b, a > b ? a : b) are its comparisons: a NaN counts
 * only when it is x[0] (every lane starts there); vfmadd is fmaf, vroundps
 * in the current mode is nearbyintf, and the clamps come first. */
void LT_QUANT(const float* x, int64_t k, int64_t gs, int8_t* qa, int64_t* asum, float* scale,
              int32_t* zero) {
  __m256 lo = _mm256_set1_ps(x[0]), hi = lo, inv, zf;
  const __m256 qmin = _mm256_set1_ps(-128.0f), qmax = _mm256_set1_ps(127.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  float l[8], h[8];
  int64_t i, g, j;
  for (i = 0; i + 8 <= k; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    lo = _mm256_min_ps(v, lo);
    hi = _mm256_max_ps(v, hi);
  }
  _mm256_storeu_ps(l, lo);
  _mm256_storeu_ps(h, hi);
  pc_lowbit_act_qparams_lanes(l, h, 8, x + i, k - i, scale, zero);
  inv = _mm256_set1_ps(pc_lowbit_act_inv(*scale));
  zf = _mm256_set1_ps((float)*zero);
  for (i = 0; i + 32 <= k; i += 32) {
    __m256i q[4];
    for (j = 0; j < 4; ++j) {
      __m256 v = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * j), inv, zf);
      v = _mm256_min_ps(_mm256_max_ps(v, qmin), qmax);
      q[j] = _mm256_cvtps_epi32(_mm256_round_ps(v, _MM_FROUND_CUR_DIRECTION));
    }
    /* packs work per 128-bit half: the permutation restores the order */
    _mm256_storeu_si256(
        (__m256i*)(void*)(qa + i),
        _mm256_permutevar8x32_epi32(
            _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3])),
            order));
  }
  if (i < k) pc_lowbit_act_quantize(x + i, k - i, pc_lowbit_act_inv(*scale), *zero, qa + i);
  for (g = 0; g < k / gs; ++g) {
    int64_t s = 0;
    for (j = 0; j < gs; j += 16) s += LT_NAME(_asum16)(qa + g * gs + j);
    asum[g] = s;
  }
}

/* The whole tile for one row. 4 bits (and 8 bits where LT_COLS8 orders the
 * 8-bit accumulators' columns): per group, the column dots stay in int32
 * lanes and the epilogue runs on the 8 columns at once, lane c doing the
 * portable epilogue's float operations for column c (no contraction:
 * -ffp-contract=off), so the bits are the same. The integers are exact in
 * int32 when |row zero|, |weight sums|, |weight zeros| and |gs * zero -
 * group sum| are at most 2^14 and |dot| <= 2^28 (4 bits: gs * 8 * 128, at
 * most 16384 chunks; 8 bits: gs * 128 * 128, at most 1024 chunks): each
 * product <= 2^28. Rows and tiles outside that (extreme zero points, hostile
 * sums) take pc_lowbit_tile_generic, whose int64 arithmetic gives the same
 * values where both apply; so do the other widths. */
enum { LT_LIM = 1 << 14 };

typedef struct LT_NAME(_acc) {
  __m256i vza, lim, top; /* top: max of (sum or zero + 2^14), unsigned */
  __m256 as, res;
} LT_NAME(_acc);

/* One group's epilogue: t the 8 column dots, w the group's scales (then
 * sums [, zero points]). 0 when gs * zero - sum(a) is past 2^14. */
static inline __attribute__((always_inline)) int LT_NAME(_epilogue)(
    const pterun_compute_lowbit_weights* p, const uint8_t* w, __m256i t, int64_t asum, int32_t za,
    int has_zeros, LT_NAME(_acc) * e) {
  const __m256i wsum = _mm256_loadu_si256((const __m256i*)(const void*)(w + 32));
  e->top = _mm256_max_epu32(e->top, _mm256_add_epi32(wsum, e->lim));
  t = _mm256_sub_epi32(t, _mm256_mullo_epi32(e->vza, wsum));
  if (has_zeros) {
    /* - wz * asum + gs * wz * za, as wz * (gs * za - asum) */
    const int64_t zt = p->group_size * za - asum;
    const __m256i wz = _mm256_loadu_si256((const __m256i*)(const void*)(w + 64));
    if (zt < -LT_LIM || zt > LT_LIM) return 0;
    e->top = _mm256_max_epu32(e->top, _mm256_add_epi32(wz, e->lim));
    t = _mm256_add_epi32(t, _mm256_mullo_epi32(wz, _mm256_set1_epi32((int32_t)zt)));
  }
  e->res = _mm256_add_ps(
      e->res, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps((const float*)(const void*)w), e->as),
                            _mm256_cvtepi32_ps(t)));
  return 1;
}

/* 4 bits: the stored nibbles times the activations, two chunks per
 * widening (int16 lanes take at most 4 * 15 * 128). Inlined with constant
 * `chunks` and `has_zeros` for the common shapes (LT_NAME(_groups4)): the
 * pair loop and the zero-point branch then compile away, which at decode's
 * one row is a large share of the tile's instructions. */
static inline __attribute__((always_inline)) const uint8_t* LT_NAME(_groups4_body)(
    const pterun_compute_lowbit_weights* p, const uint8_t* w, const pterun_compute_lowbit_qrow* row,
    LT_NAME(_acc) * e, int64_t groups, int64_t chunks, int has_zeros) {
  const LT_VEC mask = LT_SET1_8(0x0f);
#if !defined(LT_DPBUSD)
  const LT_VEC ones = LT_SET1_16(1);
#endif
  const int8_t* qa = row->qa;
  int64_t g, c;
  int off;
  (void)p;
  for (g = 0; g < groups; ++g) {
    LT_VEC acc_lo = LT_ZERO(), acc_hi = LT_ZERO();
    for (c = 0; c < chunks; c += 2) {
      const int64_t pair = chunks - c < 2 ? chunks - c : 2;
#if !defined(LT_DPBUSD)
      LT_VEC p_lo = LT_ZERO(), p_hi = LT_ZERO();
#endif
      int64_t h;
      for (h = 0; h < pair; ++h, w += 64, qa += 16) {
        int64_t h0, h1;
        memcpy(&h0, qa, 8);
        memcpy(&h1, qa + 8, 8);
        for (off = 0; off < 64; off += LT_V) {
          LT_VEC x = LT_LOAD(w + off), a = LT_ACT4(h0, h1, off);
#if defined(LT_DPBUSD)
          acc_lo = LT_DPBUSD(acc_lo, LT_AND(x, mask), a);
          acc_hi = LT_DPBUSD(acc_hi, LT_AND(LT_SRL4(x), mask), a);
#else
          p_lo = LT_ADD16(p_lo, LT_MADDUBS(LT_AND(x, mask), a));
          p_hi = LT_ADD16(p_hi, LT_MADDUBS(LT_AND(LT_SRL4(x), mask), a));
#endif
        }
      }
#if !defined(LT_DPBUSD)
      acc_lo = LT_ADD32(acc_lo, LT_MADD(p_lo, ones));
      acc_hi = LT_ADD32(acc_hi, LT_MADD(p_hi, ones));
#endif
    }
    /* the stored nibbles are code + 8: dot = sum(u * a) - 8 * sum(a); the
     * low 32 bits of 8 * sum(a) are those of (int32_t)sum(a) << 3, which
     * is one broadcast load and a shift (the same wrapped value) */
    if (!LT_NAME(_epilogue)(
            p, w,
            _mm256_sub_epi32(LT_COLS32(acc_lo, acc_hi),
                             _mm256_slli_epi32(_mm256_set1_epi32((int32_t)row->asum[g]), 3)),
            row->asum[g], row->zero, has_zeros, e))
      return NULL;
    w += 64 + (has_zeros ? 32 : 0);
  }
  return w;
}

static const uint8_t* LT_NAME(_groups4)(const pterun_compute_lowbit_weights* p, const uint8_t* w,
                                        const pterun_compute_lowbit_qrow* row, LT_NAME(_acc) * e) {
  const int64_t chunks = p->group_size / 16;
  /* group 32 (export_llama's and XNNPACK's usual block) without zero points
   * first; the division by a constant is a shift, not a per-tile idiv */
  if (chunks == 2 && !p->has_zeros) return LT_NAME(_groups4_body)(p, w, row, e, p->k / 32, 2, 0);
  if (chunks == 2) return LT_NAME(_groups4_body)(p, w, row, e, p->k / 32, 2, 1);
  if (chunks == 4 && !p->has_zeros) return LT_NAME(_groups4_body)(p, w, row, e, p->k / 64, 4, 0);
  if (chunks == 8 && !p->has_zeros) return LT_NAME(_groups4_body)(p, w, row, e, p->k / 128, 8, 0);
  return LT_NAME(_groups4_body)(p, w, row, e, p->k / p->group_size, chunks, p->has_zeros);
}

#if defined(LT_COLS8)
/* 8 bits: the signed codes widened to int16 times the activations
 * (vpmaddwd), the column dots ordered by LT_COLS8. */
static const uint8_t* LT_NAME(_groups8)(const pterun_compute_lowbit_weights* p, const uint8_t* w,
                                        const pterun_compute_lowbit_qrow* row, LT_NAME(_acc) * e) {
  enum { HV = LT_V / 2, NACC = 64 / HV };
  const int64_t groups = p->k / p->group_size, chunks = p->group_size / 16;
  const int8_t* qa = row->qa;
  int64_t g, c;
  int s;
  for (g = 0; g < groups; ++g) {
    LT_VEC acc[NACC];
    for (s = 0; s < NACC; ++s) acc[s] = LT_ZERO();
    for (c = 0; c < chunks; ++c, w += 128, qa += 16) LT_NAME(_chunk8)(w, qa, acc);
    if (!LT_NAME(_epilogue)(p, w, LT_COLS8(acc), row->asum[g], row->zero, p->has_zeros, e))
      return NULL;
    w += 64 + (p->has_zeros ? 32 : 0);
  }
  return w;
}
#endif

void LT_TILE(const pterun_compute_lowbit_weights* p, const uint8_t* w0,
             const pterun_compute_lowbit_qrow* row, float out[8]) {
  const int64_t chunks = p->group_size / 16;
  const int32_t za = row->zero;
  const uint8_t* w = NULL;
  LT_NAME(_acc) e;
  e.vza = _mm256_set1_epi32(za);
  e.lim = _mm256_set1_epi32(LT_LIM);
  e.top = _mm256_setzero_si256();
  e.as = _mm256_set1_ps(row->scale);
  e.res = _mm256_setzero_ps();
  if (za >= -LT_LIM && za <= LT_LIM) {
    if (p->nbit == 4 && chunks <= 16384) w = LT_NAME(_groups4)(p, w0, row, &e);
#if defined(LT_COLS8)
    if (p->nbit == 8 && chunks <= 1024) w = LT_NAME(_groups8)(p, w0, row, &e);
#endif
  }
  /* not covered, or a sum or zero point past 2^14 (then the int32 lanes may
   * have wrapped): the tile in int64 */
  if (w == NULL || _mm256_movemask_epi8(
                       _mm256_cmpeq_epi32(_mm256_max_epu32(e.top, _mm256_add_epi32(e.lim, e.lim)),
                                          _mm256_add_epi32(e.lim, e.lim))) != -1) {
    pc_lowbit_tile_generic(LT_FN, p, w0, row, out);
    return;
  }
  if (p->has_bias) e.res = _mm256_add_ps(e.res, _mm256_loadu_ps((const float*)(const void*)w));
  _mm256_storeu_ps(out, e.res);
}

#if LT_V == 64
/* AVX-512: two neighbouring 4-bit tiles for one row at once. Their 4
 * accumulators fit the 32 registers with room to spare, the activation
 * broadcasts of a chunk serve both, and the epilogue runs on the 16 columns
 * in one 512-bit vector: the same per-lane operations in the same order as
 * LT_NAME(_epilogue) (lane c < 8: tile a's column c; else tile b's), so the
 * same bits. 0 when a group leaves the int32 fast path's bounds (the caller
 * then runs each tile alone, which takes the int64 epilogue where needed). */
static inline __attribute__((always_inline)) int LT_NAME(_pair4_body)(
    const pterun_compute_lowbit_weights* p, const uint8_t* wa, const uint8_t* wb,
    const pterun_compute_lowbit_qrow* row, float out[16], int64_t groups, int64_t chunks,
    int has_zeros) {
  const LT_VEC mask = LT_SET1_8(0x0f);
#if !defined(LT_DPBUSD)
  const LT_VEC ones = LT_SET1_16(1);
#endif
  const __m512i vza = _mm512_set1_epi32(row->zero), lim = _mm512_set1_epi32(LT_LIM);
  const __m512 as = _mm512_set1_ps(row->scale);
  __m512i top = _mm512_setzero_si512();
  __m512 res = _mm512_setzero_ps();
  const int8_t* qa = row->qa;
  const int64_t step = 64 + (has_zeros ? 32 : 0);
  int64_t g, c, h;
  for (g = 0; g < groups; ++g) {
    LT_VEC alo = LT_ZERO(), ahi = LT_ZERO(), blo = LT_ZERO(), bhi = LT_ZERO();
    for (c = 0; c < chunks; c += 2) {
      const int64_t pair = chunks - c < 2 ? chunks - c : 2;
#if !defined(LT_DPBUSD)
      LT_VEC palo = LT_ZERO(), pahi = LT_ZERO(), pblo = LT_ZERO(), pbhi = LT_ZERO();
#endif
      for (h = 0; h < pair; ++h, wa += 64, wb += 64, qa += 16) {
        int64_t h0, h1;
        memcpy(&h0, qa, 8);
        memcpy(&h1, qa + 8, 8);
        const LT_VEC a = LT_ACT4(h0, h1, 0), xa = LT_LOAD(wa), xb = LT_LOAD(wb);
#if defined(LT_DPBUSD)
        alo = LT_DPBUSD(alo, LT_AND(xa, mask), a);
        ahi = LT_DPBUSD(ahi, LT_AND(LT_SRL4(xa), mask), a);
        blo = LT_DPBUSD(blo, LT_AND(xb, mask), a);
        bhi = LT_DPBUSD(bhi, LT_AND(LT_SRL4(xb), mask), a);
#else
        palo = LT_ADD16(palo, LT_MADDUBS(LT_AND(xa, mask), a));
        pahi = LT_ADD16(pahi, LT_MADDUBS(LT_AND(LT_SRL4(xa), mask), a));
        pblo = LT_ADD16(pblo, LT_MADDUBS(LT_AND(xb, mask), a));
        pbhi = LT_ADD16(pbhi, LT_MADDUBS(LT_AND(LT_SRL4(xb), mask), a));
#endif
      }
#if !defined(LT_DPBUSD)
      alo = LT_ADD32(alo, LT_MADD(palo, ones));
      ahi = LT_ADD32(ahi, LT_MADD(pahi, ones));
      blo = LT_ADD32(blo, LT_MADD(pblo, ones));
      bhi = LT_ADD32(bhi, LT_MADD(pbhi, ones));
#endif
    }
    /* dot = sum(u * a) - 8 * sum(a), as in LT_NAME(_groups4_body) */
    const __m256i a8 = _mm256_slli_epi32(_mm256_set1_epi32((int32_t)row->asum[g]), 3);
    __m512i t =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_sub_epi32(LT_COLS32(alo, ahi), a8)),
                           _mm256_sub_epi32(LT_COLS32(blo, bhi), a8), 1);
#define LT_PAIR_LOAD(off)                                                                          \
  _mm512_inserti64x4(                                                                              \
      _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i*)(const void*)(wa + (off)))),       \
      _mm256_loadu_si256((const __m256i*)(const void*)(wb + (off))), 1)
    const __m512i wsum = LT_PAIR_LOAD(32);
    top = _mm512_max_epu32(top, _mm512_add_epi32(wsum, lim));
    t = _mm512_sub_epi32(t, _mm512_mullo_epi32(vza, wsum));
    if (has_zeros) {
      const int64_t zt = p->group_size * row->zero - row->asum[g];
      const __m512i wz = LT_PAIR_LOAD(64);
      if (zt < -LT_LIM || zt > LT_LIM) return 0;
      top = _mm512_max_epu32(top, _mm512_add_epi32(wz, lim));
      t = _mm512_add_epi32(t, _mm512_mullo_epi32(wz, _mm512_set1_epi32((int32_t)zt)));
    }
    res = _mm512_add_ps(res, _mm512_mul_ps(_mm512_mul_ps(_mm512_castsi512_ps(LT_PAIR_LOAD(0)), as),
                                           _mm512_cvtepi32_ps(t)));
    wa += step;
    wb += step;
  }
  /* the bound LT_TILE checks: every sum and zero point + 2^14 <= 2^15 */
  {
    /* (the two halves folded: AVX2's test, which SIMDe also provides) */
    const __m256i lim2 = _mm256_set1_epi32(2 * LT_LIM),
                  t8 = _mm256_max_epu32(_mm512_castsi512_si256(top),
                                        _mm512_extracti64x4_epi64(top, 1));
    if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(t8, lim2), lim2)) != -1) return 0;
  }
  if (p->has_bias) res = _mm512_add_ps(res, _mm512_castsi512_ps(LT_PAIR_LOAD(0)));
#undef LT_PAIR_LOAD
  _mm512_storeu_ps(out, res);
  return 1;
}

static int LT_NAME(_pair4)(const pterun_compute_lowbit_weights* p, const uint8_t* wa,
                           const uint8_t* wb, const pterun_compute_lowbit_qrow* row,
                           float out[16]) {
  const int64_t chunks = p->group_size / 16;
  if (p->nbit != 4 || row->zero < -LT_LIM || row->zero > LT_LIM || chunks > 16384) return 0;
  /* the shapes LT_NAME(_groups4) specialises */
  if (chunks == 2 && !p->has_zeros)
    return LT_NAME(_pair4_body)(p, wa, wb, row, out, p->k / 32, 2, 0);
  if (chunks == 2) return LT_NAME(_pair4_body)(p, wa, wb, row, out, p->k / 32, 2, 1);
  if (chunks == 4 && !p->has_zeros)
    return LT_NAME(_pair4_body)(p, wa, wb, row, out, p->k / 64, 4, 0);
  if (chunks == 8 && !p->has_zeros)
    return LT_NAME(_pair4_body)(p, wa, wb, row, out, p->k / 128, 8, 0);
  return LT_NAME(_pair4_body)(p, wa, wb, row, out, p->k / p->group_size, chunks, p->has_zeros);
}
#endif

/* n whole tiles for one row: LT_TILE on each; on AVX-512 4-bit tiles in
 * pairs (LT_NAME(_pair4)). (Pairs on AVX2 took 9 % fewer instructions per
 * decode step but ran slower: two tiles' accumulators do not fit the 16
 * registers, and the spills cost more than the shared loads saved.) */
void LT_CAT(LT_TILE, _many)(const pterun_compute_lowbit_weights* p, const uint8_t* w0,
                            const pterun_compute_lowbit_qrow* row, float* out, size_t n) {
  const uint64_t tb = p->tile_bytes;
  size_t t = 0;
#if LT_V == 64
  for (; t + 1 < n; t += 2)
    if (!LT_NAME(_pair4)(p, w0 + t * tb, w0 + (t + 1) * tb, row, out + 8 * t)) {
      LT_TILE(p, w0 + t * tb, row, out + 8 * t);
      LT_TILE(p, w0 + (t + 1) * tb, row, out + 8 * (t + 1));
    }
#endif
  for (; t < n; ++t) LT_TILE(p, w0 + t * tb, row, out + 8 * t);
}

#undef LT_CAT2
#undef LT_CAT
#undef LT_NAME
#undef LT_LANES
