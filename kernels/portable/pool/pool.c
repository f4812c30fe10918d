/* 2-D pooling: avg_pool2d, max_pool2d_with_indices, _adaptive_avg_pool2d.
 * Inputs are [C, H, W] or [N, C, H, W] in any dim order; every (n, c) plane
 * is pooled independently with double accumulation. */
#include <inttypes.h>

#include "kernels/portable/util.h"
#include "pterun/compute.h"
#include "pterun/threadpool.h"

/* Plane geometry shared by the pooling kernels. */
typedef struct plane {
  int64_t planes, c, ih, iw, oh, ow;
  int batched;
} plane;

/* Element offset of plane q (= n*C + c) in t. */
static int64_t plane_base(const plane* p, const pterun_tensor* t, int64_t q) {
  return p->batched ? (q / p->c) * t->strides[0] + (q % p->c) * t->strides[1] : q * t->strides[0];
}

static pterun_status plane_setup(pterun_kernel_context* ctx, const pterun_tensor* in, plane* p) {
  if (in->rank != 3 && in->rank != 4)
    return PTERUN_FAIL_ARG(ctx, "arg 'self': expected rank 3 or 4, got %d", (int)in->rank);
  p->batched = in->rank == 4;
  p->c = in->sizes[in->rank - 3];
  p->planes = (p->batched ? in->sizes[0] : 1) * p->c;
  p->ih = in->sizes[in->rank - 2];
  p->iw = in->sizes[in->rank - 1];
  return PTERUN_STATUS_OK;
}

static pterun_status plane_resize(pterun_kernel_context* ctx, const pterun_tensor* in,
                                  pterun_tensor* out, const plane* p) {
  int64_t sizes[4];
  int r = in->rank;
  sizes[0] = in->sizes[0];
  sizes[1] = in->sizes[1];
  sizes[r - 2] = p->oh;
  sizes[r - 1] = p->ow;
  return pterun_out_resize(ctx, out, "out", (size_t)r, sizes);
}

/* ATen's pooling output size (with the ceil_mode rule that the last window
 * must start inside the input or its left padding). */
static int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                        int ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t o = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (o - 1) * stride >= in + pad) --o;
  return o;
}

/* Reads kernel/stride/padding(/dilation) and computes the output plane. */
static pterun_status pool_params(pterun_kernel_context* ctx, pterun_value** args, int has_dil,
                                 int ceil_mode, plane* p, int64_t* k, int64_t* s, int64_t* pad,
                                 int64_t* dil) {
  static const int64_t one[2] = {1, 1};
  int d;
  PTERUN_TRY(pk_arg_int_n(ctx, args, 1, "kernel_size", 2, NULL, k));
  PTERUN_TRY(pk_arg_int_n(ctx, args, 2, "stride", 2, k, s));
  PTERUN_TRY(pk_arg_int_n(ctx, args, 3, "padding", 2, NULL, pad));
  if (has_dil)
    PTERUN_TRY(pk_arg_int_n(ctx, args, 4, "dilation", 2, one, dil));
  else
    dil[0] = dil[1] = 1;
  for (d = 0; d < 2; ++d)
    if (k[d] <= 0 || s[d] <= 0 || dil[d] <= 0 || pad[d] < 0 || pad[d] > k[d] / 2 ||
        k[d] > INT32_MAX || s[d] > INT32_MAX || dil[d] > INT32_MAX)
      return PTERUN_FAIL_ARG(ctx,
                             "invalid kernel %" PRId64 " / stride %" PRId64 " / padding %" PRId64
                             " / dilation %" PRId64,
                             k[d], s[d], pad[d], dil[d]);
  p->oh = pool_out(p->ih, k[0], pad[0], s[0], dil[0], ceil_mode);
  p->ow = pool_out(p->iw, k[1], pad[1], s[1], dil[1], ceil_mode);
  if (p->oh <= 0 || p->ow <= 0)
    return PTERUN_FAIL_ARG(ctx, "output size %" PRId64 "x%" PRId64 " is too small", p->oh, p->ow);
  return PTERUN_STATUS_OK;
}

/* aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
 *   bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *,
 *   Tensor(a!) out) */
PTERUN_KERNEL(pk_avg_pool2d_out) {
  pterun_tensor *in, *out;
  bool ceil_mode, include_pad;
  int64_t k[2], s[2], pad[2], dil[2], divisor, q, oh, ow;
  int has_div;
  plane p = {0, 0, 0, 0, 0, 0, 0};
  int r;
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pk_arg_bool(ctx, args, 4, "ceil_mode", &ceil_mode));
  PTERUN_TRY(pk_arg_bool(ctx, args, 5, "count_include_pad", &include_pad));
  PTERUN_TRY(pterun_arg_opt_int(ctx, args, 6, "divisor_override", &divisor, &has_div));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "out", &out));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  if (has_div && divisor == 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'divisor_override': must be nonzero");
  PTERUN_TRY(plane_setup(ctx, in, &p));
  PTERUN_TRY(pool_params(ctx, args, 0, ceil_mode, &p, k, s, pad, dil));
  PTERUN_TRY(plane_resize(ctx, in, out, &p));
  r = in->rank;
  for (q = 0; q < p.planes; ++q) {
    int64_t ib = plane_base(&p, in, q), ob = plane_base(&p, out, q);
    for (oh = 0; oh < p.oh; ++oh)
      for (ow = 0; ow < p.ow; ++ow) {
        int64_t h0 = oh * s[0] - pad[0], w0 = ow * s[1] - pad[1];
        int64_t h1 = h0 + k[0] < p.ih + pad[0] ? h0 + k[0] : p.ih + pad[0];
        int64_t w1 = w0 + k[1] < p.iw + pad[1] ? w0 + k[1] : p.iw + pad[1];
        int64_t area = (h1 - h0) * (w1 - w0), h, w, div;
        double sum = 0.0;
        h0 = h0 > 0 ? h0 : 0;
        w0 = w0 > 0 ? w0 : 0;
        h1 = h1 < p.ih ? h1 : p.ih;
        w1 = w1 < p.iw ? w1 : p.iw;
        if (in->dtype == PTERUN_DTYPE_F32) {
          const float* xp = (const float*)in->data + ib;
          for (h = h0; h < h1; ++h)
            for (w = w0; w < w1; ++w) sum += xp[h * in->strides[r - 2] + w * in->strides[r - 1]];
        } else {
          for (h = h0; h < h1; ++h)
            for (w = w0; w < w1; ++w)
              sum += pterun_load_f64(in->data, in->dtype,
                                     ib + h * in->strides[r - 2] + w * in->strides[r - 1]);
        }
        div = has_div ? divisor : include_pad ? area : (h1 - h0) * (w1 - w0);
        pterun_store_f64(out->data, out->dtype,
                         ob + oh * out->strides[r - 2] + ow * out->strides[r - 1],
                         div ? sum / (double)div : 0.0);
      }
  }
  return PTERUN_STATUS_OK;
}

/* One max_pool2d_with_indices call, shared by its pool tasks. */
typedef struct maxpool_job {
  const plane* p;
  const pterun_tensor *in, *out, *idx;
  int64_t k[2], s[2], pad[2], dil[2];
} maxpool_job;

/* Planes [start, start + count): each output is the first maximum of its
 * window in (kh, kw) order, NaN winning and sticking as in ATen. */
