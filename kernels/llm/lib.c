/* The LLM kernel library's one entry point: a constant table built from
 * ops.inc (rows: LLM_OP("llama::op.overload", fn)). */
#include "pterun/kernels/llm.h"

#define LLM_OP(name, fn) PTERUN_KERNEL(fn);
#define LLM_OP_PREPARED(name, fn, prep)                                                            \
  PTERUN_KERNEL(fn);                                                                               \
  PTERUN_KERNEL(prep);
#include "kernels/llm/ops.inc"
#undef LLM_OP_PREPARED
#undef LLM_OP

static const pterun_kernel kLlmKernels[] = {
#define LLM_OP(op_, fn_) {.op = op_, .fn = fn_},
#define LLM_OP_PREPARED(op_, fn_, prep_) {.op = op_, .fn = fn_, .prepare = prep_},
#include "kernels/llm/ops.inc"
#undef LLM_OP_PREPARED
#undef LLM_OP
};

static const pterun_kernel_library kLlmLibrary = {PTERUN_KERNEL_ABI_VERSION, "kernels_llm",
                                                  sizeof(kLlmKernels) / sizeof(kLlmKernels[0]),
                                                  kLlmKernels};

const pterun_kernel_library* pterun_kernels_llm(void) {
  return &kLlmLibrary;
}
