/*
 * qdrant_grpc.c — the gRPC transport of the `qdrant` store (issue 18): Qdrant's gRPC API
 * (../shared/qdrant/proto, the Collections and Points services) over HTTP/2 through the shared
 * libcurl client (h2c prior knowledge for http://, ALPN h2 for https://), with the protobuf
 * codec of qdrant_pb.c.
 *
 * Framing (gRPC over HTTP/2, "Length-Prefixed-Message"): one request message per call, a 1-byte
 * compressed flag (always 0: no compression) and a 4-byte big-endian length before the message;
 * the answer is one such message and the status arrives in the trailers (grpc-status,
 * grpc-message).  Retries (UNAVAILABLE, RESOURCE_EXHAUSTED with its retry-after hint,
 * DEADLINE_EXCEEDED, cut streams, connection errors) are the HTTP client's bounded, logged
 * backoff — the one REST uses.
 *
 * Two kinds of calls:
 *   - the collection lifecycle (qdrant.c) speaks REST shapes; qdg_rest_call() maps each of its
 *     calls to the equivalent RPC (GET collection -> Collections/Get, PUT -> Create, PATCH ->
 *     Update, DELETE -> Delete, /exists -> CollectionExists, POST /points/count -> Points/Count,
 *     PUT /index -> Points/CreateFieldIndex), encodes the REST JSON body as the request message
 *     and renders the answer back as REST JSON, so that logic exists once.  gRPC statuses map to
 *     the HTTP statuses that logic checks (NOT_FOUND -> 404, ALREADY_EXISTS -> 409, ...).
 *   - the hot paths write their messages directly: Points/Upsert (PointStruct with vectors as
 *     packed floats, payload JSON streamed into Value maps) and Points/QueryBatch (search).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "store/qdrant_internal.h"
#include "store/qdrant_pb.h"
#include "store/qdrant_pb_schema.h"
#include "vforge/io.h"

#define QDG_FRAME 5
#define QDG_HEADROOM ((size_t)64 << 10) /* message bytes kept free under the server's limit */

/* Field numbers of the hot-path messages (points.proto, qdrant_common.proto); checked against
 * the generated tables by tests/store/test_qdrant_grpc.c. */
enum {
  F_UPSERT_COLLECTION = 1, F_UPSERT_WAIT = 2, F_UPSERT_POINTS = 3,
  F_POINT_ID = 1, F_POINT_PAYLOAD = 3, F_POINT_VECTORS = 4,
  F_ID_NUM = 1, F_ID_UUID = 2,
  F_VECTORS_NAMED = 2, F_NAMED_MAP = 1, F_ENTRY_KEY = 1, F_ENTRY_VALUE = 2,
  F_VECTOR_DENSE = 101, F_VECTOR_SPARSE = 102, F_VECTOR_MULTI = 103,
  F_DENSE_DATA = 1, F_SPARSE_VALUES = 1, F_SPARSE_INDICES = 2, F_MULTI_VECTORS = 1,
  F_QB_COLLECTION = 1, F_QB_QUERIES = 2,
  F_QP_COLLECTION = 1, F_QP_QUERY = 3, F_QP_USING = 4, F_QP_FILTER = 5, F_QP_PARAMS = 6,
  F_QP_LIMIT = 8, F_QP_WITH_PAYLOAD = 11,
  F_QUERY_NEAREST = 1, F_VI_DENSE = 2,
  F_SP_HNSW_EF = 1, F_SP_EXACT = 2, F_SP_QUANT = 3, F_QSP_RESCORE = 2, F_QSP_OVERSAMPLING = 3,
  F_WPS_ENABLE = 1,
  F_QBR_RESULT = 1, F_BR_RESULT = 1, F_SCORED_ID = 1, F_SCORED_SCORE = 3
};

struct qdg {
  io_http *http;
  char *url;        /* the gRPC endpoint, for messages */
  char *collection; /* borrowed name copy */
  size_t max_msg;   /* the server's message limit */
  vf_buf msg;       /* the request being built (frame prefix included) */
  vf_buf scratch;   /* one point's payload entries */
  io_http_resp resp;
};

/* ------------------------------------------------------------ connection */

