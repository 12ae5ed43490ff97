/*
 * vforge config — the YAML load configuration (DESIGN.md "Configuration"), resolved and checked.
 *
 * Why a resolved struct: every consumer (the load runner, the stores, load-dist, `load inspect`)
 * reads plain typed fields with every default applied, so no consumer re-interprets YAML or
 * re-implements a default.  Everything that can be checked without touching the corpus is
 * checked at load time, and every error names the file, the line and the key path:
 *     config.yaml:12: unknown key 'datasource.urll' (expected one of: uri, file_list, ...)
 *
 * Text rules: `${VAR}` and `${VAR:-default}` are expanded in every scalar value (never in keys);
 * `$$` is a literal `$`; an unset `${VAR}` without a default is an error naming the variable, the
 * key path and the line.  Duplicate keys, unknown keys, anchors/aliases and multi-document files
 * are errors.  Secrets — `vectorstore.api_key` and any value that came from a variable whose name
 * contains KEY, TOKEN, SECRET or PASSWORD — are shown as "****" in rendered output and are never
 * copied into an error message.
 */
#ifndef VFORGE_CONFIG_H
#define VFORGE_CONFIG_H

#include "vforge/corpus.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VF_CONFIG_MAX_BYTES ((size_t)4 << 20) /* a config file larger than this is refused */
#define VF_CONFIG_DEFAULT_ID_EXPRESSION "vf_point_id(filename, file_row_number)"
#define VF_CONFIG_DEFAULT_STORE_PATH "./vforge-data"
#define VF_CONFIG_SECRET_MASK "****"

/* Where a named vector is read from in a `type: dataset` datasource. */
typedef enum vf_cfg_component {
  VF_CFG_COMPONENT_NONE = 0, /* not a component dataset: `column` of the corpus files */
  VF_CFG_COMPONENT_VECTORS,  /* the `vectors` component (e.g. the .npy parts) */
  VF_CFG_COMPONENT_PAYLOAD   /* a `column` of the `payload` component */
} vf_cfg_component;

typedef struct vf_cfg_vector {
  char *name;               /* the `vectors:` key (the store's vector name) */
  corpus_vec_kind kind;     /* `type`: dense (default) | sparse | multivector */
  char *column;             /* NULL only for source: vectors of a non-parquet component */
  corpus_distance distance; /* default cosine; sparse vectors: dot (the only one allowed) */
  bool max_sim;             /* `comparator: max_sim` (multivector only, and their default) */
  vf_cfg_component source;  /* NONE unless the datasource is `type: dataset` */
  bool distance_given;      /* `distance:` was written (else the default above applies) */
  int line;                 /* config line of the vector's key, for later messages */
  /* issue 18: the vector's store parameters as a JSON object, NULL when none: dense and
   * multivector `datatype` (float32|float16|uint8), `on_disk`, `hnsw` {m, ef_construct, ...},
   * `quantization` {scalar|product|binary: {...}}; sparse `modifier` (idf|none) and `index`
   * {on_disk, datatype, full_scan_threshold} */
  char *params_json;
} vf_cfg_vector;

typedef struct vf_cfg_field {
  char *key;    /* payload key in the store */
  char *column; /* column it is read from */
  int line;
} vf_cfg_field;

/* The datasource as written: either a URI / file list, one of the older split forms (resolved
 * into `uri`), or a component dataset. */
typedef enum vf_cfg_ds_form {
  VF_CFG_DS_URI = 0,     /* uri: and/or file_list: */
  VF_CFG_DS_S3,          /* type: s3, bucket, prefix            -> uri s3://bucket/prefix */
  VF_CFG_DS_HUGGINGFACE, /* type: huggingface, repo_id, subdir  -> hf://datasets/repo_id/subdir */
  VF_CFG_DS_LOCAL,       /* type: local, path                   -> uri = path */
  VF_CFG_DS_DATASET      /* type: dataset, vectors/payload components */
} vf_cfg_ds_form;

typedef enum vf_cfg_format {
  VF_CFG_FORMAT_PARQUET = 0,
  VF_CFG_FORMAT_NPY,
  VF_CFG_FORMAT_FBIN,
  VF_CFG_FORMAT_HDF5,
  VF_CFG_FORMAT_JSONL /* a payload component: one JSON object per line (point i on line i) */
} vf_cfg_format;

typedef enum vf_cfg_cache { VF_CFG_CACHE_KEEP = 0, VF_CFG_CACHE_EVICT } vf_cfg_cache;

