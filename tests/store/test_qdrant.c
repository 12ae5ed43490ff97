/* The Qdrant store (src/store/qdrant*.c) against a canned-response server: the float formatter,
 * the points body, collection create/compare/recreate, deferred indexing, waiting for green,
 * upsert splitting, count and search.  End-to-end tests against the schema-validating stand-in
 * live in tests/services/qdrant-standin/. */
#include <math.h>
#include <stdlib.h>

#include "../io/http_canned.h"
#include "store/qdrant_internal.h"
#include "vf_test.h"
#include "vforge/store.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static bool roundtrips(float v) {
  char buf[QD_F32_MAX_CHARS + 1];
  size_t n = qd_fmt_f32(buf, v);
  if (n == 0 || n > QD_F32_MAX_CHARS) return false;
  buf[n] = 0;
  vf_json_val j;
  vf_error err;
  if (vf_json_parse(buf, n, "f32", &j, &err) != VF_OK) return false; /* a valid JSON number */
  bool num = j.t == VF_JSON_NUM;
  vf_json_free(&j);
  char *end;
  float back = strtof(buf, &end);
  uint32_t a, b;
  memcpy(&a, &v, 4);
  memcpy(&b, &back, 4);
  return num && *end == 0 && a == b;
}

VF_TEST(f32_format_roundtrips) {
  static const float specials[] = {0.0f,         -0.0f,   1.0f,     -1.0f,      0.1f,    0.5f,
                                   1e-7f,        3.4028235e38f, -3.4028235e38f, 1.17549435e-38f,
                                   1.4e-45f,     123456789.0f,  1e9f,   1e10f,  0.000123f,
                                   100.0f,       16777216.0f,   9.99999994e-9f, 0.99999994f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    if (!roundtrips(specials[i])) vf_test_fail(__FILE__, __LINE__, "%.9g", (double)specials[i]);
  char buf[32];
  size_t n = qd_fmt_f32(buf, 0.5f);
  CHECK(n == 3 && memcmp(buf, "0.5", 3) == 0);
  n = qd_fmt_f32(buf, 100.0f);
  CHECK(n == 3 && memcmp(buf, "100", 3) == 0);
  n = qd_fmt_f32(buf, -0.0f);
  CHECK(n == 4 && memcmp(buf, "-0.0", 4) == 0);
  int bad = 0;
  for (int i = 0; i < 2000000 && bad < 5; i++) {
    uint32_t bits = (uint32_t)next_u64();
    float v;
    memcpy(&v, &bits, 4);
    if (!isfinite(v)) continue;
    if (!roundtrips(v)) {
      vf_test_fail(__FILE__, __LINE__, "0x%08x (%.9g) does not round-trip", bits, (double)v);
      bad++;
    }
  }
  for (int i = 0; i < 200000 && bad < 5; i++) { /* typical embedding values */
    float v = (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    if (!roundtrips(v)) bad++;
  }
  CHECK_EQ_INT(bad, 0);
}

VF_TEST(json_reader_rejects_bad_input) {
  static const char *bad[] = {"{",     "{\"a\":}", "[1,]", "\"\\x\"", "01",  "{\"a\" 1}",
                              "nul",   "[1] 2",    "\"\\ud800\"", "1.",  "-",   "\"a\nb\""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vf_json_val v;
    vf_error err;
    if (vf_json_parse(bad[i], strlen(bad[i]), "t", &v, &err) != VF_ECORRUPT)
      vf_test_fail(__FILE__, __LINE__, "accepted %s", bad[i]);
  }
  char deep[200];
  memset(deep, '[', sizeof deep);
  vf_json_val v;
  vf_error err;
  CHECK_STATUS(vf_json_parse(deep, sizeof deep, "t", &v, &err), VF_ECORRUPT);
  const char *ok = "{\"a\":{\"b\":[1,2.5e3,\"x\\u00e9\\ud83d\\ude00\"]},\"c\":null,\"d\":true}";
  CHECK_OK(vf_json_parse(ok, strlen(ok), "t", &v, &err));
  const vf_json_val *b = vf_json_path(&v, "a.b");
  CHECK(b && b->t == VF_JSON_ARR && b->n == 3 && b->items[1].num == 2500.0);
  CHECK(b && strcmp(b->items[2].str, "x\xc3\xa9\xf0\x9f\x98\x80") == 0);
  CHECK(vf_json_get(&v, "d") && vf_json_get(&v, "d")->b);
  vf_json_free(&v);
}

/* ------------------------------------------------------------ fixtures */

#include "qdrant_fixture.h"

static store_config cfg_for(const fixture *f, const char *url, const char *params) {
  store_config c = {0};
  c.type = "qdrant";
  c.url = url;
  c.api_key = "the-key";
  c.collection_name = "my coll";
  c.vectors = f->spec;
  c.nvectors = 3;
  c.params_json = params;
  return c;
}

VF_TEST(points_body_shape) {
  fixture f;
  fixture_init(&f);
  store_config c = cfg_for(&f, "http://127.0.0.1:1", NULL);
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_qdrant_open(&c, &s, &err));
  int map[3];
  CHECK_OK(store_check_batch(s, &f.b, map, &err));
  vf_buf out;
  vf_buf_init(&out, 0);
  vf_buf_append(&out, "[", 1, NULL);
  bool first = true;
  CHECK_OK(qd_points_json(s, &f.b, map, 0, 3, &first, &out, &err));
  vf_buf_append(&out, "]", 1, NULL);
  vf_json_val v;
  CHECK_OK(vf_json_parse((char *)out.data, out.len, "points", &v, &err));
  CHECK(v.t == VF_JSON_ARR && v.n == 3);
  if (v.n == 3) {
    CHECK(vf_json_get(&v.items[0], "id")->t == VF_JSON_NUM);
    CHECK(vf_json_get(&v.items[0], "id")->raw_len == 1);
    CHECK_EQ_STR(vf_json_get(&v.items[1], "id")->str, "0123abcd-0000-1111-2222-333344445555");
    const vf_json_val *id2 = vf_json_get(&v.items[2], "id");
    CHECK(id2 && id2->raw_len == 20 && memcmp(id2->raw, "18446744073709551615", 20) == 0);
    const vf_json_val *d0 = vf_json_path(&v.items[0], "vector.dense");
    CHECK(d0 && d0->n == 4 && d0->items[0].num == -1.0 && d0->items[3].num == -0.25);
    CHECK(vf_json_path(&v.items[2], "vector.dense") == NULL); /* null row: absent */
    const vf_json_val *sp = vf_json_path(&v.items[0], "vector.sparse");
    CHECK(sp && vf_json_get(sp, "indices")->n == 2 && vf_json_get(sp, "indices")->items[1].num == 4e9);
    CHECK(sp && vf_json_get(sp, "values")->items[1].num == -2.0);
    CHECK(vf_json_path(&v.items[1], "vector.sparse.indices")->n == 0); /* empty sparse vector */
    const vf_json_val *mv = vf_json_path(&v.items[1], "vector.colbert");
    CHECK(mv && mv->n == 2 && mv->items[1].n == 2 && mv->items[1].items[1].num == 5.0);
    CHECK(vf_json_path(&v.items[2], "vector.colbert") == NULL); /* no vectors: absent */
    CHECK_EQ_STR(vf_json_path(&v.items[0], "payload.t")->str, "a\"b");
    CHECK(vf_json_get(&v.items[1], "payload") == NULL);
    CHECK(vf_json_path(&v.items[2], "payload.x")->n == 2);
  }
  vf_json_free(&v);
  /* NaN is refused naming the row and vector */
  f.dense[5] = NAN;
  vf_buf_reset(&out);
  first = true;
  CHECK_STATUS(qd_points_json(s, &f.b, map, 0, 3, &first, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 1") && strstr(err.msg, "'dense'"));
  vf_buf_free(&out);
  vf_buf_free(&f.b.payload);
  store_close(s);
}

#define INFO(status, vectors, sparse, extra)                                                    \
  "{\"result\":{\"status\":\"" status "\",\"optimizer_status\":\"ok\",\"segments_count\":1,"    \
  "\"payload_schema\":{},\"config\":{\"params\":{\"vectors\":" vectors ",\"sparse_vectors\":"   \
  sparse "},\"hnsw_config\":{},\"optimizer_config\":{\"default_segment_number\":0,"           \
  "\"flush_interval_sec\":5,\"indexing_threshold\":20000}" extra "}},\"status\":\"ok\"}"
#define VECS_OK                                                                                 \
  "{\"dense\":{\"size\":4,\"distance\":\"Cosine\"},\"colbert\":{\"size\":2,\"distance\":"      \
  "\"Dot\",\"multivector_config\":{\"comparator\":\"max_sim\"}}}"
#define SPARSE_OK "{\"sparse\":{}}"
#define OKR "{\"result\":true,\"status\":\"ok\",\"time\":0.001}"

VF_TEST(ensure_creates_with_params) {
  fixture f;
  fixture_init(&f);
  static const canned_resp r[] = {{404, NULL, "{\"status\":{\"error\":\"Not found\"}}", 0},
                                  {200, NULL, OKR, 0}};
  canned_server srv;
  CHECK(canned_start(&srv, r, 2, vf_test_tmpdir()) == 0);
  store_config c =
      cfg_for(&f, srv.url,
              "{\"hnsw\":{\"m\":32,\"ef_construct\":200},\"quantization\":{\"scalar\":{\"type\":"
              "\"int8\",\"always_ram\":true}},\"optimizers\":{\"indexing_threshold\":50000},"
              "\"shard_number\":2,\"replication_factor\":1,\"write_consistency_factor\":1,"
              "\"on_disk_payload\":true,\"recreate\":false}");
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  size_t ll;
  char *log = canned_log(&srv, &ll);
  CHECK(strstr(log, "REQ GET /collections/my%20coll\n") != NULL);
  CHECK(strstr(log, "REQ PUT /collections/my%20coll\n") != NULL);
  CHECK(strstr(log, "api-key: the-key") != NULL);
  const char *body = strstr(log, "{\"vectors\"");
  CHECK(body != NULL);
  if (body) {
    vf_json_val v;
    size_t bl = strcspn(body, "\n");
    CHECK_OK(vf_json_parse(body, bl, "create", &v, &err));
    CHECK(vf_json_path(&v, "vectors.dense.size")->num == 4);
    CHECK_EQ_STR(vf_json_path(&v, "vectors.dense.distance")->str, "Cosine");
    CHECK_EQ_STR(vf_json_path(&v, "vectors.colbert.multivector_config.comparator")->str, "max_sim");
    CHECK_EQ_STR(vf_json_path(&v, "vectors.colbert.distance")->str, "Dot");
    CHECK(vf_json_path(&v, "vectors.sparse") == NULL);
    CHECK(vf_json_path(&v, "sparse_vectors.sparse") != NULL);
    CHECK(vf_json_path(&v, "hnsw_config.m")->num == 32);
    CHECK_EQ_STR(vf_json_path(&v, "quantization_config.scalar.type")->str, "int8");
    CHECK(vf_json_path(&v, "optimizers_config.indexing_threshold")->num == 50000);
    CHECK(vf_json_path(&v, "shard_number")->num == 2);
    CHECK(vf_json_path(&v, "on_disk_payload")->b);
    CHECK(vf_json_get(&v, "recreate") == NULL && vf_json_get(&v, "hnsw") == NULL);
    vf_json_free(&v);
  }
  free(log);
  store_close(s);
  vf_buf_free(&f.b.payload);
  canned_stop(&srv);
}

VF_TEST(ensure_compares_existing_and_recreates) {
  fixture f;
  fixture_init(&f);
  static const canned_resp r[] = {
      {200, NULL, INFO("green", VECS_OK, SPARSE_OK, ""), 0},
      {200, NULL,
       INFO("green",
            "{\"dense\":{\"size\":8,\"distance\":\"Cosine\"},\"colbert\":{\"size\":2,"
            "\"distance\":\"Dot\",\"multivector_config\":{\"comparator\":\"max_sim\"}}}",
            SPARSE_OK, ""),
       0},
      {200, NULL,
       INFO("green",
            "{\"dense\":{\"size\":4,\"distance\":\"Euclid\"},\"colbert\":{\"size\":2,"
            "\"distance\":\"Dot\",\"multivector_config\":{\"comparator\":\"max_sim\"}}}",
            SPARSE_OK, ""),
       0},
      {200, NULL, INFO("green", VECS_OK, "{}", ""), 0},
      {200, NULL,
       INFO("green",
            "{\"dense\":{\"size\":4,\"distance\":\"Cosine\"},\"colbert\":{\"size\":2,"
            "\"distance\":\"Dot\"}}",
            SPARSE_OK, ""),
       0},
      {200, NULL, INFO("green", VECS_OK, "{\"sparse\":{},\"other\":{}}", ""), 0},
      /* recreate: GET, DELETE, PUT */
      {200, NULL, INFO("green", VECS_OK, "{}", ""), 0},
      {200, NULL, OKR, 0},
      {200, NULL, OKR, 0}};
  canned_server srv;
  CHECK(canned_start(&srv, r, sizeof r / sizeof r[0], vf_test_tmpdir()) == 0);
  store_config c = cfg_for(&f, srv.url, "{}");
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err)); /* same schema: reused */
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "'dense'") && strstr(err.msg, "size 8") && strstr(err.msg, "4 in"));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "distance Euclid") && strstr(err.msg, "Cosine"));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "sparse vector 'sparse'") != NULL);
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "'colbert'") && strstr(err.msg, "multivector"));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "'other'") != NULL);
  store_close(s);
  c.recreate = true;
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  size_t ll;
  char *log = canned_log(&srv, &ll);
  CHECK_EQ_INT(canned_count(log, "REQ GET "), 7);
  CHECK_EQ_INT(canned_count(log, "REQ DELETE /collections/my%20coll\n"), 1);
  CHECK_EQ_INT(canned_count(log, "REQ PUT /collections/my%20coll\n"), 1);
  CHECK(strstr(log, "REQ DELETE") < strstr(log, "REQ PUT"));
  free(log);
  store_close(s);
  vf_buf_free(&f.b.payload);
  canned_stop(&srv);
}

