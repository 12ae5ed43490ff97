/*
 * vforge brute-force: exact top-K ground truth (issue 5, DESIGN.md "Corpus layout").
 *
 * The corpus is streamed once, one row group at a time (memory: the queries, K hits per query
 * per worker and one decoded row group).  Each row group's rows are cut into chunks handed out one
 * at a time to the process pool's workers (vforge/pool.h: a busy core takes fewer chunks instead
 * of holding back a fixed share); each chunk's rows are scored against every query in tiles of
 * BF_QB queries x BF_RB rows with a blocked sgemm (vf_sgemm_nt: the BLAS, one thread per caller)
 * for dot / cosine (both sides unit-normalised) / euclid (|q|^2 + |x|^2 - 2 q.x), or the SIMD L1
 * kernel of index.h for manhattan.  Each worker keeps its own heaps, merged after each row group;
 * the K-th best exact score of any heap is shared per query as the filter's threshold.
 *
 * Those fast scores only FILTER: BLAS rounding depends on matrix shapes and blocking, so a row is
 * a candidate when its fast score plus a rigorous error margin (gamma = (d+16) * 2^-21, well
 * above the d*u bound of a float dot product, scaled by |q||x|, (|q|+|x|)^2 or the L1 itself)
 * reaches the current K-th best exact score (or the K-th best lower bound of the candidates the
 * worker holds: filter_block).  Candidates wait per query until the end of the block (or until
 * BF_PEND of them wait); those that still reach the threshold then are re-scored by one exact
 * kernel (bf_exact.c: double accumulation in a fixed order, the same bits on every CPU) and
 * rounded to float, and kept in a per-query heap ordered by (score, point id).  The result
 * therefore depends only on the data: byte-
 * identical whatever the thread count, block sizes or number of jobs (the merge of partial
 * top-Ks is the same selection).  Scores: cosine similarity, dot, -L2, -L1 (larger = nearer).
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bf_internal.h"
#include "vforge/index.h"
#include "vforge/pool.h"

#define BF_QB 1024    /* queries per sgemm */
#define BF_RB 2048    /* rows per sgemm */
#define BF_K_MAX 100000u
#define BF_KEY_SHIFT 40

typedef struct bf_scan {
  const corpus_files *files;
  const ev_ids *ids;
  corpus_distance metric;
  size_t d;
  uint64_t nq;
  const float *q;      /* raw queries */
  float *qn;           /* cosine: normalised queries; else = q */
  double *qq;          /* exact sum of squares per query (fixed order) */
  float *qnorm;        /* |q| (float) for margins */
  idx_topk *heaps;
  _Atomic(float) *bound; /* per query: the best k-th exact score of any worker's heap (or -inf) */
  _Atomic(float) *lbound; /* per query: the best filter_block lower-bound threshold (tlow, rounded
                           * down) of any worker (or -inf); nq entries after bound's */
  double gamma;
  /* current block */
  const float *x;      /* raw rows */
  const float *xn;     /* cosine: normalised rows; else = x */
  const double *xx;    /* exact sums of squares per row */
  const float *xnorm;  /* |x| */
  const uint8_t *null_rows;
  size_t nrows;
  int64_t key0;        /* key of row 0 of the block */
  const uint64_t *rows; /* records: the physical row of each block row (key = key_hi | row) */
  uint64_t key_hi;
  const idx_kernels *kern;
  const ev_filters *flt; /* per-query filters (NULL or flt->per_query NULL: none) */
  const flt_docs *docs;  /* the payloads of the current block's rows */
  bool prefiltered;      /* the block holds only rows that match (slot_compact) */
} bf_scan;

/* a pending candidate that reaches the threshold at a flush: its upper bound (fast score +
 * margin) and block row */
typedef struct bf_cand {
  double ub;
  uint32_t row;
} bf_cand;

typedef struct bf_worker {
  bf_scan *s;
  size_t r0, r1;       /* the rows of the current block it scores now */
  float *c;            /* min(nq, BF_QB) * BF_RB scores */
  idx_topk *heaps;     /* its own top k per query (worker 0: s->heaps), merged by bf_workers_merge */
  /* per query of the current query tile (span = min(nq, BF_QB) of them): the candidates not
   * re-scored yet (block row, sgemm value; BF_PEND each), and a min-heap of the lowk best lower
   * bounds of the candidates seen since the last flush (lowk 0: none, k too large) */
  uint32_t *prow;
  float *pval;
  uint32_t *npend;
  float *low;
  uint32_t *nlow;
  double *tlow;
  size_t lowk;
  bf_cand *cand;       /* BF_PEND: bf_flush_query's candidates, best upper bound first */
  bool pending;        /* some query holds candidates (bf_flush before the block's rows go) */
  uint64_t rescored;
} bf_worker;

/* Rows per chunk of one block's scoring loop: on one thread BF_RT_ONE rows (whole tiles, in the
 * order a single thread always used; the pool checks for cancellation between chunks); else as few chunks of at most BF_RB rows as give every worker the same
 * number, at least 2 (so a worker slowed by a busy core leaves its share to the others), but at
 * least BF_RT_MIN rows: the BLAS packs the queries once per call, so fewer, larger calls
 * spend less on packing.  A chunk scores its rows against every
 * query (tiles of BF_QB queries x BF_RB rows), so each sgemm has large M and N and the BLAS packs
 * each row and each query once per tile.  Each worker keeps its own heaps; the k-th best exact
 * score any worker has reached for a query is shared (s->bound) as the filter's threshold. */
#define BF_RT_MIN 256
#define BF_RT_ONE (8 * BF_RB) /* rows per chunk on one thread */
#define BF_LOW_K 1024 /* the lower-bound heap (filter_block) is kept for k up to this */
#define BF_PEND 1024  /* candidates per query held for re-scoring (filter_block): with 512 a
                       * 1000-query top-100 scan of 100k rows flushed every query once mid-block
                       * and re-scored 205 rows per query instead of 106 */
static size_t bf_chunk_rows(size_t nrows, int threads) {
  if (threads <= 1 || nrows <= BF_RT_MIN) /* one thread: chunks of whole tiles (cancel points) */
    return nrows < BF_RT_ONE ? (nrows ? nrows : 1) : BF_RT_ONE;
  size_t t = (size_t)threads, n = (nrows + BF_RB - 1) / BF_RB;
  n = (n + t - 1) / t * t;
  if (n < 2 * t) n = 2 * t;
  size_t c = (nrows + n - 1) / n;
  return c < BF_RT_MIN ? BF_RT_MIN : c;
}

/* scratch and heaps for `threads` workers (multi: none needed); the heaps of workers 1.. order
 * ties by `tie` as s->heaps do */
static vf_status bf_workers_init(bf_worker *wk, int threads, bf_scan *s, uint32_t k, bool multi,
                                 idx_tie_fn tie, const void *user, vf_error *err) {
  uint64_t span = s->nq < BF_QB ? s->nq : BF_QB;
  for (int t = 0; t < threads; t++) {
    wk[t].s = s;
    wk[t].heaps = s->heaps;
    if (multi) continue;
    wk[t].c = vf_mallocarray((size_t)(span ? span : 1) * BF_RB, sizeof(float));
    size_t nsp = (size_t)(span ? span : 1);
    wk[t].lowk = k <= BF_LOW_K ? k : 0;
    wk[t].prow = vf_mallocarray(nsp * BF_PEND, sizeof *wk[t].prow);
    wk[t].pval = vf_mallocarray(nsp * BF_PEND, sizeof *wk[t].pval);
    wk[t].npend = vf_calloc(nsp, sizeof *wk[t].npend);
    wk[t].low = vf_mallocarray(nsp * (wk[t].lowk ? wk[t].lowk : 1), sizeof *wk[t].low);
    wk[t].nlow = vf_calloc(nsp, sizeof *wk[t].nlow);
    wk[t].tlow = vf_mallocarray(nsp, sizeof *wk[t].tlow);
    wk[t].cand = vf_mallocarray(BF_PEND, sizeof *wk[t].cand);
    if (!wk[t].c || !wk[t].prow || !wk[t].pval || !wk[t].npend || !wk[t].low || !wk[t].nlow ||
        !wk[t].tlow || !wk[t].cand)
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    for (size_t i = 0; i < nsp; i++) wk[t].tlow[i] = -INFINITY;
    if (t == 0) continue;
    wk[t].heaps = vf_calloc(s->nq ? s->nq : 1, sizeof(idx_topk));
    if (!wk[t].heaps) return vf_error_set(err, VF_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < s->nq; i++) {
      vf_status st = idx_topk_init(&wk[t].heaps[i], k, tie, user, err);
      if (st != VF_OK) return st;
    }
  }
  return VF_OK;
}

/* the k-th best exact score known for query qi: its own heap's when full, or a better one another
 * worker reached (k rows score at least that much, so a row scoring less is no hit) */
static inline float bf_kth(const bf_scan *s, const idx_topk *h, uint64_t qi) {
  float b = atomic_load_explicit(&s->bound[qi], memory_order_relaxed);
  if (h->n == h->k && h->heap[0].score > b) b = h->heap[0].score;
  return b;
}

/* raise the shared lower-bound threshold of query qi to `t` (rounded down to float) */
static inline void bf_raise_low(bf_scan *s, uint64_t qi, double t) {
  float w = (float)t, cur = atomic_load_explicit(&s->lbound[qi], memory_order_relaxed);
  if ((double)w > t) w = nextafterf(w, -INFINITY);
  while (w > cur && !atomic_compare_exchange_weak_explicit(&s->lbound[qi], &cur, w, memory_order_relaxed,
                                                          memory_order_relaxed)) {
  }
}

/* raise the shared bound of query qi to its own heap's k-th best */
static inline void bf_raise(bf_scan *s, const idx_topk *h, uint64_t qi) {
  float w = h->heap[0].score, cur = atomic_load_explicit(&s->bound[qi], memory_order_relaxed);
  while (w > cur && !atomic_compare_exchange_weak_explicit(&s->bound[qi], &cur, w, memory_order_relaxed,
                                                          memory_order_relaxed)) {
  }
}

/* The hits of workers 1.. offered to s->heaps after each block: the same selection (a total
 * order on score and id), so the result does not depend on which worker scored which rows; and
 * the shared bound becomes the K-th best of all the rows scored so far (each worker's own heap
 * only saw its chunks). */
typedef struct bf_merge_job {
  bf_worker *wk;
  int threads;
} bf_merge_job;

#define BF_MERGE_Q 64 /* queries per merge chunk */

static void merge_chunk(void *arg, size_t c, int w) {
  (void)w;
  const bf_merge_job *j = arg;
  bf_scan *s = j->wk[0].s;
  uint64_t q0 = (uint64_t)c * BF_MERGE_Q, q1 = s->nq - q0 < BF_MERGE_Q ? s->nq : q0 + BF_MERGE_Q;
  for (uint64_t i = q0; i < q1; i++) {
    for (int t = 1; t < j->threads; t++) {
      idx_topk *h = &j->wk[t].heaps[i];
      for (size_t e = 0; e < h->n; e++) idx_topk_push(&s->heaps[i], h->heap[e].score, h->heap[e].key);
      idx_topk_reset(h);
    }
    if (s->heaps[i].n == s->heaps[i].k) bf_raise(s, &s->heaps[i], i);
  }
}