/* `parts: {count, start, path, link}` — files start .. start+count-1; `path` and `link` hold a
 * `{i}` (or `{i:0Nd}`, zero-padded to N digits) placeholder; `{{` and `}}` are literal braces. */
typedef struct vf_cfg_parts {
  int64_t count; /* > 0 */
  int64_t start; /* >= 0, default 0 */
  char *path;    /* local path template (the cache location) */
  char *link;    /* download URL template, NULL when absent */
} vf_cfg_parts;

typedef struct vf_cfg_dataset_component {
  bool present;
  vf_cfg_format format; /* given, or inferred from the path's extension */
  char *path;           /* one file (no parts); NULL when `parts` is used */
  bool has_parts;
  vf_cfg_parts parts;
  char **columns; /* columns to read (NULL/0 = all) */
  size_t ncolumns;
  char **exclude; /* columns to leave out */
  size_t nexclude;
  char *fill_null_json; /* JSON literal that replaces nulls (e.g. "0", "\"\""), NULL = keep nulls */
  vf_cfg_cache cache;   /* default: the datasource's `cache` */
} vf_cfg_dataset_component;

typedef struct vf_cfg_datasource {
  vf_cfg_ds_form form;
  char *uri;        /* resolved corpus URI; NULL for a bare file_list or a dataset */
  char **file_list; /* explicit files, in the given order; NULL when absent */
  size_t nfiles;
  char *id_expression;          /* checked with corpus_idexpr_parse(); default above */
  vf_cfg_field *payload_fields; /* in config order */
  size_t npayload_fields;
  char *id_root; /* local corpora only; NULL when absent */
  bool binary_as_string; /* payload binary (no string annotation) as lossy text, not base64 */
  /* split forms, as written (also folded into `uri`) */
  char *bucket, *prefix;  /* type: s3 */
  char *repo_id, *subdir; /* type: huggingface */
  char *path;             /* type: local */
  /* type: dataset */
  vf_cfg_dataset_component vectors;
  vf_cfg_dataset_component payload;
  vf_cfg_cache cache; /* keep (default) | evict */
} vf_cfg_datasource;

typedef enum vf_cfg_store_type { VF_CFG_STORE_LOCAL = 0, VF_CFG_STORE_QDRANT } vf_cfg_store_type;

typedef struct vf_cfg_vectorstore {
  vf_cfg_store_type type; /* default local */
  char *path;             /* local: default "./vforge-data" */
  char *url;              /* qdrant: required */
  char *api_key;          /* qdrant: optional; a secret */
  char *collection_name;  /* NULL when absent (the runner requires it) */
  char *params_json;      /* `params:` as a JSON object text ("{}" when absent); real values */
  /* parsed convenience copies of params (also inside params_json) */
  int64_t shard_number; /* 0 = not set */
  int64_t replication_factor;
  int64_t write_consistency_factor;
  int on_disk_payload; /* -1 not set, 0 false, 1 true */
  bool recreate;       /* default false */
  /* issue 18 (qdrant only; the official Python client's names) */
  bool prefer_grpc;            /* default false: REST */
  int64_t grpc_port;           /* default 6334 */
  int64_t grpc_max_message_mb; /* the server's gRPC message limit, default 64 */
} vf_cfg_vectorstore;

typedef struct vf_cfg_loader {
  int64_t batch_size;    /* default 1000 */
  int64_t prefetch_size; /* default 10000 (raised to batch_size when only that is given) */
  int64_t concurrency;   /* default 8 */
  int64_t retries;       /* default 5 (0 = no retry) */
  bool wait;             /* default false: Qdrant upserts return before they are applied (wait=false); finalize verifies the exact count */
  bool skip_bad_rows;    /* default false: a bad row stops the load with file+row */
} vf_cfg_loader;

typedef enum vf_cfg_engine { VF_CFG_ENGINE_SLURM = 0, VF_CFG_ENGINE_LOCAL } vf_cfg_engine;

typedef struct vf_cfg_dispatch {
  int64_t num_shards;   /* 0 = not set */
  vf_cfg_engine engine; /* default slurm */
  char *run_name;       /* NULL when absent */
} vf_cfg_dispatch;

typedef struct vf_cfg_resources {
  int64_t cpus;      /* 0 = not set */
  int64_t memory_gb; /* `memory`, in GB (sbatch --mem=<N>G); 0 = not set */
  char *partition;   /* NULL when absent */
  char *time;        /* as written ("04:00:00", "240"); NULL when absent */
} vf_cfg_resources;

