/*
 * filter_eval.c — evaluating compiled filters over payloads: key paths, conditions, datetimes,
 * the flt_docs row store and its keyword / integer indexes.
 *
 * The semantics are Qdrant's (vforge/filter.h): a key path yields zero or more values (a path
 * through a[] visits every element, one that does not lead anywhere yields none); a field
 * condition holds when one value satisfies it (an array value when one of its elements does),
 * and a key without values satisfies only is_empty: true / is_null: false.  Each function below
 * is the counterpart of one rule of Qdrant's condition checker, so they read side by side.
 *
 * Indexes (flt_docs_select): the first time a filter's top-level must holds `match` of keywords
 * or integers on a key, every row's values at that key are collected into (value, row) pairs,
 * sorted; a lookup is then two binary searches, and only the rows found are evaluated with the
 * whole filter.  An index is dropped when rows are added.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "filter_internal.h"

/* ------------------------------------------------------------------ datetimes */

static bool digits(const char *s, size_t n, size_t at, size_t cnt, int *out) {
  if (at + cnt > n) return false;
  int v = 0;
  for (size_t i = 0; i < cnt; i++) {
    char ch = s[at + i];
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  *out = v;
  return true;
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
  static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : dm[m - 1];
}

/* flt_datetime_parse(): see filter.h.  YYYY-MM-DD [(T|t| )HH:MM[:SS[.fraction]]] [Z | z |
 * [ ](+|-)HH[[:]MM]] (Qdrant: RFC 3339, its naive forms and %#z offsets). */
bool flt_datetime_parse(const char *s, size_t n, int64_t *us) {
  int y, mo, d, h = 0, mi = 0, se = 0;
  if (!digits(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || !digits(s, n, 5, 2, &mo) || s[7] != '-' ||
      !digits(s, n, 8, 2, &d))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) return false;
  size_t i = 10;
  int64_t frac_us = 0, off_s = 0;
  if (i < n) {
    if (s[i] != 'T' && s[i] != 't' && s[i] != ' ') return false;
    i++;
    if (!digits(s, n, i, 2, &h) || i + 2 >= n || s[i + 2] != ':' || !digits(s, n, i + 3, 2, &mi)) return false;
    i += 5;
    if (i < n && s[i] == ':') {
      if (!digits(s, n, i + 1, 2, &se)) return false;
      i += 3;
      if (i < n && s[i] == '.') {
        i++;
        size_t f0 = i;
        int64_t scale = 100000;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
          if (scale) {
            frac_us += (s[i] - '0') * scale;
            scale /= 10;
          }
          i++;
        }
        if (i == f0) return false;
      }
    }
    if (h > 23 || mi > 59 || se > 60) return false;
    if (i < n) {
      if (s[i] == 'Z' || s[i] == 'z') {
        i++;
      } else {
        if (s[i] == ' ') i++;
        if (i >= n || (s[i] != '+' && s[i] != '-')) return false;
        int sign = s[i] == '-' ? -1 : 1, oh, om = 0;
        i++;
        if (!digits(s, n, i, 2, &oh)) return false;
        i += 2;
        if (i < n && s[i] == ':') i++;
        if (i < n) {
          if (!digits(s, n, i, 2, &om)) return false;
          i += 2;
        }
        if (oh > 23 || om > 59) return false;
        off_s = sign * (oh * 3600 + om * 60);
      }
    }
    if (i != n) return false;
  }
  int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off_s;
  *us = secs * 1000000 + frac_us;
  return true;
}

/* ------------------------------------------------------------------ key paths */

/* Visits every value at a key path (Qdrant's json_value_get): KEY steps into objects, INDEX and
 * WILD into arrays; anything else ends that branch.  `fn` returns true to stop. */
typedef struct fvisit fvisit;
struct fvisit {
  bool (*fn)(fvisit *v, uint32_t node);
  const fj_tape *t;
  size_t count; /* values reached */
  const fcond *c;
  const corpus_id *id;
  bool hit;
};

