/* The runtime's own operators (ExecuTorch's prim ops): symbolic-int
 * arithmetic emitted for dynamic shapes, and the view/copy-index helpers
 * used by control flow. The last argument is the output slot, overwritten
 * with a new value. */
#include <math.h>
#include <string.h>

#include "pterun/kernel.h"
#include "src/core/registry_internal.h"

#define NARGS(n)                                                                                   \
  do {                                                                                             \
    if (nargs != (n))                                                                              \
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_PROGRAM,                                \
                                "expected %d arguments, got %zu", (n), nargs);                     \
  } while (0)

static void set_int(pterun_value* v, int64_t x) {
  v->tag = PTERUN_VALUE_INT;
  v->u.i = x;
}
static void set_double(pterun_value* v, double x) {
  v->tag = PTERUN_VALUE_DOUBLE;
  v->u.d = x;
}
static void set_bool(pterun_value* v, int x) {
  v->tag = PTERUN_VALUE_BOOL;
  v->u.b = x != 0;
}

/* Whether d, rounded to an integer any way, is an Int: [-2^63, 2^63), not NaN.
 * (Every double outside (-2^52, 2^52) is already an integer, so rounding
 * never carries one across a bound.) */
static int fits_int(double d) {
  return d >= -9.2233720368547758e18 && d < 9.2233720368547758e18;
}

static int is_num(const pterun_value* v) {
  return v->tag == PTERUN_VALUE_INT || v->tag == PTERUN_VALUE_DOUBLE;
}
static double as_double(const pterun_value* v) {
  return v->tag == PTERUN_VALUE_INT ? (double)v->u.i : v->u.d;
}

static pterun_status want_tensor(pterun_kernel_context* ctx, pterun_value* v, const char* name) {
  if (v->tag != PTERUN_VALUE_TENSOR)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "argument '%s' is a %s, not a Tensor", name,
                              pterun_value_tag_name(v->tag));
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_size) {
  NARGS(3);
  pterun_status st = want_tensor(ctx, args[0], "self");
  if (st) return st;
  if (args[1]->tag != PTERUN_VALUE_INT)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "argument 'dim' is not an Int");
  const pterun_tensor* t = args[0]->u.tensor;
  int64_t dim = args[1]->u.i;
  if (dim < 0) dim += t->rank;
  if (dim < 0 || dim >= t->rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "dim %lld out of range for rank %u", (long long)args[1]->u.i,
                              t->rank);
  set_int(args[2], t->sizes[dim]);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_numel) {
  NARGS(2);
  pterun_status st = want_tensor(ctx, args[0], "self");
  if (st) return st;
  set_int(args[1], args[0]->u.tensor->numel);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(local_scalar_dense) {
  NARGS(2);
  pterun_status st = want_tensor(ctx, args[0], "self");
  if (st) return st;
  const pterun_tensor* t = args[0]->u.tensor;
  if (t->numel < 1 || t->data == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "tensor is empty");
  const void* p = t->data;
  switch (t->dtype) {
    case PTERUN_DTYPE_U8: set_int(args[1], *(const uint8_t*)p); break;
    case PTERUN_DTYPE_I8: set_int(args[1], *(const int8_t*)p); break;
    case PTERUN_DTYPE_I16: set_int(args[1], *(const int16_t*)p); break;
    case PTERUN_DTYPE_I32: set_int(args[1], *(const int32_t*)p); break;
    case PTERUN_DTYPE_I64: set_int(args[1], *(const int64_t*)p); break;
    case PTERUN_DTYPE_F32: set_double(args[1], *(const float*)p); break;
    case PTERUN_DTYPE_F64: set_double(args[1], *(const double*)p); break;
    case PTERUN_DTYPE_BOOL: set_bool(args[1], *(const uint8_t*)p); break;
    default:
      return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "dtype %s",
                                pterun_dtype_name(t->dtype));
  }
  return PTERUN_STATUS_OK;
}

