/* .npy reader tests (src/format/npy.c): hand-built files for every dtype and header version,
 * the exact header text numpy writes, and must-fail inputs — bad magic and versions, malformed
 * header dicts, truncated or oversized data, unsupported shapes and Fortran order, and shapes
 * claiming more bytes than any file, which must fail before allocating anything. */
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/format.h"
#include "vforge/vecfile.h"

/* ----------------------------------------------------------- file builders */

/* magic + version + header length + dict (padded with spaces to a 64-byte boundary, '\n') */
static void npy_header(vf_buf *b, int major, const char *dict) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t total = prefix + dl + 1;
  size_t pad = (64 - total % 64) % 64;
  size_t hlen = dl + pad + 1;
  vf_buf_append(b, "\x93NUMPY", 6, NULL);
  uint8_t v[2] = {(uint8_t)major, 0};
  vf_buf_append(b, v, 2, NULL);
  uint8_t l[4] = {(uint8_t)hlen, (uint8_t)(hlen >> 8), (uint8_t)(hlen >> 16),
                  (uint8_t)(hlen >> 24)};
  vf_buf_append(b, l, major == 1 ? 2 : 4, NULL);
  vf_buf_append(b, dict, dl, NULL);
  for (size_t i = 0; i < pad; i++)
    vf_buf_append(b, " ", 1, NULL);
  vf_buf_append(b, "\n", 1, NULL);
}

static void put_le(vf_buf *b, uint64_t v, size_t n, bool be) {
  uint8_t t[8];
  for (size_t i = 0; i < n; i++)
    t[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
  vf_buf_append(b, t, n, NULL);
}

/* opens bytes as an npy file named "t.npy" */
static vf_status open_bytes(const vf_buf *b, vec_file **f, vf_error *err) {
  io_source *src = NULL;
  vf_status st = io_open_memory(b->data, b->len, "t.npy", &src, err);
  if (st != VF_OK) return st;
  return npy_open(src, f, err);
}

/* a header alone (plus `data` zero bytes): the status of opening it */
static vf_status try_dict(int major, const char *dict, size_t data, vf_error *err) {
  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, major, dict);
  for (size_t i = 0; i < data; i++)
    vf_buf_append(&b, "\0", 1, NULL);
  vec_file *f = NULL;
  vf_status st = open_bytes(&b, &f, err);
  vec_close(f);
  vf_buf_free(&b);
  return st;
}

/* ------------------------------------------------------------------- tests */

