/* aten::convolution.out: 1-D/2-D/3-D, groups (incl. depthwise), stride,
 * padding, dilation, optional bias, transposed; any dim orders.
 *
 * Dense NCHW float32 2-D convolutions with at most 4 input channels (a
 * network's stem) run as the compute engine's direct convolution. Other
 * floating forward convolutions run as im2col + the blocked GEMM, one
 * (batch, group) at a time and in column chunks so the im2col buffer stays
 * small (scratch arena or a stack buffer). Transposed convolutions, integer
 * dtypes and unusual out layouts use a direct gather loop. Internally every
 * convolution is 3-D: missing leading spatial dims have size 1.
 *
 * A constant float32 weight of a GEMM-path convolution (groups == 1) is packed
 * once at method load (prepare, prepack.h); pterun::convolution_relu /
 * convolution_hardtanh (made by the load-time fusion pass) apply the
 * activation in the GEMM epilogue, or per plane/row of the depthwise loops.
 *
 * This file: argument checks and geometry, the choice of path, prepare, the
 * fused forms and convolution_backward; the paths are depthwise.c,
 * im2col.c and direct.c (conv.h). */
#include <inttypes.h>

#include "kernels/portable/conv/conv.h"

/* Reads int[] arguments (one value or one per spatial dim) into 3 slots. */
static pterun_status spatial_arg(pterun_kernel_context* ctx, pterun_value** args, size_t i,
                                 const char* name, int sp, int64_t fill, int64_t* out) {
  int64_t v[3];
  int d;
  PTERUN_TRY(pk_arg_int_n(ctx, args, i, name, sp, NULL, v));
  for (d = 0; d < 3; ++d) out[d] = d < 3 - sp ? fill : v[d - (3 - sp)];
  return PTERUN_STATUS_OK;
}

/* base: index of the stride argument (stride, padding, dilation, transposed,
 * output_padding follow it, as in convolution and convolution_backward). */