/* qdg_url_for(): see qdrant_internal.h.  scheme://host[:port][/...] -> scheme://host:grpc_port */
vf_status qdg_url_for(const char *rest_url, int grpc_port, char *out, size_t cap, vf_error *err) {
  const char *p = strstr(rest_url, "://");
  if (!p || grpc_port < 1 || grpc_port > 65535)
    return vf_error_set(err, VF_ECONFIG, "vectorstore: cannot derive the gRPC address from the "
                        "url (port %d)", grpc_port);
  const char *host = p + 3;
  const char *auth_end = host + strcspn(host, "/?#");
  for (const char *q = host; q < auth_end; q++)
    if (*q == '@') host = q + 1; /* userinfo is not forwarded (the api key travels as metadata) */
  const char *e = host;
  if (*e == '[') { /* [v6]:port */
    while (*e && *e != ']')
      e++;
    if (*e == ']') e++;
  } else {
    while (*e && *e != ':' && *e != '/' && *e != '?' && *e != '#')
      e++;
  }
  if (e == host)
    return vf_error_set(err, VF_ECONFIG, "vectorstore.url: no host to derive the gRPC address");
  int n = snprintf(out, cap, "%.*s%.*s:%d", (int)(p + 3 - rest_url), rest_url, (int)(e - host),
                   host, grpc_port);
  if (n < 0 || (size_t)n >= cap)
    return vf_error_set(err, VF_ECONFIG, "vectorstore.url is too long");
  return VF_OK;
}

/* qdg_open(): see qdrant_internal.h. */
vf_status qdg_open(const char *rest_url, int grpc_port, const io_http_opts *ho, size_t max_msg,
                   const char *collection, qdg **out, vf_error *err) {
  *out = NULL;
  char url[2048];
  vf_status st = qdg_url_for(rest_url, grpc_port, url, sizeof url, err);
  if (st != VF_OK) return st;
  qdg *g = vf_calloc(1, sizeof *g);
  if (!g) return vf_error_set(err, VF_ENOMEM, "qdrant: out of memory");
  g->max_msg = max_msg > QDG_HEADROOM * 2 ? max_msg : QDG_HEADROOM * 2;
  vf_buf_init(&g->msg, g->max_msg + ((size_t)1 << 20));
  vf_buf_init(&g->scratch, (size_t)64 << 20);
  VF_BUF_INIT(&g->resp.body, VF_BUF_MAX_HTTP_BODY);
  g->url = vf_strdup(url);
  g->collection = vf_strdup(collection);
  if (!g->url || !g->collection) {
    qdg_close(g);
    return vf_error_set(err, VF_ENOMEM, "qdrant: out of memory");
  }
  io_http_opts o = *ho;
  o.http2 = true;
  st = io_http_open(url, &o, &g->http, err);
  if (st != VF_OK) {
    if (st == VF_EUSAGE) err->code = st = VF_ECONFIG;
    qdg_close(g);
    return vf_error_prefix(err, "vectorstore (gRPC %s): ", url);
  }
  *out = g;
  return VF_OK;
}

void qdg_close(qdg *g) {
  if (!g) return;
  io_http_close(g->http);
  io_http_resp_free(&g->resp);
  vf_buf_free(&g->msg);
  vf_buf_free(&g->scratch);
  free(g->url);
  free(g->collection);
  free(g);
}

const char *qdg_endpoint(const qdg *g) { return g->url; }

uint64_t qdg_retries(const qdg *g) {
  if (!g) return 0;
  io_http_stats hs;
  io_http_get_stats(g->http, &hs);
  return hs.retries;
}

/* Start a request message: the frame prefix placeholder and collection_name (field 1). */
static vf_status qdg_start(qdg *g, vf_error *err) {
  vf_buf_reset(&g->msg);
  vf_status st = vf_buf_reserve(&g->msg, QDG_FRAME, err);
  if (st != VF_OK) return st;
  memset(g->msg.data, 0, QDG_FRAME);
  g->msg.len = QDG_FRAME;
  return qpb_add_bytes(&g->msg, 1, g->collection, strlen(g->collection), err);
}

/* The gRPC status as the HTTP status the REST logic checks. */
static long qdg_http_status(int gs) {
  switch (gs) {
  case 0: return 200;
  case 3: return 400;  /* INVALID_ARGUMENT */
  case 5: return 404;  /* NOT_FOUND */
  case 6: return 409;  /* ALREADY_EXISTS */
  case 7: return 403;  /* PERMISSION_DENIED */
  case 8: return 429;  /* RESOURCE_EXHAUSTED */
  case 12: return 501; /* UNIMPLEMENTED */
  case 16: return 401; /* UNAUTHENTICATED */
  case 4: return 504;  /* DEADLINE_EXCEEDED */
  case 14: return 503; /* UNAVAILABLE */
  default: return 500;
  }
}

/* Send g->msg to RPC `rpc`; on success *resp_p, *resp_n are the answer message (in g->resp).
 * *gstatus: the gRPC status (-1 when the call failed before one arrived). */