VF_TEST(npy_float32_all_versions) {
  for (int major = 1; major <= 3; major++) {
    vf_buf b;
    vf_buf_init(&b, 0);
    npy_header(&b, major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
    float vals[12];
    for (int i = 0; i < 12; i++)
      vals[i] = (float)i * 0.5f - 2.0f;
    vf_buf_append(&b, vals, sizeof vals, NULL);
    vec_file *f = NULL;
    vf_error err = {0};
    CHECK_OK(open_bytes(&b, &f, &err));
    if (f) {
      CHECK_EQ_INT(vec_rows(f), 3);
      CHECK_EQ_INT(vec_dim(f), 4);
      CHECK_EQ_STR(vec_format(f), "npy");
      CHECK_EQ_INT(vec_layout_of(f)->dtype, VEC_F32);
      CHECK_EQ_INT(vec_layout_of(f)->data_offset % 64, 0);
      float out[12] = {0};
      CHECK_OK(vec_read_rows(f, 0, 3, out, &err));
      CHECK(memcmp(out, vals, sizeof vals) == 0);
      float mid[4] = {0};
      CHECK_OK(vec_read_rows(f, 1, 1, mid, &err));
      CHECK(memcmp(mid, vals + 4, sizeof mid) == 0);
      CHECK_OK(vec_read_rows(f, 3, 0, mid, &err)); /* empty range at the end */
      CHECK_STATUS(vec_read_rows(f, 2, 2, out, &err), VF_EUSAGE);
      CHECK(strstr(err.msg, "t.npy") != NULL);
      /* floats are not integers */
      int64_t iv[4];
      CHECK_STATUS(vec_read_rows_i64(f, 0, 1, iv, &err), VF_EUNSUPPORTED);
    }
    vec_close(f);
    vf_buf_free(&b);
  }
}

/* every dtype, both byte orders where they exist: values 0..11 scaled and signed */
VF_TEST(npy_every_dtype) {
  static const struct {
    const char *descr;
    vec_dtype t;
  } cases[] = {{"<f4", VEC_F32}, {">f4", VEC_F32}, {"<f2", VEC_F16}, {">f2", VEC_F16},
               {"<f8", VEC_F64}, {">f8", VEC_F64}, {"|u1", VEC_U8},  {"|i1", VEC_I8},
               {"<i2", VEC_I16}, {">i2", VEC_I16}, {"<i4", VEC_I32}, {">i4", VEC_I32},
               {"<i8", VEC_I64}, {">i8", VEC_I64}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    bool be = cases[c].descr[0] == '>';
    vec_dtype t = cases[c].t;
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 6), }",
             cases[c].descr);
    vf_buf b;
    vf_buf_init(&b, 0);
    npy_header(&b, 1, dict);
    float want[12];
    for (int i = 0; i < 12; i++) {
      int v = t == VEC_U8 ? i * 20 : (i - 6) * 3; /* u8 up to 220, signed around zero */
      switch (t) {
      case VEC_F32: {
        float x = (float)v + 0.25f;
        uint32_t u;
        memcpy(&u, &x, 4);
        put_le(&b, u, 4, be);
        want[i] = x;
        break;
      }
      case VEC_F64: {
        double x = (double)v + 0.125;
        uint64_t u;
        memcpy(&u, &x, 8);
        put_le(&b, u, 8, be);
        want[i] = (float)x;
        break;
      }
      case VEC_F16: {
        /* small integers + 0.5 are exact in binary16: build via float bits */
        float x = (float)v + 0.5f;
        uint32_t u;
        memcpy(&u, &x, 4);
        uint32_t sign = (u >> 16) & 0x8000u;
        int exp = (int)((u >> 23) & 0xff) - 127 + 15;
        uint16_t h = (uint16_t)(sign | ((uint32_t)exp << 10) | ((u >> 13) & 0x3ffu));
        put_le(&b, h, 2, be);
        want[i] = x;
        break;
      }
      default:
        put_le(&b, (uint64_t)(int64_t)v, vec_dtype_size(t), be);
        want[i] = (float)v;
        break;
      }
    }
    vec_file *f = NULL;
    vf_error err = {0};
    CHECK_OK(open_bytes(&b, &f, &err));
    if (f) {
      CHECK_EQ_INT(vec_layout_of(f)->dtype, t);
      float out[12];
      CHECK_OK(vec_read_rows(f, 0, 2, out, &err));
      for (int i = 0; i < 12; i++)
        if (out[i] != want[i])
          vf_test_fail(__FILE__, __LINE__, "%s element %d: %g != %g", cases[c].descr, i,
                       (double)out[i], (double)want[i]);
      if (vec_dtype_is_int(t)) {
        int64_t iv[6];
        CHECK_OK(vec_read_rows_i64(f, 1, 1, iv, &err));
        for (int i = 0; i < 6; i++)
          CHECK_EQ_INT(iv[i], (int64_t)want[6 + i]);
      }
    }
    vec_close(f);
    vf_buf_free(&b);
  }
}

VF_TEST(npy_half_specials) {
  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 4), }");
  uint16_t h[4] = {0x7c00 /* inf */, 0x0001 /* smallest subnormal */, 0xc000 /* -2 */, 0x3e00};
  vf_buf_append(&b, h, sizeof h, NULL);
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(open_bytes(&b, &f, &err));
  float out[4] = {0};
  if (f) CHECK_OK(vec_read_rows(f, 0, 1, out, &err));
  CHECK(isinf(out[0]) && out[0] > 0);
  CHECK(out[1] == ldexpf(1.0f, -24));
  CHECK(out[2] == -2.0f);
  CHECK(out[3] == 1.5f);
  vec_close(f);
  vf_buf_free(&b);
}

