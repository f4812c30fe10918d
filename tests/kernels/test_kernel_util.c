/* The kernel-author kit (pterun/kernel_util.h) and pterun_out_resize:
 *  - every f16 and bf16 bit pattern widens exactly and narrows back;
 *  - every rounding boundary between adjacent halves / bfloat16s (the
 *    midpoint and its neighbouring floats) rounds to nearest even, which with
 *    monotonicity covers every finite float;
 *  - a sweep of float patterns (NaNs, infinities, subnormals, ties, random)
 *    matches eager PyTorch bit for bit (data/half_torch.txt, made by
 *    tools/gen_half_fixture.py);
 *  - element load/store by dtype converts as C++/ATen casts do;
 *  - PTERUN_KERNEL / PTERUN_CHECK_NARGS / PTERUN_TRY, pterun_arg_scalar and
 *    pterun_out_resize fail with the documented status and a message naming
 *    the argument;
 *  - pterun_broadcast_sizes / pterun_broadcast_shape follow ATen's rules and
 *    name the clashing sizes; pterun_same_layout's contract. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static int pt_failures;

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The value of half h by its definition (no bit tricks), NaN excluded. */
static double half_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? INFINITY : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

static int test_f16_all_patterns(void) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    float f = pterun_f16_to_f32((uint16_t)h);
    int is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (is_nan) {
      /* widening keeps sign and payload; narrowing sets the quiet bit */
      PT_CHECK(f32_bits(f) == (((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13)));
      PT_CHECK(pterun_f32_to_f16(f) == (uint16_t)(h | 0x200u));
    } else {
      PT_CHECK((double)f == half_value((uint16_t)h));
      PT_CHECK(!!signbit(f) == !!(h & 0x8000u));
      PT_CHECK(pterun_f32_to_f16(f) == h);
    }
  }
  return 0;
}

static int test_bf16_all_patterns(void) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    float f = pterun_bf16_to_f32((uint16_t)b);
    int is_nan = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
    PT_CHECK(f32_bits(f) == b << 16);
    PT_CHECK(pterun_f32_to_bf16(f) == (is_nan ? 0x7fc0u : b));
  }
  return 0;
}

/* Between adjacent non-negative halves lo and lo+1 (lo+1 may be inf, whose
 * rounding threshold is 65520), the midpoint goes to the even one and the
 * floats either side of it to the nearer one; same for negatives. */
static int test_f16_rounding_boundaries(void) {
  for (uint16_t lo = 0; lo < 0x7c00u; ++lo) {
    uint16_t hi = (uint16_t)(lo + 1);
    double vhi = hi == 0x7c00u ? 65536.0 : half_value(hi);
    float mid = (float)((half_value(lo) + vhi) / 2); /* exact: 12 significant bits */
    uint16_t even = (lo & 1u) ? hi : lo;
    PT_CHECK((double)mid == (half_value(lo) + vhi) / 2);
    PT_CHECK(pterun_f32_to_f16(mid) == even);
    PT_CHECK(pterun_f32_to_f16(nextafterf(mid, 0.0f)) == lo);
    PT_CHECK(pterun_f32_to_f16(nextafterf(mid, INFINITY)) == hi);
    PT_CHECK(pterun_f32_to_f16(-mid) == (even | 0x8000u));
    PT_CHECK(pterun_f32_to_f16(-nextafterf(mid, 0.0f)) == (lo | 0x8000u));
    PT_CHECK(pterun_f32_to_f16(-nextafterf(mid, INFINITY)) == (hi | 0x8000u));
  }
  PT_CHECK(pterun_f32_to_f16(3.4028234663852886e38f) == 0x7c00u);
  PT_CHECK(pterun_f32_to_f16(bits_f32(1u)) == 0u); /* smallest float subnormal */
  return 0;
}

