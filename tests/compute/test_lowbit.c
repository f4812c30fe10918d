/* libpterun_compute's low-bit linear family (pterun/compute.h,
 * src/compute/lowbit/): every microkernel this CPU can run against a
 * reference written here (unpack, multiply, add in int64), at every width,
 * with random and extreme codes and activations and with chunk counts past
 * every int32 flush point; then the driver: every microkernel, every pool
 * size and thread cap, and the load-time repacking give the same bits; and
 * the stack fallback. The
 * variants this CPU cannot run are listed as untested. Again with
 * PTERUN_ISA_MASK=0 (portable selection). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;
static uint32_t g_rng = 12345u;

static uint32_t rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}

/* Value j of a chunk's 16 k-values of column col is code (j / 8) * 64 +
 * col * 8 + j % 8 (docs/lowbit.md); unpacked one chunk at a time. */
static void ref_dot(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks, int64_t dot[8]) {
  int8_t codes[128];
  int64_t i;
  memset(dot, 0, 8 * sizeof dot[0]);
  for (i = 0; i < chunks * 16 * 8; ++i) {
    int64_t chunk = i / 128, col = (i / 16) % 8, j = i % 16;
    if (i % 128 == 0) pterun_compute_lowbit_unpack(nbit, 128, w + chunk * 16 * nbit, codes);
    dot[col] += (int64_t)qa[chunk * 16 + j] * codes[(j / 8) * 64 + col * 8 + j % 8];
  }
}

static int runnable(const pterun_compute_lowbit_ukernel* u) {
  return (u->isa & pterun_cpu_features()) == u->isa;
}

/* mode 0: random; 1: every stored byte 0xff, activations -128; 2: bytes 0,
 * activations 127; 3: bytes 0xff, activations 127. */
static int check_dot(int nbit, int64_t chunks, int mode) {
  size_t nw = (size_t)chunks * 16 * (size_t)nbit, nq = (size_t)chunks * 16, i, nuk, v;
  uint8_t* w = malloc(nw);
  int8_t* qa = malloc(nq);
  const pterun_compute_lowbit_ukernel* uk = pterun_compute_lowbit_ukernels(&nuk);
  int64_t want[8], got[8];
  int bad = 0;
  PT_CHECK(w != NULL && qa != NULL);
  for (i = 0; i < nw; ++i) w[i] = mode == 0 ? (uint8_t)rnd() : mode == 2 ? 0 : 0xff;
  for (i = 0; i < nq; ++i)
    qa[i] = (int8_t)(mode == 0 ? (int)(rnd() & 255) - 128 : mode == 1 ? -128 : 127);
  ref_dot(nbit, w, qa, chunks, want);
  for (v = 0; v < nuk; ++v) {
    if (!runnable(&uk[v])) continue;
    uk[v].fn(nbit, w, qa, chunks, got);
    if (memcmp(got, want, sizeof got) != 0) {
      fprintf(stderr,
              "%s: nbit %d, %" PRId64 " chunks, mode %d: dot[0] %" PRId64 " want %" PRId64 "\n",
              uk[v].name, nbit, chunks, mode, got[0], want[0]);
      bad = 1;
    }
  }
  free(w);
  free(qa);
  return bad;
}

static int test_microkernels(void) {
  static const int64_t counts[] = {1, 2, 3, 7};
  size_t nuk, v;
  const pterun_compute_lowbit_ukernel* uk = pterun_compute_lowbit_ukernels(&nuk);
  int nbit, mode, bad = 0;
  size_t c;
  PT_CHECK(nuk >= 1 && uk[0].isa == 0);
  for (v = 0; v < nuk; ++v)
    printf("  %s: %s\n", uk[v].name,
           runnable(&uk[v]) ? "tested" : "untested (this CPU lacks its ISA)");
  PT_CHECK(pterun_compute_lowbit_select(0) == &uk[0]);
  for (nbit = 1; nbit <= 8; ++nbit)
    for (mode = 0; mode < 4; ++mode) {
      for (c = 0; c < sizeof counts / sizeof counts[0]; ++c)
        bad |= check_dot(nbit, counts[c], mode);
      /* past the int32 flush points (1023, 4095, 16383 chunks) with the
       * largest products */
      if (mode != 0) bad |= check_dot(nbit, nbit == 4 ? 16385 : 4097, mode);
    }
  return bad;
}

