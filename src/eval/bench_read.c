/*
 * bench_read.c — reading the evaluation artifacts that `vforge bench` consumes (DESIGN.md
 * "Corpus layout"): queries_<N>.parquet (query_id string + vector columns) and
 * brute_force_queries_<N>_k<K>.parquet (query_id, hit_ids list<string>, hit_scores
 * list<float>), and the vector spec of an existing local-store collection.
 *
 * Why a direct leaf reader rather than the record reader: the truth columns are lists of
 * strings and floats whose lengths may vary per row (a corpus smaller than K), which the dense
 * assembler refuses; walking the Dremel levels (parquet-format "Nested encoding") of the one
 * leaf of each column is short and checks every row.  Arrays grow with the rows actually
 * decoded, never from a count in the footer, and are capped by BENCH_MAX_QUERIES/BENCH_MAX_K.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bf_internal.h"
#include "vforge/bench.h"
#include "vforge/corpus.h"
#include "vforge/format.h"
#include "vforge/index.h"
#include "vforge/vecfile.h"

/* ------------------------------------------------------------------ files */

static vf_status open_pqt(const char *path, const char *what, pqt_file **f, vf_error *err) {
  corpus_files files = {0};
  *f = NULL;
  vf_status st = corpus_discover(path, NULL, &files, err);
  if (st != VF_OK) {
    vf_error_prefix(err, "%s file: ", what);
    return st;
  }
  if (files.n != 1)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s file %s: a directory of %zu parquet files; give one file",
                         what, path, files.n));
  io_source *src = NULL;
  VF_TRY(corpus_open(&files.files[0], &src, err));
  VF_TRY(pqt_open(src, NULL, f, err));
out:
  corpus_files_free(&files);
  return st;
}

static char *dup_bytes(const uint8_t *p, int64_t n) {
  return vf_strndup((const char *)p, (size_t)n);
}

/* The single leaf of top-level field `name`; its node in *top. */
static vf_status one_leaf(const pqt_file *f, const char *name, int *top, int *leaf,
                          vf_error *err) {
  const pqt_schema *s = pqt_schema_of(f);
  *top = pqt_find_top(f, name);
  if (*top < 0) {
    vf_buf cols;
    vf_buf_init(&cols, 4096);
    for (int i = 0; i < s->ntop; i++)
      vf_buf_printf(&cols, NULL, "%s%s", i ? ", " : "", s->nodes[s->top[i]].name);
    vf_buf_append(&cols, "", 1, NULL);
    vf_status st = vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s' (columns: %s)", pqt_name(f),
                                name, cols.data ? (const char *)cols.data : "");
    vf_buf_free(&cols);
    return st;
  }
  if (s->nodes[*top].nleaves != 1)
    return vf_error_set(err, VF_ECORRUPT, "%s: column '%s' is a group of %d columns, not a value or "
                        "a list of values", pqt_name(f), name, s->nodes[*top].nleaves);
  *leaf = s->nodes[*top].first_leaf;
  return VF_OK;
}

/* A flat required/optional string column: one value per row, nulls refused. */
static vf_status read_strings(const pqt_file *f, int leaf, const pqt_leaf_data *d, int64_t first,
                              const char *col, char **out, vf_error *err) {
  const pqt_leaf *lf = &pqt_schema_of(f)->leaves[leaf];
  if (lf->max_rep != 0 || lf->type != PQT_BYTE_ARRAY)
    return vf_error_set(err, VF_ECORRUPT, "%s: column '%s' must be a string column", pqt_name(f), col);
  int64_t vi = 0;
  for (int64_t r = 0; r < d->nlevels; r++) {
    if (d->def && d->def[r] != lf->max_def)
      return vf_error_set(err, VF_ECORRUPT, "%s: row %lld: %s is null", pqt_name(f),
                          (long long)(first + r), col);
    if (vi >= d->nvalues)
      return vf_error_set(err, VF_ECORRUPT, "%s: column '%s': fewer values than rows", pqt_name(f), col);
    if (!(out[r] = dup_bytes(d->values.data + d->offsets[vi], d->offsets[vi + 1] - d->offsets[vi])))
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    vi++;
  }
  return VF_OK;
}

/* Element ranges of a list column of one row group: starts[r] .. starts[r+1] are the value
 * indices of row r (an empty or null list has none; a null element is refused). */
static vf_status list_rows(const pqt_file *f, int top, int leaf, const pqt_leaf_data *d,
                           int64_t first, const char *col, int64_t *starts, vf_error *err) {
  const pqt_schema *s = pqt_schema_of(f);
  const pqt_node *nd = &s->nodes[top];
  const pqt_leaf *lf = &s->leaves[leaf];
  if (nd->kind != PQT_NODE_LIST || lf->max_rep != 1 || nd->repeated < 0)
    return vf_error_set(err, VF_ECORRUPT, "%s: column '%s' must be a list of values", pqt_name(f), col);
  int16_t elem_def = s->nodes[nd->repeated].def_level;
  int64_t row = -1, vi = 0;
  for (int64_t e = 0; e < d->nlevels; e++) {
    int rep = d->rep ? d->rep[e] : 0;
    int def = d->def ? d->def[e] : lf->max_def;
    if (rep == 0) {
      if (++row >= d->nrows) break;
      starts[row] = vi;
    } else if (row < 0) {
      return vf_error_set(err, VF_ECORRUPT, "%s: column '%s': a list continues before any row",
                          pqt_name(f), col);
    }
    if (def == lf->max_def) vi++;
    else if (def >= elem_def)
      return vf_error_set(err, VF_ECORRUPT, "%s: row %lld: %s holds a null element", pqt_name(f),
                          (long long)(first + row), col);
  }
  if (row + 1 != d->nrows || vi != d->nvalues)
    return vf_error_set(err, VF_ECORRUPT, "%s: column '%s': levels do not match the row count",
                        pqt_name(f), col);
  starts[d->nrows] = vi;
  return VF_OK;
}