static int test_bf16_rounding_boundaries(void) {
  for (uint32_t lo = 0; lo < 0x7f80u; ++lo) {
    uint32_t mid = (lo << 16) | 0x8000u, even = (lo & 1u) ? lo + 1 : lo;
    for (uint32_t s = 0; s <= 0x8000u; s += 0x8000u) {
      PT_CHECK(pterun_f32_to_bf16(bits_f32(mid | s << 16)) == (even | s));
      PT_CHECK(pterun_f32_to_bf16(bits_f32((mid - 1) | s << 16)) == (lo | s));
      PT_CHECK(pterun_f32_to_bf16(bits_f32((mid + 1) | s << 16)) == ((lo + 1) | s));
    }
  }
  return 0;
}

static int test_matches_torch(void) {
  FILE* f = fopen(PT_HALF_FIXTURE, "r");
  char line[256];
  int n = 0, bad = 0;
  if (f == NULL) {
    fprintf(stderr, "cannot open fixture %s\n", PT_HALF_FIXTURE);
    return 1;
  }
  while (fgets(line, sizeof line, f)) {
    unsigned x, h, b;
    if (line[0] == '#') continue;
    if (sscanf(line, "%x %x %x", &x, &h, &b) != 3) {
      fprintf(stderr, "bad fixture line: %s", line);
      bad++;
      continue;
    }
    ++n;
    if (pterun_f32_to_f16(bits_f32(x)) != h || pterun_f32_to_bf16(bits_f32(x)) != b) {
      fprintf(stderr, "f32 %08x: f16 %04x (torch %04x), bf16 %04x (torch %04x)\n", x,
              pterun_f32_to_f16(bits_f32(x)), h, pterun_f32_to_bf16(bits_f32(x)), b);
      bad++;
    }
  }
  fclose(f);
  printf("  %d torch cases\n", n);
  PT_CHECK(bad == 0);
  PT_CHECK(n >= 1000); /* a fixture that lost its cases is a failure */
  return 0;
}

/* ---- dtype classes and element load / store ---- */

