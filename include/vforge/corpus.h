/*
 * vforge corpus — bare keys (of the URIs io_uri_parse splits, io.h), discovery, point ids and id
 * expressions.
 *
 * Point ids must match the existing tools bit for bit (DESIGN.md "Point ids"):
 *   make_point_id(bare_key, row) = lowercase hex md5(bare_key ":" decimal(row)), 8-4-4-4-12.
 * `row` is always the physical row inside the file, never a scan-order counter.
 */
#ifndef VFORGE_CORPUS_H
#define VFORGE_CORPUS_H

#include "vforge/io.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! corpus_bare_key() : the id key of a file URI (DESIGN.md): scheme and container removed;
 *  local files keep their absolute path unless `id_root` (a directory) prefixes it, in which
 *  case that prefix and the following '/' are removed.  Caller frees. */
vf_status corpus_bare_key(const char *uri, const char *id_root, char **out, vf_error *err);

/*! corpus_point_id() : make_point_id(key, row) into out (36 chars + NUL). */
void corpus_point_id(const char *key, size_t key_len, uint64_t row, char out[37]);

struct corpus_dataset; /* a component dataset (src/corpus/dataset.h) */

typedef struct corpus_file {
  char *uri;  /* what to open (local: absolute path) */
  char *key;  /* bare key (with id_root applied) */
  uint64_t size;
  /* set for part `part` (0-based) of a `type: dataset` datasource (vf_config_files()): the
   * record reader pairs that part's vectors file with its payload file; NULL otherwise */
  struct corpus_dataset *dataset;
  uint64_t part;
} corpus_file;

typedef struct corpus_files {
  corpus_file *files;
  size_t n;
  char *prefix; /* the corpus prefix: the URI as given, or the directory of a single file */
} corpus_files;

/*! corpus_discover() : the files of a corpus URI.  A file URI is itself; a directory/prefix is
 *  every `*.parquet` below it, excluding any path with an `eval` component below the prefix,
 *  sorted byte-wise by key.  Remote schemes go through io_list()/io_open_uri().
 *  @return : VF_ENOTFOUND when the path is missing or holds no parquet files. */
vf_status corpus_discover(const char *uri, const char *id_root, corpus_files *out, vf_error *err);
void corpus_files_free(corpus_files *f);

/* Corpus identity (issue 14): what ground truth, a store and an index record about the corpus
 * they were made from, so `bench` and `index search --ground-truth` can refuse truth of another
 * corpus instead of printing a recall that cannot be right.
 *   files md5  hex md5 over "<bare key>\t<size in bytes>\n" of every file, in the corpus's
 *              (byte-wise sorted) order — brute-force's vforge.bf.corpus_md5 since issue 5;
 *              the same files (with the same id_root) give the same digest on every machine.
 *   identity   md5 over "<files md5>\n<id expression>" (blanks of the expression dropped; the
 *              default vf_point_id(filename, file_row_number) when none is configured): the set
 *              of point ids the corpus yields. */
#define CORPUS_DEFAULT_ID_EXPRESSION "vf_point_id(filename, file_row_number)"
/*! corpus_files_md5() : the files md5 above into out (32 hex digits + NUL). */
void corpus_files_md5(const corpus_files *files, char out[33]);
/*! corpus_identity() : the identity above (`id_expression` NULL: the default) into out16, and
 *  as hex into hex (may be NULL). */
void corpus_identity(const char *files_md5, const char *id_expression, uint8_t out16[16],
                     char hex[33]);
/*! corpus_id_expression_same() : true when two id expressions (NULL: the default) are the same
 *  text once blanks are dropped. */
bool corpus_id_expression_same(const char *a, const char *b);

/*! corpus_open() : an io_source for a discovered file. */
vf_status corpus_open(const corpus_file *file, io_source **out, vf_error *err);

/* ------------------------------------------------------------ id expressions */

/*   vf_point_id(filename, file_row_number)      the default
 *   make_point_id(<str>, <int>)   <str>: filename | 'literal' | column;  <int>: file_row_number |
 *                                 row | column | integer literal
 *   <column>                      uint64/int64 >= 0, or a UUID string column
 *   row                           global row number across the corpus's files in order
 *   hash(<column>)                uint64: first 8 bytes (big-endian) of md5 of the value's text
 *   uuid()                        random v4 (refused where reruns must give the same ids) */
