/*
 * bench.c — `vforge bench`: every query once through store_search(k), recall@k against the
 * ground truth, latency percentiles, QPS and errors (issue 5 "bench"; DESIGN.md "Command line").
 *
 * Why these loops:
 *  - closed loop: `concurrency` workers, each with its own store handle (a handle is used by one
 *    thread at a time, store.h), take the next query index from an atomic counter.  Latency is
 *    the search's own duration.
 *  - open loop: a closed loop measures a store that slows its own load down (coordinated
 *    omission).  Here a scheduler issues query i at t0 + i/rps whatever happened before, and a
 *    query's latency runs from its *scheduled* time to its completion, so queueing behind a slow
 *    store shows up in the percentiles.  Queued + in-flight requests are bounded by
 *    max_outstanding; a query that would exceed the bound is dropped and counted as an error
 *    (memory stays bounded when the store cannot keep up).
 * Each handle runs one untimed warm-up search first (the local store reads its id table on the
 * first search), then the workers share `warmup` more (untimed, unscored: the page cache, the
 * store's caches, connections), and the clock starts when every worker is ready.
 * Search parameters are set per handle before its warm-up (nprobe: store_local_set_nprobe;
 * Qdrant: store_qdrant_set_search), so a sweep point (bench_sweep.c) is exactly a plain run.
 * vf_cancelled() is polled before every query and every scheduled send: a cancelled run returns
 * VF_ECANCELED once its in-flight searches return.
 * Percentiles are exact: every latency is kept and sorted (nearest rank).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_internal.h"

#define BENCH_MAX_WORKERS 1024

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* ----------------------------------------------------------------- recall */

static bool near_tie(float a, float b) {
  double x = a, y = b;
  double m = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
  return fabs(x - y) <= BENCH_TIE_REL * m;
}

typedef struct ret_hit {
  char id[37];
  float score;
} ret_hit;

static int cmp_ret(const void *a, const void *b) {
  return strcmp(((const ret_hit *)a)->id, ((const ret_hit *)b)->id);
}

static int cmp_strp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Large k: sort the answer (dropping repeated ids) and the truth ids, then binary-search, so a
 * query costs O(k log k) rather than O(k^2).  false when scratch memory is not available. */
static bool recall_sorted(char *const *ids, size_t denom, float kth, const store_hit *hits, size_t n,
                          size_t *s_out, size_t *w_out) {
  ret_hit *r = vf_mallocarray(n, sizeof *r);
  char **t = vf_mallocarray(denom, sizeof *t);
  if (!r || !t) {
    free(r);
    free(t);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    store_id_format(&hits[i].id, r[i].id);
    r[i].score = hits[i].score;
  }
  memcpy(t, ids, denom * sizeof *t);
  qsort(r, n, sizeof *r, cmp_ret);
  qsort(t, denom, sizeof *t, cmp_strp);
  size_t s = 0, w = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && strcmp(r[i].id, r[i - 1].id) == 0) continue;
    const char *key = r[i].id;
    bool found = bsearch(&key, t, denom, sizeof *t, cmp_strp) != NULL;
    if (found) s++;
    if (found || near_tie(r[i].score, kth)) w++;
  }
  free(r);
  free(t);
  *s_out = s;
  *w_out = w;
  return true;
}

bool bench_recall_one(const bench_truth *t, size_t row, size_t k, const store_hit *hits,
                      size_t nhits, double *strict, double *tie) {
  size_t avail = t->counts[row];
  size_t denom = k < avail ? k : avail;
  if (denom == 0) { /* no true hit (a filter nothing matches): no recall to measure */
    *strict = *tie = 1.0;
    return false;
  }
  char *const *ids = t->hit_ids + row * t->k;
  float kth = t->scores[row * t->k + denom - 1];
  size_t n = nhits < k ? nhits : k, s = 0, w = 0;
  if (n <= 32 || !recall_sorted(ids, denom, kth, hits, n, &s, &w)) {
    for (size_t i = 0; i < n; i++) {
      char buf[37];
      store_id_format(&hits[i].id, buf);
      bool dup = false; /* a store returning one id twice gets it counted once */
      for (size_t j = 0; j < i && !dup; j++) dup = store_id_cmp(&hits[j].id, &hits[i].id) == 0;
      if (dup) continue;
      bool found = false;
      for (size_t j = 0; j < denom && !found; j++) found = strcmp(ids[j], buf) == 0;
      if (found) s++;
      if (found || near_tie(hits[i].score, kth)) w++;
    }
  }
  if (s > denom) s = denom;
  if (w > denom) w = denom;
  *strict = (double)s / (double)denom;
  *tie = (double)w / (double)denom;
  return true;
}