static int test_load_store(void) {
  union {
    uint64_t u;
    double d;
    unsigned char b[8];
  } m;
  static const int32_t kAll[] = {PTERUN_DTYPE_U8,   PTERUN_DTYPE_I8,  PTERUN_DTYPE_I16,
                                 PTERUN_DTYPE_I32,  PTERUN_DTYPE_I64, PTERUN_DTYPE_U16,
                                 PTERUN_DTYPE_U32,  PTERUN_DTYPE_U64, PTERUN_DTYPE_F16,
                                 PTERUN_DTYPE_BF16, PTERUN_DTYPE_F32, PTERUN_DTYPE_F64};
  for (size_t k = 0; k < sizeof kAll / sizeof kAll[0]; ++k) {
    int32_t dt = kAll[k];
    PT_CHECK(pterun_dtype_is_float(dt) + pterun_dtype_is_int(dt) == 1);
    /* small integers survive every dtype, through both interfaces */
    pterun_store_i64(&m, dt, 0, 42);
    PT_CHECK(pterun_load_i64(&m, dt, 0) == 42 && pterun_load_f64(&m, dt, 0) == 42.0);
    pterun_store_f64(&m, dt, 0, 7.0);
    PT_CHECK(pterun_load_i64(&m, dt, 0) == 7 && pterun_load_f32(&m, dt, 0) == 7.0f);
    pterun_store_f32(&m, dt, 0, 3.0f);
    PT_CHECK(pterun_load_f64(&m, dt, 0) == 3.0);
  }
  PT_CHECK(!pterun_dtype_is_float(PTERUN_DTYPE_BOOL) && !pterun_dtype_is_int(PTERUN_DTYPE_BOOL));
  PT_CHECK(!pterun_dtype_is_float(PTERUN_DTYPE_COMPLEX64));
  /* integer stores wrap, float -> int truncates, NaN / out of range give INT64_MIN */
  pterun_store_i64(&m, PTERUN_DTYPE_I8, 0, 300);
  PT_CHECK(pterun_load_i64(&m, PTERUN_DTYPE_I8, 0) == 44);
  pterun_store_i64(&m, PTERUN_DTYPE_U8, 0, -1);
  PT_CHECK(pterun_load_i64(&m, PTERUN_DTYPE_U8, 0) == 255);
  pterun_store_f64(&m, PTERUN_DTYPE_I32, 0, -2.75);
  PT_CHECK(pterun_load_i64(&m, PTERUN_DTYPE_I32, 0) == -2);
  PT_CHECK(pterun_f64_to_i64(NAN) == INT64_MIN && pterun_f64_to_i64(1e19) == INT64_MIN);
  PT_CHECK(pterun_f64_to_i64(-9223372036854775808.0) == INT64_MIN);
  pterun_store_f64(&m, PTERUN_DTYPE_BOOL, 0, NAN);
  PT_CHECK(pterun_load_i64(&m, PTERUN_DTYPE_BOOL, 0) == 1); /* NaN is true */
  pterun_store_i64(&m, PTERUN_DTYPE_BITS16, 0, 65535);
  PT_CHECK(pterun_load_i64(&m, PTERUN_DTYPE_BITS16, 0) == 65535);
  m.u = 0x0123456789abcdefu;
  pterun_store_f64(&m, PTERUN_DTYPE_COMPLEX64, 0, 1.0); /* not a real dtype: untouched */
  PT_CHECK(m.u == 0x0123456789abcdefu && pterun_load_f64(&m, PTERUN_DTYPE_COMPLEX64, 0) == 0.0);
  /* ATen type promotion */
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_F16, PTERUN_DTYPE_BF16) == PTERUN_DTYPE_F32);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_F16, PTERUN_DTYPE_F64) == PTERUN_DTYPE_F64);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_I64, PTERUN_DTYPE_F16) == PTERUN_DTYPE_F16);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_BOOL, PTERUN_DTYPE_I8) == PTERUN_DTYPE_I8);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_U8, PTERUN_DTYPE_I8) == PTERUN_DTYPE_I16);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_U8, PTERUN_DTYPE_I32) == PTERUN_DTYPE_I32);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_U16, PTERUN_DTYPE_I32) == -1);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_I16, PTERUN_DTYPE_I32) == PTERUN_DTYPE_I32);
  PT_CHECK(pterun_promote_types(PTERUN_DTYPE_COMPLEX64, PTERUN_DTYPE_F32) == -1);
  /* rounding to a dtype: half and bfloat16 round through float */
  PT_CHECK(pterun_round_to_dtype(1.0 + 1.0 / 4096.0, PTERUN_DTYPE_F16) == 1.0);
  PT_CHECK(pterun_round_to_dtype(1.00390625, PTERUN_DTYPE_BF16) == 1.0);
  PT_CHECK(pterun_round_to_dtype(0.1, PTERUN_DTYPE_F32) == (double)0.1f);
  PT_CHECK(pterun_round_to_dtype(257.9, PTERUN_DTYPE_U8) == 1.0);
  return 0;
}

/* ---- macros, pterun_arg_scalar and pterun_out_resize ---- */

static char last_msg[512];
static void keep_msg(void* ctx, pterun_log_level level, const char* message) {
  (void)ctx;
  (void)level;
  snprintf(last_msg, sizeof last_msg, "%s", message);
}

static PTERUN_KERNEL(kit_copy_shape) {
  pterun_tensor *self, *out;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  return pterun_out_resize_like(ctx, out, "out", self);
}

static pterun_status run_copy_shape(pterun_value** args, size_t nargs) {
  pterun_logger lg = {keep_msg, NULL, PTERUN_LOG_DEBUG};
  last_msg[0] = '\0';
  return pterun_kernel_invoke(kit_copy_shape, "test::copy_shape.out", args, nargs, &lg, NULL, 0);
}

