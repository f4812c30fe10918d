/* Splitting a float row into its even and odd columns (the copy a stride-2
 * convolution reads as plain vectors), for one vector width: used by the
 * depthwise (src/compute/dwconv) and the direct (src/compute/conv) NCHW
 * convolutions. Included by their templates after defining SPLIT2_LANES
 * (floats per vector: 4, 8 or 16) and SPLIT2_FN (the static function's
 * name); GNU C generic vectors (layout/fvec_tmpl.h). */
#define FV_LANES SPLIT2_LANES
#include "src/compute/layout/fvec_tmpl.h"

#if SPLIT2_LANES == 4
#define SP2_EVEN 0, 2, 4, 6
#define SP2_ODD 1, 3, 5, 7
#elif SPLIT2_LANES == 8
#define SP2_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define SP2_ODD 1, 3, 5, 7, 9, 11, 13, 15
#else
#define SP2_EVEN 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define SP2_ODD 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#endif
#if defined(__clang__)
#define SP2_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SP2_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, (fv_m){__VA_ARGS__})
#endif

/* Input row xs (n floats) into a stride-2 row of the copy: padded column
 * pl + i goes to the even half (row[0..]) or the odd half (row[bw / 2..]).
 * One pass: the even and the odd elements of each pair of vectors. */
static void SPLIT2_FN(float* row, size_t bw, const float* xs, size_t n, size_t pl) {
  float* de = row + (pl & 1 ? bw / 2 : 0) + pl / 2;       /* x[0], x[2], .. */
  float* dd = row + (pl & 1 ? 0 : bw / 2) + (pl + 1) / 2; /* x[1], x[3], .. */
  size_t j = 0;
  for (; j + 2 * SPLIT2_LANES <= n; j += 2 * SPLIT2_LANES, de += SPLIT2_LANES, dd += SPLIT2_LANES) {
    fv_v a = fv_ld(xs + j), b = fv_ld(xs + j + SPLIT2_LANES);
#if SPLIT2_LANES == 8
    /* In-lane picks, then one 64-bit lane swap each (vshufps + vpermpd):
     * half the lane-crossing shuffles of the direct permutes. */
    fv_v e = SP2_SHUFFLE(a, b, 0, 2, 8, 10, 4, 6, 12, 14);
    fv_v o = SP2_SHUFFLE(a, b, 1, 3, 9, 11, 5, 7, 13, 15);
    fv_st(de, SP2_SHUFFLE(e, e, 0, 1, 4, 5, 2, 3, 6, 7));
    fv_st(dd, SP2_SHUFFLE(o, o, 0, 1, 4, 5, 2, 3, 6, 7));
#else
    fv_st(de, SP2_SHUFFLE(a, b, SP2_EVEN));
    fv_st(dd, SP2_SHUFFLE(a, b, SP2_ODD));
#endif
  }
  for (; j < n; j += 2) {
    *de++ = xs[j];
    if (j + 1 < n) *dd++ = xs[j + 1];
  }
}

#undef SP2_SHUFFLE
#undef SP2_EVEN
#undef SP2_ODD
#undef SPLIT2_FN
#undef SPLIT2_LANES
