/* The im2col + GEMM path of floating convolutions: the weight's reduction
 * order, the layouts the path takes, the column matrix built in chunks
 * (im2col rows, or B packed straight from the image: col_pack_b), and the
 * blocked GEMM of libpterun_compute with the fused activation. */
#include <inttypes.h>

#include "kernels/portable/conv/conv.h"
#include "kernels/portable/conv/strip_copy.h"

int pk_conv_weight_flattens(const conv_geom* g, red_order* ro) {
  int64_t sz[4] = {g->icpg, g->k[0], g->k[1], g->k[2]};
  int64_t st[4] = {g->ws[1], g->ws[2], g->ws[3], g->ws[4]};
  int j, i, nontrivial = 0;
  for (j = 0; j < 4; ++j) ro->dim[j] = j;
  /* Insertion sort by decreasing stride (size-1 dims sort anywhere). */
  for (j = 1; j < 4; ++j)
    for (i = j; i > 0 && (sz[ro->dim[i - 1]] == 1 ||
                          (sz[ro->dim[i]] != 1 && st[ro->dim[i - 1]] < st[ro->dim[i]]));
         --i) {
      int t = ro->dim[i];
      ro->dim[i] = ro->dim[i - 1];
      ro->dim[i - 1] = t;
    }
  ro->cs = 1;
  for (j = 3; j >= 0; --j) {
    int d = ro->dim[j];
    ro->size[j] = sz[d];
    if (sz[d] == 1) continue;
    if (!nontrivial) {
      ro->cs = st[d];
      nontrivial = 1;
    } else {
      int64_t expect = 1;
      for (i = j + 1; i < 4; ++i) expect *= sz[ro->dim[i]];
      if (st[d] != expect * ro->cs) return 0;
    }
  }
  return 1;
}

/* Out spatial dims flatten to one stride (true for NC(D)HW and channels-last). */
int pk_conv_out_flattens(const conv_geom* g, int64_t* cs) {
  int64_t st = 0, expect = 0;
  int d;
  for (d = 2; d >= 0; --d) {
    if (g->out[d] == 1) continue;
    if (st == 0) {
      st = g->os[2 + d];
      expect = st * g->out[d];
    } else {
      if (g->os[2 + d] != expect) return 0;
      expect *= g->out[d];
    }
  }
  *cs = st ? st : 1;
  return 1;
}

/* A 1x1 convolution with stride 1 and no padding whose input positions
 * flatten to one stride (*ics) and whose dtype the GEMM reads directly: the
 * input can be used as the GEMM's column matrix without im2col. */
int pk_conv_pointwise_input(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* out,
                            int64_t* ics) {
  int64_t st = 0, expect = 0;
  int d;
  for (d = 0; d < 3; ++d)
    if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0) return 0;
  if (in->dtype != out->dtype) return 0;
  for (d = 2; d >= 0; --d) {
    if (g->in[d] == 1) continue;
    if (st == 0) {
      st = g->is[2 + d];
      expect = st * g->in[d];
    } else {
      if (g->is[2 + d] != expect) return 0;
      expect *= g->in[d];
    }
  }
  *ics = st ? st : 1;
  return 1;
}

void pk_red_decode(const red_order* ro, int64_t r, int64_t idx[4]) {
  for (int j = 3; j >= 0; --j) {
    idx[ro->dim[j]] = r % ro->size[j];
    r /= ro->size[j];
  }
}

/* One im2col step: rows [r0, r0 + nr) of the reduction (in the weight's
 * memory order) x output positions [p0, p0 + np) of batch n, group grp,
 * shared by the pool tasks that fill its rows. */
typedef struct im2col_job {
  const conv_geom* g;
  const red_order* ro;
  const pterun_tensor* in;
  void* col;
  int64_t n, grp, p0, np, r0;
  int dbl;
} im2col_job;

/* Fills col rows [start, start + count) of the step (pure copies: any
 * split gives the same matrix). */
