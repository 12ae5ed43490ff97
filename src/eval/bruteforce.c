/*
 * vforge brute-force: exact top-K ground truth (issue 5, DESIGN.md "Corpus layout").
 *
 * The corpus is streamed once, one row group at a time (memory: the queries, K hits per query
 * and one decoded row group).  For each row group the queries are split over the worker threads;
 * each worker scores its queries against blocks of rows with a blocked sgemm (OpenBLAS, one
 * thread per caller) for dot / cosine (both sides unit-normalised) / euclid (|q|^2 + |x|^2 -
 * 2 q.x), or the SIMD L1 kernel of index.h for manhattan.
 *
 * Those fast scores only FILTER: BLAS rounding depends on matrix shapes and blocking, so a row is
 * a candidate when its fast score plus a rigorous error margin (gamma = (d+16) * 2^-21, well
 * above the d*u bound of a float dot product, scaled by |q||x|, (|q|+|x|)^2 or the L1 itself)
 * reaches the current K-th best exact score.  Every candidate is then re-scored by one scalar
 * kernel with double accumulation in index order and rounded to float, and kept in a per-query
 * heap ordered by (score, point id).  The result therefore depends only on the data: byte-
 * identical whatever the thread count, block sizes or number of jobs (the merge of partial
 * top-Ks is the same selection).  Scores: cosine similarity, dot, -L2, -L1 (larger = nearer).
 */
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bf_internal.h"
#include "vforge/index.h"

#define BF_QB 1024    /* queries per sgemm */
#define BF_RB 2048    /* rows per sgemm */
#define BF_K_MAX 100000u
#define BF_KEY_SHIFT 40

typedef struct bf_scan {
  const corpus_files *files;
  corpus_distance metric;
  size_t d;
  uint64_t nq;
  const float *q;      /* raw queries */
  float *qn;           /* cosine: normalised queries; else = q */
  double *qq;          /* exact sum of squares per query (fixed order) */
  float *qnorm;        /* |q| (float) for margins */
  idx_topk *heaps;
  double gamma;
  /* current block */
  const float *x;      /* raw rows */
  const float *xn;     /* cosine: normalised rows; else = x */
  const double *xx;    /* exact sums of squares per row */
  const float *xnorm;  /* |x| */
  const uint8_t *null_rows;
  size_t nrows;
  int64_t key0;        /* key of row 0 of the block */
  const idx_kernels *kern;
} bf_scan;

typedef struct bf_worker {
  bf_scan *s;
  uint64_t q0, q1;
  float *c;            /* BF_QB * BF_RB scores */
  uint64_t rescored;
} bf_worker;

/* tie order: the point id text of each key */
static int bf_tie(const void *user, int64_t a, int64_t b) {
  const corpus_files *files = user;
  char ia[37], ib[37];
  const corpus_file *fa = &files->files[(size_t)((uint64_t)a >> BF_KEY_SHIFT)];
  const corpus_file *fb = &files->files[(size_t)((uint64_t)b >> BF_KEY_SHIFT)];
  uint64_t mask = ((uint64_t)1 << BF_KEY_SHIFT) - 1;
  corpus_point_id(fa->key, strlen(fa->key), (uint64_t)a & mask, ia);
  corpus_point_id(fb->key, strlen(fb->key), (uint64_t)b & mask, ib);
  return strcmp(ia, ib);
}

static double sumsq(const float *v, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; i++) s += (double)v[i] * (double)v[i];
  return s;
}

/* the one exact kernel: double accumulation in index order, rounded to float once */
static float exact_score(corpus_distance m, const float *q, double qq, const float *x, double xx,
                         size_t d) {
  double s = 0;
  switch (m) {
    case CORPUS_DOT:
      for (size_t i = 0; i < d; i++) s += (double)q[i] * (double)x[i];
      return (float)s;
    case CORPUS_COSINE:
      for (size_t i = 0; i < d; i++) s += (double)q[i] * (double)x[i];
      if (qq == 0 || xx == 0) return 0.0f;
      return (float)(s / (sqrt(qq) * sqrt(xx)));
    case CORPUS_EUCLID:
      for (size_t i = 0; i < d; i++) {
        double t = (double)q[i] - (double)x[i];
        s += t * t;
      }
      return (float)-sqrt(s) + 0.0f; /* -0 -> +0 */
    case CORPUS_MANHATTAN:
    default:
      for (size_t i = 0; i < d; i++) s += fabs((double)q[i] - (double)x[i]);
      return (float)-s + 0.0f;
  }
}

