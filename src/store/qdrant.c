/*
 * qdrant.c — the `qdrant` store: Qdrant's REST API through the shared HTTP client (issue 4;
 * DESIGN.md module `store`).  Request and response shapes follow Qdrant's published OpenAPI
 * schema (../shared/qdrant/openapi.json): CreateCollection, UpdateCollection, PointsList,
 * CountRequest, QueryRequestBatch; CollectionInfo, CountResult, QueryResponse.  It is tested
 * against a stand-in that validates every body against that schema, not against a live Qdrant.
 *
 * Lifecycle (store.h):
 *   ensure_collection  GET /collections/{c}: 404 -> PUT (create); 200 -> compare the vector
 *                      schema (named dense/multi: size, distance, multivector comparator;
 *                      sparse names); a difference is VF_ECONFIG unless `recreate` (DELETE then
 *                      PUT).  `recreate` drops an existing collection in any case.
 *   defer_indexing     GET the collection's optimizer_config.indexing_threshold, remember it in
 *                      the handle AND in the collection's metadata (vforge_indexing_threshold,
 *                      merged by Qdrant), then PATCH it to 0 — finalize runs in another process.
 *   enable_indexing    PATCH the threshold back: params.optimizers.indexing_threshold, else the
 *                      remembered value (handle, then metadata), else 10000 (Qdrant's default).
 *   wait_indexed       poll GET /collections/{c}: green for QD_GREEN_STABLE_S in a row; grey ->
 *                      PATCH {"optimizers_config":{}} (the documented trigger); red or
 *                      optimizer_status.error -> VF_ENET with Qdrant's message; timeout.
 *   upsert             PUT /collections/{c}/points?wait=... bodies under 32 MiB (Qdrant's default
 *                      request limit), the batch split at point boundaries.
 *   flush              nothing to send: an acknowledged upsert is durable in Qdrant's WAL.
 *   count              POST /points/count {"exact": true|false}.
 *   search             POST /points/query/batch, QUERY_CHUNK queries per request.
 *
 * gRPC (issue 18, vectorstore.prefer_grpc): qd_call() hands each of these calls to
 * qdrant_grpc.c, which makes it as the equivalent RPC and answers in the same REST JSON, so the
 * logic above and below exists once; upsert and search write their protobuf messages directly
 * (qdg_upsert, qdg_query).  Issue 18 also adds per-vector parameters (datatype, on_disk, hnsw,
 * quantization; sparse modifier and index), payload indexes created before the upload, and the
 * deferral strategies (params.defer: indexing_threshold | hnsw_m | none) recorded in the
 * collection's metadata, plus reindex / describe / drop for `vforge load reindex | delete`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "store/qdrant_internal.h"
#include "vforge/io.h"
#include "vforge/store.h"

#define QD_MAX_BODY (((size_t)32 << 20) - ((size_t)64 << 10)) /* 32 MiB less headroom */
#define QD_DEFAULT_THRESHOLD 10000
#define QD_META_KEY "vforge_indexing_threshold"
#define QD_DEFER_KEY "vforge_defer"              /* what prepare deferred (issue 18) */
#define QD_HNSW_KEY "vforge_hnsw_m"              /* the collection's hnsw m before the load */
#define QD_VEC_HNSW_KEY "vforge_vector_hnsw_m"   /* {vector: m} of vectors with their own m */
#define QD_DEFAULT_HNSW_M 16
#define QD_GRPC_DEFAULT_PORT 6334
#define QD_GRPC_DEFAULT_MAX ((size_t)64 << 20)   /* Qdrant's default gRPC message limit */
#define QD_GREEN_STABLE_S 2.0
#define QD_POLL_S 0.25
#define QD_QUERY_CHUNK 64

typedef struct qd_store {
  store base;
  io_http *http;
  char *cpath;      /* "/collections/<name, percent-encoded>" */
  char *params_txt; /* owned copy of params_json (qj raw spans point into it) */
  vf_json_val params;
  bool recreate;
  bool wait;
  int64_t saved_threshold; /* -1: none remembered */
  store_qdrant_search_opts sopts;
  vf_buf body;
  io_http_resp resp;
  vf_json_val doc; /* last parsed response */
  int *map;
  /* issue 18 */
  qdg *grpc;        /* non-NULL: every call goes over gRPC (vectorstore.prefer_grpc) */
  int defer;        /* QD_DEFER_* (params.defer) */
  store_payload_field *pfields; /* the corpus payload fields (payload indexes) */
  int npfields;
  char **vparams;   /* per vector: the config's vectors.<name> parameters (JSON) or NULL */
} qd_store;

/* params.defer: what prepare changes for the bulk load and finalize restores */
enum { QD_DEFER_THRESHOLD = 0, QD_DEFER_HNSW_M, QD_DEFER_NONE };

static const char *qd_distance(corpus_distance d) {
  switch (d) {
  case CORPUS_COSINE: return "Cosine";
  case CORPUS_DOT: return "Dot";
  case CORPUS_EUCLID: return "Euclid";
  case CORPUS_MANHATTAN: return "Manhattan";
  }
  return "Cosine";
}

static vf_status qd_nomem(vf_error *err) {
  return vf_error_set(err, VF_ENOMEM, "qdrant: out of memory");
}

/* Send a request to <collection path><suffix>; on success the response body is parsed into
 * q->doc.  *status receives the HTTP status (404 only when allow_404). */
#define QD_BAD_BODY_RETRIES 3 /* re-sends of a call whose 2xx body was not valid JSON */

static vf_status qd_call(qd_store *q, const char *method, const char *suffix, const vf_buf *body,
                         bool allow_404, long *status, vf_error *err) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s", q->cpath, suffix);
  io_http_req rq = {0};
  rq.method = method;
  rq.path = path;
  if (body) {
    rq.body = body->data;
    rq.body_len = body->len;
  }
  rq.allow_404 = allow_404;
  /* A 2xx answer whose body is not JSON was cut or corrupted in transit (e.g. behind a
   * Content-Length that lied): every call here is idempotent (GET, PUT/upsert by id, PATCH,
   * DELETE, POST count/query), so it is sent again, a bounded number of times, logged. */
  for (int attempt = 0;; attempt++) {
    vf_json_free(&q->doc);
    vf_status st;
    if (q->grpc) { /* the same call as its RPC (qdrant_grpc.c), answered in REST shape */
      st = qdg_rest_call(q->grpc, method, suffix, body, allow_404, &q->resp.status,
                         &q->resp.body, err);
    } else {
      st = io_http_request(q->http, &rq, &q->resp, err);
    }
    io_http_stats hs;
    io_http_get_stats(q->http, &hs);
    q->base.retries = hs.retries + qdg_retries(q->grpc) + (uint64_t)attempt;
    if (status) *status = q->resp.status;
    if (st != VF_OK) return vf_error_prefix(err, "qdrant collection '%s': ", q->base.collection);
    if (q->resp.status == 404 && allow_404) return VF_OK;
    char what[300];
    snprintf(what, sizeof what, "qdrant: the response to %s %.200s", method, path);
    st = vf_json_parse((const char *)q->resp.body.data, q->resp.body.len, what, &q->doc, err);
    if (st != VF_ECORRUPT) return st;
    err->code = st = VF_ENET; /* a broken server answer is a remote failure */
    if (attempt >= QD_BAD_BODY_RETRIES) return st;
    vf_log(VF_LOG_WARN, "%s (attempt %d of %d; sending it again)", err->msg, attempt + 1,
           QD_BAD_BODY_RETRIES + 1);
  }
}

/* ------------------------------------------------------------ the schema */

static vf_status qd_put_name(vf_buf *b, const char *name, vf_error *err) {
  vf_status st = vf_json_string(b, name, strlen(name), err);
  if (st != VF_OK) return st;
  return vf_buf_append(b, ":", 1, err);
}

/* A params member passed through verbatim under another key. */
static vf_status qd_pass(qd_store *q, vf_buf *b, const char *from, const char *to, vf_error *err) {
  const vf_json_val *v = vf_json_get(&q->params, from);
  if (!v || v->t == VF_JSON_NULL) return VF_OK;
  vf_status st = vf_buf_printf(b, err, ",\"%s\":", to);
  if (st != VF_OK) return st;
  return vf_buf_append(b, v->raw, v->raw_len, err);
}

static vf_status qd_compare(qd_store *q, vf_error *err);

