/*
 * Payload columns as Arrow arrays: the decoded leaves of one parquet row group (levels + packed
 * values, include/vforge/format.h) assembled into Arrow's layouts, for the record-batch stream
 * (arrow_export.c).
 *
 * Why from the levels and not from rendered rows: the payload must reach pyarrow / polars / DuckDB
 * with the type the parquet schema gives it (int8 stays int8, a timestamp stays a timestamp, a
 * list of structs stays one), which the JSON the load path renders has lost.
 *
 * Types follow the parquet-format LogicalTypes document and what pyarrow reads the same file as:
 * INTEGER(bits, signed) / INT_8..UINT_64 -> int8..uint64; DATE -> date32; TIME -> time32[ms] /
 * time64[us|ns]; TIMESTAMP -> timestamp[unit] (tz "UTC" when adjusted to UTC); INT96 ->
 * timestamp[ns] (Julian day + nanoseconds, as Impala/Spark write it); DECIMAL -> decimal128
 * (decimal256 above 38 digits) from INT32 / INT64 / big-endian bytes; STRING / ENUM / JSON ->
 * utf8, other BYTE_ARRAY -> binary; FLOAT16 -> float16; other FIXED_LEN_BYTE_ARRAY ->
 * fixed_size_binary; LIST (3-level, 2-level and bare repeated fields) -> list; MAP -> map;
 * groups -> struct.  OPTIONAL nodes are nullable fields.
 *
 * Assembly (parquet-format "Nested Encoding", the Dremel paper's record assembly run per node):
 * a node's slots are the entries of its first leaf whose repetition level is at most the node's
 * repetition depth R (a new instance at this depth) and whose definition level reaches A, the
 * definition level of its nearest repeated ancestor (else the entry is an empty or null list
 * above it); a slot is valid when its definition level reaches the node's own.  A list's
 * elements are the entries that reach its repeated node (repetition R+1 continues it).  Each
 * child of a struct is assembled from its own first leaf and must yield the struct's slot count.
 * Rows outside the batch (keep[row] == 0) are left out by filtering the entries first, keeping
 * each entry's index into the packed values.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_internal.h"

/* ------------------------------------------------------------ primitive types */

typedef enum pkind {
  PK_BOOL = 0, /* one byte 0/1 -> bitmap */
  PK_FIXED,    /* the leaf's bytes as they are (width bytes) */
  PK_NARROW,   /* INT32 -> int8 / int16 */
  PK_INT96,    /* Julian day + nanoseconds -> int64 ns since the epoch */
  PK_DECIMAL,  /* INT32 / INT64 / big-endian bytes -> little-endian 128 or 256 bit */
  PK_BYTES     /* BYTE_ARRAY -> int32 offsets + data */
} pkind;

typedef struct prim_info {
  pkind kind;
  int width; /* output bytes per value (all but PK_BOOL and PK_BYTES) */
  char format[32];
} prim_info;

static void set_fmt(prim_info *pi, pkind k, int width, const char *fmt) {
  pi->kind = k;
  pi->width = width;
  snprintf(pi->format, sizeof pi->format, "%s", fmt);
}

