/* pterun_compute_qs8_conv2d_nhwc: an int8 convolution as an indirect GEMM.
 *
 * The im2col row of output pixel (y, x) is, in K order, the channels of each
 * kernel tap of its window. In a padded channels-last image those are runs
 * of bytes at fixed offsets from the window's corner (the same offsets for
 * every pixel), so the driver (qgemm.c) hands each microkernel's indirect
 * entry one corner pointer per tile row and this call's run table, and the
 * im2col copy and the packed A panel (a third of an int8 VGG's time) are
 * never made. A run must be whole groups of 4 bytes (the packed weight's
 * K groups); with one group and unit column dilation a kernel row's taps are
 * one run. An int8 image is shifted to uint8 as the microkernel broadcasts
 * it. A weight packed with each tap's channels padded to a multiple of
 * 4 (zero weights) is read a tap at a time including the bytes after its
 * channels: whatever they hold, they add 0. The sums are the GEMM's, exact in
 * int32: same bits. */
#include <stddef.h>
#include <stdint.h>

#include "src/compute/qgemm/ukernel.h"

/* Runs of K a call may have (the table lives on this frame). */
#define PC_QS8_IG_SEG_MAX 256

static int positive(int64_t v) {
  return v >= 1 && v <= INT32_MAX;
}

int pterun_compute_qs8_conv2d_nhwc(pterun_threadpool* pool, size_t max_threads,
                                   const pterun_compute_qs8_conv2d_nhwc_args* g,
                                   const pterun_compute_qs8_packed* w,
                                   const pterun_compute_qs8_epilogue* ep,
                                   const pterun_compute_matrix* c) {
  pterun_compute_qs8_seg seg[PC_QS8_IG_SEG_MAX];
  size_t nseg = 0;
  if (g == NULL || g->image == NULL || w == NULL || ep == NULL || c == NULL) return -1;
  /* Every size within int32 keeps each product below far inside int64. */
  if (!positive(g->h) || !positive(g->w) || !positive(g->c) || !positive(g->group_c) || g->c0 < 0 ||
      g->c0 > g->c - g->group_c || !positive(g->kernel_h) || !positive(g->kernel_w) ||
      !positive(g->stride_h) || !positive(g->stride_w) || !positive(g->dilation_h) ||
      !positive(g->dilation_w) || !positive(g->out_h) || !positive(g->out_w))
    return -1;
  if ((g->out_h - 1) * g->stride_h + (g->kernel_h - 1) * g->dilation_h >= g->h ||
      (g->out_w - 1) * g->stride_w + (g->kernel_w - 1) * g->dilation_w >= g->w)
    return -1;
  if ((double)g->h * (double)g->w * (double)g->c > (double)(PTRDIFF_MAX / 2)) return -1;
  /* The runs: one per kernel row where its taps are adjacent bytes, else one
   * per tap; with channels padded to whole groups (a 3-channel stem), one per
   * tap, reading the bytes past its channels (zero weights). */
  const int64_t taps = g->kernel_h * g->kernel_w, c_pad = (g->group_c + 3) / 4 * 4;
  const int padded = c_pad != g->group_c && w->k == taps * c_pad;
  if (w->k != taps * g->group_c && !padded) return -1;
  const int rows_whole = !padded && g->dilation_w == 1 && g->group_c == g->c;
  const int64_t run = padded ? c_pad : rows_whole ? g->kernel_w * g->group_c : g->group_c;
  if (run % 4 != 0) return -1;
  for (int64_t ky = 0; ky < g->kernel_h; ++ky)
    for (int64_t kx = 0; kx < (rows_whole ? 1 : g->kernel_w); ++kx) {
      if (nseg == PC_QS8_IG_SEG_MAX) return -1;
      seg[nseg].off =
          (ptrdiff_t)(((ky * g->dilation_h) * g->w + kx * g->dilation_w) * g->c + g->c0);
      seg[nseg].kq = (size_t)(run / 4);
      ++nseg;
    }
  const pc_qs8_ig ig = {g->image, g->out_w, g->stride_h * g->w * g->c, g->stride_w * g->c, nseg,
                        seg,      g->dtype};
  return pc_qs8_gemm_ig(pool, max_threads, g->out_h * g->out_w, &ig, w, ep, c);
}
