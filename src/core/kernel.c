/* Kernel-facing services: failure reporting, scratch memory, direct calls. */
#include <stdio.h>
#include <string.h>

#include "src/core/kernel_context.h"
#include "src/core/optimizer_internal.h"

#define PT_STATE_FACTOR 8u

pterun_status pterun_kernel_fail(pterun_kernel_context* ctx, pterun_status status, const char* fmt,
                                 ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ctx != NULL) {
    char op[PT_ESC_CAP];
    pt_log(ctx->logger, PTERUN_LOG_ERROR, "%s: %s",
           ctx->op_name ? pt_esc(ctx->op_name, op, sizeof op) : "kernel", msg);
  }
  return status == PTERUN_STATUS_OK ? PTERUN_STATUS_KERNEL_FAILED : status;
}

const char* pterun_kernel_op_name(const pterun_kernel_context* ctx) {
  return ctx != NULL && ctx->op_name != NULL ? ctx->op_name : "";
}

void pterun_kernel_note_slow_path(pterun_kernel_context* ctx, const char* reason) {
  if (ctx != NULL) ctx->slow_path = reason;
}

void* pterun_kernel_scratch(pterun_kernel_context* ctx, size_t nbytes, size_t align) {
  if (ctx == NULL || ctx->scratch == NULL || align == 0 || (align & (align - 1)) != 0) return NULL;
  uintptr_t base = (uintptr_t)ctx->scratch + ctx->scratch_used;
  uintptr_t aligned = (base + (align - 1)) & ~(uintptr_t)(align - 1);
  size_t used = (size_t)(aligned - (uintptr_t)ctx->scratch);
  if (used > ctx->scratch_size || nbytes > ctx->scratch_size - used) return NULL;
  ctx->scratch_used = used + nbytes;
  return (void*)aligned;
}

int pterun_kernel_tracing(const pterun_kernel_context* ctx) {
  return ctx != NULL && ctx->tracer != NULL;
}

void pterun_kernel_event_begin(pterun_kernel_context* ctx, uint32_t id, const char* name) {
  if (ctx != NULL && ctx->tracer != NULL && ctx->hooks->delegate_event_begin != NULL)
    ctx->hooks->delegate_event_begin(ctx->tracer, id, name);
}

void pterun_kernel_event_end(pterun_kernel_context* ctx, uint32_t id, const char* name) {
  if (ctx != NULL && ctx->tracer != NULL && ctx->hooks->delegate_event_end != NULL)
    ctx->hooks->delegate_event_end(ctx->tracer, id, name);
}

void pterun_kernel_scratch_reserve(pterun_kernel_context* ctx, size_t nbytes) {
  if (ctx == NULL || ctx->reserved == NULL) return;
  size_t r = pt_align_up(nbytes, 64);
  *ctx->reserved = r < nbytes || *ctx->reserved > SIZE_MAX - r ? SIZE_MAX : *ctx->reserved + r;
}

size_t pterun_kernel_scratch_available(const pterun_kernel_context* ctx, size_t align) {
  if (ctx == NULL || ctx->scratch == NULL || align == 0 || (align & (align - 1)) != 0) return 0;
  uintptr_t base = (uintptr_t)ctx->scratch + ctx->scratch_used;
  uintptr_t aligned = (base + (align - 1)) & ~(uintptr_t)(align - 1);
  size_t used = (size_t)(aligned - (uintptr_t)ctx->scratch);
  return used >= ctx->scratch_size ? 0 : ctx->scratch_size - used;
}

/* Each block carries a header linking it into the method's list (freed by
 * pterun_method_destroy); the caller's bytes start `align` (or the header
 * size, if larger) past the allocation. */
static void* pt_state_block_alloc(pterun_method* m, size_t nbytes, size_t align) {
  if (align == 0 || (align & (align - 1)) != 0 || align > 4096 || nbytes == 0) return NULL;
  size_t head = pt_align_up(sizeof(pt_state_block), align < 16 ? 16 : align), total;
  if (pt_add_overflow_size(head, nbytes, &total)) return NULL;
  // Kernels size their state from the tensors a program declares, and many
  // instructions may name one large tensor: the method's total is capped at
  // PT_STATE_FACTOR x (its files + planned memory) + 1 MiB. Packed weights
  // take about the constants' size (<= 1.2x of files + planned on every
  // fixture); per-call workspaces sized like activations fit several times.
  uint64_t budget = m->file_bytes + m->planned_bytes;
  budget = budget < m->file_bytes || budget > (UINT64_MAX >> 4)
               ? UINT64_MAX
               : PT_STATE_FACTOR * budget + ((uint64_t)1 << 20);
  if (total > budget || m->state_bytes > budget - total) {
    pt_log(&m->logger, PTERUN_LOG_ERROR,
           "method: prepared kernel state would exceed %llu bytes (%u x the files and planned "
           "memory + 1 MiB)",
           (unsigned long long)budget, PT_STATE_FACTOR);
    return NULL;
  }
  pt_state_block* b = pt_alloc_raw(m->allocator, total, align < 16 ? 16 : align);
  if (b == NULL) return NULL;
  b->next = m->states;
  m->states = b;
  m->state_bytes += total;
  return (uint8_t*)b + head;
}