static vf_status bf_workers_merge(bf_worker *wk, int threads, vf_error *err) {
  if (threads <= 1 || !wk[0].s->nq) return VF_OK;
  bf_merge_job j = {wk, threads};
  return vf_pool_for((size_t)((wk[0].s->nq + BF_MERGE_Q - 1) / BF_MERGE_Q), threads, merge_chunk, &j, err);
}

static void bf_workers_free(bf_worker *wk, int threads) {
  for (int t = 0; wk && t < threads; t++) {
    free(wk[t].c);
    free(wk[t].prow);
    free(wk[t].pval);
    free(wk[t].npend);
    free(wk[t].low);
    free(wk[t].nlow);
    free(wk[t].tlow);
    free(wk[t].cand);
    if (!wk[t].heaps || wk[t].heaps == wk[t].s->heaps) continue;
    for (uint64_t i = 0; i < wk[t].s->nq; i++) idx_topk_free(&wk[t].heaps[i]);
    free(wk[t].heaps);
  }
  free(wk);
}

/* tie order: the point id text of each key */
static int bf_tie(const void *user, int64_t a, int64_t b) {
  const ev_ids *ids = user;
  char ia[37], ib[37];
  uint64_t mask = ((uint64_t)1 << BF_KEY_SHIFT) - 1;
  ev_id_text(ids, (size_t)((uint64_t)a >> BF_KEY_SHIFT), (uint64_t)a & mask, ia);
  ev_id_text(ids, (size_t)((uint64_t)b >> BF_KEY_SHIFT), (uint64_t)b & mask, ib);
  return strcmp(ia, ib);
}

/* Does row key `key` (block row rj) pass query qi's filter?  Rows that do not are never hits:
 * the check comes after the fast-score test, so it runs only for rows that could enter the top k. */
static bool bf_row_ok(const ev_filters *flt, const ev_ids *ids, const flt_docs *docs, uint64_t qi,
                      size_t rj, int64_t key) {
  const flt_filter *f = flt->per_query[qi];
  if (!f) return true;
  corpus_id id, *idp = NULL;
  if (flt_uses_id(f)) {
    char t[37];
    uint64_t mask = ((uint64_t)1 << BF_KEY_SHIFT) - 1;
    ev_id_text(ids, (size_t)((uint64_t)key >> BF_KEY_SHIFT), (uint64_t)key & mask, t);
    ev_filter_id(t, &id);
    idp = &id;
  }
  return flt_match(f, docs, rj, idp);
}

static double dot_d(const float *q, const float *x, size_t d) { return bf_exact_sum(BF_EX_DOT, q, x, d); }
static double l2sq_d(const float *q, const float *x, size_t d) { return bf_exact_sum(BF_EX_L2SQ, q, x, d); }
static double l1_d(const float *q, const float *x, size_t d) { return bf_exact_sum(BF_EX_L1, q, x, d); }

static double sumsq(const float *v, size_t d) { return dot_d(v, v, d); }

static const char *kind_name(corpus_vec_kind k) {
  return k == CORPUS_VEC_SPARSE ? "sparse" : k == CORPUS_VEC_MULTI ? "a multivector" : "dense";
}

