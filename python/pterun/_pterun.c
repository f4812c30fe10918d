/* pterun._pterun: the CPython extension behind the `pterun` package.
 *
 * Multi-phase initialisation; the module state holds pterun.Error and the
 * heap types (Program, Method, Tensor). At import, every kernel library the
 * wheel ships (packaging/components.json, "python_links") is added to the
 * process's default registry, the one C code in the same process uses too.
 * The extension links libpterun and the kernel libraries and defines none of
 * their symbols. */
#include "ptext.h"

#include "pterun/optimize.h"

#include "pt_components.h" /* generated: PT_KERNEL_LIBRARIES(X) */

py_state* py_state_of_type(PyTypeObject* type) {
  return (py_state*)PyType_GetModuleState(type);
}

static py_state* py_state_of(PyObject* module) {
  return (py_state*)PyModule_GetState(module);
}

/* ---- module functions ------------------------------------------------------------ */

static PyObject* py_mod_load_program(PyObject* module, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"source", "data_files", NULL};
  PyObject *source, *data_files = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:load_program", kwlist, &source, &data_files))
    return NULL;
  return py_program_load(py_state_of(module), source, data_files);
}

/* [(operator, component), ...] in registration order. */
static PyObject* py_mod_kernels(PyObject* module, PyObject* unused) {
  py_state* st = py_state_of(module);
  size_t n = pterun_registry_count(st->registry), k;
  PyObject* list = PyList_New(0);
  if (list == NULL) return NULL;
  for (k = 0; k < n; ++k) {
    const char *op = NULL, *component = NULL;
    PyObject* t;
    if (pterun_registry_get(st->registry, k, &op, &component) != PTERUN_STATUS_OK)
      continue; /* the registry only grows: k < count stays valid */
    t = Py_BuildValue("(ss)", op, component ? component : "");
    if (t == NULL || PyList_Append(list, t) != 0) {
      Py_XDECREF(t);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(t);
  }
  return list;
}

static PyObject* py_mod_component_for_op(PyObject* module, PyObject* arg) {
  const char* op = PyUnicode_AsUTF8AndSize(arg, NULL);
  const char* c;
  if (op == NULL) return NULL;
  c = pterun_component_for_op(op);
  if (c == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(c);
}

static PyObject* py_mod_status_names(PyObject* module, PyObject* unused) {
  PyObject* d = PyDict_New();
  int s;
  if (d == NULL) return NULL;
  for (s = 0; s < PTERUN_STATUS_COUNT_; ++s) {
    PyObject* k = PyLong_FromLong(s);
    PyObject* v = PyUnicode_FromString(pterun_status_name((pterun_status)s));
    int rc = (k && v) ? PyDict_SetItem(d, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    if (rc != 0) {
      Py_DECREF(d);
      return NULL;
    }
  }
  return d;
}

#ifdef PT_HAVE_TEXTGEN
PyObject* py_mod_llm_generate(PyObject* module, PyObject* args); /* src/llm.c */
/* src/tokenizer.c */
PyObject* py_mod_tokenizer_load(PyObject* module, PyObject* arg);
PyObject* py_mod_tokenizer_info(PyObject* module, PyObject* cap);
PyObject* py_mod_tokenizer_encode(PyObject* module, PyObject* args);
PyObject* py_mod_tokenizer_decode(PyObject* module, PyObject* args);
PyObject* py_mod_tokenizer_token_id(PyObject* module, PyObject* args);
PyObject* py_mod_tokenizer_stream(PyObject* module, PyObject* args);
PyObject* py_mod_tokenizer_stream_push(PyObject* module, PyObject* args);
PyObject* py_mod_tokenizer_stream_finish(PyObject* module, PyObject* cap);
#endif

static PyMethodDef py_mod_methods[] = {
    {"load_program", (PyCFunction)(void (*)(void))py_mod_load_program, METH_VARARGS | METH_KEYWORDS,
     "load_program(source, data_files=None) -> Program\n\n"
     "source: a path (str or os.PathLike, memory-mapped) or a bytes-like object.\n"
     "data_files: paths or bytes-like objects of external data (.ptd) files."},
    {"kernels", py_mod_kernels, METH_NOARGS,
     "kernels() -> [(operator, key, component)] of the registry pterun uses."},
    {"component_for_op", py_mod_component_for_op, METH_O,
     "component_for_op(op) -> the pterun component whose operator namespace covers op, or None."},
    {"status_names", py_mod_status_names, METH_NOARGS, "status_names() -> {code: name}."},
#ifdef PT_HAVE_TEXTGEN
    {"llm_generate", py_mod_llm_generate, METH_VARARGS,
     "llm_generate(program, prompt, max_new_tokens, temperature, top_k, top_p, seed, "
     "ignore_eos, stop_tokens, return_logits, bos, on_token) -> dict (see pterun.llm.generate)."},
    {"tokenizer_load", py_mod_tokenizer_load, METH_O, "tokenizer_load(path) -> tokenizer capsule"},
    {"tokenizer_info", py_mod_tokenizer_info, METH_O, "tokenizer_info(tok) -> dict"},
    {"tokenizer_encode", py_mod_tokenizer_encode, METH_VARARGS,
     "tokenizer_encode(tok, text) -> [ids]"},
    {"tokenizer_decode", py_mod_tokenizer_decode, METH_VARARGS,
     "tokenizer_decode(tok, ids, special) -> str"},
    {"tokenizer_token_id", py_mod_tokenizer_token_id, METH_VARARGS,
     "tokenizer_token_id(tok, text) -> int"},
    {"tokenizer_stream", py_mod_tokenizer_stream, METH_VARARGS,
     "tokenizer_stream(tok, special) -> stream capsule"},
    {"tokenizer_stream_push", py_mod_tokenizer_stream_push, METH_VARARGS,
     "tokenizer_stream_push(stream, id) -> str"},
    {"tokenizer_stream_finish", py_mod_tokenizer_stream_finish, METH_O,
     "tokenizer_stream_finish(stream) -> str"},
#endif
    {NULL, NULL, 0, NULL},
};

/* ---- initialisation --------------------------------------------------------------- */

static int py_add_type(PyObject* module, PyType_Spec* spec, PyTypeObject** out, const char* attr) {
  PyObject* t = PyType_FromModuleAndSpec(module, spec, NULL);
  if (t == NULL) return -1;
  *out = (PyTypeObject*)t;
  return PyModule_AddObjectRef(module, attr, t);
}

static int py_exec(PyObject* module) {
  py_state* st = py_state_of(module);
  unsigned linked = pterun_version_number();
  pterun_status status;

  if (linked != PTERUN_VERSION_NUMBER) {
    PyErr_Format(PyExc_ImportError,
                 "pterun._pterun was built against pterun %s but loaded libpterun %s; "
                 "reinstall the pterun wheel",
                 PTERUN_VERSION_STRING, pterun_version_string());
    return -1;
  }
  st->error = py_error_type_new(module);
  if (st->error == NULL || PyModule_AddObjectRef(module, "Error", st->error) != 0) return -1;
  if (py_add_type(module, &py_tensor_spec, &st->tensor_type, "Tensor") != 0 ||
      py_add_type(module, &py_program_spec, &st->program_type, "Program") != 0 ||
      py_add_type(module, &py_method_spec, &st->method_type, "Method") != 0)
    return -1;

  st->registry = pterun_registry_default();
  if (st->registry == NULL) {
    PyErr_SetString(PyExc_MemoryError, "pterun: cannot create the default operator registry");
    return -1;
  }
#define PT_ADD_LIBRARY(entry)                                                                      \
  do {                                                                                             \
    const pterun_kernel_library* lib_ = entry();                                                   \
    py_log_reset();                                                                                \
    status = pterun_registry_add(st->registry, lib_);                                              \
    if (status != PTERUN_STATUS_OK) {                                                              \
      py_raise(st, status, "cannot register the kernel library %s (%s)",                           \
               lib_ && lib_->component ? lib_->component : "?", #entry);                           \
      return -1;                                                                                   \
    }                                                                                              \
  } while (0);
  PT_KERNEL_LIBRARIES(PT_ADD_LIBRARY)
#undef PT_ADD_LIBRARY
  /* Folding and fusion, as the CLI (fusion=False turns fusion off per method). */
  status = pterun_registry_set_optimizer(st->registry, pterun_optimizer_default());
  if (status != PTERUN_STATUS_OK) {
    py_raise(st, status, "cannot attach the load-time optimiser");
    return -1;
  }
#define PT_ADD_BACKEND(entry)                                                                      \
  do {                                                                                             \
    py_log_reset();                                                                                \
    status = pterun_registry_add_backend(st->registry, entry());                                   \
    if (status != PTERUN_STATUS_OK) {                                                              \
      py_raise(st, status, "cannot register the backend %s", #entry);                              \
      return -1;                                                                                   \
    }                                                                                              \
  } while (0);
  PT_BACKENDS(PT_ADD_BACKEND)
#undef PT_ADD_BACKEND

  if (PyModule_AddStringConstant(module, "LIBRARY_VERSION", pterun_version_string()) != 0 ||
      PyModule_AddIntConstant(module, "LIBRARY_VERSION_NUMBER", (long)linked) != 0 ||
      PyModule_AddStringConstant(module, "HEADER_VERSION", PTERUN_VERSION_STRING) != 0 ||
      PyModule_AddIntConstant(module, "MAX_RANK", PTERUN_MAX_RANK) != 0)
    return -1;
  {
    static const char* components[] = {
#define PT_NAME(name) name,
        PT_COMPONENT_NAMES(PT_NAME)
#undef PT_NAME
    };
    size_t n = sizeof components / sizeof components[0], k;
    PyObject* t = PyTuple_New((Py_ssize_t)n);
    if (t == NULL) return -1;
    for (k = 0; k < n; ++k) {
      PyObject* s = PyUnicode_FromString(components[k]);
      if (s == NULL) {
        Py_DECREF(t);
        return -1;
      }
      PyTuple_SetItem(t, (Py_ssize_t)k, s);
    }
    if (PyModule_AddObjectRef(module, "COMPONENTS", t) != 0) {
      Py_DECREF(t);
      return -1;
    }
    Py_DECREF(t);
  }
  return 0;
}

static int py_traverse(PyObject* module, visitproc visit, void* arg) {
  py_state* st = py_state_of(module);
  Py_VISIT(st->error);
  Py_VISIT(st->program_type);
  Py_VISIT(st->method_type);
  Py_VISIT(st->tensor_type);
  return 0;
}

static int py_clear(PyObject* module) {
  py_state* st = py_state_of(module);
  Py_CLEAR(st->error);
  Py_CLEAR(st->program_type);
  Py_CLEAR(st->method_type);
  Py_CLEAR(st->tensor_type);
  return 0;
}

static void py_free(void* module) {
  py_state* st = py_state_of((PyObject*)module);
  py_clear((PyObject*)module);
  pterun_threadpool_destroy(st->pool); /* every method (which keeps the module alive) is gone */
  st->pool = NULL;
}

static PyModuleDef_Slot py_slots[] = {
    {Py_mod_exec, (void*)py_exec},
    {0, NULL},
};

static struct PyModuleDef py_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pterun._pterun",
    .m_doc = "pterun's C extension (use the pterun package).",
    .m_size = sizeof(py_state),
    .m_methods = py_mod_methods,
    .m_slots = py_slots,
    .m_traverse = py_traverse,
    .m_clear = py_clear,
    .m_free = py_free,
};

PyMODINIT_FUNC PyInit__pterun(void) {
  return PyModuleDef_Init(&py_module);
}
