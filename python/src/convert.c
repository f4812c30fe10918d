/* Method inputs from Python objects: the buffer protocol (NumPy, array,
 * memoryview, pterun.Tensor) or DLPack (__dlpack__: PyTorch, JAX, ...).
 *
 * Zero copy when the caller's memory already has the input's dtype and
 * layout (the input's dim order, any strides that agree with it, aligned,
 * and writable or planned); otherwise one copy into that layout. Planned
 * inputs are copied by the runtime in any case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pterun/half.h"
#include "ptext.h"

/* ---- layout ------------------------------------------------------------------ */

void py_strided_copy(void* dst, const int64_t* dst_bstrides, const void* src,
                     const int64_t* src_bstrides, int rank, const int64_t* sizes, size_t itemsize) {
  int64_t idx[PTERUN_MAX_RANK] = {0};
  int64_t inner, k;
  int d, last;
  if (rank == 0) {
    memcpy(dst, src, itemsize);
    return;
  }
  for (d = 0; d < rank; ++d)
    if (sizes[d] == 0) return;
  last = rank - 1;
  inner = sizes[last];
  for (;;) {
    const char* s = (const char*)src;
    char* o = (char*)dst;
    for (d = 0; d < last; ++d) {
      s += idx[d] * src_bstrides[d];
      o += idx[d] * dst_bstrides[d];
    }
    if (src_bstrides[last] == (int64_t)itemsize && dst_bstrides[last] == (int64_t)itemsize) {
      memcpy(o, s, (size_t)inner * itemsize);
    } else {
      for (k = 0; k < inner; ++k)
        memcpy(o + k * dst_bstrides[last], s + k * src_bstrides[last], itemsize);
    }
    for (d = last - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/* ---- dtypes -------------------------------------------------------------------- */

/* The storage dtype a caller's buffer must have for an input of `dtype`. */
static int32_t py_storage_dtype(int32_t dtype) {
  switch (dtype) {
    case PTERUN_DTYPE_QINT8: return PTERUN_DTYPE_I8;
    case PTERUN_DTYPE_QUINT8:
    case PTERUN_DTYPE_BITS8: return PTERUN_DTYPE_U8;
    case PTERUN_DTYPE_QINT32: return PTERUN_DTYPE_I32;
    case PTERUN_DTYPE_BITS16: return PTERUN_DTYPE_U16;
    default: return dtype;
  }
}

/* dtype of a struct-module format string with item size `itemsize`, or -1. */
static int32_t py_dtype_from_format(const char* fmt, Py_ssize_t itemsize) {
  int32_t dt;
  if (fmt == NULL) fmt = "B";
  if (*fmt == '@' || *fmt == '=' || *fmt == '<') {
    ++fmt;
  } else if (*fmt == '>' || *fmt == '!') {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    ++fmt;
#else
    return -1;
#endif
  }
  if (fmt[0] == 'Z') {
    if (strcmp(fmt, "Zf") == 0) return PTERUN_DTYPE_COMPLEX64;
    if (strcmp(fmt, "Zd") == 0) return PTERUN_DTYPE_COMPLEX128;
    return -1;
  }
  if (fmt[0] == '\0' || fmt[1] != '\0') return -1;
  switch (fmt[0]) {
    case 'b': dt = PTERUN_DTYPE_I8; break;
    case 'B':
    case 'c': dt = PTERUN_DTYPE_U8; break;
    case '?': dt = PTERUN_DTYPE_BOOL; break;
    case 'e': dt = PTERUN_DTYPE_F16; break;
    case 'f': dt = PTERUN_DTYPE_F32; break;
    case 'd': dt = PTERUN_DTYPE_F64; break;
    case 'h':
    case 'H':
    case 'i':
    case 'I':
    case 'l':
    case 'L':
    case 'q':
    case 'Q':
    case 'n':
    case 'N': {
      int is_unsigned =
          fmt[0] == 'H' || fmt[0] == 'I' || fmt[0] == 'L' || fmt[0] == 'Q' || fmt[0] == 'N';
      switch (itemsize) {
        case 2: return is_unsigned ? PTERUN_DTYPE_U16 : PTERUN_DTYPE_I16;
        case 4: return is_unsigned ? PTERUN_DTYPE_U32 : PTERUN_DTYPE_I32;
        case 8: return is_unsigned ? PTERUN_DTYPE_U64 : PTERUN_DTYPE_I64;
        default: return -1;
      }
    }
    default: return -1;
  }
  return (Py_ssize_t)pterun_dtype_size(dt) == itemsize ? dt : -1;
}

/* DLPack (the DLPack specification's C ABI). */
typedef struct py_dlx_tensor {
  void* data;
  struct {
    int32_t device_type;
    int32_t device_id;
  } device;
  int32_t ndim;
  struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
  } dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} py_dlx_tensor;
typedef struct py_dlx_managed {
  py_dlx_tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct py_dlx_managed* self);
} py_dlx_managed;

static int32_t py_dtype_from_dl(int code, int bits, int lanes) {
  if (lanes != 1) return -1;
  switch (code) {
    case 0: /* kDLInt */
      return bits == 8    ? PTERUN_DTYPE_I8
             : bits == 16 ? PTERUN_DTYPE_I16
             : bits == 32 ? PTERUN_DTYPE_I32
             : bits == 64 ? PTERUN_DTYPE_I64
                          : -1;
    case 1: /* kDLUInt */
      return bits == 8    ? PTERUN_DTYPE_U8
             : bits == 16 ? PTERUN_DTYPE_U16
             : bits == 32 ? PTERUN_DTYPE_U32
             : bits == 64 ? PTERUN_DTYPE_U64
                          : -1;
    case 2: /* kDLFloat */
      return bits == 16   ? PTERUN_DTYPE_F16
             : bits == 32 ? PTERUN_DTYPE_F32
             : bits == 64 ? PTERUN_DTYPE_F64
                          : -1;
    case 4: return bits == 16 ? PTERUN_DTYPE_BF16 : -1; /* kDLBfloat */
    case 5:                                             /* kDLComplex */
      return bits == 64 ? PTERUN_DTYPE_COMPLEX64 : bits == 128 ? PTERUN_DTYPE_COMPLEX128 : -1;
    case 6: return bits == 8 ? PTERUN_DTYPE_BOOL : -1; /* kDLBool */
    default: return -1;
  }
}

/* ---- the caller's memory, whatever it came from ------------------------------------ */

typedef struct py_src {
  void* data;
  int32_t dtype; /* -1: not representable */
  int rank;
  int64_t sizes[PTERUN_MAX_RANK];
  int64_t bstrides[PTERUN_MAX_RANK]; /* bytes */
  int readonly;
} py_src;

static void py_shape_str(int rank, const int64_t* sizes, char* buf, size_t cap) {
  size_t used = 0;
  int k, n;
  n = snprintf(buf, cap, "(");
  used = n > 0 ? (size_t)n : 0;
  for (k = 0; k < rank && used < cap; ++k) {
    n = snprintf(buf + used, cap - used, "%s%lld", k ? ", " : "", (long long)sizes[k]);
    if (n < 0) return;
    used += (size_t)n;
  }
  if (used < cap) snprintf(buf + used, cap - used, rank == 1 ? ",)" : ")");
}

static int py_src_from_buffer(PyObject* obj, py_input* in, py_src* src, size_t index) {
  Py_buffer* v = &in->buffer;
  int k;
  if (PyObject_GetBuffer(obj, v, PyBUF_RECORDS_RO) != 0) return -1;
  if (v->ndim > PTERUN_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "input %zu has %d dimensions; pterun supports at most %d", index,
                 v->ndim, PTERUN_MAX_RANK);
    return -1;
  }
  src->data = v->buf;
  src->dtype = py_dtype_from_format(v->format, v->itemsize);
  src->rank = v->ndim;
  src->readonly = v->readonly;
  for (k = 0; k < v->ndim; ++k) {
    src->sizes[k] = v->shape ? (int64_t)v->shape[k] : (int64_t)(v->len / v->itemsize);
    src->bstrides[k] = v->strides ? (int64_t)v->strides[k] : 0;
  }
  if (v->strides == NULL && v->ndim > 0) {
    int64_t el[PTERUN_MAX_RANK];
    pterun_dim_order_strides((uint32_t)(v->ndim), src->sizes, NULL, el);
    for (k = 0; k < v->ndim; ++k) src->bstrides[k] = el[k] * (int64_t)v->itemsize;
  }
  if (src->dtype < 0) {
    PyErr_Format(PyExc_TypeError,
                 "input %zu: buffer format '%s' (item size %zd) is not a "
                 "pterun dtype (native byte order is required)",
                 index, v->format ? v->format : "B", v->itemsize);
    return -1;
  }
  return 0;
}

