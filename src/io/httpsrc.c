/*
 * httpsrc.c — the ranged io_source over HTTP(S) shared by http(s)://, s3:// and hf:// (issue 7),
 * and the {i} part expansion of plain HTTP corpora.
 *
 * Reads: every read_at is one GET with "Range: bytes=a-b" that must come back as 206 with
 * exactly the requested bytes (Content-Range checked when present, body length always):
 *   - 200 to a ranged GET means the server ignored Range; http.c aborts the transfer at its
 *     first body byte and the read fails with VF_EUNSUPPORTED naming the URL (a silent
 *     whole-object download per read would turn a footer read into gigabytes);
 *   - a short body is VF_EIO, never a silently truncated buffer;
 *   - a Content-Range total different from the size found at open means the object changed
 *     under us (VF_EIO), since mixing two versions would produce rows that never existed.
 *
 * Concurrency: the source keeps a pool of io_http clients (each one easy handle, so its
 * connection is reused); a read takes an idle client or opens one.  A closed source hands its
 * idle clients to a small process-wide pool (HS_POOL_MAX) keyed by the full client options, so
 * the next source with the same options (the same file reopened, the next file of a corpus)
 * reuses their kept-alive connections and TLS sessions.  io_read_ranges hands all
 * its merged spans to read_spans, which cuts them into pieces of at most HS_PIECE bytes and
 * fetches them with up to `parallel_ranges` workers of the process pool (io_remote_opts, default
 * 4; vforge/pool.h); a single read_at larger than 2 * HS_PIECE is split the same way.  The first
 * error stops the others and is the one reported.
 *
 * Footer cache: readers open a file more than once per command (planning, then once per work
 * unit), and each open reads the file's tail (footer) and its first bytes (magic).  Locally
 * that is a page-cache hit; remotely it is a request each time.  So single reads of at most
 * HS_CACHE_MAX bytes that end at the object's end or start at 0 are kept in a small
 * process-wide cache (HS_CACHE_SLOTS entries, round-robin) keyed by URL and size, and a later
 * read inside one of them is served from memory.  Objects are assumed not to change during one
 * command (the Content-Range total check still catches a size change on every real read).
 *
 * Size: given by the caller (a listing), else HEAD's Content-Length, else the total of the
 * Content-Range of a "bytes=0-0" GET (for servers or pre-signed URLs that refuse HEAD).
 *
 * {i} parts: https://host/data/part-{i}.parquet stands for part-0, part-1, ... as long as HEAD
 * answers 2xx; the first 404 ends the list ("{i:05}" zero-pads to 5 digits).  Any other answer
 * is an error: a part that exists but could not be checked must never end a corpus early.
 */
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/remote_internal.h"
#include "vforge/pool.h"

#define HS_PIECE ((uint64_t)8 << 20)
#define HS_MAX_PARTS 100000

typedef struct hs_client {
  io_http *h;
  io_http_resp rs;
} hs_client;

typedef struct httpsrc {
  io_source base;
  char *url;
  io_http_opts o;
  char *own[8]; /* copies of the option strings */
  char *okey;   /* the options as one string: clients are shared between equal okeys */
  int parallel;
  pthread_mutex_t mu;
  hs_client **idle;
  size_t nidle, cap;
} httpsrc;

static void hs_client_free(hs_client *c) {
  if (!c) return;
  io_http_close(c->h);
  io_http_resp_free(&c->rs);
  free(c);
}

/* ---- process-wide idle clients: a command opens the same files several times (and many
 * files on one host); handing a closed source's clients to the next source with the same
 * options keeps their connections (and TLS sessions) alive instead of reconnecting. */
#define HS_POOL_MAX 16

typedef struct hs_pooled {
  char *okey;
  hs_client *c;
} hs_pooled;

static pthread_mutex_t hs_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_pooled hs_pool[HS_POOL_MAX];
static size_t hs_npool;

static void hs_wipe_free(char *p) {
  if (!p) return;
  volatile char *q = p; /* option strings hold credentials: wipe */
  while (*q)
    *q++ = 0;
  free(p);
}

static hs_client *hs_pool_take(const char *okey) {
  hs_client *c = NULL;
  pthread_mutex_lock(&hs_pool_mu);
  for (size_t i = hs_npool; i-- > 0;) {
    if (strcmp(hs_pool[i].okey, okey) != 0) continue;
    c = hs_pool[i].c;
    hs_wipe_free(hs_pool[i].okey);
    hs_pool[i] = hs_pool[--hs_npool];
    break;
  }
  pthread_mutex_unlock(&hs_pool_mu);
  return c;
}

