/* Bundled programs (BP08): verification, the embedded program, test-case
 * inputs and ExecuTorch's output comparison rule. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pterun/bundled.h"
#include "pterun/file.h"
#include "pterun/flatbuffer.h"
#include "pterun/kernel_util.h"
#include "pterun/method.h"
#include "src/devtools/dt_util.h"

/* Vtable slots of bundled_program_schema.fbs. */
enum {
  BP_ROOT_VERSION = 4,
  BP_ROOT_SUITES = 6,
  BP_ROOT_PROGRAM = 8,
  BP_SUITE_METHOD = 4,
  BP_SUITE_CASES = 6,
  BP_CASE_INPUTS = 4,
  BP_CASE_OUTPUTS = 6,
  BP_VALUE_TYPE = 4,
  BP_VALUE_VAL = 6,
  BP_TENSOR_DTYPE = 4,
  BP_TENSOR_SIZES = 6,
  BP_TENSOR_DATA = 8,
  BP_TENSOR_DIM_ORDER = 10,
  BP_SCALAR_VAL = 4,
};
/* ValueUnion tags. */
enum { BP_TENSOR = 1, BP_INT = 2, BP_BOOL = 3, BP_DOUBLE = 4 };

/* The format aligns the embedded program (force_align: 32). */
#define BP_PROGRAM_ALIGN 32

struct pterun_bundle {
  pterun_file_image* file; /* owned bytes, or NULL for a borrowed buffer */
  const uint8_t* data;
  size_t size;
  pterun_fb_buf fb;
  pterun_fb_table root;
  pterun_fb_vec suites;
  const uint8_t* program;
  size_t program_size;
  uint32_t version;
  pterun_logger logger;
  pterun_allocator allocator_copy;
  int has_allocator;
};

int pterun_is_bundled_program(const void* data, size_t size) {
  return data != NULL && size >= 8 && memcmp((const uint8_t*)data + 4, "BP08", 4) == 0;
}

static pterun_status bfail(const pterun_bundle* b, const char* where, const char* what) {
  return dt_fail(&b->logger, PTERUN_STATUS_INVALID_PROGRAM, "bundled program: %s: %s", where, what);
}

/* Reads and checks one Value table (tensor shape, dtype, dim order, data
 * extent; scalar fields). Used by the verifier and the accessors alike. */
