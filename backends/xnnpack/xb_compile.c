/* Compiling a parsed graph at load: every node checked and prepared (shapes,
 * packed weights), live ranges of the internal values, and one arena for
 * them laid out so that values whose lifetimes do not overlap share bytes. */
#include <string.h>

#include "backends/xnnpack/xb_internal.h"

typedef struct block {
  size_t off, size;
  int64_t last_use;
} block;

/* First-fit placement of the internal values in definition order. */
static pterun_status plan_arena(xb_graph* g, const pterun_logger* lg) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->nvalues; ++i)
    if (g->values[i].loc == XB_LOC_ARENA) ++n;
  block* live = xb_alloc(g, (size_t)(n ? n : 1) * sizeof *live);
  if (live == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  uint32_t nlive = 0;
  size_t total = 0;
  for (uint32_t ni = 0; ni < g->nnodes; ++ni) {
    const xb_node* nd = &g->nodes[ni];
    uint32_t outs[2] = {nd->out, nd->out2};
    for (int o = 0; o < 2; ++o) {
      if (outs[o] == XB_INVALID_ID) continue;
      xb_value* v = &g->values[outs[o]];
      if (v->loc != XB_LOC_ARENA || v->first_def != (int64_t)ni) continue;
      // Retire blocks whose values are dead before this node.
      uint32_t k = 0;
      for (uint32_t j = 0; j < nlive; ++j)
        if (live[j].last_use >= (int64_t)ni) live[k++] = live[j];
      nlive = k;
      size_t need = (v->nbytes + 63) & ~(size_t)63;
      if (need < v->nbytes) return xb_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "value too large");
      // Lowest offset that fits between live blocks (kept sorted by offset).
      size_t off = 0;
      uint32_t at = 0;
      for (; at < nlive; ++at) {
        if (live[at].off >= off + need) break;
        if (live[at].off + live[at].size > off) off = live[at].off + live[at].size;
      }
      for (uint32_t j = nlive; j > at; --j) live[j] = live[j - 1];
      live[at] = (block){off, need, v->last_use};
      ++nlive;
      v->arena_offset = off;
      if (off + need > total) total = off + need;
    }
  }
  g->arena_bytes = total;
  return PTERUN_STATUS_OK;
}

pterun_status xb_compile(const pterun_backend_init_args* a, xb_graph* g) {
  const pterun_logger* lg = a->logger;
  for (uint32_t e = 0; e < g->num_externs; ++e)
    if (g->ext_value[e] == XB_INVALID_ID)
      return xb_fail(lg, PTERUN_STATUS_INVALID_PROGRAM, "external id %u has no value", e);
  PTERUN_TRY(xb_widen_fp16(a, g));
  // Live ranges; every internal value is written before it is read.
  for (uint32_t ni = 0; ni < g->nnodes; ++ni) {
    xb_node* n = &g->nodes[ni];
    for (uint32_t k = 0; k < n->nin; ++k) {
      xb_value* v = &g->values[n->in[k]];
      if (v->loc == XB_LOC_NONE || (v->loc == XB_LOC_ARENA && v->first_def < 0))
        return xb_fail(lg, PTERUN_STATUS_INVALID_PROGRAM,
                       "node %u (%s) reads value %u before any node writes it", ni,
                       xb_node_name(n->tag), n->in[k]);
      v->last_use = ni;
    }
    uint32_t outs[2] = {n->out, n->out2};
    for (int o = 0; o < 2; ++o) {
      if (outs[o] == XB_INVALID_ID) continue;
      xb_value* v = &g->values[outs[o]];
      if (v->loc == XB_LOC_CONST || (v->loc == XB_LOC_EXTERNAL && v->is_input))
        return xb_fail(lg, PTERUN_STATUS_INVALID_PROGRAM,
                       "node %u (%s) writes into a constant or an input", ni, xb_node_name(n->tag));
      if (v->loc == XB_LOC_NONE) v->loc = XB_LOC_ARENA;
      if (v->first_def < 0) v->first_def = ni;
      if (v->last_use < (int64_t)ni) v->last_use = ni;
    }
  }
  // Node checks and weight packing (refuses unimplemented node/dtype pairs).
  for (uint32_t ni = 0; ni < g->nnodes; ++ni) {
    pterun_status st = xb_prepare_node(a, g, &g->nodes[ni]);
    if (st != PTERUN_STATUS_OK)
      return xb_fail(lg, st, "cannot compile node %u (%s)", ni, xb_node_name(g->nodes[ni].tag));
    if (g->nodes[ni].scratch_bytes > g->scratch_bytes)
      g->scratch_bytes = g->nodes[ni].scratch_bytes;
  }
  PTERUN_TRY(plan_arena(g, lg));
  g->arena = xb_alloc(g, g->arena_bytes);
  g->scratch = xb_alloc(g, g->scratch_bytes);
  g->ptrs = xb_alloc(g, (size_t)g->nvalues * sizeof *g->ptrs);
  if (g->arena == NULL || g->scratch == NULL || g->ptrs == NULL)
    return xb_fail(lg, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate %zu + %zu bytes",
                   g->arena_bytes, g->scratch_bytes);
  return PTERUN_STATUS_OK;
}

