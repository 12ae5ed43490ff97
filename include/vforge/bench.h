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
 * queries that were answered; `recall` is the strict value.  A filtered query whose ground
 * truth holds no hit (no point matches its filter) has no recall: it is counted (no_truth) and
 * left out of the means.
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
  /* filters (issue 19): a queries file's __filter__ column (n texts, NULL entries: unfiltered;
   * NULL: no such column), compiled by bench_queries_filter() into `filters` (n entries, NULL:
   * unfiltered; NULL: nothing filtered), which bench_run() passes to store_search_filtered() */
  char **filter_texts;
  char filter_hash[9];
  flt_filter **filters;
  void *filter_state;
} bench_queries;

/*! bench_query_column() : the one naming rule for the vector column of a queries file made for
 *  a config vector: `generate-queries CONFIG` writes it under the vector's `name`; a reader looks
 *  for `name`, then for `column` (the parquet column the vector is read from: queries sampled
 *  from the parquet corpus directly).  *out is `name` or `column` (borrowed); a queries file
 *  with neither, or not parquet (npy/fbin/hdf5, which have no column names), gives `name`. */
vf_status bench_query_column(const char *path, const char *name, const char *column,
                             const char **out, vf_error *err);
/*! bench_read_queries() : the query ids and vectors of a queries parquet file.  `column` names
 *  the vector column; NULL: the file's only dense-vector column (list<float|double|half> or
 *  FIXED_LEN_BYTE_ARRAY) besides query_id / __source_file__ / __source_row__.
 *  @return : VF_ENOTFOUND for a missing file or column (naming the columns there are);
 *            VF_EUSAGE when several vector columns exist and none is named; VF_ECORRUPT naming
 *            the file and row for a null query_id or vector, or a dimension mismatch. */
vf_status bench_read_queries(const char *path, const char *column, bench_queries *out,
                             vf_error *err);
void bench_queries_free(bench_queries *q);
/*! bench_queries_filter() : compile the queries' filters: their __filter__ column, or `filter`
 *  (a filter for every query; NULL: none).  `path` names the queries file in messages.
 *  @return : VF_EUSAGE for both at once, or a filter that does not compile (naming its row). */
vf_status bench_queries_filter(bench_queries *q, const char *filter, const char *path,
                               vf_error *err);

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
 *  *strict and *tie receive recall_min and recall_max of the query, over min(k, the row's
 *  hits).  `hits`/`nhits`: the store's answer, best first.
 *  @return : false when the truth row is empty (a filtered query no point matches: it has no
 *            recall and is left out of the means; *strict = *tie = 1). */
bool bench_recall_one(const bench_truth *t, size_t row, size_t k, const store_hit *hits,
                      size_t nhits, double *strict, double *tie);

typedef struct bench_options {
  store_config store;    /* every worker opens its own handle with it */
  const char *vector;    /* the store's vector to search; NULL: its only dense vector */
  size_t k;              /* >= 1, <= the truth's k */
  int concurrency;       /* closed loop: workers; open loop: workers serving the queue (>= 1) */
  double rps;            /* > 0: open loop at this rate; 0: closed loop */
  int max_outstanding;   /* open loop: queued + in-flight bound (0: max(64, 4 * concurrency)) */
  const store_qdrant_search_opts *qdrant; /* NULL, or applied to every handle (qdrant stores) */
  uint32_t nprobe;       /* local store: IVF lists probed per query (0: the index's own);
                            see store_local_set_nprobe() */
  size_t warmup;         /* queries run before the clock starts (untimed, unscored; query i mod n,
                            shared by the workers), after each handle's own warm-up search */
  bool per_query;        /* keep each query's latency and recall in the report */
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
  double recall, recall_min, recall_max; /* means over answered queries with true hits (0 when none) */
  size_t filtered;       /* queries searched with a filter */
  size_t no_truth;       /* answered queries whose ground truth has no hit (filtered): not in the means */
  double qps;            /* answered / seconds */
  double seconds;        /* from the first scheduled query to the last completion */
  double p50_ms, p95_ms, p99_ms, max_ms; /* nearest-rank percentiles of answered queries */
  int workers;
  bool open_loop;
  double rps;
  vf_status first_error_status; /* VF_OK when errors == dropped */
  char first_error[VF_ERROR_MSG_MAX];
  size_t warmup;         /* warm-up queries run */
  size_t max_outstanding; /* open loop: the queued + in-flight bound used; 0: closed loop */
  /* per_query: query i's latency in ms (< 0: not answered) and recall (strict, ties); NULL
   * otherwise.  Freed by bench_report_free(). */
  double *query_ms, *query_recall, *query_recall_max;
} bench_report;

