/* Parquet reader tests: conformance files from parquet-testing (skipped when shared/ is absent)
 * checked against values known independently (the *_expect.csv files, the byte-stream-split
 * file's PLAIN twin columns, rows verified with DuckDB), the must-reject list of EXPECTED.md,
 * page CRCs, the page index, and synthetic malformed files built in memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* ---------------------------------------------------------------- helpers */

static const char *data_path(char *buf, size_t n, const char *rel) {
  const char *sh = vf_test_shared();
  if (!sh) return NULL;
  snprintf(buf, n, "%s/data/parquet-testing/%s", sh, rel);
  return buf;
}

static vf_status open_file(const char *path, bool verify_crc, pqt_file **f, vf_error *err) {
  io_source *src;
  vf_status st = io_open_local(path, &src, err);
  if (st != VF_OK) return st;
  pqt_open_opts o = {.verify_crc = verify_crc, .max_footer = 0};
  return pqt_open(src, &o, f, err);
}

/* unannotated binary as text (pqt_rows_set_binary_as_string) in read_all() */
static bool g_binary_as_string;

/* Read every leaf of every row group and render all rows; rows joined by '\n' into *out. */
static vf_status read_all(pqt_file *f, vf_buf *out, vf_error *err) {
  const pqt_schema *s = pqt_schema_of(f);
  const pqt_file_meta *m = pqt_meta(f);
  int nl = s->nleaves;
  int *ids = calloc((size_t)nl + 1, sizeof(int));
  pqt_leaf_data *ld = calloc((size_t)nl + 1, sizeof *ld);
  pqt_rows *r = NULL;
  vf_status st = VF_OK;
  for (int i = 0; i < nl; i++) {
    ids[i] = i;
    pqt_leaf_data_init(&ld[i]);
  }
  st = pqt_rows_create(f, s->top, s->ntop, &r, err);
  if (st == VF_OK) pqt_rows_set_binary_as_string(r, g_binary_as_string);
  for (int g = 0; st == VF_OK && g < m->nrow_groups; g++) {
    st = pqt_read_leaves(f, g, ids, nl, ld, err);
    if (st == VF_OK) st = pqt_rows_bind(r, ld, ids, nl, m->row_groups[g].num_rows, err);
    for (int64_t i = 0; st == VF_OK && i < m->row_groups[g].num_rows; i++) {
      if (out) {
        vf_buf_append(out, "{", 1, NULL);
        st = pqt_rows_next(r, out, err);
        vf_buf_append(out, "}\n", 2, NULL);
      } else {
        st = pqt_rows_skip(r, 1, err);
      }
    }
  }
  pqt_rows_free(r);
  for (int i = 0; i < nl; i++)
    pqt_leaf_data_free(&ld[i]);
  free(ld);
  free(ids);
  return st;
}

/* the rows of a conformance file as one string (NULL on error, message printed) */
static char *rows_of(const char *rel) {
  char p[4096];
  if (!data_path(p, sizeof p, rel)) return NULL;
  vf_error err = {0};
  pqt_file *f;
  if (open_file(p, true, &f, &err) != VF_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    return NULL;
  }
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_status st = read_all(f, &b, &err);
  pqt_close(f);
  if (st != VF_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    vf_buf_free(&b);
    return NULL;
  }
  vf_buf_append(&b, "", 1, NULL);
  return (char *)b.data;
}

/* the n-th line (0-based) of s, copied into buf */
static const char *line_of(const char *s, int n, char *buf, size_t cap) {
  for (int i = 0; s && i < n; i++) {
    s = strchr(s, '\n');
    if (s) s++;
  }
  if (!s) return "";
  const char *e = strchr(s, '\n');
  size_t len = e ? (size_t)(e - s) : strlen(s);
  if (len >= cap) len = cap - 1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  return buf;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; s && *s; s++)
    n += *s == '\n';
  return n;
}

/* ---------------------------------------------------------- value checks */

VF_TEST(alltypes_plain_rows) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char *rows = rows_of("data/alltypes_plain.parquet");
  CHECK(rows != NULL);
  if (!rows) return;
  char l[1024];
  CHECK_EQ_INT(count_lines(rows), 8);
  /* Impala stores its strings unannotated: binary, so base64 ("03/01/09", "0") */
  CHECK_EQ_STR(
      line_of(rows, 0, l, sizeof l),
      "{\"id\":4,\"bool_col\":true,\"tinyint_col\":0,\"smallint_col\":0,\"int_col\":0,\"bigint_"
      "col\":0,"
      "\"float_col\":0,\"double_col\":0,\"date_string_col\":\"MDMvMDEvMDk=\",\"string_col\":\"MA==\","
      "\"timestamp_col\":\"2009-03-01 00:00:00\"}");
  free(rows);
  /* ... and text with binary_as_string (cat --binary-as-string), as before */
  g_binary_as_string = true;
  rows = rows_of("data/alltypes_plain.parquet");
  CHECK(rows != NULL);
  if (!rows) return;
  CHECK_EQ_STR(
      line_of(rows, 0, l, sizeof l),
      "{\"id\":4,\"bool_col\":true,\"tinyint_col\":0,\"smallint_col\":0,\"int_col\":0,\"bigint_"
      "col\":0,"
      "\"float_col\":0,\"double_col\":0,\"date_string_col\":\"03/01/09\",\"string_col\":\"0\","
      "\"timestamp_col\":\"2009-03-01 00:00:00\"}");
  CHECK_EQ_STR(line_of(rows, 1, l, sizeof l), "{\"id\":5,\"bool_col\":false,\"tinyint_col\":1,"
                                              "\"smallint_col\":1,\"int_col\":1,\"bigint_col\":10,"
                                              "\"float_col\":1.10000002,\"double_col\":10.1,\"date_"
                                              "string_col\":\"03/01/09\",\"string_col\":\"1\","
                                              "\"timestamp_col\":\"2009-03-01 00:01:00\"}");
  free(rows);
  /* the snappy and dictionary variants hold the same first rows */
  rows = rows_of("data/alltypes_dictionary.parquet");
  CHECK(rows && strncmp(rows, "{\"id\":0,\"bool_col\":true", 23) == 0);
  free(rows);
  rows = rows_of("data/alltypes_plain.snappy.parquet");
  CHECK(rows && strncmp(rows, "{\"id\":6,\"bool_col\":true", 23) == 0);
  free(rows);
  g_binary_as_string = false;
}