/* A kernel that fails like the kit's broadcast helper: self with other. */
static PTERUN_KERNEL(kit_broadcast) {
  pterun_tensor *self, *other;
  int64_t sizes[PTERUN_MAX_RANK];
  size_t rank;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "other", &other));
  PTERUN_TRY(pterun_broadcast_shape(ctx, self, "self", other, "other", sizes, &rank));
  return rank == 3 && sizes[0] == 2 && sizes[1] == 3 && sizes[2] == 4
             ? PTERUN_STATUS_OK
             : PTERUN_FAIL_ARG(ctx, "unexpected shape");
}

static int test_broadcast(void) {
  int64_t a[3] = {2, 1, 4}, b[2] = {3, 1}, z[1] = {0}, one[2] = {1, 1}, out[PTERUN_MAX_RANK];
  int64_t bad_b[2] = {3, 5}, big[PTERUN_MAX_RANK + 1];
  int bad = -7;
  PT_CHECK(pterun_broadcast_sizes(a, 3, b, 2, out, &bad) == 3);
  PT_CHECK(out[0] == 2 && out[1] == 3 && out[2] == 4 && bad == -7);
  PT_CHECK(pterun_broadcast_sizes(b, 2, a, 3, out, NULL) == 3); /* symmetric */
  PT_CHECK(out[0] == 2 && out[1] == 3 && out[2] == 4);
  PT_CHECK(pterun_broadcast_sizes(z, 1, one, 2, out, NULL) == 2); /* 1 with 0 gives 0 */
  PT_CHECK(out[0] == 1 && out[1] == 0);
  PT_CHECK(pterun_broadcast_sizes(a, 0, one, 0, out, NULL) == 0); /* scalars */
  PT_CHECK(pterun_broadcast_sizes(a, 3, bad_b, 2, out, &bad) == -1);
  PT_CHECK(bad == 0);                                         /* the last dim: 4 against 5 */
  PT_CHECK(pterun_broadcast_sizes(a, 3, a, 3, a, NULL) == 3); /* out may alias */
  for (int k = 0; k < PTERUN_MAX_RANK + 1; ++k) big[k] = 1;
  PT_CHECK(pterun_broadcast_sizes(big, PTERUN_MAX_RANK + 1, b, 2, out, NULL) == -1);
  {
    float da[8] = {0}, db[3] = {0};
    int64_t s214[3] = {2, 1, 4}, s31[2] = {3, 1}, s35[2] = {3, 5};
    pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_F32, 3, s214, da, sizeof da);
    pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_F32, 2, s31, db, sizeof db);
    pterun_value va = pt_val_tensor(&ta), vb = pt_val_tensor(&tb);
    pterun_value* args[3] = {&va, &vb, &vb};
    pterun_logger lg = {keep_msg, NULL, PTERUN_LOG_DEBUG};
    PT_CHECK_STATUS(pterun_kernel_invoke(kit_broadcast, "test::bc", args, 3, &lg, NULL, 0),
                    PTERUN_STATUS_OK);
    tb = pt_tensor_make(PTERUN_DTYPE_F32, 2, s35, NULL, 0);
    last_msg[0] = '\0';
    PT_CHECK_STATUS(pterun_kernel_invoke(kit_broadcast, "test::bc", args, 3, &lg, NULL, 0),
                    PTERUN_STATUS_INVALID_ARGUMENT);
    PT_CHECK(strstr(last_msg, "args 'self' and 'other' do not broadcast") != NULL);
    PT_CHECK(strstr(last_msg, "size 4 (dim 2 of rank 3) against 5 (dim 1 of rank 2)") != NULL);
  }
  return 0;
}

