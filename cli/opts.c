/* Option tables parsed with getopt_long (see opts.h). */
#include "cli/opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define LONG_BASE 256 /* getopt_long's value for long option k: LONG_BASE + k */
#define HELP_WIDTH 28 /* column of the help text */

typedef struct table {
  const cli_optspec** spec; /* flattened groups */
  size_t n;
} table;

static int flatten(const cli_optspec* const* groups, table* t) {
  size_t n = 0, g, k;
  for (g = 0; groups[g] != NULL; ++g)
    for (k = 0; groups[g][k].type != CLI_OPT_END; ++k) ++n;
  t->spec = (const cli_optspec**)malloc((n ? n : 1) * sizeof *t->spec);
  if (t->spec == NULL) return -1;
  t->n = 0;
  for (g = 0; groups[g] != NULL; ++g)
    for (k = 0; groups[g][k].type != CLI_OPT_END; ++k) t->spec[t->n++] = &groups[g][k];
  return 0;
}

static int has_arg(const cli_optspec* o) {
  return o->type != CLI_OPT_FLAG;
}

/* "needs a number from 1 to 4096" / "a positive number" / "a number" */
static int bad_number(const char* cmd, const cli_optspec* o, const char* v) {
  if (o->max > 0)
    return cli_usage_error(cmd, "--%s needs a number from %g to %g, got '%s'", o->name, o->min,
                           o->max, v);
  if (o->min == 1 && o->type == CLI_OPT_U64)
    return cli_usage_error(cmd, "--%s needs a positive number, got '%s'", o->name, v);
  if (o->min > 0 || o->type != CLI_OPT_U64)
    return cli_usage_error(cmd, "--%s needs a number >= %g, got '%s'", o->name, o->min, v);
  return cli_usage_error(cmd, "--%s needs a number, got '%s'", o->name, v);
}

static int choice(const char* cmd, const cli_optspec* o, const char* v) {
  const char* c = o->choices;
  int index = 0;
  char list[256];
  size_t used = 0;
  while (*c) {
    const char* bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (strlen(v) == len && strncmp(c, v, len) == 0) {
      *(int*)o->dest = index;
      return CLI_PARSE_OK;
    }
    if (used + len + 6 < sizeof list) {
      /* "a, b or c" for the message */
      const char* sep = used == 0 ? "" : bar ? ", " : " or ";
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%.*s", sep, (int)len, c);
    }
    ++index;
    c = bar ? bar + 1 : c + len;
  }
  list[used] = '\0';
  cli_usage_error(cmd, "--%s must be %s, not '%s'", o->name, list, v);
  return CLI_PARSE_ERROR;
}

static int apply(const char* cmd, const cli_optspec* o, const char* v) {
  switch (o->type) {
    case CLI_OPT_FLAG: *(int*)o->dest = 1; return CLI_PARSE_OK;
    case CLI_OPT_STR: *(const char**)o->dest = v; return CLI_PARSE_OK;
    case CLI_OPT_STRS:
      if (cli_strlist_push((cli_strlist*)o->dest, v) != 0) {
        cli_usage_error(cmd, "out of memory");
        return CLI_PARSE_ERROR;
      }
      return CLI_PARSE_OK;
    case CLI_OPT_U64: {
      uint64_t x;
      if (cli_parse_u64(v, &x) != 0 || (double)x < o->min || (o->max > 0 && (double)x > o->max)) {
        bad_number(cmd, o, v);
        return CLI_PARSE_ERROR;
      }
      *(uint64_t*)o->dest = x;
      return CLI_PARSE_OK;
    }
    case CLI_OPT_F64:
    case CLI_OPT_F32: {
      char* end = NULL;
      double d;
      errno = 0;
      d = strtod(v, &end);
      if (end == v || *end != '\0' || errno != 0 || !isfinite(d) || d < o->min ||
          (o->max > 0 && d > o->max)) {
        bad_number(cmd, o, v);
        return CLI_PARSE_ERROR;
      }
      if (o->type == CLI_OPT_F64)
        *(double*)o->dest = d;
      else
        *(float*)o->dest = (float)d;
      return CLI_PARSE_OK;
    }
    case CLI_OPT_CHOICE: return choice(cmd, o, v);
    default: return CLI_PARSE_ERROR;
  }
}

/* An unrecognised `--xyz[=v]`: ambiguous abbreviation or unknown. */
static int unknown_long(const char* cmd, const table* t, const char* arg) {
  const char* name = arg + 2;
  size_t len = strcspn(name, "="), k, hits = 0;
  char list[256];
  size_t used = 0;
  for (k = 0; k < t->n; ++k)
    if (strncmp(t->spec[k]->name, name, len) == 0) {
      ++hits;
      if (used + strlen(t->spec[k]->name) + 5 < sizeof list)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s", used ? ", " : "",
                                 t->spec[k]->name);
    }
  if (hits > 1) {
    list[used] = '\0';
    return cli_usage_error(cmd, "option '%.*s' is ambiguous (%s)", (int)(len + 2), arg, list);
  }
  return cli_usage_error(cmd, "unknown option '%s'", arg);
}

