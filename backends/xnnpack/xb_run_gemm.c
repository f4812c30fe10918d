/* Execute: the GEMM node family (FullyConnected, Conv2d and its depthwise
 * form, ConvTranspose2d, BatchMatrixMultiply) on the compute engine's f32
 * and int8 GEMMs, with the weights xb_prepare.c packed. Float results are
 * clamped to the node's output range (fused ReLU/ReLU6/hardtanh); quantized
 * results to its quantized image. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xb_nodes.h"

/* C[M,N] = clamp(A[M,K] . B[K,N] + bias[N], lo, hi) (bias may be NULL) on the
 * compute engine, split over the pool: C starts as the bias rows and the
 * product is added to it, as XNNPACK's microkernels do; B packed at load when
 * `pk` is not NULL; the clamp (fused ReLU/ReLU6/hardtanh) in the engine's
 * epilogue. */
static void fgemm(const xb_exec* x, size_t M, size_t K, size_t N, const float* A, size_t lda,
                  const float* B, size_t ldb, const pterun_compute_packed* pk, const float* bias,
                  float* C, size_t ldc, float lo, float hi) {
  if (M == 0 || N == 0) return;
  if (bias != NULL)
    for (size_t m = 0; m < M; ++m) memcpy(C + m * ldc, bias, N * sizeof(float));
  pterun_compute_matrix a = {(void*)A, PTERUN_DTYPE_F32, (int64_t)lda, 1};
  pterun_compute_matrix b = {(void*)B, PTERUN_DTYPE_F32, (int64_t)ldb, 1};
  pterun_compute_matrix c = {C, PTERUN_DTYPE_F32, (int64_t)ldc, 1};
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  o.packed_b = pk;
  o.activation = PTERUN_COMPUTE_ACT_NONE;
  o.lo = lo;
  o.hi = hi;
  if (lo > -INFINITY || hi < INFINITY) o.activation = PTERUN_COMPUTE_ACT_CLAMP;
  pterun_compute_gemm_ex(x->ws, (int64_t)M, (int64_t)N, (int64_t)K, &a, &b, &c, 1.0, bias != NULL,
                         &o);
}

/* int32 accumulation wraps, as SIMD adds do: a hostile bias or an extreme K
 * must not be undefined behaviour. */
static inline int32_t xb_wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* acc[i] += (x[i] - zp) * w[i] (wrapping). */
static void madd_q8(int32_t* restrict acc, const void* restrict x, int is_u8, int32_t zp,
                    const int16_t* restrict w, size_t n) {
  // Both factors fit int16 (|x - zp| <= 255, |w| <= 255): a 16 x 16 -> 32-bit
  // product, which the baseline ISA (SSE2) vectorises.
  if (is_u8)
    for (size_t i = 0; i < n; ++i) {
      int16_t v = (int16_t)((int32_t)((const uint8_t*)x)[i] - zp);
      acc[i] = xb_wrap_add(acc[i], (int32_t)v * (int32_t)w[i]);
    }
  else
    for (size_t i = 0; i < n; ++i) {
      int16_t v = (int16_t)((int32_t)((const int8_t*)x)[i] - zp);
      acc[i] = xb_wrap_add(acc[i], (int32_t)v * (int32_t)w[i]);
    }
}

/* ======================================================================== */
/* execute                                                                  */

/* The int8 GEMM epilogue of a static int8 node: sums scaled by the
 * requantization multiplier, plus bias * multiplier, rounded to the output
 * type within the node's output range (columns from `c0`, a group's). */
static void qs8_static_epilogue(const xb_node* n, const xb_value* in, const xb_value* out,
                                const gemm_prep* p, size_t c0, pterun_compute_qs8_epilogue* ep) {
  int32_t lo, hi;
  q_range(n, out, &lo, &hi);
  pterun_compute_qs8_epilogue e = {in->zero_point,
                                   p->wzp != NULL ? p->wzp + c0 : NULL,
                                   p->mult + c0,
                                   1,
                                   p->qbias + c0,
                                   -INFINITY,
                                   INFINITY,
                                   1.0f,
                                   out->zero_point,
                                   lo,
                                   hi};
  *ep = e;
}

/* im2col rows of a static int8 convolution for compute's int8 GEMM: row i
 * is output pixel i of image b, column k tap k / ICg, channel k % ICg of
 * group gi; taps outside the input read the input zero point (a zero). */
typedef struct q_im2col {
  const xb_node* n;
  const uint8_t* src; /* image b */
  size_t H, W, IC, OW, ICg, gi;
  uint8_t zp; /* the zero point's byte */
} q_im2col;

