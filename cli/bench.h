/* pterun bench: the measured figures and their report formats. */
#ifndef PTERUN_CLI_BENCH_H_
#define PTERUN_CLI_BENCH_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Statistics of the timed executes, in milliseconds. */
typedef struct cli_bench_stats {
  double min, median, mean, p90, p95, p99, max, std; /* std: sample (n - 1) */
  double runs_per_second;                            /* 1000 / mean */
} cli_bench_stats;

/** Sorts `ms` in place and computes the statistics of its n >= 1 samples. */
void cli_bench_stats_compute(double* ms, size_t n, cli_bench_stats* out);

typedef enum cli_bench_format {
  CLI_BENCH_TEXT,
  CLI_BENCH_JSON,
  CLI_BENCH_CSV,
  CLI_BENCH_MD
} cli_bench_format;

/** Everything a bench report holds (docs/cli.md: `pterun bench --json`). */
typedef struct cli_bench_result {
  const char* file;
  const char* method;
  size_t threads;
  double program_load_ms, method_load_ms;
  size_t runtime_bytes, planned_bytes;
  uint64_t warmup, runs;
  double duration_s; /* --duration asked for, 0 without */
  double timed_s;    /* the timed executes' wall time */
  double cold_ms;    /* the first execute after the load */
  cli_bench_stats stats;
  double rss_before_mb, rss_peak_mb; /* -1 where unknown */
} cli_bench_result;

void cli_bench_report(FILE* f, cli_bench_format fmt, const cli_bench_result* r);

#endif /* PTERUN_CLI_BENCH_H_ */
