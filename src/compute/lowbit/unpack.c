/* torchao's n-bit chunk layouts (read side), one per width: the layouts
 * torchao's packers write (uint{1..7}.h in torchao's fallback bitpacking);
 * values are stored with the bias 2^(n-1). Used by the linear microkernels
 * and, through pterun_compute_lowbit_unpack, by the embedding operators. */
#include <string.h>

#include "src/compute/lowbit/ukernel.h"

/* ---- per-width unpackers into unsigned values ---- */

static void u1(int count, const uint8_t* s, uint8_t* d) {
  int i, t;
  if (count == 128) {
    for (i = 0; i < 16; ++i)
      for (t = 0; t < 8; ++t) d[i + 16 * t] = (uint8_t)((s[i] >> (7 - t)) & 1);
  } else if (count == 64) {
    for (i = 0; i < 16; ++i) {
      uint8_t c = i < 8 ? (uint8_t)(s[i] & 15) : (uint8_t)(s[i - 8] >> 4);
      for (t = 0; t < 4; ++t) d[i + 16 * t] = (uint8_t)((c >> (3 - t)) & 1);
    }
  } else { /* 32: bytes 0,1 hold values 0..15, bytes 2,3 values 16..31, MSB first */
    for (i = 0; i < 32; ++i) d[i] = (uint8_t)((s[i >> 3] >> (7 - (i & 7))) & 1);
  }
}

static void u2(int count, const uint8_t* s, uint8_t* d) {
  int i, t, blk, stride = count == 32 ? 8 : 16;
  for (blk = 0; blk < (count == 128 ? 2 : 1); ++blk, s += 16, d += 64)
    for (i = 0; i < stride; ++i)
      for (t = 0; t < 4; ++t) d[i + stride * t] = (uint8_t)((s[i] >> (6 - 2 * t)) & 3);
}

static void u3_8(const uint8_t* s, uint8_t* d, int st) {
  /* three bytes (stride st apart) hold 8 values (stride st apart) */
  uint8_t b0 = s[0], b1 = s[st], b2 = s[2 * st];
  d[0] = (b0 >> 3) & 7;
  d[st] = b0 & 7;
  d[2 * st] = (b1 >> 3) & 7;
  d[3 * st] = b1 & 7;
  d[4 * st] = (b2 >> 3) & 7;
  d[5 * st] = b2 & 7;
  d[6 * st] = (uint8_t)((b0 >> 6) | ((b2 >> 5) & 4));
  d[7 * st] = (uint8_t)((b1 >> 6) | ((b2 >> 4) & 4));
}

static void u3(int count, const uint8_t* s, uint8_t* d) {
  int i;
  if (count == 32) {
    for (i = 0; i < 4; ++i) u3_8(s + 3 * i, d + 8 * i, 1);
  } else {
    int st = count / 8;
    for (i = 0; i < st; ++i) u3_8(s + i, d + i, st);
  }
}

static void u4(int count, const uint8_t* s, uint8_t* d) {
  int i, blk;
  for (blk = 0; blk < count / 32; ++blk, s += 16, d += 32)
    for (i = 0; i < 16; ++i) {
      d[i] = s[i] & 15;
      d[i + 16] = s[i] >> 4;
    }
}

static void u5_8(const uint8_t* s, uint8_t* d) {
  uint8_t p4 = s[4];
  d[0] = s[0] & 31;
  d[1] = (uint8_t)((s[0] >> 5) | ((p4 & 3) << 3));
  d[2] = s[1] & 31;
  d[3] = (uint8_t)((s[1] >> 5) | ((p4 & 12) << 1));
  d[4] = s[2] & 31;
  d[5] = (uint8_t)((s[2] >> 5) | ((p4 & 48) >> 1));
  d[6] = s[3] & 31;
  d[7] = (uint8_t)((s[3] >> 5) | ((p4 & 192) >> 3));
}

