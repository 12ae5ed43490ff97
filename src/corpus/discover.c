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
 *
 * Remote URIs (issue 7) follow the same rules through io_list()/io_open_uri(), so every command
 * reads s3://, hf:// and http(s):// corpora alike:
 *   - the prefix is the URI as given; a URI that names one object is that object;
 *   - io_list() returns every object below it; only keys equal to the prefix's path or below
 *     it at a '/' boundary count (s3://b/data never picks up s3://b/data2/...), the *.parquet
 *     filter and the eval/ exclusion apply to the part below the prefix;
 *   - keys are corpus_bare_key() of each object URI (the key inside the container; id_root
 *     does not apply), sorted byte-wise;
 *   - http(s):// has no listing: a URL is one file, and a URL with {i} expands to its
 *     numbered parts (io_list);
 *   - the sizes from the listing are passed on to corpus_open() so opening a file costs no
 *     extra HEAD request (a changed object is still caught by the ranged reads).
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
  if (!d) return vf_error_set(err, VF_EIO, "%s: cannot list directory: %s", dir, VF_STRERROR(errno));
  vf_status st = VF_OK;
  size_t dlen = strlen(dir);
  if (dlen == 1) dlen = 0; /* "/" + name, not "//" + name */
  struct dirent *e;
  for (;;) {
    errno = 0;
    e = readdir(d);
    if (!e) {
      if (errno)
        st = vf_error_set(err, VF_EIO, "%s: cannot list directory: %s", dir, VF_STRERROR(errno));
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
        st = vf_error_set(err, VF_EIO, "%s: cannot stat: %s", child, VF_STRERROR(errno));
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

/* Remote: has the directory part of `rel` (the key below the prefix) an "eval" component? */
static bool rel_in_eval(const char *rel) {
  for (const char *p = rel;;) {
    const char *slash = strchr(p, '/');
    if (!slash) return false; /* the last component is the file name */
    if (slash - p == 4 && memcmp(p, "eval", 4) == 0) return true;
    p = slash + 1;
  }
}

static vf_status discover_remote(const char *uri, const io_uri *u, walk_ctx *w,
                                 vf_error *err) {
  corpus_files *out = w->out;
  /* the prefix is the URI without trailing '/' (outputs go to <prefix>/eval/...); when the URI
   * names one object it becomes that object's directory below (DESIGN.md "Corpus layout") */
  size_t ul0 = strlen(uri);
  while (ul0 > 0 && uri[ul0 - 1] == '/' && !(ul0 >= 3 && uri[ul0 - 2] == '/' && uri[ul0 - 3] == ':'))
    ul0--;
  out->prefix = vf_strndup(uri, ul0);
  if (!out->prefix) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", uri);
  bool names_object = false;
  vf_status st = VF_OK;
  io_listing l = {0};
  if ((u->scheme == IO_URI_HTTP || u->scheme == IO_URI_HTTPS) && !strstr(uri, "{i")) {
    size_t ul = strcspn(uri, "?#");
    if (ul > 0 && uri[ul - 1] == '/')
      return vf_error_set(err, VF_EUSAGE,
                          "%s: plain HTTP has no directory listing; name a file, or number the "
                          "parts with {i} (e.g. https://host/data/part-{i}.parquet)",
                          uri);
    io_source *src = NULL; /* one file: check that it exists and learn its size */
    st = io_open_uri(uri, &src, err);
    if (st != VF_OK) return st;
    char *copy = vf_strdup(uri);
    size_t cap = 0;
    st = io_listing_add(&l, &cap, copy, src->size, err);
    io_close(src);
    names_object = true;
  } else {
    st = io_list(uri, &l, err);
  }
  if (st != VF_OK) goto out;
  const char *pp = u->path ? u->path : "";
  size_t pl = strlen(pp);
  while (pl > 0 && pp[pl - 1] == '/')
    pl--;
  for (size_t i = 0; i < l.n; i++) {
    char *key = NULL;
    VF_TRY(corpus_bare_key(l.entries[i].uri, NULL, &key, err));
    const char *rel = key;
    bool below = true;
    if (u->scheme != IO_URI_HTTP && u->scheme != IO_URI_HTTPS && pl > 0) {
      if (strncmp(key, pp, pl) != 0) below = false;
      else if (key[pl] == '/') rel = key + pl + 1;
      else if (key[pl] == 0) { /* the prefix names this object: no eval/ exclusion */
        rel = key;
        names_object = true;
      } else below = false;
    }
    const char *slash = strrchr(rel, '/');
    bool self = names_object && (u->scheme == IO_URI_HTTP || u->scheme == IO_URI_HTTPS || key[pl] == 0);
    if (below && is_parquet_name(slash ? slash + 1 : rel) && (self || !rel_in_eval(rel))) {
      if (out->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 64;
        corpus_file *nf = vf_mallocarray(ncap, sizeof *nf);
        if (!nf) {
          free(key);
          VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory listing files", uri));
        }
        if (out->n) memcpy(nf, out->files, out->n * sizeof *nf);
        free(out->files);
        out->files = nf;
        w->cap = ncap;
      }
      corpus_file *cf = &out->files[out->n++];
      memset(cf, 0, sizeof *cf);
      cf->uri = l.entries[i].uri;
      l.entries[i].uri = NULL;
      cf->key = key;
      cf->size = l.entries[i].size;
    } else {
      free(key);
    }
  }
  if (names_object && out->n == 1 && !strstr(out->prefix, "{i")) {
    char *slash = strrchr(out->prefix, '/');
    if (slash && slash > out->prefix && slash[-1] != '/') *slash = 0;
  }
out:
  io_listing_free(&l);
  return st;
}

/* corpus_discover(): see corpus.h.  For a local directory the prefix is its normalised
 * absolute path; for a single local file, the file's directory; for a remote URI, the URI. */
vf_status corpus_discover(const char *uri, const char *id_root, corpus_files *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  io_uri u;
  vf_status st = io_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  walk_ctx w = {out, 0, id_root, uri};
  if (u.scheme != IO_URI_LOCAL && u.scheme != IO_URI_FILE) {
    VF_TRY(discover_remote(uri, &u, &w, err));
    if (out->n == 0)
      VF_FAIL(vf_error_set(err, VF_ENOTFOUND,
                           "%s: no *.parquet files found (files under eval/ are excluded)", uri));
    qsort(out->files, out->n, sizeof *out->files, file_key_cmp);
    goto out;
  }
  struct stat sb;
  if (stat(u.path, &sb) != 0) {
    int e = errno;
    st = vf_error_set(err, (e == ENOENT || e == ENOTDIR) ? VF_ENOTFOUND : VF_EIO, "%s: %s", uri,
                      VF_STRERROR(e));
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
  io_uri_free(&u);
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

/* ------------------------------------------------------------ corpus identity */

/* corpus_files_md5(): see corpus.h. */
void corpus_files_md5(const corpus_files *files, char out[33]) {
  vf_md5_ctx c;
  vf_md5_init(&c);
  for (size_t i = 0; i < files->n; i++) {
    char sz[32];
    int n = snprintf(sz, sizeof sz, "\t%llu\n", (unsigned long long)files->files[i].size);
    vf_md5_update(&c, files->files[i].key, strlen(files->files[i].key));
    vf_md5_update(&c, sz, (size_t)(n > 0 ? n : 0));
  }
  uint8_t d[16];
  vf_md5_final(&c, d);
  vf_md5_hex(d, out);
}

/* the expression without blanks (the default when NULL or empty) */
static void md5_expr(vf_md5_ctx *c, const char *e) {
  if (!e || !*e) e = CORPUS_DEFAULT_ID_EXPRESSION;
  for (; *e; e++)
    if (*e != ' ' && *e != '\t' && *e != '\n' && *e != '\r') vf_md5_update(c, e, 1);
}

/* corpus_identity(): see corpus.h. */
void corpus_identity(const char *files_md5, const char *id_expression, uint8_t out16[16],
                     char hex[33]) {
  vf_md5_ctx c;
  vf_md5_init(&c);
  vf_md5_update(&c, files_md5, strlen(files_md5));
  vf_md5_update(&c, "\n", 1);
  md5_expr(&c, id_expression);
  vf_md5_final(&c, out16);
  if (hex) vf_md5_hex(out16, hex);
}

/* corpus_id_expression_same(): see corpus.h. */
bool corpus_id_expression_same(const char *a, const char *b) {
  if (!a || !*a) a = CORPUS_DEFAULT_ID_EXPRESSION;
  if (!b || !*b) b = CORPUS_DEFAULT_ID_EXPRESSION;
  for (;;) {
    while (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r') a++;
    while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r') b++;
    if (*a != *b) return false;
    if (!*a) return true;
    a++;
    b++;
  }
}

/* corpus_open(): see corpus.h.  Local files (absolute paths) are opened with pread; remote
 * ones through io_open_uri_sized() with the size from the listing. */
vf_status corpus_open(const corpus_file *file, io_source **out, vf_error *err) {
  if (file->uri[0] == '/') return io_open_local(file->uri, out, err);
  return io_open_uri_sized(file->uri, file->size ? (int64_t)file->size : -1, out, err);
}
