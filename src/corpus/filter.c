/*
 * filter.c — compiling a filter's JSON (Qdrant's Filter, or the {"and", "or"} conditions form of
 * vector-db-benchmark) into the condition tree that filter_eval.c walks (vforge/filter.h has
 * the language and its semantics).
 *
 * Compiling once is what makes evaluation cheap: key paths are split into items, match lists
 * are sorted for binary search, datetimes are parsed to microseconds and has_id ids to the
 * corpus_id form, so that evaluating a row does no parsing and no allocation.  Every problem is
 * reported with the JSON path where it is ("must[1].match.any[2]: ..."), and unknown keys are
 * errors: a misspelt condition that silently matched everything would make the ground truth
 * answer a different question.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "filter_internal.h"

typedef struct fcomp {
  const fj_tape *t;
  const char *what;
  vf_error *err;
  flt_filter *f;
  bool nested; /* compiling the filter of a nested condition */
} fcomp;

static vf_status cfail(fcomp *c, const char *where, const char *fmt, ...) VF_PRINTF(3, 4);
static vf_status cfail(fcomp *c, const char *where, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vf_error_set(c->err, VF_EUSAGE, "%s: filter%s%s: %s", c->what, *where ? " at " : "", where,
                      msg);
}

static vf_status cnomem(fcomp *c) { return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what); }

static const fj_node *nd(const fcomp *c, uint32_t i) { return &c->t->nodes[i]; }

static bool key_is(const fcomp *c, uint32_t k, const char *name) {
  const fj_node *n = nd(c, k);
  size_t l = strlen(name);
  return n->n == l && memcmp(fj_str(c->t, n), name, l) == 0;
}

/* iterate the members of object o: for (m = first(o); m; m = next(m)) with key m, value m+1 */
static uint32_t mem_first(const fcomp *c, uint32_t o) { return nd(c, o)->n ? o + 1 : 0; }
static uint32_t mem_next(const fcomp *c, uint32_t o, uint32_t m) {
  uint32_t nx = nd(c, m + 1)->end;
  return nx < nd(c, o)->end ? nx : 0;
}
static uint32_t el_next(const fcomp *c, uint32_t a, uint32_t e) {
  uint32_t nx = nd(c, e)->end;
  return nx < nd(c, a)->end ? nx : 0;
}

/* the where of a member / element for messages ("must[1].match"), truncated to cap */
static void sub_where(char *out, size_t cap, const char *where, const char *member, long idx) {
  size_t n = 0;
  char num[24];
  const char *parts[4] = {where, member && *where ? "." : "", member ? member : "", ""};
  if (idx >= 0) {
    snprintf(num, sizeof num, "[%ld]", idx);
    parts[3] = num;
  }
  for (int i = 0; i < 4; i++)
    for (const char *p = parts[i]; *p && n + 1 < cap; p++) out[n++] = *p;
  out[n] = 0;
}

static char *dup_n(const char *s, size_t n) { return vf_strndup(s, n); }

/* ------------------------------------------------------------------ key paths */

static bool raw_char(unsigned char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '-' || ch >= 0x80;
}

static void path_free(fpath *p) {
  for (size_t i = 0; i < p->n; i++) free(p->items[i].key);
  free(p->items);
  memset(p, 0, sizeof *p);
}

/* Qdrant's JSON path: (raw | "quoted") then (.raw | ."quoted" | [N] | [])* */
static vf_status path_parse(fcomp *c, const char *where, const char *s, size_t n, fpath *out) {
  memset(out, 0, sizeof *out);
  size_t cap = 4, i = 0;
  out->items = vf_calloc(cap, sizeof *out->items);
  if (!out->items) return cnomem(c);
  vf_status st = VF_OK;
  bool first = true;
  while (i < n || first) {
    if (out->n == cap) {
      fp_item *ni = vf_realloc(out->items, 2 * cap * sizeof *ni);
      if (!ni) {
        VF_FAIL(cnomem(c));
      }
      memset(ni + cap, 0, cap * sizeof *ni);
      out->items = ni;
      cap *= 2;
    }
    fp_item *it = &out->items[out->n];
    bool key = first;
    if (!first) {
      if (s[i] == '.') {
        i++;
        key = true;
      } else if (s[i] == '[') {
        if (i + 1 < n && s[i + 1] == ']') {
          it->kind = FP_WILD;
          i += 2;
          out->n++;
          continue;
        }
        size_t j = i + 1;
        uint64_t v = 0;
        while (j < n && s[j] >= '0' && s[j] <= '9' && v < ((uint64_t)1 << 40)) v = v * 10 + (uint64_t)(s[j++] - '0');
        if (j == i + 1 || j >= n || s[j] != ']') {
          VF_FAIL(cfail(c, where, "key '%.*s': expected a number or nothing between [ and ] at byte %zu",
                        (int)(n > 200 ? 200 : n), s, i));
        }
        it->kind = FP_INDEX;
        it->index = v;
        i = j + 1;
        out->n++;
        continue;
      } else {
        VF_FAIL(cfail(c, where, "key '%.*s': expected '.', '[' or the end at byte %zu",
                      (int)(n > 200 ? 200 : n), s, i));
      }
    }
    first = false;
    (void)key;
    size_t a = i, b;
    if (i < n && s[i] == '"') {
      a = ++i;
      while (i < n && s[i] != '"' && s[i] != '\\') i++;
      if (i >= n || s[i] != '"') {
        VF_FAIL(cfail(c, where, "key '%.*s': a quoted name needs its closing '\"' (and no '\\')",
                      (int)(n > 200 ? 200 : n), s));
      }
      b = i++;
    } else {
      while (i < n && raw_char((unsigned char)s[i])) i++;
      b = i;
      if (a == b) {
        VF_FAIL(cfail(c, where, "key '%.*s': expected a name (letters, digits, _ or -, or \"quoted\") at byte %zu",
                      (int)(n > 200 ? 200 : n), s, a));
      }
    }
    it->kind = FP_KEY;
    it->klen = b - a;
    if (!(it->key = dup_n(s + a, b - a))) {
      VF_FAIL(cnomem(c));
    }
    out->n++;
  }
out:
  if (st != VF_OK) path_free(out);
  return st;
}