static void prim_classify(const pqt_file *f, int leaf, prim_info *pi) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_leaf *lf = &sc->leaves[leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[sc->nodes[lf->node].elem];
  int ct = e->converted_type;
  pqt_logical_kind lt = e->logical;
  memset(pi, 0, sizeof *pi);
  int prec = lt == PQT_LT_DECIMAL ? e->lt_precision : e->precision;
  int scale = lt == PQT_LT_DECIMAL ? e->lt_scale : e->scale;
  if ((lt == PQT_LT_DECIMAL || ct == PQT_CT_DECIMAL) && prec > 0 && prec <= 76 && scale >= 0 &&
      lf->type != PQT_BOOLEAN && lf->type != PQT_FLOAT && lf->type != PQT_DOUBLE &&
      lf->type != PQT_INT96) {
    pi->kind = PK_DECIMAL;
    pi->width = prec <= 38 ? 16 : 32;
    snprintf(pi->format, sizeof pi->format, "d:%d,%d%s", prec, scale, prec <= 38 ? "" : ",256");
    return;
  }
  switch (lf->type) {
  case PQT_BOOLEAN: set_fmt(pi, PK_BOOL, 0, "b"); return;
  case PQT_INT32: {
    int bits = 32;
    bool sign = true;
    if (lt == PQT_LT_INTEGER) {
      bits = e->lt_bit_width;
      sign = e->lt_signed;
    } else if (ct >= PQT_CT_UINT_8 && ct <= PQT_CT_UINT_64) {
      bits = 8 << (ct - PQT_CT_UINT_8);
      sign = false;
    } else if (ct >= PQT_CT_INT_8 && ct <= PQT_CT_INT_64) {
      bits = 8 << (ct - PQT_CT_INT_8);
    }
    if (lt == PQT_LT_DATE || ct == PQT_CT_DATE) set_fmt(pi, PK_FIXED, 4, "tdD");
    else if ((lt == PQT_LT_TIME && e->lt_unit == PQT_MILLIS) || ct == PQT_CT_TIME_MILLIS)
      set_fmt(pi, PK_FIXED, 4, "ttm");
    else if (bits == 8) set_fmt(pi, PK_NARROW, 1, sign ? "c" : "C");
    else if (bits == 16) set_fmt(pi, PK_NARROW, 2, sign ? "s" : "S");
    else set_fmt(pi, PK_FIXED, 4, sign ? "i" : "I");
    return;
  }
  case PQT_INT64: {
    static const char units[3] = {'m', 'u', 'n'};
    int u = e->lt_unit >= PQT_MILLIS && e->lt_unit <= PQT_NANOS ? (int)e->lt_unit : 1;
    char fmt[32];
    if (lt == PQT_LT_TIMESTAMP) {
      snprintf(fmt, sizeof fmt, "ts%c:%s", units[u], e->lt_utc ? "UTC" : "");
      set_fmt(pi, PK_FIXED, 8, fmt);
    } else if (ct == PQT_CT_TIMESTAMP_MILLIS || ct == PQT_CT_TIMESTAMP_MICROS) {
      set_fmt(pi, PK_FIXED, 8, ct == PQT_CT_TIMESTAMP_MILLIS ? "tsm:UTC" : "tsu:UTC");
    } else if (lt == PQT_LT_TIME || ct == PQT_CT_TIME_MICROS) {
      set_fmt(pi, PK_FIXED, 8, lt == PQT_LT_TIME && e->lt_unit == PQT_NANOS ? "ttn" : "ttu");
    } else {
      bool sign = lt == PQT_LT_INTEGER ? e->lt_signed : !(ct >= PQT_CT_UINT_8 && ct <= PQT_CT_UINT_64);
      set_fmt(pi, PK_FIXED, 8, sign ? "l" : "L");
    }
    return;
  }
  case PQT_INT96: set_fmt(pi, PK_INT96, 8, "tsn:"); return;
  case PQT_FLOAT: set_fmt(pi, PK_FIXED, 4, "f"); return;
  case PQT_DOUBLE: set_fmt(pi, PK_FIXED, 8, "g"); return;
  case PQT_BYTE_ARRAY: {
    bool text = lt == PQT_LT_STRING || lt == PQT_LT_ENUM || lt == PQT_LT_JSON ||
                ct == PQT_CT_UTF8 || ct == PQT_CT_ENUM || ct == PQT_CT_JSON;
    set_fmt(pi, PK_BYTES, 0, text ? "u" : "z");
    return;
  }
  case PQT_FIXED_LEN_BYTE_ARRAY:
  default:
    if (lt == PQT_LT_FLOAT16 && lf->type_length == 2) {
      set_fmt(pi, PK_FIXED, 2, "e");
    } else {
      char fmt[32];
      snprintf(fmt, sizeof fmt, "w:%d", (int)lf->type_length);
      set_fmt(pi, PK_FIXED, (int)lf->type_length, fmt);
    }
    return;
  }
}

/* ------------------------------------------------------------------- types */

static vf_status unsupported(const pqt_file *f, const pqt_node *n, const char *what, vf_error *err) {
  return vf_error_set(err, VF_EUNSUPPORTED, "%s: column '%s': %s", pqt_name(f),
                      n->name ? n->name : "?", what);
}

