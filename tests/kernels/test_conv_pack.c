/* float32 convolution through the GEMM with B packed straight from the image
 * (kernels/portable/conv/im2col.c col_pack_b, pterun_compute_gemm_opts.pack_b),
 * over padding, stride, dilation, groups, odd sizes, 1-D/2-D/3-D and bias or
 * none. Each case is checked two ways:
 *  - bit for bit against the im2col path it replaces: the column matrix built
 *    here and multiplied in K chunks of pterun_compute_gemm_k_block, the
 *    first chunk storing with the bias, the others accumulating;
 *  - against the same convolution in float64 (the kernel's im2col path in
 *    double), within float32 rounding.
 * Dense 2-D cases with a short reduction take the direct convolution, only
 * close to im2col; they are run again as 3-D (depth 1) through the packer.
 * Run twice by ctest: as is, and with PTERUN_ISA_MASK=0 (scalar engine). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/kernels/portable.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_values.h"

static int pt_failures;

static uint32_t g_rng = 2024;
static float rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (float)((g_rng >> 9) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct conv_case {
  int sp; /* spatial dims: 1, 2 or 3 */
  int64_t n, cin, cout, groups;
  int64_t in[3], k[3], stride[3], pad[3], dil[3];
  int bias;
} conv_case;

/* The reference im2col product of one case (float32, contiguous NC...). */
typedef struct ref_job {
  const conv_case* c;
  const int64_t* out; /* output spatial sizes (3, leading 1s) */
  const float *x, *w, *b;
  float* y;
} ref_job;
static ref_job g_ref;

