/* Internals of libpterun_textgen's tokenizers (prefix tok_). One struct for
 * the three formats: a vocabulary (id -> bytes, bytes -> id), the format's
 * pre-tokenization and model data, and the decoder steps. */
#ifndef PTERUN_SRC_TEXTGEN_TOK_INTERNAL_H_
#define PTERUN_SRC_TEXTGEN_TOK_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "pterun/kernel_util.h" /* PTERUN_TRY */
#include "pterun/log.h"
#include "pterun/status.h"
#include "pterun/tokenizer.h"

/* Limits on untrusted files (far above any real tokenizer). */
#define TOK_MAX_FILE ((size_t)1 << 30)  /* 1 GiB */
#define TOK_MAX_VOCAB ((size_t)1 << 24) /* 16 M ids */
#define TOK_MAX_TOKEN_BYTES 4096        /* one token's text */

/* ---- growable byte buffer ---------------------------------------------------- */
typedef struct tok_buf {
  char* p;
  size_t n, cap;
  int oom; /* an append failed: the contents are incomplete */
} tok_buf;
void tok_buf_free(tok_buf* b);
int tok_buf_reserve(tok_buf* b, size_t extra); /* 0 ok, -1 out of memory (oom set) */
void tok_buf_put(tok_buf* b, const void* p, size_t n);
void tok_buf_putc(tok_buf* b, char c);
void tok_buf_put_cp(tok_buf* b, uint32_t cp); /* UTF-8 */

/* ---- UTF-8 ------------------------------------------------------------------------ */
/* Length of the valid UTF-8 sequence at p[0..n) (1..4) with its code point,
 * or 0 when p does not start one (invalid or truncated). */
size_t tok_utf8_next(const unsigned char* p, size_t n, uint32_t* cp);
/* Appends bytes to `out` with every maximal invalid subsequence replaced by
 * one U+FFFD (the Unicode "maximal subpart" rule of Python's 'replace',
 * Rust's from_utf8_lossy). If `hold` is non-NULL, a trailing sequence that is
 * a valid but incomplete prefix is not written: *hold gets its length. */
void tok_utf8_lossy(tok_buf* out, const unsigned char* p, size_t n, size_t* hold);
/* Length of a trailing truncated-but-valid-so-far sequence (0..3). */
size_t tok_utf8_incomplete_tail(const unsigned char* p, size_t n);

/* ---- string -> id hash map ------------------------------------------------------ */
typedef struct tok_map {
  uint32_t* slots; /* id + 1, 0 empty */
  size_t mask;
} tok_map;

/* ---- the tokenizer ------------------------------------------------------------------ */
enum {
  TOK_ATTR_SPECIAL = 1,   /* HF added special token, tiktoken special, spm control */
  TOK_ATTR_ADDED = 2,     /* HF added token (matched in the text before the model) */
  TOK_ATTR_BYTE = 4,      /* a byte piece <0xNN> (byte fallback) */
  TOK_ATTR_UNKNOWN = 8,   /* spm unknown */
  TOK_ATTR_CONTROL = 16,  /* spm control (decodes to nothing) */
  TOK_ATTR_USER = 32,     /* spm user-defined */
  TOK_ATTR_UNUSED = 64,   /* spm unused */
  TOK_ATTR_PRESENT = 128, /* the id exists */
  TOK_ATTR_MODEL = 256    /* in the model vocabulary map (bytes -> id) */
};

/* Pre-tokenizer steps (HF), applied in order to each piece. */
typedef enum tok_pre_kind {
  TOK_PRE_SPLIT = 1,     /* regex split; behavior in `behavior` */
  TOK_PRE_BYTELEVEL = 2, /* add_prefix_space, use_regex (GPT-2 pattern) */
  TOK_PRE_METASPACE = 3, /* replacement, prepend_scheme, split */
  TOK_PRE_DIGITS = 4     /* individual_digits */
} tok_pre_kind;

enum {
  TOK_SPLIT_ISOLATED = 0,
  TOK_SPLIT_REMOVED = 1,
  TOK_SPLIT_MERGED_PREV = 2,
  TOK_SPLIT_MERGED_NEXT = 3,
  TOK_SPLIT_CONTIGUOUS = 4
};
enum { TOK_PREPEND_ALWAYS = 0, TOK_PREPEND_FIRST = 1, TOK_PREPEND_NEVER = 2 };

