/* Tests for the thrift compact reader (pqt_thrift.c) and the parquet metadata decoders
 * (pqt_meta.c): hand-built thrift bytes for every wire type and every failure mode, the footer
 * of every conformance file in parquet-testing (must parse or fail cleanly, no leaks under
 * ASan), and decoded values checked against independent readers.
 *
 * Where the expected values come from (dev-time oracle runs, tests/oracle/node_modules):
 *   DuckDB 1.x  : select * from parquet_metadata('<file>') / parquet_file_metadata('<file>') /
 *                 parquet_schema('<file>')
 *   hyparquet   : parquetHeader() (src/column.js), readOffsetIndex() / readColumnIndex()
 * Each block below says which query produced its numbers. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* ------------------------------------------------------------ file helpers */

typedef struct blob {
  uint8_t *data;
  size_t len;
} blob;

static bool blob_read(const char *path, blob *b) {
  b->data = NULL;
  b->len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = fseek(f, 0, SEEK_END) == 0;
  long n = ok ? ftell(f) : -1;
  ok = ok && n >= 0 && fseek(f, 0, SEEK_SET) == 0;
  if (ok) {
    b->data = malloc((size_t)n + 1);
    ok = b->data && fread(b->data, 1, (size_t)n, f) == (size_t)n;
    b->len = (size_t)n;
  }
  fclose(f);
  if (!ok) {
    free(b->data);
    b->data = NULL;
  }
  return ok;
}

/* The footer thrift bytes of a plaintext-footer parquet file. 1 = ok, 0 = encrypted footer
 * ("PARE"), -1 = not parquet / bad length. */
static int footer_of(const blob *b, const uint8_t **p, uint32_t *len, uint64_t *off) {
  if (b->len < 12) return -1;
  const uint8_t *t = b->data + b->len - 8;
  if (memcmp(t + 4, "PARE", 4) == 0) return 0;
  if (memcmp(t + 4, "PAR1", 4) != 0 || memcmp(b->data, "PAR1", 4) != 0) return -1;
  uint32_t n = vf_load_u32le(t);
  if (n > b->len - 12) return -1;
  *len = n;
  *off = b->len - 8 - n;
  *p = b->data + *off;
  return 1;
}

static const char *pt_dir(char *buf, size_t n, const char *sub) {
  const char *sh = vf_test_shared();
  if (!sh) return NULL;
  snprintf(buf, n, "%s/data/parquet-testing/%s", sh, sub);
  return buf;
}

/* Load the footer of parquet-testing/<rel> into *b and parse it into *m (test fails if not). */
static bool load_meta(const char *rel, blob *b, pqt_file_meta *m) {
  char path[4096];
  if (!pt_dir(path, sizeof path, rel)) return false;
  if (!blob_read(path, b)) {
    vf_test_fail(__FILE__, __LINE__, "cannot read %s", path);
    return false;
  }
  const uint8_t *p;
  uint32_t len;
  uint64_t off;
  if (footer_of(b, &p, &len, &off) != 1) {
    vf_test_fail(__FILE__, __LINE__, "%s: no plaintext footer", rel);
    free(b->data);
    return false;
  }
  vf_error err = {0};
  vf_status st = pqt_parse_file_meta(p, len, off, m, &err);
  if (st) {
    vf_test_fail(__FILE__, __LINE__, "%s: %s", rel, err.msg);
    free(b->data);
    return false;
  }
  return true;
}

/* ------------------------------------------------------- thrift byte builder */

typedef struct tb {
  uint8_t b[8192];
  size_t n;
  int16_t last[32];
  int depth;
} tb;