/* grow an array of `size`-byte items to hold `need` */
static vf_status grow(void **p, size_t *cap, size_t need, size_t size, vf_error *err) {
  if (need <= *cap) return VF_OK;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = vf_realloc(*p, c * size);
  if (!q || c * size / size != c) return vf_error_set(err, VF_ENOMEM, "out of memory");
  memset((char *)q + *cap * size, 0, (c - *cap) * size);
  *p = q;
  *cap = c;
  return VF_OK;
}

static vf_status check_rows(const pqt_file *f, size_t have, int64_t more, vf_error *err) {
  if (more < 0 || (uint64_t)more > BENCH_MAX_QUERIES - have)
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: more than %zu rows", pqt_name(f),
                        (size_t)BENCH_MAX_QUERIES);
  return VF_OK;
}

/* ---------------------------------------------------------------- queries */

static bool is_meta_column(const char *n) {
  return strcmp(n, "query_id") == 0 || strcmp(n, "__source_file__") == 0 ||
         strcmp(n, "__source_row__") == 0;
}

static bool looks_like_vector(const pqt_file *f, int top) {
  const pqt_schema *s = pqt_schema_of(f);
  const pqt_node *nd = &s->nodes[top];
  if (nd->nleaves != 1) return false;
  const pqt_leaf *lf = &s->leaves[nd->first_leaf];
  if (nd->kind == PQT_NODE_LIST && lf->max_rep == 1)
    return lf->type == PQT_FLOAT || lf->type == PQT_DOUBLE || lf->type == PQT_FIXED_LEN_BYTE_ARRAY;
  return nd->kind == PQT_NODE_PRIMITIVE && lf->type == PQT_FIXED_LEN_BYTE_ARRAY && lf->type_length >= 4;
}

static vf_status pick_column(const pqt_file *f, const char *column, const char **out, vf_error *err) {
  if (column) {
    *out = column;
    return VF_OK;
  }
  const pqt_schema *s = pqt_schema_of(f);
  const char *found = NULL;
  int n = 0;
  vf_buf names;
  vf_buf_init(&names, 4096);
  for (int i = 0; i < s->ntop; i++) {
    const char *nm = s->nodes[s->top[i]].name;
    if (is_meta_column(nm) || !looks_like_vector(f, s->top[i])) continue;
    vf_buf_printf(&names, NULL, "%s%s", n ? ", " : "", nm);
    found = nm;
    n++;
  }
  vf_buf_append(&names, "", 1, NULL);
  vf_status st = VF_OK;
  if (n == 0)
    st = vf_error_set(err, VF_ENOTFOUND, "%s: no vector column (list<float> or fixed-size binary)",
                      pqt_name(f));
  else if (n > 1)
    st = vf_error_set(err, VF_EUSAGE, "%s: several vector columns (%s); choose one with --column",
                      pqt_name(f), names.data ? (const char *)names.data : "");
  else
    *out = found;
  vf_buf_free(&names);
  return st;
}

void bench_queries_free(bench_queries *q) {
  if (!q) return;
  if (q->ids)
    for (size_t i = 0; i < q->n; i++) free(q->ids[i]);
  free(q->ids);
  free(q->vectors);
  free(q->column);
  for (size_t i = 0; q->filter_texts && i < q->n; i++) free(q->filter_texts[i]);
  free(q->filter_texts);
  if (q->filter_state) ev_filters_free(q->filter_state);
  free(q->filter_state);
  memset(q, 0, sizeof *q);
}

/* bench_queries_filter(): see bench.h. */
vf_status bench_queries_filter(bench_queries *q, const char *filter, const char *path,
                               vf_error *err) {
  ev_filters *x = vf_calloc(1, sizeof *x);
  if (!x) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = ev_filters_init(x, q->n, q->filter_texts, q->filter_hash, filter, path, err);
  if (st != VF_OK) {
    free(x);
    return st;
  }
  if (q->filter_state) ev_filters_free(q->filter_state);
  free(q->filter_state);
  q->filter_state = x;
  q->filters = x->any ? x->per_query : NULL;
  return VF_OK;
}

/* ------------------------------------------- vector files as queries / truth (issue 8) */

/* Queries and ground truth may also come from plain vector files: an ann-benchmarks HDF5
 * bundle (`test` = queries, `neighbors` = truth as row numbers of `train`, `distances` for the
 * scores), .npy / .fbin / .u8bin / .i8bin / .ibin queries, and a big-ann-benchmarks ground-truth
 * file.  Query i is "query_id" "<i>" on both sides; a neighbor row r is point id r (the id a
 * load with `id_expression: row` gives row r).  Anything else is read as parquet. */
enum { VK_PARQUET = 0, VK_HDF5, VK_VEC };