static vf_status node_type(const pqt_file *f, int node, bool as_elem, const char *name,
                           ax_type *t, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *n = &sc->nodes[node];
  int64_t flags = !as_elem && n->repetition == PQT_OPTIONAL ? ARROW_FLAG_NULLABLE : 0;
  vf_status st;
  if (!as_elem && (n->kind == PQT_NODE_LIST || n->kind == PQT_NODE_MAP)) {
    bool self = n->repeated == node;
    if (n->repeated < 0 || (n->kind == PQT_NODE_LIST && n->element < 0) ||
        (n->kind == PQT_NODE_MAP && (n->key < 0 || n->value < 0 || self)))
      return unsupported(f, n, "a LIST or MAP group of an unknown shape", err);
    if (self) flags = 0; /* a bare repeated field: a list that is always there */
    if (n->kind == PQT_NODE_LIST) {
      if ((st = ax_type_set(t, "+l", name, flags, err)) != VF_OK ||
          (st = ax_type_children(t, 1, err)) != VF_OK)
        return st;
      int e = n->element;
      return node_type(f, e, e == node, self ? "element" : sc->nodes[e].name, &t->children[0], err);
    }
    if ((st = ax_type_set(t, "+m", name, flags, err)) != VF_OK ||
        (st = ax_type_children(t, 1, err)) != VF_OK)
      return st;
    ax_type *kv = &t->children[0];
    if ((st = ax_type_set(kv, "+s", "entries", 0, err)) != VF_OK ||
        (st = ax_type_children(kv, 2, err)) != VF_OK ||
        (st = node_type(f, n->key, false, "key", &kv->children[0], err)) != VF_OK ||
        (st = node_type(f, n->value, false, "value", &kv->children[1], err)) != VF_OK)
      return st;
    kv->children[0].flags = 0; /* map keys are never null */
    return VF_OK;
  }
  if (n->leaf >= 0) {
    prim_info pi;
    prim_classify(f, n->leaf, &pi);
    if ((st = ax_type_set(t, pi.format, name, flags, err)) != VF_OK) return st;
    /* JSON and UUID columns are Arrow's canonical extension types over utf8 / fixed(16) */
    const pqt_schema_elem *e = &pqt_meta(f)->schema[n->elem];
    const char *ext = NULL;
    if (pi.kind == PK_BYTES && (e->logical == PQT_LT_JSON || e->converted_type == PQT_CT_JSON))
      ext = "arrow.json";
    else if (e->logical == PQT_LT_UUID && pi.width == 16 && pi.kind == PK_FIXED)
      ext = "arrow.uuid";
    if (ext) {
      const char *kv[4] = {"ARROW:extension:name", ext, "ARROW:extension:metadata", ""};
      st = ax_type_metadata(t, kv, 2, err);
    }
    return st;
  }
  if (n->nleaves <= 0 || n->nchildren <= 0) return unsupported(f, n, "a group without columns", err);
  if ((st = ax_type_set(t, "+s", name, flags, err)) != VF_OK ||
      (st = ax_type_children(t, n->nchildren, err)) != VF_OK)
    return st;
  for (int i = 0; i < n->nchildren; i++) {
    int ch = n->children[i];
    if ((st = node_type(f, ch, false, sc->nodes[ch].name, &t->children[i], err)) != VF_OK) return st;
  }
  return VF_OK;
}

/* axp_type(): see arrow_internal.h. */
vf_status axp_type(const pqt_file *f, int top, const char *name, ax_type *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  return node_type(f, top, false, name, out, err);
}

/* ------------------------------------------------------------------ arrays */

/* One leaf's entries that belong to the batch's rows: levels and value index (-1: no value). */
typedef struct kept_leaf {
  int leaf;
  int64_t n;
  uint8_t *d, *r;
  int64_t *v;
} kept_leaf;

typedef struct conv_ctx {
  const pqt_file *f;
  const pqt_schema *sc;
  const pqt_leaf_data *data;
  const int *leaf_ids;
  int nleaves;
  int64_t rows;
  const uint8_t *keep;
  kept_leaf *kept; /* computed on first use, one per leaf under the column */
  int nkept;
  ax_holder *h;
  vf_error *err;
  const char *column;
} conv_ctx;