static pterun_status read_value(const pterun_bundle* b, const pterun_fb_table* v, const char* where,
                                pterun_bundle_value* out) {
  memset(out, 0, sizeof *out);
  if (!pterun_fb_check_scalar(v, BP_VALUE_TYPE, 1)) return bfail(b, where, "value type malformed");
  uint8_t tag = pterun_fb_u8(v, BP_VALUE_TYPE, 0);
  pterun_fb_table t;
  if (tag < BP_TENSOR || tag > BP_DOUBLE) return bfail(b, where, "unknown value type");
  if (pterun_fb_get_table(v, BP_VALUE_VAL, &t) != 1) return bfail(b, where, "value missing");
  switch (tag) {
    case BP_INT:
      if (!pterun_fb_check_scalar(&t, BP_SCALAR_VAL, 8)) return bfail(b, where, "int malformed");
      out->tag = PTERUN_VALUE_INT;
      out->i = pterun_fb_i64(&t, BP_SCALAR_VAL, 0);
      return PTERUN_STATUS_OK;
    case BP_BOOL:
      if (!pterun_fb_check_scalar(&t, BP_SCALAR_VAL, 1)) return bfail(b, where, "bool malformed");
      out->tag = PTERUN_VALUE_BOOL;
      out->b = pterun_fb_u8(&t, BP_SCALAR_VAL, 0) != 0;
      return PTERUN_STATUS_OK;
    case BP_DOUBLE:
      if (!pterun_fb_check_scalar(&t, BP_SCALAR_VAL, 8)) return bfail(b, where, "double malformed");
      out->tag = PTERUN_VALUE_DOUBLE;
      out->d = pterun_fb_f64(&t, BP_SCALAR_VAL, 0);
      return PTERUN_STATUS_OK;
    default: break;
  }
  out->tag = PTERUN_VALUE_TENSOR;
  if (!pterun_fb_check_scalar(&t, BP_TENSOR_DTYPE, 1)) return bfail(b, where, "dtype malformed");
  out->dtype = pterun_fb_i8(&t, BP_TENSOR_DTYPE, 0);
  size_t item = out->dtype >= 0 ? pterun_dtype_size(out->dtype) : 0;
  if (item == 0) return bfail(b, where, "invalid scalar type");
  pterun_fb_vec sizes, order, data;
  if (pterun_fb_get_vector(&t, BP_TENSOR_SIZES, 4, &sizes) != 1)
    return bfail(b, where, "tensor sizes missing or malformed");
  if (sizes.len > PTERUN_MAX_RANK) return bfail(b, where, "tensor rank too large");
  out->rank = sizes.len;
  uint64_t numel = 1, nbytes;
  for (uint32_t d = 0; d < sizes.len; ++d) {
    int32_t s = (int32_t)pterun_fb_read_u32(pterun_fb_vec_at(&sizes, d));
    if (s < 0) return bfail(b, where, "negative tensor size");
    out->sizes[d] = s;
    if (__builtin_mul_overflow(numel, (uint64_t)s, &numel))
      return bfail(b, where, "tensor size overflows");
  }
  if (__builtin_mul_overflow(numel, item, &nbytes) || nbytes > SIZE_MAX)
    return bfail(b, where, "tensor size overflows");
  int r = pterun_fb_get_vector(&t, BP_TENSOR_DIM_ORDER, 1, &order);
  if (r < 0) return bfail(b, where, "dim order malformed");
  unsigned seen = 0;
  for (uint32_t d = 0; d < out->rank; ++d) {
    uint8_t o = r == 1 && order.len == out->rank ? *pterun_fb_vec_at(&order, d) : (uint8_t)d;
    if (r == 1 && order.len != out->rank) return bfail(b, where, "dim order length != rank");
    if (o >= out->rank || (seen & (1u << o))) return bfail(b, where, "dim order not a permutation");
    seen |= 1u << o;
    out->dim_order[d] = o;
  }
  r = pterun_fb_get_vector(&t, BP_TENSOR_DATA, 1, &data);
  if (r < 0 || (r == 0 && nbytes > 0)) return bfail(b, where, "tensor data missing or malformed");
  if (r == 1 && data.len < nbytes) return bfail(b, where, "tensor data shorter than its shape");
  // Tensor inputs are bound in place: the data must be aligned for its dtype.
  if (nbytes > 0 && !pterun_dtype_aligned(b->fb.base + data.pos, out->dtype))
    return bfail(b, where, "tensor data misaligned for its dtype");
  out->data = r == 1 ? b->fb.base + data.pos : NULL;
  out->nbytes = (size_t)nbytes;
  return PTERUN_STATUS_OK;
}

static bool case_table(const pterun_bundle* b, size_t suite, size_t tc, pterun_fb_table* out) {
  pterun_fb_table s;
  pterun_fb_vec cases;
  if (suite >= b->suites.len || !pterun_fb_vec_table(&b->suites, (uint32_t)suite, &s)) return false;
  if (pterun_fb_get_vector(&s, BP_SUITE_CASES, 4, &cases) != 1 || tc >= cases.len) return false;
  return pterun_fb_vec_table(&cases, (uint32_t)tc, out);
}

