/* The Qdrant gRPC transport's pieces without a server (src/store/qdrant_pb.c, qdrant_grpc.c):
 * the table-driven codec (REST JSON -> protobuf -> REST JSON, the REST/gRPC shape differences,
 * errors naming the key path), the points message (decoded back through the generated tables:
 * ids, packed dense / sparse / multi vectors, payload Values), the streamed payload against the
 * DOM encoder byte for byte, malformed answers, and the gRPC endpoint derived from the url.
 * Against a server: tests/store/test_qdrant_grpc_e2e.sh (the stand-in, gRPC side). */
#include <math.h>
#include <stdlib.h>

#include "store/qdrant_internal.h"
#include "store/qdrant_pb.h"
#include "store/qdrant_pb_schema.h"
#include "vf_test.h"
#include "vforge/io.h"
#include "vforge/store.h"

/* JSON text -> message bytes -> REST JSON, parsed */
static vf_status roundtrip(int msg, const char *json, vf_json_val *out, vf_buf *wire, vf_error *err) {
  vf_json_val in;
  vf_status st = vf_json_parse(json, strlen(json), "test", &in, err);
  if (st != VF_OK) return st;
  vf_buf_reset(wire);
  st = qpb_encode_json(msg, &in, "t", wire, err);
  vf_json_free(&in);
  if (st != VF_OK) return st;
  vf_buf dec;
  vf_buf_init(&dec, 0);
  st = qpb_decode_json(msg, wire->data, wire->len, "test", &dec, err);
  if (st == VF_OK) st = vf_json_parse((const char *)dec.data, dec.len, "decoded", out, err);
  vf_buf_free(&dec);
  return st;
}

static double num_at(const vf_json_val *v, const char *path) {
  const vf_json_val *x = vf_json_path(v, path);
  return x && x->t == VF_JSON_NUM ? x->num : NAN;
}
static const char *str_at(const vf_json_val *v, const char *path) {
  const vf_json_val *x = vf_json_path(v, path);
  return x && x->t == VF_JSON_STR ? x->str : "(none)";
}

