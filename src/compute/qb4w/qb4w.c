/* The 4-bit blockwise linear engine (pterun_compute_qb4w_*): load-time
 * packing into 16-column panels (ukernel.h has the layout and the
 * arithmetic) and the driver that splits rows and panels over the pool and
 * hands whole panels to a microkernel of the manifest qb4w_ukernels.inc. */
#include <string.h>

#include "pterun/half.h"
#include "src/compute/parallel.h"
#include "src/compute/qb4w/ukernel.h"
#include "src/compute/used.h"

static const pterun_compute_qb4w_ukernel g_ukernels[] = {
#define PC_QB4W_UKERNEL(isa, fn) {(isa), fn, #fn},
#include "src/compute/qb4w/qb4w_ukernels.inc"
#undef PC_QB4W_UKERNEL
};
enum { PC_NUK = sizeof g_ukernels / sizeof g_ukernels[0] };

static atomic_uchar g_ran[PC_NUK];
PC_USED_FAMILY(pc_used_qb4w, "qb4w", g_ukernels, g_ran);

const pterun_compute_qb4w_ukernel* pterun_compute_qb4w_ukernels(size_t* count_out) {
  if (count_out != NULL) *count_out = PC_NUK;
  return g_ukernels;
}

const pterun_compute_qb4w_ukernel* pterun_compute_qb4w_select(uint64_t features) {
  const pterun_compute_qb4w_ukernel* best = &g_ukernels[0];
  size_t i;
  for (i = 1; i < PC_NUK; ++i)
    if ((g_ukernels[i].isa & features) == g_ukernels[i].isa) best = &g_ukernels[i];
  return best;
}

/* Bytes of one panel, or 0 for a geometry the engine does not take. */
static uint64_t panel_bytes(int64_t k, int64_t block, int scales_bf16, int has_bias) {
  uint64_t b;
  if (k < 8 || k >= ((int64_t)1 << 31) || block < 8 || block > 65536 || block % 8 != 0 ||
      k % block != 0 || k / block > PC_QB4W_MAX_BLOCKS)
    return 0;
  b = (uint64_t)k * 8u + (uint64_t)(k / block) * 16u * (scales_bf16 ? 2u : 4u) + 64u +
      (has_bias ? 64u : 0u);
  return (b + 63u) & ~(uint64_t)63u;
}

size_t pterun_compute_qb4w_pack_bytes(int64_t n, int64_t k, int64_t block, int scales_bf16,
                                      int has_bias) {
  const uint64_t pb = panel_bytes(k, block, scales_bf16, has_bias);
  uint64_t panels;
  /* n * k (the codes the packer reads) stays far inside int64 */
  if (pb == 0 || n < 1 || n >= ((int64_t)1 << 40) || n > ((int64_t)1 << 62) / k) return 0;
  panels = ((uint64_t)n + PC_QB4W_COLS - 1) / PC_QB4W_COLS;
  if (panels > (uint64_t)SIZE_MAX / pb) return 0;
  return (size_t)(panels * pb);
}

/* One code of column `col`, k index kk: from int8 codes or from unsigned
 * nibbles (two per byte, low first, value - 8). */
static inline __attribute__((always_inline)) int code_at(const int8_t* codes, const uint8_t* nib,
                                                         int64_t k, int64_t col, int64_t kk) {
  if (nib != NULL) return (int)((nib[col * (k / 2) + kk / 2] >> (4 * (kk & 1))) & 15) - 8;
  return codes[col * k + kk];
}

static inline __attribute__((always_inline)) int pack_impl(
    int64_t n, int64_t k, int64_t block, const int8_t* codes, const uint8_t* nib,
    const float* scales, const uint16_t* scales_bf16, const float* bias, uint8_t* dst, size_t cap,
    pterun_compute_qb4w_weights* out) {
  const int bf = scales_bf16 != NULL;
  const size_t bytes = pterun_compute_qb4w_pack_bytes(n, k, block, bf, bias != NULL);
  const int64_t blocks = bytes != 0 ? k / block : 0;
  const size_t sb = bf ? 2u : 4u;
  pterun_compute_qb4w_weights w;
  int64_t t, c, g, j, i;
  if (bytes == 0 || cap < bytes || (codes == NULL && nib == NULL) || dst == NULL || out == NULL ||
      (scales == NULL) == (scales_bf16 == NULL))
    return -1;
  if (codes != NULL)
    for (i = 0; i < n * k; ++i)
      if (codes[i] < -8 || codes[i] > 7) return -1;
  w.n = n;
  w.k = k;
  w.block = block;
  w.scales_bf16 = bf;
  w.has_bias = bias != NULL;
  w.tile_bytes = panel_bytes(k, block, bf, bias != NULL);
  w.tiles = dst;
  memset(dst, 0, bytes);
  for (t = 0; t < (n + PC_QB4W_COLS - 1) / PC_QB4W_COLS; ++t) {
    uint8_t* p = dst + (uint64_t)t * w.tile_bytes;
    uint8_t* sc = p + pc_qb4w_scales_offset(&w);
    uint8_t* kz = p + pc_qb4w_kz_offset(&w);
    for (c = 0; c < PC_QB4W_COLS; ++c) {
      const int64_t col = t * PC_QB4W_COLS + c;
      float kzc = 0.0f;
      if (col >= n) { /* a missing column: code 0 (nibbles 8), scale, kz and bias 0 */
        for (g = 0; g < blocks * (block / 8); ++g)
          memset(p + (uint64_t)g * 64u + 4u * (uint64_t)c, 0x88, 4);
        continue;
      }
      for (g = 0; g < blocks; ++g) {
        uint8_t* cw = p + (uint64_t)g * (uint64_t)block * 8u + 4u * (uint64_t)c;
        const size_t si = (size_t)(col * blocks + g);
        uint8_t* d = sc + ((uint64_t)g * 16u + (uint64_t)c) * sb;
        int32_t sum = 0;
        float s;
        for (j = 0; j < block / 8; ++j, cw += 64)
          for (i = 0; i < 4; ++i) {
            const int64_t kk = g * block + 8 * j + i;
            const int lo = code_at(codes, nib, k, col, kk),
                      hi = code_at(codes, nib, k, col, kk + 4);
            cw[i] = (uint8_t)((lo + 8) | ((hi + 8) << 4));
            sum += lo + hi;
          }
        if (bf) {
          memcpy(d, &scales_bf16[si], 2);
          s = pterun_bf16_to_f32(scales_bf16[si]);
        } else {
          memcpy(d, &scales[si], 4);
          s = scales[si];
        }
        kzc = kzc + s * (float)sum;
      }
      memcpy(kz + 4 * c, &kzc, 4);
      if (bias != NULL) memcpy(kz + 64 + 4 * c, &bias[col], 4);
    }
  }
  *out = w;
  return 0;
}