static vf_status qdg_send(qdg *g, int rpc, const uint8_t **resp_p, size_t *resp_n, int *gstatus,
                          vf_error *err) {
  const qpb_rpc *r = &QPB_RPCS[rpc];
  size_t mlen = g->msg.len - QDG_FRAME;
  *gstatus = -1;
  if (mlen > g->max_msg)
    return vf_error_set(err, VF_EUSAGE, "qdrant (gRPC %s): a %s message of %zu bytes exceeds the "
                        "server's limit of %zu bytes (vectorstore.grpc_max_message_mb)", g->url,
                        r->path, mlen, g->max_msg);
  g->msg.data[0] = 0; /* not compressed */
  g->msg.data[1] = (uint8_t)(mlen >> 24);
  g->msg.data[2] = (uint8_t)(mlen >> 16);
  g->msg.data[3] = (uint8_t)(mlen >> 8);
  g->msg.data[4] = (uint8_t)mlen;
  io_http_req rq = {0};
  rq.method = "POST";
  rq.path = r->path;
  rq.body = g->msg.data;
  rq.body_len = g->msg.len;
  rq.grpc = true;
  vf_status st = io_http_request(g->http, &rq, &g->resp, err);
  *gstatus = g->resp.grpc_status;
  if (st != VF_OK) return st;
  const uint8_t *b = g->resp.body.data;
  size_t n = g->resp.body.len;
  if (n < QDG_FRAME)
    return vf_error_set(err, VF_ENET, "qdrant (gRPC %s%s): the answer has no message (%zu bytes)",
                        g->url, r->path, n);
  if (b[0] != 0)
    return vf_error_set(err, VF_ENET, "qdrant (gRPC %s%s): the answer is compressed, which was "
                        "not asked for", g->url, r->path);
  size_t len = ((size_t)b[1] << 24) | ((size_t)b[2] << 16) | ((size_t)b[3] << 8) | b[4];
  if (len != n - QDG_FRAME)
    return vf_error_set(err, VF_ENET, "qdrant (gRPC %s%s): the answer frame says %zu bytes but "
                        "%zu arrived", g->url, r->path, len, n - QDG_FRAME);
  *resp_p = b + QDG_FRAME;
  *resp_n = len;
  return VF_OK;
}

/* ------------------------------------------------------------ REST-shaped calls */

/* CreateFieldIndexCollection from the REST body {"field_name": F, "field_schema": "keyword" |
 * {"type": "keyword", ...params}}. */
static vf_status qdg_field_index(qdg *g, const vf_json_val *body, bool wait, vf_error *err) {
  const vf_json_val *name = vf_json_get(body, "field_name"), *schema = vf_json_get(body, "field_schema");
  if (!name || name->t != VF_JSON_STR || !schema)
    return vf_error_set(err, VF_EUSAGE, "qdrant (gRPC): a field index needs field_name and "
                        "field_schema");
  const vf_json_val *type = schema->t == VF_JSON_OBJ ? vf_json_get(schema, "type") : schema;
  if (!type || type->t != VF_JSON_STR)
    return vf_error_set(err, VF_EUSAGE, "qdrant (gRPC): field_schema of '%s' has no type",
                        name->str);
  vf_status st = VF_OK;
  vf_json_val rest = {0}; /* the params object without "type" */
  VF_TRY(qpb_add_varint(&g->msg, 2, wait ? 1 : 0, err));
  VF_TRY(qpb_add_bytes(&g->msg, 3, name->str, strlen(name->str), err));
  /* field_type (4): FieldType by the REST name; field_index_params (5): PayloadIndexParams with
   * the <type>_index_params member holding the remaining keys */
  vf_json_val ft = *type;
  vf_json_val wrap = {0};
  wrap.t = VF_JSON_OBJ;
  char *keys[1] = {"field_type"};
  wrap.keys = keys;
  wrap.items = &ft;
  wrap.n = 1;
  VF_TRY(qpb_encode_json(QPB_M_qdrant_CreateFieldIndexCollection, &wrap, "field_schema", &g->msg,
                         err));
  if (schema->t != VF_JSON_OBJ || schema->n <= 1) goto out;
  char member[64];
  snprintf(member, sizeof member, "%s_index_params", type->str);
  const qpb_field *pf = qpb_field_by_name(QPB_M_qdrant_PayloadIndexParams, member);
  if (!pf)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "qdrant (gRPC): no index parameters for type '%s'",
                         type->str));
  rest.t = VF_JSON_OBJ;
  rest.keys = vf_calloc(schema->n, sizeof *rest.keys);
  rest.items = vf_calloc(schema->n, sizeof *rest.items);
  if (!rest.keys || !rest.items) VF_FAIL(vf_error_set(err, VF_ENOMEM, "qdrant: out of memory"));
  for (size_t i = 0; i < schema->n; i++)
    if (strcmp(schema->keys[i], "type") != 0) {
      rest.keys[rest.n] = schema->keys[i];
      rest.items[rest.n++] = schema->items[i];
    }
  size_t m1, m2;
  VF_TRY(qpb_begin(&g->msg, 5, &m1, err));
  VF_TRY(qpb_begin(&g->msg, pf->number, &m2, err));
  VF_TRY(qpb_encode_json(pf->ref, &rest, "field_schema", &g->msg, err));
  VF_TRY(qpb_end(&g->msg, m2, err));
  VF_TRY(qpb_end(&g->msg, m1, err));
