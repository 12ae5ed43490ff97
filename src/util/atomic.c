/*
 * atomic.c — files that appear complete or not at all.
 *
 * Why: outputs (indexes, manifests, exported vectors) are read by other tools and by reruns; a
 * crash or a full disk must never leave a truncated file under the final name.  Writes go to a
 * temp file in the same directory (rename(2) is only atomic within one filesystem); commit
 * fsyncs the data, renames over the target and fsyncs the directory so the rename itself is
 * durable (POSIX leaves directory-entry durability to an fsync of the directory).  Abort, or any
 * failure during commit, unlinks the temp file so no "<path>.tmp.*" debris is left behind.
 *
 * Temporary names carry the host and the pid of their writer ("<path>.<tag>.<host>-<pid>.<n>",
 * vf_temp_path): only a SIGKILL (or a power cut) can leave one behind, and the next run sweeps
 * the ones whose writer is provably gone — same host, pid not alive — and no others, since
 * several processes on several hosts may share a collection directory (vf_temp_sweep).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

/* ------------------------------------------------------------ temp names */

/* this host's name as temp names carry it: [A-Za-z0-9], anything else '_', at most 63 bytes */
static void temp_host(char out[64]) {
  if (gethostname(out, 64) != 0 || !out[0]) snprintf(out, 64, "host");
  out[63] = 0;
  for (char *p = out; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      *p = '_';
}

/* vf_temp_path(): see util.h. */
char *vf_temp_path(const char *path, const char *tag) {
  char host[64];
  temp_host(host);
  size_t n = strlen(path) + strlen(tag) + strlen(host) + 48;
  char *t = vf_malloc(n);
  if (t)
    snprintf(t, n, "%s.%s.%s-%ld.%u", path, tag, host, (long)getpid(),
             atomic_fetch_add(&g_atomic_seq, 1u));
  return t;
}

static bool all_digits(const char *s, size_t n) {
  if (n == 0 || n > 18) return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

/* Parse "<base>.<tag>.<host>-<pid>.<n>": true for a vforge temp name, with the base's length,
 * the host (pointer + length) and the pid. */
static bool temp_parse(const char *name, size_t *base_len, const char **host, size_t *host_len,
                       long *pid) {
  static const char *const tags[] = {"tmp", "spill", "assign", "part", NULL};
  size_t l = strlen(name);
  const char *dn = memrchr(name, '.', l); /* ".<n>" */
  if (!dn || !all_digits(dn + 1, l - (size_t)(dn - name) - 1)) return false;
  const char *dh = dn > name ? memrchr(name, '.', (size_t)(dn - name)) : NULL; /* ".<host>-<pid>" */
  if (!dh) return false;
  const char *dash = memrchr(dh, '-', (size_t)(dn - dh));
  if (!dash || dash == dh + 1 || !all_digits(dash + 1, (size_t)(dn - dash - 1))) return false;
  for (const char *c = dh + 1; c < dash; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '_'))
      return false;
  const char *dt = dh > name ? memrchr(name, '.', (size_t)(dh - name)) : NULL; /* ".<tag>" */
  if (!dt || dt == name) return false;
  bool known = false;
  for (int i = 0; tags[i] && !known; i++)
    known = strlen(tags[i]) == (size_t)(dh - dt - 1) &&
            memcmp(dt + 1, tags[i], (size_t)(dh - dt - 1)) == 0;
  if (!known) return false;
  *base_len = (size_t)(dt - name);
  *host = dh + 1;
  *host_len = (size_t)(dash - dh - 1);
  *pid = strtol(dash + 1, NULL, 10);
  return true;
}

/* "<dir>/<name>" (malloc'd; NULL when out of memory) */
static char *join2(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* vf_remove_tree(): see util.h. */
vf_status vf_remove_tree(const char *path, vf_error *err) {
  struct stat sb;
  if (lstat(path, &sb) != 0)
    return errno == ENOENT ? VF_OK : vf_error_set(err, VF_EIO, "%s: %s", path, VF_STRERROR(errno));
  if (S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(path);
    if (!d) return vf_error_set(err, VF_EIO, "%s: cannot open: %s", path, VF_STRERROR(errno));
    vf_status st = VF_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
      char *c = join2(path, de->d_name);
      if (!c) {
        st = vf_error_set(err, VF_ENOMEM, "out of memory");
        break;
      }
      st = vf_remove_tree(c, err);
      free(c);
      if (st != VF_OK) break; /* to the closedir */
    }
    closedir(d);
    if (st != VF_OK) return st;
    if (rmdir(path) != 0 && errno != ENOENT)
      return vf_error_set(err, VF_EIO, "%s: cannot remove: %s", path, VF_STRERROR(errno));
    return VF_OK;
  }
  if (unlink(path) != 0 && errno != ENOENT)
    return vf_error_set(err, VF_EIO, "%s: cannot remove: %s", path, VF_STRERROR(errno));
  return VF_OK;
}

/* vf_temp_sweep(): see util.h. */
vf_status vf_temp_sweep(const char *dir, const char *base, uint64_t *removed, vf_error *err) {
  if (removed) *removed = 0;
  DIR *d = opendir(dir && *dir ? dir : ".");
  if (!d) return VF_OK; /* nothing there to sweep */
  char host[64];
  temp_host(host);
  size_t hl = strlen(host), bl = base ? strlen(base) : 0;
  long self = (long)getpid();
  uint64_t n = 0;
  vf_status st = VF_OK;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t blen, tl;
    const char *th;
    long pid;
    if (!temp_parse(de->d_name, &blen, &th, &tl, &pid)) continue;
    if (base && (blen != bl || memcmp(de->d_name, base, bl) != 0)) continue;
    if (tl != hl || memcmp(th, host, hl) != 0 || pid <= 0 || pid == self) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to judge) */
    char *p = join2(dir, de->d_name);
    if (!p) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      break;
    }
    vf_error e;
    if (vf_remove_tree(p, &e) == VF_OK) n++;
    else vf_log(VF_LOG_WARN, "cannot remove a temporary left by an interrupted run: %s", e.msg);
    free(p);
  }
  closedir(d);
  if (n)
    vf_log(VF_LOG_INFO, "removed %llu temporar%s left in %s by interrupted runs",
           (unsigned long long)n, n == 1 ? "y" : "ies", dir);
  if (removed) *removed = n;
  return st;
}

