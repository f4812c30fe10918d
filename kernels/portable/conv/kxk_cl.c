/* A dense (one group) float32 2-D convolution whose input and output are
 * channels-last, other than the unit 1x1 (pointwise_cl.c): the compute
 * library's indirect GEMM (pterun_compute_f32_conv2d_nhwc), which reads each
 * tap's input channels where they lie and writes the output rows in place --
 * no image packing, no padded copy, no output reorder. The filter is packed
 * at load as the GEMM's B (pk_conv_kxk_cl_pack: K = kh x kw x Cin in tap
 * order; a folded batch norm's scale applied on the way). */
#include <string.h>

#include "kernels/portable/conv/conv.h"

/* The compute library's description of g (spatial dims 1 and 2: a 2-D
 * convolution is the 3-D one with a unit depth). */
void pk_conv2d_desc(const conv_geom* g, const pterun_compute_gemm_opts* act,
                    pterun_compute_conv2d* p) {
  memset(p, 0, sizeof *p);
  p->batch = (size_t)g->n;
  p->in_c = (size_t)g->cin;
  p->in_h = (size_t)g->in[1];
  p->in_w = (size_t)g->in[2];
  p->out_c = (size_t)g->cout;
  p->out_h = (size_t)g->out[1];
  p->out_w = (size_t)g->out[2];
  p->kernel_h = (size_t)g->k[1];
  p->kernel_w = (size_t)g->k[2];
  p->stride_h = (size_t)g->stride[1];
  p->stride_w = (size_t)g->stride[2];
  p->dilation_h = (size_t)g->dil[1];
  p->dilation_w = (size_t)g->dil[2];
  p->pad_top = (size_t)g->pad[1];
  p->pad_left = (size_t)g->pad[2];
  p->activation = act != NULL ? act->activation : PTERUN_COMPUTE_ACT_NONE;
  p->lo = act != NULL ? act->lo : 0.0f;
  p->hi = act != NULL ? act->hi : 0.0f;
}

int pk_conv_kxk_cl(pterun_kernel_context* ctx, const conv_geom* g, const pterun_tensor* in,
                   const pterun_tensor* w, const pterun_tensor* bias, pterun_tensor* out,
                   const pterun_compute_gemm_opts* act) {
  const int64_t k = g->cin * g->k[1] * g->k[2];
  const pterun_compute_packed* pw = pk_prepacked_for(ctx, w, k, g->cout);
  if (pw == NULL || g->n < 1 || g->in[0] != 1 || g->k[0] != 1 ||
      (bias != NULL && (bias->dtype != PTERUN_DTYPE_F32 || bias->strides[0] != 1)))
    return -1;
  pterun_compute_conv2d p;
  pk_conv2d_desc(g, act, &p);
  const pk_prepacked* st = pterun_kernel_state(ctx); /* pk_prepacked_for found pw there */
  return pterun_compute_f32_conv2d_nhwc_cached(
      pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx), &p, in->data, pw,
      bias != NULL ? bias->data : NULL, out->data, st->table, st->table_bytes);
}

/* The pointer table pays where a tap's channels are few (the microkernel's
 * run per pointer is short: 16 channels, 3x3: 49 -> 41 us on 32 x 32
 * pixels; 32: 5 %; 64: 1 %) and costs 8 bytes per pixel and tap. */
#define KXK_TABLE_MAX_CIN 32
#define KXK_TABLE_MAX_BYTES ((size_t)1 << 20)

/* One spatial int[] argument's value for dim d (of 2): one value for both,
 * or one each. */
static int spatial2(pterun_value* v, int d, size_t* out) {
  size_t n = 0;
  const int64_t* x = pterun_value_int_list(v, &n);
  if (x == NULL || (n != 1 && n != 2) || x[n == 1 ? 0 : d] < 0) return 0;
  *out = (size_t)x[n == 1 ? 0 : d];
  return 1;
}

/* At prepare: the call's pointer table (its geometry from the arguments
 * and the output's sizes, upper bounds for a dynamic one), when it pays.
 * stem: the geometry stem_cl.c runs, one image at a time from its copy with
 * zero side columns. */
