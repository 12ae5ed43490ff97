/*
 * pqt_meta.c — decoding of the parquet thrift structures this reader uses: FileMetaData (the
 * footer), PageHeader, OffsetIndex and ColumnIndex.
 *
 * Spec: apache/parquet-format src/main/thrift/parquet.thrift (field ids below are its ids);
 * encoding: the thrift compact protocol (pqt_thrift.c).
 *
 * Design:
 *   - Only the fields a reader needs are decoded; every other field, present or future, is
 *     skipped by type (tc_skip), so newer writers' additions do not break us.
 *   - Strict where a wrong value would be silently wrong later: a known field with the wrong
 *     wire type, a missing `required` field (as thrift-generated readers such as arrow C++
 *     refuse them), a negative count/size/offset/row count, an out-of-range enum where the
 *     enum drives decoding (physical type, repetition) are VF_ECORRUPT naming the byte offset
 *     and the struct.field.  Integer fields accept any of the compact i16/i32/i64 wire types
 *     (they share the zigzag varint encoding) with a range check against the declared width.
 *   - Allocation is driven by what is actually parsed: arrays grow geometrically as elements
 *     are decoded (list counts are already bounded by the bytes remaining, see tc_list_begin),
 *     so a hostile count cannot reserve memory the input does not back.
 *   - Output structs are parsed in place from zeroed memory, with counts advanced before each
 *     element is decoded, so the *_free() functions release a partial parse; on error the
 *     public functions free and zero `out` themselves.
 *   - Trailing bytes after FileMetaData are ignored: an encrypted file with a plaintext footer
 *     stores a 28-byte signature there (parquet-format Encryption.md, "Plaintext footer").
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

/* ------------------------------------------------------------------ errors */

static const char *wire_name(int t) {
  static const char *const names[] = {"stop",   "bool",   "bool", "i8",  "i16", "i32",    "i64",
                                      "double", "binary", "list", "set", "map", "struct", "uuid"};
  return (t >= 0 && t <= TC_UUID) ? names[t] : "invalid";
}

static vf_status meta_fail(tc_reader *r, uint64_t off, const char *fmt, ...) VF_PRINTF(3, 4);
static vf_status meta_fail(tc_reader *r, uint64_t off, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  vf_error_set(r->err, VF_ECORRUPT, "parquet metadata: at byte offset %" PRIu64 ": %s", off, what);
  return VF_ECORRUPT;
}

static vf_status meta_nomem(tc_reader *r, const char *what) {
  vf_error_set(r->err, VF_ENOMEM, "parquet metadata: out of memory for %s", what);
  return VF_ENOMEM;
}

/* --------------------------------------------------------- field readers */

static bool is_int_wire(int t) {
  return t == TC_I16 || t == TC_I32 || t == TC_I64;
}

/* An integer field of wire type `type` in [lo, hi]; `field` is "Struct.field" for messages. */
static vf_status rd_int(tc_reader *r, int type, const char *field, int64_t lo, int64_t hi,
                        int64_t *v) {
  uint64_t off = vf_cur_offset(&r->cur);
  if (!is_int_wire(type))
    return meta_fail(r, off, "%s: expected an integer, found a %s", field, wire_name(type));
  int64_t x = 0;
  vf_status st = tc_i64(r, &x);
  if (st) return st;
  if (x < lo || x > hi) {
    if (lo == 0 && (hi == INT32_MAX || hi == INT64_MAX))
      return meta_fail(r, off, "%s: expected >= 0, found %" PRId64, field, x);
    return meta_fail(r, off, "%s: %" PRId64 " is outside %" PRId64 "..%" PRId64, field, x, lo, hi);
  }
  *v = x;
  return VF_OK;
}

static vf_status rd_i32(tc_reader *r, int type, const char *field, int32_t lo, int32_t *v) {
  int64_t x = 0;
  vf_status st = rd_int(r, type, field, lo, INT32_MAX, &x);
  if (st != VF_OK) return st;
  *v = (int32_t)x;
  return VF_OK;
}

static vf_status rd_i64(tc_reader *r, int type, const char *field, int64_t lo, int64_t *v) {
  return rd_int(r, type, field, lo, INT64_MAX, v);
}

static vf_status rd_bool(tc_reader *r, int type, const char *field, bool *v) {
  if (type != TC_TRUE && type != TC_FALSE)
    return meta_fail(r, vf_cur_offset(&r->cur), "%s: expected a bool, found a %s", field,
                     wire_name(type));
  return tc_bool(r, v);
}

/* A binary field copied into a fresh NUL-terminated string (a repeated field replaces it). */
static vf_status rd_str(tc_reader *r, int type, const char *field, char **out) {
  if (type != TC_BINARY)
    return meta_fail(r, vf_cur_offset(&r->cur), "%s: expected a string, found a %s", field,
                     wire_name(type));
  const uint8_t *p;
  uint32_t n = 0;
  vf_status st = tc_binary(r, &p, &n);
  if (st) return st;
  char *s = vf_malloc((size_t)n + 1);
  if (!s) return meta_nomem(r, field);
  memcpy(s, p, n);
  s[n] = '\0';
  free(*out);
  *out = s;
  return VF_OK;
}

static vf_status want_struct(tc_reader *r, int type, const char *field) {
  if (type == TC_STRUCT) return VF_OK;
  return meta_fail(r, vf_cur_offset(&r->cur), "%s: expected a struct, found a %s", field,
                   wire_name(type));
}

/* A list field whose elements must be of kind `elem` (TC_I32 accepts any integer type,
 * TC_TRUE any bool; an empty list any element type, fastparquet's 0 included). */
