/*
 * vforge eval — evaluation artifacts in the corpus layout (DESIGN.md "Corpus layout"):
 * sampled query sets and exact (brute-force) ground truth, optionally computed by several
 * workers and merged.
 *
 *   <prefix>/eval/queries_<N>.parquet            query_id, __source_file__, __source_row__,
 *                                                 the vector column, chosen payload columns
 *   <prefix>/eval/brute_force_queries_<N>_k<K>.parquet   query_id, hit_ids, hit_scores
 *   <prefix>/eval/_bf_partial_queries_<N>_k<K>/rank<NNN>.parquet   one worker's share
 *
 * Scores: larger = nearer (cosine similarity, dot, -L2, -L1); ties ordered by point id text.
 * Multivector columns (list<list<float>>) are scored with max_sim over cosine or dot, sparse
 * columns (struct{indices, values}) with the dot product over shared indices; the queries file
 * holds the column in the same shape.
 * Every final score is computed by one fixed-order scalar kernel in double, so the output is
 * byte-identical whatever the thread count, batch sizes or number of jobs.
 */
#ifndef VFORGE_EVAL_H
#define VFORGE_EVAL_H

#include "vforge/corpus.h"
#include "vforge/filter.h"
#include "vforge/index.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eval_queries_opts {
  uint64_t n;                   /* rows to sample (>= 1, at most the corpus's rows) */
  uint64_t seed;
  const char *column;           /* vector column (dense, multivector or sparse); NULL = the only
                                   dense vector column, else the only multivector/sparse one */
  const char *const *columns;   /* payload columns to copy (NULL/0 = none) */
  int ncolumns;
  const char *output;           /* NULL = <prefix>/eval/queries_<N>.parquet */
  const corpus_record_spec *records; /* NULL: parquet files, the vector column found by name as
                                   above.  Else (a config, a dataset, a vector file) every file is
                                   read through corpus_records_open() with this spec: vectors[0]
                                   is the vector (written under its name; `column` unused) and
                                   spec->id (NULL = vf_point_id(filename, file_row_number)) gives
                                   the query ids (an integer id as decimal text); an id expression
                                   that reads columns is VF_EUNSUPPORTED, and so are `columns`. */
  const char *filter_template;  /* NULL, or a filter template: a __filter__ column gets one filter
                                   per query, "$key" replaced by the query row's own payload value,
                                   "$~key" by a value drawn from the corpus; the file is then
                                   <prefix>/eval/queries_<N>_f<h>.parquet, <h> from the template */
} eval_queries_opts;

typedef struct eval_queries_result {
  uint64_t rows;                /* rows written */
  uint64_t corpus_rows;
  uint64_t row_groups_read;
  uint64_t empty_files;         /* files without rows, skipped (corpus_plan) */
  int32_t dim;
  char *path;                   /* the file written (caller frees) */
} eval_queries_result;

/*! eval_generate_queries() : sample opts->n distinct rows uniformly over the global row space
 *  of `files` (seeded splitmix64 + Floyd's algorithm: the same seed gives the same file), read
 *  only the row groups holding them and write the queries file atomically.
 *  @return : VF_EUSAGE for n out of range or an ambiguous/missing vector column, VF_ECORRUPT
 *            when a sampled row has a null vector (naming file and row), reader/writer errors. */
vf_status eval_generate_queries(const corpus_files *files, const eval_queries_opts *opts,
                                eval_queries_result *out, vf_error *err);