VF_TEST(defer_and_enable_indexing) {
  fixture f;
  fixture_init(&f);
  static const canned_resp r[] = {
      {200, NULL, INFO("green", VECS_OK, SPARSE_OK, ""), 0}, /* defer: GET */
      {200, NULL, OKR, 0},                                   /* defer: PATCH */
      /* enable (another handle): GET with the metadata, PATCH */
      {200, NULL, INFO("green", VECS_OK, SPARSE_OK, ",\"metadata\":{\"vforge_indexing_threshold\":20000}"), 0},
      {200, NULL, OKR, 0},
      /* enable with a configured threshold: GET (what prepare deferred), PATCH */
      {200, NULL, INFO("green", VECS_OK, SPARSE_OK, ",\"metadata\":{\"vforge_defer\":\"indexing_threshold\"}"), 0},
      {200, NULL, OKR, 0}};
  canned_server srv;
  CHECK(canned_start(&srv, r, sizeof r / sizeof r[0], vf_test_tmpdir()) == 0);
  store_config c = cfg_for(&f, srv.url, "{}");
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_defer_indexing(s, &err));
  store_close(s);
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_enable_indexing(s, &err));
  store_close(s);
  c.params_json = "{\"optimizers\":{\"indexing_threshold\":777}}";
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_enable_indexing(s, &err));
  store_close(s);
  size_t ll;
  char *log = canned_log(&srv, &ll);
  CHECK(strstr(log, "{\"optimizers_config\":{\"indexing_threshold\":0},\"metadata\":{"
                    "\"vforge_indexing_threshold\":20000,\"vforge_defer\":\"indexing_threshold\"}}") != NULL);
  CHECK(strstr(log, "{\"optimizers_config\":{\"indexing_threshold\":20000}}") != NULL);
  CHECK(strstr(log, "{\"optimizers_config\":{\"indexing_threshold\":777}}") != NULL);
  CHECK_EQ_INT(canned_count(log, "REQ PATCH /collections/my%20coll\n"), 3);
  CHECK_EQ_INT(canned_count(log, "REQ GET "), 3);
  free(log);
  vf_buf_free(&f.b.payload);
  canned_stop(&srv);
}

