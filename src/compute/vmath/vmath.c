/* Dispatch of the f32 vector math (pterun_compute_f32_unary, the row
 * primitives pterun_compute_f32_rowops): the widest
 * variant the CPU has (PTERUN_ISA_MASK narrows it; 0 forces the 4-lane
 * baseline), long arrays split over the pool in chunks whose results do not
 * depend on the split. */
#include "src/compute/vmath/vmath.h"

#include "pterun/cpu.h"
#include "src/compute/parallel.h"
#include "src/compute/used.h"

typedef struct pc_vm_variant {
  uint64_t isa;
  const char* name;
  pc_vm_fn fn[PTERUN_COMPUTE_UNARY_COUNT]; /* in pterun_compute_unary order */
  pterun_compute_f32_rowops rows;
} pc_vm_variant;

#define PC_VM_ROW(isa, suffix)                                                                     \
  {                                                                                                \
    (isa), #suffix, {pc_f32_exp__##suffix,      pc_f32_sigmoid__##suffix, pc_f32_silu__##suffix,   \
                     pc_f32_tanh__##suffix,     pc_f32_erf__##suffix,     pc_f32_gelu__##suffix,   \
                     pc_f32_gelu_tanh__##suffix},                                                  \
    {                                                                                              \
      pc_f32_dot__##suffix, pc_f32_axpby__##suffix, pc_f32_scale__##suffix,                        \
          pc_f32_exp_sum__##suffix, #suffix, pc_f32_sum__##suffix, pc_f32_dev_sq_sum__##suffix,    \
          pc_f32_max__##suffix                                                                     \
    }                                                                                              \
  }

static const pc_vm_variant g_variants[] = {
    PC_VM_ROW(0, v4),
#if defined(PTERUN_GEMM_AVX2)
    PC_VM_ROW(PTERUN_CPU_X86_AVX | PTERUN_CPU_X86_AVX2, avx2),
#endif
#if defined(PTERUN_GEMM_AVX512)
    PC_VM_ROW(PTERUN_CPU_X86_AVX512F, avx512f),
#endif
};
#define PC_VM_COUNT (sizeof g_variants / sizeof g_variants[0])
static atomic_uchar g_ran[PC_VM_COUNT];
PC_USED_FAMILY(pc_used_vmath, "vmath", g_variants, g_ran);

const char* pterun_compute_f32_unary_variant(size_t variant) {
  if (variant >= PC_VM_COUNT) return NULL;
  uint64_t isa = g_variants[variant].isa;
  return (isa & pterun_cpu_features()) == isa ? g_variants[variant].name : NULL;
}

/* The widest variant pterun_cpu_features() allows. */
static const pc_vm_variant* pc_vm_best(void) {
  uint64_t features = pterun_cpu_features();
  size_t v = PC_VM_COUNT;
  while (v-- > 1)
    if ((g_variants[v].isa & features) == g_variants[v].isa) break;
  pc_used_mark(g_ran, v);
  return &g_variants[v];
}

const pterun_compute_f32_rowops* pterun_compute_f32_rowops_select(void) {
  return &pc_vm_best()->rows;
}

const pterun_compute_f32_rowops* pterun_compute_f32_rowops_variant(size_t variant) {
  return pterun_compute_f32_unary_variant(variant) ? &g_variants[variant].rows : NULL;
}

int pterun_compute_f32_unary_with(size_t variant, int op, const float* x, float* y, size_t n) {
  if (op < 0 || op >= PTERUN_COMPUTE_UNARY_COUNT ||
      pterun_compute_f32_unary_variant(variant) == NULL)
    return -1;
  g_variants[variant].fn[op](x, y, n);
  return 0;
}

typedef struct pc_vm_job {
  pc_vm_fn fn;
  const float* x;
  float* y;
  size_t n;
} pc_vm_job;

#define PC_VM_CHUNK ((size_t)16384) /* floats per task: a multiple of every width */

static void pc_vm_task(void* ctx, size_t start, size_t count) {
  const pc_vm_job* j = ctx;
  size_t lo = start * PC_VM_CHUNK, hi = (start + count) * PC_VM_CHUNK;
  if (hi > j->n) hi = j->n;
  j->fn(j->x + lo, j->y + lo, hi - lo);
}

int pterun_compute_f32_unary(pterun_threadpool* pool, size_t max_threads, int op, const float* x,
                             float* y, size_t n) {
  if (op < 0 || op >= PTERUN_COMPUTE_UNARY_COUNT) return -1;
  pc_vm_job j = {pc_vm_best()->fn[op], x, y, n};
  size_t chunks = (n + PC_VM_CHUNK - 1) / PC_VM_CHUNK;
  if (chunks < 2) pool = NULL;
  pterun_parallelize_1d_tile(pool, pc_vm_task, &j, chunks, 1,
                             pc_parallel_flags(max_threads, (double)n, PC_PS_F32_VMATH_ELEM));
  return 0;
}