/* A universal-layout buffer (tiles after a 64-byte header that the driver
 * does not read) with random codes, scales, sums, zero points and bias. */
static uint8_t* make_weights(pterun_compute_lowbit_weights* w, int nbit, int64_t n, int64_t k,
                             int64_t gs, int zeros, int bias) {
  int64_t tiles = (n + 7) / 8, groups = k / gs, t, g;
  uint64_t tb = (uint64_t)groups * ((uint64_t)gs * (uint64_t)nbit + 64u + (zeros ? 32u : 0u)) +
                (bias ? 32u : 0u);
  uint8_t* buf = malloc(64 + (size_t)(tiles * (int64_t)tb));
  uint8_t* p;
  int j;
  if (buf == NULL) return NULL;
  memset(buf, 0, 64);
  p = buf + 64;
  for (t = 0; t < tiles; ++t) {
    for (g = 0; g < groups; ++g) {
      for (j = 0; j < gs * nbit; ++j) *p++ = (uint8_t)rnd();
      for (j = 0; j < 8; ++j) {
        float s = (float)(rnd() % 1000 + 1) * 1e-4f;
        memcpy(p + 4 * j, &s, 4);
      }
      p += 32;
      for (j = 0; j < 8; ++j) {
        int32_t s = (int32_t)(rnd() % 2001) - 1000;
        memcpy(p + 4 * j, &s, 4);
      }
      p += 32;
      if (zeros) {
        for (j = 0; j < 8; ++j) {
          int32_t z = (int32_t)(rnd() % 17) - 8;
          memcpy(p + 4 * j, &z, 4);
        }
        p += 32;
      }
    }
    if (bias) {
      for (j = 0; j < 8; ++j) {
        float b = (float)((int)(rnd() % 200) - 100) * 0.01f;
        memcpy(p + 4 * j, &b, 4);
      }
      p += 32;
    }
  }
  w->nbit = nbit;
  w->has_zeros = zeros;
  w->has_bias = bias;
  w->n = n;
  w->k = k;
  w->group_size = gs;
  w->tile_bytes = tb;
  w->tiles = buf + 64;
  return buf;
}