#define ST(x) {200, NULL, INFO(x, VECS_OK, SPARSE_OK, ""), 0}

VF_TEST(wait_indexed_handles_grey_yellow_and_errors) {
  fixture f;
  fixture_init(&f);
  static const canned_resp r[] = {
      ST("yellow"), ST("grey"), {200, NULL, OKR, 0}, ST("grey"), ST("green"), ST("yellow"),
      ST("green"),  ST("green"), ST("green"), ST("green"), ST("green"), ST("green"), ST("green"),
      ST("green"),  ST("green"), ST("green"), ST("green"), ST("green"), ST("green"), ST("green"),
      /* then: an optimizer error */
      {200, NULL,
       "{\"result\":{\"status\":\"yellow\",\"optimizer_status\":{\"error\":\"disk full on "
       "segment 3\"},\"config\":{}},\"status\":\"ok\"}",
       0},
      /* then: red */
      ST("red"),
      /* then: the timeout */
      ST("yellow"), ST("yellow"), ST("yellow"), ST("yellow"), ST("yellow"), ST("yellow")};
  canned_server srv;
  CHECK(canned_start(&srv, r, sizeof r / sizeof r[0], vf_test_tmpdir()) == 0);
  store_config c = cfg_for(&f, srv.url, "{}");
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  double t0 = vf_now();
  CHECK_OK(store_wait_indexed(s, 60, &err));
  CHECK(vf_now() - t0 >= 2.0); /* green held for the stable period */
  size_t ll;
  char *log = canned_log(&srv, &ll);
  CHECK_EQ_INT(canned_count(log, "{\"optimizers_config\":{}}"), 1); /* one trigger per grey run */
  free(log);
  CHECK_STATUS(store_wait_indexed(s, 60, &err), VF_ENET);
  CHECK(strstr(err.msg, "disk full on segment 3") != NULL);
  CHECK_STATUS(store_wait_indexed(s, 60, &err), VF_ENET);
  CHECK(strstr(err.msg, "red") != NULL);
  CHECK_STATUS(store_wait_indexed(s, 0.6, &err), VF_ENET);
  CHECK(strstr(err.msg, "not green") && strstr(err.msg, "yellow"));
  store_close(s);
  vf_buf_free(&f.b.payload);
  canned_stop(&srv);
}

