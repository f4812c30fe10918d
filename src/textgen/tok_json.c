/* Bounded JSON reader (tok_json.h): recursive descent with a depth limit,
 * every read checked against the end of the input. */
#include "src/textgen/tok_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/textgen/tok_internal.h"

typedef struct jp {
  const char* s;
  size_t n, i;
  tok_json* j;
  size_t cap;
  int oom;
} jp;

static int jfail(jp* p, const char* what) {
  snprintf(p->j->error, sizeof p->j->error, "JSON: %s at byte %zu", what, p->i);
  return -1;
}

static void ws(jp* p) {
  while (p->i < p->n &&
         (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
    ++p->i;
}

static uint32_t new_node(jp* p, int type) {
  tok_json* j = p->j;
  if (j->n_nodes == p->cap) {
    size_t c = p->cap ? 2 * p->cap : 1024;
    tok_json_node* q;
    if (c > UINT32_MAX) return 0;
    q = (tok_json_node*)realloc(j->nodes, c * sizeof *q);
    if (q == NULL) {
      p->oom = 1;
      return 0;
    }
    j->nodes = q;
    p->cap = c;
  }
  memset(&j->nodes[j->n_nodes], 0, sizeof j->nodes[0]);
  j->nodes[j->n_nodes].type = (uint8_t)type;
  return (uint32_t)j->n_nodes++;
}

static int hex4(jp* p, uint32_t* v) {
  size_t k;
  *v = 0;
  if (p->n - p->i < 4) return jfail(p, "truncated \\u escape");
  for (k = 0; k < 4; ++k) {
    char c = p->s[p->i + k];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return jfail(p, "bad \\u escape");
    *v = (*v << 4) | (uint32_t)d;
  }
  p->i += 4;
  return 0;
}

/* A string at p->i (the opening quote) into the pool: offset and length. */
static int string(jp* p, uint32_t* off, uint32_t* len) {
  tok_json* j = p->j;
  size_t start = j->pool_len;
  char* o = j->pool;
  ++p->i;
  for (;;) {
    unsigned char c;
    if (p->i >= p->n) return jfail(p, "unterminated string");
    c = (unsigned char)p->s[p->i];
    if (c == '"') {
      ++p->i;
      break;
    }
    if (c < 0x20) return jfail(p, "control character in a string");
    if (c == '\\') {
      char e;
      if (++p->i >= p->n) return jfail(p, "unterminated string");
      e = p->s[p->i++];
      switch (e) {
        case '"': o[j->pool_len++] = '"'; break;
        case '\\': o[j->pool_len++] = '\\'; break;
        case '/': o[j->pool_len++] = '/'; break;
        case 'b': o[j->pool_len++] = '\b'; break;
        case 'f': o[j->pool_len++] = '\f'; break;
        case 'n': o[j->pool_len++] = '\n'; break;
        case 'r': o[j->pool_len++] = '\r'; break;
        case 't': o[j->pool_len++] = '\t'; break;
        case 'u': {
          uint32_t cp, lo;
          tok_buf b = {0, 0, 0, 0};
          if (hex4(p, &cp) != 0) return -1;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return jfail(p, "lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
              return jfail(p, "lone high surrogate");
            p->i += 2;
            if (hex4(p, &lo) != 0) return -1;
            if (lo < 0xDC00 || lo > 0xDFFF) return jfail(p, "bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          /* At most 4 bytes from at least 6 escaped ones: the pool, sized to
           * the input, cannot overflow. */
          tok_buf_put_cp(&b, cp);
          if (b.oom) {
            p->oom = 1;
            return -1;
          }
          memcpy(o + j->pool_len, b.p, b.n);
          j->pool_len += b.n;
          tok_buf_free(&b);
          break;
        }
        default: return jfail(p, "bad escape");
      }
      continue;
    }
    if (c < 0x80) {
      o[j->pool_len++] = (char)c;
      ++p->i;
    } else {
      uint32_t cp;
      size_t k = tok_utf8_next((const unsigned char*)p->s + p->i, p->n - p->i, &cp);
      if (k == 0) return jfail(p, "invalid UTF-8 in a string");
      memcpy(o + j->pool_len, p->s + p->i, k);
      j->pool_len += k;
      p->i += k;
    }
  }
  if (j->pool_len - start > UINT32_MAX) return jfail(p, "string too long");
  *off = (uint32_t)start;
  *len = (uint32_t)(j->pool_len - start);
  return 0;
}

static int number(jp* p, double* v) {
  char tmp[64];
  size_t a = p->i, k;
  char* end;
  if (p->i < p->n && p->s[p->i] == '-') ++p->i;
  if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return jfail(p, "bad number");
  while (p->i < p->n &&
         ((p->s[p->i] >= '0' && p->s[p->i] <= '9') || p->s[p->i] == '.' || p->s[p->i] == 'e' ||
          p->s[p->i] == 'E' || p->s[p->i] == '+' || p->s[p->i] == '-'))
    ++p->i;
  k = p->i - a;
  if (k >= sizeof tmp) return jfail(p, "number too long");
  memcpy(tmp, p->s + a, k);
  tmp[k] = '\0';
  *v = strtod(tmp, &end);
  if (end != tmp + k) return jfail(p, "bad number");
  return 0;
}

static int value(jp* p, uint32_t* out, int depth);

static int container(jp* p, uint32_t node, int depth, int object) {
  tok_json* j = p->j;
  uint32_t prev = 0;
  char close = object ? '}' : ']';
  ++p->i;
  ws(p);
  if (p->i < p->n && p->s[p->i] == close) {
    ++p->i;
    return 0;
  }
  for (;;) {
    uint32_t koff = 0, klen = 0, child;
    ws(p);
    if (object) {
      if (p->i >= p->n || p->s[p->i] != '"') return jfail(p, "expected a key");
      if (string(p, &koff, &klen) != 0) return -1;
      ws(p);
      if (p->i >= p->n || p->s[p->i] != ':') return jfail(p, "expected ':'");
      ++p->i;
    }
    if (value(p, &child, depth + 1) != 0) return -1;
    j->nodes[child].key_off = koff;
    j->nodes[child].key_len = klen;
    if (prev == 0)
      j->nodes[node].first = child;
    else
      j->nodes[prev].next = child;
    prev = child;
    j->nodes[node].count++;
    ws(p);
    if (p->i >= p->n) return jfail(p, "unterminated array or object");
    if (p->s[p->i] == ',') {
      ++p->i;
      continue;
    }
    if (p->s[p->i] == close) {
      ++p->i;
      return 0;
    }
    return jfail(p, "expected ',' or a closing bracket");
  }
}

static int literal(jp* p, const char* word) {
  size_t k = strlen(word);
  if (p->n - p->i < k || memcmp(p->s + p->i, word, k) != 0) return jfail(p, "bad literal");
  p->i += k;
  return 0;
}

static int value(jp* p, uint32_t* out, int depth) {
  uint32_t node;
  char c;
  if (depth > TOK_JSON_MAX_DEPTH) return jfail(p, "nested too deeply");
  ws(p);
  if (p->i >= p->n) return jfail(p, "unexpected end");
  c = p->s[p->i];
  switch (c) {
    case '{':
    case '[':
      if ((node = new_node(p, c == '{' ? TOK_JSON_OBJECT : TOK_JSON_ARRAY)) == 0) return -1;
      *out = node;
      return container(p, node, depth, c == '{');
    case '"': {
      uint32_t off, len;
      if ((node = new_node(p, TOK_JSON_STRING)) == 0) return -1;
      if (string(p, &off, &len) != 0) return -1;
      p->j->nodes[node].str_off = off;
      p->j->nodes[node].str_len = len;
      *out = node;
      return 0;
    }
    case 't':
    case 'f':
    case 'n':
      if ((node = new_node(p, c == 't'   ? TOK_JSON_TRUE
                              : c == 'f' ? TOK_JSON_FALSE
                                         : TOK_JSON_NULL)) == 0)
        return -1;
      *out = node;
      return literal(p, c == 't' ? "true" : c == 'f' ? "false" : "null");
    default: {
      double v;
      if ((node = new_node(p, TOK_JSON_NUMBER)) == 0) return -1;
      if (number(p, &v) != 0) return -1;
      p->j->nodes[node].num = v;
      *out = node;
      return 0;
    }
  }
}

int tok_json_parse(tok_json* j, const char* s, size_t n) {
  jp p;
  uint32_t root;
  memset(j, 0, sizeof *j);
  memset(&p, 0, sizeof p);
  p.s = s;
  p.n = n;
  p.j = j;
  j->pool = (char*)malloc(n + 1);
  if (j->pool == NULL) return -2;
  if (new_node(&p, TOK_JSON_NULL) == 0 && p.oom) return -2; /* node 0: none */
  if (value(&p, &root, 0) != 0) return p.oom ? -2 : -1;
  ws(&p);
  if (p.i != n) return jfail(&p, "trailing data");
  return 0;
}

void tok_json_free(tok_json* j) {
  free(j->nodes);
  free(j->pool);
  memset(j, 0, sizeof *j);
}

uint32_t tok_json_get(const tok_json* j, uint32_t obj, const char* key) {
  uint32_t c;
  size_t k = strlen(key);
  if (obj == 0 || j->nodes[obj].type != TOK_JSON_OBJECT) return 0;
  for (c = j->nodes[obj].first; c != 0; c = j->nodes[c].next)
    if (j->nodes[c].key_len == k && memcmp(j->pool + j->nodes[c].key_off, key, k) == 0) return c;
  return 0;
}

const char* tok_json_str(const tok_json* j, uint32_t node, size_t* len) {
  if (node == 0 || j->nodes[node].type != TOK_JSON_STRING) return NULL;
  *len = j->nodes[node].str_len;
  return j->pool + j->nodes[node].str_off;
}

int tok_json_is(const tok_json* j, uint32_t node, int type) {
  return node != 0 && j->nodes[node].type == type;
}

int tok_json_bool(const tok_json* j, uint32_t obj, const char* key, int dflt) {
  uint32_t v = tok_json_get(j, obj, key);
  if (v == 0) return dflt;
  if (j->nodes[v].type == TOK_JSON_TRUE) return 1;
  if (j->nodes[v].type == TOK_JSON_FALSE) return 0;
  return dflt;
}

int tok_json_eq(const tok_json* j, uint32_t node, const char* s) {
  size_t n;
  const char* p = tok_json_str(j, node, &n);
  return p != NULL && strlen(s) == n && memcmp(p, s, n) == 0;
}
