/*
 * topk.c — bounded top-K selection by score with a deterministic tie order.
 *
 * Why a heap of the worst kept hit: exact search and brute force offer every row of a corpus
 * to K slots; nearly all candidates lose against the current K-th best, so the common path is
 * one comparison with heap[0] and nothing else.  Ties matter because ground-truth files and
 * store results are compared across tools and thread counts (DESIGN.md "Corpus layout": ties
 * are ordered by point id): the comparison uses (score, key order) as a total order, so the
 * kept set and its order are the same whatever order candidates arrive in.
 */
#include <math.h>
#include <stdlib.h>

#include "vforge/index.h"

#define IDX_TOPK_MAX ((size_t)1 << 24)

/* a is better (nearer) than b */
static inline bool hit_better(const idx_topk *t, const idx_hit *a, const idx_hit *b) {
  if (a->score != b->score) return a->score > b->score;
  if (t->tie) return t->tie(t->user, a->key, b->key) < 0;
  return a->key < b->key;
}

/* idx_topk_init(): see index.h. */
vf_status idx_topk_init(idx_topk *t, size_t k, idx_tie_fn tie, const void *user, vf_error *err) {
  memset(t, 0, sizeof *t);
  if (k < 1 || k > IDX_TOPK_MAX)
    return vf_error_set(err, VF_EUSAGE, "top-k: k = %zu is out of range (1..%zu)", k, IDX_TOPK_MAX);
  t->heap = vf_mallocarray(k, sizeof *t->heap);
  if (!t->heap) return vf_error_set(err, VF_ENOMEM, "top-k: out of memory for k = %zu", k);
  t->k = k;
  t->tie = tie;
  t->user = user;
  return VF_OK;
}

void idx_topk_free(idx_topk *t) {
  if (!t) return;
  free(t->heap);
  memset(t, 0, sizeof *t);
}

/* min-heap on "better": heap[0] is the worst kept hit */
static void sift_down(idx_topk *t, size_t i) {
  idx_hit *h = t->heap;
  size_t n = t->n;
  idx_hit x = h[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && hit_better(t, &h[c], &h[c + 1])) c++; /* the worse child */
    if (!hit_better(t, &x, &h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

static void sift_up(idx_topk *t, size_t i) {
  idx_hit *h = t->heap;
  idx_hit x = h[i];
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!hit_better(t, &h[p], &x)) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = x;
}

/* idx_topk_push(): see index.h. */
void idx_topk_push(idx_topk *t, float score, int64_t key) {
  if (isnan(score)) return;
  idx_hit x = {score, key};
  if (t->n < t->k) {
    t->heap[t->n++] = x;
    sift_up(t, t->n - 1);
    return;
  }
  if (!hit_better(t, &x, &t->heap[0])) return;
  t->heap[0] = x;
  sift_down(t, 0);
}

/* idx_topk_push_batch(): see index.h. */
void idx_topk_push_batch(idx_topk *t, const float *scores, size_t n, const int64_t *keys,
                         int64_t key0, const uint8_t *skip) {
  for (size_t i = 0; i < n; i++) {
    if (skip && skip[i]) continue;
    float s = scores[i];
    /* fast reject: strictly worse than the worst kept hit */
    if (t->n == t->k && s < t->heap[0].score) continue;
    idx_topk_push(t, s, keys ? keys[i] : key0 + (int64_t)i);
  }
}

/* idx_topk_sorted(): see index.h.  Pops the worst repeatedly, filling `out` from the back. */
size_t idx_topk_sorted(idx_topk *t, idx_hit *out) {
  size_t n = t->n;
  for (size_t i = n; i > 0; i--) {
    out[i - 1] = t->heap[0];
    t->heap[0] = t->heap[--t->n];
    if (t->n) sift_down(t, 0);
  }
  return n;
}