static vf_status note_key(fcomp *c, const fpath *p) {
  flt_filter *f = c->f;
  if (c->nested) return VF_OK;
  for (size_t i = 0; i < f->nkeys; i++)
    if (strcmp(f->keys[i], p->items[0].key) == 0) return VF_OK;
  const char **nk = vf_realloc(f->keys, (f->nkeys + 1) * sizeof *nk);
  if (!nk) return cnomem(c);
  f->keys = nk;
  f->keys[f->nkeys++] = p->items[0].key;
  return VF_OK;
}

static vf_status key_path(fcomp *c, const char *where, uint32_t v, fpath *out) {
  const fj_node *n = nd(c, v);
  if (n->t != FJ_STR) return cfail(c, where, "a key must be a string");
  vf_status st = path_parse(c, where, fj_str(c->t, n), n->n, out);
  if (st != VF_OK) return st;
  return note_key(c, out);
}

/* ------------------------------------------------------------------ helpers */

static int fstr_cmp(const void *a, const void *b) {
  const fstr *x = a, *y = b;
  size_t m = x->n < y->n ? x->n : y->n;
  int r = memcmp(x->s, y->s, m);
  return r ? r : (x->n < y->n ? -1 : x->n > y->n);
}

static int i64_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static vf_status str_of(fcomp *c, const char *where, uint32_t v, fstr *out) {
  const fj_node *n = nd(c, v);
  if (n->t != FJ_STR) return cfail(c, where, "expected a string");
  char *s = dup_n(fj_str(c->t, n), n->n);
  if (!s) return cnomem(c);
  out->s = s;
  out->n = n->n;
  return VF_OK;
}

static vf_status num_of(fcomp *c, const char *where, uint32_t v, double *out) {
  const fj_node *n = nd(c, v);
  if (n->t != FJ_NUM) return cfail(c, where, "expected a number");
  *out = n->d;
  return VF_OK;
}

/* a non-negative integer (JSON integer literal, or a float with an integral value) */
static vf_status uint_of(fcomp *c, const char *where, uint32_t v, uint64_t *out) {
  const fj_node *n = nd(c, v);
  if (n->t != FJ_NUM || n->d < 0 || n->d != floor(n->d) || n->d > 1.8e19)
    return cfail(c, where, "expected a non-negative integer");
  *out = n->isint ? (uint64_t)n->i : (uint64_t)n->d;
  return VF_OK;
}

/* ------------------------------------------------------------------ conditions */

static void cond_free(fcond *x);

static void cond_array_free(fcond *a, size_t n) {
  for (size_t i = 0; a && i < n; i++) cond_free(&a[i]);
  free(a);
}

static void cond_free(fcond *x) {
  path_free(&x->path);
  free((char *)x->mstr.s);
  for (size_t i = 0; x->strs && i < x->nstrs; i++) free((char *)x->strs[i].s);
  free(x->strs);
  free(x->ints);
  cond_array_free(x->must, x->nmust);
  cond_array_free(x->should, x->nshould);
  cond_array_free(x->must_not, x->nmust_not);
  cond_array_free(x->min, x->nmin);
  free(x->ids);
  if (x->sub) {
    cond_free(x->sub);
    free(x->sub);
  }
  memset(x, 0, sizeof *x);
}

static vf_status compile_filter(fcomp *c, const char *where, uint32_t v, fcond *out);

