/*
 * local.c — the local-file backend: one fd per source, positional reads with pread(2).
 *
 * Why pread and not mmap: a truncated or concurrently replaced file turns an mmap access into
 * SIGBUS, which a library must never raise on bad input; pread reports a short read instead, and
 * the source stays usable from many threads at once (no shared file position).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vforge/io.h"

typedef struct io_local {
  io_source base;
  int fd;
} io_local;

/* pread can return at most SSIZE_MAX and Linux caps one call near 2 GiB anyway */
#define IO_LOCAL_MAX_CHUNK ((size_t)1 << 30)

static vf_status local_read_at(io_source *src, uint64_t offset, void *dst, size_t n,
                               vf_error *err) {
  io_local *l = (io_local *)src;
  uint8_t *p = (uint8_t *)dst;
  size_t done = 0;
  while (done < n) {
    size_t want = n - done;
    if (want > IO_LOCAL_MAX_CHUNK) want = IO_LOCAL_MAX_CHUNK;
    uint64_t at = offset + done;
    if (at > (uint64_t)INT64_MAX)
      return vf_error_set(err, VF_ECORRUPT, "%s: offset %llu is out of range", src->name,
                          (unsigned long long)at);
    ssize_t r = pread(l->fd, p + done, want, (off_t)at);
    if (r < 0) {
      if (errno == EINTR) continue;
      return vf_error_set(err, VF_EIO, "%s: read of %zu bytes at offset %llu failed: %s", src->name,
                          n, (unsigned long long)offset, VF_STRERROR(errno));
    }
    if (r == 0)
      return vf_error_set(err, VF_EIO,
                          "%s: short read at offset %llu: got %zu of %zu bytes (file truncated "
                          "while open?)",
                          src->name, (unsigned long long)offset, done, n);
    done += (size_t)r;
  }
  return VF_OK;
}

static void local_close(io_source *src) {
  io_local *l = (io_local *)src;
  if (l->fd >= 0) close(l->fd);
  free(l);
}

static const io_source_vtable io_local_vt = {local_read_at, local_close};

/* io_open_local(): see io.h.  Only regular files are accepted. */
vf_status io_open_local(const char *path, io_source **out, vf_error *err) {
  *out = NULL;
  int fd;
  do {
    fd = open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int e = errno;
    vf_status code = (e == ENOENT || e == ENOTDIR) ? VF_ENOTFOUND : VF_EIO;
    return vf_error_set(err, code, "%s: cannot open: %s", path, VF_STRERROR(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return vf_error_set(err, VF_EIO, "%s: cannot stat: %s", path, VF_STRERROR(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return vf_error_set(err, VF_EUSAGE, "%s: is a directory, not a file", path);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return vf_error_set(err, VF_EUSAGE, "%s: not a regular file", path);
  }
  io_local *l = calloc(1, sizeof *l);
  char *name = vf_strdup(path);
  if (!l || !name) {
    free(l);
    free(name);
    close(fd);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  l->base.vt = &io_local_vt;
  l->base.name = name;
  l->base.size = (uint64_t)st.st_size;
  l->fd = fd;
  *out = &l->base;
  return VF_OK;
}
