/* IDX reader tests (src/format/idx.c): hand-built files of every element type, plain and
 * gzipped (one and several gzip members), must-fail inputs (bad magic, truncated headers and
 * data, trailing bytes, gzip streams that are truncated, corrupt, longer than the header says,
 * or whose header claims more than the stream could hold), and — when Debian's
 * dataset-fashion-mnist is installed — the real Fashion-MNIST test set checked against an
 * independent zlib gzread of the same file. */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "vf_test.h"
#include "vforge/vecfile.h"

#define FMNIST_DIR "/usr/share/datasets/fashion-mnist"

static void put_be(vf_buf *b, uint64_t v, size_t n) {
  uint8_t t[8];
  for (size_t i = 0; i < n; i++)
    t[n - 1 - i] = (uint8_t)(v >> (8 * i));
  vf_buf_append(b, t, n, NULL);
}

/* IDX header: type, dims */
static void idx_header(vf_buf *b, uint8_t type, int ndim, const uint32_t *dims) {
  uint8_t m[4] = {0, 0, type, (uint8_t)ndim};
  vf_buf_append(b, m, 4, NULL);
  for (int i = 0; i < ndim; i++)
    put_be(b, dims[i], 4);
}

/* gzip of `len` bytes (one member) appended to out */
static void gzip_append(vf_buf *out, const void *data, size_t len) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  uLong bound = deflateBound(&zs, (uLong)len) + 64;
  vf_buf_reserve(out, bound, NULL);
  zs.next_in = (Bytef *)(uintptr_t)data;
  zs.avail_in = (uInt)len;
  zs.next_out = out->data + out->len;
  zs.avail_out = (uInt)bound;
  deflate(&zs, Z_FINISH);
  out->len += bound - zs.avail_out;
  deflateEnd(&zs);
}

static vf_status open_bytes(const void *data, size_t len, const vec_open_opts *o, vec_file **f,
                            vf_error *err) {
  io_source *src = NULL;
  vf_status st = io_open_memory(data, len, "t-idx3-ubyte", &src, err);
  if (st != VF_OK) return st;
  return idx_open(src, o, f, err);
}

/* (4, 2, 3) u8 images: 4 rows of 6 values */
static void images_u8(vf_buf *b) {
  uint32_t dims[3] = {4, 2, 3};
  idx_header(b, 0x08, 3, dims);
  for (int i = 0; i < 24; i++) {
    uint8_t v = (uint8_t)(i * 11);
    vf_buf_append(b, &v, 1, NULL);
  }
}

VF_TEST(idx_u8_images_plain_and_gzip) {
  vf_buf raw, gz;
  vf_buf_init(&raw, 0);
  vf_buf_init(&gz, 0);
  images_u8(&raw);
  gzip_append(&gz, raw.data, raw.len);
  for (int pass = 0; pass < 2; pass++) {
    const vf_buf *b = pass ? &gz : &raw;
    vec_file *f = NULL;
    vf_error err = {0};
    CHECK_OK(open_bytes(b->data, b->len, NULL, &f, &err));
    if (!f) continue;
    CHECK_EQ_INT(vec_rows(f), 4);
    CHECK_EQ_INT(vec_dim(f), 6);
    CHECK_EQ_STR(vec_format(f), "idx");
    CHECK_EQ_INT(vec_layout_of(f)->ndim, 3);
    float out[24];
    CHECK_OK(vec_read_rows(f, 0, 4, out, &err));
    for (int i = 0; i < 24; i++)
      CHECK(out[i] == (float)(uint8_t)(i * 11));
    CHECK_OK(vec_read_rows(f, 3, 1, out, &err));
    CHECK(out[0] == (float)(uint8_t)(18 * 11));
    CHECK_STATUS(vec_read_rows(f, 4, 1, out, &err), VF_EUSAGE);
    vec_close(f);
  }
  vf_buf_free(&raw);
  vf_buf_free(&gz);
}

