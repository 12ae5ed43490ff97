/*
 * pqt_thrift.c — reader for the Thrift compact protocol, the encoding of every parquet footer,
 * page header and page index structure.
 *
 * Spec: apache/thrift doc/specs/thrift-compact-protocol.md.  In short:
 *   - ints: i8 is one raw byte; i16/i32/i64 are zigzag varints (ULEB128); a value that does not
 *     fit the declared width is corrupt, never truncated.
 *   - field header: one byte `ddddtttt`; dddd = field-id delta (1..15) from the previous field of
 *     the same struct, or 0 followed by a zigzag-varint i16 field id (long form); byte 0 = STOP.
 *   - a bool struct field carries its value in the type nibble (1 = true, 2 = false) and has no
 *     body; bool list elements are one byte each (1 = true; 0 or 2 = false, both seen in the wild).
 *   - binary: varint length + bytes; double: 8 bytes little-endian; uuid: 16 bytes.
 *   - list/set header: `sssstttt`, ssss = size 0..14, or 15 followed by a varint size; an empty
 *     list with element type 0 (one 0x00 byte, as fastparquet writes every empty list) is
 *     accepted, since no element needs the type;
 *     map: varint size, then (if size > 0) one byte `kkkkvvvv`.
 *
 * Why the checks look the way they do: the input is untrusted, so
 *   - every length and count is compared with the bytes that remain before it is used.  A list of
 *     n elements needs at least n * (minimum encoded element size) bytes, so a hostile count is
 *     refused before any caller sizes an allocation from it;
 *   - nesting (structs, and lists/maps inside tc_skip) is bounded by TC_MAX_DEPTH so a crafted
 *     input cannot exhaust the stack;
 *   - every failure is VF_ECORRUPT whose message names the byte offset (vf_cur_offset, i.e. the
 *     file offset when the caller passed the buffer's file position) and what was expected.
 * The reader keeps no heap state; callers own all allocation.
 */
#include <inttypes.h>
#include <stdio.h>

#include "format/pqt_internal.h"

/* ---------------------------------------------------------------- helpers */

static const char *tc_type_name(int t) {
  switch (t) {
  case TC_STOP: return "stop";
  case TC_TRUE:
  case TC_FALSE: return "bool";
  case TC_BYTE: return "i8";
  case TC_I16: return "i16";
  case TC_I32: return "i32";
  case TC_I64: return "i64";
  case TC_DOUBLE: return "double";
  case TC_BINARY: return "binary";
  case TC_LIST: return "list";
  case TC_SET: return "set";
  case TC_MAP: return "map";
  case TC_STRUCT: return "struct";
  case TC_UUID: return "uuid";
  default: return "invalid";
  }
}

/* Record a corrupt-input error at file offset `off`. */
static vf_status tc_fail_at(tc_reader *r, uint64_t off, const char *what) {
  vf_error_set(r->err, VF_ECORRUPT, "thrift compact protocol: at byte offset %" PRIu64 ": %s", off,
               what);
  return VF_ECORRUPT;
}

/* Minimum encoded size of one list/set/map element of compact type `t` (0 when `t` is not a
 * valid element type).  Used to bound counts by the remaining bytes. */
static size_t tc_min_size(int t) {
  switch (t) {
  case TC_TRUE:
  case TC_FALSE:
  case TC_BYTE:
  case TC_I16:
  case TC_I32:
  case TC_I64:
  case TC_BINARY: /* length varint */
  case TC_LIST:   /* header byte */
  case TC_SET:
  case TC_MAP: /* size varint */
  case TC_STRUCT: /* STOP byte */ return 1;
  case TC_DOUBLE: return 8;
  case TC_UUID: return 16;
  default: return 0;
  }
}

static vf_status tc_varint_signed(tc_reader *r, int64_t lo, int64_t hi, const char *what,
                                  int64_t *v) {
  uint64_t off = vf_cur_offset(&r->cur);
  int64_t x = 0;
  if (!vf_cur_zvarint(&r->cur, &x)) {
    char msg[128];
    snprintf(msg, sizeof msg, "expected a %s varint, found %s", what,
             vf_cur_remaining(&r->cur) ? "an overlong varint" : "the end of the data");
    return tc_fail_at(r, off, msg);
  }
  if (x < lo || x > hi) {
    char msg[128];
    snprintf(msg, sizeof msg, "%s value %" PRId64 " out of range", what, x);
    return tc_fail_at(r, off, msg);
  }
  *v = x;
  return VF_OK;
}

