/*
 * qdrant_pb.c — the protobuf codec of the Qdrant gRPC transport (qdrant_pb.h).
 *
 * Why table-driven JSON <-> wire instead of generated structs: the store's collection logic
 * (create, compare, defer/restore, wait, reindex) is written once against Qdrant's REST shapes
 * (qdrant.c); the gRPC transport hands the same JSON to this codec, which writes the equivalent
 * protobuf message field by field from the tables generated out of the official protos, and
 * renders answers back into the REST shapes.  The two APIs share field names almost everywhere;
 * the few places they differ are handled here by name and listed in qdrant_pb.h.  The hot paths
 * (points, queries) do not go through JSON: qdrant_grpc.c writes those messages directly with
 * the writer below.
 *
 * Untrusted bytes (answers) are read through vf_cursor; every length is checked against what is
 * left, nesting is capped at QPB_MAX_DEPTH, and a message of n bytes yields at most n/2 fields.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "store/qdrant_internal.h"
#include "store/qdrant_pb.h"
#include "store/qdrant_pb_schema.h"

#define QPB_MAX_DEPTH 48

/* ------------------------------------------------------------ writer */

vf_status qpb_add_varint(vf_buf *b, uint32_t field, uint64_t v, vf_error *err) {
  vf_status st = vf_buf_reserve(b, 16, err);
  if (st != VF_OK) return st;
  qpb_put_tag(b, field, QPB_WT_VARINT);
  qpb_put_varint(b, v);
  return VF_OK;
}

vf_status qpb_add_bytes(vf_buf *b, uint32_t field, const void *p, size_t n, vf_error *err) {
  vf_status st = vf_buf_reserve(b, n + 16, err);
  if (st != VF_OK) return st;
  qpb_put_len(b, field, n);
  if (n) vf_buf_put(b, p, n);
  return VF_OK;
}

vf_status qpb_add_double(vf_buf *b, uint32_t field, double v, vf_error *err) {
  vf_status st = vf_buf_reserve(b, 16, err);
  if (st != VF_OK) return st;
  qpb_put_tag(b, field, QPB_WT_I64);
  vf_buf_put(b, &v, 8); /* little-endian hosts only (util.c checks at build time) */
  return VF_OK;
}

vf_status qpb_add_float(vf_buf *b, uint32_t field, float v, vf_error *err) {
  vf_status st = vf_buf_reserve(b, 16, err);
  if (st != VF_OK) return st;
  qpb_put_tag(b, field, QPB_WT_I32);
  vf_buf_put(b, &v, 4);
  return VF_OK;
}

vf_status qpb_begin(vf_buf *b, uint32_t field, size_t *mark, vf_error *err) {
  vf_status st = vf_buf_reserve(b, 16, err);
  if (st != VF_OK) return st;
  qpb_put_tag(b, field, QPB_WT_LEN);
  *mark = b->len;
  b->data[b->len++] = 0;
  return VF_OK;
}

vf_status qpb_end(vf_buf *b, size_t mark, vf_error *err) {
  size_t len = b->len - mark - 1;
  size_t need = qpb_varint_size(len);
  if (need > 1) {
    vf_status st = vf_buf_reserve(b, need - 1, err);
    if (st != VF_OK) return st;
    memmove(b->data + mark + need, b->data + mark + 1, len);
  }
  size_t end = mark + need + len;
  b->len = mark;
  qpb_put_varint(b, len);
  b->len = end;
  return VF_OK;
}

/* ------------------------------------------------------------ schema */

const qpb_msg *qpb_msg_at(int msg) { return msg >= 0 && msg < QPB_NMSGS ? &QPB_MSGS[msg] : NULL; }

int qpb_msg_index(const char *full_name) {
  for (int i = 0; i < QPB_NMSGS; i++)
    if (strcmp(QPB_MSGS[i].name, full_name) == 0) return i;
  return -1;
}

int qpb_enum_index(const char *full_name) {
  for (int i = 0; i < QPB_NENUMS; i++)
    if (strcmp(QPB_ENUMS[i].name, full_name) == 0) return i;
  return -1;
}

const qpb_field *qpb_field_by_name(int msg, const char *name) {
  const qpb_msg *m = qpb_msg_at(msg);
  for (uint16_t i = 0; m && i < m->nfields; i++)
    if (strcmp(m->fields[i].name, name) == 0) return &m->fields[i];
  return NULL;
}

const qpb_field *qpb_field_by_number(int msg, uint32_t number) {
  const qpb_msg *m = qpb_msg_at(msg);
  if (!m) return NULL;
  size_t lo = 0, hi = m->nfields;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->fields[mid].number < number)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->nfields && m->fields[lo].number == number ? &m->fields[lo] : NULL;
}

/* Enum names compared without case and without '_' ("max_sim" = "MaxSim", "int8" = "Int8"). */
static bool qpb_name_eq(const char *a, const char *b) {
  for (;;) {
    while (*a == '_' || *a == '-')
      a++;
    while (*b == '_' || *b == '-')
      b++;
    if (!*a || !*b) return !*a && !*b;
    char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
    char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
    if (x != y) return false;
    a++;
    b++;
  }
}

/* An enum value by its REST or proto spelling; also with the enum's own name as a prefix
 * ("keyword" -> FieldTypeKeyword of enum FieldType). */
static bool qpb_enum_lookup(int e, const char *text, int32_t *out) {
  const qpb_enum *en = &QPB_ENUMS[e];
  const char *shortname = strrchr(en->name, '.');
  shortname = shortname ? shortname + 1 : en->name;
  size_t sl = strlen(shortname);
  for (uint16_t i = 0; i < en->nvalues; i++) {
    const char *vn = en->values[i].name;
    if (qpb_name_eq(vn, text) ||
        (strncmp(vn, shortname, sl) == 0 && vn[sl] && qpb_name_eq(vn + sl, text))) {
      *out = en->values[i].number;
      return true;
    }
  }
  return false;
}

/* ------------------------------------------------------------ JSON -> wire */

typedef struct qpb_enc {
  vf_buf *out;
  vf_error *err;
  char path[512];
} qpb_enc;

static vf_status qpb_enc_fail(qpb_enc *e, const char *fmt, const char *a, const char *b) {
  return vf_error_set(e->err, VF_EUSAGE, "%s: %s%s%s", e->path[0] ? e->path : "(request)", fmt,
                      a ? a : "", b ? b : "");
}

/* path push/pop */
static size_t qpb_push(qpb_enc *e, const char *key) {
  size_t at = strlen(e->path);
  snprintf(e->path + at, sizeof e->path - at, "%s%s", at ? "." : "", key);
  return at;
}
static void qpb_pop(qpb_enc *e, size_t at) { e->path[at] = 0; }

static vf_status qpb_enc_msg(qpb_enc *e, int msg, const vf_json_val *obj, int depth);

/* The raw text of an integral JSON number (or a string holding one) -> int64/uint64. */
static bool qpb_json_int(const vf_json_val *v, bool is_signed, int64_t *s, uint64_t *u) {
  const char *t;
  size_t n;
  if (v->t == VF_JSON_NUM) {
    t = v->raw;
    n = v->raw_len;
  } else if (v->t == VF_JSON_STR) {
    t = v->str;
    n = strlen(v->str);
  } else {
    return false;
  }
  if (n == 0 || n > 24) return false;
  char tmp[32];
  memcpy(tmp, t, n);
  tmp[n] = 0;
  if (strpbrk(tmp, ".eE")) { /* 1e3, 5.0: integral values written as doubles are accepted */
    char *end;
    double d = strtod(tmp, &end);
    if (end == tmp || *end || !(d == floor(d)) || fabs(d) > 9007199254740992.0) return false;
    if (is_signed) *s = (int64_t)d;
    else if (d < 0) return false;
    else *u = (uint64_t)d;
    return true;
  }
  char *end;
  errno = 0;
  if (is_signed) {
    long long x = strtoll(tmp, &end, 10);
    if (errno || *end) return false;
    *s = x;
  } else {
    if (tmp[0] == '-') return false;
    unsigned long long x = strtoull(tmp, &end, 10);
    if (errno || *end) return false;
    *u = x;
  }
  return true;
}

/* A fixed32 / fixed64 (or sfixed) field: the low 4 or 8 bytes of v, little-endian. */
static vf_status qpb_add_fixed(vf_buf *b, uint32_t num, bool four, uint64_t v, vf_error *err) {
  vf_status st = vf_buf_reserve(b, 16, err);
  if (st != VF_OK) return st;
  qpb_put_tag(b, num, four ? QPB_WT_I32 : QPB_WT_I64);
  uint32_t x = (uint32_t)v;
  if (four)
    vf_buf_put(b, &x, 4);
  else
    vf_buf_put(b, &v, 8);
  return VF_OK;
}

