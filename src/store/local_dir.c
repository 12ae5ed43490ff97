/*
 * local_dir.c — the local store's collection directory: paths and the segment listing, the small
 * files (collection.json, .lock), the vectors spec written to and checked against
 * collection.json, and creating / recreating the collection.  Split out of local.c along its
 * "paths, files" and "collection.json" sections; the design note is local.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local_internal.h"

/* ------------------------------------------------------------- paths, files */

char *ls_path_join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *p = vf_malloc(la + lb + 2);
  if (!p) return NULL;
  memcpy(p, a, la);
  p[la] = '/';
  memcpy(p + la + 1, b, lb + 1);
  return p;
}


static bool is_segment_name(const char *n) {
  size_t l = strlen(n);
  return l > 12 && strncmp(n, "seg-", 4) == 0 && strcmp(n + l - 8, ".parquet") == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the committed segments, sorted by name (= sequence order) */
vf_status ls_list(local_store *s, char ***out, int *n, vf_error *err) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir(s->dir);
  if (!d)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO,
                        "collection '%s': cannot open %s: %s", s->base.collection, s->dir,
                        VF_STRERROR(errno));
  char **names = NULL;
  int cnt = 0, cap = 0;
  vf_status st = VF_OK;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!is_segment_name(de->d_name)) continue;
    if (cnt == cap) {
      int nc = cap ? cap * 2 : 16;
      char **t = vf_realloc(names, (size_t)nc * sizeof *t);
      if (!t) {
        st = vf_error_set(err, VF_ENOMEM, "out of memory");
        break;
      }
      names = t;
      cap = nc;
    }
    if (!(names[cnt] = vf_strdup(de->d_name))) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      break;
    }
    cnt++;
  }
  closedir(d);
  if (st != VF_OK) {
    for (int i = 0; i < cnt; i++)
      free(names[i]);
    free(names);
    return st;
  }
  if (cnt) qsort(names, (size_t)cnt, sizeof *names, cmp_str);
  *out = names;
  *n = cnt;
  return VF_OK;
}

void ls_free_names(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

vf_status ls_read_small_file(const char *path, char **out, size_t *len, vf_error *err) {
  *out = NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: %s", path,
                        VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, LS_MAX_JSON);
  vf_status st = VF_OK;
  char tmp[4096];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
    VF_TRY(vf_buf_append(&b, tmp, n, err));
  if (ferror(fp)) VF_FAIL(vf_error_set(err, VF_EIO, "%s: read error", path));
  fclose(fp);
  fp = NULL;
  VF_TRY(vf_buf_append(&b, "", 1, err));
  *out = (char *)vf_buf_take(&b, len);
  *len -= 1;
out:
  if (fp) fclose(fp);
  if (st != VF_OK) {
    vf_buf_free(&b);
    return vf_error_prefix(err, "%s: ", path);
  }
  return VF_OK;
}

/* ---------------------------------------------------------- collection.json */

const char *ls_kind_text(corpus_vec_kind k) {
  return k == CORPUS_VEC_SPARSE ? "sparse" : k == CORPUS_VEC_MULTI ? "multivector" : "dense";
}

/* one line per vector (collection.json stays readable by hand) */
static vf_status ls_vector_line(const store_vector_spec *v, vf_buf *b, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(b, err, "    {\"name\": "));
  VF_TRY(vf_json_string(b, v->name, strlen(v->name), err));
  VF_TRY(vf_buf_printf(b, err, ", \"type\": \"%s\", \"dim\": %d, \"distance\": \"%s\"}",
                       ls_kind_text(v->kind), (int)v->dim, idx_metric_name(v->distance)));
out:
  return st;
}

static vf_status ls_spec_json(const store *s, vf_buf *b, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(b, err, "{\"format\": \"vforge-local\", \"version\": 1,\n"));
  VF_TRY(vf_buf_printf(b, err, " \"collection\": "));
  VF_TRY(vf_json_string(b, s->collection, strlen(s->collection), err));
  VF_TRY(vf_buf_printf(b, err, ",\n \"vectors\": [\n"));
  for (int i = 0; i < s->nvectors; i++) {
    VF_TRY(ls_vector_line(&s->vectors[i], b, err));
    VF_TRY(vf_buf_printf(b, err, "%s\n", i + 1 < s->nvectors ? "," : ""));
  }
  VF_TRY(vf_buf_printf(b, err, " ]}\n"));
out:
  return st;
}

/* One vector of the spec as text for messages: "dense, dim 8, cosine". */
static void ls_vector_text(corpus_vec_kind kind, int dim, const char *distance, char *out,
                           size_t cap) {
  snprintf(out, cap, "%s, dim %d, %s", ls_kind_text(kind), dim, distance);
}

