/*
 * bench/qdrant-serialize — JSON serialisation speed of the Qdrant upsert body (issue 4 "Done
 * when": >= 50k 768-d points/s per core).  One thread builds PointsList bodies of
 * `batch` points (UUID ids, one named 768-d dense vector of values in [-1, 1) like normalised
 * embeddings, a small payload) with the store's own serializer (qd_points_json, the code path
 * of store_upsert), repeatedly for at least `seconds`, and reports points/s and MB/s of JSON.
 * Usage: qdrant-serialize [points=100000] [dim=768] [batch=1000] [seconds=3]
 * Output: one JSON object on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "store/qdrant_internal.h"
#include "vforge/store.h"

static double now_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  size_t npts = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
  int dim = argc > 2 ? atoi(argv[2]) : 768;
  size_t batch = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000;
  double secs = argc > 4 ? strtod(argv[4], NULL) : 3.0;
  if (npts < batch || dim < 1 || batch < 1) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  float *dense = malloc(sizeof(float) * npts * (size_t)dim);
  corpus_id *ids = calloc(npts, sizeof *ids);
  int64_t *poff = calloc(npts + 1, sizeof *poff);
  if (!dense || !ids || !poff) return 1;
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (size_t i = 0; i < npts * (size_t)dim; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    dense[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0) * 0.1f;
  }
  vf_buf pay;
  vf_buf_init(&pay, 0);
  for (size_t i = 0; i < npts; i++) {
    char key[32];
    snprintf(key, sizeof key, "bench.parquet");
    corpus_point_id(key, strlen(key), i, ids[i].uuid);
    ids[i].is_uuid = true;
    vf_buf_printf(&pay, NULL, "{\"text\":\"document number %zu\",\"n\":%zu}", i, i);
    poff[i + 1] = (int64_t)pay.len;
  }
  store_vector_spec spec = {"dense", CORPUS_VEC_DENSE, CORPUS_COSINE, dim};
  store_config cfg = {0};
  cfg.type = "qdrant";
  cfg.url = "http://127.0.0.1:6333";
  cfg.collection_name = "bench";
  cfg.vectors = &spec;
  cfg.nvectors = 1;
  store *s = NULL;
  vf_error err;
  if (store_open(&cfg, &s, &err) != VF_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  vf_buf body;
  vf_buf_init(&body, 0);
  uint64_t points = 0, bytes = 0;
  double t0 = now_cpu(), w0 = vf_now();
  while (now_cpu() - t0 < secs) {
    for (size_t off = 0; off + batch <= npts; off += batch) {
      corpus_vec_batch vb = {"dense", CORPUS_VEC_DENSE, CORPUS_COSINE, dim,
                             dense + off * (size_t)dim, NULL, NULL, NULL, NULL, NULL};
      corpus_batch b = {0};
      b.n = batch;
      b.ids = ids + off;
      b.nvectors = 1;
      b.vectors = &vb;
      b.payload = pay;
      b.payload_offsets = poff + off;
      int map[1];
      if (store_check_batch(s, &b, map, &err) != VF_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
      }
      vf_buf_reset(&body);
      bool first = true;
      vf_buf_append(&body, "{\"points\":[", 11, NULL);
      if (qd_points_json(s, &b, map, 0, batch, &first, &body, &err) != VF_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
      }
      vf_buf_append(&body, "]}", 2, NULL);
      points += batch;
      bytes += body.len;
    }
  }
  double cpu = now_cpu() - t0, wall = vf_now() - w0;
  printf("{\"dim\":%d,\"batch\":%zu,\"points\":%llu,\"cpu_seconds\":%.3f,\"wall_seconds\":%.3f,"
         "\"points_per_s_per_core\":%.0f,\"json_mb_per_s\":%.1f,\"bytes_per_point\":%.0f,"
         "\"target_points_per_s\":50000,\"meets_target\":%s}\n",
         dim, batch, (unsigned long long)points, cpu, wall, (double)points / cpu,
         (double)bytes / cpu / 1e6, (double)bytes / (double)points,
         (double)points / cpu >= 50000 ? "true" : "false");
  store_close(s);
  vf_buf_free(&body);
  vf_buf_free(&pay);
  free(dense);
  free(ids);
  free(poff);
  return 0;
}