/* match: {value} | {any} | {except} | {text} | {phrase} | {text_any} | {prefix} */
static vf_status compile_match(fcomp *c, const char *where, uint32_t v, fcond *x) {
  if (nd(c, v)->t != FJ_OBJ || nd(c, v)->n != 1)
    return cfail(c, where, "a match is an object with one of value, any, except, text, phrase, "
                 "text_any, prefix");
  uint32_t k = v + 1, m = v + 2;
  char w[256];
  const fj_node *mv = nd(c, m);
  if (key_is(c, k, "value")) {
    sub_where(w, sizeof w, where, "value", -1);
    if (mv->t == FJ_STR) {
      x->mk = FM_STR;
      return str_of(c, w, m, &x->mstr);
    }
    if (mv->t == FJ_TRUE || mv->t == FJ_FALSE) {
      x->mk = FM_BOOL;
      x->mbool = mv->t == FJ_TRUE;
      return VF_OK;
    }
    if (mv->t == FJ_NUM && mv->isint) {
      x->mk = FM_INT;
      x->mint = mv->i;
      return VF_OK;
    }
    return cfail(c, w, "expected a string, an integer or a bool (floats are matched with range)");
  }
  bool any = key_is(c, k, "any"), except = key_is(c, k, "except");
  if (any || except) {
    sub_where(w, sizeof w, where, any ? "any" : "except", -1);
    if (mv->t != FJ_ARR) return cfail(c, w, "expected an array of strings or of integers");
    x->mk = any ? FM_ANY : FM_EXCEPT;
    x->list_str = true; /* an empty list is Qdrant's empty keyword list */
    size_t n = mv->n, ns = 0, ni = 0;
    for (uint32_t e = n ? m + 1 : 0; e; e = el_next(c, m, e)) {
      ns += nd(c, e)->t == FJ_STR;
      ni += nd(c, e)->t == FJ_NUM && nd(c, e)->isint;
    }
    if (ns != n && ni != n)
      return cfail(c, w, "expected an array of strings or of integers (not mixed, no floats)");
    x->list_str = n == 0 || ns == n;
    if (x->list_str) {
      if (n && !(x->strs = vf_calloc(n, sizeof *x->strs))) return cnomem(c);
      for (uint32_t e = n ? m + 1 : 0; e; e = el_next(c, m, e)) {
        vf_status st = str_of(c, w, e, &x->strs[x->nstrs]);
        if (st != VF_OK) return st;
        x->nstrs++;
      }
      if (x->nstrs) qsort(x->strs, x->nstrs, sizeof *x->strs, fstr_cmp);
      size_t u = 0;
      for (size_t i = 0; i < x->nstrs; i++) {
        if (u && fstr_cmp(&x->strs[u - 1], &x->strs[i]) == 0) {
          free((char *)x->strs[i].s);
          continue;
        }
        x->strs[u++] = x->strs[i];
      }
      x->nstrs = u;
    } else {
      if (!(x->ints = vf_mallocarray(n, sizeof *x->ints))) return cnomem(c);
      for (uint32_t e = m + 1; e; e = el_next(c, m, e)) x->ints[x->nints++] = nd(c, e)->i;
      if (x->nints) qsort(x->ints, x->nints, sizeof *x->ints, i64_cmp);
      size_t u = 0;
      for (size_t i = 0; i < x->nints; i++)
        if (!u || x->ints[u - 1] != x->ints[i]) x->ints[u++] = x->ints[i];
      x->nints = u;
    }
    return VF_OK;
  }
  bool text = key_is(c, k, "text"), phrase = key_is(c, k, "phrase");
  bool tany = key_is(c, k, "text_any"), prefix = key_is(c, k, "prefix");
  if (text || phrase || prefix) {
    sub_where(w, sizeof w, where, text ? "text" : phrase ? "phrase" : "prefix", -1);
    x->mk = prefix ? FM_PREFIX : FM_TEXT;
    return str_of(c, w, m, &x->mstr);
  }
  if (tany) {
    sub_where(w, sizeof w, where, "text_any", -1);
    fstr all;
    vf_status st = str_of(c, w, m, &all);
    if (st != VF_OK) return st;
    x->mk = FM_TEXT_ANY;
    x->mstr = all; /* owns the text; tokens point into it */
    size_t cnt = 0;
    for (size_t i = 0; i < all.n; i++)
      if ((i == 0 || all.s[i - 1] == ' ' || all.s[i - 1] == '\t' || all.s[i - 1] == '\n' ||
           all.s[i - 1] == '\r') && !(all.s[i] == ' ' || all.s[i] == '\t' || all.s[i] == '\n' || all.s[i] == '\r'))
        cnt++;
    if (cnt && !(x->strs = vf_calloc(cnt, sizeof *x->strs))) return cnomem(c);
    for (size_t i = 0; i < all.n;) {
      while (i < all.n && (all.s[i] == ' ' || all.s[i] == '\t' || all.s[i] == '\n' || all.s[i] == '\r')) i++;
      size_t a = i;
      while (i < all.n && !(all.s[i] == ' ' || all.s[i] == '\t' || all.s[i] == '\n' || all.s[i] == '\r')) i++;
      if (i > a) {
        char *tok = dup_n(all.s + a, i - a);
        if (!tok) return cnomem(c);
        x->strs[x->nstrs++] = (fstr){tok, i - a};
      }
    }
    return VF_OK;
  }
  return cfail(c, where, "unknown match '%.*s' (expected value, any, except, text, phrase, text_any, prefix)",
               (int)nd(c, k)->n, fj_str(c->t, nd(c, k)));
}

static const char *const BOUND_NAMES[4] = {"lt", "gt", "lte", "gte"};

static int bound_index(const fcomp *c, uint32_t k) {
  for (int b = 0; b < 4; b++)
    if (key_is(c, k, BOUND_NAMES[b])) return b;
  return -1;
}

