/* The float32 convolution GEMM over a flat grid of the padded image's phase
 * planes (the im2col path, im2col.c, takes it where the geometry allows).
 *
 * Split the zero-padded image into stride phases: phase (ph, pw) of a
 * channel is the plane P[y][x] = padded[y * sh + ph][x * sw + pw], Hq x Wq.
 * Tap (kh, kw) of output (oh, ow) reads padded[oh * sh + kh * dh][ow * sw +
 * kw * dw] = P(kh*dh % sh, kw*dw % sw)[oh + kh*dh / sh][ow + kw*dw / sw]: a
 * unit step in ow whatever the stride. Over an extended output grid of OH
 * rows of Wq columns (the OW real ones, then (KW - 1) * dw / sw computed and
 * dropped), every row of the column matrix is one contiguous run of the
 * phase planes at a fixed offset, so a B strip is one fixed-width copy per
 * reduction row, whatever the plane's width, instead of runs cut at every
 * output row and border (col_pack_b). The price: one pass splitting the
 * input into its phases, the extra columns in the product, and one pass
 * moving the real columns to out. */
#include "kernels/portable/conv/conv.h"
#include "kernels/portable/conv/strip_copy.h"

/* Extra strips of the extended grid the flat path accepts (measured on a
 * CIFAR ResNet, AVX-512: 16x16 outputs at +12.5 % ran 25-30 % faster than
 * the cut runs, 8x8 ones at +50 % the same or slower), counting strips of
 * NN_FLAT_NR columns (the widest microkernel's). */
#define NN_FLAT_EXTRA_NUM 1
#define NN_FLAT_EXTRA_DEN 8
#define NN_FLAT_NR 32
#define NN_FLAT_SLACK 64                   /* floats past the last plane: the widest strip */
#define NN_FLAT_MAX_DIM (INT64_C(1) << 20) /* per plane dim */

/* Columns of the product: the extended grid's OH x wq, or for one output
 * row its OW real ones (the row never wraps into the next). */
static int64_t pk_flat_columns(const int64_t out[3], const pk_flat_geom* fg) {
  return out[1] == 1 ? out[2] : out[1] * fg->wq;
}

/* Whether a forward float32 convolution takes the flat path: 1-D or 2-D,
 * strides up to NN_FLAT_MAX_STRIDE, at most NN_FLAT_EXTRA of extra strips,
 * and not a 1x1 kernel (each input element is read once: the phase pass
 * would only add work). One output row (a 1-D convolution) computes only
 * its real columns, straight into out where its rows are dense: the GEMM
 * reads each reduction row in place from the padded copy, a copy of the
 * input instead of packing kernel-width times as many strips. */
int pk_flat_geometry(int64_t id, const int64_t stride[3], const int64_t k[3], const int64_t dil[3],
                     const int64_t out[3], pk_flat_geom* fg) {
  const int64_t sh = stride[1], sw = stride[2];
  if (k[0] != 1 || id != 1 || out[0] != 1 || sh > NN_FLAT_MAX_STRIDE || sw > NN_FLAT_MAX_STRIDE ||
      (k[1] == 1 && k[2] == 1))
    return 0;
  if (k[1] > INT32_MAX || k[2] > INT32_MAX || dil[1] > INT32_MAX || dil[2] > INT32_MAX) return 0;
  /* Hostile dilations: the planes must stay far from int64 overflow (the
   * arena then simply cannot hold them). */
  if ((k[1] - 1) * dil[1] / sh > NN_FLAT_MAX_DIM || (k[2] - 1) * dil[2] / sw > NN_FLAT_MAX_DIM ||
      out[1] > NN_FLAT_MAX_DIM || out[2] > NN_FLAT_MAX_DIM)
    return 0;
  fg->hq = out[1] + (k[1] - 1) * dil[1] / sh;
  fg->wq = out[2] + (k[2] - 1) * dil[2] / sw;
  /* Columns the product computes, in strips of the widest microkernel: */
  const int64_t cols_flat = (pk_flat_columns(out, fg) + NN_FLAT_NR - 1) / NN_FLAT_NR,
                cols_real = (out[1] * out[2] + NN_FLAT_NR - 1) / NN_FLAT_NR;
  if (cols_flat * NN_FLAT_EXTRA_DEN > cols_real * (NN_FLAT_EXTRA_DEN + NN_FLAT_EXTRA_NUM)) return 0;
  for (int q = 0; q < NN_FLAT_MAX_STRIDE; ++q) fg->mh[q] = fg->mw[q] = -1;
  for (int64_t t = 0; t < k[1]; ++t) fg->mh[t * dil[1] % sh] = 0;
  for (int64_t t = 0; t < k[2]; ++t) fg->mw[t * dil[2] % sw] = 0;
  fg->nph = fg->npw = 0;
  for (int q = 0; q < NN_FLAT_MAX_STRIDE; ++q) {
    if (fg->mh[q] == 0) fg->mh[q] = (int8_t)fg->nph++;
    if (fg->mw[q] == 0) fg->mw[q] = (int8_t)fg->npw++;
  }
  return 1;
}

