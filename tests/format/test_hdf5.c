/* HDF5 datasets as vector files (src/format/hdf5.c), on files written here with libhdf5:
 * contiguous float32, chunked + deflate float64 (read across chunk boundaries and partial
 * rows), 1-D and 2-D integer datasets read as int64, the root `distance` attribute as a
 * fixed-length and as a variable-length string, and must-fail inputs: a missing dataset
 * (named with the file's datasets), a 3-D and a string dataset, a non-HDF5 file, a missing
 * file. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/vecfile.h"

static void put(hid_t f, const char *name, hid_t ftype, hid_t mtype, int nd, const hsize_t *dims,
                const void *data, bool chunked) {
  hid_t sp = H5Screate_simple(nd, dims, NULL);
  hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunked) {
    hsize_t ch[2] = {3, dims[1] > 1 ? 2 : 1};
    H5Pset_chunk(pl, nd, ch);
    H5Pset_deflate(pl, 4);
  }
  hid_t d = H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
  H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(d);
  H5Pclose(pl);
  H5Sclose(sp);
}

static void put_attr(hid_t f, const char *name, const char *value, bool variable) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, variable ? H5T_VARIABLE : strlen(value));
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (variable)
    H5Awrite(a, t, &value);
  else
    H5Awrite(a, t, value);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

static const char *bundle(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/b.hdf5", vf_test_tmpdir());
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  float tr[5][3];
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 3; j++)
      tr[i][j] = (float)(10 * i + j) + 0.25f;
  hsize_t d53[2] = {5, 3};
  put(f, "train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d53, tr, false);
  double te[7][5];
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 5; j++)
      te[i][j] = -(double)(100 * i + j) - 0.5;
  hsize_t d75[2] = {7, 5};
  put(f, "test", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 2, d75, te, true);
  int32_t nb[2][3] = {{4, 0, 2}, {1, 3, -1}};
  hsize_t d23[2] = {2, 3};
  put(f, "neighbors", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, d23, nb, false);
  uint16_t lab[5] = {9, 8, 7, 65535, 0};
  hsize_t d5[1] = {5};
  put(f, "labels", H5T_STD_U16LE, H5T_NATIVE_UINT16, 1, d5, lab, false);
  float cube[2][2][2] = {{{0}}};
  hsize_t d222[3] = {2, 2, 2};
  put(f, "cube", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 3, d222, cube, false);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, 4);
  char words[2][4] = {"abc", "def"};
  hsize_t d2[1] = {2};
  put(f, "words", st, st, 1, d2, words, false);
  H5Tclose(st);
  put_attr(f, "distance", "euclidean", false);
  put_attr(f, "type", "dense", true);
  H5Fclose(f);
  return path;
}

VF_TEST(hdf5_float_datasets) {
  const char *p = bundle();
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(hdf5_open(p, "train", &f, &err));
  if (f) {
    CHECK_EQ_INT(vec_rows(f), 5);
    CHECK_EQ_INT(vec_dim(f), 3);
    CHECK_EQ_STR(vec_format(f), "hdf5");
    float out[15];
    CHECK_OK(vec_read_rows(f, 0, 5, out, &err));
    CHECK(out[0] == 0.25f && out[14] == 42.25f);
    CHECK_OK(vec_read_rows(f, 3, 1, out, &err));
    CHECK(out[0] == 30.25f && out[2] == 32.25f);
    CHECK_STATUS(vec_read_rows(f, 4, 2, out, &err), VF_EUSAGE);
  }
  vec_close(f);
  /* chunked, compressed, big-endian float64: every row range */
  CHECK_OK(hdf5_open(p, "test", &f, &err));
  if (f) {
    CHECK_EQ_INT(vec_rows(f), 7);
    CHECK_EQ_INT(vec_dim(f), 5);
    float out[35];
    for (uint64_t a = 0; a < 7; a++)
      for (uint64_t n = 1; a + n <= 7; n++) {
        CHECK_OK(vec_read_rows(f, a, n, out, &err));
        for (uint64_t k = 0; k < n * 5; k++) {
          uint64_t i = a + k / 5, j = k % 5;
          if (out[k] != -(float)(100 * i + j) - 0.5f) {
            CHECK(out[k] == -(float)(100 * i + j) - 0.5f);
            break;
          }
        }
      }
  }
  vec_close(f);
  CHECK_OK(vec_open_path(p, NULL, &f, &err)); /* vec_open_path reads "train" */
  if (f) CHECK(strstr(vec_name(f), ":train") != NULL && vec_rows(f) == 5);
  vec_close(f);
}

VF_TEST(hdf5_integer_datasets) {
  const char *p = bundle();
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_OK(hdf5_open(p, "neighbors", &f, &err));
  if (f) {
    int64_t out[6];
    CHECK_OK(vec_read_rows_i64(f, 0, 2, out, &err));
    CHECK(out[0] == 4 && out[2] == 2 && out[3] == 1 && out[5] == -1);
  }
  vec_close(f);
  CHECK_OK(hdf5_open(p, "labels", &f, &err));
  if (f) {
    CHECK_EQ_INT(vec_dim(f), 1);
    int64_t out[5];
    CHECK_OK(vec_read_rows_i64(f, 1, 4, out, &err));
    CHECK(out[0] == 8 && out[2] == 65535 && out[3] == 0);
  }
  vec_close(f);
}

VF_TEST(hdf5_attributes) {
  const char *p = bundle();
  char *v = NULL;
  vf_error err = {0};
  CHECK_OK(hdf5_root_attr(p, "distance", &v, &err));
  CHECK_EQ_STR(v, "euclidean");
  free(v);
  CHECK_OK(hdf5_root_attr(p, "type", &v, &err));
  CHECK_EQ_STR(v, "dense");
  free(v);
  CHECK_STATUS(hdf5_root_attr(p, "point_type", &v, &err), VF_ENOTFOUND);
  CHECK(hdf5_has_dataset(p, "neighbors"));
  CHECK(!hdf5_has_dataset(p, "distances"));
}

VF_TEST(hdf5_refusals) {
  const char *p = bundle();
  vec_file *f = NULL;
  vf_error err = {0};
  CHECK_STATUS(hdf5_open(p, "base", &f, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "no dataset 'base'") && strstr(err.msg, "neighbors, test, train"));
  CHECK_STATUS(hdf5_open(p, "cube", &f, &err), VF_EUNSUPPORTED);
  CHECK_STATUS(hdf5_open(p, "words", &f, &err), VF_EUNSUPPORTED);
  char q[4096];
  snprintf(q, sizeof q, "%s/not.hdf5", vf_test_tmpdir());
  FILE *fp = fopen(q, "wb");
  if (fp) {
    fputs("\x89HDF\r\n\x1a\n but nothing else", fp);
    fclose(fp);
  }
  CHECK_STATUS(hdf5_open(q, "train", &f, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "not.hdf5") != NULL);
  fp = fopen(q, "wb");
  if (fp) {
    fputs("plain text", fp);
    fclose(fp);
  }
  CHECK_STATUS(hdf5_open(q, "train", &f, &err), VF_ECORRUPT);
  snprintf(q, sizeof q, "%s/missing.hdf5", vf_test_tmpdir());
  CHECK_STATUS(hdf5_open(q, "train", &f, &err), VF_ENOTFOUND);
  CHECK(!hdf5_has_dataset(q, "train"));
}