static void tb_init(tb *t) {
  memset(t, 0, sizeof *t);
}
static void tb_byte(tb *t, uint8_t v) {
  if (t->n < sizeof t->b) t->b[t->n++] = v;
}
static void tb_varint(tb *t, uint64_t v) {
  while (v >= 0x80) {
    tb_byte(t, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  tb_byte(t, (uint8_t)v);
}
static void tb_zz(tb *t, int64_t v) {
  uint64_t u = (uint64_t)v;
  tb_varint(t, (u << 1) ^ (v < 0 ? UINT64_MAX : 0));
}
static void tb_field(tb *t, int16_t fid, int type) {
  int delta = fid - t->last[t->depth];
  if (delta > 0 && delta <= 15) {
    tb_byte(t, (uint8_t)(delta << 4 | type));
  } else {
    tb_byte(t, (uint8_t)type);
    tb_zz(t, fid);
  }
  t->last[t->depth] = fid;
}
static void tb_begin(tb *t) {
  t->last[++t->depth] = 0;
}
static void tb_end(tb *t) {
  tb_byte(t, 0);
  t->depth--;
}
static void tb_i32(tb *t, int16_t fid, int64_t v) {
  tb_field(t, fid, TC_I32);
  tb_zz(t, v);
}
static void tb_i64(tb *t, int16_t fid, int64_t v) {
  tb_field(t, fid, TC_I64);
  tb_zz(t, v);
}
static void tb_bin(tb *t, const char *s) {
  size_t n = strlen(s);
  tb_varint(t, n);
  for (size_t i = 0; i < n; i++)
    tb_byte(t, (uint8_t)s[i]);
}
static void tb_str(tb *t, int16_t fid, const char *s) {
  tb_field(t, fid, TC_BINARY);
  tb_bin(t, s);
}
static void tb_list(tb *t, int et, uint32_t n) {
  if (n < 15) {
    tb_byte(t, (uint8_t)(n << 4 | (uint32_t)et));
  } else {
    tb_byte(t, (uint8_t)(0xf0 | et));
    tb_varint(t, n);
  }
}
static void tb_struct_field(tb *t, int16_t fid) {
  tb_field(t, fid, TC_STRUCT);
  tb_begin(t);
}
/* Top-level: tb_init then tb_begin once; t->depth is 1 inside the outermost struct. */

/* A minimal valid FileMetaData: root group with one required INT32 leaf "x", one row group of
 * `rows` rows with one column chunk. */
static void tb_min_footer(tb *t, int64_t rows) {
  tb_init(t);
  tb_begin(t);
  tb_i32(t, 1, 1);
  tb_field(t, 2, TC_LIST);
  tb_list(t, TC_STRUCT, 2);
  tb_begin(t); /* root */
  tb_str(t, 4, "schema");
  tb_i32(t, 5, 1);
  tb_end(t);
  tb_begin(t); /* leaf */
  tb_i32(t, 1, PQT_INT32);
  tb_i32(t, 3, PQT_REQUIRED);
  tb_str(t, 4, "x");
  tb_end(t);
  tb_i64(t, 3, rows);
  tb_field(t, 4, TC_LIST);
  tb_list(t, TC_STRUCT, 1);
  tb_begin(t); /* RowGroup */
  tb_field(t, 1, TC_LIST);
  tb_list(t, TC_STRUCT, 1);
  tb_begin(t); /* ColumnChunk */
  tb_i64(t, 2, 4);
  tb_struct_field(t, 3); /* ColumnMetaData */
  tb_i32(t, 1, PQT_INT32);
  tb_field(t, 2, TC_LIST);
  tb_list(t, TC_I32, 1);
  tb_zz(t, PQT_ENC_PLAIN);
  tb_field(t, 3, TC_LIST);
  tb_list(t, TC_BINARY, 1);
  tb_bin(t, "x");
  tb_i32(t, 4, PQT_ZSTD);
  tb_i64(t, 5, rows);
  tb_i64(t, 6, 100);
  tb_i64(t, 7, 50);
  tb_i64(t, 9, 4);
  tb_end(t); /* ColumnMetaData */
  tb_end(t); /* ColumnChunk */
  tb_i64(t, 2, 100);
  tb_i64(t, 3, rows);
  tb_end(t); /* RowGroup */
  tb_str(t, 6, "vforge test");
  tb_end(t);
}

static void expect_corrupt(const uint8_t *p, size_t n, const char *needle, int line) {
  pqt_file_meta m;
  vf_error err = {0};
  vf_status st = pqt_parse_file_meta(p, n, 1000, &m, &err);
  if (st != VF_ECORRUPT) {
    vf_test_fail(__FILE__, line, "expected corrupt, got %s (%s)", vf_status_name(st), err.msg);
    if (st == VF_OK) pqt_file_meta_free(&m);
    return;
  }
  if (!strstr(err.msg, "offset"))
    vf_test_fail(__FILE__, line, "message lacks an offset: %s", err.msg);
  if (needle && !strstr(err.msg, needle))
    vf_test_fail(__FILE__, line, "message lacks \"%s\": %s", needle, err.msg);
  /* out must be zeroed again */
  if (m.schema || m.row_groups || m.nschema || m.created_by)
    vf_test_fail(__FILE__, line, "output not zeroed after an error");
}

/* --------------------------------------------------------- thrift reader */

VF_TEST(thrift_reads_every_wire_type) {
  tb t;
  tb_init(&t);
  tb_begin(&t);
  tb_field(&t, 1, TC_BYTE);
  tb_byte(&t, 0xfe); /* i8 -2 */
  tb_field(&t, 2, TC_I16);
  tb_zz(&t, -300);
  tb_i32(&t, 3, INT32_MIN);
  tb_i64(&t, 4, INT64_MAX);
  tb_field(&t, 5, TC_DOUBLE);
  double d = 1.5;
  uint8_t db[8];
  memcpy(db, &d, 8);
  for (int i = 0; i < 8; i++)
    tb_byte(&t, db[i]);
  tb_str(&t, 6, "abc");
  tb_field(&t, 7, TC_TRUE);
  tb_field(&t, 8, TC_FALSE);
  tb_i32(&t, 100, 7); /* long form: delta 92 */
  tb_i32(&t, -5, 9);  /* long form: negative field id */
  tb_field(&t, 20, TC_LIST);
  tb_list(&t, TC_I32, 20); /* long-form list header */
  for (int i = 0; i < 20; i++)
    tb_zz(&t, i - 10);
  tb_field(&t, 21, TC_LIST);
  tb_list(&t, TC_TRUE, 3); /* bool elements: one byte each */
  tb_byte(&t, 1);
  tb_byte(&t, 0);
  tb_byte(&t, 2);
  tb_end(&t);

  vf_error err = {0};
  tc_reader r;
  tc_init(&r, t.b, t.n, 0, &err);
  CHECK_OK(tc_struct_begin(&r));
  int type;
  int16_t fid;
  int8_t i8v;
  int16_t i16v;
  int32_t i32v;
  int64_t i64v;
  double dv;
  bool bv;
  const uint8_t *p;
  uint32_t n;
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_BYTE && fid == 1);
  CHECK_OK(tc_i8(&r, &i8v));
  CHECK_EQ_INT(i8v, -2);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_I16 && fid == 2);
  CHECK_OK(tc_i16(&r, &i16v));
  CHECK_EQ_INT(i16v, -300);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK_OK(tc_i32(&r, &i32v));
  CHECK_EQ_INT(i32v, INT32_MIN);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK_OK(tc_i64(&r, &i64v));
  CHECK(i64v == INT64_MAX);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_DOUBLE);
  CHECK_OK(tc_double(&r, &dv));
  CHECK(dv == 1.5);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK_OK(tc_binary(&r, &p, &n));
  CHECK(n == 3 && memcmp(p, "abc", 3) == 0);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_TRUE && fid == 7);
  CHECK_OK(tc_bool(&r, &bv));
  CHECK(bv);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_FALSE && fid == 8);
  CHECK_OK(tc_bool(&r, &bv));
  CHECK(!bv);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK_EQ_INT(fid, 100);
  CHECK_OK(tc_i32(&r, &i32v));
  CHECK_EQ_INT(i32v, 7);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK_EQ_INT(fid, -5);
  CHECK_OK(tc_i32(&r, &i32v));
  CHECK_EQ_INT(i32v, 9);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_LIST && fid == 20);
  int et;
  CHECK_OK(tc_list_begin(&r, &et, &n));
  CHECK(et == TC_I32 && n == 20);
  for (uint32_t i = 0; i < n; i++) {
    CHECK_OK(tc_i32(&r, &i32v));
    CHECK_EQ_INT(i32v, (int)i - 10);
  }
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK_OK(tc_list_begin(&r, &et, &n));
  CHECK(et == TC_TRUE && n == 3);
  bool bs[3];
  for (int i = 0; i < 3; i++)
    CHECK_OK(tc_bool(&r, &bs[i]));
  CHECK(bs[0] && !bs[1] && !bs[2]);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_STOP);
  CHECK_OK(tc_struct_end(&r));
  CHECK_EQ_INT(vf_cur_remaining(&r.cur), 0);
}

VF_TEST(thrift_skips_every_type) {
  tb t;
  tb_init(&t);
  tb_begin(&t);
  tb_field(&t, 1, TC_BYTE);
  tb_byte(&t, 7);
  tb_field(&t, 2, TC_I16);
  tb_zz(&t, 1234);
  tb_i32(&t, 3, -1);
  tb_i64(&t, 4, 1LL << 40);
  tb_field(&t, 5, TC_DOUBLE);
  for (int i = 0; i < 8; i++)
    tb_byte(&t, 0x11);
  tb_str(&t, 6, "skip me");
  tb_field(&t, 7, TC_TRUE);
  tb_field(&t, 8, TC_UUID);
  for (int i = 0; i < 16; i++)
    tb_byte(&t, (uint8_t)i);
  tb_field(&t, 9, TC_SET);
  tb_list(&t, TC_BINARY, 2);
  tb_bin(&t, "a");
  tb_bin(&t, "bc");
  tb_field(&t, 10, TC_MAP);
  tb_varint(&t, 2); /* map<i32, list<bool>> */
  tb_byte(&t, (uint8_t)(TC_I32 << 4 | TC_LIST));
  tb_zz(&t, 1);
  tb_list(&t, TC_TRUE, 1);
  tb_byte(&t, 1);
  tb_zz(&t, 2);
  tb_list(&t, TC_TRUE, 0);
  tb_field(&t, 11, TC_MAP);
  tb_varint(&t, 0); /* empty map: no type byte */
  tb_struct_field(&t, 12);
  tb_field(&t, 1, TC_FALSE);
  tb_struct_field(&t, 2);
  tb_str(&t, 1, "nested");
  tb_end(&t);
  tb_end(&t);
  tb_field(&t, 13, TC_LIST);
  tb_list(&t, TC_STRUCT, 2);
  tb_begin(&t);
  tb_field(&t, 1, TC_TRUE);
  tb_end(&t);
  tb_begin(&t);
  tb_end(&t);
  tb_field(&t, 14, TC_LIST);
  tb_list(&t, TC_DOUBLE, 1);
  for (int i = 0; i < 8; i++)
    tb_byte(&t, 0);
  tb_field(&t, 15, TC_LIST);
  tb_list(&t, TC_UUID, 1);
  for (int i = 0; i < 16; i++)
    tb_byte(&t, 0);
  tb_i32(&t, 16, 42); /* the field after all skipped ones must still read */
  tb_end(&t);

  vf_error err = {0};
  tc_reader r;
  tc_init(&r, t.b, t.n, 0, &err);
  CHECK_OK(tc_struct_begin(&r));
  int type, seen = 0;
  int16_t fid;
  int32_t last = 0;
  while (tc_field(&r, &type, &fid) == VF_OK && type != TC_STOP) {
    seen++;
    if (fid == 16) {
      CHECK_OK(tc_i32(&r, &last));
    } else {
      vf_status st = tc_skip(&r, type);
      if (st) vf_test_fail(__FILE__, __LINE__, "skip field %d: %s", fid, err.msg);
    }
  }
  CHECK_EQ_INT(seen, 16);
  CHECK_EQ_INT(last, 42);
  CHECK_OK(tc_struct_end(&r));
  CHECK_EQ_INT(vf_cur_remaining(&r.cur), 0);
}

/* One malformed input for the raw reader: read a struct, skipping every field; must fail with
 * VF_ECORRUPT naming an offset (and `needle`). */