/* ------------------------------------------------------------------ public */

/*! tc_init() : read `len` bytes at `buf`; `base_offset` is their file offset (for messages). */
void tc_init(tc_reader *r, const uint8_t *buf, size_t len, uint64_t base_offset, vf_error *err) {
  memset(r, 0, sizeof *r);
  vf_cur_init(&r->cur, buf, len, base_offset);
  r->err = err;
}

/*! tc_struct_begin() : enter a struct (the top-level one or a struct-typed field/element).
 *  @return : VF_ECORRUPT when nesting would exceed TC_MAX_DEPTH. */
vf_status tc_struct_begin(tc_reader *r) {
  if (r->depth >= TC_MAX_DEPTH) {
    char msg[96];
    snprintf(msg, sizeof msg, "structs nested deeper than %d levels", TC_MAX_DEPTH);
    return tc_fail_at(r, vf_cur_offset(&r->cur), msg);
  }
  r->last_fid[r->depth++] = 0;
  r->bool_pending = false;
  return VF_OK;
}

/*! tc_struct_end() : leave the struct whose STOP tc_field() just returned. */
vf_status tc_struct_end(tc_reader *r) {
  if (r->depth <= 0)
    return vf_error_set(r->err, VF_EINTERNAL, "thrift compact protocol: struct end without begin");
  r->depth--;
  r->bool_pending = false;
  return VF_OK;
}

/*! tc_field() : the next field header of the current struct.  *type is TC_STOP at the end;
 *  for TC_TRUE/TC_FALSE the value is kept for tc_bool()/tc_skip().
 *  @return : VF_ECORRUPT on truncation, an invalid type nibble, or a field id out of range. */
vf_status tc_field(tc_reader *r, int *type, int16_t *fid) {
  r->bool_pending = false;
  if (r->depth <= 0)
    return vf_error_set(r->err, VF_EINTERNAL, "thrift compact protocol: field outside a struct");
  uint64_t off = vf_cur_offset(&r->cur);
  uint8_t b;
  if (!vf_cur_u8(&r->cur, &b))
    return tc_fail_at(r, off, "expected a field header or STOP, found the end of the data");
  if (b == 0) {
    *type = TC_STOP;
    *fid = 0;
    return VF_OK;
  }
  int t = b & 0x0f;
  int delta = b >> 4;
  if (t == TC_STOP || t > TC_UUID) {
    char msg[96];
    snprintf(msg, sizeof msg, "expected a field header, found invalid field type %d (byte 0x%02x)",
             t, b);
    return tc_fail_at(r, off, msg);
  }
  int id;
  if (delta) {
    id = r->last_fid[r->depth - 1] + delta;
    if (id > INT16_MAX) {
      return tc_fail_at(r, off, "field id delta overflows a 16-bit field id");
    }
  } else {
    int64_t v = 0;
    vf_status st = tc_varint_signed(r, INT16_MIN, INT16_MAX, "field id (i16)", &v);
    if (st) return st;
    id = (int)v;
  }
  r->last_fid[r->depth - 1] = (int16_t)id;
  if (t == TC_TRUE || t == TC_FALSE) {
    r->bool_pending = true;
    r->bool_value = (t == TC_TRUE);
  }
  *type = t;
  *fid = (int16_t)id;
  return VF_OK;
}

/*! tc_bool() : a bool struct field (value from its header) or a bool list element (one byte). */
vf_status tc_bool(tc_reader *r, bool *v) {
  if (r->bool_pending) {
    r->bool_pending = false;
    *v = r->bool_value;
    return VF_OK;
  }
  uint64_t off = vf_cur_offset(&r->cur);
  uint8_t b;
  if (!vf_cur_u8(&r->cur, &b))
    return tc_fail_at(r, off, "expected a bool byte, found the end of the data");
  if (b > 2) {
    char msg[64];
    snprintf(msg, sizeof msg, "expected a bool byte (0, 1 or 2), found %u", b);
    return tc_fail_at(r, off, msg);
  }
  *v = (b == 1);
  return VF_OK;
}

/*! tc_i8() : one raw byte. */
vf_status tc_i8(tc_reader *r, int8_t *v) {
  uint64_t off = vf_cur_offset(&r->cur);
  uint8_t b;
  if (!vf_cur_u8(&r->cur, &b))
    return tc_fail_at(r, off, "expected an i8 byte, found the end of the data");
  *v = (int8_t)b;
  return VF_OK;
}

