/* pterun: CPU features, detected once at run time for SIMD kernel dispatch.
 *
 * Kernel libraries pick a microkernel from pterun_cpu_features(): the widest
 * variant whose required bits are all set, else the scalar reference, which
 * always exists. Detection runs once per process (thread-safe) and is then a
 * single atomic load.
 *
 * Environment, read when the features are first read; both narrow the
 * detected features (ANDed when both are set). Tests and benchmarks use them
 * to exercise every path on one machine.
 *   PTERUN_ISA=<name>[,<name>...]  keeps only the named features (the display
 *     names below, any case) and those they build on (avx2 -> avx -> sse4.1;
 *     fma, f16c -> avx; avxvnni -> avx2; avx512f -> avx2, fma, f16c;
 *     avx512bw/dq/vl/vnni -> avx512f; avx512bf16 -> avx512bw; dotprod, fp16,
 *     i8mm -> neon). PTERUN_ISA=none forces every scalar path;
 *     PTERUN_ISA=avx2,fma,f16c,avxvnni drops AVX-512 only. An unknown or empty
 *     name is left out (the others apply) and reported.
 *   PTERUN_ISA_MASK=<hex> (optional 0x) is ANDed in: 0 forces every scalar
 *     path; 0x81f (bits 0-4 and 11) drops AVX-512 only; 0x1f drops AVX-512 and
 *     AVX-VNNI; 0x3f keeps AVX512F (bit 5) but drops AVX512BW/DQ/VL/VNNI/BF16
 *     and AVX-VNNI. A malformed value is ignored and reported.
 * "Reported": pterun_cpu_report_env() words it once per process; loading a
 * program calls it with the program's logger.
 */
#ifndef PTERUN_INCLUDE_PTERUN_CPU_H_
#define PTERUN_INCLUDE_PTERUN_CPU_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, bit, display name). Bits are pinned (they appear in
 * PTERUN_ISA_MASK values): never renumber or reuse one. x86 in bits 0-31,
 * Arm in bits 32-47. A bit is set only when the OS also saves the registers
 * the extension needs (XCR0 for AVX and AVX-512). */
#define PTERUN_CPU_FEATURE_LIST(X)                                                                 \
  X(X86_SSE4_1, 0, "sse4.1")                                                                       \
  X(X86_AVX, 1, "avx")                                                                             \
  X(X86_AVX2, 2, "avx2")                                                                           \
  X(X86_FMA, 3, "fma")                                                                             \
  X(X86_F16C, 4, "f16c")                                                                           \
  X(X86_AVX512F, 5, "avx512f")                                                                     \
  X(X86_AVX512BW, 6, "avx512bw")                                                                   \
  X(X86_AVX512DQ, 7, "avx512dq")                                                                   \
  X(X86_AVX512VL, 8, "avx512vl")                                                                   \
  X(X86_AVX512VNNI, 9, "avx512vnni")                                                               \
  X(X86_AVX512BF16, 10, "avx512bf16")                                                              \
  X(X86_AVXVNNI, 11, "avxvnni")                                                                    \
  X(ARM_NEON, 32, "neon")                                                                          \
  X(ARM_DOTPROD, 33, "dotprod")                                                                    \
  X(ARM_FP16, 34, "fp16")                                                                          \
  X(ARM_I8MM, 35, "i8mm")

/* One bit per feature (the list above, spelled out so the values are
 * uint64_t constants). */
#define PTERUN_CPU_X86_SSE4_1 ((uint64_t)1 << 0)
#define PTERUN_CPU_X86_AVX ((uint64_t)1 << 1)
#define PTERUN_CPU_X86_AVX2 ((uint64_t)1 << 2)
#define PTERUN_CPU_X86_FMA ((uint64_t)1 << 3)
#define PTERUN_CPU_X86_F16C ((uint64_t)1 << 4)
#define PTERUN_CPU_X86_AVX512F ((uint64_t)1 << 5)
#define PTERUN_CPU_X86_AVX512BW ((uint64_t)1 << 6)
#define PTERUN_CPU_X86_AVX512DQ ((uint64_t)1 << 7)
#define PTERUN_CPU_X86_AVX512VL ((uint64_t)1 << 8)
#define PTERUN_CPU_X86_AVX512VNNI ((uint64_t)1 << 9)
#define PTERUN_CPU_X86_AVX512BF16 ((uint64_t)1 << 10)
#define PTERUN_CPU_X86_AVXVNNI ((uint64_t)1 << 11)
#define PTERUN_CPU_ARM_NEON ((uint64_t)1 << 32)
#define PTERUN_CPU_ARM_DOTPROD ((uint64_t)1 << 33)
#define PTERUN_CPU_ARM_FP16 ((uint64_t)1 << 34)
#define PTERUN_CPU_ARM_I8MM ((uint64_t)1 << 35)

/**
 * The CPU features kernels may use: what this CPU and OS support, narrowed
 * by PTERUN_ISA and PTERUN_ISA_MASK when they are set. Detected on the first call
 * (from any thread), constant afterwards. 0 means "scalar code only".
 */
PTERUN_API uint64_t pterun_cpu_features(void);

/** What this CPU and OS support, ignoring PTERUN_ISA and PTERUN_ISA_MASK (a test build with
 * -DPTERUN_EMULATE_ISA adds the ISAs it emulates: docs/performance.md). */
PTERUN_API uint64_t pterun_cpu_detected_features(void);

/**
 * Display name of one feature bit ("avx2"), or NULL when `feature` is not
 * exactly one known bit. Static storage.
 */
PTERUN_API const char* pterun_cpu_feature_name(uint64_t feature);

/**
 * Writes the names of the bits set in `features`, space separated in bit
 * order ("avx avx2 fma"), or "none", into buf (always NUL-terminated when
 * size > 0; truncated when too small). Returns the length the full string
 * needs, excluding the NUL, like snprintf. buf may be NULL when size is 0.
 */
PTERUN_API size_t pterun_cpu_features_string(uint64_t features, char* buf, size_t size);

/**
 * When PTERUN_ISA or PTERUN_ISA_MASK holds something that could not be used
 * (an unknown feature name, a malformed mask), delivers one WARNING saying
 * what, the valid names and the features in use, through `logger` (NULL or
 * fn == NULL: stderr). Once per process: the first call with something to
 * report and a logger that takes warnings delivers it, every later call
 * nothing. Program loading calls it with the program's logger; the CLI at
 * start-up (stderr). Returns 1 when this call reported, else 0.
 */
PTERUN_API int pterun_cpu_report_env(const pterun_logger* logger);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_CPU_H_ */
