/* Runs the golden cases of one file (tests/golden/NAME.txt, written by
 * tools/gen_goldens.py; the format is described in tests/golden/README.md)
 * against the portable, quantized and LLM kernel libraries. Every case runs twice:
 * without and with a scratch arena.
 * Usage: test_golden FILE.txt [-v] */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/llm.h"
#include "pterun/kernels/quantized.h"
#include "pterun/pterun.h"
#include "tests/harness/pt_values.h"

#define MAX_ARGS 32
#define MAX_EXPECTS 16
#define MAX_TOK 1024 /* longest token; the writer (tools/golden/format.py) keeps to it */
#define MAX_CAP_BYTES ((size_t)1 << 28)

/* ---- allocations of one case, freed together -------------------------------------------- */
typedef struct arena {
  void** ptrs;
  size_t n, cap;
} arena;

static void* amalloc(arena* a, size_t n) {
  void* p;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    void** q = realloc(a->ptrs, cap * sizeof *q);
    if (q == NULL) return NULL;
    a->ptrs = q;
    a->cap = cap;
  }
  p = calloc(1, n ? n : 1);
  if (p != NULL) a->ptrs[a->n++] = p;
  return p;
}

static void afree(arena* a) {
  for (size_t k = 0; k < a->n; ++k) free(a->ptrs[k]);
  a->n = 0;
}

/* ---- lines and tokens --------------------------------------------------------------------- */
typedef struct golden {
  const char* file;
  char** lines; /* NUL-terminated lines of the file */
  size_t nlines;
  size_t line; /* the line being parsed (0-based) */
  const char* cur;
  int bad;
} golden;

static void failf(golden* g, const char* fmt, ...) {
  va_list ap;
  if (g->bad) return;
  g->bad = 1;
  fprintf(stderr, "%s:%zu: malformed: ", g->file, g->line + 1);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* The next space-separated token of the current line into buf ("" at its end). */
static const char* tok(golden* g, char* buf) {
  size_t n = 0;
  while (*g->cur == ' ') ++g->cur;
  while (*g->cur && *g->cur != ' ') {
    if (n + 1 >= MAX_TOK) {
      failf(g, "token too long");
      break;
    }
    buf[n++] = *g->cur++;
  }
  buf[n] = '\0';
  return buf;
}

/* Moves to the next line that is not empty or a comment; 0 at the end. */
static int next_line(golden* g) {
  while (++g->line < g->nlines) {
    const char* s = g->lines[g->line];
    while (*s == ' ') ++s;
    if (*s != '\0' && *s != '#') {
      g->cur = s;
      return 1;
    }
  }
  g->cur = "";
  return 0;
}

static int expect_word(golden* g, const char* word) {
  char b[MAX_TOK];
  if (strcmp(tok(g, b), word) != 0) failf(g, "expected '%s', got '%s'", word, b);
  return !g->bad;
}

static int64_t parse_i64(golden* g, const char* s) {
  char* end;
  long long v;
  errno = 0;
  v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno != 0) failf(g, "bad integer '%s'", s);
  return (int64_t)v;
}

static int64_t tok_i64(golden* g) {
  char b[MAX_TOK];
  return parse_i64(g, tok(g, b));
}

/* "key=value" with the given key; returns the value part. */
static const char* kv(golden* g, const char* t, const char* key) {
  size_t n = strlen(key);
  if (strncmp(t, key, n) != 0 || t[n] != '=') {
    failf(g, "expected %s=..., got '%s'", key, t);
    return "";
  }
  return t + n + 1;
}

/* "[a,b,c]" into v (at most max entries); returns the count. */
static int parse_list_i64(golden* g, const char* s, int64_t* v, int max) {
  int n = 0;
  if (*s++ != '[') {
    failf(g, "expected a [list]");
    return 0;
  }
  while (*s != ']' && !g->bad) {
    char num[32];
    size_t k = 0;
    while (*s && *s != ',' && *s != ']' && k + 1 < sizeof num) num[k++] = *s++;
    num[k] = '\0';
    if (n >= max) {
      failf(g, "list longer than %d", max);
      break;
    }
    v[n++] = parse_i64(g, num);
    if (*s == ',')
      ++s;
    else if (*s != ']')
      failf(g, "bad list");
  }
  if (!g->bad && s[1] != '\0') failf(g, "text after a list");
  return n;
}

