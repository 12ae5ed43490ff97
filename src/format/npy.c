/*
 * NumPy .npy reader, and the row reader every raw vector format shares (include/vforge/vecfile.h).
 *
 * The .npy format (numpy/lib/format.py, NEP 1 "A Simple File Format for NumPy Arrays"):
 *   "\x93NUMPY" | major u8 | minor u8 | header_len (u16le for 1.0, u32le for 2.0 and 3.0) |
 *   header: an ASCII (3.0: UTF-8) Python dict literal
 *       {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 768), }
 *   padded with spaces and terminated by '\n' | the array data, C order unless fortran_order.
 * numpy parses the header with ast.literal_eval; we accept exactly the literal subset numpy
 * writes — single- or double-quoted strings without escapes, True/False, tuples of decimal
 * integers (an 'L' suffix as Python 2 numpy wrote it) — and each of the three keys exactly
 * once, no other key.  Anything else is VF_ECORRUPT with the header offset: a header we would
 * have to guess about is not read.  The header length is capped (1 MiB; numpy itself refuses
 * more than 10 000 bytes by default) and checked against the file before it is read.
 *
 * Why the shared row reader lives here: after its header a .npy file is the plain layout
 * every raw vector format has (rows x dim elements, row-major, to the end of the file), so
 * vec_open_raw() validates that layout against the file size once and vec_read_rows() streams
 * any row range, converting to float32 through a bounded scratch buffer (little-endian float32
 * is read straight into the caller's buffer).  The IDX reader (idx.c) reuses both.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vforge/format.h"
#include "vforge/vecfile.h"

#define NPY_MAX_HEADER ((uint32_t)1 << 20)
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

/* ------------------------------------------------------------- npy header */

typedef struct npy_parser {
  const char *name;
  const char *s, *p, *end;
  uint64_t base; /* file offset of s */
  vf_error *err;
} npy_parser;

static vf_status npy_bad(npy_parser *ps, const char *what) {
  return vf_error_set(ps->err, VF_ECORRUPT, "%s: npy header at byte %llu: %s", ps->name,
                      (unsigned long long)(ps->base + (uint64_t)(ps->p - ps->s)), what);
}

static void npy_ws(npy_parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static bool npy_eat(npy_parser *ps, char c) {
  npy_ws(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return true;
  }
  return false;
}

/* a quoted string without escapes into out (NUL-terminated) */
static vf_status npy_string(npy_parser *ps, char *out, size_t cap) {
  npy_ws(ps);
  if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
    return npy_bad(ps, "expected a quoted string");
  char q = *ps->p++;
  size_t n = 0;
  while (ps->p < ps->end && *ps->p != q) {
    unsigned char c = (unsigned char)*ps->p;
    if (c == '\\' || c < 0x20 || c >= 0x7f) return npy_bad(ps, "unexpected character in a string");
    if (n + 1 >= cap) return npy_bad(ps, "string too long");
    out[n++] = (char)c;
    ps->p++;
  }
  if (ps->p >= ps->end) return npy_bad(ps, "unterminated string");
  ps->p++;
  out[n] = 0;
  return VF_OK;
}

static bool npy_word(npy_parser *ps, const char *w) {
  npy_ws(ps);
  size_t l = strlen(w);
  if ((size_t)(ps->end - ps->p) < l || memcmp(ps->p, w, l) != 0) return false;
  /* the word must end here (no "Falsey") */
  if ((size_t)(ps->end - ps->p) > l) {
    char c = ps->p[l];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
      return false;
  }
  ps->p += l;
  return true;
}

static vf_status npy_uint(npy_parser *ps, uint64_t *out) {
  npy_ws(ps);
  const char *start = ps->p;
  uint64_t v = 0;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
    if (__builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, (uint64_t)(*ps->p - '0'), &v))
      return npy_bad(ps, "shape value out of range");
    ps->p++;
  }
  if (ps->p == start) return npy_bad(ps, "expected a non-negative integer in 'shape'");
  if (ps->p - start > 1 && *start == '0') return npy_bad(ps, "integer with a leading zero");
  if (ps->p < ps->end && *ps->p == 'L') ps->p++; /* Python 2 long */
  *out = v;
  return VF_OK;
}

