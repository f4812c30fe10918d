/* f32 direct convolution, 4-lane generic vectors and separate multiply and
 * add (-ffp-contract=off: no contraction): the baseline every CPU runs. */
#define CV_LANES 4
#define CV_OCB 4
#define CV_VMAX 2
#define CV_FMA(x, w, acc) ((acc) + (x) * (w))
#define CV_FN pc_f32_conv2d__v4
#include "src/compute/conv/conv_tmpl.h"
