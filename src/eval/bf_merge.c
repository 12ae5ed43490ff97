/*
 * Brute-force results I/O and the merge of per-job partials (DESIGN.md "Corpus layout":
 * brute_force_queries_<N>_k<K>.parquet and _bf_partial_queries_<N>_k<K>/rank<NNN>.parquet).
 *
 * Every partial carries key-value metadata (vforge.bf.*: queries file md5 and row count, K,
 * metric, vector column, corpus file-list md5, number of jobs, rank) so the merge can refuse a
 * missing rank or a partial computed for other inputs, naming what differs.  Partial scores are
 * already exact (one fixed-order kernel, see bruteforce.c), so merging is a selection under the
 * same order (score desc, point id asc) and the merged file equals a single-job run byte for byte.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bf_internal.h"
#include "vforge/index.h"
#include "vforge/io.h"
#include "vforge/vecfile.h"

#define EV_MAX_QUERIES ((uint64_t)1 << 26)
#define EV_MAX_ID 1024

/* md5 of a remote (s3://, hf://, http(s)://) queries file, read through io_open_uri */
static vf_status remote_md5(const char *uri, char out[33], vf_error *err) {
  io_source *src = NULL;
  vf_status st = io_open_uri(uri, &src, err);
  if (st != VF_OK) return st;
  vf_md5_ctx c;
  vf_md5_init(&c);
  size_t cap = (size_t)4 << 20;
  uint8_t *buf = vf_malloc(cap);
  if (!buf) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (uint64_t off = 0; off < src->size;) {
    size_t n = src->size - off < cap ? (size_t)(src->size - off) : cap;
    VF_TRY(io_read_at(src, off, buf, n, err));
    vf_md5_update(&c, buf, n);
    off += n;
  }
  uint8_t d[16];
  vf_md5_final(&c, d);
  vf_md5_hex(d, out);
out:
  free(buf);
  io_close(src);
  return st;
}

static vf_status file_md5(const char *path, char out[33], vf_error *err) {
  if (strstr(path, "://") && strncmp(path, "file://", 7) != 0) return remote_md5(path, out, err);
  FILE *fp = fopen(path, "rb");
  if (!fp) return vf_error_set(err, VF_ENOTFOUND, "%s: cannot open: %s", path, VF_STRERROR(errno));
  vf_md5_ctx c;
  vf_md5_init(&c);
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, fp)) > 0) vf_md5_update(&c, buf, n);
  bool bad = ferror(fp);
  fclose(fp);
  if (bad) return vf_error_set(err, VF_EIO, "%s: read error", path);
  uint8_t d[16];
  vf_md5_final(&c, d);
  vf_md5_hex(d, out);
  return VF_OK;
}

/* a flat string column's value of `row` (def NULL = no nulls); NULL for null */
static vf_status flat_strings(const pqt_file *f, const pqt_leaf_data *ld, const char *col,
                              int64_t first_row, char **dst, vf_error *err) {
  const pqt_leaf *lf = &pqt_schema_of(f)->leaves[ld->leaf];
  int64_t vi = 0;
  for (int64_t r = 0; r < ld->nlevels; r++) {
    if (ld->def && ld->def[r] != lf->max_def)
      return vf_error_set(err, VF_ECORRUPT, "%s: row %" PRId64 ": %s is null", pqt_name(f),
                          first_row + r, col);
    if (vi >= ld->nvalues) return vf_error_set(err, VF_ECORRUPT, "%s: %s: values missing", pqt_name(f), col);
    int64_t a = ld->offsets[vi], b = ld->offsets[vi + 1];
    if (b - a > EV_MAX_ID)
      return vf_error_set(err, VF_ECORRUPT, "%s: row %" PRId64 ": %s longer than %d bytes",
                          pqt_name(f), first_row + r, col, EV_MAX_ID);
    dst[r] = vf_strndup((const char *)ld->values.data + a, (size_t)(b - a));
    if (!dst[r]) return vf_error_set(err, VF_ENOMEM, "out of memory");
    vi++;
  }
  return VF_OK;
}

static vf_status string_leaf(const pqt_file *f, const char *col, int *leaf, vf_error *err) {
  int top = pqt_find_top(f, col);
  if (top < 0) return vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s'", pqt_name(f), col);
  const pqt_node *n = &pqt_schema_of(f)->nodes[top];
  if (n->kind != PQT_NODE_PRIMITIVE || pqt_schema_of(f)->leaves[n->leaf].type != PQT_BYTE_ARRAY)
    return vf_error_set(err, VF_ECORRUPT, "%s: column '%s' is not a string column", pqt_name(f), col);
  *leaf = n->leaf;
  return VF_OK;
}

/* A local vector file as queries (the forms `bench` reads, bench_read.c): an ann-benchmarks
 * HDF5 bundle's `test`, or .npy / .fbin / .u8bin / .i8bin rows; query i has query_id "<i>".
 * *is_vec false: not such a file (read as parquet). */
