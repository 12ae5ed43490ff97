/*
 * vforge io — byte sources with a size and positional reads, and range coalescing.
 *
 * Readers (parquet, npy, ...) only see io_source: `size` once, then `read_at` for the byte
 * ranges they need.  Local files use pread; remote backends (http(s), s3, hf) plug in behind
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

typedef struct io_range {
  uint64_t offset;
  uint64_t len;
  uint8_t *dst; /* filled by io_read_ranges */
} io_range;

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
  /* optional (NULL, as calloc leaves it: io_read_ranges issues one read_at per span): read n
   * spans at once, e.g. concurrently over several connections (remote sources, issue 7).
   * Spans are bounds-checked, non-empty, sorted by offset and non-overlapping. */
  vf_status (*read_spans)(io_source *src, const io_range *spans, size_t n, vf_error *err);
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
  /* issue 7: object stores */
  const char *aws_sigv4;    /* non-NULL: sign every request with SigV4, e.g. "aws:amz:us-east-1:s3"
                               (CURLOPT_AWS_SIGV4); x-amz-content-sha256 is sent automatically */
  const char *aws_key_id, *aws_secret, *aws_session_token; /* with aws_sigv4; never logged */
  const char *bearer_token; /* non-NULL: "Authorization: Bearer <token>" (HF_TOKEN); never logged */
  bool follow_redirects;    /* follow 3xx (Range and method kept; credentials only to the same host) */
  /* issue 18: gRPC */
  bool http2;               /* HTTP/2 only: prior knowledge (h2c) for http://, ALPN h2 for https:// */
} io_http_opts;

typedef struct io_http_req {
  const char *method;       /* "GET", "PUT", "POST", "PATCH", "DELETE" */
  const char *path;         /* appended to the base URL (may carry a query string) */
  const void *body;         /* NULL: no body */
  size_t body_len;
  const char *content_type; /* NULL with a body: "application/json" */
  const char *const *headers; /* extra "Name: value" lines, NULL-terminated, or NULL */
  bool allow_404;           /* a 404 is returned as VF_OK (status 404) instead of an error */
  /* issue 7 */
  const char *url;          /* non-NULL: this absolute URL instead of base + path */
  const char *range;        /* non-NULL: "Range: bytes=<range>" ("0-99", "-8") */
  bool head;                /* HEAD request (no body) */
  int sink_fd;              /* > 0: stream the 2xx body to this fd instead of resp->body (downloads);
                               0 = buffer in resp->body (so zero-initialised requests buffer) */
  /* issue 18: a gRPC call (POST, body = length-prefixed message, on an http2 client): sends
   * content-type application/grpc, te: trailers and grpc-timeout; success is HTTP 200 with
   * grpc-status 0; grpc-status UNAVAILABLE, RESOURCE_EXHAUSTED (its retry-after or
   * grpc-retry-pushback-ms hint honoured) and DEADLINE_EXCEEDED, a missing grpc-status (a cut
   * stream) and connection errors are retried like 429/5xx; other statuses are final */
  bool grpc;
} io_http_req;

typedef struct io_http_resp {
  long status;              /* final HTTP status (0 when no response) */
  vf_buf body;              /* final response body (caller frees with vf_buf_free) */
  int attempts;             /* attempts made (1 = no retry) */
  /* issue 7: from the final response's headers (-1 / NULL when absent) */
  int64_t content_length;   /* Content-Length */
  int64_t range_start, range_end, range_total; /* Content-Range: bytes start-end/total */
  char *link_next;          /* the rel="next" URL of a Link header (caller frees) */
  char *etag;               /* ETag (caller frees) */
  /* issue 18: gRPC calls: grpc-status (-1 when absent) and grpc-message (percent-decoded;
   * caller frees) of the final response's headers or trailers */
  int grpc_status;
  char *grpc_message;
} io_http_resp;

typedef struct io_http_stats {
  uint64_t requests;        /* attempts sent */
  uint64_t retries;         /* attempts that were retries */
  uint64_t bytes_sent;      /* request body bytes */
  uint64_t bytes_received;  /* response body bytes */
  uint64_t connects;        /* new connections opened (the rest reused a kept-alive one) */
} io_http_stats;

