/* dist unit tests: run ids, shard assignment, the `row` id-expression check, shell quoting for
 * display, the sbatch argv (resources mapped, array spec, '%' escaped), the manifest written and
 * read back, the worker script's shape, and the config helpers that keep secrets as ${VAR}. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist/internal.h"
#include "vf_test.h"

VF_TEST(test_run_id) {
  char a[160], b[160];
  vf_error err;
  CHECK_OK(dist_run_id("my-run_1.x", a, sizeof a, &err));
  CHECK(strncmp(a, "my-run_1.x-", 11) == 0);
  /* name-YYYYmmddTHHMMSSZ-xxxxxxxx */
  CHECK_EQ_INT(strlen(a), 11 + 16 + 1 + 8);
  CHECK(a[11 + 8] == 'T' && a[11 + 15] == 'Z' && a[11 + 16] == '-');
  CHECK_OK(dist_run_id("my-run_1.x", b, sizeof b, &err));
  CHECK(strcmp(a, b) != 0); /* the random part */
  CHECK_STATUS(dist_run_id("", a, sizeof a, &err), VF_EUSAGE);
  CHECK_STATUS(dist_run_id("a/b", a, sizeof a, &err), VF_EUSAGE);
  CHECK_STATUS(dist_run_id("a b", a, sizeof a, &err), VF_EUSAGE);
  CHECK_STATUS(dist_run_id(".hidden", a, sizeof a, &err), VF_EUSAGE);
  CHECK_STATUS(dist_run_id("$(rm -rf)", a, sizeof a, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "not allowed") != NULL);
}

VF_TEST(test_shard_of) {
  int counts[4] = {0};
  for (size_t i = 0; i < 10; i++) counts[dist_shard_of(i, 4)]++;
  CHECK_EQ_INT(counts[0], 3);
  CHECK_EQ_INT(counts[1], 3);
  CHECK_EQ_INT(counts[2], 2);
  CHECK_EQ_INT(counts[3], 2);
  CHECK_EQ_INT(dist_shard_of(5, 1), 0);
}

VF_TEST(test_global_row) {
  CHECK(dist_idexpr_needs_global_row("row"));
  CHECK(dist_idexpr_needs_global_row("make_point_id(filename, ROW)"));
  CHECK(dist_idexpr_needs_global_row("make_point_id('x',row)"));
  CHECK(!dist_idexpr_needs_global_row("vf_point_id(filename, file_row_number)"));
  CHECK(!dist_idexpr_needs_global_row("make_point_id('row', file_row_number)"));
  CHECK(!dist_idexpr_needs_global_row("hash(\"row\")"));
  CHECK(!dist_idexpr_needs_global_row("rowid"));
  CHECK(!dist_idexpr_needs_global_row("my_row"));
  CHECK(!dist_idexpr_needs_global_row(""));
}

static void quoted(const char *in, const char *want) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err;
  CHECK_OK(dist_shell_quote(&b, in, &err));
  CHECK_OK(vf_buf_append(&b, "", 1, &err));
  CHECK_EQ_STR((const char *)b.data, want);
  vf_buf_free(&b);
}

VF_TEST(test_shell_quote) {
  quoted("--mem=32G", "--mem=32G");
  quoted("/a/b.sh", "/a/b.sh");
  quoted("a b", "'a b'");
  quoted("it's", "'it'\\''s'");
  quoted("$(x)", "'$(x)'");
  quoted("", "''");
}

static dist_manifest *sample(const char *dir) {
  static dist_manifest m;
  memset(&m, 0, sizeof m);
  m.run_id = vf_strdup("t-1");
  m.run_dir = vf_strdup(dir);
  m.created = vf_strdup("2026-01-01T00:00:00Z");
  m.state = vf_strdup("running");
  m.kind = DIST_KIND_LOAD;
  m.engine = DIST_ENGINE_SLURM;
  m.num_shards = 3;
  m.max_attempts = 3;
  m.nfiles = 4;
  m.files = vf_calloc(4, sizeof *m.files);
  for (int i = 0; i < 4; i++) {
    char u[64];
    snprintf(u, sizeof u, "/data/f\"%d\".parquet", i);
    m.files[i].uri = vf_strdup(u);
    m.files[i].key = vf_strdup(u);
    m.files[i].rows = 10u + (unsigned)i;
  }
  m.expected_rows = 46;
  m.shards = vf_calloc(3, sizeof *m.shards);
  m.shards[0].state = DIST_DONE;
  m.shards[0].attempts = 2;
  m.shards[0].points = 21;
  m.shards[1].state = DIST_FAILED;
  m.collection = vf_strdup("c");
  m.store = vf_strdup("local");
  return &m;
}

