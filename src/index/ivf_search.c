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
 *           q.c) summed over 32-row transposed blocks; 4-bit codes with the same tables of 16
 *           entries quantised to u8 (one scale, a bias per table) and summed in u16 by the
 *           fast-scan kernel, 32 rows per vpshufb pair (scan_pq4)
 *   rabitq  the RaBitQ estimator of <o, y> for the rotated y = P(q - c) (euclid) or P q (dot),
 *           one table lookup per code byte (1 bit) or a u8 dot (more bits)
 * Internal scores are larger-is-better (euclid: -L2^2, reported as -L2 at the end).
 *
 * Re-rank (rerank > 0 and the file holds float32 vectors): sq8 and pq keep the rerank*k best
 * approximate candidates and re-score them exactly.  A 4-bit PQ file without vectors re-scores
 * its rerank*k best (by the u8 tables) with the float tables instead (rerank_adc): float ADC at
 * the cost of rebuilding the tables of the lists they come from.  rabitq uses its error bound
 * instead — a row is scored exactly only when its optimistic score (estimate + bound) could still
 * enter the current exact top k, which is RaBitQ's own re-ranking rule and gives flat-like
 * recall.
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
  size_t group; /* queries per coarse_group (1..IVF_QGROUP: a query's results do not depend on it) */
  bool cand;  /* candidates go to a rerank*k selection that is re-scored at the end */
  bool adc;   /* ... re-scored by float ADC (4-bit PQ without vectors) */
  idx_hit *hits;
  size_t *counts;
  atomic_size_t next;
  atomic_int failed;
  size_t maxlist;
  const uint8_t *const *allow; /* per query, or NULL */
} srch;

typedef struct scratch {
  float *qv, *y, *w, *sc, *lut, *csc; /* qv, csc: the current query's rows of qv4, csc4 */
  float *qv4, *csc4; /* a group of IVF_QGROUP queries (COSINE: normalised), their coarse scores */
  float *qt; /* 4-bit PQ euclid with list terms: the query part -2 q_i . C_ic (m x 16) */
  ivf_pq4_lut ql; /* 4-bit PQ: the u8 tables (per list for euclid, per query for dot) */
  uint16_t s16[IVF_PQ_BLOCK];
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

/* the list holding list-order position `pos` */
static uint32_t pos_list(const ivf_index *ix, uint64_t pos) {
  size_t lo = 0, hi = ix->h.nlist; /* last list with dir.pos <= pos and count > 0 */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (ix->dir[3 * mid + 2] <= pos) lo = mid;
    else hi = mid;
  }
  while (lo > 0 && (ix->dir[3 * lo + 1] == 0 || pos - ix->dir[3 * lo + 2] >= ix->dir[3 * lo + 1])) lo--;
  return (uint32_t)lo;
}

/* global row of list-order position `pos` */
static int64_t pos_row(const ivf_index *ix, uint64_t pos) {
  uint32_t l = pos_list(ix, pos);
  return list_rows(ix, l)[pos - ix->dir[3 * l + 2]];
}

/* 4-bit PQ: the float tables (w->lut) of list l for euclid, whose tables depend on the residual
 * q - c (dot: the query's tables, built once in search_one, and q.c), and their u8 form (w->ql)
 * when `quantize`.  Returns what the score adds to -(table sum).  `fast`: from the list terms
 * when the index has them (the u8 scan; its tables then leave out |q - c|^2, which the coarse
 * score w->csc[l] adds back), else directly (the float-ADC re-score). */
static float pq4_tables(const ivf_index *ix, scratch *w, uint32_t l, const ivf_kern *K,
                        const idx_kernels *IK, bool fast) {
  const ivf_geom *g = &ix->g;
  const float *c = ix->centroids + (size_t)l * g->d, *q = w->qv;
  float base = 0.0f;
  if (ix->h.metric != CORPUS_EUCLID) {
    base = IK->dot(q, c, g->d);
  } else if (fast && ix->pq4_pre) { /* pre[l] + query part, added as they are quantised */
    K->pq4_quant(ix->pq4_pre + (size_t)l * g->m * 16, w->qt, g->m, &w->ql);
    return w->csc[l]; /* -|q - c|^2 */
  } else {
    for (size_t j = 0; j < g->d; j++)
      w->w[j] = q[j] - c[j];
    K->pq4_lut(w->w, ix->pq4_cbt, g->m, g->dsub, 1, w->lut);
  }
  if (fast && ix->h.metric == CORPUS_EUCLID) K->pq4_quant(w->lut, NULL, g->m, &w->ql);
  return base;
}