static pterun_status need_ints(pterun_kernel_context* ctx, pterun_value** a) {
  if (a[0]->tag != PTERUN_VALUE_INT || a[1]->tag != PTERUN_VALUE_INT)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arguments must be Int, got %s and %s",
                              pterun_value_tag_name(a[0]->tag), pterun_value_tag_name(a[1]->tag));
  return PTERUN_STATUS_OK;
}

static pterun_status need_nums(pterun_kernel_context* ctx, pterun_value** a) {
  if (!is_num(a[0]) || !is_num(a[1]))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arguments must be Int or Double, got %s and %s",
                              pterun_value_tag_name(a[0]->tag), pterun_value_tag_name(a[1]->tag));
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_max) {
  NARGS(3);
  pterun_status st = need_ints(ctx, args);
  if (st) return st;
  set_int(args[2], args[0]->u.i > args[1]->u.i ? args[0]->u.i : args[1]->u.i);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_min) {
  NARGS(3);
  pterun_status st = need_ints(ctx, args);
  if (st) return st;
  set_int(args[2], args[0]->u.i < args[1]->u.i ? args[0]->u.i : args[1]->u.i);
  return PTERUN_STATUS_OK;
}

/* Int arithmetic wraps (two's complement) instead of invoking UB. */
enum { OP_ADD, OP_SUB, OP_MUL };
static pterun_status arith(pterun_kernel_context* ctx, pterun_value** a, size_t nargs, int op) {
  NARGS(3);
  pterun_status st = need_nums(ctx, a);
  if (st) return st;
  if (a[0]->tag == PTERUN_VALUE_INT && a[1]->tag == PTERUN_VALUE_INT) {
    uint64_t x = (uint64_t)a[0]->u.i, y = (uint64_t)a[1]->u.i;
    uint64_t r = op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y;
    set_int(a[2], (int64_t)r);
  } else {
    double x = as_double(a[0]), y = as_double(a[1]);
    set_double(a[2], op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y);
  }
  return PTERUN_STATUS_OK;
}
static PTERUN_KERNEL(add_scalar) {
  return arith(ctx, args, nargs, OP_ADD);
}
static PTERUN_KERNEL(sub_scalar) {
  return arith(ctx, args, nargs, OP_SUB);
}
static PTERUN_KERNEL(mul_scalar) {
  return arith(ctx, args, nargs, OP_MUL);
}

static PTERUN_KERNEL(floordiv_scalar) {
  NARGS(3);
  pterun_status st = need_nums(ctx, args);
  if (st) return st;
  if (args[0]->tag == PTERUN_VALUE_INT && args[1]->tag == PTERUN_VALUE_INT) {
    int64_t x = args[0]->u.i, y = args[1]->u.i;
    if (y == 0)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "integer division by zero");
    if (x == INT64_MIN && y == -1)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "integer overflow");
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    set_int(args[2], q);
    return PTERUN_STATUS_OK;
  }
  double x = as_double(args[0]), y = as_double(args[1]);
  if (y == 0) {
    set_double(args[2], x > 0 ? INFINITY : x < 0 ? -INFINITY : NAN);
    return PTERUN_STATUS_OK;
  }
  double r = fmod(x, y), q = (x - r) / y;
  if (r != 0 && ((r < 0) != (y < 0))) q -= 1;
  set_double(args[2], q);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(truediv_scalar) {
  NARGS(3);
  pterun_status st = need_nums(ctx, args);
  if (st) return st;
  set_double(args[2], as_double(args[0]) / as_double(args[1]));
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_float) {
  NARGS(2);
  if (args[0]->tag == PTERUN_VALUE_BOOL)
    set_double(args[1], args[0]->u.b ? 1.0 : 0.0);
  else if (is_num(args[0]))
    set_double(args[1], as_double(args[0]));
  else
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "argument is args %s",
                              pterun_value_tag_name(args[0]->tag));
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_int) {
  NARGS(2);
  if (args[0]->tag == PTERUN_VALUE_INT)
    set_int(args[1], args[0]->u.i);
  else if (args[0]->tag == PTERUN_VALUE_BOOL)
    set_int(args[1], args[0]->u.b ? 1 : 0);
  else if (args[0]->tag == PTERUN_VALUE_DOUBLE) {
    double d = args[0]->u.d;
    if (!fits_int(d))
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "%g does not fit an Int", d);
    set_int(args[1], (int64_t)d); /* toward zero: trunc */
  } else
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "argument is args %s",
                              pterun_value_tag_name(args[0]->tag));
  return PTERUN_STATUS_OK;
}

