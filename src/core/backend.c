/* Delegate backends: resolving a method's DelegateCalls to registered
 * backends, building what their init needs (payload, compile specs, named
 * data) and keeping their handles. */
#include <stdio.h>
#include <string.h>

#include "pterun/method.h"
#include "src/core/backend_internal.h"
#include "src/core/data_internal.h"
#include "src/core/schema.h"

struct pterun_named_data {
  const pterun_program* program;
  const pterun_data* const* data;
  size_t data_count;
};

pterun_status pterun_named_data_get(const pterun_named_data* map, const char* key, size_t key_len,
                                    const void** data_out, size_t* size_out) {
  if (map == NULL || key == NULL || data_out == NULL || size_out == NULL)
    return PTERUN_STATUS_INVALID_ARGUMENT;
  *data_out = NULL;
  *size_out = 0;
  // Data files first (the caller's map wins, as in ExecuTorch), then the program.
  char buf[512];
  if (key_len < sizeof buf && memchr(key, 0, key_len) == NULL) {
    memcpy(buf, key, key_len);
    buf[key_len] = 0;
    for (size_t k = 0; k < map->data_count; ++k) {
      pt_data_entry e;
      if (map->data[k] != NULL && pt_data_find(map->data[k], buf, &e)) {
        if (e.size > SIZE_MAX) return PTERUN_STATUS_INVALID_DATA;
        *data_out = e.bytes;
        *size_out = (size_t)e.size;
        return PTERUN_STATUS_OK;
      }
    }
  }
  const pterun_program* p = map->program;
  for (uint32_t i = 0; i < p->named_data.len; ++i) {
    pt_fb_table nd;
    const char* k;
    uint32_t kl;
    if (!pt_fb_vec_table(&p->named_data, i, &nd) ||
        pt_fb_get_string(&nd, PT_NAMED_KEY, &k, &kl) != 1)
      continue;
    if (kl != key_len || memcmp(k, key, kl) != 0) continue;
    const uint8_t* bytes;
    uint64_t size;
    PTERUN_TRY(pt_program_segment(p, pt_fb_u32(&nd, PT_NAMED_SEGMENT_INDEX, 0), &bytes, &size));
    if (size > SIZE_MAX) return PTERUN_STATUS_INVALID_PROGRAM;
    *data_out = bytes;
    *size_out = (size_t)size;
    return PTERUN_STATUS_OK;
  }
  return PTERUN_STATUS_NOT_FOUND;
}

/* The processed bytes of a delegate: inline data or a segment. */
static pterun_status delegate_payload(const pterun_program* p, const pt_fb_table* d,
                                      const char* where, const void** data, size_t* size) {
  pt_fb_table ref;
  if (pt_fb_get_table(d, PT_DELEGATE_PROCESSED, &ref) != 1)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, "%s: no processed data", where);
  uint8_t loc = pt_fb_u8(&ref, PT_DATAREF_LOCATION, 0);
  uint32_t idx = pt_fb_u32(&ref, PT_DATAREF_INDEX, 0);
  if (loc == PT_DATALOC_SEGMENT) {
    const uint8_t* bytes;
    uint64_t n;
    PTERUN_TRY(pt_program_segment(p, idx, &bytes, &n));
    if (n > SIZE_MAX) return PTERUN_STATUS_INVALID_PROGRAM;
    *data = bytes;
    *size = (size_t)n;
    return PTERUN_STATUS_OK;
  }
  if (loc != PT_DATALOC_INLINE)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, "%s: unknown data location %u", where,
                   loc);
  pt_fb_vec inl, bytes;
  pt_fb_table b;
  if (pt_fb_get_vector(&p->root, PT_PROGRAM_BACKEND_DELEGATE_DATA, 4, &inl) != 1 ||
      idx >= inl.len || !pt_fb_vec_table(&inl, idx, &b) ||
      pt_fb_get_vector(&b, PT_BUFFER_STORAGE, 1, &bytes) != 1)
    return pt_fail(&p->logger, PTERUN_STATUS_INVALID_PROGRAM, "%s: inline delegate data %u missing",
                   where, idx);
  *data = pt_fb_vec_ptr(&bytes, 0);
  *size = bytes.len;
  return PTERUN_STATUS_OK;
}

/* Resolves the backend of delegate `d` or reports it missing. */
static pterun_status find_backend(const pterun_registry* reg, const pterun_logger* lg,
                                  const pt_fb_table* d, const char* where,
                                  const pterun_backend** out) {
  const char* id = "?";
  uint32_t idl = 0;
  pt_fb_get_string(d, PT_DELEGATE_ID, &id, &idl);
  *out = pterun_registry_backend(reg, id);
  if (*out != NULL) return PTERUN_STATUS_OK;
  const char* comp = pterun_component_for_backend(id);
  char eid[PT_ESC_CAP];
  pt_esc(id, eid, sizeof eid);
  if (comp != NULL)
    return pt_fail(lg, PTERUN_STATUS_BACKEND_UNAVAILABLE,
                   "%s: delegate backend '%s' is not registered — link pterun::%s and add it "
                   "with pterun_registry_add_backend()",
                   where, eid, comp);
  return pt_fail(lg, PTERUN_STATUS_BACKEND_UNAVAILABLE,
                 "%s: delegate backend '%s' is not available — no pterun component provides it "
                 "(export without that partitioner to run on the portable kernels)",
                 where, eid);
}

