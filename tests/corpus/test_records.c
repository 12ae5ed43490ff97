/* Unit tests for the record reader (src/corpus/records.c): ids (default point ids of the physical
 * row, `row`, a column), dense vectors against pqt_dense_from_leaf, payload JSON text (renamed
 * keys, key order, null omission, JSON objects in string columns unpacked, other strings kept),
 * bad rows (wrong dimension, NaN/inf, null vector, null element) as errors naming file, row,
 * vector and column, or skipped and counted, sparse and multivectors, batch slicing, and the
 * strict JSON object validator (src/util/json_check.c).
 * Fixtures: examples/corpus (2 files x 3000 rows), tests/data/{dim_mismatch,null_element,
 * records_vectors}.parquet (DuckDB, tests/oracle/gen_*.mjs) and small files written here with
 * the project's writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vforge/corpus.h"
#include "vforge/format.h"

static const char *src_dir(void) {
  const char *s = getenv("VF_SRC");
  return s && *s ? s : ".";
}

/* A corpus_file for a path (key = the absolute path, as discovery gives for local files). */
static bool file_for(const char *path, corpus_files *fs) {
  vf_error err;
  vf_status st = corpus_discover(path, NULL, fs, &err);
  if (st != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "discover %s: %s", path, err.msg);
    return false;
  }
  return true;
}

static char *payload_row(const corpus_batch *b, size_t i) {
  static char buf[4096];
  size_t a = (size_t)b->payload_offsets[i], z = (size_t)b->payload_offsets[i + 1];
  size_t n = z - a < sizeof buf - 1 ? z - a : sizeof buf - 1;
  memcpy(buf, b->payload.data + a, n);
  buf[n] = 0;
  return buf;
}

/* ----------------------------------------------------------- example corpus */

static const corpus_vec_source ex_vecs[] = {{"dense", CORPUS_VEC_DENSE, CORPUS_COSINE, "emb"}};
static const corpus_payload_source ex_pay[] = {{"text", "text"}, {"meta", "meta"}};