VF_TEST(upsert_splits_large_batches_and_counts) {
  enum { N = 5000, D = 768 };
  store_vector_spec spec = {"v", CORPUS_VEC_DENSE, CORPUS_DOT, D};
  float *dense = malloc(sizeof(float) * N * D);
  corpus_id *ids = calloc(N, sizeof *ids);
  for (size_t i = 0; i < (size_t)N * D; i++)
    dense[i] = (float)((double)(next_u64() >> 11) / 9007199254740992.0 - 0.5) * 1.2345678f;
  for (int i = 0; i < N; i++)
    ids[i].num = (uint64_t)i * 3;
  corpus_vec_batch vb = {"v", CORPUS_VEC_DENSE, CORPUS_DOT, D, dense, NULL, NULL, NULL, NULL, NULL};
  corpus_batch b = {0};
  b.n = N;
  b.ids = ids;
  b.nvectors = 1;
  b.vectors = &vb;
  static const canned_resp r[] = {
      {200, NULL, "{\"result\":{\"operation_id\":1,\"status\":\"acknowledged\"},\"status\":\"ok\"}", 0},
      {200, NULL, "{\"result\":{\"operation_id\":2,\"status\":\"acknowledged\"},\"status\":\"ok\"}", 0},
      {200, NULL, "{\"result\":{\"count\":5000},\"status\":\"ok\"}", 0}};
  canned_server srv;
  CHECK(canned_start(&srv, r, 3, vf_test_tmpdir()) == 0);
  store_config c = {0};
  c.type = "qdrant";
  c.url = srv.url;
  c.collection_name = "big";
  c.vectors = &spec;
  c.nvectors = 1;
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_upsert(s, &b, &err));
  uint64_t n = 0;
  CHECK_OK(store_count(s, true, &n, &err));
  CHECK_EQ_INT(n, 5000);
  size_t ll;
  char *log = canned_log(&srv, &ll);
  CHECK_EQ_INT(canned_count(log, "REQ PUT /collections/big/points?wait=false\n"), 2);
  CHECK_EQ_INT(canned_count(log, "{\"id\":"), N);
  CHECK(strstr(log, "{\"exact\":true}") != NULL);
  /* every body is under 32 MiB and the points come back in order, values round-tripping */
  size_t seen = 0;
  bool values_ok = true;
  for (const char *p = log; (p = strstr(p, "\nBODY ")) != NULL;) {
    size_t blen = (size_t)strtoull(p + 6, NULL, 10);
    const char *body = strchr(p + 1, '\n') + 1;
    CHECK(blen < ((size_t)32 << 20));
    vf_json_val v;
    if (strncmp(body, "{\"points\"", 9) == 0) {
      CHECK_OK(vf_json_parse(body, blen, "upsert", &v, &err));
      const vf_json_val *pts = vf_json_get(&v, "points");
      for (size_t i = 0; pts && i < pts->n; i++, seen++) {
        const vf_json_val *vec = vf_json_path(&pts->items[i], "vector.v");
        if (vf_json_get(&pts->items[i], "id")->num != (double)(seen * 3) || !vec || vec->n != D) {
          values_ok = false;
          continue;
        }
        for (size_t d = 0; d < D; d++) {
          char tmp[32];
          memcpy(tmp, vec->items[d].raw, vec->items[d].raw_len);
          tmp[vec->items[d].raw_len] = 0;
          if (strtof(tmp, NULL) != dense[seen * D + d]) values_ok = false;
        }
      }
      vf_json_free(&v);
    }
    p = body + blen;
  }
  CHECK_EQ_INT(seen, N);
  CHECK(values_ok);
  free(log);
  store_close(s);
  canned_stop(&srv);
  free(dense);
  free(ids);
}