/* nested shapes, as DuckDB renders them */
VF_TEST(nested_list_shapes) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  static const struct {
    const char *file;
    const char *rows;
  } cases[] = {
      {"data/nested_lists.snappy.parquet",
       "{\"a\":[[[\"a\",\"b\"],[\"c\"]],[null,[\"d\"]]],\"b\":1}\n"
       "{\"a\":[[[\"a\",\"b\"],[\"c\",\"d\"]],[null,[\"e\"]]],\"b\":1}\n"
       "{\"a\":[[[\"a\",\"b\"],[\"c\",\"d\"],[\"e\"]],[null,[\"f\"]]],\"b\":1}\n"},
      {"data/null_list.parquet", "{\"emptylist\":[]}\n"},
      {"data/old_list_structure.parquet", "{\"a\":[[1,2],[3,4]]}\n"},
      {"data/list_columns.parquet",
       "{\"int64_list\":[1,2,3],\"utf8_list\":[\"abc\",\"efg\",\"hij\"]}\n"
       "{\"int64_list\":[null,1],\"utf8_list\":null}\n"
       "{\"int64_list\":[4],\"utf8_list\":[\"efg\",null,\"hij\",\"xyz\"]}\n"},
      {"data/nonnullable.impala.parquet", "{\"ID\":8,\"Int_Array\":[-1],\"int_array_array\":[[-1,-"
                                          "2],[]],\"Int_Map\":{\"k1\":-1},\"int_map_array\":[{},"
                                          "{\"k1\":1},{},{}],\"nested_Struct\":{\"a\":-1,\"B\":[-1]"
                                          ",\"c\":{\"D\":[[{\"e\":-1,\"f\":\"nonnullable\"}]]},"
                                          "\"G\":{}}}\n"},
      {"data/repeated_no_annotation.parquet",
       "{\"id\":1,\"phoneNumbers\":null}\n{\"id\":2,\"phoneNumbers\":null}\n{\"id\":3,"
       "\"phoneNumbers\":{\"phone\":[]}}\n"
       "{\"id\":4,\"phoneNumbers\":{\"phone\":[{\"number\":5555555555,\"kind\":null}]}}\n"
       "{\"id\":5,\"phoneNumbers\":{\"phone\":[{\"number\":1111111111,\"kind\":\"home\"}]}}\n"
       "{\"id\":6,\"phoneNumbers\":{\"phone\":[{\"number\":1111111111,\"kind\":\"home\"},{"
       "\"number\":2222222222,"
       "\"kind\":null},{\"number\":3333333333,\"kind\":\"mobile\"}]}}\n"},
      {"data/repeated_primitive_no_list.parquet",
       "{\"Int32_list\":[0,1,2,3],\"String_list\":[\"foo\",\"zero\",\"one\",\"two\"],\"group_of_"
       "lists\":{\"Int32_list_in_"
       "group\":[0,1,2,3],\"String_list_in_group\":[\"foo\",\"zero\",\"one\",\"two\"]}}\n"
       "{\"Int32_list\":[],\"String_list\":[\"three\"],\"group_of_lists\":{\"Int32_list_in_group\":"
       "[],\"String_list_in_"
       "group\":[\"three\"]}}\n"
       "{\"Int32_list\":[4],\"String_list\":[\"four\"],\"group_of_lists\":{\"Int32_list_in_group\":"
       "[4],\"String_list_in_"
       "group\":[\"four\"]}}\n"
       "{\"Int32_list\":[5,6,7,8],\"String_list\":[\"five\",\"six\",\"seven\",\"eight\"],\"group_"
       "of_lists\":{\"Int32_"
       "list_in_group\":[5,6,7,8],\"String_list_in_group\":[\"five\",\"six\",\"seven\",\"eight\"]}}"
       "\n"},
      {"data/map_no_value.parquet", "{\"my_map\":{\"1\":null,\"2\":null,\"3\":null},\"my_map_no_"
                                    "v\":{\"1\":null,\"2\":null,\"3\":null},\"my_list\":[1,2,"
                                    "3]}\n{\"my_map\":{\"4\":null,\"5\":null,\"6\":null},\"my_map_"
                                    "no_v\":{\"4\":null,\"5\":null,\"6\":null},\"my_list\":"
                                    "[4,5,6]}\n{\"my_map\":{\"7\":null,\"8\":null,\"9\":null},\"my_"
                                    "map_no_v\":{\"7\":null,\"8\":null,\"9\":null},\"my_"
                                    "list\":[7,8,9]}\n"},
      {"data/datapage_v2_empty_datapage.snappy.parquet", "{\"value\":null}\n"},
      {"data/float16_nonzeros_and_nans.parquet",
       "{\"x\":null}\n{\"x\":1}\n{\"x\":-2}\n{\"x\":\"NaN\"}\n{\"x\":0}\n{\"x\":-1}\n{\"x\":-0}\n{"
       "\"x\":2}\n"},
      {"data/int96_from_spark.parquet", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *rows = rows_of(cases[i].file);
    if (!rows) {
      vf_test_fail(__FILE__, __LINE__, "%s did not read", cases[i].file);
      continue;
    }
    if (cases[i].rows && strcmp(rows, cases[i].rows) != 0)
      vf_test_fail(__FILE__, __LINE__, "%s:\n got  %s\n want %s", cases[i].file, rows,
                   cases[i].rows);
    if (!cases[i].rows) {
      char l[256];
      CHECK_EQ_STR(line_of(rows, 0, l, sizeof l), "{\"a\":\"2024-01-01 20:34:56.123456\"}");
      CHECK_EQ_STR(line_of(rows, 4, l, sizeof l), "{\"a\":null}");
      /* stored with a negative Julian day that wraps back, as Spark and arrow compute it */
      CHECK_EQ_STR(line_of(rows, 5, l, sizeof l), "{\"a\":\"290000-12-30 23:00:00\"}");
    }
    free(rows);
  }
}