static void im2col_rows(void* ctx, size_t start, size_t count) {
  const im2col_job* job = ctx;
  const conv_geom* g = job->g;
  const red_order* ro = job->ro;
  const pterun_tensor* in = job->in;
  void* col = job->col;
  const int64_t n = job->n, grp = job->grp, p0 = job->p0, np = job->np, r0 = job->r0;
  const int dbl = job->dbl;
  for (int64_t r = (int64_t)start; r < (int64_t)(start + count); ++r) {
    int64_t p, idx[4], kd, kh, kw, ic;
    pk_red_decode(ro, r0 + r, idx);
    ic = idx[0], kd = idx[1], kh = idx[2], kw = idx[3];
    {
      /* Walk positions p0.. with incremental (od, oh, ow). */
      int64_t ow = p0 % g->out[2], oh = (p0 / g->out[2]) % g->out[1],
              od = p0 / (g->out[2] * g->out[1]);
      int64_t base = n * g->is[0] + (grp * g->icpg + ic) * g->is[1];
      for (p = 0; p < np; ++p) {
        int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
        int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
        int64_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dil[2];
        int64_t k = r * np + p;
        int inside =
            id >= 0 && id < g->in[0] && ih >= 0 && ih < g->in[1] && iw >= 0 && iw < g->in[2];
        int64_t off = base + id * g->is[2] + ih * g->is[3] + iw * g->is[4];
        if (dbl)
          ((double*)col)[k] = inside ? pterun_load_f64(in->data, in->dtype, off) : 0.0;
        else
          ((float*)col)[k] = inside ? pterun_load_f32(in->data, in->dtype, off) : 0.0f;
        if (++ow == g->out[2]) {
          ow = 0;
          if (++oh == g->out[1]) {
            oh = 0;
            ++od;
          }
        }
      }
    }
  }
}

/* The float32 B packer of one (batch, group) product: the engine's strips
 * of the column matrix, read straight from the image (the column matrix's
 * row r is reduction index r in the weight's memory order, column p output
 * position p; padding reads as zero). */
/* One reduction row of the column matrix: where its taps read. */
typedef struct col_tap {
  int64_t off;        /* input offset of output position 0 (may be outside) */
  int64_t dd, dh;     /* input depth/row = output depth/row * stride + these */
  int64_t lo_w, hi_w; /* output columns whose tap is inside the input */
} col_tap;

typedef struct col_packer {
  const conv_geom* g;
  const red_order* ro;
  const float* x;      /* batch n, first channel of the group */
  const col_tap* taps; /* every reduction row's taps (col_taps), or NULL: per call */
} col_packer;

/* taps[0, count) = reduction rows r0.. */
static void col_taps(const conv_geom* g, const red_order* ro, int64_t r0, int64_t count,
                     col_tap* taps) {
  int64_t idx[4], lo[16], hi[16];
  /* The column range of each kernel column, once (it divides). */
  const int64_t nkw = g->k[2] <= 16 && count > g->k[2] ? g->k[2] : 0;
  for (int64_t kw = 0; kw < nkw; ++kw)
    tap_range(g->in[2], g->out[2], g->stride[2], g->pad[2], kw * g->dil[2], &lo[kw], &hi[kw]);
  pk_red_decode(ro, r0, idx);
  for (int64_t kk = 0; kk < count; ++kk) {
    col_tap* t = &taps[kk];
    if (kk > 0) /* the next reduction index, in the weight's memory order */
      for (int j = 3; j >= 0 && ++idx[ro->dim[j]] == ro->size[j]; --j) idx[ro->dim[j]] = 0;
    t->dd = idx[1] * g->dil[0] - g->pad[0];
    t->dh = idx[2] * g->dil[1] - g->pad[1];
    t->off = idx[0] * g->is[1] + t->dd * g->is[2] + t->dh * g->is[3] +
             (idx[3] * g->dil[2] - g->pad[2]) * g->is[4];
    if (idx[3] < nkw) {
      t->lo_w = lo[idx[3]];
      t->hi_w = hi[idx[3]];
    } else {
      tap_range(g->in[2], g->out[2], g->stride[2], g->pad[2], idx[3] * g->dil[2], &t->lo_w,
                &t->hi_w);
    }
  }
}

/* A run of one strip's columns inside one output row. */
typedef struct col_piece {
  int64_t d0, h0;     /* output depth/row * stride */
  int64_t base;       /* their input offset */
  int64_t ow, len, c; /* output columns [ow, ow + len) -> strip columns c.. */
} col_piece;

#define NN_PACK_ROWS 64 /* reduction rows decoded at once */

