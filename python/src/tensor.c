/* pterun.Tensor: a method output, copied out of the method's memory (which
 * the next execute reuses). Row-major, owned, writable. Exposes the buffer
 * protocol (NumPy: numpy.asarray(t)) and DLPack (torch.from_dlpack(t)). */
#include <stdlib.h>
#include <string.h>

#include "ptext.h"

typedef struct py_tensor {
  PyObject_HEAD void* data; /* malloc'd, never NULL */
  size_t nbytes;
  int32_t dtype;
  int rank;
  Py_ssize_t shape[PTERUN_MAX_RANK];
  Py_ssize_t strides[PTERUN_MAX_RANK]; /* bytes */
  int64_t dl_shape[PTERUN_MAX_RANK];
  int64_t dl_strides[PTERUN_MAX_RANK]; /* elements */
} py_tensor;

const char* py_dtype_format(int32_t dtype) {
  switch (dtype) {
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8:
    case PTERUN_DTYPE_QUINT4X2:
    case PTERUN_DTYPE_QUINT2X4:
    case PTERUN_DTYPE_BITS1X8:
    case PTERUN_DTYPE_BITS2X4:
    case PTERUN_DTYPE_BITS4X2: return "B";
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_QINT8: return "b";
    case PTERUN_DTYPE_I16: return "h";
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_BITS16: return "H";
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_QINT32: return "i";
    case PTERUN_DTYPE_U32: return "I";
    case PTERUN_DTYPE_I64: return "q";
    case PTERUN_DTYPE_U64: return "Q";
    case PTERUN_DTYPE_F16: return "e";
    case PTERUN_DTYPE_F32: return "f";
    case PTERUN_DTYPE_F64: return "d";
    case PTERUN_DTYPE_BOOL: return "?";
    case PTERUN_DTYPE_COMPLEX64: return "Zf";
    case PTERUN_DTYPE_COMPLEX128: return "Zd";
    default: return NULL;
  }
}

PyObject* py_tensor_new(py_state* st, int32_t dtype, int rank, const int64_t* sizes, void* data,
                        size_t nbytes) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(st->tensor_type, Py_tp_alloc);
  size_t itemsize = pterun_dtype_size(dtype);
  int64_t el[PTERUN_MAX_RANK];
  py_tensor* t;
  int k;

  if (rank < 0 || rank > PTERUN_MAX_RANK || itemsize == 0) {
    free(data);
    PyErr_Format(PyExc_SystemError, "pterun: bad output tensor (dtype %d, rank %d)", (int)dtype,
                 rank);
    return NULL;
  }
  t = (py_tensor*)alloc(st->tensor_type, 0);
  if (t == NULL) {
    free(data);
    return NULL;
  }
  t->data = data;
  t->nbytes = nbytes;
  t->dtype = dtype;
  t->rank = rank;
  pterun_dim_order_strides((uint32_t)(rank), sizes, NULL, el);
  for (k = 0; k < rank; ++k) {
    t->shape[k] = (Py_ssize_t)sizes[k];
    t->dl_shape[k] = sizes[k];
    t->dl_strides[k] = el[k];
    t->strides[k] = (Py_ssize_t)(el[k] * (int64_t)itemsize);
  }
  return (PyObject*)t;
}

static void py_tensor_dealloc(PyObject* self) {
  PyTypeObject* tp = Py_TYPE(self);
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  free(((py_tensor*)self)->data);
  tp_free(self);
  Py_DECREF(tp);
}

/* ---- buffer protocol ------------------------------------------------------------ */

static int py_tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  py_tensor* t = (py_tensor*)self;
  const char* fmt = py_dtype_format(t->dtype);
  if (fmt == NULL && (flags & PyBUF_FORMAT) == PyBUF_FORMAT) {
    PyErr_Format(PyExc_BufferError,
                 "pterun.Tensor of dtype %s has no buffer format; use tobytes() or DLPack",
                 pterun_dtype_name(t->dtype));
    view->obj = NULL;
    return -1;
  }
  view->buf = t->data;
  view->obj = Py_NewRef(self);
  view->len = (Py_ssize_t)t->nbytes;
  view->itemsize = (Py_ssize_t)pterun_dtype_size(t->dtype);
  view->readonly = 0;
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? (char*)fmt : NULL;
  view->ndim = t->rank;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? t->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? t->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

/* ---- DLPack (the structs of the DLPack specification, v1.x ABI) ------------------ */

typedef struct py_dl_device {
  int32_t device_type;
  int32_t device_id;
} py_dl_device;
typedef struct py_dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} py_dl_dtype;
typedef struct py_dl_tensor {
  void* data;
  py_dl_device device;
  int32_t ndim;
  py_dl_dtype dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} py_dl_tensor;