/*! io_http_open() : a client for `base_url` (http:// or https://; a trailing '/' is dropped).
 *  base_url NULL or "": no base, every request must set req->url (absolute URLs; remote
 *  sources).  `opts` may be NULL (defaults).  @return : VF_EUSAGE for another scheme, VF_ENOMEM. */
vf_status io_http_open(const char *base_url, const io_http_opts *opts, io_http **out,
                       vf_error *err);
/*! io_http_request() : send `req` (with retries) and receive the response into `resp` (its body
 *  buffer is reset first; init it with vf_buf_init).  @return : VF_OK for 2xx (and 404 when
 *  allowed); VF_ENET naming the method, URL and final status or curl error plus a short
 *  excerpt of the response body otherwise (resp->status still holds the status). */
vf_status io_http_request(io_http *c, const io_http_req *req, io_http_resp *resp, vf_error *err);
/*! io_http_resp_free() : free the body and the header strings of `resp` (NULL ok); the
 *  struct may be reused afterwards (io_http_request resets the header fields itself). */
void io_http_resp_free(io_http_resp *resp);
/*! io_http_base_url() : the base URL (borrowed; "" for a client opened without one). */
const char *io_http_base_url(const io_http *c);
void io_http_get_stats(const io_http *c, io_http_stats *out);
/*! io_grpc_status_name() : "UNAVAILABLE" for 14, ... (gRPC status codes 0..16; else "UNKNOWN"). */
const char *io_grpc_status_name(int code);
void io_http_close(io_http *c); /* NULL ok */


/* ------------------------------------------------------------ remote sources */

/* Remote byte sources and listings (issue 7; src/io/remote.c dispatches, src/io/s3.c,
 * src/io/hf.c, src/io/httpsrc.c implement).  Every scheme of io_scheme is accepted:
 *   local path / file://   io_open_local
 *   http(s)://host/path    ranged GETs (Range: bytes=a-b); size from HEAD, else from the
 *                          Content-Range of the first ranged GET.  A server that ignores Range
 *                          (answers 200 with the whole body) is detected and reported as
 *                          VF_EUNSUPPORTED naming the URL (never a silent whole-file download)
 *   s3://bucket/key        SigV4 (libcurl CURLOPT_AWS_SIGV4 + x-amz-content-sha256), the AWS
 *                          credential chain, AWS_REGION/AWS_DEFAULT_REGION, AWS_ENDPOINT_URL
 *                          (path-style addressing for S3-compatible stores)
 *   hf://datasets/ns/repo[@rev]/path, hf://buckets/ns/name/path
 *                          the Hub's resolve URLs (redirects followed with Range kept),
 *                          HF_TOKEN, HF_ENDPOINT
 * Secrets never appear in an error message or a log line.  Every read retries per the HTTP
 * client rules; the counters below are process-wide so every command can report them. */

typedef struct io_remote_opts {
  int parallel_ranges;   /* concurrent range requests per io_read_ranges call; 0: 4 */
  const char *ca_bundle; /* NULL: $VFORGE_CA_BUNDLE, else curl's default */
  int max_retries;       /* < 0: 5 */
} io_remote_opts;

/*! io_remote_set_opts() : process-wide options for remote sources opened afterwards. */
void io_remote_set_opts(const io_remote_opts *o);

typedef enum io_scheme {
  IO_URI_LOCAL = 0,  /* plain path (relative paths made absolute, symlinks kept) */
  IO_URI_FILE,       /* file:///abs/path */
  IO_URI_S3,         /* s3://bucket/key */
  IO_URI_HF_DATASET, /* hf://datasets/<ns>/<repo>/<path> (optional @rev after repo) */
  IO_URI_HF_BUCKET,  /* hf://buckets/<ns>/<name>/<path> */
  IO_URI_HTTP,       /* http://host/path */
  IO_URI_HTTPS       /* https://host/path */
} io_scheme;