static void maxpool_planes(void* ctx, size_t start, size_t count) {
  const maxpool_job* j = ctx;
  const plane* pp = j->p;
  const pterun_tensor *in = j->in, *out = j->out, *idx = j->idx;
  const int64_t *k = j->k, *s = j->s, *pad = j->pad, *dil = j->dil;
  const int r = in->rank, f32 = in->dtype == PTERUN_DTYPE_F32;
  const int64_t ihs = in->strides[r - 2], iws = in->strides[r - 1];
  const int64_t ohs = out->strides[r - 2], ows = out->strides[r - 1];
  const int64_t xhs = idx->strides[r - 2], xws = idx->strides[r - 1];
  /* float32 2x2 windows at stride 2 inside the input (the usual downsampling
   * pool): no bounds to check, four taps in a fixed order. */
  const int quad = f32 && k[0] == 2 && k[1] == 2 && s[0] == 2 && s[1] == 2 && pad[0] == 0 &&
                   pad[1] == 0 && dil[0] == 1 && dil[1] == 1 && 2 * pp->oh <= pp->ih &&
                   2 * pp->ow <= pp->iw;
  for (int64_t q = (int64_t)start; q < (int64_t)(start + count); ++q) {
    int64_t ib = plane_base(pp, in, q), ob = plane_base(pp, out, q), xb = plane_base(pp, idx, q);
    int64_t* xo = (int64_t*)idx->data + xb;
    if (quad) {
      const float* x = (const float*)in->data + ib;
      float* y = (float*)out->data + ob;
      for (int64_t oh = 0; oh < pp->oh; ++oh) {
        const float* r0 = x + 2 * oh * ihs;
        const float* r1 = r0 + ihs;
        const int64_t i0 = 2 * oh * pp->iw, i1 = i0 + pp->iw;
        if (iws == 1 && ows == 1 && xws == 1) { /* dense rows: the compute engine's vectors */
          pterun_compute_f32_maxpool2x2_row(r0, r1, (size_t)pp->ow, y + oh * ohs, xo + oh * xhs, i0,
                                            pp->iw);
          continue;
        }
        for (int64_t ow = 0; ow < pp->ow; ++ow) {
          const int64_t c = 2 * ow * iws;
          float m = r0[c], v;
          int64_t best = i0 + 2 * ow;
          int take;
          /* Taps (0,1), (1,0), (1,1) after (0,0); NaN wins and sticks. */
#define PK_QUAD_TAP(val, at)                                                                       \
  v = (val);                                                                                       \
  take = (v > m) | ((v != v) & (m == m));                                                          \
  m = take ? v : m;                                                                                \
  best = take ? (at) : best;
          PK_QUAD_TAP(r0[c + iws], i0 + 2 * ow + 1)
          PK_QUAD_TAP(r1[c], i1 + 2 * ow)
          PK_QUAD_TAP(r1[c + iws], i1 + 2 * ow + 1)
#undef PK_QUAD_TAP
          y[oh * ohs + ow * ows] = m;
          xo[oh * xhs + ow * xws] = best;
        }
      }
      continue;
    }
    for (int64_t oh = 0; oh < pp->oh; ++oh) {
      int64_t h0 = oh * s[0] - pad[0];
      for (int64_t ow = 0; ow < pp->ow; ++ow) {
        int64_t w0 = ow * s[1] - pad[1], kh, kw, best = -1;
        double m = -INFINITY;
        for (kh = 0; kh < k[0]; ++kh) {
          int64_t h = h0 + kh * dil[0];
          if (h < 0 || h >= pp->ih) continue;
          for (kw = 0; kw < k[1]; ++kw) {
            int64_t w = w0 + kw * dil[1];
            if (w < 0 || w >= pp->iw) continue;
            int64_t off = ib + h * ihs + w * iws;
            double v = f32 ? (double)((const float*)in->data)[off]
                           : pterun_load_f64(in->data, in->dtype, off);
            /* NaN wins and sticks, as in ATen; | rather than || keeps the
             * selects free of branches. */
            int take = (best < 0) | (v > m) | ((v != v) & (m == m));
            m = take ? v : m;
            best = take ? h * pp->iw + w : best;
          }
        }
        if (f32) {
          ((float*)out->data)[ob + oh * ohs + ow * ows] = (float)m;
          xo[oh * xhs + ow * xws] = best;
          continue;
        }
        if (pterun_dtype_is_float(out->dtype))
          pterun_store_f64(out->data, out->dtype, ob + oh * ohs + ow * ows, m);
        else
          pterun_store_i64(out->data, out->dtype, ob + oh * ohs + ow * ows,
                           pterun_load_i64(in->data, in->dtype,
                                           ib + (best / pp->iw) * ihs + (best % pp->iw) * iws));
        xo[oh * xhs + ow * xws] = best;
      }
    }
  }
}

