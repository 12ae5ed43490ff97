/*
 * vforge._vforge — the CPython extension over libvforge (python/vforge/__init__.py is the API
 * users see; this module is its thin C half).  No vforge logic lives here: every call converts
 * Python arguments, calls one library entry point with the GIL released, and converts the
 * result (or the vf_error) back.
 *
 * Arrays cross without a copy: results the library allocated (read_vectors' matrix, brute-force
 * ids and scores) are wrapped in a Buffer object that owns the memory and exposes the buffer
 * protocol, which numpy.frombuffer views; inputs are any C-contiguous buffer (the Python side
 * passes numpy arrays), read in place.  Record batches leave through the Arrow C Data / Stream
 * interfaces (PyCapsules named "arrow_array_stream", "arrow_schema", "arrow_array").
 *
 * Interrupts: while a long call runs, SIGINT (from the main thread) only sets the library's
 * cancellation flag (vf_cancel_request); the call stops at its next poll and KeyboardInterrupt is
 * raised here.  Library log events go to the "vforge" logger; progress events to the callback
 * a call was given.  Both may come from library threads: they take the GIL (every call runs with
 * it released, so they never wait on it forever).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/arrow.h"
#include "vforge/bench.h"
#include "vforge/config.h"
#include "vforge/eval.h"
#include "vforge/index.h"
#include "vforge/ivf.h"
#include "vforge/load.h"
#include "vforge/store.h"

#ifndef VFORGE_VERSION
#define VFORGE_VERSION "0.1.0"
#endif

/* ------------------------------------------------------------------ errors */

static PyObject *Error, *UsageError, *DataError, *NotFoundError, *IOFailure, *ResourceError;

static PyObject *raise_vf(vf_status st, const vf_error *err) {
  if (st == VF_ECANCELED) {
    PyErr_SetString(PyExc_KeyboardInterrupt, err && err->msg[0] ? err->msg : "interrupted");
    return NULL;
  }
  PyObject *cls = Error;
  switch (st) {
  case VF_EUSAGE:
  case VF_ECONFIG:
  case VF_EUNSUPPORTED: cls = UsageError; break;
  case VF_ECORRUPT: cls = DataError; break;
  case VF_ENOTFOUND: cls = NotFoundError; break;
  case VF_EIO:
  case VF_ENET: cls = IOFailure; break;
  case VF_ENOMEM: cls = ResourceError; break;
  default: break;
  }
  PyObject *exc = PyObject_CallFunction(cls, "s", err && err->msg[0] ? err->msg : vf_status_name(st));
  if (!exc) return NULL;
  PyObject *name = PyUnicode_FromString(vf_status_name(st));
  PyObject *code = PyLong_FromLong(vf_status_exit_code(st));
  if (name) PyObject_SetAttrString(exc, "status", name);
  if (code) PyObject_SetAttrString(exc, "exit_code", code);
  Py_XDECREF(name);
  Py_XDECREF(code);
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
  return NULL;
}

/* --------------------------------------------------------- long calls */

static unsigned long g_main_thread;
static pthread_mutex_t g_sig_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_sig_depth;
static struct sigaction g_old_int;
static PyObject *g_progress;       /* the callback of the running call (one at a time) */
static PyObject *g_cb_error_type, *g_cb_error_value, *g_cb_error_tb;
static PyObject *g_logger;

static void on_sigint(int signo) {
  vf_cancel_request(signo);
}

typedef struct call_state {
  bool sig;
  int old_threads;
  PyThreadState *ts;
} call_state;

/* Before a long call: SIGINT -> the cancellation flag (main thread), `threads` applied. */
static void call_begin(call_state *c, int threads) {
  c->sig = PyThread_get_thread_ident() == g_main_thread;
  c->old_threads = vf_threads();
  if (threads > 0) vf_set_threads(threads);
  if (c->sig) {
    pthread_mutex_lock(&g_sig_mu);
    if (g_sig_depth++ == 0) {
      vf_cancel_reset();
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_sigint;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGINT, &sa, &g_old_int);
    }
    pthread_mutex_unlock(&g_sig_mu);
  }
  c->ts = PyEval_SaveThread();
}

/* After it: the GIL back, handlers restored; a cancelled call (or one interrupted just as it
 * finished) raises KeyboardInterrupt, a progress callback's exception is raised as itself. */
static bool call_end(call_state *c, vf_status *st, vf_error *err) {
  PyEval_RestoreThread(c->ts);
  bool cancelled = vf_cancelled();
  if (c->sig) {
    pthread_mutex_lock(&g_sig_mu);
    if (--g_sig_depth == 0) {
      sigaction(SIGINT, &g_old_int, NULL);
      vf_cancel_reset();
    }
    pthread_mutex_unlock(&g_sig_mu);
  }
  vf_set_threads(c->old_threads);
  if (g_cb_error_type) {
    PyErr_Restore(g_cb_error_type, g_cb_error_value, g_cb_error_tb);
    g_cb_error_type = g_cb_error_value = g_cb_error_tb = NULL;
    return false;
  }
  if (*st != VF_OK) {
    raise_vf(*st, err);
    return false;
  }
  if (cancelled && c->sig) {
    PyErr_SetString(PyExc_KeyboardInterrupt, "interrupted");
    return false;
  }
  return true;
}

static bool finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

static void log_handler(void *user, vf_log_level level, const char *msg) {
  (void)user;
  if (!Py_IsInitialized() || finalizing() || !g_logger) return;
  PyGILState_STATE gs = PyGILState_Ensure();
  static const int py_level[] = {10, 20, 30, 40};
  PyObject *r = PyObject_CallMethod(g_logger, "log", "is", py_level[level <= VF_LOG_ERROR ? level : 3], msg);
  if (!r) PyErr_Clear();
  Py_XDECREF(r);
  PyGILState_Release(gs);
}

static void progress_handler(void *user, const vf_progress *p) {
  (void)user;
  if (!Py_IsInitialized() || finalizing()) return;
  PyGILState_STATE gs = PyGILState_Ensure();
  if (g_progress && !g_cb_error_type) {
    /* stage / unit / detail: the step inside a long phase (finalize: "k-means", "iterations") */
    PyObject *d = Py_BuildValue("{s:s,s:K,s:K,s:K,s:K,s:K,s:d,s:z,s:z,s:z,s:d}", "phase",
                                p->phase ? p->phase : "", "rows_done",
                                (unsigned long long)p->rows_done, "rows_total",
                                (unsigned long long)p->rows_total, "bytes_done",
                                (unsigned long long)p->bytes_done, "files_done",
                                (unsigned long long)p->files_done, "files_total",
                                (unsigned long long)p->files_total, "elapsed_s", p->elapsed_s,
                                "stage", p->stage, "unit", p->unit, "detail", p->detail,
                                "fraction", p->fraction);
    PyObject *r = d ? PyObject_CallOneArg(g_progress, d) : NULL;
    Py_XDECREF(d);
    if (!r) { /* stop the call; the exception is raised when it returns */
      PyErr_Fetch(&g_cb_error_type, &g_cb_error_value, &g_cb_error_tb);
      vf_cancel_request(0);
    }
    Py_XDECREF(r);
  }
  PyGILState_Release(gs);
}

/* ------------------------------------------------------------ Buffer type */

typedef struct {
  PyObject_HEAD
  void *data;
  Py_ssize_t len;
  Py_ssize_t exports;
} Buffer;

static void Buffer_dealloc(Buffer *b) {
  free(b->data);
  Py_TYPE(b)->tp_free((PyObject *)b);
}

static int Buffer_getbuffer(Buffer *b, Py_buffer *view, int flags) {
  int r = PyBuffer_FillInfo(view, (PyObject *)b, b->data, b->len, 0, flags);
  if (r == 0) b->exports++;
  return r;
}

