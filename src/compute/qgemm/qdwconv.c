/* int8 depthwise convolution, NCHW (pterun_compute_qs8_dwconv2d_nchw):
 * dispatch and the direct loop.
 *
 * A depthwise convolution is a GEMM per channel with one output column and
 * K = kernel_h * kernel_w: run through pterun_compute_qs8_gemm it packs
 * im2col rows and pays a GEMM's set-up per channel, which made the
 * depthwise layers of int8 MobileNets milliseconds each. Here each output
 * plane sums its taps in exact int32, taps outside the input contributing
 * nothing (what the GEMM's zero-point padding contributes), and finishes
 * with the GEMM's own epilogue arithmetic (requant.h): the GEMM path's bits
 * for any variant and thread count. The widest variant of the staged loop
 * (qdwconv_tmpl.h) the CPU runs takes every geometry whose band fits its
 * buffer; the direct loop below (bounds per tap, from the input bytes) the
 * rest (rows of thousands of columns). */
#include <stdint.h>
#include <string.h>

#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "src/compute/qgemm/qdwconv.h"
#include "src/compute/qgemm/requant.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"
/* |sum| <= taps * 255 * 255 must stay below 2^31. */
#define PC_QDW_MAX_TAPS 32768
/* Multiply-adds per task below which splitting costs more than it saves. */
#define PC_QDW_TASK_MIN ((size_t)1 << 15)

typedef struct pc_qdw_variant {
  uint64_t isa;
  const char* name;
  pc_qdw_fn fn;    /* NCHW */
  pc_qdwn_fn nhwc; /* NHWC */
} pc_qdw_variant;

static const pc_qdw_variant g_variants[] = {
    {0, "base", pc_qs8_dwconv__base, pc_qs8_dwconv_nhwc__base},
#if defined(PTERUN_GEMM_AVX2)
    {PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2, "avx2", pc_qs8_dwconv__avx2,
     pc_qs8_dwconv_nhwc__avx2},
#endif
#if defined(PTERUN_GEMM_AVX512)
    {PTERUN_CPU_X86_AVX512F, "avx512f", pc_qs8_dwconv__avx512f, pc_qs8_dwconv_nhwc__avx512f},
#endif
#if defined(PTERUN_GEMM_AVX512VNNI)
    {PTERUN_CPU_X86_AVX512F | PTERUN_CPU_X86_AVX512BW, "avx512bw", pc_qs8_dwconv__avx512bw,
     pc_qs8_dwconv_nhwc__avx512bw},
#endif
};
#define PC_QDW_COUNT (sizeof g_variants / sizeof g_variants[0])

static atomic_uchar g_ran[PC_QDW_COUNT];
PC_USED_FAMILY(pc_used_qdwconv, "qdwconv", g_variants, g_ran);

typedef struct pc_qdw_job {
  pc_qdw_args a;
  pc_qdw_fn fn; /* NULL: the direct loop */
} pc_qdw_job;

/* acc[i] += wt * (x[i * stride] - za) for i < n. */
static void taps_u8(int32_t* acc, const uint8_t* x, size_t stride, size_t n, int32_t wt,
                    int32_t za) {
  if (stride == 1) {
    for (size_t i = 0; i < n; ++i) acc[i] += wt * ((int32_t)x[i] - za);
  } else {
    for (size_t i = 0; i < n; ++i) acc[i] += wt * ((int32_t)x[i * stride] - za);
  }
}

static void taps_s8(int32_t* acc, const int8_t* x, size_t stride, size_t n, int32_t wt,
                    int32_t za) {
  if (stride == 1) {
    for (size_t i = 0; i < n; ++i) acc[i] += wt * ((int32_t)x[i] - za);
  } else {
    for (size_t i = 0; i < n; ++i) acc[i] += wt * ((int32_t)x[i * stride] - za);
  }
}

/* The output columns [lo, hi) of [x0, x0 + n) whose tap at input column
 * offset `off` (ix = ox * stride + off) lies inside [0, in_w). */
