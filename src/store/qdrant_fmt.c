/*
 * qdrant_fmt.c — the upsert body: PointStruct objects (openapi.json `PointsList`,
 * `PointStruct`, `VectorStruct`, `ExtendedPointId`) written straight into a buffer, with a float
 * formatter that does not call printf (issue 4: "vectors printed fast; float32 round-trips").
 *
 * Float32 text: 9 significant digits always identify a float32 (IEEE 754-2008 §5.12.2: a
 * binary32 needs at most 9 decimal digits), so the value is scaled to a 9-digit integer in
 * double precision (the scaling error, ~2^-52 relative, is far below the 2^-25 half-ulp of
 * float32, so the nearest 9-digit decimal still reads back as the same float), trailing zeros
 * are dropped and the digits are laid out in plain or exponent form.  It is not the *shortest*
 * round-tripping text, but it is %.9g-equivalent and round-trips exactly.
 */
#include <math.h>

#include "store/qdrant_internal.h"

static const double QD_P10[] = {
    1e-30, 1e-29, 1e-28, 1e-27, 1e-26, 1e-25, 1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18,
    1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9,  1e-8,  1e-7,  1e-6,  1e-5,
    1e-4,  1e-3,  1e-2,  1e-1,  1e0,   1e1,   1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,
    1e9,   1e10,  1e11,  1e12,  1e13,  1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,
    1e22,  1e23,  1e24,  1e25,  1e26,  1e27,  1e28,  1e29,  1e30,  1e31,  1e32,  1e33,  1e34,
    1e35,  1e36,  1e37,  1e38,  1e39,  1e40,  1e41,  1e42,  1e43,  1e44,  1e45,  1e46,  1e47,
    1e48,  1e49,  1e50,  1e51,  1e52,  1e53,  1e54,  1e55,  1e56};
#define QD_P10_MIN (-30)
#define QD_P10_N ((int)(sizeof QD_P10 / sizeof QD_P10[0]))

