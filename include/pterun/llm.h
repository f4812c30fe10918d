/* pterun: text generation with programs exported by ExecuTorch's LLM flow
 * (examples/models/llama/export_llama and its relatives), implemented in
 * libpterun_textgen (component "textgen"). The runner links libpterun only:
 * the program's operators (e.g. libpterun_kernels_llm's llama::*) come from
 * the registry in the method options.
 *
 * Such a program has a `forward(tokens int64 [1, S], input_pos int64 [1])`
 * method returning the logits of the last position, its KV cache in mutable
 * buffers updated in place, and constant methods with metadata
 * (get_max_seq_len, get_bos_id, get_eos_ids, use_kv_cache, ...).
 *
 * A pterun_llm holds the loaded forward method, the current position and the
 * buffers sampling needs, all allocated once by pterun_llm_open(): prefill,
 * step and generate never allocate. Not thread-safe (one generation at a
 * time per pterun_llm). */
#ifndef PTERUN_INCLUDE_PTERUN_LLM_H_
#define PTERUN_INCLUDE_PTERUN_LLM_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/method.h"
#include "pterun/program.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pterun_llm pterun_llm;

#define PTERUN_LLM_MAX_EOS 16

/** What the export flow wrote into the program's constant methods. Missing
 *  methods keep the defaults noted. */
typedef struct pterun_llm_metadata {
  int64_t max_seq_len;                 /* get_max_seq_len; default: forward's token bound + 1 */
  int64_t max_context_len;             /* get_max_context_len; default: max_seq_len */
  int64_t vocab_size;                  /* get_vocab_size; default: logits' last dim */
  int64_t n_layers;                    /* get_n_layers; -1 if absent */
  int64_t bos_id;                      /* get_bos_id; -1 if absent */
  int64_t eos_ids[PTERUN_LLM_MAX_EOS]; /* get_eos_ids */
  size_t eos_count;
  int use_kv_cache;           /* use_kv_cache; default 1 */
  int use_sdpa_with_kv_cache; /* default 0 */
  int enable_dynamic_shape;   /* default: forward's token input is dynamic */
} pterun_llm_metadata;

/** Opens the program's `forward` method (options as for pterun_method_load;
 *  NULL: defaults) and reads its metadata. */
PTERUN_API pterun_status pterun_llm_open(const pterun_program* program,
                                         const pterun_method_options* options, pterun_llm** out);
/** NULL is a no-op. */
PTERUN_API void pterun_llm_close(pterun_llm* llm);
PTERUN_API const pterun_llm_metadata* pterun_llm_get_metadata(const pterun_llm* llm);
/** The loaded forward method (e.g. to report its memory). */
PTERUN_API pterun_method* pterun_llm_method(pterun_llm* llm);

/** Next position to be written (the number of tokens in the KV cache). */
PTERUN_API int64_t pterun_llm_position(const pterun_llm* llm);
/** Starts a new sequence at position 0 (the cache need not be cleared:
 *  attention never reads past the current position). */
PTERUN_API void pterun_llm_reset(pterun_llm* llm);

/**
 * Runs `n` tokens at the current position (one forward when the program has
 * dynamic shapes, else one per token) and advances it. `logits` (may be
 * NULL) receives the vocab_size float32 logits of the last token, owned by
 * llm and valid until the next call.
 * @retval PTERUN_STATUS_INVALID_ARGUMENT n == 0, or the tokens do not fit
 *         the context (position + n > max_context_len)
 */
PTERUN_API pterun_status pterun_llm_forward(pterun_llm* llm, const int64_t* tokens, size_t n,
                                            const float** logits);

/** Sampling. temperature <= 0: greedy (arg max, lowest index on ties);
 *  else softmax(logits / temperature) restricted to the top_k most likely
 *  tokens (0: all), then to the smallest set whose probability reaches
 *  top_p (>= 1: all), sampled with pterun's own generator seeded by `seed`
 *  (same seed, same tokens, on every platform). */
typedef struct pterun_llm_sampling {
  float temperature;
  int32_t top_k;
  float top_p;
  uint64_t seed;
} pterun_llm_sampling;

/** One generated token, handed to the callback. */
typedef struct pterun_llm_token {
  size_t index;        /* 0 for the token sampled from the prompt's logits */
  int64_t token;       /* the sampled token */
  int64_t position;    /* position the token will occupy */
  const float* logits; /* vocab_size logits it was sampled from */
  size_t vocab_size;
} pterun_llm_token;

/** Return nonzero to stop generating after this token. */
typedef int (*pterun_llm_callback)(void* user, const pterun_llm_token* token);

typedef enum pterun_llm_stop {
  PTERUN_LLM_STOP_STEPS = 0,   /* max_new_tokens reached */
  PTERUN_LLM_STOP_EOS = 1,     /* a stop token was sampled (it is kept) */
  PTERUN_LLM_STOP_CONTEXT = 2, /* the context is full */
  PTERUN_LLM_STOP_CALLBACK = 3 /* the callback asked to stop */
} pterun_llm_stop;

typedef struct pterun_llm_options {
  /* sizeof(pterun_llm_options) as the caller was compiled: initialise with
   * PTERUN_LLM_OPTIONS_INIT (the struct can grow, see pterun/options.h). */
  size_t struct_size;
  pterun_llm_sampling sampling;
  size_t max_new_tokens;
  /* Stop tokens: the program's eos ids unless ignore_eos, plus these. */
  int ignore_eos;
  const int64_t* stop_tokens;
  size_t stop_count;
  pterun_llm_callback callback; /* may be NULL */
  void* user;
} pterun_llm_options;

#define PTERUN_LLM_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_llm_options)

typedef struct pterun_llm_stats {
  size_t prompt_tokens;
  size_t generated; /* tokens written to out */
  double prefill_seconds;
  double decode_seconds; /* forwards after the prompt */
  int stop;              /* pterun_llm_stop */
} pterun_llm_stats;

/**
 * From the current position: runs the prompt, then samples up to
 * max_new_tokens tokens, feeding each back (KV cache in the method's mutable
 * buffers). Tokens go to out[0 .. out_cap) (out may be NULL with out_cap 0
 * when the callback consumes them); stats may be NULL.
 */
PTERUN_API pterun_status pterun_llm_generate(pterun_llm* llm, const int64_t* prompt,
                                             size_t prompt_len, const pterun_llm_options* options,
                                             int64_t* out, size_t out_cap, pterun_llm_stats* stats);

/** Samples one token from `logits` (vocab entries) with `sampling`, using and
 *  advancing the generator *state (initialise it to sampling->seed).
 *  `work` must hold 2 * vocab floats (only read when temperature > 0). */
PTERUN_API int64_t pterun_llm_sample(const float* logits, size_t vocab,
                                     const pterun_llm_sampling* sampling, uint64_t* state,
                                     float* work);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_LLM_H_ */
