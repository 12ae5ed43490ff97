/*
 * vforge bench — run evaluation queries against a vector store and measure recall@k against
 * exact ground truth, latency and throughput (issue 5 "bench"; DESIGN.md "Corpus layout",
 * "Command line").
 *
 *   bench_read_queries()  <prefix>/eval/queries_<N>.parquet: query_id + one dense vector column
 *   bench_read_truth()    <prefix>/eval/brute_force_queries_<N>_k<K>.parquet: query_id,
 *                         hit_ids list<string>, hit_scores list<float> (best first)
 *   bench_align()         each query's ground-truth row, matched by query_id
 *   bench_run()           every query once through store_search(k):
 *                           closed loop — `concurrency` workers, each with its own store handle
 *                           (handles are single-threaded), each issuing its next query as soon
 *                           as the previous one returns;
 *                           open loop (`rps` > 0) — query i is scheduled at t0 + i/rps whatever
 *                           the completions; its latency is measured from that scheduled time
 *                           (no coordinated omission).  At most `max_outstanding` requests are
 *                           queued or in flight; a query that would exceed it is dropped and
 *                           counted as an error.
 *
 * Recall@k of one query (ties at the cutoff): the truth file stores only K hits, so when scores
 * beyond its k-th tie with it, a different but equally near point is as correct as the stored
 * one.  recall_min counts returned ids found in the truth's top k (strict);  recall_max also
 * counts a returned id whose returned score equals the truth's k-th score within 1e-6
 * relative.  Both are divided by min(k, hits stored for the query) and averaged over the
 * queries that were answered; `recall` is the strict value.
 */
#ifndef VFORGE_BENCH_H
#define VFORGE_BENCH_H

#include "vforge/store.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_MAX_QUERIES ((size_t)1 << 26) /* rows accepted from a queries / truth file */
#define BENCH_MAX_K ((size_t)1 << 16)       /* hits per query accepted from a truth file */
#define BENCH_MAX_TRUTH_HITS ((size_t)1 << 28) /* rows x K of a truth file held in memory */
#define BENCH_TIE_REL 1e-6                  /* relative tolerance of a tie at the cutoff */

typedef struct bench_queries {
  size_t n;
  int32_t dim;
  float *vectors; /* n * dim, row-major */
  char **ids;     /* n query ids */
  char *column;   /* the vector column read */
} bench_queries;

/*! bench_read_queries() : the query ids and vectors of a queries parquet file.  `column` names
 *  the vector column; NULL: the file's only dense-vector column (list<float|double|half> or
 *  FIXED_LEN_BYTE_ARRAY) besides query_id / __source_file__ / __source_row__.
 *  @return : VF_ENOTFOUND for a missing file or column (naming the columns there are);
 *            VF_EUSAGE when several vector columns exist and none is named; VF_ECORRUPT naming
 *            the file and row for a null query_id or vector, or a dimension mismatch. */
vf_status bench_read_queries(const char *path, const char *column, bench_queries *out,
                             vf_error *err);
void bench_queries_free(bench_queries *q);

typedef struct bench_truth {
  size_t n;        /* rows */
  size_t k;        /* the most hits of any row (the file's K) */
  char **qids;     /* n */
  char **hit_ids;  /* n * k canonical id texts; NULL past counts[i] */
  float *scores;   /* n * k */
  size_t *counts;  /* hits stored per row */
  /* what the file records about how it was computed (issue 14); empty when nothing */
  char metric[16];     /* vforge.bf.metric, or an .hdf5 bundle's `distance` as a metric name */
  char files_md5[33];  /* vforge.bf.corpus_md5 (corpus_files_md5() of the corpus) */
  char *id_expression; /* vforge.bf.id_expression (owned); NULL when the file records none */
} bench_truth;

/*! bench_read_truth() : a ground-truth parquet file (query_id, hit_ids, hit_scores).  Ids are
 *  canonicalised with store_id_parse()/store_id_format() when they parse (so an upper-case UUID
 *  matches the store's lower-case one).
 *  @return : VF_ENOTFOUND for a missing file or column; VF_ECORRUPT naming file and row for a
 *            null query_id, a null hit, hit_ids and hit_scores of different lengths, or a
 *            NaN score. */
vf_status bench_read_truth(const char *path, bench_truth *out, vf_error *err);
void bench_truth_free(bench_truth *t);

/*! bench_align() : rows[i] = the truth row of query i (matched by query_id).  Caller frees
 *  *rows.  @return : VF_EUSAGE naming the first query without ground truth (and how many lack
 *  it), or a query_id the truth holds twice. */
vf_status bench_align(const bench_queries *q, const bench_truth *t, size_t **rows, vf_error *err);

/*! bench_recall_one() : recall of one answer against one truth row (see the top of this file):
 *  *strict and *tie receive recall_min and recall_max of the query (1 when the truth row is
 *  empty).  `hits`/`nhits`: the store's answer, best first. */
void bench_recall_one(const bench_truth *t, size_t row, size_t k, const store_hit *hits,
                      size_t nhits, double *strict, double *tie);

typedef struct bench_options {
  store_config store;    /* every worker opens its own handle with it */
  const char *vector;    /* the store's vector to search; NULL: its only dense vector */
  size_t k;              /* >= 1, <= the truth's k */
  int concurrency;       /* closed loop: workers; open loop: workers serving the queue (>= 1) */
  double rps;            /* > 0: open loop at this rate; 0: closed loop */
  int max_outstanding;   /* open loop: queued + in-flight bound (0: max(64, 4 * concurrency)) */
  const store_qdrant_search_opts *qdrant; /* NULL, or applied to every handle (qdrant stores) */
} bench_options;