static int parse_dtype(golden* g, const char* s) {
  for (int d = 0; d < PTERUN_DTYPE_COUNT_; ++d)
    if (pterun_dtype_size(d) != 0 && strcmp(pterun_dtype_name(d), s) == 0) return d;
  failf(g, "unknown dtype '%s'", s);
  return PTERUN_DTYPE_F32;
}

static int parse_status(golden* g, const char* s) {
  for (int k = 0; k < PTERUN_STATUS_COUNT_; ++k)
    if (strcmp(pterun_status_name((pterun_status)k), s) == 0) return k;
  failf(g, "unknown status '%s'", s);
  return 0;
}

/* ---- elements ----------------------------------------------------------------------------- */

static int is_supported(int dt) {
  switch (dt) {
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_I16:
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_I64:
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BOOL: return 1;
    default: return pterun_dtype_is_float(dt);
  }
}

static uint64_t load_bits(const pterun_tensor* t, int64_t off) {
  size_t esz = pterun_dtype_size(t->dtype);
  uint64_t b = 0;
  const unsigned char* p = (const unsigned char*)t->data + (size_t)off * esz;
  for (size_t k = esz; k-- > 0;) b = b << 8 | p[k]; /* little-endian hosts */
  return b;
}

static void store_bits(pterun_tensor* t, int64_t off, uint64_t b) {
  size_t esz = pterun_dtype_size(t->dtype);
  unsigned char* p = (unsigned char*)t->data + (size_t)off * esz;
  for (size_t k = 0; k < esz; ++k, b >>= 8) p[k] = (unsigned char)b;
}

/* A NaN written as nan, -nan (the canonical quiet NaN) or nan:0xBITS: its
 * bits in dtype dt. 0 if s is no NaN. */
static int parse_nan(golden* g, int dt, const char* s, uint64_t* bits) {
  size_t width = pterun_dtype_size(dt) * 8;
  uint64_t mask = width == 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
  if (strcmp(s, "nan") == 0 || strcmp(s, "-nan") == 0) {
    uint64_t q = dt == PTERUN_DTYPE_F64   ? 0x7ff8000000000000u
                 : dt == PTERUN_DTYPE_F32 ? 0x7fc00000u
                 : dt == PTERUN_DTYPE_F16 ? 0x7e00u
                                          : 0x7fc0u;
    *bits = s[0] == '-' ? q | (uint64_t)1 << (width - 1) : q;
    return 1;
  }
  if (strncmp(s, "nan:0x", 6) == 0) {
    char* end;
    unsigned long long b;
    errno = 0;
    b = strtoull(s + 6, &end, 16);
    if (*end != '\0' || errno != 0 || (b & ~mask) != 0) failf(g, "bad NaN '%s'", s);
    *bits = (uint64_t)b;
    return 1;
  }
  return 0;
}

static double parse_double(golden* g, const char* s) {
  uint64_t b;
  double d;
  char* end;
  if (parse_nan(g, PTERUN_DTYPE_F64, s, &b)) {
    memcpy(&d, &b, 8);
    return d;
  }
  d = strtod(s, &end);
  if (*s == '\0' || *end != '\0') failf(g, "bad number '%s'", s);
  return d;
}

/* Element `off` of t from its text: exact in t's dtype, or an error. */
static void parse_elem(golden* g, pterun_tensor* t, int64_t off, const char* s) {
  int dt = t->dtype;
  uint64_t b;
  if (!pterun_dtype_is_float(dt)) {
    int64_t v = parse_i64(g, s), lo, hi;
    switch (dt) {
      case PTERUN_DTYPE_BOOL: lo = 0, hi = 1; break;
      case PTERUN_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
      case PTERUN_DTYPE_U16: lo = 0, hi = UINT16_MAX; break;
      case PTERUN_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
      case PTERUN_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
      case PTERUN_DTYPE_I32: lo = INT32_MIN, hi = INT32_MAX; break;
      default: lo = INT64_MIN, hi = INT64_MAX; break;
    }
    if (v < lo || v > hi) failf(g, "%s out of range for %s", s, pterun_dtype_name(dt));
    pterun_store_i64(t->data, dt, off, v);
  } else if (parse_nan(g, dt, s, &b)) {
    store_bits(t, off, b);
  } else if (dt == PTERUN_DTYPE_F64) {
    pterun_store_f64(t->data, dt, off, parse_double(g, s));
  } else {
    char* end;
    float f = strtof(s, &end);
    if (*s == '\0' || *end != '\0') failf(g, "bad number '%s'", s);
    pterun_store_f32(t->data, dt, off, f);
    /* float16/bfloat16 values are written exactly: they must read back unchanged */
    if (pterun_load_f32(t->data, dt, off) != f)
      failf(g, "%s is not exact in %s", s, pterun_dtype_name(dt));
  }
}