static vf_status corrupt(conv_ctx *c, const char *what) {
  return vf_error_set(c->err, VF_ECORRUPT, "%s: column '%s': %s", pqt_name(c->f), c->column, what);
}

static const pqt_leaf_data *leaf_data(const conv_ctx *c, int leaf) {
  for (int i = 0; i < c->nleaves; i++)
    if (c->leaf_ids[i] == leaf) return &c->data[i];
  return NULL;
}

static vf_status kept_of(conv_ctx *c, int leaf, const kept_leaf **out) {
  for (int i = 0; i < c->nkept; i++)
    if (c->kept[i].leaf == leaf) {
      *out = &c->kept[i];
      return VF_OK;
    }
  const pqt_leaf_data *d = leaf_data(c, leaf);
  if (!d) return vf_error_set(c->err, VF_EINTERNAL, "%s: column '%s': leaf %d not decoded",
                              pqt_name(c->f), c->column, leaf);
  kept_leaf *k = &c->kept[c->nkept];
  memset(k, 0, sizeof *k);
  k->leaf = leaf;
  size_t nl = d->nlevels > 0 ? (size_t)d->nlevels : 0;
  k->d = vf_malloc(nl + 1);
  k->r = vf_malloc(nl + 1);
  k->v = vf_mallocarray(nl + 1, sizeof *k->v);
  c->nkept++;
  if (!k->d || !k->r || !k->v) return vf_error_set(c->err, VF_ENOMEM, "out of memory for %zu levels", nl);
  uint8_t maxd = (uint8_t)c->sc->leaves[leaf].max_def;
  int64_t row = -1, vi = 0, n = 0;
  for (size_t i = 0; i < nl; i++) {
    uint8_t r = d->rep ? d->rep[i] : 0, df = d->def ? d->def[i] : maxd;
    if (r == 0) row++;
    if (row < 0) return corrupt(c, "the first level entry continues a row");
    bool val = df == maxd;
    if (row < c->rows && (!c->keep || c->keep[row])) {
      k->d[n] = df;
      k->r[n] = r;
      k->v[n] = val ? vi : -1;
      n++;
    }
    vi += val;
  }
  if (row + 1 != c->rows || vi > d->nvalues) return corrupt(c, "levels and values disagree with the row count");
  k->n = n;
  *out = k;
  return VF_OK;
}

/* definition level of the nearest repeated strict ancestor of `node` (0 at the top) */
static int16_t anc_rep_def(const pqt_schema *sc, int node) {
  for (int p = sc->nodes[node].parent; p > 0; p = sc->nodes[p].parent)
    if (sc->nodes[p].repetition == PQT_REPEATED) return sc->nodes[p].def_level;
  return 0;
}

static void bit_set(uint8_t *bm, int64_t i) {
  bm[i >> 3] = (uint8_t)(bm[i >> 3] | (1u << (i & 7)));
}

/* The validity bitmap of n slots (all bits set), or NULL on failure. */
static uint8_t *valid_bitmap(conv_ctx *c, int64_t n) {
  size_t bytes = (size_t)(n + 7) / 8 + 1;
  uint8_t *bm = ax_alloc(c->h, bytes);
  if (bm) memset(bm, 0xff, bytes);
  return bm;
}

static vf_status oom(conv_ctx *c) {
  return vf_error_set(c->err, VF_ENOMEM, "%s: column '%s': out of memory", pqt_name(c->f), c->column);
}

static vf_status conv(conv_ctx *c, int node, bool as_elem, struct ArrowArray *out);

/* Slots of `node` over its first leaf's kept entries: count and null count. */
static void count_slots(const kept_leaf *k, int16_t A, int16_t R, int16_t Dv, int64_t *n,
                        int64_t *nulls) {
  int64_t s = 0, z = 0;
  for (int64_t e = 0; e < k->n; e++)
    if (k->r[e] <= R && k->d[e] >= A) {
      s++;
      z += k->d[e] < Dv;
    }
  *n = s;
  *nulls = z;
}

