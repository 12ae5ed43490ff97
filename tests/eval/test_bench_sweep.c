/* Unit tests of bench sweeps (include/vforge/bench.h, issue 19): the grid (--sweep parsing, value
 * checks, point order, options per point), bench_sweep() over a real `local` store with a flat
 * IVF index (recall grows with nprobe and is exact when every list is probed; exact ground
 * truth computed here in double), --warmup / per-query results, the knob-vs-store checks made
 * before anything runs, nprobe refused without an index, cancellation, and the JSON of points
 * and --results lines (config, machine, version, no URL userinfo).  The CLI end to end is
 * tests/eval/test_bench_sweep.sh. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vf_test.h"
#include "vforge/bench.h"

VF_TEST(grid_parse_and_order) {
  bench_grid g;
  memset(&g, 0, sizeof g);
  vf_error err;
  CHECK_EQ_INT(bench_grid_size(&g), 1);
  CHECK_OK(bench_grid_add(&g, "nprobe=1, 2", &err));
  CHECK_OK(bench_grid_add_list(&g, BENCH_KNOB_CONCURRENCY, "1,3", &err));
  CHECK_EQ_INT(bench_grid_size(&g), 4);
  CHECK(bench_grid_has(&g, BENCH_KNOB_NPROBE) && !bench_grid_has(&g, BENCH_KNOB_RPS));
  bench_options base;
  memset(&base, 0, sizeof base);
  base.concurrency = 1;
  base.k = 10;
  const int want[4][2] = {{1, 1}, {1, 3}, {2, 1}, {2, 3}}; /* the last axis varies fastest */
  for (size_t i = 0; i < 4; i++) {
    bench_point p;
    bench_grid_point(&g, i, &base, &p);
    CHECK_EQ_INT(p.o.nprobe, want[i][0]);
    CHECK_EQ_INT(p.o.concurrency, want[i][1]);
    CHECK(p.o.qdrant == NULL);
    CHECK(isnan(p.values[BENCH_KNOB_RPS]));
    if (i == 3) {
      char t[64];
      bench_point_params(&p, t, sizeof t);
      CHECK_EQ_STR(t, "nprobe=2 concurrency=3");
    }
  }
  /* errors, each naming what is wrong */
  static const struct {
    const char *spec, *msg;
  } bad[] = {{"nprobe", "expected NAME="},         {"bogus=1", "unknown parameter 'bogus'"},
             {"hnsw-ef=", "empty value"},           {"hnsw-ef=1,,2", "empty value"},
             {"hnsw-ef=0", "1..16777216"},          {"hnsw-ef=1.5", "integer"},
             {"rps=0", "rate"},                     {"oversampling=0.5", "oversampling"},
             {"rescore=yes", "true or false"},      {"exact=true,true", "given twice"},
             {"nprobe=8", "swept twice"},           {"concurrency=2000", "swept twice"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vf_error_clear(&err);
    CHECK_STATUS(bench_grid_add(&g, bad[i].spec, &err), VF_EUSAGE);
    if (!strstr(err.msg, bad[i].msg)) vf_test_fail(__FILE__, __LINE__, "%s: %s", bad[i].spec, err.msg);
  }
  CHECK_EQ_INT(g.naxes, 2); /* nothing half-added */
  bench_grid g1;
  memset(&g1, 0, sizeof g1);
  CHECK_STATUS(bench_grid_add(&g1, "concurrency=2000", &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "1..1024") != NULL);
  /* a grid above BENCH_MAX_POINTS */
  bench_grid big;
  memset(&big, 0, sizeof big);
  char list[512] = "";
  for (int i = 1; i <= 20; i++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i > 1 ? "," : "", i);
  CHECK_OK(bench_grid_add_list(&big, BENCH_KNOB_NPROBE, list, &err));
  CHECK_OK(bench_grid_add_list(&big, BENCH_KNOB_HNSW_EF, list, &err));
  CHECK_STATUS(bench_grid_add_list(&big, BENCH_KNOB_CONCURRENCY, list, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "8000 points") != NULL);
}

