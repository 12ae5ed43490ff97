/*
 * vforge store — one interface for vector stores: the embedded `local` store (the default),
 * `discard` (drops batches; measures the pipeline) and `qdrant` (REST or gRPC; tested against a
 * stand-in).
 *
 * The lifecycle is Qdrant's, because it is the strictest (issue 4):
 *
 *   store_open(config)          connect / open; nothing is created yet
 *   store_ensure_collection()   create the collection from the vectors spec, or verify that an
 *                               existing one has the same vector schema (a mismatch is an error
 *                               unless `recreate`, which drops it first)
 *   store_defer_indexing()      before a bulk load (Qdrant: indexing_threshold = 0)
 *   store_upsert(batch) ...     points by id: a re-sent id replaces the point, never duplicates
 *   store_flush()               make everything upserted so far durable and visible
 *   store_enable_indexing()     at finalize (Qdrant: restore the threshold; local: compact the
 *                               segments so each id is stored once, then build the index)
 *   store_wait_indexed()        until the store is ready to answer searches (Qdrant: green)
 *   store_count(exact)          distinct points stored
 *   store_search(...)           top-k ids and scores per query (larger score = nearer)
 *   store_close()
 *
 * A store handle is used by one thread at a time; concurrency comes from several handles (one
 * per in-flight upsert, or one per process for several writer processes): every backend
 * accepts several handles writing the same collection at once.
 */
#ifndef VFORGE_STORE_H
#define VFORGE_STORE_H

#include "vforge/corpus.h"
#include "vforge/filter.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One named vector of the collection (config `vectors:` entry). */
typedef struct store_vector_spec {
  const char *name;
  corpus_vec_kind kind;
  corpus_distance distance;
  int32_t dim; /* DENSE and MULTI: floats per vector (required, > 0); SPARSE: 0 */
} store_vector_spec;

/* issue 18: what a payload field's corpus column holds, for payload indexes (Qdrant) */
typedef enum store_payload_kind {
  STORE_PK_UNKNOWN = 0, /* not inferable (a struct, a map, binary, a JSON column) */
  STORE_PK_BOOL,
  STORE_PK_INTEGER,
  STORE_PK_FLOAT,
  STORE_PK_STRING,
  STORE_PK_DATETIME, /* DATE, TIMESTAMP */
  STORE_PK_UUID,     /* the parquet UUID logical type */
  STORE_PK_GEO       /* a struct of exactly lat and lon numbers */
} store_payload_kind;

typedef struct store_payload_field {
  const char *key;    /* payload key */
  const char *column; /* the corpus column it comes from */
  store_payload_kind kind;
  char column_type[48]; /* the column's type as parquet spells it, for messages */
} store_payload_field;

typedef struct store_config {
  const char *type;            /* "local" (default when NULL), "discard" */
  const char *path;            /* local: root directory (default "./vforge-data") */
  const char *url;             /* remote stores */
  const char *api_key;         /* remote stores; never logged */
  const char *collection_name; /* required */
  const store_vector_spec *vectors;
  int nvectors;
  bool recreate;           /* ensure_collection drops an existing collection first */
  const char *params_json; /* backend-specific parameters as a JSON object text, or NULL */
  /* local store tuning (0 = default) */
  int64_t segment_rows;    /* a writer rolls to a new segment after this many rows (1M) */
  int64_t row_group_bytes; /* target bytes per segment row group, the buffered unit (32 MiB) */
  /* remote stores (added by issue 4) */
  bool upsert_wait;        /* qdrant: each upsert returns once applied (?wait=true); default false */
  bool must_exist;         /* ensure_collection verifies but never creates (finalize) */
  bool retries_given;      /* remote stores: `retries` set (else the HTTP client's default, 5) */
  int retries;             /* remote stores: retries of one failed request (loader.retries) */
  /* issue 18 */
  bool prefer_grpc;        /* qdrant: gRPC (Collections and Points services) instead of REST */
  int grpc_port;           /* qdrant: 0 = 6334 */
  int64_t grpc_max_message_bytes; /* qdrant gRPC: the server's message limit; 0 = 64 MiB */
  /* backend parameters of vector i as a JSON object text, or NULL (Qdrant: the config's
   * vectors.<name>.datatype / on_disk / hnsw / quantization, sparse modifier / index);
   * NULL or nvectors entries */
  const char *const *vector_params_json;
  const store_payload_field *payload_fields; /* the corpus payload fields (payload indexes) */
  int npayload_fields;
} store_config;

/* Search results of nq queries: hit i of query q is hits[q * k + i], for i < counts[q] (a store
 * with fewer than k points returns fewer).  Best first; equal scores ordered by point id
 * (integer ids before UUIDs, integers ascending, UUIDs by their text). */
typedef struct store_hit {
  corpus_id id;
  float score;
} store_hit;

