/* pterun verify: run every test case of a bundled program (.bpte) and
 * compare the outputs with the expected ones by ExecuTorch's rule. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"

static const cli_command_help kHelp = {
    "verify", "FILE.bpte [options]",
    "Run every test case of every method of a bundled program and compare the\n"
    "outputs with the expected ones (ExecuTorch's rule: float32/float64/float16\n"
    "within atol + rtol * |output|, NaN equal to NaN; other dtypes exactly).\n"
    "Exit status 1 names the first case that failed."};

typedef struct case_result {
  size_t suite, test_case;
  int ran;                 /* 0: could not run (status says why) */
  pterun_status status;    /* of load/bind/execute/compare */
  pterun_bundle_check chk; /* when ran */
  double ms;
} case_result;

/* Loads the suite's method once and runs each of its cases. */
static int run_suite(cli_session* s, size_t suite, double rtol, double atol, case_result* res,
                     size_t* nres) {
  const char* name = NULL;
  size_t cases = 0, method, c;
  pterun_method* m = NULL;
  pterun_status st = pterun_bundle_suite(s->bundle, suite, &name, &cases);
  char safe[128];
  if (st != PTERUN_STATUS_OK) return cli_fail(&s->log, st, "cannot read test suite %zu", suite);
  cli_esc(name, safe, sizeof safe);
  if (pterun_program_find_method(s->program, name, &method) != PTERUN_STATUS_OK)
    return cli_fail(NULL, PTERUN_STATUS_NOT_FOUND,
                    "test suite %zu names method '%s', which the "
                    "program does not have",
                    suite, safe);
  if (cli_load_method(s, method, &m, NULL) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  for (c = 0; c < cases; ++c) {
    case_result* r = &res[(*nres)++];
    double t0;
    memset(r, 0, sizeof *r);
    r->suite = suite;
    r->test_case = c;
    cli_log_reset(&s->log);
    st = pterun_bundle_set_inputs(s->bundle, suite, c, m);
    if (st == PTERUN_STATUS_OK) {
      t0 = cli_now_ms();
      st = pterun_method_execute(m);
      r->ms = cli_now_ms() - t0;
    }
    if (st == PTERUN_STATUS_OK)
      st = pterun_bundle_verify_outputs(s->bundle, suite, c, m, rtol, atol, &r->chk);
    r->status = st;
    r->ran = st == PTERUN_STATUS_OK;
    if (!r->ran) {
      /* keep the library's reason with the case */
      size_t n = (size_t)snprintf(r->chk.message, sizeof r->chk.message, "%s%s",
                                  pterun_status_name(st), s->log.len ? ": " : "");
      if (n < sizeof r->chk.message) { /* then as much of the log as fits */
        size_t room = sizeof r->chk.message - n - 1, len = strlen(s->log.errors);
        if (len > room) len = room;
        memcpy(r->chk.message + n, s->log.errors, len);
        r->chk.message[n + len] = '\0';
      }
      cli_log_reset(&s->log);
    }
  }
  pterun_method_destroy(m);
  return CLI_EXIT_OK;
}

int cli_cmd_verify(int argc, char** argv) {
  const char *model = NULL, *only = NULL;
  cli_strlist data = {0};
  double rtol = PTERUN_BUNDLE_DEFAULT_RTOL, atol = PTERUN_BUNDLE_DEFAULT_ATOL;
  int json = 0, verbose = 0, r, rc = CLI_EXIT_FAIL;
  cli_session s;
  case_result* res = NULL;
  size_t nres = 0, total = 0, suites, k, failed = 0;
  const case_result* first_bad = NULL;
  char name[128];
  const cli_optspec opts[] = {
      CLI_STR("method", &only, "NAME", "only this method's test suite"),
      CLI_F64("rtol", &rtol, "X", 0, 0, "relative tolerance (default 1e-5, as ExecuTorch)"),
      CLI_F64("atol", &atol, "X", 0, 0, "absolute tolerance (default 1e-8, as ExecuTorch)"),
      CLI_STRS("data", &data, "FILE.ptd", "external data file (repeatable)"),
      CLI_FLAG("json", 0, &json, "print one JSON object instead of the table"),
      CLI_OPT_VERBOSE(&verbose),
      CLI_OPTS_END};
  const cli_optspec* const groups[] = {opts, NULL};

  memset(&s, 0, sizeof s);
  if ((r = cli_parse(argc, argv, &kHelp, groups, &model, 1, NULL)) != CLI_PARSE_OK) {
    rc = CLI_PARSE_EXIT(r);
    goto done;
  }
  if (model == NULL) {
    rc = cli_usage_error("verify", "missing FILE.bpte");
    goto done;
  }
  if (cli_session_open(&s, model, &data, verbose) != CLI_EXIT_OK) goto done;
  if (s.bundle == NULL) {
    cli_fail(NULL, PTERUN_STATUS_INVALID_ARGUMENT,
             "%s is a program without test cases, not a bundled program (BP08)", model);
    goto done;
  }
  suites = pterun_bundle_suite_count(s.bundle);
  for (k = 0; k < suites; ++k) {
    size_t n = 0;
    const char* nm = NULL;
    if (pterun_bundle_suite(s.bundle, k, &nm, &n) == PTERUN_STATUS_OK &&
        (only == NULL || strcmp(nm, only) == 0))
      total += n;
  }
  if (only != NULL && pterun_bundle_find_suite(s.bundle, only, NULL) != PTERUN_STATUS_OK) {
    cli_esc(only, name, sizeof name);
    cli_fail(NULL, PTERUN_STATUS_NOT_FOUND, "the bundle has no test suite for method '%s'", name);
    goto done;
  }
  res = (case_result*)calloc(total ? total : 1, sizeof *res);
  if (res == NULL) {
    cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (k = 0; k < suites; ++k) {
    const char* nm = NULL;
    if (pterun_bundle_suite(s.bundle, k, &nm, NULL) != PTERUN_STATUS_OK) continue;
    if (only != NULL && strcmp(nm, only) != 0) continue;
    if (run_suite(&s, k, rtol, atol, res, &nres) != CLI_EXIT_OK) goto done;
  }
  for (k = 0; k < nres; ++k)
    if (!res[k].ran || !res[k].chk.passed) {
      failed++;
      if (first_bad == NULL) first_bad = &res[k];
    }

  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "file");
    cli_json_string(&j, model);
    cli_json_key(&j, "rtol");
    cli_json_double(&j, rtol);
    cli_json_key(&j, "atol");
    cli_json_double(&j, atol);
    cli_json_key(&j, "cases");
    cli_json_begin_array(&j);
    for (k = 0; k < nres; ++k) {
      const case_result* c = &res[k];
      const char* nm = NULL;
      (void)pterun_bundle_suite(s.bundle, c->suite, &nm, NULL);
      cli_json_begin_object(&j);
      cli_json_key(&j, "method");
      cli_json_string(&j, nm);
      cli_json_key(&j, "case");
      cli_json_uint(&j, c->test_case);
      cli_json_key(&j, "passed");
      cli_json_bool(&j, c->ran && c->chk.passed);
      cli_json_key(&j, "status");
      cli_json_string(&j, pterun_status_name(c->status));
      cli_json_key(&j, "outputs_compared");
      cli_json_uint(&j, c->chk.outputs_compared);
      cli_json_key(&j, "max_abs_error");
      cli_json_double(&j, c->chk.max_abs_error);
      cli_json_key(&j, "max_rel_error");
      cli_json_double(&j, c->chk.max_rel_error);
      cli_json_key(&j, "mismatched");
      cli_json_uint(&j, c->chk.mismatched);
      cli_json_key(&j, "message");
      cli_json_string(&j, c->chk.message);
      cli_json_key(&j, "ms");
      cli_json_double(&j, c->ms);
      cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_key(&j, "passed");
    cli_json_uint(&j, nres - failed);
    cli_json_key(&j, "failed");
    cli_json_uint(&j, failed);
    cli_json_end_object(&j);
    cli_json_finish(&j);
  } else {
    printf("bundled program %s: %zu test suite%s, %zu case%s (rtol %g, atol %g)\n", model, suites,
           suites == 1 ? "" : "s", nres, nres == 1 ? "" : "s", rtol, atol);
    printf("%-24s %5s  %-6s %8s %12s %12s  %s\n", "method", "case", "result", "outputs",
           "max abs err", "max rel err", "detail");
    for (k = 0; k < nres; ++k) {
      const case_result* c = &res[k];
      const char* nm = NULL;
      char detail[256];
      (void)pterun_bundle_suite(s.bundle, c->suite, &nm, NULL);
      cli_esc(nm, name, sizeof name);
      cli_esc(c->chk.message, detail, sizeof detail);
      printf("%-24s %5zu  %-6s %8zu %12.3g %12.3g  %s\n", name, c->test_case,
             c->ran && c->chk.passed ? "pass"
             : c->ran                ? "FAIL"
                                     : "ERROR",
             c->chk.outputs_compared, c->chk.max_abs_error, c->chk.max_rel_error, detail);
    }
    printf("%zu passed, %zu failed\n", nres - failed, failed);
  }
  if (first_bad != NULL) {
    const char* nm = NULL;
    char detail[256];
    (void)pterun_bundle_suite(s.bundle, first_bad->suite, &nm, NULL);
    cli_esc(nm, name, sizeof name);
    cli_esc(first_bad->chk.message, detail, sizeof detail);
    cli_fail(NULL, first_bad->ran ? PTERUN_STATUS_INPUT_MISMATCH : first_bad->status,
             "%zu of %zu test cases failed; first: method '%s' case %zu: %s", failed, nres, name,
             first_bad->test_case, detail);
    goto done;
  }
  rc = CLI_EXIT_OK;

done:
  free(res);
  cli_session_close(&s);
  cli_strlist_free(&data);
  return rc;
}