/*! tc_i16() / tc_i32() / tc_i64() : zigzag varints, range-checked to the declared width. */
vf_status tc_i16(tc_reader *r, int16_t *v) {
  int64_t x = 0;
  vf_status st = tc_varint_signed(r, INT16_MIN, INT16_MAX, "i16", &x);
  if (st != VF_OK) return st;
  *v = (int16_t)x;
  return VF_OK;
}

vf_status tc_i32(tc_reader *r, int32_t *v) {
  int64_t x = 0;
  vf_status st = tc_varint_signed(r, INT32_MIN, INT32_MAX, "i32", &x);
  if (st != VF_OK) return st;
  *v = (int32_t)x;
  return VF_OK;
}

vf_status tc_i64(tc_reader *r, int64_t *v) {
  return tc_varint_signed(r, INT64_MIN, INT64_MAX, "i64", v);
}

/*! tc_double() : 8 bytes little-endian IEEE 754. */
vf_status tc_double(tc_reader *r, double *v) {
  uint64_t off = vf_cur_offset(&r->cur);
  const uint8_t *p;
  if (!vf_cur_take(&r->cur, 8, &p))
    return tc_fail_at(r, off, "expected 8 bytes of a double, found the end of the data");
  memcpy(v, p, 8); /* little-endian host (util.c asserts it) */
  return VF_OK;
}

/*! tc_binary() : varint length + bytes; *p points into the input buffer. */
vf_status tc_binary(tc_reader *r, const uint8_t **p, uint32_t *len) {
  uint64_t off = vf_cur_offset(&r->cur);
  uint64_t n;
  if (!vf_cur_uvarint(&r->cur, &n))
    return tc_fail_at(r, off, "expected a binary length varint, found truncated or overlong data");
  if (n > INT32_MAX || n > vf_cur_remaining(&r->cur)) {
    char msg[160];
    snprintf(msg, sizeof msg, "binary length %" PRIu64 " exceeds the %zu bytes that remain", n,
             vf_cur_remaining(&r->cur));
    return tc_fail_at(r, off, msg);
  }
  vf_cur_take(&r->cur, n, p);
  *len = (uint32_t)n;
  return VF_OK;
}

/*! tc_list_begin() : list/set header.  *count is checked against the remaining bytes (times
 *  the minimum element size), so it can size an allocation.  Bool elements report TC_TRUE; an
 *  empty list written with element type 0 (fastparquet) reports TC_STOP and count 0. */
vf_status tc_list_begin(tc_reader *r, int *elem_type, uint32_t *count) {
  uint64_t off = vf_cur_offset(&r->cur);
  uint8_t b;
  if (!vf_cur_u8(&r->cur, &b))
    return tc_fail_at(r, off, "expected a list header, found the end of the data");
  int t = b & 0x0f;
  uint64_t n = b >> 4;
  if (n == 15) {
    if (!vf_cur_uvarint(&r->cur, &n)) {
      return tc_fail_at(r, off, "expected a list size varint, found truncated or overlong data");
    }
  }
  size_t min = tc_min_size(t);
  if (min == 0 && n == 0 && t == TC_STOP) {
    /* fastparquet writes an empty list as one 0x00 byte (size 0, element type 0); the elements
     * that are not there have no type to check, so it reads as an empty list */
    *elem_type = TC_STOP;
    *count = 0;
    return VF_OK;
  }
  if (min == 0) {
    char msg[96];
    snprintf(msg, sizeof msg, "expected a list header, found invalid element type %d (byte 0x%02x)",
             t, b);
    return tc_fail_at(r, off, msg);
  }
  size_t rem = vf_cur_remaining(&r->cur);
  if (n > INT32_MAX || n > rem / min) {
    char msg[192];
    snprintf(msg, sizeof msg,
             "list of %" PRIu64 " %s elements cannot fit in the %zu bytes that remain", n,
             tc_type_name(t), rem);
    return tc_fail_at(r, off, msg);
  }
  *elem_type = (t == TC_FALSE) ? TC_TRUE : t;
  *count = (uint32_t)n;
  return VF_OK;
}

