/* The runtime's prim ops (pte-format.md §5), called through the registry. */
#include <math.h>
#include <string.h>

#include "pterun/pterun.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static pterun_registry* g_reg;
static pterun_logger g_silent;

/* Calls op on (a, b) (or just a when b is NULL) and returns the output value. */
static pterun_status call(const char* op, pterun_value a, const pterun_value* b,
                          pterun_value* out) {
  pterun_kernel_fn fn;
  pterun_status st = pterun_registry_lookup(g_reg, op, &fn);
  if (st != PTERUN_STATUS_OK) return st;
  pterun_value bb = b ? *b : pt_val_int(0);
  *out = pt_val_int(-12345);
  pterun_value* args[3] = {&a, b ? &bb : out, out};
  return pterun_kernel_invoke(fn, op, args, b ? 3 : 2, &g_silent, NULL, 0);
}

static int prim_int_arithmetic(void) {
  pterun_value o, b;
  b = pt_val_int(3);
  PT_CHECK_STATUS(call("executorch_prim::add.Scalar", pt_val_int(4), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_INT && o.u.i == 7);
  PT_CHECK_STATUS(call("executorch_prim::sub.Scalar", pt_val_int(4), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 1);
  PT_CHECK_STATUS(call("executorch_prim::mul.Scalar", pt_val_int(-4), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -12);
  PT_CHECK_STATUS(call("executorch_prim::floordiv.Scalar", pt_val_int(-7), &b, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -3); /* floor, not truncation */
  PT_CHECK_STATUS(call("executorch_prim::floordiv.int", pt_val_int(-7), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -2); /* C truncation */
  PT_CHECK_STATUS(call("executorch_prim::mod.int", pt_val_int(-7), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -1);
  PT_CHECK_STATUS(call("executorch_prim::sym_max.Scalar", pt_val_int(-7), &b, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 3);
  PT_CHECK_STATUS(call("executorch_prim::sym_min.Scalar", pt_val_int(-7), &b, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -7);
  b = pt_val_int(0);
  PT_CHECK_STATUS(call("executorch_prim::floordiv.Scalar", pt_val_int(1), &b, &o),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(call("executorch_prim::mod.int", pt_val_int(1), &b, &o),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  b = pt_val_int(-1);
  PT_CHECK_STATUS(call("executorch_prim::floordiv.int", pt_val_int(INT64_MIN), &b, &o),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  b = pt_val_int(1); /* wraps instead of overflowing */
  PT_CHECK_STATUS(call("executorch_prim::add.Scalar", pt_val_int(INT64_MAX), &b, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == INT64_MIN);
  return 0;
}

static int prim_double_and_mixed(void) {
  pterun_value o, b = pt_val_double(0.5);
  PT_CHECK_STATUS(call("executorch_prim::add.Scalar", pt_val_int(2), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_DOUBLE && o.u.d == 2.5);
  b = pt_val_int(2);
  PT_CHECK_STATUS(call("executorch_prim::truediv.Scalar", pt_val_int(7), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_DOUBLE && o.u.d == 3.5);
  b = pt_val_double(-2.0);
  PT_CHECK_STATUS(call("executorch_prim::floordiv.Scalar", pt_val_double(7.0), &b, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.d == -4.0);
  b = pt_val_double(0.0);
  PT_CHECK_STATUS(call("executorch_prim::floordiv.Scalar", pt_val_double(-1.0), &b, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(isinf(o.u.d) && o.u.d < 0);
  b = pt_val_bool(1);
  PT_CHECK_STATUS(call("executorch_prim::add.Scalar", pt_val_bool(1), &b, &o),
                  PTERUN_STATUS_INVALID_TYPE);
  return 0;
}

static int prim_compare_and_unary(void) {
  pterun_value o, b = pt_val_double(2.0);
  PT_CHECK_STATUS(call("executorch_prim::eq.Scalar", pt_val_int(2), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_BOOL && o.u.b);
  PT_CHECK_STATUS(call("executorch_prim::lt.Scalar", pt_val_int(2), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(!o.u.b);
  PT_CHECK_STATUS(call("executorch_prim::le.Scalar", pt_val_int(2), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.b);
  b = pt_val_int(1);
  PT_CHECK_STATUS(call("executorch_prim::gt.Scalar", pt_val_int(2), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.b);
  PT_CHECK_STATUS(call("executorch_prim::ge.Scalar", pt_val_int(0), &b, &o), PTERUN_STATUS_OK);
  PT_CHECK(!o.u.b);
  PT_CHECK_STATUS(call("executorch_prim::neg.Scalar", pt_val_int(5), NULL, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -5);
  PT_CHECK_STATUS(call("executorch_prim::sym_not.Scalar", pt_val_bool(0), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_BOOL && o.u.b);
  PT_CHECK_STATUS(call("executorch_prim::sym_float.Scalar", pt_val_int(3), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_DOUBLE && o.u.d == 3.0);
  PT_CHECK_STATUS(call("executorch_prim::sym_int.Scalar", pt_val_double(-2.7), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_INT && o.u.i == -2);
  PT_CHECK_STATUS(call("executorch_prim::ceil.Scalar", pt_val_double(1.2), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 2);
  PT_CHECK_STATUS(call("executorch_prim::round.Scalar", pt_val_double(2.5), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 2); /* half to even */
  PT_CHECK_STATUS(call("executorch_prim::round.Scalar", pt_val_double(3.5), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 4);
  PT_CHECK_STATUS(call("executorch_prim::trunc.Scalar", pt_val_double(-3.9), NULL, &o),
                  PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == -3);
  PT_CHECK_STATUS(call("executorch_prim::trunc.Scalar", pt_val_double(1e300), NULL, &o),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(call("executorch_prim::ceil.Scalar", pt_val_int(1), NULL, &o),
                  PTERUN_STATUS_INVALID_TYPE);
  return 0;
}

/* The rounding ops (computed without libm) against libm's ceil, nearbyint
 * (the default rounding mode: half to even) and trunc, and the comparisons
 * against C's, over halves, near-halves, signs, zeros, the Int bounds, the
 * exact-integer range's edge and NaN. */
static int prim_rounding_and_compare_match_c(void) {
  static const double base[] = {0.0,
                                0.5,
                                1.0,
                                1.5,
                                2.5,
                                3.5,
                                0.25,
                                0.75,
                                2.0,
                                7.49999,
                                1e15 + 0.5,
                                4503599627370495.5,
                                4503599627370496.0,
                                9007199254740993.0,
                                9.2233720368547748e18,
                                9.2233720368547758e18,
                                1e300};
  static const char* const rounding[] = {
      "executorch_prim::ceil.Scalar", "executorch_prim::round.Scalar",
      "executorch_prim::trunc.Scalar", "executorch_prim::sym_int.Scalar"};
  double vals[2 * (sizeof base / sizeof base[0]) + 3];
  size_t n = 0;
  for (size_t i = 0; i < sizeof base / sizeof base[0]; ++i) {
    vals[n++] = base[i];
    vals[n++] = -base[i];
  }
  vals[n++] = nextafter(0.5, 0.0);
  vals[n++] = -9.2233720368547758e18 - 4096.0;
  vals[n++] = NAN;
  for (size_t i = 0; i < n; ++i) {
    double d = vals[i];
    for (size_t r = 0; r < 4; ++r) {
      double want = r == 0 ? ceil(d) : r == 1 ? nearbyint(d) : trunc(d);
      int fits = want >= -9.2233720368547758e18 && want < 9.2233720368547758e18;
      pterun_value o;
      pterun_status st = call(rounding[r], pt_val_double(d), NULL, &o);
      PT_CHECK_STATUS(st, fits ? PTERUN_STATUS_OK : PTERUN_STATUS_INVALID_ARGUMENT);
      if (fits) PT_CHECK(o.tag == PTERUN_VALUE_INT && o.u.i == (int64_t)want);
    }
    for (size_t j = 0; j < n; ++j) {
      static const char* const ops[] = {"executorch_prim::eq.Scalar", "executorch_prim::gt.Scalar",
                                        "executorch_prim::lt.Scalar", "executorch_prim::ge.Scalar",
                                        "executorch_prim::le.Scalar"};
      double e = vals[j];
      int want[5] = {d == e, d > e, d < e, d >= e, d <= e};
      pterun_value b = pt_val_double(e), o;
      for (size_t k = 0; k < 5; ++k) {
        PT_CHECK_STATUS(call(ops[k], pt_val_double(d), &b, &o), PTERUN_STATUS_OK);
        PT_CHECK(o.tag == PTERUN_VALUE_BOOL && o.u.b == want[k]);
      }
    }
  }
  /* Int and Bool pairs compare exactly, as C does. */
  static const int64_t ints[] = {INT64_MIN, -2, -1, 0, 1, 2, INT64_MAX};
  for (size_t i = 0; i < 7; ++i)
    for (size_t j = 0; j < 7; ++j) {
      int64_t x = ints[i], y = ints[j];
      int want[5] = {x == y, x > y, x < y, x >= y, x <= y};
      const char* ops[] = {"executorch_prim::eq.Scalar", "executorch_prim::gt.Scalar",
                           "executorch_prim::lt.Scalar", "executorch_prim::ge.Scalar",
                           "executorch_prim::le.Scalar"};
      pterun_value b = pt_val_int(y), o;
      for (size_t k = 0; k < 5; ++k) {
        PT_CHECK_STATUS(call(ops[k], pt_val_int(x), &b, &o), PTERUN_STATUS_OK);
        PT_CHECK(o.u.b == want[k]);
        if (i < 2 || j < 2) continue;
        pterun_value bb = pt_val_bool(y != 0);
        int xb = x != 0, yb = y != 0;
        int wantb[5] = {xb == yb, xb > yb, xb < yb, xb >= yb, xb <= yb};
        PT_CHECK_STATUS(call(ops[k], pt_val_bool(xb), &bb, &o), PTERUN_STATUS_OK);
        PT_CHECK(o.u.b == wantb[k]);
      }
    }
  return 0;
}

static int prim_tensor_ops(void) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  pterun_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = PTERUN_DTYPE_F32;
  t.rank = 2;
  t.sizes[0] = 2;
  t.sizes[1] = 3;
  t.dim_order[1] = 1;
  PT_CHECK_STATUS(pterun_tensor_update_layout(&t), PTERUN_STATUS_OK);
  t.capacity = t.nbytes;
  pterun_value tv;
  memset(&tv, 0, sizeof tv);
  tv.tag = PTERUN_VALUE_TENSOR;
  tv.u.tensor = &t;
  pterun_value o, d = pt_val_int(-1);
  PT_CHECK_STATUS(call("aten::sym_size.int", tv, &d, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 3);
  d = pt_val_int(2);
  PT_CHECK_STATUS(call("aten::sym_size.int", tv, &d, &o), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(call("aten::sym_numel", tv, NULL, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.u.i == 6);
  PT_CHECK_STATUS(call("aten::_local_scalar_dense", tv, NULL, &o), PTERUN_STATUS_OK);
  PT_CHECK(o.tag == PTERUN_VALUE_DOUBLE && o.u.d == 1.0);

  // et_view: a [3,2] bounded view of t aliases its memory.
  pterun_tensor out;
  memset(&out, 0, sizeof out);
  out.dtype = PTERUN_DTYPE_F32;
  out.rank = 2;
  out.dynamism = PTERUN_SHAPE_BOUNDED;
  out.sizes[0] = out.max_sizes[0] = 6;
  out.sizes[1] = out.max_sizes[1] = 6;
  out.dim_order[1] = 1;
  pterun_tensor_update_layout(&out);
  pterun_value ov, s0 = pt_val_int(-1), s1 = pt_val_int(2), list;
  memset(&ov, 0, sizeof ov);
  ov.tag = PTERUN_VALUE_TENSOR;
  ov.u.tensor = &out;
  pterun_value* items[2] = {&s0, &s1};
  int64_t scratch[2];
  memset(&list, 0, sizeof list);
  list.tag = PTERUN_VALUE_LIST_INT;
  list.u.ints.items = items;
  list.u.ints.scratch = scratch;
  list.u.ints.len = 2;
  pterun_kernel_fn fn;
  PT_CHECK_STATUS(pterun_registry_lookup(g_reg, "executorch_prim::et_view.default", &fn),
                  PTERUN_STATUS_OK);
  pterun_value* args[3] = {&tv, &list, &ov};
  PT_CHECK_STATUS(pterun_kernel_invoke(fn, "et_view", args, 3, &g_silent, NULL, 0),
                  PTERUN_STATUS_OK);
  PT_CHECK(out.data == data && out.sizes[0] == 3 && out.sizes[1] == 2);
  s1 = pt_val_int(4); /* 6 elements cannot be viewed as [-1, 4] */
  PT_CHECK_STATUS(pterun_kernel_invoke(fn, "et_view", args, 3, &g_silent, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(pterun_kernel_invoke(fn, "et_view", args, 2, &g_silent, NULL, 0),
                  PTERUN_STATUS_INVALID_PROGRAM);
  return 0;
}

int main(void) {
  int pt_failures = 0;
  g_silent = pterun_logger_silent();
  if (pterun_registry_create(NULL, &g_silent, &g_reg) != PTERUN_STATUS_OK) return 1;
  PT_RUN(prim_int_arithmetic);
  PT_RUN(prim_double_and_mixed);
  PT_RUN(prim_compare_and_unary);
  PT_RUN(prim_rounding_and_compare_match_c);
  PT_RUN(prim_tensor_ops);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
