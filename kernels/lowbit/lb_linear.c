/* torchao::_linear_8bit_act_{n}bit_weight.out: out[m, n] = activations[m, k]
 * (quantized per row to int8) times the packed n-bit weights (universal
 * layout), with torchao's arithmetic: per group an exact integer dot
 * product corrected by the zero-point terms, scaled by
 * (weight_scale * activation_scale) and accumulated in float32 in k order,
 * bias added last. Compiled with -ffp-contract=off: no fused multiply-add
 * in the accumulation, as torchao's NEON kernel (vmlaq_f32). */
#include <inttypes.h>
#include <string.h>

#include "kernels/lowbit/lb.h"
#include "pterun/cpu.h"

static float rdf(const uint8_t* p) {
  float f;
  memcpy(&f, p, 4);
  return f;
}
static int32_t rdi(const uint8_t* p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

enum { LB_STACK_K = 4096 };

typedef struct lb_linear_plan {
  int nbit, has_zeros, has_bias;
  int64_t m, n, k, gs;
  uint64_t tile_bytes;
  const uint8_t* weights; /* after the header */
  lb_group_dot_fn group_dot;
} lb_linear_plan;

void lb_group_dot_scalar(int nbit, const uint8_t* w, const int8_t* qa, int64_t chunks,
                         int64_t dot[8]) {
  int8_t codes[128];
  int64_t c;
  int col, j;
  for (col = 0; col < LB_NR; ++col) dot[col] = 0;
  for (c = 0; c < chunks; ++c, w += 16 * nbit, qa += 16) {
    lb_unpack_codes(nbit, 128, w, codes);
    for (col = 0; col < LB_NR; ++col) {
      int32_t acc = 0; /* 16 products: |acc| <= 2^18 */
      for (j = 0; j < 8; ++j) acc += (int32_t)qa[j] * codes[col * 8 + j];
      for (j = 0; j < 8; ++j) acc += (int32_t)qa[8 + j] * codes[64 + col * 8 + j];
      dot[col] += acc;
    }
  }
}

lb_group_dot_fn lb_group_dot_select(void) {
#if defined(PTERUN_LOWBIT_AVX2)
  if ((pterun_cpu_features() & PTERUN_CPU_X86_AVX2) != 0) return lb_group_dot_avx2;
#endif
  return lb_group_dot_scalar;
}

/* One 8-column tile for one quantized activation row (qa: k codes; asum:
 * per-group code sums). */
static void tile_row(const lb_linear_plan* p, const int8_t* qa, const int64_t* asum, float a_scale,
                     int32_t a_zero, int64_t tile, float* out_row) {
  const uint8_t* w = p->weights + (uint64_t)tile * p->tile_bytes;
  const int64_t groups = p->k / p->gs, chunk_bytes = 16 * p->nbit;
  float res[LB_NR] = {0};
  int64_t g, ncols;
  int col;
  for (g = 0; g < groups; ++g) {
    int64_t dot[LB_NR];
    p->group_dot(p->nbit, w, qa + g * p->gs, p->gs / 16, dot);
    w += (p->gs / 16) * chunk_bytes;
    for (col = 0; col < LB_NR; ++col) {
      float ws = rdf(w + 4 * col);
      /* exact for real weights; a hostile sum or zero point may wrap
       * (unsigned arithmetic: defined), never trap */
      uint64_t wsum = (uint64_t)(int64_t)rdi(w + 32 + 4 * col), za = (uint64_t)(int64_t)a_zero;
      uint64_t t = (uint64_t)dot[col] - za * wsum;
      if (p->has_zeros) {
        uint64_t wz = (uint64_t)(int64_t)rdi(w + 64 + 4 * col);
        t = t - wz * (uint64_t)asum[g] + (uint64_t)p->gs * wz * za;
      }
      res[col] = res[col] + (ws * a_scale) * (float)(int64_t)t;
    }
    w += 64 + (p->has_zeros ? 32 : 0);
  }
  if (p->has_bias)
    for (col = 0; col < LB_NR; ++col) res[col] = res[col] + rdf(w + 4 * col);
  ncols = p->n - tile * LB_NR;
  if (ncols > LB_NR) ncols = LB_NR;
  memcpy(out_row + tile * LB_NR, res, (size_t)ncols * sizeof(float));
}

pterun_status lb_linear_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            int nbit) {
  pterun_tensor *act, *pw, *out;
  const uint8_t* packed;
  size_t size;
  int64_t gs, n, k, m, r, tiles, t, groups;
  lb_linear_plan p;
  int8_t *qa, qa_stack[LB_STACK_K];
  int64_t *asum, asum_stack[LB_STACK_K / 16];
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "activations", &act));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "packed_weights", &pw));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "group_size", &gs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "n", &n));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "k", &k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(lb_packed_arg(ctx, pw, "packed_weights", &packed, &size));
  PTERUN_TRY(
      lb_linear_check(ctx, packed, size, nbit, gs, n, k, &p.has_zeros, &p.has_bias, &p.tile_bytes));
  if (act->rank != 2 || act->dtype != PTERUN_DTYPE_F32 || act->sizes[1] != k)
    return LB_FAIL(ctx, "arg 'activations': must be float32 [m, %" PRId64 "], got %s rank %d", k,
                   pterun_dtype_name(act->dtype), act->rank);
  if (!pterun_tensor_is_contiguous(act) || (act->numel > 0 && act->data == NULL))
    return LB_FAIL(ctx, "arg 'activations': must be contiguous with data");
  tiles = (n + LB_NR - 1) / LB_NR;
  m = act->sizes[0];
  PTERUN_TRY(lb_out_2d(ctx, out, m, n));
  if (m == 0) return PTERUN_STATUS_OK;
  groups = k / gs;
  qa = (int8_t*)pterun_kernel_scratch(ctx, (size_t)k + 64, 64);
  asum = (int64_t*)pterun_kernel_scratch(ctx, (size_t)groups * sizeof(int64_t), 64);
  if (qa == NULL || asum == NULL) {
    /* no (or too little) scratch: a stack row serves up to LB_STACK_K */
    if (k > LB_STACK_K)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "no kernel scratch for %" PRId64 " quantized activations", k);
    pterun_kernel_note_slow_path(ctx, "lowbit linear: no scratch, stack row");
    qa = qa_stack;
    asum = asum_stack;
  }
  p.nbit = nbit;
  p.m = m;
  p.n = n;
  p.k = k;
  p.gs = gs;
  p.weights = packed + LB_HEADER_BYTES;
  p.group_dot = lb_group_dot_select();
  for (r = 0; r < m; ++r) {
    const float* x = (const float*)act->data + r * k;
    float a_scale;
    int32_t a_zero;
    int64_t g, j;
    lb_act_qparams(x, k, &a_scale, &a_zero);
    lb_act_quantize(x, k, lb_act_inv(a_scale), a_zero, qa);
    for (g = 0; g < groups; ++g) {
      int64_t s = 0;
      for (j = 0; j < gs; ++j) s += qa[g * gs + j];
      asum[g] = s;
    }
    for (t = 0; t < tiles; ++t)
      tile_row(&p, qa, asum, a_scale, a_zero, t, (float*)out->data + r * n);
  }
  return PTERUN_STATUS_OK;
}