/* The config's per-vector parameters (vectors.<name>.datatype / on_disk / hnsw / quantization;
 * sparse: modifier / index) as members of VectorParams / SparseVectorParams, with `first`
 * telling whether a comma is needed. */
static vf_status qd_vector_params(const char *pj, vf_buf *b, bool first, vf_error *err) {
  if (!pj || !*pj) return VF_OK;
  vf_json_val p;
  vf_status st = vf_json_parse(pj, strlen(pj), "vector params", &p, err);
  if (st != VF_OK) return st;
  static const char *const ren[][2] = {{"hnsw", "hnsw_config"},
                                       {"quantization", "quantization_config"}};
  for (size_t i = 0; i < p.n; i++) {
    const char *key = p.keys[i];
    for (size_t r = 0; r < sizeof ren / sizeof ren[0]; r++)
      if (strcmp(key, ren[r][0]) == 0) key = ren[r][1];
    if (!first) VF_TRY(vf_buf_append(b, ",", 1, err));
    first = false;
    VF_TRY(qd_put_name(b, key, err));
    VF_TRY(vf_buf_append(b, p.items[i].raw, p.items[i].raw_len, err));
  }
out:
  vf_json_free(&p);
  return st;
}

static vf_status qd_create(qd_store *q, vf_error *err) {
  vf_buf *b = &q->body;
  vf_buf_reset(b);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_append(b, "{\"vectors\":{", 12, err));
  bool first = true, any_sparse = false;
  for (int i = 0; i < q->base.nvectors; i++) {
    const store_vector_spec *v = &q->base.vectors[i];
    if (v->kind == CORPUS_VEC_SPARSE) {
      any_sparse = true;
      continue;
    }
    if (!first) VF_TRY(vf_buf_append(b, ",", 1, err));
    first = false;
    VF_TRY(qd_put_name(b, v->name, err));
    VF_TRY(vf_buf_printf(b, err, "{\"size\":%d,\"distance\":\"%s\"%s", (int)v->dim,
                         qd_distance(v->distance),
                         v->kind == CORPUS_VEC_MULTI
                             ? ",\"multivector_config\":{\"comparator\":\"max_sim\"}"
                             : ""));
    VF_TRY(qd_vector_params(q->vparams[i], b, false, err));
    VF_TRY(vf_buf_append(b, "}", 1, err));
  }
  VF_TRY(vf_buf_append(b, "}", 1, err));
  if (any_sparse) {
    VF_TRY(vf_buf_append(b, ",\"sparse_vectors\":{", 19, err));
    first = true;
    for (int i = 0; i < q->base.nvectors; i++) {
      const store_vector_spec *v = &q->base.vectors[i];
      if (v->kind != CORPUS_VEC_SPARSE) continue;
      if (!first) VF_TRY(vf_buf_append(b, ",", 1, err));
      first = false;
      VF_TRY(qd_put_name(b, v->name, err));
      VF_TRY(vf_buf_append(b, "{", 1, err));
      VF_TRY(qd_vector_params(q->vparams[i], b, true, err));
      VF_TRY(vf_buf_append(b, "}", 1, err));
    }
    VF_TRY(vf_buf_append(b, "}", 1, err));
  }
  static const char *const pass[][2] = {{"hnsw", "hnsw_config"},
                                        {"optimizers", "optimizers_config"},
                                        {"quantization", "quantization_config"},
                                        {"shard_number", "shard_number"},
                                        {"replication_factor", "replication_factor"},
                                        {"write_consistency_factor", "write_consistency_factor"},
                                        {"on_disk_payload", "on_disk_payload"}};
  for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++)
    VF_TRY(qd_pass(q, b, pass[i][0], pass[i][1], err));
  VF_TRY(vf_buf_append(b, "}", 1, err));
  long status = 0;
  st = qd_call(q, "PUT", "", b, false, &status, err);
  if (st != VF_OK && status == 409) {
    /* "already exists": our own create whose response was lost and then retried, or another
     * process preparing at the same time — accept it when its schema is ours */
    vf_log(VF_LOG_WARN, "qdrant: collection '%s' already exists after the create request "
           "(a retried create or a concurrent one); checking its schema", q->base.collection);
    long gs = 0;
    VF_TRY(qd_call(q, "GET", "", NULL, true, &gs, err));
    if (gs == 404)
      VF_FAIL(vf_error_set(err, VF_ENET, "qdrant collection '%s': create answered 409 but the "
                           "collection does not exist", q->base.collection));
    VF_TRY(qd_compare(q, err));
  } else {
    VF_TRY(st);
    vf_log(VF_LOG_INFO, "qdrant: created collection '%s'", q->base.collection);
  }
out:
  return st;
}

/* Compare the collection's vector schema (CollectionInfo.config.params) with ours. */
static vf_status qd_compare(qd_store *q, vf_error *err) {
  const char *c = q->base.collection;
  const vf_json_val *params = vf_json_path(&q->doc, "result.config.params");
  if (!params || params->t != VF_JSON_OBJ)
    return vf_error_set(err, VF_ENET, "qdrant collection '%s': the collection info has no "
                        "config.params", c);
  const vf_json_val *vecs = vf_json_get(params, "vectors");
  const vf_json_val *sparse = vf_json_get(params, "sparse_vectors");
  if (vecs && vecs->t == VF_JSON_OBJ && vf_json_get(vecs, "size") && vf_json_get(vecs, "distance") &&
      vf_json_get(vecs, "size")->t == VF_JSON_NUM)
    return vf_error_set(err, VF_ECONFIG,
                        "qdrant collection '%s' exists with a single unnamed vector; the config "
                        "has named vectors (set vectorstore.params.recreate: true to replace it)",
                        c);
  size_t ndense = 0, nsparse = 0;
  for (int i = 0; i < q->base.nvectors; i++) {
    const store_vector_spec *v = &q->base.vectors[i];
    if (v->kind == CORPUS_VEC_SPARSE) {
      nsparse++;
      if (!vf_json_get(sparse, v->name))
        return vf_error_set(err, VF_ECONFIG,
                            "qdrant collection '%s' exists without the sparse vector '%s' of the "
                            "config (set vectorstore.params.recreate: true to replace it)",
                            c, v->name);
      continue;
    }
    ndense++;
    const vf_json_val *p = vf_json_get(vecs, v->name);
    if (!p)
      return vf_error_set(err, VF_ECONFIG,
                          "qdrant collection '%s' exists without the vector '%s' of the config "
                          "(set vectorstore.params.recreate: true to replace it)",
                          c, v->name);
    const vf_json_val *size = vf_json_get(p, "size"), *dist = vf_json_get(p, "distance");
    const vf_json_val *mv = vf_json_path(p, "multivector_config.comparator");
    if (!size || size->t != VF_JSON_NUM || size->num != (double)v->dim)
      return vf_error_set(err, VF_ECONFIG,
                          "qdrant collection '%s': vector '%s' has size %.*s in the collection "
                          "but %d in the config (set vectorstore.params.recreate: true to "
                          "replace it)",
                          c, v->name, size ? (int)size->raw_len : 4, size ? size->raw : "none",
                          (int)v->dim);
    if (!dist || dist->t != VF_JSON_STR || strcmp(dist->str, qd_distance(v->distance)) != 0)
      return vf_error_set(err, VF_ECONFIG,
                          "qdrant collection '%s': vector '%s' has distance %s in the collection "
                          "but %s in the config (set vectorstore.params.recreate: true to "
                          "replace it)",
                          c, v->name, dist && dist->t == VF_JSON_STR ? dist->str : "none",
                          qd_distance(v->distance));
    bool is_multi = mv && mv->t == VF_JSON_STR;
    if (is_multi != (v->kind == CORPUS_VEC_MULTI) ||
        (is_multi && strcmp(mv->str, "max_sim") != 0))
      return vf_error_set(err, VF_ECONFIG,
                          "qdrant collection '%s': vector '%s' is %s in the collection but %s in "
                          "the config (set vectorstore.params.recreate: true to replace it)",
                          c, v->name, is_multi ? "a multivector" : "a single dense vector",
                          v->kind == CORPUS_VEC_MULTI ? "a max_sim multivector"
                                                      : "a single dense vector");
  }
  size_t have_dense = vecs && vecs->t == VF_JSON_OBJ ? vecs->n : 0;
  size_t have_sparse = sparse && sparse->t == VF_JSON_OBJ ? sparse->n : 0;
  if (have_dense != ndense || have_sparse != nsparse) {
    const vf_json_val *extra = have_dense != ndense ? vecs : sparse;
    const char *name = "?";
    for (size_t i = 0; i < extra->n; i++) {
      bool known = false;
      for (int j = 0; j < q->base.nvectors; j++)
        if (strcmp(q->base.vectors[j].name, extra->keys[i]) == 0) known = true;
      if (!known) {
        name = extra->keys[i];
        break;
      }
    }
    return vf_error_set(err, VF_ECONFIG,
                        "qdrant collection '%s' has the %s vector '%s', which the config lacks "
                        "(set vectorstore.params.recreate: true to replace it)",
                        c, have_dense != ndense ? "dense" : "sparse", name);
  }
  return VF_OK;
}

