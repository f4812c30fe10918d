/* sentencepiece .model files: a protobuf ModelProto read by a small bounded
 * wire-format reader (docs/dependencies.md says why not libprotobuf), then
 * encoded and decoded as the sentencepiece library does:
 *   normalize: the precompiled charsmap's rules (nmt_nfkc, ...; longest
 *   match) or identity, leading /
 *   repeated / trailing spaces removed when remove_extra_whitespaces, the
 *   dummy prefix, ' ' -> U+2581; user-defined symbols pass unchanged;
 *   BPE: characters (user-defined symbols whole and frozen), the pair whose
 *   concatenation is a piece with the highest score merged first (leftmost
 *   on ties), unused pieces split back;
 *   unigram: Viterbi over the pieces (user-defined ones with a length bonus),
 *   an unknown character scored min_score - 10, as EncodeOptimized;
 *   then consecutive unknowns merged, and with byte_fallback an unknown
 *   piece becomes its bytes' <0xNN> pieces;
 *   decode: control pieces are empty, unknown ones the unk surface, byte
 *   runs their UTF-8 (an invalid byte one U+FFFD), others with U+2581 -> ' '
 *   and one leading U+2581 of the first non-control piece dropped. */
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

static const char kSpace[] = "\xE2\x96\x81"; /* U+2581 */

enum {
  SPM_NORMAL = 1,
  SPM_UNKNOWN = 2,
  SPM_CONTROL = 3,
  SPM_USER = 4,
  SPM_UNUSED = 5,
  SPM_BYTE = 6
};

/* ---- protobuf wire format ---------------------------------------------------------- */
typedef struct pb {
  const unsigned char* p;
  size_t n, i;
} pb;

/* 0 ok, -1 malformed. */
static int pb_varint(pb* r, uint64_t* v) {
  int shift = 0;
  *v = 0;
  while (r->i < r->n && shift < 64) {
    unsigned char c = r->p[r->i++];
    *v |= (uint64_t)(c & 0x7F) << shift;
    if (!(c & 0x80)) return 0;
    shift += 7;
  }
  return -1;
}

/* The next field: number, wire type, and for length-delimited ones the
 * payload; for varints the value; for fixed32 the 4 bytes in *v. */
static int pb_field(pb* r, uint32_t* field, int* wt, uint64_t* v, const unsigned char** data,
                    size_t* len) {
  uint64_t key;
  if (pb_varint(r, &key) != 0 || key >> 3 == 0 || key >> 3 > 0x1FFFFFFF) return -1;
  *field = (uint32_t)(key >> 3);
  *wt = (int)(key & 7);
  switch (*wt) {
    case 0: return pb_varint(r, v);
    case 1:
      if (r->n - r->i < 8) return -1;
      r->i += 8;
      return 0;
    case 2:
      if (pb_varint(r, v) != 0 || *v > r->n - r->i) return -1;
      *data = r->p + r->i;
      *len = (size_t)*v;
      r->i += (size_t)*v;
      return 0;
    case 5:
      if (r->n - r->i < 4) return -1;
      *v = (uint64_t)r->p[r->i] | (uint64_t)r->p[r->i + 1] << 8 | (uint64_t)r->p[r->i + 2] << 16 |
           (uint64_t)r->p[r->i + 3] << 24;
      r->i += 4;
      return 0;
    default: return -1; /* groups (3, 4) and reserved types */
  }
}

static pterun_status spm_bad(pterun_tokenizer* t, const char* what) {
  return tok_fail(t, PTERUN_STATUS_INVALID_DATA, "sentencepiece model: %s", what);
}

typedef struct spm_trainer {
  uint64_t model_type;
  int byte_fallback, suffix;
  int64_t bos, eos;
  const unsigned char* unk_surface;
  size_t unk_surface_len;
  int has_unk_surface;
} spm_trainer;

