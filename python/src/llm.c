/* pterun._pterun.llm_generate: the binding of pterun/llm.h (generation runs
 * in libpterun_textgen, so Python produces the same tokens and logits as
 * C and the CLI). Compiled only when the wheel links the textgen component. */
#include "ptext.h"

#include "pt_components.h"

#ifdef PT_HAVE_TEXTGEN
#include <stdlib.h>
#include <string.h>

#include "pterun/llm.h"

typedef struct py_llm_capture {
  float* logits;
  size_t vocab, cap, n;
  PyObject* on_token; /* callable(index, token) -> stop?, or NULL */
  int failed;         /* on_token raised: its exception is pending */
} py_llm_capture;

static int py_llm_keep(void* user, const pterun_llm_token* t) {
  py_llm_capture* c = (py_llm_capture*)user;
  int stop = 0;
  if (c->logits != NULL && t->index < c->cap) {
    memcpy(c->logits + t->index * c->vocab, t->logits, c->vocab * sizeof(float));
    c->n = t->index + 1;
  }
  if (c->on_token != NULL) {
    /* Generation runs without the GIL; the callback takes it per token. */
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject* r =
        PyObject_CallFunction(c->on_token, "nL", (Py_ssize_t)t->index, (long long)t->token);
    if (r == NULL) {
      c->failed = 1;
      stop = 1;
    } else {
      stop = PyObject_IsTrue(r);
      if (stop < 0) {
        c->failed = 1;
        stop = 1;
      }
      Py_DECREF(r);
    }
    PyGILState_Release(g);
  }
  return stop;
}

static PyObject* py_llm_metadata(const pterun_llm_metadata* m) {
  PyObject* eos = PyList_New((Py_ssize_t)m->eos_count);
  size_t k;
  if (eos == NULL) return NULL;
  for (k = 0; k < m->eos_count; ++k)
    PyList_SetItem(eos, (Py_ssize_t)k, PyLong_FromLongLong((long long)m->eos_ids[k]));
  return Py_BuildValue("{sLsLsLsLsLsNsNsNsN}", "max_seq_len", (long long)m->max_seq_len,
                       "max_context_len", (long long)m->max_context_len, "vocab_size",
                       (long long)m->vocab_size, "n_layers", (long long)m->n_layers, "bos_id",
                       (long long)m->bos_id, "eos_ids", eos, "use_kv_cache",
                       PyBool_FromLong(m->use_kv_cache), "use_sdpa_with_kv_cache",
                       PyBool_FromLong(m->use_sdpa_with_kv_cache), "enable_dynamic_shape",
                       PyBool_FromLong(m->enable_dynamic_shape));
}

/* llm_generate(program, prompt, max_new_tokens, temperature, top_k, top_p,
 *              seed, ignore_eos, stop_tokens, return_logits, bos, on_token)
 *   -> dict. bos: -2 the program's get_bos_id (none if it has none), -1 none,
 *   else that id, put before the prompt; on_token: None or
 *   callable(index, token) returning true to stop. */