static pterun_status conv_setup(pterun_kernel_context* ctx, pterun_value** args, size_t base,
                                pterun_tensor* in, pterun_tensor* w, pterun_tensor* bias,
                                int transposed, int64_t groups, conv_geom* g, int64_t* out_sizes) {
  int sp = in->rank - 2, d;
  int64_t opad[3];
  if (in->rank < 3 || in->rank > 5 || w->rank != in->rank)
    return PTERUN_FAIL_ARG(ctx, "input rank %d / weight rank %d: expected 3, 4 or 5", (int)in->rank,
                           (int)w->rank);
  PTERUN_TRY(spatial_arg(ctx, args, base, "stride", sp, 1, g->stride));
  PTERUN_TRY(spatial_arg(ctx, args, base + 1, "padding", sp, 0, g->pad));
  PTERUN_TRY(spatial_arg(ctx, args, base + 2, "dilation", sp, 1, g->dil));
  if (transposed)
    PTERUN_TRY(spatial_arg(ctx, args, base + 4, "output_padding", sp, 0, opad));
  else
    opad[0] = opad[1] = opad[2] = 0;
  if (groups <= 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'groups': must be positive, got %" PRId64, groups);
  g->n = in->sizes[0];
  g->cin = in->sizes[1];
  g->groups = groups;
  if (g->cin % groups != 0)
    return PTERUN_FAIL_ARG(ctx, "input channels %" PRId64 " not divisible by groups %" PRId64,
                           g->cin, groups);
  g->icpg = g->cin / groups;
  if (transposed) {
    if (w->sizes[0] != g->cin)
      return PTERUN_FAIL_ARG(ctx, "weight dim 0 is %" PRId64 ", expected %" PRId64, w->sizes[0],
                             g->cin);
    g->ocpg = w->sizes[1];
    g->cout = g->ocpg * groups;
  } else {
    g->cout = w->sizes[0];
    if (g->cout % groups != 0 || w->sizes[1] != g->icpg)
      return PTERUN_FAIL_ARG(ctx,
                             "weight [%" PRId64 ", %" PRId64 ", ...] does not fit %" PRId64
                             " input channels in %" PRId64 " groups",
                             w->sizes[0], w->sizes[1], g->cin, groups);
    g->ocpg = g->cout / groups;
  }
  if (bias != NULL && (bias->rank != 1 || bias->sizes[0] != g->cout))
    return PTERUN_FAIL_ARG(ctx, "arg 'bias': expected shape [%" PRId64 "]", g->cout);
  out_sizes[0] = g->n;
  out_sizes[1] = g->cout;
  for (d = 0; d < 3; ++d) {
    int real = d >= 3 - sp;
    int64_t ext;
    g->in[d] = real ? in->sizes[2 + d - (3 - sp)] : 1;
    g->k[d] = real ? w->sizes[2 + d - (3 - sp)] : 1;
    if (g->stride[d] <= 0 || g->dil[d] <= 0 || g->pad[d] < 0 || opad[d] < 0 ||
        (transposed && opad[d] >= g->stride[d] && opad[d] >= g->dil[d]))
      return PTERUN_FAIL_ARG(
          ctx, "invalid stride/padding/dilation/output_padding at spatial dim %d", d - (3 - sp));
    {
      /* Checked arithmetic: hostile padding/dilation must not overflow. */
      int64_t t, tp, span;
      int ok = g->k[d] >= 1 && pk_ck_mul(g->dil[d], g->k[d] - 1, &t) && pk_ck_add(t, 1, &ext) &&
               pk_ck_mul(2, g->pad[d], &tp);
      if (ok && transposed) {
        if (g->in[d] >= 1)
          ok = pk_ck_mul(g->in[d] - 1, g->stride[d], &t);
        else
          t = -g->stride[d];
        ok = ok && pk_ck_add(t, -tp, &t) && pk_ck_add(t, ext, &t) &&
             pk_ck_add(t, opad[d], &g->out[d]);
      } else if (ok) {
        ok = pk_ck_add(g->in[d], tp, &span);
        g->out[d] = ok && span >= ext ? (span - ext) / g->stride[d] + 1 : 0;
      }
      if (!ok)
        return PTERUN_FAIL_ARG(ctx,
                               "kernel/padding/dilation/stride at spatial dim %d: empty kernel "
                               "or the output size overflows",
                               d - (3 - sp));
    }
    if (g->out[d] < 1)
      return PTERUN_FAIL_ARG(ctx, "output size at spatial dim %d would be %" PRId64, d - (3 - sp),
                             g->out[d]);
    if (real) out_sizes[2 + d - (3 - sp)] = g->out[d];
  }
  strides5(in, g->is);
  strides5(w, g->ws);
  return PTERUN_STATUS_OK;
}

/* aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
 *   SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
 *   SymInt groups, *, Tensor(a!) out), out at args[iout]; `act`: the fused
 *   activation (NULL: none). */
static pterun_status convolution(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                 const pterun_compute_gemm_opts* act) {
  pterun_tensor *in, *w, *bias, *out;
  bool transposed;
  int64_t groups, sizes[5], ocs, ics;
  conv_geom g;
  red_order ro;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "weight", &w));
  PTERUN_TRY(pterun_arg_opt_tensor(ctx, args, 2, "bias", &bias));
  PTERUN_TRY(pk_arg_bool(ctx, args, 6, "transposed", &transposed));
  PTERUN_TRY(pterun_arg_int(ctx, args, 8, "groups", &groups));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, iout, "out", &out));
  if (act != NULL && out->dtype != PTERUN_DTYPE_F32)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the fused activation needs float32, got %s",
                              pterun_dtype_name(out->dtype));
  PTERUN_TRY(pk_check_real(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", w, "weight"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", out, "out"));
  if (bias) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", bias, "bias"));
  if (in->dtype == PTERUN_DTYPE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "arg 'input': bool");
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_check_data(ctx, w, "weight"));
  if (bias) PTERUN_TRY(pterun_check_data(ctx, bias, "bias"));
  PTERUN_TRY(conv_setup(ctx, args, 3, in, w, bias, transposed, groups, &g, sizes));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", in->rank, sizes));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  strides5(out, g.os);
  /* A weight held only packed (pk_convolution_pack_scaled): its prepare made
   * sure the GEMM path with the packed A runs; any other path would read the
   * unfolded weight, so refuse instead of computing a wrong result. */
  const pk_prepacked* ps = pterun_kernel_state(ctx);
  const int pw_cl = !transposed && (bias == NULL || bias->dtype == PTERUN_DTYPE_F32) &&
                    pk_conv_pointwise_cl_ok(in, w, out, g.groups, g.stride, 3, g.pad, 3);
  const int packed_only = ps != NULL && ps->packed_only && ps->src == w->data;
  /* channels-last in and out: the indirect GEMM on its own packed filter */
  int done = 0;
  if (!transposed && !pw_cl && pk_conv_kxk_cl_ok(in, w, out, g.groups)) {
    done = pk_conv_kxk_cl(ctx, &g, in, w, bias, out, act) == 0;
    if (!done && packed_only)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL,
                                "a weight held only packed reached a path that reads it dense");
  }
  if (!done && packed_only && !pw_cl) { /* pw_cl: its own B */
    int64_t rows = g.icpg * g.k[0] * g.k[1] * g.k[2];
    if (transposed || g.groups != 1 || g.ocpg < 2 || g.icpg <= NN_CONV_PACKED_ONLY_MIN_CIN - 1 ||
        out->dtype != PTERUN_DTYPE_F32 || !pk_conv_weight_flattens(&g, &ro) ||
        !pk_conv_out_flattens(&g, &ocs) || pk_prepacked_for(ctx, w, g.ocpg, rows) == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_INTERNAL,
                                "a weight held only packed reached a path that reads it dense");
  }
  if (done) {
    /* the indirect GEMM ran */
  } else if (pw_cl) {
    pk_conv_pointwise_cl(ctx, &g, in, w, bias, out, act);
  } else if (!transposed && (bias == NULL || bias->dtype == PTERUN_DTYPE_F32) &&
             pk_conv_stem_cl_ok(in, w, out, g.groups) &&
             pk_conv_stem_cl(ctx, &g, in, w, bias, out, act) == 0) {
    /* done */
  } else if (!transposed && pk_conv_depthwise_ok(&g, in, w, bias, out)) {
    pk_conv_depthwise_f32(ctx, &g, in, w, bias, out, act);
  } else if (!transposed && !pk_conv_pointwise_input(&g, in, out, &ics) &&
             pk_conv_small_cin_f32(ctx, &g, in, w, bias, out, act) == 0) {
    /* done */
  } else if (!transposed && pterun_dtype_is_float(out->dtype) && pk_conv_weight_flattens(&g, &ro) &&
             pk_conv_out_flattens(&g, &ocs)) {
    pk_conv_gemm(ctx, &g, &ro, ocs, in, w, bias, out, act);
  } else {
    pk_conv_direct(&g, in, w, bias, out, transposed);
    /* out is dense: its elements are [0, numel) */
    if (act != NULL)
      pterun_compute_f32_activate((float*)out->data, (size_t)out->numel, act->activation, act->lo,
                                  act->hi);
  }
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(pk_convolution_out) {
  PTERUN_CHECK_NARGS(ctx, nargs, 11);
  return convolution(ctx, args, 9, NULL);
}