typedef struct tok_regex tok_regex;

typedef struct tok_pre {
  int kind;
  int behavior, invert; /* SPLIT */
  tok_regex* re;        /* SPLIT, BYTELEVEL with use_regex */
  int add_prefix_space; /* BYTELEVEL */
  char repl[8];         /* METASPACE replacement (UTF-8) */
  size_t repl_len;
  int prepend_scheme, split; /* METASPACE */
  int individual_digits;     /* DIGITS */
} tok_pre;

/* Normalizer steps (HF). */
typedef enum tok_norm_kind { TOK_NORM_PREPEND = 1, TOK_NORM_REPLACE = 2 } tok_norm_kind;
typedef struct tok_norm {
  int kind;
  char* a; /* PREPEND: the text; REPLACE: pattern */
  size_t a_len;
  char* b; /* REPLACE: content */
  size_t b_len;
} tok_norm;

/* Decoder steps (HF), each maps the token list to a token list. */
typedef enum tok_dec_kind {
  TOK_DEC_BYTELEVEL = 1,
  TOK_DEC_METASPACE = 2,
  TOK_DEC_REPLACE = 3,
  TOK_DEC_BYTEFALLBACK = 4,
  TOK_DEC_FUSE = 5,
  TOK_DEC_STRIP = 6
} tok_dec_kind;
typedef struct tok_dec {
  int kind;
  char* a; /* REPLACE pattern; METASPACE replacement; STRIP content */
  size_t a_len;
  char* b; /* REPLACE content */
  size_t b_len;
  int prepend_scheme; /* METASPACE */
  size_t start, stop; /* STRIP */
} tok_dec;

/* An added token (HF added_tokens; tiktoken specials; spm user-defined
 * symbols are matched by the model instead). */
typedef struct tok_added {
  uint32_t id;
  uint32_t off, len; /* content in the vocabulary pool */
  uint8_t special, lstrip, rstrip, single_word;
} tok_added;

/* A BPE merge (HF): pair (a, b) -> rank, new id. */
typedef struct tok_merge {
  uint32_t a, b, rank, id;
} tok_merge;

struct pterun_tokenizer {
  int format;
  pterun_logger logger;
  /* vocabulary: token i is pool[off[i] .. off[i]+len[i]) */
  size_t n_vocab, id_cap;
  char* pool;
  size_t pool_len, pool_cap;
  uint32_t* off;
  uint32_t* len;
  uint16_t* attr;
  int32_t* added_of; /* per id: index into added[], or -1 */
  float* score;      /* spm */
  tok_map map;       /* model vocabulary: bytes -> id (TOK_ATTR_MODEL ids) */
  tok_added* added;
  size_t n_added;
  /* HF model */
  tok_merge* merges; /* open-addressed table on (a, b) */
  size_t merge_mask;
  int byte_fallback, fuse_unk, ignore_merges;
  int64_t unk_id;
  int64_t byte_ids[256]; /* <0xNN> ids, -1 when absent */
  tok_norm* norms;
  size_t n_norms;
  tok_pre* pres;
  size_t n_pres;
  tok_dec* decs;
  size_t n_decs;
  int has_decoder;
  /* tiktoken */
  tok_regex* pattern;
  /* sentencepiece */
  int spm_type; /* 1 unigram, 2 bpe */
  int add_dummy_prefix, remove_extra_ws, escape_ws, treat_ws_as_suffix;
  float min_score, max_score;
  char unk_surface[64];
  size_t unk_surface_len;
  size_t max_piece_len;
  uint32_t* cm_units; /* precompiled charsmap: darts-clone double array */
  size_t cm_n;
  char* cm_text; /* its NUL-terminated replacement strings */
  size_t cm_text_len;
  int64_t bos_id, eos_id;
};

