/* Page read-ahead of streamed row groups (pqt_open_opts.read_ahead, src/format/pqt_prefetch.c)
 * and the scratch block cache (src/format/pqt_mem.c): a sliced file decodes to the same bytes
 * with and without read-ahead (all leaves at once or one at a time, slices in order or
 * restarted), a damaged file fails with the same code and message, and closed files leave their
 * big buffers to the next one. */
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* Everything one decode produced, serialised: per slice and leaf the counts, levels, values and
 * value lengths — two decodes are equal iff these bytes are. */
typedef struct result {
  vf_buf b;
  vf_status st;
  char msg[VF_ERROR_MSG_MAX];
  uint64_t ahead; /* pages served by the read-ahead ring */
  uint64_t bytes_read;
  uint64_t streamed; /* pages the decoder decompressed through a bounded window */
  vf_buf flat; /* leaf 1's values concatenated over the slices (the same however it is sliced) */
} result;

static bool g_whole; /* decode(): read the row groups as written */

static void put(vf_buf *b, const void *p, size_t n) {
  if (n) vf_buf_append(b, p, n, NULL);
}

static void put_leaf(vf_buf *b, const pqt_leaf_data *d) {
  int64_t h[5] = {d->nlevels, d->nvalues, d->nrows, d->def != NULL, d->rep != NULL};
  put(b, h, sizeof h);
  if (d->def) put(b, d->def, (size_t)d->nlevels);
  if (d->rep) put(b, d->rep, (size_t)d->nlevels);
  put(b, d->values.data, d->values.len);
  if (d->width == 0 && d->offsets)
    for (int64_t i = 0; i < d->nvalues; i++) {
      int64_t l = d->offsets[i + 1] - d->offsets[i];
      put(b, &l, sizeof l);
    }
}

/* order: 0 slices in order, all leaves per call; 1 one leaf per call; 2 slice 3 (or the last),
 * then 0, then all in order */
static void decode(const uint8_t *file, size_t len, uint64_t slice, int read_ahead, int order,
                   result *r) {
  vf_buf_init(&r->b, 0);
  vf_buf_init(&r->flat, 0);
  r->msg[0] = 0;
  vf_error err;
  vf_error_clear(&err);
  io_source *src;
  pqt_file *f = NULL;
  pqt_open_opts o = {.verify_crc = true, .slice_bytes = slice, .read_ahead = read_ahead,
                     .whole_row_groups = g_whole};
  r->st = io_open_memory(file, len, "t.parquet", &src, &err);
  if (r->st == VF_OK) r->st = pqt_open(src, &o, &f, &err);
  int nl = f ? pqt_schema_of(f)->nleaves : 0;
  int *ids = calloc((size_t)nl + 1, sizeof *ids);
  pqt_leaf_data *ld = calloc((size_t)nl + 1, sizeof *ld);
  for (int i = 0; i < nl; i++) {
    ids[i] = i;
    pqt_leaf_data_init(&ld[i]);
  }
  int ng = f ? pqt_meta(f)->nrow_groups : 0;
  int *seq = malloc(sizeof *seq * (size_t)(ng + 3)), ns = 0;
  if (order == 2 && ng > 1) {
    seq[ns++] = ng > 3 ? 3 : ng - 1;
    seq[ns++] = 0;
  }
  for (int g = 0; g < ng; g++) seq[ns++] = g;
  for (int k = 0; r->st == VF_OK && k < ns; k++) {
    int g = seq[k];
    if (order == 1) {
      for (int l = 0; r->st == VF_OK && l < nl; l++) {
        r->st = pqt_read_leaves(f, g, &ids[l], 1, &ld[l], &err);
        if (r->st == VF_OK) put_leaf(&r->b, &ld[l]);
      }
    } else {
      r->st = pqt_read_leaves(f, g, ids, nl, ld, &err);
      for (int l = 0; r->st == VF_OK && l < nl; l++) put_leaf(&r->b, &ld[l]);
      if (r->st == VF_OK && nl > 1 && order == 0) put(&r->flat, ld[1].values.data, ld[1].values.len);
    }
  }
  free(seq);
  r->ahead = f ? pqt_read_ahead_pages(f) : 0;
  r->bytes_read = f ? pqt_source(f)->bytes_read : 0;
  r->streamed = f ? pqt_streamed_pages(f) : 0;
  if (r->st != VF_OK) snprintf(r->msg, sizeof r->msg, "%s", err.msg);
  for (int i = 0; i < nl; i++) pqt_leaf_data_free(&ld[i]);
  free(ld);
  free(ids);
  pqt_close(f);
}

