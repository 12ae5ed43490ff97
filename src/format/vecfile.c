/*
 * vecfile.c — the row reader every raw vector format shares (include/vforge/vecfile.h), and
 * vec_open_path(), which picks the format of a vector file.
 *
 * Why one shared row reader: after its header a .npy file is the plain layout
 * every raw vector format has (rows x dim elements, row-major, to the end of the file), so
 * vec_open_raw() validates that layout against the file size once and vec_read_rows() streams
 * any row range, converting to float32 through a bounded scratch buffer (little-endian float32
 * is read straight into the caller's buffer).  The IDX reader (idx.c) reuses both.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vforge/format.h"
#include "vforge/vecfile.h"

#define VEC_SCRATCH_BYTES ((size_t)4 << 20) /* conversion chunk */
#define VEC_DIRECT_CHUNK ((size_t)64 << 20) /* largest single read into the caller's buffer */

struct vec_file {
  io_source *src;
  vec_layout layout;
  const char *format;
  uint64_t rows, dim;
  size_t item;
  uint8_t *scratch;
};

/* ------------------------------------------------------------------ dtypes */

/*! vec_dtype_size() : see vecfile.h. */
size_t vec_dtype_size(vec_dtype t) {
  switch (t) {
  case VEC_F32: return 4;
  case VEC_F16: return 2;
  case VEC_F64: return 8;
  case VEC_U8: return 1;
  case VEC_I8: return 1;
  case VEC_I16: return 2;
  case VEC_I32: return 4;
  case VEC_I64: return 8;
  }
  return 0;
}

/*! vec_dtype_name() : see vecfile.h. */
const char *vec_dtype_name(vec_dtype t) {
  switch (t) {
  case VEC_F32: return "float32";
  case VEC_F16: return "float16";
  case VEC_F64: return "float64";
  case VEC_U8: return "uint8";
  case VEC_I8: return "int8";
  case VEC_I16: return "int16";
  case VEC_I32: return "int32";
  case VEC_I64: return "int64";
  }
  return "?";
}

/*! vec_dtype_is_int() : see vecfile.h. */
bool vec_dtype_is_int(vec_dtype t) {
  return t == VEC_U8 || t == VEC_I8 || t == VEC_I16 || t == VEC_I32 || t == VEC_I64;
}

