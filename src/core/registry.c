/* The operator registry: explicit, copy-free tables added at run time. */
#define _GNU_SOURCE /* dladdr */
#include <string.h>

#include "src/core/internal.h"
#include "src/core/optimizer_internal.h"
#include "src/core/platform.h"
#include "src/core/registry_internal.h"

typedef struct entry {
  const char* op;
  pterun_kernel_fn fn;
  pterun_kernel_prepare_fn prepare;
  const pterun_kernel_library* lib;
} entry;

struct pterun_registry {
  pt_mutex mu;
  entry* entries;
  size_t count, cap;
  const pterun_kernel_library** libs;
  size_t nlibs, libcap;
  const pterun_backend** backends;
  size_t nbackends, backendcap;
  pterun_logger logger;
  pterun_allocator allocator_copy;
  const pterun_allocator* allocator; /* &allocator_copy or NULL (malloc) */
  const pterun_optimizer* optimizer; /* NULL: methods are not optimised */
};

/* Grows an array to hold `need` items of `elem` bytes (doubling from
 * `first`), through the registry's allocator. */
static bool grow(pterun_registry* r, void** items, size_t* cap, size_t need, size_t elem,
                 size_t first) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap : first, bytes;
  while (ncap < need) ncap *= 2;
  if (pt_mul_overflow_size(ncap, elem, &bytes)) return false;
  void* n = pt_alloc_raw(r->allocator, bytes, 16);
  if (n == NULL) return false;
  if (*items != NULL) memcpy(n, *items, *cap * elem);
  pt_free(r->allocator, *items);
  *items = n;
  *cap = ncap;
  return true;
}

/* Path of the shared object that holds fn, for the duplicate message (the
 * duplicate itself is found by comparing function pointers). */
static const char* object_of(pterun_kernel_fn fn) {
  void* addr;
  const char* path;
  memcpy(&addr, &fn, sizeof addr < sizeof fn ? sizeof addr : sizeof fn);
  path = pt_object_path(addr);
  return path != NULL ? path : "unknown object";
}

