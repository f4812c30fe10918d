/* Tokenizers against their reference libraries: every line of
 * tests/fixtures/tokenizers/expected.txt (written by
 * tools/export_tokenizers.py with tokenizers, tiktoken, sentencepiece) is one
 * case: a corpus text's ids, or an id sequence's decoded text. Every decode
 * is also streamed one token at a time (the pieces must equal the whole
 * decode), and every encoded text is decoded through the stream too.
 *
 * usage: test_tokenizer FIXTURE_DIR [FILE...]   (FILE: only these files) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/tokenizer.h"
#include "tests/harness/pt_test.h"

#define MAX_IDS 4096
#define MAX_TEXT 65536

typedef struct loaded {
  char name[128];
  pterun_tokenizer* tok;
} loaded;

static loaded g_tok[16];
static size_t g_ntok;
static const char* g_dir;

static pterun_tokenizer* get_tok(const char* name) {
  size_t k;
  char path[1024];
  for (k = 0; k < g_ntok; ++k)
    if (strcmp(g_tok[k].name, name) == 0) return g_tok[k].tok;
  if (g_ntok == sizeof g_tok / sizeof g_tok[0]) return NULL;
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  snprintf(g_tok[g_ntok].name, sizeof g_tok[g_ntok].name, "%s", name);
  if (pterun_tokenizer_load_file(path, NULL, &g_tok[g_ntok].tok) != PTERUN_STATUS_OK) {
    fprintf(stderr, "cannot load %s\n", path);
    g_tok[g_ntok].tok = NULL;
  }
  return g_tok[g_ntok++].tok;
}

static size_t unhex(const char* s, char* out, size_t cap) {
  size_t n = 0;
  if (strcmp(s, "-") == 0) return 0;
  while (s[0] && s[1] && n < cap) {
    unsigned v;
    sscanf(s, "%2x", &v);
    out[n++] = (char)v;
    s += 2;
  }
  return n;
}

static size_t parse_ids(const char* s, int64_t* ids, size_t cap) {
  size_t n = 0;
  if (strcmp(s, "-") == 0) return 0;
  while (*s && n < cap) {
    char* end;
    ids[n++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
    if (end == s && *end != '\0') break;
  }
  return n;
}

static void show_ids(const char* what, const int64_t* ids, size_t n) {
  size_t k;
  fprintf(stderr, "  %s:", what);
  for (k = 0; k < n && k < 64; ++k) fprintf(stderr, " %lld", (long long)ids[k]);
  fprintf(stderr, "%s\n", n > 64 ? " ..." : "");
}

static void show_text(const char* what, const char* s, size_t n) {
  char esc[2048];
  char tmp[1024];
  size_t k = n < sizeof tmp - 1 ? n : sizeof tmp - 1;
  memcpy(tmp, s, k);
  tmp[k] = '\0';
  pterun_escape_text(tmp, esc, sizeof esc);
  fprintf(stderr, "  %s: \"%s\"\n", what, esc);
}

/* Streams ids through a stream; compares with the whole decode. */
static int check_stream(pterun_tokenizer* tok, const int64_t* ids, size_t n, int special,
                        const char* want, size_t want_len) {
  static char got[MAX_TEXT];
  size_t len = 0, k, pl;
  const char* piece;
  pterun_tokenizer_stream* s;
  PT_CHECK_STATUS(pterun_tokenizer_stream_create(tok, special, &s), PTERUN_STATUS_OK);
  for (k = 0; k < n; ++k) {
    if (pterun_tokenizer_stream_push(s, ids[k], &piece, &pl) != PTERUN_STATUS_OK) {
      fprintf(stderr, "stream push %zu failed\n", k);
      pterun_tokenizer_stream_destroy(s);
      return 1;
    }
    if (len + pl <= sizeof got) memcpy(got + len, piece, pl);
    len += pl;
  }
  PT_CHECK_STATUS(pterun_tokenizer_stream_finish(s, &piece, &pl), PTERUN_STATUS_OK);
  if (len + pl <= sizeof got) memcpy(got + len, piece, pl);
  len += pl;
  pterun_tokenizer_stream_destroy(s);
  if (len != want_len || memcmp(got, want, len) != 0) {
    fprintf(stderr, "stream != whole decode\n");
    show_ids("ids", ids, n);
    show_text("stream", got, len);
    show_text("whole", want, want_len);
    return 1;
  }
  return 0;
}