/* dst[0, nr) = 0 (fixed sizes, as copy_strip). Copied from zeros rather
 * than memset: GCC expands a 128- or 256-byte memset into `rep stos`, whose
 * start-up cost was a fifth of the packing time of a CIFAR ResNet's border
 * rows; a fixed-size copy becomes plain vector moves. */
static const float kZeros[64];
static inline void zero_strip(float* dst, int64_t nr) {
  switch (nr) {
    case 8: memcpy(dst, kZeros, 8 * sizeof(float)); break;
    case 16: memcpy(dst, kZeros, 16 * sizeof(float)); break;
    case 32: memcpy(dst, kZeros, 32 * sizeof(float)); break;
    case 64: memcpy(dst, kZeros, 64 * sizeof(float)); break;
    default:
      for (int64_t i = 0; i < nr; ++i) dst[i] = 0.0f;
  }
}

/* dv[o - va] = output column o of a tap row for va <= o < vb, all inside
 * the input: input offset src + o * sw (sw: the input column step). */
static inline void col_cols(float* dv, const float* x, int64_t src, int64_t va, int64_t vb,
                            int64_t sw) {
  if (sw == 1)
    copy_f32(dv, x + src + va, vb - va);
  else if (sw == 2) /* a constant stride: the loop vectorises */
    for (int64_t o = va; o < vb; ++o) dv[o - va] = x[src + 2 * o];
  else
    for (int64_t o = va; o < vb; ++o) dv[o - va] = x[src + o * sw];
}

static void col_pack_b(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                       int64_t nr) {
  const col_packer* cp = ctx;
  const conv_geom* g = cp->g;
  const float* x = cp->x;
  const int64_t OW = g->out[2], OH = g->out[1], ID = g->in[0], IH = g->in[1];
  const int64_t sw = g->stride[2] * g->is[4];
  col_tap local[NN_PACK_ROWS];
  col_piece pieces[64]; /* nr <= 64 (PC_F32_NR_MAX) */
  if (nr > 64) return;  /* unreachable: no microkernel is wider */
  for (int64_t r0 = 0; r0 < kc; r0 += NN_PACK_ROWS) {
    const int64_t nrows = kc - r0 < NN_PACK_ROWS ? kc - r0 : NN_PACK_ROWS;
    const col_tap* taps = local;
    if (cp->taps != NULL)
      taps = cp->taps + k0 + r0;
    else
      col_taps(g, cp->ro, k0 + r0, nrows, local);
    for (int64_t js = 0; js < nc; js += nr) {
      /* The strip's columns as runs within output rows, then each row of
       * the strip written contiguously. */
      const int64_t w = nc - js < nr ? nc - js : nr, pos = j0 + js;
      int64_t ow = pos % OW, oh = (pos / OW) % OH, od = pos / (OW * OH), q = 0, np = 0;
      while (q < w) {
        const int64_t len = OW - ow < w - q ? OW - ow : w - q;
        const int64_t d0 = od * g->stride[0], h0 = oh * g->stride[1];
        pieces[np++] = (col_piece){d0, h0, d0 * g->is[2] + h0 * g->is[3], ow, len, q};
        q += len;
        ow = 0;
        if (++oh == OH) {
          oh = 0;
          ++od;
        }
      }
      float* strip = dst + js * kc + r0 * nr;
      const col_piece* p0 = &pieces[0];
      const int64_t e0 = p0->ow + p0->len;
      for (int64_t kk = 0; kk < nrows; ++kk) {
        const col_tap* t = &taps[kk];
        float* d = strip + kk * nr;
        if (np == 1) {
          /* The common case: the strip is one run of an output row. A tap
           * row outside the input is zeros; a run inside is one copy;
           * otherwise zeros, then the valid columns. */
          const int64_t id = p0->d0 + t->dd, ih = p0->h0 + t->dh, src = t->off + p0->base;
          const int64_t va = t->lo_w > p0->ow ? t->lo_w : p0->ow, vb = t->hi_w < e0 ? t->hi_w : e0;
          if (id < 0 || id >= ID || ih < 0 || ih >= IH || vb <= va) {
            zero_strip(d, nr);
            continue;
          }
          if (sw == 1 && va == p0->ow && vb == e0 && w == nr) {
            copy_strip(d, x + src + va, nr);
            continue;
          }
          zero_strip(d, nr);
          col_cols(d + (va - p0->ow), x, src, va, vb, sw);
          continue;
        }
        for (int64_t i = 0; i < np; ++i) {
          const col_piece* pc = &pieces[i];
          const int64_t id = pc->d0 + t->dd, ih = pc->h0 + t->dh, e = pc->ow + pc->len;
          float* dc = d + pc->c; /* dc[o - ow]: output column o */
          int64_t va = t->lo_w > pc->ow ? t->lo_w : pc->ow, vb = t->hi_w < e ? t->hi_w : e, o;
          if (id < 0 || id >= ID || ih < 0 || ih >= IH || vb < va) va = vb = e;
          for (o = pc->ow; o < va; ++o) dc[o - pc->ow] = 0.0f;
          if (va < vb) col_cols(dc + (va - pc->ow), x, t->off + pc->base, va, vb, sw);
          for (o = vb; o < e; ++o) dc[o - pc->ow] = 0.0f;
        }
        for (int64_t c = w; c < nr; ++c) d[c] = 0.0f;
      }
    }
  }
}

