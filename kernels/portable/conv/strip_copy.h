/* Internal to the convolution family of libpterun_kernels_portable: the
 * float copies both B-strip packers (im2col.c's col_pack_b, flat_grid.c's
 * flat_pack_b) make per reduction row. */
#ifndef PTERUN_KERNELS_PORTABLE_CONV_STRIP_COPY_H_
#define PTERUN_KERNELS_PORTABLE_CONV_STRIP_COPY_H_

#include <stdint.h>
#include <string.h>

/* dst[0, n) = src[0, n) without a library call: runs are at most a strip
 * wide, and the memcpy a plain loop turned into cost a tenth of a CIFAR
 * ResNet's time in calls. 4-float moves, the last one overlapping the one
 * before instead of a scalar tail. */
static inline void copy_f32(float* restrict dst, const float* restrict src, int64_t n) {
  if (n >= 4) {
    for (int64_t i = 0; i + 4 < n; i += 4) {
      memcpy(dst + i, src + i, 4 * sizeof(float));
#if defined(__GNUC__)
      __asm__("" ::: "memory"); /* keeps GCC and Clang from making it a memcpy call again */
#endif
    }
    memcpy(dst + n - 4, src + n - 4, 4 * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}
/* dst[0, nr) = src[0, nr), fixed sizes for the microkernels' widths (the
 * compiler turns each into a few vector moves). */
static inline void copy_strip(float* dst, const float* src, int64_t nr) {
  switch (nr) {
    case 8: memcpy(dst, src, 8 * sizeof(float)); break;
    case 16: memcpy(dst, src, 16 * sizeof(float)); break;
    case 32: memcpy(dst, src, 32 * sizeof(float)); break;
    case 64: memcpy(dst, src, 64 * sizeof(float)); break;
    default: copy_f32(dst, src, nr);
  }
}

#endif /* PTERUN_KERNELS_PORTABLE_CONV_STRIP_COPY_H_ */