VF_TEST(idx_every_type) {
  static const struct {
    uint8_t code;
    vec_dtype t;
  } types[] = {{0x08, VEC_U8},  {0x09, VEC_I8},  {0x0B, VEC_I16},
               {0x0C, VEC_I32}, {0x0D, VEC_F32}, {0x0E, VEC_F64}};
  for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
    vf_buf b;
    vf_buf_init(&b, 0);
    uint32_t dims[2] = {3, 2};
    idx_header(&b, types[k].code, 2, dims);
    float want[6];
    for (int i = 0; i < 6; i++) {
      int v = types[k].t == VEC_U8 ? i * 40 : (i - 3) * 7;
      if (types[k].t == VEC_F32) {
        float x = (float)v + 0.75f;
        uint32_t u;
        memcpy(&u, &x, 4);
        put_be(&b, u, 4);
        want[i] = x;
      } else if (types[k].t == VEC_F64) {
        double x = (double)v - 0.0625;
        uint64_t u;
        memcpy(&u, &x, 8);
        put_be(&b, u, 8);
        want[i] = (float)x;
      } else {
        put_be(&b, (uint64_t)(int64_t)v, vec_dtype_size(types[k].t));
        want[i] = (float)v;
      }
    }
    vec_file *f = NULL;
    vf_error err = {0};
    CHECK_OK(open_bytes(b.data, b.len, NULL, &f, &err));
    if (f) {
      CHECK_EQ_INT(vec_layout_of(f)->dtype, types[k].t);
      float out[6];
      CHECK_OK(vec_read_rows(f, 0, 3, out, &err));
      for (int i = 0; i < 6; i++)
        if (out[i] != want[i])
          vf_test_fail(__FILE__, __LINE__, "type %02x element %d: %g != %g", types[k].code, i,
                       (double)out[i], (double)want[i]);
      int64_t iv[2];
      vf_status st = vec_read_rows_i64(f, 2, 1, iv, &err);
      if (vec_dtype_is_int(types[k].t)) {
        CHECK_OK(st);
        CHECK_EQ_INT(iv[1], (int64_t)want[5]);
      } else {
        CHECK_STATUS(st, VF_EUNSUPPORTED);
      }
    }
    vec_close(f);
    vf_buf_free(&b);
  }
}

VF_TEST(idx_labels_1d) {
  vf_buf b;
  vf_buf_init(&b, 0);
  uint32_t n = 5;
  idx_header(&b, 0x08, 1, &n);
  vf_buf_append(&b, "\x09\x00\x03\x07\x02", 5, NULL);
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(open_bytes(b.data, b.len, NULL, &f, &err));
  if (f) {
    CHECK_EQ_INT(vec_rows(f), 5);
    CHECK_EQ_INT(vec_dim(f), 1);
    int64_t l[5];
    CHECK_OK(vec_read_rows_i64(f, 0, 5, l, &err));
    CHECK(l[0] == 9 && l[1] == 0 && l[3] == 7 && l[4] == 2);
  }
  vec_close(f);
  vf_buf_free(&b);
}