/* Each comparison is the set of outcomes it accepts (bit 0 less, 1 equal,
 * 2 greater; unordered, a NaN, is bit 3, which none accepts). */
enum { CMP_EQ = 2, CMP_GT = 4, CMP_LT = 1, CMP_GE = 6, CMP_LE = 3 };
static pterun_status compare(pterun_kernel_context* ctx, pterun_value** a, size_t nargs, int op) {
  NARGS(3);
  int outcome;
  if ((a[0]->tag == PTERUN_VALUE_BOOL && a[1]->tag == PTERUN_VALUE_BOOL) ||
      (a[0]->tag == PTERUN_VALUE_INT && a[1]->tag == PTERUN_VALUE_INT)) {
    int64_t x = a[0]->tag == PTERUN_VALUE_BOOL ? a[0]->u.b != 0 : a[0]->u.i;
    int64_t y = a[1]->tag == PTERUN_VALUE_BOOL ? a[1]->u.b != 0 : a[1]->u.i;
    outcome = (x > y) - (x < y) + 1;
  } else if (is_num(a[0]) && is_num(a[1])) {
    double x = as_double(a[0]), y = as_double(a[1]);
    outcome = x < y ? 0 : x == y ? 1 : x > y ? 2 : 3;
  } else {
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "cannot compare %s with %s",
                              pterun_value_tag_name(a[0]->tag), pterun_value_tag_name(a[1]->tag));
  }
  set_bool(a[2], op >> outcome & 1);
  return PTERUN_STATUS_OK;
}
static PTERUN_KERNEL(eq_scalar) {
  return compare(ctx, args, nargs, CMP_EQ);
}
static PTERUN_KERNEL(gt_scalar) {
  return compare(ctx, args, nargs, CMP_GT);
}
static PTERUN_KERNEL(lt_scalar) {
  return compare(ctx, args, nargs, CMP_LT);
}
static PTERUN_KERNEL(ge_scalar) {
  return compare(ctx, args, nargs, CMP_GE);
}
static PTERUN_KERNEL(le_scalar) {
  return compare(ctx, args, nargs, CMP_LE);
}

static PTERUN_KERNEL(neg_scalar) {
  NARGS(2);
  if (args[0]->tag == PTERUN_VALUE_INT)
    set_int(args[1], (int64_t)(0u - (uint64_t)args[0]->u.i));
  else if (args[0]->tag == PTERUN_VALUE_DOUBLE)
    set_double(args[1], -args[0]->u.d);
  else
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "argument is args %s",
                              pterun_value_tag_name(args[0]->tag));
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_not) {
  NARGS(2);
  if (args[0]->tag != PTERUN_VALUE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "argument is args %s",
                              pterun_value_tag_name(args[0]->tag));
  set_bool(args[1], !args[0]->u.b);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(sym_ite) {
  NARGS(4);
  if (args[0]->tag != PTERUN_VALUE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "condition is args %s",
                              pterun_value_tag_name(args[0]->tag));
  const pterun_value* pick = args[0]->u.b ? args[1] : args[2];
  if (pick->tag != PTERUN_VALUE_INT && pick->tag != PTERUN_VALUE_DOUBLE &&
      pick->tag != PTERUN_VALUE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "branch value is args %s",
                              pterun_value_tag_name(pick->tag));
  *args[3] = *pick;
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(floordiv_int) {
  NARGS(3);
  pterun_status st = need_ints(ctx, args);
  if (st) return st;
  if (args[1]->u.i == 0 || (args[0]->u.i == INT64_MIN && args[1]->u.i == -1))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "integer division by zero or overflow");
  set_int(args[2], args[0]->u.i / args[1]->u.i);
  return PTERUN_STATUS_OK;
}

static PTERUN_KERNEL(mod_int) {
  NARGS(3);
  pterun_status st = need_ints(ctx, args);
  if (st) return st;
  if (args[1]->u.i == 0)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "integer modulo by zero");
  set_int(args[2], args[1]->u.i == -1 ? 0 : args[0]->u.i % args[1]->u.i);
  return PTERUN_STATUS_OK;
}