static vf_status queries_from_vec(const char *path, ev_queries *q, bool *is_vec, vf_error *err) {
  *is_vec = false;
  if (strstr(path, "://")) return VF_OK;
  FILE *fp = fopen(path, "rb");
  if (!fp) return VF_OK; /* the parquet path reports it */
  uint8_t m[8] = {0};
  size_t n = fread(m, 1, sizeof m, fp);
  fclose(fp);
  vec_dtype t;
  bool h5 = vec_is_hdf5(m, n);
  if (!h5 && !(n >= 6 && memcmp(m, "\x93NUMPY", 6) == 0) && !fbin_dtype_of_path(path, &t)) return VF_OK;
  if (n >= 4 && memcmp(m, "PAR1", 4) == 0) return VF_OK;
  *is_vec = true;
  vec_file *f = NULL;
  vf_status st = h5 ? hdf5_open(path, "test", &f, err) : vec_open_path(path, NULL, &f, err);
  if (st != VF_OK) return vf_error_prefix(err, "queries file: ");
  uint64_t rows = vec_rows(f), dim = vec_dim(f);
  if (rows < 1 || rows > EV_MAX_QUERIES || dim > 1000000)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: %" PRIu64 " queries of dimension %" PRIu64
                         " (expected 1..%" PRIu64 " queries)", path, rows, dim, EV_MAX_QUERIES));
  q->n = rows;
  q->dim = (int32_t)dim;
  q->kind = CORPUS_VEC_DENSE;
  q->vecs = vf_mallocarray((size_t)(rows * dim), sizeof(float));
  q->ids = vf_calloc((size_t)rows, sizeof(char *));
  q->vec_name = vf_strdup(h5 ? "test" : "vector");
  if (!q->vecs || !q->ids || !q->vec_name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(vec_read_rows(f, 0, rows, q->vecs, err));
  for (uint64_t i = 0; i < rows; i++) {
    q->ids[i] = ev_strdupf(err, "%" PRIu64, i);
    if (!q->ids[i]) VF_FAIL(VF_ENOMEM);
  }
  /* NaN / infinity cannot be ranked */
  for (uint64_t i = 0; i < rows * dim; i++)
    if (!isfinite(q->vecs[i]))
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query %" PRIu64 " holds NaN or infinity", path,
                           i / dim));
out:
  vec_close(f);
  return st;
}

/* ev_queries_matrix(): see bf_internal.h. */
vf_status ev_queries_matrix(const float *v, uint64_t n, int32_t dim, const char *name,
                            ev_queries *q, vf_error *err) {
  memset(q, 0, sizeof *q);
  if (!v || n < 1 || n > EV_MAX_QUERIES || dim < 1 || dim > 1000000)
    return vf_error_set(err, VF_EUSAGE, "queries: %" PRIu64 " x %d (expected 1..%" PRIu64
                        " queries of dimension >= 1)", n, (int)dim, EV_MAX_QUERIES);
  size_t cnt = (size_t)n * (size_t)dim;
  q->n = n;
  q->dim = dim;
  q->kind = CORPUS_VEC_DENSE;
  q->vecs = vf_mallocarray(cnt, sizeof(float));
  q->ids = vf_calloc((size_t)n, sizeof(char *));
  q->vec_name = vf_strdup(name ? name : "vector");
  vf_status st = VF_OK;
  if (!q->vecs || !q->ids || !q->vec_name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  memcpy(q->vecs, v, cnt * sizeof(float));
  for (size_t i = 0; i < cnt; i++)
    if (!isfinite(v[i]))
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "queries: query %zu holds NaN or infinity",
                           i / (size_t)dim));
  for (uint64_t i = 0; i < n; i++)
    if (!(q->ids[i] = ev_strdupf(err, "%" PRIu64, i))) VF_FAIL(VF_ENOMEM);
  /* the "queries file" md5 of the metadata: the matrix's bytes */
  uint8_t dg[16];
  vf_md5(v, cnt * sizeof(float), dg);
  for (int i = 0; i < 16; i++) snprintf(q->md5 + 2 * i, 3, "%02x", dg[i]);
out:
  if (st != VF_OK) ev_queries_free(q);
  return st;
}

/* row group rg (nr rows from `first`) of a queries file's multivector / sparse column: one value
 * (`what`) per row */
static vf_status query_batch(corpus_records *rr, int rg, int64_t first, int64_t nr,
                             const char *path, const char *what, corpus_batch *bt, vf_error *err) {
  vf_status st = corpus_records_read(rr, rg, (uint64_t)first, bt, NULL, err);
  if (st != VF_OK) return st;
  if ((int64_t)bt->n != nr)
    return vf_error_set(err, VF_ECORRUPT, "%s: row group %d: %zu %s for %" PRId64 " rows", path, rg,
                        bt->n, what, nr);
  return VF_OK;
}

