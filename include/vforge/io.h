/*
 * vforge io — byte sources with a size and positional reads, and range coalescing.
 *
 * Readers (parquet, npy, ...) only see io_source: `size` once, then `read_at` for the byte
 * ranges they need.  Local files use pread; remote backends (http, s3, hf) plug in later behind
 * the same vtable without touching any reader.  io_read_ranges() merges nearby ranges so a
 * reader asking for several column chunks issues few large reads.
 */
#ifndef VFORGE_IO_H
#define VFORGE_IO_H

#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct io_source io_source;

typedef struct io_source_vtable {
  /* read exactly n bytes at offset into dst; short read past EOF is VF_ECORRUPT/VF_EIO */
  vf_status (*read_at)(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err);
  void (*close)(io_source *src);
} io_source_vtable;

struct io_source {
  const io_source_vtable *vt;
  char *name;      /* the URI or path, for error messages (owned) */
  uint64_t size;   /* total size in bytes */
  uint64_t bytes_read;
  uint64_t reads;  /* number of read_at calls that reached the backend */
};

/*! io_open_local() : open a local file for positional reads (pread).
 *  @return : VF_ENOTFOUND if missing, VF_EIO on other failures; the message names the path. */
vf_status io_open_local(const char *path, io_source **out, vf_error *err);

/*! io_open_memory() : a source over caller-owned bytes (tests, fuzzers). `name` is copied. */
vf_status io_open_memory(const void *data, size_t len, const char *name, io_source **out,
                         vf_error *err);

/*! io_read_at() : read exactly n bytes at offset; bounds-checked against size first. */
vf_status io_read_at(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err);

void io_close(io_source *src); /* NULL ok */

typedef struct io_range {
  uint64_t offset;
  uint64_t len;
  uint8_t *dst; /* filled by io_read_ranges */
} io_range;

/*! io_read_ranges() : read several ranges, merging ranges whose gap is <= max_gap bytes into one
 *  backend read (the gap bytes are read and dropped).  Ranges may be in any order. */
vf_status io_read_ranges(io_source *src, io_range *ranges, size_t n, uint64_t max_gap,
                         vf_error *err);

#define IO_DEFAULT_COALESCE_GAP (1u << 20)

/* ------------------------------------------------------------- HTTP client */

/* The shared HTTP client (libcurl; src/io/http.c).  One client = one CURL easy handle, so
 * connections to the base URL are reused (keep-alive) across requests.  A client is used by one
 * thread at a time; several requests in flight = several clients (the load runner opens one
 * store handle, hence one client, per worker thread).
 *
 * Retries: timeouts, connection errors, 429 (Retry-After honoured) and 5xx are retried up to
 * `max_retries` times with exponential backoff and full jitter; every retry is logged through
 * vf_log (VF_LOG_WARN) with the method, the URL without its query string, the status or curl
 * error, the attempt and the wait.  Other statuses are final.  TLS peers are verified; the CA
 * bundle is `ca_bundle`, else $VFORGE_CA_BUNDLE, else curl's default.  The api key is sent as
 * the `api-key` header and never appears in a log line or an error. */
typedef struct io_http io_http;

typedef struct io_http_opts {
  const char *api_key;      /* NULL: no api-key header */
  const char *ca_bundle;    /* NULL: $VFORGE_CA_BUNDLE, else curl's default */
  double connect_timeout_s; /* 0: 10 s */
  double timeout_s;         /* whole request, per attempt; 0: 120 s */
  int max_retries;          /* retries after the first attempt; < 0: 5 */
  double backoff_base_s;    /* first backoff ceiling; 0: 0.25 s (doubles each attempt) */
  double backoff_max_s;     /* cap on one wait (and on Retry-After); 0: 30 s */
} io_http_opts;

typedef struct io_http_req {
  const char *method;       /* "GET", "PUT", "POST", "PATCH", "DELETE" */
  const char *path;         /* appended to the base URL (may carry a query string) */
  const void *body;         /* NULL: no body */
  size_t body_len;
  const char *content_type; /* NULL with a body: "application/json" */
  const char *const *headers; /* extra "Name: value" lines, NULL-terminated, or NULL */
  bool allow_404;           /* a 404 is returned as VF_OK (status 404) instead of an error */
} io_http_req;

typedef struct io_http_resp {
  long status;              /* final HTTP status (0 when no response) */
  vf_buf body;              /* final response body (caller frees with vf_buf_free) */
  int attempts;             /* attempts made (1 = no retry) */
} io_http_resp;

typedef struct io_http_stats {
  uint64_t requests;        /* attempts sent */
  uint64_t retries;         /* attempts that were retries */
  uint64_t bytes_sent;      /* request body bytes */
  uint64_t bytes_received;  /* response body bytes */
  uint64_t connects;        /* new connections opened (the rest reused a kept-alive one) */
} io_http_stats;

/*! io_http_open() : a client for `base_url` (http:// or https://; a trailing '/' is dropped).
 *  `opts` may be NULL (defaults).  @return : VF_EUSAGE for another scheme, VF_ENOMEM. */
vf_status io_http_open(const char *base_url, const io_http_opts *opts, io_http **out,
                       vf_error *err);
/*! io_http_request() : send `req` (with retries) and receive the response into `resp` (its body
 *  buffer is reset first; init it with vf_buf_init).  @return : VF_OK for 2xx (and 404 when
 *  allowed); VF_ENET naming the method, URL and final status or curl error plus a short
 *  excerpt of the response body otherwise (resp->status still holds the status). */
vf_status io_http_request(io_http *c, const io_http_req *req, io_http_resp *resp, vf_error *err);
/*! io_http_base_url() : the base URL (borrowed). */
const char *io_http_base_url(const io_http *c);
void io_http_get_stats(const io_http *c, io_http_stats *out);
void io_http_close(io_http *c); /* NULL ok */

#ifdef __cplusplus
}
#endif
#endif
