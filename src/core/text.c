/* Text for human readers: strings from a program file (operator and method
 * names, backend ids, data keys) never reach a terminal raw. */
#include <string.h>

#include "src/core/internal.h"

/* Length of the well-formed, printable UTF-8 sequence at s (n bytes left),
 * or 0 when s[0] must be escaped: a C0 control or DEL, a C1 control
 * (U+0080..U+009F, which terminals may obey), or invalid UTF-8 (overlong,
 * surrogate, beyond U+10FFFF, truncated). */
static size_t printable_seq(const unsigned char* s, size_t n) {
  unsigned c = s[0];
  if (c >= 0x20 && c < 0x7f) return 1;
  if (c < 0xc2 || c > 0xf4) return 0;
  size_t len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  if (n < len) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((s[k] & 0xc0) != 0x80) return 0;
  if (len == 2 && c == 0xc2 && s[1] < 0xa0) return 0;  /* C1 controls */
  if (len == 3 && c == 0xe0 && s[1] < 0xa0) return 0;  /* overlong */
  if (len == 3 && c == 0xed && s[1] >= 0xa0) return 0; /* surrogates */
  if (len == 4 && c == 0xf0 && s[1] < 0x90) return 0;  /* overlong */
  if (len == 4 && c == 0xf4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
  return len;
}

const char* pt_name_in(const char* names, unsigned index) {
  for (; *names != '\0'; names += strlen(names) + 1)
    if (index-- == 0) return names;
  return NULL;
}

size_t pt_escape(const char* text, size_t len, char* out, size_t cap, bool keep_newlines) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char* s = (const unsigned char*)text;
  size_t need = 0, i = 0;
  bool fits = cap > 0;
  if (cap > 0) out[0] = 0;
  while (i < len) {
    size_t k = printable_seq(s + i, len - i);
    if (k == 0 && keep_newlines && s[i] == '\n') k = 1;
    char esc[4];
    const char* piece = (const char*)s + i;
    size_t plen = k;
    if (k == 0) {
      esc[0] = '\\';
      esc[1] = 'x';
      esc[2] = hex[s[i] >> 4];
      esc[3] = hex[s[i] & 15];
      piece = esc;
      plen = 4;
      k = 1;
    }
    /* Whole characters and escapes only: a cut never splits one. */
    if (fits && need + plen < cap) {
      memcpy(out + need, piece, plen);
      out[need + plen] = 0;
    } else {
      fits = false;
    }
    need += plen;
    i += k;
  }
  return need;
}

size_t pterun_escape_text(const char* text, char* out, size_t cap) {
  if (text == NULL) text = "";
  if (out == NULL) cap = 0;
  return pt_escape(text, strlen(text), out, cap, false);
}

const char* pt_esc(const char* text, char* buf, size_t cap) {
  pterun_escape_text(text, buf, cap);
  return buf;
}
