/*
 * remote.c — the scheme dispatch of io.h's remote sources (issue 7): io_open_uri, io_list,
 * io_download, io_upload, and the process-wide request/byte counters.
 *
 * Why here and not in each caller: every command that takes a corpus URI reaches its bytes
 * through corpus_discover() + corpus_open(), which call io_list() and io_open_uri(); one
 * dispatch keeps the schemes (local, file, http(s), s3, hf) identical for every command.
 *
 * Options: io_remote_set_opts() sets them for sources opened afterwards; unset fields take
 * the environment (VFORGE_REMOTE_PARALLEL: concurrent range requests per io_read_ranges call,
 * default 4; VFORGE_REMOTE_RETRIES: retries per request, default 5; VFORGE_CA_BUNDLE).
 *
 * Counters: atomics, so range requests issued from several threads add up exactly; they are
 * fed by src/io/http.c for every attempt (io_remote_count).
 *
 * io_download writes to "<dest>.part.<pid>" beside dest in 8 MiB ranged reads, fsyncs it,
 * renames it over dest and fsyncs the directory: a crash or failure never leaves a file named
 * dest that looks complete.  io_upload to a local path copies the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/remote_internal.h"

static _Atomic uint64_t rc_requests, rc_retries, rc_recv, rc_sent;

/* io_remote_count(): see remote_internal.h. */
void io_remote_count(uint64_t requests, uint64_t retries, uint64_t bytes_received,
                     uint64_t bytes_sent) {
  if (requests) atomic_fetch_add_explicit(&rc_requests, requests, memory_order_relaxed);
  if (retries) atomic_fetch_add_explicit(&rc_retries, retries, memory_order_relaxed);
  if (bytes_received) atomic_fetch_add_explicit(&rc_recv, bytes_received, memory_order_relaxed);
  if (bytes_sent) atomic_fetch_add_explicit(&rc_sent, bytes_sent, memory_order_relaxed);
}

/* io_remote_get_stats(): see io.h. */
void io_remote_get_stats(io_remote_stats *out) {
  out->requests = atomic_load_explicit(&rc_requests, memory_order_relaxed);
  out->retries = atomic_load_explicit(&rc_retries, memory_order_relaxed);
  out->bytes_received = atomic_load_explicit(&rc_recv, memory_order_relaxed);
  out->bytes_sent = atomic_load_explicit(&rc_sent, memory_order_relaxed);
}

static pthread_mutex_t opts_mu = PTHREAD_MUTEX_INITIALIZER;
static io_remote_opts opts_set = {0, NULL, -1};
static char *opts_ca; /* owned copy of opts_set.ca_bundle */

/* io_remote_set_opts(): see io.h.  The CA bundle path is copied. */
void io_remote_set_opts(const io_remote_opts *o) {
  pthread_mutex_lock(&opts_mu);
  free(opts_ca);
  opts_ca = NULL;
  if (o) {
    opts_set = *o;
    if (o->ca_bundle) opts_ca = vf_strdup(o->ca_bundle);
    opts_set.ca_bundle = opts_ca;
  } else {
    opts_set = (io_remote_opts){0, NULL, -1};
  }
  pthread_mutex_unlock(&opts_mu);
}

static int env_int(const char *name, int lo, int hi, int dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || x < lo || x > hi) {
    vf_log(VF_LOG_WARN, "%s=%s is not an integer in [%d, %d]; using %d", name, v, lo, hi, dflt);
    return dflt;
  }
  return (int)x;
}

/* io_remote_opts_get(): see remote_internal.h.  ca_bundle points into process-wide storage
 * that stays valid until the next io_remote_set_opts. */
void io_remote_opts_get(io_remote_opts *out) {
  pthread_mutex_lock(&opts_mu);
  *out = opts_set;
  pthread_mutex_unlock(&opts_mu);
  if (out->parallel_ranges <= 0) out->parallel_ranges = env_int("VFORGE_REMOTE_PARALLEL", 1, 64, 4);
  if (out->max_retries < 0) out->max_retries = env_int("VFORGE_REMOTE_RETRIES", 0, 100, 5);
  if (!out->ca_bundle) {
    const char *ca = getenv("VFORGE_CA_BUNDLE");
    out->ca_bundle = ca && *ca ? ca : NULL;
  }
}

/* io_remote_http_opts(): see remote_internal.h. */
void io_remote_http_opts(io_http_opts *ho) {
  io_remote_opts ro;
  io_remote_opts_get(&ro);
  memset(ho, 0, sizeof *ho);
  ho->ca_bundle = ro.ca_bundle;
  ho->max_retries = ro.max_retries;
}