static void Buffer_releasebuffer(Buffer *b, Py_buffer *view) {
  (void)view;
  b->exports--;
}

static PyBufferProcs Buffer_as_buffer = {(getbufferproc)Buffer_getbuffer,
                                         (releasebufferproc)Buffer_releasebuffer};

static PyObject *Buffer_address(Buffer *b, PyObject *unused) {
  (void)unused;
  return PyLong_FromVoidPtr(b->data);
}

static PyMethodDef Buffer_methods[] = {
    {"address", (PyCFunction)Buffer_address, METH_NOARGS, "address of the memory (tests)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vforge._vforge.Buffer",
    .tp_basicsize = sizeof(Buffer),
    .tp_dealloc = (destructor)Buffer_dealloc,
    .tp_as_buffer = &Buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory vforge allocated, owned by this object; numpy views it (numpy.frombuffer).",
    .tp_methods = Buffer_methods,
};

/* take ownership of malloc'd memory (freed on failure) */
static PyObject *buffer_take(void *data, size_t len) {
  Buffer *b = PyObject_New(Buffer, &BufferType);
  if (!b) {
    free(data);
    return NULL;
  }
  b->data = data;
  b->len = (Py_ssize_t)len;
  b->exports = 0;
  return (PyObject *)b;
}

/* a C-contiguous input buffer of exactly `bytes` bytes */
static bool get_input(PyObject *obj, Py_buffer *view, size_t bytes, const char *what) {
  if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) != 0) return false;
  if ((size_t)view->len != bytes) {
    PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zu", what, view->len, bytes);
    PyBuffer_Release(view);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------- helpers */

/* a list of str (or None) as a NULL-terminated array; strings borrowed from the list */
typedef struct str_list {
  const char **v;
  int n;
} str_list;

static bool str_list_get(PyObject *o, str_list *out, const char *what) {
  out->v = NULL;
  out->n = 0;
  if (!o || o == Py_None) return true;
  PyObject *seq = PySequence_Fast(o, what);
  if (!seq) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  out->v = calloc((size_t)n + 1, sizeof *out->v);
  if (!out->v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return false;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
    const char *s = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
    if (!s) {
      free(out->v);
      out->v = NULL;
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "%s: expected a list of str", what);
      return false;
    }
    out->v[i] = s;
  }
  out->n = (int)n;
  Py_DECREF(seq); /* the items stay alive through `o` */
  return true;
}

static bool metric_get(const char *name, corpus_distance *out) {
  if (idx_metric_parse(name, out)) return true;
  PyErr_Format(UsageError, "unknown metric '%s' (cosine, dot, euclid, manhattan)", name);
  return false;
}

/* hits with text ids as (ids, scores): ints (an int64 Buffer, -1 padding) when every id is an
 * integer (the corpus has integer point ids), else a list of str (None padding); scores a float32
 * Buffer (NaN padding) */
/* ids: int64 when every hit id is a decimal integer, else str; `uuids`: the corpus's ids are
 * vf_point_id UUIDs, so str even when no query has a hit (a filter matching nothing). */
static PyObject *hits_result(uint64_t nq, size_t k, const char (*ids)[37], const float *scores,
                             const uint32_t *counts, bool uuids) {
  size_t cnt = (size_t)nq * k;
  bool ints = !uuids;
  for (uint64_t i = 0; i < nq && ints; i++)
    for (uint32_t j = 0; j < counts[i] && ints; j++) {
      const char *s = ids[i * k + j];
      ints = s[0] != 0 && strspn(s, "0123456789") == strlen(s) && strlen(s) <= 18;
    }
  float *sc = malloc(cnt * sizeof(float) + sizeof(float));
  if (!sc) return PyErr_NoMemory();
  for (size_t i = 0; i < cnt; i++) sc[i] = NAN;
  PyObject *idobj = NULL;
  if (ints) {
    int64_t *iv = malloc(cnt * sizeof(int64_t) + sizeof(int64_t));
    if (!iv) {
      free(sc);
      return PyErr_NoMemory();
    }
    for (size_t i = 0; i < cnt; i++) iv[i] = -1;
    for (uint64_t i = 0; i < nq; i++)
      for (uint32_t j = 0; j < counts[i]; j++) iv[i * k + j] = strtoll(ids[i * k + j], NULL, 10);
    idobj = buffer_take(iv, cnt * sizeof(int64_t));
  } else {
    idobj = PyList_New((Py_ssize_t)cnt);
    for (size_t i = 0; idobj && i < cnt; i++) {
      size_t q = i / k, j = i % k;
      PyObject *s = j < counts[q] ? PyUnicode_FromString(ids[i]) : Py_NewRef(Py_None);
      if (!s) {
        Py_CLEAR(idobj);
        break;
      }
      PyList_SET_ITEM(idobj, (Py_ssize_t)i, s);
    }
  }
  for (uint64_t i = 0; i < nq; i++)
    for (uint32_t j = 0; j < counts[i]; j++) sc[i * k + j] = scores[i * k + j];
  if (!idobj) {
    free(sc);
    return NULL;
  }
  PyObject *sb = buffer_take(sc, cnt * sizeof(float));
  if (!sb) {
    Py_DECREF(idobj);
    return NULL;
  }
  return Py_BuildValue("(NNO)", idobj, sb, ints ? Py_True : Py_False);
}

/* ------------------------------------------------------------- streams */

typedef struct {
  PyObject_HEAD
  struct ArrowArrayStream s;
  int threads; /* applied while this module reads the next batch */
} Stream;

static void Stream_dealloc(Stream *self) {
  if (self->s.release) self->s.release(&self->s);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static void capsule_stream_free(PyObject *cap) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (s && s->release) s->release(s);
  free(s);
}

static void capsule_schema_free(PyObject *cap) {
  struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
  if (s && s->release) s->release(s);
  free(s);
}

static void capsule_array_free(PyObject *cap) {
  struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
  if (a && a->release) a->release(a);
  free(a);
}

static bool stream_open_check(Stream *self) {
  if (self->s.release) return true;
  PyErr_SetString(UsageError, "the stream was consumed or closed (open() it again)");
  return false;
}

static PyObject *Stream_arrow_c_stream(Stream *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"requested_schema", NULL};
  PyObject *req = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &req)) return NULL;
  if (req != Py_None) {
    PyErr_SetString(PyExc_NotImplementedError, "vforge streams are exported in their own schema");
    return NULL;
  }
  if (!stream_open_check(self)) return NULL;
  struct ArrowArrayStream *s = malloc(sizeof *s);
  if (!s) return PyErr_NoMemory();
  *s = self->s;
  self->s.release = NULL;
  PyObject *cap = PyCapsule_New(s, "arrow_array_stream", capsule_stream_free);
  if (!cap) {
    s->release(s);
    free(s);
  }
  return cap;
}

static PyObject *Stream_export_to_c(Stream *self, PyObject *arg) {
  void *p = PyLong_AsVoidPtr(arg);
  if (!p && PyErr_Occurred()) return NULL;
  if (!p) {
    PyErr_SetString(PyExc_ValueError, "a NULL address");
    return NULL;
  }
  if (!stream_open_check(self)) return NULL;
  memcpy(p, &self->s, sizeof self->s);
  self->s.release = NULL;
  Py_RETURN_NONE;
}

static PyObject *Stream_schema_capsule(Stream *self, PyObject *unused) {
  (void)unused;
  if (!stream_open_check(self)) return NULL;
  struct ArrowSchema *sc = calloc(1, sizeof *sc);
  if (!sc) return PyErr_NoMemory();
  if (self->s.get_schema(&self->s, sc) != 0) {
    free(sc);
    PyErr_Format(Error, "%s", self->s.get_last_error(&self->s));
    return NULL;
  }
  return PyCapsule_New(sc, "arrow_schema", capsule_schema_free);
}