pterun_status pk_convolution_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                                 const pterun_compute_gemm_opts* act) {
  return convolution(ctx, args, iout, act);
}

/* Load time: whether a forward one-group convolution call (its arguments)
 * takes the channels-last 1x1 path at every execute (the layouts are fixed at
 * load). */
static int pointwise_cl_call(pterun_value** args, const pterun_tensor* in, const pterun_tensor* w,
                             const pterun_tensor* out) {
  size_t ns = 0, np = 0;
  const int64_t* st = pterun_value_int_list(args[3], &ns);
  const int64_t* pd = pterun_value_int_list(args[4], &np);
  return st != NULL && pd != NULL && pk_conv_pointwise_cl_ok(in, w, out, 1, st, ns, pd, np);
}

/* Load time: whether a forward one-group convolution call takes the
 * channels-last indirect GEMM at every execute (its layouts are fixed at
 * load; pk_conv_kxk_cl falls back only when nothing was packed). */
static int kxk_cl_call(pterun_value** args, const pterun_tensor* in, const pterun_tensor* w,
                       const pterun_tensor* out) {
  return !pointwise_cl_call(args, in, w, out) && pk_conv_kxk_cl_ok(in, w, out, 1);
}

/* Load time: packs a constant float32 weight of a convolution that takes the
 * GEMM path with one group (the weight is the product's A, cout x
 * icpg*kD*kH*kW in the weight's own reduction order). Geometry errors are
 * left for execute to report. */
