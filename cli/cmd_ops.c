/* pterun ops: every operator overload the registry holds, with its component. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"

static const cli_command_help kHelp = {
    "ops", "[--json] [--verbose]",
    "List every operator overload registered by this build (the runtime's prim ops\n"
    "and each kernel library), with the component that provides it."};

typedef struct op_row {
  const char* op; /* "aten::add.out" (owned by the registry) */
  const char* component;
  size_t kernels; /* kernels registered for this op (one per dtype key) */
} op_row;

/* Splits "ns::name.overload" at the '.' after the namespace. */
static void split_op(const char* op, char* name, size_t cap, const char** overload) {
  const char* ns = strstr(op, "::");
  const char* dot = strchr(ns ? ns + 2 : op, '.');
  size_t n = dot ? (size_t)(dot - op) : strlen(op);
  if (n >= cap) n = cap - 1;
  memcpy(name, op, n);
  name[n] = '\0';
  *overload = dot ? dot + 1 : "";
}

static int cmp_rows(const void* a, const void* b) {
  return strcmp(((const op_row*)a)->op, ((const op_row*)b)->op);
}

int cli_cmd_ops(int argc, char** argv) {
  int json = 0, verbose = 0, pr, rc = CLI_EXIT_OK;
  cli_log log;
  pterun_registry* reg = NULL;
  pterun_status st;
  op_row* rows = NULL;
  size_t n, k, nrows = 0;
  const cli_optspec opts[] = {
      CLI_FLAG("json", 0, &json,
               "print a JSON array of {\"name\", \"overload\", \"component\", \"kernels\"}"),
      CLI_OPT_VERBOSE(&verbose), CLI_OPTS_END};
  const cli_optspec* const groups[] = {opts, NULL};

  if ((pr = cli_parse(argc, argv, &kHelp, groups, NULL, 0, NULL)) != CLI_PARSE_OK)
    return CLI_PARSE_EXIT(pr);

  memset(&log, 0, sizeof log);
  log.verbose = verbose;
  if ((st = cli_registry_create(&log, &reg)) != PTERUN_STATUS_OK)
    return cli_fail(&log, st, "cannot set up the operator registry");
  n = pterun_registry_count(reg);
  rows = (op_row*)calloc(n ? n : 1, sizeof *rows);
  if (rows == NULL) {
    pterun_registry_destroy(reg);
    return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  /* One row per (operator, component); several dtype-specialised kernels of
   * one overload are counted, not listed. */
  for (k = 0; k < n; ++k) {
    const char *op = NULL, *component = NULL;
    size_t r;
    if ((st = pterun_registry_get(reg, k, &op, &component)) != PTERUN_STATUS_OK) {
      rc = cli_fail(&log, st, "cannot read registry entry %zu", k);
      goto done;
    }
    if (op == NULL) op = "";
    if (component == NULL) component = "";
    for (r = 0; r < nrows; ++r)
      if (strcmp(rows[r].op, op) == 0 && strcmp(rows[r].component, component) == 0) break;
    if (r == nrows) {
      rows[nrows].op = op;
      rows[nrows].component = component;
      ++nrows;
    }
    rows[r].kernels++;
  }
  qsort(rows, nrows, sizeof *rows, cmp_rows);

  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_array(&j);
    for (k = 0; k < nrows; ++k) {
      char name[256];
      const char* overload;
      split_op(rows[k].op, name, sizeof name, &overload);
      cli_json_begin_object(&j);
      cli_json_key(&j, "name");
      cli_json_string(&j, name);
      cli_json_key(&j, "overload");
      cli_json_string(&j, overload);
      cli_json_key(&j, "component");
      cli_json_string(&j, rows[k].component);
      cli_json_key(&j, "kernels");
      cli_json_uint(&j, rows[k].kernels);
      cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_finish(&j);
  } else {
    for (k = 0; k < nrows; ++k) {
      if (rows[k].kernels > 1)
        printf("%-50s %s (%zu kernels)\n", rows[k].op, rows[k].component, rows[k].kernels);
      else
        printf("%-50s %s\n", rows[k].op, rows[k].component);
    }
    printf("%zu operators, %zu kernels\n", nrows, n);
  }
done:
  free(rows);
  pterun_registry_destroy(reg);
  return rc;
}