static int test_driver(void) {
  pterun_threadpool* pools[3] = {NULL, NULL, NULL};
  size_t nuk, v, pi;
  const pterun_compute_lowbit_ukernel* uk = pterun_compute_lowbit_ukernels(&nuk);
  int nbit, combo, bad = 0;
  for (pi = 1; pi < 3; ++pi) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = pi + 1;
    o.min_work_ns = 1; /* split every call: these compare thread counts */
    PT_CHECK_STATUS(pterun_threadpool_create(&o, &pools[pi]), PTERUN_STATUS_OK);
  }
  for (nbit = 1; nbit <= 8; ++nbit)
    for (combo = 0; combo < 12; ++combo) {
      /* groups of 32, 64 and 128, each with and without zero points and
       * bias: the tiles' specialised group loops (dot_tmpl.h) and the
       * general one */
      static const int64_t gsizes[3] = {32, 64, 128};
      const int64_t n = 100 + nbit, k = 512, m = 5, gs = gsizes[combo / 4];
      pterun_compute_lowbit_weights w;
      uint8_t* buf = make_weights(&w, nbit, n, k, gs, combo & 1, (combo >> 1) & 1);
      float *x = malloc((size_t)(m * k) * 4), *want = malloc((size_t)(m * n) * 4),
            *got = malloc((size_t)(m * n) * 4);
      int64_t i;
      PT_CHECK(buf != NULL && x != NULL && want != NULL && got != NULL);
      for (i = 0; i < m * k; ++i) x[i] = (float)((int)(rnd() % 2001) - 1000) * 1e-3f;
      x[k] = 0.0f; /* a row of one sign and a constant row: the zero-point cases */
      for (i = 1; i < k; ++i) x[k + i] = (float)(i % 7) + 1.0f;
      for (i = 0; i < k; ++i) x[2 * k + i] = -2.5f;
      /* a row far from zero (a zero point past 2^14) and, in tiles 0 and 1,
       * a weight sum and a zero point past 2^14: the tiles' int32 fast
       * paths hand these to the int64 epilogue */
      for (i = 0; i < k; ++i) x[4 * k + i] = 1000.0f + (float)(i % 3) * 0.01f;
      {
        int32_t big = (1 << 30) + 3, neg = -(1 << 30) + 5;
        memcpy((uint8_t*)w.tiles + gs * nbit + 32 + 4 * 3, &big, 4);
        if (w.has_zeros) memcpy((uint8_t*)w.tiles + w.tile_bytes + gs * nbit + 64 + 4 * 5, &neg, 4);
      }
      PT_CHECK_STATUS(pterun_compute_lowbit_linear_ex(NULL, &w, x, m, want, &uk[0], NULL, 0),
                      PTERUN_STATUS_OK);
      for (v = 0; v < nuk; ++v) {
        if (!runnable(&uk[v])) continue;
        for (pi = 0; pi < 3; ++pi) {
          size_t cap;
          for (cap = 0; cap < 3; ++cap) {
            memset(got, 0xa5, (size_t)(m * n) * 4);
            PT_CHECK_STATUS(
                pterun_compute_lowbit_linear_ex(NULL, &w, x, m, got, &uk[v], pools[pi], cap),
                PTERUN_STATUS_OK);
            if (memcmp(got, want, (size_t)(m * n) * 4) != 0) {
              fprintf(stderr, "%s nbit %d combo %d pool %zu cap %zu differs\n", uk[v].name, nbit,
                      combo, pi, cap);
              bad = 1;
            }
          }
        }
        /* one row at a time (decode's shape: the driver's one-row task) */
        for (i = 0; i < m; ++i) {
          memset(got, 0xa5, (size_t)n * 4);
          PT_CHECK_STATUS(
              pterun_compute_lowbit_linear_ex(NULL, &w, x + i * k, 1, got, &uk[v], pools[2], 0),
              PTERUN_STATUS_OK);
          if (memcmp(got, want + i * n, (size_t)n * 4) != 0) {
            fprintf(stderr, "%s nbit %d combo %d row %d alone differs\n", uk[v].name, nbit, combo,
                    (int)i);
            bad = 1;
          }
        }
        /* recorded only if every test passes; the scalar reference's own bits */
        pt_variant_checked("lowbit", uk[v].name, v == 0 ? got : NULL, (size_t)(m * n) * 4);
      }
      /* the load-time repacking (1-3 bits to the 4-bit layout, 5-7 to the
       * 8-bit one) gives the same bits */
      {
        size_t rb = pterun_compute_lowbit_repack_bytes(&w);
        pterun_compute_lowbit_weights rw;
        uint8_t* rbuf = malloc(rb + 1);
        PT_CHECK(rbuf != NULL && (rb == 0) == (nbit == 4 || nbit == 8));
        pterun_compute_lowbit_repack(&w, rbuf, &rw);
        PT_CHECK(rw.nbit == (nbit < 4 ? 4 : nbit == 4 ? 4 : 8));
        PT_CHECK(rb == (size_t)((n + 7) / 8) * rw.tile_bytes || rb == 0);
        PT_CHECK_STATUS(pterun_compute_lowbit_linear_ex(NULL, &rw, x, m, got, NULL, pools[2], 0),
                        PTERUN_STATUS_OK);
        PT_CHECK(memcmp(got, want, (size_t)(m * n) * 4) == 0);
        free(rbuf);
      }
      /* one row alone gives the same bits as inside the block */
      PT_CHECK_STATUS(pterun_compute_lowbit_linear(NULL, &w, x + 3 * k, 1, got), PTERUN_STATUS_OK);
      PT_CHECK(memcmp(got, want + 3 * n, (size_t)n * 4) == 0);
      free(buf);
      free(x);
      free(want);
      free(got);
    }
  for (pi = 1; pi < 3; ++pi) pterun_threadpool_destroy(pools[pi]);
  return bad;
}

/* Without a kernel context there is no scratch: rows up to 4096 values use a
 * stack row, longer ones are refused. */