/* the one exact kernel: double accumulation in a fixed order, rounded to float once */
static float exact_score(corpus_distance m, const float *q, double qq, const float *x, double xx,
                         size_t d) {
  switch (m) {
    case CORPUS_DOT: return (float)dot_d(q, x, d);
    case CORPUS_COSINE: {
      double s = dot_d(q, x, d);
      if (qq == 0 || xx == 0) return 0.0f;
      return (float)(s / (sqrt(qq) * sqrt(xx)));
    }
    case CORPUS_EUCLID: return (float)-sqrt(l2sq_d(q, x, d)) + 0.0f; /* -0 -> +0 */
    case CORPUS_MANHATTAN:
    default: return (float)-l1_d(q, x, d) + 0.0f;
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

/* Rows [j0, j1) (at most BF_SPAN) of one query's scores whose float upper bound (fast score +
 * 1.25 x margin; the extra quarter of the margin covers this float evaluation's own rounding)
 * reaches `t`: bit j - j0 of the result.  A row left out has fast score + margin below the
 * threshold `t` was relaxed from (filter_block), so it is no candidate; a NaN bound is left out
 * (its fast score is NaN: no candidate either).  `t` is rounded down to float, so the float test
 * keeps every row the double test on the same bound keeps. */
#define BF_SPAN 64
/* filter_block() reads the threshold (bf_thr) again after a span that held candidates (they may
 * raise its own lower bound) and otherwise every BF_THR_SPANS spans (other workers raise the
 * shared bounds): an older threshold is never higher than the current one, so the spans between
 * keep at least the rows a fresh one would (a flush checks them on the current one) */
#define BF_THR_SPANS 8
static inline float span_value(corpus_distance m, float f, float xn, float qnm, float g) {
  switch (m) {
    case CORPUS_DOT: return f + g * qnm * xn;
    case CORPUS_COSINE: return f + 4 * g;
    case CORPUS_EUCLID: {
      float t = qnm + xn;
      return 2 * f - qnm * qnm - xn * xn + g * t * t;
    }
    default: return f - g * f; /* f <= 0: |f| = -f */
  }
}

static float span_floor(double t) {
  float tf = (float)t;
  if ((double)tf > t) tf = nextafterf(tf, -INFINITY);
  return tf;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
/* span_mask()'s loop eight rows at a time: each row's value by the same float operations in the
 * same order as span_value() (no FMA: the target has none), so the mask is the scalar loop's. */
__attribute__((target("avx2"))) static uint64_t span_mask_avx2(corpus_distance m, const float *f,
                                                               const float *xn, size_t j0, size_t j1,
                                                               float qnm, float g, float t) {
  __m256 vq = _mm256_set1_ps(qnm), vg = _mm256_set1_ps(g), vt = _mm256_set1_ps(t);
  __m256 gq = _mm256_set1_ps(g * qnm), qq = _mm256_set1_ps(qnm * qnm), two = _mm256_set1_ps(2.0f);
  __m256 g4 = _mm256_set1_ps(4 * g);
  uint64_t mask = 0;
  size_t j = j0;
  for (; j + 8 <= j1; j += 8) {
    __m256 vf = _mm256_loadu_ps(f + j), v;
    switch (m) {
      case CORPUS_DOT: v = _mm256_add_ps(vf, _mm256_mul_ps(gq, _mm256_loadu_ps(xn + j))); break;
      case CORPUS_COSINE: v = _mm256_add_ps(vf, g4); break;
      case CORPUS_EUCLID: {
        __m256 x = _mm256_loadu_ps(xn + j), tt = _mm256_add_ps(vq, x);
        v = _mm256_sub_ps(_mm256_sub_ps(_mm256_mul_ps(two, vf), qq), _mm256_mul_ps(x, x));
        v = _mm256_add_ps(v, _mm256_mul_ps(_mm256_mul_ps(vg, tt), tt));
        break;
      }
      default: v = _mm256_sub_ps(vf, _mm256_mul_ps(vg, vf)); break;
    }
    uint64_t b = (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, vt, _CMP_GE_OQ));
    mask |= b << (j - j0);
  }
  for (; j < j1; j++)
    if (span_value(m, f[j], xn[j], qnm, g) >= t) mask |= (uint64_t)1 << (j - j0);
  return mask;
}
#endif

static uint64_t span_mask(const bf_scan *s, const float *f, size_t r0, size_t j0, size_t j1,
                          float qnm, float g, float t) {
  const float *xn = s->xnorm + r0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (s->kern->simd != IDX_SIMD_SCALAR) return span_mask_avx2(s->metric, f, xn, j0, j1, qnm, g, t);
#endif
  uint64_t mask = 0;
  for (size_t j = j0; j < j1; j++)
    if (span_value(s->metric, f[j], xn[j], qnm, g) >= t) mask |= (uint64_t)1 << (j - j0);
  return mask;
}

/* span_mask()'s float threshold for the fast-score threshold `thr` (> -inf): relaxed by 2^-20
 * relative (the float evaluation's rounding), rounded down to float */
static float span_thr(double thr) { return span_floor(thr * (thr < 0 ? 1.0 + 0x1p-20 : 1.0 - 0x1p-20)); }

/* the fast score of query qi and block row rj (f: the sgemm / L1 value) and its error margin */
static inline double bf_fast(const bf_scan *s, uint64_t qi, size_t rj, double f, double *margin) {
  double qnm = s->qnorm[qi], g = s->gamma;
  if (s->metric == CORPUS_EUCLID) f = 2 * f - s->qq[qi] - s->xx[rj];
  switch (s->metric) {
    case CORPUS_DOT: *margin = g * qnm * s->xnorm[rj]; break;
    case CORPUS_COSINE: *margin = 4 * g; break;
    case CORPUS_EUCLID: {
      double t = qnm + s->xnorm[rj];
      *margin = g * t * t;
      break;
    }
    default: *margin = g * fabs(f); break;
  }
  return f;
}

/* the fast-score threshold of query qi: from the k-th best exact score known (bf_kth), the k-th
 * best lower bound of any worker's candidates (s->lbound: k rows of that worker score at least
 * that, so the others sharing it re-score none of the rows below it) or this worker's `tlow` */
static inline double bf_thr(const bf_scan *s, const idx_topk *h, uint64_t qi, double tlow) {
  float kth = bf_kth(s, h, qi);
  double thr = kth > -INFINITY ? fast_threshold(s->metric, kth) : -INFINITY;
  float sh = atomic_load_explicit(&s->lbound[qi], memory_order_relaxed);
  if (sh > thr) thr = sh;
  if (tlow > thr) thr = tlow;
  return thr;
}

/* the min-heap of the `n` best lower bounds (fast score - margin) seen in a tile: low[0] is the
 * worst kept */
static void low_push(float *low, size_t *n, size_t k, float v) {
  size_t i;
  if (*n < k) {
    for (i = (*n)++; i > 0 && low[(i - 1) / 2] > v; i = (i - 1) / 2) low[i] = low[(i - 1) / 2];
    low[i] = v;
    return;
  }
  if (!(v > low[0])) return;
  for (i = 0;;) {
    size_t c = 2 * i + 1;
    if (c >= k) break;
    if (c + 1 < k && low[c + 1] < low[c]) c++;
    if (!(low[c] < v)) break;
    low[i] = low[c];
    i = c;
  }
  low[i] = v;
}

static int cand_cmp(const void *a, const void *b) {
  double x = ((const bf_cand *)a)->ub, y = ((const bf_cand *)b)->ub;
  return (x < y) - (x > y);
}

#define BF_AHEAD 4 /* candidates between a row's prefetch and its re-scoring */
static inline void bf_prefetch_row(const float *x, size_t d) {
  for (size_t o = 0; o < d; o += 16) __builtin_prefetch(x + o);
}

/* Re-score, exactly, query qa + i's pending candidates that still reach its threshold (the
 * K-th best exact score known, or the K-th best lower bound of filter_block), and forget them
 * (`reset`: the lower bounds too, before the next query tile or block). */
static void bf_flush_query(bf_worker *wk, uint64_t qa, size_t i, bool reset) {
  bf_scan *s = wk->s;
  size_t d = s->d, np = wk->npend[i];
  uint64_t qi = qa + i;
  idx_topk *h = &wk->heaps[qi];
  uint32_t *pr = wk->prow + i * BF_PEND;
  float *pv = wk->pval + i * BF_PEND;
  double tlow = wk->tlow[i];
  /* the threshold only rises: keep those that reach it now, then re-score them, the rows a few
   * candidates ahead prefetched (the block's rows are no longer in cache) */
  double thr = bf_thr(s, h, qi, tlow);
  bf_cand *cd = wk->cand;
  size_t nk = 0;
  for (size_t c = 0; c < np; c++) {
    double margin, f = bf_fast(s, qi, pr[c], pv[c], &margin);
    if (!(f + margin >= thr)) continue;
    cd[nk++] = (bf_cand){f + margin, pr[c]};
  }
  /* best upper bound first: the heap fills with the likely hits, so the threshold rises at once
   * and the rest stop at the first bound below it (the order decides only how many rows are
   * re-scored, not which are hits: the heap's order on (score, key) is total) */
  if (nk > 1) qsort(cd, nk, sizeof *cd, cand_cmp);
  for (size_t c = 0; c < nk && c < BF_AHEAD; c++) bf_prefetch_row(s->x + (size_t)cd[c].row * d, d);
  for (size_t c = 0; c < nk; c++) {
    size_t rj = cd[c].row;
    if (c + BF_AHEAD < nk) bf_prefetch_row(s->x + (size_t)cd[c + BF_AHEAD].row * d, d);
    thr = bf_thr(s, h, qi, tlow);
    if (!(cd[c].ub >= thr)) break; /* every later bound is lower */
    int64_t key = s->rows ? (int64_t)(s->key_hi | s->rows[rj]) : s->key0 + (int64_t)rj;
    float e = exact_score(s->metric, s->q + qi * d, s->qq[qi], s->x + rj * d, s->xx[rj], d);
    wk->rescored++;
    idx_topk_push(h, e, key);
    if (h->n == h->k) bf_raise(s, h, qi);
  }
  wk->npend[i] = 0;
  if (!reset) return;
  wk->nlow[i] = 0;
  wk->tlow[i] = -INFINITY;
}

/* every pending candidate of the worker's current query tile (from query qa), before the block's
 * rows are released or the next query tile starts */
static void bf_flush(bf_worker *wk, uint64_t qa) {
  if (!wk->pending) return;
  uint64_t n = wk->s->nq - qa < BF_QB ? wk->s->nq - qa : BF_QB;
  for (size_t i = 0; i < (size_t)n; i++) bf_flush_query(wk, qa, i, true);
  wk->pending = false;
}

/* Rows of the tile (block rows r0.., scores in wk->c) that can enter query qi's top k: those
 * whose fast score plus margin reaches the threshold: the K-th best exact score known (bf_kth),
 * or — once k candidates have passed since the last flush — the K-th best of their lower bounds
 * (fast score - margin; relaxed by 2^-19 relative plus 1e-30, so a row below it scores strictly
 * less, in float, than k others and is no hit even on a tie).  They are held (BF_PEND per query)
 * and re-scored, exactly, by bf_flush_query() when the query's list is full or at the end of the
 * block, only if they still reach the threshold then: the first rows of a block are no longer
 * all re-scored while the heap fills. */
static void filter_block(bf_worker *wk, uint64_t qa, size_t nqb, size_t r0, size_t nr) {
  bf_scan *s = wk->s;
  float g = (float)(s->gamma * 1.25);
  wk->pending = true;
  for (size_t i = 0; i < nqb; i++) {
    uint64_t qi = qa + i;
    idx_topk *h = &wk->heaps[qi];
    const float *row = wk->c + i * nr;
    double qnm = s->qnorm[qi];
    float *low = wk->low + i * wk->lowk;
    size_t nlow = wk->nlow[i];
    double tlow = wk->tlow[i];
    double thr = -INFINITY;
    float tf = -INFINITY;
    unsigned stale = BF_THR_SPANS;
    for (size_t j0 = 0; j0 < nr; j0 += BF_SPAN) {
      size_t j1 = nr - j0 < BF_SPAN ? nr : j0 + BF_SPAN;
      if (stale >= BF_THR_SPANS) {
        thr = bf_thr(s, h, qi, tlow);
        tf = thr > -INFINITY ? span_thr(thr) : -INFINITY;
        stale = 0;
      }
      stale++;
      uint64_t live = j1 - j0 < 64 ? ((uint64_t)1 << (j1 - j0)) - 1 : ~(uint64_t)0;
      if (thr > -INFINITY) live = span_mask(s, row, r0, j0, j1, (float)qnm, g, tf);
      if (live) stale = BF_THR_SPANS; /* the rows below may raise tlow: a fresh threshold next */
      for (; live; live &= live - 1) {
        size_t j = j0 + (size_t)__builtin_ctzll(live), rj = r0 + j;
        double margin, f = bf_fast(s, qi, rj, row[j], &margin);
        if (!(f + margin >= thr)) continue;
        if (s->null_rows && s->null_rows[rj]) continue;
        int64_t key = s->rows ? (int64_t)(s->key_hi | s->rows[rj]) : s->key0 + (int64_t)rj;
        if (s->flt && s->flt->per_query && !s->prefiltered && !bf_row_ok(s->flt, s->ids, s->docs, qi, rj, key))
          continue;
        if (wk->npend[i] == BF_PEND) {
          wk->tlow[i] = tlow;
          bf_flush_query(wk, qa, i, false);
          thr = bf_thr(s, h, qi, tlow);
        }
        size_t p = i * BF_PEND + wk->npend[i]++;
        wk->prow[p] = (uint32_t)rj;
        wk->pval[p] = row[j];
        if (!wk->lowk) continue;
        low_push(low, &nlow, wk->lowk, (float)(f - margin * (1.0 + 0x1p-10)));
        if (nlow == wk->lowk) {
          double l = low[0];
          l -= fabs(l) * 0x1p-19 + 1e-30;
          if (l > tlow) {
            tlow = l;
            bf_raise_low(s, qi, tlow);
          }
          if (tlow > thr) thr = tlow;
        }
      }
    }
    wk->nlow[i] = (uint32_t)nlow;
    wk->tlow[i] = tlow;
  }
}

/* rows [wk->r0, wk->r1) of the current block against every query */
static void *worker_run(void *arg) {
  bf_worker *wk = arg;
  bf_scan *s = wk->s;
  size_t d = s->d;
  for (uint64_t qa = 0; qa < s->nq; qa += BF_QB) {
    size_t nqb = (size_t)(s->nq - qa < BF_QB ? s->nq - qa : BF_QB);
    for (size_t r0 = wk->r0; r0 < wk->r1; r0 += BF_RB) {
      size_t nr = wk->r1 - r0 < BF_RB ? wk->r1 - r0 : BF_RB;
      if (s->metric == CORPUS_MANHATTAN) {
        for (size_t i = 0; i < nqb; i++) {
          float *out = wk->c + i * nr;
          s->kern->l1_batch(s->q + (qa + i) * d, s->x + r0 * d, nr, d, out);
          for (size_t j = 0; j < nr; j++) out[j] = -out[j];
        }
      } else {
        vf_sgemm_nt(nqb, nr, d, s->qn + qa * d, d, s->xn + r0 * d, d, wk->c, nr);
        /* euclid: the block holds q.x; filter_block() forms 2 q.x - |q|^2 - |x|^2 */
      }
      filter_block(wk, qa, nqb, r0, nr);
    }
    /* one query tile: its candidates wait for the worker's next chunks (score_block flushes) */
    if (s->nq > BF_QB) bf_flush(wk, qa);
  }
  return NULL;
}

/* ------------------------------------------------------- prefetching reader */

/* The reader thread decodes the next row group (and its norms) while the workers score the
 * current one: two slots, handed over under a mutex. */
typedef struct bf_slot {
  pqt_leaf_data leaf;
  pqt_dense dense;
  corpus_batch bt;     /* records: the decoded batch */
  corpus_batch pbt;    /* parquet corpora with filters: the payload of the row group */
  flt_docs *docs;      /* with filters: the parsed payloads of the slot's rows */
  /* one filter for every query: only the matching rows are kept (slot_compact) */
  bool compacted;
  size_t rows_in;      /* rows of the row group read (n is what was kept) */
  float *cdata;        /* kept rows x d */
  uint64_t *crows;     /* their physical rows */
  uint8_t *cnull, *mask;
  size_t ccap;
  const float *data;   /* n*d: dense.data or the batch's vectors */
  const uint8_t *null_rows; /* rows never scored: null, or (set by slot_norms) NaN/inf */
  uint64_t skipped;    /* records: rows the reader dropped as bad (not among the n) */
  uint64_t masked;     /* of the n rows, those null_rows excludes */
  uint8_t *bad_mask;   /* slot_norms' null_rows when it adds NaN/inf rows */
  size_t bad_mask_cap;
  float *xn, *xnorm;
  double *xx;
  size_t cap, n, fi;
  int64_t first;
  double frac;  /* share of this job's work done once this slot is scored (progress) */
  int state; /* 0 empty, 1 full, 2 end of data, 3 error */
} bf_slot;

/* Progress of a scan: the job's files weighed by their bytes (every file 1 when a size is
 * unknown), so the share done is known from the listing alone, without opening every footer. */
typedef struct bf_work {
  const corpus_files *files;
  uint32_t jobs, rank;
  bool sized;       /* every file's size is known */
  double total;     /* the job's weight */
  double *before;   /* per file: the weight of the job's files before it */
} bf_work;

static vf_status bf_work_init(bf_work *w, const corpus_files *files, uint32_t jobs, uint32_t rank,
                              vf_error *err) {
  memset(w, 0, sizeof *w);
  w->files = files;
  w->jobs = jobs;
  w->rank = rank;
  w->before = vf_calloc(files->n + 1, sizeof *w->before);
  if (!w->before) return vf_error_set(err, VF_ENOMEM, "out of memory");
  w->sized = true;
  for (size_t fi = 0; fi < files->n; fi++) w->sized &= files->files[fi].size > 0;
  for (size_t fi = 0; fi < files->n; fi++) {
    w->before[fi] = w->total;
    if (fi % jobs == rank) w->total += w->sized ? (double)files->files[fi].size : 1.0;
  }
  return VF_OK;
}

/* the share done once `in_file` (0..1) of file fi (one of the job's) is scanned */
static double bf_work_frac(const bf_work *w, size_t fi, double in_file) {
  if (!w->before || w->total <= 0) return 0;
  double f = (w->before[fi] + (w->sized ? (double)w->files->files[fi].size : 1.0) * in_file) /
             w->total;
  return f > 1 ? 1 : f;
}

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
  const corpus_record_spec *spec; /* records: one vector, bad rows skipped; else NULL */
  const ev_ids *ids;
  const corpus_record_spec *pspec; /* parquet corpora with filters: the payload to read */
  const flt_filter *single;        /* the one filter every query has (slot_compact), or NULL */
  bf_work work; /* progress: this job's files weighed by their bytes */
  const corpus_plan *plan; /* this job's files measured: those without rows are skipped */
} bf_reader;

/* norms (and the normalised copy for cosine) of the slot's n rows at sl->data */
static vf_status slot_norms(bf_reader *r, bf_slot *sl, size_t n, size_t fi, int64_t first,
                            vf_error *err);

/* One filter shared by every query (--filter, or one __filter__ text throughout): the slot keeps
 * only the rows that match it, so scoring costs what the matches cost (a 0.1 % filter scores
 * 0.1 % of the rows) instead of scoring every row and checking the candidates.  The kept rows'
 * physical numbers become the block's row keys (key_hi | row, as for a record batch). */
typedef struct slot_idctx {
  const bf_reader *r;
  size_t fi;
  const uint64_t *rows; /* NULL: first + j */
  int64_t first;
} slot_idctx;

static bool slot_id(void *user, size_t j, corpus_id *out) {
  const slot_idctx *c = user;
  char t[37];
  ev_id_text(c->r->ids, c->fi, c->rows ? c->rows[j] : (uint64_t)(c->first + (int64_t)j), t);
  ev_filter_id(t, out);
  return true;
}

/* sl->mask (n bytes; its contents kept) and the compaction buffers for n rows */
static vf_status slot_mask_room(bf_reader *r, bf_slot *sl, size_t n, vf_error *err) {
  if (n <= sl->ccap) return VF_OK;
  float *a = vf_realloc(sl->cdata, n * r->d * sizeof(float));
  if (a) sl->cdata = a;
  uint64_t *b = vf_realloc(sl->crows, n * sizeof *b);
  if (b) sl->crows = b;
  uint8_t *c = vf_realloc(sl->cnull, n);
  if (c) sl->cnull = c;
  uint8_t *m = vf_realloc(sl->mask, n);
  if (m) sl->mask = m;
  if (!a || !b || !c || !m) return vf_error_set(err, VF_ENOMEM, "out of memory for a row group of %zu rows", n);
  sl->ccap = n;
  return VF_OK;
}

/* keep the rows of sl->data that match r->single (`have_mask`: sl->mask already holds them) */
static vf_status slot_compact(bf_reader *r, bf_slot *sl, size_t n, size_t fi, int64_t first,
                              const uint64_t *rows, bool have_mask, size_t *kept, vf_error *err) {
  size_t d = r->d;
  vf_status st = slot_mask_room(r, sl, n, err);
  if (st != VF_OK) return st;
  slot_idctx c = {r, fi, rows, first};
  if (!have_mask) flt_docs_select(sl->docs, r->single, NULL, slot_id, &c, sl->mask);
  size_t w = 0;
  for (size_t j = 0; j < n; j++) {
    if (!sl->mask[j]) continue;
    memcpy(sl->cdata + w * d, sl->data + j * d, d * sizeof(float));
    sl->crows[w] = rows ? rows[j] : (uint64_t)(first + (int64_t)j);
    sl->cnull[w] = sl->null_rows ? sl->null_rows[j] : 0;
    w++;
  }
  sl->data = sl->cdata;
  sl->null_rows = sl->null_rows ? sl->cnull : NULL;
  sl->compacted = true;
  *kept = w;
  return VF_OK;
}

/* the slot's payloads, parsed for the filters (b: the batch holding them) */
static vf_status slot_docs(bf_reader *r, bf_slot *sl, const corpus_batch *b, size_t fi, vf_error *err) {
  flt_docs_clear(sl->docs);
  return flt_docs_add(sl->docs, (const char *)b->payload.data, b->payload_offsets, b->n,
                      r->files->files[fi].key, err);
}

static vf_status fill_slot(bf_reader *r, bf_slot *sl, pqt_file *f, corpus_records *prr, int top,
                           int rg, int64_t rg_rows, size_t fi, int64_t first, vf_error *err) {
  vf_status st = VF_OK;
  sl->compacted = false;
  sl->rows_in = (size_t)rg_rows;
  if (prr) { /* the payload first: a row group no row of which matches is not decoded at all */
    st = corpus_records_read(prr, rg, (uint64_t)first, &sl->pbt, NULL, err);
    if (st != VF_OK) return st;
    if ((int64_t)sl->pbt.n != rg_rows || (sl->pbt.n && sl->pbt.file_rows[0] != (uint64_t)first))
      return vf_error_set(err, VF_EINTERNAL, "%s: row group %d: %zu payloads for %lld rows",
                          r->files->files[fi].key, rg, sl->pbt.n, (long long)rg_rows);
    if ((st = slot_docs(r, sl, &sl->pbt, fi, err)) != VF_OK) return st;
    if (r->single && flt_docs_rows(sl->docs) > 0) {
      if ((st = slot_mask_room(r, sl, (size_t)rg_rows, err)) != VF_OK) return st;
      slot_idctx c = {r, fi, NULL, first};
      if (flt_docs_select(sl->docs, r->single, NULL, slot_id, &c, sl->mask) == 0) {
        sl->data = NULL;
        sl->null_rows = NULL;
        sl->skipped = 0;
        sl->compacted = true;
        return slot_norms(r, sl, 0, fi, first, err);
      }
    }
  }
  int32_t dim = r->dim;
  st = ev_read_dense(f, top, rg, first, &dim, &sl->leaf, &sl->dense, err);
  if (st != VF_OK) return st;
  if (dim != r->dim)
    return vf_error_set(err, VF_ECORRUPT, "%s: vectors have dimension %d but the queries %d",
                        r->files->files[fi].key, dim, r->dim);
  sl->data = sl->dense.data;
  sl->null_rows = sl->dense.null_rows;
  sl->skipped = 0;
  size_t n = (size_t)sl->dense.rows;
  if (r->single && n != (size_t)rg_rows)
    return vf_error_set(err, VF_EINTERNAL, "%s: row group %d: %zu vectors for %lld rows",
                        r->files->files[fi].key, rg, n, (long long)rg_rows);
  if (r->single && (st = slot_compact(r, sl, n, fi, first, NULL, prr != NULL, &n, err)) != VF_OK)
    return st;
  return slot_norms(r, sl, n, fi, first, err);
}

/* records: row group `rg` of an open record reader (rows it rejects are skipped, counted) */
static vf_status fill_slot_records(bf_reader *r, bf_slot *sl, corpus_records *rr, int rg,
                                   size_t fi, vf_error *err) {
  uint64_t skipped = 0;
  vf_status st = corpus_records_read(rr, rg, corpus_records_row_group_first(rr, rg), &sl->bt,
                                     &skipped, err);
  if (st != VF_OK) return st;
  const corpus_vec_batch *vb = &sl->bt.vectors[0];
  if (sl->bt.n && vb->dim != r->dim)
    return vf_error_set(err, VF_ECORRUPT, "%s: vectors have dimension %d but the queries %d",
                        r->files->files[fi].key, vb->dim, r->dim);
  sl->data = vb->dense;
  sl->null_rows = vb->null_rows;
  sl->skipped = skipped;
  sl->compacted = false;
  sl->rows_in = sl->bt.n;
  if (sl->docs && (st = slot_docs(r, sl, &sl->bt, fi, err)) != VF_OK) return st;
  size_t n = sl->bt.n;
  if (r->single && (st = slot_compact(r, sl, n, fi, 0, sl->bt.file_rows, false, &n, err)) != VF_OK)
    return st;
  return slot_norms(r, sl, n, fi, 0, err);
}

static vf_status slot_norms(bf_reader *r, bf_slot *sl, size_t n, size_t fi, int64_t first,
                            vf_error *err) {
  size_t d = r->d;
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
  size_t bad = 0;
  for (size_t j = 0; j < n; j++) {
    sl->xx[j] = sumsq(sl->data + j * d, d);
    sl->xnorm[j] = (float)sqrt(sl->xx[j]);
    bad += (sl->null_rows && sl->null_rows[j]) || !isfinite(sl->xx[j]);
  }
  /* a null, NaN or infinite vector is never a hit: skipped, and counted */
  sl->masked = bad;
  if (bad) {
    if (n > sl->bad_mask_cap) {
      free(sl->bad_mask);
      sl->bad_mask = vf_malloc(n);
      sl->bad_mask_cap = sl->bad_mask ? n : 0;
      if (!sl->bad_mask) return vf_error_set(err, VF_ENOMEM, "out of memory for a row group of %zu rows", n);
    }
    for (size_t j = 0; j < n; j++)
      sl->bad_mask[j] = (uint8_t)((sl->null_rows && sl->null_rows[j]) || !isfinite(sl->xx[j]));
    sl->null_rows = sl->bad_mask;
  }
  if (cos && n) {
    memcpy(sl->xn, sl->data, sizeof(float) * d * n);
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
  bool stopped = false; /* told to stop: no end-of-data slot is published */
  corpus_records *rr = NULL, *prr = NULL;
  pqt_file *f = NULL;
  for (size_t fi = 0; r->spec && fi < r->files->n; fi++) {
    if (fi % r->jobs != o->job_rank || corpus_plan_skips(r->plan, fi)) continue;
    VF_TRY(corpus_records_open(&r->files->files[fi], r->spec, r->ids->bases[fi], &rr, &r->err));
    int nrg = corpus_records_row_groups(rr);
    r->files_read++;
    for (int rg = 0; rg < nrg; rg++) {
      if (!wait_empty(r, si)) {
        stopped = true;
        goto out;
      }
      VF_TRY(vf_check_cancel(&r->err));
      VF_TRY(fill_slot_records(r, &r->slot[si], rr, rg, fi, &r->err));
      uint64_t rows = corpus_records_rows(rr);
      uint64_t next = rg + 1 < nrg ? corpus_records_row_group_first(rr, rg + 1) : rows;
      r->slot[si].frac = bf_work_frac(&r->work, fi, rows ? (double)next / (double)rows : 1);
      publish(r, si, 1);
      si ^= 1;
    }
    corpus_records_close(rr);
    rr = NULL;
  }
  for (size_t fi = 0; !r->spec && fi < r->files->n; fi++) {
    if (fi % r->jobs != o->job_rank || corpus_plan_skips(r->plan, fi)) continue;
    int top = -1;
    VF_TRY(ev_open(&r->files->files[fi], &f, &r->err)); /* over the plan's kept footer */
    if (r->pspec) VF_TRY(corpus_records_open(&r->files->files[fi], r->pspec, 0, &prr, &r->err));
    VF_TRY(ev_vector_top(f, o->column ? o->column : r->vec_name, &top, &r->err));
    if (!r->vec_name) {
      r->vec_name = vf_strdup(pqt_schema_of(f)->nodes[top].name);
      if (!r->vec_name) VF_FAIL(vf_error_set(&r->err, VF_ENOMEM, "out of memory"));
    }
    const pqt_file_meta *m = pqt_meta(f);
    int64_t first = 0;
    r->files_read++;
    for (int rg = 0; rg < m->nrow_groups; rg++) {
      int64_t nr = m->row_groups[rg].num_rows;
      if (nr <= 0) continue;
      if (!wait_empty(r, si)) {
        stopped = true;
        goto out;
      }
      VF_TRY(vf_check_cancel(&r->err));
      VF_TRY(fill_slot(r, &r->slot[si], f, prr, top, rg, nr, fi, first, &r->err));
      r->slot[si].frac = bf_work_frac(&r->work, fi, m->num_rows > 0 ? (double)(first + nr) /
                                                                       (double)m->num_rows : 1);
      publish(r, si, 1);
      si ^= 1;
      first += nr;
    }
    corpus_records_close(prr);
    prr = NULL;
    pqt_close(f);
    f = NULL;
  }
out:
  corpus_records_close(rr);
  corpus_records_close(prr);
  pqt_close(f);
  if (stopped) return NULL;
  r->st = st;
  if (wait_empty(r, si)) publish(r, si, st == VF_OK ? 2 : 3);
  return NULL;
}

/* ------------------------------------------------------- multivectors (max_sim) */

/* Multivector columns (list<list<float>>) are decoded by the record reader (records.c: shape,
 * one dimension per file, finite values) one row group at a time and scored exactly with
 * max_sim(Q, D) = sum over q in Q of max over d in D of sim(q, d), sim = dot or cosine (zero
 * norm -> 0), all in double in a fixed order and rounded to float once: no fast filter, so the
 * score of a (query, document) pair depends only on the two and the output is byte-identical
 * whatever the thread count or number of jobs.  Rows with a null or empty multivector, or one
 * the record reader rejects (dimension, NaN/inf), are skipped and counted.
 *
 * Sparse columns (struct{indices, values}) are scored the same way with the dot product over
 * the indices both sides hold (a merge of the two index lists, sorted on read; a document's
 * repeated index adds each of its values).  As in an inverted index (and Qdrant), only rows
 * sharing at least one index with the query are candidates. */
typedef struct mv_work {
  const ev_queries *q;
  corpus_distance metric;
  idx_topk *heaps;
  const double *qnorm;           /* per query vector */
  const corpus_vec_batch *vb;
  const double *dnorm;           /* per document vector of the batch */
  const uint64_t *rows;          /* physical rows of the batch */
  const uint32_t *sidx;          /* sparse: the batch's indices, sorted per row */
  const float *sval;
  size_t n;
  uint64_t key_hi;
  uint64_t q0, q1;     /* set per chunk (mv_chunk) */
  const ev_filters *flt;
  const ev_ids *ids;
  const flt_docs *docs;
} mv_work;

static double mv_sim(corpus_distance m, const float *a, double na, const float *b, double nb,
                     size_t d) {
  double s = dot_d(a, b, d);
  if (m == CORPUS_COSINE) return na == 0 || nb == 0 ? 0.0 : s / (na * nb);
  return s;
}

static void *sp_run(mv_work *w) {
  const ev_queries *q = w->q;
  const corpus_vec_batch *vb = w->vb;
  for (uint64_t qi = w->q0; qi < w->q1; qi++) {
    int64_t a0 = q->offsets[qi], a1 = q->offsets[qi + 1];
    for (size_t j = 0; j < w->n; j++) {
      int64_t b = vb->offsets[j], b1 = vb->offsets[j + 1], a = a0;
      if (vb->null_rows && vb->null_rows[j]) continue;
      double s = 0;
      bool hit = false;
      while (a < a1 && b < b1) {
        if (q->indices[a] < w->sidx[b]) a++;
        else if (q->indices[a] > w->sidx[b]) b++;
        else {
          s += (double)q->values[a] * (double)w->sval[b];
          hit = true;
          b++;
        }
      }
      int64_t key = (int64_t)(w->key_hi | w->rows[j]);
      if (hit && w->flt->per_query && !bf_row_ok(w->flt, w->ids, w->docs, qi, j, key)) continue;
      if (hit) idx_topk_push(&w->heaps[qi], (float)s + 0.0f, key);
    }
  }
  return NULL;
}

static void *mv_run(mv_work *w) {
  if (w->q->kind == CORPUS_VEC_SPARSE) return sp_run(w);
  const ev_queries *q = w->q;
  size_t d = (size_t)q->dim;
  const corpus_vec_batch *vb = w->vb;
  for (uint64_t qi = w->q0; qi < w->q1; qi++) {
    for (size_t j = 0; j < w->n; j++) {
      int64_t b0 = vb->offsets[j], b1 = vb->offsets[j + 1];
      if (b1 <= b0 || (vb->null_rows && vb->null_rows[j])) continue;
      int64_t key = (int64_t)(w->key_hi | w->rows[j]);
      if (w->flt->per_query && !bf_row_ok(w->flt, w->ids, w->docs, qi, j, key)) continue;
      double total = 0;
      for (int64_t a = q->offsets[qi]; a < q->offsets[qi + 1]; a++) {
        double best = -INFINITY;
        for (int64_t b = b0; b < b1; b++) {
          double v = mv_sim(w->metric, q->vecs + (size_t)a * d, w->qnorm[a],
                            vb->multi + (size_t)b * d, w->dnorm[b], d);
          if (v > best) best = v;
        }
        total += best;
      }
      idx_topk_push(&w->heaps[qi], (float)total + 0.0f, key);
    }
  }
  return NULL;
}

/* one chunk of queries of a batch: worker w's copy of the batch's work, its query range set */
typedef struct mv_block_job {
  mv_work *wk; /* per worker */
  const mv_work *tmpl;
  uint64_t nq, qc;
} mv_block_job;

static void mv_chunk(void *arg, size_t c, int w) {
  mv_block_job *j = arg;
  mv_work *wk = &j->wk[w];
  *wk = *j->tmpl;
  wk->q0 = (uint64_t)c * j->qc;
  wk->q1 = j->nq - wk->q0 < j->qc ? j->nq : wk->q0 + j->qc;
  mv_run(wk);
}

/* scan this job's files for multivector queries; *vec_name receives the column (caller frees) */
static vf_status mv_scan(const corpus_files *files, const eval_bf_opts *o, uint32_t jobs,
                         const ev_queries *q, idx_topk *heaps, int threads,
                         const corpus_record_spec *rspec, const ev_ids *ids,
                         const corpus_plan *plan, char **vec_name, const ev_filters *flt,
                         const corpus_payload_source *psrc, int npsrc, const bf_work *work, vf_stage *sg, eval_bf_result *out,
                         vf_error *err) {
  size_t d = (size_t)q->dim;
  bool sparse = q->kind == CORPUS_VEC_SPARSE;
  uint64_t nqv = sparse ? 1 : (uint64_t)q->offsets[q->n];
  double *qnorm = vf_mallocarray(nqv, sizeof(double));
  uint32_t *sidx = NULL;
  float *sval = NULL;
  ev_pair *tmp = NULL;
  size_t scap = 0;
  double *dnorm = NULL;
  size_t dcap = 0;
  mv_work *wk = vf_calloc((size_t)threads, sizeof *wk);
  /* about 8 chunks per worker (one query's max_sim over a batch is the unit of work) */
  uint64_t qc = threads <= 1 ? (q->n ? q->n : 1) : (q->n + (uint64_t)threads * 8 - 1) / ((uint64_t)threads * 8);
  if (qc < 1) qc = 1;
  vf_status st = VF_OK;
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  flt_docs *docs = NULL;
  corpus_records *rr = NULL;
  if (!qnorm || !wk) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (uint64_t i = 0; !sparse && i < nqv; i++) qnorm[i] = sqrt(sumsq(q->vecs + i * d, d));
  const char *col = rspec ? rspec->vectors[0].name : o->column ? o->column : q->vec_name;
  corpus_vec_source vs = {.name = col, .kind = q->kind, .distance = o->metric, .column = col};
  corpus_record_spec spec = {.vectors = &vs, .nvectors = 1, .skip_bad_rows = true,
                             .payload = psrc, .npayload = npsrc};
  if (rspec) spec = *rspec;
  if (flt->any) VF_TRY(flt_docs_create(&docs, err));
  *vec_name = vf_strdup(col);
  if (!*vec_name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t fi = 0; fi < files->n; fi++) {
    if (fi % jobs != o->job_rank || corpus_plan_skips(plan, fi)) continue;
    VF_TRY(corpus_records_open(&files->files[fi], &spec, ids->bases ? ids->bases[fi] : 0, &rr, err));
    int nrg = corpus_records_row_groups(rr);
    out->files++;
    for (int rg = 0; rg < nrg; rg++) {
      uint64_t skipped = 0;
      VF_TRY(vf_check_cancel(err));
      VF_TRY(corpus_records_read(rr, rg, corpus_records_row_group_first(rr, rg), &bt, &skipped, err));
      out->rows_skipped += skipped;
      out->rows_scanned += bt.n + skipped;
      uint64_t rows = corpus_records_rows(rr);
      uint64_t next = rg + 1 < nrg ? corpus_records_row_group_first(rr, rg + 1) : rows;
      sg->p.files_done = fi / jobs;
      sg->p.fraction = bf_work_frac(work, fi, rows ? (double)next / (double)rows : 1);
      vf_stage_update(sg, out->rows_scanned, NULL);
      const corpus_vec_batch *vb = &bt.vectors[0];
      if (bt.n == 0) continue;
      if (docs) {
        flt_docs_clear(docs);
        VF_TRY(flt_docs_add(docs, (const char *)bt.payload.data, bt.payload_offsets, bt.n,
                            files->files[fi].key, err));
      }
      if (sparse) {
        size_t nnz = (size_t)vb->offsets[bt.n];
        if (nnz > scap) {
          free(sidx);
          free(sval);
          free(tmp);
          sidx = vf_mallocarray(nnz, sizeof *sidx);
          sval = vf_mallocarray(nnz, sizeof *sval);
          tmp = vf_mallocarray(nnz, sizeof *tmp);
          scap = sidx && sval && tmp ? nnz : 0;
          if (!scap) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %zu sparse entries", nnz));
        }
        if (nnz) {
          memcpy(sidx, vb->indices, nnz * sizeof *sidx);
          memcpy(sval, vb->values, nnz * sizeof *sval);
        }
        for (size_t j = 0; j < bt.n; j++) {
          size_t a = (size_t)vb->offsets[j];
          ev_sparse_sort(sidx + a, sval + a, (size_t)vb->offsets[j + 1] - a, tmp);
        }
      } else if (vb->dim != q->dim) {
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: '%s' vectors have dimension %d but the queries %d",
                             files->files[fi].key, col, vb->dim, q->dim));
      }
      size_t nv = sparse ? 0 : (size_t)vb->offsets[bt.n];
      if (nv > dcap) {
        free(dnorm);
        dnorm = vf_mallocarray(nv, sizeof(double));
        dcap = dnorm ? nv : 0;
        if (!dnorm) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %zu vectors", nv));
      }
      for (size_t b = 0; b < nv; b++) dnorm[b] = sqrt(sumsq(vb->multi + b * d, d));
      mv_work tmpl = {.q = q, .metric = o->metric, .heaps = heaps, .qnorm = qnorm, .vb = vb,
                      .dnorm = dnorm, .rows = bt.file_rows, .n = bt.n, .sidx = sidx, .sval = sval,
                      .key_hi = (uint64_t)fi << BF_KEY_SHIFT, .flt = flt, .ids = ids, .docs = docs};
      mv_block_job mj = {wk, &tmpl, q->n, qc};
      VF_TRY(vf_pool_for((size_t)((q->n + qc - 1) / qc), threads, mv_chunk, &mj, err));
    }
    corpus_records_close(rr);
    rr = NULL;
  }
out:
  corpus_records_close(rr);
  corpus_batch_free(&bt);
  flt_docs_free(docs);
  free(sidx);
  free(sval);
  free(tmp);
  free(qnorm);
  free(dnorm);
  free(wk);
  return st;
}

