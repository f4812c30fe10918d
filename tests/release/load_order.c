/* Loads every shipped library with dlopen() in the order given (nothing is
 * linked: the runtime is whichever library defines pterun_registry_create),
 * calls each kernel library's entry function, attaches the load-time
 * optimiser when libpterun_optimize is among them, adds the tables to a fresh
 * registry twice (the second pass must change nothing), checks that every
 * (operator, key) pair is registered once and that each library's kernels are
 * all there, then runs a program. Everything printed on stdout is independent
 * of the load order, so tools/release_check.py compares it across orders.
 *
 * Usage: load_order [-c OP=COMPONENT]... MODEL METHOD LIB[=ENTRY]...
 *   -c  also check pterun_component_for_op(OP) == COMPONENT (the manifest's
 *       operator prefixes against the runtime's table)
 * Exit: 0 ok, 1 a check failed, 2 usage or load failure. */
#define _GNU_SOURCE /* dlinfo, dladdr */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/pterun.h"

// clang-format off
#define PT_API_LIST(X) \
  X(pterun_registry_create) \
  X(pterun_registry_destroy) \
  X(pterun_registry_add) \
  X(pterun_registry_count) \
  X(pterun_registry_get) \
  X(pterun_component_for_op) \
  X(pterun_status_name) \
  X(pterun_dtype_name) \
  X(pterun_value_tag_name) \
  X(pterun_program_load_file) \
  X(pterun_program_destroy) \
  X(pterun_program_find_method) \
  X(pterun_program_method_input) \
  X(pterun_method_load) \
  X(pterun_method_destroy) \
  X(pterun_method_input_count) \
  X(pterun_method_output_count) \
  X(pterun_method_set_input) \
  X(pterun_method_execute) \
  X(pterun_method_output)
// clang-format on

#define PT_DECL_(f) static __typeof__(f)* p_##f;
PT_API_LIST(PT_DECL_)
#undef PT_DECL_
#define PT_FN(f) p_##f
#include "common/run_model.h"

#define PT_MAX_LIBS 32

typedef const pterun_kernel_library* (*pt_entry_fn)(void);

static const char* base_name(const char* p) {
  const char* s = strrchr(p, '/');
  return s ? s + 1 : p;
}

int main(int argc, char** argv) {
  int a = 1, failed = 0;
  const char* checks[64];
  int n_checks = 0;
  while (a + 1 < argc && strcmp(argv[a], "-c") == 0 && n_checks < 64) {
    checks[n_checks++] = argv[a + 1];
    a += 2;
  }
  if (argc - a < 3 || argc - a - 2 > PT_MAX_LIBS) {
    fprintf(stderr, "usage: %s [-c OP=COMPONENT]... MODEL METHOD LIB[=ENTRY]...\n", argv[0]);
    return 2;
  }
  const char* model = argv[a];
  const char* method = argv[a + 1];
  int n_libs = argc - a - 2;
  const pterun_kernel_library* tables[PT_MAX_LIBS];
  int n_tables = 0;
  void* runtime = NULL;
  void* optimizer = NULL; /* pterun_optimizer_default, where libpterun_optimize is loaded */
  for (int i = 0; i < n_libs; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s", argv[a + 2 + i]);
    char* entry = strchr(path, '=');
    if (entry != NULL) *entry++ = '\0';
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
      fprintf(stderr, "load_order: dlopen %s: %s\n", path, dlerror());
      return 2;
    }
    fprintf(stderr, "load_order: loaded %s\n", base_name(path));
    /* dlsym also searches the library's dependencies: count the library as
     * the runtime only if the definition lies in the library itself. */
    void* create = dlsym(h, "pterun_registry_create");
    struct link_map* lm = NULL;
    Dl_info where;
    if (create != NULL && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && dladdr(create, &where) != 0 &&
        strcmp(where.dli_fname, lm->l_name) == 0) {
      if (runtime != NULL) {
        printf("FAIL: more than one library defines pterun_registry_create\n");
        failed = 1;
      }
      runtime = h;
    }
    if (optimizer == NULL) optimizer = dlsym(h, "pterun_optimizer_default");
    if (entry != NULL) {
      pt_entry_fn fn;
      void* sym = dlsym(h, entry);
      if (sym == NULL) {
        fprintf(stderr, "load_order: %s does not define %s\n", base_name(path), entry);
        return 2;
      }
      memcpy(&fn, &sym, sizeof fn);
      tables[n_tables++] = fn();
    }
  }
  if (runtime == NULL) {
    fprintf(stderr, "load_order: no library defines pterun_registry_create\n");
    return 2;
  }
