/*
 * util.c — the error model, checked allocation, ceilinged buffers, varints, log/progress
 * events and the monotonic clock.
 *
 * Why a ceiling on every buffer: buffers are grown from lengths found in untrusted files, so a
 * hostile length must turn into VF_ENOMEM with a message instead of exhausting the machine (the
 * curl dynbuf "toobig" idea).  Why the log/progress handlers are process-wide function
 * pointers: the library never prints; only the CLI decides what reaches the terminal.
 *
 * md5 lives in md5.c, JSON in json.c, atomic files in atomic.c, CPU/memory settings in sys.c.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "vforge/util.h"

_Static_assert(
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
    "vforge reads little-endian file formats with memcpy loads: little-endian hosts only");

/* ---------------------------------------------------------------- errors */

vf_status vf_error_set(vf_error *err, vf_status code, const char *fmt, ...) {
  if (!err) return code;
  /* format into a copy first: callers may pass err->msg itself as an argument to re-wrap it */
  char tmp[VF_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) tmp[0] = '\0';
  err->code = code;
  memcpy(err->msg, tmp, sizeof tmp);
  return code;
}

vf_status vf_error_prefix(vf_error *err, const char *fmt, ...) {
  if (!err) return VF_OK;
  char pre[VF_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  if (n < 0) return err->code;
  size_t plen = strnlen(pre, sizeof pre);
  size_t mlen = strnlen(err->msg, sizeof err->msg);
  if (plen >= sizeof err->msg) plen = sizeof err->msg - 1;
  if (plen + mlen >= sizeof err->msg) mlen = sizeof err->msg - 1 - plen;
  memmove(err->msg + plen, err->msg, mlen);
  memcpy(err->msg, pre, plen);
  err->msg[plen + mlen] = '\0';
  return err->code;
}

void vf_error_clear(vf_error *err) {
  if (!err) return;
  err->code = VF_OK;
  err->msg[0] = '\0';
}

const char *vf_status_name(vf_status st) {
  switch (st) {
  case VF_OK: return "ok";
  case VF_EUSAGE: return "usage";
  case VF_ECONFIG: return "config";
  case VF_ECORRUPT: return "corrupt";
  case VF_EUNSUPPORTED: return "unsupported";
  case VF_ENOTFOUND: return "notfound";
  case VF_EIO: return "io";
  case VF_ENET: return "net";
  case VF_ENOMEM: return "nomem";
  case VF_EINTERNAL: return "internal";
  case VF_ECANCELED: return "canceled";
  }
  return "unknown";
}

int vf_status_exit_code(vf_status st) {
  switch (st) {
  case VF_OK: return 0;
  case VF_EUSAGE:
  case VF_ECONFIG:
  case VF_ECORRUPT:
  case VF_EUNSUPPORTED:
  case VF_ENOTFOUND: return 2;
  case VF_ECANCELED: return vf_cancel_signal() > 0 ? 128 + vf_cancel_signal() : 130;
  default: return 1;
  }
}

/* vf_strerror(): see util.h.  _GNU_SOURCE (CMakeLists.txt) selects glibc's strerror_r, which
 * returns the message (in buf, or a static string); the POSIX one fills buf. */
const char *vf_strerror(int e, char *buf, size_t cap) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, cap);
#else
  if (strerror_r(e, buf, cap) != 0) snprintf(buf, cap, "Unknown error %d", e);
  return buf;
#endif
}

/* ---------------------------------------------------------- cancellation */

static atomic_int g_cancel_signal = -1; /* -1: not cancelled; else the signal (0 = API) */

void vf_cancel_request(int signo) {
  int expected = -1;
  atomic_compare_exchange_strong(&g_cancel_signal, &expected, signo < 0 ? 0 : signo);
}
bool vf_cancelled(void) { return atomic_load_explicit(&g_cancel_signal, memory_order_relaxed) >= 0; }
int vf_cancel_signal(void) {
  int s = atomic_load(&g_cancel_signal);
  return s > 0 ? s : 0;
}
void vf_cancel_reset(void) { atomic_store(&g_cancel_signal, -1); }
vf_status vf_check_cancel(vf_error *err) {
  if (VF_LIKELY(!vf_cancelled())) return VF_OK;
  return vf_error_set(err, VF_ECANCELED, "interrupted");
}

/* ------------------------------------------------------------ allocation */

void *vf_malloc(size_t n) {
  return malloc(n ? n : 1);
}

void *vf_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  if (!count || !size) return calloc(1, 1);
  return calloc(count, size);
}

void *vf_realloc(void *p, size_t n) {
  return realloc(p, n ? n : 1);
}

void *vf_mallocarray(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  return vf_malloc(count * size);
}

char *vf_strdup(const char *s) {
  if (!s) return NULL;
  return vf_strndup(s, strlen(s));
}

