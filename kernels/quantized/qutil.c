/* Helpers shared by the quantized kernels (see qutil.h). */
#include "kernels/quantized/qutil.h"

#include <inttypes.h>
#include <stdio.h>

#include "pterun/compute.h"
#include "pterun/cpu.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The SSE2 loops below (SSE2 is the x86-64 baseline) run only when the SSE4.1
 * bit is set, so PTERUN_ISA_MASK=0 runs the scalar reference they are tested
 * against. (The range scan is libpterun_compute's, which dispatches itself.) */
static inline int qk_simd_allowed(void) {
  return (pterun_cpu_features() & PTERUN_CPU_X86_SSE4_1) != 0;
}

/* ---- arguments ------------------------------------------------------------ */

/* ---- tensor checks -------------------------------------------------------- */

pterun_status qk_check_scale(pterun_kernel_context* ctx, const char* name, double scale,
                             float* out) {
  float s = (float)scale;
  if (!(s > 0.0f) || isinf(s) || isinf(1.0f / s) || isinf((float)(1.0 / scale)))
    return PTERUN_FAIL_ARG(ctx, "arg '%s': scale %g must be finite and > 0 in float32", name,
                           scale);
  *out = s;
  return PTERUN_STATUS_OK;
}

pterun_status qk_check_zp(pterun_kernel_context* ctx, const char* name, int64_t zp) {
  if (zp < INT32_MIN || zp > INT32_MAX)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': zero point %" PRId64 " does not fit int32", name, zp);
  return PTERUN_STATUS_OK;
}

int qk_qdtype_range(int dtype, int64_t* lo, int64_t* hi) {
  switch (dtype) {
    case PTERUN_DTYPE_U8:
      *lo = 0;
      *hi = 255;
      return 1;
    case PTERUN_DTYPE_I8:
      *lo = -128;
      *hi = 127;
      return 1;
    case PTERUN_DTYPE_I16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return 1;
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16:
      *lo = 0;
      *hi = 65535;
      return 1;
    case PTERUN_DTYPE_I32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return 1;
    default: return 0;
  }
}

/* ---- element loops -------------------------------------------------------- */

#define QK_QLOOP(IN_T, LOAD, OUT_T)                                                                \
  do {                                                                                             \
    const IN_T* ip = (const IN_T*)in + off;                                                        \
    OUT_T* op = (OUT_T*)out + off;                                                                 \
    for (int64_t k = 0; k < n; ++k) {                                                              \
      float p = LOAD(ip[k]);                                                                       \
      op[k] = (OUT_T)qk_quant_step(p, zpf, qmin, qmax);                                            \
    }                                                                                              \
  } while (0)

#define QK_QOUT(IN_T, LOAD)                                                                        \
  switch (out_dt) {                                                                                \
    case PTERUN_DTYPE_U8: QK_QLOOP(IN_T, LOAD, uint8_t); break;                                    \
    case PTERUN_DTYPE_I8: QK_QLOOP(IN_T, LOAD, int8_t); break;                                     \
    case PTERUN_DTYPE_I16: QK_QLOOP(IN_T, LOAD, int16_t); break;                                   \
    case PTERUN_DTYPE_U16:                                                                         \
    case PTERUN_DTYPE_BITS16: QK_QLOOP(IN_T, LOAD, uint16_t); break;                               \
    case PTERUN_DTYPE_I32: QK_QLOOP(IN_T, LOAD, int32_t); break;                                   \
    default: break;                                                                                \
  }

#if defined(__SSE2__)
/* float32 -> int8 / uint8, 16 elements at a time, with the scalar step's
 * results: p = inv * x in float32; round half to even with the 1.5 * 2^23
 * trick (exact for |p| <= 2^22 in the default rounding mode, as nearbyintf
 * uses); + zp in float32; clamp; truncate. A block holding a lane with
 * |p| > 2^22, NaN or Inf (cvttss2si's out-of-range value makes such lanes
 * q_min, not a saturation) is left to the scalar loop. Needs |zp| <= 2^22 and
 * [qmin, qmax] inside the byte type. Returns the elements done. */
static int64_t quantize_f32_i8_sse2(const float* ip, void* op, int out_u8, int64_t n, float inv,
                                    float zpf, int64_t qmin, int64_t qmax) {
  const __m128 vinv = _mm_set1_ps(inv), vzp = _mm_set1_ps(zpf), magic = _mm_set1_ps(12582912.0f);
  const __m128 lim = _mm_set1_ps(4194304.0f), lo = _mm_set1_ps((float)qmin);
  const __m128 hi = _mm_set1_ps((float)qmax),
               absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    __m128 p[4];
    __m128i q[4];
    int j, bad = 0;
    for (j = 0; j < 4; ++j) {
      p[j] = _mm_mul_ps(vinv, _mm_loadu_ps(ip + k + 4 * j));
      bad |= _mm_movemask_ps(_mm_cmpnle_ps(_mm_and_ps(p[j], absmask), lim)); /* NaN too */
    }
    if (bad) break;
    for (j = 0; j < 4; ++j) {
      __m128 t = _mm_add_ps(vzp, _mm_sub_ps(_mm_add_ps(p[j], magic), magic));
      q[j] = _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(t, lo), hi));
    }
    const __m128i w0 = _mm_packs_epi32(q[0], q[1]), w1 = _mm_packs_epi32(q[2], q[3]);
    _mm_storeu_si128((__m128i*)(void*)((uint8_t*)op + k),
                     out_u8 ? _mm_packus_epi16(w0, w1) : _mm_packs_epi16(w0, w1));
  }
  return k;
}
#endif

