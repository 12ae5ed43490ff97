/*
 * http.c — the shared HTTP client (issue 4; DESIGN.md module `io`: "the shared HTTP client
 * (libcurl: connection reuse, timeouts, backoff)").
 *
 * Why one easy handle per client: libcurl keeps the connection cache in the easy handle, so
 * successive requests of a client reuse the same keep-alive connection (RFC 9112 §9.3) without
 * a share handle and without locks; concurrency comes from one client per thread.
 *
 * Retry policy: a request is retried (at most max_retries times) when it could not complete
 * (curl timeout, connect/send/receive error) or the server answers 429 or 5xx (RFC 9110
 * §15.6: the server may recover).  The wait before attempt n is a uniform draw in
 * [0, min(max, base * 2^(n-1))] ("full jitter"); a Retry-After header (RFC 9110 §10.2.3, seconds
 * or an HTTP date, as parsed by curl) replaces it, capped at backoff_max_s.  Requests are
 * idempotent in every caller (PUT upserts by id, GET, POST count/query), which makes resending
 * safe.  Every retry is logged; the URL is logged without its query string, and the api-key
 * header is never part of a message.
 *
 * Remote sources (issue 7) add:
 *   - absolute URLs (req->url); a client opened with base_url NULL or "" has no base and every
 *     request must carry req->url.  The connection cache still works across hosts.
 *   - Range and HEAD.  Ranged, HEAD and sink_fd requests ask for the identity encoding (a
 *     compressed body would not match the requested byte range).  A ranged GET answered with a
 *     200 (the server ignored Range) is aborted at its first body byte and reported as
 *     VF_EUNSUPPORTED naming the URL: never a silent whole-object download.
 *   - sink_fd: the body of a 2xx answer is written to the fd (any other answer's body is
 *     buffered in resp->body for the error excerpt).  The fd must be a seekable regular file:
 *     its offset at the call is remembered and before every retry the fd is truncated back to
 *     that offset and repositioned, so a partial body from a failed attempt never survives.
 *   - SigV4 (CURLOPT_AWS_SIGV4 + CURLOPT_USERPWD key:secret).  libcurl 7.88 does not add
 *     x-amz-content-sha256, so "x-amz-content-sha256: UNSIGNED-PAYLOAD" is sent unless the
 *     caller passes its own (the real hash) in req->headers; x-amz-security-token carries a
 *     session token.  libcurl signs every custom header, so signed requests carry no
 *     header-removal lines ("Expect:"), and req->headers must not hold any either.  Bearer tokens go in "Authorization: Bearer".  Secrets live only in curl
 *     options and header lines that are wiped on close; no message quotes a header.
 *   - follow_redirects: CURLOPT_FOLLOWLOCATION (at most 10 hops) keeps custom headers such as
 *     Range; CURLOPT_UNRESTRICTED_AUTH stays off, so curl drops Authorization (and the
 *     credentials) when a redirect leads to another host (the Hub's CDN URLs are pre-signed).
 *   - response headers of the final response: Content-Length, Content-Range, ETag and the
 *     rel="next" target of Link (RFC 8288), reset at the start of every call.
 *   - every attempt, retry and body byte is added to the process-wide counters of remote.c
 *     (io_remote_count); that includes Qdrant traffic, which never runs in scan/inspect.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "io/remote_internal.h"
#include "vforge/io.h"

#define HTTP_MAX_URL 4096
#define HTTP_EXCERPT 300
/* a response body held in memory is refused past VF_BUF_MAX_HTTP_BODY (util.h), or past its
 * buffer's own smaller limit */

