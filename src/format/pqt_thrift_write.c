/*
 * Thrift compact protocol writer — the encoding half of pqt_thrift.c, used for page headers and
 * the FileMetaData footer (thrift/doc/specs/thrift-compact-protocol.md).
 *
 * Why a sticky error instead of a status per call: a footer is a few hundred nested calls and
 * the only failure is the output buffer hitting its ceiling (VF_ENOMEM).  Every tcw_* call is a
 * no-op once `st` is set, so callers build a whole struct and check `w->st` once at the end.
 *
 * Encoding rules implemented here (spec sections "Struct encoding", "List and set", "Integer
 * encoding"):
 *   - field header: one byte `delta << 4 | type` when the field id is 1..15 above the previous
 *     field of the same struct, otherwise a `type` byte followed by the zigzag varint of the id;
 *   - bool fields carry their value in the type nibble (1 = true, 2 = false), no payload;
 *   - i16/i32/i64: zigzag then ULEB128 varint; binary: varint length then the bytes;
 *   - list header: `count << 4 | elem_type` for count < 15, otherwise `0xF0 | elem_type`
 *     followed by the varint count;
 *   - a struct ends with a STOP byte (0); each nesting level keeps its own last field id.
 */
#include "format/pqt_internal.h"

static void tcw_put(tc_writer *w, const void *p, size_t n) {
  if (w->st != VF_OK) return;
  w->st = vf_buf_append(w->out, p, n, w->err);
}

static void tcw_uvarint(tc_writer *w, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (uint8_t)v;
  tcw_put(w, tmp, n);
}

static void tcw_zvarint(tc_writer *w, int64_t v) {
  uint64_t z = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0); /* zigzag */
  tcw_uvarint(w, z);
}

static void tcw_fail(tc_writer *w, const char *what) {
  if (w->st != VF_OK) return;
  w->st = vf_error_set(w->err, VF_EINTERNAL, "thrift writer: %s", what);
}

static void tcw_push(tc_writer *w) {
  if (w->st != VF_OK) return;
  if (w->depth + 1 >= TC_MAX_DEPTH) {
    tcw_fail(w, "structs nested too deeply");
    return;
  }
  w->depth++;
  w->last_fid[w->depth] = 0;
}

static void tcw_field_header(tc_writer *w, int16_t fid, int type) {
  if (w->st != VF_OK) return;
  if (w->depth <= 0) {
    tcw_fail(w, "field written outside a struct");
    return;
  }
  int delta = (int)fid - (int)w->last_fid[w->depth];
  if (delta > 0 && delta <= 15) {
    uint8_t b = (uint8_t)((delta << 4) | type);
    tcw_put(w, &b, 1);
  } else {
    uint8_t b = (uint8_t)type;
    tcw_put(w, &b, 1);
    tcw_zvarint(w, fid);
  }
  w->last_fid[w->depth] = fid;
}

/*! tcw_init() : start writing into `out` (appending); errors go to `err` (may be NULL). */
void tcw_init(tc_writer *w, vf_buf *out, vf_error *err) {
  memset(w, 0, sizeof *w);
  w->out = out;
  w->err = err;
  w->st = VF_OK;
}

/*! tcw_struct_begin() : open a top-level struct (a message body: PageHeader, FileMetaData). */
void tcw_struct_begin(tc_writer *w) {
  tcw_push(w);
}

/*! tcw_struct_end() : write STOP and close the innermost struct. */
void tcw_struct_end(tc_writer *w) {
  if (w->st != VF_OK) return;
  if (w->depth <= 0) {
    tcw_fail(w, "struct end without a struct");
    return;
  }
  uint8_t stop = TC_STOP;
  tcw_put(w, &stop, 1);
  w->depth--;
}

/*! tcw_field_i16() / _i32() / _i64() : an integer field (zigzag varint). */
void tcw_field_i16(tc_writer *w, int16_t fid, int16_t v) {
  tcw_field_header(w, fid, TC_I16);
  tcw_zvarint(w, v);
}

void tcw_field_i32(tc_writer *w, int16_t fid, int32_t v) {
  tcw_field_header(w, fid, TC_I32);
  tcw_zvarint(w, v);
}

void tcw_field_i64(tc_writer *w, int16_t fid, int64_t v) {
  tcw_field_header(w, fid, TC_I64);
  tcw_zvarint(w, v);
}

/*! tcw_field_bool() : a bool field; the value lives in the header's type nibble. */
void tcw_field_bool(tc_writer *w, int16_t fid, bool v) {
  tcw_field_header(w, fid, v ? TC_TRUE : TC_FALSE);
}

/*! tcw_field_binary() : a binary/string field: varint length + bytes. */
void tcw_field_binary(tc_writer *w, int16_t fid, const void *p, size_t n) {
  tcw_field_header(w, fid, TC_BINARY);
  tcw_uvarint(w, n);
  if (n) tcw_put(w, p, n);
}

/*! tcw_field_struct_begin() : a nested struct field; close it with tcw_struct_end(). */
void tcw_field_struct_begin(tc_writer *w, int16_t fid) {
  tcw_field_header(w, fid, TC_STRUCT);
  tcw_push(w);
}

/*! tcw_field_list_begin() : a list field header; then exactly `count` tcw_list_* elements. */
void tcw_field_list_begin(tc_writer *w, int16_t fid, int elem_type, uint32_t count) {
  tcw_field_header(w, fid, TC_LIST);
  if (w->st != VF_OK) return;
  if (count < 15) {
    uint8_t b = (uint8_t)((count << 4) | (uint32_t)elem_type);
    tcw_put(w, &b, 1);
  } else {
    uint8_t b = (uint8_t)(0xF0 | elem_type);
    tcw_put(w, &b, 1);
    tcw_uvarint(w, count);
  }
}

/*! tcw_list_i32() / _i64() / _binary() : one list element (no field header). */
void tcw_list_i32(tc_writer *w, int32_t v) {
  tcw_zvarint(w, v);
}

void tcw_list_i64(tc_writer *w, int64_t v) {
  tcw_zvarint(w, v);
}

void tcw_list_binary(tc_writer *w, const void *p, size_t n) {
  tcw_uvarint(w, n);
  if (n) tcw_put(w, p, n);
}

/*! tcw_list_struct_begin() : one struct element of a list; close it with tcw_struct_end(). */
void tcw_list_struct_begin(tc_writer *w) {
  tcw_push(w);
}
