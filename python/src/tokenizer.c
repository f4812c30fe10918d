/* pterun._pterun.tokenizer_*: the binding of pterun/tokenizer.h (the C
 * tokenizers of libpterun_textgen, so a tokenizer file gives the same ids and
 * text in Python as in C and the CLI). Tokenizers and streams are capsules;
 * pterun.Tokenizer (python/pterun/tokenizer.py) wraps them. Compiled only
 * when the wheel links the textgen component. */
#include "ptext.h"

#include "pt_components.h"

#ifdef PT_HAVE_TEXTGEN
#include <stdlib.h>
#include <string.h>

#include "pterun/tokenizer.h"

#define TOK_CAPSULE "pterun._pterun.tokenizer"
#define STREAM_CAPSULE "pterun._pterun.tokenizer_stream"

static void tok_capsule_free(PyObject* cap) {
  pterun_tokenizer_destroy((pterun_tokenizer*)PyCapsule_GetPointer(cap, TOK_CAPSULE));
}

static void stream_capsule_free(PyObject* cap) {
  PyObject* owner = (PyObject*)PyCapsule_GetContext(cap);
  pterun_tokenizer_stream_destroy(
      (pterun_tokenizer_stream*)PyCapsule_GetPointer(cap, STREAM_CAPSULE));
  Py_XDECREF(owner); /* the tokenizer outlives its streams */
}

static pterun_tokenizer* tok_of(PyObject* cap) {
  return (pterun_tokenizer*)PyCapsule_GetPointer(cap, TOK_CAPSULE);
}

/* tokenizer_load(path) -> capsule */
PyObject* py_mod_tokenizer_load(PyObject* module, PyObject* arg) {
  py_state* st = (py_state*)PyModule_GetState(module);
  PyObject* bytes = NULL;
  pterun_tokenizer_options o = PTERUN_TOKENIZER_OPTIONS_INIT;
  pterun_tokenizer* tok = NULL;
  pterun_status s;
  const char* path;
  PyObject* cap;
  if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
  path = PyBytes_AsString(bytes);
  if (path == NULL) {
    Py_DECREF(bytes);
    return NULL;
  }
  o.logger = py_logger();
  py_log_reset();
  Py_BEGIN_ALLOW_THREADS s = pterun_tokenizer_load_file(path, &o, &tok);
  Py_END_ALLOW_THREADS if (s != PTERUN_STATUS_OK) {
    py_raise(st, s, "cannot load the tokenizer %s", path);
    Py_DECREF(bytes);
    return NULL;
  }
  Py_DECREF(bytes);
  cap = PyCapsule_New(tok, TOK_CAPSULE, tok_capsule_free);
  if (cap == NULL) pterun_tokenizer_destroy(tok);
  return cap;
}

/* tokenizer_info(tok) -> {"format", "vocab_size", "bos_id", "eos_id"} */
PyObject* py_mod_tokenizer_info(PyObject* module, PyObject* cap) {
  static const char* names[] = {"auto", "hf_json", "tiktoken", "sentencepiece"};
  pterun_tokenizer* tok = tok_of(cap);
  int f;
  (void)module;
  if (tok == NULL) return NULL;
  f = pterun_tokenizer_format_of(tok);
  return Py_BuildValue("{sssnsLsL}", "format", names[f >= 0 && f < 4 ? f : 0], "vocab_size",
                       (Py_ssize_t)pterun_tokenizer_vocab_size(tok), "bos_id",
                       (long long)pterun_tokenizer_bos_id(tok), "eos_id",
                       (long long)pterun_tokenizer_eos_id(tok));
}