typedef struct vf_cfg_internal vf_cfg_internal; /* secrets bookkeeping; private */

typedef struct vf_config {
  char *name;             /* the file name used in messages */
  vf_cfg_vector *vectors; /* in config order, at least one */
  size_t nvectors;
  vf_cfg_datasource datasource;
  vf_cfg_vectorstore vectorstore;
  vf_cfg_loader loader;
  vf_cfg_dispatch dispatch;
  vf_cfg_resources resources;
  vf_cfg_internal *internal;
} vf_config;

/*! vf_config_parse() : parse and check a config held in memory.  `name` is used in messages
 *  ("config.yaml:12: ...").  `cfg` is filled on success and zeroed on failure (free either way
 *  is safe).
 *  @return : VF_ECONFIG naming file, line and key path for any schema, type, syntax or
 *            variable error; VF_ENOMEM. */
vf_status vf_config_parse(const char *text, size_t len, const char *name, vf_config *cfg,
                          vf_error *err);

/*! vf_config_load() : read `path` (at most VF_CONFIG_MAX_BYTES) and vf_config_parse() it.
 *  @return : VF_ENOTFOUND / VF_EIO when the file cannot be read; otherwise as above. */
vf_status vf_config_load(const char *path, vf_config *cfg, vf_error *err);

/*! vf_config_vector_file() : the config of a one-part dataset over one vector file `path`
 *  (format npy, fbin or hdf5) and, when `payload_jsonl` is not NULL, its payload lines: one dense
 *  vector "vector" (`distance`) read from the vectors component, `id_expression: row`, every
 *  other section defaulted — the config vf_config_parse() makes of that YAML, built without
 *  text (no quoting; a `$` in a path is no variable).  `name` is used in messages.  `cfg` is
 *  zeroed on failure.
 *  @return : VF_ENOMEM. */
vf_status vf_config_vector_file(const char *name, vf_cfg_format format, const char *path,
                                const char *payload_jsonl, corpus_distance distance,
                                vf_config *cfg, vf_error *err);

/*! vf_config_free() : release everything `cfg` owns and zero it.  NULL and zeroed are fine. */
void vf_config_free(vf_config *cfg);

/*! vf_config_vector_distance() : the distance vector `v` is compared with: the configured one,
 *  or — when `distance:` is not written and the vectors come from an ann-benchmarks .hdf5 bundle —
 *  the bundle's `distance` attribute (angular → cosine, euclidean → euclid, dot/ip → dot). */
corpus_distance vf_config_vector_distance(const vf_config *cfg, const vf_cfg_vector *v);
/*! vf_config_find_vector() : the vector named `name`, NULL if none. */
const vf_cfg_vector *vf_config_find_vector(const vf_config *cfg, const char *name);

/*! vf_config_render_json() : append the resolved config (every default applied) to `out` as one
 *  JSON object with keys vectors, datasource, vectorstore, loader, dispatch, resources; secrets
 *  are replaced by "****". */
vf_status vf_config_render_json(const vf_config *cfg, vf_buf *out, vf_error *err);

/*! vf_config_files() : the corpus files of a uri / file_list / split-form datasource: the
 *  file_list when present (each entry a file, sorted by bare key), else corpus_discover() of
 *  the uri; `id_root` applied to keys.  A `type: dataset` datasource gives one file per part,
 *  in part order (corpus_file.dataset set; rows measured from each part's header/footer or the
 *  parts index, see src/corpus/dataset.c).
 *  @return : errors of corpus_discover(); VF_ECONFIG for a duplicated file; for a dataset,
 *            VF_ENOTFOUND for a missing part without a link and VF_ECORRUPT naming both files
 *            when a vectors part and its payload part differ in length. */
vf_status vf_config_files(const vf_config *cfg, corpus_files *out, vf_error *err);

/*! vf_config_part_path() : part `i` (start <= i < start+count) of a parts template (`path` or
 *  `link`) with its `{i}` placeholder filled in.  Caller frees *out.
 *  @return : VF_EUSAGE when i is out of range. */
vf_status vf_config_part_path(const vf_cfg_parts *parts, const char *tmpl, int64_t i, char **out,
                              vf_error *err);