static int vec_kind(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return VK_PARQUET;
  uint8_t m[8] = {0};
  size_t n = fread(m, 1, sizeof m, fp);
  fclose(fp);
  if (n >= 4 && memcmp(m, "PAR1", 4) == 0) return VK_PARQUET;
  if (vec_is_hdf5(m, n)) return VK_HDF5;
  vec_dtype t;
  if ((n >= 6 && memcmp(m, "\x93NUMPY", 6) == 0) || fbin_dtype_of_path(path, &t)) return VK_VEC;
  return VK_PARQUET;
}

static char *row_text(uint64_t i) {
  char b[24];
  snprintf(b, sizeof b, "%llu", (unsigned long long)i);
  return vf_strdup(b);
}

static vf_status queries_from_vec(const char *path, const char *column, int kind,
                                  bench_queries *out, vf_error *err) {
  vec_file *f = NULL;
  /* hdf5: `column` names a dataset when the file has one of that name (bench passes the
   * config's vector name), else the bundle's "test" */
  const char *ds = column && kind == VK_HDF5 && hdf5_has_dataset(path, column) ? column : "test";
  vf_status st = kind == VK_HDF5 ? hdf5_open(path, ds, &f, err) : vec_open_path(path, NULL, &f, err);
  if (st != VF_OK) return vf_error_prefix(err, "queries file: ");
  uint64_t n = vec_rows(f), dim = vec_dim(f);
  if (n > BENCH_MAX_QUERIES || dim > INT32_MAX || n * dim > SIZE_MAX / sizeof(float)) {
    st = vf_error_set(err, VF_EUNSUPPORTED, "%s: %llu queries of dimension %llu is too many",
                      vec_name(f), (unsigned long long)n, (unsigned long long)dim);
    vec_close(f);
    return st;
  }
  out->n = (size_t)n;
  out->dim = (int32_t)dim;
  out->vectors = vf_mallocarray((size_t)(n * dim) + 1, sizeof(float));
  out->ids = vf_calloc((size_t)n + 1, sizeof *out->ids);
  out->column = vf_strdup(kind == VK_HDF5 ? ds : vec_format(f));
  if (!out->vectors || !out->ids || !out->column) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(vec_read_rows(f, 0, n, out->vectors, err));
  for (uint64_t i = 0; i < n; i++)
    if (!(out->ids[i] = row_text(i))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  vec_close(f);
  if (st != VF_OK) bench_queries_free(out);
  return st;
}

/* Score of an ann-benchmarks distance (larger = nearer, as in DESIGN.md "Corpus layout"). */
static float score_of(double d, bool angular) {
  return (float)(angular ? 1.0 - d : -d);
}

static vf_status truth_alloc(bench_truth *t, size_t n, size_t k, vf_error *err) {
  if (n > BENCH_MAX_QUERIES || k > BENCH_MAX_K || (k && n > BENCH_MAX_TRUTH_HITS / k))
    return vf_error_set(err, VF_EUNSUPPORTED, "ground truth too large: %zu rows x %zu hits", n, k);
  t->n = n;
  t->k = k;
  t->qids = vf_calloc(n + 1, sizeof *t->qids);
  t->hit_ids = vf_calloc(n * k + 1, sizeof *t->hit_ids);
  t->scores = vf_calloc(n * k + 1, sizeof *t->scores);
  t->counts = vf_calloc(n + 1, sizeof *t->counts);
  if (!t->qids || !t->hit_ids || !t->scores || !t->counts)
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    if (!(t->qids[i] = row_text(i))) return vf_error_set(err, VF_ENOMEM, "out of memory");
  return VF_OK;
}

/* Row i's hits from neighbor rows (a negative row ends the list: ann-benchmarks pads with -1). */
static vf_status truth_row(bench_truth *t, size_t i, const int64_t *nb, const float *dist,
                           bool angular, vf_error *err) {
  size_t c = 0;
  for (size_t j = 0; j < t->k; j++) {
    if (nb[j] < 0) break;
    if (!(t->hit_ids[i * t->k + j] = row_text((uint64_t)nb[j])))
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    t->scores[i * t->k + j] = dist ? score_of(dist[j], angular) : -(float)j;
    c++;
  }
  t->counts[i] = c;
  return VF_OK;
}

static vf_status truth_from_hdf5(const char *path, bench_truth *out, vf_error *err) {
  vec_file *nf = NULL, *df = NULL;
  char *metric = NULL;
  int64_t *nb = NULL;
  float *d = NULL;
  vf_status st = hdf5_open(path, "neighbors", &nf, err);
  if (st != VF_OK) return vf_error_prefix(err, "ground-truth file: ");
  if (hdf5_has_dataset(path, "distances")) VF_TRY(hdf5_open(path, "distances", &df, err));
  if (df && (vec_rows(df) != vec_rows(nf) || vec_dim(df) != vec_dim(nf)))
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: 'distances' (%llu x %llu) and 'neighbors' (%llu x "
                         "%llu) differ in shape", path, (unsigned long long)vec_rows(df),
                         (unsigned long long)vec_dim(df), (unsigned long long)vec_rows(nf),
                         (unsigned long long)vec_dim(nf)));
  vf_error e2;
  bool angular = hdf5_root_attr(path, "distance", &metric, &e2) == VF_OK && metric &&
                 (strcmp(metric, "angular") == 0 || strcmp(metric, "cosine") == 0);
  size_t n = (size_t)vec_rows(nf), k = (size_t)vec_dim(nf);
  VF_TRY(truth_alloc(out, n, k, err));
  if (metric) { /* the bundle's distance, as a metric the checks can compare */
    const char *mn = angular ? "cosine"
                     : strcmp(metric, "euclidean") == 0 || strcmp(metric, "l2") == 0 ? "euclid"
                     : strcmp(metric, "dot") == 0 || strcmp(metric, "ip") == 0       ? "dot"
                                                                                     : "";
    snprintf(out->metric, sizeof out->metric, "%s", mn);
  }
  nb = vf_mallocarray(k + 1, sizeof *nb);
  d = vf_mallocarray(k + 1, sizeof *d);
  if (!nb || !d) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < n; i++) {
    VF_TRY(vec_read_rows_i64(nf, i, 1, nb, err));
    if (df) VF_TRY(vec_read_rows(df, i, 1, d, err));
    VF_TRY(truth_row(out, i, nb, df ? d : NULL, angular, err));
  }
