/* pterun.Program: a verified .pte program and its external data files. */
#include <stdio.h>
#include <string.h>

#include "ptext.h"

/* Where a program's or data file's bytes come from. */
typedef struct py_source {
  PyObject* path; /* bytes (file system encoding), or NULL for a buffer */
  Py_buffer view; /* the buffer when path == NULL */
  int borrow;     /* 1: pterun may keep pointers into `view` (immutable, aligned bytes) */
} py_source;

/* Path-like (str, bytes path via os.PathLike) or bytes-like. Immutable,
 * 16-aligned `bytes` are borrowed (zero copy); other buffers are copied by
 * pterun because the caller could change them while the program lives. */
static int py_source_open(PyObject* obj, py_source* src) {
  memset(src, 0, sizeof *src);
  if (PyUnicode_Check(obj) ||
      (!PyObject_CheckBuffer(obj) && PyObject_HasAttrString(obj, "__fspath__"))) {
    return PyUnicode_FSConverter(obj, &src->path) ? 0 : -1;
  }
  if (!PyObject_CheckBuffer(obj)) {
    PyObject* tname = PyType_GetName(Py_TYPE(obj));
    if (tname != NULL) {
      PyErr_Format(PyExc_TypeError,
                   "expected a path (str or os.PathLike) or bytes-like object, got %U", tname);
      Py_DECREF(tname);
    }
    return -1;
  }
  if (PyObject_GetBuffer(obj, &src->view, PyBUF_C_CONTIGUOUS) != 0) return -1;
  src->borrow = PyBytes_CheckExact(obj) && ((uintptr_t)src->view.buf % 16u) == 0;
  return 0;
}

static void py_source_close(py_source* src) {
  Py_CLEAR(src->path);
  if (src->view.obj != NULL) PyBuffer_Release(&src->view);
}

static const char* py_source_name(const py_source* src) {
  return src->path ? PyBytes_AsString(src->path) : "<bytes>";
}

static void py_program_dealloc(PyObject* self) {
  py_program* p = (py_program*)self;
  PyTypeObject* tp = Py_TYPE(self);
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  size_t k;
  /* Methods hold a reference to their program: none is alive here. */
  pterun_program_destroy(p->program);
  pterun_bundle_destroy(p->bundle); /* after the program that borrows it */
  for (k = 0; k < p->data_count; ++k) pterun_data_destroy(p->data[k]);
  PyMem_Free(p->data);
  if (p->data_sources != NULL) {
    for (k = 0; k < p->data_count; ++k)
      if (p->data_sources[k].obj != NULL) PyBuffer_Release(&p->data_sources[k]);
    PyMem_Free(p->data_sources);
  }
  if (p->has_source) PyBuffer_Release(&p->source);
  Py_XDECREF(p->origin);
  tp_free(self);
  Py_DECREF(tp);
}

/* Loads one data file into p->data[k] (p->data_count is then k + 1). */
static int py_program_add_data(py_state* st, py_program* p, size_t k, PyObject* obj) {
  py_source src;
  pterun_load_options opts = PTERUN_LOAD_OPTIONS_INIT;
  pterun_status status;
  pterun_data* d = NULL;
  const char* path;

  if (py_source_open(obj, &src) != 0) return -1;
  opts.logger = py_logger();
  opts.copy = !src.borrow;
  path = src.path ? PyBytes_AsString(src.path) : NULL;
  Py_BEGIN_ALLOW_THREADS py_log_reset();
  status = path ? pterun_data_load_file(path, PTERUN_FILE_MMAP, &opts, &d)
                : pterun_data_load_buffer(src.view.buf, (size_t)src.view.len, &opts, &d);
  Py_END_ALLOW_THREADS if (status != PTERUN_STATUS_OK) {
    py_raise(st, status, "cannot load data file %s", py_source_name(&src));
    py_source_close(&src);
    return -1;
  }
  p->data[k] = d;
  p->data_count = k + 1;
  if (src.borrow) {
    p->data_sources[k] = src.view; /* moved: released with the program */
    src.view.obj = NULL;
  }
  py_source_close(&src);
  return 0;
}

/* 1 if the file or buffer starts with a bundled program's identifier. */
static int py_is_bundle(const char* path, const py_source* src) {
  unsigned char head[8];
  size_t n = 0;
  if (path == NULL) return pterun_is_bundled_program(src->view.buf, (size_t)src->view.len);
  FILE* f = fopen(path, "rb");
  if (f != NULL) {
    n = fread(head, 1, sizeof head, f);
    fclose(f);
  }
  return pterun_is_bundled_program(head, n);
}

