/*
 * IVF index builds from a corpus or from vectors in memory: the streaming loop `vforge index
 * build` and the Python front end's Index.build share (include/vforge/ivf.h).
 *
 * From a corpus: one corpus plan first — the rows of every file from its footer, read once (the
 * training sample is stratified over the whole input and the default nlist follows the row
 * count), the dense column from the plan's schema file — then the dense vector and
 * the point ids are read one row group at a time through the record reader and streamed into
 * ivf_builder, which spills them and writes the file list by list.  Memory: one row group plus
 * the builder's budget, whatever the corpus size.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/config.h"
#include "vforge/format.h"
#include "vforge/ivf.h"

typedef struct build_ids {
  char *text; /* n x 37 */
  const char **ptr;
  size_t *len;
  size_t cap;
} build_ids;

static void ids_free(build_ids *b) {
  free(b->text);
  free(b->ptr);
  free(b->len);
  memset(b, 0, sizeof *b);
}

static vf_status ids_reserve(build_ids *b, size_t n, vf_error *err) {
  if (n <= b->cap && b->text) return VF_OK;
  ids_free(b);
  b->text = vf_mallocarray(n ? n : 1, 37);
  b->ptr = vf_mallocarray(n ? n : 1, sizeof *b->ptr);
  b->len = vf_mallocarray(n ? n : 1, sizeof *b->len);
  b->cap = b->text && b->ptr && b->len ? n : 0;
  if (!b->text || !b->ptr || !b->len) return vf_error_set(err, VF_ENOMEM, "out of memory for %zu ids", n);
  return VF_OK;
}

static vf_status ids_fill(build_ids *b, const corpus_batch *bt, vf_error *err) {
  vf_status st = ids_reserve(b, bt->n, err);
  if (st != VF_OK) return st;
  for (size_t i = 0; i < bt->n; i++) {
    char *t = b->text + i * 37;
    const corpus_id *id = &bt->ids[i];
    if (id->is_uuid) memcpy(t, id->uuid, 37); /* the id text a store keeps (store_id_format) */
    else snprintf(t, 37, "%" PRIu64, id->num);
    b->ptr[i] = t;
    b->len[i] = strlen(t);
  }
  return VF_OK;
}

/* the vector column of a parquet URI: `column`, else the only dense one of the plan's schema
 * file, the first that has rows (the plan skips empty files, issue 14); opened over the footer
 * the plan kept, so nothing is read again */
