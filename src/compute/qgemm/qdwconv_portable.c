/* int8 depthwise convolution, baseline x86-64 / any CPU: the variant every
 * machine runs and the one the wider ones must match bit for bit. */
#define QDW_FN pc_qs8_dwconv__base
#include "src/compute/qgemm/qdwconv_tmpl.h"
#define QDWN_FN pc_qs8_dwconv_nhwc__base
#include "src/compute/qgemm/qdwconv_nhwc_tmpl.h"
