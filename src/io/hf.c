/*
 * hf.c — hf://datasets/<ns>/<repo>[@rev]/<path> and hf://buckets/<ns>/<name>/<path> (issue 7),
 * on the Hub's public HTTP routes (the ones huggingface_hub's HfApi uses):
 *
 *   dataset file   GET  {endpoint}/datasets/{ns}/{repo}/resolve/{rev}/{path}
 *   dataset tree   GET  {endpoint}/api/datasets/{ns}/{repo}/tree/{rev}[/{path}]?recursive=true
 *   bucket file    GET  {endpoint}/buckets/{ns}/{name}/resolve/{path}
 *   bucket tree    GET  {endpoint}/api/buckets/{ns}/{name}/tree[/{prefix}]?recursive=true
 *
 * rev defaults to "main" and is percent-encoded as one segment ("refs/convert/parquet" ->
 * "refs%2Fconvert%2Fparquet", as the Hub expects); dataset paths are encoded segment by segment
 * ('/' kept); the bucket prefix is encoded as one segment (huggingface_hub: quote(prefix,
 * safe="")).  Resolve URLs usually answer with a redirect to a CDN with a pre-signed URL: the
 * client follows it with the Range header kept, and curl drops the Authorization header on
 * the way to the other host.
 *
 * Environment: HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (sent as "Authorization:
 * Bearer"; never logged or quoted: messages carry URLs only, and URLs never carry the token).
 *
 * Listing pagination: each page's "Link: <url>; rel=\"next\"" header names the next page.  A
 * next link must stay on the endpoint's origin (the token goes with every page) and must not
 * repeat the page just read; at most HF_MAX_PAGES pages.  A prefix the tree API does not know
 * (404) but that names one file lists that file (HEAD on its resolve URL).
 */
#include <stdio.h>
#include <stdlib.h>

#include "io/remote_internal.h"

#define HF_DEFAULT_ENDPOINT "https://huggingface.co"
#define HF_MAX_PAGES 100000