int pterun_compute_qb4w_pack(int64_t n, int64_t k, int64_t block, const int8_t* codes,
                             const float* scales, const uint16_t* scales_bf16, const float* bias,
                             uint8_t* dst, size_t cap, pterun_compute_qb4w_weights* out) {
  if (codes == NULL) return -1;
  return pack_impl(n, k, block, codes, NULL, scales, scales_bf16, bias, dst, cap, out);
}

int pterun_compute_qb4w_pack_u4(int64_t n, int64_t k, int64_t block, const uint8_t* nibbles,
                                const float* scales, const uint16_t* scales_bf16, const float* bias,
                                uint8_t* dst, size_t cap, pterun_compute_qb4w_weights* out) {
  if (nibbles == NULL) return -1;
  return pack_impl(n, k, block, NULL, nibbles, scales, scales_bf16, bias, dst, cap, out);
}

typedef struct pc_qb4w_job {
  const pterun_compute_qb4w_weights* w;
  pterun_compute_qb4w_tiles_fn fn;
  const int8_t* qa;
  const float* a_scale;
  const int32_t* a_zero;
  float* y;
} pc_qb4w_job;

/* Rows [i, i + ni) against panels [j, j + nj): per row its block sums
 * (recomputed per task: k bytes against the panels' k / 2 * 16 each), the
 * whole panels straight into y, a partial last one through a staging row. */
static void panels_task(void* c, size_t i, size_t j, size_t ni, size_t nj) {
  const pc_qb4w_job* b = (const pc_qb4w_job*)c;
  const pterun_compute_qb4w_weights* w = b->w;
  const size_t full = (size_t)(w->n / PC_QB4W_COLS), end = j + nj < full ? j + nj : full;
  const int64_t blocks = w->k / w->block;
  int32_t asum8[PC_QB4W_MAX_BLOCKS];
  size_t r;
  for (r = i; r < i + ni; ++r) {
    const int8_t* qa = b->qa + r * (size_t)w->k;
    float* y = b->y + r * (size_t)w->n;
    int64_t g, x;
    for (g = 0; g < blocks; ++g) {
      int32_t s = 0;
      for (x = 0; x < w->block; ++x) s += qa[g * w->block + x];
      asum8[g] = 8 * s;
    }
    if (end > j)
      b->fn(w, w->tiles + (uint64_t)j * w->tile_bytes, end - j, qa, asum8, b->a_scale[r],
            b->a_zero[r], y + j * PC_QB4W_COLS);
    if (j + nj > full) { /* the partial last panel */
      float tmp[PC_QB4W_COLS];
      b->fn(w, w->tiles + (uint64_t)full * w->tile_bytes, 1, qa, asum8, b->a_scale[r], b->a_zero[r],
            tmp);
      memcpy(y + full * PC_QB4W_COLS, tmp,
             (size_t)(w->n - (int64_t)full * PC_QB4W_COLS) * sizeof(float));
    }
  }
}

pterun_status pterun_compute_qb4w_linear_qa(const pterun_compute_qb4w_weights* w, const int8_t* qa,
                                            const float* a_scale, const int32_t* a_zero, int64_t m,
                                            float* y, const pterun_compute_qb4w_ukernel* uk,
                                            pterun_threadpool* pool, size_t max_threads) {
  const size_t panels = (size_t)((w->n + PC_QB4W_COLS - 1) / PC_QB4W_COLS);
  size_t tile_j;
  pc_qb4w_job b;
  if (m <= 0) return PTERUN_STATUS_OK;
  if (uk == NULL) uk = pterun_compute_qb4w_select(pterun_cpu_features());
  if (uk >= g_ukernels && uk < g_ukernels + PC_NUK) pc_used_mark(g_ran, (size_t)(uk - g_ukernels));
  b.w = w;
  b.fn = uk->tiles;
  b.qa = qa;
  b.a_scale = a_scale;
  b.a_zero = a_zero;
  b.y = y;
  /* panels in runs of 4 or more; the work estimate (bytes of panels read)
   * decides how many threads pay */
  tile_j = panels / 8;
  if (tile_j < 4) tile_j = 4;
  pterun_parallelize_2d_tile(
      pool, panels_task, &b, (size_t)m, panels, 1, tile_j,
      pc_parallel_flags(max_threads, (double)m * (double)panels * (double)w->tile_bytes,
                        PC_PS_QB4W_BYTE));
  return PTERUN_STATUS_OK;
}