char *vf_strndup(const char *s, size_t n) {
  if (!s) return NULL;
  size_t len = strnlen(s, n);
  if (len == SIZE_MAX) return NULL;
  char *r = malloc(len + 1);
  if (!r) return NULL;
  memcpy(r, s, len);
  r[len] = '\0';
  return r;
}

/* ------------------------------------------------------------ URLs with credentials */

/* vf_url_userinfo(): see util.h.  scheme = ALPHA *(ALPHA / DIGIT / "+" / "-" / "."); the
 * authority runs to the first '/', '?' or '#'; its userinfo ends at the last '@' in it. */
bool vf_url_userinfo(const char *url, size_t *start, size_t *len) {
  if (!url || !isalpha((unsigned char)url[0])) return false;
  size_t i = 1;
  while (isalnum((unsigned char)url[i]) || url[i] == '+' || url[i] == '-' || url[i] == '.')
    i++;
  if (strncmp(url + i, "://", 3) != 0) return false;
  size_t a = i + 3, end = a + strcspn(url + a, "/?#");
  size_t at = end;
  for (size_t k = a; k < end; k++)
    if (url[k] == '@') at = k;
  if (at == end) return false;
  *start = a;
  *len = at - a;
  return true;
}

/* vf_url_redact(): see util.h. */
char *vf_url_redact(const char *url, char *out, size_t cap) {
  if (!cap) return out;
  size_t a, n;
  if (!url) url = "";
  if (!vf_url_userinfo(url, &a, &n))
    snprintf(out, cap, "%s", url);
  else
    snprintf(out, cap, "%.*s****%s", (int)a, url, url + a + n);
  return out;
}

/* vf_url_redact_dup(): see util.h. */
char *vf_url_redact_dup(const char *url) {
  if (!url) return NULL;
  size_t cap = strlen(url) + 8;
  char *r = malloc(cap);
  return r ? vf_url_redact(url, r, cap) : NULL;
}

/* ---------------------------------------------------------------- buffer */

void vf_buf_init(vf_buf *b, size_t max) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  b->max = max ? max : VF_BUF_DEFAULT_MAX;
  b->limit = NULL;
}

/* Test hook (used by tests only): VFORGE_TEST_BUF_LIMIT="NAME=BYTES[,NAME=BYTES]..." lowers the
 * named ceiling NAME to BYTES (never raises it), so a test drives an input past a ceiling with a
 * small corpus.  Read once; entries that do not parse are ignored. */
#define TEST_LIMITS_MAX 8
static struct {
  char name[64];
  size_t bytes;
} g_test_limits[TEST_LIMITS_MAX];
static int g_ntest_limits;
static pthread_once_t g_test_limits_once = PTHREAD_ONCE_INIT;

static void test_limits_read(void) {
  const char *v = getenv("VFORGE_TEST_BUF_LIMIT");
  while (v && *v && g_ntest_limits < TEST_LIMITS_MAX) {
    const char *eq = strchr(v, '=');
    if (!eq) break;
    size_t nl = (size_t)(eq - v);
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(eq + 1, &end, 10);
    if (nl > 0 && nl < sizeof g_test_limits[0].name && end != eq + 1 && errno == 0 && n > 0) {
      memcpy(g_test_limits[g_ntest_limits].name, v, nl);
      g_test_limits[g_ntest_limits].name[nl] = '\0';
      g_test_limits[g_ntest_limits++].bytes = (size_t)n;
    }
    v = end && *end == ',' ? end + 1 : NULL;
  }
}

void vf_buf_init_named(vf_buf *b, size_t max, const char *limit) {
  vf_buf_init(b, max);
  b->limit = limit;
  pthread_once(&g_test_limits_once, test_limits_read);
  for (int i = 0; limit && i < g_ntest_limits; i++)
    if (g_test_limits[i].bytes < b->max && strcmp(g_test_limits[i].name, limit) == 0)
      b->max = g_test_limits[i].bytes;
}

void vf_buf_free(vf_buf *b) {
  if (!b) return;
  free(b->data);
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
}

/* vf_advise_huge(): see util.h. */
void vf_advise_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t page = 4096;
  if (n < ((size_t)8 << 20)) return;
  uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
  uintptr_t hi = ((uintptr_t)p + n) & ~(page - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: failure is harmless */
#else
  (void)p;
  (void)n;
#endif
}