static const char QD_DIGITS2[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                    "31323334353637383940414243444546474849505152535455565758596061"
                                    "62636465666768697071727374757677787980818283848586878889909192"
                                    "93949596979899";

static inline double qd_pow10(int k) {
  int i = k - QD_P10_MIN;
  if (i < 0) i = 0;
  if (i >= QD_P10_N) i = QD_P10_N - 1;
  return QD_P10[i];
}

static inline __attribute__((always_inline)) size_t qd_fmt_impl(char *out, float v) {
  char *p = out;
  uint32_t bits;
  memcpy(&bits, &v, 4);
  if (bits >> 31) *p++ = '-';
  if ((bits & 0x7fffffffu) == 0) {
    if (p != out) {
      memcpy(p, "0.0", 3);
      return 4;
    }
    *p = '0';
    return 1;
  }
  double x = fabs((double)v);
  uint64_t db;
  memcpy(&db, &x, 8);
  int e2 = (int)((db >> 52) & 0x7ff) - 1023;
  int e10 = (e2 * 78913) >> 18; /* floor(e2 * log10(2)), may be one too small */
  double m = x * qd_pow10(8 - e10);
  if (m >= 1e9) {
    e10++;
    m = x * qd_pow10(8 - e10);
  } else if (m < 1e8) {
    e10--;
    m = x * qd_pow10(8 - e10);
  }
  uint32_t r = (uint32_t)(m + 0.5);
  if (r >= 1000000000u) {
    r = 100000000u;
    e10++;
  }
  int nd = 9;
  while (r % 10 == 0) {
    r /= 10;
    nd--;
  }
  char dg[10] = {0};
  int i = nd;
  while (i >= 2) {
    uint32_t q = r % 100;
    r /= 100;
    dg[i - 2] = QD_DIGITS2[2 * q];
    dg[i - 1] = QD_DIGITS2[2 * q + 1];
    i -= 2;
  }
  if (i == 1) dg[0] = (char)('0' + r);
  if (e10 >= 0 && e10 <= 8) {
    int ip = e10 + 1; /* digits before the point */
    if (nd <= ip) {
      memcpy(p, dg, (size_t)nd);
      p += nd;
      for (int z = nd; z < ip; z++)
        *p++ = '0';
    } else {
      memcpy(p, dg, (size_t)ip);
      p += ip;
      *p++ = '.';
      memcpy(p, dg + ip, (size_t)(nd - ip));
      p += nd - ip;
    }
  } else if (e10 < 0 && e10 >= -5) {
    *p++ = '0';
    *p++ = '.';
    for (int z = 0; z < -e10 - 1; z++)
      *p++ = '0';
    memcpy(p, dg, (size_t)nd);
    p += nd;
  } else {
    *p++ = dg[0];
    if (nd > 1) {
      *p++ = '.';
      memcpy(p, dg + 1, (size_t)(nd - 1));
      p += nd - 1;
    }
    *p++ = 'e';
    int ex = e10;
    if (ex < 0) {
      *p++ = '-';
      ex = -ex;
    }
    if (ex >= 10) {
      *p++ = QD_DIGITS2[2 * ex];
      *p++ = QD_DIGITS2[2 * ex + 1];
    } else {
      *p++ = (char)('0' + ex);
    }
  }
  return (size_t)(p - out);
}

/* qd_fmt_f32(): see qdrant_internal.h. */
size_t qd_fmt_f32(char *out, float v) { return qd_fmt_impl(out, v); }

/* Append a float array as a JSON array; false on a non-finite value (index in *bad). */
static bool qd_floats(vf_buf *out, const float *f, size_t n, size_t *bad) {
  char *p = (char *)out->data + out->len;
  *p++ = '[';
  for (size_t i = 0; i < n; i++) {
    if (VF_UNLIKELY(!isfinite(f[i]))) {
      *bad = i;
      return false;
    }
    if (i) *p++ = ',';
    p += qd_fmt_impl(p, f[i]);
  }
  *p++ = ']';
  out->len = (size_t)(p - (char *)out->data);
  return true;
}

static void qd_u64(vf_buf *out, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  char *p = (char *)out->data + out->len;
  for (int i = 0; i < n; i++)
    p[i] = tmp[n - 1 - i];
  out->len += (size_t)n;
}

/* Upper bound of the bytes one point takes, so the row is written with unchecked puts. */
static size_t qd_point_bound(const store *s, const corpus_batch *b, const int *map, size_t r) {
  size_t need = 96; /* {"id":"<36>","vector":{},"payload":} and commas */
  for (int j = 0; j < s->nvectors; j++) {
    if (map[j] < 0) continue;
    const corpus_vec_batch *v = &b->vectors[map[j]];
    need += strlen(s->vectors[j].name) * 6 + 16; /* escaped name */
    size_t nf = 0;
    switch (v->kind) {
    case CORPUS_VEC_DENSE: nf = (size_t)v->dim; break;
    case CORPUS_VEC_SPARSE:
      nf = (size_t)(v->offsets[r + 1] - v->offsets[r]);
      need += nf * 12 + 32;
      break;
    case CORPUS_VEC_MULTI:
      nf = (size_t)(v->offsets[r + 1] - v->offsets[r]) * (size_t)v->dim;
      need += (size_t)(v->offsets[r + 1] - v->offsets[r]) * 3;
      break;
    }
    need += nf * (QD_F32_MAX_CHARS + 1) + 4;
  }
  if (b->payload_offsets) need += (size_t)(b->payload_offsets[r + 1] - b->payload_offsets[r]);
  return need;
}

/* qd_points_json(): see qdrant_internal.h. */
vf_status qd_points_json(const store *s, const corpus_batch *b, const int *map, size_t from,
                         size_t to, bool *first, vf_buf *out, vf_error *err) {
  const char *where = b->file_key ? b->file_key : "batch";
  for (size_t r = from; r < to; r++) {
    vf_status st = vf_buf_reserve(out, qd_point_bound(s, b, map, r), err);
    if (st != VF_OK) return st;
    if (!*first) vf_buf_putc(out, ',');
    *first = false;
    const corpus_id *id = &b->ids[r];
    if (id->is_uuid) {
      vf_buf_put(out, "{\"id\":\"", 7);
      vf_buf_put(out, id->uuid, 36);
      vf_buf_put(out, "\",\"vector\":{", 12);
    } else {
      vf_buf_put(out, "{\"id\":", 6);
      qd_u64(out, id->num);
      vf_buf_put(out, ",\"vector\":{", 11);
    }
    bool vfirst = true;
    for (int j = 0; j < s->nvectors; j++) {
      if (map[j] < 0) continue;
      const corpus_vec_batch *v = &b->vectors[map[j]];
      if (v->null_rows && v->null_rows[r]) continue;
      if (v->kind != CORPUS_VEC_DENSE && v->offsets[r + 1] == v->offsets[r] &&
          v->kind == CORPUS_VEC_MULTI)
        continue; /* a multivector needs at least one vector: none = absent */
      if (!vfirst) vf_buf_putc(out, ',');
      vfirst = false;
      /* the name, JSON-escaped (vector names come from the config; reserve covered 6x) */
      vf_buf_putc(out, '"');
      for (const unsigned char *c = (const unsigned char *)s->vectors[j].name; *c; c++) {
        if (*c == '"' || *c == '\\') {
          vf_buf_putc(out, '\\');
          vf_buf_putc(out, (char)*c);
        } else if (*c < 0x20) {
          static const char hx[] = "0123456789abcdef";
          char e[6] = {'\\', 'u', '0', '0', hx[*c >> 4], hx[*c & 15]};
          vf_buf_put(out, e, 6);
        } else {
          vf_buf_putc(out, (char)*c);
        }
      }
      vf_buf_put(out, "\":", 2);
      size_t bad = 0;
      bool ok = true;
      switch (v->kind) {
      case CORPUS_VEC_DENSE:
        ok = qd_floats(out, v->dense + r * (size_t)v->dim, (size_t)v->dim, &bad);
        break;
      case CORPUS_VEC_SPARSE: {
        size_t o0 = (size_t)v->offsets[r], n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
        vf_buf_put(out, "{\"indices\":[", 12);
        for (size_t i = 0; i < n; i++) {
          if (i) vf_buf_putc(out, ',');
          qd_u64(out, v->indices[o0 + i]);
        }
        vf_buf_put(out, "],\"values\":", 11);
        ok = qd_floats(out, v->values + o0, n, &bad);
        vf_buf_putc(out, '}');
        break;
      }
      case CORPUS_VEC_MULTI: {
        size_t o0 = (size_t)v->offsets[r], n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
        vf_buf_putc(out, '[');
        for (size_t i = 0; i < n && ok; i++) {
          if (i) vf_buf_putc(out, ',');
          ok = qd_floats(out, v->multi + (o0 + i) * (size_t)v->dim, (size_t)v->dim, &bad);
          if (!ok) bad += i * (size_t)v->dim;
        }
        vf_buf_putc(out, ']');
        break;
      }
      }
      if (!ok)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: row %zu (file row %llu): vector '%s' value %zu is NaN or "
                            "infinite, which Qdrant cannot store",
                            where, r, (unsigned long long)(b->file_rows ? b->file_rows[r] : r),
                            s->vectors[j].name, bad);
    }
    vf_buf_putc(out, '}');
    if (b->payload_offsets && b->payload_offsets[r + 1] > b->payload_offsets[r]) {
      vf_buf_put(out, ",\"payload\":", 11);
      vf_buf_put(out, b->payload.data + b->payload_offsets[r],
                 (size_t)(b->payload_offsets[r + 1] - b->payload_offsets[r]));
    }
    vf_buf_putc(out, '}');
  }
  return VF_OK;
}
