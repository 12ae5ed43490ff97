/*
 * s3.c — s3://bucket/key sources, listings and uploads (issue 7; io.h "remote sources").
 *
 * Addressing: with AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (S3-compatible stores: radosgw,
 * MinIO, ...) path-style <endpoint>/<bucket>/<key>; otherwise virtual-host
 * https://<bucket>.s3.<region>.amazonaws.com/<key> (path-style on s3.<region>.amazonaws.com for
 * bucket names with dots, which the TLS wildcard certificate does not cover).
 *
 * Signing: libcurl's CURLOPT_AWS_SIGV4 (through io_http_opts.aws_sigv4).  libcurl 7.88 uses the
 * URL's path and query string verbatim in the canonical request, so this file builds them in
 * canonical form: every key byte outside A-Z a-z 0-9 - _ . ~ / percent-encoded (uppercase hex,
 * S3 does not double-encode), query parameters sorted by name and encoded the same way
 * (including '/').  The payload is sent as UNSIGNED-PAYLOAD by the HTTP client.
 *
 * Errors: S3 answers a failure with an <Error><Code> document; HEAD answers carry no body, so
 * a failed HEAD is repeated as a one-byte ranged GET to learn the code.  NoSuchKey /
 * NoSuchBucket / 404 → VF_ENOTFOUND; InvalidAccessKeyId, SignatureDoesNotMatch, ExpiredToken,
 * AccessDenied, wrong region → VF_ENET with a message that says which setting to check and where
 * the credentials came from (never the keys themselves).
 *
 * Listing: ListObjectsV2 pages (continuation-token) below "<prefix>/"; a prefix that names one
 * object (HEAD) lists that object; nothing at all is VF_ENOTFOUND naming the URI.
 * VFORGE_S3_MAX_KEYS (1..1000) lowers the page size (tests prove the pagination with it).
 *
 * Upload: PutObject up to 64 MiB; above, a multipart upload with parts of 16 MiB (more when the
 * file needs over 9000 parts), read from the file one part at a time, aborted on any failure.
 * VFORGE_S3_MULTIPART_THRESHOLD and VFORGE_S3_PART_SIZE (bytes, >= 5 MiB: the S3 minimum part)
 * override both, for tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/s3_internal.h"

#define S3_MULTIPART_THRESHOLD ((uint64_t)64 << 20)
#define S3_PART_SIZE ((uint64_t)16 << 20)
#define S3_MIN_PART ((uint64_t)5 << 20)
#define S3_MAX_PARTS 9000 /* S3 allows 10000; the margin keeps the last part small */
#define S3_LIST_BODY_MAX ((size_t)64 << 20)

/* Every S3 request asks for XML: radosgw answers listings and errors in JSON when the
 * HTTP client's default "Accept: application/json" is sent. */
static const char *const S3_HDRS[] = {"Accept: application/xml", NULL};

/* ------------------------------------------------------------ encoding */

/* s3_uri_encode(): see s3_internal.h. */
vf_status s3_uri_encode(vf_buf *b, const char *s, size_t n, bool keep_slash, vf_error *err) {
  static const char hex[] = "0123456789ABCDEF";
  vf_status st = vf_buf_reserve(b, n * 3 + 1, err);
  if (st) return st;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~' || (c == '/' && keep_slash)) {
      vf_buf_putc(b, (char)c);
    } else {
      vf_buf_putc(b, '%');
      vf_buf_putc(b, hex[c >> 4]);
      vf_buf_putc(b, hex[c & 15]);
    }
  }
  b->data[b->len] = 0; /* reserved above; not counted */
  return VF_OK;
}

static int param_cmp(const void *a, const void *b) {
  const s3_param *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->value ? x->value : "", y->value ? y->value : "");
}

