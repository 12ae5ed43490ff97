/* The Arrow C Data Interface exporter (src/corpus/arrow_*.c, include/vforge/arrow.h): schema and
 * values of every column kind on a file written here with the project's writer (ints, floats,
 * bools, nullable strings, lists of floats and strings, a dense vector, a multivector as a
 * nested list, a sparse vector), the examples corpus (ids against corpus_point_id, vectors
 * against the record reader, provenance), bad rows as errors or dropped with the payload of the
 * kept rows still aligned, a schema clash between files, the end of the stream, and ownership:
 * children moved out by the consumer and released after their parent, schemas exported twice.
 * Run under ASan+UBSan by `make test-asan`, which checks every release path for leaks and
 * use-after-free.  The pyarrow / polars / DuckDB side is tests/python/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vforge/arrow.h"
#include "vforge/corpus.h"
#include "vforge/format.h"

static const char *src_dir(void) {
  const char *s = getenv("VF_SRC");
  return s && *s ? s : ".";
}

static bool bit(const void *bm, int64_t i) {
  return !bm || (((const uint8_t *)bm)[i >> 3] >> (i & 7)) & 1;
}

static int find_field(const struct ArrowSchema *s, const char *name) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (strcmp(s->children[i]->name, name) == 0) return (int)i;
  return -1;
}

/* ------------------------------------------------------------ written file */

#define NR 7

static bool write_types(const char *path) {
  pqt_wcolumn cols[] = {
      {"i32", PQT_W_INT32, true, 0},       {"i64", PQT_W_INT64, false, 0},
      {"f", PQT_W_FLOAT, false, 0},        {"d", PQT_W_DOUBLE, false, 0},
      {"b", PQT_W_BOOL, true, 0},          {"s", PQT_W_STRING, true, 0},
      {"lf", PQT_W_LIST_FLOAT, true, 0},   {"ls", PQT_W_LIST_STRING, false, 0},
      {"emb", PQT_W_VECTOR, false, 4},     {"mv", PQT_W_LIST_LIST_FLOAT, false, 0},
      {"sp", PQT_W_SPARSE, false, 0}};
  enum { NC = sizeof cols / sizeof cols[0] };
  int32_t i32[NR];
  int64_t i64[NR];
  float f[NR], emb[NR * 4], lfv[64], mvv[64], spv[64];
  double d[NR];
  uint8_t b[NR], v_i32[NR], v_b[NR], v_s[NR], v_lf[NR];
  const char *s[NR] = {"r0", "r1", "r2", NULL, "row four", "r5", ""};
  int64_t lfo[NR + 1], lso[NR + 1], mvo[NR + 1], mvo2[64], spo[NR + 1];
  const char *lss[16];
  uint32_t spi[64];
  int nlf = 0, nls = 0, nmv = 0, nmv2 = 0, nsp = 0;
  lfo[0] = lso[0] = mvo[0] = spo[0] = 0;
  mvo2[0] = 0;
  static const char *const words[] = {"a", "bb", "ccc", "dddd"};
  for (int i = 0; i < NR; i++) {
    i32[i] = i * 10 - 3;
    v_i32[i] = i != 2;
    i64[i] = (int64_t)1 << (40 + i);
    f[i] = (float)i + 0.25f;
    d[i] = (double)i * 1.5;
    b[i] = (uint8_t)(i % 2);
    v_b[i] = i != 5;
    v_s[i] = s[i] != NULL;
    v_lf[i] = i != 4;
    for (int k = 0; k < 4; k++) emb[i * 4 + k] = (float)(i * 4 + k);
    for (int k = 0; v_lf[i] && k < i % 3; k++) lfv[nlf++] = (float)(100 * i + k);
    lfo[i + 1] = nlf;
    for (int k = 0; k < i % 2; k++) lss[nls++] = words[(i + k) % 4];
    lso[i + 1] = nls;
    for (int v = 0; v < i % 2 + 1; v++) {
      mvv[nmv2 * 2] = (float)i;
      mvv[nmv2 * 2 + 1] = (float)v;
      nmv2++;
      mvo2[++nmv] = nmv2 * 2;
    }
    mvo[i + 1] = nmv;
    for (int k = 0; k < i % 3; k++) {
      spi[nsp] = (uint32_t)(i + 10 * k);
      spv[nsp++] = 0.5f * (float)k + (float)i;
    }
    spo[i + 1] = nsp;
  }
  pqt_wbatch bt[NC] = {
      {.values = i32, .valid = v_i32}, {.values = i64}, {.values = f}, {.values = d},
      {.values = b, .valid = v_b}, {.strs = s, .valid = v_s},
      {.values = lfv, .offsets = lfo, .valid = v_lf}, {.strs = lss, .offsets = lso},
      {.values = emb}, {.values = mvv, .offsets = mvo, .offsets2 = mvo2},
      {.values = spv, .offsets = spo, .indices = spi}};
  pqt_writer_opts wo = {.codec = PQT_ZSTD, .row_group_rows = 4};
  pqt_writer *w = NULL;
  vf_error err;
  vf_status st = pqt_writer_open(path, cols, NC, &wo, &w, &err);
  if (st == VF_OK) st = pqt_writer_write(w, bt, NR, &err);
  if (st == VF_OK) st = pqt_writer_close(w, &err);
  else pqt_writer_abort(w);
  if (st != VF_OK) vf_test_fail(__FILE__, __LINE__, "write %s: %s", path, err.msg);
  return st == VF_OK;
}