typedef struct store_results {
  size_t nq, k;
  store_hit *hits; /* nq * k */
  size_t *counts;  /* nq */
} store_results;

void store_results_free(store_results *r);

/* A store handle: opaque; the backends' common head and vtable are src/store/internal.h. */
typedef struct store store;
struct store_record;

/*! store_open() : open (local, discard) or connect to the store named by `cfg->type`.  The
 *  collection is not touched until store_ensure_collection().
 *  @return : VF_ECONFIG for an unknown type, a missing collection name, a duplicate or unnamed
 *            vector, a dense/multi vector without a dimension; VF_EIO/VF_ENET from the backend. */
vf_status store_open(const store_config *cfg, store **out, vf_error *err);

/*! store_ensure_collection() : create the collection, or verify an existing one has the same
 *  vectors (names, kinds, dimensions, distances).
 *  @return : VF_ECONFIG naming the first difference when the schema differs (without recreate);
 *            VF_ENOTFOUND when it does not exist and the config says must_exist. */
vf_status store_ensure_collection(store *s, vf_error *err);
/*! store_defer_indexing() : prepare for a bulk load (no index maintenance while loading). */
vf_status store_defer_indexing(store *s, vf_error *err);
/*! store_enable_indexing() : the finalize step: build or resume indexing.  The local store
 *  first compacts its segments (each id kept once, newest wins); other writers of the
 *  collection must be done (VF_EUSAGE otherwise). */
vf_status store_enable_indexing(store *s, vf_error *err);
/*! store_wait_indexed() : wait until searches use the index (timeout_s <= 0: no limit). */
vf_status store_wait_indexed(store *s, double timeout_s, vf_error *err);
/*! store_upsert() : insert or replace the batch's points by id.  Vectors are matched to the
 *  collection's by name; a collection vector missing from the batch (or null for a row) is
 *  stored as absent.  @return : VF_EUSAGE for a vector the collection lacks, a kind or
 *  dimension that differs from the collection's (naming the vector and the first row). */
vf_status store_upsert(store *s, const corpus_batch *batch, vf_error *err);
/*! store_flush() : make every point upserted through this handle durable and visible to other
 *  handles and processes.  Call it at checkpoints, not after every batch (the local store
 *  commits a segment file per flush). */
vf_status store_flush(store *s, vf_error *err);
/*! store_count() : points stored (distinct ids).  `exact` false may be an estimate (Qdrant's
 *  points_count); the local store is always exact. */
vf_status store_count(store *s, bool exact, uint64_t *out, vf_error *err);
/*! store_search() : the k nearest points of each of nq queries (row-major, nq x dim floats) by
 *  the distance of the dense vector `vector` (NULL: the only dense vector).  Only committed
 *  (flushed) points are searched.  `out` is filled (caller frees with store_results_free).
 *  @return : VF_EUSAGE for an unknown vector, a wrong dimension, k == 0;
 *            VF_EUNSUPPORTED for a store that cannot search (discard) or a non-dense vector. */
vf_status store_search(store *s, const char *vector, const float *queries, size_t nq, int32_t dim,
                       size_t k, store_results *out, vf_error *err);
/*! store_search_filtered() : store_search() where query q only returns points whose payload
 *  satisfies filters[q] (vforge/filter.h; NULL or empty: unfiltered; `filters` NULL: none), so a
 *  query may get fewer than k hits.  The local store evaluates the filter itself (exactly, or
 *  inside its IVF list scan); Qdrant receives it as the Query's `filter`.
 *  @return : VF_EUNSUPPORTED for a store that cannot filter; else as store_search(). */
vf_status store_search_filtered(store *s, const char *vector, const float *queries, size_t nq,
                                int32_t dim, size_t k, const flt_filter *const *filters,
                                store_results *out, vf_error *err);
/*! store_close() : abandon anything not flushed and free the handle.  NULL ok. */
void store_close(store *s);
/*! store_type() : the backend of a handle: "local", "discard" or "qdrant". */
const char *store_type(const store *s);
/*! store_retries() : requests the backend retried internally through this handle (remote
 *  stores; 0 for local and discard). */
uint64_t store_retries(const store *s);

/* What a collection records about the corpus loaded into it (issue 14), so `bench` can refuse
 * ground truth of another corpus or metric instead of reporting a recall that cannot be right.
 * `load prepare` records it (local: collection.json "corpus" and "load"; qdrant: the collection
 * metadata vforge_corpus and vforge_load), `load finalize` marks the load finished. */
typedef struct store_record {
  char files_md5[33];      /* corpus_files_md5() of the corpus; "" when the collection holds
                              points of several corpora (unknown) */
  char id_expression[256]; /* the id expression the point ids were made with */
  uint64_t files, rows;    /* the corpus's files and rows */
  bool load_finished;      /* false from prepare until finalize has run */
} store_record;