static pterun_status read_piece(pterun_tokenizer* t, const unsigned char* d, size_t n,
                                uint32_t id) {
  pb r = {d, n, 0};
  const unsigned char* piece = NULL;
  size_t plen = 0;
  float score = 0.f;
  uint64_t type = SPM_NORMAL;
  unsigned attr = 0;
  int rc;
  while (r.i < r.n) {
    uint32_t f;
    int wt;
    uint64_t v = 0;
    const unsigned char* p = NULL;
    size_t len = 0;
    if (pb_field(&r, &f, &wt, &v, &p, &len) != 0) return spm_bad(t, "a piece is malformed");
    if (f == 1 && wt == 2) {
      piece = p;
      plen = len;
    } else if (f == 2 && wt == 5) {
      uint32_t bits = (uint32_t)v;
      memcpy(&score, &bits, sizeof score);
    } else if (f == 3 && wt == 0) {
      type = v;
    }
  }
  if (piece == NULL || plen == 0) return spm_bad(t, "a piece has no text");
  {
    size_t i = 0;
    while (i < plen) {
      uint32_t cp;
      size_t k = tok_utf8_next(piece + i, plen - i, &cp);
      if (k == 0) return spm_bad(t, "a piece is not UTF-8");
      i += k;
    }
  }
  switch (type) {
    case SPM_NORMAL: break;
    case SPM_UNKNOWN: attr = TOK_ATTR_UNKNOWN; break;
    case SPM_CONTROL: attr = TOK_ATTR_CONTROL | TOK_ATTR_SPECIAL; break;
    case SPM_USER: attr = TOK_ATTR_USER; break;
    case SPM_UNUSED: attr = TOK_ATTR_UNUSED; break;
    case SPM_BYTE: attr = TOK_ATTR_BYTE; break;
    default: return spm_bad(t, "a piece has an unknown type");
  }
  rc = tok_vocab_set(t, id, piece, plen, attr);
  if (rc == -1) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (rc == -2) return spm_bad(t, "too many pieces, or one too long");
  t->score[id] = score;
  if (plen > t->max_piece_len) t->max_piece_len = plen;
  return PTERUN_STATUS_OK;
}

static pterun_status read_trainer(pterun_tokenizer* t, const unsigned char* d, size_t n,
                                  spm_trainer* tr) {
  pb r = {d, n, 0};
  while (r.i < r.n) {
    uint32_t f;
    int wt;
    uint64_t v = 0;
    const unsigned char* p = NULL;
    size_t len = 0;
    if (pb_field(&r, &f, &wt, &v, &p, &len) != 0) return spm_bad(t, "trainer_spec is malformed");
    if (wt == 0) {
      if (f == 3) tr->model_type = v;
      if (f == 35) tr->byte_fallback = v != 0;
      if (f == 24) tr->suffix = v != 0;
      if (f == 41) tr->bos = (int32_t)(uint32_t)v;
      if (f == 42) tr->eos = (int32_t)(uint32_t)v;
    } else if (wt == 2 && f == 44) {
      tr->unk_surface = p;
      tr->unk_surface_len = len;
      tr->has_unk_surface = 1;
    }
  }
  return PTERUN_STATUS_OK;
}

/* The precompiled charsmap (nmt_nfkc and other rules): a little-endian
 * uint32 byte size, a darts-clone double array of that size, then the
 * NUL-terminated replacement strings its values point into. */