static void result_free(result *r) {
  vf_buf_free(&r->b);
  vf_buf_free(&r->flat);
}

static bool same(const result *a, const result *b) {
  if (a->st != b->st || strcmp(a->msg, b->msg) != 0) {
    fprintf(stderr, "  status %d \"%s\" vs %d \"%s\"\n", a->st, a->msg, b->st, b->msg);
    return false;
  }
  return a->b.len == b->b.len && (a->b.len == 0 || memcmp(a->b.data, b->b.data, a->b.len) == 0);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *p = malloc((size_t)(n > 0 ? n : 1));
  if (p && fread(p, 1, (size_t)n, fp) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(fp);
  *len = (size_t)n;
  return p;
}

/* one row group of `rows` rows: id, a 48-d vector, a nullable string (pages of ~page_bytes) */
static uint8_t *written_pages(pqt_codec codec, int rows, int64_t page_bytes, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/prefetch_%d.parquet", vf_test_tmpdir(), (int)codec);
  enum { DIM = 48 };
  pqt_wcolumn cols[3] = {{"id", PQT_W_INT64, false, 0},
                         {"emb", PQT_W_VECTOR, false, DIM},
                         {"s", PQT_W_STRING, true, 0}};
  pqt_writer_opts o = {.codec = codec, .row_group_rows = rows, .page_bytes = page_bytes};
  vf_error err;
  vf_error_clear(&err);
  pqt_writer *w;
  if (pqt_writer_open(path, cols, 3, &o, &w, &err) != VF_OK) return NULL;
  int64_t *ids = malloc(sizeof *ids * (size_t)rows);
  float *v = malloc(sizeof *v * (size_t)rows * DIM);
  char **strs = malloc(sizeof *strs * (size_t)rows);
  uint8_t *valid = malloc((size_t)rows);
  uint32_t x = 12345;
  for (int i = 0; i < rows; i++) {
    ids[i] = i * 7;
    for (int j = 0; j < DIM; j++) {
      x = x * 1664525u + 1013904223u;
      v[(size_t)i * DIM + (size_t)j] = (float)(x >> 8) / 16777216.0f;
    }
    strs[i] = malloc(24);
    snprintf(strs[i], 24, "row-%d%s", i, i % 3 ? "" : "-xx");
    valid[i] = i % 5 != 0;
  }
  pqt_wbatch b[3] = {{.values = ids}, {.values = v}, {.strs = (const char *const *)strs, .valid = valid}};
  vf_status st = pqt_writer_write(w, b, rows, &err);
  if (st == VF_OK) st = pqt_writer_close(w, &err);
  else pqt_writer_abort(w);
  for (int i = 0; i < rows; i++) free(strs[i]);
  free(strs);
  free(valid);
  free(ids);
  free(v);
  return st == VF_OK ? slurp(path, len) : NULL;
}

static uint8_t *written(pqt_codec codec, int rows, size_t *len) {
  return written_pages(codec, rows, 16 << 10, len);
}

VF_TEST(read_ahead_same_bytes) {
  pqt_codec codecs[3] = {PQT_ZSTD, PQT_SNAPPY, PQT_UNCOMPRESSED};
  for (int c = 0; c < 3; c++) {
    size_t len = 0;
    uint8_t *file = written(codecs[c], 6000, &len);
    CHECK(file != NULL);
    if (!file) continue;
    for (int order = 0; order < 3; order++) {
      int ra = 1 + (order + c) % 3; /* 1..3 reader threads */
      result a, b;
      decode(file, len, 24 << 10, 0, order, &a);
      decode(file, len, 24 << 10, ra, order, &b);
      CHECK_EQ_INT(a.st, VF_OK);
      CHECK(a.b.len > 6000u * 48u * 4u); /* it decoded the vectors */
      CHECK(same(&a, &b));
      CHECK(a.ahead == 0);
      if (order < 2) CHECK(b.bytes_read <= (uint64_t)len + (128u << 10)); /* footer + pages once */
      CHECK(b.ahead > 20); /* the vectors' ~70 pages came through the ring */
      result_free(&a);
      result_free(&b);
    }
    free(file);
  }
}

/* a damaged page: the same code and message with read-ahead (the consumer redoes what failed) */
VF_TEST(read_ahead_same_errors) {
  size_t len = 0;
  uint8_t *file = written(PQT_ZSTD, 6000, &len);
  CHECK(file != NULL);
  if (!file) return;
  uint8_t *bad = malloc(len);
  int failed = 0;
  for (int k = 1; k <= 24; k++) {
    memcpy(bad, file, len);
    size_t at = 4 + (len - 4096) / 25 * (size_t)k; /* inside the column data */
    for (size_t j = 0; j < 8 && at + j < len; j++) bad[at + j] ^= (uint8_t)(0x5a + j);
    result a, b;
    decode(bad, len, 24 << 10, 0, 0, &a);
    decode(bad, len, 24 << 10, 1 + k % 3, 0, &b);
    if (a.st != VF_OK) failed++;
    CHECK(same(&a, &b));
    result_free(&a);
    result_free(&b);
  }
  CHECK(failed > 0); /* the flips did hit pages */
  free(bad);
  free(file);
}

/* conformance files (shared/ when present), sliced into tiny slices: read-ahead changes nothing */
VF_TEST(read_ahead_conformance_files) {
  const char *sh = vf_test_shared();
  if (!sh) return;
  static const char *files[] = {
      "alltypes_tiny_pages.parquet",     "alltypes_tiny_pages_plain.parquet",
      "datapage_v2.snappy.parquet",      "datapage_v2_empty_datapage.snappy.parquet",
      "nested_lists.snappy.parquet",     "nested_maps.snappy.parquet",
      "dict-page-offset-zero.parquet",   "nulls.snappy.parquet",
      "delta_byte_array.parquet",        "delta_encoding_optional_column.parquet",
      "byte_stream_split.zstd.parquet",  "hadoop_lz4_compressed_larger.parquet",
      "lz4_raw_compressed_larger.parquet", "nation.dict-malformed.parquet",
      "datapage_v1-corrupt-checksum.parquet", "repeated_no_annotation.parquet",
      "list_columns.parquet"};
  int read = 0;
  uint64_t ahead = 0;
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/data/parquet-testing/data/%s", sh, files[i]);
    size_t len = 0;
    uint8_t *file = slurp(path, &len);
    if (!file) continue;
    read++;
    for (int order = 0; order < 3; order++) {
      result a, b;
      decode(file, len, 512, 0, order, &a);
      decode(file, len, 512, 1 + (int)(i + (size_t)order) % 2, order, &b);
      if (!same(&a, &b)) fprintf(stderr, "  %s, order %d\n", files[i], order);
      CHECK(same(&a, &b));
      ahead += b.ahead;
      result_free(&a);
      result_free(&b);
    }
    free(file);
  }
  CHECK(read >= 10);
  CHECK(ahead > 100);
}