typedef struct corpus_idexpr corpus_idexpr;

typedef enum corpus_value_kind {
  CORPUS_V_NULL = 0,
  CORPUS_V_INT,  /* i */
  CORPUS_V_UINT, /* u */
  CORPUS_V_STR   /* s, len (not NUL-terminated) */
} corpus_value_kind;

typedef struct corpus_value {
  corpus_value_kind kind;
  int64_t i;
  uint64_t u;
  const char *s;
  size_t len;
} corpus_value;

/* Row context for evaluation.  `get_column` returns the value of a column in the current row. */
typedef struct corpus_row_ctx {
  const char *file_key;
  size_t file_key_len;
  uint64_t file_row;   /* physical row in the file */
  uint64_t global_row; /* row across the corpus */
  vf_status (*get_column)(void *user, const char *column, corpus_value *out, vf_error *err);
  void *user;
} corpus_row_ctx;

typedef struct corpus_id {
  bool is_uuid;
  uint64_t num;     /* when !is_uuid */
  char uuid[37];    /* when is_uuid: canonical lowercase 8-4-4-4-12 */
} corpus_id;

/*! corpus_idexpr_parse() : @return : VF_ECONFIG naming the expression and the offending token. */
vf_status corpus_idexpr_parse(const char *text, corpus_idexpr **out, vf_error *err);
void corpus_idexpr_free(corpus_idexpr *e);
/*! corpus_idexpr_columns() : the column names the expression reads (borrowed; count in *n). */
const char *const *corpus_idexpr_columns(const corpus_idexpr *e, int *n);
/*! corpus_idexpr_deterministic() : false for uuid(). */
bool corpus_idexpr_deterministic(const corpus_idexpr *e);
/*! corpus_idexpr_eval() : @return : VF_ECORRUPT naming the row and column when a column value
 *  cannot be an id (null, negative, not a UUID). */
vf_status corpus_idexpr_eval(const corpus_idexpr *e, const corpus_row_ctx *ctx, corpus_id *out,
                             vf_error *err);


/* ------------------------------------------------------ reading a parquet corpus */

/* Work over every file of a corpus (corpus_read.c).  Both drivers read only the requested
 * top-level columns (NULL/0 = all), one row group at a time per worker, so memory is bounded
 * by (threads x one row group of those columns). */

typedef struct corpus_scan_result {
  uint64_t rows;
  uint64_t files;
  uint64_t row_groups;
  uint64_t bytes;            /* decoded (uncompressed) column bytes */
  uint64_t bytes_read;       /* bytes fetched from the sources */
  double checksum;           /* sum of every decoded float/double/float16 value, fixed order */
  double seconds;
  uint64_t vectors;          /* rows of dense vector columns validated */
  uint64_t empty_files;      /* files without rows, skipped (corpus_plan) */
} corpus_scan_result;

/*! corpus_scan() : decode every selected column of every row group of every file (threads
 *  workers, 0 = vf_threads()); dense vector columns (lists of floats, FLBA vectors) are
 *  assembled and their dimension checked on every row.  The checksum adds per-row-group
 *  partial sums in (file, row group, column) order, so it does not depend on the thread count.
 *  @return : the first error (naming file, row group, column) stops the scan. */
vf_status corpus_scan(const corpus_files *files, const char *const *columns, int ncolumns,
                      int threads, corpus_scan_result *out, vf_error *err);

typedef vf_status (*corpus_write_fn)(void *user, const void *data, size_t len, vf_error *err);

typedef struct corpus_cat_opts {
  const char *const *columns; /* NULL = all */
  int ncolumns;
  uint64_t offset;            /* rows to skip (global, across files) */
  uint64_t limit;             /* 0 = no limit */
  const corpus_idexpr *with_id; /* NULL = no "__id__" key */
  bool binary_as_string;      /* unannotated binary as (lossy) text instead of base64 */
} corpus_cat_opts;

/*! corpus_cat() : rows as JSON lines (DESIGN.md `cat` rules) written through `write`;
 *  the point id (if requested) is the first key, "__id__". */
vf_status corpus_cat(const corpus_files *files, const corpus_cat_opts *opts, corpus_write_fn write,
                     void *user, vf_error *err);