/* s3_query(): see s3_internal.h. */
vf_status s3_query(vf_buf *b, s3_param *params, size_t n, vf_error *err) {
  qsort(params, n, sizeof *params, param_cmp);
  vf_status st = VF_OK;
  for (size_t i = 0; i < n; i++) {
    VF_TRY(vf_buf_append(b, i == 0 ? "?" : "&", 1, err));
    VF_TRY(s3_uri_encode(b, params[i].name, strlen(params[i].name), false, err));
    VF_TRY(vf_buf_append(b, "=", 1, err));
    const char *v = params[i].value ? params[i].value : "";
    VF_TRY(s3_uri_encode(b, v, strlen(v), false, err));
  }
  VF_TRY(vf_buf_append(b, "", 1, err)); /* NUL */
  b->len--;
out:
  return st;
}

static const char *endpoint_env(void) {
  const char *e = getenv("AWS_ENDPOINT_URL_S3");
  if (!e || !*e) e = getenv("AWS_ENDPOINT_URL");
  return e && *e ? e : NULL;
}

/* s3_object_url(): see s3_internal.h. */
char *s3_object_url(const char *bucket, const char *key, const char *region, vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_URL);
  const char *ep = endpoint_env();
  vf_status st = VF_OK;
  if (ep) {
    size_t el = strlen(ep);
    while (el > 0 && ep[el - 1] == '/')
      el--;
    VF_TRY(vf_buf_printf(&b, err, "%.*s/", (int)el, ep));
    VF_TRY(s3_uri_encode(&b, bucket, strlen(bucket), false, err));
    if (*key) VF_TRY(vf_buf_append(&b, "/", 1, err));
  } else if (strchr(bucket, '.')) {
    VF_TRY(vf_buf_printf(&b, err, "https://s3.%s.amazonaws.com/", region));
    VF_TRY(s3_uri_encode(&b, bucket, strlen(bucket), false, err));
    if (*key) VF_TRY(vf_buf_append(&b, "/", 1, err));
  } else {
    VF_TRY(vf_buf_printf(&b, err, "https://%s.s3.%s.amazonaws.com/", bucket, region));
  }
  VF_TRY(s3_uri_encode(&b, key, strlen(key), true, err));
  VF_TRY(vf_buf_append(&b, "", 1, err));
out:
  if (st != VF_OK) {
    vf_buf_free(&b);
    return NULL;
  }
  size_t n;
  return (char *)vf_buf_take(&b, &n);
}

static vf_status check_bucket(const char *uri, const char *bucket, vf_error *err) {
  size_t n = strlen(bucket);
  bool ok = n >= 3 && n <= 63;
  for (size_t i = 0; ok && i < n; i++) {
    char c = bucket[i];
    ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
  }
  if (!ok)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: '%s' is not a valid S3 bucket name (3-63 characters: letters, digits, "
                        "'.', '-')",
                        uri, bucket);
  return VF_OK;
}

static void fill_opts(const io_s3_creds *c, io_http_opts *o) {
  io_remote_http_opts(o);
  o->connect_timeout_s = 10;
  o->timeout_s = 300; /* a 64 MiB part on a slow link */
  if (c->keys.key_id) {
    o->aws_sigv4 = c->sigv4;
    o->aws_key_id = c->keys.key_id;
    o->aws_secret = c->keys.secret;
    o->aws_session_token = c->keys.token;
  }
}

/* io_s3_resolve(): see remote_internal.h. */
vf_status io_s3_resolve(const char *bucket, const char *key, io_s3_creds **holder,
                        io_http_opts *opts, char **url, vf_error *err) {
  *holder = NULL;
  *url = NULL;
  memset(opts, 0, sizeof *opts);
  vf_status st = check_bucket(bucket, bucket, err);
  if (st) return st;
  io_s3_creds *c = vf_calloc(1, sizeof *c);
  if (!c) return vf_error_set(err, VF_ENOMEM, "out of memory");
  VF_TRY(s3_creds_get(c, err));
  *url = s3_object_url(bucket, key ? key : "", c->region, err);
  if (!*url) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  fill_opts(c, opts);
  *holder = c;
out:
  if (st != VF_OK) io_s3_creds_free(c);
  return st;
}

/* --------------------------------------------------------------- errors */