static PTERUN_KERNEL(run_ref) {
  const conv_case* c = g_ref.c;
  const int64_t* o = g_ref.out;
  int64_t in3[3], k3[3], s3[3], p3[3], d3[3];
  (void)args;
  (void)nargs;
  for (int d = 0; d < 3; ++d) {
    int real = d >= 3 - c->sp;
    in3[d] = real ? c->in[d - (3 - c->sp)] : 1;
    k3[d] = real ? c->k[d - (3 - c->sp)] : 1;
    s3[d] = real ? c->stride[d - (3 - c->sp)] : 1;
    p3[d] = real ? c->pad[d - (3 - c->sp)] : 0;
    d3[d] = real ? c->dil[d - (3 - c->sp)] : 1;
  }
  const int64_t icpg = c->cin / c->groups, ocpg = c->cout / c->groups;
  const int64_t rows = icpg * k3[0] * k3[1] * k3[2], npos = o[0] * o[1] * o[2];
  const int64_t isz = in3[0] * in3[1] * in3[2];
  float* col = malloc(sizeof(float) * (size_t)(rows * npos));
  if (col == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  pterun_compute_gemm_ws ws;
  pterun_compute_gemm_init(ctx, &ws, PTERUN_DTYPE_F32);
  const int64_t kb = pterun_compute_gemm_k_block(&ws, ocpg, rows);
  for (int64_t n = 0; n < c->n; ++n)
    for (int64_t g = 0; g < c->groups; ++g) {
      for (int64_t r = 0; r < rows; ++r) {
        int64_t ic = r / (k3[0] * k3[1] * k3[2]), kd = r / (k3[1] * k3[2]) % k3[0],
                kh = r / k3[2] % k3[1], kw = r % k3[2];
        const float* xp = g_ref.x + (n * c->cin + g * icpg + ic) * isz;
        for (int64_t p = 0; p < npos; ++p) {
          int64_t od = p / (o[1] * o[2]), oh = p / o[2] % o[1], ow = p % o[2];
          int64_t id = od * s3[0] - p3[0] + kd * d3[0], ih = oh * s3[1] - p3[1] + kh * d3[1],
                  iw = ow * s3[2] - p3[2] + kw * d3[2];
          int inside = id >= 0 && id < in3[0] && ih >= 0 && ih < in3[1] && iw >= 0 && iw < in3[2];
          col[r * npos + p] = inside ? xp[(id * in3[1] + ih) * in3[2] + iw] : 0.0f;
        }
      }
      for (int64_t r0 = 0; r0 < rows; r0 += kb) {
        int64_t nr = rows - r0 < kb ? rows - r0 : kb;
        pterun_compute_matrix a = {(float*)g_ref.w + g * ocpg * rows + r0, PTERUN_DTYPE_F32, rows,
                                   1};
        pterun_compute_matrix b = {col + r0 * npos, PTERUN_DTYPE_F32, npos, 1};
        pterun_compute_matrix y = {g_ref.y + (n * c->cout + g * ocpg) * npos, PTERUN_DTYPE_F32,
                                   npos, 1};
        pterun_compute_gemm_opts opts = PTERUN_COMPUTE_GEMM_OPTS_INIT;
        opts.bias = r0 == 0 && g_ref.b != NULL ? g_ref.b + g * ocpg : NULL;
        pterun_compute_gemm_ex(&ws, ocpg, npos, nr, &a, &b, &y, 1.0, r0 > 0, &opts);
      }
    }
  free(col);
  return PTERUN_STATUS_OK;
}

/* Runs aten::convolution.out on `dtype` copies of x, w, b into y (doubles
 * for F64, floats for F32). */
static int run_conv(const conv_case* c, int dtype, const void* x, const void* w, const void* b,
                    void* y, size_t ybytes, const int64_t* ysizes, void* arena,
                    size_t arena_bytes) {
  pterun_kernel_fn fn = pt_find_kernel(pterun_kernels_portable(), "aten::convolution.out");
  PT_CHECK(fn != NULL);
  int rank = c->sp + 2;
  int64_t xs[5] = {c->n, c->cin}, wsz[5] = {c->cout, c->cin / c->groups}, bs[1] = {c->cout};
  for (int d = 0; d < c->sp; ++d) {
    xs[2 + d] = c->in[d];
    wsz[2 + d] = c->k[d];
  }
  size_t es = dtype == PTERUN_DTYPE_F64 ? 8 : 4;
  size_t xn = 1, wn = 1;
  for (int d = 0; d < rank; ++d) {
    xn *= (size_t)xs[d];
    wn *= (size_t)wsz[d];
  }
  pterun_tensor tx = pt_tensor_make(dtype, rank, xs, (void*)x, xn * es);
  pterun_tensor tw = pt_tensor_make(dtype, rank, wsz, (void*)w, wn * es);
  pterun_tensor tb = pt_tensor_make(dtype, 1, bs, (void*)b, (size_t)c->cout * es);
  pterun_tensor ty = pt_tensor_make(dtype, rank, ysizes, y, ybytes);
  int64_t opad[3] = {0, 0, 0};
  pt_int_list lists[4];
  pterun_value vl[4] = {pt_val_int_list(&lists[0], c->stride, (size_t)c->sp),
                        pt_val_int_list(&lists[1], c->pad, (size_t)c->sp),
                        pt_val_int_list(&lists[2], c->dil, (size_t)c->sp),
                        pt_val_int_list(&lists[3], opad, (size_t)c->sp)};
  pterun_value v[11] = {pt_val_tensor(&tx),
                        pt_val_tensor(&tw),
                        c->bias ? pt_val_tensor(&tb) : pt_val_none(),
                        vl[0],
                        vl[1],
                        vl[2],
                        pt_val_bool(0),
                        vl[3],
                        pt_val_int(c->groups),
                        pt_val_tensor(&ty),
                        pt_val_tensor(&ty)}; /* out, then the returned value */
  pterun_value* args[11];
  for (int i = 0; i < 11; ++i) args[i] = &v[i];
  PT_CHECK_STATUS(
      pterun_kernel_invoke(fn, "aten::convolution.out", args, 11, NULL, arena, arena_bytes),
      PTERUN_STATUS_OK);
  return 0;
}

static int check_case(const conv_case* c, void* arena, size_t arena_bytes, int exact) {
  int64_t ys[5] = {c->n, c->cout}, out3[3] = {1, 1, 1};
  size_t xn = (size_t)(c->n * c->cin), wn = (size_t)(c->cout * (c->cin / c->groups)), yn;
  for (int d = 0; d < c->sp; ++d) {
    int64_t ext = c->dil[d] * (c->k[d] - 1) + 1;
    ys[2 + d] = (c->in[d] + 2 * c->pad[d] - ext) / c->stride[d] + 1;
    out3[3 - c->sp + d] = ys[2 + d];
    xn *= (size_t)c->in[d];
    wn *= (size_t)c->k[d];
  }
  yn = (size_t)(c->n * c->cout * out3[0] * out3[1] * out3[2]);
  float *x = malloc(xn * 4), *w = malloc(wn * 4), *b = malloc((size_t)c->cout * 4);
  float *y = malloc(yn * 4), *yref = malloc(yn * 4);
  double *xd = malloc(xn * 8), *wd = malloc(wn * 8), *bd = malloc((size_t)c->cout * 8);
  double* yd = malloc(yn * 8);
  PT_CHECK(x && w && b && y && yref && xd && wd && bd && yd);
  for (size_t i = 0; i < xn; ++i) xd[i] = x[i] = rnd();
  for (size_t i = 0; i < wn; ++i) wd[i] = w[i] = rnd();
  for (int64_t i = 0; i < c->cout; ++i) bd[i] = b[i] = rnd();
  memset(y, 0xa5, yn * 4);
  PT_CHECK(run_conv(c, PTERUN_DTYPE_F32, x, w, b, y, yn * 4, ys, arena, arena_bytes) == 0);
  PT_CHECK(run_conv(c, PTERUN_DTYPE_F64, xd, wd, bd, yd, yn * 8, ys, arena, arena_bytes) == 0);
  g_ref = (ref_job){c, out3, x, w, c->bias ? b : NULL, yref};
  PT_CHECK_STATUS(pterun_kernel_invoke(run_ref, "ref", NULL, 0, NULL, arena, arena_bytes),
                  PTERUN_STATUS_OK);
  int64_t red =
      (c->cin / c->groups) * c->k[0] * (c->sp > 1 ? c->k[1] : 1) * (c->sp > 2 ? c->k[2] : 1);
  for (size_t i = 0; i < yn; ++i) {
    if ((exact && memcmp(&y[i], &yref[i], 4) != 0) ||
        fabs(y[i] - yd[i]) > 1e-6 * (double)(red + 1) * 4) {
      fprintf(stderr,
              "FAILED sp=%d n=%lld cin=%lld cout=%lld groups=%lld k0=%lld stride0=%lld "
              "pad0=%lld dil0=%lld: y[%zu] = %a, im2col %a, f64 %.9g\n",
              c->sp, (long long)c->n, (long long)c->cin, (long long)c->cout, (long long)c->groups,
              (long long)c->k[0], (long long)c->stride[0], (long long)c->pad[0],
              (long long)c->dil[0], i, y[i], yref[i], yd[i]);
      return 1;
    }
  }
  free(x);
  free(w);
  free(b);
  free(y);
  free(yref);
  free(xd);
  free(wd);
  free(bd);
  free(yd);
  return 0;
}

static const conv_case k_cases[] = {
    /* sp n cin cout groups  in          k          stride     pad        dil     bias */
    {2, 1, 3, 32, 1, {64, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},  /* ResNet stem */
    {2, 1, 32, 64, 1, {16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1}, /* downsampling */
    {2, 2, 5, 7, 1, {13, 11}, {3, 2}, {1, 1}, {0, 0}, {1, 1}, 0},   /* odd, batch 2 */
    {2, 1, 6, 9, 3, {17, 19}, {3, 3}, {2, 3}, {2, 1}, {2, 1}, 1},   /* groups, dilation */
    {2, 1, 4, 4, 2, {9, 30}, {5, 1}, {1, 2}, {3, 0}, {1, 1}, 1},    /* pad > k/2 */
    {2, 1, 8, 1, 1, {20, 37}, {3, 3}, {1, 1}, {1, 1}, {3, 3}, 1},   /* M = 1 */
    {2, 1, 64, 70, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1}, /* K over one block */
    {2, 1, 16, 24, 1, {8, 8}, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1},   /* 1x1 stride 2 */
    {2, 1, 3, 5, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0},     /* 1x1 padded */
    {2, 1, 2, 3, 1, {4, 50}, {4, 4}, {3, 1}, {2, 2}, {1, 2}, 1},    /* taps outside */
    {2, 1, 8, 16, 1, {20, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},  /* stride 2, wide rows */
    {2, 1, 4, 8, 1, {9, 100}, {3, 3}, {1, 3}, {1, 1}, {1, 1}, 1},   /* stride 3, wide rows */
    {1, 2, 4, 6, 2, {41}, {5}, {2}, {2}, {2}, 1},                   /* 1-D */
    {3, 1, 3, 4, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 1}, /* 3-D */
    /* One input channel, one group: a dense convolution, not depthwise
     * planes with a multiplier (a keyword-spotting stem; 5 output columns:
     * the GEMM, not the direct kernel). */
    {2, 1, 1, 64, 1, {49, 10}, {10, 4}, {2, 2}, {5, 1}, {1, 1}, 1},
    /* Depthwise, fewer than 16 output columns: through NHWC copies in scratch
     * (the NCHW loops without it). */
    {2, 1, 64, 64, 64, {25, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
    {2, 2, 16, 16, 16, {7, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
    {2, 1, 8, 8, 8, {3, 3}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1},
    /* The flat grid of the phase planes (im2col.c flat_*): unit stride on
     * 16- and 32-wide planes; stride 2 with an even left padding (both
     * column phases in one pass), odd widths, an odd padding; dilation 2 at
     * stride 2 (one phase per dim); strides 3 and 4; padding beyond the
     * taps' reach; 1-D at stride 2; stride 5 (beyond the flat path). */
    {2, 1, 16, 16, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
    {2, 2, 8, 24, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0},
    {2, 1, 8, 16, 1, {32, 32}, {3, 3}, {2, 2}, {2, 2}, {1, 1}, 1},
    {2, 1, 8, 16, 1, {31, 33}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, 1},
    {2, 1, 8, 16, 1, {31, 35}, {5, 5}, {2, 2}, {2, 2}, {1, 1}, 0},
    {2, 1, 7, 12, 1, {29, 37}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},
    {2, 1, 6, 12, 2, {30, 40}, {3, 3}, {2, 2}, {4, 4}, {2, 2}, 1},
    {2, 1, 5, 8, 1, {27, 40}, {4, 4}, {4, 4}, {1, 3}, {1, 1}, 1},
    {2, 1, 6, 9, 1, {26, 50}, {3, 4}, {3, 3}, {2, 1}, {1, 2}, 1},
    {2, 1, 8, 16, 1, {16, 16}, {3, 3}, {1, 1}, {5, 5}, {1, 1}, 1},
    {1, 1, 8, 16, 1, {200}, {3}, {2}, {1}, {1}, 1},
    {2, 1, 5, 8, 1, {27, 48}, {3, 5}, {5, 5}, {1, 1}, {1, 1}, 1},
    /* One output row on the flat grid (only its real columns, written
     * straight into out): 1-D at unit stride, dilated with "same" padding (a
     * WaveNet layer), K over one block, groups and batch 2 unpadded, and a
     * 2-D convolution whose output has one row. */
    {1, 1, 16, 24, 1, {300}, {3}, {1}, {4}, {4}, 1},
    {1, 1, 64, 32, 1, {100}, {5}, {1}, {2}, {1}, 1},
    {1, 2, 6, 9, 3, {50}, {5}, {1}, {0}, {1}, 0},
    {2, 1, 4, 8, 1, {3, 40}, {3, 3}, {1, 1}, {0, 1}, {1, 1}, 1},
};

/* A dense 2-D convolution with at most 4 input channels and a short
 * reduction runs as the compute engine's direct convolution
 * (pterun_compute_f32_conv2d_nchw, its own test in
 * tests/compute/test_conv2d.c; the rule is conv/direct.c's), not the GEMM: only
 * close to im2col. Were the rule to widen, the exact checks below fail. */
static int direct_path(const conv_case* c) {
  int pointwise = c->k[0] == 1 && c->k[1] == 1 && c->stride[0] == 1 && c->stride[1] == 1 &&
                  c->pad[0] == 0 && c->pad[1] == 0;
  int64_t out_w =
      c->sp == 2 ? (c->in[1] + 2 * c->pad[1] - c->dil[1] * (c->k[1] - 1) - 1) / c->stride[1] + 1
                 : 0;
  return c->sp == 2 && c->groups == 1 && !pointwise && c->cin <= 4 && out_w >= 16 &&
         c->cin * c->k[0] * c->k[1] <= PTERUN_COMPUTE_CONV2D_MAX_TAPS;
}

/* Depthwise (a group per input channel): its own loops, only close to
 * im2col (taps in another order). */
static int depthwise(const conv_case* c) {
  return c->groups == c->cin && c->groups > 1;
}

/* The same convolution as 3-D with a leading depth of 1: the GEMM path. */
static conv_case as_3d(const conv_case* c) {
  conv_case d = *c;
  d.sp = 3;
  for (int i = 2; i > 0; --i) {
    d.in[i] = c->in[i - 1];
    d.k[i] = c->k[i - 1];
    d.stride[i] = c->stride[i - 1];
    d.pad[i] = c->pad[i - 1];
    d.dil[i] = c->dil[i - 1];
  }
  d.in[0] = d.k[0] = d.stride[0] = d.dil[0] = 1;
  d.pad[0] = 0;
  return d;
}

static int test_cases(void) {
  size_t arena_bytes = (size_t)8 << 20;
  void* arena = aligned_alloc(64, arena_bytes);
  PT_CHECK(arena != NULL);
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; ++i) {
    const int direct = direct_path(&k_cases[i]), dw = depthwise(&k_cases[i]);
    PT_CHECK(check_case(&k_cases[i], arena, arena_bytes, !direct && !dw) == 0);
    /* No room for scratch: the depthwise NCHW loops instead of NHWC copies. */
    if (dw) PT_CHECK(check_case(&k_cases[i], arena, 256, 0) == 0);
    /* A small arena: smaller GEMM blocks (K blocks too), so only close. */
    PT_CHECK(check_case(&k_cases[i], arena, (size_t)96 << 10, 0) == 0);
    if (direct) {
      /* The packer on this geometry still: bit for bit, as 3-D. */
      const conv_case c3 = as_3d(&k_cases[i]);
      PT_CHECK(check_case(&c3, arena, arena_bytes, 1) == 0);
    }
  }
  free(arena);
  return 0;
}

int main(void) {
  PT_RUN(test_cases);
  return pt_failures != 0;
}
