/* Internal helpers shared by the eval sources (not part of the public API). */
#ifndef VFORGE_EVAL_INTERNAL_H
#define VFORGE_EVAL_INTERNAL_H

#include "vforge/corpus.h"
#include "vforge/eval.h"
#include "vforge/filter.h"
#include "vforge/format.h"

/*! ev_open() : open a discovered corpus file as parquet. */
vf_status ev_open(const corpus_file *file, pqt_file **out, vf_error *err);
/*! ev_open_path() : open a local parquet file by path. */
vf_status ev_open_path(const char *path, pqt_file **out, vf_error *err);
/*! ev_vector_top() : the top-level node of the vector column: `column` when given (must be a
 *  dense vector column), else the only dense vector column of the file.
 *  @return : VF_ENOTFOUND / VF_EUSAGE naming the file and the candidates. */
vf_status ev_vector_top(const pqt_file *f, const char *column, int *top, vf_error *err);
/*! ev_vec_kind() : the vector kind of top-level node `top` (DENSE, MULTI: list<list<float>>,
 *  SPARSE: struct{indices, values}), or -1 when it holds none. */
int ev_vec_kind(const pqt_file *f, int top);
/*! ev_vector_column() : like ev_vector_top() but any vector kind: `column` when given, else the
 *  only dense vector column, else the only multivector/sparse column. */
vf_status ev_vector_column(const pqt_file *f, const char *column, int *top, corpus_vec_kind *kind,
                           vf_error *err);
/*! ev_sparse_sort() : sort the n (index, value) pairs by index (ties: original order, so the
 *  result is deterministic); `tmp` holds n entries.  @return : false when an index repeats. */
typedef struct ev_pair {
  uint32_t index;
  uint32_t pos;
  float value;
} ev_pair;
bool ev_sparse_sort(uint32_t *idx, float *val, size_t n, ev_pair *tmp);
/*! ev_read_dense() : decode row group `rg` of the vector column `top` into `out`
 *  (`*dim` in: expected or 0; out: the dimension).  `leaf` is reused across calls. */
vf_status ev_read_dense(pqt_file *f, int top, int rg, int64_t first_row, int32_t *dim,
                        pqt_leaf_data *leaf, pqt_dense *out, vf_error *err);
/*! ev_mkdir_parent() : create the directory holding `path`. */
vf_status ev_mkdir_parent(const char *path, vf_error *err);
/*! ev_out_begin() : where to write the output file `path`: a local path is itself (its
 *  directory created, temporaries that killed writers of it left swept); an s3:// URI gets a
 *  local temporary file (TMPDIR, else /tmp), uploaded by ev_out_end.  Other remote schemes are
 *  VF_EUNSUPPORTED.  *local: caller passes it to ev_out_end. */
vf_status ev_out_begin(const char *path, char **local, vf_error *err);
/*! ev_out_end() : after writing `local` with status `st`: on success upload it to `path` when
 *  remote (io_upload); always remove the temporary file and free `local`.  @return : st or the
 *  upload's error. */
vf_status ev_out_end(const char *path, char *local, vf_status st, vf_error *err);
/*! ev_strdupf() : a formatted heap string (NULL on failure, with err set). */
char *ev_strdupf(vf_error *err, const char *fmt, ...) VF_PRINTF(2, 3);

/* Point ids of (file, physical row) keys: vf_point_id(key, row) for parquet corpora, or the id
 * expression of a record spec (eval_*_opts.records) evaluated on the file key, the row and the
 * global row (files' rows counted once, in file order). */
typedef struct ev_ids {
  const corpus_files *files;
  const corpus_idexpr *id; /* NULL = vf_point_id(filename, file_row_number) */
  uint64_t *bases;         /* records: files->n + 1 global row bases; else NULL */
} ev_ids;
/*! ev_ids_init() : for `spec` NULL the default ids; else count every file's rows (a dataset
 *  part's measured rows, else its record reader) for the global row bases.  `what` names the
 *  command in messages.  @return : VF_EUNSUPPORTED for an id expression that reads columns or
 *  is not deterministic; reader errors. */
vf_status ev_ids_init(ev_ids *x, const corpus_files *files, const corpus_record_spec *spec,
                      const char *what, vf_error *err);
void ev_ids_free(ev_ids *x);
/*! ev_id_text() : the id of row `row` of file `fi` as text (an integer id in decimal). */
void ev_id_text(const ev_ids *x, size_t fi, uint64_t row, char out[37]);
/*! ev_spec1() : `spec` reduced to its first vector, no payload, bad rows skipped (what the
 *  eval scans read). */
