/* pterun generate: token generation with an LLM-flow program (pterun/llm.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/json.h"
#ifdef PTERUN_HAVE_TEXTGEN
#include "pterun/llm.h"
#include "pterun/tokenizer.h"

static const cli_command_help kHelp = {
    "generate", "MODEL.pte (--tokenizer FILE --prompt TEXT | --prompt-tokens 1,2,3) [options]",
    "Run the prompt through the program's forward method, then generate tokens one\n"
    "step at a time (KV cache in the program's mutable buffers). With a tokenizer,\n"
    "streams the text as it is generated; else prints the generated token ids.\n"
    "Prefill/decode tokens per second go to stderr."};

#define GEN_MAX_STOPS 16

/* Text output: the tokens streamed through the tokenizer as they come. */
typedef struct gen_text {
  pterun_tokenizer_stream* stream; /* NULL: no tokenizer */
  int echo;                        /* write the text to stdout as it comes */
  const char* stops[GEN_MAX_STOPS];
  size_t n_stops, max_stop;
  char* seen; /* the text handed out so far (stop strings are looked for in it) */
  size_t seen_n, seen_cap;
  int stopped; /* a stop string appeared */
  pterun_status err;
} gen_text;

typedef struct gen_state {
  float* logits; /* steps x vocab, or NULL */
  size_t vocab, steps, filled;
  int progress; /* stderr is a terminal */
  gen_text text;
} gen_state;

/* Appends a decoded piece: echo, keep, and look for a stop string in the
 * part a new piece can complete. Returns 1 when one appeared. */
static int text_piece(gen_text* x, const char* p, size_t n) {
  size_t k, from;
  if (n == 0) return 0;
  if (x->echo) {
    fwrite(p, 1, n, stdout);
    fflush(stdout);
  }
  if (x->seen_n + n + 1 > x->seen_cap) {
    size_t c = x->seen_cap ? x->seen_cap : 4096;
    char* q;
    while (c < x->seen_n + n + 1) c *= 2;
    q = (char*)realloc(x->seen, c);
    if (q == NULL) {
      x->err = PTERUN_STATUS_OUT_OF_MEMORY;
      return 1;
    }
    x->seen = q;
    x->seen_cap = c;
  }
  memcpy(x->seen + x->seen_n, p, n);
  from = x->seen_n > x->max_stop ? x->seen_n - x->max_stop : 0;
  x->seen_n += n;
  x->seen[x->seen_n] = '\0';
  for (k = 0; k < x->n_stops; ++k) {
    size_t L = strlen(x->stops[k]), i;
    for (i = from; L > 0 && i + L <= x->seen_n; ++i)
      if (memcmp(x->seen + i, x->stops[k], L) == 0) return 1;
  }
  return 0;
}

static int on_token(void* user, const pterun_llm_token* t) {
  gen_state* g = (gen_state*)user;
  if (g->text.stream != NULL) {
    const char* p;
    size_t n;
    pterun_status st = pterun_tokenizer_stream_push(g->text.stream, t->token, &p, &n);
    if (st != PTERUN_STATUS_OK) {
      g->text.err = st;
      return 1;
    }
    if (text_piece(&g->text, p, n)) {
      g->text.stopped = 1;
      return 1;
    }
  }
  if (g->logits != NULL && t->index < g->steps) {
    memcpy(g->logits + t->index * g->vocab, t->logits, g->vocab * sizeof(float));
    g->filled = t->index + 1;
  }
  if (g->progress) {
    fprintf(stderr, "\rgenerating: %zu/%zu", t->index + 1, g->steps);
    fflush(stderr);
  }
  return 0;
}

/* "1,2,3" -> tokens (malloc'd). 0 ok, -1 malformed, -2 out of memory. */
static int parse_tokens(const char* s, int64_t** out, size_t* n) {
  size_t cap = 1, k = 0;
  const char* p;
  int64_t* v;
  for (p = s; *p; ++p)
    if (*p == ',') ++cap;
  v = (int64_t*)malloc(cap * sizeof *v);
  if (v == NULL) return -2;
  p = s;
  while (*p) {
    char* end;
    long long x;
    errno = 0;
    x = strtoll(p, &end, 10);
    if (end == p || errno != 0 || x < 0 || (*end != ',' && *end != '\0')) {
      free(v);
      return -1;
    }
    v[k++] = (int64_t)x;
    p = *end == ',' ? end + 1 : end;
    if (*end == ',' && *p == '\0') {
      free(v);
      return -1;
    }
  }
  if (k == 0) {
    free(v);
    return -1;
  }
  *out = v;
  *n = k;
  return 0;
}