double bench_percentile(const double *sorted, size_t n, double p) {
  if (n == 0) return 0;
  double r = ceil(p / 100.0 * (double)n);
  size_t i = r < 1 ? 0 : (size_t)r - 1;
  if (i >= n) i = n - 1;
  return sorted[i];
}

/* ------------------------------------------------------------------ run */

typedef struct bench_ctx {
  const bench_options *o;
  const bench_queries *q;
  const bench_truth *t;
  const size_t *rows;
  /* per query results */
  double *lat;      /* seconds; < 0: not answered */
  double *rmin, *rmax;
  uint8_t *scored;  /* the query's truth has hits (its recall counts) */
  /* closed loop */
  atomic_size_t next;
  atomic_size_t warm_next; /* o->warmup queries, shared by the workers */
  /* open loop */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t *ring;     /* queued query indices, capacity max_outstanding */
  double *sched;    /* per query: its scheduled time */
  size_t head, count, cap, outstanding;
  bool done;
  /* start barrier */
  int ready, failed_open;
  bool go;
  pthread_cond_t go_cv;
  double t0;
  double last_end; /* guarded by mu */
  /* errors */
  size_t errors;
  vf_status first_status;
  char first_error[VF_ERROR_MSG_MAX];
  vf_error open_err;
} bench_ctx;

typedef struct bench_worker {
  bench_ctx *c;
  store *h;
  pthread_t th;
  bool started;
} bench_worker;

static void record_error(bench_ctx *c, const vf_error *e, vf_status st) {
  pthread_mutex_lock(&c->mu);
  c->errors++;
  if (c->first_status == VF_OK) {
    c->first_status = st;
    snprintf(c->first_error, sizeof c->first_error, "%s", e->msg[0] ? e->msg : vf_status_name(st));
  }
  pthread_mutex_unlock(&c->mu);
}

/* One query: search, then score it.  `start` is the time its latency counts from. */
static void run_one(bench_worker *w, size_t i, double start) {
  bench_ctx *c = w->c;
  const bench_queries *q = c->q;
  store_results res;
  vf_error e;
  vf_error_clear(&e);
  vf_status st = store_search_filtered(w->h, c->o->vector, q->vectors + i * (size_t)q->dim, 1,
                                       q->dim, c->o->k,
                                       q->filters ? (const flt_filter *const *)&q->filters[i] : NULL,
                                       &res, &e);
  double end = now_s();
  if (st != VF_OK) {
    record_error(c, &e, st);
  } else {
    c->lat[i] = end - start;
    c->scored[i] = bench_recall_one(c->t, c->rows[i], c->o->k, res.hits, res.counts[0],
                                    &c->rmin[i], &c->rmax[i]);
  }
  store_results_free(&res);
  pthread_mutex_lock(&c->mu);
  if (end > c->last_end) c->last_end = end;
  pthread_mutex_unlock(&c->mu);
}

/* wait for every worker to be ready; false when the run is abandoned */
static bool start_barrier(bench_ctx *c) {
  pthread_mutex_lock(&c->mu);
  c->ready++;
  pthread_cond_broadcast(&c->go_cv);
  while (!c->go && !c->failed_open) pthread_cond_wait(&c->go_cv, &c->mu);
  bool go = c->go && !c->failed_open;
  pthread_mutex_unlock(&c->mu);
  return go;
}

