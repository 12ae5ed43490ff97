/*
 * HDF5 datasets as vector files (libhdf5; include/vforge/vecfile.h), for ann-benchmarks bundles:
 * datasets `train` (N x d), `test` (Q x d), `neighbors` (Q x k int), `distances` (Q x k) and the
 * root attribute `distance` ("angular", "euclidean", ...).
 *
 * Why an io_source view: the shared row reader (vecfile.c) streams element ranges of a row-major
 * layout through io_read_at.  This file exposes a dataset's elements, already converted by
 * HDF5 to native float32 (float datasets) or int64 (integer datasets), as the bytes of a virtual
 * source (offset 0 = element 0), so vec_open_raw() and vec_read_rows() work unchanged whatever
 * the dataset's storage (contiguous, chunked, compressed).  A read maps to at most three
 * hyperslab reads: the tail of a partial first row, whole rows straight into the caller's
 * buffer, and the head of a partial last row.
 *
 * libhdf5 as packaged by Debian (serial) is not thread-safe: every call into it holds one
 * process-wide mutex.  Its automatic error printing is switched off (the library never prints);
 * failures are reported through vf_error naming the file and the dataset.
 */
#include <hdf5.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/vecfile.h"

static pthread_mutex_t h5_mu = PTHREAD_MUTEX_INITIALIZER;
static bool h5_quiet;

static void h5_lock(void) {
  pthread_mutex_lock(&h5_mu);
  if (!h5_quiet) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    h5_quiet = true;
  }
}
static void h5_unlock(void) {
  pthread_mutex_unlock(&h5_mu);
}

typedef struct h5_src {
  io_source base;
  hid_t file, dset, space;
  hid_t memtype;
  uint64_t rows, dim;
  size_t item;
  uint8_t *rowbuf; /* one row, for partial rows */
} h5_src;

/* Read rows [r0, r0+n) of the dataset into dst (native memtype).  Caller holds h5_mu. */
static vf_status h5_read_rows(h5_src *s, uint64_t r0, uint64_t n, void *dst, vf_error *err) {
  if (n == 0) return VF_OK;
  hsize_t start[2] = {r0, 0}, count[2] = {n, s->dim}; /* a 1-D space uses the first entries */
  hsize_t mcount[1] = {n * s->dim};
  hid_t fs = H5Scopy(s->space);
  hid_t ms = H5Screate_simple(1, mcount, NULL);
  herr_t rc = -1;
  if (fs >= 0 && ms >= 0 &&
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
    rc = H5Dread(s->dset, s->memtype, ms, fs, H5P_DEFAULT, dst);
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (rc < 0)
    return vf_error_set(err, VF_EIO, "%s: HDF5 read of rows %llu..%llu failed", s->base.name,
                        (unsigned long long)r0, (unsigned long long)(r0 + n));
  return VF_OK;
}

static vf_status h5_read_at(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err) {
  h5_src *s = (h5_src *)src;
  if (offset % s->item || n % s->item)
    return vf_error_set(err, VF_EINTERNAL, "%s: unaligned HDF5 element read", src->name);
  uint64_t e = offset / s->item, left = n / s->item;
  uint8_t *out = dst;
  vf_status st = VF_OK;
  h5_lock();
  while (left) {
    uint64_t row = e / s->dim, col = e % s->dim;
    if (col != 0 || left < s->dim) {
      /* a partial row through the row buffer */
      uint64_t take = s->dim - col < left ? s->dim - col : left;
      VF_TRY(h5_read_rows(s, row, 1, s->rowbuf, err));
      memcpy(out, s->rowbuf + col * s->item, take * s->item);
      out += take * s->item;
      e += take;
      left -= take;
    } else {
      uint64_t rows = left / s->dim;
      VF_TRY(h5_read_rows(s, row, rows, out, err));
      out += rows * s->dim * s->item;
      e += rows * s->dim;
      left -= rows * s->dim;
    }
  }
out:
  h5_unlock();
  return st;
}

static void h5_close_src(io_source *src) {
  h5_src *s = (h5_src *)src;
  h5_lock();
  if (s->space >= 0) H5Sclose(s->space);
  if (s->dset >= 0) H5Dclose(s->dset);
  if (s->file >= 0) H5Fclose(s->file);
  h5_unlock();
  free(s->rowbuf);
  free(s->base.name);
  free(s);
}

static const io_source_vtable H5_VT = {h5_read_at, h5_close_src};

/* Names of the root group's datasets, ", "-separated, for "not found" messages (holds h5_mu). */
static herr_t list_cb(hid_t g, const char *name, const H5L_info_t *info, void *op) {
  (void)g;
  (void)info;
  vf_buf *b = op;
  if (b->len) vf_buf_append(b, ", ", 2, NULL);
  vf_buf_append(b, name, strlen(name), NULL);
  return 0;
}

static hid_t open_file(const char *path, vf_error *err, vf_status *st) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    *st = vf_error_set(err, VF_ENOTFOUND, "%s: no such HDF5 file", path);
    return -1;
  }
  uint8_t m[8] = {0};
  size_t got = fread(m, 1, 8, fp);
  fclose(fp);
  if (!vec_is_hdf5(m, got)) {
    *st = vf_error_set(err, VF_ECORRUPT, "%s: not an HDF5 file (the signature is missing)", path);
    return -1;
  }
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) *st = vf_error_set(err, VF_ECORRUPT, "%s: libhdf5 cannot open this file", path);
  return f;
}

