/*
 * vforge util — the error model, bounds-checked byte cursor, growable buffers with a ceiling,
 * log/progress events, md5, JSON writing, atomic files, CPU/memory settings.
 *
 * Why one error type: every layer (io, format, corpus, cli) returns vf_status and fills a
 * vf_error whose message names the file, offset or row and what was expected.  The CLI maps the
 * status to an exit code (see vf_status_exit_code); the library never prints and never aborts.
 */
#ifndef VFORGE_UTIL_H
#define VFORGE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define VF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VF_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define VF_PRINTF(a, b)
#define VF_UNLIKELY(x) (x)
#define VF_LIKELY(x) (x)
#endif

/* ---------------------------------------------------------------- errors */

typedef enum vf_status {
  VF_OK = 0,
  VF_EUSAGE,       /* bad command line or API misuse                      -> exit 2 */
  VF_ECONFIG,      /* bad config key/value                                -> exit 2 */
  VF_ECORRUPT,     /* invalid input data: corrupt/truncated file, bad dim  -> exit 2 */
  VF_EUNSUPPORTED, /* valid input using a feature vforge does not read    -> exit 2 */
  VF_ENOTFOUND,    /* file/object/column not found                        -> exit 2 */
  VF_EIO,          /* local I/O failure                                   -> exit 1 */
  VF_ENET,         /* network/remote failure                              -> exit 1 */
  VF_ENOMEM,       /* allocation failed or memory budget exceeded         -> exit 1 */
  VF_EINTERNAL,    /* a bug                                               -> exit 1 */
  VF_ECANCELED     /* the run was cancelled (vf_cancel_request)    -> exit 130/143 */
} vf_status;

#define VF_ERROR_MSG_MAX 1024

typedef struct vf_error {
  vf_status code;
  char msg[VF_ERROR_MSG_MAX];
} vf_error;

/* The cleanup idiom (issue 15; zstd's FORWARD_IF_ERROR): a function that holds anything to
 * release declares `vf_status st = VF_OK;`, releases it once, after one `out:` label, and returns
 * st.  Each step that can fail forwards its failure there, so before `out:` st is VF_OK by
 * construction and nothing tests it; after `out:` a test of st (commit on success, unlink a
 * temporary on failure) is the cleanup's own business.  scripts/check-idiom.sh holds this. */
#define VF_TRY(expr)                                                                               \
  do {                                                                                             \
    st = (expr);                                                                                   \
    if (VF_UNLIKELY(st != VF_OK)) goto out;                                                        \
  } while (0)
/* A failure decided here, st = vf_error_set(err, ...) or another status, leaves the same way. */
#define VF_FAIL(expr)                                                                              \
  do {                                                                                             \
    st = (expr);                                                                                   \
    goto out;                                                                                      \
  } while (0)

/*! vf_error_set() : record an error (printf-style message) in `err` (may be NULL).
 *  @return : `code`, so callers can `return vf_error_set(err, VF_ECORRUPT, "...")`. */
vf_status vf_error_set(vf_error *err, vf_status code, const char *fmt, ...) VF_PRINTF(3, 4);

/*! vf_error_prefix() : prepend context ("file.parquet: ") to an error already set.
 *  @return : err->code (VF_OK when err is NULL). */
vf_status vf_error_prefix(vf_error *err, const char *fmt, ...) VF_PRINTF(2, 3);

/*! vf_error_clear() : reset to VF_OK with an empty message. */
void vf_error_clear(vf_error *err);

/*! vf_status_name() : short stable name ("corrupt", "io", ...). */
const char *vf_status_name(vf_status st);

/*! vf_status_exit_code() : the CLI exit code for a status: 0 ok, 2 usage/config/data, 1 other. */
int vf_status_exit_code(vf_status st);

/*! vf_strerror() : the message of the errno value `e`, thread-safe (strerror_r; strerror is on
 *  the ban list, scripts/check-banned.sh): in buf[0..cap) or a static string.
 *  VF_STRERROR(e) gives it a buffer that lives to the end of the enclosing block, for a `%s`
 *  argument: vf_error_set(err, VF_EIO, "%s: %s", path, VF_STRERROR(errno)). */