static int test_same_layout(void) {
  int64_t s234[3] = {2, 3, 4}, s214[3] = {2, 1, 4}, s243[3] = {2, 4, 3};
  pterun_tensor a = pt_tensor_make(PTERUN_DTYPE_F32, 3, s234, NULL, 0);
  pterun_tensor b = pt_tensor_make(PTERUN_DTYPE_I8, 3, s234, NULL, 0);
  pterun_tensor c = pt_tensor_make(PTERUN_DTYPE_F32, 3, s243, NULL, 0);
  PT_CHECK(pterun_same_layout(&a, &b));  /* dtypes are not compared */
  PT_CHECK(!pterun_same_layout(&a, &c)); /* other sizes */
  /* the same sizes in another dim order: other strides */
  b.dim_order[0] = 0, b.dim_order[1] = 2, b.dim_order[2] = 1;
  pterun_tensor_update_layout(&b);
  PT_CHECK(!pterun_same_layout(&a, &b));
  /* dim orders that differ only in a size-1 dim place every element alike */
  a = pt_tensor_make(PTERUN_DTYPE_F32, 3, s214, NULL, 0);
  b = pt_tensor_make(PTERUN_DTYPE_F32, 3, s214, NULL, 0);
  b.dim_order[0] = 0, b.dim_order[1] = 2, b.dim_order[2] = 1;
  pterun_tensor_update_layout(&b);
  PT_CHECK(pterun_same_layout(&a, &b));
  b.rank = 2;
  PT_CHECK(!pterun_same_layout(&a, &b));
  return 0;
}

static int test_kernel_macros(void) {
  float a[6] = {0}, o[8] = {0};
  int64_t s23[2] = {2, 3}, s4[1] = {4}, s22[2] = {2, 2};
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, a, sizeof a);
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, o, sizeof o);
  pterun_value va = pt_val_tensor(&ta), vo = pt_val_tensor(&to), vi = pt_val_int(1);
  pterun_value* args[3] = {&va, &vo, &vo};
  pterun_value* bad_args[3] = {&va, &vi, &vo};
  PT_CHECK_STATUS(run_copy_shape(args, 2), PTERUN_STATUS_INVALID_PROGRAM);
  PT_CHECK(strstr(last_msg, "expected 3 arguments, got 2") != NULL);
  PT_CHECK_STATUS(run_copy_shape(bad_args, 3), PTERUN_STATUS_INVALID_TYPE);
  PT_CHECK(strstr(last_msg, "'out'") != NULL);
  PT_CHECK_STATUS(run_copy_shape(args, 3), PTERUN_STATUS_OK);
  PT_CHECK(to.rank == 2 && to.sizes[0] == 2 && to.sizes[1] == 3 && to.numel == 6);
  /* a rank change is refused, naming the argument and both shapes */
  ta = pt_tensor_make(PTERUN_DTYPE_F32, 1, s4, a, sizeof a);
  PT_CHECK_STATUS(run_copy_shape(args, 3), PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(last_msg, "arg 'out'") != NULL && strstr(last_msg, "[2, 3] to [4]") != NULL);
  PT_CHECK(to.rank == 2 && to.numel == 6);
  return 0;
}

static int test_out_resize(void) {
  float o[4] = {0};
  int64_t s22[2] = {2, 2}, s33[2] = {3, 3}, s12[2] = {1, 2};
  pterun_tensor t = pt_tensor_make(PTERUN_DTYPE_F32, 2, s22, o, sizeof o);
  pterun_value vt = pt_val_tensor(&t);
  pterun_value* args[3] = {&vt, &vt, &vt};
  pterun_tensor small = pt_tensor_make(PTERUN_DTYPE_F32, 2, s12, o, sizeof o);
  /* the same shape is a no-op; more than the capacity is refused */
  PT_CHECK_STATUS(run_copy_shape(args, 3), PTERUN_STATUS_OK);
  {
    pterun_tensor big = pt_tensor_make(PTERUN_DTYPE_F32, 2, s33, NULL, 0);
    pterun_value vb = pt_val_tensor(&big);
    pterun_value* a2[3] = {&vb, &vt, &vt};
    PT_CHECK_STATUS(run_copy_shape(a2, 3), PTERUN_STATUS_INVALID_ARGUMENT);
    PT_CHECK(strstr(last_msg, "arg 'out': cannot resize from [2, 2] to [3, 3]") != NULL);
  }
  /* an output without memory is an error, not a NULL write */
  small.data = NULL;
  {
    pterun_value vs = pt_val_tensor(&small);
    pterun_value* a3[3] = {&vt, &vs, &vs};
    PT_CHECK_STATUS(run_copy_shape(a3, 3), PTERUN_STATUS_INVALID_ARGUMENT);
    PT_CHECK(strstr(last_msg, "has no memory") != NULL);
  }
  return 0;
}

