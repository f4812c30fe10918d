/* pterun run: load a method, bind inputs, execute, report and save outputs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "pterun/compute.h"

static const cli_command_help kHelp = {
    "run", "MODEL.pte|FILE.bpte [options]",
    "Execute one method of a program and report its outputs. A bundled program\n"
    "(.bpte) runs with a test case's inputs unless --input/--inputs is given,\n"
    "and its outputs are compared with the case's expected ones."};

/* Binds a bundled test case's inputs. */
static int bind_bundled(cli_session* s, pterun_method* m, size_t suite, uint64_t bcase) {
  pterun_status st;
  cli_log_reset(&s->log);
  st = pterun_bundle_set_inputs(s->bundle, suite, (size_t)bcase, m);
  if (st != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "cannot bind bundled test case %llu", (unsigned long long)bcase);
  return CLI_EXIT_OK;
}

/* The members of `pterun run --json` before the outputs (docs/cli.md). */
static void run_json_head(cli_json* j, cli_session* s, const char* model, size_t method,
                          const pterun_method* m, double method_ms, const cli_inputs* in,
                          int64_t bundle_case) {
  size_t rt = 0, pl = 0, k;
  pterun_method_memory(m, &rt, &pl);
  cli_json_key(j, "file");
  cli_json_string(j, model);
  cli_json_key(j, "method");
  cli_json_string(j, pterun_program_method_name(s->program, method));
  cli_json_key(j, "program_load_ms");
  cli_json_double(j, s->program_load_ms);
  cli_json_key(j, "method_load_ms");
  cli_json_double(j, method_ms);
  cli_json_key(j, "runtime_bytes");
  cli_json_uint(j, rt);
  cli_json_key(j, "planned_bytes");
  cli_json_uint(j, pl);
  cli_json_key(j, "bundled_case");
  if (bundle_case >= 0)
    cli_json_int(j, bundle_case);
  else
    cli_json_null(j);
  cli_json_key(j, "inputs");
  cli_json_begin_array(j);
  for (k = 0; k < in->count; ++k) {
    const cli_npy* a = &in->arrays[k];
    uint32_t d;
    cli_json_begin_object(j);
    cli_json_key(j, "index");
    cli_json_uint(j, k);
    cli_json_key(j, "source");
    cli_json_string(j, in->sources[k]);
    cli_json_key(j, "dtype");
    cli_json_string(j, a->data != NULL ? pterun_dtype_name(a->dtype) : NULL);
    cli_json_key(j, "shape");
    if (a->data != NULL) {
      cli_json_begin_array(j);
      for (d = 0; d < a->rank; ++d) cli_json_int(j, a->shape[d]);
      cli_json_end_array(j);
    } else {
      cli_json_null(j);
    }
    cli_json_end_object(j);
  }
  cli_json_end_array(j);
}

