/* pterun: float16 and bfloat16 conversions, header-only (static inline),
 * with one rounding and NaN policy for the runtime and every kernel library
 * (pterun/kernel_util.h includes this header). */
#ifndef PTERUN_INCLUDE_PTERUN_HALF_H_
#define PTERUN_INCLUDE_PTERUN_HALF_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- half and bfloat16 ------------------------------------------------------
 * Conversions round to nearest, ties to even, as ATen does. NaN policy (what
 * eager PyTorch produces on x86 with F16C and on AArch64, and what the
 * hardware converters do, so a vectorised path agrees with this one):
 *  - float -> half keeps the sign and the top 10 payload bits and sets the
 *    quiet bit: sign | 0x7E00 | payload >> 13;
 *  - float -> bfloat16 gives the canonical quiet NaN 0x7FC0 (c10::BFloat16's
 *    round_to_nearest_even);
 *  - widening to float is exact and keeps every bit (payloads included). */

/** IEEE binary16 bits to float (exact). */
static inline float pterun_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (uint32_t)(h >> 10) & 0x1fu;
  uint32_t m = (uint32_t)h & 0x3ffu;
  uint32_t u;
  float f;
  if (e == 0) {
    /* zero or subnormal: m * 2^-24 is exact in float */
    f = (float)m * 5.9604644775390625e-08f;
    memcpy(&u, &f, 4);
    u |= sign;
  } else if (e == 31) {
    u = sign | 0x7f800000u | (m << 13); /* inf or NaN, payload kept */
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  memcpy(&f, &u, 4);
  return f;
}

/** float to IEEE binary16 bits, round to nearest even (overflow gives inf). */
static inline uint16_t pterun_f32_to_f16(float f) {
  uint32_t u, a, sign;
  memcpy(&u, &f, 4);
  sign = (u >> 16) & 0x8000u;
  a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
  if (a < 0x38800000u) {
    /* half subnormal or zero: a * 2^24 is exact in float up to the rounding
     * that the conversion to an integer does (ties to even, exact below 2^24) */
    float af;
    uint32_t q;
    memcpy(&af, &a, 4);
    af *= 16777216.0f;
    q = (uint32_t)af;
    af -= (float)q; /* the dropped fraction, exact */
    if (af > 0.5f || (af == 0.5f && (q & 1u))) ++q;
    return (uint16_t)(sign | q);
  }
  /* normal: rebias the exponent and round the 13 dropped bits to even */
  return (uint16_t)(sign | ((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13));
}

/** bfloat16 bits to float (exact). */
static inline float pterun_bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/** float to bfloat16 bits, round to nearest even; NaN gives 0x7FC0. */
static inline uint16_t pterun_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_HALF_H_ */