static vf_status rd_list(tc_reader *r, int type, const char *field, int elem, uint32_t *count) {
  uint64_t off = vf_cur_offset(&r->cur);
  if (type != TC_LIST && type != TC_SET)
    return meta_fail(r, off, "%s: expected a list, found a %s", field, wire_name(type));
  int et = 0;
  vf_status st = tc_list_begin(r, &et, count);
  if (st) return st;
  bool ok = (et == elem) || (elem == TC_I32 && is_int_wire(et)) || *count == 0;
  if (!ok)
    return meta_fail(r, off, "%s: expected a list of %s, found a list of %s", field,
                     wire_name(elem), wire_name(et));
  return VF_OK;
}

/* Make room for element `n` of an array with capacity *cap (elements of `size` bytes), growing
 * geometrically up to `limit` (the list's count) and zeroing new slots. */
static vf_status arr_room(tc_reader *r, void **arr, size_t *cap, size_t n, size_t limit,
                          size_t size, const char *what) {
  if (n < *cap) return VF_OK;
  size_t ncap = *cap ? *cap * 2 : 8;
  if (ncap > limit) ncap = limit;
  if (ncap <= n) ncap = n + 1;
  void *p = vf_realloc(*arr, ncap * size); /* ncap <= INT32_MAX, size small: no overflow */
  if (!p) return meta_nomem(r, what);
  memset((uint8_t *)p + *cap * size, 0, (ncap - *cap) * size);
  *arr = p;
  *cap = ncap;
  return VF_OK;
}

/* Fail if a required field (bit i of `need`) was not seen (bit i of `seen`). */
static vf_status check_required(tc_reader *r, uint64_t off, const char *strct, unsigned need,
                                unsigned seen, const char *const *names) {
  unsigned missing = need & ~seen;
  if (!missing) return VF_OK;
  int i = 0;
  while (!(missing & (1u << i)))
    i++;
  return meta_fail(r, off, "%s starting here lacks its required field '%s'", strct, names[i]);
}

#define BIT(fid) (1u << (fid))

/* --------------------------------------------------------- FileMetaData */

static vf_status parse_kv(tc_reader *r, pqt_kv *kv) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid == 1)
      st = rd_str(r, t, "KeyValue.key", &kv->key);
    else if (fid == 2)
      st = rd_str(r, t, "KeyValue.value", &kv->value);
    else
      st = tc_skip(r, t);
    if (fid >= 1 && fid <= 2) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "key"};
  if ((st = check_required(r, off, "KeyValue", BIT(1), seen, names))) return st;
  return tc_struct_end(r);
}

static vf_status parse_kv_list(tc_reader *r, int t, const char *field, pqt_kv **kv, int *nkv) {
  uint32_t n = 0;
  vf_status st = rd_list(r, t, field, TC_STRUCT, &n);
  if (st) return st;
  /* a repeated field replaces the earlier list */
  for (int i = 0; i < *nkv; i++) {
    free((*kv)[i].key);
    free((*kv)[i].value);
  }
  free(*kv);
  *kv = NULL;
  *nkv = 0;
  size_t cap = 0;
  for (uint32_t i = 0; i < n; i++) {
    if ((st = arr_room(r, (void **)kv, &cap, i, n, sizeof **kv, field))) return st;
    (*nkv)++;
    if ((st = parse_kv(r, &(*kv)[i]))) return st;
  }
  return VF_OK;
}

/* TimeUnit union: MILLIS(1) / MICROS(2) / NANOS(3), each an empty struct.  *known = false for a
 * member this reader does not know. */
static vf_status parse_time_unit(tc_reader *r, pqt_time_unit *unit, bool *known) {
  vf_status st = tc_struct_begin(r);
  *known = false;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid >= 1 && fid <= 3) {
      if ((st = want_struct(r, t, "TimeUnit member"))) break;
      *unit = (pqt_time_unit)(fid - 1);
      *known = true;
    } else {
      *known = false;
    }
    st = tc_skip(r, t);
    if (st != VF_OK) break;
  }
  return st ? st : tc_struct_end(r);
}

/* The parameters struct of a TIME/TIMESTAMP logical type. */
static vf_status parse_time_type(tc_reader *r, pqt_schema_elem *e, const char *strct) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  bool known = true;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid == 1) {
      st = rd_bool(r, t, "TimeType.isAdjustedToUTC", &e->lt_utc);
    } else if (fid == 2) {
      if ((st = want_struct(r, t, "TimeType.unit")) == VF_OK)
        st = parse_time_unit(r, &e->lt_unit, &known);
    } else {
      st = tc_skip(r, t);
    }
    if (fid >= 1 && fid <= 2) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "isAdjustedToUTC", "unit"};
  if ((st = check_required(r, off, strct, BIT(1) | BIT(2), seen, names))) return st;
  if (!known) e->logical = PQT_LT_OTHER; /* a time unit from the future: unannotated */
  return tc_struct_end(r);
}

static vf_status parse_decimal_type(tc_reader *r, pqt_schema_elem *e) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid == 1)
      st = rd_i32(r, t, "DecimalType.scale", 0, &e->lt_scale);
    else if (fid == 2)
      st = rd_i32(r, t, "DecimalType.precision", 1, &e->lt_precision);
    else
      st = tc_skip(r, t);
    if (fid >= 1 && fid <= 2) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "scale", "precision"};
  if ((st = check_required(r, off, "DecimalType", BIT(1) | BIT(2), seen, names))) return st;
  if (e->lt_scale > e->lt_precision)
    return meta_fail(r, off, "DecimalType: scale %d exceeds precision %d", e->lt_scale,
                     e->lt_precision);
  return tc_struct_end(r);
}