struct io_http {
  CURL *curl;
  char *base;         /* without trailing '/'; "" when opened without a base */
  char *api_header;   /* "api-key: ..." (never logged) */
  char *bearer_header; /* "Authorization: Bearer ..." (never logged) */
  char *sigv4;        /* CURLOPT_AWS_SIGV4 provider string */
  char *userpwd;      /* "key:secret" for SigV4 (never logged) */
  char *token_header; /* "x-amz-security-token: ..." (never logged) */
  char *ca_bundle;
  bool follow;
  bool http2;         /* issue 18: HTTP/2 only (gRPC) */
  curl_socket_t h2_sock; /* the h2c connection of the last transfer (CURL_SOCKET_BAD: none) */
  long connect_ms, total_ms;
  int max_retries;
  double base_s, max_s;
  uint64_t rng;
  io_http_stats stats;
  /* per attempt */
  vf_buf *sink;       /* response body being received (non-2xx bodies with sink_fd too) */
  bool sink_overflow;
  int sink_fd;        /* > 0: 2xx bodies go here */
  int sink_errno;     /* write(2) failure on sink_fd */
  bool want_range;    /* a Range header was sent */
  bool range_ignored; /* ... and the answer was 200 */
  uint64_t body_bytes; /* body bytes received in this attempt */
  io_http_resp *resp; /* header fields land here */
  double grpc_retry_s; /* gRPC retry hint of this attempt (retry-after / grpc-retry-pushback-ms), -1 */
  bool grpc_call;      /* this attempt is a gRPC call */
  bool grpc_done_early; /* ... whose failing status arrived: the transfer was stopped there */
};

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static CURLcode http_init_rc = CURLE_OK;
static void http_global_init(void) { http_init_rc = curl_global_init(CURL_GLOBAL_ALL); }

static size_t http_write_cb(char *ptr, size_t size, size_t nmemb, void *user) {
  io_http *c = user;
  size_t n = size * nmemb;
  long status = 0;
  curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
  if (c->want_range && status == 200) { /* the whole object is coming: stop right here */
    c->range_ignored = true;
    return 0;
  }
  c->body_bytes += n;
  if (c->sink_fd > 0 && status >= 200 && status < 300) {
    size_t done = 0;
    while (done < n) {
      ssize_t w = write(c->sink_fd, ptr + done, n - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        c->sink_errno = errno;
        return 0;
      }
      done += (size_t)w;
    }
    return n;
  }
  if (c->sink->len + n > VF_BUF_MAX_HTTP_BODY) {
    c->sink_overflow = true;
    return 0;
  }
  if (vf_buf_append(c->sink, ptr, n, NULL) != VF_OK) {
    c->sink_overflow = true;
    return 0;
  }
  return n;
}

/* Free the header-derived fields and set them to "absent". */
static void http_resp_reset_headers(io_http_resp *rs) {
  free(rs->link_next);
  free(rs->etag);
  free(rs->grpc_message);
  rs->link_next = NULL;
  rs->etag = NULL;
  rs->grpc_message = NULL;
  rs->grpc_status = -1;
  rs->content_length = -1;
  rs->range_start = rs->range_end = rs->range_total = -1;
}

/* io_http_resp_free(): see io.h. */
void io_http_resp_free(io_http_resp *rs) {
  if (!rs) return;
  vf_buf_free(&rs->body);
  free(rs->link_next);
  free(rs->etag);
  free(rs->grpc_message);
  rs->link_next = NULL;
  rs->etag = NULL;
  rs->grpc_message = NULL;
}