/* One scalar (not message) value of type `type` (`ref`: enum) under field number `num`. */
static vf_status qpb_enc_scalar(qpb_enc *e, uint32_t num, int type, int ref, const vf_json_val *v) {
  vf_buf *b = e->out;
  int64_t s = 0;
  uint64_t u = 0;
  switch (type) {
  case QPB_BOOL:
    if (v->t != VF_JSON_BOOL) return qpb_enc_fail(e, "expected true or false", NULL, NULL);
    return qpb_add_varint(b, num, v->b ? 1 : 0, e->err);
  case QPB_STRING:
    if (v->t != VF_JSON_STR) return qpb_enc_fail(e, "expected a string", NULL, NULL);
    return qpb_add_bytes(b, num, v->str, strlen(v->str), e->err);
  case QPB_DOUBLE:
  case QPB_FLOAT:
    if (v->t != VF_JSON_NUM) return qpb_enc_fail(e, "expected a number", NULL, NULL);
    return type == QPB_DOUBLE ? qpb_add_double(b, num, v->num, e->err)
                              : qpb_add_float(b, num, (float)v->num, e->err);
  case QPB_ENUM: {
    int32_t ev;
    if (v->t == VF_JSON_STR) {
      if (!qpb_enum_lookup(ref, v->str, &ev)) {
        char vals[400] = "";
        const qpb_enum *en = &QPB_ENUMS[ref];
        for (uint16_t i = 0; i < en->nvalues; i++) {
          size_t l = strlen(vals);
          snprintf(vals + l, sizeof vals - l, "%s%s", i ? ", " : "", en->values[i].name);
        }
        vf_error_set(e->err, VF_EUSAGE, "%s: '%.60s' is not a value of %s (one of: %s)", e->path,
                     v->str, en->name, vals);
        return VF_EUSAGE;
      }
    } else if (qpb_json_int(v, true, &s, &u) && s >= INT32_MIN && s <= INT32_MAX) {
      ev = (int32_t)s;
    } else {
      return qpb_enc_fail(e, "expected an enum name", NULL, NULL);
    }
    return qpb_add_varint(b, num, (uint64_t)(int64_t)ev, e->err);
  }
  case QPB_INT64:
  case QPB_INT32:
  case QPB_SINT32:
  case QPB_SINT64:
  case QPB_SFIXED32:
  case QPB_SFIXED64:
    if (!qpb_json_int(v, true, &s, &u)) return qpb_enc_fail(e, "expected an integer", NULL, NULL);
    if ((type == QPB_INT32 || type == QPB_SINT32 || type == QPB_SFIXED32) &&
        (s < INT32_MIN || s > INT32_MAX))
      return qpb_enc_fail(e, "integer out of the 32-bit range", NULL, NULL);
    if (type == QPB_SINT32 || type == QPB_SINT64)
      return qpb_add_varint(b, num, ((uint64_t)s << 1) ^ (uint64_t)(s >> 63), e->err);
    if (type == QPB_SFIXED32 || type == QPB_SFIXED64)
      return qpb_add_fixed(b, num, type == QPB_SFIXED32, (uint64_t)s, e->err);
    return qpb_add_varint(b, num, (uint64_t)s, e->err);
  case QPB_UINT64:
  case QPB_UINT32:
  case QPB_FIXED32:
  case QPB_FIXED64:
    if (!qpb_json_int(v, false, &s, &u))
      return qpb_enc_fail(e, "expected an unsigned integer", NULL, NULL);
    if ((type == QPB_UINT32 || type == QPB_FIXED32) && u > UINT32_MAX)
      return qpb_enc_fail(e, "integer out of the 32-bit range", NULL, NULL);
    if (type == QPB_FIXED32 || type == QPB_FIXED64)
      return qpb_add_fixed(b, num, type == QPB_FIXED32, u, e->err);
    return qpb_add_varint(b, num, u, e->err);
  default: return qpb_enc_fail(e, "a bytes field cannot be given in JSON", NULL, NULL);
  }
}

/* A packed repeated numeric field from a JSON array. */
static vf_status qpb_enc_packed(qpb_enc *e, const qpb_field *f, const vf_json_val *arr) {
  size_t mark;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(e->out, f->number, &mark, e->err));
  for (size_t i = 0; i < arr->n; i++) {
    /* write as an unpacked field into the buffer, then strip the tag: simplest exact reuse of
     * the scalar encoder (tags of fields < 16 are one byte) */
    size_t before = e->out->len;
    VF_TRY(qpb_enc_scalar(e, 1, f->type, f->ref, &arr->items[i]));
    memmove(e->out->data + before, e->out->data + before + 1, e->out->len - before - 1);
    e->out->len--;
  }
  VF_TRY(qpb_end(e->out, mark, e->err));
out:
  return st;
}

/* A scalar JSON value given for a message-typed field: the REST shorthands of oneof wrappers
 * (max_optimization_threads: 8 | "auto", quantization_config: "Disabled", with_payload: false,
 * query_encoding: "scalar8bits"). */
static vf_status qpb_enc_wrapped(qpb_enc *e, int msg, const vf_json_val *v) {
  const qpb_msg *m = &QPB_MSGS[msg];
  for (uint16_t i = 0; i < m->nfields; i++) {
    const qpb_field *f = &m->fields[i];
    if (f->oneof < 0) continue;
    int32_t ev;
    if (v->t == VF_JSON_STR && f->type == QPB_ENUM && qpb_enum_lookup(f->ref, v->str, &ev))
      return qpb_add_varint(e->out, f->number, (uint64_t)(int64_t)ev, e->err);
    if (v->t == VF_JSON_STR && f->type == QPB_MESSAGE && qpb_name_eq(f->name, v->str) &&
        QPB_MSGS[f->ref].nfields == 0)
      return qpb_add_bytes(e->out, f->number, NULL, 0, e->err);
    if (v->t == VF_JSON_NUM && (f->type == QPB_UINT64 || f->type == QPB_INT64 || f->type == QPB_UINT32))
      return qpb_enc_scalar(e, f->number, f->type, f->ref, v);
    if (v->t == VF_JSON_BOOL && f->type == QPB_BOOL) return qpb_enc_scalar(e, f->number, f->type, -1, v);
  }
  return qpb_enc_fail(e, "expected an object for ", m->name, NULL);
}

static vf_status qpb_filter_body(qpb_enc *e, const vf_json_val *f, int depth);
static size_t qpb_qj_strlen(const vf_json_val *v);

/* A value of message type `msg` as field `num` (tag + length + body). */
static vf_status qpb_enc_submsg(qpb_enc *e, uint32_t num, int msg, const vf_json_val *v, int depth) {
  if (depth >= QPB_MAX_DEPTH) return qpb_enc_fail(e, "nested too deeply", NULL, NULL);
  size_t mark;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(e->out, num, &mark, e->err));
  if (msg == QPB_M_qdrant_Filter) { /* the REST filter shape differs from the proto's */
    VF_TRY(qpb_filter_body(e, v, depth + 1));
  } else if (msg == QPB_M_qdrant_Value) {
    VF_TRY(qpb_encode_value(v, e->path, e->out, e->err));
  } else {
    VF_TRY(v->t == VF_JSON_OBJ ? qpb_enc_msg(e, msg, v, depth + 1) : qpb_enc_wrapped(e, msg, v));
  }
  VF_TRY(qpb_end(e->out, mark, e->err));
out:
  return st;
}

/* Entry i of the JSON object v as one entry of the map field f: MapEntry{key = 1, value = 2}. */
static vf_status qpb_enc_map_entry(qpb_enc *e, const qpb_field *f, const vf_json_val *v, size_t i,
                                   int depth) {
  size_t mark;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(e->out, f->number, &mark, e->err));
  if (f->map_key == QPB_STRING) {
    VF_TRY(qpb_add_bytes(e->out, 1, v->keys[i], strlen(v->keys[i]), e->err));
  } else {
    vf_json_val k = {0};
    k.t = VF_JSON_STR;
    k.str = v->keys[i];
    VF_TRY(qpb_enc_scalar(e, 1, f->map_key, -1, &k));
  }
  if (v->items[i].t != VF_JSON_NULL)
    VF_TRY(f->map_val == QPB_MESSAGE ? qpb_enc_submsg(e, 2, f->map_ref, &v->items[i], depth)
                                     : qpb_enc_scalar(e, 2, f->map_val, f->map_ref, &v->items[i]));
  VF_TRY(qpb_end(e->out, mark, e->err));
out:
  return st;
}

static vf_status qpb_enc_field(qpb_enc *e, const qpb_field *f, const vf_json_val *v, int depth) {
  if (v->t == VF_JSON_NULL) return VF_OK; /* REST null = not set */
  vf_status st = VF_OK;
  if (f->label == QPB_MAP) {
    if (v->t != VF_JSON_OBJ) return qpb_enc_fail(e, "expected an object (a map)", NULL, NULL);
    for (size_t i = 0; i < v->n; i++) {
      size_t at = qpb_push(e, v->keys[i]);
      st = qpb_enc_map_entry(e, f, v, i, depth);
      qpb_pop(e, at);
      VF_TRY(st);
    }
    goto out;
  }
  if (f->label == QPB_REPEATED) {
    if (v->t != VF_JSON_ARR) return qpb_enc_fail(e, "expected an array", NULL, NULL);
    if (f->packed) return qpb_enc_packed(e, f, v);
    for (size_t i = 0; i < v->n; i++) {
      char ix[24];
      snprintf(ix, sizeof ix, "%zu", i);
      size_t at = qpb_push(e, ix);
      st = f->type == QPB_MESSAGE ? qpb_enc_submsg(e, f->number, f->ref, &v->items[i], depth)
                                  : qpb_enc_scalar(e, f->number, f->type, f->ref, &v->items[i]);
      qpb_pop(e, at);
      VF_TRY(st);
    }
    goto out;
  }
  return f->type == QPB_MESSAGE ? qpb_enc_submsg(e, f->number, f->ref, v, depth)
                                : qpb_enc_scalar(e, f->number, f->type, f->ref, v);
out:
  return st;
}

