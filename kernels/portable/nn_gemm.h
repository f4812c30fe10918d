/* Blocked matrix multiply shared by mm/bmm/addmm and convolution.
 * Internal to libpterun_kernels_portable. */
#ifndef PTERUN_KERNELS_PORTABLE_NN_GEMM_H_
#define PTERUN_KERNELS_PORTABLE_NN_GEMM_H_

#include "kernels/portable/nn_util.h"

/* A matrix inside a tensor buffer: element (r, c) is data[r*rs + c*cs]. */
typedef struct nn_mat {
  void* data;
  int dtype;
  int64_t rs, cs;
} nn_mat;

/*
 * C[M,N] = alpha * A[M,K] @ B[K,N]            (accumulate == 0)
 * C[M,N] += alpha * A[M,K] @ B[K,N]           (accumulate != 0)
 * A and B share a dtype; C may be any real dtype of the same family.
 * float32/float16/bfloat16 accumulate in float32, float64 in double, integer
 * dtypes in int64 (wrapping on store like ATen). Uses the kernel scratch
 * arena for packing when it can, a small stack buffer otherwise.
 */
void nn_gemm(pterun_kernel_context* ctx, int64_t m, int64_t n, int64_t k, const nn_mat* a,
             const nn_mat* b, const nn_mat* c, double alpha, int accumulate);

#endif /* PTERUN_KERNELS_PORTABLE_NN_GEMM_H_ */