VF_TEST(idx_bad_plain_files) {
  vf_buf b;
  vf_buf_init(&b, 0);
  images_u8(&b);
  vf_error err = {0};
  vec_file *f = NULL;
  /* magic */
  b.data[0] = 1;
  CHECK_STATUS(open_bytes(b.data, b.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "t-idx3-ubyte") && strstr(err.msg, "magic"));
  b.data[0] = 0;
  b.data[2] = 0x0A;
  CHECK_STATUS(open_bytes(b.data, b.len, NULL, &f, &err), VF_ECORRUPT);
  b.data[2] = 0x08;
  b.data[3] = 0;
  CHECK_STATUS(open_bytes(b.data, b.len, NULL, &f, &err), VF_EUNSUPPORTED);
  b.data[3] = 200;
  CHECK_STATUS(open_bytes(b.data, b.len, NULL, &f, &err), VF_EUNSUPPORTED);
  b.data[3] = 3;
  /* truncated: inside the magic, inside the dims, inside the data; trailing bytes */
  CHECK_STATUS(open_bytes(b.data, 3, NULL, &f, &err), VF_ECORRUPT);
  CHECK_STATUS(open_bytes(b.data, 10, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "needs 16 bytes") != NULL);
  CHECK_STATUS(open_bytes(b.data, b.len - 1, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "23 bytes") && strstr(err.msg, "24 bytes") && strstr(err.msg, "(4, 2, 3)"));
  vf_buf_append(&b, "x", 1, NULL);
  CHECK_STATUS(open_bytes(b.data, b.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "trailing") != NULL);
  CHECK(f == NULL);
  /* huge claimed dimensions in a tiny file */
  vf_buf h;
  vf_buf_init(&h, 0);
  uint32_t dims[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  idx_header(&h, 0x0E, 4, dims);
  CHECK_STATUS(open_bytes(h.data, h.len, NULL, &f, &err), VF_ECORRUPT);
  vf_buf_free(&h);
  vf_buf_free(&b);
}

VF_TEST(idx_gzip_members_and_errors) {
  vf_buf raw, gz;
  vf_buf_init(&raw, 0);
  vf_buf_init(&gz, 0);
  images_u8(&raw);
  vf_error err = {0};
  vec_file *f = NULL;
  /* two gzip members (as `cat a.gz b.gz` makes) read as one stream */
  gzip_append(&gz, raw.data, 10);
  gzip_append(&gz, raw.data + 10, raw.len - 10);
  CHECK_OK(open_bytes(gz.data, gz.len, NULL, &f, &err));
  if (f) {
    float out[24];
    CHECK_OK(vec_read_rows(f, 0, 4, out, &err));
    CHECK(out[23] == (float)(uint8_t)(23 * 11));
  }
  vec_close(f);
  f = NULL;
  size_t two = gz.len;
  /* garbage after the last member */
  vf_buf_append(&gz, "garbage!", 8, NULL);
  CHECK_STATUS(open_bytes(gz.data, gz.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "t-idx3-ubyte") != NULL);
  /* truncated stream */
  CHECK_STATUS(open_bytes(gz.data, two - 9, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "truncated") != NULL);
  /* corrupted deflate data (flip bytes in the middle of the first member) */
  gz.len = two;
  vf_buf bad;
  vf_buf_init(&bad, 0);
  gzip_append(&bad, raw.data, raw.len);
  for (size_t i = 12; i < bad.len - 8; i++)
    bad.data[i] ^= 0x5a;
  CHECK(open_bytes(bad.data, bad.len, NULL, &f, &err) == VF_ECORRUPT);
  vf_buf_free(&bad);
  /* more data than the header's dimensions, and less */
  vf_buf more;
  vf_buf_init(&more, 0);
  vf_buf_append(&raw, "\x01\x02", 2, NULL);
  gzip_append(&more, raw.data, raw.len);
  CHECK_STATUS(open_bytes(more.data, more.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "trailing") != NULL);
  more.len = 0;
  gzip_append(&more, raw.data, raw.len - 3); /* 16 + 24 + 2 appended: one data byte short */
  CHECK_STATUS(open_bytes(more.data, more.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "23 bytes") && strstr(err.msg, "24 bytes"));
  /* a stream ending inside the header */
  more.len = 0;
  gzip_append(&more, raw.data, 9);
  CHECK_STATUS(open_bytes(more.data, more.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "inside the IDX header") != NULL);
  vf_buf_free(&more);
  CHECK(f == NULL);
  vf_buf_free(&raw);
  vf_buf_free(&gz);
}

/* A header claiming 2^32 x 784 bytes in a few dozen compressed bytes: refused from the ratio
 * bound before any allocation; a legitimate size above max_inflate is refused too. */
VF_TEST(idx_gzip_claims_bounded) {
  vf_buf raw, gz;
  vf_buf_init(&raw, 0);
  vf_buf_init(&gz, 0);
  uint32_t dims[3] = {0xffffffffu, 28, 28};
  idx_header(&raw, 0x08, 3, dims);
  vf_buf_append(&raw, "\0\0\0\0", 4, NULL);
  gzip_append(&gz, raw.data, raw.len);
  vf_error err = {0};
  vec_file *f = NULL;
  CHECK_STATUS(open_bytes(gz.data, gz.len, NULL, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "more than a") != NULL);
  /* 200 000 zero bytes compress well below the ratio bound; a 64 KiB cap refuses them */
  raw.len = 0;
  gz.len = 0;
  uint32_t d2[2] = {1000, 200};
  idx_header(&raw, 0x08, 2, d2);
  CHECK_OK(vf_buf_reserve(&raw, 200000, &err));
  memset(raw.data + raw.len, 0, 200000);
  raw.len += 200000;
  gzip_append(&gz, raw.data, raw.len);
  vec_open_opts o = {.max_inflate = 65536};
  CHECK_STATUS(open_bytes(gz.data, gz.len, &o, &f, &err), VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "gunzip") != NULL);
  CHECK_OK(open_bytes(gz.data, gz.len, NULL, &f, &err));
  if (f) CHECK_EQ_INT(vec_rows(f), 1000);
  vec_close(f);
  vf_buf_free(&raw);
  vf_buf_free(&gz);
}