static void put_decimal(uint8_t *dst, int w, const uint8_t *be, size_t len, int64_t iv, bool from_int) {
  if (from_int) {
    memcpy(dst, &iv, 8);
    memset(dst + 8, iv < 0 ? 0xff : 0, (size_t)w - 8);
    return;
  }
  uint8_t fill = len && (be[0] & 0x80) ? 0xff : 0;
  memset(dst, fill, (size_t)w);
  for (size_t i = 0; i < len; i++) dst[i] = be[len - 1 - i];
}

static vf_status conv_prim(conv_ctx *c, int node, int16_t A, int16_t R, int16_t Dv,
                           struct ArrowArray *out) {
  const pqt_node *nd = &c->sc->nodes[node];
  const kept_leaf *k = NULL;
  vf_status st = kept_of(c, nd->leaf, &k);
  if (st != VF_OK) return st;
  const pqt_leaf_data *d = leaf_data(c, nd->leaf);
  prim_info pi;
  prim_classify(c->f, nd->leaf, &pi);
  int64_t n = 0, nulls = 0;
  count_slots(k, A, R, Dv, &n, &nulls);
  bool bytes = pi.kind == PK_BYTES;
  if (!ax_array_init(c->h, out, n, bytes ? 3 : 2, 0)) return oom(c);
  out->null_count = nulls;
  uint8_t *valid = nulls ? valid_bitmap(c, n) : NULL;
  if (nulls && !valid) return oom(c);
  out->buffers[0] = valid;
  /* expected leaf widths */
  int lw = d->width;
  if ((pi.kind == PK_FIXED && lw != pi.width) || (pi.kind == PK_NARROW && lw != 4) ||
      (pi.kind == PK_INT96 && lw != 12) || (pi.kind == PK_BOOL && lw != 1) ||
      (bytes && (d->nvalues > 0 && !d->offsets)) ||
      (pi.kind == PK_DECIMAL && d->type == PQT_INT32 && lw != 4) ||
      (pi.kind == PK_DECIMAL && d->type == PQT_INT64 && lw != 8))
    return vf_error_set(c->err, VF_EINTERNAL, "%s: column '%s': leaf data does not match its type",
                        pqt_name(c->f), c->column);
  if (bytes) {
    uint64_t total = 0;
    for (int64_t e = 0; e < k->n; e++)
      if (k->r[e] <= R && k->d[e] >= A && k->v[e] >= 0)
        total += (uint64_t)(d->offsets[k->v[e] + 1] - d->offsets[k->v[e]]);
    if (total > INT32_MAX)
      return vf_error_set(c->err, VF_EUNSUPPORTED, "%s: column '%s': %" PRIu64 " bytes of strings in one row group "
                          "(Arrow utf8/binary offsets are 32-bit)", pqt_name(c->f), c->column, total);
    int32_t *offs = ax_alloc(c->h, sizeof(int32_t) * (size_t)(n + 1));
    uint8_t *dat = ax_alloc(c->h, (size_t)total + 1);
    if (!offs || !dat) return oom(c);
    int64_t s = 0;
    int32_t pos = 0;
    offs[0] = 0;
    for (int64_t e = 0; e < k->n; e++) {
      if (!(k->r[e] <= R && k->d[e] >= A)) continue;
      if (k->d[e] >= Dv && k->v[e] >= 0) {
        int64_t a = d->offsets[k->v[e]], b = d->offsets[k->v[e] + 1];
        memcpy(dat + pos, d->values.data + a, (size_t)(b - a));
        pos += (int32_t)(b - a);
      } else if (valid) {
        valid[s >> 3] = (uint8_t)(valid[s >> 3] & ~(1u << (s & 7)));
      }
      offs[++s] = pos;
    }
    out->buffers[1] = offs;
    out->buffers[2] = dat;
    return VF_OK;
  }
  size_t vbytes = pi.kind == PK_BOOL ? (size_t)(n + 7) / 8 + 1 : (size_t)n * (size_t)pi.width + 1;
  uint8_t *vals = ax_calloc(c->h, vbytes);
  if (!vals) return oom(c);
  out->buffers[1] = vals;
  const uint8_t *src = d->values.data;
  int64_t s = 0;
  for (int64_t e = 0; e < k->n; e++) {
    if (!(k->r[e] <= R && k->d[e] >= A)) continue;
    int64_t vi = k->v[e];
    if (k->d[e] < Dv || vi < 0) {
      if (valid) valid[s >> 3] = (uint8_t)(valid[s >> 3] & ~(1u << (s & 7)));
      s++;
      continue;
    }
    uint8_t *dst = vals + (size_t)s * (size_t)pi.width;
    switch (pi.kind) {
    case PK_BOOL:
      if (src[vi]) bit_set(vals, s);
      break;
    case PK_FIXED: memcpy(dst, src + (size_t)vi * (size_t)lw, (size_t)lw); break;
    case PK_NARROW: {
      int32_t x;
      memcpy(&x, src + (size_t)vi * 4, 4);
      if (pi.width == 1) dst[0] = (uint8_t)x;
      else {
        uint16_t y = (uint16_t)x;
        memcpy(dst, &y, 2);
      }
      break;
    }
    case PK_INT96: {
      int64_t nanos;
      uint32_t jd;
      memcpy(&nanos, src + (size_t)vi * 12, 8);
      memcpy(&jd, src + (size_t)vi * 12 + 8, 4);
      int64_t ns = ((int64_t)jd - 2440588) * 86400LL * 1000000000LL + nanos;
      memcpy(dst, &ns, 8);
      break;
    }
    case PK_DECIMAL: {
      if (d->type == PQT_INT32) {
        int32_t x;
        memcpy(&x, src + (size_t)vi * 4, 4);
        put_decimal(dst, pi.width, NULL, 0, x, true);
      } else if (d->type == PQT_INT64) {
        int64_t x;
        memcpy(&x, src + (size_t)vi * 8, 8);
        put_decimal(dst, pi.width, NULL, 0, x, true);
      } else {
        const uint8_t *be;
        size_t len;
        if (d->type == PQT_BYTE_ARRAY) {
          be = src + d->offsets[vi];
          len = (size_t)(d->offsets[vi + 1] - d->offsets[vi]);
        } else {
          be = src + (size_t)vi * (size_t)lw;
          len = (size_t)lw;
        }
        if (len > (size_t)pi.width) return corrupt(c, "a decimal wider than its precision allows");
        put_decimal(dst, pi.width, be, len, 0, false);
      }
      break;
    }
    default: break;
    }
    s++;
  }
  return VF_OK;
}

