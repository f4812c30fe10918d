/* CPU feature detection for SIMD dispatch (see include/pterun/cpu.h).
 *
 * The features are computed once and cached in an atomic word whose top bit
 * marks it valid. Two threads racing through the first call both compute the
 * same value and store it; there is nothing else to initialise, so no lock is
 * needed. */
/* C standard */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strncasecmp (POSIX) */

/* pterun public */
#include "pterun/cpu.h"
#include "pterun/log.h"
#include "src/core/internal.h"

/* OS */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PT_CPU_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define PT_CPU_ARM64_LINUX 1
#endif

#define PT_CPU_VALID ((uint64_t)1 << 63)

#define PT_CPU_CHECK_(name, bit, text)                                                             \
  _Static_assert(PTERUN_CPU_##name == (uint64_t)1 << (bit), "bit of " #name);                      \
  _Static_assert((bit) < 63, "bit 63 is the cache's valid flag");
PTERUN_CPU_FEATURE_LIST(PT_CPU_CHECK_)
#undef PT_CPU_CHECK_

#if defined(PT_CPU_X86)
static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  // Encoded xgetbv so that no -mxsave is needed; only called when OSXSAVE is set.
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static uint64_t detect(void) {
  unsigned a, b, c, d, max_leaf;
  uint64_t f = 0, xcr0 = 0;
  int ymm_ok, zmm_ok;
  if (!__get_cpuid(0, &max_leaf, &b, &c, &d)) return 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (c & (1u << 19)) f |= PTERUN_CPU_X86_SSE4_1;
  if (c & (1u << 27)) xcr0 = xgetbv0();     /* OSXSAVE */
  ymm_ok = (xcr0 & 0x6) == 0x6;             /* XMM and YMM state */
  zmm_ok = ymm_ok && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM0-15 high, ZMM16-31 */
  if (ymm_ok) {
    if (c & (1u << 28)) f |= PTERUN_CPU_X86_AVX;
    if (c & (1u << 12)) f |= PTERUN_CPU_X86_FMA;
    if (c & (1u << 29)) f |= PTERUN_CPU_X86_F16C;
  }
  if (max_leaf >= 7) {
    unsigned b7, c7, d7, a71 = 0, b71, c71, d71;
    __cpuid_count(7, 0, a, b7, c7, d7);
    __cpuid_count(7, 1, a71, b71, c71, d71);
    (void)d7;
    (void)b71;
    (void)c71;
    (void)d71;
    if (ymm_ok) {
      if (b7 & (1u << 5)) f |= PTERUN_CPU_X86_AVX2;
      if (a71 & (1u << 4)) f |= PTERUN_CPU_X86_AVXVNNI;
    }
    if (zmm_ok && (b7 & (1u << 16))) {
      f |= PTERUN_CPU_X86_AVX512F;
      if (b7 & (1u << 30)) f |= PTERUN_CPU_X86_AVX512BW;
      if (b7 & (1u << 17)) f |= PTERUN_CPU_X86_AVX512DQ;
      if (b7 & (1u << 31)) f |= PTERUN_CPU_X86_AVX512VL;
      if (c7 & (1u << 11)) f |= PTERUN_CPU_X86_AVX512VNNI;
      if (a71 & (1u << 5)) f |= PTERUN_CPU_X86_AVX512BF16;
    }
  }
  // AVX without the features kernels pair it with is treated as absent.
  if (!(f & PTERUN_CPU_X86_AVX))
    f &= ~(PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA | PTERUN_CPU_X86_F16C);
  return f;
}
#elif defined(PT_CPU_ARM64_LINUX)
static uint64_t detect(void) {
  unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  uint64_t f = PTERUN_CPU_ARM_NEON;                  /* baseline on AArch64 */
  if (hw & (1ul << 20)) f |= PTERUN_CPU_ARM_DOTPROD; /* HWCAP_ASIMDDP */
  if (hw & (1ul << 10)) f |= PTERUN_CPU_ARM_FP16;    /* HWCAP_ASIMDHP */
  if (hw2 & (1ul << 13)) f |= PTERUN_CPU_ARM_I8MM;   /* HWCAP2_I8MM */
  return f;
}
#else
static uint64_t detect(void) {
  return 0;
}
#endif

#ifdef PTERUN_BARE_METAL
/* One thread and no 64-bit atomics on a 32-bit core (no libatomic): plain
 * words. */
typedef uint64_t pt_cpu_word;
#define PT_CPU_LOAD(p) (*(p))
#define PT_CPU_STORE(p, v) (*(p) = (v))
static uint64_t pt_cpu_exchange(uint64_t* p, uint64_t v) {
  uint64_t old = *p;
  *p = v;
  return old;
}
#define PT_CPU_EXCHANGE(p, v) pt_cpu_exchange((p), (v))
#else
typedef _Atomic uint64_t pt_cpu_word;
#define PT_CPU_LOAD(p) atomic_load_explicit((p), memory_order_acquire)
#define PT_CPU_STORE(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define PT_CPU_EXCHANGE(p, v) atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#endif
static pt_cpu_word g_detected;
static pt_cpu_word g_features;

/* A test build with -DPTERUN_EMULATE_ISA=... (src/compute/isa.cmake) compiles
 * those ISAs' microkernels against a portable emulation and reports the ISAs
 * present whatever the CPU has, so that the dispatcher and the kernel tests
 * run them. Never defined in a release build. */
#ifndef PTERUN_EMULATED_FEATURES
#define PTERUN_EMULATED_FEATURES ((uint64_t)0)
#endif

uint64_t pterun_cpu_detected_features(void) {
  uint64_t v = PT_CPU_LOAD(&g_detected);
  if (!(v & PT_CPU_VALID)) {
    v = detect() | PTERUN_EMULATED_FEATURES | PT_CPU_VALID;
    PT_CPU_STORE(&g_detected, v);
  }
  return v & ~PT_CPU_VALID;
}

/* ---- PTERUN_ISA and PTERUN_ISA_MASK ---------------------------------------------
 * Both narrow the detected features (ANDed when both are set). Parsing is a
 * pure function of the two strings, so pterun_cpu_features() (which applies
 * them) and pterun_cpu_report_env() (which words what was wrong) need no
 * shared buffer between threads. */

/* The features a named one builds on: naming "avx2" keeps AVX2 and the AVX
 * and SSE4.1 it needs, so PTERUN_ISA=avx2,fma selects the AVX2 kernels
 * (their rows require AVX, AVX2 and FMA). */
static uint64_t with_prerequisites(uint64_t f) {
  static const struct {
    uint64_t feature, needs;
  } k_needs[] = {
      {PTERUN_CPU_X86_AVX, PTERUN_CPU_X86_SSE4_1},
      {PTERUN_CPU_X86_AVX2, PTERUN_CPU_X86_AVX},
      {PTERUN_CPU_X86_FMA, PTERUN_CPU_X86_AVX},
      {PTERUN_CPU_X86_F16C, PTERUN_CPU_X86_AVX},
      {PTERUN_CPU_X86_AVXVNNI, PTERUN_CPU_X86_AVX2},
      {PTERUN_CPU_X86_AVX512F, PTERUN_CPU_X86_AVX2 | PTERUN_CPU_X86_FMA | PTERUN_CPU_X86_F16C},
      {PTERUN_CPU_X86_AVX512BW, PTERUN_CPU_X86_AVX512F},
      {PTERUN_CPU_X86_AVX512DQ, PTERUN_CPU_X86_AVX512F},
      {PTERUN_CPU_X86_AVX512VL, PTERUN_CPU_X86_AVX512F},
      {PTERUN_CPU_X86_AVX512VNNI, PTERUN_CPU_X86_AVX512F},
      {PTERUN_CPU_X86_AVX512BF16, PTERUN_CPU_X86_AVX512BW},
      {PTERUN_CPU_ARM_DOTPROD, PTERUN_CPU_ARM_NEON},
      {PTERUN_CPU_ARM_FP16, PTERUN_CPU_ARM_NEON},
      {PTERUN_CPU_ARM_I8MM, PTERUN_CPU_ARM_NEON},
  };
  uint64_t prev;
  do { /* to a fixed point: the table is short and the chains shallow */
    size_t i;
    prev = f;
    for (i = 0; i < sizeof k_needs / sizeof k_needs[0]; ++i)
      if (f & k_needs[i].feature) f |= k_needs[i].needs;
  } while (f != prev);
  return f;
}

/* Appends one complaint to msg (NULL: none kept), "; " between complaints. */
static void complain(char* msg, size_t size, const char* fmt, const char* a, size_t alen) {
  size_t used;
  if (msg == NULL || size == 0) return;
  used = strlen(msg);
  if (used > 0 && used + 2 < size) memcpy(msg + used, "; ", 3), used += 2;
  if (used + 1 < size) snprintf(msg + used, size - used, fmt, (int)alen, a);
}

static int is_space(char c) {
  return c == ' ' || c == '\t';
}

/* PTERUN_ISA: feature names (cpu.h's display names, any case) separated by
 * commas, or "none". Returns the features to keep; an unknown or empty name
 * is left out and reported, the others still apply. */
static uint64_t parse_names(const char* s, char* msg, size_t size) {
  uint64_t keep = 0;
  while (1) {
    const char* end = s;
    size_t n;
    while (*end != '\0' && *end != ',') ++end;
    while (s < end && is_space(*s)) ++s;
    n = (size_t)(end - s);
    while (n > 0 && is_space(s[n - 1])) --n;
    if (n == 0) {
      complain(msg, size, "PTERUN_ISA: an empty feature name%.*s (a stray comma?)", "", 0);
    } else if (n == 4 && strncasecmp(s, "none", 4) == 0) {
      /* nothing to add */
    } else {
      uint64_t bit = 0;
      int b;
      for (b = 0; b < 63 && bit == 0; ++b) {
        const char* name = pterun_cpu_feature_name((uint64_t)1 << b);
        if (name != NULL && strlen(name) == n && strncasecmp(s, name, n) == 0)
          bit = (uint64_t)1 << b;
      }
      if (bit == 0)
        complain(msg, size, "PTERUN_ISA: unknown feature '%.*s' left out", s, n < 40 ? n : 40);
      keep |= with_prerequisites(bit);
    }
    if (*end == '\0') break;
    s = end + 1;
  }
  return keep;
}

/* PTERUN_ISA_MASK: hex, optional 0x, nothing else; *ok = 0 when malformed. */
static uint64_t parse_mask(const char* s, int* ok) {
  char* end = NULL;
  unsigned long long v;
  *ok = 0;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
  if (*s == '\0' || *s == '-' || *s == '+' || is_space(*s)) return 0;
  errno = 0;
  v = strtoull(s, &end, 16);
  if (end == NULL || *end != '\0' || errno == ERANGE) return 0;
  *ok = 1;
  return (uint64_t)v;
}

/* The features the environment keeps (all: ~0), and what could not be used
 * in msg (when not NULL; "" when everything parsed). Unset or empty
 * variables keep everything. */
static uint64_t env_keep(char* msg, size_t size) {
  const char* isa = getenv("PTERUN_ISA");
  const char* mask = getenv("PTERUN_ISA_MASK");
  uint64_t keep = ~(uint64_t)0;
  if (msg != NULL && size > 0) msg[0] = '\0';
  if (isa != NULL && *isa != '\0') keep &= parse_names(isa, msg, size);
  if (mask != NULL && *mask != '\0') {
    int ok;
    uint64_t m = parse_mask(mask, &ok);
    if (ok)
      keep &= m;
    else
      complain(msg, size, "PTERUN_ISA_MASK='%.*s' is not a hex mask (such as 0x81f): ignored", mask,
               strlen(mask) < 40 ? strlen(mask) : 40);
  }
  return keep;
}

uint64_t pterun_cpu_features(void) {
  uint64_t v = PT_CPU_LOAD(&g_features);
  if (!(v & PT_CPU_VALID)) {
    v = (pterun_cpu_detected_features() & env_keep(NULL, 0)) | PT_CPU_VALID;
    PT_CPU_STORE(&g_features, v);
  }
  return v & ~PT_CPU_VALID;
}

static pt_cpu_word g_env_reported;

int pterun_cpu_report_env(const pterun_logger* logger) {
  char msg[400], known[160], in_use[160];
  uint64_t all = 0;
  /* A logger that drops warnings does not use up the one report (as
   * pt_vlog: a zero logger takes WARNING and above). */
  pterun_log_level min = PTERUN_LOG_WARNING;
  if (logger != NULL && (logger->fn != NULL || logger->min_level != 0)) min = logger->min_level;
  if (min > PTERUN_LOG_WARNING) return 0;
  env_keep(msg, sizeof msg);
  if (msg[0] == '\0' || PT_CPU_EXCHANGE(&g_env_reported, 1) != 0) return 0;
#define PT_CPU_ALL_(name, bit, text) all |= PTERUN_CPU_##name;
  PTERUN_CPU_FEATURE_LIST(PT_CPU_ALL_)
#undef PT_CPU_ALL_
  pterun_cpu_features_string(all, known, sizeof known);
  pterun_cpu_features_string(pterun_cpu_features(), in_use, sizeof in_use);
  pterun_log(logger, PTERUN_LOG_WARNING, "%s (feature names: %s, none; in use: %s)", msg, known,
             in_use);
  return 1;
}

const char* pterun_cpu_feature_name(uint64_t feature) {
  /* Entry i of the packed names is the feature of bit kBits[i]. */
#define PT_CPU_BIT_(name, bit, text) bit,
#define PT_CPU_TEXT_(name, bit, text) text "\0"
  static const unsigned char kBits[] = {PTERUN_CPU_FEATURE_LIST(PT_CPU_BIT_)};
  for (unsigned i = 0; i < sizeof kBits; ++i)
    if (feature == (uint64_t)1 << kBits[i])
      return pt_name_in(PTERUN_CPU_FEATURE_LIST(PT_CPU_TEXT_), i);
#undef PT_CPU_BIT_
#undef PT_CPU_TEXT_
  return NULL;
}

size_t pterun_cpu_features_string(uint64_t features, char* buf, size_t size) {
  size_t need = 0;
  int bit;
  if (size > 0 && buf != NULL) buf[0] = '\0';
  for (bit = 0; bit < 64; ++bit) {
    const char* name = pterun_cpu_feature_name((uint64_t)1 << bit);
    if (!(features & ((uint64_t)1 << bit)) || name == NULL) continue;
    if (need > 0) {
      if (buf != NULL && need + 1 < size) buf[need] = ' ', buf[need + 1] = '\0';
      need += 1;
    }
    for (; *name; ++name, ++need)
      if (buf != NULL && need + 1 < size) buf[need] = *name, buf[need + 1] = '\0';
  }
  if (need == 0) {
    const char* none = "none";
    for (; *none; ++none, ++need)
      if (buf != NULL && need + 1 < size) buf[need] = *none, buf[need + 1] = '\0';
  }
  return need;
}