VF_TEST(grid_point_qdrant_options) {
  bench_grid g;
  memset(&g, 0, sizeof g);
  vf_error err;
  CHECK_OK(bench_grid_add(&g, "exact=false,true", &err));
  CHECK_OK(bench_grid_add(&g, "oversampling=1.5", &err));
  CHECK_OK(bench_grid_add(&g, "rescore=true,false", &err));
  store_qdrant_search_opts fixed = {64, false, -1, 0};
  bench_options base;
  memset(&base, 0, sizeof base);
  base.qdrant = &fixed;
  bench_point p;
  bench_grid_point(&g, 3, &base, &p); /* exact=true, oversampling 1.5, rescore=false */
  CHECK(p.o.qdrant == &p.qdrant);
  CHECK_EQ_INT(p.qdrant.hnsw_ef, 64); /* the fixed flag stays */
  CHECK(p.qdrant.exact && p.qdrant.oversampling == 1.5 && p.qdrant.rescore == 0);
  CHECK(fixed.exact == false); /* the base is not touched */
  vf_buf b;
  vf_buf_init(&b, 0);
  CHECK_OK(bench_point_json(&p, &b, &err));
  const char *want = "{\"params\":{\"oversampling\":1.5,\"rescore\":false,\"exact\":true},\"k\":";
  if (strncmp((const char *)b.data, want, strlen(want)) != 0)
    vf_test_fail(__FILE__, __LINE__, "point JSON: %.*s", (int)b.len, (const char *)b.data);
  vf_buf_free(&b);
}

/* ---------------------------------------------------------------- a real store */

enum { N = 3000, D = 8, NQ = 40, K = 10, NLIST = 16 };

static float frand(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((*s >> 40) & 0xffffff) / (float)0x1000000;
}

typedef struct fixture {
  float *x, *qv;
  bench_queries q;
  bench_truth t;
  size_t rows[NQ];
  char qid_text[NQ][16];
  char *qids[NQ];
  char hit_text[NQ * K][24];
  char *hits[NQ * K];
  float scores[NQ * K];
  size_t counts[NQ];
  store_vector_spec spec;
} fixture;

/* N uniform points with integer ids 0..N-1 into collection `name` (indexed when min_rows
 * allows), the queries (perturbed points) and their exact euclid top-K (score -L2) */
static void fixture_make(fixture *f, const char *name, const char *params) {
  memset(f, 0, sizeof *f);
  uint64_t s = 42;
  f->x = malloc(sizeof(float) * N * D);
  f->qv = malloc(sizeof(float) * NQ * D);
  for (int i = 0; i < N * D; i++) f->x[i] = frand(&s);
  for (int i = 0; i < NQ * D; i++) f->qv[i] = frand(&s);
  f->spec = (store_vector_spec){"v", CORPUS_VEC_DENSE, CORPUS_EUCLID, D};
  store_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.type = "local";
  cfg.path = vf_test_tmpdir();
  cfg.collection_name = name;
  cfg.vectors = &f->spec;
  cfg.nvectors = 1;
  cfg.params_json = params;
  store *st = NULL;
  vf_error err;
  CHECK_OK(store_open(&cfg, &st, &err));
  CHECK_OK(store_ensure_collection(st, &err));
  corpus_id *ids = calloc(N, sizeof *ids);
  for (int i = 0; i < N; i++) ids[i].num = (uint64_t)i;
  corpus_vec_batch v = {.name = "v", .kind = CORPUS_VEC_DENSE, .distance = CORPUS_EUCLID, .dim = D, .dense = f->x};
  corpus_batch b = {.n = N, .ids = ids, .nvectors = 1, .vectors = &v};
  CHECK_OK(store_upsert(st, &b, &err));
  CHECK_OK(store_flush(st, &err));
  CHECK_OK(store_enable_indexing(st, &err));
  store_close(st);
  free(ids);
  /* exact truth in double */
  for (int qi = 0; qi < NQ; qi++) {
    double best[K];
    int bid[K];
    for (int k = 0; k < K; k++) best[k] = INFINITY, bid[k] = -1;
    for (int i = 0; i < N; i++) {
      double d = 0;
      for (int j = 0; j < D; j++) {
        double e = (double)f->qv[qi * D + j] - f->x[i * D + j];
        d += e * e;
      }
      if (d >= best[K - 1]) continue;
      int k = K - 1;
      while (k > 0 && best[k - 1] > d) best[k] = best[k - 1], bid[k] = bid[k - 1], k--;
      best[k] = d, bid[k] = i;
    }
    snprintf(f->qid_text[qi], sizeof f->qid_text[qi], "q%d", qi);
    f->qids[qi] = f->qid_text[qi];
    for (int k = 0; k < K; k++) {
      snprintf(f->hit_text[qi * K + k], sizeof f->hit_text[0], "%d", bid[k]);
      f->hits[qi * K + k] = f->hit_text[qi * K + k];
      f->scores[qi * K + k] = (float)-sqrt(best[k]);
    }
    f->counts[qi] = K;
    f->rows[qi] = (size_t)qi;
  }
  f->q = (bench_queries){.n = NQ, .dim = D, .vectors = f->qv, .ids = f->qids, .column = "v"};
  f->t = (bench_truth){.n = NQ, .k = K, .qids = f->qids, .hit_ids = f->hits, .scores = f->scores,
                       .counts = f->counts};
}