static int pterun_dtype_for(int dt) {
  switch (dt) {
    case XB_DT_FP32: return PTERUN_DTYPE_F32;
    case XB_DT_FP16: return PTERUN_DTYPE_F16;
    case XB_DT_BF16: return PTERUN_DTYPE_BF16;
    case XB_DT_QINT8: return PTERUN_DTYPE_I8;
    case XB_DT_QUINT8: return PTERUN_DTYPE_U8;
    case XB_DT_INT32:
    case XB_DT_QINT32: return PTERUN_DTYPE_I32;
    default: return -1;
  }
}

/* Binds an external value to the delegate argument: dtype, capacity, and
 * for inputs the shape of this call. Sets *changed when it differs from the
 * exported one. */
static pterun_status bind_external(xb_graph* g, pterun_kernel_context* ctx, pterun_value** args,
                                   size_t nargs, xb_value* v, void** data, int* changed) {
  if (v->external_id >= nargs)
    return PTERUN_FAIL_ARG(ctx, "delegate called with %zu values; external %u missing", nargs,
                           v->external_id);
  (void)g;
  pterun_value* a = args[v->external_id];
  if (a == NULL || a->tag != PTERUN_VALUE_TENSOR)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "delegate value %u is not a tensor",
                              v->external_id);
  pterun_tensor* t = a->u.tensor;
  // Rank-0 tensors are serialized as [1]: a rank difference is accepted at
  // the exported element count only.
  int same_rank = t->rank == v->rank;
  if (t->dtype != pterun_dtype_for(v->half ? XB_DT_FP16 : v->dtype) ||
      (!same_rank && (size_t)t->numel != v->max_numel))
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE,
                              "delegate value %u is a rank-%u %s tensor; the graph expects rank %u "
                              "%s",
                              v->external_id, t->rank, pterun_dtype_name(t->dtype), v->rank,
                              xb_dtype_name(v->half ? XB_DT_FP16 : v->dtype));
  if (v->is_input && same_rank) {
    // Sizes in physical order (the tensor's dim order), within the bounds.
    size_t numel = 1;
    for (uint32_t d = 0; d < v->rank; ++d) {
      size_t s = (size_t)t->sizes[t->dim_order[d]];
      if (s > v->max_dims[d])
        return PTERUN_FAIL_ARG(ctx, "delegate input %u dim %u is %zu; the graph allows %zu",
                               v->external_id, d, s, v->max_dims[d]);
      if (s != v->max_dims[d]) *changed = 1;
      v->dims[d] = s;
      numel *= s;
    }
    v->numel = numel;
  }
  size_t elem = v->half ? 2 : v->max_numel ? v->nbytes / v->max_numel : 0;
  size_t need = (v->is_input ? v->numel : v->max_numel) * elem;
  if (!v->is_input && !v->half) need = v->nbytes;
  if (t->data == NULL || (v->is_input ? t->nbytes : t->capacity) < need)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_STATE,
                              "delegate value %u has no memory or too little", v->external_id);
  *data = t->data;
  if (v->half) {
    // fp16 external: the nodes read and write its f32 stage.
    if (v->is_input) xb_f16_load(v->stage, t->data, v->numel);
    *data = v->stage;
  }
  return PTERUN_STATUS_OK;
}