/* ---------------------------------------------------------- atomic files */

/* vf_atomic_open(): see util.h.  Creates "<path>.tmp.<host>-<pid>.<n>" exclusively (mode
 * 0666 & ~umask). */
vf_status vf_atomic_open(const char *path, vf_atomic_file **out, vf_error *err) {
  *out = NULL;
  if (!path || !*path) return vf_error_set(err, VF_EUSAGE, "atomic file: empty output path");
  vf_atomic_file *f = calloc(1, sizeof *f);
  if (!f) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  f->fd = -1;
  f->path = vf_strdup(path);
  if (!f->path) {
    atomic_free(f);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    free(f->tmp);
    if (!(f->tmp = vf_temp_path(path, "tmp"))) {
      atomic_free(f);
      return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
    }
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd >= 0 || errno != EEXIST) break;
  }
  if (f->fd < 0) {
    int e = errno;
    vf_status st =
        vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_EIO,
                     "%s: cannot create temporary file %s: %s", path, f->tmp, VF_STRERROR(e));
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
                          (long long)f->pos, VF_STRERROR(errno));
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
  if (fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
    VF_FAIL(vf_error_set(err, VF_EIO, "%s: fsync failed: %s", f->path, VF_STRERROR(errno)));
  int fd = f->fd;
  f->fd = -1;
  if (close(fd) != 0)
    VF_FAIL(vf_error_set(err, VF_EIO, "%s: close failed: %s", f->path, VF_STRERROR(errno)));
  if (rename(f->tmp, f->path) != 0)
    VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot rename %s into place: %s", f->path, f->tmp,
                         VF_STRERROR(errno)));
  fsync_parent_dir(f->path);
out:
  if (st != VF_OK)
    vf_atomic_abort(f); /* the temp file goes */
  else
    atomic_free(f);
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
  vf_status st = VF_OK;
  VF_TRY(vf_atomic_open(path, &f, err));
  VF_TRY(vf_atomic_write(f, p, n, err));
  st = vf_atomic_commit(f, err); /* frees f, also when it fails */
  f = NULL;
out:
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
      vf_status st = vf_error_set(err, VF_EIO, "%s: cannot create directory: %s", p, VF_STRERROR(errno));
      free(p);
      return st;
    }
    p[i] = c;
  }
  free(p);
  return VF_OK;
}
