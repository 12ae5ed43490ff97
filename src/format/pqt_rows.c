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
 * dates "YYYY-MM-DD", decimals exact, unsigned integers unsigned, float16 as float.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

struct pqt_rows {
  const pqt_file *f;
  const pqt_schema *s;
  int *tops;
  int ntops;
  const pqt_leaf_data **bound; /* by leaf index */
  int64_t *lc;                 /* level cursor by leaf */
  int64_t *vc;                 /* value cursor by leaf */
  int64_t nrows, row;
  vf_buf tmp; /* map key rendering */
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

/* Big-endian two's complement integer bytes -> decimal text with `scale` fraction digits. */
static vf_status render_decimal_bytes(vf_buf *out, const uint8_t *p, size_t len, int32_t scale,
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
  return render_decimal_bytes(out, be, 8, scale, err);
}

static vf_status raw_text(vf_buf *out, const char *s, int n, vf_error *err) {
  if (n < 0) return vf_error_set(err, VF_EINTERNAL, "formatting failed");
  return vf_json_string(out, s, (size_t)n, err);
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

/* Render value `i` of a leaf. */
static vf_status render_value(const pqt_rows *r, const pqt_leaf *lf, const pqt_leaf_data *d,
                              int64_t i, vf_buf *out, vf_error *err) {
  const pqt_schema_elem *e = &pqt_meta(r->f)->schema[r->s->nodes[lf->node].elem];
  const uint8_t *base = d->values.data;
  int32_t scale = 0;
  char b[96];
  if (lf->type == PQT_BYTE_ARRAY) {
    int64_t a = d->offsets[i], z = d->offsets[i + 1];
    if (a < 0 || z < a || (uint64_t)z > d->values.len)
      return vf_error_set(err, VF_ECORRUPT, "column %s: value %" PRId64 " has invalid offsets",
                          lf->path, i);
    if (is_decimal(e, &scale))
      return render_decimal_bytes(out, base + a, (size_t)(z - a), scale, err);
    return vf_json_string(out, (const char *)base + a, (size_t)(z - a), err);
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
      return raw_text(out, b, fmt_date(b, sizeof b, v), err);
    if ((e->logical == PQT_LT_TIME) || e->converted_type == PQT_CT_TIME_MILLIS)
      return raw_text(out, b, fmt_tod(b, sizeof b, v < 0 ? 0 : v, 1000, 3), err);
    if (is_unsigned(e)) return vf_json_u64(out, (uint32_t)v, err);
    return vf_json_i64(out, v, err);
  }
  case PQT_INT64: {
    int64_t v;
    memcpy(&v, p, 8);
    if (is_decimal(e, &scale)) return render_decimal_i64(out, v, scale, err);
    int unit = -1;
    bool utc = false;
    if (e->logical == PQT_LT_TIMESTAMP) {
      unit = (int)e->lt_unit;
      utc = e->lt_utc;
    } else if (e->converted_type == PQT_CT_TIMESTAMP_MILLIS) {
      unit = PQT_MILLIS;
    } else if (e->converted_type == PQT_CT_TIMESTAMP_MICROS) {
      unit = PQT_MICROS;
    }
    static const int64_t per_s[3] = {1000, 1000000, 1000000000};
    static const int digits[3] = {3, 6, 9};
    if (unit >= 0 && unit <= 2)
      return raw_text(out, b, fmt_timestamp(b, sizeof b, v, per_s[unit], digits[unit], utc), err);
    if (e->logical == PQT_LT_TIME || e->converted_type == PQT_CT_TIME_MICROS) {
      int u = e->logical == PQT_LT_TIME ? (int)e->lt_unit : PQT_MICROS;
      if (u < 0 || u > 2) u = PQT_MICROS;
      return raw_text(out, b, fmt_tod(b, sizeof b, v < 0 ? 0 : v, per_s[u], digits[u]), err);
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
    return raw_text(out, b, fmt_timestamp(b, sizeof b, micros, 1000000, 6, false), err);
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
    if (is_decimal(e, &scale)) return render_decimal_bytes(out, p, w, scale, err);
    if (e->logical == PQT_LT_UUID && w == 16) {
      int n = 0;
      for (int k = 0; k < 16; k++) {
        if (k == 4 || k == 6 || k == 8 || k == 10) b[n++] = '-';
        n += snprintf(b + n, sizeof b - (size_t)n, "%02x", p[k]);
      }
      return raw_text(out, b, n, err);
    }
    return vf_json_string(out, (const char *)p, w, err);
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
                      pqt_name(r->f), r->s->leaves[leaf].path, r->row, r->bound[leaf]->nlevels);
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
            pqt_name(r->f), r->s->leaves[l].path, r->row, cur_def(r, l), n->name ? n->name : "?");
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
          if (st == VF_OK) {
            const char *ks = (const char *)r->tmp.data;
            size_t kl = r->tmp.len;
            if (kl >= 2 && ks[0] == '"') {
              st = vf_buf_append(out, ks, kl, err);
            } else {
              st = vf_json_string(out, ks ? ks : "", kl, err);
            }
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
                          pqt_name(r->f), r->s->leaves[fl].path, r->row, rep, rn->rep_level);
    break;
  }
  if (out && (st = vf_json_raw(out, n->kind == PQT_NODE_MAP ? "}" : "]", err)) != VF_OK) return st;
  return VF_OK;
}

/* Render node `ni`.  `occurrence`: the node is one occurrence of a repeated node (a list
 * element in 2-level form or a bare repeated field), rendered as a non-repeated node. */
static vf_status emit(pqt_rows *r, int ni, bool occurrence, vf_buf *out, vf_error *err) {
  const pqt_node *n = &r->s->nodes[ni];
  vf_status st;
  if (n->nleaves <= 0) return out ? vf_json_raw(out, "null", err) : VF_OK;
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
                            pqt_name(r->f), lf->path, r->row);
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
  if ((n->kind == PQT_NODE_LIST && n->repeated >= 0 && n->repeated != ni) ||
      (n->kind == PQT_NODE_MAP && n->repeated >= 0))
    return emit_list(r, n, out, err);
  /* struct (or the occurrence of a repeated group) */
  if (out && (st = vf_json_raw(out, "{", err)) != VF_OK) return st;
  for (int c = 0; c < n->nchildren; c++) {
    const pqt_node *cn = &r->s->nodes[n->children[c]];
    if (out) {
      if (c && (st = vf_json_raw(out, ",", err)) != VF_OK) return st;
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
  *out = r;
  return VF_OK;
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
  return VF_OK;
}

static vf_status one_row(pqt_rows *r, vf_buf *out, vf_error *err) {
  if (r->row >= r->nrows)
    return vf_error_set(err, VF_EUSAGE, "%s: no row %" PRId64 " (bound %" PRId64 " rows)",
                        pqt_name(r->f), r->row, r->nrows);
  vf_status st;
  for (int t = 0; t < r->ntops; t++) {
    const pqt_node *tn = &r->s->nodes[r->tops[t]];
    for (int l = tn->first_leaf; l < tn->first_leaf + tn->nleaves; l++) {
      if (r->lc[l] >= r->bound[l]->nlevels) return levels_exhausted(r, l, err);
      if (cur_rep(r, l) != 0)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: column %s: row %" PRId64 " starts with repetition level %d",
                            pqt_name(r->f), r->s->leaves[l].path, r->row, cur_rep(r, l));
    }
    if (out) {
      if (t && (st = vf_json_raw(out, ",", err)) != VF_OK) return st;
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
                            pqt_name(r->f), r->s->leaves[l].path, r->row, cur_rep(r, l));
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
  free(r);
}
