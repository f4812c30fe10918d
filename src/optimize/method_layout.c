/* Load-time layout choice: some 4-D intermediates of convolution chains
 * become channels-last (dim order 0,2,3,1). Float32 depthwise-separable
 * chains on narrow planes: the depthwise convolution runs its NHWC loop
 * without transposing its input and output, a 1x1 convolution is one GEMM
 * over all pixels (rows of channels); so on wider planes where every tensor
 * of the group has LAYOUT_WIDE_MIN_C channels or more and no small-channel
 * stem writes one (fewer channels, and the stems, run slower channels-last).
 * Fused int8 convolutions: their GEMM works on padded NHWC rows, so
 * channels-last codes remove a transpose on each side. Only the dim order
 * changes: sizes, bytes and the memory plan stay, and the kernels read and
 * write any dim order (the tensors' strides say where each element is), so a
 * wrong choice costs speed, never a result.
 *
 * A tensor may change when one call the pass knows writes it, every call
 * naming it is one it knows (convolutions, relu/hardtanh/add without
 * broadcasting, means; their fused int8 forms), nothing else names it (no
 * list, move, delegate, method input or output) and no elided view reads its
 * bytes while it lives. A 1x1 unit-stride unpadded float32 convolution keeps
 * its input and output in one layout (its GEMM needs both as rows), so do
 * the element-wise calls: tensors joined that way change together, and only
 * where it pays (docs/architecture.md, "Channels-last chains"). Runs at the
 * end of the fusion pass (off with it), before kernel preparation, which
 * sees the layouts it chose. */
#include <string.h>

#include "src/optimize/method_fuse_internal.h"
#include "src/optimize/opt_internal.h"

enum {
  LK_NONE,
  LK_CONV,
  LK_MEAN,
  LK_UNARY,
  LK_ADD,
  LK_QCONV,
  LK_QMEAN,
  LK_QADD,
  LK_BN,
  LK_MAXPOOL
};
/* Output columns below which a depthwise convolution's NCHW path runs NHWC
 * (kernels/portable/conv/depthwise.c: NN_DW_NHWC_MAX_OUT_W). */
#define LAYOUT_NARROW_W 16
/* Channels from which a depthwise convolution on wide planes runs
 * channels-last, and below which a tensor keeps such a group NCHW (mobilenetv1
 * at 224x224: 12.97 -> 12.62 ms, at width 0.25: 0.220 -> 0.213; with 16- and
 * 24-channel groups changed too, a MobileNetV2 ran 5 % slower). */
#define LAYOUT_WIDE_MIN_C 32
/* Output channels from which a one-group convolution runs channels-last
 * (fewer leave most of a vector tile empty: the NCHW GEMM runs such a layer
 * with the pixels across the vectors), and from which such a layer makes a
 * group worth changing. */
#define LAYOUT_KXK_MIN_COUT 8
#define LAYOUT_KXK_PAYS_COUT 16

/* The float32 convolution-family operators (input at 0, weight at 1, the
 * geometry at 3..8) and the mean, by name. */
