/* pterun: tokenizers, in libpterun_textgen (component "textgen").
 *
 * Loads the tokenizer files ExecuTorch's LLM runner reads and encodes and
 * decodes as their reference libraries do (same ids, same text):
 *   - Hugging Face tokenizer.json with a BPE model (`tokenizers`): ByteLevel,
 *     Metaspace and regex Split pre-tokenizers, ByteLevel / Metaspace /
 *     Replace / ByteFallback / Fuse / Strip decoders, merges, added tokens,
 *     byte fallback;
 *   - tiktoken rank files (`base64-token rank` lines; `tiktoken`): the Llama 3
 *     split pattern and special tokens unless the options give others;
 *   - sentencepiece .model files (protobuf ModelProto; `sentencepiece`): BPE
 *     and unigram, identity or precompiled-charsmap (nmt_nfkc) normalization,
 *     byte fallback, user-defined symbols.
 * Text is UTF-8; decoded bytes that are not valid UTF-8 are replaced with
 * U+FFFD as the reference library replaces them.
 *
 * Files are untrusted input: every size and offset is checked, a bad file
 * gives INVALID_DATA (or NOT_SUPPORTED for a feature pterun does not
 * implement) with the reason through the options' logger. A loaded
 * tokenizer is immutable: encode and decode may run from several threads at
 * once; a stream belongs to one thread. */
#ifndef PTERUN_INCLUDE_PTERUN_TOKENIZER_H_
#define PTERUN_INCLUDE_PTERUN_TOKENIZER_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/export.h"
#include "pterun/log.h"
#include "pterun/options.h"
#include "pterun/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pterun_tokenizer pterun_tokenizer;

typedef enum pterun_tokenizer_format {
  PTERUN_TOKENIZER_AUTO = 0,         /* from the content (load only) */
  PTERUN_TOKENIZER_HF_JSON = 1,      /* Hugging Face tokenizer.json */
  PTERUN_TOKENIZER_TIKTOKEN = 2,     /* tiktoken rank file */
  PTERUN_TOKENIZER_SENTENCEPIECE = 3 /* sentencepiece .model */
} pterun_tokenizer_format;

typedef struct pterun_tokenizer_options {
  /* sizeof(pterun_tokenizer_options) as the caller was compiled: initialise
   * with PTERUN_TOKENIZER_OPTIONS_INIT (pterun/options.h). */
  size_t struct_size;
  int format; /* pterun_tokenizer_format; AUTO: from the content */
  /* tiktoken only: the special tokens, with ids n_ranks + i (NULL with count
   * 0: Llama 3's 256, as ExecuTorch's runner and pytorch_tokenizers), and the
   * split regex (NULL: Llama 3's). */
  const char* const* special_tokens;
  size_t special_count;
  const char* pattern;
  pterun_logger logger; /* zero: WARNING and ERROR lines to stderr */
} pterun_tokenizer_options;

#define PTERUN_TOKENIZER_OPTIONS_INIT PTERUN_OPTIONS_INIT(pterun_tokenizer_options)

/** Reads a tokenizer file (options may be NULL: defaults). */
PTERUN_API pterun_status pterun_tokenizer_load_file(const char* path,
                                                    const pterun_tokenizer_options* options,
                                                    pterun_tokenizer** out);
/** The same from memory (copied; `data` need not outlive the call). */
PTERUN_API pterun_status pterun_tokenizer_load_memory(const void* data, size_t size,
                                                      const pterun_tokenizer_options* options,
                                                      pterun_tokenizer** out);
/** NULL is a no-op. */
PTERUN_API void pterun_tokenizer_destroy(pterun_tokenizer* tok);

/** The file's format (pterun_tokenizer_format). */
PTERUN_API int pterun_tokenizer_format_of(const pterun_tokenizer* tok);
/** One past the largest id. */
PTERUN_API size_t pterun_tokenizer_vocab_size(const pterun_tokenizer* tok);
/** The id of a token given by its text (special and added tokens included:
 *  "<|eot_id|>", "<s>"), or -1. */