/* ---- helpers shared by the formats (tok_util.c) --------------------------------- */
pterun_status tok_fail(pterun_tokenizer* t, pterun_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Adds `n` bytes as token `id` (grows the tables); -1 out of memory,
 * -2 id already present or too large. */
int tok_vocab_set(pterun_tokenizer* t, uint32_t id, const void* p, size_t n, unsigned attr);
/* Adds an added/special token (HF added_tokens, tiktoken specials): its own
 * text, the id may also be in the model vocabulary. -1 out of memory. */
int tok_added_add(pterun_tokenizer* t, uint32_t id, const void* p, size_t n, int special,
                  int lstrip, int rstrip, int single_word);
/* Builds the model map and the id -> added token index. */
int tok_vocab_index(pterun_tokenizer* t);
int64_t tok_map_get(const pterun_tokenizer* t, const tok_map* m, const void* p, size_t n);
const char* tok_text(const pterun_tokenizer* t, size_t id, size_t* n);
/* Finds the leftmost-longest added token in s[from..n), or returns 0. */
int tok_find_added(const pterun_tokenizer* t, const char* s, size_t n, size_t from, size_t* at,
                   size_t* len, size_t* which);

/* BPE over symbols (tok_bpe.c): symbols are byte ranges of `piece` with ids;
 * `pair` gives the priority (lower first) and merged id of two adjacent
 * symbols, or returns 0 when they do not merge. Merges the best pair
 * (lowest priority, leftmost on ties) until none is left; the result
 * replaces syms[0..*n). */
typedef struct tok_sym {
  uint32_t start, len; /* bytes of the piece */
  int64_t id;
} tok_sym;
typedef int (*tok_pair_fn)(const pterun_tokenizer* t, const char* piece, const tok_sym* a,
                           const tok_sym* b, double* priority, int64_t* id);
int tok_bpe(const pterun_tokenizer* t, const char* piece, tok_sym* syms, size_t* n,
            tok_pair_fn pair);

/* id output with a count (encode). */
typedef struct tok_ids {
  int64_t* ids;
  size_t cap, n;
} tok_ids;
static inline void tok_ids_put(tok_ids* o, int64_t id) {
  if (o->n < o->cap) o->ids[o->n] = id;
  o->n++;
}

/* Regex (tok_regex.c, PCRE2; without it every compile fails NOT_SUPPORTED). */
pterun_status tok_regex_compile(pterun_tokenizer* t, const char* pattern, size_t len,
                                tok_regex** out);
void tok_regex_free(tok_regex* re);
/* Calls fn(user, start, end, is_match) for each piece of s[0..n): matches and
 * the gaps between them, in order. Returns 0, or -1 on a matcher failure. */
typedef int (*tok_split_fn)(void* user, size_t start, size_t end, int is_match);
int tok_regex_split(const tok_regex* re, const char* s, size_t n, tok_split_fn fn, void* user);

/* The merge table's slot of the pair (a, b) (tok_hf.c fills it,
 * tok_hf_encode.c looks pairs up). */
static inline size_t tok_merge_slot(const pterun_tokenizer* t, uint32_t a, uint32_t b) {
  uint64_t h = ((uint64_t)a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)b * 0xC2B2AE3D27D4EB4Full);
  return (size_t)(h ^ (h >> 31)) & t->merge_mask;
}

/* The formats (tok_hf.c with tok_hf_encode.c and tok_hf_decode.c,
 * tok_tiktoken.c, tok_spm.c). */
pterun_status tok_hf_load(pterun_tokenizer* t, const char* data, size_t size);
pterun_status tok_hf_encode(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out);
/* Decoders append the text of ids[0..n) to `out`; *stable (if not NULL): the
 * length of the part no later token can change (streaming). */
pterun_status tok_hf_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                            tok_buf* out, size_t* stable);
pterun_status tok_bytes_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                               tok_buf* out, size_t* stable);
pterun_status tok_tiktoken_load(pterun_tokenizer* t, const char* data, size_t size,
                                const pterun_tokenizer_options* o);
pterun_status tok_tiktoken_encode(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out);
pterun_status tok_spm_load(pterun_tokenizer* t, const unsigned char* data, size_t size);
pterun_status tok_spm_encode(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out);
pterun_status tok_spm_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                             tok_buf* out, size_t* stable);

#endif /* PTERUN_SRC_TEXTGEN_TOK_INTERNAL_H_ */
