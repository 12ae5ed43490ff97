/* Tests for the Variant decoder (src/format/pqt_variant.c) on values encoded by hand from
 * parquet-format VariantEncoding.md: every primitive type, short strings, objects and arrays with
 * every offset/id size and the large count form, metadata with 2-byte offsets, and every refusal
 * (truncation, bad ids, unknown types, another version, too deep, overlapping values).  DuckDB-
 * written variants, shredded ones and variants nested in lists and structs are checked against
 * DuckDB in tests/format/test_realworld.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

static const uint8_t k_meta_ab[] = {0x01, 0x02, 0x00, 0x01, 0x02, 'a', 'b'}; /* names a, b */
static const uint8_t k_meta_empty[] = {0x01, 0x00, 0x00};

/* Render (meta, value) to JSON; returns the text (static buffer) or NULL with *st set. */
static const char *render(const uint8_t *meta, size_t mlen, const uint8_t *v, size_t vlen,
                          vf_status *st, vf_error *err) {
  static char text[4096];
  pqt_variant_meta m;
  *st = pqt_variant_meta_parse(meta, mlen, &m, err);
  if (*st != VF_OK) return NULL;
  vf_buf b;
  vf_buf_init(&b, 0);
  *st = pqt_variant_to_json(&m, v, vlen, &b, err);
  const char *r = NULL;
  if (*st == VF_OK) {
    size_t n = b.len < sizeof text - 1 ? b.len : sizeof text - 1;
    memcpy(text, b.data, n);
    text[n] = '\0';
    r = text;
  }
  vf_buf_free(&b);
  return r;
}

static void expect_json(const uint8_t *v, size_t n, const char *want, int line) {
  vf_error err = {0};
  vf_status st;
  const char *got = render(k_meta_ab, sizeof k_meta_ab, v, n, &st, &err);
  if (!got)
    vf_test_fail(__FILE__, line, "error %s: %s (want %s)", vf_status_name(st), err.msg, want);
  else if (strcmp(got, want) != 0)
    vf_test_fail(__FILE__, line, "got %s, want %s", got, want);
}

static void expect_fail(const uint8_t *meta, size_t mlen, const uint8_t *v, size_t n,
                        vf_status want, const char *needle, int line) {
  vf_error err = {0};
  vf_status st;
  const char *got = render(meta, mlen, v, n, &st, &err);
  if (got)
    vf_test_fail(__FILE__, line, "decoded to %s, want %s", got, vf_status_name(want));
  else if (st != want)
    vf_test_fail(__FILE__, line, "got %s (%s), want %s", vf_status_name(st), err.msg,
                 vf_status_name(want));
  else if (needle && !strstr(err.msg, needle))
    vf_test_fail(__FILE__, line, "message lacks \"%s\": %s", needle, err.msg);
}

#define JSON(want, ...)                                                                      \
  do {                                                                                       \
    const uint8_t v_[] = {__VA_ARGS__};                                                      \
    expect_json(v_, sizeof v_, want, __LINE__);                                              \
  } while (0)

/* primitive header: type << 2 */
#define P(t) (uint8_t)((t) << 2)

