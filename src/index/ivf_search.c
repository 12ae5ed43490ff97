/*
 * ivf_search.c — batched, threaded search of an opened IVF index.
 *
 * Per query: (COSINE: normalise) score the nlist centroids (q.c for cosine/dot, -|q-c|^2 for
 * euclid — for dot this is the usual inner-product quantizer: a list is a neighbourhood of its
 * centroid, so q.c estimates its best scores), keep the nprobe best lists (ties: lower list), and
 * scan them best first with the kernels of the code type:
 *   flat    distance.c's batch kernels over the stored float32 rows (exact scores)
 *   sq8     residual decode folded into the kernel: euclid sum (q-c-min - step*u)^2,
 *           dot q.c + q.min + sum (q*step) u
 *   pq      per-list lookup tables (euclid: |q_m - c_m - C_mk|^2; dot: one table per query plus
 *           q.c) summed over 32-row transposed blocks
 *   rabitq  the RaBitQ estimator of <o, y> for the rotated y = P(q - c) (euclid) or P q (dot),
 *           one table lookup per code byte (1 bit) or a u8 dot (more bits)
 * Internal scores are larger-is-better (euclid: -L2^2, reported as -L2 at the end).
 *
 * Re-rank (rerank > 0 and the file holds float32 vectors): sq8 and pq keep the rerank*k best
 * approximate candidates and re-score them exactly; rabitq uses its error bound instead — a row
 * is scored exactly only when its optimistic score (estimate + bound) could still enter the
 * current exact top k, which is RaBitQ's own re-ranking rule and gives flat-like recall.
 *
 * Ties are broken by point id (ivf_tie_by_id).  Results do not depend on the thread count: each
 * query is processed by one thread, deterministically.
 *
 * Filtered search (opts->allow): the filter is applied inside the list scan — a row that is not
 * allowed is never pushed into the top k (nor the re-rank candidates), and a list with no allowed
 * row is not scored at all — and nprobe is a minimum: lists are scanned in centroid order until k
 * allowed hits were found after the first nprobe, or every list was scanned (a selective filter
 * then costs more lists, as in filtered HNSW/IVF engines; the answer never silently has fewer
 * than k hits while unscanned lists could hold allowed rows).
 */
#include <math.h>
#include <stdlib.h>

#include "index/ivf_internal.h"

#define EPS0 1.9f

typedef struct srch {
  const ivf_index *ix;
  const float *queries;
  size_t nq, k, nprobe, rr;
  idx_hit *hits;
  size_t *counts;
  atomic_size_t next;
  atomic_int failed;
  size_t maxlist;
  const uint8_t *const *allow; /* per query, or NULL */
} srch;

typedef struct scratch {
  float *qv, *y, *w, *sc, *lut, *csc;
  idx_topk top, cand, probe;
  idx_hit *tmp;
  uint8_t *skip; /* filtered: per row of the list being scanned */
} scratch;

static inline const int64_t *list_rows(const ivf_index *ix, uint32_t l) {
  return (const int64_t *)(const void *)(ix->lists + ix->dir[3 * l]);
}
static inline const uint8_t *list_codes(const ivf_index *ix, uint32_t l) {
  return ix->lists + ix->dir[3 * l] + ivf_align(ix->dir[3 * l + 1] * 8);
}

static float exact_score(const ivf_index *ix, const float *q, const float *v) {
  size_t d = ix->g.d;
  return ix->h.metric == CORPUS_EUCLID ? -idx_l2sq(q, v, d) : idx_dot(q, v, d);
}

/* global row of list-order position `pos` */
static int64_t pos_row(const ivf_index *ix, uint64_t pos) {
  size_t lo = 0, hi = ix->h.nlist; /* last list with dir.pos <= pos and count > 0 */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (ix->dir[3 * mid + 2] <= pos) lo = mid;
    else hi = mid;
  }
  while (lo > 0 && (ix->dir[3 * lo + 1] == 0 || pos - ix->dir[3 * lo + 2] >= ix->dir[3 * lo + 1])) lo--;
  return list_rows(ix, (uint32_t)lo)[pos - ix->dir[3 * lo + 2]];
}

