/* Internal to the convolution family of libpterun_kernels_portable: the
 * geometry every path shares and the paths the dispatch (conv.c) picks
 * from: depthwise (depthwise.c), im2col + GEMM (im2col.c, and its flat grid:
 * flat_grid.c), direct (direct.c). */
#ifndef PTERUN_KERNELS_PORTABLE_CONV_CONV_H_
#define PTERUN_KERNELS_PORTABLE_CONV_CONV_H_

#include "kernels/portable/producers.h"
#include "kernels/portable/prepack.h"
#include "kernels/portable/util.h"

typedef struct conv_geom {
  int64_t n, cin, cout, groups, icpg, ocpg;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  int64_t is[5], ws[5], os[5]; /* strides: N,C,D,H,W / O,I,kD,kH,kW / N,C,D,H,W */
} conv_geom;

/* Copies a tensor's strides into 5 slots (batch, channel, D, H, W). */
static inline void strides5(const pterun_tensor* t, int64_t* s) {
  int sp = t->rank - 2, d;
  s[0] = t->strides[0];
  s[1] = t->strides[1];
  for (d = 0; d < 3; ++d) s[2 + d] = d < 3 - sp ? 0 : t->strides[2 + d - (3 - sp)];
}

/* The reduction dims (ic, kd, kh, kw) of a weight group ordered by memory;
 * 0 if they do not flatten to one stride (then the direct path is used). */
typedef struct red_order {
  int dim[4]; /* dim[j]: which of ic,kd,kh,kw is j-th outermost */
  int64_t size[4];
  int64_t cs; /* stride of the flattened reduction index in the weight */
} red_order;

/* First and one-past-last output index o with 0 <= o*s - p + k*d < in. */
static inline void tap_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t kd, int64_t* lo,
                             int64_t* hi) {
  int64_t off = kd - p; /* i = o*s + off */
  int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t b = in - off <= 0 ? 0 : (in - off + s - 1) / s;
  *lo = a;
  *hi = b < out ? b : out;
  if (*hi < *lo) *hi = *lo;
}

/* Dense NCHW input and output, a dense [Cout][Cin / groups][KH][KW] weight
 * and a unit-stride bias: the layout pterun_compute_f32_dwconv2d_nchw and
 * pterun_compute_f32_conv2d_nchw read. */
static inline int nchw_dense(const conv_geom* g, const pterun_tensor* w,
                             const pterun_tensor* bias) {
  int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2], KH = g->k[1], KW = g->k[2];
  /* A stride matters only where the dim has more than one element. */
  return w->rank == 4 && g->k[0] == 1 && g->in[0] == 1 && (IW == 1 || g->is[4] == 1) &&
         (IH == 1 || g->is[3] == IW) && (g->cin == 1 || g->is[1] == IH * IW) &&
         (g->n == 1 || g->is[0] == g->cin * IH * IW) && (OW == 1 || g->os[4] == 1) &&
         (OH == 1 || g->os[3] == OW) && (g->cout == 1 || g->os[1] == OH * OW) &&
         (g->n == 1 || g->os[0] == g->cout * OH * OW) && (KW == 1 || g->ws[4] == 1) &&
         (KH == 1 || g->ws[3] == KW) && (g->icpg == 1 || g->ws[1] == KH * KW) &&
         (g->cout == 1 || g->ws[0] == g->icpg * KH * KW) &&
         (bias == NULL || bias->strides[0] == 1 || g->cout == 1);
}

/* A float32 1x1 unit-stride unpadded convolution with one group whose input
 * and output are both channels-last: one GEMM over all pixels,
 * out[P][Cout] = in[P][Cin] x W^T (pk_conv_pointwise_cl). */
static inline int pk_conv_pointwise_cl_ok(const pterun_tensor* in, const pterun_tensor* w,
                                          const pterun_tensor* out, int64_t groups,
                                          const int64_t* stride, size_t nstride, const int64_t* pad,
                                          size_t npad) {
  if (groups != 1 || in->dtype != PTERUN_DTYPE_F32 || w->dtype != PTERUN_DTYPE_F32 ||
      out->dtype != PTERUN_DTYPE_F32 || w->rank != 4 || w->sizes[2] != 1 || w->sizes[3] != 1 ||
      !pterun_is_channels_last4(in) || !pterun_is_channels_last4(out) || nstride == 0 ||
      npad == 0 || in->sizes[1] != w->sizes[1] || out->sizes[1] != w->sizes[0])
    return 0;
  for (size_t k = 0; k < nstride; ++k)
    if (stride[k] != 1) return 0;
  for (size_t k = 0; k < npad; ++k)
    if (pad[k] != 0) return 0;
  return 1;
}

