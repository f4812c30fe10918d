/* int8 GEMM microkernel for AVX2: 6 x 8 tile. Exact without saturation: A
 * (uint8) is packed as int16, B stays int8 in memory (half the weight traffic)
 * and is sign-extended to int16 as it is loaded (vpmovsxbw), and vpmaddwd
 * multiplies int16 pairs into int32 sums (|a*b + a*b| <= 2 * 255 * 128; the
 * faster vpmaddubsw would saturate). Each B vector holds 4
 * columns x 4 K values, so a row's two accumulators hold two partial sums per
 * column, added pairwise at the end (hadd + a lane permute).
 *
 * The K loop is inline assembly: 12 accumulators, 2 B vectors, a broadcast
 * and a product take all 16 ymm registers, and GCC 12 hoists the six
 * broadcasts and spills eight accumulators to the stack in every iteration
 * (the intrinsics version ran at ~70 % of this one). The loop starts on a
 * 64-byte boundary: unaligned, the same loop measured ~15 % slower on Zen 3.
 * Built with -mavx2 by
 * src/compute/isa.cmake; selected at run time only when the CPU has AVX2. */
#include "src/compute/qgemm/requant.h"
#include "src/compute/qgemm/ukernel.h"

#if defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static inline void store_row(int32_t* c, __m256i lo, __m256i hi, int add) {
  /* hadd: [c0 c1 c4 c5 | c2 c3 c6 c7]; the permute puts columns in order. */
  __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
  if (add) s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i*)c));
  _mm256_storeu_si256((__m256i*)c, s);
}

/* Row i of the tile: broadcast its 4 int16 A values, two products with the
 * B vectors (ymm14, ymm15), each added to its accumulator. */
/* clang-format off */
#define PC_ROW(i, lo, hi)                                \
  "vpbroadcastq " #i "*8(%[a]), %%ymm13\n\t"             \
  "vpmaddwd %%ymm14, %%ymm13, %%ymm12\n\t"               \
  "vpaddd %%ymm12, %[" #lo "], %[" #lo "]\n\t"           \
  "vpmaddwd %%ymm15, %%ymm13, %%ymm13\n\t"               \
  "vpaddd %%ymm13, %[" #hi "], %[" #hi "]\n\t"

/* The K loop around the rows: aligned start, the two B vectors of a group of
 * 4 K values; A advances by one group of every row. */
#define PC_LOOP_HEAD                                     \
  ".p2align 6\n\t"                                       \
  "1:\n\t"                                               \
  "vpmovsxbw (%[b]), %%ymm14\n\t"                        \
  "vpmovsxbw 16(%[b]), %%ymm15\n\t"
#define PC_LOOP_TAIL(a_step)                             \
  "add $" #a_step ", %[a]\n\t"                           \
  "add $32, %[b]\n\t"                                    \
  "dec %[k]\n\t"                                         \
  "jnz 1b\n\t"
#define PC_LOOP_REGS                                     \
  "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc"

void pc_qs8_gemm_ukernel__avx2_6x8(size_t kq, const void* a, const void* b, int32_t* c, size_t ldc,
                                   int add) {
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  __m256i c6 = c0, c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0;
  const unsigned char* ap = (const unsigned char*)a;
  const unsigned char* bp = (const unsigned char*)b;
  if (kq != 0)
    __asm__(PC_LOOP_HEAD
            PC_ROW(0, c0, c1) PC_ROW(1, c2, c3) PC_ROW(2, c4, c5)
            PC_ROW(3, c6, c7) PC_ROW(4, c8, c9) PC_ROW(5, c10, c11)
            PC_LOOP_TAIL(48)
            : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4),
              [c5] "+x"(c5), [c6] "+x"(c6), [c7] "+x"(c7), [c8] "+x"(c8), [c9] "+x"(c9),
              [c10] "+x"(c10), [c11] "+x"(c11), [a] "+r"(ap), [b] "+r"(bp), [k] "+r"(kq)
            : : PC_LOOP_REGS);
  /* clang-format on */
  store_row(c, c0, c1, add);
  store_row(c + ldc, c2, c3, add);
  store_row(c + 2 * ldc, c4, c5, add);
  store_row(c + 3 * ldc, c6, c7, add);
  store_row(c + 4 * ldc, c8, c9, add);
  store_row(c + 5 * ldc, c10, c11, add);
}