static pterun_status read_charsmap(pterun_tokenizer* t, const unsigned char* d, size_t n) {
  uint32_t size;
  size_t k;
  if (n <= 4) return spm_bad(t, "precompiled_charsmap is too short");
  size = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
  if (size == 0 || size % 4 != 0 || size > n - 4)
    return spm_bad(t, "precompiled_charsmap's trie size is out of range");
  free(t->cm_units);
  free(t->cm_text);
  t->cm_n = size / 4;
  t->cm_units = (uint32_t*)malloc(size);
  t->cm_text_len = n - 4 - size;
  t->cm_text = (char*)malloc(t->cm_text_len + 1);
  if (t->cm_units == NULL || t->cm_text == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (k = 0; k < t->cm_n; ++k) {
    const unsigned char* u = d + 4 + 4 * k;
    t->cm_units[k] =
        (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
  }
  if (t->cm_text_len) memcpy(t->cm_text, d + 4 + size, t->cm_text_len);
  t->cm_text[t->cm_text_len] = '\0'; /* a last string without its NUL stops here */
  return PTERUN_STATUS_OK;
}

static pterun_status read_normalizer(pterun_tokenizer* t, const unsigned char* d, size_t n) {
  pb r = {d, n, 0};
  while (r.i < r.n) {
    uint32_t f;
    int wt;
    uint64_t v = 0;
    const unsigned char* p = NULL;
    size_t len = 0;
    if (pb_field(&r, &f, &wt, &v, &p, &len) != 0) return spm_bad(t, "normalizer_spec is malformed");
    if (wt == 0) {
      if (f == 3) t->add_dummy_prefix = v != 0;
      if (f == 4) t->remove_extra_ws = v != 0;
      if (f == 5) t->escape_ws = v != 0;
    } else if (wt == 2 && f == 2 && len > 0) {
      PTERUN_TRY(read_charsmap(t, p, len));
    } else if (wt == 2 && f == 6 && len > 0) {
      return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                      "sentencepiece model: normalization_rule_tsv is not supported");
    }
  }
  return PTERUN_STATUS_OK;
}

pterun_status tok_spm_load(pterun_tokenizer* t, const unsigned char* data, size_t size) {
  pb r = {data, size, 0};
  spm_trainer tr;
  uint32_t id = 0;
  size_t k;
  int have_norm = 0;
  memset(&tr, 0, sizeof tr);
  tr.model_type = 1; /* UNIGRAM */
  tr.bos = 1;
  tr.eos = 2;
  t->add_dummy_prefix = t->remove_extra_ws = t->escape_ws = 1;
  while (r.i < r.n) {
    uint32_t f;
    int wt;
    uint64_t v = 0;
    const unsigned char* p = NULL;
    size_t len = 0;
    if (pb_field(&r, &f, &wt, &v, &p, &len) != 0) return spm_bad(t, "not a ModelProto");
    if (wt != 2) continue;
    if (f == 1) {
      PTERUN_TRY(read_piece(t, p, len, id));
      ++id;
    } else if (f == 2) {
      PTERUN_TRY(read_trainer(t, p, len, &tr));
    } else if (f == 3) {
      have_norm = 1;
      PTERUN_TRY(read_normalizer(t, p, len));
    }
  }
  (void)have_norm;
  if (id == 0) return spm_bad(t, "no pieces");
  if (tr.model_type != 1 && tr.model_type != 2)
    return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                    "sentencepiece model: model_type %llu (only UNIGRAM 1 and BPE 2)",
                    (unsigned long long)tr.model_type);
  if (!t->escape_ws)
    return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                    "sentencepiece model: escape_whitespaces=false is not supported");
  if (tr.suffix)
    return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED,
                    "sentencepiece model: treat_whitespace_as_suffix is not supported");
  t->spm_type = (int)tr.model_type;
  t->byte_fallback = tr.byte_fallback;
  /* The unk surface: the trainer's, or sentencepiece's default " \u2047 ". */
  if (tr.has_unk_surface) {
    if (tr.unk_surface_len >= sizeof t->unk_surface) return spm_bad(t, "unk_surface too long");
    memcpy(t->unk_surface, tr.unk_surface, tr.unk_surface_len);
    t->unk_surface_len = tr.unk_surface_len;
  } else {
    memcpy(t->unk_surface, " \xE2\x81\x87 ", 5);
    t->unk_surface_len = 5;
  }
  /* Piece types: one unknown piece; byte pieces only with byte_fallback. */
  t->unk_id = -1;
  t->min_score = 3.4e38f;
  t->max_score = 1.17549435e-38f; /* FLT_MIN, as sentencepiece starts */
  for (k = 0; k < t->n_vocab; ++k) {
    uint16_t a = t->attr[k];
    if (a & TOK_ATTR_UNKNOWN) {
      if (t->unk_id >= 0) return spm_bad(t, "more than one unknown piece");
      t->unk_id = (int64_t)k;
    }
    if ((a & TOK_ATTR_BYTE) && !t->byte_fallback)
      return spm_bad(t, "byte pieces without byte_fallback");
    if (!(a & (TOK_ATTR_UNKNOWN | TOK_ATTR_CONTROL | TOK_ATTR_USER | TOK_ATTR_UNUSED |
               TOK_ATTR_BYTE))) {
      if (t->score[k] < t->min_score) t->min_score = t->score[k];
      if (t->score[k] > t->max_score) t->max_score = t->score[k];
    }
    /* Control, unknown and byte pieces are not matched in text. */
    if (a & (TOK_ATTR_UNKNOWN | TOK_ATTR_CONTROL | TOK_ATTR_BYTE)) t->attr[k] &= ~TOK_ATTR_MODEL;
  }
  if (t->unk_id < 0) return spm_bad(t, "no unknown piece");
  if (tok_vocab_index(t) != 0) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (t->byte_fallback) {
    unsigned b;
    for (b = 0; b < 256; ++b) {
      static const char hex[] = "0123456789ABCDEF";
      char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
      for (k = 0; k < t->n_vocab; ++k)
        if ((t->attr[k] & TOK_ATTR_BYTE) && t->len[k] == 6 &&
            memcmp(t->pool + t->off[k], name, 6) == 0)
          break;
      t->byte_ids[b] = k < t->n_vocab ? (int64_t)k : -1;
      if (t->byte_ids[b] < 0) return spm_bad(t, "byte_fallback without all 256 byte pieces");
    }
  }
  if (tr.bos >= 0 && (uint64_t)tr.bos < t->n_vocab && (t->attr[tr.bos] & TOK_ATTR_CONTROL))
    t->bos_id = tr.bos;
  if (tr.eos >= 0 && (uint64_t)tr.eos < t->n_vocab && (t->attr[tr.eos] & TOK_ATTR_CONTROL))
    t->eos_id = tr.eos;
  return PTERUN_STATUS_OK;
}

