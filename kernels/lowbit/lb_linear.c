/* torchao::_linear_8bit_act_{n}bit_weight.out: out[m, n] = activations[m, k]
 * (quantized per row to int8) times the packed n-bit weights (universal
 * layout). This file checks the arguments and the buffer; the arithmetic
 * (torchao's, docs/lowbit.md) and its split over the method's thread pool
 * are libpterun_compute's pterun_compute_lowbit_linear. */
#include <inttypes.h>

#include "kernels/lowbit/lb.h"

pterun_status lb_linear_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            int nbit) {
  pterun_tensor *act, *pw, *out;
  const uint8_t* packed;
  size_t size;
  int64_t gs, n, k, m;
  pterun_compute_lowbit_weights w;
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "activations", &act));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "packed_weights", &pw));
  PTERUN_TRY(pterun_arg_int(ctx, args, 2, "group_size", &gs));
  PTERUN_TRY(pterun_arg_int(ctx, args, 3, "n", &n));
  PTERUN_TRY(pterun_arg_int(ctx, args, 4, "k", &k));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 5, "out", &out));
  PTERUN_TRY(lb_packed_arg(ctx, pw, "packed_weights", &packed, &size));
  PTERUN_TRY(
      lb_linear_check(ctx, packed, size, nbit, gs, n, k, &w.has_zeros, &w.has_bias, &w.tile_bytes));
  if (act->rank != 2 || act->dtype != PTERUN_DTYPE_F32 || act->sizes[1] != k)
    return LB_FAIL(ctx, "arg 'activations': must be float32 [m, %" PRId64 "], got %s rank %d", k,
                   pterun_dtype_name(act->dtype), act->rank);
  if (!pterun_tensor_is_contiguous(act) || (act->numel > 0 && act->data == NULL))
    return LB_FAIL(ctx, "arg 'activations': must be contiguous with data");
  m = act->sizes[0];
  PTERUN_TRY(lb_out_2d(ctx, out, m, n));
  w.nbit = nbit;
  w.n = n;
  w.k = k;
  w.group_size = gs;
  w.tiles = packed + LB_HEADER_BYTES;
  return pterun_compute_lowbit_linear(ctx, &w, (const float*)act->data, m, (float*)out->data);
}