/* --memory-budget (DESIGN.md "CLI"): what the scan holds at once is the queries and their
 * heaps/results (queries x (dim + K)), two decoded row groups of the vector column (the slot
 * being scored and the one being prefetched: leaf values, the float matrix, the normalised copy
 * for cosine, the compressed chunk) and one sgemm scratch block per worker (workers beyond the
 * first also their own heaps: queries x K hits).  The largest row
 * group of this job's files is taken from the footers before anything is decoded; the workers
 * are reduced when their scratch does not fit, and the run is refused when one worker cannot. */
/* a byte count for messages: MiB from 10 MiB up, else KiB (rounded up) */
static const char *bf_size(uint64_t bytes, char out[32]) {
  if (bytes >= (uint64_t)10 << 20) snprintf(out, 32, "%" PRIu64 " MiB", bytes >> 20);
  else snprintf(out, 32, "%" PRIu64 " KiB", (bytes + 1023) >> 10);
  return out;
}

static vf_status bf_budget(const corpus_files *files, const eval_bf_opts *o, uint32_t jobs,
                           const ev_queries *q, const char *column, const corpus_record_spec *rspec,
                           const ev_ids *ids, const corpus_plan *plan, int *threads,
                           vf_error *err) {
  uint64_t budget = vf_memory_budget();
  if (!budget) return VF_OK;
  uint64_t d = (uint64_t)q->dim, slot = 0, slot_rows = 0;
  size_t slot_file = 0;
  int slot_rg = 0;
  bool cos = o->metric == CORPUS_COSINE;
  /* records (a config, a dataset): the reader's row groups; a batch holds the decoded vectors,
   * the float matrix (+ its copy) and per-row bookkeeping */
  for (size_t fi = 0; rspec && fi < files->n; fi++) {
    if (fi % jobs != o->job_rank) continue;
    corpus_records *rr = NULL;
    vf_status st = corpus_records_open(&files->files[fi], rspec, ids->bases[fi], &rr, err);
    if (st != VF_OK) return st;
    int nrg = corpus_records_row_groups(rr);
    for (int rg = 0; rg < nrg; rg++) {
      uint64_t a = corpus_records_row_group_first(rr, rg);
      uint64_t b = rg + 1 < nrg ? corpus_records_row_group_first(rr, rg + 1) : corpus_records_rows(rr);
      uint64_t rows = b > a ? b - a : 0, dense = rows * d * 4;
      uint64_t need = 2 * dense + dense * (cos ? 2 : 1) + rows * 64;
      if (need > slot) {
        slot = need;
        slot_rows = rows;
        slot_file = fi;
        slot_rg = rg;
      }
    }
    corpus_records_close(rr);
  }
  for (size_t fi = 0; !rspec && fi < files->n; fi++) {
    if (fi % jobs != o->job_rank || corpus_plan_skips(plan, fi)) continue;
    pqt_file *f = NULL;
    int top = -1;
    corpus_vec_kind kind;
    vf_status st = ev_open(&files->files[fi], &f, err); /* the plan's kept footer */
    if (st != VF_OK) {
      pqt_close(f);
      return st;
    }
    st = ev_vector_column(f, column, &top, &kind, err);
    if (st != VF_OK) {
      pqt_close(f);
      return st;
    }
    const pqt_file_meta *m = pqt_meta(f);
    const pqt_node *n = &pqt_schema_of(f)->nodes[top];
    for (int rg = 0; rg < m->nrow_groups; rg++) {
      const pqt_row_group *g = &m->row_groups[rg];
      uint64_t rows = g->num_rows > 0 ? (uint64_t)g->num_rows : 0, u = 0, c = 0;
      for (int l = n->first_leaf; l < n->first_leaf + n->nleaves && l < g->ncolumns; l++) {
        const pqt_column_meta *cm = &g->columns[l].meta;
        u += cm->total_uncompressed_size > 0 ? (uint64_t)cm->total_uncompressed_size : 0;
        c += cm->total_compressed_size > 0 ? (uint64_t)cm->total_compressed_size : 0;
      }
      /* decoded leaf (values + one level byte per value) and the float matrix (+ its copy) */
      uint64_t dense = rows * d * 4;
      uint64_t need = c + (u > dense ? u : dense) + rows * d * 2 + dense * (cos ? 2 : 1) + rows * 16;
      if (need > slot) {
        slot = need;
        slot_rows = rows;
        slot_file = fi;
        slot_rg = rg;
      }
    }
    pqt_close(f);
  }
  uint64_t qvecs = q->offsets ? (uint64_t)q->offsets[q->n] : q->n;
  uint64_t fixed = qvecs * (d * 4 * (cos ? 2 : 1) + 16) +
                   q->n * (uint64_t)o->k * (sizeof(idx_hit) + sizeof(ev_hit) + sizeof(char *) + 4);
  uint64_t span = q->kind == CORPUS_VEC_DENSE ? (q->n < BF_QB ? q->n : BF_QB) : 1;
  /* a worker's score tile, and per query of it the pending candidates and lower bounds */
  uint64_t lowk = o->k <= BF_LOW_K ? o->k : 1;
  uint64_t per_worker = span * (BF_RB * sizeof(float) + BF_PEND * 8 + lowk * sizeof(float) + 16);
  uint64_t need1 = fixed + 2 * slot + per_worker;
  if (need1 > budget) {
    char a[32], b[32], c[32], e[32], f[32];
    const char *vcol = rspec ? rspec->vectors[0].name : column ? column : q->vec_name;
    return vf_error_set(err, VF_ENOMEM,
                        "brute-force: needs about %s (%" PRIu64 " queries x (dim %" PRIu64
                        " + K %u): %s; two row groups of %" PRIu64 " rows of vector column '%s', "
                        "the largest being %s row group %d: %s; scratch %s), more than the memory "
                        "budget of %s (raise --memory-budget, use fewer queries or a smaller K)",
                        bf_size(need1, a), q->n, d, o->k, bf_size(fixed, b), slot_rows,
                        vcol ? vcol : "?", files->n ? files->files[slot_file].uri : "?", slot_rg,
                        bf_size(2 * slot, c), bf_size(per_worker, e), bf_size(budget, f));
  }
  /* workers beyond the first also keep their own heaps (bf_workers_init) */
  uint64_t heaps = q->kind == CORPUS_VEC_DENSE ? q->n * (uint64_t)o->k * sizeof(idx_hit) : 0;
  uint64_t fit = 1 + (budget - need1) / (per_worker + heaps);
  if ((uint64_t)*threads > fit) {
    char a[32];
    vf_log(VF_LOG_INFO, "memory budget %s: brute-force with %" PRIu64 " worker(s) instead of %d",
           bf_size(budget, a), fit, *threads);
    *threads = (int)fit;
  }
  return VF_OK;
}

