/* The attention engine (see attention.h). Per tile: the query rows are
 * loaded once as float, then key blocks of LLM_KB keys stream past them;
 * each key row is loaded once per tile and dotted with every query row of the
 * tile (all heads sharing that kv head), which is what makes grouped-query
 * decoding read the cache once per kv head. */
#include "kernels/llm/attention.h"

#include <inttypes.h>

#define LLM_KB 128            /* keys per block */
#define LLM_TILE_FLOATS 16384 /* per-tile working set (64 KiB, on the stack) */
#define LLM_MAX_ROWS 16

/* Floats a tile of r rows needs: q rows, accumulators, scores, max and sum,
 * and two row buffers for converted k/v rows (int rows as int32 share q's). */
static int64_t tile_floats(int64_t r, int64_t d) {
  return r * (2 * d + LLM_KB + 2) + 2 * d;
}

pterun_status llm_attn_plan(pterun_kernel_context* ctx, llm_attn_job* job, int64_t* tiles) {
  int64_t rep = job->Hq / job->Hkv, rmax = LLM_MAX_ROWS;
  while (rmax > 0 && tile_floats(rmax, job->D) > LLM_TILE_FLOATS) --rmax;
  if (rmax < 1)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "head_dim %" PRId64 " is too large for the attention tile", job->D);
  job->hn = rep < rmax ? rep : rmax;
  job->qn = rmax / job->hn;
  if (job->qn > job->Sq) job->qn = job->Sq;
  if (job->qn < 1) job->qn = 1;
  *tiles =
      job->B * job->Hkv * ((rep + job->hn - 1) / job->hn) * ((job->Sq + job->qn - 1) / job->qn);
  return PTERUN_STATUS_OK;
}

/* Row (b, s, h) of a float source as float32: in place for f32, else
 * converted into buf. */
static const float* float_row(const llm_attn_src* s, int64_t b, int64_t t, int64_t h, int64_t d,
                              float* buf) {
  int64_t off = b * s->sB + t * s->sS + h * s->sH;
  if (s->dtype == PTERUN_DTYPE_F32) return (const float*)s->data + off;
  llm_load_f32(buf, (const uint16_t*)s->data + off, s->dtype, (size_t)d);
  return buf;
}

static void param_of(const llm_attn_src* s, int64_t b, int64_t t, int64_t h, float* scale,
                     int32_t* zp) {
  int64_t p = b * s->pB + t * s->pS + h * s->pH;
  *scale = s->scales[p];
  *zp = s->zps[p];
}