static void expect_skip_corrupt(const uint8_t *p, size_t n, const char *needle, int line) {
  vf_error err = {0};
  tc_reader r;
  tc_init(&r, p, n, 500, &err);
  vf_status st = tc_skip(&r, TC_STRUCT);
  if (st != VF_ECORRUPT) {
    vf_test_fail(__FILE__, line, "expected corrupt, got %s", vf_status_name(st));
    return;
  }
  if (!strstr(err.msg, "offset 5")) vf_test_fail(__FILE__, line, "no offset in: %s", err.msg);
  if (needle && !strstr(err.msg, needle))
    vf_test_fail(__FILE__, line, "message lacks \"%s\": %s", needle, err.msg);
}

VF_TEST(thrift_rejects_malformed_input) {
  /* invalid field type nibbles 14 and 15 */
  const uint8_t bad_type[] = {0x1e, 0x00};
  expect_skip_corrupt(bad_type, sizeof bad_type, "invalid field type 14", __LINE__);
  const uint8_t bad_type15[] = {0x15, 0x02, 0x1f, 0x00};
  expect_skip_corrupt(bad_type15, sizeof bad_type15, "offset 502", __LINE__);
  /* type nibble 0 with a non-zero delta */
  const uint8_t zero_type[] = {0x10};
  expect_skip_corrupt(zero_type, sizeof zero_type, "invalid field type 0", __LINE__);
  /* truncated: no STOP */
  const uint8_t no_stop[] = {0x15, 0x02};
  expect_skip_corrupt(no_stop, sizeof no_stop, "end of the data", __LINE__);
  /* an overlong varint (11 continuation bytes) */
  const uint8_t overlong[] = {0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                              0xff, 0xff, 0xff, 0xff, 0x01, 0x00};
  expect_skip_corrupt(overlong, sizeof overlong, "varint", __LINE__);
  /* an i16 field id out of range in the long form */
  const uint8_t bad_fid[] = {0x05, 0x80, 0x80, 0x04, 0x02, 0x00};
  expect_skip_corrupt(bad_fid, sizeof bad_fid, "field id", __LINE__);
  /* field id delta overflowing int16 */
  tb t;
  tb_init(&t);
  tb_byte(&t, 0x05);
  tb_zz(&t, INT16_MAX);
  tb_zz(&t, 1);
  tb_byte(&t, 0x15);
  tb_zz(&t, 1);
  tb_byte(&t, 0);
  expect_skip_corrupt(t.b, t.n, "overflows", __LINE__);
  /* binary longer than the data */
  const uint8_t long_bin[] = {0x18, 0x90, 0x4e, 'a', 'b', 0x00};
  expect_skip_corrupt(long_bin, sizeof long_bin, "exceeds", __LINE__);
  /* a list claiming 2^31-1 elements */
  const uint8_t huge_list[] = {0x19, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00};
  expect_skip_corrupt(huge_list, sizeof huge_list, "cannot fit", __LINE__);
  /* a list of 3 doubles with only 16 bytes left */
  uint8_t dbl[20] = {0x19, 0x37};
  expect_skip_corrupt(dbl, sizeof dbl, "cannot fit", __LINE__);
  /* a list with an invalid element type */
  const uint8_t bad_elem[] = {0x19, 0x1e, 0x00, 0x00};
  expect_skip_corrupt(bad_elem, sizeof bad_elem, "element type 14", __LINE__);
  /* a map claiming many entries */
  const uint8_t huge_map[] = {0x1b, 0xff, 0xff, 0xff, 0x07, 0x55, 0x00};
  expect_skip_corrupt(huge_map, sizeof huge_map, "map of", __LINE__);
  /* bool list element that is not 0/1/2 */
  const uint8_t bad_bool[] = {0x19, 0x11, 0x07, 0x00};
  expect_skip_corrupt(bad_bool, sizeof bad_bool, "bool", __LINE__);
  /* truncated uuid and double */
  const uint8_t short_uuid[] = {0x1d, 1, 2, 3};
  expect_skip_corrupt(short_uuid, sizeof short_uuid, "uuid", __LINE__);
  const uint8_t short_dbl[] = {0x17, 1, 2, 3};
  expect_skip_corrupt(short_dbl, sizeof short_dbl, "double", __LINE__);
  /* structs nested 100 deep */
  tb_init(&t);
  for (int i = 0; i < 100; i++)
    tb_byte(&t, 0x1c);
  for (int i = 0; i < 101; i++)
    tb_byte(&t, 0);
  expect_skip_corrupt(t.b, t.n, "nested deeper", __LINE__);
  /* lists nested 100 deep */
  tb_init(&t);
  tb_byte(&t, 0x19);
  for (int i = 0; i < 100; i++)
    tb_byte(&t, 0x19);
  tb_byte(&t, 0x00);
  for (int i = 0; i < 100; i++)
    tb_byte(&t, 0);
  expect_skip_corrupt(t.b, t.n, "nested deeper", __LINE__);
}

/* ------------------------------------------------------------ FileMetaData */

VF_TEST(meta_minimal_footer_and_defaults) {
  tb t;
  tb_min_footer(&t, 10);
  pqt_file_meta m;
  vf_error err = {0};
  CHECK_OK(pqt_parse_file_meta(t.b, t.n, 0, &m, &err));
  CHECK_EQ_INT(m.version, 1);
  CHECK_EQ_INT(m.nschema, 2);
  CHECK_EQ_STR(m.schema[0].name, "schema");
  CHECK_EQ_INT(m.schema[0].type, -1);
  CHECK_EQ_INT(m.schema[0].repetition, -1);
  CHECK_EQ_INT(m.schema[0].num_children, 1);
  CHECK_EQ_INT(m.schema[1].type, PQT_INT32);
  CHECK_EQ_INT(m.schema[1].converted_type, -1);
  CHECK_EQ_INT(m.schema[1].field_id, -1);
  CHECK_EQ_INT(m.schema[1].logical, PQT_LT_NONE);
  CHECK_EQ_INT(m.num_rows, 10);
  CHECK_EQ_INT(m.nrow_groups, 1);
  const pqt_row_group *g = &m.row_groups[0];
  CHECK_EQ_INT(g->ncolumns, 1);
  CHECK_EQ_INT(g->file_offset, -1);
  CHECK_EQ_INT(g->total_compressed_size, -1);
  CHECK_EQ_INT(g->ordinal, -1);
  const pqt_column_chunk *c = &g->columns[0];
  CHECK(c->has_meta_data && !c->encrypted && !c->file_path);
  CHECK_EQ_INT(c->offset_index_offset, -1);
  CHECK_EQ_INT(c->column_index_offset, -1);
  CHECK_EQ_INT(c->meta.codec, PQT_ZSTD);
  CHECK_EQ_INT(c->meta.nencodings, 1);
  CHECK_EQ_INT(c->meta.path_len, 1);
  CHECK_EQ_STR(c->meta.path[0], "x");
  CHECK_EQ_INT(c->meta.index_page_offset, -1);
  CHECK_EQ_INT(c->meta.dictionary_page_offset, -1);
  CHECK(!c->meta.stats.has_null_count);
  CHECK_EQ_STR(m.created_by, "vforge test");
  CHECK(m.kv == NULL && !m.has_encryption_algorithm);
  pqt_file_meta_free(&m);
  pqt_file_meta_free(&m); /* zeroed: a second free is harmless */
}

/* fastparquet (thrift's Python compact writer) writes every empty list as one 0x00 byte: size 0
 * and element type 0, which is no valid type.  Its files always carry an empty
 * key_value_metadata list like this; it must read as an empty list (issue 14). */