/* What makes a parsed collection.json not the JSON vforge writes, or NULL when nothing does. */
static const char *ls_spec_bad(const vf_json_val *doc) {
  const vf_json_val *fmt = vf_json_get(doc, "format"), *vecs = vf_json_get(doc, "vectors");
  if (!fmt || fmt->t != VF_JSON_STR || strcmp(fmt->str, "vforge-local") != 0)
    return "no \"format\": \"vforge-local\"";
  if (!vecs || vecs->t != VF_JSON_ARR) return "no \"vectors\" list";
  for (size_t i = 0; i < vecs->n; i++) {
    const vf_json_val *n = vf_json_get(&vecs->items[i], "name"), *t = vf_json_get(&vecs->items[i], "type");
    const vf_json_val *d = vf_json_get(&vecs->items[i], "dim"), *m = vf_json_get(&vecs->items[i], "distance");
    if (!n || n->t != VF_JSON_STR || !t || t->t != VF_JSON_STR || !d || d->t != VF_JSON_NUM || !m ||
        m->t != VF_JSON_STR || d->num != (double)(int)d->num)
      return "a vector entry without name, type, dim and distance";
  }
  return NULL;
}

/* Compare the stored spec (collection.json's text) with this handle's.  A file that is not the
 * JSON vforge writes is corrupt (VF_ECORRUPT, naming it), never "a different schema"; a
 * different schema names the first vector that differs and both of its definitions. */
static vf_status ls_compare_spec(local_store *s, const char *path, const char *have,
                                 size_t len, vf_error *err) {
  /* the corpus record after "vectors" (ls_set_record) is read past: only format and vectors
   * are compared */
  const char *c = s->base.collection;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  vf_status st = vf_json_parse(have, len, path, &doc, err);
  if (st != VF_OK && st != VF_ECORRUPT) goto out;
  const char *bad = st == VF_ECORRUPT ? NULL : ls_spec_bad(&doc);
  if (st == VF_ECORRUPT || bad) { /* a parse error becomes this one, naming its cause */
    char why[VF_ERROR_MSG_MAX];
    snprintf(why, sizeof why, "%s", bad ? bad : err->msg);
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "collection '%s': %s is corrupt (%s); it is not a schema vforge wrote: "
                         "remove the collection directory %s, or set vectorstore.params.recreate: "
                         "true to replace it",
                         c, path, why, s->dir));
  }
  const vf_json_val *vecs = vf_json_get(&doc, "vectors");
  /* vector by vector, in order: the first that differs */
  for (size_t i = 0; i < vecs->n && i < (size_t)s->base.nvectors; i++) {
    const store_vector_spec *w = &s->base.vectors[i];
    const vf_json_val *e = &vecs->items[i];
    const char *sn = vf_json_get(e, "name")->str, *stype = vf_json_get(e, "type")->str;
    const char *sdist = vf_json_get(e, "distance")->str;
    int sdim = (int)vf_json_get(e, "dim")->num;
    if (strcmp(sn, w->name) == 0 && strcmp(stype, ls_kind_text(w->kind)) == 0 &&
        sdim == (int)w->dim && strcmp(sdist, idx_metric_name(w->distance)) == 0)
      continue;
    char want[128];
    ls_vector_text(w->kind, (int)w->dim, idx_metric_name(w->distance), want, sizeof want);
    if (strcmp(sn, w->name) != 0)
      VF_FAIL(vf_error_set(err, VF_ECONFIG,
                           "collection '%s' exists in %s with a different vector schema: vector "
                           "%zu is '%.100s' there but '%.100s' (%s) in the config (set "
                           "vectorstore.params.recreate: true to replace it)",
                           c, s->dir, i + 1, sn, w->name, want));
    else
      VF_FAIL(vf_error_set(err, VF_ECONFIG,
                           "collection '%s' exists in %s with a different vector schema: vector "
                           "'%.100s' is %.40s, dim %d, %.40s there but %s in the config (set "
                           "vectorstore.params.recreate: true to replace it)",
                           c, s->dir, w->name, stype, sdim, sdist, want));
  }
  if (vecs->n != (size_t)s->base.nvectors) {
    size_t k = vecs->n < (size_t)s->base.nvectors ? vecs->n : (size_t)s->base.nvectors;
    bool more = vecs->n > (size_t)s->base.nvectors;
    const char *extra = more ? vf_json_get(&vecs->items[k], "name")->str : s->base.vectors[k].name;
    VF_FAIL(vf_error_set(err, VF_ECONFIG,
                         "collection '%s' exists in %s with a different vector schema: %zu "
                         "vectors there, %d in the config; vector '%.100s' is only in the %s (set "
                         "vectorstore.params.recreate: true to replace it)",
                         c, s->dir, vecs->n, s->base.nvectors, extra,
                         more ? "collection" : "config"));
  }
out:
  vf_json_free(&doc);
  return st;
}