enum { R_CEIL, R_ROUND, R_TRUNC };
static pterun_status rounding(pterun_kernel_context* ctx, pterun_value** a, size_t nargs,
                              int mode) {
  NARGS(2);
  if (a[0]->tag != PTERUN_VALUE_DOUBLE)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "argument is a %s, not a Double",
                              pterun_value_tag_name(a[0]->tag));
  double d = a[0]->u.d;
  if (!fits_int(d))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "%g does not fit an Int", d);
  /* t = trunc(d); d - t is exact (|d| < 2^52, or d is an integer and it is 0). */
  int64_t t = (int64_t)d;
  double frac = d - (double)t;
  if (mode == R_CEIL && frac > 0) ++t;
  if (mode == R_ROUND && (frac > 0.5 || (frac == 0.5 && (t & 1)))) ++t; /* half to even */
  if (mode == R_ROUND && (frac < -0.5 || (frac == -0.5 && (t & 1)))) --t;
  set_int(a[1], t);
  return PTERUN_STATUS_OK;
}
static PTERUN_KERNEL(ceil_scalar) {
  return rounding(ctx, args, nargs, R_CEIL);
}
static PTERUN_KERNEL(round_scalar) {
  return rounding(ctx, args, nargs, R_ROUND);
}
static PTERUN_KERNEL(trunc_scalar) {
  return rounding(ctx, args, nargs, R_TRUNC);
}

/* Stacks per-iteration results: copy_to[index] = copy_from. */
static PTERUN_KERNEL(et_copy_index) {
  NARGS(3);
  pterun_status st = want_tensor(ctx, args[0], "copy_to");
  if (st == PTERUN_STATUS_OK) st = want_tensor(ctx, args[1], "copy_from");
  if (st) return st;
  if (args[2]->tag != PTERUN_VALUE_INT)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "index is not an Int");
  pterun_tensor *to = args[0]->u.tensor, *from = args[1]->u.tensor;
  int64_t index = args[2]->u.i;
  if (index < 0)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "negative index %lld",
                              (long long)index);
  if (to->dtype != from->dtype || to->rank != from->rank + 1)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "copy_to must be copy_from's dtype with one more dim");
  int64_t sizes[PTERUN_MAX_RANK];
  sizes[0] = index + 1;
  for (uint8_t d = 0; d < from->rank; ++d) {
    if (to->max_sizes[d + 1] != from->sizes[d] && to->sizes[d + 1] != from->sizes[d])
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                                "trailing sizes of copy_to differ from copy_from");
    sizes[d + 1] = from->sizes[d];
  }
  if (pterun_tensor_resize(to, to->rank, sizes) != PTERUN_STATUS_OK)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "copy_to cannot grow to %lld rows", (long long)sizes[0]);
  size_t n = from->nbytes;
  if (n == 0) return PTERUN_STATUS_OK;
  if (to->data == NULL || from->data == NULL || (uint64_t)index > (to->nbytes - n) / n)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "copy out of bounds");
  memcpy((uint8_t*)to->data + (size_t)index * n, from->data, n);
  return PTERUN_STATUS_OK;
}