int cli_cmd_run(int argc, char** argv) {
  const char *model = NULL, *method_name = NULL, *outdir = NULL;
  cli_strlist data = {0}, inputs = {0};
  uint64_t seed = 0, iterations = 1, it, bcase = 0;
  size_t suite = 0;
  int use_bundle = 0, gen = -1; /* -1: no --inputs */
  int quiet = 0, verbose = 0, json = 0, r, rc = CLI_EXIT_FAIL;
  cli_profile_opts prof = {0};
  cli_session s;
  cli_inputs in;
  pterun_method* m = NULL;
  size_t method = 0, k, nout;
  double method_ms = 0, total = 0, best = 0;
  pterun_status st;
  cli_json jw;
  pterun_bundle_check chk;
  const cli_optspec opts[] = {
      CLI_U64("case", &bcase, "N", 0, 0, "bundled test case to run (default 0)"),
      CLI_STRS("data", &data, "FILE.ptd", "external data file (repeatable)"),
      CLI_STR("method", &method_name, "NAME",
              "method to run (default: forward, or the only method)"),
      CLI_STRS("input", &inputs, "FILE.npy", "one per method input, in order (repeatable)"),
      /* the order of CLI_GEN_* */
      CLI_CHOICE(
          "inputs", &gen, "KIND", "zeros|ones|random",
          "generate inputs when no --input is given:\nzeros, ones or random (default random)"),
      CLI_U64("seed", &seed, "N", 0, 0, "seed for --inputs random (default 0)"),
      CLI_STR("output-dir", &outdir, "DIR",
              "write outputs as DIR/output_0.npy, output_1.npy, ...\n(DIR is created if missing)"),
      CLI_U64("iterations", &iterations, "N", 1, 0, "execute N times (default 1)"),
      CLI_OPTS_THREADS(&s),
      CLI_FLAG("json", 0, &json, "print one JSON object (docs/cli.md) instead of text"),
      CLI_FLAG("quiet", 'q', &quiet, "print nothing but errors"), CLI_OPT_VERBOSE(&verbose),
      CLI_OPTS_PROFILE(&prof), CLI_OPTS_END};
  const cli_optspec* const groups[] = {opts, NULL};

  memset(&s, 0, sizeof s);
  memset(&in, 0, sizeof in);
  if ((r = cli_parse(argc, argv, &kHelp, groups, &model, 1, NULL)) != CLI_PARSE_OK) {
    rc = CLI_PARSE_EXIT(r);
    goto done;
  }
  if (model == NULL) {
    rc = cli_usage_error("run", "missing MODEL.pte");
    goto done;
  }
  if (gen >= 0 && inputs.count > 0) {
    rc = cli_usage_error("run", "--inputs and --input cannot be combined");
    goto done;
  }
  if (json) {
    quiet = 1;         /* the JSON document is all of stdout, */
    prof.out = stderr; /* the --profile table goes to stderr */
  }

  /* Fail on an unusable output directory before doing any work. */
  if (outdir != NULL && cli_make_dirs(outdir) != 0) {
    cli_fail(NULL, PTERUN_STATUS_IO_ERROR, "cannot create output directory %s: %s", outdir,
             strerror(errno));
    goto done;
  }
  if (cli_session_open(&s, model, &data, verbose) != CLI_EXIT_OK) goto done;
  prof.quiet = quiet;
  memset(&chk, 0, sizeof chk);
  if ((r = cli_profile_begin(&prof, iterations, &s.profiler)) != CLI_EXIT_OK) {
    rc = r;
    goto done;
  }
  if (cli_pick_method(&s, method_name, &method) != CLI_EXIT_OK) goto done;
  s.release_packed = 1; /* one load of one method */
  if (cli_load_method(&s, method, &m, &method_ms) != CLI_EXIT_OK) goto done;
  use_bundle = s.bundle != NULL && inputs.count == 0 && gen < 0 &&
               pterun_bundle_find_suite(s.bundle, pterun_program_method_name(s.program, method),
                                        &suite) == PTERUN_STATUS_OK;
  if (use_bundle) {
    s.bundle_case = (int64_t)bcase;
    if (bind_bundled(&s, m, suite, bcase) != CLI_EXIT_OK) goto done;
  } else {
    if ((inputs.count > 0 ? cli_inputs_from_files(&s, method, &inputs, &in)
                          : cli_inputs_generate(&s, method, gen < 0 ? CLI_GEN_RANDOM : (cli_gen)gen,
                                                seed, &in)) != CLI_EXIT_OK)
      goto done;
    if (cli_inputs_bind(&s, m, method, &in) != CLI_EXIT_OK) goto done;
  }

  for (it = 0; it < iterations; ++it) {
    double t0, dt;
    /* Planned inputs may share memory with intermediates, so the method can
     * ask for them again before every execute; binding is not timed. */
    if (it > 0 && (use_bundle ? bind_bundled(&s, m, suite, bcase)
                              : cli_inputs_bind(&s, m, method, &in)) != CLI_EXIT_OK)
      goto done;
    cli_log_reset(&s.log);
    t0 = cli_now_ms();
    st = pterun_method_execute(m);
    dt = cli_now_ms() - t0;
    if (st != PTERUN_STATUS_OK) {
      cli_fail(&s.log, st, "execute failed (iteration %llu)", (unsigned long long)it + 1);
      goto done;
    }
    total += dt;
    if (it == 0 || dt < best) best = dt;
  }

  if (!quiet) {
    printf("program %s: loaded in %.3f ms\n", model, s.program_load_ms);
    {
      char e[CLI_ESC_CAP];
      printf("method %s: loaded in %.3f ms\n",
             cli_esc(pterun_program_method_name(s.program, method), e, sizeof e), method_ms);
      {
        size_t rt = 0, pl = 0; /* everything it allocated at load, packed weights included */
        pterun_method_memory(m, &rt, &pl);
        printf("method memory: %zu bytes runtime, %zu bytes planned\n", rt, pl);
      }
      if (use_bundle)
        printf("inputs: bundled test case %llu of method %s\n", (unsigned long long)bcase, e);
    }
    for (k = 0; k < in.count; ++k) {
      char shp[256];
      if (in.arrays[k].data == NULL) {
        printf("input %zu: %s\n", k, in.sources[k]);
        continue;
      }
      cli_npy_shape_str(in.arrays[k].rank, in.arrays[k].shape, shp, sizeof shp);
      printf("input %zu: %s %s from %s\n", k, pterun_dtype_name(in.arrays[k].dtype), shp,
             in.sources[k]);
    }
  }
  nout = pterun_method_output_count(m);
  if (json) {
    cli_json_init(&jw, stdout);
    cli_json_begin_object(&jw);
    run_json_head(&jw, &s, model, method, m, method_ms, &in, use_bundle ? (int64_t)bcase : -1);
    cli_json_key(&jw, "iterations");
    cli_json_uint(&jw, iterations);
    cli_json_key(&jw, "execute_ms");
    cli_json_begin_object(&jw);
    cli_json_key(&jw, "mean");
    cli_json_double(&jw, total / (double)iterations);
    cli_json_key(&jw, "min");
    cli_json_double(&jw, best);
    cli_json_end_object(&jw);
    cli_json_key(&jw, "outputs");
    cli_json_begin_array(&jw);
  }
  for (k = 0; k < nout; ++k) {
    const pterun_value* out = NULL;
    int written = 0;
    char desc[512], path[4096];
    if ((st = pterun_method_output(m, k, &out)) != PTERUN_STATUS_OK || out == NULL) {
      cli_fail(&s.log, st ? st : PTERUN_STATUS_INTERNAL, "cannot read output %zu", k);
      goto done;
    }
    if (out->tag == PTERUN_VALUE_TENSOR && out->u.tensor == NULL) {
      cli_fail(NULL, PTERUN_STATUS_INTERNAL, "output %zu is an empty tensor value", k);
      goto done;
    }
    if (outdir != NULL && cli_output_write(outdir, k, out, &written) != CLI_EXIT_OK) goto done;
    if (written) snprintf(path, sizeof path, "%s/output_%zu.npy", outdir, k);
    if (json) cli_output_json(&jw, k, out, written ? path : NULL);
    if (!quiet) {
      cli_value_describe(out, desc, sizeof desc);
      if (written)
        printf("output %zu: %s -> %s\n", k, desc, path);
      else
        printf("output %zu: %s\n", k, desc);
    }
  }
  if (json) cli_json_end_array(&jw);
  if (!quiet)
    printf("execute: %llu iteration%s, mean %.4f ms, min %.4f ms\n", (unsigned long long)iterations,
           iterations == 1 ? "" : "s", total / (double)iterations, best);
  if (use_bundle) {
    st = pterun_bundle_verify_outputs(s.bundle, suite, bcase, m, PTERUN_BUNDLE_DEFAULT_RTOL,
                                      PTERUN_BUNDLE_DEFAULT_ATOL, &chk);
    if (st != PTERUN_STATUS_OK) {
      cli_fail(&s.log, st, "cannot compare with the bundled expected outputs");
      goto done;
    }
  }
  if (json) {
    char msg[256];
    cli_json_key(&jw, "expected_outputs");
    if (use_bundle) {
      cli_json_begin_object(&jw);
      cli_json_key(&jw, "passed");
      cli_json_bool(&jw, chk.passed);
      cli_json_key(&jw, "max_abs_error");
      cli_json_double(&jw, chk.max_abs_error);
      cli_json_key(&jw, "message");
      cli_json_string(&jw, chk.passed ? NULL : cli_esc(chk.message, msg, sizeof msg));
      cli_json_end_object(&jw);
    } else {
      cli_json_null(&jw);
    }
    cli_json_end_object(&jw);
    cli_json_finish(&jw);
  }
  if (cli_profile_end(&prof, &s, s.profiler) != CLI_EXIT_OK) goto done;
  if (use_bundle) {
    if (!chk.passed) {
      char msg[256];
      cli_esc(chk.message, msg, sizeof msg);
      cli_fail(NULL, PTERUN_STATUS_INPUT_MISMATCH, "bundled test case %llu: %s",
               (unsigned long long)bcase, msg);
      goto done;
    }
    if (!quiet)
      printf("expected outputs: match (max abs error %.3g, ExecuTorch's rtol 1e-5, atol 1e-8)\n",
             chk.max_abs_error);
  }
  if (verbose) {
    /* Which microkernel variant of each compute family ran (the
     * differential test's coverage, tools/difftest): one line on stderr. */
    char variants[4096];
    pterun_compute_variants_report(variants, sizeof variants);
    fprintf(stderr, "pterun: debug: compute variants: %s\n", variants);
  }
  rc = CLI_EXIT_OK;

done:
  pterun_method_destroy(m);
  cli_inputs_free(&in);
  cli_session_close(&s);
  cli_strlist_free(&data);
  cli_strlist_free(&inputs);
  return rc;
}