/* out [2, 2, 3] in dim order (0, 2, 1), a [2, 1, 3] and b [3] broadcast. */
static int test_iter(void) {
  float a[6], b[3], o[12];
  int64_t so[3] = {2, 2, 3}, sa[3] = {2, 1, 3}, sb[1] = {3};
  pterun_tensor to = pt_tensor_make(PTERUN_DTYPE_F32, 3, so, o, sizeof o);
  pterun_tensor ta = pt_tensor_make(PTERUN_DTYPE_F32, 3, sa, a, sizeof a);
  pterun_tensor tb = pt_tensor_make(PTERUN_DTYPE_F32, 1, sb, b, sizeof b);
  const pterun_tensor* ins[2] = {&ta, &tb};
  pterun_iter it;
  to.dim_order[1] = 2, to.dim_order[2] = 1;
  PT_CHECK_STATUS(pterun_tensor_update_layout(&to), PTERUN_STATUS_OK);
  pterun_iter_init(&it, &to, ins, 2);
  for (int64_t n = 0; n < to.numel; ++n, pterun_iter_next(&it)) {
    int64_t i = n / 6, j = n / 3 % 2, k = n % 3;
    PT_CHECK(it.off[0] == i * 6 + k * 2 + j); /* channels-last style memory */
    PT_CHECK(it.off[1] == i * 3 + k);         /* dim 1 broadcast */
    PT_CHECK(it.off[2] == k);                 /* leading dims broadcast */
  }
  return 0;
}

static int test_arg_scalar(void) {
  pterun_value vi = pt_val_int(-3), vd = pt_val_double(NAN), vb = pt_val_bool(1),
               vn = pt_val_none(), vbig = pt_val_double(1e300);
  pterun_value* args[5] = {&vi, &vd, &vb, &vn, &vbig};
  pterun_scalar s;
  int has = 7;
  PT_CHECK_STATUS(pterun_arg_scalar(NULL, args, 0, "alpha", &s), PTERUN_STATUS_OK);
  PT_CHECK(s.i == -3 && s.d == -3.0 && !s.is_float && !s.is_bool);
  PT_CHECK_STATUS(pterun_arg_scalar(NULL, args, 1, "alpha", &s), PTERUN_STATUS_OK);
  PT_CHECK(isnan(s.d) && s.i == 0 && s.is_float);
  PT_CHECK_STATUS(pterun_arg_scalar(NULL, args, 2, "alpha", &s), PTERUN_STATUS_OK);
  PT_CHECK(s.i == 1 && s.is_bool);
  PT_CHECK_STATUS(pterun_arg_scalar(NULL, args, 4, "alpha", &s), PTERUN_STATUS_OK);
  PT_CHECK(s.i == INT64_MAX); /* saturates */
  PT_CHECK_STATUS(pterun_arg_opt_scalar(NULL, args, 3, "alpha", &s, &has), PTERUN_STATUS_OK);
  PT_CHECK(has == 0 && s.d == 0.0);
  PT_CHECK_STATUS(pterun_arg_opt_scalar(NULL, args, 0, "alpha", &s, &has), PTERUN_STATUS_OK);
  PT_CHECK(has == 1 && s.i == -3);
  return 0;
}

