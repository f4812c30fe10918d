/* Hugging Face tokenizer.json with a BPE model, as `tokenizers` (0.2x)
 * encodes and decodes it:
 *   encode: the text is split at added tokens (leftmost, longest; lstrip /
 *   rstrip take the whitespace beside them); each other segment is
 *   normalized (Prepend, Replace), pre-tokenized (Split by regex, ByteLevel,
 *   Metaspace, Digits, in sequence) and each piece goes through the BPE model
 *   (characters, byte fallback or unk, then the merges by rank, leftmost
 *   first). The post-processor (BOS templates) is not applied: callers add
 *   BOS, as ExecuTorch's runner takes it from the program.
 *   decode: ids -> token strings (added tokens' content; special ones
 *   skipped unless kept; unknown ids skipped), then the decoder chain
 *   (ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip), concatenated
 *   (no decoder: joined with spaces). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"
#include "src/textgen/tok_json.h"

/* GPT-2's split pattern, ByteLevel's use_regex. */
static const char kGpt2Pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* ---- ByteLevel's byte <-> character mapping (GPT-2): the printable Latin-1
 * bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) map to themselves, the other 68 to
 * U+0100.. in byte order: 0..0x20, then 0x7F..0xA0, then 0xAD. */
static uint32_t byte_char(unsigned b) {
  if (b <= 0x20) return 256 + b;
  if (b >= 0x7F && b <= 0xA0) return b + 162; /* 256 + 33 + (b - 0x7F) */
  if (b == 0xAD) return 323;
  return b;
}

/* Character -> byte, or -1. */
static int char_byte(uint32_t cp) {
  if ((cp >= '!' && cp <= '~') || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
    return (int)cp;
  if (cp >= 256 && cp <= 288) return (int)(cp - 256);
  if (cp >= 289 && cp <= 322) return (int)(cp - 162);
  if (cp == 323) return 0xAD;
  return -1;
}

/* ---- loading ----------------------------------------------------------------------- */
typedef struct hf_load {
  pterun_tokenizer* t;
  tok_json j;
} hf_load;

static pterun_status bad(hf_load* L, const char* what) {
  return tok_fail(L->t, PTERUN_STATUS_INVALID_DATA, "tokenizer.json: %s", what);
}
static pterun_status unsupported(hf_load* L, const char* what, uint32_t node) {
  size_t n = 0;
  const char* s = tok_json_str(&L->j, tok_json_get(&L->j, node, "type"), &n);
  char name[64];
  char esc[256];
  if (s == NULL) {
    s = "?";
    n = 1;
  }
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, s, n);
  name[n] = '\0';
  pterun_escape_text(name, esc, sizeof esc);
  return tok_fail(L->t, PTERUN_STATUS_NOT_SUPPORTED, "tokenizer.json: %s '%s' is not supported",
                  what, esc);
}

