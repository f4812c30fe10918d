/* pterun/tokenizer.h: loading (format detection, file reading), the calls
 * every format shares, and the streaming decoder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

static int detect(const unsigned char* p, size_t n) {
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) ++i;
  if (i < n && p[i] == '{') return PTERUN_TOKENIZER_HF_JSON;
  /* A ModelProto starts with its first piece: field 1, length-delimited. */
  if (n > 0 && p[0] == 0x0A) return PTERUN_TOKENIZER_SENTENCEPIECE;
  return PTERUN_TOKENIZER_TIKTOKEN;
}

void pterun_tokenizer_destroy(pterun_tokenizer* t) {
  size_t k;
  if (t == NULL) return;
  for (k = 0; k < t->n_norms; ++k) {
    free(t->norms[k].a);
    free(t->norms[k].b);
  }
  for (k = 0; k < t->n_pres; ++k) tok_regex_free(t->pres[k].re);
  for (k = 0; k < t->n_decs; ++k) {
    free(t->decs[k].a);
    free(t->decs[k].b);
  }
  tok_regex_free(t->pattern);
  free(t->norms);
  free(t->pres);
  free(t->decs);
  free(t->merges);
  free(t->added);
  free(t->added_of);
  free(t->map.slots);
  free(t->pool);
  free(t->off);
  free(t->len);
  free(t->attr);
  free(t->score);
  free(t->cm_units);
  free(t->cm_text);
  free(t);
}