static int test_no_scratch(void) {
  pterun_compute_lowbit_weights w;
  uint8_t* buf = make_weights(&w, 4, 8, 8192, 32, 0, 0);
  float* x = calloc(8192, 4);
  float y[8];
  PT_CHECK(buf != NULL && x != NULL);
  PT_CHECK_STATUS(pterun_compute_lowbit_linear(NULL, &w, x, 1, y), PTERUN_STATUS_OUT_OF_MEMORY);
  w.k = 4096;
  PT_CHECK_STATUS(pterun_compute_lowbit_linear(NULL, &w, x, 1, y), PTERUN_STATUS_OK);
  PT_CHECK(pterun_compute_lowbit_scratch_bytes(&w, 2) >= 2 * 4096);
  free(buf);
  free(x);
  return 0;
}

/* Plain codes packed at load (pterun_compute_lowbit_pack) and activations
 * quantized elsewhere (pterun_compute_lowbit_linear_qa_ex): every output is
 * the reference formula written here -- per group the exact integer sum of
 * (qa - za)(w - wz), times (w_scale * a_scale), accumulated in float32 in k
 * order, bias last -- bit for bit, for every microkernel and pool; codes
 * outside the width and bad geometry are refused. */
static int test_pack_qa(void) {
  pterun_threadpool* pool = NULL;
  pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
  size_t nuk, v;
  const pterun_compute_lowbit_ukernel* uk = pterun_compute_lowbit_ukernels(&nuk);
  int combo, bad = 0;
  o.threads = 3;
  o.min_work_ns = 1;
  PT_CHECK_STATUS(pterun_threadpool_create(&o, &pool), PTERUN_STATUS_OK);
  for (combo = 0; combo < 8; ++combo) {
    const int nbit = combo & 1 ? 8 : 4, has_zp = (combo >> 1) & 1, has_bias = combo >> 2;
    const int64_t n = 13 + combo, k = 96, gs = combo & 2 ? 32 : 16, m = 4, groups = k / gs;
    const int lo = nbit == 4 ? -8 : -128, span = nbit == 4 ? 16 : 256;
    int8_t* codes = malloc((size_t)(n * k));
    float* sc = malloc((size_t)(n * groups) * 4);
    int32_t* zp = malloc((size_t)(n * groups) * 4);
    float bias[32], a_scale[4];
    int32_t a_zero[4] = {-128, 0, 5, 127};
    int8_t qa[4 * 96];
    float want[4 * 32], got[4 * 32];
    size_t bytes = pterun_compute_lowbit_pack_bytes(nbit, n, k, gs, has_zp, has_bias);
    uint8_t* buf = malloc(bytes + 64);
    pterun_compute_lowbit_weights w;
    int64_t i, r, c, g;
    PT_CHECK(codes != NULL && sc != NULL && zp != NULL && buf != NULL && bytes > 0);
    for (i = 0; i < n * k; ++i) codes[i] = (int8_t)(lo + (int)(rnd() % (unsigned)span));
    codes[0] = (int8_t)lo; /* the extremes */
    codes[1] = (int8_t)(lo + span - 1);
    for (i = 0; i < n * groups; ++i) {
      sc[i] = (float)(1 + rnd() % 1000) * 1e-4f;
      zp[i] = (int32_t)(rnd() % 9) - 4;
    }
    for (i = 0; i < n; ++i) bias[i] = (float)((int)(rnd() % 201) - 100) * 1e-2f;
    for (i = 0; i < m * k; ++i) qa[i] = (int8_t)(rnd() & 255);
    for (r = 0; r < m; ++r) a_scale[r] = (float)(1 + rnd() % 1000) * 1e-3f;
    PT_CHECK(pterun_compute_lowbit_pack(nbit, n, k, gs, codes, sc, has_zp ? zp : NULL,
                                        has_bias ? bias : NULL, buf, bytes - 1, &w) == -1);
    PT_CHECK(pterun_compute_lowbit_pack(nbit, n, k, gs, codes, sc, has_zp ? zp : NULL,
                                        has_bias ? bias : NULL, buf, bytes, &w) == 0);
    for (r = 0; r < m; ++r)
      for (c = 0; c < n; ++c) {
        float res = 0.0f;
        for (g = 0; g < groups; ++g) {
          int64_t t = 0, j;
          const int32_t wz = has_zp ? zp[c * groups + g] : 0;
          for (j = g * gs; j < (g + 1) * gs; ++j)
            t += (int64_t)(qa[r * k + j] - a_zero[r]) * (codes[c * k + j] - wz);
          res = res + (sc[c * groups + g] * a_scale[r]) * (float)t;
        }
        want[r * n + c] = has_bias ? res + bias[c] : res;
      }
    for (v = 0; v < nuk; ++v) {
      if (!runnable(&uk[v])) continue;
      for (i = 0; i < 2; ++i) {
        memset(got, 0xa5, sizeof got);
        PT_CHECK_STATUS(pterun_compute_lowbit_linear_qa_ex(NULL, &w, qa, a_scale, a_zero, m, got,
                                                           &uk[v], i ? pool : NULL, 0),
                        PTERUN_STATUS_OK);
        if (memcmp(got, want, (size_t)(m * n) * 4) != 0) {
          fprintf(stderr, "%s nbit %d combo %d pool %d differs\n", uk[v].name, nbit, combo, (int)i);
          bad = 1;
        }
      }
    }
    if (nbit == 4) { /* a code outside [-8, 7] */
      codes[5] = 8;
      PT_CHECK(pterun_compute_lowbit_pack(nbit, n, k, gs, codes, sc, NULL, NULL, buf, bytes, &w) ==
               -1);
    }
    free(codes), free(sc), free(zp), free(buf);
  }
  PT_CHECK(pterun_compute_lowbit_pack_bytes(4, 8, 64, 8, 0, 0) == 0);  /* group not 16k */
  PT_CHECK(pterun_compute_lowbit_pack_bytes(4, 8, 64, 48, 0, 0) == 0); /* does not divide */
  PT_CHECK(pterun_compute_lowbit_pack_bytes(3, 8, 64, 16, 0, 0) == 0); /* width */
  pterun_threadpool_destroy(pool);
  return bad;
}

