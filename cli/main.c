/* pterun: command-line front end. Dispatches to one subcommand per file. */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "pterun/cpu.h"

static void usage(FILE* f) {
  fprintf(f,
          "usage: pterun [--version] [--help] COMMAND [ARGS]\n"
          "\n"
          "Load and run ExecuTorch .pte programs.\n"
          "\n"
          "commands:\n"
          "  inspect MODEL.pte   show a program's methods, inputs, outputs and operators\n"
          "  run MODEL.pte       execute a method, write outputs as .npy files\n"
          "  bench MODEL.pte     time a method with generated inputs\n"
          "  ops                 list the operators this build provides\n"
          "  verify FILE.bpte    run a bundled program's test cases, compare outputs\n"
          "  generate MODEL.pte  generate tokens with a language model (LLM-flow program)\n"
          "\n"
          "Run 'pterun COMMAND --help' for a command's options.\n"
          "Exit status: 0 success, 1 failure, 2 bad command line.\n");
}

typedef struct command {
  const char* name;
  int (*fn)(int argc, char** argv);
} command;

static const command kCommands[] = {
    {"inspect", cli_cmd_inspect}, {"run", cli_cmd_run},       {"bench", cli_cmd_bench},
    {"ops", cli_cmd_ops},         {"verify", cli_cmd_verify}, {"generate", cli_cmd_generate},
};

static void version(void) {
  char isa[256];
  printf("pterun %s (library %s)\n", PTERUN_VERSION_STRING, pterun_version_string());
  cli_print_libraries(stdout);
  pterun_cpu_features_string(pterun_cpu_features(), isa, sizeof isa);
  printf("cpu features in use: %s\n", isa[0] ? isa : "none (scalar kernels)");
}

int main(int argc, char** argv) {
  static const struct option kLong[] = {
      {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
  size_t k;
  int c;
  /* A PTERUN_ISA / PTERUN_ISA_MASK the kernels cannot use, on stderr (the
   * commands' loggers take only errors without --verbose). */
  pterun_cpu_report_env(NULL);
  /* '+': the options before COMMAND only; the command parses the rest */
  opterr = 0;
  while ((c = getopt_long(argc, argv, "+:hV", kLong, NULL)) != -1) {
    switch (c) {
      case 'h': usage(stdout); return CLI_EXIT_OK;
      case 'V': version(); return CLI_EXIT_OK;
      default:
        if (optopt != 0 && optopt != 'h' && optopt != 'V')
          return cli_usage_error(NULL, "unknown option '-%c'", optopt);
        return cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  for (k = 0; k < sizeof kCommands / sizeof kCommands[0]; ++k)
    if (strcmp(argv[optind], kCommands[k].name) == 0)
      return kCommands[k].fn(argc - optind, argv + optind);
  return cli_usage_error(NULL, "unknown command '%s'", argv[optind]);
}