/* A non-negative decimal that fits int64 spanning exactly [p, e); -1 otherwise. */
static int64_t http_dec(const char *p, const char *e) {
  if (p >= e) return -1;
  int64_t v = 0;
  for (; p < e; p++) {
    if (*p < '0' || *p > '9') return -1;
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

/* io_http_parse_content_range(): see remote_internal.h.  "bytes a-b/t", "bytes a-b/" + "*",
 * "bytes * /t" (unsatisfied); whitespace around the pieces tolerated. */
bool io_http_parse_content_range(const char *v, size_t n, int64_t *start, int64_t *end,
                                 int64_t *total) {
  *start = *end = *total = -1;
  const char *p = v, *e = v + n;
  while (p < e && (*p == ' ' || *p == '\t'))
    p++;
  while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
    e--;
  if (e - p < 6 || strncasecmp(p, "bytes", 5) != 0 || (p[5] != ' ' && p[5] != '\t'))
    return false;
  p += 6;
  while (p < e && *p == ' ')
    p++;
  const char *slash = memchr(p, '/', (size_t)(e - p));
  if (!slash) return false;
  int64_t t = -1;
  if (!(e - slash == 2 && slash[1] == '*')) {
    t = http_dec(slash + 1, e);
    if (t < 0) return false;
  }
  if (slash - p == 1 && *p == '*') {
    if (t < 0) return false;
    *total = t;
    return true;
  }
  const char *dash = memchr(p, '-', (size_t)(slash - p));
  if (!dash) return false;
  int64_t a = http_dec(p, dash), b = http_dec(dash + 1, slash);
  if (a < 0 || b < a || (t >= 0 && b >= t)) return false;
  *start = a;
  *end = b;
  *total = t;
  return true;
}

/* io_http_parse_link_next(): see remote_internal.h.  Link: <url>; rel="next", <url2>; rel=prev
 * (RFC 8288: several links separated by ',', parameters by ';', rel may be unquoted and may
 * hold several space-separated relation types). */
char *io_http_parse_link_next(const char *v, size_t n) {
  const char *p = v, *e = v + n;
  while (p < e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == ','))
      p++;
    if (p >= e || *p != '<') return NULL;
    const char *us = p + 1;
    const char *ue = memchr(us, '>', (size_t)(e - us));
    if (!ue) return NULL;
    p = ue + 1;
    bool next = false;
    /* parameters up to the next ',' outside quotes */
    while (p < e && *p != ',') {
      while (p < e && (*p == ' ' || *p == '\t' || *p == ';'))
        p++;
      const char *ks = p;
      while (p < e && *p != '=' && *p != ';' && *p != ',')
        p++;
      const char *ke = p;
      while (ke > ks && (ke[-1] == ' ' || ke[-1] == '\t'))
        ke--;
      const char *vs = NULL, *ve = NULL;
      if (p < e && *p == '=') {
        p++;
        while (p < e && (*p == ' ' || *p == '\t'))
          p++;
        if (p < e && *p == '"') {
          vs = ++p;
          while (p < e && *p != '"')
            p++;
          ve = p;
          if (p < e) p++;
        } else {
          vs = p;
          while (p < e && *p != ';' && *p != ',')
            p++;
          ve = p;
          while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        }
      }
      if (ke - ks == 3 && strncasecmp(ks, "rel", 3) == 0 && vs) {
        const char *q = vs;
        while (q < ve) {
          while (q < ve && *q == ' ')
            q++;
          const char *ts = q;
          while (q < ve && *q != ' ')
            q++;
          if (q - ts == 4 && strncasecmp(ts, "next", 4) == 0) next = true;
        }
      }
    }
    if (next && ue > us) return vf_strndup(us, (size_t)(ue - us));
  }
  return NULL;
}

static int http_hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static size_t http_header_cb(char *buf, size_t size, size_t nitems, void *user) {
  io_http *c = user;
  size_t n = size * nitems;
  io_http_resp *rs = c->resp;
  if (!rs) return n;
  if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) { /* a new response (redirect, 100): start over */
    http_resp_reset_headers(rs);
    return n;
  }
  const char *colon = memchr(buf, ':', n);
  if (!colon) {
    /* the end of a header block that carried a failing grpc-status (a trailers-only answer,
     * e.g. RESOURCE_EXHAUSTED for a message over the server's limit): the answer is complete,
     * so stop here — a server that has stopped reading would otherwise leave the upload
     * blocked on flow control until the timeout */
    if (c->grpc_call && rs->grpc_status > 0 && n <= 2) {
      c->grpc_done_early = true;
      return 0;
    }
    return n;
  }
  size_t kl = (size_t)(colon - buf);
  const char *v = colon + 1, *e = buf + n;
  while (v < e && (*v == ' ' || *v == '\t'))
    v++;
  while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
    e--;
  size_t vl = (size_t)(e - v);
#define HDR_IS(lit) (kl == sizeof(lit) - 1 && strncasecmp(buf, lit, kl) == 0)
  if (HDR_IS("Content-Length")) {
    rs->content_length = http_dec(v, e);
  } else if (HDR_IS("Content-Range")) {
    io_http_parse_content_range(v, vl, &rs->range_start, &rs->range_end, &rs->range_total);
  } else if (HDR_IS("ETag")) {
    free(rs->etag);
    rs->etag = vf_strndup(v, vl);
  } else if (HDR_IS("Link")) {
    char *nx = io_http_parse_link_next(v, vl);
    if (nx) {
      free(rs->link_next);
      rs->link_next = nx;
    }
  } else if (HDR_IS("grpc-status")) { /* issue 18: in the trailers, or the headers of a
                                          trailers-only answer */
    int64_t code = http_dec(v, e);
    rs->grpc_status = code >= 0 && code <= 99 ? (int)code : 2; /* UNKNOWN */
  } else if (HDR_IS("grpc-message")) { /* percent-encoded (gRPC over HTTP/2, "Responses") */
    free(rs->grpc_message);
    rs->grpc_message = vf_malloc(vl + 1);
    if (rs->grpc_message) {
      size_t w = 0;
      for (const char *q = v; q < e; q++) {
        int hi, lo;
        if (*q == '%' && e - q >= 3 && (hi = http_hexval(q[1])) >= 0 && (lo = http_hexval(q[2])) >= 0) {
          rs->grpc_message[w++] = (char)(hi * 16 + lo);
          q += 2;
        } else {
          rs->grpc_message[w++] = *q;
        }
      }
      rs->grpc_message[w] = 0;
    }
  } else if (HDR_IS("grpc-retry-pushback-ms")) {
    int64_t ms = http_dec(v, e);
    if (ms >= 0) c->grpc_retry_s = (double)ms / 1000.0;
  } else if (HDR_IS("retry-after") && c->http2) { /* Qdrant's hint on RESOURCE_EXHAUSTED */
    char *endp = NULL;
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(vl < 31 ? vl : 31), v);
    double sec = strtod(tmp, &endp);
    if (endp != tmp && sec >= 0) c->grpc_retry_s = sec;
  }