typedef struct io_uri {
  io_scheme scheme;
  char *uri;       /* as given (local: the absolute path) */
  char *container; /* bucket, "ns/repo", "ns/name", host[:port]; NULL for local */
  char *revision;  /* hf datasets "@rev", else NULL */
  char *path;      /* key inside the container (no leading '/'); local: absolute path */
} io_uri;

/*! io_uri_parse() : split a corpus URI (src/io/uri.c).  @return : VF_EUSAGE naming the URI
 *  when malformed (empty bucket, hf:// without datasets/ or buckets/, unknown scheme). */
vf_status io_uri_parse(const char *uri, io_uri *out, vf_error *err);
void io_uri_free(io_uri *u);

/*! io_abs_path() : the absolute, lexically normalised form of a local path ("//", ".", ".."
 *  removed; relative paths joined to the working directory; symlinks kept).  Caller frees. */
vf_status io_abs_path(const char *path, char **out, vf_error *err);

/*! io_open_uri() : a byte source for any corpus URI (local, file, http(s), s3, hf).
 *  @return : VF_ENOTFOUND (404/NoSuchKey) naming the URI; VF_ENET for network/auth failures
 *            (naming the URI and the status, e.g. "403 SignatureDoesNotMatch" or "expired
 *            credentials"), VF_EUSAGE for a malformed URI. */
vf_status io_open_uri(const char *uri, io_source **out, vf_error *err);
/*! io_open_uri_sized() : io_open_uri() with the object's size already known (from a listing;
 *  < 0: unknown), which spares http(s)/hf sources their HEAD request. */
vf_status io_open_uri_sized(const char *uri, int64_t size, io_source **out, vf_error *err);

typedef struct io_entry {
  char *uri;     /* full URI of the object (scheme://container/key) */
  uint64_t size;
} io_entry;

typedef struct io_listing {
  io_entry *entries;
  size_t n;
} io_listing;

/*! io_list() : every object below a remote prefix (s3: ListObjectsV2 with pagination; hf: the
 *  tree API, paginated by its Link header), recursively, in the server's order (callers sort).
 *  A prefix that names one object lists that object.
 *  @return : VF_ENOTFOUND for a missing bucket/repo; VF_EUSAGE for local or http(s) URIs
 *            (plain HTTP has no listing). */
vf_status io_list(const char *uri, io_listing *out, vf_error *err);
void io_listing_free(io_listing *l);
/*! io_listing_add() : append (uri, size) to l, taking ownership of `uri` (NULL: VF_ENOMEM);
 *  `*cap` tracks the capacity (start at 0 with an empty listing). */
vf_status io_listing_add(io_listing *l, size_t *cap, char *uri, uint64_t size, vf_error *err);

/*! io_download() : copy the whole object at `uri` to the local file `dest` (written to a
 *  temporary name beside it, fsynced and renamed: a failed download never leaves a file that
 *  looks complete).  `*bytes` (may be NULL) receives the size. */
vf_status io_download(const char *uri, const char *dest, uint64_t *bytes, vf_error *err);

/*! io_download_temp_name() : the temporary name io_download() writes `dest` under in this
 *  process (malloc'd; NULL when out of memory) — for a caller that abandons a download at exit
 *  and removes what it left. */
char *io_download_temp_name(const char *dest);

/*! io_upload() : store the local file `src` at `uri` (s3: PutObject, multipart above 64 MiB;
 *  local path: atomic copy).  @return : VF_EUNSUPPORTED for hf:// and http(s)://. */
vf_status io_upload(const char *src, const char *uri, vf_error *err);

typedef struct io_remote_stats {
  uint64_t requests;       /* HTTP requests sent (all remote schemes, retries included) */
  uint64_t retries;
  uint64_t bytes_received; /* response body bytes */
  uint64_t bytes_sent;
} io_remote_stats;

/*! io_remote_get_stats() : process-wide counters since start (thread-safe). */
void io_remote_get_stats(io_remote_stats *out);

#ifdef __cplusplus
}
#endif
#endif
