/*
 * JSON rows by Dremel record assembly (Melnik et al., "Dremel", section 4.3; parquet-format
 * README "Nested Encoding").
 *
 * Why this algorithm: it needs no per-shape special cases, so every historical LIST/MAP
 * spelling the schema builder recognises renders the same way.  Each bound leaf has a level
 * cursor (its next def/rep entry) and a value cursor (its next non-null value).  Rendering a
 * node looks at the definition level `d` of the current entry of the first leaf under it:
 *   - primitive: d == max_def -> the value (value cursor advances), else null; the level
 *     cursor advances by one.
 *   - an optional node with d below its own def level is null, and a null (or empty) subtree
 *     holds exactly one level entry in every leaf below it: all their level cursors advance
 *     by one.
 *   - LIST: "[]" when d is below the repeated node's def level (defined but empty); else one
 *     element after another while the first leaf's next entry repeats at the repeated node's
 *     rep level.  MAP likewise, as an object of key: value pairs.  Structs are objects.
 *   - A bare repeated field is a list of its occurrences, each rendered as a non-repeated node.
 * Every cursor is checked against its leaf's limits, and after each row every leaf must stand
 * at a row boundary (rep 0 or the end): inconsistent levels are VF_ECORRUPT, never an
 * out-of-bounds read.
 *
 * Value text follows DuckDB's rendering so the outputs can be compared: timestamps as
 * "YYYY-MM-DD HH:MM:SS[.f]" (trailing fraction zeros trimmed, "+00" when adjusted to UTC),
 * dates "YYYY-MM-DD", decimals exact, unsigned integers unsigned, float16 as float; a TIME
 * outside a day is refused, as DuckDB refuses it.  Where DuckDB's text would lose data, it does
 * not: binary without a text annotation is base64 (the old lossy text on request), and VARIANT
 * columns are the JSON of their value (see "Variants" below).  Empty groups (no leaves) hold no
 * values and are left out, as arrow-rs reads them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

#define PQT_MAX_VARIANT_SHRED_DEPTH 64

struct pqt_rows {
  const pqt_file *f;
  const pqt_schema *s;
  int *tops;
  int ntops;
  const pqt_leaf_data **bound; /* by leaf index */
  int64_t *lc;                 /* level cursor by leaf */
  int64_t *vc;                 /* value cursor by leaf */
  int64_t nrows, row;
  int64_t first_row; /* physical row of the bound row group's first row (messages) */
  vf_buf tmp; /* map key rendering */
  bool binary_as_string; /* unannotated bytes as text (the old rendering), not base64 */
  /* VARIANT columns (see "Variants" below): per node its role and, for variant and field groups,
   * the node indices of their metadata / value / typed_value children (-1 when absent); NULL
   * when no chosen column holds a variant */
  uint8_t *vrole;
  int *vmeta, *vval, *vtyped;
  const pqt_variant_meta *vm; /* the metadata of the variant being rendered, NULL outside one */
};

/* the physical row being rendered, for messages */
static inline int64_t file_row(const pqt_rows *r) {
  return r->first_row + r->row;
}

/* node roles inside VARIANT columns (VariantShredding.md) */
enum {
  VR_NONE = 0,
  VR_VARIANT, /* the annotated group: metadata, value, typed_value */
  VR_FIELD,   /* a shredded object field or array element: value, typed_value */
  VR_OBJECT   /* a typed_value group whose children are the object's shredded fields */
};

/* ------------------------------------------------------------- formatting */

/* days since 1970-01-01 -> civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms")
 */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t yy = (int64_t)yoe + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

static int fmt_date(char *b, size_t n, int64_t days) {
  int64_t y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  if (y < 0) return snprintf(b, n, "%05" PRId64 "-%02u-%02u", y, m, d);
  return snprintf(b, n, "%04" PRId64 "-%02u-%02u", y, m, d);
}

/* time of day from a count of `unit_per_s` units; the fraction printed with trailing zeros trimmed
 */
static int fmt_tod(char *b, size_t n, int64_t t, int64_t unit_per_s, int digits) {
  int64_t secs = t / unit_per_s, frac = t % unit_per_s;
  int len = snprintf(b, n, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, secs / 3600, (secs / 60) % 60,
                     secs % 60);
  if (frac > 0 && len > 0 && (size_t)len < n) {
    char fb[16];
    snprintf(fb, sizeof fb, "%0*" PRId64, digits, frac);
    int k = digits;
    while (k > 0 && fb[k - 1] == '0')
      k--;
    fb[k] = '\0';
    len += snprintf(b + len, n - (size_t)len, ".%s", fb);
  }
  return len;
}

static int fmt_timestamp(char *b, size_t n, int64_t v, int64_t unit_per_s, int digits, bool utc) {
  int64_t per_day = unit_per_s * 86400;
  int64_t days = v / per_day, rem = v % per_day;
  if (rem < 0) {
    rem += per_day;
    days--;
  }
  int len = fmt_date(b, n, days);
  if (len < 0 || (size_t)len >= n) return len;
  b[len++] = ' ';
  int k = fmt_tod(b + len, n - (size_t)len, rem, unit_per_s, digits);
  if (k < 0) return k;
  len += k;
  if (utc && (size_t)len + 3 < n) len += snprintf(b + len, n - (size_t)len, "+00");
  return len;
}

static vf_status raw_text(vf_buf *out, const char *s, int n, vf_error *err) {
  if (n < 0) return vf_error_set(err, VF_EINTERNAL, "formatting failed");
  return vf_json_string(out, s, (size_t)n, err);
}

static const int64_t k_per_s[3] = {1000, 1000000, 1000000000};
static const int k_digits[3] = {3, 6, 9};

/*! pqt_json_date() : see pqt_internal.h. */
vf_status pqt_json_date(vf_buf *out, int64_t days, vf_error *err) {
  char b[48];
  return raw_text(out, b, fmt_date(b, sizeof b, days), err);
}

