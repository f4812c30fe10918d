/* The int8 matrix product of libpterun_compute (pterun/compute.h): weight
 * packing, the driver and the epilogue around a run-time selected microkernel
 * (ukernel.h, manifest qs8_ukernels.inc).
 *
 *   W (N x K int8)  packed once: NR-column strips of K groups of 4, in the
 *                   microkernel's element type, zero padded; column sums.
 *   for each task (a run of MR-row panels x a run of strips, C tiles):
 *     for each panel, for each K block (PC_QS8_KB values):
 *       fetch A rows (matrix or row function), shift int8 to uint8, pack the
 *       panel (K groups of 4), add up its row sums
 *       microkernel over the task's strips into an int32 tile buffer
 *     epilogue: zero-point corrections (int64), scale, bias, requantise or
 *     dequantise, clamp, store
 *
 * Everything a task needs lives on its stack (no scratch memory). Each C
 * element is summed exactly in int32 and finished by the same scalar epilogue
 * whatever the microkernel and the thread count, so results are identical for
 * every ISA and pool size. */
#include <math.h>
#include <string.h>

#include "pterun/kernel_util.h"
#include "pterun/threadpool.h"
#include "src/compute/qgemm/requant.h"
#include "src/compute/qgemm/ukernel.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define PC_QS8_MR_MAX 16
#define PC_QS8_NR_MAX 64
/* K values per block: the A panel (MR x KB, int16 at most) stays in L1. */
#define PC_QS8_KB 1024
/* Columns of C one task covers at most (its int32 tile buffer), and the
 * bytes of packed B those columns may take (kept in L2 while the task's A
 * panels stream past). */
#define PC_QS8_TN 256
#define PC_QS8_B_TILE_BYTES (128 * 1024)
/* Rows of a column-major int8 C written per column at once (qs8_task), and
 * the staging buffer's rows (the run rounded up to whole panels). */
#define PC_QS8_STAGE_ROWS 64
#define PC_QS8_STAGE_MAX (PC_QS8_STAGE_ROWS + PC_QS8_MR_MAX)
/* A small A (a decode-sized batch of a linear) whose panels take at most
 * this many bytes is packed once by the calling thread for every task,
 * instead of once per run of columns (qs8_task_direct). */
#define PC_QS8_PREPACK_BYTES (32 * 1024)
#define PC_QS8_PREPACK_ROWS 256
/* Multiply-adds below which a product runs on the calling thread. */
#define PC_QS8_PARALLEL_MIN 65536

/* A manifest column's 0 or 1 as the entry or NULL (an entry that is not
 * defined must not be named). */
#define PC_QS8_IG_0(f) NULL
#define PC_QS8_IG_1(f) f
static const pc_qs8_gemm_ukernel g_qs8_ukernels[] = {
#define PC_QS8_UKERNEL(isa, fn, mr, nr, ab, bb, ig, igq)                                           \
  {(isa), fn, PC_QS8_IG_##ig(fn##_ig), PC_QS8_IG_##igq(fn##_igq), #fn, (mr), (nr), (ab), (bb)},
#include "src/compute/qgemm/qs8_ukernels.inc"
#undef PC_QS8_UKERNEL
};

#define PC_QS8_UKERNEL(isa, fn, mr, nr, ab, bb, ig, igq)                                           \
  _Static_assert((mr) <= PC_QS8_MR_MAX && (nr) <= PC_QS8_NR_MAX && PC_QS8_TN % (nr) == 0,          \
                 #fn " tile");
#include "src/compute/qgemm/qs8_ukernels.inc"
#undef PC_QS8_UKERNEL

static atomic_uchar g_qs8_ran[sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0]];
PC_USED_FAMILY(pc_used_qs8_gemm, "qs8_gemm", g_qs8_ukernels, g_qs8_ran);
/* The indirect entries (pterun_compute_qs8_conv2d_nhwc) are their own family,
 * in the manifest's order; a row without one carries an ISA mask no CPU has
 * (the variants report lists it unavailable). */
typedef struct pc_qs8_ig_row {
  uint64_t isa;
  const char* name;
} pc_qs8_ig_row;
static const pc_qs8_ig_row g_qs8_ig[] = {
#define PC_QS8_UKERNEL(isa, fn, mr, nr, ab, bb, ig, igq) {(ig) ? (uint64_t)(isa) : UINT64_MAX, #fn},
#include "src/compute/qgemm/qs8_ukernels.inc"
#undef PC_QS8_UKERNEL
};
static atomic_uchar g_qs8_ig_ran[sizeof g_qs8_ig / sizeof g_qs8_ig[0]];
PC_USED_FAMILY(pc_used_qs8_igemm, "qs8_igemm", g_qs8_ig, g_qs8_ig_ran);

const pc_qs8_gemm_ukernel* pterun_compute_qs8_gemm_ukernels(size_t* count_out) {
  if (count_out != NULL) *count_out = sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0];
  return g_qs8_ukernels;
}

const pc_qs8_gemm_ukernel* pterun_compute_qs8_gemm_select(uint64_t features) {
  size_t i = sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0];
  while (i-- > 0)
    if ((g_qs8_ukernels[i].isa & features) == g_qs8_ukernels[i].isa) return &g_qs8_ukernels[i];
  return &g_qs8_ukernels[0];
}

/* ---- packing ------------------------------------------------------------- */

/* The microkernel packing (uk NULL) chooses for an N-column product: this
 * CPU's, or one of its ISA and element sizes with a narrower tile that still
 * holds all N columns (16 x 16 for N <= 16: no half-empty 32-wide tiles). */
static const pc_qs8_gemm_ukernel* select_for(int64_t n) {
  const pc_qs8_gemm_ukernel* best = pterun_compute_qs8_gemm_select(pterun_cpu_features());
  const pc_qs8_gemm_ukernel* base = best;
  for (size_t i = 0; i < sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0]; ++i) {
    const pc_qs8_gemm_ukernel* o = &g_qs8_ukernels[i];
    if (o->isa == base->isa && o->a_bytes == base->a_bytes && o->b_bytes == base->b_bytes &&
        o->nr >= n && o->nr < best->nr)
      best = o;
  }
  return best;
}

static size_t round_up_sz(size_t x, size_t q) {
  return (x + q - 1) / q * q;
}