static void one_tile(const llm_attn_job* job, int64_t tile) {
  float work[LLM_TILE_FLOATS];
  const pterun_compute_f32_rowops* ops = job->ops;
  const int64_t D = job->D, rep = job->Hq / job->Hkv;
  const int64_t hchunks = (rep + job->hn - 1) / job->hn,
                qchunks = (job->Sq + job->qn - 1) / job->qn;
  int64_t qc = tile % qchunks, rest = tile / qchunks;
  int64_t hc = rest % hchunks, hk, b, h0, hn, i0, qn, R, r, n0, kend;
  const int quant = job->q.dtype == PTERUN_DTYPE_I8;
  float *qrows, *acc, *scores, *mrow, *lrow, *kbuf, *vbuf;
  rest /= hchunks;
  hk = rest % job->Hkv;
  b = rest / job->Hkv;
  h0 = hk * rep + hc * job->hn;
  hn = job->hn;
  if (h0 + hn > (hk + 1) * rep) hn = (hk + 1) * rep - h0;
  i0 = qc * job->qn;
  qn = job->qn;
  if (i0 + qn > job->Sq) qn = job->Sq - i0;
  R = hn * qn;
  qrows = work;
  acc = qrows + R * D;
  scores = acc + R * D;
  mrow = scores + R * LLM_KB;
  lrow = mrow + R;
  kbuf = lrow + R;
  vbuf = kbuf + D;

  /* Rows are ordered (query row, head): row r = qi * hn + hi. For int8 q a
   * row holds (q - zp) as float and its scale is kept in qscale. */
  {
    float qscale[LLM_MAX_ROWS];
    int64_t qi, hi;
    for (qi = 0; qi < qn; ++qi)
      for (hi = 0; hi < hn; ++hi) {
        int64_t row = qi * hn + hi, i = i0 + qi, h = h0 + hi;
        if (quant) {
          const int8_t* src =
              (const int8_t*)job->q.data + b * job->q.sB + i * job->q.sS + h * job->q.sH;
          float* dst = qrows + row * D;
          int32_t zp;
          int64_t d;
          param_of(&job->q, b, i, h, &qscale[row], &zp);
          for (d = 0; d < D; ++d) dst[d] = (float)((int32_t)src[d] - zp);
        } else {
          const float* src = float_row(&job->q, b, i, h, D, qrows + row * D);
          if (src != qrows + row * D) memcpy(qrows + row * D, src, (size_t)D * sizeof(float));
        }
        mrow[row] = -INFINITY;
        lrow[row] = 0.f;
        memset(acc + row * D, 0, (size_t)D * sizeof(float));
      }

    kend = job->nkeys;
    if (job->causal && job->start_pos + i0 + qn < kend) kend = job->start_pos + i0 + qn;
    for (n0 = 0; n0 < kend; n0 += LLM_KB) {
      int64_t kb = kend - n0 < LLM_KB ? kend - n0 : LLM_KB, j;
      /* scores = q . k for every row of the tile */
      for (j = 0; j < kb; ++j) {
        int64_t key = n0 + j;
        if (quant) {
          const int8_t* kr =
              (const int8_t*)job->k.data + b * job->k.sB + key * job->k.sS + hk * job->k.sH;
          float ks;
          int32_t kz;
          int64_t d;
          param_of(&job->k, b, key, hk, &ks, &kz);
          /* (q - zq) and (k - zk) are small integers held exactly in float:
           * the dot is the int8 GEMM's integer sum (exact while
           * D * 255^2 < 2^24, i.e. head_dim <= 256), then scaled. */
          for (d = 0; d < D; ++d) kbuf[d] = (float)((int32_t)kr[d] - kz);
          for (r = 0; r < R; ++r)
            scores[r * LLM_KB + j] = ops->dot(qrows + r * D, kbuf, (size_t)D) * (qscale[r] * ks);
        } else {
          const float* kr = float_row(&job->k, b, key, hk, D, kbuf);
          for (r = 0; r < R; ++r) scores[r * LLM_KB + j] = ops->dot(qrows + r * D, kr, (size_t)D);
        }
      }
      /* scale, mask, online softmax update */
      for (r = 0; r < R; ++r) {
        float* sc = scores + r * LLM_KB;
        int64_t i = i0 + r / hn, lim = kb;
        float mb = -INFINITY, mnew, alpha, sum = 0.f;
        if (job->causal) {
          int64_t last = job->start_pos + i - n0 + 1; /* keys [n0, n0 + last) visible */
          lim = last < 0 ? 0 : (last < kb ? last : kb);
        }
        for (j = 0; j < lim; ++j) {
          float s = sc[j] * job->scale;
          if (job->mask != NULL) s += job->mask[i * job->mask_ld + n0 + j];
          sc[j] = s;
          if (s > mb) mb = s;
        }
        mnew = mrow[r] > mb ? mrow[r] : mb;
        if (mnew == -INFINITY) { /* nothing visible yet */
          for (j = 0; j < kb; ++j) sc[j] = 0.f;
          continue;
        }
        alpha = expf(mrow[r] - mnew); /* exp(-inf) = 0 on the first block */
        sum = ops->exp_sum(sc, sc, mnew, (size_t)lim);
        for (j = lim; j < kb; ++j) sc[j] = 0.f;
        lrow[r] = lrow[r] * alpha + sum;
        mrow[r] = mnew;
        if (alpha != 1.f) ops->scale(acc + r * D, alpha, (size_t)D);
      }
      /* acc += p . v */
      for (j = 0; j < kb; ++j) {
        int64_t key = n0 + j;
        const float* vr;
        if (quant) {
          const int8_t* src =
              (const int8_t*)job->v.data + b * job->v.sB + key * job->v.sS + hk * job->v.sH;
          float vs;
          int32_t vz;
          int64_t d;
          param_of(&job->v, b, key, hk, &vs, &vz);
          for (d = 0; d < D; ++d) vbuf[d] = (float)((int32_t)src[d] - vz) * vs;
          vr = vbuf;
        } else {
          vr = float_row(&job->v, b, key, hk, D, vbuf);
        }
        for (r = 0; r < R; ++r) {
          float p = scores[r * LLM_KB + j];
          if (p != 0.f) ops->axpby(acc + r * D, 1.f, p, vr, (size_t)D);
        }
      }
    }
    /* out = acc / sum */
    for (qi = 0; qi < qn; ++qi)
      for (hi = 0; hi < hn; ++hi) {
        int64_t row = qi * hn + hi, i = i0 + qi, h = h0 + hi;
        float* a = acc + row * D;
        int64_t off = b * job->oB + i * job->oS + h * job->oH;
        ops->scale(a, 1.f / lrow[row], (size_t)D);
        if (job->out_dtype == PTERUN_DTYPE_F32)
          memcpy((float*)job->out + off, a, (size_t)D * sizeof(float));
        else
          llm_store_f32((uint16_t*)job->out + off, job->out_dtype, a, (size_t)D);
      }
  }
}

void llm_attn_tiles(void* job, size_t first, size_t count) {
  size_t t;
  for (t = first; t < first + count; ++t) one_tile((const llm_attn_job*)job, (int64_t)t);
}