static vf_status qd_ensure(store *s, vf_error *err) {
  qd_store *q = (qd_store *)s;
  long status = 0;
  vf_status st = qd_call(q, "GET", "", NULL, true, &status, err);
  if (st != VF_OK) return st;
  if (status == 404 && s->must_exist)
    return vf_error_set(err, VF_ENOTFOUND, "qdrant collection '%s' does not exist (run `vforge "
                        "load prepare` and `load load` first)", s->collection);
  if (status == 404) return qd_create(q, err);
  if (q->recreate) {
    vf_log(VF_LOG_INFO, "qdrant: recreate: dropping collection '%s'", s->collection);
    st = qd_call(q, "DELETE", "", NULL, true, NULL, err);
    if (st != VF_OK) return st;
    return qd_create(q, err);
  }
  return qd_compare(q, err);
}

/* ------------------------------------------------------------- indexing */

static bool qd_uint(const vf_json_val *v, int64_t *out) {
  if (!v || v->t != VF_JSON_NUM || v->num < 0 || v->num > 9e15 || v->num != floor(v->num)) return false;
  *out = (int64_t)v->num;
  return true;
}

static vf_status qd_patch(qd_store *q, const char *json, vf_error *err) {
  vf_buf_reset(&q->body);
  vf_status st = vf_buf_append(&q->body, json, strlen(json), err);
  if (st != VF_OK) return st;
  return qd_call(q, "PATCH", "", &q->body, false, NULL, err);
}

static vf_status qd_payload_indexes(qd_store *q, vf_error *err);
static vf_status qd_defer_hnsw(qd_store *q, vf_error *err);
static vf_status qd_enable_hnsw(qd_store *q, vf_error *err);

static vf_status qd_defer(store *s, vf_error *err) {
  qd_store *q = (qd_store *)s;
  vf_status st = qd_payload_indexes(q, err); /* before the upload (Qdrant's advice) */
  if (st != VF_OK) return st;
  if (q->defer == QD_DEFER_HNSW_M) return qd_defer_hnsw(q, err);
  if (q->defer == QD_DEFER_NONE) {
    vf_log(VF_LOG_INFO, "qdrant: collection '%s': indexing is not deferred (params.defer: none)",
           s->collection);
    return qd_patch(q, "{\"metadata\":{\"" QD_DEFER_KEY "\":\"none\"}}", err);
  }
  st = qd_call(q, "GET", "", NULL, false, NULL, err);
  if (st != VF_OK) return st;
  int64_t cur = -1, meta = -1;
  if (!qd_uint(vf_json_path(&q->doc, "result.config.optimizer_config.indexing_threshold"), &cur))
    cur = -1; /* null: Qdrant's default */
  if (!qd_uint(vf_json_path(&q->doc, "result.config.metadata." QD_META_KEY), &meta)) meta = -1;
  int64_t keep = cur > 0 ? cur : meta > 0 ? meta : QD_DEFAULT_THRESHOLD;
  if (cur == 0 && meta <= 0)
    vf_log(VF_LOG_WARN,
           "qdrant: collection '%s' already has indexing_threshold 0 and no remembered value; "
           "finalize will restore %lld unless params.optimizers.indexing_threshold is set",
           s->collection, (long long)keep);
  q->saved_threshold = keep;
  char json[160];
  snprintf(json, sizeof json,
           "{\"optimizers_config\":{\"indexing_threshold\":0},\"metadata\":{\"" QD_META_KEY
           "\":%lld,\"" QD_DEFER_KEY "\":\"indexing_threshold\"}}",
           (long long)keep);
  return qd_patch(q, json, err);
}

static vf_status qd_enable(store *s, vf_error *err) {
  qd_store *q = (qd_store *)s;
  /* restore what prepare changed, as its metadata says (another process may have prepared) */
  vf_status gst = qd_call(q, "GET", "", NULL, false, NULL, err);
  if (gst != VF_OK) return gst;
  const vf_json_val *how = vf_json_path(&q->doc, "result.config.metadata." QD_DEFER_KEY);
  const char *mode = how && how->t == VF_JSON_STR ? how->str
                     : q->defer == QD_DEFER_HNSW_M ? "hnsw_m"
                     : q->defer == QD_DEFER_NONE   ? "none"
                                                   : "indexing_threshold";
  if (strcmp(mode, "hnsw_m") == 0) return qd_enable_hnsw(q, err);
  if (strcmp(mode, "none") == 0) {
    vf_log(VF_LOG_INFO, "qdrant: collection '%s': nothing to restore (indexing was not deferred)",
           s->collection);
    return VF_OK;
  }
  int64_t v = -1;
  if (!qd_uint(vf_json_path(&q->params, "optimizers.indexing_threshold"), &v)) {
    if (!qd_uint(vf_json_path(&q->doc, "result.config.metadata." QD_META_KEY), &v) || v <= 0)
      v = q->saved_threshold > 0 ? q->saved_threshold : QD_DEFAULT_THRESHOLD;
  }
  char json[96];
  snprintf(json, sizeof json, "{\"optimizers_config\":{\"indexing_threshold\":%lld}}",
           (long long)v);
  vf_log(VF_LOG_INFO, "qdrant: collection '%s': indexing_threshold restored to %lld",
         s->collection, (long long)v);
  return qd_patch(q, json, err);
}

