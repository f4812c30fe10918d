/* Runs the nn/shape kernels on golden cases produced by tools/gen_nn_goldens.py
 * (PyTorch is the reference) and compares outputs.
 *
 * File format: whitespace-separated tokens.
 *   case <name> <op> <atol> <rtol> <status>
 *   arg T <dtype> <rank> <sizes..> <dim_order..> <values..>   input tensor (logical order)
 *   arg G <dtype> <rank> <sizes..> <dim_order..> <seed>       input tensor with generated
 *        values: element n (logical order) is ((n*7919 + seed*104729) % 2001 - 1000) / 1000
 *   arg O <dtype> <rank> <sizes..> <dim_order..> <capacity>   out tensor, capacity in elements
 *   arg i <int> | d <double> | b <0|1> | n                    Int, Double, Bool, None
 *   arg li <len> <ints..> | ld <len> <doubles..>               IntList, DoubleList
 *   arg lb <len> <0|1..>                                       BoolList
 *   arg lt <len> <len nested args> | lo <len> <nested args>   TensorList, OptionalTensorList
 *   arg r <k>                                                  the same value as arg k
 *   arg rl <len> <k..>                                         TensorList of args k..
 *   expect <k> <j> <dtype> <rank> <sizes..> <values..>         arg k (list item j, or -1)
 *   end
 * Each case runs twice: without a scratch arena and with one.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernel.h"
#include "pterun/kernels/portable.h"
#include "tests/harness/pt_test.h"
#include "pterun/kernel_util.h"

#define MAX_ARGS 24
#define MAX_NODES 256

/* Everything a case allocates, freed together. */
typedef struct arena {
  void* ptrs[4096];
  int n;
} arena;

static void* amalloc(arena* a, size_t n) {
  void* p = calloc(1, n ? n : 1);
  if (p == NULL || a->n >= (int)(sizeof a->ptrs / sizeof a->ptrs[0])) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  a->ptrs[a->n++] = p;
  return p;
}

static void afree(arena* a) {
  int i;
  for (i = 0; i < a->n; ++i) free(a->ptrs[i]);
  a->n = 0;
}

typedef struct reader {
  char* p;
  const char* file;
} reader;