static void scan_list(const srch *s, scratch *w, uint32_t l, const ivf_kern *K,
                      const idx_kernels *IK, const uint8_t *al) {
  const ivf_index *ix = s->ix;
  const ivf_geom *g = &ix->g;
  size_t d = g->d, cnt = (size_t)ix->dir[3 * l + 1];
  if (!cnt) return;
  const int64_t *rows = list_rows(ix, l);
  if (al) { /* the filter: rows it rejects are skipped; a list without allowed rows is not scored */
    size_t ok = 0;
    for (size_t i = 0; i < cnt; i++) {
      w->skip[i] = !al[rows[i]];
      ok += !w->skip[i];
    }
    if (!ok) return;
  }
  const uint8_t *codes = list_codes(ix, l);
  const float *c = ix->centroids + (size_t)l * d, *q = w->qv;
  bool euclid = ix->h.metric == CORPUS_EUCLID;
  uint64_t pos0 = ix->dir[3 * l + 2];
  float *sc = w->sc;
  switch (g->type) {
  case IVF_FLAT: {
    const float *v = (const float *)(const void *)codes;
    if (euclid) {
      IK->l2sq_batch(q, v, cnt, d, sc);
      for (size_t i = 0; i < cnt; i++)
        sc[i] = -sc[i];
    } else {
      IK->dot_batch(q, v, cnt, d, sc);
    }
    break;
  }
  case IVF_SQ8: {
    const float *mn = ix->q.sq_min, *st = ix->q.sq_step;
    if (euclid) {
      for (size_t j = 0; j < d; j++)
        w->w[j] = q[j] - c[j] - mn[j];
      for (size_t i = 0; i < cnt; i++)
        sc[i] = -K->sq8_l2(w->w, st, codes + i * d, d);
    } else {
      float base = 0.0f;
      for (size_t j = 0; j < d; j++) {
        base += q[j] * (c[j] + mn[j]);
        w->w[j] = q[j] * st[j];
      }
      for (size_t i = 0; i < cnt; i++)
        sc[i] = base + K->u8_dot(w->w, codes + i * d, d);
    }
    break;
  }
  case IVF_PQ: {
    size_t m = g->m, ds = g->dsub;
    float base = 0.0f;
    if (euclid) {
      for (size_t j = 0; j < d; j++)
        w->w[j] = q[j] - c[j];
      for (size_t i = 0; i < m; i++)
        IK->l2sq_batch(w->w + i * ds, ix->q.pq_cb + i * 256 * ds, 256, ds, w->lut + i * 256);
    } else {
      base = IK->dot(q, c, d); /* the per-query table was built in search_one */
    }
    size_t nb = (cnt + IVF_PQ_BLOCK - 1) / IVF_PQ_BLOCK;
    for (size_t b = 0; b < nb; b++)
      K->pq_block(w->lut, codes + b * m * IVF_PQ_BLOCK, m, sc + b * IVF_PQ_BLOCK);
    for (size_t i = 0; i < cnt; i++)
      sc[i] = euclid ? -sc[i] : base + sc[i];
    break;
  }
  case IVF_RABITQ: {
    size_t D = g->D;
    const float *rc = ix->rcent + (size_t)l * D;
    float *y = w->y, ysum = 0.0f, yn = 0.0f, qc = 0.0f;
    /* w->w holds P q (search_one) */
    for (size_t i = 0; i < D; i++) {
      y[i] = euclid ? w->w[i] - rc[i] : w->w[i];
      ysum += y[i];
      yn += y[i] * y[i];
    }
    yn = sqrtf(yn);
    if (!euclid) qc = IK->dot(q, c, d);
    bool one = g->bits == 1;
    if (one)
      for (size_t j = 0; j < D / 8; j++) {
        float *t = w->lut + j * 256;
        const float *yy = y + 8 * j;
        t[0] = 0.0f;
        for (unsigned b = 1; b < 256; b++)
          t[b] = t[b & (b - 1)] + yy[__builtin_ctz(b)];
      }
    float bound_k = EPS0 / sqrtf((float)(D > 1 ? D - 1 : 1));
    bool exact = ix->rerank != NULL && s->rr > 0;
    for (size_t i = 0; i < cnt; i++) {
      const uint8_t *rec = codes + i * g->code_size;
      float f[IVF_RABITQ_NF];
      memcpy(f, rec, sizeof f);
      const uint8_t *cd = rec + IVF_RABITQ_NF * 4;
      float S = one ? K->bytes_lut(w->lut, cd, D / 8) : K->u8_dot(y, cd, D);
      float est = (f[2] * S + f[3] * ysum) / f[1];
      float score = euclid ? -(f[0] * f[0] + yn * yn - 2.0f * f[0] * est) : qc + f[0] * est;
      if (!exact) {
        sc[i] = score;
        continue;
      }
      if (al && w->skip[i]) continue;
      float ip = f[1], bnd = yn * bound_k * sqrtf(fmaxf(1.0f - ip * ip, 0.0f)) / ip;
      float opt = score + (euclid ? 2.0f : 1.0f) * f[0] * bnd;
      if (w->top.n == w->top.k && opt < w->top.heap[0].score) continue;
      idx_topk_push(&w->top, exact_score(ix, q, ix->rerank + (pos0 + i) * d), rows[i]);
    }
    if (exact) return;
    break;
  }
  }
  if (s->rr && ix->rerank && g->type != IVF_FLAT) {
    for (size_t i = 0; i < cnt; i++)
      if (!al || !w->skip[i]) idx_topk_push(&w->cand, sc[i], (int64_t)(pos0 + i));
  } else {
    idx_topk_push_batch(&w->top, sc, cnt, rows, 0, al ? w->skip : NULL);
  }
}

