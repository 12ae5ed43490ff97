/*
 * uri.c — corpus URIs, bare keys and point ids (DESIGN.md "Point ids").
 *
 * Why lexical path handling: the bare key of a local file is its absolute path, and the existing
 * tools build it from the path as the user wrote it, made absolute against the working directory
 * without resolving symlinks.  realpath(3) would change the key (and therefore every point id)
 * whenever a symlinked mount point is involved, so "." and ".." and repeated slashes are removed
 * textually and symlinks are never followed.
 *
 * Accepted forms:
 *   /abs/path, rel/path                 CORPUS_LOCAL  (path = normalised absolute path)
 *   file:///abs/path (file://localhost/) CORPUS_FILE  (path = normalised absolute path)
 *   s3://bucket/key                     CORPUS_S3     container = bucket
 *   hf://datasets/ns/repo[@rev]/path    CORPUS_HF_DATASET container = "ns/repo", revision = rev
 *   hf://buckets/ns/name/path           CORPUS_HF_BUCKET  container = "ns/name"
 *   http(s)://host[:port]/path          CORPUS_HTTP(S)    container = "host[:port]"
 * The remote `path` has no leading '/' and may be empty (the whole container).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* Normalise an absolute path lexically: collapse "//", drop ".", apply ".." (never above "/"),
 * drop a trailing '/'.  Returns a new string or NULL on allocation failure. */
