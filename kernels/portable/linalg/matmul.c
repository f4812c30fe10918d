/* Matrix products: mm, bmm, addmm, and addmm with a fused activation
 * (pterun::addmm_relu / addmm_hardtanh, made by the load-time fusion pass).
 * mm and addmm pack a constant mat2 (a Linear weight) once at method load
 * (prepare, prepack.h). */
#include <inttypes.h>

#include "kernels/portable/prepack.h"
#include "kernels/portable/producers.h"
#include "kernels/portable/util.h"

/* Dtypes the matmul kernels accept (real, not bool). */
static pterun_status check_mm_dtypes(pterun_kernel_context* ctx, const pterun_tensor* a,
                                     const pterun_tensor* b, const pterun_tensor* out) {
  PTERUN_TRY(pk_check_real(ctx, a, "self"));
  if (a->dtype == PTERUN_DTYPE_BOOL)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED, "arg 'self': bool not supported");
  PTERUN_TRY(pk_check_same_dtype(ctx, a, "self", b, "mat2"));
  PTERUN_TRY(pk_check_same_dtype(ctx, a, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, a, "self"));
  PTERUN_TRY(pterun_check_data(ctx, b, "mat2"));
  return PTERUN_STATUS_OK;
}

static pterun_compute_matrix mat_of(const pterun_tensor* t, int rdim, int cdim, int64_t base) {
  pterun_compute_matrix m;
  /* No memory (an empty tensor): keep NULL rather than offsetting it. */
  m.data = t->data != NULL ? (char*)t->data + (size_t)base * pterun_dtype_size(t->dtype) : NULL;
  m.dtype = t->dtype;
  m.rs = t->strides[rdim];
  m.cs = t->strides[cdim];
  return m;
}

/* aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) */
PTERUN_KERNEL(pk_mm_out) {
  pterun_tensor *a, *b, *out;
  int64_t sizes[2];
  pterun_compute_matrix ma, mb, mc;
  pterun_compute_gemm_ws ws;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "mat2", &b));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pterun_check_rank(ctx, a, "self", 2));
  PTERUN_TRY(pterun_check_rank(ctx, b, "mat2", 2));
  PTERUN_TRY(check_mm_dtypes(ctx, a, b, out));
  if (a->sizes[1] != b->sizes[0])
    return PTERUN_FAIL_ARG(ctx,
                           "shapes [%" PRId64 ", %" PRId64 "] and [%" PRId64 ", %" PRId64
                           "] cannot be multiplied",
                           a->sizes[0], a->sizes[1], b->sizes[0], b->sizes[1]);
  sizes[0] = a->sizes[0];
  sizes[1] = b->sizes[1];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
  ma = mat_of(a, 0, 1, 0);
  mb = mat_of(b, 0, 1, 0);
  mc = mat_of(out, 0, 1, 0);
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  o.packed_b = pk_prepacked_for(ctx, b, b->sizes[0], b->sizes[1]);
  pterun_compute_gemm_init(ctx, &ws, out->dtype);
  pterun_compute_gemm_ex(&ws, sizes[0], sizes[1], a->sizes[1], &ma, &mb, &mc, 1.0, 0, &o);
  return PTERUN_STATUS_OK;
}

/* Load time: packs a constant float32 mat2 [K, N] for products a @ mat2 (a
 * product with one row streams the packed strips too: an RNN step reads its
 * weight sequentially instead of 128 bytes per 4 KiB row). Anything
 * unexpected is left for execute to report. */
static pterun_status prepare_mat2(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                  size_t want, size_t ia, size_t ib, size_t iout,
                                  pk_prepacked* into) {
  if (nargs != want || args[ia]->tag != PTERUN_VALUE_TENSOR ||
      args[ib]->tag != PTERUN_VALUE_TENSOR || args[iout]->tag != PTERUN_VALUE_TENSOR)
    return PTERUN_STATUS_OK;
  const pterun_tensor *a = args[ia]->u.tensor, *b = args[ib]->u.tensor, *out = args[iout]->u.tensor;
  if (a->dtype != PTERUN_DTYPE_F32 || out->dtype != PTERUN_DTYPE_F32 || a->rank != 2 ||
      b->rank != 2 || a->sizes[1] != b->sizes[0] || !pk_prepack_constant_f32(b))
    return PTERUN_STATUS_OK;
  pterun_compute_matrix mb = mat_of(b, 0, 1, 0);
  PTERUN_TRY(pk_prepack_to(ctx, into, b, PTERUN_COMPUTE_OPERAND_B, b->sizes[0], b->sizes[1], &mb));
  /* Execute reads mat2 packed, or else through its strides (mat_of): a
   * transposed weight may stay a view of the file (no dense copy). */
  /* With a fixed row count above 1 every product takes the engine's GEMM
   * microkernel, the one the weight was packed for: mat2 itself is never
   * read again (M = 1 may take the row-vector kernel and read it). */
  if (pterun_compute_gemm_pack_size(PTERUN_COMPUTE_OPERAND_B, b->sizes[0], b->sizes[1]) != 0)
    pterun_kernel_packed_constant(
        ctx, b,
        a->dynamism == PTERUN_SHAPE_STATIC && a->sizes[0] > 1 ? PTERUN_KERNEL_PACKED_ONLY : 0);
  return PTERUN_STATUS_OK;
}

