/* Random operators (rand.out, randn.out, native_dropout.out).
 *
 * Randomness without global state. ExecuTorch's portable kernels seed a fresh
 * std::mt19937 from std::random_device on every call, so each call draws new
 * numbers and nothing is shared between calls or threads; there is no way to
 * pass a seed through the operator schema. pterun does the same in C11: each
 * call seeds its own generator (state on the stack) from the wall clock
 * (timespec_get, nanoseconds), the address of the output buffer and a stack
 * address, mixed with splitmix64, and draws from xoshiro256**. The kernels are
 * thread-safe and never allocate; their outputs are not reproducible from run
 * to run, as in ExecuTorch. Tests check ranges and distributions, not values.
 *
 * Values: rand gives uniform numbers in [0, 1) with the precision of the out
 * dtype (never 1.0 after rounding); randn uses the Box-Muller transform;
 * native_dropout follows ATen, not ExecuTorch: kept elements are scaled by
 * 1/(1-p) (ExecuTorch 1.5 keeps them unscaled). */
#include <inttypes.h>
#include <time.h>

#include "kernels/portable/util.h"

typedef struct pk_rng {
  uint64_t s[4];
} pk_rng;

static uint64_t splitmix64(uint64_t* x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t rotl64(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(pk_rng* r) {
  uint64_t res = rotl64(r->s[1] * 5, 7) * 9, t = r->s[1] << 17;
  r->s[2] ^= r->s[0];
  r->s[3] ^= r->s[1];
  r->s[1] ^= r->s[2];
  r->s[0] ^= r->s[3];
  r->s[2] ^= t;
  r->s[3] = rotl64(r->s[3], 45);
  return res;
}

/* Seeds a per-call generator (see the file comment). */
static void rng_seed(pk_rng* r, const void* salt) {
  struct timespec ts;
  uint64_t x;
  int k;
  volatile int local = 0;
  ts.tv_sec = 0;
  ts.tv_nsec = 0;
#ifndef PTERUN_BARE_METAL /* newlib has no timespec_get: address entropy only */
  (void)timespec_get(&ts, TIME_UTC);
#endif
  x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  x ^= (uint64_t)(uintptr_t)salt * 0xD6E8FEB86659FD93ull;
  x ^= rotl64((uint64_t)(uintptr_t)&local, 32);
  for (k = 0; k < 4; ++k) r->s[k] = splitmix64(&x);
}

/* Uniform in [0, 1) with `bits` random mantissa bits (exact in the dtype). */
static double rng_uniform(pk_rng* r, int bits) {
  return (double)(rng_next(r) >> (64 - bits)) * ldexp(1.0, -bits);
}

static int mantissa_bits(int dt) {
  switch (dt) {
    case PTERUN_DTYPE_F16: return 11;
    case PTERUN_DTYPE_BF16: return 8;
    case PTERUN_DTYPE_F32: return 24;
    default: return 53;
  }
}

static pterun_status rand_common(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                 int normal) {
  pterun_tensor* out;
  pk_rng rng;
  int64_t n;
  int bits;
  PTERUN_CHECK_NARGS(ctx, nargs, 3);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, out, "out"));
  PTERUN_TRY(pk_resize_to_size_arg(ctx, args, 0, out));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  rng_seed(&rng, out->data);
  bits = mantissa_bits(out->dtype);
  for (n = 0; n < out->numel; ++n) {
    double v;
    if (normal) {
      /* Box-Muller; u1 in (0, 1] keeps the log finite. */
      double u1 = 1.0 - rng_uniform(&rng, 53), u2 = rng_uniform(&rng, 53);
      double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
      v = rad * cos(th);
      pterun_store_f64(out->data, out->dtype, pk_logical_offset(out, n), v);
      if (++n >= out->numel) break;
      v = rad * sin(th);
    } else {
      v = rng_uniform(&rng, bits);
    }
    pterun_store_f64(out->data, out->dtype, pk_logical_offset(out, n), v);
  }
  return PTERUN_STATUS_OK;
}

/* aten::rand.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!) */
pterun_status pk_rand_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return rand_common(ctx, args, nargs, 0);
}

/* aten::randn.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!) */
pterun_status pk_randn_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  return rand_common(ctx, args, nargs, 1);
}

/* aten::native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0,
 *   Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))
 * Training (train true or None) with p > 0: mask = u >= p for uniform u,
 * out = input * mask / (1 - p) (0 when p = 1). Otherwise out = input and the
 * mask is all true. */
pterun_status pk_native_dropout_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *in, *out, *mask;
  const pterun_tensor* ins[2];
  double p, scale;
  bool train = true;
  int64_t n;
  pterun_iter it;
  pk_rng rng;
  int drop;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_double(ctx, args, 1, "p", &p));
  if (args[2] != NULL && args[2]->tag != PTERUN_VALUE_NONE)
    PTERUN_TRY(pk_arg_bool(ctx, args, 2, "train", &train));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 3, "out0", &out));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out1", &mask));
  PTERUN_TRY(pk_check_float(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", out, "out0"));
  if (mask->dtype != PTERUN_DTYPE_BOOL)
    return PTERUN_FAIL_ARG(ctx, "arg 'out1': expected bool, got %s",
                           pterun_dtype_name(mask->dtype));
  if (!(p >= 0.0 && p <= 1.0))
    return PTERUN_FAIL_ARG(ctx, "arg 'p': dropout probability has to be in [0, 1], got %g", p);
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", in));
  PTERUN_TRY(pterun_out_resize_like(ctx, mask, "mask", in));
  if (in->numel == 0) return PTERUN_STATUS_OK;
  drop = train && p != 0.0;
  scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  if (drop) rng_seed(&rng, out->data);
  ins[0] = in;
  ins[1] = mask;
  pterun_iter_init(&it, out, ins, 2);
  for (n = 0; n < out->numel; ++n) {
    double v = pterun_load_f64(in->data, in->dtype, it.off[1]);
    uint8_t keep = 1;
    if (drop) {
      keep = rng_uniform(&rng, 53) >= p;
      v = v * (keep ? 1.0 : 0.0) * scale;
    }
    pterun_store_f64(out->data, out->dtype, it.off[0], v);
    ((uint8_t*)mask->data)[it.off[2]] = keep;
    pterun_iter_next(&it);
  }
  return PTERUN_STATUS_OK;
}