VF_TEST(meta_fastparquet_empty_lists) {
  tb t;
  tb_min_footer(&t, 10);
  t.n--; /* reopen FileMetaData: drop its STOP */
  t.depth = 1;
  tb_field(&t, 5, TC_LIST); /* key_value_metadata: [] as fastparquet writes it */
  tb_byte(&t, 0x00);
  tb_field(&t, 7, TC_LIST); /* column_orders (skipped by type): [] the same way */
  tb_byte(&t, 0x00);
  tb_field(&t, 9, TC_LIST); /* an unknown field: the long form, size 0 with type 0 */
  tb_byte(&t, 0xf0);
  tb_byte(&t, 0x00);
  tb_end(&t);
  pqt_file_meta m;
  vf_error err = {0};
  CHECK_OK(pqt_parse_file_meta(t.b, t.n, 0, &m, &err));
  CHECK_EQ_INT(m.nkv, 0);
  CHECK_EQ_INT(m.nschema, 2);
  CHECK_EQ_INT(m.num_rows, 10);
  pqt_file_meta_free(&m);
  /* a list of one element of type 0 is still corrupt */
  const uint8_t one_of_type0[] = {0x19, 0x10, 0x00, 0x00};
  expect_skip_corrupt(one_of_type0, sizeof one_of_type0, "element type 0", __LINE__);
}

VF_TEST(meta_truncated_at_every_byte) {
  tb t;
  tb_min_footer(&t, 10);
  for (size_t n = 0; n < t.n; n++)
    expect_corrupt(t.b, n, NULL, __LINE__);
}

VF_TEST(meta_rejects_bad_values) {
  tb t;
  /* negative num_rows */
  tb_min_footer(&t, -5);
  expect_corrupt(t.b, t.n, "num_rows: expected >= 0, found -5", __LINE__);

  /* missing required field (no schema) */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, 1);
  tb_i64(&t, 3, 0);
  tb_field(&t, 4, TC_LIST);
  tb_list(&t, TC_STRUCT, 0);
  tb_end(&t);
  expect_corrupt(t.b, t.n, "required field 'schema'", __LINE__);

  /* a known field with the wrong wire type */
  tb_init(&t);
  tb_begin(&t);
  tb_str(&t, 1, "one");
  tb_end(&t);
  expect_corrupt(t.b, t.n, "FileMetaData.version: expected an integer, found a binary", __LINE__);

  /* schema list claiming 2^31-1 elements */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, 1);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_STRUCT, 0x7fffffff);
  tb_byte(&t, 0);
  tb_end(&t);
  expect_corrupt(t.b, t.n, "cannot fit", __LINE__);

  /* schema list of i32 instead of structs */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, 1);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_I32, 1);
  tb_zz(&t, 1);
  tb_end(&t);
  expect_corrupt(t.b, t.n, "expected a list of struct", __LINE__);

  /* physical type out of range; negative num_children; i32 overflow */
  int64_t bad[][2] = {{1, 8}, {5, -1}, {2, 1LL << 31}, {3, 4}};
  const char *want[] = {"SchemaElement.type", "num_children", "type_length", "repetition_type"};
  for (int k = 0; k < 4; k++) {
    tb_init(&t);
    tb_begin(&t);
    tb_i32(&t, 1, 1);
    tb_field(&t, 2, TC_LIST);
    tb_list(&t, TC_STRUCT, 1);
    tb_begin(&t);
    tb_str(&t, 4, "r");
    tb_i32(&t, (int16_t)bad[k][0], bad[k][1]);
    tb_end(&t);
    tb_end(&t);
    expect_corrupt(t.b, t.n, want[k], __LINE__);
  }

  /* deep nesting of an unknown struct field inside FileMetaData */
  tb_init(&t);
  tb_begin(&t);
  tb_byte(&t, 0xac); /* field 10, struct */
  for (int i = 0; i < 80; i++)
    tb_byte(&t, 0x1c);
  for (int i = 0; i < 82; i++)
    tb_byte(&t, 0);
  expect_corrupt(t.b, t.n, "nested deeper", __LINE__);

  /* negative column size and page offset */
  const char *cm_fields[] = {"total_compressed_size", "data_page_offset"};
  int16_t cm_fid[] = {7, 9};
  for (int k = 0; k < 2; k++) {
    tb_init(&t);
    tb_begin(&t);
    tb_i32(&t, 1, 1);
    tb_field(&t, 4, TC_LIST);
    tb_list(&t, TC_STRUCT, 1);
    tb_begin(&t);
    tb_field(&t, 1, TC_LIST);
    tb_list(&t, TC_STRUCT, 1);
    tb_begin(&t);
    tb_struct_field(&t, 3);
    tb_i64(&t, cm_fid[k], -1);
    tb_end(&t);
    tb_end(&t);
    tb_end(&t);
    tb_end(&t);
    expect_corrupt(t.b, t.n, cm_fields[k], __LINE__);
  }
}

VF_TEST(meta_logical_types) {
  /* one leaf per logical type, including a union member from the future (fid 30) */
  tb t;
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, 2);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_STRUCT, 6);
  /* DECIMAL(9, 2) */
  tb_begin(&t);
  tb_str(&t, 4, "dec");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 5);
  tb_i32(&t, 1, 2);
  tb_i32(&t, 2, 9);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  /* INTEGER(16, unsigned) */
  tb_begin(&t);
  tb_str(&t, 4, "int");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 10);
  tb_field(&t, 1, TC_BYTE);
  tb_byte(&t, 16);
  tb_field(&t, 2, TC_FALSE);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  /* TIMESTAMP(utc, NANOS) */
  tb_begin(&t);
  tb_str(&t, 4, "ts");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 8);
  tb_field(&t, 1, TC_TRUE);
  tb_struct_field(&t, 2);
  tb_struct_field(&t, 3);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  /* TIME(local, MICROS) */
  tb_begin(&t);
  tb_str(&t, 4, "time");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 7);
  tb_field(&t, 1, TC_FALSE);
  tb_struct_field(&t, 2);
  tb_struct_field(&t, 2);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  /* FLOAT16 */
  tb_begin(&t);
  tb_str(&t, 4, "half");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 15);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  /* unknown member 30 with a parameter */
  tb_begin(&t);
  tb_str(&t, 4, "future");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 30);
  tb_i32(&t, 1, 5);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_i64(&t, 3, 0);
  tb_field(&t, 4, TC_LIST);
  tb_list(&t, TC_STRUCT, 0);
  tb_end(&t);

  pqt_file_meta m;
  vf_error err = {0};
  vf_status st = pqt_parse_file_meta(t.b, t.n, 0, &m, &err);
  CHECK_OK(st);
  if (st) {
    fprintf(stderr, "  %s\n", err.msg);
    return;
  }
  CHECK_EQ_INT(m.nschema, 6);
  CHECK_EQ_INT(m.schema[0].logical, PQT_LT_DECIMAL);
  CHECK_EQ_INT(m.schema[0].lt_scale, 2);
  CHECK_EQ_INT(m.schema[0].lt_precision, 9);
  CHECK_EQ_INT(m.schema[1].logical, PQT_LT_INTEGER);
  CHECK_EQ_INT(m.schema[1].lt_bit_width, 16);
  CHECK(!m.schema[1].lt_signed);
  CHECK_EQ_INT(m.schema[2].logical, PQT_LT_TIMESTAMP);
  CHECK(m.schema[2].lt_utc);
  CHECK_EQ_INT(m.schema[2].lt_unit, PQT_NANOS);
  CHECK_EQ_INT(m.schema[3].logical, PQT_LT_TIME);
  CHECK(!m.schema[3].lt_utc);
  CHECK_EQ_INT(m.schema[3].lt_unit, PQT_MICROS);
  CHECK_EQ_INT(m.schema[4].logical, PQT_LT_FLOAT16);
  CHECK_EQ_INT(m.schema[5].logical, PQT_LT_OTHER);
  pqt_file_meta_free(&m);

  /* INTEGER with bitWidth 7 and DECIMAL with scale > precision are corrupt */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, 2);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_STRUCT, 1);
  tb_begin(&t);
  tb_str(&t, 4, "int");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 10);
  tb_field(&t, 1, TC_BYTE);
  tb_byte(&t, 7);
  tb_field(&t, 2, TC_TRUE);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  expect_corrupt(t.b, t.n, "bitWidth", __LINE__);
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, 2);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_STRUCT, 1);
  tb_begin(&t);
  tb_str(&t, 4, "dec");
  tb_struct_field(&t, 10);
  tb_struct_field(&t, 5);
  tb_i32(&t, 1, 5);
  tb_i32(&t, 2, 3);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  tb_end(&t);
  expect_corrupt(t.b, t.n, "exceeds precision", __LINE__);
}