/* A float32 2-D stem convolution (one group, at most this many input
 * channels, a contiguous weight) from a contiguous NCHW input into a
 * channels-last output: window rows and one GEMM per chunk of pixels
 * (pk_conv_stem_cl). */
/* Overflow-checked a*b (a, b >= 0) and a+b; 0 on overflow: the program's
 * sizes, strides and padding are multiplied only through these. */
static inline int pk_ck_mul(int64_t a, int64_t b, int64_t* r) {
  if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a)) return 0;
  *r = a * b;
  return 1;
}
static inline int pk_ck_add(int64_t a, int64_t b, int64_t* r) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
  *r = a + b;
  return 1;
}

#define NN_CONV_STEM_CL_MAX_CIN 4
/* Input channels from which a stem runs on the indirect GEMM over a
 * channels-last copy of its image (with one channel a tap is a single
 * multiply-add per row pointer: window rows and a GEMM are faster). */
#define NN_CONV_STEM_IG_MIN_CIN 2
static inline int pk_conv_stem_cl_ok(const pterun_tensor* in, const pterun_tensor* w,
                                     const pterun_tensor* out, int64_t groups) {
  return groups == 1 && in->dtype == PTERUN_DTYPE_F32 && w->dtype == PTERUN_DTYPE_F32 &&
         out->dtype == PTERUN_DTYPE_F32 && in->rank == 4 && w->rank == 4 &&
         w->sizes[1] <= NN_CONV_STEM_CL_MAX_CIN && in->sizes[1] == w->sizes[1] &&
         out->sizes[1] == w->sizes[0] && pterun_tensor_is_contiguous(in) &&
         pterun_tensor_is_contiguous(w) && pterun_is_channels_last4(out);
}

/* A float32 2-D convolution (one group) whose input and output are both
 * channels-last, other than the unit-stride unpadded 1x1 (pointwise_cl):
 * the indirect GEMM (pk_conv_kxk_cl). */
static inline int pk_conv_kxk_cl_ok(const pterun_tensor* in, const pterun_tensor* w,
                                    const pterun_tensor* out, int64_t groups) {
  return groups == 1 && in->dtype == PTERUN_DTYPE_F32 && w->dtype == PTERUN_DTYPE_F32 &&
         out->dtype == PTERUN_DTYPE_F32 && in->rank == 4 && w->rank == 4 && out->rank == 4 &&
         in->sizes[1] == w->sizes[1] && out->sizes[1] == w->sizes[0] &&
         pterun_is_channels_last4(in) && pterun_is_channels_last4(out);
}

/* Input channels from which a groups-1 convolution never runs the direct
 * kernel (direct.c: NN_CONV_DIRECT_MAX_CIN + 1). */
#define NN_CONV_PACKED_ONLY_MIN_CIN 5

/* ---- the paths (conv.c dispatches) ---- */
/* direct.c: the gather loop of any convolution, and the compute engine's
 * direct kernel for few input channels (0: done, else not taken). */
void pk_conv_direct(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* w,
                    const pterun_tensor* bias, pterun_tensor* out, int transposed);
int pk_conv_small_cin_f32(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                          const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                          const pterun_compute_gemm_opts* act);
/* depthwise.c */
int pk_conv_depthwise_ok(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* w,
                         const pterun_tensor* bias, const pterun_tensor* out);
size_t pk_conv_depthwise_nhwc_floats(int64_t n, int64_t c, int64_t ih, int64_t iw, int64_t oh,
                                     int64_t ow, int64_t kh, int64_t kw);
/* Floats of scratch a depthwise convolution with a channels-last side takes
 * (the filter as [KH][KW][C], and a copy of each NCHW side). */
size_t pk_conv_depthwise_cl_floats(int in_cl, int out_cl, int64_t n, int64_t c, int64_t ih,
                                   int64_t iw, int64_t oh, int64_t ow, int64_t kh, int64_t kw);
void pk_conv_depthwise_f32(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                           const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                           const pterun_compute_gemm_opts* act);
/* im2col.c: the reduction order, the layouts the GEMM path takes, and the
 * path itself */
/* The reduction index r (in the weight's memory order) as (ic, kd, kh, kw). */
void pk_red_decode(const red_order* ro, int64_t r, int64_t idx[4]);
/* flat_grid.c: float32 convolutions as one GEMM over the image's stride-phase
 * planes (unit steps along the output row whatever the stride) */
#define NN_FLAT_MAX_STRIDE 4
/* The flat grid of a geometry (spatial dims as in conv_geom). */
typedef struct pk_flat_geom {
  int64_t hq, wq;   /* phase plane; the extended grid is OH x wq */
  int64_t nph, npw; /* phases used per dim */
  int8_t mh[NN_FLAT_MAX_STRIDE], mw[NN_FLAT_MAX_STRIDE]; /* phase -> its plane, -1: unused */
} pk_flat_geom;

