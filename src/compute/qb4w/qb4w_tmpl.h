/* Body of a 4-bit blockwise linear microkernel for an x86 SIMD ISA
 * (interface and arithmetic: ukernel.h). Included by qb4w_<isa>.c after
 * defining:
 *   QB_FN              the function's name
 *   QB_V               bytes per vector (32 or 64): a 64-byte chunk of a
 *                      panel is 64 / QB_V vectors of QB_V / 4 columns each
 *   QB_VEC, QB_FVEC    integer and float vector types
 *   QB_LOAD(p), QB_ZERO(), QB_SET1_8(c), QB_SET1_32(x), QB_AND, QB_SRL4
 *   QB_ADD32, QB_SUB32, QB_CVT (int32 lanes to float)
 *   QB_FZERO(), QB_FSET1(f), QB_FLOAD(p), QB_FSTORE(p, v), QB_FADD, QB_FSUB,
 *   QB_FMUL
 *   QB_BF16(p)         QB_V / 4 bf16 values at p as float lanes
 *   QB_DPBUSD(acc, u, s) optional: acc + u8 x s8 quads in int32 (VNNI);
 *                      else QB_MADDUBS (u8 x s8 pairs to int16), QB_MADD
 *                      (int16 pairs to int32), QB_ADD16, QB_SET1_16
 * The products are exact: nibbles <= 15 times int8 stay far inside int16
 * even after 8 vpmaddubsw (8 * 2 * 15 * 128 < 2^15), and a block's sum of
 * at most 65536 products inside int32. The float operations are the
 * scalar reference's, lane c doing column c's, in the same order (the
 * library is built with -ffp-contract=off). */

#define QB_NV (64 / QB_V)
#define QB_CAT2(a, b) a##b
#define QB_CAT(a, b) QB_CAT2(a, b)
#define QB_NAME(s) QB_CAT(QB_FN, s)

