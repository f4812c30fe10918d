/* pterun.Method: one loaded method; execute() binds inputs, runs and copies
 * the outputs out, with the GIL released. */
#include <stdlib.h>
#include <string.h>

#include "ptext.h"

typedef struct py_method {
  PyObject_HEAD pterun_method* method;
  py_program* program;     /* strong reference: the program outlives its methods */
  PyObject* name;          /* str */
  PyThread_type_lock lock; /* one execute at a time (pterun_method is not thread-safe) */
  size_t input_count;
  size_t output_count;
  pterun_io_info* inputs;    /* input_count entries */
  PyObject* last_copies;     /* tuple of bools: which inputs the last execute copied */
  pterun_profiler* profiler; /* attached at load, or NULL */
  int64_t bundle_case;       /* bundled case the last run_bundled_case ran, -1 none */
} py_method;

/* ---- outputs, copied without the GIL --------------------------------------------- */

typedef struct py_out {
  int32_t tag;
  int64_t i;
  double d;
  int b;
  /* TENSOR */
  void* data;
  size_t nbytes;
  int32_t dtype;
  int rank;
  int64_t sizes[PTERUN_MAX_RANK];
  /* STRING */
  char* str;
  size_t len;
  /* LIST_*: n items in ints / doubles / bools / items */
  size_t n;
  int64_t* ints;
  double* doubles;
  uint8_t* bools;
  struct py_out* items; /* LIST_TENSOR / LIST_OPTIONAL_TENSOR: TENSOR or NONE entries */
} py_out;

static void py_out_free(py_out* o) {
  size_t k;
  free(o->data);
  free(o->str);
  free(o->ints);
  free(o->doubles);
  free(o->bools);
  if (o->items != NULL)
    for (k = 0; k < o->n; ++k) py_out_free(&o->items[k]);
  free(o->items);
  memset(o, 0, sizeof *o);
}

