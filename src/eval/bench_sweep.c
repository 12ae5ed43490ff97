/*
 * bench_sweep.c — parameter sweeps for `vforge bench` (issue 19 "Sweeps and plots"):
 * `--sweep nprobe=4,8,16` / `--sweep hnsw-ef=...` / `--concurrency 1,2,4` ... build a grid, and
 * bench_run() measures every point of it.
 *
 * Why a point is a whole bench_run() (fresh handles, their warm-up, --warmup again): a search
 * parameter is a property of a handle (store_local_set_nprobe, store_qdrant_set_search), and a
 * concurrency or rate is a property of the run; running each point exactly as a plain bench run
 * means a one-point sweep and a plain run measure the same thing.  The caches a point warms
 * (the local store's vectors and index pages, the OS page cache) stay warm for the next one, so
 * the order of points matters little after the first; --warmup evens the first out.
 *
 * The grid is checked against the store before anything runs: a sweep that would fail at its
 * fifth point after an hour fails at once instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

static const char *const KNOB_NAMES[BENCH_NKNOBS] = {
    "nprobe", "hnsw-ef", "oversampling", "rescore", "exact", "concurrency", "rps"};

const char *bench_knob_name(bench_knob k) {
  return (unsigned)k < BENCH_NKNOBS ? KNOB_NAMES[k] : "unknown";
}

bool bench_knob_parse(const char *name, bench_knob *out) {
  for (int k = 0; k < BENCH_NKNOBS; k++)
    if (strcmp(name, KNOB_NAMES[k]) == 0) {
      *out = (bench_knob)k;
      return true;
    }
  return false;
}

static bool knob_is_bool(bench_knob k) { return k == BENCH_KNOB_RESCORE || k == BENCH_KNOB_EXACT; }
static bool knob_is_int(bench_knob k) {
  return k == BENCH_KNOB_NPROBE || k == BENCH_KNOB_HNSW_EF || k == BENCH_KNOB_CONCURRENCY;
}
static bool knob_is_qdrant(bench_knob k) {
  return k == BENCH_KNOB_HNSW_EF || k == BENCH_KNOB_OVERSAMPLING || k == BENCH_KNOB_RESCORE ||
         k == BENCH_KNOB_EXACT;
}

vf_status bench_knob_value(bench_knob k, const char *text, double *out, vf_error *err) {
  const char *name = bench_knob_name(k);
  if (knob_is_bool(k)) {
    if (strcmp(text, "true") == 0) *out = 1;
    else if (strcmp(text, "false") == 0) *out = 0;
    else return vf_error_set(err, VF_EUSAGE, "%s: expected true or false, got '%s'", name, text);
    return VF_OK;
  }
  char *end = NULL;
  double v = strtod(text, &end);
  bool ok = *text && end && !*end && isfinite(v);
  double lo = 1, hi = 1e9;
  if (k == BENCH_KNOB_NPROBE || k == BENCH_KNOB_HNSW_EF) hi = 1 << 24;
  if (k == BENCH_KNOB_CONCURRENCY) hi = 1024;
  if (k == BENCH_KNOB_RPS) lo = 0; /* > 0, checked below */
  if (ok && knob_is_int(k)) ok = v == floor(v);
  if (ok) ok = k == BENCH_KNOB_RPS ? v > 0 && v <= hi : v >= lo && v <= hi;
  if (!ok)
    return vf_error_set(err, VF_EUSAGE, "%s: expected %s %s, got '%s'", name,
                        knob_is_int(k) ? "an integer in" : k == BENCH_KNOB_RPS ? "a rate in" : "a number in",
                        k == BENCH_KNOB_NPROBE || k == BENCH_KNOB_HNSW_EF ? "1..16777216"
                        : k == BENCH_KNOB_CONCURRENCY                     ? "1..1024"
                        : k == BENCH_KNOB_RPS                             ? "(0, 1e9] queries/s"
                                                                          : "1..1e9",
                        text);
  *out = v;
  return VF_OK;
}

bool bench_grid_has(const bench_grid *g, bench_knob k) {
  for (int i = 0; i < g->naxes; i++)
    if (g->axes[i].knob == k) return true;
  return false;
}

size_t bench_grid_size(const bench_grid *g) {
  size_t n = 1;
  for (int i = 0; i < g->naxes; i++) n *= g->axes[i].n;
  return n;
}

