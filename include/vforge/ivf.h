/*
 * vforge ivf — IVF indexes (DESIGN.md "index" module): k-means coarse quantizer, Flat / SQ8 /
 * PQ / RaBitQ codes, a streaming builder with bounded memory, the on-disk index file and search.
 *
 * Layering (each layer usable on its own, all in src/index/):
 *   idx_kmeans()        k-means on an in-memory sample (BLAS-tiled assignment, deterministic)
 *   ivf_sampler         a seeded, stratified random sample over the logical rows of the input
 *   ivf_builder         streaming: add() vectors + ids in input order (spilled compressed to
 *                       disk), finish() trains on the sample, replays the spill, assigns,
 *                       encodes and writes the index file list by list
 *   ivf_index           an index file opened with mmap; info and batched, threaded search
 *
 * Scores follow index.h: larger = nearer (cosine similarity, dot, -L2, -L1).  COSINE indexes
 * normalise vectors (and queries) and then work as DOT; EUCLID works on squared L2 internally
 * and reports -sqrt(L2sq).  MANHATTAN is refused by the IVF layers (VF_EUSAGE).
 *
 * Determinism: the same input rows (in the same order), parameters and seed give a byte-identical
 * index file whatever the thread count.
 */
#ifndef VFORGE_IVF_H
#define VFORGE_IVF_H

#include "vforge/config.h"
#include "vforge/corpus.h"
#include "vforge/index.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------- k-means */

typedef struct idx_kmeans_opts {
  int iters;       /* most Lloyd iterations; 0: 20 */
  double stop_changed; /* > 0: early stop — after an iteration in which at most this fraction
                          of the training rows changed cluster, stop (the update of that
                          iteration is kept; a tiny value stops only at a fixed point, where
                          the result equals running every iteration).  <= 0: run every one */
  double stop_objective; /* > 0: early stop — after an iteration whose objective (the sum of
                            squared distances to the assigned centroids) is at most this fraction
                            below the previous iteration's, stop (that update is kept); either
                            rule stops.  <= 0: off */
  uint32_t max_per_centroid; /* > 0 and n > k * this: Lloyd runs on k * this rows taken at an even
                                stride over x (FAISS's max_points_per_centroid); `assign` still
                                covers all n rows.  0: every row */
  uint32_t hier_min_k; /* > 0 and k >= this: two-level k-means — round(sqrt(k)) coarse clusters,
                          each split by its own k-means into its share of the k (proportional to
                          its rows), then hier_refine full Lloyd iterations.  0: flat Lloyd */
  int hier_refine;     /* two-level: full iterations over all k centroids after the split (the
                          stop rules apply from the second); iters_run counts these */
  int *iters_run;  /* NULL, or receives the iterations run */
  size_t *rows_used; /* NULL, or receives the rows Lloyd ran on */
  uint64_t seed;   /* initial centroids are drawn from this seed */
  int threads;     /* 0: vf_threads() */
  bool spherical;  /* renormalise centroids after each update (cosine / dot) */
  const char *progress; /* NULL: silent; else the phase of the progress events (stage
                           "k-means", iteration i/N with the objective, the sum of squared
                           distances to the assigned centroids) */
} idx_kmeans_opts;

/*! idx_kmeans() : k centroids (k x d, row-major, into `centroids`) of n x d `x`.
 *  Empty clusters are refilled by splitting the largest one.  The early stop counts rows whose
 *  cluster differs from the previous iteration's assignment, which is thread-count independent,
 *  so the iterations run are too.  `assign` (n entries) may be NULL;
 *  when given it receives each row's final cluster.  Deterministic for a given seed whatever
 *  the thread count (fixed reduction order).  Polls vf_cancelled() once per iteration.
 *  @return : VF_EUSAGE when n < k or k == 0, VF_ENOMEM, VF_ECANCELED. */
vf_status idx_kmeans(const float *x, size_t n, size_t d, size_t k, const idx_kmeans_opts *opts,
                     float *centroids, uint32_t *assign, vf_error *err);