/* the next batch as (schema capsule, array capsule), None at the end */
static PyObject *Stream_next_capsules(Stream *self, PyObject *unused) {
  (void)unused;
  if (!stream_open_check(self)) return NULL;
  struct ArrowArray *a = calloc(1, sizeof *a);
  if (!a) return PyErr_NoMemory();
  vf_error err;
  vf_error_clear(&err);
  call_state cs;
  call_begin(&cs, self->threads);
  vf_status st = vf_arrow_next(&self->s, a, &err);
  if (!call_end(&cs, &st, &err)) {
    if (a->release) a->release(a);
    free(a);
    return NULL;
  }
  if (!a->release) { /* the end: the stream is consumed */
    free(a);
    self->s.release(&self->s);
    Py_RETURN_NONE;
  }
  PyObject *ac = PyCapsule_New(a, "arrow_array", capsule_array_free);
  if (!ac) {
    a->release(a);
    free(a);
    return NULL;
  }
  PyObject *sc = Stream_schema_capsule(self, NULL);
  if (!sc) {
    Py_DECREF(ac);
    return NULL;
  }
  return Py_BuildValue("(NN)", sc, ac);
}

static PyObject *Stream_close(Stream *self, PyObject *unused) {
  (void)unused;
  if (self->s.release) self->s.release(&self->s);
  Py_RETURN_NONE;
}

static PyObject *Stream_closed(Stream *self, void *unused) {
  (void)unused;
  return PyBool_FromLong(self->s.release == NULL);
}

static PyMethodDef Stream_methods[] = {
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))Stream_arrow_c_stream, METH_VARARGS | METH_KEYWORDS,
     "The Arrow PyCapsule stream protocol: moves the stream into an 'arrow_array_stream' capsule."},
    {"_export_to_c", (PyCFunction)Stream_export_to_c, METH_O,
     "Move the stream into the struct ArrowArrayStream at an address (pyarrow's _import_from_c)."},
    {"schema_capsule", (PyCFunction)Stream_schema_capsule, METH_NOARGS, "The schema as an 'arrow_schema' capsule."},
    {"next_capsules", (PyCFunction)Stream_next_capsules, METH_NOARGS,
     "The next batch as (schema, array) capsules, or None at the end (Ctrl-C interrupts)."},
    {"close", (PyCFunction)Stream_close, METH_NOARGS, "Release the stream."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Stream_getset[] = {{"closed", (getter)Stream_closed, NULL, "consumed or closed", NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vforge._vforge.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An Arrow C stream of vforge record batches (see vforge.open).",
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
};

static PyObject *py_open_stream(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"source", "columns", "vectors", "with_id", "id_expression", "provenance",
                           "skip_bad_rows", "id_root", "threads", NULL};
  const char *source, *idexpr = NULL, *id_root = NULL;
  PyObject *columns = Py_None, *vectors = Py_None;
  int with_id = 1, prov = 1, skip = 0, threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OOpzppzi", kwlist, &source, &columns, &vectors,
                                   &with_id, &idexpr, &prov, &skip, &id_root, &threads))
    return NULL;
  str_list cols, vecs;
  if (!str_list_get(columns, &cols, "columns")) return NULL;
  if (!str_list_get(vectors, &vecs, "vectors")) {
    free(cols.v);
    return NULL;
  }
  vf_arrow_opts o;
  vf_arrow_opts_default(&o);
  o.id_root = id_root;
  o.columns = cols.v;
  o.ncolumns = cols.n;
  o.vectors = vecs.v;
  o.nvectors = vecs.n;
  o.vectors_given = vectors != Py_None;
  o.with_id = with_id;
  o.id_expression = idexpr;
  o.provenance = prov;
  o.skip_bad_rows = skip;
  Stream *st_obj = PyObject_New(Stream, &StreamType);
  if (!st_obj) {
    free(cols.v);
    free(vecs.v);
    return NULL;
  }
  memset(&st_obj->s, 0, sizeof st_obj->s);
  st_obj->threads = threads;
  vf_error err;
  vf_error_clear(&err);
  call_state cs;
  call_begin(&cs, threads);
  vf_status st = vf_arrow_open(source, &o, &st_obj->s, &err);
  bool ok = call_end(&cs, &st, &err);
  free(cols.v);
  free(vecs.v);
  if (!ok) {
    Py_DECREF(st_obj);
    return NULL;
  }
  return (PyObject *)st_obj;
}

/* --------------------------------------------------------- read_vectors */

static PyObject *py_read_vectors(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"source", "column", "id_root", "threads", NULL};
  const char *source, *column = NULL, *id_root = NULL;
  int threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zzi", kwlist, &source, &column, &id_root, &threads))
    return NULL;
  vf_error err;
  vf_error_clear(&err);
  corpus_source src;
  memset(&src, 0, sizeof src);
  float *m = NULL;
  uint64_t rows = 0;
  int32_t dim = 0;
  call_state cs;
  call_begin(&cs, threads);
  corpus_source_opts so = {.id_root = id_root, .column = column};
  vf_status st = VF_OK;
  VF_TRY(corpus_source_open(source, &so, &src, &err));
  VF_TRY(corpus_read_vectors(&src, src.records ? NULL : column, threads, &m, &rows, &dim, &err));
out:
  corpus_source_close(&src);
  if (!call_end(&cs, &st, &err)) {
    free(m);
    return NULL;
  }
  PyObject *b = buffer_take(m, (size_t)rows * (size_t)dim * sizeof(float));
  return b ? Py_BuildValue("(NKi)", b, (unsigned long long)rows, (int)dim) : NULL;
}

/* ---------------------------------------------------------- brute force */

static PyObject *py_brute_force_matrix(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "n", "q", "nq", "dim", "k", "metric", "threads", NULL};
  PyObject *xo, *qo;
  unsigned long long n, nq;
  int dim, threads = 0;
  unsigned int k;
  const char *metric = "cosine";
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OKOKiI|si", kwlist, &xo, &n, &qo, &nq, &dim, &k,
                                   &metric, &threads))
    return NULL;
  corpus_distance m;
  if (!metric_get(metric, &m)) return NULL;
  if (dim < 1 || k < 1 || nq < 1) {
    PyErr_SetString(UsageError, "brute_force: need dim >= 1, k >= 1 and at least one query");
    return NULL;
  }
  Py_buffer xv, qv;
  if (!get_input(xo, &xv, (size_t)n * (size_t)dim * sizeof(float), "corpus")) return NULL;
  if (!get_input(qo, &qv, (size_t)nq * (size_t)dim * sizeof(float), "queries")) {
    PyBuffer_Release(&xv);
    return NULL;
  }
  size_t cnt = (size_t)nq * k;
  idx_hit *hits = malloc(cnt * sizeof *hits + sizeof *hits);
  uint32_t *counts = calloc((size_t)nq + 1, sizeof *counts);
  int64_t *ids = malloc(cnt * sizeof(int64_t) + 8);
  float *scores = malloc(cnt * sizeof(float) + 4);
  vf_error err;
  vf_error_clear(&err);
  vf_status st = VF_OK;
  bool ok;
  call_state cs;
  call_begin(&cs, threads);
  if (!hits || !counts || !ids || !scores) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
  VF_TRY(eval_brute_force_matrix(xv.buf, n, qv.buf, nq, dim, k, m, threads, hits, counts, &err));
  for (uint64_t i = 0; i < nq; i++)
    for (uint32_t j = 0; j < k; j++) {
      bool h = j < counts[i];
      ids[i * k + j] = h ? hits[i * k + j].key : -1;
      scores[i * k + j] = h ? hits[i * k + j].score : NAN;
    }