VF_TEST(create_collection_rest_json_roundtrips) {
  vf_buf w;
  vf_buf_init(&w, 0);
  vf_error err;
  vf_json_val r;
  const char *create =
      "{\"vectors\":{\"dense\":{\"size\":768,\"distance\":\"Cosine\",\"datatype\":\"float16\","
      "\"on_disk\":true,\"hnsw_config\":{\"m\":0,\"ef_construct\":200},"
      "\"quantization_config\":{\"scalar\":{\"type\":\"int8\",\"quantile\":0.99,\"always_ram\":true}}},"
      "\"colbert\":{\"size\":128,\"distance\":\"Dot\",\"multivector_config\":{\"comparator\":\"max_sim\"},"
      "\"quantization_config\":{\"binary\":{\"always_ram\":false,\"encoding\":\"one_and_half_bits\"}}}},"
      "\"sparse_vectors\":{\"sp\":{\"modifier\":\"idf\",\"index\":{\"on_disk\":true,\"datatype\":\"uint8\","
      "\"full_scan_threshold\":5000}}},"
      "\"hnsw_config\":{\"m\":16},\"optimizers_config\":{\"indexing_threshold\":0,"
      "\"max_optimization_threads\":\"auto\",\"deleted_threshold\":0.25},"
      "\"quantization_config\":{\"product\":{\"compression\":\"x32\"}},\"shard_number\":3,"
      "\"replication_factor\":2,\"write_consistency_factor\":1,\"on_disk_payload\":false,"
      "\"metadata\":{\"who\":\"vforge\",\"n\":12345678901234,\"f\":0.5,\"l\":[1,\"a\",null],"
      "\"o\":{\"b\":true}}}";
  CHECK_OK(roundtrip(QPB_M_qdrant_CreateCollection, create, &r, &w, &err));
  /* REST names restored: vectors / sparse_vectors; enums in REST spelling */
  CHECK(num_at(&r, "vectors.dense.size") == 768);
  CHECK_EQ_STR(str_at(&r, "vectors.dense.distance"), "Cosine");
  CHECK_EQ_STR(str_at(&r, "vectors.dense.datatype"), "float16");
  CHECK(vf_json_path(&r, "vectors.dense.on_disk") && vf_json_path(&r, "vectors.dense.on_disk")->b);
  CHECK(num_at(&r, "vectors.dense.hnsw_config.m") == 0); /* explicit 0 kept (proto3 optional) */
  CHECK(num_at(&r, "vectors.dense.hnsw_config.ef_construct") == 200);
  CHECK_EQ_STR(str_at(&r, "vectors.dense.quantization_config.scalar.type"), "int8");
  CHECK(fabs(num_at(&r, "vectors.dense.quantization_config.scalar.quantile") - 0.99) < 1e-6);
  CHECK_EQ_STR(str_at(&r, "vectors.colbert.multivector_config.comparator"), "max_sim");
  CHECK_EQ_STR(str_at(&r, "vectors.colbert.quantization_config.binary.encoding"),
               "one_and_half_bits");
  CHECK_EQ_STR(str_at(&r, "sparse_vectors.sp.modifier"), "idf");
  CHECK_EQ_STR(str_at(&r, "sparse_vectors.sp.index.datatype"), "uint8");
  CHECK(num_at(&r, "sparse_vectors.sp.index.full_scan_threshold") == 5000);
  CHECK(num_at(&r, "optimizers_config.indexing_threshold") == 0);
  CHECK_EQ_STR(str_at(&r, "optimizers_config.max_optimization_threads"), "auto");
  CHECK(num_at(&r, "optimizers_config.deleted_threshold") == 0.25);
  CHECK_EQ_STR(str_at(&r, "quantization_config.product.compression"), "x32");
  CHECK(num_at(&r, "shard_number") == 3 && num_at(&r, "replication_factor") == 2);
  CHECK(vf_json_path(&r, "on_disk_payload") && !vf_json_path(&r, "on_disk_payload")->b);
  CHECK(num_at(&r, "metadata.n") == 12345678901234.0 && num_at(&r, "metadata.f") == 0.5);
  CHECK_EQ_STR(str_at(&r, "metadata.who"), "vforge");
  const vf_json_val *l = vf_json_path(&r, "metadata.l");
  CHECK(l && l->t == VF_JSON_ARR && l->n == 3 && l->items[2].t == VF_JSON_NULL);
  CHECK(vf_json_path(&r, "metadata.o.b") && vf_json_path(&r, "metadata.o.b")->b);
  vf_json_free(&r);
  /* the single unnamed vector form; max_optimization_threads as a number */
  CHECK_OK(roundtrip(QPB_M_qdrant_CreateCollection,
                     "{\"vectors\":{\"size\":4,\"distance\":\"Euclid\"},\"optimizers_config\":"
                     "{\"max_optimization_threads\":6}}",
                     &r, &w, &err));
  CHECK(num_at(&r, "vectors.size") == 4);
  CHECK_EQ_STR(str_at(&r, "vectors.distance"), "Euclid");
  CHECK(num_at(&r, "optimizers_config.max_optimization_threads") == 6);
  vf_json_free(&r);
  /* UpdateCollection: per-vector diffs, quantization "Disabled" */
  CHECK_OK(roundtrip(QPB_M_qdrant_UpdateCollection,
                     "{\"vectors\":{\"dense\":{\"hnsw_config\":{\"m\":0}}},\"quantization_config\":"
                     "\"Disabled\",\"metadata\":{\"vforge_defer\":\"hnsw_m\"}}",
                     &r, &w, &err));
  CHECK(num_at(&r, "vectors.dense.hnsw_config.m") == 0);
  CHECK(vf_json_path(&r, "quantization_config.disabled") != NULL);
  CHECK_EQ_STR(str_at(&r, "metadata.vforge_defer"), "hnsw_m");
  vf_json_free(&r);
  vf_buf_free(&w);
}