/* '(' [int (',' int)* [',']] ')' — a 1-tuple needs its comma, as in Python */
static vf_status npy_shape(npy_parser *ps, vec_layout *l) {
  if (!npy_eat(ps, '(')) return npy_bad(ps, "'shape' must be a tuple");
  int n = 0;
  bool comma = false;
  if (!npy_eat(ps, ')')) {
    for (;;) {
      uint64_t v = 0;
      vf_status st = npy_uint(ps, &v);
      if (st != VF_OK) return st;
      if (n >= VEC_MAX_NDIM)
        return vf_error_set(ps->err, VF_EUNSUPPORTED, "%s: npy 'shape' has more than %d dimensions",
                            ps->name, VEC_MAX_NDIM);
      l->shape[n++] = v;
      comma = npy_eat(ps, ',');
      if (npy_eat(ps, ')')) break;
      if (!comma) return npy_bad(ps, "expected ',' or ')' in 'shape'");
    }
    if (n == 1 && !comma) return npy_bad(ps, "'shape' (N) is not a tuple; (N,) expected");
  }
  l->ndim = n;
  return VF_OK;
}

static vf_status npy_descr(npy_parser *ps, const char *d, vec_layout *l) {
  static const struct {
    const char *code;
    vec_dtype t;
  } codes[] = {{"f4", VEC_F32}, {"f2", VEC_F16}, {"f8", VEC_F64}, {"u1", VEC_U8},
               {"i1", VEC_I8},  {"i2", VEC_I16}, {"i4", VEC_I32}, {"i8", VEC_I64}};
  if (strlen(d) == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '|')) {
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
      if (strcmp(d + 1, codes[i].code) != 0) continue;
      size_t sz = vec_dtype_size(codes[i].t);
      /* numpy writes '|' for one-byte types and '<'/'>' for the others */
      if ((sz == 1) != (d[0] == '|')) break;
      l->dtype = codes[i].t;
      l->big_endian = d[0] == '>';
      return VF_OK;
    }
  }
  return vf_error_set(ps->err, VF_EUNSUPPORTED,
                      "%s: npy dtype '%s' is not supported (float32 '<f4', float16 '<f2', float64 "
                      "'<f8', uint8 '|u1', int8 '|i1', int16/32/64 '<i2' '<i4' '<i8')",
                      ps->name, d);
}

/* Parses the header dict into l (shape, dtype) and *fortran. */
static vf_status npy_parse_dict(npy_parser *ps, vec_layout *l, bool *fortran) {
  bool seen_descr = false, seen_fortran = false, seen_shape = false;
  char descr[64] = {0};
  vf_status st;
  if (!npy_eat(ps, '{')) return npy_bad(ps, "expected '{'");
  while (!npy_eat(ps, '}')) {
    char key[32];
    if ((st = npy_string(ps, key, sizeof key)) != VF_OK) return st;
    if (!npy_eat(ps, ':')) return npy_bad(ps, "expected ':' after a key");
    if (strcmp(key, "descr") == 0 && !seen_descr) {
      seen_descr = true;
      npy_ws(ps);
      if (ps->p < ps->end && *ps->p == '[')
        return vf_error_set(ps->err, VF_EUNSUPPORTED,
                            "%s: npy structured dtypes are not supported (a plain numeric "
                            "'descr' such as '<f4' is)",
                            ps->name);
      if ((st = npy_string(ps, descr, sizeof descr)) != VF_OK) return st;
    } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
      seen_fortran = true;
      if (npy_word(ps, "True"))
        *fortran = true;
      else if (npy_word(ps, "False"))
        *fortran = false;
      else
        return npy_bad(ps, "'fortran_order' must be True or False");
    } else if (strcmp(key, "shape") == 0 && !seen_shape) {
      seen_shape = true;
      if ((st = npy_shape(ps, l)) != VF_OK) return st;
    } else {
      char msg[96];
      snprintf(msg, sizeof msg, "%s key '%s'",
               (strcmp(key, "descr") == 0 || strcmp(key, "fortran_order") == 0 ||
                strcmp(key, "shape") == 0)
                   ? "repeated"
                   : "unexpected",
               key);
      return npy_bad(ps, msg);
    }
    if (npy_eat(ps, ',')) continue;
    if (npy_eat(ps, '}')) break;
    return npy_bad(ps, "expected ',' or '}'");
  }
  npy_ws(ps);
  if (ps->p != ps->end) return npy_bad(ps, "unexpected bytes after the header dict");
  if (!seen_descr || !seen_fortran || !seen_shape)
    return npy_bad(ps, !seen_descr   ? "the header lacks 'descr'"
                       : !seen_shape ? "the header lacks 'shape'"
                                     : "the header lacks 'fortran_order'");
  return npy_descr(ps, descr, l);
}