out:
  free(nb);
  free(d);
  free(metric);
  vec_close(nf);
  vec_close(df);
  if (st != VF_OK) bench_truth_free(out);
  return st;
}

static vf_status truth_from_bigann(const char *path, bench_truth *out, vf_error *err) {
  vec_gt gt;
  vf_status st = bigann_gt_read(path, &gt, err);
  if (st != VF_OK) return vf_error_prefix(err, "ground-truth file: ");
  int64_t *nb = NULL;
  VF_TRY(truth_alloc(out, gt.nq, gt.k, err));
  nb = vf_mallocarray((size_t)gt.k + 1, sizeof *nb);
  if (!nb) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < gt.nq; i++) {
    for (size_t j = 0; j < gt.k; j++)
      nb[j] = gt.ids[i * gt.k + j];
    VF_TRY(truth_row(out, i, nb, gt.dist + i * gt.k, false, err));
  }
out:
  free(nb);
  vec_gt_free(&gt);
  if (st != VF_OK) bench_truth_free(out);
  return st;
}

/* ---------------------------------- ann-filtering-benchmark bundles (issue 19) */

/* the tests.jsonl of a bundle path (a directory, a .tgz, or the tests.jsonl itself); NULL when
 * `path` is not one */
static vf_status bundle_tests(const char *path, char **tests, vf_error *err) {
  *tests = NULL;
  size_t n = strlen(path);
  if (n > 6 && strcmp(path + n - 6, ".jsonl") == 0) {
    *tests = vf_strdup(path);
    return *tests ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  char *dir = NULL;
  vf_status st = corpus_bundle_dir(path, &dir, err);
  if (st != VF_OK || !dir) return st;
  size_t l = strlen(dir) + 16;
  *tests = vf_malloc(l);
  if (*tests) snprintf(*tests, l, "%s/tests.jsonl", dir);
  free(dir);
  return *tests ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

/* queries from tests.jsonl: query i is "<i>", its `conditions` its filter */
static vf_status queries_from_bundle(const char *tests, bench_queries *out, vf_error *err) {
  corpus_bundle_tests t;
  vf_status st = corpus_bundle_tests_read(tests, &t, err);
  if (st != VF_OK) return st;
  out->n = t.n;
  out->dim = t.dim;
  out->vectors = t.queries;
  t.queries = NULL;
  out->ids = vf_calloc(t.n, sizeof *out->ids);
  out->column = vf_strdup("query");
  if (!out->ids || !out->column) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < t.n; i++)
    if (!(out->ids[i] = row_text(i))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  bool any = false;
  vf_md5_ctx md;
  vf_md5_init(&md);
  for (size_t i = 0; i < t.n; i++) {
    if (i) vf_md5_update(&md, "\n", 1);
    if (t.conditions[i]) vf_md5_update(&md, t.conditions[i], strlen(t.conditions[i]));
    any = any || t.conditions[i];
  }
  if (any) {
    out->filter_texts = t.conditions;
    t.conditions = NULL;
    uint8_t d[16];
    vf_md5_final(&md, d);
    snprintf(out->filter_hash, sizeof out->filter_hash, "%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
  }
out:
  corpus_bundle_tests_free(&t);
  if (st != VF_OK) bench_queries_free(out);
  return st;
}

/* bench_query_column(): see bench.h. */
vf_status bench_query_column(const char *path, const char *name, const char *column,
                             const char **out, vf_error *err) {
  *out = name;
  if (!column || strcmp(column, name) == 0 || vec_kind(path) != VK_PARQUET) return VF_OK;
  pqt_file *f = NULL;
  vf_status st = open_pqt(path, "queries", &f, err);
  if (st != VF_OK) return st;
  if (pqt_find_top(f, name) < 0 && pqt_find_top(f, column) >= 0) *out = column;
  pqt_close(f);
  return VF_OK;
}

vf_status bench_read_queries(const char *path, const char *column, bench_queries *out,
                             vf_error *err) {
  memset(out, 0, sizeof *out);
  char *tests = NULL;
  vf_status bst = bundle_tests(path, &tests, err);
  if (bst != VF_OK) return bst;
  if (tests) {
    bst = queries_from_bundle(tests, out, err);
    free(tests);
    return bst;
  }
  int kind = vec_kind(path);
  if (kind != VK_PARQUET) return queries_from_vec(path, column, kind, out, err);
  pqt_file *f = NULL;
  pqt_leaf_data ld[2];
  pqt_leaf_data_init(&ld[0]);
  pqt_leaf_data_init(&ld[1]);
  pqt_dense dn;
  memset(&dn, 0, sizeof dn);
  size_t idcap = 0, veccap = 0;
  const char *col = NULL;
  int idtop, idleaf, vtop, vleaf;
  vf_status st = VF_OK;
  VF_TRY(open_pqt(path, "queries", &f, err));
  VF_TRY(one_leaf(f, "query_id", &idtop, &idleaf, err));
  VF_TRY(pick_column(f, column, &col, err));
  VF_TRY(one_leaf(f, col, &vtop, &vleaf, err));
  if (!(out->column = vf_strdup(col))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  const pqt_file_meta *m = pqt_meta(f);
  int64_t first = 0;
  int32_t dim = 0;
  for (int g = 0; g < m->nrow_groups; g++) {
    int leaves[2] = {idleaf, vleaf};
    VF_TRY(pqt_read_leaves(f, g, leaves, 2, ld, err));
    VF_TRY(pqt_dense_from_leaf(f, vtop, &ld[1], first, &dim, &dn, err));
    int64_t rows = ld[0].nlevels;
    if (dn.rows != rows)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: query_id has %lld rows, %s %lld",
                           pqt_name(f), g, (long long)rows, col, (long long)dn.rows));
    VF_TRY(check_rows(f, out->n, rows, err));
    size_t need = out->n + (size_t)rows;
    VF_TRY(grow((void **)&out->ids, &idcap, need, sizeof *out->ids, err));
    if ((size_t)dim > SIZE_MAX / sizeof(float) / (need ? need : 1))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: queries too large", pqt_name(f)));
    VF_TRY(grow((void **)&out->vectors, &veccap, need * (size_t)dim, sizeof(float), err));
    if ((st = read_strings(f, idleaf, &ld[0], first, "query_id", out->ids + out->n, err)) != VF_OK) {
      for (size_t i = out->n; i < need; i++) free(out->ids[i]), out->ids[i] = NULL;
      goto out;
    }
    for (int64_t r = 0; r < rows && dn.null_rows; r++)
      if (dn.null_rows[r]) {
        out->n = need; /* the group's ids are read: freed with the others */
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %lld: query vector %s is null", pqt_name(f),
                             (long long)(first + r), col));
      }
    if (rows > 0)
      memcpy(out->vectors + out->n * (size_t)dim, dn.data, (size_t)rows * (size_t)dim * sizeof(float));
    out->n = need;
    first += rows;
  }
  out->dim = dim;
  for (size_t i = 0; i < out->n * (size_t)dim; i++)
    if (!isfinite(out->vectors[i]))
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %zu: query vector %s holds NaN or infinity",
                           pqt_name(f), i / (size_t)dim, col));
  if (out->n == 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no queries", pqt_name(f)));
  VF_TRY(ev_filter_column_read(f, out->n, &out->filter_texts, out->filter_hash, err));
out:
  pqt_leaf_data_free(&ld[0]);
  pqt_leaf_data_free(&ld[1]);
  pqt_dense_free(&dn);
  pqt_close(f);
  if (st != VF_OK) bench_queries_free(out);
  return st;
}