/* Every footer in parquet-testing must parse (or, for PARQUET-1481, fail as corrupt with an
 * offset), build a schema, and free cleanly; encrypted footers ("PARE") are skipped. */
static void scan_dir(const char *sub, int *parsed, int *encrypted, int *rejected) {
  char dir[4096];
  if (!pt_dir(dir, sizeof dir, sub)) return;
  DIR *d = opendir(dir);
  if (!d) {
    vf_test_fail(__FILE__, __LINE__, "cannot open %s", dir);
    return;
  }
  struct dirent *de;
  while ((de = readdir(d))) {
    const char *nm = de->d_name;
    size_t nl = strlen(nm);
    bool is_pq = (nl > 8 && strcmp(nm + nl - 8, ".parquet") == 0) ||
                 (nl > 18 && strcmp(nm + nl - 18, ".parquet.encrypted") == 0);
    if (!is_pq) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, nm);
    blob b;
    if (!blob_read(path, &b)) continue;
    const uint8_t *p;
    uint32_t len;
    uint64_t off;
    int f = footer_of(&b, &p, &len, &off);
    if (f == 0) {
      (*encrypted)++;
    } else if (f < 0) {
      vf_test_fail(__FILE__, __LINE__, "%s: not a parquet file", nm);
    } else {
      pqt_file_meta m;
      vf_error err = {0};
      vf_status st = pqt_parse_file_meta(p, len, off, &m, &err);
      bool must_fail = strcmp(nm, "PARQUET-1481.parquet") == 0;
      if (must_fail) {
        if (st != VF_ECORRUPT || !strstr(err.msg, "offset"))
          vf_test_fail(__FILE__, __LINE__, "%s: want corrupt with an offset, got %s: %s", nm,
                       vf_status_name(st), err.msg);
        (*rejected)++;
        if (st == VF_OK) pqt_file_meta_free(&m);
      } else if (st) {
        vf_test_fail(__FILE__, __LINE__, "%s: %s", nm, err.msg);
      } else {
        pqt_schema s;
        st = pqt_schema_build(&m, &s, &err);
        if (st)
          vf_test_fail(__FILE__, __LINE__, "%s: schema: %s", nm, err.msg);
        else
          pqt_schema_free(&s);
        if (m.num_rows < 0 || m.nschema < 1) vf_test_fail(__FILE__, __LINE__, "%s: bad values", nm);
        pqt_file_meta_free(&m);
        (*parsed)++;
      }
    }
    free(b.data);
  }
  closedir(d);
}

VF_TEST(meta_every_conformance_footer) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  int parsed = 0, encrypted = 0, rejected = 0;
  scan_dir("data", &parsed, &encrypted, &rejected);
  scan_dir("data/geospatial", &parsed, &encrypted, &rejected);
  scan_dir("data/aes256", &parsed, &encrypted, &rejected);
  scan_dir("bad_data", &parsed, &encrypted, &rejected);
  /* 65 data/ *.parquet + 1 plaintext-footer .encrypted, 10 geospatial, 1 aes256 plaintext
   * footer, 7 bad_data files whose footers are fine */
  CHECK(parsed >= 80);
  CHECK(encrypted >= 10);
  CHECK_EQ_INT(rejected, 1);
}

/* Every prefix of real footers is corrupt (never a crash, never a leak); every single-byte
 * mutation parses or fails cleanly, and a parsed mutant builds a schema or fails cleanly. */
static void torture_footer(const char *rel) {
  blob b;
  pqt_file_meta m;
  if (!load_meta(rel, &b, &m)) return;
  pqt_file_meta_free(&m);
  const uint8_t *p;
  uint32_t len;
  uint64_t off;
  footer_of(&b, &p, &len, &off);
  for (uint32_t n = 0; n < len; n++)
    expect_corrupt(p, n, NULL, __LINE__);
  uint8_t *mut = malloc(len);
  static const uint8_t vals[] = {0x00, 0xff, 0x7f, 0x15, 0x19, 0x1c, 0x80};
  for (uint32_t i = 0; i < len; i++) {
    for (size_t k = 0; k < sizeof vals + 1; k++) {
      memcpy(mut, p, len);
      mut[i] = k < sizeof vals ? vals[k] : (uint8_t)(p[i] ^ 0x01);
      vf_error err = {0};
      vf_status st = pqt_parse_file_meta(mut, len, off, &m, &err);
      if (st == VF_OK) {
        pqt_schema s;
        st = pqt_schema_build(&m, &s, &err);
        if (st == VF_OK) pqt_schema_free(&s);
        pqt_file_meta_free(&m);
      }
      if (st != VF_OK && st != VF_ECORRUPT && st != VF_EUNSUPPORTED)
        vf_test_fail(__FILE__, __LINE__, "%s byte %u: %s", rel, i, vf_status_name(st));
    }
  }
  free(mut);
  free(b.data);
}

VF_TEST(meta_truncated_and_mutated_real_footers) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  torture_footer("data/alltypes_plain.parquet");
  torture_footer("data/nested_lists.snappy.parquet");
  torture_footer("data/nonnullable.impala.parquet");
  torture_footer("data/map_no_value.parquet");
  torture_footer("data/int32_with_null_pages.parquet");
}

/* alltypes_plain.parquet against DuckDB:
 *   parquet_file_metadata: num_rows 8, num_row_groups 1, format_version 1,
 *     created_by "impala version 1.3.0-INTERNAL (build 8a48ddb1eff84592b3fc06bc6f51ec120e1fffc9)"
 *   parquet_metadata (row group 0): 11 columns, UNCOMPRESSED, num_values 8, per column
 *     (type, data_page_offset, dictionary_page_offset, total_compressed_size):
 *     id INT32 49/4/73, bool_col BOOLEAN 109/-/24, ..., timestamp_col INT96 1040/929/139;
 *     encodings "RLE, PLAIN_DICTIONARY, PLAIN"; stats_null_count null. */
VF_TEST(meta_alltypes_plain_matches_duckdb) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  blob b;
  pqt_file_meta m;
  if (!load_meta("data/alltypes_plain.parquet", &b, &m)) return;
  CHECK_EQ_INT(m.version, 1);
  CHECK_EQ_INT(m.num_rows, 8);
  CHECK_EQ_INT(m.nrow_groups, 1);
  CHECK_EQ_STR(m.created_by,
               "impala version 1.3.0-INTERNAL (build 8a48ddb1eff84592b3fc06bc6f51ec120e1fffc9)");
  CHECK_EQ_INT(m.nschema, 12);
  static const struct {
    const char *name;
    int type;
    int64_t dpo, dict, csize;
  } cols[11] = {
      {"id", PQT_INT32, 49, 4, 73},
      {"bool_col", PQT_BOOLEAN, 109, -1, 24},
      {"tinyint_col", PQT_INT32, 189, 168, 47},
      {"smallint_col", PQT_INT32, 277, 256, 47},
      {"int_col", PQT_INT32, 366, 345, 47},
      {"bigint_col", PQT_INT64, 458, 429, 55},
      {"float_col", PQT_FLOAT, 545, 524, 47},
      {"double_col", PQT_DOUBLE, 639, 610, 55},
      {"date_string_col", PQT_BYTE_ARRAY, 766, 705, 88},
      {"string_col", PQT_BYTE_ARRAY, 863, 840, 49},
      {"timestamp_col", PQT_INT96, 1040, 929, 139},
  };
  const pqt_row_group *g = &m.row_groups[0];
  CHECK_EQ_INT(g->num_rows, 8);
  CHECK_EQ_INT(g->ncolumns, 11);
  for (int i = 0; i < 11 && i < g->ncolumns; i++) {
    const pqt_column_meta *cm = &g->columns[i].meta;
    CHECK_EQ_STR(m.schema[i + 1].name, cols[i].name);
    CHECK_EQ_INT(m.schema[i + 1].type, cols[i].type);
    CHECK_EQ_INT(m.schema[i + 1].repetition, PQT_OPTIONAL);
    CHECK_EQ_INT(cm->type, cols[i].type);
    CHECK_EQ_INT(cm->codec, PQT_UNCOMPRESSED);
    CHECK_EQ_INT(cm->num_values, 8);
    CHECK_EQ_INT(cm->data_page_offset, cols[i].dpo);
    CHECK_EQ_INT(cm->dictionary_page_offset, cols[i].dict);
    CHECK_EQ_INT(cm->total_compressed_size, cols[i].csize);
    CHECK_EQ_INT(cm->total_uncompressed_size, cols[i].csize);
    CHECK_EQ_INT(cm->path_len, 1);
    if (cm->path_len == 1) CHECK_EQ_STR(cm->path[0], cols[i].name);
    CHECK_EQ_INT(cm->nencodings, 3);
    if (cm->nencodings == 3) {
      CHECK_EQ_STR(pqt_encoding_name(cm->encodings[0]), "RLE");
      CHECK_EQ_STR(pqt_encoding_name(cm->encodings[1]), "PLAIN_DICTIONARY");
      CHECK_EQ_STR(pqt_encoding_name(cm->encodings[2]), "PLAIN");
    }
    CHECK(!cm->stats.has_null_count);
  }
  pqt_file_meta_free(&m);
  free(b.data);
}