static int op_kind(const char* name) {
  static const char* const kConv[] = {"aten::convolution.out",
                                      "pterun::convolution_relu.out",
                                      "pterun::convolution_hardtanh.out",
                                      "pterun::convolution_bn.out",
                                      "pterun::convolution_bn_relu.out",
                                      "pterun::convolution_bn_hardtanh.out"};
  for (size_t k = 0; k < sizeof kConv / sizeof kConv[0]; ++k)
    if (strcmp(name, kConv[k]) == 0) return LK_CONV;
  if (strcmp(name, "aten::relu.out") == 0 || strcmp(name, "aten::hardtanh.out") == 0)
    return LK_UNARY;
  if (strcmp(name, "aten::add.out") == 0) return LK_ADD;
  /* an inference batch norm the fusion pass left (its result could not
   * take the convolution's bytes): per-channel, any layout */
  if (strcmp(name, "aten::_native_batch_norm_legit_no_training.out") == 0) return LK_BN;
  /* max pooling: per channel, any layout (its indices keep theirs) */
  if (strcmp(name, "aten::max_pool2d_with_indices.out") == 0) return LK_MAXPOOL;
  /* The fused int8 operators (kernels/quantized/q_int8_ops.c): their
   * kernels read and write channels-last codes in place. */
  static const char* const kQConv[] = {
      "pterun_quantized::conv2d_q8.out", "pterun_quantized::conv2d_relu_q8.out",
      "pterun_quantized::conv2d_hardtanh_q8.out", "pterun_quantized::conv2d_q8_hardtanh_q8.out"};
  for (size_t k = 0; k < sizeof kQConv / sizeof kQConv[0]; ++k)
    if (strcmp(name, kQConv[k]) == 0) return LK_QCONV;
  if (strcmp(name, "pterun_quantized::add_q8.out") == 0 ||
      strcmp(name, "pterun_quantized::add_relu_q8.out") == 0)
    return LK_QADD;
  if (strcmp(name, "pterun_quantized::mean_q8.out") == 0) return LK_QMEAN;
  return strcmp(name, "aten::mean.out") == 0 ? LK_MEAN : LK_NONE;
}

/* Element-wise calls (relu, hardtanh, add without broadcasting) keep one
 * layout for their operands and result: their kernels then run one flat loop
 * over memory (pterun_same_layout). The tensor inputs: 1 or 2, else 0 (a
 * broadcast or a non-tensor operand: not one this pass joins). */
static uint32_t elementwise_inputs(const pt_instr* in, int kind) {
  const uint32_t n = kind == LK_ADD ? 2 : 1;
  if (in->b < n + 2) return 0;
  const pterun_tensor* out =
      in->args[in->b - 1]->tag == PTERUN_VALUE_TENSOR ? in->args[in->b - 1]->u.tensor : NULL;
  if (out == NULL || out->rank != 4) return 0;
  for (uint32_t k = 0; k < n; ++k) {
    const pterun_value* v = in->args[k];
    if (v == NULL || v->tag != PTERUN_VALUE_TENSOR || v->u.tensor->rank != 4 ||
        v->u.tensor->dtype != out->dtype)
      return 0;
    for (int d = 0; d < 4; ++d)
      if (v->u.tensor->sizes[d] != out->sizes[d]) return 0;
  }
  return n;
}

static const pterun_tensor* tensor_of(const pterun_value* v) {
  return v != NULL && v->tag == PTERUN_VALUE_TENSOR ? v->u.tensor : NULL;
}

/* A call whose result is not its last argument but the first of several
 * outs returned as a list: an inference batch norm (input 0, out0 at 7, the
 * list of its three outs at 10) between two float32 4-D tensors of one
 * shape, or a 2-D max pooling (input 0, out at 6, indices at 7, the list at
 * 8) between two float32 4-D tensors. The result's argument index, or 0
 * for another call. Such a call joins its input and result like an
 * element-wise one. */
static uint32_t listed_result(const pt_instr* in, int kind) {
  const uint32_t nargs = kind == LK_BN ? 11 : kind == LK_MAXPOOL ? 9 : 0;
  const uint32_t at = kind == LK_BN ? 7 : 6;
  if (nargs == 0 || in->b != nargs) return 0;
  const pterun_tensor *x = tensor_of(in->args[0]), *y = tensor_of(in->args[at]);
  const pterun_value* l = in->args[nargs - 1];
  if (x == NULL || y == NULL || x->rank != 4 || y->rank != 4 || x->dtype != PTERUN_DTYPE_F32 ||
      y->dtype != PTERUN_DTYPE_F32 || l == NULL || l->tag != PTERUN_VALUE_LIST_TENSOR ||
      l->u.tensors.len < 2 || l->u.tensors.items[0] != in->args[at])
    return 0;
  for (size_t e = 1; e < l->u.tensors.len; ++e)
    if (l->u.tensors.items[e] == in->args[at]) return 0;
  for (int d = 0; d < 4; ++d)
    if (kind == LK_BN ? x->sizes[d] != y->sizes[d] : d < 2 && x->sizes[d] != y->sizes[d]) return 0;
  return at;
}