/* range: numbers (Range) or datetime strings (DatetimeRange); null bounds are absent */
static vf_status compile_range(fcomp *c, const char *where, uint32_t v, fcond *x) {
  if (nd(c, v)->t != FJ_OBJ) return cfail(c, where, "a range is an object {lt, gt, lte, gte}");
  char w[256];
  int strs = 0, nums = 0;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    int b = bound_index(c, m);
    sub_where(w, sizeof w, where, fj_str(c->t, nd(c, m)), -1);
    if (b < 0) return cfail(c, where, "unknown range bound '%s' (expected lt, gt, lte, gte)", fj_str(c->t, nd(c, m)));
    uint8_t t = nd(c, m + 1)->t;
    if (t == FJ_NULL) continue;
    if (t == FJ_STR) strs++;
    else if (t == FJ_NUM) nums++;
    else return cfail(c, w, "expected a number or a datetime string");
  }
  if (strs && nums) return cfail(c, where, "mixes numbers and datetime strings");
  x->parts |= strs ? FF_DTRANGE : FF_RANGE;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    int b = bound_index(c, m);
    const fj_node *bv = nd(c, m + 1);
    if (bv->t == FJ_NULL) continue;
    sub_where(w, sizeof w, where, BOUND_NAMES[b], -1);
    if (strs) {
      if (!flt_datetime_parse(fj_str(c->t, bv), bv->n, &x->dt[b]))
        return cfail(c, w, "'%.*s' is not a datetime (RFC 3339, or YYYY-MM-DD[ HH:MM[:SS[.f]]])",
                     (int)(bv->n > 64 ? 64 : bv->n), fj_str(c->t, bv));
      x->dthas |= 1u << b;
    } else {
      double d = bv->d;
      if (b == 0) x->range.lt = d;
      if (b == 1) x->range.gt = d;
      if (b == 2) x->range.lte = d;
      if (b == 3) x->range.gte = d;
      x->range.has |= 1u << b;
    }
  }
  return VF_OK;
}

static vf_status geo_point(fcomp *c, const char *where, uint32_t v, double *lon, double *lat) {
  if (nd(c, v)->t != FJ_OBJ) return cfail(c, where, "a geo point is an object {lon, lat}");
  bool hl = false, ht = false;
  char w[256];
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    sub_where(w, sizeof w, where, fj_str(c->t, nd(c, m)), -1);
    vf_status st;
    if (key_is(c, m, "lon")) {
      st = num_of(c, w, m + 1, lon);
      hl = true;
    } else if (key_is(c, m, "lat")) {
      st = num_of(c, w, m + 1, lat);
      ht = true;
    } else {
      st = cfail(c, where, "unknown key '%s' (expected lon, lat)", fj_str(c->t, nd(c, m)));
    }
    if (st != VF_OK) return st;
  }
  if (!hl || !ht) return cfail(c, where, "a geo point needs lon and lat");
  if (*lon < -180 || *lon > 180 || *lat < -90 || *lat > 90)
    return cfail(c, where, "lon must be in [-180, 180] and lat in [-90, 90]");
  return VF_OK;
}

static vf_status compile_geo(fcomp *c, const char *where, uint32_t v, bool box, fcond *x) {
  if (nd(c, v)->t != FJ_OBJ) return cfail(c, where, "expected an object");
  char w[256];
  bool a = false, b = false;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    sub_where(w, sizeof w, where, fj_str(c->t, nd(c, m)), -1);
    vf_status st;
    if (box && key_is(c, m, "top_left")) {
      st = geo_point(c, w, m + 1, &x->box[0], &x->box[1]);
      a = true;
    } else if (box && key_is(c, m, "bottom_right")) {
      st = geo_point(c, w, m + 1, &x->box[2], &x->box[3]);
      b = true;
    } else if (!box && key_is(c, m, "center")) {
      st = geo_point(c, w, m + 1, &x->circle[0], &x->circle[1]);
      a = true;
    } else if (!box && key_is(c, m, "radius")) {
      st = num_of(c, w, m + 1, &x->circle[2]);
      b = true;
    } else {
      st = cfail(c, where, "unknown key '%s' (expected %s)", fj_str(c->t, nd(c, m)),
                 box ? "top_left, bottom_right" : "center, radius");
    }
    if (st != VF_OK) return st;
  }
  if (!a || !b) return cfail(c, where, "needs %s", box ? "top_left and bottom_right" : "center and radius");
  x->parts |= box ? FF_GEO_BOX : FF_GEO_RADIUS;
  return VF_OK;
}

static vf_status compile_vcount(fcomp *c, const char *where, uint32_t v, fcond *x) {
  if (nd(c, v)->t != FJ_OBJ) return cfail(c, where, "values_count is an object {lt, gt, lte, gte}");
  char w[256];
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    int b = bound_index(c, m);
    if (b < 0) return cfail(c, where, "unknown bound '%s' (expected lt, gt, lte, gte)", fj_str(c->t, nd(c, m)));
    if (nd(c, m + 1)->t == FJ_NULL) continue;
    sub_where(w, sizeof w, where, BOUND_NAMES[b], -1);
    vf_status st = uint_of(c, w, m + 1, &x->vc[b]);
    if (st != VF_OK) return st;
    x->vchas |= 1u << b;
  }
  x->parts |= FF_VCOUNT;
  return VF_OK;
}

