/*
 * pqt_variant.c — Variant values (Spark 4, Iceberg, Snowflake, DuckDB) decoded to JSON.
 *
 * Spec: apache/parquet-format VariantEncoding.md.  A Variant is two binaries: `metadata` (header
 * byte: version 1 in the low 4 bits, sorted flag, offset size; then the dictionary of field
 * names: count, count + 1 offsets, the string bytes) and `value`, one self-describing value:
 * a header byte whose low 2 bits are the basic type —
 *   0 primitive (the upper 6 bits are the primitive type: null, true, false, int8..int64, double,
 *     decimal4/8/16 (a scale byte, then the unscaled value little-endian), date, timestamps in
 *     micros/nanos with and without time zone, float, binary and string (u32le length + bytes),
 *     time, uuid (16 bytes big-endian)),
 *   1 short string (length in the upper 6 bits),
 *   2 object (field id size, field offset size, 1- or 4-byte element count; then the ids, the
 *     count + 1 offsets relative to the first field value, the values),
 *   3 array (offset size, 1- or 4-byte count; the offsets, the values).
 * Shredded variants (VariantShredding.md) are reassembled in pqt_rows.c, which uses
 * pqt_variant_object_open/_field to merge a partially shredded object.
 *
 * JSON follows `cat`'s rules, so a variant field prints like a column of the same type: binary as
 * base64, NaN/inf as strings, timestamps "YYYY-MM-DD HH:MM:SS[.f]" ("+00" with a time zone),
 * decimals exact.  Object keys print in name order (the order the spec stores them in; objects
 * stored otherwise are reordered, as DuckDB reads them).
 *
 * Untrusted input, so: every offset and size is checked against the bytes that hold it; a field
 * id must index the dictionary; nesting stops at PQT_VARIANT_MAX_DEPTH; values may legally share
 * bytes (offsets are not required to be disjoint), so a 1 KiB value could reference itself into
 * an exponential tree — the number of values visited is capped at a multiple of the input size
 * and the rendered JSON at PQT_VARIANT_MAX_JSON plus a multiple of the input.  Every refusal is
 * VF_ECORRUPT (or VF_EUNSUPPORTED for an unknown primitive type, whose size cannot be known)
 * naming the byte offset inside the value.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

#define PQT_VARIANT_MAX_DEPTH 128
#define PQT_VARIANT_MAX_JSON ((size_t)64 << 20)

typedef struct vctx {
  const pqt_variant_meta *m;
  const uint8_t *base; /* the whole value, for offsets in messages */
  vf_buf *out;
  size_t out_start, out_cap;
  uint64_t visits; /* values left to visit */
  vf_error *err;
} vctx;

static uint64_t load_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static vf_status vfail(vctx *c, const uint8_t *at, const char *what) {
  return vf_error_set(c->err, VF_ECORRUPT, "variant value: at byte %td: %s", at - c->base, what);
}

/* ----------------------------------------------------------------- metadata */

/*! pqt_variant_meta_parse() : see pqt_internal.h. */
vf_status pqt_variant_meta_parse(const uint8_t *p, size_t len, pqt_variant_meta *m,
                                 vf_error *err) {
  memset(m, 0, sizeof *m);
  if (len < 1) return vf_error_set(err, VF_ECORRUPT, "variant metadata: empty");
  unsigned version = p[0] & 0x0f;
  if (version != 1)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "variant metadata: version %u (byte 0x%02x); only version 1 is known",
                        version, p[0]);
  unsigned osz = ((p[0] >> 6) & 3) + 1;
  if (len < 1 + (size_t)osz)
    return vf_error_set(err, VF_ECORRUPT, "variant metadata: %zu bytes hold no dictionary size",
                        len);
  uint64_t n = load_le(p + 1, osz);
  size_t table = 1 + osz;
  if (n + 1 > (len - table) / osz)
    return vf_error_set(err, VF_ECORRUPT,
                        "variant metadata: a dictionary of %" PRIu64
                        " strings needs more than its %zu bytes",
                        n, len);
  m->nkeys = (uint32_t)n;
  m->offset_size = osz;
  m->offsets = p + table;
  m->bytes = p + table + (size_t)(n + 1) * osz;
  m->bytes_len = len - table - (size_t)(n + 1) * osz;
  return VF_OK;
}