/* Bytes of the column sums (64-byte rounded) and of the strips. */
static int pack_layout(const pc_qs8_gemm_ukernel* uk, int64_t n, int64_t k, size_t* sums_out,
                       size_t* strips_out) {
  if (n < 1 || k < 1 || k > PTERUN_COMPUTE_QS8_MAX_K || (uint64_t)n > SIZE_MAX / 4) return -1;
  size_t sums = round_up_sz((size_t)n * sizeof(int32_t), 64);
  size_t nstrips = ((size_t)n + (size_t)uk->nr - 1) / (size_t)uk->nr;
  size_t kq = ((size_t)k + PC_QS8_KR - 1) / PC_QS8_KR;
  size_t per_strip = kq * (size_t)uk->nr * PC_QS8_KR * (size_t)uk->b_bytes;
  if (nstrips != 0 && per_strip > (SIZE_MAX - sums) / nstrips) return -1;
  *sums_out = sums;
  *strips_out = nstrips * per_strip;
  return 0;
}

size_t pterun_compute_qs8_pack_size(const pc_qs8_gemm_ukernel* uk, int64_t n, int64_t k) {
  size_t sums, strips;
  if (uk == NULL) uk = select_for(n);
  if (pack_layout(uk, n, k, &sums, &strips) != 0) return 0;
  return sums + strips;
}

/* Where W[n][k] is: a strided matrix, or a convolution weight [N][C][KH][KW]
 * read in (ky, kx, c) order (k = tap * C + c). */
typedef struct pc_wsrc {
  const int8_t* w;
  int64_t rs, cs;
  int64_t c, taps; /* conv: channels, KH * KW; 0: a plain matrix */
  int64_t c_pad;   /* conv: channels per tap in K (>= c; the extra ones weigh 0) */
} pc_wsrc;

static inline int8_t wsrc_at(const pc_wsrc* s, int64_t n, int64_t k) {
  if (s->c == 0) return s->w[n * s->rs + k * s->cs];
  const int64_t c = k % s->c_pad;
  return c < s->c ? s->w[n * s->rs + c * s->taps + k / s->c_pad] : 0;
}

static int pack_from(const pc_qs8_gemm_ukernel* uk, int64_t n, int64_t k, const pc_wsrc* src,
                     void* buf, size_t cap, pterun_compute_qs8_packed* out) {
  size_t sums, strips;
  if (uk == NULL) uk = select_for(n);
  if (src->w == NULL || buf == NULL || out == NULL || ((uintptr_t)buf & 63u) != 0 ||
      pack_layout(uk, n, k, &sums, &strips) != 0 || cap < sums + strips)
    return -1;
  int32_t* col_sum = (int32_t*)buf;
  unsigned char* sp = (unsigned char*)buf + sums;
  const int64_t nr = uk->nr, kq = (k + PC_QS8_KR - 1) / PC_QS8_KR;
  int64_t j0, q, jj, t;
  for (j0 = 0; j0 < n; j0 += nr)
    for (q = 0; q < kq; ++q)
      for (jj = 0; jj < nr; ++jj)
        for (t = 0; t < PC_QS8_KR; ++t) {
          const int64_t col = j0 + jj, kk = q * PC_QS8_KR + t;
          const int8_t v = col < n && kk < k ? wsrc_at(src, col, kk) : 0;
          if (uk->b_bytes == 2) {
            const int16_t v16 = v;
            memcpy(sp, &v16, sizeof v16);
            sp += 2;
          } else {
            memcpy(sp, &v, 1);
            sp += 1;
          }
        }
  for (j0 = 0; j0 < n; ++j0) {
    int32_t s = 0;
    for (t = 0; t < k; ++t) s += wsrc_at(src, j0, t);
    col_sum[j0] = s;
  }
  out->uk = uk;
  out->n = n;
  out->k = k;
  out->kq = kq;
  out->col_sum = col_sum;
  out->strips = (const unsigned char*)buf + sums;
  return 0;
}

int pterun_compute_qs8_pack(const pc_qs8_gemm_ukernel* uk, int64_t n, int64_t k, const int8_t* w,
                            int64_t w_rs, int64_t w_cs, void* buf, size_t cap,
                            pterun_compute_qs8_packed* out) {
  const pc_wsrc src = {w, w_rs, w_cs, 0, 0, 0};
  return pack_from(uk, n, k, &src, buf, cap, out);
}

int pterun_compute_qs8_pack_conv(const pc_qs8_gemm_ukernel* uk, int64_t n, int64_t c, int64_t c_pad,
                                 int64_t kh, int64_t kw, const int8_t* w, void* buf, size_t cap,
                                 pterun_compute_qs8_packed* out) {
  if (c < 1 || c_pad < c || kh < 1 || kw < 1 || c_pad > PTERUN_COMPUTE_QS8_MAX_K ||
      kh > PTERUN_COMPUTE_QS8_MAX_K || kw > PTERUN_COMPUTE_QS8_MAX_K ||
      kh * kw > PTERUN_COMPUTE_QS8_MAX_K / c_pad)
    return -1;
  const pc_wsrc src = {w, c * kh * kw, 1, c, kh * kw, c_pad};
  return pack_from(uk, n, c_pad * kh * kw, &src, buf, cap, out);
}

/* ---- epilogue ------------------------------------------------------------ */

typedef struct pc_qs8_job {
  const pc_qs8_gemm_ukernel* uk;
  const pterun_compute_qs8_packed* w;
  const pterun_compute_qs8_epilogue* ep;
  const pterun_compute_matrix* a;
  pterun_compute_qs8_rows_fn a_rows;
  void* a_ctx;
  const pterun_compute_matrix* c;
  const pc_qs8_ig* ig;      /* A read in place (pc_qs8_gemm_ig), else NULL */
  const unsigned char* pre; /* A's panels packed once (qs8_task_direct), else NULL */
  size_t pre_stride;        /* bytes per packed panel */
  const int32_t* pre_rs;    /* their row sums, MR per panel */
  int64_t m;
  int a_signed;
  int32_t a_zp; /* shifted to the uint8 domain */
  int epi_avx2; /* the epilogue's int32 path runs pc_qs8_epilogue_rows_avx2 (1) or _avx512 (2) */
} pc_qs8_job;

/* Rows [i0, i0 + rows) x [k0, k0 + kc) of a strided A, as raw bytes. */
static void fetch_matrix_rows(const pterun_compute_matrix* a, int64_t i0, int64_t rows, int64_t k0,
                              int64_t kc, uint8_t* dst) {
  const uint8_t* base = (const uint8_t*)a->data;
  int64_t r, kk;
  for (r = 0; r < rows; ++r) {
    const uint8_t* src = base + (i0 + r) * a->rs + k0 * a->cs;
    if (a->cs == 1)
      memcpy(dst + r * kc, src, (size_t)kc);
    else
      for (kk = 0; kk < kc; ++kk) dst[r * kc + kk] = src[kk * a->cs];
  }
}

/* The remaining whole groups from q on, then the zero-padded last group,
 * into dst (uint8_t* or int16_t*), adding the stored values to s. */
