/*
 * NumPy .npy reader (include/vforge/vecfile.h).
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
 * The rows after the header are read by the shared row reader (vecfile.c, vec_open_raw).
 */
#include <stdio.h>
#include <stdlib.h>

#include "vforge/format.h"
#include "vforge/vecfile.h"

#define NPY_MAX_HEADER ((uint32_t)1 << 20)

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
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: not a .npy file (%llu bytes, shorter than the magic)",
                         name, (unsigned long long)src->size));
  }
  VF_TRY(io_read_at(src, 0, pre, src->size >= 12 ? 12 : 10, err));
  if (memcmp(pre, "\x93NUMPY", 6) != 0) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: not a .npy file (the magic \\x93NUMPY is missing)",
                         name));
  }
  uint8_t major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)",
                         name, major, minor));
  }
  uint64_t prefix = major == 1 ? 10 : 12;
  if (src->size < prefix) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: npy header length truncated", name));
  }
  uint32_t hlen = major == 1 ? (uint32_t)(pre[8] | (pre[9] << 8))
                             : (uint32_t)pre[8] | ((uint32_t)pre[9] << 8) |
                                   ((uint32_t)pre[10] << 16) | ((uint32_t)pre[11] << 24);
  if (hlen > src->size - prefix) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: npy header length %u runs past the end of the file (%llu bytes)",
                         name, hlen, (unsigned long long)src->size));
  }
  if (hlen > NPY_MAX_HEADER) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: npy header of %u bytes exceeds the %u-byte limit",
                         name, hlen, NPY_MAX_HEADER));
  }
  if (!(hdr = vf_malloc((size_t)hlen + 1))) {
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", name));
  }
  VF_TRY(io_read_at(src, prefix, hdr, hlen, err));
  hdr[hlen] = 0;
  npy_parser ps = {name, hdr, hdr, hdr + hlen, prefix, err};
  vec_layout l;
  memset(&l, 0, sizeof l);
  bool fortran = false;
  VF_TRY(npy_parse_dict(&ps, &l, &fortran));
  if (l.ndim < 1 || l.ndim > 2) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: npy arrays of %d dimensions are not supported ((N, D) vectors or "
                         "(N,) "
                         "ids/labels are)",
                         name, l.ndim));
  }
  /* Fortran order only changes the layout of a 2-D array with both sides > 1 */
  if (fortran && l.ndim == 2 && l.shape[0] > 1 && l.shape[1] > 1) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: npy array is in Fortran (column-major) order; save it C-ordered "
                         "(numpy.ascontiguousarray)",
                         name));
  }
  l.data_offset = prefix + hlen;
  free(hdr);
  return vec_open_raw(src, &l, "npy", out, err);
out:
  free(hdr);
  io_close(src);
  return st;
}