static void qd_sleep(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

static vf_status qd_wait(store *s, double timeout_s, vf_error *err) {
  qd_store *q = (qd_store *)s;
  double t0 = vf_now(), green_since = -1;
  bool grey_triggered = false;
  char last[32] = "unknown";
  vf_stage sg;
  vf_stage_begin(&sg, "finalize", "wait for green", "s", 0);
  for (;;) {
    vf_status st = vf_check_cancel(err);
    if (st != VF_OK) return st;
    st = qd_call(q, "GET", "", NULL, false, NULL, err);
    if (st != VF_OK) return st;
    const vf_json_val *os = vf_json_path(&q->doc, "result.optimizer_status");
    const vf_json_val *oe = vf_json_get(os, "error");
    if (oe)
      return vf_error_set(err, VF_ENET, "qdrant collection '%s': optimizer error: %s",
                          s->collection, oe->t == VF_JSON_STR ? oe->str : "(no message)");
    const vf_json_val *stv = vf_json_path(&q->doc, "result.status");
    const char *status = stv && stv->t == VF_JSON_STR ? stv->str : "(none)";
    if (strcmp(status, last) != 0)
      vf_log(VF_LOG_INFO, "qdrant: collection '%s' status %s", s->collection, status);
    snprintf(last, sizeof last, "%s", status);
    double now = vf_now();
    vf_stage_update(&sg, (uint64_t)(now - t0), "collection '%s' %s", s->collection, status);
    if (strcmp(status, "red") == 0)
      return vf_error_set(err, VF_ENET,
                          "qdrant collection '%s': status red (an operation failed and was not "
                          "recovered)",
                          s->collection);
    if (strcmp(status, "green") == 0) {
      if (green_since < 0) green_since = now;
      if (now - green_since >= QD_GREEN_STABLE_S) return VF_OK;
    } else {
      green_since = -1;
      if (strcmp(status, "grey") == 0) {
        if (!grey_triggered) {
          vf_log(VF_LOG_INFO, "qdrant: collection '%s' is grey: triggering the optimizers",
                 s->collection);
          st = qd_patch(q, "{\"optimizers_config\":{}}", err);
          if (st != VF_OK) return st;
          grey_triggered = true;
        }
      } else if (strcmp(status, "yellow") != 0) {
        return vf_error_set(err, VF_ENET, "qdrant collection '%s': unknown status '%s'",
                            s->collection, status);
      } else {
        grey_triggered = false;
      }
    }
    if (timeout_s > 0 && now - t0 > timeout_s)
      return vf_error_set(err, VF_ENET,
                          "qdrant collection '%s': not green after %.0f s (status %s)",
                          s->collection, timeout_s, status);
    qd_sleep(QD_POLL_S);
  }
}

/* --------------------------------------------------------------- points */

static vf_status qd_send_points(qd_store *q, vf_error *err) {
  vf_status st = vf_buf_append(&q->body, "]}", 2, err);
  if (st != VF_OK) return st;
  return qd_call(q, "PUT", q->wait ? "/points?wait=true" : "/points?wait=false", &q->body, false,
                 NULL, err);
}

static vf_status qd_upsert(store *s, const corpus_batch *b, vf_error *err) {
  qd_store *q = (qd_store *)s;
  vf_status st = store_check_batch(s, b, q->map, err);
  if (st != VF_OK || b->n == 0) return st;
  if (q->grpc) {
    st = qdg_upsert(q->grpc, s, b, q->map, q->wait, err);
    io_http_stats hs;
    io_http_get_stats(q->http, &hs);
    s->retries = hs.retries + qdg_retries(q->grpc);
    return st;
  }
  static const char head[] = "{\"points\":[";
  vf_buf_reset(&q->body);
  bool first = true;
  size_t in_body = 0;
  VF_TRY(vf_buf_append(&q->body, head, sizeof head - 1, err));
  for (size_t r = 0; r < b->n; r++) {
    size_t mark = q->body.len;
    bool was_first = first;
    VF_TRY(qd_points_json(s, b, q->map, r, r + 1, &first, &q->body, err));
    if (q->body.len + 2 <= QD_MAX_BODY) {
      in_body++;
      continue;
    }
    if (in_body == 0)
      return vf_error_set(err, VF_EUSAGE,
                          "%s: row %zu: one point takes %zu bytes of JSON, more than Qdrant's "
                          "32 MiB request limit",
                          b->file_key ? b->file_key : "batch", r, q->body.len - mark);
    q->body.len = mark; /* send what fits, restart with this point */
    first = was_first;
    VF_TRY(qd_send_points(q, err));
    vf_buf_reset(&q->body);
    first = true;
    in_body = 0;
    VF_TRY(vf_buf_append(&q->body, head, sizeof head - 1, err));
    r--;
  }
  if (in_body > 0) VF_TRY(qd_send_points(q, err));
out:
  if (q->body.cap > ((size_t)64 << 20)) vf_buf_free(&q->body);
  return st;
}

static vf_status qd_flush(store *s, vf_error *err) {
  (void)s;
  (void)err;
  return VF_OK; /* acknowledged upserts are in Qdrant's write-ahead log */
}

static vf_status qd_count(store *s, bool exact, uint64_t *out, vf_error *err) {
  qd_store *q = (qd_store *)s;
  *out = 0;
  vf_buf_reset(&q->body);
  vf_status st = vf_buf_printf(&q->body, err, "{\"exact\":%s}", exact ? "true" : "false");
  if (st != VF_OK) return st;
  st = qd_call(q, "POST", "/points/count", &q->body, false, NULL, err);
  if (st != VF_OK) return st;
  int64_t n;
  if (!qd_uint(vf_json_path(&q->doc, "result.count"), &n))
    return vf_error_set(err, VF_ENET, "qdrant collection '%s': the count response has no "
                        "result.count", s->collection);
  *out = (uint64_t)n;
  return VF_OK;
}

static int qd_hit_cmp(const void *a, const void *b) {
  const store_hit *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return store_id_cmp(&x->id, &y->id);
}

static vf_status qd_search_impl(store *s, const char *vector, const float *queries, size_t nq,
                                int32_t dim, size_t k, const flt_filter *const *filters,
                                store_results *out, vf_error *err) {
  qd_store *q = (qd_store *)s;
  const store_vector_spec *sp = NULL;
  for (int i = 0; i < s->nvectors; i++) {
    const store_vector_spec *v = &s->vectors[i];
    if (vector ? strcmp(v->name, vector) == 0 : v->kind == CORPUS_VEC_DENSE) {
      if (!vector && sp)
        return vf_error_set(err, VF_EUSAGE,
                            "search: collection '%s' has several dense vectors; name one",
                            s->collection);
      sp = v;
      if (vector) break;
    }
  }
  if (!sp)
    return vf_error_set(err, VF_EUSAGE, "search: collection '%s' has no %s vector%s%s",
                        s->collection, vector ? "" : "dense", vector ? " " : "",
                        vector ? vector : "");
  if (sp->kind != CORPUS_VEC_DENSE)
    return vf_error_set(err, VF_EUNSUPPORTED, "search: vector '%s' is not a dense vector",
                        sp->name);
  if (dim != sp->dim)
    return vf_error_set(err, VF_EUSAGE, "search: queries have dimension %d, vector '%s' has %d",
                        (int)dim, sp->name, (int)sp->dim);
  if (k > 1000000) return vf_error_set(err, VF_EUSAGE, "search: k %zu is too large", k);
  out->nq = nq;
  out->k = k;
  out->hits = vf_calloc(nq * k + 1, sizeof *out->hits);
  out->counts = vf_calloc(nq + 1, sizeof *out->counts);
  if (!out->hits || !out->counts) {
    store_results_free(out);
    return qd_nomem(err);
  }
  char params[256];
  int pl = snprintf(params, sizeof params, "\"params\":{\"exact\":%s",
                    q->sopts.exact ? "true" : "false");
  if (q->sopts.hnsw_ef > 0)
    pl += snprintf(params + pl, sizeof params - (size_t)pl, ",\"hnsw_ef\":%lld",
                   (long long)q->sopts.hnsw_ef);
  if (q->sopts.rescore >= 0 || q->sopts.oversampling > 0) {
    pl += snprintf(params + pl, sizeof params - (size_t)pl, ",\"quantization\":{");
    if (q->sopts.rescore >= 0)
      pl += snprintf(params + pl, sizeof params - (size_t)pl, "\"rescore\":%s%s",
                     q->sopts.rescore ? "true" : "false", q->sopts.oversampling > 0 ? "," : "");
    if (q->sopts.oversampling > 0)
      pl += snprintf(params + pl, sizeof params - (size_t)pl, "\"oversampling\":%.17g",
                     q->sopts.oversampling);
    pl += snprintf(params + pl, sizeof params - (size_t)pl, "}");
  }
  snprintf(params + pl, sizeof params - (size_t)pl, "}");
  vf_status st = VF_OK;
  for (size_t q0 = 0; q0 < nq; q0 += QD_QUERY_CHUNK) {
    size_t qn = nq - q0 < QD_QUERY_CHUNK ? nq - q0 : QD_QUERY_CHUNK;
    if (q->grpc) { /* Points/QueryBatch with the same search options and filters */
      const char *ftext[QD_QUERY_CHUNK];
      bool anyf = false;
      for (size_t i = 0; i < qn; i++) {
        const flt_filter *fq = filters ? filters[q0 + i] : NULL;
        ftext[i] = fq && !flt_is_empty(fq) ? flt_json(fq) : NULL;
        anyf = anyf || ftext[i];
      }
      VF_TRY(qdg_query(q->grpc, sp->name, queries + q0 * (size_t)dim, qn, dim, k, &q->sopts,
                       anyf ? ftext : NULL, out->hits + q0 * k, out->counts + q0, err));
      for (size_t i = 0; i < qn; i++) {
        store_hit *h = out->hits + (q0 + i) * k;
        if (sp->distance == CORPUS_EUCLID || sp->distance == CORPUS_MANHATTAN)
          for (size_t j = 0; j < out->counts[q0 + i]; j++)
            h[j].score = -h[j].score; /* distances: larger = nearer, as for REST */
        qsort(h, out->counts[q0 + i], sizeof *h, qd_hit_cmp);
      }
      continue;
    }
    vf_buf *b = &q->body;
    vf_buf_reset(b);
    VF_TRY(vf_buf_append(b, "{\"searches\":[", 13, err));
    for (size_t i = 0; i < qn; i++) {
      const float *f = queries + (q0 + i) * (size_t)dim;
      VF_TRY(vf_buf_reserve(b, (size_t)dim * (QD_F32_MAX_CHARS + 1) + 16, err));
      vf_buf_put(b, i ? ",{\"query\":[" : "{\"query\":[", i ? 11 : 10);
      for (int32_t d = 0; d < dim; d++) {
        if (!isfinite(f[d]))
          VF_FAIL(vf_error_set(err, VF_EUSAGE, "search: query %zu value %d is NaN or infinite",
                               q0 + i, (int)d));
        if (d) vf_buf_putc(b, ',');
        b->len += qd_fmt_f32((char *)b->data + b->len, f[d]);
      }
      VF_TRY(vf_buf_append(b, "],\"using\":", 10, err));
      VF_TRY(vf_json_string(b, sp->name, strlen(sp->name), err));
      /* the filter, as Qdrant Filter JSON (validated and compiled by flt_parse) */
      const flt_filter *fq = filters ? filters[q0 + i] : NULL;
      if (fq && !flt_is_empty(fq)) {
        VF_TRY(vf_buf_append(b, ",\"filter\":", 10, err));
        VF_TRY(vf_buf_append(b, flt_json(fq), strlen(flt_json(fq)), err));
      }
      VF_TRY(vf_buf_printf(b, err, ",\"limit\":%zu,\"with_payload\":false,%s}", k, params));
    }
    VF_TRY(vf_buf_append(b, "]}", 2, err));
    VF_TRY(qd_call(q, "POST", "/points/query/batch", b, false, NULL, err));
    const vf_json_val *res = vf_json_get(&q->doc, "result");
    if (!res || res->t != VF_JSON_ARR || res->n != qn)
      VF_FAIL(vf_error_set(err, VF_ENET, "qdrant collection '%s': the query response has %zu "
                           "results for %zu queries", s->collection,
                           res && res->t == VF_JSON_ARR ? res->n : 0, qn));
    for (size_t i = 0; i < qn; i++) {
      const vf_json_val *pts = vf_json_get(&res->items[i], "points");
      size_t np = pts && pts->t == VF_JSON_ARR ? pts->n : 0;
      if (np > k) np = k;
      store_hit *h = out->hits + (q0 + i) * k;
      for (size_t j = 0; j < np; j++) {
        const vf_json_val *id = vf_json_get(&pts->items[j], "id"), *sc = vf_json_get(&pts->items[j], "score");
        bool ok = id && sc && sc->t == VF_JSON_NUM &&
                  (id->t == VF_JSON_STR ? store_id_parse(id->str, strlen(id->str), &h[j].id)
                   : id->t == VF_JSON_NUM ? store_id_parse(id->raw, id->raw_len, &h[j].id)
                                     : false);
        if (!ok)
          VF_FAIL(vf_error_set(err, VF_ENET, "qdrant collection '%s': query %zu hit %zu has no "
                               "valid id and score", s->collection, q0 + i, j));
        /* Qdrant reports distances for Euclid/Manhattan (smaller = nearer): negate so larger
         * is nearer, as store_search promises */
        double score = sc->num;
        if (sp->distance == CORPUS_EUCLID || sp->distance == CORPUS_MANHATTAN) score = -score;
        h[j].score = (float)score;
      }
      qsort(h, np, sizeof *h, qd_hit_cmp);
      out->counts[q0 + i] = np;
    }
  }
out:
  if (st != VF_OK) store_results_free(out);
  return st;
}

/* ------------------------------------------------------------ issue 18: payload indexes */

static const char *qd_kind_name(store_payload_kind k) {
  switch (k) {
  case STORE_PK_BOOL: return "booleans";
  case STORE_PK_INTEGER: return "integers";
  case STORE_PK_FLOAT: return "floating-point numbers";
  case STORE_PK_STRING: return "strings";
  case STORE_PK_DATETIME: return "dates / timestamps";
  case STORE_PK_UUID: return "UUIDs";
  case STORE_PK_GEO: return "geo points (lat, lon)";
  default: return "values of no indexable type";
  }
}

/* The payload index type a column of kind k gets by default (NULL: none). */
static const char *qd_kind_index(store_payload_kind k) {
  switch (k) {
  case STORE_PK_BOOL: return "bool";
  case STORE_PK_INTEGER: return "integer";
  case STORE_PK_FLOAT: return "float";
  case STORE_PK_STRING: return "keyword";
  case STORE_PK_DATETIME: return "datetime";
  case STORE_PK_UUID: return "uuid";
  case STORE_PK_GEO: return "geo";
  default: return NULL;
  }
}

/* Whether index type t fits a column of kind k (unknown kinds cannot be checked). */
static bool qd_kind_holds(store_payload_kind k, const char *t) {
  switch (k) {
  case STORE_PK_BOOL: return strcmp(t, "bool") == 0;
  case STORE_PK_INTEGER: return strcmp(t, "integer") == 0 || strcmp(t, "float") == 0;
  case STORE_PK_FLOAT: return strcmp(t, "float") == 0;
  case STORE_PK_STRING:
    return strcmp(t, "keyword") == 0 || strcmp(t, "text") == 0 || strcmp(t, "uuid") == 0 ||
           strcmp(t, "datetime") == 0;
  case STORE_PK_DATETIME: return strcmp(t, "datetime") == 0;
  case STORE_PK_UUID: return strcmp(t, "uuid") == 0 || strcmp(t, "keyword") == 0;
  case STORE_PK_GEO: return strcmp(t, "geo") == 0;
  default: return true;
  }
}

static const store_payload_field *qd_pfield(const qd_store *q, const char *key) {
  for (int i = 0; i < q->npfields; i++)
    if (strcmp(q->pfields[i].key, key) == 0) return &q->pfields[i];
  return NULL;
}

/* One field: its type (field_types, else inferred), checked, then PUT /index. */
static vf_status qd_payload_index(qd_store *q, const char *field, const vf_json_val *types,
                                  bool all, vf_error *err) {
  const store_payload_field *pf = qd_pfield(q, field);
  const vf_json_val *given = vf_json_get(types, field);
  const char *t = given && given->t == VF_JSON_STR ? given->str : pf ? qd_kind_index(pf->kind) : NULL;
  if (!t) {
    if (all) {
      vf_log(VF_LOG_INFO, "qdrant: collection '%s': no payload index on '%s': column '%s' (%s) "
             "holds %s (name a type in vectorstore.params.payload_indexes.field_types)",
             q->base.collection, field, pf ? pf->column : "?", pf ? pf->column_type : "?",
             qd_kind_name(pf ? pf->kind : STORE_PK_UNKNOWN));
      return VF_OK;
    }
    return vf_error_set(err, VF_ECONFIG,
                        "vectorstore.params.payload_indexes: field '%s': %s; name its type in "
                        "field_types (keyword, integer, float, bool, geo, text, datetime, uuid)",
                        field, pf ? "its column's type gives no payload index type"
                                  : "it is not a payload field of the datasource, so its type "
                                    "cannot be inferred");
  }
  if (given && pf && !qd_kind_holds(pf->kind, t))
    return vf_error_set(err, VF_ECONFIG,
                        "vectorstore.params.payload_indexes.field_types.%s: %s, but column '%s' "
                        "(%s) holds %s (types that fit: %s)",
                        field, t, pf->column, pf->column_type, qd_kind_name(pf->kind),
                        pf->kind == STORE_PK_INTEGER  ? "integer, float"
                        : pf->kind == STORE_PK_STRING ? "keyword, text, uuid, datetime"
                        : pf->kind == STORE_PK_UUID   ? "uuid, keyword"
                                                      : qd_kind_index(pf->kind));
  vf_buf_reset(&q->body);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_append(&q->body, "{\"field_name\":", 14, err));
  VF_TRY(vf_json_string(&q->body, field, strlen(field), err));
  VF_TRY(vf_buf_append(&q->body, ",\"field_schema\":", 16, err));
  VF_TRY(vf_json_string(&q->body, t, strlen(t), err));
  VF_TRY(vf_buf_append(&q->body, "}", 1, err));
  VF_TRY(qd_call(q, "PUT", "/index?wait=true", &q->body, false, NULL, err));
  vf_log(VF_LOG_INFO, "qdrant: collection '%s': payload index on '%s' (%s)", q->base.collection,
         field, t);
out:
  return st;
}