/* page v2 with all-null pages, compressed empty values sections */
VF_TEST(page_v2_empty_values) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char *rows = rows_of("data/page_v2_empty_compressed.parquet");
  CHECK(rows != NULL);
  CHECK_EQ_INT(count_lines(rows), 10);
  if (rows) CHECK(strncmp(rows, "{\"integer_column\":null}\n", 24) == 0);
  free(rows);
  rows = rows_of("data/datapage_v2.snappy.parquet");
  CHECK(rows != NULL);
  char l[512];
  if (rows)
    CHECK_EQ_STR(line_of(rows, 0, l, sizeof l),
                 "{\"a\":\"abc\",\"b\":1,\"c\":2,\"d\":true,\"e\":[1,2,3]}");
  free(rows);
}

/* ------------------------------------------------------- CSV comparisons */

typedef struct csv {
  char *text;
  char **cells; /* row-major, NULL for an empty unquoted field */
  int ncols, nrows;
} csv;

static bool csv_load(const char *path, csv *c) {
  memset(c, 0, sizeof *c);
  FILE *fp = fopen(path, "rb");
  if (!fp) return false;
  vf_buf b;
  vf_buf_init(&b, 0);
  char tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
    vf_buf_append(&b, tmp, n, NULL);
  fclose(fp);
  vf_buf_append(&b, "", 1, NULL);
  c->text = (char *)b.data;
  size_t cap = 1024;
  c->cells = malloc(cap * sizeof(char *));
  size_t ncell = 0;
  int col = 0, cols = -1;
  char *p = c->text, *w;
  while (*p) {
    char *cell;
    bool quoted = *p == '"';
    if (quoted) {
      p++;
      cell = w = p;
      for (;;) {
        if (*p == '"' && p[1] == '"') {
          *w++ = '"';
          p += 2;
        } else if (*p == '"' || !*p) {
          if (*p) p++;
          break;
        } else {
          *w++ = *p++;
        }
      }
    } else {
      cell = w = p;
      while (*p && *p != ',' && *p != '\n' && *p != '\r')
        p++;
      w = p;
    }
    char sep = *p;
    if (sep == '\r') sep = *++p;
    if (*p) p++;
    *w = '\0';
    if (ncell == cap) c->cells = realloc(c->cells, (cap *= 2) * sizeof(char *));
    c->cells[ncell++] = (!quoted && !*cell) ? NULL : cell;
    col++;
    if (sep == '\n' || sep == '\0') {
      if (cols < 0) cols = col;
      col = 0;
    }
  }
  c->ncols = cols;
  c->nrows = cols > 0 ? (int)(ncell / (size_t)cols) - 1 : 0;
  return cols > 0;
}

static void csv_free(csv *c) {
  free(c->text);
  free(c->cells);
}

/* Compare every CSV column with the parquet leaf of the same (trimmed) name. */
static void check_against_csv(const char *pq, const char *csvrel) {
  char p1[4096], p2[4096];
  data_path(p1, sizeof p1, pq);
  data_path(p2, sizeof p2, csvrel);
  csv c;
  if (!csv_load(p2, &c)) {
    vf_test_fail(__FILE__, __LINE__, "cannot load %s", p2);
    return;
  }
  vf_error err = {0};
  pqt_file *f;
  if (open_file(p1, true, &f, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
    csv_free(&c);
    return;
  }
  const pqt_file_meta *m = pqt_meta(f);
  int checked = 0;
  for (int j = 0; j < c.ncols; j++) {
    const char *name = c.cells[j];
    while (name && *name == ' ')
      name++;
    int leaf = name ? pqt_find_leaf(f, name) : -1;
    if (leaf < 0 && name) { /* delta_encoding_required_column names its columns "name:" */
      char alt[256];
      snprintf(alt, sizeof alt, "%s:", name);
      leaf = pqt_find_leaf(f, alt);
    }
    if (leaf < 0) {
      vf_test_fail(__FILE__, __LINE__, "%s: no column %s", pq, name ? name : "(null)");
      continue;
    }
    const pqt_leaf *lf = &pqt_schema_of(f)->leaves[leaf];
    int row = 0;
    pqt_leaf_data d;
    pqt_leaf_data_init(&d);
    for (int g = 0; g < m->nrow_groups; g++) {
      if (pqt_read_leaves(f, g, &leaf, 1, &d, &err) != VF_OK) {
        vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
        break;
      }
      int64_t v = 0;
      for (int64_t i = 0; i < d.nlevels; i++, row++) {
        const char *want =
            row < c.nrows ? c.cells[(size_t)(row + 1) * (size_t)c.ncols + (size_t)j] : "?";
        bool present = !d.def || d.def[i] == lf->max_def;
        if (!present) {
          if (want)
            vf_test_fail(__FILE__, __LINE__, "%s %s row %d: null, want %s", pq, name, row, want);
          continue;
        }
        if (!want) {
          vf_test_fail(__FILE__, __LINE__, "%s %s row %d: value, want null", pq, name, row);
          v++;
          continue;
        }
        if (lf->type == PQT_BYTE_ARRAY) {
          size_t len = (size_t)(d.offsets[v + 1] - d.offsets[v]);
          if (len != strlen(want) || memcmp(d.values.data + d.offsets[v], want, len) != 0)
            vf_test_fail(__FILE__, __LINE__, "%s %s row %d: \"%.*s\", want \"%s\"", pq, name, row,
                         (int)len, (const char *)d.values.data + d.offsets[v], want);
        } else {
          int64_t got = 0;
          if (lf->type == PQT_INT32) {
            int32_t x;
            memcpy(&x, d.values.data + 4 * v, 4);
            got = x;
          } else {
            memcpy(&got, d.values.data + 8 * v, 8);
          }
          if (got != strtoll(want, NULL, 10))
            vf_test_fail(__FILE__, __LINE__, "%s %s row %d: %" PRId64 ", want %s", pq, name, row,
                         got, want);
        }
        v++;
        checked++;
      }
    }
    if (row != c.nrows)
      vf_test_fail(__FILE__, __LINE__, "%s %s: %d rows, want %d", pq, name, row, c.nrows);
    pqt_leaf_data_free(&d);
  }
  CHECK(checked > 0);
  pqt_close(f);
  csv_free(&c);
}

VF_TEST(delta_encodings_match_expect_csv) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  check_against_csv("data/delta_binary_packed.parquet", "data/delta_binary_packed_expect.csv");
  check_against_csv("data/delta_byte_array.parquet", "data/delta_byte_array_expect.csv");
  check_against_csv("data/delta_encoding_optional_column.parquet",
                    "data/delta_encoding_optional_column_expect.csv");
  check_against_csv("data/delta_encoding_required_column.parquet",
                    "data/delta_encoding_required_column_expect.csv");
}