static void column_range(int64_t off, int64_t stride, int64_t in_w, int64_t x0, int64_t n,
                         int64_t* lo, int64_t* hi) {
  int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t b = in_w - 1 - off >= 0 ? (in_w - 1 - off) / stride + 1 : 0;
  *lo = a > x0 ? a : x0;
  *hi = b < x0 + n ? b : x0 + n;
  if (*hi < *lo) *hi = *lo;
}

/* The direct loop: output plane `pl` (batch * out_c + channel). */
static void qdw_plane(const pc_qdw_args* j, size_t pl) {
  const pterun_compute_dwconv2d* p = j->p;
  const pterun_compute_qs8_epilogue* ep = j->ep;
  const size_t c = pl % p->out_c, b = pl / p->out_c, mult = p->out_c / p->in_c;
  const size_t in_plane = p->in_h * p->in_w, taps = p->kernel_h * p->kernel_w;
  const size_t x_at = (b * p->in_c + c / mult) * in_plane;
  const int8_t* wc = j->w + c * taps;
  const int32_t za = ep->a_zp, wz = ep->w_zp != NULL ? ep->w_zp[c] : 0;
  const float sc = ep->scale[ep->scale_per_column ? c : 0];
  const float bi = ep->bias != NULL ? ep->bias[c] : 0.0f;
  const float inv = ep->out_inv_scale, zpo = (float)ep->out_zp;
  const float qlo = (float)ep->q_min, qhi = (float)ep->q_max;
  const size_t out_at = pl * p->out_h * p->out_w;
  const int64_t sw = (int64_t)p->stride_w, in_w = (int64_t)p->in_w;
  int32_t acc[PC_QDW_TILE];
  for (size_t oy = 0; oy < p->out_h; ++oy) {
    for (size_t x0 = 0; x0 < p->out_w; x0 += PC_QDW_TILE) {
      const size_t n = p->out_w - x0 < PC_QDW_TILE ? p->out_w - x0 : PC_QDW_TILE;
      memset(acc, 0, sizeof(int32_t) * n);
      for (size_t ky = 0; ky < p->kernel_h; ++ky) {
        const int64_t iy = (int64_t)(oy * p->stride_h + ky * p->dilation_h) - (int64_t)p->pad_top;
        if (iy < 0 || iy >= (int64_t)p->in_h) continue;
        const size_t row = x_at + (size_t)iy * p->in_w;
        for (size_t kx = 0; kx < p->kernel_w; ++kx) {
          const int32_t wt = (int32_t)wc[ky * p->kernel_w + kx] - wz;
          const int64_t off = (int64_t)(kx * p->dilation_w) - (int64_t)p->pad_left;
          int64_t lo, hi;
          if (wt == 0) continue; /* adds 0 */
          column_range(off, sw, in_w, (int64_t)x0, (int64_t)n, &lo, &hi);
          if (hi == lo) continue;
          const size_t first = row + (size_t)(lo * sw + off);
          if (j->in_signed)
            taps_s8(acc + (lo - (int64_t)x0), (const int8_t*)j->in + first, (size_t)sw,
                    (size_t)(hi - lo), wt, za);
          else
            taps_u8(acc + (lo - (int64_t)x0), j->in + first, (size_t)sw, (size_t)(hi - lo), wt, za);
        }
      }
      const size_t at = out_at + oy * p->out_w + x0;
      if (j->out_dtype == PTERUN_DTYPE_F32) {
        float* o = (float*)j->out + at;
        for (size_t i = 0; i < n; ++i) {
          float y = (float)acc[i] * sc + bi;
          y = y < ep->f_min ? ep->f_min : y;
          y = y > ep->f_max ? ep->f_max : y;
          o[i] = y;
        }
      } else if (j->out_dtype == PTERUN_DTYPE_U8) {
        uint8_t* o = (uint8_t*)j->out + at;
        for (size_t i = 0; i < n; ++i)
          o[i] = (uint8_t)pc_qs8_requant((float)acc[i] * sc + bi, inv, zpo, qlo, qhi);
      } else {
        int8_t* o = (int8_t*)j->out + at;
        for (size_t i = 0; i < n; ++i)
          o[i] = (int8_t)pc_qs8_requant((float)acc[i] * sc + bi, inv, zpo, qlo, qhi);
      }
    }
  }
}