/* ------------------------------------------------------------- record batches */

/* What the load runner hands to a store: ids, named vectors and payload of n points, with
 * provenance.  Produced from column batches by the corpus reader; stores only read it. */
typedef enum corpus_vec_kind {
  CORPUS_VEC_DENSE = 0,
  CORPUS_VEC_SPARSE, /* struct{indices, values} */
  CORPUS_VEC_MULTI   /* list<list<float>>, compared with max_sim */
} corpus_vec_kind;

typedef enum corpus_distance {
  CORPUS_COSINE = 0,
  CORPUS_DOT,
  CORPUS_EUCLID,
  CORPUS_MANHATTAN
} corpus_distance;

typedef struct corpus_vec_batch {
  const char *name;          /* the vector's name in the config (`vectors:` key) */
  corpus_vec_kind kind;
  corpus_distance distance;
  int32_t dim;               /* DENSE and MULTI: floats per vector */
  float *dense;              /* DENSE: n*dim, row-major */
  int64_t *offsets;          /* SPARSE: n+1 into indices/values; MULTI: n+1 into `multi` (in vectors) */
  uint32_t *indices;         /* SPARSE */
  float *values;             /* SPARSE */
  float *multi;              /* MULTI: offsets[n]*dim floats */
  uint8_t *null_rows;        /* n entries (1 = no vector for this point) or NULL */
} corpus_vec_batch;

typedef struct corpus_batch {
  size_t n;
  corpus_id *ids;
  int nvectors;
  corpus_vec_batch *vectors;
  vf_buf payload;            /* row i's payload JSON object: payload.data[payload_offsets[i] .. [i+1]) */
  int64_t *payload_offsets;  /* n+1 */
  const char *file_key;      /* provenance: the bare key of the file these rows come from */
  uint64_t *file_rows;       /* n physical rows in that file */
} corpus_batch;

/* ------------------------------------------------ record batches from parquet files */

/* How to turn a file's columns into points (from the config's `vectors`, `payload_fields`
 * and `id_expression`). */
typedef struct corpus_vec_source {
  const char *name;      /* vector name in the store */
  corpus_vec_kind kind;
  corpus_distance distance;
  const char *column;    /* top-level column holding it; NULL: the vectors component of a
                            dataset part (npy/fbin/hdf5 rows) */
} corpus_vec_source;

typedef struct corpus_payload_source {
  const char *key;       /* payload key in the store */
  const char *column;    /* top-level column (a string column holding a JSON object is unpacked:
                            the key's value is the object itself, not a string) */
} corpus_payload_source;

typedef struct corpus_record_spec {
  const corpus_vec_source *vectors;
  int nvectors;
  const corpus_payload_source *payload;
  int npayload;
  const corpus_idexpr *id;  /* NULL = vf_point_id(filename, file_row_number) */
  bool skip_bad_rows;       /* false: a bad row (wrong dimension, NaN/inf, null vector) is an
                               error naming the file and row; true: dropped and counted */
  const char *payload_null_json; /* NULL: a null payload value leaves its key out; else this
                               JSON text is stored instead (a dataset payload's `fill_null`) */
  bool binary_as_string;    /* payload binary without a string annotation as lossy text
                               (datasource.binary_as_string) instead of base64 */
  bool payload_raw;         /* decode the payload columns but render no JSON (payload_offsets
                               all 0): the Arrow exporter converts their leaves itself */
} corpus_record_spec;

typedef struct corpus_records corpus_records;

/*! corpus_records_open() : open one corpus file for record reading.  `global_row_base` is the
 *  corpus-wide row number of the file's first row (for the `row` id expression).
 *  @return : VF_ENOTFOUND naming a missing column, VF_ECONFIG for a column whose type cannot
 *            hold the configured vector kind. */
vf_status corpus_records_open(const corpus_file *file, const corpus_record_spec *spec,
                              uint64_t global_row_base, corpus_records **out, vf_error *err);
int corpus_records_row_groups(const corpus_records *r);
uint64_t corpus_records_rows(const corpus_records *r);            /* rows in the file */
uint64_t corpus_records_row_group_first(const corpus_records *r, int rg); /* its first row */
uint64_t corpus_records_bytes_read(const corpus_records *r);
/*! corpus_records_read() : the points of row group `rg` from physical row `from_row` (a row of
 *  that group; rows before it are not returned) into `out` (buffers reused across calls).
 *  `*skipped` (may be NULL) receives the rows dropped as bad (skip_bad_rows). */