static bool walk(fvisit *v, const fpath *p, size_t item, uint32_t node) {
  if (item == p->n) {
    v->count++;
    return v->fn(v, node);
  }
  const fj_tape *t = v->t;
  const fp_item *it = &p->items[item];
  const fj_node *nd = &t->nodes[node];
  if (it->kind == FP_KEY) {
    if (nd->t != FJ_OBJ) return false;
    uint32_t m = fj_get(t, node, it->key, it->klen);
    return m ? walk(v, p, item + 1, m) : false;
  }
  if (nd->t != FJ_ARR) return false;
  uint32_t e = node + 1;
  for (uint32_t k = 0; k < nd->n; k++, e = t->nodes[e].end) {
    if (it->kind == FP_INDEX && k != it->index) continue;
    if (walk(v, p, item + 1, e)) return true;
    if (it->kind == FP_INDEX) break;
  }
  return false;
}

/* ------------------------------------------------------------------ values */

static bool fstr_eq(const fj_tape *t, const fj_node *v, const fstr *s) {
  return v->n == s->n && memcmp(fj_str(t, v), s->s, s->n) == 0;
}

static int fstr_cmp_node(const fj_tape *t, const fj_node *v, const fstr *s) {
  size_t m = v->n < s->n ? v->n : s->n;
  int r = memcmp(fj_str(t, v), s->s, m);
  return r ? r : (v->n < s->n ? -1 : v->n > s->n);
}

static bool in_strs(const fj_tape *t, const fj_node *v, const fstr *a, size_t n) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = fstr_cmp_node(t, v, &a[mid]);
    if (r == 0) return true;
    if (r < 0) hi = mid;
    else lo = mid + 1;
  }
  return false;
}

static bool in_ints(int64_t x, const int64_t *a, size_t n) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a[mid] == x) return true;
    if (x < a[mid]) hi = mid;
    else lo = mid + 1;
  }
  return false;
}

static bool contains(const char *hay, size_t hn, const char *needle, size_t nn) {
  if (nn == 0) return true;
  if (nn > hn) return false;
  return memmem(hay, hn, needle, nn) != NULL;
}

/* Qdrant's Match::check_match */
static bool match_one(const fcond *c, const fj_tape *t, const fj_node *v) {
  switch (c->mk) {
  case FM_STR: return v->t == FJ_STR && fstr_eq(t, v, &c->mstr);
  case FM_INT: return v->t == FJ_NUM && v->isint && v->i == c->mint;
  case FM_BOOL: return (v->t == FJ_TRUE && c->mbool) || (v->t == FJ_FALSE && !c->mbool);
  case FM_TEXT: return v->t == FJ_STR && contains(fj_str(t, v), v->n, c->mstr.s, c->mstr.n);
  case FM_PREFIX: return v->t == FJ_STR && v->n >= c->mstr.n && memcmp(fj_str(t, v), c->mstr.s, c->mstr.n) == 0;
  case FM_TEXT_ANY:
    if (v->t != FJ_STR) return false;
    for (size_t i = 0; i < c->nstrs; i++)
      if (contains(fj_str(t, v), v->n, c->strs[i].s, c->strs[i].n)) return true;
    return false;
  case FM_ANY:
    if (c->list_str) return v->t == FJ_STR && in_strs(t, v, c->strs, c->nstrs);
    return v->t == FJ_NUM && v->isint && in_ints(v->i, c->ints, c->nints);
  case FM_EXCEPT:
    if (v->t == FJ_NULL) return false;
    if (v->t == FJ_STR && c->list_str) return !in_strs(t, v, c->strs, c->nstrs);
    if (v->t == FJ_NUM && !c->list_str) return !v->isint || !in_ints(v->i, c->ints, c->nints);
    return true; /* another type than the list's: bool, object, array, ... */
  }
  return false;
}

static bool bounds_ok(const fbounds *b, double x) {
  return (!(b->has & 1) || x < b->lt) && (!(b->has & 2) || x > b->gt) &&
         (!(b->has & 4) || x <= b->lte) && (!(b->has & 8) || x >= b->gte);
}

static bool dt_ok(const fcond *c, int64_t x) {
  return (!(c->dthas & 1) || x < c->dt[0]) && (!(c->dthas & 2) || x > c->dt[1]) &&
         (!(c->dthas & 4) || x <= c->dt[2]) && (!(c->dthas & 8) || x >= c->dt[3]);
}