/* Memory offset (elements) of logical element n. */
static int64_t logical_off(const pterun_tensor* t, int64_t n) {
  int64_t off = 0;
  for (int d = t->rank - 1; d >= 0; --d) {
    int64_t sz = t->sizes[d] ? t->sizes[d] : 1;
    off += (n % sz) * t->strides[d];
    n /= sz;
  }
  return off;
}

/* ---- arguments ---------------------------------------------------------------------------- */
/* DTYPE SHAPE [order=[..]] into t (layout computed). */
static void parse_layout(golden* g, pterun_tensor* t) {
  char b[MAX_TOK];
  int64_t v[PTERUN_MAX_RANK];
  const char* save;
  int rank;
  memset(t, 0, sizeof *t);
  t->dtype = parse_dtype(g, tok(g, b));
  if (!g->bad && !is_supported(t->dtype)) failf(g, "dtype %s not supported", b);
  rank = parse_list_i64(g, tok(g, b), v, PTERUN_MAX_RANK);
  t->rank = (uint8_t)rank;
  for (int d = 0; d < rank; ++d) {
    if (v[d] < 0) failf(g, "negative size");
    t->sizes[d] = t->max_sizes[d] = v[d];
    t->dim_order[d] = (uint8_t)d;
  }
  save = g->cur;
  if (strncmp(tok(g, b), "order=", 6) == 0) {
    unsigned seen = 0;
    if (parse_list_i64(g, b + 6, v, PTERUN_MAX_RANK) != rank) failf(g, "order has a wrong rank");
    for (int d = 0; d < rank && !g->bad; ++d) {
      if (v[d] < 0 || v[d] >= rank || (seen >> v[d] & 1u)) failf(g, "order is no permutation");
      seen |= 1u << (v[d] & 15);
      t->dim_order[d] = (uint8_t)v[d];
    }
  } else {
    g->cur = save;
  }
  if (!g->bad && pterun_tensor_update_layout(t) != PTERUN_STATUS_OK) failf(g, "bad shape");
}

static void* alloc_data(golden* g, arena* a, pterun_tensor* t, size_t bytes) {
  if (bytes > MAX_CAP_BYTES) failf(g, "tensor too large");
  if (g->bad) return NULL;
  t->data = amalloc(a, bytes);
  t->capacity = bytes;
  if (t->data == NULL) failf(g, "out of memory");
  return t->data;
}

/* ": v v v" with exactly numel values into t, in logical order. */
static void parse_values(golden* g, pterun_tensor* t) {
  char b[MAX_TOK];
  if (!expect_word(g, ":")) return;
  for (int64_t n = 0; n < t->numel && !g->bad; ++n) {
    tok(g, b);
    if (b[0] == '\0') failf(g, "%" PRId64 " values, want %" PRId64, n, t->numel);
    parse_elem(g, t, logical_off(t, n), b);
  }
  if (!g->bad && tok(g, b)[0] != '\0') failf(g, "more values than elements");
}

static pterun_value* new_value(golden* g, arena* a, int tag) {
  pterun_value* v = amalloc(a, sizeof *v);
  if (v == NULL) {
    failf(g, "out of memory");
    return NULL;
  }
  v->tag = tag;
  return v;
}

