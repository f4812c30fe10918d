/* pterun bench: statistics and the text, JSON, CSV and Markdown reports. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/cli.h"
#include "cli/json.h"

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static double percentile(const double* sorted, size_t n, double p) {
  size_t rank = (size_t)ceil(p / 100.0 * (double)n);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

void cli_bench_stats_compute(double* ms, size_t n, cli_bench_stats* out) {
  double sum = 0, ss = 0, mean;
  size_t k;
  memset(out, 0, sizeof *out);
  if (n == 0) return;
  qsort(ms, n, sizeof *ms, cmp_double);
  for (k = 0; k < n; ++k) sum += ms[k];
  mean = sum / (double)n;
  for (k = 0; k < n; ++k) ss += (ms[k] - mean) * (ms[k] - mean);
  out->min = ms[0];
  out->max = ms[n - 1];
  out->mean = mean;
  out->median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2.0;
  out->p90 = percentile(ms, n, 90.0);
  out->p95 = percentile(ms, n, 95.0);
  out->p99 = percentile(ms, n, 99.0);
  out->std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
  out->runs_per_second = mean > 0 ? 1000.0 / mean : 0.0;
}

/* The statistics in report order: name, value. */
#define STAT_COUNT 8
static void stat_list(const cli_bench_stats* s, const char** names, double* v) {
  static const char* kNames[STAT_COUNT] = {"min", "median", "mean", "p90",
                                           "p95", "p99",    "max",  "std"};
  double vals[STAT_COUNT] = {s->min, s->median, s->mean, s->p90, s->p95, s->p99, s->max, s->std};
  memcpy(names, kNames, sizeof kNames);
  memcpy(v, vals, sizeof vals);
}

static void report_text(FILE* f, const cli_bench_result* r) {
  const cli_bench_stats* s = &r->stats;
  char e[CLI_ESC_CAP];
  fprintf(f, "program %s: loaded in %.3f ms\n", r->file, r->program_load_ms);
  fprintf(f, "method %s: loaded in %.3f ms\n", cli_esc(r->method, e, sizeof e), r->method_load_ms);
  fprintf(f, "method memory: %zu bytes runtime, %zu bytes planned\n", r->runtime_bytes,
          r->planned_bytes);
  fprintf(f, "threads: %zu\n", r->threads);
  fprintf(f, "cold (first execute): %.4f ms\n", r->cold_ms);
  /* "mean .. median .. p90 .. min .. max" as before: bench/compare*.py read it */
  fprintf(f,
          "%llu warmup, %llu iterations (ms): mean %.4f  median %.4f  p90 %.4f  min %.4f  max %.4f"
          "  p95 %.4f  p99 %.4f  std %.4f\n",
          (unsigned long long)r->warmup, (unsigned long long)r->runs, s->mean, s->median, s->p90,
          s->min, s->max, s->p95, s->p99, s->std);
  fprintf(f, "throughput: %.2f runs/s (%.3f s timed)\n", s->runs_per_second, r->timed_s);
  if (r->rss_before_mb >= 0 && r->rss_peak_mb >= 0)
    fprintf(f, "resident memory: %.1f MB before load, peak %.1f MB (growth %.1f MB)\n",
            r->rss_before_mb, r->rss_peak_mb,
            r->rss_peak_mb > r->rss_before_mb ? r->rss_peak_mb - r->rss_before_mb : 0.0);
}