out:
  free(rest.keys);
  free(rest.items);
  return st;
}

/* The request message of a REST-shaped call: the JSON body (if any) encoded as the RPC's request
 * (a field index from its REST body). */
static vf_status qdg_rest_encode(qdg *g, int rpc, const vf_buf *body, bool is_index, bool wait,
                                 vf_error *err) {
  vf_status st = VF_OK;
  vf_json_val doc = {0};
  VF_TRY(qdg_start(g, err));
  if (!body || body->len == 0) goto out;
  VF_TRY(vf_json_parse((const char *)body->data, body->len, "qdrant request", &doc, err));
  if (is_index)
    VF_TRY(qdg_field_index(g, &doc, wait, err));
  else
    VF_TRY(qpb_encode_json(QPB_RPCS[rpc].req, &doc, "", &g->msg, err));
out:
  vf_json_free(&doc);
  return st;
}

/* qdg_rest_call(): see qdrant_internal.h. */
vf_status qdg_rest_call(qdg *g, const char *method, const char *suffix, const vf_buf *body,
                        bool allow_404, long *status, vf_buf *json, vf_error *err) {
  int rpc = -1;
  bool is_index = false, wait = false;
  if (!*suffix) {
    rpc = strcmp(method, "GET") == 0      ? QPB_RPC_Collections_Get
          : strcmp(method, "PUT") == 0    ? QPB_RPC_Collections_Create
          : strcmp(method, "PATCH") == 0  ? QPB_RPC_Collections_Update
          : strcmp(method, "DELETE") == 0 ? QPB_RPC_Collections_Delete
                                          : -1;
  } else if (strcmp(suffix, "/exists") == 0 && strcmp(method, "GET") == 0) {
    rpc = QPB_RPC_Collections_CollectionExists;
  } else if (strcmp(suffix, "/points/count") == 0 && strcmp(method, "POST") == 0) {
    rpc = QPB_RPC_Points_Count;
  } else if (strncmp(suffix, "/index", 6) == 0 && strcmp(method, "PUT") == 0) {
    rpc = QPB_RPC_Points_CreateFieldIndex;
    is_index = true;
    wait = strstr(suffix, "wait=true") != NULL;
  }
  if (rpc < 0)
    return vf_error_set(err, VF_EUNSUPPORTED, "qdrant (gRPC): no RPC for %s %s", method, suffix);
  if (status) *status = 0;
  vf_status st = qdg_rest_encode(g, rpc, body, is_index, wait, err);
  if (st != VF_OK) return vf_error_prefix(err, "(gRPC request) ");
  const uint8_t *rp = NULL;
  size_t rn = 0;
  int gs = -1;
  st = qdg_send(g, rpc, &rp, &rn, &gs, err);
  if (status) *status = gs >= 0 ? qdg_http_status(gs) : 0;
  if (st != VF_OK) {
    if (gs == 5 && allow_404) {
      vf_buf_reset(json);
      return vf_buf_append(json, "{}", 2, err);
    }
    return st;
  }
  vf_buf_reset(json);
  char what[160];
  snprintf(what, sizeof what, "qdrant (gRPC): the answer of %s", QPB_RPCS[rpc].path);
  st = qpb_decode_json(QPB_RPCS[rpc].resp, rp, rn, what, json, err);
  if (st == VF_ECORRUPT) err->code = st = VF_ENET;
  return st;
}

/* ------------------------------------------------------------ points */

static inline size_t lsz(uint32_t field, size_t len) { return qpb_len_size(field, len); }

static inline bool qdg_finite(const float *f, size_t n, size_t *bad) {
  const uint32_t *u = (const uint32_t *)(const void *)f;
  uint32_t acc = 0;
  for (size_t i = 0; i < n; i++) /* any exponent of all ones (NaN / inf): vectorisable */
    acc |= (u[i] & 0x7f800000u) == 0x7f800000u;
  if (VF_LIKELY(!acc)) return true;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(f[i])) {
      *bad = i;
      return false;
    }
  return true;
}