/* the largest u8-table sum whose score off - S * ia can still enter `t` (a bound: the heap
 * push decides on the exact score) */
static uint32_t pq4_bound(const idx_topk *t, float off, float ia) {
  if (t->n < t->k || !(ia > 0.0f)) return UINT32_MAX;
  double b = ((double)off - (double)t->heap[0].score) / (double)ia + 2.0;
  return b < 0 ? 0 : b > 4e9 ? UINT32_MAX : (uint32_t)b;
}

/* 4-bit PQ list scan: the score of row i is base - (bias + S_i / a) for its u8-table sum S_i,
 * computed block by block (IVF_PQ4_CHUNK groups per kernel call; one call unless m > 256);
 * only rows whose sum is within the bound of the selection's current worst are offered (to the
 * rerank*k candidates when s->cand, else to the top k) — the sums of the others cannot enter. */
static void scan_pq4(const srch *s, scratch *w, uint32_t l, const uint8_t *codes, size_t cnt,
                     const int64_t *rows, uint64_t pos0, const ivf_kern *K,
                     const idx_kernels *IK) {
  const ivf_index *ix = s->ix;
  const ivf_geom *g = &ix->g;
  float off = pq4_tables(ix, w, l, K, IK, true) - w->ql.bias, ia = w->ql.inv_a;
  size_t ng = (g->m + 1) / 2, nb = (cnt + IVF_PQ_BLOCK - 1) / IVF_PQ_BLOCK;
  idx_topk *t = s->cand ? &w->cand : &w->top;
  uint32_t acc[IVF_PQ_BLOCK];
  for (size_t b = 0; b < nb; b++) {
    const uint8_t *blk = codes + b * g->pq_block_bytes;
    size_t nr = cnt - b * IVF_PQ_BLOCK < IVF_PQ_BLOCK ? cnt - b * IVF_PQ_BLOCK : IVF_PQ_BLOCK;
    uint32_t bound = pq4_bound(t, off, ia), mask;
    if (ng <= IVF_PQ4_CHUNK) { /* the usual case: the kernel applies the bound */
      mask = K->pq4_block(w->ql.q, blk, ng, (uint16_t)(bound < 65535 ? bound : 65535), w->s16);
      for (size_t j = 0; j < IVF_PQ_BLOCK; j++)
        acc[j] = w->s16[j];
    } else {
      for (size_t p = 0; p < ng; p += IVF_PQ4_CHUNK) {
        size_t n = ng - p < IVF_PQ4_CHUNK ? ng - p : IVF_PQ4_CHUNK;
        K->pq4_block(w->ql.q + p * 32, blk + p * 32, n, 65535, w->s16);
        for (size_t j = 0; j < IVF_PQ_BLOCK; j++)
          acc[j] = (p ? acc[j] : 0) + w->s16[j];
      }
      mask = 0;
      for (size_t j = 0; j < IVF_PQ_BLOCK; j++)
        mask |= (uint32_t)(acc[j] <= bound) << j;
    }
    if (nr < IVF_PQ_BLOCK) mask &= ((uint32_t)1 << nr) - 1; /* padding rows of the last block */
    for (; mask; mask &= mask - 1) {
      size_t j = (size_t)__builtin_ctz(mask), i = b * IVF_PQ_BLOCK + j;
      if (acc[j] > bound) continue; /* the bound tightened within this block */
      idx_topk_push(t, off - (float)acc[j] * ia, s->cand ? (int64_t)(pos0 + i) : rows[i]);
      bound = pq4_bound(t, off, ia);
    }
  }
}

static int hit_by_key(const void *a, const void *b) {
  int64_t x = ((const idx_hit *)a)->key, y = ((const idx_hit *)b)->key;
  return x < y ? -1 : x > y;
}

static void prefetch_vec(const float *v, size_t d) {
  for (size_t o = 0; o < d; o += 16)
    __builtin_prefetch(v + o);
}

/* the candidates (list-order positions) re-scored with the float32 vectors: in position order,
 * which walks the vectors section forward (they are stored in list order), the vectors of the
 * next candidates prefetched while one is scored.  The top k does not depend on the order in
 * which hits are offered (a total order on score and id). */
