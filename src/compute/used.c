/* pterun_compute_variants_report(): every microkernel variant of every
 * dispatching family, and whether it ran in this process (used.h). */
#include <stdio.h>
#include <string.h>

#include "pterun/cpu.h"
#include "src/compute/internal.h"
#include "src/compute/used.h"

static const pc_used_family* const kFamilies[] = {
    &pc_used_f32_gemm,  &pc_used_qs8_gemm,  &pc_used_vmath,   &pc_used_conv2d,
    &pc_used_dwconv2d,  &pc_used_lowbit,    &pc_used_qdwconv, &pc_used_minmax,
    &pc_used_f32_igemm, &pc_used_qs8_igemm, &pc_used_qb4w};

size_t pterun_compute_variants_report(char* buf, size_t size) {
  const uint64_t features = pterun_cpu_detected_features();
  size_t n = 0;
  if (buf != NULL && size > 0) buf[0] = '\0';
  for (size_t f = 0; f < sizeof kFamilies / sizeof kFamilies[0]; ++f) {
    const pc_used_family* fam = kFamilies[f];
    for (size_t i = 0; i < fam->count; ++i) {
      const char* row = (const char*)fam->name0 + i * fam->stride;
      const char* name = *(const char* const*)row;
      uint64_t isa;
      memcpy(&isa, (const char*)fam->isa0 + i * fam->stride, sizeof isa);
      const char* cut = strstr(name, "__"); /* pc_f32_gemm_ukernel__avx2_6x16 -> avx2_6x16 */
      if (cut != NULL) name = cut + 2;
      const char* state = atomic_load_explicit(&fam->seen[i], memory_order_relaxed) ? "ran"
                          : (isa & features) == isa                                 ? "idle"
                                                                                    : "unavailable";
      int w =
          snprintf(buf != NULL && n < size ? buf + n : NULL, buf != NULL && n < size ? size - n : 0,
                   "%s%s/%s:%s", n ? " " : "", fam->family, name, state);
      if (w > 0) n += (size_t)w;
    }
  }
  return n;
}
