/* Unit tests for the filter evaluator (src/corpus/filter*.c): the examples of Qdrant's filtering
 * documentation with the results the documentation gives, the null / missing / empty / array
 * rules of Qdrant's condition checker (its own unit-test payloads), datetimes, geo, has_id,
 * min_should, the vector-db-benchmark conditions form, errors naming the JSON path, and
 * flt_docs_select() (indexed) against row-by-row evaluation. */
#include <stdlib.h>

#include "vf_test.h"
#include "corpus/filter_internal.h"
#include "vforge/filter.h"

static int match_rc(const char *filter, const char *payload, const corpus_id *id) {
  flt_filter *f = NULL;
  vf_error err;
  if (flt_parse(filter, strlen(filter), "test", &f, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "parse %s: %s", filter, err.msg);
    return -1;
  }
  bool out = false;
  vf_status st = flt_match_json(f, payload, strlen(payload), id, &out, &err);
  flt_free(f);
  if (st != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "match %s on %s: %s", filter, payload, err.msg);
    return -1;
  }
  return out ? 1 : 0;
}

#define MATCH(f, p) CHECK_EQ_INT(match_rc((f), (p), NULL), 1)
#define NO_MATCH(f, p) CHECK_EQ_INT(match_rc((f), (p), NULL), 0)

/* which of the payloads (one per line of `rows`, ids 1..n) match: a string of ids "1,3,5" */
static void matching_ids(const char *filter, const char *const *rows, size_t n, char *out, size_t cap) {
  flt_filter *f = NULL;
  vf_error err;
  out[0] = 0;
  if (flt_parse(filter, strlen(filter), "test", &f, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "parse %s: %s", filter, err.msg);
    return;
  }
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    bool m = false;
    corpus_id id = {.num = i + 1};
    if (flt_match_json(f, rows[i], strlen(rows[i]), &id, &m, &err) != VF_OK)
      vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
    if (m) len += (size_t)snprintf(out + len, cap - len, "%s%zu", len ? "," : "", i + 1);
  }
  flt_free(f);
}

static const char *const CITIES[] = {
    "{\"city\": \"London\", \"color\": \"green\"}", "{\"city\": \"London\", \"color\": \"red\"}",
    "{\"city\": \"London\", \"color\": \"blue\"}",  "{\"city\": \"Berlin\", \"color\": \"red\"}",
    "{\"city\": \"Moscow\", \"color\": \"green\"}", "{\"city\": \"Moscow\", \"color\": \"blue\"}"};