static pterun_value* parse_tensor_arg(golden* g, arena* a, const char* kind) {
  char b[MAX_TOK];
  pterun_value* v = new_value(g, a, PTERUN_VALUE_TENSOR);
  pterun_tensor* t = amalloc(a, sizeof *t);
  if (v == NULL || t == NULL) return NULL;
  v->u.tensor = t;
  parse_layout(g, t);
  if (strcmp(kind, "tensor") == 0) {
    t->dynamism = PTERUN_SHAPE_STATIC;
    if (alloc_data(g, a, t, t->nbytes)) parse_values(g, t);
  } else if (strcmp(kind, "gen") == 0) {
    int64_t seed = parse_i64(g, kv(g, tok(g, b), "seed"));
    t->dynamism = PTERUN_SHAPE_STATIC;
    if (!pterun_dtype_is_float(t->dtype)) failf(g, "gen needs a float dtype");
    if (alloc_data(g, a, t, t->nbytes))
      for (int64_t n = 0; n < t->numel; ++n)
        pterun_store_f64(t->data, t->dtype, logical_off(t, n),
                         (double)((n * 7919 + seed * 104729) % 2001 - 1000) / 1000.0);
  } else { /* out */
    int64_t cap, fill, mx[PTERUN_MAX_RANK];
    const char* save = g->cur;
    if (strncmp(tok(g, b), "max=", 4) == 0) {
      if (parse_list_i64(g, b + 4, mx, PTERUN_MAX_RANK) != t->rank) failf(g, "max: wrong rank");
      for (int d = 0; d < t->rank; ++d) t->max_sizes[d] = mx[d];
    } else {
      g->cur = save;
    }
    tok(g, b);
    if (strcmp(b, "bounded") == 0)
      t->dynamism = PTERUN_SHAPE_BOUNDED;
    else if (strcmp(b, "unbounded") == 0)
      t->dynamism = PTERUN_SHAPE_UNBOUNDED;
    else
      failf(g, "expected bounded or unbounded, got '%s'", b);
    cap = parse_i64(g, kv(g, tok(g, b), "cap"));
    fill = strtol(kv(g, tok(g, b), "fill"), NULL, 16);
    if (cap < t->numel || cap > (int64_t)(MAX_CAP_BYTES / 8)) failf(g, "bad cap");
    if (alloc_data(g, a, t, (size_t)cap * pterun_dtype_size(t->dtype)))
      memset(t->data, (int)(fill & 0xff), t->capacity);
  }
  return v;
}

static pterun_value* parse_arg(golden* g, arena* a, pterun_value** args, int k);

/* "tensors N" / "opttensors N", then N "item j ..." lines. */
static pterun_value* parse_list(golden* g, arena* a, pterun_value** args, int k, int tag) {
  int64_t n = tok_i64(g);
  pterun_value* v = new_value(g, a, tag);
  pterun_value** items;
  if (n < 0 || n > 1024) failf(g, "bad list length");
  if (g->bad || v == NULL) return NULL;
  items = amalloc(a, sizeof *items * (size_t)(n ? n : 1));
  for (int64_t j = 0; j < n && !g->bad; ++j) {
    if (!next_line(g) || !expect_word(g, "item") || tok_i64(g) != j) {
      failf(g, "expected item %" PRId64, j);
      return NULL;
    }
    items[j] = parse_arg(g, a, args, k);
    if (items[j] != NULL && items[j]->tag != PTERUN_VALUE_TENSOR &&
        !(tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR && items[j]->tag == PTERUN_VALUE_NONE))
      failf(g, "a list item must be a tensor");
  }
  v->u.tensors.items = items;
  v->u.tensors.len = (size_t)n;
  return v;
}

