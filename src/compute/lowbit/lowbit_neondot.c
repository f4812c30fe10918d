/* Low-bit linear microkernel for AArch64 NEON with the dot-product
 * extension (sdot: int8 x int8 quads into int32 lanes, signed on both sides,
 * so codes need no bias except the 4-bit nibbles). Built with
 * -march=armv8.2-a+dotprod by src/compute/isa.cmake on aarch64; selected at
 * run time only when pterun_cpu_features() reports ASIMDDP. The column
 * layout is dot_tmpl.h's (16-byte vectors): lane i of a vector loaded at
 * byte b covers bytes b + 4i .. b + 4i + 3. */
#include "src/compute/lowbit/ukernel.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>
#include <string.h>

static int8x16_t act(const int8_t* qa8) {
  int64_t h;
  memcpy(&h, qa8, 8);
  return vreinterpretq_s8_s64(vdupq_n_s64(h));
}

/* One 4-bit chunk: the nibbles u = code + 8 (0..15, non-negative as int8)
 * times the activations into lo[2] (low nibbles) and hi[2] (high). */
static inline void chunk4(const uint8_t* w, const int8_t* qa, int32x4_t lo[2], int32x4_t hi[2]) {
  const uint8x16_t mask = vdupq_n_u8(0x0f);
  const int8x16_t a0 = act(qa), a1 = act(qa + 8);
  int off;
  for (off = 0; off < 64; off += 16) {
    const uint8x16_t x = vld1q_u8(w + off);
    const int8x16_t a = off < 32 ? a0 : a1;
    const int s = (off % 32) / 16;
    lo[s] = vdotq_s32(lo[s], vreinterpretq_s8_u8(vandq_u8(x, mask)), a);
    hi[s] = vdotq_s32(hi[s], vreinterpretq_s8_u8(vshrq_n_u8(x, 4)), a);
  }
}

/* 4 bits: dot = sum(u * a) - 8 * sum(a). */
static void dot4(const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
  static const int col_lo[4] = {0, 1, 4, 5}, col_hi[4] = {2, 3, 6, 7};
  int32x4_t lo[2], hi[2];
  int32_t l[4], h[4];
  int64_t c, asum = 0;
  int i, s;
  for (s = 0; s < 2; ++s) lo[s] = hi[s] = vdupq_n_s32(0);
  for (c = 0; c < chunks; ++c, w += 64, qa += 16) {
    chunk4(w, qa, lo, hi);
    for (i = 0; i < 16; ++i) asum += qa[i];
    /* int32 lanes grow by at most 2 * 4 * 15 * 128 per chunk */
    if ((c & 16383) == 16383 || c + 1 == chunks)
      for (s = 0; s < 2; ++s) {
        vst1q_s32(l, lo[s]);
        vst1q_s32(h, hi[s]);
        for (i = 0; i < 4; ++i) {
          dot[col_lo[(s * 16 + 4 * i) / 8]] += l[i];
          dot[col_hi[(s * 16 + 4 * i) / 8]] += h[i];
        }
        lo[s] = hi[s] = vdupq_n_s32(0);
      }
  }
  for (i = 0; i < 8; ++i) dot[i] -= 8 * asum;
}

/* Other widths: signed codes (8 bits: the bytes as they are; else unpacked)
 * times the activations; code g is column (g % 64) / 8. */
static void dot_codes(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                      int64_t dot[8]) {
  int32x4_t acc[4];
  int8_t codes[128];
  int32_t l[4];
  int64_t c;
  int i, s, g;
  for (s = 0; s < 4; ++s) acc[s] = vdupq_n_s32(0);
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    const int8x16_t a0 = act(qa), a1 = act(qa + 8);
    const int8_t* src = (const int8_t*)w;
    if (nbit != 8) {
      pterun_compute_lowbit_unpack(nbit, 128, w, codes);
      src = codes;
    }
    for (g = 0; g < 128; g += 16)
      acc[(g % 64) / 16] = vdotq_s32(acc[(g % 64) / 16], vld1q_s8(src + g), g < 64 ? a0 : a1);
    /* int32 lanes grow by at most 2 * 4 * 128 * 128 per chunk */
    if ((c & 4095) == 4095 || c + 1 == chunks)
      for (s = 0; s < 4; ++s) {
        vst1q_s32(l, acc[s]);
        for (i = 0; i < 4; ++i) dot[(s * 16 + 4 * i) / 8] += l[i];
        acc[s] = vdupq_n_s32(0);
      }
  }
}

