/* tiktoken rank files: one "base64(token bytes) rank" line per token; the id
 * of a token is its rank. Encoding as tiktoken's CoreBPE: the text is split
 * at special tokens, each other segment into the split regex's matches, and
 * each match is its rank when it is a token, else byte-pair merged (lowest
 * rank of two adjacent parts' concatenation first, leftmost on ties).
 * Special tokens get ids n_ranks + i, as pytorch_tokenizers (ExecuTorch)
 * assigns them; by default Llama 3's 256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

/* Llama 3's pattern (pytorch_tokenizers' CL100K_PAT_STR, ExecuTorch's runner). */
static const char kLlama3Pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static const char* const kLlama3Basic[] = {"<|begin_of_text|>",
                                           "<|end_of_text|>",
                                           "<|reserved_special_token_0|>",
                                           "<|reserved_special_token_1|>",
                                           "<|finetune_right_pad_id|>",
                                           "<|step_id|>",
                                           "<|start_header_id|>",
                                           "<|end_header_id|>",
                                           "<|eom_id|>",
                                           "<|eot_id|>",
                                           "<|python_tag|>",
                                           "<|image|>"};
#define LLAMA3_SPECIALS 256

static int b64(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Standard base64 with padding; -1 when malformed or longer than `cap`. */
static long b64_decode(const char* s, size_t n, unsigned char* out, size_t cap) {
  size_t i, o = 0, pad = 0;
  if (n % 4 != 0) return -1;
  for (i = 0; i < n; i += 4) {
    int v[4], k;
    for (k = 0; k < 4; ++k) {
      unsigned char c = (unsigned char)s[i + k];
      if (c == '=' && i + 4 == n && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad > 0 || (v[k] = b64(c)) < 0) return -1;
      }
    }
    if (o + 3 > cap) return -1;
    out[o++] = (unsigned char)((v[0] << 2) | (v[1] >> 4));
    out[o++] = (unsigned char)((v[1] << 4) | (v[2] >> 2));
    out[o++] = (unsigned char)((v[2] << 6) | v[3]);
  }
  if (pad == 1 && (unsigned char)s[n - 2] == '=') return -1;
  return (long)(o - pad);
}

pterun_status tok_tiktoken_load(pterun_tokenizer* t, const char* data, size_t size,
                                const pterun_tokenizer_options* o) {
  size_t pos = 0, line = 0, n_ranks = 0, k;
  unsigned char tok[TOK_MAX_TOKEN_BYTES + 3];
  const char* pat = o->pattern != NULL ? o->pattern : kLlama3Pattern;
  while (pos < size) {
    const char* s = data + pos;
    const char* nl = (const char*)memchr(s, '\n', size - pos);
    size_t len = nl != NULL ? (size_t)(nl - s) : size - pos, sp;
    unsigned long long rank = 0;
    long bytes;
    int r;
    pos += len + (nl != NULL);
    ++line;
    if (len > 0 && s[len - 1] == '\r') --len;
    if (len == 0) continue;
    for (sp = 0; sp < len && s[sp] != ' '; ++sp) {
    }
    if (sp == 0 || sp + 1 >= len)
      return tok_fail(t, PTERUN_STATUS_INVALID_DATA,
                      "tiktoken file: line %zu is not 'base64-token rank'", line);
    for (k = sp + 1; k < len; ++k) {
      if (s[k] < '0' || s[k] > '9' || rank > TOK_MAX_VOCAB)
        return tok_fail(t, PTERUN_STATUS_INVALID_DATA,
                        "tiktoken file: line %zu: bad rank (a decimal below 2^24)", line);
      rank = rank * 10 + (unsigned)(s[k] - '0');
    }
    if (rank >= TOK_MAX_VOCAB)
      return tok_fail(t, PTERUN_STATUS_INVALID_DATA, "tiktoken file: line %zu: rank too large",
                      line);
    bytes = b64_decode(s, sp, tok, sizeof tok);
    if (bytes <= 0 || (size_t)bytes > TOK_MAX_TOKEN_BYTES)
      return tok_fail(t, PTERUN_STATUS_INVALID_DATA,
                      "tiktoken file: line %zu: bad base64 token (or one longer than %d bytes)",
                      line, TOK_MAX_TOKEN_BYTES);
    r = tok_vocab_set(t, (uint32_t)rank, tok, (size_t)bytes, 0);
    if (r == -1) return PTERUN_STATUS_OUT_OF_MEMORY;
    if (r == -2)
      return tok_fail(t, PTERUN_STATUS_INVALID_DATA, "tiktoken file: line %zu: rank %llu repeated",
                      line, rank);
    ++n_ranks;
  }
  if (n_ranks == 0) return tok_fail(t, PTERUN_STATUS_INVALID_DATA, "tiktoken file: no tokens");
  if (t->n_vocab != n_ranks)
    return tok_fail(t, PTERUN_STATUS_INVALID_DATA,
                    "tiktoken file: ranks are not 0..%zu (special token ids would collide)",
                    n_ranks - 1);
  {
    size_t count = o->special_tokens != NULL ? o->special_count : LLAMA3_SPECIALS;
    for (k = 0; k < count; ++k) {
      char name[64];
      const char* s;
      int r;
      if (o->special_tokens != NULL) {
        s = o->special_tokens[k];
        if (s == NULL)
          return tok_fail(t, PTERUN_STATUS_INVALID_ARGUMENT, "special token %zu is NULL", k);
      } else if (k < sizeof kLlama3Basic / sizeof kLlama3Basic[0]) {
        s = kLlama3Basic[k];
      } else {
        snprintf(name, sizeof name, "<|reserved_special_token_%zu|>",
                 k - sizeof kLlama3Basic / sizeof kLlama3Basic[0] + 2);
        s = name;
      }
      r = tok_added_add(t, (uint32_t)(n_ranks + k), s, strlen(s), 1, 0, 0, 0);
      if (r == -1) return PTERUN_STATUS_OUT_OF_MEMORY;
      if (r == -2)
        return tok_fail(t, PTERUN_STATUS_INVALID_ARGUMENT, "special token %zu: empty or too long",
                        k);
    }
  }
  if (tok_vocab_index(t) != 0) return PTERUN_STATUS_OUT_OF_MEMORY;
  {
    int64_t b = pterun_tokenizer_token_id(t, "<|begin_of_text|>", 17);
    int64_t e = pterun_tokenizer_token_id(t, "<|end_of_text|>", 15);
    t->bos_id = b;
    t->eos_id = e;
  }
  return tok_regex_compile(t, pat, strlen(pat), &t->pattern);
}

