/* Helpers shared by the quantized kernels (see qutil.h). */
#include "kernels/quantized/qutil.h"

#include <inttypes.h>
#include <stdio.h>

/* ---- arguments ------------------------------------------------------------ */

/* ---- tensor checks -------------------------------------------------------- */

pterun_status qk_check_scale(pterun_kernel_context* ctx, const char* name, double scale,
                             float* out) {
  float s = (float)scale;
  if (!(s > 0.0f) || isinf(s) || isinf(1.0f / s) || isinf((float)(1.0 / scale)))
    return QK_FAIL(ctx, "arg '%s': scale %g must be finite and > 0 in float32", name, scale);
  *out = s;
  return PTERUN_STATUS_OK;
}

pterun_status qk_check_zp(pterun_kernel_context* ctx, const char* name, int64_t zp) {
  if (zp < INT32_MIN || zp > INT32_MAX)
    return QK_FAIL(ctx, "arg '%s': zero point %" PRId64 " does not fit int32", name, zp);
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

void qk_quantize_run(const void* in, int in_dt, void* out, int out_dt, int64_t off, int64_t n,
                     float inv, int32_t zp, int64_t qmin, int64_t qmax) {
  const float zpf = (float)zp;
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
  float lo = x[0], hi = x[0];
  int64_t k;
  for (k = 1; k < n; ++k) {
    if (x[k] < lo) lo = x[k];
    if (hi < x[k]) hi = x[k];
  }
  *mn = lo;
  *mx = hi;
}
