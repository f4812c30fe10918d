/* Text generation from C: an LLM-flow program (export_llama) and a tokenizer
 * file (tokenizer.json, tiktoken, sentencepiece .model).
 *
 *   generate_text MODEL.pte TOKENIZER "prompt text" [STEPS]
 *
 * Prints the generated text as it comes (greedy decoding, the program's BOS
 * first, stops at its eos ids), as `pterun generate --tokenizer` does.
 * docs/llm.md walks through it; the tests build and run it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/kernels/llm.h"
#include "pterun/kernels/portable.h"
#include "pterun/pterun.h"
#include "pterun/textgen.h"

/* Each sampled token goes through the decode stream; what is complete is
 * printed (a character split over tokens waits for its last byte). */
static int on_token(void* user, const pterun_llm_token* t) {
  const char* piece;
  size_t n;
  if (pterun_tokenizer_stream_push((pterun_tokenizer_stream*)user, t->token, &piece, &n) !=
      PTERUN_STATUS_OK)
    return 1; /* stop */
  fwrite(piece, 1, n, stdout);
  fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  pterun_program* prog = NULL;
  pterun_tokenizer* tok = NULL;
  pterun_tokenizer_stream* stream = NULL;
  pterun_llm* llm = NULL;
  pterun_llm_options opt = PTERUN_LLM_OPTIONS_INIT;
  int64_t* prompt = NULL;
  size_t n = 0;
  const char* piece;
  int rc = 1;
  if (argc < 4) {
    fprintf(stderr, "usage: generate_text MODEL.pte TOKENIZER PROMPT [STEPS]\n");
    return 2;
  }
  /* The program's operators: portable ATen kernels and ExecuTorch's LLM ops. */
  pterun_registry_add(pterun_registry_default(), pterun_kernels_portable());
  pterun_registry_add(pterun_registry_default(), pterun_kernels_llm());
  if (pterun_program_load_file(argv[1], PTERUN_FILE_MMAP, NULL, &prog) != PTERUN_STATUS_OK ||
      pterun_tokenizer_load_file(argv[2], NULL, &tok) != PTERUN_STATUS_OK ||
      pterun_llm_open(prog, NULL, &llm) != PTERUN_STATUS_OK ||
      pterun_tokenizer_stream_create(tok, PTERUN_TOKENIZER_SPECIAL_DEFAULT, &stream) !=
          PTERUN_STATUS_OK)
    goto done;
  /* [BOS] + the text's ids: ask for the count, then encode after the BOS. */
  if (pterun_tokenizer_encode(tok, argv[3], strlen(argv[3]), NULL, 0, &n) != PTERUN_STATUS_OK ||
      (prompt = (int64_t*)malloc((n + 1) * sizeof *prompt)) == NULL ||
      pterun_tokenizer_encode(tok, argv[3], strlen(argv[3]), prompt + 1, n, &n) != PTERUN_STATUS_OK)
    goto done;
  prompt[0] = pterun_llm_get_metadata(llm)->bos_id; /* get_bos_id of the program */
  opt.max_new_tokens = argc > 4 ? (size_t)strtoul(argv[4], NULL, 10) : 32;
  opt.callback = on_token; /* greedy: opt.sampling left at zero */
  opt.user = stream;
  if (pterun_llm_generate(llm, prompt[0] >= 0 ? prompt : prompt + 1, n + (prompt[0] >= 0), &opt,
                          NULL, 0, NULL) != PTERUN_STATUS_OK ||
      pterun_tokenizer_stream_finish(stream, &piece, &n) != PTERUN_STATUS_OK)
    goto done;
  fwrite(piece, 1, n, stdout); /* what was held back at the end */
  printf("\n");
  rc = 0;
done:
  if (rc != 0) fprintf(stderr, "generate_text: failed (see the messages above)\n");
  free(prompt);
  pterun_tokenizer_stream_destroy(stream);
  pterun_tokenizer_destroy(tok);
  pterun_llm_close(llm);
  pterun_program_destroy(prog);
  return rc;
}