/* REST `vectors` / `sparse_vectors` (objects of named parameters) -> `<key>_config`, which wraps
 * them: VectorsConfig{params | params_map{map}}, VectorsConfigDiff{...}, SparseVectorConfig{map}. */
static vf_status qpb_enc_vectors_config(qpb_enc *e, const qpb_field *cf, const vf_json_val *v,
                                        int depth) {
  if (v->t != VF_JSON_OBJ) return qpb_enc_fail(e, "expected an object", NULL, NULL);
  size_t m1;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(e->out, cf->number, &m1, e->err));
  const qpb_field *map = qpb_field_by_name(cf->ref, "map");
  const qpb_field *pm = qpb_field_by_name(cf->ref, "params_map");
  const qpb_field *single = qpb_field_by_name(cf->ref, "params");
  if (map) {
    VF_TRY(qpb_enc_field(e, map, v, depth + 1));
  } else if (pm && single) {
    const vf_json_val *size = vf_json_get(v, "size");
    if (size && size->t == VF_JSON_NUM) { /* the single unnamed vector form */
      VF_TRY(qpb_enc_submsg(e, single->number, single->ref, v, depth + 1));
    } else {
      size_t m2;
      const qpb_field *inner = qpb_field_by_name(pm->ref, "map");
      VF_TRY(qpb_begin(e->out, pm->number, &m2, e->err));
      VF_TRY(qpb_enc_field(e, inner, v, depth + 2));
      VF_TRY(qpb_end(e->out, m2, e->err));
    }
  } else {
    VF_FAIL(qpb_enc_fail(e, "no vectors shape in ", QPB_MSGS[cf->ref].name, NULL));
  }
  VF_TRY(qpb_end(e->out, m1, e->err));
out:
  return st;
}

static vf_status qpb_enc_msg(qpb_enc *e, int msg, const vf_json_val *obj, int depth) {
  vf_status st = VF_OK;
  for (size_t i = 0; i < obj->n; i++) {
    const char *key = obj->keys[i];
    size_t at = qpb_push(e, key);
    const qpb_field *f = qpb_field_by_name(msg, key);
    if (f) {
      st = qpb_enc_field(e, f, &obj->items[i], depth);
    } else {
      char alt[160];
      snprintf(alt, sizeof alt, "%s_config", key);
      const qpb_field *cf = qpb_field_by_name(msg, alt);
      if (cf && cf->type == QPB_MESSAGE &&
          (strcmp(key, "vectors") == 0 || strcmp(key, "sparse_vectors") == 0)) {
        st = obj->items[i].t == VF_JSON_NULL ? VF_OK
                                        : qpb_enc_vectors_config(e, cf, &obj->items[i], depth);
      } else {
        st = vf_error_set(e->err, VF_EUSAGE, "%s: not a field of %s", e->path,
                          QPB_MSGS[msg].name);
      }
    }
    qpb_pop(e, at);
    VF_TRY(st);
  }
out:
  return st;
}

/* qpb_encode_json(): see qdrant_pb.h. */
vf_status qpb_encode_json(int msg, const vf_json_val *obj, const char *path, vf_buf *out,
                          vf_error *err) {
  qpb_enc e = {out, err, {0}};
  snprintf(e.path, sizeof e.path, "%s", path ? path : "");
  if (!obj || obj->t != VF_JSON_OBJ)
    return vf_error_set(err, VF_EUSAGE, "%s: expected an object for %s", e.path,
                        QPB_MSGS[msg].name);
  return qpb_enc_msg(&e, msg, obj, 0);
}

/* The decoded length of a JSON string value (its text may hold \u0000, which ends v->str). */
static size_t qpb_qj_strlen(const vf_json_val *v) {
  size_t n = strlen(v->str);
  if (v->raw_len < 2 || !memmem(v->raw, v->raw_len, "\\u0000", 6)) return n;
  char *d = vf_malloc(v->raw_len);
  const char *expected;
  if (d) vf_json_unescape(v->raw, 1, v->raw_len - 1, d, &n, &expected);
  free(d);
  return n;
}

/* json_with_int.proto: Value{null_value=1, double_value=2, integer_value=3, string_value=4,
 * bool_value=5, struct_value=6 (Struct{map<string, Value> fields=1}), list_value=7
 * (ListValue{repeated Value values=1})} */
static vf_status qpb_value_at(const vf_json_val *v, vf_buf *out, vf_error *err, int depth) {
  if (depth >= QPB_MAX_DEPTH)
    return vf_error_set(err, VF_EUSAGE, "payload value nested deeper than %d", QPB_MAX_DEPTH);
  vf_status st = VF_OK;
  int64_t s;
  uint64_t u;
  size_t m1, m2, m3;
  switch (v->t) {
  case VF_JSON_NULL: return qpb_add_varint(out, 1, 0, err);
  case VF_JSON_BOOL: return qpb_add_varint(out, 5, v->b ? 1 : 0, err);
  case VF_JSON_STR: return qpb_add_bytes(out, 4, v->str, qpb_qj_strlen(v), err);
  case VF_JSON_NUM:
    if (!memchr(v->raw, '.', v->raw_len) && !memchr(v->raw, 'e', v->raw_len) &&
        !memchr(v->raw, 'E', v->raw_len) && qpb_json_int(v, true, &s, &u))
      return qpb_add_varint(out, 3, (uint64_t)s, err);
    return qpb_add_double(out, 2, v->num, err);
  case VF_JSON_ARR:
    VF_TRY(qpb_begin(out, 7, &m1, err));
    for (size_t i = 0; i < v->n; i++) {
      VF_TRY(qpb_begin(out, 1, &m2, err));
      VF_TRY(qpb_value_at(&v->items[i], out, err, depth + 1));
      VF_TRY(qpb_end(out, m2, err));
    }
    VF_TRY(qpb_end(out, m1, err));
    break;
  case VF_JSON_OBJ:
    VF_TRY(qpb_begin(out, 6, &m1, err));
    for (size_t i = 0; i < v->n; i++) {
      VF_TRY(qpb_begin(out, 1, &m2, err));
      VF_TRY(qpb_add_bytes(out, 1, v->keys[i], strlen(v->keys[i]), err));
      VF_TRY(qpb_begin(out, 2, &m3, err));
      VF_TRY(qpb_value_at(&v->items[i], out, err, depth + 1));
      VF_TRY(qpb_end(out, m3, err));
      VF_TRY(qpb_end(out, m2, err));
    }
    VF_TRY(qpb_end(out, m1, err));
    break;
  }
out:
  return st;
}

/* qpb_encode_value(): see qdrant_pb.h. */
vf_status qpb_encode_value(const vf_json_val *v, const char *path, vf_buf *out, vf_error *err) {
  vf_status st = qpb_value_at(v, out, err, 0);
  if (st != VF_OK && path) vf_error_prefix(err, "%s: ", path);
  return st;
}

/* ------------------------------------------------------------ REST filter -> Filter */

/* Qdrant's REST Filter (openapi.json `Filter`, `Condition`, `FieldCondition`, `Match`,
 * `RangeInterface`) and the proto Filter (qdrant_common.proto) differ in shape: REST tells a
 * condition's kind by its keys, the proto by a oneof member; REST `match` holds `value` of any
 * type, the proto a member per type; a REST range with RFC 3339 strings is a proto
 * DatetimeRange of Timestamps.  Field numbers below are the protos' (checked against the tables
 * by tests/store/test_qdrant_grpc.c, which decodes the output through them). */
enum {
  FF_SHOULD = 1, FF_MUST = 2, FF_MUST_NOT = 3, FF_MIN_SHOULD = 4, FMS_CONDITIONS = 1,
  FMS_MIN_COUNT = 2,
  FC_FIELD = 1, FC_IS_EMPTY = 2, FC_HAS_ID = 3, FC_FILTER = 4, FC_IS_NULL = 5, FC_NESTED = 6,
  FC_HAS_VECTOR = 7,
  FFC_KEY = 1, FFC_MATCH = 2, FFC_RANGE = 3, FFC_GEO_BOX = 4, FFC_GEO_RADIUS = 5,
  FFC_VALUES_COUNT = 6, FFC_GEO_POLYGON = 7, FFC_DATETIME_RANGE = 8, FFC_IS_EMPTY = 9,
  FFC_IS_NULL = 10,
  FM_KEYWORD = 1, FM_INTEGER = 2, FM_BOOLEAN = 3, FM_TEXT = 4, FM_KEYWORDS = 5, FM_INTEGERS = 6,
  FM_EXCEPT_INTEGERS = 7, FM_EXCEPT_KEYWORDS = 8, FM_PHRASE = 9, FM_TEXT_ANY = 10, FM_PREFIX = 11
};