/* Keep c for a later source with the same options (the oldest entry makes room). */
static void hs_pool_give(const char *okey, hs_client *c) {
  char *k = vf_strdup(okey);
  if (!k) {
    hs_client_free(c);
    return;
  }
  hs_pooled old = {NULL, NULL};
  pthread_mutex_lock(&hs_pool_mu);
  if (hs_npool == HS_POOL_MAX) {
    old = hs_pool[0];
    memmove(hs_pool, hs_pool + 1, (HS_POOL_MAX - 1) * sizeof *hs_pool);
    hs_npool--;
  }
  hs_pool[hs_npool++] = (hs_pooled){k, c};
  pthread_mutex_unlock(&hs_pool_mu);
  hs_wipe_free(old.okey);
  hs_client_free(old.c);
}

static vf_status hs_get_client(httpsrc *s, hs_client **out, vf_error *err) {
  *out = NULL;
  pthread_mutex_lock(&s->mu);
  if (s->nidle > 0) *out = s->idle[--s->nidle];
  pthread_mutex_unlock(&s->mu);
  if (!*out) *out = hs_pool_take(s->okey);
  if (*out) return VF_OK;
  hs_client *c = calloc(1, sizeof *c);
  if (!c) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", s->base.name);
  VF_BUF_INIT(&c->rs.body, VF_BUF_MAX_HTTP_BODY);
  vf_status st = io_http_open(NULL, &s->o, &c->h, err);
  if (st != VF_OK) {
    free(c);
    return st;
  }
  *out = c;
  return VF_OK;
}

static void hs_put_client(httpsrc *s, hs_client *c) {
  pthread_mutex_lock(&s->mu);
  if (s->nidle == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 8;
    hs_client **ni = realloc(s->idle, nc * sizeof *ni);
    if (!ni) {
      pthread_mutex_unlock(&s->mu);
      hs_client_free(c);
      return;
    }
    s->idle = ni;
    s->cap = nc;
  }
  s->idle[s->nidle++] = c;
  pthread_mutex_unlock(&s->mu);
}

/* One ranged GET of [off, off + n) into dst with client c (one attempt at this level; the HTTP
 * client below already retried timeouts, resets, 429 and 5xx). */
static vf_status hs_fetch_once(httpsrc *s, hs_client *c, uint64_t off, uint8_t *dst, size_t n,
                               vf_error *err) {
  char range[64];
  snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)off,
           (unsigned long long)(off + n - 1));
  io_http_req rq = {0};
  rq.method = "GET";
  rq.url = s->url;
  rq.range = range;
  rq.allow_404 = true;
  vf_status st = io_http_request(c->h, &rq, &c->rs, err);
  if (st != VF_OK) return vf_error_prefix(err, "%s: ", s->base.name);
  if (c->rs.status == 404)
    return vf_error_set(err, VF_ENOTFOUND, "%s: not found (HTTP 404 on a ranged read; the "
                        "object was removed while reading?)", s->base.name);
  if (c->rs.status != 206)
    return vf_error_set(err, VF_ENET, "%s: ranged read of bytes %s answered HTTP %ld instead "
                        "of 206", s->base.name, range, c->rs.status);
  if (c->rs.range_start >= 0 &&
      ((uint64_t)c->rs.range_start != off || (uint64_t)c->rs.range_end != off + n - 1))
    return vf_error_set(err, VF_ENET, "%s: asked for bytes %s, the server sent bytes %lld-%lld",
                        s->base.name, range, (long long)c->rs.range_start,
                        (long long)c->rs.range_end);
  if (c->rs.range_total >= 0 && (uint64_t)c->rs.range_total != s->base.size)
    return vf_error_set(err, VF_EIO, "%s: the object changed while reading (size %llu at open, "
                        "now %lld)", s->base.name, (unsigned long long)s->base.size,
                        (long long)c->rs.range_total);
  if (c->rs.body.len != n)
    return vf_error_set(err, VF_EIO, "%s: short body for bytes %s: got %zu of %zu bytes",
                        s->base.name, range, c->rs.body.len, n);
  memcpy(dst, c->rs.body.data, n);
  /* idle clients keep small buffers only (a big one would be held per pooled client) */
  if (c->rs.body.cap > ((size_t)1 << 20)) vf_buf_free(&c->rs.body);
  return VF_OK;
}