vf_status corpus_records_read(corpus_records *r, int rg, uint64_t from_row, corpus_batch *out,
                              uint64_t *skipped, vf_error *err);
void corpus_records_close(corpus_records *r);
/*! corpus_records_keep_buffer() / corpus_records_use_buffer() : carry the decode buffer of the
 *  dense vector values from a reader about to be closed to the next file's reader, so a load
 *  over many files decodes into memory it already touched: keep moves the buffer into `spare`
 *  (a vf_buf the caller frees), use moves `spare`'s buffer into a reader that has none yet.
 *  Either is a no-op where there is nothing to move. */
void corpus_records_keep_buffer(corpus_records *r, vf_buf *spare);
void corpus_records_use_buffer(corpus_records *r, vf_buf *spare);
/*! corpus_records_probe_dim() : the dimension of a dense or multi vector of `file`, read through
 *  the record reader with bad rows skipped, from the first row group that yields a point (so one
 *  bad row at the start of a corpus is reported by the load, naming its row, not by the probe).
 *  @return : VF_ECORRUPT when no row of the file has a valid vector. */
vf_status corpus_records_probe_dim(const corpus_file *file, const corpus_vec_source *src,
                                   int32_t *dim, vf_error *err);

/* ------------------------------------------------------------ the corpus plan (seed) */

/* What every command decides about a corpus's files before it reads rows, decided here once:
 * each file's row count (parquet footer; a dataset part as measured), which files are skipped
 * because they hold no rows (Spark and DuckDB partitioned writes make 0-row files: every
 * command skips them, logs them and counts them), and the file a vector's dimension is taken
 * from (the first that has rows).  The seed of the one corpus plan object later planning
 * (files, rows, shards, dimensions) moves into; commands that open footers anyway (scan, cat,
 * inspect) report the rows they find through corpus_plan_note_rows() instead of measuring twice. */
/* Where a corpus's vectors come from: a column of its parquet files, or the vectors component of
 * a `type: dataset` (its npy / fbin / hdf5 parts). */
typedef enum corpus_plan_source {
  CORPUS_PLAN_PARQUET = 0,
  CORPUS_PLAN_NPY,
  CORPUS_PLAN_FBIN,
  CORPUS_PLAN_HDF5
} corpus_plan_source;

typedef struct corpus_plan {
  const corpus_files *files; /* borrowed */
  uint64_t *rows;            /* per file; CORPUS_PLAN_UNMEASURED until known */
  uint64_t total_rows;       /* of the files measured so far */
  size_t measured;           /* files whose rows are known */
  size_t empty;              /* of those, files with no rows (skipped) */
  bool live;                 /* counted among the plans that keep footers (plan.c) */
  /* filled by corpus_plan_measure(), from the footers it reads once: */
  int *row_groups;           /* per file: its row groups as written (a dataset part: its read
                                units, DS_VIRTUAL_RG_ROWS rows, or its parquet payload's row
                                groups); -1 until measured or when a part's payload is not local */
  uint64_t **rg_rows;        /* per file: the rows of each of those row groups (NULL with -1) */
  corpus_plan_source source; /* the vectors' source (by the first file) */
  size_t schema_file;        /* the first file with rows: the schema below is its; files->n when
                                none is known (nothing measured, or every file empty) */
  char **columns;            /* that file's top-level columns, in schema order (parquet files and
                                a dataset part's parquet payload; NULL otherwise) */
  bool *dense_columns;       /* per column: a dense vector column (pqt_is_dense_vector) */
  int ncolumns;
} corpus_plan;

#define CORPUS_PLAN_UNMEASURED UINT64_MAX

/*! corpus_file_rows() : the rows of one file: a dataset part's measured count, else its parquet
 *  footer's (one footer read).  @return : errors opening the file, naming it. */