/*! vec_is_hdf5() : see vecfile.h. */
bool vec_is_hdf5(const uint8_t *head, size_t n) {
  return n >= 8 && memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0;
}

/*! hdf5_open() : see vecfile.h. */
vf_status hdf5_open(const char *path, const char *dataset, vec_file **out, vf_error *err) {
  *out = NULL;
  vf_status st = VF_OK;
  size_t nl = strlen(path) + strlen(dataset) + 2;
  h5_src *s = vf_calloc(1, sizeof *s);
  char *name = vf_malloc(nl);
  if (!s || !name) {
    free(s);
    free(name);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  snprintf(name, nl, "%s:%s", path, dataset);
  s->base.vt = &H5_VT;
  s->base.name = name;
  s->file = s->dset = s->space = -1;
  vec_layout l;
  memset(&l, 0, sizeof l);
  h5_lock();
  s->file = open_file(path, err, &st);
  if (s->file < 0) goto out;
  if (H5Lexists(s->file, dataset, H5P_DEFAULT) <= 0 ||
      (s->dset = H5Dopen2(s->file, dataset, H5P_DEFAULT)) < 0) {
    vf_buf names;
    vf_buf_init(&names, 4096);
    H5Literate(s->file, H5_INDEX_NAME, H5_ITER_INC, NULL, list_cb, &names);
    st = vf_error_set(err, VF_ENOTFOUND, "%s: no dataset '%s' (the file has: %.*s)", path,
                      dataset, (int)names.len, names.len ? (const char *)names.data : "nothing");
    vf_buf_free(&names);
    goto out;
  }
  s->space = H5Dget_space(s->dset);
  int nd = s->space >= 0 ? H5Sget_simple_extent_ndims(s->space) : -1;
  if (nd < 1 || nd > 2) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: dataset '%s' has %d dimensions (1-D or 2-D datasets are read)", path,
                         dataset, nd));
  }
  hsize_t dims[2] = {0, 1};
  H5Sget_simple_extent_dims(s->space, dims, NULL);
  hid_t t = H5Dget_type(s->dset);
  H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  if (t >= 0) H5Tclose(t);
  if (cls == H5T_FLOAT) {
    s->memtype = H5T_NATIVE_FLOAT;
    l.dtype = VEC_F32;
  } else if (cls == H5T_INTEGER) {
    s->memtype = H5T_NATIVE_INT64;
    l.dtype = VEC_I64;
  } else {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: dataset '%s' holds neither floats nor integers (HDF5 class %d)", path,
                         dataset, (int)cls));
  }
  h5_unlock();
  s->item = vec_dtype_size(l.dtype);
  s->rows = dims[0];
  s->dim = nd == 2 ? dims[1] : 1;
  l.ndim = nd;
  l.shape[0] = dims[0];
  l.shape[1] = dims[1];
  l.data_offset = 0;
  if (s->dim == 0 || s->dim > (1u << 24)) {
    st = vf_error_set(err, VF_EUNSUPPORTED, "%s: dataset '%s' has rows of %llu values", path,
                      dataset, (unsigned long long)s->dim);
    h5_close_src(&s->base);
    return st;
  }
  uint64_t total;
  if (__builtin_mul_overflow(s->rows, s->dim, &total) ||
      __builtin_mul_overflow(total, (uint64_t)s->item, &total)) {
    st = vf_error_set(err, VF_ECORRUPT, "%s: dataset '%s' is too large", path, dataset);
    h5_close_src(&s->base);
    return st;
  }
  s->base.size = total;
  if (!(s->rowbuf = vf_malloc((size_t)(s->dim * s->item)))) {
    h5_close_src(&s->base);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  return vec_open_raw(&s->base, &l, "hdf5", out, err);
out:
  h5_unlock();
  h5_close_src(&s->base);
  return st;
}