/* nested_lists.snappy.parquet against DuckDB parquet_metadata: column 0 BYTE_ARRAY, SNAPPY,
 * num_values 18, data_page_offset 4, total_compressed 104 / uncompressed 103, null_count 3;
 * column 1 INT32 num_values 3, data_page_offset 108, null_count 0; 3 rows; path_in_schema
 * "a, list, element, list, element, list, element". */
VF_TEST(meta_nested_lists_matches_duckdb) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  blob b;
  pqt_file_meta m;
  if (!load_meta("data/nested_lists.snappy.parquet", &b, &m)) return;
  CHECK_EQ_INT(m.num_rows, 3);
  CHECK_EQ_INT(m.nrow_groups, 1);
  const pqt_row_group *g = &m.row_groups[0];
  CHECK_EQ_INT(g->ncolumns, 2);
  const pqt_column_meta *c0 = &g->columns[0].meta, *c1 = &g->columns[1].meta;
  CHECK_EQ_INT(c0->type, PQT_BYTE_ARRAY);
  CHECK_EQ_STR(pqt_codec_name(c0->codec), "SNAPPY");
  CHECK_EQ_INT(c0->num_values, 18);
  CHECK_EQ_INT(c0->data_page_offset, 4);
  CHECK_EQ_INT(c0->total_compressed_size, 104);
  CHECK_EQ_INT(c0->total_uncompressed_size, 103);
  CHECK(c0->stats.has_null_count);
  CHECK_EQ_INT(c0->stats.null_count, 3);
  CHECK_EQ_INT(c0->path_len, 7);
  static const char *path[] = {"a", "list", "element", "list", "element", "list", "element"};
  for (int i = 0; i < 7 && i < c0->path_len; i++)
    CHECK_EQ_STR(c0->path[i], path[i]);
  CHECK_EQ_INT(c1->num_values, 3);
  CHECK_EQ_INT(c1->data_page_offset, 108);
  CHECK(c1->stats.has_null_count);
  CHECK_EQ_INT(c1->stats.null_count, 0);
  pqt_file_meta_free(&m);
  free(b.data);
}

/* Logical types against DuckDB parquet_schema(): alltypes_tiny_pages tinyint_col
 * IntType(bitWidth=8, isSigned=1) / INT_8; byte_stream_split_extended decimal_plain
 * DecimalType(scale=3, precision=7), FLBA(4); float16_plain Float16Type() FLBA(2);
 * encrypt_columns_plaintext_footer int32_field TimeType(isAdjustedToUTC=1, unit=MILLIS);
 * unknown-logical-type "column with unknown type": an unknown LogicalType member. */
VF_TEST(meta_logical_types_match_duckdb) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  blob b;
  pqt_file_meta m;
  if (load_meta("data/alltypes_tiny_pages.parquet", &b, &m)) {
    const pqt_schema_elem *e = &m.schema[3];
    CHECK_EQ_STR(e->name, "tinyint_col");
    CHECK_EQ_INT(e->logical, PQT_LT_INTEGER);
    CHECK_EQ_INT(e->lt_bit_width, 8);
    CHECK(e->lt_signed);
    CHECK_EQ_INT(e->converted_type, PQT_CT_INT_8);
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/byte_stream_split_extended.gzip.parquet", &b, &m)) {
    int found = 0;
    for (int i = 0; i < m.nschema; i++) {
      const pqt_schema_elem *e = &m.schema[i];
      if (strcmp(e->name, "decimal_plain") == 0) {
        found++;
        CHECK_EQ_INT(e->logical, PQT_LT_DECIMAL);
        CHECK_EQ_INT(e->lt_scale, 3);
        CHECK_EQ_INT(e->lt_precision, 7);
        CHECK_EQ_INT(e->type, PQT_FIXED_LEN_BYTE_ARRAY);
        CHECK_EQ_INT(e->type_length, 4);
      } else if (strcmp(e->name, "float16_plain") == 0) {
        found++;
        CHECK_EQ_INT(e->logical, PQT_LT_FLOAT16);
        CHECK_EQ_INT(e->type_length, 2);
      }
    }
    CHECK_EQ_INT(found, 2);
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/encrypt_columns_plaintext_footer.parquet.encrypted", &b, &m)) {
    CHECK(m.has_encryption_algorithm);
    int found = 0;
    for (int i = 0; i < m.nschema; i++) {
      const pqt_schema_elem *e = &m.schema[i];
      if (strcmp(e->name, "int32_field") != 0) continue;
      found++;
      CHECK_EQ_INT(e->logical, PQT_LT_TIME);
      CHECK(e->lt_utc);
      CHECK_EQ_INT(e->lt_unit, PQT_MILLIS);
    }
    CHECK_EQ_INT(found, 1);
    bool any_encrypted = false;
    for (int c = 0; c < m.row_groups[0].ncolumns; c++)
      any_encrypted |= m.row_groups[0].columns[c].encrypted;
    CHECK(any_encrypted);
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/unknown-logical-type.parquet", &b, &m)) {
    int found = 0;
    for (int i = 0; i < m.nschema; i++)
      if (strcmp(m.schema[i].name, "column with unknown type") == 0) {
        found++;
        CHECK_EQ_INT(m.schema[i].logical, PQT_LT_OTHER);
      }
    CHECK_EQ_INT(found, 1);
    pqt_file_meta_free(&m);
    free(b.data);
  }
}

/* ------------------------------------------------------------- PageHeader */

static bool page_header_at(const blob *b, int64_t off, pqt_page_header *h, size_t *hdr_len) {
  vf_cursor c;
  vf_cur_init(&c, b->data, b->len, 0);
  vf_cur_skip(&c, (uint64_t)off);
  vf_error err = {0};
  vf_status st = pqt_parse_page_header(&c, h, &err);
  if (st) {
    vf_test_fail(__FILE__, __LINE__, "page header at %lld: %s", (long long)off, err.msg);
    return false;
  }
  *hdr_len = (size_t)(vf_cur_offset(&c) - (uint64_t)off);
  return true;
}

