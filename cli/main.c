/* pterun: command-line front end. Dispatches to one subcommand per file. */
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

int main(int argc, char** argv) {
  size_t k;
  /* A PTERUN_ISA / PTERUN_ISA_MASK the kernels cannot use, on stderr (the
   * commands' loggers take only errors without --verbose). */
  pterun_cpu_report_env(NULL);
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (cli_is_help(argv[1])) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
    printf("pterun %s (library %s)\n", PTERUN_VERSION_STRING, pterun_version_string());
    cli_print_libraries(stdout);
    {
      char isa[256];
      pterun_cpu_features_string(pterun_cpu_features(), isa, sizeof isa);
      printf("cpu features in use: %s\n", isa[0] ? isa : "none (scalar kernels)");
    }
    return CLI_EXIT_OK;
  }
  for (k = 0; k < sizeof kCommands / sizeof kCommands[0]; ++k)
    if (strcmp(argv[1], kCommands[k].name) == 0) return kCommands[k].fn(argc - 1, argv + 1);
  if (argv[1][0] == '-') return cli_usage_error(NULL, "unknown option '%s'", argv[1]);
  return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
}