/*! hdf5_root_attr() : see vecfile.h. */
vf_status hdf5_root_attr(const char *path, const char *name, char **out, vf_error *err) {
  *out = NULL;
  vf_status st = VF_OK;
  h5_lock();
  hid_t f = open_file(path, err, &st), a = -1, t = -1, mt = -1, sp = -1;
  if (f < 0) goto out;
  if (H5Aexists(f, name) <= 0 || (a = H5Aopen(f, name, H5P_DEFAULT)) < 0) {
    VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: no root attribute '%s'", path, name));
  }
  t = H5Aget_type(a);
  if (t < 0 || H5Tget_class(t) != H5T_STRING) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: root attribute '%s' is not a string", path, name));
  }
  sp = H5Aget_space(a);
  if (sp < 0 || H5Sget_simple_extent_npoints(sp) != 1) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED, "%s: root attribute '%s' is not one string", path,
                         name));
  }
  if (H5Tis_variable_str(t) > 0) {
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5Tget_cset(t)); /* h5py writes Python str attributes as UTF-8 */
    char *v = NULL;
    if (H5Aread(a, mt, &v) < 0 || !v) {
      VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot read root attribute '%s'", path, name));
    }
    *out = vf_strdup(v);
    H5free_memory(v);
  } else {
    size_t n = H5Tget_size(t);
    if (n == 0 || n > (1u << 20)) {
      VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                           "%s: root attribute '%s' has %zu bytes", path, name,
                           n));
    }
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, n + 1);
    H5Tset_cset(mt, H5Tget_cset(t));
    char *v = vf_calloc(n + 2, 1);
    if (v && H5Aread(a, mt, v) < 0) {
      free(v);
      VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot read root attribute '%s'", path, name));
    }
    *out = v;
  }
  if (!*out) st = vf_error_set(err, VF_ENOMEM, "out of memory");
out:
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  if (f >= 0) H5Fclose(f);
  h5_unlock();
  return st;
}

/*! hdf5_has_dataset() : see vecfile.h. */
bool hdf5_has_dataset(const char *path, const char *name) {
  vf_status st;
  vf_error e;
  h5_lock();
  hid_t f = open_file(path, &e, &st);
  bool yes = f >= 0 && H5Lexists(f, name, H5P_DEFAULT) > 0;
  if (f >= 0) H5Fclose(f);
  h5_unlock();
  return yes;
}