/* ------------------------------------------------------------------ truth */

void bench_truth_free(bench_truth *t) {
  if (!t) return;
  if (t->qids)
    for (size_t i = 0; i < t->n; i++) free(t->qids[i]);
  if (t->hit_ids)
    for (size_t i = 0; i < t->n * t->k; i++) free(t->hit_ids[i]);
  free(t->qids);
  free(t->hit_ids);
  free(t->scores);
  free(t->counts);
  free(t->id_expression);
  memset(t, 0, sizeof *t);
}

/* the vforge.bf.* metadata of a brute-force file (nothing from other writers) */
static vf_status truth_record(const pqt_file *f, bench_truth *t, vf_error *err) {
  const pqt_file_meta *m = pqt_meta(f);
  for (int i = 0; i < m->nkv; i++) {
    const char *k = m->kv[i].key, *v = m->kv[i].value;
    if (!k || !v) continue;
    if (strcmp(k, "vforge.bf.metric") == 0) snprintf(t->metric, sizeof t->metric, "%s", v);
    else if (strcmp(k, "vforge.bf.corpus_md5") == 0 && strlen(v) == 32)
      snprintf(t->files_md5, sizeof t->files_md5, "%s", v);
    else if (strcmp(k, "vforge.bf.id_expression") == 0 && !t->id_expression &&
             !(t->id_expression = vf_strdup(v)))
      return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  return VF_OK;
}

/* canonical id text: the store's form when the text is an id, else as written */
static char *canonical_id(const uint8_t *p, int64_t n) {
  corpus_id id;
  if (store_id_parse((const char *)p, (size_t)n, &id)) {
    char buf[37];
    store_id_format(&id, buf);
    return vf_strdup(buf);
  }
  return dup_bytes(p, n);
}

/* Row-major n x k arrays of the truth are rebuilt when a wider row raises k. */
static vf_status widen(bench_truth *t, size_t *cap_rows, size_t rows_needed, size_t k, vf_error *err) {
  if (k <= t->k && rows_needed <= *cap_rows) return VF_OK;
  size_t nk = k > t->k ? k : t->k;
  size_t cr = *cap_rows ? *cap_rows : 64;
  while (cr < rows_needed) cr *= 2;
  if (nk && cr > BENCH_MAX_TRUTH_HITS / nk)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "ground truth too large: %zu rows x %zu hits (at most %zu hits in all)",
                        rows_needed, nk, (size_t)BENCH_MAX_TRUTH_HITS);
  char **ids = vf_calloc(cr * (nk ? nk : 1), sizeof *ids);
  float *sc = vf_calloc(cr * (nk ? nk : 1), sizeof *sc);
  if (!ids || !sc) {
    free(ids);
    free(sc);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  for (size_t r = 0; r < t->n; r++)
    for (size_t j = 0; j < t->k; j++) {
      ids[r * nk + j] = t->hit_ids[r * t->k + j];
      sc[r * nk + j] = t->scores[r * t->k + j];
    }
  free(t->hit_ids);
  free(t->scores);
  t->hit_ids = ids;
  t->scores = sc;
  t->k = nk;
  *cap_rows = cr;
  return VF_OK;
}

/* truth from tests.jsonl: closest_ids (point numbers) with closest_scores */
static vf_status truth_from_bundle(const char *tests, bench_truth *out, vf_error *err) {
  corpus_bundle_tests t;
  vf_status st = corpus_bundle_tests_read(tests, &t, err);
  if (st != VF_OK) return st;
  size_t k = 0;
  for (size_t i = 0; i < t.n; i++)
    if (t.offsets[i + 1] - t.offsets[i] > k) k = t.offsets[i + 1] - t.offsets[i];
  if (k > BENCH_MAX_K) VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED, "%s: %zu closest ids (at most %zu are read)", tests, k, (size_t)BENCH_MAX_K));
  VF_TRY(truth_alloc(out, t.n, k ? k : 1, err));
  for (size_t i = 0; i < t.n; i++) {
    size_t c = t.offsets[i + 1] - t.offsets[i];
    out->counts[i] = c;
    for (size_t j = 0; j < c; j++) {
      out->hit_ids[i * out->k + j] = row_text(t.ids[t.offsets[i] + j]);
      out->scores[i * out->k + j] = t.scores[t.offsets[i] + j];
      if (!out->hit_ids[i * out->k + j]) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    }
  }
