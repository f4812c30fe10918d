/* pterun._pterun: declarations shared by the extension's C files.
 *
 * The extension is a thin binding over the shipped libraries (libpterun and
 * the kernel libraries): it links them and defines none of their symbols.
 * Built against the limited API (Py_LIMITED_API, set by CMake) so one wheel
 * serves every CPython >= 3.11.
 *
 * GIL rules: every function here that takes or returns a PyObject needs the
 * GIL. The pterun calls that may take time (loading, binding, execute, the
 * output copies) run with the GIL released; the only code that runs there is
 * plain C (the log capture and the py_copy_* helpers).
 */
#ifndef PTERUN_PYTHON_SRC_PTEXT_H_
#define PTERUN_PYTHON_SRC_PTEXT_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

#include "pterun/pterun.h"
#include "pterun/threadpool.h"

/* ---- module state --------------------------------------------------------- */

typedef struct py_state {
  PyObject* error;            /* pterun.Error (a RuntimeError subclass) */
  PyTypeObject* program_type; /* pterun.Program */
  PyTypeObject* method_type;  /* pterun.Method */
  PyTypeObject* tensor_type;  /* pterun.Tensor */
  pterun_registry* registry;  /* pterun_registry_default(); not owned */
  pterun_threadpool* pool;    /* the process's pool, created by the first load_method */
} py_state;

/* The state of the module that created `type` (one of our heap types). */
py_state* py_state_of_type(PyTypeObject* type);

/* ---- errors and the log capture (errors.c) ---------------------------------- */

/* A logger whose callback records every ERROR line of the current call in a
 * thread-local buffer (no Python calls: safe without the GIL). */
pterun_logger py_logger(void);
/* Forgets what the calling thread recorded; call before each pterun call. */
void py_log_reset(void);

/* Raises pterun.Error for `status`: the message is the formatted context,
 * then the ERROR lines recorded since the last py_log_reset(), then the
 * status name. Sets the attributes status, code, message and log.
 * Always returns NULL. */
PyObject* py_raise(py_state* st, pterun_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Creates the pterun.Error type. */
PyObject* py_error_type_new(PyObject* module);

/* ---- tensors (tensor.c) ------------------------------------------------------- */

extern PyType_Spec py_tensor_spec;

/* A new pterun.Tensor owning `data` (malloc'd, row-major, `nbytes` bytes).
 * Takes ownership of `data` even on failure. */
PyObject* py_tensor_new(py_state* st, int32_t dtype, int rank, const int64_t* sizes, void* data,
                        size_t nbytes);

/* ---- programs and methods (program.c, method.c) -------------------------------- */

typedef struct py_program {
  PyObject_HEAD pterun_program* program;
  Py_buffer source; /* the caller's bytes, when borrowed (has_source) */
  int has_source;
  pterun_data** data; /* external data files, owned */
  size_t data_count;
  Py_buffer* data_sources; /* borrowed bytes of data files (obj NULL: none) */
  PyObject* origin;        /* str: the path, or "<bytes>" */
  pterun_bundle* bundle;   /* a bundled program (.bpte): owns the bytes `program` uses */
} py_program;

extern PyType_Spec py_program_spec;
extern PyType_Spec py_method_spec;

/* pterun.Program from a path or bytes-like object, plus data files. */
PyObject* py_program_load(py_state* st, PyObject* source, PyObject* data_files);

/* pterun.Method `name` of `program` (method.c); with profile_runs > 0 a
 * profiler keeping that many executes is attached (record_outputs: copies
 * of kernel outputs for ETDump debug events). threads: 0 = the whole pool,
 * 1 = serial (no pool), n = at most n per kernel. no_fusion: the load-time
 * fusion pass stays off (pterun_method_options.no_fusion). */
PyObject* py_method_load(py_state* st, py_program* program, const char* name, unsigned profile_runs,
                         int record_outputs, size_t threads, int no_fusion);
/* The method options every load (and memory query) of program p shares:
 * the module's registry, p's data files, the log capture. */
void py_method_options(py_state* st, const py_program* p, pterun_method_options* o);

/* Metadata of one input/output as a dict (program.c). */
PyObject* py_io_info_dict(const pterun_io_info* io);

/* ---- inputs (convert.c) ------------------------------------------------------------ */

/* One prepared method input. Fill with py_input_prepare (GIL held), bind with
 * py_input_bind (no GIL needed), release with py_input_release (GIL held). */
typedef struct py_input {
  int is_tensor;
  pterun_tensor_view view; /* tensors */
  int64_t sizes[PTERUN_MAX_RANK];
  uint8_t dim_order[PTERUN_MAX_RANK];
  pterun_value value; /* scalars and None */
  Py_buffer buffer;   /* buffer-protocol source (buffer.obj NULL: none) */
  PyObject* capsule;  /* DLPack source (NULL: none) */
  void* owned;        /* a copy made because the layout did not allow
                                 * zero copy (NULL: none) */
  int copied;         /* 1: `owned` holds the bytes bound */
} py_input;

/* Converts `obj` for input `index` described by `io`. Returns 0, or -1 with
 * an exception set (pterun.Error INPUT_MISMATCH for a dtype/rank mismatch,
 * TypeError for an object that is not a tensor or scalar). */
int py_input_prepare(py_state* st, PyObject* obj, size_t index, const pterun_io_info* io,
                     py_input* in);
pterun_status py_input_bind(pterun_method* m, size_t index, const py_input* in);
void py_input_release(py_input* in);

/* ---- layout helpers (convert.c; plain C) ----------------------------------------------- */

/* Copies a strided tensor (byte strides) into another layout (byte strides). */
void py_strided_copy(void* dst, const int64_t* dst_bstrides, const void* src,
                     const int64_t* src_bstrides, int rank, const int64_t* sizes, size_t itemsize);

/* Buffer-protocol format for a dtype (storage type for quantized and bits
 * types), or NULL if there is none (bfloat16, complex32, float8). */
const char* py_dtype_format(int32_t dtype);

#endif /* PTERUN_PYTHON_SRC_PTEXT_H_ */