static int py_src_from_dlpack(PyObject* obj, py_input* in, py_src* src, size_t index) {
  PyObject* cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
  py_dlx_managed* m;
  py_dlx_tensor* t;
  size_t itemsize;
  int k;
  if (cap == NULL) return -1;
  in->capsule = cap;
  m = (py_dlx_managed*)PyCapsule_GetPointer(cap, "dltensor");
  if (m == NULL) return -1;
  /* The consumer owns it now: rename, call the deleter in py_input_release. */
  if (PyCapsule_SetName(cap, "used_dltensor") != 0) return -1;
  t = &m->dl_tensor;
  if (t->device.device_type != 1 /* kDLCPU */) {
    PyErr_Format(PyExc_TypeError, "input %zu: DLPack tensor is on device type %d, not the CPU",
                 index, (int)t->device.device_type);
    return -1;
  }
  if (t->ndim < 0 || t->ndim > PTERUN_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "input %zu has %d dimensions; pterun supports at most %d", index,
                 (int)t->ndim, PTERUN_MAX_RANK);
    return -1;
  }
  src->dtype = py_dtype_from_dl(t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (src->dtype < 0) {
    PyErr_Format(PyExc_TypeError,
                 "input %zu: DLPack dtype (code %d, %d bits, %d lanes) is not a "
                 "pterun dtype",
                 index, (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes);
    return -1;
  }
  itemsize = pterun_dtype_size(src->dtype);
  src->data = (char*)t->data + t->byte_offset;
  src->rank = t->ndim;
  src->readonly = 0;
  for (k = 0; k < t->ndim; ++k) src->sizes[k] = t->shape[k];
  if (t->strides != NULL) {
    for (k = 0; k < t->ndim; ++k) src->bstrides[k] = t->strides[k] * (int64_t)itemsize;
  } else {
    int64_t el[PTERUN_MAX_RANK];
    pterun_dim_order_strides((uint32_t)(t->ndim), src->sizes, NULL, el);
    for (k = 0; k < t->ndim; ++k) src->bstrides[k] = el[k] * (int64_t)itemsize;
  }
  return 0;
}

static int py_prepare_tensor(py_state* st, PyObject* obj, size_t index, const pterun_io_info* io,
                             py_input* in) {
  py_src src;
  int32_t want = py_storage_dtype(io->dtype);
  int from_f32_to_bf16 = 0;
  size_t itemsize, numel = 1, nbytes;
  int64_t want_el[PTERUN_MAX_RANK];
  int k, zero_copy = 1;

  memset(&src, 0, sizeof src);
  if (PyObject_CheckBuffer(obj)) {
    if (py_src_from_buffer(obj, in, &src, index) != 0) return -1;
  } else if (PyObject_HasAttrString(obj, "__dlpack__")) {
    if (py_src_from_dlpack(obj, in, &src, index) != 0) return -1;
  } else {
    PyObject* tname = PyType_GetName(Py_TYPE(obj));
    if (tname == NULL) return -1;
    PyErr_Format(PyExc_TypeError,
                 "input %zu: expected a tensor (an object with the buffer protocol or "
                 "__dlpack__, e.g. a NumPy array or a torch.Tensor), got %U",
                 index, tname);
    Py_DECREF(tname);
    return -1;
  }

  /* .npy and NumPy have no bfloat16: a float32 array feeds a bfloat16 input. */
  if (io->dtype == PTERUN_DTYPE_BF16 && src.dtype == PTERUN_DTYPE_F32) from_f32_to_bf16 = 1;
  if ((src.dtype != want && !from_f32_to_bf16) || src.rank != io->rank) {
    char want_s[256], got_s[256];
    py_shape_str(io->rank, io->sizes, want_s, sizeof want_s);
    py_shape_str(src.rank, src.sizes, got_s, sizeof got_s);
    py_raise(st, PTERUN_STATUS_INPUT_MISMATCH, "input %zu: expected %s %s%s, got %s %s", index,
             pterun_dtype_name(io->dtype), want_s,
             io->dynamism == PTERUN_SHAPE_STATIC    ? ""
             : io->dynamism == PTERUN_SHAPE_BOUNDED ? " (upper bound)"
                                                    : " (any size)",
             pterun_dtype_name(src.dtype), got_s);
    return -1;
  }

  itemsize = pterun_dtype_size(src.dtype);
  for (k = 0; k < src.rank; ++k) {
    if (src.sizes[k] < 0) {
      PyErr_Format(PyExc_ValueError, "input %zu has a negative size", index);
      return -1;
    }
    in->sizes[k] = src.sizes[k];
    in->dim_order[k] = io->dim_order[k];
    numel *= (size_t)src.sizes[k];
  }
  nbytes = numel * itemsize;

  /* Can the runtime read the caller's memory as it is? */
  pterun_dim_order_strides((uint32_t)(src.rank), src.sizes, io->dim_order, want_el);
  for (k = 0; k < src.rank; ++k)
    if (src.sizes[k] > 1 && src.bstrides[k] != want_el[k] * (int64_t)itemsize) zero_copy = 0;
  if (((uintptr_t)src.data % (itemsize ? itemsize : 1)) != 0) zero_copy = 0;
  if (src.readonly && !io->planned) zero_copy = 0; /* the runtime may write unplanned inputs */
  if (from_f32_to_bf16) zero_copy = 0;
  if (numel == 0) zero_copy = 1;

  in->is_tensor = 1;
  in->view.dtype = io->dtype;
  in->view.rank = (uint32_t)src.rank;
  in->view.sizes = in->sizes;
  in->view.dim_order = in->dim_order;
  if (zero_copy) {
    in->view.data = numel ? src.data : (void*)in->sizes; /* any non-NULL pointer */
    in->view.nbytes = nbytes;
    return 0;
  }

  in->owned = malloc(nbytes ? nbytes : 1);
  if (in->owned == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  {
    int64_t dst_b[PTERUN_MAX_RANK];
    for (k = 0; k < src.rank; ++k) dst_b[k] = want_el[k] * (int64_t)itemsize;
    py_strided_copy(in->owned, dst_b, src.data, src.bstrides, src.rank, src.sizes, itemsize);
  }
  if (from_f32_to_bf16) {
    /* in place: element j (2 bytes) is written after element j (4 bytes) was read */
    uint16_t* out = (uint16_t*)in->owned;
    const float* f = (const float*)in->owned;
    size_t j;
    for (j = 0; j < numel; ++j) {
      float v = f[j];
      out[j] = pterun_f32_to_bf16(v);
    }
    nbytes = numel * 2;
  }
  in->copied = 1;
  in->view.data = in->owned;
  in->view.nbytes = nbytes;
  return 0;
}

static int py_prepare_scalar(py_state* st, PyObject* obj, size_t index, const pterun_io_info* io,
                             py_input* in) {
  in->value.tag = io->tag;
  switch (io->tag) {
    case PTERUN_VALUE_NONE:
      if (obj != Py_None) {
        PyErr_Format(PyExc_TypeError, "input %zu must be None", index);
        return -1;
      }
      return 0;
    case PTERUN_VALUE_INT: {
      PyObject* i = PyNumber_Index(obj);
      long long v;
      if (i == NULL) {
        PyErr_Format(PyExc_TypeError, "input %zu must be an int", index);
        return -1;
      }
      v = PyLong_AsLongLong(i);
      Py_DECREF(i);
      if (v == -1 && PyErr_Occurred()) return -1;
      in->value.u.i = (int64_t)v;
      return 0;
    }
    case PTERUN_VALUE_DOUBLE: {
      double d = PyFloat_AsDouble(obj);
      if (d == -1.0 && PyErr_Occurred()) return -1;
      in->value.u.d = d;
      return 0;
    }
    case PTERUN_VALUE_BOOL: {
      int b = obj == Py_None ? -1 : PyObject_IsTrue(obj);
      if (b < 0) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "input %zu must be a bool", index);
        return -1;
      }
      in->value.u.b = b;
      return 0;
    }
    default:
      py_raise(st, PTERUN_STATUS_NOT_SUPPORTED,
               "input %zu is a %s; pterun's Python binding supplies tensors and scalars", index,
               pterun_value_tag_name(io->tag));
      return -1;
  }
}

int py_input_prepare(py_state* st, PyObject* obj, size_t index, const pterun_io_info* io,
                     py_input* in) {
  memset(in, 0, sizeof *in);
  if (io->tag == PTERUN_VALUE_TENSOR) return py_prepare_tensor(st, obj, index, io, in);
  return py_prepare_scalar(st, obj, index, io, in);
}

pterun_status py_input_bind(pterun_method* m, size_t index, const py_input* in) {
  if (in->is_tensor) return pterun_method_set_input(m, index, &in->view);
  return pterun_method_set_input_value(m, index, &in->value);
}

void py_input_release(py_input* in) {
  if (in->buffer.obj != NULL) PyBuffer_Release(&in->buffer);
  if (in->capsule != NULL) {
    if (PyCapsule_IsValid(in->capsule, "used_dltensor")) {
      py_dlx_managed* m = (py_dlx_managed*)PyCapsule_GetPointer(in->capsule, "used_dltensor");
      if (m != NULL && m->deleter != NULL) m->deleter(m);
    }
    Py_CLEAR(in->capsule);
  }
  free(in->owned);
  in->owned = NULL;
}
