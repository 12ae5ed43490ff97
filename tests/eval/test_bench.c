/* Unit tests of the bench library (include/vforge/bench.h): recall with ties at the cutoff,
 * nearest-rank percentiles, the queries / ground-truth readers on files written by pqt_writer
 * (variable-length hit lists, id canonicalisation, malformed rows), query alignment and the
 * JSON report.  The end-to-end run against a loaded local store is tests/eval/test_bench.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "vf_test.h"
#include "vforge/bench.h"
#include "vforge/format.h"

static corpus_id uid(const char *s) {
  corpus_id id;
  memset(&id, 0, sizeof id);
  if (!store_id_parse(s, strlen(s), &id)) vf_test_fail(__FILE__, __LINE__, "bad id %s", s);
  return id;
}

static char *path_in(const char *name) {
  static char buf[4][1024];
  static int i;
  char *p = buf[i++ % 4];
  snprintf(p, 1024, "%s/%s", vf_test_tmpdir(), name);
  return p;
}

/* truth of one row: ids 1..n with the given scores */
static void truth1(bench_truth *t, char **ids, float *scores, size_t *counts, size_t k, size_t n) {
  memset(t, 0, sizeof *t);
  t->n = 1;
  t->k = k;
  t->hit_ids = ids;
  t->scores = scores;
  t->counts = counts;
  counts[0] = n;
}

VF_TEST(recall_strict_and_ties) {
  char *ids[3] = {"1", "2", "3"};
  float sc[3] = {0.9f, 0.8f, 0.7f};
  size_t counts[1];
  bench_truth t;
  truth1(&t, ids, sc, counts, 3, 3);
  double s, w;
  store_hit h[3] = {{uid("1"), 0.9f}, {uid("2"), 0.8f}, {uid("3"), 0.7f}};
  bench_recall_one(&t, 0, 3, h, 3, &s, &w);
  CHECK(s == 1.0 && w == 1.0);
  /* another point tied with the k-th: counts for recall_max only */
  h[2] = (store_hit){uid("9"), 0.7f * (1 + 5e-7f)};
  bench_recall_one(&t, 0, 3, h, 3, &s, &w);
  CHECK(fabs(s - 2.0 / 3) < 1e-12);
  CHECK(w == 1.0);
  /* not a tie (1e-4 away): a miss either way */
  h[2] = (store_hit){uid("9"), 0.69993f};
  bench_recall_one(&t, 0, 3, h, 3, &s, &w);
  CHECK(fabs(s - 2.0 / 3) < 1e-12 && fabs(w - 2.0 / 3) < 1e-12);
  /* order does not matter, only membership in the top k */
  store_hit r[3] = {{uid("3"), 0.7f}, {uid("1"), 0.9f}, {uid("2"), 0.8f}};
  bench_recall_one(&t, 0, 3, r, 3, &s, &w);
  CHECK(s == 1.0);
  /* a duplicated id counts once */
  store_hit d[3] = {{uid("1"), 0.9f}, {uid("1"), 0.9f}, {uid("1"), 0.9f}};
  bench_recall_one(&t, 0, 3, d, 3, &s, &w);
  CHECK(fabs(s - 1.0 / 3) < 1e-12 && fabs(w - 1.0 / 3) < 1e-12);
  /* k smaller than the truth's K: only the first k truth ids and the k-th score count */
  store_hit k2[2] = {{uid("1"), 0.9f}, {uid("3"), 0.7f}};
  bench_recall_one(&t, 0, 2, k2, 2, &s, &w);
  CHECK(fabs(s - 0.5) < 1e-12 && fabs(w - 0.5) < 1e-12);
  /* fewer answers than k */
  bench_recall_one(&t, 0, 3, h, 1, &s, &w);
  CHECK(fabs(s - 1.0 / 3) < 1e-12);
  /* a truth row with fewer hits than k (a small corpus): divided by what it has */
  truth1(&t, ids, sc, counts, 3, 2);
  store_hit two[2] = {{uid("1"), 0.9f}, {uid("2"), 0.8f}};
  bench_recall_one(&t, 0, 3, two, 2, &s, &w);
  CHECK(s == 1.0 && w == 1.0);
  truth1(&t, ids, sc, counts, 3, 0);
  bench_recall_one(&t, 0, 3, two, 0, &s, &w);
  CHECK(s == 1.0 && w == 1.0);
}