VF_TEST(encoder_errors_name_the_key_path) {
  vf_buf w;
  vf_buf_init(&w, 0);
  vf_error err;
  vf_json_val r;
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CreateCollection, "{\"hnsw_config\":{\"mm\":3}}", &r, &w, &err),
               VF_EUSAGE);
  CHECK(strstr(err.msg, "t.hnsw_config.mm: not a field of qdrant.HnswConfigDiff") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CreateCollection,
                         "{\"vectors\":{\"v\":{\"size\":4,\"distance\":\"Cosine\",\"datatype\":\"int4\"}}}",
                         &r, &w, &err),
               VF_EUSAGE);
  CHECK(strstr(err.msg, "t.vectors.v.datatype: 'int4' is not a value of qdrant.Datatype") != NULL);
  CHECK(strstr(err.msg, "Float16") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CreateCollection, "{\"shard_number\":\"three\"}", &r, &w, &err),
               VF_EUSAGE);
  CHECK(strstr(err.msg, "t.shard_number: expected an unsigned integer") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CreateCollection, "{\"shard_number\":-1}", &r, &w, &err),
               VF_EUSAGE);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CreateCollection, "{\"shard_number\":5000000000}", &r, &w, &err),
               VF_EUSAGE);
  CHECK(strstr(err.msg, "32-bit") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CountPoints, "{\"exact\":1}", &r, &w, &err), VF_EUSAGE);
  vf_buf_free(&w);
}

/* ------------------------------------------------------------ points */

#include "qdrant_fixture.h"

static const char PAY0[] = "{\"t\":\"a\\\"b\\u00e9\\ud83d\\ude00\",\"n\":1,\"big\":9223372036854775807,"
                           "\"neg\":-5,\"f\":2.5,\"e\":1e3,\"u\":18446744073709551615,"
                           "\"o\":{\"x\":[1,{\"y\":null}],\"z\":false}}";
static const char PAY2[] = " { \"x\" : [ ] , \"s\":\"\" } ";

/* the shared batch with sharper values: -0.0, a denormal-adjacent float, thirds, richer payloads
 * and file rows */
static void pfix_init(fixture *f, uint64_t rows[3]) {
  fixture_init(f);
  f->dense[1] = -0.0f;
  f->dense[2] = 1.17549435e-38f;
  for (int i = 0; i < 6; i++)
    f->multi[i] = (float)i / 3.0f;
  vf_buf_reset(&f->b.payload);
  vf_buf_append(&f->b.payload, PAY0, strlen(PAY0), NULL);
  vf_buf_append(&f->b.payload, PAY2, strlen(PAY2), NULL);
  int64_t po[4] = {0, (int64_t)strlen(PAY0), (int64_t)strlen(PAY0),
                   (int64_t)(strlen(PAY0) + strlen(PAY2))};
  memcpy(f->pay_off, po, sizeof po);
  for (int i = 0; i < 3; i++)
    rows[i] = 100 + (uint64_t)i;
  f->b.file_rows = rows;
}

static bool f32_at(const vf_json_val *arr, size_t i, float want) {
  if (!arr || arr->t != VF_JSON_ARR || i >= arr->n || arr->items[i].t != VF_JSON_NUM) return false;
  float got = (float)arr->items[i].num;
  return memcmp(&got, &want, 4) == 0; /* bit for bit (-0.0, denormals) */
}