/* ev_queries_read(): see bf_internal.h. */
vf_status ev_queries_read(const char *path, const char *column, ev_queries *q, vf_error *err) {
  memset(q, 0, sizeof *q);
  pqt_file *f = NULL;
  vf_status st = file_md5(path, q->md5, err);
  if (st != VF_OK) return st;
  bool is_vec = false;
  char md5[33];
  memcpy(md5, q->md5, sizeof md5);
  st = queries_from_vec(path, q, &is_vec, err);
  memcpy(q->md5, md5, sizeof md5);
  if (st != VF_OK) ev_queries_free(q);
  if (st != VF_OK || is_vec) return st;
  pqt_leaf_data ld, vl;
  pqt_leaf_data_init(&ld);
  pqt_leaf_data_init(&vl);
  pqt_dense dense;
  memset(&dense, 0, sizeof dense);
  corpus_records *rr = NULL;
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  vf_buf mv, si;
  /* the queries' multivector / sparse values and sparse indices: at most EV_MAX_QUERIES rows
   * (checked below), each a vector the record reader already bounded */
  VF_BUF_INIT(&mv, VF_BUF_MAX_ROWS_HELD);
  VF_BUF_INIT(&si, VF_BUF_MAX_ROWS_HELD);
  ev_pair *tmp = NULL;
  size_t tmp_cap = 0;
  VF_TRY(ev_open_path(path, &f, err));
  int top = -1, idleaf = -1;
  VF_TRY(ev_vector_column(f, column, &top, &q->kind, err));
  VF_TRY(string_leaf(f, "query_id", &idleaf, err));
  const pqt_file_meta *m = pqt_meta(f);
  if (m->num_rows < 1 || (uint64_t)m->num_rows > EV_MAX_QUERIES)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: %" PRId64 " queries (expected 1..%" PRIu64 ")",
                         path, m->num_rows, EV_MAX_QUERIES));
  q->n = (uint64_t)m->num_rows;
  q->ids = vf_calloc(q->n, sizeof(char *));
  q->vec_name = vf_strdup(pqt_schema_of(f)->nodes[top].name);
  if (!q->ids || !q->vec_name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  /* multivectors: decoded and checked by the record reader */
  corpus_file qf = {.uri = (char *)path, .key = (char *)path, .size = 0};
  corpus_vec_source vs = {.name = q->vec_name, .kind = q->kind, .distance = CORPUS_DOT,
                          .column = q->vec_name};
  corpus_record_spec spec = {.vectors = &vs, .nvectors = 1};
  if (q->kind != CORPUS_VEC_DENSE) {
    VF_TRY(corpus_records_open(&qf, &spec, 0, &rr, err));
    q->offsets = vf_calloc(q->n + 1, sizeof(int64_t));
    if (!q->offsets) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  int64_t first = 0;
  for (int rg = 0; rg < m->nrow_groups; rg++) {
    int64_t nr = m->row_groups[rg].num_rows;
    if (nr < 0 || first + nr > m->num_rows)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d row count out of range", path, rg));
    VF_TRY(pqt_read_leaves(f, rg, &idleaf, 1, &ld, err));
    if (ld.nlevels != nr)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: query_id has %" PRId64 " rows, expected %" PRId64,
                           path, rg, ld.nlevels, nr));
    VF_TRY(flat_strings(f, &ld, "query_id", first, q->ids + first, err));
    if (q->kind == CORPUS_VEC_SPARSE) {
      VF_TRY(query_batch(rr, rg, first, nr, path, "sparse vectors", &bt, err));
      const corpus_vec_batch *vb = &bt.vectors[0];
      for (int64_t r = 0; r < nr; r++) {
        int64_t a = vb->offsets[r], c = vb->offsets[r + 1] - a;
        if (c < 1 || (vb->null_rows && vb->null_rows[r]))
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query row %" PRId64 " has no sparse entries",
                               path, first + r));
        q->offsets[first + r + 1] = q->offsets[first + r] + c;
        size_t at = si.len / 4;
        VF_TRY(vf_buf_append(&si, vb->indices + a, 4 * (size_t)c, err));
        VF_TRY(vf_buf_append(&mv, vb->values + a, 4 * (size_t)c, err));
        if ((size_t)c > tmp_cap) {
          free(tmp);
          tmp = vf_mallocarray((size_t)c, sizeof *tmp);
          tmp_cap = tmp ? (size_t)c : 0;
          if (!tmp) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
        }
        if (!ev_sparse_sort((uint32_t *)si.data + at, (float *)mv.data + at, (size_t)c, tmp))
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query row %" PRId64 " repeats a sparse index",
                               path, first + r));
      }
      q->dim = 1; /* unused for sparse */
      first += nr;
      continue;
    }
    if (q->kind == CORPUS_VEC_MULTI) {
      VF_TRY(query_batch(rr, rg, first, nr, path, "multivectors", &bt, err));
      const corpus_vec_batch *vb = &bt.vectors[0];
      if (q->dim && vb->dim != q->dim)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: vectors of dimension %d, earlier %d",
                             path, rg, vb->dim, q->dim));
      for (int64_t r = 0; r < nr; r++) {
        int64_t c = vb->offsets[r + 1] - vb->offsets[r];
        if (c < 1 || (vb->null_rows && vb->null_rows[r]))
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query row %" PRId64 " has no vectors", path,
                               first + r));
        q->offsets[first + r + 1] = q->offsets[first + r] + c;
        VF_TRY(vf_buf_append(&mv, vb->multi + (size_t)vb->offsets[r] * (size_t)vb->dim,
                             sizeof(float) * (size_t)c * (size_t)vb->dim, err));
      }
      q->dim = vb->dim;
      first += nr;
      continue;
    }
    VF_TRY(ev_read_dense(f, top, rg, first, &q->dim, &vl, &dense, err));
    if (dense.rows != nr)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: %" PRId64 " vectors for %" PRId64 " rows",
                           path, rg, dense.rows, nr));
    if (dense.null_rows)
      for (int64_t r = 0; r < nr; r++)
        if (dense.null_rows[r])
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query row %" PRId64 " has a null vector",
                               path, first + r));
    if (!q->vecs) {
      q->vecs = vf_mallocarray(q->n, sizeof(float) * (size_t)(q->dim > 0 ? q->dim : 1));
      if (!q->vecs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for the queries"));
    }
    memcpy(q->vecs + (size_t)first * (size_t)q->dim, dense.data, sizeof(float) * (size_t)nr * (size_t)q->dim);
    first += nr;
  }
  if (first != m->num_rows)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row groups hold %" PRId64 " rows, footer says %" PRId64,
                         path, first, m->num_rows));
  if (q->dim <= 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: empty query vectors", path));
  VF_TRY(ev_filter_column_read(f, q->n, &q->filters, q->fhash, err));
  if (q->kind == CORPUS_VEC_MULTI) {
    q->vecs = (float *)mv.data; /* vf_buf storage is malloc'd: owned by q now */
    mv.data = NULL;
    if (!q->vecs) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: empty query vectors", path));
  }
  if (q->kind == CORPUS_VEC_SPARSE) {
    q->values = (float *)mv.data;
    q->indices = (uint32_t *)si.data;
    mv.data = si.data = NULL;
    if (!q->values || !q->indices) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: empty query vectors", path));
  }
out:
  free(tmp);
  vf_buf_free(&si);
  corpus_records_close(rr);
  corpus_batch_free(&bt);
  vf_buf_free(&mv);
  pqt_leaf_data_free(&ld);
  pqt_leaf_data_free(&vl);
  pqt_dense_free(&dense);
  pqt_close(f);
  if (st != VF_OK) ev_queries_free(q);
  return st;
}

