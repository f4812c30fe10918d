/* Streaming JSON writer. Strings come from untrusted programs, so every byte
 * is escaped or validated as UTF-8. */
#include "cli/json.h"

#include <math.h>
#include <string.h>

void cli_json_init(cli_json* j, FILE* f) {
  memset(j, 0, sizeof *j);
  j->f = f;
}

static void indent(cli_json* j) {
  int k;
  fputc('\n', j->f);
  for (k = 0; k < j->depth; ++k) fputs("  ", j->f);
}

/* Item counter of nesting level `depth` (deeper levels share the last slot;
 * the CLI never nests that deep). */
static int* level(cli_json* j, int depth) {
  return &j->count[depth < CLI_JSON_MAX_DEPTH ? depth : CLI_JSON_MAX_DEPTH - 1];
}

/* Separator and indentation before a value or key. */
static void before_item(cli_json* j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth > 0) {
    int* n = level(j, j->depth - 1);
    if (*n > 0) fputc(',', j->f);
    ++*n;
    indent(j);
  }
}

static void begin(cli_json* j, char c) {
  before_item(j);
  fputc(c, j->f);
  *level(j, j->depth) = 0;
  j->depth++;
}

static void end(cli_json* j, char c) {
  int had = j->depth > 0 && *level(j, j->depth - 1) > 0;
  if (j->depth > 0) j->depth--;
  if (had) indent(j);
  fputc(c, j->f);
}

void cli_json_begin_object(cli_json* j) {
  begin(j, '{');
}
void cli_json_end_object(cli_json* j) {
  end(j, '}');
}
void cli_json_begin_array(cli_json* j) {
  begin(j, '[');
}
void cli_json_end_array(cli_json* j) {
  end(j, ']');
}

/* Length of a valid UTF-8 sequence at s (no overlongs, no surrogates, <=
 * U+10FFFF), or 0. */
static int utf8_len(const unsigned char* s) {
  unsigned char c = s[0];
  if (c >= 0xc2 && c <= 0xdf) return (s[1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && s[1] < 0xa0) return 0;
    if (c == 0xed && s[1] >= 0xa0) return 0;
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80) return 0;
    if (c == 0xf0 && s[1] < 0x90) return 0;
    if (c == 0xf4 && s[1] >= 0x90) return 0;
    return 4;
  }
  return 0;
}

/* n bytes of str; str[n] must be readable and NUL (utf8_len's look-ahead
 * stops at it). */
static void write_string_n(FILE* f, const char* str, size_t n) {
  const unsigned char* s = (const unsigned char*)str;
  const unsigned char* e = s + n;
  fputc('"', f);
  while (s < e) {
    unsigned char c = *s;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc(c, f);
      ++s;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default: fprintf(f, "\\u%04x", c); break;
      }
      ++s;
    } else if (c < 0x80) {
      fputc(c, f);
      ++s;
    } else {
      /* the NUL terminator stops utf8_len's continuation checks in time */
      int k = utf8_len(s);
      if (k == 0 || k > e - s) {
        fputs("\\ufffd", f);
        ++s;
      } else {
        fwrite(s, 1, (size_t)k, f);
        s += k;
      }
    }
  }
  fputc('"', f);
}

static void write_string(FILE* f, const char* str) {
  write_string_n(f, str, strlen(str));
}

void cli_json_key(cli_json* j, const char* key) {
  before_item(j);
  write_string(j->f, key ? key : "");
  fputs(": ", j->f);
  j->after_key = 1;
}

void cli_json_string(cli_json* j, const char* s) {
  before_item(j);
  if (s == NULL)
    fputs("null", j->f);
  else
    write_string(j->f, s);
}

void cli_json_string_n(cli_json* j, const char* s, size_t n) {
  before_item(j);
  write_string_n(j->f, s, n);
}

void cli_json_int(cli_json* j, int64_t v) {
  before_item(j);
  fprintf(j->f, "%lld", (long long)v);
}

void cli_json_uint(cli_json* j, uint64_t v) {
  before_item(j);
  fprintf(j->f, "%llu", (unsigned long long)v);
}

void cli_json_double(cli_json* j, double v) {
  before_item(j);
  if (isnan(v) || isinf(v))
    fputs("null", j->f);
  else
    fprintf(j->f, "%.17g", v);
}

void cli_json_bool(cli_json* j, int v) {
  before_item(j);
  fputs(v ? "true" : "false", j->f);
}

void cli_json_null(cli_json* j) {
  before_item(j);
  fputs("null", j->f);
}

void cli_json_finish(cli_json* j) {
  fputc('\n', j->f);
}