static pterun_status alloc_table(pterun_kernel_context* ctx, pk_prepacked* into,
                                 pterun_value** args, const pterun_tensor* out, int stem) {
  const pterun_tensor* in = args[0]->u.tensor;
  const pterun_tensor* w = args[1]->u.tensor;
  if (in->rank != 4 || out->rank != 4 || w->sizes[1] > KXK_TABLE_MAX_CIN) return PTERUN_STATUS_OK;
  /* stride, padding and dilation from the arguments below */
  pterun_compute_conv2d p = {.batch = (size_t)out->sizes[0],
                             .in_c = (size_t)in->sizes[1],
                             .in_h = (size_t)in->sizes[2],
                             .in_w = (size_t)in->sizes[3],
                             .out_c = (size_t)out->sizes[1],
                             .out_h = (size_t)out->sizes[2],
                             .out_w = (size_t)out->sizes[3],
                             .kernel_h = (size_t)w->sizes[2],
                             .kernel_w = (size_t)w->sizes[3],
                             .activation = PTERUN_COMPUTE_ACT_NONE};
  if (!spatial2(args[3], 0, &p.stride_h) || !spatial2(args[3], 1, &p.stride_w) ||
      !spatial2(args[4], 0, &p.pad_top) || !spatial2(args[4], 1, &p.pad_left) ||
      !spatial2(args[5], 0, &p.dilation_h) || !spatial2(args[5], 1, &p.dilation_w))
    return PTERUN_STATUS_OK;
  if (stem) {
    p.batch = 1;
    p.in_w += 2 * p.pad_left;
    p.pad_left = 0;
  }
  const size_t bytes = pterun_compute_f32_conv2d_nhwc_table_size(&p, into->packed);
  if (bytes == 0 || bytes > KXK_TABLE_MAX_BYTES) return PTERUN_STATUS_OK;
  into->table = pterun_kernel_state_alloc(ctx, bytes, 64);
  if (into->table == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the convolution's row table", bytes);
  memset(into->table, 0, bytes);
  into->table_bytes = bytes;
  return PTERUN_STATUS_OK;
}

/* into: the fused batch norm's record, or NULL (a plain convolution: the
 * record is allocated here as the instruction's state). */
pterun_status pk_conv_kxk_cl_pack(pterun_kernel_context* ctx, const pterun_tensor* w,
                                  pk_prepacked* into, const double* oc_scale, pterun_value** args,
                                  const pterun_tensor* out, int stem) {
  if (!pk_prepack_constant_f32(w) || w->rank != 4) return PTERUN_STATUS_OK;
  /* the pack depends on the channels and the filter only: any input size */
  pterun_compute_conv2d p = {1,
                             (size_t)w->sizes[1],
                             1,
                             1,
                             (size_t)w->sizes[0],
                             1,
                             1,
                             (size_t)w->sizes[2],
                             (size_t)w->sizes[3],
                             1,
                             1,
                             1,
                             1,
                             0,
                             0,
                             PTERUN_COMPUTE_ACT_NONE,
                             0.0f,
                             0.0f};
  const size_t bytes = pterun_compute_f32_conv2d_nhwc_pack_size(&p);
  if (bytes == 0 || !pterun_kernel_preparing(ctx)) return PTERUN_STATUS_OK; /* another path */
  /* a plain convolution's state is this record (pk_prepacked_for reads it) */
  if (into == NULL) into = pterun_kernel_state_alloc(ctx, sizeof *into, _Alignof(pk_prepacked));
  void* mem = into != NULL ? pterun_kernel_state_alloc(ctx, bytes, 64) : NULL;
  if (mem == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the packed weight", bytes);
  const int64_t ws[4] = {w->strides[0], w->strides[1], w->strides[2], w->strides[3]};
  into->packed = pterun_compute_f32_conv2d_nhwc_pack(mem, bytes, &p, w->data, ws, oc_scale);
  into->src = into->packed != NULL ? w->data : NULL;
  into->rows = w->sizes[1] * w->sizes[2] * w->sizes[3];
  into->cols = w->sizes[0];
  into->packed_only = into->packed != NULL && oc_scale != NULL;
  into->col_scale = NULL;
  into->table = NULL;
  into->table_bytes = 0;
  if (into->packed != NULL && args != NULL && out != NULL)
    return alloc_table(ctx, into, args, out, stem);
  return PTERUN_STATUS_OK;
}