/* score the current block: chunks of rows (bf_chunk_rows) on the pool, worker w on wk[w] */
typedef struct bf_block_job {
  bf_worker *wk;
  size_t nrows, rc;
} bf_block_job;

static void score_chunk(void *arg, size_t c, int w) {
  bf_block_job *j = arg;
  bf_worker *wk = &j->wk[w];
  wk->r0 = c * j->rc;
  wk->r1 = j->nrows - wk->r0 < j->rc ? j->nrows : wk->r0 + j->rc;
  worker_run(wk);
}

/* worker c's pending candidates (any thread may run it: the worker's state is data) */
static void flush_chunk(void *arg, size_t c, int w) {
  (void)w;
  bf_block_job *j = arg;
  bf_flush(&j->wk[c], 0);
}

static vf_status score_block(bf_worker *wk, int threads, size_t nrows, vf_error *err) {
  if (nrows == 0) return VF_OK;
  if (nrows > UINT32_MAX) /* filter_block holds block rows as uint32 */
    return vf_error_set(err, VF_EUNSUPPORTED, "brute-force: a block of %zu rows (at most %" PRIu32
                        " are scored at once: write smaller row groups)", nrows, UINT32_MAX);
  bf_block_job j = {wk, nrows, bf_chunk_rows(nrows, threads)};
  vf_status st = vf_pool_for((nrows + j.rc - 1) / j.rc, threads, score_chunk, &j, err);
  if (st != VF_OK) return st;
  st = vf_pool_for((size_t)threads, threads, flush_chunk, &j, err);
  if (st != VF_OK) return st;
  return bf_workers_merge(wk, threads, err);
}

