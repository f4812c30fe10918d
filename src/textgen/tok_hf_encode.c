/* Hugging Face tokenizer.json, encoding (tok_hf.c has the whole picture and
 * the loading): added tokens split out, then per segment the normalizers,
 * the pre-tokenizer steps and the BPE model. */
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

/* ByteLevel's byte -> character mapping (GPT-2; tok_hf_decode.c has the
 * inverse): the printable Latin-1
 * bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) map to themselves, the other 68 to
 * U+0100.. in byte order: 0..0x20, then 0x7F..0xA0, then 0xAD. */
static uint32_t byte_char(unsigned b) {
  if (b <= 0x20) return 256 + b;
  if (b >= 0x7F && b <= 0xA0) return b + 162; /* 256 + 33 + (b - 0x7F) */
  if (b == 0xAD) return 323;
  return b;
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
  h = tok_merge_slot(t, (uint32_t)a->id, (uint32_t)b->id);
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