static bool vc_ok(const fcond *c, uint64_t n) {
  return (!(c->vchas & 1) || n < c->vc[0]) && (!(c->vchas & 2) || n > c->vc[1]) &&
         (!(c->vchas & 4) || n <= c->vc[2]) && (!(c->vchas & 8) || n >= c->vc[3]);
}

/* values_count: an array's elements, 0 for null, 1 otherwise (ValuesCount::check_count_from) */
static uint64_t count_of(const fj_node *v) {
  return v->t == FJ_NULL ? 0 : v->t == FJ_ARR ? v->n : 1;
}

static bool is_empty_b(const fj_tape *t, uint32_t i, bool want) {
  (void)t;
  const fj_node *v = &t->nodes[i];
  if (v->t == FJ_NULL) return want;
  if (v->t == FJ_ARR) return (v->n == 0) == want;
  return !want;
}

static bool is_null_b(const fj_tape *t, uint32_t i, bool want) {
  const fj_node *v = &t->nodes[i];
  if (v->t == FJ_NULL) return want;
  if (v->t == FJ_ARR) {
    bool any = false;
    uint32_t e = i + 1;
    for (uint32_t k = 0; k < v->n && !any; k++, e = t->nodes[e].end) any = t->nodes[e].t == FJ_NULL;
    return any == want;
  }
  return !want;
}

static bool geo_of(const fj_tape *t, uint32_t i, double *lon, double *lat) {
  if (t->nodes[i].t != FJ_OBJ) return false;
  uint32_t a = fj_get(t, i, "lon", 3), b = fj_get(t, i, "lat", 3);
  if (!a || !b || t->nodes[a].t != FJ_NUM || t->nodes[b].t != FJ_NUM) return false;
  *lon = t->nodes[a].d;
  *lat = t->nodes[b].d;
  return true;
}

/* haversine distance in metres on the mean Earth radius (the geo crate Qdrant uses) */
static double haversine_m(double lon1, double lat1, double lon2, double lat2) {
  const double r = 6371008.8, rad = M_PI / 180.0;
  double t1 = lat1 * rad, t2 = lat2 * rad, dt = (lat2 - lat1) * rad, dl = (lon2 - lon1) * rad;
  double a = sin(dt / 2) * sin(dt / 2) + cos(t1) * cos(t2) * sin(dl / 2) * sin(dl / 2);
  return r * 2.0 * asin(sqrt(a));
}

/* FieldCondition::check_match: any of the condition's parts */
static bool check_match(const fcond *c, const fj_tape *t, uint32_t i) {
  const fj_node *v = &t->nodes[i];
  if ((c->parts & FF_MATCH) && match_one(c, t, v)) return true;
  if ((c->parts & FF_RANGE) && v->t == FJ_NUM && bounds_ok(&c->range, v->d)) return true;
  if ((c->parts & FF_DTRANGE) && v->t == FJ_STR) {
    int64_t us;
    if (flt_datetime_parse(fj_str(t, v), v->n, &us) && dt_ok(c, us)) return true;
  }
  double lon, lat;
  if ((c->parts & (FF_GEO_BOX | FF_GEO_RADIUS)) && geo_of(t, i, &lon, &lat)) {
    if (c->parts & FF_GEO_BOX) {
      const double *b = c->box; /* top_left lon, lat; bottom_right lon, lat */
      bool lon_ok = b[0] > b[2] ? (lon > b[0] || lon < b[2]) : (b[0] < lon && lon < b[2]);
      if (lon_ok && b[3] < lat && lat < b[1]) return true;
    }
    if ((c->parts & FF_GEO_RADIUS) && haversine_m(c->circle[0], c->circle[1], lon, lat) < c->circle[2])
      return true;
  }
  if ((c->parts & FF_VCOUNT) && vc_ok(c, count_of(v))) return true;
  if ((c->parts & FF_IS_EMPTY) && is_empty_b(t, i, c->is_empty)) return true;
  if ((c->parts & FF_IS_NULL) && is_null_b(t, i, c->is_null)) return true;
  return false;
}