/* params.payload_indexes: {mode: all|none|specific, fields: [...], field_types: {f: type}} */
static vf_status qd_payload_indexes(qd_store *q, vf_error *err) {
  const vf_json_val *pi = vf_json_get(&q->params, "payload_indexes");
  const vf_json_val *mode = vf_json_get(pi, "mode");
  const char *m = mode && mode->t == VF_JSON_STR ? mode->str : "none";
  if (!pi || strcmp(m, "none") == 0) return VF_OK;
  const vf_json_val *fields = vf_json_get(pi, "fields"), *types = vf_json_get(pi, "field_types");
  vf_status st = VF_OK;
  if (strcmp(m, "all") == 0) {
    for (size_t i = 0; types && i < types->n; i++)
      if (!qd_pfield(q, types->keys[i]))
        return vf_error_set(err, VF_ECONFIG, "vectorstore.params.payload_indexes.field_types.%s: "
                            "not a payload field of the datasource (mode: all indexes those)",
                            types->keys[i]);
    for (int i = 0; i < q->npfields; i++)
      VF_TRY(qd_payload_index(q, q->pfields[i].key, types, true, err));
    goto out;
  }
  for (size_t i = 0; types && i < types->n; i++) {
    bool listed = false;
    for (size_t j = 0; fields && j < fields->n; j++)
      if (fields->items[j].t == VF_JSON_STR && strcmp(fields->items[j].str, types->keys[i]) == 0)
        listed = true;
    if (!listed)
      return vf_error_set(err, VF_ECONFIG, "vectorstore.params.payload_indexes.field_types.%s: "
                          "'%s' is not in payload_indexes.fields", types->keys[i], types->keys[i]);
  }
  for (size_t j = 0; fields && j < fields->n; j++)
    if (fields->items[j].t == VF_JSON_STR)
      VF_TRY(qd_payload_index(q, fields->items[j].str, types, false, err));
out:
  return st;
}