static void fixture_free(fixture *f) {
  free(f->x);
  free(f->qv);
}

static bench_options local_opts(fixture *f, const char *name) {
  bench_options o;
  memset(&o, 0, sizeof o);
  o.store.type = "local";
  o.store.path = vf_test_tmpdir();
  o.store.collection_name = name;
  o.store.vectors = &f->spec;
  o.store.nvectors = 1;
  o.k = K;
  o.concurrency = 1;
  return o;
}

typedef struct seen {
  size_t calls, last_i, n;
} seen;

static vf_status on_point(void *user, const bench_point *p, size_t i, size_t n, vf_error *err) {
  (void)p;
  (void)err;
  seen *s = user;
  if (i != s->calls) vf_test_fail(__FILE__, __LINE__, "point %zu reported as %zu", s->calls, i);
  s->calls++;
  s->last_i = i;
  s->n = n;
  return VF_OK;
}

VF_TEST(sweep_nprobe_local_index) {
  fixture f;
  fixture_make(&f, "ix", "{\"index\": {\"type\": \"flat\", \"nlist\": 16, \"min_rows\": 100}}");
  bench_options o = local_opts(&f, "ix");
  o.warmup = 7;
  o.per_query = true;
  bench_grid g;
  memset(&g, 0, sizeof g);
  vf_error err;
  CHECK_OK(bench_grid_add(&g, "nprobe=1,4,16", &err));
  bench_point *pts = NULL;
  size_t n = 0;
  seen s = {0, 0, 0};
  CHECK_OK(bench_sweep(&o, &g, &f.q, &f.t, f.rows, on_point, &s, &pts, &n, &err));
  CHECK_EQ_INT(n, 3);
  CHECK_EQ_INT(s.calls, 3);
  CHECK_EQ_INT(s.n, 3);
  if (n == 3) {
    for (size_t i = 0; i < 3; i++) {
      CHECK_EQ_INT(pts[i].rep.queries, NQ);
      CHECK_EQ_INT(pts[i].rep.errors, 0);
      CHECK_EQ_INT(pts[i].rep.warmup, 7);
      CHECK(pts[i].rep.qps > 0 && pts[i].rep.p50_ms > 0);
      double sum = 0;
      for (size_t j = 0; j < NQ; j++) {
        CHECK(pts[i].rep.query_ms[j] > 0);
        sum += pts[i].rep.query_recall[j];
      }
      CHECK(fabs(sum / NQ - pts[i].rep.recall) < 1e-9);
    }
    /* flat IVF: probing more lists can only find more true neighbours; all lists = exact */
    CHECK(pts[0].rep.recall < 1.0);
    CHECK(pts[0].rep.recall <= pts[1].rep.recall && pts[1].rep.recall <= pts[2].rep.recall);
    CHECK(pts[2].rep.recall == 1.0);
    vf_buf b;
    vf_buf_init(&b, 0);
    CHECK_OK(bench_points_json(pts, n, &b, &err));
    const char *want = "{\"points\":[{\"params\":{\"nprobe\":1},\"k\":10,\"queries\":40,";
    if (strncmp((const char *)b.data, want, strlen(want)) != 0)
      vf_test_fail(__FILE__, __LINE__, "points JSON: %.80s", (const char *)b.data);
    CHECK(strstr((const char *)b.data, "{\"params\":{\"nprobe\":16},") != NULL);
    CHECK(b.data[b.len - 1] == '\n');
    vf_buf_reset(&b);
    CHECK_OK(bench_per_query_json(&pts[1], 1, &f.q, &b, &err));
    size_t lines = 0;
    for (size_t i = 0; i < b.len; i++) lines += b.data[i] == '\n';
    CHECK_EQ_INT(lines, NQ);
    want = "{\"point\":1,\"params\":{\"nprobe\":4},\"query_id\":\"q0\",\"latency_ms\":";
    if (strncmp((const char *)b.data, want, strlen(want)) != 0)
      vf_test_fail(__FILE__, __LINE__, "per-query JSON: %.80s", (const char *)b.data);
    vf_buf_free(&b);
  }
  bench_points_free(pts, n);
  /* an exact scan is never reported as an nprobe figure: a collection without an index */
  fixture f2;
  fixture_make(&f2, "small", "{\"index\": {\"min_rows\": 100000}}");
  bench_options o2 = local_opts(&f2, "small");
  bench_grid g2;
  memset(&g2, 0, sizeof g2);
  CHECK_OK(bench_grid_add(&g2, "nprobe=4", &err));
  CHECK_STATUS(bench_sweep(&o2, &g2, &f2.q, &f2.t, f2.rows, NULL, NULL, &pts, &n, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "sweep point 1 of 1 (nprobe=4): ") == err.msg);
  CHECK(strstr(err.msg, "no usable IVF index") != NULL);
  CHECK_EQ_INT(n, 0);
  bench_points_free(pts, n);
  o2.nprobe = 4; /* the plain run too */
  bench_report rep;
  CHECK_STATUS(bench_run(&o2, &f2.q, &f2.t, f2.rows, &rep, &err), VF_EUSAGE);
  o2.nprobe = 0;
  CHECK_OK(bench_run(&o2, &f2.q, &f2.t, f2.rows, &rep, &err)); /* exact scan */
  CHECK(rep.recall == 1.0 && rep.query_ms == NULL);
  fixture_free(&f2);
  fixture_free(&f);
}