#define PACK_GROUPS(dst)                                                                           \
  do {                                                                                             \
    for (; q < kfull / PC_QS8_KR; ++q)                                                             \
      for (t = 0; t < PC_QS8_KR; ++t) {                                                            \
        const uint8_t v_ = (uint8_t)(src[q * PC_QS8_KR + t] ^ flip);                               \
        (dst)[(size_t)q * step + (size_t)t] = v_;                                                  \
        s += v_;                                                                                   \
      }                                                                                            \
    for (t = 0; kfull < kc && t < PC_QS8_KR; ++t) {                                                \
      const uint8_t v_ = kfull + t < kc ? (uint8_t)(src[kfull + t] ^ flip) : 0;                    \
      (dst)[(size_t)(kfull / PC_QS8_KR) * step + (size_t)t] = v_;                                  \
      s += v_;                                                                                     \
    }                                                                                              \
  } while (0)

/* Interleaves rows x kc raw A values (row stride raw_rs) into a panel of MR rows x ceil(kc/4)
 * groups of 4 (uint8, or int16 when a_bytes is 2), zero padded, and adds the
 * shifted row sums. */
#if defined(__SSE2__)
/* 16 bytes of row r from group q on (a copy padded with bytes that flip to 0
 * past kc; zeros for a row past the panel's rows), flipped. With `slack` the
 * 16 bytes at any row's group are readable (the task's own buffer): the
 * bytes past kc are masked to 0 in registers, not copied through memory (a
 * variable-length copy and a failed store forward per row were a third of
 * an int8 stem convolution with K = 27). */
static inline __m128i load_groups(const uint8_t* raw, int64_t raw_rs, int64_t r, int64_t rows,
                                  int64_t q, int64_t kc, __m128i vflip, uint8_t flip, int slack) {
  if (r >= rows) return _mm_setzero_si128();
  const uint8_t* src = raw + r * raw_rs + q * PC_QS8_KR;
  if ((q + 4) * PC_QS8_KR <= kc)
    return _mm_xor_si128(_mm_loadu_si128((const __m128i*)(const void*)src), vflip);
  if (slack) {
    const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m128i keep = _mm_cmplt_epi8(lane, _mm_set1_epi8((char)(kc - q * PC_QS8_KR)));
    return _mm_and_si128(_mm_xor_si128(_mm_loadu_si128((const __m128i*)(const void*)src), vflip),
                         keep);
  }
  uint8_t tail[16];
  memset(tail, flip, sizeof tail);
  memcpy(tail, src, (size_t)(kc - q * PC_QS8_KR));
  return _mm_xor_si128(_mm_loadu_si128((const __m128i*)(const void*)tail), vflip);
}

/* The int16 panel of an even MR, two rows at a time: 4 groups of both rows
 * widened, then each group's pair of rows stored as one 16-byte run (the
 * panel keeps a group's rows next to each other). */
static void pack_panel_i16_pairs(int64_t mr, const uint8_t* raw, int64_t raw_rs, int64_t rows,
                                 int64_t kc, uint8_t flip, int slack, int16_t* panel,
                                 int32_t* row_sum) {
  const int64_t kqb = (kc + PC_QS8_KR - 1) / PC_QS8_KR;
  const size_t step = (size_t)mr * PC_QS8_KR;
  const __m128i vflip = _mm_set1_epi8((char)flip), zero = _mm_setzero_si128();
  int64_t pr, q;
  for (pr = 0; pr < mr; pr += 2) {
    __m128i sa = zero, sb = zero;
    int16_t* d0 = panel + pr * PC_QS8_KR;
    for (q = 0; q < kqb; q += 4) {
      const __m128i a = load_groups(raw, raw_rs, pr, rows, q, kc, vflip, flip, slack);
      const __m128i b = load_groups(raw, raw_rs, pr + 1, rows, q, kc, vflip, flip, slack);
      const __m128i alo = _mm_unpacklo_epi8(a, zero), ahi = _mm_unpackhi_epi8(a, zero);
      const __m128i blo = _mm_unpacklo_epi8(b, zero), bhi = _mm_unpackhi_epi8(b, zero);
      int16_t* d = d0 + (size_t)q * step;
      _mm_storeu_si128((__m128i*)(void*)d, _mm_unpacklo_epi64(alo, blo));
      if (q + 1 < kqb) _mm_storeu_si128((__m128i*)(void*)(d + step), _mm_unpackhi_epi64(alo, blo));
      if (q + 2 < kqb)
        _mm_storeu_si128((__m128i*)(void*)(d + 2 * step), _mm_unpacklo_epi64(ahi, bhi));
      if (q + 3 < kqb)
        _mm_storeu_si128((__m128i*)(void*)(d + 3 * step), _mm_unpackhi_epi64(ahi, bhi));
      sa = _mm_add_epi64(sa, _mm_sad_epu8(a, zero));
      sb = _mm_add_epi64(sb, _mm_sad_epu8(b, zero));
    }
    if (pr < rows)
      row_sum[pr] += _mm_cvtsi128_si32(sa) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sa, sa));
    if (pr + 1 < rows)
      row_sum[pr + 1] += _mm_cvtsi128_si32(sb) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sb, sb));
  }
}

/* The uint8 panel of an MR that is a multiple of 4, four rows at a time:
 * 4 groups of each row, then each group's four rows stored as one 16-byte
 * run (a 4-byte transpose). The VNNI kernel's panels; the byte loop it
 * replaces was a fifth of an int8 MobileNet's time. */
static void pack_panel_u8_quads(int64_t mr, const uint8_t* raw, int64_t raw_rs, int64_t rows,
                                int64_t kc, uint8_t flip, int slack, uint8_t* panel,
                                int32_t* row_sum) {
  const int64_t kqb = (kc + PC_QS8_KR - 1) / PC_QS8_KR;
  const size_t step = (size_t)mr * PC_QS8_KR;
  const __m128i vflip = _mm_set1_epi8((char)flip), zero = _mm_setzero_si128();
  for (int64_t pr = 0; pr < mr; pr += 4) {
    __m128i s[4] = {zero, zero, zero, zero};
    uint8_t* d0 = panel + pr * PC_QS8_KR;
    for (int64_t q = 0; q < kqb; q += 4) {
      __m128i r[4];
      for (int i = 0; i < 4; ++i) {
        r[i] = load_groups(raw, raw_rs, pr + i, rows, q, kc, vflip, flip, slack);
        s[i] = _mm_add_epi64(s[i], _mm_sad_epu8(r[i], zero));
      }
      const __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]), t1 = _mm_unpacklo_epi32(r[2], r[3]);
      const __m128i t2 = _mm_unpackhi_epi32(r[0], r[1]), t3 = _mm_unpackhi_epi32(r[2], r[3]);
      uint8_t* d = d0 + (size_t)q * step;
      _mm_storeu_si128((__m128i*)(void*)d, _mm_unpacklo_epi64(t0, t1));
      if (q + 1 < kqb) _mm_storeu_si128((__m128i*)(void*)(d + step), _mm_unpackhi_epi64(t0, t1));
      if (q + 2 < kqb)
        _mm_storeu_si128((__m128i*)(void*)(d + 2 * step), _mm_unpacklo_epi64(t2, t3));
      if (q + 3 < kqb)
        _mm_storeu_si128((__m128i*)(void*)(d + 3 * step), _mm_unpackhi_epi64(t2, t3));
    }
    for (int i = 0; i < 4; ++i)
      if (pr + i < rows)
        row_sum[pr + i] +=
            _mm_cvtsi128_si32(s[i]) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(s[i], s[i]));
  }
}
#endif