static void u5(int count, const uint8_t* s, uint8_t* d) {
  int i;
  if (count == 32) {
    for (i = 0; i < 4; ++i) u5_8(s + 5 * i, d + 8 * i);
  } else if (count == 64) {
    for (i = 0; i < 16; ++i) {
      uint8_t p0 = s[i], p1 = s[i + 16], p2 = s[32 + (i & 7)];
      d[i] = p0 & 31;
      d[i + 32] = p1 & 31;
      if (i < 8) {
        d[i + 16] = (uint8_t)((p0 >> 5) | ((p2 & 3) << 3));
        d[i + 48] = (uint8_t)((p1 >> 5) | ((p2 & 48) >> 1));
      } else {
        d[i + 16] = (uint8_t)((p0 >> 5) | ((p2 & 12) << 1));
        d[i + 48] = (uint8_t)((p1 >> 5) | ((p2 & 192) >> 3));
      }
    }
  } else {
    for (i = 0; i < 16; ++i) {
      uint8_t p4 = s[i + 64];
      d[i] = s[i] & 31;
      d[i + 16] = (uint8_t)((s[i] >> 5) | ((p4 & 3) << 3));
      d[i + 32] = s[i + 16] & 31;
      d[i + 48] = (uint8_t)((s[i + 16] >> 5) | ((p4 & 12) << 1));
      d[i + 64] = s[i + 32] & 31;
      d[i + 80] = (uint8_t)((s[i + 32] >> 5) | ((p4 & 48) >> 1));
      d[i + 96] = s[i + 48] & 31;
      d[i + 112] = (uint8_t)((s[i + 48] >> 5) | ((p4 & 192) >> 3));
    }
  }
}

static void u6(int count, const uint8_t* s, uint8_t* d) {
  int i, blk, st = count == 32 ? 8 : 16;
  for (blk = 0; blk < (count == 128 ? 2 : 1); ++blk, s += 48, d += 64)
    for (i = 0; i < st; ++i) {
      uint8_t p0 = s[i], p1 = s[i + st], p2 = s[i + 2 * st];
      d[i] = p0 & 63;
      d[i + st] = p1 & 63;
      d[i + 2 * st] = p2 & 63;
      d[i + 3 * st] = (uint8_t)(((p0 & 192) >> 6) | ((p1 & 192) >> 4) | ((p2 & 192) >> 2));
    }
}

static void u7(int count, const uint8_t* s, uint8_t* d) {
  /* groups of 8 rows: row r (r < 7) in the low bits, row 7 spread over the
   * MSBs; rows are `st` values apart (1 for the 8-value blocks of count 32) */
  int blocks = count == 32 ? 4 : 1, st = count == 32 ? 1 : count / 8, b, j, r;
  for (b = 0; b < blocks; ++b, s += 7 * st, d += 8 * st)
    for (j = 0; j < st; ++j) {
      uint8_t top = 0;
      for (r = 0; r < 7; ++r) {
        d[r * st + j] = s[r * st + j] & 127;
        top = (uint8_t)(top | ((s[r * st + j] >> 7) << r));
      }
      d[7 * st + j] = top;
    }
}

void pc_lowbit_unpack_u(int nbit, int count, const uint8_t* src, uint8_t* u) {
  switch (nbit) {
    case 1: u1(count, src, u); break;
    case 2: u2(count, src, u); break;
    case 3: u3(count, src, u); break;
    case 4: u4(count, src, u); break;
    case 5: u5(count, src, u); break;
    case 6: u6(count, src, u); break;
    case 7: u7(count, src, u); break;
    default: memcpy(u, src, (size_t)count); break;
  }
}

void pterun_compute_lowbit_unpack(int nbit, int count, const uint8_t* src, int8_t* dst) {
  uint8_t u[128];
  int i, bias = nbit == 8 ? 0 : 1 << (nbit - 1);
  pc_lowbit_unpack_u(nbit, count, src, u);
  for (i = 0; i < count; ++i) dst[i] = (int8_t)(nbit == 8 ? (int8_t)u[i] : (int)u[i] - bias);
}