/* ev_queries_free(): see bf_internal.h. */
void ev_queries_free(ev_queries *q) {
  for (uint64_t i = 0; q->ids && i < q->n; i++) free(q->ids[i]);
  for (uint64_t i = 0; q->filters && i < q->n; i++) free(q->filters[i]);
  free(q->filters);
  free(q->ids);
  free(q->vecs);
  free(q->offsets);
  free(q->indices);
  free(q->values);
  free(q->vec_name);
  memset(q, 0, sizeof *q);
}

/* ev_metadata_kv(): see bf_internal.h. */
vf_status ev_metadata_kv(const ev_queries *q, uint32_t k, corpus_distance metric,
                         const char *column, const char *corpus_md5, const char *id_expression,
                         uint32_t num_jobs, uint32_t rank, bool partial, const char *filter_tag,
                         char ***kv, int *nkv, vf_error *err) {
  bool filtered = filter_tag && *filter_tag;
  int n = (partial ? 18 : 14) + (filtered ? 2 : 0);
  char **a = vf_calloc((size_t)n, sizeof(char *));
  if (!a) return vf_error_set(err, VF_ENOMEM, "out of memory");
  int i = 0;
  a[i++] = ev_strdupf(err, "vforge.bf.queries_md5");
  a[i++] = ev_strdupf(err, "%s", q->md5);
  a[i++] = ev_strdupf(err, "vforge.bf.queries");
  a[i++] = ev_strdupf(err, "%" PRIu64, q->n);
  a[i++] = ev_strdupf(err, "vforge.bf.k");
  a[i++] = ev_strdupf(err, "%u", k);
  a[i++] = ev_strdupf(err, "vforge.bf.metric");
  a[i++] = ev_strdupf(err, "%s", idx_metric_name(metric));
  a[i++] = ev_strdupf(err, "vforge.bf.column");
  a[i++] = ev_strdupf(err, "%s", column ? column : "");
  a[i++] = ev_strdupf(err, "vforge.bf.corpus_md5");
  a[i++] = ev_strdupf(err, "%s", corpus_md5);
  a[i++] = ev_strdupf(err, "vforge.bf.id_expression");
  a[i++] = ev_strdupf(err, "%s", id_expression && *id_expression ? id_expression
                                                                   : CORPUS_DEFAULT_ID_EXPRESSION);
  if (partial) {
    a[i++] = ev_strdupf(err, "vforge.bf.num_jobs");
    a[i++] = ev_strdupf(err, "%u", num_jobs);
    a[i++] = ev_strdupf(err, "vforge.bf.rank");
    a[i++] = ev_strdupf(err, "%u", rank);
  }
  if (filtered) { /* absent from unfiltered files, which stay as they were */
    a[i++] = ev_strdupf(err, "vforge.bf.filter");
    a[i++] = ev_strdupf(err, "%s", filter_tag + 2);
  }
  for (int j = 0; j < n; j++)
    if (!a[j]) {
      ev_kv_free(a, n);
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    }
  *kv = a;
  *nkv = n;
  return VF_OK;
}