/* hs_fetch_once() with bounded retries of the failures the HTTP layer cannot see: a body
 * shorter than asked (a transfer cut behind a lying Content-Length) or a wrong Content-Range.
 * Each retry is logged and counted; the last error is returned unchanged. */
static vf_status hs_fetch(httpsrc *s, hs_client *c, uint64_t off, uint8_t *dst, size_t n,
                          vf_error *err) {
  io_remote_opts ro;
  io_remote_opts_get(&ro);
  for (int attempt = 0;; attempt++) {
    vf_status st = hs_fetch_once(s, c, off, dst, n, err);
    bool retryable = err && st == VF_EIO && strstr(err->msg, "short body") != NULL;
    retryable = retryable || (err && st == VF_ENET && strstr(err->msg, "the server sent bytes") != NULL);
    if (!retryable || attempt >= ro.max_retries) return st; /* VF_OK is never retryable */
    double wait = 0.05 * (double)(1u << (attempt < 6 ? attempt : 6));
    vf_log(VF_LOG_WARN, "%s (attempt %d of %d; retrying in %.2f s)", err->msg, attempt + 1,
           ro.max_retries + 1, wait);
    io_remote_count(0, 1, 0, 0);
    struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&ts, NULL);
  }
}

/* ------------------------------------------------------------ footer cache */

#define HS_CACHE_SLOTS 64
#define HS_CACHE_MAX ((size_t)256 << 10) /* at most 16 MiB held in all */

typedef struct hs_cached {
  char *url;
  uint64_t size, off;
  uint8_t *data;
  size_t len;
} hs_cached;

static pthread_mutex_t hs_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_cached hs_cache[HS_CACHE_SLOTS];
static size_t hs_cache_next;

static bool hs_cache_get(const httpsrc *s, uint64_t off, uint8_t *dst, size_t n) {
  bool hit = false;
  pthread_mutex_lock(&hs_cache_mu);
  for (size_t i = 0; i < HS_CACHE_SLOTS && !hit; i++) {
    const hs_cached *e = &hs_cache[i];
    if (e->url && e->size == s->base.size && off >= e->off && off - e->off <= e->len &&
        (uint64_t)n <= e->len - (off - e->off) && strcmp(e->url, s->url) == 0) {
      memcpy(dst, e->data + (off - e->off), n);
      hit = true;
    }
  }
  pthread_mutex_unlock(&hs_cache_mu);
  return hit;
}

static void hs_cache_put(const httpsrc *s, uint64_t off, const uint8_t *src, size_t n) {
  char *url = vf_strdup(s->url);
  uint8_t *data = malloc(n);
  if (!url || !data) {
    free(url);
    free(data);
    return;
  }
  memcpy(data, src, n);
  pthread_mutex_lock(&hs_cache_mu);
  hs_cached *e = &hs_cache[hs_cache_next];
  hs_cache_next = (hs_cache_next + 1) % HS_CACHE_SLOTS;
  free(e->url);
  free(e->data);
  *e = (hs_cached){url, s->base.size, off, data, n};
  pthread_mutex_unlock(&hs_cache_mu);
}

static vf_status hs_fetch1(httpsrc *s, uint64_t off, uint8_t *dst, size_t n, vf_error *err) {
  bool cacheable = n <= HS_CACHE_MAX && (off == 0 || off + n == s->base.size);
  if (hs_cache_get(s, off, dst, n)) return VF_OK;
  hs_client *c;
  vf_status st = hs_get_client(s, &c, err);
  if (st != VF_OK) return st;
  st = hs_fetch(s, c, off, dst, n, err);
  hs_put_client(s, c);
  if (st != VF_OK) return st;
  if (cacheable) hs_cache_put(s, off, dst, n);
  return st;
}

/* ----------------------------------------------------------- parallel pieces */

typedef struct hs_piece {
  uint64_t off;
  uint8_t *dst;
  size_t len;
} hs_piece;

/* Pieces are chunks of one loop on the process pool (vforge/pool.h), `parallel` wide (network
 * bound, so its width is parallel_ranges, not --threads: the pool grows to the widest loop and
 * its idle threads sleep).  Worker w keeps one client (connection) for all the pieces it takes;
 * after the first failure the remaining pieces are skipped and the first error is returned. */