static vf_status parse_int_type(tc_reader *r, pqt_schema_elem *e) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid == 1) {
      uint64_t voff = vf_cur_offset(&r->cur);
      int8_t w;
      if (t != TC_BYTE) {
        st = meta_fail(r, voff, "IntType.bitWidth: expected an i8, found a %s", wire_name(t));
      } else if ((st = tc_i8(r, &w)) == VF_OK) {
        if (w != 8 && w != 16 && w != 32 && w != 64)
          st = meta_fail(r, voff, "IntType.bitWidth: expected 8, 16, 32 or 64, found %d", w);
        e->lt_bit_width = w;
      }
    } else if (fid == 2) {
      st = rd_bool(r, t, "IntType.isSigned", &e->lt_signed);
    } else {
      st = tc_skip(r, t);
    }
    if (fid >= 1 && fid <= 2) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "bitWidth", "isSigned"};
  if ((st = check_required(r, off, "IntType", BIT(1) | BIT(2), seen, names))) return st;
  return tc_struct_end(r);
}

/* LogicalType union (parquet.thrift "union LogicalType"): the member's field id is the kind. */
static vf_status parse_logical(tc_reader *r, pqt_schema_elem *e) {
  vf_status st = tc_struct_begin(r);
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    switch (fid) {
    case PQT_LT_STRING:
    case PQT_LT_MAP:
    case PQT_LT_LIST:
    case PQT_LT_ENUM:
    case PQT_LT_DATE:
    case PQT_LT_UNKNOWN:
    case PQT_LT_JSON:
    case PQT_LT_BSON:
    case PQT_LT_UUID:
    case PQT_LT_FLOAT16:
    case PQT_LT_VARIANT:
    case PQT_LT_GEOMETRY:
    case PQT_LT_GEOGRAPHY:
      if ((st = want_struct(r, t, "LogicalType member"))) break;
      e->logical = (pqt_logical_kind)fid;
      st = tc_skip(r, t); /* empty, or parameters this reader does not use (crs, ...) */
      break;
    case PQT_LT_DECIMAL:
      if ((st = want_struct(r, t, "LogicalType.DECIMAL"))) break;
      e->logical = PQT_LT_DECIMAL;
      st = parse_decimal_type(r, e);
      break;
    case PQT_LT_TIME:
    case PQT_LT_TIMESTAMP:
      if ((st = want_struct(r, t, "LogicalType.TIME/TIMESTAMP"))) break;
      e->logical = (pqt_logical_kind)fid;
      st = parse_time_type(r, e, fid == PQT_LT_TIME ? "TimeType" : "TimestampType");
      break;
    case PQT_LT_INTEGER:
      if ((st = want_struct(r, t, "LogicalType.INTEGER"))) break;
      e->logical = PQT_LT_INTEGER;
      st = parse_int_type(r, e);
      break;
    default: /* a member added after this reader was written */
      e->logical = PQT_LT_OTHER;
      st = tc_skip(r, t);
      break;
    }
    if (st != VF_OK) break;
  }
  return st ? st : tc_struct_end(r);
}

static vf_status parse_schema_elem(tc_reader *r, pqt_schema_elem *e) {
  uint64_t off = vf_cur_offset(&r->cur);
  e->type = -1;
  e->repetition = -1;
  e->converted_type = -1;
  e->field_id = -1;
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    int64_t v = 0;
    switch (fid) {
    case 1:
      if ((st = rd_int(r, t, "SchemaElement.type", PQT_BOOLEAN, PQT_FIXED_LEN_BYTE_ARRAY, &v)) ==
          VF_OK)
        e->type = (int)v;
      break;
    case 2: st = rd_i32(r, t, "SchemaElement.type_length", INT32_MIN, &e->type_length); break;
    case 3: /* 3 = VECTOR (a newer proposal): decoded here, refused by pqt_schema_build */
      if ((st = rd_int(r, t, "SchemaElement.repetition_type", 0, 3, &v)) == VF_OK)
        e->repetition = (int)v;
      break;
    case 4: st = rd_str(r, t, "SchemaElement.name", &e->name); break;
    case 5: st = rd_i32(r, t, "SchemaElement.num_children", 0, &e->num_children); break;
    case 6:
      if ((st = rd_int(r, t, "SchemaElement.converted_type", INT32_MIN, INT32_MAX, &v)) == VF_OK)
        e->converted_type = (v >= PQT_CT_UTF8 && v <= PQT_CT_INTERVAL) ? (int)v : -1;
      break;
    case 7: st = rd_i32(r, t, "SchemaElement.scale", INT32_MIN, &e->scale); break;
    case 8: st = rd_i32(r, t, "SchemaElement.precision", INT32_MIN, &e->precision); break;
    case 9: st = rd_i32(r, t, "SchemaElement.field_id", INT32_MIN, &e->field_id); break;
    case 10:
      if ((st = want_struct(r, t, "SchemaElement.logicalType")) == VF_OK) st = parse_logical(r, e);
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 10) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "", "", "", "name"};
  if ((st = check_required(r, off, "SchemaElement", BIT(4), seen, names))) return st;
  return tc_struct_end(r);
}

static vf_status parse_statistics(tc_reader *r, pqt_statistics *s) {
  vf_status st = tc_struct_begin(r);
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid == 3) {
      /* advisory: a negative count (seen from some writers) reads as "unknown" */
      st = rd_i64(r, t, "Statistics.null_count", INT64_MIN, &s->null_count);
      s->has_null_count = st != VF_OK ? false : s->null_count >= 0;
      if (!s->has_null_count) s->null_count = 0;
    } else {
      st = tc_skip(r, t);
    }
    if (st != VF_OK) break;
  }
  return st ? st : tc_struct_end(r);
}

