/* Unit tests for src/corpus: URI forms, bare keys (with id_root), point ids against vectors
 * computed with `printf '%s' KEY:ROW | md5sum`, local discovery (eval/ exclusion at any depth,
 * non-parquet files, symlinks, byte-wise order) and every id-expression form. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vforge/corpus.h"

/* ------------------------------------------------------------------ URIs */

typedef struct uri_case {
  const char *in;
  io_scheme scheme;
  const char *container, *revision, *path;
} uri_case;

VF_TEST(test_uri_forms) {
  static const uri_case cases[] = {
      {"/abs/x.parquet", IO_URI_LOCAL, NULL, NULL, "/abs/x.parquet"},
      {"/abs//dir/./sub/../x.parquet", IO_URI_LOCAL, NULL, NULL, "/abs/dir/x.parquet"},
      {"/abs/dir/", IO_URI_LOCAL, NULL, NULL, "/abs/dir"},
      {"/../..", IO_URI_LOCAL, NULL, NULL, "/"},
      {"/", IO_URI_LOCAL, NULL, NULL, "/"},
      {"file:///abs/x.parquet", IO_URI_FILE, NULL, NULL, "/abs/x.parquet"},
      {"file://localhost/abs/./x.parquet", IO_URI_FILE, NULL, NULL, "/abs/x.parquet"},
      {"s3://bucket/a/b.parquet", IO_URI_S3, "bucket", NULL, "a/b.parquet"},
      {"s3://bucket", IO_URI_S3, "bucket", NULL, ""},
      {"s3://bucket/pre/fix/", IO_URI_S3, "bucket", NULL, "pre/fix/"},
      {"hf://datasets/ns/repo/data/x.parquet", IO_URI_HF_DATASET, "ns/repo", NULL,
       "data/x.parquet"},
      {"hf://datasets/ns/repo@v1.0/data/x.parquet", IO_URI_HF_DATASET, "ns/repo", "v1.0",
       "data/x.parquet"},
      {"hf://datasets/ns/repo", IO_URI_HF_DATASET, "ns/repo", NULL, ""},
      {"hf://buckets/ns/name/x.parquet", IO_URI_HF_BUCKET, "ns/name", NULL, "x.parquet"},
      {"http://host/p/x.parquet", IO_URI_HTTP, "host", NULL, "p/x.parquet"},
      {"https://host:8443/p/x.parquet", IO_URI_HTTPS, "host:8443", NULL, "p/x.parquet"},
      {"HTTPS://h.example.com/x", IO_URI_HTTPS, "h.example.com", NULL, "x"},
      {"http://[::1]:9000/b/x.parquet", IO_URI_HTTP, "[::1]:9000", NULL, "b/x.parquet"},
      {"http://[::1]/x", IO_URI_HTTP, "[::1]", NULL, "x"},
      {"http://127.0.0.1:9000", IO_URI_HTTP, "127.0.0.1:9000", NULL, ""},
  };
  vf_error err;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const uri_case *c = &cases[i];
    io_uri u;
    vf_status st = io_uri_parse(c->in, &u, &err);
    if (st != VF_OK) {
      vf_test_fail(__FILE__, __LINE__, "%s: %s", c->in, err.msg);
      continue;
    }
    CHECK_EQ_INT(u.scheme, c->scheme);
    if (c->container)
      CHECK_EQ_STR(u.container, c->container);
    else
      CHECK(u.container == NULL);
    if (c->revision)
      CHECK_EQ_STR(u.revision, c->revision);
    else
      CHECK(u.revision == NULL);
    CHECK_EQ_STR(u.path, c->path);
    if (c->scheme == IO_URI_LOCAL)
      CHECK_EQ_STR(u.uri, c->path);
    else
      CHECK_EQ_STR(u.uri, c->in);
    io_uri_free(&u);
  }
}