out:
  ok = call_end(&cs, &st, &err);
  PyBuffer_Release(&xv);
  PyBuffer_Release(&qv);
  free(hits);
  free(counts);
  if (!ok) {
    free(ids);
    free(scores);
    return NULL;
  }
  PyObject *ib = buffer_take(ids, cnt * sizeof(int64_t));
  PyObject *sb = ib ? buffer_take(scores, cnt * sizeof(float)) : (free(scores), NULL);
  if (!sb) {
    Py_XDECREF(ib);
    return NULL;
  }
  return Py_BuildValue("(NN)", ib, sb);
}

static PyObject *py_brute_force(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"corpus", "k", "queries", "qvec", "nq", "qdim", "metric", "column",
                           "output", "write", "id_root", "threads", "filter", NULL};
  const char *corpus, *queries = NULL, *metric = NULL, *column = NULL, *output = NULL, *id_root = NULL;
  const char *filter = NULL;
  PyObject *qo = Py_None;
  unsigned long long nq = 0;
  int qdim = 0, write = 0, threads = 0;
  unsigned int k;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sI|zOKizzzpziz", kwlist, &corpus, &k, &queries, &qo, &nq,
                                   &qdim, &metric, &column, &output, &write, &id_root, &threads, &filter))
    return NULL;
  eval_bf_opts o;
  memset(&o, 0, sizeof o);
  o.k = k;
  o.column = column;
  o.output = output;
  o.no_file = !write;
  o.threads = threads;
  o.queries = queries;
  o.filter = filter; /* parsed (and refused, naming the key) by eval_brute_force, as the CLI's */
  bool have_metric = metric != NULL;
  if (metric && !metric_get(metric, &o.metric)) return NULL;
  Py_buffer qv;
  bool qheld = false;
  if (!queries) {
    if (qo == Py_None || qdim < 1 || nq < 1) {
      PyErr_SetString(UsageError, "brute_force: queries are a file path or an (n, d) array");
      return NULL;
    }
    if (!get_input(qo, &qv, (size_t)nq * (size_t)qdim * sizeof(float), "queries")) return NULL;
    qheld = true;
    o.query_vectors = qv.buf;
    o.nqueries = nq;
    o.query_dim = qdim;
  }
  eval_bf_hits hits;
  memset(&hits, 0, sizeof hits);
  o.hits = &hits;
  eval_bf_result r;
  memset(&r, 0, sizeof r);
  vf_error err;
  vf_error_clear(&err);
  corpus_source cc;
  memset(&cc, 0, sizeof cc);
  call_state cs;
  call_begin(&cs, threads);
  corpus_source_opts so = {.id_root = id_root, .column = column};
  vf_status st = VF_OK;
  bool uuids = true; /* ids are vf_point_id(filename, row) UUIDs */
  VF_TRY(corpus_source_open(corpus, &so, &cc, &err));
  if (cc.records) {
    o.records = &cc.spec;
    if (!have_metric) o.metric = cc.distance;
  }
  VF_TRY(eval_brute_force(&cc.files, &o, &r, &err));
  uuids = !cc.records || !cc.id_text || strcmp(cc.id_text, VF_CONFIG_DEFAULT_ID_EXPRESSION) == 0;
out:
  corpus_source_close(&cc);
  bool ok = call_end(&cs, &st, &err);
  if (qheld) PyBuffer_Release(&qv);
  PyObject *res = NULL;
  if (ok) {
    PyObject *h = hits_result(hits.nq, hits.k, (const char(*)[37])hits.ids, hits.scores, hits.counts, uuids);
    if (h)
      res = Py_BuildValue("(NKKKz)", h, (unsigned long long)hits.nq, (unsigned long long)r.rows_scanned,
                          (unsigned long long)r.rows_skipped, write ? r.path : NULL);
  }
  eval_bf_hits_free(&hits);
  free(r.path);
  return res;
}

/* ------------------------------------------------------ generate_queries */

static PyObject *py_generate_queries(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"corpus", "n", "seed", "columns", "column", "output", "id_root", "threads",
                           "filter_template", NULL};
  const char *corpus, *column = NULL, *output = NULL, *id_root = NULL, *tmpl = NULL;
  unsigned long long n, seed = 42;
  PyObject *columns = Py_None;
  int threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sK|KOzzziz", kwlist, &corpus, &n, &seed, &columns,
                                   &column, &output, &id_root, &threads, &tmpl))
    return NULL;
  str_list cols;
  if (!str_list_get(columns, &cols, "columns")) return NULL;
  eval_queries_opts o = {.n = n, .seed = seed, .column = column, .columns = cols.v,
                         .ncolumns = cols.n, .output = output, .filter_template = tmpl};
  eval_queries_result r;
  memset(&r, 0, sizeof r);
  vf_error err;
  vf_error_clear(&err);
  corpus_source cc;
  memset(&cc, 0, sizeof cc);
  call_state cs;
  call_begin(&cs, threads);
  corpus_source_opts so = {.id_root = id_root, .column = column};
  vf_status st = VF_OK;
  VF_TRY(corpus_source_open(corpus, &so, &cc, &err));
  if (cc.records) o.records = &cc.spec;
  VF_TRY(eval_generate_queries(&cc.files, &o, &r, &err));
out:
  corpus_source_close(&cc);
  bool ok = call_end(&cs, &st, &err);
  free(cols.v);
  PyObject *res = ok ? Py_BuildValue("{s:s,s:K,s:K,s:K,s:i}", "path", r.path, "rows",
                                     (unsigned long long)r.rows, "corpus_rows",
                                     (unsigned long long)r.corpus_rows, "row_groups_read",
                                     (unsigned long long)r.row_groups_read, "dim", (int)r.dim)
                     : NULL;
  free(r.path);
  return res;
}

/* ----------------------------------------------------------------- index */

static PyObject *py_index_build(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"source", "output", "type", "nlist", "metric", "pq_m", "rabitq_bits", "rerank",
                           "seed", "max_train", "column", "id_expression", "id_root", "spill_dir",
                           "n", "dim", "threads", "pq_nbits", NULL};
  PyObject *source;
  const char *out, *type, *metric = NULL, *column = NULL, *idexpr = NULL, *id_root = NULL, *spill = NULL;
  unsigned int nlist = 0, pq_m = 0, rabitq_bits = 0, rerank = 0, pq_nbits = 0;
  unsigned long long seed = 1234, max_train = 0, n = 0;
  int dim = 0, threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "Oss|IzIIIKKzzzzKiiI", kwlist, &source, &out, &type, &nlist,
                                   &metric, &pq_m, &rabitq_bits, &rerank, &seed, &max_train, &column,
                                   &idexpr, &id_root, &spill, &n, &dim, &threads, &pq_nbits))
    return NULL;
  ivf_params p;
  memset(&p, 0, sizeof p);
  p.metric = CORPUS_COSINE;
  if (!ivf_code_parse(type, &p.type)) {
    PyErr_Format(UsageError, "unknown index type '%s' (flat, sq8, pq or rabitq)", type);
    return NULL;
  }
  if (metric && !metric_get(metric, &p.metric)) return NULL;
  p.nlist = nlist;
  p.pq_m = pq_m;
  if (pq_nbits && (pq_nbits != 4 && pq_nbits != 8)) {
    PyErr_Format(UsageError, "Index.build: pq_nbits must be 4 or 8 (got %u)", pq_nbits);
    return NULL;
  }
  if (pq_nbits && p.type != IVF_PQ) {
    PyErr_SetString(UsageError, "Index.build: pq_nbits needs type='pq'");
    return NULL;
  }
  p.pq_nbits = pq_nbits;
  p.rabitq_bits = rabitq_bits;
  p.rerank = rerank;
  p.seed = seed;
  p.max_train = max_train;
  p.threads = threads;
  p.spill_dir = spill;
  bool matrix = !PyUnicode_Check(source);
  const char *uri = matrix ? NULL : PyUnicode_AsUTF8(source);
  if (!matrix && !uri) return NULL;
  Py_buffer xv;
  if (matrix) {
    if (dim < 1) {
      PyErr_SetString(UsageError, "Index.build: an array needs its dimension");
      return NULL;
    }
    if (!get_input(source, &xv, (size_t)n * (size_t)dim * sizeof(float), "vectors")) return NULL;
    p.dim = dim;
  }
  vf_error err;
  vf_error_clear(&err);
  corpus_idexpr *idx = NULL;
  corpus_source cc;
  memset(&cc, 0, sizeof cc);
  ivf_build_report rep;
  memset(&rep, 0, sizeof rep);
  vf_buf json;
  VF_BUF_INIT(&json, VF_BUF_MAX_JSON_DOC);
  call_state cs;
  call_begin(&cs, threads);
  p.memory_budget = vf_memory_budget();
  vf_status st = VF_OK;
  size_t nfiles = 0;
  if (idexpr) {
    VF_TRY(corpus_idexpr_parse(idexpr, &idx, &err));
    if (!corpus_idexpr_deterministic(idx))
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: id expression '%s' is not deterministic", idexpr));
  }
  if (matrix) {
    VF_TRY(ivf_build_matrix(&p, out, xv.buf, n, &rep, &err));
  } else {
    corpus_source_opts so = {.id_root = id_root, .column = column};
    VF_TRY(corpus_source_open(uri, &so, &cc, &err));
    ivf_source_opts io = {.column = column, .id = idx, .id_text = idexpr,
                          .metric_given = metric != NULL};
    VF_TRY(ivf_build_source(&cc, &io, &p, out, &rep, &err));
    nfiles = cc.files.n;
  }
  VF_TRY(ivf_build_report_json(&rep, out, p.dim, p.metric, nfiles, &json, &err));