/* --------------------------------------------------------------- parameters */

typedef enum ivf_code {
  IVF_FLAT = 0, /* float32 vectors */
  IVF_SQ8,      /* per-dimension 8-bit scalar quantizer (bounds cover every encoded vector) */
  IVF_PQ,       /* residual product quantizer, pq_m sub-quantizers of pq_nbits (8 or 4) bits */
  IVF_RABITQ    /* randomised rotation, 1-bit codes (+ rabitq_bits-1 extra bits), error bound */
} ivf_code;

/*! ivf_code_name() : "flat", "sq8", "pq", "rabitq".  ivf_code_parse(): its inverse. */
const char *ivf_code_name(ivf_code c);
bool ivf_code_parse(const char *name, ivf_code *out);

typedef struct ivf_params {
  ivf_code type;
  corpus_distance metric; /* COSINE, DOT or EUCLID */
  int32_t dim;            /* > 0 */
  uint32_t nlist;         /* lists; 0: chosen from the row count (about 4*sqrt(N), >= 1) */
  uint32_t pq_m;          /* PQ sub-quantizers (dim % pq_m == 0); 0: dim/4 rounded to a divisor */
  uint32_t pq_nbits;      /* PQ bits per code: 8 (256 centroids per sub-quantizer, float lookup
                             tables) or 4 (16 centroids, codes in the fast-scan layout searched
                             with u8 tables in SIMD registers, pair with rerank); 0: 8 */
  uint32_t rabitq_bits;   /* RaBitQ bits per dimension, 1..8; 0: 1 */
  uint32_t rerank;        /* > 0: keep float32 vectors in the file and re-rank the best
                             rerank*k candidates exactly at search time (0: off).  RaBitQ
                             instead re-ranks every row whose estimate plus its error bound
                             could enter the exact top k.  Ignored (0) for flat. */
  uint64_t seed;          /* sampling, k-means, rotation; default 1234 when 0 */
  uint64_t max_train;     /* training sample cap in rows; 0: max(256*nlist, train_per_centroid*nlist,
                             65536), lowered
                             to what a quarter of the memory budget holds */
  int kmeans_iters;       /* most k-means iterations; 0: 20 */
  double kmeans_stop;     /* idx_kmeans_opts.stop_changed; 0: IVF_KMEANS_STOP, < 0: run every
                             iteration (the objective rule too, unless kmeans_stop_objective > 0) */
  double kmeans_stop_objective; /* idx_kmeans_opts.stop_objective; 0: IVF_KMEANS_STOP_OBJECTIVE
                                   (off when kmeans_stop < 0), < 0: off */
  uint32_t train_per_centroid; /* k-means runs on at most nlist * this rows of the sample;
                                  0: IVF_TRAIN_PER_CENTROID */
  uint32_t kmeans_hier_min; /* nlist from which k-means is two-level (idx_kmeans_opts.hier_min_k,
                               IVF_KMEANS_HIER_REFINE full iterations after the split); 0:
                               IVF_KMEANS_HIER_MIN, UINT32_MAX: never */
  int threads;            /* 0: vf_threads() */
  uint64_t memory_budget; /* bytes; 0: vf_memory_budget() (every buffer counts, see builder) */
  const char *spill_dir;  /* where spill files go ("<out name>.spill.<host>-<pid>.<n>",
                             ".assign.", removed at finish/abort; a killed build's are swept by
                             the next build of the same output); NULL: beside the output file */
  const char *progress;   /* the phase of the progress events of finish() (stages train,
                             k-means, pq codebooks, assign, encode, checksum);
                             NULL: "index build" */
  uint8_t corpus_id[16];  /* the corpus identity written into the header (all zero: none);
                             see ivf_identity() */
  bool spill_plain;       /* store the spill frames without zstd (for a caller whose source is
                             uncompressed on disk already, the local store: compressing cost
                             more CPU than the pass it feeds); false: zstd, frames that barely
                             compress stored plain */
  bool spill_to_disk;     /* every spill frame goes to the spill file (tests of its format);
                             false: frames stay in memory while they fit IVF_MEM_SPILL_SHARE of the
                             budget (IVF_MEM_SPILL_MAX without one), the rest go to the file */
  bool sample_by_id;      /* the training sample is the rows whose point id hashes (with the
                             seed) smallest, in hash order: the index does not depend on the
                             order the rows are added in (the local store, whose segment order
                             follows its loader's workers); false: stratified by position */
} ivf_params;