VF_TEST(points_message_decodes_through_the_tables) {
  fixture f;
  uint64_t rows[3];
  pfix_init(&f, rows);
  store_config c = {0};
  c.type = "qdrant";
  c.url = "http://127.0.0.1:1";
  c.collection_name = "c";
  c.vectors = f.spec;
  c.nvectors = 3;
  c.prefer_grpc = true;
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  int map[3];
  CHECK_OK(store_check_batch(s, &f.b, map, &err));
  vf_buf m, scratch, json;
  vf_buf_init(&m, 0);
  vf_buf_init(&scratch, 0);
  vf_buf_init(&json, 0);
  CHECK_OK(qpb_add_bytes(&m, 1, "c", 1, &err));
  CHECK_OK(qdg_points_pb(s, &f.b, map, 0, 3, &scratch, &m, &err));
  CHECK_OK(qpb_decode_json(QPB_M_qdrant_UpsertPoints, m.data, m.len, "upsert", &json, &err));
  vf_json_val r;
  CHECK_OK(vf_json_parse((const char *)json.data, json.len, "decoded", &r, &err));
  CHECK_EQ_STR(str_at(&r, "collection_name"), "c");
  const vf_json_val *pts = vf_json_get(&r, "points");
  CHECK(pts && pts->t == VF_JSON_ARR && pts->n == 3);
  if (pts && pts->n == 3) {
    const vf_json_val *p0 = &pts->items[0], *p1 = &pts->items[1], *p2 = &pts->items[2];
    CHECK(num_at(p0, "id") == 7);
    CHECK_EQ_STR(str_at(p1, "id"), "0123abcd-0000-1111-2222-333344445555");
    const vf_json_val *id2 = vf_json_get(p2, "id");
    CHECK(id2 && id2->raw_len == 20 && memcmp(id2->raw, "18446744073709551615", 20) == 0);
    const vf_json_val *d0 = vf_json_path(p0, "vectors.vectors.vectors.dense.dense.data");
    for (int i = 0; i < 4; i++)
      CHECK(f32_at(d0, (size_t)i, f.dense[i]));
    const vf_json_val *sp = vf_json_path(p0, "vectors.vectors.vectors.sparse.sparse");
    CHECK(f32_at(vf_json_get(sp, "values"), 0, 0.5f) && f32_at(vf_json_get(sp, "values"), 1, -2.0f));
    const vf_json_val *ix = vf_json_get(sp, "indices");
    CHECK(ix && ix->n == 2 && ix->items[0].num == 3 && ix->items[1].num == 4000000000.0);
    const vf_json_val *mv = vf_json_path(p0, "vectors.vectors.vectors.colbert.multi_dense.vectors");
    CHECK(mv && mv->n == 1 && f32_at(vf_json_path(&mv->items[0], "data"), 1, f.multi[1]));
    /* row 1: an empty sparse vector is sent (empty), two multivectors */
    CHECK(vf_json_path(p1, "vectors.vectors.vectors.sparse.sparse") != NULL);
    mv = vf_json_path(p1, "vectors.vectors.vectors.colbert.multi_dense.vectors");
    CHECK(mv && mv->n == 2 && f32_at(vf_json_path(&mv->items[1], "data"), 1, f.multi[5]));
    CHECK(vf_json_path(p1, "payload") == NULL || vf_json_path(p1, "payload")->n == 0);
    /* row 2: null dense vector and no multivector are absent */
    CHECK(vf_json_path(p2, "vectors.vectors.vectors.dense") == NULL);
    CHECK(vf_json_path(p2, "vectors.vectors.vectors.colbert") == NULL);
    /* payload values: strings decoded, int64 exact, uint64 beyond int64 as a double */
    CHECK_EQ_STR(str_at(p0, "payload.t"), "a\"b\xc3\xa9\xf0\x9f\x98\x80");
    const vf_json_val *big = vf_json_path(p0, "payload.big");
    CHECK(big && big->raw_len == 19 && memcmp(big->raw, "9223372036854775807", 19) == 0);
    CHECK(num_at(p0, "payload.neg") == -5 && num_at(p0, "payload.f") == 2.5);
    CHECK(num_at(p0, "payload.e") == 1000 && num_at(p0, "payload.u") == 18446744073709551615.0);
    CHECK(vf_json_path(p0, "payload.o.x") && vf_json_path(p0, "payload.o.x")->n == 2);
    CHECK(vf_json_path(p0, "payload.o.z") && vf_json_path(p0, "payload.o.z")->t == VF_JSON_BOOL);
    CHECK(vf_json_path(p2, "payload.x") && vf_json_path(p2, "payload.x")->t == VF_JSON_ARR);
    CHECK_EQ_STR(str_at(p2, "payload.s"), "");
  }
  vf_json_free(&r);
  /* a NaN names the row and vector */
  f.dense[5] = NAN;
  vf_buf_reset(&m);
  CHECK_STATUS(qdg_points_pb(s, &f.b, map, 0, 3, &scratch, &m, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 1 (file row 101): vector 'dense' value 1 is NaN") != NULL);
  store_close(s);
  vf_buf_free(&m);
  vf_buf_free(&scratch);
  vf_buf_free(&json);
  vf_buf_free(&f.b.payload);
}

VF_TEST(streamed_payload_matches_the_dom_encoder) {
  static const char *objs[] = {
      "{}", " {\"a\":1} ", "{\"a\":-0,\"b\":0.0,\"c\":-9223372036854775808,\"d\":9223372036854775808}",
      "{\"s\":\"\\u0000\\n\\t\\\\\\/\",\"l\":[[],[[]],{}],\"n\":null,\"t\":true}",
      "{\"k\\u00e9y\":{\"deep\":{\"er\":[1.5e-300,2E+10,\"x\"]}}}"};
  vf_error err;
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
    vf_buf a, b;
    vf_buf_init(&a, 0);
    vf_buf_init(&b, 0);
    CHECK_OK(qpb_payload_from_json(objs[i], strlen(objs[i]), 3, "p", &a, &err));
    vf_json_val v;
    CHECK_OK(vf_json_parse(objs[i], strlen(objs[i]), "p", &v, &err));
    for (size_t k = 0; k < v.n; k++) { /* map entries by hand: {1: key, 2: Value} */
      size_t m1, m2;
      CHECK_OK(qpb_begin(&b, 3, &m1, &err));
      CHECK_OK(qpb_add_bytes(&b, 1, v.keys[k], strlen(v.keys[k]), &err));
      CHECK_OK(qpb_begin(&b, 2, &m2, &err));
      CHECK_OK(qpb_encode_value(&v.items[k], "p", &b, &err));
      CHECK_OK(qpb_end(&b, m2, &err));
      CHECK_OK(qpb_end(&b, m1, &err));
    }
    vf_json_free(&v);
    if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len) != 0))
      vf_test_fail(__FILE__, __LINE__, "payload %zu: streamed %zu bytes, DOM %zu bytes differ", i,
                   a.len, b.len);
    vf_buf_free(&a);
    vf_buf_free(&b);
  }
  static const char *bad[] = {"[]", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\":\"\n\"}", "{\"a\":01}",
                              "{\"a\":1} x", "{\"a\":\"\\ud800\"}", "{\"a\":nul}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vf_buf a;
    vf_buf_init(&a, 0);
    if (qpb_payload_from_json(bad[i], strlen(bad[i]), 3, "row 9: the payload", &a, &err) !=
        VF_ECORRUPT)
      vf_test_fail(__FILE__, __LINE__, "accepted %s", bad[i]);
    else
      CHECK(strstr(err.msg, "row 9: the payload: invalid JSON at byte") != NULL);
    vf_buf_free(&a);
  }
}