VF_TEST(test_uri_malformed) {
  static const char *const bad[] = {"",
                                    "s3://",
                                    "s3:///key",
                                    "hf://models/ns/repo/x",
                                    "hf://datasets/ns",
                                    "hf://datasets/ns/",
                                    "hf://datasets//repo/x",
                                    "hf://datasets/ns/@rev/x",
                                    "hf://datasets/ns/repo@/x",
                                    "hf://buckets/ns",
                                    "http:///path",
                                    "https://host:0/x",
                                    "https://host:99999/x",
                                    "https://host:12a/x",
                                    "http://user@host/x",
                                    "http://[::1/x",
                                    "http://[]/x",
                                    "http://[::1]x/y",
                                    "http://[::1]:/y",
                                    "ftp://host/x",
                                    "file://otherhost/x",
                                    "file://",
                                    NULL};
  vf_error err;
  for (int i = 0; bad[i]; i++) {
    io_uri u;
    vf_status st = io_uri_parse(bad[i], &u, &err);
    if (st != VF_EUSAGE) {
      vf_test_fail(__FILE__, __LINE__, "\"%s\" -> %s, want usage", bad[i], vf_status_name(st));
      if (st == VF_OK) io_uri_free(&u);
      continue;
    }
    char shown[256]; /* the message names the URI, a user or password masked */
    if (bad[i][0]) CHECK(strstr(err.msg, vf_url_redact(bad[i], shown, sizeof shown)) != NULL);
    CHECK(u.uri == NULL && u.path == NULL && u.container == NULL);
  }
}

VF_TEST(test_relative_paths) {
  char *old = getcwd(NULL, 0);
  const char *dir = vf_test_tmpdir();
  char real[4096];
  CHECK(realpath(dir, real) != NULL);
  CHECK(chdir(real) == 0);
  /* a symlink to the cwd: relative paths under it keep the link name (no resolution) */
  CHECK(symlink(real, "link") == 0 || errno == EEXIST);
  vf_error err;
  io_uri u;
  CHECK_OK(io_uri_parse("a/./b/../x.parquet", &u, &err));
  char want[4200];
  snprintf(want, sizeof want, "%s/a/x.parquet", real);
  CHECK_EQ_STR(u.path, want);
  CHECK_EQ_STR(u.uri, want);
  io_uri_free(&u);
  CHECK_OK(io_uri_parse("link/../link/y.parquet", &u, &err));
  snprintf(want, sizeof want, "%s/link/y.parquet", real);
  CHECK_EQ_STR(u.path, want);
  io_uri_free(&u);
  CHECK_OK(io_uri_parse(".", &u, &err));
  CHECK_EQ_STR(u.path, real);
  io_uri_free(&u);
  char *key = NULL;
  CHECK_OK(corpus_bare_key("sub//x.parquet", NULL, &key, &err));
  snprintf(want, sizeof want, "%s/sub/x.parquet", real);
  CHECK_EQ_STR(key, want);
  free(key);
  CHECK_OK(corpus_bare_key("sub/x.parquet", ".", &key, &err)); /* relative id_root */
  CHECK_EQ_STR(key, "sub/x.parquet");
  free(key);
  if (old) {
    CHECK(chdir(old) == 0);
    free(old);
  }
}

/* ------------------------------------------------------------- bare keys */

VF_TEST(test_bare_keys) {
  static const char *const cases[][3] = {
      {"s3://bucket/a/b.parquet", NULL, "a/b.parquet"},
      {"hf://datasets/ns/repo/data/x.parquet", NULL, "data/x.parquet"},
      {"hf://datasets/ns/repo@main/data/x.parquet", NULL, "data/x.parquet"},
      {"hf://buckets/ns/name/x.parquet", NULL, "x.parquet"},
      {"file:///abs/x.parquet", NULL, "/abs/x.parquet"},
      {"/abs/x.parquet", NULL, "/abs/x.parquet"},
      {"http://host/p/x.parquet", NULL, "p/x.parquet"},
      {"https://host:8080/p/x.parquet", NULL, "p/x.parquet"},
      {"/data/corpora/bucket/a/b.parquet", "/data/corpora/bucket", "a/b.parquet"},
      {"/data/corpora/bucket/a/b.parquet", "/data/corpora/bucket/", "a/b.parquet"},
      {"/data/corpora/bucket/a/b.parquet", "/data/corpora/./bucket", "a/b.parquet"},
      {"file:///data/corpora/x.parquet", "/data/corpora", "x.parquet"},
      {"/x.parquet", "/", "x.parquet"},
      {"s3://bucket/a/b.parquet", "/data", "a/b.parquet"}, /* id_root is local only */
  };
  vf_error err;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *key = NULL;
    vf_status st = corpus_bare_key(cases[i][0], cases[i][1], &key, &err);
    if (st != VF_OK) {
      vf_test_fail(__FILE__, __LINE__, "%s: %s", cases[i][0], err.msg);
      continue;
    }
    CHECK_EQ_STR(key, cases[i][2]);
    free(key);
  }
  char *key = (char *)1;
  /* not under id_root: a sibling with a common string prefix does not count */
  CHECK_STATUS(corpus_bare_key("/data/corpora2/x.parquet", "/data/corpora", &key, &err),
               VF_ECONFIG);
  CHECK(key == NULL);
  CHECK(strstr(err.msg, "/data/corpora2/x.parquet") != NULL && strstr(err.msg, "id_root") != NULL);
  CHECK_STATUS(corpus_bare_key("/data/corpora", "/data/corpora", &key, &err), VF_ECONFIG);
  CHECK_STATUS(corpus_bare_key("gs://b/x", NULL, &key, &err), VF_EUSAGE);
}

