/* Load-time repacking of the widths whose chunks the microkernels would
 * otherwise unpack on every call (1-3 and 5-7 bits): the same codes written
 * in torchao's 4-bit layout (1-3 bits: stored code + 8 in nibbles) or 8-bit
 * layout (5-7 bits: the code as an int8 byte), per-group scales, sums, zero
 * points and the bias copied as they are. The result is itself a valid
 * universal-layout buffer of width 4 or 8 with the same codes, so the
 * products are the same integers and the outputs the same bits. */
#include <string.h>

#include "src/compute/lowbit/ukernel.h"

static int target_bits(int nbit) {
  return nbit < 4 ? 4 : nbit < 8 && nbit != 4 ? 8 : 0;
}

uint64_t pterun_compute_lowbit_tile_bytes(int nbit, int64_t k, int64_t group_size, int has_zeros,
                                          int has_bias) {
  uint64_t groups = (uint64_t)(k / group_size);
  uint64_t per_group = (uint64_t)group_size * (uint64_t)nbit + 64u + (has_zeros ? 32u : 0u);
  return groups * per_group + (has_bias ? 32u : 0u); /* k < 2^31: no overflow */
}

static uint64_t tile_bytes(int nbit, const pterun_compute_lowbit_weights* w) {
  return pterun_compute_lowbit_tile_bytes(nbit, w->k, w->group_size, w->has_zeros, w->has_bias);
}

size_t pterun_compute_lowbit_repack_bytes(const pterun_compute_lowbit_weights* w) {
  int tb = target_bits(w->nbit);
  uint64_t tiles = (uint64_t)((w->n + 7) / 8), per = tb != 0 ? tile_bytes(tb, w) : 0;
  if (tb == 0) return 0;
  if (per != 0 && tiles > (uint64_t)SIZE_MAX / per) return SIZE_MAX;
  return (size_t)(tiles * per);
}

/* One 16-value chunk (128 codes) in the 4-bit layout: per 32-value block,
 * byte i holds value i (low nibble) and value i + 16 (high nibble). */
static void put4(const int8_t* codes, uint8_t* d) {
  int blk, i;
  for (blk = 0; blk < 4; ++blk, codes += 32, d += 16)
    for (i = 0; i < 16; ++i)
      d[i] = (uint8_t)((uint8_t)(codes[i] + 8) | (uint8_t)((codes[i + 16] + 8) << 4));
}

void pterun_compute_lowbit_repack(const pterun_compute_lowbit_weights* w, uint8_t* dst,
                                  pterun_compute_lowbit_weights* out) {
  const int tb = target_bits(w->nbit);
  const int64_t tiles = (w->n + 7) / 8, groups = w->k / w->group_size;
  const int64_t chunks = w->group_size / 16;
  const size_t meta = 64u + (w->has_zeros ? 32u : 0u);
  const uint8_t* s = w->tiles;
  uint8_t* d = dst;
  int64_t t, g, c;
  *out = *w;
  if (tb == 0) return;
  for (t = 0; t < tiles; ++t) {
    for (g = 0; g < groups; ++g) {
      for (c = 0; c < chunks; ++c, s += 16 * w->nbit, d += 16 * tb) {
        int8_t codes[128];
        pterun_compute_lowbit_unpack(w->nbit, 128, s, codes);
        if (tb == 4)
          put4(codes, d);
        else
          memcpy(d, codes, 128);
      }
      memcpy(d, s, meta);
      s += meta;
      d += meta;
    }
    if (w->has_bias) {
      memcpy(d, s, 32);
      s += 32;
      d += 32;
    }
  }
  out->nbit = tb;
  out->tile_bytes = tile_bytes(tb, w);
  out->tiles = dst;
}

/* ---- packing from plain codes (a kernel's prepare) ---- */

size_t pterun_compute_lowbit_pack_bytes(int nbit, int64_t n, int64_t k, int64_t group_size,
                                        int has_zeros, int has_bias) {
  uint64_t tiles, per;
  if ((nbit != 4 && nbit != 8) || n < 1 || k < 1 || k > INT32_MAX || group_size < 16 ||
      group_size % 16 != 0 || k % group_size != 0 || n > INT32_MAX)
    return 0;
  tiles = (uint64_t)((n + 7) / 8);
  per = pterun_compute_lowbit_tile_bytes(nbit, k, group_size, has_zeros, has_bias);
  if (tiles > (uint64_t)SIZE_MAX / per) return 0;
  return (size_t)(tiles * per);
}

int pterun_compute_lowbit_pack(int nbit, int64_t n, int64_t k, int64_t group_size,
                               const int8_t* codes, const float* scales, const int32_t* zeros,
                               const float* bias, uint8_t* dst, size_t cap,
                               pterun_compute_lowbit_weights* out) {
  const int64_t groups = k / group_size, chunks = group_size / 16, tiles = (n + 7) / 8;
  const int lo = nbit == 4 ? -8 : -128, hi = nbit == 4 ? 7 : 127;
  const size_t need =
      pterun_compute_lowbit_pack_bytes(nbit, n, k, group_size, zeros != NULL, bias != NULL);
  uint8_t* d = dst;
  int64_t t, g, c, i;
  if (need == 0 || cap < need) return -1;
  for (i = 0; i < n * k; ++i)
    if (codes[i] < lo || codes[i] > hi) return -1;
  for (t = 0; t < tiles; ++t) {
    for (g = 0; g < groups; ++g) {
      int32_t sums[8] = {0}, zs[8] = {0};
      float sc[8] = {0};
      int col;
      for (c = 0; c < chunks; ++c, d += 16 * nbit) {
        /* code j of the chunk: column (j % 64) / 8, k offset j % 8 (+ 8 for j >= 64) */
        int8_t chunk[128];
        int j;
        for (j = 0; j < 128; ++j) {
          const int64_t row = t * 8 + (j % 64) / 8;
          const int64_t kk = g * group_size + c * 16 + j % 8 + (j >= 64 ? 8 : 0);
          chunk[j] = row < n ? codes[row * k + kk] : 0;
          if (row < n) sums[(j % 64) / 8] += chunk[j];
        }
        if (nbit == 4)
          put4(chunk, d);
        else
          memcpy(d, chunk, 128);
      }
      for (col = 0; col < 8; ++col)
        if (t * 8 + col < n) {
          sc[col] = scales[(t * 8 + col) * groups + g];
          if (zeros != NULL) zs[col] = zeros[(t * 8 + col) * groups + g];
        }
      memcpy(d, sc, 32);
      memcpy(d + 32, sums, 32);
      d += 64;
      if (zeros != NULL) {
        memcpy(d, zs, 32);
        d += 32;
      }
    }
    if (bias != NULL) {
      float b[8] = {0};
      int col;
      for (col = 0; col < 8; ++col)
        if (t * 8 + col < n) b[col] = bias[t * 8 + col];
      memcpy(d, b, 32);
      d += 32;
    }
  }
  out->nbit = nbit;
  out->has_zeros = zeros != NULL;
  out->has_bias = bias != NULL;
  out->n = n;
  out->k = k;
  out->group_size = group_size;
  out->tile_bytes =
      pterun_compute_lowbit_tile_bytes(nbit, k, group_size, zeros != NULL, bias != NULL);
  out->tiles = dst;
  return 0;
}