VF_TEST(decoder_refuses_malformed_answers) {
  vf_buf w, out;
  vf_buf_init(&w, 0);
  vf_buf_init(&out, 0);
  vf_error err;
  vf_json_val r;
  CHECK_OK(roundtrip(QPB_M_qdrant_CreateCollection,
                     "{\"vectors\":{\"a\":{\"size\":4,\"distance\":\"Dot\"}},\"metadata\":{\"k\":[1,2]}}",
                     &r, &w, &err));
  vf_json_free(&r);
  /* every truncation is an error or a shorter valid message, never a crash */
  for (size_t n = 0; n < w.len; n++) {
    vf_buf_reset(&out);
    vf_status st = qpb_decode_json(QPB_M_qdrant_CreateCollection, w.data, n, "cut", &out, &err);
    CHECK(st == VF_OK || st == VF_ECORRUPT);
  }
  /* random corruption */
  uint64_t x = 0x2545F4914F6CDD1DULL;
  for (int it = 0; it < 20000; it++) {
    vf_buf c;
    vf_buf_init(&c, 0);
    vf_buf_append(&c, w.data, w.len, NULL);
    for (int k = 0; k < 3; k++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      c.data[x % c.len] = (uint8_t)(x >> 32);
    }
    vf_buf_reset(&out);
    vf_status st = qpb_decode_json(QPB_M_qdrant_CreateCollection, c.data, c.len, "bad", &out, &err);
    CHECK(st == VF_OK || st == VF_ECORRUPT);
    if (st == VF_OK) { /* whatever decodes is valid JSON */
      CHECK_OK(vf_json_parse((const char *)out.data, out.len, "out", &r, &err));
      vf_json_free(&r);
    }
    vf_buf_free(&c);
  }
  static const uint8_t group[] = {0x0b, 0x00};       /* field 1, wire type 3 (group) */
  static const uint8_t overrun[] = {0x0a, 0x05, 'a'}; /* a length past the end */
  static const uint8_t wrongwt[] = {0x08, 0x01};      /* collection_name as a varint */
  CHECK_STATUS(qpb_decode_json(QPB_M_qdrant_CreateCollection, group, 2, "g", &out, &err), VF_ECORRUPT);
  CHECK_STATUS(qpb_decode_json(QPB_M_qdrant_CreateCollection, overrun, 3, "o", &out, &err),
               VF_ECORRUPT);
  CHECK(strstr(err.msg, "o: malformed qdrant.CreateCollection at byte") != NULL);
  CHECK_STATUS(qpb_decode_json(QPB_M_qdrant_CreateCollection, wrongwt, 2, "w", &out, &err),
               VF_ECORRUPT);
  /* unknown fields are skipped (a newer server) */
  static const uint8_t unknown[] = {0xf8, 0x3f, 0x01, 0x0a, 0x01, 'x'}; /* field 1023, then name */
  vf_buf_reset(&out);
  CHECK_OK(qpb_decode_json(QPB_M_qdrant_CreateCollection, unknown, sizeof unknown, "u", &out, &err));
  CHECK_OK(vf_json_parse((const char *)out.data, out.len, "u", &r, &err));
  CHECK_EQ_STR(str_at(&r, "collection_name"), "x");
  vf_json_free(&r);
  vf_buf_free(&w);
  vf_buf_free(&out);
}