PyObject* py_program_load(py_state* st, PyObject* source, PyObject* data_files) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(st->program_type, Py_tp_alloc);
  py_program* p = NULL;
  py_source src;
  pterun_load_options opts = PTERUN_LOAD_OPTIONS_INIT;
  pterun_status status;
  PyObject* files = NULL;
  const char* path;
  Py_ssize_t n = 0, k;

  if (py_source_open(source, &src) != 0) return NULL;
  if (data_files != NULL && data_files != Py_None) {
    if (PyUnicode_Check(data_files) || PyBytes_Check(data_files)) {
      PyErr_SetString(PyExc_TypeError, "data_files must be a sequence of paths or buffers");
      goto fail;
    }
    files = PySequence_Tuple(data_files);
    if (files == NULL) goto fail;
    n = PyTuple_Size(files);
  }
  p = (py_program*)alloc(st->program_type, 0);
  if (p == NULL) goto fail;
  p->origin = src.path ? PyUnicode_DecodeFSDefault(PyBytes_AsString(src.path))
                       : PyUnicode_FromString("<bytes>");
  if (p->origin == NULL) goto fail;
  opts.logger = py_logger();
  opts.copy = !src.borrow;
  path = src.path ? PyBytes_AsString(src.path) : NULL;
  Py_BEGIN_ALLOW_THREADS py_log_reset();
  if (py_is_bundle(path, &src)) {
    /* A bundled program: its embedded program is used in place. */
    pterun_load_options bo = opts;
    bo.copy = path == NULL; /* a caller's buffer need not be 32-aligned */
    status = path ? pterun_bundle_load_file(path, PTERUN_FILE_MMAP, &bo, &p->bundle)
                  : pterun_bundle_load_buffer(src.view.buf, (size_t)src.view.len, &bo, &p->bundle);
    if (status == PTERUN_STATUS_OK) {
      bo.copy = 0;
      status = pterun_bundle_program(p->bundle, &bo, &p->program);
    }
  } else {
    status =
        path ? pterun_program_load_file(path, PTERUN_FILE_MMAP, &opts, &p->program)
             : pterun_program_load_buffer(src.view.buf, (size_t)src.view.len, &opts, &p->program);
  }
  Py_END_ALLOW_THREADS if (status != PTERUN_STATUS_OK) {
    py_raise(st, status, "cannot load program %s", py_source_name(&src));
    goto fail;
  }
  if (src.borrow && p->bundle == NULL) {
    p->source = src.view; /* moved: the program keeps pointers into it */
    p->has_source = 1;
    src.view.obj = NULL;
  }

  if (n > 0) {
    p->data = (pterun_data**)PyMem_Calloc((size_t)n, sizeof *p->data);
    p->data_sources = (Py_buffer*)PyMem_Calloc((size_t)n, sizeof *p->data_sources);
    if (p->data == NULL || p->data_sources == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
    for (k = 0; k < n; ++k)
      if (py_program_add_data(st, p, (size_t)k, PyTuple_GetItem(files, k)) != 0) goto fail;
  }
  Py_XDECREF(files);
  py_source_close(&src);
  return (PyObject*)p;

fail:
  Py_XDECREF(files);
  Py_XDECREF((PyObject*)p);
  py_source_close(&src);
  return NULL;
}

/* ---- metadata -------------------------------------------------------------------- */

static const char* py_dynamism_name(int d) {
  switch (d) {
    case PTERUN_SHAPE_STATIC: return "static";
    case PTERUN_SHAPE_BOUNDED: return "bounded";
    case PTERUN_SHAPE_UNBOUNDED: return "unbounded";
    default: return "unknown";
  }
}

static PyObject* py_int64_tuple(const int64_t* v, int n) {
  PyObject* t = PyTuple_New(n);
  int k;
  if (t == NULL) return NULL;
  for (k = 0; k < n; ++k) {
    PyObject* x = PyLong_FromLongLong((long long)v[k]);
    if (x == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, k, x);
  }
  return t;
}