VF_TEST(upsert_rejects_batch_not_matching_collection) {
  fixture f;
  fixture_init(&f);
  store_config c = cfg_for(&f, "http://127.0.0.1:1", NULL);
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  f.vecs[0].dim = 5;
  CHECK_STATUS(store_upsert(s, &f.b, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "'dense'") != NULL);
  store_close(s);
  vf_buf_free(&f.b.payload);
  c.url = "ftp://nope";
  CHECK_STATUS(store_open(&c, &s, &err), VF_ECONFIG);
  c.url = NULL;
  CHECK_STATUS(store_open(&c, &s, &err), VF_ECONFIG);
}

VF_TEST(search_query_batch) {
  store_vector_spec spec[2] = {{"a", CORPUS_VEC_DENSE, CORPUS_COSINE, 2},
                               {"b", CORPUS_VEC_DENSE, CORPUS_EUCLID, 2}};
  static const canned_resp r[] = {
      {200, NULL,
       "{\"result\":[{\"points\":[{\"id\":\"0123abcd-0000-1111-2222-333344445555\",\"version\":1,"
       "\"score\":0.5},{\"id\":9,\"version\":1,\"score\":0.5},{\"id\":3,\"version\":1,\"score\":"
       "0.25}]},{\"points\":[]}],\"status\":\"ok\"}",
       0},
      {200, NULL,
       "{\"result\":[{\"points\":[{\"id\":1,\"version\":1,\"score\":1.5}]}],\"status\":\"ok\"}",
       0}};
  canned_server srv;
  CHECK(canned_start(&srv, r, 2, vf_test_tmpdir()) == 0);
  store_config c = {0};
  c.type = "qdrant";
  c.url = srv.url;
  c.collection_name = "s";
  c.vectors = spec;
  c.nvectors = 2;
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  store_qdrant_search_opts so = {128, false, 1, 2.0};
  CHECK_OK(store_qdrant_set_search(s, &so, &err));
  float qv[4] = {0.5f, -1.0f, 2.0f, 0.0f};
  store_results res;
  CHECK_STATUS(store_search(s, NULL, qv, 2, 2, 3, &res, &err), VF_EUSAGE); /* two dense */
  CHECK_STATUS(store_search(s, "a", qv, 2, 3, 3, &res, &err), VF_EUSAGE);  /* dimension */
  CHECK_OK(store_search(s, "a", qv, 2, 2, 3, &res, &err));
  CHECK_EQ_INT(res.counts[0], 3);
  CHECK_EQ_INT(res.counts[1], 0);
  /* equal scores: integer ids before UUIDs */
  CHECK(!res.hits[0].id.is_uuid && res.hits[0].id.num == 9);
  CHECK(res.hits[1].id.is_uuid);
  CHECK(res.hits[2].id.num == 3 && res.hits[2].score == 0.25f);
  store_results_free(&res);
  CHECK_OK(store_search(s, "b", qv, 1, 2, 1, &res, &err));
  CHECK(res.counts[0] == 1 && res.hits[0].score == -1.5f); /* euclid: negated distance */
  store_results_free(&res);
  size_t ll;
  char *log = canned_log(&srv, &ll);
  CHECK(strstr(log, "REQ POST /collections/s/points/query/batch") != NULL);
  CHECK(strstr(log, "{\"searches\":[{\"query\":[0.5,-1],\"using\":\"a\",\"limit\":3,"
                    "\"with_payload\":false,\"params\":{\"exact\":false,\"hnsw_ef\":128,"
                    "\"quantization\":{\"rescore\":true,\"oversampling\":2}}},{\"query\":[2,0]") !=
        NULL);
  free(log);
  store_close(s);
  canned_stop(&srv);
}