PyObject* py_mod_llm_generate(PyObject* module, PyObject* args) {
  py_state* st = (py_state*)PyModule_GetState(module);
  PyObject *prog_obj, *prompt_obj, *stop_obj, *result = NULL, *tokens = NULL, *logits = NULL;
  PyObject *on_token = Py_None, *prompt_list = NULL;
  long long bos = -1;
  Py_ssize_t max_new, n_prompt, n_stop, k;
  float temperature, top_p;
  int top_k, ignore_eos, want_logits;
  unsigned long long seed;
  int64_t *prompt = NULL, *stop = NULL, *out = NULL;
  pterun_llm* llm = NULL;
  pterun_method_options mo = PTERUN_METHOD_OPTIONS_INIT;
  pterun_llm_options o = PTERUN_LLM_OPTIONS_INIT;
  pterun_llm_stats stats;
  py_llm_capture cap;
  pterun_status s;
  if (!PyArg_ParseTuple(args, "OOnfifKpOp|LO:llm_generate", &prog_obj, &prompt_obj, &max_new,
                        &temperature, &top_k, &top_p, &seed, &ignore_eos, &stop_obj, &want_logits,
                        &bos, &on_token))
    return NULL;
  if (on_token != Py_None && !PyCallable_Check(on_token)) {
    PyErr_SetString(PyExc_TypeError, "on_token must be callable or None");
    return NULL;
  }
  if (!PyObject_TypeCheck(prog_obj, st->program_type)) {
    PyErr_SetString(PyExc_TypeError, "program must be a pterun._pterun.Program");
    return NULL;
  }
  if (max_new < 0 || max_new > 1000000) {
    PyErr_SetString(PyExc_ValueError, "max_new_tokens must be in [0, 1000000]");
    return NULL;
  }
  n_prompt = PySequence_Size(prompt_obj);
  n_stop = PySequence_Size(stop_obj);
  if (n_prompt < 0 || n_stop < 0) return NULL;
  if (n_prompt == 0 && bos == -1) {
    PyErr_SetString(PyExc_ValueError, "the prompt has no tokens");
    return NULL;
  }
  /* One slot in front for the BOS. */
  prompt = (int64_t*)malloc(((size_t)n_prompt + 1) * sizeof(int64_t));
  stop = (int64_t*)malloc(((size_t)n_stop + 1) * sizeof(int64_t));
  out = (int64_t*)malloc(((size_t)max_new + 1) * sizeof(int64_t));
  memset(&cap, 0, sizeof cap);
  if (prompt == NULL || stop == NULL || out == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (k = 0; k < n_prompt + n_stop; ++k) {
    PyObject* it = k < n_prompt ? PySequence_GetItem(prompt_obj, k)
                                : PySequence_GetItem(stop_obj, k - n_prompt);
    long long v;
    if (it == NULL) goto done;
    v = PyLong_AsLongLong(it);
    Py_DECREF(it);
    if (v == -1 && PyErr_Occurred()) goto done;
    if (v < 0) {
      PyErr_SetString(PyExc_ValueError, "token ids must be non-negative");
      goto done;
    }
    if (k < n_prompt)
      prompt[k + 1] = v;
    else
      stop[k - n_prompt] = v;
  }
  mo.registry = st->registry;
  mo.logger = py_logger();
  py_log_reset();
  Py_BEGIN_ALLOW_THREADS s = pterun_llm_open(((py_program*)prog_obj)->program, &mo, &llm);
  Py_END_ALLOW_THREADS if (s != PTERUN_STATUS_OK) {
    py_raise(st, s, "cannot open the program as a language model");
    goto done;
  }
  {
    int64_t b = bos == -2 ? pterun_llm_get_metadata(llm)->bos_id : (int64_t)bos;
    if (b >= 0) {
      prompt[0] = b;
      ++n_prompt;
    } else {
      memmove(prompt, prompt + 1, (size_t)n_prompt * sizeof *prompt);
    }
    if (n_prompt == 0) {
      PyErr_SetString(PyExc_ValueError, "the prompt has no tokens (and the program no BOS)");
      goto done;
    }
  }
  cap.vocab = (size_t)pterun_llm_get_metadata(llm)->vocab_size;
  cap.on_token = on_token != Py_None ? on_token : NULL;
  cap.cap = (size_t)max_new;
  if (want_logits && max_new > 0) {
    cap.logits = (float*)malloc((size_t)max_new * cap.vocab * sizeof(float));
    if (cap.logits == NULL) {
      PyErr_NoMemory();
      goto done;
    }
  }
  o.sampling.temperature = temperature;
  o.sampling.top_k = top_k;
  o.sampling.top_p = top_p;
  o.sampling.seed = (uint64_t)seed;
  o.max_new_tokens = (size_t)max_new;
  o.ignore_eos = ignore_eos;
  o.stop_tokens = stop;
  o.stop_count = (size_t)n_stop;
  o.callback = py_llm_keep;
  o.user = &cap;
  py_log_reset();
  Py_BEGIN_ALLOW_THREADS s =
      pterun_llm_generate(llm, prompt, (size_t)n_prompt, &o, out, (size_t)max_new, &stats);
  Py_END_ALLOW_THREADS if (cap.failed) goto done; /* on_token's exception */
  if (s != PTERUN_STATUS_OK) {
    py_raise(st, s, "generation failed at position %lld", (long long)pterun_llm_position(llm));
    goto done;
  }
  prompt_list = PyList_New(n_prompt);
  if (prompt_list == NULL) goto done;
  for (k = 0; k < n_prompt; ++k)
    PyList_SetItem(prompt_list, k, PyLong_FromLongLong((long long)prompt[k]));
  tokens = PyList_New((Py_ssize_t)stats.generated);
  if (tokens == NULL) goto done;
  for (k = 0; k < (Py_ssize_t)stats.generated; ++k)
    PyList_SetItem(tokens, k, PyLong_FromLongLong((long long)out[k]));
  if (cap.logits != NULL) {
    logits = PyBytes_FromStringAndSize((const char*)cap.logits,
                                       (Py_ssize_t)(cap.n * cap.vocab * sizeof(float)));
    if (logits == NULL) goto done;
  } else {
    logits = Py_NewRef(Py_None);
  }
  {
    static const char* stops[] = {"steps", "eos", "context", "callback"};
    PyObject* meta = py_llm_metadata(pterun_llm_get_metadata(llm));
    if (meta == NULL) goto done;
    result =
        Py_BuildValue("{sOsOsOsnsdsdsssN}", "tokens", tokens, "prompt_tokens", prompt_list,
                      "logits", logits, "vocab_size", (Py_ssize_t)cap.vocab, "prefill_seconds",
                      stats.prefill_seconds, "decode_seconds", stats.decode_seconds, "stop",
                      stops[stats.stop >= 0 && stats.stop < 4 ? stats.stop : 0], "metadata", meta);
  }
done:
  Py_XDECREF(tokens);
  Py_XDECREF(logits);
  Py_XDECREF(prompt_list);
  pterun_llm_close(llm);
  free(prompt);
  free(stop);
  free(out);
  free(cap.logits);
  return result;
}
#endif