const char *vf_strerror(int e, char *buf, size_t cap);
#define VF_STRERROR_CAP 128
#define VF_STRERROR(e) vf_strerror((e), (char[VF_STRERROR_CAP]){0}, VF_STRERROR_CAP)

/* ------------------------------------------------------------ allocation */

/* Checked allocation helpers: return NULL on overflow/failure (never abort). */
void *vf_malloc(size_t n);
void *vf_calloc(size_t count, size_t size);
void *vf_realloc(void *p, size_t n);
void *vf_mallocarray(size_t count, size_t size); /* NULL on count*size overflow */
char *vf_strdup(const char *s);
char *vf_strndup(const char *s, size_t n);

/* ------------------------------------------------------------ URLs with credentials */

/*! vf_url_userinfo() : where the userinfo of `url` ("scheme://USER[:PASSWORD]@host...") starts
 *  and how long it is, the '@' excluded (RFC 3986 3.2.1).  @return : false when it has none. */
bool vf_url_userinfo(const char *url, size_t *start, size_t *len);
/*! vf_url_redact() : `url` with its userinfo replaced by "****" ("user:pw@host" becomes
 *  "****@host"), into out (cap bytes, truncated, always NUL-terminated); anything else is copied
 *  unchanged.  Every message, log line and file that names a URL passes it through here
 *  (passwords in URLs are secrets).  @return : out. */
char *vf_url_redact(const char *url, char *out, size_t cap);
/*! vf_url_redact_dup() : the same, malloc'd (NULL when out of memory or url is NULL). */
char *vf_url_redact_dup(const char *url);

/* ---------------------------------------------------------------- buffer */

/* A growable byte buffer with a ceiling (`max`, 0 = VF_BUF_DEFAULT_MAX): growing past it is
 * VF_ENOMEM with a message, so input-driven growth can never exhaust memory. */
#define VF_BUF_DEFAULT_MAX ((size_t)1 << 40)

/* Named ceilings (curl's dynbuf `toobig`): a buffer made with VF_BUF_INIT(&b, VF_BUF_MAX_...)
 * that would grow past its limit fails with VF_ENOMEM naming the limit and its size. */
#define VF_BUF_MAX_HTTP_BODY ((size_t)1 << 30) /* an HTTP request or response body in memory */
#define VF_BUF_MAX_URL ((size_t)1 << 20)       /* a URL, query string or form being built */
#define VF_BUF_MAX_JSON_DOC ((size_t)256 << 20) /* a JSON document or string built whole */
/* a path, name, id list, shell word list or message part built from a few bounded pieces */
#define VF_BUF_MAX_TEXT ((size_t)1 << 20)
/* one row as text: a JSON line, a payload object or one of its members (parquet byte arrays and
 * the lines a jsonl reader accepts are < 2 GiB) */
#define VF_BUF_MAX_RECORD ((size_t)1 << 31)
/* one batch's bytes held at once: a row group's or a jsonl range's payloads (the loader and
 * --memory-budget admit one batch per worker; real row groups are at most a few GiB) */
#define VF_BUF_MAX_BATCH ((size_t)16 << 30)
/* many rows held whole whose count an earlier check already bounds (QG_MAX_N queries,
 * BENCH_MAX_QUERIES, the corpus of a filtered index search): the row bound is the real limit */
#define VF_BUF_MAX_ROWS_HELD ((size_t)1 << 40)

typedef struct vf_buf {
  uint8_t *data;
  size_t len;
  size_t cap;
  size_t max;
  const char *limit; /* the name of `max` for messages (VF_BUF_INIT), or NULL */
} vf_buf;

void vf_buf_init(vf_buf *b, size_t max);
/*! vf_buf_init_named() : vf_buf_init() with the limit's name for the "too big" message. */
void vf_buf_init_named(vf_buf *b, size_t max, const char *limit);
#define VF_BUF_INIT(b, LIMIT) vf_buf_init_named((b), (LIMIT), #LIMIT)
void vf_buf_free(vf_buf *b);
static inline void vf_buf_reset(vf_buf *b) { b->len = 0; }
/*! vf_buf_reserve() : ensure room for `extra` more bytes after len. */
vf_status vf_buf_reserve(vf_buf *b, size_t extra, vf_error *err);
/*! vf_advise_huge() : ask the kernel for transparent huge pages on a large buffer (>= 8 MiB):
 *  first-touch page faults on row-group-sized buffers drop 512-fold.  A hint only. */