/* The end of the vectors spec in a collection.json text (just past "\n ]"), or 0 when absent;
 * what follows is the corpus record (ls_set_record), not part of the spec. */
size_t ls_spec_end(const char *text) {
  const char *e = strstr(text, "\n ]");
  return e ? (size_t)(e - text) + 3 : 0;
}

vf_status ls_verify(local_store *s, vf_error *err) {
  if (s->verified) return VF_OK;
  char *have = NULL;
  size_t len = 0;
  vf_status st = ls_read_small_file(s->json_path, &have, &len, err);
  if (st == VF_ENOTFOUND)
    return vf_error_set(err, VF_ENOTFOUND,
                        "collection '%s' does not exist in %s (create it first: load prepare / "
                        "ensure_collection)",
                        s->base.collection, s->dir);
  if (st != VF_OK) return st;
  st = ls_compare_spec(s, s->json_path, have, len, err);
  free(have);
  if (st != VF_OK) return st;
  s->verified = true;
  return st;
}

/* LOCK_EX on .lock without waiting: no other handle may have a segment open.  `what` names
 * the operation for the error.  *fd receives the lock's descriptor (close it to release). */
vf_status ls_lock_exclusive(local_store *s, const char *what, int *fd, vf_error *err) {
  *fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (*fd < 0) return vf_error_set(err, VF_EIO, "%s: %s", s->lock_path, VF_STRERROR(errno));
  if (flock(*fd, LOCK_EX | LOCK_NB) == 0) return VF_OK;
  vf_status st = errno == EWOULDBLOCK
                     ? vf_error_set(err, VF_EUSAGE,
                                    "collection '%s': another writer is still loading into %s; "
                                    "%s runs only when every load has finished",
                                    s->base.collection, s->dir, what)
                     : vf_error_set(err, VF_EIO, "%s: flock: %s", s->lock_path, VF_STRERROR(errno));
  close(*fd);
  *fd = -1;
  return st;
}

vf_status ls_remove_collection(local_store *s, vf_error *err) {
  int lock_fd;
  vf_status st = ls_lock_exclusive(s, "recreate", &lock_fd, err);
  if (st != VF_OK) return st;
  DIR *d = opendir(s->dir);
  if (!d) {
    int e = errno;
    close(lock_fd);
    return e == ENOENT ? VF_OK : vf_error_set(err, VF_EIO, "%s: %s", s->dir, VF_STRERROR(e));
  }
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    const char *n = de->d_name;
    if (!(is_segment_name(n) || strstr(n, ".parquet.tmp.") || strcmp(n, "collection.json") == 0 ||
          strncmp(n, "collection.json.tmp.", 20) == 0 || strcmp(n, ".seq") == 0 ||
          strncmp(n, "index-", 6) == 0))
      continue;
    char *p = ls_path_join(s->dir, n);
    if (!p) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      break;
    }
    if (unlink(p) != 0 && errno != ENOENT)
      st = vf_error_set(err, VF_EIO, "%s: cannot remove: %s", p, VF_STRERROR(errno));
    free(p);
    if (st != VF_OK) break;
  }
  closedir(d);
  close(lock_fd);
  return st;
}

/* ensure_collection: create, verify, or recreate (see store.h) */
vf_status ls_ensure_collection(store *base, vf_error *err) {
  local_store *s = (local_store *)base;
  if (s->w)
    return vf_error_set(err, VF_EUSAGE,
                        "collection '%s': ensure_collection while this handle has unflushed "
                        "points",
                        base->collection);
  struct stat jb;
  if (base->must_exist && stat(s->json_path, &jb) != 0) /* nothing is created, not even the dir */
    return vf_error_set(err, VF_ENOTFOUND,
                        "collection '%s' does not exist in %s (run `vforge load prepare` and "
                        "`load load` first)",
                        base->collection, s->dir);
  vf_status st = vf_mkdir_p(s->dir, 0777, err);
  if (st != VF_OK) return st;
  if (!s->swept) { /* segments, manifests, index spills that killed writers on this host left */
    s->swept = true;
    if ((st = vf_temp_sweep(s->dir, NULL, NULL, err)) != VF_OK) return st;
  }
  s->verified = false;
  s->view.valid = false;
  /* recreate is one-shot: a handle drops the old collection at most once */
  bool recreate = s->recreate_pending;
  s->recreate_pending = false;
  if (recreate && (st = ls_remove_collection(s, err)) != VF_OK) return st;
  struct stat sb;
  if (stat(s->json_path, &sb) == 0) return ls_verify(s, err);
  vf_buf b;
  vf_buf_init(&b, LS_MAX_JSON);
  VF_TRY(ls_spec_json(base, &b, err));
  VF_TRY(vf_atomic_write_file(s->json_path, b.data, b.len, err));
  s->verified = true;
out:
  vf_buf_free(&b);
  return st;
}