VF_TEST(collection_info_renders_in_rest_shapes) {
  vf_buf w;
  vf_buf_init(&w, 0);
  vf_error err;
  vf_json_val r;
  /* what a server sends: status enum, optimizer status, the wrapped vectors config, a
   * comparator MaxSim (0: not on the wire, filled in as the default) */
  CHECK_OK(roundtrip(QPB_M_qdrant_GetCollectionInfoResponse,
                     "{\"result\":{\"status\":\"grey\",\"optimizer_status\":{\"ok\":false,\"error\":\"disk\"},"
                     "\"points_count\":5,\"config\":{\"params\":{\"vectors\":{\"mv\":{\"size\":2,"
                     "\"distance\":\"Manhattan\",\"multivector_config\":{}}},\"sparse_vectors\":{\"s\":{}}},"
                     "\"optimizer_config\":{\"indexing_threshold\":20000},\"metadata\":{\"vforge_hnsw_m\":16}},"
                     "\"payload_schema\":{\"t\":{\"data_type\":\"datetime\",\"points\":3}}},\"time\":0.5}",
                     &r, &w, &err));
  CHECK_EQ_STR(str_at(&r, "result.status"), "grey");
  CHECK_EQ_STR(str_at(&r, "result.optimizer_status.error"), "disk");
  CHECK_EQ_STR(str_at(&r, "result.config.params.vectors.mv.distance"), "Manhattan");
  CHECK_EQ_STR(str_at(&r, "result.config.params.vectors.mv.multivector_config.comparator"), "max_sim");
  CHECK(vf_json_path(&r, "result.config.params.sparse_vectors.s") != NULL);
  CHECK(num_at(&r, "result.config.optimizer_config.indexing_threshold") == 20000);
  CHECK(num_at(&r, "result.config.metadata.vforge_hnsw_m") == 16);
  CHECK_EQ_STR(str_at(&r, "result.payload_schema.t.data_type"), "datetime");
  CHECK(num_at(&r, "result.points_count") == 5);
  vf_json_free(&r);
  CHECK_OK(roundtrip(QPB_M_qdrant_OptimizerStatus, "{\"ok\":true}", &r, &w, &err));
  CHECK(r.t == VF_JSON_STR && strcmp(r.str, "ok") == 0);
  vf_json_free(&r);
  vf_buf_free(&w);
}

VF_TEST(grpc_endpoint_from_the_url) {
  char out[256];
  vf_error err;
  CHECK_OK(qdg_url_for("http://qdrant.local:6333", 6334, out, sizeof out, &err));
  CHECK_EQ_STR(out, "http://qdrant.local:6334");
  CHECK_OK(qdg_url_for("https://h.example/some/prefix/", 443, out, sizeof out, &err));
  CHECK_EQ_STR(out, "https://h.example:443");
  CHECK_OK(qdg_url_for("http://[::1]:6333", 7000, out, sizeof out, &err));
  CHECK_EQ_STR(out, "http://[::1]:7000");
  CHECK_OK(qdg_url_for("http://user:secret@h:6333", 6334, out, sizeof out, &err));
  CHECK_EQ_STR(out, "http://h:6334");
  CHECK_STATUS(qdg_url_for("http://h:6333", 0, out, sizeof out, &err), VF_ECONFIG);
  CHECK_EQ_STR(io_grpc_status_name(14), "UNAVAILABLE");
  CHECK_EQ_STR(io_grpc_status_name(8), "RESOURCE_EXHAUSTED");
  CHECK_EQ_STR(io_grpc_status_name(99), "UNKNOWN");
}