/*! pqt_variant_key() : see pqt_internal.h. */
vf_status pqt_variant_key(const pqt_variant_meta *m, uint32_t id, const uint8_t **s, size_t *n,
                          vf_error *err) {
  if (id >= m->nkeys)
    return vf_error_set(err, VF_ECORRUPT,
                        "field id %u is not in the metadata dictionary (%u names)",
                        id, m->nkeys);
  uint64_t a = load_le(m->offsets + (size_t)id * m->offset_size, m->offset_size);
  uint64_t b = load_le(m->offsets + (size_t)(id + 1) * m->offset_size, m->offset_size);
  if (a > b || b > m->bytes_len)
    return vf_error_set(err, VF_ECORRUPT,
                        "metadata name %u spans bytes %" PRIu64 "..%" PRIu64
                        " of a %zu-byte dictionary",
                        id, a, b, m->bytes_len);
  *s = m->bytes + a;
  *n = (size_t)(b - a);
  return VF_OK;
}

/* ---------------------------------------------------------- objects, arrays */

/* The layout of an object or array at v[0..len) (v[0] is its header). */
typedef struct vnest {
  uint32_t n;
  const uint8_t *ids, *offs;
  unsigned id_size, off_size;
  size_t fields, fields_len;
} vnest;

static vf_status nest_open(vctx *c, const uint8_t *v, size_t len, vnest *o) {
  unsigned h = v[0] >> 2;
  bool object = (v[0] & 3) == 2;
  o->off_size = (h & 3) + 1;
  o->id_size = object ? ((h >> 2) & 3) + 1 : 0;
  unsigned large = object ? (h >> 4) & 1 : (h >> 2) & 1;
  size_t pos = 1, nsz = large ? 4 : 1;
  if (len - pos < nsz) return vfail(c, v, "an object or array without its element count");
  uint64_t n = load_le(v + pos, (unsigned)nsz);
  pos += nsz;
  /* ids and n + 1 offsets must fit in what remains (n < 2^32, sizes <= 4: no overflow) */
  uint64_t table = n * o->id_size + (n + 1) * o->off_size;
  if (table > len - pos) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s of %" PRIu64 " elements needs %" PRIu64 " bytes of ids and "
             "offsets, %zu remain", object ? "an object" : "an array", n, table, len - pos);
    return vfail(c, v, msg);
  }
  o->n = (uint32_t)n;
  o->ids = v + pos;
  o->offs = v + pos + (size_t)n * o->id_size;
  o->fields = pos + (size_t)table;
  uint64_t last = load_le(o->offs + (size_t)n * o->off_size, o->off_size);
  if (last > len - o->fields) {
    char msg[128];
    snprintf(msg, sizeof msg, "field values claim %" PRIu64 " bytes, %zu remain", last,
             len - o->fields);
    return vfail(c, v, msg);
  }
  o->fields_len = (size_t)last;
  return VF_OK;
}

/* Element i: its value starts at *val and extends at most to the end of the field values. */
static vf_status nest_elem(vctx *c, const uint8_t *v, const vnest *o, uint32_t i,
                           const uint8_t **val, size_t *vlen) {
  uint64_t off = load_le(o->offs + (size_t)i * o->off_size, o->off_size);
  if (off >= o->fields_len) {
    char msg[128];
    snprintf(msg, sizeof msg,
             "element %u starts at offset %" PRIu64 ", past the %zu bytes of values", i, off,
             o->fields_len);
    return vfail(c, v, msg);
  }
  *val = v + o->fields + off;
  *vlen = o->fields_len - (size_t)off;
  return VF_OK;
}

/* ------------------------------------------------------------------- values */