typedef struct eval_bf_opts {
  const char *queries;          /* queries parquet file, or a vector file (.npy, .fbin/.u8bin/
                                   .i8bin, an ann-benchmarks .hdf5 bundle's `test`): query i has
                                   query_id "<i>" */
  uint32_t k;                   /* 1 .. 100000 */
  corpus_distance metric;
  const char *column;           /* vector column; NULL = as in eval_queries_opts */
  uint32_t num_jobs;            /* 0 or 1 = a single job writing the final file */
  uint32_t job_rank;            /* < num_jobs: this worker handles files i % num_jobs == rank */
  int threads;                  /* 0 = vf_threads() */
  const char *output;           /* NULL = the layout path (final file or rank<NNN>.parquet) */
  const corpus_record_spec *records; /* as in eval_queries_opts: NULL = parquet files; else the
                                   files are read through corpus_records_open() with this spec
                                   (`column` then names the queries file's column only) and hit
                                   ids come from spec->id (integer ids as decimal text) */
  const char *id_expression;    /* the text of records->id, recorded as vforge.bf.id_expression
                                   (NULL: vf_point_id(filename, file_row_number)) */
  const float *query_vectors;   /* queries NULL: nqueries x query_dim dense queries in memory
                                   (query i has id "<i>"; `column` names them in the metadata) */
  uint64_t nqueries;
  int32_t query_dim;
  bool no_file;                 /* write no file (the results only in `hits`) */
  struct eval_bf_hits *hits;    /* NULL, or filled with every query's hits (eval_bf_hits_free) */
  const char *filter;           /* a filter (vforge/filter.h JSON) for every query, or NULL; a
                                   queries file with a __filter__ column filters per query.
                                   Rows that do not match are never hits (a query may get fewer
                                   than k); outputs are named ..._f<h>_k<K> (<h>: 8 hex digits of
                                   md5 of the filter, or of the queries' template) */
  const corpus_plan *plan;      /* NULL: eval_brute_force plans `files` itself (this job's files
                                   measured).  Else the caller's plan over the same `files`, built
                                   once per process (corpus_plan_build(), or corpus_plan_init() +
                                   corpus_plan_measure_file() of every file of this job): rows,
                                   empty files and skips are read from it and nothing is planned
                                   again; a job file it has not measured is VF_EUSAGE.  It must
                                   outlive the call (its footers stay kept while it lives). */
} eval_bf_opts;

/* Every query's hits in memory, best first: ids[q*k + i] and scores[q*k + i] for i < counts[q]. */
typedef struct eval_bf_hits {
  uint64_t nq;
  uint32_t k;
  char (*ids)[37];  /* nq*k id texts (an integer id in decimal) */
  float *scores;    /* nq*k */
  uint32_t *counts; /* nq */
} eval_bf_hits;
void eval_bf_hits_free(eval_bf_hits *h); /* zeroed ok */

/*! eval_brute_force_matrix() : exact top-k of nq queries over n rows held in memory (both
 *  row-major, dim d), with the same scoring as eval_brute_force (fast sgemm filter, every
 *  candidate re-scored by the fixed-order exact kernel, so the result does not depend on
 *  `threads`); hit keys are row numbers (ties: the lower row first).  hits[q*k + i], i < counts[q].
 *  Rows are scored in blocks: memory beyond the inputs is 12 bytes of norms per row of a block
 *  of up to 2^22 rows (cosine: blocks of 16384 rows, normalised copies).  Polls
 *  vf_check_cancel() between blocks and between chunks of rows.
 *  @return : VF_EUSAGE for k, d or n out of range; VF_ECORRUPT for a NaN or infinite query;
 *            VF_ECANCELED when cancelled; VF_ENOMEM. */
vf_status eval_brute_force_matrix(const float *x, uint64_t n, const float *q, uint64_t nq,
                                  int32_t d, uint32_t k, corpus_distance metric, int threads,
                                  idx_hit *hits, uint32_t *counts, vf_error *err);

typedef struct eval_bf_result {
  uint64_t queries;
  uint64_t rows_scanned;
  uint64_t rows_skipped;        /* rows without a usable vector (null, NaN/inf, empty, bad) */
  uint64_t files;
  uint64_t empty_files;         /* files without rows, skipped (corpus_plan) */
  uint64_t rescored;            /* candidates re-scored by the exact kernel */
  uint64_t queries_filtered;    /* queries with a filter */
  uint64_t queries_short;       /* queries with fewer than k hits (filters, small corpora) */
  double seconds;
  char *path;                   /* the file written (caller frees) */
} eval_bf_result;

/*! eval_brute_force() : exact top-K of every query over the corpus (or this job's share),
 *  streaming each file one row group at a time.  With vf_memory_budget() set, refuses when the
 *  queries, their K hits and two row groups of the vector column cannot fit.
 *  @return : VF_EUSAGE for bad options (a metric the vector kind does not support), VF_ENOMEM
 *            over the memory budget, VF_ECORRUPT for a dimension mismatch between queries and
 *            corpus or malformed input, reader/writer errors. */
vf_status eval_brute_force(const corpus_files *files, const eval_bf_opts *opts,
                           eval_bf_result *out, vf_error *err);

/*! eval_brute_force_merge() : merge every rank<NNN>.parquet of the partial directory for
 *  (queries, K) into the final file, identical to a single-job run.  opts->metric/num_jobs are
 *  ignored (read from the partials); opts->output overrides the final path.
 *  @return : VF_ENOTFOUND naming a missing rank, VF_EUSAGE naming what differs (queries file,
 *            K, metric, column, corpus, number of jobs) for a mismatched partial. */
