/* Component-dataset record reading (src/corpus/dataset*.c) on files written here: three parts
 * of 5, 1 and 7 rows (npy float32, float16 and float64 vectors; parquet payloads with two-row
 * row groups, a nullable column and an excluded one).  Checks that every point's vector,
 * payload and id (`row` = global row) come from the same row across parts and row groups,
 * `fill_null` and `exclude`, a NaN row (an error naming the file and row, or dropped with
 * skip_bad_rows while its neighbours stay paired), and a vectors-only dataset with the default
 * id expression. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/config.h"
#include "vforge/format.h"

static void npy_write(const char *path, const char *descr, size_t item, int rows, int first,
                      int nan_row) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return;
  vf_test_npy_header(fp, descr, rows, 2);
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < 2; j++) {
      double v = j == 0 ? first + r : 0.5;
      if (r == nan_row && j == 1) v = NAN;
      if (item == 4) {
        float f = (float)v;
        fwrite(&f, 4, 1, fp);
      } else if (item == 8) {
        fwrite(&v, 8, 1, fp);
      } else { /* float16 of small integers and 0.5 / NaN */
        uint16_t h;
        if (isnan(v)) h = 0x7e00;
        else if (v == 0.5) h = 0x3800;
        else if (v == 0) h = 0;
        else {
          int e = 0;
          double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
          h = (uint16_t)(((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024));
        }
        fwrite(&h, 2, 1, fp);
      }
    }
  fclose(fp);
}

static void pq_write(const char *path, int rows, int first) {
  pqt_wcolumn cols[4] = {{"gid", PQT_W_INT64, false, 0},
                         {"name", PQT_W_STRING, true, 0},
                         {"caption", PQT_W_STRING, false, 0},
                         {"exif", PQT_W_STRING, false, 0}};
  pqt_writer_opts o = {0};
  o.row_group_rows = 2;
  pqt_writer *w = NULL;
  vf_error err = {0};
  if (pqt_writer_open(path, cols, 4, &o, &w, &err) != VF_OK) return;
  int64_t gid[16];
  const char *name[16], *cap[16], *exif[16];
  uint8_t valid[16];
  static char buf[16][32];
  for (int r = 0; r < rows; r++) {
    gid[r] = first + r;
    snprintf(buf[r], sizeof buf[r], "row %d", first + r);
    name[r] = buf[r];
    cap[r] = buf[r];
    exif[r] = "x";
    valid[r] = (first + r) % 3 != 0;
  }
  pqt_wbatch b[4] = {{.values = gid}, {.strs = name, .valid = valid}, {.strs = cap}, {.strs = exif}};
  pqt_writer_write(w, b, rows, &err);
  pqt_writer_close(w, &err);
}

static const int SIZES[3] = {5, 1, 7};

static char *fixture(int nan_part, int nan_row) {
  const char *dir = vf_test_tmpdir();
  const char *descr[3] = {"<f4", "<f2", "<f8"};
  size_t item[3] = {4, 2, 8};
  char p[4096];
  for (int i = 0, g = 0; i < 3; g += SIZES[i], i++) {
    snprintf(p, sizeof p, "%s/v_%d.npy", dir, i);
    npy_write(p, descr[i], item[i], SIZES[i], g, i == nan_part ? nan_row : -1);
    snprintf(p, sizeof p, "%s/m_%d.parquet", dir, i);
    pq_write(p, SIZES[i], g);
  }
  return vf_strdup(dir);
}

static vf_status open_cfg(const char *dir, bool payload, const char *idexpr, vf_config *c) {
  char text[4096];
  snprintf(text, sizeof text,
           "vectors: {v: {type: dense, distance: euclid}}\n"
           "datasource:\n  type: dataset\n"
           "  vectors: {parts: {count: 3, path: '%s/v_{i}.npy'}}\n"
           "%s%s%s"
           "  id_expression: '%s'\n",
           dir, payload ? "  payload: {parts: {count: 3, path: '" : "", payload ? dir : "",
           payload ? "/m_{i}.parquet'}, exclude: [exif], fill_null: 0}\n" : "", idexpr);
  vf_error err = {0};
  vf_status st = vf_config_parse(text, strlen(text), "t.yaml", c, &err);
  if (st != VF_OK) fprintf(stderr, "config: %s\n", err.msg);
  return st;
}