VF_TEST(percentile_nearest_rank) {
  double v[100];
  for (int i = 0; i < 100; i++) v[i] = i + 1;
  CHECK(bench_percentile(v, 100, 50) == 50);
  CHECK(bench_percentile(v, 100, 95) == 95);
  CHECK(bench_percentile(v, 100, 99) == 99);
  CHECK(bench_percentile(v, 100, 100) == 100);
  CHECK(bench_percentile(v, 3, 50) == 2);   /* ceil(1.5) = 2nd */
  CHECK(bench_percentile(v, 3, 99) == 3);
  CHECK(bench_percentile(v, 1, 50) == 1);
  CHECK(bench_percentile(v, 0, 50) == 0);
  CHECK(bench_percentile(v, 10, 1) == 1);
}

static const char *U1 = "0A1B2C3D-0000-4000-8000-00000000000A"; /* upper case: canonicalised */

static void write_truth(const char *path, bool bad_lengths) {
  pqt_wcolumn cols[3] = {{"query_id", PQT_W_STRING, false, 0},
                         {"hit_ids", PQT_W_LIST_STRING, false, 0},
                         {"hit_scores", PQT_W_LIST_FLOAT, false, 0}};
  pqt_writer *w = NULL;
  vf_error err;
  pqt_writer_opts o = {0};
  o.row_group_rows = 2; /* several row groups */
  CHECK_OK(pqt_writer_open(path, cols, 3, &o, &w, &err));
  const char *q[3] = {"qa", "qb", "qc"};
  const char *h[6] = {"5", "6", "7", U1, "8", "9"};
  int64_t ho[4] = {0, 3, 4, 6};             /* 3, 1, 2 hits */
  float s[6] = {3, 2, 1, 0.5f, 9, 8};
  int64_t so[4] = {0, 3, 4, bad_lengths ? 5 : 6};
  pqt_wbatch b[3] = {{.strs = q}, {.strs = h, .offsets = ho}, {.values = s, .offsets = so}};
  CHECK_OK(pqt_writer_write(w, b, 3, &err));
  CHECK_OK(pqt_writer_close(w, &err));
}

VF_TEST(read_truth_variable_lengths) {
  const char *p = path_in("gt.parquet");
  write_truth(p, false);
  bench_truth t;
  vf_error err;
  CHECK_OK(bench_read_truth(p, &t, &err));
  CHECK_EQ_INT(t.n, 3);
  CHECK_EQ_INT(t.k, 3);
  CHECK_EQ_STR(t.qids[0], "qa");
  CHECK_EQ_STR(t.qids[2], "qc");
  CHECK_EQ_INT(t.counts[0], 3);
  CHECK_EQ_INT(t.counts[1], 1);
  CHECK_EQ_INT(t.counts[2], 2);
  CHECK_EQ_STR(t.hit_ids[0 * 3 + 2], "7");
  CHECK_EQ_STR(t.hit_ids[1 * 3 + 0], "0a1b2c3d-0000-4000-8000-00000000000a");
  CHECK(t.hit_ids[1 * 3 + 1] == NULL);
  CHECK_EQ_STR(t.hit_ids[2 * 3 + 1], "9");
  CHECK(t.scores[2 * 3 + 0] == 9 && t.scores[0 * 3 + 2] == 1);
  bench_truth_free(&t);
}