/* A flat path's buffers, from the scratch arena. */
typedef struct pk_flat_plan {
  pk_flat_geom fg;
  int64_t next;     /* columns of the extended grid: OH x wq */
  int64_t* off;     /* reduction row r reads xp[off[r] + column] */
  float *xp, *cext; /* phase planes (+ slack); extended output */
} pk_flat_plan;

/* Whether a geometry takes the flat grid (and its planes in *fg). */
int pk_flat_geometry(int64_t id, const int64_t stride[3], const int64_t k[3], const int64_t dil[3],
                     const int64_t out[3], pk_flat_geom* fg);
/* Floats of the scratch one (batch, group) product takes (SIZE_MAX /
 * sizeof(float) when it cannot be held). */
size_t pk_flat_floats(int64_t icpg, int64_t ocpg, const pk_flat_geom* fg, int64_t oh);
/* Takes the scratch and fills the row offsets; 0 when the geometry does not
 * take the flat path or the arena cannot hold it with the GEMM's blocks. */
int pk_flat_begin(pterun_kernel_context* ctx, const conv_geom* g, const red_order* ro,
                  pk_flat_plan* fl);
/* The products of the convolution on the flat grid, into out. */
void pk_flat_run(pterun_kernel_context* ctx, pterun_compute_gemm_ws* ws, const conv_geom* g,
                 const red_order* ro, int64_t ocs, const pk_flat_plan* fl, const pterun_tensor* in,
                 const pterun_tensor* w, const float* bias_f, pterun_tensor* out,
                 pterun_compute_gemm_opts* last);
int pk_conv_weight_flattens(const conv_geom* g, red_order* ro);
int pk_conv_out_flattens(const conv_geom* g, int64_t* cs);
int pk_conv_pointwise_input(const conv_geom* g, const pterun_tensor* in, const pterun_tensor* out,
                            int64_t* ics);
/* The channels-last products' bias (pointwise_cl.c): one per column of C,
 * where the GEMM's own bias is one per row, so the rows x cols C (dense
 * rows) is filled with it first and the product accumulates onto it: bias +
 * the sum in K order, as the NCHW path sums. Returns 1 (accumulate) when
 * there is a bias (float32, any stride), else 0. */
int pk_fill_bias_rows(float* y, int64_t rows, int64_t cols, const pterun_tensor* bias);

/* A B operand W^T (rows k, columns j at w[k * rs + j * cs]) whose column j
 * is scaled by scale[j]: pk_pack_b_scaled packs it as
 * pterun_compute_gemm_pack_b_scaled does (a pterun_compute_pack_b_fn). */
typedef struct pk_scaled_b {
  const float* w;
  int64_t rs, cs;
  const double* scale;
} pk_scaled_b;
void pk_pack_b_scaled(void* ctx, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                      int64_t nr);

/* The channels-last 1x1 convolution (pk_conv_pointwise_cl_ok), the weight
 * read as B = W^T (packed at load: pk_convolution_pack). */
void pk_conv_pointwise_cl(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                          const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                          const pterun_compute_gemm_opts* act);
/* stem_cl.c: the output rows of one chunk (their window rows held in
 * scratch), and the stem itself (0: done; -1: no scratch, nothing written). */
int64_t pk_conv_stem_cl_rows(int64_t k, int64_t ow, int64_t oh);
size_t pk_conv_stem_cl_pad_floats(int64_t cin, int64_t ih, int64_t iw, int64_t ph, int64_t pw);
int pk_conv_stem_cl(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                    const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                    const pterun_compute_gemm_opts* act);
/* kxk_cl.c: the channels-last convolution on the filter packed at load (0:
 * done; -1: no packed filter or a geometry it refuses, nothing written), and
 * that pack (a folded batch norm's scale or NULL) into the instruction's
 * state, with the call's pointer table when its arguments (args, out: the
 * call's at prepare, or NULL) say it pays (stem: for stem_cl.c's padded
 * copy). */
void pk_conv2d_desc(const conv_geom* g, const pterun_compute_gemm_opts* act,
                    pterun_compute_conv2d* p);
int pk_conv_kxk_cl(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                   const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                   const pterun_compute_gemm_opts* act);
pterun_status pk_conv_kxk_cl_pack(pterun_kernel_context* ctx, const pterun_tensor* w,
                                  pk_prepacked* into, const double* oc_scale, pterun_value** args,
                                  const pterun_tensor* out, int stem);
void pk_conv_gemm(pterun_kernel_context* ctx, const conv_geom* g, const red_order* ro, int64_t ocs,
                  const pterun_tensor* in, const pterun_tensor* w, const pterun_tensor* bias,
                  pterun_tensor* out, const pterun_compute_gemm_opts* act);

#endif /* PTERUN_KERNELS_PORTABLE_CONV_CONV_H_ */
