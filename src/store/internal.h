/*
 * internal.h — how the store backends plug in behind include/vforge/store.h (curl's urldata.h
 * model): the vtable each backend fills, the common head every handle starts with, the helpers
 * the backends share, and the backend constructors store_open() dispatches to.  Callers outside
 * src/store see only the operations (store.h) and an opaque `store *`; the unit tests and
 * bench/qdrant-serialize include this header directly.
 */
#ifndef VFORGE_STORE_INTERNAL_H
#define VFORGE_STORE_INTERNAL_H

#include "vforge/store.h"

typedef struct store_vtable {
  const char *type;
  vf_status (*ensure_collection)(store *s, vf_error *err);
  vf_status (*defer_indexing)(store *s, vf_error *err);
  vf_status (*enable_indexing)(store *s, vf_error *err);
  vf_status (*wait_indexed)(store *s, double timeout_s, vf_error *err);
  vf_status (*upsert)(store *s, const corpus_batch *batch, vf_error *err);
  vf_status (*flush)(store *s, vf_error *err);
  vf_status (*count)(store *s, bool exact, uint64_t *out, vf_error *err);
  vf_status (*search)(store *s, const char *vector, const float *queries, size_t nq, int32_t dim,
                      size_t k, store_results *out, vf_error *err);
  void (*close)(store *s);
  /* filtered search (store_search_filtered); NULL: the backend cannot filter */
  vf_status (*search_filtered)(store *s, const char *vector, const float *queries, size_t nq,
                               int32_t dim, size_t k, const flt_filter *const *filters,
                               store_results *out, vf_error *err);
  /* issue 14 (NULL: the backend keeps no record / cannot look ids up -> VF_EUNSUPPORTED) */
  vf_status (*set_record)(store *s, const struct store_record *r, vf_error *err);
  vf_status (*get_record)(store *s, struct store_record *out, bool *found, vf_error *err);
  vf_status (*contains)(store *s, const corpus_id *ids, size_t n, bool *found, vf_error *err);
} store_vtable;

/* The common head of every backend's handle. */
struct store {
  const store_vtable *vt;
  char *collection;
  store_vector_spec *vectors; /* owned deep copy of the config's spec */
  int nvectors;
  uint64_t points_upserted; /* points accepted by upsert through this handle */
  uint64_t retries;         /* requests a remote backend retried internally (issue 4) */
  bool must_exist;          /* store_config.must_exist */
};

/* Backend constructors (used by store_open; exposed for tests). */
vf_status store_local_open(const store_config *cfg, store **out, vf_error *err);
vf_status store_discard_open(const store_config *cfg, store **out, vf_error *err);
/*! store_qdrant_open() : the Qdrant store (src/store/qdrant.c; over gRPC with cfg->prefer_grpc,
 *  src/store/qdrant_grpc.c): cfg->url (http/https),
 *  cfg->api_key, cfg->params_json (the config's `params`: hnsw, quantization, optimizers,
 *  shard_number, replication_factor, write_consistency_factor, on_disk_payload, recreate).
 *  Connects lazily: nothing is sent before store_ensure_collection() or another call. */
vf_status store_qdrant_open(const store_config *cfg, store **out, vf_error *err);

/* store_describe_collection() / store_drop_collection() of each backend */
vf_status store_qdrant_describe(store *s, store_collection_info *out, vf_error *err);
vf_status store_qdrant_drop(store *s, vf_error *err);
vf_status store_local_describe(store *s, store_collection_info *out, vf_error *err);
vf_status store_local_drop(store *s, vf_error *err);

/* Internal helpers shared by backends: fill the common head from cfg (deep copy). */
vf_status store_head_init(store *s, const store_vtable *vt, const store_config *cfg, vf_error *err);
void store_head_free(store *s);
/*! store_check_batch() : the batch-vs-collection checks of store_upsert(); `map[j]` receives
 *  the batch vector index of collection vector j, or -1 when the batch lacks it. */
vf_status store_check_batch(const store *s, const corpus_batch *b, int *map, vf_error *err);

#endif
