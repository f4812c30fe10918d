/* int8 GEMM microkernels: the interface shared by qgemm.c (packing, driver,
 * epilogue) and the per-ISA files qs8_<isa>.c. Internal to libpterun_compute.
 * The manifest qs8_ukernels.inc lists every variant; tests and benchmarks
 * reach them through pterun_compute_qs8_gemm_ukernels(). */
#ifndef PTERUN_SRC_COMPUTE_QGEMM_UKERNEL_H_
#define PTERUN_SRC_COMPUTE_QGEMM_UKERNEL_H_

/* C standard */
#include <stddef.h>
#include <stdint.h>

/* pterun public */
#include "pterun/cpu.h"
/* libpterun_compute internal */
#include "src/compute/internal.h"

typedef pterun_compute_qs8_gemm_ukernel pc_qs8_gemm_ukernel;

/* Prototypes from the manifest: each microkernel, its indirect entry
 * fn##_ig (pterun_compute_qs8_igemm_fn) and its requantising one fn##_igq
 * (pterun_compute_qs8_igemmq_fn), each defined where the row says so. */
#define PC_QS8_UKERNEL(isa, fn, mr, nr, a_bytes, b_bytes, ig, igq)                                 \
  void fn(size_t kq, const void* a, const void* b, int32_t* c, size_t ldc, int add);               \
  void fn##_ig(size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows,         \
               const void* b, int32_t* c, size_t ldc, int a_signed);                               \
  void fn##_igq(size_t nseg, const pterun_compute_qs8_seg* seg, const uint8_t* const* rows,        \
                const void* b, const pterun_compute_qs8_rq* rq, uint8_t* c, size_t ldc,            \
                size_t mrows, size_t ncols, int a_signed);
#include "src/compute/qgemm/qs8_ukernels.inc"
#undef PC_QS8_UKERNEL

/* The per-row constants of the epilogue's int32 path (qgemm.c) for the
 * ISA-specific row loops. */
typedef struct pc_qs8_epi_row {
  const int32_t* zsum; /* A's zero point x column sums */
  const float *sc, *bi;
  float inv, zpo, qlo, qhi, f_min, f_max;
  int f32, u8; /* output float32 / uint8 (else int8) */
} pc_qs8_epi_row;

#if defined(PTERUN_GEMM_AVX2) && defined(__x86_64__) && defined(__GNUC__)
#define PC_QS8_HAVE_EPI_AVX2 1
int64_t pc_qs8_epilogue_rows_avx2(const int32_t* acc, int64_t acc_rs, int64_t rows,
                                  const pc_qs8_epi_row* e, int64_t cols, void* dst, int64_t dst_rs);
#endif
#if defined(PC_QS8_HAVE_EPI_AVX2) && defined(PTERUN_GEMM_AVX512)
/* The same, 16 columns at a time (qs8_epi_avx512.c; needs AVX-512F). */
#define PC_QS8_HAVE_EPI_AVX512 1
int64_t pc_qs8_epilogue_rows_avx512(const int32_t* acc, int64_t acc_rs, int64_t rows,
                                    const pc_qs8_epi_row* e, int64_t cols, void* dst,
                                    int64_t dst_rs);
#endif

/* A read in place by the indirect entries (qgemm.c's driver, for
 * igemm_qs8.c): output pixel i's rows start at base + (i / ow) * row_step +
 * (i % ow) * col_step, and its K is the segments from there. */
typedef struct pc_qs8_ig {
  const uint8_t* base;
  int64_t ow, row_step, col_step;
  size_t nseg;
  const pterun_compute_qs8_seg* seg;
  int32_t a_dtype; /* PTERUN_DTYPE_U8 or I8 (the epilogue's a_zp in its range) */
} pc_qs8_ig;

/* pterun_compute_qs8_gemm's driver over A read in place (ep->w_zp NULL): -1
 * for arguments it refuses. */
int pc_qs8_gemm_ig(pterun_threadpool* pool, size_t max_threads, int64_t m, const pc_qs8_ig* ig,
                   const pterun_compute_qs8_packed* w, const pterun_compute_qs8_epilogue* ep,
                   const pterun_compute_matrix* c);

/* K elements per group: every layout packs K in groups of 4 (one VNNI dot). */
#define PC_QS8_KR 4

#if defined(__clang__)
#define PC_QS8_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define PC_QS8_UNROLL _Pragma("GCC unroll 32")
#else
#define PC_QS8_UNROLL
#endif

#endif /* PTERUN_SRC_COMPUTE_QGEMM_UKERNEL_H_ */
