/* libpterun_compute's 4-bit blockwise linear family (pterun/compute.h,
 * src/compute/qb4w/): the portable microkernel against the documented
 * arithmetic written here from the unpacked codes (the same float
 * operations, so the same bits) and against a double-precision product;
 * every microkernel this CPU runs bit for bit against it, on random and
 * extreme codes, activations and zero points, bf16 and float32 scales, with
 * and without bias, blocks of 8 to 8192, partial panels; then the driver:
 * every pool size, thread cap and row split gives the same bits; and the
 * packer's refusals. The variants this CPU cannot run are listed as
 * untested. Again with PTERUN_ISA_MASK=0 (portable selection). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"
#include "pterun/half.h"
#include "pterun/threadpool.h"
#include "src/compute/internal.h"
#include "tests/harness/pt_test.h"
#include "tests/harness/pt_variants.h"

static int pt_failures;
static uint32_t g_rng = 4242u;

static uint32_t rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return g_rng >> 8;
}

static int runnable(const pterun_compute_qb4w_ukernel* u) {
  return (u->isa & pterun_cpu_features()) == u->isa;
}

typedef struct problem {
  int64_t n, k, block, m;
  int8_t* codes;   /* [n][k] */
  float* scales;   /* [n][k / block], the values (bf16-exact when bf16) */
  uint16_t* sbf16; /* the same as bf16, or NULL */
  float* bias;     /* [n] or NULL */
  int8_t* qa;      /* [m][k] */
  float* a_scale;  /* [m] */
  int32_t* a_zero; /* [m] */
} problem;

/* The arithmetic ukernel.h documents, one column at a time. */
static void ref_bits(const problem* p, float* y) {
  const int64_t blocks = p->k / p->block;
  int64_t r, c, g, j;
  for (r = 0; r < p->m; ++r)
    for (c = 0; c < p->n; ++c) {
      float acc = 0.0f, kz = 0.0f, out;
      for (g = 0; g < blocks; ++g) {
        int32_t t = 0, ws = 0;
        const float s = p->scales[c * blocks + g];
        for (j = g * p->block; j < (g + 1) * p->block; ++j) {
          t += (int32_t)p->qa[r * p->k + j] * p->codes[c * p->k + j];
          ws += p->codes[c * p->k + j];
        }
        acc = acc + s * (float)t;
        kz = kz + s * (float)ws;
      }
      out = (acc - (float)p->a_zero[r] * kz) * p->a_scale[r];
      if (p->bias != NULL) out = out + p->bias[c];
      y[r * p->n + c] = out;
    }
}

/* |y - exact| within float accumulation error of the terms' magnitude. */
static int near_exact(const problem* p, const float* y) {
  const int64_t blocks = p->k / p->block;
  int64_t r, c, j;
  for (r = 0; r < p->m; ++r)
    for (c = 0; c < p->n; ++c) {
      double e = 0.0, mag = 0.0;
      for (j = 0; j < p->k; ++j) {
        double v = ((double)p->qa[r * p->k + j] - p->a_zero[r]) * p->a_scale[r] *
                   p->codes[c * p->k + j] * p->scales[c * blocks + j / p->block];
        e += v;
        mag += fabs(v) + fabs((double)p->a_zero[r] * p->a_scale[r] * p->codes[c * p->k + j] *
                              p->scales[c * blocks + j / p->block]);
      }
      if (p->bias != NULL) {
        e += p->bias[c];
        mag += fabs(p->bias[c]);
      }
      if (fabs(y[r * p->n + c] - e) > 1e-5 * mag + 1e-30) {
        fprintf(stderr, "row %d col %d: %g vs exact %g\n", (int)r, (int)c, y[r * p->n + c], e);
        return 0;
      }
    }
  return 1;
}

/* mode 0 random; 1 codes 7, activations -128; 2 codes -8, activations 127;
 * 3 codes alternating -8 / 7, activations alternating -128 / 127. */