/* byte_stream_split_extended holds each column twice: PLAIN and BYTE_STREAM_SPLIT */
VF_TEST(byte_stream_split_matches_plain_twin) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char p[4096];
  data_path(p, sizeof p, "data/byte_stream_split_extended.gzip.parquet");
  vf_error err = {0};
  pqt_file *f;
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  const pqt_schema *s = pqt_schema_of(f);
  int pairs = 0;
  for (int l = 0; l < s->nleaves; l++) {
    const char *path = s->leaves[l].path;
    const char *u = strstr(path, "_plain");
    if (!u || u[6]) continue;
    char twin[256];
    snprintf(twin, sizeof twin, "%.*s_byte_stream_split", (int)(u - path), path);
    int t = pqt_find_leaf(f, twin);
    CHECK(t >= 0);
    if (t < 0) continue;
    pqt_leaf_data d[2];
    pqt_leaf_data_init(&d[0]);
    pqt_leaf_data_init(&d[1]);
    int ids[2] = {l, t};
    for (int g = 0; g < pqt_meta(f)->nrow_groups; g++) {
      CHECK_OK(pqt_read_leaves(f, g, ids, 2, d, &err));
      CHECK(d[0].nvalues > 0);
      CHECK_EQ_INT(d[0].nvalues, d[1].nvalues);
      CHECK(d[0].values.len == d[1].values.len &&
            memcmp(d[0].values.data, d[1].values.data, d[0].values.len) == 0);
      CHECK((d[0].def == NULL) == (d[1].def == NULL));
      if (d[0].def && d[1].def) CHECK(memcmp(d[0].def, d[1].def, (size_t)d[0].nlevels) == 0);
    }
    pqt_leaf_data_free(&d[0]);
    pqt_leaf_data_free(&d[1]);
    pairs++;
  }
  CHECK_EQ_INT(pairs, 7);
  pqt_close(f);
}

/* every codec reads to the same rows */
VF_TEST(codecs) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  /* c1 is unannotated binary: "abc", "def" in base64 */
  const char *want = "{\"c0\":1593604800,\"c1\":\"YWJj\",\"v11\":42}\n{\"c0\":1593604800,\"c1\":"
                     "\"ZGVm\",\"v11\":7.7000000000000002}\n"
                     "{\"c0\":1593604801,\"c1\":\"YWJj\",\"v11\":42.125}\n{\"c0\":1593604801,\"c1\":"
                     "\"ZGVm\",\"v11\":7.7000000000000002}\n";
  const char *files[] = {"data/hadoop_lz4_compressed.parquet",
                         "data/non_hadoop_lz4_compressed.parquet",
                         "data/lz4_raw_compressed.parquet"};
  for (int i = 0; i < 3; i++) {
    char *rows = rows_of(files[i]);
    if (!rows || strcmp(rows, want) != 0)
      vf_test_fail(__FILE__, __LINE__, "%s: %s", files[i], rows ? rows : "(error)");
    free(rows);
  }
  const char *more[] = {
      "data/hadoop_lz4_compressed_larger.parquet", "data/lz4_raw_compressed_larger.parquet",
      "data/concatenated_gzip_members.parquet", "data/byte_stream_split.zstd.parquet",
      "data/datapage_v1-snappy-compressed-checksum.parquet"};
  const int nrows[] = {10000, 10000, 513, 300, 5120};
  for (int i = 0; i < 5; i++) {
    char *rows = rows_of(more[i]);
    CHECK(rows != NULL);
    if (rows && count_lines(rows) != nrows[i])
      vf_test_fail(__FILE__, __LINE__, "%s: %d rows", more[i], count_lines(rows));
    free(rows);
  }
}

/* ----------------------------------------------------- levels and layout */

VF_TEST(leaf_data_layout) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char p[4096];
  vf_error err = {0};
  pqt_file *f;
  data_path(p, sizeof p, "data/list_columns.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  int leaf = pqt_find_leaf(f, "int64_list.list.item");
  if (leaf < 0) leaf = 0;
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  CHECK_OK(pqt_read_leaves(f, 0, &leaf, 1, &d, &err));
  /* [1,2,3], [null,1], [4] */
  CHECK_EQ_INT(d.nlevels, 6);
  CHECK_EQ_INT(d.nvalues, 5);
  CHECK_EQ_INT(d.nrows, 3);
  CHECK(d.rep != NULL && d.def != NULL);
  if (d.rep) CHECK(memcmp(d.rep, "\0\1\1\0\1\0", 6) == 0);
  int64_t v[5];
  memcpy(v, d.values.data, sizeof v);
  CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 1 && v[4] == 4);
  /* reading a flat required column with the same struct drops rep and def */
  pqt_close(f);
  data_path(p, sizeof p, "data/alltypes_plain.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  int id = pqt_find_leaf(f, "id");
  CHECK(id >= 0);
  CHECK_EQ_INT(pqt_find_leaf(f, "no_such_column"), -1);
  CHECK(pqt_find_top(f, "string_col") >= 0);
  CHECK_OK(pqt_read_leaves(f, 0, &id, 1, &d, &err));
  CHECK(d.rep == NULL);
  CHECK(d.def == NULL); /* optional column without nulls: no materialised levels */
  CHECK_EQ_INT(d.nlevels, 8);
  CHECK_EQ_INT(d.nrows, 8);
  CHECK_EQ_INT(d.width, 4);
  int32_t ids[8];
  memcpy(ids, d.values.data, sizeof ids);
  CHECK(ids[0] == 4 && ids[1] == 5 && ids[6] == 0 && ids[7] == 1);
  CHECK_STATUS(pqt_read_leaves(f, 5, &id, 1, &d, &err), VF_EUSAGE);
  int bad = 999;
  CHECK_STATUS(pqt_read_leaves(f, 0, &bad, 1, &d, &err), VF_EUSAGE);
  pqt_leaf_data_free(&d);
  pqt_close(f);
}