/* The error for a failed S3 request: `op` names the operation, `body` holds the error document
 * (may be empty).  `http_err` is the HTTP client's own message (used when nothing better). */
static vf_status s3_error(vf_error *err, const char *uri, const char *bucket, const char *op,
                          const io_s3_creds *c, long status, const vf_buf *body,
                          const vf_error *http_err) {
  char code[80], msg[240], region[64];
  bool has = body && s3_xml_error((const char *)body->data, body->len, code, sizeof code, msg,
                                  sizeof msg, region, sizeof region);
  const char *src = c->keys.key_id ? c->source : "none (unsigned requests)";
  if (status == 0)
    return vf_error_set(err, VF_ENET, "%s: %s failed: %s", uri, op,
                        http_err && http_err->msg[0] ? http_err->msg : "no response");
  if (!has) {
    code[0] = 0;
    msg[0] = 0;
  }
  if (!strcmp(code, "NoSuchKey") || (status == 404 && !has))
    return vf_error_set(err, VF_ENOTFOUND, "%s: no such object (%s)", uri, has ? code : "HTTP 404");
  if (!strcmp(code, "NoSuchBucket"))
    return vf_error_set(err, VF_ENOTFOUND, "%s: no such bucket '%s' (NoSuchBucket)", uri, bucket);
  if (!strcmp(code, "InvalidAccessKeyId"))
    return vf_error_set(err, VF_ENET,
                        "%s: access denied (InvalidAccessKeyId): the server does not know the "
                        "access key id from %s; check AWS_ACCESS_KEY_ID (or the profile's "
                        "aws_access_key_id) and the endpoint (AWS_ENDPOINT_URL)",
                        uri, src);
  if (!strcmp(code, "SignatureDoesNotMatch"))
    return vf_error_set(err, VF_ENET,
                        "%s: access denied (SignatureDoesNotMatch): the secret key from %s does "
                        "not match its access key id; check AWS_SECRET_ACCESS_KEY (or the "
                        "profile's aws_secret_access_key)",
                        uri, src);
  if (!strcmp(code, "ExpiredToken") || !strcmp(code, "TokenRefreshRequired"))
    return vf_error_set(err, VF_ENET,
                        "%s: access denied (%s): the temporary credentials from %s have expired; "
                        "refresh AWS_SESSION_TOKEN / the profile",
                        uri, code, src);
  if (!strcmp(code, "InvalidToken"))
    return vf_error_set(err, VF_ENET,
                        "%s: access denied (InvalidToken): the session token from %s is not "
                        "valid; check AWS_SESSION_TOKEN",
                        uri, src);
  if (!strcmp(code, "RequestTimeTooSkewed"))
    return vf_error_set(err, VF_ENET,
                        "%s: request refused (RequestTimeTooSkewed): this machine's clock differs "
                        "from the server's by more than 15 minutes",
                        uri);
  if (!strcmp(code, "AuthorizationHeaderMalformed") || !strcmp(code, "PermanentRedirect") ||
      !strcmp(code, "IllegalLocationConstraintException") || status == 301)
    return vf_error_set(err, VF_ENET,
                        "%s: bucket '%s' is not in region %s (%s%s%s); set AWS_REGION%s%s", uri,
                        bucket, c->region, has ? code : "HTTP 301", region[0] ? ", it is in " : "",
                        region, region[0] ? "=" : "", region);
  if ((!strcmp(code, "AccessDenied") || status == 403) && !c->keys.key_id)
    return vf_error_set(err, VF_ENET,
                        "%s: access denied (%s) to %s for unsigned requests "
                        "(AWS_NO_SIGN_REQUEST=true): the bucket is not public; unset "
                        "AWS_NO_SIGN_REQUEST to use credentials",
                        uri, has ? code : "HTTP 403", op);
  if (!strcmp(code, "AccessDenied") || !strcmp(code, "AllAccessDisabled") || status == 403)
    return vf_error_set(err, VF_ENET, "%s: access denied (%s) to %s with credentials from %s%s%s",
                        uri, has ? code : "HTTP 403", op, src, msg[0] ? ": " : "", msg);
  if (has)
    return vf_error_set(err, VF_ENET, "%s: %s failed: HTTP %ld %s: %s", uri, op, status, code, msg);
  return vf_error_set(err, VF_ENET, "%s: %s failed: HTTP %ld", uri, op, status);
}