typedef struct py_dl_managed {
  py_dl_tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct py_dl_managed* self);
} py_dl_managed;
typedef struct py_dl_version {
  uint32_t major;
  uint32_t minor;
} py_dl_version;
typedef struct py_dl_managed_v {
  py_dl_version version;
  void* manager_ctx;
  void (*deleter)(struct py_dl_managed_v* self);
  uint64_t flags;
  py_dl_tensor dl_tensor;
} py_dl_managed_v;

enum { PT_DL_CPU = 1 };
enum {
  PT_DL_INT = 0,
  PT_DL_UINT = 1,
  PT_DL_FLOAT = 2,
  PT_DL_BFLOAT = 4,
  PT_DL_COMPLEX = 5,
  PT_DL_BOOL = 6
};

static int py_dl_dtype_of(int32_t dtype, py_dl_dtype* out) {
  uint8_t code;
  switch (dtype) {
    case PTERUN_DTYPE_U8:
    case PTERUN_DTYPE_U16:
    case PTERUN_DTYPE_U32:
    case PTERUN_DTYPE_U64:
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8:
    case PTERUN_DTYPE_BITS16: code = PT_DL_UINT; break;
    case PTERUN_DTYPE_I8:
    case PTERUN_DTYPE_I16:
    case PTERUN_DTYPE_I32:
    case PTERUN_DTYPE_I64:
    case PTERUN_DTYPE_QINT8:
    case PTERUN_DTYPE_QINT32: code = PT_DL_INT; break;
    case PTERUN_DTYPE_F16:
    case PTERUN_DTYPE_F32:
    case PTERUN_DTYPE_F64: code = PT_DL_FLOAT; break;
    case PTERUN_DTYPE_BF16: code = PT_DL_BFLOAT; break;
    case PTERUN_DTYPE_COMPLEX64:
    case PTERUN_DTYPE_COMPLEX128: code = PT_DL_COMPLEX; break;
    case PTERUN_DTYPE_BOOL: code = PT_DL_BOOL; break;
    default: return -1;
  }
  out->code = code;
  out->bits = (uint8_t)(pterun_dtype_size(dtype) * 8);
  out->lanes = 1;
  return 0;
}

/* Deleters may run on any thread, with or without the GIL. */
static void py_dl_release_ctx(void* ctx) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF((PyObject*)ctx);
  PyGILState_Release(g);
}
static void py_dl_deleter(py_dl_managed* m) {
  py_dl_release_ctx(m->manager_ctx);
  free(m);
}
static void py_dl_deleter_v(py_dl_managed_v* m) {
  py_dl_release_ctx(m->manager_ctx);
  free(m);
}

/* A capsule nobody consumed still owns its tensor. */
static void py_dl_capsule_destructor(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    py_dl_managed* m = (py_dl_managed*)PyCapsule_GetPointer(cap, "dltensor");
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    py_dl_managed_v* m = (py_dl_managed_v*)PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  }
  PyErr_Clear(); /* a used capsule has another name; nothing to do */
}

static void py_dl_fill(py_tensor* t, py_dl_tensor* d, const py_dl_dtype* dt) {
  d->data = t->data;
  d->device.device_type = PT_DL_CPU;
  d->device.device_id = 0;
  d->ndim = t->rank;
  d->dtype = *dt;
  d->shape = t->rank ? t->dl_shape : NULL;
  d->strides = t->rank ? t->dl_strides : NULL;
  d->byte_offset = 0;
}

static PyObject* py_tensor_dlpack(PyObject* self, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  py_tensor* t = (py_tensor*)self;
  py_dl_dtype dt;
  long major = 0;
  PyObject* cap;

  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kwlist, &stream, &max_version,
                                   &dl_device, &copy))
    return NULL;
  if (stream != Py_None) {
    PyErr_SetString(PyExc_ValueError, "pterun.Tensor lives on the CPU: stream must be None");
    return NULL;
  }
  if (dl_device != Py_None) {
    long dev_type, dev_id;
    if (!PyArg_ParseTuple(dl_device, "ll", &dev_type, &dev_id)) return NULL;
    if (dev_type != PT_DL_CPU) {
      PyErr_SetString(PyExc_BufferError, "pterun.Tensor can only be exported to the CPU");
      return NULL;
    }
  }
  if (copy != Py_None && PyObject_IsTrue(copy) == 1) {
    /* A fresh copy, exported instead of this tensor. */
    py_state* st = py_state_of_type(Py_TYPE(self));
    void* buf = malloc(t->nbytes ? t->nbytes : 1);
    PyObject *other, *res;
    if (buf == NULL) return PyErr_NoMemory();
    memcpy(buf, t->data, t->nbytes);
    other = py_tensor_new(st, t->dtype, t->rank, t->dl_shape, buf, t->nbytes);
    if (other == NULL) return NULL;
    res = py_tensor_dlpack(other, NULL, NULL);
    Py_DECREF(other);
    return res;
  }
  if (max_version != Py_None) {
    PyObject* m0;
    if (!PyTuple_Check(max_version) || PyTuple_Size(max_version) < 1) {
      PyErr_SetString(PyExc_TypeError, "max_version must be a (major, minor) tuple");
      return NULL;
    }
    m0 = PyTuple_GetItem(max_version, 0);
    major = m0 ? PyLong_AsLong(m0) : -1;
    if (major == -1 && PyErr_Occurred()) return NULL;
  }
  if (py_dl_dtype_of(t->dtype, &dt) != 0) {
    PyErr_Format(PyExc_BufferError, "dtype %s has no DLPack equivalent",
                 pterun_dtype_name(t->dtype));
    return NULL;
  }
  if (major >= 1) {
    py_dl_managed_v* m = (py_dl_managed_v*)calloc(1, sizeof *m);
    if (m == NULL) return PyErr_NoMemory();
    m->version.major = 1;
    m->version.minor = 0;
    m->manager_ctx = Py_NewRef(self);
    m->deleter = py_dl_deleter_v;
    m->flags = 0; /* writable, not a copy */
    py_dl_fill(t, &m->dl_tensor, &dt);
    cap = PyCapsule_New(m, "dltensor_versioned", py_dl_capsule_destructor);
    if (cap == NULL) {
      Py_DECREF(self);
      free(m);
    }
    return cap;
  } else {
    py_dl_managed* m = (py_dl_managed*)calloc(1, sizeof *m);
    if (m == NULL) return PyErr_NoMemory();
    m->manager_ctx = Py_NewRef(self);
    m->deleter = py_dl_deleter;
    py_dl_fill(t, &m->dl_tensor, &dt);
    cap = PyCapsule_New(m, "dltensor", py_dl_capsule_destructor);
    if (cap == NULL) {
      Py_DECREF(self);
      free(m);
    }
    return cap;
  }
}