/* Map header: size, key type, value type (both 0 for an empty map). */
static vf_status tc_map_begin(tc_reader *r, int *kt, int *vt, uint32_t *count) {
  uint64_t off = vf_cur_offset(&r->cur);
  uint64_t n;
  if (!vf_cur_uvarint(&r->cur, &n))
    return tc_fail_at(r, off, "expected a map size varint, found truncated or overlong data");
  *kt = *vt = 0;
  *count = 0;
  if (n == 0) return VF_OK;
  uint8_t b;
  if (!vf_cur_u8(&r->cur, &b))
    return tc_fail_at(r, off, "expected map key/value types, found the end of the data");
  int k = b >> 4, v = b & 0x0f;
  size_t kmin = tc_min_size(k), vmin = tc_min_size(v);
  if (!kmin || !vmin) {
    char msg[96];
    snprintf(msg, sizeof msg, "invalid map key/value types %d/%d", k, v);
    return tc_fail_at(r, off, msg);
  }
  size_t rem = vf_cur_remaining(&r->cur);
  if (n > INT32_MAX || n > rem / (kmin + vmin)) {
    char msg[160];
    snprintf(msg, sizeof msg, "map of %" PRIu64 " entries cannot fit in the %zu bytes that remain",
             n, rem);
    return tc_fail_at(r, off, msg);
  }
  *kt = k;
  *vt = v;
  *count = (uint32_t)n;
  return VF_OK;
}

/* Skip one value of type t.  `nest` counts list/map levels entered by the skip itself, which
 * share the TC_MAX_DEPTH budget with the struct depth. */
static vf_status tc_skip_value(tc_reader *r, int type, int nest) {
  uint64_t off = vf_cur_offset(&r->cur);
  switch (type) {
  case TC_TRUE:
  case TC_FALSE: {
    bool b;
    return tc_bool(r, &b);
  }
  case TC_BYTE: {
    int8_t v;
    return tc_i8(r, &v);
  }
  case TC_I16:
  case TC_I32:
  case TC_I64: {
    int64_t v = 0;
    return tc_i64(r, &v);
  }
  case TC_DOUBLE:
    if (!vf_cur_skip(&r->cur, 8))
      return tc_fail_at(r, off, "expected 8 bytes of a double, found the end of the data");
    return VF_OK;
  case TC_UUID:
    if (!vf_cur_skip(&r->cur, 16))
      return tc_fail_at(r, off, "expected 16 bytes of a uuid, found the end of the data");
    return VF_OK;
  case TC_BINARY: {
    const uint8_t *p;
    uint32_t n = 0;
    return tc_binary(r, &p, &n);
  }
  case TC_LIST:
  case TC_SET:
  case TC_MAP: {
    if (r->depth + nest >= TC_MAX_DEPTH) {
      char msg[96];
      snprintf(msg, sizeof msg, "containers nested deeper than %d levels", TC_MAX_DEPTH);
      return tc_fail_at(r, off, msg);
    }
    r->bool_pending = false; /* elements are never header-encoded bools */
    vf_status st;
    uint32_t n = 0;
    if (type == TC_MAP) {
      int kt = 0, vt = 0;
      st = tc_map_begin(r, &kt, &vt, &n);
      if (st != VF_OK) return st;
      for (uint32_t i = 0; i < n; i++) {
        st = tc_skip_value(r, kt, nest + 1);
        if (st != VF_OK) return st;
        st = tc_skip_value(r, vt, nest + 1);
        if (st != VF_OK) return st;
      }
    } else {
      int et = 0;
      st = tc_list_begin(r, &et, &n);
      if (st != VF_OK) return st;
      for (uint32_t i = 0; i < n; i++) {
        st = tc_skip_value(r, et, nest + 1);
        if (st != VF_OK) return st;
      }
    }
    return VF_OK;
  }
  case TC_STRUCT: {
    if (r->depth + nest >= TC_MAX_DEPTH) {
      char msg[96];
      snprintf(msg, sizeof msg, "structs nested deeper than %d levels", TC_MAX_DEPTH);
      return tc_fail_at(r, off, msg);
    }
    vf_status st = tc_struct_begin(r);
    if (st != VF_OK) return st;
    for (;;) {
      int t = TC_STOP;
      int16_t fid;
      st = tc_field(r, &t, &fid);
      if (st != VF_OK) return st;
      if (t == TC_STOP) break;
      st = tc_skip_value(r, t, nest);
      if (st != VF_OK) return st;
    }
    return tc_struct_end(r);
  }
  default: {
    char msg[64];
    snprintf(msg, sizeof msg, "cannot skip a value of invalid type %d", type);
    return tc_fail_at(r, off, msg);
  }
  }
}

/*! tc_skip() : skip one value of compact type `type` (field or element), recursively. */
vf_status tc_skip(tc_reader *r, int type) {
  return tc_skip_value(r, type, 0);
}