static const char *child_format(const struct ArrowSchema *s, const char *name) {
  int i = find_field(s, name);
  return i < 0 ? "(missing)" : s->children[i]->format;
}

VF_TEST(arrow_types_and_values) {
  char path[4096];
  snprintf(path, sizeof path, "%s/types.parquet", vf_test_tmpdir());
  if (!write_types(path)) return;
  struct ArrowArrayStream s;
  vf_error err;
  vf_arrow_opts o;
  vf_arrow_opts_default(&o);
  /* found by their shape, `lf` (a list<float> of varying length) is taken for a vector */
  CHECK_STATUS(vf_arrow_open(path, &o, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "'lf'") && strstr(err.msg, "vectors="));
  const char *vecs[] = {"emb", "sp"};
  o.vectors = vecs;
  o.nvectors = 2;
  o.vectors_given = true;
  CHECK_OK(vf_arrow_open(path, &o, &s, &err));
  if (!s.release) {
    vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
    return;
  }
  struct ArrowSchema sc, sc2;
  CHECK_EQ_INT(s.get_schema(&s, &sc), 0);
  CHECK_EQ_INT(s.get_schema(&s, &sc2), 0);
  CHECK_EQ_STR(sc.format, "+s");
  CHECK_EQ_INT(sc.n_children, 14);
  CHECK_EQ_STR(sc.children[0]->name, "__id__");
  CHECK_EQ_STR(child_format(&sc, "__id__"), "u");
  CHECK_EQ_STR(child_format(&sc, "i32"), "i");
  CHECK_EQ_STR(child_format(&sc, "i64"), "l");
  CHECK_EQ_STR(child_format(&sc, "f"), "f");
  CHECK_EQ_STR(child_format(&sc, "d"), "g");
  CHECK_EQ_STR(child_format(&sc, "b"), "b");
  CHECK_EQ_STR(child_format(&sc, "s"), "u");
  CHECK_EQ_STR(child_format(&sc, "lf"), "+l");
  CHECK_EQ_STR(child_format(&sc, "emb"), "+w:4");
  CHECK_EQ_STR(child_format(&sc, "mv"), "+l");
  CHECK_EQ_STR(child_format(&sc, "sp"), "+s");
  CHECK_EQ_STR(child_format(&sc, "__source_file__"), "u");
  CHECK_EQ_STR(child_format(&sc, "__source_row__"), "l");
  CHECK(sc.children[find_field(&sc, "i32")]->flags & ARROW_FLAG_NULLABLE);
  CHECK(!(sc.children[find_field(&sc, "i64")]->flags & ARROW_FLAG_NULLABLE));
  CHECK(!(sc.children[find_field(&sc, "emb")]->flags & ARROW_FLAG_NULLABLE));
  const struct ArrowSchema *mv = sc.children[find_field(&sc, "mv")];
  CHECK_EQ_STR(mv->children[0]->format, "+l");
  CHECK_EQ_STR(mv->children[0]->children[0]->format, "f");
  const struct ArrowSchema *sp = sc.children[find_field(&sc, "sp")];
  CHECK_EQ_STR(sp->children[0]->name, "indices");
  CHECK_EQ_STR(sp->children[0]->children[0]->format, "I");
  CHECK_EQ_STR(sp->children[1]->children[0]->format, "f");
  CHECK(sc.children[find_field(&sc, "emb")]->metadata != NULL);
  sc2.release(&sc2);

  int64_t row0 = 0;
  int batches = 0;
  for (;;) {
    struct ArrowArray a;
    CHECK_EQ_INT(s.get_next(&s, &a), 0);
    if (!a.release) break;
    batches++;
    CHECK_EQ_INT(a.n_children, 14);
    int64_t n = a.length;
    const struct ArrowArray *ai = a.children[find_field(&sc, "i32")];
    const struct ArrowArray *as = a.children[find_field(&sc, "s")];
    const struct ArrowArray *al = a.children[find_field(&sc, "lf")];
    const struct ArrowArray *ab = a.children[find_field(&sc, "b")];
    const struct ArrowArray *ae = a.children[find_field(&sc, "emb")];
    const struct ArrowArray *am = a.children[find_field(&sc, "mv")];
    const struct ArrowArray *ap = a.children[find_field(&sc, "sp")];
    const struct ArrowArray *ar = a.children[find_field(&sc, "__source_row__")];
    const struct ArrowArray *aid = a.children[0];
    for (int64_t k = 0; k < n; k++) {
      int64_t i = row0 + k;
      CHECK_EQ_INT(((const int64_t *)ar->buffers[1])[k], i);
      CHECK_EQ_INT(bit(ai->buffers[0], k), i != 2);
      if (i != 2) CHECK_EQ_INT(((const int32_t *)ai->buffers[1])[k], i * 10 - 3);
      CHECK_EQ_INT(bit(ab->buffers[0], k), i != 5);
      if (i != 5) CHECK_EQ_INT(bit(ab->buffers[1], k), i % 2);
      const int32_t *so = as->buffers[1];
      CHECK_EQ_INT(bit(as->buffers[0], k), i != 3);
      if (i == 4) CHECK(so[k + 1] - so[k] == 8 && memcmp((const char *)as->buffers[2] + so[k], "row four", 8) == 0);
      const int32_t *lo = al->buffers[1];
      CHECK_EQ_INT(bit(al->buffers[0], k), i != 4);
      CHECK_EQ_INT(lo[k + 1] - lo[k], i == 4 ? 0 : i % 3);
      if (i != 4 && i % 3 == 2)
        CHECK(((const float *)al->children[0]->buffers[1])[lo[k] + 1] == (float)(100 * i + 1));
      const float *ev = ae->children[0]->buffers[1];
      for (int j = 0; j < 4; j++) CHECK(ev[k * 4 + j] == (float)(i * 4 + j));
      const int32_t *mo = am->buffers[1], *mo2 = am->children[0]->buffers[1];
      CHECK_EQ_INT(mo[k + 1] - mo[k], i % 2 + 1);
      CHECK_EQ_INT(mo2[mo[k] + 1] - mo2[mo[k]], 2);
      CHECK(((const float *)am->children[0]->children[0]->buffers[1])[mo2[mo[k]]] == (float)i);
      const int32_t *po = ap->children[0]->buffers[1];
      CHECK_EQ_INT(po[k + 1] - po[k], i % 3);
      if (i % 3) CHECK_EQ_INT(((const uint32_t *)ap->children[0]->children[0]->buffers[1])[po[k]], i);
      char want[37];
      corpus_files fs;
      if (k == 0 && corpus_discover(path, NULL, &fs, &err) == VF_OK) {
        corpus_point_id(fs.files[0].key, strlen(fs.files[0].key), (uint64_t)i, want);
        CHECK(memcmp((const char *)aid->buffers[2] + ((const int32_t *)aid->buffers[1])[k], want, 36) == 0);
        corpus_files_free(&fs);
      }
    }
    CHECK_EQ_INT(ai->null_count, row0 <= 2 && 2 < row0 + n);
    row0 += n;
    /* the consumer moves the vector column out, releases the batch, then reads and frees it */
    int ei = find_field(&sc, "emb");
    struct ArrowArray moved = *a.children[ei];
    a.children[ei]->release = NULL;
    a.release(&a);
    CHECK(a.release == NULL);
    CHECK(((const float *)moved.children[0]->buffers[1])[0] == (float)((row0 - n) * 4));
    moved.release(&moved);
  }
  CHECK_EQ_INT(row0, NR);
  CHECK_EQ_INT(batches, 2); /* row groups of 4 and 3 rows */
  struct ArrowArray end;
  CHECK_EQ_INT(s.get_next(&s, &end), 0);
  CHECK(end.release == NULL);
  CHECK(s.get_last_error(&s) == NULL);
  sc.release(&sc);
  s.release(&s);
  CHECK(s.release == NULL);
}