#undef HDR_IS
  return n;
}

/* io_grpc_status_name(): see io.h. */
const char *io_grpc_status_name(int code) {
  static const char *const names[] = {"OK",        "CANCELLED",         "UNKNOWN",
                                      "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                                      "ALREADY_EXISTS",   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                      "FAILED_PRECONDITION", "ABORTED",     "OUT_OF_RANGE",
                                      "UNIMPLEMENTED",    "INTERNAL",          "UNAVAILABLE",
                                      "DATA_LOSS",        "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? names[code] : "UNKNOWN";
}

/* xorshift64*: jitter only, no security role */
static double http_rand01(io_http *c) {
  uint64_t x = c->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  c->rng = x;
  return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static void http_wipe_free(char *s);

/* io_http_open(): see io.h. */
vf_status io_http_open(const char *base_url, const io_http_opts *opts, io_http **out,
                       vf_error *err) {
  *out = NULL;
  if (!base_url) base_url = ""; /* no base: every request carries an absolute req->url */
  if (*base_url && strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0) {
    char shown[512];
    return vf_error_set(err, VF_EUSAGE, "http: '%s' is not an http:// or https:// URL",
                        vf_url_redact(base_url, shown, sizeof shown));
  }
  if (strlen(base_url) > HTTP_MAX_URL / 2)
    return vf_error_set(err, VF_EUSAGE, "http: the URL is longer than %d bytes", HTTP_MAX_URL / 2);
  pthread_once(&http_once, http_global_init);
  if (http_init_rc != CURLE_OK)
    return vf_error_set(err, VF_ENET, "http: curl_global_init failed: %s",
                        curl_easy_strerror(http_init_rc));
  io_http_opts o = {0};
  if (opts) o = *opts;
  io_http *c = vf_calloc(1, sizeof *c);
  if (!c) return vf_error_set(err, VF_ENOMEM, "http: out of memory");
  c->base = vf_strdup(base_url);
  const char *ca = o.ca_bundle ? o.ca_bundle : getenv("VFORGE_CA_BUNDLE");
  if (ca && *ca) c->ca_bundle = vf_strdup(ca);
  if (o.api_key && *o.api_key) {
    size_t n = strlen(o.api_key) + 16;
    c->api_header = vf_malloc(n);
    if (c->api_header) snprintf(c->api_header, n, "api-key: %s", o.api_key);
  }
  bool nomem = false;
  if (o.bearer_token && *o.bearer_token) {
    size_t n = strlen(o.bearer_token) + 24;
    c->bearer_header = vf_malloc(n);
    if (c->bearer_header)
      snprintf(c->bearer_header, n, "Authorization: Bearer %s", o.bearer_token);
    else
      nomem = true;
  }
  if (o.aws_sigv4 && *o.aws_sigv4) {
    const char *k = o.aws_key_id ? o.aws_key_id : "", *sec = o.aws_secret ? o.aws_secret : "";
    size_t n = strlen(k) + strlen(sec) + 2;
    c->sigv4 = vf_strdup(o.aws_sigv4);
    c->userpwd = vf_malloc(n);
    if (c->userpwd) snprintf(c->userpwd, n, "%s:%s", k, sec);
    if (!c->sigv4 || !c->userpwd) nomem = true;
    if (o.aws_session_token && *o.aws_session_token) {
      n = strlen(o.aws_session_token) + 24;
      c->token_header = vf_malloc(n);
      if (c->token_header)
        snprintf(c->token_header, n, "x-amz-security-token: %s", o.aws_session_token);
      else
        nomem = true;
    }
  }
  c->follow = o.follow_redirects;
  c->http2 = o.http2;
  c->h2_sock = CURL_SOCKET_BAD;
  if (c->http2 && !(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_HTTP2)) {
    free(c->base);
    free(c->ca_bundle);
    http_wipe_free(c->api_header);
    http_wipe_free(c->bearer_header);
    free(c);
    return vf_error_set(err, VF_EUNSUPPORTED, "http: this libcurl (%s) has no HTTP/2 support, "
                        "which gRPC needs (install a libcurl built with nghttp2, or use REST)",
                        curl_version_info(CURLVERSION_NOW)->version);
  }
  c->curl = curl_easy_init();
  if (nomem || !c->base || !c->curl || (ca && *ca && !c->ca_bundle) ||
      (o.api_key && *o.api_key && !c->api_header)) {
    io_http_close(c);
    return vf_error_set(err, VF_ENOMEM, "http: out of memory");
  }
  size_t bl = strlen(c->base);
  while (bl > 0 && c->base[bl - 1] == '/')
    c->base[--bl] = 0;
  c->connect_ms = (long)((o.connect_timeout_s > 0 ? o.connect_timeout_s : 10.0) * 1000.0);
  c->total_ms = (long)((o.timeout_s > 0 ? o.timeout_s : 120.0) * 1000.0);
  c->max_retries = o.max_retries < 0 ? 5 : o.max_retries;
  c->base_s = o.backoff_base_s > 0 ? o.backoff_base_s : 0.25;
  c->max_s = o.backoff_max_s > 0 ? o.backoff_max_s : 30.0;
  if (getrandom(&c->rng, sizeof c->rng, 0) != (ssize_t)sizeof c->rng || c->rng == 0)
    c->rng = (uint64_t)(uintptr_t)c ^ (uint64_t)(vf_now() * 1e9) ^ 0x9E3779B97F4A7C15ULL;
  *out = c;
  return VF_OK;
}

const char *io_http_base_url(const io_http *c) { return c->base; }

void io_http_get_stats(const io_http *c, io_http_stats *out) { *out = c->stats; }

static void http_wipe_free(char *s) {
  if (!s) return;
  volatile char *p = s; /* wipe the secret */
  while (*p)
    *p++ = 0;
  free(s);
}

void io_http_close(io_http *c) {
  if (!c) return;
  if (c->curl) curl_easy_cleanup(c->curl);
  http_wipe_free(c->api_header);
  http_wipe_free(c->bearer_header);
  http_wipe_free(c->userpwd);
  http_wipe_free(c->token_header);
  free(c->sigv4);
  free(c->ca_bundle);
  free(c->base);
  free(c);
}

/* The URL for messages: base + path (or the absolute URL) up to the query string (queries may
 * carry secrets such as pre-signed signatures), userinfo masked (a password in the URL). */
static void http_log_url(const io_http *c, const char *url, const char *path, char *out,
                         size_t cap) {
  const char *b = url ? "" : c->base, *p = url ? url : path;
  size_t pl = strcspn(p, "?");
  size_t fl = strlen(b) + pl + 1;
  char *full = vf_malloc(fl);
  if (!full) {
    snprintf(out, cap, "(a URL)");
    return;
  }
  snprintf(full, fl, "%s%.*s", b, (int)pl, p);
  vf_url_redact(full, out, cap);
  free(full);
}

/* A short, printable excerpt of a response body for error messages. */
static void http_excerpt(const vf_buf *b, char *out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < b->len && n + 4 < cap; i++) {
    unsigned char ch = b->data[i];
    out[n++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : ' ';
  }
  if (b->len > 0 && n + 4 >= cap) {
    memcpy(out + n, "...", 3);
    n += 3;
  }
  out[n] = 0;
}

static bool http_retryable_curl(CURLcode rc) {
  switch (rc) {
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR: return true;
  default: return false;
  }
}

static void http_sleep(double s) {
  if (s <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Whether the kept connection `s` is still open: no EOF or error waiting on it (a peer's close
 * shows as a readable socket with nothing to read). */
static bool http_sock_alive(curl_socket_t s) {
  if (s == CURL_SOCKET_BAD) return false;
  struct pollfd pfd = {s, POLLIN, 0};
  int r = poll(&pfd, 1, 0);
  if (r < 0) return false;
  if (r == 0) return true;
  if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
  char b;
  ssize_t n = recv(s, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return n > 0; /* data pending (e.g. a PING or SETTINGS frame): open; 0: closed */
}

/* One attempt.  Returns the curl code; *status gets the HTTP status (0 without a response),
 * *retry_after the Retry-After seconds (-1 when absent). */
static CURLcode http_attempt(io_http *c, const io_http_req *rq, const char *url,
                             struct curl_slist *hdrs, io_http_resp *rs, long *status,
                             double *retry_after, char *errbuf) {
  CURL *h = c->curl;
  curl_easy_reset(h); /* keeps the connection cache; clears the previous request's options */
  errbuf[0] = 0;
  rs->body.len = 0;
  http_resp_reset_headers(rs);
  c->sink = &rs->body;
  c->sink_overflow = false;
  c->sink_fd = rq->sink_fd;
  c->sink_errno = 0;
  c->want_range = rq->range != NULL && !rq->head;
  c->range_ignored = false;
  c->body_bytes = 0;
  c->resp = rs;
  c->grpc_retry_s = -1;
  c->grpc_call = rq->grpc;
  c->grpc_done_early = false;
  curl_easy_setopt(h, CURLOPT_URL, url);
  if (c->http2) { /* gRPC: HTTP/2 with prior knowledge on cleartext, ALPN h2 over TLS */
    long ver = (long)CURL_HTTP_VERSION_2TLS;
    if (strncmp(url, "https://", 8) != 0) {
      /* libcurl 7.88 fails a request that reuses an h2c connection under PRIOR_KNOWLEDGE
       * ("Error in the HTTP2 framing layer"), so prior knowledge opens the connection and a
       * live one is reused under HTTP_VERSION_2_0 (which multiplexes onto it) */
      ver = http_sock_alive(c->h2_sock) ? (long)CURL_HTTP_VERSION_2_0
                                        : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
    }
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, ver);
  }
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->total_ms);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  if (c->ca_bundle) curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_bundle);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, http_write_cb);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, http_header_cb);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  if (!rq->range && !rq->head && rq->sink_fd <= 0 && !rq->grpc) /* byte-exact transfers stay identity */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  if (c->follow) {
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  }
  if (c->sigv4) {
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
    curl_easy_setopt(h, CURLOPT_USERPWD, c->userpwd);
  }
  if (rq->head) {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (strcmp(rq->method, "GET") == 0) {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    if (rq->body || strcmp(rq->method, "DELETE") != 0) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? (const char *)rq->body : "");
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(rq->body ? rq->body_len : 0));
    }
  }
  c->stats.requests++;
  c->stats.bytes_sent += rq->body ? rq->body_len : 0;
  CURLcode rc = curl_easy_perform(h);
  if (rc == CURLE_WRITE_ERROR && c->grpc_done_early) rc = CURLE_OK; /* stopped on purpose */
  c->stats.bytes_received += c->body_bytes;
  io_remote_count(1, 0, c->body_bytes, rq->body ? rq->body_len : 0);
  *status = 0;
  *retry_after = -1;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  long nconn = 0;
  if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &nconn) == CURLE_OK && nconn > 0)
    c->stats.connects += (uint64_t)nconn;
  curl_off_t ra = -1;
  if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
    *retry_after = (double)ra;
  if (c->http2) {
    curl_socket_t sock = CURL_SOCKET_BAD;
    if (rc != CURLE_OK || curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK)
      sock = CURL_SOCKET_BAD;
    c->h2_sock = sock;
  }
  if (rq->grpc) {
    long ver = 0;
    curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &ver);
    if (rc == CURLE_OK && *status != 0 && ver != CURL_HTTP_VERSION_2_0) *status = -2; /* not h2 */
    if (c->grpc_retry_s >= 0) *retry_after = c->grpc_retry_s;
  }
  c->sink = NULL;
  c->resp = NULL;
  return rc;
}