static void qdw_task(void* ctx, size_t start, size_t count) {
  const pc_qdw_job* j = (const pc_qdw_job*)ctx;
  if (j->fn != NULL) {
    j->fn(&j->a, start, count);
    return;
  }
  for (size_t pl = start; pl < start + count; ++pl) qdw_plane(&j->a, pl);
}

const char* pterun_compute_qs8_dwconv2d_variant(size_t variant) {
  if (variant >= PC_QDW_COUNT) return NULL;
  const uint64_t isa = g_variants[variant].isa;
  return (isa & pterun_cpu_features()) == isa ? g_variants[variant].name : NULL;
}

/* The widest variant this CPU runs. */
static size_t best_variant(void) {
  const uint64_t features = pterun_cpu_features();
  size_t v = PC_QDW_COUNT;
  while (v-- > 1)
    if ((g_variants[v].isa & features) == g_variants[v].isa) break;
  return v;
}

/* Arguments the loops can run: every index stays inside the tensors the
 * caller sized from `p`, and every sum is exact in int32. */
static int valid(const pterun_compute_dwconv2d* p, const void* in, int32_t in_dtype,
                 const int8_t* w, const pterun_compute_qs8_epilogue* ep, const void* out,
                 int32_t out_dtype) {
  if (p == NULL || in == NULL || w == NULL || ep == NULL || out == NULL || ep->scale == NULL)
    return 0;
  if (p->in_c == 0 || p->out_c % p->in_c != 0 || p->stride_h == 0 || p->stride_w == 0 ||
      p->dilation_h == 0 || p->dilation_w == 0 || p->kernel_h == 0 || p->kernel_w == 0 ||
      p->kernel_w > PC_QDW_MAX_TAPS || p->kernel_h > PC_QDW_MAX_TAPS / p->kernel_w)
    return 0;
  if ((in_dtype != PTERUN_DTYPE_U8 && in_dtype != PTERUN_DTYPE_I8) ||
      (out_dtype != PTERUN_DTYPE_U8 && out_dtype != PTERUN_DTYPE_I8 &&
       out_dtype != PTERUN_DTYPE_F32))
    return 0;
  if (in_dtype == PTERUN_DTYPE_U8 ? ep->a_zp < 0 || ep->a_zp > 255
                                  : ep->a_zp < -128 || ep->a_zp > 127)
    return 0;
  for (size_t c = 0; ep->w_zp != NULL && c < p->out_c; ++c)
    if (ep->w_zp[c] < -128 || ep->w_zp[c] > 127) return 0;
  return 1;
}

int pterun_compute_qs8_dwconv2d_nchw_with(size_t variant, const pterun_compute_dwconv2d* p,
                                          const void* in, int32_t in_dtype, const int8_t* w,
                                          const pterun_compute_qs8_epilogue* ep, void* out,
                                          int32_t out_dtype) {
  if (!valid(p, in, in_dtype, w, ep, out, out_dtype) ||
      pterun_compute_qs8_dwconv2d_variant(variant) == NULL || pc_qdw_row(p) == 0)
    return -1;
  const pc_qdw_args a = {p, (const uint8_t*)in, in_dtype == PTERUN_DTYPE_I8, w, ep, out, out_dtype};
  if (p->batch * p->out_c == 0 || p->out_h == 0 || p->out_w == 0) return 0;
  pc_used_mark(g_ran, variant);
  g_variants[variant].fn(&a, 0, p->batch * p->out_c);
  return 0;
}

