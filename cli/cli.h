/* Shared pieces of the pterun command-line tool. */
#ifndef PTERUN_CLI_CLI_H_
#define PTERUN_CLI_CLI_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/npy.h"
#include "cli/opts.h"
#include "pterun/pterun.h"
#include "pterun/threadpool.h"

/* Exit codes: success, a failure while doing the work, a bad command line. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* ---- subcommands (cmd_*.c); argv[0] is the command name ------------------- */
int cli_cmd_inspect(int argc, char** argv);
int cli_cmd_run(int argc, char** argv);
int cli_cmd_bench(int argc, char** argv);
int cli_cmd_ops(int argc, char** argv);
int cli_cmd_verify(int argc, char** argv);
int cli_cmd_generate(int argc, char** argv);

/* ---- log capture (common.c) ------------------------------------------------ */

/* Collects the library's ERROR messages so a failure can be reported on one
 * line; with `verbose` every message is also echoed to stderr. */
typedef struct cli_log {
  int verbose;
  char errors[2048]; /* ERROR messages since the last reset, joined by "; " */
  size_t len;
} cli_log;

pterun_logger cli_logger(cli_log* log);
void cli_log_reset(cli_log* log);

/** Prints `pterun: error: <what>[: <captured errors>] (<STATUS>)` as ONE line
 *  on stderr, clears the captured errors and returns CLI_EXIT_FAIL. `log` may
 *  be NULL. */
int cli_fail(cli_log* log, pterun_status st, const char* fmt, ...) CLI_PRINTF(3, 4);

/** A string from the program file (method/operator name, backend id, data
 *  key) made safe for a terminal with pterun_escape_text(); returns buf. */
const char* cli_esc(const char* s, char* buf, size_t cap);
#define CLI_ESC_CAP 512

/** Prints `pterun CMD: <message>` and a hint to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char* cmd, const char* fmt, ...) CLI_PRINTF(2, 3);

/* ---- command-line parsing (opts.c, common.c) ------------------------------ */

/** Exit status for a cli_parse result other than CLI_PARSE_OK. */
#define CLI_PARSE_EXIT(r) ((r) == CLI_PARSE_HELP ? CLI_EXIT_OK : CLI_EXIT_USAGE)
/** Strict decimal parse; returns 0 on success. */
int cli_parse_u64(const char* s, uint64_t* out);

/** A growable list of strings borrowed from argv. */
typedef struct cli_strlist {
  const char** items;
  size_t count, cap;
} cli_strlist;
int cli_strlist_push(cli_strlist* l, const char* s); /* 0 ok, -1 out of memory */
void cli_strlist_free(cli_strlist* l);

/* ---- loading (common.c, libraries.c) ---------------------------------------- */

/** Creates a registry with the runtime's prim ops and every kernel library
 *  this build has (libraries.c). Errors go to `log`. */
pterun_status cli_registry_create(cli_log* log, pterun_registry** out);
/** Names of the kernel libraries built in, for --version. */
void cli_print_libraries(FILE* f);

typedef struct cli_session {
  cli_log log;
  pterun_registry* registry;
  pterun_program* program;
  pterun_data** data;
  size_t data_count;
  double program_load_ms;
  uint64_t threads;          /* --threads: 0 = pterun_threadpool_default_threads() */
  int no_fusion, no_prepare; /* --no-fusion, --no-prepare (pterun_method_options) */
  int release_packed;        /* the command loads one method once: give packed weights'
                                file bytes back (release_packed_constants) */
  pterun_threadpool* pool;   /* created by cli_load_method, destroyed by close */
  pterun_profiler* profiler; /* attached by cli_load_method when set */
  pterun_bundle* bundle;     /* the model was a bundled program (.bpte) */
  int64_t bundle_case;       /* the bundled case run, -1 none (ETDump records it) */
} cli_session;

/** Registry + program (mmap) + data files. A bundled program (BP08) is
 *  accepted too: its embedded program is used and s->bundle is set. On failure prints the error line
 *  and returns CLI_EXIT_FAIL; the session must be closed either way. */
int cli_session_open(cli_session* s, const char* model, const cli_strlist* data, int verbose);
void cli_session_close(cli_session* s);
/** 1 if the file starts like a bundled program (BP08). */
int cli_is_bundle_file(const char* path);

/** Resolves --method: the given name, else "forward", else the only method. */
int cli_pick_method(cli_session* s, const char* requested, size_t* index_out);

/** The option rows every command that loads a method shares. */
#define CLI_OPTS_THREADS(s)                                                                        \
  CLI_U64("threads", &(s)->threads, "N", 1, 4096,                                                  \
          "threads per operator (default: the CPUs this process may use)"),                        \
      CLI_FLAG("no-fusion", 0, &(s)->no_fusion,                                                    \
               "run the program's calls as written (load-time fusion and copy elision off)"),      \
      CLI_FLAG("no-prepare", 0, &(s)->no_prepare,                                                  \
               "skip kernels' load-time preparation (weights unpacked)")
#define CLI_OPT_VERBOSE(v) CLI_FLAG("verbose", 'v', v, "echo the library's log messages")

/** Starts the session's thread pool from s->threads unless it is running
 *  or s->threads is 1 (then s->pool stays NULL: serial). */
int cli_session_pool(cli_session* s);
/** Loads method `index` against the session's registry and data files, on the
 *  session's thread pool (created on first use from s->threads). */
int cli_load_method(cli_session* s, size_t index, pterun_method** out, double* ms_out);