PyObject* py_io_info_dict(const pterun_io_info* io) {
  if (io->tag == PTERUN_VALUE_TENSOR) {
    int64_t order[PTERUN_MAX_RANK];
    int k;
    PyObject *shape, *dim_order;
    for (k = 0; k < io->rank; ++k) order[k] = io->dim_order[k];
    shape = py_int64_tuple(io->sizes, io->rank);
    dim_order = py_int64_tuple(order, io->rank);
    if (shape == NULL || dim_order == NULL) {
      Py_XDECREF(shape);
      Py_XDECREF(dim_order);
      return NULL;
    }
    return Py_BuildValue(
        "{s:s,s:s,s:N,s:N,s:s,s:O,s:K,s:O}", "kind", pterun_value_tag_name(io->tag), "dtype",
        pterun_dtype_name(io->dtype), "shape", shape, "dim_order", dim_order, "dynamism",
        py_dynamism_name(io->dynamism), "planned", io->planned ? Py_True : Py_False, "nbytes",
        (unsigned long long)io->nbytes, "value", Py_None);
  }
  {
    PyObject* value;
    switch (io->tag) {
      case PTERUN_VALUE_INT: value = PyLong_FromLongLong((long long)io->int_value); break;
      case PTERUN_VALUE_DOUBLE: value = PyFloat_FromDouble(io->double_value); break;
      case PTERUN_VALUE_BOOL: value = PyBool_FromLong(io->int_value != 0); break;
      default: value = Py_NewRef(Py_None); break;
    }
    if (value == NULL) return NULL;
    return Py_BuildValue("{s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:N}", "kind",
                         pterun_value_tag_name(io->tag), "dtype", Py_None, "shape", Py_None,
                         "dim_order", Py_None, "dynamism", Py_None, "planned", Py_None, "nbytes",
                         Py_None, "value", value);
  }
}

static int py_find_method(py_state* st, py_program* p, const char* name, size_t* index) {
  if (pterun_program_find_method(p->program, name, index) == PTERUN_STATUS_OK) return 0;
  py_log_reset();
  py_raise(st, PTERUN_STATUS_NOT_FOUND, "program %s has no method '%s'",
           PyUnicode_AsUTF8AndSize(p->origin, NULL), name);
  return -1;
}

static PyObject* py_program_method_meta(PyObject* self, PyObject* arg) {
  py_program* p = (py_program*)self;
  py_state* st = py_state_of_type(Py_TYPE(self));
  const char* name = PyUnicode_AsUTF8AndSize(arg, NULL);
  pterun_method_info mi;
  PyObject *inputs = NULL, *outputs = NULL, *ops = NULL, *planned = NULL, *res = NULL;
  pterun_status status;
  size_t index, k;

  if (name == NULL) return NULL;
  if (py_find_method(st, p, name, &index) != 0) return NULL;
  py_log_reset();
  if ((status = pterun_program_method_info(p->program, index, &mi)) != PTERUN_STATUS_OK)
    return py_raise(st, status, "cannot query method '%s'", name);
  inputs = PyList_New(0);
  outputs = PyList_New(0);
  ops = PyList_New(0);
  planned = PyList_New(0);
  if (!inputs || !outputs || !ops || !planned) goto done;
  for (k = 0; k < mi.input_count + mi.output_count; ++k) {
    pterun_io_info io;
    int is_in = k < mi.input_count;
    size_t i = is_in ? k : k - mi.input_count;
    PyObject* d;
    status = is_in ? pterun_program_method_input(p->program, index, i, &io)
                   : pterun_program_method_output(p->program, index, i, &io);
    if (status != PTERUN_STATUS_OK) {
      py_raise(st, status, "cannot query %s %zu of method '%s'", is_in ? "input" : "output", i,
               name);
      goto done;
    }
    d = py_io_info_dict(&io);
    if (d == NULL || PyList_Append(is_in ? inputs : outputs, d) != 0) {
      Py_XDECREF(d);
      goto done;
    }
    Py_DECREF(d);
  }
  for (k = 0; k < mi.operator_count; ++k) {
    const char *op = NULL, *overload = NULL;
    PyObject* t;
    if ((status = pterun_program_method_operator(p->program, index, k, &op, &overload)) !=
        PTERUN_STATUS_OK) {
      py_raise(st, status, "cannot query operator %zu of method '%s'", k, name);
      goto done;
    }
    t = Py_BuildValue("(ss)", op, overload ? overload : "");
    if (t == NULL || PyList_Append(ops, t) != 0) {
      Py_XDECREF(t);
      goto done;
    }
    Py_DECREF(t);
  }
  for (k = 0; k < mi.planned_buffer_count; ++k) {
    uint64_t size = 0;
    PyObject* v;
    if ((status = pterun_program_planned_buffer_size(p->program, index, k, &size)) !=
        PTERUN_STATUS_OK) {
      py_raise(st, status, "cannot query planned buffer %zu of method '%s'", k, name);
      goto done;
    }
    v = PyLong_FromUnsignedLongLong((unsigned long long)size);
    if (v == NULL || PyList_Append(planned, v) != 0) {
      Py_XDECREF(v);
      goto done;
    }
    Py_DECREF(v);
  }
  res = Py_BuildValue("{s:s,s:O,s:O,s:O,s:O,s:n,s:n,s:n}", "name", mi.name, "inputs", inputs,
                      "outputs", outputs, "operators", ops, "planned_buffer_sizes", planned,
                      "value_count", (Py_ssize_t)mi.value_count, "instruction_count",
                      (Py_ssize_t)mi.instruction_count, "delegate_count",
                      (Py_ssize_t)mi.delegate_count);
done:
  Py_XDECREF(inputs);
  Py_XDECREF(outputs);
  Py_XDECREF(ops);
  Py_XDECREF(planned);
  return res;
}

