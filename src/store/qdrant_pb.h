/*
 * qdrant_pb.h — a table-driven protobuf (proto3) codec for Qdrant's gRPC messages: the wire
 * writer and reader, JSON -> message (the collection calls, built from the same REST-shaped JSON
 * the REST transport sends) and message -> JSON (answers rendered in the REST shapes the store's
 * logic reads).  The tables (qdrant_pb_schema.c) are generated from the official protos by
 * scripts/gen-qdrant-pb.mjs.  Wire format: https://protobuf.dev/programming-guides/encoding/.
 */
#ifndef VFORGE_QDRANT_PB_H
#define VFORGE_QDRANT_PB_H

#include "vforge/util.h"

/* field types: descriptor.proto FieldDescriptorProto.Type numbers */
enum {
  QPB_DOUBLE = 1, QPB_FLOAT = 2, QPB_INT64 = 3, QPB_UINT64 = 4, QPB_INT32 = 5, QPB_FIXED64 = 6,
  QPB_FIXED32 = 7, QPB_BOOL = 8, QPB_STRING = 9, QPB_MESSAGE = 11, QPB_BYTES = 12,
  QPB_UINT32 = 13, QPB_ENUM = 14, QPB_SFIXED32 = 15, QPB_SFIXED64 = 16, QPB_SINT32 = 17,
  QPB_SINT64 = 18
};
/* labels */
enum { QPB_SINGULAR = 0, QPB_OPTIONAL = 1, QPB_REPEATED = 2, QPB_MAP = 3 };
/* wire types */
enum { QPB_WT_VARINT = 0, QPB_WT_I64 = 1, QPB_WT_LEN = 2, QPB_WT_I32 = 5 };

typedef struct qpb_field {
  const char *name;
  uint32_t number;
  uint8_t type;    /* QPB_*; QPB_MESSAGE for a map (entries) */
  uint8_t label;   /* QPB_SINGULAR (implicit presence), QPB_OPTIONAL, QPB_REPEATED, QPB_MAP */
  uint8_t packed;  /* repeated numeric: written packed */
  int16_t oneof;   /* index into the message's oneofs, -1 when none (proto3 optional is not) */
  int16_t ref;     /* message index (QPB_MESSAGE) or enum index (QPB_ENUM), else -1 */
  uint8_t map_key; /* QPB_MAP: key type */
  uint8_t map_val; /* QPB_MAP: value type */
  int16_t map_ref; /* QPB_MAP: value message / enum index, else -1 */
} qpb_field;

typedef struct qpb_msg {
  const char *name; /* full name without the leading '.', e.g. "qdrant.CreateCollection" */
  const qpb_field *fields; /* ascending field numbers */
  uint16_t nfields;
  const char *const *oneofs;
  uint16_t noneofs;
} qpb_msg;

typedef struct qpb_enum_value {
  const char *name;
  int32_t number;
} qpb_enum_value;

typedef struct qpb_enum {
  const char *name;
  const qpb_enum_value *values;
  uint16_t nvalues;
} qpb_enum;

typedef struct qpb_rpc {
  const char *path; /* "/qdrant.Points/Upsert" */
  int req, resp;    /* message indices */
} qpb_rpc;

/* ------------------------------------------------------------ writer */

static inline size_t qpb_varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}
/* Unchecked writes: only after a vf_buf_reserve() that covers them. */
static inline void qpb_put_varint(vf_buf *b, uint64_t v) {
  uint8_t *p = b->data + b->len;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  b->len = (size_t)(p - b->data);
}
static inline void qpb_put_tag(vf_buf *b, uint32_t field, int wt) {
  qpb_put_varint(b, ((uint64_t)field << 3) | (uint64_t)wt);
}
/* Length-delimited field header: tag + length. */
static inline void qpb_put_len(vf_buf *b, uint32_t field, size_t len) {
  qpb_put_tag(b, field, QPB_WT_LEN);
  qpb_put_varint(b, len);
}
static inline size_t qpb_len_size(uint32_t field, size_t len) {
  return qpb_varint_size((uint64_t)field << 3) + qpb_varint_size(len) + len;
}

vf_status qpb_add_varint(vf_buf *b, uint32_t field, uint64_t v, vf_error *err);
vf_status qpb_add_bytes(vf_buf *b, uint32_t field, const void *p, size_t n, vf_error *err);
vf_status qpb_add_double(vf_buf *b, uint32_t field, double v, vf_error *err);
vf_status qpb_add_float(vf_buf *b, uint32_t field, float v, vf_error *err);
/*! qpb_begin() / qpb_end() : a length-delimited field of unknown length: begin writes the tag
 *  and a one-byte placeholder, end fills in the length (moving the content when the length
 *  needs more than one byte). */