static vf_status hits_copy(eval_bf_hits *h, uint64_t nq, uint32_t k, const ev_hit *hits,
                           const uint32_t *nhits, vf_error *err) {
  memset(h, 0, sizeof *h);
  size_t cnt = (size_t)nq * k;
  h->ids = vf_mallocarray(cnt ? cnt : 1, sizeof *h->ids);
  h->scores = vf_mallocarray(cnt ? cnt : 1, sizeof *h->scores);
  h->counts = vf_mallocarray(nq ? nq : 1, sizeof *h->counts);
  if (!h->ids || !h->scores || !h->counts) {
    eval_bf_hits_free(h);
    return vf_error_set(err, VF_ENOMEM, "out of memory for %zu hits", cnt);
  }
  h->nq = nq;
  h->k = k;
  for (uint64_t i = 0; i < nq; i++) {
    h->counts[i] = nhits[i];
    for (uint32_t j = 0; j < nhits[i]; j++) {
      memcpy(h->ids[i * k + j], hits[i * k + j].id, 37);
      h->scores[i * k + j] = hits[i * k + j].score;
    }
  }
  return VF_OK;
}

/* eval_bf_hits_free(): see eval.h. */
void eval_bf_hits_free(eval_bf_hits *h) {
  if (!h) return;
  free(h->ids);
  free(h->scores);
  free(h->counts);
  memset(h, 0, sizeof *h);
}