/* slack: 16 bytes are readable at every group of every row (load_groups). */
static void pack_panel(const pc_qs8_gemm_ukernel* uk, const uint8_t* raw, int64_t raw_rs,
                       int64_t rows, int64_t kc, uint8_t flip, int slack, void* panel,
                       int32_t* row_sum) {
  const int64_t mr = uk->mr, kqb = (kc + PC_QS8_KR - 1) / PC_QS8_KR;
  const int64_t kfull = kc / PC_QS8_KR * PC_QS8_KR;
  const size_t step = (size_t)mr * PC_QS8_KR; /* elements from one group to the next */
  int64_t q, i, t;
  (void)slack; /* without SSE2: byte loops */
#if defined(__SSE2__)
  /* The SSE4.1 bit stands for "SIMD allowed" (PTERUN_ISA_MASK=0: the byte
   * loops below, which give the same panels). */
  const int simd = (pterun_cpu_features() & PTERUN_CPU_X86_SSE4_1) != 0;
  if (simd && uk->a_bytes == 2 && mr % 2 == 0) {
    pack_panel_i16_pairs(mr, raw, raw_rs, rows, kc, flip, slack, (int16_t*)panel, row_sum);
    return;
  }
  if (simd && uk->a_bytes == 1 && mr % 4 == 0) {
    pack_panel_u8_quads(mr, raw, raw_rs, rows, kc, flip, slack, (uint8_t*)panel, row_sum);
    return;
  }
#endif
  for (i = 0; i < mr; ++i) {
    const uint8_t* src = raw + i * raw_rs;
    int32_t s = 0;
    if (uk->a_bytes == 2) {
      int16_t* dst = (int16_t*)panel + i * PC_QS8_KR;
      if (i >= rows) {
        for (q = 0; q < kqb; ++q) memset(dst + (size_t)q * step, 0, PC_QS8_KR * sizeof(int16_t));
        continue;
      }
      q = 0;
#if defined(__SSE2__)
      if (simd) {
        /* 4 groups at a time: flip, widen to int16, 8 bytes per group. The
         * last, partial step reads a copy padded with bytes that flip to 0
         * and stores only the groups that exist. */
        const __m128i vflip = _mm_set1_epi8((char)flip), zero = _mm_setzero_si128();
        __m128i vs = zero;
        for (; q < kqb; q += 4) {
          __m128i x;
          if ((q + 4) * PC_QS8_KR <= kc) {
            x = _mm_loadu_si128((const __m128i*)(const void*)(src + q * PC_QS8_KR));
          } else {
            uint8_t tail[16];
            memset(tail, flip, sizeof tail);
            memcpy(tail, src + q * PC_QS8_KR, (size_t)(kc - q * PC_QS8_KR));
            x = _mm_loadu_si128((const __m128i*)(const void*)tail);
          }
          x = _mm_xor_si128(x, vflip);
          const __m128i lo = _mm_unpacklo_epi8(x, zero), hi = _mm_unpackhi_epi8(x, zero);
          int16_t* d = dst + (size_t)q * step;
          _mm_storel_epi64((__m128i*)(void*)d, lo);
          if (q + 1 < kqb)
            _mm_storel_epi64((__m128i*)(void*)(d + step), _mm_unpackhi_epi64(lo, lo));
          if (q + 2 < kqb) _mm_storel_epi64((__m128i*)(void*)(d + 2 * step), hi);
          if (q + 3 < kqb)
            _mm_storel_epi64((__m128i*)(void*)(d + 3 * step), _mm_unpackhi_epi64(hi, hi));
          vs = _mm_add_epi64(vs, _mm_sad_epu8(x, zero));
        }
        s += (int32_t)(_mm_cvtsi128_si32(vs) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(vs, vs)));
      }
#endif
      if (q < kqb) PACK_GROUPS(dst); /* without SSE2 */
    } else {
      uint8_t* dst = (uint8_t*)panel + i * PC_QS8_KR;
      if (i >= rows) {
        for (q = 0; q < kqb; ++q) memset(dst + (size_t)q * step, 0, PC_QS8_KR);
        continue;
      }
      q = 0;
      PACK_GROUPS(dst);
    }
    row_sum[i] += s;
  }
}
#undef PACK_GROUPS

/* Per-column terms of a task's columns [j0, j0 + cols): scale and bias as
 * arrays (bias 0 when absent), and for the int32 path A's zero point times the
 * column sums. */
typedef struct pc_qs8_cols {
  float sc[PC_QS8_TN], bi[PC_QS8_TN];
  int32_t zsum[PC_QS8_TN];
  int int32_path; /* no weight zero points: |sum| <= K * 255 * 128 < 2^31 */
} pc_qs8_cols;

static void column_terms(const pc_qs8_job* job, int64_t j0, int64_t cols, pc_qs8_cols* ct) {
  const pterun_compute_qs8_epilogue* ep = job->ep;
  int64_t j;
  ct->int32_path = ep->w_zp == NULL;
  for (j = 0; j < cols; ++j) {
    ct->sc[j] = ep->scale[ep->scale_per_column ? j0 + j : 0];
    ct->bi[j] = ep->bias != NULL ? ep->bias[j0 + j] : 0.0f;
    ct->zsum[j] = ct->int32_path ? job->a_zp * job->w->col_sum[j0 + j] : 0;
  }
  /* The last strip's columns past the product: a requantising entry reads
   * all NR of them (pterun_compute_qs8_rq) and stores none. */
  for (const int64_t end = (cols + job->uk->nr - 1) / job->uk->nr * job->uk->nr; j < end; ++j)
    ct->sc[j] = ct->bi[j] = 0.0f, ct->zsum[j] = 0;
}