/* a worker's store handle, opened and warmed up (untimed) before it reports ready */
static vf_status worker_prepare(bench_worker *w, vf_error *e) {
  bench_ctx *c = w->c;
  vf_status st = VF_OK;
  VF_TRY(store_open(&c->o->store, &w->h, e));
  if (c->o->qdrant) VF_TRY(store_qdrant_set_search(w->h, c->o->qdrant, e));
  if (c->o->nprobe) VF_TRY(store_local_set_nprobe(w->h, c->o->nprobe, e));
  /* untimed warm-up: the first search of a handle may load its tables (and, with filters,
   * parse the payloads: the warm-up uses the first filter) */
  const flt_filter *f0 = NULL;
  for (size_t i = 0; c->q->filters && i < c->q->n && !f0; i++) f0 = c->q->filters[i];
  store_results res;
  st = store_search_filtered(w->h, c->o->vector, c->q->vectors, 1, c->q->dim, c->o->k,
                             f0 ? &f0 : NULL, &res, e);
  store_results_free(&res);
  if (st != VF_OK) goto out;
  for (;;) { /* --warmup: untimed, unscored, before this worker reports ready */
    size_t i = !vf_cancelled() ? atomic_fetch_add(&c->warm_next, 1) : SIZE_MAX;
    if (i >= c->o->warmup) break;
    const float *v = c->q->vectors + (i % c->q->n) * (size_t)c->q->dim;
    const flt_filter *fi = c->q->filters ? c->q->filters[i % c->q->n] : NULL;
    st = store_search_filtered(w->h, c->o->vector, v, 1, c->q->dim, c->o->k, fi ? &fi : NULL, &res, e);
    store_results_free(&res);
    if (st != VF_OK) {
      vf_error_prefix(e, "warm-up query %zu: ", i % c->q->n);
      goto out;
    }
  }
out:
  return st;
}
static void *worker_main(void *arg) {
  bench_worker *w = arg;
  bench_ctx *c = w->c;
  vf_error e;
  vf_error_clear(&e);
  vf_status st = worker_prepare(w, &e);
  if (st != VF_OK) {
    pthread_mutex_lock(&c->mu);
    if (!c->failed_open) {
      c->failed_open = 1;
      c->open_err = e;
      c->open_err.code = st;
    }
    pthread_cond_broadcast(&c->go_cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
  }
  if (!start_barrier(c)) return NULL;
  if (c->o->rps <= 0) {
    for (;;) {
      size_t i = atomic_fetch_add(&c->next, 1);
      if (i >= c->q->n || vf_cancelled()) break;
      run_one(w, i, now_s());
    }
    return NULL;
  }
  for (;;) {
    pthread_mutex_lock(&c->mu);
    while (c->count == 0 && !c->done) pthread_cond_wait(&c->cv, &c->mu);
    if (c->count == 0) {
      pthread_mutex_unlock(&c->mu);
      break;
    }
    size_t i = c->ring[c->head];
    c->head = (c->head + 1) % c->cap;
    c->count--;
    pthread_mutex_unlock(&c->mu);
    if (!vf_cancelled()) run_one(w, i, c->sched[i]);
    pthread_mutex_lock(&c->mu);
    c->outstanding--;
    pthread_mutex_unlock(&c->mu);
  }
  return NULL;
}

/* the open-loop scheduler (runs on the calling thread) */
static void schedule(bench_ctx *c, size_t *dropped) {
  double step = 1.0 / c->o->rps;
  for (size_t i = 0; i < c->q->n && !vf_cancelled(); i++) {
    double t = c->t0 + (double)i * step;
    sleep_until(t);
    c->sched[i] = t;
    pthread_mutex_lock(&c->mu);
    if (c->outstanding >= c->cap) {
      (*dropped)++;
      c->errors++;
    } else {
      c->ring[(c->head + c->count) % c->cap] = i;
      c->count++;
      c->outstanding++;
      pthread_cond_signal(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
  }
  pthread_mutex_lock(&c->mu);
  c->done = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

vf_status bench_run(const bench_options *o, const bench_queries *q, const bench_truth *t,
                    const size_t *rows, bench_report *rep, vf_error *err) {
  memset(rep, 0, sizeof *rep);
  if (o->k == 0) return vf_error_set(err, VF_EUSAGE, "bench: -k must be at least 1");
  if (o->k > t->k)
    return vf_error_set(err, VF_EUSAGE,
                        "bench: -k %zu exceeds the ground truth's %zu hits per query (compute "
                        "the ground truth with -k %zu or more)",
                        o->k, t->k, o->k);
  if (o->concurrency < 1 || o->concurrency > BENCH_MAX_WORKERS)
    return vf_error_set(err, VF_EUSAGE, "bench: --concurrency must be in 1..%d, got %d",
                        BENCH_MAX_WORKERS, o->concurrency);
  if (o->rps < 0 || isnan(o->rps) || isinf(o->rps))
    return vf_error_set(err, VF_EUSAGE, "bench: --rps must be a positive rate");
  if (o->max_outstanding < 0)
    return vf_error_set(err, VF_EUSAGE, "bench: --max-outstanding must be positive");
  if (q->n == 0 || !rows) return vf_error_set(err, VF_EUSAGE, "bench: no queries");
  const char *stype = o->store.type && *o->store.type ? o->store.type : "local";
  if (o->nprobe && strcmp(stype, "local") != 0)
    return vf_error_set(err, VF_EUSAGE, "bench: --nprobe applies to the local store's IVF index "
                        "(this store is %s)", stype);
  if (o->qdrant && strcmp(stype, "qdrant") != 0)
    return vf_error_set(err, VF_EUSAGE, "bench: --hnsw-ef, --exact, --oversampling and --rescore "
                        "apply to qdrant stores (this store is %s)", stype);
  bench_ctx c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.q = q;
  c.t = t;
  c.rows = rows;
  atomic_init(&c.next, 0);
  atomic_init(&c.warm_next, 0);
  pthread_mutex_init(&c.mu, NULL);
  pthread_cond_init(&c.cv, NULL);
  pthread_cond_init(&c.go_cv, NULL);
  int nw = o->concurrency;
  if (o->rps > 0) {
    int mo = o->max_outstanding ? o->max_outstanding : (4 * nw > 64 ? 4 * nw : 64);
    c.cap = (size_t)mo;
  }
  c.lat = vf_mallocarray(q->n, sizeof *c.lat);
  c.rmin = vf_calloc(q->n, sizeof *c.rmin);
  c.rmax = vf_calloc(q->n, sizeof *c.rmax);
  c.scored = vf_calloc(q->n, sizeof *c.scored);
  c.sched = o->rps > 0 ? vf_calloc(q->n, sizeof *c.sched) : NULL;
  c.ring = o->rps > 0 ? vf_calloc(c.cap, sizeof *c.ring) : NULL;
  bench_worker *ws = vf_calloc((size_t)nw, sizeof *ws);
  vf_status st = VF_OK;
  if (!c.lat || !c.rmin || !c.rmax || !c.scored || !ws || (o->rps > 0 && (!c.sched || !c.ring))) {
    st = vf_error_set(err, VF_ENOMEM, "bench: out of memory (%zu queries)", q->n);
    goto out;
  }
  for (size_t i = 0; i < q->n; i++) c.lat[i] = -1;
  /* `concurrency` clients of their own, not pool tasks: they meet at a start barrier and each
   * holds a store handle for the whole run, and a pool task must never wait for another
   * (vforge/pool.h); the count is the load to put on the store, not a CPU count */
  int started = 0;
  for (int i = 0; i < nw; i++) {
    ws[i].c = &c;
    if (pthread_create(&ws[i].th, NULL, worker_main, &ws[i]) != 0) {
      pthread_mutex_lock(&c.mu);
      if (!c.failed_open) {
        c.failed_open = 1;
        vf_error_set(&c.open_err, VF_ENOMEM, "bench: cannot start worker thread %d", i);
      }
      pthread_cond_broadcast(&c.go_cv);
      pthread_mutex_unlock(&c.mu);
      break;
    }
    ws[i].started = true;
    started++;
  }
  /* wait until every worker has its handle warmed up (or one failed) */
  pthread_mutex_lock(&c.mu);
  while (c.ready < started && !c.failed_open) pthread_cond_wait(&c.go_cv, &c.mu);
  if (!c.failed_open) {
    c.t0 = now_s();
    c.last_end = c.t0;
    c.go = true;
  }
  pthread_cond_broadcast(&c.go_cv);
  pthread_mutex_unlock(&c.mu);
  size_t dropped = 0;
  if (c.go && o->rps > 0) schedule(&c, &dropped);
  for (int i = 0; i < nw; i++)
    if (ws[i].started) pthread_join(ws[i].th, NULL);
  if (!c.go) {
    st = c.open_err.code != VF_OK ? c.open_err.code : VF_EINTERNAL;
    vf_error_set(err, st, "%s", c.open_err.msg);
    goto out;
  }
  VF_TRY(vf_check_cancel(err));
  /* report */
  rep->k = o->k;
  rep->queries = q->n;
  rep->errors = c.errors;
  rep->dropped = dropped;
  rep->workers = nw;
  rep->open_loop = o->rps > 0;
  rep->rps = o->rps;
  rep->first_error_status = c.first_status;
  memcpy(rep->first_error, c.first_error, sizeof rep->first_error);
  rep->seconds = c.last_end - c.t0;
  rep->warmup = o->warmup;
  rep->max_outstanding = c.cap;
  if (o->per_query) { /* before c.lat is compacted below */
    rep->query_ms = vf_mallocarray(q->n, sizeof *rep->query_ms);
    rep->query_recall = vf_mallocarray(q->n, sizeof *rep->query_recall);
    rep->query_recall_max = vf_mallocarray(q->n, sizeof *rep->query_recall_max);
    if (!rep->query_ms || !rep->query_recall || !rep->query_recall_max) {
      bench_report_free(rep);
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "bench: out of memory (per-query results of %zu queries)", q->n));
    }
    for (size_t i = 0; i < q->n; i++) {
      rep->query_ms[i] = c.lat[i] >= 0 ? c.lat[i] * 1e3 : -1;
      rep->query_recall[i] = c.rmin[i];
      rep->query_recall_max[i] = c.rmax[i];
    }
  }
  size_t na = 0, ns = 0;
  double smin = 0, smax = 0;
  for (size_t i = 0; i < q->n; i++) {
    rep->filtered += q->filters && q->filters[i];
    if (c.lat[i] >= 0) {
      c.lat[na++] = c.lat[i] * 1e3;
      if (!c.scored[i]) continue; /* no true hit: counted, left out of the means */
      ns++;
      smin += c.rmin[i];
      smax += c.rmax[i];
    }
  }
  rep->answered = na;
  rep->no_truth = na - ns;
  if (ns) {
    rep->recall_min = smin / (double)ns;
    rep->recall_max = smax / (double)ns;
  }
  if (na) {
    qsort(c.lat, na, sizeof *c.lat, cmp_double);
    rep->recall = rep->recall_min;
    rep->p50_ms = bench_percentile(c.lat, na, 50);
    rep->p95_ms = bench_percentile(c.lat, na, 95);
    rep->p99_ms = bench_percentile(c.lat, na, 99);
    rep->max_ms = c.lat[na - 1];
  }
  rep->qps = rep->seconds > 0 ? (double)na / rep->seconds : 0;
  if (na == 0) bench_report_free(rep);
  if (na == 0 && c.first_status != VF_OK) st = vf_error_set(err, c.first_status, "%s", c.first_error);
  else if (na == 0) st = vf_error_set(err, VF_EIO, "bench: every query was dropped (raise --max-outstanding or lower --rps)");
out:
  for (int i = 0; ws && i < nw; i++) store_close(ws[i].h);
  free(ws);
  free(c.lat);
  free(c.rmin);
  free(c.rmax);
  free(c.scored);
  free(c.sched);
  free(c.ring);
  pthread_mutex_destroy(&c.mu);
  pthread_cond_destroy(&c.cv);
  pthread_cond_destroy(&c.go_cv);
  return st;
}

void bench_report_free(bench_report *r) {
  if (!r) return;
  free(r->query_ms);
  free(r->query_recall);
  free(r->query_recall_max);
  r->query_ms = r->query_recall = r->query_recall_max = NULL;
}

/* the members of bench_report_json()'s object, without the braces (bench_point_json() shares
 * them) */
vf_status bench_report_members(const bench_report *r, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(out, err, "\"k\":%zu,\"queries\":%zu,\"recall\":", r->k, r->queries));
  VF_TRY(vf_json_f64(out, r->recall, err));
  VF_TRY(vf_json_raw(out, ",\"recall_min\":", err));
  VF_TRY(vf_json_f64(out, r->recall_min, err));
  VF_TRY(vf_json_raw(out, ",\"recall_max\":", err));
  VF_TRY(vf_json_f64(out, r->recall_max, err));
  VF_TRY(vf_json_raw(out, ",\"qps\":", err));
  VF_TRY(vf_json_f64(out, r->qps, err));
  VF_TRY(vf_json_raw(out, ",\"latency_ms\":{\"p50\":", err));
  VF_TRY(vf_json_f64(out, r->p50_ms, err));
  VF_TRY(vf_json_raw(out, ",\"p95\":", err));
  VF_TRY(vf_json_f64(out, r->p95_ms, err));
  VF_TRY(vf_json_raw(out, ",\"p99\":", err));
  VF_TRY(vf_json_f64(out, r->p99_ms, err));
  VF_TRY(vf_json_raw(out, ",\"max\":", err));
  VF_TRY(vf_json_f64(out, r->max_ms, err));
  VF_TRY(vf_buf_printf(out, err, "},\"errors\":%zu", r->errors));
  if (r->filtered)
    VF_TRY(vf_buf_printf(out, err, ",\"filtered_queries\":%zu,\"no_truth_queries\":%zu", r->filtered,
                         r->no_truth));
out:
  return st;
}

vf_status bench_report_json(const bench_report *r, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(out, "{", err));
  VF_TRY(bench_report_members(r, out, err));
  VF_TRY(vf_json_raw(out, "}\n", err));
out:
  return st;
}
