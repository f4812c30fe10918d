/* Dispatch of the f32 range scan (pterun_compute_f32_minmax): the widest
 * variant the CPU has; PTERUN_ISA_MASK narrows it and 0 forces the portable
 * one. Every variant gives the portable variant's bits (minmax_tmpl.h). */
#include "src/compute/minmax/minmax.h"

#include "pterun/cpu.h"
#include "src/compute/used.h"

typedef struct pc_minmax_variant {
  uint64_t isa;
  const char* name;
  pc_minmax_fn fn;
} pc_minmax_variant;

static const pc_minmax_variant g_variants[] = {
    {0, "portable", pc_f32_minmax__portable},
#if defined(PTERUN_GEMM_AVX2)
    {PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2, "avx2", pc_f32_minmax__avx2},
#endif
#if defined(PTERUN_GEMM_AVX512)
    {PTERUN_CPU_X86_AVX512F, "avx512f", pc_f32_minmax__avx512f},
#endif
};
#define PC_MINMAX_COUNT (sizeof g_variants / sizeof g_variants[0])
static atomic_uchar g_ran[PC_MINMAX_COUNT];
PC_USED_FAMILY(pc_used_minmax, "minmax", g_variants, g_ran);

const char* pterun_compute_f32_minmax_variant(size_t variant) {
  if (variant >= PC_MINMAX_COUNT) return NULL;
  uint64_t isa = g_variants[variant].isa;
  return (isa & pterun_cpu_features()) == isa ? g_variants[variant].name : NULL;
}

int pterun_compute_f32_minmax_with(size_t variant, const float* x, size_t n, float* min,
                                   float* max) {
  if (pterun_compute_f32_minmax_variant(variant) == NULL) return -1;
  g_variants[variant].fn(x, n, min, max);
  return 0;
}

void pterun_compute_f32_minmax(const float* x, size_t n, float* min, float* max) {
  const uint64_t features = pterun_cpu_features();
  size_t v = PC_MINMAX_COUNT;
  while (v-- > 1)
    if ((g_variants[v].isa & features) == g_variants[v].isa) break;
  pc_used_mark(g_ran, v);
  g_variants[v].fn(x, n, min, max);
}