/* Copies the pending run (if any) to d; returns the position after it. */
static uint8_t* flush_run(uint8_t* d, const uint8_t* src, size_t* len) {
  if (*len) memcpy(d, src, *len);
  d += *len;
  *len = 0;
  return d;
}

static void q_im2col_rows(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
                          uint8_t* dst) {
  const q_im2col* c = ctx;
  const xb_node* n = c->n;
  const size_t end = (size_t)(k0 + kc);
  for (int64_t r = 0; r < rows; ++r) {
    size_t pix = (size_t)(i0 + r), oh = pix / c->OW, ow = pix % c->OW;
    size_t k = (size_t)k0, tap = k / c->ICg, ch = k % c->ICg;
    size_t kh = tap / n->kw, kw = tap % n->kw;
    uint8_t* d = dst + r * kc;
    // Runs of the input that follow each other in memory (a filter row
    // inside the image, all channels) are copied at once.
    const uint8_t* run_src = NULL;
    size_t run_len = 0;
    while (k < end) {
      size_t len = c->ICg - ch;
      if (len > end - k) len = end - k;
      ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
      ptrdiff_t iw = (ptrdiff_t)(ow * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
      if (ih < 0 || ih >= (ptrdiff_t)c->H || iw < 0 || iw >= (ptrdiff_t)c->W) {
        d = flush_run(d, run_src, &run_len);
        memset(d, c->zp, len);
        d += len;
      } else {
        const uint8_t* sp = c->src + ((size_t)ih * c->W + (size_t)iw) * c->IC + c->gi * c->ICg + ch;
        if (run_len && sp != run_src + run_len) d = flush_run(d, run_src, &run_len);
        if (!run_len) run_src = sp;
        run_len += len;
      }
      k += len;
      ch = 0;
      if (++kw == n->kw) {
        kw = 0;
        ++kh;
      }
    }
    flush_run(d, run_src, &run_len);
  }
}

void xb_run_fc(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  size_t K = p->K, N = p->N, M = K ? in->numel / K : 0;
  if (n->kind == KIND_F32) {
    fgemm(x, M, K, N, x->data[n->in[0]], K, p->w, N, p->fpk ? p->fpk[0] : NULL, p->bias,
          x->data[n->out], N, n->out_min, n->out_max);
    return;
  }
  if (n->kind == KIND_QS8) {
    int ui = in->dtype == XB_DT_QUINT8, uo = out->dtype == XB_DT_QUINT8;
    pterun_compute_qs8_epilogue ep;
    qs8_static_epilogue(n, in, out, p, 0, &ep);
    pterun_compute_matrix A = {x->data[n->in[0]], ui ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8,
                               (int64_t)K, 1};
    pterun_compute_matrix C = {x->data[n->out], uo ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8, (int64_t)N,
                               1};
    (void)pterun_compute_qs8_gemm(x->pool, x->max_threads, (int64_t)M, &A, NULL, NULL, A.dtype,
                                  &p->qw[0], &ep, &C);
    return;
  }
  // Dynamic: per-row activation parameters (inverse scale, zero point)
  // follow the int8 data. Per K group, compute's int8 GEMM gives the raw sums
  // sum_k a * w for a block of rows (exact in float below 2^24); the zero
  // point's share is zp * (the group's column sum of w).
  const int8_t* qa = x->data[n->in[0]];
  const uint8_t* params = (const uint8_t*)qa + dq_params_offset(in);
  size_t rows = dq_rows(in), per_row = rows ? in->numel / rows : 0;
  if (p->qb != NULL) {
    // 4-bit weights on the 4-bit blockwise engine: every row's scale and zero
    // point (n->scratch_bytes holds them), then one product over all rows;
    // the bias is in the packed weights. It needs no scratch and cannot fail.
    float* as = (float*)g->scratch;
    int32_t* az = (int32_t*)(as + M);
    for (size_t m = 0; m < M; ++m) {
      size_t r = per_row ? (m * K) / per_row : 0;
      memcpy(&as[m], params + r * 8, 4);
      memcpy(&az[m], params + r * 8 + 4, 4);
    }
    float* o = x->data[n->out];
    (void)pterun_compute_qb4w_linear_qa(p->qb, qa, as, az, (int64_t)M, o, NULL, x->pool,
                                        x->max_threads);
    if (n->out_min > -INFINITY || n->out_max < INFINITY)
      for (size_t i = 0; i < M * N; ++i) o[i] = clampf(o[i], n->out_min, n->out_max);
    return;
  }
  float* T = (float*)g->scratch; /* [XB_DQ_ROWS][N] */
  float* o = x->data[n->out];
  float inv[XB_DQ_ROWS];
  int32_t zp[XB_DQ_ROWS];
  const float one = 1.0f;
  pterun_compute_qs8_epilogue ep = {0, NULL, &one, 0, NULL, -INFINITY, INFINITY, 1.0f, 0, 0, 0};
  for (size_t m0 = 0; m0 < M; m0 += XB_DQ_ROWS) {
    size_t mb = M - m0 < XB_DQ_ROWS ? M - m0 : XB_DQ_ROWS;
    for (size_t i = 0; i < mb; ++i) {
      size_t m = m0 + i, r = per_row ? (m * K) / per_row : 0;
      memcpy(&inv[i], params + r * 8, 4);
      memcpy(&zp[i], params + r * 8 + 4, 4);
      memset(o + m * N, 0, N * sizeof(float));
    }
    for (size_t gk = 0; gk < p->groups_k; ++gk) {
      pterun_compute_matrix A = {(void*)(qa + m0 * K + gk * p->gsize), PTERUN_DTYPE_I8, (int64_t)K,
                                 1};
      pterun_compute_matrix C = {T, PTERUN_DTYPE_F32, (int64_t)N, 1};
      const pterun_compute_qs8_packed* w = &p->qw[gk];
      (void)pterun_compute_qs8_gemm(x->pool, x->max_threads, (int64_t)mb, &A, NULL, NULL,
                                    PTERUN_DTYPE_I8, w, &ep, &C);
      // Integers in float: exact while the sums stay below 2^24.
      const float* sc = p->mult + gk * N; /* [groups][N] */
      const float* cs = p->csum + gk * N;
      for (size_t i = 0; i < mb; ++i) {
        float* orow = o + (m0 + i) * N;
        const float* trow = T + i * N;
        const float z = (float)zp[i];
        for (size_t c = 0; c < N; ++c) orow[c] += (trow[c] - z * cs[c]) * sc[c];
      }
    }
    for (size_t i = 0; i < mb; ++i) {
      float* orow = o + (m0 + i) * N;
      for (size_t c = 0; c < N; ++c)
        orow[c] = clampf(orow[c] * inv[i] + p->bias[c], n->out_min, n->out_max);
    }
  }
}

/* im2col of output pixels [p0, p0 + T) of image b, group gi, into A[T][K]
 * (K = KH * KW * ICg). A filter row that lies inside the input is one
 * contiguous run when the group is the whole input and dilation_w is 1. */
static void im2col_f32(const xb_node* n, const float* src, size_t b, size_t H, size_t W, size_t IC,
                       size_t OW, size_t gi, size_t ICg, size_t p0, size_t T, size_t K, float* A) {
  const size_t KH = n->kh, KW = n->kw;
  const bool runs = ICg == IC && n->dw == 1;
  size_t oh = p0 / OW, ow = p0 % OW;
  for (size_t t = 0; t < T; ++t) {
    float* arow = A + t * K;
    for (size_t kh = 0; kh < KH; ++kh) {
      float* d = arow + kh * KW * ICg;
      ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
      if (ih < 0 || ih >= (ptrdiff_t)H) {
        memset(d, 0, KW * ICg * sizeof(float));
        continue;
      }
      const float* row = src + (b * H + (size_t)ih) * W * IC + gi * ICg;
      ptrdiff_t iw0 = (ptrdiff_t)(ow * n->sw) - (ptrdiff_t)n->pad[3];
      if (runs && iw0 >= 0 && (size_t)iw0 + KW <= W) {
        memcpy(d, row + (size_t)iw0 * IC, KW * IC * sizeof(float));
        continue;
      }
      for (size_t kw = 0; kw < KW; ++kw, d += ICg) {
        ptrdiff_t iw = iw0 + (ptrdiff_t)(kw * n->dw);
        if (iw < 0 || iw >= (ptrdiff_t)W) {
          for (size_t c = 0; c < ICg; ++c) d[c] = 0.0f;
        } else {
          const float* sp = row + (size_t)iw * IC;
          for (size_t c = 0; c < ICg; ++c) d[c] = sp[c];
        }
      }
    }
    if (++ow == OW) {
      ow = 0;
      ++oh;
    }
  }
}

/* One image zero-padded: rows [pad_top, pad_top + H) and columns
 * [pad_left, pad_left + W) hold the input, the rest zeros. */
static void pad_image(const xb_node* n, const float* img, size_t H, size_t W, size_t IC, size_t hp,
                      size_t wp, float* dst) {
  const size_t row = wp * IC, left = n->pad[3] * IC, right = (wp - W - n->pad[3]) * IC;
  memset(dst, 0, row * n->pad[0] * sizeof(float));
  for (size_t y = 0; y < H; ++y) {
    float* d = dst + (y + n->pad[0]) * row;
    memset(d, 0, left * sizeof(float));
    memcpy(d + left, img + y * W * IC, W * IC * sizeof(float));
    memset(d + left + W * IC, 0, right * sizeof(float));
  }
  memset(dst + (H + n->pad[0]) * row, 0, row * (hp - H - n->pad[0]) * sizeof(float));
}

/* im2col_f32's rows from the padded image: every tap inside it, so each
 * filter row is one copy (a run of KW * IC floats when the group is the
 * whole input and dilation_w is 1, else one per tap). */
static void im2col_padded(const xb_node* n, const float* pad, size_t wp, size_t IC, size_t OW,
                          size_t gi, size_t ICg, size_t p0, size_t T, size_t K, float* A) {
  const size_t KH = n->kh, KW = n->kw;
  const bool runs = ICg == IC && n->dw == 1;
  size_t oh = p0 / OW, ow = p0 % OW;
  for (size_t t = 0; t < T; ++t) {
    float* d = A + t * K;
    for (size_t kh = 0; kh < KH; ++kh) {
      const float* s = pad + ((oh * n->sh + kh * n->dh) * wp + ow * n->sw) * IC + gi * ICg;
      if (runs) {
        memcpy(d, s, KW * IC * sizeof(float));
        d += KW * IC;
      } else {
        for (size_t kw = 0; kw < KW; ++kw, d += ICg)
          memcpy(d, s + kw * n->dw * IC, ICg * sizeof(float));
      }
    }
    if (++ow == OW) {
      ow = 0;
      ++oh;
    }
  }
}

/* Static int8 depthwise convolution: int32 accumulators per output pixel,
 * then requantization (pixels split over the pool). */
typedef struct dwq_job {
  const xb_exec* x;
  const xb_node* n;
  size_t H, W, IC, OH, OW, OC;
  int32_t lo, hi;
} dwq_job;

static void dwq_task(void* c_, size_t start, size_t count) {
  const dwq_job* j = c_;
  const xb_node* n = j->n;
  const xb_graph* g = j->x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  const uint8_t* src = j->x->data[n->in[0]];
  uint8_t* dst = j->x->data[n->out];
  int ui = in->dtype == XB_DT_QUINT8, uo = out->dtype == XB_DT_QUINT8;
  size_t OC = j->OC, dm = OC / j->IC, npix = j->OH * j->OW;
  int32_t acc[256];
  for (size_t pix = start; pix < start + count; ++pix) {
    size_t b = pix / npix, oh = pix % npix / j->OW, ow = pix % j->OW;
    for (size_t c0 = 0; c0 < OC; c0 += 256) {
      size_t cn = OC - c0 < 256 ? OC - c0 : 256;
      for (size_t c = 0; c < cn; ++c) acc[c] = p->ibias[c0 + c];
      for (size_t kh = 0; kh < n->kh; ++kh) {
        ptrdiff_t ih = (ptrdiff_t)(oh * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
        if (ih < 0 || ih >= (ptrdiff_t)j->H) continue;
        for (size_t kw = 0; kw < n->kw; ++kw) {
          ptrdiff_t iw = (ptrdiff_t)(ow * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
          if (iw < 0 || iw >= (ptrdiff_t)j->W) continue;
          size_t base = ((b * j->H + (size_t)ih) * j->W + (size_t)iw) * j->IC;
          const int16_t* wp = p->wdq + (kh * n->kw + kw) * OC + c0;
          if (dm == 1)
            madd_q8(acc, src + base + c0, ui, in->zero_point, wp, cn);
          else
            for (size_t c = 0; c < cn; ++c)
              acc[c] = xb_wrap_add(
                  acc[c], (q_ld(src, base + (c0 + c) / dm, ui) - in->zero_point) * (int32_t)wp[c]);
        }
      }
      // The output type outside the loops (they vectorise).
      const size_t ob = pix * OC + c0;
      const float* mult = p->mult + c0;
      const int32_t zo = out->zero_point;
      if (uo)
        for (size_t c = 0; c < cn; ++c)
          ((uint8_t*)dst)[ob + c] = (uint8_t)requant((float)acc[c] * mult[c], zo, j->lo, j->hi);
      else
        for (size_t c = 0; c < cn; ++c)
          ((int8_t*)dst)[ob + c] = (int8_t)requant((float)acc[c] * mult[c], zo, j->lo, j->hi);
    }
  }
}

static void run_dwconv_q8(const xb_exec* x, const xb_node* n, size_t B, size_t H, size_t W,
                          size_t IC, size_t OH, size_t OW, size_t OC) {
  dwq_job j = {x, n, H, W, IC, OH, OW, OC, 0, 0};
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  const gemm_prep* p = n->packed;
  q_range(n, out, &j.lo, &j.hi);
  /* compute's NHWC loop: requant((float)acc * mult) as its epilogue with
   * scale = mult, no float bias, 1 / output scale 1 and [lo, hi] as the
   * code range (the same codes, dwq_task's arithmetic); dwq_task for what
   * it refuses (filters over 64 taps). */
  pterun_compute_dwconv2d geo = {B,     H,         W,         IC,        OH,      OW,
                                 OC,    n->kh,     n->kw,     n->sh,     n->sw,   n->dh,
                                 n->dw, n->pad[0], n->pad[3], -INFINITY, INFINITY};
  pterun_compute_qs8_epilogue ep = {in->zero_point, NULL, p->mult,         1,    NULL, 0.0f,
                                    0.0f,           1.0f, out->zero_point, j.lo, j.hi};
  const int32_t in_dt = in->dtype == XB_DT_QUINT8 ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8;
  const int32_t out_dt = out->dtype == XB_DT_QUINT8 ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8;
  if (pterun_compute_qs8_dwconv2d_nhwc(x->pool, x->max_threads, &geo, x->data[n->in[0]], in_dt,
                                       p->wdq, p->ibias, &ep, x->data[n->out], out_dt) == 0)
    return;
  size_t pixels = B * OH * OW, per = OC * n->kh * n->kw;
  size_t tile = per >= XB_PAR_MIN ? 1 : XB_PAR_MIN / (per ? per : 1);
  pterun_parallelize_1d_tile(pixels > tile ? x->pool : NULL, dwq_task, &j, pixels, tile,
                             xb_par_flags(x->max_threads, (double)pixels * (double)per, 500.0));
}

/* A static int8 Conv2d's image b padded with its zero point into `buf`
 * (prep_conv_q8 sized it), as uint8 (int8 values and the zero point shifted
 * by 128), and the 4 bytes after it defined; NULL without the room. */
static const uint8_t* pad_image_q8(const xb_node* n, const uint8_t* img, size_t H, size_t W,
                                   size_t IC, int32_t zp, int flip, uint8_t* buf) {
  const size_t hp = H + n->pad[0] + n->pad[2], wp = W + n->pad[3] + n->pad[1];
  if (buf == NULL || n->scratch_bytes < hp * wp * IC + 4) return NULL;
  const uint8_t z = (uint8_t)((uint8_t)zp ^ (flip ? 0x80u : 0u));
  const size_t row = wp * IC, left = n->pad[3] * IC, right = n->pad[1] * IC;
  memset(buf, z, row * n->pad[0]);
  memset(buf + row * (n->pad[0] + H), z, row * n->pad[2] + 4);
  for (size_t y = 0; y < H; ++y) {
    uint8_t* d = buf + (n->pad[0] + y) * row;
    memset(d, z, left);
    memset(d + row - right, z, right);
    if (!flip) {
      memcpy(d + left, img + y * W * IC, W * IC);
      continue;
    }
    const uint8_t* s = img + y * W * IC;
    for (size_t i = 0; i < W * IC; ++i) d[left + i] = (uint8_t)(s[i] ^ 0x80u);
  }
  return buf;
}

/* The int8 forms of a Conv2d or ConvTranspose2d on compute's int8 GEMM, per
 * image and group: A's rows from `rows` (im2col of the input on demand), or
 * for a 1x1 convolution (rows NULL) the input itself. Static: sums
 * requantized in the GEMM's epilogue. Dynamic: per image, the Convert's
 * scale and zero point (stored after the int8 data); the float epilogue
 * scales each sum by input scale * filter scale, adds the bias and clamps. */
static void run_conv_q8(xb_exec* x, const xb_node* n, pterun_compute_qs8_rows_fn rows) {
  const xb_graph* g = x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], IC = in->dims[3];
  size_t OW = out->dims[2], OC = out->dims[3], npix = out->dims[1] * OW;
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out;
  const bool dyn = n->kind == KIND_QD8;
  const int ui = in->dtype == XB_DT_QUINT8, uo = out->dtype == XB_DT_QUINT8;
  const int32_t a_type = dyn || !ui ? PTERUN_DTYPE_I8 : PTERUN_DTYPE_U8;
  const int32_t c_type = dyn ? PTERUN_DTYPE_F32 : uo ? PTERUN_DTYPE_U8 : PTERUN_DTYPE_I8;
  const size_t c_size = dyn ? sizeof(float) : 1;
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  const uint8_t* params = dyn ? src + dq_params_offset(in) : NULL;
  float* sc = (float*)g->scratch; /* dynamic: [OC] */
  for (size_t b = 0; b < B; ++b) {
    float a_scale = 0.0f;
    int32_t a_zp = in->zero_point;
    if (dyn) {
      memcpy(&a_scale, params + b * 8, 4);
      memcpy(&a_zp, params + b * 8 + 4, 4);
      for (size_t c = 0; c < OC; ++c) sc[c] = a_scale * p->mult[c];
    }
    const uint8_t* img = src + b * H * W * IC;
    pterun_compute_matrix A = {(void*)img, a_type, (int64_t)IC, 1};
    const uint8_t* pad = rows == q_im2col_rows && !dyn
                             ? pad_image_q8(n, img, H, W, IC, a_zp, !ui, (uint8_t*)g->scratch)
                             : NULL;
    for (size_t gi = 0; gi < G; ++gi) {
      q_im2col ic = {n, img, H, W, IC, OW, ICg, gi, (uint8_t)(a_zp & 0xff)};
      pterun_compute_qs8_epilogue ep;
      if (dyn) {
        pterun_compute_qs8_epilogue e = {a_zp,
                                         p->wzp != NULL ? p->wzp + gi * OCg : NULL,
                                         sc + gi * OCg,
                                         1,
                                         p->bias + gi * OCg,
                                         n->out_min,
                                         n->out_max,
                                         1.0f,
                                         0,
                                         0,
                                         0};
        ep = e;
      } else {
        qs8_static_epilogue(n, in, out, p, gi * OCg, &ep);
      }
      pterun_compute_matrix C = {dst + (b * npix * OC + gi * OCg) * c_size, c_type, (int64_t)OC, 1};
      /* The indirect GEMM reads each window where it lies: a 1x1's pixels in
       * the input itself (int8 shifted as it is broadcast), the others in the
       * padded uint8 copy; it declines what the packed GEMM below takes. */
      const uint8_t* in_place = rows == NULL && !dyn ? img : pad;
      if (in_place != NULL) {
        pterun_compute_qs8_conv2d_nhwc_args ia;
        memset(&ia, 0, sizeof ia);
        ia.image = in_place, ia.dtype = in_place == img ? a_type : PTERUN_DTYPE_U8;
        ia.h = (int64_t)(H + n->pad[0] + n->pad[2]), ia.w = (int64_t)(W + n->pad[3] + n->pad[1]);
        ia.c = (int64_t)IC, ia.c0 = (int64_t)(gi * ICg), ia.group_c = (int64_t)ICg;
        ia.kernel_h = (int64_t)n->kh, ia.kernel_w = (int64_t)n->kw;
        ia.stride_h = (int64_t)n->sh, ia.stride_w = (int64_t)n->sw;
        ia.dilation_h = (int64_t)n->dh, ia.dilation_w = (int64_t)n->dw;
        ia.out_h = (int64_t)out->dims[1], ia.out_w = (int64_t)OW;
        pterun_compute_qs8_epilogue e8 = ep;
        if (in_place == pad && !ui) e8.a_zp = a_zp + 128; /* pad_image_q8 shifted it */
        if (pterun_compute_qs8_conv2d_nhwc(x->pool, x->max_threads, &ia, &p->qw[gi], &e8, &C) == 0)
          continue;
      }
      (void)pterun_compute_qs8_gemm(x->pool, x->max_threads, (int64_t)npix, &A, rows, &ic, a_type,
                                    &p->qw[gi], &ep, &C);
    }
  }
}

/* im2col rows of an int8 transposed convolution: row i is output pixel i,
 * column k tap (kh, kw) = (k / ICg / KW, k / ICg % KW), channel k % ICg of
 * group gi. The tap reads input pixel ((oh + pad_top - kh * dh) / sh,
 * (ow + pad_left - kw * dw) / sw) when both divide exactly and it lies
 * inside the input, else the zero point (a zero). */
static void q_deconv_rows(void* ctx, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
                          uint8_t* dst) {
  const q_im2col* c = ctx;
  const xb_node* n = c->n;
  const size_t end = (size_t)(k0 + kc);
  for (int64_t r = 0; r < rows; ++r) {
    size_t pix = (size_t)(i0 + r), oh = pix / c->OW, ow = pix % c->OW;
    size_t k = (size_t)k0, tap = k / c->ICg, ch = k % c->ICg;
    size_t kh = tap / n->kw, kw = tap % n->kw;
    uint8_t* d = dst + r * kc;
    while (k < end) {
      size_t len = c->ICg - ch;
      if (len > end - k) len = end - k;
      ptrdiff_t th = (ptrdiff_t)(oh + n->pad[0]) - (ptrdiff_t)(kh * n->dh);
      ptrdiff_t tw = (ptrdiff_t)(ow + n->pad[3]) - (ptrdiff_t)(kw * n->dw);
      if (th < 0 || tw < 0 || (size_t)th % n->sh != 0 || (size_t)tw % n->sw != 0 ||
          (size_t)th / n->sh >= c->H || (size_t)tw / n->sw >= c->W) {
        memset(d, c->zp, len);
      } else {
        size_t ih = (size_t)th / n->sh, iw = (size_t)tw / n->sw;
        memcpy(d, c->src + (ih * c->W + iw) * c->IC + c->gi * c->ICg + ch, len);
      }
      d += len;
      k += len;
      ch = 0;
      if (++kw == n->kw) {
        kw = 0;
        ++kh;
      }
    }
  }
}

void xb_run_conv(xb_exec* x, const xb_node* n) {
  const xb_graph* g = x->g;
  const gemm_prep* p = n->packed;
  const xb_value *in = &g->values[n->in[0]], *out = &g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], IC = in->dims[3];
  size_t OH = out->dims[1], OW = out->dims[2], OC = out->dims[3];
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out, KH = n->kh, KW = n->kw;
  size_t K = p->K, npix = OH * OW;
  bool dw = n->tag == XB_N_DEPTHWISE_CONV2D;
  bool q = n->kind == KIND_QS8;
  const uint8_t* src = x->data[n->in[0]];
  uint8_t* dst = x->data[n->out];
  if (dw && !q && !p->dense_dw) {
    pterun_compute_dwconv2d geo = {B,     H,         W,         IC,         OH,        OW,
                                   OC,    KH,        KW,        n->sh,      n->sw,     n->dh,
                                   n->dw, n->pad[0], n->pad[3], n->out_min, n->out_max};
    // A quantized output (prep_conv): the fp32 result in scratch, then
    // quantized as a Convert does.
    const bool q_out = is_q8(out);
    float* fo = q_out ? (float*)g->scratch : (float*)dst;
    // prep_conv checked the geometry, so the call cannot refuse it.
    (void)pterun_compute_f32_dwconv2d_nhwc(x->pool, x->max_threads, &geo, (const float*)src, p->w,
                                           p->bias, fo);
    if (q_out) {
      const int u = out->dtype == XB_DT_QUINT8;
      const float inv = 1.0f / out->scale;
      for (size_t i = 0; i < out->numel; ++i)
        q_st(dst, i, requant(fo[i] * inv, out->zero_point, q_min(out), q_max(out)), u);
    }
    return;
  }
  if (dw && q) {
    run_dwconv_q8(x, n, B, H, W, IC, OH, OW, OC);
    return;
  }
  bool pointwise = G == 1 && KH == 1 && KW == 1 && n->sh == 1 && n->sw == 1 && n->pad[0] == 0 &&
                   n->pad[1] == 0 && n->pad[2] == 0 && n->pad[3] == 0 && OH == H && OW == W;
  if (n->kind != KIND_F32) {
    run_conv_q8(x, n, pointwise ? NULL : q_im2col_rows);
    return;
  }
  for (size_t b = 0; b < B; ++b) {
    if (pointwise) {
      // 1x1 convolution: the NHWC input already is the [pixels][IC] matrix.
      fgemm(x, npix, IC, OC, (const float*)src + b * npix * IC, IC, p->w, OC,
            p->fpk ? p->fpk[0] : NULL, p->bias, (float*)dst + b * npix * OC, OC, n->out_min,
            n->out_max);
      continue;
    }
    // The padded image after the im2col block, when prepare sized it.
    float* const Af = (float*)g->scratch;
    float* padded = NULL;
    const size_t hp = H + n->pad[0] + n->pad[2], wp = W + n->pad[3] + n->pad[1];
    if (p->pad_floats != 0 && hp * wp * IC <= p->pad_floats) {
      padded = Af + ((p->tile * K + 15) & ~(size_t)15);
      pad_image(n, (const float*)src + b * H * W * IC, H, W, IC, hp, wp, padded);
    }
    for (size_t p0 = 0; p0 < npix; p0 += p->tile) {
      size_t T = npix - p0 < p->tile ? npix - p0 : p->tile;
      for (size_t gi = 0; gi < G; ++gi) {
        // im2col of T output pixels for group gi: [T][KH*KW*ICg]
        if (padded != NULL)
          im2col_padded(n, padded, wp, IC, OW, gi, ICg, p0, T, K, Af);
        else
          im2col_f32(n, (const float*)src, b, H, W, IC, OW, gi, ICg, p0, T, K, Af);
        size_t ob = (b * npix + p0) * OC + gi * OCg;
        fgemm(x, T, K, OCg, Af, K, p->w + gi * K * OCg, OCg, p->fpk ? p->fpk[gi] : NULL,
              p->bias + gi * OCg, (float*)dst + ob, OC, n->out_min, n->out_max);
      }
    }
  }
}

void xb_run_deconv(xb_exec* x, const xb_node* n) {
  const gemm_prep* p = n->packed;
  const xb_value *in = &x->g->values[n->in[0]], *out = &x->g->values[n->out];
  size_t B = in->dims[0], H = in->dims[1], W = in->dims[2], IC = in->dims[3];
  size_t OH = out->dims[1], OW = out->dims[2], OC = out->dims[3];
  size_t G = n->groups, ICg = n->group_in, OCg = n->group_out, KH = n->kh, KW = n->kw;
  if (n->kind != KIND_F32) {
    // A 1x1, stride-1 transposed convolution without padding is a 1x1
    // convolution: the input is the GEMM's A.
    bool pointwise = G == 1 && KH == 1 && KW == 1 && n->sh == 1 && n->sw == 1 && n->pad[0] == 0 &&
                     n->pad[1] == 0 && n->pad[2] == 0 && n->pad[3] == 0 && OH == H && OW == W;
    run_conv_q8(x, n, pointwise ? NULL : q_deconv_rows);
    return;
  }
  const float* src = x->data[n->in[0]];
  float* dst = x->data[n->out];
  for (size_t i = 0; i < B * OH * OW; ++i) memcpy(dst + i * OC, p->bias, OC * sizeof(float));
  for (size_t b = 0; b < B; ++b)
    for (size_t ih = 0; ih < H; ++ih)
      for (size_t iw = 0; iw < W; ++iw) {
        const float* ip = src + ((b * H + ih) * W + iw) * IC;
        for (size_t kh = 0; kh < KH; ++kh) {
          ptrdiff_t oh = (ptrdiff_t)(ih * n->sh + kh * n->dh) - (ptrdiff_t)n->pad[0];
          if (oh < 0 || oh >= (ptrdiff_t)OH) continue;
          for (size_t kw = 0; kw < KW; ++kw) {
            ptrdiff_t ow = (ptrdiff_t)(iw * n->sw + kw * n->dw) - (ptrdiff_t)n->pad[3];
            if (ow < 0 || ow >= (ptrdiff_t)OW) continue;
            float* op = dst + ((b * OH + (size_t)oh) * OW + (size_t)ow) * OC;
            for (size_t gi = 0; gi < G; ++gi)
              for (size_t c = 0; c < ICg; ++c) {
                float v = ip[gi * ICg + c];
                const float* wp = p->w + ((gi * KH * KW + kh * KW + kw) * ICg + c) * OCg;
                float* og = op + gi * OCg;
                for (size_t o = 0; o < OCg; ++o) og[o] += v * wp[o];
              }
          }
        }
      }
  for (size_t i = 0; i < B * OH * OW * OC; ++i) dst[i] = clampf(dst[i], n->out_min, n->out_max);
}

void xb_run_bmm(xb_exec* x, const xb_node* n) {
  const xb_value *a = &x->g->values[n->in[0]], *b = &x->g->values[n->in[1]];
  uint32_t r = a->rank;
  size_t M = a->dims[r - 2], K = a->dims[r - 1], N = b->dims[r - 1], batch = 1;
  for (uint32_t d = 0; d + 2 < r; ++d) batch *= a->dims[d];
  const float* A = x->data[n->in[0]];
  const float* B = x->data[n->in[1]];
  float* C = x->data[n->out];
  for (size_t i = 0; i < batch; ++i)
    fgemm(x, M, K, N, A + i * M * K, K, B + i * K * N, N, NULL, NULL, C + i * M * N, N, n->out_min,
          n->out_max);
}