/* Output rows [start, start + count) of batch x out_h of a float32 max pool
 * whose input and output are channels-last (the layout pass's chains): each
 * tap of an output pixel's window is a row of C contiguous channels. The
 * window's taps inside the input in (kh, kw) order, per channel the first
 * maximum, NaN winning and sticking: the planes loop's taps, order and rule
 * (a window with no tap inside gives -inf at index -1, as there). */
#define MAXPOOL_CL_ROW 2048 /* int64 indices staged per output row */
#define MAXPOOL_CL_BLOCK 64 /* channels per compare-and-select pass */
#define MAXPOOL_CL_TAPS 64  /* window taps this loop holds */
static void maxpool_rows_cl(void* ctx, size_t start, size_t count) {
  const maxpool_job* j = ctx;
  const plane* pp = j->p;
  const pterun_tensor *in = j->in, *out = j->out, *idx = j->idx;
  const int64_t C = pp->c;
  const float* x = in->data;
  float* y = out->data;
  int64_t* xo = idx->data;
  /* The indices keep their layout (NCHW: a channel's row is contiguous):
   * a row's indices are gathered here, then written a channel row at a
   * time, not one element per channel row (4 KiB apart: the stores alias). */
  int64_t rowbuf[MAXPOOL_CL_ROW];
  const int staged = C * pp->ow <= MAXPOOL_CL_ROW && idx->strides[3] == 1;
  for (int64_t r = (int64_t)start; r < (int64_t)(start + count); ++r) {
    const int64_t n = r / pp->oh, oh = r % pp->oh, h0 = oh * j->s[0] - j->pad[0];
    const float* img = x + n * in->strides[0];
    for (int64_t ow = 0; ow < pp->ow; ++ow) {
      const int64_t w0 = ow * j->s[1] - j->pad[1];
      /* the window's taps inside the input: their rows and flat indices */
      const float* src[MAXPOOL_CL_TAPS];
      int64_t at[MAXPOOL_CL_TAPS];
      int nt = 0;
      for (int64_t kh = 0; kh < j->k[0]; ++kh) {
        const int64_t h = h0 + kh * j->dil[0];
        if (h < 0 || h >= pp->ih) continue;
        for (int64_t kw = 0; kw < j->k[1]; ++kw) {
          const int64_t w = w0 + kw * j->dil[1];
          if (w < 0 || w >= pp->iw) continue;
          src[nt] = img + h * in->strides[2] + w * in->strides[3];
          at[nt++] = h * pp->iw + w;
        }
      }
      float* yo = y + n * out->strides[0] + oh * out->strides[2] + ow * out->strides[3];
      int64_t* io = xo + n * idx->strides[0] + oh * idx->strides[2] + ow * idx->strides[3];
      /* per channel block: the maximum and which tap holds it (the compute
       * library's vectors), then the indices */
      for (int64_t c0 = 0; c0 < C; c0 += MAXPOOL_CL_BLOCK) {
        const int64_t nb = C - c0 < MAXPOOL_CL_BLOCK ? C - c0 : MAXPOOL_CL_BLOCK;
        int32_t tap[MAXPOOL_CL_BLOCK];
        if (nt > 0) {
          pterun_compute_f32_max_rows(src, (size_t)nt, (size_t)c0, (size_t)nb, yo + c0, tap);
        } else {
          for (int64_t c = 0; c < nb; ++c) yo[c0 + c] = -INFINITY;
        }
        for (int64_t c = 0; c < nb; ++c) {
          const int64_t best = nt > 0 ? at[tap[c]] : -1;
          if (staged)
            rowbuf[(c0 + c) * pp->ow + ow] = best;
          else
            io[(c0 + c) * idx->strides[1]] = best;
        }
      }
    }
    if (staged)
      for (int64_t c = 0; c < C; ++c)
        memcpy(xo + n * idx->strides[0] + c * idx->strides[1] + oh * idx->strides[2],
               rowbuf + c * pp->ow, (size_t)pp->ow * sizeof(int64_t));
  }
}

/* aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
 *   int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
 *   Tensor(b!) indices) */
