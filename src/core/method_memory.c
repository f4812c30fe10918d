/* A method's memory by part, after load and before it (method.h).
 *
 * Before load the figures come from a trial load through a counting
 * allocator: the load decides what it allocates from the whole program
 * (fusion depends on the memory plan, prepare on each kernel's arguments,
 * delegates on their payloads), so running it is the one way to get the
 * figures exactly as a load would; a sizing-only mode would need every
 * kernel's prepare and every backend to predict their own allocations. The
 * trial method is destroyed before returning. */
#include <stdint.h>
#include <string.h>

#include "src/core/method_internal.h"

/* Bytes held and the most held at once, over an inner allocator (NULL: the
 * C library). Each block carries its size and header offset in front. Not
 * locked: a load allocates on its calling thread only (kernels' prepares may
 * run tasks on the pool, but take their state from the load's thread). */
typedef struct pt_counting {
  const pterun_allocator* inner;
  size_t held, peak;
} pt_counting;

#define PT_COUNT_HEADER (2 * sizeof(size_t))

static void* counting_alloc(void* ctx, size_t size, size_t alignment) {
  pt_counting* c = ctx;
  size_t pad = alignment < PT_COUNT_HEADER ? PT_COUNT_HEADER : alignment;
  if (size > SIZE_MAX - pad) return NULL;
  unsigned char* base = pt_alloc_raw(c->inner, size + pad, pad);
  if (base == NULL) return NULL;
  size_t head[2] = {size, pad};
  memcpy(base + pad - sizeof head, head, sizeof head);
  c->held += size;
  if (c->held > c->peak) c->peak = c->held;
  return base + pad;
}

static void counting_free(void* ctx, void* p) {
  pt_counting* c = ctx;
  if (p == NULL) return;
  size_t head[2];
  memcpy(head, (unsigned char*)p - sizeof head, sizeof head);
  c->held -= head[0];
  pt_free(c->inner, (unsigned char*)p - head[1]);
}

static void parts(const pterun_method* m, pterun_method_memory_info* full) {
  pterun_method_memory(m, &full->runtime_bytes, &full->planned_bytes);
  full->prepared_bytes = m->state_bytes;
  full->delegate_bytes = m->delegate_bytes;
  full->folded_bytes = m->folded_bytes;
  full->scratch_bytes = m->scratch_size;
  full->fused_result_bytes = m->fuse_home_bytes;
}

/* Copies the fields that fit the caller's struct_size. */
static pterun_status give(pterun_method_memory_info* info, const pterun_method_memory_info* full) {
  size_t given = info->struct_size;
  memcpy((unsigned char*)info + sizeof given, (const unsigned char*)full + sizeof given,
         (given < sizeof *full ? given : sizeof *full) - sizeof given);
  return PTERUN_STATUS_OK;
}

pterun_status pterun_method_memory_parts(const pterun_method* method,
                                         pterun_method_memory_info* info) {
  if (method == NULL || info == NULL || info->struct_size < sizeof info->struct_size)
    return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_method_memory_info full;
  memset(&full, 0, sizeof full);
  parts(method, &full);
  return give(info, &full);
}

pterun_status pterun_program_method_memory(const pterun_program* program, const char* name,
                                           const pterun_method_options* options,
                                           pterun_method_memory_info* info) {
  if (program == NULL || name == NULL || info == NULL ||
      info->struct_size < sizeof info->struct_size)
    return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_method_options o;
  PTERUN_TRY(pterun_options_read(options, &o, sizeof o, &program->logger, "pterun_method_options"));
  pt_counting c = {o.allocator != NULL ? o.allocator : program->allocator, 0, 0};
  pterun_allocator counting = {&c, counting_alloc, counting_free};
  o.allocator = &counting;
  o.profiler = NULL;
  o.event_tracer = NULL;
  // Caller planned buffers may be in use: the trial gets its own.
  void* temp[64];
  size_t ntemp = 0;
  pterun_status st = PTERUN_STATUS_OK;
  if (o.planned_buffers != NULL) {
    size_t index;
    pterun_method_info mi;
    st = pterun_program_find_method(program, name, &index);
    if (st == PTERUN_STATUS_OK) st = pterun_program_method_info(program, index, &mi);
    if (st == PTERUN_STATUS_OK && mi.planned_buffer_count > sizeof temp / sizeof temp[0])
      st = pt_fail(&program->logger, PTERUN_STATUS_NOT_SUPPORTED,
                   "memory query: %zu planned buffers (at most %zu with caller buffers)",
                   mi.planned_buffer_count, sizeof temp / sizeof temp[0]);
    for (; st == PTERUN_STATUS_OK && ntemp < mi.planned_buffer_count; ++ntemp) {
      uint64_t size = 0;
      st = pterun_program_planned_buffer_size(program, index, ntemp, &size);
      if (st == PTERUN_STATUS_OK && size > SIZE_MAX)
        st = pt_fail(&program->logger, PTERUN_STATUS_MEMORY_PLAN, "planned buffer too large");
      temp[ntemp] = st == PTERUN_STATUS_OK ? pt_alloc_raw(c.inner, (size_t)size, 64) : NULL;
      if (st == PTERUN_STATUS_OK && temp[ntemp] == NULL)
        st = pt_fail(&program->logger, PTERUN_STATUS_OUT_OF_MEMORY,
                     "memory query: no memory for planned buffer %zu", ntemp);
      if (st != PTERUN_STATUS_OK) break;
    }
    o.planned_buffers = temp;
    o.planned_buffer_count = ntemp;
    o.planned_buffer_sizes = NULL;
  }
  pterun_method* m = NULL;
  if (st == PTERUN_STATUS_OK) st = pterun_method_load(program, name, &o, &m);
  pterun_method_memory_info full;
  memset(&full, 0, sizeof full);
  if (st == PTERUN_STATUS_OK) {
    parts(m, &full);
    full.load_peak_bytes = c.peak;
  }
  pterun_method_destroy(m);
  for (size_t k = 0; k < ntemp; ++k) pt_free(c.inner, temp[k]);
  return st == PTERUN_STATUS_OK ? give(info, &full) : st;
}
