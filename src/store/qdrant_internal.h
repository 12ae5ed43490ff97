/*
 * qdrant_internal.h — pieces of the Qdrant store shared by its files, its tests and
 * bench/qdrant-serialize: the corpus record's JSON, the float32 formatter and the points
 * serializer; the gRPC transport (qdrant_grpc.c).  (The JSON reader they use is util's
 * vf_json_parse, src/util/json_read.c.)
 */
#ifndef VFORGE_QDRANT_INTERNAL_H
#define VFORGE_QDRANT_INTERNAL_H

#include "store/internal.h"

/* --------------------------------------------------- the corpus record (store.h) */

struct store_record;
/*! store_record_json() : append the record as a JSON object {"files_md5", "id_expression",
 *  "files", "rows"} (the load state is kept beside it by each backend). */
vf_status store_record_json(vf_buf *b, const struct store_record *r, vf_error *err);
/*! store_record_from_json() : fill `r` from such an object; false when it is not one. */
bool store_record_from_json(const vf_json_val *v, struct store_record *r);

/* ------------------------------------------------------- serialization */

#define QD_F32_MAX_CHARS 16

/*! qd_fmt_f32() : a finite float32 as a JSON number with at most 9 significant digits
 *  (trailing zeros dropped), which reads back as the same float32.  Writes at most
 *  QD_F32_MAX_CHARS bytes (no NUL); returns the count.  The caller checks isfinite. */
size_t qd_fmt_f32(char *out, float v);

/*! qd_points_json() : append the points [from, to) of batch `b` as the elements of a
 *  PointsList "points" array (comma-separated PointStruct objects, no brackets) to `out`.
 *  `map[j]` is the batch vector of collection vector j (store_check_batch).  The payload text
 *  of each row is spliced in verbatim (an empty payload is omitted).  `*first` tells whether a
 *  comma is needed and is cleared.
 *  @return : VF_ECORRUPT naming the row and vector for a NaN/infinite value; VF_ENOMEM. */
vf_status qd_points_json(const store *s, const corpus_batch *b, const int *map, size_t from,
                         size_t to, bool *first, vf_buf *out, vf_error *err);

/* ------------------------------------------------------------ gRPC (qdrant_grpc.c) */

typedef struct qdg qdg;
struct io_http_opts;

/*! qdg_url_for() : the gRPC endpoint of a REST url: its scheme and host with `grpc_port`. */
vf_status qdg_url_for(const char *rest_url, int grpc_port, char *out, size_t cap, vf_error *err);
/*! qdg_open() : a gRPC connection (one HTTP/2 client) to the Qdrant of `rest_url` on
 *  `grpc_port`, TLS when the url is https://; `ho` as for REST (api key -> `api-key` metadata,
 *  retries, timeouts, CA bundle); `max_msg` the server's message limit.  Connects lazily. */
vf_status qdg_open(const char *rest_url, int grpc_port, const struct io_http_opts *ho,
                   size_t max_msg, const char *collection, qdg **out, vf_error *err);
void qdg_close(qdg *g);
const char *qdg_endpoint(const qdg *g);
uint64_t qdg_retries(const qdg *g);
/*! qdg_rest_call() : a REST call of the store's collection logic made as the equivalent RPC
 *  (see qdrant_grpc.c): `body` is the REST JSON, `json` receives the answer as REST JSON,
 *  *status the HTTP status equivalent of the gRPC status (404 for NOT_FOUND, 409 for
 *  ALREADY_EXISTS, ...).  A NOT_FOUND with allow_404 is VF_OK with status 404. */
vf_status qdg_rest_call(qdg *g, const char *method, const char *suffix, const vf_buf *body,
                        bool allow_404, long *status, vf_buf *json, vf_error *err);
/*! qdg_points_pb() : append the points [from, to) of batch `b` as UpsertPoints.points fields
 *  (PointStruct; dense/multi vectors as packed float32, sparse indices as packed varints, the
 *  payload JSON as a map<string, Value>) to `out`; `scratch` is a work buffer.
 *  @return : VF_ECORRUPT naming the row and vector for a NaN/infinite value or bad payload. */
vf_status qdg_points_pb(const store *s, const corpus_batch *b, const int *map, size_t from,
                        size_t to, vf_buf *scratch, vf_buf *out, vf_error *err);
/*! qdg_upsert() : Points/Upsert of the batch, split into messages under the server's limit.
 *  @return : VF_EUSAGE naming the points (ids, file rows) when the server answers
 *            INVALID_ARGUMENT; VF_ENET for other failures (after the retries). */
vf_status qdg_upsert(qdg *g, const store *s, const corpus_batch *b, const int *map, bool wait,
                     vf_error *err);
/*! qdg_query() : Points/QueryBatch of nq dense queries against vector `using` with the
 *  search options `o` (the struct both transports take); fills hits[q * k + i] (raw Qdrant
 *  scores) and counts[q]. */
/* filters: NULL, or nq Qdrant filter JSON texts (NULL entries: unfiltered) */
vf_status qdg_query(qdg *g, const char *using, const float *queries, size_t nq, int32_t dim,
                    size_t k, const store_qdrant_search_opts *o, const char *const *filters,
                    store_hit *hits, size_t *counts, vf_error *err);

#endif