VF_TEST(arrow_columns_vectors_no_id) {
  char path[4096];
  snprintf(path, sizeof path, "%s/types.parquet", vf_test_tmpdir());
  if (!write_types(path)) return;
  const char *cols[] = {"sp", "emb", "s"};
  const char *vecs[] = {"emb"};
  vf_arrow_opts o;
  vf_arrow_opts_default(&o);
  o.columns = cols;
  o.ncolumns = 3;
  o.vectors = vecs;
  o.nvectors = 1;
  o.vectors_given = true;
  o.with_id = false;
  o.provenance = false;
  struct ArrowArrayStream s;
  vf_error err;
  CHECK_OK(vf_arrow_open(path, &o, &s, &err));
  if (!s.release) return;
  struct ArrowSchema sc;
  CHECK_EQ_INT(s.get_schema(&s, &sc), 0);
  CHECK_EQ_INT(sc.n_children, 3);
  CHECK_EQ_STR(sc.children[0]->name, "sp");
  CHECK_EQ_STR(sc.children[0]->children[0]->children[0]->format, "I"); /* payload: as written */
  CHECK_EQ_STR(sc.children[1]->format, "+w:4");
  CHECK_EQ_STR(sc.children[2]->format, "u");
  sc.release(&sc);
  /* the stream may be released with its first batch still unread */
  s.release(&s);
  /* a vector that is not a vector, a column that does not exist */
  const char *bad[] = {"s"};
  o.vectors = bad;
  CHECK_STATUS(vf_arrow_open(path, &o, &s, &err), VF_EUSAGE);
  const char *missing[] = {"nope"};
  o.columns = missing;
  o.ncolumns = 1;
  o.vectors_given = false;
  CHECK_STATUS(vf_arrow_open(path, &o, &s, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "nope") != NULL);
}