/* FieldCondition::check of one value at the key */
static bool check_value(const fcond *c, const fj_tape *t, uint32_t i) {
  const fj_node *v = &t->nodes[i];
  if (c->parts & FF_VCOUNT) return vc_ok(c, count_of(v));
  if (c->parts & FF_IS_EMPTY) return is_empty_b(t, i, c->is_empty);
  if (c->parts & FF_IS_NULL) return is_null_b(t, i, c->is_null);
  if (v->t != FJ_ARR) return check_match(c, t, i);
  uint32_t e = i + 1;
  for (uint32_t k = 0; k < v->n; k++, e = t->nodes[e].end)
    if (check_match(c, t, e)) return true;
  return false;
}

static bool visit_field(fvisit *v, uint32_t node) {
  if (check_value(v->c, v->t, node)) v->hit = true;
  return v->hit;
}

static bool visit_nonempty(fvisit *v, uint32_t node) {
  const fj_node *n = &v->t->nodes[node];
  if (n->t == FJ_NULL || (n->t == FJ_ARR && n->n == 0)) return false;
  v->hit = true; /* a value that is neither null nor [] */
  return true;
}

static bool visit_null(fvisit *v, uint32_t node) {
  v->hit = v->t->nodes[node].t == FJ_NULL;
  return v->hit;
}

static bool visit_nested(fvisit *v, uint32_t node) {
  v->hit = v->t->nodes[node].t == FJ_OBJ && flt_eval(v->c->sub, v->t, node, NULL);
  return v->hit;
}

static int id_cmp(const corpus_id *x, const corpus_id *y) {
  if (x->is_uuid != y->is_uuid) return x->is_uuid ? 1 : -1;
  if (!x->is_uuid) return x->num < y->num ? -1 : x->num > y->num;
  return strcmp(x->uuid, y->uuid);
}

static bool has_id(const fcond *c, const corpus_id *id) {
  if (!id) return false;
  size_t lo = 0, hi = c->nids;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = id_cmp(id, &c->ids[mid]);
    if (r == 0) return true;
    if (r < 0) hi = mid;
    else lo = mid + 1;
  }
  return false;
}

/* flt_eval(): see filter_internal.h (Qdrant's check_filter and check_payload) */
bool flt_eval(const fcond *c, const fj_tape *t, uint32_t obj, const corpus_id *id) {
  fvisit v = {.t = t, .c = c, .id = id};
  switch (c->kind) {
  case FC_FILTER: {
    if (c->has_should) {
      bool any = false;
      for (size_t i = 0; i < c->nshould && !any; i++) any = flt_eval(&c->should[i], t, obj, id);
      if (!any) return false;
    }
    if (c->has_min) {
      uint64_t hits = 0;
      for (size_t i = 0; i < c->nmin && hits < c->min_count; i++) hits += flt_eval(&c->min[i], t, obj, id);
      if (hits < c->min_count) return false;
    }
    for (size_t i = 0; i < c->nmust; i++)
      if (!flt_eval(&c->must[i], t, obj, id)) return false;
    for (size_t i = 0; i < c->nmust_not; i++)
      if (flt_eval(&c->must_not[i], t, obj, id)) return false;
    return true;
  }
  case FC_FIELD:
    v.fn = visit_field;
    walk(&v, &c->path, 0, obj);
    if (v.hit) return true;
    if (v.count) return false;
    /* no value at the key: FieldCondition::check_empty */
    if (c->parts & FF_IS_EMPTY) return c->is_empty;
    if (c->parts & FF_IS_NULL) return !c->is_null;
    return false;
  case FC_IS_EMPTY:
    v.fn = visit_nonempty;
    walk(&v, &c->path, 0, obj);
    return !v.hit;
  case FC_IS_NULL:
    v.fn = visit_null;
    walk(&v, &c->path, 0, obj);
    return v.hit;
  case FC_HAS_ID: return has_id(c, id);
  case FC_NESTED:
    v.fn = visit_nested;
    walk(&v, &c->path, 0, obj);
    return v.hit;
  }
  return false;
}

/* ------------------------------------------------------------------ docs */

typedef struct fidx_ent {
  uint32_t node; /* an FJ_STR or integer FJ_NUM value */
  uint32_t row;
} fidx_ent;

typedef struct fidx {
  char *key;       /* the path, serialised */
  size_t klen;
  fidx_ent *strs, *ints;
  size_t nstrs, nints;
} fidx;