vf_status bench_grid_add_list(bench_grid *g, bench_knob k, const char *values, vf_error *err) {
  const char *name = bench_knob_name(k);
  if ((unsigned)k >= BENCH_NKNOBS) return vf_error_set(err, VF_EUSAGE, "sweep: unknown knob %d", (int)k);
  if (bench_grid_has(g, k))
    return vf_error_set(err, VF_EUSAGE, "sweep: %s is swept twice (give all its values in one list)", name);
  bench_axis ax;
  memset(&ax, 0, sizeof ax);
  ax.knob = k;
  const char *p = values;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    while (len && *p == ' ') p++, len--;
    while (len && p[len - 1] == ' ') len--;
    char item[64];
    if (len == 0)
      return vf_error_set(err, VF_EUSAGE, "sweep %s=%s: an empty value (expected %s=v1,v2,...)", name,
                          values, name);
    if (len >= sizeof item)
      return vf_error_set(err, VF_EUSAGE, "sweep %s: value '%.*s...' is too long", name, 32, p);
    if (ax.n >= BENCH_MAX_AXIS_VALUES)
      return vf_error_set(err, VF_EUSAGE, "sweep %s: more than %d values", name, BENCH_MAX_AXIS_VALUES);
    memcpy(item, p, len);
    item[len] = 0;
    double v;
    vf_status st = bench_knob_value(k, item, &v, err);
    if (st != VF_OK) return vf_error_prefix(err, "sweep ");
    for (size_t j = 0; j < ax.n; j++)
      if (ax.values[j] == v)
        return vf_error_set(err, VF_EUSAGE, "sweep %s: the value '%s' is given twice", name, item);
    ax.values[ax.n++] = v;
    if (!e) break;
    p = e + 1;
  }
  if (bench_grid_size(g) * ax.n > BENCH_MAX_POINTS)
    return vf_error_set(err, VF_EUSAGE, "sweep: %zu points (at most %d: sweep fewer values at once)",
                        bench_grid_size(g) * ax.n, BENCH_MAX_POINTS);
  g->axes[g->naxes++] = ax;
  return VF_OK;
}

vf_status bench_grid_add(bench_grid *g, const char *spec, vf_error *err) {
  const char *eq = strchr(spec, '=');
  char name[32];
  size_t len = eq ? (size_t)(eq - spec) : 0;
  bench_knob k;
  if (!eq || len == 0 || len >= sizeof name)
    return vf_error_set(err, VF_EUSAGE, "--sweep '%s': expected NAME=v1,v2,... (NAME one of nprobe, "
                        "hnsw-ef, oversampling, rescore, exact, concurrency, rps)", spec);
  memcpy(name, spec, len);
  name[len] = 0;
  if (!bench_knob_parse(name, &k))
    return vf_error_set(err, VF_EUSAGE, "--sweep %s: unknown parameter '%s' (one of nprobe, hnsw-ef, "
                        "oversampling, rescore, exact, concurrency, rps)", spec, name);
  return bench_grid_add_list(g, k, eq + 1, err);
}

void bench_grid_point(const bench_grid *g, size_t i, const bench_options *base, bench_point *out) {
  memset(out, 0, sizeof *out);
  out->o = *base;
  out->qdrant = base->qdrant ? *base->qdrant : (store_qdrant_search_opts){0, false, -1, 0};
  bool qset = base->qdrant != NULL;
  for (int k = 0; k < BENCH_NKNOBS; k++) out->values[k] = NAN;
  /* the last axis varies fastest */
  for (int a = g->naxes - 1; a >= 0; a--) {
    const bench_axis *ax = &g->axes[a];
    double v = ax->values[i % ax->n];
    i /= ax->n;
    out->values[ax->knob] = v;
    switch (ax->knob) {
    case BENCH_KNOB_NPROBE: out->o.nprobe = (uint32_t)v; break;
    case BENCH_KNOB_HNSW_EF: out->qdrant.hnsw_ef = (int64_t)v; break;
    case BENCH_KNOB_OVERSAMPLING: out->qdrant.oversampling = v; break;
    case BENCH_KNOB_RESCORE: out->qdrant.rescore = v != 0; break;
    case BENCH_KNOB_EXACT: out->qdrant.exact = v != 0; break;
    case BENCH_KNOB_CONCURRENCY: out->o.concurrency = (int)v; break;
    case BENCH_KNOB_RPS: out->o.rps = v; break;
    default: break;
    }
    qset = qset || knob_is_qdrant(ax->knob);
  }
  out->o.qdrant = qset ? &out->qdrant : NULL;
}

void bench_point_params(const bench_point *p, char *out, size_t cap) {
  size_t len = 0;
  if (cap) out[0] = 0;
  for (int k = 0; k < BENCH_NKNOBS && cap; k++) {
    double v = p->values[k];
    if (isnan(v)) continue;
    int w = knob_is_bool((bench_knob)k)
                ? snprintf(out + len, cap - len, "%s%s=%s", len ? " " : "", KNOB_NAMES[k], v != 0 ? "true" : "false")
                : snprintf(out + len, cap - len, "%s%s=%.6g", len ? " " : "", KNOB_NAMES[k], v);
    if (w < 0 || (size_t)w >= cap - len) {
      out[cap - 1] = 0;
      return;
    }
    len += (size_t)w;
  }
}