#define IVF_KMEANS_STOP 0.01       /* default early stop: <= 1 % of rows changed list */
#define IVF_KMEANS_STOP_OBJECTIVE 0.001 /* and: the objective fell by <= 0.1 % in an iteration */
#define IVF_KMEANS_HIER_MIN 1024   /* default: two-level k-means from this nlist (DESIGN.md) */
#define IVF_KMEANS_HIER_REFINE 1   /* full Lloyd iterations after the two-level split */
#define IVF_MEM_SPILL_SHARE 8      /* in-memory spill frames: at most 1/8 of the memory budget */
#define IVF_MEM_SPILL_MAX ((uint64_t)1 << 30) /* ... and at most 1 GiB without a budget */
#define IVF_TRAIN_PER_CENTROID 128 /* default k-means rows per list (FAISS: 256; recall holds, see
                                      docs/DESIGN.md "k-means sample cap") */
#define IVF_SAMPLE_PER_CENTROID 256 /* default training sample: max(this, train_per_centroid) rows
                                       per list (PQ codebooks train on the whole sample) */

/* ------------------------------------------------------------------- sampler */

/* A seeded, stratified random sample of `cap` rows from a stream of rows.  When the total row
 * count is known up front (`total_rows` > 0), the rows are cut into `cap` equal strata and one
 * uniformly random row is kept from each; otherwise (0) a stratified reservoir keeps the sample
 * representative as the stream grows.  Either way every part of the input (head, tail, every
 * k-th file, a small late batch) is represented in proportion to its size. */
typedef struct ivf_sampler ivf_sampler;

vf_status ivf_sampler_open(size_t dim, uint64_t cap, uint64_t total_rows, uint64_t seed,
                           ivf_sampler **out, vf_error *err);
/*! ivf_sampler_offer() : n rows (n x dim) that follow the rows offered before. */
vf_status ivf_sampler_offer(ivf_sampler *s, const float *rows, size_t n, vf_error *err);
/*! ivf_sampler_offer_keyed() : n rows with a key each (a hash of the row's point id): the
 *  sample becomes the `cap` rows of smallest key, whatever order the rows arrive in.  A sampler
 *  takes keyed or unkeyed rows, not both (VF_EUSAGE). */
vf_status ivf_sampler_offer_keyed(ivf_sampler *s, const float *rows, const uint64_t *keys, size_t n,
                                  vf_error *err);
/*! ivf_sampler_sort_keyed() : orders a keyed sample by key (no-op for an unkeyed one), so that
 *  ivf_sampler_rows() is the same for the same rows in any order.  VF_ENOMEM. */
vf_status ivf_sampler_sort_keyed(ivf_sampler *s, vf_error *err);
/*! ivf_sampler_rows() : the sample (borrowed, *n rows; in input order, or in key order after
 *  ivf_sampler_sort_keyed()); rows seen so far. */
const float *ivf_sampler_rows(const ivf_sampler *s, size_t *n);
uint64_t ivf_sampler_seen(const ivf_sampler *s);
void ivf_sampler_close(ivf_sampler *s);

/* ------------------------------------------------------------------- builder */