/* -------------------------------------------------------------- point ids */

VF_TEST(test_point_ids_match_md5sum) {
  /* printf '%s' 'KEY:ROW' | md5sum, split 8-4-4-4-12 */
  static const struct {
    const char *key;
    uint64_t row;
    const char *want;
  } v[] = {
      {"/abs/x.parquet", 7, "73ad420c-9124-58bf-2bb0-7eb98c732827"},
      {"/abs/x.parquet", 0, "eebe6c15-2eca-b572-91f4-8722c3236e28"},
      {"a/b.parquet", 123456789, "67b52bc6-5568-c55b-bb7f-598a1ff9ae1f"},
      {"data/x.parquet", UINT64_MAX, "f028353b-1023-c916-5f24-4bcbc26e11fe"},
      {"x.parquet", 3, "a85e33f3-6133-e638-ce4a-40f5f1bdb5fa"},
      {"/data/corpora/rank00/batch_00000001.parquet", 41, "82b2c3c1-d0d2-903b-0dc1-650e042b29a3"},
      {"rank00/batch_00000001.parquet", 41, "3e9329a5-ef23-d214-ca6b-7800f41b62cf"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    char id[37];
    memset(id, 'z', sizeof id);
    corpus_point_id(v[i].key, strlen(v[i].key), v[i].row, id);
    CHECK_EQ_STR(id, v[i].want);
  }
  /* key_len is honoured (the key need not be NUL-terminated) */
  char id[37];
  corpus_point_id("x.parquetGARBAGE", 9, 3, id);
  CHECK_EQ_STR(id, "a85e33f3-6133-e638-ce4a-40f5f1bdb5fa");
}

/* -------------------------------------------------------------- discovery */

static void touch(const char *root, const char *rel, size_t size) {
  char path[4400];
  mkdir(root, 0777);
  snprintf(path, sizeof path, "%s/%s", root, rel);
  /* mkdir -p the parents */
  for (char *p = path + strlen(root) + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0777);
      *p = '/';
    }
  }
  FILE *fp = fopen(path, "wb");
  if (!fp) {
    vf_test_fail(__FILE__, __LINE__, "cannot create %s", path);
    return;
  }
  for (size_t i = 0; i < size; i++)
    fputc('x', fp);
  fclose(fp);
}