/* the footer says 0 rows, the row group holds 6: the groups win */
VF_TEST(footer_row_count_corrected) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char p[4096];
  vf_error err = {0};
  pqt_file *f;
  data_path(p, sizeof p, "data/repeated_no_annotation.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  CHECK_EQ_INT(pqt_meta(f)->num_rows, 6);
  CHECK_EQ_STR(pqt_name(f), p);
  pqt_close(f);
}

/* nulls spread over pages: def levels are materialised from the first page that has one */
VF_TEST(nulls_and_dictionary_fallback) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char p[4096];
  vf_error err = {0};
  pqt_file *f;
  data_path(p, sizeof p, "data/int32_with_null_pages.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  int leaf = 0;
  CHECK_OK(pqt_read_leaves(f, 0, &leaf, 1, &d, &err));
  CHECK_EQ_INT(d.nlevels, 1000);
  CHECK(d.npages > 1);
  CHECK(d.def != NULL);
  int64_t nn = 0;
  for (int64_t i = 0; d.def && i < d.nlevels; i++)
    nn += d.def[i] == 1;
  CHECK_EQ_INT(nn, d.nvalues);
  CHECK(d.nvalues < d.nlevels);
  pqt_leaf_data_free(&d);
  pqt_close(f);
}

/* ------------------------------------------------------------- page index */

VF_TEST(page_index) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char p[4096];
  vf_error err = {0};
  pqt_file *f;
  data_path(p, sizeof p, "data/alltypes_tiny_pages.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  pqt_offset_index oi;
  pqt_column_index ci;
  CHECK_OK(pqt_read_page_index(f, 0, 0, &oi, &ci, &err));
  CHECK(oi.npages > 10);
  CHECK_EQ_INT(ci.npages, oi.npages);
  int64_t prev = -1;
  for (int i = 0; i < oi.npages; i++) {
    CHECK(oi.pages[i].first_row_index > prev);
    prev = oi.pages[i].first_row_index;
  }
  CHECK_EQ_INT(oi.pages[0].first_row_index, 0);
  /* each location holds a page header */
  io_source *src = pqt_source(f);
  for (int i = 0; i < oi.npages; i += oi.npages / 5) {
    uint8_t buf[256];
    size_t n = (size_t)oi.pages[i].compressed_page_size < sizeof buf
                   ? (size_t)oi.pages[i].compressed_page_size
                   : sizeof buf;
    CHECK_OK(io_read_at(src, (uint64_t)oi.pages[i].offset, buf, n, &err));
    vf_cursor c;
    vf_cur_init(&c, buf, n, (uint64_t)oi.pages[i].offset);
    pqt_page_header h;
    CHECK_OK(pqt_parse_page_header(&c, &h, &err));
    CHECK(h.type == PQT_DATA_PAGE || h.type == PQT_DATA_PAGE_V2);
  }
  pqt_offset_index_free(&oi);
  pqt_column_index_free(&ci);
  pqt_close(f);
  /* no page index */
  data_path(p, sizeof p, "data/alltypes_plain.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  CHECK_STATUS(pqt_read_page_index(f, 0, 0, &oi, NULL, &err), VF_ENOTFOUND);
  pqt_close(f);
  /* null pages in the column index */
  data_path(p, sizeof p, "data/int32_with_null_pages.parquet");
  if (open_file(p, true, &f, &err) != VF_OK) return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  CHECK_OK(pqt_read_page_index(f, 0, 0, &oi, &ci, &err));
  int nullp = 0;
  for (int i = 0; i < ci.npages; i++)
    nullp += ci.null_pages[i];
  CHECK(ci.npages > 1);
  CHECK(nullp >= 1);
  pqt_offset_index_free(&oi);
  pqt_column_index_free(&ci);
  pqt_close(f);
}

/* ---------------------------------------------------------------- CRCs */

VF_TEST(page_crc) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  const char *good[] = {"data/datapage_v1-uncompressed-checksum.parquet",
                        "data/datapage_v1-snappy-compressed-checksum.parquet",
                        "data/plain-dict-uncompressed-checksum.parquet",
                        "data/rle-dict-snappy-checksum.parquet"};
  for (int i = 0; i < 4; i++) {
    char *rows = rows_of(good[i]);
    CHECK(rows != NULL);
    free(rows);
  }
  const char *bad[] = {"data/datapage_v1-corrupt-checksum.parquet",
                       "data/rle-dict-uncompressed-corrupt-checksum.parquet"};
  for (int i = 0; i < 2; i++) {
    char p[4096];
    data_path(p, sizeof p, bad[i]);
    vf_error err = {0};
    pqt_file *f;
    if (open_file(p, true, &f, &err) != VF_OK) {
      vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
      continue;
    }
    CHECK_STATUS(read_all(f, NULL, &err), VF_ECORRUPT);
    CHECK(strstr(err.msg, "CRC mismatch") != NULL);
    CHECK(strncmp(err.msg, p, strlen(p)) == 0);
    pqt_close(f);
    /* without verification the values still decode, without crashing */
    if (open_file(p, false, &f, &err) != VF_OK) {
      vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
      continue;
    }
    CHECK_OK(read_all(f, NULL, &err));
    pqt_close(f);
  }
}

/* ---------------------------------------------------------- must reject */