static int tt_pair(const pterun_tokenizer* t, const char* piece, const tok_sym* a, const tok_sym* b,
                   double* priority, int64_t* id) {
  int64_t r = tok_map_get(t, &t->map, piece + a->start, (size_t)a->len + b->len);
  if (r < 0) return 0;
  *priority = (double)r;
  *id = r;
  return 1;
}

typedef struct tt_ctx {
  const pterun_tokenizer* t;
  const char* s;
  tok_ids* out;
  pterun_status st;
} tt_ctx;

static int tt_piece(void* user, size_t a, size_t b, int is_match) {
  tt_ctx* c = (tt_ctx*)user;
  const pterun_tokenizer* t = c->t;
  const char* p = c->s + a;
  size_t n = b - a, k;
  int64_t id;
  tok_sym* syms;
  if (!is_match) return 0; /* tiktoken encodes the matches only */
  if ((id = tok_map_get(t, &t->map, p, n)) >= 0) {
    tok_ids_put(c->out, id);
    return 0;
  }
  syms = (tok_sym*)malloc(n * sizeof *syms);
  if (syms == NULL) {
    c->st = PTERUN_STATUS_OUT_OF_MEMORY;
    return -1;
  }
  for (k = 0; k < n; ++k) {
    syms[k].start = (uint32_t)k;
    syms[k].len = 1;
    syms[k].id = tok_map_get(t, &t->map, p + k, 1);
    if (syms[k].id < 0) {
      free(syms);
      c->st = tok_fail((pterun_tokenizer*)t, PTERUN_STATUS_INVALID_ARGUMENT,
                       "tiktoken: the text has byte 0x%02X, which the rank file lacks",
                       (unsigned char)p[k]);
      return -1;
    }
  }
  if (tok_bpe(t, p, syms, &n, tt_pair) != 0) {
    free(syms);
    c->st = PTERUN_STATUS_OUT_OF_MEMORY;
    return -1;
  }
  for (k = 0; k < n; ++k) tok_ids_put(c->out, syms[k].id);
  free(syms);
  return 0;
}

pterun_status tok_tiktoken_encode(const pterun_tokenizer* t, const char* s, size_t n,
                                  tok_ids* out) {
  size_t pos = 0;
  for (;;) {
    size_t at = n, len = 0, which = 0;
    int found = tok_find_added(t, s, n, pos, &at, &len, &which);
    size_t end = found ? at : n;
    if (end > pos) {
      tt_ctx c;
      c.t = t;
      c.s = s + pos;
      c.out = out;
      c.st = PTERUN_STATUS_OK;
      if (tok_regex_split(t->pattern, s + pos, end - pos, tt_piece, &c) != 0)
        return c.st != PTERUN_STATUS_OK ? c.st
                                        : tok_fail((pterun_tokenizer*)t, PTERUN_STATUS_INTERNAL,
                                                   "the split regex failed on the text");
    }
    if (!found) break;
    tok_ids_put(out, t->added[which].id);
    pos = at + len;
  }
  return PTERUN_STATUS_OK;
}