static vf_status compile_field(fcomp *c, const char *where, uint32_t v, fcond *x) {
  x->kind = FC_FIELD;
  char w[256];
  vf_status st = VF_OK;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    const char *name = fj_str(c->t, nd(c, m));
    uint32_t val = m + 1;
    sub_where(w, sizeof w, where, name, -1);
    if (key_is(c, m, "key")) {
      VF_TRY(key_path(c, w, val, &x->path));
      continue;
    }
    if (nd(c, val)->t == FJ_NULL) continue; /* Qdrant: a null part is absent */
    if (key_is(c, m, "match")) {
      x->parts |= FF_MATCH;
      VF_TRY(compile_match(c, w, val, x));
    } else if (key_is(c, m, "range")) {
      VF_TRY(compile_range(c, w, val, x));
    } else if (key_is(c, m, "geo_bounding_box")) {
      VF_TRY(compile_geo(c, w, val, true, x));
    } else if (key_is(c, m, "geo_radius")) {
      VF_TRY(compile_geo(c, w, val, false, x));
    } else if (key_is(c, m, "values_count")) {
      VF_TRY(compile_vcount(c, w, val, x));
    } else if (key_is(c, m, "is_empty") || key_is(c, m, "is_null")) {
      bool e = key_is(c, m, "is_empty");
      uint8_t t = nd(c, val)->t;
      if (t != FJ_TRUE && t != FJ_FALSE) VF_FAIL(cfail(c, w, "expected true or false"));
      x->parts |= e ? FF_IS_EMPTY : FF_IS_NULL;
      if (e) x->is_empty = t == FJ_TRUE;
      else x->is_null = t == FJ_TRUE;
    } else if (key_is(c, m, "geo_polygon")) {
      VF_FAIL(vf_error_set(c->err, VF_EUNSUPPORTED, "%s: filter at %s: geo_polygon is not supported "
                           "by vforge's evaluator", c->what, w));
    } else {
      VF_FAIL(cfail(c, where, "unknown key '%s' in a field condition (expected key, match, range, "
                    "geo_bounding_box, geo_radius, values_count, is_empty, is_null)", name));
    }
  }
  if (!x->parts)
    VF_FAIL(cfail(c, where, "a field condition needs one of match, range, geo_bounding_box, "
                  "geo_radius, values_count, is_empty, is_null"));
out:
  return st;
}

static vf_status id_of(fcomp *c, const char *where, uint32_t v, corpus_id *out) {
  const fj_node *n = nd(c, v);
  memset(out, 0, sizeof *out);
  if (n->t == FJ_NUM && n->isint && n->i >= 0) {
    out->num = (uint64_t)n->i;
    return VF_OK;
  }
  if (n->t == FJ_NUM && n->d >= 0 && n->d == floor(n->d) && n->d < 18446744073709551616.0 && !n->isint) {
    /* an integer beyond int64: take the digits of the text */
    out->num = (uint64_t)n->d;
    return VF_OK;
  }
  if (n->t == FJ_STR) {
    const char *s = fj_str(c->t, n);
    char hex[32];
    size_t h = 0;
    bool ok = n->n == 36 || n->n == 32;
    for (size_t i = 0; ok && i < n->n; i++) {
      char ch = s[i];
      if (n->n == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
        ok = ch == '-';
        continue;
      }
      if (ch >= 'A' && ch <= 'F') ch = (char)(ch - 'A' + 'a');
      ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
      if (ok) hex[h++] = ch;
    }
    if (ok && h == 32) {
      out->is_uuid = true;
      snprintf(out->uuid, sizeof out->uuid, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
               hex + 16, hex + 20);
      return VF_OK;
    }
  }
  return cfail(c, where, "a point id is an unsigned integer or a UUID string");
}

static int id_cmp(const void *a, const void *b) {
  const corpus_id *x = a, *y = b;
  if (x->is_uuid != y->is_uuid) return x->is_uuid ? 1 : -1;
  if (!x->is_uuid) return x->num < y->num ? -1 : x->num > y->num;
  return strcmp(x->uuid, y->uuid);
}

static vf_status compile_key_only(fcomp *c, const char *where, uint32_t v, fcond *x) {
  if (nd(c, v)->t != FJ_OBJ) return cfail(c, where, "expected an object {key}");
  char w[256];
  bool have = false;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    if (!key_is(c, m, "key")) return cfail(c, where, "unknown key '%s' (expected key)", fj_str(c->t, nd(c, m)));
    sub_where(w, sizeof w, where, "key", -1);
    vf_status st = key_path(c, w, m + 1, &x->path);
    if (st != VF_OK) return st;
    have = true;
  }
  return have ? VF_OK : cfail(c, where, "needs a key");
}