PTERUN_KERNEL(pk_max_pool2d_with_indices_out) {
  pterun_tensor *in, *out, *idx;
  bool ceil_mode;
  int64_t k[2], s[2], pad[2], dil[2];
  plane p = {0, 0, 0, 0, 0, 0, 0};
  PTERUN_CHECK_NARGS(ctx, nargs, 9);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pk_arg_bool(ctx, args, 5, "ceil_mode", &ceil_mode));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 6, "out", &out));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "indices", &idx));
  PTERUN_TRY(pk_check_real(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  if (idx->dtype != PTERUN_DTYPE_I64)
    return PTERUN_FAIL_ARG(ctx, "arg 'indices': expected int64, got %s",
                           pterun_dtype_name(idx->dtype));
  PTERUN_TRY(plane_setup(ctx, in, &p));
  PTERUN_TRY(pool_params(ctx, args, 1, ceil_mode, &p, k, s, pad, dil));
  PTERUN_TRY(plane_resize(ctx, in, out, &p));
  PTERUN_TRY(plane_resize(ctx, in, idx, &p));
  maxpool_job job = {
      &p, in, out, idx, {k[0], k[1]}, {s[0], s[1]}, {pad[0], pad[1]}, {dil[0], dil[1]}};
  /* ~0.3 ns a tap on one thread (the pool's split rule); every output is
   * computed alone: the same bytes for any split */
  const int64_t work = p.planes * p.oh * p.ow * k[0] * k[1];
  if (in->dtype == PTERUN_DTYPE_F32 && in->rank == 4 && k[0] * k[1] <= MAXPOOL_CL_TAPS &&
      pterun_is_channels_last4(in) && out->strides[1] == 1 && out->strides[3] == p.c) {
    /* channels-last (the layout pass's chains): rows of channels, output
     * rows over the pool */
    pterun_parallelize_1d_tile(work >= 65536 ? pterun_kernel_threadpool(ctx) : NULL,
                               maxpool_rows_cl, &job, (size_t)(in->sizes[0] * p.oh), 1,
                               PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                                   PTERUN_PARALLEL_WORK_NS(work * 3 / 10));
    return PTERUN_STATUS_OK;
  }
  /* Planes over the pool when there is enough work. */
  /* ~0.3 ns a tap on one thread (the pool's split rule) */
  pterun_parallelize_1d_tile(work >= 65536 ? pterun_kernel_threadpool(ctx) : NULL, maxpool_planes,
                             &job, (size_t)p.planes, 1,
                             PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                                 PTERUN_PARALLEL_WORK_NS(work * 3 / 10));
  return PTERUN_STATUS_OK;
}

/* aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) */
PTERUN_KERNEL(pk__adaptive_avg_pool2d_out) {
  pterun_tensor *in, *out;
  int64_t osz[2], q, oh, ow;
  plane p = {0, 0, 0, 0, 0, 0, 0};
  int r;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pk_check_float(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, in, "self"));
  PTERUN_TRY(plane_setup(ctx, in, &p));
  PTERUN_TRY(pk_arg_int_n(ctx, args, 1, "output_size", 2, NULL, osz));
  if (osz[0] < 0 || osz[1] < 0) return PTERUN_FAIL_ARG(ctx, "arg 'output_size': negative size");
  if (p.ih == 0 || p.iw == 0) return PTERUN_FAIL_ARG(ctx, "arg 'self': empty spatial dims");
  p.oh = osz[0];
  p.ow = osz[1];
  PTERUN_TRY(plane_resize(ctx, in, out, &p));
  r = in->rank;
  for (q = 0; q < p.planes; ++q) {
    int64_t ib = plane_base(&p, in, q), ob = plane_base(&p, out, q);
    for (oh = 0; oh < p.oh; ++oh) {
      /* Window [floor(o*in/out), ceil((o+1)*in/out)). */
      int64_t h0 = oh * p.ih / p.oh, h1 = ((oh + 1) * p.ih + p.oh - 1) / p.oh;
      for (ow = 0; ow < p.ow; ++ow) {
        int64_t w0 = ow * p.iw / p.ow, w1 = ((ow + 1) * p.iw + p.ow - 1) / p.ow, h, w;
        double sum = 0.0;
        for (h = h0; h < h1; ++h)
          for (w = w0; w < w1; ++w)
            sum += pterun_load_f64(in->data, in->dtype,
                                   ib + h * in->strides[r - 2] + w * in->strides[r - 1]);
        pterun_store_f64(out->data, out->dtype,
                         ob + oh * out->strides[r - 2] + ow * out->strides[r - 1],
                         sum / (double)((h1 - h0) * (w1 - w0)));
      }
    }
  }
  return PTERUN_STATUS_OK;
}