/*! bench_report_free() : the per-query arrays of a report (NULL ok). */
void bench_report_free(bench_report *r);

/*! bench_run() : open the handles (each runs one untimed warm-up search, then together they run
 *  o->warmup more), then run every query once and fill `rep`.  `rows` from bench_align().
 *  Failed searches are counted in the report, not returned; when every query failed the first
 *  failure is returned.  vf_cancel_request() stops the run between queries (VF_ECANCELED).
 *  @return : VF_EUSAGE for k == 0, k above the truth's K, a bad concurrency or rate, nprobe on a
 *            store other than local or Qdrant options on one other than qdrant; store_open
 *            and warm-up search errors (a wrong dimension, an unknown vector, a missing
 *            collection, nprobe without an index); VF_ENOMEM; VF_ECANCELED. */
vf_status bench_run(const bench_options *o, const bench_queries *q, const bench_truth *t,
                    const size_t *rows, bench_report *rep, vf_error *err);

/*! bench_percentile() : the nearest-rank p-th percentile (0 < p <= 100) of n ascending values
 *  (0 when n == 0). */
double bench_percentile(const double *sorted, size_t n, double p);

/*! bench_report_json() : append {k, queries, recall, recall_min, recall_max, qps, latency_ms:
 *  {p50, p95, p99, max}, errors} and a newline (DESIGN.md "--json report keys"); with filtered
 *  queries also filtered_queries and no_truth_queries. */
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
  const char *filter;      /* a filter (vforge/filter.h JSON) for every query, or NULL */
} bench_request;

/*! bench_is_bundle() : true when `path` names an ann-filtering-benchmark bundle (a directory,
 *  .tgz / .tar.gz, or its tests.jsonl), which is its own ground truth. */
bool bench_is_bundle(const char *path);

/* A bench run's resolved inputs: the store and vector (in `o`, whose run knobs — nprobe,
 * warmup, per_query, qdrant — the caller may still set), the queries, the truth and each
 * query's truth row, ready for bench_run() or bench_sweep(). */
typedef struct bench_target {
  bench_options o;
  bench_queries q;
  bench_truth t;
  size_t *rows;
  struct bench_target_own *own; /* the config and store specs `o` points into */
} bench_target;

/*! bench_target_open() : resolve the store and vector of `rq`, read and align queries and
 *  truth.  Free with bench_target_free() (also after a failure: then nothing is held).
 *  @return : VF_EUSAGE for inconsistent inputs (both or neither of config and store, k above
 *            the truth's K, qdrant options on another store); as the readers. */
vf_status bench_target_open(const bench_request *rq, bench_target *tg, vf_error *err);
void bench_target_free(bench_target *tg);

/*! bench_execute() : bench_target_open() + bench_run(): one run, as vforge.bench() makes it.
 *  *vector (may be NULL) receives the vector searched (caller frees; NULL when the store's only
 *  one was used).
 *  @return : as bench_target_open() and bench_run(). */
vf_status bench_execute(const bench_request *rq, bench_report *rep, char **vector, vf_error *err);