pterun_status xb_run(xb_graph* g, pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  void** data = g->ptrs;
  int changed = 0;
  for (uint32_t i = 0; i < g->nvalues; ++i) {
    xb_value* v = &g->values[i];
    switch (v->loc) {
      case XB_LOC_CONST: data[i] = (void*)v->constant; break;
      case XB_LOC_ARENA: data[i] = g->arena + v->arena_offset; break;
      case XB_LOC_EXTERNAL:
        PTERUN_TRY(bind_external(g, ctx, args, nargs, v, &data[i], &changed));
        break;
      default: data[i] = NULL; break;
    }
  }
  // Shapes: propagated node by node when an input's shape is not the
  // exported one; restored to the exported ones after such a call.
  if (changed || g->reshaped) {
    for (uint32_t i = 0; i < g->nvalues; ++i) {
      xb_value* v = &g->values[i];
      if (!(v->loc == XB_LOC_EXTERNAL && v->is_input)) {
        memcpy(v->dims, v->max_dims, sizeof v->dims);
        v->numel = v->max_numel;
      }
    }
    g->reshaped = changed;
  }
  // One GEMM workspace for the whole call: it takes its packing buffers from
  // the method's scratch once (scratch is per instruction, not per node).
  pterun_compute_gemm_ws ws;
  pterun_compute_gemm_init_ex(g->gemm_scratch > 0 ? ctx : NULL, &ws, PTERUN_DTYPE_F32, NULL,
                              pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx));
  xb_exec x = {g, ctx, data, &ws, pterun_kernel_threadpool(ctx), pterun_kernel_max_threads(ctx)};
  const int tracing = pterun_kernel_tracing(ctx); /* a profiler sees each node */
  for (uint32_t ni = 0; ni < g->nnodes; ++ni) {
    const xb_node* n = &g->nodes[ni];
    if (changed) {
      pterun_status st = xb_reshape_node(g, n);
      if (st != PTERUN_STATUS_OK)
        return pterun_kernel_fail(
            ctx, st,
            "node %u (%s): cannot run at this call's shapes (FullyConnected, "
            "convolution, pooling, pad, element-wise, reshape, transpose, "
            "concatenation and batch matrix multiply follow dynamic shapes here)",
            ni, xb_node_name(n->tag));
    }
    if (tracing) pterun_kernel_event_begin(ctx, ni, xb_node_name(n->tag));
    pterun_status st = xb_run_node(&x, n);
    if (st == PTERUN_STATUS_OK) xb_round_fp16_outputs(&x, n);
    if (tracing) pterun_kernel_event_end(ctx, ni, xb_node_name(n->tag));
    if (st != PTERUN_STATUS_OK)
      return pterun_kernel_fail(ctx, st, "node %u (%s) failed", ni, xb_node_name(n->tag));
  }
  // Outputs take the computed shapes (mapped back through their dim order).
  for (uint32_t e = 0; e < g->num_externs; ++e) {
    const xb_value* v = &g->values[g->ext_value[e]];
    if (!v->is_output) continue;
    pterun_tensor* t = args[v->external_id]->u.tensor;
    if (v->half) xb_f16_store(t->data, v->stage, v->numel);
    if (t->rank != v->rank) continue; /* rank 0 as [1]: nothing to resize */
    int64_t sz[XB_MAX_DIMS];
    int same = 1;
    for (uint32_t d = 0; d < v->rank; ++d) {
      sz[t->dim_order[d]] = (int64_t)v->dims[d];
      same &= t->sizes[t->dim_order[d]] == (int64_t)v->dims[d];
    }
    if (!same && pterun_tensor_resize(t, t->rank, sz) != PTERUN_STATUS_OK)
      return PTERUN_FAIL_ARG(ctx, "cannot resize delegate output %u", v->external_id);
  }
  return PTERUN_STATUS_OK;
}