VF_TEST(must_reject) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  const char *bad[] = {"bad_data/ARROW-GH-41317.parquet",
                       "bad_data/ARROW-GH-41321.parquet",
                       "bad_data/ARROW-GH-45185.parquet",
                       "bad_data/ARROW-GH-47662.parquet",
                       "bad_data/ARROW-RS-GH-6229-DICTHEADER.parquet",
                       "bad_data/ARROW-RS-GH-6229-LEVELS.parquet",
                       "bad_data/PARQUET-1481.parquet",
                       "data/nation.dict-malformed.parquet"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char p[4096];
    data_path(p, sizeof p, bad[i]);
    vf_error err = {0};
    pqt_file *f = NULL;
    vf_status st = open_file(p, true, &f, &err);
    if (st == VF_OK) {
      st = read_all(f, NULL, &err);
      pqt_close(f);
    }
    if (st != VF_ECORRUPT)
      vf_test_fail(__FILE__, __LINE__, "%s: %s (%s)", bad[i], vf_status_name(st), err.msg);
    if (strncmp(err.msg, p, strlen(p)) != 0)
      vf_test_fail(__FILE__, __LINE__, "message does not name the file: %s", err.msg);
  }
  /* ARROW-GH-43605 may read or be rejected cleanly */
  char p[4096];
  data_path(p, sizeof p, "bad_data/ARROW-GH-43605.parquet");
  vf_error err = {0};
  pqt_file *f;
  if (open_file(p, true, &f, &err) == VF_OK) {
    vf_status st = read_all(f, NULL, &err);
    CHECK(st == VF_OK || st == VF_ECORRUPT);
    pqt_close(f);
  }
  /* encrypted files: unsupported, naming the feature */
  const char *enc[] = {"data/uniform_encryption.parquet.encrypted",
                       "data/encrypt_columns_and_footer.parquet.encrypted",
                       "data/encrypt_columns_plaintext_footer.parquet.encrypted"};
  for (int i = 0; i < 3; i++) {
    data_path(p, sizeof p, enc[i]);
    vf_status st = open_file(p, true, &f, &err);
    if (st == VF_OK) {
      st = read_all(f, NULL, &err);
      pqt_close(f);
    }
    CHECK_STATUS(st, VF_EUNSUPPORTED);
    CHECK(strstr(err.msg, "encrypt") != NULL);
  }
}

/* every other file in data/ reads */
VF_TEST(all_must_read_files) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  const char *files[] = {"alltypes_tiny_pages_plain",
                         "binary",
                         "binary_truncated_min_max",
                         "byte_array_decimal",
                         "column_chunk_key_value_metadata",
                         "data_index_bloom_encoding_stats",
                         "data_index_bloom_encoding_with_length",
                         "delta_length_byte_array",
                         "dict-page-offset-zero",
                         "fixed_length_byte_array",
                         "fixed_length_decimal",
                         "fixed_length_decimal_legacy",
                         "float16_zeros_and_nans",
                         "floating_orders_nan_count",
                         "incorrect_map_schema",
                         "int32_decimal",
                         "int64_decimal",
                         "nan_in_stats",
                         "nested_maps.snappy",
                         "nested_structs.rust",
                         "nullable.impala",
                         "nulls.snappy",
                         "overflow_i16_page_cnt",
                         "rle_boolean_encoding",
                         "single_nan",
                         "sort_columns",
                         "unknown-logical-type"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "data/%s.parquet", files[i]);
    char *rows = rows_of(rel);
    if (!rows) vf_test_fail(__FILE__, __LINE__, "%s did not read", rel);
    free(rows);
  }
  char *rows = rows_of("data/dict-page-offset-zero.parquet");
  CHECK(rows && count_lines(rows) == 39 && strncmp(rows, "{\"l_partkey\":1552}\n", 19) == 0);
  free(rows);
  rows = rows_of("data/rle_boolean_encoding.parquet");
  CHECK(rows && count_lines(rows) == 68);
  free(rows);
  rows = rows_of("data/byte_array_decimal.parquet");
  char l[128];
  CHECK(rows && strcmp(line_of(rows, 0, l, sizeof l), "{\"value\":1.00}") == 0);
  free(rows);
}

/* ------------------------------------------------- synthetic malformed files */

static vf_status open_mem(const void *p, size_t n, pqt_file **f, vf_error *err) {
  io_source *src;
  vf_status st = io_open_memory(p, n, "mem.parquet", &src, err);
  if (st != VF_OK) return st;
  return pqt_open(src, NULL, f, err);
}

VF_TEST(malformed_footers) {
  vf_error err = {0};
  pqt_file *f = NULL;
  CHECK_STATUS(open_mem("PAR1PAR1", 8, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "mem.parquet: ") == err.msg);
  CHECK_STATUS(open_mem("PAR1\0\0\0\0\0\0\0\0XXXX", 16, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "PAR1") != NULL);
  CHECK_STATUS(open_mem("PAR1\0\0\0\0\0\0\0\0PARE", 16, &f, &err), VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "encrypted footer") != NULL);
  CHECK_STATUS(open_mem("XXXX\0\0\0\0\0\0\0\0PAR1", 16, &f, &err), VF_ECORRUPT);
  /* footer length larger than the file */
  CHECK_STATUS(open_mem("PAR1\0\0\0\0\xff\0\0\0PAR1", 16, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "footer length 255") != NULL);
  /* zero-length footer: empty thrift */
  vf_status st = open_mem("PAR1\0\0\0\0PAR1", 12, &f, &err);
  CHECK(st == VF_ECORRUPT);
}

/* every truncation and many byte flips of a real file fail cleanly or read */
VF_TEST(truncations_and_flips) {
  if (!vf_test_shared()) return vf_test_skip("shared/ not present");
  char p[4096];
  data_path(p, sizeof p, "data/list_columns.parquet");
  FILE *fp = fopen(p, "rb");
  CHECK(fp != NULL);
  if (!fp) return;
  uint8_t buf[8192];
  size_t n = fread(buf, 1, sizeof buf, fp);
  fclose(fp);
  vf_error err = {0};
  for (size_t cut = 0; cut < n; cut += 7) {
    pqt_file *f;
    if (open_mem(buf, cut, &f, &err) == VF_OK) {
      read_all(f, NULL, &err);
      pqt_close(f);
    } else {
      CHECK(strncmp(err.msg, "mem.parquet", 11) == 0);
    }
  }
  uint8_t copy[8192];
  uint32_t seed = 12345;
  for (int it = 0; it < 3000; it++) {
    memcpy(copy, buf, n);
    for (int k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t pos = (seed >> 8) % n;
      seed = seed * 1103515245u + 12345u;
      copy[pos] ^= (uint8_t)(1u << ((seed >> 16) & 7));
    }
    pqt_file *f;
    if (open_mem(copy, n, &f, &err) == VF_OK) {
      vf_buf b;
      vf_buf_init(&b, 0);
      read_all(f, &b, &err);
      vf_buf_free(&b);
      pqt_close(f);
    }
  }
}