VF_TEST(test_example_ids_vectors_payload) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/corpus", src_dir());
  corpus_files fs;
  if (!file_for(dir, &fs)) return;
  CHECK_EQ_INT(fs.n, 2);
  corpus_record_spec spec = {.vectors = ex_vecs, .nvectors = 1, .payload = ex_pay, .npayload = 2};
  corpus_records *r = NULL;
  vf_error err;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  CHECK_EQ_INT(corpus_records_rows(r), 3000);
  CHECK(corpus_records_row_groups(r) >= 2);
  uint64_t rg0_end = corpus_records_row_group_first(r, 1);
  CHECK(rg0_end > 1001);
  corpus_batch b = {0};
  uint64_t skipped = 99;
  CHECK_OK(corpus_records_read(r, 0, 1000, &b, &skipped, &err));
  CHECK_EQ_INT(skipped, 0);
  CHECK_EQ_INT(b.n, rg0_end - 1000);
  CHECK_EQ_STR(b.file_key, fs.files[0].key);
  CHECK(b.file_key[0] == '/');
  /* ids: make_point_id(absolute path, physical row) */
  char want[37];
  corpus_point_id(fs.files[0].key, strlen(fs.files[0].key), 1000, want);
  CHECK(b.ids[0].is_uuid);
  CHECK_EQ_STR(b.ids[0].uuid, want);
  corpus_point_id(fs.files[0].key, strlen(fs.files[0].key), 1007, want);
  CHECK_EQ_STR(b.ids[7].uuid, want);
  CHECK_EQ_INT(b.file_rows[0], 1000);
  CHECK_EQ_INT(b.file_rows[b.n - 1], rg0_end - 1);
  /* payload */
  CHECK_EQ_STR(payload_row(&b, 0),
               "{\"text\":\"document 1000\",\"meta\":{\"lang\":\"de\",\"score\":0.0}}");
  /* vectors equal pqt_dense_from_leaf's */
  CHECK_EQ_INT(b.nvectors, 1);
  CHECK_EQ_STR(b.vectors[0].name, "dense");
  CHECK_EQ_INT(b.vectors[0].kind, CORPUS_VEC_DENSE);
  CHECK_EQ_INT(b.vectors[0].dim, 32);
  CHECK(b.vectors[0].null_rows == NULL);
  {
    io_source *src = NULL;
    pqt_file *f = NULL;
    CHECK_OK(corpus_open(&fs.files[0], &src, &err));
    CHECK_OK(pqt_open(src, NULL, &f, &err));
    int top = pqt_find_top(f, "emb");
    int leaf = pqt_schema_of(f)->nodes[top].first_leaf;
    pqt_leaf_data d;
    pqt_leaf_data_init(&d);
    pqt_dense dn = {0};
    int32_t dim = 0;
    CHECK_OK(pqt_read_leaves(f, 0, &leaf, 1, &d, &err));
    CHECK_OK(pqt_dense_from_leaf(f, top, &d, 0, &dim, &dn, &err));
    CHECK_EQ_INT(dim, 32);
    CHECK_EQ_INT(dn.rows, (int64_t)rg0_end);
    CHECK(memcmp(b.vectors[0].dense, dn.data + 1000 * 32, b.n * 32 * sizeof(float)) == 0);
    pqt_dense_free(&dn);
    pqt_leaf_data_free(&d);
    pqt_close(f);
  }
  /* the next row group from its first row: ids continue */
  CHECK_OK(corpus_records_read(r, 1, rg0_end, &b, NULL, &err));
  CHECK_EQ_INT(b.n, 3000 - rg0_end);
  corpus_point_id(fs.files[0].key, strlen(fs.files[0].key), rg0_end, want);
  CHECK_EQ_STR(b.ids[0].uuid, want);
  CHECK_EQ_INT(b.file_rows[0], rg0_end);
  /* a row outside the row group, a missing row group */
  CHECK_STATUS(corpus_records_read(r, 1, 3, &b, NULL, &err), VF_EUSAGE);
  CHECK_STATUS(corpus_records_read(r, 7, 0, &b, NULL, &err), VF_EUSAGE);
  /* the row group's end: an empty batch */
  CHECK_OK(corpus_records_read(r, 0, rg0_end, &b, NULL, &err));
  CHECK_EQ_INT(b.n, 0);
  CHECK(corpus_records_bytes_read(r) > 0);
  corpus_records_close(r);

  /* second file: `row` ids are global_row_base + physical row; renamed keys in another order */
  static const corpus_payload_source renamed[] = {{"m", "meta"}, {"title", "text"}, {"n", "id"}};
  corpus_idexpr *e = NULL;
  CHECK_OK(corpus_idexpr_parse("row", &e, &err));
  spec.id = e;
  spec.payload = renamed;
  spec.npayload = 3;
  CHECK_OK(corpus_records_open(&fs.files[1], &spec, 3000, &r, &err));
  if (r) {
    CHECK_OK(corpus_records_read(r, 0, 2, &b, NULL, &err));
    CHECK(!b.ids[0].is_uuid);
    CHECK_EQ_INT(b.ids[0].num, 3002);
    CHECK_EQ_INT(b.ids[1].num, 3003);
    CHECK_EQ_INT(b.file_rows[0], 2);
    CHECK_EQ_STR(payload_row(&b, 0),
                 "{\"m\":{\"lang\":\"fr\",\"score\":0.02},\"title\":\"document 3002\",\"n\":3002}");
    corpus_records_close(r);
  }
  corpus_idexpr_free(e);
  /* a column id expression */
  CHECK_OK(corpus_idexpr_parse("id", &e, &err));
  spec.id = e;
  spec.npayload = 0;
  CHECK_OK(corpus_records_open(&fs.files[1], &spec, 3000, &r, &err));
  if (r) {
    CHECK_OK(corpus_records_read(r, 0, 5, &b, NULL, &err));
    CHECK_EQ_INT(b.ids[0].num, 3005);
    CHECK_EQ_STR(payload_row(&b, 0), "{}"); /* no payload fields */
    corpus_records_close(r);
  }
  corpus_idexpr_free(e);
  corpus_batch_free(&b);
  corpus_files_free(&fs);
}

VF_TEST(test_open_errors) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/corpus", src_dir());
  corpus_files fs;
  if (!file_for(dir, &fs)) return;
  vf_error err;
  corpus_records *r = NULL;
  static const corpus_vec_source missing[] = {{"v", CORPUS_VEC_DENSE, CORPUS_DOT, "nope"}};
  corpus_record_spec spec = {.vectors = missing, .nvectors = 1};
  CHECK_STATUS(corpus_records_open(&fs.files[0], &spec, 0, &r, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "nope") != NULL);
  static const corpus_payload_source pmiss[] = {{"k", "absent"}};
  corpus_record_spec spec2 = {.payload = pmiss, .npayload = 1};
  CHECK_STATUS(corpus_records_open(&fs.files[0], &spec2, 0, &r, &err), VF_ENOTFOUND);
  static const corpus_vec_source wrong[] = {{"v", CORPUS_VEC_DENSE, CORPUS_DOT, "text"}};
  spec.vectors = wrong;
  CHECK_STATUS(corpus_records_open(&fs.files[0], &spec, 0, &r, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "column text") != NULL);
  static const corpus_vec_source sp[] = {{"s", CORPUS_VEC_SPARSE, CORPUS_DOT, "emb"}};
  spec.vectors = sp;
  CHECK_STATUS(corpus_records_open(&fs.files[0], &spec, 0, &r, &err), VF_ECONFIG);
  static const corpus_vec_source mv[] = {{"m", CORPUS_VEC_MULTI, CORPUS_DOT, "emb"}};
  spec.vectors = mv;
  CHECK_STATUS(corpus_records_open(&fs.files[0], &spec, 0, &r, &err), VF_ECONFIG);
  CHECK(r == NULL);
  corpus_files_free(&fs);
}

