/* Unit tests for what the corpus plan measures once (src/corpus/plan.c, issue 15 item 2): per file
 * its row groups and the rows of each, the vectors' source, and the schema of the first file
 * with rows — from the footers corpus_plan_measure() reads once (no footer parsed twice: the
 * schema comes from the kept one).  Fixtures: examples/corpus (2 files x 3000 rows in row groups
 * of 2048 + 952; columns id, emb, text, meta; emb the dense vector), the same behind a 0-row
 * file written here, a one-part dataset over a .npy written here (read in DS_VIRTUAL_RG_ROWS-row
 * units) and a three-part dataset with parquet payloads (their row groups).  Then the commands
 * that plan once per process: brute-force with a plan given plans nothing and without one plans
 * each file once, generate-queries and index build open every file after the first over the
 * footer kept (corpus_footer_cache_stats: opened == parsed + hits, one measurement per file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vforge/config.h"
#include "vforge/corpus.h"
#include "vforge/eval.h"
#include "vforge/format.h"
#include "vforge/ivf.h"

static const char *src_dir(void) {
  const char *s = getenv("VF_SRC");
  return s && *s ? s : ".";
}

static void check_example_file(const corpus_plan *p, size_t i) {
  CHECK_EQ_INT(p->rows[i], 3000);
  CHECK_EQ_INT(p->row_groups[i], 2);
  if (p->row_groups[i] == 2 && p->rg_rows[i]) {
    CHECK_EQ_INT(p->rg_rows[i][0], 2048);
    CHECK_EQ_INT(p->rg_rows[i][1], 952);
  }
}

static void check_example_schema(const corpus_plan *p) {
  CHECK_EQ_INT(p->source, CORPUS_PLAN_PARQUET);
  CHECK_EQ_INT(p->ncolumns, 4);
  static const char *const want[4] = {"id", "emb", "text", "meta"};
  for (int c = 0; c < p->ncolumns && c < 4; c++) {
    CHECK_EQ_STR(p->columns[c], want[c]);
    CHECK_EQ_INT(p->dense_columns[c], c == 1);
  }
}

VF_TEST(row_groups_and_schema_of_a_parquet_corpus) {
  char path[4096];
  snprintf(path, sizeof path, "%s/examples/corpus", src_dir());
  corpus_files fs;
  vf_error err;
  CHECK_OK(corpus_discover(path, NULL, &fs, &err));
  corpus_footer_stats s0 = corpus_footer_cache_stats();
  corpus_plan plan;
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  CHECK_EQ_INT(plan.row_groups[0], -1); /* nothing measured yet */
  CHECK_EQ_INT(plan.schema_file, fs.n);
  CHECK_OK(corpus_plan_measure(&plan, &err));
  CHECK_EQ_INT(fs.n, 2);
  for (size_t i = 0; i < fs.n; i++)
    check_example_file(&plan, i);
  CHECK_EQ_INT(plan.total_rows, 6000);
  CHECK_EQ_INT(plan.schema_file, 0);
  check_example_schema(&plan);
  /* each footer parsed once: the schema was read from the kept footer */
  corpus_footer_stats s1 = corpus_footer_cache_stats();
  CHECK_EQ_INT(s1.parsed - s0.parsed, fs.n);
  /* measuring again reads nothing */
  CHECK_OK(corpus_plan_measure(&plan, &err));
  CHECK_EQ_INT(corpus_footer_cache_stats().parsed, s1.parsed);
  CHECK_EQ_INT(plan.ncolumns, 4);
  corpus_plan_free(&plan);
  corpus_files_free(&fs);
}