VF_TEST(test_discover_tree) {
  char root[4200];
  snprintf(root, sizeof root, "%s/corpus", vf_test_tmpdir());
  mkdir(root, 0777);
  touch(root, "b/rank01/batch_2.parquet", 20);
  touch(root, "b/rank00/batch_1.parquet", 10);
  touch(root, "a.parquet", 1);
  touch(root, "B.parquet", 2);                    /* 'B' < 'a' byte-wise */
  touch(root, "eval/queries_100.parquet", 5);     /* eval at depth 1 */
  touch(root, "b/eval/x.parquet", 5);             /* eval at depth 2 */
  touch(root, "b/rank00/eval/deep/y.parquet", 5); /* eval at depth 3 */
  touch(root, "evaluation/kept.parquet", 3);      /* "eval" must be a whole component */
  touch(root, "b/eval.parquet", 4);               /* a file named eval.parquet is kept */
  touch(root, "notes.txt", 1);
  touch(root, "b/x.parquet.tmp", 1);
  touch(root, "b/x.parq", 1);
  char other[4300], link[4400];
  snprintf(other, sizeof other, "%s/outside", vf_test_tmpdir());
  touch(other, "linked.parquet", 7);
  touch(other, "sub/in_linked_dir.parquet", 7);
  snprintf(other, sizeof other, "%s/outside/linked.parquet", vf_test_tmpdir());
  snprintf(link, sizeof link, "%s/c_link.parquet", root);
  CHECK(symlink(other, link) == 0); /* symlinked file: included under its link name */
  snprintf(other, sizeof other, "%s/outside/sub", vf_test_tmpdir());
  snprintf(link, sizeof link, "%s/dirlink", root);
  CHECK(symlink(other, link) == 0); /* symlinked dir: not descended */
  snprintf(link, sizeof link, "%s/b/loop", root);
  CHECK(symlink(root, link) == 0); /* would loop if followed */
  snprintf(other, sizeof other, "%s/missing.parquet", vf_test_tmpdir());
  snprintf(link, sizeof link, "%s/dangling.parquet", root);
  CHECK(symlink(other, link) == 0); /* dangling: skipped */

  corpus_files f;
  vf_error err;
  char uri[4300];
  snprintf(uri, sizeof uri, "%s/", root); /* trailing slash is fine */
  CHECK_OK(corpus_discover(uri, NULL, &f, &err));
  static const char *const want[] = {"B.parquet",
                                     "a.parquet",
                                     "b/eval.parquet",
                                     "b/rank00/batch_1.parquet",
                                     "b/rank01/batch_2.parquet",
                                     "c_link.parquet",
                                     "evaluation/kept.parquet"};
  static const uint64_t sizes[] = {2, 1, 4, 10, 20, 7, 3};
  size_t nwant = sizeof want / sizeof want[0];
  CHECK_EQ_INT(f.n, nwant);
  CHECK_EQ_STR(f.prefix, root);
  for (size_t i = 0; i < f.n && i < nwant; i++) {
    char full[4400];
    snprintf(full, sizeof full, "%s/%s", root, want[i]);
    CHECK_EQ_STR(f.files[i].uri, full);
    CHECK_EQ_STR(f.files[i].key, full);
    CHECK_EQ_INT(f.files[i].size, sizes[i]);
  }
  /* corpus_open reads the discovered file */
  io_source *src = NULL;
  if (f.n) {
    CHECK_OK(corpus_open(&f.files[0], &src, &err));
    if (src) CHECK_EQ_INT(src->size, 2);
    io_close(src);
  }
  corpus_files_free(&f);
  CHECK(f.files == NULL && f.n == 0 && f.prefix == NULL);

  /* with id_root the keys are relative, and the order follows the keys */
  CHECK_OK(corpus_discover(root, root, &f, &err));
  CHECK_EQ_INT(f.n, nwant);
  for (size_t i = 0; i < f.n && i < nwant; i++)
    CHECK_EQ_STR(f.files[i].key, want[i]);
  corpus_files_free(&f);

  /* file:// works the same */
  snprintf(uri, sizeof uri, "file://%s", root);
  CHECK_OK(corpus_discover(uri, vf_test_tmpdir(), &f, &err));
  CHECK_EQ_INT(f.n, nwant);
  if (f.n) CHECK_EQ_STR(f.files[0].key, "corpus/B.parquet");
  corpus_files_free(&f);

  /* id_root that does not contain the files */
  CHECK_STATUS(corpus_discover(root, "/nonexistent-root", &f, &err), VF_ECONFIG);
  CHECK(f.files == NULL && f.n == 0);

  /* a single file: itself, prefix = its directory; the eval rule is for discovery only */
  snprintf(uri, sizeof uri, "%s/b/rank00/batch_1.parquet", root);
  CHECK_OK(corpus_discover(uri, NULL, &f, &err));
  CHECK_EQ_INT(f.n, 1);
  char dir[4400];
  snprintf(dir, sizeof dir, "%s/b/rank00", root);
  CHECK_EQ_STR(f.prefix, dir);
  if (f.n) {
    CHECK_EQ_STR(f.files[0].key, uri);
    CHECK_EQ_INT(f.files[0].size, 10);
  }
  corpus_files_free(&f);
  snprintf(uri, sizeof uri, "%s/eval/queries_100.parquet", root);
  CHECK_OK(corpus_discover(uri, root, &f, &err));
  if (f.n) CHECK_EQ_STR(f.files[0].key, "eval/queries_100.parquet");
  corpus_files_free(&f);
}