static inline void store_q(const pterun_compute_matrix* c, int64_t at, int32_t q) {
  if (c->dtype == PTERUN_DTYPE_U8)
    ((uint8_t*)c->data)[at] = (uint8_t)q;
  else
    ((int8_t*)c->data)[at] = (int8_t)q;
}

/* Finishes rows x cols sums of the tile buffer (row stride PC_QS8_TN), rows
 * of the panel and columns j0.. of the product, into c at (ci, cj). */
static void epilogue(const pc_qs8_job* job, const pc_qs8_cols* ct, const int32_t* acc,
                     const int32_t* row_sum, int64_t rows, int64_t j0, int64_t cols,
                     const pterun_compute_matrix* c, int64_t ci, int64_t cj) {
  const pterun_compute_qs8_epilogue* ep = job->ep;
  const int64_t k = job->w->k, za = job->a_zp;
  const float qlo = (float)ep->q_min, qhi = (float)ep->q_max, zpo = (float)ep->out_zp;
  const float inv = ep->out_inv_scale;
  const int f32 = c->dtype == PTERUN_DTYPE_F32;
  int64_t r, j;
  int64_t j_avx2 = 0; /* columns every row has done */
#if defined(PC_QS8_HAVE_EPI_AVX2)
  if (job->epi_avx2 && ct->int32_path && c->cs == 1) {
    const int64_t esz = f32 ? (int64_t)sizeof(float) : 1;
    pc_qs8_epi_row er;
    er.zsum = ct->zsum, er.sc = ct->sc, er.bi = ct->bi;
    er.inv = inv, er.zpo = zpo, er.qlo = qlo, er.qhi = qhi, er.f_min = ep->f_min;
    er.f_max = ep->f_max;
    er.f32 = f32, er.u8 = c->dtype == PTERUN_DTYPE_U8;
    uint8_t* d = (uint8_t*)c->data + (ci * c->rs + cj) * esz;
#if defined(PC_QS8_HAVE_EPI_AVX512)
    if (job->epi_avx2 == 2)
      j_avx2 = pc_qs8_epilogue_rows_avx512(acc, PC_QS8_TN, rows, &er, cols, d, c->rs * esz);
    else
#endif
      j_avx2 = pc_qs8_epilogue_rows_avx2(acc, PC_QS8_TN, rows, &er, cols, d, c->rs * esz);
  }
#endif
  for (r = 0; r < rows; ++r) {
    const int32_t* ar = acc + r * PC_QS8_TN;
    const int64_t off = (ci + r) * c->rs + cj * c->cs;
    j = j_avx2;
#if defined(__SSE2__)
    if (ct->int32_path) {
      const int64_t cs = c->cs;
      const __m128 vinv = _mm_set1_ps(inv), vzp = _mm_set1_ps(zpo), vlo = _mm_set1_ps(qlo);
      const __m128 vhi = _mm_set1_ps(qhi), lim = _mm_set1_ps(PC_QS8_RNE_LIMIT);
      const __m128 nlim = _mm_set1_ps(-PC_QS8_RNE_LIMIT), magic = _mm_set1_ps(PC_QS8_RNE_MAGIC);
      const __m128 fmin = _mm_set1_ps(ep->f_min), fmax = _mm_set1_ps(ep->f_max);
      for (; j + 4 <= cols; j += 4) {
        const __m128i v =
            _mm_sub_epi32(_mm_loadu_si128((const __m128i*)(const void*)(ar + j)),
                          _mm_loadu_si128((const __m128i*)(const void*)(ct->zsum + j)));
        __m128 y = _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(v), _mm_loadu_ps(ct->sc + j)),
                              _mm_loadu_ps(ct->bi + j));
        if (f32) {
          y = _mm_min_ps(fmax, _mm_max_ps(fmin, y)); /* NaN stays, as below */
          if (cs == 1) {
            _mm_storeu_ps((float*)c->data + off + j, y);
          } else {
            float four[4];
            _mm_storeu_ps(four, y);
            for (int l = 0; l < 4; ++l) ((float*)c->data)[off + (j + l) * cs] = four[l];
          }
          continue;
        }
        __m128 p = _mm_min_ps(_mm_max_ps(_mm_mul_ps(y, vinv), nlim), lim);
        __m128 t = _mm_add_ps(vzp, _mm_sub_ps(_mm_add_ps(p, magic), magic));
        t = _mm_min_ps(_mm_max_ps(t, vlo), vhi);
        __m128i q = _mm_cvttps_epi32(t);
        q = _mm_packs_epi32(q, q);
        q = c->dtype == PTERUN_DTYPE_U8 ? _mm_packus_epi16(q, q) : _mm_packs_epi16(q, q);
        const int32_t four = _mm_cvtsi128_si32(q);
        if (cs == 1) {
          memcpy((uint8_t*)c->data + off + j, &four, 4);
        } else {
          uint8_t b[4];
          memcpy(b, &four, 4);
          for (int l = 0; l < 4; ++l) ((uint8_t*)c->data)[off + (j + l) * cs] = b[l];
        }
      }
    }
#endif
    for (; j < cols; ++j) {
      const int64_t n = j0 + j;
      float y;
      if (ct->int32_path) {
        y = (float)(ar[j] - ct->zsum[j]);
      } else {
        int64_t v = (int64_t)ar[j] - za * job->w->col_sum[n];
        if (ep->w_zp != NULL && ep->w_zp[n] != 0)
          v += (int64_t)ep->w_zp[n] * (za * k - (int64_t)row_sum[r]);
        y = (float)v;
      }
      y = y * ct->sc[j] + ct->bi[j];
      const int64_t at = off + j * c->cs;
      if (f32) {
        y = y < ep->f_min ? ep->f_min : y;
        y = y > ep->f_max ? ep->f_max : y;
        ((float*)c->data)[at] = y;
      } else {
        store_q(c, at, pc_qs8_requant(y, inv, zpo, qlo, qhi));
      }
    }
  }
}

/* Panels per staged run: whole 16-row blocks for the transpose when that
 * fits (MR 6: 8 panels, 48 rows), at least ~PC_QS8_STAGE_ROWS rows. */
static size_t stage_panels(size_t mr) {
  size_t unit = 16, p;
  while (unit % mr != 0) unit += 16; /* lcm(mr, 16) */
  if (unit > PC_QS8_STAGE_MAX) return (PC_QS8_STAGE_ROWS + mr - 1) / mr;
  p = unit / mr;
  while ((p + unit / mr) * mr <= PC_QS8_STAGE_ROWS) p += unit / mr;
  return p;
}

/* The epilogue of a panel's sums into C. A column-major int8 C (a
 * convolution's NCHW output: rows are pixels, a column's rows are
 * contiguous) is staged: the epilogue's stores at a stride of H*W bytes fall
 * into a few L1 sets (H*W a multiple of 4 KiB maps every channel to one set)
 * and evict each other. The epilogue writes runs of up to PC_QS8_STAGE_ROWS
 * rows row-major into `stage`; a transpose writes each column's run at once
 * (when the run is whole, or `last`). *g0: the run's first row. */