/* ---- profiling (profile.c) -------------------------------------------------- */

typedef struct cli_profile_opts {
  int table;                /* --profile */
  const char* trace;        /* --trace FILE.json */
  const char* etdump;       /* --etdump FILE.etdp */
  const char* debug_buffer; /* --debug-buffer FILE: intermediate outputs */
  int quiet;                /* files are written without a word */
  FILE* out;                /* the --profile table: stdout when NULL */
} cli_profile_opts;

#define CLI_OPTS_PROFILE(o)                                                                        \
  CLI_FLAG("profile", 0, &(o)->table, "print time per operator and per instruction"),              \
      CLI_STR("trace", &(o)->trace, "FILE.json",                                                   \
              "write a Chrome trace (chrome://tracing, Perfetto)"),                                \
      CLI_STR("etdump", &(o)->etdump, "FILE.etdp",                                                 \
              "write an ETDump for executorch.devtools.Inspector"),                                \
      CLI_STR("debug-buffer", &(o)->debug_buffer, "FILE",                                          \
              "with --etdump: also every kernel's output (debug events)")

/** Creates the profiler when any profiling option was given (else *out = NULL);
 *  `runs` executes are kept event by event. */
int cli_profile_begin(const cli_profile_opts* o, uint64_t runs, pterun_profiler** out);
/** Prints the table and writes the files that were asked for. */
int cli_profile_end(const cli_profile_opts* o, cli_session* s, const pterun_profiler* p);
int cli_profile_print(FILE* f, const pterun_profiler* p, size_t top);

/* ---- inputs (inputs.c) ------------------------------------------------------ */

typedef enum cli_gen { CLI_GEN_ZEROS, CLI_GEN_ONES, CLI_GEN_RANDOM } cli_gen;

/** Memory behind a method's inputs; element i is empty for non-tensor inputs
 *  that carry no file. Tensor data is laid out in the input's dim order. */
typedef struct cli_inputs {
  size_t count;
  cli_npy* arrays;
  const char** sources; /* file name or generator, for messages */
} cli_inputs;

int cli_inputs_generate(cli_session* s, size_t method, cli_gen gen, uint64_t seed, cli_inputs* out);
int cli_inputs_from_files(cli_session* s, size_t method, const cli_strlist* paths, cli_inputs* out);
/** Binds every input; the arrays must outlive the executes. */
int cli_inputs_bind(cli_session* s, pterun_method* m, size_t method, cli_inputs* in);
void cli_inputs_free(cli_inputs* in);

/* ---- outputs (outputs.c) ----------------------------------------------------- */

struct cli_json;
/** mkdir -p: creates each missing component of `path`; 0 or -1 (errno). */
int cli_make_dirs(const char* path);
/** Writes output i as DIR/output_i.npy (tensors and scalars; *written says
 *  whether it had a .npy form). */
int cli_output_write(const char* dir, size_t i, const pterun_value* v, int* written);
/** "float32 (2, 3) [0.5, 1, ...]" for a tensor, the value for a scalar. */
void cli_value_describe(const pterun_value* v, char* buf, size_t cap);

/** Summary of a tensor's finite elements; NaN and infinities are counted. */
typedef struct cli_tensor_stats {
  double min, max, mean, std; /* population std; 0 when count is 0 */
  uint64_t count, nan_count, inf_count;
} cli_tensor_stats;
/** 1 and the statistics when the dtype is numeric (cli_elem_supported), else 0. */
int cli_tensor_stats_compute(const pterun_tensor* t, cli_tensor_stats* out);
/** One output as a JSON object (docs/cli.md: `pterun run --json`); `file`
 *  is the .npy written or NULL. */
void cli_output_json(struct cli_json* j, size_t index, const pterun_value* v, const char* file);

/* ---- elements and layout (elem.c) ------------------------------------------- */

/** 1 if cli_elem_get/set handle the dtype (all but sub-byte, float8, complex). */
int cli_elem_supported(int32_t dtype);
/** Saturating conversion (NaN gives 0). */
int64_t cli_double_to_i64(double v);
/** Element i as a double (any numeric dtype, F16/BF16 included). */
double cli_elem_get(int32_t dtype, const void* data, size_t i);
/** Stores v into element i, rounding/saturating as a C cast would. */
void cli_elem_set(int32_t dtype, void* data, size_t i, double v);
/** Formats element i ("1.5", "-3", "true"). */
void cli_elem_format(int32_t dtype, const void* data, size_t i, char* buf, size_t cap);

/** Copies a tensor element by element between two stride layouts (strides in
 *  elements, all non-negative). */
void cli_strided_copy(void* dst, const int64_t* dst_strides, const void* src,
                      const int64_t* src_strides, uint32_t rank, const int64_t* sizes,
                      size_t itemsize);
int cli_dim_order_is_identity(uint32_t rank, const uint8_t* dim_order);

/* ---- misc (common.c) ---------------------------------------------------------- */

double cli_now_ms(void);
/** A "VmRSS"/"VmHWM"-style field of /proc/self/status in KiB, or -1 where
 *  there is none (not Linux, or no procfs). */
long long cli_proc_status_kb(const char* field);
const char* cli_dynamism_name(int dynamism);
/** Writes "(a, b, c)" for a list of small unsigned ints (dim orders). */
void cli_u8_tuple(uint32_t rank, const uint8_t* v, char* buf, size_t cap);

#endif /* PTERUN_CLI_CLI_H_ */
