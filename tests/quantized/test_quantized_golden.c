/* Runs the golden cases of a kernel library (tests/quantized/golden/NAME.bin,
 * written by tools/gen_quantized_goldens.py from ExecuTorch's own kernels or
 * the PyTorch/torchao references; tests/llm/golden/NAME.bin by
 * tools/gen_llm_goldens.py) and compares every output byte for byte, or for
 * float outputs within |got - want| <= atol + rtol * |want| when given.
 * The library is PT_GOLDEN_LIBRARY (default: the quantized one).
 * Usage: test_quantized_golden FILE.bin [-v] [--atol A --rtol R] */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "pterun/pterun.h"
#ifndef PT_GOLDEN_LIBRARY
#include "pterun/kernels/quantized.h"
#define PT_GOLDEN_LIBRARY pterun_kernels_quantized
#else
#include PT_GOLDEN_HEADER
#endif

#define MAX_ARGS 32

#include "tests/harness/pt_reader.h"

/* Reads a tensor; `unbounded`: output tensors may be resized by the kernel.
 * `no_data`: an output placeholder (zero-filled, bytes not in the file). */
static void rd_tensor(reader* r, pterun_tensor* t, int unbounded, int no_data) {
  int k;
  uint64_t nbytes;
  memset(t, 0, sizeof(*t));
  t->dtype = rd_u8(r);
  t->rank = rd_u8(r);
  if (t->rank > PTERUN_MAX_RANK) {
    r->bad = 1;
    t->rank = 0;
    return;
  }
  for (k = 0; k < t->rank; ++k) {
    t->sizes[k] = t->max_sizes[k] = rd_i64(r);
    t->dim_order[k] = (uint8_t)k;
  }
  nbytes = (uint64_t)rd_i64(r);
  if (nbytes > (1u << 26)) {
    r->bad = 1;
    return;
  }
  t->capacity = (size_t)nbytes;
  t->data = calloc((size_t)nbytes + 16, 1);
  if (!no_data) rd(r, t->data, (size_t)nbytes);
  t->dynamism = unbounded ? PTERUN_SHAPE_UNBOUNDED : PTERUN_SHAPE_STATIC;
  if (pterun_tensor_update_layout(t) != PTERUN_STATUS_OK) r->bad = 1;
}

static pterun_kernel_fn find_kernel(const char* op) {
  const pterun_kernel_library* lib = PT_GOLDEN_LIBRARY();
  size_t k;
  for (k = 0; k < lib->count; ++k)
    if (strcmp(lib->kernels[k].op, op) == 0) return lib->kernels[k].fn;
  return NULL;
}

/* Float outputs (f32, f16, bf16) within atol + rtol * |want|, NaN where
 * NaN is expected; other dtypes never (they compare byte for byte). */
