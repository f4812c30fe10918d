/* pterun bench: time repeated executes of one method with generated inputs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench.h"
#include "cli/cli.h"

static const cli_command_help kHelp = {
    "bench", "MODEL.pte [options]",
    "Execute a method repeatedly with random inputs and print timing statistics in\n"
    "milliseconds: the first execute after the load (cold) apart, then min, median,\n"
    "mean, p90, p95, p99, max, standard deviation and runs per second of the timed\n"
    "executes. On a terminal a progress line is shown on stderr."};

/* The progress line: on a terminal only, at most every 100 ms. */
typedef struct progress {
  int on;
  double last_ms;
} progress;

static void progress_show(progress* p, uint64_t done, uint64_t total, double elapsed_s,
                          double duration_s) {
  double now = cli_now_ms();
  if (!p->on || now - p->last_ms < 100.0) return;
  p->last_ms = now;
  if (duration_s > 0)
    fprintf(stderr, "\rbench: %llu runs, %.1f of %.1f s", (unsigned long long)done, elapsed_s,
            duration_s);
  else
    fprintf(stderr, "\rbench: %llu of %llu runs", (unsigned long long)done,
            (unsigned long long)total);
  fflush(stderr);
}

static void progress_clear(progress* p) {
  if (p->on && p->last_ms > 0) fputs("\r\033[K", stderr);
  p->last_ms = 0;
}