/* ev_kv_free(): see bf_internal.h. */
void ev_kv_free(char **kv, int nkv) {
  for (int i = 0; kv && i < nkv; i++) free(kv[i]);
  free(kv);
}

/* ev_results_write(): see bf_internal.h. */
vf_status ev_results_write(const char *path, const ev_queries *q, uint32_t k, const ev_hit *hits,
                           const uint32_t *nhits, const char *const *kv, int nkv, vf_error *err) {
  uint64_t total = 0;
  for (uint64_t i = 0; i < q->n; i++) total += nhits[i];
  const char **strs = vf_mallocarray(total ? total : 1, sizeof(char *));
  float *scores = vf_mallocarray(total ? total : 1, sizeof(float));
  int64_t *off = vf_mallocarray(q->n + 1, sizeof(int64_t));
  vf_status st = VF_OK;
  pqt_writer *w = NULL;
  char *local = NULL;
  if (!strs || !scores || !off) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  uint64_t p = 0;
  for (uint64_t i = 0; i < q->n; i++) {
    off[i] = (int64_t)p;
    for (uint32_t h = 0; h < nhits[i]; h++, p++) {
      strs[p] = hits[i * k + h].id;
      scores[p] = hits[i * k + h].score;
    }
  }
  off[q->n] = (int64_t)p;
  pqt_wcolumn cols[3] = {{"query_id", PQT_W_STRING, false, 0},
                         {"hit_ids", PQT_W_LIST_STRING, false, 0},
                         {"hit_scores", PQT_W_LIST_FLOAT, false, 0}};
  pqt_wbatch b[3] = {{.strs = (const char *const *)q->ids},
                     {.strs = strs, .offsets = off},
                     {.values = scores, .offsets = off}};
  pqt_writer_opts wo = {.codec = PQT_ZSTD, .zstd_level = 3, .row_group_rows = 65536};
  VF_TRY(ev_out_begin(path, &local, err));
  VF_TRY(pqt_writer_open(local, cols, 3, &wo, &w, err));
  for (int i = 0; i + 1 < nkv; i += 2) VF_TRY(pqt_writer_add_kv(w, kv[i], kv[i + 1], err));
  VF_TRY(pqt_writer_write(w, b, (int64_t)q->n, err));
  st = pqt_writer_close(w, err); /* frees the writer either way */
  w = NULL;
out:
  pqt_writer_abort(w);
  st = ev_out_end(path, local, st, err);
  free(strs);
  free(scores);
  free(off);
  return st;
}

/* ------------------------------------------------------------------ merge */

static const char *kv_get(const pqt_file_meta *m, const char *key) {
  for (int i = 0; i < m->nkv; i++)
    if (m->kv[i].key && strcmp(m->kv[i].key, key) == 0) return m->kv[i].value ? m->kv[i].value : "";
  return NULL;
}

static int hit_cmp(const ev_hit *a, const ev_hit *b) {
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return strcmp(a->id, b->id);
}

/* merge the sorted list `add` (n) into the sorted best list `best` (*nb, capacity k) */
static void merge_hits(ev_hit *best, uint32_t *nb, const ev_hit *add, uint32_t n, uint32_t k,
                       ev_hit *tmp) {
  uint32_t i = 0, j = 0, o = 0;
  while (o < k && (i < *nb || j < n)) {
    if (j >= n || (i < *nb && hit_cmp(&best[i], &add[j]) <= 0)) tmp[o++] = best[i++];
    else tmp[o++] = add[j++];
  }
  memcpy(best, tmp, sizeof *tmp * o);
  *nb = o;
}

/* element counts of the rows of a LIST leaf (max_rep 1); elements are the entries at max_def */
static vf_status list_rows(const pqt_file *f, const pqt_leaf_data *ld, int64_t nrows, int64_t *cnt,
                           const char *col, vf_error *err) {
  const pqt_leaf *lf = &pqt_schema_of(f)->leaves[ld->leaf];
  if (lf->max_rep != 1 || !ld->rep)
    return vf_error_set(err, VF_ECORRUPT, "%s: %s is not a list column", pqt_name(f), col);
  int64_t r = -1, vals = 0;
  for (int64_t e = 0; e < ld->nlevels; e++) {
    if (ld->rep[e] == 0) {
      if (++r >= nrows) return vf_error_set(err, VF_ECORRUPT, "%s: %s has more rows than the row group", pqt_name(f), col);
      cnt[r] = 0;
    } else if (r < 0) {
      return vf_error_set(err, VF_ECORRUPT, "%s: %s starts with a continued list", pqt_name(f), col);
    }
    if (!ld->def || ld->def[e] == lf->max_def) {
      cnt[r]++;
      vals++;
    }
  }
  if (r + 1 != nrows || vals != ld->nvalues)
    return vf_error_set(err, VF_ECORRUPT, "%s: %s row/value counts do not match", pqt_name(f), col);
  return VF_OK;
}