/* The HTTP options for plain http(s):// sources: no credentials, redirects followed. */
static void plain_http_opts(io_http_opts *ho) {
  io_remote_http_opts(ho);
  ho->follow_redirects = true;
}

/* io_open_uri(): see io.h. */
vf_status io_open_uri(const char *uri, io_source **out, vf_error *err) {
  return io_open_uri_sized(uri, -1, out, err);
}

/* io_open_uri_sized(): see remote_internal.h. */
vf_status io_open_uri_sized(const char *uri, int64_t size, io_source **out, vf_error *err) {
  *out = NULL;
  io_uri u;
  vf_status st = io_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  switch (u.scheme) {
  case IO_URI_LOCAL:
  case IO_URI_FILE: st = io_open_local(u.path, out, err); break;
  case IO_URI_HTTP:
  case IO_URI_HTTPS: {
    if (strstr(uri, "{i")) {
      st = vf_error_set(err, VF_EUSAGE,
                        "%s: a {i} pattern names several parts; open one part (or use it as a "
                        "corpus URI, which expands it)",
                        uri);
      break;
    }
    io_http_opts ho;
    plain_http_opts(&ho);
    st = io_httpsrc_open(uri, uri, &ho, size, out, err);
    break;
  }
  case IO_URI_S3: st = io_s3_open(uri, u.container, u.path, size, out, err); break;
  case IO_URI_HF_DATASET:
  case IO_URI_HF_BUCKET:
    st = io_hf_open(uri, u.scheme == IO_URI_HF_DATASET ? "datasets" : "buckets", u.container,
                    u.revision, u.path, size, out, err);
    break;
  }
  io_uri_free(&u);
  return st;
}

/* io_list(): see io.h.  http(s) URIs with a {i} pattern list their numbered parts
 * (io_http_list_parts); other http(s) URIs have no listing. */
vf_status io_list(const char *uri, io_listing *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  io_uri u;
  vf_status st = io_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  switch (u.scheme) {
  case IO_URI_LOCAL:
  case IO_URI_FILE:
    st = vf_error_set(err, VF_EUSAGE, "%s: io_list is for remote URIs (local directories are "
                      "walked by corpus_discover)", uri);
    break;
  case IO_URI_HTTP:
  case IO_URI_HTTPS:
    if (strstr(uri, "{i")) {
      io_http_opts ho;
      plain_http_opts(&ho);
      st = io_http_list_parts(uri, &ho, out, err);
    } else {
      st = vf_error_set(err, VF_EUSAGE,
                        "%s: plain HTTP has no directory listing; name a file, or number the "
                        "parts with {i} (e.g. https://host/data/part-{i}.parquet)",
                        uri);
    }
    break;
  case IO_URI_S3: st = io_s3_list(uri, u.container, u.path, out, err); break;
  case IO_URI_HF_DATASET:
  case IO_URI_HF_BUCKET:
    st = io_hf_list(uri, u.scheme == IO_URI_HF_DATASET ? "datasets" : "buckets", u.container,
                    u.revision, u.path, out, err);
    break;
  }
  io_uri_free(&u);
  if (st != VF_OK) io_listing_free(out);
  return st;
}

/* io_listing_free(): see io.h. */
void io_listing_free(io_listing *l) {
  if (!l) return;
  for (size_t i = 0; i < l->n; i++)
    free(l->entries[i].uri);
  free(l->entries);
  l->entries = NULL;
  l->n = 0;
}

/* io_listing_add(): see remote_internal.h. */
vf_status io_listing_add(io_listing *l, size_t *cap, char *uri, uint64_t size, vf_error *err) {
  if (!uri) return vf_error_set(err, VF_ENOMEM, "out of memory listing files");
  if (l->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    io_entry *ne = vf_mallocarray(nc, sizeof *ne);
    if (!ne) {
      free(uri);
      return vf_error_set(err, VF_ENOMEM, "out of memory listing files");
    }
    if (l->n) memcpy(ne, l->entries, l->n * sizeof *ne);
    free(l->entries);
    l->entries = ne;
    *cap = nc;
  }
  l->entries[l->n].uri = uri;
  l->entries[l->n].size = size;
  l->n++;
  return VF_OK;
}

/* ------------------------------------------------------- download / upload */

#define COPY_CHUNK ((size_t)8 << 20)

