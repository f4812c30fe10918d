/* Runs the PyTorch-generated golden cases for the portable math kernels
 * (tests/kernels/golden/math_*.bin, written by tools/gen_math_goldens.py).
 * Usage: test_math_golden FILE.bin [-v] */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"

#define MAX_ARGS 16

#include "tests/harness/pt_reader.h"

/* Reads a tensor header + data into t (data malloc'd, at least 16 bytes). */
static void rd_tensor(reader* r, pterun_tensor* t) {
  int k;
  uint64_t nbytes;
  memset(t, 0, sizeof(*t));
  t->dtype = rd_u8(r);
  t->rank = rd_u8(r);
  if (t->rank > PTERUN_MAX_RANK) {
    r->bad = 1;
    return;
  }
  for (k = 0; k < t->rank; ++k) t->sizes[k] = t->max_sizes[k] = rd_i64(r);
  for (k = 0; k < t->rank; ++k) t->dim_order[k] = rd_u8(r);
  nbytes = (uint64_t)rd_i64(r);
  t->capacity = (size_t)nbytes;
  t->data = calloc((size_t)nbytes + 16, 1);
  rd(r, t->data, (size_t)nbytes);
  t->dynamism = PTERUN_SHAPE_STATIC;
  if (pterun_tensor_update_layout(t) != PTERUN_STATUS_OK) r->bad = 1;
}

