/* The release checks' consumer application (tools/release_check.py builds it
 * with find_package, with pkg-config and with -Wl,--as-needed). It adds every
 * kernel component to a registry and runs a program; built with
 * -DPT_RUNTIME_ONLY it adds none, and loading the method must then fail with
 * OPERATOR_MISSING, the log naming the component to link.
 * "pt_components.h" is generated from packaging/components.json by the check:
 * it includes each kernel component's header and defines
 * PT_KERNEL_ENTRIES(X) as X(<entry function>) for each, and
 * PT_BACKEND_ENTRIES(X) likewise for the delegate backends, and
 * PT_OPTIMIZER_ENTRY as the load-time optimiser's getter.
 * Usage: consumer MODEL.pte [METHOD]   Exit: 0 ok, 1 a pterun status, 2 usage. */
#include <stdio.h>

#include "common/run_model.h"
#include "pt_components.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s MODEL.pte [METHOD]\n", argv[0]);
    return 2;
  }
  pterun_registry* reg = NULL;
  pterun_status st = pterun_registry_create(NULL, NULL, &reg);
#ifndef PT_RUNTIME_ONLY
#define PT_ADD_(entry)                                                                             \
  if (st == PTERUN_STATUS_OK) st = pterun_registry_add(reg, entry());
  PT_KERNEL_ENTRIES(PT_ADD_)
#undef PT_ADD_
#ifdef PT_OPTIMIZER_ENTRY
  if (st == PTERUN_STATUS_OK) st = pterun_registry_set_optimizer(reg, PT_OPTIMIZER_ENTRY());
#endif
#ifdef PT_BACKEND_ENTRIES
#define PT_ADD_BACKEND_(entry)                                                                     \
  if (st == PTERUN_STATUS_OK) st = pterun_registry_add_backend(reg, entry());
  PT_BACKEND_ENTRIES(PT_ADD_BACKEND_)
#undef PT_ADD_BACKEND_
#endif
#endif
  if (st == PTERUN_STATUS_OK)
    st = pt_run_model(reg, argv[1], argc > 2 ? argv[2] : "forward", stdout);
  pterun_registry_destroy(reg);
  if (st != PTERUN_STATUS_OK) {
    printf("status %s\n", pterun_status_name(st));
    return 1;
  }
  return 0;
}