VF_TEST(test_discover_errors) {
  corpus_files f;
  vf_error err;
  char path[4300];
  snprintf(path, sizeof path, "%s/missing-dir", vf_test_tmpdir());
  CHECK_STATUS(corpus_discover(path, NULL, &f, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, path) != NULL);
  snprintf(path, sizeof path, "%s/empty", vf_test_tmpdir());
  mkdir(path, 0777);
  touch(path, "eval/only.parquet", 1);
  touch(path, "readme.md", 1);
  CHECK_STATUS(corpus_discover(path, NULL, &f, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, path) != NULL);
  CHECK(f.files == NULL && f.prefix == NULL);
  /* remote corpora: an unreachable endpoint is a network error naming the URI, fast */
  setenv("VFORGE_REMOTE_RETRIES", "0", 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9", 1);
  setenv("AWS_ACCESS_KEY_ID", "AKUNIT", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SKUNIT", 1);
  CHECK_STATUS(corpus_discover("s3://bucket/prefix/", NULL, &f, &err), VF_ENET);
  CHECK(strstr(err.msg, "s3://bucket/prefix") != NULL);
  CHECK(strstr(err.msg, "SKUNIT") == NULL);
  CHECK_STATUS(corpus_discover("hf://datasets/ns/repo", NULL, &f, &err), VF_ENET);
  CHECK(strstr(err.msg, "hf://datasets/ns/repo") != NULL);
  CHECK_STATUS(corpus_discover("http://127.0.0.1:9/x.parquet", NULL, &f, &err), VF_ENET);
  CHECK_STATUS(corpus_discover("http://127.0.0.1:9/dir/", NULL, &f, &err), VF_EUSAGE);
  CHECK_STATUS(corpus_discover("ftp://host/x", NULL, &f, &err), VF_EUSAGE);
  CHECK_STATUS(corpus_discover("/dev/null", NULL, &f, &err), VF_EUSAGE);
}

/* --------------------------------------------------------- id expressions */

typedef struct fake_row {
  const char *name[4];
  corpus_value val[4];
  int calls;
} fake_row;

static vf_status fake_get(void *user, const char *column, corpus_value *out, vf_error *err) {
  fake_row *r = user;
  r->calls++;
  for (int i = 0; i < 4 && r->name[i]; i++)
    if (strcmp(r->name[i], column) == 0) {
      *out = r->val[i];
      return VF_OK;
    }
  return vf_error_set(err, VF_ENOTFOUND, "no column \"%s\"", column);
}

static corpus_value vint(int64_t i) {
  return (corpus_value){CORPUS_V_INT, i, 0, NULL, 0};
}
static corpus_value vuint(uint64_t u) {
  return (corpus_value){CORPUS_V_UINT, 0, u, NULL, 0};
}
static corpus_value vstr(const char *s) {
  return (corpus_value){CORPUS_V_STR, 0, 0, s, strlen(s)};
}
static corpus_value vnull(void) {
  return (corpus_value){CORPUS_V_NULL, 0, 0, NULL, 0};
}

static fake_row g_row;
static corpus_row_ctx make_ctx(void) {
  memset(&g_row, 0, sizeof g_row);
  g_row.name[0] = "id";
  g_row.val[0] = vuint(17);
  g_row.name[1] = "doc";
  g_row.val[1] = vstr("doc-42");
  g_row.name[2] = "sid";
  g_row.val[2] = vint(-3);
  g_row.name[3] = "row";
  g_row.val[3] = vint(5);
  static const char key[] = "/abs/x.parquet";
  return (corpus_row_ctx){key, sizeof key - 1, 7, 1000, fake_get, &g_row};
}

static corpus_id eval_ok(const char *text, const corpus_row_ctx *ctx) {
  corpus_idexpr *e = NULL;
  corpus_id id;
  memset(&id, 0, sizeof id);
  vf_error err;
  vf_status st = corpus_idexpr_parse(text, &e, &err);
  if (st != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "parse %s: %s", text, err.msg);
    return id;
  }
  st = corpus_idexpr_eval(e, ctx, &id, &err);
  if (st != VF_OK) vf_test_fail(__FILE__, __LINE__, "eval %s: %s", text, err.msg);
  corpus_idexpr_free(e);
  return id;
}

VF_TEST(test_idexpr_eval_forms) {
  corpus_row_ctx ctx = make_ctx();
  corpus_id id;
  /* the default and its spelled-out forms: md5("/abs/x.parquet:7") */
  const char *x7 = "73ad420c-9124-58bf-2bb0-7eb98c732827";
  id = eval_ok(NULL, &ctx);
  CHECK(id.is_uuid);
  CHECK_EQ_STR(id.uuid, x7);
  id = eval_ok("vf_point_id(filename, file_row_number)", &ctx);
  CHECK_EQ_STR(id.uuid, x7);
  id = eval_ok("  VF_POINT_ID ( filename,file_row_number )  ", &ctx);
  CHECK_EQ_STR(id.uuid, x7);
  id = eval_ok("make_point_id(filename, file_row_number)", &ctx);
  CHECK_EQ_STR(id.uuid, x7);
  CHECK_EQ_INT(g_row.calls, 0); /* no column reads for these */
  /* make_point_id variants */
  ctx.file_row = 0;
  id = eval_ok("make_point_id(filename, row)", &ctx); /* "/abs/x.parquet:1000" */
  char want[37];
  corpus_point_id("/abs/x.parquet", 14, 1000, want);
  CHECK_EQ_STR(id.uuid, want);
  id = eval_ok("make_point_id(filename, 0)", &ctx);
  CHECK_EQ_STR(id.uuid, "eebe6c15-2eca-b572-91f4-8722c3236e28");
  id = eval_ok("make_point_id('x.parquet', 3)", &ctx);
  CHECK_EQ_STR(id.uuid, "a85e33f3-6133-e638-ce4a-40f5f1bdb5fa");
  id = eval_ok("make_point_id('lit', -5)", &ctx); /* printf 'lit:-5' | md5sum */
  CHECK_EQ_STR(id.uuid, "c9704b20-aaa5-36a4-c062-50737b7dba65");
  ctx.file_row = 9;
  id = eval_ok("make_point_id(doc, file_row_number)", &ctx); /* 'doc-42:9' */
  CHECK_EQ_STR(id.uuid, "da725ba2-c0f4-2eeb-0316-b91e473f4b12");
  id = eval_ok("make_point_id(\"doc\", \"row\")", &ctx); /* quoted column named row = 5 */
  corpus_point_id("doc-42", 6, 5, want);
  CHECK_EQ_STR(id.uuid, want);
  id = eval_ok("make_point_id('it''s', id)", &ctx);
  corpus_point_id("it's", 4, 17, want);
  CHECK_EQ_STR(id.uuid, want);
  id = eval_ok("make_point_id(filename, sid)", &ctx); /* negative int keeps its sign */
  {
    uint8_t d[16];
    const char *t = "/abs/x.parquet:-3";
    vf_md5(t, strlen(t), d);
    char hex[37];
    snprintf(hex, sizeof hex,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", d[0], d[1],
             d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14],
             d[15]);
    CHECK_EQ_STR(id.uuid, hex);
  }
  /* bare columns */
  id = eval_ok("id", &ctx);
  CHECK(!id.is_uuid);
  CHECK_EQ_INT(id.num, 17);
  g_row.val[0] = vint(123);
  id = eval_ok("id", &ctx);
  CHECK_EQ_INT(id.num, 123);
  g_row.val[0] = vstr("550E8400-E29B-41D4-A716-446655440000");
  id = eval_ok("id", &ctx);
  CHECK(id.is_uuid);
  CHECK_EQ_STR(id.uuid, "550e8400-e29b-41d4-a716-446655440000");
  /* row */
  id = eval_ok("row", &ctx);
  CHECK(!id.is_uuid);
  CHECK_EQ_INT(id.num, 1000);
  id = eval_ok("ROW", &ctx);
  CHECK_EQ_INT(id.num, 1000);
  id = eval_ok("\"row\"", &ctx); /* the quoted column, not the keyword */
  CHECK_EQ_INT(id.num, 5);
  /* hash: first 8 bytes of md5 of the text, big-endian */
  id = eval_ok("hash(doc)", &ctx);
  {
    uint8_t d[16];
    vf_md5("doc-42", 6, d);
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
      h = (h << 8) | d[i];
    CHECK(!id.is_uuid);
    CHECK(id.num == h);
  }
  g_row.val[1] = vstr("hello"); /* printf hello | md5sum = 5d41402abc4b2a76... */
  id = eval_ok("hash(doc)", &ctx);
  CHECK(id.num == 0x5d41402abc4b2a76ull);
  g_row.val[1] = vint(42); /* 42 -> a1d0c6e83f027327... */
  id = eval_ok("hash(doc)", &ctx);
  CHECK(id.num == 0xa1d0c6e83f027327ull);
  id = eval_ok("hash(sid)", &ctx); /* -3 -> b3149ecea4628efd... */
  CHECK(id.num == 0xb3149ecea4628efdull);
  g_row.val[1] = vuint(UINT64_MAX); /* 7e7825a3d8588a75... */
  id = eval_ok("hash(doc)", &ctx);
  CHECK(id.num == 0x7e7825a3d8588a75ull);
  /* uuid(): random v4, different each call */
  corpus_id a = eval_ok("uuid()", &ctx), b = eval_ok("uuid( )", &ctx);
  CHECK(a.is_uuid && b.is_uuid);
  CHECK(strcmp(a.uuid, b.uuid) != 0);
  CHECK_EQ_INT(strlen(a.uuid), 36);
  CHECK(a.uuid[14] == '4');
  CHECK(strchr("89ab", a.uuid[19]) != NULL);
}