/* Reads every point of every part; returns the number read, -1 on error (err filled). */
static long read_all(const corpus_files *files, bool skip, const corpus_idexpr *id, bool check,
                     vf_error *err) {
  corpus_vec_source vs = {.name = "v", .kind = CORPUS_VEC_DENSE, .distance = CORPUS_EUCLID};
  corpus_record_spec spec = {.vectors = &vs, .nvectors = 1, .id = id, .skip_bad_rows = skip};
  long n = 0;
  uint64_t base = 0;
  for (size_t i = 0; i < files->n; i++) {
    corpus_records *r = NULL;
    if (corpus_records_open(&files->files[i], &spec, base, &r, err) != VF_OK) return -1;
    corpus_batch b = {0};
    for (int rg = 0; rg < corpus_records_row_groups(r); rg++) {
      if (corpus_records_read(r, rg, corpus_records_row_group_first(r, rg), &b, NULL, err) !=
          VF_OK) {
        corpus_batch_free(&b);
        corpus_records_close(r);
        return -1;
      }
      for (size_t k = 0; check && k < b.n; k++) {
        uint64_t g = base + b.file_rows[k];
        CHECK(!b.ids[k].is_uuid && b.ids[k].num == g);
        CHECK(b.vectors[0].dim == 2 && b.vectors[0].dense[2 * k] == (float)g &&
              b.vectors[0].dense[2 * k + 1] == 0.5f);
        char want[160];
        if (g % 3 == 0)
          snprintf(want, sizeof want, "{\"gid\":%" PRIu64 ",\"name\":0,\"caption\":\"row %" PRIu64 "\"}", g, g);
        else
          snprintf(want, sizeof want,
                   "{\"gid\":%" PRIu64 ",\"name\":\"row %" PRIu64 "\",\"caption\":\"row %" PRIu64 "\"}",
                   g, g, g);
        size_t len = (size_t)(b.payload_offsets[k + 1] - b.payload_offsets[k]);
        if (len != strlen(want) ||
            memcmp(b.payload.data + b.payload_offsets[k], want, len) != 0) {
          vf_test_fail(__FILE__, __LINE__, "row %" PRIu64 ": payload %.*s, want %s", g, (int)len,
                       (const char *)b.payload.data + b.payload_offsets[k], want);
        }
      }
      n += (long)b.n;
    }
    base += corpus_records_rows(r);
    corpus_batch_free(&b);
    corpus_records_close(r);
  }
  return n;
}

VF_TEST(dataset_pairs_rows_across_parts) {
  char *dir = fixture(-1, -1);
  vf_config c;
  corpus_files files = {0};
  vf_error err = {0};
  corpus_idexpr *id = NULL;
  CHECK_OK(open_cfg(dir, true, "row", &c));
  CHECK_OK(vf_config_files(&c, &files, &err));
  CHECK_EQ_INT(files.n, 3);
  for (size_t i = 0; i < files.n; i++) {
    CHECK(files.files[i].dataset != NULL);
    CHECK_EQ_INT(corpus_dataset_part_rows(&files.files[i]), SIZES[i]);
  }
  CHECK_OK(corpus_idexpr_parse("row", &id, &err));
  CHECK_EQ_INT(read_all(&files, false, id, true, &err), 13);
  corpus_idexpr_free(id);
  corpus_files_free(&files);
  vf_config_free(&c);
  free(dir);
}

VF_TEST(dataset_bad_vector_rows) {
  char *dir = fixture(2, 3); /* global row 9 has a NaN */
  vf_config c;
  corpus_files files = {0};
  vf_error err = {0};
  corpus_idexpr *id = NULL;
  CHECK_OK(corpus_idexpr_parse("row", &id, &err));
  CHECK_OK(open_cfg(dir, true, "row", &c));
  CHECK_OK(vf_config_files(&c, &files, &err));
  CHECK_EQ_INT(read_all(&files, false, id, false, &err), -1);
  CHECK(strstr(err.msg, "v_2.npy") && strstr(err.msg, "row 3") && strstr(err.msg, "non-finite"));
  CHECK_EQ_INT(read_all(&files, true, id, true, &err), 12); /* the rest still paired */
  corpus_files_free(&files);
  vf_config_free(&c);
  corpus_idexpr_free(id);
  free(dir);
}

VF_TEST(dataset_vectors_only_default_ids) {
  char *dir = fixture(-1, -1);
  vf_config c;
  corpus_files files = {0};
  vf_error err = {0};
  CHECK_OK(open_cfg(dir, false, "vf_point_id(filename, file_row_number)", &c));
  CHECK_OK(vf_config_files(&c, &files, &err));
  corpus_vec_source vs = {.name = "v", .kind = CORPUS_VEC_DENSE, .distance = CORPUS_EUCLID};
  corpus_record_spec spec = {.vectors = &vs, .nvectors = 1};
  corpus_records *r = NULL;
  CHECK_OK(corpus_records_open(&files.files[2], &spec, 6, &r, &err));
  if (r) {
    CHECK_EQ_INT(corpus_records_rows(r), 7);
    CHECK_EQ_INT(corpus_records_row_groups(r), 1);
    corpus_batch b = {0};
    CHECK_OK(corpus_records_read(r, 0, 4, &b, NULL, &err));
    CHECK_EQ_INT(b.n, 3);
    char want[37];
    corpus_point_id(files.files[2].key, strlen(files.files[2].key), 4, want);
    CHECK(b.n == 3 && b.ids[0].is_uuid && strcmp(b.ids[0].uuid, want) == 0);
    CHECK(b.n == 3 && b.vectors[0].dense[0] == 10.0f);
    CHECK(b.n == 3 && b.payload_offsets[1] == 2); /* "{}" */
    corpus_batch_free(&b);
    corpus_records_close(r);
  }
  corpus_files_free(&files);
  vf_config_free(&c);
  free(dir);
}