#define PT_LOOKUP_(f)                                                                              \
  {                                                                                                \
    void* sym = dlsym(runtime, #f);                                                                \
    if (sym == NULL) {                                                                             \
      fprintf(stderr, "load_order: runtime lacks %s\n", #f);                                       \
      return 2;                                                                                    \
    }                                                                                              \
    memcpy(&p_##f, &sym, sizeof sym);                                                              \
  }
  PT_API_LIST(PT_LOOKUP_)
#undef PT_LOOKUP_

  for (int c = 0; c < n_checks; ++c) {
    char op[512];
    snprintf(op, sizeof op, "%s", checks[c]);
    char* want = strrchr(op, '=');
    if (want == NULL) return 2;
    *want++ = '\0';
    const char* got = p_pterun_component_for_op(op);
    if (got == NULL || strcmp(got, want) != 0) {
      printf("FAIL: pterun_component_for_op(\"%s\") = %s, manifest says %s\n", op,
             got ? got : "NULL", want);
      failed = 1;
    }
  }

  pterun_registry* reg = NULL;
  if (p_pterun_registry_create(NULL, NULL, &reg) != PTERUN_STATUS_OK) return 2;
  /* Folding and fusion, as every other consumer of the package runs it. */
  if (optimizer != NULL) {
    const pterun_optimizer* (*get)(void);
    pterun_status (*set)(pterun_registry*, const pterun_optimizer*);
    void* sym = dlsym(runtime, "pterun_registry_set_optimizer");
    if (sym == NULL) return 2;
    memcpy(&get, &optimizer, sizeof get);
    memcpy(&set, &sym, sizeof set);
    if (set(reg, get()) != PTERUN_STATUS_OK) {
      printf("FAIL: the runtime refuses the shipped optimiser\n");
      failed = 1;
    }
  }
  size_t prim = p_pterun_registry_count(reg);
  size_t expected = prim;
  for (int pass = 0; pass < 2; ++pass) {
    for (int t = 0; t < n_tables; ++t) {
      pterun_status st = p_pterun_registry_add(reg, tables[t]);
      if (st != PTERUN_STATUS_OK) {
        printf("FAIL: adding %s (pass %d): %s\n", tables[t]->component, pass + 1,
               p_pterun_status_name(st));
        failed = 1;
      }
      if (pass == 0) expected += tables[t]->count;
    }
    if (p_pterun_registry_count(reg) != expected) {
      printf("FAIL: after pass %d the registry holds %zu kernels, expected %zu\n", pass + 1,
             p_pterun_registry_count(reg), expected);
      failed = 1;
    }
  }
  size_t n = p_pterun_registry_count(reg);
  size_t dups = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* op_i;
    p_pterun_registry_get(reg, i, &op_i, NULL);
    for (size_t j = i + 1; j < n; ++j) {
      const char* op_j;
      p_pterun_registry_get(reg, j, &op_j, NULL);
      if (strcmp(op_i, op_j) == 0) {
        printf("FAIL: %s registered twice\n", op_i);
        ++dups;
      }
    }
  }
  if (dups) failed = 1;
  /* Per-component counts, printed in a fixed (sorted) order. */
  const char* names[PT_MAX_LIBS + 1];
  size_t counts[PT_MAX_LIBS + 1];
  int n_names = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* comp = NULL;
    p_pterun_registry_get(reg, i, NULL, &comp);
    int k = 0;
    while (k < n_names && strcmp(names[k], comp) != 0) ++k;
    if (k == n_names) {
      if (n_names == PT_MAX_LIBS + 1) return 2;
      names[n_names] = comp;
      counts[n_names++] = 0;
    }
    ++counts[k];
  }
  for (int i = 0; i < n_names; ++i)
    for (int j = i + 1; j < n_names; ++j)
      if (strcmp(names[j], names[i]) < 0) {
        const char* tn = names[i];
        size_t tc = counts[i];
        names[i] = names[j], counts[i] = counts[j];
        names[j] = tn, counts[j] = tc;
      }
  for (int t = 0; t < n_tables; ++t) {
    int k = 0;
    while (k < n_names && strcmp(names[k], tables[t]->component) != 0) ++k;
    size_t have = k < n_names ? counts[k] : 0;
    if (have != tables[t]->count) {
      printf("FAIL: %s has %zu kernels in the registry, its table %zu\n", tables[t]->component,
             have, tables[t]->count);
      failed = 1;
    }
  }
  printf("registry: %zu kernels, each registered once:", n);
  for (int i = 0; i < n_names; ++i) printf(" %s=%zu", names[i], counts[i]);
  printf("\n");
  pterun_status st = pt_run_model(reg, model, method, stdout);
  if (st != PTERUN_STATUS_OK) {
    printf("FAIL: running %s: status %s\n", base_name(model), p_pterun_status_name(st));
    failed = 1;
  }
  p_pterun_registry_destroy(reg);
  return failed;
}