/* the schema is the first file's with rows: a 0-row file ahead of the corpus gives none */
VF_TEST(schema_of_the_first_file_with_rows) {
  const char *dir = vf_test_tmpdir();
  char p[4096], src[4096];
  snprintf(p, sizeof p, "%s/a_empty.parquet", dir);
  pqt_wcolumn cols[1] = {{"other", PQT_W_INT64, false, 0}};
  pqt_writer_opts o = {0};
  pqt_writer *w = NULL;
  vf_error err;
  CHECK_OK(pqt_writer_open(p, cols, 1, &o, &w, &err));
  if (w) CHECK_OK(pqt_writer_close(w, &err));
  for (int i = 0; i < 2; i++) {
    snprintf(src, sizeof src, "%s/examples/corpus/rank00/batch_0000000%d.parquet", src_dir(), i);
    snprintf(p, sizeof p, "%s/b_%d.parquet", dir, i);
    FILE *in = fopen(src, "rb"), *out = fopen(p, "wb");
    CHECK(in && out);
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    if (in) fclose(in);
    if (out) fclose(out);
  }
  corpus_files fs;
  CHECK_OK(corpus_discover(dir, NULL, &fs, &err));
  if (fs.n != 3) {
    vf_test_fail(__FILE__, __LINE__, "%zu files, expected 3", fs.n);
    corpus_files_free(&fs);
    return;
  }
  corpus_plan plan;
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  CHECK_OK(corpus_plan_measure(&plan, &err));
  CHECK_EQ_INT(plan.rows[0], 0);
  CHECK_EQ_INT(plan.empty, 1);
  CHECK_EQ_INT(plan.row_groups[0], 0);
  CHECK_EQ_INT(plan.schema_file, 1);
  check_example_file(&plan, 1);
  check_example_file(&plan, 2);
  check_example_schema(&plan); /* not the empty file's "other" */
  corpus_plan_free(&plan);
  corpus_files_free(&fs);
}

/* a .npy of `rows` x 2 float32 */
static void npy_write(const char *path, int rows) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return;
  vf_test_npy_header(fp, "<f4", rows, 2);
  for (int r = 0; r < rows * 2; r++) {
    float f = (float)r;
    fwrite(&f, 4, 1, fp);
  }
  fclose(fp);
}

VF_TEST(a_vector_file_is_a_dataset_part_read_in_units) {
  char p[4096];
  snprintf(p, sizeof p, "%s/base.npy", vf_test_tmpdir());
  npy_write(p, 20000);
  corpus_source cs;
  vf_error err;
  CHECK_OK(corpus_source_open(p, NULL, &cs, &err));
  if (cs.files.n != 1) {
    vf_test_fail(__FILE__, __LINE__, "%zu files", cs.files.n);
    corpus_source_close(&cs);
    return;
  }
  corpus_plan plan;
  CHECK_OK(corpus_plan_init(&plan, &cs.files, &err));
  CHECK_OK(corpus_plan_measure(&plan, &err));
  CHECK_EQ_INT(plan.source, CORPUS_PLAN_NPY);
  CHECK_EQ_INT(plan.rows[0], 20000);
  CHECK_EQ_INT(plan.row_groups[0], 3); /* 8192 + 8192 + 3616 */
  if (plan.row_groups[0] == 3) {
    CHECK_EQ_INT(plan.rg_rows[0][0], 8192);
    CHECK_EQ_INT(plan.rg_rows[0][1], 8192);
    CHECK_EQ_INT(plan.rg_rows[0][2], 3616);
  }
  CHECK_EQ_INT(plan.schema_file, 0);
  CHECK_EQ_INT(plan.ncolumns, 0); /* no parquet: the vectors component is the source */
  /* the units are the reader's */
  corpus_records *r = NULL;
  CHECK_OK(corpus_records_open(&cs.files.files[0], &cs.spec, 0, &r, &err));
  if (r) {
    CHECK_EQ_INT(corpus_records_row_groups(r), plan.row_groups[0]);
    corpus_records_close(r);
  }
  corpus_plan_free(&plan);
  corpus_source_close(&cs);
}

