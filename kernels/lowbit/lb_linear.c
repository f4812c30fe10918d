/* torchao::_linear_8bit_act_{n}bit_weight.out: out[m, n] = activations[m, k]
 * (quantized per row to int8) times the packed n-bit weights (universal
 * layout). This file checks the arguments and the buffer; the arithmetic
 * (torchao's, docs/lowbit.md) and its split over the method's thread pool
 * are libpterun_compute's pterun_compute_lowbit_linear.
 *
 * At method load (kernel ABI 3 `prepare`), constant weights are checked once
 * and the widths the microkernels would unpack on every call (1-3, 5-7 bits)
 * are repacked into the 4- or 8-bit layout in the method's memory
 * (pterun_compute_lowbit_repack: same codes, same output bits). */
#include <inttypes.h>

#include "kernels/lowbit/lb.h"

/* The instruction's state: the weights to read (the program's own buffer,
 * or the repacked copy that follows this struct). */
typedef struct lb_linear_state {
  pterun_compute_lowbit_weights w;
} lb_linear_state;

/* Reads and checks the weight arguments (1-4) into `w`. */
static pterun_status weights_arg(pterun_kernel_context* ctx, pterun_value** args, int nbit,
                                 pterun_compute_lowbit_weights* w) {
  pterun_tensor* pw;
  const uint8_t* packed;
  size_t size;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "packed_weights", &pw));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "group_size", &w->group_size));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "n", &w->n));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "k", &w->k));
  PTERUN_TRY(lb_packed_arg(ctx, pw, "packed_weights", &packed, &size));
  PTERUN_TRY(lb_linear_check(ctx, packed, size, nbit, w->group_size, w->n, w->k, &w->has_zeros,
                             &w->has_bias, &w->tile_bytes));
  w->nbit = nbit;
  w->tiles = packed + LB_HEADER_BYTES;
  return PTERUN_STATUS_OK;
}

pterun_status lb_linear_prepare(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                int nbit) {
  pterun_tensor* pw;
  pterun_compute_lowbit_weights w;
  lb_linear_state* st;
  size_t extra;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  /* the quantized activation rows execute keeps in scratch (all of the
   * load-time rows, the upper bound of a dynamic m), constant weights or not */
  if (args[0]->tag == PTERUN_VALUE_TENSOR && args[0]->u.tensor->rank == 2 &&
      args[2]->tag == PTERUN_VALUE_INT && args[4]->tag == PTERUN_VALUE_INT && args[2]->u.i > 0 &&
      args[4]->u.i > 0 && args[4]->u.i < ((int64_t)1 << 31)) {
    pterun_compute_lowbit_weights shape;
    memset(&shape, 0, sizeof shape);
    shape.group_size = args[2]->u.i;
    shape.k = args[4]->u.i;
    pterun_kernel_scratch_reserve(
        ctx, pterun_compute_lowbit_scratch_bytes(&shape, args[0]->u.tensor->sizes[0]));
  }
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "packed_weights", &pw));
  if (pw->data == NULL) return PTERUN_STATUS_OK; /* not a constant: checked per call */
  /* a malformed constant buffer fails the load, with execute's message */
  PTERUN_TRY(weights_arg(ctx, args, nbit, &w));
  extra = pterun_compute_lowbit_repack_bytes(&w);
  if (extra > SIZE_MAX - 64 - sizeof *st ||
      (st = (lb_linear_state*)pterun_kernel_state_alloc(ctx, 64 + extra, 64)) == NULL)
    return PTERUN_STATUS_OK; /* run unprepared */
  if (extra != 0)
    pterun_compute_lowbit_repack(&w, (uint8_t*)st + 64, &st->w);
  else
    st->w = w;
  return PTERUN_STATUS_OK;
}

pterun_status lb_linear_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            int nbit) {
  pterun_tensor *act, *out;
  const lb_linear_state* st = (const lb_linear_state*)pterun_kernel_state(ctx);
  pterun_compute_lowbit_weights w;
  int64_t m;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "activations", &act));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  if (st != NULL)
    w = st->w; /* checked (and perhaps repacked) at load */
  else
    PTERUN_TRY(weights_arg(ctx, args, nbit, &w));
  if (act->rank != 2 || act->dtype != PTERUN_DTYPE_F32 || act->sizes[1] != w.k)
    return PTERUN_FAIL_ARG(ctx,
                           "arg 'activations': must be float32 [m, %" PRId64 "], got %s rank %d",
                           w.k, pterun_dtype_name(act->dtype), act->rank);
  if (!pterun_tensor_is_contiguous(act) || (act->numel > 0 && act->data == NULL))
    return PTERUN_FAIL_ARG(ctx, "arg 'activations': must be contiguous with data");
  m = act->sizes[0];
  PTERUN_TRY(lb_out_2d(ctx, out, m, w.n));
  return pterun_compute_lowbit_linear(ctx, &w, (const float*)act->data, m, (float*)out->data);
}