/*! bench_local_spec() : the vector spec of an existing collection of the `local` store, read
 *  from <path>/<collection>/collection.json (the store's documented layout), so a collection
 *  can be benchmarked without its load config.  Caller frees with bench_spec_free().
 *  @return : VF_ENOTFOUND when the collection does not exist; VF_ECORRUPT for a spec that
 *            cannot be read. */
vf_status bench_local_spec(const char *path, const char *collection, store_vector_spec **out,
                           int *n, vf_error *err);
void bench_spec_free(store_vector_spec *v, int n);

/* ------------------------------------------------------------------ sweeps (issue 19)
 *
 * A sweep runs bench_run() once per point of a grid: the cartesian product of one axis per
 * swept parameter (a "knob", named like its bench flag), the last axis varying fastest.  Each
 * point gets its own handles (a fresh store_open) and its own warm-up. */

typedef enum bench_knob {
  BENCH_KNOB_NPROBE,       /* "nprobe": local store IVF lists probed, integer >= 1 */
  BENCH_KNOB_HNSW_EF,      /* "hnsw-ef": qdrant hnsw_ef, integer >= 1 */
  BENCH_KNOB_OVERSAMPLING, /* "oversampling": qdrant quantization.oversampling, >= 1 */
  BENCH_KNOB_RESCORE,      /* "rescore": qdrant quantization.rescore, true|false */
  BENCH_KNOB_EXACT,        /* "exact": qdrant exact search, true|false */
  BENCH_KNOB_CONCURRENCY,  /* "concurrency": workers, 1..1024 */
  BENCH_KNOB_RPS,          /* "rps": open-loop rate in queries/s, > 0 */
  BENCH_NKNOBS
} bench_knob;

#define BENCH_MAX_AXIS_VALUES 256 /* values of one axis */
#define BENCH_MAX_POINTS 4096     /* points of a grid */

typedef struct bench_axis {
  bench_knob knob;
  size_t n;
  double values[BENCH_MAX_AXIS_VALUES]; /* in the order given; booleans as 0 / 1 */
} bench_axis;

typedef struct bench_grid {
  int naxes;                     /* 0: a plain run (one point, the base options) */
  bench_axis axes[BENCH_NKNOBS]; /* each knob at most once, in the order added */
} bench_grid;

/*! bench_knob_name() : the knob's name, the bench flag's ("nprobe", "hnsw-ef", ...). */
const char *bench_knob_name(bench_knob k);
/*! bench_knob_parse() : the knob named `name` (a bench flag name).  @return : false if none. */
bool bench_knob_parse(const char *name, bench_knob *out);
/*! bench_knob_value() : one value of a knob from text ("8", "1.5", "true"), range-checked.
 *  @return : VF_EUSAGE naming the knob, the value and what is expected. */
vf_status bench_knob_value(bench_knob k, const char *text, double *out, vf_error *err);
/*! bench_grid_add() : add the axis "name=v1,v2,..." (--sweep).  @return : VF_EUSAGE for an
 *  unknown name (listing the known ones), a knob already swept, a bad or repeated value, an
 *  empty list, more than BENCH_MAX_AXIS_VALUES values, or a grid above BENCH_MAX_POINTS. */
vf_status bench_grid_add(bench_grid *g, const char *spec, vf_error *err);
/*! bench_grid_add_list() : the same for knob `k` and its comma-separated `values`
 *  (bench --concurrency 1,2,4 / --rps 100,200). */
vf_status bench_grid_add_list(bench_grid *g, bench_knob k, const char *values, vf_error *err);
/*! bench_grid_size() : points of the grid (1 when it has no axis). */
size_t bench_grid_size(const bench_grid *g);
/*! bench_grid_has() : whether the grid sweeps knob `k`. */
bool bench_grid_has(const bench_grid *g, bench_knob k);

typedef struct bench_point {
  bench_options o;                /* the base options with this point's values; o.qdrant points
                                     at `qdrant` below when set, so a point is never copied */
  store_qdrant_search_opts qdrant;
  double values[BENCH_NKNOBS];    /* this point's value of each swept knob; NAN when unswept */
  bench_report rep;
} bench_point;

