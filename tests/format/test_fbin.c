/* big-ann binary vector files and ground truth (src/format/fbin.c): every element type by name,
 * the shard-suffix rule, exact-size checks (truncated, trailing bytes, a header claiming more
 * than any file), zero dimension, and the ground-truth layout and its size check. */
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/vecfile.h"

static void put32(vf_buf *b, uint32_t v) {
  uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  vf_buf_append(b, t, 4, NULL);
}

static vf_status open_mem(const vf_buf *b, vec_dtype t, vec_file **f, vf_error *err) {
  io_source *src = NULL;
  vf_status st = io_open_memory(b->data, b->len, "t.fbin", &src, err);
  if (st != VF_OK) return st;
  return fbin_open(src, t, f, err);
}

VF_TEST(fbin_f32_rows) {
  vf_buf b;
  vf_buf_init(&b, 0);
  put32(&b, 3);
  put32(&b, 2);
  float v[6] = {1, 2, 3.5f, -4, 5, 6e10f};
  vf_buf_append(&b, v, sizeof v, NULL);
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(open_mem(&b, VEC_F32, &f, &err));
  if (f) {
    CHECK_EQ_INT(vec_rows(f), 3);
    CHECK_EQ_INT(vec_dim(f), 2);
    CHECK_EQ_STR(vec_format(f), "fbin");
    float out[4];
    CHECK_OK(vec_read_rows(f, 1, 2, out, &err));
    CHECK(out[0] == 3.5f && out[1] == -4 && out[2] == 5 && out[3] == 6e10f);
    CHECK_STATUS(vec_read_rows(f, 2, 2, out, &err), VF_EUSAGE);
  }
  vec_close(f);
  vf_buf_free(&b);
}

VF_TEST(fbin_u8_i8_i32) {
  vf_buf b;
  vf_buf_init(&b, 0);
  put32(&b, 2);
  put32(&b, 2);
  uint8_t u[4] = {0, 255, 128, 7};
  vf_buf_append(&b, u, 4, NULL);
  vec_file *f = NULL;
  vf_error err = {0};
  float out[4];
  CHECK_OK(open_mem(&b, VEC_U8, &f, &err));
  if (f && vec_read_rows(f, 0, 2, out, &err) == VF_OK)
    CHECK(out[0] == 0 && out[1] == 255 && out[2] == 128 && out[3] == 7);
  vec_close(f);
  CHECK_OK(open_mem(&b, VEC_I8, &f, &err));
  if (f && vec_read_rows(f, 0, 2, out, &err) == VF_OK)
    CHECK(out[0] == 0 && out[1] == -1 && out[2] == -128 && out[3] == 7);
  vec_close(f);
  /* the same 4 data bytes are one int32 row of dim... 2 rows x 2 dims needs 16 bytes */
  CHECK_STATUS(open_mem(&b, VEC_I32, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "t.fbin") != NULL && strstr(err.msg, "truncated") != NULL);
  vf_buf_free(&b);
}

VF_TEST(fbin_bad_sizes) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vec_file *f = NULL;
  vf_error err = {0};
  vf_buf_append(&b, "\x01\x00\x00", 3, NULL);
  CHECK_STATUS(open_mem(&b, VEC_F32, &f, &err), VF_ECORRUPT); /* shorter than the header */
  vf_buf_reset(&b);
  put32(&b, 1);
  put32(&b, 1);
  vf_buf_append(&b, "\0\0\0\0\0", 5, NULL); /* one trailing byte */
  CHECK_STATUS(open_mem(&b, VEC_F32, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "trailing") != NULL);
  vf_buf_reset(&b);
  put32(&b, 0xffffffffu);
  put32(&b, 0xffffffffu); /* 2^64 bytes claimed by a 8-byte file */
  CHECK_STATUS(open_mem(&b, VEC_F32, &f, &err), VF_ECORRUPT);
  vf_buf_reset(&b);
  put32(&b, 5);
  put32(&b, 0);
  CHECK_STATUS(open_mem(&b, VEC_F32, &f, &err), VF_EUNSUPPORTED);
  vf_buf_reset(&b);
  put32(&b, 0);
  put32(&b, 8); /* an empty file of dimension 8 is fine */
  CHECK_OK(open_mem(&b, VEC_F32, &f, &err));
  if (f) CHECK_EQ_INT(vec_rows(f), 0);
  vec_close(f);
  vf_buf_free(&b);
}

VF_TEST(fbin_dtype_names) {
  vec_dtype t;
  CHECK(fbin_dtype_of_path("base.fbin", &t) && t == VEC_F32);
  CHECK(fbin_dtype_of_path("/d/base.1B.u8bin", &t) && t == VEC_U8);
  CHECK(fbin_dtype_of_path("q.i8bin", &t) && t == VEC_I8);
  CHECK(fbin_dtype_of_path("gt.ibin", &t) && t == VEC_I32);
  CHECK(fbin_dtype_of_path("base.u8bin.3", &t) && t == VEC_U8);
  CHECK(!fbin_dtype_of_path("base.npy", &t) && t == VEC_F32);
  CHECK(!fbin_dtype_of_path("fbin", &t));
}

static void write_file(const char *path, const vf_buf *b) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return;
  fwrite(b->data, 1, b->len, fp);
  fclose(fp);
}

VF_TEST(bigann_ground_truth) {
  const char *dir = vf_test_tmpdir();
  char path[4096];
  snprintf(path, sizeof path, "%s/gt.bin", dir);
  vf_buf b;
  vf_buf_init(&b, 0);
  put32(&b, 2);
  put32(&b, 3);
  int32_t ids[6] = {5, 1, 9, 0, 2, 4};
  float d[6] = {0.5f, 1, 2, 0, 3, 3};
  vf_buf_append(&b, ids, sizeof ids, NULL);
  vf_buf_append(&b, d, sizeof d, NULL);
  write_file(path, &b);
  vec_gt gt;
  vf_error err = {0};
  CHECK_OK(bigann_gt_read(path, &gt, &err));
  CHECK_EQ_INT(gt.nq, 2);
  CHECK_EQ_INT(gt.k, 3);
  if (gt.ids) CHECK(gt.ids[0] == 5 && gt.ids[5] == 4 && gt.dist[0] == 0.5f && gt.dist[4] == 3);
  vec_gt_free(&gt);
  b.len -= 4; /* truncated */
  write_file(path, &b);
  CHECK_STATUS(bigann_gt_read(path, &gt, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "gt.bin") != NULL);
  vf_buf_reset(&b);
  put32(&b, 0xffffffffu);
  put32(&b, 0xffffffffu);
  write_file(path, &b);
  CHECK_STATUS(bigann_gt_read(path, &gt, &err), VF_ECORRUPT);
  snprintf(path, sizeof path, "%s/none.bin", dir);
  CHECK_STATUS(bigann_gt_read(path, &gt, &err), VF_ENOTFOUND);
  vf_buf_free(&b);
}

VF_TEST(fbin_by_path) {
  const char *dir = vf_test_tmpdir();
  char path[4096];
  snprintf(path, sizeof path, "%s/q.u8bin", dir);
  vf_buf b;
  vf_buf_init(&b, 0);
  put32(&b, 1);
  put32(&b, 3);
  vf_buf_append(&b, "\x01\x02\x03", 3, NULL);
  write_file(path, &b);
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(vec_open_path(path, NULL, &f, &err));
  if (f) {
    float out[3];
    CHECK_OK(vec_read_rows(f, 0, 1, out, &err));
    CHECK(out[0] == 1 && out[2] == 3);
  }
  vec_close(f);
  vf_buf_free(&b);
}