static vf_status compile_condition(fcomp *c, const char *where, uint32_t v, fcond *x) {
  const fj_node *n = nd(c, v);
  if (n->t != FJ_OBJ) return cfail(c, where, "a condition is a JSON object");
  bool key = false;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) key |= key_is(c, m, "key");
  if (key) return compile_field(c, where, v, x);
  if (n->n == 1) {
    uint32_t m = v + 1, val = v + 2;
    char w[256];
    sub_where(w, sizeof w, where, fj_str(c->t, nd(c, m)), -1);
    if (key_is(c, m, "is_empty") || key_is(c, m, "is_null")) {
      x->kind = key_is(c, m, "is_empty") ? FC_IS_EMPTY : FC_IS_NULL;
      return compile_key_only(c, w, val, x);
    }
    if (key_is(c, m, "has_id")) {
      if (c->nested)
        return vf_error_set(c->err, VF_EUNSUPPORTED, "%s: filter at %s: has_id is not supported "
                            "inside a nested filter (Qdrant ignores it there); put it in an "
                            "adjacent must", c->what, w);
      if (nd(c, val)->t != FJ_ARR) return cfail(c, w, "expected an array of point ids");
      x->kind = FC_HAS_ID;
      c->f->uses_id = true;
      size_t cnt = nd(c, val)->n;
      if (cnt && !(x->ids = vf_calloc(cnt, sizeof *x->ids))) return cnomem(c);
      long i = 0;
      for (uint32_t e = cnt ? val + 1 : 0; e; e = el_next(c, val, e), i++) {
        char we[256];
        sub_where(we, sizeof we, w, NULL, i);
        vf_status st = id_of(c, we, e, &x->ids[x->nids]);
        if (st != VF_OK) return st;
        x->nids++;
      }
      if (x->nids) qsort(x->ids, x->nids, sizeof *x->ids, id_cmp);
      return VF_OK;
    }
    if (key_is(c, m, "nested")) {
      if (nd(c, val)->t != FJ_OBJ) return cfail(c, w, "nested is an object {key, filter}");
      x->kind = FC_NESTED;
      uint32_t fv = 0;
      for (uint32_t q = mem_first(c, val); q; q = mem_next(c, val, q)) {
        char wq[256];
        sub_where(wq, sizeof wq, w, fj_str(c->t, nd(c, q)), -1);
        vf_status st = VF_OK;
        if (key_is(c, q, "key")) st = key_path(c, wq, q + 1, &x->path);
        else if (key_is(c, q, "filter")) fv = q + 1;
        else st = cfail(c, w, "unknown key '%s' (expected key, filter)", fj_str(c->t, nd(c, q)));
        if (st != VF_OK) return st;
      }
      if (!x->path.n || !fv) return cfail(c, w, "nested needs key and filter");
      if (x->path.items[x->path.n - 1].kind != FP_WILD) { /* Qdrant's array_key(): key[] */
        fp_item *ni = vf_realloc(x->path.items, (x->path.n + 1) * sizeof *ni);
        if (!ni) return cnomem(c);
        x->path.items = ni;
        memset(&ni[x->path.n], 0, sizeof *ni);
        ni[x->path.n++].kind = FP_WILD;
      }
      if (!(x->sub = vf_calloc(1, sizeof *x->sub))) return cnomem(c);
      char wf[256];
      sub_where(wf, sizeof wf, w, "filter", -1);
      bool was = c->nested;
      c->nested = true;
      vf_status st = compile_filter(c, wf, fv, x->sub);
      c->nested = was;
      return st;
    }
    if (key_is(c, m, "has_vector") || key_is(c, m, "slice"))
      return vf_error_set(c->err, VF_EUNSUPPORTED, "%s: filter at %s: %s conditions are not "
                          "supported by vforge's evaluator", c->what, w, fj_str(c->t, nd(c, m)));
  }
  return compile_filter(c, where, v, x);
}