/* 4 x 8: the same loop with 4 rows, for M = 4k where 6-row panels would
 * compute padding rows (a batch of 32 tokens: 36 rows for 32). Reads the
 * same packed B as 6 x 8. */
/* clang-format off */
void pc_qs8_gemm_ukernel__avx2_4x8(size_t kq, const void* a, const void* b, int32_t* c, size_t ldc,
                                   int add) {
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  __m256i c6 = c0, c7 = c0;
  const unsigned char* ap = (const unsigned char*)a;
  const unsigned char* bp = (const unsigned char*)b;
  if (kq != 0)
    __asm__(PC_LOOP_HEAD
            PC_ROW(0, c0, c1) PC_ROW(1, c2, c3) PC_ROW(2, c4, c5) PC_ROW(3, c6, c7)
            PC_LOOP_TAIL(32)
            : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4),
              [c5] "+x"(c5), [c6] "+x"(c6), [c7] "+x"(c7), [a] "+r"(ap), [b] "+r"(bp), [k] "+r"(kq)
            : : PC_LOOP_REGS);
  /* clang-format on */
  store_row(c, c0, c1, add);
  store_row(c + ldc, c2, c3, add);
  store_row(c + 2 * ldc, c4, c5, add);
  store_row(c + 3 * ldc, c6, c7, add);
}
#undef PC_ROW
#undef PC_LOOP_HEAD
#undef PC_LOOP_TAIL
#undef PC_LOOP_REGS

/* Rows of the epilogue's int32 path (qgemm.c, the same operations in the
 * same order as its SSE2 and scalar loops), 8 columns at a time, into rows
 * dst_rs bytes apart; returns the columns done in every row (a multiple of
 * 8). */
int64_t pc_qs8_epilogue_rows_avx2(const int32_t* acc, int64_t acc_rs, int64_t rows,
                                  const pc_qs8_epi_row* e, int64_t cols, void* dst,
                                  int64_t dst_rs) {
  /* Locals, not e->: the stores through dst may alias anything. */
  const int32_t* zsum = e->zsum;
  const float *sc = e->sc, *bi = e->bi;
  const int64_t done = cols / 8 * 8;
  int64_t r, j;
  if (e->f32) {
    const __m256 fmin = _mm256_set1_ps(e->f_min), fmax = _mm256_set1_ps(e->f_max);
    for (r = 0; r < rows; ++r) {
      const int32_t* ar = acc + r * acc_rs;
      float* out = (float*)(void*)((uint8_t*)dst + r * dst_rs);
      for (j = 0; j < done; j += 8) {
        const __m256i v =
            _mm256_sub_epi32(_mm256_loadu_si256((const __m256i*)(const void*)(ar + j)),
                             _mm256_loadu_si256((const __m256i*)(const void*)(zsum + j)));
        const __m256 y = _mm256_add_ps(
            _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(sc + j)), _mm256_loadu_ps(bi + j));
        _mm256_storeu_ps(out + j, _mm256_min_ps(fmax, _mm256_max_ps(fmin, y)));
      }
    }
    return done;
  }
  const __m256 vinv = _mm256_set1_ps(e->inv), vzp = _mm256_set1_ps(e->zpo);
  const __m256 vlo = _mm256_set1_ps(e->qlo), vhi = _mm256_set1_ps(e->qhi);
  const int u8 = e->u8;
  for (r = 0; r < rows; ++r) {
    const int32_t* ar = acc + r * acc_rs;
    uint8_t* out = (uint8_t*)dst + r * dst_rs;
    for (j = 0; j < done; j += 8) {
      const __m256i v =
          _mm256_sub_epi32(_mm256_loadu_si256((const __m256i*)(const void*)(ar + j)),
                           _mm256_loadu_si256((const __m256i*)(const void*)(zsum + j)));
      const __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(sc + j)),
                                     _mm256_loadu_ps(bi + j));
      /* requant.h's rounding instruction: the SSE2 and scalar paths' codes */
      __m256 t = _mm256_add_ps(vzp, _mm256_round_ps(_mm256_mul_ps(y, vinv), PC_QS8_RNE_ROUND));
      t = _mm256_min_ps(_mm256_max_ps(t, vlo), vhi);
      const __m256i q = _mm256_cvttps_epi32(t);
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      _mm_storel_epi64((__m128i*)(void*)(out + j),
                       u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
    }
  }
  return done;
}

#else
typedef int pc_qs8_avx2_unavailable; /* not an empty translation unit */
#endif