/* Expected values from hyparquet parquetHeader() at each column's first page. */
VF_TEST(page_headers_match_hyparquet) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  blob b;
  pqt_file_meta m;
  pqt_page_header h;
  size_t hl;
  if (load_meta("data/alltypes_plain.parquet", &b, &m)) {
    /* col 0 @4: DICTIONARY_PAGE 32/32, num_values 8, PLAIN_DICTIONARY; 13 header bytes */
    if (page_header_at(&b, 4, &h, &hl)) {
      CHECK_EQ_INT(hl, 13);
      CHECK_EQ_INT(h.type, PQT_DICTIONARY_PAGE);
      CHECK_EQ_INT(h.uncompressed_size, 32);
      CHECK_EQ_INT(h.compressed_size, 32);
      CHECK(h.has_dict_header && !h.has_data_header && !h.has_crc);
      CHECK_EQ_INT(h.dict_num_values, 8);
      CHECK_EQ_INT(h.dict_encoding, PQT_ENC_PLAIN_DICTIONARY);
    }
    /* col 1 @109: DATA_PAGE 7/7, 8 values, PLAIN, def RLE, rep BIT_PACKED; 17 header bytes */
    if (page_header_at(&b, 109, &h, &hl)) {
      CHECK_EQ_INT(hl, 17);
      CHECK_EQ_INT(h.type, PQT_DATA_PAGE);
      CHECK_EQ_INT(h.compressed_size, 7);
      CHECK(h.has_data_header);
      CHECK_EQ_INT(h.num_values, 8);
      CHECK_EQ_INT(h.encoding, PQT_ENC_PLAIN);
      CHECK_EQ_INT(h.def_encoding, PQT_ENC_RLE);
      CHECK_EQ_INT(h.rep_encoding, PQT_ENC_BIT_PACKED);
    }
    /* a truncated header is corrupt and leaves the cursor in place */
    vf_cursor c;
    vf_cur_init(&c, b.data + 4, 10, 4);
    vf_error err = {0};
    CHECK_STATUS(pqt_parse_page_header(&c, &h, &err), VF_ECORRUPT);
    CHECK(strstr(err.msg, "offset") != NULL);
    CHECK(c.p == b.data + 4);
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/datapage_v2.snappy.parquet", &b, &m)) {
    /* col 1 @67: DATA_PAGE_V2 10/12, num_values 5, num_nulls 0, num_rows 5,
     * DELTA_BINARY_PACKED, level lengths 0/0, is_compressed true; 37 header bytes */
    if (page_header_at(&b, 67, &h, &hl)) {
      CHECK_EQ_INT(hl, 37);
      CHECK_EQ_INT(h.type, PQT_DATA_PAGE_V2);
      CHECK(h.has_data_header_v2);
      CHECK_EQ_INT(h.uncompressed_size, 10);
      CHECK_EQ_INT(h.compressed_size, 12);
      CHECK_EQ_INT(h.num_values, 5);
      CHECK_EQ_INT(h.num_nulls, 0);
      CHECK_EQ_INT(h.num_rows, 5);
      CHECK_EQ_INT(h.encoding, PQT_ENC_DELTA_BINARY_PACKED);
      CHECK_EQ_INT(h.def_levels_byte_length, 0);
      CHECK_EQ_INT(h.rep_levels_byte_length, 0);
      CHECK(h.is_compressed);
    }
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/datapage_v1-snappy-compressed-checksum.parquet", &b, &m)) {
    /* col 0 @4: crc -42322992 (as i32), 2560 values; 26 header bytes */
    if (page_header_at(&b, 4, &h, &hl)) {
      CHECK_EQ_INT(hl, 26);
      CHECK(h.has_crc);
      CHECK(h.crc == (uint32_t)-42322992);
      CHECK_EQ_INT(h.num_values, 2560);
      CHECK_EQ_INT(h.uncompressed_size, 10240);
      CHECK_EQ_INT(h.compressed_size, 735);
    }
    pqt_file_meta_free(&m);
    free(b.data);
  }
}

VF_TEST(page_header_rejects_bad_values) {
  tb t;
  vf_error err = {0};
  pqt_page_header h;
  vf_cursor c;
  /* negative dictionary num_values (ARROW-RS-GH-6229-DICTHEADER) */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, PQT_DICTIONARY_PAGE);
  tb_i32(&t, 2, 10);
  tb_i32(&t, 3, 10);
  tb_struct_field(&t, 7);
  tb_i32(&t, 1, -3);
  tb_i32(&t, 2, 0);
  tb_end(&t);
  tb_end(&t);
  vf_cur_init(&c, t.b, t.n, 0);
  CHECK_STATUS(pqt_parse_page_header(&c, &h, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "DictionaryPageHeader.num_values") != NULL);
  /* a DATA_PAGE without its data_page_header */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, PQT_DATA_PAGE);
  tb_i32(&t, 2, 10);
  tb_i32(&t, 3, 10);
  tb_end(&t);
  vf_cur_init(&c, t.b, t.n, 0);
  CHECK_STATUS(pqt_parse_page_header(&c, &h, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "lacks") != NULL);
  /* negative compressed size */
  tb_init(&t);
  tb_begin(&t);
  tb_i32(&t, 1, PQT_DATA_PAGE);
  tb_i32(&t, 2, 10);
  tb_i32(&t, 3, -10);
  tb_end(&t);
  vf_cur_init(&c, t.b, t.n, 0);
  CHECK_STATUS(pqt_parse_page_header(&c, &h, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "compressed_page_size") != NULL);
  /* v2 header: is_compressed false is kept; num_nulls > num_values is corrupt */
  for (int k = 0; k < 2; k++) {
    tb_init(&t);
    tb_begin(&t);
    tb_i32(&t, 1, PQT_DATA_PAGE_V2);
    tb_i32(&t, 2, 10);
    tb_i32(&t, 3, 10);
    tb_struct_field(&t, 8);
    tb_i32(&t, 1, 5);
    tb_i32(&t, 2, k ? 6 : 1);
    tb_i32(&t, 3, 5);
    tb_i32(&t, 4, 0);
    tb_i32(&t, 5, 2);
    tb_i32(&t, 6, 0);
    tb_field(&t, 7, TC_FALSE);
    tb_end(&t);
    tb_end(&t);
    vf_cur_init(&c, t.b, t.n, 0);
    if (k == 0) {
      CHECK_OK(pqt_parse_page_header(&c, &h, &err));
      CHECK(!h.is_compressed);
      CHECK_EQ_INT(h.def_levels_byte_length, 2);
      CHECK_EQ_INT(vf_cur_remaining(&c), 0);
    } else {
      CHECK_STATUS(pqt_parse_page_header(&c, &h, &err), VF_ECORRUPT);
    }
  }
}

/* ------------------------------------------------------------- page index */

static bool read_index(const blob *b, int64_t off, int32_t len, const uint8_t **p) {
  if (off < 0 || len <= 0 || (uint64_t)off + (uint64_t)len > b->len) return false;
  *p = b->data + off;
  return true;
}

/* Expected values from hyparquet readOffsetIndex()/readColumnIndex():
 *   alltypes_tiny_pages col 0 (id): OffsetIndex @394311 len 3503, 325 pages, first
 *     {4, 109, 0}, {113, 109, 21}, last {37240, 89, 7284}; ColumnIndex @323583 len 3919,
 *     325 pages, UNORDERED, null_counts [0,0,0,...], min[0] = 122 (int32 LE), max[0] = 142.
 *   alltypes_tiny_pages col 1 (bool_col): ColumnIndex ASCENDING, 82 pages.
 *   int32_with_null_pages col 0: 10 pages, null_counts [8, 55, 100, ...], UNORDERED,
 *     min[0] = -2135807632, max[0] = 2144701119.
 *   datapage_v1-snappy-compressed-checksum col 0: null_counts [-1, -1] (unknown). */
