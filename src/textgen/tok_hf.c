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
    h = tok_merge_slot(t, (uint32_t)ia, (uint32_t)ib);
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