static int staged_c(const pterun_compute_matrix* c) {
  return c->rs == 1 && c->cs > 1 && c->dtype != PTERUN_DTYPE_F32;
}

/* The staged run's transpose into C once rows up to i0 + rows are in
 * `stage` (finish_panel). */
static void flush_stage(const pc_qs8_job* job, int64_t rows, int64_t i0, int64_t j0, int64_t cols,
                        const uint8_t* stage, int last, int64_t* g0) {
  const pterun_compute_matrix* c = job->c;
  const int64_t run = (int64_t)stage_panels((size_t)job->uk->mr) * job->uk->mr;
  if (i0 + rows - *g0 >= run || last) {
    pterun_compute_u8_transpose(i0 + rows - *g0, cols, stage, PC_QS8_TN,
                                (uint8_t*)c->data + *g0 + j0 * c->cs, c->cs);
    *g0 = i0 + rows;
  }
}

static void finish_panel(const pc_qs8_job* job, const pc_qs8_cols* ct, const int32_t* acc,
                         const int32_t* row_sum, int64_t rows, int64_t i0, int64_t j0, int64_t cols,
                         uint8_t* stage, int last, int64_t* g0) {
  const pterun_compute_matrix* c = job->c;
  if (!staged_c(c)) {
    epilogue(job, ct, acc, row_sum, rows, j0, cols, c, i0, j0);
    return;
  }
  const pterun_compute_matrix sm = {stage, c->dtype, PC_QS8_TN, 1};
  epilogue(job, ct, acc, row_sum, rows, j0, cols, &sm, i0 - *g0, 0);
  flush_stage(job, rows, i0, j0, cols, stage, last, g0);
}

static void qs8_task(void* ctx, size_t pi, size_t sj, size_t npi, size_t nsj) {
  const pc_qs8_job* job = (const pc_qs8_job*)ctx;
  const pc_qs8_gemm_ukernel* uk = job->uk;
  const pterun_compute_qs8_packed* w = job->w;
  const int64_t mr = uk->mr, nr = uk->nr, k = w->k;
  const size_t strip_bytes = (size_t)w->kq * (size_t)nr * PC_QS8_KR * (size_t)uk->b_bytes;
  const uint8_t flip = job->a_signed ? 0x80 : 0;
  /* + 16: the slack load_groups reads past the last row's kc bytes */
  _Alignas(64) uint8_t raw[PC_QS8_MR_MAX * PC_QS8_KB + 16];
  _Alignas(64) int16_t panel[PC_QS8_MR_MAX * PC_QS8_KB];
  _Alignas(64) int32_t acc[PC_QS8_MR_MAX * PC_QS8_TN];
  int32_t row_sum[PC_QS8_MR_MAX];
  pc_qs8_cols ct;
  const int64_t j0 = (int64_t)sj * nr;
  const int64_t cols = (int64_t)nsj * nr < w->n - j0 ? (int64_t)nsj * nr : w->n - j0;
  size_t p, s;
  _Alignas(64) uint8_t stage[PC_QS8_STAGE_MAX * PC_QS8_TN]; /* finish_panel's */
  int64_t g0 = (int64_t)pi * mr;                            /* first row of the staged run */
  column_terms(job, j0, cols, &ct);
  for (p = pi; p < pi + npi; ++p) {
    const int64_t i0 = (int64_t)p * mr;
    const int64_t rows = mr < job->m - i0 ? mr : job->m - i0;
    int64_t k0;
    memset(row_sum, 0, sizeof row_sum);
    for (k0 = 0; k0 < k; k0 += PC_QS8_KB) {
      const int64_t kc = PC_QS8_KB < k - k0 ? PC_QS8_KB : k - k0;
      const size_t kqb = (size_t)((kc + PC_QS8_KR - 1) / PC_QS8_KR);
      if (job->a_rows != NULL) {
        job->a_rows(job->a_ctx, i0, rows, k0, kc, raw);
        pack_panel(uk, raw, kc, rows, kc, flip, 1, panel, row_sum);
      } else if (job->a->cs == 1) { /* rows read in place */
        pack_panel(uk, (const uint8_t*)job->a->data + i0 * job->a->rs + k0, job->a->rs, rows, kc,
                   flip, 0, panel, row_sum);
      } else {
        fetch_matrix_rows(job->a, i0, rows, k0, kc, raw);
        pack_panel(uk, raw, kc, rows, kc, flip, 1, panel, row_sum);
      }
      for (s = 0; s < nsj; ++s) {
        const unsigned char* b =
            (const unsigned char*)w->strips + (sj + s) * strip_bytes +
            (size_t)(k0 / PC_QS8_KR) * (size_t)nr * PC_QS8_KR * (size_t)uk->b_bytes;
        uk->fn(kqb, panel, b, acc + s * (size_t)nr, PC_QS8_TN, k0 > 0);
      }
    }
    finish_panel(job, &ct, acc, row_sum, rows, i0, j0, cols, stage, p - pi + 1 == npi, &g0);
  }
}

/* qs8_task where A needs no packing here, and none of its buffers on this
 * stack: read in place by the indirect entries (job->ig), or the panels
 * run_prepacked packed once (job->pre). */