#define NN_COL_LOCAL 4096 /* elements of the stack im2col buffer */
#define NN_COL_SCRATCH (256 * 1024)

/* GEMM for one forward floating convolution: float32 packs the GEMM's B
 * strips from the image (col_pack_b), one product per (batch, group); other
 * dtypes fill an im2col buffer in chunks. */
void pk_conv_gemm(pterun_kernel_context* ctx, const conv_geom* g, const red_order* ro, int64_t ocs,
                  const pterun_tensor* in, const pterun_tensor* w, const pterun_tensor* bias,
                  pterun_tensor* out, const pterun_compute_gemm_opts* act) {
  _Alignas(64) float local[NN_COL_LOCAL];
  pterun_compute_gemm_ws ws;
  int dbl = out->dtype == PTERUN_DTYPE_F64;
  size_t es = dbl ? sizeof(double) : sizeof(float);
  int64_t cap = NN_COL_SCRATCH, rows = g->icpg * g->k[0] * g->k[1] * g->k[2];
  int64_t npos = g->out[0] * g->out[1] * g->out[2], rc, pc, n, grp, r0, p0, ics;
  /* float32 needs no column buffer: the products pack B themselves; nor does
   * a 1x1 convolution, whose input is the column matrix. */
  const int pointwise = pk_conv_pointwise_input(g, in, out, &ics);
  const int packer = out->dtype == PTERUN_DTYPE_F32 && !pointwise;
  void* col = packer || pointwise ? local : pterun_kernel_scratch(ctx, (size_t)cap * es, 64);
  if (col == NULL) {
    pterun_kernel_note_slow_path(ctx, "no scratch: im2col in 16 KiB chunks");
    col = local;
    cap = NN_COL_LOCAL * (int64_t)sizeof(float) / (int64_t)es;
  }
  /* float32: the first product of each output block stores (no
   * accumulate) and adds the bias in its epilogue, so no pass fills the
   * output first; other dtypes start from the bias (or zero) and every
   * product accumulates. */
  const int fill =
      out->dtype != PTERUN_DTYPE_F32 ||
      (bias != NULL && (bias->dtype != PTERUN_DTYPE_F32 || (bias->strides[0] != 1 && g->cout > 1)));
  /* Unit strides: the flat grid, else the rows' taps, decoded once (the
   * engine packs a strip at a time); either before the GEMM's blocks take
   * the rest (pk_convolution_reserve's order). */
  pk_flat_plan fl;
  memset(&fl, 0, sizeof fl);
  const int flat = packer && !fill && pk_flat_begin(ctx, g, ro, &fl);
  col_tap* taps =
      packer && !flat ? pterun_kernel_scratch(ctx, sizeof(col_tap) * (size_t)rows, 64) : NULL;
  pterun_compute_gemm_init(ctx, &ws, out->dtype);
  /* The weight packed at load (groups == 1), and what every product gets:
   * the activation goes with the last chunk of the reduction only. */
  pterun_compute_gemm_opts mid = PTERUN_COMPUTE_GEMM_OPTS_INIT,
                           last = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  if (g->groups == 1) mid.packed_a = pk_prepacked_for(ctx, w, g->ocpg, rows);
  if (act != NULL) last = *act;
  last.packed_a = mid.packed_a;
  /* Chunk: the GEMM's own K block (so a packed weight's blocks line up and
   * packed and unpacked products add in the same order; at most 256 rows),
   * then as many positions as fit. */
  rc = dbl ? (rows < 256 ? rows : 256) : pterun_compute_gemm_k_block(&ws, g->ocpg, rows);
  pc = cap / rc;
  if (pc > npos) pc = npos;
  const float* bias_f = !fill && bias != NULL ? (const float*)bias->data : NULL;
  for (n = 0; n < g->n && fill; ++n) {
    int64_t oc, p;
    for (oc = 0; oc < g->cout; ++oc) {
      double b = bias ? pterun_load_f64(bias->data, bias->dtype, oc * bias->strides[0]) : 0.0;
      int64_t base = n * g->os[0] + oc * g->os[1];
      if (out->dtype == PTERUN_DTYPE_F32) {
        float* o = (float*)out->data + base;
        for (p = 0; p < npos; ++p) o[p * ocs] = (float)b;
      } else {
        for (p = 0; p < npos; ++p) pterun_store_f64(out->data, out->dtype, base + p * ocs, b);
      }
    }
  }
  if (pointwise) {
    /* 1x1, stride 1, no padding: the input is already the column matrix. */
    for (n = 0; n < g->n; ++n)
      for (grp = 0; grp < g->groups; ++grp) {
        pterun_compute_matrix a, b, c;
        a.data = (char*)w->data + (size_t)(grp * g->ocpg * g->ws[0]) * pterun_dtype_size(w->dtype);
        a.dtype = w->dtype;
        a.rs = g->ws[0];
        a.cs = ro->cs;
        b.data = (char*)in->data +
                 (size_t)(n * g->is[0] + grp * g->icpg * g->is[1]) * pterun_dtype_size(in->dtype);
        b.dtype = in->dtype;
        b.rs = g->is[1];
        b.cs = ics;
        c.data = (char*)out->data +
                 (size_t)(n * g->os[0] + grp * g->ocpg * g->os[1]) * pterun_dtype_size(out->dtype);
        c.dtype = out->dtype;
        c.rs = g->os[1];
        c.cs = ocs;
        last.bias = bias_f != NULL ? bias_f + grp * g->ocpg : NULL;
        pterun_compute_gemm_ex(&ws, g->ocpg, npos, rows, &a, &b, &c, 1.0, fill, &last);
      }
    return;
  }
  if (flat) {
    pk_flat_run(ctx, &ws, g, ro, ocs, &fl, in, w, bias_f, out, &last);
    return;
  }
  if (packer) {
    /* The same K blocks (rc, fixed by a packed weight or equal to what the
     * chunks below use) and per-element sums as the im2col path. */
    if (taps != NULL) col_taps(g, ro, 0, rows, taps);
    for (n = 0; n < g->n; ++n)
      for (grp = 0; grp < g->groups; ++grp) {
        col_packer cp = {g, ro, (const float*)in->data + n * g->is[0] + grp * g->icpg * g->is[1],
                         taps};
        pterun_compute_matrix a = {(float*)w->data + grp * g->ocpg * g->ws[0], w->dtype, g->ws[0],
                                   ro->cs};
        pterun_compute_matrix c = {(float*)out->data + n * g->os[0] + grp * g->ocpg * g->os[1],
                                   out->dtype, g->os[1], ocs};
        last.k0 = 0;
        last.bias = bias_f != NULL ? bias_f + grp * g->ocpg : NULL;
        last.pack_b = col_pack_b;
        last.pack_b_ctx = &cp;
        pterun_compute_gemm_ex(&ws, g->ocpg, npos, rows, &a, NULL, &c, 1.0, fill, &last);
      }
    return;
  }
  for (n = 0; n < g->n; ++n)
    for (grp = 0; grp < g->groups; ++grp)
      for (p0 = 0; p0 < npos; p0 += pc) {
        int64_t np = npos - p0 < pc ? npos - p0 : pc;
        for (r0 = 0; r0 < rows; r0 += rc) {
          int64_t nr = rows - r0 < rc ? rows - r0 : rc;
          pterun_compute_matrix a, b, c;
          im2col_job ij = {g, ro, in, col, n, grp, p0, np, r0, dbl};
          /* Rows over the pool when the copy is big enough to pay for it. */
          size_t rtile = np >= 8192 ? 1 : (size_t)(8192 / np);
          /* ~0.5 ns an element on one thread (the pool's split rule) */
          pterun_parallelize_1d_tile(nr * np >= 32768 ? pterun_kernel_threadpool(ctx) : NULL,
                                     im2col_rows, &ij, (size_t)nr, rtile,
                                     PTERUN_PARALLEL_MAX_THREADS(pterun_kernel_max_threads(ctx)) |
                                         PTERUN_PARALLEL_WORK_NS(nr * np / 2));
          a.data = (char*)w->data +
                   (size_t)(grp * g->ocpg * g->ws[0] + r0 * ro->cs) * pterun_dtype_size(w->dtype);
          a.dtype = w->dtype;
          a.rs = g->ws[0];
          a.cs = ro->cs;
          b.data = col;
          b.dtype = dbl ? PTERUN_DTYPE_F64 : PTERUN_DTYPE_F32;
          b.rs = np;
          b.cs = 1;
          c.data = (char*)out->data + (size_t)(n * g->os[0] + grp * g->ocpg * g->os[1] + p0 * ocs) *
                                          pterun_dtype_size(out->dtype);
          c.dtype = out->dtype;
          c.rs = g->os[1];
          c.cs = ocs;
          pterun_compute_gemm_opts* x = r0 + nr == rows ? &last : &mid;
          x->k0 = r0;
          x->bias = bias_f != NULL && r0 == 0 ? bias_f + grp * g->ocpg : NULL;
          pterun_compute_gemm_ex(&ws, g->ocpg, np, nr, &a, &b, &c, 1.0, fill || r0 > 0, x);
        }
      }
}

