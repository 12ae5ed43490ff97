/*
 * Helpers shared by the eval commands: opening corpus files, finding the dense vector column
 * (DESIGN.md "Vectors in parquet": list<float|double|halffloat> or FLBA of 4*d bytes) and
 * decoding one row group of it, creating output directories.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/bf_internal.h"
#include "vforge/io.h"

/* ev_open(): see bf_internal.h. */
vf_status ev_open(const corpus_file *file, pqt_file **out, vf_error *err) {
  return corpus_open_parquet(file, NULL, out, err);
}

/* ev_open_path(): see bf_internal.h. */
vf_status ev_open_path(const char *path, pqt_file **out, vf_error *err) {
  corpus_file cf = {.uri = (char *)path, .key = (char *)path, .size = 0};
  return ev_open(&cf, out, err);
}

/* ev_vec_kind(): see bf_internal.h. */
int ev_vec_kind(const pqt_file *f, int top) {
  return corpus_vec_kind_of(f, top);
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
  return corpus_dense_top(f, column, top, err);
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


/* ev_mkdir_parent(): see bf_internal.h. */
vf_status ev_mkdir_parent(const char *path, vf_error *err) {
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path) return VF_OK;
  char *d = vf_strndup(path, (size_t)(slash - path));
  if (!d) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = vf_mkdir_p(d, 0777, err);
  free(d);
  return st;
}

/* The output is remote when it has a scheme other than file:// (io_uri_parse decides). */
static bool ev_out_remote(const char *path) {
  return strstr(path, "://") != NULL && strncmp(path, "file://", 7) != 0;
}

/* ev_out_begin(): see bf_internal.h. */
vf_status ev_out_begin(const char *path, char **local, vf_error *err) {
  *local = NULL;
  if (!ev_out_remote(path)) {
    vf_status st = ev_mkdir_parent(path, err);
    if (st != VF_OK) return st;
    if (!(*local = vf_strdup(path))) return vf_error_set(err, VF_ENOMEM, "out of memory");
    /* what a killed writer of this output left (util.h "Temporary names") */
    const char *slash = strrchr(path, '/');
    char *dir =
        slash ? vf_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : vf_strdup(".");
    if (dir) st = vf_temp_sweep(dir, slash ? slash + 1 : path, NULL, err);
    free(dir);
    return st;
  }
  if (strncmp(path, "s3://", 5) != 0)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "%s: outputs can be written to local paths and s3:// only", path);
  const char *td = getenv("TMPDIR");
  if (!td || !*td) td = "/tmp";
  char *t = ev_strdupf(err, "%s/vforge-out-XXXXXX", td);
  if (!t) return VF_ENOMEM;
  int fd = mkstemp(t);
  if (fd < 0) {
    vf_status st = vf_error_set(err, VF_EIO, "cannot create a temporary file in %s for %s: %s", td,
                                path, VF_STRERROR(errno));
    free(t);
    return st;
  }
  close(fd);
  *local = t;
  return VF_OK;
}

/* ev_out_end(): see bf_internal.h. */
vf_status ev_out_end(const char *path, char *local, vf_status st, vf_error *err) {
  if (!local) return st;
  bool remote = ev_out_remote(path);
  if (st != VF_OK || !remote) goto out;
  st = io_upload(local, path, err);
out:
  if (remote) unlink(local);
  free(local);
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

/* ------------------------------------------------------------------ point ids */

/* ev_spec1(): see bf_internal.h. */
corpus_record_spec ev_spec1(const corpus_record_spec *spec) {
  corpus_record_spec s = *spec;
  s.nvectors = 1;
  s.payload = NULL;
  s.npayload = 0;
  s.payload_null_json = NULL;
  s.skip_bad_rows = true;
  return s;
}

/* ev_ids_init(): see bf_internal.h. */
vf_status ev_ids_init(ev_ids *x, const corpus_files *files, const corpus_record_spec *spec,
                      const char *what, vf_error *err) {
  memset(x, 0, sizeof *x);
  x->files = files;
  if (!spec) return VF_OK;
  x->id = spec->id;
  int ncol = 0;
  if (x->id) corpus_idexpr_columns(x->id, &ncol);
  if (x->id && ncol > 0)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "%s: an id_expression that reads columns is not supported here (ids "
                        "must follow from the file and row: row, vf_point_id(filename, "
                        "file_row_number), make_point_id(...) of filename/literals and rows)", what);
  if (x->id && !corpus_idexpr_deterministic(x->id))
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: uuid() ids differ on every run; ground truth "
                        "needs ids that follow from the file and row", what);
  x->bases = vf_calloc(files->n + 1, sizeof *x->bases);
  if (!x->bases) return vf_error_set(err, VF_ENOMEM, "out of memory");
  corpus_record_spec s1 = ev_spec1(spec);
  uint64_t total = 0;
  vf_status st = VF_OK;
  corpus_records *rr = NULL;
  for (size_t i = 0; i < files->n; i++) {
    x->bases[i] = total;
    if (files->files[i].dataset) {
      total += corpus_dataset_part_rows(&files->files[i]);
      continue;
    }
    VF_TRY(corpus_records_open(&files->files[i], &s1, total, &rr, err));
    total += corpus_records_rows(rr);
    corpus_records_close(rr);
    rr = NULL;
  }
  x->bases[files->n] = total;
out:
  corpus_records_close(rr);
  if (st != VF_OK) ev_ids_free(x);
  return st;
}

void ev_ids_free(ev_ids *x) {
  free(x->bases);
  x->bases = NULL;
}

static vf_status no_column(void *user, const char *column, corpus_value *out, vf_error *err) {
  (void)user;
  (void)out;
  return vf_error_set(err, VF_EUNSUPPORTED, "id column '%s' is not read here", column);
}

/* ev_id_text(): see bf_internal.h. */
void ev_id_text(const ev_ids *x, size_t fi, uint64_t row, char out[37]) {
  const corpus_file *f = &x->files->files[fi];
  if (!x->id) {
    corpus_point_id(f->key, strlen(f->key), row, out);
    return;
  }
  corpus_row_ctx ctx = {.file_key = f->key, .file_key_len = strlen(f->key), .file_row = row,
                        .global_row = x->bases[fi] + row, .get_column = no_column};
  corpus_id id;
  vf_error e;
  if (corpus_idexpr_eval(x->id, &ctx, &id, &e) != VF_OK) {
    /* not reached: expressions reading columns are refused by ev_ids_init() */
    corpus_point_id(f->key, strlen(f->key), row, out);
    return;
  }
  if (id.is_uuid) memcpy(out, id.uuid, 37);
  else snprintf(out, 37, "%" PRIu64, id.num);
}