/* io_http_request(): see io.h. */
vf_status io_http_request(io_http *c, const io_http_req *rq, io_http_resp *rs, vf_error *err) {
  char url[HTTP_MAX_URL], logurl[HTTP_MAX_URL], errbuf[CURL_ERROR_SIZE];
  rs->status = 0;
  rs->attempts = 0;
  rs->body.len = 0;
  http_resp_reset_headers(rs);
  if (!rq->method || (!rq->path && !rq->url))
    return vf_error_set(err, VF_EUSAGE, "http: request without a method or path");
  if (!rq->url && !c->base[0])
    return vf_error_set(err, VF_EUSAGE, "http: %s request without a URL on a client opened "
                        "without a base URL", rq->method);
  if (rq->url && strncmp(rq->url, "http://", 7) != 0 && strncmp(rq->url, "https://", 8) != 0)
    return vf_error_set(err, VF_EUSAGE, "http: '%.200s' is not an http:// or https:// URL",
                        rq->url);
  int ul = rq->url ? snprintf(url, sizeof url, "%s", rq->url)
                   : snprintf(url, sizeof url, "%s%s", c->base, rq->path);
  if (ul < 0 || (size_t)ul >= sizeof url)
    return vf_error_set(err, VF_EUSAGE, "http: the URL of %s %.200s is too long", rq->method,
                        rq->url ? rq->url : c->base);
  http_log_url(c, rq->url, rq->path, logurl, sizeof logurl);
  const char *method = rq->head ? "HEAD" : rq->method;
  off_t sink_start = 0;
  if (rq->sink_fd > 0) {
    sink_start = lseek(rq->sink_fd, 0, SEEK_CUR);
    if (sink_start < 0)
      return vf_error_set(err, VF_EUSAGE, "http: %s %s: the download target is not seekable: %s",
                          method, logurl, VF_STRERROR(errno));
  }
  struct curl_slist *hdrs = NULL, *t;
  char ctype[256], range[96];
  bool ok = true;
#define HTTP_ADD(s)                                                                            \
  do {                                                                                         \
    if (ok && (t = curl_slist_append(hdrs, (s))) != NULL)                                      \
      hdrs = t;                                                                                \
    else                                                                                       \
      ok = false;                                                                              \
  } while (0)
  char gtimeout[64];
  if (rq->grpc) { /* gRPC over HTTP/2, "Requests" */
    HTTP_ADD("Content-Type: application/grpc");
    HTTP_ADD("TE: trailers");
    snprintf(gtimeout, sizeof gtimeout, "grpc-timeout: %ldm",
             c->total_ms < 99999999 ? c->total_ms : 99999999L);
    HTTP_ADD(gtimeout);
  } else if (rq->body) {
    snprintf(ctype, sizeof ctype, "Content-Type: %s",
             rq->content_type ? rq->content_type : "application/json");
    HTTP_ADD(ctype);
  }
  if (rq->range) {
    int rl = snprintf(range, sizeof range, "Range: bytes=%s", rq->range);
    if (rl < 0 || (size_t)rl >= sizeof range) {
      curl_slist_free_all(hdrs);
      return vf_error_set(err, VF_EUSAGE, "http: %s %s: malformed range '%.40s'", method, logurl,
                          rq->range);
    }
    HTTP_ADD(range);
  }
  /* no 100-continue round trip for large bodies; but libcurl 7.88's SigV4 signs every custom
   * header, including this removal line, and then does not send it: the signature would not
   * match (403 SignatureDoesNotMatch), so signed requests keep curl's Expect behaviour */
  if (!c->sigv4) HTTP_ADD("Expect:");
  bool own_accept = false; /* a caller's Accept replaces the default (no duplicate header) */
  for (const char *const *hp = rq->headers; hp && *hp; hp++)
    if (strncasecmp(*hp, "Accept:", 7) == 0) own_accept = true;
  if (!own_accept && !rq->grpc) HTTP_ADD("Accept: application/json");
  if (c->api_header) HTTP_ADD(c->api_header);
  if (c->bearer_header) HTTP_ADD(c->bearer_header);
  if (c->sigv4) {
    bool has_sha = false;
    for (const char *const *hp = rq->headers; hp && *hp; hp++)
      if (strncasecmp(*hp, "x-amz-content-sha256:", 21) == 0) has_sha = true;
    if (!has_sha) HTTP_ADD("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (c->token_header) HTTP_ADD(c->token_header);
  }
  for (const char *const *hp = rq->headers; hp && *hp; hp++)
    HTTP_ADD(*hp);
#undef HTTP_ADD
  if (!ok) {
    curl_slist_free_all(hdrs);
    return vf_error_set(err, VF_ENOMEM, "http: out of memory");
  }
  vf_status st = VF_OK;
  for (int attempt = 1;; attempt++) {
    long status = 0;
    double retry_after = -1;
    if (rq->sink_fd > 0 && attempt > 1 &&
        (ftruncate(rq->sink_fd, sink_start) != 0 ||
         lseek(rq->sink_fd, sink_start, SEEK_SET) != sink_start)) {
      st = vf_error_set(err, VF_EIO, "http: %s %s: cannot rewind the download target: %s",
                        method, logurl, VF_STRERROR(errno));
      break;
    }
    CURLcode rc = http_attempt(c, rq, url, hdrs, rs, &status, &retry_after, errbuf);
    rs->attempts = attempt;
    rs->status = status;
    if (attempt > 1) {
      c->stats.retries++;
      io_remote_count(0, 1, 0, 0);
    }
    if (rc == CURLE_WRITE_ERROR && c->sink_overflow) {
      size_t lim = rs->body.max && rs->body.max < VF_BUF_MAX_HTTP_BODY ? rs->body.max
                                                                       : VF_BUF_MAX_HTTP_BODY;
      st = vf_error_set(err, VF_ENET, "%s %s: the response body exceeds %zu bytes (%s)", method,
                        logurl, lim,
                        lim == VF_BUF_MAX_HTTP_BODY ? "VF_BUF_MAX_HTTP_BODY"
                        : rs->body.limit            ? rs->body.limit
                                                    : "the caller's limit");
      break;
    }
    if (rc == CURLE_WRITE_ERROR && c->range_ignored) {
      st = vf_error_set(err, VF_EUNSUPPORTED,
                        "%s %s: the server ignored the Range header (answered 200 with the "
                        "whole object instead of 206 for bytes=%s); ranged reads are required",
                        method, logurl, rq->range);
      break;
    }
    if (rc == CURLE_WRITE_ERROR && c->sink_errno) {
      st = vf_error_set(err, VF_EIO, "%s %s: cannot write the download: %s", method, logurl,
                        VF_STRERROR(c->sink_errno));
      break;
    }
    bool retry;
    char what[CURL_ERROR_SIZE + 320];
    if (rc != CURLE_OK) {
      retry = http_retryable_curl(rc);
      snprintf(what, sizeof what, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    } else if (rq->grpc && status == -2) {
      st = vf_error_set(err, VF_ENET, "%s %s: the server did not answer over HTTP/2 (is this "
                        "Qdrant's gRPC port?)", method, logurl);
      break;
    } else if (rq->grpc && status == 200) {
      int gs = rs->grpc_status;
      if (gs == 0) {
        st = VF_OK;
        break;
      }
      const char *gm = rs->grpc_message ? rs->grpc_message : "";
      /* a message over the server's limit is RESOURCE_EXHAUSTED too, but no retry helps */
      bool too_big = gs == 8 && (strstr(gm, "larger than") || strstr(gm, "too large"));
      retry = gs == -1 || gs == 14 || gs == 4 || (gs == 8 && !too_big);
      if (gs == -1)
        snprintf(what, sizeof what, "the gRPC answer ended without a grpc-status");
      else
        snprintf(what, sizeof what, "gRPC %s (%d)%s%.260s", io_grpc_status_name(gs), gs,
                 gm[0] ? ": " : "", gm);
    } else {
      retry = status == 429 || status >= 500;
      snprintf(what, sizeof what, "HTTP %ld", status);
    }
    if (rc == CURLE_OK && !rq->grpc &&
        ((status >= 200 && status < 300) || (status == 404 && rq->allow_404))) {
      st = VF_OK;
      break;
    }
    if (retry && attempt <= c->max_retries) {
      double ceil_s = c->base_s * (double)(1u << (attempt - 1 < 20 ? attempt - 1 : 20));
      if (ceil_s > c->max_s) ceil_s = c->max_s;
      double wait = http_rand01(c) * ceil_s;
      if (retry_after >= 0) wait = retry_after < c->max_s ? retry_after : c->max_s;
      vf_log(VF_LOG_WARN, "http: %s %s: %s (attempt %d of %d); retrying in %.2f s", method,
             logurl, what, attempt, c->max_retries + 1, wait);
      http_sleep(wait);
      continue;
    }
    char ex[HTTP_EXCERPT + 8];
    http_excerpt(&rs->body, ex, sizeof ex);
    if (rq->grpc && status == 200) ex[0] = 0; /* a protobuf body: the status says it all */
    st = vf_error_set(err, VF_ENET,
                      "%s %s: %s after %d attempt%s%s%s", method, logurl, what, attempt,
                      attempt == 1 ? "" : "s", ex[0] ? ": " : "", ex);
    break;
  }
  curl_slist_free_all(hdrs);
  return st;
}
