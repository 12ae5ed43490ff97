/* The three-point batch the Qdrant store tests share (tests/store/test_qdrant.c, the REST
 * store against canned responses; test_qdrant_grpc.c, the gRPC messages): ids 7, a UUID and
 * 2^64-1; a dense vector of 4 (null in row 2), a sparse vector (empty in row 1), a multivector
 * of 2-d vectors (none in row 2), payloads for rows 0 and 2. */
#ifndef VF_TEST_QDRANT_FIXTURE_H
#define VF_TEST_QDRANT_FIXTURE_H

#include "vforge/store.h"

typedef struct fixture {
  store_vector_spec spec[3];
  corpus_id ids[3];
  float dense[3 * 4];
  int64_t sp_off[4];
  uint32_t sp_idx[3];
  float sp_val[3];
  int64_t mv_off[4];
  float multi[3 * 2];
  uint8_t dense_null[3];
  corpus_vec_batch vecs[3];
  corpus_batch b;
  int64_t pay_off[4];
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  f->spec[0] = (store_vector_spec){"dense", CORPUS_VEC_DENSE, CORPUS_COSINE, 4};
  f->spec[1] = (store_vector_spec){"sparse", CORPUS_VEC_SPARSE, CORPUS_DOT, 0};
  f->spec[2] = (store_vector_spec){"colbert", CORPUS_VEC_MULTI, CORPUS_DOT, 2};
  f->ids[0].num = 7;
  f->ids[1].is_uuid = true;
  memcpy(f->ids[1].uuid, "0123abcd-0000-1111-2222-333344445555", 37);
  f->ids[2].num = UINT64_MAX;
  for (int i = 0; i < 12; i++)
    f->dense[i] = (float)i * 0.25f - 1.0f;
  f->dense_null[2] = 1;
  int64_t so[4] = {0, 2, 2, 3};
  memcpy(f->sp_off, so, sizeof so);
  f->sp_idx[0] = 3;
  f->sp_idx[1] = 4000000000u;
  f->sp_idx[2] = 0;
  f->sp_val[0] = 0.5f;
  f->sp_val[1] = -2.0f;
  f->sp_val[2] = 1e-7f;
  int64_t mo[4] = {0, 1, 3, 3};
  memcpy(f->mv_off, mo, sizeof mo);
  for (int i = 0; i < 6; i++)
    f->multi[i] = (float)i;
  f->vecs[0] = (corpus_vec_batch){"dense", CORPUS_VEC_DENSE, CORPUS_COSINE, 4, f->dense, NULL,
                                  NULL, NULL, NULL, f->dense_null};
  f->vecs[1] = (corpus_vec_batch){"sparse", CORPUS_VEC_SPARSE, CORPUS_DOT, 0, NULL, f->sp_off,
                                  f->sp_idx, f->sp_val, NULL, NULL};
  f->vecs[2] = (corpus_vec_batch){"colbert", CORPUS_VEC_MULTI, CORPUS_DOT, 2, NULL, f->mv_off,
                                  NULL, NULL, f->multi, NULL};
  f->b.n = 3;
  f->b.ids = f->ids;
  f->b.nvectors = 3;
  f->b.vectors = f->vecs;
  vf_buf_init(&f->b.payload, 0);
  const char *pay = "{\"t\":\"a\\\"b\",\"n\":1}{\"x\":[1,2]}";
  vf_buf_append(&f->b.payload, pay, strlen(pay), NULL);
  int64_t po[4] = {0, 18, 18, 29};
  memcpy(f->pay_off, po, sizeof po);
  f->b.payload_offsets = f->pay_off;
  f->b.file_key = "f.parquet";
}

#endif