static pterun_status verify(pterun_bundle* b) {
  const uint8_t* d = b->data;
  size_t n = b->size;
  char where[96];
  if (n < 8 || !pterun_is_bundled_program(d, n))
    return dt_fail(&b->logger, PTERUN_STATUS_INVALID_PROGRAM,
                   "not a bundled program (no BP08 identifier)");
  b->fb.base = d;
  b->fb.size = n;
  if (!pterun_fb_root(&b->fb, &b->root)) return bfail(b, "root", "table malformed");
  if (!pterun_fb_check_scalar(&b->root, BP_ROOT_VERSION, 4)) return bfail(b, "root", "version");
  b->version = pterun_fb_u32(&b->root, BP_ROOT_VERSION, 0);
  pterun_fb_vec prog;
  if (pterun_fb_get_vector(&b->root, BP_ROOT_PROGRAM, 1, &prog) != 1 || prog.len == 0)
    return bfail(b, "program", "missing or malformed");
  if ((prog.pos % BP_PROGRAM_ALIGN) != 0 || ((uintptr_t)(d + prog.pos) % 16) != 0)
    return bfail(b, "program", "not aligned to 32 bytes as the format promises");
  b->program = d + prog.pos;
  b->program_size = prog.len;
  int r = pterun_fb_get_vector(&b->root, BP_ROOT_SUITES, 4, &b->suites);
  if (r < 0) return bfail(b, "test suites", "malformed");
  if (r == 0) memset(&b->suites, 0, sizeof b->suites);
  for (uint32_t s = 0; s < b->suites.len; ++s) {
    pterun_fb_table st;
    pterun_fb_vec cases;
    const char* name;
    uint32_t nlen;
    snprintf(where, sizeof where, "suite %u", s);
    if (!pterun_fb_vec_table(&b->suites, s, &st)) return bfail(b, where, "table malformed");
    if (pterun_fb_get_string(&st, BP_SUITE_METHOD, &name, &nlen) != 1 || strlen(name) != nlen)
      return bfail(b, where, "method name missing or malformed");
    r = pterun_fb_get_vector(&st, BP_SUITE_CASES, 4, &cases);
    if (r != 1) return bfail(b, where, "test cases missing or malformed");
    for (uint32_t c = 0; c < cases.len; ++c) {
      pterun_fb_table ct;
      snprintf(where, sizeof where, "suite %u case %u", s, c);
      if (!pterun_fb_vec_table(&cases, c, &ct)) return bfail(b, where, "table malformed");
      for (int io = 0; io < 2; ++io) {
        pterun_fb_vec vals;
        r = pterun_fb_get_vector(&ct, io ? BP_CASE_OUTPUTS : BP_CASE_INPUTS, 4, &vals);
        if (r < 0) return bfail(b, where, io ? "expected outputs malformed" : "inputs malformed");
        for (uint32_t k = 0; r == 1 && k < vals.len; ++k) {
          pterun_fb_table vt;
          pterun_bundle_value v;
          snprintf(where, sizeof where, "suite %u case %u %s %u", s, c,
                   io ? "expected output" : "input", k);
          if (!pterun_fb_vec_table(&vals, k, &vt)) return bfail(b, where, "table malformed");
          PTERUN_TRY(read_value(b, &vt, where, &v));
        }
      }
    }
  }
  return PTERUN_STATUS_OK;
}

static pterun_bundle* new_bundle(const pterun_load_options* o) {
  const pterun_allocator* a = o->allocator;
  pterun_bundle* b = pterun_alloc(a, sizeof *b, 16);
  if (b == NULL) return NULL;
  if (o->logger.fn != NULL) b->logger = o->logger; /* else zero: the stderr logger */
  if (a != NULL) {
    b->allocator_copy = *a;
    b->has_allocator = 1;
  }
  return b;
}