static int within_tolerance(const pterun_tensor* got, const pterun_tensor* want, double atol,
                            double rtol) {
  int64_t i;
  for (i = 0; i < want->numel; ++i) {
    double g, w;
    if (want->dtype == PTERUN_DTYPE_F32) {
      g = ((const float*)got->data)[i];
      w = ((const float*)want->data)[i];
    } else if (want->dtype == PTERUN_DTYPE_BF16 || want->dtype == PTERUN_DTYPE_F16) {
      uint16_t gb = ((const uint16_t*)got->data)[i], wb = ((const uint16_t*)want->data)[i];
      g = want->dtype == PTERUN_DTYPE_BF16 ? pterun_bf16_to_f32(gb) : pterun_f16_to_f32(gb);
      w = want->dtype == PTERUN_DTYPE_BF16 ? pterun_bf16_to_f32(wb) : pterun_f16_to_f32(wb);
    } else {
      return 0;
    }
    if (w != w) {
      if (g == g) return 0;
      continue;
    }
    if (!(fabs(g - w) <= atol + rtol * fabs(w))) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  FILE* f;
  long fsize;
  uint8_t* buf;
  reader r;
  uint32_t version, ncases, c;
  int verbose = 0, failures = 0, passed = 0, a;
  double atol = -1.0, rtol = 0.0;
  char magic[4];
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.bin [-v] [--atol A --rtol R]\n", argv[0]);
    return 2;
  }
  for (a = 2; a < argc; ++a) {
    if (strcmp(argv[a], "-v") == 0)
      verbose = 1;
    else if (strcmp(argv[a], "--atol") == 0 && a + 1 < argc)
      atol = strtod(argv[++a], NULL);
    else if (strcmp(argv[a], "--rtol") == 0 && a + 1 < argc)
      rtol = strtod(argv[++a], NULL);
  }
  f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  fsize = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)fsize + 1);
  if (fread(buf, 1, (size_t)fsize, f) != (size_t)fsize) {
    fprintf(stderr, "read error\n");
    return 2;
  }
  fclose(f);
  r.p = buf;
  r.end = buf + fsize;
  r.bad = 0;
  rd(&r, magic, 4);
  version = rd_u32(&r);
  ncases = rd_u32(&r);
  if (memcmp(magic, "PTQG", 4) != 0 || version != 1) {
    fprintf(stderr, "%s: not a PTQG v1 file\n", argv[1]);
    return 2;
  }
  for (c = 0; c < ncases && !r.bad; ++c) {
    pterun_value vals[MAX_ARGS];
    pterun_value* argp[MAX_ARGS];
    pterun_tensor tensors[MAX_ARGS];
    pterun_value* list_items[MAX_ARGS][8];
    pterun_value int_items[MAX_ARGS][PTERUN_MAX_RANK];
    pterun_value* int_ptrs[MAX_ARGS][PTERUN_MAX_RANK];
    int64_t int_scratch[MAX_ARGS][PTERUN_MAX_RANK];
    char* strs[MAX_ARGS];
    int is_out[MAX_ARGS];
    pterun_tensor expect[MAX_ARGS];
    int expect_idx[MAX_ARGS];
    char *op, *label;
    unsigned nargs, nexp, k, e;
    pterun_status st;
    pterun_kernel_fn fn;
    int ok = 1;
    const uint8_t* save;
    memset(vals, 0, sizeof(vals));
    memset(strs, 0, sizeof(strs));
    memset(is_out, 0, sizeof(is_out));
    memset(tensors, 0, sizeof(tensors));
    op = rd_str(&r, NULL);
    label = rd_str(&r, NULL);
    nargs = rd_u8(&r);
    if (nargs > MAX_ARGS) {
      r.bad = 1;
      break;
    }
    /* First pass: note which tensor args are outputs (listed after the args). */
    save = r.p;
    for (k = 0; k < nargs && !r.bad; ++k) {
      uint8_t kind = rd_u8(&r);
      switch (kind) {
        case 0: vals[k].tag = PTERUN_VALUE_NONE; break;
        case 1:
        case 12:
          rd_tensor(&r, &tensors[k], kind == 12, kind == 12);
          vals[k].tag = PTERUN_VALUE_TENSOR;
          vals[k].u.tensor = &tensors[k];
          break;
        case 2: {
          size_t len;
          strs[k] = rd_str(&r, &len);
          vals[k].tag = PTERUN_VALUE_STRING;
          vals[k].u.str.data = strs[k];
          vals[k].u.str.len = len;
          break;
        }
        case 3:
          vals[k].tag = PTERUN_VALUE_DOUBLE;
          vals[k].u.d = rd_f64(&r);
          break;
        case 4:
          vals[k].tag = PTERUN_VALUE_INT;
          vals[k].u.i = rd_i64(&r);
          break;
        case 5:
          vals[k].tag = PTERUN_VALUE_BOOL;
          vals[k].u.b = rd_u8(&r) != 0;
          break;
        case 8: {
          uint32_t n = rd_u32(&r), j;
          if (n > PTERUN_MAX_RANK) {
            r.bad = 1;
            break;
          }
          for (j = 0; j < n; ++j) {
            int_items[k][j].tag = PTERUN_VALUE_INT;
            int_items[k][j].u.i = rd_i64(&r);
            int_ptrs[k][j] = &int_items[k][j];
          }
          vals[k].tag = PTERUN_VALUE_LIST_INT;
          vals[k].u.ints.items = int_ptrs[k];
          vals[k].u.ints.scratch = int_scratch[k];
          vals[k].u.ints.len = n;
          break;
        }
        case 10: {
          uint8_t j = rd_u8(&r);
          if (j >= k) r.bad = 1;
          argp[k] = &vals[j];
          vals[k].tag = -1; /* alias */
          vals[k].u.i = j;
          break;
        }
        case 11: {
          uint8_t n = rd_u8(&r), j;
          if (n > 8) r.bad = 1;
          for (j = 0; j < n && !r.bad; ++j) {
            uint8_t ix = rd_u8(&r);
            if (ix >= k) r.bad = 1;
            list_items[k][j] = &vals[ix];
          }
          vals[k].tag = PTERUN_VALUE_LIST_TENSOR;
          vals[k].u.tensors.items = list_items[k];
          vals[k].u.tensors.len = n;
          break;
        }
        default: r.bad = 1; break;
      }
    }
    (void)save;
    for (k = 0; k < nargs; ++k) argp[k] = vals[k].tag == -1 ? &vals[vals[k].u.i] : &vals[k];
    nexp = rd_u8(&r);
    for (e = 0; e < nexp && e < MAX_ARGS && !r.bad; ++e) {
      expect_idx[e] = rd_u8(&r);
      rd_tensor(&r, &expect[e], 0, 0);
      if (expect_idx[e] >= (int)nargs || vals[expect_idx[e]].tag != PTERUN_VALUE_TENSOR)
        r.bad = 1;
      else {
        pterun_tensor* t = &tensors[expect_idx[e]];
        is_out[expect_idx[e]] = 1;
        t->dynamism = PTERUN_SHAPE_UNBOUNDED;
      }
    }
    if (r.bad) break;
    fn = find_kernel(op);
    if (fn == NULL) {
      printf("FAIL [%u] %s (%s): operator not registered\n", c, op, label);
      ++failures;
    } else {
      st = pterun_kernel_invoke(fn, op, argp, nargs, NULL, NULL, 0);
      if (st != PTERUN_STATUS_OK) {
        printf("FAIL [%u] %s (%s): status %s\n", c, op, label, pterun_status_name(st));
        ok = 0;
      }
      for (e = 0; ok && e < nexp; ++e) {
        const pterun_tensor* got = &tensors[expect_idx[e]];
        const pterun_tensor* want = &expect[e];
        int d, same = got->rank == want->rank && got->dtype == want->dtype;
        for (d = 0; same && d < got->rank; ++d) same = got->sizes[d] == want->sizes[d];
        if (!same) {
          printf("FAIL [%u] %s (%s): arg %d shape/dtype mismatch\n", c, op, label, expect_idx[e]);
          ok = 0;
          break;
        }
        if (atol >= 0.0 && within_tolerance(got, want, atol, rtol)) continue;
        if (memcmp(got->data, want->data, want->nbytes) != 0) {
          size_t esz = pterun_dtype_size(want->dtype), n = want->nbytes / (esz ? esz : 1), i;
          for (i = 0; i < n; ++i)
            if (memcmp((const char*)got->data + i * esz, (const char*)want->data + i * esz, esz))
              break;
          printf("FAIL [%u] %s (%s): arg %d differs at element %zu (of %zu)", c, op, label,
                 expect_idx[e], i, n);
          if (want->dtype == PTERUN_DTYPE_F32)
            printf(": got %.9g want %.9g", ((const float*)got->data)[i],
                   ((const float*)want->data)[i]);
          else if (want->dtype == PTERUN_DTYPE_F64)
            printf(": got %.17g want %.17g", ((const double*)got->data)[i],
                   ((const double*)want->data)[i]);
          else if (want->dtype == PTERUN_DTYPE_I64)
            printf(": got %" PRId64 " want %" PRId64, ((const int64_t*)got->data)[i],
                   ((const int64_t*)want->data)[i]);
          else if (esz == 1)
            printf(": got %d want %d (as int8)", ((const int8_t*)got->data)[i],
                   ((const int8_t*)want->data)[i]);
          else if (esz == 2)
            printf(": got 0x%04x want 0x%04x", ((const uint16_t*)got->data)[i],
                   ((const uint16_t*)want->data)[i]);
          printf("\n");
          ok = 0;
        }
      }
      if (ok) {
        ++passed;
        if (verbose) printf("ok   [%u] %s (%s)\n", c, op, label);
      } else {
        ++failures;
      }
    }
    for (k = 0; k < nargs; ++k) {
      free(tensors[k].data);
      free(strs[k]);
    }
    for (e = 0; e < nexp && e < MAX_ARGS; ++e) free(expect[e].data);
    free(op);
    free(label);
    (void)is_out;
  }
  if (r.bad) {
    printf("FAIL: %s is truncated or malformed (case %u)\n", argv[1], c);
    ++failures;
  }
  printf("%s: %d passed, %d failed\n", argv[1], passed, failures);
  free(buf);
  return failures ? 1 : 0;
}