static pterun_value* parse_arg(golden* g, arena* a, pterun_value** args, int k) {
  char kind[MAX_TOK], b[MAX_TOK];
  pterun_value* v;
  tok(g, kind);
  if (!strcmp(kind, "tensor") || !strcmp(kind, "gen") || !strcmp(kind, "out"))
    return parse_tensor_arg(g, a, kind);
  if (!strcmp(kind, "tensors")) return parse_list(g, a, args, k, PTERUN_VALUE_LIST_TENSOR);
  if (!strcmp(kind, "opttensors"))
    return parse_list(g, a, args, k, PTERUN_VALUE_LIST_OPTIONAL_TENSOR);
  if (!strcmp(kind, "ref")) {
    int64_t j = tok_i64(g);
    if (j < 0 || j >= k) failf(g, "ref %" PRId64 " is not an earlier argument", j);
    return g->bad ? NULL : args[j];
  }
  v = new_value(g, a, PTERUN_VALUE_NONE);
  if (v == NULL) return NULL;
  if (!strcmp(kind, "none")) {
  } else if (!strcmp(kind, "int")) {
    v->tag = PTERUN_VALUE_INT;
    v->u.i = tok_i64(g);
  } else if (!strcmp(kind, "dtype")) {
    v->tag = PTERUN_VALUE_INT;
    v->u.i = parse_dtype(g, tok(g, b));
  } else if (!strcmp(kind, "double")) {
    v->tag = PTERUN_VALUE_DOUBLE;
    v->u.d = parse_double(g, tok(g, b));
  } else if (!strcmp(kind, "bool")) {
    tok(g, b);
    v->tag = PTERUN_VALUE_BOOL;
    v->u.b = strcmp(b, "true") == 0;
    if (!v->u.b && strcmp(b, "false") != 0) failf(g, "bad bool '%s'", b);
  } else if (!strcmp(kind, "str")) {
    /* %XX escapes; a lone '%' is the empty string */
    char* s;
    size_t n = 0;
    tok(g, b);
    s = amalloc(a, strlen(b) + 1);
    if (s == NULL) return NULL;
    for (const char* p = strcmp(b, "%") ? b : ""; *p; ++n) {
      if (*p == '%') {
        char hex[3] = {p[1], p[1] ? p[2] : 0, 0};
        s[n] = (char)strtol(hex, NULL, 16);
        p += p[1] && p[2] ? 3 : strlen(p);
      } else {
        s[n] = *p++;
      }
    }
    v->tag = PTERUN_VALUE_STRING;
    v->u.str.data = s;
    v->u.str.len = n;
  } else if (!strcmp(kind, "ints") || !strcmp(kind, "bools") || !strcmp(kind, "refs")) {
    int64_t items[64];
    int n = parse_list_i64(g, tok(g, b), items, 64);
    if (g->bad) return NULL;
    if (kind[0] == 'i') {
      pterun_value** iv = amalloc(a, sizeof *iv * (size_t)(n ? n : 1));
      v->tag = PTERUN_VALUE_LIST_INT;
      v->u.ints.scratch = amalloc(a, sizeof(int64_t) * (size_t)(n ? n : 1));
      for (int j = 0; j < n; ++j) {
        iv[j] = new_value(g, a, PTERUN_VALUE_INT);
        if (iv[j]) iv[j]->u.i = items[j];
      }
      v->u.ints.items = iv;
      v->u.ints.len = (size_t)n;
    } else if (kind[0] == 'b') {
      uint8_t* bv = amalloc(a, (size_t)(n ? n : 1));
      for (int j = 0; j < n; ++j) {
        if (items[j] != 0 && items[j] != 1) failf(g, "bad bool");
        bv[j] = (uint8_t)items[j];
      }
      v->tag = PTERUN_VALUE_LIST_BOOL;
      v->u.bools.items = bv;
      v->u.bools.len = (size_t)n;
    } else {
      pterun_value** tv = amalloc(a, sizeof *tv * (size_t)(n ? n : 1));
      for (int j = 0; j < n; ++j) {
        if (items[j] < 0 || items[j] >= k || args[items[j]]->tag != PTERUN_VALUE_TENSOR) {
          failf(g, "refs: %" PRId64 " is not an earlier tensor argument", items[j]);
          return NULL;
        }
        tv[j] = args[items[j]];
      }
      v->tag = PTERUN_VALUE_LIST_TENSOR;
      v->u.tensors.items = tv;
      v->u.tensors.len = (size_t)n;
    }
  } else if (!strcmp(kind, "doubles")) {
    /* [a,b,c] of exact doubles */
    const char* s = tok(g, b);
    double* dv = amalloc(a, sizeof(double) * 64);
    size_t n = 0;
    if (*s++ != '[') failf(g, "expected a [list]");
    while (!g->bad && *s && *s != ']') {
      char num[MAX_TOK];
      size_t m = 0;
      while (*s && *s != ',' && *s != ']' && m + 1 < sizeof num) num[m++] = *s++;
      num[m] = '\0';
      if (n >= 64)
        failf(g, "list too long");
      else
        dv[n++] = parse_double(g, num);
      if (*s == ',') ++s;
    }
    v->tag = PTERUN_VALUE_LIST_DOUBLE;
    v->u.doubles.items = dv;
    v->u.doubles.len = n;
  } else {
    failf(g, "unknown argument kind '%s'", kind);
  }
  if (!g->bad && tok(g, b)[0] != '\0') failf(g, "unexpected '%s'", b);
  return g->bad ? NULL : v;
}