/*! npy_open() : see vecfile.h. */
vf_status npy_open(io_source *src, vec_file **out, vf_error *err) {
  *out = NULL;
  if (!src) return vf_error_set(err, VF_EUSAGE, "npy_open: NULL source");
  const char *name = src->name;
  char *hdr = NULL;
  vf_status st;
  uint8_t pre[12];
  if (src->size < 10) {
    st = vf_error_set(err, VF_ECORRUPT, "%s: not a .npy file (%llu bytes, shorter than the magic)",
                      name, (unsigned long long)src->size);
    goto fail;
  }
  if ((st = io_read_at(src, 0, pre, src->size >= 12 ? 12 : 10, err)) != VF_OK) goto fail;
  if (memcmp(pre, "\x93NUMPY", 6) != 0) {
    st = vf_error_set(err, VF_ECORRUPT, "%s: not a .npy file (the magic \\x93NUMPY is missing)",
                      name);
    goto fail;
  }
  uint8_t major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    st = vf_error_set(err, VF_EUNSUPPORTED,
                      "%s: npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)", name,
                      major, minor);
    goto fail;
  }
  uint64_t prefix = major == 1 ? 10 : 12;
  if (src->size < prefix) {
    st = vf_error_set(err, VF_ECORRUPT, "%s: npy header length truncated", name);
    goto fail;
  }
  uint32_t hlen = major == 1 ? (uint32_t)(pre[8] | (pre[9] << 8))
                             : (uint32_t)pre[8] | ((uint32_t)pre[9] << 8) |
                                   ((uint32_t)pre[10] << 16) | ((uint32_t)pre[11] << 24);
  if (hlen > src->size - prefix) {
    st = vf_error_set(err, VF_ECORRUPT,
                      "%s: npy header length %u runs past the end of the file (%llu bytes)", name,
                      hlen, (unsigned long long)src->size);
    goto fail;
  }
  if (hlen > NPY_MAX_HEADER) {
    st = vf_error_set(err, VF_EUNSUPPORTED, "%s: npy header of %u bytes exceeds the %u-byte limit",
                      name, hlen, NPY_MAX_HEADER);
    goto fail;
  }
  if (!(hdr = vf_malloc((size_t)hlen + 1))) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
    goto fail;
  }
  if ((st = io_read_at(src, prefix, hdr, hlen, err)) != VF_OK) goto fail;
  hdr[hlen] = 0;
  npy_parser ps = {name, hdr, hdr, hdr + hlen, prefix, err};
  vec_layout l;
  memset(&l, 0, sizeof l);
  bool fortran = false;
  if ((st = npy_parse_dict(&ps, &l, &fortran)) != VF_OK) goto fail;
  if (l.ndim < 1 || l.ndim > 2) {
    st = vf_error_set(err, VF_EUNSUPPORTED,
                      "%s: npy arrays of %d dimensions are not supported ((N, D) vectors or (N,) "
                      "ids/labels are)",
                      name, l.ndim);
    goto fail;
  }
  /* Fortran order only changes the layout of a 2-D array with both sides > 1 */
  if (fortran && l.ndim == 2 && l.shape[0] > 1 && l.shape[1] > 1) {
    st = vf_error_set(err, VF_EUNSUPPORTED,
                      "%s: npy array is in Fortran (column-major) order; save it C-ordered "
                      "(numpy.ascontiguousarray)",
                      name);
    goto fail;
  }
  l.data_offset = prefix + hlen;
  free(hdr);
  return vec_open_raw(src, &l, "npy", out, err);
fail:
  free(hdr);
  io_close(src);
  return st;
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