/* tokenizer_encode(tok, text) -> [ids] */
PyObject* py_mod_tokenizer_encode(PyObject* module, PyObject* args) {
  py_state* st = (py_state*)PyModule_GetState(module);
  PyObject *cap, *text, *list;
  pterun_tokenizer* tok;
  const char* s;
  Py_ssize_t n;
  size_t count = 0, k;
  int64_t* ids;
  pterun_status rc;
  if (!PyArg_ParseTuple(args, "OU:tokenizer_encode", &cap, &text)) return NULL;
  if ((tok = tok_of(cap)) == NULL) return NULL;
  if ((s = PyUnicode_AsUTF8AndSize(text, &n)) == NULL) return NULL;
  py_log_reset();
  rc = pterun_tokenizer_encode(tok, s, (size_t)n, NULL, 0, &count);
  if (rc != PTERUN_STATUS_OK) return py_raise(st, rc, "cannot encode the text");
  ids = (int64_t*)malloc((count ? count : 1) * sizeof *ids);
  if (ids == NULL) return PyErr_NoMemory();
  Py_BEGIN_ALLOW_THREADS rc = pterun_tokenizer_encode(tok, s, (size_t)n, ids, count, &count);
  Py_END_ALLOW_THREADS if (rc != PTERUN_STATUS_OK) {
    free(ids);
    return py_raise(st, rc, "cannot encode the text");
  }
  list = PyList_New((Py_ssize_t)count);
  for (k = 0; list != NULL && k < count; ++k) {
    PyObject* v = PyLong_FromLongLong((long long)ids[k]);
    if (v == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SetItem(list, (Py_ssize_t)k, v);
  }
  free(ids);
  return list;
}

/* Token ids from a Python sequence (malloc'd). */
static int64_t* ids_from(PyObject* seq, size_t* n) {
  Py_ssize_t len = PySequence_Size(seq), k;
  int64_t* ids;
  if (len < 0) return NULL;
  ids = (int64_t*)malloc(((size_t)len + 1) * sizeof *ids);
  if (ids == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  for (k = 0; k < len; ++k) {
    PyObject* it = PySequence_GetItem(seq, k);
    long long v;
    if (it == NULL) {
      free(ids);
      return NULL;
    }
    v = PyLong_AsLongLong(it);
    Py_DECREF(it);
    if (v == -1 && PyErr_Occurred()) {
      free(ids);
      return NULL;
    }
    ids[k] = v;
  }
  *n = (size_t)len;
  return ids;
}

/* tokenizer_decode(tok, ids, special) -> str */
PyObject* py_mod_tokenizer_decode(PyObject* module, PyObject* args) {
  py_state* st = (py_state*)PyModule_GetState(module);
  PyObject *cap, *seq, *out;
  pterun_tokenizer* tok;
  int special;
  size_t n = 0, len = 0;
  int64_t* ids;
  char* buf;
  pterun_status rc;
  if (!PyArg_ParseTuple(args, "OOi:tokenizer_decode", &cap, &seq, &special)) return NULL;
  if ((tok = tok_of(cap)) == NULL) return NULL;
  if ((ids = ids_from(seq, &n)) == NULL) return NULL;
  py_log_reset();
  rc = pterun_tokenizer_decode(tok, ids, n, special, NULL, 0, &len);
  if (rc != PTERUN_STATUS_OK) {
    free(ids);
    return py_raise(st, rc, "cannot decode the ids");
  }
  buf = (char*)malloc(len + 1);
  if (buf == NULL) {
    free(ids);
    return PyErr_NoMemory();
  }
  rc = pterun_tokenizer_decode(tok, ids, n, special, buf, len + 1, &len);
  free(ids);
  if (rc != PTERUN_STATUS_OK) {
    free(buf);
    return py_raise(st, rc, "cannot decode the ids");
  }
  out = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "strict");
  free(buf);
  return out;
}

/* tokenizer_token_id(tok, text) -> int (-1: none) */
PyObject* py_mod_tokenizer_token_id(PyObject* module, PyObject* args) {
  PyObject *cap, *text;
  pterun_tokenizer* tok;
  const char* s;
  Py_ssize_t n;
  (void)module;
  if (!PyArg_ParseTuple(args, "OU:tokenizer_token_id", &cap, &text)) return NULL;
  if ((tok = tok_of(cap)) == NULL) return NULL;
  if ((s = PyUnicode_AsUTF8AndSize(text, &n)) == NULL) return NULL;
  return PyLong_FromLongLong((long long)pterun_tokenizer_token_id(tok, s, (size_t)n));
}

/* tokenizer_stream(tok, special) -> capsule */
PyObject* py_mod_tokenizer_stream(PyObject* module, PyObject* args) {
  py_state* st = (py_state*)PyModule_GetState(module);
  PyObject *cap, *out;
  pterun_tokenizer* tok;
  pterun_tokenizer_stream* s = NULL;
  int special;
  pterun_status rc;
  if (!PyArg_ParseTuple(args, "Oi:tokenizer_stream", &cap, &special)) return NULL;
  if ((tok = tok_of(cap)) == NULL) return NULL;
  if ((rc = pterun_tokenizer_stream_create(tok, special, &s)) != PTERUN_STATUS_OK)
    return py_raise(st, rc, "cannot create a decode stream");
  out = PyCapsule_New(s, STREAM_CAPSULE, stream_capsule_free);
  if (out == NULL) {
    pterun_tokenizer_stream_destroy(s);
    return NULL;
  }
  Py_INCREF(cap);
  if (PyCapsule_SetContext(out, cap) != 0) {
    Py_DECREF(cap);
    Py_DECREF(out);
    return NULL;
  }
  return out;
}

/* stream_push(stream, id) / stream_finish(stream) -> the newly complete text */
static PyObject* stream_step(PyObject* module, PyObject* cap, int finish, long long id) {
  py_state* st = (py_state*)PyModule_GetState(module);
  pterun_tokenizer_stream* s = (pterun_tokenizer_stream*)PyCapsule_GetPointer(cap, STREAM_CAPSULE);
  const char* p;
  size_t n;
  pterun_status rc;
  if (s == NULL) return NULL;
  py_log_reset();
  rc = finish ? pterun_tokenizer_stream_finish(s, &p, &n)
              : pterun_tokenizer_stream_push(s, (int64_t)id, &p, &n);
  if (rc != PTERUN_STATUS_OK) return py_raise(st, rc, "streaming decode failed");
  return PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
}

PyObject* py_mod_tokenizer_stream_push(PyObject* module, PyObject* args) {
  PyObject* cap;
  long long id;
  if (!PyArg_ParseTuple(args, "OL:tokenizer_stream_push", &cap, &id)) return NULL;
  return stream_step(module, cap, 0, id);
}

PyObject* py_mod_tokenizer_stream_finish(PyObject* module, PyObject* cap) {
  return stream_step(module, cap, 1, 0);
}
#endif