pterun_status pterun_tokenizer_load_memory(const void* data, size_t size,
                                           const pterun_tokenizer_options* options,
                                           pterun_tokenizer** out) {
  pterun_tokenizer_options o = PTERUN_TOKENIZER_OPTIONS_INIT;
  pterun_tokenizer* t;
  pterun_status st;
  size_t k;
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (data == NULL && size > 0) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (options != NULL)
    PTERUN_TRY(pterun_options_read(options, &o, sizeof o, NULL, "pterun_tokenizer_options"));
  if (o.special_count > 0 && o.special_tokens == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (size > TOK_MAX_FILE) {
    pterun_log(&o.logger, PTERUN_LOG_ERROR, "tokenizer: file of %zu bytes is larger than 1 GiB",
               size);
    return PTERUN_STATUS_INVALID_DATA;
  }
  t = (pterun_tokenizer*)calloc(1, sizeof *t);
  if (t == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  t->logger = o.logger;
  t->unk_id = t->bos_id = t->eos_id = -1;
  for (k = 0; k < 256; ++k) t->byte_ids[k] = -1;
  t->format =
      o.format != PTERUN_TOKENIZER_AUTO ? o.format : detect((const unsigned char*)data, size);
  switch (t->format) {
    case PTERUN_TOKENIZER_HF_JSON: st = tok_hf_load(t, (const char*)data, size); break;
    case PTERUN_TOKENIZER_TIKTOKEN: st = tok_tiktoken_load(t, (const char*)data, size, &o); break;
    case PTERUN_TOKENIZER_SENTENCEPIECE:
      st = tok_spm_load(t, (const unsigned char*)data, size);
      break;
    default: st = tok_fail(t, PTERUN_STATUS_INVALID_ARGUMENT, "unknown format %d", t->format);
  }
  if (st == PTERUN_STATUS_OK && t->added_of == NULL && tok_vocab_index(t) != 0)
    st = PTERUN_STATUS_OUT_OF_MEMORY;
  if (st != PTERUN_STATUS_OK) {
    pterun_tokenizer_destroy(t);
    return st;
  }
  *out = t;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_tokenizer_load_file(const char* path, const pterun_tokenizer_options* options,
                                         pterun_tokenizer** out) {
  pterun_tokenizer_options o = PTERUN_TOKENIZER_OPTIONS_INIT;
  FILE* f;
  char* buf = NULL;
  size_t n = 0, cap = 0;
  pterun_status st;
  char esc[512];
  if (out == NULL || path == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (options != NULL)
    PTERUN_TRY(pterun_options_read(options, &o, sizeof o, NULL, "pterun_tokenizer_options"));
  pterun_escape_text(path, esc, sizeof esc);
  f = fopen(path, "rb");
  if (f == NULL) {
    pterun_log(&o.logger, PTERUN_LOG_ERROR, "tokenizer: cannot open %s: %s", esc, strerror(errno));
    return PTERUN_STATUS_IO_ERROR;
  }
  /* Read in chunks (a pipe has no size); bounded by TOK_MAX_FILE. */
  for (;;) {
    size_t got;
    if (n == cap) {
      char* q;
      if (cap > TOK_MAX_FILE) break;
      cap = cap ? 2 * cap : 1 << 16;
      q = (char*)realloc(buf, cap + 1);
      if (q == NULL) {
        free(buf);
        fclose(f);
        return PTERUN_STATUS_OUT_OF_MEMORY;
      }
      buf = q;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    pterun_log(&o.logger, PTERUN_LOG_ERROR, "tokenizer: cannot read %s", esc);
    free(buf);
    fclose(f);
    return PTERUN_STATUS_IO_ERROR;
  }
  fclose(f);
  st = pterun_tokenizer_load_memory(buf, n, &o, out);
  free(buf);
  return st;
}

int pterun_tokenizer_format_of(const pterun_tokenizer* t) {
  return t != NULL ? t->format : PTERUN_TOKENIZER_AUTO;
}

size_t pterun_tokenizer_vocab_size(const pterun_tokenizer* t) {
  return t != NULL ? t->n_vocab : 0;
}

int64_t pterun_tokenizer_token_id(const pterun_tokenizer* t, const char* text, size_t len) {
  size_t k;
  if (t == NULL || (text == NULL && len > 0)) return -1;
  for (k = 0; k < t->n_added; ++k)
    if (t->added[k].len == len && memcmp(t->pool + t->added[k].off, text, len) == 0)
      return t->added[k].id;
  return tok_map_get(t, &t->map, text, len);
}

int64_t pterun_tokenizer_bos_id(const pterun_tokenizer* t) {
  return t != NULL ? t->bos_id : -1;
}
int64_t pterun_tokenizer_eos_id(const pterun_tokenizer* t) {
  return t != NULL ? t->eos_id : -1;
}

pterun_status pterun_tokenizer_encode(const pterun_tokenizer* t, const char* text, size_t len,
                                      int64_t* ids, size_t cap, size_t* count) {
  tok_ids o;
  size_t i = 0;
  pterun_status st;
  if (t == NULL || count == NULL || (text == NULL && len > 0) || (ids == NULL && cap > 0))
    return PTERUN_STATUS_INVALID_ARGUMENT;
  *count = 0;
  while (i < len) {
    uint32_t cp;
    size_t k = tok_utf8_next((const unsigned char*)text + i, len - i, &cp);
    if (k == 0) {
      pterun_log(&t->logger, PTERUN_LOG_ERROR, "tokenizer: the text is not UTF-8 at byte %zu", i);
      return PTERUN_STATUS_INVALID_DATA;
    }
    i += k;
  }
  o.ids = ids;
  o.cap = cap;
  o.n = 0;
  switch (t->format) {
    case PTERUN_TOKENIZER_HF_JSON: st = tok_hf_encode(t, text, len, &o); break;
    case PTERUN_TOKENIZER_TIKTOKEN: st = tok_tiktoken_encode(t, text, len, &o); break;
    default: st = tok_spm_encode(t, text, len, &o); break;
  }
  *count = o.n;
  return st;
}

/* The decode every call goes through: text and its stable length. */
static pterun_status decode_all(const pterun_tokenizer* t, const int64_t* ids, size_t n,
                                int special, tok_buf* out, size_t* stable) {
  int skip;
  pterun_status st;
  switch (t->format) {
    case PTERUN_TOKENIZER_HF_JSON:
      skip = special != PTERUN_TOKENIZER_SPECIAL_KEEP;
      st = tok_hf_decode(t, ids, n, skip, out, stable);
      break;
    case PTERUN_TOKENIZER_TIKTOKEN:
      skip = special == PTERUN_TOKENIZER_SPECIAL_SKIP;
      st = tok_bytes_decode(t, ids, n, skip, out, stable);
      break;
    default:
      skip = special != PTERUN_TOKENIZER_SPECIAL_KEEP;
      st = tok_spm_decode(t, ids, n, skip, out, stable);
      break;
  }
  if (st == PTERUN_STATUS_OK && out->oom) st = PTERUN_STATUS_OUT_OF_MEMORY;
  return st;
}

pterun_status pterun_tokenizer_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n,
                                      int special, char* out, size_t cap, size_t* length) {
  tok_buf b = {0, 0, 0, 0};
  pterun_status st;
  if (t == NULL || length == NULL || (ids == NULL && n > 0) || (out == NULL && cap > 0))
    return PTERUN_STATUS_INVALID_ARGUMENT;
  *length = 0;
  st = decode_all(t, ids, n, special, &b, NULL);
  if (st == PTERUN_STATUS_OK) {
    *length = b.n;
    if (cap > 0) {
      size_t k = b.n < cap - 1 ? b.n : cap - 1;
      if (k) memcpy(out, b.p, k);
      out[k] = '\0';
    }
  }
  tok_buf_free(&b);
  return st;
}

/* Bytes of ids as one stream (tiktoken): each id's bytes, then the lossy
 * UTF-8 rule over the whole; a cut character at the end is the unstable part. */
pterun_status tok_bytes_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                               tok_buf* out, size_t* stable) {
  tok_buf raw = {0, 0, 0, 0};
  size_t i, hold = 0, base = out->n;
  for (i = 0; i < n; ++i) {
    int64_t id = ids[i];
    if (id < 0 || (uint64_t)id >= t->n_vocab || !(t->attr[id] & TOK_ATTR_PRESENT)) continue;
    if (skip && (t->attr[id] & TOK_ATTR_SPECIAL)) continue;
    tok_buf_put(&raw, t->pool + t->off[id], t->len[id]);
  }
  tok_utf8_lossy(out, (const unsigned char*)raw.p, raw.n, &hold);
  if (stable != NULL) *stable = out->n - base;
  if (hold > 0) tok_utf8_lossy(out, (const unsigned char*)raw.p + raw.n - hold, hold, NULL);
  if (raw.oom) out->oom = 1;
  tok_buf_free(&raw);
  return PTERUN_STATUS_OK;
}

/* ---- streaming -------------------------------------------------------------------- */
/* Each push decodes every token so far (decoders look at the whole sequence:
 * first-token rules, byte runs) and hands out what became stable; the part
 * already handed out is checked to be unchanged. Cost per token: the decode
 * of the text so far (microseconds for a few thousand tokens). */
struct pterun_tokenizer_stream {
  const pterun_tokenizer* tok;
  int special;
  int64_t* ids;
  size_t n, cap;
  tok_buf text; /* the decode of ids */
  tok_buf sent; /* what was handed out */
  tok_buf piece;
};

pterun_status pterun_tokenizer_stream_create(const pterun_tokenizer* tok, int special,
                                             pterun_tokenizer_stream** out) {
  pterun_tokenizer_stream* s;
  if (tok == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  s = (pterun_tokenizer_stream*)calloc(1, sizeof *s);
  if (s == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  s->tok = tok;
  s->special = special;
  *out = s;
  return PTERUN_STATUS_OK;
}

void pterun_tokenizer_stream_destroy(pterun_tokenizer_stream* s) {
  if (s == NULL) return;
  free(s->ids);
  tok_buf_free(&s->text);
  tok_buf_free(&s->sent);
  tok_buf_free(&s->piece);
  free(s);
}

void pterun_tokenizer_stream_reset(pterun_tokenizer_stream* s) {
  if (s == NULL) return;
  s->n = 0;
  s->text.n = s->sent.n = s->piece.n = 0;
  s->text.oom = s->sent.oom = s->piece.oom = 0;
}

/* Decodes and hands out text[sent .. upto), upto = stable or everything. */
static pterun_status stream_emit(pterun_tokenizer_stream* s, int all, const char** text,
                                 size_t* length) {
  size_t stable = 0, upto;
  pterun_status st;
  s->text.n = 0;
  st = decode_all(s->tok, s->ids, s->n, s->special, &s->text, &stable);
  if (st != PTERUN_STATUS_OK) return st;
  upto = all ? s->text.n : stable;
  if (s->text.n < s->sent.n || (s->sent.n > 0 && memcmp(s->text.p, s->sent.p, s->sent.n) != 0)) {
    pterun_log(&s->tok->logger, PTERUN_LOG_ERROR,
               "tokenizer stream: text already handed out changed (a decoder rule pterun does not "
               "hold back for)");
    return PTERUN_STATUS_INTERNAL;
  }
  s->piece.n = 0;
  if (upto > s->sent.n) {
    tok_buf_put(&s->piece, s->text.p + s->sent.n, upto - s->sent.n);
    tok_buf_put(&s->sent, s->text.p + s->sent.n, upto - s->sent.n);
  }
  if (s->piece.oom || s->sent.oom) return PTERUN_STATUS_OUT_OF_MEMORY;
  *text = s->piece.p != NULL ? s->piece.p : "";
  *length = s->piece.n;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_tokenizer_stream_push(pterun_tokenizer_stream* s, int64_t id,
                                           const char** text, size_t* length) {
  if (s == NULL || text == NULL || length == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *text = "";
  *length = 0;
  if (s->n == s->cap) {
    size_t c = s->cap ? 2 * s->cap : 256;
    int64_t* q = (int64_t*)realloc(s->ids, c * sizeof *q);
    if (q == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    s->ids = q;
    s->cap = c;
  }
  s->ids[s->n++] = id;
  return stream_emit(s, 0, text, length);
}

pterun_status pterun_tokenizer_stream_finish(pterun_tokenizer_stream* s, const char** text,
                                             size_t* length) {
  if (s == NULL || text == NULL || length == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *text = "";
  *length = 0;
  return stream_emit(s, 1, text, length);
}