int cli_parse(int argc, char** argv, const cli_command_help* h, const cli_optspec* const* groups,
              const char** positional, size_t max_positional, size_t* positional_count) {
  table t = {NULL, 0};
  struct option* longs = NULL;
  char shorts[128];
  size_t ns = 0, k, npos = 0;
  int rc = CLI_PARSE_OK, c, done = 0;

  if (flatten(groups, &t) != 0 ||
      (longs = (struct option*)calloc(t.n + 2, sizeof *longs)) == NULL) {
    free(t.spec);
    cli_usage_error(h->cmd, "out of memory");
    return CLI_PARSE_ERROR;
  }
  /* '-': positional arguments come back in order (as value 1) whatever
   * POSIXLY_CORRECT says; ':': a missing value is reported as ':'. */
  shorts[ns++] = '-';
  shorts[ns++] = ':';
  shorts[ns++] = 'h';
  for (k = 0; k < t.n; ++k) {
    const cli_optspec* o = t.spec[k];
    longs[k].name = o->name;
    longs[k].has_arg = has_arg(o) ? required_argument : no_argument;
    longs[k].flag = NULL;
    longs[k].val = LONG_BASE + (int)k;
    if (o->short_name != 0 && ns + 3 < sizeof shorts) {
      shorts[ns++] = o->short_name;
      if (has_arg(o)) shorts[ns++] = ':';
    }
  }
  shorts[ns] = '\0';
  longs[t.n].name = "help";
  longs[t.n].has_arg = no_argument;
  longs[t.n].val = 'h';

  opterr = 0; /* the messages below, in pterun's words */
  optind = 0; /* a full reset (glibc and musl) */
  while (!done && rc == CLI_PARSE_OK) {
    const cli_optspec* o = NULL;
    c = getopt_long(argc, argv, shorts, longs, NULL);
    switch (c) {
      case -1:
        /* after `--`: everything left is positional */
        done = 1;
        for (; optind < argc && rc == CLI_PARSE_OK; ++optind) {
          if (npos >= max_positional) {
            cli_usage_error(h->cmd, "unexpected argument '%s'", argv[optind]);
            rc = CLI_PARSE_ERROR;
          } else {
            positional[npos++] = argv[optind];
          }
        }
        continue;
      case 1:
        if (npos >= max_positional) {
          cli_usage_error(h->cmd, "unexpected argument '%s'", optarg);
          rc = CLI_PARSE_ERROR;
        } else {
          positional[npos++] = optarg;
        }
        continue;
      case 'h':
        cli_print_help(stdout, h, groups);
        rc = CLI_PARSE_HELP;
        continue;
      case ':':
        if (optopt >= LONG_BASE)
          cli_usage_error(h->cmd, "option --%s needs a value", t.spec[optopt - LONG_BASE]->name);
        else
          cli_usage_error(h->cmd, "option -%c needs a value", optopt);
        rc = CLI_PARSE_ERROR;
        continue;
      case '?':
        if (optopt >= LONG_BASE)
          cli_usage_error(h->cmd, "option --%s takes no value", t.spec[optopt - LONG_BASE]->name);
        else if (optopt == 'h')
          cli_usage_error(h->cmd, "option --help takes no value");
        else if (optopt != 0)
          cli_usage_error(h->cmd, "unknown option '-%c'", optopt);
        else
          unknown_long(h->cmd, &t, argv[optind - 1]);
        rc = CLI_PARSE_ERROR;
        continue;
      default: break;
    }
    if (c >= LONG_BASE && (size_t)(c - LONG_BASE) < t.n) {
      o = t.spec[c - LONG_BASE];
    } else {
      for (k = 0; k < t.n && o == NULL; ++k)
        if (t.spec[k]->short_name == c) o = t.spec[k];
    }
    if (o == NULL) {
      cli_usage_error(h->cmd, "unknown option '-%c'", c);
      rc = CLI_PARSE_ERROR;
    } else {
      rc = apply(h->cmd, o, optarg);
    }
  }
  free(longs);
  free(t.spec);
  if (positional_count != NULL) *positional_count = npos;
  return rc;
}

/* Prints `text` with every line after the first indented to `col`. */
static void print_wrapped(FILE* f, const char* text, int col) {
  const char* p = text;
  while (*p) {
    const char* nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (p != text) fprintf(f, "%*s", col, "");
    fprintf(f, "%.*s\n", (int)len, p);
    p += len + (nl != NULL);
  }
}

static void print_option(FILE* f, char sh, const char* name, const char* meta, const char* help) {
  char left[96];
  int n;
  if (sh)
    n = snprintf(left, sizeof left, "  -%c, --%s%s%s", sh, name, meta ? " " : "", meta ? meta : "");
  else
    n = snprintf(left, sizeof left, "      --%s%s%s", name, meta ? " " : "", meta ? meta : "");
  if (n + 1 >= HELP_WIDTH) {
    fprintf(f, "%s\n%*s", left, HELP_WIDTH, "");
  } else {
    fprintf(f, "%-*s", HELP_WIDTH, left);
  }
  print_wrapped(f, help ? help : "", HELP_WIDTH);
}

void cli_print_help(FILE* f, const cli_command_help* h, const cli_optspec* const* groups) {
  size_t g, k;
  fprintf(f, "usage: pterun %s %s\n", h->cmd, h->synopsis);
  if (h->about && h->about[0]) fprintf(f, "\n%s\n", h->about);
  fprintf(f, "\noptions:\n");
  for (g = 0; groups[g] != NULL; ++g)
    for (k = 0; groups[g][k].type != CLI_OPT_END; ++k) {
      const cli_optspec* o = &groups[g][k];
      print_option(f, o->short_name, o->name, o->metavar, o->help);
    }
  print_option(f, 'h', "help", NULL, "print this help and exit");
}