static vf_status dense_column(const corpus_files *files, const corpus_plan *plan,
                              const char *column, char **out, vf_error *err) {
  vf_status st = VF_OK;
  pqt_file *f = NULL;
  *out = NULL;
  if (plan->schema_file >= files->n)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "index build: every file of the corpus (%zu) is empty",
                         files->n));
  VF_TRY(corpus_open_parquet(&files->files[plan->schema_file], NULL, &f, err));
  int top = -1;
  VF_TRY(corpus_dense_top(f, column, &top, err));
  if (!(*out = vf_strdup(pqt_schema_of(f)->nodes[top].name)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  pqt_close(f);
  return st;
}

/* ivf_build_source(): see ivf.h. */
vf_status ivf_build_source(const corpus_source *src, const ivf_source_opts *o, ivf_params *p,
                           const char *out, ivf_build_report *rep, vf_error *err) {
  double t0 = vf_now();
  memset(rep, 0, sizeof *rep);
  const corpus_files *files = &src->files;
  char *column = NULL;
  ivf_builder *b = NULL;
  corpus_records *rr = NULL;
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  build_ids ids = {0};
  vf_status st = VF_OK;
  if (!files->n) return vf_error_set(err, VF_EUSAGE, "index build: the corpus has no files");
  /* the one plan of the build: rows, row groups and the schema from one footer read per file,
   * which the schema probe and the read pass open over */
  corpus_plan plan;
  if ((st = corpus_plan_init(&plan, files, err)) != VF_OK) return st;
  corpus_vec_source vs = {.kind = CORPUS_VEC_DENSE};
  if (src->records) {
    vs = src->vec;
    if (vs.kind != CORPUS_VEC_DENSE)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "index build: vector '%s' of %s is not dense", vs.name, files->prefix));
    if (!o->metric_given && src->has_distance) {
      if (src->distance == CORPUS_MANHATTAN)
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "index build: vector '%s' uses manhattan distance; "
                             "give --metric cosine, dot or euclid", vs.name));
      p->metric = src->distance;
    }
    if (!(column = vf_strdup(vs.name))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  } else {
    VF_TRY(corpus_plan_measure(&plan, err));
    VF_TRY(dense_column(files, &plan, o->column, &column, err));
    vs.name = vs.column = column;
  }
  vs.distance = p->metric;
  corpus_record_spec spec = {.vectors = &vs, .nvectors = 1,
                             .id = o->id ? o->id : (src->records ? src->id : NULL)};
  bool have_id = false;
  for (int i = 0; i < 16; i++) have_id |= p->corpus_id[i] != 0;
  if (!have_id) { /* the corpus identity in the header: index search checks ground truth by it */
    char fmd5[33];
    corpus_files_md5(files, fmd5);
    const char *idt = o->id ? o->id_text : src->records ? src->id_text : NULL;
    corpus_identity(fmd5, idt, p->corpus_id, NULL);
  }
  /* the rows, from the plan (strata of the training sample, default nlist); files without
   * rows are skipped (corpus_plan) */
  VF_TRY(corpus_plan_measure(&plan, err)); /* measured above for a parquet URI: nothing read */
  uint64_t total = plan.total_rows;
  if (total == 0) VF_FAIL(vf_error_set(err, VF_EUSAGE, "index build: %s holds no rows", files->prefix));
  /* pass 2: stream the rows into the builder */
  double tr0 = vf_now();
  uint64_t done = 0, base = 0, source_bytes = 0;
  vf_stage sg;
  vf_stage_begin(&sg, p->progress ? p->progress : "index build", "read", NULL, total);
  sg.p.files_total = files->n;
  for (size_t fi = 0; fi < files->n; fi++) {
    if (corpus_plan_skips(&plan, fi)) continue;
    VF_TRY(corpus_records_open(&files->files[fi], &spec, base, &rr, err));
    int nrg = corpus_records_row_groups(rr);
    for (int rg = 0; rg < nrg; rg++) {
      VF_TRY(vf_check_cancel(err));
      VF_TRY(corpus_records_read(rr, rg, corpus_records_row_group_first(rr, rg), &bt, NULL, err));
      if (bt.n == 0) continue;
      const corpus_vec_batch *vb = &bt.vectors[0];
      if (!b) {
        p->dim = vb->dim;
        VF_TRY(ivf_builder_open(p, out, total, &b, err));
      } else if (vb->dim != p->dim) {
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: column '%s' has dimension %d, earlier files %d",
                             files->files[fi].key, column, (int)vb->dim, (int)p->dim));
      }
      VF_TRY(ids_fill(&ids, &bt, err));
      st = ivf_builder_add(b, vb->dense, bt.n, (const char *const *)ids.ptr, ids.len, err);
      if (st != VF_OK) {
        vf_error_prefix(err, "%s: row group %d: ", files->files[fi].key, rg);
        goto out;
      }
      done += bt.n;
      sg.p.files_done = fi;
      sg.p.bytes_done = source_bytes;
      vf_stage_update(&sg, done, NULL);
    }
    base += corpus_records_rows(rr);
    source_bytes += corpus_records_bytes_read(rr);
    corpus_records_close(rr);
    rr = NULL;
  }
  double tread = vf_now() - tr0;
  if (!b) VF_FAIL(vf_error_set(err, VF_EUSAGE, "index build: %s holds no vectors", files->prefix));
  st = ivf_builder_finish(b, rep, err);
  b = NULL;
  VF_TRY(st);
  rep->source_bytes = source_bytes;
  if (rep->seconds_read <= 0) rep->seconds_read = tread;
  rep->seconds = vf_now() - t0;