/* Append s percent-encoded to b; '/' kept when keep_slash. */
static vf_status hf_enc(vf_buf *b, const char *s, bool keep_slash, vf_error *err) {
  static const char hx[] = "0123456789ABCDEF";
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '-' || *c == '_' || *c == '.' || *c == '~' || (keep_slash && *c == '/');
    char t[3] = {'%', hx[*c >> 4], hx[*c & 15]};
    vf_status st = plain ? vf_buf_append(b, c, 1, err) : vf_buf_append(b, t, 3, err);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

static vf_status hf_lit(vf_buf *b, const char *s, vf_error *err) {
  return vf_buf_append(b, s, strlen(s), err);
}

static int hf_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* s with %XX sequences decoded (others kept as they are); NULL when out of memory. */
static char *hf_pct_decode(const char *s) {
  char *r = vf_strdup(s), *o = r;
  if (!r) return NULL;
  for (const char *p = s; *p; p++) {
    int h, l;
    if (p[0] == '%' && (h = hf_hex(p[1])) >= 0 && (l = hf_hex(p[2])) >= 0 && (h || l)) {
      *o++ = (char)(h * 16 + l);
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = 0;
  return r;
}

/* The endpoint without trailing '/', from HF_ENDPOINT or the default (caller frees). */
static char *hf_endpoint(void) {
  const char *e = getenv("HF_ENDPOINT");
  if (!e || !*e) e = HF_DEFAULT_ENDPOINT;
  char *r = vf_strdup(e);
  if (!r) return NULL;
  size_t n = strlen(r);
  while (n > 0 && r[n - 1] == '/')
    r[--n] = 0;
  return r;
}

/* The client options: bearer token, redirects, CA bundle, retries (strings borrowed from the
 * environment / remote options; io_httpsrc_open copies them). */
static void hf_http_opts(io_http_opts *ho) {
  io_remote_http_opts(ho);
  ho->follow_redirects = true;
  const char *tok = getenv("HF_TOKEN");
  if (tok && *tok) ho->bearer_token = tok;
}

/* A 401/403 from the Hub: say what to do about it (the token itself is never quoted). */
static vf_status hf_auth_hint(vf_status st, vf_error *err) {
  if (st != VF_ENET || !err || (!strstr(err->msg, "HTTP 401") && !strstr(err->msg, "HTTP 403")))
    return st;
  const char *tok = getenv("HF_TOKEN");
  size_t l = strlen(err->msg);
  if (l + 1 < sizeof err->msg)
    snprintf(err->msg + l, sizeof err->msg - l, " (%s)",
             tok && *tok ? "HF_TOKEN was refused: check that it is valid and has access"
                         : "a private or gated repository? set HF_TOKEN");
  return st;
}

/* io_hf_url(): see remote_internal.h. */
vf_status io_hf_url(const char *endpoint, const char *kind, const char *repo, const char *rev,
                    const char *path, bool tree, char **out, vf_error *err) {
  *out = NULL;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_URL);
  bool ds = strcmp(kind, "datasets") == 0;
  char *r = NULL; /* the decoded revision */
  vf_status st = VF_OK;
  VF_TRY(hf_lit(&b, endpoint, err));
  if (tree) VF_TRY(hf_lit(&b, "/api", err));
  VF_TRY(hf_lit(&b, ds ? "/datasets/" : "/buckets/", err));
  VF_TRY(hf_enc(&b, repo, true, err));
  VF_TRY(hf_lit(&b, tree ? "/tree" : "/resolve", err));
  if (ds) {
    /* "@refs%2Fconvert%2Fparquet" (the encoded form huggingface_hub's hf:// paths use, since a
     * raw '/' would end the revision) names the revision refs/convert/parquet: decode, then
     * encode it as one segment */
    r = hf_pct_decode(rev && *rev ? rev : "main");
    if (!r) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(hf_lit(&b, "/", err));
    VF_TRY(hf_enc(&b, r, false, err));
  }
  if (path && *path) {
    VF_TRY(hf_lit(&b, "/", err));
    VF_TRY(hf_enc(&b, path, ds || !tree, err));
  }
  if (tree) VF_TRY(hf_lit(&b, "?recursive=true", err));
  VF_TRY(vf_buf_append(&b, "", 1, err));
  *out = (char *)b.data;
out:
  free(r);
  if (st != VF_OK) vf_buf_free(&b);
  return st;
}

/* io_hf_open(): see remote_internal.h. */
vf_status io_hf_open(const char *uri, const char *kind, const char *repo, const char *rev,
                     const char *path, int64_t size, io_source **out, vf_error *err) {
  *out = NULL;
  if (!path || !*path)
    return vf_error_set(err, VF_EUSAGE, "%s: names a repository, not a file", uri);
  char *ep = hf_endpoint(), *url = NULL;
  if (!ep) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
  vf_status st = VF_OK;
  VF_TRY(io_hf_url(ep, kind, repo, rev, path, false, &url, err));
  io_http_opts ho;
  hf_http_opts(&ho);
  VF_TRY(hf_auth_hint(io_httpsrc_open(url, uri, &ho, size, out, err), err));
out:
  free(url);
  free(ep);
  return st;
}

/* scheme://host[:port] of an absolute URL: its length, or 0. */
static size_t hf_origin_len(const char *u) {
  const char *p = strstr(u, "://");
  if (!p) return 0;
  p += 3;
  return (size_t)(p - u) + strcspn(p, "/?#");
}

/* The hf:// URI of a listed file: the given repo part (with @rev) + '/' + path. */
static char *hf_entry_uri(const char *kind, const char *repo, const char *rev, const char *path) {
  size_t n = 16 + strlen(kind) + strlen(repo) + (rev ? strlen(rev) + 1 : 0) + strlen(path);
  char *r = malloc(n);
  if (!r) return NULL;
  snprintf(r, n, "hf://%s/%s%s%s/%s", kind, repo, rev ? "@" : "", rev ? rev : "", path);
  return r;
}

/* io_hf_list(): see remote_internal.h. */
vf_status io_hf_list(const char *uri, const char *kind, const char *repo, const char *rev,
                     const char *path, io_listing *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  char *ep = hf_endpoint(), *url = NULL, *prev = NULL;
  if (!ep) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
  char *dir = NULL; /* path without trailing '/' */
  vf_status st;
  dir = vf_strdup(path ? path : "");
  if (!dir) {
    free(ep);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
  }
  for (size_t dl = strlen(dir); dl > 0 && dir[dl - 1] == '/';)
    dir[--dl] = 0;
  st = io_hf_url(ep, kind, repo, rev, dir, true, &url, err);
  io_http *h = NULL;
  io_http_resp rs = {0};
  VF_BUF_INIT(&rs.body, VF_BUF_MAX_HTTP_BODY);
  io_http_opts ho;
  hf_http_opts(&ho);
  io_hf_tree t = {0}; /* one page, freed each page and at out: */
  VF_TRY(st);
  VF_TRY(io_http_open(NULL, &ho, &h, err));
  size_t cap = 0, origin = hf_origin_len(ep);
  for (int page = 0; url; page++) { /* every failure below leaves the loop */
    if (page >= HF_MAX_PAGES) {
      st = vf_error_set(err, VF_EUNSUPPORTED, "%s: the listing has more than %d pages", uri,
                        HF_MAX_PAGES);
      break;
    }
    io_http_req rq = {0};
    rq.method = "GET";
    rq.url = url;
    rq.allow_404 = true;
    st = io_http_request(h, &rq, &rs, err);
    if (st != VF_OK) {
      vf_error_prefix(err, "%s: listing: ", uri);
      hf_auth_hint(st, err);
      break;
    }
    if (rs.status == 404) {
      if (page == 0 && dir[0]) { /* maybe a single file */
        io_source *src = NULL;
        vf_error ferr;
        vf_status fs = io_hf_open(uri, kind, repo, rev, dir, -1, &src, &ferr);
        if (fs == VF_OK) {
          uint64_t size = src->size;
          io_close(src);
          st = io_listing_add(out, &cap, hf_entry_uri(kind, repo, rev, dir), size, err);
          break;
        }
        if (fs != VF_ENOTFOUND) {
          if (err) *err = ferr;
          st = fs;
          break;
        }
      }
      st = vf_error_set(err, VF_ENOTFOUND, "%s: not found (the %s tree API answered 404 for "
                        "%s/%s%s%s)", uri, kind, repo, rev ? rev : "", rev && dir[0] ? "/" : "",
                        dir);
      break;
    }
    char what[512];
    snprintf(what, sizeof what, "%s: listing page %d", uri, page + 1);
    VF_TRY(io_hf_parse_tree((const char *)rs.body.data, rs.body.len, what, &t, err));
    for (size_t i = 0; i < t.n; i++)
      VF_TRY(io_listing_add(out, &cap, hf_entry_uri(kind, repo, rev, t.items[i].path),
                            t.items[i].size, err));
    io_hf_tree_free(&t);
    free(prev);
    prev = url;
    url = NULL;
    if (rs.link_next) {
      char *next = rs.link_next;
      rs.link_next = NULL;
      if (next[0] == '/') { /* relative to the endpoint's origin */
        size_t nl = origin + strlen(next) + 1;
        char *abs = malloc(nl);
        if (abs) snprintf(abs, nl, "%.*s%s", (int)origin, ep, next);
        free(next);
        next = abs;
        if (!next) {
          st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
          break;
        }
      }
      if (hf_origin_len(next) != origin || strncmp(next, ep, origin) != 0) {
        size_t ol = hf_origin_len(next);
        st = vf_error_set(err, VF_ENET, "%s: listing: the next-page link leaves the endpoint "
                          "(%.*s instead of %.*s); refusing to send the token there",
                          uri, (int)(ol ? ol : 60), next, (int)origin, ep);
        free(next);
        break;
      }
      if (strcmp(next, prev) == 0) {
        st = vf_error_set(err, VF_ENET, "%s: listing: page %d links to itself as the next page",
                          uri, page + 1);
        free(next);
        break;
      }
      url = next;
    }
  }
out:
  io_hf_tree_free(&t);
  io_http_resp_free(&rs);
  io_http_close(h);
  free(url);
  free(prev);
  free(dir);
  free(ep);
  if (st != VF_OK) io_listing_free(out);
  return st;
}