/* Load time: the GEMM blocks of a @ mat2 (packed or not). */
static void reserve_mat2(pterun_kernel_context* ctx, pterun_value** args, size_t nargs, size_t want,
                         size_t ia, size_t ib, size_t iout) {
  if (nargs != want || args[ia]->tag != PTERUN_VALUE_TENSOR ||
      args[ib]->tag != PTERUN_VALUE_TENSOR || args[iout]->tag != PTERUN_VALUE_TENSOR)
    return;
  const pterun_tensor *a = args[ia]->u.tensor, *b = args[ib]->u.tensor;
  if (a->rank == 2 && b->rank == 2)
    pterun_compute_gemm_reserve(ctx, args[iout]->u.tensor->dtype, a->sizes[0], b->sizes[1],
                                a->sizes[1]);
}

PTERUN_KERNEL(pk_mm_prepare) {
  reserve_mat2(ctx, args, nargs, 4, 0, 1, 2);
  return prepare_mat2(ctx, args, nargs, 4, 0, 1, 2, NULL);
}

/* Load time: bmm's GEMM blocks (one workspace for every batch). */
PTERUN_KERNEL(pk_bmm_prepare) {
  if (nargs == 4 && args[0]->tag == PTERUN_VALUE_TENSOR && args[1]->tag == PTERUN_VALUE_TENSOR &&
      args[2]->tag == PTERUN_VALUE_TENSOR && args[0]->u.tensor->rank == 3 &&
      args[1]->u.tensor->rank == 3)
    pterun_compute_gemm_reserve(ctx, args[2]->u.tensor->dtype, args[0]->u.tensor->sizes[1],
                                args[1]->u.tensor->sizes[2], args[0]->u.tensor->sizes[2]);
  return PTERUN_STATUS_OK;
}

/* aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) */
PTERUN_KERNEL(pk_bmm_out) {
  pterun_tensor *a, *b, *out;
  int64_t sizes[3], bi;
  pterun_compute_gemm_ws ws;
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "mat2", &b));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  PTERUN_TRY(pterun_check_rank(ctx, a, "self", 3));
  PTERUN_TRY(pterun_check_rank(ctx, b, "mat2", 3));
  PTERUN_TRY(check_mm_dtypes(ctx, a, b, out));
  if (a->sizes[0] != b->sizes[0] || a->sizes[2] != b->sizes[1])
    return PTERUN_FAIL_ARG(ctx,
                           "shapes [%" PRId64 ", %" PRId64 ", %" PRId64 "] and [%" PRId64
                           ", %" PRId64 ", %" PRId64 "] cannot be batch-multiplied",
                           a->sizes[0], a->sizes[1], a->sizes[2], b->sizes[0], b->sizes[1],
                           b->sizes[2]);
  sizes[0] = a->sizes[0];
  sizes[1] = a->sizes[1];
  sizes[2] = b->sizes[2];
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", 3, sizes));
  pterun_compute_gemm_init(ctx, &ws, out->dtype);
  for (bi = 0; bi < sizes[0]; ++bi) {
    pterun_compute_matrix ma = mat_of(a, 1, 2, bi * a->strides[0]);
    pterun_compute_matrix mb = mat_of(b, 1, 2, bi * b->strides[0]);
    pterun_compute_matrix mc = mat_of(out, 1, 2, bi * out->strides[0]);
    pterun_compute_gemm(&ws, sizes[1], sizes[2], a->sizes[2], &ma, &mb, &mc, 1.0, 0);
  }
  return PTERUN_STATUS_OK;
}

/* aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
 *                 Scalar alpha=1, Tensor(a!) out), out at args[iout]; `act`
 * is the fused activation (NULL: none). */