/* All entries of an int list equal `want` (one entry stands for every dim). */
static bool ints_all(const pterun_value* v, int64_t want) {
  if (v == NULL || v->tag != PTERUN_VALUE_LIST_INT) return false;
  size_t n;
  const int64_t* x = pterun_value_int_list((pterun_value*)v, &n);
  if (x == NULL || n == 0) return false;
  for (size_t k = 0; k < n; ++k)
    if (x[k] != want) return false;
  return true;
}

/* What a 2-D float32 convolution call is: 'd' depthwise (one input channel per
 * group), 'p' 1x1 unit-stride unpadded with one group, 'o' other, 0 not one
 * this pass touches (transposed, not 2-D, not float32, ...). */
static char conv_shape(const pt_instr* in) {
  if (in->b < 11) return 0;
  const pterun_tensor *x = tensor_of(in->args[0]), *w = tensor_of(in->args[1]);
  const pterun_value *tr = in->args[6], *gr = in->args[8];
  if (x == NULL || w == NULL || x->rank != 4 || w->rank != 4 || x->dtype != PTERUN_DTYPE_F32 ||
      w->dtype != PTERUN_DTYPE_F32 || tr == NULL || tr->tag != PTERUN_VALUE_BOOL || tr->u.b ||
      gr == NULL || gr->tag != PTERUN_VALUE_INT || gr->u.i < 1)
    return 0;
  if (w->sizes[1] == 1 && gr->u.i == x->sizes[1] && w->sizes[0] == x->sizes[1]) return 'd';
  if (gr->u.i == 1 && w->sizes[2] == 1 && w->sizes[3] == 1 && ints_all(in->args[3], 1) &&
      ints_all(in->args[4], 0))
    return 'p';
  /* a stem (one group, few input channels): writes channels-last rows
   * through window rows and a GEMM (kernels/portable/conv/stem_cl.c) */
  if (gr->u.i == 1 && w->sizes[1] <= 4) return 's';
  /* any other one-group convolution with enough output channels to fill a
   * vector tile: the indirect GEMM over channels-last rows
   * (kernels/portable/conv/kxk_cl.c; its limits: 64 taps, 4096 channels) */
  if (gr->u.i == 1 && w->sizes[0] >= LAYOUT_KXK_MIN_COUT && w->sizes[1] <= 4096 &&
      w->sizes[2] * w->sizes[3] <= 64)
    return 'k';
  return 'o';
}

/* A fused int8 2-D convolution this pass may give channels-last codes:
 * 8-bit 4-D input, an int8 [OC, IC/groups, KH, KW] weight (args[6]) of at
 * most 64 taps (what the channels-last depthwise loop takes). */
static bool qconv_ok(const pt_instr* in) {
  if (in->b < 23) return false;
  const pterun_tensor *x = tensor_of(in->args[0]), *w = tensor_of(in->args[6]);
  return x != NULL && w != NULL && x->rank == 4 && w->rank == 4 &&
         (x->dtype == PTERUN_DTYPE_I8 || x->dtype == PTERUN_DTYPE_U8) &&
         w->dtype == PTERUN_DTYPE_I8 && w->sizes[2] * w->sizes[3] <= 64;
}

/* The operands of a fused int8 add (args[0] and args[6]) when both have the
 * result's 4-D shape (no broadcast), else false. */
static bool qadd_ok(const pt_instr* in) {
  if (in->b != 20) return false;
  const pterun_tensor *a = tensor_of(in->args[0]), *b = tensor_of(in->args[6]),
                      *o = tensor_of(in->args[19]);
  if (a == NULL || b == NULL || o == NULL || o->rank != 4 || a->rank != 4 || b->rank != 4)
    return false;
  for (int d = 0; d < 4; ++d)
    if (a->sizes[d] != o->sizes[d] || b->sizes[d] != o->sizes[d]) return false;
  return true;
}

