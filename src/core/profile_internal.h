/* The interpreter's side of the profiler (profile.c). */
#ifndef PTERUN_SRC_CORE_PROFILE_INTERNAL_H_
#define PTERUN_SRC_CORE_PROFILE_INTERNAL_H_

#include "pterun/profile.h"
#include "src/core/backend_internal.h"
#include "src/core/method_internal.h"

/* Monotonic clock in nanoseconds. */
uint64_t pt_clock_ns(void);

/* At method load: sizes and allocates every event slot for method `m`. */
pterun_status pt_profiler_attach(pterun_profiler* p, const pterun_method* m, const char* name);
/* 1 when the profiler keeps each kernel call's output (ETDump debug events). */
int pt_profiler_records_outputs(const pterun_profiler* p);
/* At method destroy: the results stay readable. */
void pt_profiler_detach(pterun_profiler* p);

void pt_profiler_run_begin(pterun_profiler* p);
void pt_profiler_run_end(pterun_profiler* p);
/* Runs one kernel call, timing it and recording it (the interpreter's hook). */
pterun_status pt_profiler_call(pterun_profiler* p, const pt_instr* in, pterun_kernel_context* ctx,
                               uint32_t chain, uint32_t pc);

/* The same for a delegate call (the backend's execute). */
pterun_status pt_profiler_delegate(pterun_profiler* p, const pt_delegate* d, const pt_instr* in,
                                   pterun_kernel_context* ctx, uint32_t chain, uint32_t pc);

#endif /* PTERUN_SRC_CORE_PROFILE_INTERNAL_H_ */