VF_TEST(test_idexpr_columns_and_determinism) {
  static const struct {
    const char *text;
    int n;
    const char *c0, *c1;
    bool det;
  } v[] = {
      {"vf_point_id(filename, file_row_number)", 0, NULL, NULL, true},
      {"make_point_id(doc, id)", 2, "doc", "id", true},
      {"make_point_id(doc, doc)", 1, "doc", NULL, true},
      {"make_point_id('k', id)", 1, "id", NULL, true},
      {"id", 1, "id", NULL, true},
      {"hash(\"my col\")", 1, "my col", NULL, true},
      {"row", 0, NULL, NULL, true},
      {"uuid()", 0, NULL, NULL, false},
  };
  vf_error err;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    corpus_idexpr *e = NULL;
    CHECK_OK(corpus_idexpr_parse(v[i].text, &e, &err));
    if (!e) continue;
    int n = -1;
    const char *const *cols = corpus_idexpr_columns(e, &n);
    CHECK_EQ_INT(n, v[i].n);
    if (n >= 1 && v[i].c0) CHECK_EQ_STR(cols[0], v[i].c0);
    if (n >= 2 && v[i].c1) CHECK_EQ_STR(cols[1], v[i].c1);
    CHECK(corpus_idexpr_deterministic(e) == v[i].det);
    corpus_idexpr_free(e);
  }
  corpus_idexpr_free(NULL);
}