VF_TEST(sweep_checks_before_running) {
  fixture f;
  fixture_make(&f, "chk", "{\"index\": {\"type\": \"flat\", \"nlist\": 16, \"min_rows\": 100}}");
  bench_options o = local_opts(&f, "chk");
  vf_error err;
  bench_point *pts = NULL;
  size_t n = 0;
  seen s = {0, 0, 0};
  bench_grid g;
  memset(&g, 0, sizeof g);
  CHECK_OK(bench_grid_add(&g, "concurrency=1,2", &err));
  CHECK_OK(bench_grid_add(&g, "hnsw-ef=16,32", &err));
  CHECK_STATUS(bench_sweep(&o, &g, &f.q, &f.t, f.rows, on_point, &s, &pts, &n, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "hnsw-ef applies to qdrant stores (this store is local)") != NULL);
  CHECK_EQ_INT(s.calls, 0);
  CHECK_EQ_INT(n, 0);
  bench_points_free(pts, 0);
  memset(&g, 0, sizeof g);
  CHECK_OK(bench_grid_add(&g, "nprobe=2", &err));
  o.store.type = "qdrant";
  CHECK_STATUS(bench_sweep(&o, &g, &f.q, &f.t, f.rows, on_point, &s, &pts, &n, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "nprobe applies to the local store") != NULL);
  bench_points_free(pts, 0);
  o.store.type = "local";
  /* cancellation between points */
  vf_cancel_request(0);
  CHECK_STATUS(bench_sweep(&o, &g, &f.q, &f.t, f.rows, on_point, &s, &pts, &n, &err), VF_ECANCELED);
  vf_cancel_reset();
  CHECK_EQ_INT(s.calls, 0);
  bench_points_free(pts, n);
  /* an empty grid is one plain run */
  memset(&g, 0, sizeof g);
  CHECK_OK(bench_sweep(&o, &g, &f.q, &f.t, f.rows, on_point, &s, &pts, &n, &err));
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(s.calls, 1);
  /* the --results line: the point's figures, config, machine, version; no URL userinfo */
  if (n == 1) {
    bench_machine m;
    bench_machine_get(&m);
    CHECK(m.cpus_available >= 1 && m.cpus_online >= 1 && m.threads >= 1);
    CHECK(m.cpu_model[0] && m.blas_core[0] && m.simd[0]);
    pts[0].o.store.url = "http://alice:s3cr3t@example.com:6333/base";
    bench_run_info info = {"my label", "/q.parquet", "https://bob:pw2@host/gt.parquet"};
    vf_buf b;
    vf_buf_init(&b, 0);
    CHECK_OK(bench_results_json(&pts[0], 0, 1, &info, &m, &b, &err));
    CHECK_OK(vf_buf_append(&b, "", 1, &err)); /* a C string for strstr */
    b.len--;
    const char *text = (const char *)b.data;
    CHECK(strstr(text, "s3cr3t") == NULL && strstr(text, "alice") == NULL && strstr(text, "pw2") == NULL);
    CHECK(b.data[b.len - 1] == '\n');
    vf_json_val doc;
    CHECK_OK(vf_json_parse(text, b.len - 1, "results line", &doc, &err));
    const vf_json_val *v;
    CHECK((v = vf_json_get(&doc, "recall")) && v->t == VF_JSON_NUM && v->num == pts[0].rep.recall);
    CHECK((v = vf_json_get(&doc, "params")) && v->t == VF_JSON_OBJ && v->n == 0);
    CHECK((v = vf_json_get(&doc, "label")) && v->t == VF_JSON_STR && strcmp(v->str, "my label") == 0);
    CHECK((v = vf_json_get(&doc, "vforge_version")) && v->t == VF_JSON_STR && strcmp(v->str, m.version) == 0);
    CHECK((v = vf_json_path(&doc, "config.url")) && v->t == VF_JSON_STR && strcmp(v->str, "http://example.com:6333/base") == 0);
    CHECK((v = vf_json_path(&doc, "config.ground_truth")) && v->t == VF_JSON_STR && strcmp(v->str, "https://host/gt.parquet") == 0);
    CHECK((v = vf_json_path(&doc, "config.nprobe")) && v->t == VF_JSON_NULL);
    CHECK((v = vf_json_path(&doc, "config.concurrency")) && v->t == VF_JSON_NUM && v->num == 1);
    CHECK((v = vf_json_path(&doc, "machine.blas_core")) && v->t == VF_JSON_STR && strcmp(v->str, m.blas_core) == 0);
    CHECK((v = vf_json_path(&doc, "machine.cpus_available")) && v->t == VF_JSON_NUM && v->num == m.cpus_available);
    CHECK((v = vf_json_get(&doc, "points")) && v->t == VF_JSON_NUM && v->num == 1);
    vf_json_free(&doc);
    vf_buf_free(&b);
  }
  bench_points_free(pts, n);
  fixture_free(&f);
}