/* read one partial and merge its hits into best/nbest */
static vf_status merge_partial(pqt_file *f, const ev_queries *q, uint32_t k, ev_hit *best,
                               uint32_t *nbest, vf_error *err) {
  const pqt_file_meta *m = pqt_meta(f);
  int lid[3];
  pqt_leaf_data ld[3];
  for (int i = 0; i < 3; i++) pqt_leaf_data_init(&ld[i]);
  ev_hit *add = NULL, *tmp = NULL;
  char **ids = NULL;
  int64_t nids = 0; /* ids[0..nids) to free */
  int64_t *c1 = NULL, *c2 = NULL;
  vf_status st = VF_OK;
  VF_TRY(string_leaf(f, "query_id", &lid[0], err));
  int t1 = pqt_find_top(f, "hit_ids"), t2 = pqt_find_top(f, "hit_scores");
  if (t1 < 0 || t2 < 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: hit_ids/hit_scores missing", pqt_name(f)));
  const pqt_schema *sc = pqt_schema_of(f);
  if (sc->nodes[t1].nleaves != 1 || sc->nodes[t2].nleaves != 1 ||
      sc->leaves[sc->nodes[t1].first_leaf].type != PQT_BYTE_ARRAY ||
      sc->leaves[sc->nodes[t2].first_leaf].type != PQT_FLOAT)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: hit_ids must be list<string>, hit_scores list<float>", pqt_name(f)));
  lid[1] = sc->nodes[t1].first_leaf;
  lid[2] = sc->nodes[t2].first_leaf;
  if ((uint64_t)m->num_rows != q->n)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: %" PRId64 " rows but the queries file has %" PRIu64,
                         pqt_name(f), m->num_rows, q->n));
  add = vf_mallocarray(k, sizeof *add);
  tmp = vf_mallocarray(k, sizeof *tmp);
  if (!add || !tmp) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  int64_t first = 0;
  for (int rg = 0; rg < m->nrow_groups; rg++) {
    int64_t nr = m->row_groups[rg].num_rows;
    if (nr < 0 || first + nr > m->num_rows)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d row count out of range", pqt_name(f), rg));
    VF_TRY(pqt_read_leaves(f, rg, lid, 3, ld, err));
    free(ids);
    free(c1);
    free(c2);
    ids = vf_calloc((size_t)nr + 1, sizeof(char *));
    c1 = vf_calloc((size_t)nr + 1, sizeof(int64_t));
    c2 = vf_calloc((size_t)nr + 1, sizeof(int64_t));
    if (!ids || !c1 || !c2) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    nids = nr;
    if (ld[0].nlevels != nr)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query_id row count mismatch", pqt_name(f)));
    VF_TRY(flat_strings(f, &ld[0], "query_id", first, ids, err));
    VF_TRY(list_rows(f, &ld[1], nr, c1, "hit_ids", err));
    VF_TRY(list_rows(f, &ld[2], nr, c2, "hit_scores", err));
    int64_t v = 0;
    for (int64_t r = 0; r < nr; r++) {
      uint64_t qi = (uint64_t)(first + r);
      if (strcmp(ids[r], q->ids[qi]) != 0)
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: row %" PRIu64 " is query '%s' but the queries file has '%s'",
                             pqt_name(f), qi, ids[r], q->ids[qi]));
      if (c1[r] != c2[r] || c1[r] > (int64_t)k)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 ": %" PRId64 " ids, %" PRId64 " scores (K = %u)",
                             pqt_name(f), qi, c1[r], c2[r], k));
      for (int64_t h = 0; h < c1[r]; h++) {
        int64_t a = ld[1].offsets[v + h], b = ld[1].offsets[v + h + 1];
        /* a point id: a UUID (36 chars) or an integer id in decimal (1..20 digits) */
        bool digits = b - a >= 1 && b - a <= 20;
        for (int64_t x = a; digits && x < b; x++)
          digits = ld[1].values.data[x] >= '0' && ld[1].values.data[x] <= '9';
        if (b - a != 36 && !digits)
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 ": hit id is not a point id", pqt_name(f), qi));
        memcpy(add[h].id, ld[1].values.data + a, (size_t)(b - a));
        add[h].id[b - a] = 0;
        memcpy(&add[h].score, ld[2].values.data + (size_t)(v + h) * 4, 4);
        if (h > 0 && hit_cmp(&add[h - 1], &add[h]) > 0)
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 ": hits are not in order", pqt_name(f), qi));
      }
      merge_hits(best + qi * k, &nbest[qi], add, (uint32_t)c1[r], k, tmp);
      v += c1[r];
    }
    for (int64_t r = 0; r < nids; r++) free(ids[r]);
    nids = 0;
    first += nr;
  }