VF_TEST(page_index_matches_hyparquet) {
  if (!vf_test_shared()) {
    vf_test_skip("VF_SHARED not set");
    return;
  }
  blob b;
  pqt_file_meta m;
  vf_error err = {0};
  const uint8_t *p;
  if (load_meta("data/alltypes_tiny_pages.parquet", &b, &m)) {
    const pqt_column_chunk *c0 = &m.row_groups[0].columns[0];
    CHECK_EQ_INT(c0->offset_index_offset, 394311);
    CHECK_EQ_INT(c0->offset_index_length, 3503);
    CHECK_EQ_INT(c0->column_index_offset, 323583);
    CHECK_EQ_INT(c0->column_index_length, 3919);
    pqt_offset_index oi;
    pqt_column_index ci;
    if (read_index(&b, c0->offset_index_offset, c0->offset_index_length, &p)) {
      CHECK_OK(pqt_parse_offset_index(p, (size_t)c0->offset_index_length,
                                      (uint64_t)c0->offset_index_offset, &oi, &err));
      CHECK_EQ_INT(oi.npages, 325);
      if (oi.npages == 325) {
        CHECK_EQ_INT(oi.pages[0].offset, 4);
        CHECK_EQ_INT(oi.pages[0].compressed_page_size, 109);
        CHECK_EQ_INT(oi.pages[0].first_row_index, 0);
        CHECK_EQ_INT(oi.pages[1].offset, 113);
        CHECK_EQ_INT(oi.pages[1].first_row_index, 21);
        CHECK_EQ_INT(oi.pages[324].offset, 37240);
        CHECK_EQ_INT(oi.pages[324].compressed_page_size, 89);
        CHECK_EQ_INT(oi.pages[324].first_row_index, 7284);
      }
      pqt_offset_index_free(&oi);
      /* truncated: corrupt, nothing leaked */
      for (int32_t n = 0; n < c0->offset_index_length; n += 7)
        CHECK_STATUS(pqt_parse_offset_index(p, (size_t)n, 0, &oi, &err), VF_ECORRUPT);
    }
    if (read_index(&b, c0->column_index_offset, c0->column_index_length, &p)) {
      CHECK_OK(pqt_parse_column_index(p, (size_t)c0->column_index_length,
                                      (uint64_t)c0->column_index_offset, &ci, &err));
      CHECK_EQ_INT(ci.npages, 325);
      CHECK_EQ_INT(ci.boundary_order, 0);
      CHECK(ci.null_counts != NULL);
      if (ci.npages == 325 && ci.null_counts) {
        CHECK_EQ_INT(ci.null_counts[0], 0);
        CHECK(!ci.null_pages[0]);
        CHECK_EQ_INT(ci.min_lens[0], 4);
        CHECK_EQ_INT((int32_t)vf_load_u32le(ci.min_values[0]), 122);
        CHECK_EQ_INT((int32_t)vf_load_u32le(ci.max_values[0]), 142);
      }
      pqt_column_index_free(&ci);
      for (int32_t n = 0; n < c0->column_index_length; n += 5)
        CHECK_STATUS(pqt_parse_column_index(p, (size_t)n, 0, &ci, &err), VF_ECORRUPT);
    }
    const pqt_column_chunk *c1 = &m.row_groups[0].columns[1];
    if (read_index(&b, c1->column_index_offset, c1->column_index_length, &p)) {
      CHECK_OK(pqt_parse_column_index(p, (size_t)c1->column_index_length, 0, &ci, &err));
      CHECK_EQ_INT(ci.npages, 82);
      CHECK_EQ_INT(ci.boundary_order, 1);
      pqt_column_index_free(&ci);
    }
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/int32_with_null_pages.parquet", &b, &m)) {
    const pqt_column_chunk *c0 = &m.row_groups[0].columns[0];
    pqt_column_index ci;
    if (read_index(&b, c0->column_index_offset, c0->column_index_length, &p)) {
      CHECK_OK(pqt_parse_column_index(p, (size_t)c0->column_index_length, 0, &ci, &err));
      CHECK_EQ_INT(ci.npages, 10);
      if (ci.npages == 10 && ci.null_counts) {
        CHECK_EQ_INT(ci.null_counts[0], 8);
        CHECK_EQ_INT(ci.null_counts[1], 55);
        CHECK_EQ_INT(ci.null_counts[2], 100);
        CHECK(ci.null_pages[2]); /* 100 nulls of 100 rows */
        CHECK_EQ_INT(ci.min_lens[2], 0);
        CHECK_EQ_INT((int32_t)vf_load_u32le(ci.min_values[0]), -2135807632);
        CHECK_EQ_INT((int32_t)vf_load_u32le(ci.max_values[0]), 2144701119);
      }
      pqt_column_index_free(&ci);
    }
    pqt_file_meta_free(&m);
    free(b.data);
  }
  if (load_meta("data/datapage_v1-snappy-compressed-checksum.parquet", &b, &m)) {
    const pqt_column_chunk *c0 = &m.row_groups[0].columns[0];
    pqt_column_index ci;
    if (read_index(&b, c0->column_index_offset, c0->column_index_length, &p)) {
      CHECK_OK(pqt_parse_column_index(p, (size_t)c0->column_index_length, 0, &ci, &err));
      CHECK_EQ_INT(ci.npages, 2);
      CHECK(ci.null_counts == NULL); /* -1 = unknown */
      pqt_column_index_free(&ci);
    }
    pqt_file_meta_free(&m);
    free(b.data);
  }
}

VF_TEST(page_index_rejects_bad_values) {
  tb t;
  vf_error err = {0};
  /* page locations whose first_row_index does not increase */
  tb_init(&t);
  tb_begin(&t);
  tb_field(&t, 1, TC_LIST);
  tb_list(&t, TC_STRUCT, 2);
  for (int i = 0; i < 2; i++) {
    tb_begin(&t);
    tb_i64(&t, 1, 4 + 100 * i);
    tb_i32(&t, 2, 100);
    tb_i64(&t, 3, 10);
    tb_end(&t);
  }
  tb_end(&t);
  pqt_offset_index oi;
  CHECK_STATUS(pqt_parse_offset_index(t.b, t.n, 0, &oi, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "does not increase") != NULL);
  CHECK(oi.pages == NULL && oi.npages == 0);
  /* column index lists of different lengths */
  tb_init(&t);
  tb_begin(&t);
  tb_field(&t, 1, TC_LIST);
  tb_list(&t, TC_TRUE, 2);
  tb_byte(&t, 0);
  tb_byte(&t, 1);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_BINARY, 2);
  tb_bin(&t, "a");
  tb_bin(&t, "");
  tb_field(&t, 3, TC_LIST);
  tb_list(&t, TC_BINARY, 1);
  tb_bin(&t, "z");
  tb_i32(&t, 4, 1);
  tb_end(&t);
  pqt_column_index ci;
  CHECK_STATUS(pqt_parse_column_index(t.b, t.n, 0, &ci, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "differ in length") != NULL);
  /* the same with matching lengths reads */
  tb_init(&t);
  tb_begin(&t);
  tb_field(&t, 1, TC_LIST);
  tb_list(&t, TC_TRUE, 2);
  tb_byte(&t, 0);
  tb_byte(&t, 1);
  tb_field(&t, 2, TC_LIST);
  tb_list(&t, TC_BINARY, 2);
  tb_bin(&t, "a");
  tb_bin(&t, "");
  tb_field(&t, 3, TC_LIST);
  tb_list(&t, TC_BINARY, 2);
  tb_bin(&t, "z");
  tb_bin(&t, "");
  tb_i32(&t, 4, 2);
  tb_end(&t);
  CHECK_OK(pqt_parse_column_index(t.b, t.n, 0, &ci, &err));
  CHECK_EQ_INT(ci.npages, 2);
  CHECK(!ci.null_pages[0] && ci.null_pages[1]);
  CHECK(ci.min_lens[0] == 1 && ci.min_values[0][0] == 'a' && ci.max_values[0][0] == 'z');
  CHECK_EQ_INT(ci.boundary_order, 2);
  CHECK(ci.null_counts == NULL);
  pqt_column_index_free(&ci);
}

VF_TEST(names) {
  CHECK_EQ_STR(pqt_physical_name(PQT_FLOAT), "FLOAT");
  CHECK_EQ_STR(pqt_physical_name(PQT_FIXED_LEN_BYTE_ARRAY), "FIXED_LEN_BYTE_ARRAY");
  CHECK_EQ_STR(pqt_physical_name(8), "UNKNOWN");
  CHECK_EQ_STR(pqt_physical_name(-1), "UNKNOWN");
  CHECK_EQ_STR(pqt_codec_name(PQT_ZSTD), "ZSTD");
  CHECK_EQ_STR(pqt_codec_name(PQT_LZ4_RAW), "LZ4_RAW");
  CHECK_EQ_STR(pqt_codec_name(99), "UNKNOWN");
  CHECK_EQ_STR(pqt_encoding_name(PQT_ENC_RLE_DICTIONARY), "RLE_DICTIONARY");
  CHECK_EQ_STR(pqt_encoding_name(PQT_ENC_BYTE_STREAM_SPLIT), "BYTE_STREAM_SPLIT");
  CHECK_EQ_STR(pqt_encoding_name(10), "UNKNOWN");
}