typedef struct hs_job {
  httpsrc *s;
  const hs_piece *pieces;
  hs_client *client[64]; /* per worker, taken at its first piece */
  atomic_bool failed;
  pthread_mutex_t mu;
  vf_error first;
  vf_status st;
} hs_job;

static void hs_piece_run(void *arg, size_t i, int w) {
  hs_job *j = arg;
  if (atomic_load(&j->failed)) return;
  vf_error e;
  vf_status st = VF_OK;
  if (!j->client[w]) VF_TRY(hs_get_client(j->s, &j->client[w], &e));
  VF_TRY(hs_fetch(j->s, j->client[w], j->pieces[i].off, j->pieces[i].dst, j->pieces[i].len, &e));
out:
  if (st != VF_OK) {
    pthread_mutex_lock(&j->mu);
    if (j->st == VF_OK) {
      j->st = st;
      j->first = e;
    }
    pthread_mutex_unlock(&j->mu);
    atomic_store(&j->failed, true);
  }
}

static vf_status hs_run(httpsrc *s, const hs_piece *pieces, size_t n, vf_error *err) {
  if (n == 1) return hs_fetch1(s, pieces[0].off, pieces[0].dst, pieces[0].len, err);
  hs_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.pieces = pieces;
  atomic_init(&j.failed, false);
  pthread_mutex_init(&j.mu, NULL);
  j.st = VF_OK;
  int width = s->parallel < 64 ? s->parallel : 64;
  vf_status st = vf_pool_for(n, width, hs_piece_run, &j, err);
  for (int w = 0; w < 64; w++)
    if (j.client[w]) hs_put_client(s, j.client[w]);
  pthread_mutex_destroy(&j.mu);
  if (st != VF_OK) return st;
  if (j.st != VF_OK) { /* a piece failed: its error */
    if (err) *err = j.first;
    st = j.st;
  }
  return st;
}

/* Cut [off, off + len) into pieces of at most HS_PIECE bytes, appended to *p. */
static vf_status hs_cut(uint64_t off, uint8_t *dst, uint64_t len, hs_piece **p, size_t *np,
                        size_t *cap) {
  for (uint64_t done = 0; done < len;) {
    uint64_t take = len - done < HS_PIECE ? len - done : HS_PIECE;
    if (*np == *cap) {
      size_t nc = *cap ? *cap * 2 : 16;
      hs_piece *q = realloc(*p, nc * sizeof *q);
      if (!q) return VF_ENOMEM;
      *p = q;
      *cap = nc;
    }
    (*p)[(*np)++] = (hs_piece){off + done, dst + done, (size_t)take};
    done += take;
  }
  return VF_OK;
}

static vf_status hs_read_at(io_source *src, uint64_t offset, void *dst, size_t n,
                            vf_error *err) {
  httpsrc *s = (httpsrc *)src;
  if (s->parallel <= 1 || (uint64_t)n <= 2 * HS_PIECE)
    return hs_fetch1(s, offset, dst, n, err);
  hs_piece *p = NULL;
  size_t np = 0, cap = 0;
  vf_status st = hs_cut(offset, dst, n, &p, &np, &cap);
  if (st != VF_OK) {
    free(p);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", src->name);
  }
  st = hs_run(s, p, np, err);
  free(p);
  return st;
}

static vf_status hs_read_spans(io_source *src, const io_range *spans, size_t n, vf_error *err) {
  httpsrc *s = (httpsrc *)src;
  hs_piece *p = NULL;
  size_t np = 0, cap = 0;
  vf_status st = VF_OK;
  for (size_t i = 0; i < n; i++)
    if (hs_cut(spans[i].offset, spans[i].dst, spans[i].len, &p, &np, &cap) != VF_OK)
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", src->name));
  if (np) VF_TRY(hs_run(s, p, np, err));
out:
  free(p);
  return st;
}

static void hs_close(io_source *src) {
  httpsrc *s = (httpsrc *)src;
  for (size_t i = 0; i < s->nidle; i++) {
    if (s->okey) hs_pool_give(s->okey, s->idle[i]);
    else hs_client_free(s->idle[i]);
  }
  free(s->idle);
  pthread_mutex_destroy(&s->mu);
  for (size_t i = 0; i < sizeof s->own / sizeof s->own[0]; i++)
    hs_wipe_free(s->own[i]);
  hs_wipe_free(s->okey);
  free(s->url);
  free(s);
}