pterun_status pterun_registry_create(const pterun_allocator* allocator, const pterun_logger* logger,
                                     pterun_registry** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  pterun_registry* r = pt_alloc(allocator, sizeof *r, 16);
  if (r == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  r->logger = pt_logger_or(logger, NULL);
  if (allocator != NULL) {
    r->allocator_copy = *allocator;
    r->allocator = &r->allocator_copy;
  }
  if (pt_mutex_init(&r->mu) != 0) {
    pt_free(allocator, r);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  pterun_status st = pterun_registry_add(r, pt_prim_ops_library());
  if (st != PTERUN_STATUS_OK) {
    pterun_registry_destroy(r);
    return st;
  }
  *out = r;
  return PTERUN_STATUS_OK;
}

void pterun_registry_destroy(pterun_registry* r) {
  if (r == NULL) return;
  pt_mutex_destroy(&r->mu);
  pterun_allocator copy = r->allocator_copy;
  const pterun_allocator* a = r->allocator != NULL ? &copy : NULL;
  pt_free(a, r->entries);
  pt_free(a, (void*)r->libs);
  pt_free(a, (void*)r->backends);
  pt_free(a, r);
}

static pt_once_flag g_default_once = PT_ONCE_INIT;
static pterun_registry* g_default; /* the one piece of process state */

static void make_default(void) {
  (void)pterun_registry_create(NULL, NULL, &g_default);
}

pterun_registry* pterun_registry_default(void) {
  pt_call_once(&g_default_once, make_default);
  return g_default;
}

static const entry* find(const pterun_registry* r, const char* op) {
  for (size_t i = 0; i < r->count; ++i)
    if (strcmp(r->entries[i].op, op) == 0) return &r->entries[i];
  return NULL;
}

static pterun_status add_locked(pterun_registry* r, const pterun_kernel_library* lib) {
  if (lib->abi_version != PTERUN_KERNEL_ABI_VERSION)
    return pt_fail(&r->logger, PTERUN_STATUS_ABI_MISMATCH,
                   "kernel library '%s' was built for kernel ABI %u; this runtime has ABI %u",
                   lib->component ? lib->component : "?", lib->abi_version,
                   PTERUN_KERNEL_ABI_VERSION);
  for (size_t i = 0; i < r->nlibs; ++i)
    if (r->libs[i] == lib || r->libs[i]->kernels == lib->kernels) return PTERUN_STATUS_OK;
  if (lib->count > 0 && lib->kernels == NULL)
    return pt_fail(&r->logger, PTERUN_STATUS_INVALID_ARGUMENT, "kernel library has no table");
  // Check the whole library first so that a refusal adds nothing.
  size_t fresh = 0;
  for (size_t k = 0; k < lib->count; ++k) {
    const pterun_kernel* kd = &lib->kernels[k];
    if (kd->op == NULL || kd->fn == NULL)
      return pt_fail(&r->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                     "kernel library '%s': entry %zu has no operator name or function",
                     lib->component ? lib->component : "?", k);
    const entry* e = find(r, kd->op);
    if (e != NULL && (e->fn != kd->fn || e->prepare != kd->prepare))
      return pt_fail(&r->logger, PTERUN_STATUS_ALREADY_REGISTERED,
                     "cannot add %s from %s (%s): a different kernel is already registered by %s "
                     "(%s)",
                     kd->op, lib->component, object_of(kd->fn), e->lib->component,
                     object_of(e->fn));
    for (size_t j = 0; j < k; ++j)
      if (strcmp(lib->kernels[j].op, kd->op) == 0 &&
          (lib->kernels[j].fn != kd->fn || lib->kernels[j].prepare != kd->prepare))
        return pt_fail(&r->logger, PTERUN_STATUS_ALREADY_REGISTERED,
                       "kernel library '%s' lists %s twice with different kernels", lib->component,
                       kd->op);
    if (e == NULL) ++fresh;
  }
  if (!grow(r, (void**)&r->entries, &r->cap, r->count + fresh, sizeof *r->entries, 256) ||
      !grow(r, (void**)&r->libs, &r->libcap, r->nlibs + 1, sizeof *r->libs, 8))
    return PTERUN_STATUS_OUT_OF_MEMORY;
  for (size_t k = 0; k < lib->count; ++k) {
    const pterun_kernel* kd = &lib->kernels[k];
    if (find(r, kd->op) != NULL) continue;
    r->entries[r->count++] = (entry){kd->op, kd->fn, kd->prepare, lib};
  }
  r->libs[r->nlibs++] = lib;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_registry_add(pterun_registry* r, const pterun_kernel_library* lib) {
  if (r == NULL || lib == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pt_mutex_lock(&r->mu);
  pterun_status st = add_locked(r, lib);
  pt_mutex_unlock(&r->mu);
  return st;
}

size_t pterun_registry_count(const pterun_registry* r) {
  if (r == NULL) return 0;
  pt_mutex_lock(&r->mu);
  size_t n = r->count;
  pt_mutex_unlock(&r->mu);
  return n;
}

pterun_status pterun_registry_get(const pterun_registry* r, size_t i, const char** op_out,
                                  const char** component_out) {
  if (r == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pt_mutex_lock(&r->mu);
  pterun_status st = PTERUN_STATUS_NOT_FOUND;
  if (i < r->count) {
    if (op_out) *op_out = r->entries[i].op;
    if (component_out) *component_out = r->entries[i].lib->component;
    st = PTERUN_STATUS_OK;
  }
  pt_mutex_unlock(&r->mu);
  return st;
}

const char* pterun_registry_provider(const pterun_registry* r, const char* op) {
  if (r == NULL || op == NULL) return NULL;
  const char* comp = NULL;
  pt_mutex_lock(&r->mu);
  for (size_t i = 0; i < r->count && comp == NULL; ++i)
    if (strcmp(r->entries[i].op, op) == 0) comp = r->entries[i].lib->component;
  pt_mutex_unlock(&r->mu);
  return comp;
}

int pt_registry_has_component(const pterun_registry* r, const char* component) {
  int has = 0;
  pt_mutex_lock(&r->mu);
  for (size_t i = 0; i < r->nlibs && !has; ++i)
    has = r->libs[i]->component != NULL && strcmp(r->libs[i]->component, component) == 0;
  pt_mutex_unlock(&r->mu);
  return has;
}

pterun_kernel_fn pt_registry_resolve(const pterun_registry* r, const char* op,
                                     pterun_kernel_prepare_fn* prepare_out) {
  pt_mutex_lock(&r->mu);
  const entry* e = find(r, op);
  pterun_kernel_fn fn = e != NULL ? e->fn : NULL;
  if (prepare_out != NULL) *prepare_out = e != NULL ? e->prepare : NULL;
  pt_mutex_unlock(&r->mu);
  return fn;
}

/* Path of the shared object holding a backend, for messages. */
static const char* backend_object(const pterun_backend* b) {
  const char* path = pt_object_path((const void*)b);
  return path != NULL ? path : "unknown object";
}

static pterun_status add_backend_locked(pterun_registry* r, const pterun_backend* b) {
  if (b->abi_version != PTERUN_BACKEND_ABI_VERSION)
    return pt_fail(&r->logger, PTERUN_STATUS_ABI_MISMATCH,
                   "backend '%s' was built for backend ABI %u; this runtime has ABI %u",
                   b->component ? b->component : "?", b->abi_version, PTERUN_BACKEND_ABI_VERSION);
  if (b->id == NULL || b->init == NULL || b->execute == NULL || b->destroy == NULL)
    return pt_fail(&r->logger, PTERUN_STATUS_INVALID_ARGUMENT,
                   "backend '%s' lacks an id, init, execute or destroy",
                   b->component ? b->component : "?");
  for (size_t i = 0; i < r->nbackends; ++i) {
    const pterun_backend* e = r->backends[i];
    if (e == b) return PTERUN_STATUS_OK;
    if (strcmp(e->id, b->id) == 0)
      return pt_fail(&r->logger, PTERUN_STATUS_ALREADY_REGISTERED,
                     "cannot add backend %s from %s (%s): it is already registered by %s (%s)",
                     b->id, b->component ? b->component : "?", backend_object(b),
                     e->component ? e->component : "?", backend_object(e));
  }
  if (!grow(r, (void**)&r->backends, &r->backendcap, r->nbackends + 1, sizeof *r->backends, 4))
    return PTERUN_STATUS_OUT_OF_MEMORY;
  r->backends[r->nbackends++] = b;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_registry_add_backend(pterun_registry* r, const pterun_backend* b) {
  if (r == NULL || b == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  pt_mutex_lock(&r->mu);
  pterun_status st = add_backend_locked(r, b);
  pt_mutex_unlock(&r->mu);
  return st;
}

pterun_status pterun_registry_set_optimizer(pterun_registry* r, const pterun_optimizer* o) {
  if (r == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (o != NULL && o->abi != PT_OPTIMIZER_ABI)
    return pt_fail(&r->logger, PTERUN_STATUS_ABI_MISMATCH,
                   "registry: the optimiser comes from another pterun build (abi %u, want %u)",
                   (unsigned)o->abi, (unsigned)PT_OPTIMIZER_ABI);
  pt_mutex_lock(&r->mu);
  r->optimizer = o;
  pt_mutex_unlock(&r->mu);
  return PTERUN_STATUS_OK;
}

const pterun_optimizer* pterun_registry_optimizer(const pterun_registry* r) {
  if (r == NULL) return NULL;
  pt_mutex_lock(&r->mu);
  const pterun_optimizer* o = r->optimizer;
  pt_mutex_unlock(&r->mu);
  return o;
}

const pterun_backend* pterun_registry_backend(const pterun_registry* r, const char* id) {
  if (r == NULL || id == NULL) return NULL;
  const pterun_backend* found = NULL;
  pt_mutex_lock(&r->mu);
  for (size_t i = 0; i < r->nbackends && found == NULL; ++i)
    if (strcmp(r->backends[i]->id, id) == 0) found = r->backends[i];
  pt_mutex_unlock(&r->mu);
  return found;
}

/* The manifest's key -> component tables, each packed into one literal of
 * "key\0component\0" pairs (no pointer table to relocate): the component
 * of the first key equal to s (prefix: the first key s starts with). */
static const char* component_in(const char* pairs, const char* s, int prefix) {
  while (*pairs != '\0') {
    size_t n = strlen(pairs);
    const char* component = pairs + n + 1;
    if (prefix ? strncmp(s, pairs, n) == 0 : strcmp(s, pairs) == 0) return component;
    pairs = component + strlen(component) + 1;
  }
  return NULL;
}

/* Which pterun component ships a delegate backend, by its id: generated from
 * the component manifest ("backend_ids"). */
const char* pterun_component_for_backend(const char* id) {
#define PT_COMPONENT_BACKEND(id, component) id "\0" component "\0"
  static const char kPairs[] =
#include "pterun_component_backends.inc"
      "";
#undef PT_COMPONENT_BACKEND
  return id != NULL ? component_in(kPairs, id, 0) : NULL;
}

/* Which pterun component ships kernels for an operator namespace, longest
 * prefix first: generated from the component manifest. */
const char* pterun_component_for_op(const char* op) {
#define PT_COMPONENT_PREFIX(prefix, component) prefix "\0" component "\0"
  static const char kPairs[] =
#include "pterun_component_prefixes.inc"
      "";
#undef PT_COMPONENT_PREFIX
  return op != NULL ? component_in(kPairs, op, 1) : NULL;
}

const char* pterun_registry_missing_component(const pterun_registry* r, const char* op) {
  const char* comp = pterun_component_for_op(op);
  if (r == NULL || comp == NULL || pt_registry_has_component(r, comp)) return NULL;
  return comp;
}

pterun_status pterun_registry_lookup(const pterun_registry* r, const char* op,
                                     pterun_kernel_fn* fn_out) {
  if (r == NULL || op == NULL || fn_out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *fn_out = pt_registry_resolve(r, op, NULL);
  return *fn_out != NULL ? PTERUN_STATUS_OK : PTERUN_STATUS_OPERATOR_MISSING;
}