static void rerank_exact(const ivf_index *ix, scratch *w, const float *q) {
  size_t d = ix->g.d, nc = idx_topk_sorted(&w->cand, w->tmp);
  qsort(w->tmp, nc, sizeof *w->tmp, hit_by_key);
  for (size_t i = 0; i < nc && i < 2; i++)
    prefetch_vec(ix->rerank + (uint64_t)w->tmp[i].key * d, d);
  for (size_t i = 0; i < nc; i++) {
    uint64_t pos = (uint64_t)w->tmp[i].key;
    if (i + 2 < nc) prefetch_vec(ix->rerank + (uint64_t)w->tmp[i + 2].key * d, d);
    idx_topk_push(&w->top, exact_score(ix, q, ix->rerank + pos * d), pos_row(ix, pos));
  }
}

/* 4-bit PQ without vectors: the candidates (list-order positions) re-scored with the float
 * tables, list by list (positions sorted, so each list's tables are built once). */
static void rerank_adc(const ivf_index *ix, scratch *w, const ivf_kern *K, const idx_kernels *IK) {
  const ivf_geom *g = &ix->g;
  size_t nc = idx_topk_sorted(&w->cand, w->tmp);
  qsort(w->tmp, nc, sizeof *w->tmp, hit_by_key);
  uint32_t cur = UINT32_MAX;
  float base = 0.0f;
  for (size_t i = 0; i < nc; i++) {
    uint64_t pos = (uint64_t)w->tmp[i].key;
    uint32_t l = pos_list(ix, pos);
    if (l != cur) {
      base = pq4_tables(ix, w, l, K, IK, false);
      cur = l;
    }
    uint64_t r = pos - ix->dir[3 * l + 2];
    const uint8_t *blk = list_codes(ix, l) + r / IVF_PQ_BLOCK * g->pq_block_bytes;
    float sum = 0.0f;
    for (size_t m = 0; m < g->m; m++)
      sum += w->lut[m * 16 + ivf_pq4_code(blk, r % IVF_PQ_BLOCK, m)];
    idx_topk_push(&w->top, base - sum, list_rows(ix, l)[r]);
  }
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
    if (g->nbits == 4) { /* offers its rows itself */
      scan_pq4(s, w, l, codes, cnt, rows, pos0, K, IK);
      return;
    }
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
  if (s->cand) {
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
  const float *q = w->qv; /* and its coarse scores w->csc: coarse_group */
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
  if (g->type == IVF_PQ && g->nbits == 4 && !euclid) {
    K->pq4_lut(q, ix->pq4_cbt, g->m, g->dsub, 0, w->lut);
    K->pq4_quant(w->lut, NULL, g->m, &w->ql);
  } else if (g->type == IVF_PQ && g->nbits == 4 && ix->pq4_pre) {
    K->pq4_lut(q, ix->pq4_cbt, g->m, g->dsub, 0, w->qt); /* -q_i . C_ic */
    for (size_t j = 0; j < g->m * 16; j++)
      w->qt[j] *= 2.0f;
  } else if (g->type == IVF_PQ && !euclid)
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
  if (s->adc) {
    rerank_adc(ix, w, K, IK);
  } else if (s->cand && g->type != IVF_RABITQ) {
    rerank_exact(ix, w, q);
  }
  idx_hit *out = s->hits + qi * s->k;
  size_t n = idx_topk_sorted(&w->top, out);
  if (euclid)
    for (size_t i = 0; i < n; i++)
      out[i].score = -sqrtf(fmaxf(-out[i].score, 0.0f));
  s->counts[qi] = n;
}

/* queries q0 .. q0+n-1 (n <= IVF_QGROUP) into w->qv4 (COSINE: normalised) and their coarse
 * scores into w->csc4: q.c (cosine, dot) or -|q - c|^2 (euclid), larger = nearer */
static void coarse_group(const srch *s, scratch *w, size_t q0, size_t n, const ivf_kern *K) {
  const ivf_index *ix = s->ix;
  size_t d = ix->g.d, D = ix->g.D > d ? ix->g.D : d, nlist = ix->h.nlist;
  for (size_t j = 0; j < n; j++) {
    memcpy(w->qv4 + j * D, s->queries + (q0 + j) * d, d * sizeof(float));
    if (ix->h.metric == CORPUS_COSINE) idx_normalize(w->qv4 + j * D, d);
  }
  if (D == d) {
    K->coarse(w->qv4, n, ix->centroids, nlist, d, ix->h.metric == CORPUS_EUCLID, w->csc4);
  } else { /* RaBitQ pads its rows to D: score the queries one by one */
    for (size_t j = 0; j < n; j++)
      K->coarse(w->qv4 + j * D, 1, ix->centroids, nlist, d, ix->h.metric == CORPUS_EUCLID,
                w->csc4 + j * nlist);
  }
  if (ix->h.metric == CORPUS_EUCLID)
    for (size_t i = 0; i < n * nlist; i++)
      w->csc4[i] = -w->csc4[i];
}

static void search_worker(void *arg, int t) {
  (void)t;
  srch *s = arg;
  const ivf_index *ix = s->ix;
  const ivf_geom *g = &ix->g;
  const ivf_kern *K = ivf_kern_active();
  const idx_kernels *IK = idx_kernels_active();
  size_t D = g->D > g->d ? g->D : g->d;
  size_t lutn = g->type == IVF_PQ ? g->m * g->ksub : g->type == IVF_RABITQ ? D / 8 * 256 : 1;
  size_t rk = s->rr ? s->rr * s->k : 1;
  if (rk > ((size_t)1 << 24)) rk = (size_t)1 << 24;
  size_t nprobe = s->allow ? ix->h.nlist : s->nprobe; /* filtered: every list may be probed */
  size_t ntmp = rk > nprobe ? rk : nprobe;
  scratch w = {0};
  w.qv4 = vf_mallocarray(IVF_QGROUP * D, sizeof(float));
  w.csc4 = vf_mallocarray(IVF_QGROUP * (size_t)ix->h.nlist, sizeof(float));
  w.y = vf_mallocarray(D, sizeof(float));
  w.w = vf_mallocarray(D, sizeof(float));
  w.sc = vf_mallocarray(s->maxlist + IVF_PQ_BLOCK, sizeof(float));
  w.lut = vf_mallocarray(lutn, sizeof(float));
  bool pq4 = g->type == IVF_PQ && g->nbits == 4;
  w.ql.q = vf_malloc(pq4 ? (g->m + 1) / 2 * 32 : 1);
  w.ql.lo = vf_mallocarray(pq4 ? g->m : 1, sizeof(float));
  w.qt = vf_mallocarray(pq4 ? g->m * 16 : 1, sizeof(float));
  w.tmp = vf_mallocarray(ntmp, sizeof(idx_hit));
  w.skip = s->allow ? vf_malloc(s->maxlist + 1) : NULL;
  bool ok = w.qv4 && w.y && w.w && w.sc && w.lut && w.csc4 && w.tmp && w.ql.q && w.ql.lo && w.qt &&
            (!s->allow || w.skip) &&
            idx_topk_init(&w.top, s->k, ivf_tie_by_id, ix, NULL) == VF_OK &&
            idx_topk_init(&w.cand, rk, NULL, NULL, NULL) == VF_OK &&
            idx_topk_init(&w.probe, nprobe, NULL, NULL, NULL) == VF_OK;
  if (!ok) atomic_store(&s->failed, 1);
  while (ok && !atomic_load(&s->failed)) {
    size_t q0 = atomic_fetch_add(&s->next, 1) * s->group;
    if (q0 >= s->nq) break;
    size_t n = s->nq - q0 < s->group ? s->nq - q0 : s->group;
    coarse_group(s, &w, q0, n, K);
    for (size_t j = 0; j < n && !atomic_load(&s->failed); j++) {
      w.qv = w.qv4 + j * D;
      w.csc = w.csc4 + j * ix->h.nlist;
      search_one(s, &w, q0 + j, K, IK);
    }
  }
  free(w.qv4);
  free(w.csc4);
  free(w.y);
  free(w.w);
  free(w.sc);
  free(w.lut);
  free(w.ql.q);
  free(w.ql.lo);
  free(w.qt);
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
  s.adc = s.rr && !ix->rerank && ix->g.type == IVF_PQ && ix->g.nbits == 4;
  s.cand = s.rr && ix->g.type != IVF_FLAT && (ix->rerank || s.adc);
  s.maxlist = ix->info.list_max;
  s.allow = opts ? opts->allow : NULL;
  atomic_init(&s.next, 0);
  atomic_init(&s.failed, 0);
  int threads = opts && opts->threads > 0 ? opts->threads : vf_threads();
  if ((size_t)threads > nq) threads = (int)nq;
  s.group = nq / (size_t)threads; /* groups of up to IVF_QGROUP while every thread gets one */
  s.group = s.group < 1 ? 1 : s.group > IVF_QGROUP ? IVF_QGROUP : s.group;
  vf_status st = ivf_parallel(threads, search_worker, &s, err);
  if (st != VF_OK) return st;
  if (atomic_load(&s.failed))
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory for search scratch", ix->path);
  return VF_OK;
}