/*! pqt_json_timestamp() : see pqt_internal.h. */
vf_status pqt_json_timestamp(vf_buf *out, int64_t v, pqt_time_unit unit, bool utc, vf_error *err) {
  char b[96];
  int u = (int)unit;
  if (u < 0 || u > 2) u = PQT_MICROS;
  return raw_text(out, b, fmt_timestamp(b, sizeof b, v, k_per_s[u], k_digits[u], utc), err);
}

/*! pqt_json_time() : see pqt_internal.h.  The range is DuckDB's (it refuses the file otherwise):
 *  a time of day from 00:00:00 to 24:00:00 inclusive. */
vf_status pqt_json_time(vf_buf *out, int64_t v, pqt_time_unit unit, vf_error *err) {
  static const char *const names[3] = {"milliseconds", "microseconds", "nanoseconds"};
  int u = (int)unit;
  if (u < 0 || u > 2) u = PQT_MICROS;
  if (v < 0 || v > k_per_s[u] * 86400)
    return vf_error_set(err, VF_ECORRUPT,
                        "TIME value %" PRId64 " (%s) is not a time of day (00:00:00 to 24:00:00)",
                        v, names[u]);
  char b[48];
  return raw_text(out, b, fmt_tod(b, sizeof b, v, k_per_s[u], k_digits[u]), err);
}

/*! pqt_json_uuid() : see pqt_internal.h. */
vf_status pqt_json_uuid(vf_buf *out, const uint8_t p[16], vf_error *err) {
  char b[40];
  int n = 0;
  for (int k = 0; k < 16; k++) {
    if (k == 4 || k == 6 || k == 8 || k == 10) b[n++] = '-';
    n += snprintf(b + n, sizeof b - (size_t)n, "%02x", p[k]);
  }
  return raw_text(out, b, n, err);
}

/*! pqt_json_decimal() : see pqt_internal.h.  Big-endian two's complement -> decimal text with
 *  `scale` fraction digits. */
vf_status pqt_json_decimal(vf_buf *out, const uint8_t *p, size_t len, int32_t scale,
                           vf_error *err) {
  uint8_t mag[64];
  if (len > sizeof mag) return vf_json_string(out, "(decimal too wide)", 18, err);
  if (len == 0) return vf_json_raw(out, "0", err);
  bool neg = (p[0] & 0x80) != 0;
  memcpy(mag, p, len);
  if (neg) { /* two's complement negate */
    unsigned carry = 1;
    for (size_t i = len; i-- > 0;) {
      unsigned v = (unsigned)(uint8_t)~mag[i] + carry;
      mag[i] = (uint8_t)v;
      carry = v >> 8;
    }
  }
  char digits[200];
  size_t nd = 0;
  size_t start = 0;
  for (;;) {
    while (start < len && mag[start] == 0)
      start++;
    if (start == len) break;
    unsigned rem = 0;
    for (size_t i = start; i < len; i++) {
      unsigned cur = (rem << 8) | mag[i];
      mag[i] = (uint8_t)(cur / 10);
      rem = cur % 10;
    }
    digits[nd++] = (char)('0' + rem);
  }
  if (nd == 0) digits[nd++] = '0';
  char text[260];
  size_t t = 0;
  if (neg) text[t++] = '-';
  if (scale < 0) scale = 0;
  if (scale > 150) scale = 150;
  size_t sc = (size_t)scale;
  if (nd <= sc) {
    text[t++] = '0';
    text[t++] = '.';
    for (size_t i = nd; i < sc; i++)
      text[t++] = '0';
    for (size_t i = nd; i-- > 0;)
      text[t++] = digits[i];
  } else {
    for (size_t i = nd; i-- > 0;) {
      text[t++] = digits[i];
      if (i == sc && sc > 0) text[t++] = '.';
    }
  }
  text[t] = '\0';
  return vf_json_raw(out, text, err);
}