vf_status qpb_begin(vf_buf *b, uint32_t field, size_t *mark, vf_error *err);
vf_status qpb_end(vf_buf *b, size_t mark, vf_error *err);

/* ------------------------------------------------------------ schema */

/*! qpb_msg_index() / qpb_enum_index() : a message or enum by full name ("qdrant.Filter"); -1. */
int qpb_msg_index(const char *full_name);
int qpb_enum_index(const char *full_name);
/*! qpb_field_by_name() / qpb_field_by_number() : NULL when the message has none. */
const qpb_field *qpb_field_by_name(int msg, const char *name);
const qpb_field *qpb_field_by_number(int msg, uint32_t number);
const qpb_msg *qpb_msg_at(int msg);

/* ------------------------------------------------------------ JSON <-> messages */

struct vf_json_val;

/*! qpb_encode_json() : append the fields of message `msg` given as a JSON object in the shape of
 *  Qdrant's REST API (the field names are the protos' own; where REST and gRPC differ — `vectors`
 *  for vectors_config.params_map.map, `sparse_vectors`, enum spellings such as "int8" or
 *  "max_sim", max_optimization_threads as a number or "auto", quantization "Disabled", metadata
 *  and payload values as JSON — the REST form is accepted).  No outer tag or length is written.
 *  `path` names the object in messages ("vectorstore.params").
 *  @return : VF_EUSAGE naming the key path for an unknown key, a wrong type or an unknown enum
 *            value (e.g. "vectorstore.params.hnsw.mm: not a field of qdrant.HnswConfigDiff");
 *            VF_ENOMEM. */
vf_status qpb_encode_json(int msg, const struct vf_json_val *obj, const char *path, vf_buf *out,
                          vf_error *err);
/*! qpb_encode_value() : a JSON value as a qdrant.Value message body (json_with_int.proto):
 *  integers (no fraction or exponent, within int64) as integer_value, other numbers as
 *  double_value. */
vf_status qpb_encode_value(const struct vf_json_val *v, const char *path, vf_buf *out, vf_error *err);
/*! qpb_filter_from_json() : a Qdrant REST filter (openapi.json `Filter`: must / should /
 *  must_not / min_should of FieldCondition {key, match, range, geo_*, values_count, is_empty,
 *  is_null}, is_empty, is_null, has_id, has_vector, nested, nested filters) as the body of a
 *  qdrant.Filter message (qdrant_common.proto): match.value by its JSON type (keyword, integer,
 *  boolean), any / except as keywords or integers, a range of RFC 3339 strings as a
 *  DatetimeRange.  qpb_encode_json() uses it for every Filter field (Count, Query).
 *  @return : VF_EUSAGE naming the key path for anything else. */
vf_status qpb_filter_from_json(const struct vf_json_val *filter, const char *path, vf_buf *out,
                               vf_error *err);
/*! qpb_payload_from_json() : the members of the JSON object text [json, json+len) as entries of
 *  the map<string, Value> field `field` (PointStruct.payload), streamed without a DOM.
 *  @return : VF_ECORRUPT naming `what` and the byte offset for text that is not a JSON object. */
vf_status qpb_payload_from_json(const char *json, size_t len, uint32_t field, const char *what,
                                vf_buf *out, vf_error *err);

/*! qpb_decode_json() : message `msg` (wire bytes [p, p+n)) as a JSON object in REST shapes:
 *  enums by their REST names ("green", "int8", "Cosine"), maps as objects, 64-bit integers as
 *  exact numbers, Value as JSON, vectors_config as `vectors`, sparse_vectors_config as
 *  `sparse_vectors`, optimizer_status as "ok" or {"error": ...}, PointId as a number or a UUID
 *  string; unset implicit-presence scalars of present messages as their defaults.  Unknown
 *  fields are skipped (newer servers).
 *  @return : VF_ECORRUPT naming `what`, the message and the byte offset for malformed bytes. */
vf_status qpb_decode_json(int msg, const uint8_t *p, size_t n, const char *what, vf_buf *json,
                          vf_error *err);

/* ------------------------------------------------------------ reader */

typedef struct qpb_item {
  uint32_t field;
  int wt;
  uint64_t v;        /* VARINT, I64, I32 */
  const uint8_t *p;  /* LEN */
  size_t n;
} qpb_item;

/*! qpb_next() : the next field of the message in cursor `c`.  @return : 1 when one was read,
 *  0 at the end, -1 for malformed bytes (a bad tag, a truncated value, a group). */
int qpb_next(vf_cursor *c, qpb_item *it);

#endif