static uint32_t find(uint32_t* parent, uint32_t v) {
  while (parent[v] != v) {
    parent[v] = parent[parent[v]];
    v = parent[v];
  }
  return v;
}

/* Flat index span [first, last] of the instructions naming each value (a
 * tensor list's items included); first > last for none. */
static void ref_spans(const pterun_method* m, const fuse_facts* f, uint32_t total, uint32_t* first,
                      uint32_t* last) {
  for (uint32_t v = 0; v < m->value_count; ++v) {
    first[v] = UINT32_MAX;
    last[v] = 0;
  }
  for (uint32_t k = 0; k < total; ++k) {
    const pt_instr* in = f->instr[k];
    if (in->type != PT_INSTR_KERNEL_CALL && in->type != PT_INSTR_DELEGATE_CALL) continue;
    for (uint32_t a = 0; a < in->b; ++a) {
      const pterun_value* v = in->args[a];
      const size_t n =
          v->tag == PTERUN_VALUE_LIST_TENSOR || v->tag == PTERUN_VALUE_LIST_OPTIONAL_TENSOR
              ? v->u.tensors.len
              : 0;
      for (size_t e = 0; e <= n; ++e) {
        const pterun_value* x = e == 0 ? v : v->u.tensors.items[e - 1];
        if (x == NULL) continue;
        const uint32_t i = (uint32_t)(x - m->values);
        if (k < first[i]) first[i] = k;
        if (k > last[i]) last[i] = k;
      }
    }
  }
}

/* Is t (value v) possibly read through an elided view: a planned tensor
 * nothing writes that shares t's bytes and is named while t lives
 * (instructions [from, to])? Bytes the plan reuses at other times are not. */
static bool viewed(const pterun_method* m, const fuse_facts* f, const uint32_t* first,
                   const uint32_t* last, const pterun_tensor* t, uint32_t from, uint32_t to) {
  uintptr_t t0 = (uintptr_t)t->data, t1 = t0 + t->capacity;
  for (uint32_t v = 0; v < m->value_count; ++v) {
    const pterun_tensor* x = tensor_of(&m->values[v]);
    if (x == NULL || x == t || x->data == NULL || f->written[v] || f->refs[v] == 0) continue;
    uintptr_t x0 = (uintptr_t)x->data, x1 = x0 + x->capacity;
    if (x0 < t1 && t0 < x1 && first[v] <= to && last[v] >= from) return true;
  }
  return false;
}

/* Per value, then (LF_GROUP_*) per group of values that change together. */
enum {
  LF_BAD = 1,
  LF_DW = 2,
  LF_GROUP_BAD = 4,
  LF_GROUP_DW = 8,
  LF_WIDE_DW = 16,
  LF_Q = 32, /* named by a fused int8 convolution: its copies and transposes go */
  LF_GROUP_Q = 64,
  LF_KXK = 128, /* written by a convolution the indirect GEMM runs well */
  LF_GROUP_KXK = 256,
  LF_WIDE_OK = 512, /* a wide-plane depthwise side with LAYOUT_WIDE_MIN_C channels or more */
  LF_GROUP_WIDE = 1024,
  LF_FEW_C = 2048, /* fewer than LAYOUT_WIDE_MIN_C channels */
  LF_GROUP_FEW_C = 4096
};

/* Does a group (its root's LF_GROUP_* flags) change to channels-last? */
static int group_changes(uint16_t g) {
  return !(g & LF_GROUP_BAD) && !((g & LF_GROUP_WIDE) && (g & LF_GROUP_FEW_C)) &&
         (g & (LF_GROUP_DW | LF_GROUP_Q | LF_GROUP_KXK)) != 0;
}

/* The pass on facts gathered after fusion (f->instr covers `total`
 * instructions). */