/* Every option that shapes a client, as one string (NULL when out of memory). */
static char *hs_opts_key(const io_http_opts *o) {
  const char *f[] = {o->api_key,    o->ca_bundle,  o->aws_sigv4, o->aws_key_id,
                     o->aws_secret, o->aws_session_token, o->bearer_token};
  size_t n = 128;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    n += (f[i] ? strlen(f[i]) : 0) + 2;
  char *k = malloc(n);
  if (!k) return NULL;
  int l = snprintf(k, n, "%d|%d|%g|%g|%g|%g", o->max_retries, (int)o->follow_redirects,
                   o->connect_timeout_s, o->timeout_s, o->backoff_base_s, o->backoff_max_s);
  for (size_t i = 0; i < sizeof f / sizeof f[0] && l > 0; i++)
    l += snprintf(k + l, n - (size_t)l, "\x1f%s", f[i] ? f[i] : "\x1e");
  return k;
}

static const io_source_vtable httpsrc_vt = {hs_read_at, hs_close};

/* Copy an option string into s->own[slot]; false when out of memory. */
static bool hs_own(httpsrc *s, int slot, const char **field) {
  if (!*field) return true;
  s->own[slot] = vf_strdup(*field);
  *field = s->own[slot];
  return s->own[slot] != NULL;
}

/* Size of the object: HEAD, else the Content-Range total of bytes=0-0. */
static vf_status hs_find_size(httpsrc *s, vf_error *err) {
  hs_client *c;
  vf_status st = hs_get_client(s, &c, err);
  if (st != VF_OK) return st;
  io_http_req rq = {0};
  rq.method = "HEAD";
  rq.head = true;
  rq.url = s->url;
  rq.allow_404 = true;
  vf_error herr;
  vf_status hst = io_http_request(c->h, &rq, &c->rs, &herr); /* the HEAD's outcome picks a way */
  if (hst == VF_OK && c->rs.status == 404) {
    st = vf_error_set(err, VF_ENOTFOUND, "%s: not found (HTTP 404)", s->base.name);
  } else if (hst == VF_OK && c->rs.content_length >= 0) {
    s->base.size = (uint64_t)c->rs.content_length;
  } else if (hst != VF_OK && c->rs.status != 403 && c->rs.status != 405 &&
             c->rs.status != 501) {
    if (err) *err = herr;
    st = vf_error_prefix(err, "%s: ", s->base.name);
  } else { /* HEAD refused or without a length: ask for the first byte */
    io_http_req g = {0};
    g.method = "GET";
    g.url = s->url;
    g.range = "0-0";
    g.allow_404 = true;
    st = io_http_request(c->h, &g, &c->rs, err);
    if (st != VF_OK)
      st = vf_error_prefix(err, "%s: ", s->base.name);
    else if (c->rs.status == 404)
      st = vf_error_set(err, VF_ENOTFOUND, "%s: not found (HTTP 404)", s->base.name);
    else if (c->rs.status != 206 || c->rs.range_total < 0)
      st = vf_error_set(err, VF_ENET, "%s: cannot find the object's size (HEAD without "
                        "Content-Length, ranged GET answered HTTP %ld without a total)",
                        s->base.name, c->rs.status);
    else
      s->base.size = (uint64_t)c->rs.range_total;
  }
  hs_put_client(s, c);
  return st;
}

