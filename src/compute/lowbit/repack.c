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