static inline int32_t QB_NAME(_rd32)(const int8_t* p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* One block of one panel: the int32 sums of (nibble * activation) per
 * lane, `chunks` 64-byte chunks from cw (inlined with constant chunks for
 * the usual blocks of 32). */
static inline __attribute__((always_inline)) void QB_NAME(_block)(const uint8_t* cw,
                                                                  const int8_t* a, int64_t chunks,
                                                                  QB_VEC d[QB_NV]) {
  const QB_VEC mask = QB_SET1_8(0x0f);
  int64_t j;
  int h;
#if defined(QB_DPBUSD)
  QB_VEC d1[QB_NV];
  for (h = 0; h < QB_NV; ++h) d[h] = d1[h] = QB_ZERO();
  for (j = 0; j < chunks; ++j, cw += 64, a += 8) {
    const QB_VEC a0 = QB_SET1_32(QB_NAME(_rd32)(a)), a1 = QB_SET1_32(QB_NAME(_rd32)(a + 4));
    for (h = 0; h < QB_NV; ++h) {
      const QB_VEC x = QB_LOAD(cw + h * QB_V);
      d[h] = QB_DPBUSD(d[h], QB_AND(x, mask), a0);
      d1[h] = QB_DPBUSD(d1[h], QB_AND(QB_SRL4(x), mask), a1);
    }
  }
  for (h = 0; h < QB_NV; ++h) d[h] = QB_ADD32(d[h], d1[h]);
#else
  const QB_VEC ones = QB_SET1_16(1);
  for (h = 0; h < QB_NV; ++h) d[h] = QB_ZERO();
  for (j = 0; j < chunks; j += 4) {
    /* 4 chunks, 8 vpmaddubsw per lane pair, then one widening */
    const int64_t end = chunks - j < 4 ? chunks : j + 4;
    QB_VEC p[QB_NV];
    int64_t q;
    for (h = 0; h < QB_NV; ++h) p[h] = QB_ZERO();
    for (q = j; q < end; ++q, cw += 64, a += 8) {
      const QB_VEC a0 = QB_SET1_32(QB_NAME(_rd32)(a)), a1 = QB_SET1_32(QB_NAME(_rd32)(a + 4));
      for (h = 0; h < QB_NV; ++h) {
        const QB_VEC x = QB_LOAD(cw + h * QB_V);
        p[h] = QB_ADD16(p[h], QB_MADDUBS(QB_AND(x, mask), a0));
        p[h] = QB_ADD16(p[h], QB_MADDUBS(QB_AND(QB_SRL4(x), mask), a1));
      }
    }
    for (h = 0; h < QB_NV; ++h) d[h] = QB_ADD32(d[h], QB_MADD(p[h], ones));
  }
#endif
}

static inline __attribute__((always_inline)) void QB_NAME(_body)(
    const pterun_compute_qb4w_weights* w, const uint8_t* tiles, size_t ntiles, const int8_t* qa,
    const int32_t* asum8, float a_scale, int32_t a_zero, float* out, int64_t chunks, int bf16) {
  const int64_t blocks = w->k / w->block;
  const uint64_t soff = pc_qb4w_scales_offset(w), kzoff = pc_qb4w_kz_offset(w);
  const QB_FVEC sa = QB_FSET1(a_scale), zf = QB_FSET1((float)a_zero);
  size_t t;
  for (t = 0; t < ntiles; ++t) {
    const uint8_t* p = tiles + t * w->tile_bytes;
    const uint8_t* sc = p + soff;
    const uint8_t* kz = p + kzoff;
    QB_FVEC acc[QB_NV];
    int64_t g;
    int h;
    for (h = 0; h < QB_NV; ++h) acc[h] = QB_FZERO();
    for (g = 0; g < blocks; ++g) {
      QB_VEC d[QB_NV];
      const QB_VEC a8 = QB_SET1_32(asum8[g]);
      QB_NAME(_block)(p + (uint64_t)g * (uint64_t)chunks * 64u, qa + g * chunks * 8, chunks, d);
      for (h = 0; h < QB_NV; ++h) {
        /* the stored nibbles are code + 8: t = D - 8 * sum(a) */
        const QB_FVEC s = bf16 ? QB_BF16(sc + (uint64_t)g * 32u + (unsigned)h * (QB_V / 2))
                               : QB_FLOAD(sc + (uint64_t)g * 64u + (unsigned)h * QB_V);
        acc[h] = QB_FADD(acc[h], QB_FMUL(s, QB_CVT(QB_SUB32(d[h], a8))));
      }
    }
    for (h = 0; h < QB_NV; ++h) {
      QB_FVEC y = QB_FMUL(QB_FSUB(acc[h], QB_FMUL(zf, QB_FLOAD(kz + h * QB_V))), sa);
      if (w->has_bias) y = QB_FADD(y, QB_FLOAD(kz + 64 + h * QB_V));
      QB_FSTORE(out + t * PC_QB4W_COLS + (size_t)h * (QB_V / 4), y);
    }
  }
}

void QB_FN(const pterun_compute_qb4w_weights* w, const uint8_t* tiles, size_t ntiles,
           const int8_t* qa, const int32_t* asum8, float a_scale, int32_t a_zero, float* out) {
  const int64_t chunks = w->block / 8;
  /* blocks of 32 (export_llama's and XNNPACK's usual) unrolled */
  if (chunks == 4 && w->scales_bf16)
    QB_NAME(_body)(w, tiles, ntiles, qa, asum8, a_scale, a_zero, out, 4, 1);
  else if (w->scales_bf16)
    QB_NAME(_body)(w, tiles, ntiles, qa, asum8, a_scale, a_zero, out, chunks, 1);
  else
    QB_NAME(_body)(w, tiles, ntiles, qa, asum8, a_scale, a_zero, out, chunks, 0);
}

#undef QB_NV
#undef QB_CAT2
#undef QB_CAT
#undef QB_NAME
