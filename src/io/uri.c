/*
 * uri.c — URI parsing for io_open_uri / io_list and the corpus above (DESIGN.md "Point ids":
 * bare keys and point ids are built from these parts in src/corpus/point_id.c).  Why in io:
 * io dispatches on the scheme, and a layer may not call the corpus layer above it (issue 15).
 *
 * Why lexical path handling: the bare key of a local file is its absolute path, and the existing
 * tools build it from the path as the user wrote it, made absolute against the working directory
 * without resolving symlinks.  realpath(3) would change the key (and therefore every point id)
 * whenever a symlinked mount point is involved, so "." and ".." and repeated slashes are removed
 * textually and symlinks are never followed.
 *
 * Accepted forms:
 *   /abs/path, rel/path                 IO_URI_LOCAL  (path = normalised absolute path)
 *   file:///abs/path (file://localhost/) IO_URI_FILE  (path = normalised absolute path)
 *   s3://bucket/key                     IO_URI_S3     container = bucket
 *   hf://datasets/ns/repo[@rev]/path    IO_URI_HF_DATASET container = "ns/repo", revision = rev
 *   hf://buckets/ns/name/path           IO_URI_HF_BUCKET  container = "ns/name"
 *   http(s)://host[:port]/path          IO_URI_HTTP(S)    container = "host[:port]"
 * The remote `path` has no leading '/' and may be empty (the whole container).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vforge/io.h"

/* Normalise an absolute path lexically: collapse "//", drop ".", apply ".." (never above "/"),
 * drop a trailing '/'.  Returns a new string or NULL on allocation failure. */
static char *io_normalize_abs(const char *abs) {
  size_t n = strlen(abs);
  char *out = malloc(n + 2);
  if (!out) return NULL;
  size_t len = 0;
  out[len++] = '/';
  const char *p = abs;
  while (*p) {
    while (*p == '/')
      p++;
    if (!*p) break;
    const char *s = p;
    while (*p && *p != '/')
      p++;
    size_t c = (size_t)(p - s);
    if (c == 1 && s[0] == '.') continue;
    if (c == 2 && s[0] == '.' && s[1] == '.') {
      /* pop the last component */
      while (len > 1 && out[len - 1] != '/')
        len--;
      if (len > 1) len--; /* the '/' before it */
      continue;
    }
    if (len > 1) out[len++] = '/';
    memcpy(out + len, s, c);
    len += c;
  }
  out[len] = '\0';
  return out;
}