/*! bench_grid_point() : fill `out` with point i (0 <= i < bench_grid_size()) of the grid over
 *  `base`: the swept values replace the base's (a Qdrant knob starts from base->qdrant, or from
 *  the unset options).  out->rep is zeroed. */
void bench_grid_point(const bench_grid *g, size_t i, const bench_options *base, bench_point *out);

/* Called after each point of a sweep, in order (i of n); an error it returns stops the sweep. */
typedef vf_status (*bench_point_fn)(void *user, const bench_point *p, size_t i, size_t n,
                                    vf_error *err);

/*! bench_sweep_check() : the checks bench_sweep() makes before its first point (see there).
 *  @return : VF_EUSAGE naming the knob and the store. */
vf_status bench_sweep_check(const bench_options *base, const bench_grid *g, vf_error *err);

/*! bench_sweep() : bench_run() for every point of `g` over `base` (an empty grid: one run of
 *  `base`), calling `done` (may be NULL) after each.  Every knob is checked against the store
 *  before the first point runs.  *points / *npoints receive the points run so far (also when an
 *  error stops the sweep: the points before it are complete); free with bench_points_free().
 *  @return : VF_EUSAGE for a knob the store does not have (nprobe on a store other than local,
 *            the Qdrant knobs on one other than qdrant), --max-outstanding with a closed-loop
 *            point; the first failing point's bench_run() error, prefixed with its values;
 *            VF_ECANCELED between points. */
vf_status bench_sweep(const bench_options *base, const bench_grid *g, const bench_queries *q,
                      const bench_truth *t, const size_t *rows, bench_point_fn done, void *user,
                      bench_point **points, size_t *npoints, vf_error *err);
void bench_points_free(bench_point *p, size_t n);

/*! bench_point_params() : "nprobe=8 hnsw-ef=64" — the swept values of a point ("" for none). */
void bench_point_params(const bench_point *p, char *out, size_t cap);

/*! bench_point_json() : {"params": {knob: value of each swept knob}, then the members of
 *  bench_report_json()} without a newline; integers and booleans as JSON integers and booleans. */
vf_status bench_point_json(const bench_point *p, vf_buf *out, vf_error *err);
/*! bench_points_json() : {"points": [bench_point_json() of each]} and a newline: bench --json
 *  with a sweep. */
vf_status bench_points_json(const bench_point *p, size_t n, vf_buf *out, vf_error *err);

/* ------------------------------------------------------ result files (issue 19)
 *
 * --results FILE.jsonl: one JSON object per point, bench_point_json()'s keys plus
 *   "label", "point", "points" (its index and the sweep's size), "time" (UTC, ISO 8601),
 *   "vforge_version", "config" {store, collection, url (userinfo removed), vector, k, queries,
 *   ground_truth, nqueries, warmup, concurrency, rps, max_outstanding, nprobe, hnsw_ef,
 *   oversampling, rescore, exact: null where unset} and "machine" {host, os, cpu_model,
 *   cpus_online, cpus_available, threads, simd, blas, blas_core}, so runs from different days,
 *   machines and stores compare.
 * --per-query FILE.jsonl: one line per query and point {point, params, query_id, latency_ms,
 *   recall, recall_max} (latency_ms and the recalls null for a query that was not answered). */

typedef struct bench_machine {
  char host[64];
  char os[208];        /* uname: "Linux 6.1.0-18-amd64 x86_64" */
  char cpu_model[128]; /* /proc/cpuinfo "model name" ("unknown" when absent) */
  int cpus_online;     /* sysconf(_SC_NPROCESSORS_ONLN) */
  int cpus_available;  /* vf_cpu_available(): affinity, cgroup quota, SLURM_CPUS_PER_TASK */
  int threads;         /* vf_threads() */
  char simd[16];       /* the distance kernels in use (idx_kernels_active()) */
  char blas[160];      /* openblas_get_config() */
  char blas_core[64];  /* openblas_get_corename(): the kernel set OpenBLAS chose */
  char version[32];    /* the vforge version */
} bench_machine;