/* a list of conditions: one Condition or an array of them */
static vf_status compile_list(fcomp *c, const char *where, uint32_t v, fcond **out, size_t *n) {
  const fj_node *nv = nd(c, v);
  size_t cnt = nv->t == FJ_ARR ? nv->n : 1;
  if (!(*out = vf_calloc(cnt ? cnt : 1, sizeof **out))) return cnomem(c);
  if (nv->t != FJ_ARR) {
    *n = 1;
    return compile_condition(c, where, v, *out);
  }
  long i = 0;
  for (uint32_t e = cnt ? v + 1 : 0; e; e = el_next(c, v, e), i++) {
    char w[256];
    sub_where(w, sizeof w, where, NULL, i);
    (*n)++;
    vf_status st = compile_condition(c, w, e, &(*out)[i]);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

static vf_status compile_filter(fcomp *c, const char *where, uint32_t v, fcond *x) {
  x->kind = FC_FILTER;
  if (nd(c, v)->t != FJ_OBJ) return cfail(c, where, "a filter is a JSON object");
  vf_status st = VF_OK;
  for (uint32_t m = mem_first(c, v); m; m = mem_next(c, v, m)) {
    char w[256];
    const char *name = fj_str(c->t, nd(c, m));
    uint32_t val = m + 1;
    sub_where(w, sizeof w, where, name, -1);
    bool null = nd(c, val)->t == FJ_NULL;
    if (key_is(c, m, "must")) {
      if (!null) VF_TRY(compile_list(c, w, val, &x->must, &x->nmust));
    } else if (key_is(c, m, "should")) {
      x->has_should = !null;
      if (!null) VF_TRY(compile_list(c, w, val, &x->should, &x->nshould));
    } else if (key_is(c, m, "must_not")) {
      if (!null) VF_TRY(compile_list(c, w, val, &x->must_not, &x->nmust_not));
    } else if (key_is(c, m, "min_should")) {
      if (null) continue;
      if (nd(c, val)->t != FJ_OBJ) VF_FAIL(cfail(c, w, "min_should is an object {conditions, min_count}"));
      bool hc = false, hm = false;
      for (uint32_t q = mem_first(c, val); q; q = mem_next(c, val, q)) {
        char wq[256];
        sub_where(wq, sizeof wq, w, fj_str(c->t, nd(c, q)), -1);
        if (key_is(c, q, "conditions")) {
          hc = true;
          if (nd(c, q + 1)->t != FJ_ARR) VF_FAIL(cfail(c, wq, "expected an array of conditions"));
          else VF_TRY(compile_list(c, wq, q + 1, &x->min, &x->nmin));
        } else if (key_is(c, q, "min_count")) {
          hm = true;
          VF_TRY(uint_of(c, wq, q + 1, &x->min_count));
          if (x->min_count < 1) VF_FAIL(cfail(c, wq, "min_count must be at least 1"));
        } else {
          VF_FAIL(cfail(c, w, "unknown key '%s' (expected conditions, min_count)", fj_str(c->t, nd(c, q))));
        }
      }
      if (!hc || !hm) VF_FAIL(cfail(c, w, "min_should needs conditions and min_count"));
      x->has_min = true;
    } else {
      VF_FAIL(cfail(c, where, "unknown key '%s' (a filter has must, should, must_not, min_should; a "
                    "condition key, match, range, is_empty, is_null, has_id, nested)", name));
    }
  }
out:
  return st;
}

/* --------------------------------------------- the vector-db-benchmark conditions form */

/* {"and": [{field: {type: criteria}}], "or": [...]} -> Qdrant Filter JSON (as bfb's
 * dataset/conditions.rs and vector-db-benchmark's parser.py build it) */
static vf_status conv_entry(fcomp *c, const char *where, uint32_t e, vf_buf *o, bool *first) {
  if (nd(c, e)->t != FJ_OBJ) return cfail(c, where, "a conditions entry is an object {field: {type: criteria}}");
  vf_status st = VF_OK;
  for (uint32_t m = mem_first(c, e); m; m = mem_next(c, e, m)) {
    uint32_t bytype = m + 1;
    char w[256];
    const fj_node *fk = nd(c, m);
    sub_where(w, sizeof w, where, fj_str(c->t, fk), -1);
    if (nd(c, bytype)->t != FJ_OBJ) return cfail(c, w, "expected {condition_type: criteria}");
    for (uint32_t q = mem_first(c, bytype); q; q = mem_next(c, bytype, q)) {
      uint32_t crit = q + 1;
      char wq[256];
      sub_where(wq, sizeof wq, w, fj_str(c->t, nd(c, q)), -1);
      if (nd(c, crit)->t != FJ_OBJ) return cfail(c, wq, "expected an object of criteria");
      VF_TRY(vf_json_raw(o, *first ? "{\"key\":" : ",{\"key\":", c->err));
      *first = false;
      VF_TRY(vf_json_string(o, fj_str(c->t, fk), fk->n, c->err));
      const char *want = NULL, *part = NULL;
      if (key_is(c, q, "match")) want = "value", part = "match";
      else if (key_is(c, q, "match_any")) want = "any", part = "match";
      else if (key_is(c, q, "match_text")) want = "text", part = "match";
      else if (key_is(c, q, "range")) part = "range";
      else if (key_is(c, q, "geo")) part = "geo_radius";
      else
        return cfail(c, wq, "unknown condition type (expected match, match_any, match_text, range, geo)");
      VF_TRY(vf_buf_printf(o, c->err, ",\"%s\":", part));
      if (want) {
        uint32_t val = fj_get(c->t, crit, want, strlen(want));
        if (!val) return cfail(c, wq, "needs '%s'", want);
        VF_TRY(vf_buf_printf(o, c->err, "{\"%s\":", want));
        VF_TRY(fj_write(c->t, val, o, c->err));
        VF_TRY(vf_json_raw(o, "}", c->err));
      } else if (key_is(c, q, "range")) {
        VF_TRY(fj_write(c->t, crit, o, c->err));
      } else {
        uint32_t lat = fj_get(c->t, crit, "lat", 3), lon = fj_get(c->t, crit, "lon", 3);
        uint32_t rad = fj_get(c->t, crit, "radius", 6);
        if (!lat || !lon || !rad || nd(c, lat)->t != FJ_NUM || nd(c, lon)->t != FJ_NUM ||
            nd(c, rad)->t != FJ_NUM)
          return cfail(c, wq, "geo needs numeric lat, lon and radius");
        VF_TRY(vf_json_raw(o, "{\"center\":{\"lon\":", c->err));
        VF_TRY(fj_write(c->t, lon, o, c->err));
        VF_TRY(vf_json_raw(o, ",\"lat\":", c->err));
        VF_TRY(fj_write(c->t, lat, o, c->err));
        VF_TRY(vf_json_raw(o, "},\"radius\":", c->err));
        VF_TRY(fj_write(c->t, rad, o, c->err));
        VF_TRY(vf_json_raw(o, "}", c->err));
      }
      VF_TRY(vf_json_raw(o, "}", c->err));
    }
  }
out:
  return st;
}

static vf_status convert_conditions(fcomp *c, uint32_t root, vf_buf *o) {
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(o, "{", c->err));
  bool any_clause = false;
  for (int pass = 0; pass < 2; pass++) {
    const char *op = pass ? "or" : "and";
    uint32_t v = fj_get(c->t, root, op, strlen(op));
    if (!v || nd(c, v)->t == FJ_NULL) continue;
    if (nd(c, v)->t != FJ_ARR) return cfail(c, op, "expected an array of conditions");
    if (nd(c, v)->n == 0) continue; /* {"and": []} carries no condition (bfb) */
    VF_TRY(vf_buf_printf(o, c->err, "%s\"%s\":[", any_clause ? "," : "", pass ? "should" : "must"));
    any_clause = true;
    bool first = true;
    long i = 0;
    for (uint32_t e = v + 1; e; e = el_next(c, v, e), i++) {
      char w[64];
      snprintf(w, sizeof w, "%s[%ld]", op, i);
      VF_TRY(conv_entry(c, w, e, o, &first));
    }
    VF_TRY(vf_json_raw(o, "]", c->err));
  }
  VF_TRY(vf_json_raw(o, "}", c->err));
out:
  return st;
}

/* ------------------------------------------------------------------ API */

static bool is_conditions_form(const fj_tape *t, uint32_t root) {
  const fj_node *r = &t->nodes[root];
  if (r->t != FJ_OBJ || r->n == 0) return false;
  uint32_t i = root + 1;
  for (uint32_t m = 0; m < r->n; m++) {
    const fj_node *k = &t->nodes[i];
    bool ok = (k->n == 3 && memcmp(fj_str(t, k), "and", 3) == 0) ||
              (k->n == 2 && memcmp(fj_str(t, k), "or", 2) == 0);
    if (!ok) return false;
    i = t->nodes[i + 1].end;
  }
  return true;
}

static bool cond_empty(const fcond *x) {
  return x->kind == FC_FILTER && !x->nmust && !x->has_should && !x->nmust_not && !x->has_min;
}

void flt_free(flt_filter *f) {
  if (!f) return;
  cond_free(&f->root);
  free(f->json);
  free(f->keys);
  free(f);
}

/* flt_parse(): see filter.h. */
vf_status flt_parse(const char *text, size_t len, const char *what, flt_filter **out,
                    vf_error *err) {
  *out = NULL;
  if (!what) what = "filter";
  if (len > FLT_MAX_TEXT)
    return vf_error_set(err, VF_EUSAGE, "%s: a filter of %zu bytes (at most %zu)", what, len, FLT_MAX_TEXT);
  fj_tape t;
  fj_init(&t);
  vf_buf conv;
  vf_buf_init(&conv, FLT_MAX_TEXT * 4);
  flt_filter *f = vf_calloc(1, sizeof *f);
  uint32_t root = 0;
  vf_status st = VF_OK;
  if (!f) VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", what));
  st = fj_parse(&t, text, len, false, what, &root, err);
  if (st == VF_ECORRUPT) err->code = st = VF_EUSAGE; /* bad filter JSON is bad usage */
  if (st != VF_OK) goto out;
  fcomp c = {.t = &t, .what = what, .err = err, .f = f};
  if (t.nodes[root].t != FJ_OBJ) VF_FAIL(cfail(&c, "", "a filter is a JSON object"));
  if (is_conditions_form(&t, root)) {
    VF_TRY(convert_conditions(&c, root, &conv));
    fj_clear(&t);
    VF_TRY(fj_parse(&t, (const char *)conv.data, conv.len, true, what, &root, err));
    if (!(f->json = vf_strndup((const char *)conv.data, conv.len)))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", what));
  } else {
    size_t a = 0, b = len; /* the text as given, without surrounding whitespace */
    while (a < b && (text[a] == ' ' || text[a] == '\n' || text[a] == '\t' || text[a] == '\r')) a++;
    while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\n' || text[b - 1] == '\t' || text[b - 1] == '\r')) b--;
    if (!(f->json = vf_strndup(text + a, b - a))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", what));
  }
  VF_TRY(compile_filter(&c, "", root, &f->root));
  f->empty = cond_empty(&f->root);
  *out = f;
out:
  fj_free(&t);
  vf_buf_free(&conv);
  if (st != VF_OK) flt_free(f);
  return st;
}

const char *flt_json(const flt_filter *f) { return f->json; }
bool flt_is_empty(const flt_filter *f) { return f->empty; }
bool flt_uses_id(const flt_filter *f) { return f->uses_id; }

size_t flt_keys(const flt_filter *f, const char *const **keys) {
  *keys = f->keys;
  return f->nkeys;
}

void flt_hash8(const char *text, size_t len, char out[9]) {
  uint8_t d[16];
  vf_md5(text, len, d);
  snprintf(out, 9, "%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
}