VF_TEST(block_cache_reuses_and_clears) {
  pqt_mem_cache_clear();
  CHECK_EQ_INT((int)pqt_mem_cached(NULL), 0);
  size_t len = 0;
  uint8_t *file = written(PQT_ZSTD, 20000, &len); /* 20000 x 48 floats: a 3.8 MB column */
  CHECK(file != NULL);
  if (!file) return;
  result a, b;
  decode(file, len, 2 << 20, 1, 0, &a); /* 2 MiB slices: MiB-sized scratch and output */
  uint64_t bytes = 0;
  size_t n1 = pqt_mem_cached(&bytes);
  CHECK(n1 > 0);
  CHECK(bytes >= PQT_MEM_MIN);
  CHECK(n1 <= 8);
  decode(file, len, 2 << 20, 1, 0, &b); /* takes them again, gives them back */
  CHECK(same(&a, &b));
  CHECK(pqt_mem_cached(NULL) <= 8);
  /* take: best fit; give: kept; too small: freed */
  size_t cap = 0;
  void *p = pqt_mem_take(PQT_MEM_MIN, &cap);
  CHECK(p != NULL && cap >= PQT_MEM_MIN);
  size_t before = pqt_mem_cached(NULL);
  pqt_mem_give(p, cap);
  CHECK_EQ_INT((int)pqt_mem_cached(NULL), (int)before + 1);
  pqt_mem_give(malloc(100), 100);
  CHECK_EQ_INT((int)pqt_mem_cached(NULL), (int)before + 1);
  CHECK(pqt_mem_take((size_t)1 << 40, &cap) == NULL);
  pqt_mem_cache_clear();
  CHECK_EQ_INT((int)pqt_mem_cached(&bytes), 0);
  CHECK(bytes == 0);
  result_free(&a);
  result_free(&b);
  free(file);
}