struct flt_docs {
  fj_tape t;
  uint32_t *roots;
  size_t n, cap;
  fidx *idx;
  size_t nidx;
  bool idx_failed; /* an index could not be built: select evaluates every row */
};

static void idx_drop(flt_docs *d) {
  for (size_t i = 0; i < d->nidx; i++) {
    free(d->idx[i].key);
    free(d->idx[i].strs);
    free(d->idx[i].ints);
  }
  free(d->idx);
  d->idx = NULL;
  d->nidx = 0;
  d->idx_failed = false;
}

vf_status flt_docs_create(flt_docs **out, vf_error *err) {
  flt_docs *d = vf_calloc(1, sizeof *d);
  if (!d) return vf_error_set(err, VF_ENOMEM, "out of memory");
  fj_init(&d->t);
  *out = d;
  return VF_OK;
}

void flt_docs_free(flt_docs *d) {
  if (!d) return;
  idx_drop(d);
  fj_free(&d->t);
  free(d->roots);
  free(d);
}

void flt_docs_clear(flt_docs *d) {
  idx_drop(d);
  fj_clear(&d->t);
  d->n = 0;
}

size_t flt_docs_rows(const flt_docs *d) { return d->n; }

size_t flt_docs_bytes(const flt_docs *d) {
  return d->t.cap * sizeof(fj_node) + d->t.text.cap + d->cap * sizeof(uint32_t);
}

vf_status flt_docs_add(flt_docs *d, const char *text, const int64_t *offsets, size_t n,
                       const char *what, vf_error *err) {
  idx_drop(d);
  if (d->n + n > UINT32_MAX) return vf_error_set(err, VF_ENOMEM, "%s: more than 2^32 payloads", what);
  if (d->n + n > d->cap) {
    size_t ncap = d->cap ? d->cap : 1024;
    while (ncap < d->n + n) ncap *= 2;
    uint32_t *nr = vf_realloc(d->roots, ncap * sizeof *nr);
    if (!nr) return vf_error_set(err, VF_ENOMEM, "%s: out of memory for %zu payloads", what, ncap);
    d->roots = nr;
    d->cap = ncap;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t a = offsets[i], b = offsets[i + 1];
    if (a < 0 || b < a) return vf_error_set(err, VF_EINTERNAL, "%s: bad payload offsets at row %zu", what, i);
    uint32_t root;
    vf_status st = fj_parse(&d->t, text + a, (size_t)(b - a), true, what, &root, err);
    if (st != VF_OK) return vf_error_prefix(err, "row %zu: ", d->n);
    d->roots[d->n++] = root;
  }
  return VF_OK;
}

bool flt_match(const flt_filter *f, const flt_docs *d, size_t row, const corpus_id *id) {
  if (f->empty) return true;
  return flt_eval(&f->root, &d->t, d->roots[row], id);
}

vf_status flt_match_json(const flt_filter *f, const char *payload, size_t len,
                         const corpus_id *id, bool *out, vf_error *err) {
  fj_tape t;
  fj_init(&t);
  uint32_t root;
  vf_status st = VF_OK;
  VF_TRY(fj_parse(&t, payload, len, true, "payload", &root, err));
  *out = f->empty || flt_eval(&f->root, &t, root, id);
out:
  fj_free(&t);
  return st;
}

/* ------------------------------------------------------------------ indexes */

static char *path_key(const fpath *p, size_t *len) {
  vf_buf b;
  VF_BUF_INIT(&b, FLT_MAX_PATH_KEY);
  vf_error e;
  vf_status st = VF_OK;
  char *key = NULL;
  for (size_t i = 0; i < p->n; i++) {
    const fp_item *it = &p->items[i];
    if (it->kind == FP_KEY) VF_TRY(vf_buf_printf(&b, &e, "K%zu:%s", it->klen, it->key));
    else if (it->kind == FP_INDEX) VF_TRY(vf_buf_printf(&b, &e, "I%llu", (unsigned long long)it->index));
    else VF_TRY(vf_buf_printf(&b, &e, "W"));
  }
  key = (char *)vf_buf_take(&b, len);
out:
  vf_buf_free(&b);
  return key;
}