/* ------------------------------------------------------------ example corpus */

VF_TEST(arrow_example_corpus_matches_records) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/corpus", src_dir());
  struct ArrowArrayStream s;
  vf_error err;
  CHECK_OK(vf_arrow_open(dir, NULL, &s, &err));
  if (!s.release) return;
  corpus_files fs;
  CHECK_OK(corpus_discover(dir, NULL, &fs, &err));
  static const corpus_vec_source vs[] = {{"emb", CORPUS_VEC_DENSE, CORPUS_COSINE, "emb"}};
  corpus_record_spec spec = {.vectors = vs, .nvectors = 1};
  struct ArrowSchema sc;
  CHECK_EQ_INT(s.get_schema(&s, &sc), 0);
  int ie = find_field(&sc, "emb"), ifile = find_field(&sc, "__source_file__");
  CHECK(ie > 0 && ifile > 0);
  uint64_t total = 0;
  for (size_t fi = 0; fi < fs.n; fi++) {
    corpus_records *r = NULL;
    CHECK_OK(corpus_records_open(&fs.files[fi], &spec, 0, &r, &err));
    if (!r) break;
    corpus_batch b = {0};
    for (int rg = 0; rg < corpus_records_row_groups(r); rg++) {
      CHECK_OK(corpus_records_read(r, rg, corpus_records_row_group_first(r, rg), &b, NULL, &err));
      struct ArrowArray a;
      CHECK_EQ_INT(s.get_next(&s, &a), 0);
      if (!a.release) break;
      CHECK_EQ_INT(a.length, (int64_t)b.n);
      const float *v = a.children[ie]->children[0]->buffers[1];
      size_t dim = (size_t)b.vectors[0].dim;
      CHECK(memcmp(v, b.vectors[0].dense, b.n * dim * sizeof(float)) == 0);
      const struct ArrowArray *af = a.children[ifile];
      size_t kl = strlen(fs.files[fi].key);
      CHECK(memcmp(af->buffers[2], fs.files[fi].key, kl) == 0);
      const struct ArrowArray *aid = a.children[0];
      for (size_t k = 0; k < b.n; k += 97)
        CHECK(memcmp((const char *)aid->buffers[2] + 36 * k, b.ids[k].uuid, 36) == 0);
      total += b.n;
      a.release(&a);
    }
    corpus_batch_free(&b);
    corpus_records_close(r);
  }
  CHECK_EQ_INT(total, 6000);
  sc.release(&sc);
  s.release(&s);
  corpus_files_free(&fs);
}