static char* dup_str(const char* s, size_t n) {
  char* p = (char*)malloc(n + 1);
  if (p != NULL) {
    if (n) memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

/* A string field, or NULL (with *n 0). */
static const char* field(hf_load* L, uint32_t obj, const char* key, size_t* n) {
  const char* s = tok_json_str(&L->j, tok_json_get(&L->j, obj, key), n);
  if (s == NULL) *n = 0;
  return s;
}

/* Replace's pattern {"String": s} (a Regex is not supported). */
static pterun_status pattern_string(hf_load* L, uint32_t node, const char** s, size_t* n) {
  uint32_t pat = tok_json_get(&L->j, node, "pattern");
  *s = field(L, pat, "String", n);
  if (*s == NULL) {
    if (tok_json_get(&L->j, pat, "Regex") != 0)
      return tok_fail(L->t, PTERUN_STATUS_NOT_SUPPORTED,
                      "tokenizer.json: a Replace with a Regex pattern is not supported");
    return bad(L, "Replace without a pattern");
  }
  return PTERUN_STATUS_OK;
}

/* Pipelines (normalizers, pre-tokenizers, decoders): a "Sequence" node runs
 * each child of its `key` array through `fn`; *done says whether node was one. */
typedef pterun_status (*hf_step_fn)(hf_load* L, uint32_t node, int depth);
static pterun_status sequence(hf_load* L, uint32_t node, const char* key, hf_step_fn fn, int depth,
                              int* done) {
  uint32_t arr, c;
  *done = 0;
  if (depth > 4) return bad(L, "pipeline steps nested too deeply");
  if (!tok_json_eq(&L->j, tok_json_get(&L->j, node, "type"), "Sequence")) return PTERUN_STATUS_OK;
  *done = 1;
  arr = tok_json_get(&L->j, node, key);
  if (!tok_json_is(&L->j, arr, TOK_JSON_ARRAY)) return bad(L, "a Sequence without its steps");
  for (c = L->j.nodes[arr].first; c != 0; c = L->j.nodes[c].next) PTERUN_TRY(fn(L, c, depth + 1));
  return PTERUN_STATUS_OK;
}

/* arr (n elements of `size` bytes) grown by one zeroed element, or NULL (arr
 * is then unchanged). */
static void* grow_one(void* arr, size_t n, size_t size) {
  char* p = (char*)realloc(arr, (n + 1) * size);
  if (p != NULL) memset(p + n * size, 0, size);
  return p;
}

static pterun_status add_norm(hf_load* L, uint32_t node, int depth) {
  pterun_tokenizer* t = L->t;
  uint32_t type = tok_json_get(&L->j, node, "type");
  tok_norm* nn;
  int seq;
  PTERUN_TRY(sequence(L, node, "normalizers", add_norm, depth, &seq));
  if (seq) return PTERUN_STATUS_OK;
  nn = (tok_norm*)grow_one(t->norms, t->n_norms, sizeof *nn);
  if (nn == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  t->norms = nn;
  nn = &t->norms[t->n_norms];
  if (tok_json_eq(&L->j, type, "Prepend")) {
    const char* s;
    size_t n;
    if ((s = field(L, node, "prepend", &n)) == NULL) return bad(L, "Prepend without 'prepend'");
    nn->kind = TOK_NORM_PREPEND;
    nn->a = dup_str(s, n);
    nn->a_len = n;
  } else if (tok_json_eq(&L->j, type, "Replace")) {
    const char *s, *c;
    size_t n, cn;
    PTERUN_TRY(pattern_string(L, node, &s, &n));
    if ((c = field(L, node, "content", &cn)) == NULL) return bad(L, "Replace without 'content'");
    if (n == 0) return bad(L, "Replace with an empty pattern");
    nn->kind = TOK_NORM_REPLACE;
    nn->a = dup_str(s, n);
    nn->a_len = n;
    nn->b = dup_str(c, cn);
    nn->b_len = cn;
    if (nn->b == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  } else {
    return unsupported(L, "normalizer", node);
  }
  t->n_norms++;
  return nn->a == NULL ? PTERUN_STATUS_OUT_OF_MEMORY : PTERUN_STATUS_OK;
}

static int prepend_scheme(hf_load* L, uint32_t node) {
  uint32_t s = tok_json_get(&L->j, node, "prepend_scheme");
  if (tok_json_eq(&L->j, s, "first")) return TOK_PREPEND_FIRST;
  if (tok_json_eq(&L->j, s, "never")) return TOK_PREPEND_NEVER;
  if (tok_json_eq(&L->j, s, "always")) return TOK_PREPEND_ALWAYS;
  /* Older files: add_prefix_space true/false. */
  return tok_json_bool(&L->j, node, "add_prefix_space", 1) ? TOK_PREPEND_ALWAYS : TOK_PREPEND_NEVER;
}

static pterun_status replacement(hf_load* L, uint32_t node, char* out, size_t* len) {
  size_t n;
  uint32_t cp;
  const char* s = field(L, node, "replacement", &n);
  if (s == NULL) return bad(L, "Metaspace without 'replacement'");
  if (n == 0 || n > 4 || tok_utf8_next((const unsigned char*)s, n, &cp) != n)
    return bad(L, "Metaspace replacement must be one character");
  memcpy(out, s, n);
  *len = n;
  return PTERUN_STATUS_OK;
}

static pterun_status add_pre(hf_load* L, uint32_t node, int depth) {
  pterun_tokenizer* t = L->t;
  uint32_t type = tok_json_get(&L->j, node, "type");
  tok_pre* p;
  int seq;
  PTERUN_TRY(sequence(L, node, "pretokenizers", add_pre, depth, &seq));
  if (seq) return PTERUN_STATUS_OK;
  p = (tok_pre*)grow_one(t->pres, t->n_pres, sizeof *p);
  if (p == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  t->pres = p;
  p = &t->pres[t->n_pres];
  if (tok_json_eq(&L->j, type, "Split")) {
    uint32_t pat = tok_json_get(&L->j, node, "pattern"),
             beh = tok_json_get(&L->j, node, "behavior");
    const char* s;
    size_t n;
    p->kind = TOK_PRE_SPLIT;
    if (tok_json_eq(&L->j, beh, "Isolated"))
      p->behavior = TOK_SPLIT_ISOLATED;
    else if (tok_json_eq(&L->j, beh, "Removed"))
      p->behavior = TOK_SPLIT_REMOVED;
    else if (tok_json_eq(&L->j, beh, "MergedWithPrevious"))
      p->behavior = TOK_SPLIT_MERGED_PREV;
    else if (tok_json_eq(&L->j, beh, "MergedWithNext"))
      p->behavior = TOK_SPLIT_MERGED_NEXT;
    else
      return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                      "tokenizer.json: this Split behavior is not supported");
    p->invert = tok_json_bool(&L->j, node, "invert", 0);
    if (p->invert)
      return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                      "tokenizer.json: an inverted Split is not supported");
    if ((s = field(L, pat, "Regex", &n)) != NULL) {
      t->n_pres++; /* owned from here: freed with the tokenizer */
      return tok_regex_compile(t, s, n, &p->re);
    }
    if ((s = field(L, pat, "String", &n)) != NULL && n > 0) {
      /* A literal: as a regex with every character quoted. */
      tok_buf b = {0, 0, 0, 0};
      size_t k;
      pterun_status st;
      for (k = 0; k < n; ++k) {
        if (strchr("\\^$.|?*+()[]{}-", s[k]) != NULL && s[k] != '\0') tok_buf_putc(&b, '\\');
        tok_buf_putc(&b, s[k]);
      }
      if (b.oom) {
        tok_buf_free(&b);
        return PTERUN_STATUS_OUT_OF_MEMORY;
      }
      t->n_pres++;
      st = tok_regex_compile(t, b.p, b.n, &p->re);
      tok_buf_free(&b);
      return st;
    }
    return bad(L, "Split without a pattern");
  }
  if (tok_json_eq(&L->j, type, "ByteLevel")) {
    p->kind = TOK_PRE_BYTELEVEL;
    p->add_prefix_space = tok_json_bool(&L->j, node, "add_prefix_space", 1);
    t->n_pres++;
    if (tok_json_bool(&L->j, node, "use_regex", 1))
      return tok_regex_compile(t, kGpt2Pattern, sizeof kGpt2Pattern - 1, &p->re);
    return PTERUN_STATUS_OK;
  }
  if (tok_json_eq(&L->j, type, "Metaspace")) {
    p->kind = TOK_PRE_METASPACE;
    PTERUN_TRY(replacement(L, node, p->repl, &p->repl_len));
    p->prepend_scheme = prepend_scheme(L, node);
    p->split = tok_json_bool(&L->j, node, "split", 1);
    t->n_pres++;
    return PTERUN_STATUS_OK;
  }
  if (tok_json_eq(&L->j, type, "Digits")) {
    p->kind = TOK_PRE_DIGITS;
    p->individual_digits = tok_json_bool(&L->j, node, "individual_digits", 0);
    t->n_pres++;
    return PTERUN_STATUS_OK;
  }
  return unsupported(L, "pre-tokenizer", node);
}

static pterun_status add_dec(hf_load* L, uint32_t node, int depth) {
  pterun_tokenizer* t = L->t;
  uint32_t type = tok_json_get(&L->j, node, "type");
  tok_dec* d;
  int seq;
  PTERUN_TRY(sequence(L, node, "decoders", add_dec, depth, &seq));
  if (seq) return PTERUN_STATUS_OK;
  d = (tok_dec*)grow_one(t->decs, t->n_decs, sizeof *d);
  if (d == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  t->decs = d;
  d = &t->decs[t->n_decs];
  if (tok_json_eq(&L->j, type, "ByteLevel")) {
    d->kind = TOK_DEC_BYTELEVEL;
  } else if (tok_json_eq(&L->j, type, "Metaspace")) {
    char r[8];
    size_t n;
    PTERUN_TRY(replacement(L, node, r, &n));
    d->kind = TOK_DEC_METASPACE;
    d->prepend_scheme = prepend_scheme(L, node);
    if ((d->a = dup_str(r, n)) == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    d->a_len = n;
  } else if (tok_json_eq(&L->j, type, "Replace")) {
    const char *s, *c;
    size_t n, cn;
    PTERUN_TRY(pattern_string(L, node, &s, &n));
    if ((c = field(L, node, "content", &cn)) == NULL) return bad(L, "Replace without 'content'");
    if (n == 0) return bad(L, "Replace with an empty pattern");
    d->kind = TOK_DEC_REPLACE;
    d->a = dup_str(s, n);
    d->a_len = n;
    d->b = dup_str(c, cn);
    d->b_len = cn;
    if (d->a == NULL || d->b == NULL) {
      free(d->a);
      free(d->b);
      return PTERUN_STATUS_OUT_OF_MEMORY;
    }
  } else if (tok_json_eq(&L->j, type, "ByteFallback")) {
    d->kind = TOK_DEC_BYTEFALLBACK;
  } else if (tok_json_eq(&L->j, type, "Fuse")) {
    d->kind = TOK_DEC_FUSE;
  } else if (tok_json_eq(&L->j, type, "Strip")) {
    const char* s;
    size_t n;
    uint32_t cp, a = tok_json_get(&L->j, node, "start"), b = tok_json_get(&L->j, node, "stop");
    if ((s = field(L, node, "content", &n)) == NULL || n == 0 || n > 4 ||
        tok_utf8_next((const unsigned char*)s, n, &cp) != n)
      return bad(L, "Strip content must be one character");
    if (!tok_json_is(&L->j, a, TOK_JSON_NUMBER) || !tok_json_is(&L->j, b, TOK_JSON_NUMBER) ||
        !(L->j.nodes[a].num >= 0 && L->j.nodes[a].num <= 1e6) ||
        !(L->j.nodes[b].num >= 0 && L->j.nodes[b].num <= 1e6))
      return bad(L, "Strip start/stop must be small non-negative integers");
    d->kind = TOK_DEC_STRIP;
    if ((d->a = dup_str(s, n)) == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    d->a_len = n;
    d->start = (size_t)L->j.nodes[a].num;
    d->stop = (size_t)L->j.nodes[b].num;
  } else {
    return unsupported(L, "decoder", node);
  }
  t->n_decs++;
  return PTERUN_STATUS_OK;
}

/* An id from a JSON number: an integer in [0, TOK_MAX_VOCAB). */
static int json_id(hf_load* L, uint32_t node, uint32_t* id) {
  double v;
  if (!tok_json_is(&L->j, node, TOK_JSON_NUMBER)) return -1;
  v = L->j.nodes[node].num;
  if (!(v >= 0 && v < (double)TOK_MAX_VOCAB) || floor(v) != v) return -1;
  *id = (uint32_t)v;
  return 0;
}

static size_t merge_slot(const pterun_tokenizer* t, uint32_t a, uint32_t b) {
  uint64_t h = ((uint64_t)a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)b * 0xC2B2AE3D27D4EB4Full);
  return (size_t)(h ^ (h >> 31)) & t->merge_mask;
}

static pterun_status load_merges(hf_load* L, uint32_t arr) {
  pterun_tokenizer* t = L->t;
  uint32_t c, rank = 0;
  size_t cap = 16, count = L->j.nodes[arr].count;
  while (cap < 2 * count + 2) cap *= 2;
  t->merges = (tok_merge*)malloc(cap * sizeof *t->merges);
  if (t->merges == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  t->merge_mask = cap - 1;
  memset(t->merges, 0xFF, cap * sizeof *t->merges); /* a == UINT32_MAX: empty */
  for (c = L->j.nodes[arr].first; c != 0; c = L->j.nodes[c].next, ++rank) {
    const char *a = NULL, *b = NULL;
    size_t an = 0, bn = 0, h;
    int64_t ia, ib, im;
    char joined[2 * TOK_MAX_TOKEN_BYTES];
    if (tok_json_is(&L->j, c, TOK_JSON_STRING)) {
      /* "a b": exactly one space */
      const char* s = tok_json_str(&L->j, c, &an);
      const char* sp = (const char*)memchr(s, ' ', an);
      if (sp == NULL || memchr(sp + 1, ' ', an - (size_t)(sp + 1 - s)) != NULL)
        return bad(L, "a merge must be two tokens separated by one space");
      a = s;
      bn = an - (size_t)(sp + 1 - s);
      an = (size_t)(sp - s);
      b = sp + 1;
    } else if (tok_json_is(&L->j, c, TOK_JSON_ARRAY) && L->j.nodes[c].count == 2) {
      uint32_t x = L->j.nodes[c].first;
      a = tok_json_str(&L->j, x, &an);
      b = tok_json_str(&L->j, L->j.nodes[x].next, &bn);
    }
    if (a == NULL || b == NULL) return bad(L, "a merge must be a string or a pair of strings");
    if (an + bn > sizeof joined) return bad(L, "a merged token is too long");
    ia = tok_map_get(t, &t->map, a, an);
    ib = tok_map_get(t, &t->map, b, bn);
    memcpy(joined, a, an);
    memcpy(joined + an, b, bn);
    im = tok_map_get(t, &t->map, joined, an + bn);
    if (ia < 0 || ib < 0 || im < 0) return bad(L, "a merge names a token outside the vocabulary");
    h = merge_slot(t, (uint32_t)ia, (uint32_t)ib);
    while (t->merges[h].a != UINT32_MAX) {
      if (t->merges[h].a == (uint32_t)ia && t->merges[h].b == (uint32_t)ib) break;
      h = (h + 1) & t->merge_mask;
    }
    if (t->merges[h].a != UINT32_MAX) continue; /* a repeated merge keeps its first rank */
    t->merges[h].a = (uint32_t)ia;
    t->merges[h].b = (uint32_t)ib;
    t->merges[h].rank = rank;
    t->merges[h].id = (uint32_t)im;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status load_model(hf_load* L, uint32_t model) {
  pterun_tokenizer* t = L->t;
  uint32_t vocab = tok_json_get(&L->j, model, "vocab"),
           merges = tok_json_get(&L->j, model, "merges");
  uint32_t type = tok_json_get(&L->j, model, "type"), c, v;
  size_t n;
  const char* s;
  unsigned b;
  if (type != 0 && !tok_json_eq(&L->j, type, "BPE")) return unsupported(L, "model", model);
  if (!tok_json_is(&L->j, vocab, TOK_JSON_OBJECT) || !tok_json_is(&L->j, merges, TOK_JSON_ARRAY))
    return bad(L, "the BPE model needs 'vocab' (object) and 'merges' (array)");
  for (c = L->j.nodes[vocab].first; c != 0; c = L->j.nodes[c].next) {
    uint32_t id;
    int r;
    if (json_id(L, c, &id) != 0) return bad(L, "a vocabulary id is not an integer in range");
    if (L->j.nodes[c].key_len > TOK_MAX_TOKEN_BYTES) return bad(L, "a token is too long");
    r = tok_vocab_set(t, id, L->j.pool + L->j.nodes[c].key_off, L->j.nodes[c].key_len, 0);
    if (r == -1) return PTERUN_STATUS_OUT_OF_MEMORY;
    if (r == -2) return bad(L, "two vocabulary entries have one id");
  }
  if (tok_vocab_index(t) != 0) return PTERUN_STATUS_OUT_OF_MEMORY;
  if ((s = field(L, model, "continuing_subword_prefix", &n)) != NULL && n > 0)
    return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                    "tokenizer.json: continuing_subword_prefix is not supported");
  if ((s = field(L, model, "end_of_word_suffix", &n)) != NULL && n > 0)
    return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                    "tokenizer.json: end_of_word_suffix is not supported");
  v = tok_json_get(&L->j, model, "dropout");
  if (tok_json_is(&L->j, v, TOK_JSON_NUMBER) && L->j.nodes[v].num > 0)
    return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED, "tokenizer.json: BPE dropout is not supported");
  t->byte_fallback = tok_json_bool(&L->j, model, "byte_fallback", 0);
  t->fuse_unk = tok_json_bool(&L->j, model, "fuse_unk", 0);
  t->ignore_merges = tok_json_bool(&L->j, model, "ignore_merges", 0);
  t->unk_id = -1;
  if ((s = field(L, model, "unk_token", &n)) != NULL) {
    t->unk_id = tok_map_get(t, &t->map, s, n);
    if (t->unk_id < 0) return bad(L, "unk_token is not in the vocabulary");
  }
  for (b = 0; b < 256; ++b) {
    static const char hex[] = "0123456789ABCDEF";
    char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
    t->byte_ids[b] = tok_map_get(t, &t->map, name, 6);
  }
  return load_merges(L, merges);
}

static pterun_status load_added(hf_load* L, uint32_t arr) {
  pterun_tokenizer* t = L->t;
  uint32_t c;
  if (arr == 0 || tok_json_is(&L->j, arr, TOK_JSON_NULL)) return PTERUN_STATUS_OK;
  if (!tok_json_is(&L->j, arr, TOK_JSON_ARRAY)) return bad(L, "added_tokens must be an array");
  for (c = L->j.nodes[arr].first; c != 0; c = L->j.nodes[c].next) {
    uint32_t id;
    size_t n;
    const char* s = field(L, c, "content", &n);
    int r;
    if (s == NULL || n == 0) return bad(L, "an added token without content");
    if (json_id(L, tok_json_get(&L->j, c, "id"), &id) != 0)
      return bad(L, "an added token's id is not an integer in range");
    r = tok_added_add(t, id, s, n, tok_json_bool(&L->j, c, "special", 0),
                      tok_json_bool(&L->j, c, "lstrip", 0), tok_json_bool(&L->j, c, "rstrip", 0),
                      tok_json_bool(&L->j, c, "single_word", 0));
    if (r == -1) return PTERUN_STATUS_OUT_OF_MEMORY;
    if (r == -2) return bad(L, "an added token is too long");
  }
  return PTERUN_STATUS_OK;
}

pterun_status tok_hf_load(pterun_tokenizer* t, const char* data, size_t size) {
  hf_load L;
  uint32_t root, v;
  pterun_status st;
  int r;
  memset(&L, 0, sizeof L);
  L.t = t;
  r = tok_json_parse(&L.j, data, size);
  if (r == -2) {
    tok_json_free(&L.j);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  if (r != 0) {
    st = tok_fail(t, PTERUN_STATUS_INVALID_DATA, "tokenizer.json: %s", L.j.error);
    tok_json_free(&L.j);
    return st;
  }
  root = 1;
  if (!tok_json_is(&L.j, root, TOK_JSON_OBJECT)) {
    st = bad(&L, "the document is not an object");
    goto done;
  }
  if ((v = tok_json_get(&L.j, root, "model")) == 0 || !tok_json_is(&L.j, v, TOK_JSON_OBJECT)) {
    st = bad(&L, "no model");
    goto done;
  }
  if ((st = load_model(&L, v)) != PTERUN_STATUS_OK) goto done;
  if ((st = load_added(&L, tok_json_get(&L.j, root, "added_tokens"))) != PTERUN_STATUS_OK)
    goto done;
  if (tok_vocab_index(t) != 0) {
    st = PTERUN_STATUS_OUT_OF_MEMORY;
    goto done;
  }
  v = tok_json_get(&L.j, root, "normalizer");
  if (v != 0 && !tok_json_is(&L.j, v, TOK_JSON_NULL) &&
      (st = add_norm(&L, v, 0)) != PTERUN_STATUS_OK)
    goto done;
  v = tok_json_get(&L.j, root, "pre_tokenizer");
  if (v != 0 && !tok_json_is(&L.j, v, TOK_JSON_NULL) &&
      (st = add_pre(&L, v, 0)) != PTERUN_STATUS_OK)
    goto done;
  v = tok_json_get(&L.j, root, "decoder");
  if (v != 0 && !tok_json_is(&L.j, v, TOK_JSON_NULL)) {
    t->has_decoder = 1;
    if ((st = add_dec(&L, v, 0)) != PTERUN_STATUS_OK) goto done;
  }
  st = PTERUN_STATUS_OK;
done:
  tok_json_free(&L.j);
  return st;
}

/* ---- encoding ---------------------------------------------------------------------- */
/* A list of pieces: byte ranges of `text`, the first flagged when it starts
 * at offset 0 of the input (Metaspace's prepend_scheme "first"). */
typedef struct pieces {
  tok_buf text;
  size_t* off; /* 2 per piece: start, end; then flags */
  unsigned char* first;
  size_t n, cap;
  int oom;
} pieces;

static void pieces_free(pieces* p) {
  tok_buf_free(&p->text);
  free(p->off);
  free(p->first);
  memset(p, 0, sizeof *p);
}

/* Appends a piece with bytes s[0..n). */
static void pieces_add(pieces* p, const char* s, size_t n, int first) {
  if (p->n == p->cap) {
    size_t c = p->cap ? 2 * p->cap : 64;
    size_t* o = (size_t*)realloc(p->off, 2 * c * sizeof *o);
    unsigned char* f;
    if (o == NULL) {
      p->oom = 1;
      return;
    }
    p->off = o;
    f = (unsigned char*)realloc(p->first, c);
    if (f == NULL) {
      p->oom = 1;
      return;
    }
    p->first = f;
    p->cap = c;
  }
  p->off[2 * p->n] = p->text.n;
  tok_buf_put(&p->text, s, n);
  if (p->text.oom) p->oom = 1;
  p->off[2 * p->n + 1] = p->text.n;
  p->first[p->n] = (unsigned char)first;
  p->n++;
}

/* Extends the last piece with s[0..n). */
static void pieces_extend(pieces* p, const char* s, size_t n) {
  tok_buf_put(&p->text, s, n);
  if (p->text.oom) p->oom = 1;
  p->off[2 * p->n - 1] = p->text.n;
}

typedef struct split_ctx {
  pieces* out;
  const char* s;
  int first;
  int behavior;
  int pending_next; /* MergedWithNext: a match waits for the next piece */
  size_t pend_a, pend_b;
} split_ctx;

static int on_split(void* user, size_t a, size_t b, int is_match) {
  split_ctx* c = (split_ctx*)user;
  int first = c->first && a == 0;
  switch (c->behavior) {
    case TOK_SPLIT_REMOVED:
      if (!is_match) pieces_add(c->out, c->s + a, b - a, first);
      break;
    case TOK_SPLIT_MERGED_PREV:
      if (is_match && c->out->n > 0 && c->pend_a == 1)
        pieces_extend(c->out, c->s + a, b - a);
      else
        pieces_add(c->out, c->s + a, b - a, first);
      c->pend_a = is_match ? 0 : 1; /* the next match may join this gap */
      break;
    case TOK_SPLIT_MERGED_NEXT:
      if (c->pending_next) {
        pieces_extend(c->out, c->s + a, b - a);
        c->pending_next = is_match;
      } else {
        pieces_add(c->out, c->s + a, b - a, first);
        c->pending_next = is_match;
      }
      break;
    default: pieces_add(c->out, c->s + a, b - a, first); break;
  }
  return c->out->oom ? -1 : 0;
}

/* `in` -> `out` through one pre-tokenizer step. */
static pterun_status pre_step(const pterun_tokenizer* t, const tok_pre* st, pieces* in,
                              pieces* out) {
  size_t k;
  for (k = 0; k < in->n; ++k) {
    const char* s = in->text.p + in->off[2 * k];
    size_t n = in->off[2 * k + 1] - in->off[2 * k];
    int first = in->first[k];
    if (st->kind == TOK_PRE_SPLIT) {
      split_ctx c;
      memset(&c, 0, sizeof c);
      c.out = out;
      c.s = s;
      c.first = first;
      c.behavior = st->behavior;
      if (tok_regex_split(st->re, s, n, on_split, &c) != 0)
        return out->oom ? PTERUN_STATUS_OUT_OF_MEMORY
                        : tok_fail((pterun_tokenizer*)t, PTERUN_STATUS_INTERNAL,
                                   "the split regex failed on the text");
    } else if (st->kind == TOK_PRE_BYTELEVEL) {
      /* Prefix space, then the regex pieces, each mapped byte -> char. */
      tok_buf tmp = {0, 0, 0, 0};
      pieces parts;
      size_t i, q;
      memset(&parts, 0, sizeof parts);
      if (st->add_prefix_space && (n == 0 || s[0] != ' ')) tok_buf_putc(&tmp, ' ');
      tok_buf_put(&tmp, s, n);
      if (tmp.oom) return PTERUN_STATUS_OUT_OF_MEMORY;
      if (st->re != NULL) {
        split_ctx c;
        memset(&c, 0, sizeof c);
        c.out = &parts;
        c.s = tmp.p;
        c.first = first;
        c.behavior = TOK_SPLIT_ISOLATED;
        if (tmp.n > 0 && tok_regex_split(st->re, tmp.p, tmp.n, on_split, &c) != 0) {
          tok_buf_free(&tmp);
          pieces_free(&parts);
          return PTERUN_STATUS_OUT_OF_MEMORY;
        }
      } else if (tmp.n > 0) {
        pieces_add(&parts, tmp.p, tmp.n, first);
      }
      for (q = 0; q < parts.n; ++q) {
        tok_buf m = {0, 0, 0, 0};
        for (i = parts.off[2 * q]; i < parts.off[2 * q + 1]; ++i)
          tok_buf_put_cp(&m, byte_char((unsigned char)parts.text.p[i]));
        if (m.n) pieces_add(out, m.p, m.n, parts.first[q]);
        if (m.oom) out->oom = 1;
        tok_buf_free(&m);
      }
      tok_buf_free(&tmp);
      pieces_free(&parts);
    } else if (st->kind == TOK_PRE_METASPACE) {
      tok_buf m = {0, 0, 0, 0};
      size_t i, start;
      int starts_with = n >= st->repl_len && memcmp(s, st->repl, st->repl_len) == 0;
      /* ' ' -> replacement, then the prepend (checked on the replaced text). */
      tok_buf r = {0, 0, 0, 0};
      for (i = 0; i < n; ++i) {
        if (s[i] == ' ')
          tok_buf_put(&r, st->repl, st->repl_len);
        else
          tok_buf_putc(&r, s[i]);
      }
      starts_with = r.n >= st->repl_len && memcmp(r.p, st->repl, st->repl_len) == 0;
      if (!starts_with && (st->prepend_scheme == TOK_PREPEND_ALWAYS ||
                           (st->prepend_scheme == TOK_PREPEND_FIRST && first)))
        tok_buf_put(&m, st->repl, st->repl_len);
      tok_buf_put(&m, r.p, r.n);
      tok_buf_free(&r);
      if (m.oom) {
        tok_buf_free(&m);
        return PTERUN_STATUS_OUT_OF_MEMORY;
      }
      if (!st->split) {
        if (m.n) pieces_add(out, m.p, m.n, first);
      } else {
        /* MergedWithNext on the replacement: each one starts a piece. */
        start = 0;
        for (i = st->repl_len > 0 ? 1 : m.n; i <= m.n; ++i) {
          if (i == m.n ||
              (i + st->repl_len <= m.n && memcmp(m.p + i, st->repl, st->repl_len) == 0)) {
            if (i > start) pieces_add(out, m.p + start, i - start, first && start == 0);
            start = i;
          }
        }
      }
      tok_buf_free(&m);
    } else if (st->kind == TOK_PRE_DIGITS) {
      size_t i = 0, start = 0;
      while (i < n) {
        int d = s[i] >= '0' && s[i] <= '9';
        size_t j = i + 1;
        if (d && !st->individual_digits)
          while (j < n && s[j] >= '0' && s[j] <= '9') ++j;
        if (d) {
          if (i > start) pieces_add(out, s + start, i - start, first && start == 0);
          pieces_add(out, s + i, j - i, first && i == 0);
          start = j;
        }
        i = d ? j : i + 1;
      }
      if (start < n) pieces_add(out, s + start, n - start, first && start == 0);
    }
    if (out->oom) return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  return PTERUN_STATUS_OK;
}

static int hf_pair(const pterun_tokenizer* t, const char* piece, const tok_sym* a, const tok_sym* b,
                   double* priority, int64_t* id) {
  size_t h;
  (void)piece;
  if (a->id < 0 || b->id < 0) return 0;
  h = merge_slot(t, (uint32_t)a->id, (uint32_t)b->id);
  while (t->merges[h].a != UINT32_MAX) {
    if (t->merges[h].a == (uint32_t)a->id && t->merges[h].b == (uint32_t)b->id) {
      *priority = (double)t->merges[h].rank;
      *id = t->merges[h].id;
      return 1;
    }
    h = (h + 1) & t->merge_mask;
  }
  return 0;
}

/* The BPE model on one piece. */
static pterun_status bpe_piece(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out) {
  tok_sym* syms;
  size_t cnt = 0, i = 0, k;
  int64_t id;
  if (n == 0) return PTERUN_STATUS_OK;
  if (t->ignore_merges && (id = tok_map_get(t, &t->map, s, n)) >= 0) {
    tok_ids_put(out, id);
    return PTERUN_STATUS_OK;
  }
  /* At most one symbol per byte (byte fallback). */
  syms = (tok_sym*)malloc(n * sizeof *syms);
  if (syms == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  while (i < n) {
    uint32_t cp;
    size_t cl = tok_utf8_next((const unsigned char*)s + i, n - i, &cp);
    if (cl == 0) cl = 1; /* cannot happen: the text was checked */
    id = tok_map_get(t, &t->map, s + i, cl);
    if (id >= 0) {
      syms[cnt].start = (uint32_t)i;
      syms[cnt].len = (uint32_t)cl;
      syms[cnt++].id = id;
    } else {
      int all = t->byte_fallback;
      for (k = 0; all && k < cl; ++k) all = t->byte_ids[(unsigned char)s[i + k]] >= 0;
      if (all) {
        for (k = 0; k < cl; ++k) {
          syms[cnt].start = (uint32_t)(i + k);
          syms[cnt].len = 1;
          syms[cnt++].id = t->byte_ids[(unsigned char)s[i + k]];
        }
      } else if (t->unk_id >= 0) {
        if (t->fuse_unk && cnt > 0 && syms[cnt - 1].id == t->unk_id) {
          syms[cnt - 1].len += (uint32_t)cl;
        } else {
          syms[cnt].start = (uint32_t)i;
          syms[cnt].len = (uint32_t)cl;
          syms[cnt++].id = t->unk_id;
        }
      } /* no unk token: the character is dropped, as tokenizers does */
    }
    i += cl;
  }
  if (tok_bpe(t, s, syms, &cnt, hf_pair) != 0) {
    free(syms);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (k = 0; k < cnt; ++k) tok_ids_put(out, syms[k].id);
  free(syms);
  return PTERUN_STATUS_OK;
}

/* Normalizers on one segment. */
static int normalize(const pterun_tokenizer* t, const char* s, size_t n, tok_buf* out) {
  size_t k;
  tok_buf cur = {0, 0, 0, 0};
  tok_buf_put(&cur, s, n);
  for (k = 0; k < t->n_norms; ++k) {
    const tok_norm* nm = &t->norms[k];
    tok_buf next = {0, 0, 0, 0};
    if (nm->kind == TOK_NORM_PREPEND) {
      if (cur.n > 0) tok_buf_put(&next, nm->a, nm->a_len);
      tok_buf_put(&next, cur.p, cur.n);
    } else {
      size_t i = 0;
      while (i < cur.n) {
        if (i + nm->a_len <= cur.n && memcmp(cur.p + i, nm->a, nm->a_len) == 0) {
          tok_buf_put(&next, nm->b, nm->b_len);
          i += nm->a_len;
        } else {
          tok_buf_putc(&next, cur.p[i++]);
        }
      }
    }
    tok_buf_free(&cur);
    cur = next;
    if (cur.oom) break;
  }
  if (cur.oom) {
    tok_buf_free(&cur);
    return -1;
  }
  *out = cur;
  return 0;
}

static pterun_status encode_segment(const pterun_tokenizer* t, const char* s, size_t n, int first,
                                    tok_ids* out) {
  pieces cur, next;
  tok_buf norm = {0, 0, 0, 0};
  size_t k;
  pterun_status st = PTERUN_STATUS_OK;
  if (n == 0) return PTERUN_STATUS_OK;
  if (normalize(t, s, n, &norm) != 0) return PTERUN_STATUS_OUT_OF_MEMORY;
  memset(&cur, 0, sizeof cur);
  if (norm.n > 0) pieces_add(&cur, norm.p, norm.n, first);
  tok_buf_free(&norm);
  for (k = 0; k < t->n_pres && st == PTERUN_STATUS_OK && !cur.oom; ++k) {
    memset(&next, 0, sizeof next);
    st = pre_step(t, &t->pres[k], &cur, &next);
    pieces_free(&cur);
    cur = next;
  }
  if (cur.oom && st == PTERUN_STATUS_OK) st = PTERUN_STATUS_OUT_OF_MEMORY;
  for (k = 0; k < cur.n && st == PTERUN_STATUS_OK; ++k)
    st = bpe_piece(t, cur.text.p + cur.off[2 * k], cur.off[2 * k + 1] - cur.off[2 * k], out);
  pieces_free(&cur);
  return st;
}

static int is_ws(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

pterun_status tok_hf_encode(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out) {
  size_t pos = 0;
  for (;;) {
    size_t at = n, len = 0, which = 0, seg_end, next;
    int found = tok_find_added(t, s, n, pos, &at, &len, &which);
    const tok_added* a = found ? &t->added[which] : NULL;
    seg_end = found ? at : n;
    next = found ? at + len : n;
    if (a != NULL && a->lstrip)
      while (seg_end > pos && is_ws((unsigned char)s[seg_end - 1])) --seg_end;
    if (a != NULL && a->rstrip)
      while (next < n && is_ws((unsigned char)s[next])) ++next;
    PTERUN_TRY(encode_segment(t, s + pos, seg_end - pos, pos == 0, out));
    if (!found) break;
    tok_ids_put(out, a->id);
    pos = next;
  }
  return PTERUN_STATUS_OK;
}

/* ---- decoding ---------------------------------------------------------------------- */
/* Token lists for the decoder chain: each token a range of one buffer. */
typedef struct toks {
  tok_buf b;
  size_t* off; /* start, end per token */
  size_t n, cap;
  int oom;
} toks;

static void toks_free(toks* l) {
  tok_buf_free(&l->b);
  free(l->off);
  memset(l, 0, sizeof *l);
}

static void toks_add(toks* l, const char* s, size_t n) {
  if (l->n == l->cap) {
    size_t c = l->cap ? 2 * l->cap : 64;
    size_t* o = (size_t*)realloc(l->off, 2 * c * sizeof *o);
    if (o == NULL) {
      l->oom = 1;
      return;
    }
    l->off = o;
    l->cap = c;
  }
  l->off[2 * l->n] = l->b.n;
  tok_buf_put(&l->b, s, n);
  if (l->b.oom) l->oom = 1;
  l->off[2 * l->n + 1] = l->b.n;
  l->n++;
}

#define TOK_AT(l, i) ((l)->b.p + (l)->off[2 * (i)])
#define TOK_LEN(l, i) ((l)->off[2 * (i) + 1] - (l)->off[2 * (i)])

/* "<0xNN>" -> NN, or -1. */
static int byte_token(const char* s, size_t n) {
  int v = 0, k;
  if (n != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') return -1;
  for (k = 3; k < 5; ++k) {
    char c = s[k];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* Bytes of one ByteLevel token: every character mapped back, or the
 * token's own bytes when one does not map (as tokenizers). */
static void bytelevel_bytes(const char* s, size_t n, tok_buf* out) {
  size_t i = 0, mark = out->n;
  while (i < n) {
    uint32_t cp;
    size_t cl = tok_utf8_next((const unsigned char*)s + i, n - i, &cp);
    int b = cl ? char_byte(cp) : -1;
    if (b < 0) {
      out->n = mark;
      tok_buf_put(out, s, n);
      return;
    }
    tok_buf_putc(out, (char)b);
    i += cl;
  }
}

static int dec_step(const tok_dec* d, toks* in, toks* out) {
  size_t i, k;
  switch (d->kind) {
    case TOK_DEC_BYTELEVEL: {
      tok_buf raw = {0, 0, 0, 0}, txt = {0, 0, 0, 0};
      for (i = 0; i < in->n; ++i) bytelevel_bytes(TOK_AT(in, i), TOK_LEN(in, i), &raw);
      tok_utf8_lossy(&txt, (const unsigned char*)raw.p, raw.n, NULL);
      toks_add(out, txt.p ? txt.p : "", txt.n);
      if (raw.oom || txt.oom) out->oom = 1;
      tok_buf_free(&raw);
      tok_buf_free(&txt);
      break;
    }
    case TOK_DEC_METASPACE:
      for (i = 0; i < in->n; ++i) {
        tok_buf m = {0, 0, 0, 0};
        const char* s = TOK_AT(in, i);
        size_t n = TOK_LEN(in, i);
        for (k = 0; k < n;) {
          if (k + d->a_len <= n && memcmp(s + k, d->a, d->a_len) == 0) {
            if (!(i == 0 && d->prepend_scheme != TOK_PREPEND_NEVER)) tok_buf_putc(&m, ' ');
            k += d->a_len;
          } else {
            tok_buf_putc(&m, s[k++]);
          }
        }
        toks_add(out, m.p ? m.p : "", m.n);
        if (m.oom) out->oom = 1;
        tok_buf_free(&m);
      }
      break;
    case TOK_DEC_REPLACE:
      for (i = 0; i < in->n; ++i) {
        tok_buf m = {0, 0, 0, 0};
        const char* s = TOK_AT(in, i);
        size_t n = TOK_LEN(in, i);
        for (k = 0; k < n;) {
          if (k + d->a_len <= n && memcmp(s + k, d->a, d->a_len) == 0) {
            tok_buf_put(&m, d->b, d->b_len);
            k += d->a_len;
          } else {
            tok_buf_putc(&m, s[k++]);
          }
        }
        toks_add(out, m.p ? m.p : "", m.n);
        if (m.oom) out->oom = 1;
        tok_buf_free(&m);
      }
      break;
    case TOK_DEC_BYTEFALLBACK: {
      tok_buf run = {0, 0, 0, 0};
      for (i = 0; i <= in->n; ++i) {
        int b = i < in->n ? byte_token(TOK_AT(in, i), TOK_LEN(in, i)) : -1;
        if (b >= 0) {
          tok_buf_putc(&run, (char)b);
          continue;
        }
        if (run.n > 0) {
          /* A run that is valid UTF-8 is one token; otherwise one U+FFFD per
           * byte (tokenizers' ByteFallback, not the lossy rule). */
          size_t q = 0, ok = 1;
          while (q < run.n) {
            uint32_t cp;
            size_t cl = tok_utf8_next((const unsigned char*)run.p + q, run.n - q, &cp);
            if (cl == 0) {
              ok = 0;
              break;
            }
            q += cl;
          }
          if (ok) {
            toks_add(out, run.p, run.n);
          } else {
            for (q = 0; q < run.n; ++q) toks_add(out, "\xEF\xBF\xBD", 3);
          }
          run.n = 0;
        }
        if (i < in->n) toks_add(out, TOK_AT(in, i), TOK_LEN(in, i));
      }
      if (run.oom) out->oom = 1;
      tok_buf_free(&run);
      break;
    }
    case TOK_DEC_FUSE: {
      tok_buf m = {0, 0, 0, 0};
      for (i = 0; i < in->n; ++i) tok_buf_put(&m, TOK_AT(in, i), TOK_LEN(in, i));
      toks_add(out, m.p ? m.p : "", m.n);
      if (m.oom) out->oom = 1;
      tok_buf_free(&m);
      break;
    }
    case TOK_DEC_STRIP:
      for (i = 0; i < in->n; ++i) {
        const char* s = TOK_AT(in, i);
        size_t n = TOK_LEN(in, i), a = 0, b = n;
        for (k = 0; k < d->start && a + d->a_len <= b && memcmp(s + a, d->a, d->a_len) == 0; ++k)
          a += d->a_len;
        for (k = 0;
             k < d->stop && b >= a + d->a_len && memcmp(s + b - d->a_len, d->a, d->a_len) == 0; ++k)
          b -= d->a_len;
        toks_add(out, s + a, b - a);
      }
      break;
    default: break;
  }
  return out->oom ? -1 : 0;
}

/* The token strings of ids[0..n) (see the file comment). */
static void id_tokens(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip, toks* l,
                      size_t* first_of) {
  size_t i;
  for (i = 0; i < n; ++i) {
    int64_t id = ids[i];
    if (first_of != NULL) first_of[i] = l->n;
    if (id < 0 || (uint64_t)id >= t->n_vocab || !(t->attr[id] & TOK_ATTR_PRESENT)) continue;
    if (t->added_of[id] >= 0) {
      const tok_added* a = &t->added[t->added_of[id]];
      if (a->special && skip) continue;
      toks_add(l, t->pool + a->off, a->len);
    } else {
      toks_add(l, t->pool + t->off[id], t->len[id]);
    }
  }
}

static int run_chain(const pterun_tokenizer* t, toks* cur, tok_buf* out) {
  size_t k;
  if (!t->has_decoder) {
    for (k = 0; k < cur->n; ++k) {
      if (k) tok_buf_putc(out, ' ');
      tok_buf_put(out, TOK_AT(cur, k), TOK_LEN(cur, k));
    }
    return out->oom ? -1 : 0;
  }
  for (k = 0; k < t->n_decs; ++k) {
    toks next;
    memset(&next, 0, sizeof next);
    if (dec_step(&t->decs[k], cur, &next) != 0) {
      toks_free(&next);
      return -1;
    }
    toks_free(cur);
    *cur = next;
  }
  for (k = 0; k < cur->n; ++k) tok_buf_put(out, TOK_AT(cur, k), TOK_LEN(cur, k));
  return out->oom ? -1 : 0;
}

/* Index of the first token whose text a later token can still change: an
 * open byte-fallback run, the start of a cut UTF-8 character (ByteLevel), or
 * everything when a Strip cuts at the end. */
static size_t open_tail(const pterun_tokenizer* t, const toks* l) {
  size_t k, tail = l->n;
  for (k = 0; k < t->n_decs; ++k) {
    const tok_dec* d = &t->decs[k];
    if (d->kind == TOK_DEC_BYTEFALLBACK) {
      size_t i = l->n;
      while (i > 0 && byte_token(TOK_AT(l, i - 1), TOK_LEN(l, i - 1)) >= 0) --i;
      if (i < tail) tail = i;
    } else if (d->kind == TOK_DEC_BYTELEVEL) {
      /* The last token boundary before a cut character at the end whose
       * bytes so far end on a whole character (a token may end inside one
       * that the next token completes). */
      tok_buf raw = {0, 0, 0, 0};
      size_t* cum = (size_t*)malloc((l->n + 1) * sizeof *cum);
      size_t i, at;
      if (cum == NULL) return 0; /* hold everything: still correct */
      cum[0] = 0;
      for (i = 0; i < l->n; ++i) {
        bytelevel_bytes(TOK_AT(l, i), TOK_LEN(l, i), &raw);
        cum[i + 1] = raw.n;
      }
      at = raw.n - tok_utf8_incomplete_tail((const unsigned char*)raw.p, raw.n);
      i = l->n;
      while (i > 0 &&
             (cum[i] > at || tok_utf8_incomplete_tail((const unsigned char*)raw.p, cum[i]) > 0))
        --i;
      if (i < tail) tail = i;
      free(cum);
      tok_buf_free(&raw);
    } else if (d->kind == TOK_DEC_STRIP && d->stop > 0) {
      tail = 0;
    }
  }
  return tail;
}

pterun_status tok_hf_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                            tok_buf* out, size_t* stable) {
  toks cur, head;
  size_t tail, k;
  memset(&cur, 0, sizeof cur);
  id_tokens(t, ids, n, skip, &cur, NULL);
  if (cur.oom) {
    toks_free(&cur);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  if (stable != NULL) {
    tok_buf h = {0, 0, 0, 0};
    tail = t->has_decoder ? open_tail(t, &cur) : cur.n;
    memset(&head, 0, sizeof head);
    for (k = 0; k < tail; ++k) toks_add(&head, TOK_AT(&cur, k), TOK_LEN(&cur, k));
    if (head.oom || run_chain(t, &head, &h) != 0) {
      toks_free(&head);
      toks_free(&cur);
      tok_buf_free(&h);
      return PTERUN_STATUS_OUT_OF_MEMORY;
    }
    *stable = h.n;
    toks_free(&head);
    tok_buf_free(&h);
  }
  if (run_chain(t, &cur, out) != 0) {
    toks_free(&cur);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  toks_free(&cur);
  return PTERUN_STATUS_OK;
}