/* Runs `fn` with the init arguments of delegate i (specs on the stack). */
typedef pterun_status (*with_args_fn)(void* user, const pterun_backend* be,
                                      const pterun_backend_init_args* args);

static pterun_status with_init_args(const pterun_program* p, const pterun_registry* reg,
                                    const pt_fb_vec* delegates, uint32_t i,
                                    const pt_delegate_env* env, with_args_fn fn, void* user) {
  char where[PT_ESC_CAP + 64], ename[PT_ESC_CAP];
  snprintf(where, sizeof where, "method '%s' delegate %u",
           pt_esc(env->method_name, ename, sizeof ename), i);
  pt_fb_table d;
  if (!pt_fb_vec_table(delegates, i, &d))
    return pt_fail(env->logger, PTERUN_STATUS_INVALID_PROGRAM, "%s is malformed", where);
  const pterun_backend* be;
  PTERUN_TRY(find_backend(reg, env->logger, &d, where, &be));
  pterun_backend_init_args a;
  memset(&a, 0, sizeof a);
  PTERUN_TRY(delegate_payload(p, &d, where, &a.payload, &a.payload_size));
  enum { kMaxSpecs = 32 };
  pterun_compile_spec specs[kMaxSpecs];
  char keys[kMaxSpecs][128];
  pt_fb_vec sv;
  if (pt_fb_get_vector(&d, PT_DELEGATE_COMPILE_SPECS, 4, &sv) == 1) {
    if (sv.len > kMaxSpecs)
      return pt_fail(env->logger, PTERUN_STATUS_INVALID_PROGRAM, "%s has %u compile specs (max %d)",
                     where, sv.len, kMaxSpecs);
    for (uint32_t s = 0; s < sv.len; ++s) {
      pt_fb_table sp;
      pt_fb_vec val;
      const char* k = "";
      uint32_t kl = 0;
      pt_fb_vec_table(&sv, s, &sp);
      pt_fb_get_string(&sp, PT_SPEC_KEY, &k, &kl);
      if (kl >= sizeof keys[s]) kl = sizeof keys[s] - 1;
      memcpy(keys[s], k, kl);
      keys[s][kl] = 0;
      specs[s].key = keys[s];
      if (pt_fb_get_vector(&sp, PT_SPEC_VALUE, 1, &val) == 1) {
        specs[s].value = pt_fb_vec_ptr(&val, 0);
        specs[s].value_size = val.len;
      } else {
        specs[s].value = NULL;
        specs[s].value_size = 0;
      }
    }
    a.specs = specs;
    a.spec_count = sv.len;
  }
  struct pterun_named_data nd = {p, env->data, env->data_count};
  a.named_data = &nd;
  a.logger = env->logger;
  a.allocator = env->allocator;
  a.method_name = env->method_name;
  a.delegate_index = i;
  return fn(user, be, &a);
}

typedef struct init_ctx {
  pt_delegate* out;
} init_ctx;

static pterun_status do_init(void* user, const pterun_backend* be,
                             const pterun_backend_init_args* a) {
  pt_delegate* dl = ((init_ctx*)user)->out;
  void* h = NULL;
  size_t mem = 0;
  pterun_backend_init_args args = *a;
  dl->scratch = PTERUN_DEFAULT_SCRATCH_BYTES; /* a backend that does not say */
  args.scratch_out = &dl->scratch;
  pterun_status st = be->init(&args, &h, &mem);
  if (st != PTERUN_STATUS_OK) {
    if (h != NULL) be->destroy(h, a->allocator);
    char ename[PT_ESC_CAP];
    return pt_fail(a->logger, st, "method '%s': backend %s could not prepare delegate %u",
                   pt_esc(a->method_name, ename, sizeof ename), be->id, a->delegate_index);
  }
  dl->backend = be;
  dl->handle = h;
  dl->memory = mem;
  return PTERUN_STATUS_OK;
}

pterun_status pt_delegates_init(const pterun_program* p, const pterun_registry* reg,
                                const pt_fb_vec* delegates, const pt_delegate_env* env,
                                pt_delegate* out) {
  for (uint32_t i = 0; i < delegates->len; ++i) {
    init_ctx c = {&out[i]};
    PTERUN_TRY(with_init_args(p, reg, delegates, i, env, do_init, &c));
  }
  return PTERUN_STATUS_OK;
}

void pt_delegates_destroy(pt_delegate* d, uint32_t n, const pterun_allocator* a) {
  for (uint32_t i = 0; d != NULL && i < n; ++i)
    if (d[i].backend != NULL && d[i].handle != NULL) {
      d[i].backend->destroy(d[i].handle, a);
      d[i].handle = NULL;
    }
}

static pterun_status do_query(void* user, const pterun_backend* be,
                              const pterun_backend_init_args* a) {
  size_t n = 0;
  if (be->memory_query != NULL) PTERUN_TRY(be->memory_query(a, &n));
  size_t* total = user;
  if (pt_add_overflow_size(*total, n, total)) return PTERUN_STATUS_OUT_OF_MEMORY;
  return PTERUN_STATUS_OK;
}

pterun_status pt_delegates_memory(const pterun_program* p, const pterun_registry* reg,
                                  const pt_fb_vec* delegates, const pt_delegate_env* env,
                                  size_t* bytes) {
  *bytes = 0;
  for (uint32_t i = 0; i < delegates->len; ++i)
    PTERUN_TRY(with_init_args(p, reg, delegates, i, env, do_query, bytes));
  return PTERUN_STATUS_OK;
}
