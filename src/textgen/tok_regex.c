/* The tokenizers' split regexes (GPT-2, Llama 3, Qwen patterns) on PCRE2:
 * Unicode properties (\p{L}, \p{N}), look-ahead and case-insensitive groups,
 * as Oniguruma (`tokenizers`) and fancy-regex (tiktoken) give them. Without
 * PCRE2 in the build every pattern is refused with NOT_SUPPORTED. */
#include <stdlib.h>

#include "src/textgen/tok_internal.h"

#ifdef PTERUN_HAVE_PCRE2
#include <pcre2.h>

struct tok_regex {
  pcre2_code* code;
};

pterun_status tok_regex_compile(pterun_tokenizer* t, const char* pattern, size_t len,
                                tok_regex** out) {
  int err;
  PCRE2_SIZE at;
  tok_regex* re = (tok_regex*)calloc(1, sizeof *re);
  *out = NULL;
  if (re == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  re->code = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_UCP, &err, &at, NULL);
  if (re->code == NULL) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    free(re);
    return tok_fail(t, PTERUN_STATUS_INVALID_DATA, "split regex does not compile at offset %zu: %s",
                    (size_t)at, (const char*)msg);
  }
  /* JIT when the platform has it; the interpreter gives the same matches. */
  (void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
  *out = re;
  return PTERUN_STATUS_OK;
}

void tok_regex_free(tok_regex* re) {
  if (re == NULL) return;
  pcre2_code_free(re->code);
  free(re);
}

int tok_regex_split(const tok_regex* re, const char* s, size_t n, tok_split_fn fn, void* user) {
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(re->code, NULL);
  size_t pos = 0, last = 0;
  int rc = 0;
  if (md == NULL) return -1;
  while (pos <= n) {
    PCRE2_SIZE* ov;
    size_t a, b;
    /* The text was checked as UTF-8 by the caller. */
    int m = pcre2_match(re->code, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK, md, NULL);
    if (m == PCRE2_ERROR_NOMATCH) break;
    if (m < 0) {
      rc = -1;
      break;
    }
    ov = pcre2_get_ovector_pointer(md);
    a = ov[0];
    b = ov[1];
    if (b == a) { /* an empty match: not a piece; step one character */
      size_t step = 1;
      while (a + step < n && ((unsigned char)s[a + step] & 0xC0) == 0x80) ++step;
      pos = a + step;
      continue;
    }
    if (a > last && fn(user, last, a, 0) != 0) {
      rc = -1;
      break;
    }
    if (fn(user, a, b, 1) != 0) {
      rc = -1;
      break;
    }
    last = pos = b;
  }
  if (rc == 0 && last < n && fn(user, last, n, 0) != 0) rc = -1;
  pcre2_match_data_free(md);
  return rc;
}

#else /* !PTERUN_HAVE_PCRE2 */

pterun_status tok_regex_compile(pterun_tokenizer* t, const char* pattern, size_t len,
                                tok_regex** out) {
  (void)pattern;
  (void)len;
  *out = NULL;
  return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                  "this libpterun_textgen was built without PCRE2: split regexes are unavailable");
}

void tok_regex_free(tok_regex* re) {
  (void)re;
}

int tok_regex_split(const tok_regex* re, const char* s, size_t n, tok_split_fn fn, void* user) {
  (void)re;
  (void)s;
  (void)n;
  (void)fn;
  (void)user;
  return -1;
}
#endif