static vf_status render_decimal_i64(vf_buf *out, int64_t v, int32_t scale, vf_error *err) {
  uint8_t be[8];
  for (int i = 0; i < 8; i++)
    be[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
  return pqt_json_decimal(out, be, 8, scale, err);
}

static bool is_decimal(const pqt_schema_elem *e, int32_t *scale) {
  if (e->logical == PQT_LT_DECIMAL) {
    *scale = e->lt_scale;
    return true;
  }
  if (e->converted_type == PQT_CT_DECIMAL) {
    *scale = e->scale < 0 ? 0 : e->scale;
    return true;
  }
  return false;
}

static bool is_unsigned(const pqt_schema_elem *e) {
  if (e->logical == PQT_LT_INTEGER) return !e->lt_signed;
  int c = e->converted_type;
  return c == PQT_CT_UINT_8 || c == PQT_CT_UINT_16 || c == PQT_CT_UINT_32 || c == PQT_CT_UINT_64;
}

/* BYTE_ARRAY annotations that promise text: everything else (unannotated, BSON, GEOMETRY, ...) is
 * binary and printed as base64, so no byte is lost. */
static bool is_text(const pqt_schema_elem *e) {
  if (e->logical == PQT_LT_STRING || e->logical == PQT_LT_ENUM || e->logical == PQT_LT_JSON)
    return true;
  int c = e->converted_type;
  return c == PQT_CT_UTF8 || c == PQT_CT_ENUM || c == PQT_CT_JSON;
}

/* Bytes without a text annotation: base64, or (binary_as_string, outside a variant) text with
 * invalid UTF-8 replaced as before. */
static vf_status render_binary(const pqt_rows *r, const uint8_t *p, size_t n, vf_buf *out,
                               vf_error *err) {
  if (r->binary_as_string && !r->vm) return vf_json_string(out, (const char *)p, n, err);
  return vf_json_base64(out, p, n, err);
}

/* A value that cannot be rendered: the error names the file, the column and the row. */
static vf_status value_fail(const pqt_rows *r, const pqt_leaf *lf, vf_status st, vf_error *err) {
  vf_error_prefix(err, "%s: column %s: row %" PRId64 ": ", pqt_name(r->f), lf->path, file_row(r));
  return st;
}

/* Render value `i` of a leaf. */
static vf_status render_value(const pqt_rows *r, const pqt_leaf *lf, const pqt_leaf_data *d,
                              int64_t i, vf_buf *out, vf_error *err) {
  const pqt_schema_elem *e = &pqt_meta(r->f)->schema[r->s->nodes[lf->node].elem];
  const uint8_t *base = d->values.data;
  int32_t scale = 0;
  vf_status st;
  if (lf->type == PQT_BYTE_ARRAY) {
    int64_t a = d->offsets[i], z = d->offsets[i + 1];
    if (a < 0 || z < a || (uint64_t)z > d->values.len)
      return vf_error_set(err, VF_ECORRUPT, "column %s: value %" PRId64 " has invalid offsets",
                          lf->path, i);
    if (is_decimal(e, &scale)) return pqt_json_decimal(out, base + a, (size_t)(z - a), scale, err);
    if (is_text(e)) return vf_json_string(out, (const char *)base + a, (size_t)(z - a), err);
    return render_binary(r, base + a, (size_t)(z - a), out, err);
  }
  size_t w = (size_t)d->width;
  if (w == 0 || (uint64_t)(i + 1) * w > d->values.len)
    return vf_error_set(err, VF_ECORRUPT, "column %s: value %" PRId64 " is past the decoded values",
                        lf->path, i);
  const uint8_t *p = base + (size_t)i * w;
  switch (lf->type) {
  case PQT_BOOLEAN: return vf_json_raw(out, p[0] ? "true" : "false", err);
  case PQT_INT32: {
    int32_t v;
    memcpy(&v, p, 4);
    if (is_decimal(e, &scale)) return render_decimal_i64(out, v, scale, err);
    if (e->logical == PQT_LT_DATE || e->converted_type == PQT_CT_DATE)
      return pqt_json_date(out, v, err);
    if ((e->logical == PQT_LT_TIME) || e->converted_type == PQT_CT_TIME_MILLIS) {
      if ((st = pqt_json_time(out, v, PQT_MILLIS, err)) != VF_OK) return value_fail(r, lf, st, err);
      return VF_OK;
    }
    if (is_unsigned(e)) return vf_json_u64(out, (uint32_t)v, err);
    return vf_json_i64(out, v, err);
  }
  case PQT_INT64: {
    int64_t v;
    memcpy(&v, p, 8);
    if (is_decimal(e, &scale)) return render_decimal_i64(out, v, scale, err);
    if (e->logical == PQT_LT_TIMESTAMP)
      return pqt_json_timestamp(out, v, e->lt_unit, e->lt_utc, err);
    if (e->converted_type == PQT_CT_TIMESTAMP_MILLIS)
      return pqt_json_timestamp(out, v, PQT_MILLIS, false, err);
    if (e->converted_type == PQT_CT_TIMESTAMP_MICROS)
      return pqt_json_timestamp(out, v, PQT_MICROS, false, err);
    if (e->logical == PQT_LT_TIME || e->converted_type == PQT_CT_TIME_MICROS) {
      pqt_time_unit u = e->logical == PQT_LT_TIME ? e->lt_unit : PQT_MICROS;
      if ((st = pqt_json_time(out, v, u, err)) != VF_OK) return value_fail(r, lf, st, err);
      return VF_OK;
    }
    if (is_unsigned(e)) return vf_json_u64(out, (uint64_t)v, err);
    return vf_json_i64(out, v, err);
  }
  case PQT_INT96: {
    /* nanoseconds of the day (8 bytes LE) then the Julian day (4 bytes LE); as DuckDB: micros */
    int64_t nanos;
    int32_t jd;
    memcpy(&nanos, p, 8);
    memcpy(&jd, p + 8, 4);
    /* micros = (day - epoch) * 86400e6 + nanos / 1000 in wrapping 64-bit arithmetic, as Spark
     * and arrow compute it: Spark writes far-future dates so that the wrap restores them
     * (int96_from_spark.md: 290000-12-31T01:00:00+02:00 is stored with a negative day). */
    uint64_t um = (uint64_t)((int64_t)jd - 2440588) * 86400000000ull + (uint64_t)(nanos / 1000);
    int64_t micros;
    memcpy(&micros, &um, sizeof micros);
    return pqt_json_timestamp(out, micros, PQT_MICROS, false, err);
  }
  case PQT_FLOAT: {
    float v;
    memcpy(&v, p, 4);
    return vf_json_f32(out, v, err);
  }
  case PQT_DOUBLE: {
    double v;
    memcpy(&v, p, 8);
    return vf_json_f64(out, v, err);
  }
  case PQT_FIXED_LEN_BYTE_ARRAY:
    if (e->logical == PQT_LT_FLOAT16 && w == 2) {
      uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
      return vf_json_f32(out, pqt_half_to_float(h), err);
    }
    if (is_decimal(e, &scale)) return pqt_json_decimal(out, p, w, scale, err);
    if (e->logical == PQT_LT_UUID && w == 16) return pqt_json_uuid(out, p, err);
    return render_binary(r, p, w, out, err);
  default:
    return vf_error_set(err, VF_ECORRUPT, "column %s: unknown physical type %d", lf->path,
                        (int)lf->type);
  }
}

/* ----------------------------------------------------------------- assembly */

static vf_status levels_exhausted(const pqt_rows *r, int leaf, vf_error *err) {
  return vf_error_set(err, VF_ECORRUPT,
                      "%s: column %s: levels run out at row %" PRId64 " (%" PRId64
                      " entries): levels are "
                      "inconsistent with the schema",
                      pqt_name(r->f), r->s->leaves[leaf].path, file_row(r),
                      r->bound[leaf]->nlevels);
}

static inline int cur_def(const pqt_rows *r, int leaf) {
  const pqt_leaf_data *d = r->bound[leaf];
  return d->def ? d->def[r->lc[leaf]] : r->s->leaves[leaf].max_def;
}

static inline int cur_rep(const pqt_rows *r, int leaf) {
  const pqt_leaf_data *d = r->bound[leaf];
  return d->rep ? d->rep[r->lc[leaf]] : 0;
}

/* A null or empty subtree: one level entry in every leaf under the node, each with a def level
 * below `threshold`.  Some writers (DuckDB, for a null fixed-size array) follow that entry with
 * more entries repeating inside the null subtree (rep above the node's enclosing level) that
 * define nothing; they are skipped.  An entry that defines something inside a null or empty
 * subtree is corrupt. */
static vf_status advance_all(pqt_rows *r, const pqt_node *n, int threshold, vf_error *err) {
  int enclosing = n->repetition == PQT_REPEATED ? n->rep_level - 1 : n->rep_level;
  for (int l = n->first_leaf; l < n->first_leaf + n->nleaves; l++) {
    const pqt_leaf_data *d = r->bound[l];
    bool first = true;
    do {
      if (r->lc[l] >= d->nlevels) return levels_exhausted(r, l, err);
      if (!first && cur_rep(r, l) <= enclosing) break;
      if (cur_def(r, l) >= threshold)
        return vf_error_set(
            err, VF_ECORRUPT,
            "%s: column %s: row %" PRId64 ": a defined value (definition level %d) inside a null "
            "or empty %s",
            pqt_name(r->f), r->s->leaves[l].path, file_row(r), cur_def(r, l),
            n->name ? n->name : "?");
      r->lc[l]++;
      first = false;
    } while (r->lc[l] < d->nlevels);
  }
  return VF_OK;
}

static vf_status emit(pqt_rows *r, int ni, bool occurrence, vf_buf *out, vf_error *err);

static vf_status emit_list(pqt_rows *r, const pqt_node *n, vf_buf *out, vf_error *err) {
  const pqt_node *rn = &r->s->nodes[n->repeated];
  int fl = n->first_leaf;
  int d = cur_def(r, fl);
  if (d < rn->def_level) {
    if (out) {
      vf_status st = vf_json_raw(out, n->kind == PQT_NODE_MAP ? "{}" : "[]", err);
      if (st != VF_OK) return st;
    }
    return advance_all(r, n, rn->def_level, err);
  }
  vf_status st;
  if (out && (st = vf_json_raw(out, n->kind == PQT_NODE_MAP ? "{" : "[", err)) != VF_OK) return st;
  bool first = true;
  for (;;) {
    if (!first && out && (st = vf_json_raw(out, ",", err)) != VF_OK) return st;
    first = false;
    if (n->kind == PQT_NODE_MAP) {
      /* key (stringified) : value */
      if (n->key < 0)
        return vf_error_set(err, VF_ECORRUPT, "%s: map %s has no key", pqt_name(r->f), n->name);
      if (out) {
        const pqt_node *kn = &r->s->nodes[n->key];
        bool str_key = kn->leaf >= 0 && r->s->leaves[kn->leaf].type == PQT_BYTE_ARRAY;
        if (str_key) {
          st = emit(r, n->key, false, out, err);
        } else {
          vf_buf_reset(&r->tmp);
          st = emit(r, n->key, false, &r->tmp, err);
          if (st != VF_OK) return st;
          const char *ks = (const char *)r->tmp.data;
          size_t kl = r->tmp.len;
          if (kl >= 2 && ks[0] == '"') {
            st = vf_buf_append(out, ks, kl, err);
          } else {
            st = vf_json_string(out, ks ? ks : "", kl, err);
          }
        }
        if (st != VF_OK) return st;
        if ((st = vf_json_raw(out, ":", err)) != VF_OK) return st;
      } else if ((st = emit(r, n->key, false, NULL, err)) != VF_OK) {
        return st;
      }
      if (n->value >= 0) {
        st = emit(r, n->value, false, out, err);
      } else {
        st = out ? vf_json_raw(out, "null", err) : VF_OK;
      }
      if (st != VF_OK) return st;
    } else {
      int e = n->element;
      st = emit(r, e, e == n->repeated, out, err);
      if (st != VF_OK) return st;
    }
    if (r->lc[fl] >= r->bound[fl]->nlevels) break;
    int rep = cur_rep(r, fl);
    if (rep == rn->rep_level) continue;
    if (rep > rn->rep_level)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: column %s: row %" PRId64
                          ": repetition level %d where at most %d can follow",
                          pqt_name(r->f), r->s->leaves[fl].path, file_row(r), rep, rn->rep_level);
    break;
  }
  if (out && (st = vf_json_raw(out, n->kind == PQT_NODE_MAP ? "}" : "]", err)) != VF_OK) return st;
  return VF_OK;
}