static problem make(int64_t n, int64_t k, int64_t block, int64_t m, int mode, int bf16, int bias,
                    int32_t zero) {
  problem p;
  const int64_t blocks = k / block;
  int64_t i;
  p.n = n;
  p.k = k;
  p.block = block;
  p.m = m;
  p.codes = malloc((size_t)(n * k));
  p.scales = malloc((size_t)(n * blocks) * sizeof(float));
  p.sbf16 = bf16 ? malloc((size_t)(n * blocks) * 2) : NULL;
  p.bias = bias ? malloc((size_t)n * sizeof(float)) : NULL;
  p.qa = malloc((size_t)(m * k));
  p.a_scale = malloc((size_t)m * sizeof(float));
  p.a_zero = malloc((size_t)m * sizeof(int32_t));
  for (i = 0; i < n * k; ++i)
    p.codes[i] = (int8_t)(mode == 0   ? (int)(rnd() % 16) - 8
                          : mode == 1 ? 7
                          : mode == 2 ? -8
                                      : (i % 2 ? 7 : -8));
  for (i = 0; i < m * k; ++i)
    p.qa[i] = (int8_t)(mode == 0   ? (int)(rnd() & 255) - 128
                       : mode == 1 ? -128
                       : mode == 2 ? 127
                                   : (i % 2 ? -128 : 127));
  for (i = 0; i < n * blocks; ++i) {
    float s = (float)(rnd() % 1000 + 1) * 1e-5f;
    if (bf16) {
      uint32_t b;
      memcpy(&b, &s, 4);
      p.sbf16[i] = (uint16_t)(b >> 16);
      s = pterun_bf16_to_f32(p.sbf16[i]);
    }
    p.scales[i] = s;
  }
  for (i = 0; bias && i < n; ++i) p.bias[i] = (float)((int)(rnd() % 2001) - 1000) * 1e-3f;
  for (i = 0; i < m; ++i) {
    p.a_scale[i] = (float)(rnd() % 1000 + 1) * 1e-4f;
    p.a_zero[i] = i == 0 ? zero : (int32_t)(rnd() % 256) - 128;
  }
  return p;
}

static void release(problem* p) {
  free(p->codes);
  free(p->scales);
  free(p->sbf16);
  free(p->bias);
  free(p->qa);
  free(p->a_scale);
  free(p->a_zero);
}

static int check_problem(const problem* p, pterun_threadpool* const* pools, int npools) {
  const size_t bytes =
      pterun_compute_qb4w_pack_bytes(p->n, p->k, p->block, p->sbf16 != NULL, p->bias != NULL);
  const size_t ny = (size_t)(p->m * p->n);
  uint8_t* buf;
  float *want = malloc(ny * 4), *got = malloc(ny * 4);
  pterun_compute_qb4w_weights w;
  size_t nuk, v;
  const pterun_compute_qb4w_ukernel* uk = pterun_compute_qb4w_ukernels(&nuk);
  int bad = 0, pi, cap;
  int64_t r;
  PT_CHECK(bytes != 0 && want != NULL && got != NULL);
  PT_CHECK((buf = aligned_alloc(64, (bytes + 63) / 64 * 64)) != NULL);
  PT_CHECK(pterun_compute_qb4w_pack(p->n, p->k, p->block, p->codes,
                                    p->sbf16 != NULL ? NULL : p->scales, p->sbf16, p->bias, buf,
                                    bytes, &w) == 0);
  /* the same panels from XNNPACK's storage (two unsigned nibbles a byte) */
  {
    uint8_t* nib = calloc((size_t)(p->n * p->k / 2), 1);
    uint8_t* buf2 = aligned_alloc(64, (bytes + 63) / 64 * 64);
    pterun_compute_qb4w_weights w2;
    int64_t i;
    PT_CHECK(nib != NULL && buf2 != NULL);
    for (i = 0; i < p->n * p->k; ++i)
      nib[i / 2] = (uint8_t)(nib[i / 2] | ((p->codes[i] + 8) << (4 * (i % 2))));
    memset(buf2, 0x5a, bytes);
    PT_CHECK(pterun_compute_qb4w_pack_u4(p->n, p->k, p->block, nib,
                                         p->sbf16 != NULL ? NULL : p->scales, p->sbf16, p->bias,
                                         buf2, bytes, &w2) == 0);
    PT_CHECK(memcmp(buf, buf2, bytes) == 0 && w2.tile_bytes == w.tile_bytes);
    free(nib);
    free(buf2);
  }
  ref_bits(p, want);
  if (!near_exact(p, want)) bad = 1;
  for (v = 0; v < nuk; ++v) {
    if (!runnable(&uk[v])) continue;
    for (pi = 0; pi < npools; ++pi)
      for (cap = 0; cap < 3; ++cap) {
        memset(got, 0xa5, ny * 4);
        PT_CHECK_STATUS(pterun_compute_qb4w_linear_qa(&w, p->qa, p->a_scale, p->a_zero, p->m, got,
                                                      &uk[v], pools[pi], (size_t)cap),
                        PTERUN_STATUS_OK);
        if (memcmp(got, want, ny * 4) != 0) {
          fprintf(stderr, "%s: n %d k %d block %d m %d bf16 %d bias %d pool %d cap %d differs\n",
                  uk[v].name, (int)p->n, (int)p->k, (int)p->block, (int)p->m, p->sbf16 != NULL,
                  p->bias != NULL, pi, cap);
          bad = 1;
        }
      }
    /* one row at a time (decode's shape) */
    for (r = 0; r < p->m; ++r) {
      PT_CHECK_STATUS(
          pterun_compute_qb4w_linear_qa(&w, p->qa + r * p->k, p->a_scale + r, p->a_zero + r, 1, got,
                                        &uk[v], pools[npools - 1], 0),
          PTERUN_STATUS_OK);
      if (memcmp(got, want + r * p->n, (size_t)p->n * 4) != 0) {
        fprintf(stderr, "%s: row %d alone differs\n", uk[v].name, (int)r);
        bad = 1;
      }
    }
    if (!bad) pt_variant_checked("qb4w", uk[v].name, NULL, 0);
  }
  free(buf);
  free(want);
  free(got);
  return bad;
}