/* vf_cancel_request() during a run stops it between queries: an open loop of 40 queries at
 * 10/s (4 s) cancelled after 0.2 s returns VF_ECANCELED well before its schedule ends */
static void *cancel_soon(void *arg) {
  (void)arg;
  struct timespec ts = {0, 200 * 1000 * 1000};
  nanosleep(&ts, NULL);
  vf_cancel_request(0);
  return NULL;
}

VF_TEST(run_cancelled_midway) {
  fixture f;
  fixture_make(&f, "cx", "{\"index\": {\"min_rows\": 100000}}");
  bench_options o = local_opts(&f, "cx");
  o.rps = 10;
  bench_report rep;
  vf_error err;
  pthread_t th;
  double t0 = vf_now();
  CHECK(pthread_create(&th, NULL, cancel_soon, NULL) == 0);
  CHECK_STATUS(bench_run(&o, &f.q, &f.t, f.rows, &rep, &err), VF_ECANCELED);
  double dt = vf_now() - t0;
  pthread_join(th, NULL);
  vf_cancel_reset();
  if (dt > 2.0) vf_test_fail(__FILE__, __LINE__, "cancelled run took %.2f s", dt);
  o.rps = 0; /* the closed loop too: cancelled before the first query */
  vf_cancel_request(0);
  CHECK_STATUS(bench_run(&o, &f.q, &f.t, f.rows, &rep, &err), VF_ECANCELED);
  vf_cancel_reset();
  CHECK_OK(bench_run(&o, &f.q, &f.t, f.rows, &rep, &err));
  fixture_free(&f);
}