/* ------------------------------------------------------------------ variants */

/* VARIANT columns (parquet-format VariantEncoding.md "Variant in Parquet", VariantShredding.md):
 * the annotated group holds `metadata` (binary), `value` (binary, a Variant) and optionally a
 * shredded `typed_value`: a primitive column, a LIST of field groups (array elements) or a group of
 * field groups (object fields), where a field group is again {value, typed_value}.  A value is
 * reassembled as construct_variant() in VariantShredding.md describes: typed_value when present
 * (an object merged with the fields still in `value`, keys in name order), else `value`, else
 * missing (a variant null at the top, an absent key in an object).  Leaves are consumed through
 * the same level cursors as everywhere else, so variants nest inside lists and structs. */

/* The current entry of primitive BYTE_ARRAY node `ni`: the bytes, or *p = NULL for null. */
static vf_status take_bytes(pqt_rows *r, int ni, const uint8_t **p, size_t *n, vf_error *err) {
  const pqt_node *nd = &r->s->nodes[ni];
  int l = nd->leaf;
  const pqt_leaf_data *d = r->bound[l];
  *p = NULL;
  *n = 0;
  if (r->lc[l] >= d->nlevels) return levels_exhausted(r, l, err);
  if (cur_def(r, l) == r->s->leaves[l].max_def) {
    int64_t i = r->vc[l];
    if (i >= d->nvalues)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: column %s: row %" PRId64 ": more defined levels than values",
                          pqt_name(r->f), r->s->leaves[l].path, file_row(r));
    int64_t a = d->offsets[i], z = d->offsets[i + 1];
    if (a < 0 || z < a || (uint64_t)z > d->values.len)
      return vf_error_set(err, VF_ECORRUPT, "column %s: value %" PRId64 " has invalid offsets",
                          r->s->leaves[l].path, i);
    *p = d->values.data + a;
    *n = (size_t)(z - a);
    r->vc[l]++;
  }
  r->lc[l]++;
  return VF_OK;
}