static vf_status qpb_filter_body(qpb_enc *e, const vf_json_val *f, int depth);

/* RFC 3339 ("2024-05-01T10:00:00.5Z", "2024-05-01 10:00:00+02:00", "2024-05-01") -> seconds
 * since the epoch and nanoseconds; false when it is none of these. */
static bool qpb_rfc3339(const char *s, int64_t *sec, int32_t *nanos) {
  int y, mo, d, h = 0, mi = 0, se = 0, n = 0;
  if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) return false;
  const char *p = s + 10;
  long frac = 0;
  int fd = 0;
  if (*p == 'T' || *p == 't' || *p == ' ') {
    int m2 = 0;
    if (sscanf(p + 1, "%2d:%2d:%2d%n", &h, &mi, &se, &m2) != 3 || m2 != 8) return false;
    p += 9;
    if (*p == '.') {
      p++;
      while (*p >= '0' && *p <= '9') {
        if (fd < 9) {
          frac = frac * 10 + (*p - '0');
          fd++;
        }
        p++;
      }
      if (fd == 0) return false;
    }
  }
  while (fd > 0 && fd < 9) {
    frac *= 10;
    fd++;
  }
  int off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om, m3 = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &m3) != 2 || m3 != 5) return false;
    off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
    p += 6;
  }
  if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  /* days from civil (Howard Hinnant's algorithm): no timegm, no time zone */
  int yy = y - (mo <= 2);
  int era = (yy >= 0 ? yy : yy - 399) / 400;
  int yoe = yy - era * 400;
  int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = (int64_t)era * 146097 + doe - 719468;
  *sec = days * 86400 + h * 3600 + mi * 60 + se - off;
  *nanos = (int32_t)frac;
  return true;
}

/* `match`: MatchValue / MatchText / MatchTextAny / MatchPhrase / MatchPrefix / MatchAny /
 * MatchExcept -> Match */
static vf_status qpb_filter_match(qpb_enc *e, const vf_json_val *m) {
  vf_buf *b = e->out;
  if (m->t != VF_JSON_OBJ || m->n != 1) return qpb_enc_fail(e, "expected one of value, text, text_any, phrase, prefix, any, except", NULL, NULL);
  const char *k = m->keys[0];
  const vf_json_val *v = &m->items[0];
  int64_t s;
  uint64_t u;
  static const struct { const char *key; uint32_t field; } texts[] = {
      {"text", FM_TEXT}, {"text_any", FM_TEXT_ANY}, {"phrase", FM_PHRASE}, {"prefix", FM_PREFIX}};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    if (strcmp(k, texts[i].key) == 0) {
      if (v->t != VF_JSON_STR) return qpb_enc_fail(e, "expected a string for match.", k, NULL);
      return qpb_add_bytes(b, texts[i].field, v->str, qpb_qj_strlen(v), e->err);
    }
  if (strcmp(k, "value") == 0) {
    if (v->t == VF_JSON_STR) return qpb_add_bytes(b, FM_KEYWORD, v->str, qpb_qj_strlen(v), e->err);
    if (v->t == VF_JSON_BOOL) return qpb_add_varint(b, FM_BOOLEAN, v->b ? 1 : 0, e->err);
    if (v->t == VF_JSON_NUM && qpb_json_int(v, true, &s, &u))
      return qpb_add_varint(b, FM_INTEGER, (uint64_t)s, e->err);
    return qpb_enc_fail(e, "match.value: expected a string, an integer or a boolean", NULL, NULL);
  }
  bool any = strcmp(k, "any") == 0;
  if (!any && strcmp(k, "except") != 0) return qpb_enc_fail(e, "unknown match kind ", k, NULL);
  if (v->t != VF_JSON_ARR) return qpb_enc_fail(e, "expected an array for match.", k, NULL);
  bool ints = v->n > 0 && v->items[0].t == VF_JSON_NUM;
  size_t m1, m2;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(b, any ? (ints ? FM_INTEGERS : FM_KEYWORDS)
                          : (ints ? FM_EXCEPT_INTEGERS : FM_EXCEPT_KEYWORDS), &m1, e->err));
  if (ints) VF_TRY(qpb_begin(b, 1, &m2, e->err)); /* RepeatedIntegers.integers, packed */
  for (size_t i = 0; i < v->n; i++) {
    const vf_json_val *x = &v->items[i];
    if (ints) {
      if (x->t != VF_JSON_NUM || !qpb_json_int(x, true, &s, &u))
        return qpb_enc_fail(e, "match.", k, ": expected integers only");
      VF_TRY(vf_buf_reserve(b, 10, e->err));
      qpb_put_varint(b, (uint64_t)s);
    } else {
      if (x->t != VF_JSON_STR) return qpb_enc_fail(e, "match.", k, ": expected strings only");
      VF_TRY(qpb_add_bytes(b, 1, x->str, qpb_qj_strlen(x), e->err)); /* RepeatedStrings.strings */
    }
  }
  if (ints) VF_TRY(qpb_end(b, m2, e->err));
  VF_TRY(qpb_end(b, m1, e->err));
out:
  return st;
}

/* `range`: numbers -> Range (3); RFC 3339 strings -> DatetimeRange (8) of Timestamps */
static vf_status qpb_filter_range(qpb_enc *e, const vf_json_val *r) {
  if (r->t != VF_JSON_OBJ) return qpb_enc_fail(e, "expected an object for range", NULL, NULL);
  bool dt = false;
  for (size_t i = 0; i < r->n; i++)
    if (r->items[i].t == VF_JSON_STR) dt = true;
  if (!dt) return qpb_enc_submsg(e, FFC_RANGE, QPB_M_qdrant_Range, r, 1);
  static const char *const keys[] = {"lt", "gt", "gte", "lte"};
  size_t m1;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(e->out, FFC_DATETIME_RANGE, &m1, e->err));
  for (size_t i = 0; i < r->n; i++) {
    const vf_json_val *x = &r->items[i];
    if (x->t == VF_JSON_NULL) continue;
    uint32_t field = 0;
    for (uint32_t k = 0; k < 4; k++)
      if (strcmp(r->keys[i], keys[k]) == 0) field = k + 1;
    int64_t sec;
    int32_t ns;
    if (!field) return qpb_enc_fail(e, "range: unknown bound ", r->keys[i], NULL);
    if (x->t != VF_JSON_STR || !qpb_rfc3339(x->str, &sec, &ns))
      return qpb_enc_fail(e, "range.", r->keys[i], ": expected an RFC 3339 date-time");
    size_t m2; /* google.protobuf.Timestamp{seconds = 1, nanos = 2} */
    VF_TRY(qpb_begin(e->out, field, &m2, e->err));
    if (sec) VF_TRY(qpb_add_varint(e->out, 1, (uint64_t)sec, e->err));
    if (ns) VF_TRY(qpb_add_varint(e->out, 2, (uint64_t)ns, e->err));
    VF_TRY(qpb_end(e->out, m2, e->err));
  }
  VF_TRY(qpb_end(e->out, m1, e->err));
out:
  return st;
}