/* ---- one case ----------------------------------------------------------------------------- */
enum { CMP_BITS, CMP_EXACT, CMP_CLOSE };

typedef struct expectation {
  int k, item; /* argument k, list item (or -1) */
  int cmp;
  double rtol, atol;
  pterun_tensor want;
  size_t line;
} expectation;

typedef struct gcase {
  char id[MAX_TOK], op[MAX_TOK];
  int status, nargs, nexp;
  size_t first_line, arg_line[MAX_ARGS];
  pterun_value* args[MAX_ARGS];
  expectation exp[MAX_EXPECTS];
} gcase;

/* Parses the case at g->line ("case ..." line) up to its "end". */
static void parse_case(golden* g, arena* a, gcase* c) {
  char b[MAX_TOK];
  memset(c, 0, sizeof *c);
  c->first_line = g->line;
  if (!expect_word(g, "case")) return;
  snprintf(c->id, sizeof c->id, "%s", tok(g, b));
  snprintf(c->op, sizeof c->op, "%s", tok(g, b));
  if (!next_line(g) || !expect_word(g, "status")) return;
  c->status = parse_status(g, tok(g, b));
  while (!g->bad && next_line(g)) {
    const char* word = tok(g, b);
    if (strcmp(word, "arg") == 0) {
      if (c->nargs >= MAX_ARGS || tok_i64(g) != c->nargs) failf(g, "arguments out of order");
      if (g->bad) return;
      c->arg_line[c->nargs] = g->line;
      c->args[c->nargs] = parse_arg(g, a, c->args, c->nargs);
      c->nargs++;
    } else if (strcmp(word, "expect") == 0) {
      expectation* e = &c->exp[c->nexp];
      char* dot;
      if (c->nexp >= MAX_EXPECTS) failf(g, "too many expectations");
      if (g->bad) return;
      e->line = g->line;
      tok(g, b);
      dot = strchr(b, '.');
      e->item = -1;
      if (dot) {
        *dot = '\0';
        e->item = (int)parse_i64(g, dot + 1);
      }
      e->k = (int)parse_i64(g, b);
      if (e->k < 0 || e->k >= c->nargs) failf(g, "expect: no argument %d", e->k);
      tok(g, b);
      if (strcmp(b, "bits") == 0) {
        e->cmp = CMP_BITS;
      } else if (strcmp(b, "exact") == 0) {
        e->cmp = CMP_EXACT;
      } else if (strcmp(b, "close") == 0) {
        e->cmp = CMP_CLOSE;
        e->rtol = parse_double(g, kv(g, tok(g, b), "rtol"));
        e->atol = parse_double(g, kv(g, tok(g, b), "atol"));
      } else {
        failf(g, "unknown comparison '%s'", b);
      }
      parse_layout(g, &e->want);
      if (alloc_data(g, a, &e->want, e->want.nbytes)) parse_values(g, &e->want);
      c->nexp++;
    } else if (strcmp(word, "end") == 0) {
      return;
    } else {
      failf(g, "unexpected '%s'", word);
    }
  }
  failf(g, "case %s has no 'end'", c->id);
}

static pterun_kernel_fn find_kernel(const char* op) {
  pterun_kernel_fn fn = pt_find_kernel(pterun_kernels_portable(), op);
  if (fn == NULL) fn = pt_find_kernel(pterun_kernels_quantized(), op);
  return fn ? fn : pt_find_kernel(pterun_kernels_llm(), op);
}

static void print_elem(const pterun_tensor* t, int64_t off) {
  int dt = t->dtype;
  if (pterun_dtype_is_float(dt))
    fprintf(stderr, "%.*g (0x%0*" PRIx64 ")", dt == PTERUN_DTYPE_F64 ? 17 : 9,
            pterun_load_f64(t->data, dt, off), (int)pterun_dtype_size(dt) * 2, load_bits(t, off));
  else
    fprintf(stderr, "%" PRId64, pterun_load_i64(t->data, dt, off));
}