static const char* tok(reader* r) {
  char* s;
  while (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r') ++r->p;
  if (*r->p == '\0') return NULL;
  s = r->p;
  while (*r->p && *r->p != ' ' && *r->p != '\n' && *r->p != '\t' && *r->p != '\r') ++r->p;
  if (*r->p) *r->p++ = '\0';
  return s;
}

static int64_t tok_i(reader* r) {
  const char* t = tok(r);
  return t ? strtoll(t, NULL, 10) : 0;
}

static double tok_d(reader* r) {
  const char* t = tok(r);
  return t ? strtod(t, NULL) : 0.0;
}

/* Reads dtype, rank, sizes, dim order; fills the layout fields. */
static int read_layout(reader* r, pterun_tensor* t, int with_order) {
  int d;
  t->dtype = (int32_t)tok_i(r);
  t->rank = (uint8_t)tok_i(r);
  for (d = 0; d < t->rank; ++d) t->sizes[d] = tok_i(r);
  for (d = 0; d < t->rank; ++d) t->dim_order[d] = (uint8_t)(with_order ? tok_i(r) : d);
  for (d = 0; d < t->rank; ++d) t->max_sizes[d] = t->sizes[d];
  return pterun_tensor_update_layout(t) == PTERUN_STATUS_OK ? 0 : -1;
}

/* Element offset of logical index n (row-major over sizes) in t's memory. */
static int64_t logical_off(const pterun_tensor* t, int64_t n) {
  int64_t off = 0;
  int d;
  for (d = t->rank - 1; d >= 0; --d) {
    int64_t sz = t->sizes[d] ? t->sizes[d] : 1;
    off += (n % sz) * t->strides[d];
    n /= sz;
  }
  return off;
}

static void store_val(pterun_tensor* t, int64_t off, const char* s) {
  if (pterun_dtype_is_float(t->dtype))
    pterun_store_f64(t->data, t->dtype, off, strtod(s, NULL));
  else
    pterun_store_i64(t->data, t->dtype, off, strtoll(s, NULL, 10));
}

/* Reads one argument after its "arg" token. */
static pterun_value* read_arg(reader* r, arena* a, pterun_value** args, int nargs);

/* 0: values follow, 1: out tensor, 2: generated values. */
static pterun_value* read_tensor(reader* r, arena* a, int kind) {
  pterun_value* v = amalloc(a, sizeof *v);
  pterun_tensor* t = amalloc(a, sizeof *t);
  int64_t n;
  v->tag = PTERUN_VALUE_TENSOR;
  v->u.tensor = t;
  if (read_layout(r, t, 1) != 0) return NULL;
  if (kind == 1) {
    int64_t cap = tok_i(r);
    t->dynamism = PTERUN_SHAPE_UNBOUNDED;
    t->capacity = (size_t)cap * pterun_dtype_size(t->dtype);
    t->data = amalloc(a, t->capacity);
    /* Poison so an unwritten output element shows up as a mismatch. */
    memset(t->data, 0xA5, t->capacity);
  } else {
    t->dynamism = PTERUN_SHAPE_STATIC;
    t->capacity = t->nbytes;
    t->data = amalloc(a, t->nbytes);
    if (kind == 2) {
      int64_t seed = tok_i(r);
      for (n = 0; n < t->numel; ++n)
        pterun_store_f64(t->data, t->dtype, logical_off(t, n),
                         (double)((n * 7919 + seed * 104729) % 2001 - 1000) / 1000.0);
    } else {
      for (n = 0; n < t->numel; ++n) store_val(t, logical_off(t, n), tok(r));
    }
  }
  return v;
}

static pterun_value* read_list(reader* r, arena* a, pterun_value** args, int nargs, int tag) {
  pterun_value* v = amalloc(a, sizeof *v);
  int64_t len = tok_i(r), k;
  pterun_value** items = amalloc(a, sizeof(pterun_value*) * (size_t)(len ? len : 1));
  v->tag = tag;
  for (k = 0; k < len; ++k) {
    const char* t = tok(r);
    if (t == NULL || strcmp(t, "arg") != 0) return NULL;
    items[k] = read_arg(r, a, args, nargs);
    if (items[k] == NULL) return NULL;
  }
  v->u.tensors.items = items;
  v->u.tensors.len = (size_t)len;
  return v;
}

static pterun_value* read_arg(reader* r, arena* a, pterun_value** args, int nargs) {
  const char* kind = tok(r);
  pterun_value* v;
  int64_t len, k;
  if (kind == NULL) return NULL;
  if (strcmp(kind, "T") == 0) return read_tensor(r, a, 0);
  if (strcmp(kind, "O") == 0) return read_tensor(r, a, 1);
  if (strcmp(kind, "G") == 0) return read_tensor(r, a, 2);
  if (strcmp(kind, "lt") == 0) return read_list(r, a, args, nargs, PTERUN_VALUE_LIST_TENSOR);
  if (strcmp(kind, "lo") == 0)
    return read_list(r, a, args, nargs, PTERUN_VALUE_LIST_OPTIONAL_TENSOR);
  if (strcmp(kind, "r") == 0) {
    k = tok_i(r);
    return k >= 0 && k < nargs ? args[k] : NULL;
  }
  v = amalloc(a, sizeof *v);
  if (strcmp(kind, "i") == 0) {
    v->tag = PTERUN_VALUE_INT;
    v->u.i = tok_i(r);
  } else if (strcmp(kind, "d") == 0) {
    v->tag = PTERUN_VALUE_DOUBLE;
    v->u.d = tok_d(r);
  } else if (strcmp(kind, "b") == 0) {
    v->tag = PTERUN_VALUE_BOOL;
    v->u.b = tok_i(r) != 0;
  } else if (strcmp(kind, "n") == 0) {
    v->tag = PTERUN_VALUE_NONE;
  } else if (strcmp(kind, "li") == 0) {
    pterun_value** items;
    len = tok_i(r);
    items = amalloc(a, sizeof(pterun_value*) * (size_t)(len ? len : 1));
    for (k = 0; k < len; ++k) {
      items[k] = amalloc(a, sizeof(pterun_value));
      items[k]->tag = PTERUN_VALUE_INT;
      items[k]->u.i = tok_i(r);
    }
    v->tag = PTERUN_VALUE_LIST_INT;
    v->u.ints.items = items;
    v->u.ints.scratch = amalloc(a, sizeof(int64_t) * (size_t)(len ? len : 1));
    v->u.ints.len = (size_t)len;
  } else if (strcmp(kind, "ld") == 0) {
    double* items;
    len = tok_i(r);
    items = amalloc(a, sizeof(double) * (size_t)(len ? len : 1));
    for (k = 0; k < len; ++k) items[k] = tok_d(r);
    v->tag = PTERUN_VALUE_LIST_DOUBLE;
    v->u.doubles.items = items;
    v->u.doubles.len = (size_t)len;
  } else if (strcmp(kind, "lb") == 0) {
    uint8_t* items;
    len = tok_i(r);
    items = amalloc(a, (size_t)(len ? len : 1));
    for (k = 0; k < len; ++k) items[k] = (uint8_t)(tok_i(r) != 0);
    v->tag = PTERUN_VALUE_LIST_BOOL;
    v->u.bools.items = items;
    v->u.bools.len = (size_t)len;
  } else if (strcmp(kind, "rl") == 0) {
    pterun_value** items;
    len = tok_i(r);
    items = amalloc(a, sizeof(pterun_value*) * (size_t)(len ? len : 1));
    for (k = 0; k < len; ++k) {
      int64_t j = tok_i(r);
      if (j < 0 || j >= nargs) return NULL;
      items[k] = args[j];
    }
    v->tag = PTERUN_VALUE_LIST_TENSOR;
    v->u.tensors.items = items;
    v->u.tensors.len = (size_t)len;
  } else {
    fprintf(stderr, "%s: unknown arg kind '%s'\n", r->file, kind);
    return NULL;
  }
  return v;
}

static pterun_kernel_fn find_kernel(const char* op) {
  const pterun_kernel_library* lib = pterun_kernels_portable();
  size_t k;
  for (k = 0; k < lib->count; ++k)
    if (strcmp(lib->kernels[k].op, op) == 0) return lib->kernels[k].fn;
  return NULL;
}

/* Compares tensor t against an expectation read from r; returns 0 if equal. */
static int check_expect(reader* r, const pterun_tensor* t, double atol, double rtol,
                        const char* name) {
  pterun_tensor want;
  int d, bad = 0;
  int64_t n;
  memset(&want, 0, sizeof want);
  read_layout(r, &want, 0);
  if (t == NULL) {
    fprintf(stderr, "%s: expected output is not a tensor\n", name);
    for (n = 0; n < want.numel; ++n) tok(r);
    return 1;
  }
  if (want.dtype != t->dtype || want.rank != t->rank) bad = 1;
  for (d = 0; d < want.rank && !bad; ++d)
    if (want.sizes[d] != t->sizes[d]) bad = 1;
  if (bad) {
    fprintf(stderr, "%s: got dtype %d rank %d [", name, t->dtype, t->rank);
    for (d = 0; d < t->rank; ++d) fprintf(stderr, " %lld", (long long)t->sizes[d]);
    fprintf(stderr, " ], want dtype %d rank %d [", want.dtype, want.rank);
    for (d = 0; d < want.rank; ++d) fprintf(stderr, " %lld", (long long)want.sizes[d]);
    fprintf(stderr, " ]\n");
    for (n = 0; n < want.numel; ++n) tok(r);
    return 1;
  }
  for (n = 0; n < want.numel; ++n) {
    const char* s = tok(r);
    int64_t off = logical_off(t, n);
    if (pterun_dtype_is_float(t->dtype)) {
      double g = pterun_load_f64(t->data, t->dtype, off), w = strtod(s, NULL);
      uint64_t tmp = 0;
      /* The text is the shortest round-trip form: round it to the dtype. */
      pterun_store_f64(&tmp, t->dtype, 0, w);
      w = pterun_load_f64(&tmp, t->dtype, 0);
      int ok = (isnan(w) && isnan(g)) || g == w || fabs(g - w) <= atol + rtol * fabs(w);
      if (!ok) {
        if (bad < 5)
          fprintf(stderr, "%s: element %lld: got %.9g want %.9g\n", name, (long long)n, g, w);
        ++bad;
      }
    } else {
      int64_t g = pterun_load_i64(t->data, t->dtype, off), w = strtoll(s, NULL, 10);
      if (g != w) {
        if (bad < 5)
          fprintf(stderr, "%s: element %lld: got %lld want %lld\n", name, (long long)n,
                  (long long)g, (long long)w);
        ++bad;
      }
    }
  }
  if (bad) fprintf(stderr, "%s: %d mismatching elements\n", name, bad);
  return bad != 0;
}

/* Runs the case starting at r (after "case"); returns the number of failures. */
static int run_case(reader* r, int use_scratch, void* scratch, size_t scratch_bytes,
                    const pterun_logger* quiet) {
  arena a;
  pterun_value* args[MAX_ARGS];
  char name[256];
  const char* op;
  const char* t;
  double atol, rtol;
  int want_status, nargs = 0, fails = 0, got;
  pterun_kernel_fn fn;
  a.n = 0;
  snprintf(name, sizeof name, "%s%s", tok(r), use_scratch ? " [scratch]" : "");
  op = tok(r);
  atol = tok_d(r);
  rtol = tok_d(r);
  want_status = (int)tok_i(r);
  fn = find_kernel(op);
  while ((t = tok(r)) != NULL && strcmp(t, "arg") == 0) {
    if (nargs >= MAX_ARGS || (args[nargs] = read_arg(r, &a, args, nargs)) == NULL) {
      fprintf(stderr, "%s: malformed golden case\n", name);
      afree(&a);
      return 1;
    }
    ++nargs;
  }
  if (fn == NULL) {
    fprintf(stderr, "%s: no kernel for %s\n", name, op);
    fails = 1;
  } else {
    got = (int)pterun_kernel_invoke(fn, op, args, (size_t)nargs, want_status == 0 ? NULL : quiet,
                                    use_scratch ? scratch : NULL, scratch_bytes);
    if (got != want_status) {
      fprintf(stderr, "%s: status %s, want %s\n", name, pterun_status_name((pterun_status)got),
              pterun_status_name((pterun_status)want_status));
      fails = 1;
    }
  }
  /* expectations */
  while (t != NULL && strcmp(t, "expect") == 0) {
    int64_t k = tok_i(r), j = tok_i(r);
    const pterun_tensor* out = NULL;
    if (k >= 0 && k < nargs) {
      if (j < 0 && args[k]->tag == PTERUN_VALUE_TENSOR)
        out = args[k]->u.tensor;
      else if (j >= 0)
        out = pterun_value_list_tensor(args[k], (size_t)j);
    }
    if (fails) {
      pterun_tensor skip;
      int64_t n;
      memset(&skip, 0, sizeof skip);
      read_layout(r, &skip, 0);
      for (n = 0; n < skip.numel; ++n) tok(r);
    } else {
      fails += check_expect(r, out, atol, rtol, name);
    }
    t = tok(r);
  }
  if (t == NULL || strcmp(t, "end") != 0) {
    fprintf(stderr, "%s: missing 'end'\n", name);
    fails = 1;
  }
  afree(&a);
  return fails;
}

static char* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  long n;
  char* buf;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    fclose(f);
    return NULL;
  }
  buf[n] = '\0';
  fclose(f);
  return buf;
}