void qk_quantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                     float inv, int32_t zp, int64_t qmin, int64_t qmax) {
  const float zpf = (float)zp;
#if defined(__SSE2__)
  if (in_dt == PTERUN_DTYPE_F32 && (out_dt == PTERUN_DTYPE_U8 || out_dt == PTERUN_DTYPE_I8) &&
      zp >= -4194304 && zp <= 4194304 && qk_simd_allowed()) {
    const int64_t done = quantize_f32_i8_sse2((const float*)in + off, (uint8_t*)out + off,
                                              out_dt == PTERUN_DTYPE_U8, n, inv, zpf, qmin, qmax);
    off += done;
    n -= done;
  }
#endif
#define LD_F32(x) (inv * (x))
#define LD_F64(x) ((float)((double)inv * (x)))
#define LD_F16(x) (inv * pterun_f16_to_f32(x))
  switch (in_dt) {
    case PTERUN_DTYPE_F32: QK_QOUT(float, LD_F32); break;
    case PTERUN_DTYPE_F64: QK_QOUT(double, LD_F64); break;
    case PTERUN_DTYPE_F16: QK_QOUT(uint16_t, LD_F16); break;
    default: break;
  }
#undef LD_F32
#undef LD_F64
#undef LD_F16
}

#define QK_DLOOP(IN_T, STORE)                                                                      \
  do {                                                                                             \
    const IN_T* ip = (const IN_T*)in + off;                                                        \
    for (int64_t k = 0; k < n; ++k) {                                                              \
      int32_t d = (int32_t)((uint32_t)(int32_t)ip[k] - (uint32_t)zp); /* wraps */                  \
      STORE;                                                                                       \
    }                                                                                              \
  } while (0)

#define QK_DIN(STORE)                                                                              \
  switch (in_dt) {                                                                                 \
    case PTERUN_DTYPE_U8: QK_DLOOP(uint8_t, STORE); break;                                         \
    case PTERUN_DTYPE_I8: QK_DLOOP(int8_t, STORE); break;                                          \
    case PTERUN_DTYPE_I16: QK_DLOOP(int16_t, STORE); break;                                        \
    case PTERUN_DTYPE_U16:                                                                         \
    case PTERUN_DTYPE_BITS16: QK_DLOOP(uint16_t, STORE); break;                                    \
    case PTERUN_DTYPE_I32: QK_DLOOP(int32_t, STORE); break;                                        \
    default: break;                                                                                \
  }

void qk_dequantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                       int32_t zp, float s, int exact_1d) {
  switch (out_dt) {
    case PTERUN_DTYPE_F32: {
      float* op = (float*)out + off;
      QK_DIN(op[k] = (float)d * s);
      break;
    }
    case PTERUN_DTYPE_F64: {
      double* op = (double*)out + off;
      if (exact_1d) {
        QK_DIN(op[k] = (double)d * (double)s);
      } else {
        QK_DIN(op[k] = (double)((float)d * s));
      }
      break;
    }
    case PTERUN_DTYPE_F16: {
      uint16_t* op = (uint16_t*)out + off;
      if (exact_1d) {
        QK_DIN(op[k] = pterun_f32_to_f16(qk_round_f16((float)d) * s));
      } else {
        QK_DIN(op[k] = pterun_f32_to_f16((float)d * s));
      }
      break;
    }
    case PTERUN_DTYPE_BF16: {
      uint16_t* op = (uint16_t*)out + off;
      QK_DIN(op[k] = pterun_f32_to_bf16((float)d * s));
      break;
    }
    default: break;
  }
}

/* ---- choose_qparams ------------------------------------------------------- */

