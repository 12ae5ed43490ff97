/*
 * plan.c — the corpus plan's seed (include/vforge/corpus.h "the corpus plan"): the one place that
 * decides which files a command skips (those with no rows) and which file a vector's dimension
 * is taken from (the first with rows).
 *
 * Why one place: a 0-row parquet file is normal output of partitioned writers (Spark writes one
 * per empty partition, DuckDB's PARTITION_BY and per-thread writes too), and before this each
 * command met it differently — `load` took the dimension from the first file and refused an
 * empty one, scan and brute-force read it as nothing.  Every command now reports its files'
 * rows here, so the rule and its log lines are the same everywhere.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vforge/corpus.h"
#include "vforge/format.h"

#define PLAN_EMPTY_LOGGED 5 /* empty files named at info level; the rest at debug */

/* corpus_plan_init(): see corpus.h. */
vf_status corpus_plan_init(corpus_plan *p, const corpus_files *files, vf_error *err) {
  memset(p, 0, sizeof *p);
  p->files = files;
  p->rows = vf_mallocarray(files->n + 1, sizeof *p->rows);
  if (!p->rows) return vf_error_set(err, VF_ENOMEM, "out of memory planning %zu files", files->n);
  for (size_t i = 0; i <= files->n; i++)
    p->rows[i] = CORPUS_PLAN_UNMEASURED;
  return VF_OK;
}

/* corpus_plan_free(): see corpus.h. */
void corpus_plan_free(corpus_plan *p) {
  if (!p) return;
  free(p->rows);
  memset(p, 0, sizeof *p);
}

/* corpus_plan_note_rows(): see corpus.h. */
bool corpus_plan_note_rows(corpus_plan *p, size_t i, uint64_t rows) {
  if (i >= p->files->n) return false;
  if (p->rows[i] == CORPUS_PLAN_UNMEASURED) {
    p->rows[i] = rows;
    p->measured++;
    p->total_rows += rows;
    if (rows == 0) {
      p->empty++;
      const char *key = p->files->files[i].key ? p->files->files[i].key : p->files->files[i].uri;
      if (p->empty <= PLAN_EMPTY_LOGGED)
        vf_log(VF_LOG_INFO, "%s: the file has no rows; reading skips it%s", key,
               p->empty == PLAN_EMPTY_LOGGED ? " (further empty files are skipped silently; "
                                                "the summary counts them)"
                                             : "");
      else
        vf_log(VF_LOG_DEBUG, "%s: the file has no rows; reading skips it", key);
    }
  }
  return p->rows[i] == 0;
}

/* corpus_plan_skips(): see corpus.h. */
bool corpus_plan_skips(const corpus_plan *p, size_t i) {
  return i < p->files->n && p->rows[i] == 0;
}

/* corpus_file_rows(): see corpus.h. */
vf_status corpus_file_rows(const corpus_file *f, uint64_t *rows, vf_error *err) {
  *rows = 0;
  if (f->dataset) {
    *rows = corpus_dataset_part_rows(f);
    return VF_OK;
  }
  io_source *src = NULL;
  pqt_file *pf = NULL;
  vf_status st = corpus_open(f, &src, err);
  if (st == VF_OK) st = pqt_open(src, NULL, &pf, err); /* takes src, also on failure */
  if (st != VF_OK) return st;
  int64_t n = pqt_meta(pf)->num_rows;
  pqt_close(pf);
  if (n < 0) return vf_error_set(err, VF_ECORRUPT, "%s: negative row count %" PRId64, f->uri, n);
  *rows = (uint64_t)n;
  return VF_OK;
}

static vf_status measure_one(corpus_plan *p, size_t i, vf_error *err) {
  if (p->rows[i] != CORPUS_PLAN_UNMEASURED) return VF_OK;
  uint64_t rows = 0;
  vf_status st = corpus_file_rows(&p->files->files[i], &rows, err);
  if (st == VF_OK) corpus_plan_note_rows(p, i, rows);
  return st;
}

/* corpus_plan_measure(): see corpus.h. */
vf_status corpus_plan_measure(corpus_plan *p, vf_error *err) {
  vf_status st = VF_OK;
  for (size_t i = 0; st == VF_OK && i < p->files->n; i++)
    st = measure_one(p, i, err);
  return st;
}

/* corpus_plan_probe_dim(): see corpus.h. */
vf_status corpus_plan_probe_dim(corpus_plan *p, const corpus_vec_source *src, int32_t *dim,
                                vf_error *err) {
  *dim = 0;
  for (size_t i = 0; i < p->files->n; i++) {
    vf_status st = measure_one(p, i, err);
    if (st != VF_OK) return st;
    if (p->rows[i] == 0) continue;
    return corpus_records_probe_dim(&p->files->files[i], src, dim, err);
  }
  return vf_error_set(err, VF_ECORRUPT, "vector '%s': every file of the corpus (%zu) is empty: no "
                      "row to take its dimension from", src->name, p->files->n);
}