vf_status eval_brute_force_merge(const corpus_files *files, const eval_bf_opts *opts,
                                 eval_bf_result *out, vf_error *err);

/* ------------------------------------------- query files, filters and results
 * The pieces `vforge index search` composes with the index (src/cli/cmd_index.c): a queries
 * file read, the queries' filters, the filtered search's payload by index row, and a results
 * file in the brute-force layout (bf_common.c, bf_filter.c, ivf_filter.c, bf_merge.c). */

typedef struct ev_hit {
  float score;
  char id[37];
} ev_hit;

typedef struct ev_queries {
  uint64_t n;
  int32_t dim;
  corpus_vec_kind kind;
  float *vecs;     /* DENSE: n*dim; MULTI: offsets[n]*dim (every vector of every query) */
  int64_t *offsets;/* MULTI: n+1 offsets into the vectors; SPARSE: n+1 into indices/values */
  uint32_t *indices;/* SPARSE: each query's indices ascending (no duplicates) */
  float *values;    /* SPARSE: the matching values */
  char **ids;      /* n query ids */
  char *vec_name;  /* vector column name in the queries file */
  char md5[33];    /* hex md5 of the queries file's bytes */
  char **filters;  /* n filter texts of a __filter__ column (NULL entries: unfiltered), or NULL */
  char fhash[9];   /* with filters: their <h> (see bf_filter.c) */
} ev_queries;

/*! ev_queries_read() : the query ids and vectors of a queries file. */
vf_status ev_queries_read(const char *path, const char *column, ev_queries *q, vf_error *err);
void ev_queries_free(ev_queries *q);

typedef struct ev_filters {
  flt_filter **per_query; /* nq entries (NULL: unfiltered), or NULL when nothing is filtered */
  flt_filter **owned;
  size_t nowned;
  char tag[16];           /* "" or "_f<h>", the file-name tag */
  const char **keys;      /* the payload keys the filters read */
  size_t nkeys;
  bool any;               /* some query is filtered */
  bool uses_id;           /* some query's filter has has_id */
} ev_filters;

/*! ev_filters_init() : the filters of nq queries: `text` (--filter, applied to every query) or
 *  `texts` (a __filter__ column, hash `qhash`), or neither.  Both: VF_EUSAGE (exit 2).
 *  Filter errors name `qpath` and the row.  An empty filter ({}) leaves a query unfiltered. */
vf_status ev_filters_init(ev_filters *x, uint64_t nq, char *const *texts, const char *qhash,
                          const char *text, const char *qpath, vf_error *err);
void ev_filters_free(ev_filters *x);

/* Filtered `index search` (ivf_filter.c): the payload of the corpus an index was built from,
 * by index row. */
struct ivf_index;
typedef struct ev_ivf_filter {
  const ev_filters *flt;
  flt_docs *docs;      /* every corpus row's payload (the filters' keys) */
  char *ids;           /* docs row i's id text at ids + 37 i */
  int64_t *pos;        /* index row -> docs row (-1: its id is not in the corpus) */
  uint64_t rows;       /* index rows */
  uint64_t unmatched;  /* index rows whose id is not in the corpus */
  uint8_t *mask;       /* scratch: one byte per docs row */
} ev_ivf_filter;
/*! ev_ivf_filter_open() : read `files` (records: a config's spec; NULL: a parquet corpus) for
 *  the payload keys of `flt` and map index `ix`'s rows to them by point id.
 *  @return : reader errors; VF_EUSAGE for a filter key the config's payload_fields lack. */
vf_status ev_ivf_filter_open(ev_ivf_filter *x, const struct ivf_index *ix, const corpus_files *files,
                             const corpus_record_spec *records, const ev_filters *flt, vf_error *err);
/*! ev_ivf_filter_allow() : allow[r] (one byte per index row) for query q's filter.
 *  @return : false (allow untouched) when query q is unfiltered. */
bool ev_ivf_filter_allow(ev_ivf_filter *x, size_t q, uint8_t *allow);
void ev_ivf_filter_close(ev_ivf_filter *x);

/*! ev_results_write() : write query_id / hit_ids / hit_scores (hits: n*k, nhits[i] used) with
 *  key-value metadata (kv: nkv key/value pairs). */
vf_status ev_results_write(const char *path, const ev_queries *q, uint32_t k, const ev_hit *hits,
                           const uint32_t *nhits, const char *const *kv, int nkv, vf_error *err);

#ifdef __cplusplus
}
#endif
#endif