int qk_calc_qparams(float mn, float mx, int32_t qmin, int32_t qmax, double* scale_out,
                    int32_t* zp_out) {
  const float kSmall = 6.1e-5f;
  double scale, zf_min, zf_max, e_min, e_max, z0;
  int32_t zp;
  if (!isfinite(mn) || !isfinite(mx)) return -1; /* ExecuTorch: abort or garbage */
  mn = (0.f < mn) ? 0.f : mn;                    /* std::min(min, 0.f) keeps -0.0 */
  mx = (mx < 0.f) ? 0.f : mx;
  scale = ((double)mx - (double)mn) / (double)(qmax - qmin);
  if ((float)scale == 0.0f || isinf(1.0f / (float)scale)) scale = 0.1;
  if (scale < (double)kSmall) {
    float org = (float)scale;
    scale = (double)kSmall;
    if (mn == 0.0f) {
      mx = kSmall * (float)(qmax - qmin);
    } else if (mx == 0.0f) {
      mn = -kSmall * (float)(qmax - qmin);
    } else {
      float amp = kSmall / org;
      mn *= amp;
      mx *= amp;
    }
  }
  zf_min = (double)qmin - (double)mn / scale;
  zf_max = (double)qmax - (double)mx / scale;
  e_min = fabs((double)qmin) - fabs((double)mn / scale);
  e_max = fabs((double)qmax) - fabs((double)mx / scale);
  z0 = e_min < e_max ? zf_min : zf_max;
  if (z0 < qmin)
    zp = qmin;
  else if (z0 > qmax)
    zp = qmax;
  else
    zp = (int32_t)nearbyintf((float)z0);
  *scale_out = scale;
  *zp_out = zp;
  return 0;
}

void qk_scan_minmax(const float* x, int64_t n, float* mn, float* mx) {
  /* Starting from x[0]: a NaN there stays, a later NaN is skipped. */
  *mn = *mx = x[0];
  pterun_compute_f32_minmax(x + 1, (size_t)(n - 1), mn, mx);
}

pterun_status qk_arg_q8(pterun_kernel_context* ctx, pterun_value** args, size_t i, int output,
                        qk_q8* q) {
  static const char* const names[2][5] = {
      {"input_scale", "input_zero_point", "input_quant_min", "input_quant_max", "input_dtype"},
      {"output_scale", "output_zero_point", "output_quant_min", "output_quant_max",
       "output_dtype"}};
  const char* const* n = names[output != 0];
  PTERUN_TRY(pterun_arg_double(ctx, args, i, n[0], &q->scale));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 1, n[1], &q->zp));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 2, n[2], &q->qmin));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 3, n[3], &q->qmax));
  PTERUN_TRY(pterun_arg_int(ctx, args, i + 4, n[4], &q->dtype));
  if (q->dtype != PTERUN_DTYPE_U8 && q->dtype != PTERUN_DTYPE_I8)
    return PTERUN_FAIL_ARG(ctx, "arg '%s': the fused 8-bit operators take int8 or uint8, not %s",
                           n[4], pterun_dtype_name((int)q->dtype));
  return PTERUN_STATUS_OK;
}

pterun_status qk_check_q8(pterun_kernel_context* ctx, const qk_q8* q, float* scale) {
  int64_t lo, hi;
  PTERUN_TRY(qk_check_scale(ctx, "scale", q->scale, scale));
  PTERUN_TRY(qk_check_zp(ctx, "zero_point", q->zp));
  if (!qk_qdtype_range((int)q->dtype, &lo, &hi) || q->qmin < lo || q->qmax > hi ||
      q->qmin > q->qmax)
    return PTERUN_FAIL_ARG(ctx, "arg 'quant_min': [%" PRId64 ", %" PRId64 "] invalid for %s",
                           q->qmin, q->qmax, pterun_dtype_name((int)q->dtype));
  return PTERUN_STATUS_OK;
}

void qk_dequant_table(const qk_q8* q, float scale, float table[256]) {
  uint8_t codes[256];
  for (int b = 0; b < 256; ++b) codes[b] = (uint8_t)b; /* as int8: the byte's two's complement */
  qk_dequantize_run(codes, (int)q->dtype, table, PTERUN_DTYPE_F32, 0, 256, (int32_t)q->zp, scale,
                    0);
}

pterun_status qk_unalias(pterun_kernel_context* ctx, const void* in, size_t nbytes, const void* out,
                         size_t out_nbytes, void* spare, size_t spare_cap, const void** data) {
  const uintptr_t i0 = (uintptr_t)in, o0 = (uintptr_t)out;
  void* copy;
  *data = in;
  if (nbytes == 0 || out_nbytes == 0 || i0 + nbytes <= o0 || o0 + out_nbytes <= i0)
    return PTERUN_STATUS_OK;
  /* the prepared spare first: it is there anyway, the scratch arena is sized
   * from reservations (pterun_kernel_scratch_reserve) */
  copy = spare != NULL && nbytes <= spare_cap ? spare : pterun_kernel_scratch(ctx, nbytes, 64);
  if (copy == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "fused kernel: no room to copy an input of %zu bytes that shares "
                              "memory with the output",
                              nbytes);
  memcpy(copy, in, nbytes);
  *data = copy;
  return PTERUN_STATUS_OK;
}