static double ld(const pterun_tensor* t, int64_t off) {
  const void* p = t->data;
  switch (t->dtype) {
    case PTERUN_DTYPE_F32: return ((const float*)p)[off];
    case PTERUN_DTYPE_F64: return ((const double*)p)[off];
    case PTERUN_DTYPE_F16: {
      uint16_t h = ((const uint16_t*)p)[off];
      uint32_t sign = (uint32_t)(h >> 15), e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
      double v = e == 0    ? ldexp((double)m, -24)
                 : e == 31 ? (m ? NAN : INFINITY)
                           : ldexp((double)(m | 0x400u), (int)e - 25);
      return sign ? -v : v;
    }
    case PTERUN_DTYPE_BF16: {
      uint32_t u = (uint32_t)((const uint16_t*)p)[off] << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_BOOL: return ((const uint8_t*)p)[off];
    case PTERUN_DTYPE_I8: return ((const int8_t*)p)[off];
    case PTERUN_DTYPE_I16: return ((const int16_t*)p)[off];
    case PTERUN_DTYPE_I32: return ((const int32_t*)p)[off];
    case PTERUN_DTYPE_I64: return (double)((const int64_t*)p)[off];
    default: return NAN;
  }
}

static int64_t logical_off(const pterun_tensor* t, int64_t n) {
  int64_t off = 0;
  int k;
  for (k = (int)t->rank - 1; k >= 0; --k) {
    int64_t sz = t->sizes[k];
    off += (n % sz) * t->strides[k];
    n /= sz;
  }
  return off;
}

static int is_float(int dt) {
  return dt == PTERUN_DTYPE_F32 || dt == PTERUN_DTYPE_F64 || dt == PTERUN_DTYPE_F16 ||
         dt == PTERUN_DTYPE_BF16;
}

/* Compares got against want element by element (logical order). */
static int compare(const char* label, int which, const pterun_tensor* got,
                   const pterun_tensor* want, double rtol, double atol, int exact, int verbose) {
  int64_t n, bad = 0;
  int k;
  if (got->dtype != want->dtype || got->rank != want->rank) {
    fprintf(stderr, "  %s: out%d dtype/rank %d/%d, want %d/%d\n", label, which, got->dtype,
            got->rank, want->dtype, want->rank);
    return 1;
  }
  for (k = 0; k < want->rank; ++k)
    if (got->sizes[k] != want->sizes[k]) {
      fprintf(stderr, "  %s: out%d size[%d] = %" PRId64 ", want %" PRId64 "\n", label, which, k,
              got->sizes[k], want->sizes[k]);
      return 1;
    }
  for (n = 0; n < want->numel; ++n) {
    double g = ld(got, logical_off(got, n)), w = ld(want, logical_off(want, n));
    int ok;
    if (!is_float(want->dtype))
      ok = g == w;
    else if (isnan(w))
      ok = isnan(g);
    else if (isinf(w) || exact)
      ok = g == w && (!exact || signbit(g) == signbit(w));
    else
      ok = fabs(g - w) <= atol + rtol * fabs(w);
    if (!ok) {
      if (bad < 5 || verbose)
        fprintf(stderr, "  %s: out%d[%" PRId64 "] = %.9g, want %.9g\n", label, which, n, g, w);
      ++bad;
    }
  }
  return bad != 0;
}

static pterun_kernel_fn find_kernel(const char* op) {
  const pterun_kernel_library* lib = pterun_kernels_portable();
  size_t k;
  for (k = 0; k < lib->count; ++k)
    if (strcmp(lib->kernels[k].op, op) == 0) return lib->kernels[k].fn;
  return NULL;
}

typedef struct case_mem {
  pterun_value vals[MAX_ARGS + 1];
  pterun_value ints[MAX_ARGS][PTERUN_MAX_RANK];
  pterun_value* int_ptrs[MAX_ARGS][PTERUN_MAX_RANK];
  int64_t int_scratch[MAX_ARGS][PTERUN_MAX_RANK];
  pterun_tensor tensors[MAX_ARGS];
  pterun_tensor want[4];
  double rtol[4], atol[4];
  int exact[4];
  char* strs[MAX_ARGS];
  pterun_value* list_items[4];
  pterun_value* args[MAX_ARGS + 1];
} case_mem;

static void free_case(case_mem* m) {
  int k;
  for (k = 0; k < MAX_ARGS; ++k) {
    free(m->tensors[k].data);
    free(m->strs[k]);
  }
  for (k = 0; k < 4; ++k) free(m->want[k].data);
}

/* Runs one case; returns 0 on pass. */
static int run_case(reader* r, int verbose, int* cases_run) {
  case_mem* m = calloc(1, sizeof(case_mem));
  char *op, *label;
  int32_t want_status;
  uint32_t nargs, nouts, k, out_idx[4], nvals;
  int fail = 0;
  pterun_status st;
  pterun_kernel_fn fn;
  pterun_logger silent = pterun_logger_silent();

  op = rd_str(r, NULL);
  label = rd_str(r, NULL);
  rd(r, &want_status, 4);
  nargs = rd_u32(r);
  if (nargs > MAX_ARGS - 4) r->bad = 1;
  for (k = 0; k < nargs && !r->bad; ++k) {
    pterun_value* v = &m->vals[k];
    uint8_t kind = rd_u8(r);
    switch (kind) {
      case 0: v->tag = PTERUN_VALUE_NONE; break;
      case 1:
        rd_tensor(r, &m->tensors[k]);
        v->tag = PTERUN_VALUE_TENSOR;
        v->u.tensor = &m->tensors[k];
        break;
      case 2:
        v->tag = PTERUN_VALUE_INT;
        v->u.i = rd_i64(r);
        break;
      case 3:
        v->tag = PTERUN_VALUE_DOUBLE;
        v->u.d = rd_f64(r);
        break;
      case 4:
        v->tag = PTERUN_VALUE_BOOL;
        v->u.b = rd_u8(r) != 0;
        break;
      case 5: {
        size_t len;
        m->strs[k] = rd_str(r, &len);
        v->tag = PTERUN_VALUE_STRING;
        v->u.str.data = m->strs[k];
        v->u.str.len = len;
        break;
      }
      case 6: {
        uint32_t n = rd_u32(r), j;
        if (n > PTERUN_MAX_RANK) {
          r->bad = 1;
          break;
        }
        for (j = 0; j < n; ++j) {
          m->ints[k][j].tag = PTERUN_VALUE_INT;
          m->ints[k][j].u.i = rd_i64(r);
          m->int_ptrs[k][j] = &m->ints[k][j];
        }
        v->tag = PTERUN_VALUE_LIST_INT;
        v->u.ints.items = m->int_ptrs[k];
        v->u.ints.scratch = m->int_scratch[k];
        v->u.ints.len = n;
        break;
      }
      default: r->bad = 1;
    }
  }
  nouts = rd_u32(r);
  if (nouts > 4) r->bad = 1;
  for (k = 0; k < nouts && !r->bad; ++k) {
    pterun_tensor* t;
    int d;
    size_t cap;
    rd_tensor(r, &m->want[k]);
    rd(r, &m->rtol[k], 8);
    rd(r, &m->atol[k], 8);
    m->exact[k] = rd_u8(r);
    /* The out: same dtype and dim order, wrong initial sizes (the kernel must
     * resize it), bounded by the expected sizes; filled with a pattern. */
    out_idx[k] = nargs + k;
    t = &m->tensors[out_idx[k]];
    *t = m->want[k];
    cap = m->want[k].nbytes + 16;
    if (want_status != 0) {
      t->dynamism = PTERUN_SHAPE_UNBOUNDED;
      cap = 1 << 16;
    } else {
      t->dynamism = PTERUN_SHAPE_BOUNDED;
      if (t->rank > 0) t->sizes[0] = 0;
    }
    for (d = 0; d < t->rank; ++d) t->max_sizes[d] = m->want[k].sizes[d];
    t->data = malloc(cap);
    memset(t->data, 0xCD, cap);
    t->capacity = cap;
    (void)pterun_tensor_update_layout(t);
    m->vals[out_idx[k]].tag = PTERUN_VALUE_TENSOR;
    m->vals[out_idx[k]].u.tensor = t;
  }
  if (r->bad) {
    fprintf(stderr, "malformed golden file near case '%s'\n", label);
    free_case(m);
    free(m);
    free(op);
    free(label);
    return 1;
  }
  nvals = nargs + nouts;
  for (k = 0; k < nvals; ++k) m->args[k] = &m->vals[k];
  /* Return slot: the out again, or a TensorList of the outs. */
  if (nouts == 1) {
    m->args[nvals] = &m->vals[out_idx[0]];
  } else {
    for (k = 0; k < nouts; ++k) m->list_items[k] = &m->vals[out_idx[k]];
    m->vals[nvals].tag = PTERUN_VALUE_LIST_TENSOR;
    m->vals[nvals].u.tensors.items = m->list_items;
    m->vals[nvals].u.tensors.len = nouts;
    m->args[nvals] = &m->vals[nvals];
  }

  fn = find_kernel(op);
  ++*cases_run;
  if (fn == NULL) {
    fprintf(stderr, "FAIL %s: %s is not registered\n", label, op);
    fail = 1;
  } else {
    st = pterun_kernel_invoke(fn, op, m->args, nvals + 1, verbose ? NULL : &silent, NULL, 0);
    if ((int)st != want_status) {
      fprintf(stderr, "FAIL %s (%s): status %s, want %s\n", label, op, pterun_status_name(st),
              pterun_status_name((pterun_status)want_status));
      fail = 1;
    } else if (st == PTERUN_STATUS_OK) {
      for (k = 0; k < nouts; ++k)
        if (compare(label, (int)k, &m->tensors[out_idx[k]], &m->want[k], m->rtol[k], m->atol[k],
                    m->exact[k], verbose)) {
          fprintf(stderr, "FAIL %s (%s)\n", label, op);
          fail = 1;
          break;
        }
    }
  }
  if (verbose && !fail) printf("ok   %s (%s)\n", label, op);
  free_case(m);
  free(m);
  free(op);
  free(label);
  return fail;
}

int main(int argc, char** argv) {
  FILE* f;
  long size;
  uint8_t* buf;
  reader r;
  char magic[4];
  uint32_t version, ncases, c;
  int failures = 0, run = 0, verbose = argc > 2 && strcmp(argv[2], "-v") == 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s GOLDEN.bin [-v]\n", argv[0]);
    return 2;
  }
  f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)size);
  if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(buf);
    return 2;
  }
  fclose(f);
  r.p = buf;
  r.end = buf + size;
  r.bad = 0;
  rd(&r, magic, 4);
  version = rd_u32(&r);
  ncases = rd_u32(&r);
  if (memcmp(magic, "PTMG", 4) != 0 || version != 1) {
    fprintf(stderr, "%s: not a PTMG v1 golden file\n", argv[1]);
    free(buf);
    return 2;
  }
  for (c = 0; c < ncases && !r.bad; ++c) failures += run_case(&r, verbose, &run);
  free(buf);
  printf("%s: %d/%d cases passed\n", argv[1], run - failures, (int)ncases);
  return failures || r.bad || run != (int)ncases ? 1 : 0;
}