/* "(10, 784)" for messages */
static void shape_text(const vec_layout *l, char *out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < l->ndim && used < cap; i++) {
    int w =
        snprintf(out + used, cap - used, "%s%llu", i ? ", " : "(", (unsigned long long)l->shape[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (used < cap) snprintf(out + used, cap - used, "%s)", l->ndim == 1 ? "," : "");
}

/* ------------------------------------------------------------- raw layout */

/*! vec_open_raw() : see vecfile.h. */
vf_status vec_open_raw(io_source *src, const vec_layout *layout, const char *format, vec_file **out,
                       vf_error *err) {
  *out = NULL;
  if (!src) return vf_error_set(err, VF_EUSAGE, "vec_open_raw: NULL source");
  const char *name = src->name;
  vf_status st = VF_OK;
  vec_file *f = NULL;
  size_t item = vec_dtype_size(layout->dtype);
  if (item == 0 || layout->ndim < 1 || layout->ndim > VEC_MAX_NDIM) {
    st = vf_error_set(err, VF_EUSAGE, "%s: invalid vector layout (dtype %d, %d dimensions)", name,
                      (int)layout->dtype, layout->ndim);
    goto out;
  }
  char shape[256];
  shape_text(layout, shape, sizeof shape);
  /* dim = product of shape[1..], need = rows * dim * item, all overflow-checked */
  uint64_t dim = 1, need = 0;
  bool overflow = false;
  for (int i = 1; i < layout->ndim; i++)
    if (__builtin_mul_overflow(dim, layout->shape[i], &dim)) overflow = true;
  if (!overflow && layout->ndim >= 2 && dim == 0) {
    st = vf_error_set(err, VF_EUNSUPPORTED, "%s: %s shape %s has zero-length vectors", name, format,
                      shape);
    goto out;
  }
  if (overflow || __builtin_mul_overflow(layout->shape[0], dim, &need) ||
      __builtin_mul_overflow(need, (uint64_t)item, &need)) {
    st = vf_error_set(
        err, VF_ECORRUPT, "%s: %s shape %s of %s is larger than any file (the file has %llu bytes)",
        name, format, shape, vec_dtype_name(layout->dtype), (unsigned long long)src->size);
    goto out;
  }
  uint64_t have = src->size > layout->data_offset ? src->size - layout->data_offset : 0;
  if (src->size < layout->data_offset || have != need) {
    st = vf_error_set(err, VF_ECORRUPT,
                      "%s: %s data is %llu bytes after the %llu-byte header, but shape %s of %s "
                      "needs exactly %llu bytes%s",
                      name, format, (unsigned long long)have,
                      (unsigned long long)layout->data_offset, shape, vec_dtype_name(layout->dtype),
                      (unsigned long long)need,
                      have < need ? " (truncated file?)" : " (trailing bytes)");
    goto out;
  }
  f = vf_calloc(1, sizeof *f);
  if (!f) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
    goto out;
  }
  f->src = src;
  f->layout = *layout;
  f->format = format;
  f->rows = layout->shape[0];
  f->dim = dim;
  f->item = item;
  *out = f;
  return VF_OK;
out:
  io_close(src);
  return st;
}

/*! vec_close() : see vecfile.h. */
void vec_close(vec_file *f) {
  if (!f) return;
  io_close(f->src);
  free(f->scratch);
  free(f);
}

const char *vec_name(const vec_file *f) {
  return f->src->name;
}
const char *vec_format(const vec_file *f) {
  return f->format;
}
uint64_t vec_rows(const vec_file *f) {
  return f->rows;
}
uint64_t vec_dim(const vec_file *f) {
  return f->dim;
}
const vec_layout *vec_layout_of(const vec_file *f) {
  return &f->layout;
}

/* ------------------------------------------------------------ row reader */

static inline uint16_t ld16(const uint8_t *p, bool be) {
  uint32_t v = be ? ((uint32_t)p[0] << 8) | p[1] : (uint32_t)p[0] | ((uint32_t)p[1] << 8);
  return (uint16_t)v;
}
static inline uint32_t ld32(const uint8_t *p, bool be) {
  return be ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]
            : (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                  ((uint32_t)p[3] << 24);
}
static inline uint64_t ld64(const uint8_t *p, bool be) {
  uint64_t a = ld32(p, be), b = ld32(p + 4, be);
  return be ? (a << 32) | b : (b << 32) | a;
}

/* Converts `n` elements at `p` into float32 or int64 (exactly one of fo / io set). */
static void convert_elems(const vec_file *f, const uint8_t *p, size_t n, float *fo, int64_t *io) {
  bool be = f->layout.big_endian;
  for (size_t i = 0; i < n; i++) {
    double d = 0;
    int64_t v = 0;
    bool is_int = true;
    switch (f->layout.dtype) {
    case VEC_U8: v = p[i]; break;
    case VEC_I8: v = (int8_t)p[i]; break;
    case VEC_I16: v = (int16_t)ld16(p + 2 * i, be); break;
    case VEC_I32: v = (int32_t)ld32(p + 4 * i, be); break;
    case VEC_I64: v = (int64_t)ld64(p + 8 * i, be); break;
    case VEC_F16:
      is_int = false;
      d = pqt_half_to_float(ld16(p + 2 * i, be));
      break;
    case VEC_F32: {
      uint32_t u = ld32(p + 4 * i, be);
      float x;
      memcpy(&x, &u, 4);
      is_int = false;
      d = x;
      break;
    }
    case VEC_F64: {
      uint64_t u = ld64(p + 8 * i, be);
      memcpy(&d, &u, 8);
      is_int = false;
      break;
    }
    }
    if (fo)
      fo[i] = is_int ? (float)v : (float)d;
    else
      io[i] = v;
  }
}

static vf_status read_range(vec_file *f, uint64_t first, uint64_t n, float *fo, int64_t *io,
                            vf_error *err) {
  if (first > f->rows || n > f->rows - first)
    return vf_error_set(err, VF_EUSAGE, "%s: rows %llu..%llu requested, the file has %llu rows",
                        f->src->name, (unsigned long long)first, (unsigned long long)(first + n),
                        (unsigned long long)f->rows);
  /* bounded by the file size, checked in vec_open_raw: no overflow below */
  uint64_t nelem = n * f->dim;
  uint64_t off = f->layout.data_offset + first * f->dim * f->item;
  if (fo && f->layout.dtype == VEC_F32 && !f->layout.big_endian) {
    uint8_t *dst = (uint8_t *)fo;
    uint64_t left = nelem * 4;
    while (left) {
      size_t take = left < VEC_DIRECT_CHUNK ? (size_t)left : VEC_DIRECT_CHUNK;
      vf_status st = io_read_at(f->src, off, dst, take, err);
      if (st != VF_OK) return st;
      dst += take;
      off += take;
      left -= take;
    }
    return VF_OK;
  }
  if (!f->scratch && !(f->scratch = vf_malloc(VEC_SCRATCH_BYTES)))
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", f->src->name);
  size_t per = VEC_SCRATCH_BYTES / f->item;
  uint64_t done = 0;
  while (done < nelem) {
    size_t take = nelem - done < per ? (size_t)(nelem - done) : per;
    vf_status st = io_read_at(f->src, off, f->scratch, take * f->item, err);
    if (st != VF_OK) return st;
    convert_elems(f, f->scratch, take, fo ? fo + done : NULL, io ? io + done : NULL);
    off += take * f->item;
    done += take;
  }
  return VF_OK;
}

/*! vec_read_rows() : see vecfile.h. */
vf_status vec_read_rows(vec_file *f, uint64_t first, uint64_t n, float *out, vf_error *err) {
  return read_range(f, first, n, out, NULL, err);
}

/*! vec_read_rows_i64() : see vecfile.h. */
vf_status vec_read_rows_i64(vec_file *f, uint64_t first, uint64_t n, int64_t *out, vf_error *err) {
  if (!vec_dtype_is_int(f->layout.dtype))
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: %s values are %s, integers were expected",
                        f->src->name, f->format, vec_dtype_name(f->layout.dtype));
  return read_range(f, first, n, NULL, out, err);
}