out:
  corpus_bundle_tests_free(&t);
  if (st != VF_OK) bench_truth_free(out);
  return st;
}

vf_status bench_read_truth(const char *path, bench_truth *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  char *tests = NULL;
  vf_status bst = bundle_tests(path, &tests, err);
  if (bst != VF_OK) return bst;
  if (tests) {
    bst = truth_from_bundle(tests, out, err);
    free(tests);
    return bst;
  }
  int kind = vec_kind(path);
  if (kind == VK_HDF5) return truth_from_hdf5(path, out, err);
  if (kind == VK_VEC) return truth_from_bigann(path, out, err);
  {
    /* a regular file that is neither parquet nor a vector file: a big-ann ground truth */
    FILE *fp = fopen(path, "rb");
    uint8_t m[4] = {0};
    size_t got = fp ? fread(m, 1, 4, fp) : 0;
    if (fp) fclose(fp);
    size_t pl = strlen(path);
    if (fp && got == 4 && memcmp(m, "PAR1", 4) != 0 &&
        !(pl >= 8 && strcmp(path + pl - 8, ".parquet") == 0))
      return truth_from_bigann(path, out, err);
  }
  pqt_file *f = NULL;
  pqt_leaf_data ld[3];
  for (int i = 0; i < 3; i++) pqt_leaf_data_init(&ld[i]);
  int64_t *s_ids = NULL, *s_sc = NULL;
  size_t cap_rows = 0, qcap = 0, ccap = 0;
  int qtop, qleaf, itop, ileaf, stop, sleaf;
  vf_status st = VF_OK;
  VF_TRY(open_pqt(path, "ground-truth", &f, err));
  VF_TRY(truth_record(f, out, err));
  VF_TRY(one_leaf(f, "query_id", &qtop, &qleaf, err));
  VF_TRY(one_leaf(f, "hit_ids", &itop, &ileaf, err));
  VF_TRY(one_leaf(f, "hit_scores", &stop, &sleaf, err));
  const pqt_leaf *la = &pqt_schema_of(f)->leaves[ileaf], *lb = &pqt_schema_of(f)->leaves[sleaf];
  if (la->type != PQT_BYTE_ARRAY)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: hit_ids must be list<string>", pqt_name(f)));
  if (lb->type != PQT_FLOAT && lb->type != PQT_DOUBLE)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: hit_scores must be list<float>", pqt_name(f)));
  const pqt_file_meta *m = pqt_meta(f);
  int64_t first = 0;
  for (int g = 0; g < m->nrow_groups; g++) {
    int leaves[3] = {qleaf, ileaf, sleaf};
    VF_TRY(pqt_read_leaves(f, g, leaves, 3, ld, err));
    int64_t rows = ld[0].nlevels;
    if (ld[1].nrows != rows || ld[2].nrows != rows)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: columns of different row counts",
                           pqt_name(f), g));
    VF_TRY(check_rows(f, out->n, rows, err));
    int64_t *a = vf_realloc(s_ids, ((size_t)rows + 1) * sizeof *a);
    if (a) s_ids = a;
    int64_t *b = vf_realloc(s_sc, ((size_t)rows + 1) * sizeof *b);
    if (b) s_sc = b;
    if (!a || !b) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(list_rows(f, itop, ileaf, &ld[1], first, "hit_ids", s_ids, err));
    VF_TRY(list_rows(f, stop, sleaf, &ld[2], first, "hit_scores", s_sc, err));
    size_t need = out->n + (size_t)rows, kmax = 0;
    for (int64_t r = 0; r < rows; r++) {
      int64_t c = s_ids[r + 1] - s_ids[r];
      if (c != s_sc[r + 1] - s_sc[r])
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %lld: %lld hit_ids but %lld hit_scores",
                             pqt_name(f), (long long)(first + r), (long long)c,
                             (long long)(s_sc[r + 1] - s_sc[r])));
      if ((uint64_t)c > BENCH_MAX_K)
        VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED, "%s: row %lld: %lld hits (at most %zu are read)",
                             pqt_name(f), (long long)(first + r), (long long)c, (size_t)BENCH_MAX_K));
      if ((size_t)c > kmax) kmax = (size_t)c;
    }
    VF_TRY(widen(out, &cap_rows, need, kmax, err));
    VF_TRY(grow((void **)&out->qids, &qcap, need, sizeof *out->qids, err));
    VF_TRY(grow((void **)&out->counts, &ccap, need, sizeof *out->counts, err));
    if ((st = read_strings(f, qleaf, &ld[0], first, "query_id", out->qids + out->n, err)) != VF_OK) {
      for (size_t i = out->n; i < need; i++) free(out->qids[i]), out->qids[i] = NULL;
      goto out;
    }
    size_t n0 = out->n;
    out->n = need; /* rows are owned from here (freed by bench_truth_free on error) */
    for (int64_t r = 0; r < rows; r++) {
      size_t row = n0 + (size_t)r;
      int64_t c = s_ids[r + 1] - s_ids[r];
      out->counts[row] = (size_t)c;
      for (int64_t j = 0; j < c; j++) {
        int64_t vi = s_ids[r] + j, si = s_sc[r] + j;
        const uint8_t *p = ld[1].values.data + ld[1].offsets[vi];
        char *id = canonical_id(p, ld[1].offsets[vi + 1] - ld[1].offsets[vi]);
        if (!id) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
        out->hit_ids[row * out->k + (size_t)j] = id;
        float sc;
        if (ld[2].type == PQT_DOUBLE) {
          double dv;
          memcpy(&dv, ld[2].values.data + (size_t)si * 8, 8);
          sc = (float)dv;
        } else {
          memcpy(&sc, ld[2].values.data + (size_t)si * 4, 4);
        }
        if (isnan(sc))
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %lld: hit_scores[%lld] is NaN", pqt_name(f),
                               (long long)(first + r), (long long)j));
        out->scores[row * out->k + (size_t)j] = sc;
      }
    }
    first += rows;
  }
  if (out->n == 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no rows", pqt_name(f)));
  /* the file's K (brute-force records it): filtered ground truth may hold fewer hits per row */
  for (int i = 0; i < m->nkv; i++) {
    if (!m->kv[i].key || strcmp(m->kv[i].key, "vforge.bf.k") != 0 || !m->kv[i].value) continue;
    unsigned long long fk = strtoull(m->kv[i].value, NULL, 10);
    if (fk > out->k && fk <= BENCH_MAX_K) VF_TRY(widen(out, &cap_rows, out->n, (size_t)fk, err));
  }
out:
  for (int i = 0; i < 3; i++) pqt_leaf_data_free(&ld[i]);
  free(s_ids);
  free(s_sc);
  pqt_close(f);
  if (st != VF_OK) bench_truth_free(out);
  return st;
}