static pterun_status py_out_tensor(const pterun_tensor* t, py_out* o) {
  size_t itemsize = pterun_dtype_size(t->dtype);
  size_t numel = (size_t)t->numel, nbytes = numel * itemsize;
  int k;
  if (itemsize == 0 || t->rank > PTERUN_MAX_RANK || (numel > 0 && t->data == NULL))
    return PTERUN_STATUS_INTERNAL;
  o->tag = PTERUN_VALUE_TENSOR;
  o->dtype = t->dtype;
  o->rank = t->rank;
  for (k = 0; k < t->rank; ++k) o->sizes[k] = t->sizes[k];
  o->nbytes = nbytes;
  o->data = malloc(nbytes ? nbytes : 1);
  if (o->data == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (numel == 0) return PTERUN_STATUS_OK;
  if (pterun_tensor_is_contiguous(t) || numel == 1) {
    memcpy(o->data, t->data, nbytes);
  } else { /* logical row-major order, as NumPy and the CLI's .npy files have it */
    int64_t src_b[PTERUN_MAX_RANK], dst_b[PTERUN_MAX_RANK], el[PTERUN_MAX_RANK];
    pterun_dim_order_strides((uint32_t)(t->rank), t->sizes, NULL, el);
    for (k = 0; k < t->rank; ++k) {
      src_b[k] = t->strides[k] * (int64_t)itemsize;
      dst_b[k] = el[k] * (int64_t)itemsize;
    }
    py_strided_copy(o->data, dst_b, t->data, src_b, t->rank, t->sizes, itemsize);
  }
  return PTERUN_STATUS_OK;
}

static pterun_status py_out_copy(pterun_value* v, py_out* o) {
  size_t k, n;
  memset(o, 0, sizeof *o);
  o->tag = v->tag;
  switch (v->tag) {
    case PTERUN_VALUE_NONE: return PTERUN_STATUS_OK;
    case PTERUN_VALUE_INT: o->i = v->u.i; return PTERUN_STATUS_OK;
    case PTERUN_VALUE_DOUBLE: o->d = v->u.d; return PTERUN_STATUS_OK;
    case PTERUN_VALUE_BOOL: o->b = v->u.b != 0; return PTERUN_STATUS_OK;
    case PTERUN_VALUE_TENSOR:
      if (v->u.tensor == NULL) return PTERUN_STATUS_INTERNAL;
      return py_out_tensor(v->u.tensor, o);
    case PTERUN_VALUE_STRING:
      o->len = v->u.str.len;
      o->str = (char*)malloc(o->len + 1);
      if (o->str == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      if (o->len) memcpy(o->str, v->u.str.data, o->len);
      o->str[o->len] = '\0';
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_LIST_INT: {
      const int64_t* items = pterun_value_int_list(v, &n);
      o->n = n;
      o->ints = (int64_t*)malloc((n ? n : 1) * sizeof *o->ints);
      if (o->ints == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      if (n) memcpy(o->ints, items, n * sizeof *o->ints);
      return PTERUN_STATUS_OK;
    }
    case PTERUN_VALUE_LIST_DOUBLE:
      n = o->n = v->u.doubles.len;
      o->doubles = (double*)malloc((n ? n : 1) * sizeof *o->doubles);
      if (o->doubles == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      if (n) memcpy(o->doubles, v->u.doubles.items, n * sizeof *o->doubles);
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_LIST_BOOL:
      n = o->n = v->u.bools.len;
      o->bools = (uint8_t*)malloc(n ? n : 1);
      if (o->bools == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      if (n) memcpy(o->bools, v->u.bools.items, n);
      return PTERUN_STATUS_OK;
    case PTERUN_VALUE_LIST_TENSOR:
    case PTERUN_VALUE_LIST_OPTIONAL_TENSOR:
      n = o->n = v->u.tensors.len;
      o->items = (py_out*)calloc(n ? n : 1, sizeof *o->items);
      if (o->items == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
      for (k = 0; k < n; ++k) {
        pterun_tensor* t = pterun_value_list_tensor(v, k);
        pterun_status s;
        if (t == NULL) {
          o->items[k].tag = PTERUN_VALUE_NONE;
          continue;
        }
        if ((s = py_out_tensor(t, &o->items[k])) != PTERUN_STATUS_OK) return s;
      }
      return PTERUN_STATUS_OK;
    default: return PTERUN_STATUS_NOT_SUPPORTED;
  }
}

/* Python object for a copied output; moves tensor memory into pterun.Tensor. */
static PyObject* py_out_to_py(py_state* st, py_out* o) {
  PyObject* list;
  size_t k;
  switch (o->tag) {
    case PTERUN_VALUE_NONE: Py_RETURN_NONE;
    case PTERUN_VALUE_INT: return PyLong_FromLongLong((long long)o->i);
    case PTERUN_VALUE_DOUBLE: return PyFloat_FromDouble(o->d);
    case PTERUN_VALUE_BOOL: return PyBool_FromLong(o->b);
    case PTERUN_VALUE_TENSOR: {
      void* data = o->data;
      o->data = NULL; /* py_tensor_new owns it from here, even on failure */
      return py_tensor_new(st, o->dtype, o->rank, o->sizes, data, o->nbytes);
    }
    case PTERUN_VALUE_STRING: return PyUnicode_DecodeUTF8(o->str, (Py_ssize_t)o->len, "replace");
    default: break;
  }
  list = PyList_New((Py_ssize_t)o->n);
  if (list == NULL) return NULL;
  for (k = 0; k < o->n; ++k) {
    PyObject* x;
    switch (o->tag) {
      case PTERUN_VALUE_LIST_INT: x = PyLong_FromLongLong((long long)o->ints[k]); break;
      case PTERUN_VALUE_LIST_DOUBLE: x = PyFloat_FromDouble(o->doubles[k]); break;
      case PTERUN_VALUE_LIST_BOOL: x = PyBool_FromLong(o->bools[k] != 0); break;
      default: x = py_out_to_py(st, &o->items[k]); break;
    }
    if (x == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, (Py_ssize_t)k, x); /* steals x */
  }
  return list;
}

/* ---- the type ------------------------------------------------------------------------ */

PyObject* py_method_load(py_state* st, py_program* program, const char* name, unsigned profile_runs,
                         int record_outputs, size_t threads, int no_fusion) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(st->method_type, Py_tp_alloc);
  pterun_method_options opts = PTERUN_METHOD_OPTIONS_INIT;
  pterun_status status = PTERUN_STATUS_OK;
  pterun_method* m = NULL;
  py_method* self;
  size_t index, k;

  if (pterun_program_find_method(program->program, name, &index) != PTERUN_STATUS_OK) {
    py_log_reset();
    return py_raise(st, PTERUN_STATUS_NOT_FOUND, "no method '%s'", name);
  }
  self = (py_method*)alloc(st->method_type, 0);
  if (self == NULL) return NULL;
  self->program = (py_program*)Py_NewRef((PyObject*)program);
  self->name = PyUnicode_FromString(name);
  self->lock = PyThread_allocate_lock();
  self->last_copies = PyTuple_New(0);
  if (self->name == NULL || self->last_copies == NULL) goto fail;
  if (self->lock == NULL) {
    PyErr_NoMemory();
    goto fail;
  }

  self->bundle_case = -1;
  if (profile_runs > 0) {
    pterun_profiler_options po = PTERUN_PROFILER_OPTIONS_INIT;
    po.max_runs = profile_runs;
    po.record_outputs = record_outputs;
    status = pterun_profiler_create(&po, &self->profiler);
    if (status != PTERUN_STATUS_OK) {
      py_log_reset();
      py_raise(st, status, "cannot create a profiler");
      goto fail;
    }
  }
  opts.profiler = self->profiler;
  /* One pool for the process, started by the first method that wants threads
   * (under the GIL, so only once); its size is the CPUs this process may use. */
  if (threads != 1 && st->pool == NULL) {
    status = pterun_threadpool_create(NULL, &st->pool);
    if (status != PTERUN_STATUS_OK) {
      py_raise(st, status, "cannot start the thread pool");
      goto fail;
    }
  }
  opts.threadpool = threads != 1 ? st->pool : NULL;
  opts.max_threads = threads;
  opts.no_fusion = no_fusion;
  py_method_options(st, program, &opts);
  Py_BEGIN_ALLOW_THREADS py_log_reset();
  status = pterun_method_load(program->program, name, &opts, &m);
  Py_END_ALLOW_THREADS if (status != PTERUN_STATUS_OK) {
    py_raise(st, status, "cannot load method '%s' of %s", name,
             PyUnicode_AsUTF8AndSize(program->origin, NULL));
    goto fail;
  }
  self->method = m;
  self->input_count = pterun_method_input_count(m);
  self->output_count = pterun_method_output_count(m);
  self->inputs = (pterun_io_info*)PyMem_Calloc(self->input_count ? self->input_count : 1,
                                               sizeof(pterun_io_info));
  if (self->inputs == NULL) {
    PyErr_NoMemory();
    goto fail;
  }
  for (k = 0; k < self->input_count; ++k) {
    py_log_reset();
    status = pterun_program_method_input(program->program, index, k, &self->inputs[k]);
    if (status != PTERUN_STATUS_OK) {
      py_raise(st, status, "cannot query input %zu of method '%s'", k, name);
      goto fail;
    }
  }
  return (PyObject*)self;

fail:
  Py_DECREF((PyObject*)self);
  return NULL;
}

static void py_method_dealloc(PyObject* obj) {
  py_method* self = (py_method*)obj;
  PyTypeObject* tp = Py_TYPE(obj);
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  pterun_method_destroy(self->method); /* before the program it came from */
  pterun_profiler_destroy(self->profiler);
  if (self->lock != NULL) PyThread_free_lock(self->lock);
  PyMem_Free(self->inputs);
  Py_XDECREF(self->name);
  Py_XDECREF(self->last_copies);
  Py_XDECREF((PyObject*)self->program);
  tp_free(obj);
  Py_DECREF(tp);
}

enum py_phase { PT_PHASE_BIND, PT_PHASE_EXECUTE, PT_PHASE_OUTPUT };

static PyObject* py_method_execute(PyObject* obj, PyObject* arg) {
  py_method* self = (py_method*)obj;
  py_state* st = py_state_of_type(Py_TYPE(obj));
  const char* name = PyUnicode_AsUTF8AndSize(self->name, NULL);
  PyObject *args = NULL, *result = NULL, *copies = NULL;
  py_input* ins = NULL;
  py_out* outs = NULL;
  size_t n, k, prepared = 0, failed_at = 0, nout = self->output_count;
  pterun_status status = PTERUN_STATUS_OK;
  enum py_phase phase = PT_PHASE_BIND;

  if (name == NULL) return NULL;
  if (PyUnicode_Check(arg) || PyBytes_Check(arg) || PyObject_CheckBuffer(arg) ||
      PyObject_HasAttrString(arg, "__dlpack__")) {
    PyErr_SetString(PyExc_TypeError,
                    "inputs must be a sequence (list or tuple) with one entry per method input; "
                    "for a single tensor x pass [x]");
    return NULL;
  }
  args = PySequence_Tuple(arg);
  if (args == NULL) return NULL;
  n = (size_t)PyTuple_Size(args);
  if (n != self->input_count) {
    py_log_reset();
    py_raise(st, PTERUN_STATUS_INPUT_MISMATCH, "method '%s' has %zu input%s but %zu %s given", name,
             self->input_count, self->input_count == 1 ? "" : "s", n, n == 1 ? "was" : "were");
    goto done;
  }
  ins = (py_input*)PyMem_Calloc(n ? n : 1, sizeof *ins);
  copies = PyTuple_New((Py_ssize_t)n);
  if (ins == NULL || copies == NULL) {
    if (ins == NULL) PyErr_NoMemory();
    goto done;
  }
  for (k = 0; k < n; ++k) {
    py_log_reset();
    prepared = k + 1; /* a failed prepare still needs its release */
    if (py_input_prepare(st, PyTuple_GetItem(args, (Py_ssize_t)k), k, &self->inputs[k], &ins[k]) !=
        0)
      goto done;
    PyTuple_SetItem(copies, (Py_ssize_t)k, PyBool_FromLong(ins[k].copied));
  }

  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(self->lock, WAIT_LOCK);
  py_log_reset();
  for (k = 0; k < n && status == PTERUN_STATUS_OK; ++k) {
    status = py_input_bind(self->method, k, &ins[k]);
    failed_at = k;
  }
  if (status == PTERUN_STATUS_OK) {
    phase = PT_PHASE_EXECUTE;
    status = pterun_method_execute(self->method);
  }
  if (status == PTERUN_STATUS_OK) {
    phase = PT_PHASE_OUTPUT;
    outs = (py_out*)calloc(nout ? nout : 1, sizeof *outs);
    if (outs == NULL) status = PTERUN_STATUS_OUT_OF_MEMORY;
    for (k = 0; k < nout && status == PTERUN_STATUS_OK; ++k) {
      const pterun_value* v = NULL;
      failed_at = k;
      status = pterun_method_output(self->method, k, &v);
      if (status == PTERUN_STATUS_OK)
        status = v != NULL ? py_out_copy((pterun_value*)v, &outs[k]) : PTERUN_STATUS_INTERNAL;
    }
  }
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS

  {
    PyObject* old = self->last_copies;
    self->last_copies = Py_NewRef(copies);
    Py_XDECREF(old);
  }
  if (status != PTERUN_STATUS_OK) {
    switch (phase) {
      case PT_PHASE_BIND:
        py_raise(st, status, "method '%s': cannot set input %zu", name, failed_at);
        break;
      case PT_PHASE_EXECUTE: py_raise(st, status, "method '%s': execute failed", name); break;
      case PT_PHASE_OUTPUT:
        py_raise(st, status, "method '%s': cannot read output %zu", name, failed_at);
        break;
    }
    goto done;
  }
  result = PyList_New((Py_ssize_t)nout);
  if (result == NULL) goto done;
  for (k = 0; k < nout; ++k) {
    PyObject* x = py_out_to_py(st, &outs[k]);
    if (x == NULL) {
      Py_CLEAR(result);
      goto done;
    }
    PyList_SetItem(result, (Py_ssize_t)k, x);
  }

done:
  if (outs != NULL) {
    for (k = 0; k < nout; ++k) py_out_free(&outs[k]);
    free(outs);
  }
  for (k = 0; k < prepared; ++k) py_input_release(&ins[k]);
  PyMem_Free(ins);
  Py_XDECREF(copies);
  Py_XDECREF(args);
  return result;
}

static PyObject* py_method_get_name(PyObject* obj, void* closure) {
  return Py_NewRef(((py_method*)obj)->name);
}
static PyObject* py_method_get_input_count(PyObject* obj, void* closure) {
  return PyLong_FromSize_t(((py_method*)obj)->input_count);
}
static PyObject* py_method_get_output_count(PyObject* obj, void* closure) {
  return PyLong_FromSize_t(((py_method*)obj)->output_count);
}
static PyObject* py_method_get_last_copies(PyObject* obj, void* closure) {
  return Py_NewRef(((py_method*)obj)->last_copies);
}
static PyObject* py_method_get_program(PyObject* obj, void* closure) {
  return Py_NewRef((PyObject*)((py_method*)obj)->program);
}

static PyObject* py_method_memory(PyObject* obj, PyObject* unused) {
  size_t runtime_bytes = 0, planned_bytes = 0;
  pterun_method_memory(((py_method*)obj)->method, &runtime_bytes, &planned_bytes);
  return Py_BuildValue("(nn)", (Py_ssize_t)runtime_bytes, (Py_ssize_t)planned_bytes);
}

static PyObject* py_method_repr(PyObject* obj) {
  py_method* self = (py_method*)obj;
  return PyUnicode_FromFormat("<pterun.Method %U: %zu input(s), %zu output(s)>", self->name,
                              self->input_count, self->output_count);
}

/* ---- profiling and bundled test cases ------------------------------------------ */

static pterun_profiler* py_need_profiler(py_method* self) {
  if (self->profiler == NULL) {
    py_state* st = py_state_of_type(Py_TYPE((PyObject*)self));
    py_log_reset();
    py_raise(st, PTERUN_STATUS_INVALID_STATE,
             "method '%s' was loaded without a profiler (load_method(..., profile=True))",
             PyUnicode_AsUTF8AndSize(self->name, NULL));
  }
  return self->profiler;
}

/* {"method", "executes", "instructions": [(chain, instr, op, calls, total_ns, min_ns,
 *  max_ns, slow_path)], "runs": [(start_ns, end_ns)], "events": [(run, instr, start, end)]} */
static PyObject* py_method_profile(PyObject* obj, PyObject* unused) {
  py_method* self = (py_method*)obj;
  pterun_profiler* p = py_need_profiler(self);
  PyObject *ins = NULL, *runs = NULL, *evs = NULL, *res = NULL;
  size_t k, n;
  if (p == NULL) return NULL;
  PyThread_acquire_lock(self->lock, WAIT_LOCK); /* no execute in between */
  n = pterun_profiler_instruction_count(p);
  ins = PyList_New(0);
  runs = PyList_New(0);
  evs = PyList_New(0);
  for (k = 0; ins != NULL && k < n; ++k) {
    pterun_profile_instruction e;
    PyObject* t;
    if (pterun_profiler_instruction(p, k, &e) != PTERUN_STATUS_OK) continue;
    t = Py_BuildValue("(IIzKKKKz)", e.chain, e.instruction, e.op_name, (unsigned long long)e.calls,
                      (unsigned long long)e.total_ns, (unsigned long long)e.min_ns,
                      (unsigned long long)e.max_ns, e.slow_path);
    if (t == NULL || PyList_Append(ins, t) != 0) Py_CLEAR(ins);
    Py_XDECREF(t);
  }
  for (k = 0; runs != NULL && k < pterun_profiler_run_count(p); ++k) {
    uint64_t s = 0, e = 0;
    PyObject* t;
    (void)pterun_profiler_run(p, k, &s, &e);
    t = Py_BuildValue("(KK)", (unsigned long long)s, (unsigned long long)e);
    if (t == NULL || PyList_Append(runs, t) != 0) Py_CLEAR(runs);
    Py_XDECREF(t);
  }
  for (k = 0; evs != NULL && k < pterun_profiler_event_count(p); ++k) {
    pterun_profile_event e;
    PyObject* t;
    (void)pterun_profiler_event(p, k, &e);
    t = Py_BuildValue("(IIKK)", e.run, e.instruction, (unsigned long long)e.start_ns,
                      (unsigned long long)e.end_ns);
    if (t == NULL || PyList_Append(evs, t) != 0) Py_CLEAR(evs);
    Py_XDECREF(t);
  }
  if (ins != NULL && runs != NULL && evs != NULL)
    res = Py_BuildValue("{s:s,s:K,s:O,s:O,s:O}", "method", pterun_profiler_method_name(p),
                        "executes", (unsigned long long)pterun_profiler_execute_count(p),
                        "instructions", ins, "runs", runs, "events", evs);
  PyThread_release_lock(self->lock);
  Py_XDECREF(ins);
  Py_XDECREF(runs);
  Py_XDECREF(evs);
  return res;
}

static PyObject* py_method_reset_profile(PyObject* obj, PyObject* unused) {
  py_method* self = (py_method*)obj;
  pterun_profiler* p = py_need_profiler(self);
  if (p == NULL) return NULL;
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  pterun_profiler_reset(p);
  PyThread_release_lock(self->lock);
  Py_RETURN_NONE;
}

/* write_trace(path) / write_etdump(path, debug_buffer_path=None) */
static PyObject* py_method_write(PyObject* obj, PyObject* args, PyObject* kwargs, int etdump) {
  static char* kwlist[] = {"path", "debug_buffer_path", NULL};
  static char* kwlist_trace[] = {"path", NULL};
  py_method* self = (py_method*)obj;
  py_state* st = py_state_of_type(Py_TYPE(obj));
  PyObject *path = NULL, *dbg = Py_None, *dbg_bytes = NULL;
  pterun_profiler* p = py_need_profiler(self);
  pterun_status status;
  if (p == NULL) return NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, etdump ? "O&|O:write_etdump" : "O&:write_trace",
                                   etdump ? kwlist : kwlist_trace, PyUnicode_FSConverter, &path,
                                   &dbg))
    return NULL;
  if (dbg != Py_None && !PyUnicode_FSConverter(dbg, &dbg_bytes)) {
    Py_DECREF(path);
    return NULL;
  }
  pterun_etdump_options eo = PTERUN_ETDUMP_OPTIONS_INIT;
  eo.debug_buffer_path = dbg_bytes ? PyBytes_AsString(dbg_bytes) : NULL;
  if (self->bundle_case >= 0) {
    eo.has_bundled_input_index = 1;
    eo.bundled_input_index = (int32_t)self->bundle_case;
  }
  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(self->lock, WAIT_LOCK);
  py_log_reset();
  status = etdump ? pterun_etdump_write(p, PyBytes_AsString(path), &eo)
                  : pterun_profiler_write_chrome_trace(p, PyBytes_AsString(path));
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS if (status != PTERUN_STATUS_OK)
      py_raise(st, status, "cannot write %s", PyBytes_AsString(path));
  Py_DECREF(path);
  Py_XDECREF(dbg_bytes);
  if (status != PTERUN_STATUS_OK) return NULL;
  Py_RETURN_NONE;
}

static PyObject* py_method_write_trace(PyObject* obj, PyObject* args, PyObject* kwargs) {
  return py_method_write(obj, args, kwargs, 0);
}
static PyObject* py_method_write_etdump(PyObject* obj, PyObject* args, PyObject* kwargs) {
  return py_method_write(obj, args, kwargs, 1);
}

/* run_bundled_case(case, rtol, atol) -> dict: binds the bundled case's inputs,
 * executes, compares with the expected outputs (ExecuTorch's rule). */
static PyObject* py_method_run_bundled_case(PyObject* obj, PyObject* args) {
  py_method* self = (py_method*)obj;
  py_state* st = py_state_of_type(Py_TYPE(obj));
  const char* name = PyUnicode_AsUTF8AndSize(self->name, NULL);
  Py_ssize_t tc;
  double rtol, atol;
  size_t suite;
  pterun_bundle_check chk;
  pterun_status status;
  const pterun_bundle* b = self->program->bundle;
  if (name == NULL || !PyArg_ParseTuple(args, "ndd:run_bundled_case", &tc, &rtol, &atol))
    return NULL;
  py_log_reset();
  if (b == NULL) return py_raise(st, PTERUN_STATUS_INVALID_STATE, "not a bundled program");
  if (tc < 0 || pterun_bundle_find_suite(b, name, &suite) != PTERUN_STATUS_OK)
    return py_raise(st, PTERUN_STATUS_NOT_FOUND, "no bundled test case %zd for method '%s'", tc,
                    name);
  memset(&chk, 0, sizeof chk);
  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(self->lock, WAIT_LOCK);
  py_log_reset();
  status = pterun_bundle_set_inputs(b, suite, (size_t)tc, self->method);
  if (status == PTERUN_STATUS_OK) status = pterun_method_execute(self->method);
  if (status == PTERUN_STATUS_OK)
    status = pterun_bundle_verify_outputs(b, suite, (size_t)tc, self->method, rtol, atol, &chk);
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS if (status != PTERUN_STATUS_OK) return py_raise(
      st, status, "bundled test case %zd of method '%s'", tc, name);
  self->bundle_case = tc;
  return Py_BuildValue("{s:O,s:n,s:n,s:K,s:d,s:d,s:s}", "passed", chk.passed ? Py_True : Py_False,
                       "outputs_compared", (Py_ssize_t)chk.outputs_compared, "failed_output",
                       (Py_ssize_t)chk.failed_output, "mismatched",
                       (unsigned long long)chk.mismatched, "max_abs_error", chk.max_abs_error,
                       "max_rel_error", chk.max_rel_error, "message", chk.message);
}

static PyMethodDef py_method_methods[] = {
    {"profile", py_method_profile, METH_NOARGS, "profile() -> dict of the profiler's records."},
    {"reset_profile", py_method_reset_profile, METH_NOARGS, "Forget recorded executes."},
    {"write_trace", (PyCFunction)(void (*)(void))py_method_write_trace,
     METH_VARARGS | METH_KEYWORDS, "write_trace(path): Chrome trace JSON."},
    {"write_etdump", (PyCFunction)(void (*)(void))py_method_write_etdump,
     METH_VARARGS | METH_KEYWORDS,
     "write_etdump(path, debug_buffer_path=None): ETDump for ExecuTorch's Inspector."},
    {"run_bundled_case", py_method_run_bundled_case, METH_VARARGS,
     "run_bundled_case(case, rtol, atol) -> dict: run and verify a bundled test case."},
    {"execute", py_method_execute, METH_O,
     "execute(inputs) -> list: bind the inputs, run, return copies of the outputs\n"
     "(pterun.Tensor, int, float, bool, str, None or lists of those)."},
    {"memory", py_method_memory, METH_NOARGS,
     "memory() -> (runtime_bytes, planned_bytes) pterun allocated for this method."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef py_method_getset[] = {
    {"name", py_method_get_name, NULL, "The method's name.", NULL},
    {"input_count", py_method_get_input_count, NULL, "Number of inputs.", NULL},
    {"output_count", py_method_get_output_count, NULL, "Number of outputs.", NULL},
    {"program", py_method_get_program, NULL, "The program it was loaded from.", NULL},
    {"last_input_copies", py_method_get_last_copies, NULL,
     "For each input of the last execute: True if the binding copied it (layout or dtype\n"
     "did not allow zero copy), False if the runtime was handed the caller's memory.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot py_method_slots[] = {
    {Py_tp_doc, (void*)"A loaded method (use Program.load_method)."},
    {Py_tp_dealloc, (void*)py_method_dealloc},
    {Py_tp_repr, (void*)py_method_repr},
    {Py_tp_methods, py_method_methods},
    {Py_tp_getset, py_method_getset},
    {0, NULL},
};

PyType_Spec py_method_spec = {
    .name = "pterun._pterun.Method",
    .basicsize = sizeof(py_method),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = py_method_slots,
};
