/* Shared helpers for the fuzz targets (libFuzzer entry points that also build
 * into plain replay binaries, see replay_main.c). */
#ifndef PTERUN_TESTS_FUZZ_FUZZ_COMMON_H_
#define PTERUN_TESTS_FUZZ_FUZZ_COMMON_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/optimize.h"
#include "pterun/kernels/llm.h"
#include "pterun/kernels/portable.h"
#include "pterun/kernels/quantized.h"
#ifdef FZ_WITH_XNNPACK
#include "pterun/backends/xnnpack.h"
#endif
#include "pterun/pterun.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* Allocations above this fail (OUT_OF_MEMORY paths, no allocation bombs). */
#define FZ_ALLOC_CAP ((size_t)32 << 20)

static void* fz_alloc(void* ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (size > FZ_ALLOC_CAP) return NULL;
  size_t rounded = (size + alignment - 1) & ~(alignment - 1);
  return aligned_alloc(alignment, rounded ? rounded : alignment);
}
static void fz_free(void* ctx, void* p) {
  (void)ctx;
  free(p);
}
static const pterun_allocator fz_allocator = {NULL, fz_alloc, fz_free};

/* A 64-aligned private copy of the input: program buffers are borrowed and
 * must be 16-aligned; an exact-size copy lets ASan see any over-read. */
static inline uint8_t* fz_copy(const uint8_t* data, size_t size) {
  uint8_t* p = aligned_alloc(64, (size + 63) & ~(size_t)63 ? (size + 63) & ~(size_t)63 : 64);
  if (p != NULL && size > 0) memcpy(p, data, size);
  return p;
}

static inline pterun_load_options fz_load_options(void) {
  pterun_load_options o = PTERUN_LOAD_OPTIONS_INIT;
  o.logger = pterun_logger_silent();
  o.allocator = &fz_allocator;
  return o;
}

/* One registry with the load-time optimiser, the prim ops, the portable, the LLM and the quantized
 * kernels (the last with the int8 fusion's operators, which a hostile program
 * may also name directly), and, for the xnnpack target, the XNNPACK backend,
 * for the process. */
static inline const pterun_registry* fz_registry(void) {
  static pterun_registry* reg;
  if (reg == NULL) {
    pterun_logger silent = pterun_logger_silent();
    if (pterun_registry_create(NULL, &silent, &reg) != PTERUN_STATUS_OK) abort();
    /* Folding and fusion run on hostile programs too. */
    if (pterun_registry_set_optimizer(reg, pterun_optimizer_default()) != PTERUN_STATUS_OK) abort();
    if (pterun_registry_add(reg, pterun_kernels_portable()) != PTERUN_STATUS_OK) abort();
    if (pterun_registry_add(reg, pterun_kernels_llm()) != PTERUN_STATUS_OK) abort();
    if (pterun_registry_add(reg, pterun_kernels_quantized()) != PTERUN_STATUS_OK) abort();
#ifdef FZ_WITH_XNNPACK
    if (pterun_registry_add_backend(reg, pterun_backend_xnnpack()) != PTERUN_STATUS_OK) abort();
#endif
  }
  return reg;
}

/* FNV-1a: a deterministic per-input seed for generated inputs. */
static inline uint64_t fz_hash(const uint8_t* d, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ d[i]) * 1099511628211ull;
  return h;
}
static inline uint64_t fz_next(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A broken contract: say which, then abort (the fuzzer's crash signal). */
#define FZ_FAIL(what)                                                                              \
  do {                                                                                             \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, what);                                      \
    abort();                                                                                       \
  } while (0)

/* Every status a call may return is a known code. */
#define FZ_CHECK_STATUS(st)                                                                        \
  do {                                                                                             \
    if ((int)(st) < 0 || (int)(st) >= (int)PTERUN_STATUS_COUNT_) abort();                          \
  } while (0)

#endif /* PTERUN_TESTS_FUZZ_FUZZ_COMMON_H_ */