/* Report of one build (also the `index build --json` keys of DESIGN.md). */
typedef struct ivf_build_report {
  uint64_t rows;                   /* rows added (and present in the index) */
  uint32_t nlist;
  ivf_code type;
  uint64_t training_rows_seen;     /* rows the sampler saw */
  uint64_t training_rows_retained; /* rows of the training sample (PQ codebooks train on all) */
  uint64_t kmeans_rows;            /* rows k-means ran on (<= nlist * train_per_centroid) */
  int kmeans_iterations;           /* Lloyd iterations run (early stop: fewer than the most) */
  int kmeans_max_iterations;       /* the most allowed */
  uint64_t source_bytes;           /* filled by the caller that reads the corpus */
  uint64_t spill_bytes;            /* bytes written to spill files */
  double seconds;                  /* total */
  double seconds_read, seconds_train, seconds_assign, seconds_write; /* per stage */
  uint64_t peak_rss_bytes;
  double list_max_over_mean;       /* max list size / mean list size */
  double list_balance;             /* sum(n_i^2) / N  (imbalance factor x mean) */
} ivf_build_report;

typedef struct ivf_builder ivf_builder;

/*! ivf_builder_open() : a builder writing the index to `out_path` (written to a temporary name,
 *  fsynced and renamed at finish: a failed or killed build never leaves a file that looks
 *  complete).  `total_rows` is the number of rows that will be added when known (0 = unknown):
 *  it sets the strata of the training sample and the default nlist.
 *  @return : VF_EUSAGE for bad parameters (message names the parameter), VF_EIO, VF_ENOMEM. */
vf_status ivf_builder_open(const ivf_params *p, const char *out_path, uint64_t total_rows,
                           ivf_builder **out, vf_error *err);
/*! ivf_builder_add() : n vectors (n x dim, row-major) with their point ids (strings, as the
 *  corpus reader makes them: ids[i] is ids_len[i] bytes).  The rows are offered to the sampler
 *  and spilled (compressed) to disk; memory stays within the budget.
 *  @return : VF_ECORRUPT for a NaN/inf component (naming the row index within the call). */
vf_status ivf_builder_add(ivf_builder *b, const float *vecs, size_t n, const char *const *ids,
                          const size_t *ids_len, vf_error *err);
/*! ivf_builder_finish() : train, assign, encode, write the file; fills `report` (may be NULL;
 *  its source_bytes is kept as the caller set it).  The builder is closed either way.
 *  @return : VF_EUSAGE when no rows were added or nlist exceeds the training rows, VF_ENOMEM
 *  when the budget cannot hold the lists' buffers, VF_EIO. */
vf_status ivf_builder_finish(ivf_builder *b, ivf_build_report *report, vf_error *err);
/*! ivf_builder_abort() : close without writing the index; spill files are removed. NULL ok. */
void ivf_builder_abort(ivf_builder *b);

/* ----------------------------------------------------- builds from a source */

typedef struct ivf_source_opts {
  const char *column;      /* a parquet URI: the dense column (NULL: the only one) */
  const corpus_idexpr *id; /* NULL: the source's (a config's id_expression, else
                              vf_point_id(filename, file_row_number)) */
  const char *id_text;     /* the text of `id` (the header's corpus identity names it) */
  bool metric_given;       /* p->metric was chosen; else a config's vector distance wins */
} ivf_source_opts;

/*! ivf_build_source() : an index file at `out` from a corpus source (a parquet URI, a config
 *  with its vector, a vector file): rows counted from the footers, then every dense vector and
 *  its point id streamed into ivf_builder one row group at a time (vf_check_cancel() polled
 *  between them).  p->dim is set from the data; p->metric from the config unless metric_given;
 *  p->corpus_id, when all zero, becomes the source's corpus_identity() (files md5 and the id
 *  expression).
 *  @return : VF_EUSAGE for a vector that is not dense, manhattan, or no rows; VF_ECORRUPT for a
 *            dimension that changes; reader and builder errors. */
vf_status ivf_build_source(const corpus_source *src, const ivf_source_opts *o, ivf_params *p,
                           const char *out, ivf_build_report *rep, vf_error *err);

/*! ivf_build_matrix() : an index file at `out` from n x p->dim vectors in memory; the point id
 *  of row i is "<i>".  @return : as ivf_builder_*. */
