/* Force-included (-include) into each microkernel source that a test build
 * with -DPTERUN_EMULATE_ISA=... compiles without its AVX-512 flags
 * (src/compute/isa.cmake, docs/robustness.md "Every SIMD variant executed").
 * The source keeps its intrinsics; SIMDe's native aliases turn each _mm512_*
 * call into SIMDe's portable implementation (two native 256-bit AVX2/FMA
 * operations where SIMDe has them, lane loops otherwise), so the same source
 * runs on a CPU without AVX-512. Test builds only: never in a release.
 *
 * Order matters: GCC's <immintrin.h> first (it declares every intrinsic,
 * under target pragmas, and its include guard makes the source's own
 * #include a no-op), then SIMDe, whose aliases are macros that shadow those
 * declarations; last the feature macros the source's #if tests. */
#ifndef PTERUN_TESTS_EMULATE_SIMDE_ISA_H_
#define PTERUN_TESTS_EMULATE_SIMDE_ISA_H_

#if defined(__AVX512F__)
#error "an emulated microkernel must be compiled without -mavx512f"
#endif
#if !defined(__AVX2__) || !defined(__FMA__)
/* SIMDe's portable _mm*_fmadd_ps is a multiply then an add (two roundings):
 * only native FMA gives the fused result the native kernel computes. */
#error "emulated AVX-512 needs native AVX2 and FMA (-mavx2 -mfma)"
#endif

#include <immintrin.h>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

/* SIMDe 0.7.4 defines this alias with the masked form's four parameters. */
#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16((a), (b))

/* Conversions SIMDe 0.7.4 (Debian 12) lacks: lane loops with the
 * instructions' semantics under the default rounding mode. Newer SIMDe
 * defines the aliases, and then its own versions are used. */
#include <stdint.h>
#include <string.h>
#if !defined(_mm512_cvtepi32_ps)
static inline simde__m512 pt_emu_mm512_cvtepi32_ps(simde__m512i a) {
  int32_t v[16];
  float r[16];
  simde__m512 out;
  memcpy(v, &a, sizeof v);
  for (int i = 0; i < 16; ++i) r[i] = (float)v[i]; /* round to nearest even, like vcvtdq2ps */
  memcpy(&out, r, sizeof out);
  return out;
}
#define _mm512_cvtepi32_ps(a) pt_emu_mm512_cvtepi32_ps(a)
#endif
#if !defined(_mm512_cvttps_epi32)
static inline simde__m512i pt_emu_mm512_cvttps_epi32(simde__m512 a) {
  float v[16];
  int32_t r[16];
  simde__m512i out;
  memcpy(v, &a, sizeof v);
  /* Truncation; NaN and out-of-range lanes give INT32_MIN, as vcvttps2dq does. */
  for (int i = 0; i < 16; ++i)
    r[i] = (v[i] >= -2147483648.0f && v[i] < 2147483648.0f) ? (int32_t)v[i] : INT32_MIN;
  memcpy(&out, r, sizeof out);
  return out;
}
#define _mm512_cvttps_epi32(a) pt_emu_mm512_cvttps_epi32(a)
#endif
#if !defined(_mm512_cvtepu8_epi16)
/* vpmovzxbw: 32 bytes zero-extended to 16-bit lanes. */
static inline simde__m512i pt_emu_mm512_cvtepu8_epi16(simde__m256i a) {
  uint8_t v[32];
  int16_t r[32];
  simde__m512i out;
  memcpy(v, &a, sizeof v);
  for (int i = 0; i < 32; ++i) r[i] = (int16_t)v[i];
  memcpy(&out, r, sizeof out);
  return out;
}
#define _mm512_cvtepu8_epi16(a) pt_emu_mm512_cvtepu8_epi16(a)
#endif
#if !defined(_mm512_cvtepu16_epi32)
/* vpmovzxwd: 16 16-bit values zero-extended to 32-bit lanes. */
static inline simde__m512i pt_emu_mm512_cvtepu16_epi32(simde__m256i a) {
  uint16_t v[16];
  int32_t r[16];
  simde__m512i out;
  memcpy(v, &a, sizeof v);
  for (int i = 0; i < 16; ++i) r[i] = (int32_t)v[i];
  memcpy(&out, r, sizeof out);
  return out;
}
#define _mm512_cvtepu16_epi32(a) pt_emu_mm512_cvtepu16_epi32(a)
#endif
#if !defined(_mm512_cvtepi32_epi8)
static inline simde__m128i pt_emu_mm512_cvtepi32_epi8(simde__m512i a) {
  int32_t v[16];
  uint8_t r[16];
  simde__m128i out;
  memcpy(v, &a, sizeof v);
  for (int i = 0; i < 16; ++i) r[i] = (uint8_t)((uint32_t)v[i] & 0xffu); /* vpmovdb truncates */
  memcpy(&out, r, sizeof out);
  return out;
}
#define _mm512_cvtepi32_epi8(a) pt_emu_mm512_cvtepi32_epi8(a)
#endif
#if !defined(_mm512_mask_storeu_epi8)
static inline void pt_emu_mm512_mask_storeu_epi8(void* p, uint64_t k, simde__m512i a) {
  uint8_t v[64];
  memcpy(v, &a, sizeof v);
  /* vmovdqu8 with a mask writes the selected bytes only (no others touched) */
  for (int i = 0; i < 64; ++i)
    if ((k >> i) & 1u) ((uint8_t*)p)[i] = v[i];
}
#define _mm512_mask_storeu_epi8(p, k, a) pt_emu_mm512_mask_storeu_epi8((p), (uint64_t)(k), (a))
#endif

/* What the emulation provides, for the sources' feature tests. */
#if defined(PTERUN_EMULATE_AVX512F)
#define __AVX512F__ 1
#endif
#if defined(PTERUN_EMULATE_AVX512BW)
#define __AVX512BW__ 1
#endif
#if defined(PTERUN_EMULATE_AVX512VNNI)
#define __AVX512VNNI__ 1
#endif

#endif