/* A dynamic view: out aliases self's memory with a new shape. */
static PTERUN_KERNEL(et_view) {
  NARGS(3);
  pterun_status st = want_tensor(ctx, args[0], "self");
  if (st == PTERUN_STATUS_OK) st = want_tensor(ctx, args[2], "out");
  if (st) return st;
  size_t n;
  const int64_t* size = pterun_value_int_list(args[1], &n);
  if (size == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "size is not an int list");
  pterun_tensor *self = args[0]->u.tensor, *out = args[2]->u.tensor;
  if (self->dtype != out->dtype)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "dtype of out differs");
  if (n != out->rank)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "size has %zu entries for rank %u", n, out->rank);
  int64_t sizes[PTERUN_MAX_RANK], known = 1;
  int infer = -1, has_zero = 0;
  for (size_t d = 0; d < n; ++d) {
    sizes[d] = size[d];
    if (size[d] == -1) {
      if (infer >= 0)
        return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "more than one -1 in size");
      infer = (int)d;
    } else if (size[d] < 0) {
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "negative size %lld",
                                (long long)size[d]);
    } else {
      if (size[d] == 0) has_zero = 1;
      if (__builtin_mul_overflow(known, size[d], &known))
        return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "size overflows");
    }
  }
  if (infer >= 0) {
    if (has_zero || known == 0)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                                "cannot infer -1 with args 0 dim");
    sizes[infer] = self->numel / known;
    known *= sizes[infer];
  }
  if (known != self->numel)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT, "view of %lld elements as %lld",
                              (long long)self->numel, (long long)known);
  // The view takes self's memory, so its capacity is self's.
  out->capacity = self->capacity > self->nbytes ? self->capacity : self->nbytes;
  if (pterun_tensor_resize(out, n, sizes) != PTERUN_STATUS_OK)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_ARGUMENT,
                              "out cannot take the view's shape");
  out->data = self->data;
  return PTERUN_STATUS_OK;
}

static const pterun_kernel kPrimOps[] = {
    {.op = "aten::sym_size.int", .fn = sym_size},
    {.op = "aten::sym_numel", .fn = sym_numel},
    {.op = "aten::_local_scalar_dense", .fn = local_scalar_dense},
    {.op = "executorch_prim::sym_max.Scalar", .fn = sym_max},
    {.op = "executorch_prim::sym_min.Scalar", .fn = sym_min},
    {.op = "executorch_prim::add.Scalar", .fn = add_scalar},
    {.op = "executorch_prim::sub.Scalar", .fn = sub_scalar},
    {.op = "executorch_prim::mul.Scalar", .fn = mul_scalar},
    {.op = "executorch_prim::floordiv.Scalar", .fn = floordiv_scalar},
    {.op = "executorch_prim::truediv.Scalar", .fn = truediv_scalar},
    {.op = "executorch_prim::sym_float.Scalar", .fn = sym_float},
    {.op = "executorch_prim::sym_int.Scalar", .fn = sym_int},
    {.op = "executorch_prim::eq.Scalar", .fn = eq_scalar},
    {.op = "executorch_prim::gt.Scalar", .fn = gt_scalar},
    {.op = "executorch_prim::lt.Scalar", .fn = lt_scalar},
    {.op = "executorch_prim::ge.Scalar", .fn = ge_scalar},
    {.op = "executorch_prim::le.Scalar", .fn = le_scalar},
    {.op = "executorch_prim::neg.Scalar", .fn = neg_scalar},
    {.op = "executorch_prim::sym_not.Scalar", .fn = sym_not},
    {.op = "executorch_prim::sym_ite.Scalar", .fn = sym_ite},
    {.op = "executorch_prim::floordiv.int", .fn = floordiv_int},
    {.op = "executorch_prim::mod.int", .fn = mod_int},
    {.op = "executorch_prim::mod.Scalar", .fn = mod_int},
    {.op = "executorch_prim::ceil.Scalar", .fn = ceil_scalar},
    {.op = "executorch_prim::round.Scalar", .fn = round_scalar},
    {.op = "executorch_prim::trunc.Scalar", .fn = trunc_scalar},
    {.op = "executorch_prim::et_copy_index.tensor", .fn = et_copy_index},
    {.op = "executorch_prim::et_view.default", .fn = et_view},
};

static const pterun_kernel_library kPrimLibrary = {PTERUN_KERNEL_ABI_VERSION, "runtime",
                                                   sizeof kPrimOps / sizeof kPrimOps[0], kPrimOps};

const pterun_kernel_library* pt_prim_ops_library(void) {
  return &kPrimLibrary;
}
