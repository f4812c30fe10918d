/* Command-line options of the pterun subcommands, parsed with getopt_long:
 * `--name VALUE`, `--name=VALUE`, unambiguous abbreviations (`--iter 5`),
 * combined short flags (`-qv`), `--` ending the options, and `-h`/`--help`.
 *
 * A command describes its options as a table that binds each one to the
 * variable it sets; the parser converts and range-checks values and prints
 * the usage errors, and the help text is made from the same table. Adding an
 * option is one table row (plus its use). */
#ifndef PTERUN_CLI_OPTS_H_
#define PTERUN_CLI_OPTS_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_opt_type {
  CLI_OPT_FLAG,   /* int* set to 1 */
  CLI_OPT_STR,    /* const char** (borrowed from argv) */
  CLI_OPT_STRS,   /* cli_strlist*: repeatable */
  CLI_OPT_U64,    /* uint64_t* in [min, max] */
  CLI_OPT_F64,    /* double* in [min, max] (finite) */
  CLI_OPT_F32,    /* float* in [min, max] (finite) */
  CLI_OPT_CHOICE, /* int* = index of the value in `choices` ("a|b|c") */
  CLI_OPT_END     /* ends a table */
} cli_opt_type;

typedef struct cli_optspec {
  const char* name; /* long name without the dashes, "iterations" */
  char short_name;  /* 'v', or 0 */
  cli_opt_type type;
  void* dest;
  const char* metavar; /* "N", "FILE.ptd"; NULL for flags */
  const char* help;    /* may hold '\n': continuation lines are indented */
  double min, max;     /* numeric bounds (max 0: none); min 1 reads "a positive number" */
  const char* choices; /* CLI_OPT_CHOICE: "zeros|ones|random" */
} cli_optspec;

#define CLI_OPTS_END {NULL, 0, CLI_OPT_END, NULL, NULL, NULL, 0, 0, NULL}
#define CLI_FLAG(name, sh, dest, help) {name, sh, CLI_OPT_FLAG, dest, NULL, help, 0, 0, NULL}
#define CLI_STR(name, dest, meta, help) {name, 0, CLI_OPT_STR, dest, meta, help, 0, 0, NULL}
#define CLI_STRS(name, dest, meta, help) {name, 0, CLI_OPT_STRS, dest, meta, help, 0, 0, NULL}
#define CLI_U64(name, dest, meta, lo, hi, help)                                                    \
  {name, 0, CLI_OPT_U64, dest, meta, help, lo, hi, NULL}
#define CLI_F64(name, dest, meta, lo, hi, help)                                                    \
  {name, 0, CLI_OPT_F64, dest, meta, help, lo, hi, NULL}
#define CLI_F32(name, dest, meta, lo, hi, help)                                                    \
  {name, 0, CLI_OPT_F32, dest, meta, help, lo, hi, NULL}
#define CLI_CHOICE(name, dest, meta, choices, help)                                                \
  {name, 0, CLI_OPT_CHOICE, dest, meta, help, 0, 0, choices}

/* What a command line is about. */
typedef struct cli_command_help {
  const char* cmd;      /* "bench" */
  const char* synopsis; /* "MODEL.pte [options]" */
  const char* about;    /* paragraph(s) between the usage line and the options */
} cli_command_help;

/* cli_parse results */
#define CLI_PARSE_OK 0
#define CLI_PARSE_HELP 1  /* --help was printed: exit 0 */
#define CLI_PARSE_ERROR 2 /* a usage error was printed: exit 2 */

/** Parses argv[1..argc) (argv[0] is the command name) against `groups`, a
 *  NULL-terminated list of tables each ended by CLI_OPTS_END. Positional
 *  arguments are stored in order into positional[0..max_positional); one
 *  more is the error "unexpected argument". Returns CLI_PARSE_*. */
int cli_parse(int argc, char** argv, const cli_command_help* h, const cli_optspec* const* groups,
              const char** positional, size_t max_positional, size_t* positional_count);

/** The help text made from the tables (what --help prints). */
void cli_print_help(FILE* f, const cli_command_help* h, const cli_optspec* const* groups);

#endif /* PTERUN_CLI_OPTS_H_ */