out:
  corpus_source_close(&cc);
  corpus_idexpr_free(idx);
  bool ok = call_end(&cs, &st, &err);
  if (matrix) PyBuffer_Release(&xv);
  PyObject *res = ok ? PyUnicode_FromStringAndSize((const char *)json.data, (Py_ssize_t)json.len) : NULL;
  vf_buf_free(&json);
  return res;
}

typedef struct {
  PyObject_HEAD
  ivf_index *ix;
  int integer_ids; /* -1 unknown */
} Index;

static void Index_dealloc(Index *self) {
  ivf_close(self->ix);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Index_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"path", NULL};
  const char *path;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s", kwlist, &path)) return NULL;
  Index *self = (Index *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->integer_ids = -1;
  vf_error err;
  vf_error_clear(&err);
  call_state cs;
  call_begin(&cs, 0);
  vf_status st = ivf_open(path, &self->ix, &err);
  if (!call_end(&cs, &st, &err)) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static bool index_ok(Index *self) {
  if (self->ix) return true;
  PyErr_SetString(UsageError, "the index is closed");
  return false;
}

static PyObject *Index_info(Index *self, PyObject *unused) {
  (void)unused;
  if (!index_ok(self)) return NULL;
  ivf_info in;
  ivf_info_get(self->ix, &in);
  return Py_BuildValue("{s:I,s:s,s:s,s:i,s:I,s:I,s:I,s:I,s:I,s:K,s:K,s:K,s:I,s:I,s:d,s:d}", "version",
                       in.version, "type", ivf_code_name(in.type), "metric", idx_metric_name(in.metric),
                       "dim", (int)in.dim, "nlist", in.nlist, "pq_m", in.pq_m, "pq_nbits", in.pq_nbits,
                       "rabitq_bits", in.rabitq_bits,
                       "rerank", in.rerank, "seed", (unsigned long long)in.seed, "rows",
                       (unsigned long long)in.rows, "file_bytes", (unsigned long long)in.file_bytes,
                       "list_min", in.list_min, "list_max", in.list_max, "list_max_over_mean",
                       in.list_max_over_mean, "list_balance", in.list_balance);
}

/* Filtered search, as `index search --filter F --corpus C` (`ftext`: one filter for every query)
 * or with a queries file's __filter__ column (`texts`: one filter text per query, NULL:
 * unfiltered): the corpus's payload matched to the index rows by point id (ev_ivf_filter_open),
 * each query's filter an allow mask over the index rows that ivf_search applies inside its list
 * scan, widening nprobe.  One filter for all: one mask shared by every query; per query: the
 * masks of a chunk of queries at a time (at most 256 MiB), as the CLI. */
static vf_status filtered_search(ivf_index *ix, const float *q, uint64_t nq, int dim, size_t k,
                                 ivf_search_opts *so, const char *ftext, char *const *texts,
                                 const char *corpus, const char *id_root, idx_hit *hits, size_t *counts,
                                 vf_error *err) {
  ev_filters flt;
  ev_ivf_filter xf;
  corpus_source cc;
  memset(&xf, 0, sizeof xf);
  memset(&cc, 0, sizeof cc);
  uint8_t *abuf = NULL;
  const uint8_t **allow = NULL;
  vf_status st = VF_OK;
  VF_TRY(ev_filters_init(&flt, nq, texts, "", ftext, "Index.search filters", err));
  if (flt.any && !corpus)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "Index.search: a filter reads the payload of the corpus the index "
                         "was built from; give corpus= (a URI or load config)"));
  corpus_source_opts co = {.id_root = id_root};
  if (flt.any) VF_TRY(corpus_source_open(corpus, &co, &cc, err));
  if (flt.any) VF_TRY(ev_ivf_filter_open(&xf, ix, &cc.files, cc.records ? &cc.spec : NULL, &flt, err));
  if (flt.any && xf.unmatched)
    vf_log(VF_LOG_WARN, "Index.search: %llu of %llu index rows have ids that are not in %s (never "
           "returned by a filtered query)", (unsigned long long)xf.unmatched, (unsigned long long)xf.rows, corpus);
  size_t rows = flt.any && xf.rows ? (size_t)xf.rows : 1;
  size_t chunk = (size_t)nq;
  if (flt.any && texts) {
    chunk = ((size_t)256 << 20) / rows;
    if (chunk < 1) chunk = 1;
    if (chunk > nq) chunk = (size_t)nq;
  }
  if (flt.any) {
    abuf = vf_malloc((ftext ? 1 : chunk) * rows);
    allow = vf_calloc(chunk, sizeof *allow);
    if (!abuf || !allow) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for the filters' masks"));
  }
  if (flt.any && ftext) { /* the same filter for every query: one mask */
    bool on = ev_ivf_filter_allow(&xf, 0, abuf);
    for (size_t i = 0; i < chunk; i++) allow[i] = on ? abuf : NULL;
  }
  for (uint64_t q0 = 0; q0 < nq; q0 += chunk) {
    size_t qn = nq - q0 < chunk ? (size_t)(nq - q0) : chunk;
    for (size_t i = 0; flt.any && texts && i < qn; i++)
      allow[i] = ev_ivf_filter_allow(&xf, q0 + i, abuf + i * rows) ? abuf + i * rows : NULL;
    so->allow = flt.any ? (const uint8_t *const *)allow : NULL;
    VF_TRY(ivf_search(ix, q + q0 * (size_t)dim, qn, dim, k, so, hits + q0 * k, counts + q0, err));
  }
out:
  so->allow = NULL;
  free(abuf);
  free(allow);
  ev_ivf_filter_close(&xf);
  ev_filters_free(&flt);
  corpus_source_close(&cc);
  return st;
}