/* ---- encoding -------------------------------------------------------------------- */
/* The longest user-defined piece at s[0..n), or 0. */
static size_t user_match(const pterun_tokenizer* t, const char* s, size_t n) {
  size_t k, best = 0;
  for (k = t->max_piece_len < n ? t->max_piece_len : n; k > 0; --k) {
    int64_t id = tok_map_get(t, &t->map, s, k);
    if (id >= 0 && (t->attr[id] & TOK_ATTR_USER)) {
      best = k;
      break;
    }
  }
  return best;
}

static int has_users(const pterun_tokenizer* t) {
  size_t k;
  for (k = 0; k < t->n_vocab; ++k)
    if (t->attr[k] & TOK_ATTR_USER) return 1;
  return 0;
}

static size_t char_len(const char* s, size_t n) {
  uint32_t cp;
  size_t k = tok_utf8_next((const unsigned char*)s, n, &cp);
  return k ? k : 1;
}

/* sentencepiece's Normalizer with identity rules. */
/* The longest charsmap rule at s[0..n): its length (0: none) and its
 * replacement. The double array's walk, every unit index checked. */
static size_t charsmap_match(const pterun_tokenizer* t, const char* s, size_t n, const char** rep,
                             size_t* rep_len) {
  size_t pos = 0, i, best = 0;
  uint32_t unit;
  if (t->cm_units == NULL) return 0;
  unit = t->cm_units[0];
  pos ^= (size_t)((unit >> 10) << ((unit & (1u << 9)) >> 6));
  for (i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s[i];
    pos ^= c;
    if (pos >= t->cm_n) break;
    unit = t->cm_units[pos];
    if ((unit & ((1u << 31) | 0xFFu)) != c) break; /* label */
    pos ^= (size_t)((unit >> 10) << ((unit & (1u << 9)) >> 6));
    if (pos >= t->cm_n) break;
    if ((unit >> 8) & 1u) { /* has a leaf: a rule ends here */
      uint32_t v = t->cm_units[pos] & ((1u << 31) - 1);
      if (v < t->cm_text_len) {
        best = i + 1;
        *rep = t->cm_text + v;
        *rep_len = strlen(t->cm_text + v);
      }
    }
  }
  return best;
}

/* sentencepiece's NormalizePrefix: a user-defined symbol, else the longest
 * charsmap rule, else one character; the piece and the bytes consumed. */