int pterun_compute_qs8_dwconv2d_nchw(pterun_threadpool* pool, size_t max_threads,
                                     const pterun_compute_dwconv2d* p, const void* in,
                                     int32_t in_dtype, const int8_t* w,
                                     const pterun_compute_qs8_epilogue* ep, void* out,
                                     int32_t out_dtype) {
  if (!valid(p, in, in_dtype, w, ep, out, out_dtype)) return -1;
  const size_t planes = p->batch * p->out_c;
  if (planes == 0 || p->out_h == 0 || p->out_w == 0) return 0;
  pc_qdw_job j = {{p, (const uint8_t*)in, in_dtype == PTERUN_DTYPE_I8, w, ep, out, out_dtype},
                  NULL};
  if (pc_qdw_row(p) != 0) {
    const size_t v = best_variant();
    pc_used_mark(g_ran, v);
    j.fn = g_variants[v].fn;
  }
  const size_t per_plane = p->out_h * p->out_w * p->kernel_h * p->kernel_w;
  size_t tile = per_plane >= PC_QDW_TASK_MIN ? 1 : PC_QDW_TASK_MIN / (per_plane ? per_plane : 1);
  if (tile >= planes) pool = NULL;
  pterun_parallelize_1d_tile(
      pool, qdw_task, &j, planes, tile,
      pc_parallel_flags(max_threads, (double)planes * (double)per_plane, PC_PS_QS8_DW_MAC));
  return 0;
}

/* ---- NHWC ---------------------------------------------------------------- */

typedef struct pc_qdwn_job {
  pc_qdwn_args a;
  pc_qdwn_fn fn;
} pc_qdwn_job;

static void qdwn_task(void* ctx, size_t start, size_t count) {
  const pc_qdwn_job* j = (const pc_qdwn_job*)ctx;
  j->fn(&j->a, start, count);
}

/* As valid() for the NHWC loop: its filter holds at most PC_QDWN_MAX_TAPS
 * taps, the weight zero points are in w already (w_zp NULL). */
static int valid_nhwc(const pterun_compute_dwconv2d* p, const void* in, int32_t in_dtype,
                      const int16_t* w, const pterun_compute_qs8_epilogue* ep, const void* out,
                      int32_t out_dtype) {
  if (w == NULL || ep == NULL || ep->w_zp != NULL) return 0;
  /* valid() reads w only for NULL */
  if (!valid(p, in, in_dtype, (const int8_t*)(const void*)w, ep, out, out_dtype)) return 0;
  return p->kernel_h * p->kernel_w <= PC_QDWN_MAX_TAPS;
}

int pterun_compute_qs8_dwconv2d_nhwc_with(size_t variant, const pterun_compute_dwconv2d* p,
                                          const void* in, int32_t in_dtype, const int16_t* w,
                                          const int32_t* bias,
                                          const pterun_compute_qs8_epilogue* ep, void* out,
                                          int32_t out_dtype) {
  if (!valid_nhwc(p, in, in_dtype, w, ep, out, out_dtype) ||
      pterun_compute_qs8_dwconv2d_variant(variant) == NULL)
    return -1;
  const pc_qdwn_args a = {p,   (const uint8_t*)in, in_dtype == PTERUN_DTYPE_I8, w, bias, ep,
                          out, out_dtype};
  if (p->batch * p->out_h == 0 || p->out_w == 0 || p->out_c == 0) return 0;
  pc_used_mark(g_ran, variant);
  g_variants[variant].nhwc(&a, 0, p->batch * p->out_h);
  return 0;
}

int pterun_compute_qs8_dwconv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                     const pterun_compute_dwconv2d* p, const void* in,
                                     int32_t in_dtype, const int16_t* w, const int32_t* bias,
                                     const pterun_compute_qs8_epilogue* ep, void* out,
                                     int32_t out_dtype) {
  if (!valid_nhwc(p, in, in_dtype, w, ep, out, out_dtype)) return -1;
  const size_t rows = p->batch * p->out_h;
  if (rows == 0 || p->out_w == 0 || p->out_c == 0) return 0;
  const size_t v = best_variant();
  pc_used_mark(g_ran, v);
  pc_qdwn_job j = {
      {p, (const uint8_t*)in, in_dtype == PTERUN_DTYPE_I8, w, bias, ep, out, out_dtype},
      g_variants[v].nhwc};
  const size_t per_row = p->out_w * p->out_c * p->kernel_h * p->kernel_w;
  size_t tile = per_row >= PC_QDW_TASK_MIN ? 1 : PC_QDW_TASK_MIN / (per_row ? per_row : 1);
  if (tile >= rows) pool = NULL;
  pterun_parallelize_1d_tile(
      pool, qdwn_task, &j, rows, tile,
      pc_parallel_flags(max_threads, (double)rows * (double)per_row, PC_PS_QS8_DW_MAC));
  return 0;
}