vf_status vf_buf_reserve(vf_buf *b, size_t extra, vf_error *err) {
  size_t max = b->max ? b->max : VF_BUF_DEFAULT_MAX;
  if ((extra > max || b->len > max - extra) && b->limit)
    return vf_error_set(err, VF_ENOMEM,
                        "too big: more than the %s limit of %zu bytes (have %zu, need %zu more)",
                        b->limit, max, b->len, extra);
  if (extra > max || b->len > max - extra)
    return vf_error_set(err, VF_ENOMEM,
                        "buffer would grow to more than its limit of %zu bytes (have %zu, need %zu "
                        "more)",
                        max, b->len, extra);
  size_t need = b->len + extra;
  if (need <= b->cap && b->data) return VF_OK;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) {
    if (cap > max / 2) {
      cap = max;
      break;
    }
    cap *= 2;
  }
  if (cap < need) cap = need;
  uint8_t *d = realloc(b->data, cap ? cap : 1);
  if (!d) return vf_error_set(err, VF_ENOMEM, "out of memory growing a buffer to %zu bytes", cap);
  b->data = d;
  b->cap = cap;
  vf_advise_huge(d, cap);
  return VF_OK;
}

vf_status vf_buf_append(vf_buf *b, const void *p, size_t n, vf_error *err) {
  vf_status st = vf_buf_reserve(b, n, err);
  if (st != VF_OK) return st;
  if (n) vf_buf_put(b, p, n);
  return VF_OK;
}

vf_status vf_buf_printf(vf_buf *b, vf_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return vf_error_set(err, VF_EINTERNAL, "vf_buf_printf: bad format \"%s\"", fmt);
  vf_status st = vf_buf_reserve(b, (size_t)n, err);
  if (st != VF_OK) return st;
  if (b->cap - b->len > (size_t)n) {
    /* room for vsnprintf's terminating NUL too (not counted in len) */
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
  } else {
    /* exactly at the ceiling: format elsewhere so the NUL does not need a byte past max */
    char *tmp = malloc((size_t)n + 1);
    if (!tmp) return vf_error_set(err, VF_ENOMEM, "out of memory formatting %d bytes", n);
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    va_end(ap);
    memcpy(b->data + b->len, tmp, (size_t)n);
    free(tmp);
  }
  b->len += (size_t)n;
  return VF_OK;
}

uint8_t *vf_buf_take(vf_buf *b, size_t *len) {
  uint8_t *d = b->data;
  if (len) *len = b->len;
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  return d;
}

/* ---------------------------------------------------------------- cursor */

bool vf_cur_uvarint(vf_cursor *c, uint64_t *v) {
  uint64_t r = 0;
  const uint8_t *p = c->p;
  for (int i = 0; i < 10; i++) {
    if (p >= c->end) return false;
    uint8_t byte = *p++;
    if (i == 9 && byte > 1) return false; /* would overflow 64 bits */
    r |= (uint64_t)(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      *v = r;
      c->p = p;
      return true;
    }
  }
  return false; /* more than 10 bytes */
}

bool vf_cur_zvarint(vf_cursor *c, int64_t *v) {
  uint64_t u;
  if (!vf_cur_uvarint(c, &u)) return false;
  *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
  return true;
}

/* ------------------------------------------------------- log and progress */

static vf_log_fn g_log_fn;
static void *g_log_user;
static vf_progress_fn g_progress_fn;
static void *g_progress_user;

void vf_set_log_handler(vf_log_fn fn, void *user) {
  g_log_fn = fn;
  g_log_user = user;
}

void vf_set_progress_handler(vf_progress_fn fn, void *user) {
  g_progress_fn = fn;
  g_progress_user = user;
}

void vf_log(vf_log_level level, const char *fmt, ...) {
  vf_log_fn fn = g_log_fn;
  if (!fn) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  fn(g_log_user, level, msg);
}

void vf_progress_emit(const vf_progress *p) {
  vf_progress_fn fn = g_progress_fn;
  if (fn && p) fn(g_progress_user, p);
}

/* vf_stage_begin(): see util.h. */
void vf_stage_begin(vf_stage *s, const char *phase, const char *stage, const char *unit,
                    uint64_t total) {
  memset(s, 0, sizeof *s);
  s->p.phase = phase;
  s->p.stage = stage;
  s->p.unit = unit;
  s->p.rows_total = total;
  s->t0 = vf_now();
  s->last = -1;
}

/* vf_stage_update(): see util.h. */
void vf_stage_update(vf_stage *s, uint64_t done, const char *detail_fmt, ...) {
  if (!g_progress_fn) return;
  double now = vf_now();
  bool end = s->p.rows_total > 0 && done >= s->p.rows_total;
  if (s->last >= 0 && !end && now - s->last < VF_STAGE_EVERY_S) return;
  s->last = now;
  s->p.rows_done = done;
  s->p.elapsed_s = now - s->t0;
  s->p.detail = NULL;
  if (detail_fmt) {
    va_list ap;
    va_start(ap, detail_fmt);
    int n = vsnprintf(s->detail, sizeof s->detail, detail_fmt, ap);
    va_end(ap);
    if (n > 0) s->p.detail = s->detail;
  }
  vf_progress_emit(&s->p);
}

/* ------------------------------------------------------------------ time */

double vf_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
