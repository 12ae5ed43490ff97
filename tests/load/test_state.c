/* The load state file (src/load/state.c): written atomically and read back exactly, and every
 * malformed or truncated variant rejected with VF_ECORRUPT (never a crash or a partial state). */
#include <stdio.h>
#include <stdlib.h>

#include "load/internal.h"
#include "vf_test.h"

static char *path_in_tmp(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", vf_test_tmpdir(), name);
  return buf;
}

static void write_text(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(text, 1, len, f) == len);
  fclose(f);
}

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 16);
  *len = fread(buf, 1, (1 << 16) - 1, f);
  fclose(f);
  return buf;
}

VF_TEST(state_round_trip) {
  char *keys[] = {"/data/a \"quoted\" \\ file.parquet", "s3/\xc3\xa9t\xc3\xa9/\x01tab\t.parquet"};
  ld_state s = {0};
  s.num_jobs = 3;
  s.job_rank = 2;
  s.offset = 5;
  s.limit = 18446744073709551615ull;
  s.id_expression = "make_point_id('x', row)";
  s.files_total = 4;
  s.points = 123456789012ull;
  s.skipped_rows = 7;
  s.completed = keys;
  s.ncompleted = 2;
  s.current_key = "/data/c.parquet";
  s.current_row = 4242;
  vf_error err;
  const char *p = path_in_tmp("rank002-of-003.json");
  CHECK_OK(ld_state_write(p, &s, &err));
  ld_state r;
  CHECK_OK(ld_state_read(p, &r, &err));
  CHECK_EQ_INT(r.num_jobs, 3);
  CHECK_EQ_INT(r.job_rank, 2);
  CHECK(r.offset == 5 && r.limit == s.limit && r.points == s.points);
  CHECK_EQ_INT(r.skipped_rows, 7);
  CHECK_EQ_INT(r.files_total, 4);
  CHECK(!r.done);
  CHECK_EQ_STR(r.id_expression, s.id_expression);
  CHECK_EQ_INT(r.ncompleted, 2);
  if (r.ncompleted == 2) {
    CHECK_EQ_STR(r.completed[0], keys[0]);
    CHECK_EQ_STR(r.completed[1], keys[1]);
  }
  CHECK_EQ_STR(r.current_key, "/data/c.parquet");
  CHECK_EQ_INT(r.current_row, 4242);
  ld_state_free(&r);
  /* done, no current file */
  s.done = true;
  s.current_key = NULL;
  s.ncompleted = 0;
  CHECK_OK(ld_state_write(p, &s, &err));
  CHECK_OK(ld_state_read(p, &r, &err));
  CHECK(r.done && r.current_key == NULL && r.ncompleted == 0);
  ld_state_free(&r);
}

VF_TEST(state_missing_is_notfound) {
  ld_state r;
  vf_error err;
  CHECK_STATUS(ld_state_read(path_in_tmp("nope.json"), &r, &err), VF_ENOTFOUND);
}

VF_TEST(state_truncated_and_malformed_rejected) {
  char *keys[] = {"/a.parquet"};
  ld_state s = {0};
  s.num_jobs = 1;
  s.id_expression = "vf_point_id(filename, file_row_number)";
  s.completed = keys;
  s.ncompleted = 1;
  s.current_key = "/b.parquet";
  s.current_row = 9;
  vf_error err;
  const char *good = path_in_tmp("good.json");
  CHECK_OK(ld_state_write(good, &s, &err));
  size_t len = 0;
  char *text = read_text(good, &len);
  CHECK(text && len > 40);
  if (!text) return;
  const char *bad = path_in_tmp("bad.json");
  ld_state r;
  /* every proper prefix (the file ends in "}\n": all but the last byte are incomplete) */
  for (size_t n = 0; n + 1 < len; n++) {
    write_text(bad, text, n);
    vf_status st = ld_state_read(bad, &r, &err);
    if (st != VF_ECORRUPT) vf_test_fail(__FILE__, __LINE__, "prefix of %zu bytes: %s", n, vf_status_name(st));
    CHECK(r.completed == NULL && r.current_key == NULL && r.id_expression == NULL);
  }
  static const char *const cases[] = {
      "{\"version\":1}",                                                       /* keys missing */
      "[]",
      "{\"version\":2,\"num_jobs\":1}",                                         /* unknown version */
      "{\"bogus\":1}",
      "{\"version\":1,\"version\":1}",                                          /* repeated */
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":1,\"offset\":0,\"limit\":0,\"id_expression\":\"\","
      "\"files_total\":1,\"done\":false,\"points\":0,\"skipped_rows\":0,\"completed\":[],\"current\":null}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":99999999999999999999,\"limit\":0}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"\\x\"}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"\\u00\"}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"a\\u0000b\"}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"\","
      "\"files_total\":1,\"done\":maybe}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"\","
      "\"files_total\":1,\"done\":false,\"points\":0,\"skipped_rows\":0,\"completed\":[1],\"current\":null}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"\","
      "\"files_total\":1,\"done\":false,\"points\":0,\"skipped_rows\":0,\"completed\":[],"
      "\"current\":{\"key\":\"a\"}}",
      "{\"version\":1,\"num_jobs\":1,\"job_rank\":0,\"offset\":0,\"limit\":0,\"id_expression\":\"\","
      "\"files_total\":1,\"done\":false,\"points\":-1,\"skipped_rows\":0,\"completed\":[],\"current\":null}",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_text(bad, cases[i], strlen(cases[i]));
    vf_status st = ld_state_read(bad, &r, &err);
    if (st != VF_ECORRUPT) vf_test_fail(__FILE__, __LINE__, "case %zu: %s", i, vf_status_name(st));
    else CHECK(strstr(err.msg, "bad.json") != NULL && strstr(err.msg, "byte") != NULL);
  }
  /* trailing garbage after a valid object */
  char *more = calloc(1, len + 8);
  memcpy(more, text, len);
  memcpy(more + len, "x", 1);
  write_text(bad, more, len + 1);
  CHECK_STATUS(ld_state_read(bad, &r, &err), VF_ECORRUPT);
  free(more);
  free(text);
}

VF_TEST(report_json_keys) {
  ld_report r = {0};
  r.points = 6000;
  r.files = 2;
  r.bytes_read = 99;
  r.seconds = 0.5;
  r.points_per_s = 12000;
  r.retries = 1;
  r.skipped_rows = 3;
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err;
  CHECK_OK(ld_report_json(&r, &b, &err));
  CHECK_OK(vf_buf_append(&b, "", 1, &err));
  const char *j = (const char *)b.data;
  CHECK(strncmp(j, "{\"points\":6000,\"files\":2,\"bytes_read\":99,\"seconds\":0.5,", 55) == 0);
  CHECK(strstr(j, "\"points_per_s\":12000") != NULL);
  CHECK(strstr(j, "\"retries\":1,\"skipped_rows\":3,\"empty_files\":0}") != NULL);
  vf_buf_free(&b);
  ld_options o;
  ld_options_default(&o);
  CHECK(o.num_jobs == 1 && o.job_rank == 0 && o.manage_indexing && o.skip_bad_rows == -1);
}