void vf_advise_huge(void *p, size_t n);
vf_status vf_buf_append(vf_buf *b, const void *p, size_t n, vf_error *err);
vf_status vf_buf_printf(vf_buf *b, vf_error *err, const char *fmt, ...) VF_PRINTF(3, 4);
/*! vf_buf_take() : hand over the data (caller frees) and reset the buffer to empty. */
uint8_t *vf_buf_take(vf_buf *b, size_t *len);
/* Unchecked appends: only after a successful vf_buf_reserve() covering them. */
static inline void vf_buf_put(vf_buf *b, const void *p, size_t n) {
  memcpy(b->data + b->len, p, n);
  b->len += n;
}
static inline void vf_buf_putc(vf_buf *b, char c) { b->data[b->len++] = (uint8_t)c; }

/* ---------------------------------------------------------------- cursor */

/* Bounds-checked reader over untrusted bytes.  Every accessor checks the remaining length
 * first; on failure it returns false and leaves the cursor unchanged.  `base` is the start of
 * the whole buffer, so vf_cur_offset() can name the failing offset in an error. */
typedef struct vf_cursor {
  const uint8_t *base;
  const uint8_t *p;
  const uint8_t *end;
  uint64_t base_offset; /* file offset of `base`, for messages */
} vf_cursor;

static inline void vf_cur_init(vf_cursor *c, const void *data, size_t len, uint64_t base_offset) {
  c->base = (const uint8_t *)data;
  c->p = c->base;
  c->end = c->base + len;
  c->base_offset = base_offset;
}
static inline size_t vf_cur_remaining(const vf_cursor *c) { return (size_t)(c->end - c->p); }
static inline uint64_t vf_cur_offset(const vf_cursor *c) {
  return c->base_offset + (uint64_t)(c->p - c->base);
}
static inline bool vf_cur_take(vf_cursor *c, uint64_t n, const uint8_t **out) {
  if (n > (uint64_t)(c->end - c->p)) return false;
  *out = c->p;
  c->p += n;
  return true;
}
static inline bool vf_cur_skip(vf_cursor *c, uint64_t n) {
  if (n > (uint64_t)(c->end - c->p)) return false;
  c->p += n;
  return true;
}
static inline bool vf_cur_u8(vf_cursor *c, uint8_t *v) {
  if (c->p >= c->end) return false;
  *v = *c->p++;
  return true;
}
static inline bool vf_cur_u32le(vf_cursor *c, uint32_t *v) {
  if ((size_t)(c->end - c->p) < 4) return false;
  *v = (uint32_t)c->p[0] | ((uint32_t)c->p[1] << 8) | ((uint32_t)c->p[2] << 16) |
       ((uint32_t)c->p[3] << 24);
  c->p += 4;
  return true;
}
/* ULEB128 varint, at most 10 bytes; false on truncation or overlong encoding. */
bool vf_cur_uvarint(vf_cursor *c, uint64_t *v);
/* zigzag-decoded signed varint */
bool vf_cur_zvarint(vf_cursor *c, int64_t *v);

static inline uint32_t vf_load_u32le(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v; /* little-endian hosts only (checked at build time in util.c) */
}

/* ------------------------------------------------------- log and progress */

typedef enum vf_log_level { VF_LOG_DEBUG = 0, VF_LOG_INFO, VF_LOG_WARN, VF_LOG_ERROR } vf_log_level;

typedef struct vf_progress {
  const char *phase;   /* "scan", "load", ... */
  uint64_t rows_done;
  uint64_t rows_total; /* 0 if unknown */
  uint64_t bytes_done;
  uint64_t files_done;
  uint64_t files_total;
  double elapsed_s;    /* since the phase (or stage) began */
  /* the step inside a long phase (issue 14: no stage may sit silent) */
  const char *stage;   /* NULL, or "train", "assign", "encode", "compact", ... */
  const char *unit;    /* what rows_done / rows_total count when not rows ("iterations",
                        * "segments", ...); NULL: rows */
  const char *detail;  /* NULL, or a short note ("objective 1.234e+05") */
  double fraction;     /* > 0: the share done (0..1], for % and ETA where rows_total does not
                        * measure the work (brute-force weighs files by their bytes) */
} vf_progress;