static pterun_status convolution_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                      size_t want, size_t iout, pk_prepacked* into,
                                      const double* row_scale) {
  if (nargs != want || args[0]->tag != PTERUN_VALUE_TENSOR || args[1]->tag != PTERUN_VALUE_TENSOR ||
      args[iout]->tag != PTERUN_VALUE_TENSOR || args[6]->tag != PTERUN_VALUE_BOOL || args[6]->u.b ||
      args[8]->tag != PTERUN_VALUE_INT || args[8]->u.i != 1)
    return PTERUN_STATUS_OK;
  const pterun_tensor *in = args[0]->u.tensor, *w = args[1]->u.tensor, *out = args[iout]->u.tensor;
  if (pointwise_cl_call(args, in, w, out)) {
    /* the product's B, W^T: Cin x Cout; scaled (a folded batch norm), this
     * instruction's own block and the only copy (pk_conv_pointwise_cl) */
    if (!pk_prepack_constant_f32(w)) return PTERUN_STATUS_OK;
    pterun_compute_matrix b = {w->data, w->dtype, w->strides[1], w->strides[0]};
    if (row_scale == NULL)
      return pk_prepack_to(ctx, into, w, PTERUN_COMPUTE_OPERAND_B, w->sizes[1], w->sizes[0], &b);
    size_t bytes =
        pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, w->sizes[1], w->sizes[0]);
    void* mem = bytes != 0 ? pterun_kernel_state_alloc(ctx, bytes, 64) : NULL;
    if (mem == NULL)
      return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes for the packed weight", bytes);
    into->packed =
        pterun_compute_gemm_pack_b_scaled(mem, bytes, w->sizes[1], w->sizes[0], &b, row_scale);
    into->src = into->packed != NULL ? w->data : NULL;
    into->rows = w->sizes[1];
    into->cols = w->sizes[0];
    into->packed_only = into->packed != NULL;
    into->col_scale = row_scale;
    into->table = NULL;
    into->table_bytes = 0;
    return PTERUN_STATUS_OK;
  }
  if (kxk_cl_call(args, in, w, out)) /* the indirect GEMM's B, scaled or not */
    return pk_conv_kxk_cl_pack(ctx, w, into, row_scale, args, out, 0);
  if (pk_conv_stem_cl_ok(in, w, out, 1)) {
    if (row_scale != NULL || !pk_prepack_constant_f32(w)) return PTERUN_STATUS_OK;
    /* the indirect GEMM's filter (stem_cl.c) */
    if (w->sizes[1] >= NN_CONV_STEM_IG_MIN_CIN)
      return pk_conv_kxk_cl_pack(ctx, w, into, NULL, args, out, 1);
    /* one channel: window rows and B = W^T, K x Cout, as above */
    const int64_t k = w->sizes[1] * w->sizes[2] * w->sizes[3];
    pterun_compute_matrix b = {w->data, w->dtype, 1, w->strides[0]};
    return pk_prepack_to(ctx, into, w, PTERUN_COMPUTE_OPERAND_B, k, w->sizes[0], &b);
  }
  int sp = w->rank - 2, d;
  if (in->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || in->rank != w->rank ||
      sp < 1 || sp > 3 || !pk_prepack_constant_f32(w) || w->sizes[1] != in->sizes[1] ||
      in->sizes[1] == 1 /* depthwise path */)
    return PTERUN_STATUS_OK;
  conv_geom g;
  red_order ro;
  memset(&g, 0, sizeof g);
  g.icpg = w->sizes[1];
  for (d = 0; d < 3; ++d) g.k[d] = d < 3 - sp ? 1 : w->sizes[2 + d - (3 - sp)];
  strides5(w, g.ws);
  if (!pk_conv_weight_flattens(&g, &ro)) return PTERUN_STATUS_OK;
  int64_t rows = g.icpg * g.k[0] * g.k[1] * g.k[2];
  pterun_compute_matrix a = {w->data, w->dtype, g.ws[0], ro.cs};
  if (row_scale == NULL)
    return pk_prepack_to(ctx, into, w, PTERUN_COMPUTE_OPERAND_A, w->sizes[0], rows, &a);
  /* Scaled: this instruction's own block (a shared one is keyed by the
   * source's bytes, which other readers pack unscaled). */
  size_t bytes = pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_A, w->sizes[0], rows);
  void* mem = bytes != 0 ? pterun_kernel_state_alloc(ctx, bytes, 64) : NULL;
  if (mem == NULL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_OUT_OF_MEMORY,
                              "cannot allocate %zu bytes for the packed weight", bytes);
  into->packed = pterun_compute_gemm_pack_a_scaled(mem, bytes, w->sizes[0], rows, &a, row_scale);
  into->src = into->packed != NULL ? w->data : NULL;
  into->rows = w->sizes[0];
  into->cols = rows;
  into->packed_only = into->packed != NULL;
  into->table = NULL;
  into->table_bytes = 0;
  return PTERUN_STATUS_OK;
}