/* the fast-score threshold a row must reach to be re-scored, given the K-th best exact score */
static inline double fast_threshold(corpus_distance m, float w) {
  double aw = fabs((double)w) * (1.0 + 0x1p-21);
  switch (m) {
    case CORPUS_EUCLID: return -(aw * aw);
    default: return (double)w - fabs((double)w) * 0x1p-21;
  }
}

/* largest value of (fast score + 1.25 x margin) over rows [j0, j1) of one query: a float
 * upper bound used to skip whole spans before the exact double-precision test (the extra
 * quarter of the margin covers this float evaluation's own rounding) */
static float span_bound(const bf_scan *s, const float *f, size_t r0, size_t j0, size_t j1, float qnm) {
  float g = (float)(s->gamma * 1.25), best = -INFINITY;
  const float *xn = s->xnorm + r0;
  switch (s->metric) {
    case CORPUS_DOT:
      for (size_t j = j0; j < j1; j++) {
        float v = f[j] + g * qnm * xn[j];
        best = v > best ? v : best;
      }
      break;
    case CORPUS_COSINE:
      for (size_t j = j0; j < j1; j++) best = f[j] > best ? f[j] : best;
      best += 4 * g;
      break;
    case CORPUS_EUCLID:
      for (size_t j = j0; j < j1; j++) {
        float t = qnm + xn[j];
        float v = 2 * f[j] - qnm * qnm - xn[j] * xn[j] + g * t * t;
        best = v > best ? v : best;
      }
      break;
    default:
      for (size_t j = j0; j < j1; j++) {
        float v = f[j] - g * f[j]; /* f <= 0: |f| = -f */
        best = v > best ? v : best;
      }
      break;
  }
  return best;
}

#define BF_SPAN 64

static void filter_block(bf_worker *wk, uint64_t qa, size_t nqb, size_t r0, size_t nr) {
  bf_scan *s = wk->s;
  size_t d = s->d;
  for (size_t i = 0; i < nqb; i++) {
    uint64_t qi = qa + i;
    idx_topk *h = &s->heaps[qi];
    const float *row = wk->c + i * nr;
    double qnm = s->qnorm[qi], g = s->gamma;
    double thr = -INFINITY;
    if (h->n == h->k) thr = fast_threshold(s->metric, h->heap[0].score);
    for (size_t j0 = 0; j0 < nr; j0 += BF_SPAN) {
      size_t j1 = nr - j0 < BF_SPAN ? nr : j0 + BF_SPAN;
      if (thr > -INFINITY) {
        double b = span_bound(s, row, r0, j0, j1, (float)qnm);
        if (b < thr * (thr < 0 ? 1.0 + 0x1p-20 : 1.0 - 0x1p-20)) continue;
      }
      for (size_t j = j0; j < j1; j++) {
        size_t rj = r0 + j;
        double f = row[j];
        if (s->metric == CORPUS_EUCLID) f = 2 * f - s->qq[qi] - s->xx[rj];
        double margin;
        switch (s->metric) {
          case CORPUS_DOT: margin = g * qnm * s->xnorm[rj]; break;
          case CORPUS_COSINE: margin = 4 * g; break;
          case CORPUS_EUCLID: {
            double t = qnm + s->xnorm[rj];
            margin = g * t * t;
            break;
          }
          default: margin = g * fabs(f); break;
        }
        if (!(f + margin >= thr)) continue;
        if (s->null_rows && s->null_rows[rj]) continue;
        float e = exact_score(s->metric, s->q + qi * d, s->qq[qi], s->x + rj * d, s->xx[rj], d);
        wk->rescored++;
        idx_topk_push(h, e, s->key0 + (int64_t)rj);
        if (h->n == h->k) thr = fast_threshold(s->metric, h->heap[0].score);
      }
    }
  }
}