/*! store_set_record() : record `r` in the collection (which must exist).
 *  @return : VF_EUNSUPPORTED for a backend that keeps no record (discard). */
vf_status store_set_record(store *s, const store_record *r, vf_error *err);
/*! store_get_record() : the collection's record; *found false when it holds none (loaded before
 *  issue 14, or by another tool).  @return : VF_EUNSUPPORTED (discard), backend errors. */
vf_status store_get_record(store *s, store_record *out, bool *found, vf_error *err);
/*! store_contains() : found[i] = whether the point ids[i] is stored (committed points).
 *  @return : VF_EUNSUPPORTED for a backend that cannot look ids up (discard). */
vf_status store_contains(store *s, const corpus_id *ids, size_t n, bool *found, vf_error *err);

/*! store_id_cmp() : the point id order used for ties (integers before UUIDs). */
int store_id_cmp(const corpus_id *a, const corpus_id *b);

/*! store_id_format() : the canonical text of an id (decimal integer or UUID) into out. */
void store_id_format(const corpus_id *id, char out[37]);

/*! store_id_parse() : the inverse of store_id_format() (decimal uint64 or a lowercase or
 *  uppercase 8-4-4-4-12 UUID, stored lowercase).  @return : false when `s` is neither. */
bool store_id_parse(const char *s, size_t len, corpus_id *out);

/*! store_local_set_nprobe() : the IVF lists a `local` handle probes per query, in place of the
 *  index's own (params.index.nprobe, else the manifest's max(16, nlist/16)); 0 restores that.
 *  Values above the index's nlist probe every list.  While it is set, a search that cannot go
 *  through an index (none built, or one older than the segments) fails with VF_EUSAGE instead of
 *  scanning exactly, so an nprobe figure never comes from an exact scan.
 *  @return : VF_EUSAGE when `s` is not a local store handle. */
vf_status store_local_set_nprobe(store *s, uint32_t nprobe, vf_error *err);

/* Search options of a Qdrant handle (bench): passed as the Query API's `params`. */
typedef struct store_qdrant_search_opts {
  int64_t hnsw_ef;     /* 0: Qdrant's default */
  bool exact;          /* exact (brute-force) search */
  int rescore;         /* quantization.rescore: -1 unset, 0 false, 1 true */
  double oversampling; /* quantization.oversampling: 0 unset, else >= 1 */
} store_qdrant_search_opts;

/*! store_qdrant_set_search() : set the search options of a Qdrant handle.
 *  @return : VF_EUSAGE when `s` is not a Qdrant handle or an option is out of range. */
vf_status store_qdrant_set_search(store *s, const store_qdrant_search_opts *o, vf_error *err);

/* issue 18: collection administration (`vforge load reindex | delete`) */
typedef struct store_collection_info {
  bool exists;
  uint64_t points;  /* Qdrant: points_count (approximate); local: exact */
  char status[16];  /* Qdrant: green / yellow / grey / red; local: "" */
  char where[512];  /* the server (Qdrant: transport and endpoint) or the directory */
} store_collection_info;

/*! store_describe_collection() : whether the collection exists, its points and status.
 *  @return : VF_EUNSUPPORTED for stores without collections (discard). */
vf_status store_describe_collection(store *s, store_collection_info *out, vf_error *err);
/*! store_drop_collection() : delete the collection and its points (nothing when absent). */
vf_status store_drop_collection(store *s, vf_error *err);
/*! store_qdrant_reindex() : PATCH the config's hnsw / quantization / optimizers (collection
 *  level and vectors.<name>.hnsw / quantization) onto the existing collection, then wait until
 *  it is green (timeout_s <= 0: no limit).
 *  @return : VF_ENOTFOUND when the collection does not exist; VF_ECONFIG when the config sets
 *            none of them; VF_EUSAGE for a store that is not Qdrant. */
vf_status store_qdrant_reindex(store *s, double timeout_s, vf_error *err);
/*! store_qdrant_transport() : "grpc http://host:6334" or "rest http://host:6333" into out;
 *  NULL for a store that is not Qdrant. */
const char *store_qdrant_transport(const store *s, char *out, size_t cap);

struct vf_config;
/*! store_config_from() : the store settings of a load config into `sc` (type, path, url,
 *  api_key, collection_name, params, recreate, upsert_wait, the gRPC transport); the caller sets
 *  the vectors (and their parameters) and anything it overrides. */
void store_config_from(const struct vf_config *cfg, store_config *sc);

/*! store_payload_kinds() : what each payload field's column holds (store_payload_kind), read
 *  from the parquet footer of `file`; a component dataset's payload is not probed (kinds stay
 *  STORE_PK_UNKNOWN).  out[i].key / .column borrow from src. */
vf_status store_payload_kinds(const corpus_file *file, const corpus_payload_source *src, int n,
                              store_payload_field *out, vf_error *err);


#ifdef __cplusplus
}
#endif
#endif