out:
  for (int64_t r = 0; r < nids; r++) free(ids[r]);
  for (int i = 0; i < 3; i++) pqt_leaf_data_free(&ld[i]);
  free(ids);
  free(c1);
  free(c2);
  free(add);
  free(tmp);
  return st;
}

static vf_status check_kv(const pqt_file *f, const char *key, const char *want, const char *what,
                          vf_error *err) {
  const char *v = kv_get(pqt_meta(f), key);
  if (!v) return vf_error_set(err, VF_EUSAGE, "%s: not a brute-force partial (no %s metadata)", pqt_name(f), key);
  if (strcmp(v, want) != 0)
    return vf_error_set(err, VF_EUSAGE, "%s: computed for a different %s (%s, expected %s)", pqt_name(f),
                        what, v, want);
  return VF_OK;
}

/* ev_output_check(): see bf_internal.h. */
vf_status ev_output_check(const char *path, corpus_distance metric, bool explicit_output,
                          vf_error *err) {
  if (strstr(path, "://") && strncmp(path, "file://", 7) != 0)
    return VF_OK; /* a remote output is not read back */
  FILE *fp = fopen(path, "rb");
  if (!fp) return VF_OK;
  fclose(fp);
  pqt_file *f = NULL;
  vf_error e;
  if (ev_open_path(path, &f, &e) != VF_OK) return VF_OK; /* not parquet: not ground truth */
  const char *mt = kv_get(pqt_meta(f), "vforge.bf.metric");
  corpus_distance have;
  vf_status st = VF_OK;
  if (mt && idx_metric_parse(mt, &have) && have != metric) {
    if (explicit_output)
      vf_log(VF_LOG_WARN, "%s holds ground truth computed with %s; replacing it with %s ground "
             "truth (--output)", path, mt, idx_metric_name(metric));
    else
      st = vf_error_set(err, VF_EUSAGE, "%s holds ground truth computed with %s, and this run uses "
                        "%s: it is not replaced; write this one elsewhere with --output FILE (or "
                        "remove the file)", path, mt, idx_metric_name(metric));
  }
  pqt_close(f);
  return st;
}