static void *worker_run(void *arg) {
  bf_worker *wk = arg;
  bf_scan *s = wk->s;
  size_t d = s->d;
  for (uint64_t qa = wk->q0; qa < wk->q1; qa += BF_QB) {
    size_t nqb = (size_t)(wk->q1 - qa < BF_QB ? wk->q1 - qa : BF_QB);
    for (size_t r0 = 0; r0 < s->nrows; r0 += BF_RB) {
      size_t nr = s->nrows - r0 < BF_RB ? s->nrows - r0 : BF_RB;
      if (s->metric == CORPUS_MANHATTAN) {
        for (size_t i = 0; i < nqb; i++) {
          float *out = wk->c + i * nr;
          s->kern->l1_batch(s->q + (qa + i) * d, s->x + r0 * d, nr, d, out);
          for (size_t j = 0; j < nr; j++) out[j] = -out[j];
        }
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)nqb, (blasint)nr, (blasint)d,
                    1.0f, s->qn + qa * d, (blasint)d, s->xn + r0 * d, (blasint)d, 0.0f, wk->c,
                    (blasint)nr);
        /* euclid: the block holds q.x; filter_block() forms 2 q.x - |q|^2 - |x|^2 */
      }
      filter_block(wk, qa, nqb, r0, nr);
    }
  }
  return NULL;
}

/* ------------------------------------------------------- prefetching reader */

/* The reader thread decodes the next row group (and its norms) while the workers score the
 * current one: two slots, handed over under a mutex. */
typedef struct bf_slot {
  pqt_leaf_data leaf;
  pqt_dense dense;
  float *xn, *xnorm;
  double *xx;
  size_t cap, n, fi;
  int64_t first;
  int state; /* 0 empty, 1 full, 2 end of data, 3 error */
} bf_slot;

typedef struct bf_reader {
  const corpus_files *files;
  const eval_bf_opts *o;
  uint32_t jobs;
  int32_t dim;
  size_t d;
  bf_slot slot[2];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stop;
  vf_status st;
  vf_error err;
  char *vec_name;
  uint64_t files_read;
} bf_reader;

static vf_status fill_slot(bf_reader *r, bf_slot *sl, pqt_file *f, int top, int rg, size_t fi,
                           int64_t first, vf_error *err) {
  size_t d = r->d;
  int32_t dim = r->dim;
  vf_status st = ev_read_dense(f, top, rg, first, &dim, &sl->leaf, &sl->dense, err);
  if (st != VF_OK) return st;
  if (dim != r->dim)
    return vf_error_set(err, VF_ECORRUPT, "%s: vectors have dimension %d but the queries %d",
                        r->files->files[fi].key, dim, r->dim);
  size_t n = (size_t)sl->dense.rows;
  bool cos = r->o->metric == CORPUS_COSINE;
  if (n > sl->cap) {
    free(sl->xn);
    free(sl->xnorm);
    free(sl->xx);
    sl->xn = cos ? vf_mallocarray(n, sizeof(float) * d) : NULL;
    sl->xnorm = vf_mallocarray(n, sizeof(float));
    sl->xx = vf_mallocarray(n, sizeof(double));
    sl->cap = n;
    if (!sl->xnorm || !sl->xx || (cos && !sl->xn)) {
      sl->cap = 0;
      return vf_error_set(err, VF_ENOMEM, "out of memory for a row group of %zu rows", n);
    }
  }
  for (size_t j = 0; j < n; j++) {
    sl->xx[j] = sumsq(sl->dense.data + j * d, d);
    sl->xnorm[j] = (float)sqrt(sl->xx[j]);
  }
  if (cos) {
    memcpy(sl->xn, sl->dense.data, sizeof(float) * d * n);
    idx_normalize_rows(sl->xn, n, d);
  }
  sl->n = n;
  sl->fi = fi;
  sl->first = first;
  return VF_OK;
}

