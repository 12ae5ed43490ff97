/*
 * Helpers shared by the eval commands: opening corpus files, finding the dense vector column
 * (DESIGN.md "Vectors in parquet": list<float|double|halffloat> or FLBA of 4*d bytes) and
 * decoding one row group of it, creating output directories.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/bf_internal.h"
#include "vforge/io.h"

/* ev_open(): see bf_internal.h. */
vf_status ev_open(const corpus_file *file, pqt_file **out, vf_error *err) {
  io_source *src = NULL;
  vf_status st = corpus_open(file, &src, err);
  if (st != VF_OK) return st;
  return pqt_open(src, NULL, out, err);
}

/* ev_open_path(): see bf_internal.h. */
vf_status ev_open_path(const char *path, pqt_file **out, vf_error *err) {
  corpus_file cf = {.uri = (char *)path, .key = (char *)path, .size = 0};
  return ev_open(&cf, out, err);
}

static bool float_leaf(const pqt_file *f, int leaf) {
  const pqt_leaf *l = &pqt_schema_of(f)->leaves[leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[pqt_schema_of(f)->nodes[l->node].elem];
  return l->type == PQT_FLOAT || l->type == PQT_DOUBLE ||
         (l->type == PQT_FIXED_LEN_BYTE_ARRAY && l->type_length == 2 && e->logical == PQT_LT_FLOAT16);
}

/* ev_vec_kind(): see bf_internal.h.  Only the shape is checked here; the record reader
 * (records.c) validates the rest while decoding. */
int ev_vec_kind(const pqt_file *f, int top) {
  if (pqt_is_dense_vector(f, top)) return CORPUS_VEC_DENSE;
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *n = &sc->nodes[top];
  if (n->kind == PQT_NODE_LIST && n->nleaves == 1 && n->element >= 0 &&
      sc->nodes[n->element].kind == PQT_NODE_LIST && sc->leaves[n->first_leaf].max_rep == 2 &&
      float_leaf(f, n->first_leaf))
    return CORPUS_VEC_MULTI;
  if (n->kind == PQT_NODE_STRUCT && n->nchildren == 2) {
    bool has_i = false, has_v = false;
    for (int c = 0; c < 2; c++) {
      const char *nm = sc->nodes[n->children[c]].name;
      has_i |= nm && strcmp(nm, "indices") == 0;
      has_v |= nm && strcmp(nm, "values") == 0;
    }
    if (has_i && has_v) return CORPUS_VEC_SPARSE;
  }
  return -1;
}

/* ev_vector_column(): see bf_internal.h. */
vf_status ev_vector_column(const pqt_file *f, const char *column, int *top, corpus_vec_kind *kind,
                           vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  if (column) {
    int t = pqt_find_top(f, column);
    if (t < 0) return vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s'", pqt_name(f), column);
    int k = ev_vec_kind(f, t);
    if (k < 0)
      return vf_error_set(err, VF_EUSAGE, "%s: column '%s' is not a vector column (list<float>, "
                          "FLBA, list<list<float>> or struct{indices, values})", pqt_name(f), column);
    *top = t;
    *kind = (corpus_vec_kind)k;
    return VF_OK;
  }
  int dense = 0, other = 0, other_top = -1;
  for (int i = 0; i < sc->ntop; i++) {
    int k = ev_vec_kind(f, sc->top[i]);
    dense += k == CORPUS_VEC_DENSE;
    if (k > 0) {
      other++;
      other_top = sc->top[i];
    }
  }
  if (dense == 0 && other == 1) {
    *top = other_top;
    *kind = (corpus_vec_kind)ev_vec_kind(f, other_top);
    return VF_OK;
  }
  if (dense == 0 && other > 1)
    return vf_error_set(err, VF_EUSAGE, "%s: several multivector/sparse columns; choose one with "
                        "--column", pqt_name(f));
  *kind = CORPUS_VEC_DENSE;
  return ev_vector_top(f, NULL, top, err);
}

static int pair_cmp(const void *a, const void *b) {
  const ev_pair *x = a, *y = b;
  if (x->index != y->index) return x->index < y->index ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* ev_sparse_sort(): see bf_internal.h. */
bool ev_sparse_sort(uint32_t *idx, float *val, size_t n, ev_pair *tmp) {
  bool sorted = true, dup = false;
  for (size_t i = 1; i < n && sorted; i++) sorted = idx[i - 1] < idx[i];
  if (sorted) return true;
  for (size_t i = 0; i < n; i++) tmp[i] = (ev_pair){idx[i], (uint32_t)i, val[i]};
  qsort(tmp, n, sizeof *tmp, pair_cmp);
  for (size_t i = 0; i < n; i++) {
    idx[i] = tmp[i].index;
    val[i] = tmp[i].value;
    dup |= i > 0 && idx[i] == idx[i - 1];
  }
  return !dup;
}

/* ev_vector_top(): see bf_internal.h. */
vf_status ev_vector_top(const pqt_file *f, const char *column, int *top, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  if (column) {
    int t = pqt_find_top(f, column);
    if (t < 0)
      return vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s'", pqt_name(f), column);
    if (!pqt_is_dense_vector(f, t))
      return vf_error_set(err, VF_EUSAGE, "%s: column '%s' is not a dense vector column",
                          pqt_name(f), column);
    *top = t;
    return VF_OK;
  }
  int found = -1, count = 0;
  char names[512];
  size_t nl = 0;
  names[0] = 0;
  for (int i = 0; i < sc->ntop; i++) {
    if (!pqt_is_dense_vector(f, sc->top[i])) continue;
    if (found < 0) found = sc->top[i];
    count++;
    int w = snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "",
                     sc->nodes[sc->top[i]].name);
    if (w > 0 && (size_t)w < sizeof names - nl) nl += (size_t)w;
  }
  if (count == 0)
    return vf_error_set(err, VF_EUSAGE, "%s: no dense vector column (list<float> or FLBA)",
                        pqt_name(f));
  if (count > 1)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: several dense vector columns (%s); choose one with --column",
                        pqt_name(f), names);
  *top = found;
  return VF_OK;
}