/* 1-D id arrays, Python 2 'L' suffixes, double quotes, no trailing comma, Fortran flag on 1-D */
VF_TEST(npy_header_spellings) {
  vf_error err = {0};
  CHECK_OK(try_dict(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 24, &err));
  CHECK_OK(try_dict(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }", 24, &err));
  CHECK_OK(
      try_dict(1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 2)}", 16, &err));
  CHECK_OK(try_dict(1, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}", 16, &err));
  CHECK_OK(try_dict(2, "{'descr': '<f4', 'fortran_order': True, 'shape': (5,), }", 20, &err));
  CHECK_OK(try_dict(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 7), }", 28, &err));
  CHECK_OK(try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2,), }", 16, &err));
  /* zero rows are a valid (empty) file */
  CHECK_OK(try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 8), }", 0, &err));

  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, 3, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }");
  for (int i = 0; i < 4; i++)
    put_le(&b, (uint64_t)(int64_t)(i * 1000 - 1), 4, false);
  vec_file *f = NULL;
  CHECK_OK(open_bytes(&b, &f, &err));
  if (f) {
    CHECK_EQ_INT(vec_rows(f), 4);
    CHECK_EQ_INT(vec_dim(f), 1);
    int64_t ids[4] = {0};
    CHECK_OK(vec_read_rows_i64(f, 0, 4, ids, &err));
    CHECK_EQ_INT(ids[0], -1);
    CHECK_EQ_INT(ids[3], 2999);
  }
  vec_close(f);
  vf_buf_free(&b);
}

VF_TEST(npy_bad_magic_and_version) {
  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }");
  vf_buf_append(&b, "\0\0\0\0", 4, NULL);
  vf_error err = {0};
  vec_file *f = NULL;
  b.data[1] = 'X';
  CHECK_STATUS(open_bytes(&b, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "t.npy") && strstr(err.msg, "magic"));
  b.data[1] = 'N';
  b.data[6] = 4;
  CHECK_STATUS(open_bytes(&b, &f, &err), VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "version 4.0") != NULL);
  b.data[6] = 1;
  b.data[7] = 1;
  CHECK_STATUS(open_bytes(&b, &f, &err), VF_EUNSUPPORTED);
  b.data[7] = 0;
  CHECK_OK(open_bytes(&b, &f, &err));
  vec_close(f);
  f = NULL;
  /* shorter than the prefix, and a header length past the end */
  vf_buf s = {b.data, 8, 8, 0, NULL};
  CHECK_STATUS(open_bytes(&s, &f, &err), VF_ECORRUPT);
  s.len = 20;
  CHECK_STATUS(open_bytes(&s, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "header length") != NULL);
  CHECK(f == NULL);
  vf_buf_free(&b);
}

VF_TEST(npy_data_size_mismatch) {
  vf_error err = {0};
  /* (3, 4) float32 needs 48 bytes */
  const char *d = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  CHECK_STATUS(try_dict(1, d, 47, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "t.npy") && strstr(err.msg, "47 bytes") && strstr(err.msg, "48 bytes") &&
        strstr(err.msg, "(3, 4)"));
  CHECK_STATUS(try_dict(1, d, 49, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "49 bytes") && strstr(err.msg, "trailing"));
  CHECK_STATUS(try_dict(1, d, 0, &err), VF_ECORRUPT);
  CHECK_OK(try_dict(1, d, 48, &err));
}

/* shapes whose byte size overflows or dwarfs the file: no allocation, a clean error */
VF_TEST(npy_huge_shapes) {
  vf_error err = {0};
  CHECK_STATUS(
      try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 768), }",
               16, &err),
      VF_ECORRUPT);
  CHECK(strstr(err.msg, "larger than any file") != NULL);
  CHECK_STATUS(
      try_dict(
          1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }",
          16, &err),
      VF_ECORRUPT);
  CHECK_STATUS(try_dict(1,
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000), }",
                        16, &err),
               VF_ECORRUPT);
  CHECK(strstr(err.msg, "needs exactly 4000000000000 bytes") != NULL);
  CHECK_STATUS(
      try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1), }",
               0, &err),
      VF_ECORRUPT);
  /* a v2 header length of almost 4 GiB in a tiny file */
  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }");
  b.data[8] = 0xf0;
  b.data[9] = b.data[10] = b.data[11] = 0xff;
  vec_file *f = NULL;
  CHECK_STATUS(open_bytes(&b, &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "4294967280") != NULL);
  vf_buf_free(&b);
}