VF_TEST(schema_tables_are_consistent) {
  /* every message and enum reference points inside the tables, fields ascend, and the RPCs
   * name their messages */
  for (int m = 0; m < QPB_NMSGS; m++) {
    const qpb_msg *msg = qpb_msg_at(m);
    for (uint16_t i = 0; i < msg->nfields; i++) {
      const qpb_field *f = &msg->fields[i];
      if (i) CHECK(f->number > msg->fields[i - 1].number);
      if (f->type == QPB_MESSAGE && f->label != QPB_MAP) CHECK(f->ref >= 0 && f->ref < QPB_NMSGS);
      if (f->type == QPB_ENUM) CHECK(f->ref >= 0 && f->ref < QPB_NENUMS);
      if (f->label == QPB_MAP && f->map_val == QPB_MESSAGE) CHECK(f->map_ref >= 0 && f->map_ref < QPB_NMSGS);
      if (f->oneof >= 0) CHECK(f->oneof < msg->noneofs);
    }
  }
  CHECK_EQ_STR(QPB_RPCS[QPB_RPC_Points_Upsert].path, "/qdrant.Points/Upsert");
  CHECK(qpb_msg_index("qdrant.UpsertPoints") == QPB_RPCS[QPB_RPC_Points_Upsert].req);
  CHECK(qpb_field_by_name(QPB_M_qdrant_PointStruct, "vectors")->number == 4);
  CHECK(qpb_field_by_name(QPB_M_qdrant_Vector, "dense")->number == 101);
  CHECK(qpb_field_by_name(QPB_M_qdrant_QueryPoints, "params")->number == 6);
  CHECK(qpb_field_by_number(QPB_M_qdrant_ScoredPoint, 3) != NULL &&
        strcmp(qpb_field_by_number(QPB_M_qdrant_ScoredPoint, 3)->name, "score") == 0);
}