out:
  ivf_builder_abort(b);
  corpus_records_close(rr);
  corpus_plan_free(&plan);
  corpus_batch_free(&bt);
  ids_free(&ids);
  free(column);
  return st;
}

/* ivf_build_matrix(): see ivf.h. */
vf_status ivf_build_matrix(ivf_params *p, const char *out, const float *x, uint64_t n,
                           ivf_build_report *rep, vf_error *err) {
  double t0 = vf_now();
  memset(rep, 0, sizeof *rep);
  if (n == 0) return vf_error_set(err, VF_EUSAGE, "index build: no vectors");
  ivf_builder *b = NULL;
  build_ids ids = {0};
  vf_status st = VF_OK;
  VF_TRY(ivf_builder_open(p, out, n, &b, err));
  const uint64_t chunk = 65536;
  for (uint64_t r0 = 0; r0 < n; r0 += chunk) {
    size_t m = (size_t)(n - r0 < chunk ? n - r0 : chunk);
    VF_TRY(vf_check_cancel(err));
    VF_TRY(ids_reserve(&ids, m, err));
    for (size_t i = 0; i < m; i++) {
      char *t = ids.text + i * 37;
      ids.len[i] = (size_t)snprintf(t, 37, "%" PRIu64, r0 + i);
      ids.ptr[i] = t;
    }
    VF_TRY(ivf_builder_add(b, x + r0 * (size_t)p->dim, m, (const char *const *)ids.ptr, ids.len, err));
  }
  st = ivf_builder_finish(b, rep, err);
  b = NULL;
  VF_TRY(st);
  rep->seconds = vf_now() - t0;
out:
  ivf_builder_abort(b);
  ids_free(&ids);
  return st;
}

/* ivf_build_report_json(): see ivf.h. */
vf_status ivf_build_report_json(const ivf_build_report *r, const char *out, int32_t dim,
                                corpus_distance metric, size_t nfiles, vf_buf *b, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(b, err, "{\"rows\":%" PRIu64 ",\"nlist\":%u,\"type\":\"%s\","
                       "\"training_rows_seen\":%" PRIu64 ",\"training_rows_retained\":%" PRIu64
                       ",\"kmeans_rows\":%" PRIu64 ",\"kmeans_iterations\":%d,"
                       "\"kmeans_max_iterations\":%d"
                       ",\"source_bytes\":%" PRIu64 ",\"spill_bytes\":%" PRIu64 ",\"seconds\":",
                       r->rows, r->nlist, ivf_code_name(r->type), r->training_rows_seen,
                       r->training_rows_retained, r->kmeans_rows, r->kmeans_iterations,
                       r->kmeans_max_iterations, r->source_bytes, r->spill_bytes));
  VF_TRY(vf_json_f64(b, r->seconds, err));
  VF_TRY(vf_buf_printf(b, err, ",\"peak_rss_bytes\":%" PRIu64 ",\"list_max_over_mean\":", r->peak_rss_bytes));
  VF_TRY(vf_json_f64(b, r->list_max_over_mean, err));
  VF_TRY(vf_json_raw(b, ",\"list_balance\":", err));
  VF_TRY(vf_json_f64(b, r->list_balance, err));
  const double stage[4] = {r->seconds_read, r->seconds_train, r->seconds_assign, r->seconds_write};
  const char *names[4] = {"seconds_read", "seconds_train", "seconds_assign", "seconds_write"};
  for (int i = 0; i < 4; i++) {
    VF_TRY(vf_buf_printf(b, err, ",\"%s\":", names[i]));
    VF_TRY(vf_json_f64(b, stage[i], err));
  }
  VF_TRY(vf_buf_printf(b, err, ",\"dim\":%d,\"metric\":\"%s\",\"files\":%zu,\"output\":", (int)dim,
                       idx_metric_name(metric), nfiles));
  VF_TRY(vf_json_string(b, out, strlen(out), err));
  VF_TRY(vf_json_raw(b, "}", err));
out:
  return st;
}