static vf_status parse_column_meta(tc_reader *r, pqt_column_meta *m) {
  uint64_t off = vf_cur_offset(&r->cur);
  m->index_page_offset = -1;
  m->dictionary_page_offset = -1;
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    int64_t v = 0;
    uint32_t n = 0;
    switch (fid) {
    case 1:
      if ((st = rd_int(r, t, "ColumnMetaData.type", PQT_BOOLEAN, PQT_FIXED_LEN_BYTE_ARRAY, &v)) ==
          VF_OK)
        m->type = (int)v;
      break;
    case 2:
      if ((st = rd_list(r, t, "ColumnMetaData.encodings", TC_I32, &n))) break;
      free(m->encodings);
      m->encodings = vf_mallocarray(n ? n : 1, sizeof *m->encodings);
      m->nencodings = 0;
      if (!m->encodings) {
        st = meta_nomem(r, "ColumnMetaData.encodings");
        break;
      }
      for (uint32_t i = 0; i < n; i++) {
        if ((st = rd_int(r, TC_I32, "ColumnMetaData.encodings[]", INT32_MIN, INT32_MAX, &v)) ==
            VF_OK)
          m->encodings[m->nencodings++] = (int)v;
        if (st != VF_OK) break;
      }
      break;
    case 3: {
      if ((st = rd_list(r, t, "ColumnMetaData.path_in_schema", TC_BINARY, &n))) break;
      for (int i = 0; i < m->path_len; i++)
        free(m->path[i]);
      free(m->path);
      m->path = NULL;
      m->path_len = 0;
      size_t cap = 0;
      for (uint32_t i = 0; i < n; i++) {
        if ((st = arr_room(r, (void **)&m->path, &cap, i, n, sizeof *m->path, "path_in_schema")))
          break;
        m->path_len++;
        st = rd_str(r, TC_BINARY, "ColumnMetaData.path_in_schema[]", &m->path[i]);
        if (st != VF_OK) break;
      }
      break;
    }
    case 4:
      if ((st = rd_int(r, t, "ColumnMetaData.codec", 0, INT32_MAX, &v)) == VF_OK) m->codec = (int)v;
      break;
    case 5: st = rd_i64(r, t, "ColumnMetaData.num_values", 0, &m->num_values); break;
    case 6:
      st = rd_i64(r, t, "ColumnMetaData.total_uncompressed_size", 0, &m->total_uncompressed_size);
      break;
    case 7:
      st = rd_i64(r, t, "ColumnMetaData.total_compressed_size", 0, &m->total_compressed_size);
      break;
    case 9: st = rd_i64(r, t, "ColumnMetaData.data_page_offset", 0, &m->data_page_offset); break;
    case 10: st = rd_i64(r, t, "ColumnMetaData.index_page_offset", 0, &m->index_page_offset); break;
    case 11:
      st = rd_i64(r, t, "ColumnMetaData.dictionary_page_offset", 0, &m->dictionary_page_offset);
      break;
    case 12:
      if ((st = want_struct(r, t, "ColumnMetaData.statistics")) == VF_OK)
        st = parse_statistics(r, &m->stats);
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 12) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"",
                                      "type",
                                      "encodings",
                                      "path_in_schema",
                                      "codec",
                                      "num_values",
                                      "total_uncompressed_size",
                                      "total_compressed_size",
                                      "",
                                      "data_page_offset"};
  unsigned need = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(9);
  if ((st = check_required(r, off, "ColumnMetaData", need, seen, names))) return st;
  return tc_struct_end(r);
}

static vf_status parse_column_chunk(tc_reader *r, pqt_column_chunk *c) {
  uint64_t off = vf_cur_offset(&r->cur);
  c->offset_index_offset = -1;
  c->column_index_offset = -1;
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    switch (fid) {
    case 1: st = rd_str(r, t, "ColumnChunk.file_path", &c->file_path); break;
    case 2: st = rd_i64(r, t, "ColumnChunk.file_offset", 0, &c->file_offset); break;
    case 3:
      if ((st = want_struct(r, t, "ColumnChunk.meta_data"))) break;
      if (c->has_meta_data) { /* a repeated field replaces the earlier one */
        for (int i = 0; i < c->meta.path_len; i++)
          free(c->meta.path[i]);
        free(c->meta.path);
        free(c->meta.encodings);
        memset(&c->meta, 0, sizeof c->meta);
      }
      c->has_meta_data = true;
      st = parse_column_meta(r, &c->meta);
      break;
    case 4: st = rd_i64(r, t, "ColumnChunk.offset_index_offset", 0, &c->offset_index_offset); break;
    case 5: st = rd_i32(r, t, "ColumnChunk.offset_index_length", 0, &c->offset_index_length); break;
    case 6: st = rd_i64(r, t, "ColumnChunk.column_index_offset", 0, &c->column_index_offset); break;
    case 7: st = rd_i32(r, t, "ColumnChunk.column_index_length", 0, &c->column_index_length); break;
    case 8:
    case 9: /* crypto_metadata / encrypted_column_metadata: the column is encrypted */
      c->encrypted = true;
      st = tc_skip(r, t);
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 9) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "", "file_offset"};
  if ((st = check_required(r, off, "ColumnChunk", BIT(2), seen, names))) return st;
  return tc_struct_end(r);
}