/* The dotted path of node `ni` (as leaf paths are spelled), cut to fit. */
static const char *node_path(const pqt_rows *r, int ni, char *buf, size_t cap) {
  int chain[256], n = 0;
  for (int x = ni; x > 0 && n < 256; x = r->s->nodes[x].parent)
    chain[n++] = x;
  size_t k = 0;
  for (int i = n - 1; i >= 0; i--) {
    const char *nm = r->s->nodes[chain[i]].name ? r->s->nodes[chain[i]].name : "";
    int w = snprintf(buf + k, cap - k, "%s%s", k ? "." : "", nm);
    if (w < 0 || (size_t)w >= cap - k) break;
    k += (size_t)w;
  }
  buf[k < cap ? k : cap - 1] = '\0';
  return buf;
}

static vf_status variant_fail(const pqt_rows *r, int ni, vf_status st, vf_error *err) {
  char path[256];
  vf_error_prefix(err, "%s: column %s: row %" PRId64 ": ", pqt_name(r->f),
                  node_path(r, ni, path, sizeof path), file_row(r));
  return st;
}

static vf_status emit_typed(pqt_rows *r, int ti, const uint8_t *v, size_t vn, vf_buf *out,
                            bool *present, vf_error *err);

/* A field group (or the variant group after its metadata): typed_value if present, else value,
 * else *missing. */
static vf_status emit_field(pqt_rows *r, int ni, vf_buf *out, bool *missing, vf_error *err) {
  const uint8_t *v = NULL;
  size_t vn = 0;
  vf_status st;
  *missing = false;
  if (r->vval[ni] >= 0 && (st = take_bytes(r, r->vval[ni], &v, &vn, err)) != VF_OK) return st;
  bool present = false;
  if (r->vtyped[ni] >= 0 && (st = emit_typed(r, r->vtyped[ni], v, vn, out, &present, err)) != VF_OK)
    return st;
  if (present) return VF_OK;
  if (!v) {
    *missing = true;
    return VF_OK;
  }
  if (!out) return VF_OK;
  if ((st = pqt_variant_to_json(r->vm, v, vn, out, err)) != VF_OK)
    return variant_fail(r, ni, st, err);
  return VF_OK;
}

typedef struct vkey {
  const uint8_t *k;
  size_t kn;
  size_t at, len; /* the rendered value in the object's scratch buffer */
} vkey;

static int vkey_cmp(const void *a, const void *b) {
  const vkey *x = a, *y = b;
  size_t n = x->kn < y->kn ? x->kn : y->kn;
  int c = memcmp(x->k, y->k, n);
  return c ? c : (x->kn > y->kn) - (x->kn < y->kn);
}

/* A shredded object: the present shredded fields and the fields left in `v` (if any), in name
 * order. */
static vf_status emit_object(pqt_rows *r, int ti, const uint8_t *v, size_t vn, vf_buf *out,
                             vf_error *err) {
  const pqt_node *n = &r->s->nodes[ti];
  vf_status st = VF_OK;
  pqt_variant_object o;
  memset(&o, 0, sizeof o);
  if (out && v && (st = pqt_variant_object_open(r->vm, v, vn, &o, err)) != VF_OK)
    return variant_fail(r, ti, st, err);
  size_t cap = (size_t)n->nchildren + o.n;
  vkey *keys = vf_calloc(cap ? cap : 1, sizeof *keys);
  vf_buf tmp;
  VF_BUF_INIT(&tmp, VF_BUF_MAX_RECORD);
  size_t nk = 0;
  if (!keys) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int c = 0; c < n->nchildren; c++) {
    int ci = n->children[c];
    bool missing = false;
    size_t at = tmp.len;
    VF_TRY(emit_field(r, ci, out ? &tmp : NULL, &missing, err));
    if (!missing && out) {
      const char *nm = r->s->nodes[ci].name ? r->s->nodes[ci].name : "";
      keys[nk++] = (vkey){(const uint8_t *)nm, strlen(nm), at, tmp.len - at};
    }
  }
  for (uint32_t i = 0; out && i < o.n; i++) {
    const uint8_t *val;
    size_t vl;
    vkey *k = &keys[nk];
    st = pqt_variant_object_field(&o, i, &k->k, &k->kn, &val, &vl, err);
    k->at = tmp.len;
    if (st != VF_OK || (st = pqt_variant_to_json(r->vm, val, vl, &tmp, err)) != VF_OK) {
      variant_fail(r, ti, st, err);
      goto out;
    }
    k->len = tmp.len - k->at;
    nk++;
  }
  if (out) {
    qsort(keys, nk, sizeof *keys, vkey_cmp);
    VF_TRY(vf_json_raw(out, "{", err));
    for (size_t i = 0; i < nk; i++) {
      if (i && vkey_cmp(&keys[i - 1], &keys[i]) == 0)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                             "%s: column %s: row %" PRId64
                             ": the shredded variant object has field '%.*s' twice",
                             pqt_name(r->f), r->s->leaves[n->first_leaf].path, file_row(r),
                             (int)(keys[i].kn > 200 ? 200 : keys[i].kn), (const char *)keys[i].k));
      if (i) VF_TRY(vf_json_raw(out, ",", err));
      VF_TRY(vf_json_string(out, (const char *)keys[i].k, keys[i].kn, err));
      VF_TRY(vf_json_raw(out, ":", err));
      VF_TRY(vf_buf_append(out, tmp.data + keys[i].at, keys[i].len, err));
    }
    VF_TRY(vf_json_raw(out, "}", err));
  }