static void search_one(const srch *s, scratch *w, size_t qi, const ivf_kern *K,
                       const idx_kernels *IK) {
  const ivf_index *ix = s->ix;
  const ivf_geom *g = &ix->g;
  size_t d = g->d, nlist = ix->h.nlist;
  bool euclid = ix->h.metric == CORPUS_EUCLID;
  memcpy(w->qv, s->queries + qi * d, d * sizeof(float));
  if (ix->h.metric == CORPUS_COSINE) idx_normalize(w->qv, d);
  const float *q = w->qv;
  /* coarse */
  if (euclid) {
    IK->l2sq_batch(q, ix->centroids, nlist, d, w->csc);
    for (size_t l = 0; l < nlist; l++)
      w->csc[l] = -w->csc[l];
  } else {
    IK->dot_batch(q, ix->centroids, nlist, d, w->csc);
  }
  /* filtered: every list in centroid order (the probe widens past nprobe, see the top) */
  const uint8_t *al = s->allow ? s->allow[qi] : NULL;
  idx_topk_reset(&w->probe);
  idx_topk_push_batch(&w->probe, w->csc, nlist, NULL, 0, NULL);
  size_t np = idx_topk_sorted(&w->probe, w->tmp);
  if (!al && np > s->nprobe) np = s->nprobe; /* an unfiltered query of a filtered batch */
  uint32_t lists_small[64], *lists = np <= 64 ? lists_small : vf_mallocarray(np, sizeof *lists);
  if (!lists) {
    atomic_store((atomic_int *)&s->failed, 1);
    return;
  }
  for (size_t i = 0; i < np; i++)
    lists[i] = (uint32_t)w->tmp[i].key;
  /* per-query tables */
  if (g->type == IVF_PQ && !euclid)
    for (size_t i = 0; i < g->m; i++)
      IK->dot_batch(q + i * g->dsub, ix->q.pq_cb + i * 256 * g->dsub, 256, g->dsub,
                    w->lut + i * 256);
  if (g->type == IVF_RABITQ) {
    size_t D = g->D;
    memset(w->y, 0, D * sizeof(float));
    memcpy(w->y, q, d * sizeof(float));
    for (size_t i = 0; i < D; i++)
      w->w[i] = IK->dot(ix->q.rot + i * D, w->y, D);
  }
  idx_topk_reset(&w->top);
  idx_topk_reset(&w->cand);
  bool cands = s->rr && ix->rerank && g->type != IVF_FLAT && g->type != IVF_RABITQ;
  for (size_t i = 0; i < np; i++) {
    scan_list(s, w, lists[i], K, IK, al);
    /* unfiltered, np == nprobe; filtered, np == nlist and the scan stops once the first nprobe
     * lists are done and k allowed hits were found */
    if (al && i + 1 >= s->nprobe && (cands ? w->cand.n : w->top.n) >= s->k) break;
  }
  if (lists != lists_small) free(lists);
  if (s->rr && ix->rerank && g->type != IVF_FLAT && g->type != IVF_RABITQ) {
    size_t nc = idx_topk_sorted(&w->cand, w->tmp);
    for (size_t i = 0; i < nc; i++) {
      uint64_t pos = (uint64_t)w->tmp[i].key;
      idx_topk_push(&w->top, exact_score(ix, q, ix->rerank + pos * d), pos_row(ix, pos));
    }
  }
  idx_hit *out = s->hits + qi * s->k;
  size_t n = idx_topk_sorted(&w->top, out);
  if (euclid)
    for (size_t i = 0; i < n; i++)
      out[i].score = -sqrtf(fmaxf(-out[i].score, 0.0f));
  s->counts[qi] = n;
}