static vf_status parse_row_group(tc_reader *r, pqt_row_group *g) {
  uint64_t off = vf_cur_offset(&r->cur);
  g->file_offset = -1;
  g->total_compressed_size = -1;
  g->ordinal = -1;
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    uint32_t n = 0;
    int64_t v = 0;
    switch (fid) {
    case 1: {
      if ((st = rd_list(r, t, "RowGroup.columns", TC_STRUCT, &n))) break;
      if (g->ncolumns) {
        st = meta_fail(r, vf_cur_offset(&r->cur), "RowGroup.columns appears twice");
        break;
      }
      size_t cap = 0;
      for (uint32_t i = 0; i < n; i++) {
        if ((st = arr_room(r, (void **)&g->columns, &cap, i, n, sizeof *g->columns,
                           "RowGroup.columns")))
          break;
        g->ncolumns++;
        st = parse_column_chunk(r, &g->columns[i]);
        if (st != VF_OK) break;
      }
      break;
    }
    case 2: st = rd_i64(r, t, "RowGroup.total_byte_size", 0, &g->total_byte_size); break;
    case 3: st = rd_i64(r, t, "RowGroup.num_rows", 0, &g->num_rows); break;
    case 5: st = rd_i64(r, t, "RowGroup.file_offset", 0, &g->file_offset); break;
    case 6:
      st = rd_i64(r, t, "RowGroup.total_compressed_size", 0, &g->total_compressed_size);
      break;
    case 7:
      if ((st = rd_int(r, t, "RowGroup.ordinal", INT16_MIN, INT16_MAX, &v)) == VF_OK)
        g->ordinal = (int32_t)v;
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 7) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "columns", "total_byte_size", "num_rows"};
  if ((st = check_required(r, off, "RowGroup", BIT(1) | BIT(2) | BIT(3), seen, names))) return st;
  return tc_struct_end(r);
}

static vf_status parse_file_meta(tc_reader *r, pqt_file_meta *m) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    uint32_t n = 0;
    switch (fid) {
    case 1: st = rd_i32(r, t, "FileMetaData.version", INT32_MIN, &m->version); break;
    case 2: {
      if ((st = rd_list(r, t, "FileMetaData.schema", TC_STRUCT, &n))) break;
      if (m->nschema) {
        st = meta_fail(r, vf_cur_offset(&r->cur), "FileMetaData.schema appears twice");
        break;
      }
      size_t cap = 0;
      for (uint32_t i = 0; i < n; i++) {
        if ((st = arr_room(r, (void **)&m->schema, &cap, i, n, sizeof *m->schema,
                           "FileMetaData.schema")))
          break;
        m->nschema++;
        st = parse_schema_elem(r, &m->schema[i]);
        if (st != VF_OK) break;
      }
      break;
    }
    case 3: st = rd_i64(r, t, "FileMetaData.num_rows", 0, &m->num_rows); break;
    case 4: {
      if ((st = rd_list(r, t, "FileMetaData.row_groups", TC_STRUCT, &n))) break;
      if (m->nrow_groups) {
        st = meta_fail(r, vf_cur_offset(&r->cur), "FileMetaData.row_groups appears twice");
        break;
      }
      size_t cap = 0;
      for (uint32_t i = 0; i < n; i++) {
        if ((st = arr_room(r, (void **)&m->row_groups, &cap, i, n, sizeof *m->row_groups,
                           "FileMetaData.row_groups")))
          break;
        m->nrow_groups++;
        st = parse_row_group(r, &m->row_groups[i]);
        if (st != VF_OK) break;
      }
      break;
    }
    case 5: st = parse_kv_list(r, t, "FileMetaData.key_value_metadata", &m->kv, &m->nkv); break;
    case 6: st = rd_str(r, t, "FileMetaData.created_by", &m->created_by); break;
    case 8:
      if ((st = want_struct(r, t, "FileMetaData.encryption_algorithm"))) break;
      m->has_encryption_algorithm = true;
      st = tc_skip(r, t);
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 8) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "version", "schema", "num_rows", "row_groups"};
  if ((st = check_required(r, off, "FileMetaData", BIT(1) | BIT(2) | BIT(3) | BIT(4), seen, names)))
    return st;
  return tc_struct_end(r);
}

/*! pqt_parse_file_meta() : see format.h.  `out` is zeroed first and freed again on error. */
vf_status pqt_parse_file_meta(const uint8_t *buf, size_t len, uint64_t base_offset,
                              pqt_file_meta *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  tc_reader r;
  tc_init(&r, buf, len, base_offset, err);
  vf_status st = parse_file_meta(&r, out);
  if (st) pqt_file_meta_free(out);
  return st;
}

static void column_meta_free(pqt_column_meta *m) {
  for (int i = 0; i < m->path_len; i++)
    free(m->path[i]);
  free(m->path);
  free(m->encodings);
}

/*! pqt_file_meta_free() : release everything pqt_parse_file_meta() allocated (also after a
 *  partial parse) and zero the struct.  NULL ok. */