pterun_status pk_convolution_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                  size_t want, size_t iout, pk_prepacked* into) {
  return convolution_pack(ctx, args, nargs, want, iout, into, NULL);
}

/* Whether every execute of this convolution call (its arguments at prepare)
 * takes the GEMM path with a packed weight -- groups 1, forward, float32,
 * more than NN_CONV_PACKED_ONLY_MIN_CIN - 1 input channels (fewer may run
 * the direct kernel), more than one output channel (M = 1 may take the row
 * kernel, which the packed A does not fit) and an output whose spatial dims
 * are consecutive and in order in its dim order (so they flatten at any
 * size) -- if its weight packs. */
static int packed_path_always(pterun_value** args, size_t nargs, size_t want, size_t iout) {
  if (nargs != want || args[0]->tag != PTERUN_VALUE_TENSOR || args[1]->tag != PTERUN_VALUE_TENSOR ||
      args[iout]->tag != PTERUN_VALUE_TENSOR || args[6]->tag != PTERUN_VALUE_BOOL || args[6]->u.b ||
      args[8]->tag != PTERUN_VALUE_INT || args[8]->u.i != 1)
    return 0;
  const pterun_tensor *in = args[0]->u.tensor, *w = args[1]->u.tensor, *out = args[iout]->u.tensor;
  /* a channels-last 1x1 convolution: its path always runs (the layouts are
   * fixed at load) and reads W^T packed as B, or repacks it scaled */
  if (pointwise_cl_call(args, in, w, out) || kxk_cl_call(args, in, w, out)) return 1;
  if (pk_conv_stem_cl_ok(in, w, out, 1)) return 0; /* may fall back: keeps a folded copy */
  if (in->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || w->rank < 3 ||
      w->rank > 5 || in->rank != w->rank || out->rank != w->rank || w->sizes[0] < 2 ||
      w->sizes[1] < NN_CONV_PACKED_ONLY_MIN_CIN)
    return 0;
  int first = -1;
  for (int j = 0; j < out->rank; ++j)
    if (out->dim_order[j] == 2) first = j;
  if (first < 0 || first + out->rank - 2 > out->rank) return 0;
  for (int d = 2; d < out->rank; ++d)
    if (out->dim_order[first + d - 2] != d) return 0;
  return 1;
}

pterun_status pk_convolution_pack_scaled(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t nargs, size_t want, size_t iout, pk_prepacked* into,
                                         const double* row_scale) {
  into->packed = NULL;
  into->src = NULL;
  into->packed_only = 0;
  into->col_scale = NULL;
  into->table = NULL;
  into->table_bytes = 0;
  if (!packed_path_always(args, nargs, want, iout)) return PTERUN_STATUS_OK;
  return convolution_pack(ctx, args, nargs, want, iout, into, row_scale);
}

static pterun_status convolution_prepare(pterun_kernel_context* ctx, pterun_value** args,
                                         size_t nargs, size_t want, size_t iout) {
  pk_convolution_reserve(ctx, args, nargs, want, iout);
  return pk_convolution_pack(ctx, args, nargs, want, iout, NULL);
}

PTERUN_KERNEL(pk_convolution_prepare) {
  return convolution_prepare(ctx, args, nargs, 11, 9);
}

