/* Text generation over an LLM-flow program (pterun/llm.h), in libpterun_textgen.
 * It runs the program's operators only through the registry the caller
 * passes in the method options: no kernel library is linked here. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pterun/kernel_util.h"
#include "pterun/llm.h"

struct pterun_llm {
  const pterun_program* program;
  pterun_method* method;
  pterun_llm_metadata meta;
  size_t method_index;
  int64_t pos;
  int64_t max_tokens_per_call; /* the token input's bound along dim 1 */
  float* logits;               /* vocab floats */
  float* work;                 /* 2 * vocab floats for sampling */
  void** planned;              /* zeroed planned buffers we own, or NULL */
  size_t* planned_sizes;
  size_t planned_count;
};

/* Planned memory for forward, zero-filled: the KV caches are mutable buffers
 * without initial data, and a ring-buffer cache is read (under a -inf mask)
 * before it is written, so its bytes must be finite, as ExecuTorch's
 * zero-initialised arenas are. Allocated once, here. */
static pterun_status alloc_planned(pterun_llm* llm, size_t method) {
  pterun_method_info mi;
  size_t k;
  if (pterun_program_method_info(llm->program, method, &mi) != PTERUN_STATUS_OK)
    return PTERUN_STATUS_INVALID_PROGRAM;
  llm->planned_count = mi.planned_buffer_count;
  if (mi.planned_buffer_count == 0) return PTERUN_STATUS_OK;
  llm->planned = (void**)calloc(mi.planned_buffer_count, sizeof(void*));
  llm->planned_sizes = (size_t*)calloc(mi.planned_buffer_count, sizeof(size_t));
  if (llm->planned == NULL || llm->planned_sizes == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  for (k = 0; k < mi.planned_buffer_count; ++k) {
    uint64_t size;
    size_t bytes;
    if (pterun_program_planned_buffer_size(llm->program, method, k, &size) != PTERUN_STATUS_OK ||
        size > (uint64_t)SIZE_MAX - 64)
      return PTERUN_STATUS_INVALID_PROGRAM;
    bytes = ((size_t)size + 63) & ~(size_t)63;
    llm->planned[k] = aligned_alloc(64, bytes ? bytes : 64);
    if (llm->planned[k] == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
    memset(llm->planned[k], 0, bytes ? bytes : 64);
    llm->planned_sizes[k] = bytes;
  }
  return PTERUN_STATUS_OK;
}

/* Logits the runner reads: float32, float16, bfloat16. */
static int is_logits_float(int dtype) {
  return dtype == PTERUN_DTYPE_F32 || dtype == PTERUN_DTYPE_F16 || dtype == PTERUN_DTYPE_BF16;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Output 0 of a constant method when it is an Int or Bool; 0 if absent. */
static int const_method(const pterun_program* p, const char* name, int64_t* v) {
  size_t idx;
  pterun_method_info mi;
  pterun_io_info io;
  if (pterun_program_find_method(p, name, &idx) != PTERUN_STATUS_OK) return 0;
  if (pterun_program_method_info(p, idx, &mi) != PTERUN_STATUS_OK || mi.output_count < 1 ||
      mi.instruction_count != 0)
    return 0;
  if (pterun_program_method_output(p, idx, 0, &io) != PTERUN_STATUS_OK) return 0;
  if (io.tag != PTERUN_VALUE_INT && io.tag != PTERUN_VALUE_BOOL) return 0;
  *v = io.int_value;
  return 1;
}

static void read_metadata(pterun_llm* llm, const pterun_io_info* tokens,
                          const pterun_io_info* logits) {
  pterun_llm_metadata* m = &llm->meta;
  const pterun_program* p = llm->program;
  int64_t v;
  memset(m, 0, sizeof *m);
  m->max_seq_len = const_method(p, "get_max_seq_len", &v) ? v : tokens->sizes[1] + 1;
  m->max_context_len = const_method(p, "get_max_context_len", &v) ? v : m->max_seq_len;
  m->vocab_size = const_method(p, "get_vocab_size", &v) ? v : logits->sizes[logits->rank - 1];
  m->n_layers = const_method(p, "get_n_layers", &v) ? v : -1;
  m->bos_id = const_method(p, "get_bos_id", &v) ? v : -1;
  m->use_kv_cache = const_method(p, "use_kv_cache", &v) ? v != 0 : 1;
  m->use_sdpa_with_kv_cache = const_method(p, "use_sdpa_with_kv_cache", &v) ? v != 0 : 0;
  m->enable_dynamic_shape = const_method(p, "enable_dynamic_shape", &v)
                                ? v != 0
                                : tokens->dynamism != PTERUN_SHAPE_STATIC;
  {
    size_t idx, k;
    pterun_method_info mi;
    if (pterun_program_find_method(p, "get_eos_ids", &idx) == PTERUN_STATUS_OK &&
        pterun_program_method_info(p, idx, &mi) == PTERUN_STATUS_OK && mi.instruction_count == 0)
      for (k = 0; k < mi.output_count && m->eos_count < PTERUN_LLM_MAX_EOS; ++k) {
        pterun_io_info io;
        if (pterun_program_method_output(p, idx, k, &io) == PTERUN_STATUS_OK &&
            io.tag == PTERUN_VALUE_INT)
          m->eos_ids[m->eos_count++] = io.int_value;
      }
  }
}

pterun_status pterun_llm_open(const pterun_program* program, const pterun_method_options* options,
                              pterun_llm** out) {
  pterun_llm* llm;
  pterun_io_info tok, ipos, lg;
  pterun_status st;
  size_t idx;
  if (program == NULL || out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if ((st = pterun_program_find_method(program, "forward", &idx)) != PTERUN_STATUS_OK) return st;
  /* forward(tokens int64 [1, S], input_pos int64 [1]) -> logits float [1, (S,) V] */
  if (pterun_program_method_input(program, idx, 0, &tok) != PTERUN_STATUS_OK ||
      pterun_program_method_input(program, idx, 1, &ipos) != PTERUN_STATUS_OK ||
      pterun_program_method_output(program, idx, 0, &lg) != PTERUN_STATUS_OK)
    return PTERUN_STATUS_INPUT_MISMATCH;
  if (tok.tag != PTERUN_VALUE_TENSOR || tok.dtype != PTERUN_DTYPE_I64 || tok.rank != 2 ||
      ipos.tag != PTERUN_VALUE_TENSOR || ipos.dtype != PTERUN_DTYPE_I64 || ipos.rank != 1 ||
      lg.tag != PTERUN_VALUE_TENSOR || !is_logits_float(lg.dtype) || lg.rank < 2 ||
      lg.sizes[lg.rank - 1] <= 0)
    return PTERUN_STATUS_INPUT_MISMATCH;
  llm = (pterun_llm*)calloc(1, sizeof *llm);
  if (llm == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  llm->program = program;
  llm->method_index = idx;
  llm->max_tokens_per_call = tok.sizes[1];
  read_metadata(llm, &tok, &lg);
  if (llm->meta.vocab_size != lg.sizes[lg.rank - 1]) llm->meta.vocab_size = lg.sizes[lg.rank - 1];
  llm->logits = (float*)malloc((size_t)llm->meta.vocab_size * 3 * sizeof(float));
  if (llm->logits == NULL) {
    free(llm);
    return PTERUN_STATUS_OUT_OF_MEMORY;
  }
  llm->work = llm->logits + llm->meta.vocab_size;
  {
    pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
    if (options != NULL) mo = *options;
    if (mo.planned_buffers == NULL) {
      if ((st = alloc_planned(llm, idx)) != PTERUN_STATUS_OK) {
        pterun_llm_close(llm);
        return st;
      }
      mo.planned_buffers = (void* const*)llm->planned;
      mo.planned_buffer_count = llm->planned_count;
      mo.planned_buffer_sizes = llm->planned_sizes;
    }
    if ((st = pterun_method_load(program, "forward", &mo, &llm->method)) != PTERUN_STATUS_OK) {
      pterun_llm_close(llm);
      return st;
    }
  }
  *out = llm;
  return PTERUN_STATUS_OK;
}

void pterun_llm_close(pterun_llm* llm) {
  if (llm == NULL) return;
  size_t k;
  pterun_method_destroy(llm->method);
  for (k = 0; llm->planned != NULL && k < llm->planned_count; ++k) free(llm->planned[k]);
  free(llm->planned);
  free(llm->planned_sizes);
  free(llm->logits);
  free(llm);
}

const pterun_llm_metadata* pterun_llm_get_metadata(const pterun_llm* llm) {
  return &llm->meta;
}
pterun_method* pterun_llm_method(pterun_llm* llm) {
  return llm->method;
}
int64_t pterun_llm_position(const pterun_llm* llm) {
  return llm->pos;
}
void pterun_llm_reset(pterun_llm* llm) {
  llm->pos = 0;
}

/* One forward over tokens[0, n) at llm->pos; copies the last row of logits. */
static pterun_status forward_once(pterun_llm* llm, const int64_t* tokens, size_t n) {
  int64_t tsizes[2] = {1, (int64_t)n}, psizes[1] = {1}, pos = llm->pos;
  pterun_tensor_view tv = {PTERUN_DTYPE_I64, 2, tsizes, NULL, (void*)tokens, n * sizeof(int64_t)};
  pterun_tensor_view pv = {PTERUN_DTYPE_I64, 1, psizes, NULL, &pos, sizeof pos};
  const pterun_value* out;
  const pterun_tensor* t;
  pterun_status st;
  size_t V = (size_t)llm->meta.vocab_size;
  if ((st = pterun_method_set_input(llm->method, 0, &tv)) != PTERUN_STATUS_OK) return st;
  if ((st = pterun_method_set_input(llm->method, 1, &pv)) != PTERUN_STATUS_OK) return st;
  if ((st = pterun_method_execute(llm->method)) != PTERUN_STATUS_OK) return st;
  if ((st = pterun_method_output(llm->method, 0, &out)) != PTERUN_STATUS_OK) return st;
  if (out->tag != PTERUN_VALUE_TENSOR) return PTERUN_STATUS_INVALID_PROGRAM;
  t = out->u.tensor;
  if (!is_logits_float(t->dtype) || t->numel < (int64_t)V || t->numel % (int64_t)V != 0 ||
      t->data == NULL || !pterun_tensor_is_contiguous(t))
    return PTERUN_STATUS_INVALID_PROGRAM;
  /* [1, V] or [1, S, V]: the last row is the last token's. */
  {
    const char* row =
        (const char*)t->data + (size_t)(t->numel - (int64_t)V) * pterun_dtype_size(t->dtype);
    size_t k;
    if (t->dtype == PTERUN_DTYPE_F32) /* the usual case: a copy, not a load per element */
      memcpy(llm->logits, row, V * sizeof(float));
    else
      for (k = 0; k < V; ++k) llm->logits[k] = pterun_load_f32(row, t->dtype, (int64_t)k);
  }
  llm->pos += (int64_t)n;
  return PTERUN_STATUS_OK;
}

pterun_status pterun_llm_forward(pterun_llm* llm, const int64_t* tokens, size_t n,
                                 const float** logits) {
  size_t done = 0, chunk;
  pterun_status st;
  if (llm == NULL || tokens == NULL || n == 0) return PTERUN_STATUS_INVALID_ARGUMENT;
  if ((int64_t)n > llm->meta.max_context_len - llm->pos) return PTERUN_STATUS_INVALID_ARGUMENT;
  if (!llm->meta.use_kv_cache) return PTERUN_STATUS_NOT_SUPPORTED;
  /* Dynamic programs take as many tokens per call as the input's bound
   * allows; static ones exactly the serialized count (1 for decoders). */
  chunk = llm->meta.enable_dynamic_shape ? (size_t)llm->max_tokens_per_call : 1;
  if (!llm->meta.enable_dynamic_shape && llm->max_tokens_per_call != 1)
    return PTERUN_STATUS_NOT_SUPPORTED;
  while (done < n) {
    size_t c = n - done < chunk ? n - done : chunk;
    if ((st = forward_once(llm, tokens + done, c)) != PTERUN_STATUS_OK) return st;
    done += c;
  }
  if (logits != NULL) *logits = llm->logits;
  return PTERUN_STATUS_OK;
}

/* ---- sampling: xoshiro-style 64-bit generator (splitmix64), 24-bit floats ---- */
static uint64_t next_u64(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float next_unit(uint64_t* s) { /* [0, 1) */
  return (float)(next_u64(s) >> 40) * (1.0f / 16777216.0f);
}

/* The first index of the largest non-NaN value (0 if every value is NaN).
 * Two passes the compiler vectorises, instead of one loop that carries the
 * best index from element to element (~100 us over a 32 000-token vocabulary,
 * a sixth of a small model's decode step): the maximum in 16 independent
 * lanes (a > b ? a : b skips NaN; max is order-free), then the first block
 * holding it. */
#define LLM_ARGMAX_LANES 16
static int64_t argmax(const float* x, size_t n) {
  float m[LLM_ARGMAX_LANES];
  size_t i = 0, j;
  for (j = 0; j < LLM_ARGMAX_LANES; ++j) m[j] = -INFINITY;
  for (; i + LLM_ARGMAX_LANES <= n; i += LLM_ARGMAX_LANES)
    for (j = 0; j < LLM_ARGMAX_LANES; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  for (; i < n; ++i) m[0] = x[i] > m[0] ? x[i] : m[0];
  for (j = 1; j < LLM_ARGMAX_LANES; ++j) m[0] = m[j] > m[0] ? m[j] : m[0];
  const float mx = m[0];
  for (i = 0; i + LLM_ARGMAX_LANES <= n; i += LLM_ARGMAX_LANES) {
    int hit = 0;
    for (j = 0; j < LLM_ARGMAX_LANES; ++j) hit |= x[i + j] == mx;
    if (hit) break;
  }
  for (; i < n; ++i)
    if (x[i] == mx) return (int64_t)i;
  return 0;
}

/* A candidate token while sampling: probability (unnormalised) and id. */
typedef struct llm_cand {
  float p;
  float id; /* exact: ids < 2^24 */
} llm_cand;

/* Descending probability, then ascending id: a total order, so the result
 * does not depend on the C library's qsort. */
static int cand_cmp(const void* a, const void* b) {
  const llm_cand *x = (const llm_cand*)a, *y = (const llm_cand*)b;
  if (x->p != y->p) return x->p > y->p ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

int64_t pterun_llm_sample(const float* logits, size_t vocab, const pterun_llm_sampling* s,
                          uint64_t* state, float* work) {
  llm_cand* c = (llm_cand*)(void*)work; /* 2 * vocab floats */
  float mx, sum = 0.f, r, acc;
  size_t i, n;
  if (s == NULL || !(s->temperature > 0.f) || vocab == 0 || vocab > (1u << 24))
    return vocab ? argmax(logits, vocab) : 0;
  mx = logits[argmax(logits, vocab)];
  for (i = 0; i < vocab; ++i) {
    c[i].p = expf((logits[i] - mx) / s->temperature);
    c[i].id = (float)i;
  }
  qsort(c, vocab, sizeof *c, cand_cmp);
  n = s->top_k > 0 && (size_t)s->top_k < vocab ? (size_t)s->top_k : vocab;
  for (i = 0; i < n; ++i) sum += c[i].p;
  if (s->top_p > 0.f && s->top_p < 1.f) {
    acc = 0.f;
    for (i = 0; i < n; ++i) {
      acc += c[i].p;
      if (acc >= s->top_p * sum) {
        n = i + 1;
        break;
      }
    }
    sum = 0.f;
    for (i = 0; i < n; ++i) sum += c[i].p;
  }
  r = next_unit(state) * sum;
  acc = 0.f;
  for (i = 0; i < n; ++i) {
    acc += c[i].p;
    if (r < acc) return (int64_t)c[i].id;
  }
  return (int64_t)c[n - 1].id;
}

static int is_stop(const pterun_llm* llm, const pterun_llm_options* o, int64_t t) {
  size_t i;
  if (!o->ignore_eos)
    for (i = 0; i < llm->meta.eos_count; ++i)
      if (llm->meta.eos_ids[i] == t) return 1;
  for (i = 0; i < o->stop_count; ++i)
    if (o->stop_tokens[i] == t) return 1;
  return 0;
}

pterun_status pterun_llm_generate(pterun_llm* llm, const int64_t* prompt, size_t prompt_len,
                                  const pterun_llm_options* options, int64_t* out, size_t out_cap,
                                  pterun_llm_stats* stats) {
  pterun_llm_options opts;
  const pterun_llm_options* o = &opts;
  pterun_llm_stats local;
  const float* logits;
  uint64_t state;
  pterun_status st;
  double t0, t1;
  size_t i;
  pterun_llm_stats* S = stats != NULL ? stats : &local;
  if (llm == NULL || options == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  PTERUN_TRY(pterun_options_read(options, &opts, sizeof opts, NULL, "pterun_llm_options"));
  if ((out == NULL && out_cap > 0) || (o->stop_count > 0 && o->stop_tokens == NULL))
    return PTERUN_STATUS_INVALID_ARGUMENT;
  memset(S, 0, sizeof *S);
  S->prompt_tokens = prompt_len;
  state = o->sampling.seed;
  t0 = now_seconds();
  if ((st = pterun_llm_forward(llm, prompt, prompt_len, &logits)) != PTERUN_STATUS_OK) return st;
  t1 = now_seconds();
  S->prefill_seconds = t1 - t0;
  S->stop = PTERUN_LLM_STOP_STEPS;
  for (i = 0; i < o->max_new_tokens; ++i) {
    pterun_llm_token tk;
    int64_t t =
        pterun_llm_sample(logits, (size_t)llm->meta.vocab_size, &o->sampling, &state, llm->work);
    if (i < out_cap) out[i] = t;
    S->generated = i + 1 < out_cap ? i + 1 : out_cap;
    tk.index = i;
    tk.token = t;
    tk.position = llm->pos;
    tk.logits = logits;
    tk.vocab_size = (size_t)llm->meta.vocab_size;
    if (o->callback != NULL && o->callback(o->user, &tk) != 0) {
      S->stop = PTERUN_LLM_STOP_CALLBACK;
      break;
    }
    if (is_stop(llm, o, t)) {
      S->stop = PTERUN_LLM_STOP_EOS;
      break;
    }
    if (i + 1 == o->max_new_tokens) break;
    if (llm->pos >= llm->meta.max_context_len) {
      S->stop = PTERUN_LLM_STOP_CONTEXT;
      break;
    }
    if ((st = pterun_llm_forward(llm, &t, 1, &logits)) != PTERUN_STATUS_OK) return st;
  }
  S->decode_seconds = now_seconds() - t1;
  return PTERUN_STATUS_OK;
}