typedef void (*vf_log_fn)(void *user, vf_log_level level, const char *msg);
typedef void (*vf_progress_fn)(void *user, const vf_progress *p);

/*! vf_set_log_handler() : where library log events go (default: dropped).  Process-wide. */
void vf_set_log_handler(vf_log_fn fn, void *user);
void vf_set_progress_handler(vf_progress_fn fn, void *user);
void vf_log(vf_log_level level, const char *fmt, ...) VF_PRINTF(2, 3);
void vf_progress_emit(const vf_progress *p);

/* A stage of a long call (k-means iterations, list writes, compaction, ...) that reports its
 * progress: at most every VF_STAGE_EVERY_S, plus its first and its last update, so a call that
 * updates per row group or per block costs nothing when nobody renders.  One thread per stage. */
#define VF_STAGE_EVERY_S 0.25
typedef struct vf_stage {
  vf_progress p;
  double t0, last;
  char detail[160];
} vf_stage;
/*! vf_stage_begin() : start a stage of `phase` ("index build") named `stage` ("k-means"),
 *  counting `unit` (NULL: rows) up to `total` (0: unknown).  Emits nothing yet. */
void vf_stage_begin(vf_stage *s, const char *phase, const char *stage, const char *unit,
                    uint64_t total);
/*! vf_stage_update() : `done` so far and an optional detail (printf-style, NULL: none); emitted
 *  when VF_STAGE_EVERY_S passed since the last emission, on the first call and when `done`
 *  reaches the total.  s->p.fraction may be set before the call (> 0 overrides done/total). */
void vf_stage_update(vf_stage *s, uint64_t done, const char *detail_fmt, ...) VF_PRINTF(3, 4);

/* ---------------------------------------------------------- cancellation */

/* Cancellation is one process-wide flag that long library calls poll (between row groups,
 * batches, k-means iterations, list writes): the CLI's SIGINT/SIGTERM handler and the Python
 * front end's Ctrl-C both only set it, and the call that sees it cleans up its temporaries and
 * returns VF_ECANCELED.  No cleanup logic lives in a signal handler. */

/*! vf_cancel_request() : ask every long call to stop; `signo` (SIGINT, SIGTERM, or 0 for an API
 *  caller) is remembered for the exit code.  Async-signal-safe (one atomic store). */
void vf_cancel_request(int signo);
/*! vf_cancelled() : true once vf_cancel_request() was called (and not reset). */
bool vf_cancelled(void);
/*! vf_cancel_signal() : the signal passed to the first vf_cancel_request(), 0 if none. */
int vf_cancel_signal(void);
/*! vf_cancel_reset() : clear the flag (the Python front end, between calls). */
void vf_cancel_reset(void);
/*! vf_check_cancel() : VF_OK, or VF_ECANCELED with "interrupted" in `err` when cancelled. */
vf_status vf_check_cancel(vf_error *err);

/* ------------------------------------------------------------------ time */

double vf_now(void); /* monotonic seconds */

/* ------------------------------------------------------------------- md5 */

void vf_md5(const void *data, size_t len, uint8_t out[16]);
/* incremental form: init, update any number of times, final (same digest as one vf_md5 call) */
typedef struct vf_md5_ctx {
  uint32_t h[4];
  uint64_t len;
  uint8_t buf[64];
} vf_md5_ctx;
void vf_md5_init(vf_md5_ctx *c);
void vf_md5_update(vf_md5_ctx *c, const void *data, size_t len);
void vf_md5_final(vf_md5_ctx *c, uint8_t out[16]);
/*! vf_md5_hex() : a digest as 32 lowercase hex digits + NUL. */
void vf_md5_hex(const uint8_t d[16], char out[33]);

/* ------------------------------------------------------------------ JSON */

/* Appends JSON tokens to a vf_buf.  Floats: float32 with 9 significant digits, doubles with 17;
 * NaN/±inf as the strings "NaN", "Infinity", "-Infinity".  Strings are escaped per RFC 8259;
 * invalid UTF-8 bytes are replaced by U+FFFD. */