int main(int argc, char** argv) {
  int i, failures = 0, cases = 0;
  size_t scratch_bytes = 4u << 20;
  void* scratch = malloc(scratch_bytes);
  pterun_logger quiet = pterun_logger_silent();
  if (argc < 2) {
    fprintf(stderr, "usage: %s golden-file...\n", argv[0]);
    return 2;
  }
  for (i = 1; i < argc; ++i) {
    char* text = slurp(argv[i]);
    int pass;
    if (text == NULL) {
      fprintf(stderr, "cannot read %s\n", argv[i]);
      ++failures;
      continue;
    }
    /* Two passes over the file: without and with a scratch arena. */
    for (pass = 0; pass < 2; ++pass) {
      char* copy = malloc(strlen(text) + 1);
      reader r;
      const char* t;
      strcpy(copy, text);
      r.p = copy;
      r.file = argv[i];
      while ((t = tok(&r)) != NULL) {
        int f;
        if (strcmp(t, "case") != 0) {
          fprintf(stderr, "%s: expected 'case', got '%s'\n", argv[i], t);
          ++failures;
          break;
        }
        f = run_case(&r, pass, scratch, scratch_bytes, &quiet);
        failures += f;
        ++cases;
      }
      free(copy);
    }
    free(text);
  }
  free(scratch);
  printf("%d golden case runs, %d failed\n", cases, failures);
  return failures != 0;
}