VF_TEST(test_idexpr_parse_errors) {
  static const struct {
    const char *text;
    size_t col;
    const char *frag;
  } v[] = {
      {"", 1, "empty expression"},
      {"   ", 4, "empty expression"},
      {"vf_point_id(filename, row)", 23, "expected file_row_number"},
      {"vf_point_id(file_row_number, filename)", 13, "expected filename"},
      {"vf_point_id(filename file_row_number)", 22, "expected ','"},
      {"vf_point_id(filename, file_row_number", 38, "expected ')'"},
      {"make_point_id(filename,)", 24, "expected a row number"},
      {"make_point_id(, 1)", 15, "expected a key"},
      {"make_point_id(filename, 1) x", 28, "unexpected text"},
      {"make_point_id(filename, 99999999999999999999)", 25, "out of range"},
      {"make_point_id(filename, 12abc)", 25, "malformed integer"},
      {"make_point_id('abc, 1)", 15, "unterminated string"},
      {"hash()", 6, "expected a column name"},
      {"hash(row)", 6, "expected a column name"},
      {"hash(a, b)", 7, "expected ')'"},
      {"uuid(x)", 6, "uuid takes no arguments"},
      {"md5(x)", 4, "unknown function"},
      {"filename", 1, "only valid inside"},
      {"id + 1", 4, "unexpected character '+'"},
      {"\"\"", 1, "empty quoted column name"},
      {"\"abc", 1, "unterminated quoted column name"},
      {"id\x01", 3, "unexpected byte 0x01"},
      {"hash", 5, "expected '('"},
  };
  vf_error err;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    corpus_idexpr *e = (corpus_idexpr *)1;
    vf_status st = corpus_idexpr_parse(v[i].text, &e, &err);
    if (st != VF_ECONFIG) {
      vf_test_fail(__FILE__, __LINE__, "\"%s\" -> %s, want config", v[i].text, vf_status_name(st));
      if (st == VF_OK) corpus_idexpr_free(e);
      continue;
    }
    CHECK(e == NULL);
    char colmsg[64];
    snprintf(colmsg, sizeof colmsg, "at column %zu", v[i].col);
    if (!strstr(err.msg, v[i].frag) || !strstr(err.msg, colmsg) || !strstr(err.msg, v[i].text))
      vf_test_fail(__FILE__, __LINE__, "\"%s\": message \"%s\" lacks \"%s\" / \"%s\"", v[i].text,
                   err.msg, v[i].frag, colmsg);
  }
}