static int test_products(void) {
  static const struct {
    int64_t n, k, block, m;
  } shapes[] = {{1, 8, 8, 1},     {16, 32, 32, 1},    {17, 64, 32, 3},  {40, 96, 32, 2},
                {33, 256, 64, 1}, {5, 128, 128, 4},   {50, 288, 32, 7}, {24, 40, 8, 2},
                {70, 768, 32, 1}, {3, 8192, 8192, 1}, {31, 160, 16, 5}};
  pterun_threadpool* pools[3] = {NULL, NULL, NULL};
  size_t s;
  int pi, mode, bad = 0;
  for (pi = 1; pi < 3; ++pi) {
    pterun_threadpool_options o = PTERUN_THREADPOOL_OPTIONS_INIT;
    o.threads = (size_t)pi + 1;
    o.min_work_ns = 1; /* split every call: these compare thread counts */
    PT_CHECK_STATUS(pterun_threadpool_create(&o, &pools[pi]), PTERUN_STATUS_OK);
  }
  for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
    for (mode = 0; mode < 4; ++mode) {
      /* zero points: the int8 ends and one outside them (a hostile row) */
      static const int32_t zeros[] = {-128, 127, 3, 100000};
      problem p = make(shapes[s].n, shapes[s].k, shapes[s].block, shapes[s].m, mode,
                       (int)((s + (size_t)mode) % 2), mode != 1, zeros[(s + (size_t)mode) % 4]);
      if (check_problem(&p, pools, 3)) {
        fprintf(stderr, "shape %zu mode %d failed\n", s, mode);
        bad = 1;
      }
      release(&p);
    }
  for (pi = 1; pi < 3; ++pi) pterun_threadpool_destroy(pools[pi]);
  return bad;
}

static int test_pack_refusals(void) {
  int8_t codes[64 * 16];
  float sc[64 * 8], bias[16];
  uint16_t sb[64 * 8];
  uint8_t buf[8192];
  pterun_compute_qb4w_weights w;
  memset(codes, 0, sizeof codes);
  memset(sc, 0, sizeof sc);
  memset(sb, 0, sizeof sb);
  memset(bias, 0, sizeof bias);
  PT_CHECK(pterun_compute_qb4w_pack_bytes(16, 64, 12, 0, 0) == 0); /* block not a multiple of 8 */
  PT_CHECK(pterun_compute_qb4w_pack_bytes(16, 72, 16, 0, 0) == 0); /* k not a multiple of block */
  PT_CHECK(pterun_compute_qb4w_pack_bytes(0, 64, 16, 0, 0) == 0);
  PT_CHECK(pterun_compute_qb4w_pack_bytes(16, 8 * 1025, 8, 0, 0) == 0); /* > 1024 blocks */
  PT_CHECK(pterun_compute_qb4w_pack_bytes(16, 64, 16, 1, 1) == 768);    /* 512 + 4 * 32 + 64 + 64 */
  PT_CHECK(pterun_compute_qb4w_pack(16, 64, 16, codes, sc, NULL, bias, buf, 767, &w) == -1);
  PT_CHECK(pterun_compute_qb4w_pack(16, 64, 16, codes, sc, sb, bias, buf, sizeof buf, &w) == -1);
  PT_CHECK(pterun_compute_qb4w_pack(16, 64, 16, codes, NULL, NULL, bias, buf, sizeof buf, &w) ==
           -1);
  codes[77] = 8; /* outside [-8, 7] */
  PT_CHECK(pterun_compute_qb4w_pack(16, 64, 16, codes, sc, NULL, NULL, buf, sizeof buf, &w) == -1);
  codes[77] = -8;
  PT_CHECK(pterun_compute_qb4w_pack(16, 64, 16, codes, sc, NULL, NULL, buf, sizeof buf, &w) == 0);
  PT_CHECK(w.tile_bytes == 832 && w.scales_bf16 == 0 && w.has_bias == 0); /* 512 + 4 * 64 + 64 */
  return 0;
}

int main(void) {
  size_t nuk, v;
  const pterun_compute_qb4w_ukernel* uk = pterun_compute_qb4w_ukernels(&nuk);
  PT_RUN(test_products);
  PT_RUN(test_pack_refusals);
  for (v = 0; v < nuk; ++v)
    if (!runnable(&uk[v])) printf("untested here (CPU lacks its ISA): %s\n", uk[v].name);
  pt_failures += pt_variants_record(pt_failures);
  return pt_failures != 0;
}