out:
  free(keys);
  vf_buf_free(&tmp);
  return st;
}

/* typed_value node `ti` (its sibling `value` is v): *present when it holds the value. */
static vf_status emit_typed(pqt_rows *r, int ti, const uint8_t *v, size_t vn, vf_buf *out,
                            bool *present, vf_error *err) {
  const pqt_node *n = &r->s->nodes[ti];
  *present = false;
  if (n->nleaves <= 0) return VF_OK;
  int fl = n->first_leaf;
  if (r->lc[fl] >= r->bound[fl]->nlevels) return levels_exhausted(r, fl, err);
  if (n->repetition != PQT_REQUIRED && cur_def(r, fl) < n->def_level)
    return advance_all(r, n, n->def_level, err);
  *present = true;
  if (r->vrole[ti] == VR_OBJECT) return emit_object(r, ti, v, vn, out, err);
  if (v)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: column %s: row %" PRId64 ": a shredded variant has both a value and a "
                        "typed_value that is not an object",
                        pqt_name(r->f), r->s->leaves[fl].path, file_row(r));
  return emit(r, ti, true, out, err); /* a primitive or a LIST of field groups */
}

/* The variant group `ni` (defined in this row). */
static vf_status emit_variant(pqt_rows *r, int ni, vf_buf *out, vf_error *err) {
  const uint8_t *mp;
  size_t mn;
  vf_status st = take_bytes(r, r->vmeta[ni], &mp, &mn, err);
  if (st != VF_OK) return st;
  pqt_variant_meta m;
  const pqt_variant_meta *outer = r->vm;
  if (out) {
    if (!mp)
      return variant_fail(r, ni, vf_error_set(err, VF_ECORRUPT, "variant metadata is null"), err);
    if ((st = pqt_variant_meta_parse(mp, mn, &m, err)) != VF_OK)
      return variant_fail(r, ni, st, err);
    r->vm = &m;
  }
  bool missing = false;
  st = emit_field(r, ni, out, &missing, err);
  r->vm = outer;
  if (st != VF_OK) return st;
  if (missing && out) return vf_json_raw(out, "null", err);
  return VF_OK;
}

/* Child of group `g` named `name`, -1 if none. */
static int child_named(const pqt_schema *s, const pqt_node *g, const char *name) {
  for (int c = 0; c < g->nchildren; c++) {
    const char *nm = s->nodes[g->children[c]].name;
    if (nm && strcmp(nm, name) == 0) return g->children[c];
  }
  return -1;
}

static vf_status vshape_fail(const pqt_rows *r, int ni, const char *what, vf_error *err) {
  return vf_error_set(err, VF_ECORRUPT, "%s: column %s: not a VARIANT column as parquet-format "
                      "VariantShredding.md defines it: %s",
                      pqt_name(r->f), r->s->nodes[ni].name ? r->s->nodes[ni].name : "?", what);
}

static bool is_binary_leaf(const pqt_schema *s, int ni) {
  return ni >= 0 && s->nodes[ni].leaf >= 0 && s->leaves[s->nodes[ni].leaf].type == PQT_BYTE_ARRAY &&
         s->nodes[ni].repetition != PQT_REPEATED;
}

static vf_status vclassify_typed(pqt_rows *r, int ti, int depth, vf_error *err);

/* Group `gi` of value / typed_value (and metadata for the variant group itself). */
static vf_status vclassify_group(pqt_rows *r, int gi, bool top, int depth, vf_error *err) {
  const pqt_schema *s = r->s;
  const pqt_node *g = &s->nodes[gi];
  if (depth > PQT_MAX_VARIANT_SHRED_DEPTH) return vshape_fail(r, gi, "shredded too deeply", err);
  if (g->kind != PQT_NODE_STRUCT || g->nchildren == 0 || (!top && g->repetition == PQT_REPEATED))
    return vshape_fail(r, gi, top ? "the VARIANT group has no fields" : "a shredded field is not a "
                       "group of value and typed_value", err);
  int mi = top ? child_named(s, g, "metadata") : -1;
  int vi = child_named(s, g, "value"), ti = child_named(s, g, "typed_value");
  if (g->nchildren != (mi >= 0) + (vi >= 0) + (ti >= 0))
    return vshape_fail(r, gi, "a field other than metadata, value and typed_value", err);
  if (top && !is_binary_leaf(s, mi)) return vshape_fail(r, gi, "no binary 'metadata' field", err);
  if (vi >= 0 && !is_binary_leaf(s, vi)) return vshape_fail(r, gi, "'value' is not binary", err);
  if (vi < 0 && ti < 0) return vshape_fail(r, gi, "neither 'value' nor 'typed_value'", err);
  r->vrole[gi] = top ? VR_VARIANT : VR_FIELD;
  r->vmeta[gi] = mi;
  r->vval[gi] = vi;
  r->vtyped[gi] = ti;
  return ti >= 0 ? vclassify_typed(r, ti, depth + 1, err) : VF_OK;
}

static vf_status vclassify_typed(pqt_rows *r, int ti, int depth, vf_error *err) {
  const pqt_node *t = &r->s->nodes[ti];
  if (t->repetition == PQT_REPEATED) return vshape_fail(r, ti, "a repeated typed_value", err);
  switch (t->kind) {
  case PQT_NODE_PRIMITIVE: return VF_OK;
  case PQT_NODE_LIST:
    if (t->element < 0 || t->element == t->repeated)
      return vshape_fail(r, ti, "a shredded array whose elements are not value/typed_value groups",
                         err);
    return vclassify_group(r, t->element, false, depth, err);
  case PQT_NODE_STRUCT:
    r->vrole[ti] = VR_OBJECT;
    for (int c = 0; c < t->nchildren; c++) {
      vf_status st = vclassify_group(r, t->children[c], false, depth, err);
      if (st != VF_OK) return st;
    }
    return VF_OK;
  default: return vshape_fail(r, ti, "a MAP as typed_value", err);
  }
}

