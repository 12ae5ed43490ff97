/* bench_check_truth() (issue 14) on an ann-benchmarks .hdf5 ground truth, written here with
 * libhdf5 (`neighbors`, `distances`, root attribute `distance`): the bundle records a metric but
 * no corpus, so
 *   - its metric (angular = cosine) against a collection searched by euclid is refused;
 *   - against a cosine collection whose point ids are the neighbour rows (id_expression: row)
 *     the hits are looked up and found: VF_OK;
 *   - against a collection of other ids (vf_point_id UUIDs) none is found: VF_EUSAGE — the
 *     recall 0 that used to be printed with exit 0;
 *   - a collection holding a part of the rows: VF_OK with a warning counting the missing hits;
 *   - an unfinished load (the record says "in progress"): a warning. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/bench.h"

#define NQ 5
#define K 4
#define NPTS 40
#define DIM 3

static int g_warn;
static char g_last[2048];
static void on_log(void *user, vf_log_level level, const char *msg) {
  (void)user;
  if (level == VF_LOG_WARN) {
    g_warn++;
    snprintf(g_last, sizeof g_last, "%s", msg);
  }
}

static void put_i32(hid_t f, const char *name, const int32_t *v, hsize_t rows, hsize_t cols) {
  hsize_t dims[2] = {rows, cols};
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t d = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(d);
  H5Sclose(sp);
}

static void put_f32(hid_t f, const char *name, const float *v, hsize_t rows, hsize_t cols) {
  hsize_t dims[2] = {rows, cols};
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t d = H5Dcreate2(f, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(d);
  H5Sclose(sp);
}

/* an angular bundle whose neighbours of query q are rows q*4 .. q*4+3 */
static const char *write_bundle(void) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/truth-angular.hdf5", vf_test_tmpdir());
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int32_t nb[NQ * K];
  float dist[NQ * K], test[NQ * DIM];
  for (int q = 0; q < NQ; q++)
    for (int j = 0; j < K; j++) {
      nb[q * K + j] = q * K + j;
      dist[q * K + j] = 0.1f * (float)j;
    }
  for (int i = 0; i < NQ * DIM; i++) test[i] = (float)(i + 1);
  put_i32(f, "neighbors", nb, NQ, K);
  put_f32(f, "distances", dist, NQ, K);
  put_f32(f, "test", test, NQ, DIM);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, 7);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "distance", st, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, st, "angular");
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(st);
  H5Fclose(f);
  return path;
}

/* a local collection `name` of points 0..n-1 (integer ids, or UUIDs when `uuids`) */
static store_config collection(const char *name, corpus_distance metric, size_t n, bool uuids,
                               store_vector_spec *spec) {
  *spec = (store_vector_spec){"v", CORPUS_VEC_DENSE, metric, DIM};
  store_config c;
  memset(&c, 0, sizeof c);
  c.type = "local";
  c.path = vf_test_tmpdir();
  c.collection_name = name;
  c.vectors = spec;
  c.nvectors = 1;
  c.recreate = true;
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&c, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  corpus_id *ids = calloc(n, sizeof *ids);
  float *vec = calloc(n * DIM, sizeof *vec);
  for (size_t i = 0; i < n; i++) {
    if (uuids) {
      snprintf(ids[i].uuid, sizeof ids[i].uuid, "00000000-0000-0000-0000-%012u",
               (unsigned)(i % 1000000));
      ids[i].is_uuid = true;
    } else {
      ids[i].num = i;
    }
    for (int e = 0; e < DIM; e++) vec[i * DIM + e] = (float)(i + (size_t)e + 1);
  }
  corpus_vec_batch vb = {.name = "v", .kind = CORPUS_VEC_DENSE, .distance = metric, .dim = DIM,
                         .dense = vec};
  corpus_batch b;
  memset(&b, 0, sizeof b);
  b.n = n;
  b.ids = ids;
  b.nvectors = 1;
  b.vectors = &vb;
  vf_buf_init(&b.payload, 0);
  int64_t *po = calloc(n + 1, sizeof *po);
  b.payload_offsets = po;
  CHECK_OK(store_upsert(s, &b, &err));
  CHECK_OK(store_flush(s, &err));
  store_close(s);
  free(ids);
  free(vec);
  free(po);
  c.recreate = false;
  return c;
}

VF_TEST(hdf5_truth_checked_against_the_store) {
  const char *h5 = write_bundle();
  bench_truth t;
  vf_error err;
  CHECK_OK(bench_read_truth(h5, &t, &err));
  CHECK_EQ_STR(t.metric, "cosine"); /* angular */
  CHECK(t.files_md5[0] == 0 && t.id_expression == NULL); /* no corpus record */
  size_t rows[NQ];
  for (size_t i = 0; i < NQ; i++) rows[i] = i;
  vf_set_log_handler(on_log, NULL);
  bench_options o;
  memset(&o, 0, sizeof o);
  o.k = K;
  store_vector_spec sp;

  /* another metric */
  o.store = collection("euclid", CORPUS_EUCLID, NPTS, false, &sp);
  CHECK_STATUS(bench_check_truth(&o, &t, rows, NQ, h5, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "computed with cosine") && strstr(err.msg, "euclid"));

  /* the neighbour rows are the point ids: found */
  g_warn = 0;
  o.store = collection("rows", CORPUS_COSINE, NPTS, false, &sp);
  CHECK_OK(bench_check_truth(&o, &t, rows, NQ, h5, &err));
  CHECK_EQ_INT(g_warn, 0);

  /* other ids: none found (recall would be 0) */
  o.store = collection("uuids", CORPUS_COSINE, NPTS, true, &sp);
  CHECK_STATUS(bench_check_truth(&o, &t, rows, NQ, h5, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "none of the 20 ground-truth neighbours of the first 5 queries") != NULL);

  /* a part of the rows: 10 of the 20 hits missing, a warning with the count */
  g_warn = 0;
  o.store = collection("part", CORPUS_COSINE, NPTS / 4, false, &sp);
  CHECK_OK(bench_check_truth(&o, &t, rows, NQ, h5, &err));
  CHECK_EQ_INT(g_warn, 1);
  CHECK(strstr(g_last, "10 of the 20 ground-truth neighbours") != NULL);

  /* an unfinished load: the record says "in progress" */
  store *s = NULL;
  CHECK_OK(store_open(&o.store, &s, &err));
  store_record rec;
  memset(&rec, 0, sizeof rec);
  snprintf(rec.files_md5, sizeof rec.files_md5, "0123456789abcdef0123456789abcdef");
  snprintf(rec.id_expression, sizeof rec.id_expression, "row");
  CHECK_OK(store_set_record(s, &rec, &err));
  bool found = false;
  store_record back;
  CHECK_OK(store_get_record(s, &back, &found, &err));
  CHECK(found && !back.load_finished && strcmp(back.id_expression, "row") == 0);
  store_close(s);
  g_warn = 0;
  CHECK_OK(bench_check_truth(&o, &t, rows, NQ, h5, &err));
  CHECK_EQ_INT(g_warn, 2); /* not finalized; and the missing hits */
  vf_set_log_handler(NULL, NULL);
  bench_truth_free(&t);
}