vf_status corpus_file_rows(const corpus_file *f, uint64_t *rows, vf_error *err);
/*! corpus_plan_init() : a plan over `files` (borrowed; must outlive the plan), nothing measured. */
vf_status corpus_plan_init(corpus_plan *p, const corpus_files *files, vf_error *err);
void corpus_plan_free(corpus_plan *p);
/*! corpus_plan_note_rows() : file i holds `rows` rows — the one rule: a file without rows is
 *  skipped by every command (logged: the first few at info level, the rest at debug; counted in
 *  p->empty).  @return : true when file i is skipped. */
bool corpus_plan_note_rows(corpus_plan *p, size_t i, uint64_t rows);
/*! corpus_plan_skips() : file i was measured and is skipped (no rows). */
bool corpus_plan_skips(const corpus_plan *p, size_t i);
/*! corpus_plan_measure() : the rows and row groups of every file not measured yet (one footer
 *  read each, kept in the footer cache for the readers; dataset parts as measured when the
 *  datasource was resolved), rows through corpus_plan_note_rows(); then the vector source and
 *  the schema of the first file with rows (its kept footer: no second read).
 *  @return : errors opening a file, naming it. */
vf_status corpus_plan_measure(corpus_plan *p, vf_error *err);
/*! corpus_plan_build() : corpus_plan_init() + corpus_plan_measure(): the one-call plan a command
 *  builds once and passes down (eval_bf_opts.plan).  On failure *p is freed.
 *  @return : as corpus_plan_init() and corpus_plan_measure(). */
vf_status corpus_plan_build(corpus_plan *p, const corpus_files *files, vf_error *err);
/*! corpus_plan_measure_file() : the rows and row groups of file i only (one footer read, kept;
 *  nothing when measured already) — for a job that reads a share of the files (--num-jobs).
 *  The schema is not taken (corpus_plan_measure() does).  @return : errors opening the file. */
vf_status corpus_plan_measure_file(corpus_plan *p, size_t i, vf_error *err);
/*! corpus_plan_probe_dim() : the dimension of a dense or multi vector, from the first file that
 *  has rows (measuring files in order as needed), through corpus_records_probe_dim().
 *  @return : VF_ECORRUPT when every file is empty (naming how many), else probe_dim's errors. */
vf_status corpus_plan_probe_dim(corpus_plan *p, const corpus_vec_source *src, int32_t *dim,
                                vf_error *err);

/* Footers parsed once (plan.c): while any plan is alive, corpus_open_parquet() keeps the parsed
 * footer of each parquet file it opens (keyed by URI and size, at most 64 MiB of parsed
 * metadata, least recently used dropped first and read again when needed) and opens later
 * readers of the same file over it, reading nothing to open.  Emptied when the last plan is
 * freed.  Every reader of a corpus file opens it this way. */
struct pqt_file;      /* include/vforge/format.h */
struct pqt_open_opts; /* include/vforge/format.h */
/*! corpus_open_parquet() : corpus_open() + pqt_open(opts) of a corpus file (opts NULL: defaults),
 *  over the plans' parsed footer when one is kept.  @return : pqt_open's errors. */
vf_status corpus_open_parquet(const corpus_file *file, const struct pqt_open_opts *opts,
                              struct pqt_file **out, vf_error *err);
typedef struct corpus_footer_stats {
  uint64_t opened;  /* corpus_open_parquet() calls that opened a file */
  uint64_t parsed;  /* footers read, parsed and kept */
  uint64_t hits;    /* readers opened over a kept footer */
  uint64_t dropped; /* kept footers dropped for the cap */
  size_t bytes;     /* held now */
  size_t max_bytes; /* most held at once */
  uint64_t plans;   /* plans initialised (corpus_plan_init) */
  uint64_t files_measured; /* files whose rows and row groups a plan measured (each footer walk
                              of planning; a file measured twice means planning twice) */
} corpus_footer_stats;
/*! corpus_footer_cache_stats() : the counts since the process started (tests). */
corpus_footer_stats corpus_footer_cache_stats(void);
/*! corpus_footer_cache_set_max() : the cache's cap in bytes (0: the default; tests). */
void corpus_footer_cache_set_max(size_t max);

/* ------------------------------------------------------------ vector columns */

/*! corpus_vec_kind_of() : the vector kind top-level node `top` of a parquet file has the shape
 *  of — CORPUS_VEC_DENSE (list<float|double|float16>, FLBA), CORPUS_VEC_MULTI (list<list<float>>)
 *  or CORPUS_VEC_SPARSE (struct{indices, values}) — or -1.  Shape only: the record reader checks
 *  the rest while decoding. */