/* io_abs_path(): see io.h. */
vf_status io_abs_path(const char *path, char **out, vf_error *err) {
  *out = NULL;
  if (!path || !*path) return vf_error_set(err, VF_EUSAGE, "empty path");
  if (path[0] == '/') {
    *out = io_normalize_abs(path);
    return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  /* getcwd() is what os.path.abspath() uses in the tools whose ids we must reproduce */
  char *cwd = getcwd(NULL, 0);
  if (!cwd)
    return vf_error_set(err, VF_EIO, "%s: cannot determine the working directory: %s", path,
                        VF_STRERROR(errno));
  size_t a = strlen(cwd), b = strlen(path);
  char *joined = malloc(a + b + 2);
  if (!joined) {
    free(cwd);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  memcpy(joined, cwd, a);
  joined[a] = '/';
  memcpy(joined + a + 1, path, b + 1);
  free(cwd);
  *out = io_normalize_abs(joined);
  free(joined);
  return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
}

void io_uri_free(io_uri *u) {
  if (!u) return;
  free(u->uri);
  free(u->container);
  free(u->revision);
  free(u->path);
  memset(u, 0, sizeof *u);
}

static bool has_space_or_ctl(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f) return true;
  return false;
}

/* Split "a/b/rest" into the first two non-empty segments and the rest (no leading '/'). */
static bool split2(const char *s, const char **a, size_t *alen, const char **b, size_t *blen,
                   const char **rest) {
  const char *p = strchr(s, '/');
  if (!p || p == s) return false;
  *a = s;
  *alen = (size_t)(p - s);
  const char *q = p + 1;
  const char *e = strchr(q, '/');
  size_t bl = e ? (size_t)(e - q) : strlen(q);
  if (bl == 0) return false;
  *b = q;
  *blen = bl;
  *rest = e ? e + 1 : q + bl;
  return true;
}

static char *join2(const char *a, size_t alen, const char *b, size_t blen) {
  char *r = malloc(alen + blen + 2);
  if (!r) return NULL;
  memcpy(r, a, alen);
  r[alen] = '/';
  memcpy(r + alen + 1, b, blen);
  r[alen + 1 + blen] = '\0';
  return r;
}

/* container = the first clen bytes of rest; path = what follows, without its leading '/' */
static bool take_container(io_uri *out, const char *rest, size_t clen) {
  out->container = vf_strndup(rest, clen);
  const char *key = rest + clen;
  if (*key == '/') key++;
  out->path = vf_strdup(key);
  return out->container && out->path;
}

static vf_status uri_nomem(vf_error *err, const char *uri) {
  return vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
}

/* io_uri_parse(): see corpus.h.  On error *out is left zeroed. */
vf_status io_uri_parse(const char *uri, io_uri *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  if (!uri || !*uri) return vf_error_set(err, VF_EUSAGE, "empty corpus URI");
  vf_status st = VF_OK;
  const char *sep = strstr(uri, "://");
  bool has_scheme = false;
  if (sep && sep > uri && isalpha((unsigned char)uri[0])) {
    has_scheme = true;
    for (const char *c = uri; c < sep; c++)
      if (!isalnum((unsigned char)*c) && *c != '+' && *c != '-' && *c != '.') has_scheme = false;
  }
  if (!has_scheme) {
    out->scheme = IO_URI_LOCAL;
    VF_TRY(io_abs_path(uri, &out->path, err));
    out->uri = vf_strdup(out->path);
    if (!out->uri) VF_FAIL(uri_nomem(err, uri));
    return VF_OK;
  }
  size_t slen = (size_t)(sep - uri);
  const char *rest = sep + 3;
#define SCHEME_IS(lit) (slen == sizeof(lit) - 1 && strncasecmp(uri, lit, slen) == 0)
  if (SCHEME_IS("file")) {
    out->scheme = IO_URI_FILE;
    const char *p = rest;
    if (strncasecmp(p, "localhost/", 10) == 0) p += 9;
    if (p[0] != '/' || p[1] == '\0') {
      VF_FAIL(vf_error_set(err, VF_EUSAGE,
                           "%s: malformed file URI (expected file:///absolute/path)", uri));
    }
    out->path = io_normalize_abs(p);
    if (!out->path) VF_FAIL(uri_nomem(err, uri));
  } else if (SCHEME_IS("s3")) {
    out->scheme = IO_URI_S3;
    size_t blen = strcspn(rest, "/");
    if (blen == 0 || has_space_or_ctl(rest, blen)) {
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: malformed s3 URI (expected s3://bucket/key)", uri));
    }
    if (!take_container(out, rest, blen)) VF_FAIL(uri_nomem(err, uri));
  } else if (SCHEME_IS("hf")) {
    const char *p;
    if (strncmp(rest, "datasets/", 9) == 0) {
      out->scheme = IO_URI_HF_DATASET;
      p = rest + 9;
    } else if (strncmp(rest, "buckets/", 8) == 0) {
      out->scheme = IO_URI_HF_BUCKET;
      p = rest + 8;
    } else {
      VF_FAIL(vf_error_set(err, VF_EUSAGE,
                           "%s: malformed hf URI (expected hf://datasets/<ns>/<repo>/<path> or "
                           "hf://buckets/<ns>/<name>/<path>)",
                           uri));
    }
    const char *a, *b, *tail;
    size_t alen, blen;
    if (!split2(p, &a, &alen, &b, &blen, &tail) || has_space_or_ctl(a, alen) ||
        has_space_or_ctl(b, blen)) {
      VF_FAIL(vf_error_set(err, VF_EUSAGE,
                           "%s: malformed hf URI (expected a namespace and a repository name)",
                           uri));
    }
    if (out->scheme == IO_URI_HF_DATASET) {
      const char *at = memchr(b, '@', blen);
      if (at) {
        size_t rlen = blen - (size_t)(at - b) - 1;
        if (at == b || rlen == 0) {
          VF_FAIL(vf_error_set(err, VF_EUSAGE,
                               "%s: malformed hf URI (empty repository or revision)", uri));
        }
        out->revision = vf_strndup(at + 1, rlen);
        if (!out->revision) VF_FAIL(uri_nomem(err, uri));
        blen = (size_t)(at - b);
      }
    }
    out->container = join2(a, alen, b, blen);
    out->path = vf_strdup(tail);
    if (!out->container || !out->path) VF_FAIL(uri_nomem(err, uri));
  } else if (SCHEME_IS("http") || SCHEME_IS("https")) {
    out->scheme = SCHEME_IS("http") ? IO_URI_HTTP : IO_URI_HTTPS;
    size_t hlen = strcspn(rest, "/?#");
    /* an IPv6 literal is bracketed ("[::1]:8080"); its colons are not the port separator */
    const char *host_end = rest;
    if (rest[0] == '[') {
      const char *rb = memchr(rest, ']', hlen);
      host_end = rb ? rb : rest + hlen;
    }
    const char *colon = memchr(host_end, ':', hlen - (size_t)(host_end - rest));
    size_t name_len = colon ? (size_t)(colon - rest) : hlen;
    bool ok = name_len > 0 && !has_space_or_ctl(rest, hlen) && !memchr(rest, '@', hlen);
    if (rest[0] == '[')
      ok = ok && host_end < rest + hlen && host_end > rest + 1 &&
           (host_end + 1 == rest + hlen || host_end[1] == ':');
    if (ok && colon) {
      size_t plen = hlen - name_len - 1;
      unsigned long port = 0;
      ok = plen > 0 && plen <= 5;
      for (size_t i = 0; ok && i < plen; i++) {
        if (!isdigit((unsigned char)colon[1 + i]))
          ok = false;
        else
          port = port * 10 + (unsigned long)(colon[1 + i] - '0');
      }
      if (ok && (port == 0 || port > 65535)) ok = false;
    }
    if (!ok) {
      char shown[1024];
      bool creds = memchr(rest, '@', hlen) != NULL;
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: malformed URL (expected %.*s://host[:port]/path%s)",
                           vf_url_redact(uri, shown, sizeof shown), (int)slen, uri,
                           creds ? "; a user or password in a corpus URL is not supported" : ""));
    }
    if (!take_container(out, rest, hlen)) VF_FAIL(uri_nomem(err, uri));
  } else {
    VF_FAIL(vf_error_set(err, VF_EUSAGE,
                         "%s: unknown URI scheme \"%.*s\" (expected a path, file://, s3://, hf://, "
                         "http:// or https://)",
                         uri, (int)slen, uri));
  }
#undef SCHEME_IS
  out->uri = vf_strdup(uri);
  if (!out->uri) VF_FAIL(uri_nomem(err, uri));
out:
  if (st != VF_OK) io_uri_free(out);
  return st;
}