/*! bench_machine_get() : describe this machine and build (never fails; unknown fields are
 *  "unknown" or 0). */
void bench_machine_get(bench_machine *m);

typedef struct bench_run_info {
  const char *label;        /* the series name in plots; NULL: "<store type>:<collection>" */
  const char *queries_path; /* as given */
  const char *truth_path;
} bench_run_info;

/*! bench_results_json() : the --results line of point i of n (with its newline). */
vf_status bench_results_json(const bench_point *p, size_t i, size_t n,
                             const bench_run_info *info, const bench_machine *m, vf_buf *out,
                             vf_error *err);
/*! bench_per_query_json() : the --per-query lines of point i (needs o.per_query). */
vf_status bench_per_query_json(const bench_point *p, size_t i, const bench_queries *q,
                               vf_buf *out, vf_error *err);

/* ----------------------------------------------------------------- plots (issue 19)
 *
 * bench_plot() draws, with Cairo (PNG or SVG by the file's extension), two panels side by side:
 *   left:  recall@k (x, linear) against queries/s (y, log scale), every point a circle, the
 *          Pareto front of each series (the points no other point of the series beats in both
 *          recall and QPS) joined by a line and filled, dominated points hollow — the
 *          ann-benchmarks picture;
 *   right: latency p50 / p95 / p99 (y, ms, log scale; solid, dashed, dotted) against queries/s
 *          (x, log scale), a square per point and percentile;
 * one colour per series, a legend, each point labelled with its swept values. */

typedef struct bench_plot_point {
  double recall, recall_min, recall_max, qps, p50_ms, p95_ms, p99_ms;
  char params[96]; /* bench_point_params() */
} bench_plot_point;

typedef struct bench_series {
  char *label;
  size_t k;
  size_t n;
  bench_plot_point *pts;
} bench_series;

#define BENCH_PLOT_WIDTH 1280 /* pixels (PNG) / points (SVG) */
#define BENCH_PLOT_HEIGHT 560
#define BENCH_MAX_SERIES 16

/*! bench_series_read() : the points of a --results file (blank lines skipped).  The label is
 *  the first line's "label", else the file name without its extension.
 *  @return : VF_ENOTFOUND for a missing file; VF_ECORRUPT naming file and line for a line that
 *            is not a JSON object with numeric recall, qps and latency_ms p50/p95/p99 and an
 *            integer k, for lines with different k, for an empty file. */
vf_status bench_series_read(const char *path, bench_series *out, vf_error *err);
/*! bench_series_from_points() : the series of a sweep just run (label NULL: as in
 *  bench_run_info). */
vf_status bench_series_from_points(const bench_point *p, size_t n, const char *label,
                                   bench_series *out, vf_error *err);
void bench_series_free(bench_series *s);

/*! bench_plot_check_path() : whether bench_plot() can write `path` (checked before a long run):
 *  @return : VF_EUSAGE for an extension other than .png / .svg; VF_ENOTFOUND / VF_EIO when its
 *            directory does not exist or is not writable. */
vf_status bench_plot_check_path(const char *path, vf_error *err);

/*! bench_plot() : draw `n` series (1..BENCH_MAX_SERIES) into `path` (".png" or ".svg"),
 *  written atomically.  `title` NULL: "recall@k vs throughput".
 *  @return : VF_EUSAGE for another extension, no or too many series, series of different k;
 *            VF_EIO when the file cannot be written; VF_EINTERNAL for a Cairo failure. */
vf_status bench_plot(const bench_series *s, size_t n, const char *title, const char *path,
                     vf_error *err);

#ifdef __cplusplus
}
#endif
#endif