/* ------------------------------------------- hand-built single-column files */

typedef struct spage {
  int type; /* PQT_DATA_PAGE or PQT_DICTIONARY_PAGE */
  int32_t nvals;
  int encoding; /* values (or dictionary) encoding */
  int def_enc;
  const uint8_t *body;
  size_t len;
  bool crc;
} spage;

static bool g_omit_dict_offset; /* write as dict-page-offset-zero.parquet does */

/* A file with one column "x" (INT32, `repetition`) whose chunk holds `pages`.  `size_delta` is
 * added to the chunk's total_compressed_size (to model writers that misreport it). */
static uint8_t *single_column_file(int repetition, const spage *pages, int npages, int64_t nrows,
                                   int64_t size_delta, size_t *len) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_buf_append(&b, "PAR1", 4, NULL);
  int64_t nvalues = 0, dict_off = -1, data_off = -1;
  for (int i = 0; i < npages; i++) {
    const spage *p = &pages[i];
    if (p->type == PQT_DICTIONARY_PAGE && dict_off < 0) dict_off = (int64_t)b.len;
    if (p->type == PQT_DATA_PAGE && data_off < 0) data_off = (int64_t)b.len;
    if (p->type == PQT_DATA_PAGE) nvalues += p->nvals;
    tc_writer w;
    tcw_init(&w, &b, NULL);
    tcw_struct_begin(&w);
    tcw_field_i32(&w, 1, p->type);
    tcw_field_i32(&w, 2, (int32_t)p->len);
    tcw_field_i32(&w, 3, (int32_t)p->len);
    if (p->crc) tcw_field_i32(&w, 4, (int32_t)pqt_crc32(p->body, p->len));
    if (p->type == PQT_DATA_PAGE) {
      tcw_field_struct_begin(&w, 5);
      tcw_field_i32(&w, 1, p->nvals);
      tcw_field_i32(&w, 2, p->encoding);
      tcw_field_i32(&w, 3, p->def_enc);
      tcw_field_i32(&w, 4, PQT_ENC_RLE);
      tcw_struct_end(&w);
    } else {
      tcw_field_struct_begin(&w, 7);
      tcw_field_i32(&w, 1, p->nvals);
      tcw_field_i32(&w, 2, p->encoding);
      tcw_struct_end(&w);
    }
    tcw_struct_end(&w);
    vf_buf_append(&b, p->body, p->len, NULL);
  }
  int64_t chunk_start = dict_off >= 0 ? dict_off : data_off;
  int64_t chunk_size = (int64_t)b.len - chunk_start + size_delta;
  size_t fstart = b.len;
  tc_writer w;
  tcw_init(&w, &b, NULL);
  tcw_struct_begin(&w);
  tcw_field_i32(&w, 1, 1);
  tcw_field_list_begin(&w, 2, TC_STRUCT, 2);
  tcw_list_struct_begin(&w);
  tcw_field_binary(&w, 4, "schema", 6);
  tcw_field_i32(&w, 5, 1);
  tcw_struct_end(&w);
  tcw_list_struct_begin(&w);
  tcw_field_i32(&w, 1, PQT_INT32);
  tcw_field_i32(&w, 3, repetition);
  tcw_field_binary(&w, 4, "x", 1);
  tcw_struct_end(&w);
  tcw_field_i64(&w, 3, nrows);
  tcw_field_list_begin(&w, 4, TC_STRUCT, 1);
  tcw_list_struct_begin(&w);
  tcw_field_list_begin(&w, 1, TC_STRUCT, 1);
  tcw_list_struct_begin(&w);
  tcw_field_i64(&w, 2, chunk_start);
  tcw_field_struct_begin(&w, 3);
  tcw_field_i32(&w, 1, PQT_INT32);
  tcw_field_list_begin(&w, 2, TC_I32, 1);
  tcw_list_i32(&w, PQT_ENC_PLAIN);
  tcw_field_list_begin(&w, 3, TC_BINARY, 1);
  tcw_list_binary(&w, "x", 1);
  tcw_field_i32(&w, 4, PQT_UNCOMPRESSED);
  tcw_field_i64(&w, 5, nvalues);
  tcw_field_i64(&w, 6, chunk_size);
  tcw_field_i64(&w, 7, chunk_size);
  tcw_field_i64(&w, 9, data_off >= 0 && !g_omit_dict_offset ? data_off : chunk_start);
  if (dict_off >= 0 && !g_omit_dict_offset) tcw_field_i64(&w, 11, dict_off);
  tcw_struct_end(&w);
  tcw_struct_end(&w);
  tcw_field_i64(&w, 2, chunk_size);
  tcw_field_i64(&w, 3, nrows);
  tcw_struct_end(&w);
  tcw_struct_end(&w);
  uint32_t flen = (uint32_t)(b.len - fstart);
  vf_buf_append(&b, &flen, 4, NULL);
  vf_buf_append(&b, "PAR1", 4, NULL);
  *len = b.len;
  return b.data;
}

/* open and read column 0 of row group 0 */
static vf_status read_single(const uint8_t *file, size_t len, pqt_leaf_data *d, vf_error *err) {
  pqt_file *f;
  vf_status st = open_mem(file, len, &f, err);
  if (st != VF_OK) return st;
  int leaf = 0;
  st = pqt_read_leaves(f, 0, &leaf, 1, d, err);
  pqt_close(f);
  return st;
}

static const uint8_t plain4[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};