vf_status vf_json_string(vf_buf *b, const char *s, size_t len, vf_error *err);
vf_status vf_json_f32(vf_buf *b, float v, vf_error *err);
vf_status vf_json_f64(vf_buf *b, double v, vf_error *err);
vf_status vf_json_i64(vf_buf *b, int64_t v, vf_error *err);
vf_status vf_json_u64(vf_buf *b, uint64_t v, vf_error *err);
vf_status vf_json_raw(vf_buf *b, const char *s, vf_error *err); /* literal text: "null", "{", ... */
/*! vf_base64_encode() : RFC 4648 section 4 base64 (standard alphabet, '=' padding) of p[0..n)
 *  into out, which must hold vf_base64_len(n) bytes (no NUL is written).  @return : the length. */
static inline size_t vf_base64_len(size_t n) { return (n + 2) / 3 * 4; }
size_t vf_base64_encode(const uint8_t *p, size_t n, char *out);
/*! vf_json_base64() : the base64 text of p[0..n) as a JSON string (binary values, losslessly). */
vf_status vf_json_base64(vf_buf *b, const void *p, size_t n, vf_error *err);
/*! vf_json_is_object() : true when text[0..len) is exactly one JSON object (RFC 8259, strict:
 *  well-formed UTF-8, no raw control characters, paired surrogate escapes, nesting <= 512;
 *  whitespace around it allowed).  Linear time, no allocation (src/util/json_check.c). */
bool vf_json_is_object(const char *text, size_t len);
/*! vf_utf8_seq() : length of the well-formed UTF-8 sequence at s[0..n) (1 for ASCII), or 0 when
 *  ill-formed, with *bad = the length of the maximal ill-formed subpart (>= 1; Unicode 15 §3.9,
 *  ranges from Table 3-7). */
size_t vf_utf8_seq(const uint8_t *s, size_t n, size_t *bad);

/* A small DOM JSON reader (RFC 8259) for untrusted text: Qdrant's answers, the HF tree listing,
 * the dist manifest, store and bench records (src/util/json_read.c). */

typedef enum vf_json_type {
  VF_JSON_NULL = 0,
  VF_JSON_BOOL,
  VF_JSON_NUM,
  VF_JSON_STR,
  VF_JSON_ARR,
  VF_JSON_OBJ
} vf_json_type;

typedef struct vf_json_val {
  vf_json_type t;
  const char *raw; /* the value's text in the parsed source (borrowed) */
  size_t raw_len;
  bool b;
  double num;
  char *str;      /* VF_JSON_STR: decoded, NUL-terminated (owned) */
  size_t n;       /* VF_JSON_ARR / VF_JSON_OBJ: entries */
  struct vf_json_val *items;
  char **keys;    /* VF_JSON_OBJ: decoded keys (owned) */
} vf_json_val;

/*! vf_json_parse() : parse exactly one JSON value from text[0..len) (RFC 8259; nesting <= 64,
 *  at most `len` entries overall).  `text` must outlive `out` (raw spans point into it).
 *  @return : VF_ECORRUPT naming `what` and the byte offset on bad JSON; VF_ENOMEM. */
vf_status vf_json_parse(const char *text, size_t len, const char *what, vf_json_val *out,
                        vf_error *err);
void vf_json_free(vf_json_val *v);
/*! vf_json_get() : the member `key` of an object (NULL when v is not an object or lacks it). */
const vf_json_val *vf_json_get(const vf_json_val *v, const char *key);
/*! vf_json_path() : members along a dotted path ("result.config.params"); NULL when any is
 *  absent. */
const vf_json_val *vf_json_path(const vf_json_val *v, const char *dotted);
/*! vf_json_unescape() : decode the JSON string content s[start, end) (between the quotes) into
 *  `d` (room for end - start bytes); *n receives the decoded length.  @return : `end`, with
 *  *expected NULL; or the offset of the first error with *expected saying what was expected. */
size_t vf_json_unescape(const char *s, size_t start, size_t end, char *d, size_t *n,
                        const char **expected);
/*! vf_json_scan_number() : the end of the RFC 8259 number starting at s[p]; 0 with *expected
 *  set when there is none. */
size_t vf_json_scan_number(const char *s, size_t len, size_t p, const char **expected);

/* --------------------------------------------------------- atomic files */

/* Writes go to "<path>.tmp.<host>-<pid>.<n>" in the same directory (vf_temp_path); commit
 * fsyncs, renames over `path` and fsyncs the directory; abort (or free without commit) removes
 * the temp file. */