/* 1 if element goff of got matches element woff of want under e's comparison. */
static int elem_ok(const expectation* e, const pterun_tensor* got, int64_t goff,
                   const pterun_tensor* want, int64_t woff) {
  double gv, wv;
  if (e->cmp == CMP_BITS || !pterun_dtype_is_float(want->dtype))
    return load_bits(got, goff) == load_bits(want, woff);
  gv = pterun_load_f64(got->data, got->dtype, goff);
  wv = pterun_load_f64(want->data, want->dtype, woff);
  if (isnan(wv)) return isnan(gv);
  if (e->cmp == CMP_EXACT) return gv == wv && signbit(gv) == signbit(wv);
  if (isinf(wv)) return gv == wv;
  return fabs(gv - wv) <= e->atol + e->rtol * fabs(wv);
}

/* Compares the argument against the expectation; prints the first mismatch. */
static int check(const gcase* c, const expectation* e, const char* head) {
  const pterun_value* v = c->args[e->k];
  const pterun_tensor* got = NULL;
  const pterun_tensor* want = &e->want;
  int64_t bad = 0, first = -1;
  int same;
  if (e->item < 0 && v->tag == PTERUN_VALUE_TENSOR) got = v->u.tensor;
  if (e->item >= 0) got = pterun_value_list_tensor(v, (size_t)e->item);
  if (got == NULL) {
    fprintf(stderr, "%s: expected argument %d is not a tensor\n", head, e->k);
    return 1;
  }
  same = got->dtype == want->dtype && got->rank == want->rank;
  for (int d = 0; same && d < want->rank; ++d) same = got->sizes[d] == want->sizes[d];
  if (!same) {
    fprintf(stderr, "%s: argument %d is %s [", head, e->k, pterun_dtype_name(got->dtype));
    for (int d = 0; d < got->rank; ++d) fprintf(stderr, "%s%" PRId64, d ? "," : "", got->sizes[d]);
    fprintf(stderr, "], want %s [", pterun_dtype_name(want->dtype));
    for (int d = 0; d < want->rank; ++d)
      fprintf(stderr, "%s%" PRId64, d ? "," : "", want->sizes[d]);
    fprintf(stderr, "]\n");
    return 1;
  }
  for (int64_t n = 0; n < want->numel; ++n) {
    if (!elem_ok(e, got, logical_off(got, n), want, logical_off(want, n))) {
      if (first < 0) first = n;
      ++bad;
    }
  }
  if (bad == 0) return 0;
  fprintf(stderr, "%s: argument %d", head, e->k);
  if (e->item >= 0) fprintf(stderr, " item %d", e->item);
  fprintf(stderr, ": %" PRId64 " of %" PRId64 " elements differ; first at [", bad, want->numel);
  for (int d = 0, rest = 0; d < want->rank; ++d) {
    int64_t stride = 1, idx;
    for (int q = d + 1; q < want->rank; ++q) stride *= want->sizes[q];
    idx = (first / stride) % (want->sizes[d] ? want->sizes[d] : 1);
    fprintf(stderr, "%s%" PRId64, rest++ ? "," : "", idx);
  }
  fprintf(stderr, "] (element %" PRId64 "): got ", first);
  print_elem(got, logical_off(got, first));
  fprintf(stderr, ", want ");
  print_elem(want, logical_off(want, first));
  if (e->cmp == CMP_CLOSE)
    fprintf(stderr, " (close: rtol %g, atol %g)\n", e->rtol, e->atol);
  else
    fprintf(stderr, " (%s)\n", e->cmp == CMP_BITS ? "bit-exact" : "exact");
  return 1;
}

/* The argument lines of a case without their values, for a failure report. */
static void print_args(const golden* g, const gcase* c) {
  for (int k = 0; k < c->nargs; ++k) {
    const char* s = g->lines[c->arg_line[k]];
    const char* colon = strstr(s, " :");
    int n = colon ? (int)(colon - s) : (int)strlen(s);
    while (*s == ' ') ++s, --n;
    fprintf(stderr, "    %.*s%s\n", n > 160 ? 160 : n, s, colon ? " : ..." : "");
  }
}

