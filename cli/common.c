/* Log capture, error reporting, argument helpers and session loading. */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- log capture ------------------------------------------------------------ */

static void log_cb(void* ctx, pterun_log_level level, const char* message) {
  cli_log* log = (cli_log*)ctx;
  if (message == NULL) message = "";
  if (log->verbose) fprintf(stderr, "pterun: %s: %s\n", pterun_log_level_str(level), message);
  if (level >= PTERUN_LOG_ERROR && log->len + 1 < sizeof log->errors) {
    int n = snprintf(log->errors + log->len, sizeof log->errors - log->len, "%s%s",
                     log->len ? "; " : "", message);
    if (n > 0) log->len += (size_t)n;
    if (log->len >= sizeof log->errors) log->len = sizeof log->errors - 1;
  }
}

pterun_logger cli_logger(cli_log* log) {
  pterun_logger l;
  l.fn = log_cb;
  l.ctx = log;
  /* Without --verbose only errors matter: they go into the failure line. */
  l.min_level = log->verbose ? PTERUN_LOG_DEBUG : PTERUN_LOG_ERROR;
  return l;
}

void cli_log_reset(cli_log* log) {
  log->len = 0;
  log->errors[0] = '\0';
}

/* Keeps the failure report on one line whatever the messages contain: a
 * line break and the indentation around it become one space. */