corpus_record_spec ev_spec1(const corpus_record_spec *spec);

/* The exact kernel (bf_exact.c): sum over i < d of q[i]*x[i], (q[i]-x[i])^2 or |q[i]-x[i]|, in
 * double, in one fixed order whatever the CPU (brute-force's outputs depend on the data only). */
typedef enum { BF_EX_DOT, BF_EX_L2SQ, BF_EX_L1 } bf_exact_op;
/*! bf_exact_sum() : the sum, by the variant the process's index kernels use (VFORGE_SIMD). */
double bf_exact_sum(bf_exact_op op, const float *q, const float *x, size_t d);
/*! bf_exact_sum_variant() : the portable reference (vector false) or the vector variant (true;
 *  the reference when this CPU or build has none) — for the tests that prove them equal. */
double bf_exact_sum_variant(bf_exact_op op, const float *q, const float *x, size_t d, bool vector);

#endif

/* ------------------------------------------------------------ brute force
 * (the query file and result types are public: eval.h "query files, filters and results") */

/*! ev_queries_matrix() : n x dim dense queries from memory (copied): query i has id "<i>", the
 *  vector name is `name` (NULL: "vector"), md5 is over the floats' bytes. */
vf_status ev_queries_matrix(const float *v, uint64_t n, int32_t dim, const char *name,
                            ev_queries *q, vf_error *err);

/* ------------------------------------------------------------ filters (bf_filter.c) */

/*! ev_filter_column_read() : the `__filter__` column of a queries file with n rows: *texts gets
 *  n JSON texts (NULL for a null or empty value), or stays NULL when the column is absent;
 *  `hash` the filters' <h> (the vforge.filter.hash metadata, else md5 of the texts).
 *  @return : VF_ECORRUPT for a column that is not a string column. */
vf_status ev_filter_column_read(pqt_file *f, uint64_t n, char ***texts, char hash[9], vf_error *err);

/*! ev_filters_payload() : the payload sources a filtered scan reads: each key from `spec`'s
 *  payload_fields (VF_EUSAGE naming a key that is not there), or a column of the key's name
 *  when `spec` is NULL or has no payload list.  Caller frees *out (the strings are borrowed). */
vf_status ev_filters_payload(const ev_filters *x, const corpus_record_spec *spec,
                             corpus_payload_source **out, int *n, vf_error *err);
/*! ev_template_filters() : generate-queries --filter-template (queries_filter.c): the filter
 *  text of each of the n queries at sorted global rows qrows, from template `tmpl` ("$key": the
 *  row's own value, "$~key": a seeded draw from the corpus); `bases` the files' global row
 *  bases (files->n + 1), `records` the config's spec or NULL.  Caller frees (*out)[i] and *out.
 *  @return : VF_EUSAGE naming the query row for a missing own value, a key without values, or a
 *            filter that does not compile. */
vf_status ev_template_filters(const corpus_files *files, const uint64_t *bases,
                              const corpus_record_spec *records, const char *tmpl,
                              const uint64_t *qrows, uint64_t n, uint64_t seed, char ***out,
                              vf_error *err);
/* Filtered `index search` (ivf_filter.c): ev_ivf_filter in eval.h. */

/*! ev_filter_id() : the corpus_id of an id text made by ev_id_text(). */
void ev_filter_id(const char *text, corpus_id *id);



/*! ev_metadata_kv() : the vforge.bf.* key-value metadata of a brute-force output (bf_merge.c;
 *  the scan lives in bruteforce.c). */
vf_status ev_metadata_kv(const ev_queries *q, uint32_t k, corpus_distance metric,
                         const char *column, const char *corpus_md5, const char *id_expression,
                         uint32_t num_jobs, uint32_t rank, bool partial, const char *filter_tag,
                         char ***kv, int *nkv, vf_error *err);
/*! ev_output_check() : before brute-force (or its merge) writes `path`: an existing ground
 *  truth there computed with another metric is never replaced silently.  At the layout's own
 *  name (`explicit_output` false) it is refused (VF_EUSAGE naming both metrics and --output);
 *  a path given with --output is replaced with a warning. */
vf_status ev_output_check(const char *path, corpus_distance metric, bool explicit_output,
                          vf_error *err);
void ev_kv_free(char **kv, int nkv);