static int run_line(char* line, const char* only, size_t n_only, char** onlys) {
  static int64_t ids[MAX_IDS], got[MAX_IDS];
  static char text[MAX_TEXT], out[MAX_TEXT];
  char *name = strtok(line, " "), *kind = strtok(NULL, " "), *a = strtok(NULL, " "),
       *b = strtok(NULL, " \n");
  pterun_tokenizer* tok;
  size_t k;
  (void)only;
  if (name == NULL || kind == NULL || a == NULL || b == NULL) return 0;
  if (n_only > 0) {
    int hit = 0;
    for (k = 0; k < n_only; ++k) hit |= strcmp(onlys[k], name) == 0;
    if (!hit) return 0;
  }
  tok = get_tok(name);
  if (tok == NULL) return 1;
  if (strcmp(kind, "encode") == 0) {
    size_t tn = unhex(a, text, sizeof text), n = parse_ids(b, ids, MAX_IDS), gn = 0, dl;
    if (pterun_tokenizer_encode(tok, text, tn, got, MAX_IDS, &gn) != PTERUN_STATUS_OK) {
      fprintf(stderr, "%s: encode failed\n", name);
      show_text("text", text, tn);
      return 1;
    }
    if (gn != n || memcmp(got, ids, n * sizeof *ids) != 0) {
      fprintf(stderr, "%s: encode differs\n", name);
      show_text("text", text, tn);
      show_ids("want", ids, n);
      show_ids("got ", got, gn);
      return 1;
    }
    PT_CHECK_STATUS(pterun_tokenizer_decode(tok, ids, n, 0, out, sizeof out, &dl),
                    PTERUN_STATUS_OK);
    return check_stream(tok, ids, n, 0, out, dl);
  }
  {
    int special = strcmp(a, "skip") == 0   ? PTERUN_TOKENIZER_SPECIAL_SKIP
                  : strcmp(a, "keep") == 0 ? PTERUN_TOKENIZER_SPECIAL_KEEP
                                           : PTERUN_TOKENIZER_SPECIAL_DEFAULT;
    char* hex = strtok(NULL, " \n");
    size_t n = parse_ids(b, ids, MAX_IDS), tn, dl;
    if (hex == NULL) return 1;
    tn = unhex(hex, text, sizeof text);
    PT_CHECK_STATUS(pterun_tokenizer_decode(tok, ids, n, special, out, sizeof out, &dl),
                    PTERUN_STATUS_OK);
    if (dl != tn || memcmp(out, text, tn) != 0) {
      fprintf(stderr, "%s: decode (%s) differs\n", name, a);
      show_ids("ids", ids, n);
      show_text("want", text, tn);
      show_text("got ", out, dl);
      return 1;
    }
    return check_stream(tok, ids, n, special, out, dl);
  }
}

int main(int argc, char** argv) {
  static char line[1 << 17];
  char path[1024];
  FILE* f;
  size_t cases = 0, failed = 0, k;
  if (argc < 2) {
    fprintf(stderr, "usage: test_tokenizer FIXTURE_DIR [FILE...]\n");
    return 2;
  }
  g_dir = argv[1];
  snprintf(path, sizeof path, "%s/expected.txt", g_dir);
  f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  while (fgets(line, sizeof line, f) != NULL) {
    char copy[sizeof line];
    memcpy(copy, line, sizeof line);
    if (line[0] == '\n' || line[0] == '#') continue;
    if (argc > 2) {
      int hit = 0;
      for (k = 2; k < (size_t)argc; ++k)
        hit |= strncmp(line, argv[k], strlen(argv[k])) == 0 && line[strlen(argv[k])] == ' ';
      if (!hit) continue;
    }
    ++cases;
    if (run_line(line, NULL, (size_t)argc - 2, argv + 2) != 0) {
      ++failed;
      if (failed < 40) fprintf(stderr, "  (case: %.150s)\n", copy);
    }
  }
  fclose(f);
  for (k = 0; k < g_ntok; ++k) pterun_tokenizer_destroy(g_tok[k].tok);
  printf("%zu cases, %zu failed\n", cases, failed);
  return failed == 0 && cases > 0 ? 0 : 1;
}