/*! vf_config_inspect() : what `vforge load inspect CONFIG` prints, without writing anything:
 *  one JSON object {"config": <vf_config_render_json>, "files": [{"uri", "key", "rows"}],
 *  "total_rows": N, "collection": <collection_name or null>, "store": "local"|"qdrant"}.
 *  Row counts come from each parquet footer.  For a `type: dataset` datasource every part of
 *  each component is listed ({"component", "uri", "key", "exists", "rows"}; rows are read for
 *  local parquet parts and null otherwise) and total_rows counts the payload parts when they
 *  are all known, else null.
 *  @return : corpus_discover() / pqt_open() errors naming the file. */
vf_status vf_config_inspect(const vf_config *cfg, vf_buf *out_json, vf_error *err);

/* ------------------------------------------------------------- corpus sources */

/* The corpus a URI argument names (src/corpus/source.c): a parquet corpus URI, a YAML load
 * config or a single vector file.  Points into itself: do not copy it. */
typedef struct corpus_source {
  corpus_files files;      /* the files (a dataset: one per part) */
  bool records;            /* a config or a vector file: read every file through `spec` */
  corpus_vec_source vec;   /* records: the chosen vector (column NULL: a dataset's vectors part) */
  corpus_record_spec spec; /* records: {&vec, 1 vector, id}, or every vector and payload field */
  corpus_idexpr *id;       /* records: the parsed id expression */
  const char *id_text;     /* records: its text */
  bool has_distance;       /* records: the vector's configured distance (the default metric) */
  corpus_distance distance;
  vf_config cfg;           /* a config (or the one made for a vector file); zeroed otherwise */
  corpus_vec_source *vecs; /* all_vectors: spec.vectors (owned) */
  corpus_payload_source *pays; /* all_vectors: spec.payload (owned) */
} corpus_source;

typedef struct corpus_source_opts {
  const char *id_root;     /* applies when the config has none */
  const char *column;      /* a config's `vectors:` entry (NULL: the only one) */
  bool all_vectors;        /* records: spec holds every vector and payload field of the config
                              (vec is the first vector, or `column`) */
} corpus_source_opts;

/*! corpus_source_open() : a YAML config (*.yaml, *.yml: its datasource's files via
 *  vf_config_files(), the `vectors:` entry `column` names (NULL: the only one) and its
 *  id_expression), a local vector file (.npy, .fbin/.u8bin/.i8bin, .hdf5/.h5 `train`: a one-part
 *  dataset, vector "vector", id_expression `row`, distance cosine or an hdf5 bundle's), else a
 *  parquet corpus URI (corpus_discover(); records false, `column` unused).  `opts` may be NULL.
 *  @return : config/discovery errors naming the file; VF_EUSAGE for an unknown or ambiguous
 *            vector. */
vf_status corpus_source_open(const char *uri, const corpus_source_opts *opts, corpus_source *out,
                             vf_error *err);
void corpus_source_close(corpus_source *c); /* zeroed ok */

/*! corpus_read_vectors() : every dense vector of a source, in corpus order, as one row-major
 *  float32 matrix (*rows x *dim; caller frees *out).  A parquet URI: the dense column `column`
 *  (NULL: the only one), each row group decoded in place into its slice of the matrix by
 *  `threads` workers (0 = vf_threads()), values as stored (float16/double converted); a config,
 *  dataset or vector file: its chosen vector through the record reader, checked as `load`
 *  checks it.  Polls vf_check_cancel() between row groups.
 *  @return : VF_ECORRUPT naming file and row for a null vector or a dimension that changes;
 *            VF_ENOMEM over the memory budget; reader errors. */
vf_status corpus_read_vectors(const corpus_source *src, const char *column, int threads,
                              float **out, uint64_t *rows, int32_t *dim, vf_error *err);

/* ---- secrets by reference (src/corpus/config_vars.c): what load-dist needs to pass secrets to
 * its workers as `${VAR}` references instead of by value ---- */

/*! vf_config_secret_paths() : the key paths ("vectorstore.api_key") whose value is a secret;
 *  borrowed, count in *n. */
const char *const *vf_config_secret_paths(const vf_config *cfg, size_t *n);

/*! vf_config_raw_scalar() : the raw text (before `${VAR}` expansion) of the scalar at the dotted
 *  key path `path` of the YAML config text[0..len) (map keys only).  *out = NULL when the path
 *  is absent or not a scalar.  Caller frees *out.
 *  @return : the YAML parser's VF_ECONFIG; VF_ENOMEM. */
vf_status vf_config_raw_scalar(const char *text, size_t len, const char *name, const char *path,
                               char **out, vf_error *err);

#ifdef __cplusplus
}
#endif
#endif