PTERUN_API int64_t pterun_tokenizer_token_id(const pterun_tokenizer* tok, const char* text,
                                             size_t len);
/** Ids the file itself names (sentencepiece: bos_id/eos_id of its trainer
 *  spec; tiktoken: <|begin_of_text|>, <|end_of_text|> when present), or -1. */
PTERUN_API int64_t pterun_tokenizer_bos_id(const pterun_tokenizer* tok);
PTERUN_API int64_t pterun_tokenizer_eos_id(const pterun_tokenizer* tok);

/**
 * Encodes `len` bytes of UTF-8 text (no BOS/EOS: the caller adds them; the
 * file's post-processor is not applied). Special and added tokens written in
 * the text become their ids (as `tokenizers`' encode, tiktoken's
 * allowed_special="all", sentencepiece's user-defined symbols). Writes
 * min(count, cap) ids to `ids` and the count to *count: a count > cap means
 * the output was cut (call again with a larger buffer).
 * @retval PTERUN_STATUS_INVALID_DATA the text is not valid UTF-8
 */
PTERUN_API pterun_status pterun_tokenizer_encode(const pterun_tokenizer* tok, const char* text,
                                                 size_t len, int64_t* ids, size_t cap,
                                                 size_t* count);

typedef enum pterun_tokenizer_special {
  /* As the reference library's decode by default: `tokenizers` skips special
   * tokens, tiktoken writes them, sentencepiece drops control symbols. */
  PTERUN_TOKENIZER_SPECIAL_DEFAULT = 0,
  PTERUN_TOKENIZER_SPECIAL_SKIP = 1, /* never write special tokens' text */
  PTERUN_TOKENIZER_SPECIAL_KEEP = 2  /* write it (HF: skip_special_tokens=False) */
} pterun_tokenizer_special;

/**
 * Decodes ids to UTF-8 text. Writes min(length, cap - 1) bytes and a NUL
 * (when cap > 0) and the whole length to *length (> cap - 1: cut). Ids
 * outside the vocabulary are skipped (as `tokenizers` does; tiktoken and
 * sentencepiece would raise).
 */
PTERUN_API pterun_status pterun_tokenizer_decode(const pterun_tokenizer* tok, const int64_t* ids,
                                                 size_t n, int special, char* out, size_t cap,
                                                 size_t* length);

/* ---- streaming decode ----------------------------------------------------------
 * Tokens pushed one at a time come out as the text that is complete: a
 * character split over several tokens (multi-byte UTF-8, byte-fallback
 * pieces) is held back until it is whole, and whatever a later token can
 * still change (a leading space a decoder strips, an open byte run). The
 * pieces concatenated equal pterun_tokenizer_decode() of all the tokens. */
typedef struct pterun_tokenizer_stream pterun_tokenizer_stream;

PTERUN_API pterun_status pterun_tokenizer_stream_create(const pterun_tokenizer* tok, int special,
                                                        pterun_tokenizer_stream** out);
/** NULL is a no-op. */
PTERUN_API void pterun_tokenizer_stream_destroy(pterun_tokenizer_stream* s);
/** Forgets every token pushed. */
PTERUN_API void pterun_tokenizer_stream_reset(pterun_tokenizer_stream* s);
/** Adds one token; *text / *length: the newly complete text (possibly
 *  empty), owned by the stream and valid until its next call. */
PTERUN_API pterun_status pterun_tokenizer_stream_push(pterun_tokenizer_stream* s, int64_t id,
                                                      const char** text, size_t* length);
/** At the end: the text held back (decoded as the whole decode does). */
PTERUN_API pterun_status pterun_tokenizer_stream_finish(pterun_tokenizer_stream* s,
                                                        const char** text, size_t* length);

#ifdef __cplusplus
}
#endif
#endif /* PTERUN_INCLUDE_PTERUN_TOKENIZER_H_ */