/* ------------------------------------------------------------ issue 18: defer hnsw m */

/* The vectors with their own hnsw m (config or collection), as "name":m pairs into `b`. */
static vf_status qd_vector_ms(qd_store *q, const vf_json_val *from, const char *path,
                              const char *leaf, vf_buf *b, bool zero, vf_error *err) {
  vf_status st = VF_OK;
  bool first = true;
  for (int i = 0; i < q->base.nvectors; i++) {
    const store_vector_spec *v = &q->base.vectors[i];
    if (v->kind == CORPUS_VEC_SPARSE) continue;
    char p[400];
    snprintf(p, sizeof p, "%s.%s%s", path, v->name, leaf);
    int64_t m;
    if (!qd_uint(vf_json_path(from, p), &m) || (!zero && m == 0)) continue;
    if (!first) VF_TRY(vf_buf_append(b, ",", 1, err));
    first = false;
    VF_TRY(qd_put_name(b, v->name, err));
    VF_TRY(zero ? vf_buf_append(b, "{\"hnsw_config\":{\"m\":0}}", 23, err)
                : vf_buf_printf(b, err, "%lld", (long long)m));
  }
out:
  return st;
}

static vf_status qd_defer_hnsw(qd_store *q, vf_error *err) {
  vf_status st = qd_call(q, "GET", "", NULL, false, NULL, err);
  if (st != VF_OK) return st;
  int64_t cur = -1, meta = -1;
  if (!qd_uint(vf_json_path(&q->doc, "result.config.hnsw_config.m"), &cur)) cur = -1;
  if (!qd_uint(vf_json_path(&q->doc, "result.config.metadata." QD_HNSW_KEY), &meta)) meta = -1;
  int64_t keep = cur > 0 ? cur : meta > 0 ? meta : QD_DEFAULT_HNSW_M;
  if (cur == 0 && meta <= 0)
    vf_log(VF_LOG_WARN, "qdrant: collection '%s' already has hnsw m 0 and no remembered value; "
           "finalize will restore %lld unless params.hnsw.m is set", q->base.collection,
           (long long)keep);
  vf_buf vm, vz;
  vf_buf_init(&vm, 1u << 20);
  vf_buf_init(&vz, 1u << 20);
  vf_buf_reset(&q->body); /* q->body and saved_threshold change whether or not the PATCH is sent */
  q->saved_threshold = -1;
  /* vectors with their own m: remember it (an earlier prepare's value when it is 0 now) */
  VF_TRY(qd_vector_ms(q, &q->doc, "result.config.params.vectors", ".hnsw_config.m", &vm, false,
                      err));
  if (vm.len == 0)
    VF_TRY(qd_vector_ms(q, &q->doc, "result.config.metadata." QD_VEC_HNSW_KEY, "", &vm, false,
                        err));
  VF_TRY(qd_vector_ms(q, &q->doc, "result.config.params.vectors", ".hnsw_config.m", &vz, true,
                      err));
  VF_TRY(vf_buf_printf(&q->body, err, "{\"hnsw_config\":{\"m\":0}%s%.*s%s,\"metadata\":{\""
                       QD_DEFER_KEY "\":\"hnsw_m\",\"" QD_HNSW_KEY "\":%lld,\"" QD_VEC_HNSW_KEY
                       "\":{%.*s}}}",
                       vz.len ? ",\"vectors\":{" : "", (int)vz.len, (const char *)vz.data,
                       vz.len ? "}" : "", (long long)keep, (int)vm.len, (const char *)vm.data));
  VF_TRY(qd_call(q, "PATCH", "", &q->body, false, NULL, err));
  vf_log(VF_LOG_INFO, "qdrant: collection '%s': hnsw m 0 for the load (was %lld)",
         q->base.collection, (long long)keep);
out:
  vf_buf_free(&vm);
  vf_buf_free(&vz);
  return st;
}

static vf_status qd_enable_hnsw(qd_store *q, vf_error *err) {
  /* q->doc holds the collection info read by qd_enable */
  int64_t m = -1;
  if (!qd_uint(vf_json_path(&q->params, "hnsw.m"), &m) || m == 0)
    if (!qd_uint(vf_json_path(&q->doc, "result.config.metadata." QD_HNSW_KEY), &m) || m <= 0)
      m = QD_DEFAULT_HNSW_M;
  vf_buf b;
  vf_buf_init(&b, 1u << 20);
  vf_status st = VF_OK;
  bool first = true;
  VF_TRY(vf_buf_printf(&b, err, "{\"hnsw_config\":{\"m\":%lld}", (long long)m));
  for (int i = 0; i < q->base.nvectors; i++) {
    const store_vector_spec *v = &q->base.vectors[i];
    if (v->kind == CORPUS_VEC_SPARSE) continue;
    char p[400];
    snprintf(p, sizeof p, "result.config.metadata." QD_VEC_HNSW_KEY ".%s", v->name);
    int64_t vm;
    if (!qd_uint(vf_json_path(&q->doc, p), &vm) || vm <= 0) continue;
    VF_TRY(vf_buf_printf(&b, err, "%s", first ? ",\"vectors\":{" : ","));
    first = false;
    VF_TRY(qd_put_name(&b, v->name, err));
    VF_TRY(vf_buf_printf(&b, err, "{\"hnsw_config\":{\"m\":%lld}}", (long long)vm));
  }
  if (!first) VF_TRY(vf_buf_append(&b, "}", 1, err));
  VF_TRY(vf_buf_append(&b, "}", 1, err));
  VF_TRY(vf_buf_append(&b, "", 1, err));
  vf_log(VF_LOG_INFO, "qdrant: collection '%s': hnsw m restored to %lld", q->base.collection,
         (long long)m);
  VF_TRY(qd_patch(q, (const char *)b.data, err));
out:
  vf_buf_free(&b);
  return st;
}

/* ------------------------------------------------------------ issue 18: reindex, drop */