void pc_lowbit_dot__neondot(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                            int64_t dot[8]) {
  int i;
  for (i = 0; i < 8; ++i) dot[i] = 0;
  if (nbit == 4)
    dot4(w, qa, chunks, dot);
  else
    dot_codes(nbit, w, qa, chunks, dot);
}

/* The whole tile for one row, as dot_tmpl.h's x86 tile: 4 bits keep a
 * group's column sums in int32 lanes (vpaddq of the lo / hi accumulators
 * orders the columns 0..3 and 4..7) and run the epilogue on the 8 columns,
 * lane c doing the portable epilogue's float operations (no contraction:
 * -ffp-contract=off); exact in int32 while |row zero|, |weight sums|,
 * |weight zeros| and |gs * zero - group sum| are at most 2^14, else (and for
 * the other widths) pc_lowbit_tile_generic. */
void pc_lowbit_tile__neondot(const pterun_compute_lowbit_weights* p, const uint8_t* w0,
                             const pterun_compute_lowbit_qrow* row, float out[8]) {
  enum { LIM = 1 << 14 };
  const int64_t gs = p->group_size, groups = p->k / gs, chunks = gs / 16;
  const int32_t za = row->zero;
  const int32x4_t vza = vdupq_n_s32(za);
  const uint32x4_t lim = vdupq_n_u32(LIM);
  const float32x4_t as = vdupq_n_f32(row->scale);
  uint32x4_t top = vdupq_n_u32(0); /* max of (sum or zero + 2^14), unsigned */
  float32x4_t res0 = vdupq_n_f32(0.0f), res1 = res0;
  const int8_t* qa = row->qa;
  const uint8_t* w = w0;
  int64_t g, c;
  if (p->nbit != 4 || chunks > 16384 || za < -LIM || za > LIM) {
    pc_lowbit_tile_generic(pc_lowbit_dot__neondot, p, w0, row, out);
    return;
  }
  for (g = 0; g < groups; ++g) {
    int32x4_t lo[2], hi[2], t0, t1, ws0, ws1;
    const int32x4_t a8 = vdupq_n_s32((int32_t)(8 * row->asum[g]));
    for (c = 0; c < 2; ++c) lo[c] = hi[c] = vdupq_n_s32(0);
    for (c = 0; c < chunks; ++c, w += 64, qa += 16) chunk4(w, qa, lo, hi);
    /* the stored nibbles are code + 8: dot = sum(u * a) - 8 * sum(a) */
    t0 = vsubq_s32(vpaddq_s32(lo[0], hi[0]), a8);
    t1 = vsubq_s32(vpaddq_s32(lo[1], hi[1]), a8);
    ws0 = vld1q_s32((const int32_t*)(const void*)(w + 32));
    ws1 = vld1q_s32((const int32_t*)(const void*)(w + 48));
    top = vmaxq_u32(top, vaddq_u32(vreinterpretq_u32_s32(ws0), lim));
    top = vmaxq_u32(top, vaddq_u32(vreinterpretq_u32_s32(ws1), lim));
    t0 = vsubq_s32(t0, vmulq_s32(vza, ws0));
    t1 = vsubq_s32(t1, vmulq_s32(vza, ws1));
    if (p->has_zeros) {
      /* - wz * asum + gs * wz * za, as wz * (gs * za - asum) */
      const int64_t zt = gs * za - row->asum[g];
      const int32x4_t wz0 = vld1q_s32((const int32_t*)(const void*)(w + 64));
      const int32x4_t wz1 = vld1q_s32((const int32_t*)(const void*)(w + 80));
      if (zt < -LIM || zt > LIM) {
        pc_lowbit_tile_generic(pc_lowbit_dot__neondot, p, w0, row, out);
        return;
      }
      top = vmaxq_u32(top, vaddq_u32(vreinterpretq_u32_s32(wz0), lim));
      top = vmaxq_u32(top, vaddq_u32(vreinterpretq_u32_s32(wz1), lim));
      t0 = vaddq_s32(t0, vmulq_s32(wz0, vdupq_n_s32((int32_t)zt)));
      t1 = vaddq_s32(t1, vmulq_s32(wz1, vdupq_n_s32((int32_t)zt)));
    }
    res0 = vaddq_f32(
        res0, vmulq_f32(vmulq_f32(vld1q_f32((const float*)(const void*)w), as), vcvtq_f32_s32(t0)));
    res1 = vaddq_f32(res1, vmulq_f32(vmulq_f32(vld1q_f32((const float*)(const void*)(w + 16)), as),
                                     vcvtq_f32_s32(t1)));
    w += 64 + (p->has_zeros ? 32 : 0);
  }
  /* a sum or zero point past 2^14 (the int32 lanes may have wrapped): the
   * tile again in int64 */
  if (vmaxvq_u32(top) > 2 * LIM) {
    pc_lowbit_tile_generic(pc_lowbit_dot__neondot, p, w0, row, out);
    return;
  }
  if (p->has_bias) {
    res0 = vaddq_f32(res0, vld1q_f32((const float*)(const void*)w));
    res1 = vaddq_f32(res1, vld1q_f32((const float*)(const void*)(w + 16)));
  }
  vst1q_f32(out, res0);
  vst1q_f32(out + 4, res1);
}

