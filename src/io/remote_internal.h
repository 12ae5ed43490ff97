/*
 * remote_internal.h — how the remote backends of io.h fit together (issue 7).
 *
 *   remote.c    io_open_uri / io_list / io_download / io_upload: parse the scheme and dispatch;
 *               process-wide counters (io_remote_get_stats) fed by io_remote_count()
 *   httpsrc.c   the generic ranged io_source over HTTP(S) (size, read_at via Range, parallel
 *               range requests for io_read_ranges, Range-ignored detection), parameterised by
 *               io_http_opts so S3 (SigV4) and HF (bearer token, redirects) reuse it
 *   s3.c        credentials chain, region/endpoint, ListObjectsV2, HEAD/GET via httpsrc,
 *               PutObject / multipart upload
 *   hf.c        hf://datasets and hf://buckets: tree API listing (Link pagination), resolve URLs
 */
#ifndef VFORGE_IO_REMOTE_INTERNAL_H
#define VFORGE_IO_REMOTE_INTERNAL_H

#include "vforge/io.h"

/* ---- remote.c */
/*! io_remote_count() : add to the process-wide counters (thread-safe). */
void io_remote_count(uint64_t requests, uint64_t retries, uint64_t bytes_received,
                     uint64_t bytes_sent);
/*! io_remote_opts_get() : the options set by io_remote_set_opts (defaults applied). */
void io_remote_opts_get(io_remote_opts *out);
/*! io_remote_http_opts() : zeroed client options carrying the remote defaults every backend
 *  starts from: the CA bundle and the retry count of io_remote_opts_get(). */
void io_remote_http_opts(io_http_opts *ho);

/* ---- http.c (header parsing, exposed for tests/io/test_remote.c) */
/*! io_http_parse_content_range() : "bytes a-b/t" (t may be '*': -1) or "bytes * /t" (a, b = -1).
 *  @return : false (all -1) when malformed or b < a or b >= t. */
bool io_http_parse_content_range(const char *v, size_t n, int64_t *start, int64_t *end,
                                 int64_t *total);
/*! io_http_parse_link_next() : the target of the rel="next" link of a Link header value
 *  (RFC 8288), or NULL (none/malformed/out of memory).  Caller frees. */
char *io_http_parse_link_next(const char *v, size_t n);

/* ---- httpsrc.c */
/*! io_httpsrc_open() : a ranged byte source for the absolute `url`, shown as `name` in messages
 *  (the URI the user gave; never a URL carrying a signature or token).  `opts` carries the
 *  authentication (copied).  `size` < 0: found with HEAD (or the first ranged GET when HEAD is
 *  refused); else trusted (e.g. from a listing). */
vf_status io_httpsrc_open(const char *url, const char *name, const io_http_opts *opts,
                          int64_t size, io_source **out, vf_error *err);

/*! io_http_part_url() : `tmpl` with its first "{i}" (or "{i:0N}", zero-padded to N digits,
 *  1 <= N <= 20) replaced by the decimal i.  @return : NULL when tmpl has no valid pattern
 *  (or out of memory).  Caller frees. */
char *io_http_part_url(const char *tmpl, uint64_t i);
/*! io_http_list_parts() : expand a {i} pattern: i = 0, 1, 2, ... while HEAD answers 2xx,
 *  stopping at the first 404.  @return : VF_ENOTFOUND when part 0 is missing; VF_EUSAGE for a
 *  malformed pattern; VF_ENET for another status (naming the part's URL). */
vf_status io_http_list_parts(const char *tmpl, const io_http_opts *opts, io_listing *out,
                             vf_error *err);

/* ---- s3.c */
/*! io_s3_http_opts() : the SigV4 client options and the endpoint URL of `bucket`/`key`
 *  (path-style when AWS_ENDPOINT_URL is set) from the credential chain.  Strings in *opts
 *  point into *holder (free with io_s3_creds_free). */
typedef struct io_s3_creds io_s3_creds;
vf_status io_s3_resolve(const char *bucket, const char *key, io_s3_creds **holder,
                        io_http_opts *opts, char **url, vf_error *err);
void io_s3_creds_free(io_s3_creds *c);
/* size >= 0: known from a listing (no HEAD); < 0: found with a HEAD */
vf_status io_s3_open(const char *uri, const char *bucket, const char *key, int64_t size,
                     io_source **out, vf_error *err);
vf_status io_s3_list(const char *uri, const char *bucket, const char *prefix, io_listing *out,
                     vf_error *err);
vf_status io_s3_upload(const char *src, const char *uri, const char *bucket, const char *key,
                       vf_error *err);

/* ---- hf_json.c: the tree API's JSON (files only; directories skipped) */
typedef struct io_hf_item {
  char *path;    /* relative to the repo/bucket root */
  uint64_t size;
} io_hf_item;
typedef struct io_hf_tree {
  io_hf_item *items;
  size_t n;
} io_hf_tree;
/*! io_hf_parse_tree() : parse one page of the tree API.  @return : VF_ECORRUPT naming `what`
 *  and the entry for bad JSON or a bad shape; VF_ENOMEM. */
vf_status io_hf_parse_tree(const char *text, size_t len, const char *what, io_hf_tree *out,
                           vf_error *err);
void io_hf_tree_free(io_hf_tree *t);

/* ---- hf.c   kind: "datasets" or "buckets"; repo "ns/name"; rev NULL = "main" */
/*! io_hf_url() : the resolve URL (tree false) or the recursive tree-API URL (tree true) of
 *  `path` in a dataset (rev NULL: "main") or bucket on `endpoint`.  Caller frees. */
vf_status io_hf_url(const char *endpoint, const char *kind, const char *repo, const char *rev,
                    const char *path, bool tree, char **out, vf_error *err);
vf_status io_hf_open(const char *uri, const char *kind, const char *repo, const char *rev,
                     const char *path, int64_t size, io_source **out, vf_error *err);
vf_status io_hf_list(const char *uri, const char *kind, const char *repo, const char *rev,
                     const char *path, io_listing *out, vf_error *err);

#endif