/* wait for slot `si` to be empty; false when told to stop */
static bool wait_empty(bf_reader *r, int si) {
  pthread_mutex_lock(&r->mu);
  while (r->slot[si].state != 0 && !r->stop) pthread_cond_wait(&r->cv, &r->mu);
  bool ok = !r->stop;
  pthread_mutex_unlock(&r->mu);
  return ok;
}

static void publish(bf_reader *r, int si, int state) {
  pthread_mutex_lock(&r->mu);
  r->slot[si].state = state;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static void *reader_run(void *arg) {
  bf_reader *r = arg;
  const eval_bf_opts *o = r->o;
  int si = 0;
  vf_status st = VF_OK;
  for (size_t fi = 0; st == VF_OK && fi < r->files->n; fi++) {
    if (fi % r->jobs != o->job_rank) continue;
    pqt_file *f = NULL;
    int top = -1;
    st = ev_open(&r->files->files[fi], &f, &r->err);
    if (st == VF_OK) st = ev_vector_top(f, o->column ? o->column : r->vec_name, &top, &r->err);
    if (st == VF_OK && !r->vec_name) {
      r->vec_name = vf_strdup(pqt_schema_of(f)->nodes[top].name);
      if (!r->vec_name) st = vf_error_set(&r->err, VF_ENOMEM, "out of memory");
    }
    const pqt_file_meta *m = st == VF_OK ? pqt_meta(f) : NULL;
    int64_t first = 0;
    if (st == VF_OK) r->files_read++;
    for (int rg = 0; st == VF_OK && rg < m->nrow_groups; rg++) {
      int64_t nr = m->row_groups[rg].num_rows;
      if (nr <= 0) continue;
      if (!wait_empty(r, si)) {
        pqt_close(f);
        return NULL;
      }
      st = fill_slot(r, &r->slot[si], f, top, rg, fi, first, &r->err);
      if (st != VF_OK) break;
      publish(r, si, 1);
      si ^= 1;
      first += nr;
    }
    pqt_close(f);
  }
  r->st = st;
  if (wait_empty(r, si)) publish(r, si, st == VF_OK ? 2 : 3);
  return NULL;
}

/* eval_brute_force(): see eval.h. */
vf_status eval_brute_force(const corpus_files *files, const eval_bf_opts *o, eval_bf_result *out,
                           vf_error *err) {
  memset(out, 0, sizeof *out);
  double t0 = vf_now();
  uint32_t jobs = o->num_jobs ? o->num_jobs : 1;
  if (o->k < 1 || o->k > BF_K_MAX)
    return vf_error_set(err, VF_EUSAGE, "brute-force: -k must be 1..%u", BF_K_MAX);
  if (o->job_rank >= jobs)
    return vf_error_set(err, VF_EUSAGE, "brute-force: --job-rank %u must be below --num-jobs %u",
                        o->job_rank, jobs);
  if (files->n >= ((size_t)1 << 23))
    return vf_error_set(err, VF_EUSAGE, "brute-force: too many files (%zu)", files->n);
  ev_queries q;
  vf_status st = ev_queries_read(o->queries, o->column, &q, err);
  if (st != VF_OK) return st;
  int threads = o->threads > 0 ? o->threads : vf_threads();
  if (threads < 1) threads = 1;
  if ((uint64_t)threads > q.n) threads = (int)(q.n ? q.n : 1);
  size_t d = (size_t)q.dim;
  bf_scan s = {.files = files, .metric = o->metric, .d = d, .nq = q.n, .q = q.vecs,
               .kern = idx_kernels_active()};
  s.gamma = ((double)d + 16.0) * 0x1p-21;
  s.qq = vf_mallocarray(q.n ? q.n : 1, sizeof(double));
  s.qnorm = vf_mallocarray(q.n ? q.n : 1, sizeof(float));
  s.heaps = vf_calloc(q.n ? q.n : 1, sizeof(idx_topk));
  bf_worker *wk = vf_calloc((size_t)threads, sizeof *wk);
  pthread_t *tid = vf_calloc((size_t)threads, sizeof *tid);
  if (!s.qq || !s.qnorm || !s.heaps || !wk || !tid) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  for (uint64_t i = 0; st == VF_OK && i < q.n; i++) {
    s.qq[i] = sumsq(q.vecs + i * d, d);
    s.qnorm[i] = (float)sqrt(s.qq[i]);
    st = idx_topk_init(&s.heaps[i], o->k, bf_tie, files, err);
  }
  if (st == VF_OK && o->metric == CORPUS_COSINE) {
    s.qn = vf_mallocarray(q.n ? q.n : 1, sizeof(float) * d);
    if (!s.qn) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    else {
      memcpy(s.qn, q.vecs, sizeof(float) * d * q.n);
      idx_normalize_rows(s.qn, q.n, d);
    }
  } else {
    s.qn = q.vecs;
  }
  for (int t = 0; st == VF_OK && t < threads; t++) {
    wk[t].s = &s;
    wk[t].q0 = q.n * (uint64_t)t / (uint64_t)threads;
    wk[t].q1 = q.n * (uint64_t)(t + 1) / (uint64_t)threads;
    uint64_t span = wk[t].q1 - wk[t].q0;
    wk[t].c = vf_mallocarray((size_t)(span < BF_QB ? (span ? span : 1) : BF_QB) * BF_RB, sizeof(float));
    if (!wk[t].c) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  openblas_set_num_threads(1);
  bf_reader rd;
  memset(&rd, 0, sizeof rd);
  rd.files = files;
  rd.o = o;
  rd.jobs = jobs;
  rd.dim = q.dim;
  rd.d = d;
  vf_error_clear(&rd.err);
  pthread_mutex_init(&rd.mu, NULL);
  pthread_cond_init(&rd.cv, NULL);
  for (int i = 0; i < 2; i++) {
    pqt_leaf_data_init(&rd.slot[i].leaf);
    memset(&rd.slot[i].dense, 0, sizeof rd.slot[i].dense);
  }
  pthread_t rtid;
  uint64_t files_in_job = 0;
  for (size_t fi = 0; fi < files->n; fi++) files_in_job += fi % jobs == o->job_rank;
  bool reader_started = false;
  if (st == VF_OK) {
    if (pthread_create(&rtid, NULL, reader_run, &rd) != 0)
      st = vf_error_set(err, VF_EINTERNAL, "brute-force: cannot start the reader thread");
    else reader_started = true;
  }
  for (int si = 0; st == VF_OK; si ^= 1) {
    bf_slot *sl = &rd.slot[si];
    pthread_mutex_lock(&rd.mu);
    while (sl->state == 0) pthread_cond_wait(&rd.cv, &rd.mu);
    int state = sl->state;
    pthread_mutex_unlock(&rd.mu);
    if (state != 1) break; /* 2: end, 3: error (reported after the join) */
    s.x = sl->dense.data;
    s.xn = o->metric == CORPUS_COSINE ? sl->xn : sl->dense.data;
    s.xx = sl->xx;
    s.xnorm = sl->xnorm;
    s.null_rows = sl->dense.null_rows;
    s.nrows = sl->n;
    s.key0 = (int64_t)(((uint64_t)sl->fi << BF_KEY_SHIFT) | (uint64_t)sl->first);
    for (int t = 1; t < threads; t++)
      if (pthread_create(&tid[t], NULL, worker_run, &wk[t]) != 0) {
        worker_run(&wk[t]);
        tid[t] = 0;
      }
    worker_run(&wk[0]);
    for (int t = 1; t < threads; t++)
      if (tid[t]) pthread_join(tid[t], NULL);
    out->rows_scanned += sl->n;
    vf_progress pr = {.phase = "brute-force", .rows_done = out->rows_scanned,
                      .files_done = sl->fi / jobs, .files_total = files_in_job,
                      .elapsed_s = vf_now() - t0};
    vf_progress_emit(&pr);
    pthread_mutex_lock(&rd.mu);
    sl->state = 0;
    pthread_cond_broadcast(&rd.cv);
    pthread_mutex_unlock(&rd.mu);
  }
  if (reader_started) {
    pthread_mutex_lock(&rd.mu);
    rd.stop = true;
    pthread_cond_broadcast(&rd.cv);
    pthread_mutex_unlock(&rd.mu);
    pthread_join(rtid, NULL);
    if (st == VF_OK && rd.st != VF_OK) {
      *err = rd.err;
      st = rd.st;
    }
  }
  char *vec_name = rd.vec_name;
  out->files = rd.files_read;
  openblas_set_num_threads(vf_threads());
  /* results */
  ev_hit *hits = NULL;
  uint32_t *nhits = NULL;
  if (st == VF_OK) {
    hits = vf_mallocarray(q.n ? q.n * o->k : 1, sizeof *hits);
    nhits = vf_calloc(q.n ? q.n : 1, sizeof *nhits);
    idx_hit *tmp = vf_mallocarray(o->k, sizeof *tmp);
    if (!hits || !nhits || !tmp) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    for (uint64_t i = 0; st == VF_OK && i < q.n; i++) {
      size_t nh = idx_topk_sorted(&s.heaps[i], tmp);
      nhits[i] = (uint32_t)nh;
      for (size_t h = 0; h < nh; h++) {
        uint64_t key = (uint64_t)tmp[h].key;
        const corpus_file *cf = &files->files[(size_t)(key >> BF_KEY_SHIFT)];
        ev_hit *e = &hits[i * o->k + h];
        e->score = tmp[h].score;
        corpus_point_id(cf->key, strlen(cf->key), key & (((uint64_t)1 << BF_KEY_SHIFT) - 1), e->id);
      }
    }
    free(tmp);
  }
  char *path = NULL;
  char **kv = NULL;
  int nkv = 0;
  if (st == VF_OK) {
    char cmd5[33];
    ev_corpus_md5(files, cmd5);
    bool partial = o->num_jobs > 0;
    const char *col = o->column ? o->column : (vec_name ? vec_name : q.vec_name);
    st = ev_metadata_kv(&q, o->k, o->metric, col, cmd5, jobs, o->job_rank, partial, &kv, &nkv, err);
    if (st == VF_OK) {
      if (o->output) path = vf_strdup(o->output);
      else if (partial)
        path = ev_strdupf(err, "%s/eval/_bf_partial_queries_%" PRIu64 "_k%u/rank%03u.parquet",
                          files->prefix, q.n, o->k, o->job_rank);
      else
        path = ev_strdupf(err, "%s/eval/brute_force_queries_%" PRIu64 "_k%u.parquet", files->prefix,
                          q.n, o->k);
      if (!path) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    }
    if (st == VF_OK) st = ev_results_write(path, &q, o->k, hits, nhits, (const char *const *)kv, nkv, err);
  }
  if (st == VF_OK) {
    out->path = path;
    path = NULL;
    out->queries = q.n;
  }
  for (int t = 0; t < threads && wk; t++) out->rescored += wk[t].rescored;
  out->seconds = vf_now() - t0;
  ev_kv_free(kv, nkv);
  free(path);
  free(hits);
  free(nhits);
  free(vec_name);
  for (int i = 0; i < 2; i++) {
    pqt_leaf_data_free(&rd.slot[i].leaf);
    pqt_dense_free(&rd.slot[i].dense);
    free(rd.slot[i].xn);
    free(rd.slot[i].xnorm);
    free(rd.slot[i].xx);
  }
  pthread_mutex_destroy(&rd.mu);
  pthread_cond_destroy(&rd.cv);
  for (int t = 0; wk && t < threads; t++) free(wk[t].c);
  free(wk);
  free(tid);
  for (uint64_t i = 0; s.heaps && i < q.n; i++) idx_topk_free(&s.heaps[i]);
  free(s.heaps);
  if (s.qn != q.vecs) free(s.qn);
  free(s.qq);
  free(s.qnorm);
  ev_queries_free(&q);
  return st;
}