/* ------------------------------------------------------------ bad rows */

VF_TEST(arrow_bad_rows_error_or_skip_keeps_payload_aligned) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/dim_mismatch.parquet", src_dir());
  struct ArrowArrayStream s;
  vf_error err;
  CHECK_STATUS(vf_arrow_open(path, NULL, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 3") != NULL);
  vf_arrow_opts o;
  vf_arrow_opts_default(&o);
  o.skip_bad_rows = true;
  CHECK_OK(vf_arrow_open(path, &o, &s, &err));
  if (!s.release) return;
  struct ArrowSchema sc;
  CHECK_EQ_INT(s.get_schema(&s, &sc), 0);
  int iid = find_field(&sc, "id"), irow = find_field(&sc, "__source_row__");
  struct ArrowArray a;
  CHECK_EQ_INT(s.get_next(&s, &a), 0);
  if (a.release) {
    CHECK_EQ_INT(a.length, 5);
    const int64_t *ids = a.children[iid]->buffers[1], *rows = a.children[irow]->buffers[1];
    for (int k = 0; k < 5; k++) {
      CHECK_EQ_INT(rows[k], k < 3 ? k : k + 1);
      CHECK_EQ_INT(ids[k], rows[k]); /* the payload of the kept rows, not of their positions */
    }
    a.release(&a);
  }
  CHECK_EQ_INT(s.get_next(&s, &a), 0);
  CHECK(a.release == NULL);
  sc.release(&sc);
  s.release(&s);
}

VF_TEST(arrow_schema_clash_between_files) {
  const char *tmp = vf_test_tmpdir();
  char p1[4096], p2[4096];
  snprintf(p1, sizeof p1, "%s/a.parquet", tmp);
  snprintf(p2, sizeof p2, "%s/b.parquet", tmp);
  vf_error err;
  int32_t i32[2] = {1, 2};
  int64_t i64[2] = {1, 2};
  pqt_wcolumn c1 = {"x", PQT_W_INT32, false, 0}, c2 = {"x", PQT_W_INT64, false, 0};
  pqt_wbatch b1 = {.values = i32}, b2 = {.values = i64};
  pqt_writer *w = NULL;
  CHECK_OK(pqt_writer_open(p1, &c1, 1, NULL, &w, &err));
  CHECK_OK(pqt_writer_write(w, &b1, 2, &err));
  CHECK_OK(pqt_writer_close(w, &err));
  CHECK_OK(pqt_writer_open(p2, &c2, 1, NULL, &w, &err));
  CHECK_OK(pqt_writer_write(w, &b2, 2, &err));
  CHECK_OK(pqt_writer_close(w, &err));
  struct ArrowArrayStream s;
  CHECK_OK(vf_arrow_open(tmp, NULL, &s, &err));
  if (!s.release) return;
  struct ArrowArray a;
  CHECK_EQ_INT(s.get_next(&s, &a), 0);
  if (a.release) a.release(&a);
  CHECK(s.get_next(&s, &a) != 0);
  CHECK(a.release == NULL);
  const char *msg = s.get_last_error(&s);
  CHECK(msg && strstr(msg, "b.parquet") && strstr(msg, "'x'"));
  CHECK_STATUS(vf_arrow_next(&s, &a, &err), VF_ECORRUPT);
  s.release(&s);
}

VF_TEST(arrow_cancel_stops_the_stream) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/corpus", src_dir());
  struct ArrowArrayStream s;
  vf_error err;
  CHECK_OK(vf_arrow_open(dir, NULL, &s, &err));
  if (!s.release) return;
  struct ArrowArray a;
  CHECK_OK(vf_arrow_next(&s, &a, &err)); /* the batch read at open */
  if (a.release) a.release(&a);
  vf_cancel_request(0);
  CHECK_STATUS(vf_arrow_next(&s, &a, &err), VF_ECANCELED);
  vf_cancel_reset();
  s.release(&s);
}