static vf_status conv_struct(conv_ctx *c, int node, int16_t A, int16_t R, int16_t Dv,
                             const int *kids, int nkids, struct ArrowArray *out) {
  const pqt_node *nd = &c->sc->nodes[node];
  if (nd->nleaves <= 0) return corrupt(c, "a group without columns");
  const kept_leaf *k = NULL;
  vf_status st = kept_of(c, nd->first_leaf, &k);
  if (st != VF_OK) return st;
  int64_t n = 0, nulls = 0;
  count_slots(k, A, R, Dv, &n, &nulls);
  if (!ax_array_init(c->h, out, n, 1, nkids)) return oom(c);
  out->null_count = nulls;
  if (nulls) {
    uint8_t *valid = valid_bitmap(c, n);
    if (!valid) return oom(c);
    int64_t s = 0;
    for (int64_t e = 0; e < k->n; e++)
      if (k->r[e] <= R && k->d[e] >= A) {
        if (k->d[e] < Dv) valid[s >> 3] = (uint8_t)(valid[s >> 3] & ~(1u << (s & 7)));
        s++;
      }
    out->buffers[0] = valid;
  }
  for (int i = 0; i < nkids; i++) {
    struct ArrowArray *ch = ax_calloc(c->h, sizeof *ch);
    if (!ch) return oom(c);
    out->children[i] = ch;
    if ((st = conv(c, kids[i], false, ch)) != VF_OK) return st;
    if (ch->length != n) return corrupt(c, "a struct field with a different number of values");
  }
  return VF_OK;
}

