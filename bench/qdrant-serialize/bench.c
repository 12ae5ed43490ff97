/*
 * bench/qdrant-serialize — serialisation of Qdrant upserts, REST (JSON PointsList, issue 4) and
 * gRPC (protobuf UpsertPoints, issue 18) side by side in one run.  One thread builds the
 * request bodies of `batch` points (UUID ids, one named `dim`-d dense vector of values in
 * [-0.1, 0.1) like normalised embeddings, a small payload {"text": "...", "n": i}) with the
 * store's own serializers (qd_points_json and qdg_points_pb, the code paths of store_upsert),
 * repeatedly for at least `seconds` of thread CPU time each, and reports points/s per core and
 * bytes on the wire per point for each, and their ratios.
 * Targets (issue 18): gRPC >= 220k 768-d points/s per core; REST no slower than 72k.
 * Usage: qdrant-serialize [points=100000] [dim=768] [batch=1000] [seconds=3]
 * Output: one JSON object on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "store/qdrant_internal.h"
#include "store/qdrant_pb.h"
#include "vforge/store.h"

static double now_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct side {
  uint64_t points, bytes;
  double cpu;
} side;

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
  vf_buf body, scratch;
  vf_buf_init(&body, 0);
  vf_buf_init(&scratch, 0);
  side sides[2] = {{0, 0, 0}, {0, 0, 0}}; /* 0: REST JSON, 1: gRPC protobuf */
  for (int k = 0; k < 2; k++) {
    double t0 = now_cpu();
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
        vf_status st;
        if (k == 0) { /* what qd_upsert sends: {"points":[...]} */
          bool first = true;
          vf_buf_append(&body, "{\"points\":[", 11, NULL);
          st = qd_points_json(s, &b, map, 0, batch, &first, &body, &err);
          vf_buf_append(&body, "]}", 2, NULL);
        } else { /* what qdg_upsert sends: the gRPC frame, collection_name, wait, points */
          vf_buf_reserve(&body, 5, NULL);
          body.len = 5;
          qpb_add_bytes(&body, 1, "bench", 5, NULL);
          qpb_add_varint(&body, 2, 0, NULL);
          st = qdg_points_pb(s, &b, map, 0, batch, &scratch, &body, &err);
        }
        if (st != VF_OK) {
          fprintf(stderr, "%s\n", err.msg);
          return 1;
        }
        sides[k].points += batch;
        sides[k].bytes += body.len;
      }
    }
    sides[k].cpu = now_cpu() - t0;
  }
  double rest_pps = (double)sides[0].points / sides[0].cpu;
  double grpc_pps = (double)sides[1].points / sides[1].cpu;
  double rest_bpp = (double)sides[0].bytes / (double)sides[0].points;
  double grpc_bpp = (double)sides[1].bytes / (double)sides[1].points;
  printf("{\"dim\":%d,\"batch\":%zu,"
         "\"rest\":{\"points\":%llu,\"cpu_seconds\":%.3f,\"points_per_s_per_core\":%.0f,"
         "\"mb_per_s\":%.1f,\"bytes_per_point\":%.0f,\"target_points_per_s\":72000,"
         "\"meets_target\":%s},"
         "\"grpc\":{\"points\":%llu,\"cpu_seconds\":%.3f,\"points_per_s_per_core\":%.0f,"
         "\"mb_per_s\":%.1f,\"bytes_per_point\":%.0f,\"target_points_per_s\":220000,"
         "\"meets_target\":%s},"
         "\"grpc_over_rest_points_per_s\":%.2f,\"rest_over_grpc_bytes\":%.2f}\n",
         dim, batch, (unsigned long long)sides[0].points, sides[0].cpu, rest_pps,
         (double)sides[0].bytes / sides[0].cpu / 1e6, rest_bpp, rest_pps >= 72000 ? "true" : "false",
         (unsigned long long)sides[1].points, sides[1].cpu, grpc_pps,
         (double)sides[1].bytes / sides[1].cpu / 1e6, grpc_bpp,
         grpc_pps >= 220000 ? "true" : "false", grpc_pps / rest_pps, rest_bpp / grpc_bpp);
  store_close(s);
  vf_buf_free(&body);
  vf_buf_free(&scratch);
  vf_buf_free(&pay);
  free(dense);
  free(ids);
  free(poff);
  return 0;
}
