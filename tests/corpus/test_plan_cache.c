/* Unit tests for the corpus plan's footer cache (src/corpus/plan.c, issue 15 item 2): while a
 * plan lives, the first open of a file parses its footer and keeps it, later opens of the same
 * file open over the kept copy (no second parse, the same metadata and the same decoded rows);
 * the cache honours its byte cap (least recently used dropped, a footer over the cap not kept,
 * still read correctly) and is emptied with the last plan.  tests/corpus/test_plan_footers.sh
 * proves the same over HTTP by counting the server's footer reads.
 * Fixture: examples/corpus (2 files x 3000 rows). */
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

static bool example(corpus_files *fs) {
  char path[4096];
  snprintf(path, sizeof path, "%s/examples/corpus", src_dir());
  vf_error err;
  if (corpus_discover(path, NULL, fs, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "discover %s: %s", path, err.msg);
    return false;
  }
  return true;
}

/* The scan checksum of the corpus (every column decoded). */
static double scan_sum(const corpus_files *fs) {
  corpus_scan_result r;
  vf_error err;
  memset(&r, 0, sizeof r);
  vf_status st = corpus_scan(fs, NULL, 0, 1, &r, &err);
  if (st != VF_OK) vf_test_fail(__FILE__, __LINE__, "scan: %s", err.msg);
  return r.checksum + (double)r.rows;
}

VF_TEST(plan_keeps_each_footer_once) {
  corpus_files fs;
  if (!example(&fs)) return;
  vf_error err;
  double want = scan_sum(&fs);
  corpus_footer_stats s0 = corpus_footer_cache_stats();
  CHECK_EQ_INT(s0.bytes, 0); /* no plan alive: nothing kept */
  corpus_plan plan;
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  CHECK_OK(corpus_plan_measure(&plan, &err));
  corpus_footer_stats s1 = corpus_footer_cache_stats();
  CHECK_EQ_INT(s1.parsed - s0.parsed, fs.n);
  CHECK(s1.bytes > 0);
  /* readers of the planned files open over the kept footers: the same metadata */
  for (size_t i = 0; i < fs.n; i++) {
    pqt_file *a = NULL, *b = NULL;
    io_source *src = NULL;
    CHECK_OK(corpus_open_parquet(&fs.files[i], NULL, &a, &err));
    CHECK_OK(corpus_open(&fs.files[i], &src, &err));
    CHECK_OK(pqt_open(src, NULL, &b, &err));
    if (a && b) {
      CHECK_EQ_INT(pqt_meta(a)->num_rows, pqt_meta(b)->num_rows);
      CHECK_EQ_INT(pqt_meta(a)->nrow_groups, pqt_meta(b)->nrow_groups);
      CHECK_EQ_INT(pqt_meta(a)->nkv, pqt_meta(b)->nkv);
      CHECK_EQ_INT(pqt_schema_of(a)->nleaves, pqt_schema_of(b)->nleaves);
      CHECK_EQ_INT(pqt_source(a)->bytes_read, pqt_source(b)->bytes_read); /* logical count */
    }
    pqt_close(a);
    pqt_close(b);
  }
  corpus_footer_stats s2 = corpus_footer_cache_stats();
  CHECK_EQ_INT(s2.parsed, s1.parsed);
  CHECK_EQ_INT(s2.hits - s1.hits, fs.n);
  /* a scan inside the plan decodes the same rows over the kept footers, parsing none */
  CHECK(scan_sum(&fs) == want);
  CHECK_EQ_INT(corpus_footer_cache_stats().parsed, s1.parsed);
  corpus_plan_free(&plan);
  CHECK_EQ_INT(corpus_footer_cache_stats().bytes, 0); /* emptied with the last plan */
  corpus_files_free(&fs);
}

VF_TEST(plan_cache_cap) {
  corpus_files fs;
  if (!example(&fs)) return;
  CHECK(fs.n >= 2);
  vf_error err;
  double want = scan_sum(&fs);
  corpus_plan plan;
  /* room for about one footer: measuring the second drops the first (least recently used) */
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  pqt_file *f = NULL;
  corpus_footer_stats s0 = corpus_footer_cache_stats();
  CHECK_OK(corpus_open_parquet(&fs.files[0], NULL, &f, &err));
  pqt_close(f);
  size_t one = corpus_footer_cache_stats().bytes;
  CHECK(one > 0);
  corpus_footer_cache_set_max(one + one / 2);
  CHECK_OK(corpus_plan_measure(&plan, &err));
  corpus_footer_stats s1 = corpus_footer_cache_stats();
  CHECK(s1.dropped - s0.dropped >= 1);
  CHECK(s1.bytes <= one + one / 2);
  CHECK(scan_sum(&fs) == want); /* dropped footers are read again: the same rows */
  corpus_plan_free(&plan);
  /* a cap below any footer keeps none, and reading is unchanged */
  corpus_footer_cache_set_max(1);
  CHECK_OK(corpus_plan_init(&plan, &fs, &err));
  uint64_t parsed = corpus_footer_cache_stats().parsed;
  CHECK_OK(corpus_plan_measure(&plan, &err));
  CHECK(scan_sum(&fs) == want);
  CHECK_EQ_INT(corpus_footer_cache_stats().parsed, parsed);
  CHECK_EQ_INT(corpus_footer_cache_stats().bytes, 0);
  corpus_plan_free(&plan);
  corpus_footer_cache_set_max(0);
  corpus_files_free(&fs);
}