typedef struct icol {
  fvisit v;
  flt_docs *d;
  uint32_t row;
  fidx *x;
  size_t cs, ci; /* capacities */
  bool oom;
} icol;

static void icol_add(icol *c, uint32_t node) {
  const fj_node *n = &c->d->t.nodes[node];
  fidx_ent **arr;
  size_t *cnt, *cap;
  if (n->t == FJ_STR) {
    arr = &c->x->strs, cnt = &c->x->nstrs, cap = &c->cs;
  } else if (n->t == FJ_NUM && n->isint) {
    arr = &c->x->ints, cnt = &c->x->nints, cap = &c->ci;
  } else {
    return;
  }
  if (*cnt == *cap) {
    size_t nc = *cap ? *cap * 2 : 1024;
    fidx_ent *na = vf_realloc(*arr, nc * sizeof *na);
    if (!na) {
      c->oom = true;
      return;
    }
    *arr = na;
    *cap = nc;
  }
  (*arr)[(*cnt)++] = (fidx_ent){node, c->row};
}

/* the values a match condition sees: each value, and the elements of an array value */
static bool visit_index(fvisit *v, uint32_t node) {
  icol *c = (icol *)v;
  const fj_tape *t = v->t;
  const fj_node *n = &t->nodes[node];
  if (n->t != FJ_ARR) {
    icol_add(c, node);
    return c->oom;
  }
  uint32_t e = node + 1;
  for (uint32_t k = 0; k < n->n && !c->oom; k++, e = t->nodes[e].end) icol_add(c, e);
  return c->oom;
}

static int ent_cmp_str(const void *a, const void *b, void *user) {
  const fj_tape *t = user;
  const fidx_ent *x = a, *y = b;
  const fj_node *p = &t->nodes[x->node], *q = &t->nodes[y->node];
  size_t m = p->n < q->n ? p->n : q->n;
  int r = memcmp(fj_str(t, p), fj_str(t, q), m);
  if (r == 0) r = p->n < q->n ? -1 : p->n > q->n;
  return r ? r : (x->row < y->row ? -1 : x->row > y->row);
}