/* the real Fashion-MNIST test set, compared with an independent gzread of the same bytes */
VF_TEST(idx_fashion_mnist) {
  const char *img = FMNIST_DIR "/t10k-images-idx3-ubyte.gz";
  const char *lab = FMNIST_DIR "/t10k-labels-idx1-ubyte.gz";
  FILE *probe = fopen(img, "rb");
  if (!probe) {
    vf_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  fclose(probe);
  vec_file *f = NULL, *l = NULL;
  vf_error err = {0};
  CHECK_OK(vec_open_path(img, NULL, &f, &err));
  CHECK_OK(vec_open_path(lab, NULL, &l, &err));
  uint8_t *ref = malloc(7840016);
  gzFile gzf = gzopen(img, "rb");
  int got = gzf && ref ? gzread(gzf, ref, 7840016) : -1;
  if (gzf) gzclose(gzf);
  CHECK_EQ_INT(got, 7840016);
  if (f && l && got == 7840016) {
    CHECK_EQ_INT(vec_rows(f), 10000);
    CHECK_EQ_INT(vec_dim(f), 784);
    CHECK_EQ_INT(vec_rows(l), 10000);
    CHECK_EQ_INT(vec_dim(l), 1);
    float *rows = malloc(10000 * 784 * sizeof(float));
    if (rows) {
      CHECK_OK(vec_read_rows(f, 0, 10000, rows, &err));
      size_t bad = 0;
      for (size_t i = 0; i < 10000 * 784; i++)
        bad += rows[i] != (float)ref[16 + i];
      CHECK_EQ_INT(bad, 0);
    }
    free(rows);
    int64_t labels[10000];
    CHECK_OK(vec_read_rows_i64(l, 0, 10000, labels, &err));
    /* the first labels of the test set: 9 2 1 1 6 (ankle boot, pullover, trouser, ...) */
    CHECK(labels[0] == 9 && labels[1] == 2 && labels[2] == 1 && labels[3] == 1 && labels[4] == 6);
    int64_t counts[10] = {0};
    for (int i = 0; i < 10000; i++)
      if (labels[i] >= 0 && labels[i] < 10) counts[labels[i]]++;
    for (int c = 0; c < 10; c++)
      CHECK_EQ_INT(counts[c], 1000);
  }
  free(ref);
  vec_close(f);
  vec_close(l);
}
