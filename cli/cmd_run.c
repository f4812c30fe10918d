/* pterun run: load a method, bind inputs, execute, report and save outputs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "pterun/compute.h"

static void run_usage(FILE* f) {
  fprintf(f,
          "usage: pterun run MODEL.pte|FILE.bpte [options]\n"
          "\n"
          "Execute one method of a program and report its outputs. A bundled program\n"
          "(.bpte) runs with a test case's inputs unless --input/--inputs is given,\n"
          "and its outputs are compared with the case's expected ones.\n"
          "\n"
          "  --case N               bundled test case to run (default 0)\n"
          "  --data FILE.ptd        external data file (repeatable)\n"
          "  --method NAME          method to run (default: forward, or the only method)\n"
          "  --input FILE.npy       one per method input, in order (repeatable)\n"
          "  --inputs KIND          generate inputs when no --input is given:\n"
          "                         zeros, ones or random (default random)\n"
          "  --seed N               seed for --inputs random (default 0)\n"
          "  --output-dir DIR       write outputs as DIR/output_0.npy, output_1.npy, ...\n"
          "                         (DIR is created if missing)\n"
          "  --iterations N         execute N times (default 1)\n" CLI_THREADS_HELP
          "  --quiet                print nothing but errors\n"
          "  --verbose              echo the library's log messages\n" CLI_PROFILE_USAGE);
}

/* mkdir -p: creates each missing component of `path`. */
static int make_dirs(const char* path) {
  char buf[4096];
  size_t n = strlen(path), k;
  if (n == 0 || n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (k = 1; k <= n; ++k) {
    if (buf[k] == '/' || buf[k] == '\0') {
      char c = buf[k];
      buf[k] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
      buf[k] = c;
    }
  }
  {
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
      errno = ENOTDIR;
      return -1;
    }
  }
  return 0;
}

/* Writes one tensor as .npy in row-major order. bfloat16 (which numpy lacks)
 * is written as float32; quantized integer types as their storage integers. */