VF_TEST(rest_filter_becomes_the_proto_filter) {
  vf_buf w;
  vf_buf_init(&w, 0);
  vf_error err;
  vf_json_val r;
  const char *count =
      "{\"exact\":true,\"filter\":{\"must\":[{\"key\":\"lang\",\"match\":{\"value\":\"en\"}},"
      "{\"key\":\"n\",\"match\":{\"value\":-3}},{\"key\":\"ok\",\"match\":{\"value\":true}},"
      "{\"key\":\"tags\",\"match\":{\"any\":[\"a\",\"b\"]}},{\"key\":\"ids\",\"match\":{\"except\":[1,2,300]}},"
      "{\"key\":\"body\",\"match\":{\"text\":\"hello world\"}},"
      "{\"key\":\"score\",\"range\":{\"gte\":0.5,\"lt\":2}},"
      "{\"key\":\"when\",\"range\":{\"gte\":\"2024-05-01T10:00:00.25Z\",\"lt\":\"2024-05-02 00:00:00+02:00\"}},"
      "{\"key\":\"loc\",\"geo_radius\":{\"center\":{\"lon\":13.4,\"lat\":52.5},\"radius\":1000}},"
      "{\"key\":\"c\",\"values_count\":{\"gt\":1}},{\"is_empty\":{\"key\":\"e\"}},{\"is_null\":{\"key\":\"z\"}},"
      "{\"has_id\":[7,\"0123abcd-0000-1111-2222-333344445555\"]},{\"has_vector\":\"dense\"},"
      "{\"nested\":{\"key\":\"items\",\"filter\":{\"must\":{\"key\":\"q\",\"match\":{\"value\":1}}}}},"
      "{\"should\":[{\"key\":\"a\",\"match\":{\"value\":\"x\"}}]}],"
      "\"must_not\":{\"key\":\"spam\",\"match\":{\"value\":true}},"
      "\"min_should\":{\"conditions\":[{\"key\":\"k\",\"match\":{\"text_any\":\"a b\"}}],\"min_count\":1}}}";
  CHECK_OK(roundtrip(QPB_M_qdrant_CountPoints, count, &r, &w, &err));
  const vf_json_val *m = vf_json_path(&r, "filter.must");
  CHECK(m && m->t == VF_JSON_ARR && m->n == 16);
  if (m && m->n == 16) {
    const vf_json_val *c = m->items;
    CHECK_EQ_STR(str_at(&c[0], "field.key"), "lang");
    CHECK_EQ_STR(str_at(&c[0], "field.match.keyword"), "en");
    CHECK(num_at(&c[1], "field.match.integer") == -3);
    CHECK(vf_json_path(&c[2], "field.match.boolean") && vf_json_path(&c[2], "field.match.boolean")->b);
    const vf_json_val *kw = vf_json_path(&c[3], "field.match.keywords.strings");
    CHECK(kw && kw->n == 2 && strcmp(kw->items[1].str, "b") == 0);
    const vf_json_val *ex = vf_json_path(&c[4], "field.match.except_integers.integers");
    CHECK(ex && ex->n == 3 && ex->items[2].num == 300);
    CHECK_EQ_STR(str_at(&c[5], "field.match.text"), "hello world");
    CHECK(num_at(&c[6], "field.range.gte") == 0.5 && num_at(&c[6], "field.range.lt") == 2);
    CHECK(num_at(&c[7], "field.datetime_range.gte.seconds") == 1714557600.0 &&
          num_at(&c[7], "field.datetime_range.gte.nanos") == 250000000.0);
    CHECK(num_at(&c[7], "field.datetime_range.lt.seconds") == 1714600800.0); /* 22:00 UTC */
    CHECK(num_at(&c[8], "field.geo_radius.center.lat") == 52.5 &&
          num_at(&c[8], "field.geo_radius.radius") == 1000);
    CHECK(num_at(&c[9], "field.values_count.gt") == 1);
    CHECK_EQ_STR(str_at(&c[10], "is_empty.key"), "e");
    CHECK_EQ_STR(str_at(&c[11], "is_null.key"), "z");
    const vf_json_val *ids = vf_json_path(&c[12], "has_id.has_id");
    CHECK(ids && ids->n == 2 && ids->items[0].num == 7 &&
          strcmp(ids->items[1].str, "0123abcd-0000-1111-2222-333344445555") == 0);
    CHECK_EQ_STR(str_at(&c[13], "has_vector.has_vector"), "dense");
    CHECK_EQ_STR(str_at(&c[14], "nested.key"), "items");
    const vf_json_val *nm = vf_json_path(&c[14], "nested.filter.must");
    CHECK(nm && nm->n == 1 && num_at(&nm->items[0], "field.match.integer") == 1);
    const vf_json_val *sh = vf_json_path(&c[15], "filter.should");
    CHECK(sh && sh->n == 1 && strcmp(str_at(&sh->items[0], "field.match.keyword"), "x") == 0);
  }
  const vf_json_val *mn = vf_json_path(&r, "filter.must_not");
  CHECK(mn && mn->n == 1 && strcmp(str_at(&mn->items[0], "field.key"), "spam") == 0);
  CHECK(num_at(&r, "filter.min_should.min_count") == 1);
  CHECK(vf_json_path(&r, "exact") && vf_json_path(&r, "exact")->b);
  vf_json_free(&r);
  /* refused, naming the path */
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CountPoints, "{\"filter\":{\"must\":[{\"key\":\"a\",\"match\":{\"value\":1.5}}]}}",
                         &r, &w, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "t.filter.must.0.match") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CountPoints, "{\"filter\":{\"must\":[{\"nope\":1}]}}", &r, &w, &err),
               VF_EUSAGE);
  CHECK(strstr(err.msg, "not a filter condition") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CountPoints, "{\"filter\":{\"must\":{\"key\":\"t\",\"range\":{\"gt\":\"yesterday\"}}}}",
                         &r, &w, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "RFC 3339") != NULL);
  CHECK_STATUS(roundtrip(QPB_M_qdrant_CountPoints, "{\"filter\":{\"always\":[]}}", &r, &w, &err), VF_EUSAGE);
  vf_buf_free(&w);
}