/* One timed execute with its inputs re-bound first (untimed, as run does). */
static int timed_execute(cli_session* s, pterun_method* m, size_t method, cli_inputs* in,
                         int rebind, const char* what, uint64_t n, double* ms) {
  pterun_status st;
  double t0;
  if (rebind && cli_inputs_bind(s, m, method, in) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  cli_log_reset(&s->log);
  t0 = cli_now_ms();
  st = pterun_method_execute(m);
  *ms = cli_now_ms() - t0;
  if (st != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "execute failed (%s %llu)", what, (unsigned long long)n);
  return CLI_EXIT_OK;
}

int cli_cmd_bench(int argc, char** argv) {
  const char *model = NULL, *method_name = NULL;
  cli_strlist data = {0};
  uint64_t warmup = 3, iterations = 20, seed = 0, it, cap = 0;
  double duration = 0, t_start, dt;
  int verbose = 0, json = 0, csv = 0, md = 0, r, rc = CLI_EXIT_FAIL;
  cli_profile_opts prof = {0};
  cli_session s;
  cli_inputs in;
  pterun_method* m = NULL;
  size_t method = 0;
  double* samples = NULL;
  long long rss0_kb = -1, hwm_kb;
  cli_bench_result res;
  cli_bench_format fmt = CLI_BENCH_TEXT;
  progress prog = {0, 0};
  const cli_optspec opts[] = {
      CLI_STRS("data", &data, "FILE.ptd", "external data file (repeatable)"),
      CLI_STR("method", &method_name, "NAME",
              "method to time (default: forward, or the only method)"),
      CLI_U64("warmup", &warmup, "N", 0, 1e6, "untimed executes after the cold one (default 3)"),
      CLI_U64("iterations", &iterations, "N", 1, 1e8, "timed executes (default 20)"),
      CLI_F64("duration", &duration, "SECONDS", 0.001, 86400,
              "time executes for SECONDS instead of a count (at least one)"),
      CLI_U64("seed", &seed, "N", 0, 0, "seed for the random inputs (default 0)"),
      CLI_OPTS_THREADS(&s),
      CLI_FLAG("json", 0, &json, "print one JSON object (docs/cli.md) instead of text"),
      CLI_FLAG("csv", 0, &csv, "print a CSV header and one row"),
      CLI_FLAG("md", 0, &md, "print a Markdown table"),
      CLI_OPT_VERBOSE(&verbose),
      CLI_OPTS_PROFILE(&prof),
      CLI_OPTS_END};
  const cli_optspec* const groups[] = {opts, NULL};

  memset(&s, 0, sizeof s);
  memset(&in, 0, sizeof in);
  memset(&res, 0, sizeof res);
  if ((r = cli_parse(argc, argv, &kHelp, groups, &model, 1, NULL)) != CLI_PARSE_OK) {
    rc = CLI_PARSE_EXIT(r);
    goto done;
  }
  if (model == NULL) {
    rc = cli_usage_error("bench", "missing MODEL.pte");
    goto done;
  }
  if (json + csv + md > 1) {
    rc = cli_usage_error("bench", "--json, --csv and --md cannot be combined");
    goto done;
  }
  fmt = json ? CLI_BENCH_JSON : csv ? CLI_BENCH_CSV : md ? CLI_BENCH_MD : CLI_BENCH_TEXT;
  if (fmt != CLI_BENCH_TEXT) prof.out = stderr; /* stdout holds the report alone */
  prog.on = isatty(fileno(stderr));

  cap = duration > 0 ? 1024 : iterations;
  samples = (double*)malloc((size_t)cap * sizeof *samples);
  if (samples == NULL) {
    cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  rss0_kb = cli_proc_status_kb("VmRSS"); /* the process before the model */
  if (cli_session_open(&s, model, &data, verbose) != CLI_EXIT_OK) goto done;
  if ((r = cli_profile_begin(&prof, duration > 0 ? 1000 : iterations, &s.profiler)) !=
      CLI_EXIT_OK) {
    rc = r;
    goto done;
  }
  if (cli_pick_method(&s, method_name, &method) != CLI_EXIT_OK) goto done;
  s.release_packed = 1; /* one load of one method */
  if (cli_load_method(&s, method, &m, &res.method_load_ms) != CLI_EXIT_OK) goto done;
  if (cli_inputs_generate(&s, method, CLI_GEN_RANDOM, seed, &in) != CLI_EXIT_OK) goto done;
  if (cli_inputs_bind(&s, m, method, &in) != CLI_EXIT_OK) goto done;

  /* cold: the first execute after the load (first touch of the planned
   * memory, caches cold), reported apart from the statistics */
  if (timed_execute(&s, m, method, &in, 0, "cold run", 1, &res.cold_ms) != CLI_EXIT_OK) goto done;
  for (it = 0; it < warmup; ++it)
    if (timed_execute(&s, m, method, &in, 1, "warmup", it + 1, &dt) != CLI_EXIT_OK) goto done;
  if (s.profiler != NULL) pterun_profiler_reset(s.profiler); /* cold and warmup untold */

  t_start = cli_now_ms();
  for (it = 0;; ++it) {
    double elapsed_s = (cli_now_ms() - t_start) / 1e3;
    if (duration > 0 ? (it > 0 && elapsed_s >= duration) : it >= iterations) break;
    if (it == cap) { /* --duration: more room, between executes */
      double* more =
          cap < (uint64_t)1 << 40 ? (double*)realloc(samples, 2 * cap * sizeof *more) : NULL;
      if (more == NULL) {
        cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory for %llu samples",
                 (unsigned long long)cap * 2);
        goto done;
      }
      samples = more;
      cap *= 2;
    }
    if (timed_execute(&s, m, method, &in, 1, "iteration", it + 1, &samples[it]) != CLI_EXIT_OK)
      goto done;
    progress_show(&prog, it + 1, iterations, elapsed_s, duration);
  }
  res.timed_s = (cli_now_ms() - t_start) / 1e3;
  progress_clear(&prog);

  res.file = model;
  res.method = pterun_program_method_name(s.program, method);
  res.threads = s.pool != NULL ? pterun_threadpool_size(s.pool) : 1;
  res.program_load_ms = s.program_load_ms;
  pterun_method_memory(m, &res.runtime_bytes, &res.planned_bytes);
  res.warmup = warmup;
  res.runs = it;
  res.duration_s = duration;
  cli_bench_stats_compute(samples, (size_t)it, &res.stats);
  /* Peak resident memory against the process before loading: what the
   * model costs, comparable to other runtimes' growth (bench/compare.py). */
  hwm_kb = cli_proc_status_kb("VmHWM");
  res.rss_before_mb = rss0_kb >= 0 ? (double)rss0_kb / 1024.0 : -1;
  res.rss_peak_mb = hwm_kb >= 0 ? (double)hwm_kb / 1024.0 : -1;
  cli_bench_report(stdout, fmt, &res);
  if (cli_profile_end(&prof, &s, s.profiler) != CLI_EXIT_OK) goto done;
  rc = CLI_EXIT_OK;

done:
  progress_clear(&prog);
  pterun_method_destroy(m);
  cli_inputs_free(&in);
  cli_session_close(&s);
  cli_strlist_free(&data);
  free(samples);
  return rc;
}