VF_TEST(test_manifest_roundtrip) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/dist-manifest-%d", vf_test_tmpdir(), (int)getpid());
  vf_error err;
  CHECK_OK(vf_mkdir_p(dir, 0700, &err));
  dist_manifest *m = sample(dir);
  CHECK_OK(dm_add_job(&m->shards[0], "12_0", &err));
  CHECK_OK(dm_add_job(&m->shards[0], "15_0", &err));
  CHECK_OK(dm_write(m, &err));
  dist_manifest r;
  CHECK_OK(dm_read(dir, &r, &err));
  CHECK_EQ_INT(r.num_shards, 3);
  CHECK_EQ_INT(r.nfiles, 4);
  CHECK_EQ_STR(r.files[3].uri, "/data/f\"3\".parquet");
  CHECK_EQ_INT(r.files[2].rows, 12);
  CHECK_EQ_INT(r.expected_rows, 46);
  CHECK_EQ_INT(r.shards[0].state, DIST_DONE);
  CHECK_EQ_INT(r.shards[0].attempts, 2);
  CHECK_EQ_INT(r.shards[0].points, 21);
  CHECK_EQ_INT(r.shards[0].njob_ids, 2);
  CHECK_EQ_STR(r.shards[0].job_ids[1], "15_0");
  CHECK_EQ_INT(r.shards[1].state, DIST_FAILED);
  CHECK_EQ_INT(r.shards[2].state, DIST_PENDING);
  CHECK_EQ_INT(r.engine, DIST_ENGINE_SLURM);
  CHECK_EQ_STR(r.state, "running");
  dist_report rep;
  memset(&rep, 0, sizeof rep);
  CHECK_OK(dm_to_report(&r, &rep, &err));
  CHECK_EQ_STR(rep.shards[0].job_ids, "12_0,15_0");
  vf_buf b;
  vf_buf_init(&b, 0);
  CHECK_OK(dist_report_json(&rep, &b, &err));
  CHECK(vf_json_is_object((const char *)b.data, b.len));
  vf_buf_free(&b);
  dist_report_free(&rep);
  dm_free(&r);
  /* a missing or foreign manifest */
  char other[600];
  snprintf(other, sizeof other, "%s/none", dir);
  CHECK_STATUS(dm_read(other, &r, &err), VF_ENOTFOUND);
  char *p = dm_path(m, "manifest.json");
  CHECK_OK(vf_atomic_write_file(p, "{\"a\":1}", 7, &err));
  CHECK_STATUS(dm_read(dir, &r, &err), VF_ECORRUPT);
  free(p);
  dm_free(m);
}

VF_TEST(test_sbatch_argv) {
  dist_manifest *m = sample("/runs/odd%dir");
  de_resources res = {4, 32, "gpu", "04:00:00"};
  int shards[] = {0, 1, 2, 5, 7, 8};
  char **argv = NULL;
  vf_error err;
  CHECK_OK(de_sbatch_argv(m, &res, shards, 6, &argv, &err));
  char *shown = de_argv_show(argv);
  CHECK_EQ_STR(shown, "sbatch --parsable --export=ALL --job-name=vforge-t-1 --array=0-2,5,7-8 "
                      "--output=/runs/odd%%dir/logs/slurm-%A_%a.out --cpus-per-task=4 --mem=32G "
                      "--partition=gpu --time=04:00:00 /runs/odd%dir/worker.sh /runs/odd%dir");
  free(shown);
  de_argv_free(argv);
  de_resources none = {0};
  CHECK_OK(de_sbatch_argv(m, &none, shards, 1, &argv, &err));
  int n = 0;
  while (argv[n]) n++;
  CHECK_EQ_INT(n, 8); /* no resource options */
  de_argv_free(argv);
  dm_free(m);
}

VF_TEST(test_worker_script) {
  const char *s = dist_worker_script();
  CHECK(strncmp(s, "#!/bin/sh\n", 10) == 0);
  CHECK(strstr(s, "eval") == NULL || strstr(s, "never through eval") != NULL);
  CHECK(strstr(s, "\"$@\" > \"$out\"") != NULL);
  CHECK(strstr(s, "mv -f \"$out\" \"$run/done/$r.json\"") != NULL);
}

VF_TEST(test_config_vars) {
  setenv("VF_DIST_TEST_API_KEY", "s3cr3t-unit", 1);
  setenv("VF_DIST_TEST_URL", "http://127.0.0.1:1", 1);
  const char *text =
      "vectors: {emb: {column: emb}}\n"
      "datasource: {uri: /tmp/x}\n"
      "vectorstore:\n"
      "  type: qdrant\n"
      "  url: ${VF_DIST_TEST_URL}\n"
      "  api_key: ${VF_DIST_TEST_API_KEY}\n"
      "  collection_name: c\n";
  vf_config cfg;
  vf_error err;
  CHECK_OK(vf_config_parse(text, strlen(text), "c.yaml", &cfg, &err));
  size_t n = 0;
  const char *const *paths = vf_config_secret_paths(&cfg, &n);
  CHECK_EQ_INT(n, 1);
  if (n == 1) CHECK_EQ_STR(paths[0], "vectorstore.api_key");
  char *raw = NULL;
  CHECK_OK(vf_config_raw_scalar(text, strlen(text), "c.yaml", "vectorstore.api_key", &raw, &err));
  CHECK_EQ_STR(raw, "${VF_DIST_TEST_API_KEY}");
  free(raw);
  CHECK_OK(vf_config_raw_scalar(text, strlen(text), "c.yaml", "vectors.emb.column", &raw, &err));
  CHECK_EQ_STR(raw, "emb");
  free(raw);
  CHECK_OK(vf_config_raw_scalar(text, strlen(text), "c.yaml", "vectorstore.nope", &raw, &err));
  CHECK(raw == NULL);
  CHECK_OK(vf_config_raw_scalar(text, strlen(text), "c.yaml", "vectorstore", &raw, &err));
  CHECK(raw == NULL); /* a mapping, not a scalar */
  vf_config_free(&cfg);
}

/* dist's named buffer ceilings (issue 15 item 5): each refuses to grow past itself, naming
 * itself; the capture ceiling covers what run_capture keeps (1 MiB, one 4 KiB read, the NUL),
 * so a chatty sbatch is truncated, never failed; a manifest is written under the ceiling its
 * reader accepts. */
VF_TEST(test_dist_buffer_ceilings) {
  CHECK_BUF_CEILING(DIST_MAX_MANIFEST, (size_t)1 << 30);
  CHECK_BUF_CEILING(DIST_MAX_COMMAND, (size_t)8 << 20);
  CHECK_BUF_CEILING(DIST_MAX_CAPTURE, (size_t)2 << 20);
  CHECK(DIST_MAX_CAPTURE >= ((size_t)1 << 20) + 4096 + 1);
}