void pqt_file_meta_free(pqt_file_meta *m) {
  if (!m) return;
  for (int i = 0; i < m->nschema; i++)
    free(m->schema[i].name);
  free(m->schema);
  for (int g = 0; g < m->nrow_groups; g++) {
    pqt_row_group *rg = &m->row_groups[g];
    for (int c = 0; c < rg->ncolumns; c++) {
      free(rg->columns[c].file_path);
      column_meta_free(&rg->columns[c].meta);
    }
    free(rg->columns);
  }
  free(m->row_groups);
  for (int i = 0; i < m->nkv; i++) {
    free(m->kv[i].key);
    free(m->kv[i].value);
  }
  free(m->kv);
  free(m->created_by);
  memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------ PageHeader */

static vf_status parse_data_page_header(tc_reader *r, pqt_page_header *h) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    switch (fid) {
    case 1: st = rd_i32(r, t, "DataPageHeader.num_values", 0, &h->num_values); break;
    case 2: st = rd_i32(r, t, "DataPageHeader.encoding", 0, &h->encoding); break;
    case 3:
      st = rd_i32(r, t, "DataPageHeader.definition_level_encoding", 0, &h->def_encoding);
      break;
    case 4:
      st = rd_i32(r, t, "DataPageHeader.repetition_level_encoding", 0, &h->rep_encoding);
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 4) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "num_values", "encoding", "definition_level_encoding",
                                      "repetition_level_encoding"};
  if ((st = check_required(r, off, "DataPageHeader", BIT(1) | BIT(2) | BIT(3) | BIT(4), seen,
                           names)))
    return st;
  return tc_struct_end(r);
}

static vf_status parse_data_page_header_v2(tc_reader *r, pqt_page_header *h) {
  uint64_t off = vf_cur_offset(&r->cur);
  h->is_compressed = true; /* parquet.thrift default */
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    switch (fid) {
    case 1: st = rd_i32(r, t, "DataPageHeaderV2.num_values", 0, &h->num_values); break;
    case 2: st = rd_i32(r, t, "DataPageHeaderV2.num_nulls", 0, &h->num_nulls); break;
    case 3: st = rd_i32(r, t, "DataPageHeaderV2.num_rows", 0, &h->num_rows); break;
    case 4: st = rd_i32(r, t, "DataPageHeaderV2.encoding", 0, &h->encoding); break;
    case 5:
      st = rd_i32(r, t, "DataPageHeaderV2.definition_levels_byte_length", 0,
                  &h->def_levels_byte_length);
      break;
    case 6:
      st = rd_i32(r, t, "DataPageHeaderV2.repetition_levels_byte_length", 0,
                  &h->rep_levels_byte_length);
      break;
    case 7: st = rd_bool(r, t, "DataPageHeaderV2.is_compressed", &h->is_compressed); break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 7) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"",
                                      "num_values",
                                      "num_nulls",
                                      "num_rows",
                                      "encoding",
                                      "definition_levels_byte_length",
                                      "repetition_levels_byte_length"};
  unsigned need = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6);
  if ((st = check_required(r, off, "DataPageHeaderV2", need, seen, names))) return st;
  if (h->num_nulls > h->num_values)
    return meta_fail(r, off, "DataPageHeaderV2: num_nulls %d exceeds num_values %d", h->num_nulls,
                     h->num_values);
  return tc_struct_end(r);
}

static vf_status parse_dict_page_header(tc_reader *r, pqt_page_header *h) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    switch (fid) {
    case 1: st = rd_i32(r, t, "DictionaryPageHeader.num_values", 0, &h->dict_num_values); break;
    case 2: st = rd_i32(r, t, "DictionaryPageHeader.encoding", 0, &h->dict_encoding); break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 2) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "num_values", "encoding"};
  if ((st = check_required(r, off, "DictionaryPageHeader", BIT(1) | BIT(2), seen, names)))
    return st;
  return tc_struct_end(r);
}

static vf_status parse_page_header(tc_reader *r, pqt_page_header *h) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    int32_t v;
    switch (fid) {
    case 1: st = rd_i32(r, t, "PageHeader.type", 0, &h->type); break;
    case 2: st = rd_i32(r, t, "PageHeader.uncompressed_page_size", 0, &h->uncompressed_size); break;
    case 3: st = rd_i32(r, t, "PageHeader.compressed_page_size", 0, &h->compressed_size); break;
    case 4:
      if ((st = rd_i32(r, t, "PageHeader.crc", INT32_MIN, &v)) == VF_OK) {
        h->crc = (uint32_t)v;
        h->has_crc = true;
      }
      break;
    case 5:
      if ((st = want_struct(r, t, "PageHeader.data_page_header"))) break;
      h->has_data_header = true;
      st = parse_data_page_header(r, h);
      break;
    case 7:
      if ((st = want_struct(r, t, "PageHeader.dictionary_page_header"))) break;
      h->has_dict_header = true;
      st = parse_dict_page_header(r, h);
      break;
    case 8:
      if ((st = want_struct(r, t, "PageHeader.data_page_header_v2"))) break;
      h->has_data_header_v2 = true;
      st = parse_data_page_header_v2(r, h);
      break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 8) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "type", "uncompressed_page_size", "compressed_page_size"};
  if ((st = check_required(r, off, "PageHeader", BIT(1) | BIT(2) | BIT(3), seen, names))) return st;
  if ((h->type == PQT_DATA_PAGE && !h->has_data_header) ||
      (h->type == PQT_DATA_PAGE_V2 && !h->has_data_header_v2) ||
      (h->type == PQT_DICTIONARY_PAGE && !h->has_dict_header))
    return meta_fail(r, off, "PageHeader of type %d lacks the matching page-type header", h->type);
  return tc_struct_end(r);
}

/*! pqt_parse_page_header() : see pqt_internal.h.  On success the cursor is advanced past the
 *  header; on error it is left where it was. */
vf_status pqt_parse_page_header(vf_cursor *c, pqt_page_header *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  tc_reader r;
  tc_init(&r, c->p, vf_cur_remaining(c), vf_cur_offset(c), err);
  vf_status st = parse_page_header(&r, out);
  if (st) return st;
  c->p = r.cur.p;
  return VF_OK;
}

/* ------------------------------------------------------------ page index */