/* tell the reader thread to stop and wait for it */
static void reader_stop(bf_reader *rd, pthread_t tid) {
  pthread_mutex_lock(&rd->mu);
  rd->stop = true;
  pthread_cond_broadcast(&rd->cv);
  pthread_mutex_unlock(&rd->mu);
  pthread_join(tid, NULL);
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
  ev_queries q = {0};
  ev_ids ids = {0};
  ev_filters flt = {0};
  corpus_payload_source *psrc = NULL;
  int npsrc = 0;
  corpus_idexpr *prow = NULL;
  char *path = NULL;
  corpus_plan own = {0};          /* the plan built here when the caller gives none */
  const corpus_plan *plan = o->plan;
  uint64_t job_empty = 0;         /* this job's files without rows (skipped) */
  bf_scan s = {0};
  bf_worker *wk = NULL;
  int threads = 1;
  bool multi = false; /* multivector or sparse: mv_scan() */
  int blas_saved = 0;
  bool blas_single = false; /* vf_blas_single_begin() ran: vf_blas_single_end() at out: */
  bf_reader rd;
  memset(&rd, 0, sizeof rd);
  vf_error_clear(&rd.err);
  pthread_mutex_init(&rd.mu, NULL);
  pthread_cond_init(&rd.cv, NULL);
  for (int i = 0; i < 2; i++) {
    pqt_leaf_data_init(&rd.slot[i].leaf);
    memset(&rd.slot[i].dense, 0, sizeof rd.slot[i].dense);
  }
  pthread_t rtid;
  bool reader_started = false;
  bool counted = false; /* out->files and out->empty_files are set */
  ev_hit *hits = NULL;
  uint32_t *nhits = NULL;
  idx_hit *tmp = NULL;
  char **kv = NULL;
  int nkv = 0;
  corpus_record_spec spec1 = o->records ? ev_spec1(o->records) : (corpus_record_spec){0};
  vf_status st = VF_OK;
  /* alive from here: the footers ev_ids_init() reads are the ones the plan and readers use */
  if (!plan) VF_TRY(corpus_plan_init(&own, files, err));
  VF_TRY(ev_ids_init(&ids, files, o->records, "brute-force", err));
  if (o->queries) VF_TRY(ev_queries_read(o->queries, o->column, &q, err));
  else if (o->query_vectors)
    VF_TRY(ev_queries_matrix(o->query_vectors, o->nqueries, o->query_dim, o->column, &q, err));
  else VF_FAIL(vf_error_set(err, VF_EUSAGE, "brute-force: no queries (a queries file or vectors)"));
  /* filters: --filter or the queries' __filter__ column, and the payload keys they read */
  VF_TRY(ev_filters_init(&flt, q.n, q.filters, q.fhash, o->filter, o->queries, err));
  if (flt.any) VF_TRY(ev_filters_payload(&flt, o->records, &psrc, &npsrc, err));
  if (o->records && flt.any) {
    spec1.payload = psrc;
    spec1.npayload = npsrc;
  }
  for (uint64_t i = 0; i < q.n; i++) out->queries_filtered += flt.per_query && flt.per_query[i];
  multi = q.kind != CORPUS_VEC_DENSE;
  /* the kinds first: a mismatch is reported before any failure of the steps below */
  if (o->records && q.kind != o->records->vectors[0].kind)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "brute-force: the queries' column '%s' is %s but vector '%s' "
                         "of the corpus is %s", q.vec_name, kind_name(q.kind),
                         o->records->vectors[0].name, kind_name(o->records->vectors[0].kind)));
  else if (q.kind == CORPUS_VEC_SPARSE && o->metric != CORPUS_DOT)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "brute-force: sparse column '%s' is scored with dot, not %s",
                         q.vec_name, idx_metric_name(o->metric)));
  else if (multi && o->metric != CORPUS_COSINE && o->metric != CORPUS_DOT)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "brute-force: multivector column '%s' is scored with max_sim "
                         "over cosine or dot, not %s", q.vec_name, idx_metric_name(o->metric)));
  /* the payload reader of a parquet corpus: its ids are not used, `row` is the cheapest */
  if (flt.any && !o->records) VF_TRY(corpus_idexpr_parse("row", &prow, err));
  corpus_record_spec pspec = {.payload = psrc, .npayload = npsrc, .id = prow};
  /* the output: checked before the scan, so a run that could not write it fails at once */
  bool partial = o->num_jobs > 0;
  if (o->output) path = vf_strdup(o->output);
  else if (partial)
    path = ev_strdupf(err, "%s/eval/_bf_partial_queries_%" PRIu64 "%s_k%u/rank%03u.parquet",
                      files->prefix, q.n, flt.tag, o->k, o->job_rank);
  else
    path = ev_strdupf(err, "%s/eval/brute_force_queries_%" PRIu64 "%s_k%u.parquet",
                      files->prefix, q.n, flt.tag, o->k);
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  /* the final ground truth (partials are intermediate: their merge checks their metric) */
  if (!partial && !o->no_file) VF_TRY(ev_output_check(path, o->metric, o->output != NULL, err));
  threads = o->threads > 0 ? o->threads : vf_threads();
  if (threads < 1) threads = 1;
  if ((uint64_t)threads > q.n) threads = (int)(q.n ? q.n : 1);
  /* the plan: this job's files, measured once (the caller's, or here) */
  for (size_t fi = 0; fi < files->n; fi++) {
    if (fi % jobs != o->job_rank) continue;
    if (!plan) VF_TRY(corpus_plan_measure_file(&own, fi, err));
    else if (plan->files->n != files->n || plan->rows[fi] == CORPUS_PLAN_UNMEASURED)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "brute-force: the corpus plan given has not measured %s",
                           files->files[fi].uri));
    job_empty += corpus_plan_skips(plan ? plan : &own, fi);
  }
  if (!plan) plan = &own;
  VF_TRY(bf_budget(files, o, jobs, &q, o->column, o->records ? &spec1 : NULL, &ids, plan, &threads,
                   err));
  size_t d = (size_t)q.dim;
  s = (bf_scan){.files = files, .ids = &ids, .metric = o->metric, .d = d, .nq = q.n, .q = q.vecs,
                .kern = idx_kernels_active(), .flt = &flt};
  s.gamma = ((double)d + 16.0) * 0x1p-21;
  s.qq = vf_mallocarray(q.n ? q.n : 1, sizeof(double));
  s.qnorm = vf_mallocarray(q.n ? q.n : 1, sizeof(float));
  s.heaps = vf_calloc(q.n ? q.n : 1, sizeof(idx_topk));
  s.bound = vf_mallocarray(2 * (q.n ? q.n : 1), sizeof *s.bound);
  s.lbound = s.bound ? s.bound + q.n : NULL;
  s.qn = q.vecs;
  wk = vf_calloc((size_t)threads, sizeof *wk);
  if (!s.qq || !s.qnorm || !s.heaps || !s.bound || !wk) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (uint64_t i = 0; i < q.n; i++) {
    s.qq[i] = multi ? 0 : sumsq(q.vecs + i * d, d);
    s.qnorm[i] = (float)sqrt(s.qq[i]);
    atomic_init(&s.bound[i], -INFINITY);
    atomic_init(&s.bound[q.n + i], -INFINITY);
    VF_TRY(idx_topk_init(&s.heaps[i], o->k, bf_tie, &ids, err));
  }
  if (o->metric == CORPUS_COSINE && !multi) {
    s.qn = vf_mallocarray(q.n ? q.n : 1, sizeof(float) * d);
    if (!s.qn) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    memcpy(s.qn, q.vecs, sizeof(float) * d * q.n);
    idx_normalize_rows(s.qn, q.n, d);
  }
  VF_TRY(bf_workers_init(wk, threads, &s, o->k, multi, bf_tie, &ids, err));
  /* the BLAS is loaded here, before any thread starts, and runs single-threaded in each worker */
  if (!multi && o->metric != CORPUS_MANHATTAN) VF_TRY(vf_blas_require(err));
  blas_saved = vf_blas_single_begin();
  blas_single = true;
  rd.files = files;
  rd.o = o;
  rd.jobs = jobs;
  rd.dim = q.dim;
  rd.d = d;
  rd.spec = o->records ? &spec1 : NULL;
  rd.ids = &ids;
  rd.pspec = !o->records && flt.any ? &pspec : NULL;
  /* one filter for every query: the reader keeps only the matching rows */
  rd.single = flt.nowned == 1 && flt.per_query ? flt.per_query[0] : NULL;
  for (uint64_t i = 0; rd.single && i < q.n; i++)
    if (flt.per_query[i] != rd.single) rd.single = NULL;
  VF_TRY(bf_work_init(&rd.work, files, jobs, o->job_rank, err));
  rd.plan = plan;
  for (int i = 0; i < 2; i++)
    if (flt.any && !multi) VF_TRY(flt_docs_create(&rd.slot[i].docs, err));
  /* the reader is a role thread of its own, not a pool task: it blocks until a slot is free,
   * and a pool task must never wait for another (vforge/pool.h) */
  uint64_t files_in_job = 0;
  for (size_t fi = 0; fi < files->n; fi++) files_in_job += fi % jobs == o->job_rank;
  vf_stage sg;
  vf_stage_begin(&sg, "brute-force", NULL, NULL, 0);
  sg.p.files_total = files_in_job;
  if (multi)
    VF_TRY(mv_scan(files, o, jobs, &q, s.heaps, threads, rd.spec, &ids, plan, &rd.vec_name, &flt,
                   psrc, npsrc, &rd.work, &sg, out, err));
  if (!multi) {
    if (pthread_create(&rtid, NULL, reader_run, &rd) != 0)
      VF_FAIL(vf_error_set(err, VF_EINTERNAL, "brute-force: cannot start the reader thread"));
    reader_started = true;
  }
  for (int si = 0; reader_started; si ^= 1) {
    bf_slot *sl = &rd.slot[si];
    pthread_mutex_lock(&rd.mu);
    while (sl->state == 0) pthread_cond_wait(&rd.cv, &rd.mu);
    int state = sl->state;
    pthread_mutex_unlock(&rd.mu);
    if (state != 1) break; /* 2: end, 3: error (reported after the join) */
    s.x = sl->data;
    s.xn = o->metric == CORPUS_COSINE ? sl->xn : sl->data;
    s.xx = sl->xx;
    s.xnorm = sl->xnorm;
    s.null_rows = sl->null_rows;
    s.nrows = sl->n;
    s.key0 = (int64_t)(((uint64_t)sl->fi << BF_KEY_SHIFT) | (uint64_t)sl->first);
    s.key_hi = (uint64_t)sl->fi << BF_KEY_SHIFT;
    s.rows = sl->compacted ? sl->crows : rd.spec ? sl->bt.file_rows : NULL;
    s.docs = sl->docs;
    s.prefiltered = sl->compacted;
    st = score_block(wk, threads, s.nrows, err);
    out->rows_scanned += sl->rows_in + sl->skipped;
    out->rows_skipped += sl->skipped + sl->masked;
    sg.p.files_done = sl->fi / jobs;
    sg.p.fraction = sl->frac;
    vf_stage_update(&sg, out->rows_scanned, NULL);
    pthread_mutex_lock(&rd.mu);
    sl->state = 0;
    pthread_cond_broadcast(&rd.cv);
    pthread_mutex_unlock(&rd.mu);
    if (st != VF_OK) goto out;
  }
  if (reader_started) {
    reader_stop(&rd, rtid);
    reader_started = false;
    if (rd.st != VF_OK) {
      *err = rd.err;
      VF_FAIL(rd.st);
    }
  }
  if (!multi) out->files = rd.files_read;
  out->empty_files = job_empty;
  counted = true;
  corpus_plan_free(&own);
  vf_blas_single_end(blas_saved);
  blas_single = false;
  /* results */
  hits = vf_mallocarray(q.n ? q.n * o->k : 1, sizeof *hits);
  nhits = vf_calloc(q.n ? q.n : 1, sizeof *nhits);
  tmp = vf_mallocarray(o->k, sizeof *tmp);
  if (!hits || !nhits || !tmp) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (uint64_t i = 0; i < q.n; i++) {
    size_t nh = idx_topk_sorted(&s.heaps[i], tmp);
    nhits[i] = (uint32_t)nh;
    out->queries_short += nh < o->k;
    for (size_t h = 0; h < nh; h++) {
      uint64_t key = (uint64_t)tmp[h].key;
      ev_hit *e = &hits[i * o->k + h];
      e->score = tmp[h].score;
      ev_id_text(&ids, (size_t)(key >> BF_KEY_SHIFT), key & (((uint64_t)1 << BF_KEY_SHIFT) - 1), e->id);
    }
  }
  char cmd5[33];
  corpus_files_md5(files, cmd5);
  const char *col = o->records ? o->records->vectors[0].name
                    : o->column ? o->column : (rd.vec_name ? rd.vec_name : q.vec_name);
  VF_TRY(ev_metadata_kv(&q, o->k, o->metric, col, cmd5, o->id_expression, jobs, o->job_rank,
                        partial, flt.tag, &kv, &nkv, err));
  if (!o->no_file)
    VF_TRY(ev_results_write(path, &q, o->k, hits, nhits, (const char *const *)kv, nkv, err));
  if (o->hits) VF_TRY(hits_copy(o->hits, q.n, o->k, hits, nhits, err));
  out->path = path;
  path = NULL;
  out->queries = q.n;
