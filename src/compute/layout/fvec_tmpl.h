/* The GNU C generic float vector of one width that the convolution templates
 * (src/compute/dwconv, src/compute/conv, layout/split2_tmpl.h) compute with:
 * fv_v (FV_LANES floats), fv_m (its lane mask) and unaligned loads and
 * stores. Included with FV_LANES defined (4, 8 or 16), which it undefines;
 * one width per translation unit (each ISA's file has one). */
#ifndef PTERUN_SRC_COMPUTE_LAYOUT_FVEC_TMPL_H_
#define PTERUN_SRC_COMPUTE_LAYOUT_FVEC_TMPL_H_
#include <string.h>

typedef float fv_v __attribute__((vector_size(FV_LANES * 4)));
typedef int fv_m __attribute__((vector_size(FV_LANES * 4)));

static inline fv_v fv_ld(const float* p) {
  fv_v v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void fv_st(float* p, fv_v v) {
  memcpy(p, &v, sizeof v);
}
#endif
_Static_assert(sizeof(fv_v) == FV_LANES * 4, "one vector width per translation unit");
#undef FV_LANES