static void report_json(FILE* f, const cli_bench_result* r) {
  const char* names[STAT_COUNT];
  double v[STAT_COUNT];
  cli_json j;
  int k;
  stat_list(&r->stats, names, v);
  cli_json_init(&j, f);
  cli_json_begin_object(&j);
  cli_json_key(&j, "file");
  cli_json_string(&j, r->file);
  cli_json_key(&j, "method");
  cli_json_string(&j, r->method);
  cli_json_key(&j, "threads");
  cli_json_uint(&j, r->threads);
  cli_json_key(&j, "program_load_ms");
  cli_json_double(&j, r->program_load_ms);
  cli_json_key(&j, "method_load_ms");
  cli_json_double(&j, r->method_load_ms);
  cli_json_key(&j, "runtime_bytes");
  cli_json_uint(&j, r->runtime_bytes);
  cli_json_key(&j, "planned_bytes");
  cli_json_uint(&j, r->planned_bytes);
  cli_json_key(&j, "warmup");
  cli_json_uint(&j, r->warmup);
  cli_json_key(&j, "runs");
  cli_json_uint(&j, r->runs);
  cli_json_key(&j, "duration_s");
  if (r->duration_s > 0)
    cli_json_double(&j, r->duration_s);
  else
    cli_json_null(&j);
  cli_json_key(&j, "timed_s");
  cli_json_double(&j, r->timed_s);
  cli_json_key(&j, "cold_ms");
  cli_json_double(&j, r->cold_ms);
  cli_json_key(&j, "ms");
  cli_json_begin_object(&j);
  for (k = 0; k < STAT_COUNT; ++k) {
    cli_json_key(&j, names[k]);
    cli_json_double(&j, v[k]);
  }
  cli_json_end_object(&j);
  cli_json_key(&j, "runs_per_second");
  cli_json_double(&j, r->stats.runs_per_second);
  cli_json_key(&j, "rss_before_mb");
  if (r->rss_before_mb >= 0)
    cli_json_double(&j, r->rss_before_mb);
  else
    cli_json_null(&j);
  cli_json_key(&j, "rss_peak_mb");
  if (r->rss_peak_mb >= 0)
    cli_json_double(&j, r->rss_peak_mb);
  else
    cli_json_null(&j);
  cli_json_end_object(&j);
  cli_json_finish(&j);
}

/* A CSV field: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE* f, const char* s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A Markdown table cell: '|' and line breaks escaped. */
static void md_cell(FILE* f, const char* s) {
  for (; *s; ++s) {
    if (*s == '|')
      fputs("\\|", f);
    else if (*s == '\n' || *s == '\r')
      fputc(' ', f);
    else
      fputc(*s, f);
  }
}

static void report_table(FILE* f, const cli_bench_result* r, int md) {
  const char* names[STAT_COUNT];
  double v[STAT_COUNT];
  char e[CLI_ESC_CAP];
  int k;
  stat_list(&r->stats, names, v);
  cli_esc(r->method, e, sizeof e);
  if (md) {
    fputs("| file | method | threads | runs | cold ms", f);
    for (k = 0; k < STAT_COUNT; ++k) fprintf(f, " | %s ms", names[k]);
    fputs(" | runs/s |\n|---|---|--:|--:|--:", f);
    for (k = 0; k < STAT_COUNT; ++k) fputs("|--:", f);
    fputs("|--:|\n| ", f);
    md_cell(f, r->file);
    fputs(" | ", f);
    md_cell(f, e);
    fprintf(f, " | %zu | %llu | %.4f", r->threads, (unsigned long long)r->runs, r->cold_ms);
    for (k = 0; k < STAT_COUNT; ++k) fprintf(f, " | %.4f", v[k]);
    fprintf(f, " | %.2f |\n", r->stats.runs_per_second);
    return;
  }
  fputs(
      "file,method,threads,warmup,runs,program_load_ms,method_load_ms,runtime_bytes,"
      "planned_bytes,cold_ms",
      f);
  for (k = 0; k < STAT_COUNT; ++k) fprintf(f, ",%s_ms", names[k]);
  fputs(",runs_per_second\n", f);
  csv_field(f, r->file);
  fputc(',', f);
  csv_field(f, e);
  fprintf(f, ",%zu,%llu,%llu,%.4f,%.4f,%zu,%zu,%.4f", r->threads, (unsigned long long)r->warmup,
          (unsigned long long)r->runs, r->program_load_ms, r->method_load_ms, r->runtime_bytes,
          r->planned_bytes, r->cold_ms);
  for (k = 0; k < STAT_COUNT; ++k) fprintf(f, ",%.6f", v[k]);
  fprintf(f, ",%.3f\n", r->stats.runs_per_second);
}

void cli_bench_report(FILE* f, cli_bench_format fmt, const cli_bench_result* r) {
  switch (fmt) {
    case CLI_BENCH_JSON: report_json(f, r); break;
    case CLI_BENCH_CSV: report_table(f, r, 0); break;
    case CLI_BENCH_MD: report_table(f, r, 1); break;
    default: report_text(f, r); break;
  }
}