static vf_status value_json(vctx *c, const uint8_t *v, size_t len, int depth);

static vf_status need(vctx *c, const uint8_t *v, size_t len, size_t n, const char *what) {
  if (len - 1 >= n) return VF_OK;
  char msg[128];
  snprintf(msg, sizeof msg, "%s needs %zu bytes, %zu remain", what, n, len - 1);
  return vfail(c, v, msg);
}

/* decimal4/8/16: scale byte, unscaled value little-endian -> the big-endian form */
static vf_status decimal_json(vctx *c, const uint8_t *v, size_t len, unsigned width) {
  vf_status st = need(c, v, len, 1 + width, "a decimal");
  if (st != VF_OK) return st;
  unsigned scale = v[1];
  if (scale > 38) return vfail(c, v, "a decimal scale above 38");
  uint8_t be[16];
  for (unsigned i = 0; i < width; i++)
    be[i] = v[2 + width - 1 - i];
  return pqt_json_decimal(c->out, be, width, (int32_t)scale, c->err);
}

static vf_status primitive_json(vctx *c, const uint8_t *v, size_t len) {
  unsigned t = v[0] >> 2;
  vf_buf *out = c->out;
  vf_error *err = c->err;
  vf_status st;
  /* bytes after the header of each fixed-size type (0: none, or sized by its own fields) */
  static const unsigned fixed[21] = {0, 0, 0, 1, 2, 4, 8, 8, 0, 0, 0,
                                     4, 8, 8, 4, 0, 0, 8, 8, 8, 16};
  if (t < 21 && fixed[t] && (st = need(c, v, len, fixed[t], "a primitive value")) != VF_OK)
    return st;
  const uint8_t *p = v + 1;
  switch (t) {
  case 0: return vf_json_raw(out, "null", err);
  case 1: return vf_json_raw(out, "true", err);
  case 2: return vf_json_raw(out, "false", err);
  case 3: return vf_json_i64(out, (int8_t)p[0], err);
  case 4: return vf_json_i64(out, (int16_t)load_le(p, 2), err);
  case 5: return vf_json_i64(out, (int32_t)load_le(p, 4), err);
  case 6: return vf_json_i64(out, (int64_t)load_le(p, 8), err);
  case 7: {
    double d;
    memcpy(&d, p, 8);
    return vf_json_f64(out, d, err);
  }
  case 8: return decimal_json(c, v, len, 4);
  case 9: return decimal_json(c, v, len, 8);
  case 10: return decimal_json(c, v, len, 16);
  case 11: return pqt_json_date(out, (int32_t)load_le(p, 4), err);
  case 12: return pqt_json_timestamp(out, (int64_t)load_le(p, 8), PQT_MICROS, true, err);
  case 13: return pqt_json_timestamp(out, (int64_t)load_le(p, 8), PQT_MICROS, false, err);
  case 14: {
    float f;
    memcpy(&f, p, 4);
    return vf_json_f32(out, f, err);
  }
  case 15:
  case 16: {
    st = need(c, v, len, 4, t == 15 ? "a binary value" : "a string value");
    if (st != VF_OK) return st;
    uint64_t n = load_le(p, 4);
    if (n > len - 5) {
      char msg[128];
      snprintf(msg, sizeof msg, "a %s of %" PRIu64 " bytes, %zu remain",
               t == 15 ? "binary value" : "string", n, len - 5);
      return vfail(c, v, msg);
    }
    if (t == 15) return vf_json_base64(out, p + 4, (size_t)n, err);
    return vf_json_string(out, (const char *)p + 4, (size_t)n, err);
  }
  case 17:
    if ((st = pqt_json_time(out, (int64_t)load_le(p, 8), PQT_MICROS, err)) != VF_OK)
      vf_error_prefix(err, "variant value: at byte %td: ", v - c->base);
    return st;
  case 18: return pqt_json_timestamp(out, (int64_t)load_le(p, 8), PQT_NANOS, true, err);
  case 19: return pqt_json_timestamp(out, (int64_t)load_le(p, 8), PQT_NANOS, false, err);
  case 20: return pqt_json_uuid(out, p, err);
  default:
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "variant value: at byte %td: primitive type %u is not known to this reader",
                        v - c->base, t);
  }
}