static void one_line(char* s) {
  char *start = s, *out = s;
  while (*s) {
    if (*s == '\n' || *s == '\r') {
      while (out > start && (out[-1] == ' ' || out[-1] == '\t')) --out;
      while (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t') ++s;
      if (out > start && *s) *out++ = ' ';
    } else {
      *out++ = *s++;
    }
  }
  *out = '\0';
}

const char* cli_esc(const char* s, char* buf, size_t cap) {
  pterun_escape_text(s != NULL ? s : "", buf, cap);
  return buf;
}

int cli_fail(cli_log* log, pterun_status st, const char* fmt, ...) {
  char raw[1024], what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  one_line(raw);
  /* Names quoted from the file or paths given by the user: never raw bytes
   * on the terminal (the captured log messages are escaped by libpterun). */
  pterun_escape_text(raw, what, sizeof what);
  if (log != NULL && log->len > 0) {
    one_line(log->errors);
    fprintf(stderr, "pterun: error: %s: %s (%s)\n", what, log->errors, pterun_status_name(st));
    cli_log_reset(log);
  } else {
    fprintf(stderr, "pterun: error: %s (%s)\n", what, pterun_status_name(st));
  }
  return CLI_EXIT_FAIL;
}

int cli_usage_error(const char* cmd, const char* fmt, ...) {
  va_list ap;
  fprintf(stderr, "pterun%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'pterun %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
  return CLI_EXIT_USAGE;
}

/* ---- arguments ----------------------------------------------------------------- */

int cli_parse_u64(const char* s, uint64_t* out) {
  uint64_t v = 0;
  if (s == NULL || *s == '\0') return -1;
  for (; *s; ++s) {
    unsigned d;
    if (*s < '0' || *s > '9') return -1;
    d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int cli_strlist_push(cli_strlist* l, const char* s) {
  if (l->count == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4;
    const char** p = (const char**)realloc((void*)l->items, cap * sizeof *p);
    if (p == NULL) return -1;
    l->items = p;
    l->cap = cap;
  }
  l->items[l->count++] = s;
  return 0;
}

void cli_strlist_free(cli_strlist* l) {
  free((void*)l->items);
  memset(l, 0, sizeof *l);
}

/* ---- sessions ---------------------------------------------------------------- */

int cli_is_bundle_file(const char* path) {
  unsigned char head[8];
  FILE* f = fopen(path, "rb");
  size_t n = f != NULL ? fread(head, 1, sizeof head, f) : 0;
  if (f != NULL) fclose(f);
  return pterun_is_bundled_program(head, n);
}

int cli_session_open(cli_session* s, const char* model, const cli_strlist* data, int verbose) {
  pterun_load_options opts = PTERUN_LOAD_OPTIONS_INIT;
  pterun_status st;
  double t0;
  size_t k;

  uint64_t threads = s->threads; /* --threads, ..., parsed before the session opens */
  int no_fusion = s->no_fusion, no_prepare = s->no_prepare;
  memset(s, 0, sizeof *s);
  s->threads = threads;
  s->no_fusion = no_fusion;
  s->no_prepare = no_prepare;
  s->bundle_case = -1;
  s->log.verbose = verbose;
  opts.logger = cli_logger(&s->log);

  if ((st = cli_registry_create(&s->log, &s->registry)) != PTERUN_STATUS_OK)
    return cli_fail(&s->log, st, "cannot set up the operator registry");

  t0 = cli_now_ms();
  if (cli_is_bundle_file(model)) {
    st = pterun_bundle_load_file(model, PTERUN_FILE_MMAP, &opts, &s->bundle);
    if (st == PTERUN_STATUS_OK) st = pterun_bundle_program(s->bundle, &opts, &s->program);
  } else {
    st = pterun_program_load_file(model, PTERUN_FILE_MMAP, &opts, &s->program);
  }
  s->program_load_ms = cli_now_ms() - t0;
  if (st != PTERUN_STATUS_OK) return cli_fail(&s->log, st, "cannot load program %s", model);

  if (data != NULL && data->count > 0) {
    s->data = (pterun_data**)calloc(data->count, sizeof *s->data);
    if (s->data == NULL) return cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < data->count; ++k) {
      st = pterun_data_load_file(data->items[k], PTERUN_FILE_MMAP, &opts, &s->data[k]);
      if (st != PTERUN_STATUS_OK)
        return cli_fail(&s->log, st, "cannot load data file %s", data->items[k]);
      s->data_count = k + 1;
    }
  }
  return CLI_EXIT_OK;
}

void cli_session_close(cli_session* s) {
  size_t k;
  for (k = 0; k < s->data_count; ++k) pterun_data_destroy(s->data[k]);
  free(s->data);
  pterun_program_destroy(s->program);
  pterun_bundle_destroy(s->bundle); /* after the program that borrows it */
  pterun_registry_destroy(s->registry);
  pterun_threadpool_destroy(s->pool);
  pterun_profiler_destroy(s->profiler);
  memset(s, 0, sizeof *s);
}

int cli_pick_method(cli_session* s, const char* requested, size_t* index_out) {
  size_t n = pterun_program_method_count(s->program), k;
  char names[512];
  size_t used = 0;

  if (requested == NULL) {
    if (pterun_program_find_method(s->program, "forward", index_out) == PTERUN_STATUS_OK)
      return CLI_EXIT_OK;
    if (n == 1) {
      *index_out = 0;
      return CLI_EXIT_OK;
    }
  } else if (pterun_program_find_method(s->program, requested, index_out) == PTERUN_STATUS_OK) {
    return CLI_EXIT_OK;
  }
  cli_log_reset(&s->log);
  names[0] = '\0';
  for (k = 0; k < n && used + 1 < sizeof names; ++k) {
    char e[CLI_ESC_CAP];
    int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                     cli_esc(pterun_program_method_name(s->program, k), e, sizeof e));
    if (w < 0) break;
    used += (size_t)w;
    if (used >= sizeof names) used = sizeof names - 1;
  }
  if (requested == NULL)
    return cli_fail(NULL, PTERUN_STATUS_NOT_FOUND,
                    "no method 'forward' and %zu methods to choose from (%s); use --method", n,
                    names);
  return cli_fail(NULL, PTERUN_STATUS_NOT_FOUND, "no method '%s' (methods: %s)", requested,
                  n ? names : "none");
}

int cli_session_pool(cli_session* s) {
  if (s->pool == NULL && s->threads != 1) {
    pterun_threadpool_options po = PTERUN_THREADPOOL_OPTIONS_INIT;
    pterun_status st;
    po.threads = (size_t)s->threads;
    st = pterun_threadpool_create(&po, &s->pool);
    if (st != PTERUN_STATUS_OK)
      return cli_fail(NULL, st, "cannot start %llu threads", (unsigned long long)s->threads);
  }
  return CLI_EXIT_OK;
}

int cli_load_method(cli_session* s, size_t index, pterun_method** out, double* ms_out) {
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_status st;
  const char* name = pterun_program_method_name(s->program, index);
  double t0;

  if (cli_session_pool(s) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  mo.threadpool = s->pool;
  mo.registry = s->registry;
  mo.data = (const pterun_data* const*)s->data;
  mo.data_count = s->data_count;
  mo.logger = cli_logger(&s->log);
  mo.profiler = s->profiler;
  mo.no_fusion = s->no_fusion;
  mo.no_kernel_prepare = s->no_prepare;
  mo.release_packed_constants = s->release_packed;
  cli_log_reset(&s->log);
  t0 = cli_now_ms();
  st = pterun_method_load(s->program, name, &mo, out);
  if (ms_out) *ms_out = cli_now_ms() - t0;
  if (st != PTERUN_STATUS_OK) {
    *out = NULL;
    return cli_fail(&s->log, st, "cannot load method '%s'", name);
  }
  return CLI_EXIT_OK;
}

/* ---- misc ------------------------------------------------------------------- */

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

long long cli_proc_status_kb(const char* field) {
  char line[256];
  long long kb = -1;
  size_t n = strlen(field);
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      kb = strtoll(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return kb;
}

const char* cli_dynamism_name(int dynamism) {
  switch (dynamism) {
    case PTERUN_SHAPE_STATIC: return "static";
    case PTERUN_SHAPE_BOUNDED: return "bounded";
    case PTERUN_SHAPE_UNBOUNDED: return "unbounded";
    default: return "unknown";
  }
}

void cli_u8_tuple(uint32_t rank, const uint8_t* v, char* buf, size_t cap) {
  int64_t tmp[PTERUN_MAX_RANK];
  uint32_t k;
  for (k = 0; k < rank && k < PTERUN_MAX_RANK; ++k) tmp[k] = v[k];
  cli_npy_shape_str(rank, tmp, buf, cap);
}