/* -------------------------------------------------- bad rows (writer fixture) */

/* 8 rows in row groups of 4: id INT64, emb LIST<float> nullable, s STRING nullable.
 * emb: 0,1 ok (dim 3), 2 null, 3 NaN at 0, 4 dim 2, 5 ok, 6 -inf at 2, 7 ok */
static bool write_bad_fixture(const char *path) {
  const float nan = NAN, inf = INFINITY;
  float vals[] = {0, 1, 2, 1, 2, 3, nan, 1, 2, 1, 2, 5, 6, 7, 6, 7, -inf, 7, 8, 9};
  int64_t offs[] = {0, 3, 6, 6, 9, 11, 14, 17, 20};
  uint8_t valid[] = {1, 1, 0, 1, 1, 1, 1, 1};
  int64_t ids[] = {0, 1, 2, 3, 4, 5, 6, 7};
  const char *strs[] = {
      "{\"a\":1}",  "plain", NULL,
      "{\"a\":",    "[1,2]", "{\"x\":{\"y\":[1,2,{\"z\":null}]},\"q\":\"\\u00e9\"}",
      "{\"a\":1,}", NULL};
  uint8_t svalid[] = {1, 1, 0, 1, 1, 1, 1, 0};
  pqt_wcolumn cols[] = {{"id", PQT_W_INT64, false, 0},
                        {"emb", PQT_W_LIST_FLOAT, true, 0},
                        {"s", PQT_W_STRING, true, 0}};
  pqt_writer_opts o = {.row_group_rows = 4};
  pqt_writer *w = NULL;
  vf_error err;
  if (pqt_writer_open(path, cols, 3, &o, &w, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "writer: %s", err.msg);
    return false;
  }
  pqt_wbatch b[3] = {{.values = ids},
                     {.values = vals, .offsets = offs, .valid = valid},
                     {.strs = strs, .valid = svalid}};
  if (pqt_writer_write(w, b, 8, &err) != VF_OK || pqt_writer_close(w, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "writer: %s", err.msg);
    return false;
  }
  return true;
}

static const corpus_vec_source bad_vecs[] = {{"dense", CORPUS_VEC_DENSE, CORPUS_DOT, "emb"}};
static const corpus_payload_source bad_pay[] = {{"s", "s"}, {"n", "id"}};