/* Roles of every node under the chosen tops that belongs to a VARIANT column. */
static vf_status variant_roles(pqt_rows *r, vf_error *err) {
  const pqt_schema *s = r->s;
  const pqt_schema_elem *el = pqt_meta(r->f)->schema;
  for (int t = 0; t < r->ntops; t++) {
    /* nodes are numbered in preorder: a top's subtree is the index range up to the next top */
    int lo = r->tops[t], hi = lo + 1;
    while (hi < s->nnodes && s->nodes[hi].parent >= lo) hi++;
    for (int i = lo; i < hi; i++) {
      if (el[s->nodes[i].elem].logical != PQT_LT_VARIANT) continue;
      if (!r->vrole) {
        size_t nn = (size_t)s->nnodes;
        r->vrole = vf_calloc(nn, 1);
        r->vmeta = vf_mallocarray(nn, sizeof(int));
        r->vval = vf_mallocarray(nn, sizeof(int));
        r->vtyped = vf_mallocarray(nn, sizeof(int));
        if (!r->vrole || !r->vmeta || !r->vval || !r->vtyped)
          return vf_error_set(err, VF_ENOMEM, "out of memory");
      }
      if (r->vrole[i] != VR_NONE) return vshape_fail(r, i, "a VARIANT inside a VARIANT", err);
      vf_status st = vclassify_group(r, i, true, 0, err);
      if (st != VF_OK) return st;
    }
  }
  return VF_OK;
}

/* Render node `ni`.  `occurrence`: the node is one occurrence of a repeated node (a list
 * element in 2-level form or a bare repeated field), rendered as a non-repeated node. */
static vf_status emit(pqt_rows *r, int ni, bool occurrence, vf_buf *out, vf_error *err) {
  const pqt_node *n = &r->s->nodes[ni];
  vf_status st;
  if (n->nleaves <= 0) return out ? vf_json_raw(out, "null", err) : VF_OK; /* (a map value) */
  int fl = n->first_leaf;
  if (r->lc[fl] >= r->bound[fl]->nlevels) return levels_exhausted(r, fl, err);
  int d = cur_def(r, fl);
  /* a bare repeated field: a list of its occurrences */
  if (!occurrence && n->repetition == PQT_REPEATED) {
    if (n->kind == PQT_NODE_LIST && n->repeated == ni) return emit_list(r, n, out, err);
    /* a repeated node that is not the list form: render as its own single-level list */
    if (d < n->def_level) {
      if (out && (st = vf_json_raw(out, "[]", err)) != VF_OK) return st;
      return advance_all(r, n, n->def_level, err);
    }
  }
  if (n->leaf >= 0) {
    const pqt_leaf *lf = &r->s->leaves[n->leaf];
    const pqt_leaf_data *ld = r->bound[n->leaf];
    if (d == lf->max_def) {
      if (r->vc[n->leaf] >= ld->nvalues)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: column %s: row %" PRId64 ": more defined levels than values",
                            pqt_name(r->f), lf->path, file_row(r));
      if (out && (st = render_value(r, lf, ld, r->vc[n->leaf], out, err)) != VF_OK) return st;
      r->vc[n->leaf]++;
    } else if (out && (st = vf_json_raw(out, "null", err)) != VF_OK) {
      return st;
    }
    r->lc[n->leaf]++;
    return VF_OK;
  }
  if (!occurrence && n->repetition != PQT_REQUIRED && d < n->def_level) {
    if (out && (st = vf_json_raw(out, "null", err)) != VF_OK) return st;
    return advance_all(r, n, n->def_level, err);
  }
  if (r->vrole && r->vrole[ni] == VR_VARIANT) return emit_variant(r, ni, out, err);
  if (r->vrole && r->vrole[ni] == VR_FIELD) { /* an element of a shredded array */
    bool missing = false;
    if ((st = emit_field(r, ni, out, &missing, err)) != VF_OK) return st;
    if (missing)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: column %s: row %" PRId64 ": a shredded variant array element has "
                          "neither value nor typed_value",
                          pqt_name(r->f), r->s->leaves[n->first_leaf].path, file_row(r));
    return VF_OK;
  }
  if ((n->kind == PQT_NODE_LIST && n->repeated >= 0 && n->repeated != ni) ||
      (n->kind == PQT_NODE_MAP && n->repeated >= 0))
    return emit_list(r, n, out, err);
  /* struct (or the occurrence of a repeated group); empty groups are left out, as arrow-rs does */
  if (out && (st = vf_json_raw(out, "{", err)) != VF_OK) return st;
  bool first = true;
  for (int c = 0; c < n->nchildren; c++) {
    const pqt_node *cn = &r->s->nodes[n->children[c]];
    if (cn->nleaves <= 0) continue;
    if (out) {
      if (!first && (st = vf_json_raw(out, ",", err)) != VF_OK) return st;
      first = false;
      const char *nm = cn->name ? cn->name : "";
      if ((st = vf_json_string(out, nm, strlen(nm), err)) != VF_OK) return st;
      if ((st = vf_json_raw(out, ":", err)) != VF_OK) return st;
    }
    if ((st = emit(r, n->children[c], false, out, err)) != VF_OK) return st;
  }
  if (out && (st = vf_json_raw(out, "}", err)) != VF_OK) return st;
  return VF_OK;
}

/* ------------------------------------------------------------------ API */