static size_t normalize_prefix(const pterun_tokenizer* t, const char* s, size_t n, int users,
                               const char** piece, size_t* piece_len) {
  size_t u = users ? user_match(t, s, n) : 0, m;
  if (u > 0) {
    *piece = s;
    *piece_len = u;
    return u;
  }
  if ((m = charsmap_match(t, s, n, piece, piece_len)) > 0) return m;
  *piece = s;
  *piece_len = char_len(s, n);
  return *piece_len;
}

static void normalize(const pterun_tokenizer* t, const char* s, size_t n, int users, tok_buf* out) {
  size_t i = 0;
  int prev_space;
  const char* p;
  size_t pl;
  if (n == 0) return;
  if (t->remove_extra_ws) /* leading characters that normalize to " " */
    while (i < n) {
      size_t c = normalize_prefix(t, s + i, n - i, users, &p, &pl);
      if (!(pl == 1 && p[0] == ' ')) break;
      i += c;
    }
  if (i == n) return;
  if (t->add_dummy_prefix) tok_buf_put(out, kSpace, 3);
  prev_space = t->remove_extra_ws;
  while (i < n) {
    size_t c = normalize_prefix(t, s + i, n - i, users, &p, &pl), a = 0, k;
    i += c;
    while (prev_space && a < pl && p[a] == ' ') ++a;
    if (a < pl) {
      for (k = a; k < pl; ++k) {
        if (p[k] == ' ')
          tok_buf_put(out, kSpace, 3);
        else
          tok_buf_putc(out, p[k]);
      }
      prev_space = p[pl - 1] == ' ';
    }
    if (!t->remove_extra_ws) prev_space = 0;
  }
  if (t->remove_extra_ws)
    while (out->n >= 3 && memcmp(out->p + out->n - 3, kSpace, 3) == 0) out->n -= 3;
}

/* A piece's id for the model: a normal, user-defined or unused piece, or -1. */
static int64_t piece_id(const pterun_tokenizer* t, const char* s, size_t n) {
  return tok_map_get(t, &t->map, s, n);
}

static int spm_pair(const pterun_tokenizer* t, const char* piece, const tok_sym* a,
                    const tok_sym* b, double* priority, int64_t* id) {
  int64_t r;
  if (a->id == -2 || b->id == -2) return 0; /* frozen (user-defined) */
  r = piece_id(t, piece + a->start, (size_t)a->len + b->len);
  if (r < 0) return 0;
  *priority = -(double)t->score[r]; /* highest score first */
  *id = r;
  return 1;
}

/* Appends one result piece: unknown pieces merge with a preceding unknown;
 * with byte fallback an unknown piece becomes bytes. Results are buffered as
 * (start, len, id) so consecutive unknowns can merge. */
typedef struct spm_out {
  tok_sym* r;
  size_t n, cap;
  int oom;
} spm_out;

static void out_add(spm_out* o, uint32_t start, uint32_t len, int64_t id, int64_t unk) {
  if (o->n > 0 && id == unk && o->r[o->n - 1].id == unk &&
      o->r[o->n - 1].start + o->r[o->n - 1].len == start) {
    o->r[o->n - 1].len += len;
    return;
  }
  if (o->n == o->cap) {
    size_t c = o->cap ? 2 * o->cap : 64;
    tok_sym* q = (tok_sym*)realloc(o->r, c * sizeof *q);
    if (q == NULL) {
      o->oom = 1;
      return;
    }
    o->r = q;
    o->cap = c;
  }
  o->r[o->n].start = start;
  o->r[o->n].len = len;
  o->r[o->n].id = id;
  o->n++;
}

/* BPE's unused pieces are split back into the pair that formed them. */
static void resegment(const pterun_tokenizer* t, const char* s, uint32_t start, uint32_t len,
                      spm_out* o, int depth) {
  int64_t id = piece_id(t, s + start, len);
  if (id >= 0 && (t->attr[id] & TOK_ATTR_UNUSED) && depth < 64) {
    /* The highest-scoring split into two pieces (the one BPE merged). */
    uint32_t k, best = 0;
    double bs = 0;
    for (k = (uint32_t)char_len(s + start, len); k < len;
         k += (uint32_t)char_len(s + start + k, len - k)) {
      int64_t a = piece_id(t, s + start, k), b = piece_id(t, s + start + k, len - k);
      if (a >= 0 && b >= 0) {
        double sc = (double)t->score[a] + t->score[b];
        if (best == 0 || sc > bs) {
          best = k;
          bs = sc;
        }
      }
    }
    if (best > 0) {
      resegment(t, s, start, best, o, depth + 1);
      resegment(t, s, start + best, len - best, o, depth + 1);
      return;
    }
  }
  out_add(o, start, len, id >= 0 ? id : t->unk_id, t->unk_id);
}