/* Ground truth that cannot measure the store (issue 14).  `bench` and `index search
 * --ground-truth` check, before any query runs, what both sides record:
 *   metric   the truth's (vforge.bf.metric, an .hdf5 bundle's distance) against the searched
 *            vector's distance (or the index's metric): different -> VF_EUSAGE naming both;
 *   corpus   the truth's corpus md5 and id expression against the collection's record (written
 *            by `load prepare`) or the index header's identity: different -> VF_EUSAGE;
 *   ids      where either side records nothing (truth from other tools, .hdf5 neighbors, an
 *            older store or index), the truth hits of the first BENCH_CHECK_QUERIES queries are
 *            looked up: none stored -> VF_EUSAGE; some missing -> a warning with the count;
 *   load     a collection whose recorded load never reached finalize -> a warning. */
#define BENCH_CHECK_QUERIES 100
/*! bench_check_truth() : the checks above for bench: `o->store` is opened once; `gt` names the
 *  truth file in messages; rows from bench_align(), nq queries.
 *  @return : VF_EUSAGE when the truth cannot be right for the store; store errors. */
vf_status bench_check_truth(const bench_options *o, const bench_truth *t, const size_t *rows,
                            size_t nq, const char *gt, vf_error *err);
struct ivf_index;
/*! bench_check_index() : the same checks against an IVF index file (its metric and the corpus
 *  identity in its header; lookups in its id table). */
vf_status bench_check_index(const struct ivf_index *ix, const char *index_path,
                            const bench_truth *t, const size_t *rows, size_t nq, size_t k,
                            const char *gt, vf_error *err);

typedef struct bench_report {
  size_t k, queries;
  size_t answered;       /* searches that returned */
  size_t errors;         /* failed searches + dropped queries */
  size_t dropped;        /* open loop: queries dropped at the outstanding bound */
  double recall, recall_min, recall_max; /* means over answered queries (0 when none) */
  double qps;            /* answered / seconds */
  double seconds;        /* from the first scheduled query to the last completion */
  double p50_ms, p95_ms, p99_ms, max_ms; /* nearest-rank percentiles of answered queries */
  int workers;
  bool open_loop;
  double rps;
  vf_status first_error_status; /* VF_OK when errors == dropped */
  char first_error[VF_ERROR_MSG_MAX];
} bench_report;

/*! bench_run() : open the handles (each runs one untimed warm-up search), then run every query
 *  once and fill `rep`.  `rows` from bench_align().  Failed searches are counted in the
 *  report, not returned; when every query failed the first failure is returned.
 *  @return : VF_EUSAGE for k == 0, k above the truth's K, a bad concurrency or rate; store_open
 *            and warm-up search errors (a wrong dimension, an unknown vector, a missing
 *            collection); VF_ENOMEM. */
vf_status bench_run(const bench_options *o, const bench_queries *q, const bench_truth *t,
                    const size_t *rows, bench_report *rep, vf_error *err);

/*! bench_percentile() : the nearest-rank p-th percentile (0 < p <= 100) of n ascending values
 *  (0 when n == 0). */
double bench_percentile(const double *sorted, size_t n, double p);

/*! bench_report_json() : append {k, queries, recall, recall_min, recall_max, qps, latency_ms:
 *  {p50, p95, p99, max}, errors} and a newline (DESIGN.md "--json report keys"). */
vf_status bench_report_json(const bench_report *r, vf_buf *out, vf_error *err);

/* One bench run from its inputs (what `vforge bench` and vforge.bench() take). */
typedef struct bench_request {
  const char *config;      /* a load config: its vectorstore and `vectors:`; or NULL and: */
  const char *store_type;  /*   "local", with `path` (NULL: ./vforge-data) and `collection` */
  const char *path;
  const char *collection;
  const char *column;      /* a config's vector (name or column), or the queries column */
  const char *queries;     /* queries file (see bench_read_queries) */
  const char *ground_truth;/* ground-truth file (see bench_read_truth) */
  size_t k;
  int concurrency;         /* >= 1 */
  double rps;              /* > 0: open loop */
  int max_outstanding;     /* open loop (0: default) */
  const store_qdrant_search_opts *qdrant; /* NULL, or applied (qdrant stores only) */
} bench_request;

/*! bench_execute() : resolve the store and vector, read and align queries and truth, run
 *  bench_run().  *vector (may be NULL) receives the vector searched (caller frees; NULL when
 *  the store's only one was used).
 *  @return : VF_EUSAGE for inconsistent inputs (both or neither of config and store, k above
 *            the truth's K, qdrant options on another store); as bench_run and the readers. */
vf_status bench_execute(const bench_request *rq, bench_report *rep, char **vector, vf_error *err);

/*! bench_local_spec() : the vector spec of an existing collection of the `local` store, read
 *  from <path>/<collection>/collection.json (the store's documented layout), so a collection
 *  can be benchmarked without its load config.  Caller frees with bench_spec_free().
 *  @return : VF_ENOTFOUND when the collection does not exist; VF_ECORRUPT for a spec that
 *            cannot be read. */
vf_status bench_local_spec(const char *path, const char *collection, store_vector_spec **out,
                           int *n, vf_error *err);
void bench_spec_free(store_vector_spec *v, int n);

#ifdef __cplusplus
}
#endif
#endif