/*! pqt_rows_create() : see format.h. */
vf_status pqt_rows_create(const pqt_file *f, const int *tops, int ntops, pqt_rows **out,
                          vf_error *err) {
  *out = NULL;
  const pqt_schema *s = pqt_schema_of(f);
  if (ntops < 0) return vf_error_set(err, VF_EUSAGE, "negative column count");
  for (int i = 0; i < ntops; i++) {
    bool ok = false;
    for (int t = 0; t < s->ntop; t++)
      ok = ok || s->top[t] == tops[i];
    if (!ok)
      return vf_error_set(err, VF_EUSAGE, "%s: node %d is not a top-level column", pqt_name(f),
                          tops[i]);
  }
  pqt_rows *r = vf_calloc(1, sizeof *r);
  if (!r) return vf_error_set(err, VF_ENOMEM, "out of memory");
  r->f = f;
  r->s = s;
  r->ntops = ntops;
  vf_buf_init(&r->tmp, 1u << 20);
  size_t nl = s->nleaves > 0 ? (size_t)s->nleaves : 1;
  r->tops = vf_mallocarray(ntops > 0 ? (size_t)ntops : 1, sizeof(int));
  r->bound = vf_calloc(nl, sizeof *r->bound);
  r->lc = vf_calloc(nl, sizeof *r->lc);
  r->vc = vf_calloc(nl, sizeof *r->vc);
  if (!r->tops || !r->bound || !r->lc || !r->vc) {
    pqt_rows_free(r);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  if (ntops) memcpy(r->tops, tops, (size_t)ntops * sizeof(int));
  vf_status st = variant_roles(r, err);
  if (st != VF_OK) {
    pqt_rows_free(r);
    return st;
  }
  *out = r;
  return VF_OK;
}

/*! pqt_rows_set_first_row() : see format.h. */
void pqt_rows_set_first_row(pqt_rows *r, int64_t first_row) {
  r->first_row = first_row;
}

/*! pqt_rows_set_binary_as_string() : see format.h. */
void pqt_rows_set_binary_as_string(pqt_rows *r, bool on) {
  r->binary_as_string = on;
}

/*! pqt_rows_bind() : see format.h.  Levels are checked lazily as rows are rendered. */
vf_status pqt_rows_bind(pqt_rows *r, const pqt_leaf_data *leaves, const int *leaf_ids, int n,
                        int64_t nrows, vf_error *err) {
  const pqt_schema *s = r->s;
  for (int l = 0; l < s->nleaves; l++) {
    r->bound[l] = NULL;
    r->lc[l] = r->vc[l] = 0;
  }
  for (int i = 0; i < n; i++) {
    int l = leaf_ids[i];
    if (l < 0 || l >= s->nleaves)
      return vf_error_set(err, VF_EUSAGE, "%s: leaf %d does not exist", pqt_name(r->f), l);
    const pqt_leaf_data *d = &leaves[i];
    if (d->nlevels < 0 || d->nvalues < 0 || d->nvalues > d->nlevels ||
        (s->leaves[l].max_rep > 0 && d->nlevels > 0 && !d->rep) ||
        (s->leaves[l].type == PQT_BYTE_ARRAY && d->nvalues > 0 && !d->offsets))
      return vf_error_set(err, VF_EUSAGE, "%s: leaf data for column %s is not decoded",
                          pqt_name(r->f), s->leaves[l].path);
    r->bound[l] = d;
  }
  for (int t = 0; t < r->ntops; t++) {
    const pqt_node *tn = &s->nodes[r->tops[t]];
    for (int l = tn->first_leaf; l < tn->first_leaf + tn->nleaves; l++)
      if (!r->bound[l])
        return vf_error_set(err, VF_EUSAGE, "%s: column %s is not bound", pqt_name(r->f),
                            s->leaves[l].path);
  }
  r->nrows = nrows;
  r->row = 0;
  r->first_row = 0;
  return VF_OK;
}

static vf_status one_row(pqt_rows *r, vf_buf *out, vf_error *err) {
  if (r->row >= r->nrows)
    return vf_error_set(err, VF_EUSAGE, "%s: no row %" PRId64 " (bound %" PRId64 " rows)",
                        pqt_name(r->f), r->row, r->nrows);
  vf_status st;
  bool first = true;
  for (int t = 0; t < r->ntops; t++) {
    const pqt_node *tn = &r->s->nodes[r->tops[t]];
    if (tn->nleaves <= 0) continue; /* an empty group: no values, left out as arrow-rs does */
    for (int l = tn->first_leaf; l < tn->first_leaf + tn->nleaves; l++) {
      if (r->lc[l] >= r->bound[l]->nlevels) return levels_exhausted(r, l, err);
      if (cur_rep(r, l) != 0)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: column %s: row %" PRId64 " starts with repetition level %d",
                            pqt_name(r->f), r->s->leaves[l].path, file_row(r), cur_rep(r, l));
    }
    if (out) {
      if (!first && (st = vf_json_raw(out, ",", err)) != VF_OK) return st;
      first = false;
      const char *nm = tn->name ? tn->name : "";
      if ((st = vf_json_string(out, nm, strlen(nm), err)) != VF_OK) return st;
      if ((st = vf_json_raw(out, ":", err)) != VF_OK) return st;
    }
    if ((st = emit(r, r->tops[t], false, out, err)) != VF_OK) return st;
    for (int l = tn->first_leaf; l < tn->first_leaf + tn->nleaves; l++) {
      if (r->lc[l] < r->bound[l]->nlevels && cur_rep(r, l) != 0)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: column %s: row %" PRId64
                            " leaves entries behind (repetition level %d): levels "
                            "are inconsistent with the schema",
                            pqt_name(r->f), r->s->leaves[l].path, file_row(r), cur_rep(r, l));
    }
  }
  r->row++;
  return VF_OK;
}

/*! pqt_rows_next() : see format.h. */
vf_status pqt_rows_next(pqt_rows *r, vf_buf *out, vf_error *err) {
  return one_row(r, out, err);
}

/*! pqt_rows_skip() : see format.h. */
vf_status pqt_rows_skip(pqt_rows *r, int64_t n, vf_error *err) {
  for (int64_t i = 0; i < n; i++) {
    vf_status st = one_row(r, NULL, err);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

void pqt_rows_free(pqt_rows *r) {
  if (!r) return;
  free(r->tops);
  free(r->bound);
  free(r->lc);
  free(r->vc);
  vf_buf_free(&r->tmp);
  free(r->vrole);
  free(r->vmeta);
  free(r->vval);
  free(r->vtyped);
  free(r);
}