typedef struct vf_atomic_file vf_atomic_file;
vf_status vf_atomic_open(const char *path, vf_atomic_file **out, vf_error *err);
vf_status vf_atomic_write(vf_atomic_file *f, const void *p, size_t n, vf_error *err);
int64_t vf_atomic_tell(const vf_atomic_file *f);
vf_status vf_atomic_commit(vf_atomic_file *f, vf_error *err); /* frees f */
void vf_atomic_abort(vf_atomic_file *f);                      /* frees f; NULL ok */
/*! vf_atomic_write_file() : the whole of p[0..n) as `path`, atomically (open, write, commit). */
vf_status vf_atomic_write_file(const char *path, const void *p, size_t n, vf_error *err);
/* Temporary names.  Every temporary vforge creates beside an output (atomic-file temps, index
 * spills, downloads, convert's staging directory) is named "<path>.<tag>.<host>-<pid>.<n>"
 * (tag: tmp, spill, assign, part; host: the hostname with every character outside [A-Za-z0-9]
 * made '_'; n: a per-process counter), so a later run can tell a killed run's debris from a
 * live writer's: vf_temp_sweep() removes only temporaries of this host whose pid is no longer
 * alive (several processes, on several hosts, may write one collection at once). */

/*! vf_temp_path() : "<path>.<tag>.<host>-<pid>.<n>" (malloc'd; NULL when out of memory). */
char *vf_temp_path(const char *path, const char *tag);
/*! vf_temp_sweep() : remove from directory `dir` the temporaries named by vf_temp_path() for a
 *  path of that directory whose file name is `base` (NULL: any name) that were made on this host
 *  by a process that is no longer alive (files, and directories with what they hold).  A
 *  missing directory is fine; what cannot be removed is logged as a warning.  The count removed
 *  goes to *removed (may be NULL) and is logged (info).  @return : VF_OK, or VF_ENOMEM. */
vf_status vf_temp_sweep(const char *dir, const char *base, uint64_t *removed, vf_error *err);
/*! vf_remove_tree() : remove a file, or a directory and everything below it (symbolic links are
 *  removed, never followed).  A missing path is fine.  @return : VF_EIO naming what stayed. */
vf_status vf_remove_tree(const char *path, vf_error *err);

/*! vf_mkdir_p() : create directory `path` and its missing parents with `mode` (existing ones are
 *  fine).  @return : VF_EIO naming the directory that could not be created. */
vf_status vf_mkdir_p(const char *path, unsigned mode, vf_error *err);

/* --------------------------------------------------- threads and memory */

/*! vf_cpu_available() : CPUs this process may use: min of sched affinity, the cgroup v2/v1 CPU
 *  quota (rounded up), and SLURM_CPUS_PER_TASK when set.  Always >= 1. */
int vf_cpu_available(void);
/*! vf_set_threads() : process-wide thread count (0 = vf_cpu_available()); also lowers (never
 *  raises) the BLAS's own thread count when the BLAS is loaded (vf_blas_require). */
void vf_set_threads(int n);
int vf_threads(void);

/*! vf_job_rank() : this worker's rank among `num_jobs` (every command with --num-jobs): `given`
 *  (--job-rank) when >= 0; else SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN (an array task; MIN 0
 *  when unset); else SKYPILOT_JOB_RANK, refused when SKYPILOT_NUM_JOBS is set and differs from
 *  num_jobs (as the Python loader whose configs vforge reads).  With num_jobs 1 the rank is 0
 *  (the environment is not read).  Call it only when --num-jobs was given.
 *  *source (may be NULL) receives where the rank came from, for logs.
 *  @return : VF_EUSAGE when nothing names the rank, when a variable is not an integer, or when
 *            the rank is outside 0..num_jobs-1 (each naming the option or variable). */
vf_status vf_job_rank(int num_jobs, int given, int *rank, const char **source, vf_error *err);

/*! vf_parse_size() : "512M", "2G", "1.5GiB", "1000000" -> bytes.  false on bad syntax. */
bool vf_parse_size(const char *s, uint64_t *out);
void vf_set_memory_budget(uint64_t bytes); /* 0 = unlimited */
uint64_t vf_memory_budget(void);
/*! vf_peak_rss_bytes() : the process's peak resident set size (VmHWM). */
uint64_t vf_peak_rss_bytes(void);