/* Floats of one channel's phase planes, and of the scratch the flat path
 * takes for one (batch, group) product: the planes with their slack, then
 * the extended output. */
static int64_t flat_channel(const pk_flat_geom* fg) {
  return fg->nph * fg->npw * fg->hq * fg->wq;
}
size_t pk_flat_floats(int64_t icpg, int64_t ocpg, const pk_flat_geom* fg, int64_t oh) {
  /* Plane dims below 2^21 (flat_geometry): only the channel counts can
   * overflow; SIZE_MAX then, which no arena holds. */
  const int64_t lim = INT64_C(1) << 40;
  if (icpg > lim / flat_channel(fg) || ocpg > lim / (oh * fg->wq)) return SIZE_MAX / sizeof(float);
  return (size_t)(icpg * flat_channel(fg) + fg->wq + NN_FLAT_SLACK) + (size_t)(ocpg * oh * fg->wq) +
         32;
}

typedef struct flat_packer {
  const float* xp;    /* the phase planes of the product's group */
  const int64_t* off; /* every reduction row's offset into them */
} flat_packer;

static void flat_pack_b(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                        int64_t nr) {
  const flat_packer* fp = ctx;
  /* A last strip narrower than nr copies nr too (the slack past the planes
   * keeps it inside): its extra columns are never stored. */
  for (int64_t js = 0; js < nc; js += nr) {
    float* strip = dst + js * kc;
    const float* src = fp->xp + j0 + js;
    for (int64_t kk = 0; kk < kc; ++kk) copy_strip(strip + kk * nr, src + fp->off[k0 + kk], nr);
  }
}

/* The phase split and the move of the real columns to out, over channels. */
typedef struct flat_job {
  const conv_geom* g;
  const pk_flat_geom* fg;
  const float* x; /* batch n, first channel of the group */
  float* xp;
  float* cext;
  float* out; /* batch n, first output channel of the group */
  int64_t ocs;
  int64_t next; /* the product's columns: cext's channel stride */
} flat_job;

/* Stride-2 phase rows (ph, 0) and (ph, 1) of one channel, an even left
 * padding and dense input rows: plane column x of phase pw reads input
 * column 2x + pw - pad. */
static void flat_pad_pairs(const flat_job* j, const float* s, int64_t ph, float* d0) {
  const conv_geom* g = j->g;
  const int64_t IH = g->in[1], IW = g->in[2], hq = j->fg->hq, wq = j->fg->wq;
  const int64_t q0 = g->pad[2] / 2; /* plane columns before the image */
  float* d1 = d0 + hq * wq;
  /* Input columns 2 * (x - q0) and 2 * (x - q0) + 1, both inside for x in
   * [q0, q0 + IW / 2); an odd IW leaves one more even one. */
  int64_t full = IW / 2;
  if (q0 + full > wq) full = wq > q0 ? wq - q0 : 0;
  for (int64_t y = 0; y < hq; ++y) {
    float *e = d0 + y * wq, *o = d1 + y * wq;
    const int64_t ih = y * 2 + ph - g->pad[1];
    for (int64_t x = 0; x < wq; ++x) e[x] = o[x] = 0.0f;
    if (ih < 0 || ih >= IH) continue;
    const float* sr = s + ih * g->is[3];
    for (int64_t x = 0; x < full; ++x) {
      e[q0 + x] = sr[2 * x];
      o[q0 + x] = sr[2 * x + 1];
    }
    if (IW % 2 == 1 && q0 + full < wq && full == IW / 2) e[q0 + full] = sr[IW - 1];
  }
}