vf_status ivf_build_matrix(ivf_params *p, const char *out, const float *x, uint64_t n,
                           ivf_build_report *rep, vf_error *err);

/*! ivf_build_report_json() : append the `index build --json` object (DESIGN.md keys plus
 *  seconds_read/train/assign/write, dim, metric, files, output), no newline. */
vf_status ivf_build_report_json(const ivf_build_report *r, const char *out, int32_t dim,
                                corpus_distance metric, size_t nfiles, vf_buf *b, vf_error *err);

/* -------------------------------------------------------------- index file */

/* On-disk layout (little-endian): a versioned header (magic "VFIVF\0\0\1", version, metric,
 * dim, type, nlist, pq_m, rabitq_bits, rerank, seed, rows, section table; version 2, written
 * only for 4-bit PQ, adds pq_nbits), centroids,
 * codebooks / quantizer bounds / rotation, the list directory (offset, count per list), lists
 * (global row numbers + codes, PQ codes transposed per list), the id table (row -> point id),
 * optional float32 vectors for re-ranking, and a trailing checksum over everything before it.
 * Opening checks the magic, version, every section bound and the checksum (VF_ECORRUPT naming
 * the file and the section). */
typedef struct ivf_index ivf_index;

typedef struct ivf_info {
  uint32_t version;
  ivf_code type;
  corpus_distance metric;
  int32_t dim;
  uint32_t nlist, pq_m, rabitq_bits, rerank;
  uint32_t pq_nbits; /* PQ: 8 or 4; 0 for the other types */
  uint64_t seed, rows, file_bytes;
  uint32_t list_min, list_max; /* list sizes */
  double list_max_over_mean, list_balance;
  bool has_corpus_id;          /* the file records the identity of the corpus it was built from */
  uint8_t corpus_id[16];       /* corpus_identity() of that corpus (ids included) */
} ivf_info;

vf_status ivf_open(const char *path, ivf_index **out, vf_error *err);
void ivf_info_get(const ivf_index *ix, ivf_info *out);
/*! ivf_id() : the point id of row `row` (borrowed; *len bytes, not NUL-terminated). */
const char *ivf_id(const ivf_index *ix, int64_t row, size_t *len);

/*! ivf_default_nprobe() : the lists a search scans unless told otherwise: max(16, nlist/16)
 *  (capped at nlist by the search) — one rule for `index search` and the local store. */
uint32_t ivf_default_nprobe(uint32_t nlist);

typedef struct ivf_search_opts {
  uint32_t nprobe;  /* lists scanned per query; 0: ivf_default_nprobe(); capped at nlist */
  int threads;      /* 0: vf_threads() */
  uint32_t rerank;  /* override of the file's rerank factor; 0: the file's.  A 4-bit PQ file
                       without float32 vectors re-scores the best rerank*k candidates with float
                       lookup tables (exact ADC) instead of the u8 ones */
  /* Filtered search: allow[q] (nq entries; allow NULL or allow[q] NULL: no filter) holds one byte
   * per index row, 0 = the row is not a candidate of query q.  The filter is applied inside the
   * list scan (a row that is not allowed is never scored into the result), and the probe widens:
   * after the nprobe nearest lists, further lists are scanned in order of their centroid until k
   * allowed hits are found or every list was scanned. */
  const uint8_t *const *allow;
} ivf_search_opts;

/*! ivf_search() : the k best hits of nq queries (nq x dim).  hits[q*k + i], i < counts[q];
 *  hit keys are global rows (ivf_id() gives their point ids); scores as in index.h.  Ties are
 *  broken by point id.  Batched and threaded over queries; SIMD kernels chosen at run time.
 *  @return : VF_EUSAGE for a dimension mismatch or k == 0. */
vf_status ivf_search(const ivf_index *ix, const float *queries, size_t nq, int32_t dim, size_t k,
                     const ivf_search_opts *opts, idx_hit *hits, size_t *counts, vf_error *err);
void ivf_close(ivf_index *ix); /* NULL ok */

#ifdef __cplusplus
}
#endif
#endif
