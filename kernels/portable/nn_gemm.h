/* Blocked matrix multiply shared by mm/bmm/addmm and convolution.
 * Internal to libpterun_kernels_portable. */
#ifndef PTERUN_KERNELS_PORTABLE_NN_GEMM_H_
#define PTERUN_KERNELS_PORTABLE_NN_GEMM_H_

#include "kernels/portable/gemm_ukernel.h"
#include "kernels/portable/util.h"

/* A matrix inside a tensor buffer: element (r, c) is data[r*rs + c*cs]. */
typedef struct nn_mat {
  void* data;
  int dtype;
  int64_t rs, cs;
} nn_mat;

/* Inline packing buffer used when the scratch arena has no room: enough for
 * a 128 x 128 f32 B block (see nn_gemm.c). Lives on the kernel's stack. */
#define NN_GEMM_LOCAL_BYTES (64 * 1024)

/* Packing buffers and the microkernel for one kernel call: buffers from the
 * scratch arena when it has room (bigger blocks), else the inline stack
 * buffer. Set up once per call because the arena only grows during a call. */
typedef struct nn_gemm_ws {
  void* buf;
  size_t cap;                       /* bytes at buf */
  int64_t kc, nc;                   /* f64 engine blocks */
  int dbl;                          /* accumulate in double (F64) */
  const pt_f32_gemm_ukernel* uk;    /* f32 microkernel */
  const pt_f32_gemm_ukernel* uk_m1; /* for M == 1; NULL: uk */
  _Alignas(64) unsigned char local[NN_GEMM_LOCAL_BYTES];
} nn_gemm_ws;

/* Prepares ws for products whose accumulator is double (F64) or float; the
 * f32 microkernel is chosen from pterun_cpu_features(). */
void nn_gemm_ws_init(pterun_kernel_context* ctx, nn_gemm_ws* ws, int dtype);

/* As nn_gemm_ws_init with an explicit f32 microkernel (tests, benchmarks). */
void nn_gemm_ws_init_ukernel(pterun_kernel_context* ctx, nn_gemm_ws* ws, int dtype,
                             const pt_f32_gemm_ukernel* uk);

/*
 * C[M,N] = alpha * A[M,K] @ B[K,N]            (accumulate == 0)
 * C[M,N] += alpha * A[M,K] @ B[K,N]           (accumulate != 0)
 * A and B share a dtype; C may be any real dtype of the same family.
 * float32/float16/bfloat16 accumulate in float32, float64 in double, integer
 * dtypes in int64 (wrapping on store like ATen).
 */
void nn_gemm(nn_gemm_ws* ws, int64_t m, int64_t n, int64_t k, const nn_mat* a, const nn_mat* b,
             const nn_mat* c, double alpha, int accumulate);

#endif /* PTERUN_KERNELS_PORTABLE_NN_GEMM_H_ */