static PTERUN_KERNEL(kit_scalar) {
  pterun_scalar s;
  PTERUN_CHECK_NARGS(ctx, nargs, 1);
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 0, "other", &s));
  return PTERUN_STATUS_OK;
}

static int test_arg_scalar_kind(void) {
  pterun_value vn = pt_val_none();
  pterun_value* args[1] = {&vn};
  pterun_logger lg = {keep_msg, NULL, PTERUN_LOG_DEBUG};
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_scalar, "test::scalar", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_INVALID_TYPE);
  PT_CHECK(strstr(last_msg, "arg 0 'other': expected Scalar, got") != NULL);
  return 0;
}

static PTERUN_KERNEL(kit_checks) {
  pterun_tensor* t;
  PTERUN_CHECK_NARGS(ctx, nargs, 1);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "weight", &t));
  PTERUN_TRY(pterun_check_rank(ctx, t, "weight", 2));
  PTERUN_TRY(pterun_check_dtype(ctx, t, "weight", PTERUN_DTYPE_F32));
  return pterun_check_data(ctx, t, "weight");
}

static PTERUN_KERNEL(kit_contig) {
  pterun_tensor* t;
  PTERUN_CHECK_NARGS(ctx, nargs, 1);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "weight", &t));
  return pterun_check_contiguous(ctx, t, "weight");
}

static int test_tensor_checks(void) {
  float w[6] = {0};
  int64_t s23[2] = {2, 3}, s6[1] = {6};
  pterun_tensor t = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, w, sizeof w);
  pterun_value vt = pt_val_tensor(&t);
  pterun_value* args[1] = {&vt};
  pterun_logger lg = {keep_msg, NULL, PTERUN_LOG_DEBUG};
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_checks, "test::checks", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_OK);
  t = pt_tensor_make(PTERUN_DTYPE_F32, 1, s6, w, sizeof w);
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_checks, "test::checks", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(last_msg, "arg 'weight': expected rank 2, got 1") != NULL);
  t = pt_tensor_make(PTERUN_DTYPE_I32, 2, s23, w, sizeof w);
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_checks, "test::checks", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(last_msg, "arg 'weight': expected dtype float32, got int32") != NULL);
  t = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, NULL, 0);
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_checks, "test::checks", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(last_msg, "arg 'weight': tensor has no data") != NULL);
  t = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, w, sizeof w);
  t.nbytes = 8; /* inconsistent: storage for two of six elements */
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_checks, "test::checks", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(strstr(last_msg, "storage smaller than its shape") != NULL);
  /* pterun_check_contiguous: a transposed dim order is NOT_SUPPORTED */
  t = pt_tensor_make(PTERUN_DTYPE_F32, 2, s23, w, sizeof w);
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_contig, "test::contig", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_OK);
  t.dim_order[0] = 1, t.dim_order[1] = 0;
  PT_CHECK_STATUS(pterun_tensor_update_layout(&t), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_kernel_invoke(kit_contig, "test::contig", args, 1, &lg, NULL, 0),
                  PTERUN_STATUS_NOT_SUPPORTED);
  PT_CHECK(strstr(last_msg, "arg 'weight': only the default (row-major) dim order") != NULL);
  return 0;
}

int main(void) {
  PT_RUN(test_f16_all_patterns);
  PT_RUN(test_bf16_all_patterns);
  PT_RUN(test_f16_rounding_boundaries);
  PT_RUN(test_bf16_rounding_boundaries);
  PT_RUN(test_matches_torch);
  PT_RUN(test_load_store);
  PT_RUN(test_iter);
  PT_RUN(test_arg_scalar);
  PT_RUN(test_arg_scalar_kind);
  PT_RUN(test_kernel_macros);
  PT_RUN(test_broadcast);
  PT_RUN(test_same_layout);
  PT_RUN(test_out_resize);
  PT_RUN(test_tensor_checks);
  return pt_failures ? 1 : 0;
}