/* The body size of Vector for row r of v (0 when the point has none). */
static size_t qdg_vector_size(const corpus_vec_batch *v, size_t r, size_t *inner) {
  switch (v->kind) {
  case CORPUS_VEC_DENSE: {
    size_t d = lsz(F_DENSE_DATA, (size_t)v->dim * 4);
    *inner = d;
    return lsz(F_VECTOR_DENSE, d);
  }
  case CORPUS_VEC_SPARSE: {
    size_t o0 = (size_t)v->offsets[r], n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
    size_t ib = 0;
    for (size_t i = 0; i < n; i++)
      ib += qpb_varint_size(v->indices[o0 + i]);
    size_t s = (n ? lsz(F_SPARSE_VALUES, n * 4) + lsz(F_SPARSE_INDICES, ib) : 0);
    *inner = s;
    return lsz(F_VECTOR_SPARSE, s);
  }
  case CORPUS_VEC_MULTI: {
    size_t n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
    size_t one = lsz(F_MULTI_VECTORS, lsz(F_DENSE_DATA, (size_t)v->dim * 4));
    *inner = n * one;
    return lsz(F_VECTOR_MULTI, n * one);
  }
  }
  return 0;
}

static inline void qdg_put_floats(vf_buf *b, uint32_t field, const float *f, size_t n) {
  qpb_put_len(b, field, n * 4);
  vf_buf_put(b, f, n * 4); /* packed float32, little-endian (protobuf's byte order) */
}

/* qdg_points_pb(): see qdrant_internal.h. */
vf_status qdg_points_pb(const store *s, const corpus_batch *b, const int *map, size_t from,
                        size_t to, vf_buf *scratch, vf_buf *out, vf_error *err) {
  const char *where = b->file_key ? b->file_key : "batch";
  for (size_t r = from; r < to; r++) {
    /* payload entries first (their size is only known once written) */
    vf_buf_reset(scratch);
    vf_status st = VF_OK;
    if (b->payload_offsets && b->payload_offsets[r + 1] > b->payload_offsets[r]) {
      char what[300];
      snprintf(what, sizeof what, "%s: row %zu: the payload", where, r);
      st = qpb_payload_from_json((const char *)b->payload.data + b->payload_offsets[r],
                                 (size_t)(b->payload_offsets[r + 1] - b->payload_offsets[r]),
                                 F_POINT_PAYLOAD, what, scratch, err);
      if (st != VF_OK) return st;
    }
    const corpus_id *id = &b->ids[r];
    size_t idb = id->is_uuid ? lsz(F_ID_UUID, 36) : 1 + qpb_varint_size(id->num);
    size_t named = 0; /* NamedVectors body */
    for (int j = 0; j < s->nvectors; j++) {
      if (map[j] < 0) continue;
      const corpus_vec_batch *v = &b->vectors[map[j]];
      if (v->null_rows && v->null_rows[r]) continue;
      if (v->kind == CORPUS_VEC_MULTI && v->offsets[r + 1] == v->offsets[r]) continue;
      size_t inner, vs = qdg_vector_size(v, r, &inner);
      size_t entry = lsz(F_ENTRY_KEY, strlen(s->vectors[j].name)) + lsz(F_ENTRY_VALUE, vs);
      named += lsz(F_NAMED_MAP, entry);
    }
    size_t vectors = lsz(F_VECTORS_NAMED, named);
    size_t point = lsz(F_POINT_ID, idb) + lsz(F_POINT_VECTORS, vectors) + scratch->len;
    st = vf_buf_reserve(out, lsz(F_UPSERT_POINTS, point), err);
    if (st != VF_OK) return st;
    size_t start = out->len;
    qpb_put_len(out, F_UPSERT_POINTS, point);
    qpb_put_len(out, F_POINT_ID, idb);
    if (id->is_uuid) {
      qpb_put_len(out, F_ID_UUID, 36);
      vf_buf_put(out, id->uuid, 36);
    } else {
      qpb_put_tag(out, F_ID_NUM, QPB_WT_VARINT);
      qpb_put_varint(out, id->num);
    }
    qpb_put_len(out, F_POINT_VECTORS, vectors);
    qpb_put_len(out, F_VECTORS_NAMED, named);
    for (int j = 0; j < s->nvectors; j++) {
      if (map[j] < 0) continue;
      const corpus_vec_batch *v = &b->vectors[map[j]];
      if (v->null_rows && v->null_rows[r]) continue;
      if (v->kind == CORPUS_VEC_MULTI && v->offsets[r + 1] == v->offsets[r]) continue;
      const char *name = s->vectors[j].name;
      size_t nl = strlen(name), inner, vs = qdg_vector_size(v, r, &inner);
      qpb_put_len(out, F_NAMED_MAP, lsz(F_ENTRY_KEY, nl) + lsz(F_ENTRY_VALUE, vs));
      qpb_put_len(out, F_ENTRY_KEY, nl);
      vf_buf_put(out, name, nl);
      qpb_put_len(out, F_ENTRY_VALUE, vs);
      size_t bad = 0;
      bool ok = true;
      switch (v->kind) {
      case CORPUS_VEC_DENSE: {
        const float *f = v->dense + r * (size_t)v->dim;
        ok = qdg_finite(f, (size_t)v->dim, &bad);
        qpb_put_len(out, F_VECTOR_DENSE, inner);
        qdg_put_floats(out, F_DENSE_DATA, f, (size_t)v->dim);
        break;
      }
      case CORPUS_VEC_SPARSE: {
        size_t o0 = (size_t)v->offsets[r], n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
        ok = qdg_finite(v->values + o0, n, &bad);
        qpb_put_len(out, F_VECTOR_SPARSE, inner);
        if (n) {
          qdg_put_floats(out, F_SPARSE_VALUES, v->values + o0, n);
          size_t ib = 0;
          for (size_t i = 0; i < n; i++)
            ib += qpb_varint_size(v->indices[o0 + i]);
          qpb_put_len(out, F_SPARSE_INDICES, ib);
          for (size_t i = 0; i < n; i++)
            qpb_put_varint(out, v->indices[o0 + i]);
        }
        break;
      }
      case CORPUS_VEC_MULTI: {
        size_t o0 = (size_t)v->offsets[r], n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
        ok = qdg_finite(v->multi + o0 * (size_t)v->dim, n * (size_t)v->dim, &bad);
        qpb_put_len(out, F_VECTOR_MULTI, inner);
        for (size_t i = 0; i < n; i++) {
          qpb_put_len(out, F_MULTI_VECTORS, lsz(F_DENSE_DATA, (size_t)v->dim * 4));
          qdg_put_floats(out, F_DENSE_DATA, v->multi + (o0 + i) * (size_t)v->dim, (size_t)v->dim);
        }
        break;
      }
      }
      if (!ok) {
        out->len = start;
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: row %zu (file row %llu): vector '%s' value %zu is NaN or "
                            "infinite, which Qdrant cannot store",
                            where, r, (unsigned long long)(b->file_rows ? b->file_rows[r] : r),
                            name, bad);
      }
    }
    vf_buf_put(out, scratch->data, scratch->len);
  }
  return VF_OK;
}