static pterun_status finish(pterun_bundle* b, pterun_bundle** out) {
  if (b->file != NULL) {
    b->data = pterun_file_image_data(b->file);
    b->size = pterun_file_image_size(b->file);
  }
  pterun_status st = verify(b);
  if (st != PTERUN_STATUS_OK) {
    pterun_bundle_destroy(b);
    return st;
  }
  *out = b;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_bundle_load_buffer(const void* data, size_t size, const pterun_load_options* o,
                                        pterun_bundle** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (data == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_load_options lo;
  PTERUN_TRY(pterun_options_read(o, &lo, sizeof lo, NULL, "pterun_load_options"));
  pterun_bundle* b = new_bundle(&lo);
  if (b == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (lo.copy) {
    pterun_status st = pterun_file_image_copy(
        data, size, b->has_allocator ? &b->allocator_copy : NULL, &b->logger, &b->file);
    if (st != PTERUN_STATUS_OK) {
      pterun_bundle_destroy(b);
      return st;
    }
  } else {
    if (((uintptr_t)data % BP_PROGRAM_ALIGN) != 0) {
      dt_fail(&b->logger, PTERUN_STATUS_INVALID_ARGUMENT,
              "a borrowed bundle must be %d-byte aligned", BP_PROGRAM_ALIGN);
      pterun_bundle_destroy(b);
      return PTERUN_STATUS_INVALID_ARGUMENT;
    }
    b->data = data;
    b->size = size;
  }
  return finish(b, out);
}

pterun_status pterun_bundle_load_file(const char* path, pterun_file_mode mode,
                                      const pterun_load_options* o, pterun_bundle** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (path == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_load_options lo;
  PTERUN_TRY(pterun_options_read(o, &lo, sizeof lo, NULL, "pterun_load_options"));
  pterun_bundle* b = new_bundle(&lo);
  if (b == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  pterun_status st = pterun_file_image_open(
      path, mode, b->has_allocator ? &b->allocator_copy : NULL, &b->logger, &b->file);
  if (st != PTERUN_STATUS_OK) {
    pterun_bundle_destroy(b);
    return st;
  }
  return finish(b, out);
}

void pterun_bundle_destroy(pterun_bundle* b) {
  if (b == NULL) return;
  pterun_file_image_close(b->file);
  pterun_allocator copy = b->allocator_copy;
  pterun_free(b->has_allocator ? &copy : NULL, b);
}

pterun_status pterun_bundle_program(const pterun_bundle* b, const pterun_load_options* o,
                                    pterun_program** out) {
  if (b == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_load_options lo;
  PTERUN_TRY(pterun_options_read(o, &lo, sizeof lo, &b->logger, "pterun_load_options"));
  if (o == NULL) lo.logger = b->logger;
  return pterun_program_load_buffer(b->program, b->program_size, &lo, out);
}

void pterun_bundle_program_bytes(const pterun_bundle* b, const void** data, size_t* size) {
  if (data) *data = b != NULL ? b->program : NULL;
  if (size) *size = b != NULL ? b->program_size : 0;
}

uint32_t pterun_bundle_version(const pterun_bundle* b) {
  return b != NULL ? b->version : 0;
}

size_t pterun_bundle_suite_count(const pterun_bundle* b) {
  return b != NULL ? b->suites.len : 0;
}

pterun_status pterun_bundle_suite(const pterun_bundle* b, size_t suite, const char** name,
                                  size_t* cases_out) {
  pterun_fb_table s;
  pterun_fb_vec cases;
  uint32_t len;
  const char* nm;
  if (b == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (suite >= b->suites.len || !pterun_fb_vec_table(&b->suites, (uint32_t)suite, &s))
    return PTERUN_STATUS_NOT_FOUND;
  if (pterun_fb_get_string(&s, BP_SUITE_METHOD, &nm, &len) != 1 ||
      pterun_fb_get_vector(&s, BP_SUITE_CASES, 4, &cases) != 1)
    return PTERUN_STATUS_INVALID_PROGRAM; /* verified at load: unreachable */
  if (name) *name = nm;
  if (cases_out) *cases_out = cases.len;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_bundle_find_suite(const pterun_bundle* b, const char* method, size_t* out) {
  if (b == NULL || method == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  for (size_t s = 0; s < b->suites.len; ++s) {
    const char* nm;
    if (pterun_bundle_suite(b, s, &nm, NULL) == PTERUN_STATUS_OK && strcmp(nm, method) == 0) {
      if (out) *out = s;
      return PTERUN_STATUS_OK;
    }
  }
  return PTERUN_STATUS_NOT_FOUND;
}

static uint32_t value_count(const pterun_fb_table* ct, int is_output) {
  pterun_fb_vec v;
  return pterun_fb_get_vector(ct, is_output ? BP_CASE_OUTPUTS : BP_CASE_INPUTS, 4, &v) == 1 ? v.len
                                                                                            : 0;
}

pterun_status pterun_bundle_case(const pterun_bundle* b, size_t suite, size_t tc, size_t* nin,
                                 size_t* nout) {
  pterun_fb_table ct;
  if (b == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (!case_table(b, suite, tc, &ct)) return PTERUN_STATUS_NOT_FOUND;
  if (nin) *nin = value_count(&ct, 0);
  if (nout) *nout = value_count(&ct, 1);
  return PTERUN_STATUS_OK;
}

pterun_status pterun_bundle_value_get(const pterun_bundle* b, size_t suite, size_t tc,
                                      int is_output, size_t k, pterun_bundle_value* out) {
  pterun_fb_table ct, vt;
  pterun_fb_vec vals;
  if (b == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (!case_table(b, suite, tc, &ct)) return PTERUN_STATUS_NOT_FOUND;
  if (pterun_fb_get_vector(&ct, is_output ? BP_CASE_OUTPUTS : BP_CASE_INPUTS, 4, &vals) != 1 ||
      k >= vals.len || !pterun_fb_vec_table(&vals, (uint32_t)k, &vt))
    return PTERUN_STATUS_NOT_FOUND;
  return read_value(b, &vt, "value", out);
}

pterun_status pterun_bundle_set_inputs(const pterun_bundle* b, size_t suite, size_t tc,
                                       pterun_method* m) {
  size_t nin;
  if (b == NULL || m == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  PTERUN_TRY(pterun_bundle_case(b, suite, tc, &nin, NULL));
  if (nin != pterun_method_input_count(m))
    return dt_fail(&b->logger, PTERUN_STATUS_INPUT_MISMATCH,
                   "test case %zu has %zu inputs, the method takes %zu", tc, nin,
                   pterun_method_input_count(m));
  for (size_t k = 0; k < nin; ++k) {
    pterun_bundle_value v;
    PTERUN_TRY(pterun_bundle_value_get(b, suite, tc, 0, k, &v));
    if (v.tag == PTERUN_VALUE_TENSOR) {
      pterun_tensor_view view = {v.dtype, v.rank, v.sizes, v.dim_order, (void*)v.data, v.nbytes};
      PTERUN_TRY(pterun_method_set_input(m, k, &view));
    } else {
      pterun_value val;
      memset(&val, 0, sizeof val);
      val.tag = v.tag;
      if (v.tag == PTERUN_VALUE_INT) val.u.i = v.i;
      if (v.tag == PTERUN_VALUE_BOOL) val.u.b = v.b;
      if (v.tag == PTERUN_VALUE_DOUBLE) val.u.d = v.d;
      PTERUN_TRY(pterun_method_set_input_value(m, k, &val));
    }
  }
  return PTERUN_STATUS_OK;
}

/* ---- ExecuTorch's comparison ---------------------------------------------------- */

static double elem_f64(int32_t dtype, const void* p, size_t i) {
  switch (dtype) {
    case PTERUN_DTYPE_F32: {
      float f;
      memcpy(&f, (const uint8_t*)p + i * 4, 4);
      return f;
    }
    case PTERUN_DTYPE_F64: {
      double d;
      memcpy(&d, (const uint8_t*)p + i * 8, 8);
      return d;
    }
    default: { /* F16 */
      uint16_t h;
      memcpy(&h, (const uint8_t*)p + i * 2, 2);
      return pterun_f16_to_f32(h);
    }
  }
}

/* ExecuTorch's elem_is_close(expected, out): `out` scales the tolerance. */
static bool elem_close(double e, double a, double rtol, double atol) {
  if (isnan(e) && isnan(a)) return true;
  if (!isfinite(e) && !isfinite(a) && ((e > 0) == (a > 0))) return true;
  if (rtol == 0 && atol == 0) return e == a;
  double err = fabs(e - a);
  return isfinite(err) && err <= atol + fabs(rtol * a);
}

/* Records the first failing output only. */
static void first_fail(pterun_bundle_check* c, size_t k, const char* fmt, ...) DT_PRINTF(3, 4);
static void first_fail(pterun_bundle_check* c, size_t k, const char* fmt, ...) {
  if (!c->passed) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->message, sizeof c->message, fmt, ap);
  va_end(ap);
  c->passed = 0;
  c->failed_output = k;
}

static void compare_tensor(const pterun_bundle_value* e, const pterun_tensor* t, double rtol,
                           double atol, pterun_bundle_check* c, size_t k) {
  uint64_t bad = 0;
  if (t->dtype != e->dtype || t->rank != e->rank ||
      memcmp(t->sizes, e->sizes, e->rank * sizeof(int64_t)) != 0) {
    first_fail(c, k, "output %zu: %s rank %u, expected %s rank %u with other sizes", k,
               pterun_dtype_name(t->dtype), t->rank, pterun_dtype_name(e->dtype), e->rank);
    return;
  }
  // Same layout: the expected dim order's strides must be the output's.
  pterun_tensor et = *t;
  memcpy(et.dim_order, e->dim_order, sizeof et.dim_order);
  (void)pterun_tensor_update_layout(&et);
  for (uint32_t d = 0; d < t->rank; ++d)
    if (t->sizes[d] > 1 && et.strides[d] != t->strides[d]) {
      first_fail(c, k, "output %zu: memory layout differs (dim order)", k);
      return;
    }
  if (e->nbytes > 0 && t->data == NULL) {
    first_fail(c, k, "output %zu has no data", k);
    return;
  }
  size_t numel = (size_t)t->numel, item = pterun_dtype_size(t->dtype);
  if (t->dtype == PTERUN_DTYPE_F32 || t->dtype == PTERUN_DTYPE_F64 ||
      t->dtype == PTERUN_DTYPE_F16) {
    for (size_t i = 0; i < numel; ++i) {
      double ev = elem_f64(e->dtype, e->data, i), av = elem_f64(t->dtype, t->data, i);
      double err = fabs(ev - av);
      if (isfinite(err)) {
        if (err > c->max_abs_error) c->max_abs_error = err;
        if (ev != 0 && err / fabs(ev) > c->max_rel_error) c->max_rel_error = err / fabs(ev);
      }
      if (!elem_close(ev, av, rtol, atol)) bad++;
    }
  } else {
    for (size_t i = 0; i < numel; ++i)
      if (memcmp((const uint8_t*)e->data + i * item, (const uint8_t*)t->data + i * item, item) != 0)
        bad++;
  }
  if (bad > 0 && c->passed) {
    c->mismatched = bad;
    first_fail(c, k, "output %zu: %llu of %zu elements differ beyond rtol %g, atol %g", k,
               (unsigned long long)bad, numel, rtol, atol);
  }
}

pterun_status pterun_bundle_verify_outputs(const pterun_bundle* b, size_t suite, size_t tc,
                                           const pterun_method* m, double rtol, double atol,
                                           pterun_bundle_check* c) {
  size_t nexp;
  if (b == NULL || m == NULL || c == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  memset(c, 0, sizeof *c);
  PTERUN_TRY(pterun_bundle_case(b, suite, tc, NULL, &nexp));
  if (nexp == 0)
    return dt_fail(&b->logger, PTERUN_STATUS_NOT_SUPPORTED,
                   "test case %zu has no expected outputs to verify", tc);
  c->passed = 1;
  size_t nout = pterun_method_output_count(m);
  if (nexp < nout) {
    c->passed = 0;
    c->failed_output = nexp;
    snprintf(c->message, sizeof c->message, "the case expects %zu outputs, the method has %zu",
             nexp, nout);
    return PTERUN_STATUS_OK;
  }
  for (size_t k = 0; k < nout; ++k) {
    pterun_bundle_value e;
    const pterun_value* out = NULL;
    PTERUN_TRY(pterun_bundle_value_get(b, suite, tc, 1, k, &e));
    if (e.tag != PTERUN_VALUE_TENSOR)
      return dt_fail(&b->logger, PTERUN_STATUS_NOT_SUPPORTED,
                     "expected output %zu is a %s; only tensors are verified", k,
                     pterun_value_tag_name(e.tag));
    PTERUN_TRY(pterun_method_output(m, k, &out));
    c->outputs_compared++;
    if (out->tag != PTERUN_VALUE_TENSOR || out->u.tensor == NULL) {
      first_fail(c, k, "output %zu is a %s, expected a tensor", k, pterun_value_tag_name(out->tag));
      continue;
    }
    compare_tensor(&e, out->u.tensor, rtol, atol, c, k);
  }
  return PTERUN_STATUS_OK;
}