static vf_status conv_list(conv_ctx *c, int node, struct ArrowArray *out) {
  const pqt_schema *sc = c->sc;
  const pqt_node *nd = &sc->nodes[node];
  bool self = nd->repeated == node;
  int rg = nd->repeated;
  if (rg < 0 || (nd->kind == PQT_NODE_LIST && nd->element < 0) ||
      (nd->kind == PQT_NODE_MAP && (nd->key < 0 || nd->value < 0 || self)) || nd->nleaves <= 0)
    return vf_error_set(c->err, VF_EUNSUPPORTED, "%s: column '%s': a LIST or MAP group of an unknown shape",
                        pqt_name(c->f), c->column);
  int16_t R = (int16_t)(self ? nd->rep_level - 1 : nd->rep_level);
  int16_t A = anc_rep_def(sc, node);
  int16_t Dv = self ? sc->nodes[nd->parent].def_level : nd->def_level;
  int16_t Del = sc->nodes[rg].def_level, Rel = sc->nodes[rg].rep_level;
  const kept_leaf *k = NULL;
  vf_status st = kept_of(c, nd->first_leaf, &k);
  if (st != VF_OK) return st;
  int64_t n = 0, nulls = 0;
  count_slots(k, A, R, Dv, &n, &nulls);
  if (!ax_array_init(c->h, out, n, 2, 1)) return oom(c);
  out->null_count = nulls;
  uint8_t *valid = nulls ? valid_bitmap(c, n) : NULL;
  int32_t *offs = ax_alloc(c->h, sizeof(int32_t) * (size_t)(n + 1));
  if ((nulls && !valid) || !offs) return oom(c);
  out->buffers[0] = valid;
  out->buffers[1] = offs;
  int64_t s = -1, cnt = 0;
  bool open = false;
  for (int64_t e = 0; e < k->n; e++) {
    uint8_t r = k->r[e], d = k->d[e];
    if (r <= R) {
      open = false;
      if (d < A) continue;
      s++;
      offs[s] = (int32_t)cnt;
      if (d < Dv) {
        valid[s >> 3] = (uint8_t)(valid[s >> 3] & ~(1u << (s & 7)));
      } else if (d >= Del) {
        cnt++;
        open = true;
      }
    } else if (r == Rel) {
      if (!open) return corrupt(c, "a list element continues an empty or null list");
      cnt++;
    }
    if (cnt > INT32_MAX) return corrupt(c, "more than 2^31 list elements in one row group");
  }
  offs[n] = (int32_t)cnt;
  struct ArrowArray *ch = ax_calloc(c->h, sizeof *ch);
  if (!ch) return oom(c);
  out->children[0] = ch;
  if (nd->kind == PQT_NODE_MAP) {
    int kids[2] = {nd->key, nd->value};
    st = conv_struct(c, rg, Del, Rel, Del, kids, 2, ch);
  } else {
    st = conv(c, nd->element, nd->element == node, ch);
  }
  if (st != VF_OK) return st;
  if (ch->length != cnt) return corrupt(c, "list offsets and elements disagree");
  return VF_OK;
}

static vf_status conv(conv_ctx *c, int node, bool as_elem, struct ArrowArray *out) {
  const pqt_node *nd = &c->sc->nodes[node];
  if (!as_elem && (nd->kind == PQT_NODE_LIST || nd->kind == PQT_NODE_MAP)) return conv_list(c, node, out);
  int16_t R = nd->rep_level;
  int16_t A = as_elem || nd->repetition == PQT_REPEATED ? nd->def_level : anc_rep_def(c->sc, node);
  int16_t Dv = nd->def_level;
  if (nd->leaf >= 0) return conv_prim(c, node, A, R, Dv, out);
  return conv_struct(c, node, A, R, Dv, nd->children, nd->nchildren, out);
}

/* axp_array(): see arrow_internal.h. */
vf_status axp_array(const pqt_file *f, int top, const pqt_leaf_data *data, const int *leaf_ids,
                    int nleaves, int64_t rows, const uint8_t *keep, ax_holder *h,
                    struct ArrowArray *out, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *nd = &sc->nodes[top];
  conv_ctx c = {.f = f, .sc = sc, .data = data, .leaf_ids = leaf_ids, .nleaves = nleaves,
                .rows = rows, .keep = keep, .h = h, .err = err,
                .column = nd->name ? nd->name : "?"};
  c.kept = vf_calloc((size_t)nd->nleaves + 1, sizeof *c.kept);
  if (!c.kept) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = conv(&c, top, false, out);
  for (int i = 0; i < c.nkept; i++) {
    free(c.kept[i].d);
    free(c.kept[i].r);
    free(c.kept[i].v);
  }
  free(c.kept);
  return st;
}