VF_TEST(read_truth_rejects) {
  const char *p = path_in("bad.parquet");
  write_truth(p, true);
  bench_truth t;
  vf_error err;
  vf_error_clear(&err);
  CHECK_STATUS(bench_read_truth(p, &t, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "hit_ids but") != NULL);
  CHECK_STATUS(bench_read_truth(path_in("missing.parquet"), &t, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "ground-truth file") != NULL);
}

static void write_queries(const char *path, int nvec) {
  pqt_wcolumn cols[3] = {{"query_id", PQT_W_STRING, false, 0},
                         {"emb", PQT_W_VECTOR, false, 4},
                         {"emb2", PQT_W_VECTOR, false, 4}};
  pqt_writer *w = NULL;
  vf_error err;
  CHECK_OK(pqt_writer_open(path, cols, 1 + nvec, NULL, &w, &err));
  const char *q[3] = {"qa", "qb", "qc"};
  float v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  pqt_wbatch b[3] = {{.strs = q}, {.values = v}, {.values = v}};
  CHECK_OK(pqt_writer_write(w, b, 3, &err));
  CHECK_OK(pqt_writer_close(w, &err));
}

VF_TEST(read_queries_and_align) {
  const char *p = path_in("q.parquet");
  write_queries(p, 1);
  bench_queries q;
  vf_error err;
  CHECK_OK(bench_read_queries(p, NULL, &q, &err));
  CHECK_EQ_INT(q.n, 3);
  CHECK_EQ_INT(q.dim, 4);
  CHECK_EQ_STR(q.column, "emb");
  CHECK_EQ_STR(q.ids[1], "qb");
  CHECK(q.vectors[4] == 5 && q.vectors[11] == 12);
  bench_queries q_none;
  CHECK_STATUS(bench_read_queries(p, "nope", &q_none, &err), VF_ENOTFOUND);
  CHECK(q_none.n == 0 && q_none.ids == NULL);
  CHECK(strstr(err.msg, "columns: query_id, emb") != NULL);

  /* alignment by query_id, whatever the truth's row order */
  const char *g = path_in("gt2.parquet");
  write_truth(g, false);
  bench_truth t;
  CHECK_OK(bench_read_truth(g, &t, &err));
  free(t.qids[0]);
  t.qids[0] = vf_strdup("qc");
  free(t.qids[2]);
  t.qids[2] = vf_strdup("qa");
  size_t *rows = NULL;
  CHECK_OK(bench_align(&q, &t, &rows, &err));
  CHECK(rows && rows[0] == 2 && rows[1] == 1 && rows[2] == 0);
  free(rows);
  /* a query without truth */
  free(t.qids[1]);
  t.qids[1] = vf_strdup("zz");
  CHECK_STATUS(bench_align(&q, &t, &rows, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "query_id 'qb'") != NULL);
  /* a query id the truth holds twice */
  free(t.qids[1]);
  t.qids[1] = vf_strdup("qa");
  CHECK_STATUS(bench_align(&q, &t, &rows, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "twice") != NULL);
  bench_truth_free(&t);
  bench_queries_free(&q);

  /* two vector columns: one must be named */
  const char *p2 = path_in("q2.parquet");
  write_queries(p2, 2);
  CHECK_STATUS(bench_read_queries(p2, NULL, &q, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "--column") != NULL);
  CHECK_OK(bench_read_queries(p2, "emb2", &q, &err));
  CHECK_EQ_STR(q.column, "emb2");
  bench_queries_free(&q);
}

VF_TEST(run_rejects_k_above_truth) {
  bench_queries q = {0};
  bench_truth t = {0};
  t.k = 10;
  q.n = 1;
  size_t rows[1] = {0};
  bench_options o = {0};
  o.k = 11;
  o.concurrency = 1;
  bench_report r;
  vf_error err;
  CHECK_STATUS(bench_run(&o, &q, &t, rows, &r, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "exceeds") != NULL);
  o.k = 10;
  o.concurrency = 0;
  CHECK_STATUS(bench_run(&o, &q, &t, rows, &r, &err), VF_EUSAGE);
}