/* zstd pages over 8 MiB stored are decompressed from a 4 MiB window of the file (random floats
 * barely compress): the same bytes, the same reads, and damage still reported alike */
VF_TEST(read_ahead_streamed_zstd_pages) {
  size_t len = 0;
  uint8_t *file = written_pages(PQT_ZSTD, 120000, 12 << 20, &len); /* 23 MB of vectors */
  CHECK(file != NULL);
  if (!file) return;
  for (int order = 0; order < 3; order++) {
    result a, b;
    decode(file, len, 4 << 20, 0, order, &a);
    decode(file, len, 4 << 20, 1 + order % 2, order, &b);
    CHECK_EQ_INT(a.st, VF_OK);
    CHECK(same(&a, &b));
    CHECK(b.ahead >= 2);
    if (order < 2) CHECK(b.bytes_read <= (uint64_t)len + (128u << 10)); /* nothing twice */
    result_free(&a);
    result_free(&b);
  }
  /* the streamed decode equals the row group decoded whole (one decompression of each page) */
  result w, st;
  g_whole = true;
  decode(file, len, 0, 0, 0, &w);
  g_whole = false;
  decode(file, len, 4 << 20, 0, 0, &st);
  CHECK_EQ_INT(w.st, VF_OK);
  CHECK(w.flat.len == (size_t)120000 * 48 * 4);
  CHECK(w.flat.len == st.flat.len && memcmp(w.flat.data, st.flat.data, w.flat.len) == 0);
  CHECK(w.streamed == 0);
  CHECK(st.streamed >= 2); /* the two 12 MiB pages */
  result_free(&w);
  result_free(&st);
  uint8_t *bad = malloc(len);
  memcpy(bad, file, len);
  for (size_t j = 0; j < 64; j++) bad[len / 3 + j] ^= 0xa5; /* inside the first big page */
  result a, b;
  decode(bad, len, 4 << 20, 0, 0, &a);
  decode(bad, len, 4 << 20, 2, 0, &b);
  CHECK(a.st != VF_OK);
  CHECK(same(&a, &b));
  result_free(&a);
  result_free(&b);
  free(bad);
  free(file);
}