static int write_tensor(const char* path, const pterun_tensor* t, size_t index) {
  char err[CLI_NPY_ERR_SIZE];
  int32_t dtype = t->dtype;
  size_t itemsize = pterun_dtype_size(t->dtype), numel = (size_t)t->numel, k;
  void* buf = NULL;
  const void* data = t->data;
  pterun_status st;

  switch (t->dtype) {
    case PTERUN_DTYPE_QINT8: dtype = PTERUN_DTYPE_I8; break;
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8: dtype = PTERUN_DTYPE_U8; break;
    case PTERUN_DTYPE_QINT32: dtype = PTERUN_DTYPE_I32; break;
    case PTERUN_DTYPE_BITS16: dtype = PTERUN_DTYPE_U16; break;
    default: break;
  }
  if (cli_npy_descr(dtype) == NULL && dtype != PTERUN_DTYPE_BF16)
    return cli_fail(NULL, PTERUN_STATUS_NOT_SUPPORTED,
                    "output %zu: dtype %s cannot be written as .npy", index,
                    pterun_dtype_name(t->dtype));
  if (numel > 0 && data == NULL)
    return cli_fail(NULL, PTERUN_STATUS_INTERNAL, "output %zu has no data", index);
  if (!pterun_tensor_is_contiguous(t) && numel > 1) {
    int64_t dst_st[PTERUN_MAX_RANK];
    buf = malloc(numel * itemsize);
    if (buf == NULL) return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    pterun_dim_order_strides((uint32_t)(t->rank), t->sizes, NULL, dst_st);
    cli_strided_copy(buf, dst_st, t->data, t->strides, t->rank, t->sizes, itemsize);
    data = buf;
  }
  if (dtype == PTERUN_DTYPE_BF16) {
    float* f = (float*)malloc(numel ? numel * sizeof(float) : 1);
    if (f == NULL) {
      free(buf);
      return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (k = 0; k < numel; ++k) f[k] = (float)cli_elem_get(PTERUN_DTYPE_BF16, data, k);
    free(buf);
    buf = f;
    data = f;
    dtype = PTERUN_DTYPE_F32;
    itemsize = sizeof(float);
  }
  st = cli_npy_write_file(path, dtype, t->rank, t->sizes, data ? data : "", numel * itemsize, err,
                          sizeof err);
  free(buf);
  if (st != PTERUN_STATUS_OK) return cli_fail(NULL, st, "output %zu: %s", index, err);
  return CLI_EXIT_OK;
}

static int write_output(const char* dir, size_t i, const pterun_value* v, int* written) {
  char path[4096], err[CLI_NPY_ERR_SIZE];
  pterun_status st = PTERUN_STATUS_OK;
  int n = snprintf(path, sizeof path, "%s/output_%zu.npy", dir, i);
  *written = 0;
  if (n < 0 || (size_t)n >= sizeof path)
    return cli_fail(NULL, PTERUN_STATUS_INVALID_ARGUMENT, "output path too long");
  switch (v->tag) {
    case PTERUN_VALUE_TENSOR:
      if (write_tensor(path, v->u.tensor, i) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
      *written = 1;
      return CLI_EXIT_OK;
    /* scalars become 0-d arrays */
    case PTERUN_VALUE_INT:
      st = cli_npy_write_file(path, PTERUN_DTYPE_I64, 0, NULL, &v->u.i, 8, err, sizeof err);
      break;
    case PTERUN_VALUE_DOUBLE:
      st = cli_npy_write_file(path, PTERUN_DTYPE_F64, 0, NULL, &v->u.d, 8, err, sizeof err);
      break;
    case PTERUN_VALUE_BOOL: {
      uint8_t b = v->u.b != 0;
      st = cli_npy_write_file(path, PTERUN_DTYPE_BOOL, 0, NULL, &b, 1, err, sizeof err);
      break;
    }
    default: return CLI_EXIT_OK; /* None, strings and lists have no .npy form; summary says so */
  }
  if (st != PTERUN_STATUS_OK) return cli_fail(NULL, st, "output %zu: %s", i, err);
  *written = 1;
  return CLI_EXIT_OK;
}

/* "float32 (2, 3) [0.5, 1, ...]" for a tensor, the value for a scalar. */
static void describe_value(const pterun_value* v, char* buf, size_t cap) {
  size_t used = 0, k, shown;
  char shp[256], e[64];
  int n;
  switch (v->tag) {
    case PTERUN_VALUE_TENSOR: {
      const pterun_tensor* t = v->u.tensor;
      int64_t st[PTERUN_MAX_RANK], idx[PTERUN_MAX_RANK] = {0};
      cli_npy_shape_str(t->rank, t->sizes, shp, sizeof shp);
      n = snprintf(buf, cap, "%s %s", pterun_dtype_name(t->dtype), shp);
      if (n < 0 || (size_t)n >= cap || t->data == NULL || !cli_elem_supported(t->dtype)) return;
      used = (size_t)n;
      memcpy(st, t->strides, sizeof st);
      shown = t->numel < 6 ? (size_t)t->numel : 6;
      for (k = 0; k < shown && used < cap; ++k) {
        /* leading elements in logical (row-major) order, via the strides */
        int64_t off = 0;
        int d;
        for (d = 0; d < (int)t->rank; ++d) off += idx[d] * st[d];
        cli_elem_format(t->dtype, t->data, (size_t)off, e, sizeof e);
        n = snprintf(buf + used, cap - used, "%s%s", k ? ", " : " [", e);
        if (n < 0) return;
        used += (size_t)n;
        for (d = (int)t->rank - 1; d >= 0; --d) {
          if (++idx[d] < t->sizes[d]) break;
          idx[d] = 0;
        }
      }
      if (used < cap && shown > 0)
        snprintf(buf + used, cap - used, "%s]", (size_t)t->numel > shown ? ", ..." : "");
      return;
    }
    case PTERUN_VALUE_INT: snprintf(buf, cap, "int %lld", (long long)v->u.i); return;
    case PTERUN_VALUE_DOUBLE: snprintf(buf, cap, "double %g", v->u.d); return;
    case PTERUN_VALUE_BOOL: snprintf(buf, cap, "bool %s", v->u.b ? "true" : "false"); return;
    default: snprintf(buf, cap, "%s (not saved)", pterun_value_tag_name(v->tag)); return;
  }
}

/* Binds a bundled test case's inputs. */
static int bind_bundled(cli_session* s, pterun_method* m, size_t suite, uint64_t bcase) {
  pterun_status st;
  cli_log_reset(&s->log);
  st = pterun_bundle_set_inputs(s->bundle, suite, (size_t)bcase, m);
  if (st != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "cannot bind bundled test case %llu", (unsigned long long)bcase);
  return CLI_EXIT_OK;
}

int cli_cmd_run(int argc, char** argv) {
  const char *model = NULL, *method_name = NULL, *outdir = NULL, *gen_name = NULL, *v;
  cli_strlist data = {0}, inputs = {0};
  uint64_t seed = 0, iterations = 1, it, bcase = 0;
  size_t suite = 0;
  int use_bundle = 0;
  int quiet = 0, verbose = 0, i, r, rc = CLI_EXIT_FAIL;
  cli_gen gen = CLI_GEN_RANDOM;
  cli_profile_opts prof = {0};
  cli_session s;
  cli_inputs in;
  pterun_method* m = NULL;
  size_t method = 0, k, nout;
  double method_ms = 0, total = 0, best = 0;
  pterun_status st;

  memset(&s, 0, sizeof s);
  memset(&in, 0, sizeof in);
  for (i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (cli_is_help(a)) {
      run_usage(stdout);
      rc = CLI_EXIT_OK;
      goto done;
    }
    if ((r = cli_profile_parse(argc, argv, &i, "run", &prof)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
    } else if ((r = cli_opt(argc, argv, &i, "run", "--data", &v)) != 0 ||
               (r = cli_opt(argc, argv, &i, "run", "--input", &v)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
      if (cli_strlist_push(strncmp(a, "--data", 6) == 0 ? &data : &inputs, v) != 0) {
        cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
      }
    } else if ((r = cli_opt(argc, argv, &i, "run", "--method", &method_name)) != 0 ||
               (r = cli_opt(argc, argv, &i, "run", "--output-dir", &outdir)) != 0 ||
               (r = cli_opt(argc, argv, &i, "run", "--inputs", &gen_name)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
    } else if ((r = cli_opt_threads(argc, argv, &i, "run", &s)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
    } else if ((r = cli_opt(argc, argv, &i, "run", "--seed", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &seed) != 0) {
        rc = r < 0 ? CLI_EXIT_USAGE : cli_usage_error("run", "--seed needs a number, got '%s'", v);
        goto done;
      }
    } else if ((r = cli_opt(argc, argv, &i, "run", "--case", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &bcase) != 0) {
        rc = r < 0 ? CLI_EXIT_USAGE : cli_usage_error("run", "--case needs a number, got '%s'", v);
        goto done;
      }
    } else if ((r = cli_opt(argc, argv, &i, "run", "--iterations", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &iterations) != 0 || iterations == 0) {
        rc = r < 0 ? CLI_EXIT_USAGE
                   : cli_usage_error("run", "--iterations needs a positive number, got '%s'", v);
        goto done;
      }
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      quiet = 1;
    } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
      verbose = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      rc = cli_usage_error("run", "unknown option '%s'", a);
      goto done;
    } else if (model == NULL) {
      model = a;
    } else {
      rc = cli_usage_error("run", "unexpected argument '%s'", a);
      goto done;
    }
  }
  if (model == NULL) {
    rc = cli_usage_error("run", "missing MODEL.pte");
    goto done;
  }
  if (gen_name != NULL) {
    if (strcmp(gen_name, "zeros") == 0)
      gen = CLI_GEN_ZEROS;
    else if (strcmp(gen_name, "ones") == 0)
      gen = CLI_GEN_ONES;
    else if (strcmp(gen_name, "random") == 0)
      gen = CLI_GEN_RANDOM;
    else {
      rc = cli_usage_error("run", "--inputs must be zeros, ones or random, not '%s'", gen_name);
      goto done;
    }
    if (inputs.count > 0) {
      rc = cli_usage_error("run", "--inputs and --input cannot be combined");
      goto done;
    }
  }

  /* Fail on an unusable output directory before doing any work. */
  if (outdir != NULL && make_dirs(outdir) != 0) {
    cli_fail(NULL, PTERUN_STATUS_IO_ERROR, "cannot create output directory %s: %s", outdir,
             strerror(errno));
    goto done;
  }
  if (cli_session_open(&s, model, &data, verbose) != CLI_EXIT_OK) goto done;
  prof.quiet = quiet;
  if ((r = cli_profile_begin(&prof, iterations, &s.profiler)) != CLI_EXIT_OK) {
    rc = r;
    goto done;
  }
  if (cli_pick_method(&s, method_name, &method) != CLI_EXIT_OK) goto done;
  if (cli_load_method(&s, method, &m, &method_ms) != CLI_EXIT_OK) goto done;
  use_bundle = s.bundle != NULL && inputs.count == 0 && gen_name == NULL &&
               pterun_bundle_find_suite(s.bundle, pterun_program_method_name(s.program, method),
                                        &suite) == PTERUN_STATUS_OK;
  if (use_bundle) {
    s.bundle_case = (int64_t)bcase;
    if (bind_bundled(&s, m, suite, bcase) != CLI_EXIT_OK) goto done;
  } else {
    if ((inputs.count > 0 ? cli_inputs_from_files(&s, method, &inputs, &in)
                          : cli_inputs_generate(&s, method, gen, seed, &in)) != CLI_EXIT_OK)
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
  for (k = 0; k < nout; ++k) {
    const pterun_value* out = NULL;
    int written = 0;
    char desc[512];
    if ((st = pterun_method_output(m, k, &out)) != PTERUN_STATUS_OK || out == NULL) {
      cli_fail(&s.log, st ? st : PTERUN_STATUS_INTERNAL, "cannot read output %zu", k);
      goto done;
    }
    if (out->tag == PTERUN_VALUE_TENSOR && out->u.tensor == NULL) {
      cli_fail(NULL, PTERUN_STATUS_INTERNAL, "output %zu is an empty tensor value", k);
      goto done;
    }
    if (outdir != NULL && write_output(outdir, k, out, &written) != CLI_EXIT_OK) goto done;
    if (!quiet) {
      describe_value(out, desc, sizeof desc);
      if (written)
        printf("output %zu: %s -> %s/output_%zu.npy\n", k, desc, outdir, k);
      else
        printf("output %zu: %s\n", k, desc);
    }
  }
  if (!quiet)
    printf("execute: %llu iteration%s, mean %.4f ms, min %.4f ms\n", (unsigned long long)iterations,
           iterations == 1 ? "" : "s", total / (double)iterations, best);
  if (cli_profile_end(&prof, &s, s.profiler) != CLI_EXIT_OK) goto done;
  if (use_bundle) {
    pterun_bundle_check chk;
    st = pterun_bundle_verify_outputs(s.bundle, suite, bcase, m, PTERUN_BUNDLE_DEFAULT_RTOL,
                                      PTERUN_BUNDLE_DEFAULT_ATOL, &chk);
    if (st != PTERUN_STATUS_OK) {
      cli_fail(&s.log, st, "cannot compare with the bundled expected outputs");
      goto done;
    }
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
