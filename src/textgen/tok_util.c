/* Buffers, UTF-8, the vocabulary tables and the BPE merge loop shared by the
 * tokenizer formats. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

/* ---- buffer ---------------------------------------------------------------------- */
void tok_buf_free(tok_buf* b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

int tok_buf_reserve(tok_buf* b, size_t extra) {
  size_t want;
  char* p;
  if (b->oom) return -1;
  if (extra > SIZE_MAX / 2 - b->n) {
    b->oom = 1;
    return -1;
  }
  want = b->n + extra + 1; /* room for a NUL */
  if (want <= b->cap) return 0;
  if (want < 2 * b->cap) want = 2 * b->cap;
  if (want < 64) want = 64;
  p = (char*)realloc(b->p, want);
  if (p == NULL) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = want;
  return 0;
}

void tok_buf_put(tok_buf* b, const void* p, size_t n) {
  /* Reserves even for n == 0: after any put, b->p is a buffer (never NULL
   * plus an offset). */
  if (tok_buf_reserve(b, n) != 0) return;
  if (n > 0) memcpy(b->p + b->n, p, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void tok_buf_putc(tok_buf* b, char c) {
  tok_buf_put(b, &c, 1);
}

void tok_buf_put_cp(tok_buf* b, uint32_t cp) {
  unsigned char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (unsigned char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (unsigned char)(0xC0 | (cp >> 6));
    u[1] = (unsigned char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (unsigned char)(0xE0 | (cp >> 12));
    u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (unsigned char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (unsigned char)(0xF0 | (cp >> 18));
    u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  tok_buf_put(b, u, n);
}

/* ---- UTF-8 ------------------------------------------------------------------------ */
/* Valid second-byte range for lead byte c (Unicode table 3-7), or 0. */
static int utf8_second(unsigned char c, unsigned char* lo, unsigned char* hi) {
  *lo = 0x80;
  *hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c == 0xE0) *lo = 0xA0;
  if (c == 0xED) *hi = 0x9F;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c == 0xF0) *lo = 0x90;
  if (c == 0xF4) *hi = 0x8F;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 0;
}

/* Bytes of the longest valid prefix of a sequence at p (1..need), and need. */
static size_t utf8_prefix(const unsigned char* p, size_t n, size_t* need) {
  unsigned char lo, hi;
  size_t k, len = (size_t)utf8_second(p[0], &lo, &hi);
  *need = len;
  if (len == 0) return 0;
  if (n < 2 || p[1] < lo || p[1] > hi) return 1;
  for (k = 2; k < len; ++k)
    if (k >= n || p[k] < 0x80 || p[k] > 0xBF) return k;
  return len;
}

size_t tok_utf8_next(const unsigned char* p, size_t n, uint32_t* cp) {
  size_t need, got, k;
  uint32_t v;
  if (n == 0) return 0;
  if (p[0] < 0x80) {
    *cp = p[0];
    return 1;
  }
  got = utf8_prefix(p, n, &need);
  if (need == 0 || got < need) return 0;
  v = (uint32_t)p[0] & (need == 2 ? 0x1Fu : need == 3 ? 0x0Fu : 0x07u);
  for (k = 1; k < need; ++k) v = (v << 6) | (p[k] & 0x3Fu);
  *cp = v;
  return need;
}

size_t tok_utf8_incomplete_tail(const unsigned char* p, size_t n) {
  size_t back;
  for (back = 1; back <= 3 && back <= n; ++back) {
    const unsigned char* q = p + n - back;
    size_t need, got;
    if (*q < 0x80) return 0;
    if (*q >= 0xC0) {
      got = utf8_prefix(q, back, &need);
      return need > back && got == back ? back : 0;
    }
  }
  return 0;
}

void tok_utf8_lossy(tok_buf* out, const unsigned char* p, size_t n, size_t* hold) {
  size_t i = 0, run = 0, tail;
  if (p == NULL || n == 0) {
    if (hold != NULL) *hold = 0;
    return;
  }
  tail = hold != NULL ? tok_utf8_incomplete_tail(p, n) : 0;
  n -= tail;
  if (hold != NULL) *hold = tail;
  while (i < n) {
    size_t need, got;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    got = utf8_prefix(p + i, n - i, &need);
    if (need != 0 && got == need) {
      i += need;
      continue;
    }
    /* Maximal subpart: a valid-but-cut prefix is one replacement, a byte
     * that starts nothing is one. */
    tok_buf_put(out, p + run, i - run);
    tok_buf_put(out, "\xEF\xBF\xBD", 3);
    i += got > 0 ? got : 1;
    run = i;
  }
  tok_buf_put(out, p + run, n - run);
}

/* ---- failures ----------------------------------------------------------------------- */
pterun_status tok_fail(pterun_tokenizer* t, pterun_status st, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pterun_log(t != NULL ? &t->logger : NULL, PTERUN_LOG_ERROR, "tokenizer: %s", msg);
  return st;
}

/* ---- vocabulary -------------------------------------------------------------------- */
static int grow_ids(pterun_tokenizer* t, size_t need) {
  size_t cap = t->id_cap ? t->id_cap : 1024, k;
  uint32_t *o, *l;
  uint16_t* a;
  float* s;
  if (need <= t->id_cap) return 0;
  while (cap < need) cap *= 2;
  if ((o = (uint32_t*)realloc(t->off, cap * sizeof *o)) == NULL) return -1;
  t->off = o;
  if ((l = (uint32_t*)realloc(t->len, cap * sizeof *l)) == NULL) return -1;
  t->len = l;
  if ((a = (uint16_t*)realloc(t->attr, cap * sizeof *a)) == NULL) return -1;
  t->attr = a;
  if ((s = (float*)realloc(t->score, cap * sizeof *s)) == NULL) return -1;
  t->score = s;
  for (k = t->id_cap; k < cap; ++k) {
    t->off[k] = t->len[k] = 0;
    t->attr[k] = 0;
    t->score[k] = 0.f;
  }
  t->id_cap = cap;
  return 0;
}

static int pool_add(pterun_tokenizer* t, const void* p, size_t n, uint32_t* off) {
  if (t->pool == NULL || t->pool_len + n > t->pool_cap) { /* allocated even for n == 0 */
    size_t c = t->pool_cap ? t->pool_cap : 4096;
    char* q;
    while (c < t->pool_len + n) c *= 2;
    if (c > UINT32_MAX) return -1;
    q = (char*)realloc(t->pool, c);
    if (q == NULL) return -1;
    t->pool = q;
    t->pool_cap = c;
  }
  if (n) memcpy(t->pool + t->pool_len, p, n);
  *off = (uint32_t)t->pool_len;
  t->pool_len += n;
  return 0;
}

int tok_added_add(pterun_tokenizer* t, uint32_t id, const void* p, size_t n, int special,
                  int lstrip, int rstrip, int single_word) {
  tok_added* a;
  if ((size_t)id >= TOK_MAX_VOCAB || n > TOK_MAX_TOKEN_BYTES || n == 0) return -2;
  if (grow_ids(t, (size_t)id + 1) != 0) return -1;
  if ((t->n_added & (t->n_added - 1)) == 0) { /* grow at powers of two */
    a = (tok_added*)realloc(t->added, (t->n_added ? 2 * t->n_added : 16) * sizeof *a);
    if (a == NULL) return -1;
    t->added = a;
  }
  a = &t->added[t->n_added];
  if (pool_add(t, p, n, &a->off) != 0) return -1;
  a->id = id;
  a->len = (uint32_t)n;
  a->special = (uint8_t)!!special;
  a->lstrip = (uint8_t)!!lstrip;
  a->rstrip = (uint8_t)!!rstrip;
  a->single_word = (uint8_t)!!single_word;
  t->n_added++;
  if (!(t->attr[id] & TOK_ATTR_PRESENT)) {
    t->off[id] = a->off;
    t->len[id] = a->len;
  }
  t->attr[id] |= TOK_ATTR_PRESENT | TOK_ATTR_ADDED | (special ? TOK_ATTR_SPECIAL : 0);
  if ((size_t)id + 1 > t->n_vocab) t->n_vocab = (size_t)id + 1;
  return 0;
}

int tok_vocab_set(pterun_tokenizer* t, uint32_t id, const void* p, size_t n, unsigned attr) {
  if ((size_t)id >= TOK_MAX_VOCAB || n > TOK_MAX_TOKEN_BYTES) return -2;
  if ((size_t)id < t->n_vocab && (t->attr[id] & TOK_ATTR_PRESENT)) return -2;
  if (grow_ids(t, (size_t)id + 1) != 0) return -1;
  if (pool_add(t, p, n, &t->off[id]) != 0) return -1;
  t->len[id] = (uint32_t)n;
  t->attr[id] = (uint16_t)(attr | TOK_ATTR_PRESENT | TOK_ATTR_MODEL);
  if ((size_t)id + 1 > t->n_vocab) t->n_vocab = (size_t)id + 1;
  return 0;
}

const char* tok_text(const pterun_tokenizer* t, size_t id, size_t* n) {
  *n = t->len[id];
  return t->pool + t->off[id];
}

static uint64_t hash_bytes(const void* p, size_t n) {
  const unsigned char* s = (const unsigned char*)p;
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  size_t i;
  for (i = 0; i < n; ++i) h = (h ^ s[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static int map_build(pterun_tokenizer* t, tok_map* m) {
  size_t count = 0, cap = 16, i;
  for (i = 0; i < t->n_vocab; ++i)
    if (t->attr[i] & TOK_ATTR_MODEL) ++count;
  while (cap < 2 * count) cap *= 2;
  free(m->slots);
  m->slots = (uint32_t*)calloc(cap, sizeof(uint32_t));
  if (m->slots == NULL) return -1;
  m->mask = cap - 1;
  for (i = 0; i < t->n_vocab; ++i) {
    size_t h;
    if (!(t->attr[i] & TOK_ATTR_MODEL)) continue;
    /* The first id with a given text wins (a file may repeat one). */
    if (tok_map_get(t, m, t->pool + t->off[i], t->len[i]) >= 0) continue;
    h = (size_t)hash_bytes(t->pool + t->off[i], t->len[i]) & m->mask;
    while (m->slots[h] != 0) h = (h + 1) & m->mask;
    m->slots[h] = (uint32_t)i + 1;
  }
  return 0;
}

int tok_vocab_index(pterun_tokenizer* t) {
  size_t k;
  if (map_build(t, &t->map) != 0) return -1;
  free(t->added_of);
  t->added_of = (int32_t*)malloc((t->n_vocab ? t->n_vocab : 1) * sizeof(int32_t));
  if (t->added_of == NULL) return -1;
  for (k = 0; k < t->n_vocab; ++k) t->added_of[k] = -1;
  for (k = 0; k < t->n_added; ++k)
    if (t->added_of[t->added[k].id] < 0) t->added_of[t->added[k].id] = (int32_t)k;
  return 0;
}

int64_t tok_map_get(const pterun_tokenizer* t, const tok_map* m, const void* p, size_t n) {
  size_t h;
  if (m->slots == NULL) return -1;
  h = (size_t)hash_bytes(p, n) & m->mask;
  while (m->slots[h] != 0) {
    uint32_t id = m->slots[h] - 1;
    if (t->len[id] == n && (n == 0 || memcmp(t->pool + t->off[id], p, n) == 0)) return id;
    h = (h + 1) & m->mask;
  }
  return -1;
}

int tok_find_added(const pterun_tokenizer* t, const char* s, size_t n, size_t from, size_t* at,
                   size_t* len, size_t* which) {
  size_t i, k;
  if (t->n_added == 0) return 0;
  for (i = from; i < n; ++i) {
    size_t best = 0, best_k = 0;
    for (k = 0; k < t->n_added; ++k) {
      const tok_added* a = &t->added[k];
      if (a->len > best && a->len <= n - i && memcmp(s + i, t->pool + a->off, a->len) == 0) {
        best = a->len;
        best_k = k;
      }
    }
    if (best > 0) {
      *at = i;
      *len = best;
      *which = best_k;
      return 1;
    }
  }
  return 0;
}

/* ---- BPE ---------------------------------------------------------------------------- */
int tok_bpe(const pterun_tokenizer* t, const char* piece, tok_sym* syms, size_t* n,
            tok_pair_fn pair) {
  size_t count = *n, i;
  /* Each adjacent pair's merge is computed once, when the pair forms; a merge
   * then rescans the cached priorities (O(n) per merge, no lookups). */
  double* pri;
  int64_t* nid;
  unsigned char* ok;
  if (count < 2) return 0;
  pri = (double*)malloc(count * sizeof *pri);
  nid = (int64_t*)malloc(count * sizeof *nid);
  ok = (unsigned char*)malloc(count);
  if (pri == NULL || nid == NULL || ok == NULL) {
    free(pri);
    free(nid);
    free(ok);
    return -1;
  }
  for (i = 0; i + 1 < count; ++i)
    ok[i] = (unsigned char)pair(t, piece, &syms[i], &syms[i + 1], &pri[i], &nid[i]);
  ok[count - 1] = 0;
  for (;;) {
    size_t best = count;
    for (i = 0; i + 1 < count; ++i)
      if (ok[i] && (best == count || pri[i] < pri[best])) best = i;
    if (best == count) break;
    syms[best].len += syms[best + 1].len;
    syms[best].id = nid[best];
    memmove(&syms[best + 1], &syms[best + 2], (count - best - 2) * sizeof *syms);
    memmove(&pri[best + 1], &pri[best + 2], (count - best - 2) * sizeof *pri);
    memmove(&nid[best + 1], &nid[best + 2], (count - best - 2) * sizeof *nid);
    memmove(&ok[best + 1], &ok[best + 2], (count - best - 2));
    --count;
    ok[count - 1] = 0;
    if (best > 0)
      ok[best - 1] = (unsigned char)pair(t, piece, &syms[best - 1], &syms[best], &pri[best - 1],
                                         &nid[best - 1]);
    if (best + 1 < count)
      ok[best] =
          (unsigned char)pair(t, piece, &syms[best], &syms[best + 1], &pri[best], &nid[best]);
    else
      ok[best] = 0;
  }
  *n = count;
  free(pri);
  free(nid);
  free(ok);
  return 0;
}