static void search_worker(void *arg, int t) {
  (void)t;
  srch *s = arg;
  const ivf_index *ix = s->ix;
  const ivf_geom *g = &ix->g;
  const ivf_kern *K = ivf_kern_active();
  const idx_kernels *IK = idx_kernels_active();
  size_t D = g->D > g->d ? g->D : g->d;
  size_t lutn = g->type == IVF_PQ ? g->m * 256 : g->type == IVF_RABITQ ? D / 8 * 256 : 1;
  size_t rk = s->rr ? s->rr * s->k : 1;
  if (rk > ((size_t)1 << 24)) rk = (size_t)1 << 24;
  size_t nprobe = s->allow ? ix->h.nlist : s->nprobe; /* filtered: every list may be probed */
  size_t ntmp = rk > nprobe ? rk : nprobe;
  scratch w = {0};
  w.qv = vf_mallocarray(D, sizeof(float));
  w.y = vf_mallocarray(D, sizeof(float));
  w.w = vf_mallocarray(D, sizeof(float));
  w.sc = vf_mallocarray(s->maxlist + IVF_PQ_BLOCK, sizeof(float));
  w.lut = vf_mallocarray(lutn, sizeof(float));
  w.csc = vf_mallocarray(ix->h.nlist, sizeof(float));
  w.tmp = vf_mallocarray(ntmp, sizeof(idx_hit));
  w.skip = s->allow ? vf_malloc(s->maxlist + 1) : NULL;
  bool ok = w.qv && w.y && w.w && w.sc && w.lut && w.csc && w.tmp && (!s->allow || w.skip) &&
            idx_topk_init(&w.top, s->k, ivf_tie_by_id, ix, NULL) == VF_OK &&
            idx_topk_init(&w.cand, rk, NULL, NULL, NULL) == VF_OK &&
            idx_topk_init(&w.probe, nprobe, NULL, NULL, NULL) == VF_OK;
  if (!ok) atomic_store(&s->failed, 1);
  while (ok && !atomic_load(&s->failed)) {
    size_t qi = atomic_fetch_add(&s->next, 1);
    if (qi >= s->nq) break;
    search_one(s, &w, qi, K, IK);
  }
  free(w.qv);
  free(w.y);
  free(w.w);
  free(w.sc);
  free(w.lut);
  free(w.csc);
  free(w.tmp);
  free(w.skip);
  idx_topk_free(&w.top);
  idx_topk_free(&w.cand);
  idx_topk_free(&w.probe);
}

/* ivf_default_nprobe(): see ivf.h. */
uint32_t ivf_default_nprobe(uint32_t nlist) { return nlist / 16 > 16 ? nlist / 16 : 16; }

/* ivf_search(): see ivf.h. */
vf_status ivf_search(const ivf_index *ix, const float *queries, size_t nq, int32_t dim, size_t k,
                     const ivf_search_opts *opts, idx_hit *hits, size_t *counts, vf_error *err) {
  if (dim != ix->h.dim)
    return vf_error_set(err, VF_EUSAGE, "%s: queries have dim %d, the index has dim %d", ix->path,
                        dim, ix->h.dim);
  if (k == 0 || k > ((size_t)1 << 24))
    return vf_error_set(err, VF_EUSAGE, "%s: k = %zu is out of range (1..%zu)", ix->path, k,
                        (size_t)1 << 24);
  if (nq == 0) return VF_OK;
  srch s = {.ix = ix, .queries = queries, .nq = nq, .k = k, .hits = hits, .counts = counts};
  s.nprobe = opts && opts->nprobe ? opts->nprobe : ivf_default_nprobe(ix->h.nlist);
  if (s.nprobe > ix->h.nlist) s.nprobe = ix->h.nlist;
  s.rr = opts && opts->rerank ? opts->rerank : ix->h.rerank;
  s.maxlist = ix->info.list_max;
  s.allow = opts ? opts->allow : NULL;
  atomic_init(&s.next, 0);
  atomic_init(&s.failed, 0);
  int threads = opts && opts->threads > 0 ? opts->threads : vf_threads();
  if ((size_t)threads > nq) threads = (int)nq;
  vf_status st = ivf_parallel(threads, search_worker, &s, err);
  if (st == VF_OK && atomic_load(&s.failed))
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory for search scratch", ix->path);
  return st;
}