static void flat_pad_task(void* ctx, size_t start, size_t count) {
  const flat_job* j = ctx;
  const conv_geom* g = j->g;
  const pk_flat_geom* fg = j->fg;
  const int64_t IH = g->in[1], IW = g->in[2], sh = g->stride[1], sw = g->stride[2];
  const int64_t hq = fg->hq, wq = fg->wq, iws = g->is[4];
  /* Stride 2 with both column phases over dense rows: one pass writes both
   * (even and odd columns), each input row read once. */
  const int pairs = sw == 2 && iws == 1 && fg->npw == 2 && g->pad[2] % 2 == 0;
  for (size_t c = start; c < start + count; ++c) {
    const float* s = j->x + (int64_t)c * g->is[1];
    for (int64_t ph = 0; ph < sh; ++ph)
      for (int64_t pw = 0; pw < sw; ++pw) {
        if (fg->mh[ph] < 0 || fg->mw[pw] < 0) continue;
        if (pairs) {
          if (pw == 1) continue; /* written with phase 0 */
          flat_pad_pairs(j, s, ph,
                         j->xp + (int64_t)c * flat_channel(fg) + fg->mh[ph] * 2 * hq * wq);
          continue;
        }
        float* d =
            j->xp + (int64_t)c * flat_channel(fg) + (fg->mh[ph] * fg->npw + fg->mw[pw]) * hq * wq;
        /* Plane column x reads input column x * sw + pw - pad: inside for
         * x in [lo, hi). */
        const int64_t off = pw - g->pad[2];
        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        int64_t hi = IW - off <= 0 ? 0 : (IW - off + sw - 1) / sw;
        if (lo > wq) lo = wq;
        if (hi > wq) hi = wq;
        if (hi < lo) hi = lo;
        for (int64_t y = 0; y < hq; ++y) {
          float* dr = d + y * wq;
          const int64_t ih = y * sh + ph - g->pad[1];
          if (ih < 0 || ih >= IH) {
            for (int64_t x = 0; x < wq; ++x) dr[x] = 0.0f;
            continue;
          }
          const float* sr = s + ih * g->is[3] + off * iws;
          for (int64_t x = 0; x < lo; ++x) dr[x] = 0.0f;
          if (sw == 1 && (iws == 1 || IW == 1))
            memcpy(dr + lo, sr + lo, (size_t)(hi - lo) * sizeof(float));
          else if (sw == 2 && iws == 1)
            for (int64_t x = lo; x < hi; ++x) dr[x] = sr[2 * x];
          else
            for (int64_t x = lo; x < hi; ++x) dr[x] = sr[x * sw * iws];
          for (int64_t x = hi; x < wq; ++x) dr[x] = 0.0f;
        }
      }
  }
}

static void flat_store_task(void* ctx, size_t start, size_t count) {
  const flat_job* j = ctx;
  const conv_geom* g = j->g;
  const int64_t OH = g->out[1], OW = g->out[2], wq = j->fg->wq, ocs = j->ocs;
  for (size_t c = start; c < start + count; ++c) {
    const float* s = j->cext + (int64_t)c * j->next;
    float* d = j->out + (int64_t)c * g->os[1];
    for (int64_t r = 0; r < OH; ++r)
      if (ocs == 1)
        memcpy(d + r * OW, s + r * wq, (size_t)OW * sizeof(float));
      else
        for (int64_t q = 0; q < OW; ++q) d[(r * OW + q) * ocs] = s[r * wq + q];
  }
}

/* Takes the flat path's scratch and fills the row offsets; 0 when the
 * geometry does not take the flat path or the arena cannot hold it. */