/* One request on `h` with the error mapping above.  404 is an error unless allow_404. */
static vf_status s3_call(io_http *h, io_http_req *rq, io_http_resp *rs, const char *uri,
                         const char *bucket, const char *op, const io_s3_creds *c, vf_error *err) {
  vf_error he;
  vf_error_clear(&he);
  vf_status st = io_http_request(h, rq, rs, &he);
  if (!st) return VF_OK; /* a 404 with allow_404 included */
  if (st == VF_ENOMEM) return vf_error_set(err, VF_ENOMEM, "%s", he.msg);
  if (rs->status == 0 && st != VF_ENET) return vf_error_set(err, st, "%s: %s", uri, he.msg);
  return s3_error(err, uri, bucket, op, c, rs->status, &rs->body, &he);
}

/* A one-byte GET of url into rs: a HEAD's answer has no body, and this one's error document
 * names the cause (a failed HEAD) or tells a missing key from a missing bucket (a 404). */
static vf_status s3_probe_get(io_http *h, const char *url, io_http_resp *rs) {
  io_http_req g = {.method = "GET",
                   .path = "",
                   .headers = S3_HDRS,
                   .url = url,
                   .range = "0-0",
                   .allow_404 = true};
  vf_error ignored;
  return io_http_request(h, &g, rs, &ignored);
}

/* HEAD the object at url: *size, or *found = false for a 404.  Failures other than 404 are
 * repeated as a one-byte GET so the error document names the cause. */
static vf_status s3_head(io_http *h, const char *url, const char *uri, const char *bucket,
                         const io_s3_creds *c, bool *found, uint64_t *size, vf_error *err) {
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, (size_t)1 << 20);
  io_http_req rq = {
      .method = "GET", .path = "", .headers = S3_HDRS, .url = url, .head = true, .allow_404 = true};
  vf_error he;
  vf_error_clear(&he);
  *found = false;
  *size = 0;
  vf_status st = io_http_request(h, &rq, &rs, &he);
  if (st != VF_OK) {
    if (rs.status >= 400) {
      long hs = rs.status;
      (void)s3_probe_get(h, url, &rs);
      if (rs.status < 300) rs.status = hs; /* the GET passed: keep the HEAD's status */
    }
    VF_FAIL(s3_error(err, uri, bucket, "HEAD", c, rs.status, &rs.body, &he));
  }
  if (rs.status == 404) {
    /* the key, or the whole bucket? */
    if (s3_probe_get(h, url, &rs) == VF_OK && rs.status == 404) {
      char code[80];
      if (s3_xml_error((const char *)rs.body.data, rs.body.len, code, sizeof code, NULL, 0, NULL,
                       0) &&
          strcmp(code, "NoSuchBucket") == 0)
        st = s3_error(err, uri, bucket, "HEAD", c, 404, &rs.body, NULL);
    }
    goto out;
  }
  if (rs.content_length < 0)
    VF_FAIL(vf_error_set(err, VF_ENET, "%s: HEAD answered without a Content-Length", uri));
  *found = true;
  *size = (uint64_t)rs.content_length;
out:
  io_http_resp_free(&rs);
  return st;
}

/* ---------------------------------------------------------------- open */