/* An int[] argument (one value or one per spatial dim) into 3 slots; 0 if
 * it is not such a list. */
static int spatial3(pterun_value* v, int sp, int64_t fill, int64_t out[3]) {
  size_t len;
  const int64_t* x = pterun_value_int_list(v, &len);
  if (x == NULL || (len != 1 && len != (size_t)sp)) return 0;
  for (int d = 0; d < 3; ++d) out[d] = d < 3 - sp ? fill : x[len == 1 ? 0 : d - (3 - sp)];
  return 1;
}

/* Load time: the scratch pk_conv_gemm asks for (an im2col buffer, or the taps
 * of float32's strip packer, then the GEMM's blocks for the largest product
 * of a group), reserved for any floating forward convolution, and a narrow
 * float32 depthwise one's NHWC copies: the other depthwise and the
 * small-channel paths take none, but a reservation that is too big only
 * sizes the arena, never slows a call. */
void pk_convolution_reserve(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            size_t want, size_t iout) {
  if (nargs != want || args[0]->tag != PTERUN_VALUE_TENSOR || args[1]->tag != PTERUN_VALUE_TENSOR ||
      args[iout]->tag != PTERUN_VALUE_TENSOR || args[6]->tag != PTERUN_VALUE_BOOL || args[6]->u.b ||
      args[8]->tag != PTERUN_VALUE_INT || args[8]->u.i < 1)
    return;
  const pterun_tensor *w = args[1]->u.tensor, *out = args[iout]->u.tensor;
  if (!pterun_dtype_is_float(out->dtype) || w->rank < 3 || w->rank > 5 || out->rank != w->rank)
    return;
  int64_t rows = w->sizes[1], npos = 1, ocpg = w->sizes[0] / args[8]->u.i;
  for (uint32_t d = 2; d < w->rank; ++d) {
    rows *= w->sizes[d];
    npos *= out->sizes[d];
  }
  if (rows <= 0 || npos <= 0 || ocpg <= 0) return;
  const pterun_tensor* in = args[0]->u.tensor;
  const int in_cl = pterun_is_channels_last4(in), out_cl = pterun_is_channels_last4(out);
  if (out->dtype == PTERUN_DTYPE_F32 && w->rank == 4 && in->rank == 4 && w->sizes[1] == 1 &&
      ocpg == 1 && args[8]->u.i == in->sizes[1])
    pterun_kernel_scratch_reserve(
        ctx, sizeof(float) *
                 (in_cl || out_cl
                      ? pk_conv_depthwise_cl_floats(in_cl, out_cl, in->sizes[0], in->sizes[1],
                                                    in->sizes[2], in->sizes[3], out->sizes[2],
                                                    out->sizes[3], w->sizes[2], w->sizes[3])
                      : pk_conv_depthwise_nhwc_floats(in->sizes[0], in->sizes[1], in->sizes[2],
                                                      in->sizes[3], out->sizes[2], out->sizes[3],
                                                      w->sizes[2], w->sizes[3])));
  if (in_cl && out_cl && args[8]->u.i == 1 && w->rank == 4) /* maybe the channels-last 1x1 GEMM */
    pterun_compute_gemm_reserve(ctx, out->dtype, npos * out->sizes[0], w->sizes[0], rows);
  int64_t pad3[3];
  if (args[8]->u.i == 1 && pk_conv_stem_cl_ok(in, w, out, 1) && spatial3(args[4], 2, 0, pad3) &&
      pad3[1] >= 0 && pad3[2] >= 0) { /* the padded image, window rows, then the GEMM */
    const int64_t chunk = pk_conv_stem_cl_rows(rows, out->sizes[3], out->sizes[2]) * out->sizes[3];
    int64_t window_floats; /* chunk x rows: both the program's, so checked */
    pterun_kernel_scratch_reserve(
        ctx, sizeof(float) * pk_conv_stem_cl_pad_floats(in->sizes[1], in->sizes[2], in->sizes[3],
                                                        pad3[1], pad3[2]));
    pterun_kernel_scratch_reserve(ctx, !pk_ck_mul(chunk, rows, &window_floats) ||
                                               (uint64_t)window_floats > SIZE_MAX / sizeof(float)
                                           ? SIZE_MAX
                                           : sizeof(float) * (size_t)window_floats);
    pterun_compute_gemm_reserve(ctx, out->dtype, chunk, w->sizes[0], rows);
  }
  int64_t gemm_n = npos;
  if (out->dtype == PTERUN_DTYPE_F32) {
    pterun_kernel_scratch_reserve(ctx, sizeof(col_tap) * (size_t)rows);
    /* The flat path's row offsets and buffers, where the geometry takes it
     * (unit strides; sizes at load bound every execute's). */
    const int sp = (int)w->rank - 2;
    int64_t stride[3], dil[3], k[3], o[3];
    pk_flat_geom fg;
    if (spatial3(args[3], sp, 1, stride) && spatial3(args[5], sp, 1, dil)) {
      for (int d = 0; d < 3; ++d) {
        k[d] = d < 3 - sp ? 1 : w->sizes[2 + d - (3 - sp)];
        o[d] = d < 3 - sp ? 1 : out->sizes[2 + d - (3 - sp)];
      }
      const int64_t id = sp == 3 ? in->sizes[2] : 1;
      /* Not where another path runs: one input channel per group (depthwise,
       * a 1-channel stem), a 1x1 unit-stride kernel (the input is the column
       * matrix), few input channels (the direct kernel). */
      const int other = w->sizes[1] == 1 ||
                        (k[1] == 1 && k[2] == 1 && stride[1] == 1 && stride[2] == 1) ||
                        (args[8]->u.i == 1 && w->sizes[1] < NN_CONV_PACKED_ONLY_MIN_CIN);
      if (!other && stride[1] > 0 && stride[2] > 0 && dil[1] > 0 && dil[2] > 0 &&
          pk_flat_geometry(id, stride, k, dil, o, &fg) &&
          pk_flat_floats(w->sizes[1], ocpg, &fg, o[1]) < SIZE_MAX / sizeof(float)) {
        pterun_kernel_scratch_reserve(ctx, sizeof(int64_t) * (size_t)rows);
        pterun_kernel_scratch_reserve(ctx,
                                      sizeof(float) * pk_flat_floats(w->sizes[1], ocpg, &fg, o[1]));
        gemm_n = o[1] * fg.wq;
      }
    }
  } else
    pterun_kernel_scratch_reserve(
        ctx,
        (size_t)NN_COL_SCRATCH * (out->dtype == PTERUN_DTYPE_F64 ? sizeof(double) : sizeof(float)));
  pterun_compute_gemm_reserve(ctx, out->dtype, ocpg, gemm_n, rows);
}