void* pterun_kernel_state_alloc(pterun_kernel_context* ctx, size_t nbytes, size_t align) {
  if (ctx == NULL || ctx->prep == NULL) return NULL;
  void* p = pt_state_block_alloc(ctx->prep, nbytes, align);
  if (p != NULL && *ctx->prep_state == NULL) *ctx->prep_state = p;
  return p;
}

/* Shared blocks are found by a linear search: a method has at most a few
 * thousand prepared instructions and this runs once, at load. A block is
 * found only after the prepare that allocated it returned OK
 * (pt_prepare_kernels publishes it), so a failed prepare never leaves a
 * half-filled block for the next instruction. */
void* pterun_kernel_shared_state(pterun_kernel_context* ctx, const void* key, size_t key_bytes,
                                 size_t nbytes, size_t align, int* fresh) {
  if (fresh != NULL) *fresh = 0;
  if (ctx == NULL || ctx->prep == NULL || key == NULL || key_bytes == 0 || fresh == NULL)
    return NULL;
  pterun_method* m = ctx->prep;
  for (pt_shared_block* s = m->shared; s != NULL; s = s->next)
    if (s->published && s->key_bytes == key_bytes && s->nbytes == nbytes && s->align == align &&
        memcmp(s->key, key, key_bytes) == 0)
      return s->data;
  size_t hbytes;
  if (pt_add_overflow_size(sizeof(pt_shared_block), key_bytes, &hbytes)) return NULL;
  pt_shared_block* s = pt_state_block_alloc(m, hbytes, _Alignof(pt_shared_block));
  void* data = s != NULL ? pt_state_block_alloc(m, nbytes, align) : NULL;
  if (data == NULL) return NULL;
  s->key_bytes = key_bytes;
  s->nbytes = nbytes;
  s->align = align;
  s->published = 0;
  s->data = data;
  memcpy(s->key, key, key_bytes);
  s->next = m->shared;
  m->shared = s;
  *fresh = 1;
  return data;
}

void pterun_kernel_packed_constant(pterun_kernel_context* ctx, const pterun_tensor* t,
                                   unsigned flags) {
  if (ctx != NULL && ctx->prep != NULL && ctx->prep->opt != NULL && t != NULL)
    ctx->prep->opt->claim_view(ctx->prep, ctx->prep_instr, t,
                               (flags & PTERUN_KERNEL_PACKED_ONLY) != 0);
}

void* pterun_kernel_state(const pterun_kernel_context* ctx) {
  return ctx != NULL ? ctx->state : NULL;
}

int pterun_kernel_preparing(const pterun_kernel_context* ctx) {
  return ctx != NULL && ctx->prep != NULL;
}

struct pterun_threadpool* pterun_kernel_threadpool(const pterun_kernel_context* ctx) {
  return ctx != NULL ? ctx->threadpool : NULL;
}

size_t pterun_kernel_max_threads(const pterun_kernel_context* ctx) {
  return ctx != NULL ? ctx->max_threads : 0;
}

pterun_status pterun_kernel_invoke(pterun_kernel_fn fn, const char* op_name, pterun_value** args,
                                   size_t nargs, const pterun_logger* logger, void* scratch,
                                   size_t scratch_bytes) {
  if (fn == NULL || (nargs > 0 && args == NULL)) return PTERUN_STATUS_INVALID_ARGUMENT;
  for (size_t i = 0; i < nargs; ++i)
    if (args[i] == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pterun_logger lg = pt_logger_or(logger, NULL);
  struct pterun_kernel_context ctx = {.logger = &lg,
                                      .op_name = op_name,
                                      .scratch = (uint8_t*)scratch,
                                      .scratch_size = scratch ? scratch_bytes : 0};
  return fn(&ctx, args, nargs);
}