/* Parses and runs the case starting at line `at`; returns 1 on failure and
 * leaves g->line on its "end" line. */
static int run_case(golden* g, size_t at, int with_scratch, int verbose, gcase* c) {
  static unsigned char scratch[4u << 20];
  arena a = {0};
  char head[2 * MAX_TOK + 64];
  pterun_logger silent = pterun_logger_silent();
  pterun_kernel_fn fn;
  int fail = 0;
  g->line = at;
  g->cur = g->lines[at];
  while (*g->cur == ' ') ++g->cur;
  parse_case(g, &a, c);
  snprintf(head, sizeof head, "FAIL %s (%s)%s", c->id, c->op, with_scratch ? " [scratch]" : "");
  if (g->bad) {
    fprintf(stderr, "%s: malformed case\n", head);
    fail = 1;
  } else if ((fn = find_kernel(c->op)) == NULL) {
    fprintf(stderr, "%s: no kernel library registers %s\n", head, c->op);
    fail = 1;
  } else {
    pterun_status st = pterun_kernel_invoke(
        fn, c->op, c->args, (size_t)c->nargs, c->status == PTERUN_STATUS_OK ? NULL : &silent,
        with_scratch ? scratch : NULL, with_scratch ? sizeof scratch : 0);
    if ((int)st != c->status) {
      fprintf(stderr, "%s: status %s, want %s\n", head, pterun_status_name(st),
              pterun_status_name((pterun_status)c->status));
      fail = 1;
    } else {
      for (int e = 0; e < c->nexp; ++e) fail |= check(c, &c->exp[e], head);
    }
  }
  if (fail) {
    fprintf(stderr, "  %s:%zu, arguments:\n", g->file, c->first_line + 1);
    print_args(g, c);
  } else if (verbose) {
    printf("ok   %s (%s)%s\n", c->id, c->op, with_scratch ? " [scratch]" : "");
  }
  afree(&a);
  free(a.ptrs);
  return fail;
}

static char* slurp(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* buf = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) != NULL) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = '\0';
      *size = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

int main(int argc, char** argv) {
  golden g = {0};
  size_t size = 0, n = 0;
  char* text;
  long want_cases = -1;
  int verbose = argc > 2 && strcmp(argv[2], "-v") == 0, cases = 0, failures = 0;
  gcase* c = malloc(sizeof *c);
  if (argc < 2 || c == NULL) {
    fprintf(stderr, "usage: %s GOLDEN.txt [-v]\n", argv[0]);
    return 2;
  }
  g.file = argv[1];
  text = slurp(argv[1], &size);
  if (text == NULL) {
    fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  for (size_t k = 0; k < size; ++k) n += text[k] == '\n';
  g.lines = malloc(sizeof(char*) * (n + 1));
  if (g.lines == NULL) return 1;
  for (char* p = text; p != NULL && g.nlines <= n;) {
    char* nl = strchr(p, '\n');
    g.lines[g.nlines++] = p;
    if (nl) *nl = '\0';
    p = nl ? nl + 1 : NULL;
  }
  /* The header says how many cases the file holds: a truncated file fails. */
  if (g.nlines == 0 ||
      sscanf(g.lines[0], "# pterun golden cases: %*s (%ld cases)", &want_cases) != 1)
    fprintf(stderr, "%s: no '# pterun golden cases: NAME (N cases)' header\n", argv[1]);
  g.line = 0;
  while (next_line(&g)) {
    size_t at = g.line;
    int f = run_case(&g, at, 0, verbose, c);
    if (!g.bad) f |= run_case(&g, at, 1, verbose, c);
    failures += f;
    ++cases;
    if (g.bad) break; /* the rest of the file cannot be trusted */
  }
  printf("%s: %d cases (each without and with scratch), %d failed\n", argv[1], cases, failures);
  if (cases != want_cases) {
    fprintf(stderr, "%s: %d cases, the header says %ld\n", argv[1], cases, want_cases);
    failures += 1;
  }
  free(g.lines);
  free(text);
  free(c);
  return failures || g.bad || cases == 0 ? 1 : 0;
}
