/*
 * atomic.c — files that appear complete or not at all.
 *
 * Why: outputs (indexes, manifests, exported vectors) are read by other tools and by reruns; a
 * crash or a full disk must never leave a truncated file under the final name.  Writes go to a
 * temp file in the same directory (rename(2) is only atomic within one filesystem); commit
 * fsyncs the data, renames over the target and fsyncs the directory so the rename itself is
 * durable (POSIX leaves directory-entry durability to an fsync of the directory).  Abort, or any
 * failure during commit, unlinks the temp file so no "<path>.tmp.*" debris is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vforge/util.h"

struct vf_atomic_file {
  int fd;
  char *path;
  char *tmp;
  int64_t pos;
};

static atomic_uint g_atomic_seq;

static void atomic_free(vf_atomic_file *f) {
  free(f->path);
  free(f->tmp);
  free(f);
}

/* vf_atomic_open(): see util.h.  Creates "<path>.tmp.<pid>.<n>" exclusively (mode 0666 & ~umask).
 */
vf_status vf_atomic_open(const char *path, vf_atomic_file **out, vf_error *err) {
  *out = NULL;
  if (!path || !*path) return vf_error_set(err, VF_EUSAGE, "atomic file: empty output path");
  vf_atomic_file *f = calloc(1, sizeof *f);
  if (!f) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  f->fd = -1;
  f->path = vf_strdup(path);
  size_t tlen = strlen(path) + 64;
  f->tmp = malloc(tlen);
  if (!f->path || !f->tmp) {
    atomic_free(f);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    unsigned n = atomic_fetch_add(&g_atomic_seq, 1u);
    snprintf(f->tmp, tlen, "%s.tmp.%ld.%u", path, (long)getpid(), n);
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd >= 0 || errno != EEXIST) break;
  }
  if (f->fd < 0) {
    int e = errno;
    vf_status st =
        vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_EIO,
                     "%s: cannot create temporary file %s: %s", path, f->tmp, strerror(e));
    atomic_free(f);
    return st;
  }
  *out = f;
  return VF_OK;
}

/* vf_atomic_write(): see util.h.  Writes all n bytes (retrying short writes and EINTR). */
vf_status vf_atomic_write(vf_atomic_file *f, const void *p, size_t n, vf_error *err) {
  const uint8_t *q = (const uint8_t *)p;
  while (n > 0) {
    ssize_t w = write(f->fd, q, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return vf_error_set(err, VF_EIO, "%s: write failed at offset %lld: %s", f->path,
                          (long long)f->pos, strerror(errno));
    }
    q += w;
    n -= (size_t)w;
    f->pos += w;
  }
  return VF_OK;
}

/* vf_atomic_tell(): bytes written so far. */
int64_t vf_atomic_tell(const vf_atomic_file *f) {
  return f->pos;
}

static void fsync_parent_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir;
  if (!slash)
    dir = vf_strdup(".");
  else if (slash == path)
    dir = vf_strdup("/");
  else
    dir = vf_strndup(path, (size_t)(slash - path));
  if (!dir) return;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd); /* best effort: some filesystems refuse fsync on directories */
    close(dfd);
  }
  free(dir);
}

/* vf_atomic_commit(): see util.h.  On any failure the temp file is removed and f is freed. */
vf_status vf_atomic_commit(vf_atomic_file *f, vf_error *err) {
  vf_status st = VF_OK;
  if (fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS) {
    st = vf_error_set(err, VF_EIO, "%s: fsync failed: %s", f->path, strerror(errno));
    goto fail;
  }
  int fd = f->fd;
  f->fd = -1;
  if (close(fd) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: close failed: %s", f->path, strerror(errno));
    goto fail;
  }
  if (rename(f->tmp, f->path) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: cannot rename %s into place: %s", f->path, f->tmp,
                      strerror(errno));
    goto fail;
  }
  fsync_parent_dir(f->path);
  atomic_free(f);
  return VF_OK;
fail:
  vf_atomic_abort(f);
  return st;
}

/* vf_atomic_abort(): see util.h.  Closes and unlinks the temp file; NULL is a no-op. */
void vf_atomic_abort(vf_atomic_file *f) {
  if (!f) return;
  if (f->fd >= 0) close(f->fd);
  if (f->tmp) unlink(f->tmp);
  atomic_free(f);
}

/* vf_atomic_write_file(): see util.h. */
vf_status vf_atomic_write_file(const char *path, const void *p, size_t n, vf_error *err) {
  vf_atomic_file *f = NULL;
  vf_status st = vf_atomic_open(path, &f, err);
  if (st == VF_OK) st = vf_atomic_write(f, p, n, err);
  if (st == VF_OK) return vf_atomic_commit(f, err);
  vf_atomic_abort(f);
  return st;
}

/* vf_mkdir_p(): see util.h. */
vf_status vf_mkdir_p(const char *path, unsigned mode, vf_error *err) {
  char *p = vf_strdup(path);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  size_t len = strlen(p);
  for (size_t i = 1; i <= len; i++) {
    if (p[i] != '/' && p[i] != 0) continue;
    char c = p[i];
    p[i] = 0;
    if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
      vf_status st = vf_error_set(err, VF_EIO, "%s: cannot create directory: %s", p, strerror(errno));
      free(p);
      return st;
    }
    p[i] = c;
  }
  free(p);
  return VF_OK;
}