static int ent_cmp_int(const void *a, const void *b, void *user) {
  const fj_tape *t = user;
  const fidx_ent *x = a, *y = b;
  int64_t p = t->nodes[x->node].i, q = t->nodes[y->node].i;
  if (p != q) return p < q ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* the index of path p (built now when missing): its position in d->idx, SIZE_MAX without
 * memory (positions, not pointers: building another index moves d->idx) */
static size_t index_for(flt_docs *d, const fpath *p) {
  size_t kl = 0;
  char *key = path_key(p, &kl);
  if (!key) return SIZE_MAX;
  for (size_t i = 0; i < d->nidx; i++)
    if (d->idx[i].klen == kl && memcmp(d->idx[i].key, key, kl) == 0) {
      free(key);
      return i;
    }
  fidx *ni = vf_realloc(d->idx, (d->nidx + 1) * sizeof *ni);
  if (!ni) {
    free(key);
    return SIZE_MAX;
  }
  d->idx = ni;
  fidx *x = &d->idx[d->nidx];
  memset(x, 0, sizeof *x);
  x->key = key;
  x->klen = kl;
  icol c = {.v = {.fn = visit_index, .t = &d->t}, .d = d, .x = x};
  for (size_t r = 0; r < d->n && !c.oom; r++) {
    c.row = (uint32_t)r;
    walk(&c.v, p, 0, d->roots[r]);
  }
  if (c.oom) {
    free(x->key);
    free(x->strs);
    free(x->ints);
    return SIZE_MAX;
  }
  if (x->nstrs) qsort_r(x->strs, x->nstrs, sizeof *x->strs, ent_cmp_str, &d->t);
  if (x->nints) qsort_r(x->ints, x->nints, sizeof *x->ints, ent_cmp_int, &d->t);
  return d->nidx++;
}

/* rows of one value: [lo, hi) of the sorted entries */
static void range_str(const flt_docs *d, const fidx *x, const fstr *s, size_t *lo, size_t *hi) {
  size_t a = 0, b = x->nstrs;
  while (a < b) { /* first >= s */
    size_t m = (a + b) / 2;
    if (fstr_cmp_node(&d->t, &d->t.nodes[x->strs[m].node], s) < 0) a = m + 1;
    else b = m;
  }
  *lo = a;
  b = x->nstrs;
  while (a < b) { /* first > s */
    size_t m = (a + b) / 2;
    if (fstr_cmp_node(&d->t, &d->t.nodes[x->strs[m].node], s) <= 0) a = m + 1;
    else b = m;
  }
  *hi = a;
}

static void range_int(const flt_docs *d, const fidx *x, int64_t v, size_t *lo, size_t *hi) {
  size_t a = 0, b = x->nints;
  while (a < b) {
    size_t m = (a + b) / 2;
    if (d->t.nodes[x->ints[m].node].i < v) a = m + 1;
    else b = m;
  }
  *lo = a;
  b = x->nints;
  while (a < b) {
    size_t m = (a + b) / 2;
    if (d->t.nodes[x->ints[m].node].i <= v) a = m + 1;
    else b = m;
  }
  *hi = a;
}

/* a must condition the index answers: a field condition made of one keyword/integer match */
static bool indexable(const fcond *c) {
  return c->kind == FC_FIELD && c->parts == FF_MATCH &&
         (c->mk == FM_STR || c->mk == FM_INT || c->mk == FM_ANY);
}

static size_t cand_count(const flt_docs *d, const fidx *x, const fcond *c) {
  size_t lo, hi, total = 0;
  if (c->mk == FM_STR) range_str(d, x, &c->mstr, &lo, &hi), total = hi - lo;
  else if (c->mk == FM_INT) range_int(d, x, c->mint, &lo, &hi), total = hi - lo;
  else if (c->list_str)
    for (size_t i = 0; i < c->nstrs; i++) range_str(d, x, &c->strs[i], &lo, &hi), total += hi - lo;
  else
    for (size_t i = 0; i < c->nints; i++) range_int(d, x, c->ints[i], &lo, &hi), total += hi - lo;
  return total;
}

/* mark the candidate rows of c in `mark` (a byte per row) */
static void cand_mark(const flt_docs *d, const fidx *x, const fcond *c, uint8_t *mark) {
  size_t lo, hi;
  if (c->mk == FM_STR || (c->mk == FM_ANY && c->list_str)) {
    size_t n = c->mk == FM_STR ? 1 : c->nstrs;
    for (size_t i = 0; i < n; i++) {
      range_str(d, x, c->mk == FM_STR ? &c->mstr : &c->strs[i], &lo, &hi);
      for (size_t e = lo; e < hi; e++) mark[x->strs[e].row] = 1;
    }
  } else {
    size_t n = c->mk == FM_INT ? 1 : c->nints;
    for (size_t i = 0; i < n; i++) {
      range_int(d, x, c->mk == FM_INT ? c->mint : c->ints[i], &lo, &hi);
      for (size_t e = lo; e < hi; e++) mark[x->ints[e].row] = 1;
    }
  }
}

size_t flt_docs_select(flt_docs *d, const flt_filter *f, const uint8_t *skip, flt_id_fn id_of,
                       void *user, uint8_t *mask) {
  size_t n = d->n, hits = 0;
  const fcond *best = NULL;
  size_t bx = SIZE_MAX, bcount = n;
  for (size_t i = 0; !f->empty && i < f->root.nmust; i++) {
    const fcond *c = &f->root.must[i];
    if (!indexable(c) || d->idx_failed) continue;
    size_t x = index_for(d, &c->path);
    if (x == SIZE_MAX) {
      d->idx_failed = true; /* without memory for indexes every row is evaluated */
      continue;
    }
    size_t cnt = cand_count(d, &d->idx[x], c);
    if (cnt < bcount) {
      best = c;
      bx = x;
      bcount = cnt;
    }
  }
  if (best) {
    memset(mask, 0, n);
    cand_mark(d, &d->idx[bx], best, mask);
  }
  for (size_t r = 0; r < n; r++) {
    if ((best && !mask[r]) || (skip && skip[r])) {
      mask[r] = 0;
      continue;
    }
    corpus_id id, *idp = NULL;
    if (f->uses_id && id_of && id_of(user, r, &id)) idp = &id;
    mask[r] = flt_match(f, d, r, idp);
    hits += mask[r];
  }
  return hits;
}