VF_TEST(test_bad_rows_error_and_skip) {
  char path[4096];
  snprintf(path, sizeof path, "%s/bad.parquet", vf_test_tmpdir());
  if (!write_bad_fixture(path)) return;
  corpus_files fs;
  if (!file_for(path, &fs)) return;
  const char *key = fs.files[0].key;
  vf_error err;
  corpus_records *r = NULL;
  corpus_batch b = {0};
  corpus_record_spec spec = {.vectors = bad_vecs, .nvectors = 1, .payload = bad_pay, .npayload = 2};
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  CHECK_EQ_INT(corpus_records_row_groups(r), 2);
  char want[4200];
  CHECK_STATUS(corpus_records_read(r, 0, 0, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 2: vector 'dense' (column emb) is null", key);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(corpus_records_read(r, 0, 3, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 3: vector 'dense' (column emb) has NaN at position 0", key);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(corpus_records_read(r, 1, 4, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 4: vector 'dense' (column emb) has dimension 2, expected 3",
           key);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(corpus_records_read(r, 1, 5, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 6: vector 'dense' (column emb) has -inf at position 2", key);
  CHECK_EQ_STR(err.msg, want);
  /* good rows before the first bad one are fine from a later start */
  CHECK_OK(corpus_records_read(r, 1, 7, &b, NULL, &err));
  CHECK_EQ_INT(b.n, 1);
  corpus_records_close(r);

  spec.skip_bad_rows = true;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  uint64_t skipped = 0;
  CHECK_OK(corpus_records_read(r, 0, 0, &b, &skipped, &err));
  CHECK_EQ_INT(skipped, 2);
  CHECK_EQ_INT(b.n, 2);
  char id[37];
  corpus_point_id(key, strlen(key), 1, id);
  CHECK_EQ_STR(b.ids[1].uuid, id);
  CHECK_EQ_INT(b.file_rows[1], 1);
  CHECK_EQ_INT(b.vectors[0].dim, 3);
  CHECK(b.vectors[0].dense[3] == 1 && b.vectors[0].dense[5] == 3);
  CHECK_EQ_STR(payload_row(&b, 0), "{\"s\":{\"a\":1},\"n\":0}");
  CHECK_EQ_STR(payload_row(&b, 1), "{\"s\":\"plain\",\"n\":1}");
  CHECK_OK(corpus_records_read(r, 1, 4, &b, &skipped, &err));
  CHECK_EQ_INT(skipped, 2);
  CHECK_EQ_INT(b.n, 2);
  CHECK_EQ_INT(b.file_rows[0], 5);
  CHECK_EQ_INT(b.file_rows[1], 7);
  corpus_point_id(key, strlen(key), 7, id);
  CHECK_EQ_STR(b.ids[1].uuid, id); /* ids of other rows unchanged */
  CHECK(b.vectors[0].dense[0] == 5 && b.vectors[0].dense[5] == 9);
  CHECK_EQ_STR(payload_row(&b, 0),
               "{\"s\":{\"x\":{\"y\":[1,2,{\"z\":null}]},\"q\":\"\\u00e9\"},\"n\":5}");
  CHECK_EQ_STR(payload_row(&b, 1), "{\"n\":7}"); /* null omitted */
  corpus_records_close(r);

  /* payload only: strings that are not JSON objects stay strings */
  corpus_record_spec ponly = {.payload = bad_pay, .npayload = 2};
  CHECK_OK(corpus_records_open(&fs.files[0], &ponly, 0, &r, &err));
  if (r) {
    CHECK_OK(corpus_records_read(r, 0, 2, &b, &skipped, &err));
    CHECK_EQ_INT(b.n, 2);
    CHECK_EQ_STR(payload_row(&b, 0), "{\"n\":2}");
    CHECK_EQ_STR(payload_row(&b, 1), "{\"s\":\"{\\\"a\\\":\",\"n\":3}");
    CHECK_OK(corpus_records_read(r, 1, 4, &b, &skipped, &err));
    CHECK_EQ_STR(payload_row(&b, 0), "{\"s\":\"[1,2]\",\"n\":4}");
    CHECK_EQ_STR(payload_row(&b, 2), "{\"s\":\"{\\\"a\\\":1,}\",\"n\":6}");
    corpus_records_close(r);
  }
  corpus_batch_free(&b);
  corpus_files_free(&fs);
}

VF_TEST(test_duckdb_bad_fixtures) {
  char path[4096];
  vf_error err;
  corpus_batch b = {0};
  corpus_records *r = NULL;
  static const corpus_vec_source v[] = {{"v", CORPUS_VEC_DENSE, CORPUS_EUCLID, "emb"}};
  corpus_record_spec spec = {.vectors = v, .nvectors = 1};
  uint64_t skipped = 0;
  char want[4200];

  snprintf(path, sizeof path, "%s/tests/data/dim_mismatch.parquet", src_dir());
  corpus_files fs;
  if (!file_for(path, &fs)) return;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (r) {
    int rg3 = -1; /* the row group holding row 3 */
    for (int g = 0; g < corpus_records_row_groups(r); g++)
      if (corpus_records_row_group_first(r, g) <= 3 && corpus_records_row_group_first(r, g + 1) > 3)
        rg3 = g;
    CHECK(rg3 >= 0);
    for (int g = 0; g < rg3; g++)
      CHECK_OK(corpus_records_read(r, g, corpus_records_row_group_first(r, g), &b, NULL, &err));
    uint64_t first = corpus_records_row_group_first(r, rg3);
    CHECK_STATUS(corpus_records_read(r, rg3, first, &b, NULL, &err), VF_ECORRUPT);
    snprintf(want, sizeof want, "%s: row 3: vector 'v' (column emb) has dimension 3, expected 4",
             fs.files[0].key);
    CHECK_EQ_STR(err.msg, want);
    corpus_records_close(r);
  }
  spec.skip_bad_rows = true;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (r) {
    uint64_t total = 0, total_skipped = 0;
    for (int g = 0; g < corpus_records_row_groups(r); g++) {
      CHECK_OK(corpus_records_read(r, g, corpus_records_row_group_first(r, g), &b, &skipped, &err));
      for (size_t i = 0; i < b.n; i++)
        CHECK(b.file_rows[i] != 3);
      total += b.n;
      total_skipped += skipped;
    }
    CHECK_EQ_INT(total, 5);
    CHECK_EQ_INT(total_skipped, 1);
    corpus_records_close(r);
  }
  corpus_files_free(&fs);

  spec.skip_bad_rows = false;
  snprintf(path, sizeof path, "%s/tests/data/null_element.parquet", src_dir());
  if (!file_for(path, &fs)) return;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (r) {
    CHECK_STATUS(corpus_records_read(r, 0, 0, &b, NULL, &err), VF_ECORRUPT);
    snprintf(want, sizeof want,
             "%s: row 4: vector 'v' (column emb) has a null element at position 1",
             fs.files[0].key);
    CHECK_EQ_STR(err.msg, want);
    corpus_records_close(r);
  }
  spec.skip_bad_rows = true;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (r) {
    CHECK_OK(corpus_records_read(r, 0, 0, &b, &skipped, &err));
    CHECK_EQ_INT(skipped, 1);
    CHECK_EQ_INT(b.n, 5);
    CHECK_EQ_INT(b.file_rows[4], 5);
    CHECK(b.vectors[0].dense[4 * 4] == 5 && b.vectors[0].dense[4 * 4 + 3] == 8);
    corpus_records_close(r);
  }
  corpus_files_free(&fs);
  corpus_batch_free(&b);
}

/* ------------------------------------------------- sparse and multivectors */

VF_TEST(test_sparse_and_multi) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/records_vectors.parquet", src_dir());
  corpus_files fs;
  if (!file_for(path, &fs)) return;
  const char *key = fs.files[0].key;
  vf_error err;
  corpus_batch b = {0};
  corpus_records *r = NULL;
  uint64_t skipped = 0;
  char want[4200];
  CHECK_EQ_INT(fs.n, 1);

  static const corpus_vec_source sp[] = {{"sp", CORPUS_VEC_SPARSE, CORPUS_DOT, "sp"}};
  corpus_record_spec spec = {.vectors = sp, .nvectors = 1};
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  CHECK_EQ_INT(corpus_records_row_groups(r), 1);
  CHECK_STATUS(corpus_records_read(r, 0, 0, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 2: vector 'sp' (column sp) is null", key);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(corpus_records_read(r, 0, 3, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 3: vector 'sp' (column sp) has 2 indices and 1 values", key);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(corpus_records_read(r, 0, 4, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want, "%s: row 4: vector 'sp' (column sp) has NaN at position 0", key);
  CHECK_EQ_STR(err.msg, want);
  corpus_records_close(r);
  spec.skip_bad_rows = true;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  CHECK_OK(corpus_records_read(r, 0, 0, &b, &skipped, &err));
  CHECK_EQ_INT(skipped, 3);
  CHECK_EQ_INT(b.n, 5); /* rows 0, 1, 5, 6, 7 */
  const corpus_vec_batch *v = &b.vectors[0];
  CHECK_EQ_INT(v->kind, CORPUS_VEC_SPARSE);
  int64_t offs[] = {0, 3, 3, 5, 7, 9};
  for (int i = 0; i <= 5; i++)
    CHECK_EQ_INT(v->offsets[i], offs[i]);
  CHECK(v->indices[0] == 1 && v->indices[1] == 5 && v->indices[2] == 9);
  CHECK(v->values[0] == 0.5f && v->values[2] == 2.5f);
  CHECK(v->indices[3] == 5 && v->indices[4] == 15 && v->values[4] == 5.25f);
  CHECK(v->indices[8] == 17 && v->values[8] == 7.25f);
  CHECK_EQ_INT(b.file_rows[2], 5);
  /* slicing a sparse batch: offsets stay absolute */
  corpus_vec_batch storage[1];
  corpus_batch view;
  corpus_batch_slice(&b, 2, 2, storage, &view);
  CHECK_EQ_INT(view.n, 2);
  CHECK_EQ_INT(view.file_rows[0], 5);
  CHECK_EQ_INT(view.vectors[0].offsets[0], 3);
  CHECK_EQ_INT(view.vectors[0].indices[view.vectors[0].offsets[1]], 6);
  corpus_records_close(r);

  static const corpus_vec_source sp64[] = {{"s64", CORPUS_VEC_SPARSE, CORPUS_DOT, "sp64"}};
  corpus_record_spec spec64 = {.vectors = sp64, .nvectors = 1};
  CHECK_OK(corpus_records_open(&fs.files[0], &spec64, 0, &r, &err));
  if (!r) return;
  CHECK_STATUS(corpus_records_read(r, 0, 0, &b, NULL, &err), VF_ECORRUPT);
  snprintf(want, sizeof want,
           "%s: row 1: vector 's64' (column sp64) has index -1 at position 0 (indices must be in "
           "[0, 2^32))",
           key);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(corpus_records_read(r, 0, 2, &b, NULL, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 2: vector 's64' (column sp64) has index 4294967296") != NULL);
  CHECK_OK(corpus_records_read(r, 0, 3, &b, NULL, &err));
  CHECK_EQ_INT(b.n, 5);
  CHECK(b.vectors[0].indices[0] == 3 && b.vectors[0].values[0] == 1.5f);
  corpus_records_close(r);
  spec64.skip_bad_rows = true;
  CHECK_OK(corpus_records_open(&fs.files[0], &spec64, 0, &r, &err));
  if (!r) return;
  CHECK_OK(corpus_records_read(r, 0, 0, &b, &skipped, &err));
  CHECK_EQ_INT(skipped, 2);
  CHECK(b.vectors[0].indices[1] == 4294967295u);
  corpus_records_close(r);

  static const corpus_vec_source mv[] = {{"mv", CORPUS_VEC_MULTI, CORPUS_DOT, "mv"}};
  corpus_record_spec specm = {.vectors = mv, .nvectors = 1};
  CHECK_OK(corpus_records_open(&fs.files[0], &specm, 0, &r, &err));
  if (!r) return;
  static const struct {
    uint64_t from;
    const char *what;
  } cases[] = {{2, "vector 0 has dimension 3, expected 2"},
               {3, "has no vectors"},
               {4, "has a null element at position 1 of vector 0"},
               {5, "is null"},
               {6, "has a null vector at index 1"},
               {7, "vector 0 has +inf at position 1"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_STATUS(corpus_records_read(r, 0, cases[i].from, &b, NULL, &err), VF_ECORRUPT);
    snprintf(want, sizeof want, "%s: row %llu: vector 'mv' (column mv) %s", key,
             (unsigned long long)cases[i].from, cases[i].what);
    CHECK_EQ_STR(err.msg, want);
  }
  corpus_records_close(r);
  specm.skip_bad_rows = true;
  CHECK_OK(corpus_records_open(&fs.files[0], &specm, 0, &r, &err));
  if (!r) return;
  CHECK_OK(corpus_records_read(r, 0, 0, &b, &skipped, &err));
  CHECK_EQ_INT(skipped, 6);
  CHECK_EQ_INT(b.n, 2);
  v = &b.vectors[0];
  CHECK_EQ_INT(v->kind, CORPUS_VEC_MULTI);
  CHECK_EQ_INT(v->dim, 2);
  CHECK(v->offsets[0] == 0 && v->offsets[1] == 2 && v->offsets[2] == 3);
  for (int i = 0; i < 6; i++)
    CHECK(v->multi[i] == (float)(i + 1));
  corpus_batch_slice(&b, 1, 1, storage, &view);
  CHECK_EQ_INT(view.vectors[0].offsets[0], 2);
  CHECK(view.vectors[0].multi[view.vectors[0].offsets[0] * 2] == 5);
  corpus_records_close(r);
  corpus_batch_free(&b);
  corpus_files_free(&fs);
}

/* ------------------------------------------------------------- slicing */

VF_TEST(test_batch_slice) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/corpus", src_dir());
  corpus_files fs;
  if (!file_for(dir, &fs)) return;
  corpus_record_spec spec = {.vectors = ex_vecs, .nvectors = 1, .payload = ex_pay, .npayload = 2};
  corpus_records *r = NULL;
  vf_error err;
  corpus_batch b = {0};
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  CHECK_OK(corpus_records_read(r, 0, 0, &b, NULL, &err));
  corpus_vec_batch storage[1];
  corpus_batch view;
  corpus_batch_slice(&b, 10, 5, storage, &view);
  CHECK_EQ_INT(view.n, 5);
  CHECK_EQ_STR(view.ids[0].uuid, b.ids[10].uuid);
  CHECK_EQ_INT(view.file_rows[4], 14);
  CHECK(view.vectors == storage);
  CHECK_EQ_STR(view.vectors[0].name, "dense");
  CHECK(view.vectors[0].dense == b.vectors[0].dense + 10 * 32);
  CHECK_EQ_STR(payload_row(&view, 0),
               "{\"text\":\"document 10\",\"meta\":{\"lang\":\"de\",\"score\":0.1}}");
  /* clamped at the end */
  corpus_batch_slice(&b, b.n - 2, 100, storage, &view);
  CHECK_EQ_INT(view.n, 2);
  corpus_batch_slice(&b, b.n + 5, 1, storage, &view);
  CHECK_EQ_INT(view.n, 0);
  corpus_records_close(r);
  corpus_batch_free(&b);
  CHECK(b.ids == NULL && b.n == 0);
  corpus_files_free(&fs);
}

/* ------------------------------------------------------- JSON validator */

VF_TEST(test_json_is_object) {
  static const char *good[] = {"{}",
                               " {\"a\":1} ",
                               "{\"a\":[1,2.5e-3,-0,true,false,null,{\"b\":\"\\u00e9\\n\"}]}",
                               "{\"k\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}",
                               "{\"s\":\"\\ud83d\\ude00\"}",
                               "{\"a\":{},\"b\":[],\"c\":[[]]}",
                               "{\"n\":1E+10}"};
  static const char *bad[] = {"",
                              "[]",
                              "\"{}\"",
                              "{",
                              "{\"a\":1,}",
                              "{\"a\" 1}",
                              "{'a':1}",
                              "{\"a\":01}",
                              "{\"a\":NaN}",
                              "{\"a\":1}x",
                              "{\"a\":1}{}",
                              "{\"a\":\"\x01\"}",
                              "{\"a\":\"\xc3\"}",
                              "{\"a\":\"\\x\"}",
                              "{\"a\":\"\\ud800\"}",
                              "{\"a\":\"\\udc00\"}",
                              "{\"a\":[1,]}",
                              "{\"a\":.5}",
                              "{\"a\":1.}",
                              "{\"a\":tru}",
                              "{a:1}",
                              "{\"a\":-}",
                              "{\"a\":\"\xed\xa0\x80\"}",
                              "{\"a\":1 /* c */}"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    if (!vf_json_is_object(good[i], strlen(good[i])))
      vf_test_fail(__FILE__, __LINE__, "rejected valid %s", good[i]);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (vf_json_is_object(bad[i], strlen(bad[i])))
      vf_test_fail(__FILE__, __LINE__, "accepted invalid %s", bad[i]);
  /* NUL inside the text, nesting cap */
  CHECK(!vf_json_is_object("{\"a\":\"\0\"}", 9));
  static char deep[2 * 600 + 16];
  size_t n = 0;
  deep[n++] = '{';
  deep[n++] = '"';
  deep[n++] = 'a';
  deep[n++] = '"';
  deep[n++] = ':';
  for (int i = 0; i < 600; i++)
    deep[n++] = '[';
  for (int i = 0; i < 600; i++)
    deep[n++] = ']';
  deep[n++] = '}';
  CHECK(!vf_json_is_object(deep, n));
  CHECK(vf_json_is_object(deep + 0, 0) == false);
  n = 5;
  for (int i = 0; i < 100; i++)
    deep[n++] = '[';
  for (int i = 0; i < 100; i++)
    deep[n++] = ']';
  deep[n++] = '}';
  CHECK(vf_json_is_object(deep, n));
}

/* ------------------------------------------------- several named vectors */

VF_TEST(test_two_dense_vectors) {
  /* two dense columns of different dimensions (a fixed-size VECTOR and a LIST<float>), written
   * in 3 row groups: each named vector keeps its own values */
  char path[4096];
  snprintf(path, sizeof path, "%s/two.parquet", vf_test_tmpdir());
  enum { N = 9 };
  float a[N * 4], bv[N * 2];
  int64_t boffs[N + 1];
  for (int i = 0; i < N * 4; i++)
    a[i] = (float)i;
  for (int i = 0; i < N * 2; i++)
    bv[i] = -(float)i - 0.5f;
  for (int i = 0; i <= N; i++)
    boffs[i] = 2 * i;
  pqt_wcolumn cols[] = {{"big", PQT_W_VECTOR, false, 4}, {"small", PQT_W_LIST_FLOAT, false, 0}};
  pqt_writer_opts o = {.row_group_rows = 3};
  pqt_writer *w = NULL;
  vf_error err;
  CHECK_OK(pqt_writer_open(path, cols, 2, &o, &w, &err));
  if (!w) return;
  pqt_wbatch wb[2] = {{.values = a}, {.values = bv, .offsets = boffs}};
  CHECK_OK(pqt_writer_write(w, wb, N, &err));
  CHECK_OK(pqt_writer_close(w, &err));
  corpus_files fs;
  if (!file_for(path, &fs)) return;
  static const corpus_vec_source vs[] = {{"a", CORPUS_VEC_DENSE, CORPUS_COSINE, "big"},
                                         {"b", CORPUS_VEC_DENSE, CORPUS_MANHATTAN, "small"},
                                         {"a2", CORPUS_VEC_DENSE, CORPUS_DOT, "big"}};
  corpus_record_spec spec = {.vectors = vs, .nvectors = 3};
  corpus_records *r = NULL;
  corpus_batch b = {0};
  CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
  if (!r) return;
  CHECK_EQ_INT(corpus_records_row_groups(r), 3);
  for (int g = 0; g < 3; g++) {
    uint64_t first = corpus_records_row_group_first(r, g);
    CHECK_OK(corpus_records_read(r, g, first + 1, &b, NULL, &err));
    CHECK_EQ_INT(b.n, 2);
    CHECK_EQ_INT(b.nvectors, 3);
    CHECK_EQ_INT(b.vectors[0].dim, 4);
    CHECK_EQ_INT(b.vectors[1].dim, 2);
    CHECK_EQ_INT(b.vectors[1].distance, CORPUS_MANHATTAN);
    CHECK(memcmp(b.vectors[0].dense, a + (first + 1) * 4, 2 * 4 * sizeof(float)) == 0);
    CHECK(memcmp(b.vectors[1].dense, bv + (first + 1) * 2, 2 * 2 * sizeof(float)) == 0);
    CHECK(memcmp(b.vectors[2].dense, a + (first + 1) * 4, 2 * 4 * sizeof(float)) == 0);
    corpus_vec_batch storage[3];
    corpus_batch view;
    corpus_batch_slice(&b, 1, 1, storage, &view);
    CHECK(view.vectors[1].dense[0] == bv[(first + 2) * 2]);
    CHECK(view.vectors[0].dense[3] == a[(first + 2) * 4 + 3]);
  }
  corpus_records_close(r);
  corpus_batch_free(&b);
  corpus_files_free(&fs);
}

VF_TEST(test_dense_handover_between_batches) {
  /* float32 list vectors are handed from the decoded leaf to the batch (records.c fill_vector):
   * batches filled one after the other keep their own values (the pipeline holds several at
   * once), a partial row group (resume) and a row group with a bad row are copied, and a vector
   * column that is also a payload field keeps its values for the payload */
  char path[4096];
  snprintf(path, sizeof path, "%s/handover.parquet", vf_test_tmpdir());
  enum { N = 12, D = 3 };
  float v[N * D];
  int64_t offs[N + 1];
  for (int i = 0; i < N * D; i++)
    v[i] = (float)i + 0.25f;
  v[7 * D + 1] = (float)NAN; /* row 7 (row group 2) is bad */
  for (int i = 0; i <= N; i++)
    offs[i] = D * i;
  pqt_wcolumn cols[] = {{"v", PQT_W_LIST_FLOAT, false, 0}};
  pqt_writer_opts o = {.row_group_rows = 3};
  pqt_writer *w = NULL;
  vf_error err;
  CHECK_OK(pqt_writer_open(path, cols, 1, &o, &w, &err));
  if (!w) return;
  pqt_wbatch wb[1] = {{.values = v, .offsets = offs}};
  CHECK_OK(pqt_writer_write(w, wb, N, &err));
  CHECK_OK(pqt_writer_close(w, &err));
  corpus_files fs;
  if (!file_for(path, &fs)) return;
  static const corpus_vec_source vs[] = {{"v", CORPUS_VEC_DENSE, CORPUS_COSINE, "v"}};
  static const corpus_payload_source pay[] = {{"vec", "v"}};
  for (int with_payload = 0; with_payload < 2; with_payload++) {
    corpus_record_spec spec = {.vectors = vs, .nvectors = 1, .skip_bad_rows = true};
    if (with_payload) {
      spec.payload = pay;
      spec.npayload = 1;
    }
    corpus_records *r = NULL;
    CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
    if (!r) break;
    CHECK_EQ_INT(corpus_records_row_groups(r), 4);
    corpus_batch b[2] = {{0}, {0}};
    for (int round = 0; round < 2; round++) { /* the second round reuses both batches */
      for (int g = 0; g < 4; g++) {
        uint64_t first = corpus_records_row_group_first(r, g);
        uint64_t from = first + (g == 3 && round == 1 ? 1 : 0); /* a resumed row group */
        uint64_t skipped = 0;
        CHECK_OK(corpus_records_read(r, g, from, &b[g & 1], &skipped, &err));
        CHECK_EQ_INT(skipped, g == 2 ? 1 : 0);
        CHECK_EQ_INT(b[g & 1].n, 3 - (from - first) - skipped);
      }
      /* both batches still hold their own row groups' (2 and 3) vectors */
      const corpus_batch *b2 = &b[0], *b3 = &b[1];
      CHECK_EQ_INT(b2->file_rows[0], 6);
      CHECK_EQ_INT(b2->file_rows[1], 8);
      CHECK(memcmp(b2->vectors[0].dense, v + 6 * D, D * sizeof(float)) == 0);
      CHECK(memcmp(b2->vectors[0].dense + D, v + 8 * D, D * sizeof(float)) == 0);
      size_t skip3 = round == 1 ? 1 : 0;
      CHECK_EQ_INT(b3->file_rows[0], 9 + skip3);
      CHECK(memcmp(b3->vectors[0].dense, v + (9 + skip3) * D, (3 - skip3) * D * sizeof(float)) ==
            0);
      if (with_payload)
        CHECK_EQ_STR(payload_row(b3, 0), round == 1 ? "{\"vec\":[30.25,31.25,32.25]}"
                                                    : "{\"vec\":[27.25,28.25,29.25]}");
      /* an earlier batch read again from row group 0 while the other one is kept */
      CHECK_OK(corpus_records_read(r, 0, 0, &b[0], NULL, &err));
      CHECK_EQ_INT(b[0].n, 3);
      CHECK(memcmp(b[0].vectors[0].dense, v, 3 * D * sizeof(float)) == 0);
      CHECK(memcmp(b3->vectors[0].dense, v + (9 + skip3) * D, (3 - skip3) * D * sizeof(float)) ==
            0);
    }
    /* the decode buffer carried to the next file's reader (not for a shared leaf) */
    vf_buf spare;
    vf_buf_init(&spare, 0);
    corpus_records_keep_buffer(r, &spare);
    CHECK(with_payload ? spare.data == NULL : spare.data != NULL);
    corpus_records_close(r);
    CHECK_OK(corpus_records_open(&fs.files[0], &spec, 0, &r, &err));
    if (!r) break;
    corpus_records_use_buffer(r, &spare);
    CHECK(spare.data == NULL);
    CHECK_OK(corpus_records_read(r, 1, 3, &b[0], NULL, &err));
    CHECK_EQ_INT(b[0].n, 3);
    CHECK(memcmp(b[0].vectors[0].dense, v + 3 * D, 3 * D * sizeof(float)) == 0);
    vf_buf_free(&spare);
    corpus_batch_free(&b[0]);
    corpus_batch_free(&b[1]);
    corpus_records_close(r);
  }
  corpus_files_free(&fs);
}