/* io_s3_open(): see remote_internal.h. */
vf_status io_s3_open(const char *uri, const char *bucket, const char *key, int64_t known_size,
                     io_source **out, vf_error *err) {
  *out = NULL;
  if (!key || !*key || key[strlen(key) - 1] == '/')
    return vf_error_set(err, VF_EUSAGE, "%s: names no object (expected s3://bucket/key)", uri);
  vf_status st = check_bucket(uri, bucket, err);
  if (st) return st;
  io_s3_creds *c = NULL;
  io_http_opts o;
  char *url = NULL;
  st = io_s3_resolve(bucket, key, &c, &o, &url, err);
  if (st) return vf_error_prefix(err, "%s: ", uri);
  /* the size from a listing saves the HEAD (one request per file); without it the HEAD also
   * turns a missing key or bad credentials into a clear error before any read */
  uint64_t size = known_size >= 0 ? (uint64_t)known_size : 0;
  io_http *h = NULL;
  if (known_size < 0) {
    VF_TRY(io_http_open(NULL, &o, &h, err));
    bool found = false;
    st = s3_head(h, url, uri, bucket, c, &found, &size, err);
    io_http_close(h);
    h = NULL;
    VF_TRY(st);
    if (!found) VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: no such object (NoSuchKey)", uri));
  }
  VF_TRY(io_httpsrc_open(url, uri, &o, (int64_t)size, out, err));
out:
  io_http_close(h);
  free(url);
  io_s3_creds_free(c);
  return st;
}

/* ---------------------------------------------------------------- list */

static int env_max_keys(void) {
  const char *v = getenv("VFORGE_S3_MAX_KEYS");
  if (!v || !*v) return 0;
  char *e;
  long x = strtol(v, &e, 10);
  if (*e || x < 1 || x > 1000) {
    vf_log(VF_LOG_WARN, "VFORGE_S3_MAX_KEYS=%s is not in [1, 1000]; ignored", v);
    return 0;
  }
  return (int)x;
}

static char *entry_uri(const char *bucket, const char *key) {
  size_t n = strlen(bucket) + strlen(key) + 7;
  char *u = vf_malloc(n);
  if (u) snprintf(u, n, "s3://%s/%s", bucket, key);
  return u;
}

/* io_s3_list(): see remote_internal.h. */
vf_status io_s3_list(const char *uri, const char *bucket, const char *prefix, io_listing *out,
                     vf_error *err) {
  memset(out, 0, sizeof *out);
  vf_status st = check_bucket(uri, bucket, err);
  if (st) return st;
  io_s3_creds *c = NULL;
  io_http_opts o;
  char *burl = NULL;
  st = io_s3_resolve(bucket, "", &c, &o, &burl, err);
  if (st) return vf_error_prefix(err, "%s: ", uri);
  size_t plen = strlen(prefix);
  bool dir = plen == 0 || prefix[plen - 1] == '/';
  char *lp = vf_malloc(plen + 2); /* the listing prefix: "<prefix>/" */
  if (lp) snprintf(lp, plen + 2, "%s%s", prefix, dir ? "" : "/");
  io_http *h = NULL;
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, S3_LIST_BODY_MAX);
  vf_buf url;
  VF_BUF_INIT(&url, VF_BUF_MAX_URL);
  char *token = NULL;
  size_t cap = 0;
  if (!lp) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(io_http_open(NULL, &o, &h, err));
  int max_keys = env_max_keys();
  char mk[16];
  snprintf(mk, sizeof mk, "%d", max_keys);
  uint64_t pages = 0;
  for (;;) {
    s3_param params[4];
    size_t np = 0;
    params[np++] = (s3_param){"list-type", "2"};
    if (*lp) params[np++] = (s3_param){"prefix", lp};
    if (max_keys) params[np++] = (s3_param){"max-keys", mk};
    if (token) params[np++] = (s3_param){"continuation-token", token};
    vf_buf_reset(&url);
    VF_TRY(vf_buf_append(&url, burl, strlen(burl), err));
    VF_TRY(s3_query(&url, params, np, err));
    io_http_req rq = {
        .method = "GET", .path = "", .headers = S3_HDRS, .url = (const char *)url.data};
    VF_TRY(s3_call(h, &rq, &rs, uri, bucket, "ListObjectsV2", c, err));
    s3_list_page pg;
    st = s3_xml_list((const char *)rs.body.data, rs.body.len, &pg, err);
    if (st) {
      vf_error_prefix(err, "%s: ListObjectsV2 page %" PRIu64 ": ", uri, pages + 1);
      goto out;
    }
    pages++;
    for (size_t i = 0; i < pg.n; i++) {
      st = io_listing_add(out, &cap, entry_uri(bucket, pg.objects[i].key), pg.objects[i].size, err);
      if (st) break; /* the page is freed below first */
    }
    bool more = pg.truncated;
    if (more && token && strcmp(token, pg.next_token) == 0)
      st = vf_error_set(err, VF_ENET,
                        "%s: ListObjectsV2 returned the same continuation token twice", uri);
    free(token);
    token = pg.next_token;
    pg.next_token = NULL;
    s3_list_page_free(&pg);
    VF_TRY(st);
    if (!more) break;
  }
  vf_log(VF_LOG_DEBUG, "%s: %zu objects in %" PRIu64 " ListObjectsV2 page%s", uri, out->n, pages,
         pages == 1 ? "" : "s");
  if (out->n == 0 && !dir) { /* a single object? */
    char *ourl = s3_object_url(bucket, prefix, c->region, err);
    bool found = false;
    uint64_t size = 0;
    st = ourl ? s3_head(h, ourl, uri, bucket, c, &found, &size, err) : VF_ENOMEM;
    if (st != VF_OK) {
      free(ourl);
      goto out;
    }
    if (found) st = io_listing_add(out, &cap, entry_uri(bucket, prefix), size, err);
    free(ourl);
    VF_TRY(st);
  }
  if (out->n == 0) {
    if (dir)
      VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: no objects under this prefix", uri));
    else
      VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: no such object (NoSuchKey), nor objects below "
                           "it", uri));
  }