/* Every variant's activation quantizer gives the portable one's bits: rows
 * of random values, values halfway between codes, one sign, a constant, a
 * NaN first and a NaN later, infinities, signed zeros, and a length with a
 * tail past the vector loop. */
static int test_quant(void) {
  enum { K = 528 };
  static float x[K];
  size_t nuk, v;
  const pterun_compute_lowbit_ukernel* uk = pterun_compute_lowbit_ukernels(&nuk);
  int mode, bad = 0;
  for (mode = 0; mode < 9; ++mode) {
    const int64_t k = mode == 8 ? 48 : K, gs = mode == 8 ? 16 : 48;
    int8_t want_q[K], got_q[K];
    int64_t want_s[K / 16], got_s[K / 16];
    float want_scale, got_scale;
    int32_t want_zero, got_zero;
    int64_t i;
    for (i = 0; i < k; ++i) {
      float r = (float)((int)(rnd() % 20001) - 10000) * 1e-3f;
      x[i] = mode == 1   ? (float)(i % 256) - 127.5f /* halfway cases (scale 1) */
             : mode == 2 ? 3.0f + r * 1e-2f
             : mode == 3 ? -7.25f
             : mode == 6 ? (i % 2 ? -0.0f : 0.0f)
                         : r;
    }
    if (mode == 4) x[0] = NAN;
    if (mode == 5) { /* the minimum, then a NaN, in one vector lane */
      x[9] = -50.0f;
      x[17] = NAN;
    }
    if (mode == 7) {
      x[3] = INFINITY;
      x[200] = -INFINITY;
    }
    pterun_compute_lowbit_ukernels(NULL)[0].quant(x, k, gs, want_q, want_s, &want_scale,
                                                  &want_zero);
    for (v = 1; v < nuk; ++v) {
      if (!runnable(&uk[v])) continue;
      memset(got_q, 0x5a, sizeof got_q);
      uk[v].quant(x, k, gs, got_q, got_s, &got_scale, &got_zero);
      if (memcmp(got_q, want_q, (size_t)k) != 0 ||
          memcmp(got_s, want_s, (size_t)(k / gs) * sizeof got_s[0]) != 0 ||
          memcmp(&got_scale, &want_scale, 4) != 0 || got_zero != want_zero) {
        fprintf(stderr, "%s: quantizer differs on row mode %d\n", uk[v].name, mode);
        bad = 1;
      }
    }
  }
  return bad;
}

int main(void) {
  PT_RUN(test_microkernels);
  PT_RUN(test_driver);
  PT_RUN(test_no_scratch);
  PT_RUN(test_pack_qa);
  PT_RUN(test_quant);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures != 0;
}
