/*
 * discover.c — the files of a local corpus (DESIGN.md "Corpus layout").
 *
 * Every *.parquet file below the prefix is the corpus; any file with a path component exactly
 * "eval" below the prefix is excluded (evaluation artifacts live in <prefix>/eval/), and files are
 * processed in byte-wise (strcmp) order of their bare keys so every run, worker and tool sees the
 * same order.
 *
 * Symlinks: a symlinked *file* is included under its link path (keys never resolve symlinks);
 * symlinked *directories* below the prefix are not descended into, which rules out cycles without
 * tracking visited inodes.  The prefix itself may be a symlink to a directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

#define DISCOVER_MAX_DEPTH 256

typedef struct walk_ctx {
  corpus_files *out;
  size_t cap;
  const char *id_root;
  const char *uri; /* as given, for messages */
} walk_ctx;

static vf_status add_file(walk_ctx *w, const char *path, uint64_t size, vf_error *err) {
  corpus_files *f = w->out;
  if (f->n == w->cap) {
    size_t ncap = w->cap ? w->cap * 2 : 64;
    corpus_file *nf = vf_mallocarray(ncap, sizeof *nf);
    if (!nf) return vf_error_set(err, VF_ENOMEM, "%s: out of memory listing files", w->uri);
    if (f->n) memcpy(nf, f->files, f->n * sizeof *nf);
    free(f->files);
    f->files = nf;
    w->cap = ncap;
  }
  corpus_file *cf = &f->files[f->n];
  memset(cf, 0, sizeof *cf);
  cf->uri = vf_strdup(path);
  if (!cf->uri) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  f->n++; /* owned from here on, freed with the list on error */
  cf->size = size;
  if (w->id_root && *w->id_root) return corpus_strip_root(path, w->id_root, &cf->key, err);
  cf->key = vf_strdup(path);
  return cf->key ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
}

static bool is_parquet_name(const char *name) {
  size_t n = strlen(name);
  return n >= 8 && memcmp(name + n - 8, ".parquet", 8) == 0;
}

static vf_status walk_dir(walk_ctx *w, const char *dir, int depth, vf_error *err) {
  if (depth > DISCOVER_MAX_DEPTH)
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: directories nested deeper than %d levels", dir,
                        DISCOVER_MAX_DEPTH);
  DIR *d = opendir(dir);
  if (!d) return vf_error_set(err, VF_EIO, "%s: cannot list directory: %s", dir, strerror(errno));
  vf_status st = VF_OK;
  size_t dlen = strlen(dir);
  if (dlen == 1) dlen = 0; /* "/" + name, not "//" + name */
  struct dirent *e;
  for (;;) {
    errno = 0;
    e = readdir(d);
    if (!e) {
      if (errno)
        st = vf_error_set(err, VF_EIO, "%s: cannot list directory: %s", dir, strerror(errno));
      break;
    }
    const char *name = e->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    size_t nl = strlen(name);
    char *child = malloc(dlen + nl + 2);
    if (!child) {
      st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", dir);
      break;
    }
    memcpy(child, dir, dlen);
    child[dlen] = '/';
    memcpy(child + dlen + 1, name, nl + 1);
    struct stat lst;
    if (fstatat(dirfd(d), name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) /* removed while listing: just skip it */
        st = vf_error_set(err, VF_EIO, "%s: cannot stat: %s", child, strerror(errno));
    } else if (S_ISDIR(lst.st_mode)) {
      if (strcmp(name, "eval") != 0) st = walk_dir(w, child, depth + 1, err);
    } else if (S_ISREG(lst.st_mode)) {
      if (is_parquet_name(name)) st = add_file(w, child, (uint64_t)lst.st_size, err);
    } else if (S_ISLNK(lst.st_mode) && is_parquet_name(name)) {
      struct stat tst;
      if (stat(child, &tst) == 0 && S_ISREG(tst.st_mode))
        st = add_file(w, child, (uint64_t)tst.st_size, err);
      /* dangling links and links to directories are skipped */
    }
    free(child);
    if (st != VF_OK) break;
  }
  closedir(d);
  return st;
}

static int file_key_cmp(const void *a, const void *b) {
  const corpus_file *x = a, *y = b;
  return strcmp(x->key, y->key);
}

/* corpus_discover(): see corpus.h.  Local paths and file:// URIs only.  For a directory the
 * prefix is its normalised absolute path; for a single file, the file's directory. */
vf_status corpus_discover(const char *uri, const char *id_root, corpus_files *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  corpus_uri u;
  vf_status st = corpus_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  walk_ctx w = {out, 0, id_root, uri};
  if (u.scheme != CORPUS_LOCAL && u.scheme != CORPUS_FILE) {
    st = vf_error_set(err, VF_EUNSUPPORTED, "%s: remote corpora are not supported in this build",
                      uri);
    goto out;
  }
  struct stat sb;
  if (stat(u.path, &sb) != 0) {
    int e = errno;
    st = vf_error_set(err, (e == ENOENT || e == ENOTDIR) ? VF_ENOTFOUND : VF_EIO, "%s: %s", uri,
                      strerror(e));
    goto out;
  }
  if (S_ISREG(sb.st_mode)) {
    const char *slash = strrchr(u.path, '/');
    out->prefix = slash == u.path ? vf_strdup("/") : vf_strndup(u.path, (size_t)(slash - u.path));
    if (!out->prefix) {
      st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
      goto out;
    }
    st = add_file(&w, u.path, (uint64_t)sb.st_size, err);
    goto out;
  }
  if (!S_ISDIR(sb.st_mode)) {
    st = vf_error_set(err, VF_EUSAGE, "%s: not a file or directory", uri);
    goto out;
  }
  out->prefix = vf_strdup(u.path);
  if (!out->prefix) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
    goto out;
  }
  st = walk_dir(&w, u.path, 0, err);
  if (st != VF_OK) goto out;
  if (out->n == 0) {
    st = vf_error_set(err, VF_ENOTFOUND,
                      "%s: no *.parquet files found (files under eval/ are "
                      "excluded)",
                      uri);
    goto out;
  }
  qsort(out->files, out->n, sizeof *out->files, file_key_cmp);
out:
  corpus_uri_free(&u);
  if (st != VF_OK) corpus_files_free(out);
  return st;
}

/* corpus_files_free(): frees every entry and the prefix; the struct is left empty. */
void corpus_files_free(corpus_files *f) {
  if (!f) return;
  for (size_t i = 0; i < f->n; i++) {
    free(f->files[i].uri);
    free(f->files[i].key);
  }
  free(f->files);
  free(f->prefix);
  memset(f, 0, sizeof *f);
}

/* corpus_open(): see corpus.h.  Local files only in this build. */
vf_status corpus_open(const corpus_file *file, io_source **out, vf_error *err) {
  return io_open_local(file->uri, out, err);
}