static void qs8_task_direct(void* ctx, size_t pi, size_t sj, size_t npi, size_t nsj) {
  const pc_qs8_job* job = (const pc_qs8_job*)ctx;
  const pc_qs8_gemm_ukernel* uk = job->uk;
  const pterun_compute_qs8_packed* w = job->w;
  const int64_t mr = uk->mr, nr = uk->nr;
  const size_t strip_bytes = (size_t)w->kq * (size_t)nr * PC_QS8_KR * (size_t)uk->b_bytes;
  _Alignas(64) int32_t acc[PC_QS8_MR_MAX * PC_QS8_TN];
  _Alignas(64) uint8_t stage[PC_QS8_STAGE_MAX * PC_QS8_TN];
  int32_t row_sum[PC_QS8_MR_MAX];
  pc_qs8_cols ct;
  const int64_t j0 = (int64_t)sj * nr;
  const int64_t cols = (int64_t)nsj * nr < w->n - j0 ? (int64_t)nsj * nr : w->n - j0;
  int64_t g0 = (int64_t)pi * mr;
  column_terms(job, j0, cols, &ct);
  /* An int8 / uint8 C is finished by the microkernel's requantising entry
   * where it has one: in place with unit column stride (a channels-last
   * output), else into the staged run (finish_panel's). */
  const int staged = staged_c(job->c);
  pterun_compute_qs8_rq rq = {NULL, NULL, NULL, 0.0f, 0.0f, 0.0f, 0.0f};
  if (job->ig != NULL && uk->fn_igq != NULL && job->c->dtype != PTERUN_DTYPE_F32 &&
      (job->c->cs == 1 || staged)) {
    rq.zsum = ct.zsum;
    rq.inv = job->ep->out_inv_scale, rq.zpo = (float)job->ep->out_zp;
    rq.qlo = (float)job->ep->q_min, rq.qhi = (float)job->ep->q_max;
  }
  for (size_t p = pi; p < pi + npi; ++p) {
    const int64_t i0 = (int64_t)p * mr;
    const int64_t rows = mr < job->m - i0 ? mr : job->m - i0;
    if (job->ig != NULL) { /* the pixels' rows where they lie; a short panel repeats its first */
      const pc_qs8_ig* ig = job->ig;
      const uint8_t* rp[PC_QS8_MR_MAX];
      int64_t y = i0 / ig->ow, x = i0 % ig->ow; /* one division per panel */
      for (int64_t r = 0; r < mr; ++r) {
        if (r < rows) {
          rp[r] = ig->base + y * ig->row_step + x * ig->col_step;
          if (++x == ig->ow) x = 0, ++y;
        } else {
          rp[r] = rp[0];
        }
      }
      if (rq.zsum != NULL) { /* requantised in the microkernel */
        uint8_t* cp =
            staged ? stage + (i0 - g0) * PC_QS8_TN : (uint8_t*)job->c->data + i0 * job->c->rs + j0;
        const size_t ldc = staged ? PC_QS8_TN : (size_t)job->c->rs;
        for (size_t s = 0; s < nsj; ++s) {
          const int64_t js = (int64_t)s * nr;
          rq.zsum = ct.zsum + js, rq.sc = ct.sc + js, rq.bi = ct.bi + js;
          uk->fn_igq(ig->nseg, ig->seg, rp,
                     (const unsigned char*)w->strips + (sj + s) * strip_bytes, &rq, cp + js, ldc,
                     (size_t)rows, (size_t)(cols - js < nr ? cols - js : nr), job->a_signed);
        }
        if (staged) flush_stage(job, rows, i0, j0, cols, stage, p - pi + 1 == npi, &g0);
        continue;
      }
      memset(row_sum, 0, sizeof row_sum); /* unread: ig has no weight zero points */
      for (size_t s = 0; s < nsj; ++s)
        uk->fn_ig(ig->nseg, ig->seg, rp, (const unsigned char*)w->strips + (sj + s) * strip_bytes,
                  acc + s * (size_t)nr, PC_QS8_TN, job->a_signed);
    } else {
      memcpy(row_sum, job->pre_rs + p * (size_t)mr, sizeof(int32_t) * (size_t)mr);
      for (size_t s = 0; s < nsj; ++s)
        uk->fn((size_t)w->kq, job->pre + p * job->pre_stride,
               (const unsigned char*)w->strips + (sj + s) * strip_bytes, acc + s * (size_t)nr,
               PC_QS8_TN, 0);
    }
    finish_panel(job, &ct, acc, row_sum, rows, i0, j0, cols, stage, p - pi + 1 == npi, &g0);
  }
}

/* The microkernel for an M-row product: uk, or one reading the same packed
 * weights (ISA, NR, element sizes) that computes at least 1/16 fewer rows
 * (padding included): M = 32 runs 4-row panels (32 rows, not 36), M = 4096
 * stays on 6-row ones (4098). */
static const pc_qs8_gemm_ukernel* row_kernel(const pc_qs8_gemm_ukernel* uk, int64_t m) {
  const pc_qs8_gemm_ukernel* best = uk;
  int64_t best_rows = (m + uk->mr - 1) / uk->mr * uk->mr;
  size_t i;
  for (i = 0; i < sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0]; ++i) {
    const pc_qs8_gemm_ukernel* o = &g_qs8_ukernels[i];
    const int64_t rows = (m + o->mr - 1) / o->mr * o->mr;
    if (o->isa == uk->isa && o->nr == uk->nr && o->a_bytes == uk->a_bytes &&
        o->b_bytes == uk->b_bytes && rows * 16 <= best_rows * 15) {
      best = o;
      best_rows = rows;
    }
  }
  return best;
}

static int qs8_run(pterun_threadpool* pool, size_t max_threads, int64_t m,
                   const pterun_compute_matrix* a, pterun_compute_qs8_rows_fn a_rows, void* a_ctx,
                   int32_t a_dtype, const pc_qs8_ig* ig, const pterun_compute_qs8_packed* w,
                   const pterun_compute_qs8_epilogue* ep, const pterun_compute_matrix* c);

/* The weight, epilogue and C checks of both entries. */
static int bad_w_ep_c(const pterun_compute_qs8_packed* w, const pterun_compute_qs8_epilogue* ep,
                      const pterun_compute_matrix* c) {
  return w == NULL || w->uk == NULL || ep == NULL || ep->scale == NULL || c == NULL ||
         c->data == NULL || c->rs < 0 || c->cs < 0 ||
         (c->dtype != PTERUN_DTYPE_U8 && c->dtype != PTERUN_DTYPE_I8 &&
          c->dtype != PTERUN_DTYPE_F32);
}

int pterun_compute_qs8_gemm(pterun_threadpool* pool, size_t max_threads, int64_t m,
                            const pterun_compute_matrix* a, pterun_compute_qs8_rows_fn a_rows,
                            void* a_ctx, int32_t a_dtype, const pterun_compute_qs8_packed* w,
                            const pterun_compute_qs8_epilogue* ep, const pterun_compute_matrix* c) {
  if (bad_w_ep_c(w, ep, c) || m < 0 || (a_dtype != PTERUN_DTYPE_U8 && a_dtype != PTERUN_DTYPE_I8))
    return -1;
  if (a_rows == NULL &&
      (a == NULL || a->data == NULL || a->dtype != a_dtype || a->rs < 0 || a->cs < 0))
    return -1;
  if (m == 0) return 0;
  return qs8_run(pool, max_threads, m, a, a_rows, a_ctx, a_dtype, NULL, w, ep, c);
}

/* qs8_run's product over A panels packed here once for every task (the
 * caller checked that they fit): the buffer lives on this frame only, so
 * with qs8_task_direct's (which packs nothing) the stack is no deeper than
 * qs8_task's. */