VF_TEST(npy_unsupported_shapes_and_dtypes) {
  vf_error err = {0};
  CHECK_STATUS(try_dict(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }", 48, &err),
               VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "Fortran") != NULL);
  CHECK_STATUS(
      try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", 32, &err),
      VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "3 dimensions") != NULL);
  CHECK_STATUS(
      try_dict(1,
               "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
               4, &err),
      VF_EUNSUPPORTED);
  CHECK_STATUS(try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, &err),
               VF_EUNSUPPORTED);
  CHECK_STATUS(try_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", 0, &err),
               VF_EUNSUPPORTED);
  CHECK_STATUS(try_dict(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 1), }", 8, &err),
               VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "'<c8'") != NULL);
  CHECK_STATUS(try_dict(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (1, 1), }", 1, &err),
               VF_EUNSUPPORTED);
  CHECK_STATUS(try_dict(1, "{'descr': '|f4', 'fortran_order': False, 'shape': (1, 1), }", 4, &err),
               VF_EUNSUPPORTED);
  CHECK_STATUS(
      try_dict(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, &err),
      VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "structured") != NULL);
}

VF_TEST(npy_malformed_headers) {
  static const char *bad[] = {
      "",
      "{",
      "{'descr': '<f4', 'fortran_order': False}",  /* no shape */
      "{'descr': '<f4', 'shape': (1, 1)}",         /* no fortran_order */
      "{'fortran_order': False, 'shape': (1, 1)}", /* no descr */
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'extra': 1}",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", /* not a tuple */
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1, 1]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (01, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1),, }",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr: '<f4', 'fortran_order': False, 'shape': (1, 1)}",
      "{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)} x",
      "['descr', '<f4']",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vf_error err = {0};
    vf_status st = try_dict(1, bad[i], 4, &err);
    if (st != VF_ECORRUPT)
      vf_test_fail(__FILE__, __LINE__, "header %zu <%s>: %s, want corrupt (%s)", i, bad[i],
                   vf_status_name(st), err.msg);
    else
      CHECK(strstr(err.msg, "t.npy: npy header at byte") != NULL);
  }
}

/* more data than one scratch chunk, converted: exercises the chunked read path */
VF_TEST(npy_large_converted_read) {
  const uint64_t rows = 1000, dim = 1100; /* 8.8 MB of float64 */
  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1100), }");
  vf_error err = {0};
  CHECK_OK(vf_buf_reserve(&b, rows * dim * 8, &err));
  for (uint64_t i = 0; i < rows * dim; i++) {
    double x = (double)(i % 9973) - 4000.0;
    vf_buf_put(&b, &x, 8);
  }
  vec_file *f = NULL;
  CHECK_OK(open_bytes(&b, &f, &err));
  float *out = malloc(rows * dim * sizeof(float));
  if (f && out) {
    CHECK_OK(vec_read_rows(f, 0, rows, out, &err));
    int bad = 0;
    for (uint64_t i = 0; i < rows * dim; i++)
      bad += out[i] != (float)((double)(i % 9973) - 4000.0);
    CHECK_EQ_INT(bad, 0);
    CHECK_OK(vec_read_rows(f, 997, 3, out, &err));
    CHECK(out[0] == (float)((double)((997 * dim) % 9973) - 4000.0));
  }
  free(out);
  vec_close(f);
  vf_buf_free(&b);
}

VF_TEST(npy_open_path) {
  const char *dir = vf_test_tmpdir();
  char path[4096];
  snprintf(path, sizeof path, "%s/v.npy", dir);
  vf_buf b;
  vf_buf_init(&b, 0);
  npy_header(&b, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }");
  vf_buf_append(&b, "\x01\x02\x03\xfd\xfe\xff", 6, NULL);
  FILE *fp = fopen(path, "wb");
  CHECK(fp != NULL);
  if (!fp) return;
  fwrite(b.data, 1, b.len, fp);
  fclose(fp);
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(vec_open_path(path, NULL, &f, &err));
  if (f) {
    float out[6];
    CHECK_OK(vec_read_rows(f, 0, 2, out, &err));
    CHECK(out[0] == 1.0f && out[5] == 255.0f);
    CHECK(strstr(vec_name(f), "v.npy") != NULL);
  }
  vec_close(f);
  snprintf(path, sizeof path, "%s/x.bin", dir);
  fp = fopen(path, "wb");
  if (fp) {
    fputs("hello world", fp);
    fclose(fp);
  }
  CHECK_STATUS(vec_open_path(path, NULL, &f, &err), VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "x.bin") != NULL);
  snprintf(path, sizeof path, "%s/missing.npy", dir);
  CHECK_STATUS(vec_open_path(path, NULL, &f, &err), VF_ENOTFOUND);
  vf_buf_free(&b);
}