/* One Condition (field `num` of the enclosing message): its kind by its keys. */
static vf_status qpb_filter_condition(qpb_enc *e, uint32_t num, const vf_json_val *c, int depth) {
  if (depth >= QPB_MAX_DEPTH) return qpb_enc_fail(e, "filter nested too deeply", NULL, NULL);
  if (c->t != VF_JSON_OBJ) return qpb_enc_fail(e, "expected a condition object", NULL, NULL);
  vf_buf *b = e->out;
  size_t m1, m2;
  vf_status st = VF_OK;
  VF_TRY(qpb_begin(b, num, &m1, e->err));
  const vf_json_val *key = vf_json_get(c, "key"), *x;
  if (key) { /* FieldCondition */
    if (key->t != VF_JSON_STR) return qpb_enc_fail(e, "key: expected a string", NULL, NULL);
    VF_TRY(qpb_begin(b, FC_FIELD, &m2, e->err));
    VF_TRY(qpb_add_bytes(b, FFC_KEY, key->str, qpb_qj_strlen(key), e->err));
    for (size_t i = 0; i < c->n; i++) {
      const char *k = c->keys[i];
      const vf_json_val *v = &c->items[i];
      if (strcmp(k, "key") == 0 || v->t == VF_JSON_NULL) continue;
      size_t at = qpb_push(e, k), mm;
      if (strcmp(k, "match") == 0) {
        VF_TRY(qpb_begin(b, FFC_MATCH, &mm, e->err));
        VF_TRY(qpb_filter_match(e, v));
        st = qpb_end(b, mm, e->err);
      } else if (strcmp(k, "range") == 0) {
        st = qpb_filter_range(e, v);
      } else if (strcmp(k, "geo_bounding_box") == 0) {
        st = qpb_enc_submsg(e, FFC_GEO_BOX, QPB_M_qdrant_GeoBoundingBox, v, depth + 1);
      } else if (strcmp(k, "geo_radius") == 0) {
        st = qpb_enc_submsg(e, FFC_GEO_RADIUS, QPB_M_qdrant_GeoRadius, v, depth + 1);
      } else if (strcmp(k, "geo_polygon") == 0) {
        st = qpb_enc_submsg(e, FFC_GEO_POLYGON, QPB_M_qdrant_GeoPolygon, v, depth + 1);
      } else if (strcmp(k, "values_count") == 0) {
        st = qpb_enc_submsg(e, FFC_VALUES_COUNT, QPB_M_qdrant_ValuesCount, v, depth + 1);
      } else if (strcmp(k, "is_empty") == 0 || strcmp(k, "is_null") == 0) {
        st = qpb_enc_scalar(e, k[3] == 'e' ? FFC_IS_EMPTY : FFC_IS_NULL, QPB_BOOL, -1, v);
      } else {
        st = qpb_enc_fail(e, "not a field condition key", NULL, NULL);
      }
      qpb_pop(e, at);
      VF_TRY(st);
    }
    VF_TRY(qpb_end(b, m2, e->err));
  } else if ((x = vf_json_get(c, "is_empty")) || (x = vf_json_get(c, "is_null"))) {
    const vf_json_val *k = vf_json_get(x, "key");
    if (!k || k->t != VF_JSON_STR) return qpb_enc_fail(e, "expected {key: ...}", NULL, NULL);
    VF_TRY(qpb_begin(b, x == vf_json_get(c, "is_empty") ? FC_IS_EMPTY : FC_IS_NULL, &m2, e->err));
    VF_TRY(qpb_add_bytes(b, 1, k->str, qpb_qj_strlen(k), e->err));
    VF_TRY(qpb_end(b, m2, e->err));
  } else if ((x = vf_json_get(c, "has_id"))) {
    if (x->t != VF_JSON_ARR) return qpb_enc_fail(e, "has_id: expected an array of ids", NULL, NULL);
    VF_TRY(qpb_begin(b, FC_HAS_ID, &m2, e->err));
    for (size_t i = 0; i < x->n; i++) { /* PointId{num = 1 | uuid = 2} */
      const vf_json_val *id = &x->items[i];
      int64_t s;
      uint64_t u;
      size_t m3;
      VF_TRY(qpb_begin(b, 1, &m3, e->err));
      if (id->t == VF_JSON_STR) VF_TRY(qpb_add_bytes(b, 2, id->str, strlen(id->str), e->err));
      else if (id->t == VF_JSON_NUM && qpb_json_int(id, false, &s, &u))
        VF_TRY(qpb_add_varint(b, 1, u, e->err));
      else
        VF_FAIL(qpb_enc_fail(e, "has_id: an id is neither an unsigned integer nor a UUID", NULL,
                             NULL));
      VF_TRY(qpb_end(b, m3, e->err));
    }
    VF_TRY(qpb_end(b, m2, e->err));
  } else if ((x = vf_json_get(c, "has_vector"))) {
    if (x->t != VF_JSON_STR) return qpb_enc_fail(e, "has_vector: expected a vector name", NULL, NULL);
    VF_TRY(qpb_begin(b, FC_HAS_VECTOR, &m2, e->err));
    VF_TRY(qpb_add_bytes(b, 1, x->str, strlen(x->str), e->err));
    VF_TRY(qpb_end(b, m2, e->err));
  } else if ((x = vf_json_get(c, "nested"))) { /* NestedCondition{key = 1, filter = 2} */
    const vf_json_val *k = vf_json_get(x, "key"), *f = vf_json_get(x, "filter");
    if (!k || k->t != VF_JSON_STR || !f) return qpb_enc_fail(e, "nested: expected {key, filter}", NULL, NULL);
    size_t m3;
    VF_TRY(qpb_begin(b, FC_NESTED, &m2, e->err));
    VF_TRY(qpb_add_bytes(b, 1, k->str, strlen(k->str), e->err));
    VF_TRY(qpb_begin(b, 2, &m3, e->err));
    VF_TRY(qpb_filter_body(e, f, depth + 1));
    VF_TRY(qpb_end(b, m3, e->err));
    VF_TRY(qpb_end(b, m2, e->err));
  } else if (vf_json_get(c, "must") || vf_json_get(c, "should") || vf_json_get(c, "must_not") ||
             vf_json_get(c, "min_should")) {
    VF_TRY(qpb_begin(b, FC_FILTER, &m2, e->err));
    VF_TRY(qpb_filter_body(e, c, depth + 1));
    VF_TRY(qpb_end(b, m2, e->err));
  } else {
    return qpb_enc_fail(e, "not a filter condition (key, is_empty, is_null, has_id, has_vector, "
                        "nested, or a nested filter)", NULL, NULL);
  }
  VF_TRY(qpb_end(b, m1, e->err));
out:
  return st;
}

/* A condition or an array of them as repeated field `num`. */
static vf_status qpb_filter_list(qpb_enc *e, uint32_t num, const vf_json_val *v, int depth) {
  if (v->t != VF_JSON_ARR) return qpb_filter_condition(e, num, v, depth);
  vf_status st = VF_OK;
  for (size_t i = 0; i < v->n; i++) {
    char ix[24];
    snprintf(ix, sizeof ix, "%zu", i);
    size_t at = qpb_push(e, ix);
    st = qpb_filter_condition(e, num, &v->items[i], depth);
    qpb_pop(e, at);
    VF_TRY(st);
  }
out:
  return st;
}

static vf_status qpb_filter_body(qpb_enc *e, const vf_json_val *f, int depth) {
  if (f->t != VF_JSON_OBJ) return qpb_enc_fail(e, "expected a filter object", NULL, NULL);
  vf_status st = VF_OK;
  for (size_t i = 0; i < f->n; i++) {
    const char *k = f->keys[i];
    const vf_json_val *v = &f->items[i];
    if (v->t == VF_JSON_NULL) continue;
    size_t at = qpb_push(e, k);
    if (strcmp(k, "must") == 0) {
      st = qpb_filter_list(e, FF_MUST, v, depth);
    } else if (strcmp(k, "should") == 0) {
      st = qpb_filter_list(e, FF_SHOULD, v, depth);
    } else if (strcmp(k, "must_not") == 0) {
      st = qpb_filter_list(e, FF_MUST_NOT, v, depth);
    } else if (strcmp(k, "min_should") == 0) {
      const vf_json_val *cs = vf_json_get(v, "conditions"), *mc = vf_json_get(v, "min_count");
      if (!cs || !mc) {
        st = qpb_enc_fail(e, "expected {conditions, min_count}", NULL, NULL);
      } else {
        size_t m1;
        VF_TRY(qpb_begin(e->out, FF_MIN_SHOULD, &m1, e->err));
        VF_TRY(qpb_filter_list(e, FMS_CONDITIONS, cs, depth));
        VF_TRY(qpb_enc_scalar(e, FMS_MIN_COUNT, QPB_UINT64, -1, mc));
        st = qpb_end(e->out, m1, e->err);
      }
    } else {
      st = qpb_enc_fail(e, "not a filter key (must, should, must_not, min_should)", NULL, NULL);
    }
    qpb_pop(e, at);
    VF_TRY(st);
  }
out:
  return st;
}

/* qpb_filter_from_json(): see qdrant_pb.h. */
vf_status qpb_filter_from_json(const vf_json_val *filter, const char *path, vf_buf *out, vf_error *err) {
  qpb_enc e = {out, err, {0}};
  snprintf(e.path, sizeof e.path, "%s", path ? path : "filter");
  return qpb_filter_body(&e, filter, 0);
}

/* ------------------------------------------------------------ streamed payload */

typedef struct qpb_js {
  const char *s;
  size_t len, pos;
  const char *what;
  vf_buf *out;
  vf_error *err;
} qpb_js;

static vf_status qpb_js_fail(qpb_js *j, const char *expected) {
  return vf_error_set(j->err, VF_ECORRUPT, "%s: invalid JSON at byte %zu: expected %s", j->what,
                      j->pos, expected);
}

static void qpb_js_ws(qpb_js *j) {
  while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' ||
                             j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
    j->pos++;
}

/* A JSON string at j->pos as a length-delimited field `num`. */
static vf_status qpb_js_string(qpb_js *j, uint32_t num) {
  size_t start = ++j->pos;
  bool esc = false;
  while (j->pos < j->len && j->s[j->pos] != '"') {
    if (j->s[j->pos] == '\\') {
      esc = true;
      j->pos++;
    }
    j->pos++;
  }
  if (j->pos >= j->len) return qpb_js_fail(j, "a closing '\"'");
  size_t end = j->pos++;
  vf_status st = vf_buf_reserve(j->out, end - start + 16, j->err);
  if (st != VF_OK) return st;
  if (!esc) {
    for (size_t i = start; i < end; i++)
      if ((unsigned char)j->s[i] < 0x20) {
        j->pos = i;
        return qpb_js_fail(j, "no raw control character in a string");
      }
    qpb_put_len(j->out, num, end - start);
    vf_buf_put(j->out, j->s + start, end - start);
    return VF_OK;
  }
  /* decode behind a header sized for the longest result (the escaped length) */
  size_t hdr = qpb_varint_size((uint64_t)num << 3) + qpb_varint_size(end - start);
  char *d = (char *)j->out->data + j->out->len + hdr;
  size_t n = 0;
  const char *expected;
  size_t at = vf_json_unescape(j->s, start, end, d, &n, &expected);
  if (expected) {
    j->pos = at;
    return qpb_js_fail(j, expected);
  }
  size_t real_hdr = qpb_varint_size((uint64_t)num << 3) + qpb_varint_size(n);
  if (real_hdr != hdr) memmove(d - hdr + real_hdr, d, n);
  qpb_put_len(j->out, num, n);
  j->out->len += n;
  return VF_OK;
}

