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
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "vforge/io.h"

#define HTTP_MAX_URL 4096
#define HTTP_EXCERPT 300
#define HTTP_MAX_BODY ((size_t)1 << 30) /* response bodies larger than this are refused */

struct io_http {
  CURL *curl;
  char *base;         /* without trailing '/' */
  char *api_header;   /* "api-key: ..." (never logged) */
  char *ca_bundle;
  long connect_ms, total_ms;
  int max_retries;
  double base_s, max_s;
  uint64_t rng;
  io_http_stats stats;
  vf_buf *sink; /* response body being received */
  bool sink_overflow;
};

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static CURLcode http_init_rc = CURLE_OK;
static void http_global_init(void) { http_init_rc = curl_global_init(CURL_GLOBAL_ALL); }

static size_t http_write_cb(char *ptr, size_t size, size_t nmemb, void *user) {
  io_http *c = user;
  size_t n = size * nmemb;
  if (c->sink->len + n > HTTP_MAX_BODY) {
    c->sink_overflow = true;
    return 0;
  }
  if (vf_buf_append(c->sink, ptr, n, NULL) != VF_OK) {
    c->sink_overflow = true;
    return 0;
  }
  return n;
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

/* io_http_open(): see io.h. */
vf_status io_http_open(const char *base_url, const io_http_opts *opts, io_http **out,
                       vf_error *err) {
  *out = NULL;
  if (!base_url || (strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0))
    return vf_error_set(err, VF_EUSAGE, "http: '%s' is not an http:// or https:// URL",
                        base_url ? base_url : "(null)");
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
  c->curl = curl_easy_init();
  if (!c->base || !c->curl || (ca && *ca && !c->ca_bundle) ||
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

void io_http_close(io_http *c) {
  if (!c) return;
  if (c->curl) curl_easy_cleanup(c->curl);
  if (c->api_header) {
    volatile char *p = c->api_header; /* wipe the secret */
    while (*p)
      *p++ = 0;
    free(c->api_header);
  }
  free(c->ca_bundle);
  free(c->base);
  free(c);
}

/* The URL for messages: base + path up to the query string (queries may carry secrets). */
static void http_log_url(const io_http *c, const char *path, char *out, size_t cap) {
  size_t pl = strcspn(path, "?");
  snprintf(out, cap, "%s%.*s", c->base, (int)pl, path);
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

/* One attempt.  Returns the curl code; *status gets the HTTP status (0 without a response),
 * *retry_after the Retry-After seconds (-1 when absent). */
static CURLcode http_attempt(io_http *c, const io_http_req *rq, const char *url,
                             struct curl_slist *hdrs, io_http_resp *rs, long *status,
                             double *retry_after, char *errbuf) {
  CURL *h = c->curl;
  curl_easy_reset(h); /* keeps the connection cache; clears the previous request's options */
  errbuf[0] = 0;
  rs->body.len = 0;
  c->sink = &rs->body;
  c->sink_overflow = false;
  curl_easy_setopt(h, CURLOPT_URL, url);
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
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  if (strcmp(rq->method, "GET") == 0) {
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
  c->stats.bytes_received += rs->body.len;
  *status = 0;
  *retry_after = -1;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  long nconn = 0;
  if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &nconn) == CURLE_OK && nconn > 0)
    c->stats.connects += (uint64_t)nconn;
  curl_off_t ra = -1;
  if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
    *retry_after = (double)ra;
  c->sink = NULL;
  return rc;
}

/* io_http_request(): see io.h. */
vf_status io_http_request(io_http *c, const io_http_req *rq, io_http_resp *rs, vf_error *err) {
  char url[HTTP_MAX_URL], logurl[HTTP_MAX_URL], errbuf[CURL_ERROR_SIZE];
  rs->status = 0;
  rs->attempts = 0;
  rs->body.len = 0;
  if (!rq->method || !rq->path)
    return vf_error_set(err, VF_EUSAGE, "http: request without a method or path");
  int ul = snprintf(url, sizeof url, "%s%s", c->base, rq->path);
  if (ul < 0 || (size_t)ul >= sizeof url)
    return vf_error_set(err, VF_EUSAGE, "http: the URL of %s %s is too long", rq->method, c->base);
  http_log_url(c, rq->path, logurl, sizeof logurl);
  struct curl_slist *hdrs = NULL, *t;
  char ctype[256];
  bool ok = true;
#define HTTP_ADD(s)                                                                            \
  do {                                                                                         \
    if (ok && (t = curl_slist_append(hdrs, (s))) != NULL)                                      \
      hdrs = t;                                                                                \
    else                                                                                       \
      ok = false;                                                                              \
  } while (0)
  if (rq->body) {
    snprintf(ctype, sizeof ctype, "Content-Type: %s",
             rq->content_type ? rq->content_type : "application/json");
    HTTP_ADD(ctype);
  }
  HTTP_ADD("Expect:"); /* no 100-continue round trip for large bodies */
  HTTP_ADD("Accept: application/json");
  if (c->api_header) HTTP_ADD(c->api_header);
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
    CURLcode rc = http_attempt(c, rq, url, hdrs, rs, &status, &retry_after, errbuf);
    rs->attempts = attempt;
    rs->status = status;
    if (attempt > 1) c->stats.retries++;
    if (rc == CURLE_WRITE_ERROR && c->sink_overflow) {
      st = vf_error_set(err, VF_ENET, "%s %s: the response body exceeds %zu bytes", rq->method,
                        logurl, HTTP_MAX_BODY);
      break;
    }
    bool retry;
    char what[CURL_ERROR_SIZE + 64];
    if (rc != CURLE_OK) {
      retry = http_retryable_curl(rc);
      snprintf(what, sizeof what, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    } else {
      retry = status == 429 || status >= 500;
      snprintf(what, sizeof what, "HTTP %ld", status);
    }
    if (rc == CURLE_OK && ((status >= 200 && status < 300) || (status == 404 && rq->allow_404))) {
      st = VF_OK;
      break;
    }
    if (retry && attempt <= c->max_retries) {
      double ceil_s = c->base_s * (double)(1u << (attempt - 1 < 20 ? attempt - 1 : 20));
      if (ceil_s > c->max_s) ceil_s = c->max_s;
      double wait = http_rand01(c) * ceil_s;
      if (retry_after >= 0) wait = retry_after < c->max_s ? retry_after : c->max_s;
      vf_log(VF_LOG_WARN, "http: %s %s: %s (attempt %d of %d); retrying in %.2f s", rq->method,
             logurl, what, attempt, c->max_retries + 1, wait);
      http_sleep(wait);
      continue;
    }
    char ex[HTTP_EXCERPT + 8];
    http_excerpt(&rs->body, ex, sizeof ex);
    st = vf_error_set(err, VF_ENET, "%s %s: %s after %d attempt%s%s%s", rq->method, logurl, what,
                      attempt, attempt == 1 ? "" : "s", ex[0] ? ": " : "", ex);
    break;
  }
  curl_slist_free_all(hdrs);
  return st;
}