static pterun_status choose(pterun_method* m, const fuse_facts* f, uint32_t total) {
  const size_t nv = m->value_count;
  /* slots per value in the calls below; 32 bits: the facts' 16-bit counts
   * saturate, and a saturated count is never trusted */
  uint32_t* uses = pterun_alloc(m->allocator, nv * sizeof *uses + 1, 16);
  uint32_t* parent = pterun_alloc(m->allocator, nv * sizeof *parent + 1, 16);
  uint16_t* flags = /* LF_* per value, then per group */
      pterun_alloc(m->allocator, (nv + 1) * sizeof *flags, 16);
  uint32_t* first = pterun_alloc(m->allocator, 4 * nv * sizeof *first + 1, 16);
  uint32_t* last = first != NULL ? first + nv : NULL;
  /* the listed_result call writing each value (flat index + 1; 0: none):
   * its result is not the call's last argument, where the facts look */
  uint32_t* list_writer = first != NULL ? first + 2 * nv : NULL;
  /* a strided wide-plane depthwise convolution's input, by its output (nv:
   * none) */
  uint32_t* wide_in = first != NULL ? first + 3 * nv : NULL;
  if (uses == NULL || parent == NULL || flags == NULL || first == NULL) {
    pterun_free(m->allocator, first);
    pterun_free(m->allocator, uses);
    pterun_free(m->allocator, parent);
    pterun_free(m->allocator, flags);
    return opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY,
                    "method: no memory for the layout pass");
  }
  memset(uses, 0, nv * sizeof *uses);
  memset(flags, 0, nv * sizeof *flags);
  memset(list_writer, 0, nv * sizeof *list_writer);
  for (uint32_t v = 0; v < nv; ++v) wide_in[v] = (uint32_t)nv;
  for (uint32_t v = 0; v < nv; ++v) parent[v] = v;
  ref_spans(m, f, total, first, last);
  /* The convolutions' and means' tensor slots. */
  for (uint32_t k = 0; k < total; ++k) {
    const pt_instr* in = f->instr[k];
    if (in->type != PT_INSTR_KERNEL_CALL || in->b < 2) continue;
    const int kind = op_kind(m->op_names[in->a]);
    const char shape = kind == LK_CONV ? conv_shape(in) : 0;
    if (kind == LK_BN || kind == LK_MAXPOOL) {
      const uint32_t at = listed_result(in, kind);
      if (at != 0) {
        const uint32_t xi = (uint32_t)(in->args[0] - m->values),
                       yi = (uint32_t)(in->args[at] - m->values);
        ++uses[xi];
        uses[yi] += 2; /* the out and the first item of the returned list */
        parent[find(parent, xi)] = find(parent, yi);
        list_writer[yi] = list_writer[yi] == 0 ? k + 1 : UINT32_MAX; /* two writers: never */
      }
      continue;
    }
    const pterun_value* out = in->args[in->b - 1];
    if (kind == LK_NONE || (kind == LK_CONV && shape == 0) || in->args[in->b - 2] != out ||
        in->args[0] == NULL)
      continue;
    const uint32_t xi = (uint32_t)(in->args[0] - m->values), oi = (uint32_t)(out - m->values);
    if (xi >= nv || oi >= nv) continue;
    if (kind == LK_QCONV || kind == LK_QADD || kind == LK_QMEAN) {
      if (kind == LK_QCONV && qconv_ok(in)) {
        ++uses[xi];
        uses[oi] += 2;
        flags[xi] |= LF_Q;
        flags[oi] |= LF_Q;
      } else if (kind == LK_QADD && qadd_ok(in)) {
        const uint32_t ai = (uint32_t)(in->args[0] - m->values),
                       bi = (uint32_t)(in->args[6] - m->values);
        ++uses[ai];
        ++uses[bi];
        uses[oi] += 2;
        parent[find(parent, ai)] = find(parent, oi);
        parent[find(parent, bi)] = find(parent, oi);
      } else if (kind == LK_QMEAN) {
        ++uses[xi];
        flags[oi] |= LF_BAD;
      }
      continue;
    }
    if (kind == LK_UNARY || kind == LK_ADD) {
      const uint32_t n = elementwise_inputs(in, kind);
      if (n == 0) continue;
      uses[oi] += 2;
      for (uint32_t a = 0; a < n; ++a) {
        const uint32_t ai = (uint32_t)(in->args[a] - m->values);
        ++uses[ai];
        parent[find(parent, ai)] = find(parent, oi);
      }
      continue;
    }
    ++uses[xi];
    if (kind == LK_CONV) {
      uses[oi] += 2; /* the out argument and the return slot */
      if (shape == 'd') {
        /* Narrow planes: the NCHW path would run NHWC between two transposes
         * anyway, each channels-last side saves one. Wide planes with
         * LAYOUT_WIDE_MIN_C channels or more: the NHWC loop beats the NCHW
         * one (stride 2 by 2-4x, Zen 4), where the rest of the group can go
         * too (LF_FEW_C). Other wide planes keep the NCHW loop: a
         * channels-last side would cost a transpose there. */
        const pterun_tensor* y = out->u.tensor;
        const uint16_t mark = y->sizes[3] < LAYOUT_NARROW_W && y->sizes[1] >= 8 ? LF_DW
                              : y->sizes[1] >= LAYOUT_WIDE_MIN_C                ? LF_WIDE_OK
                                                                                : LF_WIDE_DW;
        flags[xi] |= mark;
        flags[oi] |= mark;
        if (mark == LF_WIDE_OK && !ints_all(in->args[3], 1)) wide_in[oi] = xi;
      }
      if (shape == 'p' || shape == 'k') parent[find(parent, xi)] = find(parent, oi);
      if (shape == 'k' && out->u.tensor->sizes[1] >= LAYOUT_KXK_PAYS_COUT) flags[oi] |= LF_KXK;
      if (shape == 'o' || shape == 's') flags[xi] |= LF_BAD; /* they read NCHW best */
      if (shape == 's') flags[oi] |= LF_FEW_C; /* its channels-last path is the slower */
    } else {
      flags[oi] |= LF_BAD; /* a mean's result keeps its layout */
    }
  }
  /* Which values may change: a float32 4-D contiguous planned tensor named
   * only in those slots, written by one of those convolutions. */
  for (uint32_t v = 0; v < nv; ++v) {
    const pterun_tensor* t = tensor_of(&m->values[v]);
    const uint32_t w = list_writer[v] != 0 && f->writer[v] == 0 ? list_writer[v] : f->writer[v];
    const bool q8 = t != NULL && (t->dtype == PTERUN_DTYPE_I8 || t->dtype == PTERUN_DTYPE_U8);
    bool bad = t == NULL || t->rank != 4 || (t->dtype != PTERUN_DTYPE_F32 && !q8) ||
               !pterun_tensor_is_contiguous(t) || f->outputs[v] || f->refs[v] == UINT16_MAX ||
               uses[v] != f->refs[v] || w == 0 || w == UINT32_MAX || w > total || t->data == NULL ||
               !m->aux[t - m->tensors].in_arena;
    if (!bad) {
      const pt_instr* wi = f->instr[w - 1];
      const int wk = op_kind(m->op_names[wi->a]);
      char shape = 0;
      if (q8)
        shape = (wk == LK_QCONV && qconv_ok(wi)) || (wk == LK_QADD && qadd_ok(wi)) ? 'e' : 0;
      else if (wk == LK_CONV)
        shape = conv_shape(wi);
      else if (wk == LK_UNARY || wk == LK_ADD)
        shape = elementwise_inputs(wi, wk) ? 'e' : 0;
      uint32_t res_at = wi->b - 1;
      if (!q8 && (wk == LK_BN || wk == LK_MAXPOOL)) {
        res_at = listed_result(wi, wk);
        shape = res_at != 0 ? 'b' : 0;
      }
      const pterun_value* res = wi->args[res_at];
      bad = (shape != 'd' && shape != 'p' && shape != 'e' && shape != 's' && shape != 'k' &&
             shape != 'b') ||
            res != &m->values[v] || viewed(m, f, first, last, t, w - 1, last[v]);
    }
    if (bad) flags[v] |= LF_BAD;
    if (t != NULL && t->rank == 4 && t->sizes[1] < LAYOUT_WIDE_MIN_C) flags[v] |= LF_FEW_C;
  }
  /* A group changes whole, and only with a depthwise convolution in it. */
  for (uint32_t v = 0; v < nv; ++v) {
    const uint32_t r = find(parent, v);
    if (flags[v] & LF_BAD) flags[r] |= LF_GROUP_BAD;
    if (flags[v] & LF_DW) flags[r] |= LF_GROUP_DW;
    if (flags[v] & LF_WIDE_DW) flags[r] |= LF_GROUP_BAD;
    if (flags[v] & LF_WIDE_OK) flags[r] |= LF_GROUP_WIDE | LF_GROUP_DW;
    if (flags[v] & LF_FEW_C) flags[r] |= LF_GROUP_FEW_C;
    if (flags[v] & LF_Q) flags[r] |= LF_GROUP_Q;
    if (flags[v] & LF_KXK) flags[r] |= LF_GROUP_KXK;
  }
  /* A strided wide-plane depthwise convolution reading NCHW and writing
   * channels-last runs through a transpose of its (larger) input in scratch,
   * which costs more than the channels-last loop saves (MobileNetV2's
   * 144-channel stride-2 layer: 31 -> 51 us): its output's group stays
   * too, until no such call is left (groups only drop out: this ends). The
   * other way round transposes the smaller output, which pays. */
  for (int again = 1; again;) {
    again = 0;
    for (uint32_t v = 0; v < nv; ++v) {
      if (wide_in[v] == nv) continue;
      const uint32_t ro = find(parent, v), ri = find(parent, wide_in[v]);
      const int cl_out = !(flags[v] & LF_BAD) && group_changes(flags[ro]);
      const int cl_in = !(flags[wide_in[v]] & LF_BAD) && group_changes(flags[ri]);
      if (cl_out && !cl_in) {
        flags[ro] |= LF_GROUP_BAD;
        again = 1;
      }
    }
  }
  uint32_t changed = 0, wide = 0;
  static const uint8_t kNhwc[4] = {0, 2, 3, 1};
  for (uint32_t v = 0; v < nv; ++v) {
    const uint16_t g = flags[find(parent, v)];
    if ((flags[v] & LF_BAD) || !group_changes(g)) continue;
    pterun_tensor* t = m->values[v].u.tensor;
    memcpy(t->dim_order, kNhwc, sizeof kNhwc);
    (void)pterun_tensor_update_layout(t); /* sizes and numel are unchanged: cannot fail */
    ++changed;
    wide += (g & LF_GROUP_WIDE) != 0;
  }
  if (changed > 0)
    pterun_log(&m->logger, PTERUN_LOG_DEBUG,
               "layout: %u tensors channels-last (%u in wide-plane depthwise groups)", changed,
               wide);
  pterun_free(m->allocator, uses);
  pterun_free(m->allocator, parent);
  pterun_free(m->allocator, flags);
  pterun_free(m->allocator, first);
  return PTERUN_STATUS_OK;
}

pterun_status pt_layout_channels_last(pterun_method* m) {
  uint32_t total = 0;
  for (uint32_t c = 0; c < m->chain_count; ++c) total += m->chains[c].count;
  if (total == 0) return PTERUN_STATUS_OK;
  fuse_facts f;
  pterun_status st = PTERUN_STATUS_OK;
  if (!pt_fuse_facts_alloc(m, &f, total)) {
    st = opt_fail(&m->logger, PTERUN_STATUS_OUT_OF_MEMORY, "method: no memory for the layout pass");
  } else {
    pt_fuse_gather_facts(m, &f);
    if (!f.has_jumps) st = choose(m, &f, total);
  }
  pt_fuse_facts_free(m, &f);
  return st;
}