VF_TEST(synthetic_dictionary_pages) {
  /* dictionary {10, 20}, a dictionary page of indices 1,0,1 then a PLAIN fallback page */
  const uint8_t dict[8] = {10, 0, 0, 0, 20, 0, 0, 0};
  const uint8_t idx_ok[3] = {1, 0x03, 0x05}; /* bit-packed group of 8: values 1,0,1 */
  spage pages[3] = {{PQT_DICTIONARY_PAGE, 2, PQT_ENC_PLAIN_DICTIONARY, 0, dict, 8, true},
                    {PQT_DATA_PAGE, 3, PQT_ENC_RLE_DICTIONARY, PQT_ENC_RLE, idx_ok, 3, true},
                    {PQT_DATA_PAGE, 4, PQT_ENC_PLAIN, PQT_ENC_RLE, plain4, 16, true}};
  size_t len;
  uint8_t *file = single_column_file(PQT_REQUIRED, pages, 3, 7, 0, &len);
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  vf_error err = {0};
  CHECK_OK(read_single(file, len, &d, &err));
  int32_t v[7] = {0};
  if (d.values.len == sizeof v) memcpy(v, d.values.data, sizeof v);
  CHECK(v[0] == 20 && v[1] == 10 && v[2] == 20 && v[3] == 1 && v[6] == 4);
  CHECK_EQ_INT(d.npages, 3);
  free(file);
  /* footer size short by 10 bytes: the last page runs past the chunk: rejected */
  file = single_column_file(PQT_REQUIRED, pages, 3, 7, -10, &len);
  CHECK_STATUS(read_single(file, len, &d, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "runs past the end of the column chunk") != NULL);
  free(file);
  /* size overshooting into the footer: clamped, reads */
  file = single_column_file(PQT_REQUIRED, pages, 3, 7, 1000, &len);
  CHECK_OK(read_single(file, len, &d, &err));
  free(file);
  /* an index past the dictionary */
  const uint8_t idx_bad[5] = {3, 0x03, 0x45, 0x00, 0x00}; /* bit width 3: values 5, 0, 1 */
  pages[1].body = idx_bad;
  pages[1].len = 5;
  file = single_column_file(PQT_REQUIRED, pages, 3, 7, 0, &len);
  CHECK_STATUS(read_single(file, len, &d, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "dictionary index 5 out of range (dictionary has 2 entries)") != NULL);
  CHECK(strstr(err.msg, "mem.parquet: row group 0, column x, page at offset") == err.msg);
  free(file);
  pages[1].len = 3;
  /* a dictionary-encoded page with no dictionary page */
  file = single_column_file(PQT_REQUIRED, pages + 1, 2, 7, 0, &len);
  CHECK_STATUS(read_single(file, len, &d, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "no dictionary page") != NULL);
  free(file);
  /* the dictionary page is found without dictionary_page_offset (dict-page-offset-zero) */
  pages[1].body = idx_ok;
  g_omit_dict_offset = true;
  file = single_column_file(PQT_REQUIRED, pages, 3, 7, 0, &len);
  g_omit_dict_offset = false;
  CHECK_OK(read_single(file, len, &d, &err));
  CHECK(d.values.len == 28 && memcmp(d.values.data, "\x14\0\0\0\x0a\0\0\0", 8) == 0);
  free(file);
  pqt_leaf_data_free(&d);
}

VF_TEST(synthetic_encodings_and_levels) {
  size_t len;
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  vf_error err = {0};
  /* an unknown values encoding is unsupported, named */
  spage p = {PQT_DATA_PAGE, 4, 42, PQT_ENC_RLE, plain4, 16, false};
  uint8_t *file = single_column_file(PQT_REQUIRED, &p, 1, 4, 0, &len);
  CHECK_STATUS(read_single(file, len, &d, &err), VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "(42)") != NULL);
  free(file);
  /* legacy BIT_PACKED definition levels (MSB first): 1,0,1,1 -> 0b1011.... then 3 values */
  uint8_t body[1 + 12];
  body[0] = 0xB0;
  memcpy(body + 1, plain4, 12);
  spage q = {PQT_DATA_PAGE, 4, PQT_ENC_PLAIN, PQT_ENC_BIT_PACKED, body, sizeof body, true};
  file = single_column_file(PQT_OPTIONAL, &q, 1, 4, 0, &len);
  CHECK_OK(read_single(file, len, &d, &err));
  CHECK_EQ_INT(d.nvalues, 3);
  CHECK(d.def && d.def[0] == 1 && d.def[1] == 0 && d.def[2] == 1 && d.def[3] == 1);
  free(file);
  /* RLE definition levels all 1 (one run of 4): no materialised def array */
  uint8_t body2[4 + 2 + 16] = {2, 0, 0, 0, 4 << 1, 1};
  memcpy(body2 + 6, plain4, 16);
  spage r = {PQT_DATA_PAGE, 4, PQT_ENC_PLAIN, PQT_ENC_RLE, body2, sizeof body2, true};
  file = single_column_file(PQT_OPTIONAL, &r, 1, 4, 0, &len);
  CHECK_OK(read_single(file, len, &d, &err));
  CHECK(d.def == NULL);
  CHECK_EQ_INT(d.nvalues, 4);
  free(file);
  /* a flipped payload byte fails the CRC, naming the offset */
  body2[10] ^= 1;
  uint8_t *bad = single_column_file(PQT_OPTIONAL, &r, 1, 4, 0, &len);
  body2[10] ^= 1;
  r.crc = true;
  file = single_column_file(PQT_OPTIONAL, &r, 1, 4, 0, &len);
  /* splice the corrupted payload under the good header's CRC */
  for (size_t i = 0; i + sizeof body2 <= len; i++)
    if (memcmp(file + i, body2, sizeof body2) == 0) {
      file[i + 10] ^= 1;
      break;
    }
  CHECK_STATUS(read_single(file, len, &d, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "page CRC mismatch at offset 4") != NULL);
  free(file);
  free(bad);
  /* more pages than the row group's rows: its num_rows decides, as in DuckDB and arrow-rs (the
   * trailing page is not read) */
  spage two[2] = {r, r};
  file = single_column_file(PQT_OPTIONAL, two, 2, 4, 0, &len);
  CHECK_OK(read_single(file, len, &d, &err));
  CHECK_EQ_INT(d.nlevels, 4);
  free(file);
  /* ... but one page holding more entries than the row group's rows is corrupt */
  file = single_column_file(PQT_OPTIONAL, two, 2, 2, 0, &len);
  CHECK_STATUS(read_single(file, len, &d, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "decoded 4 rows, the row group has 2") != NULL);
  free(file);
  pqt_leaf_data_free(&d);
}