/* ------------------------------------------------------------------ align */

static const bench_truth *g_sort_truth; /* qsort has no user pointer in C17 */

static int cmp_qid(const void *a, const void *b) {
  return strcmp(g_sort_truth->qids[*(const size_t *)a], g_sort_truth->qids[*(const size_t *)b]);
}

vf_status bench_align(const bench_queries *q, const bench_truth *t, size_t **rows, vf_error *err) {
  *rows = NULL;
  size_t *order = vf_mallocarray(t->n ? t->n : 1, sizeof *order);
  size_t *r = vf_mallocarray(q->n ? q->n : 1, sizeof *r);
  if (!order || !r) {
    free(order);
    free(r);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < t->n; i++) order[i] = i;
  /* insertion-free: sort indices by query id (single-threaded; the static is set only here) */
  g_sort_truth = t;
  qsort(order, t->n, sizeof *order, cmp_qid);
  g_sort_truth = NULL;
  vf_status st = VF_OK;
  for (size_t i = 1; i < t->n; i++)
    if (strcmp(t->qids[order[i - 1]], t->qids[order[i]]) == 0)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "ground truth holds query_id '%s' twice (rows %zu and %zu)",
                           t->qids[order[i]], order[i - 1], order[i]));
  size_t missing = 0;
  const char *first_missing = NULL;
  for (size_t i = 0; i < q->n; i++) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (strcmp(t->qids[order[mid]], q->ids[i]) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < t->n && strcmp(t->qids[order[lo]], q->ids[i]) == 0) {
      r[i] = order[lo];
    } else {
      if (!first_missing) first_missing = q->ids[i];
      missing++;
    }
  }
  if (missing)
    VF_FAIL(vf_error_set(err, VF_EUSAGE,
                         "the ground truth has no row for query_id '%s' (%zu of %zu queries lack one; "
                         "was it computed for this queries file?)",
                         first_missing, missing, q->n));
  *rows = r;
