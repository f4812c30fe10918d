/* pterun bench: time repeated executes of one method with generated inputs. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void bench_usage(FILE* f) {
  fprintf(f,
          "usage: pterun bench MODEL.pte [options]\n"
          "\n"
          "Execute a method repeatedly with random inputs and print timing statistics\n"
          "(mean, median, p90, min, max) in milliseconds.\n"
          "\n"
          "  --data FILE.ptd   external data file (repeatable)\n"
          "  --method NAME     method to time (default: forward, or the only method)\n"
          "  --warmup N        untimed executes first (default 3)\n"
          "  --iterations N    timed executes (default 20)\n"
          "  --seed N          seed for the random inputs (default 0)\n"
          "  --threads N       threads per operator (default: the CPUs this process may use)\n"
          "  --no-fusion       keep operator chains unfused (load-time fusion off)\n"
          "  --no-prepare      skip kernels' load-time preparation (weights unpacked)\n"
          "  --verbose         echo the library's log messages\n" CLI_PROFILE_USAGE);
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static double percentile(const double* sorted, size_t n, double p) {
  size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

int cli_cmd_bench(int argc, char** argv) {
  const char *model = NULL, *method_name = NULL, *v;
  cli_strlist data = {0};
  uint64_t warmup = 3, iterations = 20, seed = 0, it;
  int verbose = 0, i, r, rc = CLI_EXIT_FAIL;
  cli_profile_opts prof = {0};
  cli_session s;
  cli_inputs in;
  pterun_method* m = NULL;
  size_t method = 0;
  double method_ms = 0, sum = 0, *samples = NULL, median;
  long long rss0_kb = -1;
  pterun_status st;

  memset(&s, 0, sizeof s);
  memset(&in, 0, sizeof in);
  for (i = 1; i < argc; ++i) {
    const char* a = argv[i];
    uint64_t* num = NULL;
    if (cli_is_help(a)) {
      bench_usage(stdout);
      rc = CLI_EXIT_OK;
      goto done;
    }
    if ((r = cli_profile_parse(argc, argv, &i, "bench", &prof)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
      continue;
    }
    if ((r = cli_opt(argc, argv, &i, "bench", "--data", &v)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
      if (cli_strlist_push(&data, v) != 0) {
        cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
      }
      continue;
    }
    if ((r = cli_opt(argc, argv, &i, "bench", "--method", &method_name)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
      continue;
    }
    if ((r = cli_opt_threads(argc, argv, &i, "bench", &s)) != 0) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
      continue;
    }
    if ((r = cli_opt(argc, argv, &i, "bench", "--warmup", &v)) != 0)
      num = &warmup;
    else if ((r = cli_opt(argc, argv, &i, "bench", "--iterations", &v)) != 0)
      num = &iterations;
    else if ((r = cli_opt(argc, argv, &i, "bench", "--seed", &v)) != 0)
      num = &seed;
    if (num != NULL) {
      if (r < 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
      if (cli_parse_u64(v, num) != 0 || (num == &iterations && iterations == 0) ||
          (num == &iterations && iterations > 100000000u)) {
        rc = cli_usage_error("bench", "bad number '%s' for %s", v, a);
        goto done;
      }
    } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
      verbose = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      rc = cli_usage_error("bench", "unknown option '%s'", a);
      goto done;
    } else if (model == NULL) {
      model = a;
    } else {
      rc = cli_usage_error("bench", "unexpected argument '%s'", a);
      goto done;
    }
  }
  if (model == NULL) {
    rc = cli_usage_error("bench", "missing MODEL.pte");
    goto done;
  }

  samples = (double*)malloc((size_t)iterations * sizeof *samples);
  if (samples == NULL) {
    cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  rss0_kb = cli_proc_status_kb("VmRSS"); /* the process before the model */
  if (cli_session_open(&s, model, &data, verbose) != CLI_EXIT_OK) goto done;
  if ((r = cli_profile_begin(&prof, iterations, &s.profiler)) != CLI_EXIT_OK) {
    rc = r;
    goto done;
  }
  if (cli_pick_method(&s, method_name, &method) != CLI_EXIT_OK) goto done;
  if (cli_load_method(&s, method, &m, &method_ms) != CLI_EXIT_OK) goto done;
  if (cli_inputs_generate(&s, method, CLI_GEN_RANDOM, seed, &in) != CLI_EXIT_OK) goto done;
  if (cli_inputs_bind(&s, m, method, &in) != CLI_EXIT_OK) goto done;

  for (it = 0; it < warmup + iterations; ++it) {
    double t0, dt;
    /* inputs are re-bound (untimed) before every execute, as run does */
    if (it > 0 && cli_inputs_bind(&s, m, method, &in) != CLI_EXIT_OK) goto done;
    if (it == warmup && s.profiler != NULL) pterun_profiler_reset(s.profiler); /* warmup untold */
    cli_log_reset(&s.log);
    t0 = cli_now_ms();
    st = pterun_method_execute(m);
    dt = cli_now_ms() - t0;
    if (st != PTERUN_STATUS_OK) {
      cli_fail(&s.log, st, "execute failed (%s %llu)", it < warmup ? "warmup" : "iteration",
               (unsigned long long)(it < warmup ? it + 1 : it - warmup + 1));
      goto done;
    }
    if (it >= warmup) {
      samples[it - warmup] = dt;
      sum += dt;
    }
  }
  qsort(samples, (size_t)iterations, sizeof *samples, cmp_double);
  median = iterations % 2 ? samples[iterations / 2]
                          : (samples[iterations / 2 - 1] + samples[iterations / 2]) / 2.0;
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
  }
  printf(
      "%llu warmup, %llu iterations (ms): mean %.4f  median %.4f  p90 %.4f  min %.4f  max %.4f\n",
      (unsigned long long)warmup, (unsigned long long)iterations, sum / (double)iterations, median,
      percentile(samples, (size_t)iterations, 90.0), samples[0], samples[iterations - 1]);
  {
    /* Peak resident memory against the process before loading: what the
     * model costs, comparable to other runtimes' growth (bench/compare.py). */
    long long hwm_kb = cli_proc_status_kb("VmHWM");
    if (rss0_kb >= 0 && hwm_kb >= 0)
      printf("resident memory: %.1f MB before load, peak %.1f MB (growth %.1f MB)\n",
             (double)rss0_kb / 1024.0, (double)hwm_kb / 1024.0,
             (double)(hwm_kb > rss0_kb ? hwm_kb - rss0_kb : 0) / 1024.0);
  }
  if (cli_profile_end(&prof, &s, s.profiler) != CLI_EXIT_OK) goto done;
  rc = CLI_EXIT_OK;

done:
  pterun_method_destroy(m);
  cli_inputs_free(&in);
  cli_session_close(&s);
  cli_strlist_free(&data);
  free(samples);
  return rc;
}