static pterun_status encode_bpe(const pterun_tokenizer* t, const char* s, size_t n, int users,
                                spm_out* o) {
  tok_sym* syms = (tok_sym*)malloc((n ? n : 1) * sizeof *syms);
  size_t cnt = 0, i = 0, k;
  if (syms == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  while (i < n) {
    size_t u = users ? user_match(t, s + i, n - i) : 0;
    size_t len = u ? u : char_len(s + i, n - i);
    syms[cnt].start = (uint32_t)i;
    syms[cnt].len = (uint32_t)len;
    syms[cnt].id = u ? -2 : piece_id(t, s + i, len);
    ++cnt;
    i += len;
  }
  if (tok_bpe(t, s, syms, &cnt, spm_pair) != 0) {
    free(syms);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (k = 0; k < cnt; ++k) resegment(t, s, syms[k].start, syms[k].len, o, 0);
  free(syms);
  return o->oom ? PTERUN_STATUS_OUT_OF_MEMORY : PTERUN_STATUS_OK;
}

typedef struct vnode {
  float score;
  int64_t id;
  int64_t start; /* -1: not reached */
} vnode;

static pterun_status encode_unigram(const pterun_tokenizer* t, const char* s, size_t n,
                                    spm_out* o) {
  vnode* best = (vnode*)malloc((n + 1) * sizeof *best);
  size_t i, k, at;
  float unk_score = t->min_score - 10.0f;
  uint32_t* back;
  size_t nb = 0;
  if (best == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (i = 0; i <= n; ++i) {
    best[i].score = 0.f;
    best[i].id = -1;
    best[i].start = -1;
  }
  for (i = 0; i < n;) {
    size_t mblen = char_len(s + i, n - i),
           lim = n - i < t->max_piece_len ? n - i : t->max_piece_len;
    float here = best[i].score;
    int single = 0;
    for (k = 1; k <= lim; ++k) {
      int64_t id = piece_id(t, s + i, k);
      float sc, cand;
      vnode* tn;
      if (id < 0 || (t->attr[id] & TOK_ATTR_UNUSED)) continue;
      /* As EncodeOptimized, in float (the sums' rounding decides ties, so the
       * arithmetic must be the library's): user-defined pieces get
       * length * max_score - 0.1. */
      sc = (t->attr[id] & TOK_ATTR_USER) ? (float)k * t->max_score - 0.1f : t->score[id];
      cand = sc + here;
      tn = &best[i + k];
      if (tn->start == -1 || cand > tn->score) {
        tn->score = cand;
        tn->start = (int64_t)i;
        tn->id = id;
      }
      if (k == mblen) single = 1;
    }
    if (!single) {
      vnode* tn = &best[i + mblen];
      float cand = unk_score + here;
      if (tn->start == -1 || cand > tn->score) {
        tn->score = cand;
        tn->start = (int64_t)i;
        tn->id = t->unk_id;
      }
    }
    i += mblen;
  }
  /* Backtrack (the path is collected end to start, then replayed). */
  back = (uint32_t*)malloc((n + 1) * sizeof *back);
  if (back == NULL) {
    free(best);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  for (at = n; at > 0 && best[at].start >= 0; at = (size_t)best[at].start)
    back[nb++] = (uint32_t)at;
  while (nb > 0) {
    size_t end = back[--nb], start = (size_t)best[end].start;
    out_add(o, (uint32_t)start, (uint32_t)(end - start), best[end].id, t->unk_id);
  }
  free(back);
  free(best);
  return o->oom ? PTERUN_STATUS_OUT_OF_MEMORY : PTERUN_STATUS_OK;
}

pterun_status tok_spm_encode(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out) {
  tok_buf norm = {0, 0, 0, 0};
  spm_out o;
  pterun_status st;
  size_t k, b;
  int users = has_users(t);
  memset(&o, 0, sizeof o);
  normalize(t, s, n, users, &norm);
  if (norm.oom) {
    tok_buf_free(&norm);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  if (norm.n == 0) {
    tok_buf_free(&norm);
    return PTERUN_STATUS_OK;
  }
  st = t->spm_type == 2 ? encode_bpe(t, norm.p, norm.n, users, &o)
                        : encode_unigram(t, norm.p, norm.n, &o);
  if (st == PTERUN_STATUS_OK) {
    for (k = 0; k < o.n; ++k) {
      if (o.r[k].id == t->unk_id && t->byte_fallback) {
        for (b = 0; b < o.r[k].len; ++b)
          tok_ids_put(out, t->byte_ids[(unsigned char)norm.p[o.r[k].start + b]]);
      } else {
        tok_ids_put(out, o.r[k].id);
      }
    }
  }
  free(o.r);
  tok_buf_free(&norm);
  return st;
}

/* ---- decoding -------------------------------------------------------------------- */
static int byte_value(const pterun_tokenizer* t, int64_t id) {
  const char* s = t->pool + t->off[id];
  int v = 0, k;
  for (k = 3; k < 5; ++k) {
    char c = s[k];
    v = v * 16 + (c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : c - 'a' + 10);
  }
  return v;
}

pterun_status tok_spm_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                             tok_buf* out, size_t* stable) {
  size_t i = 0, base = out->n;
  int first = 1; /* before the first piece that is not a control one */
  (void)skip;    /* control pieces decode to nothing either way */
  while (i < n) {
    int64_t id = ids[i];
    uint16_t a;
    if (id < 0 || (uint64_t)id >= t->n_vocab || !(t->attr[id] & TOK_ATTR_PRESENT)) {
      ++i;
      continue;
    }
    a = t->attr[id];
    if (a & TOK_ATTR_BYTE) {
      /* A run of byte pieces: each character whole, each invalid byte one
       * U+FFFD (sentencepiece decodes the run one character at a time). */
      tok_buf run = {0, 0, 0, 0};
      size_t q = 0, j = i;
      while (j < n && ids[j] >= 0 && (uint64_t)ids[j] < t->n_vocab &&
             (t->attr[ids[j]] & TOK_ATTR_BYTE))
        tok_buf_putc(&run, (char)byte_value(t, ids[j++]));
      if (run.oom) {
        tok_buf_free(&run);
        return PTERUN_STATUS_OUT_OF_MEMORY;
      }
      if (j == n && stable != NULL) *stable = out->n - base; /* an open run */
      while (q < run.n) {
        uint32_t cp;
        size_t k = tok_utf8_next((const unsigned char*)run.p + q, run.n - q, &cp);
        if (k == 0) {
          tok_buf_put(out, "\xEF\xBF\xBD", 3);
          ++q;
        } else {
          tok_buf_put(out, run.p + q, k);
          q += k;
        }
      }
      tok_buf_free(&run);
      first = 0;
      if (j == n && stable != NULL) return PTERUN_STATUS_OK;
      i = j;
      continue;
    }
    if (a & TOK_ATTR_CONTROL) {
      ++i;
      continue;
    }
    if (a & TOK_ATTR_UNKNOWN) {
      tok_buf_put(out, t->unk_surface, t->unk_surface_len);
    } else {
      const char* s = t->pool + t->off[id];
      size_t len = t->len[id], k = 0;
      /* The dummy prefix: one leading U+2581 of the first piece only. */
      if (first && t->add_dummy_prefix && len >= 3 && memcmp(s, kSpace, 3) == 0) k = 3;
      while (k < len) {
        if (k + 3 <= len && memcmp(s + k, kSpace, 3) == 0) {
          tok_buf_putc(out, ' ');
          k += 3;
        } else {
          tok_buf_putc(out, s[k++]);
        }
      }
    }
    first = 0;
    ++i;
  }
  if (stable != NULL) *stable = out->n - base;
  return PTERUN_STATUS_OK;
}