static PyObject* py_program_get_method_names(PyObject* self, void* closure) {
  py_program* p = (py_program*)self;
  size_t n = pterun_program_method_count(p->program), k;
  PyObject* t = PyTuple_New((Py_ssize_t)n);
  if (t == NULL) return NULL;
  for (k = 0; k < n; ++k) {
    PyObject* s = PyUnicode_FromString(pterun_program_method_name(p->program, k));
    if (s == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, (Py_ssize_t)k, s);
  }
  return t;
}

static PyObject* py_program_get_origin(PyObject* self, void* closure) {
  return Py_NewRef(((py_program*)self)->origin);
}

static PyObject* py_program_info(PyObject* self, PyObject* unused) {
  py_program* p = (py_program*)self;
  pterun_program_info info;
  pterun_program_get_info(p->program, &info);
  return Py_BuildValue(
      "{s:K,s:K,s:O,s:K,s:K,s:n,s:n,s:K,s:O,s:n,s:n,s:n,s:n}", "file_size",
      (unsigned long long)info.file_size, "program_size", (unsigned long long)info.program_size,
      "extended_header", info.has_extended_header ? Py_True : Py_False, "segment_base_offset",
      (unsigned long long)info.segment_base_offset, "segment_data_size",
      (unsigned long long)info.segment_data_size, "segment_count", (Py_ssize_t)info.segment_count,
      "constant_count", (Py_ssize_t)info.constant_count, "constant_bytes",
      (unsigned long long)info.constant_bytes, "legacy_constant_buffer",
      info.legacy_constant_buffer ? Py_True : Py_False, "mutable_data_count",
      (Py_ssize_t)info.mutable_data_count, "named_data_count", (Py_ssize_t)info.named_data_count,
      "method_count", (Py_ssize_t)info.method_count, "data_file_count", (Py_ssize_t)p->data_count);
}

static PyObject* py_program_load_method(PyObject* self, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"name", "profile_runs", "record_outputs", "threads", "no_fusion", NULL};
  py_state* st = py_state_of_type(Py_TYPE(self));
  const char* name;
  unsigned int runs = 0;
  int outputs = 0;
  Py_ssize_t threads = 0;
  int no_fusion = 0;
  size_t index;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|Ipnp:load_method", kwlist, &name, &runs,
                                   &outputs, &threads, &no_fusion))
    return NULL;
  if (threads < 0) {
    PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: every thread of the pool)");
    return NULL;
  }
  if (py_find_method(st, (py_program*)self, name, &index) != 0) return NULL;
  return py_method_load(st, (py_program*)self, name, runs, outputs, (size_t)threads, no_fusion);
}

void py_method_options(py_state* st, const py_program* p, pterun_method_options* o) {
  o->registry = st->registry;
  o->data = (const pterun_data* const*)p->data;
  o->data_count = p->data_count;
  o->logger = py_logger();
}

/* pterun_program_method_memory: the memory a load of method `name` would
 * allocate, by part, measured by a trial load (no method stays loaded). */