/* io_httpsrc_open(): see remote_internal.h. */
vf_status io_httpsrc_open(const char *url, const char *name, const io_http_opts *opts,
                          int64_t size, io_source **out, vf_error *err) {
  *out = NULL;
  httpsrc *s = calloc(1, sizeof *s);
  if (!s) return vf_error_set(err, VF_ENOMEM, "out of memory");
  pthread_mutex_init(&s->mu, NULL);
  s->base.vt = &httpsrc_vt;
  s->base.read_spans = hs_read_spans;
  s->base.name = vf_url_redact_dup(name); /* the name is in every message: no password */
  s->url = vf_strdup(url);
  if (opts) s->o = *opts;
  bool ok = s->base.name && s->url && hs_own(s, 0, &s->o.ca_bundle) &&
            hs_own(s, 1, &s->o.aws_sigv4) && hs_own(s, 2, &s->o.aws_key_id) &&
            hs_own(s, 3, &s->o.aws_secret) && hs_own(s, 4, &s->o.aws_session_token) &&
            hs_own(s, 5, &s->o.bearer_token) && hs_own(s, 6, &s->o.api_key) &&
            (s->okey = hs_opts_key(&s->o)) != NULL;
  if (!ok) {
    io_close(&s->base);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  io_remote_opts ro;
  io_remote_opts_get(&ro);
  s->parallel = ro.parallel_ranges;
  if (s->parallel > 64) s->parallel = 64;
  vf_status st;
  if (size >= 0) {
    s->base.size = (uint64_t)size;
  } else if ((st = hs_find_size(s, err)) != VF_OK) {
    io_close(&s->base);
    return st;
  }
  *out = &s->base;
  return VF_OK;
}

/* ------------------------------------------------------------- {i} parts */

/* Locate "{i}" or "{i:0N}"/"{i:N}"; *plen = pattern length, *width = pad width (0: none). */
static const char *hs_find_pattern(const char *t, size_t *plen, int *width) {
  for (const char *p = strstr(t, "{i"); p; p = strstr(p + 1, "{i")) {
    if (p[2] == '}') {
      *plen = 3;
      *width = 0;
      return p;
    }
    if (p[2] == ':') {
      const char *q = p + 3;
      if (*q == '0') q++;
      int w = 0;
      const char *d = q;
      while (*q >= '0' && *q <= '9' && w <= 20)
        w = w * 10 + (*q++ - '0');
      if (q > d && *q == '}' && w >= 1 && w <= 20) {
        *plen = (size_t)(q + 1 - p);
        *width = w;
        return p;
      }
    }
  }
  return NULL;
}

/* io_http_part_url(): see remote_internal.h. */
char *io_http_part_url(const char *tmpl, uint64_t i) {
  size_t plen;
  int width;
  const char *p = hs_find_pattern(tmpl, &plen, &width);
  if (!p) return NULL;
  char num[32];
  int nl = snprintf(num, sizeof num, "%0*llu", width, (unsigned long long)i);
  size_t pre = (size_t)(p - tmpl), post = strlen(p + plen);
  char *r = malloc(pre + (size_t)nl + post + 1);
  if (!r) return NULL;
  memcpy(r, tmpl, pre);
  memcpy(r + pre, num, (size_t)nl);
  memcpy(r + pre + (size_t)nl, p + plen, post + 1);
  return r;
}

/* io_http_list_parts(): see remote_internal.h. */
vf_status io_http_list_parts(const char *tmpl, const io_http_opts *opts, io_listing *out,
                             vf_error *err) {
  memset(out, 0, sizeof *out);
  size_t plen;
  int width;
  char shown[1024], ushown[1024]; /* for messages: no password */
  vf_url_redact(tmpl, shown, sizeof shown);
  if (!hs_find_pattern(tmpl, &plen, &width))
    return vf_error_set(err, VF_EUSAGE, "%s: malformed part pattern (expected {i} or {i:0N})",
                        shown);
  io_http *h = NULL;
  vf_status st = io_http_open(NULL, opts, &h, err);
  if (st != VF_OK) return st;
  io_http_resp rs = {0};
  VF_BUF_INIT(&rs.body, VF_BUF_MAX_HTTP_BODY);
  size_t cap = 0;
  for (uint64_t i = 0;; i++) {
    if (i >= HS_MAX_PARTS) {
      st = vf_error_set(err, VF_EUNSUPPORTED, "%s: more than %d parts", shown, HS_MAX_PARTS);
      break;
    }
    char *url = io_http_part_url(tmpl, i);
    if (!url) {
      st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", shown);
      break;
    }
    io_http_req rq = {0};
    rq.method = "HEAD";
    rq.head = true;
    rq.url = url;
    rq.allow_404 = true;
    st = io_http_request(h, &rq, &rs, err);
    if (st != VF_OK) {
      vf_error_prefix(err, "%s: part %llu: ", shown, (unsigned long long)i);
      free(url);
      break;
    }
    if (rs.status == 404) {
      if (i == 0)
        st = vf_error_set(err, VF_ENOTFOUND, "%s: part 0 (%s) not found (HTTP 404)", shown,
                          vf_url_redact(url, ushown, sizeof ushown));
      free(url);
      break;
    }
    if (rs.content_length < 0) {
      st = vf_error_set(err, VF_ENET, "%s: HEAD answered without a Content-Length",
                        vf_url_redact(url, ushown, sizeof ushown));
      free(url);
      break;
    }
    st = io_listing_add(out, &cap, url, (uint64_t)rs.content_length, err);
    if (st != VF_OK) break;
  }
  io_http_resp_free(&rs);
  io_http_close(h);
  if (st != VF_OK) io_listing_free(out);
  return st;
}