/* An upsert refused as INVALID_ARGUMENT (or FAILED_PRECONDITION): name the points, and the one
 * the server names when its message says "points[i]". */
static vf_status qdg_refused(qdg *g, const corpus_batch *b, size_t from, size_t to, vf_error *err) {
  const char *where = b->file_key ? b->file_key : "batch";
  char first[37], last[37], named[200] = "";
  store_id_format(&b->ids[from], first);
  store_id_format(&b->ids[to - 1], last);
  const char *gm = g->resp.grpc_message ? g->resp.grpc_message : "";
  const char *pi = strstr(gm, "points[");
  if (pi) {
    size_t i = strtoul(pi + 7, NULL, 10);
    if (from + i < to) {
      char id[37];
      store_id_format(&b->ids[from + i], id);
      snprintf(named, sizeof named, "; points[%zu] is point %s, file row %llu", i, id,
               (unsigned long long)(b->file_rows ? b->file_rows[from + i] : from + i));
    }
  }
  return vf_error_set(err, VF_EUSAGE,
                      "qdrant collection '%s' refused the upsert of %zu points from %s (rows "
                      "%zu..%zu, file rows %llu..%llu, ids %s .. %s): gRPC %s: %.400s%s",
                      g->collection, to - from, where, from, to - 1,
                      (unsigned long long)(b->file_rows ? b->file_rows[from] : from),
                      (unsigned long long)(b->file_rows ? b->file_rows[to - 1] : to - 1), first,
                      last, io_grpc_status_name(g->resp.grpc_status), gm, named);
}

static vf_status qdg_send_points(qdg *g, const corpus_batch *b, size_t from, size_t to,
                                 vf_error *err) {
  const uint8_t *rp;
  size_t rn;
  int gs;
  vf_status st = qdg_send(g, QPB_RPC_Points_Upsert, &rp, &rn, &gs, err);
  if (!st) return VF_OK; /* sent */
  if (gs == 3 || gs == 9) return qdg_refused(g, b, from, to, err);
  const char *gm = g->resp.grpc_message ? g->resp.grpc_message : "";
  if (gs == 8 && (strstr(gm, "larger than") || strstr(gm, "too large"))) /* no retry can help */
    return vf_error_set(err, VF_ECONFIG,
                        "qdrant collection '%s': the server refused a %zu-point Points/Upsert "
                        "message as too large (%.200s): its gRPC message limit is below "
                        "vectorstore.grpc_max_message_mb (%zu MiB); lower that setting",
                        g->collection, to - from, gm, g->max_msg >> 20);
  return vf_error_prefix(err, "qdrant collection '%s': ", g->collection);
}