static vf_status qpb_js_value(qpb_js *j, int depth);

/* The members of an object at j->pos as map entries (field `num`: key=1, Value=2). */
static vf_status qpb_js_members(qpb_js *j, uint32_t num, int depth) {
  j->pos++; /* '{' */
  qpb_js_ws(j);
  if (j->pos < j->len && j->s[j->pos] == '}') {
    j->pos++;
    return VF_OK;
  }
  vf_status st = VF_OK;
  for (;;) {
    qpb_js_ws(j);
    if (j->pos >= j->len || j->s[j->pos] != '"') return qpb_js_fail(j, "a member name");
    size_t m1, m2;
    VF_TRY(qpb_begin(j->out, num, &m1, j->err));
    VF_TRY(qpb_js_string(j, 1));
    qpb_js_ws(j);
    if (j->pos >= j->len || j->s[j->pos] != ':') return qpb_js_fail(j, "':'");
    j->pos++;
    VF_TRY(qpb_begin(j->out, 2, &m2, j->err));
    VF_TRY(qpb_js_value(j, depth + 1));
    VF_TRY(qpb_end(j->out, m2, j->err));
    VF_TRY(qpb_end(j->out, m1, j->err));
    qpb_js_ws(j);
    if (j->pos < j->len && j->s[j->pos] == ',') {
      j->pos++;
      continue;
    }
    if (j->pos < j->len && j->s[j->pos] == '}') {
      j->pos++;
      return VF_OK;
    }
    return qpb_js_fail(j, "',' or '}'");
  }
out:
  return st;
}