typedef struct vfield {
  const uint8_t *k;
  size_t kn;
  uint32_t i;
} vfield;

static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static int vfield_cmp(const void *a, const void *b) {
  const vfield *x = a, *y = b;
  return key_cmp(x->k, x->kn, y->k, y->kn);
}

/* Objects print their keys in name order: the spec stores field ids sorted by name, and a
 * writer that does not (DuckDB's unshredded writer keeps insertion order) is reordered, as
 * DuckDB's own reader does.  Two fields of one name are corrupt. */
static vf_status object_json(vctx *c, const uint8_t *v, size_t len, int depth) {
  vnest o;
  vf_status st = nest_open(c, v, len, &o);
  if (st != VF_OK) return st;
  vfield *fs = NULL;
  bool sorted = true;
  const uint8_t *prev = NULL;
  size_t prev_n = 0;
  for (uint32_t i = 0; i < o.n; i++) {
    const uint8_t *k;
    size_t kn;
    st = pqt_variant_key(c->m, (uint32_t)load_le(o.ids + (size_t)i * o.id_size, o.id_size), &k,
                         &kn, c->err);
    if (st != VF_OK) return vf_error_prefix(c->err, "variant value: at byte %td: ", v - c->base);
    if (prev) {
      int cmp = key_cmp(prev, prev_n, k, kn);
      if (cmp == 0) return vfail(c, v, "an object with a duplicate field name");
      if (cmp > 0) sorted = false;
    }
    prev = k;
    prev_n = kn;
  }
  if (!sorted) { /* o.n ids fit in the value: the array is bounded by its bytes */
    fs = vf_mallocarray(o.n, sizeof *fs);
    if (!fs) return vf_error_set(c->err, VF_ENOMEM, "out of memory for a variant object");
    for (uint32_t i = 0; i < o.n; i++) {
      fs[i].i = i;
      pqt_variant_key(c->m, (uint32_t)load_le(o.ids + (size_t)i * o.id_size, o.id_size), &fs[i].k,
                      &fs[i].kn, c->err);
    }
    qsort(fs, o.n, sizeof *fs, vfield_cmp);
    for (uint32_t i = 1; i < o.n; i++)
      if (vfield_cmp(&fs[i - 1], &fs[i]) == 0) {
        free(fs);
        return vfail(c, v, "an object with a duplicate field name");
      }
  }
  VF_TRY(vf_json_raw(c->out, "{", c->err));
  for (uint32_t j = 0; j < o.n; j++) {
    uint32_t i = fs ? fs[j].i : j;
    const uint8_t *k, *val;
    size_t kn, vlen;
    if (fs) {
      k = fs[j].k;
      kn = fs[j].kn;
    } else {
      pqt_variant_key(c->m, (uint32_t)load_le(o.ids + (size_t)i * o.id_size, o.id_size), &k, &kn,
                      c->err);
    }
    VF_TRY(nest_elem(c, v, &o, i, &val, &vlen));
    if (j) VF_TRY(vf_json_raw(c->out, ",", c->err));
    VF_TRY(vf_json_string(c->out, (const char *)k, kn, c->err));
    VF_TRY(vf_json_raw(c->out, ":", c->err));
    VF_TRY(value_json(c, val, vlen, depth + 1));
  }
  st = vf_json_raw(c->out, "}", c->err);
out:
  free(fs);
  return st;
}

static vf_status array_json(vctx *c, const uint8_t *v, size_t len, int depth) {
  vnest o;
  vf_status st = VF_OK;
  VF_TRY(nest_open(c, v, len, &o));
  VF_TRY(vf_json_raw(c->out, "[", c->err));
  for (uint32_t i = 0; i < o.n; i++) {
    const uint8_t *val;
    size_t vlen;
    VF_TRY(nest_elem(c, v, &o, i, &val, &vlen));
    if (i) VF_TRY(vf_json_raw(c->out, ",", c->err));
    VF_TRY(value_json(c, val, vlen, depth + 1));
  }
  st = vf_json_raw(c->out, "]", c->err);
out:
  return st;
}