/* store_qdrant_reindex(): see store.h. */
vf_status store_qdrant_reindex(store *s, double timeout_s, vf_error *err) {
  if (!s || strcmp(s->vt->type, "qdrant") != 0)
    return vf_error_set(err, VF_EUSAGE, "load reindex applies to vectorstore type qdrant");
  qd_store *q = (qd_store *)s;
  long status = 0;
  vf_status st = qd_call(q, "GET", "", NULL, true, &status, err);
  if (st != VF_OK) return st;
  if (status == 404)
    return vf_error_set(err, VF_ENOTFOUND, "qdrant collection '%s' does not exist (load it "
                        "first)", s->collection);
  vf_buf b;
  vf_buf_init(&b, 64u << 20);
  vf_json_val p = {0}; /* one vector's params, freed each round and at out: */
  bool any = false;
  VF_TRY(vf_buf_append(&b, "{", 1, err));
  static const char *const pass[][2] = {{"hnsw", "hnsw_config"},
                                        {"optimizers", "optimizers_config"},
                                        {"quantization", "quantization_config"}};
  for (size_t i = 0; i < 3; i++) {
    const vf_json_val *v = vf_json_get(&q->params, pass[i][0]);
    if (!v || v->t == VF_JSON_NULL) continue;
    VF_TRY(vf_buf_printf(&b, err, "%s\"%s\":%.*s", any ? "," : "", pass[i][1], (int)v->raw_len,
                         v->raw));
    any = true;
  }
  bool vfirst = true;
  for (int i = 0; i < s->nvectors; i++) {
    const store_vector_spec *v = &s->vectors[i];
    const char *pj = q->vparams[i];
    if (v->kind == CORPUS_VEC_SPARSE || !pj) continue;
    VF_TRY(vf_json_parse(pj, strlen(pj), "vector params", &p, err));
    const vf_json_val *h = vf_json_get(&p, "hnsw"), *qz = vf_json_get(&p, "quantization");
    if (h || qz) {
      VF_TRY(vf_buf_printf(&b, err, "%s",
                           vfirst ? (any ? ",\"vectors\":{" : "\"vectors\":{") : ","));
      vfirst = false;
      any = true;
      VF_TRY(qd_put_name(&b, v->name, err));
      VF_TRY(vf_buf_printf(&b, err, "{%s%.*s%s%s%.*s}", h ? "\"hnsw_config\":" : "",
                           h ? (int)h->raw_len : 0, h ? h->raw : "", h && qz ? "," : "",
                           qz ? "\"quantization_config\":" : "", qz ? (int)qz->raw_len : 0,
                           qz ? qz->raw : ""));
    }
    vf_json_free(&p);
  }
  if (!vfirst) VF_TRY(vf_buf_append(&b, "}", 1, err));
  VF_TRY(vf_buf_append(&b, "}", 1, err));
  if (!any)
    VF_FAIL(vf_error_set(err, VF_ECONFIG,
                         "load reindex: the config sets no hnsw, quantization or optimizers "
                         "(vectorstore.params.* or vectors.<name>.hnsw / quantization)"));
  vf_buf_reset(&q->body);
  VF_TRY(vf_buf_append(&q->body, b.data, b.len, err));
  VF_TRY(qd_call(q, "PATCH", "", &q->body, false, NULL, err));
out:
  vf_json_free(&p);
  vf_buf_free(&b);
  if (st != VF_OK) return st;
  vf_log(VF_LOG_INFO, "qdrant: collection '%s': index settings updated; waiting for green",
         s->collection);
  return qd_wait(s, timeout_s, err);
}

/* store_qdrant_describe(): the collection's existence, points and status (load delete). */
vf_status store_qdrant_describe(store *s, store_collection_info *out, vf_error *err) {
  qd_store *q = (qd_store *)s;
  memset(out, 0, sizeof *out);
  long status = 0;
  vf_status st = qd_call(q, "GET", "", NULL, true, &status, err);
  if (st != VF_OK) return st;
  snprintf(out->where, sizeof out->where, "%s%s", q->grpc ? "gRPC " : "",
           q->grpc ? qdg_endpoint(q->grpc) : io_http_base_url(q->http));
  if (status == 404) return VF_OK;
  out->exists = true;
  int64_t n;
  if (qd_uint(vf_json_path(&q->doc, "result.points_count"), &n)) out->points = (uint64_t)n;
  const vf_json_val *stv = vf_json_path(&q->doc, "result.status");
  snprintf(out->status, sizeof out->status, "%s", stv && stv->t == VF_JSON_STR ? stv->str : "?");
  return VF_OK;
}

/* store_qdrant_drop(): DELETE the collection. */
vf_status store_qdrant_drop(store *s, vf_error *err) {
  qd_store *q = (qd_store *)s;
  vf_status st = qd_call(q, "DELETE", "", NULL, true, NULL, err);
  if (st != VF_OK) return st;
  vf_log(VF_LOG_INFO, "qdrant: dropped collection '%s'", s->collection);
  return st;
}

/* store_qdrant_transport(): see store.h. */
const char *store_qdrant_transport(const store *s, char *out, size_t cap) {
  if (!s || strcmp(s->vt->type, "qdrant") != 0) return NULL;
  const qd_store *q = (const qd_store *)s;
  snprintf(out, cap, "%s %s", q->grpc ? "grpc" : "rest",
           q->grpc ? qdg_endpoint(q->grpc) : io_http_base_url(q->http));
  return out;
}

static vf_status qd_search(store *s, const char *vector, const float *queries, size_t nq,
                           int32_t dim, size_t k, store_results *out, vf_error *err) {
  return qd_search_impl(s, vector, queries, nq, dim, k, NULL, out, err);
}

static void qd_close(store *s) {
  qd_store *q = (qd_store *)s;
  io_http_close(q->http);
  qdg_close(q->grpc);
  for (int i = 0; i < q->npfields; i++) {
    free((char *)q->pfields[i].key);
    free((char *)q->pfields[i].column);
  }
  free(q->pfields);
  for (int i = 0; q->vparams && i < q->base.nvectors; i++)
    free(q->vparams[i]);
  free(q->vparams);
  vf_buf_free(&q->body);
  io_http_resp_free(&q->resp); /* body and header strings (ETag, Link) */
  vf_json_free(&q->doc);
  vf_json_free(&q->params);
  free(q->params_txt);
  free(q->cpath);
  free(q->map);
  store_head_free(s);
  free(q);
}

/* ------------------------------------------------- the corpus record (store.h) */

#define QD_RECORD_KEY "vforge_corpus" /* collection metadata: the corpus record */
#define QD_LOAD_KEY "vforge_load"     /* "in progress" from prepare until finalize, "finalized" */
#define QD_LOOKUP_BATCH 1000          /* ids per retrieve request */

static vf_status qd_set_record(store *s, const store_record *r, vf_error *err) {
  qd_store *q = (qd_store *)s;
  vf_buf b;
  vf_buf_init(&b, 1 << 20);
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(&b, "{\"metadata\":{\"" QD_RECORD_KEY "\":", err));
  VF_TRY(store_record_json(&b, r, err));
  VF_TRY(vf_buf_printf(&b, err, ",\"" QD_LOAD_KEY "\":\"%s\"}}",
                       r->load_finished ? "finalized" : "in progress"));
  VF_TRY(vf_buf_append(&b, "", 1, err));
  VF_TRY(qd_patch(q, (const char *)b.data, err));
out:
  vf_buf_free(&b);
  return st;
}

static vf_status qd_get_record(store *s, store_record *out, bool *found, vf_error *err) {
  qd_store *q = (qd_store *)s;
  long status = 0;
  vf_status st = qd_call(q, "GET", "", NULL, true, &status, err);
  if (st != VF_OK) return st;
  if (status == 404)
    return vf_error_set(err, VF_ENOTFOUND, "qdrant collection '%s' does not exist", s->collection);
  const vf_json_val *r = vf_json_path(&q->doc, "result.config.metadata." QD_RECORD_KEY);
  const vf_json_val *l = vf_json_path(&q->doc, "result.config.metadata." QD_LOAD_KEY);
  *found = r && store_record_from_json(r, out);
  out->load_finished = !(l && l->t == VF_JSON_STR && strcmp(l->str, "finalized") != 0);
  return VF_OK;
}

static const corpus_id *g_qd_sort_ids; /* qsort has no user pointer in C17 (single-threaded use) */
static int qd_idx_cmp(const void *a, const void *b) {
  return store_id_cmp(&g_qd_sort_ids[*(const size_t *)a], &g_qd_sort_ids[*(const size_t *)b]);
}