/* qdg_upsert(): see qdrant_internal.h. */
vf_status qdg_upsert(qdg *g, const store *s, const corpus_batch *b, const int *map, bool wait,
                     vf_error *err) {
  size_t limit = g->max_msg - QDG_HEADROOM;
  vf_status st = VF_OK;
  size_t head = 0, from = 0;
  VF_TRY(qdg_start(g, err));
  VF_TRY(qpb_add_varint(&g->msg, F_UPSERT_WAIT, wait ? 1 : 0, err));
  head = g->msg.len;
  for (size_t r = 0; r < b->n; r++) {
    size_t mark = g->msg.len;
    VF_TRY(qdg_points_pb(s, b, map, r, r + 1, &g->scratch, &g->msg, err));
    if (g->msg.len - QDG_FRAME <= limit) continue;
    if (r == from)
      return vf_error_set(err, VF_EUSAGE,
                          "%s: row %zu: one point takes %zu bytes of protobuf, more than the "
                          "gRPC message limit of %zu bytes (vectorstore.grpc_max_message_mb)",
                          b->file_key ? b->file_key : "batch", r, g->msg.len - mark, g->max_msg);
    g->msg.len = mark; /* send what fits, restart with this point */
    VF_TRY(qdg_send_points(g, b, from, r, err));
    g->msg.len = head;
    from = r;
    r--;
  }
  if (b->n > from) VF_TRY(qdg_send_points(g, b, from, b->n, err));
out:
  if (g->msg.cap > ((size_t)128 << 20)) vf_buf_free(&g->msg);
  return st;
}

/* ------------------------------------------------------------ search */

static vf_status qdg_search_params(vf_buf *m, const store_qdrant_search_opts *o, vf_error *err) {
  size_t m1, m2;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(m, F_QP_PARAMS, &m1, err));
  if (o->hnsw_ef > 0) VF_TRY(qpb_add_varint(m, F_SP_HNSW_EF, (uint64_t)o->hnsw_ef, err));
  VF_TRY(qpb_add_varint(m, F_SP_EXACT, o->exact ? 1 : 0, err));
  if (o->rescore >= 0 || o->oversampling > 0) {
    VF_TRY(qpb_begin(m, F_SP_QUANT, &m2, err));
    if (o->rescore >= 0) VF_TRY(qpb_add_varint(m, F_QSP_RESCORE, o->rescore ? 1 : 0, err));
    if (o->oversampling > 0) VF_TRY(qpb_add_double(m, F_QSP_OVERSAMPLING, o->oversampling, err));
    VF_TRY(qpb_end(m, m2, err));
  }
  VF_TRY(qpb_end(m, m1, err));
out:
  return st;
}

/* The QueryBatch request: one QueryPoints per query (with its filter, if any). */
static vf_status qdg_query_encode(qdg *g, const char *using, const float *queries, size_t nq,
                                  int32_t dim, size_t k, const store_qdrant_search_opts *o,
                                  const char *const *filters, vf_error *err) {
  vf_status st = VF_OK;
  vf_json_val fv = {0}; /* one query's filter */
  VF_TRY(qdg_start(g, err));
  vf_buf *m = &g->msg;
  size_t cl = strlen(g->collection), ul = strlen(using);
  for (size_t i = 0; i < nq; i++) {
    const float *f = queries + i * (size_t)dim;
    size_t bad;
    if (!qdg_finite(f, (size_t)dim, &bad))
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "search: query %zu value %zu is NaN or infinite", i,
                           bad));
    size_t m1;
    size_t dense = lsz(F_DENSE_DATA, (size_t)dim * 4);
    size_t vi = lsz(F_VI_DENSE, dense), q = lsz(F_QUERY_NEAREST, vi);
    VF_TRY(qpb_begin(m, F_QB_QUERIES, &m1, err));
    VF_TRY(vf_buf_reserve(m, lsz(F_QP_QUERY, q) + cl + ul + 64, err));
    qpb_put_len(m, F_QP_COLLECTION, cl);
    vf_buf_put(m, g->collection, cl);
    qpb_put_len(m, F_QP_QUERY, q);
    qpb_put_len(m, F_QUERY_NEAREST, vi);
    qpb_put_len(m, F_VI_DENSE, dense);
    qdg_put_floats(m, F_DENSE_DATA, f, (size_t)dim);
    qpb_put_len(m, F_QP_USING, ul);
    vf_buf_put(m, using, ul);
    if (filters && filters[i]) { /* QueryPoints.filter: the REST filter JSON as a qdrant.Filter */
      size_t mf;
      VF_TRY(vf_json_parse(filters[i], strlen(filters[i]), "search filter", &fv, err));
      VF_TRY(qpb_begin(m, F_QP_FILTER, &mf, err));
      VF_TRY(qpb_filter_from_json(&fv, "filter", m, err));
      VF_TRY(qpb_end(m, mf, err));
      vf_json_free(&fv);
      VF_TRY(vf_buf_reserve(m, 16, err));
    }
    qpb_put_tag(m, F_QP_LIMIT, QPB_WT_VARINT);
    qpb_put_varint(m, k);
    VF_TRY(qdg_search_params(m, o, err));
    size_t m2;
    VF_TRY(qpb_begin(m, F_QP_WITH_PAYLOAD, &m2, err));
    VF_TRY(qpb_add_varint(m, F_WPS_ENABLE, 0, err));
    VF_TRY(qpb_end(m, m2, err));
    VF_TRY(qpb_end(m, m1, err));
  }