out:
  free(token);
  vf_buf_free(&url);
  io_http_resp_free(&rs);
  io_http_close(h);
  free(lp);
  free(burl);
  io_s3_creds_free(c);
  if (st) io_listing_free(out);
  return st;
}

/* -------------------------------------------------------------- upload */

static uint64_t env_bytes(const char *name, uint64_t dflt, uint64_t lo) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *e;
  unsigned long long x = strtoull(v, &e, 10);
  if (*e || x < lo) {
    vf_log(VF_LOG_WARN, "%s=%s is not a byte count >= %" PRIu64 "; ignored", name, v, lo);
    return dflt;
  }
  return (uint64_t)x;
}

static vf_status read_exact(int fd, uint64_t off, uint8_t *dst, size_t n, const char *path,
                            vf_error *err) {
  while (n > 0) {
    ssize_t r = pread(fd, dst, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return vf_error_set(err, VF_EIO, "%s: read failed: %s", path, VF_STRERROR(errno));
    if (r == 0) return vf_error_set(err, VF_EIO, "%s: the file shrank while being uploaded", path);
    dst += r;
    off += (uint64_t)r;
    n -= (size_t)r;
  }
  return VF_OK;
}

static vf_status url_with_query(vf_buf *b, const char *base, s3_param *p, size_t n, vf_error *err) {
  vf_buf_reset(b);
  vf_status st = vf_buf_append(b, base, strlen(base), err);
  return st ? st : s3_query(b, p, n, err);
}

static vf_status xml_escape_append(vf_buf *b, const char *s, vf_error *err) {
  vf_status st = VF_OK;
  for (; *s; s++) {
    switch (*s) {
    case '&': st = vf_buf_append(b, "&amp;", 5, err); break;
    case '<': st = vf_buf_append(b, "&lt;", 4, err); break;
    case '>': st = vf_buf_append(b, "&gt;", 4, err); break;
    case '"': st = vf_buf_append(b, "&quot;", 6, err); break;
    default: st = vf_buf_append(b, s, 1, err);
    }
    VF_TRY(st);
  }
out:
  return st;
}

/* CreateMultipartUpload: *upload_id. */
static vf_status multipart_create(io_http *h, const char *url, vf_buf *qurl, io_http_resp *rs,
                                  const char *uri, const char *bucket, const io_s3_creds *c,
                                  char **upload_id, vf_error *err) {
  s3_param p[] = {{"uploads", ""}};
  vf_status st = VF_OK;
  VF_TRY(url_with_query(qurl, url, p, 1, err));
  io_http_req rq = {.method = "POST",
                    .path = "",
                    .headers = S3_HDRS,
                    .url = (const char *)qurl->data,
                    .body = "",
                    .body_len = 0,
                    .content_type = "application/octet-stream"};
  VF_TRY(s3_call(h, &rq, rs, uri, bucket, "CreateMultipartUpload", c, err));
  st = s3_xml_upload_id((const char *)rs->body.data, rs->body.len, upload_id, err);
  if (st) vf_error_prefix(err, "%s: ", uri);
out:
  return st;
}

static vf_status multipart(io_http *h, const char *url, int fd, uint64_t size, const char *src,
                           const char *uri, const char *bucket, const io_s3_creds *c,
                           vf_error *err) {
  uint64_t part = env_bytes("VFORGE_S3_PART_SIZE", S3_PART_SIZE, S3_MIN_PART);
  if ((size + part - 1) / part > S3_MAX_PARTS) {
    part = (size + S3_MAX_PARTS - 1) / S3_MAX_PARTS;
    part = (part + ((1u << 20) - 1)) & ~(uint64_t)((1u << 20) - 1);
  }
  uint64_t nparts = (size + part - 1) / part;
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, (size_t)1 << 20);
  vf_buf qurl, xml;
  VF_BUF_INIT(&qurl, VF_BUF_MAX_URL);
  VF_BUF_INIT(&xml, VF_BUF_MAX_HTTP_BODY);
  char *upload_id = NULL;
  char **etags = vf_calloc(nparts, sizeof *etags);
  uint8_t *buf = vf_malloc((size_t)part);
  vf_status st = etags && buf
                     ? multipart_create(h, url, &qurl, &rs, uri, bucket, c, &upload_id, err)
                     : vf_error_set(err, VF_ENOMEM, "%s: out of memory for a %" PRIu64 "-byte part",
                                    uri, part);
  /* logged also when the create failed, as before */
  vf_log(VF_LOG_INFO, "%s: multipart upload of %" PRIu64 " bytes in %" PRIu64 " parts of %" PRIu64,
         uri, size, nparts, part);
  VF_TRY(st);
  for (uint64_t i = 0; i < nparts; i++) {
    uint64_t off = i * part;
    size_t n = (size_t)(size - off < part ? size - off : part);
    VF_TRY(read_exact(fd, off, buf, n, src, err));
    char pn[24];
    snprintf(pn, sizeof pn, "%" PRIu64, i + 1);
    s3_param p[] = {{"partNumber", pn}, {"uploadId", upload_id}};
    VF_TRY(url_with_query(&qurl, url, p, 2, err));
    io_http_req rq = {.method = "PUT",
                      .path = "",
                      .headers = S3_HDRS,
                      .url = (const char *)qurl.data,
                      .body = buf,
                      .body_len = n,
                      .content_type = "application/octet-stream"};
    VF_TRY(s3_call(h, &rq, &rs, uri, bucket, "UploadPart", c, err));
    if (!rs.etag || !*rs.etag)
      VF_FAIL(vf_error_set(err, VF_ENET, "%s: UploadPart %" PRIu64 " answered without an ETag", uri,
                           i + 1));
    else if (!(etags[i] = vf_strdup(rs.etag)))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  VF_TRY(vf_buf_printf(
      &xml, err, "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"));
  for (uint64_t i = 0; i < nparts; i++) {
    VF_TRY(vf_buf_printf(&xml, err, "<Part><PartNumber>%" PRIu64 "</PartNumber><ETag>", i + 1));
    VF_TRY(xml_escape_append(&xml, etags[i], err));
    VF_TRY(vf_buf_printf(&xml, err, "</ETag></Part>"));
  }
  VF_TRY(vf_buf_printf(&xml, err, "</CompleteMultipartUpload>"));
  {
    s3_param p[] = {{"uploadId", upload_id}};
    VF_TRY(url_with_query(&qurl, url, p, 1, err));
    io_http_req rq = {.method = "POST",
                      .path = "",
                      .headers = S3_HDRS,
                      .url = (const char *)qurl.data,
                      .body = xml.data,
                      .body_len = xml.len,
                      .content_type = "application/xml"};
    VF_TRY(s3_call(h, &rq, &rs, uri, bucket, "CompleteMultipartUpload", c, err));
    char code[80];
    if (!s3_xml_complete_ok((const char *)rs.body.data, rs.body.len, code, sizeof code))
      VF_FAIL(vf_error_set(err, VF_ENET, "%s: CompleteMultipartUpload failed (%s)", uri, code));
  }
out:
  if (st != VF_OK && upload_id) { /* abort: no orphaned parts billed forever */
    s3_param p[] = {{"uploadId", upload_id}};
    vf_error e2;
    if (url_with_query(&qurl, url, p, 1, &e2) == VF_OK) {
      io_http_req rq = {
          .method = "DELETE", .path = "", .headers = S3_HDRS, .url = (const char *)qurl.data};
      if (s3_call(h, &rq, &rs, uri, bucket, "AbortMultipartUpload", c, &e2) != VF_OK)
        vf_log(VF_LOG_WARN, "%s: could not abort the multipart upload: %s", uri, e2.msg);
    }
  }
  for (uint64_t i = 0; etags && i < nparts; i++)
    free(etags[i]);
  free(etags);
  free(buf);
  free(upload_id);
  vf_buf_free(&qurl);
  vf_buf_free(&xml);
  io_http_resp_free(&rs);
  return st;
}

/* io_s3_upload(): see remote_internal.h. */
vf_status io_s3_upload(const char *src, const char *uri, const char *bucket, const char *key,
                       vf_error *err) {
  if (!key || !*key || key[strlen(key) - 1] == '/')
    return vf_error_set(err, VF_EUSAGE,
                        "%s: names no object to upload to (expected s3://bucket/key)", uri);
  vf_status st = check_bucket(uri, bucket, err);
  if (st) return st;
  int fd = open(src, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: cannot open: %s", src,
                        VF_STRERROR(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return vf_error_set(err, VF_EIO, "%s: not a regular file", src);
  }
  uint64_t size = (uint64_t)sb.st_size;
  io_s3_creds *c = NULL;
  io_http_opts o;
  char *url = NULL;
  st = io_s3_resolve(bucket, key, &c, &o, &url, err);
  if (st) {
    close(fd);
    return vf_error_prefix(err, "%s: ", uri);
  }
  io_http *h = NULL;
  uint8_t *buf = NULL; /* the whole file, for a single PutObject */
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, (size_t)1 << 20);
  st = io_http_open(NULL, &o, &h, err);
  uint64_t threshold =
      env_bytes("VFORGE_S3_MULTIPART_THRESHOLD", S3_MULTIPART_THRESHOLD, S3_MIN_PART);
  VF_TRY(st);
  if (size > threshold) {
    VF_TRY(multipart(h, url, fd, size, src, uri, bucket, c, err));
  } else {
    buf = vf_malloc(size ? (size_t)size : 1);
    if (!buf) VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", src));
    VF_TRY(read_exact(fd, 0, buf, (size_t)size, src, err));
    io_http_req rq = {.method = "PUT",
                      .path = "",
                      .headers = S3_HDRS,
                      .url = url,
                      .body = buf,
                      .body_len = (size_t)size,
                      .content_type = "application/octet-stream"};
    VF_TRY(s3_call(h, &rq, &rs, uri, bucket, "PutObject", c, err));
  }
  vf_log(VF_LOG_DEBUG, "%s: uploaded %" PRIu64 " bytes from %s", uri, size, src);
out:
  io_http_resp_free(&rs);
  free(buf);
  io_http_close(h);
  close(fd);
  free(url);
  io_s3_creds_free(c);
  return st;
}