static vf_status qd_contains(store *s, const corpus_id *ids, size_t n, bool *found, vf_error *err) {
  qd_store *q = (qd_store *)s;
  vf_status st = VF_OK;
  size_t *ord = vf_mallocarray(QD_LOOKUP_BATCH, sizeof *ord);
  if (!ord) return qd_nomem(err);
  for (size_t b0 = 0; b0 < n; b0 += QD_LOOKUP_BATCH) {
    size_t m = n - b0 < QD_LOOKUP_BATCH ? n - b0 : QD_LOOKUP_BATCH;
    vf_buf_reset(&q->body);
    VF_TRY(vf_json_raw(&q->body, "{\"ids\":[", err));
    for (size_t i = 0; i < m; i++) {
      char t[37];
      store_id_format(&ids[b0 + i], t);
      VF_TRY(ids[b0 + i].is_uuid ? vf_buf_printf(&q->body, err, "%s\"%s\"", i ? "," : "", t)
                                 : vf_buf_printf(&q->body, err, "%s%s", i ? "," : "", t));
    }
    VF_TRY(vf_json_raw(&q->body, "],\"with_payload\":false,\"with_vector\":false}", err));
    VF_TRY(qd_call(q, "POST", "/points", &q->body, false, NULL, err));
    const vf_json_val *res = vf_json_get(&q->doc, "result");
    if (!res || res->t != VF_JSON_ARR)
      VF_FAIL(vf_error_set(err, VF_ENET, "qdrant collection '%s': the retrieve response has no "
                           "result list", s->collection));
    for (size_t i = 0; i < m; i++) ord[i] = b0 + i;
    g_qd_sort_ids = ids;
    qsort(ord, m, sizeof *ord, qd_idx_cmp);
    g_qd_sort_ids = NULL;
    for (size_t j = 0; j < res->n; j++) {
      const vf_json_val *id = vf_json_get(&res->items[j], "id");
      corpus_id got;
      bool ok = id && (id->t == VF_JSON_STR   ? store_id_parse(id->str, strlen(id->str), &got)
                       : id->t == VF_JSON_NUM ? store_id_parse(id->raw, id->raw_len, &got)
                                         : false);
      if (!ok) continue;
      size_t lo = 0, hi = m;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (store_id_cmp(&ids[ord[mid]], &got) < 0) lo = mid + 1;
        else hi = mid;
      }
      for (; lo < m && store_id_cmp(&ids[ord[lo]], &got) == 0; lo++) found[ord[lo]] = true;
    }
  }
out:
  free(ord);
  return st;
}

static const store_vtable qdrant_vt = {"qdrant",       qd_ensure,     qd_defer,      qd_enable,
                                       qd_wait,        qd_upsert,     qd_flush,      qd_count,
                                       qd_search,      qd_close,      qd_search_impl, qd_set_record,
                                       qd_get_record,  qd_contains};

/* store_qdrant_set_search(): see store.h. */
vf_status store_qdrant_set_search(store *s, const store_qdrant_search_opts *o, vf_error *err) {
  if (!s || s->vt != &qdrant_vt)
    return vf_error_set(err, VF_EUSAGE, "search options: the store is not a qdrant store");
  if (o->hnsw_ef < 0 || (o->oversampling != 0 && !(o->oversampling >= 1)) || o->rescore < -1 ||
      o->rescore > 1)
    return vf_error_set(err, VF_EUSAGE,
                        "search options: hnsw_ef must be >= 0 and oversampling >= 1");
  ((qd_store *)s)->sopts = *o;
  return VF_OK;
}

/* store_qdrant_open(): see store.h. */
vf_status store_qdrant_open(const store_config *cfg, store **out, vf_error *err) {
  *out = NULL;
  if (!cfg->url || !*cfg->url)
    return vf_error_set(err, VF_ECONFIG, "vectorstore.url is required for type qdrant");
  qd_store *q = vf_calloc(1, sizeof *q);
  if (!q) return qd_nomem(err);
  q->saved_threshold = -1;
  q->sopts.rescore = -1;
  q->recreate = cfg->recreate;
  q->wait = cfg->upsert_wait;
  VF_BUF_INIT(&q->body, VF_BUF_MAX_HTTP_BODY);
  VF_BUF_INIT(&q->resp.body, VF_BUF_MAX_HTTP_BODY);
  vf_status st = VF_OK;
  VF_TRY(store_head_init(&q->base, &qdrant_vt, cfg, err));
  const char *pj = cfg->params_json && *cfg->params_json ? cfg->params_json : "{}";
  q->params_txt = vf_strdup(pj);
  if (!q->params_txt) VF_FAIL(qd_nomem(err));
  st = vf_json_parse(q->params_txt, strlen(q->params_txt), "vectorstore.params", &q->params, err);
  if (st == VF_ECORRUPT) err->code = st = VF_ECONFIG;
  VF_TRY(st);
  if (q->params.t != VF_JSON_OBJ)
    VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params must be a mapping"));
  /* params.recreate is not read here: cfg->recreate carries it, and the runner clears it
   * for worker handles (they must never drop the collection) */
  { /* issue 18: params.defer */
    const vf_json_val *d = vf_json_get(&q->params, "defer");
    const char *dm = d && d->t == VF_JSON_STR ? d->str : "indexing_threshold";
    if (strcmp(dm, "indexing_threshold") == 0) q->defer = QD_DEFER_THRESHOLD;
    else if (strcmp(dm, "hnsw_m") == 0) q->defer = QD_DEFER_HNSW_M;
    else if (strcmp(dm, "none") == 0) q->defer = QD_DEFER_NONE;
    else
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params.defer: '%.40s' (expected "
                           "indexing_threshold, hnsw_m or none)", dm));
  }
  q->vparams = vf_calloc((size_t)q->base.nvectors + 1, sizeof *q->vparams);
  if (!q->vparams) VF_FAIL(qd_nomem(err));
  for (int i = 0; cfg->vector_params_json && i < q->base.nvectors; i++)
    if (cfg->vector_params_json[i] && !(q->vparams[i] = vf_strdup(cfg->vector_params_json[i])))
      VF_FAIL(qd_nomem(err));
  if (cfg->npayload_fields > 0) {
    q->pfields = vf_calloc((size_t)cfg->npayload_fields, sizeof *q->pfields);
    if (!q->pfields) VF_FAIL(qd_nomem(err));
    for (int i = 0; i < cfg->npayload_fields; i++) {
      q->pfields[i] = cfg->payload_fields[i];
      q->pfields[i].key = vf_strdup(cfg->payload_fields[i].key);
      q->pfields[i].column = vf_strdup(cfg->payload_fields[i].column ? cfg->payload_fields[i].column : "");
      q->npfields = i + 1;
      if (!q->pfields[i].key || !q->pfields[i].column) VF_FAIL(qd_nomem(err));
    }
  }
  {
    /* "/collections/" + percent-encoded name (RFC 3986 unreserved characters kept) */
    const char *n = q->base.collection;
    size_t len = strlen(n);
    q->cpath = vf_malloc(14 + 3 * len + 1);
    q->map = vf_calloc((size_t)q->base.nvectors + 1, sizeof *q->map);
    if (!q->cpath || !q->map || len > 255) {
      VF_FAIL(len > 255 ? vf_error_set(err, VF_ECONFIG, "vectorstore.collection_name is longer "
                                       "than 255 bytes")
                        : qd_nomem(err));
    } else {
      static const char hx[] = "0123456789ABCDEF";
      char *p = q->cpath;
      memcpy(p, "/collections/", 13);
      p += 13;
      for (const unsigned char *c = (const unsigned char *)n; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '-' || *c == '_' || *c == '.' || *c == '~') {
          *p++ = (char)*c;
        } else {
          *p++ = '%';
          *p++ = hx[*c >> 4];
          *p++ = hx[*c & 15];
        }
      }
      *p = 0;
    }
  }
  {
    io_http_opts ho = {0};
    ho.api_key = cfg->api_key;
    ho.max_retries = cfg->retries_given ? cfg->retries : -1;
    st = io_http_open(cfg->url, &ho, &q->http, err);
    if (st == VF_EUSAGE) err->code = st = VF_ECONFIG;
    if (st != VF_OK) vf_error_prefix(err, "vectorstore.url: ");
    VF_TRY(st);
    if (cfg->prefer_grpc) /* issue 18: the same client options over HTTP/2 */
      VF_TRY(qdg_open(cfg->url, cfg->grpc_port > 0 ? cfg->grpc_port : QD_GRPC_DEFAULT_PORT, &ho,
                      cfg->grpc_max_message_bytes > 0 ? (size_t)cfg->grpc_max_message_bytes
                                                      : QD_GRPC_DEFAULT_MAX,
                      q->base.collection, &q->grpc, err));
  }
out:
  if (st != VF_OK) {
    qd_close(&q->base);
    return st;
  }
  *out = &q->base;
  return VF_OK;
}
