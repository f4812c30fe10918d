/* Which microkernel variants ran in this process (internal to
 * libpterun_compute; reported by pterun_compute_variants_report()).
 *
 * Each dispatching family keeps one flag per variant of its table and
 * describes the table to used.c by stride (the tables differ in type but all
 * have an ISA mask and a name per row). Marking is a relaxed load and, the
 * first time only, a store: no lock, no allocation, nothing else on the
 * execute path. */
#ifndef PTERUN_SRC_COMPUTE_USED_H_
#define PTERUN_SRC_COMPUTE_USED_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pc_used_family {
  const char* family;
  size_t count;
  atomic_uchar* seen; /* count flags */
  const void* isa0;   /* &table[0].isa (uint64_t) */
  const void* name0;  /* &table[0].name (const char*) */
  size_t stride;      /* sizeof table[0] */
} pc_used_family;

static inline void pc_used_mark(atomic_uchar* seen, size_t i) {
  if (!atomic_load_explicit(&seen[i], memory_order_relaxed))
    atomic_store_explicit(&seen[i], 1, memory_order_relaxed);
}

#define PC_USED_FAMILY(var, fam, table, flags)                                                     \
  const pc_used_family var = {(fam),                                                               \
                              sizeof(table) / sizeof((table)[0]),                                  \
                              (flags),                                                             \
                              &(table)[0].isa,                                                     \
                              &(table)[0].name,                                                    \
                              sizeof((table)[0])}

extern const pc_used_family pc_used_f32_gemm, pc_used_qs8_gemm, pc_used_vmath, pc_used_conv2d,
    pc_used_dwconv2d, pc_used_lowbit, pc_used_qdwconv, pc_used_minmax, pc_used_f32_igemm,
    pc_used_qs8_igemm, pc_used_qb4w;

#endif /* PTERUN_SRC_COMPUTE_USED_H_ */