/* The activation row quantizer: act.c's operations lane by lane. The
 * comparisons are act.c's (vbsl on vclt / vcgt: a NaN counts only when it
 * is x[0], where every lane starts); vfma is fmaf, vrndi (current mode)
 * nearbyintf, and the clamps come first. */
void pc_lowbit_quant__neondot(const float* x, int64_t k, int64_t gs, int8_t* qa, int64_t* asum,
                              float* scale, int32_t* zero) {
  float32x4_t lo = vdupq_n_f32(x[0]), hi = lo, inv, zf;
  const float32x4_t qmin = vdupq_n_f32(-128.0f), qmax = vdupq_n_f32(127.0f);
  float l[4], h[4];
  int64_t i, g, j;
  for (i = 0; i + 4 <= k; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    lo = vbslq_f32(vcltq_f32(v, lo), v, lo);
    hi = vbslq_f32(vcgtq_f32(v, hi), v, hi);
  }
  vst1q_f32(l, lo);
  vst1q_f32(h, hi);
  pc_lowbit_act_qparams_lanes(l, h, 4, x + i, k - i, scale, zero);
  inv = vdupq_n_f32(pc_lowbit_act_inv(*scale));
  zf = vdupq_n_f32((float)*zero);
  for (i = 0; i + 8 <= k; i += 8) {
    int32x4_t q[2];
    for (j = 0; j < 2; ++j) {
      float32x4_t v = vfmaq_f32(zf, vld1q_f32(x + i + 4 * j), inv);
      v = vbslq_f32(vcgtq_f32(v, qmin), v, qmin);
      v = vbslq_f32(vcltq_f32(v, qmax), v, qmax);
      q[j] = vcvtq_s32_f32(vrndiq_f32(v));
    }
    vst1_s8(qa + i, vmovn_s16(vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]))));
  }
  if (i < k) pc_lowbit_act_quantize(x + i, k - i, pc_lowbit_act_inv(*scale), *zero, qa + i);
  for (g = 0; g < k / gs; ++g) {
    int64_t s = 0;
    for (j = 0; j < gs; j += 16) s += vaddlvq_s8(vld1q_s8(qa + g * gs + j));
    asum[g] = s;
  }
}

void pc_lowbit_tile__neondot_many(const pterun_compute_lowbit_weights* w, const uint8_t* t,
                                  const pterun_compute_lowbit_qrow* row, float* out, size_t n) {
  pc_lowbit_tiles_each(pc_lowbit_tile__neondot, w, t, row, out, n);
}

#else
typedef int pc_lowbit_neondot_unavailable; /* not an empty translation unit */
#endif