static const char* stop_name(int stop) {
  switch (stop) {
    case PTERUN_LLM_STOP_EOS: return "eos";
    case PTERUN_LLM_STOP_CONTEXT: return "context";
    case PTERUN_LLM_STOP_CALLBACK: return "callback";
    default: return "steps";
  }
}

int cli_cmd_generate(int argc, char** argv) {
  const char *model = NULL, *prompt_s = NULL, *logits_path = NULL, *tok_path = NULL, *text_s = NULL;
  uint64_t bos_id = 0;
  int no_bos = 0, has_bos = 0;
  cli_strlist stops = {NULL, 0, 0};
  pterun_tokenizer* tok = NULL;
  uint64_t steps = 32, seed = 0, top_k = 0;
  float temperature = 0.f, top_p = 1.f;
  int verbose = 0, json = 0, ignore_eos = 0, r, rc = CLI_EXIT_FAIL;
  int64_t *prompt = NULL, *out = NULL;
  size_t prompt_len = 0, k;
  cli_session s;
  pterun_llm* llm = NULL;
  pterun_llm_options opt = PTERUN_LLM_OPTIONS_INIT;
  pterun_llm_stats stats;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  gen_state g;
  pterun_status st;
  /* One row per option; the help text is made from this table. */
  const cli_optspec opts[] = {
      CLI_STR("tokenizer", &tok_path, "FILE",
              "tokenizer.json, tiktoken or sentencepiece .model file"),
      CLI_STR("prompt", &text_s, "TEXT", "the prompt as text (needs --tokenizer); BOS first"),
      CLI_STR("prompt-tokens", &prompt_s, "L", "comma-separated prompt token ids (no BOS added)"),
      CLI_U64("bos", &bos_id, "N", 0, INT64_MAX,
              "the BOS id put before --prompt (default: the program's get_bos_id)"),
      CLI_FLAG("no-bos", 0, &no_bos, "put no BOS before --prompt"),
      CLI_STRS("stop", &stops, "S", "also stop once the text contains S (repeatable, up to 16)"),
      CLI_U64("steps", &steps, "N", 0, 1000000, "tokens to generate (default 32)"),
      CLI_F32("temperature", &temperature, "F", 0, 0,
              "0 (default): greedy; else sample softmax(logits / F)"),
      CLI_U64("top-k", &top_k, "N", 0, INT32_MAX, "sample among the N most likely tokens (0: all)"),
      CLI_F32("top-p", &top_p, "F", 0, 0,
              "sample within the smallest set of probability F (1: all)"),
      CLI_U64("seed", &seed, "N", 0, 0, "sampling seed (default 0)"),
      CLI_FLAG("ignore-eos", 0, &ignore_eos, "do not stop at the program's eos ids"),
      CLI_STR("logits", &logits_path, "FILE.npy",
              "write the logits of every step, float32 [steps, vocab]"),
      CLI_OPTS_THREADS(&s),
      CLI_FLAG("json", 0, &json, "machine-readable output"),
      CLI_OPT_VERBOSE(&verbose),
      CLI_OPTS_END};
  const cli_optspec* const groups[] = {opts, NULL};

  memset(&s, 0, sizeof s);
  memset(&g, 0, sizeof g);
  bos_id = UINT64_MAX; /* not given */
  if ((r = cli_parse(argc, argv, &kHelp, groups, &model, 1, NULL)) != CLI_PARSE_OK) {
    rc = CLI_PARSE_EXIT(r);
    goto done;
  }
  has_bos = bos_id != UINT64_MAX;
  if (model == NULL || (prompt_s == NULL) == (text_s == NULL)) {
    rc = cli_usage_error(
        "generate", model == NULL ? "no model given" : "give one of --prompt and --prompt-tokens");
    goto done;
  }
  if ((text_s != NULL || stops.count > 0) && tok_path == NULL) {
    rc = cli_usage_error("generate", "--prompt and --stop need --tokenizer");
    goto done;
  }
  if (has_bos && no_bos) {
    rc = cli_usage_error("generate", "--bos and --no-bos exclude each other");
    goto done;
  }
  for (k = 0; k < stops.count; ++k) {
    if (k == GEN_MAX_STOPS || stops.items[k][0] == '\0') {
      rc = cli_usage_error("generate", "--stop: at most %d non-empty strings", GEN_MAX_STOPS);
      goto done;
    }
    g.text.stops[g.text.n_stops++] = stops.items[k];
    if (strlen(stops.items[k]) > g.text.max_stop) g.text.max_stop = strlen(stops.items[k]);
  }
  if (tok_path != NULL) {
    pterun_tokenizer_options to = PTERUN_TOKENIZER_OPTIONS_INIT;
    cli_log tlog;
    memset(&tlog, 0, sizeof tlog);
    to.logger = cli_logger(&tlog);
    if ((st = pterun_tokenizer_load_file(tok_path, &to, &tok)) != PTERUN_STATUS_OK) {
      cli_fail(&tlog, st, "%s: cannot load the tokenizer", tok_path);
      goto done;
    }
    if ((st = pterun_tokenizer_stream_create(tok, PTERUN_TOKENIZER_SPECIAL_DEFAULT,
                                             &g.text.stream)) != PTERUN_STATUS_OK) {
      cli_fail(NULL, st, "out of memory");
      goto done;
    }
    g.text.echo = !json;
  }
  if (text_s != NULL) {
    /* One slot in front for the BOS (known once the program is open). */
    size_t n = 0;
    if ((st = pterun_tokenizer_encode(tok, text_s, strlen(text_s), NULL, 0, &n)) !=
        PTERUN_STATUS_OK) {
      cli_fail(NULL, st, "--prompt: cannot encode the text");
      goto done;
    }
    prompt = (int64_t*)malloc((n + 1) * sizeof *prompt);
    if (prompt == NULL) {
      cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
      goto done;
    }
    pterun_tokenizer_encode(tok, text_s, strlen(text_s), prompt + 1, n, &prompt_len);
  } else if ((r = parse_tokens(prompt_s, &prompt, &prompt_len)) != 0) {
    if (r == -2) {
      cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
      goto done;
    }
    rc = cli_usage_error("generate", "--prompt-tokens must be non-negative integers like 1,2,3");
    goto done;
  }
  if (cli_session_open(&s, model, NULL, verbose) != CLI_EXIT_OK) goto done;
  if (cli_session_pool(&s) != CLI_EXIT_OK) goto done;
  mo.registry = s.registry;
  mo.threadpool = s.pool;
  mo.no_fusion = s.no_fusion;
  mo.no_kernel_prepare = s.no_prepare;
  if ((st = pterun_llm_open(s.program, &mo, &llm)) != PTERUN_STATUS_OK) {
    cli_fail(&s.log, st, "%s: cannot open as a language model", model);
    goto done;
  }
  if (text_s != NULL) {
    /* BOS: --bos, else the program's, unless --no-bos. */
    int64_t bos = has_bos ? (int64_t)bos_id : pterun_llm_get_metadata(llm)->bos_id;
    if (!no_bos && bos >= 0) {
      prompt[0] = bos;
      ++prompt_len;
    } else {
      memmove(prompt, prompt + 1, prompt_len * sizeof *prompt);
    }
    if (prompt_len == 0) {
      rc = cli_usage_error("generate", "the prompt has no tokens (empty text and no BOS)");
      goto done;
    }
  }
  g.vocab = (size_t)pterun_llm_get_metadata(llm)->vocab_size;
  g.steps = (size_t)steps;
  /* The progress line would mix with streamed text. */
  g.progress = isatty(fileno(stderr)) && !json && !g.text.echo;
  if (logits_path != NULL && steps > 0) {
    g.logits = (float*)malloc(g.steps * g.vocab * sizeof(float));
    if (g.logits == NULL) {
      cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory for --logits");
      goto done;
    }
  }
  out = (int64_t*)malloc((steps ? steps : 1) * sizeof *out);
  if (out == NULL) {
    cli_fail(NULL, PTERUN_STATUS_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  opt.sampling.temperature = temperature;
  opt.sampling.top_k = (int32_t)top_k;
  opt.sampling.top_p = top_p;
  opt.sampling.seed = seed;
  opt.max_new_tokens = (size_t)steps;
  opt.ignore_eos = ignore_eos;
  opt.callback = on_token;
  opt.user = &g;
  cli_log_reset(&s.log);
  st = pterun_llm_generate(llm, prompt, prompt_len, &opt, out, (size_t)steps, &stats);
  if (g.progress) fprintf(stderr, "\r\033[K");
  if (st == PTERUN_STATUS_OK && g.text.err != PTERUN_STATUS_OK) {
    cli_fail(NULL, g.text.err, "decoding the generated tokens failed");
    goto done;
  }
  if (st == PTERUN_STATUS_OK && g.text.stream != NULL) {
    const char* p;
    size_t n;
    if ((st = pterun_tokenizer_stream_finish(g.text.stream, &p, &n)) != PTERUN_STATUS_OK) {
      cli_fail(NULL, st, "decoding the generated tokens failed");
      goto done;
    }
    text_piece(&g.text, p, n);
    if (g.text.echo) printf("\n");
  }
  if (st != PTERUN_STATUS_OK) {
    cli_fail(&s.log, st, "%s: generation failed at position %lld", model,
             (long long)pterun_llm_position(llm));
    goto done;
  }
  if (logits_path != NULL) {
    int64_t shape[2] = {(int64_t)g.filled, (int64_t)g.vocab};
    char err[256];
    if ((st = cli_npy_write_file(logits_path, PTERUN_DTYPE_F32, 2, shape, g.logits,
                                 g.filled * g.vocab * sizeof(float), err, sizeof err)) !=
        PTERUN_STATUS_OK) {
      cli_fail(NULL, st, "%s", err);
      goto done;
    }
  }
  {
    double pf = stats.prefill_seconds > 0 ? (double)stats.prompt_tokens / stats.prefill_seconds : 0;
    /* Decode forwards = generated tokens after the first (which comes from
     * the prompt's logits), unless generation stopped early. */
    size_t dec = stats.generated > 1 ? stats.generated - 1 : 0;
    double ds = stats.decode_seconds > 0 && dec > 0 ? (double)dec / stats.decode_seconds : 0;
    if (json) {
      cli_json j;
      cli_json_init(&j, stdout);
      cli_json_begin_object(&j);
      cli_json_key(&j, "prompt_tokens");
      cli_json_begin_array(&j);
      for (k = 0; k < prompt_len; ++k) cli_json_int(&j, prompt[k]);
      cli_json_end_array(&j);
      cli_json_key(&j, "tokens");
      cli_json_begin_array(&j);
      for (k = 0; k < stats.generated; ++k) cli_json_int(&j, out[k]);
      cli_json_end_array(&j);
      if (tok != NULL) {
        /* The whole decode (what was streamed, held-back bytes included). */
        cli_json_key(&j, "text");
        cli_json_string_n(&j, g.text.seen != NULL ? g.text.seen : "", g.text.seen_n);
      }
      cli_json_key(&j, "stop");
      cli_json_string(&j, g.text.stopped ? "stop_string" : stop_name(stats.stop));
      cli_json_key(&j, "prefill_tokens_per_second");
      cli_json_double(&j, pf);
      cli_json_key(&j, "decode_tokens_per_second");
      cli_json_double(&j, ds);
      cli_json_end_object(&j);
      cli_json_finish(&j);
    } else {
      if (tok == NULL) {
        for (k = 0; k < stats.generated; ++k) printf(k ? ",%lld" : "%lld", (long long)out[k]);
        printf("\n");
      }
      fprintf(stderr,
              "prefill: %zu tokens, %.1f tokens/s; decode: %zu tokens, %.1f tokens/s; stop: %s\n",
              stats.prompt_tokens, pf, dec, ds,
              g.text.stopped ? "stop_string" : stop_name(stats.stop));
    }
  }
  rc = CLI_EXIT_OK;
done:
  pterun_llm_close(llm);
  pterun_tokenizer_stream_destroy(g.text.stream);
  pterun_tokenizer_destroy(tok);
  free(g.text.seen);
  cli_strlist_free(&stops);
  cli_session_close(&s);
  free(prompt);
  free(out);
  free(g.logits);
  return rc;
}
#else
int cli_cmd_generate(int argc, char** argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "pterun generate: this build has no textgen component (libpterun_textgen)\n");
  return CLI_EXIT_FAIL;
}
#endif