/* pterun::convolution_relu.out(<convolution's arguments>, *, out) and
 * pterun::convolution_hardtanh.out(<convolution's arguments>, min_val,
 * max_val, *, out) */
PK_DEFINE_FUSED_ACTIVATIONS(pk_convolution, convolution, convolution_prepare, 11)

/* aten::convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight,
 *   SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation,
 *   bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask, *,
 *   Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
 * Gradients of a forward (not transposed) convolution; each is a gather with
 * double accumulation: out0 = d input, out1 = d weight, out2 = d bias, each
 * only when its output_mask entry is set (the others are left untouched). */
PTERUN_KERNEL(pk_convolution_backward_out) {
  pterun_tensor *go, *in, *w, *gi, *gw, *gb;
  bool transposed;
  int64_t groups, sizes[5], gos[5], d;
  const pterun_value* mv;
  int mask[3];
  conv_geom g;
  PTERUN_CHECK_NARGS(ctx, nargs, 15);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "grad_output", &go));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "input", &in));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "weight", &w));
  PTERUN_TRY(pk_arg_bool(ctx, args, 7, "transposed", &transposed));
  PTERUN_TRY(pterun_arg_int(ctx, args, 9, "groups", &groups));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 11, "out0", &gi));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 12, "out1", &gw));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 13, "out2", &gb));
  mv = args[10];
  if (mv == NULL || mv->tag != PTERUN_VALUE_LIST_BOOL || mv->u.bools.len != 3)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "arg 'output_mask': expected bool[3]");
  for (d = 0; d < 3; ++d) mask[d] = mv->u.bools.items[d] != 0;
  if (transposed)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "arg 'transposed': transposed convolution backward is not supported");
  PTERUN_TRY(pk_check_float(ctx, in, "input"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", go, "grad_output"));
  PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", w, "weight"));
  if (mask[0]) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", gi, "out0"));
  if (mask[1]) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", gw, "out1"));
  if (mask[2]) PTERUN_TRY(pk_check_same_dtype(ctx, in, "input", gb, "out2"));
  PTERUN_TRY(pterun_check_data(ctx, in, "input"));
  PTERUN_TRY(pterun_check_data(ctx, w, "weight"));
  PTERUN_TRY(pterun_check_data(ctx, go, "grad_output"));
  PTERUN_TRY(conv_setup(ctx, args, 4, in, w, NULL, 0, groups, &g, sizes));
  if (go->rank != in->rank)
    return PTERUN_FAIL_ARG(ctx, "arg 'grad_output': expected rank %d, got %d", (int)in->rank,
                           (int)go->rank);
  for (d = 0; d < in->rank; ++d)
    if (go->sizes[d] != sizes[d])
      return PTERUN_FAIL_ARG(ctx,
                             "arg 'grad_output': size %" PRId64 " at dim %d, expected %" PRId64,
                             go->sizes[d], (int)d, sizes[d]);
  if (args[3] != NULL && args[3]->tag != PTERUN_VALUE_NONE) {
    const int64_t* bs;
    size_t blen;
    PTERUN_TRY(pterun_arg_int_list(ctx, args, 3, "bias_sizes", &bs, &blen, 1));
    if (blen != 1 || bs[0] != g.cout)
      return PTERUN_FAIL_ARG(ctx, "arg 'bias_sizes': expected [%" PRId64 "]", g.cout);
  }
  strides5(go, gos);
  if (mask[0]) {
    int64_t n, c, i[3], oc, k[3];
    PTERUN_TRY(pterun_out_resize(ctx, gi, "grad_input", in->rank, in->sizes));
    strides5(gi, g.os);
    for (n = 0; n < g.n; ++n)
      for (c = 0; c < g.cin; ++c) {
        int64_t grp = c / g.icpg, ic = c % g.icpg;
        for (i[0] = 0; i[0] < g.in[0]; ++i[0])
          for (i[1] = 0; i[1] < g.in[1]; ++i[1])
            for (i[2] = 0; i[2] < g.in[2]; ++i[2]) {
              double acc = 0.0;
              for (oc = grp * g.ocpg; oc < (grp + 1) * g.ocpg; ++oc)
                for (k[0] = 0; k[0] < g.k[0]; ++k[0])
                  for (k[1] = 0; k[1] < g.k[1]; ++k[1])
                    for (k[2] = 0; k[2] < g.k[2]; ++k[2]) {
                      /* i = o*stride - pad + k*dil  =>  o = (i + pad - k*dil) / stride */
                      int64_t goff = n * gos[0] + oc * gos[1], dd;
                      int ok = 1;
                      for (dd = 0; dd < 3 && ok; ++dd) {
                        int64_t t = i[dd] + g.pad[dd] - k[dd] * g.dil[dd];
                        ok = t >= 0 && t % g.stride[dd] == 0 && t / g.stride[dd] < g.out[dd];
                        if (ok) goff += (t / g.stride[dd]) * gos[2 + dd];
                      }
                      if (!ok) continue;
                      acc += pterun_load_f64(go->data, go->dtype, goff) *
                             pterun_load_f64(w->data, w->dtype,
                                             oc * g.ws[0] + ic * g.ws[1] + k[0] * g.ws[2] +
                                                 k[1] * g.ws[3] + k[2] * g.ws[4]);
                    }
              pterun_store_f64(
                  gi->data, gi->dtype,
                  n * g.os[0] + c * g.os[1] + i[0] * g.os[2] + i[1] * g.os[3] + i[2] * g.os[4],
                  acc);
            }
      }
  }
  if (mask[1]) {
    int64_t oc, ic, k[3], n, o[3], wo[5];
    PTERUN_TRY(pterun_out_resize(ctx, gw, "grad_weight", w->rank, w->sizes));
    strides5(gw, wo);
    for (oc = 0; oc < g.cout; ++oc)
      for (ic = 0; ic < g.icpg; ++ic) {
        int64_t c = (oc / g.ocpg) * g.icpg + ic;
        for (k[0] = 0; k[0] < g.k[0]; ++k[0])
          for (k[1] = 0; k[1] < g.k[1]; ++k[1])
            for (k[2] = 0; k[2] < g.k[2]; ++k[2]) {
              double acc = 0.0;
              for (n = 0; n < g.n; ++n)
                for (o[0] = 0; o[0] < g.out[0]; ++o[0])
                  for (o[1] = 0; o[1] < g.out[1]; ++o[1])
                    for (o[2] = 0; o[2] < g.out[2]; ++o[2]) {
                      int64_t ioff = n * g.is[0] + c * g.is[1], dd;
                      int ok = 1;
                      for (dd = 0; dd < 3 && ok; ++dd) {
                        int64_t p = o[dd] * g.stride[dd] - g.pad[dd] + k[dd] * g.dil[dd];
                        ok = p >= 0 && p < g.in[dd];
                        ioff += p * g.is[2 + dd];
                      }
                      if (!ok) continue;
                      acc += pterun_load_f64(in->data, in->dtype, ioff) *
                             pterun_load_f64(go->data, go->dtype,
                                             n * gos[0] + oc * gos[1] + o[0] * gos[2] +
                                                 o[1] * gos[3] + o[2] * gos[4]);
                    }
              /* wo[2..4] are 0 for missing leading spatial dims. */
              pterun_store_f64(gw->data, gw->dtype,
                               oc * wo[0] + ic * wo[1] + k[0] * wo[2] + k[1] * wo[3] + k[2] * wo[4],
                               acc);
            }
      }
  }
  if (mask[2]) {
    int64_t oc, n, p, np = g.out[0] * g.out[1] * g.out[2];
    PTERUN_TRY(pterun_out_resize(ctx, gb, "grad_bias", 1, &g.cout));
    for (oc = 0; oc < g.cout; ++oc) {
      double acc = 0.0;
      for (n = 0; n < g.n; ++n)
        for (p = 0; p < np; ++p) {
          int64_t o2 = p % g.out[2], o1 = (p / g.out[2]) % g.out[1], o0 = p / (g.out[2] * g.out[1]);
          acc +=
              pterun_load_f64(go->data, go->dtype,
                              n * gos[0] + oc * gos[1] + o0 * gos[2] + o1 * gos[3] + o2 * gos[4]);
        }
      pterun_store_f64(gb->data, gb->dtype, oc * gb->strides[0], acc);
    }
  }
  return PTERUN_STATUS_OK;
}