/* aten::max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self,
 *   int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode,
 *   Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
 * grad_input (shaped like self) is zero except where indices point: there it
 * accumulates grad_output. */
PTERUN_KERNEL(pk_max_pool2d_with_indices_backward_grad_input) {
  pterun_tensor *go, *in, *idx, *gi;
  bool ceil_mode;
  int64_t k[2], s[2], pad[2], dil[2], q, oh, ow, d;
  plane p = {0, 0, 0, 0, 0, 0, 0};
  int r;
  PTERUN_CHECK_NARGS(ctx, nargs, 10);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "grad_output", &go));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "self", &in));
  PTERUN_TRY(pk_arg_bool(ctx, args, 6, "ceil_mode", &ceil_mode));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 7, "indices", &idx));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 8, "grad_input", &gi));
  PTERUN_TRY(pk_check_float(ctx, in, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", go, "grad_output"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "self", gi, "grad_input"));
  if (idx->dtype != PTERUN_DTYPE_I64)
    return PTERUN_FAIL_ARG(ctx, "arg 'indices': expected int64, got %s",
                           pterun_dtype_name(idx->dtype));
  PTERUN_TRY(plane_setup(ctx, in, &p));
  /* pool_params reads kernel_size/stride/padding/dilation at args 2..5. */
  PTERUN_TRY(pool_params(ctx, args + 1, 1, ceil_mode, &p, k, s, pad, dil));
  r = in->rank;
  if (go->rank != r || idx->rank != r)
    return PTERUN_FAIL_ARG(ctx, "args 'grad_output'/'indices': expected rank %d", r);
  for (d = 0; d < r; ++d) {
    int64_t want = d == r - 2 ? p.oh : d == r - 1 ? p.ow : in->sizes[d];
    if (go->sizes[d] != want || idx->sizes[d] != want)
      return PTERUN_FAIL_ARG(ctx, "args 'grad_output'/'indices': size at dim %d is not %" PRId64,
                             (int)d, want);
  }
  PTERUN_TRY(pterun_check_data(ctx, go, "grad_output"));
  PTERUN_TRY(pterun_check_data(ctx, idx, "indices"));
  PTERUN_TRY(pterun_out_resize_like(ctx, gi, "grad_input", in));
  for (q = 0; q < gi->numel; ++q) pterun_store_f64(gi->data, gi->dtype, q, 0.0);
  for (q = 0; q < p.planes; ++q) {
    int64_t gb = plane_base(&p, go, q), xb = plane_base(&p, idx, q), ib = plane_base(&p, gi, q);
    for (oh = 0; oh < p.oh; ++oh)
      for (ow = 0; ow < p.ow; ++ow) {
        int64_t at =
            ((const int64_t*)idx->data)[xb + oh * idx->strides[r - 2] + ow * idx->strides[r - 1]];
        int64_t off;
        if (at < 0 || at >= p.ih * p.iw)
          return PTERUN_FAIL_ARG(
              ctx, "arg 'indices': %" PRId64 " is outside the %" PRId64 "x%" PRId64 " input plane",
              at, p.ih, p.iw);
        off = ib + (at / p.iw) * gi->strides[r - 2] + (at % p.iw) * gi->strides[r - 1];
        pterun_store_f64(
            gi->data, gi->dtype, off,
            pterun_load_f64(gi->data, gi->dtype, off) +
                pterun_load_f64(go->data, go->dtype,
                                gb + oh * go->strides[r - 2] + ow * go->strides[r - 1]));
      }
  }
  return PTERUN_STATUS_OK;
}