/* ------------------------------------------------------------ read_vectors */

VF_TEST(read_vectors_matches_records_any_threads) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/corpus", src_dir());
  corpus_source src;
  vf_error err;
  CHECK_OK(corpus_source_open(dir, NULL, &src, &err));
  float *m1 = NULL, *m2 = NULL;
  uint64_t n1 = 0, n2 = 0;
  int32_t d1 = 0, d2 = 0;
  CHECK_OK(corpus_read_vectors(&src, NULL, 1, &m1, &n1, &d1, &err));
  CHECK_OK(corpus_read_vectors(&src, "emb", 2, &m2, &n2, &d2, &err));
  CHECK_EQ_INT(n1, 6000);
  CHECK_EQ_INT(n2, 6000);
  CHECK(d1 > 0 && d1 == d2);
  if (m1 && m2) CHECK(memcmp(m1, m2, (size_t)n1 * (size_t)d1 * sizeof(float)) == 0);
  static const corpus_vec_source vs[] = {{"emb", CORPUS_VEC_DENSE, CORPUS_COSINE, "emb"}};
  corpus_record_spec spec = {.vectors = vs, .nvectors = 1};
  size_t at = 0;
  for (size_t fi = 0; m1 && fi < src.files.n; fi++) {
    corpus_records *r = NULL;
    CHECK_OK(corpus_records_open(&src.files.files[fi], &spec, 0, &r, &err));
    corpus_batch b = {0};
    for (int rg = 0; r && rg < corpus_records_row_groups(r); rg++) {
      CHECK_OK(corpus_records_read(r, rg, corpus_records_row_group_first(r, rg), &b, NULL, &err));
      CHECK(memcmp(m1 + at * (size_t)d1, b.vectors[0].dense, b.n * (size_t)d1 * sizeof(float)) == 0);
      at += b.n;
    }
    corpus_batch_free(&b);
    corpus_records_close(r);
  }
  CHECK_EQ_INT(at, 6000);
  /* under a memory budget of 2 MiB the row groups are read in slices of 64 KiB, each decoded
   * straight into the matrix: the same matrix at 1 and 2 threads */
  vf_set_memory_budget((uint64_t)2 << 20);
  for (int t = 1; t <= 2; t++) {
    float *m3 = NULL;
    uint64_t n3 = 0;
    int32_t d3 = 0;
    CHECK_OK(corpus_read_vectors(&src, NULL, t, &m3, &n3, &d3, &err));
    CHECK(n3 == n1 && d3 == d1);
    if (m1 && m3 && n3 == n1 && d3 == d1) CHECK(memcmp(m1, m3, (size_t)n1 * (size_t)d1 * sizeof(float)) == 0);
    free(m3);
  }
  vf_set_memory_budget(0);
  free(m1);
  free(m2);
  CHECK_STATUS(corpus_read_vectors(&src, "text", 1, &m1, &n1, &d1, &err), VF_EUSAGE);
  corpus_source_close(&src);
  /* a null vector is an error naming its row */
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/null_element.parquet", src_dir());
  CHECK_OK(corpus_source_open(path, NULL, &src, &err));
  CHECK_STATUS(corpus_read_vectors(&src, NULL, 1, &m1, &n1, &d1, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 4") != NULL);
  corpus_source_close(&src);
}
