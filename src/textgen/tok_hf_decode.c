/* Hugging Face tokenizer.json, decoding (tok_hf.c has the whole picture and
 * the loading): ids to token strings, then the decoder chain. */
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

/* ByteLevel's character -> byte mapping (GPT-2), the inverse of
 * tok_hf_encode.c's byte_char: the printable Latin-1 bytes map to
 * themselves, the other 68 bytes to U+0100.. in byte order. */
/* Character -> byte, or -1. */
static int char_byte(uint32_t cp) {
  if ((cp >= '!' && cp <= '~') || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
    return (int)cp;
  if (cp >= 256 && cp <= 288) return (int)(cp - 256);
  if (cp >= 289 && cp <= 322) return (int)(cp - 162);
  if (cp == 323) return 0xAD;
  return -1;
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