out:
  vf_json_free(&fv);
  return st;
}

/* qdg_query(): see qdrant_internal.h. */
vf_status qdg_query(qdg *g, const char *using, const float *queries, size_t nq, int32_t dim,
                    size_t k, const store_qdrant_search_opts *o, const char *const *filters,
                    store_hit *hits, size_t *counts, vf_error *err) {
  vf_status st = qdg_query_encode(g, using, queries, nq, dim, k, o, filters, err);
  if (st != VF_OK) return st;
  const uint8_t *rp;
  size_t rn;
  int gs;
  st = qdg_send(g, QPB_RPC_Points_QueryBatch, &rp, &rn, &gs, err);
  if (st != VF_OK) return vf_error_prefix(err, "qdrant collection '%s': ", g->collection);
  /* QueryBatchResponse{repeated BatchResult result = 1}; BatchResult{repeated ScoredPoint
   * result = 1}; ScoredPoint{PointId id = 1, float score = 3} */
  vf_cursor c;
  vf_cur_init(&c, rp, rn, 0);
  qpb_item it;
  int rc;
  size_t qi = 0;
  while ((rc = qpb_next(&c, &it)) == 1) {
    if (it.field != F_QBR_RESULT) continue;
    if (it.wt != QPB_WT_LEN || qi >= nq) {
      rc = -1;
      break;
    }
    vf_cursor br;
    vf_cur_init(&br, it.p, it.n, 0);
    qpb_item sp;
    size_t np = 0;
    while ((rc = qpb_next(&br, &sp)) == 1) {
      if (sp.field != F_BR_RESULT) continue;
      if (sp.wt != QPB_WT_LEN) {
        rc = -1;
        break;
      }
      vf_cursor pc;
      vf_cur_init(&pc, sp.p, sp.n, 0);
      qpb_item x;
      bool have_id = false, have_score = false;
      store_hit h = {0};
      while ((rc = qpb_next(&pc, &x)) == 1) {
        if (x.field == F_SCORED_SCORE && x.wt == QPB_WT_I32) {
          uint32_t bits = (uint32_t)x.v;
          memcpy(&h.score, &bits, 4);
          have_score = true;
        } else if (x.field == F_SCORED_ID && x.wt == QPB_WT_LEN) {
          vf_cursor ic;
          vf_cur_init(&ic, x.p, x.n, 0);
          qpb_item y;
          int r3;
          while ((r3 = qpb_next(&ic, &y)) == 1) {
            if (y.field == F_ID_NUM && y.wt == QPB_WT_VARINT) {
              h.id.is_uuid = false;
              h.id.num = y.v;
              have_id = true;
            } else if (y.field == F_ID_UUID && y.wt == QPB_WT_LEN) {
              have_id = store_id_parse((const char *)y.p, y.n, &h.id);
            }
          }
          if (r3 < 0) rc = -1;
        }
        if (rc < 0) break;
      }
      if (rc < 0) break;
      rc = 1;
      if (!have_id || !have_score)
        return vf_error_set(err, VF_ENET, "qdrant collection '%s': query %zu hit %zu has no "
                            "valid id and score", g->collection, qi, np);
      if (np < k) hits[qi * k + np] = h;
      np++;
    }
    if (rc < 0) break;
    counts[qi] = np < k ? np : k;
    qi++;
  }
  if (rc < 0)
    return vf_error_set(err, VF_ENET, "qdrant (gRPC %s): malformed QueryBatchResponse",
                        g->url);
  if (qi != nq)
    return vf_error_set(err, VF_ENET, "qdrant collection '%s': the query response has %zu "
                        "results for %zu queries", g->collection, qi, nq);
  return VF_OK;
}