int pk_flat_begin(pterun_kernel_context* ctx, const conv_geom* g, const red_order* ro,
                  pk_flat_plan* fl) {
  const pk_flat_geom* fg = &fl->fg;
  if (!pk_flat_geometry(g->in[0], g->stride, g->k, g->dil, g->out, &fl->fg)) return 0;
  const int64_t rows = g->icpg * g->k[1] * g->k[2], plane = fg->hq * fg->wq;
  const int64_t image = g->icpg * flat_channel(fg);
  fl->next = pk_flat_columns(g->out, fg);
  /* Only when the arena also keeps the product's full GEMM blocks after the
   * planes: smaller blocks would split K differently and change the bits
   * (the packer path, which takes a few bytes, gives the flat path's). The
   * method's reservation makes room (pk_convolution_reserve); the default
   * arena of an unprepared method may not. */
  const size_t off_bytes = sizeof(int64_t) * (size_t)rows;
  const size_t flat_bytes = sizeof(float) * pk_flat_floats(g->icpg, g->ocpg, fg, g->out[1]);
  pterun_threadpool* pool = pterun_kernel_threadpool(ctx);
  size_t threads = pool != NULL ? pterun_threadpool_size(pool) : 1;
  const size_t mt = pterun_kernel_max_threads(ctx);
  if (mt != 0 && mt < threads) threads = mt;
  const size_t gemm_bytes =
      pterun_compute_gemm_scratch_bytes(PTERUN_DTYPE_F32, g->ocpg, fl->next, rows, threads);
  const size_t avail = pterun_kernel_scratch_available(ctx, 64);
  if (flat_bytes > avail || off_bytes > avail - flat_bytes ||
      gemm_bytes > avail - flat_bytes - off_bytes ||
      avail - flat_bytes - off_bytes - gemm_bytes < 256)
    return 0;
  fl->off = pterun_kernel_scratch(ctx, off_bytes, 64);
  fl->xp = fl->off != NULL ? pterun_kernel_scratch(ctx, flat_bytes, 64) : NULL;
  if (fl->xp == NULL) return 0;
  fl->cext = fl->xp + ((image + fg->wq + NN_FLAT_SLACK + 15) & ~(int64_t)15);
  const int64_t sh = g->stride[1], sw = g->stride[2];
  int64_t idx[4];
  pk_red_decode(ro, 0, idx);
  for (int64_t r = 0; r < rows; ++r) {
    if (r > 0) /* the next reduction index, in the weight's memory order */
      for (int j = 3; j >= 0 && ++idx[ro->dim[j]] == ro->size[j]; --j) idx[ro->dim[j]] = 0;
    const int64_t th = idx[2] * g->dil[1], tw = idx[3] * g->dil[2];
    fl->off[r] = idx[0] * flat_channel(fg) + (fg->mh[th % sh] * fg->npw + fg->mw[tw % sw]) * plane +
                 th / sh * fg->wq + tw / sw;
  }
  /* The slack: read by the extended grid's last strips, never stored. */
  for (int64_t q = image; q < image + fg->wq + NN_FLAT_SLACK; ++q) fl->xp[q] = 0.0f;
  return 1;
}

/* The products of a float32 convolution on the flat grid: per (batch,
 * group) the phase split, the GEMM into the extended output, the real
 * columns to out. */
void pk_flat_run(pterun_kernel_context* ctx, pterun_compute_gemm_ws* ws, const conv_geom* g,
                 const red_order* ro, int64_t ocs, const pk_flat_plan* fl, const pterun_tensor* in,
                 const pterun_tensor* w, const float* bias_f, pterun_tensor* out,
                 pterun_compute_gemm_opts* last) {
  const int64_t rows = g->icpg * g->k[1] * g->k[2], image = g->icpg * flat_channel(&fl->fg);
  pterun_threadpool* pool = pterun_kernel_threadpool(ctx);
  const uint32_t maxt = PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx));
  for (int64_t n = 0; n < g->n; ++n)
    for (int64_t grp = 0; grp < g->groups; ++grp) {
      flat_job job = {
          g,      &fl->fg,  (const float*)in->data + n * g->is[0] + grp * g->icpg * g->is[1],
          fl->xp, fl->cext, (float*)out->data + n * g->os[0] + grp * g->ocpg * g->os[1],
          ocs,    fl->next};
      /* ~1 ns an element copied (the pool's split rule) */
      pterun_parallelize_1d_tile(image >= 32768 ? pool : NULL, flat_pad_task, &job, (size_t)g->icpg,
                                 1, maxt | PTERUN_PARALLEL_WORK_NS(image));
      flat_packer fp = {fl->xp, fl->off};
      pterun_compute_matrix a = {(float*)w->data + grp * g->ocpg * g->ws[0], w->dtype, g->ws[0],
                                 ro->cs};
      /* One dense output row: the product writes out itself. */
      const int direct = g->out[1] == 1 && ocs == 1;
      pterun_compute_matrix c = {direct ? job.out : fl->cext, PTERUN_DTYPE_F32,
                                 direct ? g->os[1] : fl->next, 1};
      last->k0 = 0;
      last->bias = bias_f != NULL ? bias_f + grp * g->ocpg : NULL;
      last->pack_b = flat_pack_b;
      last->pack_b_ctx = &fp;
      /* Each reduction row is one run of the planes: the f32 engine reads
       * them in place (flat_pack_b's copies, without the copy). */
      last->b_row_base = fl->xp;
      last->b_row_offsets = fl->off;
      pterun_compute_gemm_ex(ws, g->ocpg, fl->next, rows, &a, NULL, &c, 1.0, 0, last);
      if (direct) continue;
      const int64_t moved = g->ocpg * fl->next;
      pterun_parallelize_1d_tile(moved >= 32768 ? pool : NULL, flat_store_task, &job,
                                 (size_t)g->ocpg, 1, maxt | PTERUN_PARALLEL_WORK_NS(moved));
    }
}