VF_TEST(dataset_parts_with_parquet_payloads) {
  const char *dir = vf_test_tmpdir();
  static const int sizes[3] = {5, 1, 7};
  char p[4096];
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s/v_%d.npy", dir, i);
    npy_write(p, sizes[i]);
    snprintf(p, sizeof p, "%s/m_%d.parquet", dir, i);
    pqt_wcolumn cols[1] = {{"gid", PQT_W_INT64, false, 0}};
    pqt_writer_opts o = {0};
    o.row_group_rows = 2;
    pqt_writer *w = NULL;
    vf_error err;
    CHECK_OK(pqt_writer_open(p, cols, 1, &o, &w, &err));
    int64_t gid[8] = {0};
    pqt_wbatch b[1] = {{.values = gid}};
    if (w) {
      CHECK_OK(pqt_writer_write(w, b, sizes[i], &err));
      CHECK_OK(pqt_writer_close(w, &err));
    }
  }
  char text[4096];
  snprintf(text, sizeof text,
           "vectors: {v: {type: dense}}\n"
           "datasource:\n  type: dataset\n"
           "  vectors: {parts: {count: 3, path: '%s/v_{i}.npy'}}\n"
           "  payload: {parts: {count: 3, path: '%s/m_{i}.parquet'}}\n",
           dir, dir);
  vf_config cfg;
  vf_error err;
  CHECK_OK(vf_config_parse(text, strlen(text), "t.yaml", &cfg, &err));
  corpus_files fs = {0};
  CHECK_OK(vf_config_files(&cfg, &fs, &err));
  CHECK_EQ_INT(fs.n, 3);
  corpus_plan plan;
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  CHECK_OK(corpus_plan_measure(&plan, &err));
  CHECK_EQ_INT(plan.source, CORPUS_PLAN_NPY);
  for (size_t i = 0; i < fs.n && i < 3; i++) {
    CHECK_EQ_INT(plan.rows[i], sizes[i]);
    CHECK_EQ_INT(plan.row_groups[i], (sizes[i] + 1) / 2); /* the payload's row groups of 2 rows */
    uint64_t sum = 0;
    for (int g = 0; plan.rg_rows[i] && g < plan.row_groups[i]; g++)
      sum += plan.rg_rows[i][g];
    CHECK_EQ_INT(sum, sizes[i]);
  }
  corpus_plan_free(&plan);
  corpus_files_free(&fs);
  vf_config_free(&cfg);
}

/* the counters' change since `a` */
static corpus_footer_stats stats_since(corpus_footer_stats a) {
  corpus_footer_stats b = corpus_footer_cache_stats();
  b.opened -= a.opened;
  b.parsed -= a.parsed;
  b.hits -= a.hits;
  b.plans -= a.plans;
  b.files_measured -= a.files_measured;
  return b;
}

/* every parquet open of a command was either the one footer parse of a file or a kept footer */
static void check_once_per_file(const char *what, corpus_footer_stats d, size_t nfiles) {
  if (d.parsed != nfiles || d.opened != d.parsed + d.hits || d.files_measured != nfiles)
    vf_test_fail(__FILE__, __LINE__, "%s: %llu opens, %llu footers parsed, %llu kept-footer opens, "
                 "%llu files measured, for %zu files (want each parsed and measured once)", what,
                 (unsigned long long)d.opened, (unsigned long long)d.parsed,
                 (unsigned long long)d.hits, (unsigned long long)d.files_measured, nfiles);
}