static PyObject* py_tensor_dlpack_device(PyObject* self, PyObject* unused) {
  return Py_BuildValue("(ii)", PT_DL_CPU, 0);
}

/* ---- Python-level attributes ------------------------------------------------------- */

static PyObject* py_tensor_get_shape(PyObject* self, void* closure) {
  py_tensor* t = (py_tensor*)self;
  PyObject* tup = PyTuple_New(t->rank);
  int k;
  if (tup == NULL) return NULL;
  for (k = 0; k < t->rank; ++k) {
    PyObject* d = PyLong_FromSsize_t(t->shape[k]);
    if (d == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SetItem(tup, k, d);
  }
  return tup;
}

static PyObject* py_tensor_get_dtype(PyObject* self, void* closure) {
  return PyUnicode_FromString(pterun_dtype_name(((py_tensor*)self)->dtype));
}
static PyObject* py_tensor_get_ndim(PyObject* self, void* closure) {
  return PyLong_FromLong(((py_tensor*)self)->rank);
}
static PyObject* py_tensor_get_nbytes(PyObject* self, void* closure) {
  return PyLong_FromSize_t(((py_tensor*)self)->nbytes);
}

static PyObject* py_tensor_tobytes(PyObject* self, PyObject* unused) {
  py_tensor* t = (py_tensor*)self;
  return PyBytes_FromStringAndSize((const char*)t->data, (Py_ssize_t)t->nbytes);
}

static PyObject* py_tensor_repr(PyObject* self) {
  py_tensor* t = (py_tensor*)self;
  PyObject *shape = py_tensor_get_shape(self, NULL), *r;
  if (shape == NULL) return NULL;
  r = PyUnicode_FromFormat("pterun.Tensor(dtype=%s, shape=%R)", pterun_dtype_name(t->dtype), shape);
  Py_DECREF(shape);
  return r;
}

static PyMethodDef py_tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))py_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "Export as a DLPack capsule (shares this tensor's memory)."},
    {"__dlpack_device__", py_tensor_dlpack_device, METH_NOARGS, "(kDLCPU, 0)"},
    {"tobytes", py_tensor_tobytes, METH_NOARGS, "The raw bytes, row-major."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef py_tensor_getset[] = {
    {"shape", py_tensor_get_shape, NULL, "Sizes, a tuple of ints.", NULL},
    {"dtype", py_tensor_get_dtype, NULL, "Element type name ('float32').", NULL},
    {"ndim", py_tensor_get_ndim, NULL, "Number of dimensions.", NULL},
    {"nbytes", py_tensor_get_nbytes, NULL, "Size of the data in bytes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot py_tensor_slots[] = {
    {Py_tp_doc, (void*)"A method output: an owned, row-major copy supporting the buffer "
                       "protocol and DLPack."},
    {Py_tp_dealloc, (void*)py_tensor_dealloc},
    {Py_tp_repr, (void*)py_tensor_repr},
    {Py_tp_methods, py_tensor_methods},
    {Py_tp_getset, py_tensor_getset},
    {Py_bf_getbuffer, (void*)py_tensor_getbuffer},
    {0, NULL},
};

PyType_Spec py_tensor_spec = {
    .name = "pterun.Tensor",
    .basicsize = sizeof(py_tensor),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = py_tensor_slots,
};