VF_TEST(report_json_keys) {
  bench_report r;
  memset(&r, 0, sizeof r);
  r.k = 10;
  r.queries = 5;
  r.recall = r.recall_min = 0.5;
  r.recall_max = 0.75;
  r.qps = 100;
  r.p50_ms = 1;
  r.p95_ms = 2;
  r.p99_ms = 3;
  r.max_ms = 4;
  r.errors = 2;
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err;
  CHECK_OK(bench_report_json(&r, &b, &err));
  vf_buf_append(&b, "", 1, &err);
  CHECK_EQ_STR((const char *)b.data,
               "{\"k\":10,\"queries\":5,\"recall\":0.5,\"recall_min\":0.5,\"recall_max\":0.75,"
               "\"qps\":100,\"latency_ms\":{\"p50\":1,\"p95\":2,\"p99\":3,\"max\":4},\"errors\":2}\n");
  vf_buf_free(&b);
}

VF_TEST(local_spec) {
  const char *dir = vf_test_tmpdir();
  char p[1024];
  snprintf(p, sizeof p, "%s/c", dir);
  mkdir(p, 0777);
  snprintf(p, sizeof p, "%s/c/collection.json", dir);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("{\"format\": \"vforge-local\", \"version\": 1,\n \"collection\": \"c\",\n \"vectors\": [\n"
        "    {\"name\": \"emb\", \"type\": \"dense\", \"dim\": 32, \"distance\": \"euclid\"},\n"
        "    {\"name\": \"sp\", \"type\": \"sparse\", \"dim\": 0, \"distance\": \"dot\"}\n ]}\n", f);
  fclose(f);
  store_vector_spec *v = NULL;
  int n = 0;
  vf_error err;
  CHECK_OK(bench_local_spec(dir, "c", &v, &n, &err));
  CHECK_EQ_INT(n, 2);
  if (n == 2) {
    CHECK_EQ_STR(v[0].name, "emb");
    CHECK(v[0].kind == CORPUS_VEC_DENSE && v[0].dim == 32 && v[0].distance == CORPUS_EUCLID);
    CHECK(v[1].kind == CORPUS_VEC_SPARSE && v[1].distance == CORPUS_DOT);
  }
  bench_spec_free(v, n);
  CHECK_STATUS(bench_local_spec(dir, "nope", &v, &n, &err), VF_ENOTFOUND);
}

/* k above 32 takes the sorted path: the same answers as the pairwise one */
VF_TEST(recall_large_k_sorted) {
  enum { K = 100 };
  char *ids[K];
  float sc[K];
  char text[K][24];
  for (int i = 0; i < K; i++) {
    snprintf(text[i], sizeof text[i], "%d", 1000 + i);
    ids[i] = text[i];
    sc[i] = (float)(K - i) / 10.0f;
  }
  size_t counts[1];
  bench_truth t;
  truth1(&t, ids, sc, counts, K, K);
  store_hit h[K];
  for (int i = 0; i < K; i++) h[i] = (store_hit){uid(text[K - 1 - i]), sc[K - 1 - i]};
  double s, w;
  bench_recall_one(&t, 0, K, h, K, &s, &w);
  CHECK(s == 1.0 && w == 1.0);
  /* 10 wrong ids, one of them tied with the k-th score; 5 repeats of a right id */
  for (int i = 0; i < 10; i++) h[i] = (store_hit){uid("7"), 0.0f};
  h[0] = (store_hit){uid("8"), sc[K - 1]};
  for (int i = 10; i < 15; i++) h[i] = h[20];
  bench_recall_one(&t, 0, K, h, K, &s, &w);
  /* distinct right ids among h[10..99]: h[15..99] (85) plus h[20] already counted => 85 */
  CHECK(fabs(s - 0.85) < 1e-12);
  CHECK(fabs(w - 0.86) < 1e-12);
}