/* eval_brute_force_merge(): see eval.h. */
vf_status eval_brute_force_merge(const corpus_files *files, const eval_bf_opts *o, eval_bf_result *out,
                                 vf_error *err) {
  memset(out, 0, sizeof *out);
  double t0 = vf_now();
  if (o->k < 1 || o->k > 100000) return vf_error_set(err, VF_EUSAGE, "brute-force-merge: -k must be 1..100000");
  ev_queries q;
  vf_status st = ev_queries_read(o->queries, o->column, &q, err);
  if (st != VF_OK) return st;
  ev_filters flt;
  st = ev_filters_init(&flt, q.n, q.filters, q.fhash, o->filter, o->queries, err);
  if (st != VF_OK) {
    ev_queries_free(&q);
    return st;
  }
  char cmd5[33], ks[16];
  corpus_files_md5(files, cmd5);
  snprintf(ks, sizeof ks, "%u", o->k);
  char *dir = ev_strdupf(err, "%s/eval/_bf_partial_queries_%" PRIu64 "%s_k%u", files->prefix, q.n,
                         flt.tag, o->k);
  ev_hit *best = vf_mallocarray(q.n * o->k, sizeof *best);
  uint32_t *nbest = vf_calloc(q.n, sizeof *nbest);
  char *metric = NULL, *column = NULL, *idexpr = NULL, *path = NULL, **kv = NULL;
  int nkv = 0;
  uint32_t jobs = 0;
  io_listing rl = {0};
  char *p = NULL; /* the partial being read */
  pqt_file *f = NULL;
  if (!dir || !best || !nbest) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  /* the number of jobs: from the first partial found in the directory */
  /* remote partials (s3://): the directory is a listing */
  bool remote = strstr(dir, "://") && strncmp(dir, "file://", 7) != 0;
  char first_name[300] = "";
  if (remote) {
    char *lp = ev_strdupf(err, "%s/", dir);
    st = lp ? io_list(lp, &rl, err) : VF_ENOMEM;
    free(lp);
    if (st == VF_ENOTFOUND)
      st = vf_error_set(err, VF_ENOTFOUND, "brute-force-merge: no partial results in %s", dir);
    if (st != VF_OK) goto out;
    for (size_t i = 0; i < rl.n; i++) {
      const char *nm = strrchr(rl.entries[i].uri, '/');
      nm = nm ? nm + 1 : rl.entries[i].uri;
      unsigned r;
      char tail[16];
      if (sscanf(nm, "rank%u.%15s", &r, tail) == 2 && strcmp(tail, "parquet") == 0 &&
          (first_name[0] == 0 || strcmp(nm, first_name) < 0))
        snprintf(first_name, sizeof first_name, "%s", nm);
    }
  } else {
    DIR *dp = opendir(dir);
    if (!dp) VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "brute-force-merge: no partial results in %s (%s)", dir, VF_STRERROR(errno)));
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
      unsigned r;
      char tail[16];
      if (sscanf(de->d_name, "rank%u.%15s", &r, tail) == 2 && strcmp(tail, "parquet") == 0 &&
          (first_name[0] == 0 || strcmp(de->d_name, first_name) < 0))
        snprintf(first_name, sizeof first_name, "%s", de->d_name);
    }
    closedir(dp);
  }
  if (!first_name[0]) VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "brute-force-merge: no rank*.parquet in %s", dir));
  if (!(p = ev_strdupf(err, "%s/%s", dir, first_name))) VF_FAIL(VF_ENOMEM);
  VF_TRY(ev_open_path(p, &f, err));
  const char *j = kv_get(pqt_meta(f), "vforge.bf.num_jobs");
  const char *mt = kv_get(pqt_meta(f), "vforge.bf.metric");
  const char *cl = kv_get(pqt_meta(f), "vforge.bf.column");
  const char *ie = kv_get(pqt_meta(f), "vforge.bf.id_expression");
  if (!j || !mt || !cl || sscanf(j, "%u", &jobs) != 1 || jobs < 1 || jobs > 100000)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: not a brute-force partial (vforge.bf.* metadata missing)", p));
  metric = vf_strdup(mt);
  column = vf_strdup(cl);
  if (ie) idexpr = vf_strdup(ie);
  pqt_close(f);
  f = NULL;
  free(p);
  p = NULL;
  for (uint32_t r = 0; r < jobs; r++) {
    VF_TRY(vf_check_cancel(err));
    if (!(p = ev_strdupf(err, "%s/rank%03u.parquet", dir, r))) VF_FAIL(VF_ENOMEM);
    bool present = false;
    if (remote) {
      for (size_t i = 0; i < rl.n && !present; i++)
        present = strcmp(rl.entries[i].uri, p) == 0;
    } else {
      FILE *fp = fopen(p, "rb");
      present = fp != NULL;
      if (fp) fclose(fp);
    }
    if (!present)
      VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "brute-force-merge: partial rank%03u of %u is missing (%s)", r, jobs, p));
    char rs[16], js[16];
    snprintf(rs, sizeof rs, "%u", r);
    snprintf(js, sizeof js, "%u", jobs);
    VF_TRY(ev_open_path(p, &f, err));
    VF_TRY(check_kv(f, "vforge.bf.queries_md5", q.md5, "queries file (md5)", err));
    VF_TRY(check_kv(f, "vforge.bf.k", ks, "K", err));
    VF_TRY(check_kv(f, "vforge.bf.metric", metric, "metric", err));
    VF_TRY(check_kv(f, "vforge.bf.column", column, "vector column", err));
    VF_TRY(check_kv(f, "vforge.bf.corpus_md5", cmd5, "corpus (file list md5)", err));
    VF_TRY(check_kv(f, "vforge.bf.num_jobs", js, "number of jobs", err));
    VF_TRY(check_kv(f, "vforge.bf.rank", rs, "rank", err));
    if (flt.tag[0]) VF_TRY(check_kv(f, "vforge.bf.filter", flt.tag + 2, "filter", err));
    VF_TRY(merge_partial(f, &q, o->k, best, nbest, err));
    pqt_close(f);
    f = NULL;
    free(p);
    p = NULL;
  }
  corpus_distance met = CORPUS_COSINE;
  if (!idx_metric_parse(metric, &met))
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "brute-force-merge: unknown metric '%s' in the partials", metric));
  VF_TRY(ev_metadata_kv(&q, o->k, met, column, cmd5, idexpr ? idexpr : o->id_expression, jobs, 0,
                        false, flt.tag, &kv, &nkv, err));
  path = o->output ? vf_strdup(o->output)
                   : ev_strdupf(err, "%s/eval/brute_force_queries_%" PRIu64 "%s_k%u.parquet",
                                files->prefix, q.n, flt.tag, o->k);
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(ev_output_check(path, met, o->output != NULL, err));
  VF_TRY(ev_results_write(path, &q, o->k, best, nbest, (const char *const *)kv, nkv, err));
  out->path = path;
  path = NULL;
  out->queries = q.n;
  out->files = jobs;
out:
  pqt_close(f);
  free(p);
  out->seconds = vf_now() - t0;
  io_listing_free(&rl);
  ev_kv_free(kv, nkv);
  free(path);
  free(metric);
  free(column);
  free(idexpr);
  free(dir);
  free(best);
  free(nbest);
  ev_filters_free(&flt);
  ev_queries_free(&q);
  return st;
}