/* ev_read_dense(): see bf_internal.h. */
vf_status ev_read_dense(pqt_file *f, int top, int rg, int64_t first_row, int32_t *dim,
                        pqt_leaf_data *leaf, pqt_dense *out, vf_error *err) {
  int lid = pqt_schema_of(f)->nodes[top].first_leaf;
  vf_status st = pqt_read_leaves(f, rg, &lid, 1, leaf, err);
  if (st != VF_OK) return st;
  out->check_only = false;
  return pqt_dense_from_leaf(f, top, leaf, first_row, dim, out, err);
}

/* ev_mkdir_p(): see bf_internal.h. */
vf_status ev_mkdir_p(const char *dir, vf_error *err) {
  size_t n = strlen(dir);
  char *p = vf_strdup(dir);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != 0) continue;
    char c = p[i];
    p[i] = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      vf_status st = vf_error_set(err, VF_EIO, "cannot create directory %s: %s", p, strerror(errno));
      free(p);
      return st;
    }
    p[i] = c;
  }
  free(p);
  return VF_OK;
}

/* ev_mkdir_parent(): see bf_internal.h. */
vf_status ev_mkdir_parent(const char *path, vf_error *err) {
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path) return VF_OK;
  char *d = vf_strndup(path, (size_t)(slash - path));
  if (!d) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = ev_mkdir_p(d, err);
  free(d);
  return st;
}

/* ev_strdupf(): see bf_internal.h. */
char *ev_strdupf(vf_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? vf_malloc((size_t)n + 1) : NULL;
  if (s) vsnprintf(s, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  if (!s) vf_error_set(err, VF_ENOMEM, "out of memory");
  return s;
}