static vf_status write_all(int fd, const uint8_t *p, size_t n, const char *what, vf_error *err) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return vf_error_set(err, VF_EIO, "%s: write failed: %s", what, VF_STRERROR(errno));
    }
    p += w;
    n -= (size_t)w;
  }
  return VF_OK;
}

static void fsync_dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? (slash == path ? vf_strdup("/") : vf_strndup(path, (size_t)(slash - path)))
                    : vf_strdup(".");
  if (!dir) return;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  free(dir);
}

/* io_download_temp_name(): see io.h.  "<dest>.part.<host>-<pid>.0": vf_temp_path()'s form (so
 * vf_temp_sweep() removes what a killed process left) with a fixed counter, so that the process
 * can name it again to remove an abandoned download at exit; one process downloads a given
 * destination once at a time. */
char *io_download_temp_name(const char *dest) {
  char *t = vf_temp_path(dest, "part");
  char *dot = t ? strrchr(t, '.') : NULL;
  if (dot) memcpy(dot, ".0", 3); /* the counter has at least one digit: it fits */
  return t;
}

/* Copy the whole source into dest atomically (temporary name, fsync, rename). */
static vf_status copy_source(io_source *src, const char *dest, vf_error *err) {
  /* what a killed download of dest left is swept first */
  const char *slash = strrchr(dest, '/');
  char *dir = slash ? vf_strndup(dest, slash == dest ? 1 : (size_t)(slash - dest)) : vf_strdup(".");
  if (dir) (void)vf_temp_sweep(dir, slash ? slash + 1 : dest, NULL, NULL);
  free(dir);
  char *tmp = io_download_temp_name(dest);
  uint8_t *buf = malloc(COPY_CHUNK);
  vf_status st = VF_OK;
  int fd = -1;
  if (!tmp || !buf) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", dest);
    goto out;
  }
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    st = vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: cannot create: %s", tmp,
                      VF_STRERROR(errno));
    goto out;
  }
  for (uint64_t off = 0; off < src->size;) {
    size_t n = src->size - off < COPY_CHUNK ? (size_t)(src->size - off) : COPY_CHUNK;
    VF_TRY(vf_check_cancel(err));
    VF_TRY(io_read_at(src, off, buf, n, err));
    VF_TRY(write_all(fd, buf, n, tmp, err));
    off += n;
  }
  if (fsync(fd) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: fsync failed: %s", tmp, VF_STRERROR(errno));
    goto out;
  }
  if (close(fd) != 0) {
    fd = -1;
    st = vf_error_set(err, VF_EIO, "%s: close failed: %s", tmp, VF_STRERROR(errno));
    goto out;
  }
  fd = -1;
  if (rename(tmp, dest) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: cannot rename to %s: %s", tmp, dest, VF_STRERROR(errno));
    goto out;
  }
  fsync_dir_of(dest);
out:
  if (fd >= 0) close(fd);
  if (st != VF_OK && tmp) unlink(tmp);
  free(tmp);
  free(buf);
  return st;
}

/* io_download(): see io.h. */
vf_status io_download(const char *uri, const char *dest, uint64_t *bytes, vf_error *err) {
  if (bytes) *bytes = 0;
  io_source *src = NULL;
  vf_status st = io_open_uri(uri, &src, err);
  if (st != VF_OK) return st;
  VF_TRY(copy_source(src, dest, err));
  if (bytes) *bytes = src->size;
out:
  io_close(src);
  return st;
}

/* A local file copied to the local path dest (io_upload). */
static vf_status upload_local(const char *src, const char *dest, vf_error *err) {
  io_source *in = NULL;
  vf_status st = VF_OK;
  VF_TRY(io_open_local(src, &in, err));
  VF_TRY(copy_source(in, dest, err));
out:
  io_close(in);
  return st;
}

/* io_upload(): see io.h. */
vf_status io_upload(const char *src, const char *uri, vf_error *err) {
  io_uri u;
  vf_status st = io_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  switch (u.scheme) {
  case IO_URI_S3: st = io_s3_upload(src, uri, u.container, u.path, err); break;
  case IO_URI_LOCAL:
  case IO_URI_FILE: st = upload_local(src, u.path, err); break;
  default:
    st = vf_error_set(err, VF_EUNSUPPORTED,
                      "%s: uploading is supported for s3:// and local paths only (hf:// and "
                      "http(s):// are read-only here)",
                      uri);
  }
  io_uri_free(&u);
  return st;
}