static vf_status parse_page_location(tc_reader *r, pqt_page_location *loc) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    switch (fid) {
    case 1: st = rd_i64(r, t, "PageLocation.offset", 0, &loc->offset); break;
    case 2:
      st = rd_i32(r, t, "PageLocation.compressed_page_size", 0, &loc->compressed_page_size);
      break;
    case 3: st = rd_i64(r, t, "PageLocation.first_row_index", 0, &loc->first_row_index); break;
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 3) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "offset", "compressed_page_size", "first_row_index"};
  if ((st = check_required(r, off, "PageLocation", BIT(1) | BIT(2) | BIT(3), seen, names)))
    return st;
  return tc_struct_end(r);
}

static vf_status parse_offset_index(tc_reader *r, pqt_offset_index *oi) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    if (fid == 1) {
      uint32_t n = 0;
      if ((st = rd_list(r, t, "OffsetIndex.page_locations", TC_STRUCT, &n))) break;
      if (seen & BIT(1)) {
        st = meta_fail(r, vf_cur_offset(&r->cur), "OffsetIndex.page_locations appears twice");
        break;
      }
      size_t cap = 0;
      for (uint32_t i = 0; i < n; i++) {
        uint64_t eoff = vf_cur_offset(&r->cur);
        if ((st = arr_room(r, (void **)&oi->pages, &cap, i, n, sizeof *oi->pages, "OffsetIndex")))
          break;
        oi->npages++;
        if ((st = parse_page_location(r, &oi->pages[i]))) break;
        /* parquet.thrift: first_row_index must increase strictly from page to page */
        if (i > 0 && oi->pages[i].first_row_index <= oi->pages[i - 1].first_row_index)
          st = meta_fail(r, eoff,
                         "OffsetIndex.page_locations[%u].first_row_index %" PRId64
                         " does not increase (previous %" PRId64 ")",
                         i, oi->pages[i].first_row_index, oi->pages[i - 1].first_row_index);
        if (st != VF_OK) break;
      }
    } else {
      st = tc_skip(r, t);
    }
    if (fid == 1) seen |= BIT(1);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "page_locations"};
  if ((st = check_required(r, off, "OffsetIndex", BIT(1), seen, names))) return st;
  return tc_struct_end(r);
}

/*! pqt_parse_offset_index() : decode an OffsetIndex (`out` zeroed first, freed on error). */
vf_status pqt_parse_offset_index(const uint8_t *buf, size_t len, uint64_t base_offset,
                                 pqt_offset_index *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  tc_reader r;
  tc_init(&r, buf, len, base_offset, err);
  vf_status st = parse_offset_index(&r, out);
  if (st) pqt_offset_index_free(out);
  return st;
}

/*! pqt_offset_index_free() : NULL ok; the struct is zeroed. */
void pqt_offset_index_free(pqt_offset_index *oi) {
  if (!oi) return;
  free(oi->pages);
  memset(oi, 0, sizeof *oi);
}

/* One of ColumnIndex.min_values / max_values: a copy of each value in *vals / *lens (grown as
 * values are decoded); *nvals counts the slots the caller must free, also after an error. */
static vf_status parse_bounds(tc_reader *r, int t, const char *field, uint8_t ***vals,
                              int32_t **lens, int *nvals) {
  uint32_t n = 0;
  vf_status st = rd_list(r, t, field, TC_BINARY, &n);
  if (st) return st;
  if (*vals) return meta_fail(r, vf_cur_offset(&r->cur), "%s appears twice", field);
  size_t cap = 0, lcap = 0;
  for (uint32_t i = 0; i < n; i++) {
    if ((st = arr_room(r, (void **)vals, &cap, i, n, sizeof **vals, field))) return st;
    if ((st = arr_room(r, (void **)lens, &lcap, i, n, sizeof **lens, field))) return st;
    (*nvals)++;
    const uint8_t *p;
    uint32_t len;
    if ((st = tc_binary(r, &p, &len))) return st;
    (*vals)[i] = vf_malloc(len);
    if (!(*vals)[i]) return meta_nomem(r, field);
    memcpy((*vals)[i], p, len);
    (*lens)[i] = (int32_t)len;
  }
  if (!*vals) { /* an empty list: keep a non-NULL marker so "appears twice" still works */
    *vals = vf_calloc(1, sizeof **vals);
    *lens = vf_calloc(1, sizeof **lens);
    if (!*vals || !*lens) return meta_nomem(r, field);
  }
  return VF_OK;
}

typedef struct ci_work {
  int nnull, nmin, nmax, ncounts;
} ci_work;