/* A JSON value at j->pos as the body of a Value message. */
static vf_status qpb_js_value(qpb_js *j, int depth) {
  if (depth >= QPB_MAX_DEPTH) return qpb_js_fail(j, "nesting of at most 48 levels");
  qpb_js_ws(j);
  if (j->pos >= j->len) return qpb_js_fail(j, "a value");
  char ch = j->s[j->pos];
  vf_status st = VF_OK;
  size_t m1, m2;
  if (ch == '{') {
    VF_TRY(qpb_begin(j->out, 6, &m1, j->err));
    VF_TRY(qpb_js_members(j, 1, depth));
    return qpb_end(j->out, m1, j->err);
  }
  if (ch == '[') {
    VF_TRY(qpb_begin(j->out, 7, &m1, j->err));
    j->pos++;
    qpb_js_ws(j);
    if (j->pos < j->len && j->s[j->pos] == ']') {
      j->pos++;
      return qpb_end(j->out, m1, j->err);
    }
    for (;;) {
      VF_TRY(qpb_begin(j->out, 1, &m2, j->err));
      VF_TRY(qpb_js_value(j, depth + 1));
      VF_TRY(qpb_end(j->out, m2, j->err));
      qpb_js_ws(j);
      if (j->pos < j->len && j->s[j->pos] == ',') {
        j->pos++;
        continue;
      }
      if (j->pos < j->len && j->s[j->pos] == ']') {
        j->pos++;
        return qpb_end(j->out, m1, j->err);
      }
      return qpb_js_fail(j, "',' or ']'");
    }
  }
  if (ch == '"') return qpb_js_string(j, 4);
  if (j->len - j->pos >= 4 && memcmp(j->s + j->pos, "true", 4) == 0) {
    j->pos += 4;
    return qpb_add_varint(j->out, 5, 1, j->err);
  }
  if (j->len - j->pos >= 5 && memcmp(j->s + j->pos, "false", 5) == 0) {
    j->pos += 5;
    return qpb_add_varint(j->out, 5, 0, j->err);
  }
  if (j->len - j->pos >= 4 && memcmp(j->s + j->pos, "null", 4) == 0) {
    j->pos += 4;
    return qpb_add_varint(j->out, 1, 0, j->err);
  }
  const char *expected;
  size_t end = vf_json_scan_number(j->s, j->len, j->pos, &expected);
  if (expected) return qpb_js_fail(j, expected);
  const char *t = j->s + j->pos;
  size_t n = end - j->pos;
  j->pos = end;
  bool integral = !memchr(t, '.', n) && !memchr(t, 'e', n) && !memchr(t, 'E', n);
  bool neg = t[0] == '-';
  if (integral && n - (neg ? 1 : 0) <= 19) { /* fits int64 unless 19 digits exceed it */
    uint64_t v = 0;
    bool over = false;
    for (size_t i = neg ? 1 : 0; i < n; i++) {
      uint64_t d = (uint64_t)(t[i] - '0');
      if (v > (UINT64_MAX - d) / 10) over = true;
      v = v * 10 + d;
    }
    if (!over && v <= (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
      return qpb_add_varint(j->out, 3, neg ? (uint64_t)0 - v : v, j->err);
  }
  char tmp[64];
  double d;
  if (n < sizeof tmp) {
    memcpy(tmp, t, n);
    tmp[n] = 0;
    d = strtod(tmp, NULL);
  } else {
    char *big = vf_strndup(t, n);
    if (!big) return vf_error_set(j->err, VF_ENOMEM, "%s: out of memory", j->what);
    d = strtod(big, NULL);
    free(big);
  }
  return qpb_add_double(j->out, 2, d, j->err);
out:
  return st;
}

/* qpb_payload_from_json(): see qdrant_pb.h. */
vf_status qpb_payload_from_json(const char *json, size_t len, uint32_t field, const char *what,
                                vf_buf *out, vf_error *err) {
  qpb_js j = {json, len, 0, what, out, err};
  qpb_js_ws(&j);
  if (j.pos >= len || json[j.pos] != '{') return qpb_js_fail(&j, "an object");
  vf_status st = qpb_js_members(&j, field, 0);
  if (st != VF_OK) return st;
  qpb_js_ws(&j);
  return j.pos == len ? VF_OK : qpb_js_fail(&j, "the end of the payload");
}

/* ------------------------------------------------------------ reader */

/* qpb_next(): see qdrant_pb.h. */
int qpb_next(vf_cursor *c, qpb_item *it) {
  if (vf_cur_remaining(c) == 0) return 0;
  uint64_t tag;
  if (!vf_cur_uvarint(c, &tag) || (tag >> 3) == 0 || (tag >> 3) > 536870911u) return -1;
  it->field = (uint32_t)(tag >> 3);
  it->wt = (int)(tag & 7);
  it->p = NULL;
  it->n = 0;
  it->v = 0;
  const uint8_t *p;
  switch (it->wt) {
  case QPB_WT_VARINT: return vf_cur_uvarint(c, &it->v) ? 1 : -1;
  case QPB_WT_I64:
    if (!vf_cur_take(c, 8, &p)) return -1;
    memcpy(&it->v, p, 8);
    return 1;
  case QPB_WT_I32: {
    uint32_t x;
    if (!vf_cur_u32le(c, &x)) return -1;
    it->v = x;
    return 1;
  }
  case QPB_WT_LEN: {
    uint64_t n;
    if (!vf_cur_uvarint(c, &n) || !vf_cur_take(c, n, &p)) return -1;
    it->p = p;
    it->n = (size_t)n;
    return 1;
  }
  default: return -1; /* groups (3, 4) are not used by proto3; 6, 7 are invalid */
  }
}

/* ------------------------------------------------------------ wire -> JSON */

typedef struct qpb_dec {
  vf_buf *out;
  vf_error *err;
  const char *what;
  const uint8_t *base; /* the whole message, for offsets */
} qpb_dec;

static vf_status qpb_dec_fail(qpb_dec *d, const char *msg, const uint8_t *at, const char *detail) {
  return vf_error_set(d->err, VF_ECORRUPT, "%s: malformed %s at byte %zu%s%s", d->what, msg,
                      (size_t)(at - d->base), detail ? ": " : "", detail ? detail : "");
}

static vf_status qpb_dec_msg(qpb_dec *d, int msg, const uint8_t *p, size_t n, int depth);

/* The REST spelling of an enum value: Distance names as they are ("Cosine"), every other enum
 * in snake case ("Green" -> "green", "MaxSim" -> "max_sim", "Int8" -> "int8"). */
static vf_status qpb_dec_enum(qpb_dec *d, int e, int64_t v) {
  const qpb_enum *en = &QPB_ENUMS[e];
  const char *name = NULL;
  for (uint16_t i = 0; i < en->nvalues; i++)
    if (en->values[i].number == v) name = en->values[i].name;
  if (!name) return vf_buf_printf(d->out, d->err, "%lld", (long long)v);
  char s[128];
  size_t n = 0;
  bool keep = strcmp(en->name, "qdrant.Distance") == 0;
  for (const char *c = name; *c && n + 3 < sizeof s; c++) {
    if (!keep && *c >= 'A' && *c <= 'Z') {
      if (c != name && ((c[-1] >= 'a' && c[-1] <= 'z') || (c[-1] >= '0' && c[-1] <= '9')))
        s[n++] = '_';
      s[n++] = (char)(*c + 32);
    } else {
      s[n++] = *c;
    }
  }
  return vf_json_string(d->out, s, n, d->err);
}

static vf_status qpb_dec_number(qpb_dec *d, double x) {
  if (!isfinite(x)) return vf_json_raw(d->out, "null", d->err);
  return vf_buf_printf(d->out, d->err, "%.17g", x);
}

/* One scalar value (`it` of a field of type `type`). */
static vf_status qpb_dec_scalar(qpb_dec *d, int type, int ref, uint64_t v, const uint8_t *p,
                                size_t n) {
  switch (type) {
  case QPB_BOOL: return vf_json_raw(d->out, v ? "true" : "false", d->err);
  case QPB_STRING: return vf_json_string(d->out, (const char *)p, n, d->err);
  case QPB_BYTES: return vf_json_raw(d->out, "null", d->err);
  case QPB_DOUBLE: {
    double x;
    memcpy(&x, &v, 8);
    return qpb_dec_number(d, x);
  }
  case QPB_FLOAT: {
    uint32_t bits = (uint32_t)v;
    float x;
    memcpy(&x, &bits, 4);
    if (!isfinite(x)) return vf_json_raw(d->out, "null", d->err);
    return vf_buf_printf(d->out, d->err, "%.9g", (double)x);
  }
  case QPB_ENUM: return qpb_dec_enum(d, ref, (int64_t)(int32_t)v);
  case QPB_INT64:
  case QPB_SFIXED64: return vf_buf_printf(d->out, d->err, "%lld", (long long)v);
  case QPB_INT32: return vf_buf_printf(d->out, d->err, "%d", (int)(int32_t)v);
  case QPB_SFIXED32: return vf_buf_printf(d->out, d->err, "%d", (int)(int32_t)(uint32_t)v);
  case QPB_SINT32:
  case QPB_SINT64:
    return vf_buf_printf(d->out, d->err, "%lld", (long long)((int64_t)(v >> 1) ^ -(int64_t)(v & 1)));
  default: return vf_buf_printf(d->out, d->err, "%llu", (unsigned long long)v);
  }
}

static int qpb_wire_of(int type) {
  switch (type) {
  case QPB_DOUBLE:
  case QPB_FIXED64:
  case QPB_SFIXED64: return QPB_WT_I64;
  case QPB_FLOAT:
  case QPB_FIXED32:
  case QPB_SFIXED32: return QPB_WT_I32;
  case QPB_STRING:
  case QPB_BYTES:
  case QPB_MESSAGE: return QPB_WT_LEN;
  default: return QPB_WT_VARINT;
  }
}

/* A value of field type `type` from item `it` (checked wire type). */
static vf_status qpb_dec_item(qpb_dec *d, int type, int ref, const qpb_item *it, int depth) {
  if (it->wt != qpb_wire_of(type)) return qpb_dec_fail(d, "field", it->p ? it->p : d->base, "wrong wire type");
  if (type == QPB_MESSAGE) return qpb_dec_msg(d, ref, it->p, it->n, depth + 1);
  return qpb_dec_scalar(d, type, ref, it->v, it->p, it->n);
}

/* Elements of a packed run: writes each as a JSON array element. */
static vf_status qpb_dec_packed(qpb_dec *d, int type, int ref, const qpb_item *it, bool *first) {
  vf_cursor c;
  vf_cur_init(&c, it->p, it->n, 0);
  int wt = qpb_wire_of(type);
  vf_status st = VF_OK;
  while (vf_cur_remaining(&c) > 0) {
    uint64_t v = 0;
    const uint8_t *q;
    bool ok = wt == QPB_WT_VARINT ? vf_cur_uvarint(&c, &v)
              : wt == QPB_WT_I64  ? (vf_cur_take(&c, 8, &q) && (memcpy(&v, q, 8), true))
                                  : (vf_cur_take(&c, 4, &q) && (memcpy(&v, q, 4), true));
    if (!ok) return qpb_dec_fail(d, "packed field", it->p, NULL);
    bool comma = !*first;
    *first = false;
    if (comma) VF_TRY(vf_json_raw(d->out, ",", d->err));
    VF_TRY(qpb_dec_scalar(d, type, ref, v, NULL, 0));
  }
out:
  return st;
}

/* A map entry (key = 1, value = 2) as `"key":value`. */
static vf_status qpb_dec_entry(qpb_dec *d, const qpb_field *f, const qpb_item *it, int depth) {
  vf_cursor c;
  vf_cur_init(&c, it->p, it->n, 0);
  qpb_item x, key = {0}, val = {0};
  bool have_key = false, have_val = false;
  int r;
  while ((r = qpb_next(&c, &x)) == 1) {
    if (x.field == 1) {
      key = x;
      have_key = true;
    } else if (x.field == 2) {
      val = x;
      have_val = true;
    }
  }
  if (r < 0) return qpb_dec_fail(d, "map entry", it->p, NULL);
  vf_status st = VF_OK;
  if (f->map_key == QPB_STRING) {
    if (have_key && key.wt != QPB_WT_LEN) return qpb_dec_fail(d, "map key", it->p, NULL);
    VF_TRY(vf_json_string(d->out, have_key ? (const char *)key.p : "", have_key ? key.n : 0,
                          d->err));
  } else {
    VF_TRY(vf_buf_printf(d->out, d->err, "\"%llu\"", (unsigned long long)(have_key ? key.v : 0)));
  }
  VF_TRY(vf_json_raw(d->out, ":", d->err));
  if (!have_val) {
    if (f->map_val == QPB_MESSAGE) return qpb_dec_msg(d, f->map_ref, NULL, 0, depth + 1);
    qpb_item z = {0};
    z.wt = qpb_wire_of(f->map_val);
    return qpb_dec_item(d, f->map_val, f->map_ref, &z, depth);
  }
  return qpb_dec_item(d, f->map_val, f->map_ref, &val, depth);
out:
  return st;
}

/* Value / Struct / ListValue bodies as plain JSON. */
static vf_status qpb_dec_value(qpb_dec *d, const uint8_t *p, size_t n, int depth);

static vf_status qpb_dec_struct(qpb_dec *d, const uint8_t *p, size_t n, int depth) {
  vf_cursor c;
  vf_cur_init(&c, p, n, 0);
  qpb_item it;
  int r;
  bool first = true;
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(d->out, "{", d->err));
  while ((r = qpb_next(&c, &it)) == 1) {
    if (it.field != 1 || it.wt != QPB_WT_LEN) continue;
    vf_cursor e;
    vf_cur_init(&e, it.p, it.n, 0);
    qpb_item x, key = {0}, val = {0};
    int r2;
    while ((r2 = qpb_next(&e, &x)) == 1) {
      if (x.field == 1 && x.wt == QPB_WT_LEN) key = x;
      if (x.field == 2 && x.wt == QPB_WT_LEN) val = x;
    }
    if (r2 < 0) return qpb_dec_fail(d, "Struct entry", it.p, NULL);
    if (!first) VF_TRY(vf_json_raw(d->out, ",", d->err));
    first = false;
    VF_TRY(vf_json_string(d->out, key.p ? (const char *)key.p : "", key.n, d->err));
    VF_TRY(vf_json_raw(d->out, ":", d->err));
    VF_TRY(qpb_dec_value(d, val.p, val.n, depth + 1));
  }
  if (r < 0) return qpb_dec_fail(d, "Struct", p, NULL);
  VF_TRY(vf_json_raw(d->out, "}", d->err));
out:
  return st;
}

static vf_status qpb_dec_value(qpb_dec *d, const uint8_t *p, size_t n, int depth) {
  if (depth >= QPB_MAX_DEPTH) return qpb_dec_fail(d, "Value", p ? p : d->base, "nested too deeply");
  vf_cursor c;
  vf_cur_init(&c, p, n, 0);
  qpb_item it, last = {0};
  int r;
  bool any = false;
  while ((r = qpb_next(&c, &it)) == 1)
    if (it.field >= 1 && it.field <= 7) {
      last = it;
      any = true;
    }
  if (r < 0) return qpb_dec_fail(d, "Value", p, NULL);
  if (!any) return vf_json_raw(d->out, "null", d->err);
  static const int wt[8] = {0, QPB_WT_VARINT, QPB_WT_I64, QPB_WT_VARINT, QPB_WT_LEN,
                            QPB_WT_VARINT, QPB_WT_LEN, QPB_WT_LEN};
  if (last.wt != wt[last.field]) return qpb_dec_fail(d, "Value", p, "wrong wire type");
  vf_status st = VF_OK;
  switch (last.field) {
  case 1: return vf_json_raw(d->out, "null", d->err);
  case 2: {
    double x;
    memcpy(&x, &last.v, 8);
    return qpb_dec_number(d, x);
  }
  case 3: return vf_buf_printf(d->out, d->err, "%lld", (long long)last.v);
  case 4: return vf_json_string(d->out, (const char *)last.p, last.n, d->err);
  case 5: return vf_json_raw(d->out, last.v ? "true" : "false", d->err);
  case 6: return qpb_dec_struct(d, last.p, last.n, depth + 1);
  default: {
    vf_cursor l;
    vf_cur_init(&l, last.p, last.n, 0);
    VF_TRY(vf_json_raw(d->out, "[", d->err));
    bool first = true;
    while ((r = qpb_next(&l, &it)) == 1) {
      if (it.field != 1 || it.wt != QPB_WT_LEN) continue;
      if (!first) VF_TRY(vf_json_raw(d->out, ",", d->err));
      first = false;
      VF_TRY(qpb_dec_value(d, it.p, it.n, depth + 1));
    }
    if (r < 0) return qpb_dec_fail(d, "ListValue", last.p, NULL);
    VF_TRY(vf_json_raw(d->out, "]", d->err));
  }
  }
out:
  return st;
}

/* The items of one message, grouped by field afterwards. */
typedef struct qpb_slot {
  const qpb_field *f;
  qpb_item it;
} qpb_slot;

static int qpb_slot_cmp(const void *a, const void *b) {
  const qpb_slot *x = a, *y = b;
  if (x->f->number != y->f->number) return x->f->number < y->f->number ? -1 : 1;
  return x->it.p < y->it.p ? -1 : x->it.p > y->it.p; /* keep wire order within a field */
}

/* The REST rendering of a message whose JSON shape differs from the proto's; false when `msg`
 * renders generically. */
static bool qpb_dec_special(qpb_dec *d, int msg, const qpb_slot *s, size_t ns, int depth,
                            vf_status *stp) {
  const qpb_slot *a = ns ? &s[0] : NULL, *z = ns ? &s[ns - 1] : NULL; /* first / last */
  vf_status st = VF_OK;
  switch (msg) {
  case QPB_M_qdrant_OptimizerStatus: { /* "ok" | {"error": "..."} */
    const qpb_slot *err = NULL;
    bool ok = false;
    for (size_t i = 0; i < ns; i++) {
      if (s[i].f->number == 1 && s[i].it.wt == QPB_WT_VARINT) ok = s[i].it.v != 0;
      if (s[i].f->number == 2 && s[i].it.wt == QPB_WT_LEN) err = &s[i];
    }
    if (ok || !err || err->it.n == 0) {
      VF_TRY(vf_json_string(d->out, "ok", 2, d->err));
    } else {
      VF_TRY(vf_json_raw(d->out, "{\"error\":", d->err));
      VF_TRY(vf_json_string(d->out, (const char *)err->it.p, err->it.n, d->err));
      VF_TRY(vf_json_raw(d->out, "}", d->err));
    }
    break;
  }
  case QPB_M_qdrant_PointId: /* a number or a UUID string */
    if (!z) st = vf_json_raw(d->out, "null", d->err);
    else st = qpb_dec_item(d, z->f->type, z->f->ref, &z->it, depth);
    break;
  case QPB_M_qdrant_MaxOptimizationThreads: /* n | "auto" */
    if (!z) st = vf_json_raw(d->out, "null", d->err);
    else if (z->f->number == 1) st = qpb_dec_item(d, z->f->type, z->f->ref, &z->it, depth);
    else st = vf_json_string(d->out, "auto", 4, d->err);
    break;
  case QPB_M_qdrant_Value:
  case QPB_M_qdrant_Struct:
  case QPB_M_qdrant_ListValue: return false; /* handled by the caller with the raw bytes */
  case QPB_M_qdrant_VectorsConfig:
  case QPB_M_qdrant_VectorsConfigDiff:
  case QPB_M_qdrant_VectorParamsMap:
  case QPB_M_qdrant_VectorParamsDiffMap:
  case QPB_M_qdrant_SparseVectorConfig: { /* the wrapped object itself */
    if (!z) {
      st = vf_json_raw(d->out, "{}", d->err);
      break;
    }
    if (z->f->label == QPB_MAP) { /* every entry of the map */
      VF_TRY(vf_json_raw(d->out, "{", d->err));
      for (size_t i = 0; i < ns; i++) {
        if (i) VF_TRY(vf_json_raw(d->out, ",", d->err));
        VF_TRY(qpb_dec_entry(d, s[i].f, &s[i].it, depth));
      }
      VF_TRY(vf_json_raw(d->out, "}", d->err));
    } else {
      st = qpb_dec_item(d, z->f->type, z->f->ref, &z->it, depth);
    }
    (void)a;
    break;
  }
  default: return false;
  }
out:
  *stp = st;
  return true;
}

/* The JSON key of field f: REST renames. */
static const char *qpb_dec_key(int msg, const qpb_field *f) {
  (void)msg;
  if (strcmp(f->name, "vectors_config") == 0) return "vectors";
  if (strcmp(f->name, "sparse_vectors_config") == 0) return "sparse_vectors";
  return f->name;
}

static vf_status qpb_dec_msg(qpb_dec *d, int msg, const uint8_t *p, size_t n, int depth) {
  if (depth >= QPB_MAX_DEPTH) return qpb_dec_fail(d, QPB_MSGS[msg].name, p ? p : d->base, "nested too deeply");
  if (msg == QPB_M_qdrant_Value) return qpb_dec_value(d, p, n, depth);
  if (msg == QPB_M_qdrant_Struct) return qpb_dec_struct(d, p, n, depth);
  const qpb_msg *m = &QPB_MSGS[msg];
  qpb_slot *s = n ? vf_malloc((n / 2 + 1) * sizeof *s) : NULL;
  if (n && !s) return vf_error_set(d->err, VF_ENOMEM, "%s: out of memory", d->what);
  size_t ns = 0;
  vf_cursor c;
  vf_cur_init(&c, p, n, 0);
  qpb_item it;
  int r;
  vf_status st = VF_OK;
  while ((r = qpb_next(&c, &it)) == 1) {
    const qpb_field *f = qpb_field_by_number(msg, it.field);
    if (!f) continue; /* unknown to this client: skipped */
    s[ns].f = f;
    s[ns].it = it;
    ns++;
  }
  if (r < 0) VF_FAIL(qpb_dec_fail(d, m->name, c.p, NULL));
  if (ns > 1) qsort(s, ns, sizeof *s, qpb_slot_cmp);
  if (qpb_dec_special(d, msg, s, ns, depth, &st)) goto out;
  VF_TRY(vf_json_raw(d->out, "{", d->err));
  bool firstkey = true;
  size_t i = 0;
  for (uint16_t fi = 0; fi < m->nfields; fi++) {
    const qpb_field *f = &m->fields[fi];
    size_t j = i;
    while (j < ns && s[j].f == f)
      j++;
    bool present = j > i;
    if (!present && !(f->label == QPB_SINGULAR && f->oneof < 0 && f->type != QPB_MESSAGE &&
                      f->type != QPB_BYTES)) {
      continue;
    }
    if (!firstkey) VF_TRY(vf_json_raw(d->out, ",", d->err));
    firstkey = false;
    VF_TRY(vf_json_string(d->out, qpb_dec_key(msg, f), strlen(qpb_dec_key(msg, f)), d->err));
    VF_TRY(vf_json_raw(d->out, ":", d->err));
    if (!present) { /* proto3 default of an implicit-presence scalar */
      qpb_item z = {0};
      z.wt = qpb_wire_of(f->type);
      z.p = (const uint8_t *)"";
      VF_TRY(qpb_dec_item(d, f->type, f->ref, &z, depth));
      continue;
    }
    if (f->label == QPB_MAP) {
      VF_TRY(vf_json_raw(d->out, "{", d->err));
      for (size_t k = i; k < j; k++) {
        if (s[k].it.wt != QPB_WT_LEN) VF_FAIL(qpb_dec_fail(d, "map field", d->base, f->name));
        if (k > i) VF_TRY(vf_json_raw(d->out, ",", d->err));
        VF_TRY(qpb_dec_entry(d, f, &s[k].it, depth));
      }
      VF_TRY(vf_json_raw(d->out, "}", d->err));
    } else if (f->label == QPB_REPEATED) {
      VF_TRY(vf_json_raw(d->out, "[", d->err));
      bool first = true;
      for (size_t k = i; k < j; k++) {
        if (f->type != QPB_STRING && f->type != QPB_BYTES && f->type != QPB_MESSAGE &&
            s[k].it.wt == QPB_WT_LEN) {
          VF_TRY(qpb_dec_packed(d, f->type, f->ref, &s[k].it, &first));
          continue;
        }
        if (!first) VF_TRY(vf_json_raw(d->out, ",", d->err));
        first = false;
        VF_TRY(qpb_dec_item(d, f->type, f->ref, &s[k].it, depth));
      }
      VF_TRY(vf_json_raw(d->out, "]", d->err));
    } else {
      VF_TRY(qpb_dec_item(d, f->type, f->ref, &s[j - 1].it, depth)); /* the last one wins */
    }
    i = j;
  }
  VF_TRY(vf_json_raw(d->out, "}", d->err));
out:
  free(s);
  return st;
}

/* qpb_decode_json(): see qdrant_pb.h. */
vf_status qpb_decode_json(int msg, const uint8_t *p, size_t n, const char *what, vf_buf *json,
                          vf_error *err) {
  qpb_dec d = {json, err, what, p};
  if (!qpb_msg_at(msg)) return vf_error_set(err, VF_EUSAGE, "%s: no message %d", what, msg);
  return qpb_dec_msg(&d, msg, p, n, 0);
}