/* ------------------------------------------------------------- dispatch */

/*! vec_open_path() : see vecfile.h. */
vf_status vec_open_path(const char *path, const vec_open_opts *opts, vec_file **out,
                        vf_error *err) {
  *out = NULL;
  io_source *src = NULL;
  vec_dtype bt;
  bool is_bin = fbin_dtype_of_path(path, &bt);
  vf_status st = io_open_local(path, &src, err);
  if (st != VF_OK) return st;
  if (is_bin) return fbin_open(src, bt, out, err);
  uint8_t m[8] = {0};
  size_t n = src->size < sizeof m ? (size_t)src->size : sizeof m;
  if ((st = io_read_at(src, 0, m, n, err)) != VF_OK) {
    io_close(src);
    return st;
  }
  if (n >= 6 && memcmp(m, "\x93NUMPY", 6) == 0) return npy_open(src, out, err);
  if (vec_is_hdf5(m, n)) {
    io_close(src);
    return hdf5_open(path, "train", out, err);
  }
  if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b) return idx_open(src, opts, out, err);
  if (n >= 4 && m[0] == 0 && m[1] == 0 &&
      (m[2] == 0x08 || m[2] == 0x09 || m[2] == 0x0B || m[2] == 0x0C || m[2] == 0x0D ||
       m[2] == 0x0E))
    return idx_open(src, opts, out, err);
  st = vf_error_set(err, VF_EUNSUPPORTED,
                    "%s: not a vector file vforge reads (.npy, IDX, gzipped IDX, HDF5, or .fbin/.u8bin/"
                    ".i8bin/.ibin by name; first bytes "
                    "%02x %02x %02x %02x)",
                    src->name, m[0], m[1], m[2], m[3]);
  io_close(src);
  return st;
}