static pterun_status addmm(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                           const pterun_compute_gemm_opts* act) {
  pterun_tensor *self, *a, *b, *out;
  pterun_scalar beta, alpha;
  int64_t sizes[2], k;
  pterun_compute_matrix ma, mb, mc;
  int accumulate = 0;
  pterun_compute_gemm_ws ws;
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 1, "mat1", &a));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "mat2", &b));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 3, "beta", &beta));
  PTERUN_TRY(pterun_arg_scalar(ctx, args, 4, "alpha", &alpha));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, iout, "out", &out));
  PTERUN_TRY(pterun_check_rank(ctx, a, "mat1", 2));
  PTERUN_TRY(pterun_check_rank(ctx, b, "mat2", 2));
  PTERUN_TRY(check_mm_dtypes(ctx, a, b, out));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  if (!pterun_dtype_is_float(out->dtype) && (beta.is_float || alpha.is_float))
    return PTERUN_FAIL_ARG(ctx, "arg 'alpha'/'beta': floating scalars need a floating dtype");
  if (act != NULL && out->dtype != PTERUN_DTYPE_F32)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                              "the fused activation needs float32, got %s",
                              pterun_dtype_name(out->dtype));
  if (a->sizes[1] != b->sizes[0])
    return PTERUN_FAIL_ARG(ctx,
                           "mat1 [%" PRId64 ", %" PRId64 "] and mat2 [%" PRId64 ", %" PRId64
                           "] cannot be multiplied",
                           a->sizes[0], a->sizes[1], b->sizes[0], b->sizes[1]);
  sizes[0] = a->sizes[0];
  sizes[1] = b->sizes[1];
  k = a->sizes[1];
  {
    pk_view sv, dv;
    PTERUN_TRY(pk_bcast_view(ctx, self, "self", 2, sizes, &sv));
    PTERUN_TRY(pterun_out_resize(ctx, out, "out", 2, sizes));
    /* beta == 0 ignores self entirely (NaN/inf in self do not propagate). */
    if (beta.d != 0.0 && out->numel > 0) {
      int64_t i;
      pk_view_of(out, &dv);
      pk_copy_view(out->data, out->dtype, &dv, 0, self->data, self->dtype, &sv, 0);
      /* out is dense, so its elements are exactly [0, numel). */
      if (beta.d != 1.0) {
        if (pterun_dtype_is_float(out->dtype)) {
          for (i = 0; i < out->numel; ++i)
            pterun_store_f64(out->data, out->dtype, i,
                             beta.d * pterun_load_f64(out->data, out->dtype, i));
        } else {
          for (i = 0; i < out->numel; ++i)
            pterun_store_i64(
                out->data, out->dtype, i,
                (int64_t)((uint64_t)beta.i * (uint64_t)pterun_load_i64(out->data, out->dtype, i)));
        }
      }
      accumulate = 1;
    }
  }
  ma = mat_of(a, 0, 1, 0);
  mb = mat_of(b, 0, 1, 0);
  mc = mat_of(out, 0, 1, 0);
  pterun_compute_gemm_opts o = PTERUN_COMPUTE_GEMM_OPTS_INIT;
  if (act != NULL) o = *act;
  o.packed_b = pk_prepacked_for(ctx, b, b->sizes[0], b->sizes[1]);
  pterun_compute_gemm_init(ctx, &ws, out->dtype);
  pterun_compute_gemm_ex(&ws, sizes[0], sizes[1], k, &ma, &mb, &mc,
                         pterun_dtype_is_float(out->dtype) ? alpha.d : (double)alpha.i, accumulate,
                         &o);
  return PTERUN_STATUS_OK;
}

PTERUN_KERNEL(pk_addmm_out) {
  PTERUN_CHECK_NARGS(ctx, nargs, 7);
  return addmm(ctx, args, 5, NULL);
}

pterun_status pk_addmm_run(pterun_kernel_context* ctx, pterun_value** args, size_t iout,
                           const pterun_compute_gemm_opts* act) {
  return addmm(ctx, args, iout, act);
}

pterun_status pk_addmm_pack(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                            size_t want, size_t iout, pk_prepacked* into) {
  return prepare_mat2(ctx, args, nargs, want, 1, 2, iout, into);
}

static pterun_status addmm_prepare(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                   size_t want, size_t iout);

PTERUN_KERNEL(pk_addmm_prepare) {
  return addmm_prepare(ctx, args, nargs, 7, 5);
}

static pterun_status addmm_prepare(pterun_kernel_context* ctx, pterun_value** args, size_t nargs,
                                   size_t want, size_t iout) {
  reserve_mat2(ctx, args, nargs, want, 1, 2, iout);
  return prepare_mat2(ctx, args, nargs, want, 1, 2, iout, NULL);
}

void pk_addmm_reserve(pterun_kernel_context* ctx, pterun_value** args, size_t nargs, size_t want,
                      size_t iout) {
  reserve_mat2(ctx, args, nargs, want, 1, 2, iout);
}

/* pterun::addmm_relu.out(self, mat1, mat2, beta, alpha, *, out) and
 * pterun::addmm_hardtanh.out(self, mat1, mat2, beta, alpha, min_val, max_val,
 * *, out): addmm then the activation, as one call (the fusion pass's
 * rewrite of addmm -> relu / hardtanh; ReLU6 is hardtanh(0, 6)). */
PK_DEFINE_FUSED_ACTIVATIONS(pk_addmm, addmm, addmm_prepare, 7)