static PyObject *Index_search(Index *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"queries", "nq", "dim", "k", "nprobe", "rerank", "threads", "filter", "corpus",
                           "id_root", "filters", NULL};
  PyObject *qo, *flist = Py_None;
  unsigned long long nq;
  int dim, threads = 0;
  unsigned int k, nprobe = 1, rerank = 0;
  const char *ftext = NULL, *corpus = NULL, *id_root = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OKiI|IIizzzO", kwlist, &qo, &nq, &dim, &k, &nprobe, &rerank,
                                   &threads, &ftext, &corpus, &id_root, &flist))
    return NULL;
  if (!index_ok(self)) return NULL;
  if (k < 1 || nq < 1) {
    PyErr_SetString(UsageError, "search: need k >= 1 and at least one query");
    return NULL;
  }
  /* filters: one text per query (None: unfiltered), borrowed from the list */
  PyObject *fseq = NULL;
  char **texts = NULL;
  if (flist != Py_None) {
    fseq = PySequence_Fast(flist, "filters: a list of str or None");
    if (!fseq) return NULL;
    if ((uint64_t)PySequence_Fast_GET_SIZE(fseq) != nq) {
      PyErr_Format(UsageError, "Index.search: %zd filters for %llu queries (one per query, None: unfiltered)",
                   PySequence_Fast_GET_SIZE(fseq), nq);
      Py_DECREF(fseq);
      return NULL;
    }
    texts = calloc((size_t)nq + 1, sizeof *texts);
    for (uint64_t i = 0; texts && i < nq; i++) {
      PyObject *it = PySequence_Fast_GET_ITEM(fseq, (Py_ssize_t)i);
      if (it == Py_None) continue;
      const char *t = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
      if (!t) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "filters: a list of str or None");
        free(texts);
        Py_DECREF(fseq);
        return NULL;
      }
      texts[i] = (char *)t;
    }
    if (!texts) {
      Py_DECREF(fseq);
      return PyErr_NoMemory();
    }
  }
  Py_buffer qv;
  if (!get_input(qo, &qv, (size_t)nq * (size_t)dim * sizeof(float), "queries")) {
    free(texts);
    Py_XDECREF(fseq);
    return NULL;
  }
  size_t cnt = (size_t)nq * k;
  idx_hit *hits = malloc(cnt * sizeof *hits + sizeof *hits);
  size_t *counts = calloc((size_t)nq + 1, sizeof *counts);
  char(*ids)[37] = malloc(cnt * 37 + 37);
  float *scores = malloc(cnt * sizeof(float) + 4);
  uint32_t *c32 = calloc((size_t)nq + 1, sizeof *c32);
  vf_error err;
  vf_error_clear(&err);
  vf_status st = VF_OK;
  bool ok;
  call_state cs;
  call_begin(&cs, threads);
  ivf_search_opts so = {.nprobe = nprobe, .threads = threads, .rerank = rerank};
  if (!hits || !counts || !ids || !scores || !c32) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
  if (ftext || texts)
    VF_TRY(filtered_search(self->ix, qv.buf, nq, dim, k, &so, ftext, texts, corpus, id_root, hits, counts, &err));
  else
    VF_TRY(ivf_search(self->ix, qv.buf, nq, dim, k, &so, hits, counts, &err));
  for (uint64_t i = 0; i < nq; i++) {
    c32[i] = (uint32_t)counts[i];
    for (size_t j = 0; j < counts[i]; j++) {
      size_t len = 0;
      const char *id = ivf_id(self->ix, hits[i * k + j].key, &len);
      if (len > 36) len = 36;
      memcpy(ids[i * k + j], id, len);
      ids[i * k + j][len] = 0;
      scores[i * k + j] = hits[i * k + j].score;
    }
  }
out:
  ok = call_end(&cs, &st, &err);
  PyBuffer_Release(&qv);
  free(texts);
  Py_XDECREF(fseq);
  if (self->integer_ids < 0) { /* the index's ids: integers (row numbers, id_expression: row) or UUIDs */
    ivf_info in;
    ivf_info_get(self->ix, &in);
    size_t len = 0;
    const char *id0 = in.rows ? ivf_id(self->ix, 0, &len) : "";
    size_t dg = 0;
    while (dg < len && id0[dg] >= '0' && id0[dg] <= '9') dg++;
    self->integer_ids = in.rows == 0 || (len > 0 && dg == len && len <= 18);
  }
  PyObject *res = ok ? hits_result(nq, k, (const char(*)[37])ids, scores, c32, !self->integer_ids) : NULL;
  free(hits);
  free(counts);
  free(ids);
  free(scores);
  free(c32);
  return res;
}

static PyObject *Index_close(Index *self, PyObject *unused) {
  (void)unused;
  ivf_close(self->ix);
  self->ix = NULL;
  Py_RETURN_NONE;
}

static PyMethodDef Index_methods[] = {
    {"info", (PyCFunction)Index_info, METH_NOARGS, "The file's header and list statistics."},
    {"search", (PyCFunction)(void (*)(void))Index_search, METH_VARARGS | METH_KEYWORDS, "Batched search."},
    {"close", (PyCFunction)Index_close, METH_NOARGS, "Unmap the file."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vforge._vforge.IndexFile",
    .tp_basicsize = sizeof(Index),
    .tp_dealloc = (destructor)Index_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An IVF index file opened with mmap (see vforge.Index).",
    .tp_methods = Index_methods,
    .tp_new = Index_new,
};

/* ------------------------------------------------------------------ load */

static PyObject *py_load(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"config", "subcommand", "resume", "offset", "limit", "skip_bad_rows", "store",
                           "num_jobs", "job_rank", "progress", "threads", NULL};
  const char *config, *sub = "run", *store_type = NULL;
  int resume = 0, skip = -1, num_jobs = 1, job_rank = 0, threads = 0;
  unsigned long long offset = 0, limit = 0;
  PyObject *progress = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|spKKiziiOi", kwlist, &config, &sub, &resume, &offset,
                                   &limit, &skip, &store_type, &num_jobs, &job_rank, &progress, &threads))
    return NULL;
  if (progress != Py_None && !PyCallable_Check(progress)) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable");
    return NULL;
  }
  int which = !strcmp(sub, "run") ? 0 : !strcmp(sub, "prepare") ? 1 : !strcmp(sub, "load") ? 2
              : !strcmp(sub, "finalize") ? 3 : -1;
  if (which < 0) {
    PyErr_Format(UsageError, "load: unknown step '%s' (run, prepare, load, finalize)", sub);
    return NULL;
  }
  if (g_progress) {
    PyErr_SetString(UsageError, "load: another load with a progress callback is running");
    return NULL;
  }
  ld_options o;
  ld_options_default(&o);
  o.resume = resume;
  o.offset = offset;
  o.limit = limit;
  o.skip_bad_rows = skip;
  o.store_type = store_type;
  o.num_jobs = num_jobs;
  o.job_rank = job_rank;
  ld_report rep;
  memset(&rep, 0, sizeof rep);
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  vf_buf json;
  VF_BUF_INIT(&json, VF_BUF_MAX_JSON_DOC);
  vf_error err;
  vf_error_clear(&err);
  if (progress != Py_None) {
    g_progress = Py_NewRef(progress);
    vf_set_progress_handler(progress_handler, NULL);
  }
  call_state cs;
  call_begin(&cs, threads);
  vf_status st = VF_OK;
  VF_TRY(vf_config_load(config, &cfg, &err));
  switch (which) {
  case 0: VF_TRY(ld_run(&cfg, &o, &rep, &err)); break;
  case 1: VF_TRY(ld_prepare(&cfg, &o, &rep, &err)); break;
  case 2: VF_TRY(ld_load(&cfg, &o, &rep, &err)); break;
  default: VF_TRY(ld_finalize(&cfg, &o, &rep, &err)); break;
  }
  VF_TRY(ld_report_json(&rep, &json, &err));
