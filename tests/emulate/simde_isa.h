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