static PyObject* py_program_method_memory(PyObject* self, PyObject* arg) {
  py_state* st = py_state_of_type(Py_TYPE(self));
  py_program* p = (py_program*)self;
  pterun_method_options opts = PTERUN_METHOD_OPTIONS_INIT;
  pterun_method_memory_info mem = PTERUN_METHOD_MEMORY_INFO_INIT;
  pterun_status status;
  size_t index;
  const char* name = PyUnicode_AsUTF8AndSize(arg, NULL);
  if (name == NULL) return NULL;
  if (py_find_method(st, p, name, &index) != 0) return NULL;
  py_method_options(st, p, &opts);
  Py_BEGIN_ALLOW_THREADS py_log_reset();
  status = pterun_program_method_memory(p->program, name, &opts, &mem);
  Py_END_ALLOW_THREADS if (status != PTERUN_STATUS_OK) return py_raise(
      st, status, "cannot size method '%s' of %s", name, PyUnicode_AsUTF8AndSize(p->origin, NULL));
  return Py_BuildValue(
      "{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "runtime_bytes", (Py_ssize_t)mem.runtime_bytes,
      "planned_bytes", (Py_ssize_t)mem.planned_bytes, "prepared_bytes",
      (Py_ssize_t)mem.prepared_bytes, "delegate_bytes", (Py_ssize_t)mem.delegate_bytes,
      "folded_bytes", (Py_ssize_t)mem.folded_bytes, "scratch_bytes", (Py_ssize_t)mem.scratch_bytes,
      "fused_result_bytes", (Py_ssize_t)mem.fused_result_bytes, "load_peak_bytes",
      (Py_ssize_t)mem.load_peak_bytes);
}

/* [(method name, case count), ...] of a bundled program; None otherwise. */
static PyObject* py_program_bundle_suites(PyObject* self, PyObject* unused) {
  py_program* p = (py_program*)self;
  size_t n, k;
  PyObject* list;
  if (p->bundle == NULL) Py_RETURN_NONE;
  n = pterun_bundle_suite_count(p->bundle);
  list = PyList_New(0);
  for (k = 0; list != NULL && k < n; ++k) {
    const char* name = NULL;
    size_t cases = 0;
    PyObject* t;
    if (pterun_bundle_suite(p->bundle, k, &name, &cases) != PTERUN_STATUS_OK) continue;
    t = Py_BuildValue("(sn)", name, (Py_ssize_t)cases);
    if (t == NULL || PyList_Append(list, t) != 0) {
      Py_XDECREF(t);
      Py_CLEAR(list);
      break;
    }
    Py_DECREF(t);
  }
  return list;
}

static PyObject* py_program_repr(PyObject* self) {
  py_program* p = (py_program*)self;
  return PyUnicode_FromFormat("<pterun.Program %U, %zu method(s)>", p->origin,
                              pterun_program_method_count(p->program));
}

static PyMethodDef py_program_methods[] = {
    {"load_method", (PyCFunction)(void (*)(void))py_program_load_method,
     METH_VARARGS | METH_KEYWORDS,
     "load_method(name, profile_runs=0, record_outputs=False, threads=0) -> Method: resolve "
     "every operator of method `name`; profile_runs > 0 attaches a profiler; threads caps the "
     "threads per kernel (0: the whole pool, 1: the calling thread)."},
    {"bundle_suites", py_program_bundle_suites, METH_NOARGS,
     "bundle_suites() -> [(method, cases)] of a bundled program, or None."},
    {"method_meta", py_program_method_meta, METH_O,
     "method_meta(name) -> dict describing the method's inputs, outputs and operators."},
    {"info", py_program_info, METH_NOARGS, "info() -> dict of container facts."},
    {"method_memory", py_program_method_memory, METH_O,
     "method_memory(name) -> dict: the bytes a load of method `name` would allocate, by part "
     "(a trial load; nothing stays loaded)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef py_program_getset[] = {
    {"method_names", py_program_get_method_names, NULL, "Names of the methods, in order.", NULL},
    {"origin", py_program_get_origin, NULL, "The path it was loaded from, or '<bytes>'.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot py_program_slots[] = {
    {Py_tp_doc, (void*)"A verified ExecuTorch program (use pterun.Runtime.load_program)."},
    {Py_tp_dealloc, (void*)py_program_dealloc},
    {Py_tp_repr, (void*)py_program_repr},
    {Py_tp_methods, py_program_methods},
    {Py_tp_getset, py_program_getset},
    {0, NULL},
};

PyType_Spec py_program_spec = {
    .name = "pterun._pterun.Program",
    .basicsize = sizeof(py_program),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = py_program_slots,
};