VF_TEST(variant_primitives) {
  JSON("null", P(0));
  JSON("true", P(1));
  JSON("false", P(2));
  JSON("-123", P(3), 0x85);
  JSON("-2", P(4), 0xfe, 0xff);
  JSON("305419896", P(5), 0x78, 0x56, 0x34, 0x12);
  JSON("-9223372036854775808", P(6), 0, 0, 0, 0, 0, 0, 0, 0x80);
  JSON("2.5", P(7), 0, 0, 0, 0, 0, 0, 0x04, 0x40);
  JSON("\"NaN\"", P(7), 0, 0, 0, 0, 0, 0, 0xf8, 0x7f);
  JSON("\"-Infinity\"", P(14), 0, 0, 0x80, 0xff);
  JSON("1.5", P(14), 0, 0, 0xc0, 0x3f);
  JSON("123.45", P(8), 2, 0x39, 0x30, 0, 0);                               /* decimal4 12345 s2 */
  JSON("-0.001", P(8), 3, 0xff, 0xff, 0xff, 0xff);                         /* decimal4 -1 s3 */
  JSON("-12.345", P(9), 3, 0xc7, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff); /* decimal8 */
  JSON("170141183460469231731687303715884105727", P(10), 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f); /* decimal16 2^127-1 */
  JSON("\"2024-02-29\"", P(11), 0x46, 0x4d, 0, 0); /* 19782 days */
  JSON("\"1969-12-31\"", P(11), 0xff, 0xff, 0xff, 0xff);
  /* 2024-01-02 03:04:05.123456 UTC = 1704164645123456 us */
  JSON("\"2024-01-02 03:04:05.123456+00\"", P(12), 0x80, 0xb5, 0x4f, 0xc0, 0xed, 0x0d, 0x06, 0x00);
  JSON("\"2024-01-02 03:04:05.123456\"", P(13), 0x80, 0xb5, 0x4f, 0xc0, 0xed, 0x0d, 0x06, 0x00);
  JSON("\"1970-01-01 00:00:00.000000001+00\"", P(18), 1, 0, 0, 0, 0, 0, 0, 0);
  JSON("\"1969-12-31 23:59:59.999999999\"", P(19), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
  JSON("\"12:34:56.789\"", P(17), 0x08, 0x26, 0xe6, 0x8b, 0x0a, 0, 0, 0); /* 45296789000 us */
  JSON("\"3q0=\"", P(15), 2, 0, 0, 0, 0xde, 0xad);                         /* binary: base64 */
  JSON("\"\"", P(15), 0, 0, 0, 0);
  JSON("\"hi\"", P(16), 2, 0, 0, 0, 'h', 'i');
  JSON("\"00010203-0405-0607-0809-0a0b0c0d0e0f\"", P(20), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
       13, 14, 15);
  /* short strings (basic type 1, length in the header), escaping and bad UTF-8 replaced */
  JSON("\"\"", 0x01);
  JSON("\"a\\\"b\"", (3 << 2) | 1, 'a', '"', 'b');
  JSON("\"\\u0001\xef\xbf\xbd\"", (2 << 2) | 1, 0x01, 0xff);
}

VF_TEST(variant_objects_and_arrays) {
  /* {"a": 1, "b": "x"}: 1-byte ids and offsets */
  JSON("{\"a\":1,\"b\":\"x\"}", 0x02, 2, 0, 1, 0, 2, 4, P(3), 1, 0x05, 'x');
  /* values stored out of order (offsets not increasing) */
  JSON("{\"a\":1,\"b\":\"x\"}", 0x02, 2, 0, 1, 2, 0, 4, 0x05, 'x', P(3), 1);
  /* ids not in name order (DuckDB's unshredded writer): printed in name order */
  JSON("{\"a\":\"x\",\"b\":1}", 0x02, 2, 1, 0, 2, 0, 4, 0x05, 'x', P(3), 1);
  /* 2-byte ids, 2-byte offsets, 4-byte count (is_large) */
  JSON("{\"b\":[]}", (0x15 << 2) | 2, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0x03, 0, 0);
  /* arrays: nested; then 3-byte offsets with a 4-byte count */
  JSON("[true,[null],{}]", 0x03, 3, 0, 1, 6, 9, P(1), 0x03, 1, 0, 1, P(0), 0x02, 0, 0);
  JSON("[1]", (0x06 << 2) | 3, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, P(3), 1);
  JSON("{}", 0x02, 0, 0);
  JSON("[]", 0x03, 0, 0);
}

VF_TEST(variant_metadata) {
  vf_error err = {0};
  vf_status st;
  /* 2-byte dictionary offsets (offset_size_minus_one 1), sorted flag set */
  const uint8_t meta2[] = {0x51, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 'k', 'e', 'y'};
  const uint8_t obj[] = {0x02, 1, 0, 0, 1, P(0)};
  const char *got = render(meta2, sizeof meta2, obj, sizeof obj, &st, &err);
  CHECK(got && strcmp(got, "{\"key\":null}") == 0);
  expect_fail((const uint8_t[]){0x02, 0, 0}, 3, obj, sizeof obj, VF_EUNSUPPORTED, "version 2",
              __LINE__);
  expect_fail((const uint8_t[]){0x01}, 1, obj, sizeof obj, VF_ECORRUPT, "no dictionary size",
              __LINE__);
  expect_fail(NULL, 0, obj, sizeof obj, VF_ECORRUPT, "empty", __LINE__);
  /* a dictionary of 200 names in 5 bytes */
  expect_fail((const uint8_t[]){0x01, 200, 0, 1, 2}, 5, obj, sizeof obj, VF_ECORRUPT,
              "dictionary of 200 strings", __LINE__);
  /* a name whose offsets run past the string bytes */
  expect_fail((const uint8_t[]){0x01, 1, 0, 9, 'k'}, 5, obj, sizeof obj, VF_ECORRUPT,
              "spans bytes 0..9", __LINE__);
}

VF_TEST(variant_rejects_malformed_values) {
  const uint8_t *me = k_meta_empty;
  size_t ml = sizeof k_meta_empty;
  expect_fail(me, ml, NULL, 0, VF_ECORRUPT, "without its header byte", __LINE__);
  expect_fail(me, ml, (const uint8_t[]){P(6), 1, 2}, 3, VF_ECORRUPT, "needs 8 bytes, 2 remain",
              __LINE__);
  expect_fail(me, ml, (const uint8_t[]){P(16), 9, 0, 0, 0, 'a'}, 6, VF_ECORRUPT,
              "a string of 9 bytes", __LINE__);
  expect_fail(me, ml, (const uint8_t[]){(5 << 2) | 1, 'a'}, 2, VF_ECORRUPT,
              "short string of 5 bytes", __LINE__);
  expect_fail(me, ml, (const uint8_t[]){P(21)}, 1, VF_EUNSUPPORTED, "primitive type 21",
              __LINE__);
  expect_fail(me, ml, (const uint8_t[]){P(8), 39, 0, 0, 0, 0}, 6, VF_ECORRUPT, "scale above 38",
              __LINE__);
  /* TIME past 24:00:00 */
  expect_fail(me, ml, (const uint8_t[]){P(17), 0, 0, 0, 0, 0x80, 0, 0, 0}, 9, VF_ECORRUPT,
              "not a time of day", __LINE__);
  /* field id 0 with no names */
  expect_fail(me, ml, (const uint8_t[]){0x02, 1, 0, 0, 1, P(0)}, 6, VF_ECORRUPT,
              "field id 0 is not in the metadata dictionary", __LINE__);
  /* duplicate names (sorted and unsorted) */
  expect_fail(k_meta_ab, sizeof k_meta_ab, (const uint8_t[]){0x02, 2, 0, 0, 0, 1, 2, P(0), P(0)},
              9, VF_ECORRUPT, "duplicate field name", __LINE__);
  const uint8_t meta_aa[] = {0x01, 0x03, 0x00, 0x01, 0x02, 0x03, 'b', 'a', 'a'};
  expect_fail(meta_aa, sizeof meta_aa,
              (const uint8_t[]){0x02, 3, 0, 1, 2, 0, 1, 2, 3, P(0), P(0), P(0)}, 12, VF_ECORRUPT,
              "duplicate field name", __LINE__);
  /* offsets and counts past the value */
  expect_fail(me, ml, (const uint8_t[]){0x03, 200, 0}, 3, VF_ECORRUPT, "array of 200 elements",
              __LINE__);
  expect_fail(me, ml, (const uint8_t[]){0x03, 1, 0, 5, P(0)}, 5, VF_ECORRUPT,
              "claim 5 bytes, 1 remain", __LINE__);
  expect_fail(me, ml, (const uint8_t[]){0x03, 2, 0, 1, 1, P(0)}, 6, VF_ECORRUPT,
              "element 1 starts at offset 1", __LINE__);
  expect_fail(me, ml, (const uint8_t[]){0x03}, 1, VF_ECORRUPT, "element count", __LINE__);
}

/* arrays nested 200 deep; values that share their bytes (both elements of every level pointing
 * at the same inner array), which would render 2^40 nulls from 201 bytes */
VF_TEST(variant_depth_and_sharing_are_bounded) {
  /* level i: [x] with 2-byte offsets (header 0x07): header, count, offsets 0 and len(x) */
  uint8_t deep[200 * 6 + 1];
  size_t n = 0;
  for (int i = 0; i < 200; i++) {
    size_t inner = (size_t)(200 - i - 1) * 6 + 1;
    deep[n++] = 0x07;
    deep[n++] = 1;
    deep[n++] = 0;
    deep[n++] = 0;
    deep[n++] = (uint8_t)(inner & 0xff);
    deep[n++] = (uint8_t)(inner >> 8);
  }
  deep[n++] = P(0);
  expect_fail(k_meta_empty, sizeof k_meta_empty, deep, n, VF_ECORRUPT, "nested deeper than 128",
              __LINE__);
  /* level i: [x, x], offsets 0, 0, len(x) */
  uint8_t share[40 * 5 + 1];
  n = 0;
  for (int i = 0; i < 40; i++) {
    share[n++] = 0x03;
    share[n++] = 2;
    share[n++] = 0;
    share[n++] = 0;
    share[n++] = (uint8_t)((40 - i - 1) * 5 + 1);
  }
  share[n++] = P(0);
  expect_fail(k_meta_empty, sizeof k_meta_empty, share, n, VF_ECORRUPT,
              "more values than the bytes can hold", __LINE__);
}

VF_TEST(variant_object_walk) {
  pqt_variant_meta m;
  vf_error err = {0};
  CHECK_OK(pqt_variant_meta_parse(k_meta_ab, sizeof k_meta_ab, &m, &err));
  const uint8_t obj[] = {0x02, 2, 1, 0, 2, 0, 4, 0x05, 'x', P(3), 7};
  pqt_variant_object o;
  CHECK_OK(pqt_variant_object_open(&m, obj, sizeof obj, &o, &err));
  CHECK_EQ_INT(o.n, 2);
  const uint8_t *k, *v;
  size_t kn, vn;
  CHECK_OK(pqt_variant_object_field(&o, 0, &k, &kn, &v, &vn, &err));
  CHECK(kn == 1 && k[0] == 'b' && v == obj + 9 && vn == 2);
  CHECK_OK(pqt_variant_object_field(&o, 1, &k, &kn, &v, &vn, &err));
  CHECK(kn == 1 && k[0] == 'a' && v == obj + 7 && vn == 4);
  CHECK_STATUS(pqt_variant_object_open(&m, (const uint8_t[]){0x03, 0, 0}, 3, &o, &err),
               VF_ECORRUPT);
  CHECK(strstr(err.msg, "must be an object, found an array") != NULL);
}