out:
  vf_config_free(&cfg);
  if (progress != Py_None) vf_set_progress_handler(NULL, NULL);
  bool ok = call_end(&cs, &st, &err);
  Py_CLEAR(g_progress);
  PyObject *res = ok ? Py_BuildValue("(s#NKK)", (const char *)json.data, (Py_ssize_t)json.len,
                                     PyBool_FromLong(rep.verified), (unsigned long long)rep.stored,
                                     (unsigned long long)rep.expected)
                     : NULL;
  vf_buf_free(&json);
  return res;
}

/* ----------------------------------------------------------------- bench */

/* bench(...) -> the --json text: bench_target_open() + bench_sweep() as `vforge bench` runs them
 * (an empty grid is one point); `sweep` holds "name=v1,v2,..." axes (--sweep, and list-valued
 * --concurrency / --rps, which the Python side turns into axes). */
static PyObject *py_bench(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"queries", "ground_truth", "k", "config", "store", "path", "collection", "column",
                           "concurrency", "rps", "max_outstanding", "hnsw_ef", "exact", "threads",
                           "filter", "nprobe", "warmup", "oversampling", "rescore", "sweep", NULL};
  bench_request rq;
  memset(&rq, 0, sizeof rq);
  unsigned long long k, warmup = 0;
  unsigned int nprobe = 0;
  int hnsw_ef = 0, exact = 0, threads = 0, rescore = -1;
  double oversampling = 0;
  PyObject *sweep = Py_None;
  rq.concurrency = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "szK|zzzzzidiipizIKdiO", kwlist, &rq.queries, &rq.ground_truth,
                                   &k, &rq.config, &rq.store_type, &rq.path, &rq.collection, &rq.column,
                                   &rq.concurrency, &rq.rps, &rq.max_outstanding, &hnsw_ef, &exact, &threads,
                                   &rq.filter, &nprobe, &warmup, &oversampling, &rescore, &sweep))
    return NULL;
  /* an ann-filtering-benchmark bundle holds its own ground truth, as on the command line */
  if (!rq.ground_truth && bench_is_bundle(rq.queries)) rq.ground_truth = rq.queries;
  if (!rq.ground_truth) {
    PyErr_SetString(UsageError, "bench: ground_truth is required (unless queries is a filtering bundle)");
    return NULL;
  }
  if (warmup > BENCH_MAX_QUERIES) {
    PyErr_Format(UsageError, "warmup must be at most %zu", (size_t)BENCH_MAX_QUERIES);
    return NULL;
  }
  rq.k = (size_t)k;
  str_list specs;
  if (!str_list_get(sweep, &specs, "sweep")) return NULL;
  store_qdrant_search_opts qo = {hnsw_ef, exact != 0, rescore, oversampling};
  if (hnsw_ef > 0 || exact || rescore >= 0 || oversampling != 0) rq.qdrant = &qo;
  bench_grid *grid = calloc(1, sizeof *grid);
  bench_target tg;
  memset(&tg, 0, sizeof tg);
  bench_point *pts = NULL;
  size_t npts = 0;
  vf_buf json;
  VF_BUF_INIT(&json, VF_BUF_MAX_JSON_DOC);
  vf_error err;
  vf_error_clear(&err);
  vf_status st = VF_OK;
  call_state cs;
  call_begin(&cs, threads); /* the steps below are C only: none needs the GIL */
  if (!grid) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
  for (int i = 0; i < specs.n; i++) VF_TRY(bench_grid_add(grid, specs.v[i], &err));
  if (oversampling != 0) {
    char txt[64];
    snprintf(txt, sizeof txt, "%.17g", oversampling);
    VF_TRY(bench_knob_value(BENCH_KNOB_OVERSAMPLING, txt, &oversampling, &err));
  }
  VF_TRY(bench_target_open(&rq, &tg, &err));
  tg.o.nprobe = nprobe;
  tg.o.warmup = (size_t)warmup;
  VF_TRY(bench_sweep_check(&tg.o, grid, &err));
  VF_TRY(bench_sweep(&tg.o, grid, &tg.q, &tg.t, tg.rows, NULL, NULL, &pts, &npts, &err));
  VF_TRY(grid->naxes > 0 ? bench_points_json(pts, npts, &json, &err) : bench_report_json(&pts[0].rep, &json, &err));
out:
  bench_points_free(pts, npts);
  bench_target_free(&tg);
  bool ok = call_end(&cs, &st, &err);
  free(specs.v);
  free(grid);
  PyObject *res = ok ? PyUnicode_FromStringAndSize((const char *)json.data, (Py_ssize_t)json.len) : NULL;
  vf_buf_free(&json);
  return res;
}

/* ---------------------------------------------------------------- recall */

/* recall(hits: list of lists of str|None, truth_path|None, truth_ids, truth_scores, k,
 *        hit_scores) -> (recall, recall_max): bench_recall_one() over each row */
static PyObject *py_recall(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"hits", "k", "truth_path", "truth_ids", "truth_scores", "hit_scores", NULL};
  PyObject *hits, *tids = Py_None, *tsc = Py_None, *hsc = Py_None;
  const char *tpath = NULL;
  unsigned long long k;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OK|zOOO", kwlist, &hits, &k, &tpath, &tids, &tsc, &hsc))
    return NULL;
  bench_truth t;
  memset(&t, 0, sizeof t);
  vf_error err;
  vf_error_clear(&err);
  vf_status st = VF_OK;
  PyObject *trows = NULL, *srows = NULL, *hs = NULL;
  store_hit *sh = NULL;
  double s1 = 0, s2 = 0;
  size_t scored = 0;
  PyObject *hrows = PySequence_Fast(hits, "hits: a sequence of rows");
  if (!hrows) return NULL;
  Py_ssize_t nq = PySequence_Fast_GET_SIZE(hrows);
  if (tpath) {
    Py_BEGIN_ALLOW_THREADS
    st = bench_read_truth(tpath, &t, &err);
    Py_END_ALLOW_THREADS
    if (st != VF_OK) goto out;
  } else {
    /* truth from memory: rows of ids (str) and scores (float) */
    trows = PySequence_Fast(tids, "truth ids: a sequence of rows");
    srows = trows ? PySequence_Fast(tsc, "truth scores: a sequence of rows") : NULL;
    if (!srows) VF_FAIL(VF_EUSAGE); /* the Python exception is raised */
    t.n = (size_t)PySequence_Fast_GET_SIZE(trows);
    for (size_t i = 0; i < t.n; i++) {
      Py_ssize_t m = PySequence_Size(PySequence_Fast_GET_ITEM(trows, (Py_ssize_t)i));
      if (m > (Py_ssize_t)t.k) t.k = (size_t)m;
    }
    t.qids = calloc(t.n + 1, sizeof *t.qids);
    t.hit_ids = calloc(t.n * t.k + 1, sizeof *t.hit_ids);
    t.scores = calloc(t.n * t.k + 1, sizeof *t.scores);
    t.counts = calloc(t.n + 1, sizeof *t.counts);
    if (!t.qids || !t.hit_ids || !t.scores || !t.counts)
      VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
    for (size_t i = 0; i < t.n; i++) {
      PyObject *ir = PySequence_Fast(PySequence_Fast_GET_ITEM(trows, (Py_ssize_t)i), "truth row");
      PyObject *sr = ir ? PySequence_Fast(PySequence_Fast_GET_ITEM(srows, (Py_ssize_t)i), "truth scores row") : NULL;
      if (!sr) {
        Py_XDECREF(ir);
        VF_FAIL(VF_EUSAGE);
      }
      Py_ssize_t m = PySequence_Fast_GET_SIZE(ir);
      for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *id = PySequence_Fast_GET_ITEM(ir, j);
        if (id == Py_None) break;
        PyObject *s = PyObject_Str(id);
        const char *c = s ? PyUnicode_AsUTF8(s) : NULL;
        corpus_id cid;
        char canon[37];
        if (c && store_id_parse(c, strlen(c), &cid)) {
          store_id_format(&cid, canon);
          c = canon;
        }
        t.hit_ids[i * t.k + (size_t)j] = c ? strdup(c) : NULL;
        double v = j < PySequence_Fast_GET_SIZE(sr) ? PyFloat_AsDouble(PySequence_Fast_GET_ITEM(sr, j)) : NAN;
        t.scores[i * t.k + (size_t)j] = (float)v;
        t.counts[i] = (size_t)j + 1;
        Py_XDECREF(s);
        if (!t.hit_ids[i * t.k + (size_t)j]) {
          st = VF_EUSAGE;
          break;
        }
      }
      Py_DECREF(ir);
      Py_DECREF(sr);
      if (st != VF_OK) goto out;
    }
  }
  if ((size_t)nq != t.n)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "recall: %zd rows of hits but %zu rows of ground truth",
                         nq, t.n));
  if (k < 1 || k > t.k)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE,
                         "recall: k %llu must be in 1..%zu (the truth's hits per query)", k, t.k));
  sh = calloc((size_t)k + 1, sizeof *sh);
  if (!sh) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
  hs = hsc != Py_None ? PySequence_Fast(hsc, "hit scores") : NULL;
  for (Py_ssize_t i = 0; i < nq; i++) {
    PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(hrows, i), "hits row");
    PyObject *srow = row && hs ? PySequence_Fast(PySequence_Fast_GET_ITEM(hs, i), "hit scores row") : NULL;
    if (!row || (hs && !srow)) {
      Py_XDECREF(row);
      VF_FAIL(VF_EUSAGE);
    }
    size_t n = 0;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(row);
    for (Py_ssize_t j = 0; j < m && n < (size_t)k; j++) {
      PyObject *id = PySequence_Fast_GET_ITEM(row, j);
      if (id == Py_None) continue;
      PyObject *s = PyObject_Str(id);
      const char *c = s ? PyUnicode_AsUTF8(s) : NULL;
      if (c && strcmp(c, "-1") != 0 && store_id_parse(c, strlen(c), &sh[n].id)) {
        sh[n].score = srow && j < PySequence_Fast_GET_SIZE(srow)
                          ? (float)PyFloat_AsDouble(PySequence_Fast_GET_ITEM(srow, j)) : NAN;
        n++;
      }
      Py_XDECREF(s);
    }
    Py_DECREF(row);
    Py_XDECREF(srow);
    double a = 0, b = 0;
    if (!bench_recall_one(&t, (size_t)i, (size_t)k, sh, n, &a, &b)) continue;
    scored++; /* a query without a true hit (a filter no point matches) is left out, as in bench */
    s1 += a;
    s2 += b;
  }