VF_TEST(commands_plan_once_per_process) {
  char path[4096];
  snprintf(path, sizeof path, "%s/examples/corpus", src_dir());
  corpus_files fs;
  vf_error err;
  CHECK_OK(corpus_discover(path, NULL, &fs, &err));
  /* the queries: the first rows' vectors of the corpus, from the plan's dimension probe */
  corpus_plan plan;
  CHECK_OK(corpus_plan_build(&plan, &fs, &err));
  corpus_vec_source vs = {.name = "emb", .column = "emb", .kind = CORPUS_VEC_DENSE};
  int32_t dim = 0;
  CHECK_OK(corpus_plan_probe_dim(&plan, &vs, &dim, &err));
  CHECK(dim > 0);
  float *qv = calloc((size_t)(dim > 0 ? dim : 1) * 3, sizeof *qv);
  for (int i = 0; qv && i < dim * 3; i++)
    qv[i] = (float)((i * 7919) % 13) - 6.0f;
  eval_bf_hits h1 = {0}, h2 = {0};
  eval_bf_opts o = {.k = 3, .metric = CORPUS_COSINE, .threads = 1, .query_vectors = qv,
                    .nqueries = 3, .query_dim = dim, .no_file = true, .hits = &h1, .plan = &plan};
  eval_bf_result r;
  /* a plan given: nothing planned or parsed again */
  corpus_footer_stats s0 = corpus_footer_cache_stats();
  CHECK_OK(eval_brute_force(&fs, &o, &r, &err));
  corpus_footer_stats d = stats_since(s0);
  CHECK_EQ_INT(d.plans, 0);
  CHECK_EQ_INT(d.files_measured, 0);
  CHECK_EQ_INT(d.parsed, 0);
  CHECK_EQ_INT(r.rows_scanned, 6000);
  CHECK_EQ_INT(r.files, 2);
  free(r.path);
  corpus_plan_free(&plan); /* the last plan: the footers are dropped */
  /* none given: its own plan, each file measured and parsed once, the same hits */
  o.plan = NULL;
  o.hits = &h2;
  s0 = corpus_footer_cache_stats();
  CHECK_OK(eval_brute_force(&fs, &o, &r, &err));
  d = stats_since(s0);
  CHECK_EQ_INT(d.plans, 1);
  check_once_per_file("brute-force", d, fs.n);
  free(r.path);
  CHECK(h1.ids && h2.ids && memcmp(h1.ids, h2.ids, 3 * 3 * 37) == 0);
  CHECK(h1.scores && h2.scores && memcmp(h1.scores, h2.scores, 3 * 3 * sizeof(float)) == 0);
  eval_bf_hits_free(&h1);
  eval_bf_hits_free(&h2);
  /* a plan given that has not measured the files is refused, naming one */
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  o.plan = &plan;
  o.hits = NULL;
  CHECK(eval_brute_force(&fs, &o, &r, &err) == VF_EUSAGE);
  CHECK(strstr(err.msg, "has not measured") != NULL);
  free(r.path);
  corpus_plan_free(&plan);
  /* generate-queries: the row count and the gather pass open over the footers planned */
  char out[4096];
  snprintf(out, sizeof out, "%s/plan_q.parquet", vf_test_tmpdir());
  eval_queries_opts qo = {.n = 40, .seed = 5, .output = out};
  eval_queries_result qr;
  s0 = corpus_footer_cache_stats();
  CHECK_OK(eval_generate_queries(&fs, &qo, &qr, &err));
  d = stats_since(s0);
  CHECK_EQ_INT(qr.rows, 40);
  CHECK(d.hits >= 1); /* the gather pass reopened a file */
  check_once_per_file("generate-queries", d, fs.n);
  free(qr.path);
  /* index build: the schema probe, the row count and the read pass share one plan */
  corpus_source cs;
  CHECK_OK(corpus_source_open(path, NULL, &cs, &err));
  ivf_params ip = {.type = IVF_FLAT, .metric = CORPUS_COSINE, .nlist = 4, .threads = 1};
  ivf_source_opts so = {0};
  ivf_build_report rep;
  snprintf(out, sizeof out, "%s/plan.ivf", vf_test_tmpdir());
  s0 = corpus_footer_cache_stats();
  CHECK_OK(ivf_build_source(&cs, &so, &ip, out, &rep, &err));
  d = stats_since(s0);
  CHECK_EQ_INT(rep.rows, 6000);
  CHECK_EQ_INT(d.plans, 1);
  check_once_per_file("index build", d, cs.files.n);
  corpus_source_close(&cs);
  free(qv);
  corpus_files_free(&fs);
}
