/* pterun.Error and the capture of the runtime's ERROR log lines. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ptext.h"

/* Every ERROR line the runtime logged in this thread since the last reset,
 * each NUL-terminated, one after another; the last line is also kept whole
 * on its own so that pterun.Error.message is never truncated away. */
#define PT_LOG_CAP 8192
#define PT_LAST_CAP 2048

typedef struct py_log {
  char lines[PT_LOG_CAP];
  size_t used;    /* bytes of `lines` in use */
  size_t count;   /* lines held in `lines` */
  size_t dropped; /* lines that did not fit */
  char last[PT_LAST_CAP];
  int has_last;
} py_log;

static _Thread_local py_log t_log;

static void py_log_cb(void* ctx, pterun_log_level level, const char* message) {
  size_t n;
  (void)ctx;
  if (level < PTERUN_LOG_ERROR) return;
  if (message == NULL) message = "";
  n = strlen(message);
  snprintf(t_log.last, sizeof t_log.last, "%s", message);
  t_log.has_last = 1;
  if (t_log.used + n + 1 <= sizeof t_log.lines) {
    memcpy(t_log.lines + t_log.used, message, n + 1);
    t_log.used += n + 1;
    t_log.count++;
  } else {
    t_log.dropped++;
  }
}

pterun_logger py_logger(void) {
  pterun_logger l;
  l.fn = py_log_cb;
  l.ctx = NULL;
  l.min_level = PTERUN_LOG_ERROR;
  return l;
}

void py_log_reset(void) {
  t_log.used = 0;
  t_log.count = 0;
  t_log.dropped = 0;
  t_log.has_last = 0;
  t_log.last[0] = '\0';
}

/* Tuple of the recorded lines (plus a note when some did not fit). */
static PyObject* py_log_tuple(void) {
  PyObject* t = PyTuple_New((Py_ssize_t)(t_log.count + (t_log.dropped ? 1 : 0)));
  size_t k, off = 0;
  if (t == NULL) return NULL;
  for (k = 0; k < t_log.count; ++k) {
    const char* line = t_log.lines + off;
    PyObject* s = PyUnicode_DecodeUTF8(line, (Py_ssize_t)strlen(line), "replace");
    if (s == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, (Py_ssize_t)k, s); /* steals s */
    off += strlen(line) + 1;
  }
  if (t_log.dropped) {
    PyObject* s = PyUnicode_FromFormat("(%zu more error lines not kept)", t_log.dropped);
    if (s == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, (Py_ssize_t)t_log.count, s);
  }
  return t;
}

static int py_set_attr(PyObject* obj, const char* name, PyObject* value) {
  int rc;
  if (value == NULL) return -1;
  rc = PyObject_SetAttrString(obj, name, value);
  Py_DECREF(value);
  return rc;
}

PyObject* py_raise(py_state* st, pterun_status status, const char* fmt, ...) {
  char what[1024];
  const char* name = pterun_status_name(status);
  PyObject *log = NULL, *sep = NULL, *joined = NULL, *text = NULL, *exc = NULL;
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);

  log = py_log_tuple();
  if (log == NULL) goto done;
  if (PyTuple_Size(log) > 0) {
    sep = PyUnicode_FromString("; ");
    if (sep == NULL) goto done;
    joined = PyUnicode_Join(sep, log);
    if (joined == NULL) goto done;
    text = PyUnicode_FromFormat("%s: %U (%s)", what, joined, name);
  } else {
    text = PyUnicode_FromFormat("%s (%s)", what, name);
  }
  if (text == NULL) goto done;
  exc = PyObject_CallFunctionObjArgs(st->error, text, NULL);
  if (exc == NULL) goto done;
  if (py_set_attr(exc, "status", PyUnicode_FromString(name)) < 0 ||
      py_set_attr(exc, "code", PyLong_FromLong((long)status)) < 0 ||
      py_set_attr(exc, "message",
                  t_log.has_last
                      ? PyUnicode_DecodeUTF8(t_log.last, (Py_ssize_t)strlen(t_log.last), "replace")
                      : PyUnicode_FromString(what)) < 0 ||
      PyObject_SetAttrString(exc, "log", log) < 0)
    goto done;
  PyErr_SetObject(st->error, exc);

done:
  /* On any failure above, the exception raised while building is left set. */
  Py_XDECREF(exc);
  Py_XDECREF(text);
  Py_XDECREF(joined);
  Py_XDECREF(sep);
  Py_XDECREF(log);
  py_log_reset();
  return NULL;
}

PyObject* py_error_type_new(PyObject* module) {
  (void)module;
  return PyErr_NewExceptionWithDoc(
      "pterun.Error",
      "A pterun runtime call failed.\n\n"
      "Attributes:\n"
      "  status   the pterun_status name, e.g. 'INPUT_MISMATCH'\n"
      "  code     its numeric value\n"
      "  message  the runtime's last ERROR log line (when the runtime logged none:\n"
      "           the binding's own description of the problem)\n"
      "  log      every ERROR line the runtime logged during the call",
      PyExc_RuntimeError, NULL);
}