char *corpus_normalize_abs(const char *abs) {
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

/* Absolute, normalised form of a local path (relative paths joined to the cwd). */
vf_status corpus_abs_path(const char *path, char **out, vf_error *err) {
  *out = NULL;
  if (!path || !*path) return vf_error_set(err, VF_EUSAGE, "empty path");
  if (path[0] == '/') {
    *out = corpus_normalize_abs(path);
    return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  /* getcwd() is what os.path.abspath() uses in the tools whose ids we must reproduce */
  char *cwd = getcwd(NULL, 0);
  if (!cwd)
    return vf_error_set(err, VF_EIO, "%s: cannot determine the working directory: %s", path,
                        strerror(errno));
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
  *out = corpus_normalize_abs(joined);
  free(joined);
  return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
}

void corpus_uri_free(corpus_uri *u) {
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
static bool take_container(corpus_uri *out, const char *rest, size_t clen) {
  out->container = vf_strndup(rest, clen);
  const char *key = rest + clen;
  if (*key == '/') key++;
  out->path = vf_strdup(key);
  return out->container && out->path;
}

/* corpus_uri_parse(): see corpus.h.  On error *out is left zeroed. */
vf_status corpus_uri_parse(const char *uri, corpus_uri *out, vf_error *err) {
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
    out->scheme = CORPUS_LOCAL;
    st = corpus_abs_path(uri, &out->path, err);
    if (st != VF_OK) goto fail;
    out->uri = vf_strdup(out->path);
    if (!out->uri) goto nomem;
    return VF_OK;
  }
  size_t slen = (size_t)(sep - uri);
  const char *rest = sep + 3;
#define SCHEME_IS(lit) (slen == sizeof(lit) - 1 && strncasecmp(uri, lit, slen) == 0)
  if (SCHEME_IS("file")) {
    out->scheme = CORPUS_FILE;
    const char *p = rest;
    if (strncasecmp(p, "localhost/", 10) == 0) p += 9;
    if (p[0] != '/' || p[1] == '\0') {
      st = vf_error_set(err, VF_EUSAGE, "%s: malformed file URI (expected file:///absolute/path)",
                        uri);
      goto fail;
    }
    out->path = corpus_normalize_abs(p);
    if (!out->path) goto nomem;
  } else if (SCHEME_IS("s3")) {
    out->scheme = CORPUS_S3;
    size_t blen = strcspn(rest, "/");
    if (blen == 0 || has_space_or_ctl(rest, blen)) {
      st = vf_error_set(err, VF_EUSAGE, "%s: malformed s3 URI (expected s3://bucket/key)", uri);
      goto fail;
    }
    if (!take_container(out, rest, blen)) goto nomem;
  } else if (SCHEME_IS("hf")) {
    const char *p;
    if (strncmp(rest, "datasets/", 9) == 0) {
      out->scheme = CORPUS_HF_DATASET;
      p = rest + 9;
    } else if (strncmp(rest, "buckets/", 8) == 0) {
      out->scheme = CORPUS_HF_BUCKET;
      p = rest + 8;
    } else {
      st = vf_error_set(err, VF_EUSAGE,
                        "%s: malformed hf URI (expected hf://datasets/<ns>/<repo>/<path> or "
                        "hf://buckets/<ns>/<name>/<path>)",
                        uri);
      goto fail;
    }
    const char *a, *b, *tail;
    size_t alen, blen;
    if (!split2(p, &a, &alen, &b, &blen, &tail) || has_space_or_ctl(a, alen) ||
        has_space_or_ctl(b, blen)) {
      st = vf_error_set(err, VF_EUSAGE,
                        "%s: malformed hf URI (expected a namespace and a repository name)", uri);
      goto fail;
    }
    if (out->scheme == CORPUS_HF_DATASET) {
      const char *at = memchr(b, '@', blen);
      if (at) {
        size_t rlen = blen - (size_t)(at - b) - 1;
        if (at == b || rlen == 0) {
          st = vf_error_set(err, VF_EUSAGE, "%s: malformed hf URI (empty repository or revision)",
                            uri);
          goto fail;
        }
        out->revision = vf_strndup(at + 1, rlen);
        if (!out->revision) goto nomem;
        blen = (size_t)(at - b);
      }
    }
    out->container = join2(a, alen, b, blen);
    out->path = vf_strdup(tail);
    if (!out->container || !out->path) goto nomem;
  } else if (SCHEME_IS("http") || SCHEME_IS("https")) {
    out->scheme = SCHEME_IS("http") ? CORPUS_HTTP : CORPUS_HTTPS;
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
      st = vf_error_set(err, VF_EUSAGE, "%s: malformed URL (expected %.*s://host[:port]/path%s)",
                        vf_url_redact(uri, shown, sizeof shown), (int)slen, uri,
                        creds ? "; a user or password in a corpus URL is not supported" : "");
      goto fail;
    }
    if (!take_container(out, rest, hlen)) goto nomem;
  } else {
    st = vf_error_set(err, VF_EUSAGE,
                      "%s: unknown URI scheme \"%.*s\" (expected a path, file://, s3://, hf://, "
                      "http:// or https://)",
                      uri, (int)slen, uri);
    goto fail;
  }
#undef SCHEME_IS
  out->uri = vf_strdup(uri);
  if (!out->uri) goto nomem;
  return VF_OK;
nomem:
  st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
fail:
  corpus_uri_free(out);
  return st;
}

/* Strip `id_root` (a local directory) from the absolute path `abs`. */
vf_status corpus_strip_root(const char *abs, const char *id_root, char **out, vf_error *err) {
  *out = NULL;
  char *root = NULL;
  vf_status st = corpus_abs_path(id_root, &root, err);
  if (st != VF_OK) return vf_error_prefix(err, "id_root: ");
  size_t rl = strlen(root);
  const char *rel = NULL;
  if (rl == 1) /* root "/" */
    rel = abs + 1;
  else if (strncmp(abs, root, rl) == 0 && abs[rl] == '/')
    rel = abs + rl + 1;
  if (!rel || !*rel) {
    st = vf_error_set(err, VF_ECONFIG, "%s: file is not under id_root %s", abs, root);
    free(root);
    return st;
  }
  free(root);
  *out = vf_strdup(rel);
  return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", abs);
}

/* corpus_bare_key(): see corpus.h.  id_root applies to local and file:// URIs only; remote keys
 * are always the key inside the container. */
vf_status corpus_bare_key(const char *uri, const char *id_root, char **out, vf_error *err) {
  *out = NULL;
  corpus_uri u;
  vf_status st = corpus_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  if ((u.scheme == CORPUS_LOCAL || u.scheme == CORPUS_FILE) && id_root && *id_root) {
    st = corpus_strip_root(u.path, id_root, out, err);
  } else {
    *out = u.path;
    u.path = NULL;
  }
  corpus_uri_free(&u);
  return st;
}

/* corpus_point_id(): see corpus.h. */
void corpus_point_id(const char *key, size_t key_len, uint64_t row, char out[37]) {
  char num[24];
  int nl = snprintf(num, sizeof num, ":%llu", (unsigned long long)row);
  corpus_point_id_text(key, key_len, num, (size_t)nl, out);
}

/* md5(key + suffix) as a point id; suffix is ":<decimal>". */
void corpus_point_id_text(const char *key, size_t key_len, const char *suffix, size_t suffix_len,
                          char out[37]) {
  vf_md5_ctx c;
  uint8_t d[16];
  vf_md5_init(&c);
  vf_md5_update(&c, key, key_len);
  vf_md5_update(&c, suffix, suffix_len);
  vf_md5_final(&c, d);
  corpus_uuid_format(d, out);
}

/* 16 bytes -> lowercase 8-4-4-4-12. */
void corpus_uuid_format(const uint8_t d[16], char out[37]) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[d[i] >> 4];
    out[o++] = hex[d[i] & 15];
  }
  out[o] = '\0';
}