out:
  Py_XDECREF(trows);
  Py_XDECREF(srows);
  Py_XDECREF(hs);
  free(sh);
  bench_truth_free(&t);
  Py_DECREF(hrows);
  if (st == VF_EUSAGE && PyErr_Occurred()) return NULL;
  if (st != VF_OK) return raise_vf(st, &err);
  return Py_BuildValue("(dd)", scored ? s1 / (double)scored : 0.0, scored ? s2 / (double)scored : 0.0);
}

/* ---------------------------------------------------------------- module */

static PyObject *py_version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(VFORGE_VERSION);
}

static PyMethodDef methods[] = {
    {"version", py_version, METH_NOARGS, "vforge's version."},
    {"open_stream", (PyCFunction)(void (*)(void))py_open_stream, METH_VARARGS | METH_KEYWORDS, "vf_arrow_open."},
    {"read_vectors", (PyCFunction)(void (*)(void))py_read_vectors, METH_VARARGS | METH_KEYWORDS, "corpus_read_vectors."},
    {"brute_force", (PyCFunction)(void (*)(void))py_brute_force, METH_VARARGS | METH_KEYWORDS, "eval_brute_force."},
    {"brute_force_matrix", (PyCFunction)(void (*)(void))py_brute_force_matrix, METH_VARARGS | METH_KEYWORDS,
     "eval_brute_force_matrix."},
    {"generate_queries", (PyCFunction)(void (*)(void))py_generate_queries, METH_VARARGS | METH_KEYWORDS,
     "eval_generate_queries."},
    {"index_build", (PyCFunction)(void (*)(void))py_index_build, METH_VARARGS | METH_KEYWORDS,
     "ivf_build_source / ivf_build_matrix."},
    {"load", (PyCFunction)(void (*)(void))py_load, METH_VARARGS | METH_KEYWORDS, "ld_run and its steps."},
    {"bench", (PyCFunction)(void (*)(void))py_bench, METH_VARARGS | METH_KEYWORDS, "bench_execute."},
    {"recall", (PyCFunction)(void (*)(void))py_recall, METH_VARARGS | METH_KEYWORDS, "bench_recall_one per row."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_vforge",
                                    "The C half of the vforge package (see vforge).", -1, methods,
                                    NULL, NULL, NULL, NULL};

static PyObject *new_error(PyObject *m, const char *name, PyObject *bases, const char *doc) {
  char full[64];
  snprintf(full, sizeof full, "vforge.%s", name);
  PyObject *e = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
  if (e && PyModule_AddObjectRef(m, name, e) < 0) Py_CLEAR(e);
  return e;
}

PyMODINIT_FUNC PyInit__vforge(void) {
  if (PyType_Ready(&BufferType) < 0 || PyType_Ready(&StreamType) < 0 || PyType_Ready(&IndexType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&moddef);
  if (!m) return NULL;
  Error = new_error(m, "Error", NULL, "A vforge error; .status names its kind, .exit_code is the CLI's.");
  PyObject *b;
  b = PyTuple_Pack(2, Error, PyExc_ValueError);
  UsageError = b ? new_error(m, "UsageError", b, "Bad arguments, config or an unsupported feature (exit 2).") : NULL;
  Py_XDECREF(b);
  b = PyTuple_Pack(2, Error, PyExc_ValueError);
  DataError = b ? new_error(m, "DataError", b, "Invalid input data: a corrupt file, a bad row (exit 2).") : NULL;
  Py_XDECREF(b);
  b = PyTuple_Pack(2, Error, PyExc_FileNotFoundError);
  NotFoundError = b ? new_error(m, "NotFoundError", b, "A file, object or column that does not exist (exit 2).") : NULL;
  Py_XDECREF(b);
  b = PyTuple_Pack(2, Error, PyExc_OSError);
  IOFailure = b ? new_error(m, "IOError", b, "Local I/O or network failure (exit 1).") : NULL;
  Py_XDECREF(b);
  b = PyTuple_Pack(2, Error, PyExc_MemoryError);
  ResourceError = b ? new_error(m, "ResourceError", b, "Out of memory or over the memory budget (exit 1).") : NULL;
  Py_XDECREF(b);
  if (!Error || !UsageError || !DataError || !NotFoundError || !IOFailure || !ResourceError ||
      PyModule_AddObjectRef(m, "Stream", (PyObject *)&StreamType) < 0 ||
      PyModule_AddObjectRef(m, "IndexFile", (PyObject *)&IndexType) < 0 ||
      PyModule_AddObjectRef(m, "Buffer", (PyObject *)&BufferType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  g_main_thread = PyThread_get_thread_ident();
  PyObject *logging = PyImport_ImportModule("logging");
  g_logger = logging ? PyObject_CallMethod(logging, "getLogger", "s", "vforge") : NULL;
  Py_XDECREF(logging);
  if (!g_logger) PyErr_Clear();
  vf_set_log_handler(log_handler, NULL);
  return m;
}