int corpus_vec_kind_of(const struct pqt_file *f, int top);

/*! corpus_dense_top() : the top-level node of the dense vector column: `column` when given (it
 *  must have a dense vector shape), else the only one of the file.
 *  @return : VF_ENOTFOUND / VF_EUSAGE naming the file and the candidates. */
vf_status corpus_dense_top(const struct pqt_file *f, const char *column, int *top, vf_error *err);

/* ------------------------------------------------------------ component datasets */

/*! corpus_dataset_part_rows() : rows of a dataset part (file->dataset set), measured from its
 *  header or footer when the datasource was resolved; 0 for any other file. */
uint64_t corpus_dataset_part_rows(const corpus_file *file);
/*! corpus_dataset_part_row_groups() : the read units of a dataset part: without a parquet payload
 *  ceil(rows / DS_VIRTUAL_RG_ROWS) units of that many rows; with one, the payload file's row
 *  groups as written (*n = -1, *each NULL when that file is not local yet).  Caller frees *each.
 *  @return : the payload footer's errors; VF_ENOMEM. */
vf_status corpus_dataset_part_row_groups(const corpus_file *file, int *n, uint64_t **each,
                                         vf_error *err);
/*! corpus_dataset_part_source() : the vectors' source of a dataset part (npy, fbin or hdf5). */
corpus_plan_source corpus_dataset_part_source(const corpus_file *file);

/*! corpus_dataset_cache_peak() : the most bytes of parts that vforge downloaded itself held at
 *  once in a `cache: evict` dataset cache during this process (0 when none). */
uint64_t corpus_dataset_cache_peak(void);

/* ------------------------------------------------ filtered-search bundles (bundle.c) */

/* The bundles of qdrant/ann-filtering-benchmark-datasets (read by vector-db-benchmark and bfb):
 * a directory or a .tgz with vectors.npy (point i = row i), payloads.jsonl (point i's payload on
 * line i) and tests.jsonl (queries with their filter `conditions` and exact filtered answers). */

/*! corpus_bundle_dir() : *dir = the directory holding the bundle's files when `path` is a
 *  bundle (a directory with vectors.npy, or a .tgz / .tar.gz: extracted once into
 *  <dir>/.<name>.extract/, reused while the archive is unchanged), else NULL.  Caller frees.
 *  @return : VF_ECORRUPT for an archive that is not a tar.gz bundle; VF_EIO. */
vf_status corpus_bundle_dir(const char *path, char **dir, vf_error *err);
/*! corpus_bundle_resolve() : `path`, or for "<archive>.tgz/<member>" the extracted member's
 *  path (extracting the archive when needed).  Caller frees. */
vf_status corpus_bundle_resolve(const char *path, char **out, vf_error *err);

typedef struct corpus_bundle_tests {
  size_t n;           /* queries */
  int32_t dim;
  float *queries;     /* n * dim */
  char **conditions;  /* n filter texts (the conditions form), NULL when a query has none */
  uint64_t *ids;      /* closest_ids of query i: ids[offsets[i] .. offsets[i+1]) */
  float *scores;      /* closest_scores, aligned with ids (0 when the file has none) */
  size_t *offsets;    /* n + 1 */
} corpus_bundle_tests;

/*! corpus_bundle_tests_read() : every line of a tests.jsonl.
 *  @return : VF_ECORRUPT naming the file and line for a line that is not such an object. */
vf_status corpus_bundle_tests_read(const char *path, corpus_bundle_tests *out, vf_error *err);
void corpus_bundle_tests_free(corpus_bundle_tests *t);

/*! corpus_batch_slice() : a view of rows [off, off+n) of `b` (shares b's buffers; do not free).
 *  `vec_storage` (b->nvectors entries, caller-owned) receives the view's vector descriptors and
 *  must live as long as the view; the range is clamped to b's rows. */
void corpus_batch_slice(const corpus_batch *b, size_t off, size_t n, corpus_vec_batch *vec_storage,
                        corpus_batch *view);
void corpus_batch_free(corpus_batch *b);

#ifdef __cplusplus
}
#endif
#endif