static vf_status parse_column_index(tc_reader *r, pqt_column_index *ci, ci_work *w) {
  uint64_t off = vf_cur_offset(&r->cur);
  vf_status st = tc_struct_begin(r);
  unsigned seen = 0;
  if (st != VF_OK) return st;
  for (;;) {
    int t = TC_STOP;
    int16_t fid;
    if ((st = tc_field(r, &t, &fid)) || t == TC_STOP) break;
    uint32_t n = 0;
    int64_t v = 0;
    switch (fid) {
    case 1: {
      if ((st = rd_list(r, t, "ColumnIndex.null_pages", TC_TRUE, &n))) break;
      if (seen & BIT(1)) {
        st = meta_fail(r, vf_cur_offset(&r->cur), "ColumnIndex.null_pages appears twice");
        break;
      }
      ci->null_pages = vf_calloc(n ? n : 1, sizeof *ci->null_pages);
      if (!ci->null_pages) {
        st = meta_nomem(r, "ColumnIndex.null_pages");
        break;
      }
      for (uint32_t i = 0; i < n; i++) {
        st = tc_bool(r, &ci->null_pages[i]);
        if (st != VF_OK) break;
      }
      w->nnull = (int)n;
      break;
    }
    case 2:
      st = parse_bounds(r, t, "ColumnIndex.min_values", &ci->min_values, &ci->min_lens, &w->nmin);
      break;
    case 3:
      st = parse_bounds(r, t, "ColumnIndex.max_values", &ci->max_values, &ci->max_lens, &w->nmax);
      break;
    case 4:
      if ((st = rd_int(r, t, "ColumnIndex.boundary_order", 0, 2, &v)) == VF_OK)
        ci->boundary_order = (int)v;
      break;
    case 5: {
      if ((st = rd_list(r, t, "ColumnIndex.null_counts", TC_I32, &n))) break;
      if (ci->null_counts) {
        st = meta_fail(r, vf_cur_offset(&r->cur), "ColumnIndex.null_counts appears twice");
        break;
      }
      ci->null_counts = vf_calloc(n ? n : 1, sizeof *ci->null_counts);
      if (!ci->null_counts) {
        st = meta_nomem(r, "ColumnIndex.null_counts");
        break;
      }
      bool negative = false;
      for (uint32_t i = 0; i < n; i++) {
        st = rd_i64(r, TC_I64, "ColumnIndex.null_counts[]", INT64_MIN, &ci->null_counts[i]);
        negative |= ci->null_counts[i] < 0;
        if (st != VF_OK) break;
      }
      w->ncounts = (int)n;
      if (st != VF_OK) break;
      if (negative) {
        /* advisory: parquet-mr 1.x wrote -1 for "unknown" (datapage_v1-*-checksum.parquet) */
        free(ci->null_counts);
        ci->null_counts = NULL;
      }
      break;
    }
    default: st = tc_skip(r, t); break;
    }
    if (fid >= 1 && fid <= 5) seen |= BIT(fid);
    if (st != VF_OK) break;
  }
  if (st) return st;
  static const char *const names[] = {"", "null_pages", "min_values", "max_values",
                                      "boundary_order"};
  if ((st = check_required(r, off, "ColumnIndex", BIT(1) | BIT(2) | BIT(3) | BIT(4), seen, names)))
    return st;
  if (w->nmin != w->nnull || w->nmax != w->nnull || (ci->null_counts && w->ncounts != w->nnull))
    return meta_fail(r, off,
                     "ColumnIndex lists differ in length: null_pages %d, min_values %d, "
                     "max_values %d, null_counts %d",
                     w->nnull, w->nmin, w->nmax, ci->null_counts ? w->ncounts : -1);
  ci->npages = w->nnull;
  return tc_struct_end(r);
}

/*! pqt_parse_column_index() : decode a ColumnIndex; all per-page lists must have the same
 *  length (npages).  `out` is zeroed first and freed on error. */
vf_status pqt_parse_column_index(const uint8_t *buf, size_t len, uint64_t base_offset,
                                 pqt_column_index *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  tc_reader r;
  tc_init(&r, buf, len, base_offset, err);
  ci_work w = {0, 0, 0, 0};
  vf_status st = parse_column_index(&r, out, &w);
  if (st) {
    /* npages is only set on success; free what the partial parse holds */
    for (int i = 0; i < w.nmin; i++)
      free(out->min_values[i]);
    for (int i = 0; i < w.nmax; i++)
      free(out->max_values[i]);
    free(out->min_values);
    free(out->min_lens);
    free(out->max_values);
    free(out->max_lens);
    free(out->null_pages);
    free(out->null_counts);
    memset(out, 0, sizeof *out);
  }
  return st;
}

/*! pqt_column_index_free() : NULL ok; the struct is zeroed. */
void pqt_column_index_free(pqt_column_index *ci) {
  if (!ci) return;
  for (int i = 0; i < ci->npages; i++) {
    if (ci->min_values) free(ci->min_values[i]);
    if (ci->max_values) free(ci->max_values[i]);
  }
  free(ci->min_values);
  free(ci->min_lens);
  free(ci->max_values);
  free(ci->max_lens);
  free(ci->null_pages);
  free(ci->null_counts);
  memset(ci, 0, sizeof *ci);
}

/* ------------------------------------------------------------------ names */

/*! pqt_physical_name() : "INT32", "FLOAT", ...; "UNKNOWN" when out of range. */
const char *pqt_physical_name(int t) {
  static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                      "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return (t >= 0 && t < (int)(sizeof names / sizeof *names)) ? names[t] : "UNKNOWN";
}

/*! pqt_codec_name() : "SNAPPY", "ZSTD", ...; "UNKNOWN" when out of range. */
const char *pqt_codec_name(int c) {
  static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                      "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
  return (c >= 0 && c < (int)(sizeof names / sizeof *names)) ? names[c] : "UNKNOWN";
}

/*! pqt_encoding_name() : "PLAIN", "RLE_DICTIONARY", ...; "UNKNOWN" when out of range. */
const char *pqt_encoding_name(int e) {
  static const char *const names[] = {"PLAIN",
                                      "GROUP_VAR_INT", /* deprecated, never used */
                                      "PLAIN_DICTIONARY",
                                      "RLE",
                                      "BIT_PACKED",
                                      "DELTA_BINARY_PACKED",
                                      "DELTA_LENGTH_BYTE_ARRAY",
                                      "DELTA_BYTE_ARRAY",
                                      "RLE_DICTIONARY",
                                      "BYTE_STREAM_SPLIT"};
  return (e >= 0 && e < (int)(sizeof names / sizeof *names)) ? names[e] : "UNKNOWN";
}