/* ------------------------------------------------------------------ BLAS */

/* The BLAS (OpenBLAS by default) is opened with dlopen on first use, so commands that never
 * multiply matrices never map it or start its server threads.  Loading sets its thread count to
 * at most vf_threads(), checks that OpenBLAS's kernels match the CPU (a generic core such as
 * Prescott on a CPU with AVX2/FMA or AVX-512 is switched to matching kernels, logged once) and
 * checks a small GEMM against a scalar reference, falling back to vforge's own sgemm (logged)
 * when it disagrees.  Environment: VFORGE_BLAS_LIB=NAME|PATH|builtin, OPENBLAS_CORETYPE
 * (respected), VFORGE_BLAS_TEST_PRETEND_CORE (tests only).  See util/blas.c, docs/DESIGN.md. */

typedef struct vf_blas_info {
  const char *library; /* path of the loaded library, or "builtin" (vforge's own sgemm) */
  const char *core;    /* OpenBLAS's kernel set ("Zen", "SkylakeX", ...), "builtin-avx2",
                          "builtin-scalar", or "unknown" (a CBLAS that does not say) */
  const char *config;  /* openblas_get_config(), or "" */
  const char *source;  /* how the core was chosen: "detected" (by the library), "environment"
                          (OPENBLAS_CORETYPE), "vforge" (vforge's CPUID choice replaced a generic
                          core), "builtin" (VFORGE_BLAS_LIB=builtin), "fallback" (vforge's own
                          sgemm after a failed self-check or an unswitchable generic core) */
  const char *note;    /* the line logged when vforge changed the choice, or "" */
  int threads;         /* the BLAS's own thread count now (1 for the builtin sgemm) */
} vf_blas_info;

/*! vf_blas_require() : load the BLAS now if it is not loaded yet (once per process; later calls
 *  return the first outcome).  Call it on the calling thread before an operation that multiplies
 *  matrices, so a missing library is a clean error rather than a worker's problem.
 *  @return : VF_OK; VF_ECONFIG when VFORGE_BLAS_LIB names a library that cannot be used;
 *            VF_EIO when no BLAS library is found (the message names what was tried). */
vf_status vf_blas_require(vf_error *err);
/*! vf_blas_loaded() : true once a vf_blas_require() (or a vf_sgemm_nt()) has loaded the BLAS. */
bool vf_blas_loaded(void);
/*! vf_blas_info_get() : what was loaded (loads it like vf_blas_require).  The strings live as
 *  long as the process.  @return : as vf_blas_require. */
vf_status vf_blas_info_get(vf_blas_info *out, vf_error *err);

/*! vf_sgemm_nt() : C[m x n] = A[m x k] . B[n x k]^T, all row-major with leading dimensions (in
 *  floats) lda, ldb >= k and ldc >= n (cblas_sgemm RowMajor, NoTrans, Trans, alpha 1, beta 0).
 *  Loads the BLAS if needed; when none can be loaded it computes with vforge's own sgemm. */
void vf_sgemm_nt(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b,
                 size_t ldb, float *c, size_t ldc);

/*! vf_blas_single_begin() : set the BLAS's own thread count to 1, for code whose own worker
 *  threads each call vf_sgemm_nt().  @return : the previous count, for vf_blas_single_end(). */
int vf_blas_single_begin(void);
void vf_blas_single_end(int saved);

/*! vf_blas_measure() : the best sgemm rate (vf_sgemm_nt, GFLOP/s = 2 m n k / seconds) of one
 *  m x n x k product with the BLAS's thread count set to `threads` for the measurement, repeated
 *  for about `seconds` (at least twice).  m = n = k = 0 picks a square size that takes >= 10 ms
 *  (256 .. 2048).  @return : VF_ENOMEM, or vf_blas_require's errors. */
vf_status vf_blas_measure(int threads, size_t m, size_t n, size_t k, double seconds,
                          double *gflops, vf_error *err);

/*! vf_cpu_model() : the CPU's brand string (CPUID, else /proc/cpuinfo), or "unknown". */
const char *vf_cpu_model(void);

#ifdef __cplusplus
}
#endif
#endif