out:
  free(order);
  if (st != VF_OK) free(r);
  return st;
}

/* ------------------------------------------------------- local store spec */

void bench_spec_free(store_vector_spec *v, int n) {
  if (!v) return;
  for (int i = 0; i < n; i++) free((char *)v[i].name);
  free(v);
}

/* the JSON string value after `"key": ` on one line; simple escapes only */
static bool line_str(const char *line, const char *end, const char *key, char **out) {
  char pat[32];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  size_t pl = strlen(pat);
  for (const char *p = line; p + pl <= end; p++) {
    if (memcmp(p, pat, pl) != 0) continue;
    vf_buf b;
    vf_buf_init(&b, 4096);
    for (const char *c = p + pl; c < end; c++) {
      if (*c == '"') {
        if (vf_buf_append(&b, "", 1, NULL) != VF_OK) break;
        *out = (char *)b.data;
        return true;
      }
      if (*c == '\\') {
        if (++c >= end || (*c != '"' && *c != '\\' && *c != '/')) break;
      }
      if (vf_buf_append(&b, c, 1, NULL) != VF_OK) break;
    }
    vf_buf_free(&b);
    return false;
  }
  return false;
}

static bool line_int(const char *line, const char *end, const char *key, int32_t *out) {
  char pat[32];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  size_t pl = strlen(pat);
  for (const char *p = line; p + pl <= end; p++) {
    if (memcmp(p, pat, pl) != 0) continue;
    int64_t v = 0;
    const char *c = p + pl;
    if (c >= end || *c < '0' || *c > '9') return false;
    for (; c < end && *c >= '0' && *c <= '9'; c++) {
      v = v * 10 + (*c - '0');
      if (v > INT32_MAX) return false;
    }
    *out = (int32_t)v;
    return true;
  }
  return false;
}

vf_status bench_local_spec(const char *path, const char *collection, store_vector_spec **out,
                           int *n, vf_error *err) {
  *out = NULL;
  *n = 0;
  const char *root = path && *path ? path : "./vforge-data";
  size_t pl = strlen(root) + strlen(collection) + 32;
  char *p = vf_malloc(pl);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  snprintf(p, pl, "%s/%s/collection.json", root, collection);
  FILE *fp = fopen(p, "rb");
  if (!fp) {
    vf_status st = vf_error_set(err, VF_ENOTFOUND,
                                "collection '%s' does not exist in %s (no %s); load it first",
                                collection, root, p);
    free(p);
    return st;
  }
  vf_buf text;
  vf_buf_init(&text, (size_t)1 << 20);
  char chunk[4096];
  size_t got;
  vf_status st = VF_OK;
  store_vector_spec *v = NULL;
  int nv = 0;
  char *name = NULL, *type = NULL, *dist = NULL;
  while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) VF_TRY(vf_buf_append(&text, chunk, got, err));
  fclose(fp);
  fp = NULL;
  VF_TRY(vf_buf_append(&text, "", 1, err));
  const char *s = (const char *)text.data;
  /* one vector per line: {"name": ..., "type": ..., "dim": N, "distance": ...} */
  while (*s) {
    const char *e = strchr(s, '\n');
    if (!e) e = s + strlen(s);
    int32_t dim = 0;
    if (line_str(s, e, "name", &name) && line_str(s, e, "type", &type) &&
        line_int(s, e, "dim", &dim) && line_str(s, e, "distance", &dist)) {
      store_vector_spec sp = {name, CORPUS_VEC_DENSE, CORPUS_COSINE, dim};
      vf_status bad = VF_OK;
      if (strcmp(type, "sparse") == 0) sp.kind = CORPUS_VEC_SPARSE;
      else if (strcmp(type, "multivector") == 0) sp.kind = CORPUS_VEC_MULTI;
      else if (strcmp(type, "dense") != 0) bad = VF_ECORRUPT;
      if (bad == VF_OK && !idx_metric_parse(dist, &sp.distance)) bad = VF_ECORRUPT;
      if (bad == VF_OK && nv >= 64) bad = VF_ECORRUPT;
      store_vector_spec *nvp = bad == VF_OK ? vf_realloc(v, (size_t)(nv + 1) * sizeof *v) : NULL;
      if (bad == VF_OK && !nvp) bad = VF_ENOMEM;
      if (bad != VF_OK)
        VF_FAIL(vf_error_set(err, bad, "%s: cannot read the vector spec line '%.*s'", p, (int)(e - s > 200 ? 200 : e - s), s));
      v = nvp;
      v[nv++] = sp;
      name = NULL;
    }
    free(name);
    free(type);
    free(dist);
    name = type = dist = NULL;
    s = *e ? e + 1 : e;
  }
  if (nv == 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no vectors listed", p));
  *out = v;
  *n = nv;
out:
  if (fp) fclose(fp);
  free(name);
  free(type);
  free(dist);
  vf_buf_free(&text);
  free(p);
  if (st != VF_OK) bench_spec_free(v, nv);
  return st;
}
