/* f32 depthwise convolution, 4-lane generic vectors: the baseline every CPU
 * runs and the reference the wider variants must match bit for bit. */
#include "src/compute/dwconv/dwconv.h"

#define DW_LANES 4
#define DW_FN pc_f32_dwconv__v4
#define DW_TAPS pc_dw_taps__v4
#include "src/compute/dwconv/dwconv_tmpl.h"
#define DWN_FN pc_f32_dwconv_nchw__v4
#include "src/compute/dwconv/dwconv_nchw_tmpl.h"
