/* PTERUN_ISA and PTERUN_ISA_MASK (include/pterun/cpu.h). ctest runs this
 * once per environment (tests/core/CMakeLists.txt) with the features that
 * environment keeps and what it must report:
 *   test_cpu_env KEEP_HEX REPORT [load]
 * KEEP_HEX: pterun_cpu_features() must be the detected features & KEEP_HEX
 * (so the test holds on any CPU). REPORT: "-" when nothing may be reported,
 * else text the one warning must contain. "load": the first logger offered
 * the report is a program load's (else pterun_cpu_report_env's own). Either
 * way the warning comes exactly once, and a logger that drops warnings does
 * not use it up. Also: the mask values the docs quote mean what they say. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/cpu.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static int pt_failures;
static int g_argc;
static char** g_argv;

typedef struct capture {
  int warnings;
  char text[1024];
} capture;

static void capture_fn(void* ctx, pterun_log_level level, const char* message) {
  capture* c = ctx;
  if (level != PTERUN_LOG_WARNING || strstr(message, "PTERUN_ISA") == NULL) return;
  ++c->warnings;
  snprintf(c->text, sizeof c->text, "%s", message);
}

static int load_once(pterun_logger logger) {
  pterun_load_options o = PTERUN_LOAD_OPTIONS_INIT;
  pterun_program* p = NULL;
  o.logger = logger;
  PT_CHECK_STATUS(pterun_program_load_file(PTERUN_CORPUS_DIR "/add_constant_segment.pte",
                                           PTERUN_FILE_READ, &o, &p),
                  PTERUN_STATUS_OK);
  pterun_program_destroy(p);
  return 0;
}

static int test_features(void) {
  uint64_t keep = strtoull(g_argv[1], NULL, 16);
  uint64_t f = pterun_cpu_features(), d = pterun_cpu_detected_features();
  char s[256], w[256];
  pterun_cpu_features_string(f, s, sizeof s);
  pterun_cpu_features_string(d & keep, w, sizeof w);
  printf("in use: %s\nwanted: %s\n", s, w);
  PT_CHECK(f == (d & keep));
  PT_CHECK(pterun_cpu_features() == f); /* read once */
  return 0;
}

static int test_report_once(void) {
  const char* want = g_argv[2];
  int via_load = g_argc > 3 && strcmp(g_argv[3], "load") == 0;
  capture c = {0, ""};
  pterun_logger quiet = {capture_fn, &c, PTERUN_LOG_ERROR};
  pterun_logger l = {capture_fn, &c, PTERUN_LOG_DEBUG};
  /* A logger that drops warnings: nothing delivered, nothing used up. */
  PT_CHECK(pterun_cpu_report_env(&quiet) == 0);
  PT_CHECK(load_once(quiet) == 0);
  PT_CHECK(c.warnings == 0);
  if (via_load) {
    PT_CHECK(load_once(l) == 0);
  } else {
    PT_CHECK(pterun_cpu_report_env(&l) == (strcmp(want, "-") != 0));
  }
  /* Later offers report nothing. */
  PT_CHECK(pterun_cpu_report_env(&l) == 0);
  PT_CHECK(load_once(l) == 0);
  PT_CHECK(pterun_cpu_report_env(NULL) == 0);
  if (strcmp(want, "-") == 0) {
    PT_CHECK(c.warnings == 0);
  } else {
    printf("reported: %s\n", c.text);
    PT_CHECK(c.warnings == 1);
    PT_CHECK(strstr(c.text, want) != NULL);
    PT_CHECK(strstr(c.text, "feature names: sse4.1 avx avx2 fma") != NULL);
    PT_CHECK(strstr(c.text, "in use: ") != NULL);
  }
  return 0;
}

/* The values docs/performance.md and cpu.h quote. */
static int test_documented_masks(void) {
  const uint64_t avx512 = PTERUN_CPU_X86_AVX512F | PTERUN_CPU_X86_AVX512BW |
                          PTERUN_CPU_X86_AVX512DQ | PTERUN_CPU_X86_AVX512VL |
                          PTERUN_CPU_X86_AVX512VNNI | PTERUN_CPU_X86_AVX512BF16;
  const uint64_t x86 = avx512 | PTERUN_CPU_X86_SSE4_1 | PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2 |
                       PTERUN_CPU_X86_FMA | PTERUN_CPU_X86_F16C | PTERUN_CPU_X86_AVXVNNI;
  PT_CHECK(0x81f == (x86 & ~avx512));                          /* drops AVX-512 only */
  PT_CHECK(0x1f == (x86 & ~avx512 & ~PTERUN_CPU_X86_AVXVNNI)); /* and AVX-VNNI */
  PT_CHECK(0x3f == (0x1f | PTERUN_CPU_X86_AVX512F));           /* keeps AVX512F */
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_cpu_env KEEP_HEX REPORT|- [load]\n");
    return 2;
  }
  g_argc = argc;
  g_argv = argv;
  PT_RUN(test_features);
  PT_RUN(test_report_once);
  PT_RUN(test_documented_masks);
  return pt_failures ? 1 : 0;
}