static vf_status value_json(vctx *c, const uint8_t *v, size_t len, int depth) {
  if (len == 0) return vfail(c, v, "a value without its header byte");
  if (depth > PQT_VARIANT_MAX_DEPTH) {
    char msg[64];
    snprintf(msg, sizeof msg, "values nested deeper than %d levels", PQT_VARIANT_MAX_DEPTH);
    return vfail(c, v, msg);
  }
  if (c->visits-- == 0)
    return vfail(c, v, "more values than the bytes can hold (overlapping offsets)");
  if (c->out->len - c->out_start > c->out_cap) {
    char msg[96];
    snprintf(msg, sizeof msg, "the value renders to more than %zu bytes of JSON", c->out_cap);
    return vfail(c, v, msg);
  }
  switch (v[0] & 3) {
  case 0: return primitive_json(c, v, len);
  case 1: {
    size_t n = v[0] >> 2;
    if (n > len - 1) {
      char msg[96];
      snprintf(msg, sizeof msg, "a short string of %zu bytes, %zu remain", n, len - 1);
      return vfail(c, v, msg);
    }
    return vf_json_string(c->out, (const char *)v + 1, n, c->err);
  }
  case 2: return object_json(c, v, len, depth);
  default: return array_json(c, v, len, depth);
  }
}

/*! pqt_variant_to_json() : see pqt_internal.h. */
vf_status pqt_variant_to_json(const pqt_variant_meta *m, const uint8_t *v, size_t len, vf_buf *out,
                              vf_error *err) {
  vctx c = {.m = m, .base = v, .out = out, .out_start = out->len, .err = err};
  /* every visited value but the shared ones owns a header byte; the JSON of a value is at most
   * a few times its bytes plus the names it repeats */
  c.visits = 4 * (uint64_t)len + 64;
  c.out_cap = PQT_VARIANT_MAX_JSON + 16 * (len + m->bytes_len);
  return value_json(&c, v, len, 0);
}

/*! pqt_variant_object_open() : see pqt_internal.h. */
vf_status pqt_variant_object_open(const pqt_variant_meta *m, const uint8_t *v, size_t len,
                                  pqt_variant_object *o, vf_error *err) {
  vctx c = {.m = m, .base = v, .err = err};
  memset(o, 0, sizeof *o);
  if (len == 0 || (v[0] & 3) != 2)
    return vf_error_set(err, VF_ECORRUPT,
                        "variant value: a partially shredded value must be an object, found %s",
                        len == 0 ? "no bytes" : (v[0] & 3) == 3 ? "an array" : "a scalar");
  vnest n;
  vf_status st = nest_open(&c, v, len, &n);
  if (st != VF_OK) return st;
  *o = (pqt_variant_object){m,         v,         len,      n.n,       n.ids,
                            n.offs,    n.id_size, n.off_size, n.fields, n.fields_len};
  return VF_OK;
}

/*! pqt_variant_object_field() : see pqt_internal.h. */
vf_status pqt_variant_object_field(const pqt_variant_object *o, uint32_t i, const uint8_t **key,
                                   size_t *klen, const uint8_t **val, size_t *vlen, vf_error *err) {
  vctx c = {.m = o->m, .base = o->v, .err = err};
  vnest n = {o->n, o->ids, o->offs, o->id_size, o->off_size, o->fields, o->fields_len};
  uint32_t id = (uint32_t)load_le(o->ids + (size_t)i * o->id_size, o->id_size);
  vf_status st = pqt_variant_key(o->m, id, key, klen, err);
  if (st != VF_OK) return vf_error_prefix(err, "variant value: ");
  return nest_elem(&c, o->v, &n, i, val, vlen);
}