VF_TEST(test_doc_clauses) {
  char got[128];
  matching_ids("{\"must\": [{\"key\": \"city\", \"match\": {\"value\": \"London\"}}, {\"key\": \"color\", "
               "\"match\": {\"value\": \"red\"}}]}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "2");
  matching_ids("{\"should\": [{\"key\": \"city\", \"match\": {\"value\": \"London\"}}, {\"key\": \"color\", "
               "\"match\": {\"value\": \"red\"}}]}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "1,2,3,4");
  matching_ids("{\"must_not\": [{\"key\": \"city\", \"match\": {\"value\": \"London\"}}, {\"key\": \"color\", "
               "\"match\": {\"value\": \"red\"}}]}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "5,6");
  matching_ids("{\"must\": [{\"key\": \"city\", \"match\": {\"value\": \"London\"}}], \"must_not\": "
               "[{\"key\": \"color\", \"match\": {\"value\": \"red\"}}]}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "1,3");
  matching_ids("{\"must_not\": [{\"must\": [{\"key\": \"city\", \"match\": {\"value\": \"London\"}}, "
               "{\"key\": \"color\", \"match\": {\"value\": \"red\"}}]}]}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "1,3,4,5,6");
  /* has_id of the documentation: ids 1, 3, 5 */
  matching_ids("{\"must\": [{\"has_id\": [1, 3, 5, 7, 9, 11]}]}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "1,3,5");
  /* a single condition instead of a list, and min_should */
  matching_ids("{\"must\": {\"key\": \"color\", \"match\": {\"value\": \"blue\"}}}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "3,6");
  matching_ids("{\"min_should\": {\"conditions\": [{\"key\": \"city\", \"match\": {\"value\": \"London\"}}, "
               "{\"key\": \"color\", \"match\": {\"value\": \"red\"}}, {\"has_id\": [2, 5]}], \"min_count\": 2}}",
               CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "2");
  /* an empty filter matches everything, an empty should nothing, an empty must everything */
  matching_ids("{}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "1,2,3,4,5,6");
  matching_ids("{\"should\": []}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "");
  matching_ids("{\"must\": [], \"should\": null}", CITIES, 6, got, sizeof got);
  CHECK_EQ_STR(got, "1,2,3,4,5,6");
}

VF_TEST(test_match_kinds) {
  const char *arr = "{\"color\": [\"black\", \"green\"]}";
  MATCH("{\"must\": [{\"key\": \"color\", \"match\": {\"any\": [\"black\", \"yellow\"]}}]}", arr);
  MATCH("{\"must\": [{\"key\": \"color\", \"match\": {\"except\": [\"black\", \"yellow\"]}}]}", arr);
  NO_MATCH("{\"must\": [{\"key\": \"color\", \"match\": {\"except\": [\"black\", \"green\"]}}]}", arr);
  MATCH("{\"must\": [{\"key\": \"color\", \"match\": {\"value\": \"green\"}}]}", arr);
  /* integers: 3 matches, 3.0 does not (not an integer JSON number); bools */
  MATCH("{\"must\": [{\"key\": \"n\", \"match\": {\"value\": 3}}]}", "{\"n\": 3}");
  NO_MATCH("{\"must\": [{\"key\": \"n\", \"match\": {\"value\": 3}}]}", "{\"n\": 3.0}");
  NO_MATCH("{\"must\": [{\"key\": \"n\", \"match\": {\"value\": 3}}]}", "{\"n\": \"3\"}");
  MATCH("{\"must\": [{\"key\": \"n\", \"match\": {\"any\": [1, 3]}}]}", "{\"n\": [7, 3]}");
  MATCH("{\"must\": [{\"key\": \"b\", \"match\": {\"value\": true}}]}", "{\"b\": true}");
  NO_MATCH("{\"must\": [{\"key\": \"b\", \"match\": {\"value\": false}}]}", "{\"b\": true}");
  /* except: a value of another type holds, null and missing do not */
  MATCH("{\"must\": [{\"key\": \"x\", \"match\": {\"except\": [1, 2]}}]}", "{\"x\": true}");
  MATCH("{\"must\": [{\"key\": \"x\", \"match\": {\"except\": [1, 2]}}]}", "{\"x\": 2.5}");
  MATCH("{\"must\": [{\"key\": \"x\", \"match\": {\"except\": [1, 2]}}]}", "{\"x\": \"1\"}");
  NO_MATCH("{\"must\": [{\"key\": \"x\", \"match\": {\"except\": [1, 2]}}]}", "{\"x\": null}");
  NO_MATCH("{\"must\": [{\"key\": \"x\", \"match\": {\"except\": [1, 2]}}]}", "{\"y\": 5}");
  NO_MATCH("{\"must\": [{\"key\": \"x\", \"match\": {\"any\": []}}]}", "{\"x\": 1}");
  /* text (substring without a full-text index), text_any, phrase, prefix */
  MATCH("{\"must\": [{\"key\": \"t\", \"match\": {\"text\": \"brown fox\"}}]}", "{\"t\": \"quick brown fox\"}");
  NO_MATCH("{\"must\": [{\"key\": \"t\", \"match\": {\"phrase\": \"fox brown\"}}]}", "{\"t\": \"quick brown fox\"}");
  MATCH("{\"must\": [{\"key\": \"t\", \"match\": {\"text_any\": \"good cheap\"}}]}", "{\"t\": \"cheap hardware\"}");
  NO_MATCH("{\"must\": [{\"key\": \"t\", \"match\": {\"text_any\": \"good cheap\"}}]}", "{\"t\": \"fine\"}");
  MATCH("{\"must\": [{\"key\": \"t\", \"match\": {\"prefix\": \"qui\"}}]}", "{\"t\": \"quick\"}");
  NO_MATCH("{\"must\": [{\"key\": \"t\", \"match\": {\"prefix\": \"uick\"}}]}", "{\"t\": \"quick\"}");
  /* escaped strings compare decoded */
  MATCH("{\"must\": [{\"key\": \"s\", \"match\": {\"value\": \"a\\\"b\\u00e9\"}}]}", "{\"s\": \"a\\\"b\xc3\xa9\"}");
  /* duplicate keys: the last wins (serde_json) */
  MATCH("{\"must\": [{\"key\": \"k\", \"match\": {\"value\": 2}}]}", "{\"k\": 1, \"k\": 2}");
  NO_MATCH("{\"must\": [{\"key\": \"k\", \"match\": {\"value\": 1}}]}", "{\"k\": 1, \"k\": 2}");
}

static const char *const COUNTRIES[] = {
    "{\"country\": {\"name\": \"Germany\", \"cities\": [{\"name\": \"Berlin\", \"population\": 3.7, "
    "\"sightseeing\": [\"Brandenburg Gate\", \"Reichstag\"]}, {\"name\": \"Munich\", \"population\": 1.5, "
    "\"sightseeing\": [\"Marienplatz\", \"Olympiapark\"]}]}}",
    "{\"country\": {\"name\": \"Japan\", \"cities\": [{\"name\": \"Tokyo\", \"population\": 9.3, "
    "\"sightseeing\": [\"Tokyo Tower\", \"Tokyo Skytree\"]}, {\"name\": \"Osaka\", \"population\": 2.7, "
    "\"sightseeing\": [\"Osaka Castle\", \"Universal Studios Japan\"]}]}}"};

VF_TEST(test_nested_keys) {
  char got[64];
  matching_ids("{\"should\": [{\"key\": \"country.name\", \"match\": {\"value\": \"Germany\"}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "1");
  matching_ids("{\"should\": [{\"key\": \"country.cities[].population\", \"range\": {\"gte\": 9.0}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "2");
  matching_ids("{\"should\": [{\"key\": \"country.cities[].sightseeing\", \"match\": {\"value\": \"Osaka Castle\"}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "2");
  matching_ids("{\"must\": [{\"key\": \"country.cities[1].name\", \"match\": {\"value\": \"Munich\"}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "1");
  /* a.b does not look into an array: cities.name has no value */
  matching_ids("{\"must\": [{\"key\": \"country.cities.name\", \"match\": {\"value\": \"Tokyo\"}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "");
  matching_ids("{\"must\": [{\"key\": \"country.cities[].sightseeing[]\", \"values_count\": {\"gt\": 1}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "");
  matching_ids("{\"must\": [{\"key\": \"country.cities[].sightseeing\", \"values_count\": {\"gt\": 1}}]}", COUNTRIES, 2, got, sizeof got);
  CHECK_EQ_STR(got, "1,2");
  /* quoted keys */
  MATCH("{\"must\": [{\"key\": \"\\\"a.b\\\".c\", \"match\": {\"value\": 1}}]}", "{\"a.b\": {\"c\": 1}}");
  NO_MATCH("{\"must\": [{\"key\": \"a.b.c\", \"match\": {\"value\": 1}}]}", "{\"a.b\": {\"c\": 1}}");
}

VF_TEST(test_nested_object_filter) {
  static const char *const DINOS[] = {
      "{\"dinosaur\": \"t-rex\", \"diet\": [{\"food\": \"leaves\", \"likes\": false}, {\"food\": \"meat\", \"likes\": true}]}",
      "{\"dinosaur\": \"diplodocus\", \"diet\": [{\"food\": \"leaves\", \"likes\": true}, {\"food\": \"meat\", \"likes\": false}]}"};
  char got[64];
  matching_ids("{\"must\": [{\"key\": \"diet[].food\", \"match\": {\"value\": \"meat\"}}, {\"key\": \"diet[].likes\", "
               "\"match\": {\"value\": true}}]}", DINOS, 2, got, sizeof got);
  CHECK_EQ_STR(got, "1,2");
  matching_ids("{\"must\": [{\"nested\": {\"key\": \"diet\", \"filter\": {\"must\": [{\"key\": \"food\", \"match\": "
               "{\"value\": \"meat\"}}, {\"key\": \"likes\", \"match\": {\"value\": true}}]}}}]}", DINOS, 2, got, sizeof got);
  CHECK_EQ_STR(got, "1");
  matching_ids("{\"must\": [{\"nested\": {\"key\": \"diet[]\", \"filter\": {\"must\": [{\"key\": \"food\", \"match\": "
               "{\"value\": \"meat\"}}, {\"key\": \"likes\", \"match\": {\"value\": true}}]}}}]}", DINOS, 2, got, sizeof got);
  CHECK_EQ_STR(got, "1");
}

/* the payload of Qdrant's condition-checker unit test, with its assertions */
static const char *QD_PAYLOAD =
    "{\"location\": {\"lon\": 13.404954, \"lat\": 52.520008}, \"price\": 499.90, \"amount\": 10, "
    "\"rating\": [3, 7, 9, 9], \"color\": \"red\", \"has_delivery\": true, \"shipped_at\": "
    "\"2020-02-15T00:00:00Z\", \"parts\": [], \"packaging\": null, \"not_null\": [null]}";

VF_TEST(test_null_empty_missing) {
  const char *p = QD_PAYLOAD;
  NO_MATCH("{\"must\": [{\"is_empty\": {\"key\": \"price\"}}]}", p);
  MATCH("{\"must\": [{\"is_empty\": {\"key\": \"something_new\"}}]}", p);
  MATCH("{\"must\": [{\"is_empty\": {\"key\": \"parts\"}}]}", p);
  MATCH("{\"must\": [{\"is_empty\": {\"key\": \"packaging\"}}]}", p);
  NO_MATCH("{\"must\": [{\"is_empty\": {\"key\": \"not_null\"}}]}", p);
  NO_MATCH("{\"must\": [{\"is_null\": {\"key\": \"amount\"}}]}", p);
  NO_MATCH("{\"must\": [{\"is_null\": {\"key\": \"parts\"}}]}", p);
  NO_MATCH("{\"must\": [{\"is_null\": {\"key\": \"something_else\"}}]}", p);
  MATCH("{\"must\": [{\"is_null\": {\"key\": \"packaging\"}}]}", p);
  NO_MATCH("{\"must\": [{\"is_null\": {\"key\": \"not_null\"}}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"rating\", \"values_count\": {\"gte\": 10}}]}", p);
  MATCH("{\"must\": [{\"key\": \"rating\", \"values_count\": {\"lt\": 5}}]}", p);
  MATCH("{\"must\": [{\"key\": \"color\", \"values_count\": {\"lte\": 1, \"gte\": 1}}]}", p);
  MATCH("{\"must\": [{\"key\": \"packaging\", \"values_count\": {\"lt\": 1}}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"missing\", \"values_count\": {\"lt\": 1}}]}", p);
  MATCH("{\"must\": [{\"key\": \"has_delivery\", \"match\": {\"value\": true}}]}", p);
  MATCH("{\"must\": [{\"key\": \"rating\", \"range\": {\"gt\": 8}}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"rating\", \"range\": {\"gt\": 9}}]}", p);
  MATCH("{\"must\": [{\"key\": \"price\", \"range\": {\"gte\": 499.9, \"lt\": 500}}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"color\", \"range\": {\"gte\": 0}}]}", p);
  /* the field forms is_empty / is_null (Qdrant's test_value_checker_for_null_or_empty) */
  static const char *vals[] = {"[]", "[null]", "[true]", "[true, null]", "{}", "\"string\"", "1", "true"};
  static const int want_empty[] = {1, 0, 0, 0, 0, 0, 0, 0};
  static const int want_null[] = {0, 1, 0, 1, 0, 0, 0, 0};
  for (int i = 0; i < 8; i++) {
    char pl[64];
    snprintf(pl, sizeof pl, "{\"key\": %s}", vals[i]);
    CHECK_EQ_INT(match_rc("{\"must\": [{\"key\": \"key\", \"is_empty\": true}]}", pl, NULL), want_empty[i]);
    CHECK_EQ_INT(match_rc("{\"must\": [{\"key\": \"key\", \"is_empty\": false}]}", pl, NULL), !want_empty[i]);
    CHECK_EQ_INT(match_rc("{\"must\": [{\"key\": \"key\", \"is_null\": true}]}", pl, NULL), want_null[i]);
    CHECK_EQ_INT(match_rc("{\"must\": [{\"key\": \"key\", \"is_null\": false}]}", pl, NULL), !want_null[i]);
  }
  /* a missing key: is_empty: true holds, is_null: false holds */
  MATCH("{\"must\": [{\"key\": \"nope\", \"is_empty\": true}]}", p);
  MATCH("{\"must\": [{\"key\": \"nope\", \"is_null\": false}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"nope\", \"is_null\": true}]}", p);
  /* an empty payload */
  MATCH("{\"must\": [{\"is_empty\": {\"key\": \"a\"}}]}", "");
  NO_MATCH("{\"must\": [{\"key\": \"a\", \"match\": {\"value\": 1}}]}", "{}");
}

VF_TEST(test_datetime) {
  const char *p = QD_PAYLOAD;
  MATCH("{\"must\": [{\"key\": \"shipped_at\", \"range\": {\"gte\": \"2020-02-01T00:00:00Z\", \"lt\": \"2020-03-01T00:00:00Z\"}}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"shipped_at\", \"range\": {\"gte\": \"2020-03-01T00:00:00Z\", \"lt\": \"2020-04-01T00:00:00Z\"}}]}", p);
  int64_t a, b;
  CHECK(flt_datetime_parse("2023-02-08T10:49:00Z", 20, &a));
  CHECK(flt_datetime_parse("2023-02-08T11:49:00+01:00", 25, &b));
  CHECK_EQ_INT(a, b);
  CHECK(flt_datetime_parse("2023-02-08 10:49:00", 19, &b));
  CHECK_EQ_INT(a, b);
  CHECK(flt_datetime_parse("2023-02-08 10:49", 16, &b));
  CHECK_EQ_INT(a, b);
  CHECK(flt_datetime_parse("2023-02-08T12:49:00.000+0200", 28, &b));
  CHECK_EQ_INT(a, b);
  CHECK(flt_datetime_parse("2023-02-08", 10, &b));
  CHECK_EQ_INT(a - b, (int64_t)(10 * 3600 + 49 * 60) * 1000000);
  CHECK(flt_datetime_parse("1970-01-01T00:00:00.5Z", 22, &b));
  CHECK_EQ_INT(b, 500000);
  CHECK(flt_datetime_parse("2024-02-29", 10, &b));
  CHECK(!flt_datetime_parse("2023-02-29", 10, &b));
  CHECK(!flt_datetime_parse("2023-13-01", 10, &b));
  CHECK(!flt_datetime_parse("2023-02-08T25:00:00Z", 20, &b));
  CHECK(!flt_datetime_parse("2023-02-08X", 11, &b));
  CHECK(!flt_datetime_parse("yesterday", 9, &b));
  /* a string value that is not a datetime does not match; the TIMESTAMP text `cat` writes does */
  NO_MATCH("{\"must\": [{\"key\": \"d\", \"range\": {\"gt\": \"2000-01-01\"}}]}", "{\"d\": \"soon\"}");
  MATCH("{\"must\": [{\"key\": \"d\", \"range\": {\"gt\": \"2000-01-01\"}}]}", "{\"d\": \"2021-05-06 07:08:09.123456\"}");
}

VF_TEST(test_geo_and_ids) {
  const char *two = "{\"loc\": [{\"lat\": 52.52197645, \"lon\": 13.413637435864272}, {\"lat\": 55.7536283, \"lon\": 37.62137960067377}]}";
  MATCH("{\"must\": [{\"key\": \"loc\", \"geo_radius\": {\"center\": {\"lat\": 52.511, \"lon\": 13.423637}, \"radius\": 2000.0}}]}", two);
  NO_MATCH("{\"must\": [{\"key\": \"loc\", \"geo_radius\": {\"center\": {\"lat\": 52.511, \"lon\": 20.423637}, \"radius\": 2000.0}}]}", two);
  const char *p = QD_PAYLOAD;
  MATCH("{\"must\": [{\"key\": \"location\", \"geo_bounding_box\": {\"top_left\": {\"lon\": 13.08835, \"lat\": 52.67551}, \"bottom_right\": {\"lon\": 13.76116, \"lat\": 52.33826}}}]}", p);
  NO_MATCH("{\"must\": [{\"key\": \"location\", \"geo_bounding_box\": {\"top_left\": {\"lon\": 37.0366, \"lat\": 56.1859}, \"bottom_right\": {\"lon\": 38.2532, \"lat\": 55.317}}}]}", p);
  corpus_id u = {.is_uuid = true};
  memcpy(u.uuid, "550e8400-e29b-41d4-a716-446655440000", 37);
  CHECK_EQ_INT(match_rc("{\"must\": [{\"has_id\": [\"550E8400-E29B-41D4-A716-446655440000\"]}]}", "{}", &u), 1);
  CHECK_EQ_INT(match_rc("{\"must\": [{\"has_id\": [\"550e8400e29b41d4a716446655440000\"]}]}", "{}", &u), 1);
  CHECK_EQ_INT(match_rc("{\"must\": [{\"has_id\": [42]}]}", "{}", &u), 0);
  CHECK_EQ_INT(match_rc("{\"must\": [{\"has_id\": [42]}]}", "{}", NULL), 0);
  corpus_id n42 = {.num = 42};
  CHECK_EQ_INT(match_rc("{\"must_not\": [{\"has_id\": [42]}]}", "{}", &n42), 0);
}

static void parse_fails(const char *text, vf_status want, const char *needle) {
  flt_filter *f = NULL;
  vf_error err;
  vf_error_clear(&err);
  vf_status st = flt_parse(text, strlen(text), "--filter", &f, &err);
  flt_free(f);
  if (st != want) {
    vf_test_fail(__FILE__, __LINE__, "%s -> %s (%s), want %s", text, vf_status_name(st), err.msg, vf_status_name(want));
    return;
  }
  if (needle && !strstr(err.msg, needle)) vf_test_fail(__FILE__, __LINE__, "%s: message '%s' lacks '%s'", text, err.msg, needle);
}

VF_TEST(test_errors) {
  parse_fails("{\"must\": [{\"key\": \"a\", \"mach\": {\"value\": 1}}]}", VF_EUSAGE, "must[0]: unknown key 'mach'");
  parse_fails("{\"musts\": []}", VF_EUSAGE, "unknown key 'musts'");
  parse_fails("{\"must\": [{\"key\": \"a\"}]}", VF_EUSAGE, "needs one of match");
  parse_fails("{\"must\": [{\"key\": \"a\", \"match\": {\"value\": 1.5}}]}", VF_EUSAGE, "must[0].match.value");
  parse_fails("{\"must\": [{\"key\": \"a\", \"match\": {\"any\": [1, \"x\"]}}]}", VF_EUSAGE, "not mixed");
  parse_fails("{\"must\": [{\"key\": \"a..b\", \"match\": {\"value\": 1}}]}", VF_EUSAGE, "key 'a..b'");
  parse_fails("{\"must\": [{\"key\": \"a[x]\", \"match\": {\"value\": 1}}]}", VF_EUSAGE, "key 'a[x]'");
  parse_fails("{\"must\": [{\"key\": \"d\", \"range\": {\"gt\": \"last week\"}}]}", VF_EUSAGE, "not a datetime");
  parse_fails("{\"must\": [{\"key\": \"d\", \"range\": {\"gt\": \"2020-01-01\", \"lt\": 5}}]}", VF_EUSAGE, "mixes");
  parse_fails("{\"must\": [{\"key\": \"d\", \"values_count\": {\"gt\": -1}}]}", VF_EUSAGE, "non-negative");
  parse_fails("{\"must\": [{\"has_vector\": \"image\"}]}", VF_EUNSUPPORTED, "has_vector");
  parse_fails("{\"must\": [{\"key\": \"g\", \"geo_polygon\": {\"exterior\": {\"points\": []}}}]}", VF_EUNSUPPORTED, "geo_polygon");
  parse_fails("{\"must\": [{\"nested\": {\"key\": \"d\", \"filter\": {\"must\": [{\"has_id\": [1]}]}}}]}", VF_EUNSUPPORTED, "nested");
  parse_fails("{\"must\": [", VF_EUSAGE, "--filter: invalid JSON at byte");
  parse_fails("[1]", VF_EUSAGE, "JSON object");
  parse_fails("{\"min_should\": {\"conditions\": [], \"min_count\": 0}}", VF_EUSAGE, "min_count");
  parse_fails("{\"must\": [{\"has_id\": [\"not-a-uuid\"]}]}", VF_EUSAGE, "must[0].has_id[0]");
  parse_fails("{\"and\": [{\"a\": {\"regex\": {\"value\": \"x\"}}}]}", VF_EUSAGE, "unknown condition type");
  parse_fails("{\"and\": [{\"a\": {\"geo\": {\"lat\": 1.0, \"lon\": 2.0}}}]}", VF_EUSAGE, "radius");
  parse_fails("{\"and\": \"x\"}", VF_EUSAGE, "array");
  parse_fails("{\"and\": [{\"a\": {\"match\": {}}}]}", VF_EUSAGE, "needs 'value'");
}

VF_TEST(test_conditions_form) {
  flt_filter *f = NULL;
  vf_error err;
  const char *c1 = "{\"and\": [{\"a\": {\"match\": {\"value\": \"x\"}}, \"n\": {\"range\": {\"gte\": 1, \"lt\": 9}}}], "
                   "\"or\": [{\"b\": {\"match\": {\"value\": 80}}}, {\"b\": {\"match_any\": {\"any\": [2, 3]}}}]}";
  CHECK_OK(flt_parse(c1, strlen(c1), "t", &f, &err));
  if (f) {
    CHECK_EQ_STR(flt_json(f), "{\"must\":[{\"key\":\"a\",\"match\":{\"value\":\"x\"}},{\"key\":\"n\",\"range\":"
                 "{\"gte\":1,\"lt\":9}}],\"should\":[{\"key\":\"b\",\"match\":{\"value\":80}},{\"key\":\"b\","
                 "\"match\":{\"any\":[2,3]}}]}");
    const char *const *keys;
    CHECK_EQ_INT(flt_keys(f, &keys), 3);
    bool m = false;
    const char *p1 = "{\"a\": \"x\", \"n\": 3, \"b\": 3}", *p2 = "{\"a\": \"x\", \"n\": 9, \"b\": 3}";
    CHECK_OK(flt_match_json(f, p1, strlen(p1), NULL, &m, &err));
    CHECK(m);
    CHECK_OK(flt_match_json(f, p2, strlen(p2), NULL, &m, &err));
    CHECK(!m);
  }
  flt_free(f);
  const char *c2 = "{\"and\": [{\"loc\": {\"geo\": {\"lat\": 52.5, \"lon\": 13.4, \"radius\": 1000.0}}}, {\"t\": {\"match_text\": {\"text\": \"hi\"}}}]}";
  CHECK_OK(flt_parse(c2, strlen(c2), "t", &f, &err));
  if (f) CHECK_EQ_STR(flt_json(f), "{\"must\":[{\"key\":\"loc\",\"geo_radius\":{\"center\":{\"lon\":13.4,\"lat\":52.5},"
                      "\"radius\":1000}},{\"key\":\"t\",\"match\":{\"text\":\"hi\"}}]}");
  flt_free(f);
  static const char *empties[] = {"{}", "{\"and\": []}", "{\"and\": [], \"or\": []}", " { } "};
  for (int i = 0; i < 4; i++) {
    CHECK_OK(flt_parse(empties[i], strlen(empties[i]), "t", &f, &err));
    if (f) CHECK(flt_is_empty(f));
    flt_free(f);
  }
  /* Qdrant's own form passes through as given (trimmed) */
  const char *q = "  {\"must\": [{\"key\": \"label\", \"match\": {\"value\": 3}}]}\n";
  CHECK_OK(flt_parse(q, strlen(q), "t", &f, &err));
  if (f) {
    CHECK_EQ_STR(flt_json(f), "{\"must\": [{\"key\": \"label\", \"match\": {\"value\": 3}}]}");
    CHECK(!flt_is_empty(f));
    CHECK(!flt_uses_id(f));
  }
  flt_free(f);
  char h[9];
  flt_hash8("abc", 3, h);
  CHECK_EQ_STR(h, "90015098"); /* md5("abc") = 900150983cd24fb0... */
}

/* flt_docs_select (indexed candidates) agrees with flt_match row by row */
VF_TEST(test_docs_select) {
  vf_error err;
  flt_docs *d = NULL;
  CHECK_OK(flt_docs_create(&d, &err));
  if (!d) return;
  vf_buf text;
  vf_buf_init(&text, 0);
  int64_t off[1001];
  off[0] = 0;
  for (int i = 0; i < 1000; i++) {
    if (i % 7 == 0) vf_buf_printf(&text, &err, "{\"label\": null, \"n\": %d}", i);
    else if (i % 11 == 0) vf_buf_printf(&text, &err, "{\"tags\": [\"t%d\", \"t%d\"], \"n\": %d.5}", i % 5, i % 3, i);
    else if (i % 13 == 0) vf_buf_printf(&text, &err, "%s", "");
    else vf_buf_printf(&text, &err, "{\"label\": \"c%d\", \"n\": %d, \"tags\": [\"t%d\"]}", i % 10, i % 17, i % 4);
    off[i + 1] = (int64_t)text.len;
  }
  CHECK_OK(flt_docs_add(d, (const char *)text.data, off, 1000, "docs", &err));
  CHECK_EQ_INT(flt_docs_rows(d), 1000);
  static const char *filters[] = {
      "{\"must\": [{\"key\": \"label\", \"match\": {\"value\": \"c3\"}}]}",
      "{\"must\": [{\"key\": \"n\", \"match\": {\"any\": [1, 2, 16]}}, {\"key\": \"tags\", \"match\": {\"value\": \"t1\"}}]}",
      "{\"must\": [{\"key\": \"tags\", \"match\": {\"any\": [\"t0\", \"t2\"]}}], \"must_not\": [{\"key\": \"n\", \"range\": {\"gt\": 500}}]}",
      "{\"must\": [{\"is_empty\": {\"key\": \"label\"}}]}",
      "{\"should\": [{\"key\": \"label\", \"match\": {\"value\": \"c1\"}}, {\"has_id\": [5, 6]}]}",
      "{\"must\": [{\"key\": \"label\", \"match\": {\"value\": \"nothing\"}}]}",
  };
  uint8_t mask[1000], skip[1000];
  for (int i = 0; i < 1000; i++) skip[i] = i % 97 == 0;
  for (size_t fi = 0; fi < sizeof filters / sizeof filters[0]; fi++) {
    flt_filter *f = NULL;
    CHECK_OK(flt_parse(filters[fi], strlen(filters[fi]), "t", &f, &err));
    if (!f) continue;
    for (int pass = 0; pass < 2; pass++) { /* the second pass reuses the indexes */
      size_t hits = flt_docs_select(d, f, skip, NULL, NULL, mask);
      size_t want = 0;
      for (size_t r = 0; r < 1000; r++) {
        corpus_id id = {.num = r};
        bool m = !skip[r] && flt_match(f, d, r, flt_uses_id(f) ? NULL : &id);
        if (mask[r] != m) vf_test_fail(__FILE__, __LINE__, "filter %zu row %zu: select %d, match %d", fi, r, mask[r], m);
        want += m;
      }
      CHECK_EQ_INT(hits, want);
      if (fi == 5) CHECK_EQ_INT(hits, 0);
      if (fi == 0) CHECK(hits > 50);
    }
    flt_free(f);
  }
  /* a row that is not a JSON object is refused, naming the row */
  const char *bad = "{\"a\": 1}[1]";
  int64_t o2[3] = {0, 8, 11};
  vf_status st = flt_docs_add(d, bad, o2, 2, "seg.parquet", &err);
  CHECK_EQ_INT(st, VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 1001") != NULL);
  vf_buf_free(&text);
  flt_docs_free(d);
}

/* The filter's path-key ceiling (issue 15 item 5): it refuses to grow past itself, naming
 * itself, and is four bytes per byte of the longest filter text, which a path key never exceeds
 * (each step costs a byte of text; its key adds "K<len>:"). */
VF_TEST(filter_path_key_ceiling) {
  CHECK_BUF_CEILING(FLT_MAX_PATH_KEY, 4 * FLT_MAX_TEXT);
}