out:
  if (reader_started) reader_stop(&rd, rtid);
  if (!counted) {
    if (!multi) out->files = rd.files_read;
    out->empty_files = job_empty;
  }
  corpus_plan_free(&own);
  if (blas_single) vf_blas_single_end(blas_saved);
  for (int t = 0; t < threads && wk; t++) out->rescored += wk[t].rescored;
  out->seconds = vf_now() - t0;
  ev_kv_free(kv, nkv);
  free(path);
  free(hits);
  free(nhits);
  free(tmp);
  free(rd.vec_name);
  for (int i = 0; i < 2; i++) {
    pqt_leaf_data_free(&rd.slot[i].leaf);
    pqt_dense_free(&rd.slot[i].dense);
    corpus_batch_free(&rd.slot[i].bt);
    corpus_batch_free(&rd.slot[i].pbt);
    flt_docs_free(rd.slot[i].docs);
    free(rd.slot[i].cdata);
    free(rd.slot[i].crows);
    free(rd.slot[i].cnull);
    free(rd.slot[i].mask);
    free(rd.slot[i].xn);
    free(rd.slot[i].xnorm);
    free(rd.slot[i].xx);
    free(rd.slot[i].bad_mask);
  }
  free(rd.work.before);
  pthread_mutex_destroy(&rd.mu);
  pthread_cond_destroy(&rd.cv);
  bf_workers_free(wk, threads);
  for (uint64_t i = 0; s.heaps && i < q.n; i++) idx_topk_free(&s.heaps[i]);
  free(s.heaps);
  free(s.bound);
  if (s.qn != q.vecs) free(s.qn);
  free(s.qq);
  free(s.qnorm);
  ev_filters_free(&flt);
  corpus_idexpr_free(prow);
  free(psrc);
  ev_queries_free(&q);
  ev_ids_free(&ids);
  return st;
}

/* ------------------------------------------------------- vectors in memory */

/* Rows scored per block: for cosine the rows' normalised copy is made per block; the other
 * metrics score the caller's matrix in place and keep only 12 bytes of norms per row, so one block
 * of up to BF_MATRIX_ROWS rows (candidates are re-scored once per block: fewer in larger ones). */
#define BF_MATRIX_BLOCK 16384
#define BF_MATRIX_ROWS ((size_t)1 << 22)
#define BF_NORM_ROWS 2048 /* rows per chunk of the norms' pool loop */

typedef struct bf_norm_job {
  const float *x;  /* the block's rows */
  size_t nr, d;
  double *xx;
  float *xnorm, *xn; /* xn: cosine's normalised copy, else NULL */
} bf_norm_job;

static void norm_chunk(void *arg, size_t c, int w) {
  (void)w;
  const bf_norm_job *j = arg;
  size_t a = c * BF_NORM_ROWS, b = j->nr - a < BF_NORM_ROWS ? j->nr : a + BF_NORM_ROWS;
  for (size_t r = a; r < b; r++) {
    j->xx[r] = sumsq(j->x + r * j->d, j->d);
    j->xnorm[r] = (float)sqrt(j->xx[r]);
  }
  if (!j->xn) return;
  memcpy(j->xn + a * j->d, j->x + a * j->d, sizeof(float) * j->d * (b - a));
  idx_normalize_rows(j->xn + a * j->d, b - a, j->d);
}

/* eval_brute_force_matrix(): see eval.h.  The scan of eval_brute_force over blocks of a matrix:
 * the same fast filter and exact re-scoring (worker_run / filter_block), keys = row numbers. */
vf_status eval_brute_force_matrix(const float *x, uint64_t n, const float *q, uint64_t nq,
                                  int32_t dim, uint32_t k, corpus_distance metric, int threads,
                                  idx_hit *hits, uint32_t *counts, vf_error *err) {
  if (k < 1 || k > BF_K_MAX) return vf_error_set(err, VF_EUSAGE, "brute-force: k must be 1..%u", BF_K_MAX);
  if (dim < 1 || nq < 1 || n >= ((uint64_t)1 << 40))
    return vf_error_set(err, VF_EUSAGE, "brute-force: need dimension >= 1, at least one query and "
                        "fewer than 2^40 rows (got %" PRIu64 " x %d, %" PRIu64 " queries)", n, (int)dim, nq);
  size_t d = (size_t)dim;
  for (size_t i = 0; i < (size_t)nq * d; i++)
    if (!isfinite(q[i]))
      return vf_error_set(err, VF_ECORRUPT, "brute-force: query %zu holds NaN or infinity", i / d);
  if (threads < 1) threads = vf_threads();
  if (threads < 1) threads = 1;
  if ((uint64_t)threads > nq) threads = (int)nq;
  bool cos = metric == CORPUS_COSINE;
  static const ev_filters no_filters; /* an in-memory matrix carries no payload */
  bf_scan s = {.metric = metric, .d = d, .nq = nq, .q = q, .kern = idx_kernels_active(),
               .flt = &no_filters};
  s.gamma = ((double)d + 16.0) * 0x1p-21;
  size_t most = cos ? BF_MATRIX_BLOCK : BF_MATRIX_ROWS;
  size_t blk = n < most ? (size_t)(n ? n : 1) : most;
  s.qq = vf_mallocarray(nq, sizeof(double));
  s.qnorm = vf_mallocarray(nq, sizeof(float));
  s.heaps = vf_calloc(nq, sizeof(idx_topk));
  double *xx = vf_mallocarray(blk, sizeof(double));
  float *xnorm = vf_mallocarray(blk, sizeof(float));
  float *xn = cos ? vf_mallocarray(blk, sizeof(float) * d) : NULL;
  s.bound = vf_mallocarray(2 * nq, sizeof *s.bound);
  s.lbound = s.bound ? s.bound + nq : NULL;
  bf_worker *wk = vf_calloc((size_t)threads, sizeof *wk);
  vf_status st = VF_OK;
  float *qn = NULL;
  int blas_saved = 0;
  bool blas_single = false; /* vf_blas_single_begin() ran: vf_blas_single_end() at out: */
  if (!s.qq || !s.qnorm || !s.heaps || !s.bound || !xx || !xnorm || (cos && !xn) || !wk)
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (uint64_t i = 0; i < nq; i++) {
    s.qq[i] = sumsq(q + i * d, d);
    s.qnorm[i] = (float)sqrt(s.qq[i]);
    atomic_init(&s.bound[i], -INFINITY);
    atomic_init(&s.bound[nq + i], -INFINITY);
    VF_TRY(idx_topk_init(&s.heaps[i], k, NULL, NULL, err));
  }
  if (cos) {
    qn = vf_mallocarray(nq, sizeof(float) * d);
    if (!qn) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    memcpy(qn, q, sizeof(float) * d * nq);
    idx_normalize_rows(qn, nq, d);
  }
  s.qn = cos ? qn : (float *)q; /* only read */
  VF_TRY(bf_workers_init(wk, threads, &s, k, false, NULL, NULL, err));
  if (metric != CORPUS_MANHATTAN) VF_TRY(vf_blas_require(err));
  blas_saved = vf_blas_single_begin();
  blas_single = true;
  for (uint64_t r0 = 0; r0 < n; r0 += blk) {
    VF_TRY(vf_check_cancel(err));
    size_t nr = (size_t)(n - r0 < blk ? n - r0 : blk);
    const float *xb = x + r0 * d;
    bf_norm_job nj = {xb, nr, d, xx, xnorm, cos ? xn : NULL};
    VF_TRY(vf_pool_for((nr + BF_NORM_ROWS - 1) / BF_NORM_ROWS, threads, norm_chunk, &nj, err));
    s.x = xb;
    s.xn = cos ? xn : xb;
    s.xx = xx;
    s.xnorm = xnorm;
    s.nrows = nr;
    s.key0 = (int64_t)r0;
    VF_TRY(score_block(wk, threads, nr, err));
  }
  vf_blas_single_end(blas_saved);
  blas_single = false;
  for (uint64_t i = 0; i < nq; i++)
    counts[i] = (uint32_t)idx_topk_sorted(&s.heaps[i], hits + i * k);
out:
  if (blas_single) vf_blas_single_end(blas_saved);
  for (uint64_t i = 0; s.heaps && i < nq; i++) idx_topk_free(&s.heaps[i]);
  bf_workers_free(wk, threads);
  free(s.heaps);
  free(s.bound);
  free(s.qq);
  free(s.qnorm);
  free(qn);
  free(xx);
  free(xnorm);
  free(xn);
  return st;
}