static __attribute__((noinline)) void run_prepacked(pterun_threadpool* pool, pc_qs8_job* job,
                                                    size_t panels, size_t strips, size_t tile_i,
                                                    size_t tile_j, size_t threads) {
  _Alignas(64) unsigned char pre[PC_QS8_PREPACK_BYTES];
  int32_t pre_rs[PC_QS8_PREPACK_ROWS];
  const pterun_compute_matrix* a = job->a;
  const size_t mr = (size_t)job->uk->mr;
  const size_t pre_stride = (size_t)job->w->kq * mr * PC_QS8_KR * (size_t)job->uk->a_bytes;
  const uint8_t flip = job->a_signed ? 0x80 : 0;
  memset(pre_rs, 0, sizeof(int32_t) * panels * mr);
  for (size_t p = 0; p < panels; ++p) {
    const int64_t i0 = (int64_t)(p * mr);
    const int64_t rows = (int64_t)mr < job->m - i0 ? (int64_t)mr : job->m - i0;
    pack_panel(job->uk, (const uint8_t*)a->data + i0 * a->rs, a->rs, rows, job->w->k, flip, 0,
               pre + p * pre_stride, pre_rs + p * mr);
  }
  job->pre = pre, job->pre_stride = pre_stride, job->pre_rs = pre_rs;
  pterun_parallelize_2d_tile(pool, qs8_task_direct, job, panels, strips, tile_i, tile_j,
                             PTERUN_PARALLEL_MAX_THREADS(threads));
}

int pterun_compute_qs8_conv2d_nhwc_in_place(const pc_qs8_gemm_ukernel* uk) {
  if (uk == NULL) uk = pterun_compute_qs8_gemm_select(pterun_cpu_features());
  for (size_t i = 0; i < sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0]; ++i) {
    const pc_qs8_gemm_ukernel* o = &g_qs8_ukernels[i];
    if ((o == uk || (o->isa == uk->isa && o->nr == uk->nr && o->a_bytes == uk->a_bytes &&
                     o->b_bytes == uk->b_bytes)) &&
        o->fn_ig == NULL)
      return 0;
  }
  return uk->fn_ig != NULL;
}

int pc_qs8_gemm_ig(pterun_threadpool* pool, size_t max_threads, int64_t m, const pc_qs8_ig* ig,
                   const pterun_compute_qs8_packed* w, const pterun_compute_qs8_epilogue* ep,
                   const pterun_compute_matrix* c) {
  if (m <= 0 || ig == NULL || bad_w_ep_c(w, ep, c) || ep->w_zp != NULL ||
      (ig->a_dtype != PTERUN_DTYPE_U8 && ig->a_dtype != PTERUN_DTYPE_I8) ||
      row_kernel(w->uk, m)->fn_ig == NULL)
    return -1;
  return qs8_run(pool, max_threads, m, NULL, NULL, NULL, ig->a_dtype, ig, w, ep, c);
}

static int qs8_run(pterun_threadpool* pool, size_t max_threads, int64_t m,
                   const pterun_compute_matrix* a, pterun_compute_qs8_rows_fn a_rows, void* a_ctx,
                   int32_t a_dtype, const pc_qs8_ig* ig, const pterun_compute_qs8_packed* w,
                   const pterun_compute_qs8_epilogue* ep, const pterun_compute_matrix* c) {
  pc_qs8_job job;
  job.uk = row_kernel(w->uk, m);
  if (job.uk >= g_qs8_ukernels &&
      job.uk < g_qs8_ukernels + sizeof g_qs8_ukernels / sizeof g_qs8_ukernels[0])
    pc_used_mark(ig != NULL ? g_qs8_ig_ran : g_qs8_ran, (size_t)(job.uk - g_qs8_ukernels));
  job.ig = ig;
  job.w = w;
  job.ep = ep;
  job.a = a;
  job.a_rows = a_rows;
  job.a_ctx = a_ctx;
  job.c = c;
  job.m = m;
  job.a_signed = a_dtype == PTERUN_DTYPE_I8;
  job.a_zp = ep->a_zp + (job.a_signed ? 128 : 0);
  job.epi_avx2 = 0;
#if defined(PC_QS8_HAVE_EPI_AVX2)
  job.epi_avx2 = (pterun_cpu_features() & PTERUN_CPU_X86_AVX2) != 0;
#endif
#if defined(PC_QS8_HAVE_EPI_AVX512)
  if (job.epi_avx2 && (pterun_cpu_features() & PTERUN_CPU_X86_AVX512F) != 0) job.epi_avx2 = 2;
#endif

  const size_t nr = (size_t)w->uk->nr, mr = (size_t)job.uk->mr;
  const size_t strips = (size_t)((w->n + (int64_t)nr - 1) / (int64_t)nr);
  const size_t panels = ((size_t)m + mr - 1) / mr;
  const size_t strip_bytes = (size_t)w->kq * nr * PC_QS8_KR * (size_t)w->uk->b_bytes;
  size_t tile_j = PC_QS8_B_TILE_BYTES / strip_bytes;
  if (tile_j > PC_QS8_TN / nr) tile_j = PC_QS8_TN / nr;
  if (tile_j > strips) tile_j = strips;
  if (tile_j == 0) tile_j = 1;
  size_t threads = pterun_threadpool_threads_for(
      pool,
      pc_parallel_flags(max_threads, (double)m * (double)w->n * (double)w->k, PC_PS_QS8_GEMM_MAC));
  if ((double)m * (double)w->n * (double)w->k < PC_QS8_PARALLEL_MIN) threads = 1;
  size_t tile_i = panels;
  if (threads > 1) {
    /* About four tasks per thread; the column runs already give some. */
    const size_t jtiles = (strips + tile_j - 1) / tile_j;
    const size_t want = 4 * threads > jtiles ? (4 * threads + jtiles - 1) / jtiles : 1;
    tile_i = (panels + want - 1) / want;
    if (tile_i == 0) tile_i = 1;
  }
  /* A small contiguous A read by several runs of columns: its panels packed
   * once (run_prepacked) rather than once per run (a decode-sized linear
   * with many output columns packed its A a dozen times). */
  if (ig == NULL && a_rows == NULL && a->cs == 1 && w->k <= PC_QS8_KB && strips > tile_j &&
      panels * mr <= PC_QS8_PREPACK_ROWS &&
      panels * (size_t)w->kq * mr * PC_QS8_KR * (size_t)job.uk->a_bytes <= PC_QS8_PREPACK_BYTES) {
    run_prepacked(threads > 1 ? pool : NULL, &job, panels, strips, tile_i, tile_j, threads);
    return 0;
  }
  job.pre = NULL;
  pterun_parallelize_2d_tile(threads > 1 ? pool : NULL, ig != NULL ? qs8_task_direct : qs8_task,
                             &job, panels, strips, tile_i, tile_j,
                             PTERUN_PARALLEL_MAX_THREADS(threads));
  return 0;
}
