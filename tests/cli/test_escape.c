/* Untrusted names never reach a terminal raw. pterun_escape_text() on its own,
 * then a real ExecuTorch program whose method and operator names are patched
 * (same lengths, so the flatbuffer stays valid) to hold an ANSI escape
 * sequence, a bell, and invalid UTF-8: `pterun inspect` and `pterun run`'s
 * error must print them as \xHH escapes and nothing outside printable UTF-8.
 *   test_escape PTERUN_CLI FIXTURE.pte WORKDIR */
#include <stdlib.h>
#include <string.h>

#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"

static const char* g_cli;
static const char* g_fixture;
static const char* g_work;
static char g_emu[512]; /* emulator words, each quoted, or "" */

static int escape_text_cases(void) {
  char out[64];
  PT_CHECK(pterun_escape_text("aten::add.out", out, sizeof out) == 13);
  PT_CHECK(strcmp(out, "aten::add.out") == 0);
  PT_CHECK(pterun_escape_text("a\x1b[2Jb\n", out, sizeof out) == 13);
  PT_CHECK(strcmp(out, "a\\x1b[2Jb\\x0a") == 0);
  /* well-formed UTF-8 stays; C1 controls, overlongs, surrogates, stray and
   * truncated bytes are escaped byte by byte */
  PT_CHECK(pterun_escape_text("\xc3\xa9\xe2\x80\x94", out, sizeof out) == 5);
  PT_CHECK(strcmp(out, "\xc3\xa9\xe2\x80\x94") == 0);
  pterun_escape_text("\xc2\x9b|\xc0\xaf|\xed\xa0\x80|\xff|\xe2\x80", out, sizeof out);
  PT_CHECK(strcmp(out, "\\xc2\\x9b|\\xc0\\xaf|\\xed\\xa0\\x80|\\xff|\\xe2\\x80") == 0);
  /* a cut keeps whole escapes and characters, and says how long it would be */
  PT_CHECK(pterun_escape_text("ab\x1b", out, 5) == 6);
  PT_CHECK(strcmp(out, "ab") == 0);
  PT_CHECK(pterun_escape_text("a\xc3\xa9", out, 3) == 3);
  PT_CHECK(strcmp(out, "a") == 0);
  PT_CHECK(pterun_escape_text(NULL, out, sizeof out) == 0 && out[0] == 0);
  PT_CHECK(pterun_escape_text("abc", NULL, 0) == 3);
  return 0;
}

/* 1 if s is printable UTF-8 plus newlines: no control byte, no DEL, no C1
 * control, no malformed sequence. */
static int printable_utf8(const unsigned char* s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    if (c == '\n' || (c >= 0x20 && c < 0x7f)) {
      ++i;
      continue;
    }
    size_t len = c >= 0xc2 && c < 0xe0   ? 2
                 : c >= 0xe0 && c < 0xf0 ? 3
                 : c >= 0xf0 && c < 0xf5 ? 4
                                         : 0;
    if (len == 0 || i + len > n) return 0;
    for (size_t k = 1; k < len; ++k)
      if ((s[i + k] & 0xc0) != 0x80) return 0;
    if (c == 0xc2 && s[i + 1] < 0xa0) return 0;
    i += len;
  }
  return 1;
}

static int patch(unsigned char* d, size_t n, const char* from, const char* to) {
  size_t len = strlen(from), hits = 0;
  if (strlen(to) != len) return 1;
  for (size_t i = 0; i + len <= n; ++i)
    if (memcmp(d + i, from, len) == 0) {
      memcpy(d + i, to, len);
      ++hits;
    }
  return hits == 1 ? 0 : 1;
}

/* Runs `cmd` (stderr merged), returns its output (malloc'd) and exit code. */
static unsigned char* run(const char* cmd, size_t* n, int* rc) {
  FILE* p = popen(cmd, "r");
  if (p == NULL) return NULL;
  size_t cap = 1 << 16;
  unsigned char* buf = malloc(cap + 1);
  *n = buf ? fread(buf, 1, cap, p) : 0;
  if (buf) buf[*n] = 0;
  *rc = pclose(p);
  return buf;
}

static int crafted_names_are_escaped(void) {
  FILE* f = fopen(g_fixture, "rb");
  PT_CHECK(f != NULL);
  static unsigned char d[1 << 16];
  size_t n = fread(d, 1, sizeof d, f);
  fclose(f);
  PT_CHECK(n > 0 && n < sizeof d);
  /* "forward" -> ESC [2J, 0xff, 0xfe, '!' ; "aten::add" -> ate, ESC [0m, BEL,
   * a truncated two-byte sequence */
  PT_CHECK(patch(d, n, "forward", "\x1b[2J\xff\xfe!") == 0);
  PT_CHECK(patch(d, n, "aten::add", "ate\x1b[0m\a\xc3") == 0);
  char path[1024];
  snprintf(path, sizeof path, "%s/crafted_names.pte", g_work);
  f = fopen(path, "wb");
  PT_CHECK(f != NULL && fwrite(d, 1, n, f) == n);
  fclose(f);

  const char* cmds[] = {"inspect", "inspect --json", "run"};
  const char* want_method = "\\x1b[2J\\xff\\xfe!";
  const char* want_op = "ate\\x1b[0m\\x07\\xc3.out";
  for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; ++k) {
    char cmd[3200];
    snprintf(cmd, sizeof cmd, "%s'%s' %s '%s' 2>&1", g_emu, g_cli, cmds[k], path);
    size_t len;
    int rc;
    unsigned char* out = run(cmd, &len, &rc);
    PT_CHECK(out != NULL);
    printf("--- pterun %s:\n%s", cmds[k], (const char*)out); /* printable: checked next */
    int ok = printable_utf8(out, len);
    if (strcmp(cmds[k], "inspect") == 0) {
      ok = ok && rc == 0 && strstr((char*)out, want_method) != NULL &&
           strstr((char*)out, want_op) != NULL &&
           strstr((char*)out, "missing (not implemented by any pterun component)") != NULL;
    } else if (strcmp(cmds[k], "run") == 0) {
      /* the method loads (it is the only one) and fails on its operator */
      ok = ok && rc != 0 && strstr((char*)out, want_op) != NULL &&
           strstr((char*)out, "OPERATOR_MISSING") != NULL;
    } else {
      ok = ok && rc == 0; /* JSON escapes with \u */
    }
    free(out);
    PT_CHECK(ok);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_escape PTERUN_CLI FIXTURE.pte WORKDIR [EMULATOR ARGS...]\n");
    return 2;
  }
  g_cli = argv[1];
  g_fixture = argv[2];
  g_work = argv[3];
  /* A cross build's emulator (CMAKE_CROSSCOMPILING_EMULATOR) runs the CLI too. */
  for (int i = 4; i < argc; ++i) {
    size_t used = strlen(g_emu);
    if (strchr(argv[i], '\'') != NULL || snprintf(g_emu + used, sizeof g_emu - used, "'%s' ",
                                                  argv[i]) >= (int)(sizeof g_emu - used)) {
      fprintf(stderr, "test_escape: emulator argument too long or quoted\n");
      return 2;
    }
  }
  int pt_failures = 0;
  PT_RUN(escape_text_cases);
  PT_RUN(crafted_names_are_escaped);
  return pt_failures ? 1 : 0;
}