void bench_points_free(bench_point *p, size_t n) {
  for (size_t i = 0; p && i < n; i++) bench_report_free(&p[i].rep);
  free(p);
}

vf_status bench_sweep_check(const bench_options *base, const bench_grid *g, vf_error *err) {
  const char *stype = base->store.type && *base->store.type ? base->store.type : "local";
  bool local = strcmp(stype, "local") == 0, qdrant = strcmp(stype, "qdrant") == 0;
  for (int a = 0; a < g->naxes; a++) {
    bench_knob k = g->axes[a].knob;
    if (k == BENCH_KNOB_NPROBE && !local)
      return vf_error_set(err, VF_EUSAGE, "--sweep nprobe: nprobe applies to the local store's IVF "
                          "index (this store is %s)", stype);
    if (knob_is_qdrant(k) && !qdrant)
      return vf_error_set(err, VF_EUSAGE, "--sweep %s: %s applies to qdrant stores (this store is %s)",
                          KNOB_NAMES[k], KNOB_NAMES[k], stype);
  }
  if (base->max_outstanding && !(base->rps > 0) && !bench_grid_has(g, BENCH_KNOB_RPS))
    return vf_error_set(err, VF_EUSAGE, "--max-outstanding applies to the open loop (--rps) only");
  return VF_OK;
}

vf_status bench_sweep(const bench_options *base, const bench_grid *g, const bench_queries *q,
                      const bench_truth *t, const size_t *rows, bench_point_fn done, void *user,
                      bench_point **points, size_t *npoints, vf_error *err) {
  *points = NULL;
  *npoints = 0;
  vf_status cst = bench_sweep_check(base, g, err);
  if (cst != VF_OK) return cst;
  size_t n = bench_grid_size(g);
  bench_point *pts = vf_calloc(n, sizeof *pts);
  if (!pts) return vf_error_set(err, VF_ENOMEM, "bench: out of memory (%zu sweep points)", n);
  vf_status st = VF_OK;
  size_t i = 0;
  for (; i < n; i++) {
    VF_TRY(vf_check_cancel(err));
    bench_point *p = &pts[i];
    bench_grid_point(g, i, base, p);
    st = bench_run(&p->o, q, t, rows, &p->rep, err);
    if (st != VF_OK) {
      char params[256];
      bench_point_params(p, params, sizeof params);
      if (g->naxes) vf_error_prefix(err, "sweep point %zu of %zu (%s): ", i + 1, n, params);
      bench_report_free(&p->rep);
      goto out;
    }
    if (done) st = done(user, p, i, n, err);
    if (st != VF_OK) {
      i++; /* the point itself is complete */
      goto out;
    }
  }
out:
  *points = pts;
  *npoints = i;
  return st;
}

/* ------------------------------------------------------------------ JSON */

static vf_status knob_json(bench_knob k, double v, vf_buf *out, vf_error *err) {
  if (knob_is_bool(k)) return vf_json_raw(out, v != 0 ? "true" : "false", err);
  if (knob_is_int(k)) return vf_json_i64(out, (int64_t)v, err);
  return vf_json_f64(out, v, err);
}

vf_status bench_point_json(const bench_point *p, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(out, "{\"params\":{", err));
  bool first = true;
  for (int k = 0; k < BENCH_NKNOBS; k++) {
    if (isnan(p->values[k])) continue;
    if (!first) VF_TRY(vf_json_raw(out, ",", err));
    first = false;
    VF_TRY(vf_json_string(out, KNOB_NAMES[k], strlen(KNOB_NAMES[k]), err));
    VF_TRY(vf_json_raw(out, ":", err));
    VF_TRY(knob_json((bench_knob)k, p->values[k], out, err));
  }
  VF_TRY(vf_json_raw(out, "},", err));
  VF_TRY(bench_report_members(&p->rep, out, err));
  VF_TRY(vf_json_raw(out, "}", err));
out:
  return st;
}

vf_status bench_points_json(const bench_point *p, size_t n, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(out, "{\"points\":[", err));
  for (size_t i = 0; i < n; i++) {
    if (i) VF_TRY(vf_json_raw(out, ",", err));
    VF_TRY(bench_point_json(&p[i], out, err));
  }
  VF_TRY(vf_json_raw(out, "]}\n", err));
out:
  return st;
}