VF_TEST(test_idexpr_eval_errors) {
  corpus_row_ctx ctx = make_ctx();
  static const struct {
    const char *text;
    int slot;
    corpus_value val;
    vf_status want;
    const char *frag;
  } v[] = {
      {"id", 0, {CORPUS_V_NULL, 0, 0, NULL, 0}, VF_ECORRUPT, "is null"},
      {"id", 0, {CORPUS_V_INT, -1, 0, NULL, 0}, VF_ECORRUPT, "is negative (-1)"},
      {"id", 0, {CORPUS_V_STR, 0, 0, "not-a-uuid", 10}, VF_ECORRUPT, "not a UUID"},
      {"id",
       0,
       {CORPUS_V_STR, 0, 0, "550e8400e29b41d4a716446655440000", 32},
       VF_ECORRUPT,
       "not a UUID"},
      {"id",
       0,
       {CORPUS_V_STR, 0, 0, "550e8400-e29b-41d4-a716-44665544000g", 36},
       VF_ECORRUPT,
       "not a UUID"},
      {"hash(id)", 0, {CORPUS_V_NULL, 0, 0, NULL, 0}, VF_ECORRUPT, "is null"},
      {"make_point_id(filename, id)", 0, {CORPUS_V_STR, 0, 0, "7", 1}, VF_ECORRUPT, "is a string"},
      {"make_point_id(id, 1)", 0, {CORPUS_V_NULL, 0, 0, NULL, 0}, VF_ECORRUPT, "is null"},
      {"missing", -1, {CORPUS_V_NULL, 0, 0, NULL, 0}, VF_ENOTFOUND, "no column \"missing\""},
  };
  vf_error err;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    ctx = make_ctx();
    if (v[i].slot >= 0) g_row.val[v[i].slot] = v[i].val;
    corpus_idexpr *e = NULL;
    CHECK_OK(corpus_idexpr_parse(v[i].text, &e, &err));
    if (!e) continue;
    corpus_id id;
    vf_status st = corpus_idexpr_eval(e, &ctx, &id, &err);
    corpus_idexpr_free(e);
    if (st != v[i].want) {
      vf_test_fail(__FILE__, __LINE__, "%s -> %s", v[i].text, vf_status_name(st));
      continue;
    }
    CHECK(strstr(err.msg, v[i].frag) != NULL);
    if (st == VF_ECORRUPT) /* names the file, the row and the column */
      CHECK(strstr(err.msg, "/abs/x.parquet row 7: id column \"id\"") != NULL);
  }
  (void)vnull;
}
